//! The servers over the store: `gavel serve`, the web UI (runs started in it
//! execute in this process through the session, so they store exactly what a
//! CLI run stores), and `gavel mcp`, the MCP server on stdio or, with `--http`,
//! on Streamable HTTP.

use std::future::Future;
use std::net::SocketAddr;

use clap::Args;

use super::{EXIT_OK, StoreLocation};

/// No `Debug`: the configuration holds the shared token.
#[derive(Args)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    config: gavel_web::Config,
    #[command(flatten)]
    store: StoreLocation,
}

/// Serves until SIGTERM or SIGINT (Ctrl-C), then stops gracefully and closes
/// the store: a SQLite file is left without its `-wal` and `-shm`.
pub(crate) async fn serve(args: ServeArgs) -> anyhow::Result<u8> {
    let store = args.store.open().await?;
    let db = args.store.shown();
    let shutdown = terminated()?;
    let ready = |bound| eprintln!("gavel UI on http://{bound} · store {db}");
    let served = gavel_web::serve(store.clone(), args.config, ready, shutdown).await;
    store.close().await;
    served?;
    eprintln!("gavel UI stopped");
    Ok(EXIT_OK)
}

/// Completes on the first SIGTERM or SIGINT. The handlers are installed here,
/// before the server starts, so no signal in between ends the process.
fn terminated() -> anyhow::Result<impl Future<Output = ()> + Send + 'static> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    })
}

#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio (loopback only; port 0 picks one).
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    #[command(flatten)]
    store: StoreLocation,
}

pub(crate) async fn mcp(args: McpArgs) -> anyhow::Result<u8> {
    let store = args.store.open().await?;
    let Some(addr) = args.http else {
        gavel_mcp_server::serve_stdio(store).await?;
        return Ok(EXIT_OK);
    };
    let stop = super::cancel_on_ctrl_c("stopping the MCP server");
    let db = args.store.shown();
    gavel_mcp_server::serve_http(store, addr, stop, |bound| {
        eprintln!("gavel MCP on http://{bound}/mcp · store {db}");
    })
    .await?;
    Ok(EXIT_OK)
}
