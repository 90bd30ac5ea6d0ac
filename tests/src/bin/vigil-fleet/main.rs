//! `vigil-fleet`: simulates many agents against one controller (`make fleet`). See
//! `vigil_tests::fleet` for how it works and `docs/fleet.md` for how to use it.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use tokio_util::sync::CancellationToken;
use tracing::{error, info};
use vigil_tests::fleet::api::ApiClient;
use vigil_tests::fleet::measure::{self, MeasureOptions};
use vigil_tests::fleet::{self, Error, FleetOptions};

/// Simulate a fleet of Vigil agents: enroll N identities once (kept in --state-dir), then
/// hold one real mutual-TLS AgentLink stream per identity from this one process, with
/// heartbeats, a one-host inventory and canned answers to commands, until SIGINT or
/// SIGTERM. Prints `connected N/N` on standard output whenever every stream is up.
#[derive(Debug, Parser)]
#[command(name = "vigil-fleet", version, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Measure a controller holding a fleet: memory, idle CPU, `GET /api/agents` latency,
    /// fan-out time and results lost, and the simulator's own footprint.
    Measure(MeasureArgs),
}

/// Where the controller is.
#[derive(Debug, Args)]
struct ApiArgs {
    /// The controller's HTTP API.
    #[arg(long, env = "VIGIL_URL", default_value = "http://127.0.0.1:8640")]
    url: String,
    /// An admin API token (`vigil-controller apitoken create --role admin`); needed only
    /// to enroll identities the state directory lacks.
    #[arg(long, env = "VIGIL_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// A PEM CA certificate to trust for an `https://` API.
    #[arg(long, value_name = "FILE")]
    http_ca: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct RunArgs {
    #[command(flatten)]
    api: ApiArgs,
    /// How many agents to simulate.
    #[arg(long, default_value_t = 10)]
    agents: usize,
    /// Where the identities are kept (`fleet.json`); a rerun enrolls only what is missing.
    #[arg(long, value_name = "DIR", default_value = "./fleet-state")]
    state_dir: PathBuf,
    /// The agent gateway, `https://HOST:PORT`; by default the one the API's install line
    /// names (or, with no enrollment to do, the one the state file recorded). Repeat it
    /// for several replicas: identities enroll through the first, agent i dials gateway
    /// i first, and each reconnect moves on to the next.
    #[arg(long, value_name = "URL")]
    gateway: Vec<String>,
    /// The controller's CA, `sha256:<hex>` as `vigil-controller ca show` prints it; by
    /// default the one the API's install line names.
    #[arg(long, value_name = "PIN")]
    ca_fingerprint: Option<String>,
    /// Enrollments, and stream openings (dial, TLS, hello, ack), in flight at once. Keep
    /// it under the gateway's handshake limit (256).
    #[arg(long, default_value_t = 64)]
    concurrency: usize,
    /// A label for the join tokens, so for every enrolled agent (repeatable).
    #[arg(long = "labels", value_name = "KEY=VALUE", value_parser = parse_label)]
    labels: Vec<(String, String)>,
    /// Agents say hello as `<PREFIX>-00000`, `<PREFIX>-00001`, …
    #[arg(long, default_value = "fleet")]
    hostname_prefix: String,
    /// Heartbeat every this many seconds instead of the interval the controller asks for.
    #[arg(long, value_name = "SECONDS")]
    heartbeat_s: Option<u64>,
}

#[derive(Debug, Args)]
struct MeasureArgs {
    #[command(flatten)]
    api: ApiArgs,
    /// The controller's process id.
    #[arg(long)]
    controller_pid: u32,
    /// The simulator's process id, for its own CPU and memory.
    #[arg(long)]
    fleet_pid: Option<u32>,
    /// Agents the fleet runs (for figures per agent).
    #[arg(long)]
    agents: usize,
    /// The controller's VmRSS in KiB before the fleet connected.
    #[arg(long, value_name = "KIB")]
    rss_before_kib: Option<u64>,
    /// Seconds the fleet took to connect (reported as is).
    #[arg(long, value_name = "SECONDS")]
    connect_s: Option<f64>,
    /// The idle window for CPU figures.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    idle_s: u64,
    /// Sequential `GET /api/agents` requests to time.
    #[arg(long, default_value_t = 100)]
    list_requests: usize,
    /// Fan-outs to every agent to time.
    #[arg(long, default_value_t = 3)]
    fanouts: usize,
    /// The fan-out's command.
    #[arg(long, default_value = "uname -s")]
    fanout_command: String,
    /// Also write the figures as JSON to this file.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

fn parse_label(text: &str) -> Result<(String, String), String> {
    text.split_once('=')
        .filter(|(k, _)| !k.is_empty())
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .ok_or_else(|| format!("{text:?} is not KEY=VALUE"))
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            error!(error = %e, "cannot start the runtime");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Some(Command::Measure(args)) => run_measure(args).await,
            None => run_fleet(cli.run).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            error!(error = %e, "vigil-fleet failed");
            ExitCode::FAILURE
        }
    }
}

async fn run_fleet(args: RunArgs) -> Result<(), Error> {
    if args.agents == 0 {
        return Err(Error::Usage("--agents must be at least 1".into()));
    }
    if args.heartbeat_s == Some(0) {
        return Err(Error::Usage("--heartbeat-s must be at least 1".into()));
    }
    let options = FleetOptions {
        url: args.api.url,
        token: args.api.token,
        http_ca: args.api.http_ca,
        agents: args.agents,
        state_dir: args.state_dir,
        gateways: args.gateway,
        ca_fingerprint: args.ca_fingerprint,
        concurrency: args.concurrency.max(1),
        labels: args.labels.into_iter().collect::<BTreeMap<_, _>>(),
        hostname_prefix: args.hostname_prefix,
        heartbeat: args.heartbeat_s.map(Duration::from_secs),
    };
    let shutdown = CancellationToken::new();
    tokio::spawn(stop_on_signal(shutdown.clone()));
    fleet::run(options, shutdown).await
}

/// Cancels `shutdown` on SIGINT or SIGTERM.
async fn stop_on_signal(shutdown: CancellationToken) {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(term) => term,
        Err(e) => {
            error!(error = %e, "cannot watch SIGTERM");
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => info!("SIGINT: closing every stream"),
        _ = term.recv() => info!("SIGTERM: closing every stream"),
    }
    shutdown.cancel();
}

async fn run_measure(args: MeasureArgs) -> Result<(), Error> {
    let api = ApiClient::new(
        &args.api.url,
        args.api.token.as_deref().unwrap_or_default(),
        args.api.http_ca.as_deref(),
    )?;
    let options = MeasureOptions {
        controller_pid: args.controller_pid,
        fleet_pid: args.fleet_pid,
        agents: args.agents,
        rss_before_kib: args.rss_before_kib,
        connect_s: args.connect_s,
        idle: Duration::from_secs(args.idle_s),
        list_requests: args.list_requests,
        fanouts: args.fanouts,
        fanout_command: args.fanout_command,
        json: args.json,
    };
    measure::measure(&api, &options).await?.print();
    Ok(())
}
