#!/usr/bin/env bash
# Writes the seed corpora of the fuzz targets (fuzz/corpus/TARGET/seed-*) from our own demo
# server (HTTP and stdio, correct and with a few breaks), a demo evaluation's report.json, our
# demo golden set, price table and cassettes, and a few inputs written here. Never from a
# third-party server. Seeds are rewritten; inputs a fuzzer added (named by their hash) are kept.
#
#   scripts/fuzz-seeds.sh        # needs `cargo build` (target/debug/mcp-eval) and curl
#
# Inputs of the chunking targets (sse, http_response, stdio_stream) start with one byte that
# chooses the piece size (1 to 7 bytes): `\003` here, pieces of 4.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$ROOT/target/debug/mcp-eval"
CORPUS="$ROOT/fuzz/corpus"
[ -x "$BIN" ] || { echo "fuzz-seeds: build first (cargo build): $BIN is missing" >&2; exit 2; }
command -v curl >/dev/null || { echo "fuzz-seeds: curl is needed" >&2; exit 2; }
WORK="$(mktemp -d)"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

for target in http_response jsonrpc_message stdio_stream golden_set config_file report_json cassette fault_plan price_table; do
  mkdir -p "$CORPUS/$target"
  rm -f "$CORPUS/$target"/seed-*
done

META='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"fuzz-seeds","version":"0"}}'
# method | params without _meta | seed name | Mcp-Name header
REQUESTS=(
  "server/discover||discover|"
  "tools/list||tools-list|"
  "prompts/list||prompts-list|"
  "resources/list||resources-list|"
  "resources/templates/list||templates-list|"
  'tools/call|"name":"test_simple_text","arguments":{},|call-text|test_simple_text'
  'tools/call|"name":"test_structured","arguments":{},|call-structured|test_structured'
  'tools/call|"name":"test_logging_tool","arguments":{},|call-logging|test_logging_tool'
  'tools/call|"name":"no_such_tool","arguments":{},|call-unknown|no_such_tool'
  'prompts/get|"name":"test_prompt","arguments":{"topic":"seeds"},|prompt-get|test_prompt'
  'nope/nothing||unknown-method|'
)

body_of() {
  local method="$1" params="$2"
  printf '{"jsonrpc":"2.0","id":1,"method":"%s","params":{%s%s}}' "$method" "$params" "$META"
}

# One HTTP demo server per mode: its answers as the HTTP body seeds (and SSE ones when framed so).
http_seeds() {
  local mode="$1" tag="$2"
  local args=(demo-server --port 0)
  [ -n "$mode" ] && args+=(--break "$mode")
  "$BIN" "${args[@]}" > "$WORK/url-$tag" 2>/dev/null &
  PIDS+=($!)
  for _ in $(seq 50); do [ -s "$WORK/url-$tag" ] && break; sleep 0.1; done
  local url
  url="$(head -1 "$WORK/url-$tag")"
  for entry in "${REQUESTS[@]}"; do
    IFS='|' read -r method params name mcp_name <<<"$entry"
    local out="$WORK/body"
    local named=()
    [ -n "$mcp_name" ] && named=(-H "mcp-name: $mcp_name")
    curl -s -o "$out" -X POST "$url" \
      -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
      -H 'mcp-protocol-version: 2026-07-28' -H "mcp-method: $method" "${named[@]}" \
      --data-binary "$(body_of "$method" "$params")" || continue
    [ -s "$out" ] || continue
    { printf '\003'; cat "$out"; } > "$CORPUS/http_response/seed-$tag-$name"
    if head -c1 "$out" | grep -q "{"; then
      cp "$out" "$CORPUS/jsonrpc_message/seed-$tag-$name"
    fi
  done
}
http_seeds "" plain
http_seeds chaos-sse-multiline-data sse-multiline
http_seeds chaos-error-everything errors

# The stdio demo server: every request on stdin, what it writes on stdout as one stream.
stdio_seed() {
  local mode="$1" tag="$2"
  local args=(demo-server --stdio)
  [ -n "$mode" ] && args+=(--break "$mode")
  local id=1
  : > "$WORK/stdin"
  for entry in "${REQUESTS[@]}"; do
    IFS='|' read -r method params name _ <<<"$entry"
    body_of "$method" "$params" | sed "s/\"id\":1,/\"id\":$id,/" >> "$WORK/stdin"
    echo >> "$WORK/stdin"
    id=$((id % 3 + 1))
  done
  timeout 10 "$BIN" "${args[@]}" < "$WORK/stdin" > "$WORK/stdout" 2>/dev/null || true
  { printf '\003'; cat "$WORK/stdout"; } > "$CORPUS/stdio_stream/seed-$tag"
}
stdio_seed "" plain
stdio_seed x-1 x-1
# Framings a server gets wrong, written here: Content-Length, pretty, concatenated, BOM, CRLF.
ANSWER='{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[]}}'
printf '\003Content-Length: %d\r\n\r\n%s' "${#ANSWER}" "$ANSWER" > "$CORPUS/stdio_stream/seed-content-length"
printf '\003{\n  "jsonrpc": "2.0",\n  "id": 2,\n  "result": {}\n}\n' > "$CORPUS/stdio_stream/seed-pretty"
printf '\003%s{"jsonrpc":"2.0","id":3,"result":{}}\n' "$ANSWER" > "$CORPUS/stdio_stream/seed-concatenated"
printf '\003\xef\xbb\xbf%s\r\nstarting up...\n' "$ANSWER" > "$CORPUS/stdio_stream/seed-bom-crlf-log"

# report.json of a demo evaluation (layer 0 and the demo's layer 1 from its cassettes).
"$BIN" run --demo --layers 0,1 --out "$WORK/report" --quiet >/dev/null 2>&1 || true
[ -s "$WORK/report/report.json" ] && cp "$WORK/report/report.json" "$CORPUS/report_json/seed-demo-layers-0-1"
"$BIN" run --server-url http://127.0.0.1:9/mcp --out "$WORK/unreachable" --timeout-seconds 1 --quiet >/dev/null 2>&1 || true
[ -s "$WORK/unreachable/report.json" ] && cp "$WORK/unreachable/report.json" "$CORPUS/report_json/seed-unreachable"

# Our golden sets, price table and the small cassettes.
cp "$ROOT/golden/demo.yaml" "$CORPUS/golden_set/seed-demo"
cp "$ROOT/golden/calibration/demo-rubric-case.yaml" "$CORPUS/golden_set/seed-rubric-case"
cp "$ROOT/golden/demo-prices.yaml" "$CORPUS/price_table/seed-demo"
cp "$ROOT/golden/cassettes/demo_judge.json" "$CORPUS/cassette/seed-demo-judge"
cp "$ROOT/golden/cassettes/demo_embeddings.json" "$CORPUS/cassette/seed-demo-embeddings"

cat > "$CORPUS/golden_set/seed-layer2" <<'EOF'
version: 1
cases:
  - id: weather
    prompt: "What is the weather in Lisbon?"
    expect_tools: [get_forecast]
    args: {city: {match: fuzzy, value: Lisbon}}
    runs: 5
    threshold: soft
    faults: [http-500, timeout]
    adversarial: true
  - id: chit-chat
    prompt: "Say hello."
    forbid_tools: ["*"]
EOF
cat > "$CORPUS/config_file/seed-full" <<'EOF'
server:
  url: http://127.0.0.1:8080/mcp
  headers: {X-Team: evals}
  timeout_seconds: 30
layers: [0, 1, 3]
golden_set: golden/demo.yaml
models: [openai:gpt-4.1-mini]
runs: 5
concurrency: 4
providers:
  - {id: local, api: openai, base_url: http://127.0.0.1:11434/v1, api_key_env: LOCAL_KEY}
safe_tools: [{name: get_forecast}]
suppress: [{id: SEC-3, tool: send_email, reason: "reviewed"}]
gate: {min_pass_rate: 0.8}
otlp_endpoint: http://127.0.0.1:4318
EOF
printf 'server:\n  command: "python3 -m my_server"\n  env: [HOME]\n' > "$CORPUS/config_file/seed-stdio"
cat > "$CORPUS/fault_plan/seed-plan" <<'EOF'
- {cases: "*", tool: "*", fault: http-500, on_call: 1}
- {cases: "weather*", tool: get_forecast, fault: timeout, on_call: 2}
- {tool: search, fault: malformed}
EOF
printf '[]\n' > "$CORPUS/fault_plan/seed-empty-list"

# One seed per distinct content.
for target in http_response jsonrpc_message stdio_stream golden_set config_file report_json cassette fault_plan price_table; do
  find "$CORPUS/$target" -name 'seed-*' -print0 | sort -z | xargs -0 sha256sum | sort -s -k1,1 | awk 'seen[$1]++ { print $2 }' | xargs -r rm -f
  echo "fuzz-seeds: $target: $(find "$CORPUS/$target" -name 'seed-*' | wc -l) seed(s)"
done
