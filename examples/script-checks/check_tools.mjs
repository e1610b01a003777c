#!/usr/bin/env node
// A gavel `script` check in Node, reading the whole transcript
// (`input: transcript`): it passes when no tool was called twice with the same
// arguments. stdin: {"case_id", "input", "output", "expected_output", "context",
// "transcript": {"session_id", "turns": [...]}}; stdout, last line:
// {"pass": bool, "score": number, "reason": string}.
let raw = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => (raw += chunk));
process.stdin.on("end", () => {
  const data = JSON.parse(raw);
  const seen = new Set();
  const repeated = [];
  for (const turn of data.transcript.turns) {
    for (const call of turn.tool_calls ?? []) {
      const key = `${call.name}(${JSON.stringify(call.arguments)})`;
      if (seen.has(key)) repeated.push(key);
      seen.add(key);
    }
  }
  const calls = seen.size + repeated.length;
  console.log(
    JSON.stringify({
      pass: repeated.length === 0,
      score: calls === 0 ? 1 : seen.size / calls,
      reason: repeated.length
        ? `repeated calls: ${repeated.join(", ")}`
        : `${calls} tool calls, none repeated`,
    }),
  );
});
