//! The running controller: [`start`] loads or creates the data directory's keys and
//! database, binds both listeners and serves the agent gateway and the HTTP API until
//! [`RunningController::shutdown`].

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use time::OffsetDateTime;
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};
use vigil_proto::agent::v1::Goodbye;

use crate::access::Access;
use crate::agents::Agents;
use crate::api::install::InstallSite;
use crate::api::{self, ApiOptions, ApiState, Metrics};
use crate::approvals::Approvals;
use crate::assistant::Assistant;
use crate::audit::AuditLog;
use crate::cluster::tls::ClusterTls;
use crate::cluster::{Cluster, Forwarder};
use crate::config::Config;
use crate::data_dir::{ADMIN_TOKEN, DataDir};
use crate::exec::ExecService;
use crate::gateway::{
    Dispatcher, EnrollmentService, Gateway, GatewayTls, LinkService, RevocationSet, Sessions,
};
use crate::pki::Pki;
use crate::store::Store;
use crate::store::identity::ControllerIdentity;
use crate::store::replicas::ReplicaRecord;
use crate::{Error, Result};

/// How long shutdown waits for connections to drain.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);
/// A stopping replica first answers `/readyz` with 503 for this long, still serving, so
/// that load balancers stop sending it requests.
const DRAIN_NOTICE: Duration = Duration::from_secs(2);
/// Longest a stopping replica waits for its agents' commands to end before it sends the
/// agents away anyway.
const DRAIN_GRACE: Duration = Duration::from_secs(20);

/// A controller serving on its two listeners.
#[derive(Debug)]
pub struct RunningController {
    /// Where the HTTP API listens.
    pub http_addr: SocketAddr,
    /// Where the agent gateway listens.
    pub grpc_addr: SocketAddr,
    /// `sha256:<hex>` of the CA certificate.
    pub ca_fingerprint: String,
    /// The agent registry (for tests and future subsystems).
    pub agents: Agents,
    /// Install lines and agent downloads.
    pub install: Arc<InstallSite>,
    /// The id of the agent `--local-agent` supervises.
    pub local_agent: Option<String>,
    /// This replica among the others.
    pub cluster: Cluster,
    shutdown: CancellationToken,
    tasks: JoinSet<Result<()>>,
    /// This controller's entry in the host's list of paths hidden from reads.
    _hidden: Option<crate::hide_registry::Registration>,
    /// The data directory, claimed for as long as this controller runs.
    _serving: crate::data_dir::ServingLock,
}

async fn bind(flag: &str, addr: SocketAddr) -> Result<TcpListener> {
    TcpListener::bind(addr)
        .await
        .map_err(|e| Error::Network(format!("cannot listen on --{flag} {addr}: {e}")))
}

/// What makes this controller one replica among others.
struct Replica {
    record: ReplicaRecord,
    forwarder: Option<Forwarder>,
    /// The `--cluster-listen` listener and its TLS.
    link: Option<(TcpListener, Arc<rustls::ServerConfig>)>,
}

impl Replica {
    /// A new replica id; with `--cluster-listen`, the internal link's certificate (from
    /// the shared secrets' internal-link CA) and listener.
    async fn prepare(config: &Config, pki: &Pki, gateway: SocketAddr) -> Result<Replica> {
        let id = uuid::Uuid::new_v4().to_string();
        let mut record = ReplicaRecord {
            id: id.clone(),
            cluster_address: String::new(),
            gateway_address: gateway.to_string(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        };
        let Some(listen) = &config.cluster else {
            return Ok(Replica {
                record,
                forwarder: None,
                link: None,
            });
        };
        let Some(secrets) = &config.secrets_dir else {
            return Err(Error::Config(
                "--cluster-listen needs --secrets-dir: every replica serves the same identity, \
                 made once by `vigil-controller secrets init`"
                    .into(),
            ));
        };
        let Some(cluster_ca) = &pki.cluster_ca else {
            return Err(Error::Config(format!(
                "--secrets-dir {} has no internal-link CA (cluster-ca.pem): run `vigil-controller \
                 secrets init --dir {}` once to add it, and give every replica the directory",
                secrets.display(),
                secrets.display()
            )));
        };
        let tls = ClusterTls::issue(cluster_ca, &id, OffsetDateTime::now_utc())?;
        let listener = bind("cluster-listen", listen.listen).await?;
        record.cluster_address.clone_from(&listen.advertise);
        info!(replica = %id, listen = %listen.listen, advertise = %listen.advertise,
              "serving as a replica");
        Ok(Replica {
            record,
            forwarder: Some(Forwarder::new(id, tls.client)),
            link: Some((listener, tls.server)),
        })
    }
}

/// Starts the controller described by `config`.
pub async fn start(config: &Config) -> Result<RunningController> {
    if config.raw_exec && !cfg!(feature = "raw-exec") {
        return Err(Error::Config(
            "this build has no POST /api/raw-exec (the `raw-exec` feature is for tests only)"
                .into(),
        ));
    }
    let dir = DataDir::new(&config.data_dir);
    let serving = dir.claim_serving()?;
    let hidden = crate::hide_registry::register(config);
    let pki = Arc::new(Pki::load_or_init(
        &dir,
        config.secrets_dir.as_deref(),
        &config.gateway_sans,
        OffsetDateTime::now_utc(),
    )?);
    let http_cert = crate::http_tls::prepare(config, &dir, &pki.ca)?;
    let (admin_token, created) = api::auth::load_or_create_admin_token(&dir)?;
    let token_path = dir.path(ADMIN_TOKEN);
    if created {
        info!(path = %token_path.display(), "wrote the admin API token");
    } else {
        info!(path = %token_path.display(), "using the admin API token");
    }
    let store = Store::open_selected(&dir, config.database_url.as_deref()).await?;
    store
        .claim_identity(
            &ControllerIdentity {
                ca_fingerprint: pki.ca.fingerprint(),
                grant_public_key: hex::encode(pki.grant.public_bytes()),
            },
            OffsetDateTime::now_utc().unix_timestamp(),
        )
        .await?;
    Access::new(store.clone())
        .register_admin(&admin_token)
        .await?;
    let (revoked_agents, revoked_serials) = store.load_revocations().await?;
    let revocations = Arc::new(RevocationSet::new(revoked_agents, revoked_serials));
    let sessions = Arc::new(Sessions::with_limits(config.agent_queue));
    let agents = Agents::load(store.clone(), sessions.clone(), revocations.clone()).await?;

    let grpc_listener = bind("grpc-listen", config.grpc_listen).await?;
    let http_listener = bind("http-listen", config.http_listen).await?;
    let local = |l: &TcpListener| {
        l.local_addr()
            .map_err(|e| Error::Network(format!("local address: {e}")))
    };
    let (grpc_addr, http_addr) = (local(&grpc_listener)?, local(&http_listener)?);
    let replica = Replica::prepare(config, &pki, grpc_addr).await?;
    let cluster = Cluster::new(agents.clone(), replica.record, replica.forwarder);
    cluster.register().await?;

    let tls = GatewayTls::new(&pki.gateway, &pki.ca, revocations)?;
    let gateway = Gateway::new(
        tls,
        EnrollmentService::new(agents.clone(), pki.clone())
            .with_gateway_endpoints(config.gateway_endpoints.clone()),
        LinkService::new(
            agents.clone(),
            pki.clone(),
            config.heartbeat,
            cluster.clone(),
        ),
    );
    let metrics = Arc::new(Metrics::new());
    let dispatcher = Dispatcher::new(agents.clone()).with_cluster(cluster.clone());
    let exec = ExecService::new(agents.clone(), dispatcher.clone(), metrics.clone())
        .with_fanout_concurrency(config.fanout_concurrency);
    let external = crate::mcp::external::ExternalTools::new(config.mcp_servers.clone());
    let approvals = Approvals::new(
        exec.clone(),
        pki.clone(),
        config.approval_timeout_s,
        cluster.id(),
        external.clone(),
    );
    approvals.recover().await?;
    let lost_runs = approvals.clone();
    let provider = match &config.llm {
        Some(llm) => {
            let provider = crate::llm::build(llm).map_err(|e| Error::Config(e.to_string()))?;
            info!(
                provider = provider.name(),
                model = provider.model(),
                "model configured"
            );
            Some(provider)
        }
        None => {
            info!(
                "no model configured: chat answers MODEL_NOT_CONFIGURED; direct mode (/read, /query, …) works"
            );
            None
        }
    };
    let assistant = Assistant::new(
        provider,
        exec.clone(),
        approvals.clone(),
        config.control_level,
        config.session_token_budget,
        external.clone(),
    );
    let cancels = assistant.clone();
    let state_approvals = approvals.clone();
    let notifier = crate::notify::Notifier::new(
        store.clone(),
        config.watch.channels.clone(),
        metrics.clone(),
    );
    let findings = crate::findings::Findings::new(
        store.clone(),
        agents.clone(),
        notifier.clone(),
        metrics.clone(),
        config.watch.investigate.clone(),
    );
    let investigator = crate::findings::investigate::Investigator::new(
        assistant.clone(),
        findings.clone(),
        config.watch.budget,
    );
    findings.set_investigator(investigator.clone());
    let web_base = config
        .public_url
        .as_ref()
        .map(|url| url.as_str().trim_end_matches('/').to_owned())
        .unwrap_or_else(|| format!("http://{http_addr}"));
    state_approvals.set_notifier(notifier.clone(), web_base);
    let patrol =
        crate::patrol::Patrol::new(exec.clone(), findings.clone(), config.watch.patrol.clone());
    let state = ApiState {
        agents: agents.clone(),
        exec,
        approvals,
        assistant,
        audit: AuditLog::new(agents.store().clone()),
        access: Access::new(agents.store().clone()),
        control_level: config.control_level,
        rate: api::rate::RateLimits::new(config.rate, metrics.clone()),
        metrics,
        cluster: cluster.clone(),
        mcp: config.mcp.clone(),
        findings,
        investigator: investigator.clone(),
    };
    let grpc_chat = api::grpc_chat::routes(state.assistant.clone(), state.access.clone()).await;
    let router = api::router(
        state,
        ApiOptions {
            raw_exec: config.raw_exec,
        },
    )
    .merge(grpc_chat);

    let shutdown = CancellationToken::new();
    let mut tasks = JoinSet::new();
    external.start(&shutdown);
    tasks.spawn(gateway.serve(grpc_listener, shutdown.clone()));
    tasks.spawn(cluster.clone().keep_lease(shutdown.clone()));
    let (decided, cancelled) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let agents_changed = Arc::new(Notify::new());
    agents.store().wake_on(
        vec![
            (crate::store::notify::APPROVALS, decided.clone()),
            (crate::store::notify::CANCELS, cancelled.clone()),
            (crate::store::notify::AGENTS, agents_changed.clone()),
        ],
        shutdown.clone(),
    );
    if cluster.forwarder().is_some() {
        tasks.spawn(
            cluster
                .clone()
                .watch_agents(agents_changed, shutdown.clone()),
        );
    }
    tasks.spawn(lost_runs.watch(decided, shutdown.clone()));
    tasks.spawn(cancels.watch_cancels(cancelled, shutdown.clone()));
    tasks.spawn(patrol.run(shutdown.clone()));
    tasks.spawn(notifier.deliver(shutdown.clone()));
    tasks.spawn(investigator.retry_waiting(shutdown.clone()));
    if let Some((listener, tls)) = replica.link {
        let link = crate::gateway::cluster_link::ClusterLinkService::new(dispatcher);
        tasks.spawn(link.serve(listener, tls, shutdown.clone()));
    }
    tasks.spawn(agents.clone().persist(shutdown.clone()));
    let install = Arc::new(InstallSite::new(
        config,
        http_addr,
        grpc_addr,
        pki.ca.fingerprint(),
        http_cert.as_ref().map(|cert| cert.pin.clone()),
    ));
    let router = router.layer(axum::Extension(install.clone()));
    tasks.spawn(crate::http_tls::serve(
        http_listener,
        router,
        http_cert,
        shutdown.clone(),
    ));
    let local_agent = if config.local_agent {
        let agent = crate::local_agent::enroll(
            &config.data_dir,
            agents.store(),
            &crate::local_agent::gateway_url(grpc_addr),
            &pki.ca.fingerprint(),
        )
        .await?;
        let id = agent.id.clone();
        tasks.spawn(agent.supervise(shutdown.clone()));
        Some(id)
    } else {
        None
    };
    if config.raw_exec {
        warn!(
            "POST /api/raw-exec is enabled: commands reach agents without classification (tests only)"
        );
    }
    let ca_fingerprint = pki.ca.fingerprint();
    info!(http = %http_addr, grpc = %grpc_addr, ca = %ca_fingerprint, "vigil-controller serving");
    Ok(RunningController {
        http_addr,
        grpc_addr,
        ca_fingerprint,
        agents,
        install,
        local_agent,
        cluster,
        shutdown,
        tasks,
        _hidden: hidden,
        _serving: serving,
    })
}

impl RunningController {
    /// Hands this replica's work to the others before it stops: `/readyz` answers 503 and
    /// new agent streams and new commands are refused here (commands for its agents wait
    /// for them elsewhere); after [`DRAIN_NOTICE`], each agent is sent to another replica
    /// as soon as its commands have ended (at most [`DRAIN_GRACE`]).
    pub async fn drain(&self) {
        self.cluster.start_draining();
        let held = self.agents.sessions().all().len();
        info!(
            agents = held,
            "draining: handing the agents to the other replicas"
        );
        if let Err(error) = self.cluster.renew().await {
            warn!(%error, "could not record that this replica is draining");
        }
        tokio::time::sleep(DRAIN_NOTICE).await;
        let goodbye = Goodbye {
            reason: "this controller replica is stopping; connect to another".into(),
            retry: true,
        };
        let deadline = tokio::time::Instant::now() + DRAIN_GRACE;
        loop {
            let live = self.agents.sessions().all();
            if live.is_empty() {
                break;
            }
            let late = tokio::time::Instant::now() >= deadline;
            for session in live {
                if late || session.pending_count() == 0 {
                    session.close(Some(goodbye.clone()));
                }
            }
            if late {
                warn!("agents still had commands running at the end of the drain");
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        info!("drained");
    }

    /// Waits until a server stops by itself (an error; normally they run until shutdown).
    pub async fn wait(&mut self) -> Result<()> {
        match self.tasks.join_next().await {
            Some(Ok(result)) => result,
            Some(Err(join)) => Err(Error::Network(format!("a server task failed: {join}"))),
            None => Ok(()),
        }
    }

    /// A replica among others drains first ([`RunningController::drain`]). Then it says
    /// goodbye to every agent (they reconnect later), stops accepting, drains connections
    /// for a few seconds and closes the database.
    pub async fn shutdown(mut self) -> Result<()> {
        if self.cluster.forwarder().is_some() {
            self.drain().await;
        }
        self.agents.sessions().close_all(&Goodbye {
            reason: "controller shutting down".into(),
            retry: true,
        });
        self.shutdown.cancel();
        let drained = tokio::time::timeout(SHUTDOWN_GRACE, async {
            let mut first_error = Ok(());
            while let Some(joined) = self.tasks.join_next().await {
                if let Ok(Err(error)) = joined
                    && first_error.is_ok()
                {
                    first_error = Err(error);
                }
            }
            first_error
        })
        .await;
        let result = match drained {
            Ok(result) => result,
            Err(_) => {
                warn!("connections did not drain in time; closing them");
                self.tasks.abort_all();
                Ok(())
            }
        };
        if let Err(error) = self.agents.flush().await {
            warn!(%error, "could not write the last agent records");
        }
        self.agents.store().close().await;
        info!("vigil-controller stopped");
        result
    }
}
