//! Whether a stored calibration run qualifies a suite's judge to gate.

use gavel_checks::TemplateKind;
use gavel_core::{CalibrationRequirement, CalibrationRun, GateMetric, JudgeSettings};
use gavel_stats::Interval;
use serde::Deserialize;

use crate::GatePolicy;
use crate::policy::below;

/// Why a suite's judge may not gate: each says which calibration run and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum NotCalibrated {
    /// The store holds no such run.
    #[error(
        "judge.calibration `{id}`: no such calibration run in the store (run `gavel calibrate` first)"
    )]
    Missing {
        /// The run id the suite named.
        id: String,
    },
    /// The suite has no judge model, or its judge cannot be fingerprinted.
    #[error("judge.calibration `{id}`: not calibrated: {reason}")]
    NoJudge {
        /// The run id.
        id: String,
        /// What is missing or wrong.
        reason: String,
    },
    /// The run was stored before judge fingerprints: it binds no judge.
    #[error(
        "judge.calibration `{id}`: not calibrated: the run records no judge fingerprint (it predates them); run `gavel calibrate` again"
    )]
    Unbound {
        /// The run id.
        id: String,
    },
    /// The suite's judge is not the calibrated one.
    #[error("judge.calibration `{id}`: not calibrated: {}", differences.join("; "))]
    JudgeDiffers {
        /// The run id.
        id: String,
        /// One phrase per difference, e.g. `temperature 1.5 ≠ 0 at calibration`.
        differences: Vec<String>,
    },
    /// The judge is the calibrated one but the calibration does not qualify it.
    #[error("judge.calibration `{id}` on {dataset}: not fit to gate: {}", reasons.join("; "))]
    NotFit {
        /// The run id.
        id: String,
        /// The labelled set of the run.
        dataset: String,
        /// One reason each.
        reasons: Vec<String>,
    },
}

/// The part of a stored report the gate reads.
#[derive(Deserialize)]
struct Figures {
    items: usize,
    judged: usize,
    policy: GatePolicy,
    not_fit: Vec<String>,
    agreement: Option<f64>,
    agreement_ci: Option<Interval>,
    kappa: Option<f64>,
    kappa_ci: Option<Interval>,
    spearman: Option<f64>,
    spearman_ci: Option<Interval>,
    kendall: Option<f64>,
    kendall_ci: Option<Interval>,
}

impl Figures {
    fn metric(&self, metric: GateMetric) -> (Option<f64>, Option<Interval>) {
        match metric {
            GateMetric::Agreement => (self.agreement, self.agreement_ci),
            GateMetric::Kappa => (self.kappa, self.kappa_ci),
            GateMetric::Spearman => (self.spearman, self.spearman_ci),
            GateMetric::Kendall => (self.kendall, self.kendall_ci),
        }
    }
}

/// Whether `run` qualifies the judge `model` under the suite's `settings`, as
/// `requirement` asks: the run's judge fingerprint must match the suite's (the
/// error names each difference), and then either the run's own verdict (a plain
/// id) or the requirement's metric decides. A metric still needs the run's
/// minimum items and coverage; with `use_lower_bound` its 95% interval's lower
/// bound must reach the minimum.
pub fn check_calibration(
    run: &CalibrationRun,
    requirement: &CalibrationRequirement,
    model: Option<&str>,
    settings: &JudgeSettings,
) -> Result<(), NotCalibrated> {
    let id = requirement.id.clone();
    let Some(model) = model else {
        return Err(NotCalibrated::NoJudge {
            id,
            reason: "the suite has no judge model".into(),
        });
    };
    let now = crate::fingerprint(model, settings, &TemplateKind::ALL).map_err(|e| {
        NotCalibrated::NoJudge {
            id: id.clone(),
            reason: e.to_string(),
        }
    })?;
    let Some(then) = &run.fingerprint else {
        return Err(NotCalibrated::Unbound { id });
    };
    let differences = then.differences(&now);
    if !differences.is_empty() {
        return Err(NotCalibrated::JudgeDiffers { id, differences });
    }
    let not_fit = |reasons| NotCalibrated::NotFit {
        id: id.clone(),
        dataset: run.dataset.clone(),
        reasons,
    };
    let figures: Figures = serde_json::from_value(run.report.clone()).map_err(|e| {
        not_fit(vec![format!(
            "its report lacks coverage and intervals ({e}); run `gavel calibrate` again"
        )])
    })?;
    let reasons = match (requirement.metric, requirement.threshold()) {
        (Some(metric), Some(min)) => {
            let mut reasons = figures.policy.shortfalls(figures.items, figures.judged);
            let (value, interval) = figures.metric(metric);
            let (what, value) = if requirement.use_lower_bound {
                let low = interval.map(|i| i.low);
                (format!("{} 95% lower bound", metric.as_str()), low)
            } else {
                (metric.as_str().to_owned(), value)
            };
            reasons.extend(below(&what, value, min));
            reasons
        }
        _ if run.fit_to_gate => Vec::new(),
        _ if figures.not_fit.is_empty() => vec!["the calibration run was not fit to gate".into()],
        _ => figures.not_fit,
    };
    if reasons.is_empty() {
        Ok(())
    } else {
        Err(not_fit(reasons))
    }
}

#[cfg(test)]
mod tests {
    use gavel_core::CalibrationRequirement as Req;

    use super::*;
    use crate::{ItemVerdict, Record, Report};

    const MODEL: &str = "openai:gpt-5-mini";

    /// `n` binary items, the first `fails` labelled fail; the judge says `said`
    /// on each (`None`: an abstention).
    fn run(n: usize, fails: usize, said: impl Fn(usize) -> Option<&'static str>) -> CalibrationRun {
        let records: Vec<Record> = (0..n)
            .map(|i| {
                serde_json::from_value(serde_json::json!({
                    "id": format!("r{i}"), "task": "pointwise", "criterion": "c", "input": "i",
                    "response": "r", "human_label": if i < fails { "fail" } else { "pass" },
                    "scale": {"type": "binary", "labels": ["pass", "fail"]}
                }))
                .unwrap()
            })
            .collect();
        let verdicts: Vec<ItemVerdict> = (0..n)
            .map(|i| ItemVerdict {
                label: said(i).map(str::to_owned),
                score: None,
                orders: None,
                error: said(i).is_none().then(|| "error: HTTP 500".to_owned()),
                reasoning: None,
                cost_usd: None,
            })
            .collect();
        let report =
            Report::new("set", MODEL, &records, &verdicts, &GatePolicy::default()).unwrap();
        CalibrationRun {
            id: "cal".into(),
            created_at: "2026-11-25T00:00:00Z".into(),
            dataset: "set".into(),
            judge: MODEL.into(),
            items: report.items as u64,
            judged: report.judged as u64,
            agreement: report.agreement,
            kappa: report.kappa,
            fit_to_gate: report.fit_to_gate,
            fingerprint: Some(
                crate::fingerprint(MODEL, &JudgeSettings::default(), &[TemplateKind::Judge])
                    .unwrap(),
            ),
            report: serde_json::to_value(&report).unwrap(),
        }
    }

    fn check(run: &CalibrationRun, req: &Req) -> Result<(), NotCalibrated> {
        check_calibration(run, req, Some(MODEL), &JudgeSettings::default())
    }

    #[test]
    fn an_abstaining_judge_is_not_fit_however_well_it_agrees() {
        // Right on every pass, silent on every fail: 100% agreement where it spoke.
        let cal = run(100, 50, |i| (i >= 50).then_some("pass"));
        let report: serde_json::Value = cal.report.clone();
        assert_eq!(report["agreement"], 1.0);
        assert_eq!(report["coverage"], 0.5);
        assert_eq!(report["agreement_all_items"], 0.5);
        assert!(!cal.fit_to_gate);
        let err = check(&cal, &Req::id("cal")).unwrap_err().to_string();
        assert!(
            err.contains("not fit to gate: coverage 50.0% (50 of 100 items judged) is under 95.0%"),
            "{err}"
        );
        let mut by_agreement = Req::id("cal");
        by_agreement.metric = Some(GateMetric::Agreement);
        let err = check(&cal, &by_agreement).unwrap_err().to_string();
        assert!(
            err.contains("coverage 50.0%"),
            "a metric does not waive coverage: {err}"
        );
    }

    #[test]
    fn a_constant_judge_fails_the_kappa_gate_and_lower_bounds_bite() {
        // 88 fails, 12 passes, and the judge always says fail: 88% agreement, kappa 0.
        let constant = run(100, 88, |_| Some("fail"));
        assert_eq!(constant.kappa, Some(0.0));
        let mut kappa = Req::id("cal");
        kappa.metric = Some(GateMetric::Kappa);
        kappa.min = Some(0.6);
        let err = check(&constant, &kappa).unwrap_err().to_string();
        assert!(err.contains("kappa 0.000 is under 0.6"), "{err}");
        let mut agreement = Req::id("cal");
        agreement.metric = Some(GateMetric::Agreement);
        assert_eq!(
            check(&constant, &agreement),
            Ok(()),
            "agreement alone is fooled"
        );
        assert!(
            check(&constant, &Req::id("cal")).is_err(),
            "the default needs kappa too"
        );

        // 95 of 100 right: agreement 0.95, Wilson lower bound ≈ 0.888.
        let good = run(100, 50, |i| {
            Some(if (i < 50) == (i % 20 != 0) {
                "fail"
            } else {
                "pass"
            })
        });
        assert_eq!(check(&good, &Req::id("cal")), Ok(()));
        agreement.min = Some(0.9);
        assert_eq!(check(&good, &agreement), Ok(()));
        agreement.use_lower_bound = true;
        let err = check(&good, &agreement).unwrap_err().to_string();
        assert!(err.contains("agreement 95% lower bound 0.8"), "{err}");
    }

    #[test]
    fn another_judge_or_setting_is_not_calibrated() {
        let good = run(40, 20, |i| Some(if i < 20 { "fail" } else { "pass" }));
        let req = Req::id("cal");
        let other = check_calibration(&good, &req, Some("openai:gpt-5"), &JudgeSettings::default());
        let err = other.unwrap_err().to_string();
        assert!(
            err.contains("not calibrated: model gpt-5 ≠ gpt-5-mini at calibration"),
            "{err}"
        );
        let hot = JudgeSettings {
            temperature: Some(1.5),
            ..JudgeSettings::default()
        };
        let err = check_calibration(&good, &req, Some(MODEL), &hot).unwrap_err();
        assert_eq!(
            err.to_string(),
            "judge.calibration `cal`: not calibrated: temperature 1.5 ≠ 0 at calibration"
        );
        let mut old = good.clone();
        old.fingerprint = None;
        assert!(matches!(
            check(&old, &req),
            Err(NotCalibrated::Unbound { .. })
        ));
        let none = check_calibration(&good, &req, None, &JudgeSettings::default());
        assert!(matches!(none, Err(NotCalibrated::NoJudge { .. })));
    }
}
