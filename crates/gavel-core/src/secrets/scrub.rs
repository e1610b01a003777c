//! A suite's settings fit to store with a run (the suite snapshot): `$VAR`
//! references are kept as written, literal secrets are replaced.

use std::collections::BTreeMap;

use super::{REDACTED, is_secret_name, url::mask_literal_parts};
use crate::target::McpServer;
use crate::{Suite, TargetSpec};

/// Headers whose values are plain protocol words, not secrets; every other
/// header value is one.
const PROTOCOL_HEADERS: &[&str] = &[
    "accept",
    "accept-encoding",
    "accept-language",
    "cache-control",
    "connection",
    "content-type",
    "user-agent",
];

/// Whether the value of the header `name` is a secret: every header's is, but
/// plain protocol headers such as `Content-Type`.
pub fn is_secret_header(name: &str) -> bool {
    !PROTOCOL_HEADERS.contains(&name.to_ascii_lowercase().as_str())
}

/// Whether `value` is written out rather than read from the environment.
fn literal(value: &str) -> bool {
    !value.contains('$')
}

impl Suite {
    /// Replaces the literal secrets of the suite's settings: header values
    /// ([`is_secret_header`]) and the `env` values whose names mark a secret
    /// ([`is_secret_name`]) become [`REDACTED`], URL passwords and secret query
    /// values `***`. Values that read `$VAR` are kept: they hold no secret.
    pub fn scrub_secrets(&mut self) {
        self.targets
            .values_mut()
            .for_each(TargetSpec::scrub_secrets);
        let judge = &mut self.judge;
        [
            &mut judge.model,
            &mut judge.agent_model,
            &mut judge.embedder,
        ]
        .into_iter()
        .flatten()
        .for_each(scrub_url);
        if let Some(endpoint) = self.otel.as_mut().and_then(|o| o.endpoint.as_mut()) {
            scrub_url(endpoint);
        }
    }
}

impl TargetSpec {
    /// Replaces the target's literal secrets, as [`Suite::scrub_secrets`].
    pub fn scrub_secrets(&mut self) {
        match self {
            TargetSpec::Http(h) => {
                scrub_url(&mut h.url);
                for (name, value) in &mut h.headers {
                    if is_secret_header(name) && literal(value) {
                        *value = REDACTED.to_owned();
                    }
                }
                if let Some(start) = &mut h.start {
                    scrub_env(&mut start.env);
                    start.ready_url.iter_mut().for_each(scrub_url);
                }
                if let Some(restart) = &mut h.restart {
                    restart.url.iter_mut().for_each(scrub_url);
                    restart.ready_url.iter_mut().for_each(scrub_url);
                }
                if let Some(fork) = &mut h.fork {
                    scrub_url(&mut fork.url);
                }
            }
            TargetSpec::Command(c) => scrub_env(&mut c.env),
            TargetSpec::Workspace(w) => scrub_env(&mut w.env),
            TargetSpec::Chat(c) => scrub_url(&mut c.model),
            TargetSpec::McpAgent(a) => {
                scrub_url(&mut a.model);
                for server in &mut a.servers {
                    match server {
                        McpServer::Stdio { env, .. } => scrub_env(env),
                        McpServer::StreamableHttp { url } | McpServer::Sse { url } => {
                            scrub_url(url)
                        }
                    }
                }
            }
            TargetSpec::Replay(_) => {}
        }
    }
}

/// Replaces the literal values of secret-named variables.
fn scrub_env(env: &mut BTreeMap<String, String>) {
    for (name, value) in env {
        if is_secret_name(name) && literal(value) {
            *value = REDACTED.to_owned();
        }
    }
}

/// Masks the literal secret parts of a URL (or of a model id holding one).
fn scrub_url(url: &mut String) {
    if let Some(masked) = mask_literal_parts(url) {
        *url = masked;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::Suite;

    #[test]
    fn literal_secrets_are_replaced_and_references_kept() {
        let mut suite: Suite = serde_json::from_value(json!({
            "name": "s", "files": [], "cases": [], "warnings": [],
            "judge": {"model": "openai-compatible:m@http://u:judge-pw-literal@h/v1"},
            "targets": {
                "web": {"type": "http", "url": "http://agent:url-pw-literal@h/x?api_key=${KEY}",
                        "headers": {"Authorization": "Bearer literal-token-1",
                                    "X-Env": "Bearer ${TOKEN}", "Content-Type": "application/json"},
                        "start": {"command": ["sh"], "env": {"DB_PASSWORD": "pw-literal-2", "PORT": "8080"}}},
                "cmd": {"type": "command", "command": ["sh"],
                        "env": {"AGENT_TOKEN": "${AGENT_TOKEN}", "API_KEY": "literal-key-3"}}
            }
        }))
        .unwrap();
        suite.scrub_secrets();
        let text = serde_json::to_string(&suite).unwrap();
        for secret in [
            "judge-pw-literal",
            "url-pw-literal",
            "literal-token-1",
            "pw-literal-2",
            "literal-key-3",
        ] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        for kept in [
            "${KEY}",
            "Bearer ${TOKEN}",
            "${AGENT_TOKEN}",
            "application/json",
            "8080",
            "http://u:***@h/v1",
        ] {
            assert!(text.contains(kept), "{kept} missing from {text}");
        }
    }
}
