//! Readers' errors in plain words, naming the field: serde's wording for a
//! value of the wrong shape ("data did not match any variant of untagged enum
//! OneOrMany", "invalid floating point", "expected sequence start") says what
//! it wanted in Rust's terms and not where. The field path is found by reading
//! the text again with the path tracked, only once reading it has failed.

use serde::Deserializer;
use serde::de::DeserializeOwned;

use crate::error::did_you_mean;
use crate::{LoadError, Location};

/// Something read from a YAML text: what is read again to find the path.
pub(super) trait Reader {
    /// Reads from `de`, discarding what is read.
    fn read<'de, D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error>;
}

/// Reads a whole `T`.
pub(super) struct Whole<T>(std::marker::PhantomData<T>);

impl<T> Whole<T> {
    pub(super) fn new() -> Self {
        Whole(std::marker::PhantomData)
    }
}

impl<T: DeserializeOwned> Reader for Whole<T> {
    fn read<'de, D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        T::deserialize(de).map(drop)
    }
}

/// The options every YAML text is read with.
pub(super) fn options() -> serde_saphyr::Options {
    serde_saphyr::options! { strict_booleans: true }
}

/// The error `e` of reading `text` (a YAML or JSON text in `file`) with
/// `reader`, at its line and column, naming its field, in plain words.
pub(super) fn yaml_error(
    e: &serde_saphyr::Error,
    text: &str,
    file: &str,
    reader: impl Reader,
) -> LoadError {
    let location = match e.location() {
        Some(l) => Location::at(file, l.line(), l.column()),
        None => Location::file(file),
    };
    if let serde_saphyr::Error::Budget {
        breach: serde_saphyr::budget::BudgetBreach::Nodes { .. },
        ..
    } = e.without_snippet()
    {
        return LoadError::new(location, too_many_nodes());
    }
    let error = LoadError::new(location, plain(&first_line(&e.to_string())));
    match path_of(text, reader) {
        Some(path) => error.field(path),
        None => error,
    }
}

/// Why a file past the YAML reader's node budget is refused, and what to do.
fn too_many_nodes() -> String {
    format!(
        "the file holds more than {} YAML/JSON nodes (mappings, lists and values), the most one suite file may hold so that a bad file cannot exhaust memory: split its cases over several files, or write them as JSON lines (a `.jsonl` file, one case per line, read a line at a time)",
        serde_saphyr::Budget::default().max_nodes
    )
}

/// The field path at which reading `text` with `reader` fails.
fn path_of(text: &str, reader: impl Reader) -> Option<String> {
    let mut path = None;
    let _ = serde_saphyr::with_deserializer_from_str_with_options(text, options(), |de| {
        let mut track = serde_path_to_error::Track::new();
        let read = reader.read(serde_path_to_error::Deserializer::new(de, &mut track));
        if read.is_err() {
            path = Some(track.path().to_string());
        }
        read
    });
    path.map(|p| tidy(&p)).filter(|p| !p.is_empty())
}

/// A tracked path as people write it: without the `value` a span-aware
/// wrapper around each case adds, and `?` for where no key is known.
fn tidy(path: &str) -> String {
    let path = path.replace("].value.", "].").replace("].value", "]");
    let path = path.strip_prefix("value.").unwrap_or(&path);
    if path == "value" || path == "." || path == "?" {
        return String::new();
    }
    path.to_owned()
}

/// Strips serde-saphyr's `error: line L column C:` prefix and its snippet.
fn first_line(rendered: &str) -> String {
    let line = rendered.lines().next().unwrap_or_default();
    let line = line.strip_prefix("error: ").unwrap_or(line);
    match line.split_once(": ") {
        Some((head, rest)) if head.starts_with("line ") => rest.to_owned(),
        _ => line.to_owned(),
    }
}

/// serde's words for a value of the wrong shape, and plain ones.
const WORDS: &[(&str, &str)] = &[
    ("invalid floating point", "expected a number"),
    ("expected f64", "expected a number"),
    ("expected f32", "expected a number"),
    ("invalid u64", "expected a whole number, 0 or more"),
    ("invalid u32", "expected a whole number, 0 or more"),
    ("invalid u16", "expected a whole number, 0 or more"),
    ("invalid u8", "expected a whole number, 0 or more"),
    ("invalid usize", "expected a whole number, 0 or more"),
    ("expected u64", "expected a whole number, 0 or more"),
    ("expected u32", "expected a whole number, 0 or more"),
    ("expected u16", "expected a whole number, 0 or more"),
    ("expected u8", "expected a whole number, 0 or more"),
    ("expected usize", "expected a whole number, 0 or more"),
    ("invalid i64", "expected a whole number"),
    ("invalid i32", "expected a whole number"),
    ("expected i64", "expected a whole number"),
    ("expected i32", "expected a whole number"),
    ("expected sequence start", "expected a list"),
    ("expected a sequence", "expected a list"),
    ("expected mapping start", "expected a mapping"),
    (
        "expected end of mapping after enum variant value",
        "expected a mapping with one key, the kind, and its settings under it",
    ),
    (
        "invalid value: map, expected map with a single key",
        "expected a mapping with one key, the kind, and its settings under it",
    ),
    (
        "data did not match any variant of untagged enum OneOrMany",
        "expected a text or a list of texts",
    ),
    (
        "data did not match any variant of untagged enum OtelSetting",
        "expected `true`, `false` or a mapping of OpenTelemetry settings",
    ),
];

/// What went wrong, in plain words: serde's wording for a value of the wrong
/// shape rewritten, unknown names with a "did you mean".
pub(crate) fn plain(message: &str) -> String {
    let mut message = did_you_mean(message);
    for (serde, plain) in WORDS {
        if message.contains(serde) {
            message = message.replace(serde, plain);
        }
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_wording_becomes_plain() {
        assert_eq!(plain("invalid floating point"), "expected a number");
        assert_eq!(
            plain("invalid type: string \"fast\", expected u64"),
            "invalid type: string \"fast\", expected a whole number, 0 or more"
        );
        assert_eq!(
            plain("data did not match any variant of untagged enum OneOrMany"),
            "expected a text or a list of texts"
        );
        assert_eq!(tidy("cases[2].value.threshold"), "cases[2].threshold");
        assert_eq!(tidy("value.checks[0]"), "checks[0]");
        assert_eq!(tidy("value"), "");
    }
}
