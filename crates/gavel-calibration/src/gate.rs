//! Whether stored calibration runs qualify every judge a suite grades with.

use gavel_checks::{JudgeUse, TemplateKind};
use gavel_core::{CalibrationRequirement, CalibrationRun, GateMetric, JudgeSettings};
use gavel_stats::Interval;
use serde::Deserialize;

use crate::policy::below;
use crate::{ClassRecall, GatePolicy};

/// Why a suite's judges may not gate.
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
    /// Judges the suite grades with that no named run qualifies.
    #[error("judge.calibration `{ids}`: {}", uncalibrated.iter().map(ToString::to_string).collect::<Vec<_>>().join(" | "))]
    Judges {
        /// The run ids the suite named.
        ids: String,
        /// Each judge without a qualifying calibration.
        uncalibrated: Vec<Uncalibrated>,
    },
}

/// One judge configuration no named calibration run qualifies, and why each
/// run does not.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{judge}: {}", reasons.join("; "))]
pub struct Uncalibrated {
    /// The judge: model, template kind, scale and threshold, and where it is used.
    pub judge: String,
    /// Per run, why it does not qualify this judge.
    pub reasons: Vec<String>,
}

/// The part of a stored report the gate reads.
#[derive(Deserialize)]
struct Figures {
    items: usize,
    judged: usize,
    #[serde(default)]
    recall: Vec<ClassRecall>,
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

/// Why `run`'s stored figures do not meet the suite's `requirement` (its
/// policy, [`GatePolicy::of`]); empty when they do. The flags the run was made
/// with play no part, nor which judge the run covers.
pub fn shortfalls(run: &CalibrationRun, requirement: &CalibrationRequirement) -> Vec<String> {
    let figures: Figures = match serde_json::from_value(run.report.clone()) {
        Ok(f) => f,
        Err(e) => {
            return vec![format!(
                "its report lacks coverage and intervals ({e}); run `gavel calibrate` again"
            )];
        }
    };
    let policy = GatePolicy::of(requirement);
    match (requirement.metric, requirement.threshold()) {
        (Some(metric), Some(min)) => {
            let mut reasons = policy.shortfalls(figures.items, figures.judged, &figures.recall);
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
        _ => policy.judge(
            figures.items,
            figures.judged,
            &figures.recall,
            figures.agreement,
            figures.kappa,
        ),
    }
}

/// A judge the gate must find a calibration for.
struct Wanted<'a> {
    /// How it is named in the gate's reason.
    name: String,
    /// Its model id, `None` when the suite has none.
    model: Option<&'a str>,
    /// Its template kind; `None`: the suite's judge as such, compared on the
    /// kinds each run covers.
    kind: Option<TemplateKind>,
    scored: Option<(gavel_core::Scale, Option<f64>)>,
}

/// The judges `uses` name (each with the first case using it), their models
/// resolved to `default_model`; the suite's judge itself when none is used.
fn wanted<'a>(uses: &'a [(String, JudgeUse)], default_model: Option<&'a str>) -> Vec<Wanted<'a>> {
    let show =
        |m: Option<&str>| m.map_or_else(|| "(none)".to_owned(), gavel_core::secrets::mask_url);
    if uses.is_empty() {
        return vec![Wanted {
            name: format!("the suite's judge {}", show(default_model)),
            model: default_model,
            kind: None,
            scored: None,
        }];
    }
    uses.iter()
        .map(|(case, u)| {
            let model = u.model.as_deref().or(default_model);
            let mut how = format!("`{}`", u.kind.as_str());
            if let (Some(scale), Some(threshold)) = (u.scale, u.threshold) {
                how.push_str(&format!(
                    ", scale {}, threshold {threshold}",
                    scale.as_str()
                ));
            }
            Wanted {
                name: format!(
                    "judge {} ({how}; {} in case `{case}`)",
                    show(model),
                    u.check
                ),
                model,
                kind: Some(u.kind),
                scored: u.scale.map(|s| (s, u.threshold)),
            }
        })
        .collect()
}

/// Whether `runs` (those the suite's `requirement` names) qualify every judge
/// configuration the suite grades with: `uses`, each with the first case
/// using it (a use without a model is the run's default judge,
/// `default_model`); with no judged check, the suite's judge itself, on the
/// template kinds each run covers. A judge is qualified by a run whose
/// fingerprint covers it (same model, base URL, temperature, token cap, the
/// judge's template kind with the same hash, scale and threshold) and whose
/// stored figures meet the suite's policy. The error names every judge
/// without one, and why each run falls short.
pub fn check_calibration(
    runs: &[CalibrationRun],
    requirement: &CalibrationRequirement,
    uses: &[(String, JudgeUse)],
    default_model: Option<&str>,
    settings: &JudgeSettings,
) -> Result<(), NotCalibrated> {
    let fit: Vec<Vec<String>> = runs.iter().map(|r| shortfalls(r, requirement)).collect();
    let mut uncalibrated = Vec::new();
    for judge in wanted(uses, default_model) {
        let mut reasons = Vec::new();
        let Some(model) = judge.model else {
            reasons.push("no judge model (set `judge.model` or give `--judge`)".to_owned());
            uncalibrated.push(Uncalibrated {
                judge: judge.name,
                reasons,
            });
            continue;
        };
        let mut qualified = false;
        for (run, unfit) in runs.iter().zip(&fit) {
            let Some(then) = &run.fingerprint else {
                reasons.push(format!(
                    "run `{}` records no judge fingerprint (it predates them); run `gavel calibrate` again",
                    run.id
                ));
                continue;
            };
            let kinds: Vec<TemplateKind> = match judge.kind {
                Some(kind) => vec![kind],
                None => then
                    .templates
                    .keys()
                    .filter_map(|k| TemplateKind::parse(k))
                    .collect(),
            };
            let now = match crate::fingerprint(model, settings, &kinds, judge.scored) {
                Ok(now) => now,
                Err(e) => {
                    reasons.push(e.to_string());
                    break;
                }
            };
            let differences = then.differences(&now);
            if !differences.is_empty() {
                reasons.push(format!(
                    "run `{}`: not calibrated: {}",
                    run.id,
                    differences.join(", ")
                ));
            } else if !unfit.is_empty() {
                reasons.push(format!(
                    "run `{}` on {}: not fit to gate: {}",
                    run.id,
                    run.dataset,
                    unfit.join(", ")
                ));
            } else {
                qualified = true;
                break;
            }
        }
        if !qualified {
            uncalibrated.push(Uncalibrated {
                judge: judge.name,
                reasons,
            });
        }
    }
    if uncalibrated.is_empty() {
        Ok(())
    } else {
        Err(NotCalibrated::Judges {
            ids: requirement.ids().join(", "),
            uncalibrated,
        })
    }
}

#[cfg(test)]
mod tests {
    use gavel_core::CalibrationRequirement as Req;
    use gavel_core::Scale;

    use super::*;
    use crate::{ItemVerdict, Record, Report};

    const MODEL: &str = "openai:gpt-5-mini";

    /// `n` binary items, the first `fails` labelled fail; the judge says `said`
    /// on each (`None`: an abstention); reported by `policy`.
    fn run_by(
        n: usize,
        fails: usize,
        said: impl Fn(usize) -> Option<&'static str>,
        policy: &GatePolicy,
    ) -> CalibrationRun {
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
        let report = Report::new("set", MODEL, &records, &verdicts, policy).unwrap();
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
                crate::fingerprint(
                    MODEL,
                    &JudgeSettings::default(),
                    &[TemplateKind::Judge],
                    Some((Scale::ZeroToOne, Some(0.7))),
                )
                .unwrap(),
            ),
            report: serde_json::to_value(&report).unwrap(),
        }
    }

    fn run(n: usize, fails: usize, said: impl Fn(usize) -> Option<&'static str>) -> CalibrationRun {
        run_by(n, fails, said, &GatePolicy::default())
    }

    /// A pointwise judge on the default scale, by the default model.
    fn pointwise() -> JudgeUse {
        JudgeUse {
            model: None,
            kind: TemplateKind::Judge,
            scale: Some(Scale::ZeroToOne),
            threshold: Some(0.7),
            check: "judge \"c\"".into(),
        }
    }

    fn check_uses(
        run: &CalibrationRun,
        req: &Req,
        uses: &[JudgeUse],
        settings: &JudgeSettings,
    ) -> Result<(), NotCalibrated> {
        let uses: Vec<(String, JudgeUse)> =
            uses.iter().map(|u| ("a".to_owned(), u.clone())).collect();
        check_calibration(std::slice::from_ref(run), req, &uses, Some(MODEL), settings)
    }

    fn check(run: &CalibrationRun, req: &Req) -> Result<(), NotCalibrated> {
        check_uses(run, req, &[pointwise()], &JudgeSettings::default())
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
        let default = JudgeSettings::default();
        assert_eq!(check(&good, &req), Ok(()));
        let other = check_calibration(
            std::slice::from_ref(&good),
            &req,
            &[("a".into(), pointwise())],
            Some("openai:gpt-5"),
            &default,
        );
        let err = other.unwrap_err().to_string();
        assert!(
            err.contains("run `cal`: not calibrated: model gpt-5 ≠ gpt-5-mini at calibration"),
            "{err}"
        );
        let hot = JudgeSettings {
            temperature: Some(1.5),
            ..JudgeSettings::default()
        };
        let err = check_uses(&good, &req, &[pointwise()], &hot).unwrap_err();
        assert!(
            err.to_string()
                .contains("not calibrated: temperature 1.5 ≠ 0 at calibration"),
            "{err}"
        );
        let mut old = good.clone();
        old.fingerprint = None;
        let err = check(&old, &req).unwrap_err().to_string();
        assert!(err.contains("predates them"), "{err}");
        let none = check_calibration(
            std::slice::from_ref(&good),
            &req,
            &[("a".into(), pointwise())],
            None,
            &default,
        );
        assert!(none.unwrap_err().to_string().contains("no judge model"));
    }

    #[test]
    fn every_judge_the_suite_grades_with_needs_a_calibration() {
        let good = run(40, 20, |i| Some(if i < 20 { "fail" } else { "pass" }));
        let req = Req::id("cal");
        let default = JudgeSettings::default();
        let own_model = JudgeUse {
            model: Some("openai:gpt-5".into()),
            ..pointwise()
        };
        let own_threshold = JudgeUse {
            threshold: Some(0.5),
            ..pointwise()
        };
        let own_scale = JudgeUse {
            scale: Some(Scale::OneToFive),
            threshold: Some(4.0),
            ..pointwise()
        };
        let pairwise = JudgeUse {
            kind: TemplateKind::Pairwise,
            scale: None,
            threshold: None,
            check: "pairwise vs b".into(),
            ..pointwise()
        };
        let rubric = JudgeUse {
            kind: TemplateKind::Rubric,
            scale: None,
            threshold: None,
            check: "rubric".into(),
            ..pointwise()
        };
        for (escape, why) in [
            (&own_model, "model gpt-5 ≠ gpt-5-mini"),
            (&own_threshold, "threshold 0.5 ≠ 0.7"),
            (&own_scale, "scale 1-5 ≠ 0-1"),
            (
                &pairwise,
                "`pairwise` judge not calibrated (the calibration covers `judge`)",
            ),
            (&rubric, "`rubric` judge not calibrated"),
        ] {
            let err = check_uses(&good, &req, &[pointwise(), escape.clone()], &default)
                .unwrap_err()
                .to_string();
            assert!(err.contains(why), "{err}");
            assert!(err.contains(&escape.check), "names the check: {err}");
            assert_eq!(err.matches(" | ").count(), 0, "one judge only: {err}");
        }
        // No judged check at all: the suite's judge itself is compared.
        assert_eq!(check_uses(&good, &req, &[], &default), Ok(()));
    }

    #[test]
    fn the_suite_sets_the_bar_not_the_calibrate_flags() {
        // Made with `--min-coverage 0 --min-items 1`: fit by its own report...
        let lax = GatePolicy {
            min_items: 1,
            min_coverage: 0.0,
            ..GatePolicy::default()
        };
        let abstaining = run_by(
            20,
            10,
            |i| (!(3..10).contains(&i)).then_some(if i < 10 { "fail" } else { "pass" }),
            &lax,
        );
        assert!(abstaining.fit_to_gate);
        // ...but not by the suite's default bar.
        let err = check(&abstaining, &Req::id("cal")).unwrap_err().to_string();
        assert!(err.contains("only 20 labelled items; at least 30"), "{err}");
        assert!(err.contains("coverage 65.0%"), "{err}");
        // The suite may lower or raise its own bar, per-class recall included.
        let mut req = Req::id("cal");
        req.min_items = Some(20);
        req.min_coverage = Some(0.6);
        assert_eq!(check(&abstaining, &req), Ok(()));
        // Lets 3 of 10 failures through: recall of `fail` 70%.
        let lenient = run(100, 10, |i| Some(if i < 7 { "fail" } else { "pass" }));
        assert_eq!(check(&lenient, &Req::id("cal")), Ok(()));
        let mut strict = Req::id("cal");
        strict.min_recall.insert("fail".into(), 0.9);
        let err = check(&lenient, &strict).unwrap_err().to_string();
        assert!(
            err.contains("recall of `fail` 70.0% (7 of 10) is under 90.0%"),
            "{err}"
        );
    }
}
