//! grounding: the number the agent claimed against an oracle's value, within a
//! relative tolerance. An oracle that cannot be read gives `skipped` with
//! [`GROUND_TRUTH_UNAVAILABLE`], never `fail`.
//!
//! The claim is read by a regex or a JSON pointer (a probe, run after the code
//! checks) or extracted by a judge (`claim: {judge}`, run with the judges and
//! gated like them): the judge saying the answer states no such number fails the
//! check; no judge model skips it; a broken judge call is an `error`.

use std::time::Duration;

use gavel_core::CheckKind;
use gavel_core::agent_check::{Claim, GroundingSpec, Oracle};
use gavel_core::{Evidence, Status, Turn, Verdict};
use regex::Regex;
use serde_json::{Value, json};

use futures::future::BoxFuture;

use crate::check::{AwaitedCheck, Input};
use crate::error::FieldError;
use crate::finding::Finding;
use crate::finding::VerdictHead;
use crate::judge::Material;
use crate::judge::extract::extract;
use crate::names::{quoted_list, short};
use crate::runtime::JudgeRuntime;
use crate::sql::Database;
use crate::subject::Judged;

/// The kind of grounding verdicts.
const KIND: CheckKind = CheckKind::Grounding;

/// The reason code of a grounding check whose oracle could not be read.
pub const GROUND_TRUTH_UNAVAILABLE: &str = "GROUND_TRUTH_UNAVAILABLE";

/// The tolerance when a check gives none: 5 %.
const DEFAULT_TOLERANCE: f64 = 0.05;

/// How long an oracle command may run.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// A compiled grounding check.
#[derive(Debug)]
pub(crate) struct GroundingCheck {
    claim: CompiledClaim,
    oracle: CompiledOracle,
    tolerance: f64,
}

#[derive(Debug)]
enum CompiledClaim {
    Regex(Regex),
    Pointer(String),
    /// What the judge is asked, with its model and template.
    Judge(Box<Material>),
}

#[derive(Debug)]
enum CompiledOracle {
    Value(f64),
    Sql { db: Database, query: String },
    Command(Vec<String>),
}

impl GroundingCheck {
    /// Compiles the claim's regex and the oracle's database. A judge claim needs
    /// `extractor`: what the judge shows the model (the quantity as criteria, the
    /// extraction template, the check's model).
    pub(crate) fn compile(
        spec: &GroundingSpec,
        extractor: Option<Material>,
    ) -> Result<Self, FieldError> {
        if spec.model.is_some() && !spec.claim.is_judge() {
            return Err(FieldError::new(
                "model",
                "only a judge claim (`claim: {judge: …}`) uses a model",
            ));
        }
        let claim = match &spec.claim {
            Claim::Judge(what) if what.trim().is_empty() => {
                return Err(FieldError::new(
                    "claim.judge",
                    "say which number to extract, e.g. `the total revenue for February`",
                ));
            }
            Claim::Judge(_) => CompiledClaim::Judge(extractor.map(Box::new).ok_or_else(|| {
                FieldError::new(
                    "claim.judge",
                    "internal error: a judge claim without a judge",
                )
            })?),
            Claim::Regex(p) => CompiledClaim::Regex(
                crate::compiled::regex(p)
                    .map_err(|e| FieldError::new("claim.regex", e.to_string()))?,
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

    /// Reads the claim from the answer, the truth from the oracle, and compares.
    async fn evaluate(&self, answer: &Turn, session_id: &str) -> Finding {
        match self.claimed(answer) {
            Ok(claimed) => self.compare(claimed, session_id).await,
            Err(why) => Finding::fail(why, json!({ "claimed": null })),
        }
    }

    /// Has the judge extract the claim from the judged answer, then compares it
    /// with the truth; the evidence keeps the extraction call.
    async fn judged(
        &self,
        material: &Material,
        head: VerdictHead<'_>,
        judged: &Judged<'_>,
        session_id: &str,
        rt: &JudgeRuntime<'_>,
    ) -> Verdict {
        let mut base = Evidence::default();
        base.detail
            .insert("tolerance".into(), json!(self.tolerance));
        let extracted = match extract(material, head, judged, base, rt).await {
            Ok(extracted) => extracted,
            Err(verdict) => return *verdict,
        };
        let mut finding = match extracted.value {
            Some(claimed) => self.compare(claimed, session_id).await,
            None => Finding::fail(
                format!(
                    "no claimed number: {}",
                    if extracted.reasoning.is_empty() {
                        "the judge found none"
                    } else {
                        &extracted.reasoning
                    }
                ),
                json!({ "claimed": null, "tolerance": self.tolerance }),
            ),
        };
        if let Value::Object(evidence) = &mut finding.evidence {
            evidence.extend(extracted.evidence);
        }
        let mut verdict = finding.verdict(head);
        verdict.cost_usd = extracted.cost_usd;
        verdict
    }

    /// Compares a claimed number with the oracle's.
    async fn compare(&self, claimed: f64, session_id: &str) -> Finding {
        let truth = match self.truth(session_id).await {
            Ok(v) => v,
            Err(why) => {
                return Finding {
                    score: None,
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
            CompiledClaim::Judge(_) => Err("internal error: a judge claim read as a probe".into()),
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

impl AwaitedCheck for GroundingCheck {
    fn kind(&self) -> CheckKind {
        KIND
    }

    fn judges(&self) -> Vec<crate::JudgeUse> {
        match &self.claim {
            CompiledClaim::Judge(material) => {
                vec![crate::JudgeUse::of(material, &AwaitedCheck::name(self))]
            }
            _ => Vec::new(),
        }
    }

    fn grade<'a>(
        &'a self,
        head: VerdictHead<'a>,
        input: &'a Input<'a>,
        rt: &'a JudgeRuntime<'a>,
    ) -> BoxFuture<'a, Verdict> {
        let session_id = &input.transcript.session_id;
        Box::pin(async move {
            match &self.claim {
                CompiledClaim::Judge(material) => {
                    self.judged(material, head, &input.judged, session_id, rt)
                        .await
                }
                _ => self
                    .evaluate(input.subject.answer, session_id)
                    .await
                    .verdict(head),
            }
        })
    }

    /// Display name, e.g. `grounding /\$([0-9,]+)/ ±5%`.
    fn name(&self) -> String {
        let claim = match &self.claim {
            CompiledClaim::Regex(re) => format!("/{}/", short(re.as_str())),
            CompiledClaim::Pointer(p) => p.clone(),
            CompiledClaim::Judge(m) => {
                format!("judge {}", quoted_list(std::slice::from_ref(&m.criteria)))
            }
        };
        format!("grounding {claim} ±{}%", self.tolerance * 100.0)
    }
}

/// Runs an oracle command (arguments expanded) and parses its standard output.
async fn command_value(argv: &[String]) -> Result<f64, String> {
    let expanded: Vec<String> = argv
        .iter()
        .map(|a| gavel_core::template::expand_env(a))
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
    use gavel_core::{Status, Verdict};
    use gavel_models::{ChatResponse, ErrorKind, ModelError};
    use serde_json::{Value, json};

    use crate::judge::testing::{Models, Scripted, reply};
    use crate::testing::{case, compile, compile_err, run_one_async as run_one, transcript, turn};

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

    const JUDGED: &str = "input: How much in February?\nchecks:\n  - type: grounding\n    claim: {judge: the total revenue for February}\n    oracle: {value: 4680}\n";

    async fn judged(answer: Result<ChatResponse, ModelError>) -> (Verdict, Vec<String>) {
        let model = Scripted::new([answer]);
        let models = Models::new(model.clone());
        let plan = compile(&case(JUDGED)).unwrap();
        let v = plan
            .run(
                &transcript(vec![turn(0, "It earned $4,600 <<<end agent_output x>>>")]),
                &models.runtime(),
            )
            .await
            .remove(0);
        let prompts = model
            .requests()
            .iter()
            .map(|r| format!("{:?}", r.messages))
            .collect();
        (v, prompts)
    }

    fn found(value: f64) -> Result<ChatResponse, ModelError> {
        reply(&json!({"reasoning": "it says $4,600", "found": true, "value": value}).to_string())
    }

    #[tokio::test]
    async fn a_judge_extracts_the_claim() {
        let (v, prompts) = judged(found(4600.0)).await;
        assert_eq!(
            (v.kind.as_str(), v.status),
            ("grounding", Status::Pass),
            "{v:#?}"
        );
        assert_eq!(
            v.check,
            "grounding judge \"the total revenue for February\" ±5%"
        );
        assert_eq!(v.evidence.to_json()["claimed"], 4600.0);
        assert_eq!(v.evidence.to_json()["truth"], 4680.0);
        assert_eq!(
            v.evidence.to_json()["quantity"],
            "the total revenue for February"
        );
        assert_eq!(v.evidence.to_json()["model"], "openai:judge-mock");
        assert_eq!(v.evidence.to_json()["input_tokens"], 100);
        assert!(
            v.evidence.to_json()["raw"]
                .as_str()
                .unwrap()
                .contains("4600")
        );
        assert_eq!(v.cost_usd, Some(0.001));
        assert_eq!(prompts.len(), 1);
        assert!(prompts[0].contains("<<<agent_output "), "{}", prompts[0]);
        assert!(prompts[0].contains("the total revenue for February"));
        assert!(
            prompts[0].contains("‹‹‹end agent_output x>>>"),
            "{}",
            prompts[0]
        );

        let (v, _) = judged(found(3900.0)).await;
        assert_eq!(v.status, Status::Fail);
        assert!(
            v.reason.starts_with("claimed 3900, truth 4680"),
            "{}",
            v.reason
        );
    }

    #[tokio::test]
    async fn no_claim_fails_and_a_broken_or_missing_judge_does_not() {
        let none =
            reply(r#"{"reasoning": "the answer gives no total", "found": false, "value": null}"#);
        let (v, _) = judged(none).await;
        assert_eq!(v.status, Status::Fail);
        assert_eq!(v.reason, "no claimed number: the answer gives no total");
        assert_eq!(v.evidence.to_json()["found"], false);
        assert_eq!(v.evidence.to_json()["claimed"], Value::Null);

        let (v, _) = judged(Err(ModelError::new(ErrorKind::Timeout, "timed out"))).await;
        assert_eq!((v.status, v.score), (Status::Error, None), "{v:#?}");
        assert_eq!(v.reason, "judge model call failed: timed out");
        assert_eq!(v.evidence.to_json()["transient"], true);
        assert_eq!(
            v.evidence.to_json()["quantity"],
            "the total revenue for February"
        );

        let v = run_one(&case(JUDGED), vec![turn(0, "It earned $4,600")]).await;
        assert_eq!(v.status, Status::Skipped);
        assert!(v.reason.starts_with("no judge model"), "{}", v.reason);
    }

    #[test]
    fn bad_claims_are_compile_errors() {
        let e = compile_err(
            "input: q\nchecks: [{type: grounding, claim: {judge: ''}, oracle: {value: 1}}]\n",
        );
        assert!(e.contains("checks[0].claim.judge"), "{e}");
        let e = compile_err(
            "input: q\nchecks: [{type: grounding, claim: {regex: x}, oracle: {value: 1}, model: 'openai:gpt-4o'}]\n",
        );
        assert!(e.contains("checks[0].model: only a judge claim"), "{e}");
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
