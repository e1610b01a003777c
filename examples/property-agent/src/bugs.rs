//! Deliberately injectable misbehaviour, so tests can prove gavel catches it.

/// One injectable bug.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bug {
    /// The listings reply says "2 listings" and omits one; the tool still returns 3.
    WrongCount,
    /// Answers without calling or recording any tool.
    SkipTools,
    /// Ignores the session history.
    ForgetContext,
    /// Sleeps 1500 ms before answering.
    Slow,
    /// Revenue requests fail with an internal error (HTTP 500).
    CrashOnRevenue,
    /// After a restart (a new process, or `POST /restart`) earlier conversations
    /// are forgotten: history comes only from this instance's own messages.
    LoseOnRestart,
    /// A forked session shares its parent's conversation instead of copying it,
    /// so sibling branches see each other.
    LeakBranches,
    /// An answer to the clarifying question is ignored: the question is asked again.
    IgnoreClarification,
    /// The SSE stream ends without its `done` event.
    NoDone,
    /// The SSE stream carries no text: only `done`.
    EmptyStream,
    /// Tool calls record `listing_id` as a string (`"3"`) instead of a number.
    WrongToolArgs,
    /// Every tool is called twice in a row with the same arguments.
    RedundantCalls,
    /// Revenue replies state a total 20% above what the tool returned.
    WrongTotal,
    /// The conversation is not saved to the database.
    NoPersist,
}

impl Bug {
    /// Every bug, in documentation order.
    const ALL: [Bug; 14] = [
        Bug::WrongCount,
        Bug::SkipTools,
        Bug::ForgetContext,
        Bug::Slow,
        Bug::CrashOnRevenue,
        Bug::LoseOnRestart,
        Bug::LeakBranches,
        Bug::IgnoreClarification,
        Bug::NoDone,
        Bug::EmptyStream,
        Bug::WrongToolArgs,
        Bug::RedundantCalls,
        Bug::WrongTotal,
        Bug::NoPersist,
    ];

    /// The bug's name on the command line and in `PROPERTY_AGENT_BUG`.
    fn name(self) -> &'static str {
        match self {
            Bug::WrongCount => "wrong-count",
            Bug::SkipTools => "skip-tools",
            Bug::ForgetContext => "forget-context",
            Bug::Slow => "slow",
            Bug::CrashOnRevenue => "crash-on-revenue",
            Bug::LoseOnRestart => "lose-on-restart",
            Bug::LeakBranches => "leak-branches",
            Bug::IgnoreClarification => "ignore-clarification",
            Bug::NoDone => "no-done",
            Bug::EmptyStream => "empty-stream",
            Bug::WrongToolArgs => "wrong-tool-args",
            Bug::RedundantCalls => "redundant-calls",
            Bug::WrongTotal => "wrong-total",
            Bug::NoPersist => "no-persist",
        }
    }
}

/// The set of enabled bugs (empty by default).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Bugs(Vec<Bug>);

impl Bugs {
    /// Whether `bug` is enabled.
    pub(crate) fn has(&self, bug: Bug) -> bool {
        self.0.contains(&bug)
    }
}

/// Parses a comma-separated list of bug names; unknown names are an error listing the valid ones.
pub(crate) fn parse_bugs(list: &str) -> Result<Bugs, String> {
    let mut bugs = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let bug = Bug::ALL
            .into_iter()
            .find(|b| b.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                let valid: Vec<&str> = Bug::ALL.iter().map(|b| b.name()).collect();
                format!("unknown bug `{name}`; valid bugs: {}", valid.join(", "))
            })?;
        if !bugs.contains(&bug) {
            bugs.push(bug);
        }
    }
    Ok(Bugs(bugs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_and_rejects_unknown_names() {
        assert_eq!(parse_bugs(""), Ok(Bugs::default()));
        let bugs = parse_bugs("slow, wrong-count,slow").unwrap_or_default();
        assert!(bugs.has(Bug::Slow) && bugs.has(Bug::WrongCount));
        assert!(!bugs.has(Bug::SkipTools));
        let err = parse_bugs("slow,nope").err().unwrap_or_default();
        assert!(err.contains("`nope`"), "{err}");
        for name in [
            "wrong-count",
            "skip-tools",
            "forget-context",
            "slow",
            "crash-on-revenue",
            "lose-on-restart",
            "leak-branches",
            "ignore-clarification",
            "no-done",
            "empty-stream",
            "wrong-tool-args",
            "redundant-calls",
            "wrong-total",
            "no-persist",
        ] {
            assert!(err.contains(name), "{err}");
            assert!(parse_bugs(name).is_ok());
        }
    }
}
