//! The settings of a target that take `${NAME}` from the environment
//! ([`crate::template::expand_env`]), each with its field path.

use std::collections::BTreeMap;

use super::{McpServer, StartSpec, TargetSpec};

impl TargetSpec {
    /// Every setting expanded from the environment when the target is built or
    /// started, as (field path, text): what the loader checks for malformed
    /// `${…}` before anything runs.
    pub fn expanded(&self) -> Vec<(String, &str)> {
        let mut out = Vec::new();
        match self {
            TargetSpec::Http(http) => {
                out.push(("url".to_owned(), http.url.as_str()));
                map(&mut out, "headers", &http.headers);
                if let Some(start) = &http.start {
                    started(&mut out, start);
                }
                if let Some(restart) = &http.restart {
                    list(
                        &mut out,
                        "restart.command",
                        restart.command.iter().flatten(),
                    );
                    let urls = [("url", &restart.url), ("ready_url", &restart.ready_url)];
                    for (field, url) in urls {
                        if let Some(url) = url {
                            out.push((format!("restart.{field}"), url.as_str()));
                        }
                    }
                }
                if let Some(fork) = &http.fork {
                    out.push(("fork.url".to_owned(), fork.url.as_str()));
                }
            }
            TargetSpec::Workspace(w) => {
                list(&mut out, "agent", &w.agent);
                map(&mut out, "env", &w.env);
            }
            TargetSpec::Command(command) => {
                list(&mut out, "command", &command.command);
                if let Some(cwd) = &command.cwd {
                    out.push(("cwd".to_owned(), cwd.as_str()));
                }
                map(&mut out, "env", &command.env);
            }
            TargetSpec::McpAgent(agent) => {
                for (i, server) in agent.servers.iter().enumerate() {
                    match server {
                        McpServer::Stdio { command, env } => {
                            list(&mut out, &format!("servers[{i}].command"), command);
                            map(&mut out, &format!("servers[{i}].env"), env);
                        }
                        McpServer::StreamableHttp { url } | McpServer::Sse { url } => {
                            out.push((format!("servers[{i}].url"), url.as_str()));
                        }
                    }
                }
            }
            TargetSpec::Chat(_) | TargetSpec::Replay(_) => {}
        }
        out
    }
}

fn started<'a>(out: &mut Vec<(String, &'a str)>, start: &'a StartSpec) {
    list(out, "start.command", &start.command);
    if let Some(cwd) = &start.cwd {
        out.push(("start.cwd".to_owned(), cwd.as_str()));
    }
    map(out, "start.env", &start.env);
    if let Some(url) = &start.ready_url {
        out.push(("start.ready_url".to_owned(), url.as_str()));
    }
}

fn list<'a>(
    out: &mut Vec<(String, &'a str)>,
    field: &str,
    items: impl IntoIterator<Item = &'a String>,
) {
    for (i, item) in items.into_iter().enumerate() {
        out.push((format!("{field}[{i}]"), item.as_str()));
    }
}

fn map<'a>(out: &mut Vec<(String, &'a str)>, field: &str, entries: &'a BTreeMap<String, String>) {
    for (key, value) in entries {
        out.push((format!("{field}.{key}"), value.as_str()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_expanded_setting_is_listed_with_its_field() {
        let spec: TargetSpec = serde_json::from_value(serde_json::json!({
            "type": "http",
            "url": "http://h/${P}",
            "headers": {"X-Key": "${K}"},
            "start": {"command": ["sh", "-c", "x"], "env": {"A": "1"}, "ready_url": "http://h/ok"},
        }))
        .unwrap();
        let fields: Vec<String> = spec.expanded().into_iter().map(|(f, _)| f).collect();
        assert_eq!(
            fields,
            [
                "url",
                "headers.X-Key",
                "start.command[0]",
                "start.command[1]",
                "start.command[2]",
                "start.env.A",
                "start.ready_url"
            ]
        );
    }
}
