//! Layer 0 on the driver's face: the conformance checks over the open session
//! ([`crate::conformance::run`]), the config file's waivers applied on today's date, each check
//! said as soon as it is graded; and what it had found when a signal or a panic stopped the run.

use std::sync::Mutex;

use crate::conformance::{self, Options};
use crate::mcp::era::Connected;
use crate::mcp::sync::lock;
use crate::report::model::{CheckResult, ServerSection};

use super::RunEvent;
use super::layer::{Context, Layer, Parts, Running, Sections};

/// Layer 0, conformance.
pub(super) struct Layer0;

impl Layer for Layer0 {
    fn number(&self) -> u8 {
        0
    }

    fn run<'a>(&'a self, cx: &'a Context<'a>, connected: &'a Connected, sections: &'a Sections) -> Running<'a> {
        Box::pin(async move {
            let settings = cx.settings;
            let options = Options {
                safe_tools: settings.safe_tools.clone(),
                require_modern: settings.require_modern,
                waivers: settings.waivers.clone(),
            };
            let mut layer0 =
                Box::pin(conformance::run(connected, cx.target.clone(), cx.redactor.clone(), &options, cx.events))
                    .await;
            // The config file's waivers, on today's date (an expired one no longer waives).
            let today = chrono::Utc::now().date_naive();
            let waivers = conformance::waiver::for_transport(&options.waivers, &layer0.server.transport);
            layer0.waiver_notes = conformance::waiver::apply(&mut layer0.checks, &waivers, today);
            for note in &layer0.waiver_notes {
                (cx.events)(&RunEvent::Notice { text: format!("warning: {note}") });
            }
            // As soon as layer 0 is graded, before layer 1 starts: a reader of the events sees them then.
            for check in &layer0.checks {
                (cx.events)(&RunEvent::CheckGraded { id: check.id.clone(), status: check.status });
            }
            *lock(&sections.layer0) = Some(layer0);
        })
    }

    fn cut(&self, sections: &Sections, _what: &str, parts: &mut Parts) -> bool {
        parts.checks = partial_checks(&mut parts.server, &sections.layer0, &sections.known);
        true
    }
}

/// Layer 0's checks when its outcome was graded before the run stopped (a signal, a panic), with
/// the server section it found (the target label kept); otherwise none, and `server` keeps what
/// layer 0 had said so far (`known`: the era, the sizes of the lists).
fn partial_checks(
    server: &mut ServerSection,
    finished: &Mutex<Option<conformance::Layer0Result>>,
    known: &Mutex<ServerSection>,
) -> Vec<CheckResult> {
    match lock(finished).take() {
        Some(outcome) => {
            let label = std::mem::take(&mut server.target);
            *server = outcome.server;
            server.target = label;
            outcome.checks
        }
        None => {
            let known = lock(known);
            server.era = server.era.take().or_else(|| known.era.clone());
            server.era_evidence = server.era_evidence.take().or_else(|| known.era_evidence.clone());
            server.listed = server.listed.or(known.listed);
            Vec::new()
        }
    }
}

/// Keeps in `known` what `event` says about the server (the era and the sizes of its lists).
pub(super) fn note(known: &Mutex<ServerSection>, event: &RunEvent) {
    match event {
        RunEvent::EraDetected { era, evidence } => {
            let mut known = lock(known);
            known.era = Some(era.clone());
            known.era_evidence = Some(evidence.clone());
        }
        RunEvent::ServerListed(listed) => lock(known).listed = Some(*listed),
        _ => {}
    }
}

/// Layer 0's outcome once the session ends, taken from `sections` as it was kept: the server
/// section it found (or, without layer 0, what the connection found) and its checks.
pub(super) fn found(sections: &Sections, connected: &Connected) -> ServerSection {
    lock(&sections.layer0).as_ref().map_or_else(
        || ServerSection {
            era: Some(connected.era.revision().to_owned()),
            era_evidence: Some(connected.evidence.clone()),
            stdio_starts: connected.starts.reasons(),
            ..ServerSection::default()
        },
        |layer0| layer0.server.clone(),
    )
}

/// Layer 0's checks on a run that completed (kept in `sections`, whose waiver notes the report
/// reads after).
pub(super) fn checks(sections: &Sections) -> Vec<CheckResult> {
    lock(&sections.layer0).as_ref().map(|layer0| layer0.checks.clone()).unwrap_or_default()
}
