#!/usr/bin/env bash
# The project's test command (the README's second command; CI runs it too):
#   1. installs the pinned real MCP servers the interop tests start (scripts/install-servers.sh),
#   2. checks formatting and lints (cargo fmt --check, cargo clippy -D warnings),
#   3. runs every test: unit tests, robustness and interop on real servers, the Action's tests
#      (after scripts/lint-action.sh installed junitparser and linted the Dockerfile, action.yml
#      and the workflows), then the break matrix with more test threads.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

echo "== installing the real MCP servers used by the interop tests" >&2
bash scripts/install-servers.sh

echo "== the Action's lint tools and junitparser (scripts/install-action-tools.sh), then its lints" >&2
bash scripts/lint-action.sh

echo "== cargo fmt --check" >&2
cargo fmt --all --check

echo "== cargo clippy --all-targets -- -D warnings" >&2
cargo clippy --all-targets --locked -- -D warnings

# The break matrix (tests/it/breaks.rs) is one test per row; each row is an I/O-bound run of the
# binary against a demo server, so it runs 8 rows at once. Everything else keeps the harness's
# default thread count (the robustness tests are timing-sensitive).
echo "== cargo test (all but the break matrix)" >&2
cargo test --locked -- --skip breaks::matrix::

echo "== cargo test: the break matrix, 8 rows at once" >&2
cargo test --locked --test it breaks::matrix:: -- --test-threads 8
