//! The root-cause rule for answers that cannot be read (issue 40): a server whose
//! `server/discover` answer is readable and whose later answers are not, each `chaos-later-*`
//! way in turn, over each transport it applies to. One broken thing is one finding: exactly one
//! check fails, the row that names the cause (M-11 for an answer that is not one readable
//! JSON-RPC message; H-14 for a readable JSON body under the wrong content type; X-1 for a stdio
//! framing), and its message says what was unreadable and how. The rows that needed the answers
//! (D-4, M-1…M-4, the list and call checks) are blocked or pass, never fail; D-1 passes on the
//! readable discover. A way a client reads as it is (`\r\n` line ends) gives no finding at all.

use crate::support::{Transport, run_demo};

/// Declares one test per row: `name => (mode, transport, root-cause row, text its message holds)`;
/// an empty row means that nothing may fail.
macro_rules! ways {
    ($($name:ident => ($mode:literal, $transport:ident, $id:literal, $text:literal),)*) => {
        $(
            #[test]
            fn $name() {
                one_finding($mode, Transport::$transport, $id, $text);
            }
        )*
    };
}

ways! {
    // Streamable HTTP.
    not_json_http => ("chaos-later-not-json", Http, "M-11", "`tools/list`"),
    array_http => ("chaos-later-array", Http, "M-11", "JSON array"),
    wrong_version_http => ("chaos-later-wrong-version", Http, "M-11", "1.0"),
    no_id_http => ("chaos-later-no-id", Http, "M-11", "no `id`"),
    bare_result_http => ("chaos-later-bare-result", Http, "M-11", "neither `result` nor `error`"),
    bad_utf8_http => ("chaos-later-bad-utf8", Http, "M-11", "not UTF-8"),
    bom_http => ("chaos-later-bom", Http, "M-11", "byte order mark"),
    text_plain_http => ("chaos-later-text-plain", Http, "H-14", "text/plain"),
    html_http => ("chaos-later-html", Http, "M-11", "text/html"),
    json_with_sse_http => ("chaos-later-json-with-sse", Http, "M-11", "SSE"),
    sse_bare_json_http => ("chaos-later-sse-bare-json", Http, "M-11", "text/event-stream"),
    sse_no_data_http => ("chaos-later-sse-no-data", Http, "M-11", "`data:`"),
    sse_not_json_http => ("chaos-later-sse-not-json", Http, "M-11", "[object Object]"),
    double_encoded_http => ("chaos-later-double-encoded", Http, "M-11", "JSON string"),
    gzip_declared_http => ("chaos-later-gzip-declared", Http, "M-11", "gzip"),
    gzip_undeclared_http => ("chaos-later-gzip-undeclared", Http, "M-11", "gzip"),
    truncated_http => ("chaos-later-truncated", Http, "M-11", "cut off"),
    // stdio.
    not_json_stdio => ("chaos-later-not-json", Stdio, "X-1", "not JSON-RPC messages"),
    array_stdio => ("chaos-later-array", Stdio, "M-11", "JSON array"),
    wrong_version_stdio => ("chaos-later-wrong-version", Stdio, "M-11", "1.0"),
    no_id_stdio => ("chaos-later-no-id", Stdio, "M-11", "no `id`"),
    bare_result_stdio => ("chaos-later-bare-result", Stdio, "M-11", "not a JSON-RPC message"),
    bad_utf8_stdio => ("chaos-later-bad-utf8", Stdio, "M-11", "not UTF-8"),
    bom_stdio => ("chaos-later-bom", Stdio, "X-1", "byte order mark"),
    double_encoded_stdio => ("chaos-later-double-encoded", Stdio, "M-11", "JSON string"),
    crlf_stdio => ("chaos-later-crlf", Stdio, "", ""),
    content_length_stdio => ("chaos-later-content-length", Stdio, "X-1", "Content-Length"),
    log_stdio => ("chaos-later-log", Stdio, "X-1", "not JSON-RPC messages"),
    pretty_stdio => ("x-1-pretty-later", Stdio, "X-1", "pretty-prints messages over several lines"),
}

/// Runs the demo server with the `mode` over `transport` and checks the root-cause rule: only
/// `id` fails (or nothing, when `id` is empty), saying `text`, and D-1 passes.
fn one_finding(mode: &str, transport: Transport, id: &str, text: &str) {
    let outcome = run_demo(transport, &[mode], &["--timeout-seconds", "2", "--layers", "0"]);
    let failing = outcome.not_passing();
    assert_eq!(outcome.status("D-1"), "pass", "{mode} over {transport:?}: the readable discover: {failing:#?}");
    if id.is_empty() {
        assert!(failing.is_empty(), "{mode} over {transport:?}: nothing may fail: {failing:#?}");
        assert_eq!(outcome.code(), 0, "{mode} over {transport:?}");
        return;
    }
    assert!(
        failing.len() == 1 && failing[0].starts_with(&format!("\"{id}\" \"fail\"")),
        "{mode} over {transport:?}: one broken thing, one finding ({id}): {failing:#?}"
    );
    let message = outcome.check(id)["message"].as_str().unwrap_or_default().to_owned();
    assert!(message.contains(text), "{mode} over {transport:?}: {id} does not say {text:?}: {message}");
    assert_eq!(outcome.code(), 1, "{mode} over {transport:?}: a MUST failure exits 1");
}
