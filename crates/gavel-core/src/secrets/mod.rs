//! One redaction rule for every secret gavel knows.
//!
//! Secrets are registered where gavel learns them (API keys, header and env
//! values expanded from `${VAR}`, URL passwords and key-like query parameters)
//! and every text that leaves the process (stored, logged, reported, served) goes
//! through [`redact`], which replaces each registered value with
//! [`REDACTED`].
//!
//! ```
//! use gavel_core::secrets;
//! secrets::register("sk-doc-example-1234");
//! assert_eq!(secrets::redact("key sk-doc-example-1234 sent"), "key [redacted] sent");
//! ```

mod apply;
mod url;
mod writer;

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::{Arc, PoisonError, RwLock};

use aho_corasick::{AhoCorasick, MatchKind};
use serde_json::Value;

pub use url::{mask_url, register_url};
pub use writer::Redacting;

/// What every secret is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Values shorter than this (in bytes) are not registered: redacting them would
/// blank common words and numbers, and they are too short to be credentials.
pub const MIN_SECRET_LEN: usize = 6;

/// The registered values and the matcher built from them.
struct Registry {
    values: BTreeSet<String>,
    matcher: Option<Arc<AhoCorasick>>,
}

static REGISTRY: RwLock<Registry> = RwLock::new(Registry {
    values: BTreeSet::new(),
    matcher: None,
});

/// Registers `value` (trimmed) as a secret for the rest of the process; values
/// shorter than [`MIN_SECRET_LEN`] are ignored.
pub fn register(value: &str) {
    let value = value.trim();
    if value.len() < MIN_SECRET_LEN {
        return;
    }
    if REGISTRY
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .values
        .contains(value)
    {
        return;
    }
    let mut registry = REGISTRY.write().unwrap_or_else(PoisonError::into_inner);
    if registry.values.insert(value.to_owned()) {
        // Leftmost-longest: `Bearer KEY` wins over `KEY` when both are registered.
        registry.matcher = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&registry.values)
            .ok()
            .map(Arc::new);
    }
}

/// The current matcher, if any secret is registered.
fn matcher() -> Option<Arc<AhoCorasick>> {
    REGISTRY
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .matcher
        .clone()
}

/// `text` with every registered secret replaced by [`REDACTED`] (borrowed when
/// nothing matched).
pub fn redact(text: &str) -> Cow<'_, str> {
    match matcher() {
        Some(m) if m.is_match(text) => {
            Cow::Owned(m.replace_all(text, &vec![REDACTED; m.patterns_len()]))
        }
        _ => Cow::Borrowed(text),
    }
}

/// Redacts `text` in place.
pub fn redact_in_place(text: &mut String) {
    if let Cow::Owned(clean) = redact(text) {
        *text = clean;
    }
}

/// Redacts every string (keys included) of a JSON value in place.
pub fn redact_json(value: &mut Value) {
    if matcher().is_none() {
        return;
    }
    match value {
        Value::String(text) => redact_in_place(text),
        Value::Array(items) => items.iter_mut().for_each(redact_json),
        Value::Object(map) => {
            let dirty = map.keys().any(|k| matches!(redact(k), Cow::Owned(_)));
            if dirty {
                *map = std::mem::take(map)
                    .into_iter()
                    .map(|(k, v)| (redact(&k).into_owned(), v))
                    .collect();
            }
            map.values_mut().for_each(redact_json);
        }
        _ => {}
    }
}

/// `bytes` with every registered secret replaced by [`REDACTED`].
pub(crate) fn redact_bytes(bytes: &[u8]) -> Cow<'_, [u8]> {
    match matcher() {
        Some(m) if m.is_match(bytes) => {
            Cow::Owned(m.replace_all_bytes(bytes, &vec![REDACTED.as_bytes(); m.patterns_len()]))
        }
        _ => Cow::Borrowed(bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn registered_values_are_redacted_and_short_ones_ignored() {
        register("core-unit-secret-1");
        register("abc12");
        let text = "a core-unit-secret-1 b core-unit-secret-1 abc12";
        assert_eq!(redact(text), "a [redacted] b [redacted] abc12");
        assert!(matches!(redact("nothing here"), Cow::Borrowed(_)));
    }

    #[test]
    fn longest_registered_value_wins() {
        register("core-overlap-7");
        register("Bearer core-overlap-7");
        assert_eq!(redact("h: Bearer core-overlap-7!"), "h: [redacted]!");
    }

    #[test]
    fn json_strings_and_keys_are_redacted() {
        register("core-json-secret");
        let mut v = json!({"core-json-secret": ["x core-json-secret", 1], "k": "ok"});
        redact_json(&mut v);
        assert_eq!(v, json!({"[redacted]": ["x [redacted]", 1], "k": "ok"}));
    }
}
