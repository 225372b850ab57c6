#!/usr/bin/env bash
# Soak under faults: 1,000 layer-1 trials against a server that fails a tenth of its tool calls
# and a model that answers a tenth of its requests with HTTP 429 or 500.
#
#   bench/soak.sh [TRIALS [CONCURRENCY]]     (defaults 1000 and 16)
#   SOAK_SEED=S SOAK_FAIL_RATE=R             the seed of the failures (default 26) and their share
#                                            (default 0.1)
#   BENCH_PROFILE=debug                      the debug binary instead of the release one
#
# Generates golden sets of TRIALS / 10 and TRIALS cases, one trial each, every case's prompt and
# tool arguments its own (`soak-0042`): in turn one call of `test_simple_text`, a strict sequence
# of `test_simple_text` then `test_header_param` in at most 3 model turns, one call of
# `test_header_param`, and a negative case. In the first two the demo model calls a tool that
# failed again (`--on-fault CASE:retry`): a retry that fits the turns, or, in the sequence, one
# that does not (the trial fails on `max_turns`), so the faults decide some verdicts. The failures are the demo fixtures' seeded draws (hidden `--fail-rate R --seed S` of
# `demo-server` and `demo-model`, src/demo/seeded.rs): keyed on what a request says (tool and
# arguments; first user turn and model turn) and its attempt, so with a prompt per trial they are
# keyed on (case, trial, call index) and the same under any concurrency. The server fails a call
# with an `isError` result or a JSON-RPC -32603 error; the model answers 429 (`Retry-After: 0`)
# or 500, which mcp-eval retries (4 attempts, backoff on 500). The server runs over stdio, a
# child of mcp-eval (`--server-cmd`), so its process is ours to account for; the demo model is
# started by this script, afresh for every run (its attempt counters start at zero).
#
# Three runs of `mcp-eval run --layers 1 --concurrency C --max-model-calls CAP`, CAP twice the
# model turns the plan needs without faults (retries add about a ninth): TRIALS / 10 trials, then
# TRIALS trials twice with the same seed. While each runs, its open file descriptors and child
# processes are sampled from /proc every 50 ms. Checks, and prints:
#
#   accounting   every trial in report.json: pass + fail + error = trials, each error with a
#                reason, none skipped, exit status 0 or 1 (a verdict: no call cap, no provider
#                failure), the call cap not reached
#   memory       peak RSS (/usr/bin/time) at TRIALS / 10 and at TRIALS trials
#   leaks        mcp-eval's open fds (peak, and at the last sample before it exits): the peak at
#                TRIALS within C of the peak at TRIALS / 10 (a leak of one per trial would add
#                hundreds); at most one child (the stdio server) at any sample; after exit, none
#                of the server processes it started is alive, and the demo model holds no
#                connection (its sockets back to the listener alone)
#   reproducible the per-case verdicts and per-trial outcomes (status, ending, cause, reason) of
#                the two TRIALS runs are equal (a diff of the first differences otherwise)
#
# Exits 1 when a check fails. Loopback only.
set -euo pipefail
TRIALS="${1:-1000}"
CONCURRENCY="${2:-16}"
SEED="${SOAK_SEED:-26}"
RATE="${SOAK_FAIL_RATE:-0.1}"
SMALL=$((TRIALS / 10))
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FAILED=0

gen_set() { # CASES FILE: writes the soak's golden set, and FILE.on-fault (the demo model's
  # --on-fault flags, one a line); prints the model turns it needs without faults
  python3 - "$1" "$2" <<'PY'
import json, sys
n, path = int(sys.argv[1]), sys.argv[2]
turns = 0
retry = []  # cases whose model calls a failed tool again
with open(path, "w") as out:
    out.write("version: 1\ndefaults:\n  runs: 1\n  kind: hard\n  max_turns: 4\ncases:\n")
    for i in range(n):
        tag = f"soak-{i:04d}"
        shape = i % 4
        if shape == 0:
            case = {"id": tag, "prompt": f"Case {tag}: echo the word {tag} with the text tool.",
                    "expect_tool": "test_simple_text", "expect_args": {"text": {"match": "exact", "value": tag}}}
            turns += 2
            retry.append(tag)
        elif shape == 1:
            case = {"id": tag, "prompt": f"Case {tag}: echo {tag}-a, then send the region {tag}-b.", "max_turns": 3,
                    "expect_sequence": {"order": "strict", "steps": [
                        {"tool": "test_simple_text", "args": {"text": {"match": "exact", "value": f"{tag}-a"}}},
                        {"tool": "test_header_param", "args": {"region": {"match": "exact", "value": f"{tag}-b"}}}]}}
            turns += 3
            retry.append(tag)
        elif shape == 2:
            case = {"id": tag, "prompt": f"Case {tag}: my region is {tag}; echo it back.",
                    "expect_tool": "test_header_param", "expect_args": {"region": {"match": "exact", "value": tag}}}
            turns += 2
        else:
            case = {"id": tag, "prompt": f"Case {tag}: thanks, that was all.", "negative": True}
            turns += 1
        out.write(f"  - {json.dumps(case)}\n")  # JSON is YAML: one flow mapping per case
with open(f"{path}.on-fault", "w") as out:
    out.writelines(f"--on-fault\n{tag}:retry\n" for tag in retry)
print(turns)
PY
}

sample() { # PID FILE: every 50 ms until PID exits, a line "FDS CHILDREN PIDS..." of its state
  local pid="$1" file="$2"
  : >"$file"
  while [ -d "/proc/$pid" ]; do
    local fds children
    fds="$(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)" || fds=0
    children="$(cat "/proc/$pid"/task/*/children 2>/dev/null | tr '\n' ' ' || true)"
    [ -d "/proc/$pid" ] && printf '%s %s\n' "$fds" "$children" >>"$file"
    sleep 0.05
  done
}

sockets() { # PID: the sockets PID holds open
  find "/proc/$1/fd" -mindepth 1 -maxdepth 1 -lname 'socket:*' 2>/dev/null | wc -l
}

soak_run() { # NAME CASES: one run of a fresh demo model; leaves $WORK/NAME/{report.json,time,samples,...}
  local name="$1" cases="$2" dir="$WORK/$1"
  mkdir -p "$dir"
  local turns
  turns="$(gen_set "$cases" "$dir/set.yaml")"
  local cap=$((turns * 2))
  local on_fault
  mapfile -t on_fault <"$dir/set.yaml.on-fault"
  "$BIN" demo-model --golden-set "$dir/set.yaml" --delay-ms 0 --fail-rate "$RATE" --seed "$SEED" --port 0 "${on_fault[@]}" \
    >"$dir/model.url" 2>"$dir/model.log" &
  local model_pid=$!
  PIDS+=("$model_pid")
  local model_url
  model_url="$(wait_url "$dir/model.url")"
  printf 'providers:\n  - {id: soak, api: openai, base_url: "%s/v1"}\n' "$model_url" >"$dir/config.yaml"
  local idle
  idle="$(sockets "$model_pid")"
  local code=0 start end
  start="$(date +%s%N)"
  /usr/bin/time -f '%e %M' -o "$dir/time" "$BIN" run \
    --server-cmd "$BIN demo-server --stdio --fail-rate $RATE --seed $SEED" --layers 1 \
    --golden-set "$dir/set.yaml" --model soak:scripted --concurrency "$CONCURRENCY" --max-model-calls "$cap" \
    --config "$dir/config.yaml" --quiet --out "$dir/out" >/dev/null 2>"$dir/run.log" &
  local time_pid=$!
  local run_pid=""
  : >"$dir/samples"
  for _ in $(seq 200); do
    run_pid="$(cat "/proc/$time_pid/task/$time_pid/children" 2>/dev/null | awk '{print $1}')" || true
    [ -n "$run_pid" ] && break
    sleep 0.01
  done
  [ -n "$run_pid" ] && sample "$run_pid" "$dir/samples"
  wait "$time_pid" || code=$?
  end="$(date +%s%N)"
  # The model's connections close once mcp-eval has gone (give it a moment).
  local held
  for _ in $(seq 40); do
    held="$(sockets "$model_pid")"
    [ "$held" -le "$idle" ] && break
    sleep 0.05
  done
  kill -TERM "$model_pid" 2>/dev/null || true
  wait "$model_pid" 2>/dev/null || true
  # Every server process mcp-eval started is gone.
  local alive=0 pid
  for pid in $(cut -d' ' -f2- "$dir/samples" 2>/dev/null | tr ' ' '\n' | sort -u); do
    [ -n "$pid" ] && [ -d "/proc/$pid" ] && alive=$((alive + 1))
  done
  printf '%s %s %s %s %s %s %s\n' "$code" "$(((end - start) / 1000000))" "$cap" "$turns" "$idle" "$held" "$alive" \
    >"$dir/facts"
}

printf 'mcp-eval %s (%s build), %s CPU(s); seed %s, fail rate %s, concurrency %s\n' \
  "$("$BIN" --version | awk '{print $2}')" "$PROFILE" "$(nproc)" "$SEED" "$RATE" "$CONCURRENCY"
soak_run small "$SMALL"
soak_run first "$TRIALS"
soak_run second "$TRIALS"

python3 - "$WORK" "$SMALL" "$TRIALS" "$CONCURRENCY" <<'PY' || FAILED=1
import json, sys
work, small, trials, concurrency = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
failed = False

def check(ok, what):
    global failed
    print(f"  {'ok  ' if ok else 'FAIL'}  {what}")
    failed |= not ok

def load(name):
    code, wall_ms, cap, turns, idle, held, alive = open(f"{work}/{name}/facts").read().split()
    wall_s, rss_kb = open(f"{work}/{name}/time").read().split()[-2:]
    try:
        report = json.load(open(f"{work}/{name}/out/report.json"))
    except (OSError, ValueError):
        report = None
    samples = [line.split() for line in open(f"{work}/{name}/samples") if line.strip()]
    return {"code": int(code), "wall_ms": int(wall_ms), "cap": int(cap), "turns": int(turns), "idle": int(idle),
            "held": int(held), "alive": int(alive), "rss_mb": int(rss_kb) / 1024, "report": report,
            "fds": [int(s[0]) for s in samples], "children": [s[1:] for s in samples]}

def outcomes(report):
    cases, trials = {}, {}
    for case in (report or {}).get("evals", []):
        cases[case["case"]] = (case.get("status"), case.get("passed"), case.get("completed"))
        for trace in case.get("traces", []):
            trials[(case["case"], trace.get("run"))] = (trace.get("status"), trace.get("ending"), trace.get("cause"),
                                                       trace.get("reason"))
    return cases, trials

runs = {name: load(name) for name in ("small", "first", "second")}
for name, expected in (("small", small), ("first", trials), ("second", trials)):
    run = runs[name]
    report = run["report"]
    print(f"{name}: {expected} trials, exit {run['code']}, wall {run['wall_ms'] / 1000:.1f} s, peak RSS {run['rss_mb']:.1f} MB,"
          f" model calls {report.get('model_calls') if report else '-'} (cap {run['cap']}, {run['turns']} turns without faults)")
    if report is None:
        check(False, "report.json written")
        continue
    cases, by_trial = outcomes(report)
    counts = {}
    for status, ending, cause, reason in by_trial.values():
        counts[status] = counts.get(status, 0) + 1
    no_reason = sum(1 for status, _, _, reason in by_trial.values() if status == "error" and not reason)
    endings = {}
    for status, ending, cause, _ in by_trial.values():
        if status != "pass":
            key = f"{status}/{ending}" + (f"/{cause}" if cause else "")
            endings[key] = endings.get(key, 0) + 1
    calls = [call for case in report.get("evals", []) for trace in case.get("traces", []) for call in trace.get("calls", [])]
    tool_errors = sum(1 for call in calls if call.get("is_error"))
    turns = sum(trace.get("turns", 0) for case in report.get("evals", []) for trace in case.get("traces", []))
    print(f"  trials: {counts.get('pass', 0)} pass, {counts.get('fail', 0)} fail, {counts.get('error', 0)} error,"
          f" {counts.get('skipped', 0)} skipped; not passing by ending: "
          + (", ".join(f"{key} {n}" for key, n in sorted(endings.items())) or "none")
          + f"; tool calls failed {tool_errors} of {len(calls)}; model calls beyond the {turns} turns taken (retries)"
            f" {report.get('model_calls', 0) - turns}")
    total = counts.get("pass", 0) + counts.get("fail", 0) + counts.get("error", 0)
    check(len(cases) == expected and total == expected and len(by_trial) == expected,
          f"every trial accounted for: {len(cases)} cases, pass + fail + error = {total} of {expected}")
    check(no_reason == 0 and counts.get("skipped", 0) == 0, f"no skipped trial, every error with a reason ({no_reason} without)")
    check(run["code"] in (0, 1) and not report.get("call_cap_reached"), f"a verdict (exit {run['code']}), the call cap not reached")
    peak_children = max((len(c) for c in run["children"]), default=0)
    print(f"  fds: peak {max(run['fds'], default=0)}, last sample {run['fds'][-1] if run['fds'] else '-'}"
          f" ({len(run['fds'])} samples); children: peak {peak_children}, last sample"
          f" {len(run['children'][-1]) if run['children'] else '-'}; after exit: {run['alive']} server process(es) alive,"
          f" demo model sockets {run['held']} (idle {run['idle']})")
    check(len(run["fds"]) > 0 and peak_children <= 1, "at most one child at any sample (the stdio server)")
    check(run["alive"] == 0 and run["held"] <= run["idle"], "no process and no connection left after exit")

small_fds, big_fds = max(runs["small"]["fds"], default=0), max(runs["first"]["fds"], default=0)
print(f"peak RSS: {runs['small']['rss_mb']:.1f} MB at {small} trials, {runs['first']['rss_mb']:.1f} MB at {trials}"
      f" (second run {runs['second']['rss_mb']:.1f} MB)")
check(big_fds <= small_fds + concurrency, f"peak fds at {trials} trials ({big_fds}) within {concurrency} of {small} trials' ({small_fds})")
first, second = outcomes(runs["first"]["report"]), outcomes(runs["second"]["report"])
differ = [key for key in sorted(set(first[1]) | set(second[1]), key=str) if first[1].get(key) != second[1].get(key)]
cases_differ = [key for key in sorted(set(first[0]) | set(second[0])) if first[0].get(key) != second[0].get(key)]
check(not differ and not cases_differ and first[1],
      f"the same seed, the same verdicts: {len(first[0])} cases and {len(first[1])} trials compared,"
      f" {len(cases_differ)} case verdicts and {len(differ)} trial outcomes differ")
for key in differ[:5]:
    print(f"    {key}: {first[1].get(key)} then {second[1].get(key)}")
sys.exit(1 if failed else 0)
PY
if [ "$FAILED" != 0 ]; then
  echo "soak: FAILED"
  exit 1
fi
echo "soak: every check passed"
