//! The Streamable HTTP front end of the demo server (spec-notes §6): one POST endpoint at `/mcp`.
//!
//! This module owns what is pure transport: the path, the HTTP method, `Origin`, `Content-Type`,
//! `Accept`, body reading and JSON parsing, and rendering a [`Reply`] as a JSON body or an SSE
//! stream. Header-versus-body rules (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`,
//! `Mcp-Param-*`) are validated by [`super::core`], which sees the headers through an
//! [`HttpRequestView`]. Closing an SSE response drops its body stream, which is how a client
//! cancels a request on HTTP (spec-notes §6.4).

use std::collections::VecDeque;
use std::convert::Infallible;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinSet;

use super::DemoConfig;
use super::core::{self, HttpRequestView, Reply};
use super::protocol::{self, Outgoing, ServerState};

/// The path of the MCP endpoint.
pub(crate) const ENDPOINT_PATH: &str = "/mcp";
/// The largest request body the server reads.
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

type Body = UnsyncBoxBody<Bytes, Infallible>;

/// Serves MCP over Streamable HTTP on `listener` at [`ENDPOINT_PATH`].
///
/// Runs until the returned future is dropped; dropping it also ends every open connection.
/// Only accept errors that are not per-connection end the server.
pub(crate) async fn serve_http(listener: TcpListener, config: Arc<DemoConfig>) -> io::Result<()> {
    let server = Arc::new(HttpServer { state: ServerState::new(config), in_flight: AtomicUsize::new(0) });
    let mut connections = JoinSet::new();
    loop {
        let (stream, _peer) = match listener.accept().await {
            Ok(connection) => connection,
            Err(error) if is_connection_error(&error) => continue,
            Err(error) => return Err(error),
        };
        let server = Arc::clone(&server);
        if server.breaks("chaos-hang") {
            // Read whatever the client sends, answer nothing, keep the connection open.
            connections.spawn(async move {
                let mut stream = stream;
                let _ = tokio::io::copy(&mut stream, &mut tokio::io::sink()).await;
                std::future::pending::<()>().await;
            });
            continue;
        }
        connections.spawn(async move {
            // hyper lower-cases header names and trims values before we see them, so the two
            // breaks about raw header bytes (h-6, h-10) look at the request head first.
            let raw_breaks = server.breaks("h-6") || server.breaks("h-10");
            let stream = if raw_breaks {
                match RawHead::read(stream).await {
                    Some(RawHead { head, stream }) => match raw_header_refusal(&server, &head, stream).await {
                        Ok(stream) => Rewind { prefix: head, position: 0, inner: stream },
                        Err(mut refused) => {
                            let _ = tokio::io::AsyncWriteExt::shutdown(&mut refused).await;
                            return;
                        }
                    },
                    None => return,
                }
            } else {
                Rewind { prefix: Vec::new(), position: 0, inner: stream }
            };
            let service = service_fn(move |request| {
                let server = Arc::clone(&server);
                async move { Ok::<_, Infallible>(server.respond(request).await) }
            });
            // A broken connection concerns only that client.
            let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
        while connections.try_join_next().is_some() {}
    }
}

/// The head of a request read off the socket before hyper parses it (breaks h-6, h-10).
struct RawHead {
    head: Vec<u8>,
    stream: tokio::net::TcpStream,
}

impl RawHead {
    /// Reads until the end of the request head (or 64 KiB); `None` when the client went away.
    async fn read(mut stream: tokio::net::TcpStream) -> Option<Self> {
        use tokio::io::AsyncReadExt;
        let mut head = Vec::new();
        let mut chunk = [0u8; 4096];
        while !head.windows(4).any(|window| window == b"\r\n\r\n") && head.len() < 64 * 1024 {
            let read = stream.read(&mut chunk).await.ok()?;
            if read == 0 {
                return None;
            }
            head.extend_from_slice(&chunk[..read]);
        }
        Some(Self { head, stream })
    }
}

/// Under h-6 an all-upper-case `MCP-METHOD` header name is not recognised (the server matches
/// names case-sensitively, accepting only the canonical and the lower-case spelling); under
/// h-10 an `Mcp-Name` value with surrounding whitespace is compared untrimmed. Either way the
/// request gets HTTP 400 + -32020, as a header mismatch would: `Err` carries the stream it
/// answered on, `Ok` the stream to serve normally.
async fn raw_header_refusal(
    server: &HttpServer,
    head: &[u8],
    mut stream: tokio::net::TcpStream,
) -> Result<tokio::net::TcpStream, tokio::net::TcpStream> {
    use tokio::io::AsyncWriteExt;
    let text = String::from_utf8_lossy(head);
    let refuse = text.lines().skip(1).take_while(|line| !line.is_empty()).any(|line| {
        let Some((name, value)) = line.split_once(':') else { return false };
        let case_break = server.breaks("h-6")
            && name.eq_ignore_ascii_case("mcp-method")
            && name != "Mcp-Method"
            && name != "mcp-method";
        let value = value.strip_prefix(' ').unwrap_or(value);
        let space_break = server.breaks("h-10")
            && name.eq_ignore_ascii_case("mcp-name")
            && (value.starts_with([' ', '\t']) || value.trim_end_matches('\r').ends_with([' ', '\t']));
        case_break || space_break
    });
    if !refuse {
        return Ok(stream);
    }
    let body =
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": protocol::HEADER_MISMATCH, "message": "Header mismatch"}})
            .to_string();
    let response = format!(
        "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    Err(stream)
}

/// A stream that first yields bytes already read from it, then the rest.
struct Rewind {
    prefix: Vec<u8>,
    position: usize,
    inner: tokio::net::TcpStream,
}

impl tokio::io::AsyncRead for Rewind {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        context: &mut std::task::Context<'_>,
        buffer: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        if self.position < self.prefix.len() {
            let rest = &self.prefix[self.position..];
            let take = rest.len().min(buffer.remaining());
            buffer.put_slice(&rest[..take]);
            self.position += take;
            return std::task::Poll::Ready(Ok(()));
        }
        std::pin::Pin::new(&mut self.inner).poll_read(context, buffer)
    }
}

impl tokio::io::AsyncWrite for Rewind {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        context: &mut std::task::Context<'_>,
        bytes: &[u8],
    ) -> std::task::Poll<io::Result<usize>> {
        std::pin::Pin::new(&mut self.inner).poll_write(context, bytes)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_flush(context)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_shutdown(context)
    }
}

fn is_connection_error(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
            | io::ErrorKind::WouldBlock
    )
}

struct HttpServer {
    state: ServerState,
    /// Requests being processed (break h-23 refuses concurrent ones).
    in_flight: AtomicUsize,
}

/// Decrements the in-flight counter when a request is done.
struct InFlight<'a>(&'a AtomicUsize);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl HttpServer {
    fn breaks(&self, id: &str) -> bool {
        self.state.breaks(id)
    }

    async fn respond(&self, request: Request<Incoming>) -> Response<Body> {
        let token = self.state.config().token().map(str::to_owned);
        if token.is_some() && request.uri().path().starts_with(METADATA_PATH) && request.method() == Method::GET {
            return self.protected_resource_metadata(&request);
        }
        if request.uri().path() != ENDPOINT_PATH {
            return plain(StatusCode::NOT_FOUND, "not found: the MCP endpoint is /mcp");
        }
        if let Some(response) = self.chaos(&request) {
            return response;
        }
        let headers = request.headers().clone();
        if let Some(origin) = headers.get(header::ORIGIN) {
            if !self.breaks("h-21") && !origin_allowed(origin) {
                return transport_error(StatusCode::FORBIDDEN, "Forbidden: invalid Origin");
            }
        }
        // The demo binds loopback only, so a foreign Host means DNS rebinding (H-26).
        if let Some(host) = headers.get(header::HOST) {
            let as_origin = host.to_str().ok().and_then(|host| HeaderValue::from_str(&format!("http://{host}")).ok());
            if !self.breaks("h-26") && !as_origin.as_ref().is_some_and(origin_allowed) {
                return plain(StatusCode::MISDIRECTED_REQUEST, "misdirected request: invalid Host header");
            }
        }
        if let Some(token) = &token {
            if let Some(refusal) = self.authorize(&request, token) {
                return refusal;
            }
        }
        match *request.method() {
            Method::POST => {}
            Method::GET | Method::DELETE if self.breaks("h-18") => {
                return plain(StatusCode::NOT_FOUND, "not found");
            }
            _ => {
                let mut response = transport_error(
                    StatusCode::METHOD_NOT_ALLOWED,
                    "Method not allowed: this MCP endpoint accepts POST only",
                );
                response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
                return response;
            }
        }
        if !content_type_is_json(&headers) {
            return transport_error(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Unsupported Media Type: Content-Type must be application/json",
            );
        }
        if !accept_lists_both(&headers) {
            return transport_error(
                StatusCode::NOT_ACCEPTABLE,
                "Not Acceptable: Accept must list application/json and text/event-stream",
            );
        }
        if self.breaks("h-20") && headers.contains_key("last-event-id") {
            return transport_error(StatusCode::BAD_REQUEST, "Resumption is not supported");
        }
        let body = match Limited::new(request.into_body(), MAX_BODY_BYTES).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(_) => {
                return transport_error(StatusCode::PAYLOAD_TOO_LARGE, "Request body too large");
            }
        };

        if self.breaks("chaos-die-on-unparsable") && serde_json::from_slice::<Value>(&body).is_err() {
            // A server whose unguarded JSON.parse throws: the process dies mid-request.
            std::process::exit(1);
        }
        if self.dies_on(&headers, &body) {
            // A moment later: the requests under way are answered, this one never is.
            tokio::time::sleep(Duration::from_millis(300)).await;
            std::process::exit(1);
        }

        let previous = self.in_flight.fetch_add(1, Ordering::SeqCst);
        let _in_flight = InFlight(&self.in_flight);
        if self.breaks("h-23") {
            if previous > 0 {
                return plain(StatusCode::SERVICE_UNAVAILABLE, "busy: one request at a time");
            }
            // Hold the slot long enough for simultaneous requests to overlap.
            tokio::time::sleep(Duration::from_millis(100)).await;
        }

        // The method of the request, for the breaks that spoil only some methods' answers.
        let method = serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|message| message.get("method").and_then(Value::as_str).map(str::to_owned));
        if method.as_deref() == Some("tools/list") && self.breaks("chaos-endless-tools-list") {
            let id = serde_json::from_slice::<Value>(&body).ok().and_then(|message| message.get("id").cloned());
            return endless_response(&id.unwrap_or(Value::Null));
        }
        let reply = match serde_json::from_slice::<Value>(&body) {
            Ok(message) => {
                let view = HttpRequestView::new(headers.iter().map(|(name, value)| (name.as_str(), value.as_bytes())));
                core::handle(&self.state, &message, Some(&view))
            }
            Err(_) if self.breaks("e-8") => {
                let mut response = Response::new(full(Bytes::from_static(
                    b"<html><body><h1>500 Internal Server Error</h1></body></html>",
                )));
                *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
                response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html"));
                return response;
            }
            Err(_) => core::parse_error_reply(),
        };
        if reply.crash {
            // The break: the process dies on this request, as a server that panics on invalid
            // tool arguments does; the connection closes unanswered and nothing listens after.
            std::process::exit(70);
        }
        let mut response = self.render(reply, method.as_deref()).await;
        if self.breaks("h-19") {
            let session =
                headers.get("mcp-session-id").cloned().unwrap_or_else(|| HeaderValue::from_static("demo-session-1"));
            response.headers_mut().insert("mcp-session-id", session);
        }
        response
    }

    /// The breaks that kill the process on one malformed probe: a JSON object that is no
    /// JSON-RPC message (E-7's), or an `Mcp-Method` header that names another method than the
    /// body (H-4's).
    fn dies_on(&self, headers: &HeaderMap, body: &[u8]) -> bool {
        let Ok(Value::Object(message)) = serde_json::from_slice::<Value>(body) else { return false };
        let envelope = ["method", "result", "error"].iter().any(|key| message.contains_key(*key));
        let header = headers.get("mcp-method").and_then(|value| value.to_str().ok());
        let body_method = message.get("method").and_then(Value::as_str);
        (self.breaks("chaos-die-on-invalid-envelope") && !envelope)
            || (self.breaks("chaos-die-on-method-mismatch")
                && matches!((header, body_method), (Some(header), Some(method)) if header != method))
    }

    /// The chaos modes that answer every request the same broken way.
    fn chaos(&self, request: &Request<Incoming>) -> Option<Response<Body>> {
        if self.breaks("chaos-html-500") {
            let mut response = Response::new(full(Bytes::from_static(
                b"<!DOCTYPE html><html><body><h1>500 Internal Server Error</h1></body></html>",
            )));
            *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
            response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html"));
            return Some(response);
        }
        if self.breaks("chaos-host-403") || self.breaks("chaos-host-421") {
            return Some(host_refused(request, self.breaks("chaos-host-403")));
        }
        if request.method() != Method::POST {
            return None;
        }
        if self.breaks("chaos-sse-cut") {
            let partial = Bytes::from_static(b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":");
            let frames = futures_util::stream::iter([Ok::<_, Infallible>(Frame::data(partial))]);
            let mut response = Response::new(BodyExt::boxed_unsync(StreamBody::new(frames)));
            response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
            response.headers_mut().insert("x-accel-buffering", HeaderValue::from_static("no"));
            return Some(response);
        }
        if self.breaks("chaos-50mb") {
            // A valid JSON result padded to 50 MB, streamed in 1 MiB chunks of one shared buffer.
            let chunk = Bytes::from(vec![b'x'; 1 << 20]);
            let mut parts = vec![Bytes::from_static(
                b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":\"complete\",\"pad\":\"",
            )];
            parts.extend(std::iter::repeat_n(chunk, 50 * 1_000_000 / (1 << 20) + 1));
            parts.push(Bytes::from_static(b"\"}}"));
            let frames =
                futures_util::stream::iter(parts.into_iter().map(|part| Ok::<_, Infallible>(Frame::data(part))));
            let mut response = Response::new(BodyExt::boxed_unsync(StreamBody::new(frames)));
            response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
            return Some(response);
        }
        None
    }

    /// The HTTP response of a reply to a request of this JSON-RPC `method` (`None`: no method),
    /// ready when the reply's delays say: a stream sends each message when it is due, a JSON body
    /// (its last message) when that message is due.
    async fn render(&self, reply: Reply, method: Option<&str>) -> Response<Body> {
        let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::OK);
        if status == StatusCode::INTERNAL_SERVER_ERROR && self.breaks("h-14-html-500") {
            // The break: invalid tool arguments get the framework's HTML error page (the only
            // status-500 reply of the core under this break), not a JSON-RPC response.
            let mut response = Response::new(full(Bytes::from_static(
                b"<!DOCTYPE html><html><body><h1>500 Internal Server Error</h1><p>TypeError: arguments.get is not a function</p></body></html>",
            )));
            *response.status_mut() = status;
            response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
            return response;
        }
        if reply.messages.is_empty() {
            let mut response = Response::new(full(Bytes::new()));
            *response.status_mut() = status;
            return response;
        }
        // The breaks that spoil the answers of every method but `server/discover` (the run gets
        // its era and capabilities, then nothing it can read), or of `tools/list` alone.
        let later = method != Some("server/discover");
        let last = reply.last().map(Value::to_string).unwrap_or_default();
        if self.breaks("m-11-sse-unterminated")
            || (later && self.breaks("m-11-sse-unterminated-later"))
            || (method == Some("tools/list") && self.breaks("m-11-sse-unterminated-tools-list"))
        {
            // An SSE event without its blank-line terminator, and the stream stays open: a
            // client never gets a complete event.
            return sse_response(status, format!("event: message\ndata: {last}\n"), true);
        }
        if later && self.breaks("m-11-sse-cut-later") {
            // The stream ends in the middle of the event's JSON.
            let half: String = last.chars().take(last.chars().count() / 2).collect();
            return sse_response(status, format!("event: message\ndata: {half}"), false);
        }
        if later && self.breaks("m-11-sse-continuation") {
            // Pretty-printed JSON whose first line alone has the `data:` prefix: SSE ignores
            // the other lines, so the event's data is `{`.
            let pretty =
                reply.last().and_then(|message| serde_json::to_string_pretty(message).ok()).unwrap_or_default();
            return sse_response(status, format!("event: message\ndata: {pretty}\n\n"), false);
        }
        // The listen stream stays as it is: its notifications are not answers.
        if later && status == StatusCode::OK && method != Some("subscriptions/listen") {
            if let (Some(way), Some(message)) = (core::later_way(&self.state), reply.last()) {
                return spoiled_response(way.http(message));
            }
        }
        let multiline = self.breaks("chaos-sse-multiline-data");
        if (reply.stream || multiline) && !self.breaks("m-11-batch") && !self.breaks("m-11-single-quotes") {
            return self.render_stream(status, reply.messages);
        }
        // One body for the whole reply: it leaves when its last message would have on a stream.
        let due: Duration = reply.messages.iter().map(|outgoing| outgoing.delay).sum();
        if !due.is_zero() {
            tokio::time::sleep(due).await;
        }
        let mut body = reply.last().map(Value::to_string).unwrap_or_default();
        if self.breaks("m-11-batch") {
            body = format!("[{body}]");
        } else if self.breaks("m-11-single-quotes") {
            // A language's printed dictionary, not JSON.
            body = body.replace('"', "'");
        }
        let mut response = Response::new(full(Bytes::from(super::chaos::wire(body))));
        *response.status_mut() = status;
        let content_type = if self.breaks("h-14") { "text/plain" } else { "application/json" };
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        response
    }

    fn render_stream(&self, status: StatusCode, messages: Vec<Outgoing>) -> Response<Body> {
        let mut steps: VecDeque<(Duration, Bytes)> = messages
            .into_iter()
            .map(|outgoing| {
                let frame = if self.breaks("chaos-sse-multiline-data") {
                    // Valid SSE: the pretty-printed JSON, one `data:` line per line of it.
                    let pretty = serde_json::to_string_pretty(&outgoing.message).unwrap_or_default();
                    let lines: Vec<String> = pretty.lines().map(|line| format!("data: {line}\n")).collect();
                    format!("event: message\n{}\n", lines.concat())
                } else {
                    format!("event: message\ndata: {}\n\n", outgoing.message)
                };
                (outgoing.delay, Bytes::from(super::chaos::wire(frame)))
            })
            .collect();
        if self.breaks("chaos-10000-notifications") {
            // The flood leaves in writes of about 64 KiB, as a buffered server writes it: the
            // client's reading is under test, not the cost of a write per event here.
            let mut merged: VecDeque<(Duration, Bytes)> = VecDeque::new();
            for (delay, bytes) in steps {
                match merged.back_mut() {
                    Some((_, last)) if delay.is_zero() && last.len() < 64 * 1024 => {
                        *last = Bytes::from([last.as_ref(), bytes.as_ref()].concat());
                    }
                    _ => merged.push_back((delay, bytes)),
                }
            }
            steps = merged;
        }
        if self.breaks("h-16") {
            for _ in 0..5 {
                steps.push_back((Duration::from_secs(1), Bytes::from_static(b": keep-alive\n\n")));
            }
        }
        if self.breaks("chaos-80000-tools-sse") {
            // Written as a server behind a write buffer would: 16 KiB at a time, each its own
            // write, so the client reads the event in many chunks (the case a parser that rescans
            // its buffer handles in quadratic time).
            steps = steps
                .into_iter()
                .flat_map(|(delay, bytes)| {
                    let chunks: Vec<(Duration, Bytes)> = (0..bytes.len())
                        .step_by(CHAOS_SSE_CHUNK)
                        .map(|start| (Duration::ZERO, bytes.slice(start..(start + CHAOS_SSE_CHUNK).min(bytes.len()))))
                        .collect();
                    chunks
                        .into_iter()
                        .enumerate()
                        .map(move |(index, (_, chunk))| (if index == 0 { delay } else { CHAOS_SSE_PAUSE }, chunk))
                })
                .collect();
        }
        let frames = futures_util::stream::unfold(steps, |mut steps| async move {
            let (delay, bytes) = steps.pop_front()?;
            if delay == CHAOS_SSE_PAUSE {
                // Let the previous write go out before the next one (no timer: 1 ms granularity).
                tokio::task::yield_now().await;
            } else if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            Some((Ok::<_, Infallible>(Frame::data(bytes)), steps))
        });
        let mut response = Response::new(BodyExt::boxed_unsync(StreamBody::new(frames)));
        *response.status_mut() = status;
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        if !self.breaks("h-17") {
            headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
        }
        response
    }
}

/// The answer of `chaos-endless-tools-list` to the `tools/list` request `id`: a JSON body whose
/// tools array never ends, written as fast as the client reads it.
fn endless_response(id: &Value) -> Response<Body> {
    let start = Bytes::from(super::chaos::endless_start(id));
    let entries = Bytes::from(super::chaos::endless_entries());
    let frames = futures_util::StreamExt::chain(
        futures_util::stream::iter([Ok::<_, Infallible>(Frame::data(start))]),
        futures_util::stream::repeat_with(move || Ok::<_, Infallible>(Frame::data(entries.clone()))),
    );
    let mut response = Response::new(BodyExt::boxed_unsync(StreamBody::new(frames)));
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// The write size of the `chaos-80000-tools-sse` mode.
const CHAOS_SSE_CHUNK: usize = 16 * 1024;
/// Marks the writes of that mode after the first: the stream yields to the runtime between them,
/// so each write goes out on its own.
const CHAOS_SSE_PAUSE: Duration = Duration::from_nanos(1);

/// An SSE response whose body is `text`, then the end of the stream or (`held_open`) nothing
/// more, ever.
fn sse_response(status: StatusCode, text: String, held_open: bool) -> Response<Body> {
    let first = futures_util::stream::iter([Ok::<_, Infallible>(Frame::data(Bytes::from(text)))]);
    let body = if held_open {
        BodyExt::boxed_unsync(StreamBody::new(futures_util::StreamExt::chain(first, futures_util::stream::pending())))
    } else {
        BodyExt::boxed_unsync(StreamBody::new(first))
    };
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    response.headers_mut().insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// An answer a `chaos-later-*` mode spoiled ([`super::later`]).
fn spoiled_response(spoiled: super::later::SpoiledBody) -> Response<Body> {
    let truncated = spoiled.declared_length.is_some();
    let body = Bytes::from(spoiled.body);
    let mut response = Response::new(if truncated {
        // Streamed, and ended a moment later, so that the part that is there goes out before
        // the connection closes short of the declared length.
        let frames = futures_util::stream::unfold(Some(body), |part| async move {
            match part {
                Some(part) => Some((Ok::<_, Infallible>(Frame::data(part)), None)),
                None => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    None
                }
            }
        });
        BodyExt::boxed_unsync(StreamBody::new(frames))
    } else {
        full(body)
    });
    let headers = response.headers_mut();
    if spoiled.content_type == "text/event-stream" {
        headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    }
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(spoiled.content_type));
    if let Some(encoding) = spoiled.content_encoding {
        headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static(encoding));
    }
    if let Some(length) = spoiled.declared_length {
        // Longer than the body: the connection closes short of it.
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    }
    response
}

fn full(bytes: Bytes) -> Body {
    BodyExt::boxed_unsync(Full::new(bytes))
}

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(full(Bytes::from_static(text.as_bytes())));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    response
}

/// Where the demo serves its OAuth protected-resource metadata (RFC 9728), for `/mcp`.
const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

impl HttpServer {
    /// `None` when the request carries the token; otherwise the 401.
    fn authorize(&self, request: &Request<Incoming>, token: &str) -> Option<Response<Body>> {
        let expected = format!("Bearer {token}");
        let header = request.headers().get(header::AUTHORIZATION).and_then(|value| value.to_str().ok());
        if header == Some(expected.as_str()) {
            return None;
        }
        if self.breaks("a-3") && header.is_some_and(|value| value.starts_with("Bearer ")) {
            return None;
        }
        let in_query = request
            .uri()
            .query()
            .is_some_and(|query| query.split('&').any(|pair| pair == format!("access_token={token}")));
        if self.breaks("a-4") && in_query {
            return None;
        }
        let mut response = transport_error(StatusCode::UNAUTHORIZED, "Unauthorized: a bearer token is required");
        let host = request.headers().get(header::HOST).and_then(|value| value.to_str().ok()).unwrap_or("127.0.0.1");
        let challenge = if self.breaks("a-1") {
            "Bearer".to_owned()
        } else {
            format!("Bearer resource_metadata=\"http://{host}{METADATA_PATH}{ENDPOINT_PATH}\"")
        };
        if let Ok(value) = HeaderValue::from_str(&challenge) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
        }
        Some(response)
    }

    /// The protected-resource metadata document, or 404 under break a-1.
    fn protected_resource_metadata(&self, request: &Request<Incoming>) -> Response<Body> {
        if self.breaks("a-1") {
            return plain(StatusCode::NOT_FOUND, "not found");
        }
        let host = request.headers().get(header::HOST).and_then(|value| value.to_str().ok()).unwrap_or("127.0.0.1");
        let mut document = json!({"resource": format!("http://{host}{ENDPOINT_PATH}"), "authorization_servers": ["https://auth.example.invalid"]});
        if self.breaks("a-2") {
            document.as_object_mut().map(|object| object.remove("authorization_servers"));
        }
        let mut response = Response::new(full(Bytes::from(document.to_string())));
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        response
    }
}

/// A transport-level refusal: the HTTP status plus a JSON-RPC error without an id.
fn transport_error(status: StatusCode, message: &str) -> Response<Body> {
    let body = json!({"jsonrpc": "2.0", "error": {"code": protocol::INVALID_REQUEST, "message": message}});
    let mut response = Response::new(full(Bytes::from(body.to_string())));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// Allows loopback origins only: `http(s)://localhost|127.0.0.1|[::1]` with an optional port.
fn origin_allowed(origin: &HeaderValue) -> bool {
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    let Some(authority) = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://")) else {
        return false;
    };
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() && !authority.ends_with(']') => (host, Some(port)),
        _ => (authority, None),
    };
    let port_ok = port.is_none_or(|port| !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()));
    port_ok && matches!(host, "localhost" | "127.0.0.1" | "[::1]")
}

fn media_types(headers: &HeaderMap, name: header::HeaderName) -> Vec<String> {
    headers
        .get_all(name)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(|item| item.split(';').next().unwrap_or_default().trim().to_ascii_lowercase())
        .collect()
}

fn content_type_is_json(headers: &HeaderMap) -> bool {
    media_types(headers, header::CONTENT_TYPE).first().is_some_and(|media_type| media_type == "application/json")
}

fn accept_lists_both(headers: &HeaderMap) -> bool {
    let accepted = media_types(headers, header::ACCEPT);
    let lists = |wanted: &str, family: &str| {
        accepted.iter().any(|media_type| media_type == wanted || media_type == family || media_type == "*/*")
    };
    lists("application/json", "application/*") && lists("text/event-stream", "text/*")
}

/// `chaos-host-403` / `chaos-host-421`: a Host allow-list that does not allow the request's
/// Host, answered as the TypeScript SDK does (403, a JSON-RPC error) or as the Python SDK does
/// (421, plain text).
fn host_refused(request: &Request<Incoming>, typescript: bool) -> Response<Body> {
    let host = request.headers().get(header::HOST).and_then(|value| value.to_str().ok()).unwrap_or("");
    let (status, content_type, body) = if typescript {
        let error = serde_json::json!({"jsonrpc": "2.0", "error": {"code": -32000, "message": format!("Invalid Host: {host}")}, "id": null});
        (StatusCode::FORBIDDEN, "application/json", error.to_string())
    } else {
        (StatusCode::MISDIRECTED_REQUEST, "text/plain; charset=utf-8", "Invalid Host header".to_owned())
    };
    let mut response = Response::new(full(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::core::PROTOCOL_VERSION;
    use crate::demo::protocol::{META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION};

    /// Starts a demo server on an ephemeral loopback port; it stops when the test's runtime ends.
    async fn start(breaks: &[&str]) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let config = Arc::new(DemoConfig::with_breaks(breaks.iter().copied()));
        tokio::spawn(serve_http(listener, config));
        format!("http://{address}{ENDPOINT_PATH}")
    }

    fn client() -> reqwest::Client {
        // reqwest is built without a default TLS provider; we only speak plain http here.
        let _ = rustls::crypto::ring::default_provider().install_default();
        reqwest::Client::new()
    }

    fn body(method: &str, id: u64, params: Value) -> Value {
        let mut params = params;
        params["_meta"] = json!({META_PROTOCOL_VERSION: PROTOCOL_VERSION, META_CLIENT_CAPABILITIES: {}});
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    /// A POST with the transport headers, `MCP-Protocol-Version` and `Mcp-Method` (from the
    /// body unless `method_header` overrides it; `Some("")` leaves it out).
    fn post_with(
        client: &reqwest::Client,
        url: &str,
        message: &Value,
        method_header: Option<&str>,
    ) -> reqwest::RequestBuilder {
        let method = method_header.unwrap_or(message["method"].as_str().unwrap_or_default());
        let request = client
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", PROTOCOL_VERSION)
            .body(message.to_string());
        if method.is_empty() { request } else { request.header("mcp-method", method) }
    }

    fn post(client: &reqwest::Client, url: &str, message: &Value) -> reqwest::RequestBuilder {
        post_with(client, url, message, None)
    }

    fn sse_messages(text: &str) -> Vec<Value> {
        text.lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .map(|data| serde_json::from_str(data).unwrap())
            .collect()
    }

    #[tokio::test]
    async fn discover_and_transport_rules() {
        let url = start(&[]).await;
        let client = client();
        let discover = body("server/discover", 7, json!({}));
        let response = post(&client, &url, &discover).send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-type"], "application/json");
        let reply: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
        assert_eq!(reply["id"], 7);
        assert_eq!(reply["result"]["supportedVersions"], json!([PROTOCOL_VERSION]));

        let wrong_method = post_with(&client, &url, &discover, Some("tools/list"));
        let response = wrong_method.send().await.unwrap();
        assert_eq!(response.status(), 400);
        let reply: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
        assert_eq!((reply["id"].clone(), reply["error"]["code"].clone()), (json!(7), json!(-32020)));

        for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
            let response = client.request(method, &url).send().await.unwrap();
            assert_eq!(response.status(), 405);
        }
        let evil = post(&client, &url, &discover).header("origin", "http://evil.example");
        assert_eq!(evil.send().await.unwrap().status(), 403);
        let local = post(&client, &url, &discover).header("origin", "http://localhost:3000");
        assert_eq!(local.send().await.unwrap().status(), 200);

        let session = post(&client, &url, &discover).header("mcp-session-id", "x");
        let response = session.header("last-event-id", "1").send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert!(response.headers().get("mcp-session-id").is_none());

        let cancelled = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                               "params": {"requestId": "never-sent"}});
        let response = post(&client, &url, &cancelled).send().await.unwrap();
        assert_eq!(response.status(), 202);
        assert!(response.bytes().await.unwrap().is_empty());

        let garbage = post(&client, &url, &discover).body("{not json");
        let response = garbage.send().await.unwrap();
        assert_eq!(response.status(), 400);
        let reply: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
        assert_eq!(reply["error"]["code"], -32700);

        let initialize = post(&client, &url, &body("initialize", 1, json!({})));
        assert_eq!(initialize.send().await.unwrap().status(), 404);
    }

    #[tokio::test]
    async fn break_h_14_html_500_answers_invalid_arguments_with_an_html_page() {
        let url = start(&["h-14-html-500"]).await;
        let client = client();
        let call =
            |arguments: Value| body("tools/call", 5, json!({"name": "test_simple_text", "arguments": arguments}));
        let invalid = post(&client, &url, &call(json!("{}"))).header("mcp-name", "test_simple_text");
        let response = invalid.send().await.unwrap();
        assert_eq!(response.status(), 500);
        assert_eq!(response.headers()["content-type"], "text/html; charset=utf-8");
        assert!(String::from_utf8_lossy(&response.bytes().await.unwrap()).starts_with("<!DOCTYPE html>"));
        // Valid arguments are still answered in JSON-RPC.
        let valid = post(&client, &url, &call(json!({}))).header("mcp-name", "test_simple_text");
        let response = valid.send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-type"], "application/json");
    }

    #[tokio::test]
    async fn progress_is_streamed_as_sse() {
        let url = start(&[]).await;
        let mut message = body("tools/call", 3, json!({"name": "test_progress"}));
        message["params"]["_meta"]["progressToken"] = json!("tok");
        let request = post(&client(), &url, &message).header("mcp-name", "test_progress");
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        assert_eq!(response.headers()["x-accel-buffering"], "no");
        let messages = sse_messages(&response.text().await.unwrap());
        let progress: Vec<Value> = messages[..3].iter().map(|message| message["params"]["progress"].clone()).collect();
        assert_eq!(progress, vec![json!(1), json!(2), json!(3)]);
        assert_eq!(messages[3]["id"], 3);
        assert_eq!(messages.len(), 4);
    }

    #[tokio::test]
    async fn slow_tools_send_a_json_result_no_sooner_than_the_delay() {
        let url = start(&["chaos-slow-tools"]).await;
        let message = body("tools/call", 4, json!({"name": "test_simple_text"}));
        let request = post(&client(), &url, &message).header("mcp-name", "test_simple_text");
        let started = std::time::Instant::now();
        let response = request.send().await.unwrap();
        assert_eq!(response.headers()["content-type"], "application/json");
        let reply: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
        assert!(started.elapsed() >= crate::demo::core::SLOW_TOOLS_DELAY, "answered after {:?}", started.elapsed());
        assert_eq!((reply["id"].clone(), reply["result"]["resultType"].clone()), (json!(4), json!("complete")));
    }

    #[tokio::test]
    async fn listen_acknowledges_then_ends() {
        let url = start(&[]).await;
        let message = body("subscriptions/listen", 9, json!({"notifications": {"toolsListChanged": true}}));
        let response = post(&client(), &url, &message).send().await.unwrap();
        let messages = sse_messages(&response.text().await.unwrap());
        assert_eq!(messages[0]["method"], "notifications/subscriptions/acknowledged");
        assert_eq!(messages[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 9);
        assert_eq!(messages.last().unwrap()["result"]["resultType"], "complete");
    }

    #[tokio::test]
    async fn breaks_change_only_their_rule() {
        let url = start(&["h-4", "h-14"]).await;
        let client = client();
        let discover = body("server/discover", 1, json!({}));
        let wrong_method = post_with(&client, &url, &discover, Some("tools/list"));
        let response = wrong_method.send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-type"], "text/plain");
        // Presence of Mcp-Method is still enforced under h-4.
        let request = post_with(&client, &url, &discover, Some(""));
        assert_eq!(request.send().await.unwrap().status(), 400);
    }

    #[tokio::test]
    async fn batches_are_refused() {
        let url = start(&[]).await;
        let discover = body("server/discover", 1, json!({}));
        let batch = json!([discover, discover]);
        let request = post(&client(), &url, &discover).body(batch.to_string());
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 400);
        let reply: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
        assert_eq!((reply["id"].clone(), reply["error"]["code"].clone()), (Value::Null, json!(-32600)));
    }

    #[test]
    fn origins() {
        let allowed = |origin: &str| origin_allowed(&HeaderValue::from_str(origin).unwrap());
        for origin in ["http://localhost", "https://127.0.0.1:8443", "http://[::1]:80", "http://localhost:3000"] {
            assert!(allowed(origin), "{origin}");
        }
        for origin in
            ["http://evil.example", "null", "http://localhost.evil.example", "ftp://localhost", "http://localhost:x"]
        {
            assert!(!allowed(origin), "{origin}");
        }
    }
}
