//! Turning genai's failures into classified [`ModelError`]s: the provider's half
//! of the retry contract (the retry layer acts on the class, this only names it).

use std::time::{Duration, SystemTime};

use genai::webc;
use serde_json::Value;

use crate::{ErrorKind, ModelError, retry_after};

/// How much of a response body goes into an error message.
const EXCERPT_CHARS: usize = 200;

/// The class and message for a failed genai call.
pub(crate) fn classify(error: genai::Error) -> ModelError {
    match error {
        genai::Error::WebModelCall { webc_error, .. }
        | genai::Error::WebAdapterCall { webc_error, .. } => classify_webc(webc_error),
        genai::Error::HttpError {
            status,
            body,
            headers,
            ..
        } => classify_status(status.as_u16(), status.canonical_reason(), &body, |name| {
            headers.get(name).and_then(|value| value.to_str().ok())
        }),
        genai::Error::ChatResponseGeneration {
            response_body,
            cause,
            ..
        } => ModelError::new(
            ErrorKind::Malformed,
            format!(
                "unexpected response ({}): {}",
                one_line(&cause),
                excerpt(&response_body.to_string())
            ),
        ),
        genai::Error::ChatResponse { body, .. } => ModelError::new(
            ErrorKind::Permanent,
            format!(
                "the provider answered with an error: {}",
                provider_message_value(&body)
            ),
        ),
        genai::Error::Resolver { .. }
        | genai::Error::RequiresApiKey { .. }
        | genai::Error::NoAuthData { .. }
        | genai::Error::NoAuthResolver { .. } => {
            ModelError::new(ErrorKind::NoCredentials, "no API key for this provider")
        }
        // Request shaping (unsupported content, no messages…): retrying cannot help.
        // genai's messages name the model and the cause, never a credential.
        other => ModelError::new(ErrorKind::Permanent, one_line(&other.to_string())),
    }
}

fn classify_webc(error: webc::Error) -> ModelError {
    match error {
        webc::Error::ResponseFailedStatus {
            status,
            body,
            headers,
        } => classify_status(status.as_u16(), status.canonical_reason(), &body, |name| {
            headers.get(name).and_then(|value| value.to_str().ok())
        }),
        webc::Error::ResponseFailedInvalidJson { body, cause } => {
            // A body that stops mid-value was cut short on the way (the HTTP framing
            // looked complete): worth another try. Anything else is the server's
            // answer, and it will give it again.
            let truncated = serde_json::from_str::<Value>(&body)
                .err()
                .is_some_and(|error| error.classify() == serde_json::error::Category::Eof);
            if truncated {
                ModelError::new(
                    ErrorKind::Transient,
                    format!(
                        "the response body ended early ({}): {}",
                        one_line(&cause),
                        excerpt(&body)
                    ),
                )
            } else {
                ModelError::new(
                    ErrorKind::Malformed,
                    format!(
                        "the response is not valid JSON ({}): {}",
                        one_line(&cause),
                        excerpt(&body)
                    ),
                )
            }
        }
        webc::Error::ResponseFailedNotJson { content_type, body } => ModelError::new(
            ErrorKind::Malformed,
            format!(
                "the response is `{}`, not JSON: {}",
                if content_type.is_empty() {
                    "without a content type"
                } else {
                    &content_type
                },
                excerpt(&body)
            ),
        ),
        webc::Error::Reqwest(error) => {
            let kind = if error.is_timeout() {
                ErrorKind::Timeout
            } else if error.is_builder() || error.is_redirect() {
                ErrorKind::Permanent
            } else {
                // Connection refused or reset, TLS failure, body cut short: the
                // network's fault, worth another try.
                ErrorKind::Transient
            };
            let what = if error.is_timeout() {
                "the request timed out"
            } else if error.is_connect() {
                "could not connect"
            } else if error.is_body() || error.is_decode() {
                "the response body could not be read"
            } else {
                "the request failed"
            };
            // The URL stays out: it may carry a password in its userinfo.
            let error = error.without_url();
            ModelError::new(kind, format!("{what}: {}", error_chain(&error)))
        }
        other => ModelError::new(ErrorKind::Permanent, one_line(&other.to_string())),
    }
}

/// Classifies an HTTP error status; `header` reads a response header.
pub(crate) fn classify_status<'a>(
    status: u16,
    reason: Option<&str>,
    body: &str,
    header: impl Fn(&str) -> Option<&'a str>,
) -> ModelError {
    let kind = match status {
        401 | 403 => ErrorKind::Auth,
        429 => ErrorKind::RateLimited,
        408 => ErrorKind::Timeout,
        409 | 500..=599 => ErrorKind::Transient,
        _ => ErrorKind::Permanent,
    };
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    // Gemini refuses a bad key with a 400 whose details say API_KEY_INVALID.
    let kind = if kind == ErrorKind::Permanent && parsed.as_ref().is_some_and(google_key_invalid) {
        ErrorKind::Auth
    } else {
        kind
    };
    let message = match &parsed {
        Some(value) => provider_message_value(value),
        None if body.trim().is_empty() => "(empty body)".to_owned(),
        None => excerpt(body),
    };
    let status_line = match reason {
        Some(reason) => format!("HTTP {status} {reason}"),
        None => format!("HTTP {status}"),
    };
    let retry_after = if kind.is_retryable() {
        retry_after(&header, SystemTime::now())
            .or_else(|| parsed.as_ref().and_then(google_retry_delay))
    } else {
        None
    };
    ModelError::new(kind, format!("{status_line}: {message}")).retry_after(retry_after)
}

/// Gemini says how long to wait in the body: a `google.rpc.RetryInfo` detail
/// with `retryDelay: "37s"`.
fn google_retry_delay(body: &Value) -> Option<Duration> {
    body.pointer("/error/details")?
        .as_array()?
        .iter()
        .filter_map(|detail| detail.get("retryDelay")?.as_str())
        .find_map(|delay| {
            let seconds: f64 = delay.trim().strip_suffix('s')?.parse().ok()?;
            (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds))
        })
}

/// Whether a Google error body says the API key is invalid.
fn google_key_invalid(body: &Value) -> bool {
    body.pointer("/error/details")
        .and_then(Value::as_array)
        .is_some_and(|details| {
            details.iter().any(|detail| {
                detail.get("reason").and_then(Value::as_str) == Some("API_KEY_INVALID")
            })
        })
}

/// The provider's own words from an error body: OpenAI, Anthropic and Gemini all
/// put them in `error.message`, next to a type (`error.type` or `error.status`);
/// Ollama and others write `{"error": "..."}`.
pub(crate) fn provider_message_value(body: &Value) -> String {
    let error = body.get("error").unwrap_or(body);
    if let Some(message) = error.as_str() {
        return one_line(message);
    }
    match error.get("message").and_then(Value::as_str) {
        Some(message) => {
            let kind = error
                .get("type")
                .or_else(|| error.get("status"))
                .or_else(|| error.get("code"))
                .and_then(Value::as_str);
            match kind {
                Some(kind) => format!("{kind}: {}", one_line(message)),
                None => one_line(message),
            }
        }
        None => excerpt(&body.to_string()),
    }
}

/// The first [`EXCERPT_CHARS`] characters of `text`, on one line, secrets
/// redacted before the cut ([`gavel_core::secrets::excerpt`]).
pub(crate) fn excerpt(text: &str) -> String {
    let text = text.trim();
    if text.is_empty() {
        return "(empty body)".to_owned();
    }
    one_line(&gavel_core::secrets::excerpt(text, EXCERPT_CHARS))
}

/// `text` with line breaks and other control characters turned into spaces.
fn one_line(text: &str) -> String {
    text.trim()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// An error and its sources, `: `-separated, without repeating a source that its
/// parent's message already quotes.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let message = cause.to_string();
        if !out.contains(&message) {
            out.push_str(": ");
            out.push_str(&message);
        }
        source = cause.source();
    }
    one_line(&out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<&'a str> {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| key.eq_ignore_ascii_case(name))
                .map(|(_, value)| *value)
        }
    }

    #[test]
    fn retry_after_reads_ms_seconds_and_dates() {
        let now = SystemTime::now();
        assert_eq!(
            retry_after(&headers(&[("retry-after", "7")]), now),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            retry_after(&headers(&[("retry-after", "1.5")]), now),
            Some(Duration::from_millis(1500))
        );
        // retry-after-ms is the more precise of the two and wins.
        assert_eq!(
            retry_after(
                &headers(&[("retry-after", "1"), ("retry-after-ms", "250")]),
                now
            ),
            Some(Duration::from_millis(250))
        );
        let date = httpdate::fmt_http_date(now + Duration::from_secs(30));
        let waited = retry_after(&headers(&[("retry-after", &date)]), now).unwrap();
        assert!(
            waited >= Duration::from_secs(29) && waited <= Duration::from_secs(30),
            "{waited:?}"
        );
        // A date in the past means "now".
        let past = httpdate::fmt_http_date(now - Duration::from_secs(30));
        assert_eq!(
            retry_after(&headers(&[("retry-after", &past)]), now),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after(&headers(&[("retry-after", "soon")]), now), None);
        assert_eq!(retry_after(&headers(&[("retry-after", "-3")]), now), None);
        assert_eq!(retry_after(&headers(&[]), now), None);
    }

    #[test]
    fn statuses_map_to_kinds() {
        let none = headers(&[]);
        for (status, kind) in [
            (400, ErrorKind::Permanent),
            (401, ErrorKind::Auth),
            (403, ErrorKind::Auth),
            (404, ErrorKind::Permanent),
            (408, ErrorKind::Timeout),
            (409, ErrorKind::Transient),
            (422, ErrorKind::Permanent),
            (429, ErrorKind::RateLimited),
            (500, ErrorKind::Transient),
            (502, ErrorKind::Transient),
            (503, ErrorKind::Transient),
            (529, ErrorKind::Transient),
        ] {
            assert_eq!(
                classify_status(status, None, "", &none).kind,
                kind,
                "{status}"
            );
        }
    }

    #[test]
    fn gemini_retry_delay_comes_from_the_body() {
        let body = r#"{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED",
            "details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}"#;
        let err = classify_status(429, Some("Too Many Requests"), body, headers(&[]));
        assert_eq!(err.kind, ErrorKind::RateLimited);
        assert_eq!(err.retry_after, Some(Duration::from_secs(37)));
        assert_eq!(
            err.message,
            "HTTP 429 Too Many Requests: RESOURCE_EXHAUSTED: Quota exceeded"
        );
    }

    #[test]
    fn messages_come_from_each_error_shape() {
        let openai = serde_json::json!({"error": {"message": "bad", "type": "invalid_request_error", "param": null, "code": null}});
        assert_eq!(
            provider_message_value(&openai),
            "invalid_request_error: bad"
        );
        let ollama = serde_json::json!({"error": "model \"x\" not found"});
        assert_eq!(provider_message_value(&ollama), "model \"x\" not found");
        let other = serde_json::json!({"detail": "nope"});
        assert_eq!(provider_message_value(&other), r#"{"detail":"nope"}"#);
    }

    #[test]
    fn excerpts_are_short_single_lines() {
        let long = "x".repeat(500);
        let cut = excerpt(&long);
        assert_eq!(cut.chars().count(), EXCERPT_CHARS + 1);
        assert!(cut.ends_with('…'));
        assert_eq!(excerpt("a\nb"), "a b");
        assert_eq!(excerpt("  "), "(empty body)");
    }
}
