//! The catalogue of requirements layer 0 checks: every row of the conformance checklist
//! (spec-notes §21), with its id, level, title, spec source and where it applies. Reports list
//! checks in this order, and every id here appears in every report, as a verdict or as
//! `not_applicable` with the reason.
//!
//! Reasons follow one convention where a check could not be exercised because another check's
//! rule is broken: the reason starts with `blocked:`, says what blocks it and names that check,
//! e.g. [`super::BLOCKED_BY_FRAMING`] on a stdio server whose stdout is not newline-delimited
//! JSON (X-1 fails; every check that needs an answer is blocked, docs/report-format.md).

use crate::report::model::Level;

/// Where a requirement can be exercised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Both transports.
    Any,
    /// Streamable HTTP only (`[H]`).
    Http,
    /// stdio only (`[S]`).
    Stdio,
}

/// One requirement of the checklist.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Requirement {
    /// The checklist id, e.g. `H-4`.
    pub id: &'static str,
    /// RFC 2119 level as the checklist grades it.
    pub level: Level,
    /// Short title.
    pub title: &'static str,
    /// Spec source (file of the spec repository, section).
    pub spec: &'static str,
    /// Transport scope.
    pub scope: Scope,
    /// True when the requirement also binds 2025-11-25 servers (graded on legacy servers too).
    pub era_independent: bool,
    /// The catalogue generation that added the row ([`CATALOGUE`]): a run compared with one of
    /// an older generation shows the rows added since as new rules, not as new failures.
    pub since: u8,
}

/// The catalogue's generation, raised whenever rows are added: 1 for the conformance rows,
/// 2 since the static scan (SEC-1…SEC-8), 3 since the probes with a real token.
pub(crate) const CATALOGUE: u8 = 3;

/// The generation that added a row (1 for an id the catalogue does not know).
pub(crate) fn since(id: &str) -> u8 {
    REQUIREMENTS.iter().find(|requirement| requirement.id == id).map_or(1, |requirement| requirement.since)
}

use Level::{Info, Must, Should};
use Scope::{Any, Http, Stdio};

const fn row(id: &'static str, level: Level, scope: Scope, title: &'static str, spec: &'static str) -> Requirement {
    Requirement { id, level, title, spec, scope, era_independent: false, since: 1 }
}

/// A row of the static scan: every era, catalogue generation 2.
const fn scan(id: &'static str, level: Level, title: &'static str, spec: &'static str) -> Requirement {
    Requirement { id, level, title, spec, scope: Scope::Any, era_independent: true, since: 2 }
}

const fn both_eras(requirement: Requirement) -> Requirement {
    Requirement { era_independent: true, ..requirement }
}

const B: &str = "docs/specification/2026-07-28/basic/";

/// Every requirement, in report order.
pub(crate) const REQUIREMENTS: &[Requirement] = &[
    row("D-1", Must, Any, "server/discover is implemented", "server/discover.mdx"),
    row("D-2", Must, Any, "server/discover carries caching hints", "server/utilities/caching.mdx"),
    row("D-3", Should, Any, "server identity in result _meta", "basic/index.mdx §_meta"),
    row(
        "D-4",
        Must,
        Any,
        "advertised capabilities match handlers",
        "schema.ts MethodNotFoundError; server/*.mdx §Capabilities",
    ),
    row("D-5", Info, Any, "the harness's version is in supportedVersions", "basic/versioning.mdx"),
    row("D-6", Must, Any, "completion/complete result shape", "server/utilities/completion.mdx"),
    row("M-1", Must, Any, "missing params._meta is rejected", "basic/index.mdx §_meta"),
    row("M-2", Must, Any, "missing protocolVersion is rejected", "basic/index.mdx §_meta"),
    row("M-3", Must, Any, "missing clientCapabilities is rejected", "basic/index.mdx §_meta"),
    row("M-4", Must, Any, "missing clientInfo is still served", "basic/index.mdx §_meta"),
    row("M-5", Must, Any, "no reliance on earlier requests", "basic/index.mdx §Statelessness"),
    both_eras(row("M-6", Must, Any, "error responses echo the request id", "basic/index.mdx §Messages")),
    row("M-7", Must, Any, "every result has resultType", "schema.ts Result"),
    row("M-8", Must, Any, "reserved error codes are never emitted", "basic/index.mdx §Error Codes"),
    row("M-9", Should, Any, "traceparent in _meta is tolerated", "basic/index.mdx §OpenTelemetry"),
    row(
        "M-10",
        Must,
        Any,
        "every message is valid against the 2026-07-28 schema",
        "basic/index.mdx §Schema; schema.ts",
    ),
    both_eras(row(
        "M-11",
        Must,
        Any,
        "results echo the request id; envelope is JSON-RPC 2.0",
        "basic/index.mdx §Messages",
    )),
    both_eras(row("M-12", Must, Any, "UTF-8 text survives a round trip", "basic/transports/index.mdx")),
    row("M-13", Should, Any, "unknown vendor _meta keys are ignored", "basic/index.mdx §_meta"),
    row("V-1", Must, Any, "unsupported version gets -32022", "basic/versioning.mdx"),
    row("V-2", Should, Any, "retry with a supported version succeeds", "basic/versioning.mdx"),
    row(
        "H-1",
        Must,
        Http,
        "MCP-Protocol-Version must match _meta",
        "transports/streamable-http.mdx §Protocol Version Header",
    ),
    row(
        "H-2",
        Must,
        Http,
        "missing MCP-Protocol-Version is rejected",
        "transports/streamable-http.mdx §Protocol Version Header",
    ),
    row("H-3", Must, Http, "missing Mcp-Method is rejected", "transports/streamable-http.mdx §Server Validation"),
    row("H-4", Must, Http, "Mcp-Method mismatch is rejected", "transports/streamable-http.mdx §Server Validation"),
    row("H-5", Must, Http, "header values are case-sensitive", "transports/streamable-http.mdx §Case Sensitivity"),
    row("H-6", Must, Http, "header names are case-insensitive", "transports/streamable-http.mdx §Case Sensitivity"),
    row("H-7", Must, Http, "Mcp-Name mismatch is rejected", "transports/streamable-http.mdx §Server Validation"),
    row("H-8", Must, Http, "missing Mcp-Name is rejected", "transports/streamable-http.mdx §Server Validation"),
    row(
        "H-9",
        Must,
        Http,
        "base64 Mcp-Name is decoded; bad base64 rejected",
        "transports/streamable-http.mdx §Value Encoding",
    ),
    row("H-10", Must, Http, "surrounding whitespace in header values is trimmed", "RFC 9110 §5.5"),
    row("H-11", Must, Http, "Mcp-Param-* headers are validated", "transports/streamable-http.mdx §Custom Headers"),
    row("H-12", Must, Http, "x-mcp-header annotations are valid", "server/tools.mdx §x-mcp-header"),
    row("H-13", Must, Http, "unknown or removed methods get 404 + -32601", "transports/streamable-http.mdx; changelog"),
    both_eras(row(
        "H-14",
        Must,
        Http,
        "responses are application/json or text/event-stream",
        "transports/streamable-http.mdx §Sending Messages",
    )),
    both_eras(row(
        "H-15",
        Must,
        Http,
        "no server-sent requests on SSE",
        "transports/streamable-http.mdx §Receiving Messages",
    )),
    row(
        "H-16",
        Should,
        Http,
        "the final response ends the SSE stream",
        "transports/streamable-http.mdx §Receiving Messages",
    ),
    row("H-17", Should, Http, "X-Accel-Buffering: no on SSE", "transports/streamable-http.mdx §Receiving Messages"),
    row("H-18", Should, Http, "GET and DELETE get 405", "transports/streamable-http.mdx §Earlier Revisions"),
    row(
        "H-19",
        Should,
        Http,
        "Mcp-Session-Id is ignored and never minted",
        "transports/streamable-http.mdx §Earlier Revisions",
    ),
    row("H-20", Should, Http, "Last-Event-ID is ignored", "transports/streamable-http.mdx §Earlier Revisions"),
    both_eras(row("H-21", Must, Http, "an invalid Origin gets 403", "transports/streamable-http.mdx §Security")),
    row(
        "H-22",
        Must,
        Http,
        "notification POST gets 202 with no body (or 4xx)",
        "transports/streamable-http.mdx §Sending Messages",
    ),
    row("H-23", Should, Any, "concurrent requests are served independently", "basic/index.mdx §Statelessness"),
    row("H-24", Should, Http, "a JSON-RPC batch is rejected", "transports/streamable-http.mdx §Sending Messages"),
    row(
        "H-25",
        Must,
        Http,
        "values not exactly in sentinel form are compared literally",
        "transports/streamable-http.mdx §Value Encoding",
    ),
    row("H-26", Info, Http, "loopback server refuses a foreign Host", "official suite (GHSA-w48q-cv73-mx4w)"),
    both_eras(row(
        "H-27",
        Should,
        Http,
        "the server keeps serving after invalid tool arguments",
        "server/tools.mdx §Security Considerations",
    )),
    row("E-1", Must, Any, "resource not found gets -32602", "server/resources.mdx §Error Handling"),
    row("E-2", Must, Any, "missing client capability gets -32021", "basic/index.mdx §_meta"),
    both_eras(row("E-3", Should, Any, "unknown tool gets -32602", "server/tools.mdx §Error Handling")),
    both_eras(row("E-4", Should, Any, "unknown prompt gets -32602", "server/prompts.mdx")),
    both_eras(row("E-5", Should, Any, "invalid cursor gets -32602", "server/utilities/pagination.mdx")),
    row("E-6", Should, Any, "invalid logLevel gets -32602", "server/utilities/logging.mdx"),
    both_eras(row("E-7", Must, Http, "an invalid JSON-RPC envelope is refused", "basic/index.mdx §Error Codes")),
    both_eras(row("E-8", Should, Http, "an unparsable body gets -32700", "basic/index.mdx §Error Codes")),
    row("E-9", Should, Any, "invalid params or tool arguments are refused", "server/tools.mdx §Error Handling"),
    row("R-1", Must, Any, "resultType values are known", "basic/index.mdx §ResultType"),
    row("R-2", Must, Any, "input_required only on tools/call, prompts/get, resources/read", "basic/patterns/mrtr.mdx"),
    row("R-3", Must, Any, "InputRequiredResult shape", "basic/patterns/mrtr.mdx"),
    row("R-4", Must, Any, "input requests respect declared capabilities", "basic/patterns/mrtr.mdx"),
    row("R-5", Info, Any, "the MRTR retry round trip works", "basic/patterns/mrtr.mdx"),
    row("R-6", Must, Any, "a tampered requestState is rejected", "basic/patterns/mrtr.mdx §Server Requirements"),
    row("R-7", Should, Any, "missing input responses are asked for again", "basic/patterns/mrtr.mdx §Error Handling"),
    row("R-8", Should, Any, "extra input responses are ignored", "basic/patterns/mrtr.mdx §Error Handling"),
    row("R-9", Should, Any, "no caching hints on input_required", "server/utilities/caching.mdx"),
    row("R-10", Should, Any, "malformed inputResponses are refused", "basic/patterns/mrtr.mdx §Error Handling"),
    row("C-1", Must, Any, "caching hints on every cacheable result", "server/utilities/caching.mdx"),
    row("C-2", Must, Any, "ttlMs is an integer >= 0", "server/utilities/caching.mdx; schema.json"),
    row("C-3", Must, Any, "cacheScope is public or private", "server/utilities/caching.mdx"),
    row("C-4", Must, Any, "same cacheScope on every page", "server/utilities/caching.mdx §Pagination"),
    both_eras(row("P-1", Should, Any, "deterministic tools/list order", "server/tools.mdx")),
    both_eras(row("P-2", Must, Any, "pagination result shape", "server/utilities/pagination.mdx")),
    row("P-3", Must, Any, "lists do not vary by connection", "server/tools.mdx §Capabilities"),
    both_eras(row("P-4", Must, Any, "resources/read of a listed resource is well-formed", "server/resources.mdx")),
    both_eras(row("P-5", Must, Any, "prompts/get of a listed prompt is well-formed", "server/prompts.mdx")),
    both_eras(row("P-6", Must, Any, "listed entries are well-formed", "server/resources.mdx; schema.ts")),
    both_eras(row("T-1", Must, Any, "inputSchema is an object with type object", "schema.ts Tool")),
    both_eras(row("T-2", Must, Any, "schemas are valid in their dialect", "basic/index.mdx §JSON Schema Usage")),
    both_eras(row(
        "T-3",
        Should,
        Any,
        "$ref: local refs resolve, remote refs are not fetched",
        "basic/index.mdx §$ref Resolution",
    )),
    both_eras(row("T-4", Should, Any, "schema complexity stays within bounds", "basic/index.mdx §Composition")),
    both_eras(row("T-5", Must, Any, "structuredContent conforms to outputSchema", "server/tools.mdx §Output Schema")),
    both_eras(row("T-6", Should, Any, "structured content has a text mirror", "server/tools.mdx §Structured Content")),
    both_eras(row("T-7", Must, Any, "CallToolResult shape", "schema.ts CallToolResult")),
    both_eras(row("T-8", Should, Any, "tool names are valid and unique", "server/tools.mdx §Tool Names")),
    both_eras(row("T-9", Must, Any, "tool annotations are booleans", "schema.ts ToolAnnotations")),
    row("S-1", Must, Any, "subscriptions/listen acknowledges first", "basic/patterns/subscriptions.mdx"),
    row("S-2", Must, Any, "every listen-stream notification is tagged", "basic/patterns/subscriptions.mdx"),
    row("S-3", Must, Any, "only requested notification types", "basic/patterns/subscriptions.mdx"),
    row("S-4", Must, Any, "no request-scoped notifications on listen", "basic/patterns/subscriptions.mdx"),
    row("S-5", Should, Any, "list-changed is delivered", "server/tools.mdx"),
    row("S-6", Should, Any, "graceful closure result", "basic/patterns/subscriptions.mdx"),
    row("L-1", Must, Any, "no log messages without logLevel", "server/utilities/logging.mdx"),
    row("L-2", Must, Any, "log messages respect the level", "server/utilities/logging.mdx"),
    both_eras(row("L-3", Must, Any, "progress notifications are well-formed", "basic/patterns/progress.mdx")),
    both_eras(row("X-1", Must, Stdio, "stdout carries only JSON-RPC messages", "basic/transports/stdio.mdx")),
    both_eras(row("X-2", Must, Stdio, "no JSON-RPC requests on stdout", "basic/transports/stdio.mdx")),
    row(
        "X-3",
        Must,
        Stdio,
        "cancellation stops further messages",
        "basic/transports/stdio.mdx; patterns/cancellation.mdx",
    ),
    both_eras(row("X-4", Should, Stdio, "the server exits on stdin EOF", "basic/transports/stdio.mdx §Shutdown")),
    row("X-5", Must, Stdio, "removed methods get -32601 on stdio", "changelog; basic/versioning.mdx"),
    both_eras(row("X-6", Should, Stdio, "the server keeps serving after an error", "basic/transports/stdio.mdx")),
    both_eras(row(
        "X-7",
        Must,
        Stdio,
        "cancellation of an unknown request is ignored",
        "basic/patterns/cancellation.mdx",
    )),
    row("B-3", Should, Any, "a modern-only server names its versions to initialize", "basic/versioning.mdx"),
    row("B-4", Info, Any, "a dual-era server serves both eras at once", "basic/versioning.mdx"),
    row("A-1", Must, Http, "Protected Resource Metadata is discoverable", "basic/authorization"),
    row("A-2", Must, Http, "the PRM document is well-formed", "basic/authorization; RFC 9728"),
    row("A-3", Must, Http, "missing or invalid credentials get 401", "basic/authorization/index.mdx"),
    row("A-4", Should, Http, "a token in the query string is not accepted", "basic/authorization/index.mdx"),
    Requirement {
        since: 3,
        ..row(
            "A-5",
            Must,
            Http,
            "a token minted for another resource is rejected",
            "basic/authorization/index.mdx §Token Audience Binding and Validation; RFC 8707",
        )
    },
    Requirement {
        since: 3,
        ..row(
            "A-6",
            Must,
            Http,
            "an expired token is rejected",
            "basic/authorization/index.mdx §Token Handling; OAuth 2.1 §5.2",
        )
    },
    row("K-1", Must, Any, "tasks are advertised under capabilities.extensions", "seps/2663-tasks-extension.md"),
    row("K-2", Must, Any, "tasks methods without the extension get -32021", "seps/2663-tasks-extension.md"),
    row("K-3", Must, Any, "tasks/get of an unknown taskId gets -32602", "seps/2663-tasks-extension.md"),
    row("K-4", Must, Http, "Mcp-Name must equal taskId", "seps/2663-tasks-extension.md"),
    // The static scan of the tool surface (not a rule of the specification: docs/security-scan.md
    // says why each row fails or warns). Every era.
    scan("SEC-1", Must, "no Unicode tag characters hide text", "docs/security-scan.md#sec-1 (OWASP MCP03)"),
    scan(
        "SEC-2",
        Should,
        "no hidden bidirectional, zero-width or control characters",
        "docs/security-scan.md#sec-2 (OWASP MCP03)",
    ),
    scan(
        "SEC-3",
        Must,
        "no instruction hides things from the user or overrides others",
        "docs/security-scan.md#sec-3 (OWASP MCP03)",
    ),
    scan(
        "SEC-4",
        Should,
        "no direction to read local secrets or send data elsewhere",
        "docs/security-scan.md#sec-4 (OWASP MCP03, MCP10)",
    ),
    scan(
        "SEC-5",
        Should,
        "no directions for tools the server does not list",
        "docs/security-scan.md#sec-5 (OWASP MCP03)",
    ),
    scan("SEC-6", Should, "no look-alike or mixed-script names", "docs/security-scan.md#sec-6 (OWASP MCP03)"),
    scan(
        "SEC-7",
        Should,
        "no parameter asks for a secret or the conversation",
        "docs/security-scan.md#sec-7 (OWASP MCP01, MCP10)",
    ),
    scan("SEC-8", Should, "no text longer than 10,000 characters", "docs/security-scan.md#sec-8 (OWASP MCP03)"),
];

/// The full spec source of a requirement, with the path prefix of the spec repository.
pub(crate) fn spec_source(requirement: &Requirement) -> String {
    let spec = requirement.spec;
    if spec.starts_with("basic/")
        || spec.starts_with("server/")
        || spec.starts_with("client/")
        || spec.starts_with("changelog")
    {
        format!("docs/specification/2026-07-28/{spec}")
    } else if spec.starts_with("transports/") {
        format!("{B}{spec}")
    } else {
        spec.to_owned()
    }
}

#[cfg(test)]
mod tests {
    /// The requirement with this id.
    fn find(id: &str) -> Option<&'static Requirement> {
        REQUIREMENTS.iter().find(|requirement| requirement.id == id)
    }

    use super::*;

    #[test]
    fn ids_are_unique() {
        let mut ids: Vec<&str> = REQUIREMENTS.iter().map(|requirement| requirement.id).collect();
        ids.sort_unstable();
        let before = ids.len();
        ids.dedup();
        assert_eq!(before, ids.len());
    }

    #[test]
    fn the_rows_without_a_level_are_graded_as_the_issue_says() {
        assert_eq!(find("D-5").map(|r| r.level), Some(Info));
        assert_eq!(find("R-5").map(|r| r.level), Some(Info));
        assert_eq!(find("B-4").map(|r| r.level), Some(Info));
        assert_eq!(find("R-9").map(|r| r.level), Some(Should));
        assert_eq!(find("T-9").map(|r| r.level), Some(Must));
    }

    #[test]
    fn surviving_invalid_arguments_is_a_should_of_both_eras_over_http() {
        // Over stdio the same rule is X-6 (the server keeps serving after an error).
        let h27 = find("H-27").expect("H-27");
        assert_eq!((h27.level, h27.scope, h27.era_independent), (Should, Http, true));
        let x6 = find("X-6").expect("X-6");
        assert_eq!((x6.level, x6.scope, x6.era_independent), (Should, Stdio, true));
    }
}
