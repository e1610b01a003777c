//! Drift: pass rate and mean score over time, per suite, tag, target and judge
//! model, from stored runs.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use gavel_core::{Execution, Outcome, RunRecord, TagStats};
use serde::Serialize;

/// One group's figures in one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrendPoint {
    /// The run id.
    pub run_id: String,
    /// When the run started.
    pub started_at: String,
    /// The run's suite.
    pub suite: String,
    /// `overall`, `tag`, `target` or `judge` (the judge model).
    pub dimension: &'static str,
    /// The tag, target or judge model (`*` for overall).
    pub key: String,
    /// Outcomes counted.
    pub total: usize,
    /// Percent passed over decided outcomes.
    pub pass_rate: Option<f64>,
    /// Mean score, 0..=1.
    pub mean_score: Option<f64>,
}

/// Points over runs, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Trend {
    /// Every group of every run.
    pub points: Vec<TrendPoint>,
}

/// The judge models whose verdicts an outcome carries.
fn judge_models(o: &Outcome) -> Vec<String> {
    let mut models: Vec<String> = o
        .executions
        .iter()
        .flat_map(|e| &e.verdicts)
        .filter(|v| matches!(v.kind.as_str(), "judge" | "rubric" | "pairwise"))
        .filter_map(|v| v.evidence.model.clone())
        .collect();
    models.sort();
    models.dedup();
    models
}

impl Trend {
    /// The trend of these runs (any order; sorted by start time).
    pub fn new(mut runs: Vec<(RunRecord, Vec<Execution>)>) -> Trend {
        runs.sort_by(|a, b| {
            a.0.started_at
                .cmp(&b.0.started_at)
                .then(a.0.id.cmp(&b.0.id))
        });
        let mut points = Vec::new();
        for (run, executions) in runs {
            let outcomes = Outcome::group(executions);
            let mut groups: BTreeMap<(&'static str, String), Vec<&Outcome>> = BTreeMap::new();
            for o in &outcomes {
                groups.entry(("overall", "*".into())).or_default().push(o);
                for tag in &o.tags {
                    groups.entry(("tag", tag.clone())).or_default().push(o);
                }
                groups
                    .entry(("target", o.target.clone()))
                    .or_default()
                    .push(o);
                for model in judge_models(o) {
                    groups.entry(("judge", model)).or_default().push(o);
                }
            }
            for ((dimension, key), members) in groups {
                let stats = TagStats::of(members.iter().copied());
                points.push(TrendPoint {
                    run_id: run.id.clone(),
                    started_at: run.started_at.clone(),
                    suite: run.suite.clone(),
                    dimension,
                    key,
                    total: stats.total,
                    pass_rate: stats.pass_rate,
                    mean_score: stats.average_score,
                });
            }
        }
        Trend { points }
    }

    /// One line per group, its runs oldest to newest: `pass rate / mean score`.
    pub fn text(&self) -> String {
        let mut series: BTreeMap<(&str, &str, &str), Vec<&TrendPoint>> = BTreeMap::new();
        for p in &self.points {
            series
                .entry((p.suite.as_str(), p.dimension, p.key.as_str()))
                .or_default()
                .push(p);
        }
        let mut out = String::new();
        let _ = writeln!(out, "trend (oldest → newest; pass rate % / mean score):");
        for ((suite, dimension, key), points) in series {
            let cells: Vec<String> = points
                .iter()
                .map(|p| {
                    format!(
                        "{}/{}",
                        p.pass_rate.map_or("-".into(), |r| format!("{r:.0}")),
                        p.mean_score.map_or("-".into(), |s| format!("{s:.2}"))
                    )
                })
                .collect();
            let _ = writeln!(out, "  {suite} {dimension} {key}: {}", cells.join("  "));
        }
        out
    }
}
