//! `gavel calibrate`: a judge over human-labelled sets, its agreement with people,
//! and the stored calibration run a suite can require before it gates;
//! `gavel calibrate compare A B`: two judges on one set, with paired tests.

use clap::{Args, Subcommand};
use gavel_session::{CalibrateConfig, Calibrated};

use super::{EXIT_INFRA, EXIT_OK, StoreLocation, session_error};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct CalibrateArgs {
    #[command(subcommand)]
    command: Option<Box<CalibrateCommand>>,
    #[command(flatten)]
    config: CalibrateConfig,
    /// Write the reports as JSON (an array, one per set).
    #[arg(short = 'o', long = "output", value_name = "FILE.json")]
    output: Option<std::path::PathBuf>,
    #[command(flatten)]
    store: StoreLocation,
}

#[derive(Debug, Subcommand)]
enum CalibrateCommand {
    /// Compare two stored calibration runs of one labelled set (e.g. before and
    /// after a criteria edit): both side by side, McNemar's exact test and a
    /// paired bootstrap interval of the agreement difference on their common items.
    Compare(CompareArgs),
}

#[derive(Debug, Args)]
struct CompareArgs {
    /// The first calibration run's id (the baseline).
    #[arg(value_name = "RUN_A")]
    a: String,
    /// The second calibration run's id (the candidate).
    #[arg(value_name = "RUN_B")]
    b: String,
    /// Write the comparison as JSON.
    #[arg(short = 'o', long = "output", value_name = "FILE.json")]
    output: Option<std::path::PathBuf>,
    #[command(flatten)]
    store: StoreLocation,
}

pub(crate) async fn calibrate(args: CalibrateArgs) -> anyhow::Result<u8> {
    if let Some(command) = args.command {
        let CalibrateCommand::Compare(args) = *command;
        return compare(args).await;
    }
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

async fn compare(args: CompareArgs) -> anyhow::Result<u8> {
    let store = args.store.open().await?;
    let comparison = match gavel_session::compare_calibrations(&store, &args.a, &args.b).await {
        Ok(c) => c,
        Err(e) => return Ok(session_error(&e)),
    };
    print!("{}", comparison.text());
    if let Some(path) = &args.output {
        super::write_json(path, &comparison)?;
    }
    Ok(EXIT_OK)
}
