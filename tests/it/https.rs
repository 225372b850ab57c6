//! `https://` servers: real servers behind a TLS-terminating front on loopback (a certificate
//! of a CA made in the test, trusted through `SSL_CERT_FILE`) must get the same verdicts as over
//! plain `http://`, row by row; and the CA-bundle rules: an `http://` server needs none, an
//! `https://` server without any CA certificate is an environment error (exit 4), and an
//! untrusted server certificate is one CONNECT error (exit 3) naming the problem.

use serde_json::Value;

use crate::interop::{HttpServer, time_config};
use crate::support::{DemoServer, Run, TestCa, TlsFront, port_of, run_with_env};

/// The rows of a report: id, status, message.
fn rows(run: &Run) -> Vec<(String, String, String)> {
    run.report()["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|check: &Value| {
            let text = |key: &str| check[key].as_str().unwrap_or_default().to_owned();
            (text("id"), text("status"), text("message"))
        })
        .collect()
}

/// Runs `args` against `plain_url` over http and against the same server behind a TLS front
/// (its CA in `SSL_CERT_FILE`), and requires the same exit code and, row by row, the same id and
/// status; messages may differ only where they quote the URL.
fn same_verdicts_over_https(name: &str, plain_url: &str, args: &[&str]) {
    let ca = TestCa::new("mcp-eval test CA");
    let front = TlsFront::start(&ca, port_of(plain_url));
    let tls_url = front.url_for(plain_url);
    let trust = [("SSL_CERT_FILE", ca.pem_path())];
    let with_url = |url: &str| {
        let mut all = vec!["--server-url", url];
        all.extend_from_slice(args);
        all.iter().map(|arg| (*arg).to_owned()).collect::<Vec<String>>()
    };
    let plain_args = with_url(plain_url);
    let tls_args = with_url(&tls_url);
    let plain = run_with_env(&plain_args.iter().map(String::as_str).collect::<Vec<_>>(), &trust);
    let tls = run_with_env(&tls_args.iter().map(String::as_str).collect::<Vec<_>>(), &trust);

    let plain_authority = plain_url.trim_start_matches("http://").split('/').next().unwrap_or_default().to_owned();
    let tls_authority = tls_url.trim_start_matches("https://").split('/').next().unwrap_or_default().to_owned();
    let unquote = |message: &str| message.replace(&tls_url, plain_url).replace(&tls_authority, &plain_authority);
    let mut problems = Vec::new();
    if plain.code() != tls.code() {
        problems.push(format!("exit code {} over http, {} over https", plain.code(), tls.code()));
    }
    let (plain_rows, tls_rows) = (rows(&plain), rows(&tls));
    if plain_rows.len() != tls_rows.len() {
        problems.push(format!("{} rows over http, {} over https", plain_rows.len(), tls_rows.len()));
    }
    for (over_http, over_https) in plain_rows.iter().zip(&tls_rows) {
        let (id, status, message) = over_http;
        if over_https.0 != *id || over_https.1 != *status {
            problems.push(format!(
                "{id} {status} over http ({message}); {} {} over https ({})",
                over_https.0, over_https.1, over_https.2
            ));
        } else if unquote(&over_https.2) != *message {
            problems.push(format!("{id}: message over http: {message}\n    over https: {}", over_https.2));
        }
    }
    assert!(
        problems.is_empty(),
        "{name}: https differs from http:\n- {}\n\nstderr over https:\n{}",
        problems.join("\n- "),
        tls.stderr()
    );
    assert!(front.accepted.load(std::sync::atomic::Ordering::SeqCst) > 0, "the https run went through the front");
}

#[test]
fn the_python_sdk_server_gets_the_same_verdicts_over_https_as_over_http() {
    let server = HttpServer::start("py-time-http");
    let config = time_config();
    same_verdicts_over_https("py-time-http", &server.url, &["--config", config.path().to_str().expect("utf-8")]);
}

#[test]
fn the_typescript_v2_server_gets_the_same_verdicts_over_https_as_over_http() {
    let server = HttpServer::start("ts-v2-basic-http");
    same_verdicts_over_https("ts-v2-basic-http", &server.url, &[]);
}

#[test]
fn the_demo_server_gets_the_same_verdicts_over_https_as_over_http() {
    let demo = DemoServer::start(&[]);
    same_verdicts_over_https("demo-server", &demo.url, &[]);
}

/// No CA certificate anywhere: both variables point at nothing.
const NO_CA_BUNDLE: [(&str, &str); 2] = [("SSL_CERT_FILE", "/nonexistent"), ("SSL_CERT_DIR", "/nonexistent")];

#[test]
fn an_http_server_needs_no_ca_bundle() {
    let demo = DemoServer::start(&[]);
    let usual = run_with_env(&["--server-url", &demo.url], &[]);
    let without = run_with_env(&["--server-url", &demo.url], &NO_CA_BUNDLE);
    assert_eq!(without.code(), usual.code(), "{}", without.stderr());
    assert_eq!(rows(&without), rows(&usual), "the same verdicts without any CA certificate");
}

#[test]
fn an_https_server_without_any_ca_certificate_is_an_environment_error() {
    let demo = DemoServer::start(&[]);
    let ca = TestCa::new("mcp-eval test CA");
    let front = TlsFront::start(&ca, port_of(&demo.url));
    let run = run_with_env(&["--server-url", &front.url_for(&demo.url)], &NO_CA_BUNDLE);
    assert_eq!(run.code(), 4, "exit 4 (environment): {}", run.stderr());
    let expected = "no CA certificates found (looked in SSL_CERT_FILE=/nonexistent (no such file), SSL_CERT_DIR=/nonexistent (no such directory); set SSL_CERT_FILE)";
    assert!(run.stderr().contains(expected), "{}", run.stderr());
    // Our environment failed, not the server: the report says so, not "server unreachable".
    assert_eq!(run.report()["outcome"], "environment");
    assert!(run.file("summary.md").contains("mcp-eval could not run here"), "{}", run.file("summary.md"));
    assert!(run.report()["outcome_detail"].as_str().unwrap_or_default().contains(expected), "{}", run.report());
    assert_eq!(front.accepted.load(std::sync::atomic::Ordering::SeqCst), 0, "nothing was sent");
}

#[test]
fn an_untrusted_server_certificate_is_one_connect_error_naming_it() {
    let demo = DemoServer::start(&[]);
    let ca = TestCa::new("mcp-eval test CA");
    let other = TestCa::new("another CA");
    let front = TlsFront::start(&ca, port_of(&demo.url));
    let run = run_with_env(&["--server-url", &front.url_for(&demo.url)], &[("SSL_CERT_FILE", other.pem_path())]);
    assert_eq!(run.code(), 3, "exit 3 (unreachable): {}", run.stderr());
    let report = run.report();
    assert_eq!(report["outcome"], "unreachable");
    let checks = report["checks"].as_array().expect("checks");
    assert_eq!(checks.len(), 1, "one CONNECT row, not a set of findings: {checks:?}");
    assert_eq!(checks[0]["id"], "CONNECT");
    assert_eq!(checks[0]["status"], "error");
    let message = checks[0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("certificate") && message.contains("UnknownIssuer"), "names the problem: {message}");
    assert!(message.contains("SSL_CERT_FILE"), "says how to trust a private CA: {message}");
}
