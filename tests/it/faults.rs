//! The fault matrix: every check is shown to FAIL (MUST) or WARN (SHOULD/INFO) on a demo server
//! with exactly the one fault that breaks its rule (`mcp-eval demo-server --fault ID`), and the
//! un-faulted demo passes every check (see `cli.rs` for HTTP and stdio).
//!
//! Every requirement fault of `src/demo/faults.rs` is a row below, over HTTP, stdio or both.
//! Checks without a row:
//! - D-5, R-5 and B-4 are INFO rows about what the harness can do with the server (its version is
//!   listed, the retry round trip works, the server is dual-era); no fault of a single rule breaks
//!   them on their own (D-5 fails with D-1, R-5 with, B-4 needs a dual-era server).
//! - V-2 (a retry with a supported version succeeds), S-5 (list_changed is delivered) and K-1..K-4
//!   (tasks) have no demo fault: the demo does not implement the tasks extension, so those rows
//!   are `not_applicable` on it. The `a-*` faults make the demo require a bearer token, and their
//!   rows pass that token with `--header`.
//! - H-6 (header names are case-insensitive) and H-10 (surrounding whitespace is trimmed) are
//!   broken by faults that read the raw request head before hyper normalises it.

use std::sync::Mutex;
use std::time::Instant;

use crate::support::{DemoServer, demo_stdio_command, run};

/// The transport a row is run over.
#[derive(Clone, Copy, Debug)]
enum Transport {
    Http,
    Stdio,
}

use Transport::{Http, Stdio};

/// `(fault id, transport, expected status of the check with that id, text the message contains)`.
/// An empty text means the message is only required to be non-empty.
const MATRIX: &[(&str, Transport, &str, &str)] = &[
    // Discovery.
    ("d-1", Http, "fail", "server/discover"),
    ("d-1", Stdio, "fail", "server/discover"),
    ("d-2", Http, "fail", "ttlMs"),
    ("d-3", Http, "warn", "serverInfo"),
    ("d-4", Http, "fail", "completion/complete"),
    ("d-6", Http, "fail", "101"),
    // Per-request metadata and envelope.
    ("m-1", Http, "fail", "params: {}"),
    ("m-2", Http, "fail", "protocolVersion"),
    ("m-3", Http, "fail", "clientCapabilities"),
    ("m-4", Http, "fail", "clientInfo"),
    ("m-5", Http, "fail", "elicitation"),
    ("m-6", Http, "fail", "null"),
    ("m-6", Stdio, "fail", "do not echo"),
    ("m-7", Http, "fail", "resultType"),
    ("m-8", Http, "fail", "-32003"),
    ("m-9", Http, "warn", "traceparent"),
    ("m-10", Http, "fail", "src"),
    ("m-11", Http, "fail", "\"1\""),
    ("m-11", Stdio, "fail", "do not echo"),
    ("m-12", Http, "fail", "id-漢字-🙂"),
    ("m-12", Stdio, "fail", "id-漢字-🙂"),
    ("m-13", Http, "warn", "vendor"),
    // Versions.
    ("v-1", Http, "fail", "-32022"),
    ("v-1", Stdio, "fail", "-32022"),
    ("b-3", Http, "warn", "initialize"),
    // Streamable HTTP.
    ("h-1", Http, "fail", "2099-01-01"),
    ("h-2", Http, "fail", "MCP-Protocol-Version"),
    ("h-3", Http, "fail", "without `Mcp-Method`"),
    ("h-4", Http, "fail", "prompts/list"),
    ("h-5", Http, "fail", "TOOLS/LIST"),
    ("h-6", Http, "fail", "upper-case header names"),
    ("h-7", Http, "fail", "mismatched `Mcp-Name`"),
    ("h-8", Http, "fail", "without `Mcp-Name`"),
    ("h-9", Http, "fail", "base64"),
    ("h-10", Http, "fail", "surrounding whitespace"),
    ("h-11", Http, "fail", "Mcp-Param-Region"),
    ("h-12", Http, "fail", "x-mcp-header"),
    ("h-13", Http, "fail", "404"),
    ("h-14", Http, "fail", "text/plain"),
    ("h-15", Http, "fail", "JSON-RPC request"),
    ("h-16", Http, "warn", "stayed open"),
    ("h-17", Http, "warn", "X-Accel-Buffering"),
    ("h-18", Http, "warn", "405"),
    ("h-19", Http, "warn", "Mcp-Session-Id"),
    ("h-20", Http, "warn", "Last-Event-ID"),
    ("h-21", Http, "fail", "403"),
    ("h-22", Http, "fail", "202"),
    ("h-23", Http, "warn", "503"),
    ("h-24", Http, "warn", "batch"),
    ("h-25", Http, "fail", "base64"),
    ("h-26", Http, "warn", "Host"),
    // Error codes.
    ("e-1", Http, "fail", "-32602"),
    ("e-1", Stdio, "fail", "-32602"),
    ("e-2", Http, "fail", "requiredCapabilities"),
    ("e-3", Http, "warn", "isError"),
    ("e-4", Http, "warn", "unknown prompt"),
    ("e-5", Http, "warn", "cursor"),
    ("e-6", Http, "warn", "logLevel"),
    ("e-7", Http, "fail", "invalid envelope"),
    ("e-8", Http, "warn", "unparsable"),
    ("e-9", Http, "warn", "-32603"),
    // Results and multi round-trip requests.
    ("r-1", Http, "fail", "completed"),
    ("r-2", Http, "fail", "completion/complete"),
    ("r-3", Http, "fail", "inputRequests"),
    ("r-4", Http, "fail", "did not declare"),
    ("r-6", Http, "fail", "tampered"),
    ("r-6", Stdio, "fail", "tampered"),
    ("r-7", Http, "warn", "missing input responses"),
    ("r-8", Http, "warn", "extra input"),
    ("r-9", Http, "warn", "caching hints"),
    ("r-10", Http, "warn", "malformed"),
    // Caching.
    ("c-1", Http, "fail", "prompts/list"),
    ("c-2", Http, "fail", "60000.5"),
    ("c-3", Http, "fail", "shared"),
    ("c-4", Http, "fail", "cacheScope"),
    // Lists, pagination, tools.
    ("p-1", Http, "warn", "order"),
    ("p-2", Http, "fail", "nextCursor"),
    ("p-3", Http, "fail", ""),
    ("p-3", Stdio, "fail", "changed the tool set"),
    ("p-4", Http, "fail", "base64"),
    ("p-5", Http, "fail", "system"),
    ("p-6", Http, "fail", "name"),
    ("t-1", Http, "fail", "type"),
    ("t-2", Http, "fail", "minimum"),
    ("t-3", Http, "warn", "example.invalid"),
    ("t-4", Http, "warn", "deeper than 32"),
    ("t-5", Http, "fail", "outputSchema"),
    ("t-6", Http, "warn", "TextContent"),
    ("t-7", Http, "fail", "type"),
    ("t-7", Stdio, "fail", "type"),
    ("t-8", Http, "warn", "test simple/text!"),
    ("t-9", Http, "fail", "readOnlyHint"),
    // Subscriptions.
    ("s-1", Http, "fail", "subset"),
    ("s-2", Http, "fail", "subscription id"),
    ("s-2", Stdio, "fail", "subscriptionId"),
    ("s-3", Http, "fail", "prompts/list_changed"),
    ("s-4", Http, "fail", "listen stream"),
    ("s-6", Http, "warn", "without first sending"),
    // Logging and progress.
    ("l-1", Http, "fail", "notifications/message"),
    ("l-1", Stdio, "fail", "notifications/message"),
    ("l-2", Http, "fail", "debug"),
    ("l-3", Http, "fail", "strictly increase"),
    ("l-3", Stdio, "fail", "strictly increase"),
    // stdio.
    ("x-1", Stdio, "fail", "not JSON-RPC"),
    ("x-2", Stdio, "fail", "requests"),
    ("x-3", Stdio, "fail", "cancelled"),
    ("x-4", Stdio, "warn", "stdin"),
    ("x-5", Stdio, "fail", "ping"),
    ("x-6", Stdio, "warn", "foo/bar"),
    ("x-7", Stdio, "fail", "replied"),
    // Authorization (the demo requires a bearer token when an `a-*` fault is on).
    ("a-1", Http, "fail", "resource_metadata"),
    ("a-2", Http, "fail", "authorization_servers"),
    ("a-3", Http, "fail", "invalid bearer token"),
    ("a-4", Http, "warn", "query string"),
];

/// How many rows run at once.
const PARALLEL: usize = 8;

/// Runs one row; `Err` describes the mismatch.
fn check_row(fault: &str, transport: Transport, expected: &str, text: &str) -> Result<(), String> {
    let id = fault.to_uppercase();
    // Where the fault makes responses unmatchable (ids not echoed on stdio), every request waits
    // for its timeout: a short one keeps the row quick.
    let timeout = if matches!((fault, transport), ("m-6" | "m-11", Stdio)) { "1" } else { "5" };
    let _server;
    let outcome = match transport {
        Http => {
            _server = DemoServer::start(&[fault]);
            let credentials = format!("Authorization: Bearer {}", mcp_eval::DEMO_TOKEN);
            if fault.starts_with("a-") {
                run(&["--server-url", &_server.url, "--timeout-seconds", timeout, "--header", &credentials])
            } else {
                run(&["--server-url", &_server.url, "--timeout-seconds", timeout])
            }
        }
        Stdio => run(&["--server-cmd", &demo_stdio_command(&[fault]), "--timeout-seconds", timeout]),
    };
    let Some(report) = &outcome.report else {
        return Err(format!("no report.json (exit {}); stderr: {}", outcome.code(), outcome.stderr()));
    };
    let check = report["checks"].as_array().and_then(|checks| checks.iter().find(|check| check["id"] == id.as_str()));
    let Some(check) = check else { return Err(format!("no check {id} in the report")) };
    let status = check["status"].as_str().unwrap_or_default();
    let message = check["message"].as_str().unwrap_or_default();
    let mut problems = Vec::new();
    if status != expected {
        problems.push(format!("{id} is {status}, expected {expected}"));
    }
    if message.is_empty() || !message.contains(text) {
        problems.push(format!("the message does not mention {text:?}"));
    }
    // A broken MUST fails the run (warn rows may fail other checks too: refusing concurrent
    // requests or exiting after an error breaks more than one rule).
    if expected == "fail" && outcome.code() != 1 {
        problems.push(format!("exit {} (a MUST failure exits 1)", outcome.code()));
    }
    if problems.is_empty() { Ok(()) } else { Err(format!("{}; message: {message}", problems.join("; "))) }
}

#[test]
#[allow(clippy::print_stderr, reason = "the wall time of the matrix is part of the test's output")]
fn every_fault_is_detected_by_its_check() {
    let started = Instant::now();
    let next = Mutex::new(0_usize);
    let mismatches = Mutex::new(Vec::new());
    let durations = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..PARALLEL {
            scope.spawn(|| {
                loop {
                    let index = {
                        let mut next = next.lock().expect("lock");
                        let index = *next;
                        *next += 1;
                        index
                    };
                    let Some(&(fault, transport, expected, text)) = MATRIX.get(index) else { break };
                    let row_started = Instant::now();
                    let checked = check_row(fault, transport, expected, text);
                    durations.lock().expect("lock").push((row_started.elapsed().as_secs_f64(), fault, transport));
                    if let Err(problem) = checked {
                        mismatches.lock().expect("lock").push(format!("{fault} over {transport:?}: {problem}"));
                    }
                }
            });
        }
    });
    let mut mismatches = mismatches.into_inner().expect("lock");
    mismatches.sort();
    let mut durations = durations.into_inner().expect("lock");
    durations.sort_by(|a, b| b.0.total_cmp(&a.0));
    let slowest: Vec<String> = durations
        .iter()
        .take(8)
        .map(|(seconds, fault, transport)| format!("{fault}/{transport:?} {seconds:.1} s"))
        .collect();
    eprintln!(
        "fault matrix: {} rows in {:.1} s; slowest: {}",
        MATRIX.len(),
        started.elapsed().as_secs_f64(),
        slowest.join(", ")
    );
    assert!(mismatches.is_empty(), "{} mismatching rows:\n{}", mismatches.len(), mismatches.join("\n"));
}

/// Every requirement fault of the demo server is a row of the matrix.
#[test]
fn the_matrix_covers_every_requirement_fault() {
    let output = std::process::Command::new(crate::support::binary())
        .args(["demo-server", "--fault", "no-such-fault"])
        .output()
        .expect("run the demo server");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let list = stderr.split("valid faults: ").nth(1).expect("the error lists the valid faults");
    let list = list.split(')').next().unwrap_or_default();
    let missing: Vec<&str> = list
        .split(", ")
        .map(str::trim)
        .filter(|fault| !fault.starts_with("chaos-"))
        .filter(|fault| !MATRIX.iter().any(|(row, ..)| row == fault))
        .collect();
    assert!(missing.is_empty(), "faults without a row: {missing:?}");
}
