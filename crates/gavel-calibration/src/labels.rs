//! Labelled sets from the store: people's labels of stored transcripts.

use std::collections::BTreeMap;

use gavel_core::{ExecutionRef, Label};
use serde_json::Value;

use crate::{CalibrationError, Record, ScaleSpec, Task};

/// What a labelled execution showed: the last turn and what the case asked.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelledTurn {
    /// The user message.
    pub input: String,
    /// The target's answer.
    pub output: String,
    /// The case's criteria, when it has any.
    pub criteria: Option<String>,
    /// The case's expected output, when it has one.
    pub reference: Option<Value>,
}

/// The criterion used when neither the case nor the caller gives one.
pub const DEFAULT_CRITERION: &str =
    "Does the answer serve the user's message correctly, completely and relevantly?";

/// Turns a label set into records, one per labelled execution or pair. Several
/// people's labels of one item combine: the majority `pass`/`fail` (an even
/// split leaves the item out) or the mean score; a pair's most frequent of `A`,
/// `B` and `tie` (a draw leaves it out). Single labels are binary when every one
/// is `pass`/`fail`, else Likert 1-5 on the scores. `turn` finds what an
/// execution showed; `criterion` overrides the cases' criteria.
pub fn records_from_labels(
    labels: &[Label],
    criterion: Option<&str>,
    turn: impl Fn(&ExecutionRef) -> Option<LabelledTurn>,
) -> Result<Vec<Record>, CalibrationError> {
    let binary = labels
        .iter()
        .filter(|l| l.pair.is_none())
        .all(|l| matches!(l.label.as_deref(), Some("pass" | "fail")));
    let mut items: BTreeMap<&str, Vec<&Label>> = BTreeMap::new();
    for label in labels {
        items.entry(label.item_id.as_str()).or_default().push(label);
    }
    let mut records = Vec::new();
    for (item_id, votes) in items {
        let Some(key) = votes.iter().find_map(|l| l.execution.as_ref()) else {
            return Err(CalibrationError::Set(format!(
                "label `{}/{item_id}` names no stored execution",
                votes[0].label_set
            )));
        };
        let Some(shown) = turn(key) else {
            return Err(missing(&votes[0].label_set, item_id, key));
        };
        if let Some(pair) = votes.iter().find_map(|l| l.pair.as_ref()) {
            let Some(b) = turn(pair) else {
                return Err(missing(&votes[0].label_set, item_id, pair));
            };
            if let Some(record) = pair_record(item_id, &votes, shown, b, criterion)? {
                records.push(record);
            }
            continue;
        }
        let (human_label, human_score, scale) = if binary {
            let passes = votes
                .iter()
                .filter(|l| l.label.as_deref() == Some("pass"))
                .count();
            let fails = votes.len() - passes;
            if passes == fails {
                continue;
            }
            let pass = passes > fails;
            (
                Some(if pass { "pass" } else { "fail" }.to_owned()),
                Some(if pass { 1.0 } else { 0.0 }),
                ScaleSpec::Binary {
                    labels: vec!["pass".into(), "fail".into()],
                },
            )
        } else {
            let scores: Vec<f64> = votes.iter().filter_map(|l| l.score).collect();
            let Some(mean) = gavel_stats::mean(&scores) else {
                return Err(CalibrationError::Set(format!(
                    "label `{}/{item_id}` has no score, and the set is not all pass/fail",
                    votes[0].label_set
                )));
            };
            (None, Some(mean), ScaleSpec::Likert { min: 1.0, max: 5.0 })
        };
        let record = Record {
            id: item_id.to_owned(),
            dataset: Some(votes[0].label_set.clone()),
            task: Task::Pointwise,
            criterion: criterion
                .map(str::to_owned)
                .or(shown.criteria)
                .unwrap_or_else(|| DEFAULT_CRITERION.to_owned()),
            input: shown.input,
            context: None,
            response: Some(shown.output),
            response_a: None,
            response_b: None,
            reference: shown.reference,
            human_label,
            human_score,
            scale,
        };
        if let Some(problem) = record.problem() {
            return Err(CalibrationError::Set(format!(
                "label `{item_id}`: {problem}"
            )));
        }
        records.push(record);
    }
    Ok(records)
}

/// An item whose execution is not in the store.
fn missing(set: &str, item_id: &str, at: &ExecutionRef) -> CalibrationError {
    let (run, e) = (&at.run_id, &at.key);
    CalibrationError::Set(format!(
        "label `{set}/{item_id}`: execution {run}/{}/{}/{} is not in the store",
        e.case_id, e.target, e.repeat_index
    ))
}

/// A pair's record: the most frequent of `A`, `B` and `tie` over its labels;
/// `None` on a draw.
fn pair_record(
    item_id: &str,
    votes: &[&Label],
    a: LabelledTurn,
    b: LabelledTurn,
    criterion: Option<&str>,
) -> Result<Option<Record>, CalibrationError> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for vote in votes {
        match vote.label.as_deref() {
            Some(choice @ ("A" | "B" | "tie")) => *counts.entry(choice).or_default() += 1,
            other => {
                return Err(CalibrationError::Set(format!(
                    "label `{}/{item_id}` of a pair is {other:?}, not \"A\", \"B\" or \"tie\"",
                    vote.label_set
                )));
            }
        }
    }
    let most = counts.values().copied().max().unwrap_or(0);
    let top: Vec<&str> = counts
        .iter()
        .filter(|(_, n)| **n == most)
        .map(|(c, _)| *c)
        .collect();
    let [choice] = top[..] else {
        return Ok(None);
    };
    Ok(Some(Record {
        id: item_id.to_owned(),
        dataset: Some(votes[0].label_set.clone()),
        task: Task::Pairwise,
        criterion: criterion
            .map(str::to_owned)
            .or(a.criteria)
            .unwrap_or_else(|| DEFAULT_CRITERION.to_owned()),
        input: a.input,
        context: None,
        response: None,
        response_a: Some(a.output),
        response_b: Some(b.output),
        reference: a.reference,
        human_label: Some(choice.to_owned()),
        human_score: None,
        scale: ScaleSpec::Pairwise {
            labels: vec!["A".into(), "B".into(), "tie".into()],
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(item: &str, who: &str, label: Option<&str>, score: Option<f64>) -> Label {
        Label {
            label_set: "s".into(),
            item_id: item.into(),
            labeller: who.into(),
            execution: Some(ExecutionRef {
                run_id: "r".into(),
                key: gavel_core::ExecutionKey::new(item, "t", 0),
            }),
            pair: None,
            label: label.map(str::to_owned),
            score,
            note: None,
            created_at: String::new(),
        }
    }

    fn shown(at: &ExecutionRef) -> Option<LabelledTurn> {
        (at.key.case_id != "gone").then(|| LabelledTurn {
            input: format!("question {}", at.key.case_id),
            output: "answer".into(),
            criteria: Some("Be right.".into()),
            reference: None,
        })
    }

    #[test]
    fn majority_votes_and_even_splits() {
        let labels = [
            label("a", "x", Some("pass"), None),
            label("a", "y", Some("pass"), None),
            label("a", "z", Some("fail"), None),
            label("b", "x", Some("pass"), None),
            label("b", "y", Some("fail"), None),
        ];
        let records = records_from_labels(&labels, None, shown).unwrap();
        assert_eq!(records.len(), 1, "b is an even split");
        assert_eq!(records[0].human_label.as_deref(), Some("pass"));
        assert_eq!(records[0].criterion, "Be right.");
        assert_eq!(records[0].input, "question a");
    }

    #[test]
    fn scores_average_and_missing_executions_are_errors() {
        let labels = [
            label("a", "x", None, Some(4.0)),
            label("a", "y", None, Some(5.0)),
        ];
        let records = records_from_labels(&labels, Some("Mine."), shown).unwrap();
        assert_eq!(records[0].human_score, Some(4.5));
        assert_eq!(records[0].criterion, "Mine.");
        let gone = [label("gone", "x", Some("pass"), None)];
        let err = records_from_labels(&gone, None, shown)
            .unwrap_err()
            .to_string();
        assert!(err.contains("is not in the store"), "{err}");
    }

    #[test]
    fn pairs_take_the_most_frequent_choice_and_draws_are_left_out() {
        let pair = |item: &str, who: &str, choice: &str| Label {
            pair: Some(ExecutionRef {
                run_id: "r2".into(),
                key: gavel_core::ExecutionKey::new(item, "t", 0),
            }),
            ..label(item, who, Some(choice), None)
        };
        let labels = [
            label("single", "x", Some("fail"), None),
            pair("p", "x", "B"),
            pair("p", "y", "B"),
            pair("p", "z", "tie"),
            pair("q", "x", "A"),
            pair("q", "y", "tie"),
        ];
        let records = records_from_labels(&labels, None, shown).unwrap();
        assert_eq!(records.len(), 2, "q is a draw: {records:?}");
        let p = records.iter().find(|r| r.id == "p").unwrap();
        assert_eq!(p.task, Task::Pairwise);
        assert_eq!(p.human_label.as_deref(), Some("B"));
        assert!(p.problem().is_none(), "{:?}", p.problem());
        let single = records.iter().find(|r| r.id == "single").unwrap();
        assert_eq!(
            single.human_label.as_deref(),
            Some("fail"),
            "pairs leave single labels binary"
        );
    }
}
