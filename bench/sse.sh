#!/usr/bin/env bash
# SSE benchmark: the parser alone (cargo bench --bench sse: a 16 MiB event and 16 MiB of small
# events), then a whole layer-0 run against the demo server with `--break chaos-80000-tools-sse`
# (tools/list is one SSE event of about 18 MB, 80,000 tools), RUNS times: wall time, peak RSS,
# and whether any check reported a timeout; beside them the floor: the server's time for one
# tools/list times the number of whole lists layer 0 is answered (one run through a byte-level
# loopback proxy, not timed: the bytes answered over one list's size), and the target, computed from that floor on every run:
# layer 0 <= 2 x floor + 1 s (the goal of issue 40: our own CPU on a list at most the server's
# cost for it, plus a second for start-up and the probes), peak RSS <= 100 MB. Each run prints
# measured, floor and target side by side. Prints figures; asserts nothing.
#
#   bench/sse.sh [RUNS]        (default 3)
#   BASELINE_BIN=path/to/older/mcp-eval bench/sse.sh   also times an older build, side by side
#   PARSER=0 bench/sse.sh                               skips the parser alone (cargo bench)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
RUNS="${1:-3}"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
BIN="$TARGET_DIR/release/mcp-eval"
WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill -TERM "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

if [ "${PARSER:-1}" != 0 ]; then cargo bench --quiet --bench sse 2>/dev/null | grep '^sse '; fi
cargo build --release --quiet

"$BIN" demo-server --port 0 --break chaos-80000-tools-sse >"$WORK/url" 2>/dev/null &
SERVER_PID=$!
for _ in $(seq 100); do [ -s "$WORK/url" ] && break; sleep 0.05; done
URL="$(head -n1 "$WORK/url")"

ONE_LIST_MS=$(python3 - "$URL" <<'PY'
import http.client, json, sys, time, urllib.parse
url = urllib.parse.urlparse(sys.argv[1])
meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}})
headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
           "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
started = time.perf_counter()
connection.request("POST", url.path, body, headers)
response = connection.getresponse()
data = response.read()
elapsed = (time.perf_counter() - started) * 1000
print(f"server floor: one tools/list = {len(data) / 1e6:.1f} MB of {response.getheader('content-type')} in {elapsed:.0f} ms", file=sys.stderr)
print(f"{elapsed:.0f} {len(data)}")
PY
)
ONE_LIST_BYTES=${ONE_LIST_MS#* }
ONE_LIST_MS=${ONE_LIST_MS% *}

# How many tools/list requests one layer-0 run sends, and how many whole lists come back: one
# run through a loopback proxy that forwards bytes unchanged, counts `"method":"tools/list"` in
# what the client sends, and sums the bytes the server answers. A request refused early (a probe
# with a wrong header) costs the server next to nothing, so the floor counts whole lists: the
# bytes answered over one list's size, rounded down.
LISTS_AND_BYTES=$(python3 - "$URL" "$BIN" "$WORK/count" <<'PY'
import asyncio, subprocess, sys, urllib.parse
url, binary, out = sys.argv[1], sys.argv[2], sys.argv[3]
target = urllib.parse.urlparse(url)
count = 0
answered = 0
async def pipe(reader, writer, counting):
    global count, answered
    tail = b""
    try:
        while data := await reader.read(1 << 16):
            if counting:
                window = tail + data
                count += window.count(b'"method":"tools/list"') - tail.count(b'"method":"tools/list"')
                tail = window[-32:]
            else:
                answered += len(data)
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()
async def handle(client_reader, client_writer):
    server_reader, server_writer = await asyncio.open_connection(target.hostname, target.port)
    await asyncio.gather(pipe(client_reader, server_writer, True), pipe(server_reader, client_writer, False))
async def main():
    proxy = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = proxy.sockets[0].getsockname()[1]
    run = await asyncio.create_subprocess_exec(binary, "run", "--quiet", "--server-url",
        f"http://127.0.0.1:{port}{target.path}", "--out", out,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    await run.wait()
    proxy.close()
asyncio.run(main())
print(count, answered)
PY
)
REQUESTS=${LISTS_AND_BYTES% *}
ANSWERED=${LISTS_AND_BYTES#* }
LISTS=$(( ANSWERED / ONE_LIST_BYTES ))
FLOOR_MS=$(( ONE_LIST_MS * LISTS ))
TARGET_MS=$(( 2 * FLOOR_MS + 1000 ))
printf 'floor: one tools/list %s ms x %s whole lists answered per layer-0 run (%s tools/list requests sent, %s bytes answered) = %s ms; target: layer 0 <= 2 x floor + 1 s = %s ms, peak RSS <= 100 MB\n' \
  "$ONE_LIST_MS" "$LISTS" "$REQUESTS" "$ANSWERED" "$FLOOR_MS" "$TARGET_MS"

time_runs() { # LABEL BINARY
  for run in $(seq "$RUNS"); do
    out="$WORK/out-$1-$run"
    start=$(date +%s%N)
    code=0
    /usr/bin/time -v "$2" run --quiet --server-url "$URL" --out "$out" 2>"$WORK/time-$1-$run" || code=$?
    end=$(date +%s%N)
    rss=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$WORK/time-$1-$run")
    timeouts=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(",".join(c["id"] for c in r["checks"] if "within the timeout" in c["message"]) or "none")' "$out/report.json")
    ms=$(( (end - start) / 1000000 ))
    printf '%s layer-0 run %d: measured %d ms, floor %d ms, target %d ms (%s of target), exit %d, peak RSS %.1f MB (target 100 MB), checks reporting a timeout: %s\n' \
      "$1" "$run" "$ms" "$FLOOR_MS" "$TARGET_MS" "$(awk -v m="$ms" -v t="$TARGET_MS" 'BEGIN {printf "%.2fx", m / t}')" "$code" "$(echo "$rss / 1024" | bc -l)" "$timeouts"
  done
}
time_runs this "$BIN"
if [ -n "${BASELINE_BIN:-}" ]; then time_runs baseline "$BASELINE_BIN"; fi
