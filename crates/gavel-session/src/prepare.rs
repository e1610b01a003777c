//! Before anything runs: load the suites, resolve the judge, plan, and check
//! that the run can start. Every refusal here is a typed [`SessionError`].

use std::collections::HashSet;
use std::path::PathBuf;

use gavel_core::load::SuiteSource;
use gavel_core::{ExecutionKey, RunRecord, RunStatus, Suite};
use gavel_models::{ErrorKind, ModelId, Provider};
use gavel_runner::{Plan, PlanOptions};
use gavel_store::{CaseVersion, Store};
use serde_json::json;

use crate::config::StoredConfig;
use crate::{Note, RunConfig, SessionError, Sources};

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
    let mut inputs = Vec::with_capacity(sources.suites.len() + 1);
    let mut versions = Vec::new();
    if let Some(name) = &sources.stored {
        inputs.push(stored_source(store, name).await?);
        versions = store.latest_cases(name).await?;
    }
    inputs.extend(sources.suites.iter().cloned());
    let mut suite = gavel_core::load::load(&inputs).map_err(SessionError::Load)?;
    crate::replay::expand(&mut suite, store).await?;
    if suite.targets.is_empty() {
        return Err(SessionError::config(
            "targets",
            "no target is defined: give a suite file with `targets:` alongside the cases",
        ));
    }
    Ok(Loaded { suite, versions })
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

/// Plans the selected executions, leaving out those in `done`; the plan takes
/// the suite's cases ([`gavel_runner::plan_taking`]).
pub(crate) fn plan(
    suite: &mut Suite,
    config: &RunConfig,
    done: HashSet<ExecutionKey>,
) -> Result<Plan, SessionError> {
    // Before expanding anything: a huge product of cases × targets × repeats
    // is refused, not allocated.
    let planned = gavel_core::bounds::planned_executions(suite, config.selection.repeat);
    gavel_core::bounds::executions(planned)
        .map_err(|e| SessionError::config("--repeat", e.to_string()))?;
    let options = PlanOptions {
        tags: config.selection.tags.clone(),
        skip_tags: config.selection.skip_tags.clone(),
        filter: config.selection.filter.clone(),
        repeat: config.selection.repeat,
        targets: config.selection.targets.clone(),
        done,
    };
    let plan = gavel_runner::plan_taking(suite, &options).map_err(SessionError::Plan)?;
    if plan.items.is_empty() && plan.already_done == 0 {
        return Err(SessionError::NothingSelected);
    }
    Ok(plan)
}

/// A new run's record: its configuration snapshot holds no secrets.
pub(crate) fn new_run(
    suite: &Suite,
    config: &RunConfig,
    plan: &Plan,
    judge: Option<&str>,
) -> RunRecord {
    let stored = StoredConfig {
        files: suite.files.clone(),
        selection: config.selection.clone(),
        jobs: config.jobs,
        timeout_s: Some(config.timeout.as_secs_f64()),
        min_pass_rate: Some(config.gate.min_pass_rate),
        require_judges: config.gate.require_judges || suite.judge.required,
        judge: judge.map(gavel_store::mask_url),
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
        planned: u64::try_from(plan.items.len() + plan.already_done).ok(),
    }
}

/// The stored run `id` (an id, a unique prefix, or `latest`) with its suite
/// snapshot and the executions that need no second run (errored ones run again).
pub(crate) async fn resumed(
    store: &Store,
    id: &str,
    notes: &mut Vec<Note>,
) -> Result<(RunRecord, Suite, StoredConfig, HashSet<ExecutionKey>), SessionError> {
    let run = store.find_run(id).await?;
    let suite = store.suite(&run.id).await.map_err(|e| match e {
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

/// Differences between a run's stored suite and the one on disk (`selected`:
/// its cases under the run's selection), one line each (empty: the same).
pub(crate) fn suite_changes(
    stored: &Suite,
    disk: &Suite,
    selected: &[std::sync::Arc<gavel_core::Case>],
) -> Vec<String> {
    let mut out = Vec::new();
    let value = |c: &gavel_core::Case| serde_json::to_value(c).unwrap_or_default();
    for case in &stored.cases {
        match selected.iter().find(|c| c.id == case.id) {
            None => out.push(format!("case `{}` was removed", case.id)),
            Some(c) if value(c) != value(case) => out.push(format!("case `{}` changed", case.id)),
            Some(_) => {}
        }
    }
    for case in selected {
        if !stored.cases.iter().any(|c| c.id == case.id) {
            out.push(format!("case `{}` was added", case.id));
        }
    }
    if serde_json::to_value(&stored.targets).ok() != serde_json::to_value(&disk.targets).ok() {
        out.push("the targets changed".to_owned());
    }
    out
}

/// Checks one case as `gavel validate` would: it loads, and its checks compile
/// against the default judge settings. The error's field is the case field at
/// fault (`rounds[0].checks[1].pattern`), else `case`.
pub fn validate_case(case: &serde_json::Value) -> Result<(), SessionError> {
    let text = serde_json::to_string(&json!({ "cases": [case] }))
        .map_err(|e| SessionError::config("case", e.to_string()))?;
    let suite = gavel_core::load::parse_suite_str(&text, "case.json".as_ref())
        .map_err(SessionError::Load)?;
    for case in &suite.cases {
        gavel_checks::compile(case, &suite.judge).map_err(|e| match e {
            gavel_checks::CheckError::Invalid { field, message, .. } => {
                SessionError::config(field, message)
            }
            other => SessionError::config("case", other.to_string()),
        })?;
    }
    Ok(())
}
