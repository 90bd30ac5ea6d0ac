//! `vigil-controller ca show`: prints the CA fingerprint that agents pin at enrollment.

use std::io::Write;

use clap::{Args, Subcommand};
use time::OffsetDateTime;

use crate::config::{DataDirArg, SecretsDirArg};
use crate::data_dir::DataDir;
use crate::pki::Pki;
use crate::{Error, Result};

/// `vigil-controller ca …`
#[derive(Debug, Subcommand)]
pub enum CaCommand {
    /// Print `sha256:<hex>` of the CA certificate (created on first use), the value of
    /// `vigil-agent join --ca-fingerprint`.
    Show(ShowArgs),
}

/// Arguments of `ca show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    #[command(flatten)]
    pub data_dir: DataDirArg,
    #[command(flatten)]
    pub secrets: SecretsDirArg,
}

/// Runs a `ca` subcommand.
pub fn run(command: CaCommand) -> Result<()> {
    match command {
        CaCommand::Show(args) => {
            let ca = Pki::load_or_create_ca(
                &DataDir::new(&args.data_dir.data_dir),
                args.secrets.get(),
                OffsetDateTime::now_utc(),
            )?;
            let mut out = std::io::stdout().lock();
            writeln!(out, "{}", ca.fingerprint()).map_err(Error::WriteOutput)
        }
    }
}
