//! `vigil-shared` holds the pure domain logic that both the controller and the host agent
//! use, with no server or async code in it. Start with [`policy`], the command classifier
//! that decides whether a shell command is provably read-only (`policy::classify`); then
//! [`grant`] (the signed permission for one write), [`ids`] (agent identities and execution
//! targets), [`resource`] (the inventory's resource ids and resources), [`redact`] (secret
//! redaction of tool output before it reaches the model, the chat stream, the store or the
//! logs), [`tls`] (certificate fingerprints and identities), [`hide`] (the registry of
//! paths reads must not see) and [`door_policy`] (what the agent's read-only door to a
//! container engine forwards).

pub mod door_policy;
pub mod grant;
pub mod hide;
pub mod ids;
pub mod policy;
pub mod redact;
pub mod resource;
pub mod tls;
