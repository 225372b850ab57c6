//! The bounds a message from the server is held to before it is parsed, and the cheap
//! byte-level scan that checks them.
//!
//! A parsed [`Value`] costs some ten to twenty times its JSON text, and whoever reads a message
//! may copy it (evidence, passive rules, the agent loop): a 27 MB `tools/call` result of a
//! million content blocks took gigabytes. So a message is scanned once, as bytes, before it is
//! parsed: more than [`MAX_JSON_VALUES`] values or nesting deeper than [`MAX_NESTING_DEPTH`]
//! and it is not parsed at all; the exchange records why ([`super::exchange::Failure::Unparsable`]),
//! which is one M-11 finding naming the bound. List answers are read one entry at a time
//! ([`super::entries`]): there each entry and each other member is held to the bounds on its own.

use serde_json::Value;

/// The most JSON values one message (or one list entry) may hold to be parsed: counted cheaply
/// as the `{`, `[` and `,` outside strings, which is about one per value (object keys are not
/// counted). A result of 100,000 values takes some 20–40 MB as a `Value`.
pub(crate) const MAX_JSON_VALUES: usize = 100_000;

/// The deepest nesting of arrays and objects we read, in levels: one under serde_json's
/// recursion limit (128), which refuses a 128th level. A deeper message cannot be parsed, and
/// is reported as too deep instead of as invalid JSON.
pub(crate) const MAX_NESTING_DEPTH: usize = 127;

/// The most messages (notifications, server requests, other responses) kept per exchange
/// before its final response; the rest are counted, not kept.
pub(crate) const MAX_MESSAGES_KEPT: usize = 1000;

/// What one byte of JSON text is, read in order: the escapes of strings followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Byte {
    /// Outside every string (structure, numbers, literals, whitespace).
    Outside,
    /// The `"` that opens a string.
    Opens,
    /// Inside a string.
    Inside,
    /// The `"` that closes a string.
    Closes,
}

/// Follows JSON strings byte by byte.
#[derive(Debug, Default)]
pub(crate) struct Strings {
    in_string: bool,
    escaped: bool,
}

impl Strings {
    /// Reads the next byte of the text: where it stands.
    pub(crate) fn step(&mut self, byte: u8) -> Byte {
        if !self.in_string {
            self.in_string = byte == b'"';
            return if self.in_string { Byte::Opens } else { Byte::Outside };
        }
        if self.escaped {
            self.escaped = false;
        } else if byte == b'\\' {
            self.escaped = true;
        } else if byte == b'"' {
            self.in_string = false;
            return Byte::Closes;
        }
        Byte::Inside
    }
}

/// The bound a message exceeds (it is then not parsed), in words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Exceeded {
    /// Nested this many levels deep.
    #[error(
        "the message nests arrays and objects {0} levels deep, deeper than the {MAX_NESTING_DEPTH} levels we read (the JSON parser's recursion limit is 128): it was not parsed"
    )]
    Nesting(usize),
    /// About this many values.
    #[error(
        "the message holds about {0} JSON values, more than the {MAX_JSON_VALUES} we read in one message (or one list entry): it was not parsed"
    )]
    Values(usize),
}

/// Why a message is not parsed: the bound it exceeds, or `Ok` when it is within every bound.
/// One pass over the bytes, strings skipped; nothing is allocated.
pub(crate) fn check(bytes: &[u8]) -> Result<(), Exceeded> {
    let (mut values, mut depth, mut deepest) = (0usize, 0usize, 0usize);
    let mut strings = Strings::default();
    for &byte in bytes {
        if strings.step(byte) != Byte::Outside {
            continue;
        }
        match byte {
            b'{' | b'[' => {
                values += 1;
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            b',' => values += 1,
            _ => {}
        }
    }
    if deepest > MAX_NESTING_DEPTH {
        return Err(Exceeded::Nesting(deepest));
    }
    if values > MAX_JSON_VALUES {
        return Err(Exceeded::Values(values));
    }
    Ok(())
}

/// The `id` member of the top-level object of `bytes`, read without parsing the rest: for a
/// message that cannot be parsed (too big, too deep, not UTF-8), to tell which request it
/// answers. `None` when there is no such member before the bytes end.
pub(crate) fn top_level_id(bytes: &[u8]) -> Option<Value> {
    let start = bytes.iter().position(|byte| !byte.is_ascii_whitespace())?;
    if bytes[start] != b'{' {
        return None;
    }
    let (mut depth, mut string_start) = (0usize, 0);
    let mut strings = Strings::default();
    for (index, &byte) in bytes.iter().enumerate().skip(start) {
        match (strings.step(byte), byte) {
            (Byte::Opens, _) => string_start = index + 1,
            // A key of the top-level object: `"id"` then `:`.
            (Byte::Closes, _) if depth == 1 && &bytes[string_start..index] == b"id" => {
                let rest = &bytes[index + 1..];
                let colon = rest.iter().position(|byte| !byte.is_ascii_whitespace())?;
                if rest[colon] == b':' {
                    let value = &rest[colon + 1..];
                    let mut stream = serde_json::Deserializer::from_slice(value).into_iter::<Value>();
                    return stream.next()?.ok().filter(|id| id.is_string() || id.is_number());
                }
            }
            (Byte::Outside, b'{' | b'[') => depth += 1,
            (Byte::Outside, b'}' | b']') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_messages_are_within_the_bounds() {
        assert_eq!(check(br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"[{,,"}]}}"#), Ok(()));
    }

    #[test]
    fn too_many_values_are_refused_naming_the_bound() {
        let mut text = String::from("[");
        text.push_str(&"1,".repeat(MAX_JSON_VALUES));
        text.push('1');
        text.push(']');
        let why = check(text.as_bytes()).expect_err("over the bound").to_string();
        assert!(why.contains("more than the 100000"), "{why}");
    }

    #[test]
    fn nesting_past_the_parsers_limit_is_refused_naming_the_bound() {
        let text = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let why = check(text.as_bytes()).expect_err("too deep").to_string();
        assert!(why.contains("10000 levels deep") && why.contains("127 levels we read"), "{why}");
        // Whatever we let through, serde_json parses; one level more it would not.
        let deepest_read = format!("{}{}", "[".repeat(MAX_NESTING_DEPTH), "]".repeat(MAX_NESTING_DEPTH));
        assert_eq!(check(deepest_read.as_bytes()), Ok(()));
        assert!(serde_json::from_str::<Value>(&deepest_read).is_ok());
        let one_more = format!("[{deepest_read}]");
        assert!(check(one_more.as_bytes()).is_err());
        assert!(serde_json::from_str::<Value>(&one_more).is_err(), "the parser's limit moved");
    }

    /// docs/limits.md states the figure of every bound of the wire as the code has it.
    #[test]
    fn the_limits_page_states_the_bounds_of_the_wire() {
        let page = include_str!("../../docs/limits.md");
        let thousands = |number: usize| {
            let digits = number.to_string();
            let mut grouped = String::new();
            for (index, digit) in digits.chars().enumerate() {
                if index > 0 && (digits.len() - index) % 3 == 0 {
                    grouped.push(',');
                }
                grouped.push(digit);
            }
            grouped
        };
        for figure in [
            format!(
                "{} MiB ({} bytes)",
                super::super::http::MAX_RESPONSE_BYTES >> 20,
                thousands(super::super::http::MAX_RESPONSE_BYTES)
            ),
            format!(
                "{} MiB ({} bytes)",
                super::super::stdio::MAX_LINE_BYTES >> 20,
                thousands(super::super::stdio::MAX_LINE_BYTES)
            ),
            format!("| {}, counted cheaply", thousands(MAX_JSON_VALUES)),
            format!("| {} levels (the JSON parser's recursion limit is 128)", MAX_NESTING_DEPTH),
            format!(
                "final response (notifications, server requests, other answers) | {} |",
                thousands(MAX_MESSAGES_KEPT)
            ),
            format!("| the last {} KiB", super::super::stdio::STDERR_TAIL_BYTES >> 10),
            format!("| {} (an excerpt", thousands(super::super::evidence::EXCERPT_BYTES)),
        ] {
            assert!(page.contains(&figure), "docs/limits.md does not say `{figure}`");
        }
    }

    #[test]
    fn the_id_is_found_without_parsing_the_rest() {
        let deep =
            format!(r#"{{"jsonrpc":"2.0","result":{{"x":{}{},"id":9}},"id":7}}"#, "[".repeat(500), "]".repeat(500));
        assert_eq!(top_level_id(deep.as_bytes()), Some(Value::from(7)));
        assert_eq!(top_level_id(b"{\"id\" : \"a\xFFb\", \"x\": \"\xFF\"}"), None, "not UTF-8: no string id");
        assert_eq!(top_level_id(b"{\"id\": \"abc\", \"x\": \"\xFF\"}"), Some(Value::from("abc")));
        assert_eq!(top_level_id(br#"{"jsonrpc":"2.0","result":{"#), None);
        assert_eq!(top_level_id(b"[1]"), None);
    }
}
