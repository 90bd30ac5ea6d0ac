//! Which requests the agent's container-engine door (`host-agent/src/exec/sandbox/doors`)
//! lets through: `GET` and `HEAD` on an
//! allow-list of Docker (and Podman compat and libpod) API paths that only list or
//! inspect, without a body, never an upgrade to a raw stream. Everything else — create,
//! start, exec, attach, kill, prune, pull, build, and reads that copy data out (`export`,
//! `archive`, `images/get`) — is refused. Pure: no I/O.

/// Why a request is refused, or `Ok` for one the door forwards.
pub fn check(method: &str, path: &str, has_body: bool, upgrade: bool) -> Result<(), String> {
    if method != "GET" && method != "HEAD" {
        return Err(format!("{method} requests change the engine's state"));
    }
    if has_body || upgrade {
        return Err("a read has no body and is never upgraded to a raw stream".to_owned());
    }
    let clean = path.bytes().all(|b| {
        b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_' | b'-' | b':' | b'@' | b'+')
    });
    if !clean || path.contains("..") || path.contains("//") || !path.starts_with('/') {
        return Err(format!("the path {path:?} is not a plain API path"));
    }
    let rest = strip_version(path);
    let rest = rest.strip_prefix("/libpod").unwrap_or(rest);
    if allowed(rest) {
        Ok(())
    } else {
        Err(format!(
            "{method} {path} is not on the read-only door's list"
        ))
    }
}

/// `/v1.47/containers/json` → `/containers/json` (Docker `v1.NN`, Podman `v4.0.0`).
fn strip_version(path: &str) -> &str {
    let Some(after) = path.strip_prefix("/v") else {
        return path;
    };
    let end = after.find('/').unwrap_or(after.len());
    let version = &after[..end];
    if !version.is_empty() && version.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        &after[end..]
    } else {
        path
    }
}

/// Exact paths that only report.
const EXACT: &[&str] = &[
    "/_ping",
    "/version",
    "/info",
    "/events",
    "/system/df",
    "/containers/json",
    "/images/json",
    "/networks",
    "/networks/json",
    "/volumes",
    "/volumes/json",
    "/plugins",
    "/services",
    "/tasks",
    "/nodes",
    "/swarm",
    "/pods/json",
];

/// `/<collection>/<name>/<last>` reads, by collection; `""` is the object itself
/// (`/networks/{id}`).
const PER_OBJECT: &[(&str, &[&str])] = &[
    (
        "containers",
        &["json", "top", "logs", "stats", "changes", "exists"],
    ),
    ("images", &["json", "history", "exists"]),
    ("networks", &["", "json", "exists"]),
    ("volumes", &["", "json", "exists"]),
    ("plugins", &["json"]),
    ("services", &["", "logs"]),
    ("tasks", &["", "logs"]),
    ("nodes", &[""]),
    ("exec", &["json"]),
    ("pods", &["json", "top", "stats", "exists"]),
];

fn allowed(rest: &str) -> bool {
    if EXACT.contains(&rest) {
        return true;
    }
    let Some(after) = rest.strip_prefix('/') else {
        return false;
    };
    let Some((collection, object)) = after.split_once('/') else {
        return false;
    };
    let Some((_, lasts)) = PER_OBJECT.iter().find(|(c, _)| *c == collection) else {
        return false;
    };
    if object.is_empty() {
        return false;
    }
    // Image names hold slashes (`library/nginx:1`); the last segment is the action.
    match object.rsplit_once('/') {
        Some((name, last)) if !name.is_empty() => lasts.contains(&last),
        _ => lasts.contains(&""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listing_and_inspecting_pass() {
        for path in [
            "/_ping",
            "/v1.47/containers/json",
            "/v1.47/containers/abc123/json",
            "/v1.47/containers/web/logs",
            "/v1.43/images/library/nginx:1.25/json",
            "/v1.47/images/sha256:0123abcd/history",
            "/v1.47/networks/bridge",
            "/v1.47/system/df",
            "/v4.0.0/libpod/containers/json",
            "/v4.0.0/libpod/pods/web/json",
            "/version",
        ] {
            assert_eq!(check("GET", path, false, false), Ok(()), "{path}");
        }
        assert_eq!(check("HEAD", "/_ping", false, false), Ok(()));
    }

    #[test]
    fn everything_that_acts_or_copies_out_is_refused() {
        for (method, path) in [
            ("POST", "/v1.47/networks/create"),
            ("POST", "/v1.47/containers/create"),
            ("POST", "/v1.47/containers/web/start"),
            ("POST", "/v1.47/containers/web/exec"),
            ("POST", "/v1.47/containers/web/attach"),
            ("POST", "/v1.47/containers/web/kill"),
            ("POST", "/v1.47/containers/prune"),
            ("DELETE", "/v1.47/containers/web"),
            ("PUT", "/v1.47/containers/web/archive"),
            ("GET", "/v1.47/containers/web/archive"),
            ("GET", "/v1.47/containers/web/export"),
            ("GET", "/v1.47/containers/web/attach/ws"),
            ("GET", "/v1.47/images/get"),
            ("GET", "/v1.47/images/nginx/get"),
            ("GET", "/v1.47/distribution/nginx/json"),
            ("GET", "/v1.47/configs"),
            ("GET", "/v1.47/secrets"),
            ("GET", "/v1.47/containers/json/../create"),
            ("GET", "/v1.47/containers/%2e%2e/create"),
            ("GET", "/v1.47//containers/json"),
            ("GET", "/v1.47/containers/"),
            ("GET", "/v1.47/containers"),
            ("GET", "relative"),
        ] {
            assert!(
                check(method, path, false, false).is_err(),
                "{method} {path}"
            );
        }
        assert!(check("GET", "/containers/json", true, false).is_err());
        assert!(check("GET", "/containers/json", false, true).is_err());
    }
}
