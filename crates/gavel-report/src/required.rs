//! The required-judges gate (`--require-judges`, `judge.required`): a run whose
//! judged checks went unjudged for want of a judge model does not pass.

use std::collections::HashSet;

use gavel_core::Outcome;
use serde::{Deserialize, Serialize};

/// Judged checks that had no judge model or credentials, when judges are required.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequiredJudges {
    /// Whether every judged check was judged.
    pub passed: bool,
    /// Verdicts with no judgement for want of a judge, over every repeat.
    pub unjudged: usize,
    /// Each distinct `case [target] check: reason` of them.
    pub checks: Vec<String>,
    /// The lines of `checks`, to keep them distinct in constant time.
    #[serde(skip)]
    seen: HashSet<String>,
}

/// Checks listed by name in the gate line; the JSON report lists them all.
const NAMED_MAX: usize = 5;

impl RequiredJudges {
    /// The judged checks of `outcomes` that had no judge model
    /// ([`gavel_core::Verdict::judge_unavailable`]).
    pub fn of(outcomes: &[Outcome]) -> RequiredJudges {
        let mut judges = RequiredJudges {
            passed: true,
            unjudged: 0,
            checks: Vec::new(),
            seen: HashSet::new(),
        };
        for o in outcomes {
            judges.add(o);
        }
        judges
    }

    /// Adds the unjudged checks of `o` (an outcome after these).
    pub(crate) fn add(&mut self, o: &Outcome) {
        let verdicts = o.executions.iter().flat_map(|e| &e.verdicts);
        for v in verdicts.filter(|v| v.judge_unavailable()) {
            self.unjudged += 1;
            let line = format!("{} [{}] {}: {}", o.case_id, o.target, v.check, v.reason);
            if self.seen.insert(line.clone()) {
                self.checks.push(line);
            }
        }
        self.passed = self.unjudged == 0;
    }

    /// Why the gate failed, naming the first unjudged checks; `None` when it did not.
    pub fn reason(&self) -> Option<String> {
        if self.passed {
            return None;
        }
        let mut named = self
            .checks
            .iter()
            .take(NAMED_MAX)
            .cloned()
            .collect::<Vec<_>>()
            .join("; ");
        if self.checks.len() > NAMED_MAX {
            named.push_str(&format!("; and {} more", self.checks.len() - NAMED_MAX));
        }
        Some(format!(
            "judges are required but {} judged check{} had no judge: {named}",
            self.unjudged,
            gavel_core::plural(self.unjudged)
        ))
    }
}
