//! `vigil-agent`: the host agent library. Start at the binary in `main.rs`.
