//! `replay` targets: reading their recordings (files, stored runs) and
//! expanding `each_conversation` cases into one case per recorded conversation.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use gavel_core::target::ReplayTarget;
use gavel_core::{Execution, Round, Suite, TargetSpec, Transcript};
use gavel_store::Store;
use gavel_targets::replay::{self, ConversationKey, Conversations, Recordings};
use serde_json::Value;

use crate::SessionError;

/// The recorded conversations of every `replay` target of `suite`, by target
/// name: each target's own (docs/REPLAY.md, "Which conversation a case grades").
pub(crate) async fn recordings(
    suite: &Suite,
    store: &Store,
) -> Result<BTreeMap<String, Arc<Conversations>>, SessionError> {
    Ok(read_all(suite, Some(store))
        .await?
        .into_iter()
        .map(|(name, read)| (name, Arc::new(read.conversations)))
        .collect())
}

/// One replay target's recording, read.
struct Read {
    /// The conversations the target answers with.
    conversations: Conversations,
    /// The id of the stored run read, for a `run:` target.
    run: Option<String>,
}

/// Reads every replay target's recording; stored runs need `store`.
async fn read_all(
    suite: &Suite,
    store: Option<&Store>,
) -> Result<BTreeMap<String, Read>, SessionError> {
    let mut out = BTreeMap::new();
    for (name, spec) in &suite.targets {
        let TargetSpec::Replay(spec) = spec else {
            continue;
        };
        out.insert(name.clone(), read(name, spec, store).await?);
    }
    Ok(out)
}

async fn read(
    name: &str,
    spec: &ReplayTarget,
    store: Option<&Store>,
) -> Result<Read, SessionError> {
    let field = format!("targets.{name}");
    let file =
        replay::check(name, spec).map_err(|e| SessionError::config(&field, e.to_string()))?;
    let (recordings, run) = match (file, &spec.run, store) {
        (Some(file), _, _) => {
            let recordings = replay::read(Path::new(file), spec.format)
                .map_err(|e| SessionError::config(format!("{field}.file"), e.to_string()))?;
            (recordings, None)
        }
        (None, Some(run), Some(store)) => {
            let record = store.find_run(run).await.map_err(|e| {
                SessionError::config(format!("{field}.run"), format!("`{run}`: {e}"))
            })?;
            let executions = store.executions(&record.id).await?;
            let recordings = Recordings {
                conversations: stored(executions),
                origin: format!("run {}", record.id),
            };
            (recordings, Some(record.id))
        }
        (None, Some(run), None) => {
            return Err(SessionError::config(
                format!("{field}.run"),
                format!("`{run}`: a stored run is read from a store, and none was opened"),
            ));
        }
        (None, None, _) => {
            return Err(SessionError::config(
                field,
                "a replay target needs `file` or `run`",
            ));
        }
    };
    let conversations = recordings
        .select(name, spec.target.as_deref())
        .map_err(|e| SessionError::config(format!("{field}.target"), e.to_string()))?;
    Ok(Read { conversations, run })
}

/// A stored run's executions as conversations recorded on their targets:
/// `CASE`, `CASE#N` for repeat N > 0.
fn stored(executions: Vec<Execution>) -> BTreeMap<ConversationKey, Transcript> {
    executions
        .into_iter()
        .map(|e| {
            let id = match e.repeat_index {
                0 => e.case_id,
                n => format!("{}#{n}", e.case_id),
            };
            (ConversationKey::new(id, Some(e.target)), e.transcript)
        })
        .collect()
}

/// Whether `suite` has a `replay` target.
pub(crate) fn replays(suite: &Suite) -> bool {
    suite
        .targets
        .values()
        .any(|t| matches!(t, TargetSpec::Replay(_)))
}

/// Whether reading `suite`'s recordings needs a store (a `run:` target).
pub(crate) fn needs_store(suite: &Suite) -> bool {
    suite
        .targets
        .values()
        .any(|t| matches!(t, TargetSpec::Replay(r) if r.run.is_some()))
}

/// Pins every `run:` reference to the run's id (so `latest` still means the
/// same run once this one is stored), then replaces each `each_conversation`
/// case by one copy per recorded conversation of its targets that no case of
/// the suite names (nor an earlier template copied): the copy takes the
/// conversation's id, the template's targets that recorded it, one round per
/// recorded user message (of the longest of its recordings), and keeps the
/// case's own checks and settings.
pub(crate) async fn expand(suite: &mut Suite, store: Option<&Store>) -> Result<(), SessionError> {
    if !replays(suite) {
        return Ok(());
    }
    let recorded = read_all(suite, store).await?;
    for (name, read) in &recorded {
        if let (Some(TargetSpec::Replay(spec)), Some(id)) = (suite.targets.get_mut(name), &read.run)
        {
            spec.run = Some(id.clone());
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
    let mut copied = BTreeSet::new();
    let mut cases = Vec::with_capacity(suite.cases.len());
    for case in std::mem::take(&mut suite.cases) {
        if !case.each_conversation {
            cases.push(case);
            continue;
        }
        // Conversation id → the template's targets that recorded it, in order.
        let mut found: BTreeMap<&str, Vec<(&String, &Read)>> = BTreeMap::new();
        for target in &case.targets {
            let Some(read) = recorded.get(target) else {
                continue;
            };
            for id in read.conversations.by_id.keys() {
                found.entry(id.as_str()).or_default().push((target, read));
            }
        }
        for (id, on) in found {
            if named.contains(id) || !copied.insert(id.to_owned()) {
                continue;
            }
            let longest = on
                .iter()
                .filter_map(|(_, read)| read.conversations.by_id.get(id))
                .max_by_key(|t| t.turns.len());
            let origins: BTreeSet<&str> = on
                .iter()
                .map(|(_, read)| read.conversations.origin.as_str())
                .collect();
            let mut copy = case.clone();
            copy.each_conversation = false;
            copy.id = id.to_owned();
            copy.name = id.to_owned();
            copy.targets = on.iter().map(|(target, _)| (*target).clone()).collect();
            copy.source = format!(
                "{} ({})",
                case.source,
                origins.into_iter().collect::<Vec<_>>().join(", ")
            );
            copy.rounds = longest
                .into_iter()
                .flat_map(|t| &t.turns)
                .map(|t| round(Value::String(t.input.clone())))
                .collect();
            if copy.rounds.is_empty() {
                copy.rounds.push(round(Value::String(String::new())));
            }
            cases.push(copy);
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
