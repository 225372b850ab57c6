//! `mcp-eval golden check`: the example set validates and prints its hashes, a broken set gives
//! every problem as `file:line:col: field: message` (exit 2), and with a server every tool name
//! of the set is checked against its `tools/list`. `mcp-eval golden init` writes a starter set
//! from a server's `tools/list` (the demo server and two real ones) that passes `golden check`
//! against the same server, and never overwrites a file without `--force`. `golden check
//! --execute` makes every expected call of a set on the server (the demo server, the Python time
//! server) and fails naming the calls that fail.

use std::process::{Command, Output, Stdio};

use crate::support::{DemoServer, binary, demo_stdio_command, repo_root};

fn golden_check(args: &[&str]) -> Output {
    Command::new(binary())
        .args(["golden", "check"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp-eval golden check")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A hash as printed: `sha256:` and 64 lowercase hex digits.
fn is_hash(word: &str) -> bool {
    word.strip_prefix("sha256:")
        .is_some_and(|hex| hex.len() == 64 && hex.chars().all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)))
}

#[test]
fn the_example_set_validates_and_prints_the_set_and_case_hashes() {
    let path = repo_root().join("golden/demo.yaml");
    let output = golden_check(&[path.to_str().expect("utf-8 path")]);
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "stdout: {stdout}\nstderr: {stderr}");
    let set_line = stdout.lines().find(|line| line.starts_with("set ")).expect("a set line");
    assert!(is_hash(set_line.trim_start_matches("set ")), "{stdout}");
    let cases: Vec<(&str, &str)> =
        stdout.lines().filter_map(|line| line.strip_prefix("case ")).filter_map(|rest| rest.split_once(' ')).collect();
    assert!(cases.len() >= 5, "{stdout}");
    assert!(cases.iter().any(|(id, _)| *id == "temperature-in-celsius"), "{stdout}");
    assert!(cases.iter().all(|(_, hash)| is_hash(hash)), "{stdout}");
    // Same file, same hashes.
    assert_eq!(text(&golden_check(&[path.to_str().expect("utf-8 path")]).stdout), stdout);
}

#[test]
fn a_broken_set_gives_every_problem_with_its_position_and_exit_2() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("broken.yaml");
    std::fs::write(
        &path,
        "version: 1\ncases:\n  - id: a\n    prompt: p\n    expect_tol: t\n    runs: 3\n    pass_threshold: 4\n    negative: true\n  - id: a\n    prompt: q\n    negative: true\n",
    )
    .expect("write the set");
    let file = path.to_str().expect("utf-8 path");
    let output = golden_check(&[file]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(output.stdout.is_empty(), "no hashes for a broken set");
    for expected in [
        format!("error: {file}:5:5: cases[0].expect_tol: unknown key"),
        "  hint: did you mean `expect_tool`?".to_owned(),
        format!("error: {file}:7:21: cases[0].pass_threshold: 4 is more than the 3 trials"),
        format!("error: {file}:9:9: cases[1].id: duplicate case id `a`"),
    ] {
        assert!(stderr.contains(&expected), "missing {expected:?} in:\n{stderr}");
    }
    assert!(stderr.contains("the golden set has 3 problem(s)"), "{stderr}");
}

#[test]
fn a_missing_file_is_an_input_error() {
    let output = golden_check(&["/nonexistent/golden.yaml"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("cannot read the golden set"), "{}", text(&output.stderr));
}

#[test]
fn with_a_server_every_tool_name_must_be_listed_and_the_nearest_is_named() {
    let server = DemoServer::start(&[]);
    let example = repo_root().join("golden/demo.yaml");
    let output = golden_check(&[example.to_str().expect("utf-8 path"), "--server-url", &server.url]);
    assert_eq!(output.status.code(), Some(0), "the example set matches the demo tools: {}", text(&output.stderr));

    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("typo.yaml");
    std::fs::write(
        &path,
        "version: 1\ncases:\n  - id: progress\n    prompt: p\n    expect_tool: test_progres\n    forbid_tools: [\"nothing_*\"]\n",
    )
    .expect("write the set");
    let file = path.to_str().expect("utf-8 path");
    let output = golden_check(&[file, "--server-url", &server.url]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "error: {file}:5:18: cases[0].expect_tool: case `progress`: the server has no tool `test_progres`"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("hint: did you mean `test_progress`? (the nearest tool the server lists)"), "{stderr}");
    assert!(
        stderr.contains("cases[0].forbid_tools[0]: case `progress`: the server has no tool `nothing_*`"),
        "{stderr}"
    );
    // Without a server the same file is valid.
    assert_eq!(golden_check(&[file]).status.code(), Some(0));

    // A set with other problems names its unknown tools in the same pass, in file order, and
    // `negative: yes` is one problem, not two.
    std::fs::write(
        &path,
        "version: 1\ncases:\n  - id: progress\n    prompt: p\n    expect_tool: test_progres\n  - id: thanks\n    prompt: p\n    negative: yes\n",
    )
    .expect("write the set");
    let output = golden_check(&[file, "--server-url", &server.url]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|line| line.starts_with("error: ")).collect();
    assert_eq!(
        errors,
        [
            format!("error: {file}:5:18: cases[0].expect_tool: case `progress`: the server has no tool `test_progres`"),
            format!("error: {file}:8:15: cases[1].negative: expected true or false, found the string `yes`"),
        ],
        "{stderr}"
    );
    assert!(stderr.contains("hint: write `negative: true`"), "{stderr}");
    assert!(stderr.contains("the golden set has 2 problem(s)"), "{stderr}");
}

#[test]
fn a_stdio_server_is_checked_too_and_an_unreachable_one_is_exit_3() {
    let example = repo_root().join("golden/demo.yaml");
    let example = example.to_str().expect("utf-8 path");
    let output = golden_check(&[example, "--server-cmd", &demo_stdio_command(&[])]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("set sha256:"));

    let output = golden_check(&[example, "--server-url", "http://127.0.0.1:1/mcp"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("cannot reach the server"), "{stderr}");
    assert!(output.stdout.is_empty());
}

#[test]
fn a_server_that_needs_a_token_is_checked_with_the_header_given() {
    let server = DemoServer::start_with(&["--require-token", "g0lden-token-6b2e"]);
    let example = repo_root().join("golden/demo.yaml");
    let example = example.to_str().expect("utf-8 path");
    let without = golden_check(&[example, "--server-url", &server.url]);
    assert_eq!(without.status.code(), Some(3), "refused without credentials: {}", text(&without.stderr));
    let with =
        golden_check(&[example, "--server-url", &server.url, "--header", "Authorization: Bearer g0lden-token-6b2e"]);
    assert_eq!(with.status.code(), Some(0), "{}", text(&with.stderr));
    let everything = format!("{}{}{}", text(&without.stderr), text(&with.stdout), text(&with.stderr));
    assert!(!everything.contains("g0lden-token-6b2e"), "the token leaked");
    let bad = golden_check(&[example, "--server-cmd", "true", "--server-env", "BAD-NAME=x"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad.stderr));
}

/// Runs `mcp-eval golden init ARGS`.
fn golden_init(args: &[&str]) -> Output {
    Command::new(binary())
        .args(["golden", "init"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp-eval golden init")
}

/// `golden init` against a server writes a set that loads, prints its path and hash (the hash
/// `golden check` prints), and passes `golden check` against the same server. Returns the text.
fn init_then_check(server: &[&str], expected_tools: &[&str]) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("golden").join("tasks.yaml");
    let file = path.to_str().expect("utf-8 path");
    let mut args = server.to_vec();
    args.extend(["--out", file]);
    let output = golden_init(&args);
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains(&format!("wrote {file}: ")), "{stdout}");
    let hash = stdout.lines().find_map(|line| line.strip_prefix("set ")).expect("a set line");
    assert!(is_hash(hash), "{stdout}");

    let mut check = vec![file];
    check.extend(server);
    let checked = golden_check(&check);
    let checked_out = text(&checked.stdout);
    assert_eq!(checked.status.code(), Some(0), "{checked_out}\n{}", text(&checked.stderr));
    assert!(checked_out.contains(&format!("set {hash}")), "the same hash: {checked_out}");

    let written = std::fs::read_to_string(&path).expect("the written set");
    for tool in expected_tools {
        assert!(written.contains(&format!("expect_tool: \"{tool}\"")), "no case for {tool}:\n{written}");
    }
    let cases = written.matches("\n  - id: ").count();
    assert_eq!(written.matches("# draft: edit the prompt and expectations").count(), cases, "{written}");
    assert_eq!(written.matches("negative: true").count(), 3, "{written}");
    written
}

#[test]
fn init_on_the_demo_server_writes_a_set_that_passes_check() {
    let server = DemoServer::start(&[]);
    let written = init_then_check(&["--server-url", &server.url], &["test_structured", "test_header_param"]);
    // The required `region` argument gets an example value the schema accepts.
    assert!(written.contains("expect_args:\n      \"region\": "), "{written}");
    // Over stdio too.
    init_then_check(&["--server-cmd", &demo_stdio_command(&[])], &["test_progress"]);
}

#[test]
fn init_says_which_tools_execute_will_presume_destructive_and_execute_then_skips_them() {
    // The demo server annotates every tool read-only; with those annotations renamed on the way
    // out, its tools carry neither hint, as many servers' do.
    let unannotated = format!(
        "{} | sed -u -e 's/\"readOnlyHint\"/\"x-read-only\"/g' -e 's/\"destructiveHint\"/\"x-destructive\"/g'",
        demo_stdio_command(&[])
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.yaml");
    let file = path.to_str().expect("utf-8 path");
    let output = golden_init(&["--server-cmd", &unannotated, "--out", file]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let notes: Vec<&str> = stderr.lines().filter(|line| line.contains("presumes them destructive")).collect();
    assert_eq!(notes.len(), 1, "one line: {stderr}");
    assert!(notes[0].starts_with("note: 7 tool(s) (`test_simple_text`, "), "{stderr}");
    assert!(notes[0].contains("annotate the read-only ones `readOnlyHint: true`"), "{stderr}");
    assert!(notes[0].contains("--execute-destructive"), "{stderr}");

    // What the note announced: `--execute` skips every call of the set.
    let checked = golden_check(&[file, "--server-cmd", &unannotated, "--execute"]);
    let stdout = text(&checked.stdout);
    assert_eq!(checked.status.code(), Some(0), "{stdout}{}", text(&checked.stderr));
    assert!(stdout.contains("→ skipped: the tool is not annotated `readOnlyHint: true`"), "{stdout}");
    assert!(stdout.contains(" 0 sent ("), "{stdout}");

    // Annotated tools get no such note.
    let output = golden_init(&["--server-cmd", &demo_stdio_command(&[]), "--out", file, "--force"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(!text(&output.stderr).contains("presumes them destructive"), "{}", text(&output.stderr));
}

#[test]
fn init_refuses_to_overwrite_without_force() {
    let server = DemoServer::start(&[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.yaml");
    std::fs::write(&path, "my own cases\n").expect("write a file");
    let file = path.to_str().expect("utf-8 path");
    let output = golden_init(&["--server-url", &server.url, "--out", file]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("{file} exists already")), "{stderr}");
    assert!(stderr.contains("hint: pass --force"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&path).expect("the file"), "my own cases\n", "left as it was");

    let output = golden_init(&["--server-url", &server.url, "--out", file, "--force"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(std::fs::read_to_string(&path).expect("the file").starts_with("# A starter golden set"));
    // An unreachable server is exit 3 and writes nothing.
    let other = dir.path().join("other.yaml");
    let output = golden_init(&["--server-url", "http://127.0.0.1:1/mcp", "--out", other.to_str().expect("utf-8")]);
    assert_eq!(output.status.code(), Some(3), "{}", text(&output.stderr));
    assert!(!other.exists());
}

#[test]
fn both_commands_take_the_server_from_the_config_file_and_check_says_what_it_checked() {
    let server = DemoServer::start(&[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("mcp-eval.yaml");
    std::fs::write(&config, format!("server:\n  url: {}\ntimeout_seconds: 20\n", server.url))
        .expect("write the config");
    let config = config.to_str().expect("utf-8 path");
    let set = dir.path().join("tasks.yaml");
    let file = set.to_str().expect("utf-8 path");
    let output = golden_init(&["--config", config, "--out", file]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));

    let output = golden_check(&[file, "--config", config]);
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}{}", text(&output.stderr));
    assert!(stdout.contains("tool names: every one the set names is listed by the server ("), "{stdout}");
    // Without a server the hashes are the same, and the output says the names were not checked.
    let alone = text(&golden_check(&[file]).stdout);
    assert!(alone.contains("tool names: not checked against a server"), "{alone}");
    assert_eq!(
        alone.lines().filter(|line| line.starts_with("set ")).collect::<Vec<_>>(),
        stdout.lines().filter(|line| line.starts_with("set ")).collect::<Vec<_>>()
    );
}

#[test]
fn init_on_the_everything_server_over_stdio() {
    let command = crate::interop::stdio_command("ts-everything-stdio");
    let written = init_then_check(&["--server-cmd", &command], &["echo", "get-sum"]);
    assert!(written.contains("      \"a\": 1\n      \"b\": 1\n"), "{written}");
}

#[test]
fn init_on_the_python_time_server_over_stdio() {
    let command = crate::interop::stdio_command("py-time-stdio");
    let written = init_then_check(&["--server-cmd", &command], &["get_current_time", "convert_time"]);
    assert!(written.contains("      \"timezone\": \"Europe/Paris\"\n"), "{written}");
}

/// Writes `yaml` as `set.yaml` in `dir` and gives its path as text.
fn write_set(dir: &std::path::Path, yaml: &str) -> String {
    let path = dir.join("set.yaml");
    std::fs::write(&path, yaml).expect("write the set");
    path.to_str().expect("utf-8 path").to_owned()
}

/// The tools/call names the demo server's `--calls-log` recorded, in order.
fn logged_calls(path: &std::path::Path) -> Vec<(String, serde_json::Value)> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).expect("a JSON line"))
        .map(|call| (call["name"].as_str().expect("a name").to_owned(), call["arguments"].clone()))
        .collect()
}

/// A set of every kind of expected call on the demo server's tools.
const EXECUTE_SET: &str = r#"version: 1
cases:
  - id: select
    prompt: "Echo my region, eu."
    expect_tool: test_header_param
    expect_args: {region: eu, nothing: {match: absent}}
  - id: flow
    prompt: "The short text, then the temperature in celsius or fahrenheit."
    expect_sequence:
      order: strict
      steps:
        - tool: test_simple_text
          args: {text: {match: exact, value: hello}}
        - tool: test_structured
          args: {unit: {match: one_of, values: [celsius, fahrenheit]}}
        - tool: test_structured
          args: {unit: fahrenheit}
  - id: quiet
    prompt: "Run the progress demo, and do not log anything."
    expect_tool: test_progress
    forbid_tools: [test_logging_tool]
  - id: never-log
    prompt: "Do not log."
    forbid_tools: ["test_logging*"]
  - id: thanks
    prompt: "Thanks, that's all."
    negative: true
"#;

#[test]
fn execute_sends_each_exact_expected_call_once_and_never_a_forbidden_tool() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), EXECUTE_SET);
    let calls = dir.path().join("calls.jsonl");
    let server = DemoServer::start_with(&["--calls-log", calls.to_str().expect("utf-8 path")]);
    let output = golden_check(&[&set, "--server-url", &server.url, "--execute"]);
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "stdout: {stdout}\nstderr: {stderr}");
    // What golden check prints comes first, unchanged.
    assert!(stdout.contains("tool names: every one the set names is listed by the server ("), "{stdout}");
    for line in [
        r#"case select: test_header_param {"region":"eu"} → ok ("#,
        r#"case flow step 1: test_simple_text {"text":"hello"} → ok ("#,
        "case flow step 2: test_structured → not executed: no exact value to send for `unit` (a `one_of` matcher)",
        r#"case flow step 3: test_structured {"unit":"fahrenheit"} → ok ("#,
        "case quiet: test_progress {} → ok (",
        "case quiet: forbid_tools `test_logging_tool` → never called",
        "case never-log: no expected call → nothing sent",
        "case never-log: forbid_tools `test_logging*` → never called",
        "case thanks: negative (expects no tool call) → nothing sent",
        "summary: 5 expected call(s): 4 sent (4 ok, 0 isError, 0 JSON-RPC error, 0 no answer), 0 not sent (the set cannot pass them), 1 not executed",
    ] {
        assert!(stdout.lines().any(|got| got.starts_with(line)), "missing {line:?} in:\n{stdout}");
    }
    // No tool result is printed: the demo's texts are nowhere in the output.
    assert!(!stdout.contains("Region: eu") && !stdout.contains("21.5"), "{stdout}");
    // The server saw exactly the four calls, in file order, and never a forbidden tool.
    let called = logged_calls(&calls);
    let names: Vec<&str> = called.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["test_header_param", "test_simple_text", "test_structured", "test_progress"], "{called:?}");
    assert_eq!(called[0].1, serde_json::json!({"region": "eu"}));
    assert_eq!(called[2].1, serde_json::json!({"unit": "fahrenheit"}));
}

#[test]
fn execute_fails_naming_each_call_that_returns_is_error_an_error_or_no_answer() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(
        dir.path(),
        r#"version: 1
cases:
  - id: count
    prompt: "Count to three."
    expect_tool: test_simple_text
    expect_args: {count: three}
  - id: confirm
    prompt: "Ask me to confirm."
    expect_tool: test_missing_capability
  - id: kelvin
    prompt: "The temperature in kelvin."
    expect_tool: test_structured
    expect_args: {unit: kelvin}
  - id: region
    prompt: "Echo my region, eu."
    expect_tool: test_header_param
    expect_args: {region: eu}
"#,
    );
    // t-2 makes test_simple_text's schema one no validator compiles, so the call is sent as layer 1
    // would send it, and the demo answers isError for the string count; x-6 makes the stdio
    // server exit after its first error response, so the last call gets no answer.
    let server = demo_stdio_command(&["t-2", "x-6"]);
    let output = golden_check(&[&set, "--server-cmd", &server, "--execute"]);
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(1), "stdout: {stdout}\nstderr: {stderr}");
    for line in [
        r#"case count: test_simple_text {"count":"three"} → isError: Invalid arguments for tool test_simple_text: argument `count` must be of type integer ("#,
        "case confirm: test_missing_capability {} → JSON-RPC error -32021: Tool test_missing_capability needs the elicitation client capability (",
        r#"case kelvin: test_structured → not sent: the set's arguments break the tool's inputSchema (`/unit`: "kelvin" is not one of"#,
        r#"case region: test_header_param {"region":"eu"} → no answer: "#,
        "summary: 4 expected call(s): 3 sent (0 ok, 1 isError, 1 JSON-RPC error, 1 no answer), 1 not sent (the set cannot pass them), 0 not executed",
    ] {
        assert!(stdout.lines().any(|got| got.starts_with(line)), "missing {line:?} in:\n{stdout}");
    }
}

#[test]
fn execute_on_the_python_time_server_over_stdio_reports_each_call() {
    let dir = tempfile::tempdir().expect("temp dir");
    // The server's results change every second: only the calls are checked, never what they gave.
    let set = write_set(
        dir.path(),
        r#"version: 1
cases:
  - id: tokyo-now
    prompt: "What time is it in Tokyo?"
    expect_tool: get_current_time
    expect_args: {timezone: Asia/Tokyo}
  - id: new-york-to-london
    prompt: "It is 16:30 in New York. What time is it in London?"
    expect_tool: convert_time
    expect_args: {source_timezone: America/New_York, time: "16:30", target_timezone: Europe/London}
  - id: somewhere-in-europe
    prompt: "What time is it somewhere in Europe?"
    expect_tool: get_current_time
    expect_args:
      timezone: {match: regex, pattern: "Europe/.+"}
  - id: thanks
    prompt: "Thanks!"
    negative: true
"#,
    );
    let command = crate::interop::stdio_command("py-time-stdio");
    let output = golden_check(&[&set, "--server-cmd", &command, "--execute"]);
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "stdout: {stdout}\nstderr: {stderr}");
    for line in [
        r#"case tokyo-now: get_current_time {"timezone":"Asia/Tokyo"} → ok ("#,
        r#"case new-york-to-london: convert_time {"source_timezone":"America/New_York","time":"16:30","target_timezone":"Europe/London"} → ok ("#,
        "case somewhere-in-europe: get_current_time → not executed: no exact value to send for `timezone` (a `regex` matcher)",
        "case thanks: negative (expects no tool call) → nothing sent",
        "summary: 3 expected call(s): 2 sent (2 ok, 0 isError, 0 JSON-RPC error, 0 no answer), 0 not sent (the set cannot pass them), 1 not executed",
    ] {
        assert!(stdout.lines().any(|got| got.starts_with(line)), "missing {line:?} in:\n{stdout}");
    }
    assert!(!stdout.contains("datetime"), "no tool result is printed: {stdout}");
}

#[test]
fn execute_needs_a_server_and_an_unreachable_one_is_exit_3() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), EXECUTE_SET);
    let output = golden_check(&[&set, "--execute"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("error: --execute needs a server to call"), "{stderr}");
    assert!(stderr.contains("hint: pass --server-url URL or --server-cmd CMD"), "{stderr}");
    assert!(output.stdout.is_empty());

    let output = golden_check(&[&set, "--server-url", "http://127.0.0.1:1/mcp", "--execute"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("cannot reach the server"), "{stderr}");
    assert!(output.stdout.is_empty(), "nothing is executed");

    // A tool name the server does not list is still exit 2, before any call.
    let calls = dir.path().join("calls.jsonl");
    let server = DemoServer::start_with(&["--calls-log", calls.to_str().expect("utf-8 path")]);
    let typo = write_set(
        dir.path(),
        "version: 1\ncases:\n  - id: a\n    prompt: p\n    expect_tool: test_progress\n  - id: b\n    prompt: p\n    expect_tool: test_progres\n",
    );
    let output = golden_check(&[&typo, "--server-url", &server.url, "--execute"]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    assert!(logged_calls(&calls).is_empty(), "no call before the names are checked");
}

/// Issue 40: `golden check FILE --server-url URL` (no `--execute`) says which server it checked
/// the set's tool names against, how many tools that server lists, and the names it did not find.
#[test]
fn check_with_a_server_says_which_server_it_checked_the_tool_names_against_and_the_misses() {
    let server = DemoServer::start(&[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let found = write_set(
        dir.path(),
        "version: 1\ncases:\n  - id: one\n    prompt: \"Give me the short text.\"\n    expect_tool: test_simple_text\n",
    );
    let output = golden_check(&[&found, "--server-url", &server.url]);
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}{}", text(&output.stderr));
    let line = stdout.lines().find(|line| line.starts_with("tool names: ")).unwrap_or_default();
    assert!(line.contains(&format!("checked against {}", server.url)), "{stdout}");
    assert!(line.contains("tool(s) listed") && line.contains("every one the set names"), "{stdout}");

    let missing = write_set(
        dir.path(),
        "version: 1\ncases:\n  - id: one\n    prompt: \"Give me the short text.\"\n    expect_tool: test_no_such_tool\n",
    );
    let output = golden_check(&[&missing, "--server-url", &server.url]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("test_no_such_tool"), "the miss is named: {stderr}");
    let line = stderr.lines().find(|line| line.starts_with("tool names: ")).unwrap_or_default();
    assert!(
        line.contains(&format!("checked against {}", server.url)) && line.contains("1 name(s) the set gives not found"),
        "{stderr}"
    );
}
