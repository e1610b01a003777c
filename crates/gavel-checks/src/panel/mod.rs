//! Judge panels: `procedural` pipelines of stages, `consensus` judges scoring
//! over rounds, `reactive` routers and specialists, `dag` decision graphs. Every
//! member is an ordinary compiled check or judge, so every
//! model call goes through [`ask`](crate::judge) and the model layers (cache,
//! rate limit, retry, cost). A panel's `timeout_ms` bounds the whole panel: past
//! it the verdict is `error` and the record of what was done so far is kept.

mod consensus;
mod dag;
mod procedural;
mod reactive;

use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

use gavel_core::{Attempts, CheckKind, CheckSpec, Evidence, Status, Transcript, Verdict};
use serde_json::{Value, json};

use crate::error::FieldError;
use crate::expected::Expected;
use crate::finding::VerdictHead;
use crate::judge::compile::{Env, Level, TurnJudge};
use crate::runtime::JudgeRuntime;
use crate::subject::Judged;
use crate::subject::Scope;

pub(crate) use consensus::Consensus;
pub(crate) use dag::Dag;
pub(crate) use procedural::Procedural;
pub(crate) use reactive::Reactive;

/// A compiled panel.
pub(crate) struct Panel {
    kind: PanelKind,
    timeout_ms: Option<u64>,
}

enum PanelKind {
    Procedural(Procedural),
    Consensus(Consensus),
    Reactive(Box<Reactive>),
    Dag(Dag),
}

impl fmt::Debug for Panel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Panel")
            .field("kind", &self.kind())
            .field("name", &self.name())
            .field("timeout_ms", &self.timeout_ms)
            .finish()
    }
}

/// Compiles a panel check at `at`; errors carry absolute
/// field paths.
pub(crate) fn compile(
    spec: &CheckSpec,
    at: &str,
    env: &Env<'_>,
    level: &Level<'_>,
    scope: Scope,
    expected: &Expected<'_>,
) -> Result<TurnJudge, FieldError> {
    let (kind, timeout_ms) = match spec {
        CheckSpec::Procedural(p) => (
            PanelKind::Procedural(Procedural::compile(p, at, env, level, scope, expected)?),
            p.timeout_ms,
        ),
        CheckSpec::Consensus(c) => (
            PanelKind::Consensus(Consensus::compile(c, at, env, level)?),
            c.timeout_ms,
        ),
        CheckSpec::Reactive(r) => (
            PanelKind::Reactive(Box::new(Reactive::compile(r, at, env, level)?)),
            r.timeout_ms,
        ),
        CheckSpec::Dag(d) => (
            PanelKind::Dag(Dag::compile(d, at, env, level)?),
            d.timeout_ms,
        ),
        other => {
            return Err(FieldError::new(
                at,
                format!("internal error: `{}` is not a panel", other.kind()),
            ));
        }
    };
    if timeout_ms == Some(0) {
        return Err(FieldError::new(
            format!("{at}.timeout_ms"),
            "timeout_ms must be more than 0",
        ));
    }
    Ok(TurnJudge::Panel(std::sync::Arc::new(Panel {
        kind,
        timeout_ms,
    })))
}

impl Panel {
    /// Display name: `procedural [a, b]`, `consensus "<criteria>"`…
    pub(crate) fn name(&self) -> String {
        match &self.kind {
            PanelKind::Procedural(p) => p.name(),
            PanelKind::Consensus(c) => c.name(),
            PanelKind::Reactive(r) => r.name(),
            PanelKind::Dag(d) => d.name(),
        }
    }

    /// `procedural`, `consensus`, `reactive` or `dag`.
    pub(crate) fn kind(&self) -> CheckKind {
        match &self.kind {
            PanelKind::Procedural(_) => procedural::KIND,
            PanelKind::Consensus(_) => consensus::KIND,
            PanelKind::Reactive(_) => reactive::KIND,
            PanelKind::Dag(_) => dag::KIND,
        }
    }

    /// The judge configurations of every member.
    pub(crate) fn judges(&self) -> Vec<crate::JudgeUse> {
        let name = self.name();
        match &self.kind {
            PanelKind::Procedural(p) => p.judges(),
            PanelKind::Consensus(c) => c.judges(),
            PanelKind::Reactive(r) => r.judges(&name),
            PanelKind::Dag(d) => d.judges(&name),
        }
    }

    /// Runs the panel on the judged turn, within its timeout.
    pub(crate) async fn run(
        &self,
        head: VerdictHead<'_>,
        judged: &Judged<'_>,
        transcript: &Transcript,
        rounds: usize,
        rt: &JudgeRuntime<'_>,
    ) -> Verdict {
        let record = Record::default();
        let work = async {
            match &self.kind {
                PanelKind::Procedural(p) => {
                    p.run(head, judged, transcript, rounds, rt, &record).await
                }
                PanelKind::Consensus(c) => c.run(head, judged, rt, &record).await,
                PanelKind::Reactive(r) => r.run(head, judged, rt, &record).await,
                PanelKind::Dag(d) => d.run(head, judged, rt, &record).await,
            }
        };
        let verdict = match self.timeout_ms {
            None => work.await,
            Some(ms) => self.timed(head, work, ms, &record).await,
        };
        with_member_totals(verdict)
    }

    /// `work` within `ms`, else the `error` verdict with what was done so far.
    async fn timed(
        &self,
        head: VerdictHead<'_>,
        work: impl std::future::Future<Output = Verdict>,
        ms: u64,
        record: &Record,
    ) -> Verdict {
        match tokio::time::timeout(Duration::from_millis(ms), work).await {
            Ok(verdict) => verdict,
            Err(_) => {
                let (key, done) = match &self.kind {
                    PanelKind::Procedural(_) => ("stages", "stages"),
                    PanelKind::Consensus(_) => ("rounds", "rounds"),
                    PanelKind::Reactive(_) => ("steps", "steps"),
                    PanelKind::Dag(_) => ("path", "nodes"),
                };
                let entries = record.take();
                let cost = sum_costs(entries.iter().map(|e| e["cost_usd"].as_f64()));
                let mut v = head
                    .verdict(
                        Status::Error,
                        format!(
                            "the {} panel timed out after {ms} ms ({} {done} done)",
                            self.kind(),
                            entries.len()
                        ),
                    )
                    .with_evidence(json!({
                        "panel": self.kind(),
                        "timed_out": true,
                        "timeout_ms": ms,
                        key: entries,
                    }));
                v.cost_usd = cost;
                v
            }
        }
    }
}

/// The panel verdict with what its members' verdicts (kept, with their
/// evidence, inside the panel's) recorded: their transport tries summed, and
/// the `judge_unavailable` flag when any member had no judge model.
fn with_member_totals(mut verdict: Verdict) -> Verdict {
    let mut members = Members::default();
    verdict
        .evidence
        .detail
        .values()
        .for_each(|v| members.add(v));
    if members.transport.attempts > 0 {
        verdict.evidence.transport = Some(members.transport);
    }
    verdict.evidence.judge_unavailable |= members.judge_unavailable;
    verdict
}

/// What the member verdicts inside a panel's evidence recorded.
#[derive(Default)]
struct Members {
    transport: Attempts,
    judge_unavailable: bool,
}

impl Members {
    /// Adds the transport tries and `judge_unavailable` flag of every member's
    /// evidence and call record in `value`, at any depth.
    fn add(&mut self, value: &Value) {
        match value {
            Value::Object(_) => {
                // Read as a panel's evidence: only the kind-independent parts.
                let evidence = Evidence::read(CheckKind::Procedural, value.clone());
                if let Some(t) = evidence.transport {
                    self.transport.add(&t);
                }
                self.judge_unavailable |= evidence.judge_unavailable;
                evidence.detail.values().for_each(|v| self.add(v));
            }
            Value::Array(items) => items.iter().for_each(|v| self.add(v)),
            _ => {}
        }
    }
}

/// What a panel has done so far, kept when it times out.
#[derive(Default)]
pub(crate) struct Record(Mutex<Vec<Value>>);

impl Record {
    fn push(&self, entry: Value) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(entry);
    }

    fn take(&self) -> Vec<Value> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// A pointwise judge compiled at `at` from a panel member's fields.
fn pointwise(
    env: &Env<'_>,
    at: &str,
    level: &Level<'_>,
    criteria: Option<&String>,
    scale: Option<gavel_core::Scale>,
    threshold: Option<f64>,
    model: Option<&String>,
) -> Result<TurnJudge, FieldError> {
    let judge = CheckSpec::Judge {
        criteria: criteria.cloned(),
        scale,
        threshold,
        model: model.cloned(),
        reference: None,
        examples: Vec::new(),
    };
    match env.explicit(&judge, at, level)? {
        crate::judge::compile::Compiled::Turn(j) => Ok(j),
        crate::judge::compile::Compiled::Pairwise(_)
        | crate::judge::compile::Compiled::SelectBest(_) => Err(FieldError::new(
            at,
            "internal error: a panel judge compiled to a comparison",
        )),
    }
}

/// A model id that parses, or the error at `at`.
fn check_model(at: &str, model: Option<&String>) -> Result<(), FieldError> {
    match model {
        Some(m) => m
            .parse::<gavel_models::ModelId>()
            .map(|_| ())
            .map_err(|e| FieldError::new(at, e.to_string())),
        None => Ok(()),
    }
}

/// Runs one member judge (panels do not nest).
async fn judge_once(
    judge: &TurnJudge,
    head: VerdictHead<'_>,
    judged: &Judged<'_>,
    rt: &JudgeRuntime<'_>,
) -> Verdict {
    match judge {
        TurnJudge::Pointwise(j) => j.run(head, judged, rt).await,
        TurnJudge::Rubric(j) => j.run(head, judged, rt).await,
        TurnJudge::Metric(j) => j.run(head, judged, rt).await,
        TurnJudge::Panel(_) => head.verdict(Status::Error, "internal error: panels do not nest"),
    }
}

/// The judge with `context` added after its criteria.
fn with_context(judge: &TurnJudge, context: &str) -> TurnJudge {
    let mut judge = judge.clone();
    let material = match &mut judge {
        TurnJudge::Pointwise(j) => &mut j.material,
        TurnJudge::Rubric(j) => &mut j.material,
        TurnJudge::Panel(_) | TurnJudge::Metric(_) => return judge,
    };
    if !context.is_empty() {
        material.criteria = format!("{}\n\n{context}", material.criteria);
    }
    judge
}

/// A member verdict as the panel records it.
fn entry(label: &str, v: &Verdict) -> serde_json::Map<String, Value> {
    let mut e = serde_json::Map::new();
    e.insert("name".into(), json!(label));
    e.insert("check".into(), json!(v.check));
    e.insert("kind".into(), json!(v.kind));
    e.insert("status".into(), json!(v.status));
    e.insert("score".into(), json!(v.score));
    e.insert("reason".into(), json!(v.reason));
    e.insert("cost_usd".into(), json!(v.cost_usd));
    e.insert("evidence".into(), v.evidence.to_json());
    e
}

/// `- label: status (score 0.80): reason`, the reason shortened.
fn context_line(label: &str, v: &Verdict) -> String {
    let score = v
        .score
        .map(|s| format!(" (score {s:.2})"))
        .unwrap_or_default();
    format!(
        "- {label}: {}{score}: {}",
        v.status,
        crate::names::truncate(&v.reason, CONTEXT_CHARS)
    )
}

/// Characters of a member's reason shown to later judges.
const CONTEXT_CHARS: usize = 400;

/// Summed costs, `None` when none is known.
fn sum_costs(costs: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    costs.fold(None, |acc, c| match (acc, c) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
    })
}

#[cfg(test)]
mod flow_tests;
#[cfg(test)]
mod tests;
