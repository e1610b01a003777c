//! `gavel report`: reports of a stored run; printing and writing reports for `run`.

use clap::Args;
use gavel::report::{Outputs, Report};
use gavel::store::Store;
use gavel_session::Regate;

use super::StoreLocation;

#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// A run id, a unique prefix of one, `latest` or `previous`.
    #[arg(default_value = "latest")]
    run: String,
    /// Instead of one run: pass rate and mean score over the latest runs, per
    /// suite, tag, target and judge model (`-o FILE.json` writes the points).
    #[arg(long)]
    trend: bool,
    /// With --trend: how many of the latest runs.
    #[arg(long, default_value_t = 20, requires = "trend")]
    last: u32,
    #[command(flatten)]
    store: StoreLocation,
    #[command(flatten)]
    out: Outputs,
    #[command(flatten)]
    gate: Regate,
}

pub(crate) async fn report(args: ReportArgs) -> anyhow::Result<u8> {
    let store = args.store.open().await?;
    if args.trend {
        return trend(&store, args.last, &args.out).await;
    }
    let files = match args.out.writers() {
        Ok(files) => files,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(super::EXIT_BAD_INPUT);
        }
    };
    let run = store.find_run(&args.run).await?;
    let report = gavel_session::report::write(&store, &run.id, &args.gate, files).await?;
    emit(&report, &args.out)
}

/// Prints the trend over the latest `last` runs and writes it as JSON.
async fn trend(store: &Store, last: u32, out: &Outputs) -> anyhow::Result<u8> {
    let trend = gavel_session::history::trend(store, last).await?;
    print!("{}", trend.text());
    for path in &out.files {
        if path.extension().is_none_or(|e| e != "json") {
            eprintln!("error: --trend writes JSON only, not {}", path.display());
            return Ok(super::EXIT_BAD_INPUT);
        }
        super::write_json(path, &trend)?;
    }
    Ok(super::EXIT_OK)
}

/// Prints the terminal summary of `report`, names the report files written
/// with it and returns the gate's exit code.
pub(crate) fn emit(report: &Report, out: &Outputs) -> anyhow::Result<u8> {
    if !report.gate.tags.is_empty() {
        eprintln!("gate on cases tagged {}", report.gate.tags.join(", "));
    }
    for why in report.gate.failures() {
        eprintln!("gate failed: {why}");
    }
    print!("{}", gavel::report::terminal(report, out.colored()));
    for path in &out.files {
        eprintln!("wrote {}", path.display());
    }
    Ok(u8::try_from(report.gate.exit_code()).unwrap_or(super::EXIT_INFRA))
}
