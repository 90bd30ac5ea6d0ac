//! Deterministic fact extraction from tool results, and the key a call predicts.

use serde_json::Value;

use super::{Fact, MAX_VALUE, clip};

/// Most per-resource facts one listing yields.
const MAX_LISTED: usize = 10;

/// Whether the gate may answer this call: agent reads only.
pub(super) fn gated(tool: &str, action: &str) -> bool {
    tool.starts_with(crate::mcp::external::PREFIX)
        || matches!(
            (tool, action),
            ("read", "exec" | "file" | "find" | "tail" | "logs")
                | ("metrics", "host" | "resource")
                | ("docker", "list" | "inspect" | "logs")
                | (
                    "kubernetes",
                    "pods" | "deployments" | "events" | "describe" | "logs"
                )
        )
}

fn arg(args: &Value, name: &str) -> String {
    match args.get(name) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "-".into(),
    }
}

/// The key of the fact this call produces (and the gate looks up).
pub(super) fn key(tool: &str, action: &str, args: &Value) -> Option<String> {
    let a = |name: &str| arg(args, name);
    let id = a("resource_id");
    if tool.starts_with(crate::mcp::external::PREFIX) {
        return Some(format!("{tool}|{args}"));
    }
    Some(match (tool, action) {
        ("read", "exec") => format!("{id}|exec|{}", a("command")),
        ("read", "file") => format!("{id}|file|{}|{}", a("path"), a("max_bytes")),
        ("read", "find") => format!("{id}|find|{}|{}", a("path"), a("name")),
        ("read", "tail") => format!("{id}|tail|{}|{}", a("path"), a("lines")),
        ("read", "logs") => format!("{id}|logs|{}|{}|{}", a("unit"), a("lines"), a("since")),
        ("file_edit", "read") => format!("{id}|file_edit|{}", a("path")),
        ("metrics", _) => format!("{id}|metrics"),
        ("docker", "list" | "inspect") => format!("{id}|docker|{action}"),
        ("docker", "logs") => format!("{id}|docker|logs|{}|{}", a("lines"), a("since")),
        ("kubernetes", _) => format!("{id}|k8s|{action}|{}|{}", a("lines"), a("since")),
        ("query", "search") => format!("query|search|{}|{}", a("query"), a("kind")),
        ("query", "list") => format!("query|list|{}|{}", a("kind"), a("parent")),
        ("query", "get" | "topology") => format!("{id}|{action}"),
        _ => return None,
    })
}

fn fact(key: String, resource: Option<String>, value: String, negative: bool) -> Fact {
    Fact {
        key,
        resource,
        value: clip(&value, MAX_VALUE),
        turn: 0,
        negative,
    }
}

/// Facts from one tool result.
pub(super) fn facts(tool: &str, action: &str, args: &Value, envelope: &Value) -> Vec<Fact> {
    let Some(key) = key(tool, action, args) else {
        return Vec::new();
    };
    let given = args
        .get("resource_id")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if envelope.get("ok").and_then(Value::as_bool) != Some(true) {
        let error = envelope.get("error").unwrap_or(&Value::Null);
        if error.get("code").and_then(Value::as_str) != Some("NOT_FOUND") {
            return Vec::new();
        }
        let message = error.get("message").and_then(Value::as_str).unwrap_or("");
        return vec![fact(key, given, format!("not found: {message}"), true)];
    }
    let data = envelope.get("data").unwrap_or(&Value::Null);
    if tool == "query" {
        return query(key, given, data);
    }
    let text = |name: &str| data.get(name).and_then(Value::as_str).unwrap_or("");
    let resource = data
        .get("resource_id")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or(given);
    let (stdout, stderr) = (text("stdout"), text("stderr"));
    let exit = data.get("exit_code").and_then(Value::as_i64).unwrap_or(0);
    let lower = format!("{stdout}\n{stderr}").to_lowercase();
    let negative = exit == 127
        || (exit != 0 && (lower.contains("no such file") || lower.contains("not found")));
    let mut out = Vec::new();
    let special = match (tool, action) {
        ("metrics", _) => metrics(stdout),
        ("docker", "list") => docker_list(&key, resource.as_ref(), stdout, &mut out),
        ("docker", "inspect") => docker_inspect(stdout),
        ("kubernetes", "pods") => pods(stdout),
        _ => None,
    };
    let value = match special {
        Some(value) if exit == 0 => value,
        _ => format!("exit {exit}: {}", compact(stdout, stderr, exit)),
    };
    out.insert(0, fact(key, resource, value, negative));
    out
}

/// Non-empty lines of stdout (and stderr when it failed or stdout is empty): all when they
/// fit, else the first two and the last three.
fn compact(stdout: &str, stderr: &str, exit: i64) -> String {
    let mut lines: Vec<String> = stdout
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect();
    if exit != 0 || lines.is_empty() {
        lines.extend(
            stderr
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(|l| format!("stderr: {l}")),
        );
    }
    let all = lines.join(" ⏎ ");
    if all.chars().count() <= MAX_VALUE - 10 || lines.len() <= 5 {
        return if lines.is_empty() {
            "(no output)".into()
        } else {
            all
        };
    }
    let head = lines[..2].join(" ⏎ ");
    let tail = lines[lines.len() - 3..].join(" ⏎ ");
    format!("{} … {}", clip(&head, 80), clip(&tail, 90))
}

/// `query` results: the call's fact and one status fact per resource.
fn query(key: String, given: Option<String>, data: &Value) -> Vec<Fact> {
    let one = |r: &Value| {
        let f = |n: &str| r.get(n).and_then(Value::as_str).unwrap_or("-").to_owned();
        (
            f("id"),
            format!(
                "{} {} status {} parent {}",
                f("kind"),
                f("name"),
                f("status"),
                f("parent")
            ),
        )
    };
    let listed: Vec<&Value> = match data.get("resources").and_then(Value::as_array) {
        Some(list) => list.iter().collect(),
        None if data.get("id").is_some() => vec![data],
        None => return Vec::new(),
    };
    let mut out = Vec::new();
    let summary = listed
        .iter()
        .map(|r| one(r).0)
        .collect::<Vec<_>>()
        .join(", ");
    out.push(fact(
        key,
        given,
        format!("{} found: {summary}", listed.len()),
        false,
    ));
    for resource in listed.into_iter().take(MAX_LISTED) {
        let (id, value) = one(resource);
        out.push(fact(format!("{id}|status"), Some(id), value, false));
    }
    out
}

/// Load, memory and disk figures of `cat /proc/loadavg; free -m; df -hP`.
fn metrics(stdout: &str) -> Option<String> {
    let mut parts = Vec::new();
    let mut disks = Vec::new();
    for line in stdout.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            [a, b, c, ..]
                if parts.is_empty() && [a, b, c].iter().all(|x| x.parse::<f64>().is_ok()) =>
            {
                parts.push(format!("load {a} {b} {c}"));
            }
            ["Mem:", total, used, rest @ ..] => {
                let avail = rest
                    .get(3)
                    .map_or(String::new(), |a| format!(", {a} available"));
                parts.push(format!("mem {used}/{total} MiB used{avail}"));
            }
            ["Swap:", total, used, ..] => parts.push(format!("swap {used}/{total} MiB")),
            [fs, _, _, avail, pct, mount] if pct.ends_with('%') && mount.starts_with('/') => {
                let virtual_fs = ["tmpfs", "devtmpfs", "udev", "overlay", "shm"];
                if !virtual_fs.iter().any(|v| fs.starts_with(v)) && disks.len() < 4 {
                    disks.push(format!("{mount} {pct} ({avail} free)"));
                }
            }
            _ => {}
        }
    }
    if !disks.is_empty() {
        parts.push(format!("disk {}", disks.join(", ")));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// Container states and ports of `docker ps --format '{{json .}}'`; one fact per container.
fn docker_list(
    key: &str,
    host: Option<&String>,
    stdout: &str,
    out: &mut Vec<Fact>,
) -> Option<String> {
    let base = key.trim_end_matches("|list");
    let mut names = Vec::new();
    for line in stdout.lines() {
        let Ok(c) = serde_json::from_str::<Value>(line.trim()) else {
            continue;
        };
        let f = |n: &str| c.get(n).and_then(Value::as_str).unwrap_or("").to_owned();
        names.push(format!("{} {}", f("Names"), f("State")));
        if out.len() < MAX_LISTED {
            let ports = if f("Ports").is_empty() {
                "none".into()
            } else {
                f("Ports")
            };
            let value = format!(
                "{}; {}; image {}; ports {ports}",
                f("State"),
                f("Status"),
                f("Image")
            );
            out.push(fact(
                format!("{base}|{}", f("Names")),
                host.cloned(),
                value,
                false,
            ));
        }
    }
    (!names.is_empty()).then(|| format!("{} containers: {}", names.len(), names.join(", ")))
}

/// State, restarts, image and ports of `docker inspect`.
fn docker_inspect(stdout: &str) -> Option<String> {
    let parsed: Value = serde_json::from_str(stdout).ok()?;
    let c = parsed.get(0)?;
    let s = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("-").to_owned();
    let ports = c
        .pointer("/NetworkSettings/Ports")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    Some(format!(
        "{} state {}, restarts {}, image {}, ports {}",
        s(c.get("Name")).trim_start_matches('/'),
        s(c.pointer("/State/Status")),
        c.get("RestartCount").and_then(Value::as_i64).unwrap_or(0),
        s(c.pointer("/Config/Image")),
        if ports.is_empty() { "none" } else { &ports }
    ))
}

/// Pod phases of `kubectl get pods -o wide`.
fn pods(stdout: &str) -> Option<String> {
    let mut lines = stdout.lines();
    let header: Vec<&str> = lines.next()?.split_whitespace().collect();
    let col = |name: &str| header.iter().position(|h| *h == name);
    let (name, status) = (col("NAME")?, col("STATUS")?);
    let (ns, restarts) = (col("NAMESPACE"), col("RESTARTS"));
    let pods: Vec<String> = lines
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.len() > status.max(name))
        .map(|w| {
            let ns = ns
                .and_then(|i| w.get(i))
                .map_or(String::new(), |n| format!("{n}/"));
            let r = restarts.and_then(|i| w.get(i)).filter(|r| **r != "0");
            let r = r.map_or(String::new(), |r| format!(" ({r} restarts)"));
            format!("{ns}{} {}{r}", w[name], w[status])
        })
        .collect();
    Some(format!("{} pods: {}", pods.len(), pods.join(", ")))
}
