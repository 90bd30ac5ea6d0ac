//! `vigil-controller`: the controller library. Start at `cli` for the command line.
