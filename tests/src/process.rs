//! Child processes, free ports and waiting.

use std::fs::File;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The path of a workspace binary built next to the test executable.
pub fn bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    // target/<profile>/deps/<test> → target/<profile>/<name>; a binary of this crate
    // (vigil-eval) sits in target/<profile> itself.
    let parent = exe.parent().expect("exe dir");
    let dir = if parent.ends_with("deps") {
        parent.parent().expect("target dir")
    } else {
        parent
    };
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is not built; run `cargo build --workspace` (make test does)",
        path.display()
    );
    path
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    // The kernel may offer a port it offered a moment ago (nothing listens on it yet), and
    // every suite shares one test process: hand each port out once.
    static GIVEN: std::sync::Mutex<std::collections::BTreeSet<u16>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    loop {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .expect("bind")
            .local_addr()
            .expect("addr")
            .port();
        let mut given = GIVEN
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if given.insert(port) {
            return port;
        }
    }
}

/// Poll `check` until it is true or `timeout` passes; returns whether it became true.
pub async fn wait_until<F, Fut>(timeout: Duration, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if check().await {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// PIDs of processes whose command line contains `marker` (read from /proc).
pub fn processes_matching(marker: &str) -> Vec<u32> {
    let me = std::process::id();
    std::fs::read_dir("/proc")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
                .filter(|pid| *pid != me)
                .filter(|pid| {
                    std::fs::read(format!("/proc/{pid}/cmdline"))
                        .map(|c| {
                            String::from_utf8_lossy(&c)
                                .replace('\0', " ")
                                .contains(marker)
                        })
                        .unwrap_or(false)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A child process that is killed when dropped; its output goes to a log file.
#[derive(Debug)]
pub struct Proc {
    pub child: Child,
    pub log: PathBuf,
}

impl Proc {
    pub fn spawn(cmd: &mut Command, log: PathBuf) -> Proc {
        let out = File::create(&log).expect("log file");
        let err = out.try_clone().expect("log file");
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::from(out))
            .stderr(Stdio::from(err))
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
        Proc { child, log }
    }

    /// The process's output so far.
    pub fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// True while the process runs.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Ask to stop (SIGTERM), then kill after a grace period.
    pub fn stop(&mut self) {
        self.stop_within(Duration::from_secs(5));
    }

    /// Ask to stop (SIGTERM), then kill after `grace`.
    pub fn stop_within(&mut self, grace: Duration) {
        if self.alive() {
            let _ = Command::new("kill")
                .arg("-TERM")
                .arg(self.child.id().to_string())
                .status();
            let deadline = Instant::now() + grace;
            while self.alive() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.stop();
        if std::thread::panicking() {
            eprintln!("---- log of {} ----\n{}", self.log.display(), self.output());
        }
    }
}

/// Run a command to completion, returning (status code, stdout, stderr).
pub(crate) fn run(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("run {cmd:?}: {e}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
