//! vigil-agent binary.
fn main() {}
