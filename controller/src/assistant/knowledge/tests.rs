use serde_json::{Value, json};

use super::*;

fn exec_ok(id: &str, command: &str, exit: i64, stdout: &str, stderr: &str) -> Value {
    json!({"ok": true, "data": {"resource_id": id, "command": command, "exit_code": exit,
        "stdout": stdout, "stderr": stderr, "truncated": false, "duration_ms": 12}})
}

fn exec_args(id: &str, command: &str) -> Value {
    json!({"action": "exec", "resource_id": id, "command": command})
}

fn uptime_facts() -> Vec<Fact> {
    let args = exec_args("lxc:delly:141", "uptime");
    let envelope = exec_ok(
        "lxc:delly:141",
        "uptime",
        0,
        " 10:02:11 up 3 days, load average: 0.42",
        "",
    );
    Knowledge::extract("read", "exec", &args, &envelope)
}

fn numbered(i: usize, value_len: usize) -> Fact {
    Fact {
        key: format!("host:h|exec|cmd{i}"),
        resource: Some("host:h".into()),
        value: "v".repeat(value_len),
        turn: 0,
        negative: false,
    }
}

#[test]
fn read_exec_is_keyed_by_resource_and_command() {
    let facts = uptime_facts();
    assert_eq!(facts, uptime_facts(), "deterministic");
    assert_eq!(facts.len(), 1);
    assert_eq!(facts[0].key, "lxc:delly:141|exec|uptime");
    assert_eq!(facts[0].resource.as_deref(), Some("lxc:delly:141"));
    assert_eq!(
        facts[0].value,
        "exit 0: 10:02:11 up 3 days, load average: 0.42"
    );
    assert!(!facts[0].negative);
}

#[test]
fn long_output_is_bounded_to_head_and_tail() {
    let stdout: String = (0..500)
        .map(|i| format!("line number {i} of the output\n"))
        .collect();
    let envelope = exec_ok("host:h", "cat big", 0, &stdout, "");
    let facts = Knowledge::extract("read", "exec", &exec_args("host:h", "cat big"), &envelope);
    let value = &facts[0].value;
    assert!(value.chars().count() <= MAX_VALUE);
    assert!(value.contains("line number 0 "));
    assert!(value.contains("line number 499 "));
}

#[test]
fn missing_files_and_commands_are_negative() {
    let args = json!({"action": "file", "resource_id": "host:h", "path": "/etc/nope"});
    let envelope = exec_ok(
        "host:h",
        "head -c 65536 /etc/nope",
        1,
        "",
        "head: cannot open '/etc/nope': No such file or directory",
    );
    let facts = Knowledge::extract("read", "file", &args, &envelope);
    assert!(facts[0].negative);
    assert_eq!(facts[0].key, "host:h|file|/etc/nope|-");
    let envelope = exec_ok("host:h", "htop", 127, "", "sh: htop: command not found");
    assert!(
        Knowledge::extract("read", "exec", &exec_args("host:h", "htop"), &envelope)[0].negative
    );
    let error = json!({"ok": false, "error": {"code": "NOT_FOUND", "message": "nothing matches \"jelly\"",
        "blocked": false, "failed": true, "retryable": false, "details": {}}});
    let facts = Knowledge::extract(
        "query",
        "search",
        &json!({"action": "search", "query": "jelly"}),
        &error,
    );
    assert_eq!(facts.len(), 1);
    assert!(facts[0].negative && facts[0].value.contains("jelly"));
    let timeout = json!({"ok": false, "error": {"code": "TIMEOUT", "message": "slow"}});
    assert!(Knowledge::extract("read", "exec", &exec_args("host:h", "x"), &timeout).is_empty());
}

#[test]
fn query_results_give_resource_status() {
    let data = json!({"count": 2, "resources": [
        {"id": "lxc:delly:141", "kind": "lxc", "name": "media", "aliases": [], "parent": "node:delly", "status": "running"},
        {"id": "lxc:delly:142", "kind": "lxc", "name": "mail", "aliases": [], "parent": "node:delly", "status": "stopped"}]});
    let facts = Knowledge::extract(
        "query",
        "search",
        &json!({"action": "search", "query": "m"}),
        &json!({"ok": true, "data": data}),
    );
    assert_eq!(facts.len(), 3);
    assert_eq!(facts[0].value, "2 found: lxc:delly:141, lxc:delly:142");
    assert_eq!(facts[2].key, "lxc:delly:142|status");
    assert_eq!(facts[2].value, "lxc mail status stopped parent node:delly");
}

#[test]
fn metrics_docker_and_pods_are_summarized() {
    let stdout = "0.42 0.51 0.60 2/345 12345\n               total        used        free      shared  buff/cache   available\nMem:            7936        4213         512         102        3210        3318\nSwap:           2047           0        2047\nFilesystem      Size  Used Avail Use% Mounted on\n/dev/sda1        32G   27G  3.2G  90% /\ntmpfs           3.9G     0  3.9G   0% /dev/shm\n";
    let facts = Knowledge::extract(
        "metrics",
        "resource",
        &json!({"action": "resource", "resource_id": "host:h"}),
        &exec_ok("host:h", "m", 0, stdout, ""),
    );
    assert_eq!(facts[0].key, "host:h|metrics");
    assert_eq!(
        facts[0].value,
        "load 0.42 0.51 0.60; mem 4213/7936 MiB used, 3318 available; swap 0/2047 MiB; disk / 90% (3.2G free)"
    );

    let ps = "{\"Names\":\"db\",\"State\":\"running\",\"Status\":\"Up 2 hours\",\"Image\":\"postgres:15\",\"Ports\":\"0.0.0.0:5432->5432/tcp\"}\n{\"Names\":\"cache\",\"State\":\"exited\",\"Status\":\"Exited (137) 5 minutes ago\",\"Image\":\"redis:7\",\"Ports\":\"\"}";
    let facts = Knowledge::extract(
        "docker",
        "list",
        &json!({"action": "list", "resource_id": "host:h"}),
        &exec_ok("host:h", "docker ps", 0, ps, ""),
    );
    assert_eq!(facts[0].value, "2 containers: db running, cache exited");
    assert_eq!(facts[1].key, "host:h|docker|db");
    assert_eq!(
        facts[1].value,
        "running; Up 2 hours; image postgres:15; ports 0.0.0.0:5432->5432/tcp"
    );

    let inspect = r#"[{"Name":"/db","RestartCount":2,"State":{"Status":"running"},"Config":{"Image":"postgres:15"},"NetworkSettings":{"Ports":{"5432/tcp":[]}}}]"#;
    let facts = Knowledge::extract(
        "docker",
        "inspect",
        &json!({"action": "inspect", "resource_id": "ctr:h:db"}),
        &exec_ok("host:h", "docker inspect db", 0, inspect, ""),
    );
    assert_eq!(
        facts[0].value,
        "db state running, restarts 2, image postgres:15, ports 5432/tcp"
    );

    let pods = "NAMESPACE NAME READY STATUS RESTARTS AGE\nweb api-7d9f 1/1 Running 0 2d\nweb worker-5c8b 0/1 CrashLoopBackOff 14 (2m ago) 1h\n";
    let facts = Knowledge::extract(
        "kubernetes",
        "pods",
        &json!({"action": "pods", "resource_id": "k8s:c"}),
        &exec_ok("k8s:c", "kubectl", 0, pods, ""),
    );
    assert_eq!(
        facts[0].value,
        "2 pods: web/api-7d9f Running, web/worker-5c8b CrashLoopBackOff (14 restarts)"
    );
}

#[test]
fn writes_and_unknown_tools_yield_no_facts() {
    let ok = json!({"ok": true, "data": {"remembered": "k"}});
    assert!(Knowledge::extract("knowledge", "remember", &json!({"key": "k"}), &ok).is_empty());
    assert!(Knowledge::extract("control", "service", &json!({"resource_id": "h"}), &ok).is_empty());
}

#[test]
fn the_gate_answers_a_repeated_identical_read_only() {
    let mut knowledge = Knowledge::default();
    knowledge.record(uptime_facts(), 1);
    let args = exec_args("lxc:delly:141", "uptime");
    let answer = knowledge.answer("read", "exec", &args, 2, false);
    assert!(answer.is_some_and(|a| a.contains("up 3 days") && a.contains("turn 1")));
    assert!(
        knowledge
            .answer(
                "read",
                "exec",
                &exec_args("lxc:delly:141", "df -h"),
                2,
                false
            )
            .is_none()
    );
    assert!(
        knowledge
            .answer(
                "read",
                "exec",
                &exec_args("lxc:delly:142", "uptime"),
                2,
                false
            )
            .is_none()
    );
    assert!(
        knowledge
            .answer("control", "command", &args, 2, false)
            .is_none()
    );
}

#[test]
fn the_gate_never_answers_while_verifying() {
    let mut knowledge = Knowledge::default();
    knowledge.record(uptime_facts(), 1);
    let args = exec_args("lxc:delly:141", "uptime");
    assert!(knowledge.answer("read", "exec", &args, 1, true).is_none());
    assert!(knowledge.answer("read", "exec", &args, 1, false).is_some());
}

#[test]
fn a_write_makes_its_target_stale() {
    let mut knowledge = Knowledge::default();
    knowledge.record(uptime_facts(), 1);
    let other = json!({"action": "exec", "resource_id": "host:h", "command": "uptime"});
    knowledge.record(
        Knowledge::extract(
            "read",
            "exec",
            &other,
            &exec_ok("host:h", "uptime", 0, "up", ""),
        ),
        1,
    );
    knowledge.invalidate("lxc:delly:141");
    let args = exec_args("lxc:delly:141", "uptime");
    assert!(
        knowledge.answer("read", "exec", &args, 1, false).is_none(),
        "the next read runs"
    );
    assert!(
        knowledge.answer("read", "exec", &other, 1, false).is_some(),
        "other targets stay"
    );
    assert!(knowledge.block().contains("stale"));
    knowledge.record(uptime_facts(), 2);
    assert!(
        knowledge.answer("read", "exec", &args, 2, false).is_some(),
        "fresh again after the read"
    );
}

#[test]
fn eviction_is_lru_and_spares_the_current_and_previous_turn() {
    let mut knowledge = Knowledge::new(3, 10_000, 200);
    knowledge.record(vec![numbered(0, 5), numbered(1, 5)], 1);
    knowledge.record(vec![numbered(2, 5)], 2);
    // Touch fact 0 so fact 1 is the least recently used.
    assert!(
        knowledge
            .answer("read", "exec", &exec_args("host:h", "cmd0"), 3, false)
            .is_some()
    );
    knowledge.record(vec![numbered(3, 5)], 3);
    assert_eq!(knowledge.len(), 3);
    assert!(
        knowledge
            .answer("read", "exec", &exec_args("host:h", "cmd1"), 3, false)
            .is_none()
    );
    // Turn 4 protects turns 3 and 4: facts 2 (turn 2, least recently used) and 0 go.
    knowledge.record(vec![numbered(4, 5), numbered(5, 5)], 4);
    assert_eq!(knowledge.len(), 3);
    for gone in ["cmd0", "cmd2"] {
        assert!(
            knowledge
                .answer("read", "exec", &exec_args("host:h", gone), 4, false)
                .is_none()
        );
    }
    knowledge.record(vec![numbered(6, 5)], 4);
    assert_eq!(
        knowledge.len(),
        4,
        "protected facts may exceed the count bound"
    );
    knowledge.record(vec![numbered(7, 5)], 6);
    assert_eq!(
        knowledge.len(),
        3,
        "older turns are evicted once unprotected"
    );
    let args = exec_args("host:h", "cmd5");
    assert!(knowledge.answer("read", "exec", &args, 6, false).is_some());
}

#[test]
fn the_char_bound_is_hard() {
    let mut knowledge = Knowledge::new(60, 200, 200);
    knowledge.record((0..10).map(|i| numbered(i, 50)).collect(), 1);
    assert!(knowledge.total_chars() <= 200);
    assert!(!knowledge.is_empty());
    let mut big = Knowledge::default();
    big.record((0..100).map(|i| numbered(i, 500)).collect(), 1);
    assert!(big.total_chars() <= MAX_CHARS);
    assert!(big.len() <= MAX_FACTS);
    assert!(big.block().lines().all(|l| l.chars().count() < 260));
}

#[test]
fn summarize_is_bounded() {
    let facts: Vec<Fact> = (0..20).map(|i| numbered(i, 40)).collect();
    let text = Knowledge::summarize(&facts, 300);
    assert!(text.chars().count() <= 300);
    assert!(text.starts_with("host:h|exec|cmd0: vvv"));
    assert!(text.ends_with('…'));
    assert_eq!(
        Knowledge::summarize(&facts[..1], 300),
        format!("host:h|exec|cmd0: {}", "v".repeat(40))
    );
    assert_eq!(Knowledge::summarize(&[], 300), "");
}
