//! The `consensus` panel: several judges score; in each round after the first
//! every judge sees the others' scores and reasons; the panel stops when the
//! variance of the scores falls to the bound or after `max_rounds`; the verdict is
//! the median.

use gavel_core::CheckKind;
use gavel_core::panel::ConsensusSpec;
use gavel_core::{CheckSpec, Scale, Status, Verdict};
use serde_json::{Value, json};

use super::{Record, context_line, entry, judge_once, sum_costs, with_context};
use crate::check::AwaitedCheck;
use crate::error::FieldError;
use crate::finding::VerdictHead;
use crate::judge::compile::{Compiled, Env, Level, TurnJudge};
use crate::judge::number;
use crate::names::quoted_list;
use crate::runtime::JudgeRuntime;
use crate::subject::Judged;

/// The kind of consensus panel verdicts.
pub(crate) const KIND: CheckKind = CheckKind::Consensus;

/// Rounds at most when the suite does not say.
const DEFAULT_MAX_ROUNDS: u32 = 3;
/// The variance (of 0-1 scores) under which the judges agree, by default.
const DEFAULT_VARIANCE: f64 = 0.01;

/// A compiled consensus panel.
pub(crate) struct Consensus {
    criteria: String,
    members: Vec<Member>,
    scale: Scale,
    /// Pass threshold for the median, on the scale.
    threshold: f64,
    max_rounds: u32,
    variance: f64,
}

struct Member {
    label: String,
    judge: TurnJudge,
}

impl Consensus {
    /// Every member's judge configuration.
    pub(crate) fn judges(&self) -> Vec<crate::JudgeUse> {
        use crate::check::AwaitedCheck as _;
        self.members.iter().flat_map(|m| m.judge.judges()).collect()
    }

    pub(crate) fn compile(
        spec: &ConsensusSpec,
        at: &str,
        env: &Env<'_>,
        level: &Level<'_>,
    ) -> Result<Self, FieldError> {
        if spec.judges.len() < 2 {
            return Err(FieldError::new(
                format!("{at}.judges"),
                "a consensus panel needs at least two judges",
            ));
        }
        let max_rounds = spec.max_rounds.unwrap_or(DEFAULT_MAX_ROUNDS);
        if max_rounds == 0 {
            return Err(FieldError::new(
                format!("{at}.max_rounds"),
                "max_rounds must be at least 1",
            ));
        }
        let variance = spec.variance.unwrap_or(DEFAULT_VARIANCE);
        if !(variance.is_finite() && variance >= 0.0) {
            return Err(FieldError::new(
                format!("{at}.variance"),
                format!("variance {variance} must be a number of at least 0"),
            ));
        }
        let mut members = Vec::with_capacity(spec.judges.len());
        let mut first: Option<(Scale, f64, String)> = None;
        for (i, member) in spec.judges.iter().enumerate() {
            let mat = format!("{at}.judges[{i}]");
            let judge = CheckSpec::Judge {
                criteria: member.criteria.clone().or_else(|| spec.criteria.clone()),
                scale: spec.scale,
                threshold: spec.threshold,
                model: member.model.clone(),
                reference: None,
                examples: Vec::new(),
            };
            let judge = match env.explicit(&judge, &mat, level)? {
                Compiled::Turn(TurnJudge::Pointwise(j)) => j,
                _ => {
                    return Err(FieldError::new(
                        mat,
                        "internal error: a consensus member is not a pointwise judge",
                    ));
                }
            };
            if first.is_none() {
                first = Some((
                    judge.scale,
                    judge.threshold,
                    judge.material.criteria.clone(),
                ));
            }
            let label = match &member.model {
                Some(model) => format!("judge {} ({model})", i + 1),
                None => format!("judge {}", i + 1),
            };
            members.push(Member {
                label,
                judge: TurnJudge::Pointwise(judge),
            });
        }
        let Some((scale, threshold, criteria)) = first else {
            return Err(FieldError::new(format!("{at}.judges"), "no judges"));
        };
        Ok(Consensus {
            criteria,
            members,
            scale,
            threshold,
            max_rounds,
            variance,
        })
    }

    /// `consensus "<criteria>"`.
    pub(crate) fn name(&self) -> String {
        format!(
            "{KIND} {}",
            quoted_list(std::slice::from_ref(&self.criteria))
        )
    }

    pub(crate) async fn run(
        &self,
        head: VerdictHead<'_>,
        judged: &Judged<'_>,
        rt: &JudgeRuntime<'_>,
        record: &Record,
    ) -> Verdict {
        let mut previous: Vec<Verdict> = Vec::new();
        let mut variances: Vec<f64> = Vec::new();
        let mut cost = None;
        for round in 1..=self.max_rounds {
            let calls = self.members.iter().enumerate().map(|(i, m)| {
                let judge = with_context(&m.judge, &self.others(i, &previous));
                let member_head = VerdictHead {
                    name: &m.label,
                    kind: m.judge.kind(),
                    round: head.round,
                };
                async move { judge_once(&judge, member_head, judged, rt).await }
            });
            let verdicts = futures::future::join_all(calls).await;
            cost = sum_costs(
                [cost]
                    .into_iter()
                    .chain(verdicts.iter().map(|v| v.cost_usd)),
            );
            let scores: Option<Vec<f64>> = verdicts
                .iter()
                .map(|v| {
                    v.score
                        .filter(|_| matches!(v.status, Status::Pass | Status::Fail))
                })
                .collect();
            let var = scores.as_deref().map(variance);
            let judges: Vec<Value> = self
                .members
                .iter()
                .zip(&verdicts)
                .map(|(m, v)| {
                    let mut e = entry(&m.label, v);
                    let raw = v
                        .evidence
                        .score()
                        .and_then(|s| Some(number(s.scale, s.score?)));
                    e.insert("raw_score".into(), raw.unwrap_or(Value::Null));
                    Value::Object(e)
                })
                .collect();
            record.push(json!({
                "round": round,
                "variance": var,
                "judges": judges,
                "cost_usd": sum_costs(verdicts.iter().map(|v| v.cost_usd)),
            }));
            let Some(var) = var else {
                return self.without_scores(head, &verdicts, record.take(), cost);
            };
            variances.push(var);
            previous = verdicts;
            if var <= self.variance {
                break;
            }
        }
        self.verdict(head, &previous, variances, record.take(), cost)
    }

    /// What the other judges said in the last round, for judge `me`; empty in
    /// the first round.
    fn others(&self, me: usize, previous: &[Verdict]) -> String {
        if previous.is_empty() {
            return String::new();
        }
        let lines: Vec<String> = self
            .members
            .iter()
            .zip(previous)
            .enumerate()
            .filter(|(i, _)| *i != me)
            .map(|(_, (m, v))| context_line(&m.label, v))
            .collect();
        format!(
            "Other judges' scores (0-1) and reasons in the previous round; reconsider your own score in their light, and keep it if you still hold it right:\n{}",
            lines.join("\n")
        )
    }

    /// A member gave no score: the panel is `error` (or `skipped` when every
    /// member was skipped).
    fn without_scores(
        &self,
        head: VerdictHead<'_>,
        verdicts: &[Verdict],
        rounds: Vec<Value>,
        cost: Option<f64>,
    ) -> Verdict {
        let status = if verdicts.iter().all(|v| v.status == Status::Skipped) {
            Status::Skipped
        } else {
            Status::Error
        };
        let (label, why) = self
            .members
            .iter()
            .zip(verdicts)
            .find(|(_, v)| !matches!(v.status, Status::Pass | Status::Fail))
            .map(|(m, v)| (m.label.as_str(), v.reason.as_str()))
            .unwrap_or(("a judge", "no score"));
        let mut v = head
            .verdict(status, format!("{label} gave no score: {why}"))
            .with_evidence(json!({ "panel": KIND, "rounds": rounds }));
        v.cost_usd = cost;
        v
    }

    fn verdict(
        &self,
        head: VerdictHead<'_>,
        last: &[Verdict],
        variances: Vec<f64>,
        rounds: Vec<Value>,
        cost: Option<f64>,
    ) -> Verdict {
        let scores: Vec<f64> = last.iter().filter_map(|v| v.score).collect();
        let median = median(&scores);
        let threshold = self.scale.normalise(self.threshold);
        let converged = variances.last().is_some_and(|v| *v <= self.variance);
        let status = if median >= threshold {
            Status::Pass
        } else {
            Status::Fail
        };
        let shown: Vec<String> = variances.iter().map(|v| format!("{v:.4}")).collect();
        let mut reason = format!(
            "median {median:.2} (threshold {threshold:.2}) after {} round(s); variance per round: {}; {}",
            variances.len(),
            shown.join(" → "),
            if converged {
                format!("the judges agree (variance ≤ {})", self.variance)
            } else {
                format!("no agreement within {} rounds", self.max_rounds)
            }
        );
        if let Some(first) = last.first() {
            reason.push_str(&format!("; {}: {}", self.members[0].label, first.reason));
        }
        let mut v = head
            .verdict(status, reason)
            .with_score(median, Some(threshold))
            .with_evidence(json!({
                "panel": KIND,
                "rounds": rounds,
                "variances": variances,
                "converged": converged,
                "variance_bound": self.variance,
                "median": median,
            }));
        v.cost_usd = cost;
        v
    }
}

/// Population variance.
fn variance(scores: &[f64]) -> f64 {
    if scores.is_empty() {
        return 0.0;
    }
    let n = scores.len() as f64;
    let mean = scores.iter().sum::<f64>() / n;
    scores.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / n
}

/// The median (the mean of the middle two for an even count).
fn median(scores: &[f64]) -> f64 {
    let mut sorted = scores.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::{median, variance};

    #[test]
    fn median_and_variance() {
        assert_eq!(median(&[0.2, 1.0, 0.6]), 0.6);
        assert_eq!(median(&[0.0, 1.0, 0.5, 0.75]), 0.625);
        assert_eq!(variance(&[0.0, 1.0]), 0.25);
        assert_eq!(variance(&[0.5, 0.5, 0.5]), 0.0);
    }
}
