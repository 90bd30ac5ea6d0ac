//! Build script of the agent. Its release binaries are linked without a symbol table
//! (`-Wl,--strip-all`, unless `VIGIL_AGENT_KEEP_SYMBOLS=1`: the release profile strips only
//! debug information, so a profiling build with symbols has the same symbol names).
//!
//! The release `vigil-agent` is also linked with LLVM's linker and the hot-code order in
//! `link-order.txt`: the functions the agent runs while it starts, stays connected and runs
//! a read are laid out next to each other, so an idle agent keeps fewer code pages resident
//! (BENCHMARKS.md, "Agent size and idle memory"). The order is made by
//! `host-agent/benches/link-order.sh`; a stale entry is skipped, never an error. Without
//! `ld.lld` on the build machine, or with `VIGIL_AGENT_LINK_ORDER=0`, the agent is linked
//! as before, with a warning.

use std::path::PathBuf;
use std::process::{Command, Stdio};

fn main() {
    println!("cargo:rerun-if-changed=link-order.txt");
    println!("cargo:rerun-if-env-changed=VIGIL_AGENT_LINK_ORDER");
    println!("cargo:rerun-if-env-changed=VIGIL_AGENT_KEEP_SYMBOLS");
    if std::env::var("PROFILE").as_deref() != Ok("release")
        || std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux")
    {
        return;
    }
    if std::env::var("VIGIL_AGENT_KEEP_SYMBOLS").as_deref() != Ok("1") {
        println!("cargo:rustc-link-arg-bins=-Wl,--strip-all");
    }
    if std::env::var("VIGIL_AGENT_LINK_ORDER").as_deref() == Ok("0") {
        return;
    }
    let Some(dir) = std::env::var_os("CARGO_MANIFEST_DIR") else {
        return;
    };
    let order = PathBuf::from(dir).join("link-order.txt");
    if !order.is_file() {
        return;
    }
    let lld = Command::new("ld.lld")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !lld {
        println!(
            "cargo:warning=ld.lld is not installed: the agent is linked without its hot-code \
             order, so it idles with more memory (apt-get install lld)"
        );
        return;
    }
    for arg in [
        "-fuse-ld=lld".to_owned(),
        format!("-Wl,--symbol-ordering-file={}", order.display()),
        "-Wl,--no-warn-symbol-ordering".to_owned(),
    ] {
        println!("cargo:rustc-link-arg-bin=vigil-agent={arg}");
    }
}
