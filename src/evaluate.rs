//! One evaluation from start to finish: connect to the server under test, run layer 0, build the
//! [`RunReport`], and write `report.json`, `junit.xml` and `summary.md` on every path: pass,
//! fail, unreachable server, server crash, timeout, SIGINT/SIGTERM.

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use crate::conformance::{self, Options};
use crate::exit_code;
use crate::mcp::era::{self, Target};
use crate::mcp::evidence::Redactor;
use crate::report::model::{
    CheckResult, Evidence, FORMAT_VERSION, Level, RunOutcome, RunReport, ServerSection, Status,
};
use crate::report::{self, WrittenFiles};

/// Everything an evaluation needs, validated.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Where the server is.
    pub target: Target,
    /// How to describe the target in reports (URL or command).
    pub target_label: String,
    /// Secret values to redact from everything we write.
    pub secrets: Vec<String>,
    /// Layer-0 options.
    pub options: Options,
    /// Where the reports go.
    pub out_dir: PathBuf,
    /// Layers requested (only 0 runs in this version).
    pub layers: Vec<u8>,
}

/// What an evaluation produced.
#[derive(Debug)]
pub struct Evaluation {
    /// The run report.
    pub report: RunReport,
    /// The files written, or why they could not be.
    pub written: Result<WrittenFiles, report::WriteError>,
    /// The exit status.
    pub exit_code: i32,
}

/// Runs an evaluation; `progress` receives one line per phase.
pub async fn evaluate(settings: &Settings, progress: &(dyn Fn(&str) + Sync)) -> Evaluation {
    let started = Instant::now();
    let started_at = rfc3339(SystemTime::now());
    let redactor = Redactor::new(settings.secrets.iter().cloned());
    let mut server = ServerSection {
        transport: match settings.target {
            Target::Http(_) => "http".into(),
            Target::Stdio { .. } => "stdio".into(),
        },
        target: redactor.redact(&settings.target_label),
        ..ServerSection::default()
    };
    progress(&format!("connecting to {} ({})", server.target, server.transport));
    let work = async {
        match Box::pin(era::connect(&settings.target, redactor.clone())).await {
            Err(unreachable) => Err(unreachable),
            Ok(connected) => Ok(Box::pin(conformance::run(
                connected,
                settings.target.clone(),
                redactor.clone(),
                &settings.options,
                progress,
            ))
            .await),
        }
    };
    let work = Box::pin(work);
    let interrupted = interrupt_signal();
    let (outcome, detail, checks, exit) = tokio::select! {
        result = work => match result {
            Ok(outcome) => {
                let label = std::mem::take(&mut server.target);
                server = outcome.server;
                server.target = label;
                let failed = outcome.checks.iter().any(|check| check.status == Status::Fail);
                (RunOutcome::Completed, None, outcome.checks, if failed { exit_code::CHECK_FAILED } else { exit_code::PASSED })
            }
            Err(unreachable) => {
                server.stderr_tail = unreachable.stderr_tail.clone();
                let evidence = unreachable.evidence.iter().map(|(label, text)| Evidence { label: label.clone(), text: text.clone() }).collect();
                let check = CheckResult {
                    id: "CONNECT".into(),
                    title: "the server under test can be reached".into(),
                    level: Level::Must,
                    status: Status::Error,
                    message: unreachable.reason.clone(),
                    spec: "docs/specification/2026-07-28/basic/transports".into(),
                    evidence,
                    duration_ms: started.elapsed().as_millis() as u64,
                };
                (RunOutcome::Unreachable, Some(unreachable.reason), vec![check], exit_code::UNREACHABLE)
            }
        },
        signal = interrupted => {
            let (name, code) = match signal {
                Interrupt::Int => ("SIGINT", exit_code::INTERRUPTED_SIGINT),
                Interrupt::Term => ("SIGTERM", exit_code::INTERRUPTED_SIGTERM),
            };
            (RunOutcome::Interrupted, Some(format!("interrupted by {name} after {} ms; checks still running were abandoned", started.elapsed().as_millis())), Vec::new(), code)
        }
    };
    let report = RunReport {
        format_version: FORMAT_VERSION,
        tool: format!("mcp-eval {}", env!("CARGO_PKG_VERSION")),
        spec_revision: crate::mcp::jsonrpc::PROTOCOL_VERSION.into(),
        started_at,
        duration_ms: started.elapsed().as_millis() as u64,
        layers: vec![0],
        outcome,
        outcome_detail: detail,
        server,
        checks,
    };
    let report = redact_report(report, &redactor);
    let written = report::write_all(&report, &settings.out_dir);
    let exit_code = if written.is_err() && exit == exit_code::PASSED { exit_code::ENVIRONMENT } else { exit };
    Evaluation { report, written, exit_code }
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
    report
}

enum Interrupt {
    Int,
    Term,
}

async fn interrupt_signal() -> Interrupt {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut interrupt), Ok(mut terminate)) = (signal(SignalKind::interrupt()), signal(SignalKind::terminate()))
    else {
        // No signal handling available: never resolve.
        std::future::pending::<()>().await;
        return Interrupt::Term;
    };
    tokio::select! {
        _ = interrupt.recv() => Interrupt::Int,
        _ = terminate.recv() => Interrupt::Term,
    }
}

/// RFC 3339 UTC time with second precision, computed without a date library.
pub fn rfc3339(time: SystemTime) -> String {
    let seconds = time.duration_since(SystemTime::UNIX_EPOCH).unwrap_or(Duration::ZERO).as_secs() as i64;
    let days = seconds.div_euclid(86_400);
    let rest = seconds.rem_euclid(86_400);
    // Civil-from-days (Howard Hinnant's algorithm, public domain).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rest / 3600, rest % 3600 / 60, rest % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        assert_eq!(rfc3339(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_000_000)), "2026-11-18T11:06:40Z");
    }
}
