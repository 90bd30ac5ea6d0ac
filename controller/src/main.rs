//! vigil-controller binary.
fn main() {}
