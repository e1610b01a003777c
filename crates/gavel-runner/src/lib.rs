//! Expansion and execution: a [`Suite`](gavel_core::Suite) in, [`Execution`]s out.
//!
//! [`plan`] filters cases (tags, `--filter`), compiles their checks and expands
//! them over targets and repeats. [`execute`] drives each planned execution through
//! its target with bounded concurrency and a per-execution deadline, grades it, and
//! hands every result to the [`Recorder`]s the moment it lands.

mod conversation;
mod error;
mod execute;
mod frontier;
mod pairwise;
mod plan;
mod recorder;
mod rejudge;
mod select;
mod spill;
mod targets;

pub use error::RunnerError;
pub use execute::{Baselines, ExecuteOptions, RunReport, execute, run_case};
pub use plan::{CaseTexts, Items, Plan, PlanOptions, PlannedExecution, Planner, plan};
pub use recorder::{RecordError, Recorder};
pub use spill::CaseText;
pub use targets::{ExtraTargets, PreparedTargets};

pub use gavel_core::Execution;
pub use tokio_util::sync::CancellationToken;
