//! One redaction rule for every secret gavel knows.
//!
//! The process holds one [`Secrets`] set: built from every environment variable
//! whose name marks a secret ([`is_secret_name`]) when first used, then grown
//! where gavel learns more (API keys, header and env values expanded from
//! `${VAR}`, URL passwords and key-like query parameters, and the Basic-auth
//! form of a URL's credentials). Every text that leaves the process (stored,
//! logged, reported, served, exported) goes through [`redact`], which replaces
//! each secret, and every piece of one at least [`MIN_SECRET_LEN`] bytes long,
//! with [`REDACTED`]. Excerpts are cut after redaction ([`excerpt`]).
//!
//! ```
//! use gavel_core::secrets;
//! secrets::register("sk-doc-example-1234");
//! assert_eq!(secrets::redact("key sk-doc-example-1234 sent"), "key [redacted] sent");
//! assert_eq!(secrets::redact("cut: sk-doc-exa"), "cut: [redacted]");
//! ```

mod apply;
mod scrub;
mod set;
mod url;
mod writer;

use std::borrow::Cow;
use std::sync::{Arc, LazyLock, PoisonError, RwLock};

use serde_json::Value;

pub use scrub::is_secret_header;
pub use set::{Secrets, is_secret_name};
pub use url::{mask_url, register_url};
pub use writer::Redacting;

/// What every secret is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Values shorter than this (in bytes) are not secrets: redacting them would
/// blank common words and numbers, and they are too short to be credentials.
/// It is also the shortest piece of a secret that is redacted: a cut secret
/// leaves fewer bytes than this, or none.
pub const MIN_SECRET_LEN: usize = 8;

/// The process's secrets.
static PROCESS: LazyLock<RwLock<Arc<Secrets>>> =
    LazyLock::new(|| RwLock::new(Arc::new(Secrets::from_env())));

/// The process's secrets as they are now (the environment's, and every one
/// registered since).
pub fn process() -> Arc<Secrets> {
    PROCESS
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

/// Registers `value` (trimmed) as a secret for the rest of the process; values
/// shorter than [`MIN_SECRET_LEN`] are ignored.
pub fn register(value: &str) {
    register_all([value]);
}

/// Registers every one of `values` like [`register`], rebuilding the matcher once.
pub fn register_all<'a>(values: impl IntoIterator<Item = &'a str> + Clone) {
    if process().with(values.clone()).is_none() {
        return;
    }
    let mut current = PROCESS.write().unwrap_or_else(PoisonError::into_inner);
    if let Some(grown) = current.with(values) {
        *current = Arc::new(grown);
    }
}

/// `text` with every secret of the process redacted ([`Secrets::redact`]).
pub fn redact(text: &str) -> Cow<'_, str> {
    match process().redact(text) {
        Cow::Owned(clean) => Cow::Owned(clean),
        Cow::Borrowed(_) => Cow::Borrowed(text),
    }
}

/// The first `max_chars` characters of `text`, redacted first
/// ([`Secrets::excerpt`]).
pub fn excerpt(text: &str, max_chars: usize) -> String {
    process().excerpt(text, max_chars)
}

/// Redacts `text` in place.
pub fn redact_in_place(text: &mut String) {
    if let Cow::Owned(clean) = redact(text) {
        *text = clean;
    }
}

/// Redacts every string (keys included) of a JSON value in place.
pub fn redact_json(value: &mut Value) {
    let secrets = process();
    if !secrets.is_empty() {
        redact_json_with(&secrets, value);
    }
}

/// Redacts every string of `value` with `secrets`.
fn redact_json_with(secrets: &Secrets, value: &mut Value) {
    match value {
        Value::String(text) => {
            if let Cow::Owned(clean) = secrets.redact(text) {
                *text = clean;
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| redact_json_with(secrets, item)),
        Value::Object(map) => {
            let dirty = map
                .keys()
                .any(|k| matches!(secrets.redact(k), Cow::Owned(_)));
            if dirty {
                *map = std::mem::take(map)
                    .into_iter()
                    .map(|(k, v)| (secrets.redact(&k).into_owned(), v))
                    .collect();
            }
            map.values_mut()
                .for_each(|item| redact_json_with(secrets, item));
        }
        _ => {}
    }
}

/// `bytes` with every secret of the process redacted.
pub(crate) fn redact_bytes(bytes: &[u8]) -> Cow<'_, [u8]> {
    match process().redact_bytes(bytes) {
        Cow::Owned(clean) => Cow::Owned(clean),
        Cow::Borrowed(_) => Cow::Borrowed(bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn registered_values_are_redacted_and_short_ones_ignored() {
        register("core-unit-secret-1");
        register("abc1234");
        let text = "a core-unit-secret-1 b core-unit-secret-1 abc1234";
        assert_eq!(redact(text), "a [redacted] b [redacted] abc1234");
        assert!(matches!(redact("nothing here"), Cow::Borrowed(_)));
    }

    #[test]
    fn an_authorization_scheme_is_not_the_secret() {
        register("Bearer core-overlap-7");
        assert_eq!(redact("h: Bearer core-overlap-7!"), "h: Bearer [redacted]!");
        assert_eq!(redact("core-overlap-7"), "[redacted]");
    }

    #[test]
    fn json_strings_and_keys_are_redacted() {
        register("core-json-secret");
        let mut v = json!({"core-json-secret": ["x core-json-secret", 1], "k": "ok"});
        redact_json(&mut v);
        assert_eq!(v, json!({"[redacted]": ["x [redacted]", 1], "k": "ok"}));
    }
}
