//! The classifier's integration tests, gathered into one test binary (a module per area)
//! so the workspace links it once: `cargo test -p vigil-shared --test all [AREA::]`.
//!
//! - `adversarial`: bypass attempts that must stay writes.
//! - `corpus`: every labelled corpus, the handbook's floor and `corpus/*.tsv`.
//! - `grant_props`: grant verification under arbitrary bodies and times.
//! - `oracle`: the write oracle (runs corpus reads for real in a throw-away root).
//! - `properties`: read + write combinations never read-only; `classify` never panics.
//! - `redaction`: the redaction corpus.

mod support;

mod adversarial;
mod corpus;
mod grant_props;
mod oracle;
mod properties;
mod redaction;
