//! `vigil-controller audit verify`: walks the audit chain; prints `OK <rows>` or exits 1
//! naming the first broken row.

use std::io::Write;

use clap::Subcommand;

use super::apitoken::StateArgs;
use crate::{Error, Result};

/// `vigil-controller audit …`
#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Check every row's hash and link; exit 1 at the first broken row.
    Verify(StateArgs),
}

/// Runs an `audit` subcommand; returns the exit code.
pub fn run(command: AuditCommand) -> Result<u8> {
    let AuditCommand::Verify(args) = command;
    super::client_runtime()?.block_on(async {
        let store = args.open().await?;
        let result = store.verify_audit().await?;
        store.close().await;
        let (text, code) = match result {
            Ok(rows) => (format!("OK: {rows} audit rows, chain intact"), 0),
            Err(broken) => (format!("BROKEN at row {}: {}", broken.seq, broken.why), 1),
        };
        let mut out = std::io::stdout().lock();
        writeln!(out, "{text}")
            .and_then(|()| out.flush())
            .map_err(Error::WriteOutput)?;
        Ok(code)
    })
}
