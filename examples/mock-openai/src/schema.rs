//! The most favourable instance of a JSON Schema: enums take their first value,
//! unless the prompt tags another (`#value`), arrays of enums the tagged values
//! (else the first), numbers their maximum (or the largest number their
//! description names), strings a short text. A judge schema thus gets a top,
//! error-free verdict, and a suite steers routers and decision graphs by tagging
//! its inputs (`What are my listings? #safety #no`).

use serde_json::{Map, Value, json};

/// Builds an instance of `schema`.
pub(crate) fn favourable(schema: &Value, prompt: &str) -> Value {
    instance(schema, false, prompt)
}

/// Like [`favourable`], but numbers take their minimum (or the smallest number
/// their description names): a harsh judge.
pub(crate) fn harsh(schema: &Value, prompt: &str) -> Value {
    instance(schema, true, prompt)
}

/// Whether `prompt` holds `#value` as a whole tag.
fn tagged(prompt: &str, value: &Value) -> bool {
    let Some(value) = value.as_str() else {
        return false;
    };
    let tag = format!("#{value}");
    prompt.match_indices(&tag).any(|(at, _)| {
        !prompt[at + tag.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '-' || c == '_')
    })
}

fn instance(schema: &Value, low: bool, prompt: &str) -> Value {
    if let Some(values) = schema["enum"].as_array()
        && let Some(v) = values.iter().find(|v| tagged(prompt, v)).or(values.first())
    {
        return v.clone();
    }
    if let Some(c) = schema.get("const") {
        return c.clone();
    }
    if let Some(alt) = schema["anyOf"]
        .as_array()
        .or(schema["oneOf"].as_array())
        .and_then(|a| a.first())
    {
        return instance(alt, low, prompt);
    }
    let kind = match &schema["type"] {
        Value::Array(types) => types
            .iter()
            .find(|t| *t != "null")
            .cloned()
            .unwrap_or(Value::Null),
        other => other.clone(),
    };
    match kind.as_str() {
        Some("object") => {
            let mut out = Map::new();
            if let Some(props) = schema["properties"].as_object() {
                for (name, sub) in props {
                    out.insert(name.clone(), instance(sub, low, prompt));
                }
            }
            Value::Object(out)
        }
        Some("array") => match schema["items"]["enum"].as_array() {
            Some(values) => {
                let picked: Vec<&Value> = values.iter().filter(|v| tagged(prompt, v)).collect();
                match (picked.is_empty(), values.first()) {
                    (false, _) => json!(picked),
                    (true, Some(first)) => json!([first]),
                    (true, None) => json!([]),
                }
            }
            // As few items as the schema allows (none unless `minItems` asks).
            None => {
                let min = schema["minItems"].as_u64().unwrap_or(0).min(8);
                let item = instance(&schema["items"], low, prompt);
                Value::Array((0..min).map(|_| item.clone()).collect())
            }
        },
        Some("integer") => json!(bound(schema, low) as i64),
        Some("number") => json!(bound(schema, low)),
        Some("boolean") => json!(true),
        Some("string") => json!("The answer meets the criteria."),
        _ => Value::Null,
    }
}

/// The schema's maximum (minimum when `low`), else the largest (smallest) number
/// its description names ("the score from 1 to 5"), else 1 (0).
fn bound(schema: &Value, low: bool) -> f64 {
    let (key, pick, default): (&str, fn(f64, f64) -> f64, f64) = if low {
        ("minimum", f64::min, 0.0)
    } else {
        ("maximum", f64::max, 1.0)
    };
    schema[key]
        .as_f64()
        .or_else(|| {
            schema["description"]
                .as_str()?
                .split(|c: char| !(c.is_ascii_digit() || c == '.'))
                .filter_map(|w| w.trim_end_matches('.').parse::<f64>().ok())
                .reduce(pick)
        })
        .unwrap_or(default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judge_schema_gets_a_top_error_free_verdict() {
        let schema = json!({
            "type": "object",
            "properties": {
                "status": {"type": "string", "enum": ["ok", "[TRANSIENT]", "[ERROR]"]},
                "reasoning": {"type": "string"},
                "score": {"type": ["integer", "null"], "description": "the score from 1 to 5"}
            }
        });
        assert_eq!(
            favourable(&schema, ""),
            json!({"status": "ok", "reasoning": "The answer meets the criteria.", "score": 5})
        );
        assert_eq!(harsh(&schema, "")["score"], 1);
    }

    #[test]
    fn tags_in_the_prompt_pick_enum_values() {
        let one = json!({"type": "string", "enum": ["yes", "no"]});
        assert_eq!(favourable(&one, "a question"), "yes");
        assert_eq!(favourable(&one, "listings? #no."), "no");
        assert_eq!(favourable(&one, "#nothing"), "yes", "whole tags only");
        let many = json!({"type": "array", "items": {"type": "string", "enum": ["accuracy", "safety", "format"]}});
        assert_eq!(favourable(&many, "x"), json!(["accuracy"]));
        assert_eq!(
            favourable(&many, "#format and #safety"),
            json!(["safety", "format"])
        );
    }
}
