//! The servers over the store: `gavel serve`, the web UI (runs started in it
//! execute in this process through the session, so they store exactly what a
//! CLI run stores), and `gavel mcp`, the MCP server on stdio or, with `--http`,
//! on Streamable HTTP.

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

pub(crate) async fn serve(args: ServeArgs) -> anyhow::Result<u8> {
    let store = args.store.open().await?;
    let db = args.store.shown();
    gavel_web::serve(store, args.config, |bound| {
        eprintln!("gavel UI on http://{bound} · store {db}");
    })
    .await?;
    Ok(EXIT_OK)
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
