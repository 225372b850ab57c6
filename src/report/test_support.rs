//! Hand-built reports shared by the renderers' unit tests.

use super::model::{CheckResult, Evidence, FORMAT_VERSION, Level, RunOutcome, RunReport, ServerSection, Status};

/// A check with the given fields and no evidence.
pub fn check(id: &str, title: &str, level: Level, status: Status, message: &str) -> CheckResult {
    CheckResult {
        id: id.to_owned(),
        title: title.to_owned(),
        level,
        status,
        message: message.to_owned(),
        spec: "docs/specification/2026-07-28/basic/lifecycle.mdx#discovery".to_owned(),
        evidence: Vec::new(),
        duration_ms: 0,
    }
}

/// A completed run with one check of every status, in the order pass, fail, warn,
/// not_applicable, error.
pub fn sample_report() -> RunReport {
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
    let mut pass = check("B-1", "era detected", Level::Must, Status::Pass, "modern era detected");
    pass.duration_ms = 7;
    RunReport {
        format_version: FORMAT_VERSION,
        tool: "mcp-eval 0.1.0".to_owned(),
        spec_revision: "2026-07-28".to_owned(),
        started_at: "2026-08-01T12:00:00Z".to_owned(),
        duration_ms: 2500,
        layers: vec![0],
        outcome: RunOutcome::Completed,
        outcome_detail: None,
        server: ServerSection {
            transport: "http".to_owned(),
            target: "http://127.0.0.1:8080/mcp".to_owned(),
            era: Some("2026-07-28".to_owned()),
            era_evidence: Some("server/discover answered with supportedVersions".to_owned()),
            supported_versions: vec!["2026-07-28".to_owned()],
            server_info: Some(serde_json::json!({"name": "demo-server", "version": "1.2.3"})),
            capabilities: Some(serde_json::json!({"tools": {}})),
            stderr_tail: None,
        },
        checks: vec![
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
    }
}

/// A run whose server could not be reached: no checks, no era.
pub fn unreachable_report() -> RunReport {
    RunReport {
        format_version: FORMAT_VERSION,
        tool: "mcp-eval 0.1.0".to_owned(),
        spec_revision: "2026-07-28".to_owned(),
        started_at: "2026-08-01T12:00:00Z".to_owned(),
        duration_ms: 30_000,
        layers: vec![0],
        outcome: RunOutcome::Unreachable,
        outcome_detail: Some("connecting to http://127.0.0.1:9/mcp failed: connection refused".to_owned()),
        server: ServerSection {
            transport: "http".to_owned(),
            target: "http://127.0.0.1:9/mcp".to_owned(),
            ..ServerSection::default()
        },
        checks: Vec::new(),
    }
}
