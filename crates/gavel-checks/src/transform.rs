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
pub(crate) struct OutputTransform {
    how: How,
}

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
}
