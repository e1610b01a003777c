//! Session operations of the http target beyond sending messages: restarting the
//! agent for revival and forking a session for branching.

use std::time::{Duration, Instant};

use gavel_core::TargetFailure;
use gavel_core::target::{ForkSpec, HttpTarget, RestartSpec};
use reqwest::{Method, Url};
use serde_json::{Value, json};

use crate::error::{self, TargetError};
use crate::{permanent, transient};

/// The http target's restart and fork settings, expanded and validated.
#[derive(Default)]
pub(crate) struct Ops {
    restart: Option<Restart>,
    fork: Option<Fork>,
}

/// Shows only what is configured: URLs and commands may hold secrets.
impl std::fmt::Debug for Ops {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ops")
            .field("restart", &self.restart.is_some())
            .field("fork", &self.fork.is_some())
            .finish()
    }
}

struct Restart {
    command: Option<Vec<String>>,
    endpoint: Option<(Method, Url)>,
    ready_url: Option<Url>,
    timeout: Duration,
}

struct Fork {
    method: Method,
    /// Expanded from the environment; rendered per fork.
    url: String,
    body: Value,
}

fn method(name: &str, field: &str, m: Option<&str>) -> Result<Method, TargetError> {
    match m {
        None => Ok(Method::POST),
        Some(m) => Method::from_bytes(m.trim().to_ascii_uppercase().as_bytes())
            .map_err(|_| TargetError::config(name, field, format!("`{m}` is not an HTTP method"))),
    }
}

fn url(name: &str, field: &str, text: &str) -> Result<Url, TargetError> {
    let text = error::expand(name, || field.to_owned(), text)?;
    gavel_core::secrets::register_url(&text);
    Url::parse(&text).map_err(|e| TargetError::config(name, field, e.to_string()))
}

impl Ops {
    pub(crate) fn build(name: &str, spec: &HttpTarget) -> Result<Ops, TargetError> {
        Ok(Ops {
            restart: spec
                .restart
                .as_ref()
                .map(|r| Restart::build(name, r))
                .transpose()?,
            fork: spec
                .fork
                .as_ref()
                .map(|f| Fork::build(name, f))
                .transpose()?,
        })
    }

    /// Restarts the agent: runs the command, calls the endpoint, waits until ready.
    pub(crate) async fn restart(
        &self,
        name: &str,
        client: &reqwest::Client,
    ) -> Result<(), TargetFailure> {
        let Some(restart) = &self.restart else {
            return Err(permanent(format!(
                "target `{name}`: revival needs `restart` (a command or an endpoint) in the http target's config"
            )));
        };
        let deadline = Instant::now() + restart.timeout;
        let late = || {
            transient(format!(
                "target `{name}`: restart: not done within {:.1}s",
                restart.timeout.as_secs_f64()
            ))
        };
        if let Some(argv) = &restart.command {
            let mut cmd = crate::process::command(argv, None, &[]);
            cmd.stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null());
            let status = tokio::time::timeout_at(deadline.into(), cmd.status())
                .await
                .map_err(|_| late())?
                .map_err(|e| {
                    permanent(format!(
                        "target `{name}`: restart: cannot run `{}`: {e}",
                        argv[0]
                    ))
                })?;
            if !status.success() {
                return Err(permanent(format!(
                    "target `{name}`: restart: `{}` failed ({status})",
                    argv[0]
                )));
            }
        }
        if let Some((method, url)) = &restart.endpoint {
            let call = client.request(method.clone(), url.clone()).send();
            let response = tokio::time::timeout_at(deadline.into(), call)
                .await
                .map_err(|_| late())?
                .map_err(|e| transient(format!("target `{name}`: restart: {}", e.without_url())))?;
            if !response.status().is_success() {
                return Err(permanent(format!(
                    "target `{name}`: restart: the endpoint answered HTTP {}",
                    response.status()
                )));
            }
        }
        if let Some(ready) = &restart.ready_url {
            loop {
                let wait = deadline
                    .saturating_duration_since(Instant::now())
                    .clamp(Duration::from_millis(1), Duration::from_secs(1));
                let answer = client.get(ready.clone()).timeout(wait).send().await;
                if matches!(answer, Ok(r) if r.status().is_success()) {
                    break;
                }
                if Instant::now() >= deadline {
                    return Err(late());
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        tracing::debug!(target = %name, "restarted");
        Ok(())
    }

    /// Forks `parent` into `child` with the configured request.
    pub(crate) async fn fork(
        &self,
        name: &str,
        client: &reqwest::Client,
        parent: &str,
        child: &str,
    ) -> Result<(), TargetFailure> {
        let Some(fork) = &self.fork else {
            return Err(permanent(format!(
                "target `{name}`: branching needs `fork` (the endpoint that copies a session) in the http target's config"
            )));
        };
        let vars = json!({"parent_session_id": parent, "session_id": child});
        let rendered = |template: &Value, field: &str| {
            gavel_core::template::render_json(template, &vars)
                .map_err(|e| permanent(format!("target `{name}`: fork.{field}: {e}")))
        };
        let url_text = match rendered(&Value::String(fork.url.clone()), "url")? {
            Value::String(s) => s,
            other => other.to_string(),
        };
        let url = Url::parse(&url_text)
            .map_err(|e| permanent(format!("target `{name}`: fork.url: {e}")))?;
        let body = rendered(&fork.body, "body")?;
        let response = client
            .request(fork.method.clone(), url)
            .json(&body)
            .send()
            .await
            .map_err(|e| transient(format!("target `{name}`: fork: {}", e.without_url())))?;
        let status = response.status();
        if !status.is_success() {
            let text = response.text().await.unwrap_or_default();
            return Err(TargetFailure {
                message: format!(
                    "target `{name}`: fork answered HTTP {status}: {}",
                    crate::process::truncate(text.trim(), 200)
                ),
                transient: status.is_server_error(),
            });
        }
        Ok(())
    }
}

impl Restart {
    fn build(name: &str, spec: &RestartSpec) -> Result<Restart, TargetError> {
        if spec.command.is_none() && spec.url.is_none() {
            return Err(TargetError::config(
                name,
                "restart",
                "give `command`, `url` or both",
            ));
        }
        let command = match &spec.command {
            None => None,
            Some(argv) if argv.is_empty() => {
                return Err(TargetError::config(
                    name,
                    "restart.command",
                    "must name a program",
                ));
            }
            Some(argv) => Some(
                argv.iter()
                    .enumerate()
                    .map(|(i, a)| error::expand(name, || format!("restart.command[{i}]"), a))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        let endpoint = match &spec.url {
            None => None,
            Some(u) => Some((
                method(name, "restart.method", spec.method.as_deref())?,
                url(name, "restart.url", u)?,
            )),
        };
        Ok(Restart {
            command,
            endpoint,
            ready_url: spec
                .ready_url
                .as_deref()
                .map(|u| url(name, "restart.ready_url", u))
                .transpose()?,
            timeout: error::timeout(name, "restart.timeout_s", spec.timeout_s, 60.0)?,
        })
    }
}

impl Fork {
    fn build(name: &str, spec: &ForkSpec) -> Result<Fork, TargetError> {
        let url = error::expand(name, || "fork.url".into(), &spec.url)?;
        Ok(Fork {
            method: method(name, "fork.method", spec.method.as_deref())?,
            url,
            body: spec.body.clone().unwrap_or_else(
                || json!({"parent_session_id": "{{ parent_session_id }}", "session_id": "{{ session_id }}"}),
            ),
        })
    }
}
