//! The command line: the demo evaluation, exit statuses, input errors, reports on every path,
//! and secrets kept out of everything written.

use crate::support::{DemoServer, demo_stdio_command, env_dumping_stdio_command, env_dumps, run, run_with_env};

#[test]
fn the_demo_evaluation_passes_and_writes_three_reports() {
    let run = run(&["--demo"]);
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let report = run.report();
    assert_eq!(report["format_version"], 1);
    assert_eq!(report["server"]["era"], "2026-07-28");
    assert_eq!(report["counts"]["fail"], 0, "{}", run.file("summary.md"));
    assert_eq!(report["counts"]["warn"], 0, "{}", run.file("summary.md"));
    // Invalid tool arguments were sent, refused, and survived: a pass on evidence.
    assert_eq!(run.status("H-27"), "pass", "{}", run.check("H-27")["message"]);
    assert!(run.check("E-9")["message"].as_str().unwrap_or_default().contains("invalid tool arguments were refused"));
    assert!(run.file("junit.xml").contains("<testsuite"));
    assert!(run.file("summary.md").contains("mcp-eval"));
}

#[test]
fn the_demo_over_stdio_passes() {
    let run = run(&["--server-cmd", &demo_stdio_command(&[])]);
    assert_eq!(run.code(), 0, "{}", run.file("summary.md"));
    assert_eq!(run.report()["server"]["transport"], "stdio");
    assert_eq!(run.report()["counts"]["fail"], 0, "{}", run.file("summary.md"));
    assert_eq!(run.report()["counts"]["warn"], 0, "{}", run.file("summary.md"));
    for id in ["X-1", "X-2", "X-3", "X-4", "X-5", "X-6", "X-7"] {
        assert_eq!(run.status(id), "pass", "{id}: {}", run.check(id)["message"]);
    }
    assert!(
        run.check("X-6")["message"].as_str().unwrap_or_default().contains("kept serving after invalid tool arguments"),
        "{}",
        run.check("X-6")["message"]
    );
}

#[test]
fn no_server_is_an_input_error_naming_the_flags() {
    let run = run(&[]);
    assert_eq!(run.code(), 2);
    assert!(run.stderr().contains("--server-url"), "{}", run.stderr());
}

#[test]
fn a_bad_layer_is_an_input_error() {
    let run = run(&["--demo", "--layers", "7"]);
    assert_eq!(run.code(), 2);
    assert!(run.stderr().contains("--layers"));
}

#[test]
fn a_bad_config_file_names_the_file_and_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("mcp-eval.yaml");
    std::fs::write(&path, "safe_tools:\n  - name: x\n    argumnets: {}\n").expect("write");
    let run = run(&["--demo", "--config", path.to_str().expect("utf-8")]);
    assert_eq!(run.code(), 2);
    assert!(run.stderr().contains("mcp-eval.yaml"), "{}", run.stderr());
    assert!(run.stderr().contains("mcp-eval.yaml:3:5: safe_tools[0].argumnets: unknown key"), "{}", run.stderr());
    assert!(run.stderr().contains("did you mean `arguments`?"), "{}", run.stderr());
}

#[test]
fn every_mistake_of_a_config_file_is_named_in_one_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("mcp-eval.yaml");
    let text = "timeout_secnds: 5\ngate:\n  fail_on: sometimes\nwaivers:\n  - rule: M-10\n    reason: upstream\n  - rule: M-100\n    reason: a typo\n  - rule: M-10\n    reason: 2027\n";
    std::fs::write(&path, text).expect("write");
    let run = run(&["--demo", "--config", path.to_str().expect("utf-8")]);
    assert_eq!(run.code(), 2);
    let stderr = run.stderr();
    for part in [
        "mcp-eval.yaml:1:1: timeout_secnds: unknown key",
        "did you mean `timeout_seconds`?",
        "mcp-eval.yaml:3:12: gate.fail_on: `sometimes` is not a policy",
        "mcp-eval.yaml:7:11: waivers[1].rule: `M-100` is not a requirement id",
        "mcp-eval.yaml:10:5: waivers[2].reason: expected a string, found a number",
        "quote it: `reason: \"2027\"`",
    ] {
        assert!(stderr.contains(part), "{part:?} missing in\n{stderr}");
    }
}

#[test]
fn an_unreachable_server_exits_3_and_still_writes_reports() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    let run = run(&["--server-url", &format!("http://127.0.0.1:{port}/mcp"), "--timeout-seconds", "2"]);
    assert_eq!(run.code(), 3, "{}", run.stderr());
    assert_eq!(run.report()["outcome"], "unreachable");
    assert_eq!(run.report()["checks"][0]["id"], "CONNECT", "the documented CONNECT row");
    assert_eq!(run.report()["checks"][0]["status"], "error");
    let report = mcp_eval::report::json::parse(&run.file("report.json")).expect("report.json reads back");
    assert_eq!(report.verdict(), mcp_eval::report::model::Verdict::Error);
    assert!(run.file("junit.xml").contains("<testcase"));
    assert!(!run.file("summary.md").is_empty());
}

#[test]
fn the_demo_report_reads_back_through_the_wire_types_unchanged() {
    let run = run(&["--demo"]);
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let text = run.file("report.json");
    let report = mcp_eval::report::json::parse(&text).expect("report.json reads back");
    assert_eq!(mcp_eval::report::json::render(&report), text, "parse then render is the identity");
}

#[test]
fn run_accepts_the_actions_layers_syntax_and_does_not_fail_for_unavailable_layers() {
    let run = run(&["--demo", "--layers", "0-3"]);
    assert_eq!(run.code(), 0, "{}", run.stderr());
    assert_eq!(
        run.report()["layers"],
        serde_json::json!([0, 1, 2, 3]),
        "every layer ran (the demo's layers 1 and 2 need no key; layer 3 measures them)"
    );
}

#[test]
fn fail_on_should_fails_a_run_with_a_warning() {
    let server = DemoServer::start(&["h-17"]);
    let run = run(&["--server-url", &server.url, "--fail-on", "should"]);
    assert_eq!(run.code(), 1, "{}", run.stderr());
    // The headline, `verdict`, the gate's result and the exit status agree (they did not: the
    // verdict and the headline said pass while the run exited 1).
    assert_eq!(run.report()["verdict"], "fail");
    assert_eq!(run.report()["gate"], serde_json::json!({"fail_on": "should", "result": "fail"}));
    assert!(run.file("summary.md").starts_with("## ❌ fail: 1 SHOULD warning (`fail-on: should`)"));
    assert!(run.file("junit.xml").contains("type=\"SHOULD\""), "the warning is a JUnit failure");
    let run = crate::support::run(&["--server-url", &server.url]);
    assert_eq!(run.code(), 0, "{}", run.stderr());
}

#[test]
fn a_header_secret_never_reaches_reports_or_logs() {
    let server = DemoServer::start(&[]);
    let canary = "canary-s3cr3t-7f1e9a";
    let header = format!("Authorization: Bearer {canary}");
    let run = run(&["--server-url", &server.url, "--header", &header, "--json"]);
    assert_eq!(run.code(), 0, "{}", run.stderr());
    assert!(!run.everything().contains(canary), "the canary leaked");
}

#[test]
fn a_must_failure_exits_1() {
    let server = DemoServer::start(&["d-2"]);
    let run = run(&["--server-url", &server.url]);
    assert_eq!(run.code(), 1);
    assert_eq!(run.status("D-2"), "fail");
}

#[test]
fn a_server_that_requires_a_token_is_graded_on_authorization_and_the_token_never_leaks() {
    let server = DemoServer::start_with(&["--require-token", "canary-token-5d2c8e1f"]);
    let without = run(&["--server-url", &server.url]);
    assert_eq!(without.code(), 3, "a 401 without credentials cannot be evaluated: {}", without.stderr());
    assert!(without.stderr().contains("--header"), "{}", without.stderr());
    // The hint names the client-credentials sign-in too (flag and Action inputs).
    for words in ["--oauth-client-id", "`oauth-client-id`", "`oauth-client-secret`"] {
        assert!(without.stderr().contains(words), "{words}: {}", without.stderr());
    }
    // The authorization rows need no credential: they are graded without one; the rest waits.
    assert_eq!(without.report()["outcome"], "needs_credentials");
    assert_eq!(without.report()["verdict"], "error");
    for id in ["A-1", "A-2", "A-3"] {
        assert_eq!(without.status(id), "pass", "{id}: {}", without.check(id)["message"]);
    }
    assert_eq!(without.status("A-4"), "not_applicable");
    assert_eq!(without.status("D-1"), "not_applicable");
    assert!(without.check("D-1")["message"].as_str().unwrap_or_default().contains("requires credentials"));
    let wrong = run(&["--server-url", &server.url, "--header", "Authorization: Bearer not-the-token-77"]);
    assert_eq!(wrong.code(), 3, "{}", wrong.stderr());
    assert!(wrong.stderr().contains("refused the credentials given"), "{}", wrong.stderr());
    let with = run(&["--server-url", &server.url, "--header", "Authorization: Bearer canary-token-5d2c8e1f"]);
    assert_eq!(with.code(), 0, "{}", with.file("summary.md"));
    for id in ["A-1", "A-2", "A-3", "A-4"] {
        assert_eq!(with.status(id), "pass", "{id}: {}", with.check(id)["message"]);
    }
    assert!(!with.everything().contains("canary-token-5d2c8e1f"), "the token leaked");
}

#[test]
fn a_bare_401_without_metadata_warns_on_a1_and_needs_credentials() {
    // A server behind a static API key: 401 with no WWW-Authenticate metadata and nothing at
    // the well-known paths. Legal, but not MCP's OAuth profile: A-1 warns.
    let server = DemoServer::start(&["a-1"]);
    let run = run(&["--server-url", &server.url]);
    assert_eq!(run.code(), 3, "{}", run.stderr());
    assert_eq!(run.report()["outcome"], "needs_credentials");
    assert_eq!(run.status("A-1"), "warn", "{}", run.check("A-1")["message"]);
    assert!(run.check("A-1")["message"].as_str().unwrap_or_default().contains("static API key"));
    assert_eq!(run.status("A-3"), "pass");
    assert_eq!(run.status("A-2"), "not_applicable");
}

#[test]
fn a_password_and_query_values_in_the_url_never_reach_reports() {
    let server = DemoServer::start(&[]);
    let url =
        format!("{}?api_key=canary-query-9b1f", server.url.replacen("http://", "http://alice:canary-pw-4e7a@", 1));
    let run = run(&["--server-url", &url]);
    assert_eq!(run.code(), 0, "{}", run.file("summary.md"));
    let everything = run.everything();
    assert!(!everything.contains("canary-pw-4e7a") && !everything.contains("canary-query-9b1f"), "a URL secret leaked");
}

#[test]
fn an_invalid_port_is_an_input_error() {
    let run = run(&["--server-url", "http://127.0.0.1:99999/mcp"]);
    assert_eq!(run.code(), 2, "{}", run.stderr());
    assert!(run.stderr().contains("--server-url"), "{}", run.stderr());
}

#[test]
fn a_stdio_command_that_does_not_exist_is_unreachable_and_says_why_every_time() {
    // The shell's "not found" arrives on stderr just before the exit; it must never be lost.
    for _ in 0..5 {
        let run = run(&["--server-cmd", "mcp-eval-no-such-binary-3f9a"]);
        assert_eq!(run.code(), 3, "{}", run.stderr());
        let tail = run.report()["server"]["stderr_tail"].as_str().unwrap_or_default().to_owned();
        assert!(tail.contains("not found"), "stderr tail: {tail:?}; stderr: {}", run.stderr());
    }
}

#[test]
fn a_closed_stdout_with_json_is_not_a_crash() {
    let output = std::process::Command::new(crate::support::binary())
        .args(["run", "--demo", "--quiet", "--json", "--out"])
        .arg(tempfile::tempdir().expect("temp dir").path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            drop(child.stdout.take()); // the reader went away (`| head -0`)
            child.wait_with_output()
        })
        .expect("run mcp-eval");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(!String::from_utf8_lossy(&output.stderr).contains("panicked"));
}

/// Runs `mcp-eval ARGS` from the repository root with its stdout read by a reader that stops
/// after `lines` lines (0: at once, `| head -0`; 1: `| head -1`) and closes the pipe, so every
/// later write meets a closed pipe (EPIPE, or SIGPIPE were it not ignored).
fn with_stdout_closed_after(args: &[&str], lines: usize) -> std::process::Output {
    use std::io::BufRead as _;
    std::process::Command::new(crate::support::binary())
        .args(args)
        .current_dir(crate::support::repo_root())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            let stdout = child.stdout.take().expect("stdout");
            let mut reader = std::io::BufReader::new(stdout);
            for _ in 0..lines {
                let mut line = String::new();
                if reader.read_line(&mut line)? == 0 {
                    break;
                }
            }
            drop(reader); // the reader went away
            child.wait_with_output()
        })
        .expect("run mcp-eval")
}

/// The command ended by itself, status 0, with no panic and no broken-pipe text on stderr.
fn ended_quietly(output: &std::process::Output, what: &str) {
    use std::os::unix::process::ExitStatusExt as _;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.signal(), None, "{what}: killed by a signal (141 is SIGPIPE): {stderr}");
    assert_eq!(output.status.code(), Some(0), "{what}: {stderr}");
    assert!(!stderr.contains("panicked") && !stderr.to_lowercase().contains("broken pipe"), "{what}: {stderr}");
}

#[test]
fn judge_calibrate_piped_into_a_reader_that_closes_early_exits_0_without_a_panic() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("calibration.json");
    let args = [
        "judge",
        "calibrate",
        "golden/calibration/demo-labels.yaml",
        "--judge-model",
        "replay:demo:judge",
        "--cassettes",
        "golden/calibration/cassettes",
        "--out",
        out.to_str().expect("utf-8"),
    ];
    for lines in [0, 1] {
        ended_quietly(&with_stdout_closed_after(&args, lines), &format!("judge calibrate | head -{lines}"));
        assert!(out.is_file(), "the calibration file is still written");
        std::fs::remove_file(&out).expect("remove");
    }
    ended_quietly(&with_stdout_closed_after(&["judge", "calibrate", "--help"], 1), "judge calibrate --help | head -1");
}

#[test]
fn output_only_commands_piped_into_a_reader_that_closes_early_exit_0_without_a_panic() {
    for args in [&["golden", "check", "golden/demo.yaml"][..], &["--help"], &["golden", "init", "--help"]] {
        for lines in [0, 1] {
            ended_quietly(&with_stdout_closed_after(args, lines), &format!("{} | head -{lines}", args.join(" ")));
        }
    }
}

#[test]
fn a_closed_stderr_does_not_stop_the_run_or_the_reports() {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = std::process::Command::new(crate::support::binary())
        .args(["run", "--demo", "--out"])
        .arg(dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            drop(child.stderr.take()); // `2>&1 | head -0`: the reader went away
            child.wait_with_output()
        })
        .expect("run mcp-eval");
    assert_eq!(output.status.code(), Some(0));
    assert!(dir.path().join("report.json").exists(), "the reports are written");
}

#[test]
fn the_stdio_server_never_sees_our_secrets_and_gets_what_server_env_gives() {
    let dumps = tempfile::tempdir().expect("temp dir");
    let canaries = [
        ("GITHUB_TOKEN", "canary-gh-3c1d9e"),
        ("OPENAI_API_KEY", "canary-oa-7a2f04"),
        ("INPUT_GITHUB-TOKEN", "canary-in-5b8e13"),
        ("ACTIONS_RUNTIME_TOKEN", "canary-ac-91d6f2"),
    ];
    let mut vars = canaries.to_vec();
    vars.push(("KEEP", "kept-value-e4a7"));
    let run = run_with_env(
        &[
            "--server-cmd",
            &env_dumping_stdio_command(dumps.path()),
            "--server-env",
            "FOO=bar-value-0c5d",
            "--server-env",
            "KEEP",
            "--json",
        ],
        &vars,
    );
    assert_eq!(run.code(), 0, "{}\n{}", run.stderr(), run.file("summary.md"));
    assert_eq!(run.report()["counts"]["fail"], 0, "{}", run.file("summary.md"));
    let seen = env_dumps(dumps.path());
    // Every process started for the run (the first and the second clients of the stdio probes)
    // saw the same.
    assert!(seen.len() >= 2, "the first process and the second clients: {} dumps", seen.len());
    for env in &seen {
        for (name, canary) in canaries {
            assert!(!env.contains(canary), "{name} reached the server: {env}");
        }
        let lines: Vec<&str> = env.lines().collect();
        assert!(lines.iter().any(|line| line.starts_with("PATH=")), "PATH is passed: {env}");
        assert!(lines.contains(&"FOO=bar-value-0c5d"), "--server-env FOO=bar: {env}");
        assert!(lines.contains(&"KEEP=kept-value-e4a7"), "--server-env KEEP: {env}");
    }
    // Values given to the server are secrets.
    let everything = run.everything();
    assert!(!everything.contains("bar-value-0c5d") && !everything.contains("kept-value-e4a7"), "a value leaked");
}

#[test]
fn server_env_with_a_server_url_is_an_input_error() {
    let run = run(&["--server-url", "http://127.0.0.1:9/mcp", "--server-env", "FOO=bar"]);
    assert_eq!(run.code(), 2, "{}", run.stderr());
    assert!(run.stderr().contains("--server-env: environment variables apply to a stdio server"), "{}", run.stderr());
}

#[test]
fn a_bad_server_env_name_is_an_input_error_that_hides_the_value() {
    let run = run(&["--server-cmd", "true", "--server-env", "MY-KEY=s3cret-v4lue", "--server-env", "2X"]);
    assert_eq!(run.code(), 2, "{}", run.stderr());
    assert!(run.stderr().contains("--server-env: `MY-KEY=***`: `MY-KEY` is not a variable name"), "{}", run.stderr());
    assert!(run.stderr().contains("--server-env: `***`: not a variable name"), "{}", run.stderr());
    assert!(!run.stderr().contains("s3cret-v4lue"), "{}", run.stderr());
}

#[test]
fn the_demo_lowers_runs_beyond_its_recordings_with_a_notice_instead_of_missing_replays() {
    let run = run_with_env(&["--demo", "--runs", "7"], &[]);
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let report = run.report();
    let notes = report["layer1_notes"].to_string();
    assert!(notes.contains("--runs 7 is lowered to 5: the demo's recordings hold 5 trials per case"), "{notes}");
    let evals = report["evals"].as_array().cloned().expect("layer 1");
    assert!(evals.iter().all(|eval| eval["runs"] == 5 && eval["status"] != "error"), "{evals:?}");
    let fewer = run_with_env(&["--demo", "--runs", "2"], &[]);
    assert!(!fewer.report()["layer1_notes"].to_string().contains("lowered"));
    assert!(fewer.report()["evals"].as_array().expect("layer 1").iter().all(|eval| eval["runs"] == 2));
    // 4 of 5 scaled to 2 runs is 2 of 2: the summary says once that a soft case is then as
    // strict as a hard one.
    let summary = fewer.file("summary.md");
    let note = "with 2 runs a soft case needs 2/2, the same as a hard case";
    assert_eq!(summary.matches(note).count(), 1, "{summary}");
    assert!(!run.file("summary.md").contains("the same as a hard case"), "5 runs: 4 of 5");
}

#[test]
fn the_demo_shows_a_whole_layer_1_report_replayed_with_no_key() {
    let run = run_with_env(&["--demo"], &[("OPENAI_API_KEY", ""), ("ANTHROPIC_API_KEY", "")]);
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let report = run.report();
    assert_eq!(report["layers"], serde_json::json!([0, 1]));
    assert_eq!(report["models"], serde_json::json!(["replay:demo:scripted"]));
    let evals = report["evals"].as_array().expect("layer 1 in the report");
    assert!(evals.len() >= 10, "{}", evals.len());
    let status = |case: &str| evals.iter().find(|eval| eval["case"] == case).map(|eval| eval["status"].clone());
    assert!(
        evals.iter().all(|eval| eval["status"] == "pass" || eval["status"] == "skipped"),
        "every recording replays"
    );
    assert_eq!(status("needs-confirmation"), Some(serde_json::json!("pass")), "the multi round-trip case");
    let rubric = evals.iter().find(|eval| eval["case"] == "temperature-stated").expect("the rubric case");
    assert_eq!(rubric["status"], "pass", "judged: {rubric}");
    let criteria = rubric["traces"][0]["criteria"].to_string();
    assert!(
        criteria.contains("judge:has_value") && criteria.contains("evidence"),
        "judge verdicts with quoted evidence: {criteria}"
    );
    let judged = &rubric["traces"][0]["judge"];
    assert_eq!(judged["verdict"], "pass", "{judged}");
    assert!(judged["rubric_sha256"].as_str().is_some_and(|hash| hash.starts_with("sha256:")), "{judged}");
    assert!(judged["prompt_version"].as_u64().is_some() && judged["criteria"][0]["evidence"] != "", "{judged}");
    let note = evals.iter().find(|eval| eval["case"] == "weather-note").expect("the embedding case");
    assert_eq!(note["status"], "pass", "{note}");
    let arguments = note["traces"][0]["criteria"].to_string();
    assert!(
        arguments.contains("embedding: cosine") && arguments.contains("≥ 0.85"),
        "the cosine is reported: {arguments}"
    );
    let soft = evals.iter().find(|eval| eval["case"] == "progress-report").expect("the soft case");
    assert_eq!(
        (soft["passed"].as_u64(), soft["runs"].as_u64(), soft["status"].as_str()),
        (Some(4), Some(5), Some("pass"))
    );
    let summary = run.file("summary.md");
    // The checks line times layer 0 alone, not the run with layer 1's replayed model calls.
    let layer0_ms = report["layer0_duration_ms"].as_u64().expect("layer 0's own time");
    assert!(layer0_ms <= report["duration_ms"].as_u64().expect("the run's time"), "{report}");
    let shown = if layer0_ms < 1_000 {
        format!("{layer0_ms} ms")
    } else {
        format!("{}.{} s", layer0_ms / 1_000, (layer0_ms % 1_000) / 100)
    };
    assert!(summary.contains(&format!(" checks in {shown}\n")), "{summary}");
    assert!(summary.contains("#### Failing trials") && summary.contains("progress-report"), "{summary}");
    assert!(summary.contains("| thanks-no-tool | hard | ✅ 5/5 |"), "{summary}");
}

#[test]
fn a_stdio_server_is_started_once_for_the_session_and_once_per_process_a_check_needs_and_the_report_says_why() {
    let dumps = tempfile::tempdir().expect("temp dir");
    let run = run(&["--server-cmd", &env_dumping_stdio_command(dumps.path())]);
    assert_eq!(run.code(), 0, "{}\n{}", run.stderr(), run.file("summary.md"));
    let started = env_dumps(dumps.path()).len();
    let reasons: Vec<String> = run.report()["server"]["stdio_starts"]
        .as_array()
        .expect("server.stdio_starts")
        .iter()
        .map(|reason| reason.as_str().expect("a reason").to_owned())
        .collect();
    // The session, one second process shared by P-3, X-5 and X-4, one for B-3's legacy
    // `initialize`: three, not one per check (five before).
    assert_eq!(started, 3, "processes started: {reasons:#?}");
    assert_eq!(reasons.len(), started, "one reason per process started: {reasons:#?}");
    assert!(reasons[0].starts_with("the session"), "{reasons:#?}");
    for id in ["P-3", "X-5", "X-4", "B-3"] {
        assert!(reasons.iter().any(|reason| reason.contains(id)), "{id} is named: {reasons:#?}");
    }
    for id in ["P-3", "X-4", "X-5", "B-3"] {
        assert_eq!(run.status(id), "pass", "{id}: {}", run.check(id)["message"]);
    }
    // The summary gives the count, then one item per process saying why it was started.
    let summary = run.file("summary.md");
    assert!(summary.contains("**Server processes started:** 3\n  - the session"), "{summary}");
    assert_eq!(summary.lines().filter(|line| line.starts_with("  - ")).count(), 3, "{summary}");
}

#[test]
fn an_http_report_has_no_stdio_starts() {
    let server = DemoServer::start(&[]);
    let run = run(&["--server-url", &server.url]);
    assert_eq!(run.code(), 0, "{}", run.file("summary.md"));
    assert!(run.report()["server"].get("stdio_starts").is_none(), "{}", run.report()["server"]);
    assert!(!run.file("summary.md").contains("Server processes started"));
}

/// The stdio reasons of a run's report, one per process started.
fn stdio_starts(run: &crate::support::Run) -> Vec<String> {
    run.report()["server"]["stdio_starts"]
        .as_array()
        .expect("server.stdio_starts")
        .iter()
        .map(|reason| reason.as_str().expect("a reason").to_owned())
        .collect()
}

/// A stdio command that appends its start time (nanoseconds since the epoch) to `stamps`, waits
/// `delay` (an interpreter importing), then runs the demo server with `breaks`. `wrap` names a
/// shell function the command runs the server through (`npx`: a package runner), when given.
fn stamping_stdio_command(stamps: &std::path::Path, delay: &str, breaks: &[&str], wrap: Option<&str>) -> String {
    let body = format!("date +%s%N >> '{}'; sleep {delay}; exec {}", stamps.display(), demo_stdio_command(breaks));
    match wrap {
        Some(name) => format!("{name}() {{ {body}; }}; {name}"),
        None => body,
    }
}

/// The start times `stamping_stdio_command` wrote, in seconds, in order.
fn stamps(path: &std::path::Path) -> Vec<f64> {
    let text = std::fs::read_to_string(path).expect("the start stamps");
    #[allow(clippy::cast_precision_loss, reason = "seconds since the epoch, to the microsecond")]
    text.lines().map(|line| line.trim().parse::<u128>().expect("nanoseconds") as f64 / 1e9).collect()
}

#[test]
fn a_stdio_runs_second_processes_start_with_the_session_not_after_its_first_answer() {
    // Every process takes 2 s to start: were the second ones started after the session had
    // answered, they would start 2 s after it.
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("stamps");
    let run = run(&["--server-cmd", &stamping_stdio_command(&path, "2", &[], None)]);
    assert_eq!(run.code(), 0, "{}\n{}", run.stderr(), run.file("summary.md"));
    let started = stamps(&path);
    let reasons = stdio_starts(&run);
    assert_eq!((started.len(), reasons.len()), (3, 3), "{reasons:#?}");
    let spread = started.iter().copied().fold(f64::MIN, f64::max) - started.iter().copied().fold(f64::MAX, f64::min);
    assert!(spread < 1.8, "the processes started {spread:.2} s apart: {reasons:#?}");
    assert!(reasons[0].starts_with("the session"), "{reasons:#?}");
    for reason in &reasons[1..] {
        assert!(reason.contains("started with the session"), "{reasons:#?}");
    }
    for id in ["P-3", "X-4", "X-5", "B-3"] {
        assert_eq!(run.status(id), "pass", "{id}: {}", run.check(id)["message"]);
    }
}

#[test]
fn a_stdio_server_slower_to_start_than_the_timeout_is_waited_for_not_called_silent() {
    // Every process takes 2.5 s to start reading stdin (an interpreter importing on a loaded
    // runner) and the timeout is 1 s: the first request's timeout counts from when the server
    // read it. Calling the slow start silence restarted the server for the legacy handshake and
    // graded a modern server as unreachable (or, when it also speaks 2025-11-25, as legacy).
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("stamps");
    let run = run(&["--server-cmd", &stamping_stdio_command(&path, "2.5", &[], None), "--timeout-seconds", "1"]);
    assert_eq!(run.code(), 0, "{}\n{}", run.stderr(), run.file("summary.md"));
    let era = &run.report()["server"];
    assert_eq!(era["era"], "2026-07-28", "{era:#}");
    let evidence = era["era_evidence"].as_str().unwrap_or_default();
    assert!(evidence.contains("began reading stdin") && evidence.contains("timeout counted from then"), "{evidence}");
    assert_eq!(stdio_starts(&run).len(), 3, "no restart: {:#?}", stdio_starts(&run));
}

#[test]
fn a_stdio_command_that_never_reads_stdin_is_unreachable_and_told_to_check_it_is_a_stdio_server() {
    // A command that runs but never reads stdin (an HTTP server given as `--server-cmd`): no
    // restart, one error that says what was seen.
    let run = run(&["--server-cmd", "exec sleep 30", "--timeout-seconds", "1"]);
    assert_eq!(run.code(), 3, "{}", run.stderr());
    let everything = run.everything();
    assert!(everything.contains("never read its stdin"), "{everything}");
    assert!(everything.contains("--server-url"), "{everything}");
}

#[test]
fn a_command_that_may_install_the_server_on_its_first_start_gets_its_second_processes_after_the_session_answered() {
    // `npx` (here a shell function that takes 1 s to start the server) installs into a cache
    // that concurrent first runs can break: its second processes start once the session answered.
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("stamps");
    let run = run(&["--server-cmd", &stamping_stdio_command(&path, "1", &[], Some("npx"))]);
    assert_eq!(run.code(), 0, "{}\n{}", run.stderr(), run.file("summary.md"));
    let started = stamps(&path);
    let reasons = stdio_starts(&run);
    assert_eq!((started.len(), reasons.len()), (3, 3), "{reasons:#?}");
    for later in &started[1..] {
        assert!(later - started[0] >= 0.99, "a second process started {:.2} s after the session", later - started[0]);
    }
    for reason in &reasons[1..] {
        assert!(reason.contains("may install the server on its first start"), "{reasons:#?}");
    }
}

#[test]
fn a_second_process_no_check_needed_is_ended_and_the_report_says_it_was_unused() {
    // A stdio framing that blocks every answer: only X-4 needs a process of its own.
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("stamps");
    let run = run(&["--server-cmd", &stamping_stdio_command(&path, "0", &["x-1-pretty"], None)]);
    assert_eq!(run.code(), 1, "{}\n{}", run.stderr(), run.file("summary.md"));
    assert_eq!(run.status("X-4"), "pass", "{}", run.check("X-4")["message"]);
    let reasons = stdio_starts(&run);
    assert_eq!(reasons.len(), stamps(&path).len(), "one reason per process started: {reasons:#?}");
    assert_eq!(reasons.iter().filter(|reason| reason.contains("X-4")).count(), 1, "{reasons:#?}");
    assert_eq!(reasons.iter().filter(|reason| reason.contains("ended unused")).count(), 1, "{reasons:#?}");
}

#[test]
fn a_probe_waiting_on_a_slow_second_stdio_process_prints_progress_while_it_waits() {
    // A process whose first request is `tools/list` (P-3's walk on the second process: the
    // session's first is `server/discover`, B-3's `initialize`) answers it after 4 s, longer
    // than one progress period.
    let command = format!(
        "{{ IFS= read -r line; case \"$line\" in *'\"tools/list\"'*) sleep 4;; esac; printf '%s\\n' \"$line\"; exec cat; }} | {demo}",
        demo = demo_stdio_command(&[])
    );
    let out = tempfile::tempdir().expect("out dir");
    let output = std::process::Command::new(crate::support::binary())
        .args(["run", "--server-cmd", &command, "--out", out.path().to_str().expect("utf-8")])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run mcp-eval");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let progress: Vec<&str> = stderr.lines().filter(|line| line.contains("families done")).collect();
    assert!(!progress.is_empty(), "no progress line while a probe waited: {stderr}");
    assert!(progress.iter().any(|line| line.contains("waiting on P-3")), "{progress:#?}");
}
