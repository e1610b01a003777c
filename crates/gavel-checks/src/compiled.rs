//! Regular expressions and JSON Schemas compiled once per process. Compiling
//! either costs far more than using it, and a dataset's rows (or a large
//! suite's cases, or every answer a judge validates) mostly repeat the same
//! few: each is compiled once and shared. A [`Regex`] clone shares its program;
//! a validator is shared through an [`Arc`].

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use jsonschema::Validator;
use regex::Regex;
use serde_json::Value;

/// At most this many of each are kept; past it a cache starts again, so memory
/// stays bounded whatever the suite holds.
const KEPT: usize = 128;

static REGEXES: LazyLock<Mutex<HashMap<String, Regex>>> = LazyLock::new(Mutex::default);
static SCHEMAS: LazyLock<Mutex<HashMap<Value, Arc<Validator>>>> = LazyLock::new(Mutex::default);

/// `pattern` compiled, or its syntax error (errors are not kept).
pub(crate) fn regex(pattern: &str) -> Result<Regex, regex::Error> {
    shared(&REGEXES, pattern, str::to_owned, || Regex::new(pattern))
}

/// The validator of JSON Schema `schema`, or why the schema is invalid.
pub(crate) fn schema(
    schema: &Value,
) -> Result<Arc<Validator>, jsonschema::ValidationError<'static>> {
    shared(&SCHEMAS, schema, Value::clone, || {
        jsonschema::validator_for(schema).map(Arc::new)
    })
}

/// The value kept under `key`, else `make`'s (kept when it succeeds). `make`
/// runs outside the lock: other threads need not wait for it.
fn shared<K, Q, V, E>(
    cache: &Mutex<HashMap<K, V>>,
    key: &Q,
    owned: impl FnOnce(&Q) -> K,
    make: impl FnOnce() -> Result<V, E>,
) -> Result<V, E>
where
    K: Eq + Hash + std::borrow::Borrow<Q>,
    Q: Eq + Hash + ?Sized,
    V: Clone,
{
    let lock = || cache.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(value) = lock().get(key) {
        return Ok(value.clone());
    }
    let value = make()?;
    let mut kept = lock();
    if kept.len() >= KEPT {
        kept.clear();
    }
    kept.insert(owned(key), value.clone());
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn same_pattern_or_schema_is_shared_errors_are_not_kept_and_size_is_bounded() {
        let a = regex(r"\b3 listings\b").unwrap();
        assert!(a.is_match("your 3 listings"));
        assert_eq!(regex(r"\b3 listings\b").unwrap().as_str(), a.as_str());
        assert!(regex("(unclosed").is_err());
        assert!(regex("(unclosed").is_err());
        for i in 0..KEPT + 5 {
            assert!(regex(&format!("x{i}")).unwrap().is_match(&format!("x{i}")));
        }
        assert!(REGEXES.lock().unwrap().len() <= KEPT);

        let s = json!({"type": "object", "required": ["id"]});
        let v = schema(&s).unwrap();
        assert!(Arc::ptr_eq(&v, &schema(&s).unwrap()));
        assert!(v.is_valid(&json!({"id": 1})) && !v.is_valid(&json!({})));
        assert!(schema(&json!({"type": 12})).is_err());
    }
}
