//! grounding: the number the agent claimed against an oracle's value, within a
//! relative tolerance. An oracle that cannot be read gives `skipped` with
//! [`GROUND_TRUTH_UNAVAILABLE`], never `fail`.

use std::time::Duration;

use gavel_core::agent_check::{Claim, GroundingSpec, Oracle};
use gavel_core::{Status, Turn};
use regex::Regex;
use serde_json::{Value, json};

use crate::error::FieldError;
use crate::plan::{Finding, short};
use crate::sql::Database;

/// The reason code of a grounding check whose oracle could not be read.
pub const GROUND_TRUTH_UNAVAILABLE: &str = "GROUND_TRUTH_UNAVAILABLE";

/// The tolerance when a check gives none: 5 %.
const DEFAULT_TOLERANCE: f64 = 0.05;

/// How long an oracle command may run.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// A compiled grounding check.
pub(crate) struct GroundingCheck {
    claim: CompiledClaim,
    oracle: CompiledOracle,
    tolerance: f64,
}

enum CompiledClaim {
    Regex(Regex),
    Pointer(String),
}

enum CompiledOracle {
    Value(f64),
    Sql { db: Database, query: String },
    Command(Vec<String>),
}

impl GroundingCheck {
    /// Compiles the claim's regex and the oracle's database.
    pub(crate) fn compile(spec: &GroundingSpec) -> Result<Self, FieldError> {
        let claim = match &spec.claim {
            Claim::Regex(p) => CompiledClaim::Regex(
                Regex::new(p).map_err(|e| FieldError::new("claim.regex", e.to_string()))?,
            ),
            Claim::Pointer(p) if p.is_empty() || p.starts_with('/') => {
                CompiledClaim::Pointer(p.clone())
            }
            Claim::Pointer(p) => {
                return Err(FieldError::new(
                    "claim.pointer",
                    format!("`{p}` is not a JSON pointer (it starts with `/`)"),
                ));
            }
        };
        let oracle = match &spec.oracle {
            Oracle::Value(v) => CompiledOracle::Value(*v),
            Oracle::Sql { database, query } => CompiledOracle::Sql {
                db: Database::parse(database)
                    .map_err(|e| FieldError::new("oracle.sql.database", e))?,
                query: query.clone(),
            },
            Oracle::Command(argv) if argv.is_empty() => {
                return Err(FieldError::new("oracle.command", "give the program to run"));
            }
            Oracle::Command(argv) => CompiledOracle::Command(argv.clone()),
        };
        let tolerance = spec.tolerance.unwrap_or(DEFAULT_TOLERANCE);
        if !(tolerance.is_finite() && tolerance >= 0.0) {
            return Err(FieldError::new("tolerance", "must be a number >= 0"));
        }
        Ok(GroundingCheck {
            claim,
            oracle,
            tolerance,
        })
    }

    /// Display name, e.g. `grounding /\$([0-9,]+)/ ±5%`.
    pub(crate) fn name(&self) -> String {
        let claim = match &self.claim {
            CompiledClaim::Regex(re) => format!("/{}/", short(re.as_str())),
            CompiledClaim::Pointer(p) => p.clone(),
        };
        format!("grounding {claim} ±{}%", self.tolerance * 100.0)
    }

    /// Reads the claim from the answer, the truth from the oracle, and compares.
    pub(crate) async fn evaluate(&self, answer: &Turn, session_id: &str) -> Finding {
        let claimed = match self.claimed(answer) {
            Ok(v) => v,
            Err(why) => return Finding::fail(why, json!({ "claimed": null })),
        };
        let truth = match self.truth(session_id).await {
            Ok(v) => v,
            Err(why) => {
                return Finding {
                    status: Status::Skipped,
                    reason: format!("{GROUND_TRUTH_UNAVAILABLE}: {why}"),
                    evidence: json!({ "code": GROUND_TRUTH_UNAVAILABLE, "claimed": claimed }),
                };
            }
        };
        let deviation = if truth == 0.0 {
            claimed.abs()
        } else {
            (claimed - truth).abs() / truth.abs()
        };
        let evidence = json!({
            "claimed": claimed,
            "truth": truth,
            "relative_error": deviation,
            "tolerance": self.tolerance,
        });
        let text = format!(
            "claimed {claimed}, truth {truth}: off by {:.2}% (tolerance {}%)",
            deviation * 100.0,
            self.tolerance * 100.0
        );
        if deviation <= self.tolerance + 1e-12 {
            Finding::pass(text, evidence)
        } else {
            Finding::fail(text, evidence)
        }
    }

    /// The number the agent claimed, or why none was found (the agent's fault).
    fn claimed(&self, answer: &Turn) -> Result<f64, String> {
        match &self.claim {
            CompiledClaim::Regex(re) => {
                let caps = re.captures(&answer.output).ok_or_else(|| {
                    format!(
                        "no claimed number: /{}/ does not match the answer",
                        re.as_str()
                    )
                })?;
                let text = caps
                    .get(1)
                    .or_else(|| caps.get(0))
                    .map_or("", |m| m.as_str());
                number_in(text).ok_or_else(|| format!("claimed value `{text}` is not a number"))
            }
            CompiledClaim::Pointer(p) => {
                let parsed: Option<Value> = serde_json::from_str(&answer.output).ok();
                let value = parsed
                    .as_ref()
                    .and_then(|v| v.pointer(p))
                    .or_else(|| answer.response.as_ref().and_then(|r| r.pointer(p)))
                    .ok_or_else(|| format!("no claimed number: the answer has no `{p}`"))?;
                number_of(value).ok_or_else(|| format!("claimed value {value} is not a number"))
            }
        }
    }

    /// The oracle's value, or why it cannot be had.
    async fn truth(&self, session_id: &str) -> Result<f64, String> {
        match &self.oracle {
            CompiledOracle::Value(v) => Ok(*v),
            CompiledOracle::Sql { db, query } => {
                let rows = db.rows(query, session_id).await?;
                let first = rows
                    .first()
                    .and_then(|r| r.values().next())
                    .ok_or_else(|| {
                        format!("the oracle query on {} returned no rows", db.shown())
                    })?;
                number_of(first)
                    .ok_or_else(|| format!("the oracle query returned {first}, not a number"))
            }
            CompiledOracle::Command(argv) => command_value(argv).await,
        }
    }
}

/// Runs an oracle command (arguments expanded) and parses its standard output.
async fn command_value(argv: &[String]) -> Result<f64, String> {
    let expanded: Vec<String> = argv
        .iter()
        .map(|a| shellexpand::env(a).map(|s| s.into_owned()))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("cannot expand the oracle command: {e}"))?;
    let mut cmd = tokio::process::Command::new(&expanded[0]);
    cmd.args(&expanded[1..]).kill_on_drop(true);
    let out = tokio::time::timeout(COMMAND_TIMEOUT, cmd.output())
        .await
        .map_err(|_| format!("the oracle command `{}` timed out", expanded[0]))?
        .map_err(|e| format!("cannot run the oracle command `{}`: {e}", expanded[0]))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "the oracle command `{}` failed ({}): {}",
            expanded[0],
            out.status,
            short(stderr.trim())
        ));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    number_in(stdout.trim()).ok_or_else(|| {
        format!(
            "the oracle command printed `{}`, not a number",
            short(stdout.trim())
        )
    })
}

/// A number written as text: `$4,680`, `4 680.50`, `-3e2`.
fn number_in(text: &str) -> Option<f64> {
    let cleaned: String = text
        .trim()
        .trim_start_matches(['$', '€', '£'])
        .chars()
        .filter(|c| !matches!(c, ',' | ' ' | '_'))
        .collect();
    cleaned.parse().ok().filter(|v: &f64| v.is_finite())
}

/// A JSON number, or a string holding one.
fn number_of(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => number_in(s),
        _ => None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use gavel_core::Status;
    use serde_json::json;

    use crate::plan::tests::{case, compile_err, run_one_async as run_one, turn};

    fn grounding(oracle: &str) -> gavel_core::Case {
        case(&format!(
            "input: q\nchecks:\n  - type: grounding\n    claim: {{regex: 'total of \\$([0-9,.]+)'}}\n    oracle: {oracle}\n"
        ))
    }

    #[tokio::test]
    async fn claims_within_tolerance_pass() {
        let c = grounding("{value: 4680}");
        let v = run_one(&c, vec![turn(0, "You made a total of $4,680 in February.")]).await;
        assert_eq!(v.status, Status::Pass, "{}", v.reason);
        assert_eq!(v.check, "grounding /total of \\$([0-9,.]+)/ ±5%");
        let v = run_one(&c, vec![turn(0, "a total of $4,500.")]).await;
        assert_eq!(v.status, Status::Pass, "3.8% off: {}", v.reason);
        let v = run_one(&c, vec![turn(0, "a total of $3,900.")]).await;
        assert_eq!(v.status, Status::Fail);
        assert_eq!(
            v.reason,
            "claimed 3900, truth 4680: off by 16.67% (tolerance 5%)"
        );
        let v = run_one(&c, vec![turn(0, "I do not know")]).await;
        assert_eq!(v.status, Status::Fail);
        assert!(v.reason.starts_with("no claimed number"), "{}", v.reason);
    }

    #[tokio::test]
    async fn pointer_claims_read_json_answers() {
        let c = case(
            "input: q\nchecks: [{type: grounding, claim: {pointer: /total}, oracle: {value: 10}, tolerance: 0}]\n",
        );
        let v = run_one(&c, vec![turn(0, r#"{"total": "10"}"#)]).await;
        assert_eq!(v.status, Status::Pass, "{}", v.reason);
        let mut t = turn(0, "text");
        t.response = Some(json!({"total": 11}));
        assert_eq!(run_one(&c, vec![t]).await.status, Status::Fail);
    }

    #[tokio::test]
    async fn command_oracles_and_unavailable_truth() {
        let c = grounding("{command: [sh, -c, 'echo 4680']}");
        let v = run_one(&c, vec![turn(0, "a total of $4,680")]).await;
        assert_eq!(v.status, Status::Pass, "{}", v.reason);

        let c = grounding("{command: [sh, -c, 'exit 3']}");
        let v = run_one(&c, vec![turn(0, "a total of $4,680")]).await;
        assert_eq!(v.status, Status::Skipped);
        assert!(
            v.reason
                .starts_with("GROUND_TRUTH_UNAVAILABLE: the oracle command `sh` failed"),
            "{}",
            v.reason
        );
        assert_eq!(v.score, None);

        let c = grounding("{sql: {database: /nonexistent/dir/x.db, query: 'SELECT 1'}}");
        let v = run_one(&c, vec![turn(0, "a total of $4,680")]).await;
        assert_eq!(v.status, Status::Skipped);
        assert!(
            v.reason
                .starts_with("GROUND_TRUTH_UNAVAILABLE: cannot open /nonexistent/dir/x.db"),
            "{}",
            v.reason
        );
    }

    #[test]
    fn bad_claims_are_compile_errors() {
        let e = compile_err(
            "input: q\nchecks: [{type: grounding, claim: {pointer: total}, oracle: {value: 1}}]\n",
        );
        assert!(e.contains("checks[0].claim.pointer"), "{e}");
        let e = compile_err(
            "input: q\nchecks: [{type: grounding, claim: {regex: '('}, oracle: {value: 1}}]\n",
        );
        assert!(e.contains("checks[0].claim.regex"), "{e}");
    }
}
