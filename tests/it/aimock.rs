//! Our model-provider adapters cross-checked against a mock written by others: aimock
//! (`@copilotkit/aimock`, installed pinned by `scripts/install-servers.sh` into `.interop/`),
//! started on loopback with `--strict` and a fixture file written by each test. The real binary
//! runs layer 1 against the demo server with a provider pointed at it, once per wire (OpenAI Chat
//! Completions and Anthropic Messages).
//!
//! The fixtures match on what our requests must carry (the model, the user's text, the tool
//! offered under its name, and, on the second turn, the tool result under the id aimock gave the
//! call), so a request that drifts from the wire format is a miss; `--strict` turns a miss into a
//! 503, which fails the case.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use crate::support::{DemoServer, Run, repo_root, run_with_env};

/// The key variable of the test provider, and its value (aimock accepts any key).
const KEY_VAR: &str = "AIMOCK_KEY";
const KEY: &str = "aimock-test-key-5f1c";

/// Text every prompt carries, which the fixtures match.
const PROMPT_TAG: &str = "aimock-region";

/// The node binary and aimock's server script; fails the test, with the fix, when they are not
/// installed.
fn aimock_command() -> (PathBuf, PathBuf) {
    let interop = repo_root().join(".interop");
    let node = interop.join("bin").join("node22");
    let script = interop.join("node/node_modules/@copilotkit/aimock/dist/cli.js");
    assert!(
        node.exists() && script.is_file(),
        "aimock is not installed in {}: run `scripts/install-servers.sh` first",
        interop.display()
    );
    (node, script)
}

/// An aimock server on a loopback port it chose; killed on drop.
struct Aimock {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    url: String,
}

impl Aimock {
    /// Starts aimock with these fixtures (`{"fixtures": [...]}`), `--strict`, and waits for the
    /// line that names its URL.
    fn start(dir: &Path, fixtures: &Value) -> Self {
        let (node, script) = aimock_command();
        let file = dir.join("fixtures.json");
        std::fs::write(&file, serde_json::to_vec_pretty(fixtures).expect("fixtures as JSON")).expect("write fixtures");
        let mut child = Command::new(node)
            .arg(script)
            .args(["--port", "0", "--host", "127.0.0.1", "--strict", "--validate-on-load", "--fixtures"])
            .arg(&file)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start aimock");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut seen = String::new();
        let url = loop {
            let mut line = String::new();
            if stdout.read_line(&mut line).expect("read aimock's output") == 0 {
                let mut stderr = String::new();
                let _ = child.stderr.take().expect("stderr").read_to_string(&mut stderr);
                let _ = child.wait();
                panic!("aimock exited before it listened:\n{seen}{stderr}");
            }
            seen.push_str(&line);
            if let Some((_, url)) = line.split_once("listening on ") {
                break url.trim().to_owned();
            }
        };
        assert!(url.starts_with("http://127.0.0.1:"), "unexpected aimock URL: {url:?}");
        // Keep draining its log so it never blocks on a full pipe.
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        if let Some(mut stderr) = child.stderr.take() {
            std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        }
        Self { child, url }
    }
}

impl Drop for Aimock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One of our two wires, as the test configures it.
#[derive(Clone, Copy, Debug)]
enum Wire {
    OpenAi,
    Anthropic,
}

impl Wire {
    /// The `api` of the provider entry.
    fn api(self) -> &'static str {
        match self {
            Wire::OpenAi => "openai",
            Wire::Anthropic => "anthropic",
        }
    }

    /// The `base_url` for aimock at `url` (Chat Completions roots carry `/v1`, Messages' do not).
    fn base_url(self, url: &str) -> String {
        match self {
            Wire::OpenAi => format!("{url}/v1"),
            Wire::Anthropic => url.to_owned(),
        }
    }

    /// The model name sent (and matched by the fixtures).
    fn model(self) -> &'static str {
        match self {
            Wire::OpenAi => "gpt-test",
            Wire::Anthropic => "claude-test",
        }
    }

    /// The call id aimock gives the scripted tool call (and the fixtures expect back).
    fn call_id(self) -> &'static str {
        match self {
            Wire::OpenAi => "call_aimock_region",
            Wire::Anthropic => "toolu_aimock_region",
        }
    }
}

/// The first turn: the prompt, with `test_header_param` offered and no tool result yet.
fn first_turn(wire: Wire) -> Value {
    json!({"model": wire.model(), "userMessage": PROMPT_TAG, "toolName": "test_header_param", "hasToolResult": false})
}

/// The scripted tool call of the first turn.
fn tool_call(wire: Wire) -> Value {
    json!({"toolCalls": [{"id": wire.call_id(), "name": "test_header_param", "arguments": {"region": "eu"}}]})
}

/// The second turn: the tool result, under the call's id, with the demo server's answer.
fn final_answer(wire: Wire) -> Value {
    json!({
        "match": {"model": wire.model(), "toolCallId": wire.call_id(), "toolResultContains": "Region: eu"},
        "response": {"content": "Your region is eu."}
    })
}

/// Runs layer 1 of `mcp-eval` against the demo server with the model behind aimock, `runs`
/// runs of one case that expects `test_header_param` with `region: eu`.
fn run_layer1(wire: Wire, fixtures: &[Value], runs: u32) -> Run {
    run_layer1_with(wire, fixtures, runs, "{ match: exact, value: eu }", &[])
}

/// [`run_layer1`] with the `region` argument graded by `matcher` (YAML) and more flags.
fn run_layer1_with(wire: Wire, fixtures: &[Value], runs: u32, matcher: &str, flags: &[&str]) -> Run {
    let dir = tempfile::tempdir().expect("temp dir");
    let aimock = Aimock::start(dir.path(), &json!({ "fixtures": fixtures }));
    let server = DemoServer::start(&[]);
    let set = dir.path().join("set.yaml");
    std::fs::write(
        &set,
        format!(
            "version: 1\ncases:\n  - id: region-echo\n    prompt: \"Echo my region back to me ({PROMPT_TAG}).\"\n    kind: hard\n    expect_tool: test_header_param\n    expect_args:\n      region: {matcher}\n"
        ),
    )
    .expect("write the golden set");
    let config = dir.path().join("mcp-eval.yaml");
    std::fs::write(
        &config,
        format!(
            "providers:\n  - id: aimock\n    api: {}\n    base_url: {}\n    api_key_env: {KEY_VAR}\n",
            wire.api(),
            wire.base_url(&aimock.url)
        ),
    )
    .expect("write the config");
    let model = format!("aimock:{}", wire.model());
    let runs = runs.to_string();
    let mut args = vec![
        "--server-url",
        &server.url,
        "--layers",
        "1",
        "--golden-set",
        set.to_str().expect("utf-8 path"),
        "--model",
        &model,
        "--config",
        config.to_str().expect("utf-8 path"),
        "--runs",
        &runs,
    ];
    args.extend_from_slice(flags);
    let run = run_with_env(&args, &[(KEY_VAR, KEY)]);
    assert!(!run.stderr().contains("panicked"), "mcp-eval crashed: {}", run.stderr());
    assert!(!run.everything().contains(KEY), "the key leaked");
    drop(aimock);
    run
}

/// The one eval of a run's report.
fn the_eval(run: &Run) -> &Value {
    let evals = run.report()["evals"].as_array().unwrap_or_else(|| panic!("no evals: {}", run.stderr()));
    assert_eq!(evals.len(), 1, "{evals:?}");
    &evals[0]
}

/// Asserts every run passed with `test_header_param` called with `region: eu` and answered
/// `Region: eu`, and that each run made `calls_per_run` model calls (retries included).
fn assert_passed(run: &Run, runs: u64, calls_per_run: &[u64]) {
    let eval = the_eval(run);
    assert_eq!(run.code(), 0, "{eval:#}\n{}", run.stderr());
    assert_eq!(eval["status"], "pass", "{eval:#}");
    assert_eq!(eval["runs"], runs, "{eval:#}");
    assert_eq!(eval["passed"], runs, "{eval:#}");
    let traces = eval["traces"].as_array().expect("traces");
    assert_eq!(traces.len() as u64, runs, "{eval:#}");
    let mut calls: Vec<u64> = traces.iter().map(|trace| trace["model_calls"].as_u64().expect("model_calls")).collect();
    calls.sort_unstable();
    assert_eq!(calls, calls_per_run, "model calls per run: {eval:#}");
    for trace in traces {
        assert_eq!(trace["ending"], "answer", "{trace:#}");
        assert_eq!(trace["answer"], "Your region is eu.", "{trace:#}");
        let tool_calls = trace["calls"].as_array().expect("calls");
        assert_eq!(tool_calls.len(), 1, "{trace:#}");
        let call = &tool_calls[0];
        assert_eq!(call["name"], "test_header_param", "{call:#}");
        assert_eq!(call["arguments"], json!({"region": "eu"}), "{call:#}");
        assert_eq!(call["sent"], true, "{call:#}");
        assert_eq!(call["is_error"], false, "{call:#}");
        assert_eq!(call["result"], "Region: eu", "{call:#}");
    }
}

/// A tool call, then a final text: every run passes with two model calls.
fn scripted_tool_call_passes(wire: Wire) {
    let fixtures = [json!({"match": first_turn(wire), "response": tool_call(wire)}), final_answer(wire)];
    let run = run_layer1(wire, &fixtures, 2);
    assert_passed(&run, 2, &[2, 2]);
}

#[test]
fn openai_a_scripted_tool_call_and_answer_pass() {
    scripted_tool_call_passes(Wire::OpenAi);
}

#[test]
fn anthropic_a_scripted_tool_call_and_answer_pass() {
    scripted_tool_call_passes(Wire::Anthropic);
}

/// A 429 (with `Retry-After: 1`) on the first request, then the script: our retry makes the run
/// pass, with three model calls.
fn a_rate_limit_is_retried(wire: Wire) {
    let mut limited = first_turn(wire);
    limited["sequenceIndex"] = json!(0);
    let fixtures = [
        json!({"match": limited, "response": {
            "error": {"message": "Rate limit exceeded", "type": "rate_limit_error", "code": "rate_limit_exceeded"},
            "status": 429
        }}),
        json!({"match": first_turn(wire), "response": tool_call(wire)}),
        final_answer(wire),
    ];
    let run = run_layer1(wire, &fixtures, 1);
    assert_passed(&run, 1, &[3]);
}

#[test]
fn openai_a_rate_limit_is_retried_and_the_run_passes() {
    a_rate_limit_is_retried(Wire::OpenAi);
}

#[test]
fn anthropic_a_rate_limit_is_retried_and_the_run_passes() {
    a_rate_limit_is_retried(Wire::Anthropic);
}

/// A body that is not JSON: the run is an `error` that the provider caused, the reports are
/// written, and the exit status is 5.
fn a_malformed_body_is_a_provider_error(wire: Wire) {
    let fixtures = [json!({"match": first_turn(wire), "response": tool_call(wire), "chaos": {"malformedRate": 1}})];
    let run = run_layer1(wire, &fixtures, 1);
    let eval = the_eval(&run);
    assert_eq!(run.code(), 5, "{eval:#}\n{}", run.stderr());
    assert_eq!(eval["status"], "error", "{eval:#}");
    let trace = &eval["traces"][0];
    assert_eq!(trace["status"], "error", "{trace:#}");
    assert_eq!(trace["ending"], "provider_error", "{trace:#}");
    // One attempt (not retried: the same request would get the same answer), and the run tried
    // once more at the end, as every run the provider spoiled is.
    assert_eq!(trace["model_calls"], 2, "{trace:#}");
    let reason = trace["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("after 1 attempt(s)") && reason.contains("unreadable") && reason.contains("not JSON"),
        "{reason}"
    );
    for name in ["junit.xml", "summary.md"] {
        assert!(!run.file(name).is_empty(), "{name} is empty");
    }
}

#[test]
fn openai_a_malformed_body_is_a_provider_error_with_exit_5() {
    a_malformed_body_is_a_provider_error(Wire::OpenAi);
}

#[test]
fn anthropic_a_malformed_body_is_a_provider_error_with_exit_5() {
    a_malformed_body_is_a_provider_error(Wire::Anthropic);
}

/// The `embedding` matcher against aimock's `/v1/embeddings`: aimock gives every text of a
/// request the fixture's one vector, so the texts `Europe` and `eu` (sent in one request) have
/// cosine 1 and the case passes; an error fixture (400, not retried) makes the case `error`,
/// never a pass.
#[test]
fn openai_embeddings_from_aimock_grade_an_embedding_matcher_and_an_error_is_no_pass() {
    let wire = Wire::OpenAi;
    let matcher = "{ match: embedding, value: Europe }";
    let flags = ["--embedding-model", "aimock:text-embedding-test"];
    let script = [json!({"match": first_turn(wire), "response": tool_call(wire)}), final_answer(wire)];
    let vector = json!({"match": {"inputText": "Europe"}, "response": {"embedding": [0.25, -0.5, 0.75]}});
    let fixtures: Vec<Value> = script.iter().cloned().chain([vector]).collect();
    let run = run_layer1_with(wire, &fixtures, 1, matcher, &flags);
    let eval = the_eval(&run);
    assert_eq!((run.code(), eval["status"].as_str()), (0, Some("pass")), "{eval:#}\n{}", run.stderr());
    let criteria = eval["traces"][0]["criteria"].to_string();
    assert!(criteria.contains("cosine 1.000"), "{criteria}");

    let refused = json!({"match": {"inputText": "Europe"}, "response": {
        "error": {"message": "embeddings are switched off", "type": "invalid_request_error"}, "status": 400}});
    let fixtures: Vec<Value> = script.iter().cloned().chain([refused]).collect();
    let run = run_layer1_with(wire, &fixtures, 1, matcher, &flags);
    let eval = the_eval(&run);
    assert_eq!((run.code(), eval["status"].as_str()), (5, Some("error")), "{eval:#}\n{}", run.stderr());
    let reason = eval["traces"][0]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("could not be graded") && reason.contains("embeddings are switched off"), "{reason}");
}
