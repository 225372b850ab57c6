//! The `report.json` wire format, `format_version` 1 (2 when a check is `waived`): the top-level document as written and as
//! read back. Written from a [`RunReport`] with the computed `verdict` and `counts` placed right
//! after `outcome_detail`; read back into a [`RunReport`] (the computed members are recomputed,
//! never trusted). Layer 1's members (`golden_set`, `models`, `evals`, …: [`EvalsSection`]) sit
//! at the top level, layer 2's `resilience` and `security` and layer 3's `telemetry` beside them; members a later version of format 1
//! adds are ignored on read.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::evals::EvalsSection;
use super::layer2::{ResilienceSection, SecuritySection};
use super::model::{CheckResult, Counts, GateSection, RunOutcome, RunReport, ServerSection, Verdict};
use super::telemetry::{BudgetSection, TelemetrySection};

/// The document as written (borrows the report).
#[derive(Debug, Serialize)]
pub struct ReportOut<'a> {
    format_version: u32,
    tool: &'a str,
    spec_revision: &'a str,
    #[serde(serialize_with = "seconds")]
    started_at: &'a DateTime<Utc>,
    duration_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    layer0_duration_ms: Option<u64>,
    layers: &'a [u8],
    outcome: RunOutcome,
    outcome_detail: Option<&'a str>,
    verdict: Verdict,
    counts: Counts,
    #[serde(skip_serializing_if = "Option::is_none")]
    gate: Option<&'a GateSection>,
    server: &'a ServerSection,
    checks: &'a [CheckResult],
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    evals: Option<&'a EvalsSection>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resilience: Option<&'a ResilienceSection>,
    #[serde(skip_serializing_if = "Option::is_none")]
    security: Option<&'a SecuritySection>,
    #[serde(skip_serializing_if = "Option::is_none")]
    telemetry: Option<&'a TelemetrySection>,
    #[serde(skip_serializing_if = "Option::is_none")]
    budget: Option<&'a BudgetSection>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    waiver_notes: &'a [String],
}

impl<'a> ReportOut<'a> {
    /// The wire view of `report`.
    pub fn new(report: &'a RunReport) -> Self {
        ReportOut {
            format_version: report.wire_version(),
            tool: &report.tool,
            spec_revision: &report.spec_revision,
            started_at: &report.started_at,
            duration_ms: report.duration_ms,
            layer0_duration_ms: report.layer0_duration_ms,
            layers: &report.layers,
            outcome: report.outcome,
            outcome_detail: report.outcome_detail.as_deref(),
            verdict: report.verdict(),
            counts: report.counts(),
            gate: report.gate.as_ref(),
            server: &report.server,
            checks: &report.checks,
            evals: report.evals.as_ref(),
            resilience: report.resilience.as_ref(),
            security: report.security.as_ref(),
            telemetry: report.telemetry.as_ref(),
            budget: report.budget.as_ref(),
            waiver_notes: &report.waiver_notes,
        }
    }
}

/// RFC 3339 with whole seconds and `Z` (`2026-08-01T12:00:00Z`).
fn seconds<S: serde::Serializer>(time: &&DateTime<Utc>, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&time.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
}

/// The document as read.
#[derive(Debug, Deserialize)]
pub struct ReportIn {
    format_version: u32,
    tool: String,
    spec_revision: String,
    started_at: DateTime<Utc>,
    duration_ms: u64,
    #[serde(default)]
    layer0_duration_ms: Option<u64>,
    layers: Vec<u8>,
    outcome: RunOutcome,
    #[serde(default)]
    outcome_detail: Option<String>,
    #[serde(default)]
    gate: Option<GateSection>,
    server: ServerSection,
    checks: Vec<CheckResult>,
    #[serde(default)]
    resilience: Option<ResilienceSection>,
    #[serde(default)]
    security: Option<SecuritySection>,
    #[serde(default)]
    telemetry: Option<TelemetrySection>,
    #[serde(default)]
    budget: Option<BudgetSection>,
    #[serde(default)]
    waiver_notes: Vec<String>,
    #[serde(flatten)]
    evals: Option<EvalsSection>,
}

impl From<ReportIn> for RunReport {
    fn from(wire: ReportIn) -> Self {
        RunReport {
            // Version 2 differs from 1 only by the `waived` status, which `wire_version` writes
            // back from the checks themselves.
            format_version: wire.format_version.min(super::model::FORMAT_VERSION),
            tool: wire.tool,
            spec_revision: wire.spec_revision,
            started_at: wire.started_at,
            duration_ms: wire.duration_ms,
            layer0_duration_ms: wire.layer0_duration_ms,
            layers: wire.layers,
            outcome: wire.outcome,
            outcome_detail: wire.outcome_detail,
            gate: wire.gate,
            server: wire.server,
            checks: wire.checks,
            evals: wire.evals,
            resilience: wire.resilience,
            security: wire.security,
            telemetry: wire.telemetry,
            budget: wire.budget,
            waiver_notes: wire.waiver_notes,
        }
    }
}
