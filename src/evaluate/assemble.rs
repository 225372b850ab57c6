//! The report of a run, assembled from the sections the layers gave: pure (no IO, no clock,
//! no events). [`completed`] for a run whose layers completed; [`panicked`] and [`interrupted`]
//! for a run a panic or a signal stopped, from the [`Parts`] the layers kept.

use chrono::{DateTime, Utc};

use crate::error::UserError;
use crate::mcp::evidence::Redactor;
use crate::report::model::{CheckResult, RunOutcome, RunReport, ServerSection};
use crate::settings::Settings;

use super::layer::Parts;

/// When the run started, and how long it took.
#[derive(Debug, Clone, Copy)]
pub(super) struct Clock {
    /// Its start.
    pub started_at: DateTime<Utc>,
    /// Its wall time until the report.
    pub duration_ms: u64,
}

/// What the layers gave on a run that completed.
pub(super) struct Completed {
    /// The server section layer 0 (or the connection) found.
    pub found: ServerSection,
    /// Layer 0's checks.
    pub checks: Vec<CheckResult>,
    /// Layer 1's section, or the input error that stopped it; `None` when it did not run.
    pub layer1: Option<Result<crate::report::evals::EvalsSection, UserError>>,
    /// Why layer 1 did not run although asked for.
    pub layer1_missing: Option<&'static str>,
    /// Layer 2's sections, or the input error that stopped it; `None` when it did not run.
    pub layer2: Option<Result<crate::faults::Layer2, UserError>>,
    /// Why layer 2 did not run although asked for.
    pub layer2_missing: Option<&'static str>,
    /// The note of a shard after the first.
    pub shard_note: Option<String>,
}

/// The report of a run whose layers completed, and the input errors that stopped layer 1 or 2
/// (each an `input_error` event, exit status 2), redacted. `server` keeps the target label and
/// transport; `poisoned`: a panic inside mcp-eval poisoned shared state during the run.
pub(super) fn completed(
    settings: &Settings,
    done: Completed,
    mut server: ServerSection,
    ran: &[u8],
    clock: Clock,
    poisoned: bool,
    redactor: &Redactor,
) -> (RunReport, Vec<String>) {
    let Completed { found, checks, layer1, layer1_missing, layer2, layer2_missing, shard_note } = done;
    let mut refusals = Vec::new();
    let label = std::mem::take(&mut server.target);
    let transport = std::mem::take(&mut server.transport);
    server = found;
    server.target = label;
    server.transport = transport;
    let mut checks = checks;
    if poisoned {
        checks.push(RunReport::internal_error_check(
            "a panic inside mcp-eval poisoned shared state during the run: the results above may be missing findings; no verdict".into(),
        ));
    }
    let mut report =
        RunReport::new(clock.started_at, clock.duration_ms, ran.to_vec(), RunOutcome::Completed, None, server, checks);
    if let Some(reason) = layer1_missing {
        report.evals = Some(crate::report::evals::EvalsSection {
            layer1_not_run: Some(reason.to_owned()),
            ..crate::report::evals::EvalsSection::default()
        });
    }
    if let Some(layer1) = layer1 {
        // Layer 1 ran only when some model ran (and not when it refused its input).
        if layer1.as_ref().map_or(true, |section| section.layer1_not_run.is_some()) {
            report.layers.retain(|layer| *layer != 1);
        }
        report.evals = Some(match layer1 {
            Ok(mut section) => {
                section.layer1_notes.extend(shard_note.clone());
                section
            }
            Err(error) => {
                refusals.push(redactor.redact(&error.to_string()));
                crate::report::evals::EvalsSection {
                    layer1_not_run: Some(format!("{}{}", crate::report::evals::INVALID_INPUT_PREFIX, error.message)),
                    input_refused: true,
                    models: settings.layer1.models.iter().map(|model| model.label()).collect(),
                    ..crate::report::evals::EvalsSection::default()
                }
            }
        });
    }
    if let Some(reason) = layer2_missing {
        report.resilience = Some(crate::report::layer2::ResilienceSection {
            not_run: Some(reason.to_owned()),
            ..crate::report::layer2::ResilienceSection::default()
        });
    }
    if let Some(layer2) = layer2 {
        let section = match layer2 {
            Ok(crate::faults::Layer2 { mut resilience, mut security }) => {
                crate::verdict::gate_layer2(&mut resilience, security.as_mut(), settings.layer1.fail_on_evals.as_str());
                report.security = security;
                resilience
            }
            Err(error) => {
                refusals.push(redactor.redact(&error.to_string()));
                crate::report::layer2::ResilienceSection {
                    not_run: Some(format!("{}{}", crate::report::evals::INVALID_INPUT_PREFIX, error.message)),
                    ..crate::report::layer2::ResilienceSection::default()
                }
            }
        };
        if section.not_run.is_some() {
            report.layers.retain(|layer| *layer != 2);
        }
        report.resilience = Some(section);
    }
    (report, refusals)
}

/// The report of a run a panic in layer `layer` stopped (`text`: what it said): what had
/// finished is kept, and an `INTERNAL` row says what (exit status 4).
pub(super) fn panicked(parts: Parts, layer: u8, text: &str, clock: Clock) -> RunReport {
    let Parts { server, mut checks, evals, resilience, layers } = parts;
    let message = panic_message(layer, text, !checks.is_empty(), evals.is_some());
    checks.push(RunReport::internal_error_check(message));
    let layers = if layers.is_empty() { vec![0] } else { layers };
    let mut report =
        RunReport::new(clock.started_at, clock.duration_ms, layers, RunOutcome::Completed, None, server, checks);
    report.evals = evals;
    report.resilience = resilience;
    report
}

/// The report of a run `signal` stopped after `elapsed` ms: what had finished is kept; `graded`,
/// layer 0's checks had all finished; `in_layer2`, layer 2 was running.
pub(super) fn interrupted(
    parts: Parts,
    signal: &str,
    elapsed: u128,
    graded: bool,
    in_layer2: bool,
    clock: Clock,
) -> RunReport {
    let Parts { server, checks, evals, resilience, layers } = parts;
    let detail = if in_layer2 {
        format!(
            "interrupted by {signal} after {elapsed} ms during layer 2; layers 0 and 1 are reported whole, layer 2's trials are not kept"
        )
    } else {
        interrupt_detail(signal, elapsed, graded, evals.is_some())
    };
    let mut report = RunReport::new(
        clock.started_at,
        clock.duration_ms,
        layers,
        RunOutcome::Interrupted,
        Some(detail),
        server,
        checks,
    );
    report.evals = evals;
    report.resilience = resilience;
    report
}

/// The `INTERNAL` row's message for a panic in layer `layer` (`text`: what it said), saying what
/// of the run is kept.
fn panic_message(layer: u8, text: &str, checks_kept: bool, trials_kept: bool) -> String {
    let kept = match (checks_kept, trials_kept) {
        (true, true) => {
            "Layer 0's checks and layer 1's finished trials are kept; the cases with trials missing are skipped. "
        }
        (true, false) => "Layer 0's checks are kept. ",
        (false, true) => "Layer 1's finished trials are kept; the cases with trials missing are skipped. ",
        (false, false) => "",
    };
    format!(
        "mcp-eval failed inside layer {layer} (a panic: {text}); no verdict. {kept}Please report it with the server's name and version"
    )
}

/// The report's `outcome_detail` for a run `signal` stopped after `elapsed` ms: during layer 1
/// (`trials_kept`), while the server shut down (every check `graded`), or during the checks.
fn interrupt_detail(signal: &str, elapsed: u128, graded: bool, trials_kept: bool) -> String {
    match (graded, trials_kept) {
        (_, true) => format!(
            "interrupted by {signal} after {elapsed} ms during layer 1; its finished trials are reported and the cases with trials missing are skipped"
        ),
        // Every check had finished; only the server's shutdown was cut short.
        (true, false) => format!(
            "interrupted by {signal} after {elapsed} ms, while the server was being shut down; every check had finished"
        ),
        (false, false) => format!("interrupted by {signal} after {elapsed} ms; checks still running were abandoned"),
    }
}

/// The text of a panic payload.
pub(super) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into())
}
