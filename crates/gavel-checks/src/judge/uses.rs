//! Which judge configurations a compiled check grades with: what a suite's
//! calibration gate must bind ([`CheckPlan::judge_uses`](crate::CheckPlan::judge_uses)).

use gavel_core::Scale;

use super::{Material, TemplateKind};

/// One judge configuration a check grades with: its model (`None`: the run's
/// default judge), the prompt template kind, and for pointwise judges the scale
/// and pass threshold.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeUse {
    /// The check's own `model`; `None`: the run's default judge.
    pub model: Option<String>,
    /// The prompt template the judge is asked with.
    pub kind: TemplateKind,
    /// Pointwise judges: the score scale.
    pub scale: Option<Scale>,
    /// Pointwise judges: the pass threshold on the scale.
    pub threshold: Option<f64>,
    /// The check's display name, to say which check uses it.
    pub check: String,
}

impl JudgeUse {
    /// The use of `material`'s model and template by `check`.
    pub(crate) fn of(material: &Material, check: &str) -> JudgeUse {
        JudgeUse::unscored(material.model.clone(), material.template.kind(), check)
    }

    /// `check`'s use of `model` (`None`: the default judge) with a `kind`
    /// template, with no scale or threshold (comparisons, extractions).
    pub(crate) fn unscored(model: Option<String>, kind: TemplateKind, check: &str) -> JudgeUse {
        JudgeUse {
            model,
            kind,
            scale: None,
            threshold: None,
            check: check.to_owned(),
        }
    }

    /// The same use with a pointwise `scale` and `threshold`.
    pub(crate) fn scored(mut self, scale: Scale, threshold: f64) -> JudgeUse {
        self.scale = Some(scale);
        self.threshold = Some(threshold);
        self
    }

    /// Whether `other` is the same configuration (the check aside).
    pub fn same_judge(&self, other: &JudgeUse) -> bool {
        self.model == other.model
            && self.kind == other.kind
            && self.scale == other.scale
            && self.threshold == other.threshold
    }
}
