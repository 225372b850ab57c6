//! Layer 3's section of a run, made after the layers (on every path that ran a trial): what
//! the [`Collector`] kept of layers 1 and 2's events ([`layer3`]), the warning of a server that
//! refused the `traceparent` layer 3 sent ([`m9_warning`]), and the trials' traces with their
//! export to the OTLP endpoint ([`trace_section`], [`export_line`]).

use std::time::Instant;

use crate::golden::GoldenSet;
use crate::mcp::evidence::Redactor;
use crate::report::model::RunReport;
use crate::telemetry::Collector;
use crate::telemetry::otlp::Target;

/// Where layer 3's spans go, as the settings say.
pub(crate) struct Export<'a> {
    /// `OTEL_SDK_DISABLED=true` turned off the export an endpoint asked for.
    pub disabled: bool,
    /// Where the endpoint came from (for messages).
    pub source: Option<&'a str>,
    /// The collector, and its URL as the report shows it (secrets left out).
    pub target: Option<(&'a Target, String)>,
}

/// Layer 3's section of a run: what `collector` kept of layers 1 and 2's events, or why there
/// is nothing to measure.
pub(crate) fn layer3(
    collector: &Collector,
    report: &RunReport,
    golden: Option<&GoldenSet>,
    prices: Option<&crate::telemetry::prices::PriceTable>,
    layers: &[u8],
) -> crate::report::telemetry::TelemetrySection {
    let cached_pairs =
        report.evals.as_ref().map_or(0, |evals| evals.evals.iter().filter(|eval| eval.cached.is_some()).count());
    let price =
        |label: &str, usage: &crate::report::telemetry::Usage| prices.and_then(|table| table.cost(label, usage));
    let inputs = super::Inputs { golden, price: &price, prices, cached_pairs };
    let mut section = super::section(collector, &inputs);
    if !layers.contains(&1) && !layers.contains(&2) {
        section.not_run = Some(LAYER3_ALONE.into());
    }
    section
}

/// The warning of a server that failed M-9 (a `traceparent` in `_meta` refused or not
/// tolerated) while layer 3 sent one with every request of layers 1 and 2.
pub(crate) fn m9_warning(checks: &[crate::report::model::CheckResult]) -> Option<String> {
    use crate::report::model::Status;
    checks.iter().find(|check| check.id == "M-9" && matches!(check.status, Status::Fail | Status::Warn)).map(|_| {
        "the server did not tolerate a `traceparent` in `_meta` (M-9), and layer 3 sends one with every request of layers 1 and 2: their failures may be that; run without layer 3 to compare".to_owned()
    })
}

/// Layer 3's trace section: what the trials' traces held, and their export to the OTLP
/// endpoint when one is given — skipped after a signal (the reports come first), bounded by
/// its timeout otherwise, a warning when it fails.
pub(crate) async fn trace_section(
    spans: &crate::telemetry::trace::Spans,
    export: &Export<'_>,
    interrupted: bool,
    redactor: &Redactor,
) -> crate::report::telemetry::TraceSection {
    use crate::report::telemetry::{TraceExport, TraceSection};
    let finished = spans.take();
    let (tracestate, baggage) = spans.carries();
    let mut section = TraceSection {
        traces: spans.traces(),
        spans: finished.len(),
        dropped: spans.dropped(),
        tool_calls: Some(finished.iter().filter(|span| span.name.starts_with("tools/call")).count()),
        tracestate,
        baggage,
        export: None,
    };
    if export.disabled {
        section.export = Some(TraceExport {
            endpoint: export.source.map(str::to_owned).unwrap_or_default(),
            warning: Some("not exported: OTEL_SDK_DISABLED=true turns the export off".into()),
            ..TraceExport::default()
        });
        return section;
    }
    let Some((target, endpoint)) = &export.target else { return section };
    let endpoint = endpoint.clone();
    if interrupted {
        section.export = Some(TraceExport {
            endpoint,
            warning: Some("not exported: the run was interrupted, and the reports come first".into()),
            ..TraceExport::default()
        });
        return section;
    }
    let started = Instant::now();
    let (exported, failed) = super::otlp::export(target, finished).await;
    section.export = Some(TraceExport {
        endpoint,
        exported: exported.spans,
        requests: exported.requests,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        warning: failed.map(|error| {
            format!(
                "{}; check that the collector is up and that --otlp-endpoint (or OTEL_EXPORTER_OTLP_ENDPOINT) names its base URL",
                redactor.redact(&error)
            )
        }),
    });
    section
}

/// The log line of an export.
pub(crate) fn export_line(export: &crate::report::telemetry::TraceExport) -> String {
    match &export.warning {
        Some(warning) => format!("warning: layer 3's spans were not all exported to {}: {warning}", export.endpoint),
        None => format!(
            "layer 3: {} span(s) exported to {} in {} request(s), {} ms",
            export.exported, export.endpoint, export.requests, export.duration_ms
        ),
    }
}

/// Why layer 3 alone measures nothing.
pub(crate) const LAYER3_ALONE: &str =
    "layer 3 measures the trials of layers 1 and 2: ask for one of them too (`--layers 1,3`)";
