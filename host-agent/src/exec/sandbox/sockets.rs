//! Which sockets a read may create, by its [`Reach`] (`vigil_shared::policy::reach`): a
//! second seccomp filter, added by each read thread on top of the base filter, answers
//! `EPERM` to `socket(2)` for every address family the reach does not allow. Netlink is
//! always allowed (`ip`, `ss` read through it; changing anything needs `CAP_NET_ADMIN`,
//! which a read does not have); UNIX sockets from [`Reach::Sockets`]; IPv4 and IPv6 only
//! with [`Reach::Network`], which adds no filter. Raw packet, VSOCK, Bluetooth and every
//! other family are refused whatever the reach. `socketpair(2)` stays allowed: an
//! anonymous pair reaches nothing.
//!
//! This is seccomp rather than Landlock's network rules because seccomp covers UDP,
//! ICMP and UNIX sockets as well as TCP, and is there on every kernel the agent runs a
//! sandbox on; the base filter already refuses every system call of a foreign ABI, so
//! this one compares only the native `socket` number and its first argument.

use super::SandboxError;
use seccompiler::{BpfProgram, sock_filter};
use std::sync::OnceLock;
pub use vigil_shared::policy::Reach;

const NR: u32 = 0;
const ARG0_LOW: u32 = 16;
const LD_W_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
const JEQ_K: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
const RET_K: u16 = (libc::BPF_RET | libc::BPF_K) as u16;
const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
const DENY: u32 = libc::SECCOMP_RET_ERRNO | (libc::EPERM.cast_unsigned() & libc::SECCOMP_RET_DATA);

/// The Landlock ABI that keeps a read from abstract UNIX sockets made outside it
/// (containerd's shims and X servers listen there, and no mount can mask them).
pub const ABSTRACT_SCOPE_ABI: u32 = 6;

/// Why a read of `reach` must not run on a kernel with Landlock ABI `abi`: one that may
/// open UNIX sockets needs the abstract-socket scope. `None` when it may run.
pub fn unscoped(reach: Reach, abi: u32) -> Option<SandboxError> {
    (reach != Reach::Local && abi < ABSTRACT_SCOPE_ABI).then(|| {
        SandboxError::Unavailable(format!(
            "this kernel's Landlock (ABI {abi}, before {ABSTRACT_SCOPE_ABI}) cannot keep a \
             read from abstract UNIX sockets, so reads that talk to daemons or the network \
             are refused (start the agent with --allow-unsandboxed-reads to run them anyway)"
        ))
    })
}

/// The address families `reach` may open; `None` for every family (no filter).
pub fn families(reach: Reach) -> Option<Vec<i32>> {
    match reach {
        Reach::Local => Some(vec![libc::AF_NETLINK]),
        Reach::Sockets => Some(vec![libc::AF_NETLINK, libc::AF_UNIX]),
        Reach::Network => None,
    }
}

/// The filter for `reach`: `socket(family, …)` with a family outside [`families`] answers
/// `EPERM`; every other call, and every call but `socket`, is allowed.
pub fn program(reach: Reach) -> Result<Option<BpfProgram>, SandboxError> {
    let Some(allowed) = families(reach) else {
        return Ok(None);
    };
    let socket = u32::try_from(libc::SYS_socket).map_err(|_| "seccomp: bad socket number")?;
    let jump = |code, k, jt, jf| sock_filter { code, jt, jf, k };
    let stmt = |code, k| jump(code, k, 0, 0);
    // Layout: [ld nr] [jeq socket] [ld arg0] [jeq family]… [ret deny] [ret allow]
    let len = 3 + allowed.len() + 2;
    let allow_at = len - 1;
    let mut p = Vec::with_capacity(len);
    p.push(stmt(LD_W_ABS, NR));
    let to_allow = u8::try_from(allow_at - 2).map_err(|_| "seccomp: program too long")?;
    p.push(jump(JEQ_K, socket, 0, to_allow));
    p.push(stmt(LD_W_ABS, ARG0_LOW));
    for family in allowed {
        let jt = u8::try_from(allow_at - p.len() - 1).map_err(|_| "seccomp: program too long")?;
        p.push(jump(JEQ_K, family.cast_unsigned(), jt, 0));
    }
    p.push(stmt(RET_K, DENY));
    p.push(stmt(RET_K, ALLOW));
    debug_assert_eq!(p.len(), len);
    Ok(Some(p))
}

/// Add the filter for `reach` to the calling thread (which has no_new_privs already).
pub fn apply(reach: Reach) -> Result<(), SandboxError> {
    static PROGRAMS: OnceLock<[Result<Option<BpfProgram>, SandboxError>; 3]> = OnceLock::new();
    let programs = PROGRAMS.get_or_init(|| {
        [
            program(Reach::Local),
            program(Reach::Sockets),
            program(Reach::Network),
        ]
    });
    let index = match reach {
        Reach::Local => 0,
        Reach::Sockets => 1,
        Reach::Network => 2,
    };
    match &programs[index] {
        Ok(Some(program)) => {
            seccompiler::apply_filter(program).map_err(|e| format!("seccomp apply: {e}").into())
        }
        Ok(None) => Ok(()),
        Err(e) => Err(e.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixDatagram;

    fn try_families(reach: Reach) -> (bool, bool, bool) {
        std::thread::spawn(move || {
            rustix::thread::set_no_new_privs(true).unwrap();
            apply(reach).unwrap();
            let unix = UnixDatagram::unbound().is_ok();
            let inet = std::net::UdpSocket::bind("127.0.0.1:0").is_ok();
            let pair = UnixDatagram::pair().is_ok();
            (unix, inet, pair)
        })
        .join()
        .unwrap()
    }

    #[test]
    fn each_reach_opens_only_its_families() {
        assert_eq!(try_families(Reach::Local), (false, false, true));
        assert_eq!(try_families(Reach::Sockets), (true, false, true));
        assert_eq!(try_families(Reach::Network), (true, true, true));
        // This thread was not confined.
        assert!(std::net::UdpSocket::bind("127.0.0.1:0").is_ok());
    }

    #[test]
    fn reads_that_open_sockets_need_the_abstract_socket_scope() {
        assert_eq!(unscoped(Reach::Local, 1), None);
        assert_eq!(unscoped(Reach::Sockets, 6), None);
        assert_eq!(unscoped(Reach::Network, 7), None);
        let why = unscoped(Reach::Sockets, 5).unwrap();
        assert!(
            matches!(&why, SandboxError::Unavailable(text) if text.contains("abstract")),
            "{why:?}"
        );
        assert!(unscoped(Reach::Network, 4).is_some());
    }

    #[test]
    fn every_jump_lands_inside_the_program() {
        for reach in [Reach::Local, Reach::Sockets] {
            let p = program(reach).unwrap().unwrap();
            for (at, i) in p.iter().enumerate().filter(|(_, i)| i.code == JEQ_K) {
                assert!(at + 1 + usize::from(i.jt) < p.len());
                assert!(at + 1 + usize::from(i.jf) < p.len());
            }
        }
        assert!(program(Reach::Network).unwrap().is_none());
    }
}
