//! How far the labellers of a run's label set agree with one another, and how
//! consistent each is when shown a pair again in the other order.

use gavel_calibration::{RaterAgreement, rater_agreement};
use serde::Serialize;

use crate::{AppState, WebError};

/// The labellers' agreement on the label set of a run.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Agreement {
    /// The label set (the run's suite).
    pub(crate) set: String,
    /// Per kind of label: Cohen's kappa for two labellers, Krippendorff's alpha.
    pub(crate) kinds: Vec<RaterAgreement>,
    /// Per labeller, pairs of this run seen again in the other order.
    pub(crate) consistency: Vec<Consistency>,
}

/// One labeller's position consistency.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Consistency {
    pub(crate) labeller: String,
    /// Pairs seen in both orders.
    pub(crate) rechecked: usize,
    /// Of those, labelled the same both times.
    pub(crate) same: usize,
}

impl Agreement {
    /// The agreement on the set of run `run_id`.
    pub(crate) async fn of(state: &AppState, run_id: &str) -> Result<Agreement, WebError> {
        let set = state.store.label_set_of(run_id).await?;
        let labels = state.store.labels(&set).await?;
        let mut consistency: Vec<Consistency> = Vec::new();
        for label in state.store.run_pair_labels(run_id).await? {
            let Some(again) = &label.recheck else {
                continue;
            };
            let same = usize::from(*again == label.label);
            match consistency.iter_mut().find(|c| c.labeller == label.who) {
                Some(c) => {
                    c.rechecked += 1;
                    c.same += same;
                }
                None => consistency.push(Consistency {
                    labeller: label.who.clone(),
                    rechecked: 1,
                    same,
                }),
            }
        }
        consistency.sort_by(|a, b| a.labeller.cmp(&b.labeller));
        Ok(Agreement {
            set,
            kinds: rater_agreement(&labels),
            consistency,
        })
    }
}
