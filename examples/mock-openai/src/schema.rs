//! The most favourable instance of a JSON Schema: enums take their first value,
//! numbers their maximum (or the largest number their description names),
//! strings a short text. A judge schema thus gets a top,
//! error-free verdict.

use serde_json::{Map, Value, json};

/// Builds an instance of `schema`.
pub(crate) fn favourable(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    if let Some(c) = schema.get("const") {
        return c.clone();
    }
    if let Some(alt) = schema["anyOf"]
        .as_array()
        .or(schema["oneOf"].as_array())
        .and_then(|a| a.first())
    {
        return favourable(alt);
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
                    out.insert(name.clone(), favourable(sub));
                }
            }
            Value::Object(out)
        }
        Some("array") => json!([]),
        Some("integer") => json!(
            schema["maximum"]
                .as_f64()
                .or_else(|| described_max(schema))
                .unwrap_or(1.0) as i64
        ),
        Some("number") => json!(
            schema["maximum"]
                .as_f64()
                .or_else(|| described_max(schema))
                .unwrap_or(1.0)
        ),
        Some("boolean") => json!(true),
        Some("string") => json!("The answer meets the criteria."),
        _ => Value::Null,
    }
}

/// The largest number in the schema's description ("the score from 1 to 5").
fn described_max(schema: &Value) -> Option<f64> {
    schema["description"]
        .as_str()?
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter_map(|w| w.trim_end_matches('.').parse::<f64>().ok())
        .reduce(f64::max)
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
            favourable(&schema),
            json!({"status": "ok", "reasoning": "The answer meets the criteria.", "score": 5})
        );
    }
}
