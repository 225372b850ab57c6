//! JSON-RPC 2.0 envelopes and the MCP constants of revision 2026-07-28: protocol versions,
//! `_meta` keys, error codes (spec-notes §2, §3, §8) and builders for requests with the
//! per-request `_meta` fields every modern request must carry.

use serde_json::{Map, Value, json};

/// The modern revision this client speaks (`LATEST_PROTOCOL_VERSION` of the schema).
pub(crate) const PROTOCOL_VERSION: &str = "2026-07-28";
/// The legacy revision used for the `initialize` handshake fallback.
pub(crate) const LEGACY_VERSION: &str = "2025-11-25";

/// `_meta` key: the protocol version of this request (required).
pub(crate) const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities for this request (required).
pub(crate) const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the client's identity (optional, SHOULD).
pub(crate) const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: deprecated per-request log level.
pub(crate) const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of a result: the server's identity (SHOULD on every result).
pub(crate) const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key tagging every message of a `subscriptions/listen` stream.
pub(crate) const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// `_meta` key (SEP-414, unprefixed): the W3C `traceparent` of the request's parent span.
pub(crate) const META_TRACEPARENT: &str = "traceparent";
/// `_meta` key (SEP-414): W3C `tracestate`, vendor data carried with the trace.
pub(crate) const META_TRACESTATE: &str = "tracestate";
/// `_meta` key (SEP-414): W3C `baggage`, key-value pairs carried with the trace.
pub(crate) const META_BAGGAGE: &str = "baggage";

/// The W3C trace context one request carries in `_meta` (SEP-414): its `traceparent`, and the
/// `tracestate` and `baggage` the user gave, sent as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TraceMeta {
    /// `00-{trace id: 32 hex}-{parent span id: 16 hex}-{flags: 2 hex}`.
    pub traceparent: String,
    /// `tracestate`, when given.
    pub tracestate: Option<String>,
    /// `baggage`, when given.
    pub baggage: Option<String>,
}

impl TraceMeta {
    /// Sets the trace context's keys in `params._meta`, creating `_meta` when there is none
    /// (params that are not an object are left alone).
    pub(crate) fn insert_into(&self, params: &mut Value) {
        let Some(params) = params.as_object_mut() else { return };
        let meta = params.entry("_meta").or_insert_with(|| json!({}));
        let Some(meta) = meta.as_object_mut() else { return };
        meta.insert(META_TRACEPARENT.into(), json!(self.traceparent));
        if let Some(state) = &self.tracestate {
            meta.insert(META_TRACESTATE.into(), json!(state));
        }
        if let Some(baggage) = &self.baggage {
            meta.insert(META_BAGGAGE.into(), json!(baggage));
        }
    }
}

/// JSON-RPC parse error.
pub(crate) const PARSE_ERROR: i64 = -32700;
/// JSON-RPC invalid request.
pub(crate) const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC method not found (HTTP 404 on Streamable HTTP).
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC invalid params (missing `_meta` fields, unknown tool, resource not found, …).
pub(crate) const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC internal error.
pub(crate) const INTERNAL_ERROR: i64 = -32603;
/// MCP 2026-07-28 `HeaderMismatch`.
pub(crate) const HEADER_MISMATCH: i64 = -32020;
/// MCP 2026-07-28 `MissingRequiredClientCapability`.
pub(crate) const MISSING_CLIENT_CAPABILITY: i64 = -32021;
/// MCP 2026-07-28 `UnsupportedProtocolVersion`.
pub(crate) const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// Codes a modern server must never emit (spec-notes §8): draft-only and legacy reserved codes.
pub(crate) const RESERVED_CODES: &[i64] = &[-32001, -32002, -32003, -32004, -32042];

/// Methods whose `params.name` (or `params.uri`) is mirrored in `Mcp-Name`.
pub(crate) fn mcp_name_param(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
        _ => None,
    }
}

/// The identity this client reports in `clientInfo`.
pub(crate) fn client_info() -> Value {
    json!({"name": "mcp-eval", "version": env!("CARGO_PKG_VERSION")})
}

/// The per-request `_meta` of a valid modern request: protocol version, empty client
/// capabilities and clientInfo.
pub(crate) fn modern_meta() -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert(META_PROTOCOL_VERSION.into(), json!(PROTOCOL_VERSION));
    meta.insert(META_CLIENT_CAPABILITIES.into(), json!({}));
    meta.insert(META_CLIENT_INFO.into(), client_info());
    meta
}

/// A valid modern request: `params` plus the per-request `_meta` of [`modern_meta`].
/// `params` must be an object or null; the id is filled in by the client when sent.
pub(crate) fn modern_request(method: &str, params: Value) -> Value {
    let mut params = match params {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let meta = params.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        for (key, value) in modern_meta() {
            meta.entry(key).or_insert(value);
        }
    }
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// A legacy (2025-11-25) request with no `_meta`.
pub(crate) fn legacy_request(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// True when `message` is a request (it has both `method` and `id`).
pub(crate) fn is_request(message: &Value) -> bool {
    message.get("method").is_some() && message.get("id").is_some()
}

/// True when `message` is a notification (a `method` and no `id`).
pub(crate) fn is_notification(message: &Value) -> bool {
    message.get("method").is_some() && message.get("id").is_none()
}

/// True when `message` is a response (an `id` and a `result` or an `error`, no `method`).
pub(crate) fn is_response(message: &Value) -> bool {
    message.get("method").is_none() && (message.get("result").is_some() || message.get("error").is_some())
}

/// The method of the request whose `_meta` protocol version is `version` and that is otherwise
/// valid; used by probes that vary one thing at a time.
pub(crate) fn with_meta_version(mut request: Value, version: &str) -> Value {
    if let Some(meta) = request.pointer_mut("/params/_meta").and_then(Value::as_object_mut) {
        meta.insert(META_PROTOCOL_VERSION.into(), json!(version));
    }
    request
}

/// Removes a key from the request's `params._meta`.
pub(crate) fn without_meta_key(mut request: Value, key: &str) -> Value {
    if let Some(meta) = request.pointer_mut("/params/_meta").and_then(Value::as_object_mut) {
        meta.remove(key);
    }
    request
}

/// Sets a key of the request's `params._meta`.
pub(crate) fn with_meta_key(mut request: Value, key: &str, value: Value) -> Value {
    if let Some(meta) = request.pointer_mut("/params/_meta").and_then(Value::as_object_mut) {
        meta.insert(key.into(), value);
    }
    request
}
