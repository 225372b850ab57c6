//! Streamable HTTP transport (spec-notes §6): one POST per message, the standard `MCP-*` headers
//! derived from the body, JSON or SSE responses, and re-submission with a new id when a
//! response stream is cut before its final response.
//!
//! Requests go through reqwest, except those marked [`Outgoing::raw`], which use the raw
//! HTTP/1.1 writer of [`super::raw`] (exact header-name case, bytes reqwest refuses). Both
//! speak `http://` and `https://` and trust the same roots ([`super::tls`]).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use base64::Engine;
use futures_util::StreamExt;
use serde_json::Value;

use super::entries::{self, Entries};
use super::evidence::Redactor;
use super::exchange::{Body, Exchange, Failure, HeaderEdit, Outgoing, SseUnread};
use super::jsonrpc::{self, PROTOCOL_VERSION};
use super::limits;
use super::sse;

/// The most bytes of one response body we read; the rest is a [`Failure::TooLarge`].
pub(crate) const MAX_RESPONSE_BYTES: usize = 32 * 1024 * 1024;
/// How long we wait after a final SSE response for the stream to end (H-16).
const STREAM_END_GRACE: Duration = Duration::from_millis(250);
/// How long an SSE stream that answers a GET/DELETE probe is read: a legacy server may hold it
/// open for good, and the probe needs its status. Any other body is read to its end within the
/// request's timeout (through a proxy or a TLS front the body often arrives after the head).
const NON_POST_STREAM_GRACE: Duration = Duration::from_millis(20);
/// How many requests one transport has in flight at most: enough to overlap round trips, few
/// enough that kept-alive connections are reused instead of opening one per request.
const MAX_IN_FLIGHT: usize = 8;
/// How many times a request whose stream was cut is re-issued with a new id.
const MAX_RESUBMISSIONS: u32 = 2;

/// Settings of an HTTP target.
#[derive(Debug, Clone)]
pub(crate) struct HttpSettings {
    /// The MCP endpoint URL.
    pub url: String,
    /// Extra headers from the user (e.g. `Authorization`), sent on every request; their values
    /// are secrets and are redacted from all evidence.
    pub extra_headers: Vec<(String, String)>,
    /// Per-request timeout.
    pub timeout: Duration,
    /// The client-credentials sign-in: its token is sent as `Authorization: Bearer …` on every
    /// request (before the probe's edits), renewed when due or refused as `invalid_token`.
    pub oauth: Option<Arc<super::oauth::TokenSource>>,
}

/// Which argument of which tool is mirrored into which `Mcp-Param-*` header.
pub(crate) type ParamHeaders = HashMap<String, Vec<(String, String)>>;

/// A Streamable HTTP connection to one endpoint.
#[derive(Debug)]
pub(crate) struct HttpTransport {
    settings: HttpSettings,
    client: reqwest::Client,
    redactor: Redactor,
    /// Session id minted by a legacy server during `initialize`, sent on later requests.
    pub session_id: RwLock<Option<String>>,
    /// `x-mcp-header` declarations of the tools listed so far.
    pub param_headers: RwLock<ParamHeaders>,
    /// The protocol version sent in `MCP-Protocol-Version` (legacy sessions use 2025-11-25).
    pub protocol_version: RwLock<String>,
    /// Bounds the requests in flight (a subscription holds a permit only while it is open).
    in_flight: tokio::sync::Semaphore,
    /// The methods (see `request_kind`) whose answer was an
    /// SSE event carrying JSON-RPC that was never ended while the stream stayed open for the
    /// whole timeout, with how long it waited (ms): later requests of the same kind are not
    /// sent ([`Failure::Skipped`]), since they would only wait as long.
    held_open: std::sync::Mutex<HashMap<String, u64>>,
    /// The `Authorization` value of the sign-in's current token (see [`HttpSettings::oauth`]).
    bearer: RwLock<Option<String>>,
}

/// Why the HTTP transport cannot be built: the TLS backend could not initialise (an environment
/// failure).
#[derive(Debug, thiserror::Error)]
pub(crate) enum BuildError {
    /// TLS could not be set up.
    #[error("{0}")]
    Tls(#[from] super::tls::SetupError),
    /// The client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(reqwest::Error),
}

impl HttpTransport {
    /// A transport for these settings, its TLS configuration that of [`super::tls`] (ALPN `h2`
    /// and `http/1.1`). Building the reqwest client can only fail when the TLS backend cannot
    /// initialise, which is an environment failure.
    pub(crate) fn new(settings: HttpSettings, redactor: Redactor) -> Result<Arc<Self>, BuildError> {
        install_crypto_provider();
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(super::tls::reqwest_config()?)
            .timeout(settings.timeout)
            .connect_timeout(settings.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .pool_max_idle_per_host(8)
            .build()
            .map_err(BuildError::Client)?;
        Ok(Arc::new(Self {
            settings,
            client,
            redactor,
            session_id: RwLock::new(None),
            param_headers: RwLock::new(HashMap::new()),
            protocol_version: RwLock::new(PROTOCOL_VERSION.to_owned()),
            in_flight: tokio::sync::Semaphore::new(MAX_IN_FLIGHT),
            held_open: std::sync::Mutex::new(HashMap::new()),
            bearer: RwLock::new(None),
        }))
    }

    /// The value of a user-given extra header.
    pub(crate) fn extra_header(&self, name: &str) -> Option<&str> {
        self.settings
            .extra_headers
            .iter()
            .find(|(extra, _)| extra.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The credential sent on every request: the user's `Authorization` header, else the
    /// sign-in's current token (`Bearer …`).
    pub(crate) fn credential(&self) -> Option<String> {
        if let Some(value) = self.extra_header("authorization") {
            return Some(value.to_owned());
        }
        crate::mcp::sync::read(&self.bearer).clone()
    }

    /// The client-credentials sign-in, when the run signed in.
    pub(crate) fn oauth(&self) -> Option<&super::oauth::TokenSource> {
        self.settings.oauth.as_deref()
    }

    /// The endpoint URL.
    pub(crate) fn url(&self) -> &str {
        &self.settings.url
    }

    /// Sends one message and collects what comes back. Never fails: a misbehaving server is
    /// recorded in the [`Exchange`].
    pub(crate) async fn send(&self, outgoing: &Outgoing, id: Option<Value>) -> Exchange {
        let kind = request_kind(outgoing);
        if let Some(skipped) = self.skipped(kind.as_deref(), outgoing, id.as_ref()) {
            return skipped;
        }
        let _permit = self.in_flight.acquire().await;
        // Timed from here: the wait for a permit is our queue, not the server's time.
        let started = Instant::now();
        if let Some(skipped) = self.skipped(kind.as_deref(), outgoing, id.as_ref()) {
            return skipped;
        }
        let mut exchange = self.signed_send(outgoing, id.clone()).await;
        // A stream cut before the final response: the request is lost and MUST be re-issued
        // as a new request with a new id (spec-notes §6.4).
        let mut attempt = 0;
        while attempt < MAX_RESUBMISSIONS
            && matches!(exchange.failure, Some(Failure::Closed(_)))
            && exchange.content_type().as_deref() == Some("text/event-stream")
            && !outgoing.notification
        {
            attempt += 1;
            let new_id = id.as_ref().map(|id| match id {
                Value::Number(number) => Value::from(number.as_i64().unwrap_or(0) + 1_000_000 * i64::from(attempt)),
                other => Value::from(format!("{}-resubmit-{attempt}", other.as_str().unwrap_or("id"))),
            });
            let retried = self.signed_send(outgoing, new_id).await;
            exchange = retried;
        }
        exchange.elapsed_ms = started.elapsed().as_millis() as u64;
        if let Some(kind) = kind {
            if matches!(exchange.failure, Some(Failure::Timeout))
                && exchange.sse_unread == Some(super::exchange::SseUnread::Unterminated)
            {
                crate::mcp::sync::lock(&self.held_open).entry(kind).or_insert(exchange.elapsed_ms);
            }
        }
        exchange
    }

    /// The exchange of a request that is not sent because an earlier one of the same
    /// `kind` was held open unreadable (see `held_open`), or `None` to send it.
    fn skipped(&self, kind: Option<&str>, outgoing: &Outgoing, id: Option<&Value>) -> Option<Exchange> {
        let waited = *crate::mcp::sync::lock(&self.held_open).get(kind?)?;
        Some(Exchange {
            method: outgoing.method().map(str::to_owned),
            id: id.cloned(),
            failure: Some(Failure::Skipped(format!(
                "an earlier `{}` answer was an SSE event never ended while the stream stayed open ({waited} ms), so this request of the same method would only have waited as long",
                kind.unwrap_or_default()
            ))),
            ..Exchange::default()
        })
    }

    /// [`Self::send_once`] with the sign-in's token, renewed when due; a request of ours
    /// (not a probe that edits `Authorization`) refused as `invalid_token` is sent once more with
    /// a new token.
    async fn signed_send(&self, outgoing: &Outgoing, id: Option<Value>) -> Exchange {
        let Some(source) = self.settings.oauth.as_deref() else {
            return self.send_once(outgoing, id).await;
        };
        let token = source.bearer().await;
        *crate::mcp::sync::write(&self.bearer) = Some(format!("Bearer {token}"));
        let exchange = self.send_once(outgoing, id.clone()).await;
        let edits_credential = outgoing.header_edits.iter().any(|edit| match edit {
            HeaderEdit::Remove(name) | HeaderEdit::Set(name, _) => name.eq_ignore_ascii_case("authorization"),
        });
        let refused = exchange.status == Some(401)
            && super::oauth::invalid_token(exchange.header("www-authenticate"), exchange.response.as_ref());
        if !refused || edits_credential {
            return exchange;
        }
        match source.renew(&token).await {
            Some(fresh) if fresh != token => {
                *crate::mcp::sync::write(&self.bearer) = Some(format!("Bearer {fresh}"));
                self.send_once(outgoing, id).await
            }
            _ => exchange,
        }
    }

    async fn send_once(&self, outgoing: &Outgoing, id: Option<Value>) -> Exchange {
        let body = body_bytes(outgoing, id.as_ref());
        let headers = self.headers_for(outgoing, id.is_some() || outgoing.notification);
        let mut exchange = Exchange {
            method: outgoing.method().map(str::to_owned),
            id: id.clone(),
            request_excerpt: self.request_excerpt(
                outgoing.http_method,
                outgoing.url.as_deref().unwrap_or(&self.settings.url),
                &headers,
                &body,
            ),
            ..Exchange::default()
        };
        let timeout = outgoing.timeout.unwrap_or(self.settings.timeout);
        if outgoing.raw {
            // The body is read until the deadline (what came by then is kept: a stream held
            // open is read as such); the head, until a little after it.
            let deadline = tokio::time::Instant::now() + timeout;
            let result = tokio::time::timeout_at(
                deadline + Duration::from_millis(100),
                super::raw::send(
                    outgoing.url.as_deref().unwrap_or(&self.settings.url),
                    outgoing.http_method,
                    &headers,
                    &body,
                    MAX_RESPONSE_BYTES,
                    deadline,
                ),
            )
            .await;
            match result {
                Err(_) => exchange.failure = Some(Failure::Timeout),
                Ok(Err(failure)) => exchange.failure = Some(failure),
                Ok(Ok(raw)) => {
                    exchange.status = Some(raw.status);
                    exchange.headers = raw.headers;
                    let mut assembler = Assembler::new(&exchange, id.as_ref());
                    assembler.push(&raw.body);
                    if raw.timed_out && !assembler.final_seen() {
                        exchange.failure = Some(Failure::Timeout);
                        exchange.body_excerpt = self.redactor.excerpt(&assembler.excerpt);
                        exchange.sse_unread = assembler.unread_so_far(true);
                        exchange.messages = std::mem::take(&mut assembler.messages);
                        exchange.messages_not_kept = assembler.messages_not_kept;
                    } else {
                        assembler.finish(&mut exchange, &self.redactor, raw.complete);
                    }
                }
            }
            return exchange;
        }
        let method = reqwest::Method::from_bytes(outgoing.http_method.as_bytes()).unwrap_or(reqwest::Method::POST);
        let mut request =
            self.client.request(method, outgoing.url.as_deref().unwrap_or(&self.settings.url)).timeout(timeout);
        for (name, value) in &headers {
            request = request.header(name.as_str(), value.as_str());
        }
        if !body.is_empty() {
            request = request.body(body);
        }
        let mut deadline = Instant::now() + timeout;
        let response = match request.send().await {
            Ok(response) => response,
            Err(error) => {
                exchange.failure = Some(if error.is_timeout() {
                    Failure::Timeout
                } else if error.is_connect() {
                    Failure::Connect(match super::tls::certificate_problem(&error) {
                        Some(problem) => super::tls::untrusted(&problem),
                        None => root_cause(&error),
                    })
                } else {
                    Failure::Closed(root_cause(&error))
                });
                return exchange;
            }
        };
        exchange.status = Some(response.status().as_u16());
        exchange.headers = response
            .headers()
            .iter()
            .map(|(name, value)| (name.as_str().to_owned(), String::from_utf8_lossy(value.as_bytes()).into_owned()))
            .collect();
        if outgoing.http_method != "POST" && exchange.content_type().as_deref() == Some("text/event-stream") {
            // GET/DELETE probes need the status; a legacy server may answer GET with a stream
            // that never ends, so a stream gets only a short look.
            deadline = deadline.min(Instant::now() + NON_POST_STREAM_GRACE);
        }
        let mut assembler = Assembler::new(&exchange, id.as_ref());
        let mut stream = response.bytes_stream();
        let mut complete = true;
        loop {
            // After the final response, wait only a short grace for the end of the stream.
            let wait_until = if assembler.final_seen() {
                (Instant::now() + STREAM_END_GRACE).min(deadline)
            } else if let (Some(settle), Some(first_at)) = (outgoing.settle_after_first, assembler.first_message_at) {
                (first_at + settle).min(deadline)
            } else {
                deadline
            };
            let next = tokio::time::timeout_at(wait_until.into(), stream.next()).await;
            match next {
                Err(_) => {
                    if assembler.final_seen() {
                        exchange.stream_closed_after_final = Some(false);
                    } else {
                        exchange.failure = Some(Failure::Timeout);
                    }
                    complete = false;
                    break;
                }
                Ok(None) => break,
                Ok(Some(Err(error))) => {
                    if !assembler.final_seen() {
                        exchange.failure = Some(if error.is_timeout() {
                            Failure::Timeout
                        } else {
                            Failure::Closed(root_cause(&error))
                        });
                    }
                    complete = false;
                    break;
                }
                Ok(Some(Ok(chunk))) => {
                    if !assembler.push(&chunk) {
                        exchange.failure = Some(Failure::TooLarge(MAX_RESPONSE_BYTES));
                        complete = false;
                        break;
                    }
                }
            }
        }
        if exchange.failure.is_none() {
            assembler.finish(&mut exchange, &self.redactor, complete);
        } else {
            exchange.body_excerpt = self.redactor.excerpt(&assembler.excerpt);
            exchange.sse_unread = assembler.unread_so_far(matches!(exchange.failure, Some(Failure::Timeout)));
            exchange.messages = std::mem::take(&mut assembler.messages);
            exchange.messages_not_kept = assembler.messages_not_kept;
            exchange.response = assembler.response.take();
            exchange.entries = assembler.entries.take();
            if exchange.response.is_some() {
                exchange.failure = None;
            }
        }
        exchange
    }

    /// The headers a correct client sends for this message, with the probe's edits applied.
    fn headers_for(&self, outgoing: &Outgoing, is_message: bool) -> Vec<(String, String)> {
        let mut headers: Vec<(String, String)> = Vec::new();
        if matches!(outgoing.body, Body::Json(_) | Body::Raw(_)) {
            headers.push(("Content-Type".into(), "application/json".into()));
        }
        headers.push(("Accept".into(), "application/json, text/event-stream".into()));
        if let Body::Json(body) = &outgoing.body {
            if is_message {
                let version = body
                    .pointer(&format!("/params/_meta/{}", jsonrpc::META_PROTOCOL_VERSION.replace('/', "~1")))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .unwrap_or_else(|| crate::mcp::sync::read(&self.protocol_version).clone());
                headers.push(("MCP-Protocol-Version".into(), version));
            }
            if let Some(method) = body.get("method").and_then(Value::as_str) {
                headers.push(("Mcp-Method".into(), method.to_owned()));
                if let Some(param) = jsonrpc::mcp_name_param(method) {
                    if let Some(value) = body.get("params").and_then(|params| params.get(param)) {
                        if let Some(text) = header_text(value) {
                            headers.push(("Mcp-Name".into(), encode_header_value(&text)));
                        }
                    }
                }
                if method == "tools/call" {
                    headers.extend(self.param_headers_for(body));
                }
            }
        }
        {
            let session = crate::mcp::sync::read(&self.session_id);
            if let Some(session) = session.as_ref() {
                headers.push(("Mcp-Session-Id".into(), session.clone()));
            }
        }
        if let Some(bearer) = crate::mcp::sync::read(&self.bearer).clone() {
            headers.push(("Authorization".into(), bearer));
        }
        for (name, value) in &self.settings.extra_headers {
            headers.retain(|(existing, _)| !existing.eq_ignore_ascii_case(name));
            headers.push((name.clone(), value.clone()));
        }
        for edit in &outgoing.header_edits {
            match edit {
                HeaderEdit::Remove(name) => headers.retain(|(existing, _)| !existing.eq_ignore_ascii_case(name)),
                HeaderEdit::Set(name, value) => {
                    headers.retain(|(existing, _)| !existing.eq_ignore_ascii_case(name));
                    headers.push((name.clone(), value.clone()));
                }
            }
        }
        headers
    }

    fn param_headers_for(&self, body: &Value) -> Vec<(String, String)> {
        let Some(name) = body.pointer("/params/name").and_then(Value::as_str) else {
            return Vec::new();
        };
        let declarations = crate::mcp::sync::read(&self.param_headers);
        let Some(declared) = declarations.get(name) else {
            return Vec::new();
        };
        declared
            .iter()
            .filter_map(|(property, header)| {
                let value =
                    body.pointer(&format!("/params/arguments/{}", property.replace('~', "~0").replace('/', "~1")))?;
                let text = header_text(value)?;
                Some((format!("Mcp-Param-{header}"), encode_header_value(&text)))
            })
            .collect()
    }

    fn request_excerpt(&self, http_method: &str, url: &str, headers: &[(String, String)], body: &[u8]) -> String {
        let mut text = format!("{http_method} {url}\n");
        for (name, value) in headers {
            let secret = self.settings.extra_headers.iter().any(|(extra, _)| extra.eq_ignore_ascii_case(name))
                || (self.settings.oauth.is_some() && name.eq_ignore_ascii_case("authorization"));
            let shown = if secret { "***" } else { value.as_str() };
            text.push_str(&format!("{name}: {shown}\n"));
        }
        text.push('\n');
        text.push_str(&String::from_utf8_lossy(body));
        self.redactor.excerpt(text.as_bytes())
    }
}

/// The text a JSON value is mirrored as in a header: strings as they are, integers in decimal,
/// booleans as `true`/`false`; other values are not mirrored.
pub(crate) fn header_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Number(number) if number.is_i64() || number.is_u64() => Some(number.to_string()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

/// Encodes a header value per §Value Encoding: values that are not plain header-safe ASCII
/// (non-ASCII, control characters, leading or trailing whitespace) and values that look like
/// the sentinel are sent as `=?base64?…?=`.
pub(crate) fn encode_header_value(text: &str) -> String {
    let printable = text.bytes().all(|byte| (0x20..0x7f).contains(&byte));
    let padded = text.starts_with(' ') || text.ends_with(' ');
    let looks_encoded = text.starts_with("=?base64?") && text.ends_with("?=");
    let plain = printable && !padded && !looks_encoded;
    if plain {
        text.to_owned()
    } else {
        format!("=?base64?{}?=", base64::engine::general_purpose::STANDARD.encode(text.as_bytes()))
    }
}

fn body_bytes(outgoing: &Outgoing, id: Option<&Value>) -> Vec<u8> {
    match &outgoing.body {
        Body::Json(value) => {
            let mut value = value.clone();
            if let (Some(id), Some(object)) = (id, value.as_object_mut()) {
                object.insert("id".into(), id.clone());
            }
            serde_json::to_vec(&value).unwrap_or_default()
        }
        Body::Raw(bytes) => bytes.clone(),
        Body::Empty => Vec::new(),
    }
}

/// What a body that is not JSON says, in the words a person reads, on one line of at most 60
/// characters: an HTML page by its `<title>` (else its text without the tags), any other body
/// as it is.
fn not_json_text(body: &str) -> String {
    let lower = body.to_ascii_lowercase();
    let html = lower.trim_start().starts_with('<') && (lower.contains("<html") || lower.contains("<!doctype"));
    let (kind, text) = if html {
        let title = lower
            .find("<title")
            .and_then(|open| lower[open..].find('>').map(|end| open + end + 1))
            .and_then(|start| lower[start..].find("</title").map(|end| &body[start..start + end]))
            .filter(|title| !title.trim().is_empty());
        let text = match title {
            Some(title) => title.to_owned(),
            None => {
                let mut text = String::new();
                let mut in_tag = false;
                for character in body.chars() {
                    match character {
                        '<' => in_tag = true,
                        '>' if in_tag => {
                            in_tag = false;
                            text.push(' ');
                        }
                        _ if !in_tag => text.push(character),
                        _ => {}
                    }
                }
                text
            }
        };
        ("an HTML page: ", text)
    } else {
        ("", body.to_owned())
    };
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("the body is {kind}\"{}\"", crate::text::clip(&one_line, 60))
}

pub(crate) fn root_cause(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        message = format!("{message}: {cause}");
        source = cause.source();
    }
    message
}

/// The kind of a JSON-RPC request POSTed to the endpoint, whatever headers or params it varies:
/// its method. `None` for notifications,
/// raw bodies, other URLs and HTTP methods, and subscription streams (held open by design).
fn request_kind(outgoing: &Outgoing) -> Option<String> {
    let Body::Json(body) = &outgoing.body else { return None };
    if outgoing.notification
        || outgoing.http_method != "POST"
        || outgoing.url.is_some()
        || outgoing.settle_after_first.is_some()
    {
        return None;
    }
    body.get("method")?.as_str().map(str::to_owned)
}

pub(crate) fn install_crypto_provider() {
    // Installing twice is harmless; the first provider wins.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Turns response bytes into messages: a single JSON body, or SSE events matched by id.
pub(crate) struct Assembler {
    sse: Option<sse::Parser>,
    json_body: Vec<u8>,
    /// The first bytes of the body, for evidence.
    pub(crate) excerpt: Vec<u8>,
    total: usize,
    request_id: Option<Value>,
    pub(crate) messages: Vec<Value>,
    pub(crate) response: Option<Value>,
    /// The entries of the final response when the request is a list method (see
    /// [`Exchange::entries`]).
    pub(crate) entries: Option<Entries>,
    /// The list key of the request's method, when it is a list method.
    list_key: Option<&'static str>,
    after_final: Vec<Value>,
    /// Messages beyond [`limits::MAX_MESSAGES_KEPT`]: counted, not kept.
    pub(crate) messages_not_kept: usize,
    invalid_frames: Vec<String>,
    /// Why the first unreadable event carrying JSON-RPC could not be read.
    unread: Option<SseUnread>,
    /// When the first SSE message arrived.
    pub(crate) first_message_at: Option<Instant>,
}

impl Assembler {
    pub(crate) fn new(exchange: &Exchange, request_id: Option<&Value>) -> Self {
        let is_sse = exchange.content_type().as_deref() == Some("text/event-stream");
        Self {
            sse: is_sse.then(sse::Parser::default),
            json_body: Vec::new(),
            excerpt: Vec::new(),
            total: 0,
            request_id: request_id.cloned(),
            messages: Vec::new(),
            response: None,
            entries: None,
            list_key: exchange.method.as_deref().and_then(entries::list_key),
            after_final: Vec::new(),
            messages_not_kept: 0,
            invalid_frames: Vec::new(),
            unread: None,
            first_message_at: None,
        }
    }

    pub(crate) fn final_seen(&self) -> bool {
        self.sse.is_some() && self.response.is_some()
    }

    /// Adds bytes; false when the size cap is exceeded.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> bool {
        self.total += bytes.len();
        if self.excerpt.len() < 4096 {
            let room = 4096 - self.excerpt.len();
            self.excerpt.extend_from_slice(&bytes[..bytes.len().min(room)]);
        }
        if self.total > MAX_RESPONSE_BYTES {
            return false;
        }
        match &mut self.sse {
            Some(parser) => {
                let events = parser.feed(bytes);
                self.take_events(events, false);
            }
            None => self.json_body.extend_from_slice(bytes),
        }
        true
    }

    /// Reads dispatched events; `at_end`: they were dispatched by the end of the stream, not
    /// by a blank line.
    fn take_events(&mut self, events: Vec<sse::Event>, at_end: bool) {
        for event in events {
            if event.data.trim().is_empty() {
                continue;
            }
            if event.not_utf8 && event.data.contains("jsonrpc") {
                // JSON text must be UTF-8 (RFC 8259 §8.1): the decoder's U+FFFD are not what
                // the server meant, so the message is not read.
                self.unread.get_or_insert_with(|| {
                    SseUnread::Unparsable(
                        "the message is not UTF-8 (the SSE event holds invalid bytes), and JSON text must be: it was not parsed"
                            .into(),
                    )
                });
                self.invalid_frames.push("an event whose data is not UTF-8".into());
                continue;
            }
            // Past the messages kept, one without an id (a notification) is only counted: a
            // byte scan, not a parse, so a flood of them costs little time either.
            let kept = self.messages.len() + self.after_final.len();
            if kept >= limits::MAX_MESSAGES_KEPT && limits::top_level_id(event.data.as_bytes()).is_none() {
                self.first_message_at.get_or_insert_with(Instant::now);
                self.messages_not_kept += 1;
                continue;
            }
            match entries::read_message(event.data, self.list_key) {
                Ok((mut message, listed)) => {
                    self.first_message_at.get_or_insert_with(Instant::now);
                    let is_final = jsonrpc::is_response(&message)
                        && (self.request_id.is_none() || message.get("id") == self.request_id.as_ref());
                    if is_final && self.response.is_none() {
                        self.response = Some(message);
                        self.entries = listed;
                        continue;
                    }
                    // Only the final response keeps its entries apart.
                    if let (Some(key), Some(listed)) = (self.list_key, listed) {
                        entries::restore(&mut message, key, listed);
                    }
                    // Bounded: the first MAX_MESSAGES_KEPT are kept, the rest counted.
                    if self.messages.len() + self.after_final.len() >= limits::MAX_MESSAGES_KEPT {
                        self.messages_not_kept += 1;
                    } else if self.response.is_some() {
                        self.after_final.push(message);
                    } else {
                        self.messages.push(message);
                    }
                }
                Err(entries::Unread { error, text: data, exceeds }) => {
                    let jsonrpc = data.contains("jsonrpc")
                        || event.ignored.as_deref().is_some_and(|line| line.contains("jsonrpc"));
                    if (jsonrpc || exceeds.is_some()) && self.unread.is_none() {
                        self.unread = Some(match (&exceeds, &event.ignored) {
                            (Some(why), _) => SseUnread::Unparsable(why.clone()),
                            (None, Some(line)) => SseUnread::Continuation(line.clone()),
                            (None, None) if at_end => SseUnread::Cut,
                            (None, None) => SseUnread::Invalid(error.to_string()),
                        });
                    }
                    self.invalid_frames.push(format!("{error}: {}", data.chars().take(200).collect::<String>()))
                }
            }
        }
    }

    pub(crate) fn finish(&mut self, exchange: &mut Exchange, redactor: &Redactor, stream_complete: bool) {
        exchange.body_excerpt = redactor.excerpt(&self.excerpt);
        match &mut self.sse {
            Some(parser) => {
                let events = parser.finish();
                self.take_events(events, true);
                if self.response.is_some() {
                    if exchange.stream_closed_after_final.is_none() {
                        exchange.stream_closed_after_final = Some(stream_complete);
                    }
                } else if exchange.failure.is_none() {
                    exchange.failure = Some(Failure::Closed(if self.invalid_frames.is_empty() {
                        "the SSE stream ended without a response to this request".into()
                    } else {
                        format!("unparsable SSE frame: {}", self.invalid_frames[0])
                    }));
                }
            }
            None => {
                let body = std::mem::take(&mut self.json_body);
                if body.trim_ascii().is_empty() {
                    // An empty body (202, 405, …) is a fact, not a failure.
                } else {
                    // Why a body that is recognisably JSON-RPC was not read: a bound, or bytes
                    // that are not UTF-8 (JSON text is UTF-8, RFC 8259 §8.1).
                    let mut unparsable = None;
                    let read = match String::from_utf8(body) {
                        Ok(text) => entries::read_message(text, self.list_key).map_err(|unread| {
                            unparsable = unread.exceeds;
                            unread.text.into_bytes()
                        }),
                        Err(error) => {
                            let at = error.utf8_error().valid_up_to();
                            let body = error.into_bytes();
                            if super::exchange::payload_shaped(&String::from_utf8_lossy(&body[..body.len().min(4096)]))
                                && limits::top_level_id(&body).is_some()
                            {
                                unparsable = Some(format!(
                                    "the message is not UTF-8 (byte {at} of the body starts an invalid sequence), and JSON text must be: it was not parsed"
                                ));
                            }
                            Err(body)
                        }
                    };
                    match read {
                        Ok((message, listed)) => {
                            self.response = Some(message);
                            self.entries = listed;
                        }
                        Err(_) if unparsable.is_some() => {
                            exchange.failure = unparsable.map(Failure::Unparsable);
                        }
                        Err(body) => {
                            // Say what came instead (plain text, an HTML page, …), on one line.
                            let text = redactor.redact(&String::from_utf8_lossy(body.trim_ascii()));
                            exchange.failure = Some(Failure::NotJsonRpc(not_json_text(&text)));
                        }
                    }
                }
            }
        }
        self.messages.append(&mut self.after_final);
        exchange.messages = std::mem::take(&mut self.messages);
        exchange.messages_not_kept = self.messages_not_kept;
        exchange.response = self.response.take();
        exchange.entries = self.entries.take();
        if exchange.response.is_none() {
            exchange.sse_unread = self.unread.take();
        }
    }

    /// Why an exchange that ended without its final response (a timeout, a broken connection)
    /// could not read what came: an unreadable event, or one carrying JSON-RPC that was never
    /// ended by a blank line (`timed_out`: the stream stayed open; otherwise it broke off).
    pub(crate) fn unread_so_far(&mut self, timed_out: bool) -> Option<SseUnread> {
        if self.response.is_some() {
            return None;
        }
        self.unread.take().or_else(|| {
            let pending = self.sse.as_ref()?.pending()?;
            let why = if timed_out { SseUnread::Unterminated } else { SseUnread::Cut };
            pending.contains("jsonrpc").then_some(why)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_ascii_values_are_sent_as_they_are() {
        assert_eq!(encode_header_value("get_weather"), "get_weather");
    }

    #[test]
    fn unsafe_values_are_base64_encoded() {
        assert_eq!(encode_header_value("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(encode_header_value(" padded"), "=?base64?IHBhZGRlZA==?=");
        assert!(encode_header_value("=?base64?abc?=").starts_with("=?base64?PT9i"));
    }

    #[tokio::test]
    async fn a_json_body_that_arrives_after_the_head_of_a_get_is_read() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        // The head at once, the body 150 ms later: what a proxy or TLS front in front of a
        // server that writes them apart looks like.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}/mcp", listener.local_addr().expect("address"));
        let server = tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.expect("accept");
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request).await;
            let body = br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"no session"}}"#;
            let head = format!(
                "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes()).await.expect("head");
            stream.flush().await.expect("flush");
            tokio::time::sleep(Duration::from_millis(150)).await;
            stream.write_all(body).await.expect("body");
        });
        let settings = HttpSettings { url, extra_headers: Vec::new(), timeout: Duration::from_secs(5), oauth: None };
        let transport = HttpTransport::new(settings, Redactor::new(Vec::<String>::new())).expect("transport");
        let mut get = Outgoing::request(serde_json::json!({"jsonrpc": "2.0", "method": "server/discover"}));
        get.body = Body::Empty;
        get.http_method = "GET";
        let exchange = transport.send(&get, None).await;
        server.await.expect("server");
        assert_eq!(exchange.status, Some(400));
        assert!(exchange.failure.is_none(), "{:?}", exchange.failure);
        assert_eq!(exchange.describe(), r#"HTTP 400, JSON-RPC error -32600 "no session""#);
    }

    /// Feeds `chunks` to an assembler for a response with this content type and request id 1.
    fn assemble(content_type: &str, chunks: &[&[u8]], complete: bool) -> Exchange {
        let mut exchange = Exchange {
            headers: vec![("content-type".into(), content_type.into())],
            id: Some(serde_json::json!(1)),
            ..Exchange::default()
        };
        let mut assembler = Assembler::new(&exchange, Some(&serde_json::json!(1)));
        for chunk in chunks {
            assert!(assembler.push(chunk));
        }
        assembler.finish(&mut exchange, &Redactor::new(Vec::<String>::new()), complete);
        exchange
    }

    /// A successful answer of a request, as [`assemble`] reads it.
    fn answer(content_type: &str, body: &[u8]) -> Exchange {
        let mut exchange = assemble(content_type, &[body], true);
        (exchange.method, exchange.status) = (Some("tools/list".into()), Some(200));
        exchange
    }

    #[test]
    fn a_later_answer_no_client_can_read_names_how_and_discover_keeps_the_stricter_test() {
        let cases: [(&str, &[u8], &str); 5] = [
            ("text/html", b"<!DOCTYPE html><html><body>hello</body></html>", "an HTML page"),
            ("application/json", b"event: message\ndata: {\"jsonrpc\":\"2.0\"}\n\n", "SSE framing"),
            ("text/event-stream", b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n", "bare JSON"),
            (
                "application/json",
                b"\"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":1,\\\"result\\\":{}}\"",
                "serialized twice",
            ),
            ("application/json", b"{\"jsonrpc\":\"2.0\",\"result\":{}}", "no `id`"),
        ];
        for (content_type, body, says) in cases {
            let exchange = answer(content_type, body);
            let why = exchange.unreadable_answer().unwrap_or_default();
            assert!(why.contains(says), "{content_type} {body:?}: {why}");
        }
        // Before discover was read, an HTML page is no MCP endpoint, not an unreadable answer.
        assert_eq!(answer("text/html", b"<!DOCTYPE html><html><body>hello</body></html>").unreadable(), None);
        // A refusal is graded by the rule of what was refused, and a good answer is readable.
        let mut refusal = answer("text/html", b"<html><body>nope</body></html>");
        refusal.status = Some(500);
        assert_eq!(refusal.unreadable_answer(), None);
        assert_eq!(
            answer("application/json", b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}").unreadable_answer(),
            None
        );
    }

    #[test]
    fn an_sse_json_continued_without_data_prefixes_is_unreadable_and_names_the_line() {
        let exchange = assemble(
            "text/event-stream",
            &[b"event: message\ndata: {\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"result\": {}\n}\n\n"],
            true,
        );
        assert_eq!(exchange.sse_unread, Some(SseUnread::Continuation("  \"jsonrpc\": \"2.0\",".into())));
        let why = exchange.unreadable().expect("unreadable");
        assert!(why.contains("without a `data:` prefix (`\"jsonrpc\": \"2.0\",`)"), "{why}");
    }

    #[test]
    fn an_sse_json_split_over_several_data_lines_is_the_response() {
        let exchange = assemble(
            "text/event-stream",
            &[b"event: message\ndata: {\ndata:   \"jsonrpc\": \"2.0\",\ndata:   \"id\": 1,\ndata:   \"result\": {}\ndata: }\n\n"],
            true,
        );
        assert_eq!(exchange.response, Some(serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {}})));
        assert_eq!((exchange.sse_unread.clone(), exchange.unreadable()), (None, None));
    }

    #[test]
    fn an_sse_stream_cut_inside_a_json_rpc_event_is_cut() {
        let exchange = assemble("text/event-stream", &[b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":"], true);
        assert_eq!(exchange.sse_unread, Some(SseUnread::Cut));
        assert!(exchange.unreadable().expect("unreadable").contains("ended in the middle of the event"));
    }

    #[test]
    fn an_sse_event_held_open_without_its_blank_line_is_unterminated() {
        let exchange =
            Exchange { headers: vec![("content-type".into(), "text/event-stream".into())], ..Exchange::default() };
        let mut assembler = Assembler::new(&exchange, Some(&serde_json::json!(1)));
        assembler.push(b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
        assert_eq!(assembler.unread_so_far(true), Some(SseUnread::Unterminated));
        let mut quiet = Assembler::new(&exchange, Some(&serde_json::json!(1)));
        quiet.push(b": keep-alive\n\n");
        assert_eq!(quiet.unread_so_far(true), None, "no JSON-RPC came: a plain timeout");
    }

    #[test]
    fn a_json_body_split_across_chunks_is_the_response() {
        let exchange =
            assemble("application/json; charset=utf-8", &[b"{\"jsonrpc\":\"2.0\",", b"\"id\":1,\"result\":{}}"], true);
        assert_eq!(exchange.result(), Some(&serde_json::json!({})));
        assert!(exchange.failure.is_none());
        assert!(exchange.stream_closed_after_final.is_none());
    }

    #[test]
    fn an_empty_body_is_no_response_and_no_failure() {
        let exchange = assemble("application/json", &[b"  \n"], true);
        assert!(exchange.response.is_none());
        assert!(exchange.failure.is_none());
    }

    #[test]
    fn a_body_that_is_not_json_is_named_on_one_line() {
        let exchange = assemble("text/plain", &[b"404 page\n   not found\n"], true);
        let Some(Failure::NotJsonRpc(detail)) = &exchange.failure else { panic!("{:?}", exchange.failure) };
        assert_eq!(detail, "the body is \"404 page not found\"");
    }

    #[test]
    fn an_html_page_is_named_by_its_title_or_its_text_not_its_markup() {
        let page = b"<!DOCTYPE html><html><head><title>501 Not\n Implemented</title></head><body>x</body></html>";
        let exchange = assemble("text/html", &[page], true);
        let Some(Failure::NotJsonRpc(detail)) = &exchange.failure else { panic!("{:?}", exchange.failure) };
        assert_eq!(detail, "the body is an HTML page: \"501 Not Implemented\"");
        let exchange = assemble("text/html", &[b"<html>\n<h1>Bad   Gateway</h1>\n</html>"], true);
        let Some(Failure::NotJsonRpc(detail)) = &exchange.failure else { panic!("{:?}", exchange.failure) };
        assert_eq!(detail, "the body is an HTML page: \"Bad Gateway\"");
    }

    #[test]
    fn sse_notifications_come_before_the_final_response_matched_by_id() {
        let exchange = assemble(
            "text/event-stream",
            &[
                b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n",
                b"data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"other\":true}}\n\n",
                b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"re",
                b"sult\":{\"ok\":true}}\n\n",
            ],
            true,
        );
        assert_eq!(exchange.result(), Some(&serde_json::json!({"ok": true})));
        assert_eq!(exchange.messages.len(), 2, "the notification and the response to another id");
        assert_eq!(exchange.stream_closed_after_final, Some(true));
    }

    #[test]
    fn messages_after_the_final_response_are_kept_and_an_open_stream_is_recorded() {
        let exchange = assemble(
            "text/event-stream",
            &[b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"late\"}\n\n"],
            false,
        );
        assert!(exchange.response.is_some());
        assert_eq!(exchange.messages[0]["method"], "late");
        assert_eq!(exchange.stream_closed_after_final, Some(false));
    }

    #[test]
    fn an_sse_stream_without_the_response_is_a_closed_failure_naming_a_bad_frame() {
        let exchange = assemble("text/event-stream", &[b"data: {not json}\n\n"], true);
        let Some(Failure::Closed(detail)) = &exchange.failure else { panic!("{:?}", exchange.failure) };
        assert!(detail.starts_with("unparsable SSE frame"), "{detail}");
        let exchange = assemble("text/event-stream", &[b": keep-alive\n\n"], true);
        let Some(Failure::Closed(detail)) = &exchange.failure else { panic!("{:?}", exchange.failure) };
        assert!(detail.contains("ended without a response"), "{detail}");
    }

    #[test]
    fn the_last_event_without_a_blank_line_still_counts_when_the_stream_ends() {
        let exchange = assemble("text/event-stream", &[b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"], true);
        assert!(exchange.response.is_some());
    }

    #[test]
    fn notifications_past_the_kept_ones_are_counted_and_the_response_still_found() {
        let notification = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tick\"}\n\n";
        let mut stream = notification.repeat(limits::MAX_MESSAGES_KEPT + 500);
        stream.push_str("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n");
        let exchange = assemble("text/event-stream", &[stream.as_bytes()], true);
        assert_eq!(exchange.result(), Some(&serde_json::json!({})));
        assert_eq!((exchange.messages.len(), exchange.messages_not_kept), (limits::MAX_MESSAGES_KEPT, 500));
    }

    #[test]
    fn bodies_over_the_cap_are_refused() {
        let exchange = Exchange::default();
        let mut assembler = Assembler::new(&exchange, None);
        let chunk = vec![b' '; 1 << 20];
        let mut accepted = 0;
        while assembler.push(&chunk) {
            accepted += chunk.len();
            assert!(accepted <= MAX_RESPONSE_BYTES);
        }
        assert_eq!(assembler.excerpt.len(), 4096);
    }
}
