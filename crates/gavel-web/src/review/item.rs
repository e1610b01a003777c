//! What the queue shows next: one execution, or a pair in the order drawn for
//! the labeller (or a pair seen before, in the other order), and why it comes
//! now. The judge's verdicts are not shown: they would sway the label.

use gavel_core::{Execution, ExecutionKey};
use gavel_store::{Informative, Pairing, Review};
use serde::Serialize;

use super::{QueueQuery, swapped_for};
use crate::{AppState, WebError};

/// The next item to label, or none.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub(crate) enum Shown {
    /// One execution.
    Single {
        execution: Box<Execution>,
        why: Vec<String>,
        remaining: usize,
        next: Vec<Upcoming>,
    },
    /// Two executions of one case, `left` shown first.
    Pair {
        left: Box<Execution>,
        right: Box<Execution>,
        /// The true order's keys, for the form: A's and B's.
        a: ExecutionKey,
        b: ExecutionKey,
        b_run: String,
        /// Seen before, in the other order.
        recheck: bool,
        why: Vec<String>,
        remaining: usize,
    },
    /// Nothing left for this labeller.
    Done { remaining: usize },
}

/// A later item of the queue, by its case.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Upcoming {
    case_name: String,
    why: Vec<String>,
}

impl Shown {
    /// What `review.labeller` labels next in the queue `q` asks for.
    pub(crate) async fn of(
        state: &AppState,
        review: &Review,
        q: &QueueQuery,
    ) -> Result<Shown, WebError> {
        if q.pairwise() {
            return pair(state, review, &q.pairing(state).await?).await;
        }
        let page = state.store.review_queue(review).await?;
        let mut items = page.items.into_iter();
        let Some(first) = items.next() else {
            return Ok(Shown::Done {
                remaining: page.remaining,
            });
        };
        Ok(Shown::Single {
            why: reasons(&first.why, false),
            execution: Box::new(first.execution),
            remaining: page.remaining,
            next: items
                .map(|i| Upcoming {
                    case_name: i.execution.case_name,
                    why: reasons(&i.why, false),
                })
                .collect(),
        })
    }
}

async fn pair(state: &AppState, review: &Review, pairing: &Pairing) -> Result<Shown, WebError> {
    let b_run = match pairing {
        Pairing::Targets => review.run_id.clone(),
        Pairing::Run(b) => b.clone(),
    };
    let page = state.store.pair_queue(review, pairing).await?;
    // A pair seen before comes back at the head of the queue, in the other order.
    let due = match review.skip {
        0 => {
            state
                .store
                .due_recheck(&review.run_id, &b_run, &review.labeller)
                .await?
        }
        _ => None,
    };
    let (a, b, swapped, recheck, why) = match (due, page.items.into_iter().next()) {
        (Some(first), _) => {
            let a_key = ExecutionKey::new(&first.case_id, &first.target, first.repeat_index);
            let b_key =
                ExecutionKey::new(&first.case_id, &first.pair.target, first.pair.repeat_index);
            let a = state.store.execution_at(&first.run_id, &a_key).await?;
            let b = state.store.execution_at(&first.pair.run_id, &b_key).await?;
            let why = vec!["you labelled this pair before: it is shown again in the other order, to measure position consistency".to_owned()];
            (a, b, !first.shown_swapped, true, why)
        }
        (None, Some(item)) => {
            let id = gavel_store::PairLabel::item_id_of(
                &review.run_id,
                &item.a.key(),
                &b_run,
                &item.b.key(),
            );
            let swapped = swapped_for(&review.labeller, &id);
            let why = reasons(&item.why, true);
            (item.a, item.b, swapped, false, why)
        }
        (None, None) => {
            return Ok(Shown::Done {
                remaining: page.remaining,
            });
        }
    };
    let (a_key, b_key) = (a.key(), b.key());
    let (left, right) = if swapped { (b, a) } else { (a, b) };
    Ok(Shown::Pair {
        left: Box::new(left),
        right: Box::new(right),
        a: a_key,
        b: b_key,
        b_run,
        recheck,
        why,
        remaining: page.remaining,
    })
}

/// Why an item comes where it does, in words (nothing of the judge's verdict).
fn reasons(why: &Informative, pair: bool) -> Vec<String> {
    let mut out = Vec::new();
    if why.disagree > 0 {
        out.push(format!(
            "{} of {} other labellers' labels disagree with the judge",
            why.disagree, why.others
        ));
    } else if why.others > 0 {
        out.push(format!("{} other labellers labelled it", why.others));
    }
    match why.stratum_labels {
        0 => out.push("the first of its stratum to be labelled".to_owned()),
        n => out.push(format!("{n} labels so far in its stratum")),
    }
    if let Some(margin) = why.margin {
        out.push(if pair {
            format!("the two scores are {margin:.2} apart")
        } else {
            format!("the judge was {margin:.2} from its threshold")
        });
    }
    out
}
