//! The one shell command each fixed-form action runs, with single-quote quoting and
//! bounds. Every read builder's command is proved read-only and bounded by the classifier
//! (the tests check each one), so it passes the same gate as a free-form `read exec`; the
//! write builders' commands are never classified read-only.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;

/// Default bytes of `read file`.
pub const DEFAULT_FILE_BYTES: u64 = 64 * 1024;
/// Bytes of `file_edit read` (and of the current content shown in a diff).
pub const EDIT_FILE_BYTES: u64 = 1024 * 1024;
/// Default lines of `tail` and of logs.
pub const DEFAULT_LINES: u64 = 200;

/// `text` as one single-quoted shell word.
pub fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The first `max_bytes` of a file.
pub fn read_file(path: &str, max_bytes: Option<u64>) -> String {
    format!(
        "head -c {} -- {}",
        max_bytes.unwrap_or(DEFAULT_FILE_BYTES),
        quote(path)
    )
}

/// The last `lines` of a file.
pub fn tail(path: &str, lines: Option<u64>) -> String {
    format!(
        "tail -n {} -- {}",
        lines.unwrap_or(DEFAULT_LINES),
        quote(path)
    )
}

/// Files under `path` named like `name` (at most 200). A path or pattern that starts with
/// `-` is written so that `find` cannot take it for an option or an action (`./-x`,
/// `[-]x`, which match the same files).
pub fn find(path: &str, name: &str) -> String {
    let path = if path.starts_with('-') {
        format!("./{path}")
    } else {
        path.to_owned()
    };
    let name = match name.strip_prefix('-') {
        Some(rest) => format!("[-]{rest}"),
        None => name.to_owned(),
    };
    format!(
        "find {} -maxdepth 6 -name {} 2>/dev/null | head -n 200",
        quote(&path),
        quote(&name)
    )
}

/// The system journal.
pub fn journal(lines: Option<u64>, since: Option<&str>, unit: Option<&str>) -> String {
    let mut command = format!(
        "journalctl --no-pager -n {}",
        lines.unwrap_or(DEFAULT_LINES)
    );
    if let Some(since) = since {
        command.push_str(&format!(" --since {}", quote(since)));
    }
    if let Some(unit) = unit {
        command.push_str(&format!(" -u {}", quote(unit)));
    }
    command
}

/// The containers of a Docker host.
pub fn docker_list() -> String {
    "docker ps --all --no-trunc --format '{{json .}}'".into()
}

/// One container's configuration.
pub fn docker_inspect(container: &str) -> String {
    format!("docker inspect {}", quote(container))
}

/// One container's logs.
pub fn docker_logs(container: &str, lines: Option<u64>, since: Option<&str>) -> String {
    let mut command = format!("docker logs --tail {}", lines.unwrap_or(DEFAULT_LINES));
    if let Some(since) = since {
        command.push_str(&format!(" --since {}", quote(since)));
    }
    format!("{command} {}", quote(container))
}

/// `kubectl get KIND` in a namespace (all namespaces when `None`).
pub fn kubectl_get(kind: &str, namespace: Option<&str>) -> String {
    match namespace {
        Some(ns) => format!("kubectl get {kind} -n {} -o wide", quote(ns)),
        None => format!("kubectl get {kind} --all-namespaces -o wide"),
    }
}

/// Recent events of a namespace (all namespaces when `None`).
pub fn kubectl_events(namespace: Option<&str>) -> String {
    match namespace {
        Some(ns) => format!(
            "kubectl get events -n {} --sort-by=.lastTimestamp",
            quote(ns)
        ),
        None => "kubectl get events --all-namespaces --sort-by=.lastTimestamp".into(),
    }
}

/// One pod in detail.
pub fn kubectl_describe(namespace: &str, pod: &str) -> String {
    format!(
        "kubectl describe pod {} -n {}",
        quote(pod),
        quote(namespace)
    )
}

/// One pod's logs.
pub fn kubectl_logs(namespace: &str, pod: &str, lines: Option<u64>, since: Option<&str>) -> String {
    let mut command = format!(
        "kubectl logs {} -n {} --tail={}",
        quote(pod),
        quote(namespace),
        lines.unwrap_or(DEFAULT_LINES)
    );
    if let Some(since) = since {
        command.push_str(&format!(" --since={}", quote(since)));
    }
    command
}

/// Load, memory and disks.
pub fn metrics() -> String {
    "cat /proc/loadavg; free -m; df -hP | head -n 40".into()
}

/// Start, stop, shut down or reboot a guest from its node: `pct` for an LXC, `qm` for a VM.
pub fn guest(lxc: bool, vmid: u32, operation: &str) -> String {
    format!("{} {operation} {vmid}", if lxc { "pct" } else { "qm" })
}

/// A systemd operation on a unit.
pub fn service(unit: &str, operation: &str) -> String {
    format!("systemctl {operation} -- {}", quote(unit))
}

/// A Docker operation on a container.
pub fn docker_control(container: &str, operation: &str) -> String {
    format!("docker {operation} {}", quote(container))
}

/// Replaces (`append` false) or extends a file with exactly `content`.
pub fn write_file(path: &str, content: &str, append: bool) -> String {
    format!(
        "printf '%s' {} | base64 -d {} {}",
        quote(&BASE64.encode(content)),
        if append { ">>" } else { ">" },
        quote(path)
    )
}

/// A unified diff of a file's change.
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a{path}"), &format!("b{path}"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use vigil_shared::policy::classify;

    #[test]
    fn quoting_survives_quotes_and_newlines() {
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote("a\nb"), "'a\nb'");
    }

    #[test]
    fn every_read_builder_is_a_bounded_read() {
        let reads = [
            read_file("/etc/hostname", None),
            read_file("/var/log/it's here", Some(10)),
            tail("/var/log/syslog", Some(50)),
            find("/etc", "*.conf"),
            find("-rf", "-delete"),
            find("/tmp", "$(reboot)'; reboot; '"),
            journal(None, Some("10 min ago"), Some("nginx.service")),
            docker_list(),
            docker_inspect("web"),
            docker_logs("web", Some(20), Some("1h")),
            kubectl_get("pods", Some("media")),
            kubectl_get("deployments", None),
            kubectl_events(Some("media")),
            kubectl_describe("media", "jellyfin-0"),
            kubectl_logs("media", "jellyfin-0", None, Some("10m")),
            metrics(),
            read_file("/etc/x", Some(EDIT_FILE_BYTES)),
        ];
        for command in reads {
            let c = classify(&command);
            assert!(c.intent.is_read_only(), "{command}: {:?}", c.reasons);
            assert!(c.boundedness.is_bounded(), "{command}: {:?}", c.reasons);
        }
    }

    #[test]
    fn no_write_builder_is_a_read() {
        let writes = [
            guest(true, 141, "reboot"),
            guest(false, 200, "stop"),
            service("nginx", "restart"),
            docker_control("web", "restart"),
            write_file("/etc/motd", "hello 'world'\n", false),
            write_file("/etc/motd", "more", true),
        ];
        for command in writes {
            assert!(!classify(&command).intent.is_read_only(), "{command}");
        }
    }

    #[test]
    fn diffs_are_unified() {
        let diff = unified_diff("/etc/motd", "a\nb\n", "a\nc\n");
        assert!(
            diff.contains("--- a/etc/motd") && diff.contains("-b") && diff.contains("+c"),
            "{diff}"
        );
    }
}
