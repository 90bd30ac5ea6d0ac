//! The model-facing tool contract of docs/design.md §9.1: one table of tools, actions and
//! arguments ([`table`]) from which come the JSON schemas the model sees ([`schema`]), the
//! validation of every call ([`call`]) and the one classification of a call as resolve,
//! read or write ([`class`]); the envelope every tool answers with ([`envelope`]); and the
//! exact shell command each fixed-form action runs ([`commands`]).

pub mod call;
pub mod class;
pub mod commands;
pub mod envelope;
pub mod schema;
pub mod table;
