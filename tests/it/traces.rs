//! Layer 3's trace context end to end: the binary sends a W3C `traceparent` with every
//! `tools/call` of layers 1 and 2 and exports its spans over OTLP/HTTP to a real receiver
//! (`scripts/otlp_receiver.py`, which decodes them with the OpenTelemetry project's own protobuf
//! messages from PyPI, installed by `scripts/install-action-tools.sh`). The demo server's calls
//! log says what the server received; the receiver's file says what was exported; the two must
//! join. Every exchange stays on 127.0.0.1.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::layer1::{DemoModel, OPENAI_CANARY, SET, run_layer1, utf8, write_set};
use crate::support::{DemoServer, Run, repo_root, run_with_env};

/// A header value of the export that must reach the receiver and nothing else.
const HEADER_CANARY: &str = "otlp-canary-4f1d";

/// The OTLP receiver, a child process; killed on drop.
struct Receiver {
    child: Child,
    /// Its base URL (`http://127.0.0.1:PORT`).
    url: String,
    /// The JSON lines it writes.
    out: PathBuf,
    _dir: tempfile::TempDir,
}

impl Receiver {
    /// Starts `scripts/otlp_receiver.py` with `args` and waits for its URL.
    fn start(args: &[&str]) -> Self {
        let python = repo_root().join(".interop/lint-venv/bin/python");
        assert!(
            python.exists(),
            "opentelemetry-proto is not installed: run `scripts/install-action-tools.sh` (scripts/test.sh runs it); expected {}",
            python.display()
        );
        let dir = tempfile::tempdir().expect("temp dir");
        let out = dir.path().join("spans.jsonl");
        let mut child = Command::new(python)
            .arg(repo_root().join("scripts/otlp_receiver.py"))
            .args(["--out", utf8(&out)])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the OTLP receiver");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("its URL");
        let url = line.trim().to_owned();
        assert!(url.starts_with("http://127.0.0.1:"), "unexpected receiver output: {url:?}");
        Self { child, url, out, _dir: dir }
    }

    /// Every line it wrote: requests and spans.
    fn lines(&self) -> Vec<Value> {
        read_lines(&self.out)
    }

    /// The spans it received.
    fn spans(&self) -> Vec<Value> {
        self.lines().into_iter().filter(|line| line.get("span_id").is_some()).collect()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|error| panic!("{error}: {line}")))
        .collect()
}

/// `(trace id, parent span id)` of a `traceparent`, after checking its W3C shape.
fn parts(traceparent: &str) -> (String, String) {
    let fields: Vec<&str> = traceparent.split('-').collect();
    assert_eq!(fields.len(), 4, "{traceparent}");
    assert_eq!((fields[0], fields[1].len(), fields[2].len(), fields[3]), ("00", 32, 16, "01"), "{traceparent}");
    (fields[1].to_owned(), fields[2].to_owned())
}

/// Runs [`SET`] once per case through the demo model against `server`, layers `layers`, with
/// `extra` flags and variables.
fn run_set(server: &DemoServer, layers: &str, extra: &[&str], vars: &[(&str, &str)]) -> Run {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), SET);
    let model = DemoModel::start(&set, &[]);
    let mut args = vec!["--server-url", &server.url, "--golden-set", utf8(&set), "--model", "openai:demo"];
    args.extend_from_slice(&["--runs", "2", "--layers", layers]);
    args.extend_from_slice(extra);
    let openai = model.openai_url();
    let mut all = vec![("OPENAI_BASE_URL", openai.as_str()), ("OPENAI_API_KEY", OPENAI_CANARY)];
    all.extend_from_slice(vars);
    run_layer1(&args, &all)
}

#[test]
fn every_tool_call_the_server_saw_is_an_exported_span_of_its_trials_trace() {
    let receiver = Receiver::start(&[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let calls = dir.path().join("calls.jsonl");
    let server = DemoServer::start_with(&["--calls-log", utf8(&calls)]);
    let headers = format!("x-api-key={HEADER_CANARY}");
    let extra = [
        "--otlp-endpoint",
        receiver.url.as_str(),
        "--otlp-headers",
        headers.as_str(),
        "--trace-state",
        "vendor=abc123",
        "--baggage",
        "team=payments,env=ci",
    ];
    let run = run_set(&server, "1,3", &extra, &[]);
    assert_eq!(run.code(), 0, "{}", run.stderr());

    // What the server received: every call carried the trace context.
    let seen = read_lines(&calls);
    assert!(!seen.is_empty(), "the set calls tools");
    let mut seen_parents = BTreeSet::new();
    for call in &seen {
        let traceparent = call["traceparent"].as_str().unwrap_or_else(|| panic!("no traceparent: {call}"));
        seen_parents.insert(parts(traceparent));
        assert_eq!(
            (call["tracestate"].as_str(), call["baggage"].as_str()),
            (Some("vendor=abc123"), Some("team=payments,env=ci"))
        );
    }
    assert_eq!(seen_parents.len(), seen.len(), "each call is a span of its own");

    // What was exported, decoded by the receiver.
    let spans = receiver.spans();
    let by_id: BTreeMap<(String, String), &Value> = spans
        .iter()
        .map(|span| {
            ((span["trace_id"].as_str().unwrap().to_owned(), span["span_id"].as_str().unwrap().to_owned()), span)
        })
        .collect();
    assert_eq!(by_id.len(), spans.len(), "span ids are unique");
    let tool_spans: BTreeSet<(String, String)> = by_id
        .iter()
        .filter(|(_, span)| span["name"].as_str().is_some_and(|name| name.starts_with("tools/call ")))
        .map(|(key, _)| key.clone())
        .collect();
    assert_eq!(tool_spans, seen_parents, "the server's parents are exactly the exported tool-call spans");
    for (trace, parent) in &seen_parents {
        let span = by_id[&(trace.clone(), parent.clone())];
        let tool = span["attributes"]["gen_ai.tool.name"].as_str().expect("a tool name");
        assert_eq!(span["name"], format!("tools/call {tool}"));
        assert_eq!(
            (span["kind"].as_i64(), span["service"].as_str()),
            (Some(3), Some("mcp-eval")),
            "a client span of ours"
        );
        let root = by_id
            .get(&(trace.clone(), span["parent_span_id"].as_str().unwrap().to_owned()))
            .unwrap_or_else(|| panic!("the parent of {span} was not exported"));
        assert_eq!((root["name"].as_str(), root["parent_span_id"].as_str()), (Some("mcp-eval trial"), Some("")));
    }

    // One trace per trial, each with one root; the report names each trial's trace.
    let report = run.report();
    let trials = report["telemetry"]["trials"].as_array().expect("trials");
    let roots: BTreeSet<&str> = spans
        .iter()
        .filter(|span| span["name"] == "mcp-eval trial")
        .map(|span| span["trace_id"].as_str().unwrap())
        .collect();
    let reported: BTreeSet<&str> = trials.iter().map(|trial| trial["trace_id"].as_str().expect("a trace id")).collect();
    assert_eq!(roots, reported);
    assert_eq!(roots.len(), trials.len());
    let trace = &report["telemetry"]["trace"];
    assert_eq!(trace["traces"].as_u64(), Some(trials.len() as u64));
    assert_eq!(trace["export"]["exported"].as_u64(), Some(spans.len() as u64), "{trace}");
    assert!(trace["export"].get("warning").is_none(), "{trace}");
    let chats = spans.iter().filter(|span| span["attributes"]["gen_ai.operation.name"] == "chat").count();
    assert!(chats >= trials.len(), "every trial's model calls are spans: {chats}");

    // The header reached the receiver and nothing else; no span holds a result or a key.
    let requests: Vec<Value> = receiver.lines().into_iter().filter(|line| line.get("request").is_some()).collect();
    assert!(requests.iter().all(|request| request["request"]["headers"]["x-api-key"] == HEADER_CANARY), "{requests:?}");
    assert!(!run.everything().contains(HEADER_CANARY), "the header value leaked into the reports or the log");
    let exported = std::fs::read_to_string(&receiver.out).expect("spans");
    assert!(!exported.contains(OPENAI_CANARY), "a key in a span");
    assert!(run.file("summary.md").contains("Trace context: every `tools/call` carried a W3C `traceparent`"));
}

#[test]
fn without_layer_3_no_request_carries_a_traceparent() {
    let dir = tempfile::tempdir().expect("temp dir");
    let calls = dir.path().join("calls.jsonl");
    let server = DemoServer::start_with(&["--calls-log", utf8(&calls)]);
    let run = run_set(&server, "1", &[], &[]);
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let seen = read_lines(&calls);
    assert!(!seen.is_empty());
    assert!(seen.iter().all(|call| call["traceparent"].is_null()), "{seen:?}");
    assert!(run.report().get("telemetry").is_none_or(Value::is_null));
}

#[test]
fn the_demo_with_layers_0_1_3_exports_one_trace_per_trial_to_the_receiver() {
    let receiver = Receiver::start(&[]);
    // The base URL from the standard variable: `/v1/traces` is added, as the specification says.
    let run = run_with_env(&["--demo", "--layers", "0,1,3"], &[("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.url)]);
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let report = run.report();
    let trace = &report["telemetry"]["trace"];
    assert_eq!(trace["export"]["endpoint"], format!("{}/v1/traces", receiver.url), "{trace}");
    let spans = receiver.spans();
    assert_eq!(trace["export"]["exported"].as_u64(), Some(spans.len() as u64), "{trace}");
    let exported: BTreeSet<&str> = spans.iter().map(|span| span["trace_id"].as_str().unwrap()).collect();
    let trials = report["telemetry"]["trials"].as_array().expect("trials");
    assert!(!trials.is_empty());
    for trial in trials {
        let id = trial["trace_id"].as_str().unwrap_or_else(|| panic!("no trace id: {trial}"));
        assert!(exported.contains(id), "trial {trial} was not exported");
    }
    assert_eq!(exported.len(), trials.len(), "one trace per trial");
    // Layer 0's probes are as they were: M-9 passes on the demo, and no note warns about it.
    assert_eq!(run.status("M-9"), "pass");
    let notes = report["telemetry"]["notes"].to_string();
    assert!(!notes.contains("M-9"), "{notes}");
}

#[test]
fn a_server_that_refuses_traceparent_is_warned_that_layer_3_sends_one() {
    let run = run_with_env(&["--demo", "--layers", "0,1,3"], &[]);
    assert_eq!(run.code(), 0, "{}", run.stderr());
    assert!(run.report()["telemetry"]["trace"]["export"].is_null(), "no endpoint, no export");
    // The break makes the demo refuse `traceparent`; layer 0's M-9 finds it, layer 3 warns.
    let server = DemoServer::start(&["m-9"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), SET);
    let model = DemoModel::start(&set, &[]);
    let args = ["--server-url", &server.url, "--golden-set", utf8(&set), "--model", "openai:demo", "--runs", "1"];
    let mut args = args.to_vec();
    args.extend_from_slice(&["--layers", "0,1,3", "--fail-on", "never"]);
    let openai = model.openai_url();
    let run = run_layer1(&args, &[("OPENAI_BASE_URL", &openai), ("OPENAI_API_KEY", OPENAI_CANARY)]);
    assert_ne!(run.status("M-9"), "pass");
    let notes = run.report()["telemetry"]["notes"].to_string();
    assert!(notes.contains("(M-9), and layer 3 sends one"), "{notes}");
    assert!(run.file("summary.md").contains("(M-9), and layer 3 sends one"));
}

#[test]
fn an_unreachable_or_hanging_collector_is_a_warning_and_costs_at_most_its_timeout() {
    // Nothing listens on port 9.
    let run = run_with_env(&["--demo", "--layers", "1,3", "--otlp-endpoint", "http://127.0.0.1:9"], &[]);
    assert_eq!(run.code(), 0, "never a failure: {}", run.stderr());
    let export = &run.report()["telemetry"]["trace"]["export"];
    assert!(export["warning"].as_str().is_some_and(|warning| warning.contains("not delivered")), "{export}");
    assert_eq!(export["exported"], 0);
    assert!(run.file("summary.md").contains("failed (a warning, not a failure)"));

    // A collector that never answers: the export gives up after its timeout (1 s here).
    let hanging = Receiver::start(&["--delay", "30"]);
    let run = run_with_env(
        &["--demo", "--layers", "1,3", "--otlp-endpoint", &hanging.url],
        &[("OTEL_EXPORTER_OTLP_TIMEOUT", "1000")],
    );
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let export = &run.report()["telemetry"]["trace"]["export"];
    // Our bound or the client's (the same second) gives up first: either way nothing was delivered.
    assert!(export["warning"].as_str().is_some_and(|warning| warning.contains(" span(s) not delivered")), "{export}");
    assert_eq!(
        (export["requests"].as_u64(), export["exported"].as_u64()),
        (Some(1), Some(0)),
        "one request tried: {export}"
    );
    // The export's own time: the timeout, not the receiver's 30 s (this bounds the export,
    // measured by the binary, not the test's wall clock).
    assert!(export["duration_ms"].as_u64().is_some_and(|ms| ms < 10_000), "{export}");

    // A collector that refuses: a warning naming the status.
    let refusing = Receiver::start(&["--status", "503"]);
    let run = run_with_env(&["--demo", "--layers", "1,3", "--otlp-endpoint", &refusing.url], &[]);
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let export = &run.report()["telemetry"]["trace"]["export"];
    assert!(export["warning"].as_str().is_some_and(|warning| warning.contains("not delivered")), "{export}");
}

#[test]
fn a_bad_endpoint_or_tracestate_is_refused_naming_the_flag_and_the_fix() {
    let run = run_with_env(&["--demo", "--layers", "1,3", "--otlp-endpoint", "ftp://collector"], &[]);
    assert_eq!(run.code(), 2);
    assert!(run.stderr().contains("--otlp-endpoint: is not an OTLP endpoint"), "{}", run.stderr());
    let run = run_with_env(&["--demo", "--layers", "1,3", "--trace-state", "Vendor=x"], &[]);
    assert_eq!(run.code(), 2);
    assert!(run.stderr().contains("--trace-state: is not a W3C tracestate"), "{}", run.stderr());
    let run = run_with_env(&["--demo", "--layers", "1,3"], &[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "not a url")]);
    assert_eq!(run.code(), 2);
    assert!(run.stderr().contains("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: is not an OTLP endpoint"), "{}", run.stderr());
}

/// One case for the Python SDK's time server: the demo model calls `get_current_time` as
/// expected.
const TIME_SET: &str = r#"version: 1
defaults: {runs: 2}
cases:
  - id: tokyo
    prompt: "What time is it in Tokyo right now?"
    expect_tool: get_current_time
    expect_args: {timezone: Asia/Tokyo}
"#;

#[test]
fn a_real_servers_own_spans_join_each_trials_trace_under_its_tool_call_span() {
    // The Python SDK's time server with its OpenTelemetry middleware exporting to the same
    // receiver (scripts/py_time_traced.py): what the server saw is what it exported.
    let receiver = Receiver::start(&[]);
    let command = crate::interop::stdio_command("py-time-traced-stdio");
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), TIME_SET);
    let model = DemoModel::start(&set, &[]);
    let server_env = format!("OTEL_EXPORTER_OTLP_ENDPOINT={}", receiver.url);
    let args = [
        "--server-cmd",
        command.as_str(),
        "--server-env",
        server_env.as_str(),
        "--golden-set",
        utf8(&set),
        "--model",
        "openai:demo",
        "--layers",
        "1,3",
        "--otlp-endpoint",
        receiver.url.as_str(),
    ];
    let openai = model.openai_url();
    let run = run_layer1(&args, &[("OPENAI_BASE_URL", &openai), ("OPENAI_API_KEY", OPENAI_CANARY)]);
    assert_eq!(run.code(), 0, "{}", run.stderr());

    let ours = |spans: &[Value]| -> BTreeSet<(String, String)> {
        spans
            .iter()
            .filter(|span| span["service"] == "mcp-eval" && span["name"] == "tools/call get_current_time")
            .map(|span| (span["trace_id"].as_str().unwrap().to_owned(), span["span_id"].as_str().unwrap().to_owned()))
            .collect()
    };
    let theirs = |spans: &[Value]| -> Vec<Value> {
        spans
            .iter()
            .filter(|span| span["service"] == "mcp-server-time" && span["name"] == "tools/call get_current_time")
            .cloned()
            .collect()
    };
    // The server exports each span as it ends; our export comes at the end of the run. Both
    // are in by now, but allow the server's last request a moment.
    let mut spans = receiver.spans();
    for _ in 0..50 {
        if !ours(&spans).is_empty() && theirs(&spans).len() >= ours(&spans).len() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        spans = receiver.spans();
    }
    let calls = ours(&spans);
    assert_eq!(calls.len(), 2, "one call per trial: {spans:?}");
    let server_spans = theirs(&spans);
    assert_eq!(server_spans.len(), calls.len(), "the server traced each call: {spans:?}");
    for span in &server_spans {
        let parent =
            (span["trace_id"].as_str().unwrap().to_owned(), span["parent_span_id"].as_str().unwrap().to_owned());
        assert!(calls.contains(&parent), "the server's span {span} hangs under none of our tool-call spans {calls:?}");
        assert_eq!(span["kind"].as_i64(), Some(2), "a server span: {span}");
        assert_eq!(span["attributes"]["mcp.method.name"], "tools/call");
    }
}
