//! Trying one check on a sample answer while it is being written: the same
//! compile and the same code as a run, no model called.

use gavel_core::{Case, Transcript, Turn};

use super::CheckForm;

/// What trying a check said.
#[derive(Debug, PartialEq)]
pub(crate) enum Tried {
    /// The check's verdict on the sample: its status word and reason.
    Verdict(gavel_core::Status, String),
    /// The check cannot run: why.
    Invalid(String),
}

/// Runs a deterministic check on `sample` as the answer to one message.
pub(crate) fn try_check(check: &CheckForm, sample: &str) -> Tried {
    let check = match check.to_check() {
        Ok(c) => c,
        Err(e) => return Tried::Invalid(e),
    };
    let case = serde_json::json!({"id": "try", "input": "sample", "checks": [check]});
    let case: Case = match serde_json::from_value(case) {
        Ok(c) => c,
        Err(e) => return Tried::Invalid(e.to_string()),
    };
    let plan = match gavel_checks::compile(&case, &Default::default()) {
        Ok(p) => p,
        Err(e) => return Tried::Invalid(e.to_string()),
    };
    let transcript = Transcript {
        session_id: "try".into(),
        turns: vec![Turn {
            input: "sample".into(),
            output: sample.to_owned(),
            ..Turn::default()
        }],
    };
    match plan.run_code(&transcript).into_iter().next() {
        Some(v) => Tried::Verdict(v.status, v.reason),
        None => Tried::Invalid("a judged check runs only in a run".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tried(kind: &str, value: &str, sample: &str) -> Tried {
        let check = CheckForm {
            kind: kind.into(),
            value: value.into(),
            ..CheckForm::default()
        };
        try_check(&check, sample)
    }

    #[test]
    fn a_pattern_is_tried_on_the_sample() {
        use gavel_core::Status::{Fail, Pass};
        assert!(matches!(
            tried("regex", r"\d+ Ocean", "at 12 Ocean Drive"),
            Tried::Verdict(Pass, _)
        ));
        assert!(matches!(
            tried("regex", r"\d+ Ocean", "nowhere"),
            Tried::Verdict(Fail, _)
        ));
        assert!(matches!(
            tried("contains", "Ocean", "Ocean Drive"),
            Tried::Verdict(Pass, _)
        ));
        assert!(matches!(
            tried("not-contains", "sorry", "Sorry!"),
            Tried::Verdict(Fail, _)
        ));
        match tried("regex", "(12 Ocean", "x") {
            Tried::Invalid(why) => assert!(why.contains("pattern"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(tried("judge", "", "x"), Tried::Invalid(_)));
    }
}
