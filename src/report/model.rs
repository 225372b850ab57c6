//! The run report: the one data model every renderer (JSON, JUnit, Markdown) and the gate
//! read. Its parts derive `Serialize` and `Deserialize`; the top level goes through
//! [`crate::report::wire`], so a baseline or `merge` reads a report back into the same types
//! (see [`crate::report::json::parse`]). Every field is documented in
//! `docs/report-format.md`; the format grows by additions only (a new optional member, a new
//! top-level section per layer), never by renaming or retyping a field.
//!
//! The model is plain data: building it does no IO and reads no clock (timestamps and durations
//! arrive as values), so renderers are deterministic and testable. The verdict and the counts
//! are not stored: [`crate::verdict`] computes them from the checks whenever they are asked for, and
//! [`crate::report::wire`] writes them into `report.json`.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The id of the row an unreachable run reports instead of the checks.
pub const CONNECT_CHECK_ID: &str = "CONNECT";

/// The id of the row that says mcp-eval itself failed during the run (a panic, or shared state
/// poisoned by one): the verdict is then `error`, never `pass`.
pub const INTERNAL_CHECK_ID: &str = "INTERNAL";

/// Version of the `report.json` format. Bump it on any change a reader could notice.
pub const FORMAT_VERSION: u32 = 1;

/// The version a report is written with when a check has status `waived` (a value version 1
/// does not know): a reader of version 1 refuses it rather than misreading the row. A report
/// without a waived row is still written as version 1.
pub const WAIVED_FORMAT_VERSION: u32 = 2;

/// How strongly the spec states a requirement (RFC 2119 keywords).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Level {
    /// MUST / MUST NOT / REQUIRED: a violation fails the check.
    #[serde(rename = "MUST")]
    Must,
    /// SHOULD / SHOULD NOT / RECOMMENDED: a violation is a warning.
    #[serde(rename = "SHOULD")]
    Should,
    /// Not graded: a fact worth reporting (negotiation outcome, migration hint).
    #[serde(rename = "INFO")]
    Info,
}

/// The outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// A MUST requirement was violated.
    Fail,
    /// The check could not run to a verdict because of our side (never the server's fault).
    Error,
    /// A SHOULD requirement was violated, or the spec itself is ambiguous here.
    Warn,
    /// The requirement was exercised and kept.
    Pass,
    /// The requirement cannot be exercised on this server (capability absent, fixture tool
    /// needed, other transport); the message says why. Never a pass and never a failure.
    NotApplicable,
    /// The row failed or warned, and a reviewed waiver of the config file covers it: shown with
    /// its reason ([`CheckResult::waiver`]), never failing the run. Written in format version 2.
    Waived,
}

/// The config file's waiver that covered a row (status `waived`), or that would have but
/// expired (the row keeps its status and its message says so).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaiverNote {
    /// The reason the user gave (several waivers' reasons joined with `; `).
    pub reason: String,
    /// Where the waiver is written: `FILE:LINE` (several joined with `, `).
    pub source: String,
    /// The status the row had before the waiver: `fail` or `warn`.
    pub status: Status,
    /// The last day the waiver holds (`YYYY-MM-DD`), when one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
    /// True when the waiver expired: the row keeps its status.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub expired: bool,
}

/// One bounded excerpt of what went over the wire (secrets redacted), kept as evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    /// What this excerpt is, e.g. `request`, `response`, `stderr`.
    pub label: String,
    /// The excerpt itself: at most a few KB (see `mcp::evidence::EXCERPT_BYTES`).
    pub text: String,
}

/// The result of one check against one requirement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    /// The requirement id from the checklist, e.g. `D-1`, `H-4`.
    pub id: String,
    /// A short title of the requirement.
    pub title: String,
    /// The requirement's level.
    pub level: Level,
    /// The outcome.
    pub status: Status,
    /// What was found, written for a user who has to act on it (for failures: the fix).
    pub message: String,
    /// Where the requirement is stated (a file of the spec repository, with the section).
    pub spec: String,
    /// Request and response excerpts that support the verdict.
    pub evidence: Vec<Evidence>,
    /// How long the check took, in milliseconds.
    pub duration_ms: u64,
    /// True on the INFO rows of a legacy server's migration list: a 2026-07-28 requirement the
    /// server would not meet (not graded). Written only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub migration: bool,
    /// The config file's waiver of this row: present on a `waived` row, and on a row whose
    /// waiver expired. Written only when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiver: Option<WaiverNote>,
}

/// What is known about the server under test.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerSection {
    /// `http` or `stdio`.
    pub transport: String,
    /// The URL (HTTP) or the command line (stdio) of the server under test.
    pub target: String,
    /// The protocol era detected: `2026-07-28` (modern), `2025-11-25` (legacy), or `null` when
    /// the server could not be reached.
    pub era: Option<String>,
    /// How the era was decided (B-1/B-2), in words.
    pub era_evidence: Option<String>,
    /// `supportedVersions` from `server/discover`, or the legacy `initialize` version.
    pub supported_versions: Vec<String>,
    /// `io.modelcontextprotocol/serverInfo` (modern) or `serverInfo` (legacy), as sent.
    pub server_info: Option<serde_json::Value>,
    /// The capabilities the server advertised.
    pub capabilities: Option<serde_json::Value>,
    /// The last lines the server wrote to stderr (stdio only), bounded.
    pub stderr_tail: Option<String>,
    /// How many items the server's lists held (every page walked); `None` when layer 0 did not
    /// get that far. Kept when a signal cuts the run short after the lists were walked.
    #[serde(default)]
    pub listed: Option<Listed>,
    /// stdio: one entry per process of the server started during the run, in start order,
    /// saying why it was needed (the session, a restart, the checks that need a process of
    /// their own); its length is the number of starts. Empty, and left out, over HTTP.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stdio_starts: Vec<String>,
    /// Every listed element the static scan read (`tools[read_file]`, at most 1,000) → the
    /// first 16 hex digits of the SHA-256 of its texts: a changed description changes it.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub descriptions: std::collections::BTreeMap<String, String>,
    /// Tools layer 0 may call that answered every valid call it sent with `isError: true`, so
    /// the checks that need a successful call were not applicable; at most one per tool called.
    /// Empty, and left out, when a tool call succeeded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_errors: Vec<ToolErrorNotice>,
}

/// A tool that answered its valid arguments with `isError: true` (layer 0 called it, and no
/// tool call succeeded). `summary.md` names the tool and the arguments; the error text, a tool
/// result, is kept here only (bounded and redacted like evidence).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolErrorNotice {
    /// The tool's name.
    pub tool: String,
    /// The arguments sent (generated from its inputSchema, or the config file's `safe_tools`),
    /// as JSON text, at most 200 characters.
    pub arguments: String,
    /// The text of the result's content blocks, at most 500 characters.
    pub error: String,
}

/// The sizes of the server's lists, as layer 0 walked them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listed {
    /// `tools/list` items.
    pub tools: usize,
    /// `prompts/list` items.
    pub prompts: usize,
    /// `resources/list` items.
    pub resources: usize,
    /// `resources/templates/list` items.
    pub resource_templates: usize,
}

/// How the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunOutcome {
    /// Every selected check ran.
    Completed,
    /// The server could not be reached or started; no check ran.
    Unreachable,
    /// SIGINT or SIGTERM arrived; the report holds the checks finished before it.
    Interrupted,
    /// The server refuses every request without credentials: the authorization rows were graded
    /// without any, every other check is `not_applicable` until credentials are given.
    NeedsCredentials,
    /// mcp-eval's own environment failed before any request was sent (no CA certificates for an
    /// `https://` server, no loopback port for the demo); no check ran. Exit status 4.
    Environment,
}

/// Counts of checks by status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Checks that passed.
    pub pass: usize,
    /// Checks that failed (MUST violations).
    pub fail: usize,
    /// Checks that warned (SHOULD violations, spec ambiguities).
    pub warn: usize,
    /// Checks that could not be exercised on this server.
    pub not_applicable: usize,
    /// Checks that hit an error on our side.
    pub error: usize,
    /// Checks a waiver of the config file covers (left out when 0, so a report without
    /// waivers keeps its version-1 shape).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub waived: usize,
}

/// Serde's test for a count left out when zero.
fn is_zero(count: &usize) -> bool {
    *count == 0
}

/// The overall verdict of a run, as written to `report.json` (`verdict`) and shown in
/// `summary.md`. Computed from the checks and the outcome by [`crate::verdict::verdict`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The run completed and no check has status `fail`.
    Pass,
    /// At least one check has status `fail`, or a layer-1 case × model failed its threshold
    /// (also on an interrupted run).
    Fail,
    /// No verdict could be reached: the server was unreachable, or the run was interrupted
    /// before any check failed.
    Error,
}

impl Verdict {
    /// The lower-case name used in `report.json`: `pass`, `fail` or `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Error => "error",
        }
    }
}

impl Level {
    /// The name used in `report.json`: `MUST`, `SHOULD` or `INFO`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::Should => "SHOULD",
            Level::Info => "INFO",
        }
    }
}

impl Status {
    /// The name used in `report.json`: `fail`, `error`, `warn`, `pass`, `not_applicable` or `waived`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Fail => "fail",
            Status::Error => "error",
            Status::Warn => "warn",
            Status::Pass => "pass",
            Status::NotApplicable => "not_applicable",
            Status::Waived => "waived",
        }
    }
}

impl RunOutcome {
    /// The name used in `report.json`: `completed`, `unreachable` or `interrupted`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunOutcome::Completed => "completed",
            RunOutcome::Unreachable => "unreachable",
            RunOutcome::Interrupted => "interrupted",
            RunOutcome::NeedsCredentials => "needs_credentials",
            RunOutcome::Environment => "environment",
        }
    }
}

/// What the gate made of the verdict: the policy it applied and the run's result under it. When
/// `result` differs from the verdict (warnings fail with `fail-on: should`; failures pass with
/// `fail-on: never`), every renderer says so, so a red job never shows a green summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateSection {
    /// `must`, `should` or `never`.
    pub fail_on: String,
    /// `pass`, `fail` or `error`: the Action's `result` output, and what the exit status follows.
    pub result: String,
}

/// The whole run report of one layer-0 evaluation.
#[derive(Debug, Clone, PartialEq)]
pub struct RunReport {
    /// Always [`FORMAT_VERSION`].
    pub format_version: u32,
    /// `mcp-eval` and its version.
    pub tool: String,
    /// The MCP revision the checks implement (`2026-07-28`).
    pub spec_revision: String,
    /// When the run started, UTC, whole seconds; RFC 3339 on the wire (`2026-08-01T12:00:00Z`).
    pub started_at: DateTime<Utc>,
    /// Wall time of the whole run, in milliseconds.
    pub duration_ms: u64,
    /// Wall time of layer 0's conformance checks alone, in milliseconds: from the start of its
    /// probes (the session already open) to its last graded check. `None` when layer 0 did not
    /// finish in this run (not asked for, a later shard, interrupted, unreachable) or the report
    /// was written by an older mcp-eval; the summary then falls back to [`Self::duration_ms`].
    pub layer0_duration_ms: Option<u64>,
    /// The layers that ran (`[0]` for now).
    pub layers: Vec<u8>,
    /// How the run ended.
    pub outcome: RunOutcome,
    /// A sentence on why the run ended early, when it did.
    pub outcome_detail: Option<String>,
    /// The gate's policy and result (absent on reports built without one).
    pub gate: Option<GateSection>,
    /// The server under test.
    pub server: ServerSection,
    /// Every check, in checklist order.
    pub checks: Vec<CheckResult>,
    /// Layer 1, when it was asked for.
    pub evals: Option<super::evals::EvalsSection>,
    /// Layer 2's faults, when layer 2 was asked for.
    pub resilience: Option<super::layer2::ResilienceSection>,
    /// Layer 2's adversarial payloads, when layer 2 ran them.
    pub security: Option<super::layer2::SecuritySection>,
    /// Layer 3's telemetry, when layer 3 was asked for.
    pub telemetry: Option<super::telemetry::TelemetrySection>,
    /// The cost budget (`--max-cost-usd`) and the spend against it, when one was set and a
    /// model ran or was about to.
    pub budget: Option<super::telemetry::BudgetSection>,
    /// Warnings about the config file's waivers: one that matches no row, each naming its file
    /// and line. Empty when there are none.
    pub waiver_notes: Vec<String>,
}

impl RunReport {
    /// A report of `checks` with its verdict and counts computed. `started_at` is truncated to
    /// whole seconds.
    #[allow(clippy::too_many_arguments, reason = "one argument per wire field; a builder would hide none")]
    pub fn new(
        started_at: DateTime<Utc>,
        duration_ms: u64,
        layers: Vec<u8>,
        outcome: RunOutcome,
        outcome_detail: Option<String>,
        server: ServerSection,
        checks: Vec<CheckResult>,
    ) -> Self {
        use chrono::SubsecRound;
        RunReport {
            format_version: FORMAT_VERSION,
            tool: format!("mcp-eval {}", env!("CARGO_PKG_VERSION")),
            spec_revision: crate::mcp::jsonrpc::PROTOCOL_VERSION.into(),
            started_at: started_at.trunc_subsecs(0),
            duration_ms,
            layer0_duration_ms: None,
            layers,
            outcome,
            outcome_detail,
            gate: None,
            server,
            checks,
            evals: None,
            resilience: None,
            security: None,
            telemetry: None,
            budget: None,
            waiver_notes: Vec::new(),
        }
    }

    /// The report of a run whose server could not be reached, started, or evaluated without
    /// credentials: one `CONNECT` row with status `error`, the reason and its evidence.
    pub fn unreachable(
        started_at: DateTime<Utc>,
        duration_ms: u64,
        server: ServerSection,
        reason: String,
        evidence: Vec<Evidence>,
    ) -> Self {
        let check = CheckResult {
            id: CONNECT_CHECK_ID.into(),
            title: "the server under test can be reached".into(),
            level: Level::Must,
            status: Status::Error,
            message: reason.clone(),
            spec: "docs/specification/2026-07-28/basic/transports".into(),
            evidence,
            duration_ms,
            migration: false,
            waiver: None,
        };
        Self::new(started_at, duration_ms, vec![0], RunOutcome::Unreachable, Some(reason), server, vec![check])
    }

    /// A run that could not start because mcp-eval's own environment failed (`reason`, with the
    /// fix): one `INTERNAL` row carrying it, outcome [`RunOutcome::Environment`].
    pub(crate) fn environment(
        started_at: DateTime<Utc>,
        duration_ms: u64,
        server: ServerSection,
        reason: String,
    ) -> Self {
        let check = Self::internal_error_check(reason.clone());
        Self::new(started_at, duration_ms, vec![0], RunOutcome::Environment, Some(reason), server, vec![check])
    }

    /// The row that says mcp-eval itself failed during the run (see [`INTERNAL_CHECK_ID`]).
    pub fn internal_error_check(message: String) -> CheckResult {
        CheckResult {
            id: INTERNAL_CHECK_ID.into(),
            title: "mcp-eval ran to the end without an internal error".into(),
            level: Level::Must,
            status: Status::Error,
            message,
            spec: String::new(),
            evidence: Vec::new(),
            duration_ms: 0,
            migration: false,
            waiver: None,
        }
    }

    /// Counts checks by status.
    pub fn counts(&self) -> Counts {
        let mut counts = Counts::default();
        for check in &self.checks {
            match check.status {
                Status::Pass => counts.pass += 1,
                Status::Fail => counts.fail += 1,
                Status::Warn => counts.warn += 1,
                Status::NotApplicable => counts.not_applicable += 1,
                Status::Error => counts.error += 1,
                Status::Waived => counts.waived += 1,
            }
        }
        counts
    }

    /// The `format_version` this report is written with: [`WAIVED_FORMAT_VERSION`] when a check
    /// is `waived`, otherwise the version it was built or read with.
    pub fn wire_version(&self) -> u32 {
        if self.checks.iter().any(|check| check.status == Status::Waived) {
            self.format_version.max(WAIVED_FORMAT_VERSION)
        } else {
            self.format_version
        }
    }

    /// True when the gate's result differs from the verdict (see [`GateSection`]).
    pub fn gate_overrides_verdict(&self) -> bool {
        self.gate.as_ref().is_some_and(|gate| gate.result != self.verdict().as_str())
    }

    /// A minimal completed report with no checks, for unit tests of other modules.
    #[cfg(test)]
    pub(crate) fn empty_for_tests() -> Self {
        Self::new(
            DateTime::<Utc>::UNIX_EPOCH,
            0,
            vec![0],
            RunOutcome::Completed,
            None,
            ServerSection::default(),
            Vec::new(),
        )
    }
}
