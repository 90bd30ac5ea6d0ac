//! The registry of paths that reads on this host must never see, beyond what each agent
//! hides by itself: a controller writes its data directory and key files into a list under
//! [`REGISTRY_DIR`] when it starts, so that any agent on the same host (the `make run`
//! default, and common in small installs) hides them from its reads, whatever directory
//! the controller was given. One file per controller process, `<name>-<pid>.list`, one
//! absolute path per line.

/// Where the lists live (root's runtime directory; gone at reboot).
pub const REGISTRY_DIR: &str = "/run/vigil/hide.d";

/// The suffix of a list file.
pub const LIST_SUFFIX: &str = ".list";

/// The paths in a list: absolute, one per line; blank lines and `#` comments skipped,
/// anything else ignored.
pub fn parse_list(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| l.starts_with('/') && *l != "/" && !l.split('/').any(|c| c == ".."))
        .map(str::to_owned)
        .collect()
}

/// The process id in a list's file name (`controller-1234.list`), to drop lists whose
/// writer has gone.
pub fn list_pid(file_name: &str) -> Option<u32> {
    file_name
        .strip_suffix(LIST_SUFFIX)?
        .rsplit_once('-')?
        .1
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_keep_absolute_paths_only() {
        let text = "# controller\n/var/lib/x\n\nrelative\n/\n/a/../b\n  /srv/key.pem  \n";
        assert_eq!(parse_list(text), vec!["/var/lib/x", "/srv/key.pem"]);
        assert_eq!(list_pid("controller-42.list"), Some(42));
        assert_eq!(list_pid("controller.list"), None);
        assert_eq!(list_pid("controller-42.txt"), None);
    }
}
