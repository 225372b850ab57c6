//! A scripted model server for the adapter tests: it listens on 127.0.0.1 (a free port), answers
//! each request with the next canned response (status, headers, body bytes exactly as given) and
//! records what it received, so a test asserts the bytes we send. No network, no key.
//!
//! Like the real APIs, it refuses (400, with their error body) a Chat Completions or Messages
//! request whose conversation repeats a tool call id, without taking an answer of the script.
//!
//! Started with a table of vectors ([`ScriptedServer::with_vectors`]), it answers `POST
//! …/embeddings` itself: each text of `input` gets its vector from the table (in input order, with
//! `index`), a text not in the table a 400; other paths still take the script.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// One canned answer.
#[derive(Debug, Clone)]
pub(crate) struct Canned {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Canned {
    /// A JSON answer with this status.
    pub(crate) fn json(status: u16, body: &str) -> Self {
        Self { status, headers: vec![("content-type".into(), "application/json".into())], body: body.to_owned() }
    }

    /// The same answer with one more header.
    pub(crate) fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }
}

/// One request as received.
#[derive(Debug, Clone)]
pub(crate) struct Received {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Received {
    /// The body as JSON.
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("the request body is JSON")
    }

    /// The first value of a header (names compared case-insensitively).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
    }
}

/// A running scripted server; dropping it stops it.
pub(crate) struct ScriptedServer {
    /// `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
    received: Arc<Mutex<Vec<Received>>>,
    task: tokio::task::JoinHandle<()>,
}

impl ScriptedServer {
    /// Starts a server that gives `script` in order, then 500s.
    pub(crate) async fn start(script: Vec<Canned>) -> Self {
        Self::with_vectors(script, &[]).await
    }

    /// Starts a server that answers `…/embeddings` from `vectors` (text → vector) when the table
    /// is not empty, and everything else with `script` in order, then 500s.
    pub(crate) async fn with_vectors(script: Vec<Canned>, vectors: &[(&str, Vec<f64>)]) -> Self {
        let vectors: Arc<Vec<(String, Vec<f64>)>> =
            Arc::new(vectors.iter().map(|(text, vector)| ((*text).to_owned(), vector.clone())).collect());
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
        let base_url = format!("http://{}/v1", listener.local_addr().expect("bound address"));
        let received = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(script.into_iter()));
        let log = Arc::clone(&received);
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let (log, script, vectors) = (Arc::clone(&log), Arc::clone(&script), Arc::clone(&vectors));
                tokio::spawn(async move {
                    let service = service_fn(move |request: Request<Incoming>| {
                        let (log, script, vectors) = (Arc::clone(&log), Arc::clone(&script), Arc::clone(&vectors));
                        async move {
                            let (parts, body) = request.into_parts();
                            let body = body.collect().await.map(|body| body.to_bytes().to_vec()).unwrap_or_default();
                            log.lock().expect("log lock").push(Received {
                                method: parts.method.to_string(),
                                path: parts.uri.path().to_owned(),
                                headers: parts
                                    .headers
                                    .iter()
                                    .map(|(name, value)| {
                                        (name.to_string(), String::from_utf8_lossy(value.as_bytes()).into_owned())
                                    })
                                    .collect(),
                                body: body.clone(),
                            });
                            let canned =
                                if let Some((status, error)) = refusal(parts.uri.path(), &body) {
                                    Canned::json(status, &error.to_string())
                                } else if !vectors.is_empty() && parts.uri.path().ends_with("/embeddings") {
                                    embeddings_answer(&vectors, &body)
                                } else {
                                    script.lock().expect("script lock").next().unwrap_or_else(|| {
                                        Canned::json(500, r#"{"error":{"message":"script exhausted"}}"#)
                                    })
                                };
                            let mut response = Response::builder().status(canned.status);
                            for (name, value) in &canned.headers {
                                response = response.header(name, value);
                            }
                            Ok::<_, Infallible>(
                                response.body(Full::new(Bytes::from(canned.body))).expect("valid canned response"),
                            )
                        }
                    });
                    let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
                });
            }
        });
        Self { base_url, received, task }
    }

    /// Every request received so far.
    pub(crate) fn received(&self) -> Vec<Received> {
        self.received.lock().expect("log lock").clone()
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What the real API would refuse in a request to `path` before reading it: a conversation that
/// repeats a tool call id ([`crate::demo::model::duplicate_id_refusal`]). The refused request
/// takes no answer of the script.
fn refusal(path: &str, body: &[u8]) -> Option<(u16, serde_json::Value)> {
    use crate::demo::model::{Wire, duplicate_id_refusal};
    let wire = if path.ends_with("/chat/completions") {
        Wire::OpenAi
    } else if path.ends_with("/messages") {
        Wire::Anthropic
    } else {
        return None;
    };
    duplicate_id_refusal(wire, &serde_json::from_slice(body).ok()?)
}

/// The answer of an embeddings request from the table: one vector per text of `input`.
fn embeddings_answer(vectors: &[(String, Vec<f64>)], body: &[u8]) -> Canned {
    let request: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let texts: Vec<&str> = request["input"]
        .as_array()
        .map(|list| list.iter().filter_map(serde_json::Value::as_str).collect())
        .unwrap_or_default();
    let mut data = Vec::new();
    for (index, text) in texts.iter().enumerate() {
        let Some((_, vector)) = vectors.iter().find(|(known, _)| known == text) else {
            let error = serde_json::json!({"error": {"message": format!("no vector for {text:?}")}});
            return Canned::json(400, &error.to_string());
        };
        data.push(serde_json::json!({"object": "embedding", "index": index, "embedding": vector}));
    }
    let answer = serde_json::json!({"object": "list", "data": data, "model": request["model"],
                                    "usage": {"prompt_tokens": texts.len(), "total_tokens": texts.len()}});
    Canned::json(200, &answer.to_string())
}

/// The tools of the adapters' tests: a name each provider must rewrite (`files.read`) and one it
/// keeps.
pub(super) fn tools() -> Vec<super::ToolSpec> {
    vec![
        super::ToolSpec {
            name: "files.read".into(),
            description: Some("Reads a file".into()),
            input_schema: serde_json::json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        },
        super::ToolSpec {
            name: "get_time".into(),
            description: None,
            input_schema: serde_json::json!({"type": "object"}),
        },
    ]
}

/// The request of the adapters' tests: a system text, one user turn, [`tools`].
pub(super) fn request() -> super::CompletionRequest {
    super::CompletionRequest {
        system: Some("You are terse.".into()),
        messages: vec![super::Message::User("Read /etc/hosts".into())],
        tools: tools(),
        ..super::CompletionRequest::default()
    }
}

/// An adapter of the adapters' tests pointed by `at` at a loopback port nothing listens on
/// (bound, then released; `at` gets the URL `http://127.0.0.1:PORT`): its call is a retryable
/// network error that does not repeat `key`.
pub(super) async fn assert_a_closed_port_is_a_network_error<P: super::Provider>(
    key: &str,
    at: impl FnOnce(String) -> P,
) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("address");
    drop(listener);
    let provider = at(format!("http://{address}"));
    let error = provider.complete(&request()).await.expect_err("unreachable");
    assert!(matches!(&error, super::ProviderError::Network(_)) && error.is_retryable(), "{error:?}");
    assert!(!error.to_string().contains(key));
}
