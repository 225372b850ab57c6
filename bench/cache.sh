#!/usr/bin/env bash
# Verdict-cache benchmark: what a fully cached layer-1 run costs.
#
#   bench/cache.sh
#
# Generates a golden set of 25 distinct cases (`runs: 3`), each expecting one call of a read-only
# tool of the demo server and then a final answer. Starts the demo MCP server and the scripted demo
# model (`mcp-eval demo-model`, hidden, 20 ms per answer), and runs layer 1 for three models on the
# same keyless provider (`bench:a`, `bench:b`, `bench:c`: 75 case x model verdicts) twice, with
# `--cache-dir DIR --cache-key none --layers 1`:
#
#   cold   the first run: every verdict is measured (75 x 3 runs x 2 turns = 450 model calls)
#          and stored in the cache
#   warm   the same command again: every verdict should be reused. Prints its wall time under
#          /usr/bin/time (start-up and layer 0's connection included; target < 1 s), its
#          `model_calls` from report.json (target 0) and how many evals carry `cached`
#
# Loopback only. It prints figures; it asserts nothing.
set -euo pipefail
DELAY_MS=20
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The golden set: 25 distinct cases on three read-only tools of the demo server, 3 runs each.
python3 - "$WORK/set.yaml" <<'PY'
import json, sys
cases = []
for i in range(9):
    word = f"word{i}"
    cases.append({"id": f"echo-{i}", "prompt": f"Echo the word '{word}' back to me with the text tool.",
                  "expect_tool": "test_simple_text", "expect_args": {"text": {"match": "exact", "value": word}}})
for i in range(8):
    region = f"region{i}"
    cases.append({"id": f"region-{i}", "prompt": f"My region is {region}; echo it back to me.",
                  "expect_tool": "test_header_param", "expect_args": {"region": {"match": "exact", "value": region}}})
for i in range(8):
    unit = ["celsius", "fahrenheit"][i % 2]
    cases.append({"id": f"temperature-{i}", "prompt": f"Question {i}: what is the temperature in {unit}?",
                  "expect_tool": "test_structured", "expect_args": {"unit": {"match": "exact", "value": unit}}})
assert len(cases) == 25
with open(sys.argv[1], "w") as out:
    out.write("version: 1\ndefaults:\n  runs: 3\n  kind: hard\n  max_turns: 4\ncases:\n")
    for case in cases:  # JSON is YAML: one flow mapping per case
        out.write(f"  - {json.dumps(case)}\n")
PY

start_demo_server
"$BIN" demo-model --golden-set "$WORK/set.yaml" --delay-ms "$DELAY_MS" --port 0 >"$WORK/model.url" 2>"$WORK/model.log" &
PIDS+=($!)
MODEL_URL="$(wait_url "$WORK/model.url")"
printf 'providers:\n  - {id: bench, api: openai, base_url: "%s/v1"}\n' "$MODEL_URL" >"$WORK/config.yaml"

run() { # NAME
  local name="$1" code=0
  /usr/bin/time -f '%e %M' -o "$WORK/time-$name" "$BIN" run --server-url "$SERVER_URL" --layers 1 \
    --golden-set "$WORK/set.yaml" --model bench:a --model bench:b --model bench:c \
    --cache-dir "$WORK/cache" --cache-key none --concurrency 8 \
    --config "$WORK/config.yaml" --quiet --out "$WORK/out-$name" >/dev/null 2>"$WORK/run-$name.log" || code=$?
  python3 - "$WORK/out-$name/report.json" "$WORK/time-$name" "$name" "$code" <<'PY'
import json, sys
report_path, time_path, name, code = sys.argv[1:5]
wall_s, rss_kb = open(time_path).read().split()[-2:]
report = json.load(open(report_path))
evals = report.get("evals", [])
passed = sum(1 for e in evals if e.get("status") == "pass")
cached = sum(1 for e in evals if e.get("cached"))
print(f"{name}: exit {code}, wall {float(wall_s):.2f} s, peak RSS {int(rss_kb) / 1024:.1f} MB, "
      f"model calls {report.get('model_calls', 0)}, evals passed {passed}/{len(evals)}, cached {cached}/{len(evals)}")
PY
}

printf 'mcp-eval %s, %s CPU(s), 25 cases x 3 models, runs: 3, model delay %s ms\n' \
  "$("$BIN" --version | awk '{print $2}')" "$(nproc)" "$DELAY_MS"
run cold
run warm
echo "target for warm: wall < 1 s, model calls 0, cached 75/75"
