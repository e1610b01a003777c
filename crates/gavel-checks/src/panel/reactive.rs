//! The `reactive` panel: a router (a choice question) picks specialists from a
//! declared set; each picked specialist judges; when one is unsure (its score
//! close to its threshold) or they disagree (scores spread wide), a deep-dive
//! judge looks again; a synthesis judge, shown every finding, gives the verdict.

use gavel_core::CheckKind;
use gavel_core::panel::ReactiveSpec;
use gavel_core::{Status, Verdict};
use serde_json::{Value, json};

use super::{
    Record, check_model, context_line, entry, judge_once, pointwise, sum_costs, with_context,
};
use crate::check::AwaitedCheck;
use crate::error::FieldError;
use crate::finding::VerdictHead;
use crate::judge::Material;
use crate::judge::choice::{Choice, Mode, choose};
use crate::judge::compile::{Env, Level, TurnJudge};
use crate::names::bracket_list;
use crate::runtime::JudgeRuntime;
use crate::subject::Judged;

/// The kind of reactive panel verdicts.
pub(crate) const KIND: CheckKind = CheckKind::Reactive;

/// A specialist closer than this (0-1) to its threshold is unsure, by default.
const DEFAULT_MIN_CONFIDENCE: f64 = 0.1;
/// Specialists whose scores (0-1) spread wider than this disagree, by default.
const DEFAULT_MAX_SPREAD: f64 = 0.3;

const ROUTER_QUESTION: &str = "Which specialists should examine this answer? Pick every specialist whose area the conversation touches, and only those.";
const DEEP_DIVE_CRITERIA: &str = "Examine the answer closely where the specialists below were unsure or disagreed, and score it on their criteria.";

/// A compiled reactive panel.
pub(crate) struct Reactive {
    router: Material,
    specialists: Vec<Specialist>,
    /// Specialists called whatever the router picks.
    always: Vec<String>,
    deep_dive: TurnJudge,
    synthesis: TurnJudge,
    min_confidence: f64,
    max_spread: f64,
}

struct Specialist {
    choice: Choice,
    judge: TurnJudge,
}

impl Reactive {
    pub(crate) fn compile(
        spec: &ReactiveSpec,
        at: &str,
        env: &Env<'_>,
        level: &Level<'_>,
    ) -> Result<Self, FieldError> {
        if spec.specialists.is_empty() {
            return Err(FieldError::new(
                format!("{at}.specialists"),
                "a reactive panel needs at least one specialist",
            ));
        }
        let mut specialists: Vec<Specialist> = Vec::with_capacity(spec.specialists.len());
        for (i, s) in spec.specialists.iter().enumerate() {
            let sat = format!("{at}.specialists[{i}]");
            if s.name.trim().is_empty() {
                return Err(FieldError::new(
                    format!("{sat}.name"),
                    "a specialist needs a name",
                ));
            }
            if specialists.iter().any(|o| o.choice.name == s.name) {
                return Err(FieldError::new(
                    format!("{sat}.name"),
                    format!("specialist name `{}` is used twice", s.name),
                ));
            }
            if s.criteria.trim().is_empty() {
                return Err(FieldError::new(
                    format!("{sat}.criteria"),
                    format!("specialist `{}` needs criteria", s.name),
                ));
            }
            let judge = pointwise(
                env,
                &sat,
                level,
                Some(&s.criteria),
                s.scale,
                s.threshold,
                s.model.as_ref(),
            )?;
            specialists.push(Specialist {
                choice: Choice {
                    name: s.name.clone(),
                    description: s.when.clone().unwrap_or_else(|| s.criteria.clone()),
                },
                judge,
            });
        }
        check_model(&format!("{at}.router_model"), spec.router_model.as_ref())?;
        let mut always = Vec::with_capacity(spec.always.len());
        for (i, name) in spec.always.iter().enumerate() {
            if !specialists.iter().any(|s| &s.choice.name == name) {
                let names: Vec<&str> = specialists.iter().map(|s| s.choice.name.as_str()).collect();
                return Err(FieldError::new(
                    format!("{at}.always[{i}]"),
                    format!(
                        "`{name}` is not a specialist (specialists: {})",
                        names.join(", ")
                    ),
                ));
            }
            always.push(name.clone());
        }
        let dive = spec.deep_dive.clone().unwrap_or_default();
        let deep_dive = pointwise(
            env,
            &format!("{at}.deep_dive"),
            level,
            Some(
                dive.criteria
                    .as_ref()
                    .unwrap_or(&DEEP_DIVE_CRITERIA.to_owned()),
            ),
            spec.scale,
            spec.threshold,
            dive.model.as_ref(),
        )?;
        let all_criteria = spec
            .specialists
            .iter()
            .map(|s| format!("- {}: {}", s.name, s.criteria))
            .collect::<Vec<_>>()
            .join("\n");
        let synthesis_criteria = spec
            .criteria
            .clone()
            .or_else(|| level.criteria.as_ref().map(|(c, _)| (*c).to_owned()))
            .unwrap_or(format!(
                "The answer meets every specialist's criteria:\n{all_criteria}"
            ));
        let synthesis = pointwise(
            env,
            at,
            level,
            Some(&synthesis_criteria),
            spec.scale,
            spec.threshold,
            spec.model.as_ref(),
        )?;
        let bound = |v: Option<f64>, default: f64, name: &str| -> Result<f64, FieldError> {
            let v = v.unwrap_or(default);
            if v.is_finite() && (0.0..=1.0).contains(&v) {
                Ok(v)
            } else {
                Err(FieldError::new(
                    format!("{at}.{name}"),
                    format!("{name} {v} must be between 0 and 1 (scores are normalised to 0-1)"),
                ))
            }
        };
        Ok(Reactive {
            router: env.choice_material(
                ROUTER_QUESTION.to_owned(),
                level,
                spec.router_model.as_ref(),
            ),
            specialists,
            always,
            deep_dive,
            synthesis,
            min_confidence: bound(
                spec.min_confidence,
                DEFAULT_MIN_CONFIDENCE,
                "min_confidence",
            )?,
            max_spread: bound(spec.max_spread, DEFAULT_MAX_SPREAD, "max_spread")?,
        })
    }

    /// The router's and every judge's configuration.
    pub(crate) fn judges(&self, name: &str) -> Vec<crate::JudgeUse> {
        use crate::check::AwaitedCheck as _;
        let mut uses = vec![crate::JudgeUse::of(&self.router, name)];
        for s in &self.specialists {
            uses.extend(s.judge.judges());
        }
        uses.extend(self.deep_dive.judges());
        uses.extend(self.synthesis.judges());
        uses
    }

    /// `reactive [accuracy, safety]`.
    pub(crate) fn name(&self) -> String {
        let names: Vec<String> = self
            .specialists
            .iter()
            .map(|s| s.choice.name.clone())
            .collect();
        format!("{KIND} {}", bracket_list(&names))
    }

    pub(crate) async fn run(
        &self,
        head: VerdictHead<'_>,
        judged: &Judged<'_>,
        rt: &JudgeRuntime<'_>,
        record: &Record,
    ) -> Verdict {
        let options: Vec<Choice> = self.specialists.iter().map(|s| s.choice.clone()).collect();
        let router_head = VerdictHead {
            name: "router",
            kind: KIND,
            round: head.round,
        };
        let routed = match choose(
            &self.router,
            Mode::Many,
            &options,
            "",
            router_head,
            judged,
            rt,
        )
        .await
        {
            Ok(routed) => routed,
            Err(failed) => {
                let mut e = entry("router", &failed);
                e.insert("step".into(), json!("router"));
                record.push(Value::Object(e));
                return stopped(
                    head,
                    &[failed.status],
                    &format!("the router: {}", failed.reason),
                    record.take(),
                );
            }
        };
        let mut routing = routed.evidence.clone();
        routing.insert("step".into(), json!("router"));
        routing.insert("cost_usd".into(), json!(routed.cost_usd));
        record.push(Value::Object(routing));
        let picked: Vec<&Specialist> = self
            .specialists
            .iter()
            .filter(|s| {
                routed.answer.contains(&s.choice.name) || self.always.contains(&s.choice.name)
            })
            .collect();

        let calls = picked.iter().map(|s| {
            let h = VerdictHead {
                name: &s.choice.name,
                kind: s.judge.kind(),
                round: head.round,
            };
            judge_once(&s.judge, h, judged, rt)
        });
        let verdicts = futures::future::join_all(calls).await;
        let mut findings = Vec::new();
        for (s, v) in picked.iter().zip(&verdicts) {
            let mut e = entry(&s.choice.name, v);
            e.insert("step".into(), json!("specialist"));
            e.insert("confidence".into(), json!(confidence(v)));
            record.push(Value::Object(e));
            findings.push(context_line(&s.choice.name, v));
        }
        if let Some((s, v)) = picked.iter().zip(&verdicts).find(|(_, v)| !scored(v)) {
            let statuses: Vec<Status> = verdicts.iter().map(|v| v.status).collect();
            let why = format!("specialist `{}`: {}", s.choice.name, v.reason);
            return stopped(head, &statuses, &why, record.take());
        }

        let why = self.deep_dive_because(&picked, &verdicts);
        if !why.is_empty() {
            let shown = format!(
                "Why this deep dive: {}.\nThe specialists' findings:\n{}",
                why.join("; "),
                findings.join("\n")
            );
            let judge = with_context(&self.deep_dive, &shown);
            let h = VerdictHead {
                name: "deep dive",
                kind: judge.kind(),
                round: head.round,
            };
            let v = judge_once(&judge, h, judged, rt).await;
            let mut e = entry("deep dive", &v);
            e.insert("step".into(), json!("deep_dive"));
            e.insert("because".into(), json!(why));
            record.push(Value::Object(e));
            findings.push(context_line("deep dive", &v));
            if !scored(&v) {
                let why = format!("the deep dive: {}", v.reason);
                return stopped(head, &[v.status], &why, record.take());
            }
        }

        let shown = format!(
            "Findings of the specialists who examined this answer (weigh them, then give your own score):\n{}",
            findings.join("\n")
        );
        let judge = with_context(&self.synthesis, &shown);
        let h = VerdictHead {
            name: "synthesis",
            kind: judge.kind(),
            round: head.round,
        };
        let v = judge_once(&judge, h, judged, rt).await;
        let mut e = entry("synthesis", &v);
        e.insert("step".into(), json!("synthesis"));
        record.push(Value::Object(e));
        let steps = record.take();
        if !scored(&v) {
            return stopped(
                head,
                &[v.status],
                &format!("the synthesis: {}", v.reason),
                steps,
            );
        }
        let names: Vec<String> = picked.iter().map(|s| s.choice.name.clone()).collect();
        let reason = format!(
            "routed to {}; {}; synthesis: {}",
            bracket_list(&names),
            if why.is_empty() {
                "no deep dive".to_owned()
            } else {
                format!("deep dive ({})", why.join("; "))
            },
            v.reason
        );
        let cost = sum_costs(steps_costs(&steps));
        let mut verdict = head.verdict(v.status, reason).with_evidence(json!({
            "panel": KIND,
            "routed_to": names,
            "deep_dive": !why.is_empty(),
            "steps": steps,
        }));
        verdict.score = v.score;
        verdict.threshold = v.threshold;
        verdict.cost_usd = cost;
        verdict
    }

    /// Why a deep dive is needed: unsure specialists, a wide spread; empty when not.
    fn deep_dive_because(&self, picked: &[&Specialist], verdicts: &[Verdict]) -> Vec<String> {
        let mut why: Vec<String> = picked
            .iter()
            .zip(verdicts)
            .filter_map(|(s, v)| {
                confidence(v).filter(|c| *c < self.min_confidence).map(|c| {
                    format!(
                        "`{}` is unsure (score {c:.2} from its threshold)",
                        s.choice.name
                    )
                })
            })
            .collect();
        let scores: Vec<f64> = verdicts.iter().filter_map(|v| v.score).collect();
        if let (Some(lo), Some(hi)) = (
            scores.iter().copied().reduce(f64::min),
            scores.iter().copied().reduce(f64::max),
        ) && hi - lo > self.max_spread
        {
            {
                why.push(format!(
                    "the specialists disagree (scores {lo:.2} to {hi:.2})"
                ));
            }
        }
        why
    }
}

/// A verdict with a score on the agent: pass or fail.
fn scored(v: &Verdict) -> bool {
    matches!(v.status, Status::Pass | Status::Fail) && v.score.is_some()
}

/// How far (0-1) the score is from the threshold; `None` without a score.
fn confidence(v: &Verdict) -> Option<f64> {
    Some((v.score? - v.threshold?).abs())
}

fn steps_costs(steps: &[Value]) -> impl Iterator<Item = Option<f64>> + '_ {
    steps.iter().map(|s| s["cost_usd"].as_f64())
}

/// The panel's verdict when a step gave no score: `skipped` when every step of
/// that stage was skipped (no judge model), else `error`; the steps so far kept.
fn stopped(head: VerdictHead<'_>, statuses: &[Status], why: &str, steps: Vec<Value>) -> Verdict {
    let status = if statuses.iter().all(|s| *s == Status::Skipped) {
        Status::Skipped
    } else {
        Status::Error
    };
    let cost = sum_costs(steps_costs(&steps));
    let mut verdict = head
        .verdict(status, format!("no verdict from {why}"))
        .with_evidence(json!({ "panel": KIND, "steps": steps }));
    verdict.cost_usd = cost;
    verdict
}
