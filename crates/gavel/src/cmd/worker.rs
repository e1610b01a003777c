//! `gavel worker`: claims and runs the executions of distributed runs through
//! the session (DESIGN.md §9).

use clap::Args;
use gavel_session::Sinks;
use gavel_session::worker::WorkerConfig;

use super::StoreLocation;

#[derive(Debug, Args)]
pub(crate) struct WorkerArgs {
    #[command(flatten)]
    config: WorkerConfig,
    #[command(flatten)]
    store: StoreLocation,
}

pub(crate) async fn worker(args: WorkerArgs) -> anyhow::Result<u8> {
    let store = args.store.open().await?;
    let config = args.config;
    eprintln!("{config} · store {}", args.store.shown());
    let stop = super::cancel_on_ctrl_c("stopping: finishing the executions in hand");
    match gavel_session::worker::work(&store, &config, &Sinks::new(), &stop).await {
        Ok(()) => Ok(super::EXIT_OK),
        Err(e) => Ok(super::session_error(&e)),
    }
}
