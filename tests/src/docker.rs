//! The real Docker engine for the Docker suites: a test image built `FROM scratch` with
//! the machine's `/bin/busybox` (nothing is pulled), and containers removed on drop.
//!
//! Start with [`require`] (skip without Docker unless `CI` is set), then [`image`] and
//! [`Container::run`].

use std::path::Path;
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The test image's tag.
pub const IMAGE: &str = "vigil-test-busybox:1";
/// The busybox binary the image is made of (Debian's `busybox-static`).
pub const BUSYBOX: &str = "/bin/busybox";
/// The applets linked in the image's `/bin`.
const APPLETS: &[&str] = &[
    "sh", "cat", "sleep", "yes", "head", "hostname", "echo", "ls", "ps", "kill", "true", "false",
    "env", "seq",
];

fn docker(args: &[&str]) -> Output {
    Command::new("docker")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("docker {args:?}: {e}"))
}

/// `docker ARGS`, which must succeed; its trimmed stdout.
pub fn docker_ok(args: &[&str]) -> String {
    let out = docker(args);
    assert!(
        out.status.success(),
        "docker {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Whether the docker CLI reaches an engine (`docker version`).
pub fn available() -> bool {
    Command::new("docker")
        .args(["version", "--format", "{{.Server.Version}}"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether the Docker tests can run: `false` (with a note) when no engine answers and
/// `CI` is unset; a panic when `CI` is set and there is no engine or no busybox.
pub fn require() -> bool {
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
    let missing = if !available() {
        Some("no Docker engine answers `docker version`")
    } else if !Path::new(BUSYBOX).exists() {
        Some("/bin/busybox is missing (apt-get install busybox-static)")
    } else {
        None
    };
    match missing {
        None => true,
        Some(why) if ci => panic!("the Docker tests need Docker under CI: {why}"),
        Some(why) => {
            eprintln!("note: skipping a Docker test: {why}");
            false
        }
    }
}

/// The test image, built once per process (or reused when the engine already has it).
pub fn image() -> anyhow::Result<String> {
    static BUILT: OnceLock<Result<String, String>> = OnceLock::new();
    BUILT
        .get_or_init(|| build().map_err(|e| format!("{e:#}")))
        .clone()
        .map_err(anyhow::Error::msg)
}

fn build() -> anyhow::Result<String> {
    if docker(&["image", "inspect", IMAGE]).status.success() {
        return Ok(IMAGE.to_owned());
    }
    let ctx = tempfile::tempdir()?;
    let root = ctx.path();
    for dir in ["bin", "etc", "tmp", "data"] {
        std::fs::create_dir_all(root.join(dir))?;
    }
    std::fs::copy(BUSYBOX, root.join("bin/busybox"))?;
    for applet in APPLETS {
        std::os::unix::fs::symlink("busybox", root.join("bin").join(applet))?;
    }
    std::fs::write(root.join("etc/passwd"), "root:x:0:0:root:/:/bin/sh\n")?;
    std::fs::write(root.join("etc/group"), "root:x:0:\n")?;
    std::fs::write(
        root.join("Dockerfile"),
        "FROM scratch\nCOPY . /\nCMD [\"/bin/sleep\", \"3600\"]\n",
    )?;
    std::fs::write(root.join(".dockerignore"), "Dockerfile\n.dockerignore\n")?;
    let dir = root.to_string_lossy().into_owned();
    let out = docker(&["build", "-q", "-t", IMAGE, &dir]);
    anyhow::ensure!(
        out.status.success(),
        "docker build of {IMAGE} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(IMAGE.to_owned())
}

/// A name no other test (or earlier run) uses.
pub fn unique_name(prefix: &str) -> String {
    let mut bytes = [0u8; 4];
    getrandom::fill(&mut bytes).expect("random");
    format!("{prefix}-{}-{}", std::process::id(), hex::encode(bytes))
}

/// A container of the test image; `docker rm -f` when dropped.
#[derive(Debug)]
pub struct Container {
    pub name: String,
    id: String,
}

impl Container {
    /// `docker run -d --name <unique> --hostname HOSTNAME EXTRA… IMAGE`; `extra` holds
    /// options such as `-l k=v`, `-p 127.0.0.1::80` or `-v /dir:/data:ro`.
    pub fn run(prefix: &str, hostname: &str, extra: &[&str]) -> anyhow::Result<Container> {
        let image = image()?;
        let name = unique_name(prefix);
        let mut args = vec!["run", "-d", "--name", &name, "--hostname", hostname];
        args.extend_from_slice(extra);
        args.push(&image);
        let out = docker(&args);
        anyhow::ensure!(
            out.status.success(),
            "docker run failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        Ok(Container { name, id })
    }

    /// The full container id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The first 12 hex digits of the id.
    pub fn short_id(&self) -> &str {
        &self.id[..12]
    }

    /// `docker stop -t 1`.
    pub fn stop(&self) {
        docker_ok(&["stop", "-t", "1", &self.id]);
    }

    /// `docker start`.
    pub fn start(&self) {
        docker_ok(&["start", &self.id]);
    }

    /// The command lines of the processes running in the container: host processes whose
    /// cgroup names the container (read from `/proc`), else what `docker top` lists.
    pub fn processes(&self) -> Vec<String> {
        let from_proc = processes_in_cgroup(&self.id);
        if !from_proc.is_empty() {
            return from_proc;
        }
        docker_ok(&["top", &self.id, "-o", "pid,args"])
            .lines()
            .skip(1)
            .map(str::to_owned)
            .collect()
    }
}

fn processes_in_cgroup(id: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/cgroup")).is_ok_and(|c| c.contains(id))
        })
        .filter_map(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            let text = text.trim();
            (!text.is_empty()).then(|| format!("{pid} {text}"))
        })
        .collect()
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = Command::new("docker")
            .args(["rm", "-f", "-v", &self.id])
            .output();
    }
}
