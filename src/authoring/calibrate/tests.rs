//! Calibration end to end in-process: a labelled report re-judged by the demo model's scripted
//! judge (over Chat Completions on loopback) with known agreements, bad references in a labels
//! file, and the report's corrected and uncalibrated rates.

use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::calibration::*;
use crate::report::evals::{CriterionOut, EvalResult, TraceCall, TrialStatus, TrialTrace};

/// One case with a two-criterion rubric: `named` names the tool `lookup_tool` (the scripted
/// judge passes it only when that tool returned without error), `any` names none (passed when
/// any tool did).
const SET: &str = r#"version: 1
rubrics:
  used_lookup:
    criteria:
      - {id: named, must: true, text: "Does it use what lookup_tool returned?"}
      - {id: any, must: false, text: "Did some tool answer?"}
cases:
  - id: lookup
    prompt: "Look it up."
    runs: 3
    expect_tool: lookup_tool
    rubric: used_lookup
"#;

fn trace(run: usize, tool: &str, is_error: bool, judge: &str) -> TrialTrace {
    TrialTrace {
        judge: None,
        cause: None,
        result_changed: 0,
        run,
        status: TrialStatus::Pass,
        reason: None,
        ending: "answer".into(),
        turns: 2,
        model_calls: 2,
        duration_ms: 5,
        calls: vec![TraceCall {
            turn: 1,
            name: tool.into(),
            arguments: json!({}),
            sent: true,
            error: None,
            result: Some(format!("value {run}")),
            is_error,
            result_cut: None,
            latency_ms: 1,
            input_rounds: Vec::new(),
        }],
        answer: Some("It is done.".into()),
        model_text: Vec::new(),
        stop_reasons: vec!["tool_calls".into(), "stop".into()],
        input_tokens: None,
        output_tokens: None,
        model_latencies_ms: Vec::new(),
        criteria: vec![CriterionOut { criterion: "judge".into(), verdict: judge.into(), reason: String::new() }],
    }
}

/// A labels file, its report and golden set in a temporary directory, and a config naming the
/// demo model at `model_url` as provider `demo`.
fn fixture(labels: &str, model_url: &str) -> (tempfile::TempDir, CalibrateRequest) {
    let dir = tempfile::tempdir().expect("tempdir");
    let set_path = dir.path().join("set.yaml");
    std::fs::write(&set_path, SET).expect("write set");
    let set = crate::golden::load::load(&set_path).expect("valid set");
    let mut eval = EvalResult::for_tests("lookup", "p:m", false, 3, 3, 2);
    eval.case_sha256 = set.cases[0].hash.clone();
    // Run 1: lookup_tool answered; run 2: another tool answered; run 3: lookup_tool failed.
    eval.traces = vec![
        trace(1, "lookup_tool", false, "pass"),
        trace(2, "other_tool", false, "fail"),
        trace(3, "lookup_tool", true, "fail"),
    ];
    let mut report = crate::report::test_support::sample_evals_report();
    if let Some(evals) = report.evals.as_mut() {
        evals.evals = vec![eval];
    }
    std::fs::write(dir.path().join("report.json"), crate::report::json::render(&report)).expect("write report");
    std::fs::write(dir.path().join("labels.yaml"), labels).expect("write labels");
    std::fs::write(
        dir.path().join("config.yaml"),
        // A config file of a real project names its server too: calibration evaluates none.
        format!("server: {{url: 'http://127.0.0.1:1/mcp'}}\nproviders:\n  - id: demo\n    api: openai\n    base_url: {model_url}/v1\n"),
    )
    .expect("write config");
    let request = CalibrateRequest {
        labels: dir.path().join("labels.yaml"),
        golden_set: None,
        out: dir.path().join("calibration.json"),
        flags: crate::settings::SettingsArgs {
            judge_model: Some("demo:judge".into()),
            config: Some(dir.path().join("config.yaml").display().to_string()),
            ..crate::settings::SettingsArgs::default()
        },
        retry: RetryPolicy { attempts: 1, ..RetryPolicy::default() },
    };
    (dir, request)
}

const HEAD: &str = "version: 1\ngolden_set: set.yaml\nreport: report.json\nlabels:\n";

async fn demo_judge() -> (tokio::task::JoinHandle<()>, String) {
    let set = crate::golden::load::parse(Path::new("set.yaml"), SET).expect("valid set");
    let model = Arc::new(crate::demo::model::DemoModel::new(&set, &[], &[], chrono::Utc::now().date_naive()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    (tokio::spawn(crate::demo::model::serve(listener, model)), url)
}

#[tokio::test]
async fn calibration_counts_agreements_with_the_human_labels_exactly() {
    let (_model, url) = demo_judge().await;
    // The scripted judge: run 1 named pass, any pass; run 2 named fail, any pass; run 3 both fail.
    // Human: r1 named pass (TP), any pass (TP); r2 named fail (TN), any fail (FP);
    // r3 named pass (FN), any fail (TN). TPR 2/3, TNR 2/3.
    let labels = format!(
        "{HEAD}  - {{case: lookup, model: 'p:m', run: 1, criterion: named, human: pass}}\n  - {{case: lookup, model: 'p:m', run: 1, criterion: any, human: pass}}\n  - {{case: lookup, model: 'p:m', run: 2, criterion: named, human: fail}}\n  - {{case: lookup, model: 'p:m', run: 2, criterion: any, human: fail}}\n  - {{case: lookup, model: 'p:m', run: 3, criterion: named, human: pass}}\n  - {{case: lookup, model: 'p:m', run: 3, criterion: any, human: fail}}\n"
    );
    let (_dir, request) = fixture(&labels, &url);
    let mut printed = Vec::new();
    let status = calibrate(request.clone(), &mut printed).await;
    let printed = String::from_utf8(printed).expect("text");
    assert_eq!(status, ExitStatus::Passed, "{printed}");
    let file = load(&request.out).expect("a calibration file");
    assert_eq!(
        (file.true_positives, file.positives, file.true_negatives, file.negatives, file.unknown, file.errors),
        (2, 3, 2, 3, 0, 0)
    );
    assert!((file.tpr - 2.0 / 3.0).abs() < 1e-12 && (file.tnr - 2.0 / 3.0).abs() < 1e-12, "{file:?}");
    assert_eq!((file.judge_model.as_str(), file.judge_prompt_version), ("demo:judge", judge::JUDGE_PROMPT_VERSION));
    assert!(printed.contains("TPR 0.667  judge pass | human pass: 2 of 3"), "{printed}");
    assert!(printed.contains("TNR 0.667  judge fail | human fail: 2 of 3"), "{printed}");
    assert!(printed.contains("disagree: lookup trial 2 on p:m, `any`: human fail, judge pass"), "{printed}");
}

#[tokio::test]
async fn a_judge_that_cannot_answer_is_exit_5_and_its_labels_are_errors() {
    // Nothing listens at this URL: every judge call fails, no rate can be measured.
    let labels = format!(
        "{HEAD}  - {{case: lookup, model: 'p:m', run: 1, criterion: named, human: pass}}\n  - {{case: lookup, model: 'p:m', run: 2, criterion: named, human: fail}}\n"
    );
    let (_dir, request) = fixture(&labels, "http://127.0.0.1:9");
    let status = calibrate(request.clone(), &mut Vec::new()).await;
    assert_eq!(status, ExitStatus::Provider);
    assert!(!request.out.exists(), "no calibration without both rates");
}

#[tokio::test]
async fn the_call_cap_stops_the_calibration_with_exit_6() {
    let (_model, url) = demo_judge().await;
    let labels = format!(
        "{HEAD}  - {{case: lookup, model: 'p:m', run: 1, criterion: named, human: pass}}\n  - {{case: lookup, model: 'p:m', run: 2, criterion: named, human: fail}}\n"
    );
    let (_dir, mut request) = fixture(&labels, &url);
    request.flags.max_model_calls = Some("1".into());
    // Run 1 is judged; the cap leaves run 2, the only human fail, unjudged: no TNR.
    assert_eq!(calibrate(request.clone(), &mut Vec::new()).await, ExitStatus::Budget);
    assert!(!request.out.exists());
}

#[tokio::test]
async fn labels_that_name_what_the_set_or_report_lacks_are_input_errors_with_their_line() {
    let labels = format!(
        "{HEAD}  - {{case: lookup, model: 'p:m', run: 1, criterion: nmed, human: pass}}\n  - {{case: lookup, model: 'q:x', run: 1, criterion: named, human: fail}}\n  - {{case: lookup, model: 'p:m', run: 7, criterion: named, human: fail}}\n"
    );
    let (dir, request) = fixture(&labels, "http://127.0.0.1:9");
    let file = labels::load(&request.labels).expect("well formed");
    let set = crate::golden::load::load(&dir.path().join("set.yaml")).expect("set");
    let rubrics: Vec<Option<Rubric>> = set.cases.iter().map(|case| case.rubric.clone()).collect();
    let report = read_report(&file.report).expect("report");
    let problems: Vec<String> = labels::resolve(&file, &set, &rubrics, &report)
        .expect_err("broken references")
        .iter()
        .map(|problem| {
            let text = problem.to_string();
            format!(
                "{} | {}",
                text.rsplit_once("labels.yaml").map_or(text.as_str(), |(_, tail)| tail),
                problem.hint_text()
            )
        })
        .collect();
    assert_eq!(
        problems,
        [
            ":5:5: labels[0].criterion: the rubric of `lookup` has no criterion `nmed` | use one of: named, any",
            ":6:5: labels[1].model: the report has no trials of `lookup` on q:x | the report ran it on: p:m",
            ":7:5: labels[2].run: the report keeps no trial 7 of `lookup` on p:m | it keeps trials 1, 2, 3",
        ]
    );
    assert_eq!(calibrate(request, &mut Vec::new()).await, ExitStatus::InvalidInput);
}

fn section(passes: &[&str]) -> EvalsSection {
    let mut eval = EvalResult::for_tests("lookup", "p:m", false, 0, passes.len(), 1);
    eval.traces =
        passes.iter().enumerate().map(|(index, verdict)| trace(index + 1, "lookup_tool", false, verdict)).collect();
    EvalsSection { models: vec!["p:m".into()], evals: vec![eval], ..EvalsSection::default() }
}

fn calibration(judge: &str, tpr: f64, tnr: f64) -> CalibrationFile {
    CalibrationFile {
        format: CALIBRATION_FORMAT,
        judge_model: judge.into(),
        judge_prompt_version: judge::JUDGE_PROMPT_VERSION,
        judge_samples: 1,
        golden_set_sha256: "sha256:set".into(),
        rubrics_sha256: "sha256:rubrics".into(),
        rubric_cases: Vec::new(),
        labels: "labels.yaml".into(),
        tpr,
        tnr,
        positives: 10,
        negatives: 10,
        true_positives: 9,
        true_negatives: 8,
        unknown: 0,
        errors: 0,
        measured_at: "2026-11-30".into(),
    }
}

#[test]
fn a_matching_calibration_corrects_the_judge_pass_rate_as_computed_by_hand() {
    // 3 of 4 judged runs passed (a `skipped` judge verdict is no judged run): observed 0.75.
    // TPR 0.9, TNR 0.8: (0.75 + 0.8 − 1) / (0.9 + 0.8 − 1) = 0.55 / 0.7.
    let section = section(&["pass", "pass", "fail", "pass", "skipped"]);
    let file = calibration("demo:judge", 0.9, 0.8);
    let out = for_report(&section, "replay:demo:judge", Some((&file, "cal.json")));
    assert!(out.calibrated && out.reason.is_none(), "{out:?}");
    assert_eq!((out.rates[0].judged_runs, out.rates[0].passed_runs, out.rates[0].observed), (4, 3, 0.75));
    let corrected = out.rates[0].corrected.expect("a corrected rate");
    assert!((corrected - 0.55 / 0.7).abs() < 1e-12, "{corrected}");
    assert_eq!((out.tpr, out.tnr, out.positives, out.negatives), (Some(0.9), Some(0.8), Some(10), Some(10)));
}

#[test]
fn a_calibration_of_another_judge_or_prompt_leaves_the_rates_uncalibrated_and_says_why() {
    let section = section(&["pass", "fail"]);
    let other = calibration("openai:gpt-4.1", 0.9, 0.8);
    let out = for_report(&section, "anthropic:claude", Some((&other, "cal.json")));
    assert!(!out.calibrated);
    assert_eq!(
        out.reason.as_deref(),
        Some("the calibration file measured openai:gpt-4.1, not the judge anthropic:claude")
    );
    assert_eq!((out.rates[0].observed, out.rates[0].corrected, out.tpr), (0.5, None, None));
    let old = CalibrationFile {
        judge_prompt_version: judge::JUDGE_PROMPT_VERSION + 1,
        ..calibration("anthropic:claude", 0.9, 0.8)
    };
    let out = for_report(&section, "anthropic:claude", Some((&old, "cal.json")));
    assert!(out.reason.is_some_and(|reason| reason.contains("judge prompt v")), "another prompt version");
    let none = for_report(&section, "anthropic:claude", None);
    assert_eq!(none.reason.as_deref(), Some("no calibration file was given (--judge-calibration)"));
}

#[test]
fn a_judge_no_better_than_chance_gets_no_corrected_rate() {
    let section = section(&["pass", "fail"]);
    let file = calibration("demo:judge", 0.6, 0.3);
    let out = for_report(&section, "demo:judge", Some((&file, "cal.json")));
    assert!(out.calibrated && out.rates[0].no_better_than_chance && out.rates[0].corrected.is_none(), "{out:?}");
}

#[test]
fn a_calibration_file_that_is_not_one_is_an_input_error_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("cal.json");
    std::fs::write(&path, "{\"format\": 1}\n").expect("write");
    let error = load(&path).expect_err("not a calibration file");
    assert_eq!(error.exit_status(), ExitStatus::InvalidInput);
    assert!(error.message.contains("cal.json") && error.message.contains("line 1"), "{error}");
}

#[tokio::test]
async fn labelled_runs_whose_results_were_not_kept_are_refused_not_judged_blind() {
    let labels = format!(
        "{HEAD}  - {{case: lookup, model: 'p:m', run: 1, criterion: named, human: pass}}\n  - {{case: lookup, model: 'p:m', run: 2, criterion: named, human: fail}}\n"
    );
    // Nothing listens: the refusal must come before any judge call.
    let (dir, request) = fixture(&labels, "http://127.0.0.1:9");
    let path = dir.path().join("report.json");
    let mut report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("report")).expect("JSON");
    for run in report["evals"][0]["traces"].as_array_mut().expect("traces") {
        run["calls"][0]["result"] = serde_json::Value::Null;
    }
    std::fs::write(&path, report.to_string()).expect("rewrite");
    let mut printed = Vec::new();
    let status = calibrate(request.clone(), &mut printed).await;
    assert_eq!(status, ExitStatus::InvalidInput, "{}", String::from_utf8_lossy(&printed));
    assert!(!request.out.exists(), "no calibration written");
}

/// A Chat Completions answer of the judge: `named` and `any` both `verdict`, quoting `evidence`.
fn judge_answer(verdict: &str, evidence: &str) -> crate::providers::test_server::Canned {
    let verdicts: Vec<serde_json::Value> = ["named", "any"]
        .iter()
        .map(|id| json!({"criterion_id": id, "verdict": verdict, "evidence": evidence, "reason": "read"}))
        .collect();
    let arguments = json!({"verdicts": verdicts});
    let body = json!({
        "id": "j", "object": "chat.completion", "model": "judge",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
            "tool_calls": [{"id": "v", "type": "function",
                "function": {"name": judge::VERDICT_TOOL, "arguments": arguments.to_string()}}]}}],
        "usage": {"prompt_tokens": 300, "completion_tokens": 40}
    });
    crate::providers::test_server::Canned::json(200, &body.to_string())
}

#[tokio::test]
async fn a_judge_that_failed_a_run_and_hit_the_cap_exits_5_as_the_exit_table_ranks_them() {
    use crate::providers::test_server::{Canned, ScriptedServer};
    // Run 1 is judged; the judge refuses run 2 (a provider failure); the cap leaves run 3.
    let script = vec![
        judge_answer("pass", "value 1"),
        Canned::json(400, r#"{"error": {"message": "the request was refused"}}"#),
    ];
    let server = ScriptedServer::start(script).await;
    let labels = format!(
        "{HEAD}  - {{case: lookup, model: 'p:m', run: 1, criterion: named, human: pass}}\n  - {{case: lookup, model: 'p:m', run: 2, criterion: named, human: fail}}\n  - {{case: lookup, model: 'p:m', run: 3, criterion: named, human: fail}}\n"
    );
    let (_dir, mut request) = fixture(&labels, server.base_url.trim_end_matches("/v1"));
    request.flags.max_model_calls = Some("2".into());
    // Both 5 (a provider failed) and 6 (the cap) apply: the table's order says 5, as for `run`.
    assert_eq!(calibrate(request.clone(), &mut Vec::new()).await, ExitStatus::Provider);
    assert_eq!(server.received().len(), 2, "the cap held");
}
