//! `gavel compare RUN_A RUN_B`: regressions, fixes and deltas between two stored
//! runs; exits 1 when the regressions exceed `--max-regressions`.

use clap::Args;

use super::{EXIT_GATE, EXIT_OK, StoreArgs};

#[derive(Debug, Args)]
pub(crate) struct CompareArgs {
    /// The baseline run: an id, a unique prefix of one, or `previous` (the run before the latest).
    run_a: String,
    /// The candidate run: an id, a unique prefix, or `latest`.
    #[arg(default_value = "latest")]
    run_b: String,
    /// Exit 1 when there are more regressions than this.
    #[arg(long, default_value_t = 0)]
    max_regressions: usize,
    /// Write the comparison as JSON.
    #[arg(short = 'o', long = "output", value_name = "FILE.json")]
    output: Option<std::path::PathBuf>,
    #[command(flatten)]
    store: StoreArgs,
}

pub(crate) async fn compare(args: CompareArgs) -> anyhow::Result<u8> {
    let store = args.store.open().await?;
    let a = store.find_run(&args.run_a).await?;
    let b = store.find_run(&args.run_b).await?;
    let comparison = gavel_session::history::compare(&store, &a, &b).await?;
    print!("{}", comparison.text());
    if let Some(path) = &args.output {
        std::fs::write(path, serde_json::to_string_pretty(&comparison)?)?;
        eprintln!("wrote {}", path.display());
    }
    if comparison.regressions > args.max_regressions {
        eprintln!(
            "gate failed: {} regression{} (at most {} allowed)",
            comparison.regressions,
            super::plural(comparison.regressions),
            args.max_regressions
        );
        return Ok(EXIT_GATE);
    }
    Ok(EXIT_OK)
}
