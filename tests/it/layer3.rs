//! Layer 3 end to end through the binary: layer 1's golden set, run once per case by the demo
//! model (`mcp-eval demo-model`) against the demo server with `chaos-slow-tools` (every
//! `tools/call` result sent a known delay late), over HTTP and over stdio. report.json's
//! `telemetry.tools` must show each tool's latency at least that delay; without the break the
//! same figures must be there. No figure has an upper bound: nothing here is timed, so a slow
//! machine cannot fail it. Every exchange stays on 127.0.0.1.

use serde_json::{Value, json};

use crate::layer1::{DemoModel, OPENAI_CANARY, SET, run_layer1, utf8, write_set};
use crate::support::{DemoServer, Run, demo_stdio_command};

/// The delay `chaos-slow-tools` adds to every `tools/call` result, in milliseconds (the demo
/// server's `SLOW_TOOLS_DELAY`; its break description states it).
const SLOW_TOOLS_DELAY_MS: u64 = 200;

/// The tools the demo model calls for [`SET`] (its negative case calls none).
const CALLED_TOOLS: [&str; 4] = ["test_header_param", "test_progress", "test_simple_text", "test_structured"];

/// The start of the layer-3 table of tool latencies in summary.md.
const LATENCY_TABLE_HEADER: &str = "| Tool | Calls | p50 | p95 | Max |";

/// Runs [`SET`] with one trial per case through the demo model, layers 1 and 3, against the
/// server `server` names (`--server-url URL` or `--server-cmd CMD`); the run must pass.
fn run_set(server: [&str; 2]) -> Run {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), SET);
    let model = DemoModel::start(&set, &[]);
    let mut args = server.to_vec();
    args.extend_from_slice(&["--golden-set", utf8(&set), "--model", "openai:demo", "--runs", "1", "--layers", "1,3"]);
    let run = run_layer1(&args, &[("OPENAI_BASE_URL", &model.openai_url()), ("OPENAI_API_KEY", OPENAI_CANARY)]);
    assert_eq!(run.code(), 0, "{}", run.stderr());
    assert_eq!(run.report()["layers"], json!([1, 3]));
    let summary = run.file("summary.md");
    assert!(summary.contains("Layer 3 — latency, tokens and cost"), "{summary}");
    assert!(summary.contains(LATENCY_TABLE_HEADER), "no latency table in {summary}");
    run
}

/// `(tool, p50_ms, p95_ms, max_ms)` of every `telemetry.tools` row with samples, after checking
/// that every tool the set calls has such a row and that no call failed on the way.
fn latencies(run: &Run) -> Vec<(String, u64, u64, u64)> {
    let report = run.report();
    let rows = report["telemetry"]["tools"].as_array().unwrap_or_else(|| panic!("no telemetry.tools in {report}"));
    let count = |row: &Value| row["latency"]["count"].as_u64().unwrap_or_else(|| panic!("no latency count: {row}"));
    for tool in CALLED_TOOLS {
        let row = rows.iter().find(|row| row["tool"] == tool).unwrap_or_else(|| panic!("no row of {tool}: {report}"));
        assert!(count(row) > 0, "{tool} was called but not measured: {row}");
    }
    rows.iter()
        .filter(|row| count(row) > 0)
        .map(|row| {
            assert_eq!(row["transport_errors"], 0, "{row}");
            let figure = |name: &str| row["latency"][name].as_u64().unwrap_or_else(|| panic!("no {name}: {row}"));
            let tool = row["tool"].as_str().expect("a tool name").to_owned();
            (tool, figure("p50_ms"), figure("p95_ms"), figure("max_ms"))
        })
        .collect()
}

/// Every figure of every measured tool is at least the server's delay.
fn assert_at_least_the_delay(run: &Run) {
    for (tool, p50, p95, max) in latencies(run) {
        for (name, figure) in [("p50", p50), ("p95", p95), ("max", max)] {
            assert!(
                figure >= SLOW_TOOLS_DELAY_MS,
                "{tool}: {name} {figure} ms < the server's {SLOW_TOOLS_DELAY_MS} ms"
            );
        }
    }
}

#[test]
fn each_tool_latency_over_http_is_at_least_the_servers_delay() {
    let server = DemoServer::start(&["chaos-slow-tools"]);
    let run = run_set(["--server-url", &server.url]);
    assert_eq!(run.report()["server"]["transport"], "http");
    assert_at_least_the_delay(&run);
}

#[test]
fn each_tool_latency_over_stdio_is_at_least_the_servers_delay() {
    let run = run_set(["--server-cmd", &demo_stdio_command(&["chaos-slow-tools"])]);
    assert_eq!(run.report()["server"]["transport"], "stdio");
    assert_at_least_the_delay(&run);
}

#[test]
fn without_a_delay_every_called_tool_still_has_its_latency_figures() {
    let server = DemoServer::start(&[]);
    let run = run_set(["--server-url", &server.url]);
    let measured = latencies(&run);
    assert!(measured.len() >= CALLED_TOOLS.len(), "{measured:?}");
}
