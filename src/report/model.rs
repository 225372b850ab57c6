//! The run report: the one data model every renderer (JSON, JUnit, Markdown) and the exit
//! status read. It is also the on-disk format of `report.json` (`format_version` 1), so every
//! field here is documented in `docs/report-format.md`; change them with care.
//!
//! The model is plain data: building it does no IO and reads no clock (timestamps and durations
//! arrive as values), so renderers are deterministic and testable.

use serde::Serialize;

/// Version of the `report.json` format. Bump it on any change a reader could notice.
pub const FORMAT_VERSION: u32 = 1;

/// How strongly the spec states a requirement (RFC 2119 keywords).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
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
}

/// One bounded excerpt of what went over the wire (secrets redacted), kept as evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evidence {
    /// What this excerpt is, e.g. `request`, `response`, `stderr`.
    pub label: String,
    /// The excerpt itself: at most a few KB (see `mcp::evidence::EXCERPT_BYTES`).
    pub text: String,
}

/// The result of one check against one requirement.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
}

/// What is known about the server under test.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
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
}

/// How the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunOutcome {
    /// Every selected check ran.
    Completed,
    /// The server could not be reached or started; no check ran.
    Unreachable,
    /// SIGINT or SIGTERM arrived; the report holds the checks finished before it.
    Interrupted,
}

/// Counts of checks by status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
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
}

/// The overall verdict of a run, as written to `report.json` (`verdict`) and shown in
/// `summary.md`. Computed from the checks and the outcome by [`RunReport::verdict`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The run completed and no check has status `fail`.
    Pass,
    /// At least one check has status `fail` (also on an interrupted run).
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
    /// The name used in `report.json`: `fail`, `error`, `warn`, `pass` or `not_applicable`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Fail => "fail",
            Status::Error => "error",
            Status::Warn => "warn",
            Status::Pass => "pass",
            Status::NotApplicable => "not_applicable",
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
        }
    }
}

/// The whole run report of one layer-0 evaluation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunReport {
    /// Always [`FORMAT_VERSION`].
    pub format_version: u32,
    /// `mcp-eval` and its version.
    pub tool: String,
    /// The MCP revision the checks implement (`2026-07-28`).
    pub spec_revision: String,
    /// When the run started, RFC 3339 UTC (given as data, never read by renderers).
    pub started_at: String,
    /// Wall time of the whole run, in milliseconds.
    pub duration_ms: u64,
    /// The layers that ran (`[0]` for now).
    pub layers: Vec<u8>,
    /// How the run ended.
    pub outcome: RunOutcome,
    /// A sentence on why the run ended early, when it did.
    pub outcome_detail: Option<String>,
    /// The server under test.
    pub server: ServerSection,
    /// Every check, in checklist order.
    pub checks: Vec<CheckResult>,
}

impl RunReport {
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
            }
        }
        counts
    }

    /// True when any MUST check failed (the gate of exit status 1).
    pub fn has_must_failure(&self) -> bool {
        self.checks.iter().any(|check| check.status == Status::Fail)
    }

    /// The overall verdict: `error` when the server was unreachable; `fail` when any check
    /// failed; `error` when the run was interrupted without a failure (an incomplete run never
    /// passes); `pass` otherwise. Checks with status `error` or `warn` do not fail the verdict.
    pub fn verdict(&self) -> Verdict {
        match self.outcome {
            RunOutcome::Unreachable => Verdict::Error,
            _ if self.has_must_failure() => Verdict::Fail,
            RunOutcome::Interrupted => Verdict::Error,
            RunOutcome::Completed => Verdict::Pass,
        }
    }
}
