//! Small text helpers for messages shared by several modules: clipping a text to a number of
//! characters, and naming a JSON value's type.

use serde_json::Value;

/// `text` cut to at most `max` characters, with `…` when cut.
pub(crate) fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut short: String = text.chars().take(max).collect();
        short.push('…');
        short
    }
}

/// The JSON type of a value, for messages: "null", "a boolean", "a number", "a string", "an
/// array" or "an object".
pub(crate) fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_counts_characters_not_bytes() {
        assert_eq!(clip("ééé", 3), "ééé");
        assert_eq!(clip("éééé", 3), "ééé…");
        assert_eq!(json_kind(&serde_json::json!([1])), "an array");
    }
}
