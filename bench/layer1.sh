#!/usr/bin/env bash
# Layer-1 benchmark: the harness's own cost around model calls.
#
#   bench/layer1.sh [CONCURRENCY [PAIRS]]        (defaults 8 and 10; PAIRS=0 skips layer 3)
#   LAYER3_DELAYS="0 200" bench/layer1.sh         layer 3's comparison at each delay (default 0)
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
# Then layer 3's overhead (telemetry: it only reads the run's event stream), for each delay in
# LAYER3_DELAYS (default 0 ms, where the harness is all there is to measure): PAIRS alternating
# pairs of `--layers 1,3` (on) and `--layers 1` (off), on first in even pairs and off first in odd
# ones (drift cancels), each followed by a control pair of two `--layers 1` runs (the same order
# rule). Each whole command is timed (start-up included, `date +%s%N`); the runs of a delay share
# one demo model. Prints:
#
#   runs         exit codes, cases passed and `model_calls` of every report.json (all equal, or
#                each value seen), and whether every on report has a measured `telemetry`
#                section (one telemetry row per model call) and no off report has one
#   on, off      the median wall time of each arm (and of the control runs) and median peak RSS
#   on vs off    the median over the pairs of on / off, as an overhead in % (min and max beside)
#   off vs off   the same median over the control pairs (first over second in even pairs): the
#                noise floor, with the median |off / off - 1| as the spread
#   target       whether the on-vs-off overhead is within 2 %, and whether the spread is small
#                enough to tell
#
# Cases that do not all pass are reported (the figures are then not comparable). Loopback only.
# It prints figures; it asserts nothing.
set -euo pipefail
CONCURRENCY="${1:-8}"
PAIRS="${2:-10}"
DELAY_MS=200
LAYER3_DELAYS="${LAYER3_DELAYS:-0}"
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

start_model() { # DELAY_MS: starts the demo model answering after DELAY_MS, sets MODEL_PID and
  # writes $WORK/config-DELAY_MS.yaml, whose provider `bench` is that model
  local delay="$1"
  "$BIN" demo-model --golden-set "$WORK/set.yaml" --delay-ms "$delay" --port 0 >"$WORK/model-$delay.url" 2>"$WORK/model-$delay.log" &
  MODEL_PID=$!
  PIDS+=("$MODEL_PID")
  local model_url
  model_url="$(wait_url "$WORK/model-$delay.url")"
  printf 'providers:\n  - {id: bench, api: openai, base_url: "%s/v1"}\n' "$model_url" >"$WORK/config-$delay.yaml"
}

bench() { # DELAY_MS
  local delay="$1" out="$WORK/out-$1"
  start_model "$delay"
  local model_pid="$MODEL_PID"
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

layer3_run() { # DELAY_MS LAYERS ROW: one timed run; appends "ROW WALL_NS RSS_KB EXIT OUT" to the delay's table
  local delay="$1" layers="$2" row="$3"
  local out="$WORK/l3-$delay/${row// /-}"
  local code=0 start end
  start="$(date +%s%N)"
  /usr/bin/time -f '%M' -o "$out.rss" "$BIN" run --server-url "$SERVER_URL" --layers "$layers" \
    --golden-set "$WORK/set.yaml" --model bench:scripted --concurrency "$CONCURRENCY" \
    --config "$WORK/config-$delay.yaml" --quiet --out "$out" >/dev/null 2>"$out.log" || code=$?
  end="$(date +%s%N)"
  local rss_kb
  rss_kb="$(tail -n1 "$out.rss" 2>/dev/null || true)"
  printf '%s %s %s %s %s\n' "$row" "$((end - start))" "${rss_kb:-0}" "$code" "$out" >>"$WORK/l3-$delay.txt"
}

layer3() { # DELAY_MS
  local delay="$1" pair
  mkdir -p "$WORK/l3-$delay"
  : >"$WORK/l3-$delay.txt"
  start_model "$delay"
  for ((pair = 0; pair < PAIRS; pair++)); do
    if ((pair % 2 == 0)); then
      layer3_run "$delay" 1,3 "$pair on"
      layer3_run "$delay" 1 "$pair off"
      layer3_run "$delay" 1 "$pair ctl-a"
      layer3_run "$delay" 1 "$pair ctl-b"
    else
      layer3_run "$delay" 1 "$pair off"
      layer3_run "$delay" 1,3 "$pair on"
      layer3_run "$delay" 1 "$pair ctl-b"
      layer3_run "$delay" 1 "$pair ctl-a"
    fi
  done
  kill -TERM "$MODEL_PID" 2>/dev/null || true
  python3 - "$WORK/l3-$delay.txt" "$delay" "$CONCURRENCY" "$PAIRS" <<'PY'
import json, statistics, sys
table, delay_ms, concurrency, pairs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
runs = {}  # (pair, arm) -> run; ctl-a is the numerator of a control pair, as on is of a pair
for line in open(table):
    pair, arm, wall_ns, rss_kb, code, out = line.split()
    run = {"wall_ms": int(wall_ns) / 1e6, "rss_mb": int(rss_kb) / 1024, "code": int(code), "arm": arm}
    try:
        report = json.load(open(f"{out}/report.json"))
    except (OSError, ValueError):
        report = None
    run["report"] = report
    runs[(int(pair), arm)] = run
codes = sorted({run["code"] for run in runs.values()})
missing = sum(1 for run in runs.values() if run["report"] is None)
calls, passed = {}, {}
telemetry_ok, telemetry_bad, telemetry_in_off = 0, [], 0
for (pair, arm), run in runs.items():
    report = run["report"]
    if report is None:
        continue
    n = report.get("model_calls", 0)
    calls.setdefault(n, []).append(f"{pair} {arm}")
    cases = report.get("evals", [])
    score = f"{sum(1 for case in cases if case.get('status') == 'pass')}/{len(cases)}"
    passed[score] = passed.get(score, 0) + 1
    section = report.get("telemetry")
    if arm == "on":
        if section and not section.get("not_run") and len(section.get("model_calls", [])) == n and 3 in report.get("layers", []):
            telemetry_ok += 1
        else:
            telemetry_bad.append(f"pair {pair}: " + ("no telemetry section" if not section else
                                 section.get("not_run") or f"{len(section.get('model_calls', []))} telemetry rows"))
    elif section is not None:
        telemetry_in_off += 1

def pct(ratio):
    return f"{(ratio - 1) * 100:+.1f} %"

def arm(*names):
    return [run for (_, a), run in runs.items() if a in names]

def ratios(num, den):
    return [runs[(p, num)]["wall_ms"] / runs[(p, den)]["wall_ms"] for p in range(pairs) if (p, num) in runs and (p, den) in runs]

print(f"layer 3 overhead, delay {delay_ms} ms, concurrency {concurrency}: {pairs} alternating pairs of --layers 1,3 (on)"
      f" and --layers 1 (off), {pairs} control pairs of --layers 1")
print(f"  {len(runs)} runs: exit {', '.join(map(str, codes))}" + (f", {missing} without report.json" if missing else "")
      + ", cases passed " + ", ".join(f"{score} in {count}" for score, count in sorted(passed.items())))
if len(calls) == 1:
    print(f"  model calls {next(iter(calls))} in every run")
else:
    print("  model calls DIFFER: " + "; ".join(f"{n} in {len(who)} ({', '.join(who[:6])}{' …' if len(who) > 6 else ''})"
                                                 for n, who in sorted(calls.items())))
on_runs = arm("on")
print(f"  telemetry: measured in {telemetry_ok}/{len(on_runs)} on reports (a row per model call)"
      + (f"; not in: {'; '.join(telemetry_bad)}" if telemetry_bad else "")
      + f"; present in {telemetry_in_off}/{len(arm('off', 'ctl-a', 'ctl-b'))} off reports")
med = lambda runs_, key: statistics.median(run[key] for run in runs_) if runs_ else float("nan")
print(f"  on  (--layers 1,3): median wall {med(on_runs, 'wall_ms'):.1f} ms, median peak RSS {med(on_runs, 'rss_mb'):.1f} MB")
print(f"  off (--layers 1):   median wall {med(arm('off'), 'wall_ms'):.1f} ms, median peak RSS {med(arm('off'), 'rss_mb'):.1f} MB;"
      f" control runs {med(arm('ctl-a', 'ctl-b'), 'wall_ms'):.1f} ms")
on_off, off_off = ratios("on", "off"), ratios("ctl-a", "ctl-b")
if not on_off or not off_off:
    print("  no complete pairs")
    sys.exit(0)
overhead, noise = statistics.median(on_off), statistics.median(off_off)
spread = statistics.median(abs(r - 1) for r in off_off)
print(f"  on vs off:  median of {len(on_off)} on/off ratios {pct(overhead)} (min {pct(min(on_off))}, max {pct(max(on_off))})")
print(f"  off vs off: median of {len(off_off)} off/off ratios {pct(noise)} (min {pct(min(off_off))}, max {pct(max(off_off))});"
      f" spread, median |off/off - 1| = {spread * 100:.1f} %")
verdict = "yes" if overhead - 1 <= 0.02 else "no"
print(f"  within 2 %: {verdict} ({pct(overhead)})"
      + ("" if spread <= 0.02 else f"; but the off-vs-off spread ({spread * 100:.1f} %) is above 2 %: this run cannot resolve the target"))
PY
}

if ((PAIRS > 0)); then
  for delay in $LAYER3_DELAYS; do layer3 "$delay"; done
fi
