//! Regular expressions and JSON Schemas compiled once per process. Compiling
//! either costs far more than using it, and a dataset's rows (or a large
//! suite's cases, or every answer a judge validates) mostly repeat the same
//! few: each is compiled once and shared. A [`Regex`] clone shares its program;
//! a [`Schema`] clone shares its validator.
//!
//! JSON Schemas need the `schema` feature (jsonschema). Without it [`schema`]
//! refuses every schema naming the feature, so a suite that asks for one fails
//! to compile on that field, and [`Schema`] has no values.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{LazyLock, Mutex, PoisonError};

use regex::Regex;

pub(crate) use schemas::{Schema, schema};

/// At most this many of each are kept; past it a cache starts again, so memory
/// stays bounded whatever the suite holds.
const KEPT: usize = 128;

static REGEXES: LazyLock<Mutex<HashMap<String, Regex>>> = LazyLock::new(Mutex::default);

/// `pattern` compiled, or its syntax error (errors are not kept).
pub(crate) fn regex(pattern: &str) -> Result<Regex, regex::Error> {
    shared(&REGEXES, pattern, str::to_owned, || Regex::new(pattern))
}

/// One way a value breaks a schema: where (a JSON pointer, empty at the root)
/// and how.
pub(crate) struct Violation {
    pub(crate) path: String,
    pub(crate) message: String,
}

#[cfg(feature = "schema")]
mod schemas {
    use std::collections::HashMap;
    use std::sync::{Arc, LazyLock, Mutex};

    use jsonschema::Validator;
    use serde_json::Value;

    use super::{Violation, shared};

    static SCHEMAS: LazyLock<Mutex<HashMap<Value, Schema>>> = LazyLock::new(Mutex::default);

    /// A compiled JSON Schema.
    #[derive(Clone)]
    pub(crate) struct Schema(Arc<Validator>);

    /// The compiled `schema`, or why it is invalid (`invalid JSON Schema: …`).
    pub(crate) fn schema(schema: &Value) -> Result<Schema, String> {
        shared(&SCHEMAS, schema, Value::clone, || {
            jsonschema::validator_for(schema)
                .map(|v| Schema(Arc::new(v)))
                .map_err(|e| format!("invalid JSON Schema: {e}"))
        })
    }

    impl Schema {
        /// How `value` breaks the schema, lazily (none: it is valid).
        pub(crate) fn violations<'a>(
            &'a self,
            value: &'a Value,
        ) -> impl Iterator<Item = Violation> + 'a {
            self.0.iter_errors(value).map(|e| Violation {
                path: e.instance_path().as_str().to_owned(),
                message: e.to_string(),
            })
        }
    }

    #[cfg(test)]
    #[allow(clippy::unwrap_used)]
    mod tests {
        use super::*;
        use serde_json::json;

        #[test]
        fn same_schema_is_shared_and_says_where_a_value_breaks_it() {
            let s = json!({"type": "object", "properties": {"id": {"type": "integer"}}});
            let v = schema(&s).unwrap();
            assert!(Arc::ptr_eq(&v.0, &schema(&s).unwrap().0));
            assert_eq!(v.violations(&json!({"id": 1})).count(), 0);
            let broken: Vec<Violation> = v.violations(&json!({"id": "x"})).collect();
            assert_eq!(broken.len(), 1);
            assert_eq!(broken[0].path, "/id");
            assert!(
                broken[0].message.contains("integer"),
                "{}",
                broken[0].message
            );
            let e = schema(&json!({"type": 12})).err().unwrap();
            assert!(e.starts_with("invalid JSON Schema: "), "{e}");
        }
    }
}

/// Without the `schema` feature: every schema refused, naming the feature.
#[cfg(not(feature = "schema"))]
mod schemas {
    use serde_json::Value;

    use super::Violation;

    /// A compiled JSON Schema: none in this build.
    pub(crate) enum Schema {}

    /// Why no schema compiles in this build.
    pub(crate) fn schema(_: &Value) -> Result<Schema, String> {
        Err("this build has no JSON Schema validation (gavel-eval's `schema` feature; the `gavel` binary has it)".into())
    }

    impl Schema {
        /// Never called: there is no schema to call it on.
        pub(crate) fn violations(&self, _: &Value) -> std::vec::IntoIter<Violation> {
            match *self {}
        }
    }

    /// `cargo test -p gavel-checks --no-default-features --lib compiled`.
    #[cfg(test)]
    #[allow(clippy::unwrap_used)]
    mod tests {
        use gavel_core::Status;

        use crate::judge::testing::{Models, Scripted, reply};
        use crate::testing::{case, compile, compile_err, transcript, turn};

        const REFUSED: &str = "this build has no JSON Schema validation (gavel-eval's `schema` feature; the `gavel` binary has it)";

        #[test]
        fn a_schema_is_refused_on_its_field_naming_the_feature() {
            for (check, field) in [
                ("{type: json-schema, schema: {type: object}}", "schema"),
                (
                    "{type: argument-validity, schemas: {refund: {type: object}}}",
                    "schemas.refund",
                ),
                (
                    "{type: tool-verification, calls: [{tool: refund, schema: {type: object}}]}",
                    "calls[0].schema",
                ),
            ] {
                let e = compile_err(&format!("input: q\nchecks: [{check}]\n"));
                assert!(
                    e.contains(&format!("case `c`: checks[0].{field}: {REFUSED}")),
                    "{e}"
                );
            }
        }

        #[tokio::test]
        async fn a_judge_is_an_error_naming_the_feature_without_a_call() {
            let model = Scripted::new([reply(r#"{"status":"ok","reasoning":"fine","score":1}"#)]);
            let models = Models::new(model.clone());
            let plan = compile(&case("input: q\ncriteria: Answers\n")).unwrap();
            let v = plan
                .run(&transcript(vec![turn(0, "a")]), &models.runtime())
                .await
                .remove(0);
            assert_eq!(v.status, Status::Error, "{}", v.reason);
            assert!(v.reason.contains(REFUSED), "{}", v.reason);
            assert!(model.requests().is_empty());
        }
    }
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
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn same_pattern_is_shared_errors_are_not_kept_and_size_is_bounded() {
        let a = regex(r"\b3 listings\b").unwrap();
        assert!(a.is_match("your 3 listings"));
        assert_eq!(regex(r"\b3 listings\b").unwrap().as_str(), a.as_str());
        assert!(regex("(unclosed").is_err());
        assert!(regex("(unclosed").is_err());
        for i in 0..KEPT + 5 {
            assert!(regex(&format!("x{i}")).unwrap().is_match(&format!("x{i}")));
        }
        assert!(REGEXES.lock().unwrap().len() <= KEPT);
    }
}
