#!/usr/bin/env bash
# Lint the Action's packaging with the real tools (installed from PyPI into .interop/lint-venv by
# scripts/install-action-tools.sh): actionlint on the workflows, zizmor (offline) on the
# workflows and action.yml, check-jsonschema's built-in GitHub Action schema on action.yml,
# hadolint on the Dockerfile; and the workflows the docs show (every ```yaml block of README.md and
# docs/*.md that is a workflow or a list of steps, extracted by scripts/lint_docs_workflows.py,
# which also checks that each step using this action or its setup action names only declared
# inputs): actionlint and the workflow schema. Exits non-zero on any finding.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/install-action-tools.sh
BIN="$ROOT/.interop/lint-venv/bin"

echo "== actionlint .github/workflows" >&2
"$BIN/actionlint" .github/workflows/*.yml

echo "== zizmor --offline" >&2
"$BIN/zizmor" --offline --no-progress --strict-collection .github/workflows action.yml setup/action.yml

echo "== check-jsonschema --builtin-schema vendor.github-actions action.yml setup/action.yml" >&2
"$BIN/check-jsonschema" --builtin-schema vendor.github-actions action.yml setup/action.yml
"$BIN/check-jsonschema" --builtin-schema vendor.github-workflows .github/workflows/*.yml

echo "== the workflows in README.md and docs/*.md: inputs, actionlint, the workflow schema" >&2
DOCS_WORKFLOWS="$(mktemp -d)"
trap 'rm -rf "$DOCS_WORKFLOWS"' EXIT
"$BIN/python" scripts/lint_docs_workflows.py "$DOCS_WORKFLOWS" README.md docs/*.md
"$BIN/actionlint" "$DOCS_WORKFLOWS"/*.yml
"$BIN/check-jsonschema" --builtin-schema vendor.github-workflows "$DOCS_WORKFLOWS"/*.yml

echo "== hadolint Dockerfile" >&2
"$BIN/hadolint" Dockerfile

echo "lint-action: clean" >&2
