//! The seccomp half of the read sandbox: a filter that answers `EPERM` to the system
//! calls a read never needs — mounting, rebooting, loading kernel code, changing the
//! clock or the host name, tracing or writing other processes, namespaces, keyrings,
//! file metadata changes (mode, owner, extended attributes, times), and clearing the
//! kernel log — and allows everything else.

use super::SandboxError;
use seccompiler::{BpfProgram, sock_filter};
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
pub const DENIED_SYSLOG_ACTIONS: [u32; 5] = [4, 5, 6, 7, 8];

/// `seccomp_data` offsets: the system call number, the audit architecture, and the low
/// 32 bits of the first argument (little-endian: every architecture the agent builds for).
const NR: u32 = 0;
const ARCH: u32 = 4;
const ARG0_LOW: u32 = 16;

/// On x86_64, system call numbers of the x32 ABI have this bit set.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// The audit architecture of the native system call ABI (`AUDIT_ARCH_*`).
fn audit_arch() -> Result<u32, SandboxError> {
    match std::env::consts::ARCH {
        "x86_64" => Ok(0xC000_003E),
        "aarch64" => Ok(0xC000_00B7),
        "riscv64" => Ok(0xC000_00F3),
        other => Err(format!("seccomp: unsupported architecture {other}").into()),
    }
}

// Classic BPF opcodes (`linux/filter.h`), as the `code` field takes them.
const LD_W_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
const JEQ_K: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
#[cfg(target_arch = "x86_64")]
const JGE_K: u16 = (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16;
const RET_K: u16 = (libc::BPF_RET | libc::BPF_K) as u16;

const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
const DENY: u32 = libc::SECCOMP_RET_ERRNO | (libc::EPERM.cast_unsigned() & libc::SECCOMP_RET_DATA);
const KILL: u32 = libc::SECCOMP_RET_KILL_PROCESS;

fn stmt(code: u16, k: u32) -> sock_filter {
    sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

/// The filter for this machine's architecture, laid out so that the kernel can tell, for
/// every system call number, that the program allows it without looking at arguments: it
/// then skips the program for those calls altogether (the seccomp action cache, Linux 5.11
/// and later). In order:
///
/// 1. another architecture (a 32-bit ABI): kill the process;
/// 2. (x86_64) an x32 system call: `EPERM`;
/// 3. one comparison per refused call number, each jumping to `EPERM`;
/// 4. `syslog(2)`: its first argument is compared with [`DENIED_SYSLOG_ACTIONS`]; the one
///    place that reads an argument, last so that it cannot spoil the cache for the rest;
/// 5. everything else: allow.
pub fn program() -> Result<BpfProgram, SandboxError> {
    let mut numbers: Vec<u32> = denied()
        .into_iter()
        .map(|(name, nr)| {
            u32::try_from(nr)
                .map_err(|_| SandboxError::from(format!("seccomp: bad number for {name}")))
        })
        .collect::<Result<_, _>>()?;
    numbers.sort_unstable();
    numbers.dedup();
    let syslog = u32::try_from(libc::SYS_syslog).map_err(|_| "seccomp: bad syslog number")?;
    let x32 = usize::from(cfg!(target_arch = "x86_64"));
    // The program's length, so that every jump can be aimed at the last instruction.
    let len = 4 + x32 + numbers.len() + 3 + DENIED_SYSLOG_ACTIONS.len() + 2;
    let deny_at = len - 1;
    let mut p: Vec<sock_filter> = Vec::with_capacity(len);
    // A comparison that jumps `jt` ahead when it holds, else falls through.
    let jump = |code, k, jt| sock_filter { code, jt, jf: 0, k };
    // A comparison that jumps to the final `EPERM` when it holds.
    let deny_if = |p: &mut Vec<sock_filter>, code, k| -> Result<(), SandboxError> {
        let jt = u8::try_from(deny_at - p.len() - 1)
            .map_err(|_| SandboxError::from("seccomp: the program is too long"))?;
        p.push(jump(code, k, jt));
        Ok(())
    };
    p.push(stmt(LD_W_ABS, ARCH));
    p.push(jump(JEQ_K, audit_arch()?, 1));
    p.push(stmt(RET_K, KILL));
    p.push(stmt(LD_W_ABS, NR));
    #[cfg(target_arch = "x86_64")]
    deny_if(&mut p, JGE_K, X32_SYSCALL_BIT)?;
    for nr in numbers {
        deny_if(&mut p, JEQ_K, nr)?;
    }
    p.push(jump(JEQ_K, syslog, 1));
    p.push(stmt(RET_K, ALLOW));
    p.push(stmt(LD_W_ABS, ARG0_LOW));
    for action in DENIED_SYSLOG_ACTIONS {
        deny_if(&mut p, JEQ_K, action)?;
    }
    p.push(stmt(RET_K, ALLOW));
    p.push(stmt(RET_K, DENY));
    debug_assert_eq!(p.len(), len);
    Ok(p)
}

/// Install the filter on the calling thread (needs no_new_privs or CAP_SYS_ADMIN). The
/// program is compiled once per process and kept: the agent confines a thread per read.
pub fn apply() -> Result<(), SandboxError> {
    static PROGRAM: OnceLock<Result<BpfProgram, SandboxError>> = OnceLock::new();
    let program = PROGRAM
        .get_or_init(program)
        .as_ref()
        .map_err(Clone::clone)?;
    seccompiler::apply_filter(program).map_err(|e| format!("seccomp apply: {e}").into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_filter_compiles_and_names_each_call_once() {
        let program = program().unwrap();
        let list = denied();
        let mut numbers: Vec<i64> = list.iter().map(|(_, nr)| *nr).collect();
        numbers.sort_unstable();
        numbers.dedup();
        assert_eq!(numbers.len(), list.len());
        // One comparison per call, and every jump lands inside the program.
        let compares = program.iter().filter(|i| i.code == JEQ_K).count();
        assert_eq!(compares, 1 + list.len() + 1 + DENIED_SYSLOG_ACTIONS.len());
        let jumps = program
            .iter()
            .enumerate()
            .filter(|(_, i)| i.code & 0x07 == 0x05);
        for (at, i) in jumps {
            assert!(at + 1 + usize::from(i.jt) < program.len(), "{at}");
            assert!(at + 1 + usize::from(i.jf) < program.len(), "{at}");
        }
        assert_eq!(program.last().map(|i| i.k), Some(DENY));
    }

    /// The filter on a thread of its own: calls on the list fail with `EPERM` (here the
    /// metadata changes, which Landlock does not cover), everything else still works.
    #[test]
    fn the_kernel_refuses_the_listed_calls_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        let outcome = std::thread::spawn(move || {
            rustix::thread::set_no_new_privs(true).unwrap();
            apply().unwrap();
            let chmod = std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600));
            let times = std::fs::File::open(&file)
                .and_then(|f| f.set_modified(std::time::SystemTime::UNIX_EPOCH));
            let chown = std::os::unix::fs::chown(&file, None, None);
            let read = std::fs::read(&file);
            let write = std::fs::write(&file, b"y");
            (chmod, times, chown, read, write)
        })
        .join()
        .unwrap();
        let (chmod, times, chown, read, write) = outcome;
        for refused in [chmod, times, chown] {
            assert_eq!(refused.unwrap_err().raw_os_error(), Some(libc::EPERM));
        }
        assert_eq!(read.unwrap(), b"x");
        write.unwrap();
        // This thread was not confined.
        let dir2 = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir2.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    }
}
