#!/usr/bin/env bash
# Launcher for the third-party MCP servers installed by scripts/install-servers.sh.
#
#   servers.sh list                 names, transport and era
#   servers.sh cmd   NAME [PORT]    print the exact command line (argv, shell-quoted) on stdout
#   servers.sh start NAME PORT      HTTP names: print the command line on stderr, then exec it in the
#                                   foreground (the caller's child pid is the server; serves
#                                   http://127.0.0.1:PORT/mcp). stdio names: print the command only.
#   servers.sh exec  NAME [PORT]    exec any server in the foreground, printing nothing on stdout
#                                   (for stdio servers: the caller owns stdin/stdout)
#   servers.sh wait  PORT [SECS]    poll until 127.0.0.1:PORT accepts TCP connections (default 15 s)
#
# Works from any cwd: paths are resolved from this script's location.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SCRIPTS="$ROOT/scripts"
INTEROP="$ROOT/.interop"
PY="$INTEROP/venv/bin/python"
NM="$INTEROP/node/node_modules"
NODE="${NODE:-node}"
LOOPBACK="$SCRIPTS/loopback.cjs"
EVERYTHING="$NM/@modelcontextprotocol/server-everything/dist/index.js"
BASIC="$NM/@modelcontextprotocol/server-basic-vanillajs/dist/index.js"
PROXY="$NM/mcp-proxy/dist/bin/mcp-proxy.mjs"

NAMES="py-time-http py-time-stdio py-time-traced-stdio ts-proxy-everything ts-everything-http ts-everything-stdio ts-v2-basic-http ts-v2-basic-stdio"

die() { printf 'servers.sh: %s\n' "$*" >&2; exit 2; }

need_port() {
  [ -n "${1:-}" ] || die "$2 needs a PORT"
  [[ "$1" =~ ^[0-9]+$ ]] || die "bad PORT: $1"
}

is_http() { case "$1" in *-http|ts-proxy-everything) return 0;; *) return 1;; esac; }

# Fill the global array CMD with the argv for NAME (PORT for HTTP names).
build() {
  local name="$1" port="${2:-}"
  case "$name" in
    py-time-http)
      need_port "$port" "$name"
      CMD=("$PY" "$SCRIPTS/py_time_http.py" "$port" UTC) ;;
    py-time-stdio)
      CMD=("$INTEROP/venv/bin/mcp-server-time" --local-timezone UTC) ;;
    py-time-traced-stdio)
      CMD=("$PY" "$SCRIPTS/py_time_traced.py" UTC) ;;
    ts-proxy-everything)
      need_port "$port" "$name"
      CMD=("$NODE" "$PROXY" --host 127.0.0.1 --port "$port" --server stream -- "$NODE" "$EVERYTHING" stdio) ;;
    ts-everything-http)
      need_port "$port" "$name"
      CMD=(env "PORT=$port" "$NODE" --require "$LOOPBACK" "$EVERYTHING" streamableHttp) ;;
    ts-everything-stdio)
      CMD=("$NODE" "$EVERYTHING" stdio) ;;
    ts-v2-basic-http)
      need_port "$port" "$name"
      CMD=(env "PORT=$port" "$NODE" --require "$LOOPBACK" "$BASIC") ;;
    ts-v2-basic-stdio)
      CMD=("$NODE" "$BASIC" --stdio) ;;
    *) die "unknown server '$name' (known: $NAMES)" ;;
  esac
}

quoted() { local out; printf -v out '%q ' "$@"; printf '%s\n' "${out% }"; }

wait_port() {
  local port="$1" secs="${2:-15}" deadline
  need_port "$port" wait
  deadline=$(( $(date +%s) + secs ))
  while :; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      printf 'servers.sh: 127.0.0.1:%s not accepting after %ss\n' "$port" "$secs" >&2
      return 1
    fi
    sleep 0.1
  done
}

[ $# -ge 1 ] || die "usage: servers.sh list|cmd|start|exec|wait ..."
action="$1"; shift
case "$action" in
  list)
    for n in $NAMES; do
      case "$n" in
        py-time-*) era="2026-07-28 + 2025-11-25" ;;
        ts-proxy-everything) era="2026-07-28 (proxy) over a 2025-era stdio server" ;;
        *) era="2025-11-25 only" ;;
      esac
      if is_http "$n"; then t=http; else t=stdio; fi
      printf '%-22s %-6s %s\n' "$n" "$t" "$era"
    done ;;
  cmd)
    [ $# -ge 1 ] || die "usage: servers.sh cmd NAME [PORT]"
    build "$@"; quoted "${CMD[@]}" ;;
  start)
    [ $# -ge 1 ] || die "usage: servers.sh start NAME PORT"
    build "$@"
    if is_http "$1"; then
      printf '+ %s\n' "$(quoted "${CMD[@]}")" >&2
      exec "${CMD[@]}"
    else
      quoted "${CMD[@]}"
    fi ;;
  exec)
    [ $# -ge 1 ] || die "usage: servers.sh exec NAME [PORT]"
    build "$@"; exec "${CMD[@]}" ;;
  wait)
    [ $# -ge 1 ] || die "usage: servers.sh wait PORT [SECS]"
    wait_port "$@" ;;
  *) die "unknown action '$action'" ;;
esac
