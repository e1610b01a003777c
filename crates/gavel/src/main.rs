//! The `gavel` command line.

mod cmd;

use std::process::ExitCode;

use clap::Parser;

/// mimalloc: less CPU per case than the system allocator on gavel's many small,
/// short-lived allocations (JSON values, prompts, requests).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = cmd::Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_env("GAVEL_LOG"))
        // Secrets gavel knows never reach a log line, even at trace level.
        .with_writer(|| gavel::secrets::Redacting::new(std::io::stderr()))
        .init();
    // One thread: gavel waits on agents, models and the store; a single-threaded
    // runtime spends less CPU per case than a work-stealing one.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(cmd::EXIT_INFRA);
        }
    };
    match runtime.block_on(cli.dispatch()) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {}", gavel::secrets::redact(&format!("{e:#}")));
            ExitCode::from(cmd::EXIT_BAD_INPUT)
        }
    }
}
