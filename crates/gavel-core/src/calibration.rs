//! Calibration of a judge against human labels: the labels people give (in the
//! store, e.g. from the web UI) and the stored record of a calibration run.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ExecutionKey;

/// The execution a label judges: an execution of a stored run.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ExecutionRef {
    /// The run id.
    pub run_id: String,
    /// Which execution of the run.
    #[serde(flatten)]
    pub key: ExecutionKey,
}

/// One person's label of one item of a label set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Label {
    /// The label set (a name people choose, e.g. `support-bot-2026-11`).
    pub label_set: String,
    /// The item's id, unique in the set (for a stored transcript, e.g.
    /// `run/case/target/repeat`).
    pub item_id: String,
    /// Who labelled it.
    pub labeller: String,
    /// The stored execution the label judges, when it is one.
    pub execution: Option<ExecutionRef>,
    /// A pairwise label's second execution (B, of the same case): `label` is
    /// then `A`, `B` or `tie` comparing `execution` (A) with it.
    #[serde(default)]
    pub pair: Option<ExecutionRef>,
    /// A categorical label: `pass`/`fail`, or `A`/`B`/`tie` for a pair.
    pub label: Option<String>,
    /// A score on a Likert scale (1-5), when the label is ordinal.
    pub score: Option<f64>,
    /// A free comment.
    pub note: Option<String>,
    /// When it was given (RFC 3339, UTC).
    pub created_at: String,
}

/// A stored calibration run: which judge, on which labelled set, how well it
/// agreed with people, and the full report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationRun {
    /// UUIDv7.
    pub id: String,
    /// When it ran (RFC 3339, UTC).
    pub created_at: String,
    /// The labelled set: a dataset name or a store label set.
    pub dataset: String,
    /// The judge: a model id, or a baseline's name.
    pub judge: String,
    /// Labelled items.
    pub items: u64,
    /// Items the judge gave a verdict on (errors and skips left out).
    pub judged: u64,
    /// Exact agreement with the human labels, 0..=1.
    pub agreement: Option<f64>,
    /// Cohen's kappa (quadratic-weighted on ordinal scales).
    pub kappa: Option<f64>,
    /// Whether the judge may gate by the calibration's own criteria (enough
    /// items, coverage, agreement and kappa; see `gavel_calibration::GatePolicy`).
    pub fit_to_gate: bool,
    /// The judge the numbers hold for; `None` on runs stored before fingerprints.
    #[serde(default)]
    pub fingerprint: Option<JudgeFingerprint>,
    /// The full report (statistics, confusion matrix, per-item verdicts).
    pub report: Value,
}

/// What a judge is, as far as its verdicts go: a calibration holds for the
/// configurations its fingerprint covers only. Built by
/// `gavel_calibration::fingerprint`, for a calibration (the template kinds it
/// judged with) and for each judge configuration a suite grades with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeFingerprint {
    /// The provider prefix (`openai`, `openai-compatible`, `local`…).
    pub provider: String,
    /// The provider's model name.
    pub model: String,
    /// Where the calls go, `host:port`: the id's base URL, else the provider's
    /// base URL variable (`OPENAI_BASE_URL`…), else its default; `None` for
    /// in-process models.
    #[serde(default)]
    pub base_url: Option<String>,
    /// The prompt template hash by judge kind (`judge`, `pairwise`…): the kinds
    /// a calibration judged with, or the one kind a suite's judge uses.
    pub templates: std::collections::BTreeMap<String, String>,
    /// Sampling temperature.
    pub temperature: f64,
    /// Answer length cap.
    pub max_tokens: u32,
    /// The pointwise score scale (`binary`, `1-5`…); `None` when no pointwise
    /// judge is involved.
    pub scale: Option<String>,
    /// The pointwise pass threshold on `scale`; `None` when no pointwise judge
    /// is involved, or (a Likert calibration: scores compared) any threshold.
    #[serde(default)]
    pub threshold: Option<f64>,
}

impl JudgeFingerprint {
    /// Why this calibration's judge does not cover `now` (one judge
    /// configuration a suite grades with), one phrase each, e.g. `temperature
    /// 1.5 ≠ 0 at calibration` or `` `rubric` judge not calibrated (the
    /// calibration covers `judge`) ``; empty when it covers it.
    pub fn differences(&self, now: &JudgeFingerprint) -> Vec<String> {
        let show = |v: Option<&str>| v.unwrap_or("none").to_owned();
        let mut out = Vec::new();
        let mut differ = |what: &str, now: String, then: String| {
            if now != then {
                out.push(format!("{what} {now} ≠ {then} at calibration"));
            }
        };
        differ("provider", now.provider.clone(), self.provider.clone());
        differ("model", now.model.clone(), self.model.clone());
        differ(
            "base URL",
            show(now.base_url.as_deref()),
            show(self.base_url.as_deref()),
        );
        differ(
            "temperature",
            now.temperature.to_string(),
            self.temperature.to_string(),
        );
        differ(
            "max_tokens",
            now.max_tokens.to_string(),
            self.max_tokens.to_string(),
        );
        if now.scale.is_some() {
            differ(
                "scale",
                show(now.scale.as_deref()),
                show(self.scale.as_deref()),
            );
        }
        if let (Some(now), Some(then)) = (now.threshold, self.threshold) {
            differ("threshold", now.to_string(), then.to_string());
        }
        for (kind, hash) in &now.templates {
            if let Some(then) = self.templates.get(kind) {
                differ(&format!("`{kind}` template"), hash.clone(), then.clone());
            }
        }
        let covered: Vec<String> = self.templates.keys().map(|k| format!("`{k}`")).collect();
        for kind in now
            .templates
            .keys()
            .filter(|k| !self.templates.contains_key(*k))
        {
            out.push(format!(
                "`{kind}` judge not calibrated (the calibration covers {})",
                if covered.is_empty() {
                    "no judge template".to_owned()
                } else {
                    covered.join(", ")
                }
            ));
        }
        out
    }
}

/// The statistic a suite gates its judge on (`judge.calibration.metric`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GateMetric {
    /// Exact agreement with people (Wilson interval).
    Agreement,
    /// Cohen's kappa (bootstrap interval): chance-corrected, so a constant judge
    /// on skewed labels scores 0.
    Kappa,
    /// Spearman's ρ, judge against human scores (bootstrap interval).
    Spearman,
    /// Kendall's τ-b, judge against human scores (bootstrap interval).
    Kendall,
}

impl GateMetric {
    /// The name as written in suite files.
    pub fn as_str(self) -> &'static str {
        match self {
            GateMetric::Agreement => "agreement",
            GateMetric::Kappa => "kappa",
            GateMetric::Spearman => "spearman",
            GateMetric::Kendall => "kendall",
        }
    }

    /// The minimum used when the suite names the metric but no `min`.
    pub fn default_min(self) -> f64 {
        match self {
            GateMetric::Agreement => 0.8,
            GateMetric::Kappa | GateMetric::Spearman => 0.6,
            GateMetric::Kendall => 0.5,
        }
    }
}

/// The fewest labelled items a calibration may rest on, unless the suite says
/// otherwise (`judge.calibration.min_items`).
pub const DEFAULT_MIN_ITEMS: usize = 30;
/// The least share of items the judge must give a verdict on, by default.
pub const DEFAULT_MIN_COVERAGE: f64 = 0.95;
/// The least exact agreement with people, by default (no `metric`).
pub const DEFAULT_MIN_AGREEMENT: f64 = 0.8;
/// The least Cohen's kappa, by default (no `metric`).
pub const DEFAULT_MIN_KAPPA: f64 = 0.4;

/// `judge.calibration`: the stored calibration runs that must qualify the
/// suite's judges, and the bar they must clear. A run id, a list of ids, or a
/// map `{id, metric, min, use_lower_bound, min_items, min_coverage,
/// min_recall}` (`id`: one id or a list).
///
/// The suite owns the bar: a calibration qualifies only if its stored figures
/// meet this policy, whatever `gavel calibrate` flags it was made with. At
/// least `min_items` labelled items (default 30) and `min_coverage` judged
/// (default 0.95), each class's recall (the share of items people gave that
/// label that the judge labelled the same) at least its `min_recall`; then
/// without a `metric` agreement at least 0.8 and kappa at least 0.4, with one
/// the metric (its 95% interval's lower bound with `use_lower_bound`) at least
/// `min` (default per metric: agreement 0.8, kappa and Spearman 0.6, Kendall
/// 0.5). Every judge configuration the suite grades with must be covered by
/// one qualifying run.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CalibrationRequirement {
    /// The calibration run ids (`gavel calibrate` prints them): one per judge
    /// configuration the suite uses.
    pub id: crate::OneOrMany,
    /// The statistic to gate on; `None`: agreement and kappa at their defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<GateMetric>,
    /// The least value of `metric` that qualifies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    /// Compare the lower bound of the metric's 95% interval with `min`.
    #[serde(default)]
    pub use_lower_bound: bool,
    /// The fewest labelled items (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<usize>,
    /// The least coverage, 0 to 1 (default 0.95).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_coverage: Option<f64>,
    /// The least recall per human label (`pass`, `fail`, `A`, `B`, `tie`,
    /// `1`…`5`), 0 to 1; none by default.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub min_recall: std::collections::BTreeMap<String, f64>,
}

impl CalibrationRequirement {
    /// A requirement naming only the run: the default bar.
    pub fn id(id: impl Into<String>) -> Self {
        CalibrationRequirement {
            id: crate::OneOrMany::One(id.into()),
            metric: None,
            min: None,
            use_lower_bound: false,
            min_items: None,
            min_coverage: None,
            min_recall: std::collections::BTreeMap::new(),
        }
    }

    /// The run ids.
    pub fn ids(&self) -> &[String] {
        self.id.as_slice()
    }

    /// The metric's minimum: `min`, else the metric's default.
    pub fn threshold(&self) -> Option<f64> {
        self.metric.map(|m| self.min.unwrap_or(m.default_min()))
    }

    fn validate(self) -> Result<Self, String> {
        if self.ids().is_empty() || self.ids().iter().any(|id| id.trim().is_empty()) {
            return Err("`id` must name a calibration run (or a list of them)".into());
        }
        if self.metric.is_none() && (self.min.is_some() || self.use_lower_bound) {
            return Err(
                "`min` and `use_lower_bound` need `metric` (agreement, kappa, spearman or kendall)"
                    .into(),
            );
        }
        if let Some(min) = self.min
            && !(-1.0..=1.0).contains(&min)
        {
            return Err(format!("`min` {min} must be between -1 and 1"));
        }
        let share = |what: String, v: f64| {
            if (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(format!("`{what}` {v} must be between 0 and 1"))
            }
        };
        if let Some(c) = self.min_coverage {
            share("min_coverage".into(), c)?;
        }
        for (label, r) in &self.min_recall {
            share(format!("min_recall.{label}"), *r)?;
        }
        Ok(self)
    }
}

/// The map form, read with its own field checks.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RequirementFields {
    id: crate::OneOrMany,
    #[serde(default)]
    metric: Option<GateMetric>,
    #[serde(default)]
    min: Option<f64>,
    #[serde(default)]
    use_lower_bound: bool,
    #[serde(default)]
    min_items: Option<usize>,
    #[serde(default)]
    min_coverage: Option<f64>,
    #[serde(default)]
    min_recall: std::collections::BTreeMap<String, f64>,
}

impl<'de> Deserialize<'de> for CalibrationRequirement {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{
            Error, MapAccess, SeqAccess, Visitor, value::MapAccessDeserializer,
            value::SeqAccessDeserializer,
        };

        struct Form;
        impl<'de> Visitor<'de> for Form {
            type Value = CalibrationRequirement;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a calibration run id, a list of them, or a map with `id` and optionally `metric`, `min`, `use_lower_bound`, `min_items`, `min_coverage` and `min_recall`")
            }

            fn visit_str<E: Error>(self, v: &str) -> Result<Self::Value, E> {
                CalibrationRequirement::id(v).validate().map_err(E::custom)
            }

            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                let ids = Vec::<String>::deserialize(SeqAccessDeserializer::new(seq))?;
                let mut req = CalibrationRequirement::id("");
                req.id = crate::OneOrMany::Many(ids);
                req.validate().map_err(A::Error::custom)
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                let f = RequirementFields::deserialize(MapAccessDeserializer::new(map))?;
                CalibrationRequirement {
                    id: f.id,
                    metric: f.metric,
                    min: f.min,
                    use_lower_bound: f.use_lower_bound,
                    min_items: f.min_items,
                    min_coverage: f.min_coverage,
                    min_recall: f.min_recall,
                }
                .validate()
                .map_err(A::Error::custom)
            }
        }
        d.deserialize_any(Form)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirement_reads_a_string_a_list_or_a_map_and_names_bad_fields() {
        let plain: CalibrationRequirement = serde_json::from_str(r#""run-1""#).unwrap();
        assert_eq!(plain, CalibrationRequirement::id("run-1"));
        let list: CalibrationRequirement = serde_json::from_str(r#"["a", "b"]"#).unwrap();
        assert_eq!(list.ids(), ["a", "b"]);
        let full: CalibrationRequirement = serde_json::from_str(
            r#"{"id": ["run-1", "run-2"], "metric": "kappa", "min": 0.6, "use_lower_bound": true,
                "min_items": 50, "min_coverage": 0.9, "min_recall": {"fail": 0.8}}"#,
        )
        .unwrap();
        assert_eq!(full.metric, Some(GateMetric::Kappa));
        assert_eq!(full.threshold(), Some(0.6));
        assert!(full.use_lower_bound);
        assert_eq!((full.min_items, full.min_coverage), (Some(50), Some(0.9)));
        assert_eq!(full.min_recall["fail"], 0.8);
        assert_eq!(full.ids().len(), 2);
        let bad = |json: &str| {
            serde_json::from_str::<CalibrationRequirement>(json)
                .unwrap_err()
                .to_string()
        };
        assert!(bad(r#"{"id": "r", "metric": "f1"}"#).contains("unknown variant `f1`"));
        assert!(bad(r#"{"id": "r", "mni": 1}"#).contains("unknown field `mni`"));
        assert!(bad(r#"{"id": "r", "min": 0.5}"#).contains("need `metric`"));
        assert!(bad(r#"{"id": "r", "metric": "kappa", "min": 5}"#).contains("between -1 and 1"));
        assert!(bad(r#"{"id": "r", "min_coverage": 2}"#).contains("`min_coverage` 2"));
        assert!(bad(r#"{"id": "r", "min_recall": {"fail": -1}}"#).contains("`min_recall.fail` -1"));
        assert!(bad("[]").contains("must name a calibration run"));
        assert!(bad("3").contains("a calibration run id"));
    }

    fn print() -> JudgeFingerprint {
        JudgeFingerprint {
            provider: "openai".into(),
            model: "gpt-5-mini".into(),
            base_url: Some("api.openai.com:443".into()),
            templates: [("judge".to_owned(), "aaaa".to_owned())].into(),
            temperature: 0.0,
            max_tokens: 1024,
            scale: Some("binary".into()),
            threshold: Some(1.0),
        }
    }

    #[test]
    fn differences_name_each_part_and_uncovered_kinds() {
        let then = print();
        let mut now = print();
        assert!(then.differences(&now).is_empty());
        now.temperature = 1.5;
        now.templates.insert("judge".into(), "bbbb".into());
        now.scale = Some("1-5".into());
        now.threshold = Some(4.0);
        now.base_url = Some("127.0.0.1:8080".into());
        assert_eq!(
            then.differences(&now),
            [
                "base URL 127.0.0.1:8080 ≠ api.openai.com:443 at calibration",
                "temperature 1.5 ≠ 0 at calibration",
                "scale 1-5 ≠ binary at calibration",
                "threshold 4 ≠ 1 at calibration",
                "`judge` template bbbb ≠ aaaa at calibration",
            ]
        );
        // A pairwise use of the same model: the scale does not apply, and the
        // pointwise calibration does not cover the pairwise template.
        let mut pairwise = print();
        pairwise.scale = None;
        pairwise.threshold = None;
        pairwise.templates = [("pairwise".to_owned(), "cccc".to_owned())].into();
        assert_eq!(
            then.differences(&pairwise),
            ["`pairwise` judge not calibrated (the calibration covers `judge`)"]
        );
        // A Likert calibration (any threshold) covers a 1-5 judge at 3.
        let mut likert = print();
        likert.scale = Some("1-5".into());
        likert.threshold = None;
        let mut at3 = print();
        at3.scale = Some("1-5".into());
        at3.threshold = Some(3.0);
        assert!(likert.differences(&at3).is_empty());
    }
}
