//! End-to-end with a Proxmox VE node made of fixtures: the agent process has
//! `tests/fixtures/proxmox/bin` (`pvesh`, `pct`, `qm`, answering with PVE 8 shaped output)
//! first on its `PATH`. Asserts the controller's resource graph and routing chains, the
//! exact argv of `pct exec` / `qm guest exec` (quoting included), and that an agent inside
//! a guest is preferred over the node's `pct exec`, with AGENT_OFFLINE when no agent on
//! the chain is connected.

#![allow(clippy::expect_used, clippy::unwrap_used)] // helpers outside #[test] functions

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tempfile::TempDir;
use vigil_tests::{Agent, AgentOptions, Controller, ControllerOptions, wait_until};

const CONNECT: Duration = Duration::from_secs(30);
const SETTLE: Duration = Duration::from_secs(30);
const PROXMOX_ONLY: &str =
    "[discovery]\nproxmox = \"on\"\ndocker = \"off\"\nkubernetes = \"off\"\n";
const HOST_ONLY: &str = "[discovery]\nproxmox = \"off\"\ndocker = \"off\"\nkubernetes = \"off\"\n";

/// A private copy of the fixtures whose invocations are logged to `bin/pve.log`.
struct Fixture {
    dir: TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/proxmox");
        let dir = tempfile::Builder::new()
            .prefix("vigil-pve-")
            .tempdir()
            .expect("tempdir");
        let status = std::process::Command::new("cp")
            .arg("-a")
            .arg(format!("{}/.", src.display()))
            .arg(dir.path())
            .status()
            .expect("cp");
        assert!(status.success());
        std::fs::write(dir.path().join("bin/pve.log"), "").expect("log");
        Fixture { dir }
    }

    fn bin(&self) -> PathBuf {
        self.dir.path().join("bin")
    }

    /// Every logged invocation: the tool's name, then its arguments.
    fn invocations(&self) -> Vec<Vec<String>> {
        std::fs::read_to_string(self.bin().join("pve.log"))
            .expect("log")
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("log line {l:?}: {e}")))
            .collect()
    }

    /// Invocations that ran a command: `pct exec` (other than the discovery's `docker ps`
    /// and the backend's `docker container inspect` check) and `qm guest exec`.
    fn execs(&self) -> Vec<Vec<String>> {
        fn arg(a: &[String], i: usize) -> &str {
            a.get(i).map(String::as_str).unwrap_or_default()
        }
        self.invocations()
            .into_iter()
            .filter(|a| match (arg(a, 0), arg(a, 1)) {
                ("pct", "exec") => {
                    !(arg(a, 4) == "docker" && ["ps", "container"].contains(&arg(a, 5)))
                }
                ("qm", "guest") => true,
                _ => false,
            })
            .collect()
    }

    fn options(&self, config: &str, token_args: &[&str]) -> AgentOptions {
        let path = format!(
            "{}:{}",
            self.bin().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        AgentOptions {
            config: Some(config.into()),
            env: vec![("PATH".into(), path)],
            token_args: token_args.iter().map(|s| (*s).to_owned()).collect(),
            ..Default::default()
        }
    }
}

async fn connected(ctrl: &Controller, agent: &Agent) {
    let id = agent.state.id.clone();
    assert!(
        wait_until(CONNECT, || ctrl.api.connected(&id)).await,
        "agent never connected\n{}\n{}",
        ctrl.log(),
        agent.log()
    );
}

async fn wait_for(ctrl: &Controller, id: &str, agent: &Agent) -> Value {
    let ok = wait_until(SETTLE, || {
        let api = &ctrl.api;
        let id = id.to_owned();
        async move { api.resource(&id).await.is_some() }
    })
    .await;
    assert!(ok, "{id} never appeared\nagent:\n{}", agent.log());
    ctrl.api.resource(id).await.expect("resource")
}

fn chain(resource: &Value) -> Vec<(String, String, String)> {
    resource["chain"]
        .as_array()
        .expect("chain")
        .iter()
        .map(|p| {
            (
                p["agent"].as_str().unwrap_or_default().to_owned(),
                p["target"].as_str().unwrap_or_default().to_owned(),
                p["via"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn local_hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .expect("hostname")
        .trim()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_proxmox_node_reports_its_guests_and_runs_commands_inside_them() {
    let fixture = Fixture::new();
    let ctrl = Controller::start(ControllerOptions::default()).await;
    let node = Agent::join(&ctrl, fixture.options(PROXMOX_ONLY, &[])).await;
    connected(&ctrl, &node).await;
    let n = node.state.id.clone();

    // The graph: node → LXC/VM → Docker containers inside LXC 141.
    let delly = wait_for(&ctrl, "node:delly", &node).await;
    let children: Vec<&str> = delly["children"]
        .as_array()
        .expect("children")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for child in [
        "lxc:delly:141",
        "lxc:delly:142",
        "vm:delly:203",
        "vm:delly:204",
    ] {
        assert!(children.contains(&child), "{child} in {children:?}");
    }
    assert_eq!(chain(&delly), [(n.clone(), "host".into(), "direct".into())]);
    let media = wait_for(&ctrl, "lxc:delly:141", &node).await;
    assert_eq!(media["name"], "media");
    assert_eq!(media["status"], "running");
    assert_eq!(media["parent"], "node:delly");
    assert_eq!(
        chain(&media),
        [(n.clone(), "lxc:141".into(), "pct_exec".into())]
    );
    assert!(
        media["facts"]["mounts"]
            .as_array()
            .expect("mounts")
            .contains(&json!({"host_path": "/tank/media", "path": "/media", "read_only": true})),
        "{media}"
    );
    assert!(
        media["facts"]["macs"]
            .as_array()
            .expect("macs")
            .contains(&json!("bc:24:11:5e:7d:2a"))
    );
    let jellyfin = wait_for(&ctrl, "docker_container:media:689b21f1c3ca", &node).await;
    assert_eq!(jellyfin["name"], "media-jellyfin-1");
    assert_eq!(jellyfin["parent"], "lxc:delly:141");
    assert_eq!(
        chain(&jellyfin),
        [(
            n.clone(),
            "lxc:141/docker:689b21f1c3ca".into(),
            "pct_exec".into()
        )]
    );
    let haos = wait_for(&ctrl, "vm:delly:203", &node).await;
    assert_eq!(
        chain(&haos),
        [(n.clone(), "vm:203".into(), "qm_guest_exec".into())]
    );
    let no_agent = wait_for(&ctrl, "vm:delly:204", &node).await;
    assert!(chain(&no_agent).is_empty(), "{no_agent}");

    // A second agent that also says it is node delly is not believed while the first is
    // connected: its report arrives, but the chains keep only the first agent's paths.
    let impostor = Agent::join(&ctrl, fixture.options(PROXMOX_ONLY, &[])).await;
    connected(&ctrl, &impostor).await;
    let reported = wait_until(SETTLE, || {
        let api = &ctrl.api;
        let path = format!("/api/agents/{}", impostor.state.id);
        async move { api.get(&path).await.1["inventory"]["resources"].as_u64() >= Some(1) }
    })
    .await;
    assert!(
        reported,
        "the second agent never reported\n{}",
        impostor.log()
    );
    for id in [
        "node:delly",
        "lxc:delly:141",
        "docker_container:media:689b21f1c3ca",
    ] {
        let resource = ctrl.api.resource(id).await.expect(id);
        let agents: Vec<&str> = resource["chain"]
            .as_array()
            .expect("chain")
            .iter()
            .filter_map(|p| p["agent"].as_str())
            .collect();
        assert_eq!(agents, [n.as_str()], "{id}: {resource}");
    }
    drop(impostor);

    // Search finds the container by a hyphen part of its name.
    let hits = ctrl.api.resources("jellyfin").await;
    assert_eq!(
        hits[0]["id"], "docker_container:media:689b21f1c3ca",
        "{hits:?}"
    );

    // Commands reach the guests with exactly the payload as one argument.
    let tricky = r#"echo "a \"b\"" 'it'"'"'s' $HOME"#;
    let before = fixture.execs().len();
    let out = ctrl
        .api
        .exec_resource_json("lxc:delly:141", tricky)
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", node.log()));
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    // `$HOME` is unset in the fixed environment, so the unquoted expansion vanishes.
    assert_eq!(out.stdout, "a \"b\" it's\n", "{out:?}");
    let out = ctrl
        .api
        .exec_resource_json("vm:delly:203", "cat /etc/hostname; echo err >&2; exit 4")
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", node.log()));
    assert_eq!(
        (out.stdout.trim(), out.stderr.as_str(), out.exit_code),
        (local_hostname().as_str(), "err\n", Some(4))
    );
    let out = ctrl
        .api
        .exec_resource_json("docker_container:media:689b21f1c3ca", "echo in-container")
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", node.log()));
    assert_eq!(out.stdout, "in-container\n");
    let execs = fixture.execs();
    assert_eq!(
        execs[before..],
        [
            vec!["pct", "exec", "141", "--", "sh", "-c", tricky],
            vec![
                "qm",
                "guest",
                "exec",
                "203",
                "--timeout",
                "30",
                "--",
                "sh",
                "-c",
                "cat /etc/hostname; echo err >&2; exit 4",
            ],
            vec![
                "pct",
                "exec",
                "141",
                "--",
                "docker",
                "exec",
                "689b21f1c3ca",
                "sh",
                "-c",
                "echo in-container",
            ],
        ]
        .map(|v| v.into_iter().map(str::to_owned).collect::<Vec<_>>()),
    );

    // Refusals: no path, a stopped guest, a write.
    let (status, code, _) = ctrl
        .api
        .exec_resource_refused("vm:delly:204", "uptime")
        .await;
    assert_eq!((status, code.as_str()), (404, "NOT_FOUND"));
    let (status, code, body) = ctrl
        .api
        .exec_resource_refused("lxc:delly:142", "uptime")
        .await;
    assert_eq!((status, code.as_str()), (404, "NOT_FOUND"), "{body}");
    let (status, code, _) = ctrl
        .api
        .exec_resource_refused("lxc:delly:141", "rm -rf /media")
        .await;
    assert_eq!((status, code.as_str()), (403, "POLICY_BLOCKED"));
    assert_eq!(fixture.execs().len(), before + 3, "nothing else ran");

    // The same through the CLI: search, one resource's chain, and exec by resource id.
    let url = format!("http://127.0.0.1:{}", ctrl.http_port);
    let (code, out, err) = ctrl.cli(&["resources", "--url", &url, "jellyfin"]);
    assert_eq!(code, 0, "{err}");
    let first = out.lines().nth(1).unwrap_or_default();
    assert!(
        first.starts_with("docker_container:media:689b21f1c3ca")
            && first.contains("media-jellyfin-1"),
        "{out}"
    );
    let (code, out, err) = ctrl.cli(&["resources", "--url", &url, "--id", "lxc:delly:141"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("routing chain") && out.contains("pct_exec  lxc:141"),
        "{out}"
    );
    // (`exec` takes everything after `--` as the command, so the token comes from the
    // environment rather than a trailing --data-dir.)
    let token = std::fs::read_to_string(ctrl.data_dir().join("admin.token")).expect("token");
    let out = std::process::Command::new(vigil_tests::bin("vigil-controller"))
        .args([
            "exec",
            "--url",
            &url,
            "--target",
            "lxc:delly:141",
            "--",
            "echo",
            "from-cli",
        ])
        .env("VIGIL_TOKEN", token.trim())
        .output()
        .expect("vigil-controller exec");
    let (code, out, err) = (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert_eq!((code, out.as_str()), (0, "from-cli\n"), "{err}");
    assert_eq!(fixture.execs().len(), before + 4);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_agent_inside_a_guest_is_preferred_over_the_nodes_pct_exec() {
    let fixture = Fixture::new();
    let ctrl = Controller::start(ControllerOptions::default()).await;
    let mut node = Agent::join(&ctrl, fixture.options(PROXMOX_ONLY, &[])).await;
    connected(&ctrl, &node).await;
    let mut inside = Agent::join(
        &ctrl,
        fixture.options(HOST_ONLY, &["--label", "vigil.guest=lxc:delly:141"]),
    )
    .await;
    connected(&ctrl, &inside).await;
    let (n, i) = (node.state.id.clone(), inside.state.id.clone());

    let linked = wait_until(SETTLE, || {
        let api = &ctrl.api;
        let i = i.clone();
        async move {
            api.resource("lxc:delly:141")
                .await
                .is_some_and(|r| r["chain"][0]["agent"] == i.as_str())
        }
    })
    .await;
    assert!(
        linked,
        "the inside agent never led the chain\n{}",
        inside.log()
    );
    let media = ctrl.api.resource("lxc:delly:141").await.expect("lxc");
    assert_eq!(
        chain(&media),
        [
            (i.clone(), "host".into(), "direct".into()),
            (n.clone(), "lxc:141".into(), "pct_exec".into()),
        ]
    );

    // Routed to the agent inside: the node's pct is not invoked.
    let before = fixture.execs().len();
    let out = ctrl
        .api
        .exec_resource_json("lxc:delly:141", "echo routed")
        .await
        .expect("exec");
    assert_eq!(out.stdout, "routed\n");
    assert_eq!(fixture.execs().len(), before, "went through pct exec");

    // The inside agent stops: the chain falls back to the node's pct exec.
    inside.stop();
    let gone = wait_until(CONNECT, || async { !ctrl.api.connected(&i).await }).await;
    assert!(gone);
    let out = ctrl
        .api
        .exec_resource_json("lxc:delly:141", "echo fallback")
        .await
        .expect("exec through the node");
    assert_eq!(out.stdout, "fallback\n");
    let execs = fixture.execs();
    assert_eq!(execs.len(), before + 1);
    assert_eq!(execs[before][..4], ["pct", "exec", "141", "--"]);

    // Nobody on the chain is connected: AGENT_OFFLINE naming both agents.
    node.stop();
    let gone = wait_until(CONNECT, || async { !ctrl.api.connected(&n).await }).await;
    assert!(gone);
    let (status, code, body) = ctrl
        .api
        .exec_resource_refused("lxc:delly:141", "uptime")
        .await;
    assert_eq!((status, code.as_str()), (503, "AGENT_OFFLINE"), "{body}");
    assert_eq!(body["error"]["details"]["agents"], json!([i, n]));
}
