//! Paths reads must not touch: [`EFFECT_FILES`], whose reading acts, and the registry of
//! paths that reads on this host must never see, beyond what each agent
//! hides by itself: a controller writes its data directory and key files into a list under
//! [`REGISTRY_DIR`] when it starts, so that any agent on the same host (the `make run`
//! default, and common in small installs) hides them from its reads, whatever directory
//! the controller was given. One file per controller process, `<name>-<pid>.list`, one
//! absolute path per line.

/// The source name of the empty tmpfs the agent's read sandbox lays over each hidden
/// directory, as `/proc/self/mountinfo` and `df` show it.
pub const MASK_SOURCE: &str = "vigil-hidden";

/// Files whose very opening or reading acts: a watchdog arms when opened (and may reboot
/// the host when closed without its magic character), `/proc/kmsg` hands each kernel
/// message to one reader only (the host's syslog daemon loses it), tracing pipes consume
/// their buffers, a serial port's open toggles its control lines (resetting boards), and
/// cameras and microphones record. The classifier refuses reads that name them and the
/// agent's read sandbox masks them; a trailing `*` matches any rest of the name.
pub const EFFECT_FILES: &[&str] = &[
    "/dev/watchdog*",
    "/proc/kmsg",
    "/sys/kernel/debug",
    "/sys/kernel/tracing",
    "/dev/ttyS*",
    "/dev/ttyUSB*",
    "/dev/ttyACM*",
    "/dev/video*",
    "/dev/snd",
];

/// The effect file `path` names or lies under, if any. `path` may be a glob: its fixed
/// part before the first pattern character is compared, so `/dev/watch*` matches too.
pub fn effect_file(path: &str) -> Option<&'static str> {
    let fixed = path.split(['*', '?', '[']).next().unwrap_or(path);
    let globbed = fixed.len() < path.len();
    EFFECT_FILES.iter().copied().find(|pattern| {
        let (stem, open) = match pattern.strip_suffix('*') {
            Some(stem) => (stem, true),
            None => (*pattern, false),
        };
        let under = fixed == stem
            || fixed.starts_with(&format!("{stem}/"))
            || (open && fixed.starts_with(stem));
        under || (globbed && stem.starts_with(fixed) && fixed.len() > 1)
    })
}

/// Where the lists live (root's runtime directory; gone at reboot).
pub const REGISTRY_DIR: &str = "/run/vigil/hide.d";

/// The suffix of a list file.
pub const LIST_SUFFIX: &str = ".list";

/// Why a hidden-path pattern is not accepted: it must be absolute, not `/`, without `.`
/// or `..` components; a component may use `*` as a wildcard (nothing else).
pub fn check_pattern(pattern: &str) -> Result<(), String> {
    let ok = pattern.starts_with('/')
        && pattern != "/"
        && !pattern
            .split('/')
            .any(|c| c == "." || c == ".." || (c.contains('*') && c.contains(['?', '['])))
        && !pattern.contains(['\n', '\0']);
    if ok {
        Ok(())
    } else {
        Err(format!(
            "hidden path {pattern:?} must be an absolute path other than /, without . or .. \
             components (a component may use * as a wildcard)"
        ))
    }
}

/// The paths in a list: one per line, each passing [`check_pattern`]; blank lines, `#`
/// comments and anything else are skipped.
pub fn parse_list(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| check_pattern(l).is_ok())
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

    #[test]
    fn effect_files_match_by_name_prefix_and_glob() {
        for path in [
            "/dev/watchdog",
            "/dev/watchdog0",
            "/proc/kmsg",
            "/sys/kernel/debug/tracing/trace_pipe",
            "/dev/ttyUSB0",
            "/dev/snd/pcmC0D0c",
            "/dev/watch*",
            "/sys/kernel/*",
        ] {
            assert!(effect_file(path).is_some(), "{path}");
        }
        for path in [
            "/dev/null",
            "/proc/kmsgx",
            "/dev/tty",
            "/etc/hosts",
            "/dev/sndx",
            "/*",
        ] {
            assert!(effect_file(path).is_none(), "{path}");
        }
    }
}
