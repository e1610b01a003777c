//! promptfoo assertions → gavel checks (docs/PROMPTFOO.md has the table).

use std::path::Path;

use gavel_core::{CheckSpec, MetricSpec, OneOrMany};
use serde_json::Value;

use crate::Unmapped;
use crate::files::{extension, file_ref, is_code, resolve};
use crate::node::{Node, Val, read_text};
use crate::providers::model_id;
use crate::render::render;
use crate::scripts::{ScriptCtx, script};

/// promptfoo's default pass threshold of `similar`.
const SIMILAR_THRESHOLD: f64 = 0.75;
/// promptfoo's default pass threshold of `g-eval`.
const G_EVAL_THRESHOLD: f64 = 0.7;

/// What assertions are read against: the test's vars, the config's folder and
/// the grading model the test names.
pub(crate) struct AssertCtx<'a> {
    pub(crate) vars: &'a Value,
    pub(crate) base: &'a Path,
    pub(crate) grader: Option<&'a str>,
    /// The test's `options.transform` (JavaScript).
    pub(crate) transform: Option<&'a str>,
    /// The test's `threshold`: it passes on the weighted mean of its scores.
    pub(crate) threshold: Option<f64>,
    /// The test's `options.rubricPrompt` text, the criteria of an
    /// `llm-rubric` without a value.
    pub(crate) rubric: Option<&'a str>,
}

/// The checks and tags (metric names) assertions became.
#[derive(Debug, Default)]
pub(crate) struct Mapped {
    pub(crate) checks: Vec<CheckSpec>,
    pub(crate) tags: Vec<String>,
}

/// Maps one assertion into `out`; what cannot be mapped goes to `notes`.
pub(crate) fn map(node: &Node, ctx: &AssertCtx<'_>, out: &mut Mapped, notes: &mut Vec<Unmapped>) {
    let Some(kind) = node.get("type").and_then(Node::as_str) else {
        notes.push(Unmapped::new("assert without a type", node, ""));
        return;
    };
    if let Some(metric) = node.get("metric").and_then(Node::scalar_text)
        && !out.tags.contains(&metric)
    {
        out.tags.push(metric);
    }
    if kind == "assert-set" {
        assert_set(node, ctx, out, notes);
        return;
    }
    if node.get("weight").and_then(Node::as_f64) == Some(0.0) {
        // promptfoo counts a weight-0 assertion as passed and weighs its score
        // 0: it never changes the verdict.
        notes.push(Unmapped::new(
            format!("assert type '{kind}' with weight 0"),
            node,
            "promptfoo counts it as passed, so it never gates; left out",
        ));
        return;
    }
    for (key, value) in node.entries() {
        match key.as_str() {
            "type" | "value" | "threshold" | "metric" | "provider" => {}
            "transform" if kind == "javascript" => {}
            // Without a test threshold every assertion must pass, whatever
            // its weight; weight 0 is handled below.
            "weight" if value.as_f64() == Some(1.0) || value.as_f64() == Some(0.0) => {}
            "weight" if ctx.threshold.is_none() => {}
            "weight" => notes.push(Unmapped::new(
                "assert weight",
                value,
                "the test passes on a weighted score here; gavel checks are unweighted: each must pass",
            )),
            _ => notes.push(Unmapped::new(
                format!("assert field '{key}' of '{kind}'"),
                value,
                "",
            )),
        }
    }
    let (base, negate) = match kind.strip_prefix("not-") {
        Some(base) => (base, true),
        None => (kind, false),
    };
    let threshold = node.get("threshold").and_then(Node::as_f64);
    if !negate && matches!(base, "javascript" | "python") {
        let sctx = ScriptCtx {
            vars: ctx.vars,
            base: ctx.base,
            transform: ctx.transform,
        };
        match script(base, node, &sctx, threshold) {
            Ok(spec) => out.checks.push(CheckSpec::Script(spec)),
            Err(why) => notes.push(Unmapped::new(format!("assert type '{kind}'"), node, why)),
        }
        return;
    }
    let value = match node.get("value").map(|v| resolve_value(v, ctx)).transpose() {
        Ok(v) => v,
        Err(why) => {
            notes.push(Unmapped::new(
                format!("assert type '{kind}' value"),
                node,
                why,
            ));
            return;
        }
    };
    let value = match (value, kind, ctx.rubric) {
        (None, "llm-rubric", Some(rubric)) => Some(Value::String(
            render(rubric, ctx.vars).unwrap_or_else(|_| rubric.to_owned()),
        )),
        (value, _, _) => value,
    };
    let model = grader(node, ctx, notes);
    let has_context = ctx.vars.get("context").is_some();
    match check(base, negate, value.as_ref(), threshold, model, has_context) {
        Ok(checks) => out.checks.extend(checks),
        Err(why) => notes.push(Unmapped::new(format!("assert type '{kind}'"), node, why)),
    }
}

/// `assert-set`: without a threshold all must pass, as gavel's checks do.
fn assert_set(node: &Node, ctx: &AssertCtx<'_>, out: &mut Mapped, notes: &mut Vec<Unmapped>) {
    if node.get("threshold").is_some() {
        notes.push(Unmapped::new(
            "assert type 'assert-set' with a threshold",
            node,
            "gavel checks each must pass; a partial pass has no equivalent",
        ));
        return;
    }
    for child in node.get("assert").map(Node::items).unwrap_or_default() {
        map(child, ctx, out, notes);
    }
}

/// The grading model: the assertion's `provider`, else the test's.
fn grader(node: &Node, ctx: &AssertCtx<'_>, notes: &mut Vec<Unmapped>) -> Option<String> {
    let Some(provider) = node.get("provider") else {
        return ctx.grader.map(str::to_owned);
    };
    let id = provider
        .as_str()
        .or_else(|| provider.get("id").and_then(Node::as_str));
    match id.and_then(|id| model_id(id, provider.get("config"))) {
        Some(model) => Some(model),
        None => {
            notes.push(Unmapped::new(
                "assert provider",
                provider,
                "not a chat model gavel knows; the suite's judge is used",
            ));
            ctx.grader.map(str::to_owned)
        }
    }
}

/// The value with vars rendered and `file://` contents read.
fn resolve_value(node: &Node, ctx: &AssertCtx<'_>) -> Result<Value, String> {
    match &node.val {
        Val::Str(s) => {
            if let Some(reference) = file_ref(s) {
                if is_code(reference) {
                    return Err(format!(
                        "`{s}` is code, which only `javascript` and `python` assertions run"
                    ));
                }
                let paths = resolve(reference, ctx.base, node).map_err(|e| e.to_string())?;
                let path = paths.first().ok_or("no file")?;
                let text = read_text(path, &node.at()).map_err(|e| e.to_string())?;
                return match extension(path).as_str() {
                    "json" | "yaml" | "yml" => Node::parse(&text, &path.display().to_string())
                        .map(|n| n.to_json())
                        .map_err(|e| e.to_string()),
                    _ => Ok(Value::String(render(&text, ctx.vars)?)),
                };
            }
            Ok(Value::String(render(s, ctx.vars)?))
        }
        Val::Seq(items) => items.iter().map(|i| resolve_value(i, ctx)).collect(),
        _ => Ok(node.to_json()),
    }
}

fn text(v: Option<&Value>) -> Result<String, String> {
    match v {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Number(n)) => Ok(n.to_string()),
        Some(Value::Bool(b)) => Ok(b.to_string()),
        _ => Err("needs a text `value`".into()),
    }
}

/// A list, or one text (comma-separated, as promptfoo allows for `-any`/`-all`).
fn texts(v: Option<&Value>) -> Result<Vec<String>, String> {
    match v {
        Some(Value::Array(items)) => items.iter().map(|i| text(Some(i))).collect(),
        Some(Value::String(s)) => Ok(s.split(',').map(|p| p.trim().to_owned()).collect()),
        other => text(other).map(|t| vec![t]),
    }
}

fn escaped_any(values: &[String]) -> String {
    let alts: Vec<String> = values.iter().map(|v| regex::escape(v)).collect();
    format!("(?:{})", alts.join("|"))
}

fn regex(pattern: String, negate: bool) -> CheckSpec {
    CheckSpec::Regex { pattern, negate }
}

fn judge(criteria: String, threshold: Option<f64>, model: Option<String>) -> CheckSpec {
    CheckSpec::Judge {
        criteria: Some(criteria),
        scale: None,
        threshold,
        model,
        reference: None,
        examples: Vec::new(),
    }
}

/// The gavel checks of one assertion type, or why there are none.
fn check(
    kind: &str,
    negate: bool,
    value: Option<&Value>,
    threshold: Option<f64>,
    model: Option<String>,
    has_context: bool,
) -> Result<Vec<CheckSpec>, String> {
    let one = |c: CheckSpec| Ok(vec![c]);
    match (kind, negate) {
        ("equals", false) => match value {
            Some(Value::String(_) | Value::Number(_) | Value::Bool(_)) => one(CheckSpec::Equals {
                value: Some(Value::String(text(value)?)),
                ignore_case: false,
                trim: false,
            }),
            Some(v) => one(CheckSpec::Equals {
                value: Some(v.clone()),
                ignore_case: false,
                trim: false,
            }),
            None => Err("needs a `value`".into()),
        },
        ("equals", true) => one(regex(
            format!(r"\A{}\z", regex::escape(&text(value)?)),
            true,
        )),
        ("contains", false) => one(CheckSpec::Contains {
            value: OneOrMany::One(text(value)?),
        }),
        ("contains", true) => one(regex(regex::escape(&text(value)?), true)),
        ("icontains", false) => one(CheckSpec::Icontains {
            value: OneOrMany::One(text(value)?),
        }),
        ("icontains", true) => one(CheckSpec::NotContains {
            value: OneOrMany::One(text(value)?),
        }),
        ("contains-all", false) => one(CheckSpec::Contains {
            value: OneOrMany::Many(texts(value)?),
        }),
        ("icontains-all", false) => one(CheckSpec::Icontains {
            value: OneOrMany::Many(texts(value)?),
        }),
        ("contains-any", false) => one(CheckSpec::ContainsAny {
            value: OneOrMany::Many(texts(value)?),
        }),
        ("contains-any", true) => one(regex(escaped_any(&texts(value)?), true)),
        ("icontains-any", false) => one(CheckSpec::IcontainsAny {
            value: OneOrMany::Many(texts(value)?),
        }),
        ("icontains-any", true) => one(CheckSpec::NotContains {
            value: OneOrMany::Many(texts(value)?),
        }),
        ("starts-with", n) => one(regex(format!(r"\A{}", regex::escape(&text(value)?)), n)),
        ("regex", n) => {
            let pattern = text(value)?;
            regex::Regex::new(&pattern)
                .map_err(|e| format!("not a pattern gavel's regex engine accepts: {e}"))?;
            one(regex(pattern, n))
        }
        ("is-json", false) => match value {
            None => one(CheckSpec::IsJson {
                from: Default::default(),
            }),
            Some(schema @ Value::Object(_)) => one(CheckSpec::JsonSchema {
                schema: schema.clone(),
                from: Default::default(),
            }),
            Some(_) => Err("the schema must be an object (inline, or a JSON/YAML file)".into()),
        },
        ("latency", false) => match threshold {
            Some(ms) if ms.is_finite() && ms >= 0.0 => one(CheckSpec::Latency {
                max_ms: ms.round() as u64,
            }),
            _ => Err("needs a `threshold` in milliseconds".into()),
        },
        ("similar", false) => {
            let values = match value {
                Some(Value::Array(_)) => OneOrMany::Many(texts(value)?),
                _ => OneOrMany::One(text(value)?),
            };
            one(CheckSpec::Similar {
                value: Some(values),
                threshold: Some(threshold.unwrap_or(SIMILAR_THRESHOLD)),
            })
        }
        ("cost", false) => match threshold {
            Some(usd) if usd.is_finite() && usd >= 0.0 => one(CheckSpec::Cost { max_usd: usd }),
            _ => Err("needs a `threshold` in US dollars".into()),
        },
        ("llm-rubric", false) => one(judge(text(value)?, threshold, model)),
        ("conversation-relevance", false) => one(CheckSpec::TurnRelevancy(MetricSpec {
            threshold,
            model,
            ..MetricSpec::default()
        })),
        ("select-best", false) => one(CheckSpec::SelectBest {
            criteria: Some(text(value)?),
            among: Default::default(),
            model,
        }),
        ("model-graded-closedqa", false) => one(CheckSpec::ClosedQa(MetricSpec {
            criteria: Some(text(value)?),
            model,
            ..MetricSpec::default()
        })),
        ("g-eval", false) => {
            let t = Some(threshold.unwrap_or(G_EVAL_THRESHOLD));
            texts_or_one(value)?
                .into_iter()
                .map(|c| {
                    Ok(CheckSpec::GEval(MetricSpec {
                        criteria: Some(c),
                        threshold: t,
                        model: model.clone(),
                        ..MetricSpec::default()
                    }))
                })
                .collect()
        }
        ("factuality" | "model-graded-factuality", false) => {
            one(CheckSpec::Factuality(MetricSpec {
                reference: Some(Value::String(text(value)?)),
                model,
                ..MetricSpec::default()
            }))
        }
        ("context-recall" | "context-relevance" | "context-faithfulness", false)
            if !has_context =>
        {
            Err("needs `vars.context` (the retrieved context)".into())
        }
        ("context-recall", false) => one(CheckSpec::ContextRecall(MetricSpec {
            reference: Some(Value::String(text(value)?)),
            threshold,
            model,
            ..MetricSpec::default()
        })),
        ("answer-relevance" | "context-relevance" | "context-faithfulness", false) => {
            let spec = MetricSpec {
                threshold,
                model,
                ..MetricSpec::default()
            };
            one(match kind {
                "answer-relevance" => CheckSpec::AnswerRelevance(spec),
                "context-relevance" => CheckSpec::ContextRelevance(spec),
                _ => CheckSpec::ContextFaithfulness(spec),
            })
        }
        (_, true) if is_type(kind) => Err(format!("no gavel check negates '{kind}'")),
        _ => Err(why_not(kind).into()),
    }
}

/// g-eval criteria: a list, or one text (never split on commas).
fn texts_or_one(v: Option<&Value>) -> Result<Vec<String>, String> {
    match v {
        Some(Value::Array(items)) => items.iter().map(|i| text(Some(i))).collect(),
        other => text(other).map(|t| vec![t]),
    }
}

/// Whether `kind` is a promptfoo assertion type (mapped or not).
pub(crate) fn is_type(kind: &str) -> bool {
    why_not(kind) != UNKNOWN
}

const UNKNOWN: &str = "not a promptfoo assertion type gavel knows";

/// Why an assertion type has no gavel check.
fn why_not(kind: &str) -> &'static str {
    match kind {
        "equals"
        | "contains"
        | "icontains"
        | "contains-all"
        | "icontains-all"
        | "contains-any"
        | "icontains-any"
        | "starts-with"
        | "regex"
        | "is-json"
        | "latency"
        | "similar"
        | "llm-rubric"
        | "select-best"
        | "conversation-relevance"
        | "model-graded-closedqa"
        | "g-eval"
        | "factuality"
        | "model-graded-factuality"
        | "answer-relevance"
        | "context-recall"
        | "context-relevance"
        | "context-faithfulness"
        | "cost"
        | "javascript"
        | "python" => "mapped",
        "webhook" | "ruby" => {
            "gavel runs no assertion code in this language; write a `script` check"
        }
        "contains-json" | "is-sql" | "contains-sql" | "is-xml" | "contains-xml" | "is-html"
        | "contains-html" => "gavel has no check for this format (is-json reads the whole answer)",
        "rouge-n" | "bleu" | "gleu" | "meteor" | "levenshtein" | "f-score" => {
            "gavel has no n-gram or edit-distance metric; `similar` compares meaning"
        }
        "perplexity" | "perplexity-score" | "finish-reason" => {
            "gavel does not record the provider data this needs"
        }
        "is-valid-openai-function-call"
        | "is-valid-openai-tools-call"
        | "is-valid-function-call"
        | "tool-call-f1" => "use tools-called or tool-verification with the expected tools",
        "max-score" => {
            "picks the output with the best score of the other assertions; gavel's select-best asks a judge"
        }
        "moderation"
        | "guardrails"
        | "classifier"
        | "pi"
        | "is-refusal"
        | "human"
        | "word-count"
        | "search-rubric"
        | "trace-span-count"
        | "trace-span-duration"
        | "trace-error-spans" => "gavel has no equivalent check",
        _ => UNKNOWN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn negations_and_lists() {
        let v = json!(["a.b", "c"]);
        assert_eq!(
            check("contains-any", true, Some(&v), None, None, true).unwrap(),
            vec![regex(r"(?:a\.b|c)".into(), true)]
        );
        assert_eq!(
            check(
                "contains-all",
                false,
                Some(&json!("x, y")),
                None,
                None,
                true
            )
            .unwrap(),
            vec![CheckSpec::Contains {
                value: OneOrMany::Many(vec!["x".into(), "y".into()])
            }]
        );
        assert!(
            check("contains-all", true, Some(&v), None, None, true)
                .unwrap_err()
                .contains("negates")
        );
        assert!(
            check("ruby", false, None, None, None, true)
                .unwrap_err()
                .contains("code")
        );
        assert_eq!(
            check("frobnicate", false, None, None, None, true).unwrap_err(),
            UNKNOWN
        );
        assert!(check("regex", false, Some(&json!("(?<=a)b")), None, None, true).is_err());
        assert!(check("latency", false, None, None, None, true).is_err());
        assert_eq!(
            check("conversation-relevance", false, None, Some(0.8), None, true).unwrap(),
            vec![CheckSpec::TurnRelevancy(MetricSpec {
                threshold: Some(0.8),
                ..MetricSpec::default()
            })]
        );
    }
}
