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

/// A display name with its number among a case's checks of that name and
/// round (`name #2`), so that no two verdicts of an execution share a name.
pub(crate) fn numbered(mut name: String, number: Option<usize>) -> String {
    if let Some(n) = number {
        name.push_str(" #");
        name.push_str(&n.to_string());
    }
    name
}

/// Numbers repeated display names: `None` for a name and round seen first, then
/// 2, 3, … for each repeat.
#[derive(Default)]
pub(crate) struct Repeats(std::collections::HashMap<(String, Option<usize>), usize>);

impl Repeats {
    /// The number of this `name` in `round`, when it is a repeat.
    pub(crate) fn number(&mut self, name: &str, round: Option<usize>) -> Option<usize> {
        let seen = self.0.entry((name.to_owned(), round)).or_default();
        *seen += 1;
        (*seen > 1).then_some(*seen)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn truncation_respects_characters() {
        assert_eq!(super::truncate("héllo wörld", 5), "héllo…");
        assert_eq!(super::truncate("short", 40), "short");
    }
}
