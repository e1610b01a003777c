//! `replay` targets: reading their recordings (files, stored runs) and
//! expanding `each_conversation` cases into one case per recorded conversation.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use gavel_core::target::ReplayTarget;
use gavel_core::{Execution, Round, Suite, TargetSpec, Transcript};
use gavel_store::Store;
use gavel_targets::replay::{self, Recordings};
use serde_json::Value;

use crate::SessionError;

/// The recordings of every `replay` target of `suite`, by target name.
pub(crate) async fn recordings(
    suite: &Suite,
    store: &Store,
) -> Result<BTreeMap<String, Arc<Recordings>>, SessionError> {
    let mut out = BTreeMap::new();
    for (name, spec) in &suite.targets {
        let TargetSpec::Replay(spec) = spec else {
            continue;
        };
        out.insert(name.clone(), Arc::new(read(name, spec, store).await?));
    }
    Ok(out)
}

async fn read(name: &str, spec: &ReplayTarget, store: &Store) -> Result<Recordings, SessionError> {
    let field = format!("targets.{name}");
    let file =
        replay::check(name, spec).map_err(|e| SessionError::config(&field, e.to_string()))?;
    match (file, &spec.run) {
        (Some(file), _) => replay::read(Path::new(file), spec.format)
            .map_err(|e| SessionError::config(format!("{field}.file"), e.to_string())),
        (None, Some(run)) => {
            let record = store.find_run(run).await.map_err(|e| {
                SessionError::config(format!("{field}.run"), format!("`{run}`: {e}"))
            })?;
            let executions = store.executions(&record.id).await?;
            Ok(Recordings {
                conversations: stored(executions),
                origin: format!("run {}", record.id),
            })
        }
        (None, None) => Err(SessionError::config(
            field,
            "a replay target needs `file` or `run`",
        )),
    }
}

/// A stored run's executions as conversations: `CASE`, `CASE#N` for repeat
/// N > 0; a case run against several targets is `CASE@TARGET` (`CASE@TARGET#N`)
/// for each target but the first by name.
fn stored(executions: Vec<Execution>) -> BTreeMap<String, Transcript> {
    let mut first: BTreeMap<String, String> = BTreeMap::new();
    for e in &executions {
        let t = first
            .entry(e.case_id.clone())
            .or_insert_with(|| e.target.clone());
        if e.target < *t {
            t.clone_from(&e.target);
        }
    }
    executions
        .into_iter()
        .map(|e| {
            let mut key = e.case_id.clone();
            if first.get(&e.case_id) != Some(&e.target) {
                key = format!("{key}@{}", e.target);
            }
            if e.repeat_index > 0 {
                key = format!("{key}#{}", e.repeat_index);
            }
            (key, e.transcript)
        })
        .collect()
}

/// Pins every `run:` reference to the run's id (so `latest` still means the
/// same run once this one is stored), then replaces each `each_conversation`
/// case by one copy per recorded conversation of its targets that no case of
/// the suite names: the copy takes the conversation's id and one round per
/// recorded user message, and keeps the case's own checks and settings.
pub(crate) async fn expand(suite: &mut Suite, store: &Store) -> Result<(), SessionError> {
    let has_replay = suite
        .targets
        .values()
        .any(|t| matches!(t, TargetSpec::Replay(_)));
    if !has_replay {
        return Ok(());
    }
    let recorded = recordings(suite, store).await?;
    for (name, recordings) in &recorded {
        if let (Some(TargetSpec::Replay(spec)), Some(id)) = (
            suite.targets.get_mut(name),
            recordings.origin.strip_prefix("run "),
        ) {
            spec.run = Some(id.to_owned());
        }
    }
    if !suite.cases.iter().any(|c| c.each_conversation) {
        return Ok(());
    }
    let named: BTreeSet<String> = suite
        .cases
        .iter()
        .filter(|c| !c.each_conversation)
        .map(|c| c.id.clone())
        .collect();
    let mut taken = named.clone();
    let mut cases = Vec::with_capacity(suite.cases.len());
    for case in std::mem::take(&mut suite.cases) {
        if !case.each_conversation {
            cases.push(case);
            continue;
        }
        for target in &case.targets {
            let Some(recordings) = recorded.get(target) else {
                continue;
            };
            for (id, transcript) in &recordings.conversations {
                if named.contains(id) {
                    continue;
                }
                let id = match taken.contains(id) {
                    true => format!("{id}@{target}"),
                    false => id.clone(),
                };
                let mut copy = case.clone();
                copy.each_conversation = false;
                copy.id = id.clone();
                copy.name = id.clone();
                copy.targets = vec![target.clone()];
                copy.source = format!("{} ({})", case.source, recordings.origin);
                copy.rounds = transcript
                    .turns
                    .iter()
                    .map(|t| round(Value::String(t.input.clone())))
                    .collect();
                if copy.rounds.is_empty() {
                    copy.rounds.push(round(Value::String(String::new())));
                }
                taken.insert(id);
                cases.push(copy);
            }
        }
    }
    suite.cases = cases;
    Ok(())
}

/// A round with only its input.
fn round(input: Value) -> Round {
    Round {
        input,
        checks: Vec::new(),
        criteria: None,
        expected_output: None,
        expected_tools: Vec::new(),
        threshold: None,
        branch: None,
        expect_clarification: false,
    }
}
