//! The shared types of the demo server's dispatcher ([`super::core`]) and its handlers
//! ([`super::catalog`]): the per-request context a handler receives, what it hands back
//! ([`Handled`], [`Outgoing`]) or fails with ([`RpcError`]), the server's shared state, log
//! levels, the wire constants and small message builders.
//!
//! It breaks what would otherwise be a cycle: `catalog` depends on this module only, `core` on
//! this module and `catalog`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::DemoConfig;
use super::request_state::StateSigner;

// The wire constants are the client's: one definition of the protocol for both sides.
pub(crate) use crate::mcp::jsonrpc::{
    HEADER_MISMATCH, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, META_CLIENT_CAPABILITIES, META_CLIENT_INFO,
    META_LOG_LEVEL, META_PROTOCOL_VERSION, META_SERVER_INFO, META_SUBSCRIPTION_ID, METHOD_NOT_FOUND,
    MISSING_CLIENT_CAPABILITY, PARSE_ERROR, UNSUPPORTED_PROTOCOL_VERSION,
};

/// One message to send, after waiting `delay` (counted from the previous message).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Outgoing {
    /// How long to wait before sending this message.
    pub delay: Duration,
    /// The JSON-RPC message (notification, response, or with break h-24 an array).
    pub message: Value,
}

/// Shared state of one server instance: its configuration and the little state that breaks
/// need (the correct server is stateless apart from the `requestState` key).
#[derive(Debug)]
pub(crate) struct ServerState {
    config: Arc<DemoConfig>,
    signer: StateSigner,
    /// Counts first pages of `tools/list` (break p-1 rotates the order per walk).
    tool_walks: AtomicUsize,
    /// Whether any `tools/call` happened (break p-3).
    tools_called: AtomicBool,
    /// Whether any request declared elicitation (break m-5).
    elicitation_seen: AtomicBool,
}

impl ServerState {
    /// Fresh state for a server with `config`.
    pub(crate) fn new(config: Arc<DemoConfig>) -> Self {
        ServerState {
            config,
            signer: StateSigner::new(),
            tool_walks: AtomicUsize::new(0),
            tools_called: AtomicBool::new(false),
            elicitation_seen: AtomicBool::new(false),
        }
    }

    /// The configuration this server runs with.
    pub(crate) fn config(&self) -> &DemoConfig {
        &self.config
    }

    /// Whether break `id` is on.
    pub(crate) fn breaks(&self, id: &str) -> bool {
        self.config.has(id)
    }

    /// The signer for `requestState` tokens.
    pub(crate) fn signer(&self) -> &StateSigner {
        &self.signer
    }

    /// Whether any `tools/call` has been served (only tracked for break p-3).
    pub(crate) fn tools_called(&self) -> bool {
        self.tools_called.load(Ordering::Relaxed)
    }

    /// Whether any earlier request declared elicitation (only used by break m-5).
    pub(crate) fn elicitation_seen(&self) -> bool {
        self.elicitation_seen.load(Ordering::Relaxed)
    }

    /// Records that a request declared elicitation (for break m-5; the dispatcher calls it).
    pub(super) fn note_elicitation_declared(&self) {
        self.elicitation_seen.store(true, Ordering::Relaxed);
    }

    /// Counts one more first page of `tools/list` and returns the count before it (break p-1).
    pub(super) fn next_tool_walk(&self) -> usize {
        self.tool_walks.fetch_add(1, Ordering::Relaxed)
    }

    /// Records that a `tools/call` was served (break p-3; the dispatcher calls it).
    pub(super) fn note_tool_call(&self) {
        self.tools_called.store(true, Ordering::Relaxed);
    }
}

/// A JSON-RPC error on its way out, with the HTTP status it maps to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RpcError {
    /// JSON-RPC error code.
    pub code: i64,
    /// Human-readable message.
    pub message: String,
    /// Optional `data`.
    pub data: Option<Value>,
    /// HTTP status for this error.
    pub status: u16,
}

impl RpcError {
    /// An error with no `data`, answered in-band with HTTP 200.
    pub(crate) fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError { code, message: message.into(), data: None, status: 200 }
    }

    /// `-32602` for a handler-level problem (HTTP 200: the status is not pinned, spec-notes §6.3).
    pub(crate) fn invalid_params(message: impl Into<String>) -> Self {
        RpcError::new(INVALID_PARAMS, message)
    }

    /// `-32020` with HTTP 400.
    pub(crate) fn header_mismatch(message: impl Into<String>) -> Self {
        RpcError::new(HEADER_MISMATCH, message).with_status(400)
    }

    /// Attaches `data`.
    pub(crate) fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// Sets the HTTP status.
    pub(crate) fn with_status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }
}

/// Syslog severities used by `notifications/message`, in increasing order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum LogLevel {
    /// `debug`
    Debug,
    /// `info`
    Info,
    /// `notice`
    Notice,
    /// `warning`
    Warning,
    /// `error`
    Error,
    /// `critical`
    Critical,
    /// `alert`
    Alert,
    /// `emergency`
    Emergency,
}

impl LogLevel {
    const ALL: [(LogLevel, &'static str); 8] = [
        (LogLevel::Debug, "debug"),
        (LogLevel::Info, "info"),
        (LogLevel::Notice, "notice"),
        (LogLevel::Warning, "warning"),
        (LogLevel::Error, "error"),
        (LogLevel::Critical, "critical"),
        (LogLevel::Alert, "alert"),
        (LogLevel::Emergency, "emergency"),
    ];

    /// Parses a level name as used on the wire.
    pub(crate) fn parse(name: &str) -> Option<LogLevel> {
        LogLevel::ALL.iter().find(|(_, level_name)| *level_name == name).map(|(level, _)| *level)
    }

    /// The wire name of the level.
    pub(crate) fn as_str(self) -> &'static str {
        LogLevel::ALL.iter().find(|(level, _)| *level == self).map(|(_, name)| *name).unwrap_or("info")
    }
}

/// Everything a method handler needs to know about the request it serves.
#[derive(Debug)]
pub(crate) struct RequestContext<'a> {
    /// Server state and configuration.
    pub state: &'a ServerState,
    /// The request id.
    pub id: &'a Value,
    /// The request's `params` (with `_meta`).
    pub params: &'a Map<String, Value>,
    /// `_meta["io.modelcontextprotocol/clientCapabilities"]`.
    pub client_capabilities: Map<String, Value>,
    /// The requested log level, when the request asked for logs.
    pub log_level: Option<LogLevel>,
    /// The progress token, when the request asked for progress.
    pub progress_token: Option<Value>,
}

impl RequestContext<'_> {
    /// Whether break `id` is on.
    pub(crate) fn breaks(&self, id: &str) -> bool {
        self.state.breaks(id)
    }
}

/// A successful handler outcome: notifications to send first, then the result.
#[derive(Debug, Default)]
pub(crate) struct Handled {
    /// Notifications sent before the final response.
    pub notifications: Vec<Outgoing>,
    /// The `result` object (the core adds `_meta` serverInfo). `None` ends without a response.
    pub result: Option<Value>,
    /// Delay before the final response.
    pub final_delay: Duration,
    /// Whether the reply must be an SSE stream even without progress or logging.
    pub stream: bool,
    /// The server stops serving at once, without answering: a crash (breaks `h-27`,
    /// `x-6-invalid-arguments`).
    pub crash: bool,
}

impl Handled {
    /// A plain result with nothing before it.
    pub(crate) fn result(result: Value) -> Self {
        Handled { result: Some(result), ..Handled::default() }
    }
}

/// Builds a JSON-RPC notification.
pub(crate) fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}
