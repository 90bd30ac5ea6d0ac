//! What reads never see: the paths an agent hides are empty masks in the reads' mount
//! namespace (a directory an empty one, a file empty), the agent's own threads still see
//! them, and a mask that the host removes behind the namespace's back (a file renamed
//! over a masked one) is noticed before the next read, which then runs in a fresh
//! namespace. Needs root (the namespace needs `CAP_SYS_ADMIN`): skipped otherwise, but
//! under CI it must run.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::support;

use vigil_agent::exec::sandbox::HiddenPaths;
use vigil_agent::exec::sandbox::thread;
use vigil_shared::policy::Reach;

async fn read(script: &str, scratch: &std::path::Path) -> (i32, String) {
    let out = support::read(script, Reach::Local, scratch, false).await;
    (out.code, out.text())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hidden_paths_are_empty_to_reads_and_stay_hidden_when_replaced() {
    if !support::root_or_skip("the hiding tests") {
        return;
    }
    let _turn = support::sandbox_turn().await;
    let base = tempfile::tempdir().unwrap();
    let scratch = base.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let state = base.path().join("state");
    std::fs::create_dir(&state).unwrap();
    std::fs::write(state.join("admin.token"), "vat_SECRET-IN-DIR").unwrap();
    let keyfile = base.path().join("grant.key");
    std::fs::write(&keyfile, "SECRET-IN-FILE-1").unwrap();
    let visible = base.path().join("visible.txt");
    std::fs::write(&visible, "plain").unwrap();
    let users = base.path().join("home");
    std::fs::create_dir_all(users.join("alice/.ssh")).unwrap();
    std::fs::write(users.join("alice/.ssh/id_ed25519"), "SECRET-SSH").unwrap();

    // Before anything is hidden, a read sees the files (so the checks below can fail).
    let (_, before) = read(&format!("cat {}", keyfile.display()), &scratch).await;
    assert!(before.contains("SECRET-IN-FILE-1"), "{before}");

    let hidden = HiddenPaths::new(
        [state.clone()],
        false,
        &[
            keyfile.display().to_string(),
            format!("{}/*/.ssh", users.display()),
        ],
    )
    .unwrap()
    .with_registry(None);
    thread::set_hidden(hidden);

    let script = format!(
        "cat {s}/admin.token; ls -A {s}; cat {k}; cat {v}; cat {u}/alice/.ssh/id_ed25519; \
         cat /proc/1/root{s}/admin.token; timeout 3 cat /proc/kmsg; echo kmsg=$?; echo done",
        s = state.display(),
        k = keyfile.display(),
        v = visible.display(),
        u = users.display(),
    );
    let (code, out) = read(&script, &scratch).await;
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("plain"),
        "a visible file is still readable: {out}"
    );
    assert!(out.contains("done"), "{out}");
    assert!(!out.contains("SECRET"), "a hidden file leaked: {out}");
    assert!(
        !out.contains("admin.token\n"),
        "the masked directory is empty: {out}"
    );
    // The agent itself still sees everything.
    assert_eq!(
        std::fs::read_to_string(state.join("admin.token")).unwrap(),
        "vat_SECRET-IN-DIR"
    );

    // The host replaces the hidden file by renaming a new one over it (as passwd does):
    // the kernel drops the mask in the reads' namespace; the next read must notice.
    let fresh = base.path().join("grant.key.new");
    std::fs::write(&fresh, "SECRET-IN-FILE-2").unwrap();
    std::fs::rename(&fresh, &keyfile).unwrap();
    // A hidden directory that appears after the namespace was made.
    std::fs::create_dir_all(users.join("bob/.ssh")).unwrap();
    std::fs::write(users.join("bob/.ssh/id_rsa"), "SECRET-LATE").unwrap();
    let script = format!(
        "cat {k}; cat {u}/bob/.ssh/id_rsa; echo done",
        k = keyfile.display(),
        u = users.display()
    );
    let (code, out) = read(&script, &scratch).await;
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("done"), "{out}");
    assert!(
        !out.contains("SECRET"),
        "a replaced or new hidden file leaked: {out}"
    );
}
