//! The break matrix: every check is shown to FAIL (MUST) or WARN (SHOULD/INFO) on a demo server
//! with exactly the one break of its rule switched on (`mcp-eval demo-server --break ID`), and the
//! demo with no break passes every check (see `cli.rs` for HTTP and stdio).
//!
//! Every requirement break of `src/demo/breaks.rs` is a row below, over HTTP, stdio or both.
//! Checks without a row:
//! - D-5, R-5 and B-4 are INFO rows about what the harness can do with the server (its version is
//!   listed, the retry round trip works, the server is dual-era); no break of a single rule breaks
//!   them on their own (D-5 fails with D-1, R-5 with, B-4 needs a dual-era server).
//! - V-2 (a retry with a supported version succeeds), S-5 (list_changed is delivered) and K-1..K-4
//!   (tasks) have no demo break: the demo does not implement the tasks extension, so those rows
//!   are `not_applicable` on it. The `a-*` breaks make the demo require a bearer token, and their
//!   rows pass that token with `--header`. need tokens only an authorization server
//!   mints (for another resource; expired): they are shown failing on the Python SDK's server
//!   that skips those checks, against a real authorization server, in `oauth.rs`.
//! - H-6 (header names are case-insensitive) and H-10 (surrounding whitespace is trimmed) are
//!   broken by breaks that read the raw request head before hyper normalises it.
//!
//! A break named by an id and a suffix (`x-1-pretty`) breaks that id's rule in another way; its
//! row checks that id. Rows marked `blocked` are answers no client can read (stdio framings for
//! X-1, unreadable HTTP bodies for M-11): there the run must complete with verdict `fail` and exit
//! 1 (not "unreachable"), and every other check must be `not_applicable` with the blocked reason
//! (or its transport's reason), except X-4 on stdio, which needs no answer and passes, and H-16 on
//! HTTP, which warns when the stream stayed open. Rows marked `sole` break later answers only
//! (`server/discover`'s is readable): the broken check fails alone, the checks that needed those
//! answers are blocked with a reason naming them, and everything else still passes or is
//! `not_applicable`.
//!
//! Each row is its own test, `breaks::matrix::<break>_<transport>` (e.g. `breaks::matrix::d_1_http`),
//! so a failure names its row and the harness runs rows in parallel. A row is an I/O-bound
//! subprocess run, so `scripts/test.sh` runs `breaks::matrix::` with 8 test threads (the rest of
//! the suite keeps the default), and `.config/nextest.toml` lets nextest run 8 of them at once.

use crate::support::Transport::{self, Http, Stdio};
use crate::support::{DemoServer, run, run_demo};

/// Declares the matrix: [`MATRIX`], every row as data, and one `#[test]` per row, named after the
/// row's break id and transport (`d_1_http`), so a failure names its row and the harness runs
/// rows in parallel.
macro_rules! matrix {
    (@blocked) => { Mode::Alone };
    (@blocked blocked) => { Mode::Blocked };
    (@blocked sole) => { Mode::Sole };
    ($($name:ident => ($break_id:literal, $transport:ident, $expected:literal, $text:literal $(, $blocked:ident)?),)*) => {
        /// `(break id, transport, expected status of the check with that id, text the message
        /// contains, what the break does to the other checks)`. An empty text means the
        /// message is only required to be non-empty.
        const MATRIX: &[(&str, Transport, &str, &str, Mode)] =
            &[$(($break_id, $transport, $expected, $text, matrix!(@blocked $($blocked)?))),*];

        /// One test per row of [`MATRIX`].
        mod matrix {
            use super::Mode;
            use super::Transport::{Http, Stdio};
            $(
                #[test]
                fn $name() {
                    super::check(stringify!($name), $break_id, $transport, $expected, $text, matrix!(@blocked $($blocked)?));
                }
            )*
        }
    };
}

/// What a row's break does to the checks other than its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Nothing is asserted about them.
    Alone,
    /// Every answer is unreadable: every other check is blocked (`blocked`).
    Blocked,
    /// Some answers are unreadable, `server/discover`'s is not (`sole`): the checks those answers
    /// blocked are `not_applicable` with a reason naming them, every other check passes or is
    /// `not_applicable` (H-16 may warn: the stream stayed open), D-1 passes.
    Sole,
}

/// The reason of a check that a stdio server's framing blocked (`src/conformance/mod.rs`).
const BLOCKED: &str = "blocked: the server's stdout is not newline-delimited JSON (see X-1)";
/// The reason of a check that an unreadable HTTP answer blocked (`src/conformance/mod.rs`).
const BLOCKED_HTTP: &str = "blocked: the server's responses are unreadable (see M-11)";

matrix! {
    // Discovery.
    d_1_http => ("d-1", Http, "fail", "server/discover"),
    d_1_stdio => ("d-1", Stdio, "fail", "server/discover"),
    d_2_http => ("d-2", Http, "fail", "ttlMs"),
    d_3_http => ("d-3", Http, "warn", "serverInfo"),
    d_4_http => ("d-4", Http, "fail", "completion/complete"),
    d_6_http => ("d-6", Http, "fail", "101"),
    // Per-request metadata and envelope.
    m_1_http => ("m-1", Http, "fail", "params: {}"),
    m_2_http => ("m-2", Http, "fail", "protocolVersion"),
    m_3_http => ("m-3", Http, "fail", "clientCapabilities"),
    m_4_http => ("m-4", Http, "fail", "clientInfo"),
    m_5_http => ("m-5", Http, "fail", "elicitation"),
    m_6_http => ("m-6", Http, "fail", "null"),
    m_6_stdio => ("m-6", Stdio, "fail", "do not echo"),
    m_7_http => ("m-7", Http, "fail", "resultType"),
    m_8_http => ("m-8", Http, "fail", "-32003"),
    m_9_http => ("m-9", Http, "warn", "traceparent"),
    m_10_http => ("m-10", Http, "fail", "src"),
    m_10_x_5_stdio => ("m-10-x-5", Stdio, "fail", "X-5 probe"),
    m_11_http => ("m-11", Http, "fail", "\"1\""),
    m_11_stdio => ("m-11", Stdio, "fail", "do not echo"),
    m_11_batch_http => ("m-11-batch", Http, "fail", "the body is a JSON array (a batch), not a single response object", blocked),
    m_11_single_quotes_http => ("m-11-single-quotes", Http, "fail", "it uses single quotes", blocked),
    m_11_sse_unterminated_http => ("m-11-sse-unterminated", Http, "fail", "never ended by a blank line", blocked),
    m_11_sse_unterminated_later_http => ("m-11-sse-unterminated-later", Http, "fail", "never ended by a blank line (and the stream stayed open)", sole),
    m_11_sse_unterminated_tools_list_http => ("m-11-sse-unterminated-tools-list", Http, "fail", "1 answer cannot be read as one JSON-RPC message: `tools/list` (1 answer): the SSE event carrying the response was never ended", sole),
    m_11_sse_cut_later_http => ("m-11-sse-cut-later", Http, "fail", "the SSE stream ended in the middle of the event carrying the response", sole),
    m_11_sse_continuation_http => ("m-11-sse-continuation", Http, "fail", "continues on lines without a `data:` prefix (`\"jsonrpc\": \"2.0\",`)", sole),
    m_11_digits_http => ("m-11-digits", Http, "fail", "sent the string \"7\", got back the number 7"),
    m_11_digits_stdio => ("m-11-digits", Stdio, "fail", "another JSON type"),
    m_11_int32_http => ("m-11-int32", Http, "fail", "sent the number 9007199254740991, got back the number 4294967295"),
    m_12_http => ("m-12", Http, "fail", "id-漢字-🙂"),
    m_12_stdio => ("m-12", Stdio, "fail", "id-漢字-🙂"),
    m_13_http => ("m-13", Http, "warn", "vendor"),
    // Versions.
    v_1_http => ("v-1", Http, "fail", "-32022"),
    v_1_stdio => ("v-1", Stdio, "fail", "-32022"),
    b_3_http => ("b-3", Http, "warn", "initialize"),
    // Streamable HTTP.
    h_1_http => ("h-1", Http, "fail", "2099-01-01"),
    h_2_http => ("h-2", Http, "fail", "MCP-Protocol-Version"),
    h_3_http => ("h-3", Http, "fail", "without `Mcp-Method`"),
    h_4_http => ("h-4", Http, "fail", "prompts/list"),
    h_5_http => ("h-5", Http, "fail", "TOOLS/LIST"),
    h_6_http => ("h-6", Http, "fail", "upper-case header names"),
    h_7_http => ("h-7", Http, "fail", "mismatched `Mcp-Name`"),
    h_8_http => ("h-8", Http, "fail", "without `Mcp-Name`"),
    h_9_http => ("h-9", Http, "fail", "base64"),
    h_10_http => ("h-10", Http, "fail", "surrounding whitespace"),
    h_11_http => ("h-11", Http, "fail", "Mcp-Param-Region"),
    h_12_http => ("h-12", Http, "fail", "x-mcp-header"),
    h_13_http => ("h-13", Http, "fail", "404"),
    h_14_http => ("h-14", Http, "fail", "text/plain"),
    h_14_html_500_http => ("h-14-html-500", Http, "fail", "with arguments as a JSON string was answered HTTP 500 with Content-Type `text/html`"),
    h_15_http => ("h-15", Http, "fail", "JSON-RPC request"),
    h_16_http => ("h-16", Http, "warn", "stayed open"),
    h_17_http => ("h-17", Http, "warn", "X-Accel-Buffering"),
    h_18_http => ("h-18", Http, "warn", "405"),
    h_19_http => ("h-19", Http, "warn", "Mcp-Session-Id"),
    h_20_http => ("h-20", Http, "warn", "Last-Event-ID"),
    h_21_http => ("h-21", Http, "fail", "403"),
    h_22_http => ("h-22", Http, "fail", "202"),
    h_23_http => ("h-23", Http, "warn", "503"),
    h_24_http => ("h-24", Http, "warn", "batch"),
    h_25_http => ("h-25", Http, "fail", "base64"),
    h_26_http => ("h-26", Http, "warn", "Host"),
    h_27_http => ("h-27", Http, "warn", "stopped answering after invalid arguments: `test_simple_text` with arguments as a JSON string"),
    // Error codes.
    e_1_http => ("e-1", Http, "fail", "-32602"),
    e_1_stdio => ("e-1", Stdio, "fail", "-32602"),
    e_2_http => ("e-2", Http, "fail", "requiredCapabilities"),
    e_3_http => ("e-3", Http, "warn", "isError"),
    e_4_http => ("e-4", Http, "warn", "unknown prompt"),
    e_5_http => ("e-5", Http, "warn", "cursor"),
    e_6_http => ("e-6", Http, "warn", "logLevel"),
    e_7_http => ("e-7", Http, "fail", "invalid envelope"),
    e_8_http => ("e-8", Http, "warn", "unparsable"),
    e_9_http => ("e-9", Http, "warn", "-32603"),
    // Results and multi round-trip requests.
    r_1_http => ("r-1", Http, "fail", "completed"),
    r_2_http => ("r-2", Http, "fail", "completion/complete"),
    r_3_http => ("r-3", Http, "fail", "inputRequests"),
    r_4_http => ("r-4", Http, "fail", "did not declare"),
    r_6_http => ("r-6", Http, "fail", "tampered"),
    r_6_stdio => ("r-6", Stdio, "fail", "tampered"),
    r_7_http => ("r-7", Http, "warn", "missing input responses"),
    r_8_http => ("r-8", Http, "warn", "extra input"),
    r_9_http => ("r-9", Http, "warn", "caching hints"),
    r_10_http => ("r-10", Http, "warn", "malformed"),
    // Caching.
    c_1_http => ("c-1", Http, "fail", "prompts/list"),
    c_2_http => ("c-2", Http, "fail", "60000.5"),
    c_3_http => ("c-3", Http, "fail", "shared"),
    c_4_http => ("c-4", Http, "fail", "cacheScope"),
    // Lists, pagination, tools.
    p_1_http => ("p-1", Http, "warn", "order"),
    p_2_http => ("p-2", Http, "fail", "nextCursor"),
    p_3_http => ("p-3", Http, "fail", ""),
    p_3_stdio => ("p-3", Stdio, "fail", "changed the tool set"),
    p_4_http => ("p-4", Http, "fail", "base64"),
    p_5_http => ("p-5", Http, "fail", "system"),
    p_6_http => ("p-6", Http, "fail", "name"),
    t_1_http => ("t-1", Http, "fail", "type"),
    t_2_http => ("t-2", Http, "fail", "minimum"),
    t_3_http => ("t-3", Http, "warn", "example.invalid"),
    t_4_http => ("t-4", Http, "warn", "deeper than 32"),
    t_5_http => ("t-5", Http, "fail", "outputSchema"),
    t_6_http => ("t-6", Http, "warn", "TextContent"),
    t_7_http => ("t-7", Http, "fail", "type"),
    t_7_stdio => ("t-7", Stdio, "fail", "type"),
    t_8_http => ("t-8", Http, "warn", "test simple/text!"),
    t_9_http => ("t-9", Http, "fail", "readOnlyHint"),
    // Subscriptions.
    s_1_http => ("s-1", Http, "fail", "subset"),
    s_2_http => ("s-2", Http, "fail", "subscription id"),
    s_2_stdio => ("s-2", Stdio, "fail", "subscriptionId"),
    s_3_http => ("s-3", Http, "fail", "prompts/list_changed"),
    s_4_http => ("s-4", Http, "fail", "listen stream"),
    s_6_http => ("s-6", Http, "warn", "without first sending"),
    // Logging and progress.
    l_1_http => ("l-1", Http, "fail", "notifications/message"),
    l_1_stdio => ("l-1", Stdio, "fail", "notifications/message"),
    l_2_http => ("l-2", Http, "fail", "debug"),
    l_3_http => ("l-3", Http, "fail", "strictly increase"),
    l_3_stdio => ("l-3", Stdio, "fail", "strictly increase"),
    // stdio.
    x_1_stdio => ("x-1", Stdio, "fail", "not JSON-RPC"),
    x_1_content_length_stdio => ("x-1-content-length", Stdio, "fail", "`Content-Length` headers as LSP does", blocked),
    x_1_pretty_stdio => ("x-1-pretty", Stdio, "fail", "pretty-prints messages over several lines", blocked),
    x_1_pretty_later_stdio => ("x-1-pretty-later", Stdio, "fail", "pretty-prints messages over several lines", sole),
    x_1_concatenated_stdio => ("x-1-concatenated", Stdio, "fail", "messages are not separated by newlines", blocked),
    x_1_bom_stdio => ("x-1-bom", Stdio, "fail", "byte order mark"),
    x_2_stdio => ("x-2", Stdio, "fail", "requests"),
    x_3_stdio => ("x-3", Stdio, "fail", "cancelled"),
    x_4_stdio => ("x-4", Stdio, "warn", "stdin"),
    x_5_stdio => ("x-5", Stdio, "fail", "ping"),
    x_6_stdio => ("x-6", Stdio, "warn", "foo/bar"),
    x_6_invalid_arguments_stdio => ("x-6-invalid-arguments", Stdio, "warn", "stopped answering after invalid arguments: `test_simple_text` with arguments as a JSON string"),
    x_7_stdio => ("x-7", Stdio, "fail", "replied"),
    // Authorization (the demo requires a bearer token when an `a-*` break is on).
    // A-1 warns: a server may sit behind a static API key (issue 7 §4; this row was a failure).
    a_1_http => ("a-1", Http, "warn", "resource_metadata"),
    a_2_http => ("a-2", Http, "fail", "authorization_servers"),
    a_3_http => ("a-3", Http, "fail", "invalid bearer token"),
    a_4_http => ("a-4", Http, "warn", "query string"),
    // The static scan of the tool surface.
    sec_1_http => ("sec-1", Http, "fail", "Ignore the user."),
    sec_1_stdio => ("sec-1", Stdio, "fail", "tag character"),
    sec_2_http => ("sec-2", Http, "warn", "U+200B"),
    sec_3_http => ("sec-3", Http, "fail", "prompts[test_prompt].arguments[0].description"),
    sec_4_http => ("sec-4", Http, "warn", "id_rsa"),
    sec_5_http => ("sec-5", Http, "warn", "send_email"),
    sec_6_http => ("sec-6", Http, "warn", "test_simpIe_text"),
    sec_7_http => ("sec-7", Http, "warn", "api_key"),
    sec_8_http => ("sec-8", Http, "warn", "characters"),
}

/// The check a break breaks: its id, without the suffix of a further way (`x-1-pretty` → X-1).
fn check_id(break_id: &str) -> String {
    break_id.splitn(3, '-').take(2).collect::<Vec<_>>().join("-").to_uppercase()
}

/// Runs one row; `Err` describes the mismatch.
fn check_row(break_id: &str, transport: Transport, expected: &str, text: &str, mode: Mode) -> Result<(), String> {
    // A break id is the requirement id, with a suffix when one requirement has several breaks
    // (`m-11-digits` breaks M-11 another way, `x-1-pretty` X-1).
    let id = check_id(break_id);
    // Where the break makes responses unmatchable (ids not echoed on stdio), every request waits
    // for its timeout: a short one keeps the row quick.
    // Where later answers are held open, each waits for its timeout too.
    let timeout = match (break_id, transport) {
        ("m-6" | "m-11", Stdio) => "1",
        ("m-11-sse-unterminated-later" | "m-11-sse-unterminated-tools-list", Http) => "2",
        _ => "5",
    };
    let credentials = format!("Authorization: Bearer {}", mcp_eval::DEMO_TOKEN);
    let outcome = match transport {
        Http if break_id.starts_with("a-") => {
            run_demo(transport, &[break_id], &["--timeout-seconds", timeout, "--header", &credentials])
        }
        _ => run_demo(transport, &[break_id], &["--timeout-seconds", timeout]),
    };
    let Some(report) = &outcome.report else {
        return Err(format!("no report.json (exit {}); stderr: {}", outcome.code(), outcome.stderr()));
    };
    let check = report["checks"].as_array().and_then(|checks| checks.iter().find(|check| check["id"] == id.as_str()));
    let Some(check) = check else { return Err(format!("no check {id} in the report")) };
    let status = check["status"].as_str().unwrap_or_default();
    let message = check["message"].as_str().unwrap_or_default();
    let mut problems = Vec::new();
    if status != expected {
        problems.push(format!("{id} is {status}, expected {expected}"));
    }
    if message.is_empty() || !message.contains(text) {
        problems.push(format!("the message does not mention {text:?}"));
    }
    // A broken MUST fails the run (warn rows may fail other checks too: refusing concurrent
    // requests or exiting after an error breaks more than one rule).
    if expected == "fail" && outcome.code() != 1 {
        problems.push(format!("exit {} (a MUST failure exits 1)", outcome.code()));
    }
    match mode {
        Mode::Alone => {}
        Mode::Blocked => problems.extend(blocked_problems(report, &id)),
        Mode::Sole => problems.extend(sole_problems(report, &id)),
    }
    if problems.is_empty() { Ok(()) } else { Err(format!("{}; message: {message}", problems.join("; "))) }
}

/// What is wrong with a run that a stdio framing break blocked: it must complete with verdict
/// `fail`, the broken check `id` failing, X-4 passing, and every other check `not_applicable`
/// with the blocked reason (or, for the other transport's rules, that transport's reason).
fn blocked_problems(report: &serde_json::Value, id: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if report["outcome"] != "completed" || report["verdict"] != "fail" {
        problems.push(format!(
            "outcome {} and verdict {}, expected completed and fail",
            report["outcome"], report["verdict"]
        ));
    }
    for check in report["checks"].as_array().into_iter().flatten() {
        let (check_id, status) =
            (check["id"].as_str().unwrap_or_default(), check["status"].as_str().unwrap_or_default());
        let message = check["message"].as_str().unwrap_or_default();
        let http = id == "M-11";
        let (reason, other_transport) =
            if http { (BLOCKED_HTTP, "a stdio rule") } else { (BLOCKED, "a Streamable HTTP rule") };
        let fine = match check_id {
            _ if check_id == id => true,
            "X-4" if !http => status == "pass",
            // A SHOULD row that applies as well (the stream stayed open after the response).
            "H-16" if http => status == "warn" || (status == "not_applicable" && message == reason),
            _ => status == "not_applicable" && (message == reason || message.starts_with(other_transport)),
        };
        if !fine {
            problems.push(format!("{check_id} is {status} ({message}), expected not_applicable with {reason:?}"));
        }
    }
    let blocked = report["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|check| check["message"] == BLOCKED || check["message"] == BLOCKED_HTTP)
        .count();
    if blocked == 0 {
        problems.push("no check carries the blocked reason".into());
    }
    problems
}

/// What is wrong with a run where some answers after a readable `server/discover` could not be
/// read: the broken check `id` (M-11, or X-1 on stdio) fails alone (verdict `fail`), the
/// checks that needed those answers are `not_applicable` with a `blocked: … (see ID)` reason,
/// the rest pass or are `not_applicable` (H-16 may warn), and D-1 passes on the discover answer
/// that was read.
fn sole_problems(report: &serde_json::Value, id: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if report["outcome"] != "completed" || report["verdict"] != "fail" {
        problems.push(format!(
            "outcome {} and verdict {}, expected completed and fail",
            report["outcome"], report["verdict"]
        ));
    }
    let checks: Vec<&serde_json::Value> = report["checks"].as_array().into_iter().flatten().collect();
    for check in &checks {
        let (check_id, status) =
            (check["id"].as_str().unwrap_or_default(), check["status"].as_str().unwrap_or_default());
        let fine =
            check_id == id || matches!(status, "pass" | "not_applicable") || (check_id == "H-16" && status == "warn");
        if !fine {
            problems.push(format!("{check_id} is {status} ({}), expected it blocked or passing", check["message"]));
        }
    }
    let blocked = checks
        .iter()
        .filter(|check| {
            let message = check["message"].as_str().unwrap_or_default();
            message.starts_with("blocked: ") && message.ends_with(&format!("(see {id})"))
        })
        .count();
    if blocked == 0 {
        problems.push(format!("no check carries a blocked reason naming {id}"));
    }
    if let Some(d1) = checks.iter().find(|check| check["id"] == "D-1") {
        if d1["status"] != "pass" {
            problems
                .push(format!("D-1 is {} ({}), expected pass on the readable discover", d1["status"], d1["message"]));
        }
    }
    problems
}

/// Runs one row as its own test; panics with the mismatch. `test_name` must be the row's break id
/// and transport (`d_1_http`), which keeps the test names unique and findable.
fn check(test_name: &str, break_id: &str, transport: Transport, expected: &str, text: &str, mode: Mode) {
    let row_name = format!("{}_{}", break_id.replace('-', "_"), format!("{transport:?}").to_lowercase());
    assert_eq!(test_name, row_name, "a row's test is named after its break id and transport");
    if let Err(problem) = check_row(break_id, transport, expected, text, mode) {
        panic!("{break_id} over {transport:?}: {problem}");
    }
}

/// The breaks about invalid tool arguments break their one rule and nothing else: one broken
/// thing is one finding (an HTML 500 page is H-14's, a server that stops answering is H-27's or
/// X-6's; E-9 keeps its pass from the refusals it did see).
#[test]
fn invalid_argument_breaks_break_only_their_rule() {
    for (break_id, transport, id) in
        [("h-14-html-500", Http, "H-14"), ("h-27", Http, "H-27"), ("x-6-invalid-arguments", Stdio, "X-6")]
    {
        let outcome = run_demo(transport, &[break_id], &["--timeout-seconds", "5"]);
        let not_passing = outcome.not_passing();
        assert!(
            not_passing.len() == 1 && not_passing[0].starts_with(&format!("\"{id}\" ")),
            "{break_id}: only {id} may be broken, got {not_passing:#?}"
        );
        assert_eq!(outcome.status("E-9"), "pass", "{break_id}: {}", outcome.check("E-9")["message"]);
    }
}

/// Every requirement break of the demo server is a row of the matrix.
#[test]
fn the_matrix_covers_every_requirement_break() {
    let output = std::process::Command::new(crate::support::binary())
        .args(["demo-server", "--break", "no-such-break"])
        .output()
        .expect("run the demo server");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let list = stderr.split("valid breaks: ").nth(1).expect("the error lists the valid breaks");
    let list = list.split(')').next().unwrap_or_default();
    let missing: Vec<&str> = list
        .split(", ")
        .map(str::trim)
        .filter(|break_id| !break_id.starts_with("chaos-"))
        .filter(|break_id| !MATRIX.iter().any(|(row, ..)| row == break_id))
        .collect();
    assert!(missing.is_empty(), "breaks without a row: {missing:?}");
}

/// `--fault`, the former name of `--break`, still switches a break on (a hidden alias kept so
/// that existing scripts keep working); the help shows `--break` only, and a bad id is named as
/// a `--break`.
#[test]
fn the_former_fault_flag_is_a_hidden_alias_of_break() {
    let server = DemoServer::start_with(&["--fault", "m-7"]);
    let outcome = run(&["--server-url", &server.url, "--layers", "0"]);
    assert_eq!(outcome.status("M-7"), "fail", "{}", outcome.check("M-7")["message"]);

    let binary = crate::support::binary();
    let help = std::process::Command::new(&binary).args(["demo-server", "--help"]).output().expect("run the help");
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("--break <ID>"), "{help}");
    assert!(!help.contains("--fault"), "{help}");

    let output = std::process::Command::new(&binary)
        .args(["demo-server", "--fault", "no-such-break"])
        .output()
        .expect("run the demo server");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("invalid --break `no-such-break`"), "{stderr}");
    assert!(!output.status.success());
}

/// A finding of the static scan that the config file suppresses no longer warns: the row is
/// waived (`suppress` is the older spelling of a waiver), named with its reason.
#[test]
fn a_suppressed_scan_finding_passes_and_is_named_with_its_reason() {
    let server = DemoServer::start(&["sec-7"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("mcp-eval.yaml");
    std::fs::write(
        &config,
        "suppress:\n  - rule: SEC-7\n    element: tools[test_simple_text]\n    path: .inputSchema.properties.api_key\n    reason: the demo's key is a fixture\n",
    )
    .expect("write the config");
    let outcome = run(&["--server-url", &server.url, "--config", config.to_str().expect("utf-8"), "--layers", "0"]);
    assert_eq!(outcome.status("SEC-7"), "waived", "{}", outcome.check("SEC-7")["message"]);
    assert_eq!(outcome.check("SEC-7")["waiver"]["status"], "warn", "the status it had is kept");
    let message = outcome.check("SEC-7")["message"].as_str().unwrap_or_default().to_owned();
    assert!(message.contains("suppressed by the config file"), "{message}");
    assert!(message.contains("the demo's key is a fixture"), "{message}");
}
