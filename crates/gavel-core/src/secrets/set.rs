//! [`Secrets`]: a set of secret values and the one matcher that redacts them,
//! whole or in part.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use aho_corasick::{AhoCorasick, MatchKind};

use super::{MIN_SECRET_LEN, REDACTED};

/// Values up to this long (in bytes) also have every prefix matched whole, so
/// that a cut secret becomes one [`REDACTED`]; longer ones are matched in
/// [`MIN_SECRET_LEN`]-byte pieces only (the prefixes of a long value would make
/// the matcher quadratic in its length).
const WHOLE_PREFIX_MAX: usize = 512;

/// Suffixes of environment variable names that mark a secret.
const SECRET_NAME_ENDS: &[&str] = &["_KEY", "_TOKEN", "_SECRET", "_PAT"];
/// Words that mark a secret wherever they stand in a variable's name.
const SECRET_NAME_WORDS: &[&str] = &["PASSWORD", "PASSWD", "SECRET", "API_KEY", "APIKEY"];

/// Whether an environment variable named `name` holds a secret: its name is or
/// ends in `_KEY`, `_TOKEN`, `_SECRET` or `_PAT`, or holds `PASSWORD`, `PASSWD`,
/// `SECRET` or `API_KEY` (any case). The provider variables (`OPENAI_API_KEY`,
/// `ANTHROPIC_API_KEY`, `GEMINI_API_KEY`, `GOOGLE_API_KEY`,
/// `OPENAI_COMPATIBLE_API_KEY`) all are.
///
/// ```
/// use gavel_core::secrets::is_secret_name;
/// assert!(is_secret_name("OPENAI_API_KEY") && is_secret_name("PGPASSWORD"));
/// assert!(!is_secret_name("AWS_ACCESS_KEY_ID") && !is_secret_name("PATH"));
/// ```
pub fn is_secret_name(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    SECRET_NAME_ENDS
        .iter()
        .any(|end| name.ends_with(end) || name == end[1..])
        || SECRET_NAME_WORDS.iter().any(|word| name.contains(word))
}

/// A set of secret values and one matcher over them. [`Secrets::redact`]
/// replaces each value with [`REDACTED`], and also every piece of one at least
/// [`MIN_SECRET_LEN`] bytes long: a secret cut short (an error excerpt, a
/// truncated echo) leaves no part of that length behind.
///
/// ```
/// use gavel_core::secrets::Secrets;
/// let secrets = Secrets::default().with(["sk-doc-secret-0123456789"]).unwrap();
/// assert_eq!(secrets.redact("key sk-doc-secret-0123456789."), "key [redacted].");
/// assert_eq!(secrets.redact("cut: sk-doc-secret-01…"), "cut: [redacted]…");
/// assert_eq!(secrets.excerpt("a sk-doc-secret-0123456789 b", 8), "a [redac…");
/// ```
#[derive(Clone, Default)]
pub struct Secrets {
    values: BTreeSet<String>,
    matcher: Option<Arc<AhoCorasick>>,
}

impl fmt::Debug for Secrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secrets({} values)", self.values.len())
    }
}

impl Secrets {
    /// The values of every environment variable whose name marks a secret
    /// ([`is_secret_name`]), whether or not anything uses it.
    pub fn from_env() -> Self {
        let values: Vec<String> = std::env::vars_os()
            .filter(|(name, _)| name.to_str().is_some_and(is_secret_name))
            .filter_map(|(_, value)| value.into_string().ok())
            .collect();
        Secrets::default().with(values).unwrap_or_default()
    }

    /// This set with `values` added, or `None` when none is new. Values are
    /// trimmed, an authorization scheme (`Bearer X`) is left out, and values
    /// shorter than [`MIN_SECRET_LEN`] bytes are ignored.
    pub fn with<I, S>(&self, values: I) -> Option<Self>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let new: BTreeSet<String> = values
            .into_iter()
            .map(|v| credential(v.as_ref()).to_owned())
            .filter(|v| v.len() >= MIN_SECRET_LEN && !self.values.contains(v))
            .collect();
        if new.is_empty() {
            return None;
        }
        let mut grown = self.values.clone();
        grown.extend(new);
        Some(Secrets::of(grown))
    }

    /// The set of `values`, its matcher built.
    fn of(values: BTreeSet<String>) -> Self {
        let patterns: BTreeSet<&str> = values.iter().flat_map(|v| pieces(v)).collect();
        // Leftmost-longest: a whole value wins over its pieces.
        let matcher = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&patterns)
            .ok()
            .map(Arc::new);
        Secrets { values, matcher }
    }

    /// Whether no value is held.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// `text` with every value, and every piece of one, replaced by
    /// [`REDACTED`] (borrowed when nothing matched).
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match &self.matcher {
            Some(m) if m.is_match(text) => {
                Cow::Owned(m.replace_all(text, &vec![REDACTED; m.patterns_len()]))
            }
            _ => Cow::Borrowed(text),
        }
    }

    /// `bytes` redacted like [`Secrets::redact`].
    pub fn redact_bytes<'a>(&self, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        match &self.matcher {
            Some(m) if m.is_match(bytes) => {
                Cow::Owned(m.replace_all_bytes(bytes, &vec![REDACTED.as_bytes(); m.patterns_len()]))
            }
            _ => Cow::Borrowed(bytes),
        }
    }

    /// The first `max_chars` characters of `text` redacted, with `…` when cut.
    /// Redaction comes first, so the cut cannot leave part of a secret.
    pub fn excerpt(&self, text: &str, max_chars: usize) -> String {
        let clean = self.redact(text);
        match clean.char_indices().nth(max_chars) {
            Some((end, _)) => format!("{}…", &clean[..end]),
            None => clean.into_owned(),
        }
    }
}

/// Authorization schemes: of `Bearer X` only `X` is the secret (and
/// redacting `X` redacts `Bearer X`).
const SCHEMES: &[&str] = &["Bearer", "Basic", "Token", "Bot"];

/// The secret part of `value`, trimmed: without an authorization scheme.
fn credential(value: &str) -> &str {
    let value = value.trim();
    match value.split_once(' ') {
        Some((scheme, rest)) if SCHEMES.iter().any(|s| s.eq_ignore_ascii_case(scheme)) => {
            rest.trim()
        }
        _ => value,
    }
}

/// What the matcher looks for of `value`: the value, its prefixes of at least
/// [`MIN_SECRET_LEN`] bytes (short values only), and every piece of that length,
/// all cut on character boundaries.
fn pieces(value: &str) -> impl Iterator<Item = &str> {
    let starts: Vec<usize> = value
        .char_indices()
        .map(|(i, _)| i)
        .chain([value.len()])
        .collect();
    let ends = starts.clone();
    let prefixes = starts
        .clone()
        .into_iter()
        .filter(move |&end| end >= MIN_SECRET_LEN && value.len() <= WHOLE_PREFIX_MAX)
        .map(move |end| &value[..end]);
    let windows = starts.into_iter().filter_map(move |start| {
        let end = ends.iter().find(|&&e| e >= start + MIN_SECRET_LEN)?;
        Some(&value[start..*end])
    });
    std::iter::once(value).chain(prefixes).chain(windows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_piece_of_eight_bytes_or_more_is_redacted() {
        let secret = "tok-set-0123456789abcdef";
        let set = Secrets::default().with([secret]).unwrap();
        for start in 0..secret.len() {
            for end in start + MIN_SECRET_LEN..=secret.len() {
                let text = format!("x{}y", &secret[start..end]);
                let clean = set.redact(&text);
                for s in 0..secret.len() - MIN_SECRET_LEN + 1 {
                    let piece = &secret[s..s + MIN_SECRET_LEN];
                    assert!(!clean.contains(piece), "{text} → {clean}");
                }
            }
        }
        assert_eq!(
            set.redact(&format!("a {} b", &secret[..12])),
            "a [redacted] b"
        );
    }

    #[test]
    fn short_values_are_ignored_and_multibyte_values_cut_on_boundaries() {
        assert!(Secrets::default().with(["short12"]).is_none());
        let set = Secrets::default().with(["pässwörd-ünïcode"]).unwrap();
        assert_eq!(set.redact("[pässwörd-ü]"), "[[redacted]]");
    }

    #[test]
    fn excerpts_are_redacted_before_the_cut() {
        let secret = "sk-excerpt-9f8e7d6c5b4a";
        let set = Secrets::default().with([secret]).unwrap();
        let padded = format!("{}{secret} tail", "p".repeat(160));
        for max in 0..padded.len() {
            let cut = set.excerpt(&padded, max);
            assert!(!cut.contains(&secret[..MIN_SECRET_LEN]), "{max}: {cut}");
        }
    }

    #[test]
    fn secret_names() {
        for name in [
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "GEMINI_API_KEY",
            "OPENAI_COMPATIBLE_API_KEY",
            "GITHUB_TOKEN",
            "client_secret",
            "DB_PASSWORD_FILE_VALUE",
            "GH_PAT",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "AWS_ACCESS_KEY_ID",
            "KEYBOARD",
            "TOKENIZERS_PARALLELISM",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }
}
