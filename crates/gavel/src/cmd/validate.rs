//! `gavel validate`: load and compile suites, run nothing.

use std::path::PathBuf;

use clap::Args;
use gavel::load::SuiteSource;

use super::{EXIT_OK, StoreLocation, session_error};

#[derive(Debug, Args)]
pub(crate) struct ValidateArgs {
    /// Suite files or directories.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    // The store `replay` targets with `run:` read their run from (opened only then).
    #[command(flatten)]
    store: StoreLocation,
}

pub(crate) async fn validate(args: ValidateArgs) -> anyhow::Result<u8> {
    let sources: Vec<_> = args.paths.iter().cloned().map(SuiteSource::Path).collect();
    let validated = match gavel_session::validate(&sources, &args.store).await {
        Ok(v) => v,
        Err(e) => {
            super::promptfoo::hint(&args.paths);
            return Ok(session_error(&e));
        }
    };
    for w in &validated.suite.warnings {
        eprintln!("warning: {w}");
    }
    println!("ok: {validated}");
    Ok(EXIT_OK)
}
