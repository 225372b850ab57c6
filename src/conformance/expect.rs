//! Small assertions shared by the probes: "this exchange is a JSON-RPC error with code X (and,
//! over HTTP, status Y)", "this exchange is a result". Each returns a sentence describing what
//! was seen, so findings say both what was expected and what came back.

use serde_json::Value;

use crate::mcp::exchange::Exchange;

/// Whether an exchange carries the expected error, and what was seen.
pub fn error(exchange: &Exchange, code: i64, http_status: Option<u16>) -> Result<String, String> {
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
    if code_ok && status_ok {
        Ok(format!("got {seen} as required"))
    } else {
        Err(format!("expected {expected}, got {seen}"))
    }
}

/// Whether the exchange is a JSON-RPC result (and, over HTTP, a 2xx).
pub fn result(exchange: &Exchange) -> Result<&Value, String> {
    match exchange.result() {
        Some(result) if exchange.status.is_none_or(|status| (200..300).contains(&status)) => Ok(result),
        _ => Err(format!("expected a result, got {}", exchange.describe())),
    }
}

/// True when the exchange is an HTTP 400 carrying `-32020` (the header-validation rejection).
pub fn header_rejected(exchange: &Exchange) -> bool {
    exchange.error_code() == Some(crate::mcp::jsonrpc::HEADER_MISMATCH)
}

/// A short description of the first few items of a JSON array, for messages.
pub fn names(items: &[Value], key: &str) -> String {
    let names: Vec<String> =
        items.iter().take(8).map(|item| item.get(key).and_then(Value::as_str).unwrap_or("?").to_owned()).collect();
    let more = if items.len() > 8 { format!(" and {} more", items.len() - 8) } else { String::new() };
    format!("{}{more}", names.join(", "))
}
