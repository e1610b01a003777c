//! `gavel validate`: load and compile suites, run nothing.

use std::path::PathBuf;

use clap::Args;

use super::{EXIT_BAD_INPUT, EXIT_OK, plural, print_load_errors};

#[derive(Debug, Args)]
pub(crate) struct ValidateArgs {
    /// Suite files or directories.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
}

pub(crate) fn validate(args: ValidateArgs) -> anyhow::Result<u8> {
    let suite = match gavel::load::load_paths(&args.paths) {
        Ok(s) => s,
        Err(errors) => {
            super::promptfoo::hint(&args.paths);
            return Ok(print_load_errors(&errors));
        }
    };
    let mut bad = 0;
    for case in &suite.cases {
        if let Err(e) = gavel::checks::compile(case, &suite.judge) {
            eprintln!("error: {e}");
            bad += 1;
        }
    }
    for w in &suite.warnings {
        eprintln!("warning: {w}");
    }
    if bad > 0 {
        eprintln!("{bad} error{} found", plural(bad));
        return Ok(EXIT_BAD_INPUT);
    }
    let rounds: usize = suite.cases.iter().map(|c| c.rounds.len()).sum();
    println!(
        "ok: {} case{} ({rounds} round{}), {} target{} in {} file{}",
        suite.cases.len(),
        plural(suite.cases.len()),
        plural(rounds),
        suite.targets.len(),
        plural(suite.targets.len()),
        suite.files.len(),
        plural(suite.files.len()),
    );
    Ok(EXIT_OK)
}
