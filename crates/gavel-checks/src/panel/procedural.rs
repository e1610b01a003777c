//! The `procedural` panel: declared stages run in order; each judge stage sees the
//! verdicts and reasons of the stages before it; a failing critical stage stops
//! the pipeline.

use gavel_core::CheckKind;
use gavel_core::panel::ProceduralSpec;
use gavel_core::{CheckSpec, Status, Transcript, Verdict};
use serde_json::{Value, json};

use super::{Record, context_line, entry, judge_once, pointwise, sum_costs, with_context};
use crate::check::AwaitedCheck;
use crate::code::Planned;
use crate::error::FieldError;
use crate::expected::Expected;
use crate::finding::VerdictHead;
use crate::judge::compile::{Compiled, Env, Level, TurnJudge};
use crate::names::bracket_list;
use crate::runtime::JudgeRuntime;
use crate::subject::Judged;
use crate::subject::Scope;

/// The kind of procedural panel verdicts.
pub(crate) const KIND: CheckKind = CheckKind::Procedural;

/// A compiled procedural panel.
pub(crate) struct Procedural {
    stages: Vec<Stage>,
}

struct Stage {
    name: String,
    critical: bool,
    run: StageRun,
}

enum StageRun {
    Code(Planned),
    Judge(Box<TurnJudge>),
}

impl Procedural {
    pub(crate) fn compile(
        spec: &ProceduralSpec,
        at: &str,
        env: &Env<'_>,
        level: &Level<'_>,
        scope: Scope,
        expected: &Expected<'_>,
    ) -> Result<Self, FieldError> {
        if spec.stages.is_empty() {
            return Err(FieldError::new(
                format!("{at}.stages"),
                "a procedural panel needs at least one stage",
            ));
        }
        let mut stages = Vec::with_capacity(spec.stages.len());
        for (i, stage) in spec.stages.iter().enumerate() {
            let sat = format!("{at}.stages[{i}]");
            if stage.name.trim().is_empty() {
                return Err(FieldError::new(
                    format!("{sat}.name"),
                    "a stage needs a name",
                ));
            }
            if spec.stages[..i].iter().any(|s| s.name == stage.name) {
                return Err(FieldError::new(
                    format!("{sat}.name"),
                    format!("stage name `{}` is used twice", stage.name),
                ));
            }
            let run = match (&stage.check, &stage.criteria) {
                (Some(check), None) => {
                    Self::stage_check(check, &format!("{sat}.check"), env, level, scope, expected)?
                }
                (None, Some(criteria)) => StageRun::Judge(Box::new(pointwise(
                    env,
                    &sat,
                    level,
                    Some(criteria),
                    stage.scale,
                    stage.threshold,
                    stage.model.as_ref(),
                )?)),
                _ => {
                    return Err(FieldError::new(
                        sat,
                        format!(
                            "stage `{}` needs exactly one of `check` (a check) or `criteria` (a judge)",
                            stage.name
                        ),
                    ));
                }
            };
            if matches!(run, StageRun::Code(_))
                && (stage.scale.is_some() || stage.threshold.is_some() || stage.model.is_some())
            {
                return Err(FieldError::new(
                    sat,
                    "`scale`, `threshold` and `model` belong to a `criteria` stage; put them on the check",
                ));
            }
            stages.push(Stage {
                name: stage.name.clone(),
                critical: stage.critical,
                run,
            });
        }
        Ok(Procedural { stages })
    }

    fn stage_check(
        check: &CheckSpec,
        at: &str,
        env: &Env<'_>,
        level: &Level<'_>,
        scope: Scope,
        expected: &Expected<'_>,
    ) -> Result<StageRun, FieldError> {
        if let CheckSpec::Judge { .. } | CheckSpec::Rubric { .. } = check {
            return match env.explicit(check, at, level)? {
                Compiled::Turn(j) => Ok(StageRun::Judge(Box::new(j))),
                Compiled::Pairwise(_) | Compiled::SelectBest(_) => Err(FieldError::new(
                    at,
                    "internal error: a stage judge compiled to a comparison",
                )),
            };
        }
        match crate::code::compile(check, expected) {
            Some(Ok((_, compiled))) => Ok(StageRun::Code(Planned::new(scope, compiled))),
            Some(Err(e)) => {
                let field = if e.field.is_empty() {
                    at.to_owned()
                } else {
                    format!("{at}.{}", e.field)
                };
                Err(FieldError::new(field, e.message))
            }
            None => Err(FieldError::new(
                at,
                format!("a `{}` check cannot be a stage", check.kind()),
            )),
        }
    }

    /// The judge configurations of its judged stages.
    pub(crate) fn judges(&self) -> Vec<crate::JudgeUse> {
        use crate::check::AwaitedCheck as _;
        self.stages
            .iter()
            .flat_map(|s| match &s.run {
                StageRun::Judge(j) => j.judges(),
                StageRun::Code(_) => Vec::new(),
            })
            .collect()
    }

    /// `procedural [a, b, c]`.
    pub(crate) fn name(&self) -> String {
        let names: Vec<String> = self.stages.iter().map(|s| s.name.clone()).collect();
        format!("{KIND} {}", bracket_list(&names))
    }

    pub(crate) async fn run(
        &self,
        head: VerdictHead<'_>,
        judged: &Judged<'_>,
        transcript: &Transcript,
        rounds: usize,
        rt: &JudgeRuntime<'_>,
        record: &Record,
    ) -> Verdict {
        let mut done: Vec<(&Stage, Verdict)> = Vec::new();
        let mut context: Vec<String> = Vec::new();
        let mut stopped_at = None;
        for stage in &self.stages {
            let v = match &stage.run {
                StageRun::Code(check) => check.run(transcript, rounds),
                StageRun::Judge(judge) => {
                    let shown = if context.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "Verdicts of the earlier stages of this evaluation, for context (grade only the criteria above):\n{}",
                            context.join("\n")
                        )
                    };
                    let judge = with_context(judge, &shown);
                    let stage_head = VerdictHead {
                        name: &stage.name,
                        kind: judge.kind(),
                        round: head.round,
                    };
                    judge_once(&judge, stage_head, judged, rt).await
                }
            };
            let mut e = entry(&stage.name, &v);
            e.insert("critical".into(), json!(stage.critical));
            record.push(Value::Object(e));
            context.push(context_line(&stage.name, &v));
            let failed = matches!(v.status, Status::Fail | Status::Error);
            done.push((stage, v));
            if stage.critical && failed {
                stopped_at = Some(stage.name.as_str());
                break;
            }
        }
        self.verdict(head, done, stopped_at, record.take())
    }

    fn verdict(
        &self,
        head: VerdictHead<'_>,
        done: Vec<(&Stage, Verdict)>,
        stopped_at: Option<&str>,
        stages: Vec<Value>,
    ) -> Verdict {
        let statuses: Vec<Status> = done.iter().map(|(_, v)| v.status).collect();
        let status = if statuses.contains(&Status::Error) {
            Status::Error
        } else if statuses.contains(&Status::Fail) {
            Status::Fail
        } else if statuses.iter().all(|s| *s == Status::Skipped) {
            Status::Skipped
        } else {
            Status::Pass
        };
        let not_run: Vec<&str> = self.stages[done.len()..]
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        let summary = done
            .iter()
            .map(|(s, v)| format!("{} {}", s.name, v.status))
            .collect::<Vec<_>>()
            .join(", ");
        let mut reason = format!("stages: {summary}");
        if let Some((s, v)) = done
            .iter()
            .find(|(_, v)| v.status == status && status != Status::Pass)
        {
            reason.push_str(&format!("; `{}`: {}", s.name, v.reason));
        }
        if let Some(name) = stopped_at {
            reason.push_str(&format!(
                "; critical stage `{name}` stopped the pipeline ({} not run)",
                not_run.join(", ")
            ));
        }
        let scores: Vec<f64> = done.iter().filter_map(|(_, v)| v.score).collect();
        let cost = sum_costs(done.iter().map(|(_, v)| v.cost_usd));
        let mut verdict = head.verdict(status, reason).with_evidence(json!({
            "panel": KIND,
            "stages": stages,
            "stopped_at": stopped_at,
            "not_run": not_run,
        }));
        if !scores.is_empty() && matches!(status, Status::Pass | Status::Fail) {
            verdict = verdict.with_score(scores.iter().sum::<f64>() / scores.len() as f64, None);
        }
        verdict.cost_usd = cost;
        verdict
    }
}
