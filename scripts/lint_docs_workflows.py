#!/usr/bin/env python3
"""Lint the workflows the documentation shows (scripts/lint-action.sh runs it).

Usage: lint_docs_workflows.py OUT_DIR FILE.md...

Every ```yaml block of the given Markdown files that is a workflow (a top-level `jobs:`) or a
list of steps (its first line `- uses:`, `- run:` or `- name:`, wrapped here into a job) is
parsed as YAML and written to OUT_DIR as `<page>-<line>.yml`, for actionlint and the workflow
schema to read. Each step that uses this action (`…/mcp-eval-action@…`) or its setup action
(`…/mcp-eval-action/setup@…`) may name only inputs that action.yml or setup/action.yml
declares. Prints one line per problem (`FILE:LINE: …`) and exits 1 when there is any.
Needs ruamel.yaml (check-jsonschema's YAML reader, in the lint venv).
"""
import io
import os
import re
import sys

from ruamel.yaml import YAML

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEP_START = re.compile(r"^- (uses|run|name):")
ACTION = re.compile(r"^[^/\s]+/mcp-eval-action(/setup)?@\S+$")


def load(text):
    return YAML(typ="safe", pure=True).load(io.StringIO(text))


def declared_inputs(path):
    return set((load(open(os.path.join(ROOT, path), encoding="utf-8").read()) or {}).get("inputs") or {})


def blocks(path):
    """(line of the fence, text) of every ```yaml block."""
    out, current, start = [], None, 0
    for number, line in enumerate(open(path, encoding="utf-8"), start=1):
        stripped = line.strip()
        if current is None and stripped in ("```yaml", "```yml"):
            current, start, indent = [], number, len(line) - len(line.lstrip())
        elif current is not None and stripped == "```":
            out.append((start, "".join(current)))
            current = None
        elif current is not None:
            current.append(line[indent:] if line[:indent].strip() == "" else line)
    return out


def dedent(text):
    lines = [line for line in text.splitlines() if line.strip()]
    width = min((len(line) - len(line.lstrip()) for line in lines), default=0)
    return "\n".join(line[width:] for line in text.splitlines()) + "\n"


def main():
    out_dir, pages = sys.argv[1], sys.argv[2:]
    inputs = {False: declared_inputs("action.yml"), True: declared_inputs("setup/action.yml")}
    problems, written = [], 0
    for page in pages:
        for line, text in blocks(page):
            where = f"{os.path.relpath(page, ROOT)}:{line}"
            body = dedent(text)
            first = next((row for row in body.splitlines() if row.strip() and not row.startswith("#")), "")
            if re.search(r"^jobs:", body, re.M):
                workflow_text = body
            elif STEP_START.match(first):
                steps = "".join("      " + row + "\n" if row else "\n" for row in body.splitlines())
                workflow_text = "on: push\npermissions: {}\njobs:\n  fragment:\n    runs-on: ubuntu-latest\n    steps:\n" + steps
            else:
                continue
            try:
                workflow = load(workflow_text)
            except Exception as error:  # noqa: BLE001 - any parse error is the finding
                problems.append(f"{where}: not valid YAML: {error}".replace("\n", " "))
                continue
            name = re.sub(r"[^A-Za-z0-9]+", "-", os.path.relpath(page, ROOT)).strip("-")
            with open(os.path.join(out_dir, f"{name}-{line}.yml"), "w", encoding="utf-8") as handle:
                handle.write(f"# {where}\n" + workflow_text)
            written += 1
            for job in (workflow.get("jobs") or {}).values():
                for step in job.get("steps") or []:
                    uses = str(step.get("uses") or "")
                    if not ACTION.match(uses):
                        continue
                    setup = "/setup@" in uses
                    for key in step.get("with") or {}:
                        if key not in inputs[setup]:
                            file = "setup/action.yml" if setup else "action.yml"
                            problems.append(f"{where}: `{uses}` has no input `{key}` ({file} declares {len(inputs[setup])})")
    for problem in problems:
        print(problem)
    print(f"lint_docs_workflows: {written} workflows and step lists from {len(pages)} pages, {len(problems)} problems",
          file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
