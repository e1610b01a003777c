//! What a run is asked to do: the typed input of a session.

use std::path::PathBuf;
use std::time::Duration;

use gavel_core::load::SuiteSource;
use gavel_models::{CacheMode, ModelId};
use serde::{Deserialize, Serialize};

/// Where a run's cases come from.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// Suite files and directories, and suites given as text (from the API).
    pub suites: Vec<SuiteSource>,
    /// A suite stored in the database (`gavel import`), read first.
    pub stored: Option<String>,
}

impl Sources {
    /// Suite files and directories.
    pub fn paths(paths: impl IntoIterator<Item = PathBuf>) -> Sources {
        Sources {
            suites: paths.into_iter().map(SuiteSource::Path).collect(),
            stored: None,
        }
    }
}

/// Which cases run, and how often: stored with the run so workers and resumes
/// select the same executions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Selection {
    /// Only cases with one of these tags (empty: all).
    #[serde(default)]
    pub tags: Vec<String>,
    /// Leave out cases with any of these tags.
    #[serde(default)]
    pub skip_tags: Vec<String>,
    /// Only cases whose id or name contains this text.
    #[serde(default)]
    pub filter: Option<String>,
    /// Every case this many times (overrides the cases' `repeat`).
    #[serde(default)]
    pub repeat: Option<u32>,
    /// Only these targets (empty: every target of each case).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
}

/// Model choices of a run.
#[derive(Debug, Clone, Default)]
pub struct ModelOptions {
    /// The judge (overrides the suite's `judge.model`).
    pub judge: Option<ModelId>,
    /// The embedder of `similar` checks (overrides the suite's `judge.embedder`).
    pub embedder: Option<String>,
    /// How the model answer cache is used.
    pub cache: CacheMode,
    /// A judge or target without credentials is an error, not a skip.
    pub strict: bool,
    /// Stop scheduling new work once the run spent this many US dollars.
    pub max_cost: Option<f64>,
}

/// The gate a run's report applies.
#[derive(Debug, Clone, PartialEq)]
pub struct GateConfig {
    /// Minimum pass rate over decided cases, in percent.
    pub min_pass_rate: f64,
    /// Gate only on cases with one of these tags (empty: all).
    pub tags: Vec<String>,
}

impl Default for GateConfig {
    fn default() -> GateConfig {
        GateConfig {
            min_pass_rate: 80.0,
            tags: Vec::new(),
        }
    }
}

/// Everything one run needs, from any front door.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Where the cases come from.
    pub sources: Sources,
    /// Which executions run.
    pub selection: Selection,
    /// Executions at once.
    pub jobs: usize,
    /// Deadline of an execution whose case sets no `timeout_s`.
    pub timeout: Duration,
    /// Models.
    pub models: ModelOptions,
    /// The gate.
    pub gate: GateConfig,
    /// The new run's id (default: a fresh UUIDv7).
    pub run_id: Option<uuid::Uuid>,
    /// Finish this stored run instead of starting one (an id, a prefix, `latest`).
    pub resume: Option<String>,
}

impl RunConfig {
    /// A run of `sources` with the defaults: 4 at once, 120 s per execution,
    /// gate at 80%.
    pub fn new(sources: Sources) -> RunConfig {
        RunConfig {
            sources,
            selection: Selection::default(),
            jobs: 4,
            timeout: Duration::from_secs(120),
            models: ModelOptions::default(),
            gate: GateConfig::default(),
            run_id: None,
            resume: None,
        }
    }
}

/// The part of a run's configuration stored with it (no secrets): what workers
/// and resumes read back to run the same executions the same way.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct StoredConfig {
    /// The suite files given.
    #[serde(default)]
    pub(crate) files: Vec<String>,
    /// The selection.
    #[serde(flatten)]
    pub(crate) selection: Selection,
    /// Executions at once.
    #[serde(default)]
    pub(crate) jobs: usize,
    /// Default deadline in seconds.
    #[serde(default)]
    pub(crate) timeout_s: Option<f64>,
    /// Gate threshold in percent.
    #[serde(default)]
    pub(crate) min_pass_rate: Option<f64>,
    /// The default judge model, when one was chosen.
    #[serde(default)]
    pub(crate) judge: Option<String>,
    /// Target name → adapter kind.
    #[serde(default)]
    pub(crate) targets: serde_json::Map<String, serde_json::Value>,
}
