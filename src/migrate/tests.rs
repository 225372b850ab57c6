//! Tests of `migrate-scan` over small trees written by the tests: the walk (`.gitignore`,
//! `--no-ignore`, the bounds), the gate by the tree's manifests, the table, the `--json` file
//! and the exit statuses.

use std::path::Path;

use super::*;

fn write(root: &Path, relative: &str, text: &[u8]) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("a directory");
    std::fs::write(path, text).expect("written");
}

fn found(scan: &Scan) -> Vec<(String, usize, &'static str, bool)> {
    scan.uses.iter().map(|found| (found.path.clone(), found.line, found.rule, found.note)).collect()
}

fn run(options: &Options) -> (ExitStatus, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = command(options, &mut out, &mut err);
    (status, String::from_utf8_lossy(&out).into_owned(), String::from_utf8_lossy(&err).into_owned())
}

fn options(path: &Path) -> Options {
    Options { path: path.to_owned(), json: None, sarif: None, no_ignore: false, fail_on_findings: false }
}

#[test]
fn the_walk_honours_gitignore_unless_no_ignore() {
    let dir = tempfile::tempdir().expect("a temp dir");
    write(dir.path(), ".gitignore", b"vendor/\n");
    write(dir.path(), "src/client.ts", b"const m = 'notifications/initialized';\n");
    write(dir.path(), "vendor/old.js", b"const m = 'logging/setLevel';\n");
    write(dir.path(), ".git/hooks/x.js", b"const m = 'logging/setLevel';\n");
    let honoured = scan::scan(dir.path(), false);
    assert_eq!(found(&honoured), vec![("src/client.ts".into(), 1, "MIG-2", false)]);
    let everything = scan::scan(dir.path(), true);
    assert_eq!(
        found(&everything),
        vec![("src/client.ts".into(), 1, "MIG-2", false), ("vendor/old.js".into(), 1, "MIG-4", false)],
        ".git/ stays out even with --no-ignore"
    );
    let file = scan::scan(&dir.path().join("src/client.ts"), false);
    assert_eq!(
        found(&file),
        vec![("client.ts".into(), 1, "MIG-2", false)],
        "a file scanned alone is named by its name"
    );
}

#[test]
fn large_binary_and_prose_files_are_counted_not_read() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let mut large = b"const m = 'logging/setLevel';\n".to_vec();
    large.resize(usize::try_from(scan::MAX_FILE_BYTES).expect("fits") + 1, b' ');
    write(dir.path(), "big.js", &large);
    write(dir.path(), "blob.js", b"\0\0\0'logging/setLevel'");
    write(dir.path(), "README.md", b"Send `initialize`, then `notifications/initialized` with Mcp-Session-Id.\n");
    write(dir.path(), "CHANGELOG", b"- dropped notifications/initialized and -32002\n");
    let scan = scan::scan(dir.path(), false);
    assert_eq!((scan.uses.len(), scan.too_large, scan.binary, scan.other, scan.sources), (0, 1, 1, 2, 0));
    let (status, out, _) = run(&options(dir.path()));
    assert_eq!(status, ExitStatus::Passed);
    assert!(out.contains("skipped 1 over 2 MiB and 1 binary; 2 other file(s) not read"), "{out}");
}

#[test]
fn a_manifest_that_names_mcp_opens_the_gate_for_the_whole_tree() {
    let dir = tempfile::tempdir().expect("a temp dir");
    write(dir.path(), "src/handlers.js", b"switch (body.method) {\n  case \"initialize\": return hello();\n}\n");
    assert_eq!(found(&scan::scan(dir.path(), false)), vec![], "no word of MCP anywhere: `initialize` may be anything");
    write(dir.path(), "package.json", br#"{"dependencies": {"@modelcontextprotocol/server": "^2.0.0"}}"#);
    assert_eq!(found(&scan::scan(dir.path(), false)), vec![("src/handlers.js".into(), 2, "MIG-1", false)]);
}

#[test]
fn decoys_give_nothing() {
    let dir = tempfile::tempdir().expect("a temp dir");
    write(dir.path(), "README.md", b"Call `initialize` once; the server sends Mcp-Session-Id. See -32002.\n");
    write(dir.path(), "CHANGELOG.md", b"## 2.0\n- removed `ping`, `logging/setLevel` and `resources/subscribe`\n");
    write(dir.path(), "docs/notes.txt", b"notifications/initialized, Last-Event-ID, -32003, -32004\n");
    write(
        dir.path(),
        "app/init.js",
        b"function initialize() { return 132002 + ping; }\nconst ping = 1;\nmodule.exports = { initialize };\n",
    );
    write(dir.path(), "app/events.py", b"import logging\nlogging.getLogger().setLevel(logging.INFO)\nbus.emit(\"initialize\")\nTOTAL = 132002 - 32002\n");
    write(
        dir.path(),
        "app/sse.js",
        b"app.get('/events', (req, res) => { const last = req.headers['last-event-id']; });\nconst code = -32002;\n",
    );
    let scan = scan::scan(dir.path(), false);
    assert_eq!(found(&scan), vec![], "{:#?}", scan.uses);
    assert_eq!((scan.sources, scan.other), (3, 3));
}

#[test]
fn the_table_lists_findings_then_notes_then_the_counts() {
    let dir = tempfile::tempdir().expect("a temp dir");
    write(dir.path(), "server.ts", b"// the old notifications/initialized\nconst h = \"Mcp-Session-Id\";\n");
    write(dir.path(), "requirements.txt", b"mcp==1.9.4\n");
    let (status, out, err) = run(&options(dir.path()));
    assert_eq!((status, err.as_str()), (ExitStatus::Passed, ""));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 5, "{out}");
    assert!(
        lines[0].starts_with("requirements.txt:1:1  MIG-15  a manifest pins the Python SDK `mcp` below 2 → `mcp` 2.x"),
        "{out}"
    );
    assert!(
        lines[1].starts_with("server.ts:2:12        MIG-7   the `Mcp-Session-Id` header (sessions) → none:"),
        "{out}"
    );
    assert_eq!(lines[2], "notes (never a failure):");
    assert_eq!(lines[3], "server.ts:1:12        MIG-2   `notifications/initialized` (in a comment)");
    assert!(
        lines[4].starts_with(
            "migrate-scan: 2 finding(s) in 2 file(s) and 1 note(s); read 1 source file(s) and 1 manifest(s)"
        )
    );
}

#[test]
fn findings_fail_only_with_fail_on_findings_and_notes_never() {
    let dir = tempfile::tempdir().expect("a temp dir");
    write(dir.path(), "a.js", b"// resources/subscribe\n");
    let strict = Options { fail_on_findings: true, ..options(dir.path()) };
    assert_eq!(run(&strict).0, ExitStatus::Passed, "a note never fails");
    write(dir.path(), "b.js", b"const m = 'resources/subscribe';\n");
    assert_eq!(run(&options(dir.path())).0, ExitStatus::Passed, "findings alone exit 0");
    assert_eq!(run(&strict).0, ExitStatus::VerdictFailed);
}

#[test]
fn a_missing_path_is_invalid_input_that_names_it() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let missing = dir.path().join("no-such-repo");
    let (status, out, err) = run(&options(&missing));
    assert_eq!(status, ExitStatus::InvalidInput);
    assert_eq!(out, "");
    assert!(err.starts_with("error: `") && err.contains("no-such-repo` does not exist"), "{err}");
}

#[test]
fn the_json_file_holds_every_use_the_counts_and_the_rules() {
    let dir = tempfile::tempdir().expect("a temp dir");
    write(dir.path(), "src/x.py", b"HEADER = 'mcp-session-id'  # Last-Event-ID too\n");
    let json_path = dir.path().join("out.json");
    let (status, _, _) = run(&Options { json: Some(json_path.clone()), ..options(&dir.path().join("src")) });
    assert_eq!(status, ExitStatus::Passed);
    let value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).expect("written")).expect("JSON");
    assert_eq!(value["format"], JSON_FORMAT);
    assert_eq!(
        value["findings"][0],
        serde_json::json!({"rule": "MIG-7", "path": "x.py", "line": 1, "column": 11, "text": "mcp-session-id",
            "replacement": rules::rule("MIG-7").replacement, "note": false})
    );
    assert_eq!(value["findings"][1]["note"], true);
    assert_eq!(value["findings"][1]["why"], "in a comment");
    assert_eq!(value["counts"]["findings"], 1);
    assert_eq!(value["counts"]["notes"], 1);
    assert_eq!(value["rules"].as_array().map(Vec::len), Some(rules::RULES.len()));
    let unwritable = Options { json: Some(dir.path().join("no-dir").join("out.json")), ..options(dir.path()) };
    let (status, out, err) = run(&unwritable);
    assert_eq!(status, ExitStatus::Environment);
    assert!(out.contains("1 finding(s)"), "the table is printed anyway: {out}");
    assert!(err.contains("cannot write --json"), "{err}");
}

#[test]
fn the_command_names_no_exit_status_by_hand() {
    for (file, text) in [
        ("migrate/mod.rs", include_str!("mod.rs")),
        ("migrate/scan.rs", include_str!("scan.rs")),
        ("migrate/manifest.rs", include_str!("manifest.rs")),
    ] {
        assert!(!text.contains("ExitStatus::"), "{file} chooses an exit status by hand: go through `Met`");
    }
}

#[test]
fn a_stateful_transport_option_that_mints_session_ids_is_a_session_use() {
    let dir = tempfile::tempdir().expect("a temp dir");
    write(
        dir.path(),
        "src/http.ts",
        b"import { StreamableHTTPServerTransport } from \"@modelcontextprotocol/sdk/server/streamableHttp.js\";\n\
const transport = new StreamableHTTPServerTransport({\n\
  sessionIdGenerator: () => randomUUID(),\n\
  onsessioninitialized: (id) => { open[id] = transport; },\n\
  onsessionclosed: (id) => { delete open[id]; },\n\
});\n",
    );
    write(
        dir.path(),
        "server/app.py",
        b"from mcp.server.streamable_http import StreamableHTTPServerTransport\n\
transport = StreamableHTTPServerTransport(session_id_generator=new_id)\n",
    );
    assert_eq!(
        found(&scan::scan(dir.path(), false)),
        vec![
            ("server/app.py".into(), 2, "MIG-7", false),
            ("src/http.ts".into(), 3, "MIG-7", false),
            ("src/http.ts".into(), 4, "MIG-7", false),
            ("src/http.ts".into(), 5, "MIG-7", false),
        ]
    );
}

#[test]
fn removed_methods_as_case_labels_of_a_dispatch_are_uses() {
    let dir = tempfile::tempdir().expect("a temp dir");
    write(
        dir.path(),
        "src/dispatch.js",
        b"// an MCP server's own dispatch\nswitch (message.method) {\n  case \"ping\": return {};\n  case 'initialize': return hello();\n  case `resources/unsubscribe`: return drop();\n  default: return unknown();\n}\n",
    );
    write(
        dir.path(),
        "mcp_server/dispatch.py",
        b"# MCP dispatch\nmatch request[\"method\"]:\n    case \"ping\":\n        return {}\n    case \"logging/setLevel\":\n        return {}\n",
    );
    write(
        dir.path(),
        "src/mcp.rs",
        b"// MCP\nmatch method {\n    \"ping\" => Ok(json!({})),\n    _ => unknown(),\n}\n",
    );
    write(dir.path(), "go/mcp.go", b"// MCP\nswitch req.Method {\ncase \"ping\":\n\treturn nil\n}\n");
    assert_eq!(
        found(&scan::scan(dir.path(), false)),
        vec![
            ("go/mcp.go".into(), 3, "MIG-3", false),
            ("mcp_server/dispatch.py".into(), 3, "MIG-3", false),
            ("mcp_server/dispatch.py".into(), 5, "MIG-4", false),
            ("src/dispatch.js".into(), 3, "MIG-3", false),
            ("src/dispatch.js".into(), 4, "MIG-1", false),
            ("src/dispatch.js".into(), 5, "MIG-5", false),
            ("src/mcp.rs".into(), 3, "MIG-3", false),
        ]
    );
}

#[test]
fn a_server_emitting_the_draft_code_32001_is_a_use_and_a_client_timeout_constant_is_not() {
    let dir = tempfile::tempdir().expect("a temp dir");
    write(
        dir.path(),
        "src/server.ts",
        b"import { McpServer } from \"@modelcontextprotocol/sdk/server/mcp.js\";\n\
res.status(404).json({ jsonrpc: \"2.0\", error: { code: -32001, message: \"Session not found\" }, id: null });\n\
throw new McpError(-32001, \"unknown session\");\n",
    );
    write(
        dir.path(),
        "mcp_app/errors.py",
        b"from mcp.types import ErrorData\nGONE = ErrorData(code=-32001, message=\"Session not found\")\nbody = {\"error\": {\"code\": -32001}}\n",
    );
    write(
        dir.path(),
        "src/client/codes.ts",
        b"// MCP client\nexport enum ErrorCode {\n  RequestTimeout = -32001,\n}\nconst timeout = -32001; // a local timeout, never sent\n",
    );
    assert_eq!(
        found(&scan::scan(dir.path(), false)),
        vec![
            ("mcp_app/errors.py".into(), 2, "MIG-16", false),
            ("mcp_app/errors.py".into(), 3, "MIG-16", false),
            ("src/server.ts".into(), 2, "MIG-16", false),
            ("src/server.ts".into(), 3, "MIG-16", false),
        ]
    );
}
