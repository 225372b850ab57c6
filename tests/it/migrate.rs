//! `mcp-eval migrate-scan` on real code: the SDK-built servers `scripts/install-servers.sh`
//! installs into `.interop/` (scanned with `--no-ignore`, since `.interop/` is gitignored) —
//! the TypeScript reference servers on `@modelcontextprotocol/sdk` 1.x (everything, memory),
//! a server on the v2 TypeScript SDK (basic-vanillajs: dual-era, only notes), the Python time
//! server on `mcp` 2.3 and that Python SDK itself (its legacy transport modules are findings,
//! its dual-era modules notes) — and decoys written here: prose, a changelog, an unrelated
//! `initialize`, numbers that contain a code, to keep false positives out. Each expected use
//! below was read in the installed file at that line.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::support::{binary, repo_root};

/// A use as the test names it: (path, line, rule).
type Use = (String, u64, String);

/// The outcome of one `migrate-scan`: exit code, stdout, stderr and the `--json` document.
struct Scanned {
    code: i32,
    stdout: String,
    stderr: String,
    json: Value,
}

impl Scanned {
    fn uses(&self, notes: bool) -> BTreeSet<Use> {
        self.json["findings"]
            .as_array()
            .unwrap_or_else(|| panic!("no findings array; stderr: {}", self.stderr))
            .iter()
            .filter(|found| found["note"] == notes)
            .map(|found| {
                (
                    found["path"].as_str().unwrap_or_default().to_owned(),
                    found["line"].as_u64().unwrap_or_default(),
                    found["rule"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    }

    fn findings(&self) -> BTreeSet<Use> {
        self.uses(false)
    }

    fn notes(&self) -> BTreeSet<Use> {
        self.uses(true)
    }

    /// The reason of every note in `path`.
    fn why_in(&self, path: &str) -> Vec<String> {
        self.json["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|found| found["path"] == path && found["note"] == true)
            .map(|found| found["why"].as_str().unwrap_or_default().to_owned())
            .collect()
    }
}

fn scan(path: &Path, flags: &[&str]) -> Scanned {
    let dir = tempfile::tempdir().expect("a temp dir");
    let json = dir.path().join("migration.json");
    let output = Command::new(binary())
        .arg("migrate-scan")
        .args(flags)
        .arg("--json")
        .arg(&json)
        .arg(path)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp-eval");
    let text = std::fs::read_to_string(&json).unwrap_or_default();
    Scanned {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        json: serde_json::from_str(&text).unwrap_or(Value::Null),
    }
}

fn uses(list: &[(&str, u64, &str)]) -> BTreeSet<Use> {
    list.iter().map(|(path, line, rule)| ((*path).to_owned(), *line, (*rule).to_owned())).collect()
}

/// An installed package, or a failure that names the fix.
fn installed(relative: &str) -> PathBuf {
    let path = repo_root().join(".interop").join(relative);
    assert!(path.exists(), "{} is not installed: run `scripts/install-servers.sh` first", path.display());
    path
}

const SITE_PACKAGES: &str = "venv/lib/python3.11/site-packages";

#[test]
fn the_everything_server_on_the_v1_typescript_sdk() {
    let scanned = scan(&installed("node/node_modules/@modelcontextprotocol/server-everything"), &["--no-ignore"]);
    assert_eq!(scanned.code, 0, "findings alone exit 0: {}", scanned.stderr);
    assert_eq!(
        scanned.findings(),
        uses(&[
            // `"@modelcontextprotocol/sdk": "^1.30.0"`: no 2.x in the range.
            ("package.json", 33, "MIG-14"),
            // `server.server.oninitialized = …` and its tests.
            ("dist/server/index.js", 70, "MIG-2"),
            ("dist/__tests__/server.test.js", 19, "MIG-2"),
            ("dist/__tests__/server.test.js", 21, "MIG-2"),
            // `SubscribeRequestSchema`, `UnsubscribeRequestSchema`: imported, then handled.
            ("dist/resources/subscriptions.js", 1, "MIG-5"),
            ("dist/resources/subscriptions.js", 27, "MIG-5"),
            ("dist/resources/subscriptions.js", 46, "MIG-5"),
            // `RootsListChangedNotificationSchema`.
            ("dist/server/roots.js", 1, "MIG-6"),
            ("dist/server/roots.js", 58, "MIG-6"),
            // The HTTP+SSE transport (`SSEServerTransport`).
            ("dist/transports/sse.js", 1, "MIG-8"),
            ("dist/transports/sse.js", 28, "MIG-8"),
            // The stateful Streamable HTTP server: an event store for resumption, the CORS
            // exposed headers, the session header read on POST, GET and DELETE, the transport's
            // session id generator and its on-session-initialized hook, the GET stream and the
            // DELETE teardown routes.
            ("dist/transports/streamableHttp.js", 14, "MIG-10"),
            ("dist/transports/streamableHttp.js", 36, "MIG-7"),
            ("dist/transports/streamableHttp.js", 36, "MIG-10"),
            ("dist/transports/streamableHttp.js", 45, "MIG-7"),
            ("dist/transports/streamableHttp.js", 56, "MIG-7"),
            ("dist/transports/streamableHttp.js", 58, "MIG-7"),
            ("dist/transports/streamableHttp.js", 112, "MIG-8"),
            ("dist/transports/streamableHttp.js", 114, "MIG-7"),
            ("dist/transports/streamableHttp.js", 127, "MIG-10"),
            ("dist/transports/streamableHttp.js", 129, "MIG-10"),
            ("dist/transports/streamableHttp.js", 138, "MIG-9"),
            ("dist/transports/streamableHttp.js", 139, "MIG-7"),
        ]),
        "{}",
        scanned.stdout
    );
    assert_eq!(
        scanned.notes(),
        uses(&[
            ("dist/server/index.js", 72, "MIG-2"),
            ("dist/server/index.js", 75, "MIG-2"),
            ("dist/server/roots.js", 10, "MIG-6"),
            ("dist/tools/get-roots-list.js", 24, "MIG-6"),
            ("dist/transports/streamableHttp.js", 126, "MIG-10"),
        ]),
        "the mentions in comments"
    );
    assert!(scanned.stdout.contains("dist/transports/streamableHttp.js:138:1"), "{}", scanned.stdout);
    assert!(scanned.stdout.contains("23 finding(s) in 7 file(s) and 5 note(s)"), "{}", scanned.stdout);
    let strict = scan(
        &installed("node/node_modules/@modelcontextprotocol/server-everything"),
        &["--no-ignore", "--fail-on-findings"],
    );
    assert_eq!(strict.code, 1, "--fail-on-findings");
}

#[test]
fn the_memory_server_on_the_v1_typescript_sdk() {
    let scanned = scan(&installed("node-scan/node_modules/@modelcontextprotocol/server-memory"), &["--no-ignore"]);
    assert_eq!(scanned.code, 0, "{}", scanned.stderr);
    // Its own files; the copy of the SDK under its node_modules/ has uses of its own.
    let own: BTreeSet<Use> =
        scanned.findings().into_iter().filter(|(path, _, _)| !path.starts_with("node_modules/")).collect();
    assert_eq!(
        own,
        uses(&[
            ("package.json", 28, "MIG-14"),
            ("dist/index.js", 4, "MIG-5"),
            ("dist/index.js", 485, "MIG-5"),
            ("dist/index.js", 489, "MIG-5"),
        ])
    );
}

#[test]
fn a_server_on_the_v2_typescript_sdk_is_dual_era_only_notes() {
    let scanned = scan(
        &installed("node/node_modules/@modelcontextprotocol/server-basic-vanillajs"),
        &["--no-ignore", "--fail-on-findings"],
    );
    assert_eq!(scanned.code, 0, "notes never fail: {}", scanned.stdout);
    assert_eq!(scanned.findings(), BTreeSet::new(), "{}", scanned.stdout);
    let notes = scanned.notes();
    assert!(notes.len() > 100, "the bundled v2 SDK handles both eras: {}", notes.len());
    for rule in ["MIG-1", "MIG-2", "MIG-5", "MIG-7", "MIG-13"] {
        assert!(notes.iter().any(|(_, _, found)| found == rule), "{rule} among the notes");
    }
    assert!(scanned.why_in("dist/server.js").iter().all(|why| why.starts_with("dual-era: the file also has `")));
}

#[test]
fn the_python_time_server_on_mcp_2() {
    let site = installed(SITE_PACKAGES);
    let server = scan(&site.join("mcp_server_time"), &["--no-ignore"]);
    assert_eq!(server.code, 0, "{}", server.stderr);
    // Built on the SDK's MCPServer, dual-era: the handshake is named only in prose comments.
    assert_eq!((server.findings(), server.notes()), (BTreeSet::new(), BTreeSet::new()), "{}", server.stdout);
    assert_eq!(server.json["counts"]["sources"], 3);
    // `Requires-Dist: mcp<3,>=2.3` in its core metadata: a 2.x pin, no finding.
    let metadata = scan(&site.join("mcp_server_time-2026.10.19.dist-info"), &["--no-ignore"]);
    assert_eq!((metadata.json["counts"]["manifests"].as_u64(), metadata.findings().len()), (Some(1), 0));
}

#[test]
fn the_python_sdk_2_legacy_transports_are_findings_and_its_dual_era_modules_notes() {
    let scanned = scan(&installed(&format!("{SITE_PACKAGES}/mcp")), &["--no-ignore"]);
    assert_eq!(scanned.code, 0, "{}", scanned.stderr);
    let findings = scanned.findings();
    for expected in uses(&[
        // The 2025-era Streamable HTTP client: the session and Last-Event-ID headers, the
        // handshake it recognises, DELETE to end the session.
        ("client/streamable_http.py", 55, "MIG-7"),
        ("client/streamable_http.py", 56, "MIG-10"),
        ("client/streamable_http.py", 161, "MIG-1"),
        ("client/streamable_http.py", 165, "MIG-2"),
        ("client/streamable_http.py", 695, "MIG-9"),
        // The 2025-era Streamable HTTP server: the headers, GET and DELETE dispatched.
        ("server/streamable_http.py", 54, "MIG-7"),
        ("server/streamable_http.py", 55, "MIG-10"),
        ("server/streamable_http.py", 522, "MIG-8"),
        ("server/streamable_http.py", 524, "MIG-9"),
        // The HTTP+SSE transport.
        ("server/sse.py", 66, "MIG-8"),
        ("client/__main__.py", 13, "MIG-8"),
    ]) {
        assert!(findings.contains(&expected), "{expected:?} missing:\n{}", scanned.stdout);
    }
    let notes = scanned.notes();
    for expected in uses(&[
        ("client/session.py", 655, "MIG-1"),
        ("server/runner.py", 40, "MIG-1"),
        ("server/connection.py", 37, "MIG-1"),
        ("server/lowlevel/server.py", 466, "MIG-5"),
    ]) {
        assert!(notes.contains(&expected), "{expected:?} is not a note:\n{}", scanned.stdout);
    }
    // The dual-era modules (they name `server/discover` or 2026-07-28 in code) have notes only.
    for module in [
        "client/session.py",
        "client/client.py",
        "server/runner.py",
        "server/connection.py",
        "server/lowlevel/server.py",
    ] {
        assert!(!findings.iter().any(|(path, _, _)| path == module), "{module} has findings:\n{}", scanned.stdout);
        assert!(!scanned.why_in(module).is_empty(), "{module} has notes");
    }
}

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("a directory");
    std::fs::write(path, text).expect("written");
}

#[test]
fn decoys_give_no_finding_and_no_note() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let root = dir.path();
    write(
        root,
        "README.md",
        "# A server\n\nThe client calls `initialize` first, then sends `notifications/initialized`; the server answers with an Mcp-Session-Id header. Errors: -32002, -32003.\n",
    );
    write(
        root,
        "CHANGELOG.md",
        "## 2.0.0\n- Removed `ping`, `logging/setLevel` and `resources/subscribe`.\n- Last-Event-ID resumption is gone.\n",
    );
    write(root, "CHANGELOG", "1.4: session DELETE handled; -32004 for bad versions\n");
    write(root, "docs/migration.txt", "initialize -> server/discover; Mcp-Session-Id -> none\n");
    // An `initialize` unrelated to MCP (no MCP anywhere in the tree).
    write(
        root,
        "src/widget.js",
        "function initialize() { return 1; }\nexport const ready = initialize();\nemitter.on(\"initialize\", () => {});\n",
    );
    // A number that holds a code, and codes in a subtraction and a version.
    write(root, "src/numbers.py", "TOTAL = 132002\nDELTA = 132002 - 32002\nVERSION = \"1.32002\"\n");
    // A generic SSE endpoint with Last-Event-ID and a GET route, nothing of MCP.
    write(
        root,
        "src/events.ts",
        "app.get('/events', (req, res) => {\n  res.setHeader('Content-Type', 'text/event-stream');\n  const last = req.headers['last-event-id'];\n});\n",
    );
    // Python logging's own setLevel.
    write(root, "src/log.py", "import logging\nlogging.getLogger(__name__).setLevel(logging.DEBUG)\n");
    let scanned = scan(root, &["--fail-on-findings"]);
    assert_eq!(scanned.code, 0, "{}{}", scanned.stdout, scanned.stderr);
    assert_eq!((scanned.findings(), scanned.notes()), (BTreeSet::new(), BTreeSet::new()), "{}", scanned.stdout);
    assert_eq!(scanned.json["counts"]["sources"], 4);
    assert_eq!(scanned.json["counts"]["other"], 4, "prose is not read");
}

#[test]
fn an_mcp_server_that_only_looks_like_the_old_protocol_gives_nothing() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let root = dir.path();
    write(root, "package.json", "{\"dependencies\": {\"@modelcontextprotocol/server\": \"^2.0.0\"}}\n");
    write(
        root,
        "src/server.ts",
        "import { McpServer } from \"@modelcontextprotocol/server\";\nconst SESSION_NOT_FOUND = -32001;\nconst TIMEOUT = -32001;\nfunction initialize(config) { return new McpServer(config); }\nconst ping = Date.now();\nconst capabilities = { resources: { subscribe: true, listChanged: true } };\nserver.tool(\"ping\", async () => ({ content: [] }));\n",
    );
    let scanned = scan(root, &[]);
    assert_eq!((scanned.findings(), scanned.notes()), (BTreeSet::new(), BTreeSet::new()), "{}", scanned.stdout);
}

#[test]
fn ignored_files_are_scanned_only_with_no_ignore_and_a_missing_path_exits_2() {
    let dir = tempfile::tempdir().expect("a temp dir");
    write(dir.path(), ".gitignore", "build/\n");
    write(dir.path(), "build/legacy.js", "send({ method: 'notifications/initialized' });\n");
    assert_eq!(scan(dir.path(), &[]).findings(), BTreeSet::new());
    assert_eq!(scan(dir.path(), &["--no-ignore"]).findings(), uses(&[("build/legacy.js", 1, "MIG-2")]));
    let missing = scan(&dir.path().join("no-such-dir"), &[]);
    assert_eq!(missing.code, 2);
    assert!(missing.stderr.contains("no-such-dir` does not exist"), "{}", missing.stderr);
}

/// A project that is no git repository and has no ignore file: the installed dependencies
/// (`node_modules/`, a virtualenv, `site-packages/`) are not read, and the output says so; the
/// user's own findings are all there is. A dependency directory named as the path is read.
#[test]
fn installed_dependencies_are_skipped_without_any_ignore_file() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let root = dir.path();
    let legacy = "send({ method: 'notifications/initialized' });\n";
    write(root, "src/server.js", legacy);
    write(root, "node_modules/@modelcontextprotocol/sdk/dist/client.js", legacy);
    write(root, "web/node_modules/left-pad/index.js", legacy);
    write(root, ".venv/pyvenv.cfg", "home = /usr/bin\n");
    write(root, ".venv/lib/python3.12/site-packages/mcp/client.py", "m = 'notifications/initialized'\n");
    // A virtualenv under any name is known by its `pyvenv.cfg`.
    write(root, "env311/pyvenv.cfg", "home = /usr/bin\n");
    write(root, "env311/bin/tool.py", "m = 'notifications/initialized'\n");
    write(root, "vendor/python/site-packages/old.py", "m = 'notifications/initialized'\n");
    // A directory that only sounds like one is read.
    write(root, "venv_tools/check.py", "m = 'notifications/initialized'\n");
    let scanned = scan(root, &[]);
    assert_eq!(
        scanned.findings(),
        uses(&[("src/server.js", 1, "MIG-2"), ("venv_tools/check.py", 1, "MIG-2")]),
        "{}",
        scanned.stdout
    );
    assert_eq!(scanned.json["counts"]["sources"], 2, "{}", scanned.stdout);
    assert_eq!(scanned.json["counts"]["dependency_dirs"], 5, "{}", scanned.stdout);
    assert!(
        scanned.stdout.contains(
            "skipped 5 installed-dependency director(ies) whatever the ignore files say (node_modules: 2, site-packages: 1, virtualenv: 2; name one as the path to scan it)"
        ),
        "{}",
        scanned.stdout
    );
    // `--no-ignore` is about ignore files: dependencies stay skipped.
    assert_eq!(scan(root, &["--no-ignore"]).findings().len(), 2);
    // Named as the path, a dependency directory is read.
    let named = scan(&root.join("node_modules"), &[]);
    assert_eq!(named.findings(), uses(&[("@modelcontextprotocol/sdk/dist/client.js", 1, "MIG-2")]), "{}", named.stdout);
}

#[test]
fn the_findings_as_sarif_read_back_by_an_independent_model_one_result_each_at_its_line() {
    let server = installed("node/node_modules/@modelcontextprotocol/server-everything");
    let dir = tempfile::tempdir().expect("a temp dir");
    let sarif = dir.path().join("migration.sarif");
    let output = Command::new(binary())
        .args(["migrate-scan", "--no-ignore", "--sarif"])
        .arg(&sarif)
        .arg(&server)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp-eval");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let log = crate::sarif::read_sarif(&sarif);
    let rules: Vec<&str> = log["rules"].as_array().expect("rules").iter().filter_map(Value::as_str).collect();
    assert_eq!(rules.first(), Some(&"MIG-1"));
    assert!(rules.contains(&"MIG-15"), "every rule of the catalogue: {rules:?}");
    let results = log["results"].as_array().expect("results");
    assert_eq!(results.len(), 23, "the findings, not the notes: {log}");
    let teardown =
        results.iter().find(|result| result["rule"] == "MIG-9").unwrap_or_else(|| panic!("no MIG-9 in {log}"));
    assert_eq!(
        (teardown["uri"].as_str(), teardown["line"].as_u64()),
        (Some("dist/transports/streamableHttp.js"), Some(138))
    );
    assert!(results.iter().all(|result| result["level"] == "warning"), "{log}");
}
