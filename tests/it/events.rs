//! `--events FILE`: the run's events as JSON lines, stamped, with each trial's model calls and
//! tool calls, no tool result or model text, no secret, and a closing line.

use serde_json::Value;

use crate::layer1::{DemoModel, FLAKY, OPENAI_CANARY, SET, both_wires, kept_as_baseline, run_layer1, utf8, write_set};
use crate::support::DemoServer;

fn lines(path: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("the events file");
    text.lines().map(|line| serde_json::from_str(line).unwrap_or_else(|error| panic!("{error}: {line}"))).collect()
}

#[test]
fn a_layer_1_run_writes_every_trial_model_call_and_tool_call_as_a_stamped_json_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), SET);
    let events = dir.path().join("logs").join("events.jsonl");
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
            "--runs",
            "2",
            "--events",
            utf8(&events),
        ],
        &both_wires(&model.openai_url(), &model.url),
    );
    assert_eq!(run.code(), 1, "{}", run.stderr());
    let all = lines(&events);
    let kinds: Vec<&str> = all.iter().map(|line| line["kind"].as_str().expect("a kind")).collect();
    assert_eq!(kinds.first(), Some(&"connecting"), "{kinds:?}");
    assert_eq!(&kinds[kinds.len() - 2..], ["finished", "closed"], "{kinds:?}");
    let mut previous = 0;
    for line in &all {
        assert_eq!(line["v"], 1, "{line}");
        assert!(line["at"].as_str().is_some_and(|at| at.ends_with('Z') && at.contains('T')), "{line}");
        let elapsed = line["elapsed_ms"].as_u64().expect("elapsed_ms");
        assert!(elapsed >= previous, "elapsed_ms never goes back: {line}");
        previous = elapsed;
    }
    let closed = all.last().expect("a closing line");
    assert_eq!(closed["complete"], true);
    assert_eq!(closed["exit_status"], run.code());

    // Every trial the report counts started and finished, and names its case, model and number.
    let evals = run.report()["evals"].as_array().expect("evals").clone();
    let trials: usize = evals.iter().map(|eval| eval["traces"].as_array().map_or(0, Vec::len)).sum();
    let count = |kind: &str| kinds.iter().filter(|seen| **seen == kind).count();
    assert!(trials > 0);
    assert_eq!(count("trial_started"), trials, "{kinds:?}");
    assert_eq!(count("trial_finished"), trials, "{kinds:?}");
    let of = |kind: &'static str| all.iter().filter(move |line| line["kind"] == kind);
    for line in of("trial_finished") {
        assert_eq!(line["trial"]["model"], "openai:demo", "{line}");
        assert!(line["trial"]["trial"].as_u64().is_some_and(|trial| (1..=2).contains(&trial)), "{line}");
        assert!(line["ending"].is_string() && line["duration_ms"].is_u64(), "{line}");
    }
    // Model calls: as many as the report's turns, with attempts, latency and usage as reported.
    let turns: u64 = evals
        .iter()
        .flat_map(|eval| eval["traces"].as_array().cloned().unwrap_or_default())
        .map(|trace| trace["turns"].as_u64().unwrap_or(0))
        .sum();
    let answered =
        of("model_call_finished").filter(|line| line["outcome"] == "answer" && line["role"] == "model").count();
    assert_eq!(answered as u64, turns);
    for line in of("model_call_finished") {
        assert!(line["role"] == "model" || line["role"] == "judge", "{line}");
        assert!(line["attempts"].is_u64() && line["latency_ms"].is_u64(), "{line}");
        assert!(line.get("input_tokens").is_some() && line.get("output_tokens").is_some(), "{line}");
    }
    // Tool calls: every call the report traces, sent ones timed and sized, none injected.
    let calls: usize = evals
        .iter()
        .flat_map(|eval| eval["traces"].as_array().cloned().unwrap_or_default())
        .map(|trace| trace["calls"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(of("tool_call_finished").count(), calls);
    assert!(calls > 0);
    for line in of("tool_call_finished") {
        assert_eq!(line["injected"], false, "{line}");
        assert!(line["tool"].is_string() && line["turn"].as_u64().is_some_and(|turn| turn >= 1), "{line}");
        if line["sent"] == true && line["outcome"] == "result" {
            assert!(line["server_bytes"].as_u64().is_some_and(|bytes| bytes > 0), "{line}");
        }
    }
    assert_eq!(of("tool_call_started").count(), of("tool_call_finished").filter(|line| line["sent"] == true).count());
    // A trial's `trial_finished` is its last line: every call of it (the judge's too) comes before.
    for (at, line) in all.iter().enumerate().filter(|(_, line)| line["kind"] == "trial_finished") {
        let later = all[at + 1..].iter().find(|other| other.get("trial") == line.get("trial"));
        assert!(later.is_none(), "{later:?} after {line}");
    }
    // No tool result, no model text, no key.
    let text = std::fs::read_to_string(&events).expect("events");
    for trace in evals.iter().flat_map(|eval| eval["traces"].as_array().cloned().unwrap_or_default()) {
        if let Some(answer) = trace["answer"].as_str().filter(|answer| answer.len() > 12) {
            assert!(!text.contains(answer), "the model's text is in the events: {answer}");
        }
    }
    assert!(!text.contains(OPENAI_CANARY), "the key leaked");
    for line in of("tool_call_finished") {
        let mut keys: Vec<&str> = line.as_object().expect("an object").keys().map(String::as_str).collect();
        keys.sort_unstable();
        let documented = [
            "at",
            "elapsed_ms",
            "injected",
            "kind",
            "latency_ms",
            "outcome",
            "sent",
            "server_bytes",
            "tool",
            "trial",
            "turn",
            "v",
        ];
        assert_eq!(keys, documented, "a tool call's line holds only what the format documents");
    }
}

#[test]
fn an_events_file_that_cannot_be_written_is_exit_4_and_the_reports_are_still_written() {
    let dir = tempfile::tempdir().expect("temp dir");
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, "not a directory").expect("write");
    let events = blocker.join("events.jsonl");
    let run = crate::support::run_with_env(&["--demo", "--events", utf8(&events)], &[]);
    assert_eq!(run.code(), 4, "{}", run.stderr());
    assert!(run.stderr().contains("cannot write the events file"), "{}", run.stderr());
    assert!(run.report.is_some(), "report.json is written all the same");
}

#[test]
fn an_events_file_on_a_full_disk_is_exit_4_with_the_reason_and_the_reports_are_still_written() {
    // /dev/full opens for writing and fails every write with "no space left on device".
    if !std::path::Path::new("/dev/full").exists() {
        return;
    }
    let run = crate::support::run_with_env(&["--demo", "--layers", "0", "--events", "/dev/full"], &[]);
    assert_eq!(run.code(), 4, "{}", run.stderr());
    assert!(run.stderr().contains("the events file `/dev/full` stopped being written"), "{}", run.stderr());
    assert!(run.report.is_some(), "report.json is written all the same");
}

#[test]
fn the_rubric_judge_s_calls_are_model_calls_of_the_trial_they_judge() {
    let dir = tempfile::tempdir().expect("temp dir");
    let events = dir.path().join("events.jsonl");
    let run = crate::support::run_with_env(&["--demo", "--events", utf8(&events)], &[]);
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let all: Vec<Value> = std::fs::read_to_string(&events)
        .expect("events")
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSON"))
        .collect();
    let judged: Vec<&Value> =
        all.iter().filter(|line| line["kind"] == "model_call_finished" && line["role"] == "judge").collect();
    assert!(!judged.is_empty(), "the demo's judge grades its rubric cases");
    // Layer 0's checks are graded lines as soon as it ends, before layer 1 starts.
    let layer1 = all.iter().position(|line| line["kind"] == "layer_started" && line["layer"] == 1).expect("layer 1");
    let graded: Vec<usize> =
        all.iter().enumerate().filter(|(_, line)| line["kind"] == "check_graded").map(|(at, _)| at).collect();
    assert!(
        !graded.is_empty() && graded.iter().all(|at| *at < layer1),
        "check_graded at {graded:?}, layer 1 at {layer1}"
    );
    for call in judged {
        assert_eq!(call["outcome"], "answer", "{call}");
        let finished = all.iter().position(|line| line["kind"] == "trial_finished" && line["trial"] == call["trial"]);
        let at = all.iter().position(|line| std::ptr::eq(line, call));
        assert!(finished > at, "the judge's call {call} comes before its trial's end");
    }
}

/// Five soft cases of one tool, five trials each; the prompt names the case.
const FIVE_SIMPLE: &str = r#"version: 1
defaults: {runs: 5}
cases:
  - {id: c0, prompt: "Case c0: give me the short text.", expect_tool: test_simple_text}
  - {id: c1, prompt: "Case c1: give me the short text.", expect_tool: test_simple_text}
  - {id: c2, prompt: "Case c2: give me the short text.", expect_tool: test_simple_text}
  - {id: c3, prompt: "Case c3: give me the short text.", expect_tool: test_simple_text}
  - {id: c4, prompt: "Case c4: give me the short text.", expect_tool: test_simple_text}
"#;

/// Issue 40: the trials of the gate's confirmation re-run are in the events file like the first
/// pass's, numbered on after them as the report's traces are, so every request the model
/// received is one `model_call_finished` line (a tester counted 41 requests and 23 lines).
#[test]
fn a_confirmation_re_run_s_model_calls_are_events_numbered_after_the_first_trials() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use crate::public_reports::{StrictModel, after_a_tool_result, chat_call, prompt, words};

    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), FIVE_SIMPLE);
    let server = DemoServer::start(&[]);
    let worse = Arc::new(AtomicBool::new(false));
    let flag = worse.clone();
    let model = StrictModel::start(move |wire, body| {
        if after_a_tool_result(wire, body) {
            return words(wire, "Done.");
        }
        let asked = prompt(wire, body);
        if flag.load(Ordering::SeqCst) && ["c0", "c2", "c4"].iter().any(|case| asked.contains(case)) {
            return words(wire, "I will not call a tool.");
        }
        chat_call(serde_json::json!({"id": "call_1", "type": "function",
            "function": {"name": "test_simple_text", "arguments": "{}"}}))
    });
    let openai = format!("{}/v1", model.url);
    let common = ["--server-url", &server.url, "--golden-set", utf8(&set), "--model", "openai:demo", "--layers", "1"];
    let green = run_layer1(&common, &both_wires(&openai, &model.url));
    let baseline = kept_as_baseline(&green, dir.path());

    // Three cases 5/5 → 0/5: the gate trips and re-runs them to confirm.
    worse.store(true, Ordering::SeqCst);
    let before = model.received().len();
    let events = dir.path().join("events.jsonl");
    let mut args = common.to_vec();
    args.extend_from_slice(&[
        "--baseline",
        utf8(&baseline),
        "--fail-on-evals",
        "regression",
        "--events",
        utf8(&events),
    ]);
    let gated = run_layer1(&args, &both_wires(&openai, &model.url));
    assert_eq!(gated.code(), 1, "{}", gated.stderr());
    let gate = &gated.report()["eval_gate"];
    assert!(gate["lines"].to_string().contains("confirmed by re-running the 3 worsened"), "{gate}");
    let requests = model.received().len() - before;
    assert_eq!(requests, 2 * 10 + 15 + 15, "two cases of two turns, three of one turn, then 15 confirming trials");

    let all = lines(&events);
    let of = |kind: &'static str| all.iter().filter(move |line| line["kind"] == kind);
    assert_eq!(of("model_call_finished").count(), requests, "one line per request the model received");
    assert_eq!(gated.report()["model_calls"].as_u64(), Some(requests as u64));
    // Each case's trials as the report numbers them: 1–5, then 6–10 for a re-run one.
    for eval in gated.report()["evals"].as_array().expect("evals") {
        let case = eval["case"].as_str().expect("a case");
        let numbers = |kind: &'static str| -> Vec<u64> {
            let mut numbers: Vec<u64> = of(kind)
                .filter(|line| line["trial"]["case"] == case)
                .filter_map(|line| line["trial"]["trial"].as_u64())
                .collect();
            numbers.sort_unstable();
            numbers
        };
        let traced: Vec<u64> =
            eval["traces"].as_array().expect("traces").iter().filter_map(|t| t["run"].as_u64()).collect();
        let expected: Vec<u64> =
            if ["c0", "c2", "c4"].contains(&case) { (1..=10).collect() } else { (1..=5).collect() };
        assert_eq!(traced, expected, "{case}: the report's traces");
        assert_eq!(numbers("trial_started"), expected, "{case}: trial_started");
        assert_eq!(numbers("trial_finished"), expected, "{case}: trial_finished");
    }
}
