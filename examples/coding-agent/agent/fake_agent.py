#!/usr/bin/env python3
"""An offline coding agent for gavel's example: it behaves like
`claude -p --output-format stream-json --verbose` on a small task, printing
Claude Code's stream-json events while it really reads, edits and tests the
workspace it runs in. Deterministic: no model is called.

CODING_AGENT_BUG=1 makes it edit the wrong line, so the tests keep failing.
"""
import json
import os
import subprocess
import sys
import uuid

SESSION = str(uuid.UUID(int=0x6761_7665_6c00))
MODEL = "claude-sonnet-4-5"
calls = 0


def emit(event):
    event.setdefault("session_id", SESSION)
    print(json.dumps(event), flush=True)


def assistant(*content):
    emit({
        "type": "assistant",
        "message": {
            "id": f"msg_{uuid.uuid4().hex[:12]}",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": list(content),
            "stop_reason": None,
            "usage": {"input_tokens": 400, "output_tokens": 60},
        },
        "parent_tool_use_id": None,
    })


def tool(name, arguments, run):
    """Announces a tool call, runs it, and reports its result."""
    global calls
    calls += 1
    call_id = f"toolu_{calls:02d}"
    assistant({"type": "tool_use", "id": call_id, "name": name, "input": arguments})
    result, failed = run()
    emit({
        "type": "user",
        "message": {
            "role": "user",
            "content": [{
                "type": "tool_result",
                "tool_use_id": call_id,
                "content": result,
                "is_error": failed,
            }],
        },
        "parent_tool_use_id": None,
    })
    return result


def bash(command):
    def run():
        done = subprocess.run(command, shell=True, capture_output=True, text=True)
        return (done.stdout + done.stderr).strip(), done.returncode != 0
    return tool("Bash", {"command": command, "description": "Run the tests"}, run)


def read(path):
    def run():
        with open(path) as f:
            return f.read(), False
    return tool("Read", {"file_path": os.path.abspath(path)}, run)


def edit(path, old, new):
    def run():
        with open(path) as f:
            text = f.read()
        if old not in text:
            return f"<tool_use_error>String to replace not found in file.</tool_use_error>", True
        with open(path, "w") as f:
            f.write(text.replace(old, new, 1))
        return f"The file {os.path.abspath(path)} has been updated.", False
    arguments = {"file_path": os.path.abspath(path), "old_string": old, "new_string": new}
    return tool("Edit", arguments, run)


def main():
    prompt = " ".join(sys.argv[1:]) or sys.stdin.read()
    emit({
        "type": "system",
        "subtype": "init",
        "cwd": os.getcwd(),
        "model": MODEL,
        "tools": ["Bash", "Edit", "Read"],
        "permissionMode": "acceptEdits",
        "apiKeySource": "none",
    })
    assistant({"type": "text", "text": f"I'll start by running the tests. Task: {prompt.strip()}"})
    bash("python3 -m unittest -q")
    read("calc.py")
    if os.environ.get("CODING_AGENT_BUG") == "1":
        edit("calc.py", "return a * b", "return a * b  # checked")
    else:
        edit("calc.py", "return a - b", "return a + b")
    bash("python3 -m unittest -q")
    answer = "Fixed `add` in calc.py: it subtracted instead of adding. The tests pass."
    assistant({"type": "text", "text": answer})
    emit({
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "duration_ms": 1830,
        "duration_api_ms": 1650,
        "num_turns": calls + 1,
        "result": answer,
        "total_cost_usd": 0.0123,
        "usage": {
            "input_tokens": 2400,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 1200,
            "output_tokens": 340,
        },
    })


if __name__ == "__main__":
    main()
