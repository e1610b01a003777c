//! `gavel worker`: claims and runs the executions of distributed runs through
//! the session (DESIGN.md §9).

use std::time::Duration;

use clap::Args;
use gavel::runner::CancellationToken;
use gavel_session::Sinks;
use gavel_session::worker::WorkerConfig;

use super::{ModelArgs, StoreArgs};

#[derive(Debug, Args)]
pub(crate) struct WorkerArgs {
    /// Executions (claimed units) at once.
    #[arg(short = 'j', long = "jobs", default_value_t = 1, value_parser = gavel::bounds::parse_jobs)]
    jobs: usize,
    /// Seconds a claim stays this worker's without a heartbeat; after that another
    /// worker may take it again. Heartbeats come every third of it.
    #[arg(long, default_value = "30", value_parser = gavel::bounds::parse_seconds)]
    lease: Duration,
    /// Seconds between looks at an empty queue (how long a new run may wait for
    /// an idle worker to notice it).
    #[arg(long, default_value = "0.2", value_parser = gavel::bounds::parse_seconds)]
    poll: Duration,
    /// Exit when the queue holds nothing to claim, instead of waiting for work.
    #[arg(long)]
    exit_when_idle: bool,
    /// An execution claimed this many times (each of its workers was lost) is
    /// recorded as an error instead of being run again.
    #[arg(long, default_value_t = 3, value_parser = gavel::bounds::parse_attempts)]
    max_attempts: u32,
    #[command(flatten)]
    models: ModelArgs,
    #[command(flatten)]
    store: StoreArgs,
}

pub(crate) async fn worker(args: WorkerArgs) -> anyhow::Result<u8> {
    let store = args.store.open().await?;
    let name = format!(
        "{}-{}-{}",
        std::env::var("HOSTNAME").unwrap_or_else(|_| "worker".to_owned()),
        std::process::id(),
        &uuid::Uuid::now_v7().simple().to_string()[24..]
    );
    eprintln!(
        "worker {name} · store {} · {} at once · lease {}s",
        gavel::store::mask_url(&args.store.db),
        args.jobs,
        args.lease.as_secs_f64()
    );
    let stop = CancellationToken::new();
    let on_ctrl_c = stop.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("stopping: finishing the executions in hand");
            on_ctrl_c.cancel();
        }
    });
    let config = WorkerConfig {
        name,
        jobs: args.jobs,
        lease: args.lease,
        poll: args.poll,
        exit_when_idle: args.exit_when_idle,
        max_attempts: args.max_attempts,
        models: args.models.options(),
    };
    match gavel_session::worker::work(&store, &config, &Sinks::new(), &stop).await {
        Ok(()) => Ok(super::EXIT_OK),
        Err(e) => Ok(super::session_error(&e)),
    }
}
