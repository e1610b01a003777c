//! `gavel mcp`: the MCP server over the store (gavel-mcp-server), on stdio or,
//! with `--http`, on Streamable HTTP.

use std::net::SocketAddr;

use clap::Args;
use gavel::runner::CancellationToken;

use super::{EXIT_OK, StoreArgs};

#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio (loopback only; port 0 picks one).
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    #[command(flatten)]
    store: StoreArgs,
}

pub(crate) async fn mcp(args: McpArgs) -> anyhow::Result<u8> {
    let store = args.store.open().await?;
    let Some(addr) = args.http else {
        gavel_mcp_server::serve_stdio(store).await?;
        return Ok(EXIT_OK);
    };
    let stop = CancellationToken::new();
    let on_signal = stop.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_signal.cancel();
        }
    });
    let db = gavel::store::mask_url(&args.store.db);
    gavel_mcp_server::serve_http(store, addr, stop, |bound| {
        eprintln!("gavel MCP on http://{bound}/mcp · store {db}");
    })
    .await?;
    Ok(EXIT_OK)
}
