//! Vigil's end-to-end suites, gathered into one test binary (a module per area) so the
//! workspace links the controller and the agent into a test once, not once per area:
//! `cargo test -p vigil-tests --test all [AREA::]`. Each module's own `//!` says what it
//! runs; the real processes and peers they start are described in CONTRIBUTING.md.

mod agent_link;
mod approvals;
mod chat;
mod controller;
mod docker_agent;
mod fanout;
mod fleet;
mod grpc_chat;
mod install;
mod inventory_docker;
mod inventory_proxmox;
mod llm_providers;
mod local_agent;
mod mcp;
mod openai_compat;
mod partition;
mod patrol;
mod queue;
mod replicas;
mod sandbox;
mod terminal_chat;
mod web;
