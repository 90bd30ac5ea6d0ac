//! `vigil-sandbox`: the small launcher of the agent's host reads. The agent starts
//! `vigil-sandbox --scratch DIR -- bash -c CMD` for every read on its own host; it drops
//! capabilities, sets no_new_privs, Landlock and seccomp on itself, then execs the
//! command (`vigil_agent::exec::sandbox::launcher`). `vigil-sandbox --probe` prints what
//! the kernel enforced as JSON.
//!
//! It is the same code as `vigil-agent sandbox-exec`, in a binary that links only the
//! sandbox (no clap, logging, runtime, TLS or clients), because starting the large agent
//! binary for every read cost about 2 ms (BENCHMARKS.md, "Read sandbox").

use std::process::ExitCode;

fn main() -> ExitCode {
    let args = std::env::args_os().skip(1);
    vigil_agent::exec::sandbox::launcher::main("vigil-sandbox", args)
}
