//! The environment a read gets on top of the agent's fixed environment: settings that
//! stop tools from running programs named by configuration the read may come across (a
//! hostile repository's `.git/config`, for instance). Pinned through `GIT_CONFIG_COUNT`,
//! which git reads with command-line precedence, so a repository's own config cannot
//! undo it. What cannot be pinned this way (git's per-driver `textconv` and `filter`
//! commands, `diff.external`, kubeconfig exec plugins, ssh `ProxyCommand`) runs inside
//! the sandbox and so cannot write either; see `docs/sandbox.md`.

/// git settings forced for every read: no fsmonitor hook, no pager, no hooks, the plain
/// ssh, no credential helpers or signature programs from the repository, no `ext::`
/// transport, and no implicit bare repositories (a repository nested in a work tree).
pub const GIT_PINS: [(&str, &str); 11] = [
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("core.hooksPath", "/dev/null"),
    ("core.sshCommand", "ssh"),
    ("credential.helper", ""),
    ("protocol.ext.allow", "never"),
    ("gpg.program", "gpg"),
    ("gpg.ssh.program", "ssh-keygen"),
    ("gpg.x509.program", "gpgsm"),
    ("log.showSignature", "false"),
    ("safe.bareRepository", "explicit"),
];

/// Plain variables for every read.
pub const PLAIN: [(&str, &str); 8] = [
    // git status and friends do not try to refresh the index (a write) at all.
    ("GIT_OPTIONAL_LOCKS", "0"),
    ("GIT_TERMINAL_PROMPT", "0"),
    // Set and empty: git asks no askpass program, not even core.askPass.
    ("GIT_ASKPASS", ""),
    // A partial clone does not fetch missing objects behind the read's back.
    ("GIT_NO_LAZY_FETCH", "1"),
    ("MANPAGER", "cat"),
    ("SYSTEMD_PAGERSECURE", "1"),
    // Every PostgreSQL session a read opens (psql, pg_dump, pg_isready) is read-only:
    // libpq sends these options at connection start, and a statement that writes fails
    // with "cannot execute … in a read-only transaction".
    ("PGOPTIONS", "-c default_transaction_read_only=on"),
    // The MySQL and MariaDB clients read `$MYSQL_HOME/my.cnf`, where the agent makes every
    // session read-only ([`install_mysql_options`]).
    ("MYSQL_HOME", MYSQL_HOME),
];

/// The directory of the options file that makes a read's MySQL sessions read-only (root's,
/// 0755, outside every hidden directory; a read cannot change it).
pub const MYSQL_HOME: &str = "/run/vigil-agent/mysql";

/// What `$MYSQL_HOME/my.cnf` holds: the `mysql`/`mariadb` client runs this statement when
/// it connects, so a statement that writes fails ("Cannot execute statement in a READ
/// ONLY transaction").
pub const MYSQL_OPTIONS: &str = "[mysql]\ninit-command=\"SET SESSION TRANSACTION READ ONLY\"\n";

/// Write [`MYSQL_OPTIONS`] to `$MYSQL_HOME/my.cnf` (0644).
pub fn install_mysql_options() -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::path::Path::new(MYSQL_HOME);
    std::fs::create_dir_all(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755))?;
    // Written aside and renamed over, so that a client never reads a half-written file
    // (another agent on the host may be writing the same content).
    let staged = dir.join(format!("my.cnf.{}", std::process::id()));
    std::fs::write(&staged, MYSQL_OPTIONS)?;
    std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(0o644))?;
    std::fs::rename(&staged, dir.join("my.cnf"))
}

/// Where the agent keeps the copy of `[sandbox] kubeconfig` that reads use: outside every
/// hidden directory, so that a read sees it and only it.
pub const READ_KUBECONFIG: &str = "/run/vigil-agent/read.kubeconfig";

/// Copy the configured read identity to [`READ_KUBECONFIG`] (0600), or remove a copy
/// left from an earlier run when none is configured. Returns the path reads use.
pub fn install_read_kubeconfig(
    configured: Option<&std::path::Path>,
) -> std::io::Result<Option<std::path::PathBuf>> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = std::path::Path::new(READ_KUBECONFIG);
    let Some(source) = configured else {
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => return Ok(None),
        }
    };
    let text = std::fs::read(source)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let _ = std::fs::remove_file(path);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    std::io::Write::write_all(&mut file, &text)?;
    Ok(Some(path.to_owned()))
}

/// The variables to add to a read's environment, `TMPDIR` included.
pub fn vars(tmpdir: &str) -> Vec<(String, String)> {
    let mut vars: Vec<(String, String)> = PLAIN
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    vars.push(("TMPDIR".into(), tmpdir.to_owned()));
    vars.push(("GIT_CONFIG_COUNT".into(), GIT_PINS.len().to_string()));
    for (i, (key, value)) in GIT_PINS.iter().enumerate() {
        vars.push((format!("GIT_CONFIG_KEY_{i}"), (*key).to_owned()));
        vars.push((format!("GIT_CONFIG_VALUE_{i}"), (*value).to_owned()));
    }
    vars
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pin_has_a_key_and_a_value_and_the_count_matches() {
        let vars = vars("/tmp/x");
        let get = |k: &str| {
            vars.iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(get("GIT_CONFIG_COUNT").as_deref(), Some("11"));
        assert_eq!(get("GIT_CONFIG_KEY_0").as_deref(), Some("core.fsmonitor"));
        assert_eq!(get("GIT_CONFIG_VALUE_10").as_deref(), Some("explicit"));
        assert_eq!(get("TMPDIR").as_deref(), Some("/tmp/x"));
        assert_eq!(
            get("PGOPTIONS").as_deref(),
            Some("-c default_transaction_read_only=on")
        );
        assert_eq!(get("MYSQL_HOME").as_deref(), Some(MYSQL_HOME));
        assert!(MYSQL_OPTIONS.contains("READ ONLY"));
    }
}
