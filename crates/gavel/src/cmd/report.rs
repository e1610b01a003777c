//! `gavel report`: reports of a stored run; printing and writing reports for `run`.

use clap::Args;
use gavel::report::Report;
use gavel::store::Store;
use gavel_session::GateConfig;

use super::{ReportOutArgs, StoreArgs};

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
    store: StoreArgs,
    #[command(flatten)]
    out: ReportOutArgs,
    #[command(flatten)]
    gate: GateConfig,
}

pub(crate) async fn report(args: ReportArgs) -> anyhow::Result<u8> {
    let store = args.store.open().await?;
    if args.trend {
        return trend(&store, args.last, &args.out).await;
    }
    let run = store.find_run(&args.run).await?;
    let detail = gavel::report::Detail::for_outputs(&args.out.outputs);
    let report =
        gavel_session::report::build(&store, &run.id, None, &args.gate, None, detail).await?;
    emit(&report, &args.out, &args.gate)
}

/// Prints the trend over the latest `last` runs and writes it as JSON.
async fn trend(store: &Store, last: u32, out: &ReportOutArgs) -> anyhow::Result<u8> {
    let trend = gavel_session::history::trend(store, last).await?;
    print!("{}", trend.text());
    for path in &out.outputs {
        if path.extension().is_none_or(|e| e != "json") {
            eprintln!("error: --trend writes JSON only, not {}", path.display());
            return Ok(super::EXIT_BAD_INPUT);
        }
        std::fs::write(path, serde_json::to_string_pretty(&trend)?)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(super::EXIT_OK)
}

/// Prints the terminal summary of `report`, writes the requested files and
/// returns the gate's exit code.
pub(crate) fn emit(report: &Report, out: &ReportOutArgs, gate: &GateConfig) -> anyhow::Result<u8> {
    if !gate.tags.is_empty() {
        eprintln!("gate on cases tagged {}", gate.tags.join(", "));
    }
    if let Some(c) = &report.gate.calibration
        && let Some(why) = &c.reason
    {
        eprintln!("gate failed: {why}");
    }
    print!(
        "{}",
        gavel::report::terminal(report, super::colored(out.color))
    );
    for path in &out.outputs {
        gavel::report::write(report, path)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(u8::try_from(report.gate.exit_code()).unwrap_or(super::EXIT_INFRA))
}
