#!/usr/bin/env bash
# Opt-in: layer 1 against a real local model server (not run by CI). The recipe of
# docs/without-a-key.md, tested: a model server that speaks the OpenAI wire (llama.cpp's
# `llama-server --jinja`, Ollama's `/v1`, vLLM with `--tool-call-parser`) evaluates the demo MCP
# server's tools.
#
#   LOCAL_MODEL_URL=http://127.0.0.1:8080/v1 bench/local-model.sh [RUNS [CONCURRENCY]]
#                                            (defaults 3 and 1)
#   LOCAL_MODEL_ID=NAME                      the model id to ask for; default: the first id the
#                                            server lists at GET /models (llama-server names a
#                                            model by its file path unless started with --alias)
#   LOCAL_MODEL_KEY=...                      a key, when the server wants one (none is sent else)
#   BENCH_PROFILE=debug                      the debug binary instead of the release one
#
# Without LOCAL_MODEL_URL it says so and exits 0. Generates a golden set of 3 cases (a call with
# an argument, a call without arguments, and a negative case that calls nothing) × RUNS trials,
# starts the demo MCP server, and runs `mcp-eval run --layers 1,3` against it with the local model
# as a provider of a config file, under /usr/bin/time. Prints:
#
#   verdicts     the exit status and each case's status and k/N (a small model fails some: that
#                is the model, not the harness)
#   trials/min   trials run ÷ the whole command's wall time in minutes
#   model time   the sum of the model calls' wall time (telemetry's model_calls latencies): the
#                time spent waiting for the model, and the calls made (failed ones included)
#   our CPU      mcp-eval's user + system CPU time (start-up, layer 0's connection, tools/call,
#                scoring, reports): what the harness costs beside the model
#   written as text  trials whose reason says the model wrote a call as text (the server's chat
#                template or tool-call parser does not turn calls into calls: see the reason)
set -euo pipefail
if [ -z "${LOCAL_MODEL_URL:-}" ]; then
  echo "skipped: set LOCAL_MODEL_URL to a local OpenAI-compatible model server (e.g. http://127.0.0.1:8080/v1)"
  exit 0
fi
RUNS="${1:-3}"
CONCURRENCY="${2:-1}"
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
BASE="${LOCAL_MODEL_URL%/}"

MODEL_ID="${LOCAL_MODEL_ID:-}"
if [ -z "$MODEL_ID" ]; then
  auth=()
  [ -n "${LOCAL_MODEL_KEY:-}" ] && auth=(-H "Authorization: Bearer $LOCAL_MODEL_KEY")
  MODEL_ID="$(curl -fsS "${auth[@]}" "$BASE/models" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"][0]["id"])')"
fi
echo "model server $BASE, model id $MODEL_ID, $RUNS run(s) per case, concurrency $CONCURRENCY"

cat >"$WORK/mcp-eval.yaml" <<EOF
providers:
  - id: local
    api: openai
    base_url: $BASE
EOF
if [ -n "${LOCAL_MODEL_KEY:-}" ]; then
  printf '    api_key_env: LOCAL_MODEL_KEY\n' >>"$WORK/mcp-eval.yaml"
fi
cat >"$WORK/golden.yaml" <<EOF
version: 1
defaults: {runs: $RUNS, timeout_ms: 300000}
cases:
  - id: region
    prompt: "Use the header parameter tool to echo the region eu-west."
    expect_tool: test_header_param
    expect_args: {region: eu-west}
  - id: progress
    prompt: "Run the progress demo tool."
    expect_tool: test_progress
  - id: greeting
    prompt: "Just say hello to me; no tool is needed."
    negative: true
EOF

start_demo_server
status=0
/usr/bin/time -f "%U %S %e" -o "$WORK/time" "$BIN" run --server-url "$SERVER_URL" --layers 1,3 \
  --golden-set "$WORK/golden.yaml" --config "$WORK/mcp-eval.yaml" --model "local:$MODEL_ID" \
  --concurrency "$CONCURRENCY" --out "$WORK/out" >"$WORK/run.log" 2>&1 || status=$?

python3 - "$WORK/out/report.json" "$WORK/time" "$status" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
user, system, wall = (float(x) for x in open(sys.argv[2]).read().split()[-3:])
status = sys.argv[3]
evals = report.get("evals") or []
trials = sum(len(e.get("traces", [])) for e in evals)
print(f"verdicts     exit {status}; " + ", ".join(f"{e['case']} {e['status']} {e['passed']}/{e['runs']}" for e in evals))
print(f"trials/min   {trials} trial(s) in {wall:.1f} s: {trials / wall * 60:.1f} per minute")
calls = (report.get("telemetry") or {}).get("model_calls") or []
model_ms = sum(call.get("latency_ms") or 0 for call in calls)
failed = sum(1 for call in calls if call.get("outcome") != "answer")
print(f"model time   {model_ms / 1000:.1f} s over {len(calls)} model call(s) ({failed} failed)")
print(f"our CPU      {user + system:.2f} s (user {user:.2f} s, system {system:.2f} s)")
text = sum(1 for e in evals for t in e.get("traces", []) if "as text" in (t.get("reason") or ""))
print(f"written as text  {text} trial(s)")
PY
