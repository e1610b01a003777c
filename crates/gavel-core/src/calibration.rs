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

/// What a judge is, as far as its verdicts go: a calibration holds for one
/// fingerprint only. Built by `gavel_calibration::fingerprint`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeFingerprint {
    /// The provider prefix (`openai`, `openai-compatible`, `local`…).
    pub provider: String,
    /// The provider's model name.
    pub model: String,
    /// The host of the base URL (`openai-compatible` models), without port.
    pub base_url_host: Option<String>,
    /// The prompt template hash by judge kind (`judge`, `pairwise`…). A
    /// calibration holds the kinds it used; a suite's fingerprint has them all.
    pub templates: std::collections::BTreeMap<String, String>,
    /// Sampling temperature.
    pub temperature: f64,
    /// Answer length cap.
    pub max_tokens: u32,
    /// The suite's default score scale (`judge.scale`), `None` for the built-in 0-1.
    pub scale: Option<String>,
}

impl JudgeFingerprint {
    /// How `now` differs from this fingerprint (taken at calibration), one phrase
    /// per difference, e.g. `temperature 1.5 ≠ 0 at calibration`; empty when the
    /// judge is the same. Only the template kinds the calibration used count.
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
            "base URL host",
            show(now.base_url_host.as_deref()),
            show(self.base_url_host.as_deref()),
        );
        for (kind, hash) in &self.templates {
            differ(
                &format!("`{kind}` template"),
                show(now.templates.get(kind).map(String::as_str)),
                hash.clone(),
            );
        }
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
        let scale = |s: &Option<String>| s.clone().unwrap_or_else(|| "0-1 (default)".into());
        differ("scale", scale(&now.scale), scale(&self.scale));
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

/// `judge.calibration`: the stored calibration run that must qualify the judge,
/// as a run id, or a map `{id, metric, min, use_lower_bound}`.
///
/// With only an id, the run's own verdict (`fit to gate`) decides. With a
/// `metric`, the run must still have enough items and coverage, and the metric
/// (its 95% interval's lower bound with `use_lower_bound`) must reach `min`
/// (default per metric: agreement 0.8, kappa and Spearman 0.6, Kendall 0.5).
/// Either way the run's judge fingerprint must match the suite's judge.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CalibrationRequirement {
    /// The calibration run id (`gavel calibrate` prints it).
    pub id: String,
    /// The statistic to gate on; `None`: the run's own verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<GateMetric>,
    /// The least value of `metric` that qualifies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    /// Compare the lower bound of the metric's 95% interval with `min`.
    #[serde(default)]
    pub use_lower_bound: bool,
}

impl CalibrationRequirement {
    /// A requirement naming only the run.
    pub fn id(id: impl Into<String>) -> Self {
        CalibrationRequirement {
            id: id.into(),
            metric: None,
            min: None,
            use_lower_bound: false,
        }
    }

    /// The metric's minimum: `min`, else the metric's default.
    pub fn threshold(&self) -> Option<f64> {
        self.metric.map(|m| self.min.unwrap_or(m.default_min()))
    }

    fn validate(self) -> Result<Self, String> {
        if self.id.trim().is_empty() {
            return Err("`id` must name a calibration run".into());
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
        Ok(self)
    }
}

/// The map form, read with its own field checks.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RequirementFields {
    id: String,
    #[serde(default)]
    metric: Option<GateMetric>,
    #[serde(default)]
    min: Option<f64>,
    #[serde(default)]
    use_lower_bound: bool,
}

impl<'de> Deserialize<'de> for CalibrationRequirement {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{Error, MapAccess, Visitor, value::MapAccessDeserializer};

        struct Form;
        impl<'de> Visitor<'de> for Form {
            type Value = CalibrationRequirement;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a calibration run id, or a map with `id` and optionally `metric`, `min` and `use_lower_bound`")
            }

            fn visit_str<E: Error>(self, v: &str) -> Result<Self::Value, E> {
                CalibrationRequirement::id(v).validate().map_err(E::custom)
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                let f = RequirementFields::deserialize(MapAccessDeserializer::new(map))?;
                CalibrationRequirement {
                    id: f.id,
                    metric: f.metric,
                    min: f.min,
                    use_lower_bound: f.use_lower_bound,
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
    fn requirement_reads_a_string_or_a_map_and_names_bad_fields() {
        let plain: CalibrationRequirement = serde_json::from_str(r#""run-1""#).unwrap();
        assert_eq!(plain, CalibrationRequirement::id("run-1"));
        let full: CalibrationRequirement = serde_json::from_str(
            r#"{"id": "run-1", "metric": "kappa", "min": 0.6, "use_lower_bound": true}"#,
        )
        .unwrap();
        assert_eq!(full.metric, Some(GateMetric::Kappa));
        assert_eq!(full.threshold(), Some(0.6));
        assert!(full.use_lower_bound);
        let bad = |json: &str| {
            serde_json::from_str::<CalibrationRequirement>(json)
                .unwrap_err()
                .to_string()
        };
        assert!(bad(r#"{"id": "r", "metric": "f1"}"#).contains("unknown variant `f1`"));
        assert!(bad(r#"{"id": "r", "mni": 1}"#).contains("unknown field `mni`"));
        assert!(bad(r#"{"id": "r", "min": 0.5}"#).contains("need `metric`"));
        assert!(bad(r#"{"id": "r", "metric": "kappa", "min": 5}"#).contains("between -1 and 1"));
        assert!(bad("3").contains("a calibration run id"));
    }

    fn print() -> JudgeFingerprint {
        JudgeFingerprint {
            provider: "openai".into(),
            model: "gpt-5-mini".into(),
            base_url_host: None,
            templates: [("judge".to_owned(), "aaaa".to_owned())].into(),
            temperature: 0.0,
            max_tokens: 1024,
            scale: None,
        }
    }

    #[test]
    fn differences_name_each_part() {
        let then = print();
        let mut now = print();
        now.templates.insert("pairwise".into(), "cccc".into());
        assert!(
            then.differences(&now).is_empty(),
            "unused kinds do not count"
        );
        now.temperature = 1.5;
        now.templates.insert("judge".into(), "bbbb".into());
        now.scale = Some("1-5".into());
        assert_eq!(
            then.differences(&now),
            [
                "`judge` template bbbb ≠ aaaa at calibration",
                "temperature 1.5 ≠ 0 at calibration",
                "scale 1-5 ≠ 0-1 (default) at calibration",
            ]
        );
    }
}
