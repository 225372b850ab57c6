#!/usr/bin/env bash
# Lint the Action's packaging with the real tools (installed from PyPI into .interop/lint-venv by
# scripts/install-action-tools.sh): actionlint on the workflows, zizmor (offline) on the
# workflows and action.yml, check-jsonschema's built-in GitHub Action schema on action.yml,
# hadolint on the Dockerfile. Exits non-zero on any finding.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/install-action-tools.sh
BIN="$ROOT/.interop/lint-venv/bin"

echo "== actionlint .github/workflows" >&2
"$BIN/actionlint" .github/workflows/*.yml

echo "== zizmor --offline" >&2
"$BIN/zizmor" --offline --no-progress --strict-collection .github/workflows action.yml

echo "== check-jsonschema --builtin-schema vendor.github-actions action.yml" >&2
"$BIN/check-jsonschema" --builtin-schema vendor.github-actions action.yml
"$BIN/check-jsonschema" --builtin-schema vendor.github-workflows .github/workflows/*.yml

echo "== hadolint Dockerfile" >&2
"$BIN/hadolint" Dockerfile

echo "lint-action: clean" >&2
