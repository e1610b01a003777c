//! `gavel serve`: the web UI over the store. Runs the UI starts are `gavel run`
//! processes of this same binary, so they store exactly what a CLI run stores.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;

use anyhow::Context;
use clap::Args;
use gavel::store::Store;
use gavel_web::{Config, Launcher, RunRequest};

use super::{EXIT_OK, StoreArgs};

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Address to listen on. Anything but loopback requires --token.
    #[arg(long, default_value = "127.0.0.1:7878")]
    bind: SocketAddr,
    /// Token every request must carry (`Authorization: Bearer …`, or open /login?token=…).
    #[arg(long, env = "GAVEL_WEB_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Suite files added to every run started from the UI (e.g. the targets file).
    #[arg(long = "with", value_name = "FILE")]
    with: Vec<PathBuf>,
    #[command(flatten)]
    store: StoreArgs,
}

pub(crate) async fn serve(args: ServeArgs) -> anyhow::Result<u8> {
    let store = Store::open(&args.store.db)
        .await
        .context("opening the store")?;
    let config = Config {
        bind: args.bind,
        token: args.token.clone(),
        allowed_hosts: Vec::new(),
        launcher: launcher(args.store.db.clone(), args.with.clone())?,
    };
    eprintln!(
        "gavel UI on http://{} · store {}",
        args.bind,
        gavel::store::mask_url(&args.store.db)
    );
    gavel_web::serve(store, config).await?;
    Ok(EXIT_OK)
}

/// Starts `gavel run --suite …` in the background with a fresh run id.
fn launcher(db: String, with: Vec<PathBuf>) -> anyhow::Result<Launcher> {
    let exe = std::env::current_exe().context("finding the gavel binary")?;
    Ok(Arc::new(move |request: &RunRequest| {
        let id = uuid::Uuid::now_v7().to_string();
        let mut cmd = Command::new(&exe);
        cmd.arg("run")
            .args(&with)
            .args(["--suite", &request.suite, "--run-id", &id, "--quiet"])
            // The URL goes by environment, not argv: `ps` shows argv to everyone.
            .env("GAVEL_DATABASE_URL", &db)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for tag in &request.tags {
            cmd.args(["--tag", tag]);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("starting gavel run: {e}"))?;
        std::thread::spawn(move || child.wait());
        Ok(id)
    }))
}
