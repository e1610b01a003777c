//! `query_evaluations`: stored verdicts and human labels, filtered, listed a
//! page at a time or aggregated per group.
//!
//! Aggregates are computed here, in Rust, from the matching evaluations read in
//! one bounded query (at most [`MAX_SCAN`] rows) and folded into their groups as
//! they stream in (only each group's scores are held): percentiles interpolate
//! between ranks ([`gavel_stats::percentile_sorted`]), the same on SQLite and
//! PostgreSQL.

use std::collections::BTreeMap;

use gavel_store::{Evaluation, EvaluationFilter, Page, Store};
use serde::Serialize;

use crate::args::{self, Aggregation, Field, QueryArgs};
use crate::cursor::{self, Cursor};
use crate::{ToolError, runs};

/// The most evaluations one aggregation reads; past it the caller must narrow
/// the filters.
pub const MAX_SCAN: u64 = 200_000;

const TOOL: &str = "query_evaluations";

/// What `query_evaluations` answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum QueryResult {
    /// Without `aggregation`: the evaluations themselves.
    Listing(Listing),
    /// With `aggregation`: one value per group.
    Aggregated(Aggregated),
}

/// A page of matching evaluations.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Listing {
    /// The evaluations, newest first.
    pub evaluations: Vec<EvaluationOut>,
    /// Pass it as `cursor` for the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// One evaluation as shown to clients.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvaluationOut {
    /// The run id.
    pub run: String,
    /// The run's suite.
    pub suite: String,
    /// The target (agent) name.
    pub target: String,
    /// The case id.
    pub case: String,
    /// The case's tags.
    pub tags: Vec<String>,
    /// The check (evaluation) name, or a human label's label set.
    pub check: String,
    /// The check kind, or `label`.
    pub kind: String,
    /// llm, human, rule or classifier.
    pub evaluator_type: gavel_store::EvaluatorType,
    /// pass, fail, error or skipped; absent for a label that is neither pass nor fail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<gavel_core::Status>,
    /// The score, 0..=1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// The judging model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// When (the execution's start, or the label's time).
    pub at: String,
    /// The labeller of a human label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub labeller: Option<String>,
}

/// Aggregated evaluations.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Aggregated {
    /// The aggregation applied.
    pub aggregation: Aggregation,
    /// The grouping fields.
    pub group_by: Vec<Field>,
    /// Evaluations that matched the filters.
    pub matched: usize,
    /// One page of groups, ordered by key.
    pub groups: Vec<Group>,
    /// Pass it as `cursor` for the next page of groups.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// One group's aggregate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    /// The group's value of each `group_by` field (null: the field is unset).
    pub key: BTreeMap<&'static str, Option<String>>,
    /// The aggregate; null when no evaluation of the group has a score (or,
    /// for `pass_rate`, none passed or failed).
    pub value: Option<f64>,
    /// Evaluations in the group.
    pub count: usize,
    /// Of those, evaluations with a score.
    pub scored: usize,
}

/// Answers `query_evaluations`.
pub async fn query_evaluations(store: &Store, args: QueryArgs) -> Result<QueryResult, ToolError> {
    let limit = args::limit(args.limit)?;
    let cursor = Cursor::decode(TOOL, args.cursor.as_deref())?;
    let filter = filter(store, &args).await?;
    let Some(aggregation) = args.aggregation else {
        if !args.group_by.is_empty() {
            return Err(ToolError::field(
                "group_by",
                "needs an `aggregation` (avg, min, max, p50, p95, p99, count or pass_rate)",
            ));
        }
        let page = store
            .evaluations(
                &filter,
                Page {
                    offset: cursor.offset,
                    limit: u64::from(limit),
                },
            )
            .await?;
        return Ok(QueryResult::Listing(Listing {
            evaluations: page.evaluations.into_iter().map(shown).collect(),
            next_cursor: cursor::next(TOOL, cursor.offset, page.scanned as usize, page.more),
        }));
    };
    let mut group_by = args.group_by.clone();
    let mut seen = std::collections::HashSet::new();
    group_by.retain(|f| seen.insert(*f));
    let mut groups = Groups::default();
    let mut matched = 0;
    let scanned = store
        .each_evaluation(&filter, MAX_SCAN + 1, |e| {
            matched += 1;
            groups.add(&e, &group_by);
        })
        .await?;
    if scanned > MAX_SCAN {
        return Err(ToolError::Invalid {
            field: None,
            message: format!(
                "more than {MAX_SCAN} evaluations match; narrow the filters (run, suite, since, until…)"
            ),
        });
    }
    let all = groups.finish(aggregation, &group_by);
    let total = all.len();
    let start = usize::try_from(cursor.offset)
        .unwrap_or(usize::MAX)
        .min(total);
    let groups: Vec<Group> = all.into_iter().skip(start).take(limit as usize).collect();
    let more = start + groups.len() < total;
    Ok(QueryResult::Aggregated(Aggregated {
        aggregation,
        next_cursor: cursor::next(TOOL, cursor.offset, groups.len(), more),
        group_by,
        matched,
        groups,
    }))
}

/// The store filter of the arguments, runs resolved and times normalised.
async fn filter(store: &Store, args: &QueryArgs) -> Result<EvaluationFilter, ToolError> {
    let run_id = match &args.run {
        Some(run) => Some(runs::find(store, "run", run).await?.id),
        None => None,
    };
    let since = args
        .since
        .as_deref()
        .map(|t| args::time_bound("since", t))
        .transpose()?;
    let until = args
        .until
        .as_deref()
        .map(|t| args::time_bound("until", t))
        .transpose()?;
    Ok(EvaluationFilter {
        suite: args.suite.clone(),
        run_id,
        target: args.target.clone(),
        case_id: args.case.clone(),
        tag: args.tag.clone(),
        check: args.check.clone(),
        kind: args.kind.clone(),
        evaluator: args.evaluator_type,
        status: args.status,
        model: args.model.clone(),
        since,
        until,
    })
}

/// What one group has gathered.
#[derive(Default)]
struct Acc {
    scores: Vec<f64>,
    count: usize,
    passed: usize,
    failed: usize,
}

/// Evaluations gathered into groups one at a time (none is kept): their
/// scores and counts by group key.
#[derive(Default)]
struct Groups(BTreeMap<Vec<Option<String>>, Acc>);

impl Groups {
    /// Counts `e` in its groups by `group_by`.
    fn add(&mut self, e: &Evaluation, group_by: &[Field]) {
        for key in keys(e, group_by) {
            let acc = self.0.entry(key).or_default();
            acc.count += 1;
            acc.scores.extend(e.score);
            match e.status {
                Some(gavel_core::Status::Pass) => acc.passed += 1,
                Some(gavel_core::Status::Fail) => acc.failed += 1,
                _ => {}
            }
        }
    }

    /// Each group's aggregate, groups in key order.
    fn finish(self, aggregation: Aggregation, group_by: &[Field]) -> Vec<Group> {
        self.0
            .into_iter()
            .map(|(key, mut acc)| {
                acc.scores.sort_by(f64::total_cmp);
                let scores = &acc.scores;
                let value = match aggregation {
                    Aggregation::Avg => gavel_stats::mean(scores),
                    Aggregation::Min => scores.first().copied(),
                    Aggregation::Max => scores.last().copied(),
                    Aggregation::P50 => gavel_stats::percentile_sorted(scores, 50.0),
                    Aggregation::P95 => gavel_stats::percentile_sorted(scores, 95.0),
                    Aggregation::P99 => gavel_stats::percentile_sorted(scores, 99.0),
                    Aggregation::Count => Some(acc.count as f64),
                    Aggregation::PassRate => {
                        let decided = acc.passed + acc.failed;
                        (decided > 0).then(|| acc.passed as f64 / decided as f64)
                    }
                };
                Group {
                    key: group_by.iter().map(|f| f.name()).zip(key).collect(),
                    value,
                    count: acc.count,
                    scored: scores.len(),
                }
            })
            .collect()
    }
}

/// The group keys of one evaluation: one, or one per tag when grouped by tag.
fn keys(e: &Evaluation, group_by: &[Field]) -> Vec<Vec<Option<String>>> {
    let mut keys: Vec<Vec<Option<String>>> = vec![Vec::with_capacity(group_by.len())];
    for field in group_by {
        let values: Vec<Option<String>> = match field {
            Field::Tag if e.tags.is_empty() => vec![None],
            Field::Tag => e.tags.iter().cloned().map(Some).collect(),
            Field::Suite => vec![Some(e.suite.clone())],
            Field::Run => vec![Some(e.run_id.clone())],
            Field::Target => vec![Some(e.target.clone())],
            Field::Case => vec![Some(e.case_id.clone())],
            Field::Check => vec![Some(e.check.clone())],
            Field::Kind => vec![Some(e.kind.clone())],
            Field::EvaluatorType => vec![Some(e.evaluator.as_str().to_owned())],
            Field::Status => vec![e.status.map(|s| s.as_str().to_owned())],
            Field::Model => vec![e.model.clone()],
        };
        keys = keys
            .into_iter()
            .flat_map(|key| {
                values.iter().map(move |v| {
                    let mut k = key.clone();
                    k.push(v.clone());
                    k
                })
            })
            .collect();
    }
    keys
}

fn shown(e: Evaluation) -> EvaluationOut {
    EvaluationOut {
        run: e.run_id,
        suite: e.suite,
        target: e.target,
        case: e.case_id,
        tags: e.tags,
        check: e.check,
        kind: e.kind,
        evaluator_type: e.evaluator,
        status: e.status,
        score: e.score,
        model: e.model,
        at: e.at,
        labeller: e.labeller,
    }
}
