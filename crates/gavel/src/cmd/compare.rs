//! `gavel compare RUN_A RUN_B`: regressions, fixes and deltas between two stored
//! runs; exits 1 when the regressions exceed `--max-regressions`.

use clap::Args;
use gavel_session::history::RunPair;

use super::{EXIT_GATE, EXIT_OK, StoreLocation};

#[derive(Debug, Args)]
pub(crate) struct CompareArgs {
    #[command(flatten)]
    runs: RunPair,
    /// Write the comparison as JSON.
    #[arg(short = 'o', long = "output", value_name = "FILE.json")]
    output: Option<std::path::PathBuf>,
    #[command(flatten)]
    store: StoreLocation,
}

pub(crate) async fn compare(args: CompareArgs) -> anyhow::Result<u8> {
    let comparison = args.runs.compare(&args.store.open().await?).await?;
    print!("{}", comparison.text());
    if let Some(path) = &args.output {
        super::write_json(path, &comparison)?;
    }
    let (found, allowed) = (comparison.regressions, args.runs.max_regressions);
    if found > allowed {
        let s = super::plural(found);
        eprintln!("gate failed: {found} regression{s} (at most {allowed} allowed)");
        return Ok(EXIT_GATE);
    }
    Ok(EXIT_OK)
}
