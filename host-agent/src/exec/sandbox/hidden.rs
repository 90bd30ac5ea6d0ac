//! What a read never sees: Vigil's own state (the agent's state directory, a controller's
//! data and secrets on the same host) and the host's credential stores. The list is
//! patterns of absolute paths where a component may hold `*` (`/home/*/.ssh`); the read's
//! mount namespace ([`super::mountns`]) covers every path they name with an empty mask.
//!
//! Hiding, not redacting: a read can transform what it reads (`base64`, `xxd`, `tr`), so
//! a redactor downstream cannot be relied on for files whose whole content is secret.
//!
//! Vigil's own directories, and files whose reading acts
//! ([`vigil_shared::hide::EFFECT_FILES`]), are always hidden. The credential list is a
//! default that an admin replaces or extends per agent (`[sandbox]` in the agent's
//! config, `--hide`); the agent reports the patterns it applies in its facts.

use std::path::{Path, PathBuf};

/// Where Vigil keeps state and secrets when installed the standard way. Always hidden.
pub const VIGIL_DIRS: &[&str] = &[
    "/etc/vigil",
    "/var/lib/vigil",
    "/var/lib/vigil-agent",
    "/var/lib/vigil-controller",
];

/// The host's credential stores, hidden unless the admin turns the default list off.
pub const CREDENTIAL_STORES: &[&str] = &[
    // Password hashes.
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/security/opasswd",
    // SSH private keys: host keys, and every user's key directory.
    "/etc/ssh/ssh_host_*_key",
    "/root/.ssh",
    "/home/*/.ssh",
    // Proxmox VE's cluster secrets (authkey, root's and the nodes' private keys).
    "/etc/pve/priv",
    "/etc/pve/nodes/*/pve-ssl.key",
    "/etc/pve/nodes/*/pveproxy-ssl.key",
    // Kubernetes credentials.
    "/root/.kube",
    "/home/*/.kube",
    "/etc/kubernetes/admin.conf",
    "/etc/kubernetes/super-admin.conf",
    "/etc/kubernetes/controller-manager.conf",
    "/etc/kubernetes/scheduler.conf",
    "/etc/kubernetes/kubelet.conf",
    "/etc/kubernetes/pki",
    "/etc/rancher/k3s/k3s.yaml",
    "/var/lib/rancher/k3s/server/token",
    "/var/lib/rancher/k3s/server/cred",
    "/var/lib/rancher/k3s/server/tls",
    // A pod's service account token (an agent run in a pod): reads get their own identity.
    "/var/run/secrets/kubernetes.io",
    "/run/secrets/kubernetes.io",
    // Registry and cloud credentials.
    "/root/.docker/config.json",
    "/home/*/.docker/config.json",
    "/root/.aws",
    "/home/*/.aws",
    "/root/.config/gcloud",
    "/home/*/.config/gcloud",
    "/root/.netrc",
    "/home/*/.netrc",
    "/root/.git-credentials",
    "/home/*/.git-credentials",
    "/root/.gnupg",
    "/home/*/.gnupg",
    // Database client passwords.
    "/root/.pgpass",
    "/home/*/.pgpass",
    "/root/.my.cnf",
    "/home/*/.my.cnf",
    "/etc/mysql/debian.cnf",
    // TLS and VPN private keys, Wi-Fi secrets.
    "/etc/ssl/private",
    "/etc/letsencrypt/archive",
    "/etc/letsencrypt/keys",
    "/etc/wireguard",
    "/etc/NetworkManager/system-connections",
];

/// The patterns one agent hides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HiddenPaths {
    patterns: Vec<String>,
    /// Where controllers on this host list their directories
    /// ([`vigil_shared::hide::REGISTRY_DIR`]); read again before every read.
    registry: Option<PathBuf>,
}

pub use vigil_shared::hide::check_pattern;

impl HiddenPaths {
    /// Vigil's directories, `own` (the agent's state directory, a controller's data
    /// directory), the default credential stores unless `defaults` is false, and `extra`.
    pub fn new(
        own: impl IntoIterator<Item = PathBuf>,
        defaults: bool,
        extra: &[String],
    ) -> Result<Self, String> {
        let mut patterns: Vec<String> = VIGIL_DIRS
            .iter()
            .chain(vigil_shared::hide::EFFECT_FILES)
            .map(|s| (*s).to_owned())
            .collect();
        for dir in own {
            let text = dir.to_string_lossy().into_owned();
            check_pattern(&text)?;
            patterns.push(text);
        }
        if defaults {
            patterns.extend(CREDENTIAL_STORES.iter().map(|s| (*s).to_owned()));
        }
        for pattern in extra {
            check_pattern(pattern)?;
            patterns.push(pattern.clone());
        }
        let mut seen = std::collections::HashSet::new();
        patterns.retain(|p| seen.insert(p.clone()));
        Ok(HiddenPaths {
            patterns,
            registry: Some(PathBuf::from(vigil_shared::hide::REGISTRY_DIR)),
        })
    }

    /// The same, reading controllers' lists from `dir` instead of the standard registry
    /// (`None`: none).
    pub fn with_registry(mut self, dir: Option<PathBuf>) -> Self {
        self.registry = dir;
        self
    }

    /// Nothing hidden (tests).
    pub fn none() -> Self {
        HiddenPaths {
            patterns: Vec::new(),
            registry: None,
        }
    }

    /// The patterns, as reported in the agent's facts.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// The paths controllers on this host registered now.
    pub fn registered(&self) -> Vec<String> {
        let Some(Ok(entries)) = self.registry.as_ref().map(std::fs::read_dir) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name();
            if !name
                .to_str()
                .is_some_and(|n| n.ends_with(vigil_shared::hide::LIST_SUFFIX))
            {
                continue;
            }
            if let Ok(text) = std::fs::read_to_string(entry.path()) {
                out.extend(vigil_shared::hide::parse_list(&text));
            }
        }
        out
    }

    /// Every existing path the patterns (and the registered lists) name now, parents
    /// before children.
    pub fn existing(&self) -> Vec<PathBuf> {
        self.expand_all(true)
    }

    /// The paths the patterns name now, without checking that each exists: what the
    /// check before each read looks at (a missing path shows nothing). Each directory a
    /// wildcard needs is listed once.
    pub fn candidates(&self) -> Vec<PathBuf> {
        self.expand_all(false)
    }

    fn expand_all(&self, existing: bool) -> Vec<PathBuf> {
        let registered = self.registered();
        let mut listings = Listings::new();
        let mut out: Vec<PathBuf> = self
            .patterns
            .iter()
            .chain(&registered)
            .flat_map(|p| expand_with(p, &mut listings, existing))
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

/// Directory listings made while expanding a set of patterns, each directory read once.
type Listings = std::collections::HashMap<PathBuf, Vec<String>>;

/// The existing paths one pattern names (`*` matches within one component, not `/`).
pub fn expand(pattern: &str) -> Vec<PathBuf> {
    expand_with(pattern, &mut Listings::new(), true)
}

fn expand_with(pattern: &str, listings: &mut Listings, existing: bool) -> Vec<PathBuf> {
    let mut found = vec![PathBuf::from("/")];
    for component in pattern.split('/').filter(|c| !c.is_empty()) {
        let mut next = Vec::new();
        for dir in &found {
            if component.contains('*') {
                let names = listings.entry(dir.clone()).or_insert_with(|| {
                    std::fs::read_dir(dir)
                        .map(|entries| {
                            entries
                                .flatten()
                                .filter_map(|e| e.file_name().to_str().map(str::to_owned))
                                .collect()
                        })
                        .unwrap_or_default()
                });
                next.extend(
                    names
                        .iter()
                        .filter(|name| wildcard(component, name))
                        .map(|name| dir.join(name)),
                );
            } else {
                next.push(dir.join(component));
            }
        }
        found = next;
        if found.is_empty() {
            break;
        }
    }
    found.retain(|p| p != Path::new("/") && (!existing || p.symlink_metadata().is_ok()));
    found.sort();
    found
}

/// True when `name` matches `pattern`, where `*` stands for any run of characters.
pub fn wildcard(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, rest) = parts.split_first().unwrap_or((&"", &[]));
    let Some(mut tail) = name.strip_prefix(first) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return tail.is_empty();
    };
    for part in middle {
        match tail.find(part) {
            Some(i) => tail = &tail[i + part.len()..],
            None => return false,
        }
    }
    tail.len() >= last.len() && tail.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_match_within_a_component() {
        assert!(wildcard("ssh_host_*_key", "ssh_host_ed25519_key"));
        assert!(!wildcard("ssh_host_*_key", "ssh_host_ed25519_key.pub"));
        assert!(wildcard("*", "alice"));
        assert!(wildcard("a*b*c", "aXbYc"));
        assert!(!wildcard("a*b*c", "aXbY"));
        assert!(wildcard("abc", "abc"));
        assert!(!wildcard("abc", "abcd"));
        assert!(!wildcard("ab*ba", "aba"));
    }

    #[test]
    fn patterns_expand_to_existing_paths_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for user in ["alice", "bob"] {
            std::fs::create_dir_all(root.join(user).join(".ssh")).unwrap();
        }
        std::fs::create_dir_all(root.join("carol")).unwrap();
        let pattern = format!("{}/*/.ssh", root.display());
        let found = expand(&pattern);
        assert_eq!(
            found,
            vec![root.join("alice/.ssh"), root.join("bob/.ssh")],
            "{found:?}"
        );
        assert!(expand(&format!("{}/nope/*", root.display())).is_empty());
    }

    #[test]
    fn registered_lists_add_paths() {
        let registry = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        std::fs::write(
            registry.path().join("controller-1.list"),
            format!("{}\nrelative\n", data.path().display()),
        )
        .unwrap();
        std::fs::write(registry.path().join("other.txt"), "/etc\n").unwrap();
        let hidden = HiddenPaths::new([], false, &[])
            .unwrap()
            .with_registry(Some(registry.path().to_owned()));
        let found = hidden.existing();
        assert!(found.contains(&data.path().to_owned()), "{found:?}");
        assert!(!found.contains(&PathBuf::from("/etc")), "{found:?}");
    }

    #[test]
    fn vigil_directories_stay_hidden_and_bad_patterns_are_refused() {
        let off = HiddenPaths::new([PathBuf::from("/srv/vigil-data")], false, &[]).unwrap();
        for dir in VIGIL_DIRS {
            assert!(off.patterns().iter().any(|p| p == dir));
        }
        assert!(off.patterns().iter().any(|p| p == "/srv/vigil-data"));
        assert!(!off.patterns().iter().any(|p| p == "/etc/shadow"));
        let on = HiddenPaths::new([], true, &["/srv/keys".into()]).unwrap();
        assert!(on.patterns().iter().any(|p| p == "/etc/shadow"));
        assert!(on.patterns().iter().any(|p| p == "/srv/keys"));
        for bad in ["relative", "/", "/a/../etc", "/a/./b", "/x/[ab]*"] {
            assert!(HiddenPaths::new([], false, &[bad.into()]).is_err(), "{bad}");
        }
    }
}
