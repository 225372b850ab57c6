//! Snapshot tests (`insta`) of what people read: `summary.md` and `junit.xml` for a failing, an
//! unreachable and a legacy run, and a run with layer 1 (golden-set evals). A change to a renderer shows up as a reviewable diff of the
//! files in `src/report/snapshots/`; accept it with `INSTA_UPDATE=always cargo test` after
//! reading the diff (CI never writes snapshots).

use super::model::{Level, Status};
use super::test_support::{
    TRACE_ONLY_TEXT, check, replayed_evals_report, sample_evals_report, sample_report, unreachable_report,
};
use super::{junit, markdown};

/// A legacy server's report: graded rows, the era row and two migration rows.
fn legacy_report() -> super::model::RunReport {
    let mut report = sample_report();
    report.server.era = Some("2025-11-25".into());
    report.server.era_evidence = Some("server/discover answered -32601; initialize succeeded".into());
    report.checks.retain(|check| check.status != Status::Fail);
    let mut migration = check(
        "D-1",
        "server/discover answers",
        Level::Info,
        Status::NotApplicable,
        "2026-07-28 migration: would not meet this requirement: server/discover returned -32601",
    );
    migration.migration = true;
    let mut second = check(
        "H-2",
        "MCP-Protocol-Version is required",
        Level::Info,
        Status::NotApplicable,
        "2026-07-28 migration: would not meet this requirement: a request without the header was served",
    );
    second.migration = true;
    report.checks.push(migration);
    report.checks.push(second);
    report.checks.push(check("ERA", "protocol era", Level::Info, Status::Warn, "the server speaks 2025-11-25 only"));
    report
}

#[test]
fn summary_of_a_failing_run() {
    insta::assert_snapshot!(markdown::render(&sample_report()));
}

#[test]
fn summary_of_an_unreachable_run() {
    insta::assert_snapshot!(markdown::render(&unreachable_report()));
}

#[test]
fn summary_of_a_legacy_run() {
    insta::assert_snapshot!(markdown::render(&legacy_report()));
}

#[test]
fn junit_of_a_failing_run() {
    insta::assert_snapshot!(junit::render(&sample_report()));
}

#[test]
fn junit_of_an_unreachable_run() {
    insta::assert_snapshot!(junit::render(&unreachable_report()));
}

#[test]
fn summary_of_a_run_with_golden_set_evals() {
    let md = markdown::render(&sample_evals_report());
    assert!(!md.contains(TRACE_ONLY_TEXT), "a tool result or model answer reached summary.md");
    insta::assert_snapshot!(md);
}

#[test]
fn junit_of_a_run_with_golden_set_evals() {
    let xml = junit::render(&sample_evals_report());
    assert!(!xml.contains(TRACE_ONLY_TEXT), "a tool result or model answer reached junit.xml");
    insta::assert_snapshot!(xml);
}

#[test]
fn summary_of_a_run_replayed_from_cassettes() {
    insta::assert_snapshot!(markdown::render(&replayed_evals_report()));
}

#[test]
fn junit_of_a_run_replayed_from_cassettes() {
    insta::assert_snapshot!(junit::render(&replayed_evals_report()));
}
