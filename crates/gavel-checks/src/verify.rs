//! tool-verification: each expected call checked for tool, arguments and result,
//! with a weighted score per call and per case (seed 003's `verifyToolCalls`).

use gavel_core::CheckKind;
use gavel_core::agent_check::{ArgsMatch, ExpectedCall, ToolVerificationSpec};
use gavel_core::{ToolCall, ToolCallGrade, ToolVerifications, Turn};
use regex::Regex;
use serde_json::{Map, Value, json};

use crate::check::CodeCheck;
use crate::compiled::Schema;
use crate::error::FieldError;
use crate::finding::{Finding, merge};
use crate::json::{Key, first_difference, values_equal};
use crate::names::bracket_list;
use crate::subject::Subject;

/// A compiled tool-verification check.
pub(crate) struct VerifyCheck {
    calls: Vec<CallRule>,
    forbidden: Vec<CallRule>,
    ordered: bool,
    strict: bool,
    threshold: f64,
}

/// One expected call, compiled.
struct CallRule {
    tool: String,
    arguments: Option<Value>,
    args_match: ArgsMatch,
    schema: Option<Schema>,
    patterns: Vec<(Key, Regex)>,
    result: Option<Value>,
    weight: f64,
}

/// How one actual call measures up to one expected call.
struct Grade {
    /// Problems with the arguments (empty: correct).
    args: Vec<String>,
    /// The problem with the result, if any.
    result: Option<String>,
    /// 0..=1: the share of the checked aspects (tool, arguments, result) that hold.
    score: f64,
}

impl VerifyCheck {
    /// Compiles the spec: schemas and patterns must compile, weights be positive.
    pub(crate) fn compile(spec: &ToolVerificationSpec) -> Result<Self, FieldError> {
        if spec.calls.is_empty() && spec.forbidden.is_empty() {
            return Err(FieldError::new(
                "calls",
                "give at least one expected or forbidden call",
            ));
        }
        let threshold = spec.threshold.unwrap_or(1.0);
        if !(0.0..=1.0).contains(&threshold) {
            return Err(FieldError::new("threshold", "must be between 0 and 1"));
        }
        let calls = spec
            .calls
            .iter()
            .enumerate()
            .map(|(i, c)| CallRule::compile(c).map_err(|e| prefixed("calls", i, e)))
            .collect::<Result<_, _>>()?;
        let forbidden = spec
            .forbidden
            .iter()
            .enumerate()
            .map(|(i, c)| CallRule::compile(c).map_err(|e| prefixed("forbidden", i, e)))
            .collect::<Result<_, _>>()?;
        Ok(VerifyCheck {
            calls,
            forbidden,
            ordered: spec.ordered,
            strict: spec.strict,
            threshold,
        })
    }
}

impl CodeCheck for VerifyCheck {
    /// Display name, e.g. `tool-verification [get_listings, get_bookings]`.
    fn name(&self) -> String {
        let tools: Vec<String> = self.calls.iter().map(|c| c.tool.clone()).collect();
        let mut name = format!("tool-verification {}", bracket_list(&tools));
        if !self.forbidden.is_empty() {
            let tools: Vec<String> = self.forbidden.iter().map(|c| c.tool.clone()).collect();
            name.push_str(&format!(" forbidding {}", bracket_list(&tools)));
        }
        name
    }

    fn kind(&self) -> CheckKind {
        CheckKind::ToolVerification
    }

    /// Grades the tool calls of the targeted turns; the finding's evidence holds
    /// one entry per expected call and the weighted `score`.
    fn evaluate(&self, subject: &Subject<'_>) -> Finding {
        let turns: &[&Turn] = &subject.turns;
        let actual: Vec<&ToolCall> = turns.iter().flat_map(|t| t.tool_calls.iter()).collect();
        let mut used = vec![false; actual.len()];
        let mut last: Option<usize> = None;
        let (mut total, mut weights) = (0.0, 0.0);
        let mut per_call = Vec::new();
        let (mut missing, mut out_of_order, mut wrong) = (Vec::new(), Vec::new(), Vec::new());
        for (i, rule) in self.calls.iter().enumerate() {
            weights += rule.weight;
            let best = actual
                .iter()
                .enumerate()
                .filter(|(k, c)| !used[*k] && c.name == rule.tool)
                .map(|(k, c)| (k, rule.grade(c)))
                // Best score first; among equals, the first call after the last match.
                .min_by(|(ka, a), (kb, b)| {
                    let after = |k: &usize| !(self.ordered && last.is_some_and(|l| *k < l));
                    b.score
                        .total_cmp(&a.score)
                        .then(after(kb).cmp(&after(ka)))
                        .then(ka.cmp(kb))
                });
            let Some((k, grade)) = best else {
                missing.push(rule.tool.clone());
                per_call.push(ToolCallGrade {
                    expected: rule.tool.clone(),
                    call_index: None,
                    tool_correct: false,
                    args_correct: false,
                    result_correct: None,
                    score: 0.0,
                    problems: Vec::new(),
                    detail: Map::from_iter([("weight".to_owned(), json!(rule.weight))]),
                });
                continue;
            };
            used[k] = true;
            let in_order = !(self.ordered && last.is_some_and(|l| k < l));
            if !in_order {
                out_of_order.push(format!("{} (call #{})", rule.tool, k + 1));
            }
            last = Some(last.map_or(k, |l| l.max(k)));
            total += rule.weight * grade.score;
            let mut problems = grade.args.clone();
            problems.extend(grade.result.clone());
            if !problems.is_empty() {
                wrong.push(format!(
                    "{} (call #{}): {}",
                    rule.tool,
                    k + 1,
                    problems.join("; ")
                ));
            }
            per_call.push(ToolCallGrade {
                expected: rule.tool.clone(),
                call_index: Some(k),
                tool_correct: true,
                args_correct: grade.args.is_empty(),
                result_correct: rule.result.as_ref().map(|_| grade.result.is_none()),
                score: grade.score,
                problems,
                detail: Map::from_iter([
                    ("expected_index".to_owned(), json!(i)),
                    ("in_order".to_owned(), json!(in_order)),
                    ("weight".to_owned(), json!(rule.weight)),
                ]),
            });
        }
        let unexpected: Vec<String> = actual
            .iter()
            .enumerate()
            .filter(|(k, _)| !used[*k])
            .map(|(k, c)| format!("{} (call #{})", c.name, k + 1))
            .collect();
        let forbidden: Vec<String> = actual
            .iter()
            .enumerate()
            .filter(|(_, c)| self.forbidden.iter().any(|rule| rule.forbids(c)))
            .map(|(k, c)| format!("{} (call #{}): {}", c.name, k + 1, c.arguments))
            .collect();
        let score = match (forbidden.is_empty(), weights > 0.0) {
            (false, _) => 0.0,
            (true, true) => total / weights,
            (true, false) => 1.0,
        };
        let mut evidence = Map::from_iter([
            ("score".to_owned(), json!(score)),
            ("threshold".to_owned(), json!(self.threshold)),
            ("missing".to_owned(), json!(missing)),
            ("unexpected".to_owned(), json!(unexpected)),
            ("out_of_order".to_owned(), json!(out_of_order)),
            ("forbidden".to_owned(), json!(forbidden)),
        ]);
        let graded = ToolVerifications {
            calls: per_call,
            called: actual.iter().map(|c| c.name.clone()).collect(),
        };
        merge(&mut evidence, &graded);
        let evidence = Value::Object(evidence);
        let mut problems = Vec::new();
        if !forbidden.is_empty() {
            problems.push(format!("forbidden: {}", forbidden.join("; ")));
        }
        if !missing.is_empty() {
            problems.push(format!("missing: {}", missing.join(", ")));
        }
        problems.extend(wrong);
        if self.ordered && !out_of_order.is_empty() {
            problems.push(format!("out of order: {}", out_of_order.join(", ")));
        }
        if self.strict && !unexpected.is_empty() {
            problems.push(format!("unexpected: {}", unexpected.join(", ")));
        }
        let summary = format!("score {score:.2} (threshold {:.2})", self.threshold);
        let fails = score + 1e-9 < self.threshold
            || !forbidden.is_empty()
            || (self.ordered && !out_of_order.is_empty())
            || (self.strict && !unexpected.is_empty());
        let finding = if fails {
            Finding::fail(format!("{summary}; {}", problems.join("; ")), evidence)
        } else if problems.is_empty() {
            let mut reason = format!("{summary}: every expected call verified");
            if !unexpected.is_empty() {
                reason.push_str(&format!(" (also called: {})", unexpected.join(", ")));
            }
            Finding::pass(reason, evidence)
        } else {
            Finding::pass(format!("{summary}; {}", problems.join("; ")), evidence)
        };
        finding.scored(score, self.threshold)
    }
}

fn prefixed(list: &str, i: usize, e: FieldError) -> FieldError {
    let field = if e.field.is_empty() {
        format!("{list}[{i}]")
    } else {
        format!("{list}[{i}].{}", e.field)
    };
    FieldError::new(field, e.message)
}

impl CallRule {
    fn compile(c: &ExpectedCall) -> Result<Self, FieldError> {
        if c.tool.trim().is_empty() {
            return Err(FieldError::new("tool", "must name a tool"));
        }
        let schema = c
            .schema
            .as_ref()
            .map(|s| crate::compiled::schema(s).map_err(|e| FieldError::new("schema", e)))
            .transpose()?;
        let patterns = c
            .patterns
            .iter()
            .map(|(field, pattern)| {
                crate::compiled::regex(pattern)
                    .map(|re| (Key::new(field), re))
                    .map_err(|e| FieldError::new(format!("patterns.{field}"), e.to_string()))
            })
            .collect::<Result<_, _>>()?;
        let weight = c.weight.unwrap_or(1.0);
        if !(weight.is_finite() && weight > 0.0) {
            return Err(FieldError::new("weight", "must be a positive number"));
        }
        if c.args_match == ArgsMatch::Exact && c.arguments.is_none() {
            return Err(FieldError::new("match", "`exact` needs `arguments`"));
        }
        Ok(CallRule {
            tool: c.tool.clone(),
            arguments: c.arguments.clone(),
            args_match: c.args_match,
            schema,
            patterns,
            result: c.result.clone(),
            weight,
        })
    }

    /// Whether `call` is this (forbidden) call: its tool, with arguments and
    /// result as given.
    fn forbids(&self, call: &ToolCall) -> bool {
        call.name == self.tool && self.grade(call).score >= 1.0
    }

    /// Grades a call of the right tool.
    fn grade(&self, call: &ToolCall) -> Grade {
        let mut args = Vec::new();
        if let Some(expected) = &self.arguments {
            let ok = match self.args_match {
                ArgsMatch::Exact => values_equal(&call.arguments, expected),
                ArgsMatch::Subset => is_subset(&call.arguments, expected),
            };
            if !ok {
                let at = first_difference(&call.arguments, expected).unwrap_or_default();
                let at = if at.is_empty() { "/".to_owned() } else { at };
                let mode = match self.args_match {
                    ArgsMatch::Exact => "exactly",
                    ArgsMatch::Subset => "at least",
                };
                args.push(format!(
                    "arguments differ at `{at}` (expected {mode} {expected}, got {})",
                    call.arguments
                ));
            }
        }
        if let Some(schema) = &self.schema {
            args.extend(schema.violations(&call.arguments).take(3).map(|v| {
                format!(
                    "arguments violate the schema at `{}`: {}",
                    v.path, v.message
                )
            }));
        }
        for (key, re) in &self.patterns {
            match call.arguments.pointer(&key.pointer) {
                None => args.push(format!("argument `{}` is missing", key.written)),
                Some(v) => {
                    let text = match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    if !re.is_match(&text) {
                        args.push(format!(
                            "argument `{}` = {v} does not match /{}/",
                            key.written,
                            re.as_str()
                        ));
                    }
                }
            }
        }
        let result = self.result.as_ref().and_then(|expected| {
            let got = call.result.as_ref().unwrap_or(&Value::Null);
            (!is_subset(got, expected)).then(|| match call.result {
                None => "no result was recorded".to_owned(),
                Some(_) => format!(
                    "result differs at `{}`",
                    first_difference(got, expected).unwrap_or_default()
                ),
            })
        });
        let checks_args =
            self.arguments.is_some() || self.schema.is_some() || !self.patterns.is_empty();
        let mut aspects = 1.0;
        let mut held = 1.0;
        if checks_args {
            aspects += 1.0;
            held += f64::from(u8::from(args.is_empty()));
        }
        if self.result.is_some() {
            aspects += 1.0;
            held += f64::from(u8::from(result.is_none()));
        }
        Grade {
            args,
            result,
            score: held / aspects,
        }
    }
}

/// Whether `actual` contains `expected`: objects by key (recursively), arrays
/// element by element with equal lengths, other values by equality.
pub(crate) fn is_subset(actual: &Value, expected: &Value) -> bool {
    match (actual, expected) {
        (Value::Object(a), Value::Object(e)) => e
            .iter()
            .all(|(k, v)| a.get(k).is_some_and(|w| is_subset(w, v))),
        (Value::Array(a), Value::Array(e)) => {
            a.len() == e.len() && a.iter().zip(e).all(|(x, y)| is_subset(x, y))
        }
        _ => values_equal(actual, expected),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use gavel_core::{Status, ToolCall, Turn};
    use serde_json::{Value, json};

    use crate::testing::{case, compile_err, run_one, turn};

    fn calls(list: &[(&str, Value, Value)]) -> Turn {
        let mut t = turn(0, "done");
        t.tool_calls = list
            .iter()
            .map(|(n, a, r)| ToolCall {
                name: (*n).to_owned(),
                arguments: a.clone(),
                result: Some(r.clone()),
                ..Default::default()
            })
            .collect();
        t
    }

    const SPEC: &str = "input: q\nchecks:\n  - type: tool-verification\n    calls:\n      - tool: get_listings\n      - tool: get_revenue_data\n        arguments: {listing_id: 3}\n        patterns: {month: '^2026-\\d\\d$'}\n        schema: {type: object, required: [listing_id]}\n        result: {total: 4680}\n        weight: 3\n";

    #[test]
    fn right_calls_pass_with_a_full_score() {
        let v = run_one(
            &case(SPEC),
            vec![calls(&[
                ("get_listings", json!({}), json!([])),
                (
                    "get_revenue_data",
                    json!({"listing_id": 3, "month": "2026-02"}),
                    json!({"total": 4680, "currency": "USD"}),
                ),
            ])],
        );
        assert_eq!(v.status, Status::Pass, "{}", v.reason);
        assert_eq!(
            v.check,
            "tool-verification [get_listings, get_revenue_data]"
        );
        assert_eq!(v.score, Some(1.0));
        assert_eq!(v.threshold, Some(1.0));
        assert_eq!(
            v.evidence.to_json()["calls"][1]["args_correct"],
            json!(true)
        );
    }

    #[test]
    fn wrong_arguments_and_results_lower_the_weighted_score() {
        let v = run_one(
            &case(SPEC),
            vec![calls(&[
                ("get_listings", json!({}), json!([])),
                (
                    "get_revenue_data",
                    json!({"listing_id": 2, "month": "Feb"}),
                    json!({"total": 100}),
                ),
            ])],
        );
        assert_eq!(v.status, Status::Fail);
        // Call 1 scores 1 (weight 1); call 2 holds only the tool: 1/3 (weight 3).
        let score = v.score.unwrap();
        assert!((score - (1.0 + 3.0 / 3.0) / 4.0).abs() < 1e-9, "{score}");
        assert!(v.reason.contains("differ at `/listing_id`"), "{}", v.reason);
        assert!(
            v.reason.contains("`month` = \"Feb\" does not match"),
            "{}",
            v.reason
        );
        assert!(
            v.reason.contains("result differs at `/total`"),
            "{}",
            v.reason
        );
        assert_eq!(
            v.evidence.to_json()["calls"][1]["result_correct"],
            json!(false)
        );
    }

    #[test]
    fn missing_unexpected_and_out_of_order_calls_are_listed() {
        let c = case(
            "input: q\nchecks:\n  - type: tool-verification\n    ordered: true\n    strict: true\n    threshold: 0.5\n    calls: [{tool: a}, {tool: b}, {tool: c}]\n",
        );
        let v = run_one(
            &c,
            vec![calls(&[
                ("b", json!({}), json!(1)),
                ("a", json!({}), json!(1)),
                ("x", json!({}), json!(1)),
            ])],
        );
        assert_eq!(v.status, Status::Fail);
        assert_eq!(v.evidence.to_json()["missing"], json!(["c"]));
        assert_eq!(v.evidence.to_json()["unexpected"], json!(["x (call #3)"]));
        assert_eq!(v.evidence.to_json()["out_of_order"], json!(["b (call #1)"]));
        assert!(
            v.reason
                .contains("missing: c; out of order: b (call #1); unexpected: x (call #3)"),
            "{}",
            v.reason
        );
    }

    #[test]
    fn exact_arguments_and_best_candidate() {
        let c = case(
            "input: q\nchecks:\n  - type: tool-verification\n    calls:\n      - {tool: a, arguments: {id: 1}, match: exact}\n",
        );
        // The second call matches exactly; it is chosen over the first.
        let v = run_one(
            &c,
            vec![calls(&[
                ("a", json!({"id": 1, "extra": true}), json!(null)),
                ("a", json!({"id": 1}), json!(null)),
            ])],
        );
        assert_eq!(v.status, Status::Pass, "{}", v.reason);
        assert_eq!(v.evidence.to_json()["calls"][0]["call_index"], json!(1));
        let v = run_one(
            &c,
            vec![calls(&[(
                "a",
                json!({"id": 1, "extra": true}),
                json!(null),
            )])],
        );
        assert_eq!((v.status, v.score), (Status::Fail, Some(0.5)));
    }

    #[test]
    fn bad_specs_are_compile_errors() {
        let e = compile_err(
            "input: q\nchecks: [{type: tool-verification, calls: [{tool: a, patterns: {x: '('}}]}]\n",
        );
        assert!(e.contains("checks[0].calls[0].patterns.x"), "{e}");
        let e = compile_err("input: q\nchecks: [{type: tool-verification, calls: []}]\n");
        assert!(e.contains("checks[0].calls: give at least one"), "{e}");
        let e = compile_err(
            "input: q\nchecks: [{type: tool-verification, calls: [{tool: a, match: exact}]}]\n",
        );
        assert!(e.contains("calls[0].match"), "{e}");
    }
}
