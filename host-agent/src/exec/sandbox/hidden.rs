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
//! config, `--hide`) and that a Vigil admin extends from the controller (a
//! `SandboxPolicy` on the agent's stream, [`HiddenPaths::set_from_controller`]: it adds,
//! never removes); the agent reports the patterns it applies in its facts.

use super::SandboxError;
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

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
#[derive(Debug, Clone)]
pub struct HiddenPaths {
    patterns: Vec<String>,
    /// Where controllers on this host list their directories
    /// ([`vigil_shared::hide::REGISTRY_DIR`]); read again before every read.
    registry: Option<PathBuf>,
    /// What the controller added, shared by every copy (the sandbox's, the base
    /// thread's plan), so that the next read sees a change.
    controller: Arc<RwLock<FromController>>,
}

/// The controller's additions: the patterns applied, and those refused with why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FromController {
    pub patterns: Vec<String>,
    pub refused: Vec<String>,
}

pub use vigil_shared::hide::check_pattern;

impl HiddenPaths {
    /// Vigil's directories, `own` (the agent's state directory, a controller's data
    /// directory), the default credential stores unless `defaults` is false, and `extra`.
    pub fn new(
        own: impl IntoIterator<Item = PathBuf>,
        defaults: bool,
        extra: &[String],
    ) -> Result<Self, SandboxError> {
        let mut patterns: Vec<String> = VIGIL_DIRS
            .iter()
            .chain(vigil_shared::hide::EFFECT_FILES)
            .map(|s| (*s).to_owned())
            .collect();
        for dir in own {
            let text = dir.to_string_lossy().into_owned();
            check_pattern(&text).map_err(SandboxError::Invalid)?;
            patterns.push(text);
        }
        if defaults {
            patterns.extend(CREDENTIAL_STORES.iter().map(|s| (*s).to_owned()));
        }
        for pattern in extra {
            check_pattern(pattern).map_err(SandboxError::Invalid)?;
            patterns.push(pattern.clone());
        }
        let mut seen = std::collections::HashSet::new();
        patterns.retain(|p| seen.insert(p.clone()));
        Ok(HiddenPaths {
            patterns,
            registry: Some(PathBuf::from(vigil_shared::hide::REGISTRY_DIR)),
            controller: Arc::default(),
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
            controller: Arc::default(),
        }
    }

    /// The agent's own patterns (Vigil's, its configuration's, the defaults).
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// Every pattern applied now: the agent's own, then the controller's, as reported in
    /// the agent's facts.
    pub fn all_patterns(&self) -> Vec<String> {
        let mut all = self.patterns.clone();
        for p in self.from_controller().patterns {
            if !all.contains(&p) {
                all.push(p);
            }
        }
        all
    }

    /// What the controller added now.
    pub fn from_controller(&self) -> FromController {
        self.controller
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Replace the controller's additions with `patterns` (a `SandboxPolicy`): the valid
    /// ones are hidden from the next read on; the others are refused, each with why.
    /// They add to the agent's own list and can never take anything from it. Returns
    /// true when what is applied changed.
    pub fn set_from_controller(&self, patterns: &[String]) -> bool {
        let mut next = FromController::default();
        for pattern in patterns {
            match check_pattern(pattern) {
                Ok(()) if !next.patterns.contains(pattern) => next.patterns.push(pattern.clone()),
                Ok(()) => {}
                Err(why) => next.refused.push(format!("{pattern}: {why}")),
            }
        }
        let mut current = self
            .controller
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let changed = *current != next;
        *current = next;
        changed
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
        let from_controller = self.from_controller().patterns;
        let mut listings = Listings::new();
        let mut out: Vec<PathBuf> = self
            .patterns
            .iter()
            .chain(&from_controller)
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
    fn the_controller_adds_paths_to_every_copy_and_never_removes_the_agents() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret");
        std::fs::write(&secret, "x").unwrap();
        let hidden = HiddenPaths::new([], true, &[]).unwrap().with_registry(None);
        let copy = hidden.clone();
        assert!(!copy.existing().contains(&secret));
        let pattern = secret.display().to_string();
        assert!(hidden.set_from_controller(&[pattern.clone(), "relative".into(), pattern.clone()]));
        // Every copy (the base thread's plan) sees it; nothing of the agent's went away.
        assert!(copy.existing().contains(&secret));
        let all = copy.all_patterns();
        assert!(all.contains(&pattern) && all.contains(&"/etc/shadow".to_owned()));
        assert_eq!(all.iter().filter(|p| **p == pattern).count(), 1);
        let from = copy.from_controller();
        assert_eq!(from.patterns, vec![pattern.clone()]);
        assert_eq!(from.refused.len(), 1, "{from:?}");
        assert!(from.refused[0].starts_with("relative: "), "{from:?}");
        // The same policy again changes nothing; an empty one takes only its own back.
        assert!(!hidden.set_from_controller(&[pattern.clone(), "relative".into()]));
        assert!(hidden.set_from_controller(&[]));
        assert!(!copy.existing().contains(&secret));
        assert!(copy.all_patterns().contains(&"/etc/shadow".to_owned()));
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
