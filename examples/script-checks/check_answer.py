#!/usr/bin/env python3
"""A gavel `script` check in Python.

gavel writes the turn as JSON on stdin: {"case_id", "input", "output",
"expected_output", "context", "turn": {...}} (or "transcript" instead of "turn"
with `input: transcript`). Print one JSON object as the last line of stdout:
{"pass": bool, "score": number, "reason": str}, or {"skip": "why"}.

This one passes an answer that names the expected answer in at most 120 words.
"""
import json
import sys

MAX_WORDS = 120

data = json.load(sys.stdin)
output = data["output"]
expected = data.get("expected_output")
if expected is None:
    print(json.dumps({"skip": "the case gives no expected_output"}))
    sys.exit(0)

names = str(expected).lower() in output.lower()
words = len(output.split())
short = words <= MAX_WORDS
problems = []
if not names:
    problems.append(f"does not name {expected!r}")
if not short:
    problems.append(f"{words} words, over {MAX_WORDS}")
print(json.dumps({
    "pass": names and short,
    "score": (names + short) / 2,
    "reason": "; ".join(problems) or f"names {expected!r} in {words} words",
}))
