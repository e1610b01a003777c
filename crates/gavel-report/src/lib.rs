//! Every gavel report format, built from one plain [`Report`] value.
//!
//! A [`Report`] is built the same way from live results (at the end of `gavel run`)
//! and from the store (`gavel report`): a [`RunRecord`], the case snapshot and the
//! executions, folded outcome by outcome ([`ReportBuilder`]). [`render`] turns it
//! into JSON, JUnit XML, Markdown or a self-contained HTML page; [`write`] picks the
//! format from the file extension; [`terminal`] is the summary printed at the end
//! of a run. A report that is only summarised ([`Detail::Summary`]) keeps just the
//! outcomes the summary lists, so its memory does not grow with the run.
//!
//! # Pass rate and gate
//!
//! The pass rate is `passed / (passed + failed)` over outcomes, in percent. Errors
//! (the harness, a provider or the target's infrastructure broke) and skips are kept
//! out of it: an infrastructure failure is never counted as the agent failing. The
//! [`Gate`] passes when cases were decided, the pass rate is at least the minimum,
//! and the run finished its plan: a run that stopped at `--max-cost`, was
//! interrupted, failed, or still says `running` (its process died), or that
//! recorded fewer executions than it planned ([`RunRecord::planned`]), never passes
//! ([`Unfinished`]). Passes with skipped checks (a judge without a model, say) count
//! as passes and are shown apart in every summary.
//!
//! # Exit codes
//!
//! [`Gate::exit_code`] is what `gavel run` and `gavel report` exit with:
//!
//! | code | meaning | word |
//! | --- | --- | --- |
//! | `0` ([`EXIT_PASSED`]) | the gate passed, nothing errored and the run finished its plan | `PASS` |
//! | `1` ([`EXIT_GATE_FAILED`]) | the pass rate over decided outcomes is below the minimum (whether or not some also errored or did not run), a required judge calibration does not qualify the judge, or judges are required and a judged check had no judge model | `FAIL` |
//! | `3` ([`EXIT_ERRORS`]) | the run did not finish: executions planned did not run (budget stopped, interrupted, crashed, failed), or errors kept cases from a verdict, while the pass rate over what ran met the minimum; or nothing was decided (every outcome skipped, e.g. judges without credentials, or none at all): a run that decides nothing never passes | `INCOMPLETE` / `ERROR` / `UNDECIDED` |
//!
//! Code `2` is left to the command line for usage and configuration errors.
//!
//! ```
//! use gavel_core::{RunRecord, RunStatus};
//! let run = RunRecord {
//!     id: "0190f3a2-0000-7000-8000-000000000000".into(),
//!     suite: "demo".into(),
//!     status: RunStatus::Completed,
//!     started_at: "2026-01-02T03:04:05.000Z".into(),
//!     finished_at: None,
//!     config: serde_json::Value::Null,
//!     planned: Some(0),
//! };
//! let report = gavel_report::Report::new(run, vec![], vec![], 80.0);
//! assert_eq!(report.gate.exit_code(), 3, "an empty run decides nothing, so it never passes");
//! assert!(gavel_report::terminal(&report, false).contains("no case was decided"));
//! ```

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use gavel_core::{Case, Execution, Outcome, RunRecord, Summary, TagStats};

pub mod compare;
mod explain;
mod files;
mod fold;
mod html;
mod json;
mod junit;
mod markdown;
pub mod noise;
mod outputs;
pub mod repeats;
mod required;
pub mod robust;
mod rubric;
mod snapshot;
pub mod targets;
mod terminal;
mod text;
pub mod transport;
pub mod trend;
mod unfinished;
mod workspace;

pub use compare::Comparison;
pub use explain::explain;
pub use files::Files;
pub use fold::{Detail, ReportBuilder};
pub use outputs::{Color, Outputs};
pub use required::RequiredJudges;
pub use targets::TargetComparison;
pub use terminal::terminal;
pub use text::cost as format_cost;
pub use transport::Transport;
pub use unfinished::{Unfinished, UnfinishedReason};

/// Exit code: the gate passed (or nothing was decided) and nothing errored.
pub const EXIT_PASSED: i32 = 0;
/// Exit code: the pass rate over decided outcomes is below the minimum.
pub const EXIT_GATE_FAILED: i32 = 1;
/// Exit code: the run did not finish (planned executions did not run, or errors
/// kept outcomes from a verdict) while the pass rate over what ran met the minimum
/// or nothing was decided.
pub const EXIT_ERRORS: i32 = 3;

/// Everything a report needs; built from live results or from the store alike.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The run's identity and configuration.
    pub run: RunRecord,
    /// The case snapshot of the run (may be empty: inputs then come from transcripts).
    pub cases: Vec<Case>,
    /// One outcome per (case, target), in first-seen order.
    pub outcomes: Vec<Outcome>,
    /// Counts and rates overall, by tag and by target.
    pub summary: Summary,
    /// The pass-rate gate and the exit code it yields.
    pub gate: Gate,
    /// Transport tries of the calls to targets and judges, summed.
    pub transport: Transport,
    /// Where each case id sits in `cases` (the first case of that id).
    case_positions: HashMap<String, usize>,
    /// Summed duration of every execution, in milliseconds.
    execution_ms: u64,
    /// Judged checks left without a judge model, over every outcome.
    judges: RequiredJudges,
    /// Whether `outcomes` holds every outcome or only those the summary lists.
    detail: Detail,
    /// The targets side by side, when two or more ran.
    pub targets: Option<TargetComparison>,
}

impl Report {
    /// Groups the executions into outcomes, summarises them and applies the gate
    /// (`min_pass_rate` in percent, e.g. `80.0`), which fails when the run did not
    /// finish its plan (its status, and `run.planned` against the executions).
    pub fn new(
        run: RunRecord,
        cases: Vec<Case>,
        executions: Vec<Execution>,
        min_pass_rate: f64,
    ) -> Report {
        let mut builder = ReportBuilder::new(run, min_pass_rate, Detail::Full);
        for case in cases {
            builder.push_case(case);
        }
        for outcome in Outcome::group(executions) {
            builder.push(outcome);
        }
        builder.finish()
    }

    /// The case of the snapshot with this id, if the snapshot has it.
    pub fn case(&self, id: &str) -> Option<&Case> {
        self.cases.get(*self.case_positions.get(id)?)
    }

    /// Summed duration of every execution, in milliseconds.
    pub fn execution_ms(&self) -> u64 {
        self.execution_ms
    }

    /// Which outcomes `outcomes` holds.
    pub fn detail(&self) -> Detail {
        self.detail
    }

    /// Requires judges: a judged check of any outcome left unjudged for want of
    /// a judge model fails the gate ([`Gate::with_required_judges`]).
    pub fn require_judges(&mut self) {
        self.gate = self.gate.clone().with_required_judges(self.judges.clone());
    }

    /// Wall time of the run from its start and finish times, when both are known.
    pub fn wall_ms(&self) -> Option<u64> {
        self.run.wall_ms()
    }
}

/// Where each case id sits in a case snapshot (the first case of that id): outcomes
/// find their case in constant time.
fn case_positions(cases: &[Case]) -> HashMap<String, usize> {
    let mut positions = HashMap::with_capacity(cases.len());
    for (i, case) in cases.iter().enumerate() {
        positions.entry(case.id.clone()).or_insert(i);
    }
    positions
}

/// The suite gate: the pass rate over decided outcomes against a minimum.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Gate {
    /// The minimum pass rate, in percent.
    pub min_pass_rate: f64,
    /// The gate counts only outcomes with one of these tags (empty: every one).
    pub tags: Vec<String>,
    /// The pass rate over decided outcomes, in percent; `None` when nothing was decided.
    pub pass_rate: Option<f64>,
    /// True only when something was decided, the pass rate met the minimum, the
    /// judge qualified (when a calibration is required) and the run finished its plan.
    pub passed: bool,
    /// Outcomes that errored (no verdict on the agent).
    pub errors: usize,
    /// What the run left undone, when it did not finish its plan.
    pub unfinished: Option<Unfinished>,
    /// The suite's calibrated-judge requirement (`judge.calibration`), when it has one.
    pub calibration: Option<CalibrationGate>,
    /// The required-judges check (`--require-judges`, `judge.required`), when asked.
    pub judges: Option<RequiredJudges>,
}

/// Whether the run's judge is the one a stored calibration run found fit to gate.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CalibrationGate {
    /// The calibration run required.
    pub id: String,
    /// Whether it qualifies this run's judge.
    pub passed: bool,
    /// Why not, when it does not.
    pub reason: Option<String>,
}

/// One condition that failed a gate ([`Gate::failures`]).
#[derive(Debug, Clone, PartialEq)]
pub enum GateFailure {
    /// The pass rate over decided outcomes (percent) is below the minimum.
    PassRate {
        /// The pass rate.
        rate: f64,
        /// The minimum.
        min: f64,
    },
    /// A required judge calibration does not qualify the run's judge.
    Calibration {
        /// The calibration run required.
        id: String,
        /// Why it does not qualify the judge.
        reason: String,
    },
    /// Judges are required and judged checks had no judge model (the sentence).
    Judges(String),
}

impl std::fmt::Display for GateFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GateFailure::PassRate { rate, min } => write!(
                f,
                "pass rate {} is below the minimum {}",
                text::pct(Some(*rate)),
                text::pct(Some(*min))
            ),
            GateFailure::Calibration { id, reason } => {
                write!(f, "judge calibration {id}: {reason}")
            }
            GateFailure::Judges(reason) => f.write_str(reason),
        }
    }
}

/// Tolerance for comparing a computed rate with the minimum (80.0 vs 79.99999…).
const RATE_EPSILON: f64 = 1e-9;

impl Gate {
    /// Applies the minimum pass rate (percent) to overall statistics; a run that
    /// left work `unfinished` does not pass (pass the report's own
    /// `report.gate.unfinished` when gating on a subset of its outcomes).
    pub fn new(overall: &TagStats, min_pass_rate: f64, unfinished: Option<Unfinished>) -> Gate {
        let pass_rate = overall.pass_rate;
        let rate_met = pass_rate.is_some_and(|r| r + RATE_EPSILON >= min_pass_rate);
        Gate {
            min_pass_rate,
            tags: Vec::new(),
            pass_rate,
            passed: rate_met && unfinished.is_none(),
            errors: overall.errors,
            unfinished,
            calibration: None,
            judges: None,
        }
    }

    /// The gate with judges required: a judged check left unjudged for want of
    /// a judge model ([`RequiredJudges::of`] the report's outcomes) fails it
    /// whatever the pass rate.
    pub fn with_required_judges(mut self, judges: RequiredJudges) -> Gate {
        self.passed &= judges.passed;
        self.judges = Some(judges);
        self
    }

    /// Whether something was decided and the pass rate met the minimum.
    fn rate_met(&self) -> bool {
        self.pass_rate
            .is_some_and(|r| r + RATE_EPSILON >= self.min_pass_rate)
    }

    /// The gate with a calibrated-judge requirement: a judge it does not qualify
    /// fails the gate whatever the pass rate.
    pub fn with_calibration(mut self, calibration: CalibrationGate) -> Gate {
        self.passed &= calibration.passed;
        self.calibration = Some(calibration);
        self
    }

    /// Whether any outcome passed or failed (so the pass rate means something).
    pub fn decided(&self) -> bool {
        self.pass_rate.is_some()
    }

    /// `0` gate passed, no errors, plan finished; `1` gate failed (pass rate over
    /// decided cases below the minimum, a required calibration that does not
    /// qualify the judge, or required judges that were not there); `3` the run
    /// did not finish its plan, errors kept cases from a verdict, or nothing was
    /// decided at all, while no condition of `1` holds.
    pub fn exit_code(&self) -> i32 {
        if !self.failures().is_empty() {
            EXIT_GATE_FAILED
        } else if self.errors > 0 || self.unfinished.is_some() || !self.decided() {
            EXIT_ERRORS
        } else {
            EXIT_PASSED
        }
    }

    /// Why the gate failed (exit `1`), one per condition: empty when it did
    /// not fail. JUnit, the web and exports name these.
    pub fn failures(&self) -> Vec<GateFailure> {
        let mut why = Vec::new();
        if self.decided() && !self.rate_met() {
            why.push(GateFailure::PassRate {
                rate: self.pass_rate.unwrap_or_default(),
                min: self.min_pass_rate,
            });
        }
        if let Some(c) = self.calibration.as_ref().filter(|c| !c.passed) {
            why.push(GateFailure::Calibration {
                id: c.id.clone(),
                reason: c
                    .reason
                    .clone()
                    .unwrap_or_else(|| "it does not qualify the judge".into()),
            });
        }
        if let Some(reason) = self.judges.as_ref().and_then(RequiredJudges::reason) {
            why.push(GateFailure::Judges(reason));
        }
        why
    }

    /// The one-word verdict reports lead with: `PASS`, `FAIL`, `INCOMPLETE` (the
    /// run did not finish its plan), `ERROR` or `UNDECIDED` (nothing decided).
    pub fn word(&self) -> &'static str {
        match self.exit_code() {
            EXIT_GATE_FAILED => "FAIL",
            EXIT_ERRORS if self.unfinished.is_some() => "INCOMPLETE",
            EXIT_ERRORS if self.errors > 0 => "ERROR",
            EXIT_ERRORS => "UNDECIDED",
            _ => "PASS",
        }
    }
}

/// A report file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// A superset of the seeds' `test-report.json`.
    Json,
    /// JUnit XML for CI test tabs.
    Junit,
    /// Markdown for CI step summaries.
    Markdown,
    /// One self-contained HTML page.
    Html,
}

/// The extensions [`Format::from_path`] accepts, for messages.
const ACCEPTED: &str = ".json (JSON), .xml (JUnit XML), .md (Markdown), .html or .htm (HTML)";

impl Format {
    /// Every format, in a stable order.
    pub const ALL: [Format; 4] = [Format::Json, Format::Junit, Format::Markdown, Format::Html];

    /// Picks the format from the file extension (case-insensitive): `.json`, `.xml`
    /// (JUnit), `.md` / `.markdown`, `.html` / `.htm`.
    pub fn from_path(path: &Path) -> Result<Format, ReportError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("json") => Ok(Format::Json),
            Some("xml") => Ok(Format::Junit),
            Some("md" | "markdown") => Ok(Format::Markdown),
            Some("html" | "htm") => Ok(Format::Html),
            _ => Err(ReportError::UnknownFormat {
                path: path.to_path_buf(),
            }),
        }
    }

    /// The format's name as accepted by [`str::parse`]: `json`, `junit`, `markdown`, `html`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Junit => "junit",
            Format::Markdown => "markdown",
            Format::Html => "html",
        }
    }

    /// The usual file extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Junit => "xml",
            Format::Markdown => "md",
            Format::Html => "html",
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "json" => Ok(Format::Json),
            "junit" | "xml" => Ok(Format::Junit),
            "markdown" | "md" => Ok(Format::Markdown),
            "html" | "htm" => Ok(Format::Html),
            other => Err(format!(
                "unknown report format `{other}`: use json, junit, markdown or html"
            )),
        }
    }
}

/// Why a report could not be rendered or written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The path's extension names no known format.
    #[error("cannot tell the report format of `{}`: use {ACCEPTED}", path.display())]
    UnknownFormat {
        /// The path as given.
        path: PathBuf,
    },
    /// Creating the directory or writing the file failed.
    #[error("cannot write report `{}`: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The report holds only the outcomes its summary lists ([`Detail::Summary`]).
    #[error("cannot render the report: it was built with only the outcomes its summary lists")]
    Partial,
    /// Writing a report, or its working files, failed.
    #[error("cannot write the report: {0}")]
    Write(#[from] std::io::Error),
    /// JSON serialisation failed.
    #[error("cannot render the JSON report: {0}")]
    Json(#[from] serde_json::Error),
    /// JUnit XML serialisation failed.
    #[error("cannot render the JUnit report: {0}")]
    Junit(#[from] quick_junit::SerializeError),
    /// The HTML template failed.
    #[error("cannot render the HTML report: {0}")]
    Template(#[from] minijinja::Error),
}

impl ReportError {
    /// The error, naming `path` when it is a failure to write.
    pub(crate) fn at(self, path: &Path) -> ReportError {
        match self {
            ReportError::Write(source) => ReportError::Io {
                path: path.to_path_buf(),
                source,
            },
            other => other,
        }
    }
}

/// Renders the report in one format; a report of [`Detail::Summary`] is refused.
/// The same writers as [`Files`], fed the report's outcomes.
pub fn render(report: &Report, format: Format) -> Result<String, ReportError> {
    if report.detail != Detail::Full {
        return Err(ReportError::Partial);
    }
    files::render(report, format)
}

/// Renders the report in the format its extension names and writes it, creating
/// parent directories. The file is written next to its final name and renamed into
/// place, so a reader never sees half a report.
pub fn write(report: &Report, path: &Path) -> Result<(), ReportError> {
    if report.detail != Detail::Full {
        return Err(ReportError::Partial);
    }
    let mut files = Files::create(&[path.to_path_buf()])?;
    for o in &report.outcomes {
        files.push(&report.run, o, report.case(&o.case_id));
    }
    files.finish(report, |_| ())
}
