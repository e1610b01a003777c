//! `gavel serve`: the web UI over the store. Runs started in the UI execute in
//! this process through the session, so they store exactly what a CLI run stores.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;
use gavel_session::ModelOptions;
use gavel_web::{Config, RunDefaults};

use super::{EXIT_OK, StoreArgs};

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Address to listen on. Anything but loopback requires an account (`gavel users add`) or --token.
    #[arg(long, default_value = "127.0.0.1:7878")]
    bind: SocketAddr,
    /// Shared read-only token (`Authorization: Bearer …`, or open /login?token=…):
    /// a viewer's access without an account. Accounts: `gavel users add`.
    #[arg(long, env = "GAVEL_WEB_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Mark the session cookie Secure: the UI is served over HTTPS (behind a proxy).
    #[arg(long)]
    secure_cookies: bool,
    /// Also answer to this host name (`name`, `name:port`, or `*`): the UI refuses
    /// other Host headers (DNS rebinding). Repeatable.
    #[arg(long = "allow-host", value_name = "HOST")]
    allow_hosts: Vec<String>,
    /// Suite files added to every run started from the UI (e.g. the targets file).
    #[arg(long = "with", value_name = "FILE")]
    with: Vec<PathBuf>,
    #[command(flatten)]
    models: ModelOptions,
    #[command(flatten)]
    store: StoreArgs,
}

pub(crate) async fn serve(args: ServeArgs) -> anyhow::Result<u8> {
    let store = args.store.open().await?;
    let config = Config {
        bind: args.bind,
        token: args.token.clone(),
        secure_cookies: args.secure_cookies,
        allowed_hosts: args.allow_hosts.clone(),
        runs: RunDefaults {
            with: args.with.clone(),
            models: args.models.clone(),
        },
    };
    eprintln!(
        "gavel UI on http://{} · store {}",
        args.bind,
        gavel::store::mask_url(&args.store.db)
    );
    gavel_web::serve(store, config).await?;
    Ok(EXIT_OK)
}
