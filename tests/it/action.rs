//! `mcp-eval action` as the runner starts it: inputs as `INPUT_*` (hyphens kept, unset ones
//! empty), `GITHUB_*` variables, an event payload file, and `GITHUB_API_URL` pointing at a local
//! fake of the GitHub REST endpoints we call (list comments with `Link` pagination, create,
//! update; a 403 mode; a 5xx-then-success mode; rate-limit modes that answer the first write
//! with `Retry-After`). The server under test is the embedded demo.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::layer1::DemoModel;
use crate::support::{DemoServer, TestCa, TlsFront, binary, env_dumping_stdio_command, env_dumps, port_of, repo_root};

const OWNER_REPO: &str = "octo/mcp-server";
const PR_COMMENTS: &str = "/repos/octo/mcp-server/issues/7/comments";
/// The fake serves this many comments per page, whatever `per_page` asks, so that a few
/// comments already need pagination.
const PAGE_SIZE: usize = 2;

/// The keys of one top-level section of action.yml (`inputs:` or `outputs:`), up to the next
/// section `until`, in the file's order.
fn action_yml_keys(section: &str, until: &str) -> Vec<String> {
    let text = std::fs::read_to_string(crate::support::repo_root().join("action.yml")).expect("action.yml");
    let body = text.split(&format!("\n{section}:\n")).nth(1).unwrap_or_else(|| panic!("a {section}: section"));
    let body = body.split(&format!("\n{until}:")).next().unwrap_or(body);
    body.lines()
        .filter_map(|line| line.strip_prefix("  ").filter(|rest| !rest.starts_with(' ')))
        .filter_map(|line| line.strip_suffix(':'))
        .map(str::to_owned)
        .collect()
}

/// Every input of action.yml (read from it, so a new input is never missed), upper case as the
/// runner names its variable; each is set to the empty string as the runner does for inputs not
/// given.
fn all_inputs() -> Vec<String> {
    let names: Vec<String> =
        action_yml_keys("inputs", "outputs").iter().map(|name| name.to_ascii_uppercase()).collect();
    assert!(names.len() > 30, "every input read: {names:?}");
    names
}

/// Every output action.yml declares (read from it).
fn declared_outputs() -> Vec<String> {
    let names = action_yml_keys("outputs", "runs");
    assert!(names.len() >= 13, "every output read: {names:?}");
    names
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Normal,
    /// Reads work, writes answer 403 (a fork pull request's read-only token).
    Forbidden,
    /// The first write answers this status with `Retry-After: seconds` (a rate limit: 429, or
    /// 403 for GitHub's secondary limits); later requests behave.
    RateLimitedOnce {
        status: u16,
        retry_after: u64,
    },
}

#[derive(Debug, Clone)]
struct FakeComment {
    id: u64,
    body: String,
}

#[derive(Debug, Clone)]
struct Request {
    method: String,
    path: String,
    authorization: Option<String>,
    /// When the request arrived.
    at: Instant,
    /// The status it was answered with.
    status: u16,
}

#[derive(Debug)]
struct FakeState {
    comments: Vec<FakeComment>,
    next_id: u64,
    mode: Mode,
    /// Answer this many requests with 502 before behaving.
    fail_first: usize,
    /// Set once the first write was rate limited (`Mode::RateLimitedOnce`).
    rate_limited: bool,
    requests: Vec<Request>,
}

/// A local HTTP server that behaves like the GitHub REST endpoints the action calls.
struct FakeGithub {
    url: String,
    state: Arc<Mutex<FakeState>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl FakeGithub {
    fn start(mode: Mode, fail_first: usize, foreign_comments: usize) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the fake GitHub");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let comments = (1..=foreign_comments as u64)
            .map(|id| FakeComment { id, body: format!("a comment by someone else, number {id}") })
            .collect();
        let state = Arc::new(Mutex::new(FakeState {
            comments,
            next_id: 1000,
            mode,
            fail_first,
            rate_limited: false,
            requests: Vec::new(),
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (state, stop, url) = (state.clone(), stop.clone(), url.clone());
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Ok(stream) = stream {
                        serve(stream, &state, &url);
                    }
                }
            })
        };
        Self { url, state, stop, thread: Some(thread) }
    }

    fn comments(&self) -> Vec<FakeComment> {
        self.state.lock().expect("state").comments.clone()
    }

    fn requests(&self) -> Vec<Request> {
        self.state.lock().expect("state").requests.clone()
    }

    fn ours(&self) -> Vec<FakeComment> {
        self.comments().into_iter().filter(|c| c.body.starts_with("<!-- mcp-eval-action")).collect()
    }
}

impl Drop for FakeGithub {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.url.trim_start_matches("http://"));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn serve(stream: TcpStream, state: &Mutex<FakeState>, base_url: &str) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
        return;
    }
    let mut content_length = 0;
    let mut authorization = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            match name.to_ascii_lowercase().as_str() {
                "content-length" => content_length = value.trim().parse().unwrap_or(0),
                "authorization" => authorization = Some(value.trim().to_owned()),
                _ => {}
            }
        }
    }
    let mut body = vec![0; content_length];
    let _ = reader.read_exact(&mut body);
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let target = parts.next().unwrap_or_default().to_owned();
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let at = Instant::now();
    let mut state = state.lock().expect("state");
    let mut retry_after = None;
    let (status, link, json) = if state.fail_first > 0 {
        state.fail_first -= 1;
        (502, None, "<html>Bad Gateway</html>".to_owned())
    } else if let Some((status, seconds)) = rate_limit(&mut state, &method) {
        retry_after = Some(seconds);
        (status, None, r#"{"message":"You have exceeded a secondary rate limit."}"#.to_owned())
    } else {
        route(&mut state, &method, path, query, &body, base_url)
    };
    state.requests.push(Request { method: method.clone(), path: path.to_owned(), authorization, at, status });
    let mut response = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        json.len()
    );
    if let Some(link) = link {
        response.push_str(&format!("link: {link}\r\n"));
    }
    if let Some(seconds) = retry_after {
        response.push_str(&format!("retry-after: {seconds}\r\n"));
    }
    response.push_str("\r\n");
    response.push_str(&json);
    let mut stream = stream;
    let _ = stream.write_all(response.as_bytes());
    let _ = stream.flush();
}

/// In `Mode::RateLimitedOnce`, the status and `Retry-After` seconds for the first write.
fn rate_limit(state: &mut FakeState, method: &str) -> Option<(u16, u64)> {
    let Mode::RateLimitedOnce { status, retry_after } = state.mode else { return None };
    if state.rate_limited || !matches!(method, "POST" | "PATCH") {
        return None;
    }
    state.rate_limited = true;
    Some((status, retry_after))
}

fn comment_json(comment: &FakeComment, base_url: &str) -> serde_json::Value {
    serde_json::json!({
        "id": comment.id,
        "node_id": format!("IC_{}", comment.id),
        "body": comment.body,
        "html_url": format!("{base_url}/octo/mcp-server/pull/7#issuecomment-{}", comment.id),
        "user": {"login": "github-actions[bot]"},
    })
}

fn route(
    state: &mut FakeState,
    method: &str,
    path: &str,
    query: &str,
    body: &[u8],
    base_url: &str,
) -> (u16, Option<String>, String) {
    let forbidden = || (403, None, r#"{"message":"Resource not accessible by integration"}"#.to_owned());
    let new_body =
        || serde_json::from_slice::<serde_json::Value>(body).ok().and_then(|v| v["body"].as_str().map(str::to_owned));
    match (method, path) {
        ("GET", PR_COMMENTS) => {
            let page: usize =
                query.split('&').find_map(|pair| pair.strip_prefix("page=")).and_then(|n| n.parse().ok()).unwrap_or(1);
            let n_pages = state.comments.len().div_ceil(PAGE_SIZE).max(1);
            let items: Vec<serde_json::Value> = state
                .comments
                .iter()
                .skip((page - 1) * PAGE_SIZE)
                .take(PAGE_SIZE)
                .map(|c| comment_json(c, base_url))
                .collect();
            let link = (page < n_pages).then(|| {
                format!(
                    "<{base_url}{PR_COMMENTS}?per_page=100&page={}>; rel=\"next\", <{base_url}{PR_COMMENTS}?per_page=100&page={n_pages}>; rel=\"last\"",
                    page + 1
                )
            });
            (200, link, serde_json::Value::Array(items).to_string())
        }
        ("POST", PR_COMMENTS) => {
            if state.mode == Mode::Forbidden {
                return forbidden();
            }
            let Some(text) = new_body() else { return (422, None, r#"{"message":"no body"}"#.into()) };
            let comment = FakeComment { id: state.next_id, body: text };
            state.next_id += 1;
            state.comments.push(comment.clone());
            (201, None, comment_json(&comment, base_url).to_string())
        }
        ("PATCH", _) if path.starts_with("/repos/octo/mcp-server/issues/comments/") => {
            if state.mode == Mode::Forbidden {
                return forbidden();
            }
            let id: u64 = path.rsplit('/').next().and_then(|id| id.parse().ok()).unwrap_or(0);
            let Some(text) = new_body() else { return (422, None, r#"{"message":"no body"}"#.into()) };
            match state.comments.iter_mut().find(|c| c.id == id) {
                Some(comment) => {
                    comment.body = text;
                    let comment = comment.clone();
                    (200, None, comment_json(&comment, base_url).to_string())
                }
                None => (404, None, r#"{"message":"Not Found"}"#.into()),
            }
        }
        _ => (404, None, r#"{"message":"Not Found"}"#.into()),
    }
}

/// One `mcp-eval action` run in a fresh workspace.
struct ActionRun {
    output: Output,
    workspace: PathBuf,
}

impl ActionRun {
    fn code(&self) -> i32 {
        self.output.status.code().unwrap_or(-1)
    }
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }
    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }
    fn file(&self, relative: &str) -> String {
        std::fs::read_to_string(self.workspace.join(relative)).unwrap_or_else(|e| panic!("cannot read {relative}: {e}"))
    }
    fn outputs(&self) -> BTreeMap<String, String> {
        parse_outputs(&self.file("github_output.txt"))
    }
}

fn event(name: &str) -> PathBuf {
    repo_root().join("tests/fixtures/events").join(name)
}

/// Runs `mcp-eval action` with a clean environment shaped like the runner's: every input
/// present (empty when not given), the GITHUB_* variables, the workspace as working directory.
fn run_action(
    workspace: &Path,
    event_name: &str,
    event_file: &str,
    api_url: &str,
    inputs: &[(&str, &str)],
) -> ActionRun {
    run_action_with_env(workspace, event_name, event_file, api_url, inputs, &[])
}

/// [`run_action`] with more variables in the step's environment (e.g. from the step's `env`).
fn run_action_with_env(
    workspace: &Path,
    event_name: &str,
    event_file: &str,
    api_url: &str,
    inputs: &[(&str, &str)],
    vars: &[(&str, &str)],
) -> ActionRun {
    let mut command = action_command(workspace, event_name, event_file, api_url, inputs, vars);
    let output = command.output().expect("run mcp-eval action");
    ActionRun { output, workspace: workspace.to_path_buf() }
}

/// The `mcp-eval action` command [`run_action_with_env`] runs, not started yet.
pub(crate) fn action_command(
    workspace: &Path,
    event_name: &str,
    event_file: &str,
    api_url: &str,
    inputs: &[(&str, &str)],
    vars: &[(&str, &str)],
) -> Command {
    std::fs::create_dir_all(workspace).expect("workspace");
    let mut command = Command::new(binary());
    command.arg("action").env_clear().current_dir(workspace).stdin(Stdio::null());
    if let Some(path) = std::env::var_os("PATH") {
        command.env("PATH", path);
    }
    for input in all_inputs() {
        command.env(format!("INPUT_{input}"), "");
    }
    for (name, value) in inputs {
        command.env(format!("INPUT_{name}"), value);
    }
    command.envs(vars.iter().copied());
    command
        .env("GITHUB_EVENT_NAME", event_name)
        .env("GITHUB_EVENT_PATH", event(event_file))
        .env("GITHUB_REPOSITORY", OWNER_REPO)
        .env("GITHUB_API_URL", api_url)
        .env("GITHUB_SERVER_URL", "https://github.example")
        .env("GITHUB_RUN_ID", "4242")
        .env("GITHUB_SHA", "abc123")
        .env("GITHUB_WORKSPACE", workspace)
        .env("GITHUB_OUTPUT", workspace.join("github_output.txt"))
        .env("GITHUB_STEP_SUMMARY", workspace.join("step_summary.md"));
    command
}

/// Parses `$GITHUB_OUTPUT` strictly: only `name<<DELIM` … `DELIM` entries, each closed, no
/// other lines.
fn parse_outputs(text: &str) -> BTreeMap<String, String> {
    let mut outputs = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let (name, delimiter) = line.split_once("<<").unwrap_or_else(|| panic!("not a heredoc entry: {line:?}"));
        assert!(!name.is_empty() && !delimiter.is_empty(), "{line:?}");
        assert!(delimiter.len() >= 20, "the delimiter should be random: {delimiter}");
        let mut value = Vec::new();
        loop {
            let next = lines.next().unwrap_or_else(|| panic!("output {name} is not closed by {delimiter}"));
            if next == delimiter {
                break;
            }
            value.push(next);
        }
        outputs.insert(name.to_owned(), value.join("\n"));
    }
    outputs
}

#[test]
fn two_runs_leave_exactly_one_comment_updated_in_place() {
    let demo = DemoServer::start(&[]);
    let github = FakeGithub::start(Mode::Normal, 0, 3);
    let dir = tempfile::tempdir().expect("temp dir");
    let inputs = [("SERVER-URL", demo.url.as_str()), ("GITHUB-TOKEN", "ghs_faketoken")];

    let first =
        run_action(&dir.path().join("one"), "pull_request", "pull_request_synchronize.json", &github.url, &inputs);
    assert_eq!(first.code(), 0, "{}\n{}", first.stdout(), first.stderr());
    assert!(first.stdout().contains("comment created"), "{}", first.stdout());
    assert_eq!(github.ours().len(), 1);
    let first_body = github.ours()[0].body.clone();
    assert!(first_body.contains("first run on this pull request"), "{first_body}");

    let second =
        run_action(&dir.path().join("two"), "pull_request", "pull_request_synchronize.json", &github.url, &inputs);
    assert_eq!(second.code(), 0, "{}", second.stdout());
    assert!(second.stdout().contains("comment updated"), "{}", second.stdout());
    let ours = github.ours();
    assert_eq!(ours.len(), 1, "one comment, updated in place");
    assert_eq!(github.comments().len(), 4, "the other comments are untouched");
    assert!(ours[0].body.contains("**Since the previous run:** no change."), "{}", ours[0].body);

    let requests = github.requests();
    let count = |method: &str| requests.iter().filter(|r| r.method == method).count();
    assert_eq!(count("POST"), 1, "{requests:?}");
    assert_eq!(count("PATCH"), 1, "{requests:?}");
    assert!(requests.iter().any(|r| r.method == "GET" && r.path == PR_COMMENTS), "pagination walked: {requests:?}");
    assert!(requests.iter().all(|r| r.authorization.as_deref() == Some("Bearer ghs_faketoken")));

    let body = &ours[0].body;
    let verdict = body.find("## ✅ pass").expect("verdict");
    let delta = body.find("Since the previous run").expect("delta");
    assert!(verdict < delta, "the verdict leads");
    assert!(body.contains("https://github.example/octo/mcp-server/actions/runs/4242"));
    assert!(body.chars().count() < 65_536);

    let outputs = second.outputs();
    assert_eq!(outputs["result"], "pass");
    assert_eq!(outputs["layers-requested"], "0");
    assert_eq!(outputs["layers-run"], "0");
    assert_eq!(outputs["failures"], "0");
    assert_eq!(outputs["warnings"], "0");
    assert_eq!(outputs["junit-path"], "mcp-eval-report/junit.xml");
    assert_eq!(outputs["report-path"], "mcp-eval-report");
    assert!(outputs["comment-url"].contains("#issuecomment-"), "{outputs:?}");
    let summary = second.file("step_summary.md");
    assert!(summary.starts_with("## ✅ pass"), "{summary}");
    assert_eq!(summary.matches("<details>").count(), summary.matches("</details>").count());
    assert!(summary.contains("**Layers:** requested 0"));
}

/// A push to the pull request that changes what a tool says gets that tool named for review in
/// the comment, beside the scan's own finding.
#[test]
fn a_description_changed_between_two_runs_is_called_out_in_the_comment() {
    let github = FakeGithub::start(Mode::Normal, 0, 0);
    let dir = tempfile::tempdir().expect("temp dir");
    let before = DemoServer::start(&[]);
    let inputs = [("SERVER-URL", before.url.as_str()), ("GITHUB-TOKEN", "ghs_faketoken")];
    let first =
        run_action(&dir.path().join("one"), "pull_request", "pull_request_synchronize.json", &github.url, &inputs);
    assert_eq!(first.code(), 0, "{}\n{}", first.stdout(), first.stderr());
    // The same server with one description grown past 10,000 characters (SEC-8).
    let after = DemoServer::start(&["sec-8"]);
    let inputs = [("SERVER-URL", after.url.as_str()), ("GITHUB-TOKEN", "ghs_faketoken")];
    let second =
        run_action(&dir.path().join("two"), "pull_request", "pull_request_synchronize.json", &github.url, &inputs);
    assert_eq!(second.code(), 0, "a warning does not fail the run: {}", second.stdout());
    let body = github.ours()[0].body.clone();
    assert!(
        body.contains(
            "🔎 1 description(s) changed, review what the model will read: `tools[test_input_required_result]`"
        ),
        "{body}"
    );
    assert!(body.contains("new warning(s): `SEC-8`"), "{body}");
}

/// The action on an opened pull request, against the demo server and a fake GitHub started with
/// `mode`, `fail_first` and `foreign_comments`, with `extra` inputs (the token among them).
fn run_on_opened_pull_request(
    mode: Mode,
    fail_first: usize,
    foreign_comments: usize,
    extra: &[(&str, &str)],
) -> (FakeGithub, ActionRun, tempfile::TempDir) {
    let demo = DemoServer::start(&[]);
    let github = FakeGithub::start(mode, fail_first, foreign_comments);
    let dir = tempfile::tempdir().expect("temp dir");
    let mut inputs = vec![("SERVER-URL", demo.url.as_str())];
    inputs.extend_from_slice(extra);
    let run = run_action(dir.path(), "pull_request", "pull_request_opened.json", &github.url, &inputs);
    (github, run, dir)
}

#[test]
fn sigterm_while_the_comment_is_posted_exits_143_with_result_error() {
    // A GitHub API that accepts the connection and never answers: the upsert hangs until the
    // runner cancels the job with SIGTERM.
    let api = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let api_url = format!("http://{}", api.local_addr().expect("address"));
    let demo = DemoServer::start(&[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let inputs = [("SERVER-URL", demo.url.as_str()), ("GITHUB-TOKEN", "ghs_fake"), ("TIMEOUT-SECONDS", "60")];
    let mut child = action_command(dir.path(), "pull_request", "pull_request_opened.json", &api_url, &inputs, &[])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start mcp-eval action");
    // The upsert's first request is the listing of the comments: held open, unanswered.
    let (_held, _) = api.accept().expect("the comment upsert connects");
    std::thread::sleep(Duration::from_millis(100));
    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().expect("run kill");
    assert!(killed.success());
    let status = child.wait().expect("wait");
    let run =
        ActionRun { output: Output { status, stdout: Vec::new(), stderr: Vec::new() }, workspace: dir.path().into() };
    assert_eq!(run.code(), 143);
    // `result` was written as `pass` before the comment; the later `error` entry wins.
    assert_eq!(run.outputs()["result"], "error", "{:?}", run.outputs());
    assert!(
        run.file("step_summary.md").contains("interrupted while posting the comment"),
        "{}",
        run.file("step_summary.md")
    );
    assert!(run.file("mcp-eval-report/report.json").contains("\"verdict\": \"pass\""), "the reports are complete");
}

#[test]
fn sigterm_while_the_inputs_are_read_exits_143_with_result_error_not_2() {
    // The config file is a FIFO: reading the settings blocks until the test writes it, so the
    // signal lands in that stage, before any evaluation. The file then turns out bad (exit 2
    // on its own), but the job is being cancelled: 143 and `result=error` it is.
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("mcp-eval.yaml");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("run mkfifo");
    assert!(made.success());
    let inputs = [("SERVER-URL", "http://127.0.0.1:9/mcp"), ("CONFIG", "mcp-eval.yaml")];
    let mut child = action_command(dir.path(), "push", "push.json", "http://127.0.0.1:9", &inputs, &[])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start mcp-eval action");
    std::thread::sleep(Duration::from_millis(500));
    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().expect("run kill");
    assert!(killed.success());
    std::thread::sleep(Duration::from_millis(100));
    std::fs::write(&fifo, "timeout_seconds: [\n").expect("write the FIFO");
    let status = child.wait().expect("wait");
    let run =
        ActionRun { output: Output { status, stdout: Vec::new(), stderr: Vec::new() }, workspace: dir.path().into() };
    assert_eq!(run.code(), 143);
    assert_eq!(run.outputs()["result"], "error", "{:?}", run.outputs());
    assert!(run.file("step_summary.md").contains("interrupted by SIGTERM"), "{}", run.file("step_summary.md"));
}

#[test]
fn without_a_token_the_comment_is_skipped_and_github_is_not_called() {
    let (github, run, _dir) = run_on_opened_pull_request(Mode::Normal, 0, 0, &[("GITHUB-TOKEN", "")]);
    assert_eq!(run.code(), 0, "{}", run.stdout());
    assert!(run.stdout().contains("no token given (input `github-token`)"), "{}", run.stdout());
    assert!(!run.stdout().contains("fork"), "no blame on forks: {}", run.stdout());
    assert!(github.ours().is_empty(), "no comment was posted");
    assert!(github.requests().is_empty(), "GitHub was not called");
}

#[test]
fn the_eval_label_requests_every_layer_and_the_missing_ones_are_named() {
    let demo = DemoServer::start(&[]);
    let github = FakeGithub::start(Mode::Normal, 0, 0);
    let dir = tempfile::tempdir().expect("temp dir");
    let run = run_action(
        dir.path(),
        "pull_request",
        "pull_request_labeled_eval.json",
        &github.url,
        &[("SERVER-URL", &demo.url), ("GITHUB-TOKEN", "t0ken")],
    );
    assert_eq!(run.code(), 0, "{}", run.stdout());
    let outputs = run.outputs();
    assert_eq!(outputs["layers-requested"], "0,1,2,3");
    assert_eq!(outputs["layers-run"], "0");
    assert!(run.stdout().contains("layers requested: 0,1,2,3 (the pull request was just labelled `run-evals`)"));
    let note = "Layer 3 did not run:** no trial of layer 1 or 2 ran";
    assert!(run.file("step_summary.md").contains(note), "{}", run.file("step_summary.md"));
    assert!(github.ours()[0].body.contains(note));
    let layer1 = "Layer 1 did not run: no golden set was given";
    assert!(run.file("step_summary.md").contains(layer1), "{}", run.file("step_summary.md"));
    let layer2 = "Layer 2 did not run:** no golden set was given";
    assert!(run.file("step_summary.md").contains(layer2), "{}", run.file("step_summary.md"));
    assert_eq!(outputs["cases-passed"], "", "layer 1 did not run");
}

#[test]
fn events_choose_layers_end_to_end() {
    let demo = DemoServer::start(&[]);
    let github = FakeGithub::start(Mode::Normal, 0, 0);
    let dir = tempfile::tempdir().expect("temp dir");
    for (index, (event_name, file, layers_input, expected)) in [
        ("push", "push.json", "", "0"),
        ("schedule", "schedule.json", "auto", "0,1,2,3"),
        ("workflow_dispatch", "workflow_dispatch_layers.json", "", "0,2"),
        ("push", "push.json", "0-1", "0,1"),
    ]
    .into_iter()
    .enumerate()
    {
        let run = run_action(
            &dir.path().join(index.to_string()),
            event_name,
            file,
            &github.url,
            &[("SERVER-URL", &demo.url), ("LAYERS", layers_input)],
        );
        assert_eq!(run.code(), 0, "{}", run.stdout());
        assert_eq!(run.outputs()["layers-requested"], expected, "{event_name} {file}");
        assert!(run.stdout().contains("comment: skipped"), "{}", run.stdout());
    }
    assert!(github.requests().is_empty(), "no pull request, no API call");
}

#[test]
fn a_403_becomes_a_warning_and_the_job_summary_says_once_that_the_comment_was_not_posted() {
    let (github, run, _dir) = run_on_opened_pull_request(Mode::Forbidden, 0, 1, &[("GITHUB-TOKEN", "read-only")]);
    assert_eq!(run.code(), 0, "the exit status follows the evaluation, never the comment: {}", run.stdout());
    assert!(run.stdout().contains("::warning title=mcp-eval comment not posted::"), "{}", run.stdout());
    assert!(run.stdout().contains("HTTP 403"), "{}", run.stdout());
    let summary = run.file("step_summary.md");
    // The summary is written once: the comment's body, which is the summary again, is not
    // appended; a note says it was not posted and why.
    assert!(
        summary.contains("> **The pull request comment was not posted:** the token may not comment here"),
        "{summary}"
    );
    assert!(!summary.contains("<!-- mcp-eval-action comment-id="), "{summary}");
    assert_eq!(summary.matches("MCP 2026-07-28 conformance").count(), 1, "{summary}");
    assert_eq!(run.outputs()["comment-url"], "");
    assert_eq!(run.outputs()["result"], "pass");
    assert!(github.ours().is_empty());
    assert_eq!(github.requests().iter().filter(|r| r.method == "POST").count(), 1, "a 403 is not retried");
}

#[test]
fn a_502_is_retried_and_then_the_comment_is_posted() {
    let (github, run, _dir) =
        run_on_opened_pull_request(Mode::Normal, 2, 0, &[("GITHUB-TOKEN", "t0ken"), ("COMMENT-ID", "leg-a")]);
    assert_eq!(run.code(), 0, "{}", run.stdout());
    assert_eq!(run.stdout().matches("HTTP 502").count(), 2, "{}", run.stdout());
    assert!(run.stdout().contains("comment created"), "{}", run.stdout());
    assert_eq!(github.ours().len(), 1);
    assert!(github.ours()[0].body.starts_with("<!-- mcp-eval-action comment-id=\"leg-a\" -->"));
}

#[test]
fn a_429_with_retry_after_waits_what_github_asks_then_posts_once() {
    let (github, run, _dir) = run_on_opened_pull_request(
        Mode::RateLimitedOnce { status: 429, retry_after: 1 },
        0,
        1,
        &[("GITHUB-TOKEN", "t0ken-1")],
    );
    assert_eq!(run.code(), 0, "{}", run.stdout());
    let stdout = run.stdout();
    assert!(stdout.contains("HTTP 429"), "{stdout}");
    assert!(stdout.contains("GitHub asked to retry after 1 s"), "the log says how long and why: {stdout}");
    assert!(stdout.contains("comment created"), "{stdout}");
    assert!(!stdout.contains("::warning title=mcp-eval comment"), "{stdout}");
    assert_eq!(github.ours().len(), 1, "exactly one comment");

    let requests = github.requests();
    let limited = requests.iter().position(|r| r.status == 429).expect("the rate-limited write");
    assert_eq!(requests.iter().filter(|r| r.status == 429).count(), 1, "{requests:?}");
    let next = requests.get(limited + 1).expect("a request after the rate limit");
    let waited = next.at.duration_since(requests[limited].at);
    assert!(waited >= Duration::from_secs(1), "waited {waited:?}, GitHub asked for 1 s");
    assert!(waited < Duration::from_secs(4), "waited {waited:?}: the server's wait, not more");
    let posts = requests.iter().filter(|r| r.method == "POST").count();
    assert_eq!(posts, 2, "the rate-limited create, then the one that worked: {requests:?}");
}

#[test]
fn a_certificate_error_talking_to_github_is_one_warning_naming_it_and_not_retried() {
    let demo = DemoServer::start(&[]);
    let github = FakeGithub::start(Mode::Normal, 0, 0);
    // GitHub's API behind TLS with a certificate of a CA that the action does not trust.
    let ca = TestCa::new("a CA nobody trusts");
    let trusted = TestCa::new("the CA the action trusts");
    let front = TlsFront::start(&ca, port_of(&github.url));
    let dir = tempfile::tempdir().expect("temp dir");
    let run = run_action_with_env(
        dir.path(),
        "pull_request",
        "pull_request_opened.json",
        &front.url_for(&github.url),
        &[("SERVER-URL", demo.url.as_str()), ("GITHUB-TOKEN", "t0ken-tls")],
        &[("SSL_CERT_FILE", trusted.pem_path())],
    );
    assert_eq!(run.code(), 0, "the exit status follows the evaluation, never the comment: {}", run.stdout());
    let stdout = run.stdout();
    let warning = stdout
        .lines()
        .find(|line| line.starts_with("::warning title=mcp-eval comment not posted::"))
        .unwrap_or_else(|| panic!("a warning: {stdout}"));
    assert!(warning.contains("TLS") && warning.contains("UnknownIssuer"), "names the TLS cause: {warning}");
    assert!(warning.contains("SSL_CERT_FILE"), "says how to trust a private CA: {warning}");
    assert!(!warning.contains("kept failing after retries"), "a certificate error is not transient: {warning}");
    assert!(!stdout.contains("(attempt 1 of"), "no retry of our own: {stdout}");
    assert_eq!(front.accepted.load(Ordering::SeqCst), 1, "one connection, no retry: {stdout}");
    assert!(github.requests().is_empty(), "nothing reached the API");
    assert!(run.file("step_summary.md").contains("**The pull request comment was not posted:**"));
    assert_eq!(run.outputs()["comment-url"], "");
}

#[test]
fn a_retry_after_longer_than_the_cap_gives_up_at_once_with_a_warning() {
    // GitHub's secondary rate limit: 403 with Retry-After, a rate limit and not a refusal.
    let (github, run, _dir) = run_on_opened_pull_request(
        Mode::RateLimitedOnce { status: 403, retry_after: 3600 },
        0,
        0,
        &[("GITHUB-TOKEN", "t0ken-3600")],
    );
    let finished = Instant::now();
    assert_eq!(run.code(), 0, "the exit status follows the evaluation, never the comment: {}", run.stdout());
    let stdout = run.stdout();
    let warning = stdout
        .lines()
        .find(|line| line.starts_with("::warning title=mcp-eval comment not posted::"))
        .unwrap_or_else(|| panic!("a warning: {stdout}"));
    assert!(warning.contains("rate limit"), "{warning}");
    assert!(warning.contains("GitHub asked to retry after 3600 s"), "{warning}");
    assert!(warning.contains("HTTP 403"), "{warning}");
    assert!(!warning.contains("may not comment here"), "a rate limit is not a refusal: {warning}");
    assert!(run.file("step_summary.md").contains("**The pull request comment was not posted:**"));
    assert_eq!(run.outputs()["comment-url"], "");

    let requests = github.requests();
    let limited = requests.iter().find(|r| r.status == 403).expect("the rate-limited write");
    assert_eq!(requests.last().map(|r| r.status), Some(403), "no request after the rate limit: {requests:?}");
    let after = finished.duration_since(limited.at);
    assert!(after < Duration::from_secs(5), "the run ended {after:?} after the rate limit: it must not wait");
    assert!(github.ours().is_empty());
}

#[test]
fn fail_on_decides_the_exit_status_and_reports_are_written_either_way() {
    let demo = DemoServer::start(&["d-2"]);
    let dir = tempfile::tempdir().expect("temp dir");
    // `result` is what the exit status follows: under `never` findings fail nothing.
    for (index, (fail_on, code, result)) in
        [("", 1, "fail"), ("must", 1, "fail"), ("never", 0, "pass")].into_iter().enumerate()
    {
        let run = run_action(
            &dir.path().join(index.to_string()),
            "push",
            "push.json",
            "http://127.0.0.1:9",
            &[("SERVER-URL", &demo.url), ("FAIL-ON", fail_on), ("JUNIT-PATH", "reports/junit-out.xml")],
        );
        assert_eq!(run.code(), code, "fail-on {fail_on:?}: {}", run.stdout());
        let outputs = run.outputs();
        assert_eq!(outputs["result"], result, "fail-on {fail_on:?}");
        assert_ne!(outputs["failures"], "0");
        assert_eq!(outputs["junit-path"], "reports/junit-out.xml");
        let missing: Vec<String> = declared_outputs().into_iter().filter(|name| !outputs.contains_key(name)).collect();
        assert!(missing.is_empty(), "outputs missing: {missing:?}");
        let junit = run.file("reports/junit-out.xml");
        assert!(junit.contains(&format!(r#"<property name="gate.result" value="{result}"/>"#)), "{junit}");
        let report = run.file("mcp-eval-report/report.json");
        assert!(report.contains("\"D-2\""));
        let report: serde_json::Value = serde_json::from_str(&report).expect("report.json");
        // The verdict is the run's under its fail-on: it agrees with `result` and the exit status.
        assert_eq!((report["verdict"].as_str(), report["gate"]["result"].as_str()), (Some(result), Some(result)));
        let stdout = run.stdout();
        let annotation = stdout.lines().find(|l| l.starts_with("::error title=mcp-eval D-2 ")).expect("annotation");
        // `report.json` is generated, not a file of the repository: the annotation names no file.
        assert!(!stdout.lines().any(|l| l.starts_with("::error file=mcp-eval-report/")), "{stdout}");
        assert!(annotation.contains("title=mcp-eval D-2 (MUST)"), "{annotation}");
    }
}

#[test]
fn a_config_file_problem_is_annotated_on_its_file_and_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("mcp-eval.yaml"), "gate:\n  fail_on: never\ncolour: blue\n").expect("write");
    let run = run_action(
        dir.path(),
        "push",
        "push.json",
        "http://127.0.0.1:9",
        &[("SERVER-URL", "http://127.0.0.1:9/mcp"), ("CONFIG", "mcp-eval.yaml")],
    );
    assert_eq!(run.code(), 2, "{}", run.stdout());
    assert!(
        run.stdout().contains("::error file=mcp-eval.yaml,line=3,title=mcp-eval input::"),
        "the annotation points at the file and line: {}",
        run.stdout()
    );
}

#[test]
fn invalid_inputs_exit_2_and_still_write_outputs_and_summary() {
    let dir = tempfile::tempdir().expect("temp dir");
    let run = run_action(dir.path(), "push", "push.json", "http://127.0.0.1:9", &[("FAIL-ON", "sometimes")]);
    assert_eq!(run.code(), 2, "{}", run.stdout());
    assert!(run.stdout().contains("::error title=mcp-eval input::"), "{}", run.stdout());
    assert!(run.stdout().contains("INPUT_FAIL-ON"));
    assert_eq!(run.outputs()["result"], "error");
    // Every output action.yml declares is written on every path (empty where there is nothing
    // to say).
    let missing: Vec<String> =
        declared_outputs().into_iter().filter(|output| !run.outputs().contains_key(output)).collect();
    assert!(missing.is_empty(), "outputs missing: {missing:?} of {:?}", run.outputs());
    assert!(run.file("step_summary.md").contains("invalid input"));
}

#[test]
fn server_text_cannot_issue_workflow_commands() {
    // An unreachable stdio server whose stderr tries to issue commands: they print only inside
    // a stop-commands block. (`pw%sned` keeps the word out of the command line itself, which
    // our own escaped annotation may quote; the server reads one request before it exits, so its
    // stderr is surely captured.)
    let dir = tempfile::tempdir().expect("temp dir");
    let run = run_action(
        dir.path(),
        "push",
        "push.json",
        "http://127.0.0.1:9",
        &[
            (
                "SERVER-COMMAND",
                "printf '::error::pw%sned\\n::set-output name=result::pass\\n' '' >&2; read -r request; exit 1",
            ),
            ("TIMEOUT-SECONDS", "2"),
        ],
    );
    assert_eq!(run.code(), 3, "{}", run.stdout());
    let stdout = run.stdout();
    let mut stopped: Option<String> = None;
    for line in stdout.lines() {
        match &stopped {
            None => {
                if let Some(token) = line.strip_prefix("::stop-commands::") {
                    assert!(token.len() >= 32);
                    stopped = Some(token.to_owned());
                } else {
                    assert!(!line.contains("pwned"), "untrusted text outside a stop-commands block: {line}");
                }
            }
            Some(token) => {
                if line == format!("::{token}::") {
                    stopped = None;
                }
            }
        }
    }
    assert!(stopped.is_none(), "commands resumed");
    assert!(stdout.contains("pwned"), "the stderr tail is shown (inside the block): {stdout}");
    assert_eq!(run.outputs()["result"], "error");
}

#[test]
fn a_canary_secret_appears_nowhere_but_in_the_mask_command() {
    let header_canary = "canary-hdr-5e2c91d7";
    let token_canary = "canary-tok-8b41f0aa";
    let demo = DemoServer::start(&[]);
    let github = FakeGithub::start(Mode::Normal, 1, 1);
    let dir = tempfile::tempdir().expect("temp dir");
    let headers = format!("Authorization: Bearer {header_canary}\nX-Api-Key: {header_canary}");
    let run = run_action(
        dir.path(),
        "pull_request",
        "pull_request_labeled_eval.json",
        &github.url,
        &[("SERVER-URL", &demo.url), ("SERVER-HEADERS", &headers), ("GITHUB-TOKEN", token_canary)],
    );
    assert_eq!(run.code(), 0, "{}", run.stdout());
    assert_eq!(github.ours().len(), 1);
    let stdout = run.stdout();
    for canary in [header_canary, token_canary] {
        assert!(stdout.lines().any(|line| line == format!("::add-mask::{canary}")), "{canary} is masked");
        for line in stdout.lines().filter(|line| !line.starts_with("::add-mask::")) {
            assert!(!line.contains(canary), "leak in the log: {line}");
        }
        assert!(!run.stderr().contains(canary), "leak on stderr");
        for file in [
            "github_output.txt",
            "step_summary.md",
            "mcp-eval-report/report.json",
            "mcp-eval-report/junit.xml",
            "mcp-eval-report/summary.md",
        ] {
            assert!(!run.file(file).contains(canary), "leak in {file}");
        }
        for comment in github.comments() {
            assert!(!comment.body.contains(canary), "leak in a comment");
        }
    }
    // The mask lines come before anything else.
    let first_other = stdout.lines().position(|line| !line.starts_with("::add-mask::")).expect("log lines");
    let last_mask = stdout
        .lines()
        .collect::<Vec<_>>()
        .iter()
        .rposition(|line| line.starts_with("::add-mask::"))
        .expect("mask lines");
    assert!(last_mask < first_other);
}

#[test]
fn the_stdio_server_gets_server_env_and_none_of_the_steps_secrets() {
    let token_canary = "canary-tok-2f9c71e0";
    let set_canary = "canary-set-6d03b5a8";
    let passed_canary = "canary-pass-91e4c27b";
    let dir = tempfile::tempdir().expect("temp dir");
    let dumps = tempfile::tempdir().expect("temp dir");
    let server_env = format!("API_KEY={set_canary}\nPASSED");
    let run = run_action_with_env(
        dir.path(),
        "push",
        "push.json",
        "http://127.0.0.1:9",
        &[
            ("SERVER-COMMAND", &env_dumping_stdio_command(dumps.path())),
            ("SERVER-ENV", &server_env),
            ("GITHUB-TOKEN", token_canary),
            ("COMMENT", "false"),
        ],
        &[("GITHUB_TOKEN", token_canary), ("ACTIONS_RUNTIME_TOKEN", token_canary), ("PASSED", passed_canary)],
    );
    assert_eq!(run.code(), 0, "{}\n{}", run.stdout(), run.stderr());
    let seen = env_dumps(dumps.path());
    assert!(!seen.is_empty(), "the server command ran");
    for env in &seen {
        assert!(!env.contains(token_canary), "the token reached the server: {env}");
        assert!(!env.contains("INPUT_"), "an input reached the server: {env}");
        assert!(env.lines().any(|line| line == format!("API_KEY={set_canary}")), "{env}");
        assert!(env.lines().any(|line| line == format!("PASSED={passed_canary}")), "{env}");
    }
    let stdout = run.stdout();
    for canary in [set_canary, passed_canary] {
        assert!(stdout.lines().any(|line| line == format!("::add-mask::{canary}")), "{canary} is masked");
        for line in stdout.lines().filter(|line| !line.starts_with("::add-mask::")) {
            assert!(!line.contains(canary), "leak in the log: {line}");
        }
        for file in
            ["github_output.txt", "step_summary.md", "mcp-eval-report/report.json", "mcp-eval-report/summary.md"]
        {
            assert!(!run.file(file).contains(canary), "leak in {file}");
        }
    }

    // A value only the config file holds is masked too, before any other line.
    let file_canary = "canary-file-0b7d5e93";
    let workspace = dir.path().join("from-file");
    std::fs::create_dir_all(&workspace).expect("workspace");
    let command = env_dumping_stdio_command(dumps.path()).replace('\'', "''");
    std::fs::write(
        workspace.join("mcp-eval.yaml"),
        format!("server:\n  command: '{command}'\n  env: [FILE_KEY={file_canary}]\n"),
    )
    .expect("config");
    let run = run_action(&workspace, "push", "push.json", "http://127.0.0.1:9", &[("CONFIG", "mcp-eval.yaml")]);
    assert_eq!(run.code(), 0, "{}\n{}", run.stdout(), run.stderr());
    assert!(env_dumps(dumps.path()).iter().any(|env| env.contains(&format!("FILE_KEY={file_canary}"))));
    let stdout = run.stdout();
    let mask = stdout.lines().position(|line| line == format!("::add-mask::{file_canary}")).expect("masked");
    let first_other = stdout.lines().position(|line| !line.starts_with("::add-mask::")).expect("log lines");
    assert!(mask < first_other, "{stdout}");
    assert!(!run.file("mcp-eval-report/report.json").contains(file_canary));
}

#[test]
fn the_junit_file_parses_with_junitparser_and_every_testcase_has_a_time() {
    let python = repo_root().join(".interop/lint-venv/bin/python");
    assert!(
        python.exists(),
        "junitparser is not installed: run `scripts/install-action-tools.sh` (scripts/test.sh runs it); expected {}",
        python.display()
    );
    let demo = DemoServer::start(&["d-2"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let run = run_action(
        dir.path(),
        "push",
        "push.json",
        "http://127.0.0.1:9",
        &[("SERVER-URL", &demo.url), ("FAIL-ON", "never")],
    );
    assert_eq!(run.code(), 0, "{}", run.stdout());
    let script = r#"
import sys
from junitparser import JUnitXml, Failure
xml = JUnitXml.fromfile(sys.argv[1])
cases = failures = 0
for suite in xml:
    for case in suite:
        cases += 1
        assert case._elem.get("time") is not None, "testcase without time: " + case.name
        float(case._elem.get("time"))
        if any(isinstance(r, Failure) for r in case.result):
            failures += 1
assert cases > 50, cases
print(cases, failures)
"#;
    let junit = dir.path().join("mcp-eval-report/junit.xml");
    let output = Command::new(&python).args(["-c", script]).arg(&junit).output().expect("run python");
    assert!(output.status.success(), "junitparser rejected the file: {}", String::from_utf8_lossy(&output.stderr));
    let printed = String::from_utf8_lossy(&output.stdout);
    let failures: usize = printed.split_whitespace().nth(1).and_then(|n| n.parse().ok()).expect("counts");
    assert!(failures >= 1, "the D-2 failure is a <failure>: {printed}");
}

#[test]
fn the_eval_label_runs_layer_1_with_the_golden_set_and_models_and_masks_the_keys() {
    let demo = DemoServer::start(&[]);
    let github = FakeGithub::start(Mode::Normal, 0, 0);
    let dir = tempfile::tempdir().expect("temp dir");
    let (workspace, set) = workspace_with_set(
        dir.path(),
        "version: 1\ndefaults: {runs: 3}\ncases:\n  - id: region\n    prompt: \"Echo my region, eu.\"\n    expect_tool: test_header_param\n    expect_args: {region: eu}\n  - id: thanks\n    prompt: \"Thanks!\"\n    negative: true\n",
    );
    let model = DemoModel::start(&set, &[]);
    let key = "sk-action-canary-5e1f0c";
    let base_url = format!("{}/v1", model.url);
    let run = run_action_with_env(
        &workspace,
        "pull_request",
        "pull_request_labeled_eval.json",
        &github.url,
        &[
            ("SERVER-URL", &demo.url),
            ("GITHUB-TOKEN", "t0ken"),
            ("GOLDEN-SET", "golden/tasks.yaml"),
            ("MODELS", "openai:scripted\nanthropic:claude-test\n"),
            ("OPENAI-API-KEY", key),
        ],
        &[("OPENAI_BASE_URL", &base_url)],
    );
    assert_eq!(run.code(), 0, "{}", run.stdout());
    let outputs = run.outputs();
    assert_eq!(outputs["layers-run"], "0,1,2,3", "layers 2 and 3 run wherever layer 1 runs");
    assert_eq!(outputs["cases-passed"], "2");
    assert_eq!(outputs["cases-failed"], "0");
    assert!(run.stdout().contains(&format!("::add-mask::{key}")), "the key is masked first");
    let summary = run.file("step_summary.md");
    assert!(summary.contains("| region |") && summary.contains("✅ 3/3"), "{summary}");
    assert!(summary.contains("anthropic:claude-test") && summary.contains("no API key"), "{summary}");
    let comment = &github.ours()[0].body;
    assert!(comment.contains("| region |"), "the comment carries the cases × models table");
    let everything = format!(
        "{}{}{}{}",
        summary,
        comment,
        run.file("mcp-eval-report/report.json"),
        run.file("mcp-eval-report/junit.xml")
    );
    assert!(!everything.contains(key), "the key leaked into a report or the comment");
    let report: serde_json::Value =
        serde_json::from_str(&run.file("mcp-eval-report/report.json")).expect("report.json");
    assert_eq!(report["golden_set"]["path"], "golden/tasks.yaml", "as given, not the runner's workspace path");
    let workspace_path = workspace.display().to_string();
    assert!(!everything.contains(&workspace_path), "the runner's workspace path is shown nowhere");
    let masked_stdout = run.stdout().replace(&format!("::add-mask::{key}"), "");
    assert!(!masked_stdout.contains(key), "the key appears in the log beyond its mask command");
}

#[test]
fn the_full_matrix_schedule_runs_every_model_and_another_schedule_only_the_first() {
    let demo = DemoServer::start(&[]);
    let github = FakeGithub::start(Mode::Normal, 0, 0);
    for (cron, models_run) in
        [("17 3 * * *", &["openai:scripted", "anthropic:claude-test"][..]), ("0 3 * * 0", &["openai:scripted"][..])]
    {
        let dir = tempfile::tempdir().expect("temp dir");
        let (workspace, set) = workspace_with_set(
            dir.path(),
            "version: 1\ndefaults: {runs: 1}\ncases:\n  - id: thanks\n    prompt: \"Thanks!\"\n    negative: true\n",
        );
        let model = DemoModel::start(&set, &[]);
        let base_url = format!("{}/v1", model.url);
        // The payload's cron is `17 3 * * *`.
        let run = run_action_with_env(
            &workspace,
            "schedule",
            "schedule.json",
            &github.url,
            &[
                ("SERVER-URL", &demo.url),
                ("GOLDEN-SET", "golden/tasks.yaml"),
                ("MODELS", "openai:scripted\nanthropic:claude-test\n"),
                ("OPENAI-API-KEY", "sk-schedule-test"),
                ("FULL-MATRIX-SCHEDULE", cron),
                ("LAYERS", "1"),
            ],
            &[("OPENAI_BASE_URL", &base_url)],
        );
        let report: serde_json::Value =
            serde_json::from_str(&run.file("mcp-eval-report/report.json")).expect("report.json");
        let models: Vec<&str> =
            report["models"].as_array().expect("models").iter().filter_map(|m| m.as_str()).collect();
        assert_eq!(models, models_run, "full-matrix-schedule {cron}: {}", run.stdout());
        let summary = run.file("step_summary.md");
        let why = if models_run.len() == 2 {
            "is the full-matrix schedule"
        } else {
            "only the primary model `openai:scripted` runs"
        };
        assert!(summary.contains(why), "{cron}: {summary}");
        assert!(run.stdout().contains("mcp-eval: models: "), "{}", run.stdout());
    }
}

/// `mcp-eval run --demo --out OUT` with `extra` flags; the exit status.
fn run_demo_into(out: &Path, extra: &[&str]) -> i32 {
    let output = Command::new(binary())
        .args(["run", "--demo", "--quiet", "--out"])
        .arg(out)
        .args(extra)
        .env("OPENAI_API_KEY", "")
        .env("ANTHROPIC_API_KEY", "")
        .stdin(Stdio::null())
        .output()
        .expect("run mcp-eval");
    output.status.code().unwrap_or(-1)
}

/// `(case, model, status, passed, runs)` of every eval of the report at `path`.
fn eval_verdicts(path: &Path) -> Vec<(String, String, String, u64, u64)> {
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("report.json")).expect("JSON");
    report["evals"]
        .as_array()
        .expect("evals")
        .iter()
        .map(|eval| {
            let text = |key: &str| eval[key].as_str().unwrap_or_default().to_owned();
            let number = |key: &str| eval[key].as_u64().unwrap_or(u64::MAX);
            (text("case"), text("model"), text("status"), number("passed"), number("runs"))
        })
        .collect()
}

#[test]
fn merge_reports_joins_the_shards_and_posts_one_comment() {
    let github = FakeGithub::start(Mode::Normal, 0, 0);
    let dir = tempfile::tempdir().expect("temp dir");
    let workspace = dir.path().join("ws");
    let whole = dir.path().join("whole");
    let whole_code = run_demo_into(&whole, &[]);
    for index in 1..=2 {
        let code =
            run_demo_into(&workspace.join(format!("reports/shard-{index}")), &["--shard", &format!("{index}/2")]);
        assert!(code == 0 || code == 1, "shard {index}: exit {code}");
    }
    let run = run_action(
        &workspace,
        "pull_request",
        "pull_request_opened.json",
        &github.url,
        &[("MERGE-REPORTS", "reports/*"), ("GITHUB-TOKEN", "ghs_faketoken")],
    );
    assert_eq!(run.code(), whole_code, "{}\n{}", run.stdout(), run.stderr());
    assert!(run.stdout().contains("merging 2 report(s)"), "{}", run.stdout());
    assert_eq!(
        eval_verdicts(&workspace.join("mcp-eval-report/report.json")),
        eval_verdicts(&whole.join("report.json")),
        "the merged verdicts are the unsharded ones"
    );
    let outputs = run.outputs();
    assert_eq!(outputs["layers-run"], "0,1");
    assert_ne!(outputs["cases-passed"], "");
    assert_eq!(outputs["gate"], "no-baseline", "the merge job gates the whole run (nothing stored yet)");
    assert!(run.file("mcp-eval-report/junit.xml").contains("<testsuite"));
    assert_eq!(github.ours().len(), 1, "one comment for the merged run");

    // Shards of another golden set are refused, naming the files: exit 2, no comment.
    let other = dir.path().join("other");
    for index in 1..=2 {
        let shard = other.join(format!("reports/shard-{index}"));
        run_demo_into(&shard, &["--shard", &format!("{index}/2")]);
        if index == 2 {
            let path = shard.join("report.json");
            let text = std::fs::read_to_string(&path).expect("report.json");
            let mut report: serde_json::Value = serde_json::from_str(&text).expect("JSON");
            report["golden_set"]["sha256"] = serde_json::json!("sha256:other");
            std::fs::write(&path, report.to_string()).expect("rewrite");
        }
    }
    let refused = run_action(
        &other,
        "pull_request",
        "pull_request_opened.json",
        &github.url,
        &[("MERGE-REPORTS", "reports/*"), ("GITHUB-TOKEN", "ghs_faketoken")],
    );
    assert_eq!(refused.code(), 2, "{}", refused.stdout());
    assert!(refused.stdout().contains("different golden sets"), "{}", refused.stdout());
    assert!(refused.stdout().contains("shard-2/report.json"), "{}", refused.stdout());
    assert_eq!(github.ours().len(), 1, "no comment for refused shards");
}

#[test]
fn a_scheduled_run_stores_the_baseline_and_a_pull_request_that_regresses_fails_the_gate() {
    let demo = DemoServer::start(&[]);
    let github = FakeGithub::start(Mode::Normal, 0, 0);
    let dir = tempfile::tempdir().expect("temp dir");
    let (workspace, set) = workspace_with_set(
        dir.path(),
        "version: 1\ndefaults: {runs: 5}\ncases:\n  - id: c0\n    prompt: \"Echo my region, eu.\"\n    expect_tool: test_header_param\n    expect_args: {region: eu}\n  - id: c1\n    prompt: \"Give me the short text.\"\n    expect_tool: test_simple_text\n  - id: c2\n    prompt: \"What is the temperature?\"\n    expect_tool: test_structured\n",
    );
    // One port for both models: the baseline is kept per endpoint.
    let port =
        std::net::TcpListener::bind("127.0.0.1:0").expect("a free port").local_addr().expect("addr").port().to_string();
    let inputs = |url: &str, server_key: &str| -> Vec<(String, String)> {
        vec![
            ("SERVER-URL".into(), url.to_owned()),
            ("GITHUB-TOKEN".into(), "t0ken".into()),
            ("GOLDEN-SET".into(), "golden/tasks.yaml".into()),
            ("MODELS".into(), "openai:scripted".into()),
            ("OPENAI-API-KEY".into(), "sk-gate-canary".into()),
            ("CACHE-KEY".into(), server_key.to_owned()),
        ]
    };
    let as_refs = |pairs: &[(String, String)]| -> Vec<(String, String)> { pairs.to_vec() };
    // The server key stands for the server's code: the pull request changed it, so no verdict of
    // the nightly run is reused.
    let run = |event: &str, file: &str, model: &DemoModel, server_key: &str| {
        let owned = as_refs(&inputs(&demo.url, server_key));
        let borrowed: Vec<(&str, &str)> = owned.iter().map(|(name, value)| (name.as_str(), value.as_str())).collect();
        let base = format!("{}/v1", model.url);
        run_action_with_env(&workspace, event, file, &github.url, &borrowed, &[("OPENAI_BASE_URL", &base)])
    };

    let good = DemoModel::start(&set, &["--port", &port]);
    let nightly = run("schedule", "schedule.json", &good, "server-v1");
    assert_eq!(nightly.code(), 0, "{}", nightly.stdout());
    assert!(workspace.join(".mcp-eval-cache/baselines.json").is_file(), "the scheduled run stored the baseline");
    let summary = nightly.file("step_summary.md");
    assert!(summary.contains("stored as the baseline"), "{summary}");
    // The baseline line does not contradict the note: there was none before this run, and now
    // there is.
    assert!(!summary.contains("none stored yet"), "{summary}");
    assert!(
        summary.contains("none before this run: this run's layer-1 results are now stored as the baseline"),
        "{summary}"
    );
    drop(good);

    let worse = DemoModel::start(&set, &["--port", &port, "--flaky", "c0:1", "--flaky", "c2:1"]);
    let pull = run("pull_request", "pull_request_labeled_eval.json", &worse, "server-v2");
    assert_eq!(pull.code(), 1, "the gate fails a real regression: {}", pull.stdout());
    let outputs = pull.outputs();
    assert_eq!(outputs["gate"], "fail");
    assert!(outputs["pass-rate-delta"].starts_with('-'), "{outputs:?}");
    let comment = github.ours().last().expect("a comment").body.clone();
    assert!(comment.contains("**Since the baseline:**"), "{comment}");
    assert!(
        comment.contains("`c0` on `openai:scripted`: pass 5/5 → fail 0/10"),
        "the confirmation runs pooled: {comment}"
    );
    assert!(comment.contains("layer 0 since the baseline: no change"), "layer 0 against the baseline too: {comment}");
    let stored = std::fs::read_to_string(workspace.join(".mcp-eval-cache/baselines.json")).expect("baseline");
    assert!(!stored.contains("sk-gate-canary"));
    drop(worse);

    // A pull request that changes nothing the verdicts depend on: every verdict reused, zero
    // model calls, and the gate says "no change".
    let good = DemoModel::start(&set, &["--port", &port]);
    let unchanged = run("pull_request", "pull_request_labeled_eval.json", &good, "server-v1");
    assert_eq!(unchanged.code(), 0, "{}", unchanged.stdout());
    assert_eq!(unchanged.outputs()["gate"], "pass");
    let report: serde_json::Value =
        serde_json::from_str(&unchanged.file("mcp-eval-report/report.json")).expect("report.json");
    assert_eq!(report["model_calls"], 0);
    let comment = github.ours().last().expect("a comment").body.clone();
    assert!(comment.contains("no change — every verdict was reused from the cache"), "{comment}");
}

#[test]
fn a_push_to_the_default_branch_that_passes_its_gate_stores_the_baseline() {
    let demo = DemoServer::start(&[]);
    let github = FakeGithub::start(Mode::Normal, 0, 0);
    let dir = tempfile::tempdir().expect("temp dir");
    let (workspace, set) = workspace_with_set(
        dir.path(),
        "version: 1\ndefaults: {runs: 2}\ncases:\n  - id: c0\n    prompt: \"Echo my region, eu.\"\n    expect_tool: test_header_param\n    expect_args: {region: eu}\n",
    );
    let model = DemoModel::start(&set, &[]);
    let base = format!("{}/v1", model.url);
    let run = run_action_with_env(
        &workspace,
        "push",
        "push.json",
        &github.url,
        &[
            ("SERVER-URL", &demo.url),
            ("LAYERS", "0,1"),
            ("GOLDEN-SET", "golden/tasks.yaml"),
            ("MODELS", "openai:scripted"),
            ("OPENAI-API-KEY", "sk-push-canary"),
        ],
        &[("OPENAI_BASE_URL", &base)],
    );
    assert_eq!(run.code(), 0, "{}", run.stdout());
    let stored =
        std::fs::read_to_string(workspace.join(".mcp-eval-cache/baselines.json")).expect("the baseline was stored");
    assert!(stored.contains("\"reason\":\"push\""), "{stored}");
    assert_eq!(run.outputs()["gate"], "no-baseline", "the first run had nothing to compare with");
}

/// A workspace `DIR/ws` holding `golden/tasks.yaml` with `set`; the workspace and the set's path.
fn workspace_with_set(dir: &Path, set: &str) -> (PathBuf, PathBuf) {
    let workspace = dir.join("ws");
    std::fs::create_dir_all(workspace.join("golden")).expect("golden dir");
    let path = workspace.join("golden/tasks.yaml");
    std::fs::write(&path, set).expect("write the set");
    (workspace, path)
}

#[test]
fn scheduled_runs_store_layer_3s_trends_and_a_pull_requests_comment_draws_them() {
    let demo = DemoServer::start(&[]);
    let github = FakeGithub::start(Mode::Normal, 0, 0);
    let dir = tempfile::tempdir().expect("temp dir");
    let (workspace, set) = workspace_with_set(
        dir.path(),
        "version: 1\ndefaults: {runs: 1}\ncases:\n  - id: region\n    prompt: \"Echo my region, eu.\"\n    expect_tool: test_header_param\n    expect_args: {region: eu}\n",
    );
    let model = DemoModel::start(&set, &[]);
    let base_url = format!("{}/v1", model.url);
    let inputs = |extra: &[(&'static str, &'static str)]| -> Vec<(&str, String)> {
        let mut inputs = vec![
            ("SERVER-URL", demo.url.clone()),
            ("GITHUB-TOKEN", "t0ken".to_owned()),
            ("GOLDEN-SET", "golden/tasks.yaml".to_owned()),
            ("MODELS", "openai:scripted".to_owned()),
            ("OPENAI-API-KEY", "sk-trends-test".to_owned()),
            ("LAYERS", "1,3".to_owned()),
        ];
        inputs.extend(extra.iter().map(|(name, value)| (*name, (*value).to_owned())));
        inputs
    };
    let report = |run: &ActionRun| -> serde_json::Value {
        serde_json::from_str(&run.file("mcp-eval-report/report.json")).expect("report.json")
    };
    // Two nightly runs of the default branch store the baseline, layer 3's figures with it.
    for _ in 0..2 {
        let given = inputs(&[]);
        let given: Vec<(&str, &str)> = given.iter().map(|(name, value)| (*name, value.as_str())).collect();
        let run = run_action_with_env(
            &workspace,
            "schedule",
            "schedule.json",
            &github.url,
            &given,
            &[("OPENAI_BASE_URL", &base_url)],
        );
        assert_eq!(run.code(), 0, "{}", run.stdout());
        assert_eq!(report(&run)["telemetry"]["trends"]["stored"], true, "{}", run.stdout());
    }
    let trends: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(workspace.join(".mcp-eval-cache/trends.json")).expect("trends"))
            .expect("json");
    let commits: Vec<&str> =
        trends["runs"].as_array().expect("runs").iter().filter_map(|run| run["commit"].as_str()).collect();
    assert_eq!(commits, ["abc123", "abc123"], "each stored run names its commit: {trends}");

    // A labelled pull request (its verdict cache off, so its trials are measured): compared
    // with the stored runs, not stored, and its comment draws the three runs.
    let given = inputs(&[("CACHE", "off")]);
    let given: Vec<(&str, &str)> = given.iter().map(|(name, value)| (*name, value.as_str())).collect();
    let run = run_action_with_env(
        &workspace,
        "pull_request",
        "pull_request_labeled_eval.json",
        &github.url,
        &given,
        &[("OPENAI_BASE_URL", &base_url)],
    );
    assert_eq!(run.code(), 0, "{}", run.stdout());
    let telemetry = &report(&run)["telemetry"];
    assert_eq!(telemetry["deltas"]["stored_runs"], 2, "{telemetry}");
    assert_eq!(telemetry["trends"]["stored"], false, "a pull request never stores");
    assert_eq!(telemetry["trends"]["points"].as_array().map(Vec::len), Some(3), "{telemetry}");
    let comment = &github.ours()[0].body;
    assert!(comment.contains("#### Layer 3 since the baseline"), "{comment}");
    assert!(comment.contains("```mermaid\nxychart-beta\n    title \"p95 latency per tool\""), "{comment}");
    let summary = run.file("step_summary.md");
    assert!(summary.contains("xychart-beta"), "the job summary draws them too: {summary}");
}

#[test]
fn the_actions_sarif_points_at_the_workflow_step_that_runs_it() {
    let demo = DemoServer::start(&["t-2"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let workflows = dir.path().join(".github/workflows");
    std::fs::create_dir_all(&workflows).expect("workflows");
    std::fs::write(
        workflows.join("mcp.yml"),
        "on: push\njobs:\n  mcp:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - uses: org/mcp-eval-action@v1\n        with:\n          sarif-path: mcp-eval.sarif\n",
    )
    .expect("workflow");
    let run = run_action_with_env(
        dir.path(),
        "push",
        "push.json",
        "http://127.0.0.1:9",
        &[("SERVER-URL", &demo.url), ("FAIL-ON", "never"), ("SARIF-PATH", "mcp-eval.sarif")],
        &[("GITHUB_WORKFLOW_REF", "octo/server/.github/workflows/mcp.yml@refs/heads/main")],
    );
    assert_eq!(run.code(), 0, "{}", run.stdout());
    let log = crate::sarif::read_sarif(&dir.path().join("mcp-eval.sarif"));
    let results = log["results"].as_array().expect("results");
    let t2 = results.iter().find(|result| result["rule"] == "T-2").unwrap_or_else(|| panic!("no T-2: {log}"));
    assert_eq!((t2["uri"].as_str(), t2["line"].as_u64()), (Some(".github/workflows/mcp.yml"), Some(7)), "{t2}");
}

#[test]
fn a_fork_pull_request_without_keys_runs_golden_check_execute_in_place_of_layer_1() {
    let dir = tempfile::tempdir().expect("temp dir");
    let calls = dir.path().join("calls.jsonl");
    let demo = DemoServer::start_with(&["--calls-log", calls.to_str().expect("utf-8")]);
    let github = FakeGithub::start(Mode::Normal, 0, 0);
    let (workspace, _set) = workspace_with_set(
        dir.path(),
        "version: 1\ndefaults: {runs: 3}\ncases:\n  - id: region\n    prompt: \"Echo my region, eu.\"\n    expect_tool: test_header_param\n    expect_args: {region: eu}\n  - id: thanks\n    prompt: \"Thanks!\"\n    negative: true\n",
    );
    // A fork's pull request: the secrets are empty.
    let run = run_action(
        &workspace,
        "pull_request",
        "pull_request_labeled_eval.json",
        &github.url,
        &[
            ("SERVER-URL", &demo.url),
            ("GITHUB-TOKEN", "t0ken"),
            ("GOLDEN-SET", "golden/tasks.yaml"),
            ("MODELS", "openai:gpt-4.1-mini\n"),
        ],
    );
    assert_eq!(run.code(), 0, "no key is not a failure: {}", run.stdout());
    let report: serde_json::Value =
        serde_json::from_str(&run.file("mcp-eval-report/report.json")).expect("report.json");
    let executed = &report["expected_calls"];
    assert_eq!(
        (executed["expected"].as_u64(), executed["sent"].as_u64(), executed["ok"].as_u64()),
        (Some(1), Some(1), Some(1)),
        "{executed}"
    );
    let logged = std::fs::read_to_string(&calls).expect("the calls log");
    let sent = logged.lines().filter(|line| line.contains("\"test_header_param\"") && line.contains("\"eu\"")).count();
    assert_eq!(sent, 1, "the expected call, once: {logged}");
    let summary = run.file("step_summary.md");
    assert!(
        summary.contains("**In its place:** `golden check --execute` made each expected call for real, with no model"),
        "{summary}"
    );
    assert!(github.ours()[0].body.contains("golden check --execute"), "the comment says so too");
}

#[test]
fn the_migration_scan_input_annotates_each_finding_and_tables_them_without_failing_the_job() {
    let demo = DemoServer::start(&[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(workspace.join("src")).expect("src");
    std::fs::write(
        workspace.join("src/server.ts"),
        "import express from \"express\";\nconst app = express();\n// an MCP server\napp.post(\"/mcp\", (req, res) => {\n  const session = req.headers[\"mcp-session-id\"];\n  if (req.body.method === \"initialize\") { res.json({}); }\n});\n",
    )
    .expect("server");
    std::fs::write(
        workspace.join("package.json"),
        "{\n  \"name\": \"my-server\",\n  \"dependencies\": {\n    \"@modelcontextprotocol/sdk\": \"^1.20.0\"\n  }\n}\n",
    )
    .expect("package.json");
    let run = run_action(
        &workspace,
        "push",
        "push.json",
        "http://127.0.0.1:9",
        &[("SERVER-URL", &demo.url), ("MIGRATION-SCAN", "true")],
    );
    assert_eq!(run.code(), 0, "findings never fail the job: {}", run.stdout());
    let stdout = run.stdout();
    assert!(stdout.contains("::warning file=package.json,line=4,title=mcp-eval MIG-14::"), "{stdout}");
    assert!(stdout.contains("file=src/server.ts,line=5,title=mcp-eval MIG-7::"), "{stdout}");
    assert!(stdout.contains("file=src/server.ts,line=6,title=mcp-eval MIG-1::"), "{stdout}");
    let summary = run.file("step_summary.md");
    assert!(summary.contains("### 🧭 Migration to MCP 2026-07-28"), "{summary}");
    assert!(summary.contains("| `src/server.ts:6` | MIG-1 |"), "{summary}");

    // Off by default.
    let quiet = run_action(&workspace, "push", "push.json", "http://127.0.0.1:9", &[("SERVER-URL", &demo.url)]);
    assert!(!quiet.stdout().contains("MIG-"), "{}", quiet.stdout());
}

#[test]
fn the_eval_label_with_a_seven_case_set_and_no_key_runs_and_writes_its_report_and_faults_over_a_lowered_cap_are_a_budget_error()
 {
    let demo = DemoServer::start(&[]);
    let github = FakeGithub::start(Mode::Normal, 0, 0);
    let dir = tempfile::tempdir().expect("temp dir");
    // 7 cases over the demo server's 4 tools: the default suite is over the default cap with
    // layer 1's calls, which refused the run before it was sampled.
    let cases = [
        ("temp-c", "test_structured"),
        ("temp-f", "test_structured"),
        ("region", "test_header_param"),
        ("region-us", "test_header_param"),
        ("short", "test_simple_text"),
        ("short-again", "test_simple_text"),
        ("progress", "test_progress"),
    ];
    let mut text = String::from("version: 1\ncases:\n");
    for (id, tool) in cases {
        text.push_str(&format!("  - id: {id}\n    prompt: \"Use {tool}.\"\n    expect_tool: {tool}\n"));
    }
    let (workspace, _) = workspace_with_set(&dir.path().join("no-key"), &text);
    let inputs =
        [("SERVER-URL", demo.url.as_str()), ("GOLDEN-SET", "golden/tasks.yaml"), ("MODELS", "openai:gpt-4.1-mini")];
    let run = run_action(&workspace, "pull_request", "pull_request_labeled_eval.json", &github.url, &inputs);
    assert_eq!(run.code(), 0, "{}", run.stdout());
    assert_ne!(run.outputs()["result"], "error", "{}", run.stdout());
    assert!(!run.stdout().contains("problem(s)") && !run.stdout().contains("over the cap"), "{}", run.stdout());
    let report: serde_json::Value =
        serde_json::from_str(&run.file("mcp-eval-report/report.json")).expect("report.json");
    assert!(report["resilience"]["not_run"].as_str().is_some_and(|why| why.contains("no model could run")), "{report}");

    let faults = text.replace("cases:\n", "defaults:\n  faults: [{tool: test_structured, fault: timeout}]\ncases:\n");
    let (workspace, _) = workspace_with_set(&dir.path().join("capped"), &faults);
    let capped = [
        ("SERVER-URL", demo.url.as_str()),
        ("GOLDEN-SET", "golden/tasks.yaml"),
        ("MODELS", "openai:gpt-4.1-mini"),
        ("OPENAI-API-KEY", "sk-action-canary-0b7d"),
        ("MAX-MODEL-CALLS", "300"),
    ];
    let run = run_action(&workspace, "pull_request", "pull_request_labeled_eval.json", &github.url, &capped);
    assert_eq!(run.code(), 2, "{}", run.stdout());
    assert_eq!(run.outputs()["result"], "error");
    let summary = run.file("step_summary.md");
    assert!(summary.contains("model-call budget: layer 2 plans 7 variant(s)"), "{summary}");
    assert!(summary.contains("`max-model-calls`") && summary.contains("`runs`"), "{summary}");
    assert!(!summary.contains("problem(s)") && !summary.contains("sk-action-canary-0b7d"), "{summary}");
}

/// The loopback forward (`action::runner_host`) is for the Docker action's container only (the
/// workspace at `/github/workspace`): a run elsewhere — on the runner, or in a developer's or
/// CI's own container, which has `/.dockerenv` too — keeps a loopback `server-url` as given and
/// never sends a request to its default gateway.
#[test]
fn a_loopback_server_url_outside_the_actions_container_is_used_as_given() {
    let dir = tempfile::tempdir().expect("temp dir");
    let inputs =
        [("SERVER-URL", "http://127.0.0.1:9/mcp"), ("LAYERS", "0"), ("COMMENT", "false"), ("TIMEOUT-SECONDS", "2")];
    let run = run_action(dir.path(), "push", "push.json", "http://127.0.0.1:9", &inputs);
    assert_eq!(run.code(), 3, "unreachable: {}\n{}", run.stdout(), run.stderr());
    assert!(!run.stdout().contains("reached as") && !run.stdout().contains("is forwarded to"), "{}", run.stdout());
    let report = std::fs::read_to_string(run.workspace.join("mcp-eval-report/report.json")).expect("report.json");
    let report: serde_json::Value = serde_json::from_str(&report).expect("report.json parses");
    assert_eq!(report["server"]["target"], "http://127.0.0.1:9/mcp", "{report}");
}
