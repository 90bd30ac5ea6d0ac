//! The descriptor limit: one socket per simulated agent, so the soft `RLIMIT_NOFILE` is
//! raised to the hard one at start, and a hard limit below what the run needs is an error
//! that says how to fix it.

use nix::sys::resource::{Resource, getrlimit, setrlimit};
use tracing::info;

use super::{Error, Result};

/// Descriptors the simulator needs besides its agents' sockets.
const SPARE: u64 = 64;

/// Raises the soft limit to the hard one; fails when even that is too low for `agents`.
pub fn raise_nofile(agents: usize) -> Result<u64> {
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE)
        .map_err(|e| Error::Limit(format!("cannot read RLIMIT_NOFILE: {e}")))?;
    if soft < hard {
        setrlimit(Resource::RLIMIT_NOFILE, hard, hard)
            .map_err(|e| Error::Limit(format!("cannot raise RLIMIT_NOFILE to {hard}: {e}")))?;
        info!(from = soft, to = hard, "raised the open-file limit");
    }
    let needed = agents as u64 + SPARE;
    if hard < needed {
        return Err(Error::Limit(format!(
            "{agents} agents need about {needed} open files but the hard limit is {hard}: \
             raise it (as root `ulimit -Hn {needed}`, LimitNOFILE= in a systemd unit, or \
             /etc/security/limits.conf) or simulate fewer agents"
        )));
    }
    Ok(hard)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raises_to_the_hard_limit_and_refuses_more_than_it() {
        let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
        assert_eq!(raise_nofile(1).unwrap(), hard);
        assert_eq!(getrlimit(Resource::RLIMIT_NOFILE).unwrap().0, hard);
        if hard < u64::MAX / 2 {
            let error = raise_nofile(usize::try_from(hard).unwrap()).unwrap_err();
            assert!(error.to_string().contains("hard limit is"), "{error}");
        }
    }
}
