//! Persistence: sqlx repositories over `sqlx::Any`, which is SQLite (one file in the data
//! directory, WAL mode; the default) or PostgreSQL (`--database-url postgres://…` or
//! `VIGIL_DATABASE_URL`). One set of migrations serves both: the SQL is portable (`$n`
//! parameters, TEXT/BIGINT/BOOLEAN columns, `ON CONFLICT`, `RETURNING`; booleans are read
//! back through `CASE` because the Any driver cannot decode SQLite booleans).
//!
//! Repositories: [`agents`] (enrolled agents and the enrollment transaction), [`tokens`]
//! (join tokens, hashed), [`revocations`], [`api_tokens`] (hashed bearer tokens with
//! roles), [`approvals`] (decided atomically, once), [`audit`] (the hash chain) and
//! [`identity`] (whose keys the database belongs to), [`replicas`] (the replicas'
//! leases and which holds each agent's stream) and [`handoff`] (chat turns and approvals
//! across replicas) and [`inventory`] (agents' inventories shared between replicas);
//! [`notify`] wakes replicas up with PostgreSQL's `LISTEN/NOTIFY`.
//! Tests get a private PostgreSQL schema from [`test_db`] (test builds and the
//! `test-support` feature only).

pub mod agents;
pub mod api_tokens;
pub mod approvals;
pub mod audit;
pub mod chain;
pub mod chat;
pub mod findings;
pub mod handoff;
pub mod identity;
pub mod inventory;
pub mod knowledge;
pub mod notify;
pub mod outbox;
pub mod replicas;
pub mod revocations;
#[cfg(any(test, feature = "test-support"))]
pub mod test_db;
pub mod tokens;

use std::path::Path;
use std::time::Duration;

use sqlx::Executor;
use sqlx::any::AnyPoolOptions;
use sqlx::migrate::Migrator;

use crate::data_dir::{DATABASE, DataDir};
use crate::{Error, Result};

pub use agents::{AgentRow, NewAgent};
pub use tokens::{JoinTokenRow, TokenState};

/// The database the controller runs on: `sqlx::Any` over SQLite or PostgreSQL, so every
/// repository has one code path. The SQL is portable; the few differences (locking the
/// audit chain) ask [`Store::backend`].
pub type Db = sqlx::Any;
/// A connection pool to [`Db`].
pub type DbPool = sqlx::Pool<Db>;
/// One connection of [`Db`] (inside a transaction, for example).
pub type DbConnection = <Db as sqlx::Database>::Connection;

static MIGRATOR: Migrator = sqlx::migrate!("./migrations");

/// Environment variable naming a PostgreSQL database (`--database-url`).
pub const ENV_DATABASE_URL: &str = "VIGIL_DATABASE_URL";

/// Set on every SQLite connection: WAL, and a writer waits up to 10 s for another (the
/// CLI and `serve` share the file).
const SQLITE_PRAGMAS: &str = "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; \
    PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 10000;";
/// How long to wait for a pooled connection.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);

/// Which database a [`Store`] runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// One SQLite file in the data directory (WAL mode).
    Sqlite,
    /// A PostgreSQL server (`--database-url postgres://…`).
    Postgres,
}

/// `--database-url`: the flag of every subcommand that opens the database.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct DatabaseArg {
    /// PostgreSQL instead of SQLite in the data directory: postgres://USER:PASS@HOST/DB.
    #[arg(long, env = ENV_DATABASE_URL, value_name = "URL")]
    pub database_url: Option<String>,
}

/// The controller's database, cheap to clone. Its `Debug` leaves out the URL, which holds
/// the database's password.
#[derive(Clone)]
pub struct Store {
    pool: DbPool,
    backend: Backend,
    /// The URL it was opened with (for `LISTEN`, which needs a connection of its own).
    url: std::sync::Arc<str>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("backend", &self.backend)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// Opens the database the flags select: PostgreSQL when `database_url` is given,
    /// otherwise SQLite in the data directory.
    pub async fn open_selected(dir: &DataDir, database_url: Option<&str>) -> Result<Store> {
        match database_url.map(str::trim).filter(|u| !u.is_empty()) {
            Some(url) => Self::open_url(url).await,
            None => Self::open(dir).await,
        }
    }

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
        let path = path.to_str().ok_or_else(|| {
            Error::Config(format!("database path {} is not UTF-8", path.display()))
        })?;
        let url = format!("sqlite://{}?mode=rwc", percent_encode_path(path));
        Self::connect(&url, Backend::Sqlite, 4).await
    }

    /// Connects to PostgreSQL at `url` (`postgres://user:pass@host/db`) and applies the
    /// migrations (the same ones as SQLite).
    pub async fn open_url(url: &str) -> Result<Store> {
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(Error::Config(
                "--database-url must start with postgres:// (SQLite needs no URL: it lives in --data-dir)".into(),
            ));
        }
        Self::connect(url, Backend::Postgres, 16).await
    }

    async fn connect(url: &str, backend: Backend, max: u32) -> Result<Store> {
        sqlx::any::install_default_drivers();
        let pool = AnyPoolOptions::new()
            .max_connections(max)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .after_connect(move |conn, _meta| {
                Box::pin(async move {
                    if backend == Backend::Sqlite {
                        conn.execute(SQLITE_PRAGMAS).await?;
                    }
                    Ok(())
                })
            })
            .connect(url)
            .await?;
        MIGRATOR.run(&pool).await?;
        Ok(Store {
            pool,
            backend,
            url: url.into(),
        })
    }

    /// The connection pool, for repositories.
    pub fn pool(&self) -> &DbPool {
        &self.pool
    }

    /// Which database this is.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// True when the database answers a trivial query (for `GET /readyz`).
    pub async fn ping(&self) -> bool {
        sqlx::query("SELECT 1").execute(&self.pool).await.is_ok()
    }

    /// Closes every connection (on shutdown).
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// Escapes the characters that would end or confuse the path part of a `sqlite://` URL.
fn percent_encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        match c {
            '%' | '?' | '#' | ' ' => out.push_str(&format!("%{:02X}", c as u32)),
            c => out.push(c),
        }
    }
    out
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
    use super::test_db::{self, Cleanup};
    use super::*;

    /// A store in a fresh temporary directory (kept alive by the returned guard).
    pub async fn temp_store() -> (Store, tempfile::TempDir) {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&DataDir::new(tmp.path())).await.unwrap();
        (store, tmp)
    }

    /// A fresh SQLite store and, when `VIGIL_TEST_DATABASE_URL` is set, a fresh
    /// PostgreSQL store in its own schema: every store test runs on both.
    pub async fn all_stores() -> Vec<(Store, Cleanup)> {
        let tmp = tempfile::tempdir().unwrap();
        let sqlite = Store::open(&DataDir::new(tmp.path())).await.unwrap();
        let mut stores = vec![(sqlite, Cleanup::Dir(tmp))];
        if let Some((url, cleanup)) = test_db::pg_schema_url().await.unwrap() {
            stores.push((Store::open_url(&url).await.unwrap(), cleanup));
        }
        stores
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[tokio::test]
    async fn a_store_never_shows_its_url() {
        for (store, cleanup) in test_support::all_stores().await {
            let shown = format!("{store:?}");
            assert!(!shown.contains("://"), "{shown}");
            cleanup.finish().await.unwrap();
        }
    }

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
