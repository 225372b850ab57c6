//! Active probes: each module sends side-effect-free requests that exercise a family of
//! requirements and returns findings. Probes vary one thing per request (spec-notes §21
//! conventions) and use tool, prompt and resource names that do not exist wherever the rule
//! allows, so a server that validates before dispatch rejects them and nothing runs.

pub(crate) mod arguments;
pub(crate) mod auth;
pub(crate) mod calls;
pub(crate) mod discovery;
pub(crate) mod errors;
pub(crate) mod http;
pub(crate) mod lists;
pub(crate) mod security;
pub(crate) mod stdio;
pub(crate) mod subscriptions;

use serde_json::Value;

use crate::mcp::exchange::Outgoing;
use crate::mcp::jsonrpc;

/// A tool name no server offers: probes that must not run anything target it.
pub(crate) const NO_SUCH_TOOL: &str = "mcp-eval-probe-no-such-tool";
/// A prompt name no server offers.
pub(crate) const NO_SUCH_PROMPT: &str = "mcp-eval-probe-no-such-prompt";
/// A resource URI no server holds.
pub(crate) const NO_SUCH_URI: &str = "test://definitely-missing/mcp-eval-probe";

/// A valid modern request.
pub(crate) fn modern(method: &str, params: Value) -> Outgoing {
    Outgoing::request(jsonrpc::modern_request(method, params))
}

/// A valid modern request whose `_meta` has `key` set to `value`.
pub(crate) fn modern_with_meta(method: &str, params: Value, key: &str, value: Value) -> Outgoing {
    Outgoing::request(jsonrpc::with_meta_key(jsonrpc::modern_request(method, params), key, value))
}
