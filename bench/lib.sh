# The start-up the layer-1 benchmarks share; source it after `set -euo pipefail`:
#   - ROOT (the repository, also the working directory), BIN (the release binary, built here),
#     WORK (a scratch directory);
#   - PIDS: processes to end on exit (append with `PIDS+=($!)`); the trap ends them and removes
#     WORK;
#   - wait_url FILE: the first line a started process wrote to FILE (its URL), once it is there;
#   - start_demo_server: starts `mcp-eval demo-server` on a free port and sets SERVER_URL.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
BIN="$TARGET_DIR/release/mcp-eval"
WORK="$(mktemp -d)"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

cargo build --release --quiet

wait_url() { # FILE
  for _ in $(seq 200); do [ -s "$1" ] && break; sleep 0.05; done
  head -n1 "$1"
}

start_demo_server() {
  "$BIN" demo-server --port 0 >"$WORK/server.url" 2>"$WORK/server.log" &
  PIDS+=($!)
  SERVER_URL="$(wait_url "$WORK/server.url")"
}
