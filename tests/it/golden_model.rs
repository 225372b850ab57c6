//! `mcp-eval golden init --model`: a scripted Chat Completions server on loopback plays the
//! model, answering by the tool each request is about; the written set must pass `golden check`
//! against the same server. Cassettes recorded from it replay without it.

use std::collections::BTreeMap;
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::support::{DemoServer, binary};

const CANARY: &str = "sk-canary-init-4c7e19b2d5";

/// What the scripted model answers about one tool (or, under [`NEGATIVES`], the negatives).
#[derive(Clone)]
enum Script {
    /// A `propose_case` call with this prompt and these arguments.
    Propose(&'static str, Value),
    /// A `propose_negative_prompts` call.
    Negatives(&'static [&'static str]),
    /// This HTTP status, with an error body, every time.
    Status(u16),
}

/// The key of the negatives' script.
const NEGATIVES: &str = "*negatives*";

/// A Chat Completions server on 127.0.0.1: it reads the user message of each request, finds the
/// `Tool name: NAME` line (or the negatives request) and answers from the script (`Status(500)`
/// for a tool it has no script for). Counts the requests per tool.
struct ScriptedModel {
    url: String,
    asked: Arc<Mutex<BTreeMap<String, usize>>>,
}

impl ScriptedModel {
    fn start(script: Vec<(&'static str, Script)>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
        let asked = Arc::new(Mutex::new(BTreeMap::new()));
        let log = asked.clone();
        let script: BTreeMap<&str, Script> = script.into_iter().collect();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let Some(body) = read_body(&mut stream) else { continue };
                let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
                let user = request["messages"]
                    .as_array()
                    .and_then(|messages| messages.iter().find(|message| message["role"] == "user"))
                    .and_then(|message| message["content"].as_str())
                    .unwrap_or_default()
                    .to_owned();
                let about = user
                    .lines()
                    .find_map(|line| line.strip_prefix("Tool name: "))
                    .map_or_else(|| NEGATIVES.to_owned(), str::to_owned);
                *log.lock().expect("lock").entry(about.clone()).or_insert(0) += 1;
                let (status, answer) = match script.get(about.as_str()).cloned().unwrap_or(Script::Status(500)) {
                    Script::Propose(prompt, arguments) => {
                        (200, call("propose_case", &json!({"prompt": prompt, "arguments": arguments})))
                    }
                    Script::Negatives(prompts) => (200, call("propose_negative_prompts", &json!({"prompts": prompts}))),
                    Script::Status(status) => {
                        (status, json!({"error": {"message": format!("scripted {status}"), "type": "server_error"}}))
                    }
                };
                let body = answer.to_string();
                let head = format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(body.as_bytes());
                let _ = stream.flush();
            }
        });
        Self { url, asked }
    }

    fn asked(&self, about: &str) -> usize {
        self.asked.lock().expect("lock").get(about).copied().unwrap_or(0)
    }
}

/// A Chat Completions answer calling `tool` with `arguments`.
fn call(tool: &str, arguments: &Value) -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "scripted",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": tool, "arguments": arguments.to_string()}}]}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
    })
}

/// The body of one HTTP request (the layer-1 tests' reader).
fn read_body(stream: &mut TcpStream) -> Option<String> {
    crate::layer1::read_request(stream).map(|request| request.body)
}

/// `mcp-eval golden init ARGS` (or `golden check`) with the OpenAI variables set to `vars`
/// (the key cleared and the base URL on a closed port unless given).
fn mcp_eval(args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut all = vec![("OPENAI_API_KEY", ""), ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"), ("ANTHROPIC_API_KEY", "")];
    all.extend_from_slice(vars);
    Command::new(binary()).args(args).envs(all).stdin(Stdio::null()).output().expect("run mcp-eval")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `golden check FILE SERVER…` passes.
fn assert_checks(file: &str, server: &[&str]) {
    let mut args = vec!["golden", "check", file];
    args.extend_from_slice(server);
    let checked = mcp_eval(&args, &[]);
    assert_eq!(checked.status.code(), Some(0), "{}\n{}", text(&checked.stdout), text(&checked.stderr));
}

/// The demo server's tools, scripted: `test_structured` gets a natural prompt and valid
/// arguments, `test_header_param` arguments its schema refuses (no `region`: required),
/// `test_progress` an overloaded server every time (503: an error that may change, so every
/// attempt is made; the same 500 twice is given up after two, issue 41), the rest a prompt
/// without arguments.
fn demo_script() -> Vec<(&'static str, Script)> {
    vec![
        (
            "test_structured",
            Script::Propose("Is it warm outside right now? Tell me in celsius.", json!({"unit": "celsius"})),
        ),
        ("test_header_param", Script::Propose("Echo back the region I am in, Mars.", json!({"planet": "mars"}))),
        ("test_progress", Script::Status(503)),
        ("test_simple_text", Script::Propose("Could you give me a short piece of text?", json!({}))),
        ("test_logging_tool", Script::Propose("Please write some log messages at every level.", json!({}))),
        ("test_missing_capability", Script::Propose("Ask me to confirm something.", json!({}))),
        ("test_input_required_result", Script::Propose("Start the task that needs my confirmation.", json!({}))),
        (NEGATIVES, Script::Negatives(&["What's the capital of Peru?", "Tell me a joke about cats."])),
    ]
}

/// The text of `path` without its `# written by the template:` lines (their reasons differ
/// between a recording and its replay).
fn without_template_reasons(path: &Path) -> String {
    std::fs::read_to_string(path)
        .expect("the written set")
        .lines()
        .filter(|line| !line.trim_start().starts_with("# written by the template:"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_model_writes_the_drafts_falls_back_per_tool_and_its_recording_replays_without_it() {
    let server = DemoServer::start(&[]);
    let model = ScriptedModel::start(demo_script());
    let dir = tempfile::tempdir().expect("temp dir");
    let (recorded, replayed, cassettes) =
        (dir.path().join("recorded.yaml"), dir.path().join("replayed.yaml"), dir.path().join("cassettes"));
    let (recorded_path, replayed_path, cassettes_dir) =
        (recorded.to_str().expect("utf-8"), replayed.to_str().expect("utf-8"), cassettes.to_str().expect("utf-8"));
    let vars = [("OPENAI_API_KEY", CANARY), ("OPENAI_BASE_URL", model.url.as_str())];
    let output = mcp_eval(
        &[
            "golden",
            "init",
            "--server-url",
            &server.url,
            "--out",
            recorded_path,
            "--model",
            "openai:scripted-1",
            "--cassettes",
            cassettes_dir,
            "--record",
        ],
        &vars,
    );
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("(7 by the model openai:scripted-1, 5 by the template)"), "{stdout}");
    assert!(stderr.contains("note: tool `test_header_param`: the template wrote its case: the model's arguments break the tool's inputSchema"), "{stderr}");
    assert!(
        stderr.contains(
            "note: tool `test_progress`: the template wrote its case: the model call failed after 4 attempt(s)"
        ),
        "{stderr}"
    );
    assert_eq!(model.asked("test_progress"), 4, "a server error is retried");
    assert_eq!(model.asked("test_structured"), 1);

    let written = std::fs::read_to_string(&recorded).expect("the written set");
    // The model's case: its prompt and arguments.
    assert!(
        written.contains("  # written by the model openai:scripted-1: the prompt and the arguments (they satisfy the tool's inputSchema)\n  - id: \"test_structured\"\n    prompt: \"Is it warm outside right now? Tell me in celsius.\"\n    expect_tool: \"test_structured\"\n    expect_args:\n      \"unit\": \"celsius\"\n"),
        "{written}"
    );
    // The rejected arguments' case: the template's prompt and arguments, nothing of the model's.
    assert!(
        written.contains("  # written by the template: the model's arguments break the tool's inputSchema"),
        "{written}"
    );
    assert!(!written.contains("Mars") && !written.contains("planet"), "{written}");
    assert!(written.contains("expect_args:\n      \"region\": \"example\"\n"), "{written}");
    assert!(written.contains("  # written by the template: the model call failed after 4 attempt(s)"), "{written}");
    assert!(written.contains("prompt: \"Tell me a joke about cats.\"\n    negative: true"), "{written}");
    let cases = written.matches("\n  - id: ").count();
    assert_eq!(cases, 12, "{written}");
    assert_eq!(written.matches("# draft: edit the prompt and expectations").count(), cases, "{written}");
    assert_eq!(written.matches("# written by the").count(), cases, "each case says who wrote it: {written}");
    assert_checks(recorded_path, &["--server-url", &server.url]);

    // The cassette holds the answers, never the key.
    let cassette = std::fs::read_to_string(cassettes.join("openai_scripted-1.json")).expect("the cassette");
    assert!(cassette.contains("init:test_structured") && cassette.contains("init:negatives"), "{cassette}");
    for leaked in [&written, &stdout, &stderr, &cassette] {
        assert!(!leaked.contains(CANARY), "the key leaked");
    }

    // Replay: no model server, no key; the same drafts (the failed call was not recorded: its
    // tool falls back again, with a replay miss as the reason).
    drop(model);
    let output = mcp_eval(
        &[
            "golden",
            "init",
            "--server-url",
            &server.url,
            "--out",
            replayed_path,
            "--model",
            "openai:scripted-1",
            "--cassettes",
            cassettes_dir,
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains("tool `test_progress`: the template wrote its case: no recording"),
        "{}",
        text(&output.stderr)
    );
    assert_eq!(without_template_reasons(&recorded), without_template_reasons(&replayed));
    assert_checks(replayed_path, &["--server-url", &server.url]);
}

#[test]
fn a_refused_key_is_exit_5_and_a_missing_key_exit_2_and_neither_writes_a_file() {
    let server = DemoServer::start(&[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("tasks.yaml");
    let out_path = out.to_str().expect("utf-8");
    let args = ["golden", "init", "--server-url", &server.url, "--out", out_path, "--model", "openai:scripted-1"];

    let refusing =
        ScriptedModel::start(vec![("test_structured", Script::Status(401)), ("test_simple_text", Script::Status(401))]);
    let output = mcp_eval(&args, &[("OPENAI_API_KEY", CANARY), ("OPENAI_BASE_URL", refusing.url.as_str())]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains("refused the first call before answering any") && stderr.contains("check `OPENAI_API_KEY`"),
        "{stderr}"
    );
    assert!(!stderr.contains(CANARY), "the key leaked: {stderr}");
    assert_eq!(refusing.asked.lock().expect("lock").values().sum::<usize>(), 1, "a refused key is asked once");
    assert!(!out.exists());

    let output = mcp_eval(&args, &[]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("`OPENAI_API_KEY` is unset or empty") && stderr.contains("hint: export OPENAI_API_KEY"),
        "{stderr}"
    );
    assert!(!out.exists());

    // A model that is not PROVIDER:MODEL is an input error naming the flag.
    let output = mcp_eval(&["golden", "init", "--server-url", &server.url, "--out", out_path, "--model", "gpt4"], &[]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--model") && stderr.contains("`gpt4` is not PROVIDER:MODEL"), "{stderr}");
    assert!(!out.exists());

    // Model flags without --model are refused by the parser.
    let output = mcp_eval(&["golden", "init", "--server-url", &server.url, "--out", out_path, "--cassettes", "x"], &[]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
}

#[test]
fn a_model_writes_the_drafts_for_the_python_time_server() {
    let command = crate::interop::stdio_command("py-time-stdio");
    let model = ScriptedModel::start(vec![
        ("get_current_time", Script::Propose("What time is it in Tokyo right now?", json!({"timezone": "Asia/Tokyo"}))),
        // No `time`: required, so the template writes this case.
        (
            "convert_time",
            Script::Propose(
                "Convert noon in Berlin to New York time.",
                json!({"source_timezone": "Europe/Berlin", "target_timezone": "America/New_York"}),
            ),
        ),
        (NEGATIVES, Script::Negatives(&["How many minutes are in a day?"])),
    ]);
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("tasks.yaml");
    let out_path = out.to_str().expect("utf-8");
    let output = mcp_eval(
        &["golden", "init", "--server-cmd", &command, "--out", out_path, "--model", "openai:scripted-1"],
        &[("OPENAI_API_KEY", CANARY), ("OPENAI_BASE_URL", model.url.as_str())],
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let written = std::fs::read_to_string(&out).expect("the written set");
    assert!(written.contains("prompt: \"What time is it in Tokyo right now?\"\n    expect_tool: \"get_current_time\"\n    expect_args:\n      \"timezone\": \"Asia/Tokyo\"\n"), "{written}");
    assert!(!written.contains("noon in Berlin"), "{written}");
    assert!(
        written.contains("# written by the template: the model's arguments break the tool's inputSchema"),
        "{written}"
    );
    assert_checks(out_path, &["--server-cmd", &command]);
}
