//! Compiling judged checks: explicit `judge`, `rubric` and `pairwise` checks and the
//! implicit `judge` that `criteria` add.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, OnceLock};

use futures::future::BoxFuture;
use gavel_core::CheckKind;
use gavel_core::{Case, CheckSpec, CriteriaJudge, JudgeSettings, Scale, Verdict};
use serde_json::Value;

use super::{
    JudgeTemplate, Material, PairwiseSpec, PointwiseJudge, RubricJudge, SelectBestSpec,
    TemplateKind, answer::check_score,
};
use crate::check::{AwaitedCheck, Input};
use crate::error::FieldError;
use crate::finding::VerdictHead;
use crate::runtime::JudgeRuntime;
use crate::transform::OutputTransform;

/// A compiled judge of one turn.
#[derive(Debug, Clone)]
pub(crate) enum TurnJudge {
    Pointwise(PointwiseJudge),
    Rubric(RubricJudge),
    Panel(std::sync::Arc<crate::panel::Panel>),
    Metric(Box<super::metric::MetricJudge>),
}

impl AwaitedCheck for TurnJudge {
    fn name(&self) -> String {
        match self {
            TurnJudge::Pointwise(j) => j.name(),
            TurnJudge::Rubric(j) => j.name(),
            TurnJudge::Panel(p) => p.name(),
            TurnJudge::Metric(j) => j.name(),
        }
    }

    fn kind(&self) -> CheckKind {
        match self {
            TurnJudge::Pointwise(_) => super::pointwise::KIND,
            TurnJudge::Rubric(_) => super::rubric::KIND,
            TurnJudge::Panel(p) => p.kind(),
            TurnJudge::Metric(j) => j.kind(),
        }
    }

    fn judges(&self) -> Vec<super::JudgeUse> {
        let name = self.name();
        match self {
            TurnJudge::Pointwise(j) => {
                vec![super::JudgeUse::of(&j.material, &name).scored(j.scale, j.threshold)]
            }
            TurnJudge::Rubric(j) => vec![super::JudgeUse::of(&j.material, &name)],
            TurnJudge::Panel(p) => p.judges(),
            TurnJudge::Metric(j) => j.judges(&name),
        }
    }

    fn grade<'a>(
        &'a self,
        head: VerdictHead<'a>,
        input: &'a Input<'a>,
        rt: &'a JudgeRuntime<'a>,
    ) -> BoxFuture<'a, Verdict> {
        match self {
            TurnJudge::Pointwise(j) => Box::pin(j.run(head, &input.judged, rt)),
            TurnJudge::Rubric(j) => Box::pin(j.run(head, &input.judged, rt)),
            TurnJudge::Panel(p) => {
                Box::pin(p.run(head, &input.judged, input.transcript, input.rounds, rt))
            }
            TurnJudge::Metric(j) => Box::pin(j.run(head, &input.judged, rt)),
        }
    }
}

/// A compiled judged check.
pub(crate) enum Compiled {
    Turn(TurnJudge),
    Pairwise(PairwiseSpec),
    SelectBest(SelectBestSpec),
}

/// The judge templates in use: built in, or read from the suite's overrides.
#[derive(Debug, Clone)]
pub(crate) struct Templates {
    judge: JudgeTemplate,
    rubric: JudgeTemplate,
    pairwise: JudgeTemplate,
    pub(crate) choice: JudgeTemplate,
    pub(crate) step: JudgeTemplate,
    pub(crate) extract: JudgeTemplate,
    /// The metric checks' templates, by kind ([`TemplateKind::METRICS`]).
    metrics: HashMap<TemplateKind, JudgeTemplate>,
}

impl Templates {
    /// Reads `judge.templates` overrides; the error names the key and path.
    /// Without overrides, the built-in set is made once and shared: every case
    /// of a suite compiles its checks against it.
    pub(crate) fn load(
        overrides: &BTreeMap<String, String>,
    ) -> Result<Arc<Self>, (String, String, String)> {
        static BUILTIN: OnceLock<Arc<Templates>> = OnceLock::new();
        if overrides.is_empty() {
            return Ok(BUILTIN
                .get_or_init(|| Arc::new(Templates::builtin()))
                .clone());
        }
        let mut t = Templates::builtin();
        for (key, path) in overrides {
            let fail = |message: String| (key.clone(), path.clone(), message);
            let kind = TemplateKind::parse(key).ok_or_else(|| {
                let keys: Vec<&str> = TemplateKind::ALL
                    .iter()
                    .chain(&TemplateKind::METRICS)
                    .map(|k| k.as_str())
                    .collect();
                fail(format!("unknown judge template; use {}", keys.join(", ")))
            })?;
            let template = JudgeTemplate::from_file(kind, path).map_err(fail)?;
            match kind {
                TemplateKind::Judge => t.judge = template,
                TemplateKind::Rubric => t.rubric = template,
                TemplateKind::Pairwise => t.pairwise = template,
                TemplateKind::Choice => t.choice = template,
                TemplateKind::Step => t.step = template,
                TemplateKind::Extract => t.extract = template,
                TemplateKind::SelectBest | TemplateKind::GEvalSteps | TemplateKind::Metric(_) => {
                    t.metrics.insert(kind, template);
                }
            }
        }
        Ok(Arc::new(t))
    }

    fn builtin() -> Templates {
        Templates {
            judge: JudgeTemplate::builtin(TemplateKind::Judge),
            rubric: JudgeTemplate::builtin(TemplateKind::Rubric),
            pairwise: JudgeTemplate::builtin(TemplateKind::Pairwise),
            choice: JudgeTemplate::builtin(TemplateKind::Choice),
            step: JudgeTemplate::builtin(TemplateKind::Step),
            extract: JudgeTemplate::builtin(TemplateKind::Extract),
            metrics: TemplateKind::METRICS
                .into_iter()
                .map(|k| (k, JudgeTemplate::builtin(k)))
                .collect(),
        }
    }

    /// The template of a metric kind ([`TemplateKind::METRICS`]).
    pub(crate) fn metric(&self, kind: TemplateKind) -> JudgeTemplate {
        self.metrics
            .get(&kind)
            .cloned()
            .unwrap_or_else(|| JudgeTemplate::builtin(kind))
    }
}

/// Where in the case a judged check sits, and what it falls back on.
pub(crate) struct Level<'a> {
    /// The round index, `None` for the case.
    pub(crate) round: Option<usize>,
    /// The level's criteria and the field it came from.
    pub(crate) criteria: Option<(&'a str, String)>,
    /// The level's threshold (the round's, else the case's) and its field.
    pub(crate) threshold: Option<(f64, String)>,
    /// The expected output (the round's, else the case's).
    pub(crate) reference: Option<&'a Value>,
    /// The tools expected of the judged turn.
    pub(crate) expected_tools: Vec<String>,
}

pub(crate) fn field(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

fn non_empty(s: Option<&String>) -> Option<&str> {
    s.map(String::as_str).filter(|c| !c.trim().is_empty())
}

/// Checks a check's `model` (at `model_field`) names a model id.
pub(crate) fn check_model(model: Option<&String>, model_field: String) -> Result<(), FieldError> {
    match model {
        Some(m) => m
            .parse::<gavel_models::ModelId>()
            .map(|_| ())
            .map_err(|e| FieldError::new(model_field, e.to_string())),
        None => Ok(()),
    }
}

impl<'a> Level<'a> {
    /// Round `r` of the case. A single-round case's expected tools are the round's.
    pub(crate) fn round(case: &'a Case, r: usize) -> Self {
        let round = &case.rounds[r];
        let path = format!("rounds[{r}]");
        let mut expected_tools = round.expected_tools.clone();
        if case.rounds.len() == 1 {
            extend_unique(&mut expected_tools, &case.expected_tools);
        }
        Level {
            criteria: non_empty(round.criteria.as_ref())
                .map(|c| (c, field(&path, "criteria")))
                .or_else(|| non_empty(case.criteria.as_ref()).map(|c| (c, "criteria".into()))),
            threshold: round
                .threshold
                .map(|t| (t, field(&path, "threshold")))
                .or_else(|| case.threshold.map(|t| (t, "threshold".into()))),
            reference: round
                .expected_output
                .as_ref()
                .or(case.expected_output.as_ref()),
            expected_tools,
            round: Some(r),
        }
    }

    /// The case itself: the last turn, the case's criteria (else the last round's).
    pub(crate) fn case(case: &'a Case) -> Self {
        let last = case.rounds.last();
        let mut expected_tools = case.expected_tools.clone();
        if let Some(last) = last {
            extend_unique(&mut expected_tools, &last.expected_tools);
        }
        let last_path = format!("rounds[{}]", case.rounds.len().saturating_sub(1));
        Level {
            round: None,
            criteria: non_empty(case.criteria.as_ref())
                .map(|c| (c, "criteria".into()))
                .or_else(|| {
                    last.and_then(|r| non_empty(r.criteria.as_ref()))
                        .map(|c| (c, field(&last_path, "criteria")))
                }),
            threshold: case.threshold.map(|t| (t, "threshold".into())),
            reference: case
                .expected_output
                .as_ref()
                .or(last.and_then(|r| r.expected_output.as_ref())),
            expected_tools,
        }
    }

    /// The level's own criteria (not inherited), which add an implicit judge.
    pub(crate) fn own_criteria(case: &'a Case, round: Option<usize>) -> Option<&'a str> {
        match round {
            Some(r) => non_empty(case.rounds[r].criteria.as_ref()),
            None => non_empty(case.criteria.as_ref()),
        }
    }
}

fn extend_unique(into: &mut Vec<String>, more: &[String]) {
    for t in more {
        if !into.contains(t) {
            into.push(t.clone());
        }
    }
}

/// What every judged check of a case shares.
pub(crate) struct Env<'a> {
    pub(crate) templates: Arc<Templates>,
    pub(crate) scale: Scale,
    pub(crate) context: Option<&'a Value>,
    /// The case's `retrieved_context`, for the RAG metrics.
    pub(crate) retrieved_context: Option<&'a Value>,
    /// What grades a level's own `criteria`.
    criteria_judge: CriteriaJudge,
    /// The case's `transform`, which comparisons apply to the answers they compare.
    transform: Option<Arc<OutputTransform>>,
}

impl<'a> Env<'a> {
    pub(crate) fn new(
        case: &'a Case,
        settings: &JudgeSettings,
        templates: Arc<Templates>,
        transform: Option<Arc<OutputTransform>>,
    ) -> Self {
        Env {
            transform,
            templates,
            scale: settings.scale.unwrap_or(Scale::ZeroToOne),
            context: case.context.as_ref(),
            retrieved_context: case.retrieved_context.as_ref(),
            criteria_judge: case.criteria_judge.unwrap_or(CriteriaJudge::Judge),
        }
    }

    /// What a judge shows the model besides the turn: `criteria`, `reference`,
    /// the case's context, the level's expected tools, `model`, `template`.
    pub(crate) fn material(
        &self,
        criteria: String,
        reference: Option<&Value>,
        level: &Level<'_>,
        model: Option<&String>,
        template: &JudgeTemplate,
    ) -> Material {
        Material {
            criteria,
            reference: reference.cloned(),
            context: self.context.cloned(),
            expected_tools: level.expected_tools.clone(),
            model: model.cloned(),
            template: template.clone(),
        }
    }

    /// What a choice question (a `reactive` router, a `dag` node) shows the model:
    /// `question` as the criteria, the choice template.
    pub(crate) fn choice_material(
        &self,
        question: String,
        level: &Level<'_>,
        model: Option<&String>,
    ) -> Material {
        self.material(
            question,
            level.reference,
            level,
            model,
            &self.templates.choice,
        )
    }

    /// The judge that a level's own `criteria` add when no explicit judge or
    /// rubric sits on that level: pointwise, or the rubric with
    /// `criteria_judge: rubric` (its threshold on the 1-5 scale).
    pub(crate) fn implicit(
        &self,
        level: &Level<'_>,
        criteria: &str,
    ) -> Result<TurnJudge, FieldError> {
        if self.criteria_judge == CriteriaJudge::Rubric {
            let material = self.material(
                criteria.to_owned(),
                level.reference,
                level,
                None,
                &self.templates.rubric,
            );
            let threshold = level.threshold.as_ref();
            return RubricJudge::compile(material, threshold.map(|(t, _)| *t), &BTreeMap::new())
                .map(TurnJudge::Rubric)
                .map_err(|e| match threshold {
                    Some((_, at)) => FieldError::new(at.clone(), e.message),
                    None => e,
                });
        }
        let threshold = self.threshold(None, level)?;
        let material = self.material(
            criteria.to_owned(),
            level.reference,
            level,
            None,
            &self.templates.judge,
        );
        Ok(TurnJudge::Pointwise(PointwiseJudge {
            material,
            scale: self.scale,
            threshold,
            examples: Vec::new(),
        }))
    }

    /// Pass threshold on `scale`: the check's, else the level's, else the scale's
    /// default; the error names the field it came from.
    fn threshold_on(
        scale: Scale,
        own: Option<(f64, String)>,
        level: &Level<'_>,
    ) -> Result<f64, FieldError> {
        match own.or_else(|| level.threshold.clone()) {
            None => Ok(scale.default_threshold()),
            Some((t, at)) => {
                let (lo, hi) = scale.bounds();
                if t.is_finite() && (lo..=hi).contains(&t) {
                    Ok(t)
                } else {
                    Err(FieldError::new(
                        at,
                        format!(
                            "threshold {t} is outside the judge's {} scale ({lo} to {hi})",
                            scale.as_str()
                        ),
                    ))
                }
            }
        }
    }

    fn threshold(&self, own: Option<(f64, String)>, level: &Level<'_>) -> Result<f64, FieldError> {
        Self::threshold_on(self.scale, own, level)
    }

    /// An explicit judged check at `at` (`checks[2]`, `rounds[0].checks[1]`);
    /// errors carry absolute field paths.
    pub(crate) fn explicit(
        &self,
        spec: &CheckSpec,
        at: &str,
        level: &Level<'_>,
    ) -> Result<Compiled, FieldError> {
        let criteria = |own: Option<&String>| -> Result<String, FieldError> {
            non_empty(own)
                .or(level.criteria.as_ref().map(|(c, _)| *c))
                .map(str::to_owned)
                .ok_or_else(|| {
                    FieldError::new(
                        field(at, "criteria"),
                        format!(
                            "{} needs `criteria`: on the check, {}",
                            spec.kind(),
                            if level.round.is_some() {
                                "on the round or on the case"
                            } else {
                                "on the case or on its last round"
                            }
                        ),
                    )
                })
        };
        let check_model = |model: Option<&String>| check_model(model, field(at, "model"));
        match spec {
            CheckSpec::Judge {
                criteria: own,
                scale,
                threshold,
                model,
                reference,
                examples,
            } => {
                check_model(model.as_ref())?;
                let scale = scale.unwrap_or(self.scale);
                let threshold = Self::threshold_on(
                    scale,
                    threshold.map(|t| (t, field(at, "threshold"))),
                    level,
                )?;
                for (i, ex) in examples.iter().enumerate() {
                    check_score(ex.score, scale).map_err(|e| {
                        FieldError::new(field(at, &format!("examples[{i}].score")), e)
                    })?;
                }
                let shown = if *reference == Some(false) {
                    None
                } else {
                    level.reference
                };
                let material = self.material(
                    criteria(own.as_ref())?,
                    shown,
                    level,
                    model.as_ref(),
                    &self.templates.judge,
                );
                Ok(Compiled::Turn(TurnJudge::Pointwise(PointwiseJudge {
                    material,
                    scale,
                    threshold,
                    examples: examples.clone(),
                })))
            }
            CheckSpec::Rubric {
                criteria: own,
                threshold,
                weights,
                model,
            } => {
                check_model(model.as_ref())?;
                let material = self.material(
                    criteria(own.as_ref())?,
                    level.reference,
                    level,
                    model.as_ref(),
                    &self.templates.rubric,
                );
                RubricJudge::compile(material, *threshold, weights)
                    .map(|j| Compiled::Turn(TurnJudge::Rubric(j)))
                    .map_err(|e| FieldError::new(field(at, &e.field), e.message))
            }
            CheckSpec::Pairwise {
                against,
                criteria: own,
                model,
                biased_ties_pass,
            } => {
                check_model(model.as_ref())?;
                if against.target.is_some() == against.run.is_some() {
                    return Err(FieldError::new(
                        field(at, "against"),
                        "give exactly one of `target` (another target of the run) or `run` (`latest` or a run id)",
                    ));
                }
                Ok(Compiled::Pairwise(PairwiseSpec {
                    against: against.clone(),
                    criteria: non_empty(own.as_ref())
                        .or(level.criteria.as_ref().map(|(c, _)| *c))
                        .map(str::to_owned),
                    model: model.clone(),
                    round: level.round,
                    template: self.templates.pairwise.clone(),
                    biased_ties_pass: *biased_ties_pass,
                    transform: self.transform.clone(),
                    number: None,
                }))
            }
            CheckSpec::SelectBest {
                criteria: own,
                among,
                model,
            } => {
                check_model(model.as_ref())?;
                Ok(Compiled::SelectBest(SelectBestSpec {
                    among: *among,
                    criteria: non_empty(own.as_ref())
                        .or(level.criteria.as_ref().map(|(c, _)| *c))
                        .map(str::to_owned),
                    model: model.clone(),
                    round: level.round,
                    template: self.templates.metric(TemplateKind::SelectBest),
                    transform: self.transform.clone(),
                    number: None,
                }))
            }
            other => match other.metric() {
                Some((metric, spec)) => {
                    super::metric::MetricJudge::compile(metric, spec, at, self, level)
                        .map(|j| Compiled::Turn(TurnJudge::Metric(Box::new(j))))
                }
                None => Err(FieldError::new(
                    at,
                    format!("internal error: `{}` is not a judged check", other.kind()),
                )),
            },
        }
    }
}
