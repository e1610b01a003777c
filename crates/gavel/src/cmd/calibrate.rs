//! `gavel calibrate`: a judge over human-labelled sets, its agreement with people,
//! and the stored calibration run a suite can require before it gates.

use clap::Args;
use gavel_session::{CalibrateConfig, Calibrated};

use super::{EXIT_INFRA, EXIT_OK, StoreLocation, session_error};

#[derive(Debug, Args)]
pub(crate) struct CalibrateArgs {
    #[command(flatten)]
    config: CalibrateConfig,
    /// Write the reports as JSON (an array, one per set).
    #[arg(short = 'o', long = "output", value_name = "FILE.json")]
    output: Option<std::path::PathBuf>,
    #[command(flatten)]
    store: StoreLocation,
}

pub(crate) async fn calibrate(args: CalibrateArgs) -> anyhow::Result<u8> {
    let store = args.store.open().await?;
    let print = |set: &Calibrated| {
        print!("{}", set.report.text());
        let errors = set.report.results.iter().filter_map(|r| r.error.as_ref());
        for e in errors.take(3) {
            eprintln!("  without a verdict: {e}");
        }
        println!("  calibration run {}\n", set.id);
    };
    let sets = match gavel_session::calibrate(&args.config, &store, print).await {
        Ok(sets) => sets,
        Err(e) => return Ok(session_error(&e)),
    };
    if let Some(path) = &args.output {
        super::write_json(path, &sets)?;
    }
    let judged_none = sets.iter().all(|s| s.report.judged == 0);
    Ok(if judged_none { EXIT_INFRA } else { EXIT_OK })
}
