//! Bounded numbers for the grammar. llguidance keeps a number within its
//! `minimum` and `maximum` but not its digits: a small model can write
//! `0.000…` until its token budget runs out. A number with both bounds becomes
//! the finite list of its values (integers: each one; other numbers: at two
//! decimals), so every score the grammar allows is a few characters long and
//! on the judge's scale.

use serde_json::{Map, Value};

/// Ranges with more values than this are left as they are.
const MAX_VALUES: i64 = 2_001;

/// Replaces every bounded `number` or `integer` (optionally also `null`) in
/// `schema` by an `enum` of its values.
pub(crate) fn bound_numbers(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            map.values_mut().for_each(bound_numbers);
            if let Some(values) = values_of(map) {
                map.remove("type");
                map.remove("minimum");
                map.remove("maximum");
                map.insert("enum".into(), Value::Array(values));
            }
        }
        Value::Array(items) => items.iter_mut().for_each(bound_numbers),
        _ => {}
    }
}

/// The values a bounded numeric schema allows, `null` last when it allows it.
fn values_of(map: &Map<String, Value>) -> Option<Vec<Value>> {
    let types: Vec<&str> = match map.get("type")? {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().map(Value::as_str).collect::<Option<_>>()?,
        _ => return None,
    };
    let integral = types.contains(&"integer");
    if !(integral || types.contains(&"number"))
        || types
            .iter()
            .any(|t| !matches!(*t, "integer" | "number" | "null"))
    {
        return None;
    }
    let (lo, hi) = (map.get("minimum")?.as_f64()?, map.get("maximum")?.as_f64()?);
    // Whole units, or hundredths (a hair of slack: 0.07 × 100 is 7.000…01).
    let per_unit = if integral { 1.0 } else { 100.0 };
    let (first, last) = (
        (lo * per_unit - 1e-9).ceil(),
        (hi * per_unit + 1e-9).floor(),
    );
    if !first.is_finite() || !last.is_finite() || last < first {
        return None;
    }
    let (first, last) = (first as i64, last as i64);
    if last - first + 1 > MAX_VALUES {
        return None;
    }
    let mut values: Vec<Value> = (first..=last)
        .map(|n| {
            if integral || n % 100 == 0 {
                Value::from(n / per_unit as i64)
            } else {
                Value::from(n as f64 / per_unit)
            }
        })
        .collect();
    if types.contains(&"null") {
        values.push(Value::Null);
    }
    Some(values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn score(schema: &Value) -> &Value {
        &schema["properties"]["score"]
    }

    #[test]
    fn a_zero_to_one_score_is_one_of_101_short_numbers_or_null() {
        let mut schema = json!({"type": "object", "properties": {"score": {
            "type": ["number", "null"], "minimum": 0.0, "maximum": 1.0, "description": "d"}}});
        bound_numbers(&mut schema);
        let s = score(&schema);
        assert_eq!(s.get("type"), None);
        assert_eq!(s.get("minimum"), None);
        assert_eq!(s["description"], "d");
        let values = s["enum"].as_array().unwrap();
        assert_eq!(values.len(), 102);
        assert_eq!(values[0], json!(0));
        assert_eq!(values[7], json!(0.07));
        assert_eq!(values[100], json!(1));
        assert_eq!(values[101], Value::Null);
        for v in values {
            let text = v.to_string();
            assert!(text.len() <= 4, "{text} is not a short number");
            if let Some(x) = v.as_f64() {
                assert!((0.0..=1.0).contains(&x));
            }
        }
    }

    #[test]
    fn integer_scales_list_each_integer_and_rubric_dimensions_too() {
        let mut schema = json!({"properties": {
            "score": {"type": "integer", "minimum": 1, "maximum": 5},
            "dimensions": {"properties": {"accuracy": {"properties": {"score":
                {"type": ["integer", "null"], "minimum": 1, "maximum": 5}}}}},
        }});
        bound_numbers(&mut schema);
        assert_eq!(score(&schema)["enum"], json!([1, 2, 3, 4, 5]));
        assert_eq!(
            schema["properties"]["dimensions"]["properties"]["accuracy"]["properties"]["score"]["enum"],
            json!([1, 2, 3, 4, 5, null])
        );
    }

    #[test]
    fn bounds_survive_floating_point() {
        let mut schema = json!({"type": "number", "minimum": 0.07, "maximum": 0.29});
        bound_numbers(&mut schema);
        let values = schema["enum"].as_array().unwrap();
        assert_eq!((values[0].clone(), values.len()), (json!(0.07), 23));
        assert_eq!(values[22], json!(0.29));
    }

    #[test]
    fn unbounded_huge_and_non_numeric_schemas_are_left_alone() {
        for untouched in [
            json!({"type": "number", "minimum": 0}),
            json!({"type": "number", "minimum": 0, "maximum": 1e9}),
            json!({"type": ["number", "string"], "minimum": 0, "maximum": 1}),
            json!({"type": "string", "enum": ["ok", "[ERROR]"]}),
            json!({"type": "integer", "minimum": 5, "maximum": 1}),
        ] {
            let mut schema = untouched.clone();
            bound_numbers(&mut schema);
            assert_eq!(schema, untouched);
        }
    }
}
