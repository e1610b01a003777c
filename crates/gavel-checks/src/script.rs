//! script: a check written in any language. gavel runs a command with the turn (or
//! the transcript) as JSON on stdin and reads `{pass, score, reason}` from stdout.
//!
//! The command runs directly (no shell) unless the suite gives `shell:`; a process
//! that outlives its timeout is killed. A script that cannot start, exits non-zero,
//! times out or prints something other than the expected object is an `error`
//! (the check broke), never a `fail`. It may also print `{"skip": "why"}`.

use std::process::Stdio;
use std::time::Duration;

use gavel_core::CheckKind;
use gavel_core::{ScriptInput, ScriptSpec, Status, Transcript, Turn};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use futures::future::BoxFuture;
use gavel_core::Verdict;

use crate::check::{AwaitedCheck, Input};
use crate::error::FieldError;
use crate::expected::Expected;
use crate::finding::{Finding, VerdictHead};
use crate::names::{short, truncate};
use crate::runtime::JudgeRuntime;

/// Seconds a script may run by default.
const DEFAULT_TIMEOUT_S: f64 = 30.0;
/// Pass threshold on a score given without `pass`.
const DEFAULT_THRESHOLD: f64 = 0.5;
/// Bytes of standard output read at most.
const MAX_STDOUT: u64 = 1024 * 1024;
/// Bytes of standard error kept at most.
const MAX_STDERR: u64 = 64 * 1024;
/// Characters of the script's stdout or stderr quoted in a reason.
const QUOTED_CHARS: usize = 300;

/// A compiled script check.
pub(crate) struct ScriptCheck {
    argv: Vec<String>,
    shell: bool,
    input: ScriptInput,
    timeout: Duration,
    threshold: f64,
    /// The case's id, expected output and context, sent with every turn.
    case: Value,
}

/// What the case gives the script besides the turns and the expected output.
pub(crate) struct ScriptCase<'a> {
    pub(crate) id: &'a str,
    pub(crate) context: Option<&'a Value>,
}

impl ScriptCheck {
    /// Checks the command, timeout and threshold.
    pub(crate) fn compile(spec: &ScriptSpec, expected: &Expected<'_>) -> Result<Self, FieldError> {
        let (argv, shell) = match (&spec.shell, spec.command.is_empty()) {
            (Some(_), false) => {
                return Err(FieldError::new(
                    "shell",
                    "give `command` or `shell`, not both",
                ));
            }
            (Some(line), true) if line.trim().is_empty() => {
                return Err(FieldError::new("shell", "the command line is empty"));
            }
            (Some(line), true) => (vec!["sh".into(), "-c".into(), line.clone()], true),
            (None, true) => {
                return Err(FieldError::new(
                    "command",
                    "give the program and its arguments, e.g. [python3, checks/tone.py]",
                ));
            }
            (None, false) if spec.command[0].trim().is_empty() => {
                return Err(FieldError::new("command[0]", "the program name is empty"));
            }
            (None, false) => (spec.command.clone(), false),
        };
        let timeout = gavel_core::bounds::seconds(spec.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S))
            .map_err(|e| FieldError::new("timeout_s", e.to_string()))?;
        let threshold = spec.threshold.unwrap_or(DEFAULT_THRESHOLD);
        if !threshold.is_finite() {
            return Err(FieldError::new("threshold", "must be a finite number"));
        }
        Ok(ScriptCheck {
            argv,
            shell,
            input: spec.input,
            timeout,
            threshold,
            case: json!({
                "case_id": expected.script.id,
                "expected_output": expected.output,
                "context": expected.script.context,
            }),
        })
    }

    /// Runs the script on the answer (or the transcript) and reads its verdict;
    /// the score, when the script gave one, comes back too.
    pub(crate) async fn evaluate(&self, answer: &Turn, transcript: &Transcript) -> Finding {
        let mut payload = self.case.clone();
        payload["input"] = json!(answer.input);
        payload["output"] = json!(answer.output);
        match self.input {
            ScriptInput::Turn => payload["turn"] = json!(answer),
            ScriptInput::Transcript => payload["transcript"] = json!(transcript),
        }
        let evidence = json!({ "command": self.shown_command() });
        match self.run(&payload).await {
            Ok(stdout) => read_verdict(&stdout, self.threshold, evidence),
            Err(why) => error(why, evidence),
        }
    }

    /// The command as shown in evidence and reasons.
    fn shown_command(&self) -> Value {
        if self.shell {
            json!({ "shell": self.argv[2] })
        } else {
            json!(self.argv)
        }
    }

    /// Runs the process with `payload` on stdin; its stdout, or why it failed.
    async fn run(&self, payload: &Value) -> Result<String, String> {
        let argv: Vec<String> = if self.shell {
            self.argv.clone()
        } else {
            self.argv
                .iter()
                .map(|a| gavel_core::template::expand_env(a))
                .collect::<Result<_, _>>()
                .map_err(|e| format!("cannot expand the script command: {e}"))?
        };
        let program = &argv[0];
        let mut child = tokio::process::Command::new(program)
            .args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot run the script `{program}`: {e}"))?;
        let (Some(mut stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(format!("cannot talk to the script `{program}`"));
        };
        let body = payload.to_string();
        let talk = async {
            // A script that exits without reading stdin is not an error in itself.
            let write = async {
                let _ = stdin.write_all(body.as_bytes()).await;
                drop(stdin);
            };
            let (_, out, err, status) = tokio::join!(
                write,
                read_bounded(stdout, MAX_STDOUT),
                read_bounded(stderr, MAX_STDERR),
                child.wait()
            );
            (out, err, status)
        };
        let (out, err, status) = match tokio::time::timeout(self.timeout, talk).await {
            Ok(done) => done,
            Err(_) => {
                // Returning drops the child, and kill_on_drop kills it.
                return Err(format!(
                    "the script `{program}` did not finish within {} s and was killed",
                    self.timeout.as_secs_f64()
                ));
            }
        };
        let status = status.map_err(|e| format!("the script `{program}` broke: {e}"))?;
        let (out, out_cut) = out.map_err(|e| format!("cannot read the script's output: {e}"))?;
        let (err, _) = err.unwrap_or_default();
        if !status.success() {
            return Err(format!(
                "the script `{program}` failed ({status}): {}",
                truncate(String::from_utf8_lossy(&err).trim(), QUOTED_CHARS)
            ));
        }
        if out_cut {
            return Err(format!(
                "the script `{program}` printed more than {MAX_STDOUT} bytes"
            ));
        }
        String::from_utf8(out).map_err(|_| format!("the script `{program}` printed non-UTF-8 text"))
    }
}

/// Reads at most `max` bytes; whether there was more.
async fn read_bounded(
    reader: impl AsyncRead + Unpin,
    max: u64,
) -> std::io::Result<(Vec<u8>, bool)> {
    let mut buf = Vec::new();
    let mut limited = reader.take(max + 1);
    limited.read_to_end(&mut buf).await?;
    let cut = buf.len() as u64 > max;
    buf.truncate(max as usize);
    // Drain the rest so the script is not blocked writing.
    let mut rest = limited.into_inner();
    let _ = tokio::io::copy(&mut rest, &mut tokio::io::sink()).await;
    Ok((buf, cut))
}

impl AwaitedCheck for ScriptCheck {
    /// Display name, e.g. `script python3 checks/answer.py`.
    fn name(&self) -> String {
        let shown = if self.shell {
            self.argv[2].clone()
        } else {
            self.argv.join(" ")
        };
        format!("script {}", short(&shown))
    }

    fn kind(&self) -> CheckKind {
        CheckKind::Script
    }

    fn judges(&self) -> Vec<crate::JudgeUse> {
        Vec::new()
    }

    fn grade<'a>(
        &'a self,
        head: VerdictHead<'a>,
        input: &'a Input<'a>,
        _rt: &'a JudgeRuntime<'a>,
    ) -> BoxFuture<'a, Verdict> {
        Box::pin(async move {
            self.evaluate(input.subject.answer, input.transcript)
                .await
                .verdict(head)
        })
    }
}

fn error(reason: String, evidence: Value) -> Finding {
    Finding {
        score: None,
        status: Status::Error,
        reason,
        evidence,
    }
}

/// Reads `{pass, score, reason}` (or `{skip}`) from the script's stdout: the last
/// non-blank line, so scripts may log before it.
fn read_verdict(stdout: &str, threshold: f64, mut evidence: Value) -> Finding {
    let line = stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let bad = |why: &str, evidence: Value| {
        error(
            format!(
                "the script's output is not a verdict ({why}): expected a JSON object like {{\"pass\": true, \"score\": 0.9, \"reason\": \"…\"}} as its last line, got {:?}",
                truncate(line.trim(), QUOTED_CHARS)
            ),
            evidence,
        )
    };
    let Ok(Value::Object(answer)) = serde_json::from_str::<Value>(line.trim()) else {
        return bad("not a JSON object", evidence);
    };
    evidence["answer"] = Value::Object(answer.clone());
    let reason = match answer.get("reason") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return bad("`reason` is not a string", evidence),
    };
    if let Some(skip) = answer.get("skip") {
        let why = skip.as_str().unwrap_or("the script skipped the check");
        return Finding {
            score: None,
            status: Status::Skipped,
            reason: format!("the script skipped: {why}"),
            evidence,
        };
    }
    let score = match answer.get("score") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_f64().filter(|s| s.is_finite()) {
            Some(s) if (0.0..=1.0).contains(&s) => Some(s),
            Some(s) => return bad(&format!("`score` {s} is outside 0-1"), evidence),
            None => return bad("`score` is not a finite number", evidence),
        },
    };
    let pass = match (answer.get("pass"), score) {
        (Some(Value::Bool(b)), _) => *b,
        (Some(_), _) => return bad("`pass` is not true or false", evidence),
        (None, Some(s)) => s >= threshold,
        (None, None) => return bad("it gives neither `pass` nor `score`", evidence),
    };
    let reason = reason.unwrap_or_else(|| match score {
        Some(s) => format!("the script scored {s}"),
        None => format!("the script said {}", if pass { "pass" } else { "fail" }),
    });
    let finding = if pass {
        Finding::pass(reason, evidence)
    } else {
        Finding::fail(reason, evidence)
    };
    match score {
        Some(s) => finding.scored(s, threshold),
        None => finding,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use gavel_core::{Status, ToolCall, Verdict};
    use serde_json::json;

    use crate::testing::{case, compile_err, run_one_async, turn};

    /// The verdict of one `script` check (its YAML mapping) on an answer.
    async fn scripted(check: &str, output: &str) -> Verdict {
        let c = case(&format!(
            "input: q\nexpected_output: Cabin\ncontext: {{user: u1}}\nchecks:\n  - {check}\n"
        ));
        run_one_async(&c, vec![turn(0, output)]).await
    }

    /// The repository's examples directory.
    fn example(file: &str) -> String {
        format!(
            "{}/../../examples/script-checks/{file}",
            env!("CARGO_MANIFEST_DIR")
        )
    }

    #[tokio::test]
    async fn a_script_reads_the_turn_and_gives_the_verdict() {
        let check = format!(
            "{{type: script, command: [python3, '{}']}}",
            example("check_answer.py")
        );
        let v = scripted(&check, "The Cabin is cheapest").await;
        assert_eq!(
            (v.status, v.kind.as_str()),
            (Status::Pass, "script"),
            "{}",
            v.reason
        );
        assert_eq!(v.reason, "names 'Cabin' in 4 words");
        assert_eq!((v.score, v.threshold), (Some(1.0), Some(0.5)));
        assert!(v.check.starts_with("script python3 "), "{}", v.check);

        let v = scripted(&check, "The Villa").await;
        assert_eq!(
            (v.status, v.score),
            (Status::Fail, Some(0.5)),
            "{}",
            v.reason
        );
        assert_eq!(v.reason, "does not name 'Cabin'");
    }

    #[tokio::test]
    async fn the_node_example_reads_the_transcript() {
        let c = case(&format!(
            "input: q\nchecks:\n  - {{type: script, command: [node, '{}'], input: transcript}}\n",
            example("check_tools.mjs")
        ));
        let mut t = turn(0, "ok");
        let call = ToolCall {
            name: "search".into(),
            arguments: json!({"q": "cabin"}),
            result: None,
            ..Default::default()
        };
        t.tool_calls = vec![call.clone()];
        let v = run_one_async(&c, vec![t.clone()]).await;
        assert_eq!((v.status, v.round), (Status::Pass, None), "{}", v.reason);
        t.tool_calls.push(call);
        let v = run_one_async(&c, vec![t]).await;
        assert_eq!(v.status, Status::Fail);
        assert_eq!(v.reason, "repeated calls: search({\"q\":\"cabin\"})");
    }

    #[tokio::test]
    async fn the_payload_carries_the_case_and_a_score_alone_uses_the_threshold() {
        // `cat` echoes the payload back, which then is not a verdict.
        let v = scripted("{type: script, command: [cat]}", "hello").await;
        assert_eq!(v.status, Status::Error);
        assert!(
            v.reason.contains("it gives neither `pass` nor `score`"),
            "{}",
            v.reason
        );
        let payload = &v.evidence.to_json()["answer"];
        assert_eq!(payload["output"], "hello");
        assert_eq!(payload["expected_output"], "Cabin");
        assert_eq!(payload["context"]["user"], "u1");
        assert_eq!(payload["case_id"], "c");
        assert_eq!(payload["turn"]["output"], "hello");

        let v = scripted(
            "{type: script, shell: 'cat >/dev/null; echo \"{\\\"score\\\": 0.7}\"', threshold: 0.8}",
            "x",
        )
        .await;
        assert_eq!(
            (v.status, v.score, v.threshold),
            (Status::Fail, Some(0.7), Some(0.8)),
            "{}",
            v.reason
        );
        assert_eq!(v.reason, "the script scored 0.7");
    }

    #[tokio::test]
    async fn broken_scripts_are_errors_not_failures() {
        let cases = [
            (
                "{type: script, command: [/no/such/program]}",
                "cannot run the script `/no/such/program`",
            ),
            (
                "{type: script, shell: 'echo oops >&2; exit 3'}",
                "the script `sh` failed (exit status: 3): oops",
            ),
            (
                "{type: script, shell: 'echo not json'}",
                "the script's output is not a verdict (not a JSON object)",
            ),
            (
                "{type: script, shell: 'echo \"{\\\"pass\\\": 1}\"'}",
                "the script's output is not a verdict (`pass` is not true or false)",
            ),
            (
                "{type: script, shell: 'echo \"{\\\"score\\\": \\\"high\\\"}\"'}",
                "the script's output is not a verdict (`score` is not a finite number)",
            ),
            (
                "{type: script, shell: 'echo \"{\\\"score\\\": 7}\"'}",
                "the script's output is not a verdict (`score` 7 is outside 0-1)",
            ),
            (
                "{type: script, shell: 'echo \"{\\\"pass\\\": true, \\\"score\\\": -0.5}\"'}",
                "the script's output is not a verdict (`score` -0.5 is outside 0-1)",
            ),
        ];
        for (check, reason) in cases {
            let v = scripted(check, "x").await;
            assert_eq!(v.status, Status::Error, "{check}: {}", v.reason);
            assert!(v.reason.starts_with(reason), "{check}: {}", v.reason);
            assert_eq!(v.score, None);
        }
    }

    #[tokio::test]
    async fn a_script_over_its_timeout_is_killed() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let check = format!(
            "{{type: script, shell: 'echo $$ > {}; exec sleep 600', timeout_s: 2}}",
            pidfile.display()
        );
        let v = scripted(&check, "x").await;
        assert_eq!(v.status, Status::Error);
        assert_eq!(
            v.reason,
            "the script `sh` did not finish within 2 s and was killed"
        );
        // The process is gone (or a zombie awaiting its reaper), not sleeping on.
        let pid = std::fs::read_to_string(&pidfile).unwrap();
        let stat = format!("/proc/{}/stat", pid.trim());
        let mut alive = true;
        for _ in 0..200 {
            alive = std::fs::read_to_string(&stat)
                .map(|s| {
                    !s.split(") ")
                        .nth(1)
                        .is_some_and(|rest| rest.starts_with('Z'))
                })
                .unwrap_or(false);
            if !alive {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert!(!alive, "the script kept running after its timeout");
    }

    #[tokio::test]
    async fn skips_are_skipped_and_bad_specs_refused() {
        let v = scripted(
            "{type: script, shell: 'echo \"{\\\"skip\\\": \\\"no oracle\\\"}\"'}",
            "x",
        )
        .await;
        assert_eq!(
            (v.status, v.reason.as_str()),
            (Status::Skipped, "the script skipped: no oracle")
        );
        let c = case("input: q\nchecks: [{type: script, command: [cat]}]\n");
        let mut broken = turn(0, "");
        broken.failure = Some(gavel_core::TargetFailure {
            message: "reset".into(),
            transient: true,
        });
        let v = run_one_async(&c, vec![broken]).await;
        assert_eq!(
            (v.status, v.reason.as_str()),
            (Status::Skipped, "no answer to check: reset")
        );

        let e = compile_err("input: q\nchecks: [{type: script}]\n");
        assert!(e.contains("checks[0].command: give the program"), "{e}");
        let e = compile_err("input: q\nchecks: [{type: script, command: [a], shell: b}]\n");
        assert!(
            e.contains("checks[0].shell: give `command` or `shell`, not both"),
            "{e}"
        );
        let e = compile_err("input: q\nchecks: [{type: script, command: [a], timeout_s: 0}]\n");
        assert!(e.contains("checks[0].timeout_s: "), "{e}");
    }
}
