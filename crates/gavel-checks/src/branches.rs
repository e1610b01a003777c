//! branch-isolation: no branch shows context only another branch had.

use std::collections::BTreeMap;

use gavel_core::Status;
use gavel_core::check::OneOrMany;
use serde_json::{Value, json};

use crate::error::FieldError;
use crate::plan::{Finding, Subject};

/// A compiled branch-isolation check: markers by branch, lower-cased.
pub(crate) struct IsolationCheck {
    markers: BTreeMap<String, Vec<String>>,
}

impl IsolationCheck {
    pub(crate) fn compile(
        markers: &BTreeMap<String, OneOrMany>,
        branches: &[&str],
    ) -> Result<Self, FieldError> {
        if branches.len() < 2 {
            return Err(FieldError::new(
                "",
                "needs a case with at least two branches (rounds with `branch`)",
            ));
        }
        let mut compiled = BTreeMap::new();
        for (branch, list) in markers {
            if !branches.contains(&branch.as_str()) {
                return Err(FieldError::new(
                    format!("markers.{branch}"),
                    format!("no branch `{branch}` (branches: {})", branches.join(", ")),
                ));
            }
            let list: Vec<String> = list
                .as_slice()
                .iter()
                .map(|m| m.trim().to_lowercase())
                .collect();
            if list.iter().any(String::is_empty) {
                return Err(FieldError::new(
                    format!("markers.{branch}"),
                    "a marker cannot be empty",
                ));
            }
            compiled.insert(branch.clone(), list);
        }
        if compiled.is_empty() {
            return Err(FieldError::new(
                "markers",
                "give markers for at least one branch",
            ));
        }
        Ok(IsolationCheck { markers: compiled })
    }

    pub(crate) fn name(&self) -> String {
        let names: Vec<&str> = self.markers.keys().map(String::as_str).collect();
        format!("branch-isolation [{}]", names.join(", "))
    }

    /// Fails when a turn of one branch shows another branch's marker.
    pub(crate) fn evaluate(&self, subject: &Subject<'_>) -> Finding {
        let mut leaks = Vec::new();
        for turn in &subject.turns {
            let Some(branch) = turn.branch.as_deref() else {
                continue;
            };
            let output = turn.output.to_lowercase();
            for (owner, markers) in &self.markers {
                if owner == branch {
                    continue;
                }
                for marker in markers.iter().filter(|m| output.contains(m.as_str())) {
                    leaks.push(json!({
                        "branch": branch, "round": turn.round, "marker": marker, "from": owner,
                    }));
                }
            }
        }
        let branches_seen = subject.turns.iter().filter(|t| t.branch.is_some()).count();
        if branches_seen == 0 {
            return Finding {
                status: Status::Skipped,
                reason: "no branch was played".into(),
                evidence: Value::Null,
            };
        }
        let evidence = json!({"leaks": leaks});
        match leaks.first() {
            None => Finding::pass("no branch shows another branch's markers", evidence),
            Some(first) => Finding::fail(
                format!(
                    "branch `{}` shows `{}`, which only branch `{}` had (round {}){}",
                    first["branch"].as_str().unwrap_or_default(),
                    first["marker"].as_str().unwrap_or_default(),
                    first["from"].as_str().unwrap_or_default(),
                    first["round"].as_u64().unwrap_or_default() + 1,
                    match leaks.len() {
                        1 => String::new(),
                        n => format!(", and {} more leak(s)", n - 1),
                    }
                ),
                evidence,
            ),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use gavel_core::Status;

    use crate::plan::tests::{case, compile_err, run_one, turn};

    const CASE: &str = "rounds:\n  - input: p\n  - {input: a, branch: a}\n  - {input: b, branch: b}\nchecks:\n  - type: branch-isolation\n    markers: {a: Beach House, b: [Cabin]}\n";

    fn branched(round: usize, branch: &str, output: &str) -> gavel_core::Turn {
        let mut t = turn(round, output);
        t.branch = Some(branch.into());
        t
    }

    #[test]
    fn a_marker_in_the_other_branch_fails() {
        let c = case(CASE);
        let clean = vec![
            turn(0, "Beach House, Cabin"),
            branched(1, "a", "Beach House is nice"),
            branched(2, "b", "The cabin is nice"),
        ];
        let v = run_one(&c, clean);
        assert_eq!(
            (v.status, v.check.as_str()),
            (Status::Pass, "branch-isolation [a, b]"),
            "{}",
            v.reason
        );
        let leaked = vec![
            turn(0, "x"),
            branched(1, "a", "Beach House"),
            branched(2, "b", "Cabin, as for the beach house..."),
        ];
        let v = run_one(&c, leaked);
        assert_eq!(v.status, Status::Fail);
        assert_eq!(
            v.reason,
            "branch `b` shows `beach house`, which only branch `a` had (round 3)"
        );
    }

    #[test]
    fn markers_must_name_branches() {
        let e = compile_err(&CASE.replace("{a: Beach", "{c: Beach"));
        assert!(
            e.contains("checks[0].markers.c: no branch `c` (branches: a, b)"),
            "{e}"
        );
        let e = compile_err("input: q\nchecks: [{type: branch-isolation, markers: {a: x}}]\n");
        assert!(e.contains("at least two branches"), "{e}");
    }
}
