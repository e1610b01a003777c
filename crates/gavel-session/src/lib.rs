//! gavel's run engine: one run from a typed [`RunConfig`] to a stored, gated
//! run, whichever front door starts it (the CLI, `gavel worker`, the web UI, the
//! library).
//!
//! [`PreparedRun::new`] loads the suites through the one loader (files, the
//! database, or text from an API), resolves and checks the judge and the
//! targets, and plans; every refusal is a typed [`SessionError`].
//! [`PreparedRun::execute`] stores the run, starts its targets, executes the
//! plan, records every result as it lands, and builds the gated report, sending
//! typed [`Event`]s to [`Sink`]s on the way. [`PreparedRun::enqueue`] hands the
//! executions to [`worker::work`] processes instead.

mod calibrate;
mod config;
mod distributed;
mod drive;
mod embeddings;
mod error;
mod events;
mod gate;
pub mod history;
pub mod judge;
mod library;
mod live;
mod location;
mod models;
mod note;
mod prepare;
#[cfg(feature = "cli")]
pub mod progress;
mod record;
mod replay;
pub mod report;
mod run;
mod set_calibration;
pub mod trust;
mod validate;
pub mod worker;

pub use calibrate::{Baseline, CalibrateConfig, Calibrated, calibrate, compare_calibrations};
pub use config::{GateConfig, ModelOptions, Regate, RunConfig, RunLabels, Selection, Sources};
pub use distributed::wait;
pub use error::SessionError;
pub use events::{Event, ExecutionRef, RunEnd, RunStart, Sink, Sinks};
pub use gate::calibration;
pub use judge::JudgeChoice;
pub use library::{import_file, import_suite};
pub use location::StoreLocation;
pub use models::{RunJudges, baselines, default_judge, hierarchy_warnings, pool, provider};
pub use note::{Note, NoteLevel};
pub use prepare::{check_model, load_suite, stored_source, stored_yaml, validate_case};
pub use run::{Finished, PreparedRun};
pub use set_calibration::{CalibrationPlan, SetCalibrated, SetCalibration};
#[cfg(feature = "promptfoo")]
pub use validate::convert_promptfoo;
pub use validate::{Validated, validate};
