#!/usr/bin/env python3
"""Extracts the Required and Conditionally Required attributes of the GenAI
spans gavel exports (`chat`, `invoke_agent`, `execute_tool`) from the
OpenTelemetry semantic conventions' model (model/gen-ai/spans.yaml, with each
group's `extends` chain resolved), as the fixture
crates/gavel/tests/otel/semconv-genai-required.tsv.

    scripts/semconv-genai-required.py REPO_DIR COMMIT > crates/gavel/tests/otel/semconv-genai-required.tsv

REPO_DIR is a clone of github.com/open-telemetry/semantic-conventions (the
GenAI conventions were moved out of it after 953276ff, the last commit that
has them). Needs PyYAML.
"""
import subprocess
import sys

import yaml

SPANS = {
    "span.gen_ai.inference.client": "chat",
    "span.gen_ai.invoke_agent.client": "invoke_agent",
    "span.gen_ai.execute_tool.internal": "execute_tool",
}


def main(repo, commit):
    text = subprocess.check_output(
        ["git", "-C", repo, "show", f"{commit}:model/gen-ai/spans.yaml"], text=True
    )
    groups = {g["id"]: g for g in yaml.safe_load(text)["groups"]}

    def attributes(group_id):
        group = groups[group_id]
        merged = attributes(group["extends"]) if "extends" in group else {}
        for a in group.get("attributes", []):
            level = a.get("requirement_level")
            if level is not None:
                merged[a["ref"]] = level
            else:
                merged.setdefault(a["ref"], "recommended")
        return merged

    print(f"# source: github.com/open-telemetry/semantic-conventions {commit} model/gen-ai/spans.yaml")
    print("# operation\tattribute\tlevel\tcondition")
    for group_id, operation in SPANS.items():
        for name, level in sorted(attributes(group_id).items()):
            if level == "required":
                print(f"{operation}\t{name}\trequired\t")
            elif isinstance(level, dict) and "conditionally_required" in level:
                condition = " ".join(str(level["conditionally_required"]).split())
                print(f"{operation}\t{name}\tconditionally_required\t{condition}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
