//! What a run is asked to do: the typed input of a session.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use gavel_core::load::SuiteSource;
use gavel_models::{CacheMode, ModelId};
use gavel_report::CalibrationGate;
use serde::{Deserialize, Serialize};

/// Where a run's cases come from.
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Sources {
    /// Suite files or directories (several merge into one run); from the API,
    /// suites given as text.
    #[cfg_attr(feature = "cli", arg(value_name = "PATHS", required_unless_present_any = ["stored", "resume"],
        value_parser = |p: &str| Ok::<_, std::convert::Infallible>(SuiteSource::Path(p.into()))))]
    pub suites: Vec<SuiteSource>,
    /// A suite stored in the database (`gavel import`), merged with any files given
    /// (e.g. its targets); the run records the case versions it used.
    #[cfg_attr(feature = "cli", arg(long = "suite", value_name = "NAME"))]
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

// With the `clap` feature these option groups are also the command line's flags
// (`clap::Args`): one definition serves the CLI, the web UI's forms and library
// callers.

/// Which cases run, and how often: stored with the run so workers and resumes
/// select the same executions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Selection {
    /// Only cases with this tag (repeatable: any of them).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long = "tag", value_name = "TAG"))]
    pub tags: Vec<String>,
    /// Leave out cases with this tag (repeatable).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long = "skip-tag", value_name = "TAG"))]
    pub skip_tags: Vec<String>,
    /// Only cases whose id or name contains this text.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub filter: Option<String>,
    /// Run every case this many times (overrides the cases' `repeat`).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_parser = gavel_core::bounds::parse_repeat))]
    pub repeat: Option<u32>,
    /// Only this target (repeatable; default: every target of each case).
    /// Stored as `only_targets`: a run's stored `targets` are its adapters.
    #[serde(
        default,
        rename = "only_targets",
        skip_serializing_if = "Vec::is_empty"
    )]
    #[cfg_attr(feature = "cli", arg(long = "target", value_name = "NAME"))]
    pub targets: Vec<String>,
}

/// Model choices of a run.
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct ModelOptions {
    /// Judge model id (overrides the suite's judge.model), e.g.
    /// anthropic:claude-opus-4-5 or local:gemma-3-270m-q4_k_m.
    #[cfg_attr(feature = "cli", arg(long, value_name = "MODEL", value_parser = parse_judge))]
    pub judge: Option<ModelId>,
    /// Embedding model of `similar` checks (overrides the suite's judge.embedder):
    /// all-MiniLM-L6-v2 (default, local), a model folder, openai:NAME or
    /// openai-compatible:NAME@URL.
    #[cfg_attr(feature = "cli", arg(long, value_name = "MODEL"))]
    pub embedder: Option<String>,
    /// Neither read nor write the model answer cache.
    #[cfg_attr(feature = "cli", arg(long, conflicts_with = "cache_only"))]
    pub no_cache: bool,
    /// Only answers already in the cache; no model call is made.
    #[cfg_attr(feature = "cli", arg(long))]
    pub cache_only: bool,
    /// A judge or target without credentials is an error, not a skip (for CI).
    #[cfg_attr(feature = "cli", arg(long))]
    pub strict: bool,
    /// Stop scheduling new work once the run has spent this many US dollars.
    #[cfg_attr(feature = "cli", arg(long, value_name = "USD", value_parser = gavel_core::bounds::parse_usd))]
    pub max_cost: Option<f64>,
}

impl ModelOptions {
    /// How the model answer cache is used.
    pub fn cache(&self) -> CacheMode {
        match (self.no_cache, self.cache_only) {
            (true, _) => CacheMode::Off,
            (_, true) => CacheMode::Only,
            _ => CacheMode::ReadWrite,
        }
    }
}

/// `--judge`: a model id whose provider this program has.
#[cfg(feature = "cli")]
fn parse_judge(s: &str) -> Result<ModelId, String> {
    crate::check_model("--judge", s).map_err(|e| match e {
        crate::SessionError::Config { message, .. } => message,
        other => other.to_string(),
    })
}

/// The gate a run's report applies.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct GateConfig {
    /// Gate: minimum pass rate over decided cases, as 80, 80% or 0.8
    /// (default: the suite's `gate.min_pass_rate`, else 80).
    #[cfg_attr(feature = "cli", arg(long, value_parser = gavel_core::bounds::parse_rate))]
    pub min_pass_rate: Option<f64>,
    /// Gate only on cases with this tag (repeatable: any of them), e.g. `smoke`;
    /// the others (e.g. `eval`) are reported but do not gate.
    #[cfg_attr(
        feature = "cli",
        arg(id = "gate_tags", long = "gate-tag", value_name = "TAG")
    )]
    pub tags: Vec<String>,
    /// Judges are required: a judged check with no judge model or credentials is
    /// an error, and the gate fails (exit 1) naming it (the suite's
    /// `judge.required: true` asks the same).
    #[cfg_attr(feature = "cli", arg(long))]
    pub require_judges: bool,
}

impl GateConfig {
    /// The minimum pass rate when neither the command line nor the suite sets one.
    pub const DEFAULT_MIN_PASS_RATE: f64 = 80.0;

    /// The minimum pass rate a run of `suite` gates at: the flag's, else the
    /// suite's `gate.min_pass_rate`, else 80%.
    pub fn min_pass_rate_for(&self, suite: &gavel_core::Suite) -> f64 {
        self.min_pass_rate
            .or(suite.gate.min_pass_rate)
            .unwrap_or(Self::DEFAULT_MIN_PASS_RATE)
    }
}

/// A stored run's gate, changed on purpose: `gavel report`'s flags. The
/// default changes nothing, so every door reports the gate the run was given.
/// No flag lifts a failed judge calibration, an unfinished plan or a run that
/// decided nothing.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Regate {
    /// Gate at this minimum pass rate instead of the run's own (80, 80% or 0.8).
    #[cfg_attr(feature = "cli", arg(long, value_parser = gavel_core::bounds::parse_rate))]
    pub min_pass_rate: Option<f64>,
    /// Gate only on cases with this tag (repeatable) instead of the run's own
    /// gate tags.
    #[cfg_attr(
        feature = "cli",
        arg(id = "gate_tags", long = "gate-tag", value_name = "TAG")
    )]
    pub tags: Vec<String>,
    /// Require judges, whether or not the run did.
    #[cfg_attr(feature = "cli", arg(long))]
    pub require_judges: bool,
}

/// Everything one run needs, from any front door; with the `cli` feature, also
/// `gavel run`'s flags.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct RunConfig {
    /// Where the cases come from.
    #[cfg_attr(feature = "cli", command(flatten))]
    pub sources: Sources,
    /// Which executions run.
    #[cfg_attr(feature = "cli", command(flatten))]
    pub selection: Selection,
    /// Executions at once.
    #[cfg_attr(feature = "cli", arg(short = 'j', long = "jobs", default_value_t = 4, value_parser = gavel_core::bounds::parse_jobs))]
    pub jobs: usize,
    /// Per-execution timeout in seconds for cases that set no `timeout_s`.
    #[cfg_attr(feature = "cli", arg(long, default_value = "120", value_parser = gavel_core::bounds::parse_seconds))]
    pub timeout: Duration,
    /// Models.
    #[cfg_attr(feature = "cli", command(flatten))]
    pub models: ModelOptions,
    /// The gate.
    #[cfg_attr(feature = "cli", command(flatten))]
    pub gate: GateConfig,
    /// The new run's id (a UUID; default: a fresh one). For tools that start runs.
    #[cfg_attr(feature = "cli", arg(long, hide = true, conflicts_with = "resume"))]
    pub run_id: Option<uuid::Uuid>,
    /// Finish an interrupted run (an id, a unique prefix, or `latest`) from its
    /// stored suite snapshot: recorded results are kept, errored ones run again.
    /// Suite arguments given must match the snapshot.
    #[cfg_attr(feature = "cli", arg(long, value_name = "RUN_ID"))]
    pub resume: Option<String>,
    /// The version of the agent or repository under test (e.g. a git commit),
    /// stored with the run and shown in its label.
    #[cfg_attr(feature = "cli", arg(long, env = "GAVEL_COMMIT", value_name = "REV"))]
    pub commit: Option<String>,
    /// Report files the finished run's report is written to as it is read
    /// from the store (the format follows each extension); the report itself
    /// keeps only what its summary lists ([`gavel_report::Detail::Summary`]).
    #[cfg_attr(feature = "cli", arg(skip))]
    pub report_files: Vec<std::path::PathBuf>,
}

impl RunConfig {
    /// A run of `sources` with the defaults: 4 at once, 120 s per execution,
    /// gate at 80%, no report file.
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
            commit: None,
            report_files: Vec::new(),
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
    /// Judges were required (the flag or the suite's `judge.required`): workers
    /// and `gavel report` apply the same rule.
    #[serde(default)]
    pub(crate) require_judges: bool,
    /// The default judge model, when one was chosen (URL credentials masked).
    #[serde(default)]
    pub(crate) judge: Option<String>,
    /// `--gate-tag` choices: the gate counts only cases with one of these tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) gate_tags: Vec<String>,
    /// The suite's calibrated-judge requirement, decided when the run was
    /// prepared (its judge is known then): every door gates on this decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) calibration: Option<CalibrationGate>,
    /// `--strict`: a judge or target without credentials is an error.
    #[serde(default)]
    pub(crate) strict: bool,
    /// `--no-cache`.
    #[serde(default)]
    pub(crate) no_cache: bool,
    /// `--cache-only`.
    #[serde(default)]
    pub(crate) cache_only: bool,
    /// `--embedder` (URL credentials masked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) embedder: Option<String>,
    /// The budget in US dollars (`--max-cost`, else the suite's
    /// `judge.max_cost`), held across every process that runs the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) max_cost: Option<f64>,
    /// Each judge template override (`judge.templates`) as it was read: its
    /// kind → the SHA-256 of its file. A resume or a worker refuses a
    /// template edited since, so one run is never judged by two templates.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) templates: BTreeMap<String, String>,
    /// Target name → adapter kind.
    #[serde(default)]
    pub(crate) targets: serde_json::Map<String, serde_json::Value>,
    /// The version under test, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) commit: Option<String>,
}

impl StoredConfig {
    /// The configuration stored with `run`.
    pub(crate) fn of(run: &gavel_core::RunRecord) -> Result<StoredConfig, crate::SessionError> {
        serde_json::from_value(run.config.clone()).map_err(|e| {
            crate::SessionError::config("run", format!("run {}'s configuration: {e}", run.id))
        })
    }

    /// `config` as the stored run was asked to run: its selection, deadline,
    /// gate and model options, with what `config` adds on top (a worker's own
    /// `--judge`, `--strict`, `--no-cache`, a tighter `--max-cost`).
    pub(crate) fn apply(&self, config: &mut RunConfig) {
        config.selection = self.selection.clone();
        if let Some(timeout) = self.timeout_s.filter(|s| s.is_finite() && *s > 0.0) {
            config.timeout = Duration::from_secs_f64(timeout);
        }
        config.gate = GateConfig {
            min_pass_rate: self.min_pass_rate.or(config.gate.min_pass_rate),
            tags: self.gate_tags.clone(),
            require_judges: self.require_judges || config.gate.require_judges,
        };
        let models = &mut config.models;
        models.strict |= self.strict;
        models.no_cache |= self.no_cache;
        models.cache_only |= self.cache_only && !models.no_cache;
        if models.embedder.is_none() {
            models.embedder = self.embedder.clone().filter(|e| !masked(e));
        }
        if models.judge.is_none() {
            models.judge = self
                .judge
                .as_deref()
                .filter(|j| !masked(j))
                .and_then(|j| j.parse().ok());
        }
        models.max_cost = match (models.max_cost, self.max_cost) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if config.commit.is_none() {
            config.commit = self.commit.clone();
        }
    }
}

impl StoredConfig {
    /// Refuses to go on with run `run_id` when a judge template file of
    /// `settings` differs from the one the run was planned with.
    pub(crate) fn check_templates(
        &self,
        run_id: &str,
        settings: &gavel_core::JudgeSettings,
    ) -> Result<(), crate::SessionError> {
        let now = template_hashes(settings);
        let changed: Vec<String> = self
            .templates
            .iter()
            .filter(|(kind, hash)| now.get(*kind) != Some(*hash))
            .map(|(kind, _)| {
                let path = settings.templates.get(kind).map_or("", String::as_str);
                format!("judge.templates.{kind} ({path})")
            })
            .collect();
        if changed.is_empty() {
            return Ok(());
        }
        Err(crate::SessionError::config(
            "judge.templates",
            format!(
                "{} changed since run {run_id} was planned: its verdicts would be judged by two templates; restore the file or start a new run",
                changed.join(", ")
            ),
        ))
    }
}

/// The SHA-256 of each judge template override file, by kind (a file that
/// cannot be read hashes as its error, so it differs from any content).
pub(crate) fn template_hashes(settings: &gavel_core::JudgeSettings) -> BTreeMap<String, String> {
    use sha2::Digest as _;
    settings
        .templates
        .iter()
        .map(|(kind, path)| {
            let hash = match std::fs::read(path) {
                Ok(bytes) => hex::encode(sha2::Sha256::digest(&bytes)),
                Err(e) => format!("unreadable: {e}"),
            };
            (kind.clone(), hash)
        })
        .collect()
}

/// Whether `model` had credentials masked when stored: the process that runs
/// it must name it itself.
fn masked(model: &str) -> bool {
    model.contains("***")
}

/// What a stored run was asked to run, as its label shows it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunLabels {
    /// `--tag` choices.
    pub tags: Vec<String>,
    /// `--target` choices.
    pub targets: Vec<String>,
    /// The version under test (`--commit`), when given.
    pub commit: Option<String>,
    /// The default judge model (its URL credentials masked), when one was chosen.
    pub judge: Option<String>,
}

impl RunLabels {
    /// Reads `run`'s stored configuration; a run stored without one has none.
    pub fn of(run: &gavel_core::RunRecord) -> RunLabels {
        match serde_json::from_value::<StoredConfig>(run.config.clone()) {
            Ok(c) => RunLabels {
                tags: c.selection.tags,
                targets: c.selection.targets,
                commit: c.commit,
                judge: c.judge,
            },
            Err(_) => RunLabels::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_configuration_keeps_the_target_choice_beside_the_target_kinds() {
        let stored = StoredConfig {
            files: vec!["suite.yaml".into()],
            selection: Selection {
                targets: vec!["fast".into()],
                ..Selection::default()
            },
            jobs: 4,
            timeout_s: Some(120.0),
            min_pass_rate: Some(80.0),
            require_judges: false,
            judge: None,
            gate_tags: Vec::new(),
            calibration: None,
            strict: true,
            no_cache: false,
            cache_only: false,
            embedder: None,
            max_cost: Some(0.5),
            templates: BTreeMap::new(),
            commit: Some("9f3c21a".into()),
            targets: serde_json::json!({"fast": "http", "slow": "http"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        };
        let value = serde_json::to_value(&stored).unwrap_or_default();
        let back: StoredConfig = serde_json::from_value(value).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.selection.targets, ["fast"]);
        assert_eq!(back.targets.len(), 2);
        assert_eq!(back.commit.as_deref(), Some("9f3c21a"));
        let mut config = RunConfig::new(Sources::default());
        back.apply(&mut config);
        assert!(config.models.strict);
        assert_eq!(config.models.max_cost, Some(0.5));
        assert_eq!(config.selection.targets, ["fast"]);
    }

    #[test]
    fn a_worker_applies_the_stored_options_and_keeps_its_own_tighter_ones() {
        let stored: StoredConfig = serde_json::from_value(serde_json::json!({
            "min_pass_rate": 90.0,
            "gate_tags": ["smoke"],
            "no_cache": true,
            "embedder": "openai-compatible:e@http://u:***@host/v1",
            "judge": "openai:gpt-4o-mini",
            "max_cost": 1.0,
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        let mut config = RunConfig::new(Sources::default());
        config.models.max_cost = Some(0.25);
        config.models.cache_only = true;
        stored.apply(&mut config);
        assert_eq!(config.gate.min_pass_rate, Some(90.0));
        assert_eq!(config.gate.tags, ["smoke"]);
        assert_eq!(config.models.cache(), CacheMode::Off);
        assert_eq!(config.models.max_cost, Some(0.25));
        assert_eq!(
            config.models.embedder, None,
            "a masked embedder is not reused"
        );
        assert_eq!(
            config.models.judge.map(|j| j.to_string()).as_deref(),
            Some("openai:gpt-4o-mini")
        );
    }
}
