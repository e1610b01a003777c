//! Judge answer schemas and their validation.
//!
//! Each schema is sent to the provider (structured output) and every answer is
//! validated against the same schema here anyway, then checked semantically (a
//! score inside the scale, whole on integral scales). The schemas are
//! strict-compatible: every property required, no additional properties, and the
//! reasoning before the score in property order.

use gavel_core::Scale;

use serde_json::{Value, json};

use super::pointwise::PerScale;
use crate::compiled::Schema;
use crate::names::truncate;

/// What the judge said the output is, before any grading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flag {
    /// `[TRANSIENT]`: an infrastructure failure (timeout, 5xx page, empty output…).
    Transient,
    /// `[ERROR]`: an application error (stack trace, "internal error"…).
    Error,
}

impl Flag {
    /// The marker as the judge writes it.
    pub(crate) fn marker(self) -> &'static str {
        match self {
            Flag::Transient => "[TRANSIENT]",
            Flag::Error => "[ERROR]",
        }
    }

    /// The verdict reason's opening words.
    pub(crate) fn reason(self) -> &'static str {
        match self {
            Flag::Transient => "judge flagged the output as an infrastructure failure",
            Flag::Error => "judge flagged the output as an application error",
        }
    }
}

/// The status property shared by pointwise and rubric answers.
pub(crate) fn status_schema() -> Value {
    json!({ "type": "string", "enum": ["ok", "[TRANSIENT]", "[ERROR]"] })
}

/// `{"status", "reasoning", "score"}`; the score is an integer on integral scales.
pub(crate) fn pointwise_schema(scale: Scale) -> Value {
    static SCHEMAS: PerScale = PerScale::new(build_pointwise_schema);
    SCHEMAS.get(scale)
}

fn build_pointwise_schema(scale: Scale) -> Value {
    let number = if scale.integral() {
        "integer"
    } else {
        "number"
    };
    let (lo, hi) = scale.bounds();
    json!({
        "type": "object",
        "properties": {
            "status": status_schema(),
            "reasoning": { "type": "string" },
            // The bounds also keep a constrained local model from writing a
            // runaway number (a base model repeats digits).
            "score": {
                "type": [number, "null"],
                "minimum": lo,
                "maximum": hi,
                "description": format!("the score from {lo} to {hi}; null unless status is ok"),
            },
        },
        "required": ["status", "reasoning", "score"],
        "additionalProperties": false,
    })
}

/// `{"status", "dimensions": {name: {"reasoning", "score"}}, "reasoning",
/// "improvement_suggestions"}`.
pub(crate) fn rubric_schema(dimensions: &[&str]) -> Value {
    let dimension = json!({
        "type": "object",
        "properties": {
            "reasoning": { "type": "string" },
            "score": {
                "type": ["integer", "null"],
                "minimum": 1,
                "maximum": 5,
                "description": "the score from 1 to 5; null unless status is ok",
            },
        },
        "required": ["reasoning", "score"],
        "additionalProperties": false,
    });
    let properties: serde_json::Map<String, Value> = dimensions
        .iter()
        .map(|d| ((*d).to_owned(), dimension.clone()))
        .collect();
    json!({
        "type": "object",
        "properties": {
            "status": status_schema(),
            "dimensions": {
                "type": "object",
                "properties": properties,
                "required": dimensions,
                "additionalProperties": false,
            },
            "reasoning": { "type": "string" },
            "improvement_suggestions": { "type": "string" },
        },
        "required": ["status", "dimensions", "reasoning", "improvement_suggestions"],
        "additionalProperties": false,
    })
}

/// `{"reasoning", "winner": "A" | "B" | "tie"}`.
pub(crate) fn pairwise_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "reasoning": { "type": "string" },
            "winner": { "type": "string", "enum": ["A", "B", "tie"] },
        },
        "required": ["reasoning", "winner"],
        "additionalProperties": false,
    })
}

/// Characters of a schema violation kept in a problem description.
const PROBLEM_CHARS: usize = 200;

/// Parses a raw answer as JSON and validates it against `schema`. A single
/// surrounding Markdown code fence is tolerated; nothing else is (no digging for
/// JSON inside prose).
pub(crate) fn parse(raw: &str, schema: &Schema) -> Result<Value, String> {
    let text = strip_code_fence(raw.trim());
    if text.is_empty() {
        return Err("the answer is empty".into());
    }
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let errors: Vec<String> = schema
        .violations(&value)
        .take(3)
        .map(|v| {
            let at = if v.path.is_empty() { "(root)" } else { &v.path };
            format!("at {at}: {}", truncate(&v.message, PROBLEM_CHARS))
        })
        .collect();
    if errors.is_empty() {
        Ok(value)
    } else {
        Err(format!("does not match the schema: {}", errors.join("; ")))
    }
}

fn strip_code_fence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let Some(body) = rest.strip_suffix("```") else {
        return text;
    };
    // Drop an info string such as `json` on the opening line.
    match body.split_once('\n') {
        Some((info, rest)) if !info.trim_start().starts_with('{') => rest.trim(),
        _ => body.trim(),
    }
}

/// The status of a (schema-valid) pointwise or rubric answer.
pub(crate) fn flag(value: &Value) -> Option<Flag> {
    match value.get("status").and_then(Value::as_str) {
        Some("[TRANSIENT]") => Some(Flag::Transient),
        Some("[ERROR]") => Some(Flag::Error),
        _ => None,
    }
}

pub(crate) fn text(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// The answer's `reasoning`, which a graded answer must give: the judge is
/// asked to reason before it scores, and an empty reasoning is a bad answer
/// (asked again, then `error` with this reason).
fn reasoned(value: &Value) -> Result<String, String> {
    let reasoning = text(value, "reasoning");
    if reasoning.is_empty() {
        return Err("the reasoning is empty: the judge must reason before it grades".into());
    }
    Ok(reasoning)
}

/// A valid pointwise answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PointwiseAnswer {
    /// A graded answer: the score is within the scale.
    Scored { reasoning: String, score: f64 },
    /// The judge flagged the output as a failure instead of grading it.
    Flagged { flag: Flag, reasoning: String },
}

/// Checks a schema-valid pointwise answer: a status `ok` needs a score within the
/// scale (whole on integral scales).
pub(crate) fn pointwise(value: &Value, scale: Scale) -> Result<PointwiseAnswer, String> {
    let reasoning = text(value, "reasoning");
    if let Some(flag) = flag(value) {
        return Ok(PointwiseAnswer::Flagged { flag, reasoning });
    }
    let score = value
        .get("score")
        .and_then(Value::as_f64)
        .ok_or("status is \"ok\" but the score is missing (null)")?;
    check_score(score, scale)?;
    let reasoning = reasoned(value)?;
    Ok(PointwiseAnswer::Scored { reasoning, score })
}

/// A score within the scale's bounds, whole on integral scales.
pub(crate) fn check_score(score: f64, scale: Scale) -> Result<(), String> {
    let (lo, hi) = scale.bounds();
    if !score.is_finite() || score < lo || score > hi {
        return Err(format!(
            "score {score} is outside the {} scale ({lo} to {hi})",
            scale.as_str()
        ));
    }
    if scale.integral() && score.fract() != 0.0 {
        return Err(format!(
            "score {score} is not a whole number, as the {} scale requires",
            scale.as_str()
        ));
    }
    Ok(())
}

/// One scored rubric dimension.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DimensionScore {
    pub(crate) name: &'static str,
    pub(crate) score: u8,
    pub(crate) reasoning: String,
}

/// A valid rubric answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RubricAnswer {
    /// Every dimension scored 1-5.
    Scored {
        dimensions: Vec<DimensionScore>,
        reasoning: String,
        suggestions: String,
    },
    /// The judge flagged the output as a failure instead of grading it.
    Flagged { flag: Flag, reasoning: String },
}

/// Checks a schema-valid rubric answer: a status `ok` needs every dimension scored
/// with a whole number from 1 to 5.
pub(crate) fn rubric(value: &Value, dimensions: &[&'static str]) -> Result<RubricAnswer, String> {
    let reasoning = text(value, "reasoning");
    if let Some(flag) = flag(value) {
        return Ok(RubricAnswer::Flagged { flag, reasoning });
    }
    let mut scored = Vec::with_capacity(dimensions.len());
    for &name in dimensions {
        let dim = value
            .get("dimensions")
            .and_then(|d| d.get(name))
            .ok_or_else(|| format!("dimension `{name}` is missing"))?;
        let score = dim
            .get("score")
            .and_then(Value::as_f64)
            .ok_or_else(|| format!("status is \"ok\" but `{name}` has no score (null)"))?;
        check_score(score, Scale::OneToFive).map_err(|e| format!("`{name}`: {e}"))?;
        scored.push(DimensionScore {
            name,
            // Whole and within 1..=5, checked above.
            score: score as u8,
            reasoning: text(dim, "reasoning"),
        });
    }
    Ok(RubricAnswer::Scored {
        dimensions: scored,
        reasoning: reasoned(value).map(|_| reasoning)?,
        suggestions: text(value, "improvement_suggestions"),
    })
}

/// Who a pairwise answer says is better, by position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Winner {
    /// Answer A.
    A,
    /// Answer B.
    B,
    /// Neither.
    Tie,
}

impl Winner {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Winner::A => "A",
            Winner::B => "B",
            Winner::Tie => "tie",
        }
    }
}

/// A valid pairwise answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PairwiseAnswer {
    pub(crate) reasoning: String,
    pub(crate) winner: Winner,
}

/// Reads a schema-valid pairwise answer.
pub(crate) fn pairwise(value: &Value) -> Result<PairwiseAnswer, String> {
    let winner = match value.get("winner").and_then(Value::as_str) {
        Some("A") => Winner::A,
        Some("B") => Winner::B,
        Some("tie") => Winner::Tie,
        other => return Err(format!("winner {other:?} is not A, B or tie")),
    };
    Ok(PairwiseAnswer {
        reasoning: reasoned(value)?,
        winner,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn keys(schema: &Value) -> Vec<&str> {
        schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect()
    }

    fn assert_strict(schema: &Value) {
        assert_eq!(schema["additionalProperties"], json!(false), "{schema}");
        let props: Vec<&str> = keys(schema);
        let required: Vec<&str> = schema["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(props, required, "every property is required");
        for p in schema["properties"].as_object().unwrap().values() {
            if p["type"] == json!("object") {
                assert_strict(p);
            }
        }
    }

    #[test]
    fn schemas_are_strict_and_put_reasoning_before_the_score() {
        for scale in [
            Scale::Binary,
            Scale::OneToFour,
            Scale::OneToFive,
            Scale::ZeroToTen,
            Scale::ZeroToOne,
        ] {
            let s = pointwise_schema(scale);
            assert_strict(&s);
            assert_eq!(keys(&s), ["status", "reasoning", "score"]);
        }
        let r = rubric_schema(&["accuracy", "completeness"]);
        assert_strict(&r);
        assert_eq!(
            keys(&r),
            [
                "status",
                "dimensions",
                "reasoning",
                "improvement_suggestions"
            ]
        );
        assert_eq!(
            keys(&r["properties"]["dimensions"]["properties"]["accuracy"]),
            ["reasoning", "score"]
        );
        let p = pairwise_schema();
        assert_strict(&p);
        assert_eq!(keys(&p), ["reasoning", "winner"]);
    }

    #[test]
    fn a_graded_answer_without_reasoning_is_refused() {
        let e = pointwise(
            &json!({"status": "ok", "reasoning": "  ", "score": 1}),
            Scale::Binary,
        )
        .unwrap_err();
        assert!(e.contains("the reasoning is empty"), "{e}");
        let e = pairwise(&json!({"reasoning": "", "winner": "A"})).unwrap_err();
        assert!(e.contains("the reasoning is empty"), "{e}");
        let e = rubric(
            &json!({"status": "ok", "dimensions": {"accuracy": {"reasoning": "r", "score": 4}},
                "reasoning": "", "improvement_suggestions": ""}),
            &["accuracy"],
        )
        .unwrap_err();
        assert!(e.contains("the reasoning is empty"), "{e}");
        // A flagged answer (no grade) may say little.
        assert!(
            pointwise(
                &json!({"status": "[ERROR]", "reasoning": "", "score": null}),
                Scale::Binary
            )
            .is_ok()
        );
    }

    #[cfg(feature = "schema")]
    #[test]
    fn answers_are_validated_against_the_schema() {
        let s = crate::compiled::schema(&pointwise_schema(Scale::OneToFive)).unwrap();
        assert!(parse("{\"status\":\"ok\",\"reasoning\":\"r\",\"score\":4}", &s).is_ok());
        assert!(
            parse(
                "```json\n{\"status\":\"ok\",\"reasoning\":\"r\",\"score\":4}\n```",
                &s
            )
            .is_ok()
        );
        let e = parse("Score: 4", &s).unwrap_err();
        assert!(e.starts_with("not JSON"), "{e}");
        let e = parse("{\"status\":\"ok\",\"score\":4}", &s).unwrap_err();
        assert!(e.contains("reasoning"), "{e}");
        let e = parse("{\"status\":\"fine\",\"reasoning\":\"r\",\"score\":4}", &s).unwrap_err();
        assert!(e.contains("/status"), "{e}");
        let e = parse(
            "{\"status\":\"ok\",\"reasoning\":\"r\",\"score\":4,\"pass\":true}",
            &s,
        )
        .unwrap_err();
        assert!(e.contains("pass"), "{e}");
        let e = parse(
            "{\"status\":\"ok\",\"reasoning\":\"r\",\"score\":\"4\"}",
            &s,
        )
        .unwrap_err();
        assert!(e.contains("/score"), "{e}");
        assert_eq!(parse("  ", &s).unwrap_err(), "the answer is empty");
    }

    #[test]
    fn scores_must_fit_the_scale() {
        let ok = |v: Value, scale| pointwise(&v, scale);
        assert_eq!(
            ok(
                json!({"status":"ok","reasoning":"r","score":0.85}),
                Scale::ZeroToOne
            )
            .unwrap(),
            PointwiseAnswer::Scored {
                reasoning: "r".into(),
                score: 0.85
            }
        );
        let e = ok(
            json!({"status":"ok","reasoning":"r","score":1.2}),
            Scale::ZeroToOne,
        )
        .unwrap_err();
        assert_eq!(e, "score 1.2 is outside the 0-1 scale (0 to 1)");
        let e = ok(
            json!({"status":"ok","reasoning":"r","score":3.5}),
            Scale::OneToFive,
        )
        .unwrap_err();
        assert!(e.contains("not a whole number"), "{e}");
        let e = ok(
            json!({"status":"ok","reasoning":"r","score":0}),
            Scale::OneToFour,
        )
        .unwrap_err();
        assert!(e.contains("outside"), "{e}");
        let e = ok(
            json!({"status":"ok","reasoning":"r","score":null}),
            Scale::Binary,
        )
        .unwrap_err();
        assert!(e.contains("missing"), "{e}");
        assert_eq!(
            ok(
                json!({"status":"[ERROR]","reasoning":"trace","score":null}),
                Scale::Binary
            )
            .unwrap(),
            PointwiseAnswer::Flagged {
                flag: Flag::Error,
                reasoning: "trace".into()
            }
        );
    }
}
