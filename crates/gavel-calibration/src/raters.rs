//! How far the people who labelled a set agree with one another: Cohen's kappa
//! for two labellers, Krippendorff's alpha (nominal) for any number.

use std::collections::{BTreeMap, BTreeSet};

use gavel_core::Label;
use gavel_stats::{Confusion, Weights, krippendorff_alpha};
use serde::Serialize;

/// Agreement among labellers on one kind of label.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RaterAgreement {
    /// `single` (`pass`/`fail`) or `pairwise` (`A`/`B`/`tie`).
    pub kind: &'static str,
    /// Who gave labels of this kind.
    pub labellers: Vec<String>,
    /// Items at least two of them labelled.
    pub shared: usize,
    /// The share of those items every labeller gave the same label.
    pub unanimous: Option<f64>,
    /// Cohen's kappa (unweighted) on the items both labelled, with exactly two
    /// labellers.
    pub kappa: Option<f64>,
    /// Krippendorff's alpha (nominal) over every item labelled twice or more.
    pub alpha: Option<f64>,
}

const KINDS: [(&str, &[&str]); 2] = [
    ("single", &["pass", "fail"]),
    ("pairwise", &["A", "B", "tie"]),
];

/// The labellers' agreement for each kind of label the set holds. Labels
/// without a category (scores only) are left out.
pub fn rater_agreement(labels: &[Label]) -> Vec<RaterAgreement> {
    KINDS
        .iter()
        .filter_map(|(kind, categories)| {
            let pairwise = *kind == "pairwise";
            let mut items: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
            for label in labels.iter().filter(|l| l.pair.is_some() == pairwise) {
                let Some(c) = label
                    .label
                    .as_deref()
                    .and_then(|l| categories.iter().position(|c| *c == l))
                else {
                    continue;
                };
                items
                    .entry(&label.item_id)
                    .or_default()
                    .insert(&label.labeller, c);
            }
            (!items.is_empty()).then(|| agreement(kind, categories.len(), &items))
        })
        .collect()
}

fn agreement(
    kind: &'static str,
    k: usize,
    items: &BTreeMap<&str, BTreeMap<&str, usize>>,
) -> RaterAgreement {
    let labellers: BTreeSet<&str> = items.values().flat_map(|by| by.keys().copied()).collect();
    let shared: Vec<&BTreeMap<&str, usize>> = items.values().filter(|by| by.len() >= 2).collect();
    let unanimous = shared
        .iter()
        .filter(|by| by.values().collect::<BTreeSet<_>>().len() == 1)
        .count();
    let kappa = match labellers.iter().collect::<Vec<_>>()[..] {
        [x, y] => {
            let (rows, cols): (Vec<usize>, Vec<usize>) = shared
                .iter()
                .filter_map(|by| Some((*by.get(x)?, *by.get(y)?)))
                .unzip();
            Confusion::new(k, &rows, &cols).and_then(|m| m.kappa(Weights::None))
        }
        _ => None,
    };
    let units: Vec<Vec<usize>> = shared
        .iter()
        .map(|by| by.values().copied().collect())
        .collect();
    RaterAgreement {
        kind,
        labellers: labellers.iter().map(|l| (*l).to_owned()).collect(),
        shared: shared.len(),
        unanimous: (!shared.is_empty()).then(|| unanimous as f64 / shared.len() as f64),
        kappa,
        alpha: krippendorff_alpha(k, &units),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(item: &str, who: &str, choice: &str, pair: bool) -> Label {
        let at = |run: &str| gavel_core::ExecutionRef {
            run_id: run.into(),
            key: gavel_core::ExecutionKey::new(item, "t", 0),
        };
        Label {
            label_set: "s".into(),
            item_id: item.into(),
            labeller: who.into(),
            execution: Some(at("r")),
            pair: pair.then(|| at("r2")),
            label: Some(choice.into()),
            score: None,
            note: None,
            created_at: String::new(),
        }
    }

    #[test]
    fn two_labellers_get_kappa_and_alpha_per_kind() {
        // 10 items: 4 pass/pass, 1 pass/fail, 1 fail/pass, 4 fail/fail → κ 0.6.
        let mut labels = Vec::new();
        let pairs = [("pass", "pass"); 4]
            .into_iter()
            .chain([("pass", "fail"), ("fail", "pass")])
            .chain([("fail", "fail"); 4]);
        for (i, (x, y)) in pairs.enumerate() {
            labels.push(label(&format!("i{i}"), "ana", x, false));
            labels.push(label(&format!("i{i}"), "bo", y, false));
        }
        labels.push(label("lone", "ana", "pass", false));
        labels.push(label("p", "ana", "A", true));
        labels.push(label("p", "bo", "A", true));
        let found = rater_agreement(&labels);
        assert_eq!(found.len(), 2);
        let single = &found[0];
        assert_eq!((single.kind, single.shared), ("single", 10));
        assert_eq!(single.unanimous, Some(0.8));
        assert!((single.kappa.unwrap() - 0.6).abs() < 1e-12);
        // α = 1 − (n−1)·D_o/D_e with n = 20, o_pf = o_fp = 2, n_p = n_f = 10.
        let alpha = 1.0 - 19.0 * 4.0 / 200.0;
        assert!((single.alpha.unwrap() - alpha).abs() < 1e-12);
        assert_eq!(found[1].kind, "pairwise");
        assert_eq!(found[1].kappa, None, "one category: chance explains all");
    }

    #[test]
    fn three_labellers_have_alpha_and_no_kappa() {
        let labels = [
            label("a", "x", "pass", false),
            label("a", "y", "pass", false),
            label("a", "z", "fail", false),
            label("b", "x", "fail", false),
            label("b", "y", "fail", false),
        ];
        let found = rater_agreement(&labels);
        assert_eq!(found[0].labellers, ["x", "y", "z"]);
        assert_eq!(found[0].kappa, None);
        assert!(found[0].alpha.is_some());
    }
}
