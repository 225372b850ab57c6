//! Layer 1 end to end through the binary: a golden set in a temp dir, the demo MCP server, and
//! the demo model (`mcp-eval demo-model`, a scripted stand-in) or a tiny scripted HTTP server
//! as the provider. Every exchange stays on 127.0.0.1.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{DemoServer, Run, binary, demo_stdio_command, run_loud_with_env, run_with_env};

pub(crate) const OPENAI_CANARY: &str = "sk-canary-openai-5f0c2d9a71";
pub(crate) const ANTHROPIC_CANARY: &str = "sk-ant-canary-b81e4c6f03";

/// Five cases, one of each outcome when the demo model runs with [`FLAKY`]: `select` 5/5,
/// `wrong` 0/5, `soft` 3/5 (threshold 4), `hard` 4/5, `negative` 5/5.
pub(crate) const SET: &str = r#"version: 1
defaults: {runs: 5, sampling: {temperature: 0}}
cases:
  - id: select
    prompt: "Echo my region, eu."
    kind: hard
    expect_tool: test_header_param
    expect_args: {region: eu}
  - id: wrong
    prompt: "What is the temperature in celsius?"
    expect_tool: test_structured
    expect_args: {unit: celsius}
  - id: soft
    prompt: "Give me the short text."
    pass_threshold: 4
    expect_tool: test_simple_text
  - id: hard
    prompt: "Run the progress demo."
    kind: hard
    expect_tool: test_progress
  - id: negative
    prompt: "Thanks, that's all."
    kind: hard
    negative: true
"#;

/// `wrong` always calls a wrong tool, `soft` on its 2nd and 4th first turn, `hard` on its 5th.
pub(crate) const FLAKY: [&str; 6] = ["--flaky", "wrong:1", "--flaky", "soft:2", "--flaky", "hard:5"];

/// One passing case, for the tests where the count does not matter.
const ONE_CASE: &str = r#"version: 1
defaults: {runs: 2}
cases:
  - id: select
    prompt: "Echo my region, eu."
    expect_tool: test_header_param
    expect_args: {region: eu}
"#;

/// `mcp-eval demo-model` started as a child process; killed on drop.
pub(crate) struct DemoModel {
    child: Child,
    /// `http://127.0.0.1:PORT` (Chat Completions at `URL/v1`, Messages at `URL`).
    pub(crate) url: String,
}

impl DemoModel {
    /// Starts the demo model scripted from the set at `set` (on a free port unless `args` give
    /// `--port`) and waits for its URL.
    pub(crate) fn start(set: &Path, args: &[&str]) -> Self {
        let mut child = Command::new(binary())
            .args(["demo-model", "--golden-set"])
            .arg(set)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the demo model");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).expect("read the demo model's URL");
        let url = line.trim().to_owned();
        assert!(url.starts_with("http://127.0.0.1:"), "unexpected demo model output: {url:?}");
        Self { child, url }
    }

    /// The Chat Completions base URL.
    pub(crate) fn openai_url(&self) -> String {
        format!("{}/v1", self.url)
    }

    /// Stops it and waits until its port refuses connections.
    fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let address = self.url.trim_start_matches("http://").to_owned();
        assert!(TcpStream::connect(&address).is_err(), "the demo model still answers on {address}");
    }
}

impl Drop for DemoModel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A request the scripted provider received.
#[derive(Debug, Clone)]
pub(crate) struct Received {
    at: Instant,
    pub(crate) head: String,
    pub(crate) body: String,
}

/// One canned HTTP answer.
#[derive(Debug, Clone)]
struct Canned {
    status: u16,
    headers: Vec<(&'static str, &'static str)>,
    body: String,
}

impl Canned {
    fn json(status: u16, body: &Value) -> Self {
        Self { status, headers: Vec::new(), body: body.to_string() }
    }
}

/// A tiny HTTP/1.1 server on loopback answering the n-th request with the n-th canned answer
/// (the last one again once they run out), one request per connection.
struct ScriptedProvider {
    url: String,
    received: Arc<Mutex<Vec<Received>>>,
}

impl ScriptedProvider {
    fn start(answers: Vec<Canned>) -> Self {
        assert!(!answers.is_empty());
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = received.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let Some(request) = read_request(&mut stream) else { continue };
                let index = {
                    let mut log = log.lock().expect("lock");
                    log.push(request);
                    log.len() - 1
                };
                let answer = &answers[index.min(answers.len() - 1)];
                let mut head = format!(
                    "HTTP/1.1 {} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
                    answer.status,
                    answer.body.len()
                );
                for (name, value) in &answer.headers {
                    head.push_str(&format!("{name}: {value}\r\n"));
                }
                head.push_str("\r\n");
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(answer.body.as_bytes());
                let _ = stream.flush();
            }
        });
        Self { url, received }
    }

    fn received(&self) -> Vec<Received> {
        self.received.lock().expect("lock").clone()
    }
}

/// Reads one request (head and a `content-length` body).
pub(crate) fn read_request(stream: &mut TcpStream) -> Option<Received> {
    stream.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let mut data = Vec::new();
    let mut buffer = [0u8; 4096];
    let end = loop {
        if let Some(end) = data.windows(4).position(|window| window == b"\r\n\r\n") {
            break end;
        }
        let read = stream.read(&mut buffer).ok()?;
        if read == 0 {
            return None;
        }
        data.extend_from_slice(&buffer[..read]);
    };
    let at = Instant::now();
    let head = String::from_utf8_lossy(&data[..end]).into_owned();
    let length = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length").then(|| value.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    let mut body = data[end + 4..].to_vec();
    while body.len() < length {
        let read = stream.read(&mut buffer).ok()?;
        if read == 0 {
            break;
        }
        body.extend_from_slice(&buffer[..read]);
    }
    Some(Received { at, head, body: String::from_utf8_lossy(&body).into_owned() })
}

/// A Chat Completions answer calling `tool` with no arguments.
fn chat_tool_call(tool: &str) -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "scripted",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": tool, "arguments": "{}"}}]}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
    })
}

/// A Chat Completions answer in words.
fn chat_text(text: &str) -> Value {
    json!({
        "id": "chatcmpl-2", "object": "chat.completion", "model": "scripted",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
    })
}

/// Writes `text` as `golden.yaml` in `dir`.
pub(crate) fn write_set(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("golden.yaml");
    std::fs::write(&path, text).expect("write the golden set");
    path
}

pub(crate) fn utf8(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

/// `mcp-eval run` with the layer-1 flags; the keys of both built-in providers are cleared
/// unless `vars` sets them (the base URLs always point at loopback).
/// The variables that point both wires at demo models — Chat Completions at `openai` (a URL
/// ending in `/v1`), Messages at `anthropic` — with the canary keys.
pub(crate) fn both_wires<'a>(openai: &'a str, anthropic: &'a str) -> [(&'static str, &'a str); 4] {
    [
        ("OPENAI_BASE_URL", openai),
        ("OPENAI_API_KEY", OPENAI_CANARY),
        ("ANTHROPIC_BASE_URL", anthropic),
        ("ANTHROPIC_API_KEY", ANTHROPIC_CANARY),
    ]
}

pub(crate) fn run_layer1(args: &[&str], vars: &[(&str, &str)]) -> Run {
    let mut all: Vec<(&str, &str)> = vec![
        ("OPENAI_API_KEY", ""),
        ("ANTHROPIC_API_KEY", ""),
        ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
        ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),
    ];
    all.extend_from_slice(vars);
    let mut args = args.to_vec();
    if !args.contains(&"--concurrency") {
        args.extend_from_slice(&["--concurrency", "8"]);
    }
    run_with_env(&args, &all)
}

/// Layer 1 of the golden set `set` against the server at `url` for `openai:demo` and
/// `anthropic:demo`, each wire on a demo model of its own (started with `openai_args` and
/// `anthropic_args`: each keeps its own first-turn counters, so flaky runs fall the same way on
/// both wires whatever the interleaving), with `extra` arguments.
pub(crate) fn on_both_wires(
    url: &str,
    set: &Path,
    openai_args: &[&str],
    anthropic_args: &[&str],
    extra: &[&str],
) -> Run {
    let for_openai = DemoModel::start(set, openai_args);
    let for_anthropic = DemoModel::start(set, anthropic_args);
    let mut args =
        vec!["--server-url", url, "--golden-set", utf8(set), "--model", "openai:demo", "--model", "anthropic:demo"];
    args.extend_from_slice(extra);
    run_layer1(&args, &both_wires(&for_openai.openai_url(), &for_anthropic.url))
}

/// `mcp-eval run` of the golden set `set` against `server` for `openai:demo`, on the OpenAI wire
/// of a demo model started for this run alone (with `model_args`, e.g. its `--flaky` ones), with
/// `extra` arguments. The model runs on another port each time: a baseline from a report
/// (`--baseline`) compares by case and model, not by endpoint.
pub(crate) fn on_a_demo_model(server: &DemoServer, set: &Path, model_args: &[&str], extra: &[&str]) -> Run {
    let model = DemoModel::start(set, model_args);
    let mut args = vec!["--server-url", &server.url, "--golden-set", utf8(set), "--model", "openai:demo"];
    args.extend_from_slice(extra);
    run_layer1(&args, &[("OPENAI_BASE_URL", &model.openai_url()), ("OPENAI_API_KEY", OPENAI_CANARY)])
}

/// Checks that `green` passed and keeps its report as `dir/green.json`, the baseline of the runs
/// that follow; its path.
pub(crate) fn kept_as_baseline(green: &Run, dir: &Path) -> PathBuf {
    assert_eq!(green.code(), 0, "{}", green.stderr());
    let baseline = dir.join("green.json");
    std::fs::write(&baseline, green.file("report.json")).expect("keep the green report");
    baseline
}

/// The `evals[]` entry of this case × model.
pub(crate) fn eval<'a>(run: &'a Run, case: &str, model: &str) -> &'a Value {
    run.report()["evals"]
        .as_array()
        .and_then(|evals| evals.iter().find(|eval| eval["case"] == case && eval["model"] == model))
        .unwrap_or_else(|| panic!("no eval of {case} × {model}; stderr: {}", run.stderr()))
}

/// `(status, passed, runs)` of a case × model.
pub(crate) fn outcome(run: &Run, case: &str, model: &str) -> (String, u64, u64) {
    let eval = eval(run, case, model);
    (
        eval["status"].as_str().unwrap_or_default().to_owned(),
        eval["passed"].as_u64().unwrap_or(u64::MAX),
        eval["runs"].as_u64().unwrap_or(u64::MAX),
    )
}

/// The `(status, passed, runs)` an [`outcome`] is compared with.
pub(crate) fn outcome_of(status: &str, passed: u64, runs: u64) -> (String, u64, u64) {
    (status.to_owned(), passed, runs)
}

/// `[(model, status)]` of `model_status`.
fn model_statuses(run: &Run) -> Vec<(String, String)> {
    run.report()["model_status"]
        .as_array()
        .expect("model_status")
        .iter()
        .map(|status| {
            (status["model"].as_str().unwrap_or_default().into(), status["status"].as_str().unwrap_or_default().into())
        })
        .collect()
}

/// Every file under `dir`, as one text.
fn files_text(dir: &Path) -> String {
    let mut all = String::new();
    for entry in std::fs::read_dir(dir).expect("read dir").filter_map(Result::ok) {
        if let Ok(text) = std::fs::read_to_string(entry.path()) {
            all.push_str(&text);
        }
    }
    all
}

#[test]
fn a_golden_set_grades_five_outcomes_on_both_wires_and_fails_the_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), SET);
    let server = DemoServer::start(&[]);
    // One demo model per wire: the flaky runs fall the same way on both wires.
    let run = on_both_wires(&server.url, &set, &FLAKY, &FLAKY, &[]);
    assert_eq!(run.code(), 1, "a failing case fails the run: {}", run.stderr());
    let report = run.report();
    assert_eq!(report["layers"], json!([0, 1]));
    assert_eq!(report["counts"]["fail"], 0, "layer 0 passes on the demo server");
    assert_eq!(report["models"], json!(["openai:demo", "anthropic:demo"]));
    assert_eq!(
        model_statuses(&run),
        vec![("openai:demo".to_owned(), "ran".to_owned()), ("anthropic:demo".to_owned(), "ran".to_owned())]
    );
    assert_eq!(report["golden_set"]["cases"], 5);
    assert_eq!(report["call_cap_reached"], false);
    // select and hard: 2 calls a run (the call, then the answer); negative: 1; wrong: the wrong
    // call, then the answer; soft: 2. 5 runs × 9 calls × 2 models.
    assert_eq!(report["model_calls"], 90);
    assert_eq!(report["evals"].as_array().map(Vec::len), Some(10));
    for model in ["openai:demo", "anthropic:demo"] {
        assert_eq!(outcome(&run, "select", model), outcome_of("pass", 5, 5), "{model}");
        assert_eq!(outcome(&run, "wrong", model), outcome_of("fail", 0, 5), "{model}");
        assert_eq!(outcome(&run, "soft", model), outcome_of("fail", 3, 5), "{model}");
        assert_eq!(outcome(&run, "hard", model), outcome_of("fail", 4, 5), "{model}");
        assert_eq!(outcome(&run, "negative", model), outcome_of("pass", 5, 5), "{model}");

        let select = eval(&run, "select", model);
        assert_eq!(select["wilson_95"], json!([0.5655, 1.0]));
        // The demo model answers with the `model` asked for, on both wires, and no fingerprint.
        assert_eq!(select["reported_models"], json!([{"model": "demo"}]), "{model}");
        assert_eq!(select["flaky"], false);
        let call = &select["traces"][0]["calls"][0];
        assert_eq!(call["name"], "test_header_param");
        assert_eq!(call["arguments"], json!({"region": "eu"}));
        assert_eq!(call["sent"], true);
        assert_eq!(call["result"], "Region: eu", "the demo server answered the call");

        let wrong = eval(&run, "wrong", model);
        assert_eq!(wrong["graders"]["selection"], json!({"passed": 0, "graded": 5}));
        assert_eq!(wrong["flaky"], false);
        let soft = eval(&run, "soft", model);
        assert_eq!((soft["kind"].as_str(), soft["threshold"].as_u64()), (Some("soft"), Some(4)));
        assert_eq!(soft["graders"]["selection"], json!({"passed": 3, "graded": 5}));
        assert_eq!(soft["flaky"], true);
        let failed: Vec<u64> = soft["traces"]
            .as_array()
            .expect("traces")
            .iter()
            .filter(|trace| trace["status"] == "fail")
            .map(|trace| trace["run"].as_u64().unwrap_or_default())
            .collect();
        assert_eq!(failed.len(), 2, "{soft}");
        let hard = eval(&run, "hard", model);
        assert_eq!((hard["kind"].as_str(), hard["threshold"].as_u64()), (Some("hard"), Some(5)));
        assert_eq!(hard["wilson_95"], json!([0.3755, 0.9638]));
        assert_eq!(hard["flaky"], true);
        let negative = eval(&run, "negative", model);
        assert_eq!(negative["graders"]["no_tool_call"], json!({"passed": 5, "graded": 5}));
        assert_eq!(negative["traces"][0]["calls"], json!([]));
    }
    let metrics = report["eval_metrics"].as_array().expect("eval_metrics");
    assert_eq!(metrics.len(), 2);
    for metric in metrics {
        assert_eq!(metric["pass_rate"]["k"], 2, "{metric}");
        assert_eq!(metric["pass_rate"]["n"], 5, "{metric}");
        // select 5 + wrong 0 + soft 3 + hard 4 of 20 runs with expect_tool.
        assert_eq!(
            (metric["tool_selection_accuracy"]["k"].as_u64(), metric["tool_selection_accuracy"]["n"].as_u64()),
            (Some(12), Some(20))
        );
        assert_eq!(
            (metric["over_triggering_rate"]["k"].as_u64(), metric["over_triggering_rate"]["n"].as_u64()),
            (Some(0), Some(5))
        );
    }

    let junit = run.file("junit.xml");
    for model in ["openai:demo", "anthropic:demo"] {
        let suite = format!("name=\"layer-1 golden set · {model}\"");
        assert_eq!(junit.matches(&suite).count(), 1, "one suite for {model}: {junit}");
    }
    for name in ["select", "wrong", "soft", "hard", "negative"] {
        assert_eq!(junit.matches(&format!("name=\"{name}\"")).count(), 2, "{name} once per model: {junit}");
    }
    assert!(junit.contains("0 of 5 trials passed"), "the score is in the message: {junit}");
    assert!(junit.contains("3 of 5 trials passed, 4 needed"), "{junit}");

    let summary = run.file("summary.md");
    assert!(summary.contains("| Case | Kind | `openai:demo` | `anthropic:demo` |"), "{summary}");
    for row in [
        "| select | hard | ✅ 5/5 | ✅ 5/5 |",
        "| wrong | soft ≥ 4/5 | ❌ 0/5 | ❌ 0/5 |",
        "| soft | soft ≥ 4/5 | ❌ 3/5 (flaky) | ❌ 3/5 (flaky) |",
        "| hard | hard | ❌ 4/5 (flaky) | ❌ 4/5 (flaky) |",
        "| negative | hard | ✅ 5/5 | ✅ 5/5 |",
    ] {
        assert!(summary.contains(row), "{row}\n{summary}");
    }
}

#[test]
fn provider_keys_appear_in_no_output_report_or_cassette() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), SET);
    let cassettes = dir.path().join("cassettes");
    let server = DemoServer::start(&[]);
    let model = DemoModel::start(&set, &FLAKY);
    let run = run_layer1(
        &[
            "--server-url",
            &server.url,
            "--golden-set",
            utf8(&set),
            "--model",
            "openai:demo",
            "--model",
            "anthropic:demo",
            "--runs",
            "1",
            "--cassettes",
            utf8(&cassettes),
            "--record",
            "--trace-results",
            "full",
            "--json",
        ],
        &both_wires(&model.openai_url(), &model.url),
    );
    assert_eq!(run.code(), 1, "{}", run.stderr());
    assert_eq!(
        model_statuses(&run),
        vec![("openai:demo".to_owned(), "ran".to_owned()), ("anthropic:demo".to_owned(), "ran".to_owned())]
    );
    let recorded = files_text(&cassettes);
    assert!(recorded.contains("\"case\": \"select\""), "both models were recorded: {recorded}");
    let mut everything = run.everything();
    assert!(everything.contains("\"evals\""), "--json printed the report");
    everything.push_str(&recorded);
    for canary in [OPENAI_CANARY, ANTHROPIC_CANARY, "canary"] {
        assert!(!everything.contains(canary), "{canary} leaked");
    }
}

#[test]
fn a_server_whose_tools_layer_1_cannot_list_is_an_error_with_exit_3_never_a_pass() {
    // Layer 1 alone, against a server whose answers after `server/discover` cannot be read:
    // nothing was evaluated, and the run said "pass" with exit 0.
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), ONE_CASE);
    let server = DemoServer::start(&["chaos-later-not-json"]);
    let run = on_a_demo_model(&server, &set, &[], &["--layers", "1"]);
    assert_eq!(run.code(), 3, "{}\n{}", run.stderr(), run.file("summary.md"));
    let report = run.report();
    assert_eq!(report["verdict"], "error", "{}", report["verdict"]);
    assert_eq!(report["tools_unlisted"], true);
    let not_run = report["layer1_not_run"].as_str().unwrap_or_default();
    assert!(not_run.contains("the server's tools could not be listed"), "{not_run}");
    let summary = run.file("summary.md");
    assert!(!summary.contains("✅ pass"), "{summary}");
    assert!(summary.contains("layer 1 could not list the server's tools"), "{summary}");
}

#[test]
fn a_model_without_a_key_is_not_run_and_the_run_passes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), ONE_CASE);
    let server = DemoServer::start(&[]);
    let run = run_layer1(&["--server-url", &server.url, "--golden-set", utf8(&set), "--model", "openai:x"], &[]);
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let report = run.report();
    assert_eq!(report["counts"]["fail"], 0);
    assert_eq!(model_statuses(&run), vec![("openai:x".to_owned(), "no_api_key".to_owned())]);
    let detail = report["model_status"][0]["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("OPENAI_API_KEY"), "{detail}");
    assert!(detail.contains("openai-api-key") && detail.contains("--cassettes DIR"), "says what to do: {detail}");
    let not_run = report["layer1_not_run"].as_str().unwrap_or_default();
    assert!(not_run.contains("no model could run") && not_run.contains("openai:x: no API key"), "{not_run}");
    assert_eq!(report["evals"], json!([]));
    assert_eq!(report["model_calls"], 0);
    let summary = run.file("summary.md");
    assert!(summary.contains("- `openai:x`: not run — no API key"), "{summary}");
    let junit = run.file("junit.xml");
    assert!(junit.contains("not run: no API key"), "{junit}");
}

#[test]
fn a_refused_key_makes_the_provider_unusable_and_is_never_retried() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), ONE_CASE);
    let server = DemoServer::start(&[]);
    // The body echoes the key, as some APIs do: it must still appear nowhere.
    let refused = Canned::json(
        401,
        &json!({"error": {
            "message": format!("Incorrect API key provided: {OPENAI_CANARY}"),
            "type": "invalid_request_error",
            "code": "invalid_api_key",
        }}),
    );
    let provider = ScriptedProvider::start(vec![refused; 10]);
    let base = format!("{}/v1", provider.url);
    let run = run_with_env(
        &["--server-url", &server.url, "--golden-set", utf8(&set), "--model", "openai:gpt-x", "--layers", "1"],
        &[("OPENAI_BASE_URL", &base), ("OPENAI_API_KEY", OPENAI_CANARY)],
    );
    assert_eq!(run.code(), 5, "{}", run.stderr());
    let received = provider.received();
    // Only the runs in flight when the first refusal came asked (at most the concurrency, 8);
    // a refused key is never retried.
    assert!((1..=8).contains(&received.len()), "{} requests: {received:?}", received.len());
    assert!(received[0].head.starts_with("POST /v1/chat/completions "), "{}", received[0].head);
    assert!(
        received[0]
            .head
            .lines()
            .any(|line| line.eq_ignore_ascii_case(&format!("authorization: Bearer {OPENAI_CANARY}"))),
        "the key went to the provider: {}",
        received[0].head
    );
    assert_eq!(model_statuses(&run), vec![("openai:gpt-x".to_owned(), "unusable".to_owned())]);
    let detail = run.report()["model_status"][0]["detail"].as_str().unwrap_or_default().to_owned();
    assert!(detail.contains("openai:gpt-x") && detail.contains("OPENAI_API_KEY"), "{detail}");
    assert!(detail.contains("Incorrect API key provided"), "the provider's message: {detail}");
    // Said even with --quiet: exit status 5 never goes unexplained.
    let stderr = run.stderr();
    assert!(
        stderr.contains("error: layer 1: openai:gpt-x cannot be used:") && stderr.contains("OPENAI_API_KEY"),
        "{stderr}"
    );
    assert!(!run.everything().contains(OPENAI_CANARY), "{}", run.everything());
}

#[test]
fn a_rate_limit_is_waited_out_and_the_case_still_passes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(
        dir.path(),
        "version: 1\ndefaults: {runs: 1}\ncases:\n  - id: short\n    prompt: Give me the short text.\n    expect_tool: test_simple_text\n",
    );
    let server = DemoServer::start(&[]);
    let limited =
        json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}});
    let provider = ScriptedProvider::start(vec![
        Canned { headers: vec![("retry-after", "1")], ..Canned::json(429, &limited) },
        Canned::json(200, &chat_tool_call("test_simple_text")),
        Canned::json(200, &chat_text("Here is the short text.")),
    ]);
    let base = format!("{}/v1", provider.url);
    let started = Instant::now();
    let run = run_with_env(
        &["--server-url", &server.url, "--golden-set", utf8(&set), "--model", "openai:gpt-x", "--layers", "1"],
        &[("OPENAI_BASE_URL", &base), ("OPENAI_API_KEY", OPENAI_CANARY)],
    );
    let took = started.elapsed();
    assert_eq!(run.code(), 0, "{}", run.stderr());
    assert_eq!(outcome(&run, "short", "openai:gpt-x"), outcome_of("pass", 1, 1));
    let received = provider.received();
    assert_eq!(received.len(), 3, "{received:?}");
    assert!(received[1].at - received[0].at >= Duration::from_secs(1), "Retry-After: 1 was honoured");
    assert!(took >= Duration::from_secs(1));
    // The retried request is the same; the next one carries the tool's real result.
    assert_eq!(received[0].body, received[1].body);
    assert!(received[2].body.contains("test_simple_text"), "{}", received[2].body);
    let trace = &eval(&run, "short", "openai:gpt-x")["traces"][0];
    assert_eq!(trace["model_calls"], 3, "the refused attempt counts: {trace}");
    assert_eq!(trace["calls"][0]["name"], "test_simple_text");
    assert_eq!(run.report()["model_calls"], 3);
}

#[test]
fn recorded_cassettes_replay_without_a_key_or_the_model_and_a_changed_prompt_misses() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), SET);
    let cassettes = dir.path().join("cassettes");
    let server = DemoServer::start(&[]);
    let model = DemoModel::start(&set, &FLAKY);
    let common = [
        "--server-url",
        &server.url,
        "--golden-set",
        utf8(&set),
        "--model",
        "openai:demo",
        "--layers",
        "1",
        "--cassettes",
        utf8(&cassettes),
    ];
    let mut record = common.to_vec();
    record.push("--record");
    let recorded = run_layer1(&record, &[("OPENAI_BASE_URL", &model.openai_url()), ("OPENAI_API_KEY", OPENAI_CANARY)]);
    assert_eq!(recorded.code(), 1, "{}", recorded.stderr());
    let files: Vec<String> = std::fs::read_dir(&cassettes)
        .expect("cassettes written")
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    model.stop();

    let replayed = run_layer1(&common, &[]);
    assert_eq!(replayed.code(), 1, "{}", replayed.stderr());
    assert_eq!(model_statuses(&replayed), vec![("openai:demo".to_owned(), "ran".to_owned())]);
    for case in ["select", "wrong", "soft", "hard", "negative"] {
        let was = eval(&recorded, case, "openai:demo");
        let now = eval(&replayed, case, "openai:demo");
        assert_eq!(outcome(&replayed, case, "openai:demo"), outcome(&recorded, case, "openai:demo"), "{case}");
        let runs = |eval: &Value| -> Vec<(Value, Value)> {
            eval["traces"]
                .as_array()
                .expect("traces")
                .iter()
                .map(|trace| (trace["run"].clone(), trace["status"].clone()))
                .collect()
        };
        assert_eq!(runs(now), runs(was), "{case}: every run replayed as recorded");
        // The version the demo model reported (it echoes the `model` asked for) is recorded
        // and replayed with the answers.
        assert_eq!(was["reported_models"], json!([{"model": "demo"}]), "{case}");
        assert_eq!(now["reported_models"], was["reported_models"], "{case}");
    }
    assert_eq!(outcome(&replayed, "soft", "openai:demo"), outcome_of("fail", 3, 5));
    assert_eq!(replayed.report()["model_calls"], recorded.report()["model_calls"]);
    // A key does not make a cassette run call the model: without `--record`, cassettes replay.
    let with_key =
        run_layer1(&common, &[("OPENAI_BASE_URL", "http://127.0.0.1:1/v1"), ("OPENAI_API_KEY", OPENAI_CANARY)]);
    assert_eq!(with_key.code(), 1, "{}", with_key.stderr());
    assert_eq!(outcome(&with_key, "soft", "openai:demo"), outcome_of("fail", 3, 5));

    // Two of the five cases changed: their runs miss; a miss is deterministic, so one is exit 5.
    let changed =
        SET.replace("Echo my region, eu.", "Echo my region, which is eu.").replace("Thanks, that's all.", "Thanks!");
    std::fs::write(&set, changed).expect("rewrite");
    let missed = run_layer1(&common, &[]);
    assert_eq!(missed.code(), 5, "{}", missed.stderr());
    for case in ["select", "negative"] {
        let eval = eval(&missed, case, "openai:demo");
        assert_eq!((eval["status"].as_str(), eval["completed"].as_u64()), (Some("error"), Some(0)), "{eval}");
        let traces = eval["traces"].as_array().expect("traces");
        assert_eq!(traces.len(), 5);
        for trace in traces {
            assert_eq!(
                (trace["status"].as_str(), trace["ending"].as_str()),
                (Some("error"), Some("replay_miss")),
                "{trace}"
            );
            let reason = trace["reason"].as_str().unwrap_or_default();
            let run = trace["run"].as_u64().expect("run");
            assert!(reason.contains(&format!("case \"{case}\", trial {run}, turn 0")), "{reason}");
            assert!(reason.contains("no recording matches this request"), "{reason}");
            assert!(reason.contains("the request changed: messages[0] differs"), "the difference is named: {reason}");
        }
    }
    assert_eq!(outcome(&missed, "soft", "openai:demo"), outcome_of("fail", 3, 5), "unchanged cases still replay");
    // stderr says what missed and how to fix it, once for the whole run (not once per run).
    let stderr = missed.stderr();
    let said: Vec<&str> = stderr.lines().filter(|line| line.contains("replay miss on")).collect();
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(said[0].starts_with("error: layer 1: replay miss on openai:demo, case `select` trial 1:"), "{stderr}");
    assert!(said[0].contains("re-record with --record") && said[0].contains("(9 more trial(s) missed too"), "{stderr}");
}

#[test]
fn a_golden_set_with_a_yaml_error_is_an_input_error_with_its_position() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), "version: 1\ncases:\n  - id: a\n    prompt: [unclosed\n");
    let run = run_layer1(&["--demo", "--golden-set", utf8(&set), "--model", "openai:x"], &[]);
    assert_eq!(run.code(), 2, "{}", run.stderr());
    let stderr = run.stderr();
    assert!(stderr.contains(&format!("error: {}:4:13: unclosed bracket", set.display())), "file:line:col: {stderr}");
    assert!(stderr.contains("the golden set has 1 problem(s)"), "{stderr}");
}

#[test]
fn an_embedding_matcher_without_an_embeddings_model_is_an_input_error_at_its_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(
        dir.path(),
        "version: 1\ncases:\n  - id: a\n    prompt: hi\n    expect_tool: test_header_param\n    expect_args:\n      region: {match: embedding, value: Europe}\n",
    );
    let run = run_layer1(&["--demo", "--golden-set", utf8(&set), "--model", "openai:x"], &[]);
    assert_eq!(run.code(), 2, "{}", run.stderr());
    let stderr = run.stderr();
    assert!(
        stderr.contains(&format!("{}:7:15: cases[0].expect_args.region: an `embedding` matcher needs", set.display())),
        "file:line:col and the field: {stderr}"
    );
    assert!(stderr.contains("--embedding-model"), "the fix: {stderr}");
    assert!(!stderr.contains("layer 0"), "nothing ran: {stderr}");
}

#[test]
fn a_golden_set_naming_a_missing_tool_is_an_input_error_naming_the_case_and_nearest_tool() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set =
        write_set(dir.path(), "version: 1\ncases:\n  - id: typo\n    prompt: hi\n    expect_tool: test_header_parm\n");
    let server = DemoServer::start(&[]);
    let run = run_layer1(
        &["--server-url", &server.url, "--golden-set", utf8(&set), "--model", "openai:demo"],
        &[("OPENAI_API_KEY", OPENAI_CANARY)],
    );
    assert_eq!(run.code(), 2, "{}", run.stderr());
    let stderr = run.stderr();
    assert!(stderr.contains(&format!("{}:5:18", set.display())), "{stderr}");
    assert!(stderr.contains("typo") && stderr.contains("test_header_parm"), "{stderr}");
    assert!(stderr.contains("test_header_param"), "the nearest tool: {stderr}");
}

#[test]
fn a_model_without_a_known_provider_is_an_input_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), ONE_CASE);
    let run = run_layer1(&["--demo", "--golden-set", utf8(&set), "--model", "nocolon"], &[]);
    assert_eq!(run.code(), 2, "{}", run.stderr());
    assert!(run.stderr().contains("error: --model: `nocolon` is not PROVIDER:MODEL"), "{}", run.stderr());
    let run = run_layer1(&["--demo", "--golden-set", utf8(&set), "--model", "nope:x"], &[]);
    assert_eq!(run.code(), 2, "{}", run.stderr());
    assert!(run.stderr().contains("error: --model: `nope` in `nope:x` is not a provider"), "{}", run.stderr());
}

#[test]
fn layer_1_alone_runs_no_checks() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), ONE_CASE);
    let server = DemoServer::start(&[]);
    let model = DemoModel::start(&set, &[]);
    let run = run_layer1(
        &["--server-url", &server.url, "--golden-set", utf8(&set), "--model", "openai:demo", "--layers", "1"],
        &[("OPENAI_BASE_URL", &model.openai_url()), ("OPENAI_API_KEY", OPENAI_CANARY)],
    );
    assert_eq!(run.code(), 0, "{}", run.stderr());
    assert_eq!(run.report()["layers"], json!([1]));
    assert_eq!(run.report()["checks"], json!([]));
    assert_eq!(outcome(&run, "select", "openai:demo"), outcome_of("pass", 2, 2));
    let junit = run.file("junit.xml");
    assert!(!junit.contains("conformance"), "no empty conformance suite with --layers 1: {junit}");
}

#[test]
fn the_model_call_cap_stops_the_run_with_status_6_and_skips_what_it_cut() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), SET);
    let server = DemoServer::start(&[]);
    let model = DemoModel::start(&set, &[]);
    let run = run_layer1(
        &[
            "--server-url",
            &server.url,
            "--golden-set",
            utf8(&set),
            "--model",
            "openai:demo",
            "--layers",
            "1",
            "--max-model-calls",
            "3",
            // Other runs start once the first run's first call is answered: with more than one
            // in flight, which of them the cap cuts depends on timing.
            "--concurrency",
            "1",
        ],
        &[("OPENAI_BASE_URL", &model.openai_url()), ("OPENAI_API_KEY", OPENAI_CANARY)],
    );
    assert_eq!(run.code(), 6, "{}", run.stderr());
    let report = run.report();
    assert_eq!(report["call_cap_reached"], true);
    assert_eq!(report["model_calls"], 3);
    // One run at a time: the first run completes (2 calls); the third call starts a run the cap
    // then cuts: no other run completes, and every case is skipped.
    let statuses: Vec<(&str, &str)> = report["evals"]
        .as_array()
        .expect("evals")
        .iter()
        .map(|eval| (eval["case"].as_str().unwrap_or_default(), eval["status"].as_str().unwrap_or_default()))
        .collect();
    assert_eq!(
        statuses,
        [
            ("select", "skipped"),
            ("wrong", "skipped"),
            ("soft", "skipped"),
            ("hard", "skipped"),
            ("negative", "skipped")
        ]
    );
    let select = eval(&run, "select", "openai:demo");
    assert_eq!(select["reason"], "skipped: call cap reached (1 of 5 trial(s) completed before the cap)");
    assert_eq!(select["traces"][0]["status"], "pass");
    let completed: u64 =
        report["evals"].as_array().expect("evals").iter().map(|eval| eval["completed"].as_u64().unwrap_or(99)).sum();
    assert_eq!(completed, 1, "{report}");
    assert!(run.file("junit.xml").contains("call cap reached"));
    assert!(run.file("summary.md").contains("The model-call cap stopped the run"));
}

#[test]
fn a_stdio_server_runs_the_golden_set() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), ONE_CASE);
    let model = DemoModel::start(&set, &[]);
    let run = run_layer1(
        &[
            "--server-cmd",
            &demo_stdio_command(&[]),
            "--golden-set",
            utf8(&set),
            "--model",
            "anthropic:demo",
            "--layers",
            "1",
        ],
        &[("ANTHROPIC_BASE_URL", &model.url), ("ANTHROPIC_API_KEY", ANTHROPIC_CANARY)],
    );
    assert_eq!(run.code(), 0, "{}", run.stderr());
    assert_eq!(run.report()["server"]["transport"], "stdio");
    assert_eq!(outcome(&run, "select", "anthropic:demo"), outcome_of("pass", 2, 2));
    for trace in eval(&run, "select", "anthropic:demo")["traces"].as_array().expect("traces") {
        assert_eq!(trace["calls"][0]["result"], "Region: eu", "{trace}");
    }
}

#[test]
fn a_third_party_servers_echo_tool_answers_through_the_demo_model() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(
        dir.path(),
        "version: 1\ndefaults: {runs: 2}\ncases:\n  - id: echo\n    prompt: Echo the words 'layer one works'.\n    expect_tool: echo\n    expect_args: {message: layer one works}\n",
    );
    let command = crate::interop::stdio_command("ts-everything-stdio");
    let model = DemoModel::start(&set, &[]);
    let run = run_layer1(
        &["--server-cmd", &command, "--golden-set", utf8(&set), "--model", "openai:demo", "--layers", "1"],
        &[("OPENAI_BASE_URL", &model.openai_url()), ("OPENAI_API_KEY", OPENAI_CANARY)],
    );
    assert_eq!(run.code(), 0, "{}", run.stderr());
    assert_eq!(outcome(&run, "echo", "openai:demo"), outcome_of("pass", 2, 2));
    for trace in eval(&run, "echo", "openai:demo")["traces"].as_array().expect("traces") {
        let call = &trace["calls"][0];
        assert_eq!((call["name"].as_str(), call["sent"].as_bool()), (Some("echo"), Some(true)), "{trace}");
        assert_eq!(call["arguments"], json!({"message": "layer one works"}));
        assert_eq!(call["result"], "Echo: layer one works", "the server really answered: {trace}");
    }
}

/// Five soft cases that a good model passes 5/5.
const FIVE_CASES: &str = r#"version: 1
defaults: {runs: 5}
cases:
  - id: c0
    prompt: "Echo my region, eu."
    expect_tool: test_header_param
    expect_args: {region: eu}
  - id: c1
    prompt: "Give me the short text."
    expect_tool: test_simple_text
  - id: c2
    prompt: "What is the temperature?"
    expect_tool: test_structured
  - id: c3
    prompt: "Run the progress demo."
    expect_tool: test_progress
  - id: c4
    prompt: "Show me the logs."
    expect_tool: test_logging_tool
"#;

#[test]
fn the_regression_gate_passes_noise_and_fails_a_real_regression_naming_the_cases() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), FIVE_CASES);
    let server = DemoServer::start(&[]);
    let run_against =
        |flaky: &[&str], extra: &[&str]| on_a_demo_model(&server, &set, flaky, &[&["--layers", "1"], extra].concat());
    let green = run_against(&[], &[]);
    let baseline = kept_as_baseline(&green, dir.path());
    let gated = ["--baseline", utf8(&baseline), "--fail-on-evals", "regression"];

    // Noise: one soft case 5/5 → 4/5 passes the gate.
    let noisy = run_against(&["--flaky", "c1:5"], &gated);
    assert_eq!(noisy.code(), 0, "{}", noisy.stderr());
    let gate = &noisy.report()["eval_gate"];
    assert_eq!(gate["result"], "pass", "{gate}");
    assert!(gate["lines"][0].as_str().is_some_and(|line| line.contains("within noise")), "{gate}");
    assert_eq!(noisy.report()["model_calls"].as_u64(), Some(50), "no confirmation re-run when the gate passes");

    // A real regression: three cases 5/5 → 0/5 fail it, named.
    let worse = run_against(&["--flaky", "c0:1", "--flaky", "c2:1", "--flaky", "c4:1"], &gated);
    assert_eq!(worse.code(), 1, "{}", worse.stderr());
    let gate = &worse.report()["eval_gate"];
    assert_eq!((gate["result"].as_str(), gate["fails"].as_bool()), (Some("fail"), Some(true)), "{gate}");
    assert!(gate["lines"][0].as_str().is_some_and(|line| line.contains("regression")), "{gate}");
    assert!(gate["pass_rate_delta"].as_f64().is_some_and(|delta| delta < -0.5), "{gate}");
    // Confirmed before the verdict: the three worsened cases ran 5 more times each.
    assert!(
        gate["lines"].as_array().is_some_and(|lines| lines
            .iter()
            .any(|line| line.as_str().is_some_and(|line| line.contains("re-running the 3 worsened")))),
        "{gate}"
    );
    assert_eq!(worse.report()["model_calls"].as_u64(), Some(50 + 30), "25 runs, then 15 confirming runs, 2 calls each");
    let summary = worse.file("summary.md");
    assert!(summary.contains("**Regression gate:** ❌ regression · fails the check"), "{summary}");
    assert!(summary.contains("**Since the baseline:** `openai:demo`: pass rate"), "the answer leads: {summary}");
    assert!(
        summary.contains("`c0` on `openai:demo`: pass 5/5 → fail 0/10"),
        "the flips are named, confirmation runs pooled: {summary}"
    );
    assert!(summary.contains("This suite detects a drop of"), "the suite's power is stated: {summary}");

    // `--confirm false`: the same regression decided on the first runs, no re-run, and said so.
    let unconfirmed = run_against(
        &["--flaky", "c0:1", "--flaky", "c2:1", "--flaky", "c4:1"],
        &["--baseline", utf8(&baseline), "--fail-on-evals", "regression", "--confirm", "false"],
    );
    assert_eq!(unconfirmed.code(), 1, "{}", unconfirmed.stderr());
    assert_eq!(unconfirmed.report()["model_calls"].as_u64(), Some(50), "no confirmation runs");
    assert!(
        unconfirmed.report()["eval_gate"]["lines"].to_string().contains("confirmation is off (--confirm false)"),
        "{}",
        unconfirmed.report()["eval_gate"]
    );

    // A team that accepts drops up to 0.9 (`--max-drop`): the same runs pass the gate.
    let tolerant = run_against(
        &["--flaky", "c0:1", "--flaky", "c2:1", "--flaky", "c4:1"],
        &["--baseline", utf8(&baseline), "--fail-on-evals", "regression", "--max-drop", "0.9"],
    );
    assert_eq!(tolerant.code(), 0, "{}", tolerant.stderr());
    assert_eq!(tolerant.report()["eval_gate"]["result"], "pass");

    // `never` reports the same regression without failing.
    let reported = run_against(
        &["--flaky", "c0:1", "--flaky", "c2:1", "--flaky", "c4:1"],
        &["--baseline", utf8(&baseline), "--fail-on-evals", "never"],
    );
    assert_eq!(reported.code(), 0, "{}", reported.stderr());
    assert_eq!(reported.report()["eval_gate"]["result"], "fail");

    // `--fail-on never` overrides a gate that fails: exit 0, and nothing says the check fails.
    let overridden = run_against(
        &["--flaky", "c0:1", "--flaky", "c2:1", "--flaky", "c4:1"],
        &["--baseline", utf8(&baseline), "--fail-on-evals", "regression", "--fail-on", "never"],
    );
    assert_eq!(overridden.code(), 0, "{}", overridden.stderr());
    let report = overridden.report();
    assert_eq!((report["eval_gate"]["fails"].as_bool(), report["verdict"].as_str()), (Some(true), Some("pass")));
    assert_eq!(report["gate"]["result"], "pass", "{}", report["gate"]);
    let summary = overridden.file("summary.md");
    assert!(!summary.contains("fails the check"), "{summary}");
    assert!(summary.contains("would fail the check, but `fail-on: never` only reports"), "{summary}");
    assert!(summary.starts_with("## ✅ pass (`fail-on: never`: "), "{summary}");
}

#[test]
fn a_regression_replayed_from_cassettes_is_not_re_run_to_confirm_and_says_so() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), FIVE_CASES);
    let cassettes = dir.path().join("cassettes");
    let events = dir.path().join("events.jsonl");
    let server = DemoServer::start(&[]);
    let common = ["--server-url", &server.url, "--golden-set", utf8(&set), "--model", "openai:demo", "--layers", "1"];
    let live =
        |flaky: &[&str], extra: &[&str]| on_a_demo_model(&server, &set, flaky, &[&["--layers", "1"], extra].concat());
    let green = live(&[], &[]);
    let baseline = kept_as_baseline(&green, dir.path());
    // Three cases 5/5 → 0/5, recorded without a baseline (no gate, no re-run while recording).
    let recorded = live(
        &["--flaky", "c0:1", "--flaky", "c2:1", "--flaky", "c4:1"],
        &["--cassettes", utf8(&cassettes), "--record", "--fail-on-evals", "never", "--events", utf8(&events)],
    );
    assert_eq!(recorded.code(), 0, "{}", recorded.stderr());
    // The notice says plainly what the cassettes keep, before the user commits them.
    let notices = std::fs::read_to_string(&events).expect("the events were written");
    assert!(
        notices.contains(
            "recording: cassettes keep the prompts, the model's answers and the tool results of this run in full \
             (no size limit): review them before committing"
        ),
        "{notices}"
    );

    let mut args = common.to_vec();
    args.extend_from_slice(&[
        "--cassettes",
        utf8(&cassettes),
        "--baseline",
        utf8(&baseline),
        "--fail-on-evals",
        "regression",
    ]);
    let replayed = run_layer1(&args, &[]);
    assert_eq!(replayed.code(), 1, "the unconfirmed regression still fails: {}", replayed.stderr());
    let report = replayed.report();
    let gate = &report["eval_gate"];
    assert_eq!((gate["result"].as_str(), gate["fails"].as_bool()), (Some("fail"), Some(true)), "{gate}");
    assert_eq!(report["model_calls"], recorded.report()["model_calls"], "no confirming runs: {gate}");
    let lines: Vec<&str> = gate["lines"].as_array().expect("lines").iter().filter_map(Value::as_str).collect();
    assert!(
        lines.iter().any(|line| line.contains("not confirmed by a re-run (3 worsened case(s) × model(s))")
            && line.contains("replayed from cassettes")),
        "{lines:?}"
    );
    assert!(!lines.iter().any(|line| line.contains("was confirmed by re-running")), "{lines:?}");
}

#[test]
fn a_local_cache_without_a_baseline_claims_no_pass_and_an_edited_case_is_a_changed_case() {
    let dir = tempfile::tempdir().expect("temp dir");
    let two = "version: 1\ndefaults: {runs: 2}\ncases:\n  - id: c0\n    prompt: \"Echo my region, eu.\"\n    expect_tool: test_header_param\n    expect_args: {region: eu}\n  - id: c1\n    prompt: \"Give me the short text.\"\n    expect_tool: test_simple_text\n";
    let set = write_set(dir.path(), two);
    let cache = dir.path().join("cache");
    let server = DemoServer::start(&[]);
    // One model for every run: the cache and the baseline are kept per endpoint.
    let model = DemoModel::start(&set, &[]);
    let run = |extra: &[&str]| -> Run {
        let mut args = vec![
            "--server-url",
            &server.url,
            "--golden-set",
            utf8(&set),
            "--model",
            "openai:demo",
            "--layers",
            "1",
            "--cache-dir",
            utf8(&cache),
        ];
        args.extend_from_slice(extra);
        let run = run_layer1(&args, &[("OPENAI_BASE_URL", &model.openai_url()), ("OPENAI_API_KEY", OPENAI_CANARY)]);
        assert_eq!(run.code(), 0, "{}", run.stderr());
        run
    };
    let first = run(&[]);
    let gate = &first.report()["eval_gate"];
    assert_eq!(gate["result"], "no-baseline", "{gate}");
    assert_eq!(gate["baseline"], "none stored yet (--accept-baseline stores this run's results as one)", "{gate}");

    // Every verdict reused, nothing stored: no change since they were measured, but no pass.
    let reused = run(&[]);
    let gate = &reused.report()["eval_gate"];
    assert_eq!(reused.report()["model_calls"], 0);
    assert_eq!(gate["result"], "no-baseline", "{gate}");
    assert_eq!(
        gate["lines"],
        json!([
            "`openai:demo`: no change since these verdicts were measured (every verdict reused from the cache); no baseline to compare with"
        ])
    );
    let summary = reused.file("summary.md");
    assert!(!summary.contains("**Since the baseline:**"), "{summary}");

    // Accepted, then reused against what was accepted: no change, a pass.
    run(&["--accept-baseline"]);
    let accepted = run(&[]);
    let gate = &accepted.report()["eval_gate"];
    assert_eq!(gate["result"], "pass", "{gate}");
    assert_eq!(
        gate["lines"],
        json!(["`openai:demo`: no change — every verdict was reused from the cache, as the baseline measured it"])
    );
    let label = gate["baseline"].as_str().unwrap_or_default();
    assert!(
        label.starts_with("the last 1 stored run(s) (1 accepted with --accept-baseline / input accept-baseline)"),
        "{label}"
    );

    // One case edited: it is a changed case, not a new one (the model, scripted from the set
    // as it was, fails it: `never` keeps the exit status 0).
    std::fs::write(&set, two.replace("Give me the short text.", "Give me the short text, please.")).expect("edit");
    let edited = run(&["--fail-on-evals", "never"]);
    let gate = &edited.report()["eval_gate"];
    assert_eq!(gate["not_comparable"], json!({"cached": 1, "changed case": 1}), "{gate}");
    assert_eq!(gate["not_comparable_cases"], json!({"changed case": ["`c1` on `openai:demo`"]}), "{gate}");
    let summary = edited.file("summary.md");
    assert!(summary.contains("1 changed case (`c1` on `openai:demo`)"), "the summary names it: {summary}");
}

#[test]
fn cache_key_auto_names_the_paths_that_changed_it_since_the_last_stored_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let workspace = dir.path().join("workspace");
    std::fs::create_dir_all(workspace.join("golden")).expect("dirs");
    std::fs::create_dir_all(workspace.join("src")).expect("dirs");
    std::fs::write(workspace.join("src/server.py"), "print('the server')").expect("write");
    let set = workspace.join("golden/tasks.yaml");
    std::fs::write(&set, ONE_CASE).expect("set");
    let server = DemoServer::start(&[]);
    let model = DemoModel::start(&set, &[]);
    let out = dir.path().join("out");
    // From the workspace, as the Action runs: `auto` hashes the working directory.
    let run = || -> String {
        let output = Command::new(binary())
            .current_dir(&workspace)
            .args(["run", "--server-url", &server.url, "--golden-set", "golden/tasks.yaml", "--model", "openai:demo"])
            .args(["--layers", "1", "--cache-dir", ".mcp-eval-cache", "--cache-key", "auto", "--out"])
            .arg(&out)
            .envs([("OPENAI_BASE_URL", model.openai_url().as_str()), ("OPENAI_API_KEY", OPENAI_CANARY)])
            .envs([("ANTHROPIC_API_KEY", ""), ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")])
            .stdin(Stdio::null())
            .output()
            .expect("run mcp-eval");
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        stderr
    };
    let first = run();
    assert!(!first.contains("cache key (auto)"), "no run stored before this one: {first}");
    let manifest = std::fs::read_to_string(workspace.join(".mcp-eval-cache/workspace-manifest.json"))
        .expect("the manifest is stored beside the verdicts");
    assert!(
        manifest.contains("\"src/server.py\"") && !manifest.contains("the server"),
        "paths, not contents: {manifest}"
    );

    // One log file appears in the working directory: the key moves, and the run says why.
    std::fs::create_dir_all(workspace.join("logs")).expect("dirs");
    std::fs::write(workspace.join("logs/run.log"), "a log line").expect("write");
    let second = run();
    assert!(
        second.contains(
            "layer 1: the cache key (auto) changed since the last stored run: `logs/run.log` added; cached verdicts keyed on the old workspace are not reused"
        ),
        "{second}"
    );
    assert!(!second.contains(", cached)"), "nothing reused: {second}");
    // Issue 40: the summary names the file that moved the key too, not only the log.
    let summary = std::fs::read_to_string(out.join("summary.md")).expect("summary.md");
    assert!(
        summary.contains("cache key (auto) changed since the last stored run")
            && summary.contains("`logs/run.log` added"),
        "the summary names the file that moved the key: {summary}"
    );
    let notes = std::fs::read_to_string(out.join("report.json")).expect("report.json");
    assert!(notes.contains("`logs/run.log` added"), "and report.json's notes: {notes}");

    // Unchanged since the run that stored: reused, and nothing new is said.
    let third = run();
    assert!(!third.contains("cache key (auto)"), "{third}");
    let summary = std::fs::read_to_string(out.join("summary.md")).expect("summary.md");
    assert!(!summary.contains("cache key (auto) changed"), "nothing moved it this time: {summary}");
    assert!(third.contains("pass (2/2, cached)"), "reused: {third}");

    // Seven paths move it: five named, the rest counted.
    for index in 0..7 {
        std::fs::write(workspace.join(format!("src/tool_{index}.py")), format!("# tool {index}")).expect("write");
    }
    let fourth = run();
    assert!(
        fourth.contains(
            "layer 1: the cache key (auto) changed since the last stored run: `src/tool_0.py` added, `src/tool_1.py` added, `src/tool_2.py` added, `src/tool_3.py` added, `src/tool_4.py` added (+2 more); cached verdicts keyed on the old workspace are not reused"
        ),
        "{fourth}"
    );

    // A corrupt manifest never fails the run: a short notice, and the run stores a new one.
    std::fs::write(workspace.join(".mcp-eval-cache/workspace-manifest.json"), "{not json").expect("corrupt");
    std::fs::write(workspace.join("src/server.py"), "print('changed')").expect("write");
    let fifth = run();
    assert!(fifth.contains("workspace-manifest.json is not readable"), "{fifth}");
    assert!(fifth.contains("the paths that moved the cache key are not named"), "{fifth}");
    let rewritten = std::fs::read_to_string(workspace.join(".mcp-eval-cache/workspace-manifest.json")).expect("read");
    assert!(rewritten.contains("\"src/tool_6.py\""), "replaced by this run's: {rewritten}");
}

/// Runs `mcp-eval judge calibrate ARGS` from the repository root.
fn calibrate(args: &[&str]) -> std::process::Output {
    Command::new(binary())
        .args(["judge", "calibrate"])
        .args(args)
        .current_dir(crate::support::repo_root())
        .stdin(Stdio::null())
        .output()
        .expect("run mcp-eval judge calibrate")
}

#[test]
fn the_shipped_calibration_set_replays_offline_to_its_recorded_numbers() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("calibration.json");
    let output = calibrate(&[
        "golden/calibration/demo-labels.yaml",
        "--judge-model",
        "replay:demo:judge",
        "--cassettes",
        "golden/calibration/cassettes",
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("TPR 1.000  judge pass | human pass: 6 of 6"), "{stdout}");
    assert!(stdout.contains("TNR 0.333  judge fail | human fail: 6 of 18"), "{stdout}");
    let measured: Value = serde_json::from_str(&std::fs::read_to_string(&out).expect("written")).expect("JSON");
    let shipped: Value = serde_json::from_str(
        &std::fs::read_to_string(crate::support::repo_root().join("golden/calibration/demo-judge-calibration.json"))
            .expect("shipped"),
    )
    .expect("JSON");
    for key in ["judge_model", "judge_prompt_version", "tpr", "tnr", "positives", "negatives", "rubrics_sha256"] {
        assert_eq!(measured[key], shipped[key], "{key}");
    }
}

#[test]
fn a_labels_file_with_a_bad_field_is_exit_2_naming_file_line_and_field() {
    let dir = tempfile::tempdir().expect("temp dir");
    let labels = dir.path().join("labels.yaml");
    std::fs::write(
        &labels,
        "version: 1\nreport: runs.json\nlabels:\n  - {case: c, model: 'p:m', run: one, criterion: x, human: pass}\n",
    )
    .expect("write");
    let output = calibrate(&[labels.to_str().expect("utf-8"), "--judge-model", "replay:demo:judge"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("labels.yaml:4:34: labels[0].run: expected a trial number (1 or more)"), "{stderr}");
}

#[test]
fn the_demo_reports_its_judge_rate_corrected_with_a_matching_calibration_and_uncalibrated_otherwise() {
    let root = crate::support::repo_root();
    let shipped = root.join("golden/calibration/demo-judge-calibration.json");
    let run = run_with_env(&["--demo", "--layers", "1", "--judge-calibration", shipped.to_str().expect("utf-8")], &[]);
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let calibration = &run.report()["judge_calibration"];
    assert_eq!(calibration["calibrated"], true, "{calibration}");
    // The demo judge passed 5 of 5 runs: (1 + 1/3 − 1) / (1 + 1/3 − 1) = 1.
    let rate = &calibration["rates"][0];
    assert_eq!((rate["judged_runs"].as_u64(), rate["passed_runs"].as_u64()), (Some(5), Some(5)), "{rate}");
    assert!((rate["corrected"].as_f64().expect("corrected") - 1.0).abs() < 1e-12, "{rate}");
    assert!(run.file("summary.md").contains("Rogan–Gladen corrected: **100%** (TPR 1.00, TNR 0.33, n = 6 + 18"));

    let notes = run.report()["layer1_notes"].to_string();
    // The demo set gained cases since the file was measured (its hash differs), but not the
    // rubric it was measured on: no warning.
    assert!(!notes.contains("measured on other rubrics"), "{notes}");

    // Measured on another version of the rubric: still applied, with a warning.
    let dir = tempfile::tempdir().expect("temp dir");
    let mut moved: Value = serde_json::from_str(&std::fs::read_to_string(&shipped).expect("shipped")).expect("JSON");
    moved["rubrics_sha256"] = json!("sha256:0000");
    let moved_path = dir.path().join("moved.json");
    std::fs::write(&moved_path, moved.to_string()).expect("write");
    let run =
        run_with_env(&["--demo", "--layers", "1", "--judge-calibration", moved_path.to_str().expect("utf-8")], &[]);
    assert_eq!(run.report()["judge_calibration"]["calibrated"], true);
    let notes = run.report()["layer1_notes"].to_string();
    assert!(notes.contains("measured on other rubrics than this golden set's"), "{notes}");

    // The same numbers measured on another judge do not apply to this one.
    let mut other: Value = serde_json::from_str(&std::fs::read_to_string(&shipped).expect("shipped")).expect("JSON");
    other["judge_model"] = json!("openai:gpt-4.1");
    let other_path = dir.path().join("other.json");
    std::fs::write(&other_path, other.to_string()).expect("write");
    let run =
        run_with_env(&["--demo", "--layers", "1", "--judge-calibration", other_path.to_str().expect("utf-8")], &[]);
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let calibration = &run.report()["judge_calibration"];
    assert_eq!(calibration["calibrated"], false);
    assert_eq!(
        calibration["reason"], "the calibration file measured openai:gpt-4.1, not the judge replay:demo:judge",
        "{calibration}"
    );
    assert!(calibration["rates"][0]["corrected"].is_null());
    assert!(run.file("summary.md").contains("uncalibrated: the calibration file measured openai:gpt-4.1"));

    // A file that is no calibration is an input error.
    std::fs::write(&other_path, "[]").expect("write");
    let run =
        run_with_env(&["--demo", "--layers", "1", "--judge-calibration", other_path.to_str().expect("utf-8")], &[]);
    assert_eq!(run.code(), 2, "{}", run.stderr());
}

/// `mcp-eval run ARGS` without `--quiet` (its notices and last line on stderr), with no provider
/// key set unless `vars` sets one.
pub(crate) fn run_loud(args: &[&str], vars: &[(&str, &str)]) -> Run {
    let mut all = vec![("OPENAI_API_KEY", ""), ("ANTHROPIC_API_KEY", ""), ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")];
    all.extend_from_slice(vars);
    run_loud_with_env(args, &all)
}

#[test]
fn a_golden_set_naming_a_tool_the_server_lacks_reports_an_error_never_a_pass() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), &ONE_CASE.replace("test_header_param", "test_header_parm"));
    let server = DemoServer::start(&[]);
    let run = run_loud(
        &["--server-url", &server.url, "--golden-set", utf8(&set), "--model", "openai:x"],
        &[("OPENAI_API_KEY", OPENAI_CANARY)],
    );
    assert_eq!(run.code(), 2, "{}", run.stderr());
    let report = run.report();
    assert_eq!(report["verdict"], "error", "{report}");
    assert_eq!(report["layers"], json!([0]), "layer 1 did not run");
    assert_eq!(report["models"], json!(["openai:x"]), "the models asked for are listed");
    let not_run = report["layer1_not_run"].as_str().unwrap_or_default();
    assert!(not_run.starts_with("invalid input: ") && not_run.contains("test_header_parm"), "{not_run}");
    let stderr = run.stderr();
    let last = stderr.lines().last().unwrap_or_default();
    assert!(last.starts_with("mcp-eval: error:") && !last.contains("pass:"), "{stderr}");
    assert!(run.file("summary.md").starts_with("## ⚠️ error: layer 1 refused its input"));
}

#[test]
fn a_golden_set_without_a_model_says_layer_1_did_not_run_and_why() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), ONE_CASE);
    let server = DemoServer::start(&[]);
    let run = run_loud(&["--server-url", &server.url, "--golden-set", utf8(&set)], &[]);
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let stderr = run.stderr();
    assert!(stderr.contains("layer 1 did not run: no model was given (--model PROVIDER:MODEL"), "{stderr}");
    let report = run.report();
    assert_eq!(report["layers"], json!([0]));
    assert!(
        report["layer1_not_run"].as_str().is_some_and(|why| why.starts_with("no model was given")),
        "{}",
        report["layer1_not_run"]
    );
}

#[test]
fn the_demo_says_it_ignores_the_judge_model_given() {
    let run = run_loud(&["--demo", "--judge-model", "openai:gpt-4o"], &[]);
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let stderr = run.stderr();
    assert!(stderr.contains("--judge-model openai:gpt-4o is ignored"), "{stderr}");
}

#[test]
fn a_confirmation_re_runs_each_model_on_its_own_worsened_cases_only() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), FIVE_CASES);
    let server = DemoServer::start(&[]);
    // Two models on two wires, each with its own demo model, made worse on different cases.
    let run_against = |openai_flaky: &[&str], anthropic_flaky: &[&str], extra: &[&str]| {
        on_both_wires(&server.url, &set, openai_flaky, anthropic_flaky, &[&["--layers", "1"], extra].concat())
    };
    let green = run_against(&[], &[], &[]);
    let baseline = kept_as_baseline(&green, dir.path());
    let first_calls = green.report()["model_calls"].as_u64().expect("calls");

    let worse = run_against(
        &["--flaky", "c0:1", "--flaky", "c2:1", "--flaky", "c4:1"],
        &["--flaky", "c1:1"],
        &["--baseline", utf8(&baseline), "--fail-on-evals", "regression"],
    );
    assert_eq!(worse.code(), 1, "{}", worse.stderr());
    // c0, c2, c4 on openai:demo and c1 on anthropic:demo: 4 pairs × 5 runs × 2 calls — not the
    // 4 cases on both models (80 calls).
    assert_eq!(worse.report()["model_calls"].as_u64(), Some(first_calls + 40), "{}", worse.report()["eval_gate"]);
}

#[test]
fn a_baseline_graded_by_another_version_is_not_compared_never_a_regression() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), ONE_CASE);
    let server = DemoServer::start(&[]);
    let run_against =
        |flaky: &[&str], extra: &[&str]| on_a_demo_model(&server, &set, flaky, &[&["--layers", "1"], extra].concat());
    let green = run_against(&[], &[]);
    assert_eq!(green.code(), 0, "{}", green.stderr());
    let mut report: Value = serde_json::from_str(&green.file("report.json")).expect("report.json");
    let version = report["evals"][0]["grader_version"].as_u64().expect("each verdict says its grader version");
    assert!(version >= 2, "refused calls are graded since version 2: {version}");
    // The same green report, as the graders before this version would have written it.
    for eval in report["evals"].as_array_mut().expect("evals") {
        eval["grader_version"] = json!(version - 1);
    }
    let baseline = dir.path().join("old-graders.json");
    std::fs::write(&baseline, report.to_string()).expect("write the baseline");

    // 2/2 → 0/2 would be a regression against records of this version; not against these.
    let worse =
        run_against(&["--flaky", "select:1"], &["--baseline", utf8(&baseline), "--fail-on-evals", "regression"]);
    assert_eq!(outcome(&worse, "select", "openai:demo"), outcome_of("fail", 0, 2));
    assert_eq!(worse.code(), 0, "no regression is reported: {}", worse.stderr());
    let gate = &worse.report()["eval_gate"];
    assert_eq!(gate["result"], "no-baseline", "{gate}");
    assert_eq!(gate["not_comparable"], json!({"graded by another version": 1}), "{gate}");
    let summary = worse.file("summary.md");
    assert!(summary.contains("Not compared: 1 graded by another version (`select` on `openai:demo`)"), "{summary}");
    assert!(!summary.contains("pass 2/2 → fail 0/2"), "no flip against another version: {summary}");
}

#[test]
fn the_model_call_cap_holds_across_the_confirmation_re_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), FIVE_CASES);
    let server = DemoServer::start(&[]);
    let run_against =
        |flaky: &[&str], extra: &[&str]| on_a_demo_model(&server, &set, flaky, &[&["--layers", "1"], extra].concat());
    let green = run_against(&[], &[]);
    let baseline = kept_as_baseline(&green, dir.path());
    // The first runs take 50 calls of the 60; the confirmation of the three worsened cases would
    // take 30 more (80 in all): one budget stops it at 60.
    let capped = run_against(
        &["--flaky", "c0:1", "--flaky", "c2:1", "--flaky", "c4:1"],
        &["--baseline", utf8(&baseline), "--fail-on-evals", "regression", "--max-model-calls", "60"],
    );
    let report = capped.report();
    assert_eq!(report["model_calls"].as_u64(), Some(60), "{}", capped.stderr());
    assert_eq!(report["call_cap_reached"], true, "{report}");
    assert_eq!(capped.code(), 6, "the cap stopped the confirmation: {}", capped.stderr());
    let notes = report["layer1_notes"].to_string();
    assert!(notes.contains("model-call cap (60 calls"), "{notes}");
}

#[test]
fn a_confirmed_borderline_soft_case_shows_its_pooled_counts_in_the_report_junit_and_summary() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), FIVE_CASES);
    let server = DemoServer::start(&[]);
    let run_against =
        |flaky: &[&str], extra: &[&str]| on_a_demo_model(&server, &set, flaky, &[&["--layers", "1"], extra].concat());
    let green = run_against(&[], &[]);
    let baseline = kept_as_baseline(&green, dir.path());
    // Three cases fall to 0/5 and trip the gate; `c1` goes wrong on its 5th and 10th run: 4/5 at
    // first (worse than 5/5, so confirmed too), then 4/5 again — 8 of 10 pooled, 8 needed.
    let worse = run_against(
        &["--flaky", "c0:1", "--flaky", "c2:1", "--flaky", "c4:1", "--flaky", "c1:5"],
        &["--baseline", utf8(&baseline), "--fail-on-evals", "regression"],
    );
    assert_eq!(worse.code(), 1, "{}", worse.stderr());
    let report = worse.report();
    assert_eq!(report["model_calls"].as_u64(), Some(50 + 40), "four cases confirmed: {}", report["eval_gate"]);
    let borderline = eval(&worse, "c1", "openai:demo");
    let counts = |eval: &Value| {
        (
            eval["status"].as_str().unwrap_or_default().to_owned(),
            eval["passed"].as_u64(),
            eval["completed"].as_u64(),
            eval["runs"].as_u64(),
            eval["threshold"].as_u64(),
        )
    };
    assert_eq!(counts(borderline), ("pass".into(), Some(8), Some(10), Some(10), Some(8)), "{borderline}");
    let runs: Vec<u64> =
        borderline["traces"].as_array().expect("traces").iter().filter_map(|trace| trace["run"].as_u64()).collect();
    assert_eq!(runs, (1..=10).collect::<Vec<u64>>(), "the confirmation runs are pooled into the traces");
    let fallen = eval(&worse, "c0", "openai:demo");
    assert_eq!(counts(fallen), ("fail".into(), Some(0), Some(10), Some(10), Some(8)), "{fallen}");
    let junit = worse.file("junit.xml");
    assert!(junit.contains("8 of 10 trials passed, 8 needed"), "{junit}");
    assert!(junit.contains("0 of 10 trials passed, 8 needed"), "{junit}");
    let summary = worse.file("summary.md");
    assert!(summary.contains("✅ 8/10") && summary.contains("❌ 0/10"), "{summary}");
    assert!(summary.contains("`c0` on `openai:demo`: pass 5/5 → fail 0/10"), "{summary}");
}

/// Two cases for the Python SDK's time server, whose `get_current_time` answers with the
/// current second: a recording of it differs from every later run's result.
const TIME_SET: &str = r#"version: 1
defaults: {runs: 2}
cases:
  - id: tokyo-now
    prompt: "What time is it in Tokyo right now?"
    expect_tool: get_current_time
    expect_args: {timezone: Asia/Tokyo}
  - id: no-tool
    prompt: "Thanks, that's all."
    negative: true
"#;

#[test]
fn a_set_recorded_on_a_server_whose_results_change_replays_tolerantly_and_the_exact_match_misses() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), TIME_SET);
    let cassettes = dir.path().join("cassettes");
    let command = crate::interop::stdio_command("py-time-stdio");
    let model = DemoModel::start(&set, &[]);
    let common = ["--server-cmd", &command, "--golden-set", utf8(&set), "--model", "openai:demo", "--layers", "1"];
    let mut record = common.to_vec();
    record.extend_from_slice(&["--cassettes", utf8(&cassettes), "--record"]);
    let recorded = run_layer1(&record, &[("OPENAI_BASE_URL", &model.openai_url()), ("OPENAI_API_KEY", OPENAI_CANARY)]);
    assert_eq!(recorded.code(), 0, "{}", recorded.stderr());
    model.stop();
    // The server's answer carries the second: wait for it to change.
    std::thread::sleep(std::time::Duration::from_millis(1_100));

    let mut replay = common.to_vec();
    replay.extend_from_slice(&["--cassettes", utf8(&cassettes)]);
    let tolerant = run_layer1(&replay, &[]);
    assert_eq!(tolerant.code(), 0, "no key, no model, the results changed: {}", tolerant.stderr());
    assert_eq!(outcome(&tolerant, "tokyo-now", "openai:demo"), outcome_of("pass", 2, 2));
    let traces = eval(&tolerant, "tokyo-now", "openai:demo")["traces"].as_array().expect("traces").clone();
    assert!(traces.iter().all(|trace| trace["result_changed"].as_u64() == Some(1)), "{traces:?}");
    let untouched = eval(&tolerant, "no-tool", "openai:demo")["traces"].as_array().expect("traces").clone();
    assert!(untouched.iter().all(|trace| trace.get("result_changed").is_none()), "no tool, no change: {untouched:?}");
    let notes = tolerant.report()["layer1_notes"].to_string();
    assert!(notes.contains("2 trial(s) were replayed over tool results that differed from the recording"), "{notes}");
    assert!(tolerant.file("summary.md").contains("replayed over tool results that differed"));

    replay.extend_from_slice(&["--replay-match", "exact"]);
    let exact = run_layer1(&replay, &[]);
    assert_eq!(exact.code(), 5, "the exact match misses on the changed result: {}", exact.stderr());
    let missed = eval(&exact, "tokyo-now", "openai:demo");
    assert_eq!(missed["status"], "error", "{missed}");
    let reason = missed["traces"][0]["reason"].as_str().unwrap_or_default().to_owned();
    assert!(reason.contains("a tool result changed?"), "{reason}");
    assert_eq!(outcome(&exact, "no-tool", "openai:demo"), outcome_of("pass", 2, 2), "nothing changed there");
}
