//! The `vigil-agent` binary; the command line lives in `vigil_agent::cli`.

use std::process::ExitCode;

fn main() -> ExitCode {
    vigil_agent::cli::main()
}
