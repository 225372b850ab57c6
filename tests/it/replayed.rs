//! Answers replayed from cassettes are labelled as replayed wherever the model appears: the
//! per-case lines on stderr, the model columns and the gate lines of `summary.md`,
//! `model_status` and the split model-call count of `report.json`, and JUnit. A run whose model
//! was called (live, or recording with `--record`) carries none of those labels.

use std::process::{Command, Stdio};

use serde_json::Value;

use crate::layer1::{DemoModel, FLAKY, OPENAI_CANARY, SET, run_layer1, utf8, write_set};
use crate::support::{DemoServer, binary};

/// What a verdict reached on replayed answers says about itself.
const REPLAYED_VERDICT: &str = "reached on replayed model answers (cassettes), not live calls";

/// `mcp-eval run ARGS --out DIR` without `--quiet` (the per-case lines are on stderr), keys
/// cleared as [`run_layer1`] does; (stderr, the report directory).
fn run_loud(args: &[&str], vars: &[(&str, &str)]) -> (String, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = Command::new(binary())
        .arg("run")
        .args(args)
        .arg("--out")
        .arg(dir.path())
        .envs([("OPENAI_API_KEY", ""), ("ANTHROPIC_API_KEY", ""), ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")])
        .envs(vars.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("run mcp-eval");
    (String::from_utf8_lossy(&output.stderr).into_owned(), dir)
}

fn read(dir: &tempfile::TempDir, name: &str) -> String {
    std::fs::read_to_string(dir.path().join(name)).unwrap_or_else(|error| panic!("cannot read {name}: {error}"))
}

fn report(dir: &tempfile::TempDir) -> Value {
    serde_json::from_str(&read(dir, "report.json")).expect("report.json is JSON")
}

/// The `model_status` entry of `model`.
fn status<'a>(report: &'a Value, model: &str) -> &'a Value {
    report["model_status"]
        .as_array()
        .and_then(|statuses| statuses.iter().find(|status| status["model"] == model))
        .unwrap_or_else(|| panic!("no model_status of {model}: {report}"))
}

#[test]
fn the_demo_says_its_answers_were_replayed_on_stderr_in_the_summary_the_report_and_junit() {
    let (stderr, dir) = run_loud(&["--demo"], &[]);
    let report = report(&dir);
    assert_eq!(report["verdict"], "pass", "{stderr}");
    let model = "replay:demo:scripted";

    // stderr: every per-case line of the model, and the call count split.
    let case_lines: Vec<&str> = stderr.lines().filter(|line| line.contains(&format!(" on {model}"))).collect();
    assert!(!case_lines.is_empty(), "{stderr}");
    for line in &case_lines {
        assert!(line.contains(&format!(" on {model} (replayed): ")), "{line}");
    }
    let calls = report["model_calls"].as_u64().expect("model_calls");
    assert!(calls > 0, "{report}");
    assert!(
        stderr.contains(&format!("model calls: {calls} (0 live, {calls} replayed from cassettes)")),
        "the split on stderr: {stderr}"
    );

    // report.json: `ran` (readers of format 1 still read it) and replayed, the calls split.
    let status = status(&report, model);
    assert_eq!((status["status"].as_str(), status["replayed"].as_bool()), (Some("ran"), Some(true)), "{status}");
    assert_eq!(report["replayed_model_calls"], calls, "every call was replayed");

    // summary.md: the title, the model columns, the calls, and the verdict lines.
    let summary = read(&dir, "summary.md");
    let title = summary.lines().next().unwrap_or_default();
    assert!(title.contains("golden set (replayed from cassettes)"), "{title}");
    assert!(summary.contains(&format!("| Case | Kind | `{model}` (replayed) |")), "{summary}");
    assert!(summary.contains(&format!("| `{model}` (replayed) | ")), "the metrics table: {summary}");
    assert!(
        summary.contains(&format!("- **Model calls:** {calls} (0 live, {calls} replayed from cassettes)")),
        "{summary}"
    );
    assert!(
        summary.contains(&format!(
            "**Cases (case × model):** 15 pass · 0 fail · 0 error · 0 skipped · {REPLAYED_VERDICT}"
        )),
        "{summary}"
    );
    let gate = summary.lines().find(|line| line.starts_with("**Regression gate:**")).expect("a gate line");
    assert!(gate.ends_with(REPLAYED_VERDICT), "{gate}");

    // JUnit: the suite's name, its property and output; each case's property and output.
    let junit = read(&dir, "junit.xml");
    assert!(junit.contains(&format!("<testsuite name=\"layer-1 golden set · {model} (replayed)\"")), "{junit}");
    assert!(junit.contains("<property name=\"replayed\" value=\"true\"/>"), "{junit}");
    assert!(junit.contains("answers replayed from cassettes, no model was called"), "{junit}");
    assert!(junit.contains("<property name=\"mcp-eval.replayed\" value=\"true\"/>"), "{junit}");
    assert!(junit.contains(&format!("5 of 5 trials passed, 5 needed ({REPLAYED_VERDICT})")), "{junit}");

    // The labelled report reads back into the same types and renders unchanged.
    let text = read(&dir, "report.json");
    let parsed = mcp_eval::report::json::parse(&text).expect("report.json reads back");
    assert_eq!(mcp_eval::report::json::render(&parsed), text);
}

#[test]
fn a_recording_replayed_under_a_live_label_is_labelled_replayed_and_the_recording_run_is_not() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), SET);
    let cassettes = dir.path().join("cassettes");
    let server = DemoServer::start(&[]);
    let model = DemoModel::start(&set, &FLAKY);
    let common = ["--server-url", &server.url, "--golden-set", utf8(&set), "--model", "openai:demo", "--layers", "1"];
    let mut record = common.to_vec();
    record.extend_from_slice(&["--cassettes", utf8(&cassettes), "--record", "--fail-on-evals", "never"]);
    let recorded = run_layer1(&record, &[("OPENAI_BASE_URL", &model.openai_url()), ("OPENAI_API_KEY", OPENAI_CANARY)]);
    assert_eq!(recorded.code(), 0, "{}", recorded.stderr());
    drop(model);

    // Recording calls the model: nothing says replayed.
    let live = recorded.report();
    assert_eq!(status(live, "openai:demo").get("replayed"), None, "{live}");
    assert_eq!(live.get("replayed_model_calls"), None, "{live}");
    assert!(!recorded.file("summary.md").contains("replayed"), "{}", recorded.file("summary.md"));
    assert!(!recorded.file("junit.xml").contains("replayed"), "{}", recorded.file("junit.xml"));
    let baseline = dir.path().join("recorded.json");
    std::fs::write(&baseline, recorded.file("report.json")).expect("keep the recorded report");

    // Replayed with no key under the same label, against the recording run as the baseline.
    let mut replay = common.to_vec();
    replay.extend_from_slice(&["--cassettes", utf8(&cassettes), "--baseline", utf8(&baseline)]);
    replay.extend_from_slice(&["--fail-on-evals", "never"]);
    let (stderr, out) = run_loud(&replay, &[]);
    let report = report(&out);
    let calls = report["model_calls"].as_u64().expect("model_calls");
    assert_eq!(report["model_calls"], live["model_calls"], "the same calls, replayed");
    assert_eq!(report["replayed_model_calls"], calls, "{report}");
    assert_eq!(status(&report, "openai:demo")["status"], "ran");
    assert_eq!(status(&report, "openai:demo")["replayed"], true);
    for line in
        stderr.lines().filter(|line| line.starts_with("mcp-eval: layer 1: ") && line.contains(" on openai:demo"))
    {
        assert!(line.contains(" on openai:demo (replayed): "), "{line}");
    }
    assert!(stderr.contains(&format!("(0 live, {calls} replayed from cassettes)")), "{stderr}");
    let summary = read(&out, "summary.md");
    assert!(summary.contains("| Case | Kind | `openai:demo` (replayed) |"), "{summary}");
    let gate = summary.lines().find(|line| line.starts_with("**Regression gate:**")).expect("a gate line");
    assert!(gate.contains("no regression") && gate.ends_with(REPLAYED_VERDICT), "{gate}");
    let junit = read(&out, "junit.xml");
    assert!(junit.contains("<testsuite name=\"layer-1 golden set · openai:demo (replayed)\""), "{junit}");
}

#[test]
fn the_demo_s_layer_2_says_its_answers_were_replayed_on_stderr_and_in_its_notes() {
    let (stderr, dir) = run_loud(&["--demo", "--layers", "0-2"], &[]);
    let report = report(&dir);
    assert_eq!(report["verdict"], "pass", "{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|line| line.contains("layer 2: ") && line.contains(" on ")).collect();
    assert!(!lines.is_empty(), "{stderr}");
    for line in lines {
        assert!(line.contains(" on replay:demo:scripted (replayed): "), "{line}");
    }
    let notes: Vec<&str> =
        report["resilience"]["notes"].as_array().expect("notes").iter().filter_map(Value::as_str).collect();
    assert!(
        notes.iter().any(|note| note.contains("replayed from cassettes): outcomes reached on replayed model answers")),
        "{notes:?}"
    );
    assert!(read(&dir, "summary.md").contains("(0 live, "), "{}", read(&dir, "summary.md"));
}
