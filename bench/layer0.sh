#!/usr/bin/env bash
# Layer-0 benchmark: mcp-eval against the official conformance suite, side by side, in one run.
#
#   bench/layer0.sh [RUNS]        (default RUNS=5; the official suite runs min(RUNS, 3) times)
#
# For each server (already running when it is timed): the server's own floor (median time of one
# tools/list round trip on a kept-alive connection), the median wall time of a whole `mcp-eval run`
# and of a whole official `server --requirements 2026-07-28` run (start-up included), the ratio,
# the requirement ids each exercised, and our peak RSS (/usr/bin/time -v, our process only).
# Also a 5,000-tool fixture (the demo server with `--break chaos-5000-tools`), and stdio vs HTTP
# on the same server (the Python SDK's time server): the median wall time of a whole run each way,
# how many processes the stdio run started (`server.stdio_starts` in report.json), the median time
# of one process start (spawn to its answer to one `server/discover`), and the target
# stdio <= 3 x HTTP + one start per process started.
# This prints figures; it asserts nothing (targets are in the README and the issue).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
RUNS="${1:-5}"
OFFICIAL_RUNS=$(( RUNS < 3 ? RUNS : 3 ))
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
BIN="$TARGET_DIR/release/mcp-eval"
NODE22="$ROOT/.interop/bin/node22"
SUITE="$ROOT/.interop/node/node_modules/@modelcontextprotocol/conformance/dist/index.js"
WORK="$(mktemp -d)"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "building the release binary and installing the servers…" >&2
cargo build --release --quiet
bash scripts/install-servers.sh 2>/dev/null

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
now_ns() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

start_real() { # NAME PORT
  setsid bash scripts/servers.sh start "$1" "$2" >"$WORK/$1.log" 2>&1 &
  PIDS+=($!)
  bash scripts/servers.sh wait "$2" 30
}

start_fixture() { # PORT-FILE
  setsid "$BIN" demo-server --port 0 --break chaos-5000-tools >"$1" 2>/dev/null &
  PIDS+=($!)
  for _ in $(seq 100); do [ -s "$1" ] && break; sleep 0.05; done
}

# Median milliseconds of one tools/list round trip on a kept-alive connection (the server's floor).
floor_ms() { # URL
  python3 - "$1" <<'PY'
import http.client, json, statistics, sys, time, urllib.parse
url = urllib.parse.urlparse(sys.argv[1])
connection = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}})
headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
           "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
samples = []
for _ in range(30):
    started = time.perf_counter()
    connection.request("POST", url.path, body, headers)
    response = connection.getresponse()
    response.read()
    samples.append((time.perf_counter() - started) * 1000)
ok = response.status == 200
print(f"{statistics.median(samples[5:]):.2f}" if ok else f"n/a(HTTP {response.status})")
PY
}

ours() { # URL LABEL → prints "median_ms peak_rss_kb exercised_ids"
  local url="$1" label="$2" times=()
  for i in $(seq "$RUNS"); do
    local start end
    start=$(now_ns)
    "$BIN" run --server-url "$url" --out "$WORK/ours-$label" --quiet >/dev/null 2>&1 || true
    end=$(now_ns)
    times+=($(( (end - start) / 1000 )))
  done
  /usr/bin/time -v -o "$WORK/time-$label.txt" "$BIN" run --server-url "$url" --out "$WORK/ours-$label" --quiet >/dev/null 2>&1 || true
  local rss
  rss=$(awk -F: '/Maximum resident set size/ {gsub(/ /,"",$2); print $2}' "$WORK/time-$label.txt")
  local ids
  ids=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sum(1 for c in r["checks"] if c["status"] in ("pass","fail","warn")))' "$WORK/ours-$label/report.json")
  printf '%s %s %s\n' "$(printf '%s\n' "${times[@]}" | median | awk '{printf "%.1f", $1/1000}')" "$rss" "$ids"
}

official() { # URL LABEL → prints "median_ms exercised_check_ids"
  local url="$1" label="$2" times=()
  for i in $(seq "$OFFICIAL_RUNS"); do
    rm -rf "$WORK/official-$label"
    local start end
    start=$(now_ns)
    "$NODE22" "$SUITE" server --url "$url" --requirements 2026-07-28 -o "$WORK/official-$label" >/dev/null 2>&1 || true
    end=$(now_ns)
    times+=($(( (end - start) / 1000 )))
  done
  local ids
  ids=$(python3 - "$WORK/official-$label" <<'PY'
import glob, json, sys
exercised = set()
for path in glob.glob(sys.argv[1] + "/**/checks.json", recursive=True):
    for check in json.load(open(path)):
        if check.get("status") in ("SUCCESS", "FAILURE", "WARNING"):
            exercised.add(check.get("id"))
print(len(exercised))
PY
)
  printf '%s %s\n' "$(printf '%s\n' "${times[@]}" | median | awk '{printf "%.1f", $1/1000}')" "$ids"
}

declare -A URLS
for name in py-time-http ts-proxy-everything ts-everything-http ts-v2-basic-http; do
  port=$(free_port)
  start_real "$name" "$port"
  URLS[$name]="http://127.0.0.1:$port/mcp"
done
start_fixture "$WORK/fixture.url"
URLS[fixture-5000-tools]="$(head -1 "$WORK/fixture.url" 2>/dev/null || true)"
sleep 0.5

printf '\nmcp-eval %s vs @modelcontextprotocol/conformance 0.2.0-alpha.12; median of %s (ours) / %s (official) whole-command runs\n\n' \
  "$("$BIN" --version | awk '{print $2}')" "$RUNS" "$OFFICIAL_RUNS"
printf '%-22s %10s %12s %14s %8s %10s %13s %14s\n' server floor_ms ours_ms official_ms ratio ours_ids official_ids ours_peak_rss
for name in py-time-http ts-proxy-everything ts-everything-http ts-v2-basic-http fixture-5000-tools; do
  url="${URLS[$name]}"
  if [ -z "$url" ]; then printf '%-22s (not available)\n' "$name"; continue; fi
  floor=$(floor_ms "$url" 2>/dev/null || echo "n/a")
  read -r ours_ms rss ours_ids < <(ours "$url" "$name")
  read -r official_ms official_ids < <(official "$url" "$name")
  ratio=$(awk -v a="$official_ms" -v b="$ours_ms" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "n/a" }')
  printf '%-22s %10s %12s %14s %8s %10s %13s %11s KB\n' "$name" "$floor" "$ours_ms" "$official_ms" "$ratio" "$ours_ids" "$official_ids" "$rss"
done
printf '\nfloor_ms: one tools/list round trip (the server itself); *_ms: whole commands incl. start-up;\n'
printf 'ids: requirement ids exercised (ours: checks with a verdict; official: check ids with SUCCESS/FAILURE/WARNING).\n'

# stdio vs HTTP on the same server.
start_ms() { # COMMAND → median milliseconds from spawning the stdio server to its first answer
  python3 - "$1" <<'PY'
import json, statistics, subprocess, sys, time
meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}) + "\n"
samples = []
for _ in range(3):
    started = time.perf_counter()
    child = subprocess.Popen(["sh", "-c", sys.argv[1]], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
    child.stdin.write(line)
    child.stdin.flush()
    child.stdout.readline()
    samples.append((time.perf_counter() - started) * 1000)
    child.stdin.close()
    child.wait(timeout=10)
print(f"{statistics.median(samples):.0f}")
PY
}

wall_ms() { # OUT-DIR ARGS… → median wall milliseconds of RUNS whole runs (the last run's reports in OUT-DIR)
  local out="$1" times=() start end
  shift
  for _ in $(seq "$RUNS"); do
    start=$(now_ns)
    "$BIN" run "$@" --out "$out" --quiet >/dev/null 2>&1 || true
    end=$(now_ns)
    times+=($(( (end - start) / 1000000 )))
  done
  printf '%s\n' "${times[@]}" | median
}

STDIO_CMD="$(bash scripts/servers.sh cmd py-time-stdio)"
if [ -n "${URLS[py-time-http]:-}" ]; then
  http_ms=$(wall_ms "$WORK/vs-http" --server-url "${URLS[py-time-http]}")
  stdio_ms=$(wall_ms "$WORK/vs-stdio" --server-cmd "$STDIO_CMD")
  starts=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["server"].get("stdio_starts", [])))' "$WORK/vs-stdio/report.json")
  one_start=$(start_ms "$STDIO_CMD")
  target=$(awk -v h="$http_ms" -v n="$starts" -v s="$one_start" 'BEGIN { printf "%.0f", 3 * h + n * s }')
  printf '\nstdio vs HTTP, the Python SDK time server (median of %s whole runs each):\n' "$RUNS"
  printf '  http %s ms; stdio %s ms (%sx); stdio processes started: %s; one start: %s ms\n' "$http_ms" "$stdio_ms" \
    "$(awk -v a="$stdio_ms" -v b="$http_ms" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }')" "$starts" "$one_start"
  printf '  target: stdio <= 3 x http + %s x one start = %s ms: %s\n' "$starts" "$target" \
    "$(awk -v a="$stdio_ms" -v t="$target" 'BEGIN { print (a <= t ? "met" : "NOT met") }')"
  python3 -c 'import json,sys; [print("    start:", reason) for reason in json.load(open(sys.argv[1]))["server"].get("stdio_starts", [])]' "$WORK/vs-stdio/report.json"
else
  printf '\nstdio vs HTTP: not measured (py-time-http is not available)\n'
fi
