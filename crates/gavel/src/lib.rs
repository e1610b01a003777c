//! gavel: end-to-end tests for AI agents, graded by deterministic checks and LLM
//! judges, stored, reported and gated in CI.
//!
//! This crate is the library facade over the workspace. [`session`] runs whole
//! suites exactly as the `gavel` binary does (load, plan, execute, store, gate,
//! report, with typed events); [`run_case`] grades one case against one target
//! in a test. The `gavel` binary is a thin layer over these calls.
//!
//! Run one case against an in-process agent from a cargo test:
//!
//! ```
//! use std::time::Duration;
//! use gavel::targets::{FnReply, FnTarget};
//!
//! # tokio_test();
//! # fn tokio_test() { tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let suite = gavel::load::parse_suite_str(
//!     "id: greet\ninput: Hello\nchecks:\n  - type: icontains\n    value: hello\n",
//!     "case.yaml".as_ref(),
//! ).unwrap();
//! let agent = FnTarget::new(|req| async move { FnReply::text(format!("Hello! You said: {}", req.message)) });
//! let execution = gavel::run_case(&suite.cases[0], &agent, Duration::from_secs(5), &gavel::checks::NoJudgeModels)
//!     .await
//!     .unwrap();
//! assert_eq!(execution.status, gavel::Status::Pass);
//! # }) }
//! ```

pub use gavel_calibration as calibration;
pub use gavel_checks as checks;
pub use gavel_core::load;
pub use gavel_core::*;
pub use gavel_embed as embed;
pub use gavel_models as models;
#[cfg(feature = "otel")]
pub use gavel_otel as otel;
#[cfg(feature = "promptfoo")]
pub use gavel_promptfoo as promptfoo;
pub use gavel_report as report;
pub use gavel_runner as runner;
pub use gavel_runner::run_case;
pub use gavel_session as session;
pub use gavel_store as store;
pub use gavel_targets as targets;
#[cfg(feature = "web")]
pub use gavel_web as web;

/// Panics with [`report::explain`] (failing checks, a diff of the expected
/// output against the answer, the transcript) unless `execution` passed: the
/// assertion of a cargo test that ran `case` with [`run_case`].
#[track_caller]
pub fn assert_passed(case: &Case, execution: &Execution) {
    if execution.status != Status::Pass {
        panic!("\n{}", report::explain(case, execution));
    }
}

/// Executes `prepared` as `gavel run` does, with the OpenTelemetry export its
/// suite's `otel:` setting asks for (feature `otel`, part of `cli`): one more
/// sink, sent as the run goes and ended with its gate. An export that fails is
/// [`Executed::export_failed`]; the run's status stands.
#[cfg(feature = "otel")]
pub async fn execute(
    prepared: session::PreparedRun,
    sinks: session::Sinks,
    cancel: &runner::CancellationToken,
) -> Result<Executed, otel::OtelError> {
    let export = otel::sink(&otel::Requested::default(), prepared.suite().otel.as_ref())?;
    let sinks = otel::OtelSink::added(export.as_ref(), sinks);
    let finished = prepared.execute(&sinks, cancel).await?;
    let export_failed = otel::OtelSink::failure(export.as_ref()).await;
    Ok(Executed {
        finished,
        export_failed,
    })
}

/// A run [`execute`]d with its export.
#[cfg(feature = "otel")]
pub struct Executed {
    /// What the session returned: the run is stored and its status stands.
    pub finished: session::Finished,
    /// Why the export failed, when it did (naming the receiver).
    pub export_failed: Option<otel::OtelError>,
}

/// The default store: a SQLite file in `.gavel/` under the working directory.
pub use gavel_store::DEFAULT_URL as DEFAULT_DATABASE_URL;
