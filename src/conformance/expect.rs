//! Small assertions shared by the probes: "this exchange is a JSON-RPC error with code X (and,
//! over HTTP, status Y)", "this exchange is a result". Each returns a sentence describing what
//! was seen, so findings say both what was expected and what came back.

use serde_json::Value;

use crate::mcp::exchange::Exchange;

/// What an exchange showed instead of what a probe expected: the sentence a finding quotes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Unexpected {
    /// Not the JSON-RPC error (and, over HTTP, the status) expected.
    #[error("expected {expected}, got {seen}")]
    Error {
        /// What was expected, e.g. `HTTP 400 with JSON-RPC error -32020`.
        expected: String,
        /// What came, as [`Exchange::describe`] puts it.
        seen: String,
    },
    /// Not a JSON-RPC result (or, over HTTP, not a 2xx).
    #[error("expected a result, got {seen}")]
    NotAResult {
        /// What came, as [`Exchange::describe`] puts it.
        seen: String,
    },
}

/// Whether an exchange carries the expected error, and what was seen.
pub(crate) fn error(exchange: &Exchange, code: i64, http_status: Option<u16>) -> Result<String, Unexpected> {
    let seen = exchange.describe();
    let code_ok = exchange.error_code() == Some(code);
    let status_ok = match (http_status, exchange.status) {
        (Some(expected), Some(actual)) => expected == actual,
        _ => true,
    };
    let expected = match (http_status, exchange.status) {
        (Some(status), Some(_)) => format!("HTTP {status} with JSON-RPC error {code}"),
        _ => format!("JSON-RPC error {code}"),
    };
    if code_ok && status_ok { Ok(format!("got {seen} as required")) } else { Err(Unexpected::Error { expected, seen }) }
}

/// Whether the exchange is a JSON-RPC result (and, over HTTP, a 2xx).
pub(crate) fn result(exchange: &Exchange) -> Result<&Value, Unexpected> {
    match exchange.result() {
        Some(result) if exchange.status.is_none_or(|status| (200..300).contains(&status)) => Ok(result),
        _ => Err(Unexpected::NotAResult { seen: exchange.describe() }),
    }
}

/// True when the exchange is an HTTP 400 carrying `-32020` (the header-validation rejection).
pub(crate) fn header_rejected(exchange: &Exchange) -> bool {
    exchange.error_code() == Some(crate::mcp::jsonrpc::HEADER_MISMATCH)
}
