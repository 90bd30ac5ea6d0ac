//! The agent's Docker platform against the real engine: discovery (scan and the event
//! watch) in [`discovery`], the `docker:C` exec backend (output, exit codes, limits,
//! refusals) in [`exec`]. Containers run the FROM-scratch busybox image of
//! `vigil_tests::docker`.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::print_stderr)]

mod discovery;
mod exec;

use std::time::Duration;
use vigil_agent::config::Discovery;
use vigil_agent::platform::Detected;
use vigil_agent::platform::docker;

/// Hang guard for waits on the engine (not a timing assertion).
const HANG_GUARD: Duration = Duration::from_secs(20);

/// The Docker platform as the agent detects it with the default config.
async fn platform() -> Detected {
    docker::detect(&Discovery::default())
        .await
        .expect("the Docker platform is detected with the default config")
}

#[tokio::test]
async fn an_unreachable_engine_is_not_detected() {
    let dir = tempfile::tempdir().unwrap();
    let socket = format!("unix://{}/missing.sock", dir.path().display());
    for toggle in ["auto", "on"] {
        let config = toml_discovery(&format!(
            "docker = \"{toggle}\"\ndocker_host = \"{socket}\""
        ));
        assert!(docker::detect(&config).await.is_none(), "{toggle}");
    }
    assert!(
        docker::detect(&toml_discovery("docker = \"off\""))
            .await
            .is_none()
    );
}

fn toml_discovery(body: &str) -> Discovery {
    vigil_agent::config::Config::parse(&format!("[discovery]\n{body}\n"))
        .unwrap()
        .discovery
}
