//! transform: every turn's output rewritten before the checks read it, by a JSON
//! pointer or a minijinja expression (the case's `transform`).
//!
//! A transform that cannot read an output (not JSON, a pointer to nothing, an
//! expression that fails) makes the case's checks `error`: gavel could not grade
//! what the target said, which is not the target failing.

use gavel_core::{Transcript, Transform};
use minijinja::{Environment, UndefinedBehavior};
use serde_json::Value;

use crate::error::FieldError;
use crate::names::short;

/// A compiled transform.
#[derive(Debug, PartialEq)]
pub(crate) struct OutputTransform {
    how: How,
}

#[derive(Debug, PartialEq)]
enum How {
    Pointer(String),
    /// The expression's source, compiled on use (a compiled expression borrows its
    /// environment); compiling once here proves it parses.
    Expression(String),
}

impl OutputTransform {
    /// Checks the pointer's form or compiles the expression.
    pub(crate) fn compile(spec: &Transform) -> Result<Self, FieldError> {
        let how = match spec {
            Transform::Pointer(p) if !p.is_empty() && !p.starts_with('/') => {
                return Err(FieldError::new(
                    "pointer",
                    format!("a JSON pointer starts with `/`, e.g. `/{p}`"),
                ));
            }
            Transform::Pointer(p) => How::Pointer(p.clone()),
            Transform::Expression(e) => {
                environment()
                    .compile_expression(e)
                    .map_err(|err| FieldError::new("expression", err.to_string()))?;
                How::Expression(e.clone())
            }
        };
        Ok(OutputTransform { how })
    }

    /// The transcript with every sound turn's output rewritten, or why one could
    /// not be (naming the round).
    pub(crate) fn apply(&self, transcript: &Transcript) -> Result<Transcript, String> {
        let mut out = transcript.clone();
        for turn in out.turns.iter_mut().filter(|t| t.failure.is_none()) {
            turn.output = self.rewrite(&turn.output).map_err(|why| {
                format!(
                    "transform of round {}'s output failed: {why}",
                    turn.round + 1
                )
            })?;
        }
        Ok(out)
    }

    /// One answer rewritten (a compared answer of `pairwise` or `select-best`),
    /// or why it could not be.
    pub(crate) fn answer(&self, output: &str) -> Result<String, String> {
        self.rewrite(output)
            .map_err(|why| format!("transform of the answer failed: {why}"))
    }

    fn rewrite(&self, output: &str) -> Result<String, String> {
        let parsed = serde_json::from_str::<Value>(output).ok();
        match &self.how {
            How::Pointer(pointer) => {
                let json = parsed
                    .ok_or_else(|| format!("the output is not JSON: {:?}", short(output.trim())))?;
                match json.pointer(pointer) {
                    Some(Value::String(s)) => Ok(s.clone()),
                    Some(other) => Ok(other.to_string()),
                    None => Err(format!("the output JSON has nothing at `{pointer}`")),
                }
            }
            How::Expression(source) => {
                let env = environment();
                let expr = env.compile_expression(source).map_err(|e| e.to_string())?;
                let value = expr
                    .eval(minijinja::context! {
                        output => output,
                        json => parsed.map(|v| minijinja::Value::from(minijinja::value::Serde(v))),
                    })
                    .map_err(|e| e.to_string())?;
                if value.is_undefined() || value.is_none() {
                    return Err(format!("`{source}` gave nothing"));
                }
                Ok(match value.as_str() {
                    Some(s) => s.to_owned(),
                    None => serde_json::to_string(&value).map_err(|e| e.to_string())?,
                })
            }
        }
    }
}

/// A strict environment: an undefined name is an error, not an empty string.
fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use gavel_core::Status;

    use crate::judge::testing::{Models, Scripted, reply};
    use crate::testing::{case, compile_err, run_all, transcript, turn};

    fn verdicts(body: &str, output: &str) -> Vec<gavel_core::Verdict> {
        let plan = crate::testing::compile(&case(body)).unwrap();
        run_all(&plan, &transcript(vec![turn(0, output)]))
    }

    #[test]
    fn a_pointer_picks_the_answer_out_of_json() {
        let body = "input: q\ntransform: {pointer: /answer}\nchecks: [{type: equals, value: Beach House}]\n";
        let v = &verdicts(body, r#"{"answer": "Beach House", "debug": 1}"#)[0];
        assert_eq!(v.status, Status::Pass, "{}", v.reason);
        let v = &verdicts(body, r#"{"answer": "Villa"}"#)[0];
        assert_eq!(v.status, Status::Fail);
        // Not JSON, or nothing there: gavel could not grade, so error.
        let v = &verdicts(body, "Beach House")[0];
        assert_eq!(v.status, Status::Error);
        assert!(
            v.reason
                .starts_with("transform of round 1's output failed: the output is not JSON"),
            "{}",
            v.reason
        );
        let v = &verdicts(body, r#"{"other": 1}"#)[0];
        assert_eq!(v.status, Status::Error);
        assert!(v.reason.ends_with("nothing at `/answer`"), "{}", v.reason);
    }

    #[test]
    fn an_expression_rewrites_the_text_or_the_json() {
        let body = "input: q\ntransform: {expression: 'output | upper'}\nchecks: [{type: contains, value: BEACH}]\n";
        assert_eq!(verdicts(body, "beach house")[0].status, Status::Pass);
        let body = "input: q\ntransform: {expression: 'json.items | length'}\nchecks: [{type: equals, value: '3'}]\n";
        assert_eq!(
            verdicts(body, r#"{"items": [1, 2, 3]}"#)[0].status,
            Status::Pass
        );
        let v = &verdicts(body, "not json")[0];
        assert_eq!(v.status, Status::Error, "{}", v.reason);
    }

    #[test]
    fn broken_turns_stay_skipped_and_bad_transforms_are_refused() {
        let body =
            "input: q\ntransform: {pointer: /answer}\nchecks: [{type: contains, value: x}]\n";
        let plan = crate::testing::compile(&case(body)).unwrap();
        let mut broken = turn(0, "");
        broken.failure = Some(gavel_core::TargetFailure {
            message: "timeout".into(),
            transient: true,
        });
        let v = &run_all(&plan, &transcript(vec![broken]))[0];
        assert_eq!(v.status, Status::Skipped);

        let e = compile_err("input: q\ntransform: {pointer: answer}\n");
        assert!(
            e.contains("transform.pointer: a JSON pointer starts with `/`"),
            "{e}"
        );
        let e = compile_err("input: q\ntransform: {expression: 'output |'}\n");
        assert!(e.contains("transform.expression: "), "{e}");
    }

    /// A judge that passes the answer and keeps every request.
    fn passing() -> std::sync::Arc<Scripted> {
        Scripted::with(|_| reply(r#"{"status":"ok","reasoning":"named","score":1}"#))
    }

    #[tokio::test]
    async fn judges_grade_the_transformed_answer() {
        let body = "input: q\ncriteria: Names the house\ntransform: {pointer: /answer}\nchecks: [{type: contains, value: Beach}]\n";
        let plan = crate::testing::compile(&case(body)).unwrap();
        let raw = transcript(vec![turn(
            0,
            r#"{"answer": "Beach House", "note": "RAWMARK"}"#,
        )]);
        let model = passing();
        let models = Models::new(model.clone());
        let verdicts = plan.run(&raw, &models.runtime()).await;
        let statuses: Vec<_> = verdicts
            .iter()
            .map(|v| (v.kind.as_str(), v.status))
            .collect();
        assert_eq!(
            statuses,
            [("contains", Status::Pass), ("judge", Status::Pass)],
            "{verdicts:?}"
        );
        let prompt = &model.requests()[0].messages[0].content;
        assert!(prompt.contains("Beach House"), "{prompt}");
        assert!(!prompt.contains("RAWMARK"), "{prompt}");

        // A judge's fail is the judge's, not a transform error.
        let failing = Scripted::new([reply(r#"{"status":"ok","reasoning":"vague","score":0}"#)]);
        let models = Models::new(failing);
        let v = plan.run(&raw, &models.runtime()).await.remove(1);
        assert_eq!(
            (v.status, v.score),
            (Status::Fail, Some(0.0)),
            "{}",
            v.reason
        );

        // A re-judgement reads the stored (raw) transcript and transforms it once too.
        let models = Models::new(passing());
        let v = plan.run_judges(&raw, &models.runtime()).await.remove(0);
        assert_eq!(v.status, Status::Pass, "{}", v.reason);
    }

    #[tokio::test]
    async fn select_best_compares_the_transformed_answers() {
        let body = "input: q\ntransform: {pointer: /answer}\nchecks: [{type: select-best}]\n";
        let plan = crate::testing::compile(&case(body)).unwrap();
        let spec = &plan.select_best()[0];
        // Picks the answer shown with GOOD, by its number.
        let model = Scripted::with(|r| {
            let prompt = &r.messages[0].content;
            let number = prompt[..prompt.find("GOOD").unwrap()]
                .matches("## Answer ")
                .count();
            reply(&format!(
                r#"{{"reasoning":"GOOD is best","best":{number}}}"#
            ))
        });
        let models = Models::new(model.clone());
        let outputs = [
            r#"{"answer": "weak answer", "note": "RAWMARK"}"#,
            r#"{"answer": "GOOD answer", "note": "RAWMARK"}"#,
            "not json",
        ];
        let input = crate::SelectBestInput {
            case_id: "c",
            group: "repeat 0",
            candidates: ["a", "b", "c"]
                .iter()
                .zip(outputs)
                .map(|(label, output)| crate::Candidate {
                    label,
                    input: "q",
                    output: Some(output),
                })
                .collect(),
        };
        let verdicts = crate::select_best(spec, &input, &models.runtime()).await;
        let statuses: Vec<_> = verdicts.iter().map(|v| v.status).collect();
        assert_eq!(
            statuses,
            [Status::Fail, Status::Pass, Status::Error],
            "{verdicts:?}"
        );
        assert!(
            verdicts[2]
                .reason
                .starts_with("transform of the answer failed: the output is not JSON"),
            "{}",
            verdicts[2].reason
        );
        let requests = model.requests();
        assert_eq!(requests.len(), 1);
        let prompt = &requests[0].messages[0].content;
        assert!(
            prompt.contains("weak answer") && prompt.contains("GOOD answer"),
            "{prompt}"
        );
        assert!(
            !prompt.contains("RAWMARK") && !prompt.contains("not json"),
            "{prompt}"
        );
    }

    #[tokio::test]
    async fn pairwise_compares_the_transformed_answers() {
        let body = "input: q\ntransform: {pointer: /answer}\nchecks: [{type: pairwise, against: {target: b}}]\n";
        let plan = crate::testing::compile(&case(body)).unwrap();
        let spec = plan.pairwise().remove(0);
        let model = Scripted::with(|_| reply(r#"{"reasoning":"as good","winner":"tie"}"#));
        let models = Models::new(model.clone());
        let input = |output, other| crate::PairwiseInput {
            prompt: "q",
            output,
            other,
            other_label: "target `b`",
            criteria: "",
        };
        let raw = input(
            r#"{"answer": "Beach House", "note": "RAWMARK"}"#,
            r#"{"answer": "The Villa", "note": "RAWMARK"}"#,
        );
        let v = crate::pairwise(&spec, &raw, &models.runtime()).await;
        assert_eq!(
            (v.status, v.score),
            (Status::Pass, Some(0.5)),
            "{}",
            v.reason
        );
        let prompt = &model.requests()[0].messages[0].content;
        assert!(
            prompt.contains("Beach House") && prompt.contains("The Villa"),
            "{prompt}"
        );
        assert!(!prompt.contains("RAWMARK"), "{prompt}");

        let broken = input(r#"{"answer": "Beach House"}"#, "plain text");
        let v = crate::pairwise(&spec, &broken, &models.runtime()).await;
        assert_eq!(v.status, Status::Error);
        assert!(
            v.reason
                .starts_with("transform of the answer failed: the output is not JSON")
                && v.reason.ends_with("(target `b`)"),
            "{}",
            v.reason
        );
    }
}
