#!/usr/bin/env bash
# Records the demo's judge calibration set (golden/calibration/) from the demo model:
#   demo-runs.json        a report.json of 12 runs of the rubric case `temperature-stated`
#                         (golden/calibration/demo-rubric-case.yaml, the case of golden/demo.yaml),
#                         with full traces; every 4th run calls a wrong tool and every 2nd
#                         answer quotes the tool's result (the others only say they are done)
#   cassettes/            the scripted judge's answers to `mcp-eval judge calibrate`
#   demo-judge-calibration.json   what it measured
# demo-labels.yaml holds the hand labels of those runs: it is written by a person, not by this
# script. The runs are deterministic (one at a time); if a change to the demo model or the demo
# server changes them, label them again before committing. Then rebuild.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet
bin=${CARGO_TARGET_DIR:-target}/debug/mcp-eval
work=$(mktemp -d)
trap 'kill "$model_pid" 2>/dev/null || true; rm -rf "$work"' EXIT

"$bin" demo-model --golden-set golden/demo.yaml --flaky temperature-stated:4 \
  --quote-result temperature-stated:2 >"$work/url" &
model_pid=$!
for _ in $(seq 50); do [ -s "$work/url" ] && break; sleep 0.1; done
url=$(head -n1 "$work/url")

cat >"$work/config.yaml" <<YAML
providers:
  - id: demo
    api: openai
    base_url: $url/v1
YAML

# The runs to label, judged as a run would judge them.
"$bin" run --demo --layers 1 --golden-set golden/calibration/demo-rubric-case.yaml \
  --config "$work/config.yaml" --model demo:scripted --judge-model demo:judge --runs 12 \
  --concurrency 1 --trace-results full --out "$work/report" --quiet || true
cp "$work/report/report.json" golden/calibration/demo-runs.json

# The judge re-judges the labelled runs; its answers are recorded for offline replays.
rm -rf golden/calibration/cassettes
"$bin" judge calibrate golden/calibration/demo-labels.yaml --config "$work/config.yaml" \
  --judge-model demo:judge --cassettes golden/calibration/cassettes --record \
  --out golden/calibration/demo-judge-calibration.json
