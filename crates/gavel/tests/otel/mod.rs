//! The judged suite the OpenTelemetry tests export: a command target that
//! calls two tools, judged by the local OpenAI-compatible mock.
#![allow(dead_code)]

/// A key that must appear in no exported byte.
pub(crate) const CANARY: &str = "sk-canary-0tel-5e1f";

/// The suite: a step score per tool call, a tool verification, a judged
/// criterion, and the run's session ids from the command target.
pub(crate) fn suite(url: &str) -> String {
    format!(
        r#"
name: otel-export
judge:
  model: openai-compatible:judge@{url}/v1
targets:
  agent:
    type: command
    command: [sh, -c, 'while IFS= read -r line; do printf "%s\n" "{{\"output\": \"February earned 1 dollar.\", \"tool_calls\": [{{\"name\": \"get_revenue_data\", \"arguments\": {{\"month\": \"2026-02\"}}, \"result\": {{\"total\": 1}}}}, {{\"name\": \"format_money\", \"arguments\": {{\"amount\": 1}}, \"result\": \"1 dollar\"}}]}}"; done']
    response: {{output: /output, tool_calls: /tool_calls}}
cases:
  - id: revenue
    input: How much revenue did the City Apartment make in February?
    criteria: States the February revenue.
    checks:
      - type: step-score
        criteria: Each call fetches or formats what the question needs.
      - type: tool-verification
        calls:
          - tool: get_revenue_data
            arguments: {{month: "2026-02"}}
  - id: revenue-again
    input: And in February again?
    checks:
      - type: contains
        value: February
"#
    )
}
