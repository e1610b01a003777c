//! Code checks gate judges: a case's judges run only when its tool and
//! structural checks passed; otherwise they are `skipped`, "gated by <check>".

use gavel_core::{CheckKind, Status, Verdict};

/// The kinds of code checks that gate the judges: tool and structural checks.
pub const GATING_KINDS: [CheckKind; 4] = [
    CheckKind::ToolsCalled,
    CheckKind::ToolVerification,
    CheckKind::Trajectory,
    CheckKind::Stream,
];

/// The first gating check that failed or broke, if any: the judges do not run.
pub(crate) fn closed_by(code: &[Verdict]) -> Option<&Verdict> {
    code.iter().find(|v| {
        GATING_KINDS.contains(&v.kind) && matches!(v.status, Status::Fail | Status::Error)
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use gavel_core::Status;

    use crate::testing::{case, compile, run_all, transcript, turn};

    #[test]
    fn a_failed_tool_check_skips_the_judges_and_says_why() {
        let c = case(
            "input: q\nexpected_tools: [search]\ncriteria: Answers well\nchecks: [{type: contains, value: nope}]\n",
        );
        let plan = compile(&c).unwrap();
        let v = run_all(&plan, &transcript(vec![turn(0, "x")]));
        assert_eq!(v.len(), 3);
        assert_eq!(
            (v[0].kind.as_str(), v[0].status),
            ("contains", Status::Fail)
        );
        assert_eq!(
            (v[1].kind.as_str(), v[1].status),
            ("tools-called", Status::Fail)
        );
        assert_eq!(
            (v[2].kind.as_str(), v[2].status),
            ("judge", Status::Skipped)
        );
        assert_eq!(v[2].reason, format!("gated by {}", v[1].check));
        assert_eq!(v[2].round, Some(0));

        // A failed text check does not gate; with the tool called the judge runs
        // (and, with no model, is skipped for that reason instead).
        let mut called = turn(0, "x");
        called.tool_calls.push(gavel_core::ToolCall {
            name: "search".into(),
            arguments: serde_json::Value::Null,
            result: None,
            ..Default::default()
        });
        let v = run_all(&plan, &transcript(vec![called]));
        assert_eq!(v[2].status, Status::Skipped);
        assert!(v[2].reason.starts_with("no judge model"), "{}", v[2].reason);
    }
}
