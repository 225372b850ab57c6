//! Typed wire shape checks (M-10): placeholder until the full set lands.

use serde_json::Value;

/// Prefix of problems graded by their own checks (M-7, C-1).
pub const GRADED_ELSEWHERE: &str = "[graded elsewhere] ";

/// Envelope problems of a response.
pub fn check_envelope(message: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        problems.push("`jsonrpc` must be \"2.0\"".to_owned());
    }
    if message.get("result").is_some() == message.get("error").is_some() {
        problems.push("a response has exactly one of `result` and `error`".to_owned());
    }
    problems
}

/// Error object problems.
pub fn check_error(error: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if !error.get("code").is_some_and(|code| code.is_i64()) {
        problems.push("`error.code` must be an integer".to_owned());
    }
    if !error.get("message").is_some_and(Value::is_string) {
        problems.push("`error.message` must be a string".to_owned());
    }
    problems
}

/// Result problems by originating method.
pub fn check_result(_method: &str, _result: &Value) -> Vec<String> {
    Vec::new()
}

/// Notification problems.
pub fn check_notification(_message: &Value) -> Vec<String> {
    Vec::new()
}

/// Content block problems.
pub fn content_block_problems(_block: &Value) -> Vec<String> {
    Vec::new()
}
