//! OpenTelemetry export of gavel runs.
//!
//! Each execution becomes one trace following the OpenTelemetry GenAI semantic
//! conventions: a root span for the case, an `invoke_agent` span per turn (with
//! `gen_ai.conversation.id` set to the session id), an `execute_tool` span per
//! tool call, and `chat` spans for the model calls gavel makes itself (judges,
//! simulated users) when their usage is known. Every verdict becomes a
//! `gen_ai.evaluation.result` log record linked to the span it judged and, by
//! default, a span event with the same attributes. A run span carries the suite,
//! the run id and the gate result; each case's root span links to it.
//!
//! Results arrive after they happened, so spans are built with explicit start
//! and end times taken from the execution (`started_at`, turn latencies).
//! [`OtelSink`] exports a run live as a [`gavel_session::Sink`]: front doors
//! get it from [`sink`] (their request, the standard variables and the suite's
//! `otel:` setting merged), add it to the run's sinks like any other, and ask
//! [`OtelSink::ended`] after the session returned. [`export_stored`]
//! sends a stored run after the fact. Transport is OTLP (HTTP protobuf, HTTP
//! JSON or gRPC) through `opentelemetry-otlp`, configured by [`Settings`] and
//! the standard `OTEL_EXPORTER_OTLP_*` variables. No key, header or target
//! configuration is ever part of what is exported.

mod attrs;
mod error;
mod evaluation;
mod exporter;
mod http;
mod ids;
mod phoenix;
mod settings;
mod sink;
mod timeline;
mod trace;
mod watch;

pub use error::OtelError;
pub use exporter::{Exporter, RunEnded, RunSpan, export_run, export_stored};
pub use settings::{Protocol, Requested, Settings, UnknownProtocol};
pub use sink::{OtelSink, sink};
