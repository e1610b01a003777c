//! Display-name helpers: every check's name shows its arguments shortened.

/// Characters of an argument shown in a check's display name.
const NAME_ARG_CHARS: usize = 40;

/// Shortens text to `max` characters, marking the cut with `…`; secrets are
/// redacted before the cut ([`gavel_core::secrets::excerpt`]).
pub(crate) fn truncate(text: &str, max: usize) -> String {
    gavel_core::secrets::excerpt(text, max)
}

/// Shortens a display-name argument (~40 characters).
pub(crate) fn short(text: &str) -> String {
    truncate(text, NAME_ARG_CHARS)
}

/// `"a", "b"` (each quoted, the whole shortened).
pub(crate) fn quoted_list(items: &[String]) -> String {
    let joined = items
        .iter()
        .map(|s| format!("{s:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    short(&joined)
}

/// `[a, b]` (the whole shortened).
pub(crate) fn bracket_list(items: &[String]) -> String {
    format!("[{}]", short(&items.join(", ")))
}

#[cfg(test)]
mod tests {
    #[test]
    fn truncation_respects_characters() {
        assert_eq!(super::truncate("héllo wörld", 5), "héllo…");
        assert_eq!(super::truncate("short", 40), "short");
    }
}
