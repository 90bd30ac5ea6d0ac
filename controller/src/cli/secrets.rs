//! `vigil-controller secrets init --dir DIR`: makes the shared identity of a controller's
//! replicas once (the CA and the grant-signing key, [`crate::pki::shared`]), for
//! `serve --secrets-dir DIR` on every replica.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand};
use time::OffsetDateTime;

use crate::pki::shared;
use crate::{Error, Result};

/// `vigil-controller secrets …`
#[derive(Debug, Subcommand)]
pub enum SecretsCommand {
    /// Make the shared identity (a CA and a grant-signing key) in a new directory, once;
    /// give every replica that directory with `serve --secrets-dir`.
    Init(InitArgs),
}

/// Arguments of `secrets init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The directory to write (created 0700); it must not hold the files yet.
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
}

/// Runs a `secrets` subcommand.
pub fn run(command: SecretsCommand) -> Result<()> {
    match command {
        SecretsCommand::Init(args) => {
            let ca = shared::init(&args.dir, OffsetDateTime::now_utc())?;
            let dir = args.dir.display();
            let mut out = std::io::stdout().lock();
            writeln!(
                out,
                "Wrote {} in {dir}.\nCA fingerprint: {}\nStart every replica with \
                 `vigil-controller serve --secrets-dir {dir}` (or VIGIL_SECRETS_DIR), and keep \
                 a copy: agents trust this CA, and approved writes carry this grant key.",
                shared::FILES.join(", "),
                ca.fingerprint()
            )
            .map_err(Error::WriteOutput)
        }
    }
}
