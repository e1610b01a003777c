//! `gavel report`: reports of a stored run; shared report emission for `run`.

use clap::Args;
use gavel::Execution;
use gavel::report::Report;
use gavel::runner::Recorder;
use gavel::store::Store;

use super::{ReportOutArgs, StoreArgs};

#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// A run id, a unique prefix of one, or `latest`.
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
}

pub(crate) async fn report(args: ReportArgs) -> anyhow::Result<u8> {
    let store = Store::open(&args.store.db).await?;
    if args.trend {
        return trend(&store, args.last, &args.out).await;
    }
    let run = if args.run == "latest" {
        store
            .latest_run()
            .await?
            .ok_or_else(|| anyhow::anyhow!("the store holds no run yet"))?
    } else {
        store.run(&args.run).await?
    };
    emit(&store, &run.id, None, &args.out, None).await
}

/// Prints the trend over the latest `last` runs and writes it as JSON.
async fn trend(store: &Store, last: u32, out: &ReportOutArgs) -> anyhow::Result<u8> {
    let mut runs = Vec::new();
    for run in store.runs(last).await? {
        let executions = store.executions(&run.id).await?;
        runs.push((run, executions));
    }
    let trend = gavel::report::trend::Trend::new(runs);
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

/// Builds the report of a stored run, prints the terminal summary, writes the
/// requested files and returns the gate's exit code. `saved` are the run's cases
/// as saved, when the caller holds them; otherwise they are read back.
pub(crate) async fn emit(
    store: &Store,
    run_id: &str,
    saved: Option<Vec<gavel::Case>>,
    out: &ReportOutArgs,
    calibration: Option<gavel::report::CalibrationGate>,
) -> anyhow::Result<u8> {
    let run = store.run(run_id).await?;
    let cases = match saved {
        Some(cases) => cases,
        None => store.cases(run_id).await?,
    };
    let executions = store.executions(run_id).await?;
    let mut report = Report::new(run, cases, executions, out.min_pass_rate);
    if !out.gate_tags.is_empty() {
        let gated = report
            .outcomes
            .iter()
            .filter(|o| o.tags.iter().any(|t| out.gate_tags.contains(t)));
        report.gate = gavel::report::Gate::new(&gavel::TagStats::of(gated), out.min_pass_rate);
        eprintln!("gate on cases tagged {}", out.gate_tags.join(", "));
    }
    if let Some(c) = calibration {
        report.gate = report.gate.clone().with_calibration(c);
    }
    print!("{}", gavel::report::terminal(&report, out.color.enabled()));
    for path in &out.outputs {
        gavel::report::write(&report, path)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(u8::try_from(report.gate.exit_code()).unwrap_or(super::EXIT_INFRA))
}

/// Writes every execution to the store as it lands.
pub(crate) struct StoreRecorder<'a>(pub(crate) &'a Store, pub(crate) &'a str);

#[async_trait::async_trait]
impl Recorder for StoreRecorder<'_> {
    async fn record(&mut self, e: &Execution) -> Result<(), String> {
        self.0
            .record_execution(self.1, e)
            .await
            .map_err(|e| e.to_string())
    }

    async fn record_batch(&mut self, executions: &[Execution]) -> Result<(), String> {
        self.0
            .record_executions(self.1, executions)
            .await
            .map_err(|e| e.to_string())
    }
}
