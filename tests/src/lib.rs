//! Shared support for the end-to-end suites in `tests/tests/`: start the real
//! `vigil-controller` and `vigil-agent` binaries on 127.0.0.1 in temporary directories,
//! talk to the controller's HTTP API, sign grants with the controller's real key, and make
//! TLS clients with certificates generated at run time.
//!
//! Start at [`Controller::start`] and [`Agent::join`]; [`ScriptedModel`] is the model
//! server the assistant suites point the controller at.
//!
//! [`fleet`] is the fleet simulator behind the `vigil-fleet` binary (`make fleet`), and
//! [`FleetProcess`] runs it against a test controller.
//!
//! [`in_process`] starts a controller inside the test process (the `controller` suite), and
//! [`db`] gives each store test a private PostgreSQL schema (the controller's own
//! `store::test_db`, re-exported).

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::print_stderr)]

mod agent;
mod api;
pub mod chat;
mod controller;
pub mod docker;
pub mod fleet;
mod fleet_process;
pub mod in_process;
pub mod mcp_tools;
pub mod model_server;
pub mod partition;
mod process;
pub mod python;
pub mod stats;
mod tls;

pub use agent::{Agent, AgentOptions, AgentState, join as join_agent};
pub use api::{Api, ExecOutcome, RawGrant, SseEvent};
pub use controller::{Controller, ControllerOptions};
pub use fleet_process::FleetProcess;
pub use model_server::{Protocol, Reply, ScriptedModel};
pub use process::{Proc, bin, free_port, processes_matching, wait_until};
pub use tls::{Identity, foreign_client_config, gateway_handshake};
/// A private PostgreSQL schema per test (the controller's `store::test_db`).
pub use vigil_controller::store::test_db as db;
