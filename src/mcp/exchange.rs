//! What one request looks like on the way out ([`Outgoing`]) and what came back ([`Exchange`]).
//!
//! Probes vary one thing at a time, so an [`Outgoing`] can replace the body with raw bytes,
//! drop or override any header, or use another HTTP method; everything else is derived from the
//! body as a correct client would send it.

use std::time::Duration;

use serde_json::Value;

use crate::mcp::entries::Entries;

/// The body of an outgoing message.
#[derive(Debug, Clone)]
pub(crate) enum Body {
    /// A JSON-RPC message. When it has a `method` and no `id`, and `notification` is false in
    /// [`Outgoing`], the client assigns a fresh id.
    Json(Value),
    /// Bytes sent as they are (unparsable JSON, batches, …); no headers are derived from them
    /// beyond `Content-Type` and `Accept`.
    Raw(Vec<u8>),
    /// No body (GET, DELETE).
    Empty,
}

/// A change to the headers a correct client would send (HTTP only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HeaderEdit {
    /// Removes the header (name compared case-insensitively).
    Remove(String),
    /// Sets the header, replacing one of the same name; the name is sent with this exact case
    /// when the raw writer is used.
    Set(String, String),
}

/// One outgoing request or notification.
#[derive(Debug, Clone)]
pub(crate) struct Outgoing {
    /// The body.
    pub body: Body,
    /// True for a notification: no id is assigned and no response is awaited.
    pub notification: bool,
    /// HTTP method; `POST` unless a probe says otherwise.
    pub http_method: &'static str,
    /// Edits applied after the derived headers.
    pub header_edits: Vec<HeaderEdit>,
    /// Send through the raw HTTP/1.1 writer (exact header-name case, arbitrary bytes).
    pub raw: bool,
    /// The id to use instead of a fresh one (string ids, Unicode ids).
    pub id: Option<Value>,
    /// Overrides the per-request timeout.
    pub timeout: Option<Duration>,
    /// Sends to this URL instead of the endpoint (authorization probes: metadata documents,
    /// a token in the query string).
    pub url: Option<String>,
    /// For `subscriptions/listen`: return this long after the first message (the
    /// acknowledgement) if the stream is still open, instead of waiting for the timeout.
    pub settle_after_first: Option<Duration>,
}

impl Outgoing {
    /// A JSON-RPC request whose id the client assigns.
    pub(crate) fn request(body: Value) -> Self {
        Self {
            body: Body::Json(body),
            notification: false,
            http_method: "POST",
            header_edits: Vec::new(),
            raw: false,
            id: None,
            timeout: None,
            settle_after_first: None,
            url: None,
        }
    }

    /// A JSON-RPC notification (no id, no response awaited).
    pub(crate) fn notification(body: Value) -> Self {
        Self { notification: true, ..Self::request(body) }
    }

    /// Raw bytes sent as the body of a POST.
    pub(crate) fn raw_body(bytes: Vec<u8>) -> Self {
        Self { body: Body::Raw(bytes), ..Self::request(Value::Null) }
    }

    /// Adds a header edit.
    pub(crate) fn header(mut self, edit: HeaderEdit) -> Self {
        self.header_edits.push(edit);
        self
    }

    /// Sets a header.
    pub(crate) fn set(self, name: &str, value: &str) -> Self {
        self.header(HeaderEdit::Set(name.into(), value.into()))
    }

    /// Removes a header.
    pub(crate) fn remove(self, name: &str) -> Self {
        self.header(HeaderEdit::Remove(name.into()))
    }

    /// Uses this id.
    pub(crate) fn with_id(mut self, id: Value) -> Self {
        self.id = Some(id);
        self
    }

    /// Sends through the raw HTTP/1.1 writer.
    pub(crate) fn raw(mut self) -> Self {
        self.raw = true;
        self
    }

    /// The JSON-RPC method of the body, when it has one.
    pub(crate) fn method(&self) -> Option<&str> {
        match &self.body {
            Body::Json(value) => value.get("method").and_then(Value::as_str),
            _ => None,
        }
    }
}

/// Why an exchange has no final response. A server's misbehaviour, never an error of ours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// No (complete) answer within the timeout.
    Timeout,
    /// Connecting failed (refused, reset, DNS, TLS).
    Connect(String),
    /// The connection or stream ended before the final response arrived.
    Closed(String),
    /// The body is larger than the response-size cap.
    TooLarge(usize),
    /// The body is neither a JSON-RPC message nor an SSE stream of them.
    NotJsonRpc(String),
    /// The answer is recognisably a JSON-RPC message but was not parsed: it exceeds one of the
    /// bounds of [`crate::mcp::limits`] (values, nesting) or is not UTF-8. The text says which,
    /// with the bound.
    Unparsable(String),
    /// The stdio server process has exited.
    Exited(String),
    /// Not sent: an earlier answer to the same method was held open and unreadable, so this
    /// request would only have waited for its timeout too. The text names that answer.
    Skipped(String),
    /// stdio: the server answered, but not as newline-delimited JSON (spec-notes §7). The answer
    /// was found in another framing and is kept for the record only: a client that reads one
    /// message per line never sees it, so it is not the exchange's response.
    Misframed {
        /// The framing the answer came in, in words.
        framing: String,
        /// The answer as read out of that framing.
        answer: Value,
    },
}

impl std::fmt::Display for Failure {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Timeout => write!(formatter, "no response within the timeout"),
            Failure::Connect(detail) => write!(formatter, "could not connect: {detail}"),
            Failure::Closed(detail) => write!(formatter, "stream closed before the final response: {detail}"),
            Failure::TooLarge(limit) => write!(formatter, "response larger than the {limit}-byte cap"),
            Failure::NotJsonRpc(detail) => write!(formatter, "response is not JSON-RPC: {detail}"),
            Failure::Unparsable(detail) => write!(formatter, "response not read: {detail}"),
            Failure::Exited(detail) => write!(formatter, "server process exited: {detail}"),
            Failure::Skipped(detail) => write!(formatter, "not sent: {detail}"),
            Failure::Misframed { framing, .. } => {
                write!(formatter, "answered, but not as newline-delimited JSON ({framing}); the answer is not used")
            }
        }
    }
}

/// SSE only: why the events that came could not be read as the final response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SseUnread {
    /// An event with JSON-RPC data was never ended by a blank line, and the stream stayed open
    /// until the timeout.
    Unterminated,
    /// The stream ended inside an event carrying JSON-RPC: its data is not complete JSON.
    Cut,
    /// An event's JSON continued on lines without a `data:` prefix, which SSE ignores (the
    /// first such line).
    Continuation(String),
    /// An event's data is not one JSON value (the parse error and the data's start).
    Invalid(String),
    /// An event's data was not parsed: it exceeds a bound of [`crate::mcp::limits`], or it was
    /// not UTF-8 (which, in words).
    Unparsable(String),
}

/// What came back for one [`Outgoing`].
#[derive(Debug, Clone, Default)]
pub(crate) struct Exchange {
    /// The JSON-RPC method sent, when any.
    pub method: Option<String>,
    /// The id sent (requests only).
    pub id: Option<Value>,
    /// Redacted excerpt of the request as sent (headers and body).
    pub request_excerpt: String,
    /// HTTP status (HTTP only).
    pub status: Option<u16>,
    /// Response headers, names lowercased (HTTP only).
    pub headers: Vec<(String, String)>,
    /// Redacted excerpt of the raw response body.
    pub body_excerpt: String,
    /// Every JSON message received for this request before the final response (notifications,
    /// and anything else the server sent on the stream).
    pub messages: Vec<Value>,
    /// How many more such messages came than the [`crate::mcp::limits::MAX_MESSAGES_KEPT`]
    /// kept in `messages` (counted, not kept).
    pub messages_not_kept: usize,
    /// The final response: the message whose id equals the request id, or the single JSON
    /// body of a non-SSE response (whatever its id).
    pub response: Option<Value>,
    /// The answer to a list method (`tools/list`, …) with a result: the entries of its list,
    /// taken out of `response` (whose `result` then has no `tools`, `prompts`, … key) and kept
    /// as text, parsed one at a time ([`crate::mcp::entries`]). `None` for other answers and
    /// when the result holds no such array (the result is then as it came).
    pub entries: Option<Entries>,
    /// Why there is no final response, when there is none.
    pub failure: Option<Failure>,
    /// SSE only: whether the stream ended right after the final response (H-16).
    pub stream_closed_after_final: Option<bool>,
    /// Wall time of the exchange in milliseconds.
    pub elapsed_ms: u64,
    /// SSE only, when there is no final response: why what came could not be read.
    pub sse_unread: Option<SseUnread>,
}

impl Exchange {
    /// The value of a response header (name compared case-insensitively).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(key, _)| *key == name).map(|(_, value)| value.as_str())
    }

    /// The media type of the response (`Content-Type` without parameters, lowercased).
    pub(crate) fn content_type(&self) -> Option<String> {
        self.header("content-type").map(|value| value.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
    }

    /// The answer of an authorization layer, in words: HTTP 401 or 403 with a `Bearer`
    /// `WWW-Authenticate` challenge or an RFC 6750 error body (`{"error": "invalid_token"}`),
    /// e.g. "HTTP 401 (Bearer challenge: invalid_token)". `None` for any other answer: only
    /// such an answer shows that a token was checked.
    pub(crate) fn bearer_refusal(&self) -> Option<String> {
        let status = self.status.filter(|status| matches!(status, 401 | 403))?;
        let challenge = self
            .header("www-authenticate")
            .map(str::trim_start)
            .filter(|value| value.get(..6).is_some_and(|scheme| scheme.eq_ignore_ascii_case("bearer")));
        let body_error = self.response.as_ref().and_then(|body| body.get("error")).and_then(Value::as_str);
        let error = challenge.and_then(|challenge| auth_param(challenge, "error")).or(body_error.map(str::to_owned));
        let named = error.map(|error| format!(": {error}")).unwrap_or_default();
        match (challenge, body_error) {
            (Some(_), _) => Some(format!("HTTP {status} (Bearer challenge{named})")),
            (None, Some(_)) => Some(format!("HTTP {status} (RFC 6750 error body{named})")),
            (None, None) => None,
        }
    }

    /// The `result` of the final response, when it is a result response.
    pub(crate) fn result(&self) -> Option<&Value> {
        self.response.as_ref()?.get("result")
    }

    /// The `error` of the final response, when it is an error response.
    pub(crate) fn error(&self) -> Option<&Value> {
        self.response.as_ref()?.get("error")
    }

    /// The error code of the final response.
    pub(crate) fn error_code(&self) -> Option<i64> {
        self.error()?.get("code")?.as_i64()
    }

    /// What makes an answer that is recognisably JSON-RPC unreadable as one message in its
    /// framing, in words, if anything does (M-11): a JSON array (a batch) instead of one
    /// response object to one request, a body that carries `jsonrpc` but is not JSON (single quotes: a
    /// language's printed dict), an SSE event never ended, cut, continued without `data:`, or
    /// whose data is not JSON; or a request not sent because an earlier answer to its method
    /// was held open that way ([`Failure::Skipped`]). `None` for a readable answer, and for no
    /// answer at all (a timeout with nothing, a refused connection).
    ///
    /// Once `server/discover` was read, any answer to a request that came and cannot be read
    /// is unreadable ([`Exchange::unreadable_answer`]); this is what holds for `server/discover`
    /// itself, whose answer must be recognisably JSON-RPC to be one (an HTML page there is no MCP
    /// endpoint at all).
    pub(crate) fn unreadable(&self) -> Option<String> {
        self.unreadable_as(false)
    }

    /// What makes the answer to a request unreadable (M-11), once the server is known to speak
    /// MCP: what [`Exchange::unreadable`] names, and any other successful (2xx) answer that came
    /// but is no message a client can read — a body that is not JSON whatever it holds, an SSE
    /// stream whose events carry none, a body cut off, an encoding declared and not applied or
    /// applied and not declared. The text says what came and how it fails.
    pub(crate) fn unreadable_answer(&self) -> Option<String> {
        self.unreadable_as(true)
    }

    fn unreadable_as(&self, any_answer: bool) -> Option<String> {
        // An array answers one request only when one was sent (a batch probe's raw body has
        // no method: an array is its answer, graded by H-24).
        if self.method.is_some() && self.response.as_ref().is_some_and(Value::is_array) {
            return Some("the body is a JSON array (a batch), not a single response object".into());
        }
        if let Some(response) = &self.response {
            // Before discover was read, only what is recognisably JSON-RPC counts.
            return self
                .not_a_response(response)
                .filter(|_| any_answer || response.to_string().contains("\"jsonrpc\""));
        }
        match &self.failure {
            Some(Failure::Skipped(detail)) => return Some(format!("not sent: {detail}")),
            Some(Failure::Unparsable(detail)) => return Some(detail.clone()),
            Some(Failure::TooLarge(limit)) => {
                return Some(format!(
                    "the answer is larger than the {limit}-byte ({} MiB) cap on one response: it was cut there and not read",
                    limit >> 20
                ));
            }
            _ => {}
        }
        match &self.sse_unread {
            Some(SseUnread::Unterminated) => {
                return Some(
                    "the SSE event carrying the response was never ended by a blank line (and the stream stayed open), so it was never dispatched: each event must end with an empty line"
                        .into(),
                );
            }
            Some(SseUnread::Cut) => {
                return Some(
                    "the SSE stream ended in the middle of the event carrying the response: its data is not complete JSON"
                        .into(),
                );
            }
            Some(SseUnread::Continuation(line)) => {
                return Some(format!(
                    "the SSE event's JSON continues on lines without a `data:` prefix (`{}`), which SSE ignores, so its data is not JSON: every line of a multi-line JSON needs its own `data:` prefix (or send it on one line)",
                    line.trim()
                ));
            }
            Some(SseUnread::Invalid(detail)) => {
                return Some(format!("an SSE event carrying JSON-RPC has data that is not one JSON value ({detail})"));
            }
            Some(SseUnread::Unparsable(detail)) => return Some(format!("an SSE event carrying JSON-RPC: {detail}")),
            None => {}
        }
        if let Some(why) = self.unread_body().filter(|_| any_answer || self.shows_json_rpc()) {
            return Some(why);
        }
        if matches!(self.failure, Some(Failure::NotJsonRpc(_))) && payload_shaped(&self.body_excerpt) {
            let body = &self.body_excerpt;
            if body.contains("'jsonrpc'") {
                return Some(
                    "the body is not JSON: it uses single quotes, like a language's printed dictionary (serialize with a JSON encoder)"
                        .into(),
                );
            }
            if body.contains("\"jsonrpc\"") {
                return Some("the body carries `jsonrpc` but is not one valid JSON value".into());
            }
        }
        None
    }

    /// True for an answer to a request (it has a method) that came with a successful status, or
    /// over stdio (no status): the answers whose unreadable forms are M-11's. A refusal
    /// (4xx, 5xx) is graded by the rule of what was refused.
    fn answered(&self) -> bool {
        self.method.is_some() && self.status.is_none_or(|status| (200..300).contains(&status))
    }

    /// The body carries the marks of a JSON-RPC message (`"jsonrpc"`), whatever wraps it.
    fn shows_json_rpc(&self) -> bool {
        self.body_excerpt.contains("\"jsonrpc\"")
    }

    /// Why a parsed answer is no JSON-RPC response a client can read (M-11), if it is not: a
    /// JSON value that is not an object (a string holding the message: serialized twice), an
    /// object without the envelope, or one whose `id` is missing (no client can tell which
    /// request it answers). An `id` that differs is graded by the id-echo rule, not here; a
    /// body under an encoding it does not have, here.
    fn not_a_response(&self, response: &Value) -> Option<String> {
        if !self.answered() {
            return None;
        }
        let encoding = self
            .header("content-encoding")
            .map(str::trim)
            .filter(|coding| !coding.is_empty() && !coding.eq_ignore_ascii_case("identity"));
        if let Some(coding) = encoding {
            return Some(format!(
                "the body declares `Content-Encoding: {coding}` but is not encoded (it is plain JSON): a client that decodes it as declared fails"
            ));
        }
        let object = match response {
            Value::Object(object) => object,
            Value::String(text) if serde_json::from_str::<Value>(text).is_ok_and(|inner| inner.is_object()) => {
                return Some(
                    "the body is a JSON string holding the JSON-RPC message: the message was serialized twice (double-encoded)"
                        .into(),
                );
            }
            other => {
                let kind = match other {
                    Value::String(_) => "a string",
                    Value::Number(_) => "a number",
                    Value::Bool(_) => "a boolean",
                    _ => "null",
                };
                return Some(format!("the body is a JSON value that is {kind}, not a response object"));
            }
        };
        if object.contains_key("method") {
            return None;
        }
        if !object.contains_key("result") && !object.contains_key("error") {
            let keys: Vec<String> = object.keys().take(3).map(|key| format!("`{key}`")).collect();
            return Some(format!(
                "the body is a JSON object with neither `result` nor `error` (its keys: {}): not a JSON-RPC response (a result sent without its envelope?)",
                if keys.is_empty() { "none".to_owned() } else { keys.join(", ") }
            ));
        }
        match object.get("jsonrpc") {
            Some(Value::String(version)) if version == "2.0" => {}
            Some(other) => {
                return Some(format!(
                    "the response says `\"jsonrpc\": {other}`, not \"2.0\": clients that check the envelope drop it"
                ));
            }
            None => {
                return Some(
                    "the response has no `\"jsonrpc\": \"2.0\"`: clients that check the envelope drop it".into(),
                );
            }
        }
        if !object.contains_key("id") {
            return Some("the response has no `id`: no client can tell which request it answers".into());
        }
        None
    }

    /// Why a successful answer that came as bytes gave no message (M-11), in words: a byte
    /// order mark, a compressed body, an HTML page, SSE framing under a JSON content type, a
    /// bare JSON body or events without JSON under `text/event-stream`, a body cut off, or
    /// any other body that is not JSON. `None` when nothing came or the answer was read.
    fn unread_body(&self) -> Option<String> {
        if !self.answered() || self.body_excerpt.trim().is_empty() {
            return None;
        }
        let content_type = self.content_type().unwrap_or_else(|| "none".into());
        let body = self.body_excerpt.trim_start();
        let first_line = body.lines().next().unwrap_or_default();
        let shown = crate::text::clip(&first_line.split_whitespace().collect::<Vec<_>>().join(" "), 60);
        match &self.failure {
            Some(Failure::NotJsonRpc(detail)) => Some(if body.starts_with('\u{feff}') {
                "the body starts with a UTF-8 byte order mark (U+FEFF), which JSON text sent over a network must not (RFC 8259 §8.1): strict clients reject it".into()
            } else if body.starts_with("\u{1f}\u{fffd}") {
                let coding = self.header("content-encoding").unwrap_or("none");
                format!(
                    "the body is gzip-compressed although the request offered no encoding (`Content-Encoding`: {coding}): a client reads it as JSON and fails"
                )
            } else if content_type == "text/html" {
                format!("the body is an HTML page (Content-Type `text/html`), not a JSON-RPC message: `{shown}`")
            } else if ["event:", "data:", "id:"].iter().any(|field| body.starts_with(field)) {
                format!(
                    "the body is SSE framing (`{shown}`) under Content-Type `{content_type}`: a client reads it as one JSON value and fails (send `text/event-stream`, or the bare JSON)"
                )
            } else {
                format!("the body is not JSON (Content-Type `{content_type}`): {detail}")
            }),
            Some(Failure::Closed(detail)) if content_type == "text/event-stream" && self.messages.is_empty() => {
                Some(if body.starts_with(['{', '[']) {
                    format!(
                        "the body is bare JSON (`{shown}`) under Content-Type `text/event-stream`: no SSE event carried it (each message goes in the `data:` field of an event)"
                    )
                } else if let Some(frame) = detail.strip_prefix("unparsable SSE frame: ") {
                    format!("an SSE event's data is not a JSON-RPC message: {frame}")
                } else {
                    format!("the SSE stream ended without a `data:` field carrying a message (it began `{shown}`)")
                })
            }
            Some(Failure::Closed(detail)) if content_type != "text/event-stream" => Some(format!(
                "the body was cut off: the connection closed before it ended ({detail}), so it is not complete JSON"
            )),
            _ => None,
        }
    }

    /// True when the request got no answer at all: the connection was refused or closed before
    /// any status, or the stdio process exited.
    pub(crate) fn unanswered(&self) -> bool {
        self.status.is_none()
            && self.response.is_none()
            && matches!(self.failure, Some(Failure::Connect(_) | Failure::Closed(_) | Failure::Exited(_)))
    }

    /// A one-line description of the answer for messages: status, code or failure.
    pub(crate) fn describe(&self) -> String {
        if let Some(refusal) = self.bearer_refusal() {
            // An authorization layer's answer (RFC 6750), not JSON-RPC.
            return refusal;
        }
        let mut parts = Vec::new();
        if let Some(status) = self.status {
            parts.push(format!("HTTP {status}"));
        }
        if let Some(error) = self.error() {
            let code = error.get("code").map(Value::to_string).unwrap_or_else(|| "no code".into());
            let message = error.get("message").and_then(Value::as_str).unwrap_or("");
            // One line, whatever the server put in it (some send pretty-printed validation
            // dumps); the full text stays in the evidence.
            let one_line = message.split_whitespace().collect::<Vec<_>>().join(" ");
            parts.push(format!("JSON-RPC error {code} \"{}\"", crate::text::clip(&one_line, 120)));
        } else if self.result().is_some() {
            parts.push("a result".into());
        } else if let Some(failure) = &self.failure {
            parts.push(failure.to_string());
        } else if self.status.is_some() {
            parts.push("no JSON-RPC body".into());
        }
        parts.join(", ")
    }
}

/// The value of the auth-param `name` in a `WWW-Authenticate` challenge (quoted or not).
fn auth_param(challenge: &str, name: &str) -> Option<String> {
    let lower = challenge.to_ascii_lowercase();
    let key = format!("{name}=");
    let start = lower
        .match_indices(&key)
        .find(|(at, _)| *at == 0 || matches!(lower.as_bytes()[at - 1], b' ' | b','))
        .map(|(at, _)| at + key.len())?;
    let rest = &challenge[start..];
    let value = match rest.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next()?,
        None => rest.split([',', ' ']).next()?,
    };
    (!value.is_empty()).then(|| value.to_owned())
}

/// True when `body` starts like a JSON value (`{`, `[`) or an SSE stream (a field or a comment
/// line), the only shapes in which a `jsonrpc` inside it can be a message: an HTML or plain-text
/// error page that quotes the request it refused (a server that did not read the body and then
/// parsed it as the next request does) is not one.
pub(crate) fn payload_shaped(body: &str) -> bool {
    let start = body.trim_start();
    start.starts_with(['{', '[', ':'])
        || ["data:", "event:", "id:", "retry:"].iter().any(|field| start.starts_with(field))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, challenge: Option<&str>, body: Value) -> Exchange {
        Exchange {
            status: Some(status),
            headers: challenge.map(|value| vec![("www-authenticate".to_owned(), value.to_owned())]).unwrap_or_default(),
            response: Some(body),
            ..Exchange::default()
        }
    }

    #[test]
    fn an_authorization_layers_answer_is_described_as_such_not_as_json_rpc() {
        let challenge = r#"Bearer error="invalid_token", error_description="expired", resource_metadata="http://h/x""#;
        let oauth = answer(401, Some(challenge), serde_json::json!({"error": "invalid_token"}));
        assert_eq!(oauth.describe(), "HTTP 401 (Bearer challenge: invalid_token)");
        let body_only = answer(401, None, serde_json::json!({"error": "invalid_token", "error_description": "x"}));
        assert_eq!(body_only.describe(), "HTTP 401 (RFC 6750 error body: invalid_token)");
        let bare = answer(403, Some("Bearer"), Value::Null);
        assert_eq!(bare.bearer_refusal().as_deref(), Some("HTTP 403 (Bearer challenge)"));
        // A JSON-RPC refusal is not the authorization layer's, whatever the status.
        let proxy = answer(
            400,
            None,
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32020, "message": "Missing required header Mcp-Method"}}),
        );
        assert_eq!(proxy.bearer_refusal(), None);
        assert!(proxy.describe().contains("JSON-RPC error -32020"), "{}", proxy.describe());
        let rpc401 = answer(
            401,
            None,
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "no"}}),
        );
        assert_eq!(rpc401.bearer_refusal(), None);
    }
}
