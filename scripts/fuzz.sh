#!/usr/bin/env bash
# Runs every fuzz target of fuzz/ (cargo-fuzz, libFuzzer) for SECONDS each (default 600), two at a
# time, from the committed corpus in fuzz/corpus/TARGET (new inputs are added there; a crash is
# written to fuzz/artifacts/TARGET and fails the script). Installs cargo-fuzz when missing.
#
#   scripts/fuzz.sh          # 10 minutes a target
#   scripts/fuzz.sh 60       # one minute a target
#   scripts/fuzz.sh 0        # replay the corpus only (every input once), as a regression check
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT/fuzz"
SECS="${1:-600}"
CARGO_FUZZ_VERSION="0.13.2"
if ! command -v cargo-fuzz >/dev/null 2>&1; then
  echo "fuzz: installing cargo-fuzz $CARGO_FUZZ_VERSION" >&2
  cargo install cargo-fuzz --locked --version "$CARGO_FUZZ_VERSION" >&2
fi
# cargo fuzz passes nightly-only flags (-Zsanitizer=address, -Cpasses=sancov-module); this lets
# the machine's stable toolchain accept them, for this script's builds only.
export RUSTC_BOOTSTRAP=1
run() {
  local target="$1"
  mkdir -p "corpus/$target"
  if [ "$SECS" = 0 ]; then
    cargo fuzz run "$target" "corpus/$target" -- -runs=0
  else
    cargo fuzz run "$target" "corpus/$target" -- -max_total_time="$SECS" -rss_limit_mb=2048 -print_final_stats=1
  fi
}
export -f run
export SECS
cargo fuzz list | xargs -P 2 -I{} bash -c 'run {}'
