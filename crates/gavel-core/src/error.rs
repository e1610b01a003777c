//! Load errors that name the file, line, column and field.

use std::fmt;

/// A place in a source file (1-based line and column).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file path as given.
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<u64>,
    /// 1-based column, when known.
    pub column: Option<u64>,
}

impl Location {
    /// A location in `file` with no line.
    pub fn file(file: impl Into<String>) -> Self {
        Location {
            file: file.into(),
            line: None,
            column: None,
        }
    }

    /// A location in `file` at `line:column`.
    pub fn at(file: impl Into<String>, line: u64, column: u64) -> Self {
        Location {
            file: file.into(),
            line: Some(line),
            column: Some(column),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.column {
                write!(f, ":{col}")?;
            }
        }
        Ok(())
    }
}

/// Bad input in a suite, case or dataset file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{location}: {}{message}", field.as_deref().map(|f| format!("{f}: ")).unwrap_or_default())]
pub struct LoadError {
    /// Where the problem is.
    pub location: Location,
    /// The field path (e.g. `cases[2].checks[0].pattern`), when known.
    pub field: Option<String>,
    /// What is wrong, with a "did you mean" where one is close.
    pub message: String,
}

impl LoadError {
    /// A new error at `location`.
    pub fn new(location: Location, message: impl Into<String>) -> Self {
        LoadError {
            location,
            field: None,
            message: message.into(),
        }
    }

    /// Names the field the error is about.
    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }
}

/// Appends "did you mean `x`?" to serde's unknown field/variant messages when one of
/// the expected names is close to the unknown one.
pub(crate) fn did_you_mean(message: &str) -> String {
    let Some((unknown, expected)) = split_unknown(message) else {
        return message.to_owned();
    };
    let best = expected
        .split(", ")
        .map(|s| s.trim().trim_matches('`'))
        .filter(|s| !s.is_empty())
        .map(|s| (strsim::normalized_damerau_levenshtein(unknown, s), s))
        .filter(|(score, _)| *score >= 0.5)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match best {
        Some((_, name)) => format!("{message} (did you mean `{name}`?)"),
        None => message.to_owned(),
    }
}

fn split_unknown(message: &str) -> Option<(&str, &str)> {
    let start = message
        .find("unknown field `")
        .map(|i| i + 15)
        .or_else(|| message.find("unknown variant `").map(|i| i + 17))?;
    let rest = &message[start..];
    let end = rest.find('`')?;
    let expected = rest[end..]
        .split_once("expected one of ")
        .map(|(_, e)| e)
        .or_else(|| rest[end..].split_once("expected ").map(|(_, e)| e))?;
    Some((&rest[..end], expected.lines().next().unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_the_closest_name() {
        let m = did_you_mean("unknown field `tresh`, expected one of id, input, threshold");
        assert!(m.ends_with("(did you mean `threshold`?)"), "{m}");
        let m = did_you_mean("unknown variant `containz`, expected one of `contains`, `regex`");
        assert!(m.ends_with("(did you mean `contains`?)"), "{m}");
        assert_eq!(
            did_you_mean("unknown field `zzz`, expected one of id"),
            "unknown field `zzz`, expected one of id"
        );
    }

    #[test]
    fn displays_file_line_column_and_field() {
        let e = LoadError::new(Location::at("s.yaml", 3, 7), "bad").field("cases[0].input");
        assert_eq!(e.to_string(), "s.yaml:3:7: cases[0].input: bad");
    }
}
