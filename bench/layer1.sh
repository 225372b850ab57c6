#!/usr/bin/env bash
# Layer-1 benchmark: the harness's own cost around model calls.
#
#   bench/layer1.sh [CONCURRENCY]        (default 8)
#
# Generates a golden set of 10 distinct cases x `runs: 5` (50 runs), each expecting one call of a
# read-only tool of the demo server and then a final answer: 2 model turns per run. Starts the
# demo MCP server and the scripted demo model (`mcp-eval demo-model`, hidden), which answers each
# request after a fixed delay, then times `mcp-eval run --layers 1 --concurrency C` against them
# (start-up included) under /usr/bin/time. Prints, for a 200 ms model delay and once for 0 ms:
#
#   model calls  report.json's `model_calls` (100 expected: 50 runs x 2 turns)
#   wall         the whole command's elapsed time, and its peak RSS (target <= 40 MB)
#   ideal        (2 turns x delay) x 50 runs / C: the time if only the model cost anything and the
#                C slots were always full (2.5 s at C=8, 200 ms); ratio = wall / ideal
#                (target <= 1.15). Runs are whole, so one slot runs ceil(50 / C) of them: the
#                best a harness can do with whole runs is printed too (2.8 s at C=8).
#   overhead     per model call: (wall x C - calls x delay) / calls, i.e. slot-time spent on
#                anything but waiting for the model (MCP tools/call, scoring, idle slots,
#                start-up, layer 0's connection), charged to each call. With delay 0 it is the
#                pure harness cost of a call (x C: C calls share the wall time).
#
# Cases that do not all pass are reported (the figures are then not comparable). Loopback only.
# It prints figures; it asserts nothing.
set -euo pipefail
CONCURRENCY="${1:-8}"
DELAY_MS=200
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The golden set: 10 distinct cases on the demo server's read-only tools, 5 runs each.
python3 - "$WORK/set.yaml" <<'PY'
import json, sys
cases = []
for i, word in enumerate(["apple", "birch", "cedar", "delta"]):
    cases.append({"id": f"echo-{word}", "prompt": f"Echo the word '{word}' back to me with the text tool.",
                  "expect_tool": "test_simple_text", "expect_args": {"text": {"match": "exact", "value": word}}})
for region in ["eu", "us", "apac"]:
    cases.append({"id": f"region-{region}", "prompt": f"My region is {region}; echo it back to me.",
                  "expect_tool": "test_header_param", "expect_args": {"region": {"match": "exact", "value": region}}})
for i, unit in enumerate(["celsius", "fahrenheit", "celsius"]):
    cases.append({"id": f"temperature-{i}-{unit}", "prompt": f"Question {i}: what is the temperature in {unit}?",
                  "expect_tool": "test_structured", "expect_args": {"unit": {"match": "exact", "value": unit}}})
assert len(cases) == 10
with open(sys.argv[1], "w") as out:
    out.write("version: 1\ndefaults:\n  runs: 5\n  kind: hard\n  max_turns: 4\ncases:\n")
    for case in cases:  # JSON is YAML: one flow mapping per case
        out.write(f"  - {json.dumps(case)}\n")
PY

start_demo_server

bench() { # DELAY_MS
  local delay="$1" out="$WORK/out-$1"
  "$BIN" demo-model --golden-set "$WORK/set.yaml" --delay-ms "$delay" --port 0 >"$WORK/model-$delay.url" 2>"$WORK/model-$delay.log" &
  local model_pid=$!
  PIDS+=("$model_pid")
  local model_url
  model_url="$(wait_url "$WORK/model-$delay.url")"
  printf 'providers:\n  - {id: bench, api: openai, base_url: "%s/v1"}\n' "$model_url" >"$WORK/config-$delay.yaml"
  local code=0
  /usr/bin/time -f '%e %M' -o "$WORK/time-$delay" "$BIN" run --server-url "$SERVER_URL" --layers 1 \
    --golden-set "$WORK/set.yaml" --model bench:scripted --concurrency "$CONCURRENCY" \
    --config "$WORK/config-$delay.yaml" --quiet --out "$out" >/dev/null 2>"$WORK/run-$delay.log" || code=$?
  kill -TERM "$model_pid" 2>/dev/null || true
  python3 - "$out/report.json" "$WORK/time-$delay" "$delay" "$CONCURRENCY" "$code" <<'PY'
import json, sys
report_path, time_path, delay_ms, concurrency, code = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
wall_s, rss_kb = open(time_path).read().split()[-2:]
wall, rss_mb = float(wall_s), int(rss_kb) / 1024
report = json.load(open(report_path))
calls = report.get("model_calls", 0)  # layer 1's members sit at the top level
cases = report.get("evals", [])
passed = sum(1 for case in cases if case.get("status") == "pass")
runs = 10 * 5
ideal = 2 * delay_ms / 1000 * runs / concurrency
print(f"delay {delay_ms} ms, concurrency {concurrency}: exit {code}, cases passed {passed}/{len(cases)}, model calls {calls}")
print(f"  wall {wall:.2f} s, peak RSS {rss_mb:.1f} MB (target <= 40 MB)")
if delay_ms > 0:
    print(f"  ideal (2 turns x {delay_ms} ms) x {runs} runs / {concurrency} = {ideal:.2f} s; wall/ideal = {wall / ideal:.2f} (target <= 1.15)")
    # Whole runs: the busiest of the C slots does ceil(runs / C) runs of 2 turns each.
    turns = -(-runs // concurrency) * 2
    bound = turns * delay_ms / 1000
    print(f"  best with whole runs (the busiest slot runs ceil({runs} / {concurrency})): {turns} turns x {delay_ms} ms"
          f" = {bound:.2f} s; wall/best = {wall / bound:.2f}")
if calls:
    per_call = (wall * concurrency - calls * delay_ms / 1000) / calls * 1000
    print(f"  overhead per model call = (wall x C - calls x delay) / calls = {per_call:.1f} ms"
          + (f" (wall / calls = {wall / calls * 1000:.1f} ms)" if delay_ms == 0 else ""))
PY
}

printf 'mcp-eval %s, %s CPU(s)\n' "$("$BIN" --version | awk '{print $2}')" "$(nproc)"
bench "$DELAY_MS"
bench 0
