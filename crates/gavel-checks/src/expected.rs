//! What a case gives its checks to fall back on.

use serde_json::Value;

/// What a check falls back on when it does not give its own expectations.
pub(crate) struct Expected<'a> {
    /// The expected output: for a round's checks the round's, else the case's; for
    /// the case's checks the case's, else the last round's.
    pub(crate) output: Option<&'a Value>,
    /// The expected tools (the round's or the case's).
    pub(crate) tools: &'a [String],
    /// Whose expected tools these are, for error messages.
    pub(crate) tools_from: &'static str,
    /// The case's branch names.
    pub(crate) branches: &'a [&'a str],
    /// What a `script` check sends besides the turns.
    pub(crate) script: &'a crate::script::ScriptCase<'a>,
}
