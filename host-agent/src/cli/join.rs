//! `vigil-agent join`.

use super::{StateArgs, absolute, output_error};
use crate::error::Result;
use crate::link::{JoinOptions, enroll};
use crate::state::StateDir;
use clap::Args;
use std::io::{self, Write};

pub const LONG_ABOUT: &str = "\
Enroll this host with a Vigil controller. The agent makes a new key on this host (it never \
leaves it), sends a certificate request with the join token over TLS that trusts the \
controller only if its CA has the given fingerprint, and stores the certificate, the CA and \
the controller's grant key in the state directory. Running join again replaces the identity \
and asks the controller to revoke the old one.";

/// The join token's environment variable (also `run --join-token`'s).
pub const ENV_TOKEN: &str = "VIGIL_AGENT_TOKEN";

#[derive(Debug, Args)]
pub struct JoinArgs {
    /// The controller's agent gateway, https://HOST[:PORT] (port 8641 by default).
    #[arg(long, value_name = "URL")]
    url: String,
    /// A join token from `vigil-controller token create`.
    #[arg(
        long,
        env = ENV_TOKEN,
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    token: String,
    /// The controller's CA fingerprint, as `vigil-controller ca show` prints it (sha256:…).
    #[arg(long, value_name = "FINGERPRINT")]
    ca_fingerprint: String,
    #[command(flatten)]
    state: StateArgs,
}

pub async fn join(args: JoinArgs) -> Result<()> {
    let dir = absolute(args.state.state_dir)?;
    let options = JoinOptions::new(
        &args.url,
        &args.token,
        &args.ca_fingerprint,
        StateDir::new(&dir),
    )?;
    let identity = enroll(&options).await?;
    let mut out = io::stdout().lock();
    writeln!(out, "Enrolled as agent {} with {}.", identity.agent_id, identity.url)
        .and_then(|()| writeln!(out, "State directory: {}", dir.display()))
        .and_then(|()| {
            writeln!(
                out,
                "Next: `vigil-agent install` to run it as a service, or `vigil-agent run` in the foreground."
            )
        })
        .map_err(output_error)
}
