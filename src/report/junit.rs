//! The `junit.xml` renderer, for CI test-result viewers (GitHub Actions reporters such as
//! EnricoMi/publish-unit-test-result-action and dorny/test-reporter, GitLab, Jenkins).
//!
//! Layout: one `<testsuites name="mcp-eval">` holding one `<testsuite>` per layer
//! (`layer-0 conformance`), one `<testcase>` per check named `"<id> <title>"` with classname
//! `mcp-eval.layer<N>.<id prefix>` and a `time` in seconds on every testcase. Status mapping:
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

use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use super::model::{CONNECT_CHECK_ID, CheckResult, RunOutcome, RunReport, Status};

/// Name of the root `<testsuites>` element.
pub const REPORT_NAME: &str = "mcp-eval";

/// Renders `junit.xml` (UTF-8, with an XML declaration and a trailing newline).
pub fn render(report: &RunReport) -> String {
    to_junit(report).to_string().expect("serializing a JUnit report to memory cannot fail")
}

/// Builds the quick-junit model that [`render`] serializes.
pub fn to_junit(report: &RunReport) -> Report {
    // The checks carry no layer of their own yet: every check belongs to the first layer run.
    let layer = report.layers.first().copied().unwrap_or(0);
    let classname_root = format!("{REPORT_NAME}.layer{layer}");

    let mut suite = TestSuite::new(format!("layer-{layer} conformance"));
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
        // An unreachable run is one error: the `run` case below carries it with the stderr tail.
        if report.outcome == RunOutcome::Unreachable && check.id == CONNECT_CHECK_ID {
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
    suite.set_time(Duration::from_millis(report.duration_ms));

    let mut junit = Report::new(REPORT_NAME);
    junit.set_time(Duration::from_millis(report.duration_ms));
    let stamp = report.started_at.fixed_offset();
    junit.timestamp = Some(stamp);
    suite.timestamp = Some(stamp);
    junit.add_test_suite(suite);
    junit
}

/// The testcase of one check.
fn check_case(check: &CheckResult, classname_root: &str, warnings_fail: bool) -> TestCase {
    let level = check.level.as_str();
    let status = match check.status {
        Status::Warn if warnings_fail => {
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
    };
    let mut case = TestCase::new(clean(&format!("{} {}", check.id, check.title)), status);
    case.set_classname(format!("{classname_root}.{}", id_prefix(&check.id)))
        .set_time(Duration::from_millis(check.duration_ms))
        .add_properties([
            Property::new("mcp-eval.level", level),
            Property::new("mcp-eval.status", check.status.as_str()),
            Property::new("mcp-eval.spec", clean(&check.spec)),
        ]);
    if check.status == Status::Warn && !warnings_fail {
        case.set_system_out(format!("WARNING: {}", details(check)));
    }
    case
}

/// The extra `run` testcase of a run that did not complete; `None` for a completed run.
fn outcome_case(report: &RunReport, classname_root: &str) -> Option<TestCase> {
    let (what, ty) = match report.outcome {
        RunOutcome::Completed => return None,
        RunOutcome::Unreachable => ("the server could not be reached or started", "unreachable"),
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
    fn id_prefixes() {
        assert_eq!(id_prefix("D-1"), "D");
        assert_eq!(id_prefix("HT-12"), "HT");
        assert_eq!(id_prefix("7"), "other");
        assert_eq!(id_prefix(""), "other");
    }
}
