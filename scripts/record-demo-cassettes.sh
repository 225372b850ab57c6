#!/usr/bin/env bash
# Records the demo's cassettes (golden/cassettes/demo_scripted.json) from the demo model, a
# scripted stand-in for a good model (`mcp-eval demo-model`), against the embedded demo server.
# The demo model also answers as the judge of the rubric case (demo_judge.json) and as the
# embeddings model of the `embedding` matcher (demo_embeddings.json). A second demo model, told
# how to behave after a fault or a payload (`--on-fault`, `--on-payload`), answers layer 2's
# variants of the set's `faults:` and `adversarial:` entries, into demo_scripted.json too.
# `mcp-eval run --demo` replays them with no key and no network. Run it after changing
# golden/demo.yaml or the demo server's tools, then rebuild.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet
bin=${CARGO_TARGET_DIR:-target}/debug/mcp-eval
work=$(mktemp -d)
trap 'kill "$model_pid" "${faults_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

# One wrong call in five for `progress-report`, so the demo shows a soft case that passes 4/5.
"$bin" demo-model --golden-set golden/demo.yaml --flaky progress-report:5 >"$work/url" &
model_pid=$!
for _ in $(seq 50); do [ -s "$work/url" ] && break; sleep 0.1; done
url=$(head -n1 "$work/url")

cat >"$work/config.yaml" <<YAML
providers:
  - id: demo
    api: openai
    base_url: $url/v1
YAML

rm -f golden/cassettes/demo_scripted.json golden/cassettes/demo_judge.json golden/cassettes/demo_embeddings.json
# One run at a time, so the wrong call lands on the same run every time.
"$bin" run --demo --layers 1 --golden-set golden/demo.yaml --config "$work/config.yaml" \
  --model demo:scripted --judge-model demo:judge --embedding-model demo:embeddings \
  --cassettes golden/cassettes --record --concurrency 1 \
  --out "$work/report" --quiet || status=$?

# Layer 2: recorded into the same files (their recordings are read back and kept).
"$bin" demo-model --golden-set golden/demo.yaml \
  --on-fault temperature-in-celsius:retry --on-fault short-text:honest \
  --on-fault region-echo:fallback=test_structured --on-payload echo-hello:refuse >"$work/url2" &
faults_pid=$!
for _ in $(seq 50); do [ -s "$work/url2" ] && break; sleep 0.1; done
url2=$(head -n1 "$work/url2")
sed "s#$url/v1#$url2/v1#" "$work/config.yaml" >"$work/config2.yaml"
"$bin" run --demo --layers 2 --golden-set golden/demo.yaml --config "$work/config2.yaml" \
  --model demo:scripted --cassettes golden/cassettes --record --concurrency 1 \
  --out "$work/report2" --quiet || status2=$?
echo "layer 2 recorded (run exit status ${status2:-0})"
echo "recorded: $(grep -c '"key"' golden/cassettes/demo_scripted.json) model calls, $(grep -c '"key"' golden/cassettes/demo_judge.json) judge calls and $(grep -c '"text"' golden/cassettes/demo_embeddings.json) embedded texts (run exit status ${status:-0})"
