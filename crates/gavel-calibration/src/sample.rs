//! `--limit N`: a deterministic sample across a set's strata, not its first N lines.

use std::collections::BTreeMap;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use crate::Record;
use crate::report::likert_category;

/// A record's stratum: its dataset and its human label (the rounded Likert mean
/// on Likert sets).
fn stratum(record: &Record) -> (String, String) {
    let label = match (&record.human_label, record.human_score) {
        (Some(l), _) => l.clone(),
        (None, Some(score)) => likert_category(score),
        (None, None) => String::new(),
    };
    (record.dataset.clone().unwrap_or_default(), label)
}

/// `limit` records drawn across the strata (dataset × human label) in proportion
/// to their size (largest remainder), each stratum shuffled with ChaCha8 seeded
/// by `seed`; the sample keeps the file's order. The same records and seed give
/// the same sample. All records when `limit` is not below their number.
pub fn stratified_sample(records: Vec<Record>, limit: usize, seed: u64) -> Vec<Record> {
    let total = records.len();
    if limit >= total {
        return records;
    }
    let mut strata: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    for (i, r) in records.iter().enumerate() {
        strata.entry(stratum(r)).or_default().push(i);
    }
    // Proportional quotas, the leftover seats to the largest remainders.
    let mut quotas: Vec<(usize, usize)> = strata
        .values()
        .map(|ix| (ix.len() * limit / total, ix.len() * limit % total))
        .collect();
    let mut order: Vec<usize> = (0..quotas.len()).collect();
    order.sort_by_key(|&s| std::cmp::Reverse(quotas[s].1));
    let seated: usize = quotas.iter().map(|q| q.0).sum();
    for &s in order.iter().take(limit - seated) {
        quotas[s].0 += 1;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut keep = vec![false; total];
    for (mut members, (quota, _)) in strata.into_values().zip(quotas) {
        members.shuffle(&mut rng);
        for i in members.into_iter().take(quota) {
            keep[i] = true;
        }
    }
    records
        .into_iter()
        .zip(keep)
        .filter_map(|(r, k)| k.then_some(r))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(i: usize, label: &str) -> Record {
        serde_json::from_value(serde_json::json!({
            "id": format!("r{i}"), "dataset": "d", "task": "pointwise", "criterion": "c",
            "input": "i", "response": "r", "human_label": label,
            "scale": {"type": "binary", "labels": ["pass", "fail"]}
        }))
        .unwrap()
    }

    #[test]
    fn the_sample_spans_the_labels_and_is_deterministic() {
        // The file lists 90 passes, then 10 fails: its first 10 lines are all pass.
        let records: Vec<Record> = (0..100)
            .map(|i| record(i, if i < 90 { "pass" } else { "fail" }))
            .collect();
        let sample = stratified_sample(records.clone(), 10, 0);
        assert_eq!(sample.len(), 10);
        let fails = sample
            .iter()
            .filter(|r| r.human_label.as_deref() == Some("fail"))
            .count();
        assert_eq!(fails, 1, "in proportion: 9 passes, 1 fail");
        assert!(sample.iter().any(|r| r.id != "r0"));
        let ids = |s: &[Record]| s.iter().map(|r| r.id.clone()).collect::<Vec<_>>();
        assert_eq!(
            ids(&sample),
            ids(&stratified_sample(records.clone(), 10, 0))
        );
        assert_ne!(ids(&sample), ids(&records[..10]), "not the first lines");
        let two = stratified_sample(records.clone(), 2, 0);
        assert_eq!(two.len(), 2);
        assert_eq!(stratified_sample(records.clone(), 500, 0).len(), 100);
    }
}
