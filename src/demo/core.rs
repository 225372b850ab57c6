//! The transport-independent protocol core of the demo server.
//!
//! [`handle`] takes one parsed JSON message (and, on HTTP, a view of the request headers) and
//! returns a [`Reply`]: the messages to send, in order and with delays, plus the HTTP status and
//! whether the reply must be streamed as SSE. Everything the spec says about envelopes,
//! per-request `_meta`, standard headers (spec-notes §6.2, §6.3), versions, errors and dispatch lives
//! here; the front ends in [`super::http`] and [`super::stdio`] only move bytes, honour the
//! delays and implement cancellation. The core does no IO and never fails: every problem with a
//! request becomes a JSON-RPC error in the reply.
//!
//! Check order (the spec leaves it open, spec-notes §19.8): envelope → method known (`-32601`) →
//! required `_meta` fields (`-32602`) → `MCP-Protocol-Version` presence and equality (`-32020`)
//! → supported version (`-32022`) → `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*` (`-32020`) →
//! dispatch (capability gate `-32021`, then the handler).

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use serde_json::{Map, Value, json};

use super::catalog;
use super::protocol::{
    Handled, INTERNAL_ERROR, INVALID_REQUEST, LogLevel, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL,
    META_PROTOCOL_VERSION, META_SERVER_INFO, META_SUBSCRIPTION_ID, METHOD_NOT_FOUND, Outgoing, PARSE_ERROR,
    RequestContext, RpcError, ServerState, UNSUPPORTED_PROTOCOL_VERSION, notification,
};

/// The only protocol revision this server speaks.
pub(crate) use crate::mcp::jsonrpc::PROTOCOL_VERSION;
/// The `name` the server reports in `_meta["io.modelcontextprotocol/serverInfo"]`.
pub(crate) const SERVER_NAME: &str = "mcp-eval-demo";
/// How many entries one page of a paginated list holds.
pub(crate) const PAGE_SIZE: usize = 3;
/// How long a `subscriptions/listen` stays open before the server ends it gracefully.
pub(crate) const LISTEN_DURATION: Duration = Duration::from_millis(40);
/// How much later than it is ready every `tools/call` result is sent under `chaos-slow-tools`
/// (a slow backend behind every tool: the fixture of layer 3's latency tests).
pub(crate) const SLOW_TOOLS_DELAY: Duration = Duration::from_millis(200);

/// The HTTP request headers the core validates, with lowercase names and raw values.
#[derive(Debug, Clone, Default)]
pub(crate) struct HttpRequestView {
    /// `(lowercase name, raw value bytes)` in arrival order.
    pub headers: Vec<(String, Vec<u8>)>,
}

impl HttpRequestView {
    /// Builds a view from `(name, value)` pairs; names are lowercased.
    pub(crate) fn new<N: AsRef<str>, V: AsRef<[u8]>>(headers: impl IntoIterator<Item = (N, V)>) -> Self {
        HttpRequestView {
            headers: headers
                .into_iter()
                .map(|(name, value)| (name.as_ref().to_ascii_lowercase(), value.as_ref().to_vec()))
                .collect(),
        }
    }

    /// The raw values of every header called `name` (any case), in arrival order.
    pub(crate) fn get_all(&self, name: &str) -> Vec<&[u8]> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().filter(|(header, _)| *header == name).map(|(_, value)| value.as_slice()).collect()
    }
}

/// What the front end must send back for one incoming message.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reply {
    /// HTTP status (ignored on stdio).
    pub status: u16,
    /// Messages in order. The final response, if any, is last; empty for an accepted notification.
    pub messages: Vec<Outgoing>,
    /// Whether HTTP must answer with `text/event-stream` instead of a single JSON body.
    pub stream: bool,
    /// The front end must stop serving at once without answering, as a crashed server would
    /// (breaks `h-27`, `x-6-invalid-arguments`): the HTTP server exits, the stdio loop ends.
    pub crash: bool,
}

impl Reply {
    fn single(status: u16, message: Value) -> Self {
        Reply { status, messages: vec![Outgoing { delay: Duration::ZERO, message }], stream: false, crash: false }
    }

    /// The last message of the reply, normally the final response.
    pub(crate) fn last(&self) -> Option<&Value> {
        self.messages.last().map(|outgoing| &outgoing.message)
    }
}

/// The reply to a body that is not JSON at all (`-32700`, id null, HTTP 400).
pub(crate) fn parse_error_reply() -> Reply {
    Reply::single(400, error_message(&Value::Null, PARSE_ERROR, "Parse error: the body is not valid JSON", None))
}

/// Appends a `tools/call`'s name and arguments to `path` as one JSON line (the `--calls-log`
/// test hook); a file that cannot be written is ignored, never the call's failure.
fn log_call(path: &std::path::Path, params: &Map<String, Value>) {
    use std::io::Write as _;
    // With the trace context it carried (layer 3's tests read what the server saw).
    let meta = params.get("_meta");
    let line = json!({
        "name": params.get("name"),
        "arguments": params.get("arguments"),
        "traceparent": meta.and_then(|meta| meta.get("traceparent")),
        "tracestate": meta.and_then(|meta| meta.get("tracestate")),
        "baggage": meta.and_then(|meta| meta.get("baggage")),
    });
    // One write of the whole line: concurrent calls append whole lines, never pieces of two.
    if let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
        let _ = file.write_all(format!("{line}\n").as_bytes());
    }
}

/// Handles one incoming JSON message. `http` is `Some` on the HTTP transport.
pub(crate) fn handle(state: &ServerState, message: &Value, http: Option<&HttpRequestView>) -> Reply {
    if let Value::Array(items) = message {
        return handle_batch(state, items, http);
    }
    let Some(object) = message.as_object() else {
        return invalid_request(state, &Value::Null, "the message is not a JSON object");
    };
    let id = object.get("id");
    let id_is_valid = matches!(id, Some(Value::String(_))) || id.is_some_and(|id| id.is_i64() || id.is_u64());
    let echo_id = if id_is_valid { id.cloned().unwrap_or(Value::Null) } else { Value::Null };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid_request(state, &echo_id, "jsonrpc must be \"2.0\"");
    }
    let Some(method) = object.get("method").and_then(Value::as_str) else {
        return invalid_request(state, &echo_id, "method must be a string");
    };
    if id.is_some() && !id_is_valid {
        return invalid_request(state, &Value::Null, "id must be a string or an integer");
    }
    if state.breaks("chaos-error-everything") {
        // Every request fails inside the server: nothing here is evidence that a rule is kept,
        // beyond the error responses themselves.
        return match id {
            None => Reply { status: 202, messages: Vec::new(), stream: false, crash: false },
            Some(id) => error_reply(state, id, RpcError::new(INTERNAL_ERROR, "Internal error: the backend is down")),
        };
    }
    match id {
        None => handle_notification(state, method, object, http),
        Some(id) => {
            let mut reply = handle_request(state, id, method, object.get("params"), http);
            if state.breaks("chaos-10000-notifications")
                && !matches!(method, "server/discover" | "subscriptions/listen")
            {
                reply.stream |= super::chaos::flood_notifications(&mut reply.messages);
            }
            reply
        }
    }
}

fn handle_batch(state: &ServerState, items: &[Value], http: Option<&HttpRequestView>) -> Reply {
    if !state.breaks("h-24") {
        return invalid_request(state, &Value::Null, "batches are not supported");
    }
    let responses: Vec<Value> = items.iter().filter_map(|item| handle(state, item, http).last().cloned()).collect();
    Reply::single(200, Value::Array(responses))
}

fn invalid_request(state: &ServerState, id: &Value, why: &str) -> Reply {
    if state.breaks("e-7") {
        let error = RpcError::new(INTERNAL_ERROR, "Internal error").with_status(500);
        return error_reply(state, id, error);
    }
    let error = RpcError::new(INVALID_REQUEST, format!("Invalid Request: {why}")).with_status(400);
    error_reply(state, id, error)
}

fn handle_notification(
    state: &ServerState,
    method: &str,
    object: &Map<String, Value>,
    http: Option<&HttpRequestView>,
) -> Reply {
    // Cancellation of in-flight stdio requests is the front end's business; whatever reaches
    // the core refers to nothing we are doing and is ignored (spec-notes §15, X-7).
    if http.is_none() && state.breaks("x-7") && method == "notifications/cancelled" {
        let request_id =
            object.get("params").and_then(|params| params.get("requestId")).cloned().unwrap_or(Value::Null);
        let error = RpcError::invalid_params("Unknown request id");
        return error_reply(state, &request_id, error);
    }
    if http.is_some() && state.breaks("h-22") {
        return Reply::single(200, json!({"jsonrpc": "2.0", "id": null, "result": {"resultType": "complete"}}));
    }
    Reply { status: 202, messages: Vec::new(), stream: false, crash: false }
}

fn error_reply(state: &ServerState, id: &Value, error: RpcError) -> Reply {
    let id = if state.breaks("m-6") { &Value::Null } else { id };
    let status = error.status;
    Reply::single(status, error_message(id, error.code, &error.message, error.data))
}

fn error_message(id: &Value, code: i64, message: &str, data: Option<Value>) -> Value {
    let mut error = json!({"code": code, "message": message});
    if let Some(data) = data {
        error["data"] = data;
    }
    json!({"jsonrpc": "2.0", "id": id, "error": error})
}

/// Methods this server implements (everything else is `-32601`).
const METHODS: &[&str] = &[
    "server/discover",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "completion/complete",
    "subscriptions/listen",
];

/// The parsed, validated per-request `_meta`.
struct RequestMeta {
    version: String,
    client_capabilities: Map<String, Value>,
    log_level: Option<LogLevel>,
    progress_token: Option<Value>,
}

fn handle_request(
    state: &ServerState,
    id: &Value,
    method: &str,
    params: Option<&Value>,
    http: Option<&HttpRequestView>,
) -> Reply {
    match check_request(state, id, method, params, http) {
        Ok(reply) => reply,
        Err(error) if http.is_none() && method == "initialize" && state.breaks("m-10-x-5") => {
            // The right code, a malformed error: `message` must be a string.
            let mut reply = error_reply(state, id, error);
            if let Some(message) = reply.messages.last_mut() {
                message.message["error"]["message"] = json!(METHOD_NOT_FOUND);
            }
            reply
        }
        Err(error) => error_reply(state, id, error),
    }
}

fn check_request(
    state: &ServerState,
    id: &Value,
    method: &str,
    params: Option<&Value>,
    http: Option<&HttpRequestView>,
) -> Result<Reply, RpcError> {
    let stdio_ping = http.is_none() && method == "ping" && state.breaks("x-5");
    let implemented = METHODS.contains(&method) && !(method == "server/discover" && state.breaks("d-1"));
    if !implemented && !stdio_ping {
        return Err(method_not_found(state, method));
    }

    let empty = Map::new();
    let params = match params {
        Some(Value::Object(params)) => params,
        None if state.breaks("m-1") => &empty,
        Some(_) => return Err(meta_error("params must be an object")),
        None => return Err(meta_error("params is required (with _meta)")),
    };
    let header_version = http.map(|view| header_text(view, "mcp-protocol-version")).transpose()?.flatten();
    let meta = parse_meta(state, params, header_version.as_deref())?;
    if meta.client_capabilities.get("elicitation").is_some_and(Value::is_object) {
        state.note_elicitation_declared();
    }

    if http.is_some() {
        match &header_version {
            None if !state.breaks("h-2") => {
                return Err(RpcError::header_mismatch("Missing required header MCP-Protocol-Version"));
            }
            Some(header) if *header != meta.version && !state.breaks("h-1") => {
                return Err(RpcError::header_mismatch(format!(
                    "MCP-Protocol-Version header `{header}` does not match _meta protocolVersion `{}`",
                    meta.version
                )));
            }
            _ => {}
        }
    }
    if meta.version != PROTOCOL_VERSION {
        if state.breaks("v-1") {
            return Err(meta_error("Unsupported protocol version"));
        }
        return Err(RpcError::new(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version")
            .with_data(json!({"supported": [PROTOCOL_VERSION], "requested": meta.version}))
            .with_status(400));
    }
    if let Some(view) = http {
        check_standard_headers(state, view, method, params)?;
    }

    let context = RequestContext {
        state,
        id,
        params,
        client_capabilities: meta.client_capabilities,
        log_level: meta.log_level,
        progress_token: meta.progress_token,
    };
    let handled =
        if stdio_ping { Handled::result(json!({"resultType": "complete"})) } else { dispatch(&context, method)? };
    Ok(assemble(&context, handled, http.is_some()))
}

fn method_not_found(state: &ServerState, method: &str) -> RpcError {
    let message = if method == "initialize" && !state.breaks("b-3") {
        format!(
            "Method not found: initialize. This server speaks only MCP {PROTOCOL_VERSION} \
             (supported versions: {PROTOCOL_VERSION}); send server/discover with per-request _meta"
        )
    } else {
        format!("Method not found: {method}")
    };
    let status = if state.breaks("h-13") { 400 } else { 404 };
    RpcError::new(METHOD_NOT_FOUND, message).with_status(status)
}

/// `-32602` with HTTP 400, for malformed per-request `_meta` (spec-notes §3).
fn meta_error(message: impl Into<String>) -> RpcError {
    RpcError::invalid_params(message).with_status(400)
}

fn parse_meta(
    state: &ServerState,
    params: &Map<String, Value>,
    header_version: Option<&str>,
) -> Result<RequestMeta, RpcError> {
    let empty = Map::new();
    let meta = match params.get("_meta") {
        Some(Value::Object(meta)) => meta,
        None if state.breaks("m-1") => &empty,
        Some(_) => return Err(meta_error("params._meta must be an object")),
        None => return Err(meta_error("params._meta is required")),
    };
    let lenient_default = || header_version.unwrap_or(PROTOCOL_VERSION).to_string();
    let version = match meta.get(META_PROTOCOL_VERSION) {
        Some(Value::String(version)) => version.clone(),
        None if state.breaks("m-2") || (meta.is_empty() && state.breaks("m-1")) => lenient_default(),
        _ => {
            return Err(meta_error(format!("_meta[\"{META_PROTOCOL_VERSION}\"] is required and must be a string")));
        }
    };
    let client_capabilities = match meta.get(META_CLIENT_CAPABILITIES) {
        Some(Value::Object(capabilities)) => capabilities.clone(),
        None if state.breaks("m-3") || (meta.is_empty() && state.breaks("m-1")) => Map::new(),
        _ => {
            return Err(meta_error(format!("_meta[\"{META_CLIENT_CAPABILITIES}\"] is required and must be an object")));
        }
    };
    match meta.get(META_CLIENT_INFO) {
        None if state.breaks("m-4") => {
            return Err(meta_error(format!("_meta[\"{META_CLIENT_INFO}\"] is required")));
        }
        None | Some(Value::Object(_)) => {}
        Some(_) => {
            return Err(meta_error(format!("_meta[\"{META_CLIENT_INFO}\"] must be an object")));
        }
    }
    let log_level = match meta.get(META_LOG_LEVEL) {
        None => None,
        Some(level) => match level.as_str().and_then(LogLevel::parse) {
            Some(level) => Some(level),
            None if state.breaks("e-6") => None,
            None => {
                return Err(RpcError::invalid_params(format!(
                    "Invalid log level {level}: expected one of debug, info, notice, warning, \
                     error, critical, alert, emergency"
                )));
            }
        },
    };
    let progress_token = match meta.get("progressToken") {
        None => None,
        Some(token @ Value::String(_)) => Some(token.clone()),
        Some(token) if token.is_i64() || token.is_u64() => Some(token.clone()),
        Some(_) => {
            return Err(RpcError::invalid_params("progressToken must be a string or an integer"));
        }
    };
    if state.breaks("m-9") && meta.contains_key("traceparent") {
        return Err(meta_error("Unexpected _meta key traceparent"));
    }
    if state.breaks("m-13") {
        const KNOWN: &[&str] = &[
            META_PROTOCOL_VERSION,
            META_CLIENT_CAPABILITIES,
            META_CLIENT_INFO,
            META_LOG_LEVEL,
            "progressToken",
            "traceparent",
            "tracestate",
            "baggage",
        ];
        if let Some(key) = meta.keys().find(|key| !KNOWN.contains(&key.as_str())) {
            return Err(meta_error(format!("Unknown _meta key {key}")));
        }
    }
    Ok(RequestMeta { version, client_capabilities, log_level, progress_token })
}

/// Returns a header's value as trimmed text, `None` when absent, `-32020` when it holds
/// characters a header value may not carry (controls, non-ASCII).
fn header_text(view: &HttpRequestView, name: &str) -> Result<Option<String>, RpcError> {
    let values = view.get_all(name);
    let Some(raw) = values.first().copied() else {
        return Ok(None);
    };
    if values.iter().any(|value| *value != raw) {
        return Err(RpcError::header_mismatch(format!("Header {name} is repeated with different values")));
    }
    let valid = raw.iter().all(|byte| *byte == b'\t' || (0x20..0x7f).contains(byte));
    if !valid {
        return Err(RpcError::header_mismatch(format!("Header {name} contains invalid characters")));
    }
    let text = String::from_utf8_lossy(raw);
    Ok(Some(text.trim_matches([' ', '\t']).to_string()))
}

/// Decodes a `=?base64?…?=` sentinel value (spec-notes §6.2); other values are returned as is.
fn decode_header_value(state: &ServerState, name: &str, raw: &str) -> Result<String, RpcError> {
    if state.breaks("h-9") {
        return Ok(raw.to_string());
    }
    let Some(encoded) = raw.strip_prefix("=?base64?").and_then(|rest| rest.strip_suffix("?=")) else {
        return Ok(raw.to_string());
    };
    STANDARD
        .decode(encoded)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or_else(|| RpcError::header_mismatch(format!("Header {name} has an invalid base64 value")))
}

/// Whether a header value carries `expected`, after sentinel decoding.
fn header_matches(state: &ServerState, name: &str, raw: &str, expected: &str) -> Result<bool, RpcError> {
    if decode_header_value(state, name, raw)? == expected {
        return Ok(true);
    }
    if state.breaks("h-25") {
        // The break: decode values that are not exactly in sentinel form.
        let candidate = raw.strip_prefix("=?base64?").unwrap_or(raw);
        let candidate = candidate.strip_suffix("?=").unwrap_or(candidate);
        let decoded = STANDARD
            .decode(candidate)
            .or_else(|_| STANDARD_NO_PAD.decode(candidate))
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok());
        return Ok(decoded.as_deref() == Some(expected));
    }
    Ok(false)
}

fn check_standard_headers(
    state: &ServerState,
    view: &HttpRequestView,
    method: &str,
    params: &Map<String, Value>,
) -> Result<(), RpcError> {
    match header_text(view, "mcp-method")? {
        None if state.breaks("h-3") => {}
        None => {
            return Err(RpcError::header_mismatch("Missing required header Mcp-Method"));
        }
        Some(header) => {
            let equal = if state.breaks("h-5") { header.eq_ignore_ascii_case(method) } else { header == method };
            if !equal && !state.breaks("h-4") {
                return Err(RpcError::header_mismatch(format!(
                    "Mcp-Method header `{header}` does not match the body method `{method}`"
                )));
            }
        }
    }

    let name_field = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    // A body without the field is a params error (-32602 from the handler, check E-9).
    if let Some(expected) = name_field.and_then(|field| params.get(field)?.as_str()) {
        match header_text(view, "mcp-name")? {
            None if state.breaks("h-8") => {}
            None => {
                return Err(RpcError::header_mismatch("Missing required header Mcp-Name"));
            }
            Some(header) => {
                if !header_matches(state, "Mcp-Name", &header, expected)? && !state.breaks("h-7") {
                    return Err(RpcError::header_mismatch(format!(
                        "Mcp-Name header does not match the body value `{expected}`"
                    )));
                }
            }
        }
    }

    if method == "tools/call" && !state.breaks("h-11") {
        let tool = params.get("name").and_then(Value::as_str).unwrap_or_default();
        let arguments = params.get("arguments").and_then(Value::as_object);
        for (property, header_name) in catalog::header_params(tool) {
            let value = arguments.and_then(|arguments| arguments.get(*property)).filter(|value| !value.is_null());
            let header_key = format!("mcp-param-{}", header_name.to_ascii_lowercase());
            let header = header_text(view, &header_key)?;
            match (value, header) {
                (None, None) => {}
                (Some(_), None) => {
                    return Err(RpcError::header_mismatch(format!(
                        "Missing header Mcp-Param-{header_name} for argument `{property}`"
                    )));
                }
                (None, Some(_)) => {
                    return Err(RpcError::header_mismatch(format!(
                        "Header Mcp-Param-{header_name} is set but argument `{property}` is absent"
                    )));
                }
                (Some(value), Some(header)) => {
                    let decoded = decode_header_value(state, "Mcp-Param", &header)?;
                    if !param_value_matches(value, &decoded) {
                        return Err(RpcError::header_mismatch(format!(
                            "Header Mcp-Param-{header_name} does not match argument `{property}`"
                        )));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Compares a mirrored header value with the body value: strings exactly, booleans as
/// `true`/`false`, numbers numerically (spec-notes §6.2).
fn param_value_matches(value: &Value, header: &str) -> bool {
    match value {
        Value::String(text) => text == header,
        Value::Bool(flag) => header == if *flag { "true" } else { "false" },
        Value::Number(number) => match (number.as_f64(), header.parse::<f64>()) {
            (Some(body), Ok(header)) => body == header,
            _ => false,
        },
        _ => false,
    }
}

fn dispatch(context: &RequestContext<'_>, method: &str) -> Result<Handled, RpcError> {
    let state = context.state;
    match method {
        "server/discover" => Ok(Handled::result(discover(state))),
        "tools/list" => {
            let rotation =
                if state.breaks("p-1") && context.params.get("cursor").is_none() { state.next_tool_walk() } else { 0 };
            let mut result = list_page(context, "tools", catalog::tools(state), "tools/list", rotation)?;
            if state.breaks("m-7") {
                if let Some(object) = result.as_object_mut() {
                    object.remove("resultType");
                }
            }
            Ok(Handled::result(result))
        }
        "tools/call" => {
            if state.breaks("p-3") {
                state.note_tool_call();
            }
            if let Some(path) = &state.config().calls_log {
                log_call(path, context.params);
            }
            if let Some(failed) = catalog::seeded_failure(context) {
                return failed;
            }
            let mut handled = catalog::call_tool(context)?;
            if state.breaks("chaos-slow-tools") {
                // A slow backend: whatever the tool answers leaves that much later, after the
                // notifications it sends first, on either transport.
                handled.final_delay += SLOW_TOOLS_DELAY;
            }
            Ok(handled)
        }
        "prompts/list" => {
            let mut result = list_page(context, "prompts", catalog::prompts(state), "prompts/list", 0)?;
            if state.breaks("c-1") {
                if let Some(object) = result.as_object_mut() {
                    object.remove("ttlMs");
                    object.remove("cacheScope");
                }
            }
            Ok(Handled::result(result))
        }
        "prompts/get" => catalog::get_prompt(context),
        "resources/list" => {
            let mut result = list_page(context, "resources", catalog::resources(), "resources/list", 0)?;
            if state.breaks("c-2") {
                result["ttlMs"] = json!(60000.5);
            }
            Ok(Handled::result(result))
        }
        "resources/templates/list" => Ok(Handled::result(list_page(
            context,
            "resourceTemplates",
            catalog::resource_templates(state),
            "resources/templates/list",
            0,
        )?)),
        "resources/read" => catalog::read_resource(context),
        "completion/complete" => catalog::complete(context),
        "subscriptions/listen" => listen(context),
        _ => Err(method_not_found(state, method)),
    }
}

fn discover(state: &ServerState) -> Value {
    let mut capabilities = json!({
        "tools": {"listChanged": true},
        "prompts": {"listChanged": true},
        "resources": {"subscribe": true, "listChanged": true},
        "completions": {},
        "logging": {},
    });
    if state.breaks("d-4") {
        if let Some(object) = capabilities.as_object_mut() {
            object.remove("completions");
        }
    }
    let mut result = json!({
        "resultType": "complete",
        "supportedVersions": [PROTOCOL_VERSION],
        "capabilities": capabilities,
        "instructions": "The mcp-eval demo server: a small, correct MCP 2026-07-28 server.",
        "ttlMs": 60000,
        "cacheScope": "public",
    });
    if state.breaks("d-2") {
        if let Some(object) = result.as_object_mut() {
            object.remove("ttlMs");
        }
    }
    result
}

/// One page of a paginated list. Cursors are opaque: base64url of `method:offset:rotation`.
fn list_page(
    context: &RequestContext<'_>,
    field: &str,
    mut items: Vec<Value>,
    method: &str,
    first_rotation: usize,
) -> Result<Value, RpcError> {
    let state = context.state;
    let (offset, rotation) = match context.params.get("cursor") {
        None => (0, first_rotation),
        Some(cursor) => match parse_cursor(cursor, method, items.len(), state.breaks("p-2"), page_size(state)) {
            Some(position) => position,
            None if state.breaks("e-5") => (0, first_rotation),
            None => return Err(RpcError::invalid_params(format!("Invalid cursor {cursor}"))),
        },
    };
    if !items.is_empty() {
        let shift = rotation % items.len();
        items.rotate_left(shift);
    }
    let end = offset.saturating_add(page_size(state)).min(items.len());
    let page: Vec<Value> = items[offset..end].to_vec();
    let scope = if state.breaks("c-4") && offset > 0 { "private" } else { "public" };
    let mut result = json!({"resultType": "complete"});
    result[field] = Value::Array(page);
    if end < items.len() {
        result["nextCursor"] = if state.breaks("p-2") {
            json!(end)
        } else {
            let raw = format!("{method}:{end}:{rotation}");
            json!(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw))
        };
    }
    result["ttlMs"] = json!(60000);
    result["cacheScope"] = json!(scope);
    Ok(result)
}

/// Entries per page: [`PAGE_SIZE`], or the page sizes of the `chaos-5000-tools` modes (every
/// entry on one page, or pages of 100).
fn page_size(state: &ServerState) -> usize {
    if state.breaks("chaos-5000-tools")
        || state.breaks("chaos-80000-tools-sse")
        || state.breaks("chaos-2000-rich-tools")
    {
        usize::MAX
    } else if state.breaks("chaos-5000-tools-paged") {
        100
    } else {
        PAGE_SIZE
    }
}

fn parse_cursor(cursor: &Value, method: &str, len: usize, numeric: bool, page_size: usize) -> Option<(usize, usize)> {
    if numeric {
        let offset = usize::try_from(cursor.as_u64()?).ok()?;
        return (offset > 0 && offset < len).then_some((offset, 0));
    }
    let decoded = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(cursor.as_str()?).ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let rest = text.strip_prefix(method)?.strip_prefix(':')?;
    let (offset, rotation) = rest.split_once(':')?;
    let offset: usize = offset.parse().ok()?;
    let rotation: usize = rotation.parse().ok()?;
    (offset > 0 && offset < len && offset % page_size == 0).then_some((offset, rotation))
}

fn listen(context: &RequestContext<'_>) -> Result<Handled, RpcError> {
    let Some(filter) = context.params.get("notifications").and_then(Value::as_object) else {
        return Err(RpcError::invalid_params("params.notifications is required and must be an object"));
    };
    let mut honoured = Map::new();
    for key in ["toolsListChanged", "promptsListChanged", "resourcesListChanged"] {
        if filter.get(key) == Some(&Value::Bool(true)) {
            honoured.insert(key.to_string(), Value::Bool(true));
        }
    }
    if let Some(uris) = filter.get("resourceSubscriptions").and_then(Value::as_array) {
        let known: Vec<Value> =
            uris.iter().filter(|uri| uri.as_str().is_some_and(catalog::resource_exists)).cloned().collect();
        honoured.insert("resourceSubscriptions".to_string(), Value::Array(known));
    }
    if context.breaks("s-1") {
        for key in ["toolsListChanged", "promptsListChanged", "resourcesListChanged"] {
            honoured.insert(key.to_string(), Value::Bool(true));
        }
    }
    let tag = json!({META_SUBSCRIPTION_ID: context.id});
    let first_requested = ["tools", "prompts", "resources"]
        .into_iter()
        .find(|kind| honoured.get(&format!("{kind}ListChanged")) == Some(&Value::Bool(true)));

    let mut notifications = vec![Outgoing {
        delay: Duration::ZERO,
        message: notification(
            "notifications/subscriptions/acknowledged",
            json!({"notifications": honoured, "_meta": tag}),
        ),
    }];
    let step = Duration::from_millis(50);
    let mut elapsed = Duration::ZERO;
    if context.breaks("s-2") {
        let kind = first_requested.unwrap_or("tools");
        notifications.push(Outgoing {
            delay: step,
            message: notification(&format!("notifications/{kind}/list_changed"), json!({})),
        });
        elapsed += step;
    }
    if context.breaks("s-3") {
        let kind = ["prompts", "resources", "tools"]
            .into_iter()
            .find(|kind| filter.get(&format!("{kind}ListChanged")) != Some(&Value::Bool(true)))
            .unwrap_or("prompts");
        notifications.push(Outgoing {
            delay: step,
            message: notification(&format!("notifications/{kind}/list_changed"), json!({"_meta": tag})),
        });
        elapsed += step;
    }
    if context.breaks("s-4") {
        notifications.push(Outgoing {
            delay: step,
            message: notification(
                "notifications/message",
                json!({"level": "info", "logger": "demo", "data": "listening", "_meta": tag}),
            ),
        });
        elapsed += step;
    }
    let result = (!context.breaks("s-6")).then(|| json!({"resultType": "complete", "_meta": tag}));
    Ok(Handled {
        notifications,
        result,
        final_delay: LISTEN_DURATION.saturating_sub(elapsed),
        stream: true,
        ..Handled::default()
    })
}

/// Turns a handler outcome into the reply: echoes the id, adds serverInfo, chooses SSE.
fn assemble(context: &RequestContext<'_>, handled: Handled, is_http: bool) -> Reply {
    let state = context.state;
    let stream = handled.stream
        || context.progress_token.is_some()
        || context.log_level.is_some()
        || state.breaks("chaos-80000-tools-sse");
    let mut messages = handled.notifications;
    if let Some(mut result) = handled.result {
        if !state.breaks("d-3") {
            let server_info = json!({"name": SERVER_NAME, "version": env!("CARGO_PKG_VERSION")});
            if let Some(object) = result.as_object_mut() {
                let meta = object.entry("_meta").or_insert_with(|| json!({}));
                if let Some(meta) = meta.as_object_mut() {
                    meta.insert(META_SERVER_INFO.to_string(), server_info);
                }
            }
        }
        let server_request = (is_http && stream && state.breaks("h-15")) || (!is_http && state.breaks("x-2"));
        if server_request {
            messages.push(Outgoing {
                delay: Duration::ZERO,
                message: json!({"jsonrpc": "2.0", "id": "demo-server-ping", "method": "ping"}),
            });
        }
        messages.push(Outgoing {
            delay: handled.final_delay,
            message: json!({"jsonrpc": "2.0", "id": result_id(state, context.id), "result": result}),
        });
    }
    Reply { status: 200, messages, stream, crash: handled.crash }
}

fn result_id(state: &ServerState, id: &Value) -> Value {
    match id {
        Value::Number(number) if state.breaks("m-11") => Value::String(number.to_string()),
        // A server that keeps ids in 32-bit integers truncates larger ones.
        Value::Number(number) if state.breaks("m-11-int32") => match number.as_u64() {
            #[allow(clippy::cast_possible_truncation, reason = "the truncation is the break")]
            Some(big) if big > u64::from(u32::MAX) => Value::from(big as u32),
            _ => id.clone(),
        },
        Value::String(text)
            if state.breaks("m-11-digits") && !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit()) =>
        {
            text.parse::<u64>().map_or_else(|_| id.clone(), Value::from)
        }
        Value::String(text) if state.breaks("m-12") => {
            Value::String(text.chars().map(|character| if character.is_ascii() { character } else { '?' }).collect())
        }
        other => other.clone(),
    }
}

/// The way a `chaos-later-*` mode spoils every answer but `server/discover`'s, when one is on.
pub(crate) fn later_way(state: &ServerState) -> Option<super::later::Later> {
    use super::later::Later;
    [
        (state.breaks("chaos-later-not-json"), Later::NotJson),
        (state.breaks("chaos-later-array"), Later::Array),
        (state.breaks("chaos-later-wrong-version"), Later::WrongVersion),
        (state.breaks("chaos-later-no-id"), Later::NoId),
        (state.breaks("chaos-later-bare-result"), Later::BareResult),
        (state.breaks("chaos-later-bad-utf8"), Later::BadUtf8),
        (state.breaks("chaos-later-bom"), Later::Bom),
        (state.breaks("chaos-later-text-plain"), Later::TextPlain),
        (state.breaks("chaos-later-html"), Later::Html),
        (state.breaks("chaos-later-json-with-sse"), Later::JsonWithSse),
        (state.breaks("chaos-later-sse-bare-json"), Later::SseBareJson),
        (state.breaks("chaos-later-sse-no-data"), Later::SseNoData),
        (state.breaks("chaos-later-sse-not-json"), Later::SseNotJson),
        (state.breaks("chaos-later-double-encoded"), Later::DoubleEncoded),
        (state.breaks("chaos-later-gzip-declared"), Later::GzipDeclared),
        (state.breaks("chaos-later-gzip-undeclared"), Later::GzipUndeclared),
        (state.breaks("chaos-later-truncated"), Later::Truncated),
        (state.breaks("chaos-later-crlf"), Later::Crlf),
        (state.breaks("chaos-later-content-length"), Later::ContentLength),
        (state.breaks("chaos-later-log"), Later::Log),
    ]
    .into_iter()
    .find_map(|(on, way)| on.then_some(way))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::DemoConfig;
    use crate::demo::protocol::{HEADER_MISMATCH, INVALID_PARAMS, MISSING_CLIENT_CAPABILITY};
    use std::sync::Arc;

    /// A valid per-request `_meta`.
    fn meta() -> Value {
        json!({
            META_PROTOCOL_VERSION: PROTOCOL_VERSION,
            META_CLIENT_CAPABILITIES: {},
            META_CLIENT_INFO: {"name": "test", "version": "1"},
        })
    }

    /// A request with id 1 whose params get a valid `_meta` unless they carry one.
    fn request(method: &str, params: Value) -> Value {
        let mut params = params;
        if params.get("_meta").is_none() {
            params["_meta"] = meta();
        }
        json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    }

    /// The headers a correct HTTP client sends for `message`.
    fn correct_headers(message: &Value) -> Vec<(String, String)> {
        let method = message["method"].as_str().unwrap_or_default();
        let mut headers = vec![
            ("MCP-Protocol-Version".to_string(), PROTOCOL_VERSION.to_string()),
            ("Mcp-Method".to_string(), method.to_string()),
        ];
        let name = match method {
            "tools/call" | "prompts/get" => message["params"]["name"].as_str(),
            "resources/read" => message["params"]["uri"].as_str(),
            _ => None,
        };
        if let Some(name) = name {
            headers.push(("Mcp-Name".to_string(), name.to_string()));
        }
        if let Some(region) = message["params"]["arguments"]["region"].as_str() {
            headers.push(("Mcp-Param-Region".to_string(), region.to_string()));
        }
        headers
    }

    /// Correct headers with some replaced (`Some`) or removed (`None`), names case-insensitive.
    fn headers_with(message: &Value, changes: &[(&str, Option<&str>)]) -> HttpRequestView {
        let mut headers = correct_headers(message);
        for (name, value) in changes {
            headers.retain(|(header, _)| !header.eq_ignore_ascii_case(name));
            if let Some(value) = value {
                headers.push((name.to_string(), value.to_string()));
            }
        }
        HttpRequestView::new(headers)
    }

    fn state(breaks: &[&str]) -> ServerState {
        ServerState::new(Arc::new(DemoConfig::with_breaks(breaks.iter().copied())))
    }

    /// Whether every key of `expected` is in `actual` with a matching value (objects and
    /// same-length arrays recursively, everything else exactly).
    fn subset(expected: &Value, actual: &Value) -> bool {
        match (expected, actual) {
            (Value::Object(expected), Value::Object(actual)) => {
                expected.iter().all(|(key, value)| actual.get(key).is_some_and(|found| subset(value, found)))
            }
            (Value::Array(expected), Value::Array(actual)) => {
                expected.len() == actual.len() && expected.iter().zip(actual).all(|(value, found)| subset(value, found))
            }
            _ => expected == actual,
        }
    }

    /// Runs `message` (over HTTP when `http` is given) and checks status and final message.
    fn check_with(
        breaks: &[&str],
        message: &Value,
        http: Option<&HttpRequestView>,
        status: u16,
        expected: Value,
    ) -> Reply {
        let reply = handle(&state(breaks), message, http);
        let last = reply.last().cloned().unwrap_or(Value::Null);
        assert!(
            subset(&expected, &last),
            "breaks {breaks:?}, request {message}\nexpected ⊆ {expected}\nactual     {last}"
        );
        assert_eq!(reply.status, status, "status for {message}: {last}");
        reply
    }

    /// Runs `message` on stdio and checks the final message.
    fn check(breaks: &[&str], message: Value, expected: Value) -> Reply {
        let reply = handle(&state(breaks), &message, None);
        let last = reply.last().cloned().unwrap_or(Value::Null);
        assert!(
            subset(&expected, &last),
            "breaks {breaks:?}, request {message}\nexpected ⊆ {expected}\nactual     {last}"
        );
        reply
    }

    /// Runs `message` over HTTP with correct headers changed by `changes`.
    fn check_http(
        breaks: &[&str],
        message: Value,
        changes: &[(&str, Option<&str>)],
        status: u16,
        expected: Value,
    ) -> Reply {
        let view = headers_with(&message, changes);
        check_with(breaks, &message, Some(&view), status, expected)
    }

    fn error(code: i64) -> Value {
        json!({"id": 1, "error": {"code": code}})
    }

    fn tool_call(name: &str, arguments: Value) -> Value {
        request("tools/call", json!({"name": name, "arguments": arguments}))
    }

    #[test]
    fn discover_is_complete_and_cacheable() {
        let reply = check(
            &[],
            request("server/discover", json!({})),
            json!({"id": 1, "result": {
                "resultType": "complete",
                "supportedVersions": [PROTOCOL_VERSION],
                "capabilities": {"tools": {"listChanged": true}, "completions": {}, "logging": {}},
                "ttlMs": 60000,
                "cacheScope": "public",
                "_meta": {META_SERVER_INFO: {"name": SERVER_NAME}},
            }}),
        );
        assert!(!reply.stream);
        let result = &reply.last().unwrap()["result"];
        assert_eq!(result.as_object().unwrap().keys().next().unwrap(), "resultType");
    }

    #[test]
    fn discover_breaks() {
        let discover = || request("server/discover", json!({}));
        let result = check(&["d-2"], discover(), json!({"result": {"cacheScope": "public"}}));
        assert!(result.last().unwrap()["result"].get("ttlMs").is_none());
        let result = check(&["d-3"], discover(), json!({"result": {}}));
        assert!(result.last().unwrap()["result"].get("_meta").is_none());
        check_http(&["d-1"], discover(), &[], 404, error(METHOD_NOT_FOUND));
        let result = check(&["d-4"], discover(), json!({"result": {}}));
        assert!(result.last().unwrap()["result"]["capabilities"].get("completions").is_none());
    }

    #[test]
    fn per_request_meta_is_validated() {
        let no_meta = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}});
        check_http(&[], no_meta.clone(), &[], 400, error(INVALID_PARAMS));
        check_http(&["m-1"], no_meta, &[], 200, json!({"result": {"resultType": "complete"}}));
        let no_params = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover"});
        check(&[], no_params, error(INVALID_PARAMS));

        for (key, break_id) in [(META_PROTOCOL_VERSION, "m-2"), (META_CLIENT_CAPABILITIES, "m-3")] {
            let mut partial = meta();
            partial.as_object_mut().unwrap().remove(key);
            let message = request("server/discover", json!({"_meta": partial}));
            check_http(&[], message.clone(), &[], 400, error(INVALID_PARAMS));
            check_http(&[break_id], message, &[], 200, json!({"result": {}}));
        }

        let mut anonymous = meta();
        anonymous.as_object_mut().unwrap().remove(META_CLIENT_INFO);
        let message = request("server/discover", json!({"_meta": anonymous}));
        check_http(&[], message.clone(), &[], 200, json!({"result": {}}));
        check_http(&["m-4"], message, &[], 400, error(INVALID_PARAMS));

        let mut extended = meta();
        extended["com.example.harness/probe"] = json!("x");
        extended["traceparent"] = json!("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01");
        let message = request("server/discover", json!({"_meta": extended}));
        check(&[], message.clone(), json!({"result": {}}));
        check(&["m-9"], message.clone(), error(INVALID_PARAMS));
        check(&["m-13"], message, error(INVALID_PARAMS));

        let mut verbose = meta();
        verbose[META_LOG_LEVEL] = json!("verbose");
        let message = request("tools/list", json!({"_meta": verbose}));
        check(&[], message.clone(), error(INVALID_PARAMS));
        check(&["e-6"], message, json!({"result": {}}));
    }

    #[test]
    fn unsupported_version_gets_32022() {
        let mut old = meta();
        old[META_PROTOCOL_VERSION] = json!("1900-01-01");
        let message = request("server/discover", json!({"_meta": old}));
        let version = [("MCP-Protocol-Version", Some("1900-01-01"))];
        check_http(
            &[],
            message.clone(),
            &version,
            400,
            json!({"id": 1, "error": {"code": UNSUPPORTED_PROTOCOL_VERSION,
                   "data": {"supported": [PROTOCOL_VERSION], "requested": "1900-01-01"}}}),
        );
        check_http(&["v-1"], message.clone(), &version, 400, error(INVALID_PARAMS));
        // Header 2026-07-28 with _meta 1900-01-01 is a mismatch, not an unsupported version.
        check_http(&[], message.clone(), &[], 400, error(HEADER_MISMATCH));
        check_http(&["h-1"], message, &[], 400, error(UNSUPPORTED_PROTOCOL_VERSION));
    }

    #[test]
    fn removed_and_unknown_methods_get_32601_and_404() {
        for method in [
            "initialize",
            "ping",
            "logging/setLevel",
            "resources/subscribe",
            "resources/unsubscribe",
            "tasks/get",
            "foo/bar",
        ] {
            check_http(&[], request(method, json!({})), &[], 404, error(METHOD_NOT_FOUND));
            check_http(&["h-13"], request(method, json!({})), &[], 400, error(METHOD_NOT_FOUND));
        }
        let legacy = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                            "params": {"protocolVersion": "2025-11-25", "capabilities": {}}});
        let reply = check(&[], legacy.clone(), error(METHOD_NOT_FOUND));
        let text = reply.last().unwrap()["error"]["message"].to_string();
        assert!(text.contains(PROTOCOL_VERSION), "{text}");
        let reply = check(&["b-3"], legacy, error(METHOD_NOT_FOUND));
        let text = reply.last().unwrap()["error"]["message"].to_string();
        assert!(!text.contains(PROTOCOL_VERSION), "{text}");
        check(&["x-5"], request("ping", json!({})), json!({"result": {"resultType": "complete"}}));
    }

    #[test]
    fn envelope_errors() {
        let reply =
            check(&[], json!({"jsonrpc": "2.0", "foo": 1}), json!({"id": null, "error": {"code": INVALID_REQUEST}}));
        assert_eq!(reply.status, 400);
        let batch = json!([request("server/discover", json!({})), request("server/discover", json!({}))]);
        let reply = check(&[], batch.clone(), json!({"id": null, "error": {"code": INVALID_REQUEST}}));
        assert_eq!(reply.status, 400);
        let reply = handle(&state(&["h-24"]), &batch, None);
        assert_eq!(reply.last().unwrap().as_array().map(Vec::len), Some(2));
        let reply = handle(&state(&["e-7"]), &json!({"jsonrpc": "2.0", "foo": 1}), None);
        assert_eq!(reply.status, 500);
        assert_eq!(parse_error_reply().last().unwrap()["error"]["code"], PARSE_ERROR);
    }

    #[test]
    fn ids_are_echoed() {
        let mut message = request("server/discover", json!({}));
        message["id"] = json!("id-漢字-🙂");
        check(&[], message.clone(), json!({"id": "id-漢字-🙂"}));
        check(&["m-12"], message, json!({"id": "id-??-?"}));
        check(&["m-11"], request("server/discover", json!({})), json!({"id": "1"}));
        let unknown = tool_call("nope", json!({}));
        check(&[], unknown.clone(), error(INVALID_PARAMS));
        check(&["m-6"], unknown.clone(), json!({"id": null, "error": {"code": INVALID_PARAMS}}));
        check(&["m-8"], unknown.clone(), error(-32003));
        check(&["e-3"], unknown, json!({"id": 1, "result": {"isError": true}}));
    }

    #[test]
    fn notifications_are_accepted_silently() {
        let cancelled = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                               "params": {"requestId": "never-sent"}});
        let reply = handle(&state(&[]), &cancelled, None);
        assert_eq!((reply.status, reply.messages.len()), (202, 0));
        let reply = handle(&state(&["x-7"]), &cancelled, None);
        assert_eq!(reply.messages.len(), 1);
        let view = HttpRequestView::default();
        let reply = handle(&state(&["h-22"]), &cancelled, Some(&view));
        assert_eq!(reply.status, 200);
    }

    #[test]
    fn standard_headers_are_validated() {
        let list = || request("tools/list", json!({}));
        let ok = json!({"result": {"resultType": "complete"}});
        check_http(&[], list(), &[], 200, ok.clone());
        check_http(&[], list(), &[("mcp-protocol-version", None)], 400, error(HEADER_MISMATCH));
        check_http(&["h-2"], list(), &[("MCP-Protocol-Version", None)], 200, ok.clone());
        check_http(&[], list(), &[("Mcp-Method", None)], 400, error(HEADER_MISMATCH));
        check_http(&["h-3"], list(), &[("Mcp-Method", None)], 200, ok.clone());
        let wrong = [("Mcp-Method", Some("prompts/list"))];
        check_http(&[], list(), &wrong, 400, error(HEADER_MISMATCH));
        check_http(&["h-4"], list(), &wrong, 200, ok.clone());
        let shouting = [("Mcp-Method", Some("TOOLS/LIST"))];
        check_http(&[], list(), &shouting, 400, error(HEADER_MISMATCH));
        check_http(&["h-5"], list(), &shouting, 200, ok.clone());
        check_http(&[], list(), &[("MCP-METHOD", Some("tools/list"))], 200, ok);
    }

    #[test]
    fn mcp_name_is_validated_and_decoded() {
        let prompt = || request("prompts/get", json!({"name": "test_prompt", "arguments": {"topic": "x"}}));
        let ok = json!({"result": {"resultType": "complete"}});
        let mismatch = error(HEADER_MISMATCH);
        check_http(&[], prompt(), &[], 200, ok.clone());
        check_http(&[], prompt(), &[("Mcp-Name", Some("wrong"))], 400, mismatch.clone());
        check_http(&["h-7"], prompt(), &[("Mcp-Name", Some("wrong"))], 200, ok.clone());
        check_http(&[], prompt(), &[("Mcp-Name", None)], 400, mismatch.clone());
        check_http(&["h-8"], prompt(), &[("Mcp-Name", None)], 200, ok.clone());
        let encoded = format!("=?base64?{}?=", STANDARD.encode("test_prompt"));
        check_http(&[], prompt(), &[("Mcp-Name", Some(&encoded))], 200, ok.clone());
        check_http(&["h-9"], prompt(), &[("Mcp-Name", Some(&encoded))], 400, mismatch.clone());
        check_http(&[], prompt(), &[("Mcp-Name", Some("=?base64?!!!?="))], 400, mismatch.clone());
        check_http(&[], prompt(), &[("Mcp-Name", Some("  test_prompt\t"))], 200, ok.clone());
        // Values not exactly in sentinel form are literal (H-25).
        let bare = STANDARD.encode("test_prompt");
        let unclosed = format!("=?base64?{bare}");
        for value in [&bare, &unclosed] {
            check_http(&[], prompt(), &[("Mcp-Name", Some(value))], 400, mismatch.clone());
            check_http(&["h-25"], prompt(), &[("Mcp-Name", Some(value))], 200, ok.clone());
        }
        // Header checks come before dispatch: an unknown tool with a bad Mcp-Name gets -32020.
        let unknown = tool_call("nope", json!({}));
        check_http(&[], unknown, &[("Mcp-Name", Some("other"))], 400, mismatch);
        // A body without the name is a params error.
        let nameless = request("tools/call", json!({}));
        check_http(&[], nameless.clone(), &[], 200, error(INVALID_PARAMS));
        check_http(&["e-9"], nameless, &[], 200, error(INTERNAL_ERROR));
    }

    #[test]
    fn mcp_param_headers_are_validated() {
        let call = |region: Value| tool_call("test_header_param", json!({"region": region}));
        let ok = json!({"result": {"resultType": "complete"}});
        let mismatch = error(HEADER_MISMATCH);
        check_http(&[], call(json!("eu")), &[], 200, ok.clone());
        check_http(&[], call(json!("eu")), &[("Mcp-Param-Region", None)], 400, mismatch.clone());
        check_http(&["h-11"], call(json!("eu")), &[("Mcp-Param-Region", None)], 200, ok.clone());
        check_http(&[], call(json!("eu")), &[("mcp-param-region", Some("us"))], 400, mismatch.clone());
        let encoded = format!("=?base64?{}?=", STANDARD.encode("eu"));
        check_http(&[], call(json!("eu")), &[("Mcp-Param-Region", Some(&encoded))], 200, ok.clone());
        for bad in ["=?base64?SGVsbG8?=", "=?base64?SGVs!!!bG8=?="] {
            let changes = [("Mcp-Param-Region", Some(bad))];
            check_http(&[], call(json!("Hello")), &changes, 400, mismatch.clone());
        }
        check_http(&[], call(Value::Null), &[], 200, ok.clone());
        check_http(&[], tool_call("test_header_param", json!({})), &[], 200, ok);
    }

    #[test]
    fn arguments_that_break_the_input_schema_are_refused_or_handled_as_a_break_says() {
        let tool_error = json!({"result": {"resultType": "complete", "isError": true}});
        // A missing required argument, a wrong type, an argument the schema does not allow: tool
        // execution errors (SEP-1303, spec-notes §12.3).
        check(&[], tool_call("test_header_param", json!({})), tool_error.clone());
        check(&[], tool_call("test_simple_text", json!({"text": 12345})), tool_error.clone());
        check(&[], tool_call("test_progress", json!({"extra": 1})), tool_error);
        // Arguments that are not an object: the request itself is malformed.
        check(&[], tool_call("test_simple_text", json!("{}")), error(INVALID_PARAMS));
        let valid = check(&[], tool_call("test_simple_text", json!({"text": "hi"})), json!({"result": {}}));
        assert!(valid.last().unwrap()["result"].get("isError").is_none());
        // The breaks: an HTML 500 page (rendered by the HTTP front end from the status), a crash.
        check_http(&["h-14-html-500"], tool_call("test_simple_text", json!("{}")), &[], 500, error(INTERNAL_ERROR));
        for break_id in ["h-27", "x-6-invalid-arguments"] {
            let reply = handle(&state(&[break_id]), &tool_call("test_simple_text", json!({"text": 1})), None);
            assert!(reply.crash && reply.messages.is_empty(), "{break_id}: {reply:?}");
            let valid = handle(&state(&[break_id]), &tool_call("test_simple_text", json!({})), None);
            assert!(!valid.crash, "{break_id}");
        }
    }

    #[test]
    fn tools_list_paginates_with_opaque_cursors() {
        let server = state(&[]);
        let mut names = Vec::new();
        let mut cursor: Option<Value> = None;
        let mut pages = 0;
        loop {
            let params = match &cursor {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let reply = handle(&server, &request("tools/list", params), None);
            let result = reply.last().unwrap()["result"].clone();
            assert_eq!(result["resultType"], "complete");
            assert_eq!(result["cacheScope"], "public");
            assert!(result["ttlMs"].is_u64());
            let tools = result["tools"].as_array().unwrap();
            assert!(tools.len() <= PAGE_SIZE);
            for tool in tools {
                assert_eq!(tool["inputSchema"]["type"], "object");
                assert_eq!(tool["annotations"]["readOnlyHint"], true);
                names.push(tool["name"].as_str().unwrap().to_string());
            }
            pages += 1;
            match result.get("nextCursor") {
                Some(next) => cursor = Some(next.clone()),
                None => break,
            }
        }
        assert_eq!(pages, 3);
        assert_eq!(names.len(), 7);
        assert!(names.contains(&"test_header_param".to_string()));
        for garbage in ["%%garbage%%", ""] {
            check(&[], request("tools/list", json!({"cursor": garbage})), error(INVALID_PARAMS));
        }
        check(
            &["e-5"],
            request("tools/list", json!({"cursor": "%%garbage%%"})),
            json!({"result": {"resultType": "complete"}}),
        );
        let reply = check(&["m-7"], request("tools/list", json!({})), json!({"result": {}}));
        assert!(reply.last().unwrap()["result"].get("resultType").is_none());
    }

    #[test]
    fn list_breaks() {
        let first_names = |server: &ServerState| {
            let reply = handle(server, &request("tools/list", json!({})), None);
            reply.last().unwrap()["result"]["tools"][0]["name"].clone()
        };
        let rotating = state(&["p-1"]);
        assert_ne!(first_names(&rotating), first_names(&rotating));
        let reply = check(&["p-2"], request("tools/list", json!({})), json!({"result": {"nextCursor": 3}}));
        assert!(reply.last().unwrap()["result"]["nextCursor"].is_u64());
        check(&["p-2"], request("tools/list", json!({"cursor": 3})), json!({"result": {"resultType": "complete"}}));
        let server = state(&["c-4"]);
        let reply = handle(&server, &request("tools/list", json!({})), None);
        let cursor = reply.last().unwrap()["result"]["nextCursor"].clone();
        let reply = handle(&server, &request("tools/list", json!({"cursor": cursor})), None);
        assert_eq!(reply.last().unwrap()["result"]["cacheScope"], "private");
        let reply = check(&["c-1"], request("prompts/list", json!({})), json!({"result": {}}));
        assert!(reply.last().unwrap()["result"].get("cacheScope").is_none());
        check(&["c-2"], request("resources/list", json!({})), json!({"result": {"ttlMs": 60000.5}}));
        let server = state(&["p-3"]);
        let count = |server: &ServerState| {
            let reply = handle(server, &request("tools/list", json!({"cursor": null})), None);
            reply.messages.len()
        };
        let _ = count(&server);
        handle(&server, &tool_call("test_simple_text", json!({})), None);
        let reply = handle(&server, &request("tools/list", json!({})), None);
        let cursor = reply.last().unwrap()["result"]["nextCursor"].clone();
        let reply = handle(&server, &request("tools/list", json!({"cursor": cursor})), None);
        let cursor = reply.last().unwrap()["result"]["nextCursor"].clone();
        check(&[], request("tools/list", json!({})), json!({"result": {}}));
        let reply = handle(&server, &request("tools/list", json!({"cursor": cursor})), None);
        assert_eq!(reply.last().unwrap()["result"]["tools"][1]["name"], "test_after_call");
    }

    #[test]
    fn tool_definition_breaks() {
        let all_tools = |breaks: &[&str]| {
            let server = state(breaks);
            catalog::tools(&server)
        };
        assert!(all_tools(&["t-1"])[0]["inputSchema"].get("type").is_none());
        assert_eq!(all_tools(&["t-2"])[0]["inputSchema"]["properties"]["count"]["minimum"], "zero");
        assert_eq!(
            all_tools(&["t-3"])[0]["inputSchema"]["properties"]["extra"]["$ref"],
            "https://example.invalid/schema.json"
        );
        assert!(all_tools(&["t-4"])[0]["inputSchema"]["properties"]["nested"].is_object());
        assert_eq!(all_tools(&["t-8"]).last().unwrap()["name"], "test simple/text!");
        assert_eq!(all_tools(&["t-9"])[4]["annotations"]["readOnlyHint"], "true");
        assert_eq!(all_tools(&["h-12"])[1]["inputSchema"]["properties"]["scale"]["type"], "number");
        assert!(all_tools(&["m-10"])[0]["icons"].is_array());
        assert!(all_tools(&[])[0].get("icons").is_none());
    }

    #[test]
    fn seeded_faults_fail_tool_calls_alone() {
        let config = DemoConfig {
            seeded_failures: Some(Arc::new(crate::demo::seeded::SeededFailures::new(1.0, 3))),
            ..DemoConfig::default()
        };
        let server = ServerState::new(Arc::new(config));
        let failures: Vec<Value> = (0..8)
            .map(|n| {
                let reply = handle(&server, &tool_call("test_simple_text", json!({"text": format!("t{n}")})), None);
                reply.last().cloned().expect("an answer")
            })
            .collect();
        assert!(
            failures.iter().all(|answer| answer.pointer("/result/isError") == Some(&json!(true))
                || answer.pointer("/error/code") == Some(&json!(INTERNAL_ERROR))),
            "{failures:?}"
        );
        let listed = handle(&server, &request("tools/list", json!({"_meta": meta()})), None);
        assert!(listed.last().expect("an answer").get("result").is_some(), "only tools/call fails");
    }

    #[test]
    fn simple_and_structured_tools() {
        check(
            &[],
            tool_call("test_simple_text", json!({})),
            json!({"result": {"resultType": "complete", "content": [{"type": "text"}]}}),
        );
        check(&["r-1"], tool_call("test_simple_text", json!({})), json!({"result": {"resultType": "completed"}}));
        let reply = check(&["t-7"], tool_call("test_simple_text", json!({})), json!({"result": {}}));
        assert!(reply.last().unwrap()["result"]["content"][0].get("type").is_none());

        let reply = check(
            &[],
            tool_call("test_structured", json!({"unit": "celsius"})),
            json!({"result": {"structuredContent": {"temperature": 21.5, "unit": "celsius"}}}),
        );
        let result = &reply.last().unwrap()["result"];
        let mirrored: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(mirrored, result["structuredContent"]);
        check(
            &["t-5"],
            tool_call("test_structured", json!({})),
            json!({"result": {"structuredContent": {"temperature": "warm"}}}),
        );
        let reply = check(&["t-6"], tool_call("test_structured", json!({})), json!({"result": {}}));
        let text = reply.last().unwrap()["result"]["content"][0]["text"].as_str().unwrap().to_string();
        assert!(serde_json::from_str::<Value>(&text).is_err());
        check(&[], tool_call("test_structured", json!({"unit": "kelvin"})), json!({"result": {"isError": true}}));
    }

    #[test]
    fn progress_streams_increasing_notifications() {
        let mut with_token = meta();
        with_token["progressToken"] = json!("p1");
        let message = request("tools/call", json!({"name": "test_progress", "_meta": with_token}));
        let reply = handle(&state(&[]), &message, None);
        assert!(reply.stream);
        let progress: Vec<Value> =
            reply.messages[..3].iter().map(|outgoing| outgoing.message["params"]["progress"].clone()).collect();
        assert_eq!(progress, vec![json!(1), json!(2), json!(3)]);
        assert_eq!(reply.messages[0].message["params"]["progressToken"], "p1");
        assert_eq!(reply.messages.len(), 4);
        let reply = handle(&state(&["l-3"]), &message, None);
        assert_eq!(reply.messages[2].message["params"]["progress"], 2);
        let reply = handle(&state(&[]), &tool_call("test_progress", json!({})), None);
        assert_eq!((reply.messages.len(), reply.stream), (1, false));
        let view = headers_with(&message, &[]);
        let reply = handle(&state(&["h-15"]), &message, Some(&view));
        assert_eq!(reply.messages[3].message["method"], "ping");
    }

    #[test]
    fn logging_respects_the_level() {
        let levels = |breaks: &[&str], level: Option<&str>| {
            let mut request_meta = meta();
            if let Some(level) = level {
                request_meta[META_LOG_LEVEL] = json!(level);
            }
            let message = request("tools/call", json!({"name": "test_logging_tool", "_meta": request_meta}));
            let reply = handle(&state(breaks), &message, None);
            reply
                .messages
                .iter()
                .filter(|outgoing| outgoing.message["method"] == "notifications/message")
                .map(|outgoing| outgoing.message["params"]["level"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(levels(&[], Some("warning")), vec!["warning", "error"]);
        assert_eq!(levels(&[], Some("debug")).len(), 4);
        assert!(levels(&[], None).is_empty());
        assert_eq!(levels(&["l-1"], None).len(), 4);
        assert_eq!(levels(&["l-2"], Some("error")).len(), 4);
    }

    #[test]
    fn missing_capability_gets_32021() {
        let message = tool_call("test_missing_capability", json!({}));
        check_http(
            &[],
            message.clone(),
            &[],
            400,
            json!({"id": 1, "error": {"code": MISSING_CLIENT_CAPABILITY,
                   "data": {"requiredCapabilities": {"elicitation": {}}}}}),
        );
        check(&["e-2"], message.clone(), json!({"error": {"data": {"requiredCapabilities": ["elicitation"]}}}));
        check(&["r-4"], message, json!({"result": {"resultType": "input_required"}}));
    }

    fn eliciting_meta() -> Value {
        let mut request_meta = meta();
        request_meta[META_CLIENT_CAPABILITIES] = json!({"elicitation": {}});
        request_meta
    }

    fn mrtr_call(extra: Value) -> Value {
        let mut params = json!({"name": "test_input_required_result", "arguments": {},
                                "_meta": eliciting_meta()});
        for (key, value) in extra.as_object().unwrap() {
            params[key] = value.clone();
        }
        request("tools/call", params)
    }

    #[test]
    fn input_required_round_trip() {
        let server = state(&[]);
        let first = handle(&server, &mrtr_call(json!({})), None);
        let result = first.last().unwrap()["result"].clone();
        assert_eq!(result["resultType"], "input_required");
        assert_eq!(result["inputRequests"]["confirm"]["method"], "elicitation/create");
        assert_eq!(result["inputRequests"]["confirm"]["params"]["mode"], "form");
        assert!(result.get("ttlMs").is_none() && result.get("cacheScope").is_none());
        let request_state = result["requestState"].as_str().unwrap().to_string();
        let answer = json!({"action": "accept", "content": {"confirm": true}});
        let run = |extra: Value| {
            let reply = handle(&server, &mrtr_call(extra), None);
            reply.last().unwrap().clone()
        };
        let done = run(json!({"inputResponses": {"confirm": answer}, "requestState": request_state}));
        assert_eq!(done["result"]["resultType"], "complete", "{done}");
        let extra = run(json!({"inputResponses": {"confirm": answer, "other": {}}, "requestState": request_state}));
        assert_eq!(extra["result"]["resultType"], "complete");
        let tampered = format!("x{request_state}");
        let refused = run(json!({"inputResponses": {"confirm": answer}, "requestState": tampered}));
        assert_eq!(refused["error"]["code"], INVALID_PARAMS);
        let again = run(json!({"inputResponses": {"other": {}}, "requestState": request_state}));
        assert_eq!(again["result"]["resultType"], "input_required");
        for malformed in [json!(null), json!(12345), json!({"confirm": 12345})] {
            let refused = run(json!({"inputResponses": malformed, "requestState": request_state}));
            assert_eq!(refused["error"]["code"], INVALID_PARAMS, "{refused}");
        }
        // Without elicitation declared: -32021.
        let plain = tool_call("test_input_required_result", json!({}));
        check(&[], plain, error(MISSING_CLIENT_CAPABILITY));
    }

    #[test]
    fn input_required_breaks() {
        let request_state_of = |server: &ServerState| {
            let reply = handle(server, &mrtr_call(json!({})), None);
            reply.last().unwrap()["result"]["requestState"].as_str().unwrap().to_string()
        };
        let answer = json!({"action": "accept"});
        let server = state(&["r-6"]);
        let request_state = format!("x{}", request_state_of(&server));
        let reply = handle(
            &server,
            &mrtr_call(json!({"inputResponses": {"confirm": answer}, "requestState": request_state})),
            None,
        );
        assert_eq!(reply.last().unwrap()["result"]["resultType"], "complete");
        let server = state(&["r-7"]);
        let request_state = request_state_of(&server);
        let reply = handle(&server, &mrtr_call(json!({"inputResponses": {}, "requestState": request_state})), None);
        assert_eq!(reply.last().unwrap()["error"]["code"], INVALID_PARAMS);
        let server = state(&["r-10"]);
        let request_state = request_state_of(&server);
        let reply = handle(&server, &mrtr_call(json!({"inputResponses": null, "requestState": request_state})), None);
        assert_eq!(reply.last().unwrap()["result"]["resultType"], "complete");
        check(&["r-9"], mrtr_call(json!({})), json!({"result": {"ttlMs": 60000}}));
        check(
            &["r-3"],
            mrtr_call(json!({})),
            json!({"result": {"inputRequests": {"confirm": {"method": "elicitation/prompt"}}}}),
        );
        let server = state(&["m-5"]);
        handle(&server, &mrtr_call(json!({})), None);
        let reply = handle(&server, &tool_call("test_input_required_result", json!({})), None);
        assert_eq!(reply.last().unwrap()["result"]["resultType"], "input_required");
    }

    #[test]
    fn prompts_resources_and_completion() {
        check(
            &[],
            request("prompts/get", json!({"name": "test_prompt", "arguments": {"topic": "tea"}})),
            json!({"result": {"resultType": "complete", "messages": [{"role": "user"}]}}),
        );
        check(&[], request("prompts/get", json!({"name": "test_prompt"})), error(INVALID_PARAMS));
        check(&[], request("prompts/get", json!({"name": "nope"})), error(INVALID_PARAMS));
        check(&["e-4"], request("prompts/get", json!({"name": "nope"})), error(INTERNAL_ERROR));
        check(
            &["p-5"],
            request("prompts/get", json!({"name": "test_prompt", "arguments": {"topic": "tea"}})),
            json!({"result": {"messages": [{"role": "system"}]}}),
        );

        let read = |uri: &str| request("resources/read", json!({"uri": uri}));
        let reply = check(&[], read("test://demo/binary"), json!({"result": {"ttlMs": 60000, "cacheScope": "public"}}));
        let blob = reply.last().unwrap()["result"]["contents"][0]["blob"].as_str().unwrap().to_string();
        assert!(STANDARD.decode(blob).is_ok());
        check(
            &[],
            read("test://demo/text"),
            json!({"result": {"contents": [{"uri": "test://demo/text", "mimeType": "text/plain"}]}}),
        );
        check(&[], read("test://demo/items/42"), json!({"result": {"contents": [{"text": "Item 42"}]}}));
        let missing = "test://definitely-missing/x";
        check(&[], read(missing), json!({"error": {"code": INVALID_PARAMS, "data": {"uri": missing}}}));
        check(&["e-1"], read(missing), json!({"result": {"contents": []}}));
        check(&["c-3"], read("test://demo/text"), json!({"result": {"cacheScope": "shared"}}));
        let reply = check(&["p-4"], read("test://demo/binary"), json!({"result": {}}));
        let blob = reply.last().unwrap()["result"]["contents"][0]["blob"].as_str().unwrap().to_string();
        assert!(STANDARD.decode(blob).is_err());
        check(
            &[],
            request("resources/templates/list", json!({})),
            json!({"result": {"resourceTemplates": [{"name": "demo-item"}]}}),
        );
        let reply = check(&["p-6"], request("resources/templates/list", json!({})), json!({"result": {}}));
        assert!(reply.last().unwrap()["result"]["resourceTemplates"][0].get("name").is_none());

        let complete = |value: &str| {
            request(
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "test_prompt"},
                                                  "argument": {"name": "topic", "value": value}}),
            )
        };
        check(
            &[],
            complete("m"),
            json!({"result": {"resultType": "complete", "completion": {"values": ["mathematics", "music"]}}}),
        );
        let reply = check(&["d-6"], complete(""), json!({"result": {}}));
        assert_eq!(reply.last().unwrap()["result"]["completion"]["values"].as_array().unwrap().len(), 101);
        check(&["r-2"], complete(""), json!({"result": {"resultType": "input_required"}}));
        let by_template = request(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "test://demo/items/{id}"},
                                                                "argument": {"name": "id", "value": ""}}),
        );
        check(&[], by_template, json!({"result": {"completion": {"values": ["1", "2", "3", "4", "5"]}}}));
    }

    #[test]
    fn listen_acknowledges_then_closes() {
        let message = request(
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true, "resourceSubscriptions": ["test://demo/text", "test://nope"]}}),
        );
        let reply = handle(&state(&[]), &message, None);
        assert!(reply.stream);
        let ack = &reply.messages[0].message;
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        assert_eq!(ack["params"]["_meta"][META_SUBSCRIPTION_ID], 1);
        assert_eq!(
            ack["params"]["notifications"],
            json!({"toolsListChanged": true, "resourceSubscriptions": ["test://demo/text"]})
        );
        assert_eq!(reply.messages.len(), 2);
        let closing = &reply.messages[1];
        assert_eq!(closing.delay, LISTEN_DURATION);
        assert!(subset(
            &json!({"id": 1, "result": {"resultType": "complete", "_meta": {META_SUBSCRIPTION_ID: 1}}}),
            &closing.message
        ));

        let methods = |breaks: &[&str]| {
            let reply = handle(&state(breaks), &message, None);
            reply.messages.iter().map(|outgoing| outgoing.message.clone()).collect::<Vec<_>>()
        };
        assert_eq!(methods(&["s-1"])[0]["params"]["notifications"]["promptsListChanged"], true);
        let untagged = &methods(&["s-2"])[1];
        assert_eq!(untagged["method"], "notifications/tools/list_changed");
        assert!(untagged["params"].get("_meta").is_none());
        assert_eq!(methods(&["s-4"])[1]["method"], "notifications/message");
        assert_eq!(methods(&["s-3"])[1]["method"], "notifications/prompts/list_changed");
        assert!(methods(&["s-6"]).iter().all(|message| message.get("id").is_none()));
        check(&[], request("subscriptions/listen", json!({})), error(INVALID_PARAMS));
    }

    #[test]
    fn slow_tools_send_every_tool_result_late_and_nothing_else() {
        let final_delay = |breaks: &[&str], message: &Value| {
            let reply = handle(&state(breaks), message, None);
            reply.messages.last().map(|outgoing| outgoing.delay).unwrap_or_default()
        };
        let slow = &["chaos-slow-tools"][..];
        let simple = tool_call("test_simple_text", json!({}));
        assert_eq!(final_delay(&[], &simple), Duration::ZERO);
        assert_eq!(final_delay(slow, &simple), SLOW_TOOLS_DELAY);
        // An isError result is a result too; the delay comes after the tool's own.
        assert_eq!(final_delay(slow, &tool_call("test_header_param", json!({}))), SLOW_TOOLS_DELAY);
        let mut progress = tool_call("test_progress", json!({}));
        progress["params"]["_meta"]["progressToken"] = json!("tok");
        assert_eq!(final_delay(slow, &progress), final_delay(&[], &progress) + SLOW_TOOLS_DELAY);
        // So is every round of a multi round-trip call.
        let mut ask = tool_call("test_input_required_result", json!({}));
        ask["params"]["_meta"][META_CLIENT_CAPABILITIES] = json!({"elicitation": {}});
        let reply = check(slow, ask, json!({"result": {"resultType": "input_required"}}));
        assert_eq!(reply.messages.last().map(|outgoing| outgoing.delay), Some(SLOW_TOOLS_DELAY));
        // The same reply on HTTP.
        let view = headers_with(&simple, &[]);
        let reply = handle(&state(slow), &simple, Some(&view));
        assert_eq!(reply.messages.last().map(|outgoing| outgoing.delay), Some(SLOW_TOOLS_DELAY));
        // Other methods, and JSON-RPC errors of tools/call, are not slowed.
        assert_eq!(final_delay(slow, &request("tools/list", json!({}))), Duration::ZERO);
        assert_eq!(final_delay(slow, &tool_call("no_such_tool", json!({}))), Duration::ZERO);
    }
}
