//! `vigil-controller ready`: asks a running controller's `GET /readyz` and exits 0 when it
//! answers 200, 1 otherwise. It is the container image's health check, which must work
//! without a shell or curl in the image.

use std::io::Write;
use std::time::Duration;

use clap::Args;

use crate::config::{DEFAULT_URL, ENV_URL};
use crate::{Error, Result};

/// How long the check waits for an answer.
const TIMEOUT: Duration = Duration::from_secs(5);

/// The flags of `ready`.
#[derive(Debug, Args)]
pub struct ReadyArgs {
    /// The controller's HTTP API (plain HTTP, or HTTPS trusted by the system's roots).
    #[arg(long, env = ENV_URL, default_value = DEFAULT_URL, value_name = "URL")]
    pub url: String,
    /// Print nothing; only the exit code tells.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Runs `ready`: exit code 0 when ready, 1 when not (with the reason on standard error).
pub fn run(args: &ReadyArgs) -> Result<u8> {
    let url = format!("{}/readyz", args.url.trim_end_matches('/'));
    let answer = super::client_runtime()?.block_on(async {
        let http = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .build()
            .map_err(|source| Error::Http {
                url: url.clone(),
                source,
            })?;
        let response = http.get(&url).send().await.map_err(|source| Error::Http {
            url: url.clone(),
            source,
        })?;
        let status = response.status();
        let body = response.text().await.unwrap_or_default();
        Ok::<_, Error>((status, body))
    });
    let (ready, line) = match answer {
        Ok((status, _)) if status.is_success() => (true, format!("ready: {url} answered {status}")),
        Ok((status, body)) => (
            false,
            format!("not ready: {url} answered {status} {}", body.trim()),
        ),
        Err(error) => (false, format!("not ready: {error}")),
    };
    if !args.quiet {
        let _ = if ready {
            writeln!(std::io::stdout().lock(), "{line}")
        } else {
            writeln!(std::io::stderr().lock(), "{line}")
        };
    }
    Ok(if ready { 0 } else { 1 })
}
