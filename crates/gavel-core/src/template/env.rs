//! `${NAME}` in the settings that name programs, URLs and headers, from the
//! environment. Only `${NAME}` and `${NAME:-default}` expand (the default when
//! NAME is unset); `$$` is one `$`; any other `$` stays as written, so `$0`,
//! `$1` or `$HOME` reach a shell unchanged.

use super::TemplateError;

/// One part of a text: as written, or a variable.
#[derive(Debug, PartialEq, Eq)]
enum Piece<'a> {
    Text(&'a str),
    Var {
        name: &'a str,
        default: Option<&'a str>,
    },
}

/// The parts of `text`; a `${` that is not a variable is an error naming it.
fn pieces(text: &str) -> Result<Vec<Piece<'_>>, TemplateError> {
    let bad = |message: String| TemplateError::BadVar {
        text: text.to_owned(),
        message,
    };
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            // `$$`: the text up to and with the first `$`.
            out.push(Piece::Text(&rest[..=at]));
            rest = tail;
        } else if let Some(inner) = after.strip_prefix('{') {
            out.push(Piece::Text(&rest[..at]));
            let end = inner.find('}').ok_or_else(|| {
                bad("`${` is not closed by `}` (write `$${` for a literal `${`)".into())
            })?;
            let (name, default) = match inner[..end].split_once(":-") {
                Some((name, default)) => (name, Some(default)),
                None => (&inner[..end], None),
            };
            if !is_name(name) {
                return Err(bad(format!(
                    "`${{{}}}` is not a variable: a name is letters, digits and `_`, not starting with a digit (write `$${{` for a literal `${{`)",
                    &inner[..end]
                )));
            }
            out.push(Piece::Var { name, default });
            rest = &inner[end + 1..];
        } else {
            out.push(Piece::Text(&rest[..=at]));
            rest = after;
        }
    }
    out.push(Piece::Text(rest));
    Ok(out)
}

fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Checks that every `${` of `text` is a variable, without reading the
/// environment: what a suite's loader can refuse before anything runs.
pub(super) fn check(text: &str) -> Result<(), TemplateError> {
    pieces(text).map(drop)
}

/// Expands `text`, each variable's value from `lookup` (`None`: unset).
pub(super) fn expand(
    text: &str,
    mut lookup: impl FnMut(&str) -> Option<String>,
) -> Result<String, TemplateError> {
    let mut out = String::with_capacity(text.len());
    for piece in pieces(text)? {
        match piece {
            Piece::Text(t) => out.push_str(t),
            Piece::Var { name, default } => match (lookup(name), default) {
                (Some(value), _) => out.push_str(&value),
                (None, Some(default)) => out.push_str(default),
                (None, None) => {
                    return Err(TemplateError::UnsetVar {
                        text: text.to_owned(),
                        var: name.to_owned(),
                    });
                }
            },
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(text: &str) -> Result<String, TemplateError> {
        expand(text, |name| (name == "USER_NAME").then(|| "ana".to_owned()))
    }

    #[test]
    fn only_braced_names_expand_and_two_dollars_are_one() {
        assert_eq!(with("hi ${USER_NAME}!").unwrap(), "hi ana!");
        assert_eq!(with("${UNSET:-x y}/${USER_NAME:-z}").unwrap(), "x y/ana");
        assert_eq!(with("${UNSET:-}").unwrap(), "");
        // A shell's own `$0`, `$1`, `$NAME` reach it unchanged.
        assert_eq!(
            with("echo $0 $1 $USER_NAME $").unwrap(),
            "echo $0 $1 $USER_NAME $"
        );
        assert_eq!(
            with("cost: $$5, $${USER_NAME}, $$$$").unwrap(),
            "cost: $5, ${USER_NAME}, $$"
        );
        assert_eq!(with("héllo ${USER_NAME}ü").unwrap(), "héllo anaü");
    }

    #[test]
    fn unset_and_malformed_variables_are_errors_naming_the_text() {
        assert_eq!(
            with("a ${UNSET} b").unwrap_err().to_string(),
            "`a ${UNSET} b`: environment variable UNSET is not set"
        );
        for (text, why) in [
            ("${USER_NAME", "is not closed"),
            ("${}", "`${}` is not a variable"),
            ("${1X}", "`${1X}` is not a variable"),
            ("${A B}", "`${A B}` is not a variable"),
            ("${:-x}", "`${:-x}` is not a variable"),
        ] {
            let e = check(text).unwrap_err().to_string();
            assert!(e.starts_with(&format!("`{text}`: ")), "{e}");
            assert!(e.contains(why), "{e}");
        }
        assert!(check("$0 $$ ${OK:-1} ${_X9}").is_ok());
    }
}
