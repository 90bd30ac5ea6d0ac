//! The assistant: one loop per chat turn ([`turn`]), the chat service that runs turns and
//! keeps each session's in-memory gates ([`service`], [`state`]), the gates themselves,
//! pure logic ([`gates`]), the tool calls run through them ([`tools_run`]), direct mode
//! ([`direct`]), the stored conversation ([`history`]) and its compaction ([`compaction`]),
//! what the user refers to ([`prefetch`]), the prompt ([`prompt`]), the exact chat events
//! of docs/assistant.md ([`events`]), the knowledge accumulator and its gate
//! ([`knowledge`]), phantom detection of final answers ([`phantom`]) and what local models
//! get wrong ([`quirks`]).

pub mod compaction;
pub mod direct;
pub mod events;
pub mod gates;
pub mod history;
pub mod knowledge;
pub mod phantom;
pub mod prefetch;
pub mod prompt;
pub mod quirks;
pub mod service;
pub mod sessions;
pub mod state;
pub mod tools_run;
pub mod turn;

pub use service::{Assistant, ChatBody};
