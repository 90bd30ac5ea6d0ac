//! Persistence: sqlx repositories over SQLite (one file in the data directory, WAL mode)
//! with embedded migrations. The SQL is kept portable (`$n` parameters, TEXT/BIGINT/BOOLEAN
//! columns, `ON CONFLICT`, `RETURNING`) so the PostgreSQL issue only has to add a pool
//! type behind [`Store`]; everything else takes a `Store`.
//!
//! Repositories: [`agents`] (enrolled agents and the enrollment transaction), [`tokens`]
//! (join tokens, hashed) and [`revocations`].

pub mod agents;
pub mod revocations;
pub mod tokens;

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::migrate::Migrator;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use crate::Result;
use crate::data_dir::{DATABASE, DataDir};

pub use agents::{AgentRow, NewAgent};
pub use tokens::{JoinTokenRow, TokenState};

/// The database the controller runs on.
pub type Db = sqlx::Sqlite;
/// A connection pool to [`Db`].
pub type DbPool = sqlx::Pool<Db>;
/// One connection of [`Db`] (inside a transaction, for example).
pub type DbConnection = <Db as sqlx::Database>::Connection;

static MIGRATOR: Migrator = sqlx::migrate!("./migrations");

/// How long a writer waits for another (the CLI and `serve` share the file).
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The controller's database, cheap to clone.
#[derive(Debug, Clone)]
pub struct Store {
    pool: DbPool,
}

impl Store {
    /// Opens (creating with mode 0600 if needed) `vigil.db` in the data directory and
    /// applies the migrations, holding the data directory's lock so that `serve` and a
    /// CLI subcommand never migrate at the same time.
    pub async fn open(dir: &DataDir) -> Result<Store> {
        let _lock = dir.lock()?;
        let path = dir.touch_private(DATABASE)?;
        Self::open_file(&path).await
    }

    /// Opens the SQLite database at `path` (WAL mode) and applies the migrations.
    pub async fn open_file(path: &Path) -> Result<Store> {
        let options = SqliteConnectOptions::from_str("sqlite:")?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(BUSY_TIMEOUT)
            .foreign_keys(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await?;
        MIGRATOR.run(&pool).await?;
        Ok(Store { pool })
    }

    /// The connection pool, for repositories.
    pub fn pool(&self) -> &DbPool {
        &self.pool
    }

    /// Closes every connection (on shutdown).
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// Labels as stored: a JSON object of strings.
pub(crate) fn labels_to_json(labels: &std::collections::BTreeMap<String, String>) -> String {
    serde_json::to_string(labels).unwrap_or_else(|_| "{}".to_owned())
}

/// Labels from their stored JSON (an unreadable value reads as no labels).
pub(crate) fn labels_from_json(text: &str) -> std::collections::BTreeMap<String, String> {
    serde_json::from_str(text).unwrap_or_default()
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;

    /// A store in a fresh temporary directory (kept alive by the returned guard).
    pub async fn temp_store() -> (Store, tempfile::TempDir) {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&DataDir::new(tmp.path())).await.unwrap();
        (store, tmp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[tokio::test]
    async fn the_database_is_private_in_wal_mode_and_migrates_twice() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path());
        let store = Store::open(&dir).await.unwrap();
        let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
            .fetch_one(store.pool())
            .await
            .unwrap();
        assert_eq!(mode, "wal");
        store.close().await;
        Store::open(&dir).await.unwrap();
        let perms = std::fs::metadata(dir.path(DATABASE)).unwrap().permissions();
        assert_eq!(perms.mode() & 0o777, 0o600);
    }
}
