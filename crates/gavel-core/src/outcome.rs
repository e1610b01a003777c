//! Executions, outcomes and the summary statistics that gate CI.

use crate::CheckKind;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{Status, Transcript, Verdict};

/// Which execution of a run: one case against one target, one repeat.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ExecutionKey {
    /// The case id.
    pub case_id: String,
    /// The target name.
    pub target: String,
    /// The repeat index (0-based).
    pub repeat_index: u32,
}

impl ExecutionKey {
    /// The key of `case_id` against `target`, repeat `repeat_index`.
    pub fn new(case_id: impl Into<String>, target: impl Into<String>, repeat_index: u32) -> Self {
        ExecutionKey {
            case_id: case_id.into(),
            target: target.into(),
            repeat_index,
        }
    }
}

/// One run of one case against one target: the transcript and the verdicts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Execution {
    /// The case id.
    pub case_id: String,
    /// The case name.
    pub case_name: String,
    /// The target name.
    pub target: String,
    /// Which repeat this is (0-based).
    pub repeat_index: u32,
    /// The case's tags.
    pub tags: Vec<String>,
    /// Combined status of the verdicts (or `error` when the harness broke).
    pub status: Status,
    /// Mean of the scored verdicts, 0..=1.
    pub score: Option<f64>,
    /// What happened.
    pub transcript: Transcript,
    /// Every check's verdict, in order.
    pub verdicts: Vec<Verdict>,
    /// Why the execution errored or was skipped, when it was.
    pub reason: Option<String>,
    /// When it started (RFC 3339, UTC).
    pub started_at: String,
    /// How long it took.
    pub duration_ms: u64,
}

/// Why an execution with no verdict is `skipped`.
const NO_CHECKS: &str = "the case has no checks";

impl Execution {
    /// Which execution this is.
    pub fn key(&self) -> ExecutionKey {
        ExecutionKey::new(&self.case_id, &self.target, self.repeat_index)
    }

    /// Sets `status` and `score` from the verdicts and the transcript: a target
    /// failure makes the execution an error; no verdict at all makes it skipped.
    pub fn settle(&mut self) {
        if let Some(failure) = self
            .transcript
            .turns
            .iter()
            .find_map(|t| t.failure.as_ref())
        {
            self.status = Status::Error;
            self.reason.get_or_insert_with(|| failure.message.clone());
        } else if self.verdicts.is_empty() {
            self.status = Status::Skipped;
            self.reason.get_or_insert_with(|| NO_CHECKS.to_owned());
        } else {
            self.status = Status::combine(self.verdicts.iter().map(|v| v.status));
            // Settled again once comparisons (pairwise, select-best) added verdicts.
            if self.reason.as_deref() == Some(NO_CHECKS) {
                self.reason = None;
            }
        }
        self.score = mean(
            self.verdicts
                .iter()
                .filter(|v| matches!(v.status, Status::Pass | Status::Fail))
                .filter_map(|v| v.score),
        );
    }

    /// Summed cost of the target's turns, gavel's own calls around them (follow-up
    /// detector, simulated user) and the checks, when any is known.
    pub fn cost_usd(&self) -> Option<f64> {
        let turns = self
            .transcript
            .turns
            .iter()
            .flat_map(|t| [t.usage, t.harness_usage])
            .filter_map(|u| u.and_then(|u| u.cost_usd));
        let checks = self.verdicts.iter().filter_map(|v| v.cost_usd);
        let costs: Vec<f64> = turns.chain(checks).collect();
        (!costs.is_empty()).then(|| costs.iter().sum())
    }
}

/// A case's result against one target, over its repeats.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// The case id.
    pub case_id: String,
    /// The case name.
    pub case_name: String,
    /// The target name.
    pub target: String,
    /// The case's tags.
    pub tags: Vec<String>,
    /// Fails if any repeat failed; errors if any errored and none failed.
    pub status: Status,
    /// Mean score over the repeats that scored.
    pub score: Option<f64>,
    /// Share of the repeats that passed, 0..=1.
    pub pass_rate: f64,
    /// The executions, by repeat index.
    pub executions: Vec<Execution>,
}

impl Outcome {
    /// Groups executions by (case, target), keeping first-seen order.
    pub fn group(executions: Vec<Execution>) -> Vec<Outcome> {
        let mut order: Vec<(String, String)> = Vec::new();
        let mut groups: BTreeMap<(String, String), Vec<Execution>> = BTreeMap::new();
        for e in executions {
            let key = (e.case_id.clone(), e.target.clone());
            if !groups.contains_key(&key) {
                order.push(key.clone());
            }
            groups.entry(key).or_default().push(e);
        }
        order
            .into_iter()
            .filter_map(|key| groups.remove(&key))
            .map(Outcome::from_executions)
            .collect()
    }

    fn from_executions(mut executions: Vec<Execution>) -> Outcome {
        executions.sort_by_key(|e| e.repeat_index);
        let first = &executions[0];
        let passed = executions
            .iter()
            .filter(|e| e.status == Status::Pass)
            .count();
        Outcome {
            case_id: first.case_id.clone(),
            case_name: first.case_name.clone(),
            target: first.target.clone(),
            tags: first.tags.clone(),
            status: Status::combine(executions.iter().map(|e| e.status)),
            score: mean(executions.iter().filter_map(|e| e.score)),
            pass_rate: passed as f64 / executions.len() as f64,
            executions,
        }
    }

    /// The skipped verdicts of every repeat (a judge without a model, an oracle
    /// unavailable, a check gated by an earlier failure), each with its reason.
    pub fn skipped_checks(&self) -> impl Iterator<Item = (&Execution, &Verdict)> {
        self.executions.iter().flat_map(|e| {
            e.verdicts
                .iter()
                .filter(|v| v.status == Status::Skipped)
                .map(move |v| (e, v))
        })
    }

    /// Whether the outcome passed although some of its checks were skipped: a pass
    /// that rests on fewer checks than the case asked for.
    pub fn passed_with_skips(&self) -> bool {
        self.status == Status::Pass && self.skipped_checks().next().is_some()
    }

    /// The verdicts that did not pass, from every repeat (failures and errors).
    pub fn problems(&self) -> impl Iterator<Item = (&Execution, &Verdict)> {
        self.executions.iter().flat_map(|e| {
            e.verdicts
                .iter()
                .filter(|v| matches!(v.status, Status::Fail | Status::Error))
                .map(move |v| (e, v))
        })
    }
}

/// Counts and rates over a set of outcomes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TagStats {
    /// Outcomes counted.
    pub total: usize,
    /// Passed (including those passed with skipped checks).
    pub passed: usize,
    /// Of `passed`, those with one or more skipped checks ([`Outcome::passed_with_skips`]).
    #[serde(default)]
    pub passed_with_skips: usize,
    /// Failed.
    pub failed: usize,
    /// Errored.
    pub errors: usize,
    /// Skipped.
    pub skipped: usize,
    /// passed / (passed + failed), in percent; `None` when nothing was decided.
    pub pass_rate: Option<f64>,
    /// Mean score, 0..=1.
    pub average_score: Option<f64>,
}

impl TagStats {
    /// Passes with no skipped check.
    pub fn plain_passes(&self) -> usize {
        self.passed - self.passed_with_skips
    }

    /// Computes the counts and rates of these outcomes.
    pub fn of<'a>(outcomes: impl IntoIterator<Item = &'a Outcome>) -> TagStats {
        let mut s = TagStats::default();
        let mut scores = Vec::new();
        for o in outcomes {
            s.total += 1;
            match o.status {
                Status::Pass => {
                    s.passed += 1;
                    s.passed_with_skips += usize::from(o.passed_with_skips());
                }
                Status::Fail => s.failed += 1,
                Status::Error => s.errors += 1,
                Status::Skipped => s.skipped += 1,
            }
            scores.extend(o.score);
        }
        let decided = s.passed + s.failed;
        s.pass_rate = (decided > 0).then(|| 100.0 * s.passed as f64 / decided as f64);
        s.average_score = mean(scores);
        s
    }
}

/// The summary of a run: overall, by tag and by target.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Over every outcome.
    pub overall: TagStats,
    /// Per tag.
    pub by_tag: BTreeMap<String, TagStats>,
    /// Per target.
    pub by_target: BTreeMap<String, TagStats>,
    /// Total known cost in US dollars.
    pub cost_usd: Option<f64>,
    /// Pairwise comparisons judged in the run, and how many flipped with the order.
    pub pairwise: PairwiseStats,
    /// Select-best comparisons judged in the run, and which shown position won.
    #[serde(default)]
    pub select_best: SelectBestStats,
}

/// Position bias of a run's select-best judges: how often the judge chose the
/// answer shown first, second, and so on. The order is shuffled per comparison,
/// so a judge that reads the answers spreads its choices over the positions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SelectBestStats {
    /// Comparisons the judge decided.
    pub comparisons: usize,
    /// Index `i`: how many times the answer shown at position `i + 1` was chosen.
    pub chosen_by_position: Vec<usize>,
}

impl SelectBestStats {
    /// Adds `other`'s comparisons, position by position.
    pub fn add(&mut self, other: &SelectBestStats) {
        if self.chosen_by_position.len() < other.chosen_by_position.len() {
            self.chosen_by_position
                .resize(other.chosen_by_position.len(), 0);
        }
        for (sum, n) in self
            .chosen_by_position
            .iter_mut()
            .zip(&other.chosen_by_position)
        {
            *sum += n;
        }
        self.comparisons += other.comparisons;
    }

    fn of(outcomes: &[Outcome]) -> SelectBestStats {
        // Each decided comparison has exactly one winner, whose evidence holds
        // the position it was shown at.
        let positions = outcomes
            .iter()
            .flat_map(|o| &o.executions)
            .flat_map(|e| &e.verdicts)
            .filter(|v| v.kind == CheckKind::SelectBest && v.status == Status::Pass)
            .filter_map(|v| v.evidence.select_best().map(|s| s.position));
        let mut stats = SelectBestStats::default();
        for position in positions {
            let Some(i) = position
                .checked_sub(1)
                .filter(|&i| i < crate::judge::SELECT_BEST_MAX_ANSWERS)
            else {
                continue;
            };
            if stats.chosen_by_position.len() <= i {
                stats.chosen_by_position.resize(i + 1, 0);
            }
            stats.chosen_by_position[i] += 1;
            stats.comparisons += 1;
        }
        stats
    }
}

/// Position bias of a run's pairwise judges: a comparison whose two orders
/// disagreed counts as biased (and is scored a tie).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairwiseStats {
    /// Pairwise verdicts for which the judge was asked both orders.
    pub comparisons: usize,
    /// Of those, how many favoured a position rather than an answer.
    pub position_bias: usize,
}

impl PairwiseStats {
    fn of(outcomes: &[Outcome]) -> PairwiseStats {
        let judged = outcomes
            .iter()
            .flat_map(|o| &o.executions)
            .flat_map(|e| &e.verdicts)
            .filter(|v| v.kind == CheckKind::Pairwise && v.evidence.short_circuit.is_none())
            .filter_map(|v| v.evidence.pairwise());
        let mut stats = PairwiseStats::default();
        for p in judged {
            stats.comparisons += 1;
            stats.position_bias += usize::from(p.position_bias);
        }
        stats
    }
}

impl Summary {
    /// Computes the summary of these outcomes.
    pub fn of(outcomes: &[Outcome]) -> Summary {
        let mut tags: BTreeMap<&str, Vec<&Outcome>> = BTreeMap::new();
        let mut targets: BTreeMap<&str, Vec<&Outcome>> = BTreeMap::new();
        for o in outcomes {
            for t in &o.tags {
                tags.entry(t).or_default().push(o);
            }
            targets.entry(&o.target).or_default().push(o);
        }
        let costs: Vec<f64> = outcomes
            .iter()
            .flat_map(|o| o.executions.iter().filter_map(Execution::cost_usd))
            .collect();
        Summary {
            overall: TagStats::of(outcomes),
            by_tag: tags
                .into_iter()
                .map(|(k, v)| (k.to_owned(), TagStats::of(v)))
                .collect(),
            by_target: targets
                .into_iter()
                .map(|(k, v)| (k.to_owned(), TagStats::of(v)))
                .collect(),
            cost_usd: (!costs.is_empty()).then(|| costs.iter().sum()),
            pairwise: PairwiseStats::of(outcomes),
            select_best: SelectBestStats::of(outcomes),
        }
    }
}

/// Arithmetic mean, `None` for no values.
pub fn mean(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values
        .into_iter()
        .fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exec(
        case: &str,
        repeat: u32,
        status: Status,
        score: Option<f64>,
        tags: &[&str],
    ) -> Execution {
        Execution {
            case_id: case.into(),
            case_name: case.into(),
            target: "t".into(),
            repeat_index: repeat,
            tags: tags.iter().map(|s| s.to_string()).collect(),
            status,
            score,
            transcript: Transcript::default(),
            verdicts: vec![],
            reason: None,
            started_at: String::new(),
            duration_ms: 0,
        }
    }

    #[test]
    fn outcomes_group_repeats_and_summary_excludes_errors_from_pass_rate() {
        let outcomes = Outcome::group(vec![
            exec("a", 1, Status::Pass, Some(1.0), &["smoke"]),
            exec("b", 0, Status::Fail, Some(0.0), &["smoke"]),
            exec("a", 0, Status::Pass, Some(0.5), &["smoke"]),
            exec("c", 0, Status::Error, None, &[]),
            exec("d", 0, Status::Skipped, None, &[]),
        ]);
        assert_eq!(outcomes.len(), 4);
        assert_eq!(outcomes[0].case_id, "a");
        assert_eq!(outcomes[0].executions[0].repeat_index, 0);
        assert_eq!(outcomes[0].score, Some(0.75));
        let s = Summary::of(&outcomes);
        assert_eq!(
            (
                s.overall.passed,
                s.overall.failed,
                s.overall.errors,
                s.overall.skipped
            ),
            (1, 1, 1, 1)
        );
        assert_eq!(s.overall.pass_rate, Some(50.0));
        assert_eq!(s.by_tag["smoke"].total, 2);
    }

    #[test]
    fn passes_with_skipped_checks_are_counted_apart() {
        let mut skipped_judge = exec("a", 0, Status::Pass, Some(1.0), &[]);
        skipped_judge.verdicts = vec![
            Verdict::new("contains", CheckKind::Contains, Status::Pass, "found"),
            Verdict::new("judge", CheckKind::Judge, Status::Skipped, "no judge model"),
        ];
        let mut plain = exec("b", 0, Status::Pass, Some(1.0), &[]);
        plain.verdicts = vec![Verdict::new(
            "contains",
            CheckKind::Contains,
            Status::Pass,
            "found",
        )];
        let mut failed = exec("c", 0, Status::Fail, Some(0.0), &[]);
        failed.verdicts = vec![
            Verdict::new("contains", CheckKind::Contains, Status::Fail, "missing"),
            Verdict::new("judge", CheckKind::Judge, Status::Skipped, "gated"),
        ];
        let outcomes = Outcome::group(vec![skipped_judge, plain, failed]);
        assert!(outcomes[0].passed_with_skips());
        assert!(!outcomes[1].passed_with_skips());
        assert!(!outcomes[2].passed_with_skips(), "only passes count");
        let s = TagStats::of(&outcomes);
        assert_eq!((s.passed, s.passed_with_skips, s.plain_passes()), (2, 1, 1));
        assert_eq!(s.pass_rate.map(|r| r.round()), Some(67.0));
    }

    #[test]
    fn settle_turns_target_failure_into_error() {
        let mut e = exec("a", 0, Status::Pass, None, &[]);
        e.transcript.turns.push(crate::Turn {
            failure: Some(crate::TargetFailure {
                message: "connection refused".into(),
                transient: true,
            }),
            ..Default::default()
        });
        e.verdicts.push(Verdict::new(
            "contains",
            CheckKind::Contains,
            Status::Fail,
            "missing",
        ));
        e.settle();
        assert_eq!(e.status, Status::Error);
        assert_eq!(e.reason.as_deref(), Some("connection refused"));
    }
}
