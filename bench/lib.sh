# The start-up the layer-1 benchmarks share; source it after `set -euo pipefail`:
#   - ROOT (the repository, also the working directory), BIN (the release binary, built here;
#     BENCH_PROFILE=debug builds and uses the debug one instead), WORK (a scratch directory);
#   - PIDS: processes to end on exit (append with `PIDS+=($!)`); the trap ends them and removes
#     WORK;
#   - wait_url FILE: the first line a started process wrote to FILE (its URL), once it is there;
#   - start_demo_server: starts `mcp-eval demo-server` on a free port and sets SERVER_URL.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
PROFILE="${BENCH_PROFILE:-release}"
BIN="$TARGET_DIR/$PROFILE/mcp-eval"
WORK="$(mktemp -d)"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

if [ "$PROFILE" = debug ]; then cargo build --quiet; else cargo build --release --quiet; fi

wait_url() { # FILE
  for _ in $(seq 200); do [ -s "$1" ] && break; sleep 0.05; done
  head -n1 "$1"
}

start_demo_server() {
  "$BIN" demo-server --port 0 >"$WORK/server.url" 2>"$WORK/server.log" &
  PIDS+=($!)
  SERVER_URL="$(wait_url "$WORK/server.url")"
}
