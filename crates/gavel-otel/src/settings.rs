//! What to export and where: the front door's request, the standard variables
//! and the suite's `otel:` setting merged into one [`Settings`].

use gavel_core::otel::OtelSettings;
pub use gavel_core::otel::{Protocol, UnknownProtocol};

use crate::OtelError;

/// `OTEL_EXPORTER_OTLP_PROTOCOL`: wins over the suite's `protocol`.
const PROTOCOL_VAR: &str = "OTEL_EXPORTER_OTLP_PROTOCOL";
/// `GAVEL_OTEL_REDACT`: as `--otel-redact`.
const REDACT_VAR: &str = "GAVEL_OTEL_REDACT";
/// `GAVEL_OTEL_PHOENIX`: as `--otel-phoenix`.
const PHOENIX_VAR: &str = "GAVEL_OTEL_PHOENIX";

/// Export settings. Endpoint headers (`OTEL_EXPORTER_OTLP_HEADERS`) and
/// timeouts come from the standard variables, read by the OTLP exporter.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Base URL of the receiver (`http://host:4318` for HTTP, `http://host:4317`
    /// for gRPC); `None` reads `OTEL_EXPORTER_OTLP_ENDPOINT` (per-signal
    /// variables too), else the OTLP default on localhost.
    pub endpoint: Option<String>,
    /// The transport.
    pub protocol: Protocol,
    /// Leave out every agent-derived text: messages, tool-call arguments and
    /// results, evaluation explanations and error messages.
    pub redact_content: bool,
    /// Also attach each `gen_ai.evaluation.result` as a span event (on by default).
    pub span_events: bool,
    /// Send `gen_ai.evaluation.result` log records (off for receivers without a
    /// logs endpoint, such as Phoenix).
    pub logs: bool,
    /// Arize Phoenix's base URL: verdicts also go there as span annotations.
    pub phoenix: Option<String>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            endpoint: None,
            protocol: Protocol::default(),
            redact_content: false,
            span_events: true,
            logs: true,
            phoenix: None,
        }
    }
}

/// What a front door asks of the export besides the suite's `otel:` setting
/// (the default asks for nothing); with the `cli` feature, also the `--otel-*`
/// flags of `gavel run` and `gavel export otel`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Requested {
    /// Export even when the suite does not ask (`gavel run --otel`).
    #[cfg_attr(feature = "cli", arg(skip))]
    pub export: bool,
    /// OTLP receiver base URL (default: OTEL_EXPORTER_OTLP_ENDPOINT, else
    /// localhost:4318 for HTTP, :4317 for gRPC); wins over the suite's. Headers
    /// come from OTEL_EXPORTER_OTLP_HEADERS.
    #[cfg_attr(feature = "cli", arg(long = "otel-endpoint", value_name = "URL"))]
    pub endpoint: Option<String>,
    /// OTLP transport: http/protobuf (default), http/json or grpc; wins over
    /// OTEL_EXPORTER_OTLP_PROTOCOL and the suite's.
    #[cfg_attr(feature = "cli", arg(long = "otel-protocol", value_name = "PROTOCOL"))]
    pub protocol: Option<Protocol>,
    /// Leave every agent-derived text (messages, tool-call arguments and
    /// results, evaluation explanations, error messages) out of the export
    /// (also GAVEL_OTEL_REDACT=1), whatever the suite says.
    #[cfg_attr(feature = "cli", arg(long = "otel-redact"))]
    pub redact: bool,
    /// Send verdicts as log records only, not also as span events.
    #[cfg_attr(feature = "cli", arg(long = "otel-no-span-events"))]
    pub no_span_events: bool,
    /// Send no log records (for receivers without a logs endpoint, e.g. Phoenix).
    #[cfg_attr(feature = "cli", arg(long = "otel-no-logs"))]
    pub no_logs: bool,
    /// Arize Phoenix's base URL (e.g. http://localhost:6006; also
    /// GAVEL_OTEL_PHOENIX): verdicts also go there as span annotations
    /// (bearer token from PHOENIX_API_KEY).
    #[cfg_attr(feature = "cli", arg(long = "otel-phoenix", value_name = "URL"))]
    pub phoenix: Option<String>,
}

impl Settings {
    /// The settings of a run that `requested` or the suite's `otel` setting
    /// asks to export, else `None`. A request wins over
    /// `OTEL_EXPORTER_OTLP_PROTOCOL` and `GAVEL_OTEL_REDACT`, which win over
    /// the suite; switches turn off what any of them turns off.
    pub fn resolve(
        requested: &Requested,
        suite: Option<&OtelSettings>,
    ) -> Result<Option<Settings>, OtelError> {
        Settings::merge(requested, suite, |name| std::env::var(name).ok())
    }

    /// [`Settings::resolve`] with the variables read through `var`.
    fn merge(
        requested: &Requested,
        suite: Option<&OtelSettings>,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Settings>, OtelError> {
        if !requested.export && suite.is_none() {
            return Ok(None);
        }
        let suite = suite.cloned().unwrap_or_default();
        let env_protocol = match var(PROTOCOL_VAR) {
            Some(v) => Some(
                v.parse()
                    .map_err(|e: UnknownProtocol| OtelError::Variable {
                        name: PROTOCOL_VAR,
                        message: e.to_string(),
                    })?,
            ),
            None => None,
        };
        let env_redact = match var(REDACT_VAR) {
            Some(v) => flag(&v).ok_or_else(|| OtelError::Variable {
                name: REDACT_VAR,
                message: format!("`{v}` is not true or false"),
            })?,
            None => false,
        };
        let phoenix = requested
            .phoenix
            .clone()
            .or_else(|| var(PHOENIX_VAR))
            .filter(|url| !url.trim().is_empty());
        if let Some(url) = &phoenix
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return Err(OtelError::Variable {
                name: PHOENIX_VAR,
                message: format!(
                    "`{}` is not an http:// or https:// URL (--otel-phoenix)",
                    gavel_core::secrets::mask_url(url)
                ),
            });
        }
        Ok(Some(Settings {
            endpoint: requested.endpoint.clone().or(suite.endpoint),
            protocol: requested
                .protocol
                .or(env_protocol)
                .or(suite.protocol)
                .unwrap_or_default(),
            redact_content: requested.redact || env_redact || suite.redact,
            span_events: !requested.no_span_events && suite.span_events,
            logs: !requested.no_logs && suite.logs,
            phoenix,
        }))
    }
}

/// A boolean variable's value (`true`/`false`, `1`/`0`, `yes`/`no`, `on`/`off`; empty is false).
fn flag(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "" | "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn merged(
        requested: &Requested,
        suite: Option<&OtelSettings>,
        vars: &[(&str, &str)],
    ) -> Result<Option<Settings>, OtelError> {
        Settings::merge(requested, suite, |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    #[test]
    fn nothing_asked_exports_nothing() {
        assert!(
            merged(&Requested::default(), None, &[(PROTOCOL_VAR, "grpc")])
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn the_request_wins_over_the_variable_which_wins_over_the_suite() {
        let suite = OtelSettings {
            endpoint: Some("http://suite:4318".into()),
            protocol: Some(Protocol::HttpJson),
            logs: false,
            ..OtelSettings::default()
        };
        let s = merged(&Requested::default(), Some(&suite), &[])
            .unwrap()
            .unwrap();
        assert_eq!(s.endpoint.as_deref(), Some("http://suite:4318"));
        assert_eq!(s.protocol, Protocol::HttpJson);
        assert!(!s.logs && s.span_events && !s.redact_content);
        let s = merged(
            &Requested::default(),
            Some(&suite),
            &[(PROTOCOL_VAR, "grpc"), (REDACT_VAR, "1")],
        )
        .unwrap()
        .unwrap();
        assert_eq!(s.protocol, Protocol::Grpc);
        assert!(s.redact_content);
        let asked = Requested {
            endpoint: Some("http://flag:4318".into()),
            protocol: Some(Protocol::HttpProtobuf),
            no_span_events: true,
            ..Requested::default()
        };
        let s = merged(&asked, Some(&suite), &[(PROTOCOL_VAR, "grpc")])
            .unwrap()
            .unwrap();
        assert_eq!(s.endpoint.as_deref(), Some("http://flag:4318"));
        assert_eq!(s.protocol, Protocol::HttpProtobuf);
        assert!(!s.span_events && !s.logs);
    }

    #[test]
    fn a_request_alone_exports_with_the_defaults() {
        let asked = Requested {
            export: true,
            ..Requested::default()
        };
        let s = merged(&asked, None, &[]).unwrap().unwrap();
        assert_eq!(s.protocol, Protocol::HttpProtobuf);
        assert!(s.endpoint.is_none() && s.span_events && s.logs && !s.redact_content);
    }

    #[test]
    fn a_bad_variable_is_named() {
        let asked = Requested {
            export: true,
            ..Requested::default()
        };
        let e = merged(&asked, None, &[(PROTOCOL_VAR, "carrier-pigeon")]).unwrap_err();
        assert!(e.to_string().contains(PROTOCOL_VAR), "{e}");
        assert!(e.is_bad_input());
        let e = merged(&asked, None, &[(REDACT_VAR, "maybe")]).unwrap_err();
        assert!(e.to_string().contains(REDACT_VAR), "{e}");
    }
}
