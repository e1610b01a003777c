//! `property-agent`: an offline, deterministic property-management assistant for exercising gavel.
//!
//! Serves `POST /chat` (and `POST /chat/stream`, SSE) over HTTP (default) or answers
//! JSON lines on stdin (`--stdio`). `POST /sessions/fork` copies a conversation;
//! `POST /restart` drops the in-memory state as a restart would.

mod agent;
mod api;
mod bugs;
mod data;
mod http;
mod mcp;
mod policy;
mod reply;
mod sse;
mod stdio;
mod tools;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use crate::agent::Agent;
use crate::bugs::{Bugs, parse_bugs};
use crate::data::Db;

/// Offline property-management assistant (listings, bookings, revenue) for gavel's end-to-end tests.
#[derive(Debug, Parser)]
#[command(version)]
struct Cli {
    /// Address to listen on (`127.0.0.1:0` picks a free port).
    #[arg(long, env = "PROPERTY_AGENT_ADDR", default_value = "127.0.0.1:8787")]
    addr: String,
    /// SQLite database: a file path or `sqlite:` URL.
    #[arg(long, env = "PROPERTY_AGENT_DB", default_value = "sqlite::memory:")]
    db: String,
    /// Comma-separated bugs to inject: wrong-count, skip-tools, forget-context, slow,
    /// crash-on-revenue, lose-on-restart, leak-branches, ignore-clarification, no-done,
    /// empty-stream, wrong-tool-args, redundant-calls, wrong-total, no-persist.
    #[arg(long, env = "PROPERTY_AGENT_BUG", default_value = "", value_parser = parse_bugs)]
    bug: Bugs,
    /// Answer JSON lines on stdin instead of serving HTTP.
    #[arg(long)]
    stdio: bool,
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("property-agent: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> Result<(), Box<dyn std::error::Error>> {
    let db = Db::open(&cli.db)
        .await
        .map_err(|e| format!("cannot open database {}: {e}", cli.db))?;
    let agent = Agent::new(db, cli.bug);
    if cli.stdio {
        return Ok(stdio::run(agent).await?);
    }
    let listener = tokio::net::TcpListener::bind(&cli.addr)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", cli.addr))?;
    let mut stdout = std::io::stdout();
    writeln!(
        stdout,
        "property-agent listening on http://{}",
        listener.local_addr()?
    )?;
    stdout.flush()?;
    axum::serve(listener, http::router(agent))
        .with_graceful_shutdown(shutdown())
        .await?;
    Ok(())
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown() {
    #[cfg(unix)]
    if let Ok(mut term) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
    {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        return;
    }
    let _ = tokio::signal::ctrl_c().await;
}
