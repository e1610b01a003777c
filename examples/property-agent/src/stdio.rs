//! JSON-lines mode: one request object per stdin line, one response object per stdout line.

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::agent::Agent;
use crate::api::{error_body, parse_request};

/// Answers each non-blank stdin line until EOF; logs go to stderr only.
pub(crate) async fn run(agent: Agent) -> std::io::Result<()> {
    let mut input = BufReader::new(tokio::io::stdin());
    let mut output = tokio::io::stdout();
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line).await? == 0 {
            return Ok(());
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let response = match parse_request(&line) {
            Err(message) => error_body(&message),
            Ok(request) => match agent.respond(&request).await {
                Ok(response) => {
                    serde_json::to_value(response).unwrap_or_else(|e| error_body(&e.to_string()))
                }
                Err(e) => {
                    eprintln!("property-agent: internal error: {e}");
                    error_body("internal")
                }
            },
        };
        output.write_all(format!("{response}\n").as_bytes()).await?;
        output.flush().await?;
    }
}
