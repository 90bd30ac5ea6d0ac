//! The built `vigil-controller` binary's state and client subcommands: `token`, `ca show`
//! on a data directory; `agents` and `exec` against a controller with a scripted agent
//! (output streamed to stdout/stderr, the command's exit code, refusals exit 2); `ready`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Output;

use tokio::process::Command;
use vigil_tests::in_process::fake_agent::setup;

/// The built controller binary.
fn controller_bin() -> std::path::PathBuf {
    vigil_tests::bin("vigil-controller")
}

async fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(controller_bin());
    command
        .args(args)
        .env_remove("VIGIL_TOKEN")
        .env_remove("VIGIL_URL")
        .env_remove("VIGIL_DATA_DIR");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().await.unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn dir_arg(dir: &Path) -> String {
    dir.to_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn token_and_ca_work_on_the_data_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = dir_arg(&tmp.path().join("data"));

    let out = run(
        &[
            "token",
            "create",
            "--uses",
            "2",
            "--ttl",
            "30m",
            "--label",
            "site=home",
            "--data-dir",
            &dir,
        ],
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let token = stdout.lines().last().unwrap();
    assert!(token.starts_with("vjt_") && token.len() == 36, "{stdout:?}");
    assert!(text(&out.stderr).contains("2 use(s)"));

    let out = run(&["ca", "show", "--data-dir", &dir], &[]).await;
    let fingerprint = text(&out.stdout);
    assert!(
        fingerprint.trim().starts_with("sha256:") && fingerprint.trim().len() == 71,
        "{fingerprint}"
    );
    let again = run(&["ca", "show"], &[("VIGIL_DATA_DIR", &dir)]).await;
    assert_eq!(text(&again.stdout), fingerprint, "the CA is created once");

    let out = run(
        &["token", "create", "--ttl", "25h", "--data-dir", &dir],
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("24h maximum"),
        "{}",
        text(&out.stderr)
    );
    assert!(out.stdout.is_empty());

    let out = run(&["token", "list", "--json", "--data-dir", &dir], &[]).await;
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = listed[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(
        (listed[0]["uses_left"].clone(), listed[0]["state"].clone()),
        (2.into(), "active".into())
    );
    assert_eq!(listed[0]["labels"]["site"], "home");

    let out = run(&["token", "revoke", &id, "--data-dir", &dir], &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = run(&["token", "list", "--data-dir", &dir], &[]).await;
    assert!(
        text(&out.stdout).contains("revoked"),
        "{}",
        text(&out.stdout)
    );
    let out = run(&["token", "revoke", "ffffffff", "--data-dir", &dir], &[]).await;
    assert_eq!(out.status.code(), Some(2));
}

#[tokio::test(flavor = "multi_thread")]
async fn exec_streams_output_and_exits_with_the_commands_code() {
    let (ctrl, agent, _cancels) = setup(false).await;
    let url = ctrl.http_url();
    let data_dir = dir_arg(&ctrl.dir.path().join("data"));
    let exec = |command: &'static str| {
        let (url, data_dir, id) = (url.clone(), data_dir.clone(), agent.id.clone());
        async move {
            run(
                &[
                    "exec",
                    "--url",
                    &url,
                    "--data-dir",
                    &data_dir,
                    "--agent",
                    &id,
                    "--",
                    "echo",
                    command,
                ],
                &[],
            )
            .await
        }
    };

    let out = exec("fine").await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "hello\n");
    assert!(text(&out.stderr).contains("warn"));
    assert_eq!(exec("exit3").await.status.code(), Some(3));
    assert_eq!(exec("killed").await.status.code(), Some(137));

    let out = run(
        &[
            "exec",
            "--url",
            &url,
            "--agent",
            &agent.id,
            "--",
            "journalctl",
            "-f",
        ],
        &[("VIGIL_TOKEN", &ctrl.admin_token)],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("UNBOUNDED_COMMAND") && stderr.contains("try instead: journalctl -n 200"),
        "{stderr}"
    );
    let out = run(
        &[
            "exec", "--url", &url, "--agent", &agent.id, "--", "rm", "-rf", "/tmp/x",
        ],
        &[("VIGIL_TOKEN", &ctrl.admin_token)],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("reason: rm"),
        "{}",
        text(&out.stderr)
    );

    let out = run(
        &["agents", "--json", "--url", &url, "--data-dir", &data_dir],
        &[],
    )
    .await;
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed[0]["id"], agent.id.as_str());
    assert_eq!(listed[0]["connected"], true);
    let out = run(
        &["agents", "list", "--url", &url, "--data-dir", &data_dir],
        &[],
    )
    .await;
    let listed = text(&out.stdout);
    assert!(listed.starts_with("HOSTNAME"), "{listed}");
    assert!(
        listed
            .lines()
            .nth(1)
            .is_some_and(|l| l.trim_end().ends_with(agent.id.as_str())),
        "{listed}"
    );

    let out = run(
        &[
            "agents",
            "revoke",
            &agent.id,
            "--url",
            &url,
            "--data-dir",
            &data_dir,
        ],
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = run(
        &["agents", "--json", "--url", &url],
        &[("VIGIL_TOKEN", "vat_wrong")],
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "a wrong token is refused");
    ctrl.stop().await;
}

/// `ready` (the container image's health check): exit 0 while the controller answers
/// `/readyz`, 1 with the reason when nothing listens, and nothing printed with --quiet.
#[tokio::test(flavor = "multi_thread")]
async fn ready_exits_by_the_controllers_readiness() {
    let ctrl =
        vigil_tests::in_process::TestController::start(false, std::time::Duration::from_secs(10))
            .await;
    let out = run(&["ready", "--url", &ctrl.http_url()], &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("ready"), "{}", text(&out.stdout));

    let closed = format!("http://127.0.0.1:{}", vigil_tests::free_port());
    let out = run(&["ready", "--url", &closed], &[]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("not ready"),
        "{}",
        text(&out.stderr)
    );

    let out = run(&["ready", "--quiet"], &[("VIGIL_URL", &closed)]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
}

/// A second `serve` on a data directory a controller is serving from (the same SQLite
/// database, keys and admin token) refuses to start, naming the holder; once that one is
/// gone, even killed, the directory serves again.
#[tokio::test(flavor = "multi_thread")]
async fn a_second_controller_on_one_data_directory_is_refused() {
    let mut first = vigil_tests::Controller::start(vigil_tests::ControllerOptions::default()).await;
    let dir = dir_arg(first.data_dir());
    let serve = |http: &str| {
        let mut command = Command::new(controller_bin());
        command
            .args(["serve", "--data-dir", &dir, "--http-listen", http])
            .arg("--grpc-listen")
            .arg(format!("127.0.0.1:{}", vigil_tests::free_port()))
            .env_remove("VIGIL_DATA_DIR")
            .kill_on_drop(true);
        command
    };
    let http = format!("127.0.0.1:{}", vigil_tests::free_port());
    let out = tokio::time::timeout(std::time::Duration::from_secs(20), serve(&http).output())
        .await
        .expect("the second controller must refuse at once, not serve")
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("another controller is serving"), "{stderr}");
    let pid = first.pid().unwrap();
    assert!(
        stderr.contains(&pid.to_string()),
        "the holder is named: {stderr}"
    );
    assert!(first.alive(), "the first controller is untouched");

    // Killed, the first releases the directory: a new controller serves from it.
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    first.stop();
    let _second = serve(&http).spawn().unwrap();
    let url = format!("http://{http}");
    let ready = vigil_tests::wait_until(std::time::Duration::from_secs(20), || async {
        run(&["ready", "--quiet", "--url", &url], &[])
            .await
            .status
            .success()
    })
    .await;
    assert!(
        ready,
        "the directory did not serve again after its holder was killed"
    );
}

/// `secrets init` makes the shared identity once; `serve --secrets-dir` serves with it (the
/// gateway's chain is that CA: an agent pinning it enrolls; `ca show` and `token create`
/// name it); and the database then belongs to that identity: the same data directory
/// started with other keys is refused, naming both.
#[tokio::test(flavor = "multi_thread")]
async fn a_controller_serves_with_shared_secrets_and_its_database_keeps_their_identity() {
    let tmp = tempfile::tempdir().unwrap();
    let secrets = dir_arg(&tmp.path().join("secrets"));
    let out = run(&["secrets", "init", "--dir", &secrets], &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let fingerprint = stdout
        .lines()
        .find_map(|l| l.strip_prefix("CA fingerprint: "))
        .expect("the fingerprint is printed")
        .to_owned();
    let again = run(&["secrets", "init", "--dir", &secrets], &[]).await;
    assert_eq!(again.status.code(), Some(2), "made twice");
    assert!(
        text(&again.stderr).contains("already holds"),
        "{}",
        text(&again.stderr)
    );

    let mut ctrl = vigil_tests::Controller::start(vigil_tests::ControllerOptions {
        extra_args: vec!["--secrets-dir".into(), secrets.clone()],
        ..Default::default()
    })
    .await;
    let data = dir_arg(ctrl.data_dir());
    assert!(!ctrl.data_dir().join("ca.key").exists(), "no CA of its own");
    let shown = run(
        &["ca", "show", "--data-dir", &data, "--secrets-dir", &secrets],
        &[],
    )
    .await;
    assert_eq!(text(&shown.stdout).trim(), fingerprint);
    let env = [("VIGIL_SECRETS_DIR", secrets.as_str())];
    let created = run(&["token", "create", "--data-dir", &data], &env).await;
    assert_eq!(created.status.code(), Some(0), "{}", text(&created.stderr));
    assert!(
        text(&created.stderr).contains(&fingerprint),
        "{}",
        text(&created.stderr)
    );
    let token = text(&created.stdout)
        .lines()
        .last()
        .unwrap()
        .trim()
        .to_owned();
    let state = tmp.path().join("agent");
    let joined = Command::new(vigil_tests::bin("vigil-agent"))
        .args(["join", "--url", &ctrl.gateway_url(), "--token", &token])
        .args(["--ca-fingerprint", &fingerprint])
        .arg("--state-dir")
        .arg(&state)
        .output()
        .await
        .unwrap();
    assert!(joined.status.success(), "{}", text(&joined.stderr));

    // The same data directory (and database) with keys of its own: refused.
    ctrl.stop();
    let http = format!("127.0.0.1:{}", vigil_tests::free_port());
    let grpc = format!("127.0.0.1:{}", vigil_tests::free_port());
    let refused = run(
        &[
            "serve",
            "--data-dir",
            &data,
            "--http-listen",
            &http,
            "--grpc-listen",
            &grpc,
        ],
        &[],
    )
    .await;
    let stderr = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("this database belongs to a controller"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&fingerprint),
        "the recorded CA is named: {stderr}"
    );
}
