//! Running a judge over labelled items.

use futures::StreamExt;
use gavel_checks::{JudgeRuntime, JudgeTemplate, PairwiseInput, PairwiseSpec, TemplateKind};
use gavel_core::judge::PairwiseAgainst;
use gavel_core::{
    Case, Favoured, JudgeSettings, PairwiseOrder, Scale, Status, Transcript, Turn, Verdict,
};
use serde::Serialize;
use serde_json::json;

use crate::{Record, ScaleSpec, Task};

/// What judges the items.
#[derive(Debug, Clone)]
pub enum Judge {
    /// gavel's own judges through a model: the pointwise `judge` (scale `1-5` on
    /// Likert sets; on binary sets as the suite's judges grade, see
    /// [`pointwise_scale`], pass/fail as the verdict's status; the record's criterion, reference and context
    /// shown) and `pairwise` (both orders). The settings' template overrides
    /// apply. `model`: the model id, `None` for the runtime's default.
    Model {
        /// The model id.
        model: Option<String>,
        /// Judge settings (templates, temperature, token cap).
        settings: Box<JudgeSettings>,
    },
    /// A baseline that prefers length, to see how far length alone goes (and to
    /// check the statistics against an independent computation). Pairwise: the
    /// longer response in characters when A is shown first, in words (runs of
    /// non-ASCII-whitespace) when B is; orders that disagree are `inconsistent`. Binary:
    /// pass from 20 words up. Likert: 1 + words / 25 (integer division), at most 5.
    Length,
}

/// The judge's verdict on one item.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ItemVerdict {
    /// `A`/`B`/`tie` (`inconsistent` when the two presentation orders
    /// disagree) or `pass`/`fail`; `None` on Likert sets and on errors.
    pub label: Option<String>,
    /// The score on the item's scale (1-5; 1/0 for pass/fail); `None` on pairwise
    /// sets and on errors.
    pub score: Option<f64>,
    /// Pairwise: the verdict of each presentation order, mapped back to the stored
    /// order (`A`, `B` or `tie`).
    pub orders: Option<[String; 2]>,
    /// Why there is no verdict (the judge errored or was skipped).
    pub error: Option<String>,
    /// The judge's reasoning.
    pub reasoning: Option<String>,
    /// What the calls cost, when priced.
    pub cost_usd: Option<f64>,
}

impl ItemVerdict {
    fn failed(reason: String, cost_usd: Option<f64>) -> Self {
        ItemVerdict {
            label: None,
            score: None,
            orders: None,
            error: Some(reason),
            reasoning: None,
            cost_usd,
        }
    }
}

/// The verdict on a pair whose two presentation orders disagree: a category of
/// its own, which agrees with no human label (not even `tie`).
pub(crate) const INCONSISTENT: &str = "inconsistent";

/// Judges every record, `concurrency` at a time; the verdicts are in record order.
pub async fn judge_all(
    judge: &Judge,
    records: &[Record],
    rt: &JudgeRuntime<'_>,
    concurrency: usize,
) -> Vec<ItemVerdict> {
    judge_within(judge, records, rt, concurrency, None).await
}

/// [`judge_all`] within a budget: once the verdicts so far cost `max_cost`
/// dollars, no further item is started (those in flight, at most
/// `concurrency`, finish) and the rest are abstentions saying so.
pub async fn judge_within(
    judge: &Judge,
    records: &[Record],
    rt: &JudgeRuntime<'_>,
    concurrency: usize,
    max_cost: Option<f64>,
) -> Vec<ItemVerdict> {
    let spent = std::cell::Cell::new(0.0_f64);
    let mut verdicts: Vec<ItemVerdict> = futures::stream::iter(records)
        .take_while(|_| futures::future::ready(max_cost.is_none_or(|max| spent.get() < max)))
        .map(|r| async {
            let v = judge_one(judge, r, rt).await;
            spent.set(spent.get() + v.cost_usd.unwrap_or(0.0));
            v
        })
        .buffered(concurrency.max(1))
        .collect()
        .await;
    let budget = max_cost.unwrap_or_default();
    verdicts.resize_with(records.len(), || {
        ItemVerdict::failed(
            format!("skipped: the --max-cost budget of ${budget} was spent"),
            None,
        )
    });
    verdicts
}

async fn judge_one(judge: &Judge, record: &Record, rt: &JudgeRuntime<'_>) -> ItemVerdict {
    match (judge, record.task) {
        (Judge::Length, Task::Pairwise) => length_pairwise(record),
        (Judge::Length, Task::Pointwise) => length_pointwise(record),
        (Judge::Model { model, settings }, Task::Pairwise) => {
            model_pairwise(model, settings, record, rt).await
        }
        (Judge::Model { model, settings }, Task::Pointwise) => {
            model_pointwise(model, settings, record, rt).await
        }
    }
}

fn words(text: &str) -> usize {
    text.split_ascii_whitespace().count()
}

fn prefer(a: usize, b: usize) -> &'static str {
    match a.cmp(&b) {
        std::cmp::Ordering::Greater => "A",
        std::cmp::Ordering::Less => "B",
        std::cmp::Ordering::Equal => "tie",
    }
}

fn pairwise_verdict(
    first: &str,
    second: &str,
    reasoning: Option<String>,
    cost: Option<f64>,
) -> ItemVerdict {
    let label = if first == second { first } else { INCONSISTENT };
    ItemVerdict {
        label: Some(label.to_owned()),
        score: None,
        orders: Some([first.to_owned(), second.to_owned()]),
        error: None,
        reasoning,
        cost_usd: cost,
    }
}

fn length_pairwise(record: &Record) -> ItemVerdict {
    let a = record.response_a.as_deref().unwrap_or_default();
    let b = record.response_b.as_deref().unwrap_or_default();
    let first = prefer(a.chars().count(), b.chars().count());
    let second = prefer(words(a), words(b));
    pairwise_verdict(first, second, None, Some(0.0))
}

fn length_pointwise(record: &Record) -> ItemVerdict {
    let n = words(record.response.as_deref().unwrap_or_default());
    let (label, score) = match record.scale {
        ScaleSpec::Likert { .. } => (None, (1 + n / 25).min(5) as f64),
        _ if n >= 20 => (Some("pass".to_owned()), 1.0),
        _ => (Some("fail".to_owned()), 0.0),
    };
    ItemVerdict {
        label,
        score: Some(score),
        orders: None,
        error: None,
        reasoning: Some(format!("{n} words")),
        cost_usd: Some(0.0),
    }
}

/// The scale and threshold a model judges a pointwise record with: 1-5 on
/// Likert sets (scores are compared, so any threshold: `None`), else as the
/// suite's own judges grade: its `judge.scale` (default 0-1) at that scale's
/// default threshold.
pub fn pointwise_scale(scale: &ScaleSpec, settings: &JudgeSettings) -> (Scale, Option<f64>) {
    match scale {
        ScaleSpec::Likert { .. } => (Scale::OneToFive, None),
        _ => {
            let scale = settings.scale.unwrap_or(Scale::ZeroToOne);
            (scale, Some(scale.default_threshold()))
        }
    }
}

/// Why a verdict gave no grade.
fn no_grade(v: &Verdict) -> Option<String> {
    match v.status {
        Status::Error | Status::Skipped => Some(format!("{}: {}", v.status, v.reason)),
        Status::Pass | Status::Fail => None,
    }
}

async fn model_pairwise(
    model: &Option<String>,
    settings: &JudgeSettings,
    record: &Record,
    rt: &JudgeRuntime<'_>,
) -> ItemVerdict {
    let mut spec = PairwiseSpec::new(PairwiseAgainst {
        target: Some("response B".into()),
        run: None,
    });
    let kind = TemplateKind::Pairwise;
    if let Some(path) = settings.templates.get(kind.as_str()) {
        match JudgeTemplate::from_file(kind, path) {
            Ok(template) => spec.template = template,
            Err(e) => {
                let reason = format!("error: judge.templates.pairwise {path}: {e}");
                return ItemVerdict::failed(reason, None);
            }
        }
    }
    spec.model.clone_from(model);
    spec.criteria = Some(record.criterion.clone());
    let input = PairwiseInput {
        prompt: &record.input,
        output: record.response_a.as_deref().unwrap_or_default(),
        other: record.response_b.as_deref().unwrap_or_default(),
        other_label: "response B",
        criteria: &record.criterion,
    };
    let v = gavel_checks::pairwise(&spec, &input, rt).await;
    if let Some(reason) = no_grade(&v) {
        return ItemVerdict::failed(reason, v.cost_usd);
    }
    let as_label = |order: &PairwiseOrder| match order.favoured {
        Favoured::Output => "A",
        Favoured::Other => "B",
        Favoured::Neither => "tie",
    };
    let orders = v.evidence.pairwise().map(|p| p.orders.as_slice());
    let (first, second) = match orders {
        Some([o1, o2]) => (as_label(o1), as_label(o2)),
        // Identical answers: a tie without a call, the same in both orders.
        _ => ("tie", "tie"),
    };
    pairwise_verdict(first, second, Some(v.reason.clone()), v.cost_usd)
}

async fn model_pointwise(
    model: &Option<String>,
    settings: &JudgeSettings,
    record: &Record,
    rt: &JudgeRuntime<'_>,
) -> ItemVerdict {
    let (scale, _) = pointwise_scale(&record.scale, settings);
    let check = json!({"type": "judge", "criteria": record.criterion, "model": model, "scale": scale.as_str()});
    let case = json!({
        "id": record.id,
        "input": record.input,
        "context": record.context,
        "expected_output": record.reference,
        "checks": [check],
    });
    let plan = serde_json::from_value::<Case>(case)
        .map_err(|e| e.to_string())
        .and_then(|case| gavel_checks::compile(&case, settings).map_err(|e| e.to_string()));
    let plan = match plan {
        Ok(plan) => plan,
        Err(e) => return ItemVerdict::failed(format!("error: cannot build the judge: {e}"), None),
    };
    let transcript = Transcript {
        session_id: record.id.clone(),
        turns: vec![Turn {
            input: record.input.clone(),
            output: record.response.clone().unwrap_or_default(),
            ..Turn::default()
        }],
    };
    let verdicts = plan.run(&transcript, rt).await;
    let Some(v) = verdicts
        .iter()
        .find(|v| v.kind == gavel_core::CheckKind::Judge)
    else {
        return ItemVerdict::failed("error: the judge gave no verdict".into(), None);
    };
    if let Some(reason) = no_grade(v) {
        return ItemVerdict::failed(reason, v.cost_usd);
    }
    let Some(score) = v.evidence.score().and_then(|s| s.score) else {
        return ItemVerdict::failed("error: the judge's verdict has no score".into(), v.cost_usd);
    };
    let label = match record.scale {
        ScaleSpec::Likert { .. } => None,
        _ if v.status == Status::Pass => Some("pass".to_owned()),
        _ => Some("fail".to_owned()),
    };
    ItemVerdict {
        label,
        score: Some(score),
        orders: None,
        error: None,
        reasoning: Some(v.reason.clone()),
        cost_usd: v.cost_usd,
    }
}
