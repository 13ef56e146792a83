//! The `repatch` command.

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(repatch::cli::run())
}
