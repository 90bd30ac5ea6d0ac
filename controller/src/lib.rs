//! `vigil-controller` is the central half of Vigil: it will run the chat API, the assistant
//! loop, the policy engine and the gateway that host agents dial into. Today it holds the
//! command line ([`cli`]) and `vigil-controller policy check`, which shows how the shared
//! classifier (`vigil_shared::policy`) judges a shell command; start reading at
//! [`cli::Cli`], then [`policy_cli`] for the output shapes. Errors are one enum,
//! [`Error`].

pub mod cli;
mod error;
pub mod policy_cli;

pub use error::{Error, Result};
