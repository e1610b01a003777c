//! Run-to-run comparison: regressions, fixes, score, cost and latency deltas,
//! and a paired significance test where the data allow one.
//!
//! Outcomes are matched by (case, target). A regression is an outcome that passed
//! in run A and fails in run B; a fix the reverse. Outcomes that errored or were
//! skipped on either side are listed as not comparable, never as regressions.
//! The significance note uses the Wilcoxon signed-rank test on the matched
//! outcomes' mean scores (per-case means over repeats, so repeats make it
//! sharper) and the exact sign test (McNemar) on fixes against regressions.

use std::collections::HashMap;
use std::fmt::Write as _;

use gavel_core::{Case, Execution, Outcome, RunRecord, Status};
use gavel_stats::PairedTest;
use serde::Serialize;

/// Below this p-value a difference is called significant.
pub const SIGNIFICANCE: f64 = 0.05;

/// What happened to one (case, target) between the runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    /// Passed in A, fails in B.
    Regression,
    /// Failed in A, passes in B.
    Fix,
    /// The same decided status in both.
    Unchanged,
    /// Errored or skipped in one run or both: no verdict to compare.
    NotComparable,
    /// Only in run A.
    OnlyInA,
    /// Only in run B.
    OnlyInB,
}

/// One side of a matched outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Side {
    /// The combined status over repeats.
    pub status: Status,
    /// Mean score over repeats, 0..=1.
    pub score: Option<f64>,
    /// Share of repeats that passed.
    pub pass_rate: f64,
    /// Repeats.
    pub repeats: usize,
    /// Summed cost in US dollars, when known.
    pub cost_usd: Option<f64>,
    /// Mean execution time in milliseconds.
    pub duration_ms: f64,
}

impl Side {
    fn of(o: &Outcome) -> Side {
        let costs: Vec<f64> = o
            .executions
            .iter()
            .filter_map(Execution::cost_usd)
            .collect();
        let durations: Vec<f64> = o.executions.iter().map(|e| e.duration_ms as f64).collect();
        Side {
            status: o.status,
            score: o.score,
            pass_rate: o.pass_rate,
            repeats: o.executions.len(),
            cost_usd: (!costs.is_empty()).then(|| costs.iter().sum()),
            duration_ms: gavel_stats::mean(&durations).unwrap_or(0.0),
        }
    }
}

/// One (case, target) in either run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseChange {
    /// The case id.
    pub case_id: String,
    /// The target.
    pub target: String,
    /// What changed.
    pub change: Change,
    /// Run A's side.
    pub a: Option<Side>,
    /// Run B's side.
    pub b: Option<Side>,
    /// B's mean score minus A's.
    pub score_delta: Option<f64>,
}

/// Totals of one run over the outcomes both runs have.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Totals {
    /// Summed cost, when any is known.
    pub cost_usd: Option<f64>,
    /// Mean execution time in milliseconds.
    pub duration_ms: Option<f64>,
    /// Mean score.
    pub score: Option<f64>,
}

/// Two runs compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Run A's id (the baseline).
    pub run_a: String,
    /// Run B's id (the candidate).
    pub run_b: String,
    /// Every (case, target), regressions first.
    pub cases: Vec<CaseChange>,
    /// Passed in A, fail in B.
    pub regressions: usize,
    /// Failed in A, pass in B.
    pub fixes: usize,
    /// Run A over the matched outcomes.
    pub totals_a: Totals,
    /// Run B over the matched outcomes.
    pub totals_b: Totals,
    /// Wilcoxon signed-rank test on matched mean scores (B − A).
    pub score_test: Option<PairedTest>,
    /// Exact sign test on fixes against regressions.
    pub flip_test: Option<PairedTest>,
    /// The significance note, in words.
    pub significance: String,
}

impl Comparison {
    /// Compares run B's executions with run A's. Each run's case snapshot
    /// decides its robustness cases (by mean and spread, not run by run).
    pub fn new(
        a: &RunRecord,
        a_executions: Vec<Execution>,
        a_cases: &[Case],
        b: &RunRecord,
        b_executions: Vec<Execution>,
        b_cases: &[Case],
    ) -> Comparison {
        let decided = |executions, snapshot: &[Case]| {
            let mut outcomes = Outcome::group(executions);
            let positions = crate::case_positions(snapshot);
            crate::robust::decide(&mut outcomes, |id| snapshot.get(*positions.get(id)?));
            outcomes
        };
        let outcomes_a = decided(a_executions, a_cases);
        let a_positions: HashMap<(&str, &str), usize> = outcomes_a
            .iter()
            .enumerate()
            .map(|(i, oa)| ((oa.case_id.as_str(), oa.target.as_str()), i))
            .collect();
        let mut matched_b: Vec<Option<Outcome>> = outcomes_a.iter().map(|_| None).collect();
        let mut only_in_b = Vec::new();
        for ob in decided(b_executions, b_cases) {
            match a_positions.get(&(ob.case_id.as_str(), ob.target.as_str())) {
                Some(&i) => matched_b[i] = Some(ob),
                None => only_in_b.push(ob),
            }
        }
        let mut cases = Vec::new();
        for (oa, ob) in outcomes_a.iter().zip(&matched_b) {
            cases.push(change(oa, ob.as_ref()));
        }
        for ob in &only_in_b {
            cases.push(CaseChange {
                case_id: ob.case_id.clone(),
                target: ob.target.clone(),
                change: Change::OnlyInB,
                a: None,
                b: Some(Side::of(ob)),
                score_delta: None,
            });
        }
        cases.sort_by_key(|c| match c.change {
            Change::Regression => 0,
            Change::Fix => 1,
            Change::NotComparable => 2,
            Change::OnlyInA | Change::OnlyInB => 3,
            Change::Unchanged => 4,
        });
        let count = |k: Change| cases.iter().filter(|c| c.change == k).count();
        let (regressions, fixes) = (count(Change::Regression), count(Change::Fix));
        let deltas: Vec<f64> = cases.iter().filter_map(|c| c.score_delta).collect();
        let score_test = gavel_stats::wilcoxon(&deltas);
        let flip_test = gavel_stats::sign_test(fixes as u64, regressions as u64);
        let matched: Vec<(&Side, &Side)> = cases
            .iter()
            .filter_map(|c| Some((c.a.as_ref()?, c.b.as_ref()?)))
            .collect();
        let repeats = matched
            .iter()
            .map(|(a, b)| a.repeats.min(b.repeats))
            .min()
            .unwrap_or(0);
        Comparison {
            run_a: a.id.clone(),
            run_b: b.id.clone(),
            regressions,
            fixes,
            totals_a: totals(matched.iter().map(|(a, _)| *a)),
            totals_b: totals(matched.iter().map(|(_, b)| *b)),
            significance: significance(score_test.as_ref(), flip_test.as_ref(), repeats),
            score_test,
            flip_test,
            cases,
        }
    }

    /// The comparison for people.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "compare {} (A) → {} (B)", self.run_a, self.run_b);
        let _ = writeln!(
            out,
            "  {} regression{}, {} fix{}",
            self.regressions,
            gavel_core::plural(self.regressions),
            self.fixes,
            if self.fixes == 1 { "" } else { "es" }
        );
        for c in &self.cases {
            let word = match c.change {
                Change::Regression => "REGRESSION",
                Change::Fix => "fix",
                Change::NotComparable => "not comparable",
                Change::OnlyInA => "only in A",
                Change::OnlyInB => "only in B",
                Change::Unchanged => continue,
            };
            let status =
                |s: &Option<Side>| s.as_ref().map_or("-".to_owned(), |s| s.status.to_string());
            let _ = write!(
                out,
                "  {word:<14} {} [{}]: {} → {}",
                c.case_id,
                c.target,
                status(&c.a),
                status(&c.b)
            );
            if let Some(d) = c.score_delta {
                let _ = write!(out, " (score {d:+.3})");
            }
            out.push('\n');
        }
        let num = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or("n/a".to_owned(), f);
        let money = |v: f64| format!("${v:.4}");
        let ms = |v: f64| format!("{v:.0} ms");
        let score = |v: f64| format!("{v:.3}");
        for (what, a, b, f) in [
            (
                "mean score",
                self.totals_a.score,
                self.totals_b.score,
                &score as &dyn Fn(f64) -> String,
            ),
            (
                "cost",
                self.totals_a.cost_usd,
                self.totals_b.cost_usd,
                &money,
            ),
            (
                "mean duration",
                self.totals_a.duration_ms,
                self.totals_b.duration_ms,
                &ms,
            ),
        ] {
            let delta = match (a, b) {
                (Some(a), Some(b)) => format!(" ({:+.3})", b - a),
                _ => String::new(),
            };
            let _ = writeln!(out, "  {what:<14} {} → {}{delta}", num(a, f), num(b, f));
        }
        let _ = writeln!(out, "  {}", self.significance);
        out
    }
}

fn change(oa: &Outcome, ob: Option<&Outcome>) -> CaseChange {
    let a = Side::of(oa);
    let Some(ob) = ob else {
        return CaseChange {
            case_id: oa.case_id.clone(),
            target: oa.target.clone(),
            change: Change::OnlyInA,
            a: Some(a),
            b: None,
            score_delta: None,
        };
    };
    let b = Side::of(ob);
    let kind = match (a.status, b.status) {
        (Status::Pass, Status::Fail) => Change::Regression,
        (Status::Fail, Status::Pass) => Change::Fix,
        (x, y) if x == y && matches!(x, Status::Pass | Status::Fail) => Change::Unchanged,
        _ => Change::NotComparable,
    };
    let decided = |s: Status| matches!(s, Status::Pass | Status::Fail);
    let score_delta = match (a.score, b.score) {
        (Some(x), Some(y)) if decided(a.status) && decided(b.status) => Some(y - x),
        _ => None,
    };
    CaseChange {
        case_id: oa.case_id.clone(),
        target: oa.target.clone(),
        change: kind,
        a: Some(a),
        b: Some(b),
        score_delta,
    }
}

fn totals<'a>(sides: impl Iterator<Item = &'a Side>) -> Totals {
    let sides: Vec<&Side> = sides.collect();
    let costs: Vec<f64> = sides.iter().filter_map(|s| s.cost_usd).collect();
    let durations: Vec<f64> = sides.iter().map(|s| s.duration_ms).collect();
    let scores: Vec<f64> = sides.iter().filter_map(|s| s.score).collect();
    Totals {
        cost_usd: (!costs.is_empty()).then(|| costs.iter().sum()),
        duration_ms: gavel_stats::mean(&durations),
        score: gavel_stats::mean(&scores),
    }
}

fn significance(scores: Option<&PairedTest>, flips: Option<&PairedTest>, repeats: usize) -> String {
    let mut parts = Vec::new();
    match scores {
        Some(t) => parts.push(format!(
            "score change {} (Wilcoxon signed-rank p = {:.3}, {} case{} with a score change{})",
            if t.p_value < SIGNIFICANCE {
                "significant at 5%"
            } else {
                "not significant at 5%"
            },
            t.p_value,
            t.n,
            gavel_core::plural(t.n),
            if repeats > 1 {
                format!(", means over {repeats}+ repeats")
            } else {
                String::new()
            },
        )),
        None => parts.push("no score changed between the runs".to_owned()),
    }
    if let Some(t) = flips {
        parts.push(format!(
            "fixes vs regressions {} (sign test p = {:.3})",
            if t.p_value < SIGNIFICANCE {
                "significant at 5%"
            } else {
                "not significant at 5%"
            },
            t.p_value
        ));
    }
    if repeats < 2 {
        parts.push("run with `--repeat` (or `repeat:`) for a sharper test".to_owned());
    }
    format!("significance: {}", parts.join("; "))
}
