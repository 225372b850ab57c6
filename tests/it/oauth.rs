//! Protected servers: a server behind the official Python SDK's own auth support
//! (`scripts/py_protected.py`, `mcp.server.auth`) and an authorization server issuing JWT access
//! tokens by the client-credentials grant with resource indicators: panva's `oidc-provider`
//! (`scripts/oidc_as.mjs`, OpenID discovery only) or a small fixture (`scripts/py_oauth_as.py`:
//! RFC 8414 metadata, `client_secret_post` only, and a list of the tokens it issued for the leak
//! scans). All on loopback, installed by `scripts/install-servers.sh`.
//!
//! What is pinned: the SDK's OAuth refusals are graded by the authorization rows, not as JSON-RPC
//! (M-10); the CI client signs in (discovery from the 401, RFC 8414 or OpenID metadata,
//! `client_secret_basic` or `_post`), renews its token when it expires mid-run, and a refusal by
//! the authorization server is one error naming its `error`; neither the secret nor any token
//! reaches any output.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::{Listening, binary, free_port, repo_root};

const CLIENT_ID: &str = "ci-client";
const SECRET: &str = "canary-client-secret-9c41e7";

/// The interop venv's python; fails the test, with the fix, when it is not installed.
fn python() -> PathBuf {
    let python = repo_root().join(".interop").join("venv").join("bin").join("python");
    assert!(python.exists(), "the interop venv is not installed: run `scripts/install-servers.sh` first");
    python
}

/// oidc-provider's node, with the fix when it is not installed.
fn node() -> PathBuf {
    let interop = repo_root().join(".interop");
    assert!(
        interop.join("oidc").join("node_modules").join("oidc-provider").is_dir(),
        "oidc-provider is not installed: run `scripts/install-servers.sh` first"
    );
    interop.join("bin").join("node22")
}

/// A script of `scripts/` run by the venv's python (or node for `.mjs`), listening on a
/// loopback port; its process group is killed on drop.
struct Script(Listening);

impl Script {
    fn start(script: &str, port: u16, args: &[&str]) -> Self {
        let interpreter = if script.ends_with(".mjs") { node() } else { python() };
        let mut command = Command::new(interpreter);
        command.arg(repo_root().join("scripts").join(script)).arg(port.to_string()).args(args);
        Self(Listening::start(command, script, port, Duration::from_secs(30)))
    }

    fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.0.port)
    }

    fn mcp_url(&self) -> String {
        format!("{}/mcp", self.origin())
    }
}

/// Which authorization server.
#[derive(Clone, Copy, PartialEq)]
enum Issuer {
    /// panva's oidc-provider.
    Oidc,
    /// `py_oauth_as.py`.
    Fixture,
}

/// An authorization server for `resources` and a server protected by it (`server_args` given
/// to `py_protected.py` after the issuer).
struct Protected {
    kind: Issuer,
    issuer: Script,
    server: Script,
}

impl Protected {
    fn start(kind: Issuer, as_args: &[&str], server_args: &[&str], other_resources: &[&str]) -> Self {
        let (as_port, server_port) = (free_port(), free_port());
        let resource = format!("http://127.0.0.1:{server_port}/mcp");
        let mut args = vec![CLIENT_ID, SECRET, "--resource", resource.as_str()];
        for other in other_resources {
            args.extend(["--resource", other]);
        }
        args.extend(as_args);
        let script = if kind == Issuer::Oidc { "oidc_as.mjs" } else { "py_oauth_as.py" };
        let issuer = Script::start(script, as_port, &args);
        let issuer_url = issuer.origin();
        let mut server_args_all = vec![issuer_url.as_str()];
        server_args_all.extend(server_args);
        let server = Script::start("py_protected.py", server_port, &server_args_all);
        Self { kind, issuer, server }
    }

    /// The tokens the fixture issued (oidc-provider does not tell: the leak scan then looks for
    /// any JWT).
    fn issued(&self) -> Vec<String> {
        if self.kind == Issuer::Oidc {
            return Vec::new();
        }
        let stats = get(&format!("{}/stats", self.issuer.origin()));
        stats["tokens"]
            .as_array()
            .map(|tokens| tokens.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default()
    }
}

/// A GET on loopback, its body as JSON (a few lines of HTTP/1.0, no client needed).
fn get(url: &str) -> Value {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").expect("http URL");
    let (authority, path) = rest.split_once('/').map_or((rest, "/".to_owned()), |(a, p)| (a, format!("/{p}")));
    let mut stream = TcpStream::connect(authority).expect("connect");
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {authority}\r\n\r\n").expect("write");
    let mut text = String::new();
    stream.read_to_string(&mut text).expect("read");
    let body = text.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    serde_json::from_str(body).unwrap_or(Value::Null)
}

/// One `mcp-eval run` with every output on: events, SARIF, reports; not quiet.
struct Outcome {
    output: Output,
    dir: tempfile::TempDir,
}

impl Outcome {
    fn run(args: &[&str], vars: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let out = dir.path().to_str().expect("utf-8").to_owned();
        let output = Command::new(binary())
            .arg("run")
            .args(args)
            .args(["--out", &out, "--events", &format!("{out}/events.jsonl"), "--sarif", &format!("{out}/x.sarif")])
            .env_remove("MCP_EVAL_OAUTH_CLIENT_SECRET")
            .envs(vars.iter().copied())
            .stdin(Stdio::null())
            .output()
            .expect("run mcp-eval");
        Self { output, dir }
    }

    fn code(&self) -> i32 {
        self.output.status.code().unwrap_or(-1)
    }

    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    fn report(&self) -> Value {
        let text = std::fs::read_to_string(self.dir.path().join("report.json"))
            .unwrap_or_else(|_| panic!("no report.json; stderr: {}", self.stderr()));
        serde_json::from_str(&text).expect("report.json parses")
    }

    fn check(&self, id: &str) -> (String, String) {
        let report = self.report();
        let check = report["checks"]
            .as_array()
            .and_then(|checks| checks.iter().find(|check| check["id"] == id).cloned())
            .unwrap_or_else(|| panic!("no {id}"));
        (
            check["status"].as_str().unwrap_or_default().to_owned(),
            check["message"].as_str().unwrap_or_default().to_owned(),
        )
    }

    /// Every file written and both streams, as one text.
    fn everything(&self) -> String {
        let mut all = String::from_utf8_lossy(&self.output.stdout).into_owned();
        all.push_str(&self.stderr());
        all.push_str(&files_text(self.dir.path()));
        all
    }
}

fn files_text(dir: &Path) -> String {
    let mut all = String::new();
    for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            all.push_str(&files_text(&path));
        } else if let Ok(text) = std::fs::read_to_string(&path) {
            all.push_str(&text);
        }
    }
    all
}

/// `mcp-eval run` against the server at `url`, signing in as [`CLIENT_ID`] with [`SECRET`]
/// from `MCP_EVAL_OAUTH_CLIENT_SECRET`, with `extra` arguments.
fn signed_in(url: &str, extra: &[&str]) -> Outcome {
    Outcome::run(
        &[&["--server-url", url, "--oauth-client-id", CLIENT_ID][..], extra].concat(),
        &[("MCP_EVAL_OAUTH_CLIENT_SECRET", SECRET)],
    )
}

fn assert_never_leaks(outcome: &Outcome, secrets: &[String]) {
    let everything = outcome.everything();
    assert!(!everything.contains(SECRET), "the client secret leaked");
    // Every JWT begins with the encoding of `{"alg` or `{"typ`.
    for start in ["eyJhbGci", "eyJ0eXAi"] {
        assert!(!everything.contains(start), "a JWT leaked");
    }
    for secret in secrets {
        // A JWT's first segment is the same header for every token: check the signature part.
        let tail = secret.rsplit('.').next().unwrap_or(secret);
        assert!(!everything.contains(tail), "a token leaked");
    }
}

#[test]
fn the_python_sdks_oauth_refusals_are_graded_by_the_authorization_rows_not_m10() {
    // A correct server behind the SDK's bearer middleware, with a valid token through --header:
    // its 401s carry RFC 6750 bodies (`{"error": "invalid_token", …}`), not JSON-RPC. M-10
    // graded them as malformed JSON-RPC and the run failed (exit 1).
    let port = free_port();
    let token = "static-token-4b1d9e2a77";
    let _server = Script::start("py_protected.py", port, &["http://127.0.0.1:9", "--static", token]);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let outcome = Outcome::run(&["--server-url", &url, "--header", &format!("Authorization: Bearer {token}")], &[]);
    let (m10, message) = outcome.check("M-10");
    assert_eq!(m10, "pass", "{message}");
    for id in ["A-1", "A-2", "A-3", "A-4"] {
        let (status, message) = outcome.check(id);
        assert_eq!(status, "pass", "{id}: {message}");
    }
    assert_eq!(outcome.code(), 0, "{}", outcome.stderr());
    assert_never_leaks(&outcome, &[token.to_owned()]);
}

#[test]
fn a_ci_client_signs_in_by_client_credentials_and_nothing_secret_leaks() {
    let protected = Protected::start(Issuer::Oidc, &[], &[], &[]);
    let url = protected.server.mcp_url();
    let outcome = signed_in(&url, &["--oauth-scopes", "mcp:read"]);
    assert_eq!(outcome.code(), 0, "{}", outcome.stderr());
    for id in ["A-1", "A-2", "A-3", "A-4", "M-10"] {
        let (status, message) = outcome.check(id);
        assert_eq!(status, "pass", "{id}: {message}");
    }
    let (a5, message) = outcome.check("A-5");
    assert_eq!(a5, "not_applicable", "{message}");
    assert!(message.contains("--oauth-other-resource"), "{message}");
    let (a6, message) = outcome.check("A-6");
    assert_eq!(a6, "not_applicable", "tokens live an hour: {message}");
    assert!(message.contains("live 3600 s"), "{message}");
    assert_never_leaks(&outcome, &protected.issued());
}

#[test]
fn discovery_falls_back_to_openid_metadata_and_client_secret_post() {
    let protected = Protected::start(Issuer::Fixture, &["--oidc-only", "--post-only"], &[], &[]);
    let url = protected.server.mcp_url();
    let outcome = Outcome::run(
        &["--server-url", &url, "--oauth-client-id", CLIENT_ID, "--oauth-client-secret-env", "MY_CI_SECRET"],
        &[("MY_CI_SECRET", SECRET)],
    );
    assert_eq!(outcome.code(), 0, "{}", outcome.stderr());
    assert_never_leaks(&outcome, &protected.issued());
}

#[test]
fn a_token_that_expires_mid_run_is_obtained_again() {
    // Tokens live 2 s; layer 0 takes longer than that against this server.
    let protected = Protected::start(Issuer::Fixture, &["--ttl", "2"], &[], &[]);
    let url = protected.server.mcp_url();
    let outcome = signed_in(&url, &[]);
    assert_eq!(outcome.code(), 0, "{}", outcome.stderr());
    let issued = protected.issued();
    assert!(issued.len() >= 2, "the token was obtained again when it expired: {} issued", issued.len());
    assert_never_leaks(&outcome, &issued);
}

#[test]
fn a_token_the_server_refuses_as_invalid_is_obtained_again_and_the_request_sent_once_more() {
    // The server refuses each token after its 25th request (as if revoked); tokens live an hour,
    // so only the 401 `invalid_token` can tell the client to obtain a new one.
    let protected = Protected::start(Issuer::Fixture, &[], &["--uses", "25"], &[]);
    let url = protected.server.mcp_url();
    let outcome = signed_in(&url, &[]);
    assert_eq!(outcome.code(), 0, "{}", outcome.stderr());
    let issued = protected.issued();
    assert!(issued.len() >= 3, "a new token after each refusal: {} issued", issued.len());
    assert_never_leaks(&outcome, &issued);
}

#[test]
fn a_refusal_by_the_authorization_server_is_one_error_naming_its_error_and_the_setting() {
    let protected = Protected::start(Issuer::Oidc, &[], &[], &[]);
    let url = protected.server.mcp_url();
    let wrong = "wrong-secret-5e0c11aa";
    let outcome = Outcome::run(
        &["--server-url", &url, "--oauth-client-id", CLIENT_ID],
        &[("MCP_EVAL_OAUTH_CLIENT_SECRET", wrong)],
    );
    assert_eq!(outcome.code(), 3, "{}", outcome.stderr());
    let stderr = outcome.stderr();
    assert!(stderr.contains("invalid_client"), "{stderr}");
    assert!(stderr.contains("client authentication failed"), "the AS's error_description: {stderr}");
    assert!(stderr.contains("hint:") && stderr.contains("--oauth-client-secret-env"), "{stderr}");
    assert!(stderr.contains("--oauth-client-id"), "names the setting to check: {stderr}");
    assert!(!outcome.everything().contains(wrong), "the wrong secret leaked");
    // No secret at all: a settings error (exit 2) naming the variable.
    let missing = Outcome::run(&["--server-url", &url, "--oauth-client-id", CLIENT_ID], &[]);
    assert_eq!(missing.code(), 2, "{}", missing.stderr());
    assert!(missing.stderr().contains("MCP_EVAL_OAUTH_CLIENT_SECRET"), "{}", missing.stderr());
}

/// against a server of the SDK's (`lax`: the variant that checks neither the
/// audience nor the expiry and takes a token from the query string): the run's exit status and
/// each row's status, with the evidence of a failure.
fn token_probes(lax: bool) -> Outcome {
    token_probes_with(if lax { &["--lax"] } else { &[] })
}

/// [`token_probes`] with these arguments to `py_protected.py`.
fn token_probes_with(server_args: &[&str]) -> Outcome {
    let other = "http://127.0.0.1:9/another-mcp";
    // Tokens live 3 s, so A-6 can wait one out (and the sign-in renews its own on the way).
    let protected = Protected::start(Issuer::Oidc, &["--ttl", "3"], server_args, &[other]);
    let url = protected.server.mcp_url();
    let outcome = signed_in(&url, &["--oauth-other-resource", other]);
    assert_never_leaks(&outcome, &protected.issued());
    outcome
}

#[test]
fn a_server_checking_audience_and_expiry_passes_the_token_probes() {
    let outcome = token_probes(false);
    for id in ["A-3", "A-4", "A-5", "A-6"] {
        let (status, message) = outcome.check(id);
        assert_eq!(status, "pass", "{id}: {message}");
    }
    assert_eq!(outcome.code(), 0, "{}", outcome.stderr());
}

#[test]
fn a_server_accepting_any_audience_expired_or_query_tokens_fails_the_token_probes_with_evidence() {
    let outcome = token_probes(true);
    for (id, expected, words) in [
        ("A-4", "warn", "query string"),
        ("A-5", "fail", "another resource (http://127.0.0.1:9/another-mcp) was accepted"),
        ("A-6", "fail", "had expired was accepted"),
    ] {
        let (status, message) = outcome.check(id);
        assert_eq!(status, expected, "{id}: {message}");
        assert!(message.contains(words), "{id}: {message}");
        let report = outcome.report();
        let check =
            report["checks"].as_array().and_then(|checks| checks.iter().find(|check| check["id"] == id)).cloned();
        let labels: Vec<String> = check
            .into_iter()
            .flat_map(|check| {
                check["evidence"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|item| item["label"].as_str().map(str::to_owned))
            })
            .collect();
        assert!(
            labels.iter().any(|label| label == "request") && labels.iter().any(|label| label == "response"),
            "{id}: evidence {labels:?}"
        );
    }
    assert_eq!(outcome.code(), 1, "a MUST failure: {}", outcome.stderr());
}

#[test]
fn a_refusal_from_in_front_of_the_token_check_is_no_evidence_and_fails_a5_and_a6() {
    // A layer in front of the SDK's token check answers a token for another resource, and an
    // expired one, with HTTP 400 and JSON-RPC -32020 (a proxy that dropped headers): A-5 and
    // A-6 passed ("was refused") though no authorization layer ever saw the token.
    let outcome = token_probes_with(&["--front-400"]);
    for id in ["A-5", "A-6"] {
        let (status, message) = outcome.check(id);
        assert_eq!(status, "fail", "{id}: {message}");
        assert!(
            message.contains("-32020") && message.contains("not an answer of the authorization layer"),
            "{id}: {message}"
        );
    }
    // The probes carry the headers of a normal request, so a correct server reaches its token check.
    let report = outcome.report();
    for id in ["A-5", "A-6"] {
        let request = report["checks"]
            .as_array()
            .and_then(|checks| checks.iter().find(|check| check["id"] == id))
            .and_then(|check| check["evidence"].as_array())
            .and_then(|evidence| evidence.iter().find(|item| item["label"] == "request"))
            .and_then(|item| item["text"].as_str())
            .unwrap_or_default()
            .to_ascii_lowercase();
        assert!(request.contains("mcp-method: server/discover"), "{id}: {request}");
    }
    let (a4, message) = outcome.check("A-4");
    assert_eq!(a4, "pass", "A-4's query token reaches the token check: {message}");
    assert!(message.contains("Bearer challenge"), "{message}");
}

#[test]
fn an_unreachable_authorization_server_is_named_in_the_hint() {
    // The server's metadata is found and names an authorization server nothing listens on: the
    // hint said "check the server URL … publishes its protected-resource metadata".
    let port = free_port();
    let issuer = format!("http://127.0.0.1:{}", free_port());
    let _server = Script::start("py_protected.py", port, &[issuer.as_str(), "--static", "static-token-0a9c"]);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let outcome = signed_in(&url, &[]);
    assert_eq!(outcome.code(), 3, "{}", outcome.stderr());
    let stderr = outcome.stderr();
    let hint = stderr.split("hint:").nth(1).unwrap_or_default();
    assert!(hint.contains(&issuer) && hint.contains("could not be reached"), "{stderr}");
    assert!(!hint.contains("publishes its protected-resource metadata"), "{stderr}");
}

/// `mcp-eval golden …` with these arguments and the client secret in its variable.
fn golden(args: &[&str]) -> Output {
    Command::new(binary())
        .arg("golden")
        .args(args)
        .env("MCP_EVAL_OAUTH_CLIENT_SECRET", SECRET)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp-eval golden")
}

#[test]
fn golden_init_and_check_sign_in_as_run_does_and_reach_the_protected_tool_list() {
    // `golden init` and `golden check --server-url` talked to the server without the sign-in
    // (no --oauth-* flags), so a protected server's 401 stopped them.
    let protected = Protected::start(Issuer::Fixture, &[], &[], &[]);
    let url = protected.server.mcp_url();
    let dir = tempfile::tempdir().expect("temp dir");
    let set = dir.path().join("golden.yaml");
    let set = set.to_str().expect("utf-8 path");
    let sign_in = ["--server-url", url.as_str(), "--oauth-client-id", CLIENT_ID, "--oauth-scopes", "mcp:read"];
    let init = golden(&[&["init", "--out", set][..], &sign_in].concat());
    let text = |output: &Output| {
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
    };
    assert_eq!(init.status.code(), Some(0), "{}", text(&init));
    let written = std::fs::read_to_string(set).expect("the set is written");
    assert!(written.contains("get_time"), "drafted from the protected server's tools: {written}");
    let check = golden(&[&["check", set][..], &sign_in].concat());
    assert_eq!(check.status.code(), Some(0), "{}", text(&check));
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert!(stdout.contains("every one the set names is listed by the server (1 tool(s) listed)"), "{stdout}");
    let issued = protected.issued();
    assert!(issued.len() >= 2, "each command signed in: {} issued", issued.len());
    for output in [&init, &check] {
        let all = format!("{}{written}", text(output));
        assert!(!all.contains(SECRET), "the client secret leaked");
        for token in &issued {
            assert!(!all.contains(token.rsplit('.').next().unwrap_or(token)), "a token leaked");
        }
    }
    // Without the sign-in the same check cannot list the tools (the server wants a token).
    let anonymous = golden(&["check", set, "--server-url", &url]);
    assert_eq!(anonymous.status.code(), Some(3), "{}", text(&anonymous));
}

#[test]
fn a_bare_401_from_in_front_of_the_token_check_is_no_evidence_for_a3() {
    // A layer in front of the SDK's token check answers the forged token with a bare 401: no
    // Bearer challenge, no RFC 6750 body. A-3 passed ("both got 401") though no authorization
    // layer ever saw the token.
    let protected = Protected::start(Issuer::Oidc, &[], &["--front-401"], &[]);
    let url = protected.server.mcp_url();
    let outcome = Outcome::run(
        &["--server-url", &url, "--oauth-client-id", CLIENT_ID],
        &[("MCP_EVAL_OAUTH_CLIENT_SECRET", SECRET)],
    );
    let (a3, message) = outcome.check("A-3");
    assert_eq!(a3, "warn", "{message}");
    assert!(message.contains("an invalid bearer token") && message.contains("no Bearer challenge"), "{message}");
    let report = outcome.report();
    let evidence = report["checks"]
        .as_array()
        .and_then(|checks| checks.iter().find(|check| check["id"] == "A-3"))
        .and_then(|check| check["evidence"].as_array())
        .cloned()
        .unwrap_or_default();
    let response = evidence.iter().find(|item| item["label"] == "response").and_then(|item| item["text"].as_str());
    assert!(response.is_some_and(|text| text.contains("401")), "the bare 401 is the evidence: {evidence:?}");
    assert_never_leaks(&outcome, &protected.issued());
}

#[test]
fn the_action_masks_every_access_token_the_moment_it_is_obtained_outside_the_stop_commands_block() {
    // Tokens live 2 s, so the run renews them (and A-6 waits one out): the first token and each
    // renewed one must reach the runner as `::add-mask::` lines it reads, i.e. not inside the
    // `::stop-commands::` block the evaluation runs in. They were never masked.
    let protected = Protected::start(Issuer::Fixture, &["--ttl", "2"], &[], &[]);
    let url = protected.server.mcp_url();
    let dir = tempfile::tempdir().expect("temp dir");
    let inputs = [("SERVER-URL", url.as_str()), ("OAUTH-CLIENT-ID", CLIENT_ID), ("OAUTH-CLIENT-SECRET", SECRET)];
    let output = crate::action::action_command(dir.path(), "push", "push.json", "http://127.0.0.1:9", &inputs, &[])
        .output()
        .expect("run mcp-eval action");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    let issued = protected.issued();
    assert!(issued.len() >= 2, "the token was renewed: {} issued", issued.len());
    // The masks the runner reads: those outside any stop-commands block.
    let mut stopped: Option<String> = None;
    let mut read_masks = Vec::new();
    for line in stdout.lines() {
        if let Some(token) = line.strip_prefix("::stop-commands::") {
            stopped = Some(token.to_owned());
        } else if stopped.as_ref().is_some_and(|token| line == format!("::{token}::")) {
            stopped = None;
        } else if let Some(value) = line.strip_prefix("::add-mask::") {
            if stopped.is_none() {
                read_masks.push(value.to_owned());
            }
        } else {
            for secret in issued.iter().map(String::as_str).chain([SECRET]) {
                assert!(!line.contains(secret), "a secret in the log: {line}");
            }
        }
    }
    for token in &issued {
        assert!(
            read_masks.contains(token),
            "token {} of {} is masked where the runner reads it",
            issued.iter().position(|t| t == token).unwrap_or(0) + 1,
            issued.len()
        );
    }
    // The secret is masked before anything else is printed.
    let first_other = stdout.lines().position(|line| !line.starts_with("::add-mask::")).expect("log lines");
    let secret_mask =
        stdout.lines().position(|line| line == format!("::add-mask::{SECRET}")).expect("the secret is masked");
    assert!(secret_mask < first_other, "{stdout}");
}
