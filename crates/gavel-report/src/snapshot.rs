//! The case snapshot as a report folds it: every case ([`Detail::Full`]), or
//! only the case whose executions are being folded and those of the outcomes
//! kept ([`Detail::Summary`]), noting the cases that never ran as they pass.

use std::collections::HashMap;

use gavel_core::Case;

use crate::Detail;

/// The cases a [`crate::ReportBuilder`] holds.
pub(crate) struct Snapshot {
    /// Every case, or only those of the outcomes kept.
    cases: Vec<Case>,
    /// Where each case id sits in `cases` (the first case of that id).
    positions: HashMap<String, usize>,
    fold: Fold,
}

/// How the cases that never ran are found.
enum Fold {
    /// At the end, from every case: whether each (by position) has an outcome.
    Whole { ran: Vec<bool> },
    /// As the cases pass: the case whose outcomes are being pushed, whether it
    /// has one, and the ids of those passed without one.
    Streamed {
        current: Option<Box<Case>>,
        ran: bool,
        unrun: Vec<String>,
    },
}

impl Snapshot {
    pub(crate) fn new(detail: Detail) -> Self {
        let fold = match detail {
            Detail::Full => Fold::Whole { ran: Vec::new() },
            Detail::Summary => Fold::Streamed {
                current: None,
                ran: false,
                unrun: Vec::new(),
            },
        };
        Snapshot {
            cases: Vec::new(),
            positions: HashMap::new(),
            fold,
        }
    }

    /// The next case of the snapshot. Streamed, the case before it has had
    /// its turn.
    pub(crate) fn push(&mut self, case: Case) {
        match &mut self.fold {
            Fold::Whole { ran } => {
                ran.push(false);
                self.insert(case);
            }
            Fold::Streamed {
                current,
                ran,
                unrun,
            } => {
                if let Some(passed) = current.replace(Box::new(case))
                    && !*ran
                {
                    unrun.push(passed.id);
                }
                *ran = false;
            }
        }
    }

    /// The case of an outcome of case `id`, if the snapshot has it.
    pub(crate) fn case(&self, id: &str) -> Option<&Case> {
        match &self.fold {
            Fold::Whole { .. } => self.cases.get(*self.positions.get(id)?),
            Fold::Streamed { current, .. } => current.as_deref().filter(|c| c.id == id),
        }
    }

    /// Notes that case `id` has an outcome, and keeps its case when `keep`.
    pub(crate) fn ran(&mut self, id: &str, keep: bool) {
        match &mut self.fold {
            Fold::Whole { ran } => {
                if let Some(&i) = self.positions.get(id) {
                    ran[i] = true;
                }
            }
            Fold::Streamed { current, ran, .. } => {
                let Some(case) = current.as_deref().filter(|c| c.id == id) else {
                    return;
                };
                *ran = true;
                if keep && !self.positions.contains_key(id) {
                    let case = case.clone();
                    self.insert(case);
                }
            }
        }
    }

    /// The cases held, where each id sits among them, and the ids of the
    /// cases with no outcome, in snapshot order.
    pub(crate) fn finish(mut self) -> (Vec<Case>, HashMap<String, usize>, Vec<String>) {
        let unrun = match &mut self.fold {
            Fold::Whole { ran } => {
                let mut listed = std::collections::HashSet::new();
                self.cases
                    .iter()
                    .filter(|c| !self.positions.get(&c.id).is_some_and(|&i| ran[i]))
                    .filter(|c| listed.insert(c.id.as_str()))
                    .map(|c| c.id.clone())
                    .collect()
            }
            Fold::Streamed {
                current,
                ran,
                unrun,
            } => {
                if let Some(last) = current.take()
                    && !*ran
                {
                    unrun.push(last.id);
                }
                std::mem::take(unrun)
            }
        };
        (self.cases, self.positions, unrun)
    }

    fn insert(&mut self, case: Case) {
        self.positions
            .entry(case.id.clone())
            .or_insert(self.cases.len());
        self.cases.push(case);
    }
}
