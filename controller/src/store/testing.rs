//! Test support shared by the unit tests and `controller/tests`: a private PostgreSQL
//! schema per test, so tests run in parallel against one server.
//!
//! `VIGIL_TEST_DATABASE_URL` names the server (`.ci/run` sets it). Without it the
//! PostgreSQL half of a test is skipped, except when `CI` is set: then a missing or
//! unreachable server is an error, never a silent skip.

use sqlx::Executor;
use sqlx::any::AnyPoolOptions;

use super::Store;
use crate::{Error, Result};

/// Environment variable naming the PostgreSQL server for tests.
pub const ENV_TEST_DATABASE_URL: &str = "VIGIL_TEST_DATABASE_URL";

/// What keeps a test database alive; [`Cleanup::finish`] drops a PostgreSQL schema.
#[derive(Debug)]
pub enum Cleanup {
    /// A temporary directory holding a SQLite file.
    Dir(tempfile_like::Dir),
    /// A PostgreSQL schema on the server at `url`.
    Schema {
        /// The server (without the schema option).
        url: String,
        /// The schema's name.
        schema: String,
    },
}

/// The test server's URL, if tests should use PostgreSQL. Errors when `CI` is set and
/// no server is configured.
pub fn pg_test_url() -> Result<Option<String>> {
    match std::env::var(ENV_TEST_DATABASE_URL) {
        Ok(url) if !url.trim().is_empty() => Ok(Some(url.trim().to_owned())),
        _ if std::env::var_os("CI").is_some() => Err(Error::Config(format!(
            "CI is set but {ENV_TEST_DATABASE_URL} is not: PostgreSQL tests must not be skipped"
        ))),
        _ => Ok(None),
    }
}

/// Creates a fresh schema on the test server and returns a URL whose connections use it.
pub async fn pg_schema_url() -> Result<Option<(String, Cleanup)>> {
    let Some(url) = pg_test_url()? else {
        return Ok(None);
    };
    sqlx::any::install_default_drivers();
    let admin = AnyPoolOptions::new()
        .max_connections(1)
        .connect(&url)
        .await
        .map_err(|e| Error::Config(format!("{ENV_TEST_DATABASE_URL} is unreachable: {e}")))?;
    let schema = format!("vigil_t_{}", uuid::Uuid::new_v4().simple());
    admin
        .execute(sqlx::AssertSqlSafe(format!("CREATE SCHEMA {schema}")))
        .await?;
    admin.close().await;
    let sep = if url.contains('?') { '&' } else { '?' };
    let scoped = format!("{url}{sep}options=-c%20search_path%3D{schema}");
    Ok(Some((scoped, Cleanup::Schema { url, schema })))
}

/// A migrated store in a fresh schema on the test server, if there is one.
pub async fn pg_store() -> Result<Option<(Store, Cleanup)>> {
    let Some((url, cleanup)) = pg_schema_url().await? else {
        return Ok(None);
    };
    Ok(Some((Store::open_url(&url).await?, cleanup)))
}

impl Cleanup {
    /// Drops the schema (a SQLite directory goes when this is dropped).
    pub async fn finish(self) -> Result<()> {
        if let Cleanup::Schema { url, schema } = self {
            let admin = AnyPoolOptions::new()
                .max_connections(1)
                .connect(&url)
                .await?;
            admin
                .execute(sqlx::AssertSqlSafe(format!(
                    "DROP SCHEMA IF EXISTS {schema} CASCADE"
                )))
                .await?;
            admin.close().await;
        }
        Ok(())
    }
}

/// A directory removed when dropped (a small stand-in so this module needs no
/// dev-dependency).
pub mod tempfile_like {
    use std::path::{Path, PathBuf};

    /// A directory removed on drop.
    #[derive(Debug)]
    pub struct Dir(PathBuf);

    impl Dir {
        /// Creates a fresh directory under the system's temporary directory.
        pub fn new() -> std::io::Result<Dir> {
            let path = std::env::temp_dir().join(format!("vigil-{}", uuid::Uuid::new_v4()));
            std::fs::create_dir_all(&path)?;
            Ok(Dir(path))
        }

        /// Its path.
        pub fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
