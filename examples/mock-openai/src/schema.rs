//! The most favourable instance of a JSON Schema: enums take their first value,
//! numbers their maximum, strings a short text. A judge schema thus gets a top,
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
    if let Some(alt) = schema["anyOf"].as_array().or(schema["oneOf"].as_array()).and_then(|a| a.first()) {
        return favourable(alt);
    }
    let kind = match &schema["type"] {
        Value::Array(types) => types.iter().find(|t| *t != "null").cloned().unwrap_or(Value::Null),
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
        Some("integer") => json!(schema["maximum"].as_i64().unwrap_or(1)),
        Some("number") => json!(schema["maximum"].as_f64().unwrap_or(1.0)),
        Some("boolean") => json!(true),
        Some("string") => json!("The answer meets the criteria."),
        _ => Value::Null,
    }
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
                "score": {"type": ["integer", "null"], "minimum": 1, "maximum": 5}
            }
        });
        assert_eq!(favourable(&schema), json!({"status": "ok", "reasoning": "The answer meets the criteria.", "score": 5}));
    }
}
