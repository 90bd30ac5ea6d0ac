//! `vigil-agent run`.

use super::{ConfigArgs, StateArgs};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::exec::sandbox::host_root::HostRoot;
use crate::exec::sandbox::{
    ENV_ALLOW_UNSANDBOXED_READS, ENV_HIDE, ENV_HOST_ROOT, HiddenPaths, ReadSandbox,
};
use crate::link::{self, JoinOptions, Runtime, enroll};
use crate::state::StateDir;
use clap::Args;
use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

pub const LONG_ABOUT: &str = "\
Connect to the controller with this host's certificate and keep the connection up, \
reconnecting with backoff. Every command that arrives is checked again here: reads must be \
provably read-only and bounded, writes need a grant signed by the controller's key for this \
agent and this exact command. With --read-only (or read_only = true in the config) every \
write is refused for the life of the process. Every read on this host runs confined by \
the kernel (Landlock, seccomp, no_new_privs, a reduced capability set) so that it cannot \
write, in a mount namespace where the agent's state, Vigil's own directories and the \
host's credential stores (shadow, SSH keys, kubeconfigs, …; see --hide) are empty masks; \
on a kernel without Landlock, or where that namespace cannot be made, reads are refused \
unless --allow-unsandboxed-reads is given. The sandbox level shows in the log at startup and in the agent's facts. SIGTERM or SIGINT stops the agent and kills \
running commands. Exits with status 3 when the controller revokes the agent.

In a container or a DaemonSet, where nobody runs `join` by hand, give --join-url, \
--join-ca-fingerprint and a join token (VIGIL_AGENT_TOKEN): when the state directory holds no \
identity yet, the agent enrolls first, exactly as `join` would; once enrolled they are ignored, \
so a restart keeps the same identity.";

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    state: StateArgs,
    /// Refuse every write, whatever the controller sends.
    #[arg(long)]
    read_only: bool,
    /// Run host reads even when the kernel has no Landlock (they could then write);
    /// without it such an agent refuses reads. Shown in the agent's facts.
    #[arg(long, env = ENV_ALLOW_UNSANDBOXED_READS)]
    allow_unsandboxed_reads: bool,
    /// Hide this path from every read, besides Vigil's own directories, the state
    /// directory and the default credential stores (repeatable; an absolute path, `*`
    /// matches within one component; the environment variable takes a `:`-separated list).
    #[arg(long = "hide", value_name = "PATH", env = ENV_HIDE, value_delimiter = ':')]
    hide: Vec<String>,
    /// The host's root file system as this agent sees it, when the agent runs in a
    /// container that mounts it (a Kubernetes DaemonSet: /host). Host reads then run with
    /// it as their root: the host's programs and files, its hidden paths masked, its
    /// daemons behind the read-only doors. Approved writes on the host are refused.
    #[arg(long, env = ENV_HOST_ROOT, value_name = "DIR")]
    host_root: Option<std::path::PathBuf>,
    #[command(flatten)]
    config: ConfigArgs,
    #[command(flatten)]
    join: JoinIfNeeded,
}

/// Enrollment on first start, for containers: used only while the state directory holds
/// no identity.
#[derive(Debug, Args)]
struct JoinIfNeeded {
    /// When not enrolled yet: the controller's agent gateway, https://HOST[:PORT], to join
    /// first (needs --join-ca-fingerprint and a join token).
    #[arg(long, env = ENV_JOIN_URL, value_name = "URL")]
    join_url: Option<String>,
    /// When not enrolled yet: the controller's CA fingerprint (sha256:…) for --join-url.
    #[arg(long, env = ENV_JOIN_CA_FINGERPRINT, value_name = "FINGERPRINT")]
    join_ca_fingerprint: Option<String>,
    /// When not enrolled yet: the join token for --join-url (a token with several uses
    /// serves a whole DaemonSet).
    #[arg(long, env = ENV_JOIN_TOKEN, hide_env_values = true, value_name = "TOKEN")]
    join_token: Option<String>,
}

/// Environment variables of the first-start enrollment (the token's is `join`'s own).
pub const ENV_JOIN_URL: &str = "VIGIL_AGENT_JOIN_URL";
pub const ENV_JOIN_CA_FINGERPRINT: &str = "VIGIL_AGENT_JOIN_CA_FINGERPRINT";
pub const ENV_JOIN_TOKEN: &str = super::join::ENV_TOKEN;

/// Enrolls when the state directory holds no identity and --join-url is given. Empty
/// values count as not given (compose passes unset settings as empty strings).
async fn join_if_needed(args: &JoinIfNeeded, state: &StateDir) -> Result<()> {
    let given = |value: &Option<String>| {
        value
            .as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
    };
    let Some(url) = given(&args.join_url) else {
        return Ok(());
    };
    if state.is_enrolled() {
        return Ok(());
    }
    let fingerprint = given(&args.join_ca_fingerprint).ok_or_else(|| {
        Error::Usage(format!(
            "not enrolled yet: --join-url needs --join-ca-fingerprint (or {ENV_JOIN_CA_FINGERPRINT})"
        ))
    })?;
    let token = given(&args.join_token).ok_or_else(|| {
        Error::Usage(format!(
            "not enrolled yet: --join-url needs a join token (--join-token or {ENV_JOIN_TOKEN})"
        ))
    })?;
    let options = JoinOptions::new(&url, &token, &fingerprint, state.clone())?;
    let identity = enroll(&options).await?;
    info!(agent_id = %identity.agent_id, url = %identity.url, "enrolled on first start");
    Ok(())
}

pub async fn run(args: RunArgs) -> Result<()> {
    join_if_needed(&args.join, &StateDir::new(&args.state.state_dir)).await?;
    let config = Config::load(args.config.config.as_deref(), args.read_only)?;
    let platform = crate::platform::detect(&config.discovery).await;
    let mut extra = config.sandbox.hide.clone();
    extra.extend(args.hide.iter().filter(|p| !p.is_empty()).cloned());
    let state_dir = std::path::absolute(&args.state.state_dir)
        .map_err(|e| Error::io("resolving the state directory", e))?;
    let hidden = HiddenPaths::new([state_dir], config.sandbox.hide_defaults, &extra)
        .map_err(|e| Error::Usage(e.to_string()))?;
    let root = match args
        .host_root
        .as_deref()
        .filter(|p| !p.as_os_str().is_empty())
    {
        Some(dir) => HostRoot::new(dir).map_err(|e| Error::Usage(e.to_string()))?,
        None => None,
    };
    if let Some(root) = &root {
        info!(host_root = %root.dir().display(), "host reads run in the host's root");
        crate::inventory::set_host_root(root);
    }
    let doors = crate::exec::sandbox::doors::start(
        &crate::exec::sandbox::doors::agent_dir(),
        root.as_ref(),
    )
    .await;
    let plan = crate::exec::sandbox::mountns::Plan {
        hidden,
        doors: doors.list.clone(),
        mask_sockets: true,
        root,
    };
    if let Err(error) = crate::exec::sandbox::read_env::install_mysql_options() {
        warn!(%error, "could not write the MySQL options that make reads' sessions read-only");
    }
    let kubeconfig = crate::exec::sandbox::read_env::install_read_kubeconfig(
        config.sandbox.kubeconfig.as_deref(),
    )
    .map_err(|e| Error::io("installing [sandbox] kubeconfig for reads", e))?;
    let sandbox = detect_sandbox(args.allow_unsandboxed_reads, plan)?.with_kubeconfig(kubeconfig);
    let runtime = Runtime::new(
        StateDir::new(args.state.state_dir),
        config,
        platform,
        sandbox,
    )?;
    let shutdown = CancellationToken::new();
    let mut term =
        signal(SignalKind::terminate()).map_err(|e| Error::io("listen for SIGTERM", e))?;
    let mut int = signal(SignalKind::interrupt()).map_err(|e| Error::io("listen for SIGINT", e))?;
    let stop = shutdown.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = term.recv() => info!("SIGTERM received; stopping"),
            _ = int.recv() => info!("SIGINT received; stopping"),
        }
        stop.cancel();
    });
    let result = link::run(runtime, shutdown).await;
    // The doors' proxies live as long as the agent runs.
    drop(doors);
    result
}

/// Probe the read sandbox (one throw-away confined thread) and log what it found.
fn detect_sandbox(
    allow_unsandboxed: bool,
    plan: crate::exec::sandbox::mountns::Plan,
) -> Result<ReadSandbox> {
    let sandbox = ReadSandbox::detect(allow_unsandboxed, plan);
    let facts = sandbox.facts();
    info!(
        launcher = %facts.launcher,
        level = %facts.level,
        landlock_abi = facts.landlock_abi,
        seccomp = facts.seccomp,
        no_new_privs = facts.no_new_privs,
        capabilities_dropped = facts.capabilities_dropped,
        allow_unsandboxed_reads = facts.allow_unsandboxed_reads,
        hidden = facts.hidden,
        "read sandbox"
    );
    match sandbox.masked() {
        Ok((paths, devices, sockets)) => info!(
            patterns = facts.hidden_paths.len(),
            paths, devices, sockets, "hidden from reads"
        ),
        Err(error) => warn!(%error, "the reads' mount namespace could not be made"),
    }
    if let Err(error) = sandbox.probe() {
        warn!(%error, "the read sandbox probe failed");
    }
    if let Some(reason) = sandbox.refusal() {
        warn!(%reason, "host reads will be refused");
    } else if facts.level == "none" {
        warn!("host reads run without the sandbox (--allow-unsandboxed-reads)");
    }
    Ok(sandbox)
}
