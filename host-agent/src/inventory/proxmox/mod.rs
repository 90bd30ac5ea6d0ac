//! Proxmox VE discovery (docs/inventory.md): the node this agent runs on, its LXCs and VMs,
//! and the Docker containers inside running LXCs with nesting, read with `pvesh`, `pct`
//! and `qm` (found on the agent's `PATH` once, then always called by absolute path).
//!
//! There is no cheap event feed, so there is no watch: the periodic rescan covers changes.
//! Parsing is in [`parse`], turning what was read into resources in [`build`]; this module
//! runs the tools (every call bounded in time and output, at most [`CONCURRENCY`] at once).

mod boot_clock;
mod build;

use crate::exec::ExecError;
use crate::exec::proxmox::{ProxmoxTools, parse};
use crate::inventory::{BoxFuture, Scan, ScanError, Source, SourceCtx};
use boot_clock::BootClock;
use build::GuestKind;
use parse::{DockerEntry, GuestConfig, GuestEntry, NodeEntry};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::{debug, warn};
use vigil_shared::resource::Resource;

/// Tool calls one scan runs at the same time.
pub const CONCURRENCY: usize = 4;

/// A guest as listed, with its config when `pct config`/`qm config` answered.
type Guest = (GuestEntry, Option<GuestConfig>);

/// What one scan read from the tools.
#[derive(Debug)]
struct Found {
    node: NodeEntry,
    lxcs: Vec<Guest>,
    vms: Vec<Guest>,
    /// Containers listed in the LXC at that index of `lxcs`.
    docker: Vec<(usize, Vec<DockerEntry>)>,
}

/// The `proxmox` discovery source.
#[derive(Debug)]
pub struct ProxmoxSource {
    tools: Arc<ProxmoxTools>,
    /// Boot times (Unix seconds) reported by the previous scan, by resource id, so that
    /// guests that did not restart report exactly the same value.
    boot_times: Mutex<BTreeMap<String, u64>>,
}

impl ProxmoxSource {
    pub fn new(tools: Arc<ProxmoxTools>) -> Self {
        ProxmoxSource {
            tools,
            boot_times: Mutex::new(BTreeMap::new()),
        }
    }

    async fn scan_now(&self, ctx: &SourceCtx) -> Result<Scan, ScanError> {
        let found = self.read(&ctx.hostname).await?;
        let mut resources = self.resources(ctx, found);
        resources.sort_by(|a, b| a.id.cmp(&b.id));
        resources.dedup_by(|later, first| {
            let same = later.id == first.id;
            if same {
                warn!(id = %later.id, "two resources with the same id: keeping the first");
            }
            same
        });
        Ok(Scan {
            resources,
            capped: Vec::new(),
        })
    }

    /// Everything the tools say about the node named like `hostname`.
    async fn read(&self, hostname: &str) -> Result<Found, ScanError> {
        let nodes = parse::nodes(&self.pvesh("/nodes").await?)?;
        let node = build::pick_node(&nodes, hostname)?.clone();
        let lxc_path = format!("/nodes/{}/lxc", node.name);
        let qemu_path = format!("/nodes/{}/qemu", node.name);
        let (lxc, qemu) = tokio::join!(self.pvesh(&lxc_path), self.pvesh(&qemu_path));
        let lxcs = parse::guests(&lxc?, &lxc_path)?;
        let vms = parse::guests(&qemu?, &qemu_path)?;

        let mut jobs = Vec::with_capacity(lxcs.len() + vms.len());
        jobs.extend(lxcs.iter().map(|g| self.config_job(GuestKind::Lxc, g.vmid)));
        jobs.extend(vms.iter().map(|g| self.config_job(GuestKind::Vm, g.vmid)));
        let mut configs = bounded(jobs).await.into_iter().map(Option::flatten);
        let lxcs: Vec<Guest> = lxcs.into_iter().zip(configs.by_ref()).collect();
        let vms: Vec<Guest> = vms.into_iter().zip(configs).collect();

        let with_docker: Vec<(usize, u32)> = lxcs
            .iter()
            .enumerate()
            .filter(|(_, (g, c))| g.status == "running" && c.as_ref().is_some_and(|c| c.nesting))
            .map(|(i, (g, _))| (i, g.vmid))
            .collect();
        let docker_jobs = with_docker
            .iter()
            .map(|(_, vmid)| self.docker_job(*vmid))
            .collect();
        let docker = with_docker
            .into_iter()
            .zip(bounded(docker_jobs).await)
            .map(|((i, _), containers)| (i, containers.unwrap_or_default()))
            .collect();
        Ok(Found {
            node,
            lxcs,
            vms,
            docker,
        })
    }

    /// The resources for what was read, with boot times kept from the previous scan.
    fn resources(&self, ctx: &SourceCtx, found: Found) -> Vec<Resource> {
        let Found {
            node,
            lxcs,
            vms,
            docker,
        } = found;
        let mut clock = BootClock::new(&self.boot_times);
        let node_boot = clock.boot_time(format!("node:{}", node.name), node.uptime);
        let mut resources = vec![build::node_resource(ctx, &node, node_boot)];
        for (kind, guests) in [(GuestKind::Lxc, &lxcs), (GuestKind::Vm, &vms)] {
            for (guest, config) in guests {
                let uptime = guest.uptime.filter(|_| guest.status == "running");
                let boot = clock.boot_time(format!("{kind:?}:{}", guest.vmid), uptime);
                let config = config.as_ref();
                resources.push(build::guest_resource(
                    ctx, &node.name, kind, guest, config, boot,
                ));
            }
        }
        clock.commit(&self.boot_times);
        for (i, containers) in docker {
            let Some((guest, config)) = lxcs.get(i) else {
                continue;
            };
            let host = build::docker_host(guest, config.as_ref());
            resources.extend(containers.iter().map(|container| {
                build::docker_resource(ctx, &node.name, guest.vmid, &host, container)
            }));
        }
        resources
    }

    async fn pvesh(&self, path: &str) -> Result<Vec<u8>, ExecError> {
        ProxmoxTools::call(
            &self.tools.pvesh,
            &["get", path, "--output-format", "json"],
            CancellationToken::new(),
        )
        .await
        .and_then(|c| c.success(&format!("pvesh get {path}")))
    }

    /// `pct config <vmid>` / `qm config <vmid>`; `None` (logged) when it fails.
    fn config_job(&self, kind: GuestKind, vmid: u32) -> BoxFuture<'static, Option<GuestConfig>> {
        let tools = Arc::clone(&self.tools);
        Box::pin(async move {
            let (program, tool): (&Path, &str) = match kind {
                GuestKind::Lxc => (&tools.pct, "pct"),
                GuestKind::Vm => (&tools.qm, "qm"),
            };
            let vmid = vmid.to_string();
            let what = format!("{tool} config {vmid}");
            let result = ProxmoxTools::call(program, &["config", &vmid], CancellationToken::new())
                .await
                .and_then(|c| c.success(&what));
            match result {
                Ok(out) => Some(parse::config(&String::from_utf8_lossy(&out))),
                Err(error) => {
                    warn!(%error, "could not read a guest's config; reporting it without");
                    None
                }
            }
        })
    }

    /// The Docker containers in a running LXC; none (logged at debug) when that fails.
    fn docker_job(&self, vmid: u32) -> BoxFuture<'static, Vec<DockerEntry>> {
        let tools = Arc::clone(&self.tools);
        Box::pin(async move {
            let vmid = vmid.to_string();
            let args = [
                "exec",
                &vmid,
                "--",
                "docker",
                "ps",
                "--all",
                "--no-trunc",
                "--format",
                "{{json .}}",
            ];
            let result = ProxmoxTools::call(&tools.pct, &args, CancellationToken::new())
                .await
                .and_then(|c| c.success(&format!("pct exec {vmid} -- docker ps")));
            match result {
                Ok(out) => parse::docker_ps(&String::from_utf8_lossy(&out)),
                Err(error) => {
                    debug!(%error, "no Docker containers listed in the LXC");
                    Vec::new()
                }
            }
        })
    }
}

impl Source for ProxmoxSource {
    fn name(&self) -> &'static str {
        "proxmox"
    }

    fn scan<'a>(&'a self, ctx: &'a SourceCtx) -> BoxFuture<'a, Result<Scan, ScanError>> {
        Box::pin(self.scan_now(ctx))
    }
}

/// Run jobs, at most [`CONCURRENCY`] at once; results in the jobs' order (`None` for a job
/// that panicked).
async fn bounded<T: Send + 'static>(jobs: Vec<BoxFuture<'static, T>>) -> Vec<Option<T>> {
    let permits = Arc::new(Semaphore::new(CONCURRENCY));
    let mut set = JoinSet::new();
    let mut results: Vec<Option<T>> = jobs.iter().map(|_| None).collect();
    for (i, job) in jobs.into_iter().enumerate() {
        let permits = Arc::clone(&permits);
        set.spawn(async move {
            let _permit = permits.acquire_owned().await;
            (i, job.await)
        });
    }
    while let Some(done) = set.join_next().await {
        if let Ok((i, value)) = done
            && let Some(slot) = results.get_mut(i)
        {
            *slot = Some(value);
        }
    }
    results
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bounded_keeps_the_order_of_the_jobs() {
        let jobs: Vec<BoxFuture<'static, usize>> = (0..10usize)
            .map(|i| -> BoxFuture<'static, usize> {
                Box::pin(async move {
                    tokio::time::sleep(std::time::Duration::from_millis((10 - i as u64) * 3)).await;
                    i * 2
                })
            })
            .collect();
        let results = bounded(jobs).await;
        assert_eq!(results, (0..10).map(|i| Some(i * 2)).collect::<Vec<_>>());
    }
}
