//! `POST /api/exec/fanout` against a controller in this process and scripted agents on
//! real mutual-TLS streams: a fleet with an answering, a hanging (slow), a refusing and an
//! enrolled-but-offline agent; the JSON and event-stream forms; label and id selection; a
//! write refused once for the whole request with nothing sent; a client that leaves
//! cancelling the commands on the agents (events or JSON); the concurrency bound; the CLI;
//! and exactly one audit row per request.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use eventsource_stream::{Event, Eventsource};
use futures_util::StreamExt;
use serde_json::{Value, json};
use vigil_controller::config::Config;
use vigil_controller::exec::fanout::DEFAULT_FANOUT_CONCURRENCY;
use vigil_tests::in_process::TestController;
use vigil_tests::in_process::fake_agent::{FleetAgent, Script, join};
use vigil_tests::wait_until;

/// The fleet: web1 and web2 answer, slow hangs, picky refuses, dead never connects.
struct Fleet {
    ctrl: TestController,
    web1: FleetAgent,
    web2: FleetAgent,
    slow: FleetAgent,
    picky: FleetAgent,
    dead: FleetAgent,
}

async fn fleet() -> Fleet {
    fleet_with(DEFAULT_FANOUT_CONCURRENCY).await
}

async fn fleet_with(fanout_concurrency: usize) -> Fleet {
    let ctrl = TestController::start_with(|config| Config {
        fanout_concurrency,
        ..config
    })
    .await;
    let prod = [("env", "prod")];
    let web1 = join(&ctrl, "web1", &prod, Some(Script::ByCommand)).await;
    let web2 = join(&ctrl, "web2", &[("env", "dev")], Some(Script::ByCommand)).await;
    let slow = join(&ctrl, "slow", &prod, Some(Script::Hang)).await;
    let picky = join(&ctrl, "picky", &prod, Some(Script::Refuse)).await;
    let dead = join(&ctrl, "dead", &prod, None).await;
    Fleet {
        ctrl,
        web1,
        web2,
        slow,
        picky,
        dead,
    }
}

async fn fanout_json(ctrl: &TestController, body: Value) -> (u16, Value) {
    let response = ctrl
        .api(reqwest::Method::POST, "/api/exec/fanout")
        .header("accept", "application/json")
        .json(&body)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

async fn fanout_events(ctrl: &TestController, body: Value) -> Vec<Event> {
    let response = ctrl
        .api(reqwest::Method::POST, "/api/exec/fanout")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    response
        .bytes_stream()
        .eventsource()
        .map(|e| e.expect("an event"))
        .collect()
        .await
}

/// The audit rows of fan-outs, once `count` of them are written.
async fn fanout_rows(ctrl: &TestController, count: usize) -> Vec<Value> {
    let rows = || async {
        let rows: Vec<Value> = ctrl
            .api(reqwest::Method::GET, "/api/audit?limit=1000")
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        rows.into_iter()
            .filter(|r| r["action"] == "exec.fanout")
            .collect::<Vec<_>>()
    };
    assert!(
        wait_until(Duration::from_secs(5), || async {
            rows().await.len() >= count
        })
        .await,
        "{count} fan-out audit rows"
    );
    // Give a wrongly written second row the chance to show up.
    tokio::time::sleep(Duration::from_millis(200)).await;
    rows().await
}

fn by_host<'a>(results: &'a Value, host: &str) -> &'a Value {
    results
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["host"] == host)
        .unwrap_or_else(|| panic!("no result for {host} in {results}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn all_reaches_every_agent_and_a_dead_slow_or_refusing_one_does_not_stall_the_rest() {
    let mut f = fleet().await;
    let body = json!({"all": true, "command": "uptime", "timeout_s": 1});
    let (status, answer) = fanout_json(&f.ctrl, body).await;
    assert_eq!(status, 200, "{answer}");
    let summary = &answer["summary"];
    assert_eq!(
        (
            &summary["targets"],
            &summary["ok"],
            &summary["failed"],
            &summary["refused"],
            &summary["offline"]
        ),
        (&json!(5), &json!(2), &json!(1), &json!(1), &json!(1)),
        "{answer}"
    );
    let results = &answer["results"];
    let listed: Vec<Value> = f
        .ctrl
        .api(reqwest::Method::GET, "/api/agents")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let listed: Vec<&Value> = listed.iter().map(|a| &a["id"]).collect();
    let answered: Vec<&Value> = results
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["agent"])
        .collect();
    assert_eq!(
        answered, listed,
        "results come in selection order: the agent list's"
    );

    let web1 = by_host(results, "web1");
    assert_eq!(web1["target"], f.web1.id.as_str());
    assert_eq!(web1["agent"], f.web1.id.as_str());
    assert_eq!(
        (
            &web1["status"],
            &web1["exit_code"],
            &web1["stdout"],
            &web1["stderr"]
        ),
        (&json!("ok"), &json!(0), &json!("hello\n"), &json!("warn"))
    );
    assert_eq!(
        (&web1["truncated"], &web1["error"]),
        (&json!(false), &Value::Null)
    );

    let slow = by_host(results, "slow");
    assert_eq!(slow["status"], "failed");
    assert_eq!(slow["error"]["code"], "TIMEOUT", "{slow}");
    assert_eq!(slow["exit_code"], Value::Null);
    let cancelled = tokio::time::timeout(Duration::from_secs(5), f.slow.cancels.recv())
        .await
        .expect("the timed-out command is cancelled on its agent");
    assert!(cancelled.is_some());

    let picky = by_host(results, "picky");
    assert_eq!(
        (&picky["status"], &picky["error"]["code"]),
        (&json!("refused"), &json!("POLICY_BLOCKED")),
        "{picky}"
    );

    let dead = by_host(results, "dead");
    assert_eq!(
        (&dead["status"], &dead["error"]["code"], &dead["agent"]),
        (
            &json!("offline"),
            &json!("AGENT_OFFLINE"),
            &json!(f.dead.id.as_str())
        ),
        "{dead}"
    );
    assert!(
        f.dead.commands.try_recv().is_err(),
        "nothing was sent to the offline agent"
    );
    assert_eq!(f.web2.commands.recv().await.unwrap(), "uptime");

    let rows = fanout_rows(&f.ctrl, 1).await;
    assert_eq!(
        rows.len(),
        1,
        "one audit row for the whole request: {rows:?}"
    );
    let row = &rows[0];
    assert_eq!(row["command"], "uptime");
    assert_eq!(row["target"], "all (5 targets)");
    assert_eq!(
        row["outcome"],
        "partial (5 targets: 2 ok, 1 failed, 1 refused, 1 offline)"
    );
    assert_eq!(row["actor"], "admin");
    f.ctrl.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn labels_select_and_events_stream_as_targets_end() {
    let f = fleet().await;
    let body = json!({"labels": {"env": "prod"}, "command": "uptime", "timeout_s": 1});
    let events = fanout_events(&f.ctrl, body).await;
    let names: Vec<&str> = events.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(
        names,
        ["start", "result", "result", "result", "result", "summary"]
    );
    let start: Value = serde_json::from_str(&events[0].data).unwrap();
    assert_eq!(start, json!({"targets": 4}), "web2 is not env=prod");
    let results: Vec<Value> = events[1..5]
        .iter()
        .map(|e| serde_json::from_str(&e.data).unwrap())
        .collect();
    let mut hosts: Vec<&str> = results
        .iter()
        .map(|r| r["host"].as_str().unwrap())
        .collect();
    assert_eq!(
        hosts.pop(),
        Some("slow"),
        "the hanging agent ends last, after the others: {results:?}"
    );
    hosts.sort_unstable();
    assert_eq!(hosts, ["dead", "picky", "web1"]);
    let summary: Value = serde_json::from_str(&events[5].data).unwrap();
    assert_eq!(
        (
            &summary["targets"],
            &summary["ok"],
            &summary["failed"],
            &summary["refused"],
            &summary["offline"]
        ),
        (&json!(4), &json!(1), &json!(1), &json!(1), &json!(1)),
    );
    let rows = fanout_rows(&f.ctrl, 1).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["target"], "labels env=prod (4 targets)");
    drop((f.web1, f.web2, f.slow, f.picky, f.dead));
    f.ctrl.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn targets_name_agents_and_unknown_ids_are_reported() {
    let f = fleet().await;
    let unknown = "00000000-0000-4000-8000-000000000000";
    let body = json!({
        "targets": [f.web1.id, f.web2.id, f.web1.id, unknown],
        "labels": {},
        "command": "uptime"
    });
    let (status, answer) = fanout_json(&f.ctrl, body).await;
    assert_eq!(status, 200, "{answer}");
    let results = answer["results"].as_array().unwrap();
    let targets: Vec<&str> = results
        .iter()
        .map(|r| r["target"].as_str().unwrap())
        .collect();
    assert_eq!(
        targets,
        [f.web1.id.as_str(), f.web2.id.as_str(), unknown],
        "web1 runs once"
    );
    assert_eq!(results[2]["status"], "failed");
    assert_eq!(results[2]["error"]["code"], "NOT_FOUND");
    assert_eq!(answer["summary"]["ok"], 2);

    let both =
        json!({"targets": [f.web1.id, f.web2.id], "labels": {"env": "dev"}, "command": "uptime"});
    let (_, answer) = fanout_json(&f.ctrl, both).await;
    let hosts: Vec<&str> = answer["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["host"].as_str().unwrap())
        .collect();
    assert_eq!(hosts, ["web2"], "targets intersected with labels");
    f.ctrl.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_write_is_refused_once_for_the_whole_request_and_nothing_is_sent() {
    let mut f = fleet().await;
    let (status, answer) =
        fanout_json(&f.ctrl, json!({"all": true, "command": "rm -rf /tmp/x"})).await;
    assert_eq!(status, 403, "{answer}");
    assert_eq!(answer["error"]["code"], "POLICY_BLOCKED");
    assert!(
        !answer["error"]["details"]["reasons"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let (status, answer) = fanout_json(
        &f.ctrl,
        json!({"labels": {"env": "prod"}, "command": "journalctl -f"}),
    )
    .await;
    assert_eq!(status, 422, "{answer}");
    assert_eq!(answer["error"]["code"], "UNBOUNDED_COMMAND");

    let rows = fanout_rows(&f.ctrl, 2).await;
    assert_eq!(rows.len(), 2, "one row per refused request: {rows:?}");
    assert_eq!(
        (&rows[0]["outcome"], &rows[0]["target"], &rows[0]["command"]),
        (&json!("refused"), &json!("all"), &json!("rm -rf /tmp/x"))
    );

    // The first command any agent sees is the read sent now: the refusals sent nothing.
    let (status, _) = fanout_json(
        &f.ctrl,
        json!({"targets": [f.web1.id], "command": "uptime"}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(f.web1.commands.recv().await.unwrap(), "uptime");
    f.ctrl.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_selections_get_clear_errors() {
    let f = fleet().await;
    let cases = [
        (json!({"command": "uptime"}), 400, "INVALID_INPUT"),
        (
            json!({"all": false, "targets": [], "labels": {}, "command": "uptime"}),
            400,
            "INVALID_INPUT",
        ),
        (
            // A target may be a resource's name (as chat's @NAME): one that no resource
            // has is not found, rather than a malformed id.
            json!({"targets": ["not an id"], "command": "uptime"}),
            404,
            "NOT_FOUND",
        ),
        (json!({"all": true, "command": " "}), 400, "INVALID_INPUT"),
        (
            json!({"all": true, "command": "uptime", "timeout_s": 301}),
            400,
            "INVALID_INPUT",
        ),
        (
            json!({"all": true, "command": "uptime", "extra": 1}),
            400,
            "INVALID_INPUT",
        ),
        (
            json!({"labels": {"env": "nowhere"}, "command": "uptime"}),
            404,
            "NOT_FOUND",
        ),
    ];
    for (body, status, code) in cases {
        let (got, answer) = fanout_json(&f.ctrl, body.clone()).await;
        assert_eq!(
            (got, answer["error"]["code"].as_str()),
            (status, Some(code)),
            "{body}: {answer}"
        );
    }
    f.ctrl.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_leaves_cancels_the_commands_on_the_agents() {
    let mut f = fleet().await;
    let body = json!({"targets": [f.slow.id, f.web1.id], "command": "uptime", "timeout_s": 60});
    let response = f
        .ctrl
        .api(reqwest::Method::POST, "/api/exec/fanout")
        .json(&body)
        .send()
        .await
        .unwrap();
    let mut events = response.bytes_stream().eventsource();
    let mut seen: Vec<Event> = Vec::new();
    while seen.iter().filter(|e| e.event == "result").count() < 1 {
        seen.push(events.next().await.expect("events").expect("an event"));
    }
    let first: Value = serde_json::from_str(&seen[1].data).unwrap();
    assert_eq!(first["host"], "web1", "the answering agent ends first");
    assert_eq!(f.slow.commands.recv().await.unwrap(), "uptime");
    drop(events);
    let cancelled = tokio::time::timeout(Duration::from_secs(10), f.slow.cancels.recv())
        .await
        .expect("the hanging command is cancelled when the client leaves");
    assert!(cancelled.is_some());
    let rows = fanout_rows(&f.ctrl, 1).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(
        rows[0]["outcome"],
        "cancelled (2 targets: 1 ok, 0 failed, 0 refused, 0 offline)"
    );
    f.ctrl.stop().await;
}

/// Runs `vigil-controller ARGS` against `ctrl`; answers (exit code, stdout, stderr).
async fn cli(ctrl: &TestController, args: &[&str]) -> (i32, String, String) {
    let output = tokio::process::Command::new(vigil_tests::bin("vigil-controller"))
        .arg("exec")
        .args(["--url", &ctrl.http_url()])
        .args(args)
        .env("VIGIL_TOKEN", &ctrl.admin_token)
        .output()
        .await
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cli_prints_a_table_per_host_and_exits_by_the_summary() {
    let f = fleet().await;
    let (code, out, err) = cli(&f.ctrl, &["--all", "--timeout-s", "1", "--", "uptime"]).await;
    assert_eq!(code, 1, "some targets did not succeed: {out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("HOST"), "{out}");
    assert_eq!(lines.len(), 7, "header, five hosts, summary: {out}");
    let row = |host: &str| {
        lines
            .iter()
            .find(|l| l.starts_with(host))
            .unwrap_or_else(|| panic!("no row for {host}: {out}"))
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect::<Vec<_>>()
    };
    let web1 = row("web1");
    assert_eq!(
        (web1[1], web1[2], web1[3], web1[5]),
        (f.web1.id.as_str(), "ok", "0", "hello")
    );
    assert!(row("slow")[5].starts_with("TIMEOUT:"), "{out}");
    assert!(row("picky")[5].starts_with("POLICY_BLOCKED:"), "{out}");
    assert_eq!(row("dead")[2], "offline");
    assert!(
        lines[6].starts_with("5 targets: 2 ok, 1 failed, 1 refused, 1 offline ("),
        "{out}"
    );

    let (code, out, _) = cli(&f.ctrl, &["--label", "env=dev", "--json", "--", "uptime"]).await;
    assert_eq!(code, 0, "every selected target succeeded: {out}");
    let answer: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(answer["summary"]["targets"], 1);
    assert_eq!(answer["results"][0]["host"], "web2");

    let (code, _, err) = cli(&f.ctrl, &["--all", "--", "rm", "-rf", "/tmp/x"]).await;
    assert_eq!(code, 2, "a refused request: {err}");
    assert!(err.contains("POLICY_BLOCKED"), "{err}");
    let (code, out, err) = cli(&f.ctrl, &["--target", &f.web1.id, "--", "uptime"]).await;
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (0, "hello\n", "warn"),
        "one agent id streams like --agent"
    );
    let (code, _, err) = cli(&f.ctrl, &["--label", "env", "--", "uptime"]).await;
    assert_eq!(code, 2, "a malformed label: {err}");
    f.ctrl.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrency_is_bounded_by_the_serve_setting() {
    // One target in flight at a time: web1 waits for the slow agent's deadline, so it ends
    // after it (with the default of 512 it ends first, as the test above shows).
    let f = fleet_with(1).await;
    let body = json!({"targets": [f.slow.id, f.web1.id], "command": "uptime", "timeout_s": 1});
    let events = fanout_events(&f.ctrl, body).await;
    let hosts: Vec<String> = events
        .iter()
        .filter(|e| e.event == "result")
        .map(|e| {
            serde_json::from_str::<Value>(&e.data).unwrap()["host"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(hosts, ["slow", "web1"]);
    f.ctrl.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_json_client_that_leaves_cancels_too() {
    let mut f = fleet().await;
    let body = json!({"targets": [f.slow.id], "command": "uptime", "timeout_s": 60});
    let request = f
        .ctrl
        .api(reqwest::Method::POST, "/api/exec/fanout")
        .header("accept", "application/json")
        .json(&body)
        .send();
    let waiting = tokio::spawn(request);
    assert_eq!(f.slow.commands.recv().await.unwrap(), "uptime");
    waiting.abort();
    let cancelled = tokio::time::timeout(Duration::from_secs(10), f.slow.cancels.recv())
        .await
        .expect("the command is cancelled when the JSON client leaves");
    assert!(cancelled.is_some());
    let rows = fanout_rows(&f.ctrl, 1).await;
    assert_eq!(
        rows[0]["outcome"],
        "cancelled (1 targets: 0 ok, 0 failed, 0 refused, 0 offline)"
    );
    f.ctrl.stop().await;
}
