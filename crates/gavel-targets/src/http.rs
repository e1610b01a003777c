//! The `http` target: one JSON request per message, built from a body template;
//! the answer read from the JSON response by pointers.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gavel_core::target::{HttpTarget, ResponseMap, StreamMap};
use gavel_core::{TargetFailure, Turn};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode, Url};
use serde_json::{Value, json};

use crate::error::{self, TargetError};
use crate::retry::{self, RetryPolicy, Try};
use crate::{Session, Target, TurnRequest, permanent, response, transient};

/// Variables a body template may use.
const VARIABLES: [&str; 6] = [
    "session_id",
    "message",
    "context",
    "history",
    "case_id",
    "round",
];

/// How much of an error response's body goes into the failure message.
const BODY_EXCERPT: usize = 200;

/// An http target, built once per run; its client reuses connections.
pub(crate) struct HttpAdapter {
    inner: Arc<Inner>,
}

struct Inner {
    name: String,
    client: reqwest::Client,
    method: Method,
    url: Url,
    /// Header values are secrets: marked sensitive, never printed.
    headers: HeaderMap,
    body: Value,
    response: ResponseMap,
    timeout: Duration,
    /// Read the answer as a stream of events.
    stream: Option<StreamMap>,
    /// How to restart the agent (revival) and fork sessions (branching).
    ops: crate::http_ops::Ops,
    /// Tries of a message after transient failures (`retry:`; none: one try).
    retry: Option<RetryPolicy>,
}

impl fmt::Debug for HttpAdapter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = &self.inner;
        let headers: Vec<&str> = i.headers.keys().map(HeaderName::as_str).collect();
        f.debug_struct("HttpAdapter")
            .field("name", &i.name)
            .field("method", &i.method)
            .field("url", &display_url(&i.url))
            .field("headers", &format_args!("{headers:?} (values redacted)"))
            .field("body", &i.body)
            .field("response", &i.response)
            .field("timeout", &i.timeout)
            .field("stream", &i.stream)
            .field("ops", &i.ops)
            .field("retry", &i.retry)
            .finish()
    }
}

impl HttpAdapter {
    pub(crate) fn build(name: &str, spec: &HttpTarget) -> Result<Self, TargetError> {
        let url_text = error::expand(name, || "url".into(), &spec.url)?;
        gavel_core::secrets::register_url(&url_text);
        let url =
            Url::parse(&url_text).map_err(|e| TargetError::config(name, "url", e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(TargetError::config(
                name,
                "url",
                format!("scheme must be http or https, not `{}`", url.scheme()),
            ));
        }
        let method = match &spec.method {
            None => Method::POST,
            Some(m) => {
                Method::from_bytes(m.trim().to_ascii_uppercase().as_bytes()).map_err(|_| {
                    TargetError::config(name, "method", format!("`{m}` is not an HTTP method"))
                })?
            }
        };
        let mut headers = HeaderMap::new();
        for (key, template) in &spec.headers {
            let field = || format!("headers.{key}");
            let header = HeaderName::from_bytes(key.as_bytes())
                .map_err(|_| TargetError::config(name, field(), "not a valid header name"))?;
            if template == gavel_core::secrets::REDACTED {
                // A literal value is not stored with the run (`Suite::scrub_secrets`).
                return Err(TargetError::config(
                    name,
                    field(),
                    "its literal value is not stored with the run, so a resumed or distributed run cannot send it: write it as ${VAR}",
                ));
            }
            let value = error::expand_secret(name, field, template)?;
            if gavel_core::secrets::is_secret_header(header.as_str()) {
                gavel_core::secrets::register(&value);
            }
            // The message never includes the value: it may hold a secret.
            let mut value = HeaderValue::from_str(&value).map_err(|_| {
                TargetError::config(
                    name,
                    field(),
                    "the expanded value is not a valid header value (control characters?)",
                )
            })?;
            value.set_sensitive(true);
            headers.insert(header, value);
        }
        let body = spec.body.clone().unwrap_or_else(default_body);
        check_template(&body).map_err(|message| TargetError::config(name, "body", message))?;
        response::validate(name, &spec.response)?;
        let timeout = error::timeout(name, "timeout_s", spec.timeout_s, 60.0)?;
        let client = reqwest::Client::builder().build().map_err(|e| {
            TargetError::config(name, "url", format!("cannot create an HTTP client: {e}"))
        })?;
        let ops = crate::http_ops::Ops::build(name, spec)?;
        if let Some(stream) = &spec.stream {
            for (field, pointer) in [("stream.kind", &stream.kind), ("stream.text", &stream.text)] {
                if !pointer.is_empty() && !pointer.starts_with('/') {
                    return Err(TargetError::config(
                        name,
                        field,
                        format!("`{pointer}` is not a JSON pointer (it must start with `/`)"),
                    ));
                }
            }
        }
        Ok(HttpAdapter {
            inner: Arc::new(Inner {
                name: name.to_owned(),
                client,
                method,
                url,
                headers,
                body,
                response: spec.response.clone(),
                timeout,
                stream: spec.stream.clone(),
                ops,
                retry: spec.retry.as_ref().map(RetryPolicy::from_spec),
            }),
        })
    }
}

/// `{"session_id": "{{ session_id }}", "message": "{{ message }}", "context": "{{ context }}"}`
fn default_body() -> Value {
    json!({"session_id": "{{ session_id }}", "message": "{{ message }}", "context": "{{ context }}"})
}

/// Compiles every string leaf of the body template and rejects unknown variables,
/// so mistakes show before the run rather than on every turn.
fn check_template(body: &Value) -> Result<(), String> {
    let env = minijinja::Environment::new();
    let globals: Vec<&str> = env.globals().map(|(name, _)| name).collect();
    let mut leaves = Vec::new();
    collect_strings(body, &mut leaves);
    for leaf in leaves {
        if !leaf.contains("{{") && !leaf.contains("{%") {
            continue;
        }
        let template = env
            .template_from_str(leaf)
            .map_err(|e| format!("template `{leaf}`: {e}"))?;
        let mut unknown: Vec<String> = template
            .undeclared_variables(false)
            .into_iter()
            .filter(|v| !VARIABLES.contains(&v.as_str()) && !globals.contains(&v.as_str()))
            .collect();
        unknown.sort();
        if let Some(first) = unknown.first() {
            return Err(format!(
                "template `{leaf}`: unknown variable `{first}` (known: {})",
                VARIABLES.join(", ")
            ));
        }
    }
    Ok(())
}

fn collect_strings<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}

/// The URL without password or query (either may hold a secret).
fn display_url(url: &Url) -> String {
    let mut shown = url.clone();
    if shown.password().is_some() {
        let _ = shown.set_password(Some("***"));
    }
    shown.set_query(None);
    shown.set_fragment(None);
    shown.to_string()
}

#[async_trait::async_trait]
impl Target for HttpAdapter {
    async fn open(&self, session_id: &str) -> Result<Box<dyn Session>, TargetFailure> {
        Ok(Box::new(HttpSession {
            inner: Arc::clone(&self.inner),
            session_id: session_id.to_owned(),
        }))
    }

    fn kind(&self) -> &'static str {
        "http"
    }

    async fn revive(
        &self,
        session: Box<dyn Session>,
        session_id: &str,
    ) -> Result<Box<dyn Session>, TargetFailure> {
        session.close().await;
        self.inner
            .ops
            .restart(&self.inner.name, &self.inner.client)
            .await?;
        self.open(session_id).await
    }

    async fn fork(&self, parent: &str, child: &str) -> Result<(), TargetFailure> {
        self.inner
            .ops
            .fork(&self.inner.name, &self.inner.client, parent, child)
            .await
    }
}

/// http is stateless: the session id travels in each request.
struct HttpSession {
    inner: Arc<Inner>,
    session_id: String,
}

#[async_trait::async_trait]
impl Session for HttpSession {
    async fn send(&mut self, req: &TurnRequest<'_>) -> Turn {
        let inner = &self.inner;
        let mut turn = req.turn();
        let body = match gavel_core::template::render_json(&inner.body, &req.to_json()) {
            Ok(body) => body,
            Err(e) => {
                turn.failure = Some(permanent(format!("target `{}`: body: {e}", inner.name)));
                return turn;
            }
        };
        tracing::debug!(target = %inner.name, session = %self.session_id, round = req.round, "http request");
        if let Some(map) = &inner.stream {
            // A stream is read as it comes: it is sent once, never retried.
            inner
                .stream_turn(body, map, Instant::now(), &mut turn)
                .await;
            return crate::redacted(turn);
        }
        // Secrets (header values, keys) an agent echoes are redacted before the
        // turn leaves the adapter: nothing downstream ever sees them.
        crate::redacted(
            retry::send(inner.retry, || inner.try_once(body.clone(), turn.clone())).await,
        )
    }

    async fn close(self: Box<Self>) {}
}

impl Inner {
    /// One try at a message: the request, the answer read into `turn`.
    async fn try_once(&self, body: Value, mut turn: Turn) -> Try {
        let started = Instant::now();
        let result = tokio::time::timeout(self.timeout, self.exchange(body)).await;
        turn.latency_ms = crate::elapsed_ms(started);
        let (status, retry_after, bytes) = match result {
            Err(_) => {
                let secs = self.timeout.as_secs_f64();
                turn.failure = Some(transient(format!("timed out after {secs}s")));
                return Try::of(turn);
            }
            Ok(Err(failure)) => {
                turn.failure = Some(failure);
                return Try::of(turn);
            }
            Ok(Ok(answer)) => answer,
        };
        let json = serde_json::from_slice::<Value>(&bytes);
        if !status.is_success() {
            let text = String::from_utf8_lossy(&bytes);
            let message = format!(
                "{} {} answered HTTP {status}: {}",
                self.method,
                display_url(&self.url),
                crate::process::truncate(text.trim(), BODY_EXCERPT)
            );
            let retry = status == StatusCode::TOO_MANY_REQUESTS
                || status == StatusCode::REQUEST_TIMEOUT
                || status.is_server_error();
            turn.failure = Some(TargetFailure {
                message,
                transient: retry,
            });
            turn.response = json.ok();
            return Try {
                turn,
                retry_after,
                rate_limited: status == StatusCode::TOO_MANY_REQUESTS,
                malformed: false,
            };
        }
        let json = match json {
            Ok(json) => json,
            // An empty or cut-short body is the transport's fault as often as the
            // agent's: worth another try, as a provider's malformed answer is.
            Err(e) => {
                let text = String::from_utf8_lossy(&bytes);
                let excerpt = match text.trim() {
                    "" => "(empty body)".to_owned(),
                    text => crate::process::truncate(text, BODY_EXCERPT),
                };
                turn.failure = Some(transient(format!(
                    "response is not JSON: {e}; body: {excerpt}"
                )));
                return Try {
                    malformed: true,
                    ..Try::of(turn)
                };
            }
        };
        if let Err(message) = response::extract(&json, &self.response, &mut turn) {
            turn.failure = Some(permanent(message));
        }
        turn.response = Some(json);
        Try::of(turn)
    }

    /// Sends the request and reads the answer as a stream of events, within the
    /// timeout; what came before a timeout stays in the turn.
    async fn stream_turn(&self, body: Value, map: &StreamMap, started: Instant, turn: &mut Turn) {
        let exchange = async {
            let response = self
                .client
                .request(self.method.clone(), self.url.clone())
                .headers(self.headers.clone())
                .json(&body)
                .send()
                .await
                .map_err(|e| self.failure(e))?;
            let status = response.status();
            if !status.is_success() {
                let text = response.text().await.unwrap_or_default();
                let message = format!(
                    "{} {} answered HTTP {status}: {}",
                    self.method,
                    display_url(&self.url),
                    crate::process::truncate(text.trim(), BODY_EXCERPT)
                );
                let retry = status == StatusCode::TOO_MANY_REQUESTS
                    || status == StatusCode::REQUEST_TIMEOUT
                    || status.is_server_error();
                return Err(TargetFailure {
                    message,
                    transient: retry,
                });
            }
            crate::stream::read(response.bytes_stream(), map, started, turn).await;
            Ok(())
        };
        let result = tokio::time::timeout(self.timeout, exchange).await;
        turn.latency_ms = crate::elapsed_ms(started);
        match result {
            Err(_) => {
                let secs = self.timeout.as_secs_f64();
                turn.failure = Some(transient(format!("the stream timed out after {secs}s")));
            }
            Ok(Err(failure)) => turn.failure = Some(failure),
            Ok(Ok(())) => {}
        }
    }

    /// Sends the request and reads the whole body, and the Retry-After of a
    /// 429 or 503.
    async fn exchange(
        &self,
        body: Value,
    ) -> Result<(StatusCode, Option<Duration>, Vec<u8>), TargetFailure> {
        let request = self
            .client
            .request(self.method.clone(), self.url.clone())
            .headers(self.headers.clone())
            .json(&body);
        let response = request.send().await.map_err(|e| self.failure(e))?;
        let status = response.status();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|value| value.to_str().ok())
        };
        let retry_after = gavel_models::retry_after(&header, std::time::SystemTime::now());
        let bytes = response.bytes().await.map_err(|e| self.failure(e))?;
        Ok((status, retry_after, Vec::from(bytes)))
    }

    /// Classifies a transport error; the message names the URL without secrets and
    /// the underlying cause (refused, reset, ...). Every fault of the exchange is
    /// worth another try (refused, reset, a body cut short or unreadable), as on
    /// a provider's path; a request that cannot be built or loops on redirects is not.
    fn failure(&self, e: reqwest::Error) -> TargetFailure {
        let transient = !(e.is_builder() || e.is_redirect());
        let e = e.without_url();
        let mut message = format!("{} {}: {e}", self.method, display_url(&self.url));
        let mut source = std::error::Error::source(&e);
        while let Some(cause) = source {
            message.push_str(": ");
            message.push_str(&cause.to_string());
            source = cause.source();
        }
        TargetFailure { message, transient }
    }
}
