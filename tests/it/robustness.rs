//! Robustness: whatever the server under test does (hangs, cuts a stream, answers HTML, floods
//! stdout, exits, lists 5,000 tools, sends 50 MB), `mcp-eval run` ends in bounded time with a
//! documented exit status (never a crash or a signal) and writes report.json, junit.xml and
//! summary.md. The misbehaviour comes from the demo server's `chaos-*` modes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::layer1::DemoModel;
use crate::support::{DemoServer, binary, demo_stdio_command};

/// What a bounded run produced.
struct Bounded {
    code: i32,
    elapsed: Duration,
    /// Peak resident memory of the `mcp-eval` process in KiB, as last sampled.
    peak_rss_kib: u64,
    report: Value,
    dir: tempfile::TempDir,
}

/// The high-water mark of resident memory of a running process (Linux), in KiB.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs `mcp-eval run ARGS --timeout-seconds 2`; fails the test if it runs longer than `limit`,
/// ends by a signal, or leaves any of the three reports missing or unparsable.
fn run_bounded(args: &[&str], limit: Duration) -> Bounded {
    run_bounded_with(args, limit, |_| {})
}

fn run_bounded_with(args: &[&str], limit: Duration, during: impl Fn(u32)) -> Bounded {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().to_str().expect("utf-8 path").to_owned();
    let started = Instant::now();
    let mut child = Command::new(binary())
        .arg("run")
        .args(args)
        .args(["--timeout-seconds", "2", "--out", &out, "--quiet"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start mcp-eval");
    let pid = child.id();
    let mut peak = 0;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for mcp-eval") {
            break status;
        }
        peak = peak_rss_kib(pid).unwrap_or(peak).max(peak);
        during(pid);
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("mcp-eval {args:?} still running after {limit:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = started.elapsed();
    let code = status.code().unwrap_or_else(|| panic!("mcp-eval {args:?} ended by a signal: {status:?}"));
    let report = check_reports(dir.path());
    Bounded { code, elapsed, peak_rss_kib: peak, report, dir }
}

/// The three reports exist and parse; returns report.json.
fn check_reports(dir: &Path) -> Value {
    let read = |name: &str| {
        std::fs::read_to_string(dir.join(name)).unwrap_or_else(|error| panic!("{name} was not written: {error}"))
    };
    let report: Value = serde_json::from_str(&read("report.json")).expect("report.json is JSON");
    assert!(report["outcome"].is_string(), "report.json has no outcome: {report}");
    assert!(report["checks"].is_array(), "report.json has no checks");
    let junit = read("junit.xml");
    assert!(junit.starts_with("<?xml") && junit.contains("<testsuite"), "junit.xml: {junit}");
    assert!(junit.trim_end().ends_with("</testsuites>"), "junit.xml is cut short");
    assert!(!read("summary.md").trim().is_empty(), "summary.md is empty");
    report
}

const QUICK: Duration = Duration::from_secs(30);
const LOAD: Duration = Duration::from_secs(90);

#[test]
fn a_server_that_never_answers_is_unreachable_within_the_timeout() {
    let server = DemoServer::start(&["chaos-hang"]);
    let run = run_bounded(&["--server-url", &server.url], QUICK);
    assert_eq!(run.code, 3, "{}", run.report);
    assert_eq!(run.report["outcome"], "unreachable");
    assert!(run.elapsed < Duration::from_secs(15), "took {:?}", run.elapsed);
}

#[test]
fn a_stdio_server_that_never_answers_is_unreachable() {
    let run = run_bounded(&["--server-cmd", &demo_stdio_command(&["chaos-hang"])], QUICK);
    assert_eq!(run.code, 3, "{}", run.report);
    assert_eq!(run.report["outcome"], "unreachable");
}

#[test]
fn sse_streams_cut_mid_event_fail_checks_without_hanging() {
    // Every response is cut in the middle of its event: one finding under M-11 naming the cut,
    // the other checks blocked (issue 7 §1; D-1 and others used to fail each on their own).
    let server = DemoServer::start(&["chaos-sse-cut"]);
    let run = run_bounded(&["--server-url", &server.url], QUICK);
    assert_eq!(run.code, 1, "{}", run.report);
    assert_eq!(run.report["outcome"], "completed");
    let check = |id: &str| {
        run.report["checks"].as_array().and_then(|checks| checks.iter().find(|check| check["id"] == id)).cloned()
    };
    let m11 = check("M-11").expect("M-11");
    assert_eq!(m11["status"], "fail");
    assert!(m11["message"].as_str().unwrap_or_default().contains("ended in the middle of the event"), "{m11}");
    let d1 = check("D-1").expect("D-1");
    assert_eq!(d1["status"], "not_applicable");
    assert_eq!(d1["message"], "blocked: the server's responses are unreadable (see M-11)");
    assert_eq!(run.report["counts"]["fail"], 1, "one broken thing, one finding");
}

#[test]
fn a_server_that_holds_every_later_stream_open_ends_in_bounded_time_with_one_finding() {
    // Every answer but `server/discover`'s is an SSE event never ended, its stream held open: each
    // request waits for the 2 s timeout. Layer 0 sends about 40 requests, 8 at a time, so the run
    // must end within ⌈40 ÷ 8⌉ × 2 s = 10 s (it took 18–20 s when each probe of a method waited
    // on its own); later requests of a method already held open are not sent, and say so.
    let server = DemoServer::start(&["m-11-sse-unterminated-later"]);
    let run = run_bounded(&["--server-url", &server.url], QUICK);
    assert_eq!(run.code, 1, "{}", run.report);
    assert!(run.elapsed < Duration::from_secs(10), "took {:?}", run.elapsed);
    let checks = run.report["checks"].as_array().cloned().unwrap_or_default();
    let check = |id: &str| checks.iter().find(|check| check["id"] == id).cloned().unwrap_or_default();
    assert_eq!(run.report["counts"]["fail"], 1, "one broken thing, one finding: {}", run.report["checks"]);
    let m11 = check("M-11");
    let message = m11["message"].as_str().unwrap_or_default();
    assert!(message.contains("`tools/list` (") && message.contains("never ended by a blank line"), "{message}");
    assert!(message.contains("not sent once an earlier answer of its method was held open"), "{message}");
    assert_eq!(check("D-1")["status"], "pass", "the readable discover still grades D-1");
    let skipped = checks
        .iter()
        .filter(|check| check["message"].as_str().unwrap_or_default().contains("was not sent: an earlier"))
        .count();
    assert!(skipped > 0, "a row blocked without waiting says which request was not sent");
}

#[test]
fn json_split_over_several_data_lines_is_valid_sse_and_passes() {
    // The same pretty-printed JSON as `m-11-sse-continuation`, but every line with its own
    // `data:` prefix: SSE joins them with newlines, which is valid JSON whitespace.
    let server = DemoServer::start(&["chaos-sse-multiline-data"]);
    let run = run_bounded(&["--server-url", &server.url], QUICK);
    assert_eq!(run.code, 0, "{}", run.report);
    assert_eq!(run.report["counts"]["fail"], 0, "{}", run.report["checks"]);
    assert_eq!(run.report["counts"]["warn"], 0, "{}", run.report["checks"]);
    let m11 = run.report["checks"].as_array().and_then(|checks| checks.iter().find(|check| check["id"] == "M-11"));
    assert_eq!(m11.map(|check| check["status"].clone()), Some(Value::from("pass")));
}

#[test]
fn an_endpoint_that_answers_html_500_to_everything_is_no_mcp_endpoint() {
    // Nothing resembling JSON-RPC comes back: not a failing MCP server, no MCP server at all
    // (issue 7 §6; this row used to expect exit 1 and a completed run).
    let server = DemoServer::start(&["chaos-html-500"]);
    let run = run_bounded(&["--server-url", &server.url], QUICK);
    assert_eq!(run.code, 3, "{}", run.report);
    assert_eq!(run.report["outcome"], "unreachable");
    let detail = run.report["outcome_detail"].as_str().unwrap_or_default();
    assert!(detail.starts_with("no MCP endpoint at"), "{detail}");
}

#[test]
fn a_server_that_refuses_our_host_header_is_one_clear_error_whichever_sdk_answers() {
    // The TypeScript SDK answers 403 with a JSON-RPC error, the Python SDK 421 in plain text: one
    // root cause, so one outcome (exit status 3, nothing evaluated), not twenty MUST failures.
    for mode in ["chaos-host-403", "chaos-host-421"] {
        let server = DemoServer::start(&[mode]);
        let run = run_bounded(&["--server-url", &server.url], QUICK);
        assert_eq!(run.code, 3, "{mode}: {}", run.report);
        assert_eq!(run.report["outcome"], "unreachable", "{mode}");
        let detail = run.report["outcome_detail"].as_str().unwrap_or_default();
        let host = server.url.trim_start_matches("http://").split('/').next().unwrap_or_default().to_owned();
        assert!(detail.contains(&format!("refused our Host header `{host}`")), "{mode}: {detail}");
        assert!(detail.contains("allow-list"), "{mode}: {detail}");
        assert_eq!(run.report["counts"]["fail"], 0, "{mode}: the symptom rows stay quiet: {}", run.report["checks"]);
    }
}

#[test]
fn a_url_without_the_mcp_path_is_no_mcp_endpoint_with_a_hint() {
    let server = DemoServer::start(&[]);
    let root = server.url.trim_end_matches("/mcp").to_owned() + "/";
    let run = run_bounded(&["--server-url", &root], QUICK);
    assert_eq!(run.code, 3, "{}", run.report);
    let detail = run.report["outcome_detail"].as_str().unwrap_or_default();
    assert!(detail.contains("no MCP endpoint") && detail.contains("`/mcp`"), "{detail}");
    assert!(run.report["checks"].as_array().is_some_and(|checks| checks.len() == 1), "only the CONNECT row");
}

#[test]
fn a_flood_of_non_json_on_stdout_fails_x1() {
    let run = run_bounded(&["--server-cmd", &demo_stdio_command(&["chaos-flood"])], LOAD);
    assert_eq!(run.code, 1, "{}", run.report);
    let x1 = run.report["checks"].as_array().and_then(|checks| checks.iter().find(|check| check["id"] == "X-1"));
    assert_eq!(x1.map(|check| &check["status"]), Some(&Value::from("fail")), "{}", run.report);
}

#[test]
fn a_stdio_server_that_exits_at_start_is_unreachable() {
    let run = run_bounded(&["--server-cmd", "sh -c 'exit 3'"], QUICK);
    assert_eq!(run.code, 3, "{}", run.report);
    assert_eq!(run.report["outcome"], "unreachable");
}

#[test]
#[allow(clippy::print_stderr, reason = "the wall time of the run is part of the test's output")]
fn five_thousand_tools_on_one_page_are_evaluated() {
    let server = DemoServer::start(&["chaos-5000-tools"]);
    let run = run_bounded(&["--server-url", &server.url], LOAD);
    eprintln!("5,000 tools on one page: {:.1} s, peak RSS {} MiB", run.elapsed.as_secs_f64(), run.peak_rss_kib >> 10);
    assert_eq!(run.code, 0, "{}", std::fs::read_to_string(run.dir.path().join("summary.md")).unwrap_or_default());
}

#[test]
fn a_list_over_the_bound_of_one_message_but_not_of_one_entry_is_read_over_stdio_as_over_http() {
    // 2,000 tools with rich schemas on one page: some 180,000 JSON values in one message, over
    // the 100,000 read in one message, each tool far under the bound of one list entry. Over
    // stdio the line was held to the bound of one message: one false M-11 and no tools listed.
    // The timeout is generous: a debug build of the demo server takes seconds to write the
    // list, and the probes list it on several connections at once.
    let server = DemoServer::start(&["chaos-2000-rich-tools"]);
    let stdio = demo_stdio_command(&["chaos-2000-rich-tools"]);
    let over_http = crate::support::run(&["--server-url", &server.url, "--layers", "0", "--timeout-seconds", "60"]);
    let over_stdio = crate::support::run(&["--server-cmd", &stdio, "--layers", "0", "--timeout-seconds", "60"]);
    for (transport, run) in [("HTTP", &over_http), ("stdio", &over_stdio)] {
        let failed: Vec<String> = run.report()["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .filter(|check| check["status"] == "fail" || check["status"] == "error")
            .map(|check| format!("{}: {}", check["id"], check["message"]))
            .collect();
        assert_eq!(run.code(), 0, "{transport}: {failed:#?}");
        let listed = &run.report()["server"]["listed"];
        assert_eq!(listed["tools"], 2000, "{transport}: {listed}");
    }
}

#[test]
#[allow(clippy::print_stderr, reason = "the wall time of the run is part of the test's output")]
fn five_thousand_tools_in_pages_are_evaluated() {
    let server = DemoServer::start(&["chaos-5000-tools-paged"]);
    let run = run_bounded(&["--server-url", &server.url], LOAD);
    eprintln!(
        "5,000 tools in pages of 100: {:.1} s, peak RSS {} MiB",
        run.elapsed.as_secs_f64(),
        run.peak_rss_kib >> 10
    );
    assert_eq!(run.code, 0, "{}", std::fs::read_to_string(run.dir.path().join("summary.md")).unwrap_or_default());
}

#[test]
#[allow(clippy::print_stderr, reason = "the memory high-water mark is part of the test's output")]
fn fifty_megabyte_responses_are_capped() {
    let server = DemoServer::start(&["chaos-50mb"]);
    let run = run_bounded(&["--server-url", &server.url], LOAD);
    eprintln!("50 MB HTTP responses: {:.1} s, peak RSS {} MiB", run.elapsed.as_secs_f64(), run.peak_rss_kib >> 10);
    assert_eq!(run.code, 1, "{}", run.report);
    assert!(run.report.to_string().contains("cap"), "no check mentions the response cap");
    // Each response is cut at 32 MiB; a few run at once, never one per 50 MB in full.
    assert!(run.peak_rss_kib < 1024 * 1024, "peak RSS {} KiB", run.peak_rss_kib);
}

#[test]
#[allow(clippy::print_stderr, reason = "the memory high-water mark is part of the test's output")]
fn fifty_megabyte_stdio_lines_are_dropped() {
    let run = run_bounded(&["--server-cmd", &demo_stdio_command(&["chaos-50mb"])], LOAD);
    eprintln!("50 MB stdio lines: {:.1} s, peak RSS {} MiB", run.elapsed.as_secs_f64(), run.peak_rss_kib >> 10);
    assert!(matches!(run.code, 1 | 3), "exit {}: {}", run.code, run.report);
    assert!(run.peak_rss_kib < 1024 * 1024, "peak RSS {} KiB", run.peak_rss_kib);
}

#[test]
fn sigterm_writes_the_reports_and_exits_143() {
    let server = DemoServer::start(&["chaos-hang"]);
    let started = Instant::now();
    let sent = std::sync::atomic::AtomicBool::new(false);
    // The hanging server keeps the run in its connect phase (2 s timeout); SIGTERM comes first.
    let run = run_bounded_with(&["--server-url", &server.url], QUICK, |pid| {
        if started.elapsed() > Duration::from_millis(500) && !sent.swap(true, std::sync::atomic::Ordering::SeqCst) {
            let killed = Command::new("kill").args(["-TERM", &pid.to_string()]).status().expect("run kill");
            assert!(killed.success());
        }
    });
    assert_eq!(run.code, 143, "{}", run.report);
    assert_eq!(run.report["outcome"], "interrupted");
    assert!(run.elapsed < Duration::from_secs(2), "SIGTERM took {:?} to end the run", run.elapsed);
}

#[test]
fn sigterm_during_the_probes_ends_the_stdio_server_too() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let pid_file = scratch.path().join("server.pid");
    let command = format!(
        "sh -c 'echo $$ > {}; exec {}'",
        pid_file.display(),
        demo_stdio_command(&["chaos-5000-tools-paged"]).replace('\'', "")
    );
    let started = Instant::now();
    let sent = std::sync::atomic::AtomicBool::new(false);
    let run = run_bounded_with(&["--server-cmd", &command], QUICK, |pid| {
        if started.elapsed() > Duration::from_millis(1500) && !sent.swap(true, std::sync::atomic::Ordering::SeqCst) {
            let killed = Command::new("kill").args(["-TERM", &pid.to_string()]).status().expect("run kill");
            assert!(killed.success());
        }
    });
    assert_eq!(run.code, 143, "{}", run.report);
    assert_eq!(run.report["outcome"], "interrupted");
    let server_pid = std::fs::read_to_string(&pid_file).expect("the server wrote its pid");
    let server_pid = server_pid.trim();
    let deadline = Instant::now() + Duration::from_secs(3);
    while Path::new(&format!("/proc/{server_pid}")).exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!Path::new(&format!("/proc/{server_pid}")).exists(), "the stdio server {server_pid} outlived mcp-eval");
}

#[test]
fn a_panic_inside_mcp_eval_still_writes_the_reports_and_is_never_a_pass() {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = Command::new(binary())
        .args(["run", "--demo", "--quiet", "--out", dir.path().to_str().expect("utf-8")])
        .env(mcp_eval::PANIC_FOR_TESTS_VAR, "1")
        .stdin(Stdio::null())
        .output()
        .expect("run mcp-eval");
    assert_eq!(output.status.code(), Some(4), "{}", String::from_utf8_lossy(&output.stderr));
    let report = check_reports(dir.path());
    assert_eq!(report["verdict"], "error");
    assert_eq!(report["checks"][0]["id"], "INTERNAL");
    assert!(report["checks"][0]["message"].as_str().unwrap_or_default().contains("panic"), "{report}");
}

#[test]
fn a_panic_inside_layer_1_keeps_the_layer_0_checks_and_the_finished_runs_and_names_layer_1() {
    let dir = tempfile::tempdir().expect("temp dir");
    // The demo: layer 0, then layer 1 replayed from its cassettes; the failpoint panics in layer 1
    // once its runs have finished.
    let output = Command::new(binary())
        .args(["run", "--demo", "--quiet", "--out", dir.path().to_str().expect("utf-8")])
        .env(mcp_eval::PANIC_FOR_TESTS_VAR, "layer1")
        .stdin(Stdio::null())
        .output()
        .expect("run mcp-eval");
    assert_eq!(output.status.code(), Some(4), "{}", String::from_utf8_lossy(&output.stderr));
    let report = check_reports(dir.path());
    assert_eq!(report["verdict"], "error");
    let checks = report["checks"].as_array().expect("checks");
    let internal = checks.iter().find(|check| check["id"] == "INTERNAL").expect("an INTERNAL row");
    let message = internal["message"].as_str().unwrap_or_default();
    assert!(message.contains("inside layer 1") && !message.contains("layer 0"), "{message}");
    assert!(checks.len() > 10, "layer 0's finished checks are kept: {report}");
    assert!(checks.iter().any(|check| check["status"] == "pass"), "{report}");
    assert_eq!(report["layers"], serde_json::json!([0, 1]), "{report}");
    let evals = report["evals"].as_array().expect("layer 1's finished runs are kept");
    assert!(!evals.is_empty(), "{report}");
    assert!(
        evals.iter().any(|eval| eval["traces"].as_array().is_some_and(|traces| !traces.is_empty())),
        "the finished runs keep their traces: {report}"
    );
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).expect("junit.xml");
    assert!(junit.contains("inside layer 1"), "{junit}");
}

#[test]
fn a_server_that_fails_every_request_passes_nothing_that_was_not_exercised() {
    // Every request gets -32603. The only rules such a server can show it keeps are the ones
    // its error responses and its HTTP layer are evidence for; every other check must be a
    // failure or `not_applicable`, never a pass on no evidence (issue 7 §6).
    let server = DemoServer::start(&["chaos-error-everything"]);
    let run = run_bounded(&["--server-url", &server.url], QUICK);
    assert_eq!(run.code, 1, "{}", run.report);
    let evidence_of_errors_or_http = [
        "M-6",  // error responses echo the request id
        "M-8",  // no reserved error codes in them
        "M-10", // their shape is valid
        "H-14", // JSON bodies with a JSON content type
        "H-18", // GET/DELETE get 405 (HTTP layer)
        "H-21", // a foreign Origin gets 403 (HTTP layer)
        "H-22", // a notification gets 202 (HTTP layer)
        "H-24", // a batch is rejected with -32600
        "H-26", // a foreign Host gets 421 while an ordinary request gets 200
        "E-7",  // an invalid envelope gets -32600
        "E-8",  // an unparsable body gets -32700
    ];
    let passing: Vec<String> = run.report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|check| check["status"] == "pass")
        .map(|check| format!("{}: {}", check["id"].as_str().unwrap_or(""), check["message"].as_str().unwrap_or("")))
        .collect();
    let vacuous: Vec<&String> = passing
        .iter()
        .filter(|line| !evidence_of_errors_or_http.iter().any(|id| line.starts_with(&format!("{id}: "))))
        .collect();
    assert!(vacuous.is_empty(), "passed without evidence: {vacuous:#?}");
}

#[test]
fn a_stdio_server_that_fails_every_request_passes_nothing_that_was_not_exercised() {
    let run = run_bounded(&["--server-cmd", &demo_stdio_command(&["chaos-error-everything"])], QUICK);
    assert_eq!(run.code, 1, "{}", run.report);
    let evidence_of_errors_or_framing = [
        "M-6", "M-8", "M-10", // the error responses themselves
        "X-1",  // every stdout line was a JSON-RPC message
        "X-2",  // none of them was a request
        "X-4",  // the process exited when stdin closed
    ];
    let vacuous: Vec<String> = run.report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|check| check["status"] == "pass")
        .filter(|check| !evidence_of_errors_or_framing.contains(&check["id"].as_str().unwrap_or("")))
        .map(|check| format!("{}: {}", check["id"].as_str().unwrap_or(""), check["message"].as_str().unwrap_or("")))
        .collect();
    assert!(vacuous.is_empty(), "passed without evidence: {vacuous:#?}");
}

/// Runs `mcp-eval run --server-cmd SERVER --out OUT`, reads its stderr until a line `is_the_line`,
/// waits `pause`, sends `signal` (`-TERM`, `-INT`) and waits for the end. Returns the exit code
/// and the lines seen up to that one.
fn signal_after_line(
    server: &str,
    out: &Path,
    is_the_line: impl Fn(&str) -> bool,
    pause: Duration,
    signal: &str,
) -> (Option<i32>, Vec<String>) {
    use std::io::BufRead as _;
    let mut child = Command::new(binary())
        .args(["run", "--server-cmd", server, "--out"])
        .arg(out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mcp-eval");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = std::io::BufReader::new(stderr).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap_or_default();
        let found = is_the_line(&line);
        seen.push(line);
        if found {
            break;
        }
    }
    std::thread::sleep(pause);
    let killed = Command::new("kill").args([signal, &child.id().to_string()]).status().expect("run kill");
    assert!(killed.success());
    let _rest: Vec<String> = lines.map_while(Result::ok).collect();
    (child.wait().expect("wait").code(), seen)
}

#[test]
fn a_signal_while_the_server_shuts_down_keeps_every_finished_check() {
    // The server ignores stdin EOF (x-4) and SIGTERM, so ending it takes the whole shutdown
    // grace; SIGTERM to mcp-eval arrives in that window, after every check was graded.
    let dir = tempfile::tempdir().expect("temp dir");
    let server = format!("sh -c \"trap '' TERM; exec {}\"", demo_stdio_command(&["x-4"]).replace('\'', ""));
    // "probes: done" comes before grading; give grading a moment, then signal.
    let done = |line: &str| line.contains("layer 0: done") || line.contains("probes: done");
    let (code, seen) = signal_after_line(&server, dir.path(), done, Duration::from_millis(200), "-TERM");
    assert_eq!(code, Some(143), "{seen:?}");
    let report = check_reports(dir.path());
    assert_eq!(report["outcome"], "interrupted");
    let checks = report["checks"].as_array().map_or(0, Vec::len);
    assert!(checks > 50, "the finished checks are kept: {checks} checks; {}", report["outcome_detail"]);
    assert!(report["outcome_detail"].as_str().unwrap_or_default().contains("every check had finished"));
}

/// The demo model for a golden set, answering each request after 300 ms, and a config file
/// naming it as the provider `scripted`; the model is ended on drop.
struct SlowModel {
    _model: DemoModel,
    config: PathBuf,
}

impl SlowModel {
    /// Starts the demo model for `set` and writes its config file into `dir`.
    fn start(set: &Path, dir: &Path) -> Self {
        let model = DemoModel::start(set, &["--delay-ms", "300"]);
        let config = dir.join("config.yaml");
        std::fs::write(
            &config,
            format!("providers:\n  - id: scripted\n    api: openai\n    base_url: {}\n", model.openai_url()),
        )
        .expect("write the config");
        Self { _model: model, config }
    }

    /// The arguments of a run of `layers` of `set` against `server` on `scripted:good`, 2 at a
    /// time, writing its events to `events`.
    fn args<'a>(&'a self, server: &'a DemoServer, layers: &'a str, set: &'a Path, events: &'a Path) -> [&'a str; 14] {
        [
            "--server-url",
            &server.url,
            "--layers",
            layers,
            "--golden-set",
            set.to_str().expect("utf-8"),
            "--config",
            self.config.to_str().expect("utf-8"),
            "--model",
            "scripted:good",
            "--concurrency",
            "2",
            "--events",
            events.to_str().expect("utf-8"),
        ]
    }
}

#[test]
fn sigterm_during_layer_1_keeps_the_finished_runs() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let set = scratch.path().join("golden.yaml");
    let mut text = String::from("version: 1\ndefaults: {runs: 5}\ncases:\n");
    for index in 0..4 {
        text.push_str(&format!(
            "  - id: case-{index}\n    prompt: \"Echo number {index}.\"\n    expect_tool: test_simple_text\n"
        ));
    }
    std::fs::write(&set, text).expect("write the set");
    // The demo model answers after 300 ms: 20 runs of 2 turns, 2 at a time, take about 6 s.
    let model = SlowModel::start(&set, scratch.path());
    let server = DemoServer::start(&[]);
    let events = scratch.path().join("events.jsonl");
    let started = Instant::now();
    let sent = std::sync::atomic::AtomicBool::new(false);
    let args = model.args(&server, "1", &set, &events);
    let run = run_bounded_with(&args, QUICK, |pid| {
        if started.elapsed() > Duration::from_millis(2500) && !sent.swap(true, std::sync::atomic::Ordering::SeqCst) {
            let killed = Command::new("kill").args(["-TERM", &pid.to_string()]).status().expect("run kill");
            assert!(killed.success());
        }
    });
    drop(model);
    assert_eq!(run.code, 143, "{}", run.report);
    assert_eq!(run.report["outcome"], "interrupted");
    assert_eq!(run.report["layers"], serde_json::json!([1]));
    let evals = run.report["evals"].as_array().expect("layer 1 reported");
    let finished: usize = evals.iter().map(|eval| eval["traces"].as_array().map_or(0, Vec::len)).sum();
    assert!((2..20).contains(&finished), "some runs finished before the signal: {finished}");
    let passed: u64 = evals.iter().map(|eval| eval["passed"].as_u64().unwrap_or(0)).sum();
    assert!(passed >= 2, "the finished runs are graded: {passed}");
    assert!(
        evals.iter().any(|eval| eval["status"] == "skipped"
            && eval["reason"].as_str().is_some_and(|reason| reason.contains("interrupted"))),
        "{evals:?}"
    );
    assert!(run.report["outcome_detail"].as_str().is_some_and(|detail| detail.contains("during layer 1")));
    // The events file ends as documented on SIGTERM too: `finished`, then `closed` with 143.
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&events)
        .expect("the events file")
        .lines()
        .map(|line| serde_json::from_str(line).expect("every line is JSON"))
        .collect();
    let kinds: Vec<&str> = lines.iter().filter_map(|line| line["kind"].as_str()).collect();
    assert_eq!(&kinds[kinds.len() - 2..], ["finished", "closed"], "{kinds:?}");
    let closed = &lines[lines.len() - 1];
    assert_eq!((&closed["complete"], &closed["exit_status"]), (&serde_json::json!(true), &serde_json::json!(143)));
    assert!(kinds.contains(&"trial_finished") && kinds.contains(&"ended_early"), "{kinds:?}");
}

#[test]
fn sigint_during_a_stdio_layer_0_keeps_the_era_and_the_lists_it_had_printed() {
    // 5,000 tools in pages keep the probes busy for seconds after the lists are walked: SIGINT
    // right after the `lists:` line lands before any check is graded.
    let dir = tempfile::tempdir().expect("temp dir");
    let server = demo_stdio_command(&["chaos-5000-tools-paged"]);
    let listed = |line: &str| line.contains("lists: ");
    let (code, seen) = signal_after_line(&server, dir.path(), listed, Duration::ZERO, "-INT");
    assert_eq!(code, Some(130), "{seen:?}");
    let report = check_reports(dir.path());
    assert_eq!(report["outcome"], "interrupted");
    assert!(
        report["outcome_detail"].as_str().unwrap_or_default().contains("abandoned"),
        "{}",
        report["outcome_detail"]
    );
    assert_eq!(report["server"]["era"], "2026-07-28", "{}", report["server"]);
    assert_eq!(report["server"]["listed"]["tools"], 5000, "{}", report["server"]);
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).expect("summary.md");
    assert!(summary.contains("**Era:** `2026-07-28`"), "{summary}");
    assert!(summary.contains("**Listed:** 5000 tools"), "{summary}");
    assert!(summary.contains("none had finished when the run was interrupted"), "{summary}");
    assert!(!summary.contains("0 checks in"), "{summary}");
}

/// A web server that is no MCP server and does not read request bodies: each connection's first
/// request gets a plain-text 404 (keep-alive); whatever comes next on it — the unread JSON body,
/// taken as the next request — gets an HTML 501 page quoting it, as Python's `http.server` does.
/// Returns the base URL (`http://127.0.0.1:PORT`).
fn body_ignoring_web_server() -> String {
    use std::io::{Read as _, Write as _};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    std::thread::spawn(move || {
        for stream in listener.incoming().map_while(Result::ok) {
            std::thread::spawn(move || {
                let mut stream = stream;
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let mut buffer = vec![0u8; 65536];
                let mut first = true;
                while let Ok(read) = stream.read(&mut buffer) {
                    if read == 0 {
                        break;
                    }
                    let received = String::from_utf8_lossy(&buffer[..read]).into_owned();
                    let reply = if first {
                        "HTTP/1.1 404 Not Found\r\ncontent-type: text/plain\r\ncontent-length: 14\r\n\r\n404 Not Found\n".to_owned()
                    } else {
                        let quoted: String = received.chars().take(200).collect();
                        let page = format!(
                            "<!DOCTYPE HTML>\n<html lang=\"en\"><head><title>Error response</title></head><body><h1>Error response</h1><p>Error code: 501</p><p>Message: Unsupported method ('{quoted}').</p></body></html>\n"
                        );
                        format!(
                            "HTTP/1.1 501 Unsupported method\r\ncontent-type: text/html\r\ncontent-length: {}\r\n\r\n{page}",
                            page.len()
                        )
                    };
                    first = false;
                    if stream.write_all(reply.as_bytes()).is_err() {
                        break;
                    }
                }
            });
        }
    });
    base
}

#[test]
fn a_web_server_whose_error_page_quotes_the_request_is_no_mcp_endpoint() {
    // The 501 page quotes our JSON request (`"jsonrpc"` and all): that is not JSON-RPC coming
    // back. It used to be graded as a broken MCP server: 23 failures, exit 1.
    let base = body_ignoring_web_server();
    for (path, hint) in [("/", "The URL has no path"), ("/mcp", "Is this the server's address?")] {
        let url = format!("{base}{path}");
        let run = run_bounded(&["--server-url", &url], QUICK);
        assert_eq!(run.code, 3, "{path}: {}", run.report);
        assert_eq!(run.report["outcome"], "unreachable");
        let detail = run.report["outcome_detail"].as_str().unwrap_or_default();
        assert!(detail.starts_with("no MCP endpoint at"), "{detail}");
        assert!(detail.contains(hint), "{path}: {detail}");
        assert!(!detail.contains("`/mcp` is the usual one") || path != "/mcp", "{detail}");
        assert!(detail.contains("HTTP 404") && detail.contains("\"404 Not Found\""), "{detail}");
        assert!(!detail.contains("<!DOCTYPE"), "the page is named by its title: {detail}");
        let labels: Vec<&str> = run.report["checks"][0]["evidence"]
            .as_array()
            .map(|evidence| evidence.iter().filter_map(|item| item["label"].as_str()).collect())
            .unwrap_or_default();
        assert!(labels.contains(&"initialize response"), "both answers are the evidence: {labels:?}");
    }
}

#[test]
fn sigterm_during_layer_2_keeps_layer_1_whole_and_says_layer_2_was_cut() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let set = scratch.path().join("golden.yaml");
    let faults = "[{tool: test_simple_text, fault: http-500}, {tool: test_simple_text, fault: timeout}, \
                  {tool: test_simple_text, fault: malformed}, {tool: test_simple_text, fault: stream-cut}]";
    std::fs::write(
        &set,
        format!(
            "version: 1\ndefaults: {{runs: 3}}\ncases:\n  - id: echo\n    prompt: \"Echo a note.\"\n    expect_tool: test_simple_text\n    faults: {faults}\n"
        ),
    )
    .expect("write the set");
    // Answers after 300 ms: layer 1's 3 trials take about 2 s, layer 2's 12 trials about 4 s more.
    let model = SlowModel::start(&set, scratch.path());
    let server = DemoServer::start(&[]);
    let events = scratch.path().join("events.jsonl");
    let sent = std::sync::atomic::AtomicBool::new(false);
    let args = model.args(&server, "1,2", &set, &events);
    let run = run_bounded_with(&args, QUICK, |pid| {
        let in_layer2 =
            std::fs::read_to_string(&events).is_ok_and(|text| text.contains("\"kind\":\"layer_started\",\"layer\":2"));
        if in_layer2 && !sent.swap(true, std::sync::atomic::Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(500));
            let killed = Command::new("kill").args(["-TERM", &pid.to_string()]).status().expect("run kill");
            assert!(killed.success());
        }
    });
    drop(model);
    assert_eq!(run.code, 143, "{}", run.report);
    assert_eq!(run.report["outcome"], "interrupted");
    assert_eq!(run.report["layers"], serde_json::json!([1]));
    let evals = run.report["evals"].as_array().expect("layer 1 reported");
    assert_eq!(evals[0]["status"], "pass", "layer 1 had finished: it is kept whole, not skipped: {evals:?}");
    assert!(run.report["eval_gate"].is_object(), "with its gate");
    let detail = run.report["outcome_detail"].as_str().unwrap_or_default();
    assert!(detail.contains("during layer 2"), "{detail}");
    let cut = run.report["resilience"]["not_run"].as_str().unwrap_or_default();
    assert!(cut.contains("SIGTERM stopped layer 2"), "{}", run.report["resilience"]);
}

/// The check of this id in a report.
fn check_of(report: &Value, id: &str) -> Value {
    report["checks"]
        .as_array()
        .and_then(|checks| checks.iter().find(|check| check["id"] == id))
        .cloned()
        .unwrap_or_default()
}

/// One broken thing, one finding: exactly one failing check, `id`, whose message holds `says`;
/// every other check passes, warns of nothing, or is blocked/not applicable.
fn one_finding(run: &Bounded, id: &str, says: &str) {
    let failing: Vec<String> = run.report["checks"]
        .as_array()
        .map(|checks| {
            checks
                .iter()
                .filter(|check| check["status"] == "fail" || check["status"] == "warn" || check["status"] == "error")
                .map(|check| format!("{} {}: {}", check["id"], check["status"], check["message"]))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(failing.len(), 1, "one broken thing, one finding: {failing:#?}");
    let check = check_of(&run.report, id);
    assert_eq!(check["status"], "fail", "{failing:?}");
    let message = check["message"].as_str().unwrap_or_default();
    assert!(message.contains(says), "{id} does not say `{says}`: {message}");
}

#[test]
#[allow(clippy::print_stderr, reason = "the wall time and memory of the run are part of the test's output")]
fn an_endless_tools_list_body_is_cut_at_the_response_cap_with_one_m11_finding() {
    // `tools/list` answers with a tools array that never ends: each answer is read up to the
    // 32 MiB cap (`MAX_RESPONSE_BYTES`) and no further. M-11 reports it, naming the cap; the
    // checks that needed the list are blocked, not failed on their own (D-4, H-3, H-4 and H-5
    // each used to fail).
    let server = DemoServer::start(&["chaos-endless-tools-list"]);
    let run = run_bounded(&["--server-url", &server.url], LOAD);
    eprintln!("endless tools/list (HTTP): {:.1} s, peak RSS {} MiB", run.elapsed.as_secs_f64(), run.peak_rss_kib >> 10);
    assert_eq!(run.code, 1, "{}", run.report);
    one_finding(&run, "M-11", "larger than the 33554432-byte (32 MiB) cap on one response");
    assert_eq!(check_of(&run.report, "D-4")["status"], "not_applicable", "{}", check_of(&run.report, "D-4"));
    assert!(run.peak_rss_kib < 512 * 1024, "peak RSS {} KiB", run.peak_rss_kib);
}

#[test]
#[allow(clippy::print_stderr, reason = "the wall time and memory of the run are part of the test's output")]
fn an_endless_stdio_line_is_dropped_past_the_line_cap_and_later_requests_are_not_sent() {
    // The `tools/list` answer is a line that never ends: past `MAX_LINE_BYTES`
    // (32 MiB) it is dropped as it comes, and the request it answers (its id comes first) fails
    // at once. Nothing can be read past that line, so the requests that timed out behind it
    // say so, and once it has lasted a whole timeout later requests are not sent: one M-11
    // finding, in bounded time (it took 24 s and 20 findings, each request waiting 2 s).
    let run = run_bounded(&["--server-cmd", &demo_stdio_command(&["chaos-endless-tools-list"])], LOAD);
    eprintln!("endless stdio line: {:.1} s, peak RSS {} MiB", run.elapsed.as_secs_f64(), run.peak_rss_kib >> 10);
    assert_eq!(run.code, 1, "{}", run.report);
    one_finding(&run, "M-11", "longer than the 33554432-byte (32 MiB) cap");
    assert!(run.elapsed < Duration::from_secs(20), "took {:?}", run.elapsed);
    assert!(run.peak_rss_kib < 512 * 1024, "peak RSS {} KiB", run.peak_rss_kib);
}

#[test]
fn json_nested_past_the_parsers_recursion_limit_is_one_m11_finding_naming_the_bound() {
    // One listed tool's schema nests arrays 10,000 deep: serde_json refuses past 128 levels, so
    // the message is scanned first and not parsed; M-11 names the depth and the bound, over
    // HTTP and stdio alike (stdio used to fail X-1 and D-4 for it, the line taken for a log).
    let server = DemoServer::start(&["chaos-deep-nesting"]);
    let stdio = demo_stdio_command(&["chaos-deep-nesting"]);
    for args in [["--server-url", server.url.as_str()], ["--server-cmd", stdio.as_str()]] {
        let run = run_bounded(&args, QUICK);
        assert_eq!(run.code, 1, "{}", run.report);
        one_finding(&run, "M-11", "10005 levels deep, deeper than the 127 levels we read");
        let d4 = check_of(&run.report, "D-4");
        assert_eq!(d4["status"], "not_applicable", "{args:?}: {d4}");
        assert!(d4["message"].as_str().unwrap_or_default().contains("(see M-11)"), "{d4}");
    }
}

#[test]
fn a_message_that_is_not_utf8_is_one_m11_finding() {
    // One tool description holds 0xFF and Latin-1 bytes. JSON text must be UTF-8: the answer is
    // one M-11 finding saying so, and the checks that needed the list are blocked (over stdio
    // the line used to count as a stray log line: X-1 and D-4 failed instead).
    // Over SSE too: the event decoder turns the bytes into U+FFFD, which used to pass unseen.
    let server = DemoServer::start(&["chaos-invalid-utf8"]);
    let sse = DemoServer::start(&["chaos-invalid-utf8", "chaos-sse-multiline-data"]);
    let stdio = demo_stdio_command(&["chaos-invalid-utf8"]);
    for args in
        [["--server-url", server.url.as_str()], ["--server-url", sse.url.as_str()], ["--server-cmd", stdio.as_str()]]
    {
        let run = run_bounded(&args, QUICK);
        assert_eq!(run.code, 1, "{}", run.report);
        one_finding(&run, "M-11", "the message is not UTF-8");
        assert_eq!(check_of(&run.report, "D-4")["status"], "not_applicable", "{args:?}");
        if args[0] == "--server-cmd" {
            assert_eq!(check_of(&run.report, "X-1")["status"], "pass", "the line was a message, not a log line");
        }
    }
}

#[test]
fn nul_characters_in_a_tool_name_and_description_are_t8_and_sec2_business_not_a_parse_failure() {
    // `\u0000` is valid JSON: the list reads, T-8 warns of the name (a SHOULD), the static scan
    // (SEC-2) of the control characters, and the reports carry no NUL byte (XML 1.0 cannot).
    let server = DemoServer::start(&["chaos-nul-names"]);
    let run = run_bounded(&["--server-url", &server.url], QUICK);
    assert_eq!(run.code, 0, "{}", run.report);
    assert_eq!(run.report["counts"]["fail"], 0, "{}", run.report["checks"]);
    assert_eq!(check_of(&run.report, "M-11")["status"], "pass");
    let t8 = check_of(&run.report, "T-8");
    assert_eq!(t8["status"], "warn", "{t8}");
    assert!(t8["message"].as_str().unwrap_or_default().contains("\"\\0\""), "{t8}");
    assert_eq!(check_of(&run.report, "SEC-2")["status"], "warn");
    for name in ["junit.xml", "summary.md"] {
        let text = std::fs::read(run.dir.path().join(name)).expect("written");
        assert!(!text.contains(&0), "{name} holds a NUL byte");
    }
}

/// Runs the demo server in `mode` over HTTP, then over stdio, each run bounded by [`LOAD`], and
/// prints each one's wall time and peak memory after `what`: the runs, by transport.
#[allow(clippy::print_stderr, reason = "the wall time and memory of the run are part of the test's output")]
fn measured_over_each_transport(mode: &str, what: &str) -> Vec<(&'static str, Bounded)> {
    let server = DemoServer::start(&[mode]);
    let stdio = demo_stdio_command(&[mode]);
    [("HTTP", ["--server-url", server.url.as_str()]), ("stdio", ["--server-cmd", stdio.as_str()])]
        .into_iter()
        .map(|(label, args)| {
            let run = run_bounded(&args, LOAD);
            eprintln!("{what} ({label}): {:.1} s, peak RSS {} MiB", run.elapsed.as_secs_f64(), run.peak_rss_kib >> 10);
            (label, run)
        })
        .collect()
}

#[test]
fn ten_thousand_notifications_before_each_result_keep_memory_bounded() {
    // Every result (but discover's) comes after 10,000 notifications: each exchange keeps the
    // first `MAX_MESSAGES_KEPT` (1,000) and counts the rest: 50–67 MiB at peak. Over HTTP it
    // peaked at 140–170 MB when every one was kept. The notifications are of an unknown
    // method: no rule is broken, so the run passes unless a request times out on a slow machine.
    for (label, run) in
        measured_over_each_transport("chaos-10000-notifications", "10,000 notifications before each result")
    {
        assert!(run.peak_rss_kib < 100 * 1024, "{label}: peak RSS {} KiB", run.peak_rss_kib);
        assert!(matches!(run.code, 0 | 1), "{label}: exit {}: {}", run.code, run.report);
    }
}

#[test]
fn a_tool_result_of_a_million_content_blocks_is_not_parsed_and_is_one_m11_finding() {
    // About 27 MB of `{"type":"text","text":"x"}` blocks, under the 32 MiB response cap: parsed,
    // it took 1.2–3.4 GB and gave no finding. Scanned first, it exceeds `MAX_JSON_VALUES`
    // (100,000 per message) and is not parsed: one M-11 finding naming the bound.
    for (label, run) in measured_over_each_transport("chaos-million-content", "a million content blocks") {
        assert_eq!(run.code, 1, "{label}: {}", run.report);
        one_finding(&run, "M-11", "more than the 100000 we read in one message");
        assert!(run.peak_rss_kib < 512 * 1024, "{label}: peak RSS {} KiB", run.peak_rss_kib);
    }
}

#[test]
#[allow(clippy::print_stderr, reason = "the wall time and memory of the run are part of the test's output")]
fn a_stdio_server_that_floods_stderr_keeps_only_its_tail() {
    // About 34 MB/s on stderr for the whole run: only the last 8 KiB are kept (the tail shown
    // when a server fails), so memory stays flat and the run passes as the server does.
    let run = run_bounded(&["--server-cmd", &demo_stdio_command(&["chaos-stderr-flood"])], QUICK);
    eprintln!("stderr flood: {:.1} s, peak RSS {} MiB", run.elapsed.as_secs_f64(), run.peak_rss_kib >> 10);
    assert_eq!(run.code, 0, "{}", run.report);
    assert!(run.peak_rss_kib < 160 * 1024, "peak RSS {} KiB", run.peak_rss_kib);
}

/// A server whose read-only tools answer every valid call with `isError: true` (`chaos-tool-errors`)
/// leaves the checks that need a successful call not applicable: the run says so, over HTTP and
/// stdio. `summary.md` (which the PR comment reuses) names the tool and the arguments sent;
/// the error text, a tool result, is in `report.json` only.
#[test]
fn a_server_whose_tools_answer_every_valid_call_with_is_error_gets_a_notice_naming_the_tool() {
    const ERROR_TEXT: &str = "the note store is unavailable";
    let server = DemoServer::start(&["chaos-tool-errors"]);
    let stdio = demo_stdio_command(&["chaos-tool-errors"]);
    for (transport, args) in [("http", ["--server-url", &server.url]), ("stdio", ["--server-cmd", &stdio])] {
        let run = crate::support::run(&[args[0], args[1], "--layers", "0"]);
        let notices = run.report()["server"]["tool_errors"].as_array().cloned().unwrap_or_default();
        assert!(!notices.is_empty(), "{transport}: no tool_errors in report.json: {}", run.report()["server"]);
        let tool = notices[0]["tool"].as_str().expect("the tool's name");
        let arguments = notices[0]["arguments"].as_str().expect("the arguments sent");
        assert!(
            notices[0]["error"].as_str().is_some_and(|error| error.contains(ERROR_TEXT)),
            "{transport}: {notices:?}"
        );
        let summary = run.file("summary.md");
        let notice = summary
            .lines()
            .find(|line| line.starts_with("**Notice:**"))
            .unwrap_or_else(|| panic!("{transport}: no notice line in summary.md:\n{summary}"));
        // Seven tools, each named with its arguments up to three, on one line.
        assert!(notice.contains("7 tools answered every valid call with `isError: true`"), "{notice}");
        assert!(notice.contains(&format!("`{tool}` (arguments `{arguments}`)")), "{notice}");
        assert!(
            notice.contains(" and 4 more): the checks that need a successful call were not applicable"),
            "{notice}"
        );
        assert!(notice.contains("the error texts are in `report.json`"), "{notice}");
        for file in ["summary.md", "junit.xml"] {
            assert!(!run.file(file).contains(ERROR_TEXT), "{transport}: a tool result reached {file}");
        }
        if transport == "http" {
            let h27 = run.check("H-27");
            assert_eq!(h27["status"], "not_applicable", "{h27}");
            let message = h27["message"].as_str().unwrap_or_default();
            assert!(message.contains(&format!("`{tool}`")) && message.contains("report.json"), "{message}");
        }
    }
}

/// A server whose tools work gets no such notice.
#[test]
fn a_server_whose_tools_work_gets_no_tool_error_notice() {
    let server = DemoServer::start(&[]);
    let run = crate::support::run(&["--server-url", &server.url, "--layers", "0"]);
    assert!(run.report()["server"].get("tool_errors").is_none(), "{}", run.report()["server"]);
    assert!(!run.file("summary.md").contains("**Notice:**"));
}

#[test]
fn a_server_that_dies_on_an_unparsable_body_fails_e8_and_blocks_the_rest() {
    // A Node server whose unguarded JSON.parse throws exits on E-8's probe: that is a failure
    // named with the probe (not a SHOULD warning about a closed stream), and the checks that
    // got no answer afterwards say so instead of a misleading reason of their own.
    let server = DemoServer::start(&["chaos-die-on-unparsable"]);
    let run = run_bounded(&["--server-url", &server.url, "--layers", "0"], QUICK);
    assert_eq!(run.code, 1, "{}", run.report);
    let checks = run.report["checks"].as_array().cloned().unwrap_or_default();
    let check = |id: &str| checks.iter().find(|check| check["id"] == id).cloned().unwrap_or_default();
    let e8 = check("E-8");
    assert_eq!(e8["status"], "fail", "{e8}");
    let message = e8["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("the server stopped answering after an unparsable body (`{not json` POSTed)"),
        "{message}"
    );
    assert!(message.contains("`server/discover` sent next got none either"), "{message}");
    let evidence = e8["evidence"].to_string();
    assert!(evidence.contains("{not json") && evidence.contains("server/discover"), "{evidence}");
    let blocked = "blocked: the server stopped answering after E-8's probe, an unparsable body (`{not json` POSTed)";
    for id in ["P-1", "H-27"] {
        assert_eq!(check(id)["status"], "not_applicable", "{id}: {}", check(id));
        assert_eq!(check(id)["message"], blocked, "{id}");
    }
    let failed: Vec<String> = checks
        .iter()
        .filter(|check| check["status"] == "fail")
        .map(|check| format!("{}: {}", check["id"], check["message"]))
        .collect();
    assert_eq!(failed.len(), 1, "only E-8 fails: {failed:#?}");
}

/// Runs layer 0 against `server` (a URL or a stdio command) that dies on the probe of row `id`
/// (`what`, in words), and checks what every such crash gets: `id` fails naming the probe,
/// with the ordinary request sent next as evidence; `blocked_rows` (checked after it) say they
/// were blocked by it; nothing else fails.
fn assert_crash_named(server: &[&str], id: &str, what: &str, blocked_rows: &[&str]) {
    let args: Vec<&str> = server.iter().copied().chain(["--layers", "0"]).collect();
    let run = run_bounded(&args, QUICK);
    assert_eq!(run.code, 1, "{}", run.report);
    let checks = run.report["checks"].as_array().cloned().unwrap_or_default();
    let check = |id: &str| checks.iter().find(|check| check["id"] == id).cloned().unwrap_or_default();
    let crashed = check(id);
    assert_eq!(crashed["status"], "fail", "{crashed}");
    let message = crashed["message"].as_str().unwrap_or_default();
    assert!(message.starts_with(&format!("the server stopped answering after {what}: ")), "{message}");
    assert!(message.contains("sent next got none either"), "{message}");
    assert!(crashed["evidence"].to_string().contains("server/discover"), "{crashed}");
    let blocked = format!("blocked: the server stopped answering after {id}'s probe, {what}");
    for row in blocked_rows {
        assert_eq!(check(row)["status"], "not_applicable", "{row}: {}", check(row));
        assert_eq!(check(row)["message"], blocked.as_str(), "{row}");
    }
    let failed: Vec<String> = checks
        .iter()
        .filter(|check| check["status"] == "fail")
        .map(|check| format!("{}: {}", check["id"], check["message"]))
        .collect();
    assert_eq!(failed.len(), 1, "only {id} fails: {failed:#?}");
}

#[test]
fn a_server_that_dies_on_an_invalid_envelope_fails_e7_and_blocks_the_rest() {
    // Not only E-8's probe: a server that dies on E-7's (a JSON object that is no JSON-RPC
    // message) fails E-7, at its SHOULD level too, and the checks after it are blocked by it.
    let server = DemoServer::start(&["chaos-die-on-invalid-envelope"]);
    let what = r#"an invalid envelope (`{"jsonrpc":"2.0","foo":1}` POSTed)"#;
    assert_crash_named(&["--server-url", &server.url], "E-7", what, &["H-27"]);
}

#[test]
fn a_server_that_dies_on_a_mismatched_method_header_fails_h4_and_blocks_the_rest() {
    // A header probe: the server dies on H-4's `Mcp-Method` that names another method; H-5,
    // sent right after it, is blocked, not failed on its own rule.
    let server = DemoServer::start(&["chaos-die-on-method-mismatch"]);
    let what = "body `tools/list` with `Mcp-Method: prompts/list`";
    assert_crash_named(&["--server-url", &server.url], "H-4", what, &["H-5", "H-27"]);
}

#[test]
fn a_stdio_server_that_dies_on_an_unknown_resource_fails_e1_and_blocks_the_rest() {
    // Over stdio too: the process exits on E-1's `resources/read` of an unknown URI.
    let command = demo_stdio_command(&["chaos-die-on-unknown-resource"]);
    let what = "a `resources/read` of an unknown URI";
    assert_crash_named(&["--server-cmd", &command], "E-1", what, &["E-3", "P-1", "X-6"]);
}
