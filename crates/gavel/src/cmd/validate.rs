//! `gavel validate`: load and compile suites, run nothing.

use std::path::PathBuf;

use clap::Args;
use gavel::load::SuiteSource;

use super::{EXIT_OK, session_error};

#[derive(Debug, Args)]
pub(crate) struct ValidateArgs {
    /// Suite files or directories.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
}

pub(crate) fn validate(args: ValidateArgs) -> anyhow::Result<u8> {
    let sources: Vec<_> = args.paths.iter().cloned().map(SuiteSource::Path).collect();
    let suite = match gavel_session::validate(&sources) {
        Ok(s) => s,
        Err(e) => {
            super::promptfoo::hint(&args.paths);
            return Ok(session_error(&e));
        }
    };
    for w in &suite.warnings {
        eprintln!("warning: {w}");
    }
    println!("ok: {suite}");
    Ok(EXIT_OK)
}
