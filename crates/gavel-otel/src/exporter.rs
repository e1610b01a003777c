//! The OTLP pipeline (tracer and logger providers with batch processors) and
//! what it exports: run spans and execution traces.

use std::time::SystemTime;

use gavel_core::{Execution, RunRecord, RunStatus};
use gavel_report::{Detail, Gate};
use opentelemetry::logs::LoggerProvider;
use opentelemetry::trace::{SpanKind, Status, TraceContextExt, Tracer, TracerProvider};
use opentelemetry::{Context, KeyValue};
use opentelemetry_otlp::{LogExporter, SpanExporter, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::logs::{BatchLogProcessor, SdkLogger, SdkLoggerProvider};
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, SdkTracer, SdkTracerProvider,
};
use reqwest::blocking::Client;

use crate::attrs::{int, text};
use crate::evaluation::{EVENTS_PER_SPAN, Targets, attach};
use crate::ids::{self, Place, Planned};
use crate::phoenix::Phoenix;
use crate::timeline::{self, parse_time};
use crate::trace::{ExecutionSpans, RunContext};
use crate::watch::{Failure, Watched, receiver};
use crate::{OtelError, Protocol, Requested, Settings};

/// Spans (and, separately, log records) waiting to be sent, at most. The SDK
/// allocates its queues whole (the span queue writes each of its slots, a
/// span's size, when it is built), so they are kept small; nothing is dropped
/// because an execution waits for what was queued before it to be sent once
/// [`FLUSH_AT`] spans and records were queued (a slow receiver slows the
/// export down instead).
const QUEUE: usize = 1 << 12;
/// Spans and log records queued since the last flush that make the next
/// execution wait for them to be sent: room for one execution of up to
/// `QUEUE - FLUSH_AT` of them.
const FLUSH_AT: usize = 1 << 10;

/// The instrumentation scope's name.
const SCOPE: &str = "gavel";

/// An OTLP export pipeline for gavel runs.
pub struct Exporter {
    tracer_provider: SdkTracerProvider,
    tracer: SdkTracer,
    logger_provider: Option<SdkLoggerProvider>,
    logger: Option<SdkLogger>,
    /// The first failed export of traces, then of logs.
    failures: [Failure; 2],
    /// Where verdicts also go as span annotations (`--otel-phoenix`).
    phoenix: Option<Phoenix>,
    /// Spans and log records queued since the last flush.
    queued: std::sync::atomic::AtomicUsize,
    settings: Settings,
}

/// How a run ended, for its span: the stored status and end time, and how
/// many executions the export sent.
pub struct RunEnded<'a> {
    /// The stored status.
    pub status: RunStatus,
    /// When it ended (RFC 3339); now when unknown.
    pub finished_at: Option<&'a str>,
    /// Executions sent.
    pub recorded: usize,
}

/// A run's open span: case traces link to it; [`Exporter::finish_run`] ends it.
pub struct RunSpan {
    cx: Context,
    run: RunContext,
}

impl RunSpan {
    /// The run id.
    pub fn run_id(&self) -> &str {
        &self.run.run_id
    }
}

impl Exporter {
    /// Builds the pipeline. Must be called inside a Tokio runtime when the
    /// protocol is gRPC (the channel runs on it).
    pub fn new(settings: Settings) -> Result<Exporter, OtelError> {
        let resource = resource();
        let failures = [Failure::default(), Failure::default()];
        let client = match settings.protocol {
            Protocol::Grpc => None,
            _ => Some(crate::http::client(&settings)?),
        };
        let spans = Watched::new(
            span_exporter(&settings, client.clone())?,
            failures[0].clone(),
        );
        let tracer_provider = SdkTracerProvider::builder()
            .with_span_processor(
                BatchSpanProcessor::builder(spans)
                    .with_batch_config(
                        BatchConfigBuilder::default()
                            .with_max_queue_size(QUEUE)
                            .build(),
                    )
                    .build(),
            )
            .with_resource(resource.clone())
            .with_max_events_per_span(EVENTS_PER_SPAN as u32)
            .with_id_generator(Planned::default())
            .build();
        let tracer = tracer_provider.tracer(SCOPE);
        let logger_provider = if settings.logs {
            let logs = Watched::new(log_exporter(&settings, client)?, failures[1].clone());
            Some(
                SdkLoggerProvider::builder()
                    .with_log_processor(
                        BatchLogProcessor::builder(logs)
                            .with_batch_config(
                                opentelemetry_sdk::logs::BatchConfigBuilder::default()
                                    .with_max_queue_size(QUEUE)
                                    .build(),
                            )
                            .build(),
                    )
                    .with_resource(resource)
                    .build(),
            )
        } else {
            None
        };
        let logger = logger_provider.as_ref().map(|p| p.logger(SCOPE));
        let phoenix = match &settings.phoenix {
            Some(url) => Some(
                Phoenix::new(url, tracer_provider.clone()).map_err(|message| OtelError::Build {
                    signal: "annotations",
                    message,
                })?,
            ),
            None => None,
        };
        Ok(Exporter {
            tracer_provider,
            tracer,
            logger_provider,
            logger,
            failures,
            phoenix,
            queued: Default::default(),
            settings,
        })
    }

    /// Opens the span of `run`, started at its recorded start.
    pub fn start_run(&self, run: &RunRecord) -> RunSpan {
        let start = parse_time(&run.started_at).unwrap_or_else(SystemTime::now);
        let builder = self
            .tracer
            .span_builder(format!("run {}", run.suite))
            .with_kind(SpanKind::Internal)
            .with_start_time(start)
            .with_attributes([
                text("gavel.run.id", run.id.clone()),
                text("gavel.suite", run.suite.clone()),
            ]);
        let trace = ids::trace_id(&run.id, None);
        let cx = crate::trace::start(&self.tracer, builder, &Context::new(), trace, Place::Run);
        let sc = cx.span().span_context().clone();
        RunSpan {
            run: RunContext {
                run_id: run.id.as_str().into(),
                suite: run.suite.as_str().into(),
                span: Some(sc),
            },
            cx,
        }
    }

    /// Queues the trace of one recorded execution of `run`, with its evaluations.
    pub fn execution(&self, run: &RunSpan, e: &Execution) {
        let (whole, turns) = timeline::execution(e, SystemTime::now());
        let mut spans = ExecutionSpans::start(
            &self.tracer,
            &run.run,
            e,
            whole,
            &turns,
            self.settings.redact_content,
        );
        let targets = Targets {
            tracer: &self.tracer,
            logger: self.logger.as_ref(),
            span_events: self.settings.span_events,
            redact: self.settings.redact_content,
            events: Default::default(),
            phoenix: self.phoenix.as_ref(),
            emitted: Default::default(),
        };
        attach(&targets, e, &mut spans);
        let queued = spans.len() + targets.emitted.get();
        spans.end();
        self.wait_if_full(queued);
    }

    /// Counts `queued` more spans and records; once [`FLUSH_AT`] were,
    /// waits until they are sent (the queues stay below [`QUEUE`]).
    fn wait_if_full(&self, queued: usize) {
        use std::sync::atomic::Ordering;
        let total = self.queued.fetch_add(queued, Ordering::Relaxed) + queued;
        if total >= FLUSH_AT {
            self.queued.store(0, Ordering::Relaxed);
            // A failed export is kept by the watched exporter and reported
            // at shutdown.
            let _ = self.tracer_provider.force_flush();
            if let Some(logs) = &self.logger_provider {
                let _ = logs.force_flush();
            }
        }
    }

    /// Ends the run span with the run's status, how many executions it
    /// recorded and, when known, the gate's result.
    pub fn finish_run(&self, span: RunSpan, end: &RunEnded<'_>, gate: Option<&Gate>) {
        let s = span.cx.span();
        s.set_attribute(text("gavel.run.status", end.status.as_str()));
        s.set_attribute(int("gavel.run.executions", end.recorded));
        if let Some(g) = gate {
            s.set_attribute(text("gavel.gate.result", g.word()));
            s.set_attribute(KeyValue::new("gavel.gate.passed", g.passed));
            s.set_attribute(KeyValue::new("gavel.gate.min_pass_rate", g.min_pass_rate));
            if let Some(rate) = g.pass_rate {
                s.set_attribute(KeyValue::new("gavel.gate.pass_rate", rate));
            }
            if !g.passed && g.decided() {
                s.set_status(Status::error("gate failed"));
            }
        }
        let at = end
            .finished_at
            .and_then(parse_time)
            .unwrap_or_else(SystemTime::now);
        s.end_with_timestamp(at);
    }

    /// Sends everything queued and stops the pipeline; the first export that
    /// failed (traces first), with the receiver it went to. Blocks until the
    /// receiver answered or the export timed out: call it off the async
    /// executor (`tokio::task::spawn_blocking`).
    pub fn shutdown(&self) -> Result<(), OtelError> {
        let annotations = self.phoenix.as_ref().and_then(Phoenix::finish);
        let traces = self.tracer_provider.shutdown();
        let logs = self.logger_provider.as_ref().map(|p| p.shutdown());
        self.failed("traces", &self.failures[0], traces)?;
        if let Some(logs) = logs {
            self.failed("logs", &self.failures[1], logs)?;
        }
        match annotations {
            Some((receiver, message)) => Err(OtelError::Export {
                signal: "annotations",
                receiver,
                message,
            }),
            None => Ok(()),
        }
    }

    /// `signal`'s first failed export, else its shutdown's failure.
    fn failed(
        &self,
        signal: &'static str,
        failure: &Failure,
        shutdown: opentelemetry_sdk::error::OTelSdkResult,
    ) -> Result<(), OtelError> {
        match failure.first().or(shutdown.err().map(|e| e.to_string())) {
            Some(message) => Err(OtelError::Export {
                signal,
                receiver: receiver(&self.settings, signal),
                message,
            }),
            None => Ok(()),
        }
    }
}

/// Sends stored run `run`: its span, one trace per execution, and the gate.
/// Blocks until sent (see [`Exporter::shutdown`]).
pub fn export_stored(
    exporter: Exporter,
    run: &RunRecord,
    executions: &[Execution],
    gate: Option<&Gate>,
) -> Result<(), OtelError> {
    let span = exporter.start_run(run);
    for e in executions {
        exporter.execution(&span, e);
    }
    let end = RunEnded {
        status: run.status,
        finished_at: run.finished_at.as_deref(),
        recorded: executions.len(),
    };
    exporter.finish_run(span, &end, gate);
    exporter.shutdown()
}

/// Sends stored run `run` (an id, a unique prefix, `latest` or `previous`) with
/// its gate (as [`gavel_session::report::build`] decides it, changed where
/// `regate` says) and the settings `requested` asks for (sent whatever
/// the suite said), off the async executor; returns how many executions were sent.
pub async fn export_run(
    requested: &Requested,
    store: &gavel_store::Store,
    run: &str,
    regate: &gavel_session::Regate,
) -> Result<usize, OtelError> {
    let requested = Requested {
        export: true,
        ..requested.clone()
    };
    let settings = Settings::resolve(&requested, None)?.unwrap_or_default();
    let exporter = Exporter::new(settings)?;
    let run = store
        .find_run(run)
        .await
        .map_err(gavel_session::SessionError::from)?;
    let report = gavel_session::report::build(store, &run.id, regate, Detail::Summary).await?;
    let executions = store
        .executions(&run.id)
        .await
        .map_err(gavel_session::SessionError::from)?;
    let count = executions.len();
    tokio::task::spawn_blocking(move || {
        export_stored(exporter, &run, &executions, Some(&report.gate))
    })
    .await
    .map_err(|e| OtelError::Stopped(e.to_string()))??;
    Ok(count)
}

/// The resource: `OTEL_RESOURCE_ATTRIBUTES` and `OTEL_SERVICE_NAME` as the
/// SDK reads them, with `service.name=gavel` unless they name the service.
fn resource() -> Resource {
    let detected = Resource::builder().build();
    let named = detected
        .get(&opentelemetry::Key::from_static_str("service.name"))
        .is_some_and(|name| !name.as_str().starts_with("unknown_service"));
    if named {
        detected
    } else {
        Resource::builder().with_service_name(SCOPE).build()
    }
}

/// The OTLP/HTTP URL of a signal under a base endpoint.
fn signal_url(base: &str, path: &str) -> String {
    format!("{}/{path}", base.trim_end_matches('/'))
}

/// The span exporter for the settings' protocol and endpoint; over HTTP,
/// through `client`.
fn span_exporter(s: &Settings, client: Option<Client>) -> Result<SpanExporter, OtelError> {
    let built = match s.protocol {
        Protocol::Grpc => {
            let b = SpanExporter::builder().with_tonic();
            match &s.endpoint {
                Some(e) => b.with_endpoint(e.clone()).build(),
                None => b.build(),
            }
        }
        p => {
            let mut b = SpanExporter::builder()
                .with_http()
                .with_protocol(otlp_protocol(p));
            if let Some(client) = client {
                b = b.with_http_client(client);
            }
            match &s.endpoint {
                Some(e) => b.with_endpoint(signal_url(e, "v1/traces")).build(),
                None => b.build(),
            }
        }
    };
    built.map_err(|e| OtelError::Build {
        signal: "traces",
        message: e.to_string(),
    })
}

/// The log exporter for the settings' protocol and endpoint; over HTTP,
/// through `client`.
fn log_exporter(s: &Settings, client: Option<Client>) -> Result<LogExporter, OtelError> {
    let built = match s.protocol {
        Protocol::Grpc => {
            let b = LogExporter::builder().with_tonic();
            match &s.endpoint {
                Some(e) => b.with_endpoint(e.clone()).build(),
                None => b.build(),
            }
        }
        p => {
            let mut b = LogExporter::builder()
                .with_http()
                .with_protocol(otlp_protocol(p));
            if let Some(client) = client {
                b = b.with_http_client(client);
            }
            match &s.endpoint {
                Some(e) => b.with_endpoint(signal_url(e, "v1/logs")).build(),
                None => b.build(),
            }
        }
    };
    built.map_err(|e| OtelError::Build {
        signal: "logs",
        message: e.to_string(),
    })
}

/// The SDK's protocol value for an HTTP protocol.
fn otlp_protocol(p: Protocol) -> opentelemetry_otlp::Protocol {
    match p {
        Protocol::HttpJson => opentelemetry_otlp::Protocol::HttpJson,
        Protocol::Grpc => opentelemetry_otlp::Protocol::Grpc,
        Protocol::HttpProtobuf => opentelemetry_otlp::Protocol::HttpBinary,
    }
}
