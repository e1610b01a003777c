//! Before anything runs: load the suites, resolve the judge, plan, and check
//! that the run can start. Every refusal here is a typed [`SessionError`].

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use gavel_core::bounds::case_executions;
use gavel_core::load::SuiteSource;
use gavel_core::{Case, ExecutionKey, RunRecord, RunStatus, Suite};
use gavel_models::{ErrorKind, ModelId, Provider};
use gavel_runner::{Plan, PlanOptions, Planner};
use gavel_store::{CaseVersion, PAGE_SIZE, Store};
use serde_json::{Value, json};

use crate::config::StoredConfig;
use crate::{Note, RunConfig, SessionError, Sources};
use gavel_report::CalibrationGate;

/// The suite a run uses, with the stored case versions it came from.
pub(crate) struct Loaded {
    pub(crate) suite: Suite,
    pub(crate) versions: Vec<CaseVersion>,
}

/// Loads the run's suites through the one loader: a stored suite first (from
/// memory, as `gavel export` writes it), then files and texts.
pub async fn load_suite(store: &Store, sources: &Sources) -> Result<Suite, SessionError> {
    Ok(load(store, sources).await?.suite)
}

pub(crate) async fn load(store: &Store, sources: &Sources) -> Result<Loaded, SessionError> {
    let (inputs, versions) = inputs(store, sources).await?;
    let mut suite = gavel_core::load::load(&inputs).map_err(SessionError::Load)?;
    crate::replay::expand(&mut suite, Some(store)).await?;
    has_targets(&suite)?;
    Ok(Loaded { suite, versions })
}

/// Loads and plans the run's suites at once: each case is planned as it is
/// read, so a suite of any size is held one case at a time. Suites with
/// `replay` targets are loaded whole first (their recorded conversations may
/// add cases).
pub(crate) async fn load_planned(
    store: &Store,
    config: &RunConfig,
) -> Result<(Loaded, Plan), SessionError> {
    let (inputs, versions) = inputs(store, &config.sources).await?;
    let loading = gavel_core::load::open(&inputs);
    if crate::replay::replays(loading.suite()) {
        let mut suite = loading.collect().map_err(SessionError::Load)?;
        crate::replay::expand(&mut suite, Some(store)).await?;
        has_targets(&suite)?;
        let plan = plan(&mut suite, config, Default::default())?;
        return Ok((Loaded { suite, versions }, plan));
    }
    let mut planning = Planning::new(loading.suite(), config, Default::default())?;
    let mut failed = None;
    let suite = loading.cases(|case| {
        if failed.is_none() {
            failed = planning.add(case).err();
        }
    });
    let suite = suite.map_err(SessionError::Load)?;
    if let Some(e) = failed {
        return Err(e);
    }
    has_targets(&suite)?;
    Ok((Loaded { suite, versions }, planning.finish()?))
}

/// Plans the cases stored with run `run_id` (`suite`: its settings), read a
/// page at a time, leaving out the executions in `done`.
pub(crate) async fn plan_stored(
    store: &Store,
    run_id: &str,
    suite: &Suite,
    config: &RunConfig,
    done: HashSet<ExecutionKey>,
) -> Result<Plan, SessionError> {
    let mut planning = Planning::new(suite, config, done)?;
    let mut pages = store.case_pages(run_id, PAGE_SIZE);
    while let Some(page) = pages.next_page().await? {
        for case in page {
            planning.add(case)?;
        }
    }
    planning.finish()
}

/// Plans cases one at a time, each counted before it is expanded: a huge
/// product of cases × targets × repeats is refused, not iterated.
struct Planning {
    planner: Planner,
    repeat: Option<u32>,
    planned: u64,
}

impl Planning {
    fn new(
        suite: &Suite,
        config: &RunConfig,
        done: HashSet<ExecutionKey>,
    ) -> Result<Planning, SessionError> {
        let options = PlanOptions {
            tags: config.selection.tags.clone(),
            skip_tags: config.selection.skip_tags.clone(),
            filter: config.selection.filter.clone(),
            repeat: config.selection.repeat,
            targets: config.selection.targets.clone(),
            done,
        };
        Ok(Planning {
            planner: Planner::new(suite, &options).map_err(SessionError::Plan)?,
            repeat: options.repeat,
            planned: 0,
        })
    }

    fn add(&mut self, case: Case) -> Result<(), SessionError> {
        self.planned = self
            .planned
            .saturating_add(case_executions(&case, self.repeat));
        gavel_core::bounds::executions(self.planned)
            .map_err(|e| SessionError::config("--repeat", e.to_string()))?;
        self.planner.add(case).map_err(SessionError::Plan)
    }

    fn finish(self) -> Result<Plan, SessionError> {
        let plan = self.planner.finish().map_err(SessionError::Plan)?;
        if plan.executions == 0 && plan.already_done == 0 {
            return Err(SessionError::NothingSelected);
        }
        Ok(plan)
    }
}

/// The loader's inputs for `sources`, and the stored case versions they hold.
async fn inputs(
    store: &Store,
    sources: &Sources,
) -> Result<(Vec<SuiteSource>, Vec<CaseVersion>), SessionError> {
    let mut inputs = Vec::with_capacity(sources.suites.len() + 1);
    let mut versions = Vec::new();
    if let Some(name) = &sources.stored {
        inputs.push(stored_source(store, name).await?);
        versions = store.latest_cases(name).await?;
    }
    inputs.extend(sources.suites.iter().cloned());
    Ok((inputs, versions))
}

fn has_targets(suite: &Suite) -> Result<(), SessionError> {
    if suite.targets.is_empty() {
        return Err(SessionError::config(
            "targets",
            "no target is defined: give a suite file with `targets:` alongside the cases",
        ));
    }
    Ok(())
}

/// A stored suite as loader input, named `NAME.yaml` in messages.
pub async fn stored_source(store: &Store, name: &str) -> Result<SuiteSource, SessionError> {
    Ok(SuiteSource::Text {
        text: stored_yaml(store, name).await?,
        path: PathBuf::from(format!("{name}.yaml")),
    })
}

/// A stored suite as YAML text, as `gavel export` writes it.
pub async fn stored_yaml(store: &Store, name: &str) -> Result<String, SessionError> {
    let doc = store.export_suite(name).await?;
    serde_saphyr::to_string(&doc.into_value())
        .map_err(|e| SessionError::config("suite", format!("`{name}` as YAML: {e}")))
}

/// Checks a judge model id before anything runs: it parses, and its provider is
/// built into this program. Missing credentials are no error here: the judged
/// checks then skip (or error with `--strict`) and say why.
pub fn check_model(field: &str, id: &str) -> Result<ModelId, SessionError> {
    let parsed: ModelId = id
        .parse()
        .map_err(|e: gavel_models::ModelIdError| SessionError::config(field, e.to_string()))?;
    if parsed.provider == Provider::Local && cfg!(feature = "local") {
        return Ok(parsed);
    }
    match crate::models::provider(&parsed) {
        Err(e) if e.kind != ErrorKind::NoCredentials => {
            Err(SessionError::config(field, e.to_string()))
        }
        _ => Ok(parsed),
    }
}

/// The suite's own judge model, checked like `--judge`.
pub(crate) fn check_suite_judge(suite: &Suite) -> Result<(), SessionError> {
    if let Some(model) = &suite.judge.model {
        check_model("judge.model", model)?;
    }
    Ok(())
}

/// Plans the selected executions of a loaded suite, leaving out those in
/// `done`; the plan takes the suite's cases.
pub(crate) fn plan(
    suite: &mut Suite,
    config: &RunConfig,
    done: HashSet<ExecutionKey>,
) -> Result<Plan, SessionError> {
    let mut planning = Planning::new(suite, config, done)?;
    for case in std::mem::take(&mut suite.cases) {
        planning.add(case)?;
    }
    planning.finish()
}

/// A new run's record: its configuration snapshot holds no secrets.
pub(crate) fn new_run(
    suite: &Suite,
    config: &RunConfig,
    plan: &Plan,
    judge: Option<&str>,
    calibration: Option<CalibrationGate>,
) -> RunRecord {
    let mask = |m: &String| gavel_store::mask_url(m);
    let stored = StoredConfig {
        files: suite.files.clone(),
        selection: config.selection.clone(),
        jobs: config.jobs,
        timeout_s: Some(config.timeout.as_secs_f64()),
        min_pass_rate: Some(config.gate.min_pass_rate_for(suite)),
        require_judges: config.gate.require_judges || suite.judge.required,
        judge: judge.map(gavel_store::mask_url),
        gate_tags: config.gate.tags.clone(),
        calibration,
        strict: config.models.strict,
        no_cache: config.models.no_cache,
        cache_only: config.models.cache_only,
        embedder: config.models.embedder.as_ref().map(mask),
        max_cost: config.models.max_cost.or(suite.judge.max_cost),
        templates: crate::config::template_hashes(&suite.judge),
        targets: suite
            .targets
            .iter()
            .map(|(name, spec)| (name.clone(), json!(spec.kind())))
            .collect(),
        commit: config.commit.clone(),
    };
    RunRecord {
        id: config.run_id.unwrap_or_else(uuid::Uuid::now_v7).to_string(),
        suite: suite.name.clone(),
        status: RunStatus::Running,
        started_at: gavel_core::now_rfc3339(),
        finished_at: None,
        config: serde_json::to_value(&stored).unwrap_or_default(),
        planned: u64::try_from(plan.executions + plan.already_done).ok(),
    }
}

/// The stored run `id` (an id, a unique prefix, or `latest`) with its suite
/// snapshot's settings (its cases stay in the store) and the executions that
/// need no second run (errored ones run again).
pub(crate) async fn resumed(
    store: &Store,
    id: &str,
    notes: &mut Vec<Note>,
) -> Result<(RunRecord, Suite, StoredConfig, HashSet<ExecutionKey>), SessionError> {
    let run = store.find_run(id).await?;
    let suite = store.suite_settings(&run.id).await.map_err(|e| match e {
        gavel_store::StoreError::NotFound(_) => SessionError::config(
            "--resume",
            format!(
                "run {} has no stored suite snapshot (it was made by an older gavel): run it anew",
                run.id
            ),
        ),
        other => SessionError::Store(other),
    })?;
    let stored: StoredConfig = serde_json::from_value(run.config.clone()).map_err(|e| {
        SessionError::config("--resume", format!("run {}'s configuration: {e}", run.id))
    })?;
    let done = store
        .recorded_keys(&run.id)
        .await?
        .into_iter()
        .filter(|(_, status)| *status != gavel_core::Status::Error)
        .map(|(key, _)| key)
        .collect();
    notes.push(Note::info(format!(
        "resuming run {} from its stored suite snapshot",
        run.id
    )));
    Ok((run, suite, stored, done))
}

/// Differences between a run's stored suite (`stored`: its settings, `cases`:
/// its cases) and the one on disk (`selected`: its cases under the run's
/// selection), one line each (empty: the same).
pub(crate) fn suite_changes(
    stored: &Suite,
    cases: &[Case],
    disk: &Suite,
    selected: &Plan,
) -> Result<Vec<String>, SessionError> {
    let mut now: HashMap<String, Value> = HashMap::new();
    let mut order = Vec::new();
    let mut texts = selected.case_texts();
    while let Some(text) = texts.next_text().map_err(SessionError::Plan)? {
        let value = serde_json::from_str(text.json).unwrap_or_default();
        order.push(text.id.clone());
        now.insert(text.id, value);
    }
    let mut out = Vec::new();
    for case in cases {
        match now.get(&case.id) {
            None => out.push(format!("case `{}` was removed", case.id)),
            Some(c) if *c != serde_json::to_value(case).unwrap_or_default() => {
                out.push(format!("case `{}` changed", case.id))
            }
            Some(_) => {}
        }
    }
    let before: HashSet<&str> = cases.iter().map(|c| c.id.as_str()).collect();
    for id in order.iter().filter(|id| !before.contains(id.as_str())) {
        out.push(format!("case `{id}` was added"));
    }
    if serde_json::to_value(&stored.targets).ok() != serde_json::to_value(&disk.targets).ok() {
        out.push("the targets changed".to_owned());
    }
    Ok(out)
}

/// Checks one case someone wants to store as `gavel validate` would: it loads,
/// it asks for nothing `allowed` refuses ([`SessionError::NotAllowed`]), and
/// its checks compile against the default judge settings. The error's field is
/// the case field at fault (`rounds[0].checks[1].pattern`), else `case`.
pub fn validate_case(
    case: &serde_json::Value,
    allowed: &crate::trust::Allowed,
) -> Result<(), SessionError> {
    // A case names its targets; one written as targets' definitions would
    // otherwise get the loader's bare type error.
    if case.get("targets").is_some_and(Value::is_object) {
        return Err(SessionError::config(
            "targets",
            "a case lists the names of the targets it runs against; targets themselves (a `command` target, an http target's `start`) are defined in the server operator's suite files (`gavel serve --with`)",
        ));
    }
    let text = serde_json::to_string(&json!({ "cases": [case] }))
        .map_err(|e| SessionError::config("case", e.to_string()))?;
    let suite = gavel_core::load::parse_suite_str(&text, "case.json".as_ref())
        .map_err(SessionError::Load)?;
    for case in &suite.cases {
        allowed.check_case(case)?;
        gavel_checks::compile(case, &suite.judge).map_err(|e| match e {
            gavel_checks::CheckError::Invalid { field, message, .. } => {
                SessionError::config(field, message)
            }
            other => SessionError::config("case", other.to_string()),
        })?;
    }
    Ok(())
}
