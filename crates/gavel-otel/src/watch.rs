//! Export failures, kept. The SDK's batch processors drop what their exports
//! return (a failed timed export is only logged, and `shutdown` answers `Ok`
//! after a failed final one), so each OTLP exporter is wrapped to keep its
//! first failure for [`crate::Exporter::shutdown`] to report, with the
//! receiver it was sent to.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::logs::{LogBatch, LogExporter};
use opentelemetry_sdk::trace::{SpanData, SpanExporter};

use crate::{Protocol, Settings};

/// The first failure of a signal's exports, shared with its exporter.
#[derive(Debug, Clone, Default)]
pub(crate) struct Failure(Arc<Mutex<Option<String>>>);

impl Failure {
    fn keep(&self, result: &OTelSdkResult) {
        if let Err(e) = result {
            self.keep_message(e.to_string());
        }
    }

    /// Keeps `message` unless a failure was kept already.
    pub(crate) fn keep_message(&self, message: String) {
        let mut first = self.0.lock().unwrap_or_else(|p| p.into_inner());
        first.get_or_insert(message);
    }

    /// The first failure, if an export failed.
    pub(crate) fn first(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// An exporter whose failed exports are kept in a [`Failure`].
#[derive(Debug)]
pub(crate) struct Watched<E> {
    inner: E,
    failure: Failure,
}

impl<E> Watched<E> {
    /// `inner`, its failures kept in `failure`.
    pub(crate) fn new(inner: E, failure: Failure) -> Watched<E> {
        Watched { inner, failure }
    }
}

impl<E: SpanExporter> SpanExporter for Watched<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let result = self.inner.export(batch).await;
        self.failure.keep(&result);
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

impl<E: LogExporter> LogExporter for Watched<E> {
    async fn export(&self, batch: LogBatch<'_>) -> OTelSdkResult {
        let result = self.inner.export(batch).await;
        self.failure.keep(&result);
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn event_enabled(
        &self,
        level: opentelemetry::logs::Severity,
        target: &str,
        name: Option<&str>,
    ) -> bool {
        self.inner.event_enabled(level, target, name)
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

/// Where `signal` (`traces` or `logs`) is sent, as the OTLP exporter resolves
/// it: the setting, else the signal's variable (verbatim), else
/// `OTEL_EXPORTER_OTLP_ENDPOINT`, else the default on localhost; HTTP adds
/// `/v1/SIGNAL` to a base URL. Any password in it is masked.
pub(crate) fn receiver(settings: &Settings, signal: &str) -> String {
    receiver_with(settings, signal, |name| std::env::var(name).ok())
}

fn receiver_with(
    settings: &Settings,
    signal: &str,
    var: impl Fn(&str) -> Option<String>,
) -> String {
    let set = |v: Option<String>| v.filter(|v| !v.is_empty());
    let grpc = settings.protocol == Protocol::Grpc;
    let path = |base: &str| match grpc {
        true => base.to_owned(),
        false => format!("{}/v1/{signal}", base.trim_end_matches('/')),
    };
    let signal_var = format!(
        "OTEL_EXPORTER_OTLP_{}_ENDPOINT",
        signal.to_ascii_uppercase()
    );
    let url = match (set(settings.endpoint.clone()), set(var(&signal_var))) {
        (Some(base), _) => path(&base),
        (None, Some(verbatim)) => verbatim,
        (None, None) => match set(var("OTEL_EXPORTER_OTLP_ENDPOINT")) {
            Some(base) => path(&base),
            None if grpc => "http://localhost:4317".to_owned(),
            None => path("http://localhost:4318"),
        },
    };
    gavel_core::secrets::mask_url(&url)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(settings: &Settings, vars: &[(&str, &str)]) -> String {
        receiver_with(settings, "traces", |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    #[test]
    fn the_receiver_is_named_as_the_exporter_resolves_it() {
        let http = Settings::default();
        assert_eq!(at(&http, &[]), "http://localhost:4318/v1/traces");
        let base = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318/")];
        assert_eq!(at(&http, &base), "http://c:4318/v1/traces");
        let verbatim = [
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t/x"),
            base[0],
        ];
        assert_eq!(at(&http, &verbatim), "http://t/x");
        let set = Settings {
            endpoint: Some("http://user:secret@s:1".into()),
            ..Settings::default()
        };
        let shown = at(&set, &verbatim);
        assert!(
            shown.starts_with("http://user:") && shown.ends_with("@s:1/v1/traces"),
            "{shown}"
        );
        assert!(!shown.contains("secret"), "{shown}");
        let grpc = Settings {
            protocol: Protocol::Grpc,
            ..Settings::default()
        };
        assert_eq!(at(&grpc, &[]), "http://localhost:4317");
    }
}
