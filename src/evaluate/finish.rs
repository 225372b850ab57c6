//! The end of every path: the report redacted, written (`report.json`, `junit.xml`,
//! `summary.md`, SARIF where asked), decided by [`crate::verdict`], and the `finished` event;
//! and the `--events` file the run streams to.

use std::path::Path;
use std::time::Instant;

use crate::error::{Kind, UserError};
use crate::mcp::evidence::Redactor;
use crate::report::model::{GateSection, RunOutcome, RunReport};
use crate::report::{self, WrittenFiles};
use crate::settings::Settings;
use crate::verdict::{self, Interrupt, VerdictInput};

use super::{Evaluation, RunEvent};

/// How the run ended besides the report, for the exit status.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ending {
    /// Our environment failed (no port for the demo server, cassettes that could not be written).
    pub environment_failed: bool,
    /// Layer 1 refused its input (a tool the server does not list, too many tools).
    pub input_error: bool,
}

/// Redacts, writes the reports, asks the gate, and reports the end.
pub(super) fn finish(
    settings: &Settings,
    report: RunReport,
    interrupt: Option<Interrupt>,
    ending: Ending,
    redactor: &Redactor,
    events: &(dyn Fn(&RunEvent) + Sync),
) -> Evaluation {
    let report = redact_report(report, redactor);
    if let Some(detail) = &report.outcome_detail {
        events(&RunEvent::EndedEarly {
            interrupted: report.outcome == RunOutcome::Interrupted,
            detail: detail.clone(),
            stderr_tail: report.server.stderr_tail.clone(),
        });
    }
    let mut report = report;
    let mut decision =
        verdict::decide(&report, VerdictInput { fail_on: settings.fail_on, interrupt, reports_failed: false });
    report.gate = Some(GateSection {
        fail_on: settings.fail_on.as_str().to_owned(),
        result: decision.result.as_str().to_owned(),
    });
    let written = write_reports(&report, settings).map_err(|error| {
        UserError::new(Kind::Environment, redactor.redact(&error.to_string())).with_hint(
            "check that the report directory (--out, input `report-path`) and --junit-path point to writable places with free space",
        )
    });
    if written.is_err() {
        decision.exit = decision.exit.max(verdict::ExitStatus::Environment);
    }
    if ending.environment_failed {
        decision.exit = decision.exit.max(verdict::ExitStatus::Environment);
    }
    if ending.input_error {
        decision.exit = decision.exit.max(verdict::ExitStatus::InvalidInput);
    }
    events(&RunEvent::Finished {
        counts: report.counts(),
        fail_on: settings.fail_on,
        failing: report
            .checks
            .iter()
            .filter(|check| check.status == crate::report::model::Status::Fail)
            .map(|check| check.id.clone())
            .collect(),
        decision,
        out_dir: written.as_ref().ok().map(|_| settings.out_dir_label.clone()),
        cases: report.evals.as_ref().filter(|_| report.layers.contains(&1)).map(|evals| {
            use crate::report::evals::EvalStatus;
            let count = |status: EvalStatus| evals.evals.iter().filter(|eval| eval.status == status).count();
            [count(EvalStatus::Pass), count(EvalStatus::Fail), count(EvalStatus::Error), count(EvalStatus::Skipped)]
        }),
        variants: report.resilience.as_ref().filter(|_| report.layers.contains(&2)).map(|resilience| {
            use crate::report::layer2::FaultStatus;
            let statuses: Vec<FaultStatus> = resilience
                .results
                .iter()
                .map(|result| result.status)
                .chain(report.security.iter().flat_map(|section| section.results.iter().map(|result| result.status)))
                .collect();
            let count = |status: FaultStatus| statuses.iter().filter(|each| **each == status).count();
            [count(FaultStatus::Pass), count(FaultStatus::Fail), count(FaultStatus::Inconclusive)]
        }),
    });
    Evaluation { report, written, decision }
}

/// Writes the three report files, junit.xml again where `junit_path` asks, and SARIF where
/// `sarif_path` asks.
fn write_reports(report: &RunReport, settings: &Settings) -> Result<WrittenFiles, report::WriteError> {
    let written = report::write_all(report, &settings.out_dir)?;
    if let Some((junit_path, _)) = &settings.junit_path {
        if !same_path(&written.junit_xml, junit_path) {
            report::write_junit(report, junit_path)?;
        }
    }
    if let Some((sarif_path, _)) = &settings.sarif_path {
        report::write_sarif(report, sarif_path, settings.sarif_location.as_ref())?;
    }
    Ok(written)
}

fn same_path(a: &Path, b: &Path) -> bool {
    let clean = |path: &Path| -> std::path::PathBuf {
        path.components().filter(|c| !matches!(c, std::path::Component::CurDir)).collect()
    };
    clean(a) == clean(b)
}

/// A last pass over every string of the report, so no secret can reach a file.
fn redact_report(mut report: RunReport, redactor: &Redactor) -> RunReport {
    for check in &mut report.checks {
        check.message = redactor.redact(&check.message);
        for evidence in &mut check.evidence {
            evidence.text = redactor.redact(&evidence.text);
        }
    }
    if let Some(detail) = &report.outcome_detail {
        report.outcome_detail = Some(redactor.redact(detail));
    }
    if let Some(tail) = &report.server.stderr_tail {
        report.server.stderr_tail = Some(redactor.redact(tail));
    }
    report.server.target = redactor.redact(&report.server.target);
    report
}

/// The events file as the user named it (`--events`), for messages.
pub(super) fn events_label(settings: &Settings) -> &str {
    settings.events_path.as_ref().map_or("", |(_, label)| label.as_str())
}

/// `--events FILE`: the log, or the failure line saying why it cannot be created (the run
/// goes on without it, and exits 4); neither without the flag.
pub(super) fn open_events_log(
    settings: &Settings,
    redactor: &Redactor,
    started: Instant,
) -> (Option<crate::events::EventLog>, Option<String>) {
    match &settings.events_path {
        Some((path, label)) => match crate::events::EventLog::create(path, redactor.clone(), started) {
            Ok(log) => (Some(log), None),
            Err(error) => (
                None,
                Some(format!("error: cannot write the events file `{label}`: {}", crate::text::io_reason(&error))),
            ),
        },
        None => (None, None),
    }
}
