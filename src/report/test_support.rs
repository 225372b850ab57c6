//! Hand-built reports shared by the renderers' unit tests.

use chrono::{DateTime, Utc};

use super::model::{CheckResult, Evidence, Level, RunOutcome, RunReport, ServerSection, Status};

/// The start time of every test report: 2026-08-01T12:00:00Z.
pub(super) fn test_start() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-08-01T12:00:00Z").expect("a valid timestamp").with_timezone(&Utc)
}

/// A check with the given fields and no evidence.
pub(super) fn check(id: &str, title: &str, level: Level, status: Status, message: &str) -> CheckResult {
    CheckResult {
        id: id.to_owned(),
        title: title.to_owned(),
        level,
        status,
        message: message.to_owned(),
        spec: "docs/specification/2026-07-28/basic/lifecycle.mdx#discovery".to_owned(),
        evidence: Vec::new(),
        duration_ms: 0,
        migration: false,
    }
}

/// A completed run with one check of every status, in the order pass, fail, warn,
/// not_applicable, error.
pub(super) fn sample_report() -> RunReport {
    let mut fail = check(
        "D-1",
        "server/discover answers",
        Level::Must,
        Status::Fail,
        "server/discover returned a JSON-RPC error; implement server/discover.",
    );
    fail.duration_ms = 1234;
    fail.evidence = vec![
        Evidence {
            label: "request".to_owned(),
            text: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\"}".to_owned(),
        },
        Evidence {
            label: "response".to_owned(),
            text: "{\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}".to_owned(),
        },
    ];
    let mut pass = check(
        "D-2",
        "the discover result carries ttlMs",
        Level::Must,
        Status::Pass,
        "ttlMs and cacheScope are present",
    );
    pass.duration_ms = 7;
    let mut report = RunReport::new(
        test_start(),
        2500,
        vec![0],
        RunOutcome::Completed,
        None,
        ServerSection {
            transport: "http".to_owned(),
            target: "http://127.0.0.1:8080/mcp".to_owned(),
            era: Some("2026-07-28".to_owned()),
            era_evidence: Some("server/discover answered with supportedVersions".to_owned()),
            supported_versions: vec!["2026-07-28".to_owned()],
            server_info: Some(serde_json::json!({"name": "demo-server", "version": "1.2.3"})),
            capabilities: Some(serde_json::json!({"tools": {}})),
            stderr_tail: None,
        },
        vec![
            pass,
            fail,
            check(
                "H-4",
                "Cache-Control on responses",
                Level::Should,
                Status::Warn,
                "responses carry no Cache-Control header",
            ),
            check(
                "T-2",
                "tools/call errors",
                Level::Must,
                Status::NotApplicable,
                "the server advertises no tools capability",
            ),
            check("N-1", "negotiation summary", Level::Info, Status::Error, "mcp-eval timed out reading the response"),
        ],
    );
    report.tool = "mcp-eval 0.1.0".to_owned();
    report
}

/// A run whose server could not be reached, built by the same function the evaluation uses.
pub(super) fn unreachable_report() -> RunReport {
    let server = ServerSection {
        transport: "http".to_owned(),
        target: "http://127.0.0.1:9/mcp".to_owned(),
        ..ServerSection::default()
    };
    let mut report = RunReport::unreachable(
        test_start(),
        30_000,
        server,
        "connecting to http://127.0.0.1:9/mcp failed: connection refused".to_owned(),
        Vec::new(),
    );
    report.tool = "mcp-eval 0.1.0".to_owned();
    report
}
