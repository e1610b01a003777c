//! The two transports: stdio (the client starts `gavel mcp`) and Streamable HTTP
//! (`gavel mcp --http ADDR`, loopback only: the store is not for the network).
//! Over HTTP, as the MCP specification asks, a request whose `Origin` is not
//! this server (`http://localhost:PORT`, `http://127.0.0.1:PORT`,
//! `http://[::1]:PORT`) gets 403, so no web page can read the store through a
//! browser; a request without `Origin` (not from a browser) is served, and the
//! `Host` must be a loopback name (DNS rebinding).

use std::net::SocketAddr;

use gavel_store::Store;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::EvalServer;

/// Why the server stopped or could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// `--http` named an address other hosts could reach.
    #[error("--http {0}: only a loopback address (127.0.0.1, [::1]) is served")]
    NotLoopback(SocketAddr),
    /// The address could not be bound.
    #[error("cannot listen on {addr}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The transport failed.
    #[error("MCP transport: {0}")]
    Transport(String),
}

/// Serves MCP on stdin/stdout until the client closes it.
pub async fn serve_stdio(store: Store) -> Result<(), ServeError> {
    let running = EvalServer::new(store)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| ServeError::Transport(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| ServeError::Transport(e.to_string()))?;
    Ok(())
}

/// Serves MCP over Streamable HTTP at `http://ADDR/mcp` until `stop` is
/// cancelled; `ready` is told the bound address (port 0 picks a free one).
pub async fn serve_http(
    store: Store,
    addr: SocketAddr,
    stop: CancellationToken,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), ServeError> {
    if !addr.ip().is_loopback() {
        return Err(ServeError::NotLoopback(addr));
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind { addr, source })?;
    let bound = listener
        .local_addr()
        .map_err(|source| ServeError::Bind { addr, source })?;
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stop.child_token())
        .with_allowed_origins(own_origins(bound.port()))
        .enforce_origin_validation();
    let service: StreamableHttpService<EvalServer, LocalSessionManager> =
        StreamableHttpService::new(
            move || Ok(EvalServer::new(store.clone())),
            Default::default(),
            config,
        );
    let router = axum::Router::new().nest_service("/mcp", service);
    ready(bound);
    axum::serve(listener, router)
        .with_graceful_shutdown(async move { stop.cancelled_owned().await })
        .await
        .map_err(|e| ServeError::Transport(e.to_string()))
}

/// The origins of this server on `port`: its loopback names.
fn own_origins(port: u16) -> [String; 3] {
    ["localhost", "127.0.0.1", "[::1]"].map(|host| format!("http://{host}:{port}"))
}
