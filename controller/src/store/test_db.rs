//! A private PostgreSQL schema per test, so store and API tests run in parallel against
//! one server. The store's unit tests use it (`store::test_support`), and so do the
//! end-to-end suites (`vigil_tests::db`, through the `test-support` feature). It hands out
//! URLs, not stores: a caller opens its own `Store::open_url`.
//!
//! `VIGIL_TEST_DATABASE_URL` names the server (`.ci/run` sets it). Without it the
//! PostgreSQL half of a test is skipped, except when `CI` is set: then a missing or
//! unreachable server is an error, never a silent skip.

use anyhow::{Context, Result, bail};
use sqlx::Executor;
use sqlx::any::AnyPoolOptions;
use tempfile::TempDir;

/// Environment variable naming the PostgreSQL server for tests.
pub const ENV_TEST_DATABASE_URL: &str = "VIGIL_TEST_DATABASE_URL";

/// What keeps a test database alive; [`Cleanup::finish`] drops a PostgreSQL schema.
#[derive(Debug)]
pub enum Cleanup {
    /// A temporary directory holding a SQLite file (removed when dropped).
    Dir(TempDir),
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
        _ if std::env::var_os("CI").is_some() => bail!(
            "CI is set but {ENV_TEST_DATABASE_URL} is not: PostgreSQL tests must not be skipped"
        ),
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
        .with_context(|| format!("{ENV_TEST_DATABASE_URL} is unreachable"))?;
    let schema = format!("vigil_t_{}", uuid::Uuid::new_v4().simple());
    admin
        .execute(sqlx::AssertSqlSafe(format!("CREATE SCHEMA {schema}")))
        .await?;
    admin.close().await;
    let sep = if url.contains('?') { '&' } else { '?' };
    let scoped = format!("{url}{sep}options=-c%20search_path%3D{schema}");
    Ok(Some((scoped, Cleanup::Schema { url, schema })))
}

impl Cleanup {
    /// Drops the schema (a SQLite directory goes when this is dropped).
    pub async fn finish(self) -> Result<()> {
        if let Cleanup::Schema { url, schema } = self {
            sqlx::any::install_default_drivers();
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
