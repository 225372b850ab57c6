//! Layer 3 on the driver's face. It runs on no session: planned from the settings (asked for
//! or not), it reads the event sink while layers 1 and 2 run, traces their trials and counts the
//! footprint of the tools they list ([`super::limits::Limits`]); after the layers, on every path
//! that reached the server, it gives its section ([`crate::telemetry::section_run`]), compared
//! with the stored baseline ([`crate::baseline::apply::layer3`]).

use std::sync::Mutex;

use crate::golden::GoldenSet;
use crate::mcp::evidence::Redactor;
use crate::report::model::{RunOutcome, RunReport};
use crate::report::telemetry::TelemetrySection;
use crate::settings::Settings;
use crate::telemetry::section_run::{self, Export};
use crate::telemetry::trace::Spans;
use crate::telemetry::{Collector, prices::PriceTable};

use super::RunEvent;
use super::layer::Sink;
use super::limits::Footprint;

/// Layer 3, telemetry: what it keeps while the run goes.
pub(super) struct Layer3 {
    /// The events of layers 1 and 2, kept (`None`: layer 3 was not asked for).
    collector: Option<Collector>,
    /// The trials' traces: one trace each, a span per call, the `traceparent` in `_meta`.
    spans: Option<Spans>,
    /// The footprint of the tools the first of layers 1 and 2 listed, and its notes.
    footprint: Mutex<Footprint>,
}

/// What layer 3's section reads of the run once the layers are done.
pub(super) struct After<'a> {
    /// The run's settings.
    pub settings: &'a Settings,
    /// The user's golden set (the demo's layers run their own).
    pub golden: Option<&'a GoldenSet>,
    /// The price table.
    pub prices: Option<&'a PriceTable>,
    /// The layers asked for.
    pub layers: &'a [u8],
    /// A signal stopped the run: the spans are not exported.
    pub interrupted: bool,
    /// A signal or a panic during layer 2 kept none of its trials: layer 3 forgets them too.
    pub layer2_dropped: bool,
    /// The run's secrets, to redact.
    pub redactor: &'a Redactor,
    /// The event sink.
    pub events: Sink<'a>,
}

impl Layer3 {
    /// Layer 3 when `layers` asks for it, else one that keeps nothing.
    pub(super) fn plan(settings: &Settings, layers: &[u8]) -> Self {
        let collector = layers.contains(&3).then(Collector::default);
        let spans =
            collector.as_ref().map(|_| Spans::new(settings.trace.trace_state.clone(), settings.trace.baggage.clone()));
        Layer3 { collector, spans, footprint: Mutex::new((Vec::new(), Vec::new())) }
    }

    /// Whether layer 3 was asked for.
    pub(super) fn asked(&self) -> bool {
        self.collector.is_some()
    }

    /// Keeps what `event` says of a call or a trial.
    pub(super) fn observe(&self, event: &RunEvent) {
        if let Some(collector) = &self.collector {
            collector.observe(event);
        }
    }

    /// The footprint's slot, filled by the first layer that lists the tools.
    pub(super) fn footprint(&self) -> Option<&Mutex<Footprint>> {
        self.collector.as_ref().map(|_| &self.footprint)
    }

    /// The spans the trials are traced with.
    pub(super) fn spans(&self) -> Option<&Spans> {
        self.spans.as_ref()
    }

    /// Its section when the run ended before any trial because mcp-eval's own environment failed.
    pub(super) fn unrun(&self) -> Option<TelemetrySection> {
        self.collector.as_ref().map(|_| TelemetrySection {
            not_run: Some("the run ended before any trial: mcp-eval's own environment failed".into()),
            ..TelemetrySection::default()
        })
    }

    /// Puts its section into `report` once the layers are done (or stopped), when it was asked
    /// for: the report names layer 3 when it measured something, and says why not otherwise.
    pub(super) async fn section(&self, report: &mut RunReport, after: &After<'_>) {
        let Some(collector) = &self.collector else { return };
        let (settings, events) = (after.settings, after.events);
        if after.layer2_dropped {
            collector.forget_layer(2);
        }
        let mut section = section_run::layer3(collector, report, after.golden, after.prices, after.layers);
        if let Some(why) = &section.not_run {
            report.layers.retain(|layer| *layer != 3);
            events(&RunEvent::Notice { text: format!("layer 3 did not run: {why}") });
        } else if !report.layers.contains(&3) {
            report.layers.push(3);
        }
        if section.not_run.is_none() {
            let (rows, notes) = std::mem::take(&mut *crate::mcp::sync::lock(&self.footprint));
            section.footprint = rows;
            section.notes.extend(notes);
        }
        if let Some(spans) = self.spans.as_ref().filter(|spans| spans.traces() > 0) {
            section.notes.extend(section_run::m9_warning(&report.checks));
            let export = Export {
                disabled: settings.trace.disabled,
                source: settings.trace.otlp_source.as_deref(),
                target: settings
                    .trace
                    .otlp
                    .as_ref()
                    .map(|target| (target, crate::settings::secrets::url_without_secrets(&target.url))),
            };
            let trace = section_run::trace_section(spans, &export, after.interrupted, after.redactor).await;
            if let Some(export) = &trace.export {
                events(&RunEvent::Notice { text: section_run::export_line(export) });
            }
            section.trace = Some(trace);
        }
        // Against the stored baseline and in the trends: shown, never enforced.
        let completed = report.outcome == RunOutcome::Completed
            && !report.checks.iter().any(|check| check.id == crate::report::model::INTERNAL_CHECK_ID);
        let measured_at = report.started_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let commit = settings.action.as_ref().and_then(|action| action.github.sha.as_deref());
        let evals = report.evals.as_ref();
        for warning in
            crate::baseline::apply::layer3(&mut section, evals, &settings.layer1, completed, &measured_at, commit)
        {
            events(&RunEvent::Notice { text: format!("layer 3: {warning}") });
        }
        report.telemetry = Some(section);
    }
}
