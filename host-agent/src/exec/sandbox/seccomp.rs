//! The seccomp half of the read sandbox: a filter that answers `EPERM` to the system
//! calls a read never needs — mounting, rebooting, loading kernel code, changing the
//! clock or the host name, tracing or writing other processes, namespaces, keyrings,
//! file metadata changes (mode, owner, extended attributes, times), and clearing the
//! kernel log — and allows everything else.

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// System calls refused whatever their arguments, by name (for the docs) and number.
pub fn denied() -> Vec<(&'static str, i64)> {
    let mut list = vec![
        ("mount", libc::SYS_mount),
        ("umount2", libc::SYS_umount2),
        ("move_mount", libc::SYS_move_mount),
        ("open_tree", libc::SYS_open_tree),
        ("fsopen", libc::SYS_fsopen),
        ("fsmount", libc::SYS_fsmount),
        ("fsconfig", libc::SYS_fsconfig),
        ("mount_setattr", libc::SYS_mount_setattr),
        ("pivot_root", libc::SYS_pivot_root),
        ("chroot", libc::SYS_chroot),
        ("reboot", libc::SYS_reboot),
        ("kexec_load", libc::SYS_kexec_load),
        ("kexec_file_load", libc::SYS_kexec_file_load),
        ("init_module", libc::SYS_init_module),
        ("finit_module", libc::SYS_finit_module),
        ("delete_module", libc::SYS_delete_module),
        ("swapon", libc::SYS_swapon),
        ("swapoff", libc::SYS_swapoff),
        ("sethostname", libc::SYS_sethostname),
        ("setdomainname", libc::SYS_setdomainname),
        ("settimeofday", libc::SYS_settimeofday),
        ("clock_settime", libc::SYS_clock_settime),
        ("clock_adjtime", libc::SYS_clock_adjtime),
        ("adjtimex", libc::SYS_adjtimex),
        ("bpf", libc::SYS_bpf),
        ("ptrace", libc::SYS_ptrace),
        ("process_vm_writev", libc::SYS_process_vm_writev),
        ("pidfd_getfd", libc::SYS_pidfd_getfd),
        ("process_madvise", libc::SYS_process_madvise),
        ("keyctl", libc::SYS_keyctl),
        ("add_key", libc::SYS_add_key),
        ("request_key", libc::SYS_request_key),
        ("unshare", libc::SYS_unshare),
        ("setns", libc::SYS_setns),
        ("open_by_handle_at", libc::SYS_open_by_handle_at),
        ("name_to_handle_at", libc::SYS_name_to_handle_at),
        ("acct", libc::SYS_acct),
        ("quotactl", libc::SYS_quotactl),
        ("perf_event_open", libc::SYS_perf_event_open),
        ("userfaultfd", libc::SYS_userfaultfd),
        ("io_uring_setup", libc::SYS_io_uring_setup),
        ("io_uring_enter", libc::SYS_io_uring_enter),
        ("io_uring_register", libc::SYS_io_uring_register),
        ("fanotify_init", libc::SYS_fanotify_init),
        ("vhangup", libc::SYS_vhangup),
        ("fchmod", libc::SYS_fchmod),
        ("fchmodat", libc::SYS_fchmodat),
        ("fchown", libc::SYS_fchown),
        ("fchownat", libc::SYS_fchownat),
        ("setxattr", libc::SYS_setxattr),
        ("lsetxattr", libc::SYS_lsetxattr),
        ("fsetxattr", libc::SYS_fsetxattr),
        ("removexattr", libc::SYS_removexattr),
        ("lremovexattr", libc::SYS_lremovexattr),
        ("fremovexattr", libc::SYS_fremovexattr),
        ("utimensat", libc::SYS_utimensat),
        ("fchmodat2", libc::SYS_fchmodat2),
    ];
    #[cfg(target_arch = "x86_64")]
    list.extend([
        ("chmod", libc::SYS_chmod),
        ("chown", libc::SYS_chown),
        ("lchown", libc::SYS_lchown),
        ("utime", libc::SYS_utime),
        ("utimes", libc::SYS_utimes),
        ("futimesat", libc::SYS_futimesat),
        ("ioperm", libc::SYS_ioperm),
        ("iopl", libc::SYS_iopl),
        ("uselib", libc::SYS_uselib),
    ]);
    list
}

/// `syslog(2)` actions that change the kernel log or the console: read-clear, clear,
/// console off, console on, console level.
pub const DENIED_SYSLOG_ACTIONS: [u64; 5] = [4, 5, 6, 7, 8];

/// The compiled filter for this machine's architecture.
pub fn program() -> Result<BpfProgram, String> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|e| format!("seccomp: unsupported architecture: {e}"))?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        denied().into_iter().map(|(_, nr)| (nr, vec![])).collect();
    let syslog = DENIED_SYSLOG_ACTIONS
        .iter()
        .map(|action| {
            SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, *action)
                .and_then(|c| SeccompRule::new(vec![c]))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("seccomp rule: {e}"))?;
    rules.insert(libc::SYS_syslog, syslog);
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM.cast_unsigned()),
        arch,
    )
    .map_err(|e| format!("seccomp filter: {e}"))?;
    BpfProgram::try_from(filter).map_err(|e| format!("seccomp compile: {e}"))
}

/// Install the filter on the calling thread (needs no_new_privs or CAP_SYS_ADMIN). The
/// program is compiled once per process and kept: the agent confines a thread per read.
pub fn apply() -> Result<(), String> {
    static PROGRAM: OnceLock<Result<BpfProgram, String>> = OnceLock::new();
    let program = PROGRAM.get_or_init(program).as_ref()?;
    seccompiler::apply_filter(program).map_err(|e| format!("seccomp apply: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_compiles_and_names_each_call_once() {
        assert!(program().is_ok_and(|p| !p.is_empty()));
        let list = denied();
        let mut numbers: Vec<i64> = list.iter().map(|(_, nr)| *nr).collect();
        numbers.sort_unstable();
        numbers.dedup();
        assert_eq!(numbers.len(), list.len());
    }
}
