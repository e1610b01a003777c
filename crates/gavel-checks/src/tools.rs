//! tools-called: the tools the target called against the tools expected.

use gavel_core::CheckKind;
use gavel_core::check::ToolMatch;
use gavel_core::{ToolCall, Turn};
use serde_json::{Value, json};

use crate::check::CodeCheck;
use crate::error::FieldError;
use crate::expected::Expected;
use crate::finding::Finding;
use crate::names::bracket_list;
use crate::subject::Subject;

/// Called tool names spelled out in a reason before eliding.
const REASON_CALLS: usize = 20;

/// A compiled tools-called check.
pub(crate) struct ToolsCheck {
    expected: Vec<String>,
    mode: ToolMatch,
    strict: bool,
    /// Whether an expected call that returned an error still counts.
    allow_errors: bool,
}

/// Where the calls first depart from the expected sequence (order and exact modes).
struct Mismatch {
    reason: String,
    evidence: Value,
}

impl ToolsCheck {
    /// Compiles an explicit check; without `tools` it takes the expected tools.
    pub(crate) fn compile(
        tools: Option<&[String]>,
        mode: ToolMatch,
        strict: bool,
        expected: &Expected<'_>,
    ) -> Result<Self, FieldError> {
        let tools = match tools {
            Some(tools) => tools,
            None if !expected.tools.is_empty() => expected.tools,
            None => {
                return Err(FieldError::new(
                    "tools",
                    format!(
                        "give `tools`, or `expected_tools` on {}",
                        expected.tools_from
                    ),
                ));
            }
        };
        Ok(ToolsCheck {
            expected: tools.to_vec(),
            mode,
            strict,
            allow_errors: false,
        })
    }

    /// Lets expected calls that returned an error count as made (`allow_errors`).
    pub(crate) fn allowing_errors(mut self, allow: bool) -> Self {
        self.allow_errors = allow;
        self
    }

    /// The check `expected_tools` adds: each tool called at least once.
    pub(crate) fn implicit(tools: &[String]) -> Self {
        ToolsCheck {
            expected: tools.to_vec(),
            mode: ToolMatch::Set,
            strict: false,
            allow_errors: false,
        }
    }
}

impl CodeCheck for ToolsCheck {
    /// Display name, e.g. `tools-called [get_listings]` or `tools-called order [a, b]`.
    fn name(&self) -> String {
        let mode = match self.mode {
            ToolMatch::Set => "",
            ToolMatch::Order => "order ",
            ToolMatch::Exact => "exact ",
        };
        let strict = if self.strict && self.mode != ToolMatch::Exact {
            " strict"
        } else {
            ""
        };
        format!(
            "tools-called {mode}{}{strict}",
            bracket_list(&self.expected)
        )
    }

    fn kind(&self) -> CheckKind {
        CheckKind::ToolsCalled
    }

    /// Grades the tool calls of the targeted turns.
    fn evaluate(&self, subject: &Subject<'_>) -> Finding {
        let turns: &[&Turn] = &subject.turns;
        let called: Vec<&str> = turns
            .iter()
            .flat_map(|t| t.tool_calls.iter())
            .map(|c| c.name.as_str())
            .collect();
        let expected: Vec<&str> = self.expected.iter().map(String::as_str).collect();
        let missing = distinct(expected.iter().copied().filter(|e| !called.contains(e)));
        let unexpected = distinct(called.iter().copied().filter(|c| !expected.contains(c)));
        let mismatch = match self.mode {
            ToolMatch::Set => None,
            ToolMatch::Order => order_mismatch(&expected, &called),
            ToolMatch::Exact => exact_mismatch(&expected, &called),
        };
        let strict = self.strict || self.mode == ToolMatch::Exact;
        let errored: Vec<Value> = turns
            .iter()
            .flat_map(|t| t.tool_calls.iter())
            .filter(|c| expected.contains(&c.name.as_str()))
            .filter_map(|c| tool_error(c).map(|e| json!({"tool": c.name, "error": e})))
            .collect();

        let mut problems = Vec::new();
        if let Some(m) = &mismatch {
            problems.push(m.reason.clone());
        }
        if !missing.is_empty() && mismatch.is_none() {
            problems.push(format!("missing: {}", missing.join(", ")));
        }
        if strict && !unexpected.is_empty() && mismatch.is_none() {
            problems.push(format!("unexpected: {}", unexpected.join(", ")));
        }
        if !self.allow_errors && !errored.is_empty() {
            let names: Vec<&str> = errored.iter().filter_map(|e| e["tool"].as_str()).collect();
            problems.push(format!(
                "returned an error: {} (set `allow_errors: true` if errors are expected)",
                distinct(names.into_iter()).join(", ")
            ));
        }
        let called_text = called_text(&called);
        let mut evidence = json!({
            "mode": mode_name(self.mode),
            "strict": strict,
            "expected": expected,
            "called": called,
            "missing": missing,
            "unexpected": unexpected,
            "errors": errored,
            "allow_errors": self.allow_errors,
        });
        if let Some(m) = mismatch {
            evidence["first_mismatch"] = m.evidence;
        }
        if problems.is_empty() {
            let mut reason = match self.mode {
                ToolMatch::Set => "every expected tool was called".to_owned(),
                ToolMatch::Order => "the expected tools were called in order".to_owned(),
                ToolMatch::Exact => "exactly the expected calls were made".to_owned(),
            };
            if !unexpected.is_empty() {
                reason.push_str(&format!(" (also called: {})", unexpected.join(", ")));
            }
            Finding::pass(reason, evidence)
        } else {
            Finding::fail(format!("{}; {called_text}", problems.join("; ")), evidence)
        }
    }
}

/// The error a tool call returned: its result's `error` (any value but `null` and
/// `false`), or its text when the result says `isError` / `is_error: true`.
fn tool_error(call: &ToolCall) -> Option<String> {
    let result = call.result.as_ref()?.as_object()?;
    let flagged = ["isError", "is_error"]
        .iter()
        .any(|k| result.get(*k) == Some(&Value::Bool(true)));
    let error = result
        .get("error")
        .filter(|e| !matches!(e, Value::Null | Value::Bool(false)));
    match error {
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => Some(other.to_string()),
        None if flagged => Some(Value::Object(result.clone()).to_string()),
        None => None,
    }
}

fn mode_name(mode: ToolMatch) -> &'static str {
    match mode {
        ToolMatch::Set => "set",
        ToolMatch::Order => "order",
        ToolMatch::Exact => "exact",
    }
}

/// Names in first-seen order, each once.
fn distinct<'a>(names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for n in names {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// `called: a, b, a` or `no tool was called`.
fn called_text(called: &[&str]) -> String {
    if called.is_empty() {
        return "no tool was called".to_owned();
    }
    let mut text = format!(
        "called: {}",
        called
            .iter()
            .take(REASON_CALLS)
            .copied()
            .collect::<Vec<_>>()
            .join(", ")
    );
    if called.len() > REASON_CALLS {
        text.push_str(&format!(", … ({} calls)", called.len()));
    }
    text
}

/// The first expected tool that does not follow the previous one as a subsequence.
fn order_mismatch(expected: &[&str], called: &[&str]) -> Option<Mismatch> {
    let mut next = 0;
    for (k, want) in expected.iter().enumerate() {
        match called[next..].iter().position(|c| c == want) {
            Some(i) => next += i + 1,
            None => {
                let after = k.checked_sub(1).map(|p| expected[p]);
                let reason = match after {
                    Some(prev) if called.contains(want) => {
                        format!(
                            "`{want}` (expected #{}) was not called after `{prev}`",
                            k + 1
                        )
                    }
                    _ => format!("`{want}` (expected #{}) was never called", k + 1),
                };
                return Some(Mismatch {
                    reason,
                    evidence: json!({ "expected_index": k, "expected": want, "after": after }),
                });
            }
        }
    }
    None
}

/// The first call that differs from the expected sequence.
fn exact_mismatch(expected: &[&str], called: &[&str]) -> Option<Mismatch> {
    let at = (0..expected.len().max(called.len())).find(|&i| expected.get(i) != called.get(i))?;
    let (want, got) = (expected.get(at).copied(), called.get(at).copied());
    let reason = match (want, got) {
        (Some(w), Some(g)) => format!("call #{}: expected `{w}`, got `{g}`", at + 1),
        (Some(w), None) => format!(
            "call #{}: expected `{w}`, but no more tools were called",
            at + 1
        ),
        (None, Some(g)) => format!(
            "call #{}: `{g}` was called after the expected sequence ended",
            at + 1
        ),
        (None, None) => String::new(),
    };
    Some(Mismatch {
        reason,
        evidence: json!({ "index": at, "expected": want, "called": got }),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use gavel_core::{Status, ToolCall, Turn};
    use serde_json::json;

    use crate::testing::{case, compile_err, run_one, transcript, turn};

    fn calls(round: usize, names: &[&str]) -> Turn {
        let mut t = turn(round, "done");
        t.tool_calls = names
            .iter()
            .map(|n| ToolCall {
                name: (*n).to_owned(),
                arguments: json!({}),
                result: None,
                ..Default::default()
            })
            .collect();
        t
    }

    #[test]
    fn set_mode_lists_missing_and_unexpected() {
        let c = case(
            "input: q\nchecks:\n  - type: tools-called\n    tools: [get_listings, get_prices]\n",
        );
        let v = run_one(&c, vec![calls(0, &["get_prices", "log", "get_listings"])]);
        assert_eq!(v.status, Status::Pass, "{}", v.reason);
        assert_eq!(v.check, "tools-called [get_listings, get_prices]");
        assert_eq!(v.round, None);
        assert_eq!(
            v.reason,
            "every expected tool was called (also called: log)"
        );
        assert_eq!(v.evidence.to_json()["unexpected"], json!(["log"]));

        let v = run_one(&c, vec![calls(0, &["get_listings", "log"])]);
        assert_eq!(v.status, Status::Fail);
        assert_eq!(v.reason, "missing: get_prices; called: get_listings, log");
        assert_eq!(v.evidence.to_json()["missing"], json!(["get_prices"]));
        assert_eq!(
            v.evidence.to_json()["called"],
            json!(["get_listings", "log"])
        );
        assert_eq!(
            v.evidence.to_json()["expected"],
            json!(["get_listings", "get_prices"])
        );

        let v = run_one(&c, vec![turn(0, "no tools")]);
        assert_eq!(
            v.reason,
            "missing: get_listings, get_prices; no tool was called"
        );
    }

    #[test]
    fn an_expected_call_that_returned_an_error_fails_unless_allowed() {
        let mut t = calls(0, &["get_listings", "log"]);
        t.tool_calls[0].result = Some(json!({"error": "database is down"}));
        t.tool_calls[1].result = Some(json!({"error": "ignored: not expected"}));
        let c = case("input: q\nchecks: [{type: tools-called, tools: [get_listings]}]\n");
        let v = run_one(&c, vec![t.clone()]);
        assert_eq!(v.status, Status::Fail);
        assert_eq!(
            v.reason,
            "returned an error: get_listings (set `allow_errors: true` if errors are expected); called: get_listings, log"
        );
        assert_eq!(
            v.evidence.to_json()["errors"],
            json!([{"tool": "get_listings", "error": "database is down"}])
        );
        let c = case(
            "input: q\nchecks: [{type: tools-called, tools: [get_listings], allow_errors: true}]\n",
        );
        assert_eq!(run_one(&c, vec![t.clone()]).status, Status::Pass);

        // MCP's flag counts; `error: null` and `false` do not.
        let c = case("input: q\nexpected_tools: [get_listings]\n");
        t.tool_calls[0].result = Some(json!({"isError": true, "content": "boom"}));
        assert_eq!(run_one(&c, vec![t.clone()]).status, Status::Fail);
        t.tool_calls[0].result = Some(json!({"error": null, "items": []}));
        assert_eq!(run_one(&c, vec![t.clone()]).status, Status::Pass);
        t.tool_calls[0].result = Some(json!({"error": false}));
        assert_eq!(run_one(&c, vec![t]).status, Status::Pass);
    }

    #[test]
    fn strict_fails_on_unexpected_tools() {
        let c =
            case("input: q\nchecks:\n  - type: tools-called\n    tools: [a]\n    strict: true\n");
        assert_eq!(
            run_one(&c, vec![calls(0, &["a", "a"])]).status,
            Status::Pass
        );
        let v = run_one(&c, vec![calls(0, &["a", "b"])]);
        assert_eq!(v.status, Status::Fail);
        assert_eq!(v.check, "tools-called [a] strict");
        assert_eq!(v.reason, "unexpected: b; called: a, b");
    }

    #[test]
    fn order_mode_needs_a_subsequence() {
        let c = case(
            "input: q\nchecks:\n  - type: tools-called\n    tools: [search, book]\n    mode: order\n",
        );
        let v = run_one(&c, vec![calls(0, &["search", "log", "book"])]);
        assert_eq!(v.status, Status::Pass, "{}", v.reason);
        assert_eq!(v.check, "tools-called order [search, book]");

        let v = run_one(&c, vec![calls(0, &["book", "search"])]);
        assert_eq!(v.status, Status::Fail);
        assert_eq!(
            v.reason,
            "`book` (expected #2) was not called after `search`; called: book, search"
        );
        assert_eq!(
            v.evidence.to_json()["first_mismatch"],
            json!({"expected_index": 1, "expected": "book", "after": "search"})
        );

        let v = run_one(&c, vec![calls(0, &["search"])]);
        assert_eq!(
            v.reason,
            "`book` (expected #2) was never called; called: search"
        );
        assert_eq!(v.evidence.to_json()["missing"], json!(["book"]));
    }

    #[test]
    fn exact_mode_needs_exactly_the_sequence() {
        let c =
            case("input: q\nchecks:\n  - type: tools-called\n    tools: [a, b]\n    mode: exact\n");
        assert_eq!(
            run_one(&c, vec![calls(0, &["a", "b"])]).status,
            Status::Pass
        );
        let v = run_one(&c, vec![calls(0, &["a", "c"])]);
        assert_eq!(v.status, Status::Fail);
        assert_eq!(v.reason, "call #2: expected `b`, got `c`; called: a, c");
        assert_eq!(
            v.evidence.to_json()["first_mismatch"],
            json!({"index": 1, "expected": "b", "called": "c"})
        );
        let v = run_one(&c, vec![calls(0, &["a", "b", "b"])]);
        assert_eq!(v.status, Status::Fail);
        assert_eq!(
            v.reason,
            "call #3: `b` was called after the expected sequence ended; called: a, b, b"
        );
        let v = run_one(&c, vec![calls(0, &["a"])]);
        assert_eq!(
            v.reason,
            "call #2: expected `b`, but no more tools were called; called: a"
        );
    }

    #[test]
    fn case_level_tools_called_reads_every_turn() {
        let c = case(
            "rounds: [{input: a}, {input: b}]\nchecks:\n  - type: tools-called\n    tools: [a, b]\n    mode: order\n",
        );
        let plan = crate::testing::compile(&c).unwrap();
        let v =
            &crate::testing::run_all(&plan, &transcript(vec![calls(0, &["a"]), calls(1, &["b"])]))
                [0];
        assert_eq!(v.status, Status::Pass, "{}", v.reason);
        assert_eq!(v.round, None);
    }

    #[test]
    fn expected_tools_add_an_implicit_check() {
        let c = case("input: q\nexpected_tools: [get_listings]\n");
        let plan = crate::testing::compile(&c).unwrap();
        assert_eq!(plan.len(), 1);
        let v = &crate::testing::run_all(&plan, &transcript(vec![calls(0, &["get_listings"])]))[0];
        assert_eq!(
            (v.status, v.check.as_str(), v.kind.as_str()),
            (Status::Pass, "tools-called [get_listings]", "tools-called")
        );
        let v = &crate::testing::run_all(&plan, &transcript(vec![calls(0, &[])]))[0];
        assert_eq!(v.status, Status::Fail);

        // An explicit check without `tools` takes expected_tools instead of adding one.
        let c =
            case("input: q\nexpected_tools: [a, b]\nchecks: [{type: tools-called, mode: order}]\n");
        let plan = crate::testing::compile(&c).unwrap();
        assert_eq!(plan.len(), 1);
        assert_eq!(
            crate::testing::run_all(&plan, &transcript(vec![calls(0, &["b", "a"])]))[0].status,
            Status::Fail
        );

        // One with its own `tools` leaves the implicit one in place.
        let c = case("input: q\nexpected_tools: [a]\nchecks: [{type: tools-called, tools: [b]}]\n");
        assert_eq!(crate::testing::compile(&c).unwrap().len(), 2);
    }

    #[test]
    fn round_expected_tools_check_that_round() {
        let c = case(
            "rounds:\n  - input: a\n    expected_tools: [search]\n  - input: b\n    expected_tools: [book]\n",
        );
        let plan = crate::testing::compile(&c).unwrap();
        let verdicts = crate::testing::run_all(
            &plan,
            &transcript(vec![calls(0, &["search"]), calls(1, &["search"])]),
        );
        assert_eq!(verdicts.len(), 2);
        assert_eq!(
            (verdicts[0].status, verdicts[0].round),
            (Status::Pass, Some(0))
        );
        assert_eq!(
            (verdicts[1].status, verdicts[1].round),
            (Status::Fail, Some(1))
        );
        assert_eq!(verdicts[1].reason, "missing: book; called: search");
    }

    #[test]
    fn round_tools_include_calls_made_before_a_follow_up() {
        let c = case("rounds:\n  - input: a\n    expected_tools: [search, book]\n");
        let plan = crate::testing::compile(&c).unwrap();
        let v = &crate::testing::run_all(
            &plan,
            &transcript(vec![calls(0, &["search"]), calls(0, &["book"])]),
        )[0];
        assert_eq!(v.status, Status::Pass, "{}", v.reason);
    }

    #[test]
    fn tools_called_without_tools_or_expected_tools_is_a_compile_error() {
        let e = compile_err("input: q\nchecks: [{type: tools-called}]\n");
        assert!(
            e.contains("checks[0].tools: give `tools`, or `expected_tools` on the case"),
            "{e}"
        );
        let e = compile_err("rounds:\n  - input: q\n    checks: [{type: tools-called}]\n");
        assert!(
            e.contains("rounds[0].checks[0].tools: give `tools`, or `expected_tools` on the round"),
            "{e}"
        );
    }
}
