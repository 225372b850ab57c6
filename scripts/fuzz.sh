#!/usr/bin/env bash
# Runs every fuzz target of fuzz/ (cargo-fuzz, libFuzzer) for SECONDS each (default 600), two at a
# time, from the committed corpus in fuzz/corpus/TARGET (new inputs are added there; a crash is
# written to fuzz/artifacts/TARGET and fails the script). Installs cargo-fuzz when missing.
#
#   scripts/fuzz.sh          # 10 minutes a target
#   scripts/fuzz.sh 60       # one minute a target
#   scripts/fuzz.sh 0        # replay the corpus only (every input once), as a regression check
#   scripts/fuzz.sh 600 sse stdio_stream   # only these targets
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT/fuzz"
SECS="${1:-600}"
shift || true
CARGO_FUZZ_VERSION="0.13.2"
if ! command -v cargo-fuzz >/dev/null 2>&1; then
  echo "fuzz: installing cargo-fuzz $CARGO_FUZZ_VERSION" >&2
  cargo install cargo-fuzz --locked --version "$CARGO_FUZZ_VERSION" >&2
fi
# cargo fuzz passes nightly-only flags (-Zsanitizer=address, -Cpasses=sancov-module); this lets
# the machine's stable toolchain accept them, for this script's builds only.
export RUSTC_BOOTSTRAP=1
LOGS="$(mktemp -d)"
export LOGS
run() {
  local target="$1"
  local log="$LOGS/$target.log"
  mkdir -p "corpus/$target"
  # -timeout: one input running longer than 10 s is a hang (libFuzzer's default is 20 minutes).
  local status=0
  if [ "$SECS" = 0 ]; then
    cargo fuzz run "$target" "corpus/$target" -- -runs=0 -timeout=10 -rss_limit_mb=2048 >"$log" 2>&1 || status=$?
  else
    cargo fuzz run "$target" "corpus/$target" -- -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 >"$log" 2>&1 || status=$?
  fi
  # One line per target: executions, coverage (edges, features), corpus size, and the outcome.
  local runs cov
  runs="$(grep -Eo '^Done [0-9]+ runs' "$log" | grep -Eo '[0-9]+' | tail -1)"
  cov="$(grep -Eo 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$log" | tail -1)"
  if [ "$status" = 0 ]; then
    echo "fuzz: $target: ${runs:-?} runs, ${cov:-no coverage line}, no crash"
  else
    echo "fuzz: $target: FAILED (exit $status): see fuzz/artifacts/$target; the log's end:" >&2
    tail -n 40 "$log" >&2
  fi
  return "$status"
}
export -f run
export SECS
cargo fuzz build >&2
if [ $# -gt 0 ]; then printf '%s\n' "$@"; else cargo fuzz list; fi | xargs -P 2 -I{} bash -c 'run {}'
