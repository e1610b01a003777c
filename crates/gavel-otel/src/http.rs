//! The HTTP client of the OTLP/HTTP exports. Left to themselves, the trace and
//! log exporters each build a client: a thread of its own and, for TLS, the
//! system's certificates read and parsed again (more CPU than exporting a few
//! hundred executions). One client serves both signals here, and a receiver
//! reached over plain HTTP gets a client that loads no certificates.

use std::time::Duration;

use reqwest::blocking::Client;

use crate::watch::receiver;
use crate::{OtelError, Settings};

/// `OTEL_EXPORTER_OTLP_TIMEOUT`: milliseconds per export request.
const TIMEOUT_VAR: &str = "OTEL_EXPORTER_OTLP_TIMEOUT";
/// The OTLP default timeout.
const TIMEOUT: Duration = Duration::from_secs(10);

/// The client for `settings`' signals (traces, and logs when sent). Built off
/// any async executor: a blocking client must not be built on one.
pub(crate) fn client(settings: &Settings) -> Result<Client, OtelError> {
    let signals: &[&str] = if settings.logs {
        &["traces", "logs"]
    } else {
        &["traces"]
    };
    let plain = signals.iter().all(|s| {
        let url = receiver(settings, s);
        url.get(..7)
            .is_some_and(|scheme| scheme.eq_ignore_ascii_case("http://"))
    });
    let timeout = std::env::var(TIMEOUT_VAR)
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(TIMEOUT, Duration::from_millis);
    let build = move || {
        let builder = Client::builder().timeout(timeout);
        match plain {
            true => builder.tls_certs_only([]),
            false => builder,
        }
        .build()
    };
    let failed = |message: String| OtelError::Build {
        signal: "traces",
        message,
    };
    std::thread::spawn(build)
        .join()
        .map_err(|_| failed("building the HTTP client panicked".to_owned()))?
        .map_err(|e| failed(e.to_string()))
}
