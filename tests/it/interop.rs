//! Real third-party MCP servers (installed by `scripts/install-servers.sh` into `.interop/`),
//! evaluated end to end. Each test pins the verdicts of one server: every graded row that does
//! not pass, a sample of passes, the era and the exit code. Legacy (2025-11-25) servers are
//! graded on the era-independent rows; their 2026-07-28 rows are INFO migration rows.
//!
//! The verdicts were checked by hand against the spec digest; the reasons are in the tables.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use crate::support::{Listening, Run, free_port, repo_root, run};

/// How long an HTTP server may take to accept connections (Python imports take about 2 s).
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// The launcher script; fails the test, with the fix, when the servers are not installed.
fn servers_script() -> PathBuf {
    let interop = repo_root().join(".interop");
    assert!(
        interop.join("venv").is_dir() && interop.join("node").is_dir(),
        "the third-party servers are not installed in {}: run `scripts/install-servers.sh` first",
        interop.display()
    );
    repo_root().join("scripts").join("servers.sh")
}

/// An HTTP server started with `servers.sh start NAME PORT`, in its own process group; the whole
/// group (mcp-proxy's child included) is killed on drop.
pub(crate) struct HttpServer {
    _process: Listening,
    /// Its endpoint URL (`http://127.0.0.1:PORT/mcp`).
    pub(crate) url: String,
}

impl HttpServer {
    /// Starts `servers.sh start NAME PORT` on a free loopback port and waits until it listens.
    pub(crate) fn start(name: &str) -> Self {
        let script = servers_script();
        let port = free_port();
        let mut command = Command::new("bash");
        command.arg(&script).args(["start", name, &port.to_string()]);
        Self {
            _process: Listening::start(command, name, port, START_TIMEOUT),
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

/// The command line of a stdio server, as `servers.sh cmd NAME` prints it.
pub(crate) fn stdio_command(name: &str) -> String {
    let output = Command::new("bash").arg(servers_script()).args(["cmd", name]).output().expect("servers.sh cmd");
    assert!(output.status.success(), "servers.sh cmd {name}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).expect("utf-8").trim().to_owned()
}

/// A `--config` file that makes `get_current_time {timezone: UTC}` callable (T-5/T-6).
pub(crate) fn time_config() -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(file.path(), "safe_tools:\n  - name: get_current_time\n    arguments: {timezone: UTC}\n")
        .expect("write config");
    file
}

/// What one server is expected to get.
struct Expected {
    era: &'static str,
    exit: i32,
    /// Every graded row that does not pass, with its status. Rows of the other transport and
    /// INFO migration rows are checked separately.
    not_passing: &'static [(&'static str, &'static str)],
    /// A sample of rows that pass.
    passing: &'static [&'static str],
    /// Legacy servers: the 2026-07-28 rows they would fail (INFO, "2026-07-28 migration: …").
    migration: &'static [&'static str],
}

/// True for a row that is not applicable because it belongs to the other transport.
fn other_transport(check: &serde_json::Value) -> bool {
    let message = check["message"].as_str().unwrap_or_default();
    check["status"] == "not_applicable"
        && (message.starts_with("a stdio rule") || message.starts_with("a Streamable HTTP rule"))
}

/// Compares a run with the expectations; every difference is reported at once.
fn verify(name: &str, run: &Run, expected: &Expected) {
    let report = run.report();
    let summary = run.file("summary.md");
    let mut problems = Vec::new();
    if report["server"]["era"] != expected.era {
        problems.push(format!("era {} (expected {})", report["server"]["era"], expected.era));
    }
    if run.code() != expected.exit {
        problems.push(format!("exit code {} (expected {})", run.code(), expected.exit));
    }
    let legacy = expected.era == "2025-11-25";
    let mut not_passing = Vec::new();
    let mut migration = Vec::new();
    for check in report["checks"].as_array().expect("checks") {
        let id = check["id"].as_str().unwrap_or_default();
        let status = check["status"].as_str().unwrap_or_default();
        let message = check["message"].as_str().unwrap_or_default();
        if legacy && check["level"] == "INFO" && id != "ERA" {
            // A 2026-07-28 row of a legacy server: listed, never graded.
            if status != "not_applicable" || !message.starts_with("2026-07-28 ") {
                problems.push(format!(
                    "{id}: a 2026-07-28 row of a legacy server must be INFO not_applicable, got {status}: {message}"
                ));
            }
            if message.starts_with("2026-07-28 migration") {
                migration.push(id.to_owned());
            }
            continue;
        }
        if status == "pass" || other_transport(check) {
            continue;
        }
        not_passing.push((id.to_owned(), status.to_owned()));
        if matches!(status, "fail" | "warn") && id != "ERA" {
            // Evidence of a finding shows what was sent and what came back.
            let labels: Vec<&str> =
                check["evidence"].as_array().into_iter().flatten().filter_map(|item| item["label"].as_str()).collect();
            if !(labels.contains(&"request") && labels.contains(&"response")) {
                problems.push(format!("{id}: evidence lacks the request or the response: {labels:?}"));
            }
            if !summary.contains(id) {
                problems.push(format!("{id}: not in summary.md"));
            }
        }
    }
    let expected_not_passing: Vec<(String, String)> =
        expected.not_passing.iter().map(|(id, status)| ((*id).to_owned(), (*status).to_owned())).collect();
    if not_passing != expected_not_passing {
        problems.push(format!("non-passing rows\n  got      {not_passing:?}\n  expected {expected_not_passing:?}"));
    }
    for id in expected.passing {
        if run.status(id) != "pass" {
            problems.push(format!("{id}: {} ({}) (expected pass)", run.status(id), run.check(id)["message"]));
        }
    }
    if migration != expected.migration {
        problems.push(format!("migration rows\n  got      {migration:?}\n  expected {:?}", expected.migration));
    }
    assert!(problems.is_empty(), "{name}:\n- {}\n\nsummary.md:\n{summary}", problems.join("\n- "));
}

/// Rows no probe can reach on these servers (no fixture tools, no input_required, no OAuth, no
/// tasks extension): the same on every modern server below.
const NOT_REACHABLE: [(&str, &str); 8] = [
    ("M-5", "not_applicable"),
    ("E-2", "not_applicable"),
    ("R-3", "not_applicable"),
    ("R-4", "not_applicable"),
    ("R-5", "not_applicable"),
    ("R-6", "not_applicable"),
    ("R-7", "not_applicable"),
    ("R-8", "not_applicable"),
];

#[test]
fn py_time_over_http() {
    let server = HttpServer::start("py-time-http");
    let config = time_config();
    let run = run(&["--server-url", &server.url, "--config", config.path().to_str().expect("utf-8")]);
    verify(
        "py-time-http",
        &run,
        &Expected {
            era: "2026-07-28",
            exit: 0,
            not_passing: &[
                ("D-6", "not_applicable"), // completions not advertised
                NOT_REACHABLE[0],
                ("H-11", "not_applicable"), // no x-mcp-header
                ("H-15", "not_applicable"), // no SSE on the modern path
                ("H-16", "not_applicable"),
                ("H-17", "not_applicable"),
                // GET/DELETE without the version header → 400 (+ a minted session), SHOULD 405.
                ("H-18", "warn"),
                // The H-2 reply minted an Mcp-Session-Id for a request in the 2026-07-28 envelope.
                ("H-19", "warn"),
                NOT_REACHABLE[1],
                ("E-4", "warn"), // unknown prompt → -32603 "Internal server error", SHOULD -32602
                ("E-5", "warn"), // garbage cursor accepted, SHOULD -32602
                NOT_REACHABLE[2],
                NOT_REACHABLE[3],
                NOT_REACHABLE[4],
                NOT_REACHABLE[5],
                NOT_REACHABLE[6],
                NOT_REACHABLE[7],
                ("R-9", "not_applicable"),
                ("R-10", "not_applicable"),
                ("C-4", "not_applicable"), // every list fits on one page: nothing to compare
                ("P-4", "not_applicable"), // no resources or prompts listed
                ("P-5", "not_applicable"),
                ("P-6", "not_applicable"),
                ("S-1", "not_applicable"), // no listChanged/subscribe; listen → -32601
                ("S-2", "not_applicable"),
                ("S-3", "not_applicable"),
                ("S-4", "not_applicable"),
                ("S-5", "not_applicable"),
                ("S-6", "not_applicable"),
                ("L-2", "not_applicable"),
                ("L-3", "not_applicable"),
                ("A-1", "not_applicable"), // open server
                ("A-2", "not_applicable"),
                ("A-3", "not_applicable"),
                ("A-4", "not_applicable"),
                ("A-5", "not_applicable"),
                ("A-6", "not_applicable"),
                ("K-1", "not_applicable"), // no tasks extension
                ("K-2", "not_applicable"),
                ("K-3", "not_applicable"),
                ("K-4", "not_applicable"),
            ],
            passing: &[
                // H-2: no MCP-Protocol-Version → 400 -32600 "Missing session ID", the 2025-era answer of a
                // dual-era server that takes the header-less request as 2025-03-26 (a MAY; issue 7
                // §6 — this row was a failure before).
                "D-1", "D-2", "D-3", "D-4", "M-1", "M-2", "M-3", "M-4", "M-10", "M-11", "M-12", "V-1", "H-1", "H-2",
                "H-3", "H-5", "H-7", "H-8", "H-9", "H-10", "H-13", "H-21", "H-22", "H-24", "H-25", "E-1", "E-3", "E-6",
                "E-7", "E-8", "C-1", "P-1", "T-2", "T-5", "T-6", "T-7", "B-4",
                // Invalid arguments to get_current_time: -32602 for a JSON string, isError for a
                // missing or mistyped `timezone`; the server kept serving.
                "H-27", "E-9",
            ],
            migration: &[],
        },
    );
}

#[test]
fn without_safe_tools_h27_names_the_arguments_it_sent_and_the_fix() {
    // Without the config file our generated `timezone` is refused with `isError: true`: H-27
    // cannot be graded, and the row says what was sent and where to give arguments that work.
    let server = HttpServer::start("py-time-http");
    let run = run(&["--server-url", &server.url]);
    assert_eq!(run.status("H-27"), "not_applicable");
    let message = run.check("H-27")["message"].as_str().unwrap_or_default().to_owned();
    assert!(message.contains("`get_current_time` with arguments `{\"timezone\":"), "{message}");
    assert!(message.contains("`isError: true`") && message.contains("`safe_tools`"), "{message}");
    assert!(
        run.check("H-27")["evidence"].as_array().is_some_and(|evidence| !evidence.is_empty()),
        "the call is the evidence"
    );
}

/// The Python SDK's stdio server fails M-10 (its -32022 lacks `data.requested`): a team that
/// cannot fix the SDK waives the row with a reason, and the run passes with the row shown as
/// waived, with the reason, in every report; an unmatched waiver is a warning naming its line.
#[test]
fn a_waived_upstream_sdk_finding_passes_the_run_and_every_report_shows_the_reason() {
    let command = stdio_command("py-time-stdio");
    let failing = run(&["--server-cmd", &command, "--layers", "0"]);
    assert_eq!((failing.status("M-10"), failing.code()), ("fail".to_owned(), 1), "M-10 fails on mcp 2.3.0");

    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("mcp-eval.yaml");
    std::fs::write(
        &config,
        "waivers:\n  - rule: M-10\n    probe: X-5\n    reason: the Python SDK's -32022 lacks data.requested, reported upstream\n    expires: 2099-12-31\n  - rule: H-4\n    reason: not an HTTP server\n",
    )
    .expect("write the config");
    let sarif = dir.path().join("out.sarif");
    let waived = run(&[
        "--server-cmd",
        &command,
        "--layers",
        "0",
        "--config",
        config.to_str().expect("utf-8"),
        "--sarif",
        sarif.to_str().expect("utf-8"),
    ]);
    let reason = "the Python SDK's -32022 lacks data.requested, reported upstream";
    assert_eq!(waived.code(), 0, "a waived failure does not fail the run: {}", waived.stderr());
    let report = waived.report();
    assert_eq!((report["verdict"].as_str(), report["format_version"].as_u64()), (Some("pass"), Some(2)));
    assert_eq!(report["counts"]["waived"], 1);
    let row = waived.check("M-10");
    assert_eq!(row["status"], "waived");
    assert_eq!(row["waiver"]["reason"], reason);
    assert_eq!(row["waiver"]["status"], "fail");
    assert_eq!(row["waiver"]["expires"], "2099-12-31");
    assert!(row["waiver"]["source"].as_str().is_some_and(|source| source.ends_with("mcp-eval.yaml:2")), "{row}");
    assert!(row["message"].as_str().is_some_and(|message| message.contains("data.requested")), "the finding is kept");

    let summary = waived.file("summary.md");
    assert!(summary.contains("### 🙈 Waived (1)"), "{summary}");
    assert!(summary.contains("| M-10 |") && summary.contains("🙈 waived"), "{summary}");
    assert!(summary.contains(reason), "{summary}");
    assert!(summary.contains("mcp-eval.yaml:6: the waiver of H-4 matches nothing"), "{summary}");
    let notes = report["waiver_notes"].as_array().map(Vec::len);
    assert_eq!(notes, Some(1), "{}", report["waiver_notes"]);

    let junit = waived.file("junit.xml");
    assert!(
        junit.contains("<skipped message=\"waived (would fail): the Python SDK&apos;s -32022 lacks data.requested, reported upstream"),
        "{junit}"
    );

    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).expect("the SARIF file")).expect("SARIF is JSON");
    let results = sarif["runs"][0]["results"].as_array().cloned().unwrap_or_default();
    let m10 = results.iter().find(|result| result["ruleId"] == "M-10").expect("the waived row is a result");
    assert_eq!(m10["suppressions"], serde_json::json!([{"kind": "external", "justification": reason}]));
}

#[test]
fn py_time_over_stdio() {
    let config = time_config();
    let run =
        run(&["--server-cmd", &stdio_command("py-time-stdio"), "--config", config.path().to_str().expect("utf-8")]);
    verify(
        "py-time-stdio",
        &run,
        &Expected {
            era: "2026-07-28",
            exit: 1,
            not_passing: &[
                ("D-6", "not_applicable"),
                NOT_REACHABLE[0],
                // `initialize` as a 2026-07-28 request on a modern connection → -32022 whose
                // `data` lacks the `requested` the schema requires.
                ("M-10", "fail"),
                NOT_REACHABLE[1],
                ("E-4", "warn"),
                ("E-5", "warn"),
                NOT_REACHABLE[2],
                NOT_REACHABLE[3],
                NOT_REACHABLE[4],
                NOT_REACHABLE[5],
                NOT_REACHABLE[6],
                NOT_REACHABLE[7],
                ("R-9", "not_applicable"),
                ("R-10", "not_applicable"),
                ("C-4", "not_applicable"), // every list fits on one page: nothing to compare
                ("P-4", "not_applicable"),
                ("P-5", "not_applicable"),
                ("P-6", "not_applicable"),
                ("S-1", "not_applicable"),
                ("S-2", "not_applicable"),
                ("S-3", "not_applicable"),
                ("S-4", "not_applicable"),
                ("S-5", "not_applicable"),
                ("S-6", "not_applicable"),
                ("L-2", "not_applicable"),
                ("L-3", "not_applicable"),
                ("X-3", "not_applicable"), // no long-running read-only tool
                ("K-1", "not_applicable"),
                ("K-2", "not_applicable"),
                ("K-3", "not_applicable"),
            ],
            passing: &[
                "D-1", "D-2", "D-3", "M-1", "M-2", "M-3", "M-4", "M-11", "M-12", "V-1", "E-1", "E-3", "E-6", "E-9",
                "C-1", "P-1", "P-3", "T-5", "T-6", "T-7", "X-1", "X-2", "X-4",
                // ping → -32601; `initialize` → -32022 naming the supported versions (§17.4).
                "X-5", "X-6", "X-7",
            ],
            migration: &[],
        },
    );
    assert!(run.check("X-5")["message"].as_str().unwrap_or_default().contains("-32022"));
    // E-9 and X-6 were graded on invalid arguments to get_current_time too, not only on their
    // method-level probes.
    assert!(run.check("E-9")["message"].as_str().unwrap_or_default().contains("invalid tool arguments were refused"));
    assert!(
        run.check("X-6")["message"].as_str().unwrap_or_default().contains("kept serving after invalid tool arguments")
    );
}

#[test]
fn mcp_proxy_in_front_of_everything() {
    let server = HttpServer::start("ts-proxy-everything");
    let run = run(&["--server-url", &server.url]);
    verify(
        "ts-proxy-everything",
        &run,
        &Expected {
            era: "2026-07-28",
            exit: 1,
            not_passing: &[
                NOT_REACHABLE[0],
                ("H-2", "fail"),            // no MCP-Protocol-Version → 200 result (MUST 400 + -32020)
                ("H-11", "not_applicable"), // no x-mcp-header
                ("H-16", "not_applicable"), // SSE only on the listen stream, which stays open by design
                ("H-18", "warn"),           // GET/DELETE → 400 plain text, SHOULD 405
                ("H-21", "fail"),           // Origin http://evil.example → 200 (MUST 403)
                ("H-26", "warn"),           // INFO hint: foreign Host accepted
                ("E-1", "warn"),            // -32602 without data.uri (SHOULD)
                NOT_REACHABLE[1],
                ("E-3", "warn"), // unknown tool → isError result, SHOULD be -32602
                ("E-5", "warn"),
                ("E-7", "warn"), // refused, but -32000 instead of -32600
                ("E-8", "warn"), // refused, but -32000 instead of -32700
                ("E-9", "warn"), // resources/read without uri, prompts/get without name → -32603
                NOT_REACHABLE[2],
                NOT_REACHABLE[3],
                NOT_REACHABLE[4],
                NOT_REACHABLE[5],
                NOT_REACHABLE[6],
                NOT_REACHABLE[7],
                ("R-9", "not_applicable"),
                ("R-10", "not_applicable"),
                ("C-4", "not_applicable"), // every list fits on one page: nothing to compare
                ("S-3", "not_applicable"),
                ("S-5", "not_applicable"),
                ("S-6", "not_applicable"),
                ("L-2", "not_applicable"),
                ("L-3", "not_applicable"),
                ("A-1", "not_applicable"),
                ("A-2", "not_applicable"),
                ("A-3", "not_applicable"),
                ("A-4", "not_applicable"),
                ("A-5", "not_applicable"),
                ("A-6", "not_applicable"),
                ("K-1", "not_applicable"),
                ("K-2", "not_applicable"),
                ("K-3", "not_applicable"),
                ("K-4", "not_applicable"),
            ],
            passing: &[
                "D-1", "D-2", "D-3", "D-4", "D-6", "M-1", "M-2", "M-3", "M-4", "M-10", "M-11", "V-1", "H-1", "H-3",
                "H-4", "H-5", "H-6", "H-7", "H-8", "H-9", "H-10", "H-13", "H-14", "H-15", "H-17", "H-19", "H-22",
                "H-24", "H-25", "E-4", "E-6", "C-1", "P-1", "P-4", "P-5", "P-6", "T-2", "T-5", "T-6", "T-7", "S-1",
                "S-2", "S-4", "B-4", "H-27",
            ],
            migration: &[],
        },
    );
    // The H-21 finding names its probe and, for the SDK this is, the fix.
    let h21 = run.check("H-21")["message"].as_str().unwrap_or_default().to_owned();
    assert!(h21.starts_with("H-21's probe") && h21.contains("TypeScript SDK v2"), "{h21}");
}

/// The 2026-07-28 rows every legacy server below fails the same way (discover-based probes).
const LEGACY_ENVELOPE: [&str; 7] = ["M-1", "M-2", "M-3", "M-4", "M-9", "M-13", "V-1"];

#[test]
fn everything_over_http_is_legacy() {
    let server = HttpServer::start("ts-everything-http");
    let run = run(&["--server-url", &server.url]);
    verify(
        "ts-everything-http",
        &run,
        &Expected {
            era: "2025-11-25",
            // H-21 is a MUST in 2025-11-25 too: a session request with a foreign Origin → 200.
            exit: 1,
            not_passing: &[
                ("H-21", "fail"),
                ("E-3", "warn"), // unknown tool → isError result
                ("E-5", "warn"),
                ("E-7", "warn"), // -32700 instead of -32600
                ("L-3", "not_applicable"),
                ("ERA", "warn"),
            ],
            passing: &[
                "M-6", "M-11", "M-12", "H-14", "H-15", "E-4", "E-8", "P-1", "P-4", "P-5", "T-2", "T-5", "T-7", "H-27",
            ],
            migration: &[
                "D-1", // server/discover is not implemented (the migration starts here)
                "D-6",
                LEGACY_ENVELOPE[0],
                LEGACY_ENVELOPE[1],
                LEGACY_ENVELOPE[2],
                LEGACY_ENVELOPE[3],
                LEGACY_ENVELOPE[4],
                LEGACY_ENVELOPE[5],
                LEGACY_ENVELOPE[6],
                "H-1",
                "H-2",
                "H-3",
                "H-4",
                "H-5",
                "H-6",
                "H-7",
                "H-8",
                "H-9",
                "H-13",
                "H-18",
                "H-19",
                "H-20",
                "H-25",
                "E-1",
                "P-3",
                "S-1",
            ],
        },
    );
}

#[test]
fn everything_over_stdio_is_legacy() {
    let run = run(&["--server-cmd", &stdio_command("ts-everything-stdio")]);
    verify(
        "ts-everything-stdio",
        &run,
        &Expected {
            era: "2025-11-25",
            exit: 0,
            not_passing: &[("E-3", "warn"), ("E-5", "warn"), ("L-3", "not_applicable"), ("ERA", "warn")],
            passing: &[
                "M-6", "M-11", "M-12", "E-4", "P-1", "P-4", "P-5", "T-5", "T-7", "X-1", "X-2", "X-4", "X-6", "X-7",
            ],
            migration: &[
                "D-1", // server/discover is not implemented (the migration starts here)
                "D-3",
                LEGACY_ENVELOPE[0],
                LEGACY_ENVELOPE[1],
                LEGACY_ENVELOPE[2],
                LEGACY_ENVELOPE[3],
                "M-7",
                LEGACY_ENVELOPE[4],
                LEGACY_ENVELOPE[5],
                LEGACY_ENVELOPE[6],
                "E-1",
                // 13 tools after initialize, 12 on a process that was never initialized.
                "P-3",
                "S-1",
            ],
        },
    );
}

#[test]
fn v2_basic_over_http_is_legacy() {
    let server = HttpServer::start("ts-v2-basic-http");
    let run = run(&["--server-url", &server.url]);
    let h27 = run.check("H-27")["message"].as_str().unwrap_or_default().to_owned();
    assert!(h27.contains("no tool is annotated readOnlyHint or listed in safe_tools"), "no evidence, no pass: {h27}");
    verify(
        "ts-v2-basic-http",
        &run,
        &Expected {
            era: "2025-11-25",
            exit: 1,
            not_passing: &[
                ("H-21", "fail"),           // foreign Origin served (no Origin or Host validation)
                ("H-27", "not_applicable"), // get-time has no readOnlyHint: no invalid arguments sent
                ("E-4", "not_applicable"),  // prompts not advertised
                ("E-5", "warn"),
                ("E-7", "warn"), // -32700 instead of -32600
                ("E-8", "warn"), // an HTML error page (with a stack trace)
                ("P-5", "not_applicable"),
                ("T-5", "not_applicable"), // get-time has no readOnlyHint: never called
                ("T-6", "not_applicable"),
                ("T-7", "not_applicable"),
                ("L-3", "not_applicable"),
                ("ERA", "warn"),
            ],
            passing: &["M-6", "M-11", "M-12", "H-14", "H-15", "E-3", "P-1", "P-4", "P-6", "T-1", "T-2"],
            migration: &[
                "D-1", // server/discover is not implemented (the migration starts here)
                "D-4",
                LEGACY_ENVELOPE[0],
                LEGACY_ENVELOPE[1],
                LEGACY_ENVELOPE[2],
                LEGACY_ENVELOPE[3],
                LEGACY_ENVELOPE[4],
                LEGACY_ENVELOPE[5],
                LEGACY_ENVELOPE[6],
                "H-1",
                "H-3",
                "H-4",
                "H-5",
                "H-6",
                "H-7",
                "H-8",
                "H-9",
                "H-13",
                "H-18",
                "H-19",
                "H-20",
                "H-25",
                "P-3",
                "S-1",
            ],
        },
    );
}

const V2_BASIC_STDIO: Expected = Expected {
    era: "2025-11-25",
    exit: 0,
    not_passing: &[
        ("E-4", "not_applicable"),
        ("E-5", "warn"),
        ("P-5", "not_applicable"),
        ("T-5", "not_applicable"),
        ("T-6", "not_applicable"),
        ("T-7", "not_applicable"),
        ("L-3", "not_applicable"),
        ("ERA", "warn"),
    ],
    passing: &["M-6", "M-11", "M-12", "E-3", "P-1", "P-4", "T-1", "T-2", "X-1", "X-2", "X-4", "X-6", "X-7"],
    migration: &[
        "D-1", // server/discover is not implemented (the migration starts here)
        LEGACY_ENVELOPE[0],
        LEGACY_ENVELOPE[1],
        LEGACY_ENVELOPE[2],
        LEGACY_ENVELOPE[3],
        LEGACY_ENVELOPE[4],
        LEGACY_ENVELOPE[5],
        LEGACY_ENVELOPE[6],
        "S-1",
    ],
};

#[test]
fn v2_basic_over_stdio_is_legacy() {
    let run = run(&["--server-cmd", &stdio_command("ts-v2-basic-stdio")]);
    verify("ts-v2-basic-stdio", &run, &V2_BASIC_STDIO);
}

#[test]
fn a_legacy_server_fails_when_the_modern_era_is_required() {
    let run = run(&["--server-cmd", &stdio_command("ts-v2-basic-stdio"), "--require-era", "2026-07-28"]);
    assert_eq!(run.code(), 1, "{}", run.file("summary.md"));
    assert_eq!(run.report()["server"]["era"], "2025-11-25");
    assert_eq!(run.status("ERA"), "fail");
    assert_eq!(run.check("ERA")["level"], "MUST");
    // Nothing else changes: the era-independent rows are graded as without the flag.
    assert_eq!(run.status("E-5"), "warn");
    assert_eq!(run.status("X-4"), "pass");
}
