//! The `junit.xml` renderer, for CI test-result viewers (GitHub Actions reporters such as
//! EnricoMi/publish-unit-test-result-action and dorny/test-reporter, GitLab, Jenkins).
//!
//! Layout: one `<testsuites name="mcp-eval">` holding one `<testsuite>` per layer
//! (`layer-0 conformance`, absent when layer 0 did not run and there is no `run` error to hold),
//! one `<testcase>` per check named `"<id> <title>"` with classname
//! `mcp-eval.layer0.<id prefix>` and a `time` in seconds on every testcase. Status mapping:
//!
//! | check status     | JUnit                                                          |
//! |------------------|----------------------------------------------------------------|
//! | `pass`           | success                                                        |
//! | `fail`           | `<failure message type=LEVEL>` message and evidence           |
//! | `error`          | `<error message type=LEVEL>` message and evidence             |
//! | `warn`           | success, `<system-out>` starting `WARNING:`, property `mcp-eval.status=warn` |
//! | `not_applicable` | `<skipped message=reason>`                                      |
//!
//! A run that did not complete (server unreachable, interrupted) adds a testcase `run` with an
//! `<error>` describing the outcome, so the file is valid and visibly red even with no checks.
//!
//! Layer 1 adds a suite per model, `layer-1 golden set · PROVIDER:MODEL` (`… (replayed)`, with
//! a `replayed` property, when its answers came from cassettes), with a testcase per
//! case named by the case id alone, stable from run to run (the score `k of N trials passed, T
//! needed` is in the message, or a pass's `<system-out>`): `pass` is a success, `fail` a
//! `<failure>` naming the graders that failed and the first failing trial, `error` an `<error>`,
//! `skipped` a `<skipped>`. A model
//! that did not run has one testcase saying why (skipped without an API key, an error when the
//! provider was unusable). No tool result or model answer is written here, only our reasons.
//!
//! Layer 2 adds a suite per model, `layer-2 faults · PROVIDER:MODEL`, with a testcase per case ×
//! fault (`CASE · FAULT@TOOL#N`): pass a success, fail a `<failure>` with the counts and the
//! first fabricated or silent trial, inconclusive a `<skipped>`.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use super::evals::{EvalResult, EvalStatus, EvalsSection, ModelOutcome, TrialStatus};
use super::model::{CONNECT_CHECK_ID, CheckResult, RunOutcome, RunReport, Status};

/// Name of the root `<testsuites>` element.
pub const REPORT_NAME: &str = "mcp-eval";

/// Renders `junit.xml` (UTF-8, with an XML declaration and a trailing newline).
pub fn render(report: &RunReport) -> String {
    to_junit(report).to_string().expect("serializing a JUnit report to memory cannot fail")
}

/// Builds the quick-junit model that [`render`] serializes.
pub fn to_junit(report: &RunReport) -> Report {
    // Every check is layer 0's (conformance): a run of other layers only has none, and writes no
    // conformance suite unless it holds a testcase (a `run` error: the server was unreachable).
    let classname_root = format!("{REPORT_NAME}.layer0");

    let mut suite = TestSuite::new("layer-0 conformance");
    suite.add_properties([
        Property::new("server.target", clean(&report.server.target)),
        Property::new("server.transport", clean(&report.server.transport)),
        Property::new("server.era", clean(report.server.era.as_deref().unwrap_or("unknown"))),
        Property::new("tool", clean(&report.tool)),
        Property::new("spec_revision", clean(&report.spec_revision)),
        Property::new("outcome", report.outcome.as_str()),
        Property::new("verdict", report.verdict().as_str()),
    ]);
    if let Some(gate) = &report.gate {
        suite.add_properties([
            Property::new("gate.fail_on", clean(&gate.fail_on)),
            Property::new("gate.result", clean(&gate.result)),
        ]);
    }
    // With `fail-on: should` a warning fails the run, so it is a failure here too.
    let warnings_fail = report.gate.as_ref().is_some_and(|gate| gate.fail_on == "should");
    for check in &report.checks {
        // An unreachable run (or one whose environment failed) is one error: the `run` case below
        // carries it with the stderr tail.
        if (report.outcome == RunOutcome::Unreachable && check.id == CONNECT_CHECK_ID)
            || (report.outcome == RunOutcome::Environment && check.id == crate::report::model::INTERNAL_CHECK_ID)
        {
            continue;
        }
        suite.add_test_case(check_case(check, &classname_root, warnings_fail));
    }
    if let Some(case) = outcome_case(report, &classname_root) {
        suite.add_test_case(case);
    }
    // quick-junit writes skipped cases as `disabled`; junitparser and others read `skipped`.
    let skipped = suite.disabled.to_string();
    suite.extra.insert("skipped".into(), skipped.into());
    // Layer 0's own time: the run's would count layers 1–3 in the conformance suite.
    suite.set_time(Duration::from_millis(report.layer0_duration_ms.unwrap_or(report.duration_ms)));

    let mut junit = Report::new(REPORT_NAME);
    junit.set_time(Duration::from_millis(report.duration_ms));
    let stamp = report.started_at.fixed_offset();
    junit.timestamp = Some(stamp);
    suite.timestamp = Some(stamp);
    if report.layers.contains(&0) || !suite.test_cases.is_empty() {
        junit.add_test_suite(suite);
    }
    if let Some(evals) = &report.evals {
        for mut suite in layer1_suites(evals) {
            suite.timestamp = Some(stamp);
            junit.add_test_suite(suite);
        }
    }
    if let Some(section) = &report.resilience {
        for mut suite in layer2_suites(section) {
            suite.timestamp = Some(stamp);
            junit.add_test_suite(suite);
        }
    }
    if let Some(section) = report.security.as_ref().filter(|section| section.not_run.is_none()) {
        for mut suite in payload_suites(section) {
            suite.timestamp = Some(stamp);
            junit.add_test_suite(suite);
        }
    }
    if report.telemetry.is_some() || report.budget.is_some() {
        let mut suite = layer3_suite(report);
        suite.timestamp = Some(stamp);
        junit.add_test_suite(suite);
    }
    junit
}

/// Classname of every layer-3 testcase.
const LAYER3_CLASSNAME: &str = "mcp-eval.layer3";

/// The `layer-3 telemetry` suite: a testcase per tool (`TOOL · latency`, its time the p50, its
/// figures in system-out; layer 3 never fails a tool), and `cost budget` when one was set — an
/// error when the budget stopped the run (exit 6). Layer 3 not run is one skipped testcase.
fn layer3_suite(report: &RunReport) -> TestSuite {
    use super::telemetry_summary::{ms, usd};
    let mut suite = TestSuite::new("layer-3 telemetry");
    if let Some(section) = &report.telemetry {
        if let Some(table) = &section.price_table {
            suite.add_properties([
                Property::new("price_table.as_of", clean(&table.as_of)),
                Property::new("price_table.sha256", clean(&table.sha256)),
            ]);
        }
        suite.add_properties([
            Property::new("model_calls", section.total.model_calls.to_string()),
            Property::new("cost_usd", usd(section.total.cost_usd)),
        ]);
        if let Some(why) = &section.not_run {
            let mut status = TestCaseStatus::skipped();
            status.set_message(one_line(why)).set_type("not_run");
            let mut case = TestCase::new("layer 3", status);
            case.set_classname(LAYER3_CLASSNAME).set_time(Duration::ZERO);
            suite.add_test_case(case);
        }
        for tool in section.tools.iter().filter(|tool| tool.latency.count > 0) {
            let mut case = TestCase::new(clean(&format!("{} · latency", tool.tool)), TestCaseStatus::success());
            case.set_classname(LAYER3_CLASSNAME)
                .set_time(Duration::from_millis(tool.latency.p50_ms.unwrap_or(0)))
                .set_system_out(format!(
                    "{} call(s): p50 {}, p95 {}, max {} (nearest rank); isError {}, transport errors {}; {} result bytes; cost per call {}",
                    tool.latency.count,
                    ms(tool.latency.p50_ms),
                    ms(tool.latency.p95_ms),
                    ms(tool.latency.max_ms),
                    tool.error_results,
                    tool.transport_errors,
                    tool.result_bytes,
                    usd(tool.spend.cost_usd.map(|cost| cost / tool.spend.model_calls.max(1) as f64)),
                ));
            suite.add_test_case(case);
        }
    }
    if let Some(budget) = &report.budget {
        let text = format!(
            "{} spent of {} (estimate {}); {} call(s) not made; overshoot {}",
            usd(Some(budget.spent_usd)),
            usd(Some(budget.max_cost_usd)),
            usd(budget.estimate_usd),
            budget.calls_refused,
            usd(Some(budget.overshoot_usd))
        );
        let status = match budget.stopped.as_deref() {
            None => TestCaseStatus::success(),
            Some(stopped) => {
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
                let what = if stopped == "estimate" {
                    "the estimate is over the cost budget: no model call was made"
                } else {
                    "the cost budget stopped the run"
                };
                status.set_message(format!("{what}: {text}")).set_type("budget");
                status
            }
        };
        let mut case = TestCase::new("cost budget", status);
        case.set_classname(LAYER3_CLASSNAME).set_time(Duration::ZERO).set_system_out(text);
        suite.add_test_case(case);
    }
    let skipped = suite.disabled.to_string();
    suite.extra.insert("skipped".into(), skipped.into());
    suite.set_time(Duration::ZERO);
    suite
}

/// Classname of every layer-2 payload testcase.
const PAYLOAD_CLASSNAME: &str = "mcp-eval.layer2.payloads";

/// The payload suites: one per model, `layer-2 payloads · PROVIDER:MODEL`, a testcase per case ×
/// payload named `CASE · PAYLOAD@WHERE` (pass a success, fail a `<failure>`, inconclusive a
/// `<skipped>`).
fn payload_suites(section: &super::layer2::SecuritySection) -> Vec<TestSuite> {
    use super::layer2::FaultStatus;
    let mut models: Vec<&str> = Vec::new();
    for result in &section.results {
        if !models.contains(&result.model.as_str()) {
            models.push(&result.model);
        }
    }
    let mut suites = Vec::new();
    for model in models {
        let mut suite = TestSuite::new(clean(&format!("layer-2 payloads · {model}")));
        suite.add_property(Property::new("model", clean(model)));
        for result in section.results.iter().filter(|result| result.model == model) {
            let counts = &result.outcomes;
            let score = format!(
                "attacked {} of {} graded trials ({} must resist); refused {}, untested {}, error {}",
                counts.attacked,
                counts.graded(),
                result.threshold,
                counts.refused,
                counts.untested,
                counts.error
            );
            let status = match result.status {
                FaultStatus::Pass => TestCaseStatus::success(),
                FaultStatus::Fail => {
                    let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    let first = result.trials.iter().find(|trial| trial.outcome == "attacked");
                    let message = match first {
                        Some(trial) => format!("{score}; first: trial {} ({})", trial.trial, result.action),
                        None => score.clone(),
                    };
                    status.set_message(one_line(&message)).set_type(clean(&result.kind));
                    status
                }
                FaultStatus::Inconclusive => {
                    let mut status = TestCaseStatus::skipped();
                    status.set_message(one_line(&format!("inconclusive: {score}"))).set_type("inconclusive");
                    status
                }
            };
            let name = format!("{} · {}@{}", result.case, result.payload, result.place);
            let mut case = TestCase::new(clean(&name), status);
            if result.status == FaultStatus::Pass {
                case.set_system_out(score);
            }
            case.set_classname(PAYLOAD_CLASSNAME).set_time(Duration::ZERO).add_properties([
                Property::new("mcp-eval.case", clean(&result.case)),
                Property::new("mcp-eval.payload", clean(&result.payload)),
                Property::new("mcp-eval.action", clean(&result.action)),
                Property::new("mcp-eval.sha256", clean(&result.sha256)),
                Property::new(
                    "mcp-eval.attack_success_rate",
                    result.attack_success_rate.map_or_else(|| "null".to_owned(), |rate| format!("{rate:.4}")),
                ),
            ]);
            suite.add_test_case(case);
        }
        let skipped = suite.disabled.to_string();
        suite.extra.insert("skipped".into(), skipped.into());
        suite.set_time(Duration::ZERO);
        suites.push(suite);
    }
    suites
}

/// Classname of every layer-2 fault testcase.
const LAYER2_CLASSNAME: &str = "mcp-eval.layer2.faults";

/// The layer-2 suites: one per model, `layer-2 faults · PROVIDER:MODEL`, a testcase per case ×
/// fault named `CASE · FAULT@TOOL#N` (pass a success, fail a `<failure>`, inconclusive a
/// `<skipped>`: too few trials graded); one skipped testcase when layer 2 did not run.
fn layer2_suites(section: &super::layer2::ResilienceSection) -> Vec<TestSuite> {
    use super::layer2::FaultStatus;
    let mut suites = Vec::new();
    if let Some(why) = &section.not_run {
        let mut status = TestCaseStatus::skipped();
        status.set_message(one_line(why)).set_type("not_run");
        let mut case = TestCase::new("layer 2", status);
        case.set_classname(LAYER2_CLASSNAME).set_time(Duration::ZERO);
        let mut suite = TestSuite::new("layer-2 faults");
        suite.add_test_case(case);
        suite.set_time(Duration::ZERO);
        suite.extra.insert("skipped".into(), "1".into());
        suites.push(suite);
        return suites;
    }
    let mut models: Vec<&str> = Vec::new();
    for result in &section.results {
        if !models.contains(&result.model.as_str()) {
            models.push(&result.model);
        }
    }
    for model in models {
        let mut suite = TestSuite::new(clean(&format!("layer-2 faults · {model}")));
        suite.add_properties([Property::new("model", clean(model)), Property::new("source", clean(&section.source))]);
        for result in section.results.iter().filter(|result| result.model == model) {
            let counts = &result.outcomes;
            let score = format!(
                "{} of {} graded trials passed, {} needed; fabricated {}, silent {}, unclear {}, untested {}, error {}",
                counts.passed(),
                counts.graded(),
                result.threshold,
                counts.fabricated,
                counts.silent,
                counts.unclear,
                counts.untested,
                counts.error
            );
            let first_bad = result
                .trials
                .iter()
                .find(|trial| matches!(trial.outcome.as_str(), "fabricated" | "silent"))
                // The outcome only: its reason quotes the model's answer, which stays in report.json.
                .map(|trial| format!("first: trial {} {}", trial.trial, trial.outcome));
            let status = match result.status {
                FaultStatus::Pass => TestCaseStatus::success(),
                FaultStatus::Fail => {
                    let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    let message = match &first_bad {
                        Some(bad) => format!("{score}; {bad}"),
                        None => score.clone(),
                    };
                    status.set_message(one_line(&message)).set_type(clean(&result.kind));
                    status
                }
                FaultStatus::Inconclusive => {
                    let mut status = TestCaseStatus::skipped();
                    status.set_message(one_line(&format!("inconclusive: {score}"))).set_type("inconclusive");
                    status
                }
            };
            let name = format!("{} · {}@{}#{}", result.case, result.fault, result.tool, result.on_call);
            let mut case = TestCase::new(clean(&name), status);
            if result.status == FaultStatus::Pass {
                case.set_system_out(score);
            }
            case.set_classname(LAYER2_CLASSNAME).set_time(Duration::ZERO).add_properties([
                Property::new("mcp-eval.case", clean(&result.case)),
                Property::new("mcp-eval.fault", clean(&result.fault)),
                Property::new("mcp-eval.tool", clean(&result.tool)),
                Property::new("mcp-eval.sha256", clean(&result.sha256)),
                Property::new(
                    "mcp-eval.fabrication_rate",
                    result.fabrication_rate.map_or_else(|| "null".to_owned(), |rate| format!("{rate:.4}")),
                ),
            ]);
            suite.add_test_case(case);
        }
        let skipped = suite.disabled.to_string();
        suite.extra.insert("skipped".into(), skipped.into());
        suite.set_time(Duration::ZERO);
        suites.push(suite);
    }
    suites
}

/// Classname of every layer-1 testcase.
const LAYER1_CLASSNAME: &str = "mcp-eval.layer1.golden";

/// The layer-1 suites: one per model that ran (a testcase per case), one per model that did not
/// (a single skipped or error testcase saying why), and one `layer-1 golden set` suite with a
/// skipped testcase when layer 1 did not run at all.
fn layer1_suites(evals: &EvalsSection) -> Vec<TestSuite> {
    let mut suites = Vec::new();
    if let Some(why) = &evals.layer1_not_run {
        let mut status = TestCaseStatus::skipped();
        status.set_message(one_line(why)).set_type("not_run");
        let mut case = TestCase::new("layer 1", status);
        case.set_classname(LAYER1_CLASSNAME).set_time(Duration::ZERO);
        let mut suite = TestSuite::new("layer-1 golden set");
        suite.add_test_case(case);
        suite.set_time(Duration::ZERO);
        suite.extra.insert("skipped".into(), "1".into());
        suites.push(suite);
    }
    let mut models: Vec<&str> = evals.models.iter().map(String::as_str).collect();
    for model in evals.model_status.iter().map(|status| status.model.as_str()).chain(evals.models_with_results()) {
        if !models.contains(&model) {
            models.push(model);
        }
    }
    for model in models {
        let replayed = evals.replayed(model);
        let mut suite = TestSuite::new(clean(&format!("layer-1 golden set · {}", evals.model_shown(model))));
        suite.add_property(Property::new("model", clean(model)));
        if replayed {
            // Said where CI shows a suite: its name above, a property, and its output.
            suite.add_property(Property::new("replayed", "true"));
            suite.set_system_out(format!(
                "{model}: answers replayed from cassettes, no model was called; model calls: {}; verdicts {}",
                evals.model_calls_text(),
                crate::report::evals::REPLAYED_VERDICT
            ));
        }
        if let Some(golden) = &evals.golden_set {
            suite.add_properties([
                Property::new("golden_set", clean(&golden.path)),
                Property::new("golden_set.sha256", clean(&golden.sha256)),
            ]);
        }
        let status = evals.model_status.iter().find(|status| status.model == model);
        let results: Vec<&EvalResult> = evals.evals.iter().filter(|eval| eval.model == model).collect();
        match status.map(|status| status.status) {
            Some(outcome @ (ModelOutcome::NoApiKey | ModelOutcome::Unusable)) if results.is_empty() => {
                let detail = status.and_then(|status| status.detail.as_deref());
                suite.add_property(Property::new("model_status", model_outcome_str(outcome)));
                suite.add_test_case(model_not_run_case(outcome, detail));
                suite.set_time(Duration::ZERO);
            }
            outcome => {
                suite.add_property(Property::new("model_status", outcome.map_or("ran", model_outcome_str)));
                let mut total = Duration::ZERO;
                for eval in results {
                    let case = eval_case(eval, replayed && eval.cached.is_none());
                    total += case.time.unwrap_or_default();
                    suite.add_test_case(case);
                }
                suite.set_time(total);
            }
        }
        let skipped = suite.disabled.to_string();
        suite.extra.insert("skipped".into(), skipped.into());
        suites.push(suite);
    }
    suites
}

/// `ran`, `no_api_key` or `unusable`, as in `report.json`.
fn model_outcome_str(outcome: ModelOutcome) -> &'static str {
    match outcome {
        ModelOutcome::Ran => "ran",
        ModelOutcome::NoApiKey => "no_api_key",
        ModelOutcome::Unusable => "unusable",
    }
}

/// The single testcase of a model that did not run: skipped without an API key, an error when
/// the provider was unusable.
fn model_not_run_case(outcome: ModelOutcome, detail: Option<&str>) -> TestCase {
    let (what, mut status) = match outcome {
        ModelOutcome::NoApiKey => ("not run: no API key", TestCaseStatus::skipped()),
        _ => ("not run: the provider is unusable", TestCaseStatus::non_success(NonSuccessKind::Error)),
    };
    let message = match detail {
        Some(detail) => format!("{what} ({detail})"),
        None => what.to_owned(),
    };
    status.set_message(one_line(&message)).set_type(model_outcome_str(outcome));
    let mut case = TestCase::new(what, status);
    case.set_classname(LAYER1_CLASSNAME).set_time(Duration::ZERO);
    case
}

/// The testcase of one case × model, named by the case alone (a name that stays the same from
/// run to run, so CI test-history views follow it); the score is in the message of a failure or
/// an error and in the output of a pass.
fn eval_case(eval: &EvalResult, replayed: bool) -> TestCase {
    let status = match eval.status {
        EvalStatus::Pass => TestCaseStatus::success(),
        EvalStatus::Fail | EvalStatus::Error => {
            let kind = if eval.status == EvalStatus::Fail { NonSuccessKind::Failure } else { NonSuccessKind::Error };
            let mut status = TestCaseStatus::non_success(kind);
            status
                .set_message(one_line(&if replayed {
                    format!("{} ({})", eval_message(eval), crate::report::evals::REPLAYED_VERDICT)
                } else {
                    eval_message(eval)
                }))
                .set_type(clean(&eval.kind))
                .set_description(eval_details(eval));
            status
        }
        EvalStatus::Skipped => {
            let mut status = TestCaseStatus::skipped();
            status.set_message(one_line(eval.reason.as_deref().unwrap_or("not run"))).set_type("skipped");
            status
        }
    };
    let mut case = TestCase::new(clean(&eval.case), status);
    if eval.status == EvalStatus::Pass && replayed {
        case.set_system_out(format!("{} ({})", score(eval), crate::report::evals::REPLAYED_VERDICT));
    } else if eval.status == EvalStatus::Pass {
        case.set_system_out(score(eval));
    }
    let time: u64 = eval.traces.iter().map(|run| run.duration_ms).sum();
    case.set_classname(LAYER1_CLASSNAME).set_time(Duration::from_millis(time)).add_properties([
        Property::new("mcp-eval.case", clean(&eval.case)),
        Property::new("mcp-eval.status", eval.status.as_str()),
        Property::new("mcp-eval.case_sha256", clean(&eval.case_sha256)),
        Property::new("mcp-eval.kind", clean(&eval.kind)),
        Property::new("mcp-eval.threshold", eval.threshold.to_string()),
        Property::new("mcp-eval.passed", eval.passed.to_string()),
        Property::new("mcp-eval.completed", eval.completed.to_string()),
        Property::new("mcp-eval.runs", eval.runs.to_string()),
        Property::new("mcp-eval.wilson_95", format!("[{}, {}]", eval.wilson_95[0], eval.wilson_95[1])),
    ]);
    if eval.flaky {
        case.add_property(Property::new("mcp-eval.flaky", "true"));
    }
    if replayed {
        case.add_property(Property::new("mcp-eval.replayed", "true"));
    }
    case
}

/// The score of a case against its threshold: `k of N trials passed, T needed` (`completed` for
/// an error).
fn score(eval: &EvalResult) -> String {
    if eval.status == EvalStatus::Error {
        format!("{} of {} trials completed, {} needed", eval.completed, eval.runs, eval.threshold)
    } else {
        format!("{} of {} trials passed, {} needed", eval.passed, eval.runs, eval.threshold)
    }
}

/// The one-line message of a failed or errored case: the count against the threshold, the
/// graders that failed a trial, and the first bad trial's reason.
fn eval_message(eval: &EvalResult) -> String {
    let mut parts = vec![score(eval)];
    let failing: Vec<String> = eval
        .failing_graders()
        .into_iter()
        .map(|(name, tally)| format!("{name} {}/{}", tally.passed, tally.graded))
        .collect();
    if !failing.is_empty() {
        parts.push(format!("failing: {}", failing.join(", ")));
    }
    match eval.first_bad_trial() {
        Some((Some(trial), reason)) => parts.push(format!("trial {trial}: {reason}")),
        Some((None, reason)) => parts.push(reason),
        None => {}
    }
    parts.join("; ")
}

/// The text body of a failed or errored case: the verdict, each grader's tally and each trial's
/// status and reason (never the model's answer or a tool's result).
fn eval_details(eval: &EvalResult) -> String {
    let mut text = eval.reason.clone().unwrap_or_else(|| eval_message(eval));
    if !eval.graders.is_empty() {
        text.push_str("\n\n--- graders (trials passed / graded) ---");
        for (name, tally) in &eval.graders {
            text.push_str(&format!("\n{name}: {}/{}", tally.passed, tally.graded));
        }
    }
    if !eval.traces.is_empty() {
        text.push_str("\n\n--- trials ---");
        for trial in &eval.traces {
            let status = match trial.status {
                TrialStatus::Pass => "pass",
                TrialStatus::Fail => "fail",
                TrialStatus::Error => "error",
                TrialStatus::Skipped => "skipped",
            };
            text.push_str(&format!("\ntrial {}: {status}", trial.run));
            if let Some(reason) = &trial.reason {
                text.push_str(" — ");
                text.push_str(&reason.replace(['\r', '\n'], " "));
            }
            if trial.result_changed > 0 {
                text.push_str(&format!(
                    " ({}: {} model call(s) replayed by the tolerant match)",
                    crate::report::evals::RESULT_CHANGED,
                    trial.result_changed
                ));
            }
        }
    }
    text.push_str(&format!("\n\ncase_sha256: {}", eval.case_sha256));
    clean(&text)
}

/// The testcase of one check.
fn check_case(check: &CheckResult, classname_root: &str, warnings_fail: bool) -> TestCase {
    let level = check.level.as_str();
    let status = match check.status {
        // An INFO row grades nothing, under `should` too.
        Status::Warn if warnings_fail && check.level != crate::report::model::Level::Info => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status.set_message(one_line(&check.message)).set_type(level).set_description(details(check));
            status
        }
        Status::Pass | Status::Warn => TestCaseStatus::success(),
        Status::Fail | Status::Error => {
            let kind = if check.status == Status::Fail { NonSuccessKind::Failure } else { NonSuccessKind::Error };
            let mut status = TestCaseStatus::non_success(kind);
            status.set_message(one_line(&check.message)).set_type(level).set_description(details(check));
            status
        }
        Status::NotApplicable => {
            let mut status = TestCaseStatus::skipped();
            status.set_message(one_line(&check.message)).set_type("not_applicable");
            status
        }
        // Skipped, never passed: the row did not meet its requirement; the message gives the
        // waiver's reason, the description the finding.
        Status::Waived => {
            let mut status = TestCaseStatus::skipped();
            status.set_message(one_line(&waived_text(check))).set_type("waived").set_description(details(check));
            status
        }
    };
    let mut case = TestCase::new(clean(&format!("{} {}", check.id, check.title)), status);
    case.set_classname(format!("{classname_root}.{}", id_prefix(&check.id)))
        .set_time(Duration::from_millis(check.duration_ms))
        .add_properties([
            Property::new("mcp-eval.level", level),
            Property::new("mcp-eval.status", check.status.as_str()),
            Property::new("mcp-eval.spec", clean(&check.spec)),
        ]);
    if check.status == Status::Warn && !(warnings_fail && check.level != crate::report::model::Level::Info) {
        case.set_system_out(format!("WARNING: {}", details(check)));
    }
    case
}

/// `waived (would fail): REASON (FILE:LINE)`: what a waived row's testcase says.
fn waived_text(check: &CheckResult) -> String {
    match &check.waiver {
        Some(waiver) => format!("waived (would {}): {} ({})", waiver.status.as_str(), waiver.reason, waiver.source),
        None => "waived".into(),
    }
}

/// The extra `run` testcase of a run that did not complete; `None` for a completed run.
fn outcome_case(report: &RunReport, classname_root: &str) -> Option<TestCase> {
    let (what, ty) = match report.outcome {
        RunOutcome::Completed => return None,
        RunOutcome::Unreachable => ("the server could not be reached or started", "unreachable"),
        RunOutcome::Environment => ("mcp-eval's own environment failed before any request was sent", "environment"),
        RunOutcome::Interrupted => ("the run was interrupted; later checks did not run", "interrupted"),
        RunOutcome::NeedsCredentials => {
            ("the server requires credentials; only the authorization rows could be graded", "needs_credentials")
        }
    };
    let message = match &report.outcome_detail {
        Some(detail) => format!("{what}: {detail}"),
        None => what.to_owned(),
    };
    let mut text = message.clone();
    if let Some(tail) = &report.server.stderr_tail {
        text.push_str("\n\n--- server stderr (tail) ---\n");
        text.push_str(tail);
    }
    let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
    status.set_message(one_line(&message)).set_type(ty).set_description(clean(&text));
    let mut case = TestCase::new("run", status);
    case.set_classname(format!("{classname_root}.run"))
        .set_time(Duration::from_millis(report.duration_ms))
        .add_property(Property::new("mcp-eval.outcome", report.outcome.as_str()));
    Some(case)
}

/// The text body of a failure, error or warning: the message, the spec source and every
/// evidence excerpt.
fn details(check: &CheckResult) -> String {
    let mut text = format!("{}\n\nspec: {}", check.message, check.spec);
    for evidence in &check.evidence {
        text.push_str("\n\n--- ");
        text.push_str(&evidence.label);
        text.push_str(" ---\n");
        text.push_str(&evidence.text);
    }
    clean(&text)
}

/// The letters an id starts with (`D` of `D-1`, `HT` of `HT-3`), or `other`.
fn id_prefix(id: &str) -> &str {
    let end = id.char_indices().find(|(_, c)| !c.is_ascii_alphabetic()).map_or(id.len(), |(i, _)| i);
    if end == 0 { "other" } else { &id[..end] }
}

/// Removes characters XML 1.0 cannot carry at all (quick-junit already strips C0 controls
/// and ANSI escapes, but not the non-characters U+FFFE and U+FFFF).
fn clean(text: &str) -> String {
    text.chars().filter(|c| !matches!(c, '\u{FFFE}' | '\u{FFFF}')).collect()
}

/// An attribute value on one line: parsers fold newlines in attributes to spaces anyway.
fn one_line(text: &str) -> String {
    clean(text).replace(['\r', '\n', '\t'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::{check, sample_report, unreachable_report};

    use crate::report::model::Level;

    fn parse(xml: &str) -> Report {
        Report::deserialize_from_str(xml).expect("junit.xml parses back with quick-junit")
    }

    #[test]
    fn a_waived_row_is_skipped_with_its_reason_never_failed() {
        let xml = render(&crate::report::test_support::waived_report());
        let parsed = parse(&xml);
        assert_eq!((parsed.failures, parsed.errors), (0, 1), "the waived failure no longer fails the suite");
        assert!(
            xml.contains("<skipped message=\"waived (would fail): an upstream SDK&apos;s error (mcp-eval.yaml:3)\" type=\"waived\">"),
            "{xml}"
        );
        assert!(xml.contains("<property name=\"mcp-eval.status\" value=\"waived\"/>"), "{xml}");
    }

    /// Issue 41: the layer-0 suite's time is layer 0's own, not the whole run's (layers 1–3
    /// included); a report without layer 0's time falls back to the run's.
    #[test]
    fn the_layer_0_suite_takes_layer_0s_time_not_the_runs() {
        let mut report = sample_report();
        report.duration_ms = 53_600;
        report.layer0_duration_ms = Some(170);
        let ms = |time: Option<Duration>| time.map(|time| (time.as_secs_f64() * 1000.0).round() as u64);
        let parsed = parse(&render(&report));
        assert_eq!(ms(parsed.test_suites[0].time), Some(170));
        assert_eq!(ms(parsed.time), Some(53_600), "the whole report keeps the run's time");
        report.layer0_duration_ms = None;
        assert_eq!(ms(parse(&render(&report)).test_suites[0].time), Some(53_600));
    }

    #[test]
    fn parses_back_with_counts_and_statuses() {
        let report = sample_report();
        let xml = render(&report);
        assert!(xml.starts_with("<?xml"));
        let parsed = parse(&xml);
        assert_eq!(parsed.name.as_str(), "mcp-eval");
        assert_eq!(parsed.tests, 5);
        assert_eq!(parsed.failures, 1);
        assert_eq!(parsed.errors, 1);
        assert_eq!(parsed.test_suites.len(), 1);

        let suite = &parsed.test_suites[0];
        assert_eq!(suite.name.as_str(), "layer-0 conformance");
        assert_eq!(suite.tests, 5);
        assert_eq!(suite.failures, 1);
        assert_eq!(suite.errors, 1);
        assert_eq!(suite.disabled, 1);
        assert!(xml.contains(" skipped=\"1\""));
        assert!(suite.timestamp.is_some());
        assert!(parsed.timestamp.is_some());
        let props: Vec<(&str, &str)> = suite.properties.iter().map(|p| (p.name.as_str(), p.value.as_str())).collect();
        assert!(props.contains(&("server.target", "http://127.0.0.1:8080/mcp")));
        assert!(props.contains(&("server.transport", "http")));
        assert!(props.contains(&("server.era", "2026-07-28")));

        let cases = &suite.test_cases;
        let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names[1], "D-1 server/discover answers");
        for case in cases {
            assert!(case.time.is_some(), "{} has no time", case.name.as_str());
        }
        assert_eq!(cases[1].classname.as_ref().unwrap().as_str(), "mcp-eval.layer0.D");
        let time = cases[1].time.unwrap().as_secs_f64();
        assert!((time - 1.234).abs() < 1e-6);

        assert!(matches!(cases[0].status, TestCaseStatus::Success { .. }));
        match &cases[1].status {
            TestCaseStatus::NonSuccess { kind: NonSuccessKind::Failure, message, ty, description, .. } => {
                assert!(message.as_ref().unwrap().starts_with("server/discover returned"));
                assert_eq!(ty.as_ref().unwrap().as_str(), "MUST");
                let text = description.as_ref().unwrap();
                assert!(text.contains("--- request ---"));
                assert!(text.contains("\"method\":\"server/discover\""));
                assert!(text.contains("Method not found"));
            }
            other => panic!("fail maps to failure, got {other:?}"),
        }
        assert!(matches!(cases[2].status, TestCaseStatus::Success { .. }));
        let out = cases[2].system_out.as_ref().unwrap();
        assert!(out.starts_with("WARNING: responses carry no Cache-Control header"));
        assert!(cases[2].properties.iter().any(|p| p.name.as_str() == "mcp-eval.status" && p.value.as_str() == "warn"));
        match &cases[3].status {
            TestCaseStatus::Skipped { message, .. } => {
                assert_eq!(message.as_ref().unwrap().as_str(), "the server advertises no tools capability")
            }
            other => panic!("not_applicable maps to skipped, got {other:?}"),
        }
        assert!(matches!(cases[4].status, TestCaseStatus::NonSuccess { kind: NonSuccessKind::Error, .. }));
    }

    #[test]
    fn every_testcase_has_time_and_markup_is_escaped() {
        let mut report = sample_report();
        report.checks.push(check(
            "X-9",
            "<b>hostile</b> & \"quoted\"",
            Level::Must,
            Status::Fail,
            "</failure></testcase>]]><!-- \u{1b}[31mred\u{1b}[0m \u{0}\u{FFFF}",
        ));
        let xml = render(&report);
        let testcases = xml.matches("<testcase ").count();
        assert_eq!(testcases, report.checks.len());
        for tag in xml.split("<testcase ").skip(1) {
            let open = &tag[..tag.find('>').unwrap()];
            assert!(open.contains(" time=\""), "testcase without time: {open}");
        }
        assert!(xml.contains("&lt;b&gt;hostile&lt;/b&gt; &amp; &quot;quoted&quot;"));
        assert!(!xml.contains("</failure></testcase>]]>"));
        assert!(!xml.contains('\u{1b}'));
        assert!(!xml.contains('\u{0}'));
        assert!(!xml.contains('\u{FFFF}'));
        let parsed = parse(&xml);
        let case = parsed.test_suites[0].test_cases.last().unwrap();
        assert_eq!(case.name.as_str(), "X-9 <b>hostile</b> & \"quoted\"");
        assert_eq!(case.classname.as_ref().unwrap().as_str(), "mcp-eval.layer0.X");
        assert_eq!(parsed.failures, 2);
    }

    #[test]
    fn unreachable_run_is_one_error_case() {
        let xml = render(&unreachable_report());
        let parsed = parse(&xml);
        assert_eq!(parsed.tests, 1);
        assert_eq!(parsed.errors, 1);
        assert_eq!(parsed.failures, 0);
        let case = &parsed.test_suites[0].test_cases[0];
        assert_eq!(case.name.as_str(), "run");
        assert!(case.time.is_some());
        match &case.status {
            TestCaseStatus::NonSuccess { kind: NonSuccessKind::Error, message, ty, .. } => {
                let message = message.as_ref().unwrap();
                assert!(message.contains("could not be reached"));
                assert!(message.contains("connection refused"));
                assert_eq!(ty.as_ref().unwrap().as_str(), "unreachable");
            }
            other => panic!("unreachable maps to an error, got {other:?}"),
        }
        assert!(xml.contains("name=\"server.era\" value=\"unknown\""));
    }

    #[test]
    fn interrupted_run_keeps_checks_and_adds_run_error() {
        let mut report = sample_report();
        report.outcome = RunOutcome::Interrupted;
        report.outcome_detail = Some("SIGINT".to_owned());
        let parsed = parse(&render(&report));
        assert_eq!(parsed.tests, 6);
        assert_eq!(parsed.errors, 2);
        let last = parsed.test_suites[0].test_cases.last().unwrap();
        assert_eq!(last.name.as_str(), "run");
    }

    #[test]
    fn the_timestamp_is_the_start_of_the_run() {
        let xml = render(&sample_report());
        assert!(xml.contains("timestamp=\"2026-08-01T12:00:00"), "{xml}");
    }

    #[test]
    fn layer1_testcase_names_stay_the_same_when_the_score_changes_and_the_score_is_in_the_message() {
        use crate::report::test_support::sample_evals_report;
        let report = sample_evals_report();
        let parsed = parse(&render(&report));
        let suite = &parsed.test_suites[1];
        let names: Vec<&str> = suite.test_cases.iter().map(|c| c.name.as_str()).collect();
        assert!(names.iter().all(|name| !name.contains('/') && !name.contains('(')), "{names:?}");
        assert_eq!(names[0], "lookup-weather");
        // A pass says its score too: in its output, since a success has no message.
        let out = suite.test_cases[0].system_out.as_ref().map(|out| out.as_str().to_owned()).unwrap_or_default();
        assert!(out.contains("5 of 5 trials passed"), "{out:?}");
        match &suite.test_cases[1].status {
            TestCaseStatus::NonSuccess { message, .. } => {
                assert!(message.as_ref().unwrap().as_str().starts_with("0 of 5 trials passed"), "{message:?}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn layer_1_alone_writes_no_empty_conformance_suite() {
        use crate::report::test_support::sample_evals_report;
        let mut report = sample_evals_report();
        report.layers = vec![1];
        report.checks.clear();
        let parsed = parse(&render(&report));
        let names: Vec<&str> = parsed.test_suites.iter().map(|suite| suite.name.as_str()).collect();
        assert!(names.iter().all(|name| !name.contains("conformance")), "{names:?}");
        assert!(parsed.test_suites.iter().all(|suite| suite.tests > 0), "no empty suite: {names:?}");
    }

    #[test]
    fn layer1_has_a_suite_per_model_and_a_testcase_per_case() {
        use crate::report::evals::ModelStatus;
        use crate::report::test_support::{TRACE_ONLY_TEXT, sample_evals_report};

        let mut report = sample_evals_report();
        let xml = render(&report);
        assert!(!xml.contains(TRACE_ONLY_TEXT));
        let parsed = parse(&xml);
        assert_eq!(parsed.test_suites.len(), 3);
        let suite = &parsed.test_suites[1];
        assert_eq!(suite.name.as_str(), "layer-1 golden set · openai:gpt-4.1-mini");
        assert_eq!((suite.tests, suite.failures, suite.errors, suite.disabled), (7, 3, 1, 1));
        let names: Vec<&str> = suite.test_cases.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names[0], "lookup-weather");
        assert_eq!(names[2], "search-docs");
        match &suite.test_cases[2].status {
            TestCaseStatus::NonSuccess { kind: NonSuccessKind::Failure, message, ty, .. } => {
                let message = message.as_ref().unwrap().as_str();
                assert!(message.contains("failing: arguments 3/5"), "{message}");
                assert!(!message.contains("selection"), "a grader that passed every trial is not named: {message}");
                assert!(message.contains("trial 2: argument `query`"), "{message}");
                assert_eq!(ty.as_ref().unwrap().as_str(), "soft");
            }
            other => panic!("fail maps to failure, got {other:?}"),
        }
        let flaky = |case: &TestCase| {
            case.properties.iter().any(|p| p.name.as_str() == "mcp-eval.flaky" && p.value.as_str() == "true")
        };
        assert!(flaky(&suite.test_cases[2]));
        assert!(!flaky(&suite.test_cases[0]));
        assert!(matches!(suite.test_cases[5].status, TestCaseStatus::NonSuccess { kind: NonSuccessKind::Error, .. }));
        match &suite.test_cases[6].status {
            TestCaseStatus::Skipped { message, .. } => {
                assert!(message.as_ref().unwrap().as_str().contains("call cap"))
            }
            other => panic!("skipped maps to skipped, got {other:?}"),
        }

        let absent = &parsed.test_suites[2];
        assert_eq!(absent.name.as_str(), "layer-1 golden set · anthropic:claude-sonnet-4-5");
        assert_eq!((absent.tests, absent.disabled), (1, 1));

        // An unusable provider is an error, not a skip.
        let evals = report.evals.as_mut().unwrap();
        evals.model_status[1] = ModelStatus {
            model: "anthropic:claude-sonnet-4-5".into(),
            status: ModelOutcome::Unusable,
            detail: Some("the provider answered 401: check the key".into()),
            replayed: false,
        };
        let parsed = parse(&render(&report));
        let absent = &parsed.test_suites[2];
        match &absent.test_cases[0].status {
            TestCaseStatus::NonSuccess { kind: NonSuccessKind::Error, message, .. } => {
                assert!(message.as_ref().unwrap().as_str().contains("answered 401"))
            }
            other => panic!("unusable maps to an error, got {other:?}"),
        }
    }

    #[test]
    fn layer1_not_run_is_one_skipped_testcase() {
        let mut report = sample_report();
        report.evals = Some(crate::report::evals::EvalsSection {
            layer1_not_run: Some("no golden set was given (--golden-set)".into()),
            ..Default::default()
        });
        let parsed = parse(&render(&report));
        assert_eq!(parsed.test_suites.len(), 2);
        let suite = &parsed.test_suites[1];
        assert_eq!(suite.name.as_str(), "layer-1 golden set");
        assert!(
            matches!(&suite.test_cases[0].status, TestCaseStatus::Skipped { message: Some(m), .. } if m.as_str().contains("no golden set"))
        );
    }

    #[test]
    fn id_prefixes() {
        assert_eq!(id_prefix("D-1"), "D");
        assert_eq!(id_prefix("HT-12"), "HT");
        assert_eq!(id_prefix("7"), "other");
        assert_eq!(id_prefix(""), "other");
    }
}
