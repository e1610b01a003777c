//! Recorded agent streams (tests/fixtures/agent-streams) read into `AgentRun`s.

use gavel_core::Usage;
use gavel_targets::agent_stream::{AgentRun, AgentStream, Format, MAX_TEXT, MAX_TOOL_CALLS};
use serde_json::json;

const CLAUDE: &str = include_str!("fixtures/agent-streams/claude-code.jsonl");
const CLAUDE_ERROR: &str = include_str!("fixtures/agent-streams/claude-code-error.jsonl");
const CODEX: &str = include_str!("fixtures/agent-streams/codex.jsonl");
const CODEX_FAILED: &str = include_str!("fixtures/agent-streams/codex-failed.jsonl");
const GENERIC: &str = include_str!("fixtures/agent-streams/generic.jsonl");

const CALC: &str = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n";
const PASSED: &str = "..                                                                       [100%]\n2 passed in 0.01s";
const WS: &str = "/tmp/gavel-ws-7Qx2/repo";

fn read<'a>(format: Format, lines: impl IntoIterator<Item = &'a str>) -> AgentRun {
    let mut stream = AgentStream::new(format);
    for line in lines {
        stream.push_line(line);
    }
    stream.finish()
}

fn names(run: &AgentRun) -> Vec<&str> {
    run.tool_calls.iter().map(|c| c.name.as_str()).collect()
}

#[test]
fn claude_code_session_becomes_messages_calls_and_cost() {
    let run = read(Format::ClaudeCode, CLAUDE.lines());
    let answer =
        "Fixed `add` in calc.py: it returned `a - b`; it now returns `a + b`. All 2 tests pass.";
    assert_eq!(run.output, answer);
    assert_eq!(
        run.messages,
        [
            "I'll look at the implementation first.",
            "`add` subtracts instead of adding. Fixing it.",
            answer
        ]
    );
    assert_eq!(names(&run), ["Read", "Edit", "Bash"]);
    let [read_call, edit, bash] = &run.tool_calls[..] else {
        panic!("three calls: {:?}", run.tool_calls);
    };
    assert_eq!(
        read_call.arguments,
        json!({"file_path": format!("{WS}/calc.py")})
    );
    assert!(
        read_call
            .result
            .as_ref()
            .and_then(|r| r.as_str())
            .is_some_and(|r| r.contains("2\t    return a - b")),
        "{:?}",
        read_call.result
    );
    assert_eq!(edit.arguments["new_string"], "    return a + b");
    let edited = edit
        .result
        .as_ref()
        .and_then(|r| r.as_str())
        .unwrap_or_default();
    assert!(
        edited.starts_with(&format!("The file {WS}/calc.py has been updated.")),
        "{edited}"
    );
    assert_eq!(bash.arguments["command"], "python -m pytest -q");
    assert_eq!(bash.result, Some(json!(PASSED)));
    assert!(run.tool_calls.iter().all(|c| c.agent.is_none()));
    assert_eq!(
        run.usage,
        Some(Usage {
            input_tokens: 20 + 3060 + 55180,
            output_tokens: 263,
            cost_usd: Some(0.0483215)
        })
    );
    assert_eq!(
        run.session.as_deref(),
        Some("3f6c1a52-8d0e-4b7a-9c21-5e2d7f4a9b10")
    );
    assert_eq!(run.error, None);
    assert_eq!((run.events, run.unreadable, run.dropped), (12, 0, 0));
}

#[test]
fn claude_code_error_result_fails_the_run_and_marks_failed_tools() {
    let run = read(Format::ClaudeCode, CLAUDE_ERROR.lines());
    assert_eq!(run.error.as_deref(), Some("error_max_turns"));
    // No `result` text: the answer is the last assistant message.
    assert_eq!(
        run.output,
        "The add test fails: add(2, 3) returns -1. Let me read calc.py."
    );
    assert_eq!(names(&run), ["Bash", "Read"]);
    let failed = run.tool_calls[0]
        .result
        .as_ref()
        .and_then(|r| r["error"].as_str());
    assert!(
        failed.is_some_and(|e| e.starts_with("Error: Exit code 1\nF.")),
        "{failed:?}"
    );
    assert_eq!(
        run.tool_calls[1].result,
        Some(json!(
            "     1\tdef add(a, b):\n     2\t    return a - b\n     3\t\n     4\t\n     5\tdef mul(a, b):\n     6\t    return a * b\n"
        ))
    );
    assert_eq!(
        run.usage,
        Some(Usage {
            input_tokens: 10 + 3110 + 25910,
            output_tokens: 92,
            cost_usd: Some(0.0211804)
        })
    );
    assert_eq!(
        run.session.as_deref(),
        Some("9a41e0d7-5c3b-4f18-a6e2-7d90b1c4e853")
    );
}

#[test]
fn claude_code_without_a_result_event_keeps_what_it_read() {
    let lines: Vec<&str> = CLAUDE.lines().collect();
    let run = read(Format::ClaudeCode, lines[..lines.len() - 1].iter().copied());
    assert_eq!(run.output, run.messages[2]);
    assert_eq!(run.error, None);
    assert_eq!(run.tool_calls.len(), 3);
    // Each API message's usage once, though several events repeat it.
    assert_eq!(
        run.usage,
        Some(Usage {
            input_tokens: 58260,
            output_tokens: 263,
            cost_usd: None
        })
    );
}

#[test]
fn claude_code_is_error_with_success_subtype_names_the_result() {
    let run = read(
        Format::ClaudeCode,
        [
            r#"{"type":"result","subtype":"success","is_error":true,"result":"Invalid API key · Please run /login","session_id":"s1","total_cost_usd":0}"#,
        ],
    );
    assert_eq!(
        run.error.as_deref(),
        Some("Invalid API key · Please run /login")
    );
    assert_eq!(
        run.usage,
        Some(Usage {
            cost_usd: Some(0.0),
            ..Usage::default()
        })
    );
    let run = read(
        Format::ClaudeCode,
        [
            r#"{"type":"result","subtype":"error_during_execution","is_error":true,"errors":["tool crashed","gave up"]}"#,
        ],
    );
    assert_eq!(
        run.error.as_deref(),
        Some("error_during_execution: tool crashed; gave up")
    );
}

#[test]
fn codex_session_becomes_shell_and_file_change_calls() {
    let run = read(Format::Codex, CODEX.lines());
    let answer =
        "Fixed `add` in `calc.py` (it subtracted); `python -m pytest -q` now passes: 2 passed.";
    assert_eq!(run.output, answer);
    assert_eq!(run.messages, [answer]);
    assert_eq!(names(&run), ["shell", "file_change", "shell"]);
    let calls = &run.tool_calls;
    assert_eq!(
        calls[0].arguments,
        json!({"command": "bash -lc \"sed -n '1,80p' calc.py\""})
    );
    assert_eq!(
        calls[0].result,
        Some(json!({"exit_code": 0, "output": CALC}))
    );
    assert_eq!(
        calls[1].arguments,
        json!({"changes": [{"path": format!("{WS}/calc.py"), "kind": "update"}]})
    );
    assert_eq!(calls[1].result, Some(json!({"status": "completed"})));
    assert_eq!(
        calls[2].arguments["command"],
        "bash -lc 'python -m pytest -q'"
    );
    assert_eq!(
        calls[2].result,
        Some(json!({"exit_code": 0, "output": format!("{PASSED}\n")}))
    );
    assert_eq!(
        run.usage,
        Some(Usage {
            input_tokens: 48213,
            output_tokens: 1187,
            cost_usd: None
        })
    );
    assert_eq!(
        run.session.as_deref(),
        Some("0199a7c2-4b1e-7d30-9f58-2c6e1a8d4b07")
    );
    assert_eq!(run.error, None);
    assert_eq!((run.events, run.unreadable), (15, 0));
}

#[test]
fn codex_failed_turn_is_the_error() {
    let run = read(Format::Codex, CODEX_FAILED.lines());
    assert_eq!(
        run.error.as_deref(),
        Some(
            "stream disconnected before completion: error sending request for url (https://api.openai.com/v1/responses)"
        )
    );
    assert_eq!(run.output, "");
    assert_eq!(names(&run), ["shell"]);
    assert_eq!(run.usage, None);
    assert_eq!(
        run.session.as_deref(),
        Some("0199a7d0-17f4-7b21-8c03-5e4f9a2d6c18")
    );
}

#[test]
fn codex_error_is_forgiven_by_a_completed_turn_but_not_by_the_end() {
    let recovered = read(
        Format::Codex,
        [
            r#"{"type":"error","message":"Reconnecting... 1/5"}"#,
            r#"{"type":"turn.completed","usage":{"input_tokens":5,"cached_input_tokens":0,"output_tokens":2}}"#,
        ],
    );
    assert_eq!(recovered.error, None);
    let fatal = read(
        Format::Codex,
        [r#"{"type":"error","message":"quota exceeded"}"#],
    );
    assert_eq!(fatal.error.as_deref(), Some("quota exceeded"));
}

#[test]
fn codex_items_are_taken_once_and_kept_when_unfinished() {
    let run = read(
        Format::Codex,
        [
            r#"{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"cargo test","aggregated_output":"","exit_code":null,"status":"in_progress"}}"#,
            r#"{"type":"item.started","item":{"id":"item_2","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"serde"},"result":null,"error":null,"status":"in_progress"}}"#,
            r#"{"type":"item.completed","item":{"id":"item_2","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"serde"},"result":{"content":[{"type":"text","text":"3 hits"}],"structured_content":null},"error":null,"status":"completed"}}"#,
            r#"{"type":"item.updated","item":{"id":"item_2","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"late"},"result":null,"error":null,"status":"in_progress"}}"#,
            r#"{"type":"item.completed","item":{"id":"item_3","type":"mcp_tool_call","server":"db","tool":"query","arguments":{},"result":null,"error":{"message":"timeout"},"status":"failed"}}"#,
            r#"{"type":"item.completed","item":{"id":"item_4","type":"web_search","query":"pytest fixtures"}}"#,
            r#"{"type":"item.updated","item":{"id":"item_1","type":"command_execution","command":"cargo test","aggregated_output":"running 3 tests\n","exit_code":null,"status":"in_progress"}}"#,
        ],
    );
    assert_eq!(
        names(&run),
        ["shell", "docs.search", "db.query", "web_search"]
    );
    // Never completed: recorded with the output known so far.
    assert_eq!(
        run.tool_calls[0].result,
        Some(json!({"exit_code": null, "output": "running 3 tests\n"}))
    );
    // Completed wins over the later update.
    assert_eq!(run.tool_calls[1].arguments, json!({"q": "serde"}));
    assert_eq!(
        run.tool_calls[1].result,
        Some(json!({"content": [{"type": "text", "text": "3 hits"}], "structured_content": null}))
    );
    assert_eq!(run.tool_calls[2].result, Some(json!({"error": "timeout"})));
    assert_eq!(
        run.tool_calls[3].arguments,
        json!({"query": "pytest fixtures"})
    );
    assert_eq!((run.events, run.unreadable), (7, 0));
}

#[test]
fn generic_lines_become_the_run() {
    let run = read(Format::Jsonl, GENERIC.lines());
    assert_eq!(
        run.output,
        "Fixed add in calc.py (it subtracted); the tests pass."
    );
    assert_eq!(
        run.messages,
        ["Reading calc.py to find the bug.", "The tests pass now."]
    );
    assert_eq!(names(&run), ["read_file", "edit_file", "shell"]);
    assert_eq!(run.tool_calls[0].arguments, json!({"path": "calc.py"}));
    assert_eq!(run.tool_calls[0].result, Some(json!(CALC)));
    assert_eq!(run.tool_calls[1].result, Some(json!({"ok": true})));
    assert_eq!(
        run.tool_calls[2].result,
        Some(json!({"exit_code": 0, "output": PASSED}))
    );
    let usage = run.usage.unwrap_or_default();
    assert_eq!((usage.input_tokens, usage.output_tokens), (2850, 205));
    assert!(
        usage.cost_usd.is_some_and(|c| (c - 0.0073).abs() < 1e-9),
        "{usage:?}"
    );
    assert_eq!(run.session.as_deref(), Some("run-2f9c"));
    assert_eq!(run.error, None);
    assert_eq!((run.events, run.unreadable), (12, 0));
}

#[test]
fn generic_without_final_answers_with_the_last_message_and_reports_errors() {
    let run = read(
        Format::Jsonl,
        [
            r#"{"type":"message","content":"first"}"#,
            r#"{"type":"tool_call","name":"ls"}"#,
            r#"{"type":"tool_result","result":["a.txt"]}"#,
            r#"{"type":"tool_result","id":"nope","result":1}"#,
            r#"{"type":"message","content":"last"}"#,
            r#"{"type":"error","message":"out of budget"}"#,
            r#"{"type":"error","message":"later"}"#,
        ],
    );
    assert_eq!(run.output, "last");
    assert_eq!(run.tool_calls[0].result, Some(json!(["a.txt"])));
    assert_eq!(run.error.as_deref(), Some("out of budget"));
    assert_eq!((run.events, run.unreadable), (6, 1));
}

#[test]
fn garbage_lines_are_counted_not_fatal() {
    let garbage = [
        "not json at all",
        "[1, 2]",
        "\"a string\"",
        "{\"type\": \"mystery\"}",
        "{\"no_type\": true}",
        "{truncated",
        "",
        "   ",
    ];
    for format in [Format::ClaudeCode, Format::Codex, Format::Jsonl] {
        let run = read(format, garbage);
        assert_eq!((run.events, run.unreadable), (0, 6), "{format:?}");
        assert_eq!(
            run,
            AgentRun {
                unreadable: 6,
                ..AgentRun::default()
            },
            "{format:?}"
        );
    }
    // Garbage between good lines changes nothing else.
    let mut lines: Vec<&str> = CODEX.lines().collect();
    lines.insert(3, "warning: something on stdout");
    let run = read(Format::Codex, lines);
    assert_eq!((run.events, run.unreadable), (15, 1));
    assert_eq!(run.tool_calls.len(), 3);
}

#[test]
fn long_texts_are_truncated_with_a_marker() {
    let big = "é".repeat(MAX_TEXT); // two bytes each
    let result = json!({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": big}]}});
    let call = json!({"type": "assistant", "message": {"id": "m", "content": [
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "cat big"}},
        {"type": "text", "text": big}]}});
    let run = read(
        Format::ClaudeCode,
        [call.to_string().as_str(), result.to_string().as_str()],
    );
    let marker = format!("… [truncated {} bytes]", MAX_TEXT);
    let kept = run.tool_calls[0]
        .result
        .as_ref()
        .and_then(|r| r.as_str())
        .unwrap_or_default();
    assert!(kept.ends_with(&marker), "{}", &kept[kept.len() - 40..]);
    assert!(kept.len() <= MAX_TEXT + marker.len());
    assert!(run.messages[0].ends_with(&marker));
    assert_eq!(run.output, run.messages[0]);
}

#[test]
fn tool_calls_past_the_cap_are_counted_not_kept() {
    let line = r#"{"type":"tool_call","name":"shell","arguments":{"command":"true"}}"#;
    let run = read(Format::Jsonl, std::iter::repeat_n(line, MAX_TOOL_CALLS + 5));
    assert_eq!(run.tool_calls.len(), MAX_TOOL_CALLS);
    assert_eq!(run.dropped, 5);
    assert_eq!(run.events, (MAX_TOOL_CALLS + 5) as u64);
}
