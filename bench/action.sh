#!/usr/bin/env bash
# Benchmark of the Action's packaging and start-up:
#   1. the image size, when a Docker engine can build the Dockerfile (otherwise says so);
#   2. the time from starting `mcp-eval action` to the first request byte reaching the server
#      under test (target: at most 100 ms), measured with a local TCP listener that timestamps
#      the first byte it receives. Median and max over RUNS runs (default 20).
# It prints figures; it is not a timed test.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
RUNS="${RUNS:-20}"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"

echo "== image size"
if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  docker build -q -t mcp-eval-action:bench . >/dev/null
  docker image inspect mcp-eval-action:bench --format '{{.Size}}' | awk '{ printf "image: %.1f MB uncompressed\n", $1 / 1e6 }'
  docker save mcp-eval-action:bench | gzip -c | wc -c | awk '{ printf "image: %.1f MB compressed (docker save | gzip)\n", $1 / 1e6 }'
else
  echo "image: not measured: no Docker engine on this machine (docker build needs one)"
fi

echo "== start to first request"
cargo build --release --quiet
BIN="$TARGET_DIR/release/mcp-eval"
ls -l "$BIN" | awk '{ printf "binary: %.1f MB (release, %s)\n", $5 / 1e6, "'"$(uname -m)"'" }'
python3 - "$BIN" "$RUNS" <<'PY'
import os, socket, statistics, subprocess, sys, tempfile, time
binary, runs = sys.argv[1], int(sys.argv[2])
samples = []
for _ in range(runs):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    with tempfile.TemporaryDirectory() as workspace:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "INPUT_SERVER-URL": f"http://127.0.0.1:{port}/mcp",
            "INPUT_TIMEOUT-SECONDS": "1",
            "INPUT_COMMENT": "false",
            "GITHUB_EVENT_NAME": "push",
            "GITHUB_WORKSPACE": workspace,
        }
        start = time.perf_counter()
        child = subprocess.Popen([binary, "action"], env=env, cwd=workspace,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        connection, _ = listener.accept()
        connection.recv(1)
        samples.append((time.perf_counter() - start) * 1000)
        connection.close()
        listener.close()
        child.kill()
        child.wait()
samples.sort()
print(f"start to first request byte: median {statistics.median(samples):.1f} ms, "
      f"min {samples[0]:.1f} ms, max {samples[-1]:.1f} ms over {runs} runs (target <= 100 ms)")
PY
