//! `gavel worker`: claims and runs the executions of distributed runs through
//! the session (DESIGN.md §9).

use clap::Args;
use gavel::runner::CancellationToken;
use gavel_session::Sinks;
use gavel_session::worker::WorkerConfig;

use super::StoreArgs;

#[derive(Debug, Args)]
pub(crate) struct WorkerArgs {
    #[command(flatten)]
    config: WorkerConfig,
    #[command(flatten)]
    store: StoreArgs,
}

pub(crate) async fn worker(args: WorkerArgs) -> anyhow::Result<u8> {
    let store = args.store.open().await?;
    let config = args.config;
    eprintln!(
        "worker {} · store {} · {} at once · lease {}s",
        config.name,
        gavel::store::mask_url(&args.store.db),
        config.jobs,
        config.lease.as_secs_f64()
    );
    let stop = CancellationToken::new();
    let on_ctrl_c = stop.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("stopping: finishing the executions in hand");
            on_ctrl_c.cancel();
        }
    });
    match gavel_session::worker::work(&store, &config, &Sinks::new(), &stop).await {
        Ok(()) => Ok(super::EXIT_OK),
        Err(e) => Ok(super::session_error(&e)),
    }
}
