//! How far a run's cases are recorded: the number of the plan's leading cases
//! (in plan order, the order a new run's case snapshot is saved in) whose
//! every planned execution is recorded. Recorders hear it as it grows
//! ([`crate::Recorder::cases_recorded`]), so a report can be folded from the
//! store while the run goes on.

use std::collections::{BTreeMap, HashMap};

use gavel_core::{Execution, ExecutionKey};

/// Executions drawn from the plan and not recorded yet, by case position.
#[derive(Default)]
pub(crate) struct Frontier {
    /// Each pending execution's case position.
    pending: HashMap<ExecutionKey, usize>,
    /// Pending executions per case position.
    open: BTreeMap<usize, usize>,
    /// The case position of the last execution drawn: its case may have more
    /// executions to draw.
    drawn: usize,
    /// Cases in the plan, once every execution was drawn.
    all: Option<usize>,
    /// What was last told.
    told: usize,
}

impl Frontier {
    /// Execution `key` of the case at `position` was drawn to run.
    pub(crate) fn drew(&mut self, key: ExecutionKey, position: usize) {
        self.drawn = position;
        if self.pending.insert(key, position).is_none() {
            *self.open.entry(position).or_default() += 1;
        }
    }

    /// Every execution was drawn; the plan has `cases` cases.
    pub(crate) fn exhausted(&mut self, cases: usize) {
        self.all = Some(cases);
    }

    /// Takes recorded executions; the new number of cases recorded whole, when
    /// it grew.
    pub(crate) fn recorded(&mut self, batch: &[Execution]) -> Option<usize> {
        for e in batch {
            let Some(position) = self.pending.remove(&e.key()) else {
                continue;
            };
            if let Some(n) = self.open.get_mut(&position) {
                *n -= 1;
                if *n == 0 {
                    self.open.remove(&position);
                }
            }
        }
        let bound = self.all.unwrap_or(self.drawn);
        let whole = self
            .open
            .keys()
            .next()
            .map_or(bound, |&first| first.min(bound));
        (whole > self.told).then(|| {
            self.told = whole;
            whole
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn execution(case: &str, repeat: u32) -> Execution {
        Execution {
            case_id: case.into(),
            case_name: case.into(),
            target: "t".into(),
            repeat_index: repeat,
            tags: Vec::new(),
            status: gavel_core::Status::Pass,
            score: None,
            transcript: Default::default(),
            verdicts: Vec::new(),
            reason: None,
            started_at: String::new(),
            duration_ms: 0,
        }
    }

    fn key(case: &str, repeat: u32) -> ExecutionKey {
        ExecutionKey::new(case, "t", repeat)
    }

    #[test]
    fn a_case_is_whole_once_all_its_executions_and_those_before_are_recorded() {
        let mut f = Frontier::default();
        f.drew(key("a", 0), 0);
        f.drew(key("a", 1), 0);
        f.drew(key("b", 0), 1);
        // `b` is recorded first: `a` still runs.
        assert_eq!(f.recorded(&[execution("b", 0)]), None);
        assert_eq!(f.recorded(&[execution("a", 1)]), None);
        // `a` is whole; `b` may still have executions to draw.
        assert_eq!(f.recorded(&[execution("a", 0)]), Some(1));
        // Case 2 had no execution to run; case 3 was drawn.
        f.drew(key("d", 0), 3);
        assert_eq!(f.recorded(&[]), Some(3));
        f.exhausted(4);
        assert_eq!(f.recorded(&[execution("d", 0)]), Some(4));
        // What is not pending changes nothing.
        assert_eq!(f.recorded(&[execution("x", 0)]), None);
    }
}
