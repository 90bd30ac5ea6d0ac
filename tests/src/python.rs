//! Python virtual environments with packages from PyPI, for the suites that drive Vigil
//! with official Python SDKs and servers (`openai`, `mcp`). Each set of packages gets one
//! environment under `target/<profile>/python/`, made once and reused by later runs (a
//! marker file names what was installed). Without python3 a suite skips, except under CI.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, PoisonError};

/// The official MCP SDK, for the MCP suites and the evaluation.
pub fn mcp_sdk() -> Option<PathBuf> {
    venv("mcp", &["mcp>=2.3,<2.4"])
}

static MADE: Mutex<Option<HashMap<String, PathBuf>>> = Mutex::new(None);

/// The `python` of an environment named `name` with `packages` (pip requirement
/// specifiers) installed; `None` when python3 is missing outside CI (the caller skips).
pub fn venv(name: &str, packages: &[&str]) -> Option<PathBuf> {
    let mut made = MADE.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(python) = made.get_or_insert_with(HashMap::new).get(name) {
        return Some(python.clone());
    }
    if Command::new("python3").arg("--version").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "python3 is needed under CI"
        );
        eprintln!("skipping: needs python3");
        return None;
    }
    let target = crate::bin("vigil-controller")
        .parent()
        .expect("target dir")
        .to_owned();
    let dir = target.join("python").join(name);
    let python = dir.join("bin/python");
    let marker = dir.join(".vigil-installed");
    let wanted = packages.join("\n");
    if std::fs::read_to_string(&marker).ok().as_deref() != Some(wanted.as_str()) {
        install(&dir, packages);
        std::fs::write(&marker, &wanted).expect("write the venv marker");
    }
    made.get_or_insert_with(HashMap::new)
        .insert(name.to_owned(), python.clone());
    Some(python)
}

fn install(dir: &Path, packages: &[&str]) {
    let _ = std::fs::remove_dir_all(dir);
    let made = Command::new("python3")
        .arg("-m")
        .arg("venv")
        .arg(dir)
        .status()
        .expect("run python3 -m venv");
    assert!(
        made.success(),
        "python3 -m venv failed (apt-get install python3-venv)"
    );
    let pip = Command::new(dir.join("bin/pip"))
        .args(["install", "--quiet", "--disable-pip-version-check"])
        .args(packages)
        .output()
        .expect("run pip");
    assert!(
        pip.status.success(),
        "pip install {packages:?}: {}",
        String::from_utf8_lossy(&pip.stderr)
    );
}
