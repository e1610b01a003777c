//! Clarifying questions: telling one apart from an answer by its form, and the
//! check a round with `expect_clarification: true` gets.

use serde_json::json;

use crate::check::CodeCheck;
use crate::finding::Finding;
use crate::subject::Subject;

/// Phrases that mark a question as a request for clarification.
const PHRASES: [&str; 14] = [
    "do you mean",
    "did you mean",
    "could you clarify",
    "can you clarify",
    "please clarify",
    "could you specify",
    "can you specify",
    "please specify",
    "which one",
    "which listing",
    "which of",
    "could you tell me which",
    "can you tell me which",
    "what do you mean",
];

/// Whether `output` asks for clarification, by its form and phrasing alone: it
/// ends with a question, and either is a single question or that last question
/// uses a clarification phrase ("which … do you mean", "could you clarify", …).
/// A polite closing question after an answer ("Anything else?") is not one.
pub fn looks_like_clarification(output: &str) -> bool {
    let text = output.trim();
    if !text.ends_with('?') {
        return false;
    }
    let body = text.trim_end_matches('?');
    let last = body
        .rfind(['.', '!', '?', '\n'])
        .map_or(body, |i| &body[i + 1..])
        .to_lowercase();
    let single = !body.contains(['.', '!', '?', '\n']) || body.len() == last.len();
    single || PHRASES.iter().any(|p| last.contains(p))
}

/// The check of a round that expects a clarifying question.
pub(crate) struct ClarificationCheck;

impl ClarificationCheck {
    /// The kind of its verdicts.
    pub(crate) const KIND: &'static str = "clarification";
}

impl CodeCheck for ClarificationCheck {
    /// Display name.
    fn name(&self) -> String {
        "asks a clarifying question".to_owned()
    }

    fn kind(&self) -> &'static str {
        Self::KIND
    }

    /// Passes when the round's answer is a clarifying question.
    fn evaluate(&self, subject: &Subject<'_>) -> Finding {
        let answer = subject.answer;
        let evidence = json!({ "expect_clarification": true });
        if looks_like_clarification(&answer.output) {
            Finding::pass("the agent asked a clarifying question", evidence)
        } else {
            Finding::fail(
                "the round expects a clarifying question, but the answer does not end with one",
                evidence,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use gavel_core::Status;

    use super::looks_like_clarification as clarifies;
    use crate::testing::{case, run_one, turn};

    #[test]
    fn questions_asking_which_one_are_clarifications() {
        assert!(clarifies(
            "Which listing do you mean: Beach House, Mountain Cabin or City Apartment?"
        ));
        assert!(clarifies("For which month?"));
        assert!(clarifies(
            "I can help with that. Could you clarify which property you mean?"
        ));
    }

    #[test]
    fn answers_and_polite_closing_questions_are_not() {
        assert!(!clarifies("You have 3 listings."));
        assert!(!clarifies(
            "You have 3 listings: A, B and C. Anything else I can help with?"
        ));
        assert!(!clarifies("Is it booked? No: it is free in March."));
        assert!(!clarifies(""));
    }

    #[test]
    fn a_round_expecting_a_question_fails_on_an_answer() {
        let c = case("input: Occupancy?\nexpect_clarification: true\n");
        let v = run_one(&c, vec![turn(0, "Which listing do you mean?")]);
        assert_eq!(
            (v.status, v.kind.as_str(), v.round),
            (Status::Pass, "clarification", Some(0))
        );
        let v = run_one(&c, vec![turn(0, "The occupancy is 78%.")]);
        assert_eq!(v.status, Status::Fail);
        assert!(
            v.reason.contains("expects a clarifying question"),
            "{}",
            v.reason
        );
    }
}
