//! The suite text: YAML written by hand (with comments that teach), every user
//! value quoted as a JSON string, which YAML reads as the same string.

use std::fmt::Write as _;

use crate::{Agent, Scaffold};

/// A YAML scalar holding exactly `s`.
fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Renders the suite file of `s`.
pub(crate) fn suite(s: &Scaffold) -> String {
    let mut y = String::new();
    let _ = writeln!(y, "# A first gavel suite, written by `gavel init`.");
    let _ = writeln!(y, "# Run it:   gavel run {}", crate::SUITE_FILE);
    let _ = writeln!(
        y,
        "# Format:   gavel schema (JSON Schema), README \"Suites\""
    );
    let _ = writeln!(y, "name: {}", quoted(&s.name));
    let _ = writeln!(y, "\ntargets:\n  agent:");
    match &s.agent {
        Agent::Http { url } => {
            let _ = writeln!(y, "    type: http");
            let _ = writeln!(
                y,
                "    # gavel POSTs {{\"session_id\", \"message\", \"context\"}} as JSON"
            );
            let _ = writeln!(
                y,
                "    # (change it with `body:`; add `headers:` with ${{ENV_VARS}})."
            );
            let _ = writeln!(y, "    url: {}", quoted(url));
        }
        Agent::Command { argv } => {
            let _ = writeln!(y, "    type: command");
            let _ = writeln!(
                y,
                "    # gavel writes one {{\"session_id\", \"message\", \"context\", \"history\"}}"
            );
            let _ = writeln!(
                y,
                "    # JSON line per message and reads one JSON line back. No shell."
            );
            let args: Vec<String> = argv.iter().map(|a| quoted(a)).collect();
            let _ = writeln!(y, "    command: [{}]", args.join(", "));
        }
    }
    let _ = writeln!(y, "    response:");
    let _ = writeln!(
        y,
        "      output: {}        # JSON pointer to the answer text",
        quoted(&s.output)
    );
    match &s.tool_calls {
        Some(p) => {
            let _ = writeln!(
                y,
                "      tool_calls: {}  # [{{name, arguments, result}}]",
                quoted(p)
            );
        }
        None => {
            let _ = writeln!(
                y,
                "      # tool_calls: \"/tool_calls\"   # where it lists [{{name, arguments, result}}]"
            );
        }
    }
    let _ = writeln!(y, "    timeout_s: 30");
    let _ = writeln!(y, "\ncases:");
    let _ = writeln!(y, "  - id: answers");
    let _ = writeln!(y, "    name: Answers a first message");
    let _ = writeln!(y, "    tags: [smoke]");
    let _ = writeln!(y, "    input: {}", quoted(&s.input));
    let _ = writeln!(y, "    checks:");
    let _ = writeln!(y, "      - type: regex           # a non-empty answer");
    let _ = writeln!(y, "        pattern: '\\S'");
    let _ = writeln!(y, "      - type: latency");
    let _ = writeln!(y, "        max_ms: 30000");
    let _ = writeln!(y, "\n  - id: remembers");
    let _ = writeln!(y, "    name: Keeps the conversation going");
    let _ = writeln!(y, "    rounds:");
    let _ = writeln!(y, "      - input: {}", quoted(&s.input));
    let _ = writeln!(
        y,
        "      - input: \"Thanks. Can you say that again, more briefly?\""
    );
    let _ = writeln!(y, "        checks:");
    let _ = writeln!(y, "          - type: regex");
    let _ = writeln!(y, "            pattern: '\\S'");
    let _ = writeln!(
        y,
        "  # A judged case: needs a judge model (--judge MODEL, or an API key in"
    );
    let _ = writeln!(
        y,
        "  # the environment); without one it is skipped and says why."
    );
    let _ = writeln!(y, "  # - id: helpful");
    let _ = writeln!(y, "  #   input: \"What can you help me with?\"");
    let _ = writeln!(y, "  #   checks:");
    let _ = writeln!(y, "  #     - type: judge");
    let _ = writeln!(
        y,
        "  #       criteria: Says plainly what it can do, without inventing features."
    );
    let _ = writeln!(y, "  #       threshold: 0.7");
    y
}
