//! `serve --local-agent` (what `make run` starts): the controller enrolls one agent for
//! this machine, supervises it, runs commands through it and reuses the enrollment.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::time::Duration;

use vigil_tests::{Controller, ControllerOptions, processes_matching, wait_until};

/// The local agent's id; the controller serves HTTP before it has enrolled the agent, so
/// the identity may take a moment to appear.
async fn local_id(ctrl: &Controller) -> String {
    let path = ctrl.data_dir().join("local-agent/identity.json");
    wait_until(Duration::from_secs(30), || {
        let path = path.clone();
        async move { path.exists() }
    })
    .await;
    let text = std::fs::read_to_string(&path).expect("identity.json of the local agent");
    let value: serde_json::Value = serde_json::from_str(&text).expect("json");
    value["agent_id"].as_str().expect("agent_id").to_owned()
}

/// A controller started with `--local-agent`, once its agent is connected.
async fn with_local_agent() -> (Controller, String) {
    let ctrl = Controller::start(ControllerOptions {
        extra_args: vec!["--local-agent".into()],
        ..ControllerOptions::default()
    })
    .await;
    let id = local_id(&ctrl).await;
    let connected = wait_until(Duration::from_secs(30), || ctrl.api.connected(&id)).await;
    assert!(
        connected,
        "the local agent did not connect:\n{}",
        ctrl.log()
    );
    (ctrl, id)
}

#[tokio::test]
async fn the_local_agent_connects_runs_commands_and_is_reused() {
    let (mut ctrl, id) = with_local_agent().await;
    let agents = ctrl.api.agents().await;
    assert_eq!(agents.len(), 1, "{agents:?}");
    let outcome = ctrl.api.exec_json(&id, "uname -s").await.expect("exec");
    assert_eq!(outcome.exit_code, Some(0));
    assert_eq!(outcome.stdout.trim(), "Linux");

    // A restart reuses the enrollment: the same agent, still one.
    ctrl.restart().await;
    assert_eq!(local_id(&ctrl).await, id);
    let connected = wait_until(Duration::from_secs(30), || ctrl.api.connected(&id)).await;
    assert!(
        connected,
        "not reconnected after a restart:\n{}",
        ctrl.log()
    );
    assert_eq!(ctrl.api.agents().await.len(), 1);
    assert!(ctrl.log().contains("reusing the local agent's enrollment"));

    // Stopping the controller stops its child.
    let marker = ctrl.data_dir().join("local-agent").display().to_string();
    ctrl.stop();
    let gone = wait_until(Duration::from_secs(10), || {
        let left = processes_matching(&marker);
        async move { left.is_empty() }
    })
    .await;
    assert!(gone, "the local agent outlived the controller");
}

/// The issue that found it: on a host that runs both the controller and an agent, a viewer
/// token's `POST /api/exec` of `cat .vigil/admin.token` returned the admin token. Every
/// read is blind to the controller's data directory (CA, gateway and grant keys, admin
/// token, database) and to the agent's own state, while ordinary reads still work.
#[tokio::test]
async fn reads_never_see_the_controllers_secrets_whatever_the_role() {
    let (ctrl, id) = with_local_agent().await;
    let (code, out, err) = ctrl.cli(&["apitoken", "create", "--role", "viewer", "--name", "v"]);
    assert_eq!(code, 0, "{out}{err}");
    let viewer = vigil_tests::Api::new(
        ctrl.api.base().to_owned(),
        out.lines().last().unwrap().trim().to_owned(),
    );
    let data = ctrl.data_dir().canonicalize().unwrap();
    let admin_token = std::fs::read_to_string(data.join("admin.token")).unwrap();
    let grant_key = std::fs::read(data.join("grant.key")).unwrap();
    assert!(!admin_token.trim().is_empty());

    for api in [&viewer, &ctrl.api] {
        for command in [
            format!("cat {}/admin.token", data.display()),
            format!("cat {}/grant.key", data.display()),
            format!(
                "cat {}/ca.key {}/gateway.key",
                data.display(),
                data.display()
            ),
            format!("ls -A {}", data.display()),
            format!("head -c 4096 {}/local-agent/agent.key", data.display()),
            format!("grep -r vat_ {}", data.display()),
        ] {
            let outcome = api.exec_json(&id, &command).await;
            let text = match &outcome {
                Ok(o) => format!("{}{}", o.stdout, o.stderr),
                Err((status, body)) => format!("{status} {body}"),
            };
            assert!(
                !text.contains(admin_token.trim()),
                "{command} returned the admin token: {text}"
            );
            assert!(!text.contains("vat_"), "{command}: {text}");
            assert!(
                !text.contains("PRIVATE KEY") && !text.contains("vigil.db"),
                "{command} showed a key or the directory: {text}"
            );
            let key_text = String::from_utf8_lossy(&grant_key);
            assert!(
                key_text.trim().is_empty() || !text.contains(key_text.trim()),
                "{command} returned the grant key: {text}"
            );
        }
    }
    // Ordinary reads still work, and the agent says what it hides.
    let outcome = viewer
        .exec_json(&id, "cat /etc/hostname /proc/version")
        .await
        .unwrap();
    assert_eq!(outcome.exit_code, Some(0), "{outcome:?}");
    assert!(outcome.stdout.contains("Linux"), "{outcome:?}");
    let seen = wait_until(Duration::from_secs(30), || async {
        ctrl.api.agents().await[0]["sandbox"]["level"].is_string()
    })
    .await;
    assert!(seen, "no sandbox facts: {:?}", ctrl.api.agents().await);
    let agents = ctrl.api.agents().await;
    let sandbox = &agents[0]["sandbox"];
    assert_eq!(sandbox["hidden"], true, "{sandbox}");
    assert_eq!(sandbox["sockets_by_need"], true, "{sandbox}");
    // The container engine's socket, where this host has one, has a door.
    if std::path::Path::new("/run/docker.sock").exists() {
        let doors = sandbox["doors"].as_array().expect("doors");
        assert!(
            doors
                .iter()
                .any(|d| d.as_str() == Some("engine /run/docker.sock")),
            "{sandbox}"
        );
    }
    let patterns = sandbox["hidden_paths"].as_array().expect("hidden_paths");
    assert!(
        patterns
            .iter()
            .any(|p| p.as_str() == Some(&data.display().to_string())),
        "{sandbox}"
    );
}

/// Issue 22, part C: the credential stores an agent hides are an admin-editable list per
/// agent that the agent reports. An admin adds a path from the controller (the CLI, by
/// host name); reads stop seeing it at once, it survives the agent's reconnect, a viewer
/// cannot change it, a bad pattern is a clear 400, and removing it makes it readable
/// again (the controller only adds to the agent's own list).
#[tokio::test]
async fn an_admin_hides_more_paths_per_agent_from_the_controller() {
    let (mut ctrl, id) = with_local_agent().await;
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("app-secret.env");
    std::fs::write(&secret, "DB_PASSWORD=hunter2-not-for-reads\n").unwrap();
    let secret = secret.canonicalize().unwrap().display().to_string();
    let read = format!("cat {secret}");
    let cat = |api: vigil_tests::Api, command: String, id: String| async move {
        let o = api.exec_json(&id, &command).await.expect("exec");
        format!("{}{}", o.stdout, o.stderr)
    };
    assert!(
        cat(ctrl.api.clone(), read.clone(), id.clone())
            .await
            .contains("hunter2")
    );

    let url = ctrl.api.base().to_owned();
    let host = ctrl.api.agents().await[0]["hostname"]
        .as_str()
        .unwrap()
        .to_owned();
    let (code, out, err) = ctrl.cli(&[
        "agents",
        "hidden-paths",
        &host,
        "--add",
        &secret,
        "--url",
        &url,
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(&secret), "{out}");
    // Reads sent after the change never see it, whatever reads it.
    for command in [
        read.clone(),
        format!("grep -r hunter2 {}", dir.path().display()),
    ] {
        let text = cat(ctrl.api.clone(), command.clone(), id.clone()).await;
        assert!(!text.contains("hunter2"), "{command}: {text}");
    }
    // The agent reports it applies it, beside its own list.
    let applied = wait_until(Duration::from_secs(30), || async {
        let (_, agent) = ctrl.api.get(&format!("/api/agents/{id}")).await;
        agent["facts"]["sandbox"]["controller_hidden_paths"]
            .as_array()
            .is_some_and(|a| a.iter().any(|p| p.as_str() == Some(&secret)))
    })
    .await;
    assert!(
        applied,
        "{:?}",
        ctrl.api.get(&format!("/api/agents/{id}")).await
    );
    let (_, agent) = ctrl.api.get(&format!("/api/agents/{id}")).await;
    assert_eq!(agent["hidden_paths"], serde_json::json!([secret]));
    let all = agent["facts"]["sandbox"]["hidden_paths"]
        .as_array()
        .unwrap();
    assert!(all.iter().any(|p| p == "/etc/shadow"), "{all:?}");

    // A viewer may not change it; nonsense is refused with a clear error.
    let (code, out, err) = ctrl.cli(&["apitoken", "create", "--role", "viewer", "--name", "v"]);
    assert_eq!(code, 0, "{out}{err}");
    let viewer_token = out.lines().last().unwrap().trim().to_owned();
    let path = format!("/api/agents/{id}/hidden-paths");
    let (status, _) = ctrl
        .api
        .raw_request(
            reqwest::Method::PUT,
            &path,
            r#"{"paths":[]}"#,
            Some(&viewer_token),
        )
        .await;
    assert_eq!(status, 403);
    for (body, code) in [
        (r#"{"paths":["relative/path"]}"#, "INVALID_INPUT"),
        (r#"{"paths":["/a/../etc"]}"#, "INVALID_INPUT"),
        (r#"{"paths":"/etc"}"#, "INVALID_INPUT"),
        (r#"{"paths":[],"extra":1}"#, "INVALID_INPUT"),
    ] {
        let (status, answer) = ctrl
            .api
            .raw_request(reqwest::Method::PUT, &path, body, Some(ctrl.api.token()))
            .await;
        assert_eq!(
            (status, answer["error"]["code"].as_str()),
            (400, Some(code)),
            "{body}: {answer}"
        );
    }
    let (status, _) = ctrl
        .api
        .raw_request(
            reqwest::Method::PUT,
            "/api/agents/00000000-0000-4000-8000-000000000000/hidden-paths",
            r#"{"paths":["/srv"]}"#,
            Some(ctrl.api.token()),
        )
        .await;
    assert_eq!(status, 404);

    // A restart of the controller (the agent reconnects): still hidden from the first read.
    ctrl.restart().await;
    let connected = wait_until(Duration::from_secs(30), || ctrl.api.connected(&id)).await;
    assert!(connected, "not reconnected:\n{}", ctrl.log());
    let text = cat(ctrl.api.clone(), read.clone(), id.clone()).await;
    assert!(!text.contains("hunter2"), "after a reconnect: {text}");

    // Removing it from the controller's list makes it readable again.
    let url = ctrl.api.base().to_owned();
    let (code, out, err) = ctrl.cli(&[
        "agents",
        "hidden-paths",
        &id,
        "--remove",
        &secret,
        "--url",
        &url,
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        cat(ctrl.api.clone(), read, id.clone())
            .await
            .contains("hunter2")
    );
    let audit = ctrl.api.get("/api/audit").await.1.to_string();
    assert!(audit.contains("agent.hidden_paths"), "{audit}");
}

/// Issue 23: `exec --target NAME` finds the resource by name the way chat's `@NAME` does;
/// an unknown name is a clear 404.
#[tokio::test]
async fn exec_targets_a_resource_by_its_name() {
    let (ctrl, id) = with_local_agent().await;
    let host = format!("host:{id}");
    let reported = wait_until(Duration::from_secs(30), || async {
        ctrl.api.resource(&host).await.is_some()
    })
    .await;
    assert!(reported, "the local agent never reported its host");
    let name = ctrl.api.resource(&host).await.unwrap()["name"]
        .as_str()
        .unwrap()
        .to_owned();
    let outcome = ctrl
        .api
        .exec_resource_json(&name, "uname -s")
        .await
        .unwrap();
    assert_eq!(outcome.stdout.trim(), "Linux", "{outcome:?}");
    let url = ctrl.api.base().to_owned();
    // Not `ctrl.cli`: it appends --data-dir, which would land after `--`.
    let output = std::process::Command::new(vigil_tests::bin("vigil-controller"))
        .args([
            "exec", "--url", &url, "--target", &name, "--", "uname", "-s",
        ])
        .env("VIGIL_TOKEN", ctrl.api.token())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        (output.status.code(), stdout.trim()),
        (Some(0), "Linux"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let (status, code, body) = ctrl
        .api
        .exec_resource_refused("no-such-resource-anywhere", "uname -s")
        .await;
    assert_eq!((status, code.as_str()), (404, "NOT_FOUND"), "{body}");
}
