//! Hand-built reports shared by the renderers' unit tests.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::evals::{
    CriterionOut, EvalMetrics, EvalResult, EvalStatus, EvalsSection, GoldenSetInfo, GraderTally, ModelOutcome,
    ModelStatus, Rate, TraceCall, TrialStatus, TrialTrace, wilson_95,
};
use super::model::{CheckResult, Evidence, Level, RunOutcome, RunReport, ServerSection, Status};

/// The start time of every test report: 2026-08-01T12:00:00Z.
pub(super) fn test_start() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-08-01T12:00:00Z").expect("a valid timestamp").with_timezone(&Utc)
}

/// A check with the given fields and no evidence.
pub(super) fn check(id: &str, title: &str, level: Level, status: Status, message: &str) -> CheckResult {
    CheckResult {
        id: id.to_owned(),
        title: title.to_owned(),
        level,
        status,
        message: message.to_owned(),
        spec: "docs/specification/2026-07-28/basic/lifecycle.mdx#discovery".to_owned(),
        evidence: Vec::new(),
        duration_ms: 0,
        migration: false,
        waiver: None,
    }
}

/// [`sample_report`] with its failing row (`D-1`) waived by the config file, as
/// `conformance::waiver` leaves it, and a waiver that matched nothing.
pub(crate) fn waived_report() -> RunReport {
    let mut report = sample_report();
    let row = &mut report.checks[1];
    row.message = format!("waived by the config file (mcp-eval.yaml:3): an upstream SDK's error — {}", row.message);
    row.waiver = Some(super::model::WaiverNote {
        reason: "an upstream SDK's error".into(),
        source: "mcp-eval.yaml:3".into(),
        status: Status::Fail,
        expires: Some("2027-03-31".into()),
        expired: false,
    });
    row.status = Status::Waived;
    report.waiver_notes = vec!["mcp-eval.yaml:7: the waiver of H-4 matches nothing (H-4 is not applicable)".into()];
    report
}

/// A completed run with one check of every status, in the order pass, fail, warn,
/// not_applicable, error.
pub(crate) fn sample_report() -> RunReport {
    let mut fail = check(
        "D-1",
        "server/discover answers",
        Level::Must,
        Status::Fail,
        "server/discover returned a JSON-RPC error; implement server/discover.",
    );
    fail.duration_ms = 1234;
    fail.evidence = vec![
        Evidence {
            label: "request".to_owned(),
            text: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\"}".to_owned(),
        },
        Evidence {
            label: "response".to_owned(),
            text: "{\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}".to_owned(),
        },
    ];
    let mut pass = check(
        "D-2",
        "the discover result carries ttlMs",
        Level::Must,
        Status::Pass,
        "ttlMs and cacheScope are present",
    );
    pass.duration_ms = 7;
    let mut report = RunReport::new(
        test_start(),
        2500,
        vec![0],
        RunOutcome::Completed,
        None,
        ServerSection {
            transport: "http".to_owned(),
            target: "http://127.0.0.1:8080/mcp".to_owned(),
            era: Some("2026-07-28".to_owned()),
            era_evidence: Some("server/discover answered with supportedVersions".to_owned()),
            supported_versions: vec!["2026-07-28".to_owned()],
            server_info: Some(serde_json::json!({"name": "demo-server", "version": "1.2.3"})),
            capabilities: Some(serde_json::json!({"tools": {}})),
            stderr_tail: None,
            listed: Some(crate::report::model::Listed { tools: 5, prompts: 1, resources: 1, resource_templates: 1 }),
            stdio_starts: Vec::new(),
            descriptions: std::collections::BTreeMap::new(),
            tool_errors: Vec::new(),
        },
        vec![
            pass,
            fail,
            check(
                "H-4",
                "Cache-Control on responses",
                Level::Should,
                Status::Warn,
                "responses carry no Cache-Control header",
            ),
            check(
                "T-2",
                "tools/call errors",
                Level::Must,
                Status::NotApplicable,
                "the server advertises no tools capability",
            ),
            check("N-1", "negotiation summary", Level::Info, Status::Error, "mcp-eval timed out reading the response"),
        ],
    );
    report.tool = "mcp-eval 0.1.0".to_owned();
    report
}

/// A run whose server could not be reached, built by the same function the evaluation uses.
pub(super) fn unreachable_report() -> RunReport {
    let server = ServerSection {
        transport: "http".to_owned(),
        target: "http://127.0.0.1:9/mcp".to_owned(),
        ..ServerSection::default()
    };
    let mut report = RunReport::unreachable(
        test_start(),
        30_000,
        server,
        "connecting to http://127.0.0.1:9/mcp failed: connection refused".to_owned(),
        Vec::new(),
    );
    report.tool = "mcp-eval 0.1.0".to_owned();
    report
}

/// Text a model wrote or a tool returned: it may appear in `report.json` traces only, never in
/// `summary.md` or `junit.xml`.
pub(super) const TRACE_ONLY_TEXT: &str = "TRACE-ONLY-TEXT";

/// One trial of a case: a tool call (or none), the answer, and the criteria as given.
pub(crate) fn run(number: usize, status: TrialStatus, reason: Option<&str>, tool: Option<&str>) -> TrialTrace {
    let ending = if status == TrialStatus::Error { "error" } else { "answer" };
    let calls: Vec<TraceCall> = tool
        .into_iter()
        .map(|name| TraceCall {
            turn: 1,
            name: name.to_owned(),
            arguments: serde_json::json!({"city": "Paris"}),
            sent: true,
            error: None,
            result: Some(format!("{TRACE_ONLY_TEXT}: 18 °C, light rain")),
            is_error: false,
            result_cut: None,
            latency_ms: 42,
            input_rounds: Vec::new(),
        })
        .collect();
    let verdict = match status {
        TrialStatus::Pass => "pass",
        TrialStatus::Fail => "fail",
        TrialStatus::Error | TrialStatus::Skipped => "skipped",
    };
    TrialTrace {
        judge: None,
        cause: None,
        result_changed: 0,
        run: number,
        status,
        reason: reason.map(str::to_owned),
        ending: ending.to_owned(),
        turns: if calls.is_empty() { 1 } else { 2 },
        model_calls: if calls.is_empty() { 1 } else { 2 },
        duration_ms: 800 + number as u64 * 10,
        answer: (status != TrialStatus::Error).then(|| format!("{TRACE_ONLY_TEXT}: the model's answer")),
        model_text: Vec::new(),
        stop_reasons: if calls.is_empty() { vec!["stop".into()] } else { vec!["tool_calls".into(), "stop".into()] },
        input_tokens: Some(1_200),
        output_tokens: Some(90),
        model_latencies_ms: Vec::new(),
        criteria: vec![CriterionOut {
            criterion: "selection".to_owned(),
            verdict: verdict.to_owned(),
            reason: reason.unwrap_or("the expected tool was called").to_owned(),
        }],
        calls,
    }
}

/// Graders as `(name, passed, graded)`.
fn graders(tallies: &[(&str, usize, usize)]) -> BTreeMap<String, GraderTally> {
    tallies.iter().map(|&(name, passed, graded)| (name.to_owned(), GraderTally { passed, graded })).collect()
}

/// One case × model from its trials (the counts are taken from the traces).
#[allow(clippy::too_many_arguments, reason = "test data, one argument per field that varies")]
fn eval(
    case: &str,
    kind: &str,
    threshold: usize,
    status: EvalStatus,
    tallies: &[(&str, usize, usize)],
    reason: Option<&str>,
    traces: Vec<TrialTrace>,
    hash_digit: char,
) -> EvalResult {
    let passed = traces.iter().filter(|run| run.status == TrialStatus::Pass).count();
    let completed = traces.iter().filter(|run| matches!(run.status, TrialStatus::Pass | TrialStatus::Fail)).count();
    EvalResult {
        case: case.to_owned(),
        model: "openai:gpt-4.1-mini".to_owned(),
        kind: kind.to_owned(),
        runs: 5,
        passed,
        completed,
        status,
        threshold,
        wilson_95: wilson_95(passed, completed),
        case_sha256: format!("sha256:{}", hash_digit.to_string().repeat(64)),
        grader_version: crate::report::evals::GRADER_VERSION,
        graders: graders(tallies),
        reason: reason.map(str::to_owned),
        flaky: passed > 0 && passed < completed,
        sampling: serde_json::json!({"temperature": 0.0}),
        traces,
        cached: None,
        reported_models: Vec::new(),
    }
}

/// Five trials: those numbered in `failing` fail with `why`, the others pass.
fn runs(failing: &[usize], why: &str, tool: &str, wrong_tool: Option<&str>) -> Vec<TrialTrace> {
    (1..=5)
        .map(|n| {
            if failing.contains(&n) {
                run(n, TrialStatus::Fail, Some(why), Some(wrong_tool.unwrap_or(tool)))
            } else {
                run(n, TrialStatus::Pass, None, Some(tool))
            }
        })
        .collect()
}

/// The layer-1 section of [`sample_evals_report`]: one model ran, one had no API key; seven
/// cases (pass 5/5, a wrong tool 0/5, a soft case 3/5 short of 4, a hard case 4/5, a negative
/// case, an error, one skipped by the call cap).
pub(super) fn sample_evals() -> EvalsSection {
    let evals = vec![
        eval(
            "lookup-weather",
            "hard",
            5,
            EvalStatus::Pass,
            &[("arguments", 5, 5), ("finished", 5, 5), ("selection", 5, 5)],
            Some("5 of 5 trials passed (5 needed)"),
            runs(&[], "", "get_weather", None),
            'a',
        ),
        eval(
            "convert-units",
            "hard",
            5,
            EvalStatus::Fail,
            &[("finished", 5, 5), ("selection", 0, 5)],
            Some("0 of 5 trials passed (5 needed)\ntrial 1: called `get_weather`, expected `convert_units`"),
            runs(
                &[1, 2, 3, 4, 5],
                "called `get_weather`, expected `convert_units`",
                "convert_units",
                Some("get_weather"),
            ),
            'b',
        ),
        eval(
            "search-docs",
            "soft",
            4,
            EvalStatus::Fail,
            &[("arguments", 3, 5), ("selection", 5, 5)],
            Some("3 of 5 trials passed (4 needed)\ntrial 2: argument `query`: expected \"rate limits\", got \"rate\""),
            runs(&[2, 5], "argument `query`: expected \"rate limits\", got \"rate\"", "search_docs", None),
            'c',
        ),
        eval(
            "book-then-confirm",
            "hard",
            5,
            EvalStatus::Fail,
            &[("selection", 5, 5), ("sequence", 4, 5)],
            Some(
                "4 of 5 trials passed (5 needed)\ntrial 3: sequence: expected `book_slot` then `confirm_booking`, got `book_slot` only",
            ),
            runs(
                &[3],
                "sequence: expected `book_slot` then `confirm_booking`, got `book_slot` only",
                "book_slot",
                None,
            ),
            'd',
        ),
        eval(
            "small-talk",
            "hard",
            5,
            EvalStatus::Pass,
            &[("no_tool_call", 5, 5)],
            Some("5 of 5 trials passed (5 needed)"),
            (1..=5).map(|n| run(n, TrialStatus::Pass, None, None)).collect(),
            'e',
        ),
        eval(
            "flaky-backend",
            "soft",
            3,
            EvalStatus::Error,
            &[("selection", 1, 1)],
            Some("1 of 5 trials completed (3 needed for a verdict)\ntrial 2: the provider answered 503 three times"),
            (1..=5)
                .map(|n| {
                    if n == 1 {
                        run(n, TrialStatus::Pass, None, Some("get_status"))
                    } else {
                        run(n, TrialStatus::Error, Some("the provider answered 503 three times"), None)
                    }
                })
                .collect(),
            'f',
        ),
        eval(
            "weekly-digest",
            "hard",
            5,
            EvalStatus::Skipped,
            &[],
            Some("not run: the model-call cap (60) was reached"),
            Vec::new(),
            '0',
        ),
    ];
    let mut cases = BTreeMap::new();
    for (status, count) in [("pass", 2), ("fail", 3), ("error", 1), ("skipped", 1)] {
        cases.insert(status.to_owned(), count);
    }
    EvalsSection {
        expected_calls: None,
        golden_set: Some(GoldenSetInfo {
            path: "evals/golden.yaml".to_owned(),
            sha256: "sha256:3f1c9a7be20d45e6a8b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9".to_owned(),
            cases: 7,
            today: None,
            timezone: None,
        }),
        models: vec!["openai:gpt-4.1-mini".to_owned(), "anthropic:claude-sonnet-4-5".to_owned()],
        model_status: vec![
            ModelStatus {
                model: "openai:gpt-4.1-mini".to_owned(),
                status: ModelOutcome::Ran,
                detail: None,
                replayed: false,
            },
            ModelStatus {
                model: "anthropic:claude-sonnet-4-5".to_owned(),
                status: ModelOutcome::NoApiKey,
                detail: Some(
                    "ANTHROPIC_API_KEY is not set; add it as a repository secret to run this model".to_owned(),
                ),
                replayed: false,
            },
        ],
        evals,
        eval_gate: None,
        judge_calibration: None,
        eval_metrics: vec![EvalMetrics {
            model: "openai:gpt-4.1-mini".to_owned(),
            pass_rate: Rate::new(2, 5),
            tool_selection_accuracy: Rate::new(16, 21),
            over_triggering_rate: Rate::new(0, 5),
            argument_accuracy: Rate::new(8, 10),
            sequence_accuracy: Rate::new(4, 5),
            cases,
            run_errors: Rate::new(4, 30),
            input_tokens: Some(41_230),
            output_tokens: Some(3_120),
            model_latency_p50_ms: Some(640),
            model_latency_p95_ms: Some(1_900),
        }],
        layer1_not_run: None,
        input_refused: false,
        tools_unlisted: false,
        layer1_notes: vec!["`openai:gpt-4.1-mini` refused `top_p`; it was dropped for every trial".to_owned()],
        call_cap_reached: true,
        model_calls: 60,
        replayed_model_calls: 0,
        shard: None,
        tool_surface: None,
    }
}

/// A completed run whose layer 0 passes (the failing check removed from [`sample_report`]) and
/// whose layer 1 ([`sample_evals`]) fails three cases.
pub(crate) fn sample_evals_report() -> RunReport {
    let mut report = sample_report();
    report.checks.retain(|check| check.status != Status::Fail);
    report.layers = vec![0, 1];
    report.evals = Some(sample_evals());
    report
}

/// [`sample_evals_report`] with its model's answers replayed from cassettes: every model call
/// replayed, and a regression gate that passed on them.
pub(crate) fn replayed_evals_report() -> RunReport {
    let mut report = sample_evals_report();
    let evals = report.evals.as_mut().expect("sample_evals_report has layer 1");
    evals.model_status[0].replayed = true;
    evals.model_status[0].detail = Some("its answers were replayed from cassettes: the model was not called".into());
    evals.replayed_model_calls = evals.model_calls;
    evals.eval_gate = Some(crate::report::evals::Layer1GateSection {
        result: "pass".into(),
        policy: "regression".into(),
        baseline: "--baseline green.json".into(),
        lines: vec!["`openai:gpt-4.1-mini`: pass rate 62% → 62% (Δ 0 points; noise ±12): pass".into()],
        ..crate::report::evals::Layer1GateSection::default()
    });
    report
}
