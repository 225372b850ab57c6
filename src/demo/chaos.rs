//! Wire payloads of the hostile `chaos-*` modes that a [`serde_json::Value`] cannot hold or
//! should not be built as: JSON nested deeper than any parser's recursion limit, bytes that are
//! not UTF-8, a content array of a million entries, an endless list, a flood of notifications.
//!
//! The core and the catalogue put a *marker* string in the message where such a payload goes
//! ([`DEEP_MARKER`], [`BAD_UTF8_MARKER`], [`MILLION_CONTENT_MARKER`]); the front ends serialise
//! the message as usual and [`wire`] swaps each quoted marker for its payload bytes, so the
//! server never holds the payload as a `Value` (nor recurses through it).

use std::time::Duration;

use serde_json::{Value, json};

use super::protocol::Outgoing;

/// Stands for [`NESTING_DEPTH`] nested arrays (`chaos-deep-nesting`).
pub(crate) const DEEP_MARKER: &str = "@@chaos:deep@@";
/// Stands for a JSON string holding a byte that is not UTF-8 (`chaos-invalid-utf8`).
pub(crate) const BAD_UTF8_MARKER: &str = "@@chaos:bad-utf8@@";
/// Stands for a `content` array of [`MILLION_CONTENT_ENTRIES`] text blocks
/// (`chaos-million-content`).
pub(crate) const MILLION_CONTENT_MARKER: &str = "@@chaos:million-content@@";

/// Starts what the stdio writer of `chaos-endless-tools-list` sends: the rest of the line is
/// written, then [`endless_entries`] without end.
pub(crate) const ENDLESS_LINE: &str = "@@chaos:endless-line@@";

/// Starts a line the stdio writer sends as the bytes its rest encodes (base64), with no
/// framing: an answer a `chaos-later-*` mode spoiled (`super::later`).
pub(crate) const RAW_BYTES: &str = "@@chaos:raw-bytes@@";

/// How deep `chaos-deep-nesting` nests arrays: far past serde_json's recursion limit (128).
pub(crate) const NESTING_DEPTH: usize = 10_000;
/// How many entries the `content` array of `chaos-million-content` has. Each is
/// `{"type":"text","text":"x"}` and a comma (27 bytes): about 27 MB, under the 32 MiB cap.
pub(crate) const MILLION_CONTENT_ENTRIES: usize = 1_000_000;
/// How many notifications `chaos-10000-notifications` sends before each result.
pub(crate) const NOTIFICATIONS_BEFORE_RESULT: usize = 10_000;
/// The method of those notifications: unknown, so a client ignores it (no rule is broken).
pub(crate) const FLOOD_METHOD: &str = "notifications/chaos/tick";
/// How many bytes `chaos-endless-tools-list` and `chaos-stderr-flood` write per step, and the
/// pause between the steps of `chaos-stderr-flood` (about 34 MB/s; the endless list is written
/// as fast as it is read).
pub(crate) const FLOOD_STEP_BYTES: usize = 512 * 1024;
/// See [`FLOOD_STEP_BYTES`].
pub(crate) const FLOOD_PAUSE: Duration = Duration::from_millis(15);

/// The text of a message as it goes on the wire: each quoted marker replaced by its payload.
/// Text without a marker comes back as its bytes, unchanged.
pub(crate) fn wire(text: String) -> Vec<u8> {
    if !text.contains("@@chaos:") {
        return text.into_bytes();
    }
    let markers = [DEEP_MARKER, BAD_UTF8_MARKER, MILLION_CONTENT_MARKER];
    let mut found: Vec<(usize, &str)> = markers
        .iter()
        .flat_map(|marker| {
            let quoted = format!("\"{marker}\"");
            text.match_indices(&quoted).map(|(at, _)| (at, *marker)).collect::<Vec<_>>()
        })
        .collect();
    found.sort_unstable();
    let mut bytes = Vec::with_capacity(text.len());
    let mut from = 0;
    for (at, marker) in found {
        bytes.extend_from_slice(&text.as_bytes()[from..at]);
        payload(marker, &mut bytes);
        from = at + marker.len() + 2;
    }
    bytes.extend_from_slice(&text.as_bytes()[from..]);
    bytes
}

/// Appends the payload `marker` stands for.
fn payload(marker: &str, bytes: &mut Vec<u8>) {
    match marker {
        DEEP_MARKER => {
            bytes.extend(std::iter::repeat_n(b'[', NESTING_DEPTH));
            bytes.extend(std::iter::repeat_n(b']', NESTING_DEPTH));
        }
        BAD_UTF8_MARKER => bytes.extend_from_slice(b"\"a byte that is not UTF-8: \xFF (Latin-1 \xE9t\xE9)\""),
        MILLION_CONTENT_MARKER => {
            const ENTRY: &[u8] = br#"{"type":"text","text":"x"}"#;
            bytes.reserve(MILLION_CONTENT_ENTRIES * (ENTRY.len() + 1) + 2);
            bytes.push(b'[');
            for index in 0..MILLION_CONTENT_ENTRIES {
                if index > 0 {
                    bytes.push(b',');
                }
                bytes.extend_from_slice(ENTRY);
            }
            bytes.push(b']');
        }
        _ => {}
    }
}

/// Puts [`NOTIFICATIONS_BEFORE_RESULT`] notifications before the final result among
/// `messages` (the reply is then to be a stream: SSE on HTTP); true when it did. Messages whose
/// last is not a result are left alone.
pub(crate) fn flood_notifications(messages: &mut Vec<Outgoing>) -> bool {
    if messages.last().is_none_or(|last| last.message.get("result").is_none()) {
        return false;
    }
    let ticks = (0..NOTIFICATIONS_BEFORE_RESULT).map(|index| Outgoing {
        delay: Duration::ZERO,
        message: json!({"jsonrpc": "2.0", "method": FLOOD_METHOD, "params": {"tick": index}}),
    });
    let mut flooded: Vec<Outgoing> = ticks.collect();
    flooded.append(messages);
    *messages = flooded;
    true
}

/// The start of an endless `tools/list` answer to the request `id`: the result's `tools` array
/// opened, never closed; [`endless_entries`] is what follows, forever.
pub(crate) fn endless_start(id: &Value) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resultType":"complete","tools":["#)
}

/// [`FLOOD_STEP_BYTES`] (about) of tool entries, each followed by a comma.
pub(crate) fn endless_entries() -> Vec<u8> {
    const ENTRY: &[u8] = br#"{"name":"endless","inputSchema":{"type":"object"}},"#;
    ENTRY.repeat(FLOOD_STEP_BYTES / ENTRY.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_swapped_for_their_payloads_and_other_text_is_kept() {
        let text = json!({"a": DEEP_MARKER, "b": [BAD_UTF8_MARKER], "c": "plain"}).to_string();
        let bytes = wire(text);
        assert!(std::str::from_utf8(&bytes).is_err(), "the invalid byte is on the wire");
        let error = serde_json::from_slice::<Value>(&bytes).expect_err("not JSON any more");
        assert!(error.to_string().contains("recursion limit") || error.to_string().contains("unicode"), "{error}");
        let shown = String::from_utf8_lossy(&bytes);
        assert!(shown.starts_with(r#"{"a":[[[["#) && shown.ends_with(r#""c":"plain"}"#), "{}", &shown[..20]);
        assert_eq!(wire("no marker".into()), b"no marker");
    }

    #[test]
    fn a_million_entries_fit_under_the_response_cap() {
        let bytes = wire(json!({"content": MILLION_CONTENT_MARKER}).to_string());
        assert!(bytes.len() > 26_000_000 && bytes.len() < 32 * 1024 * 1024, "{} bytes", bytes.len());
    }
}
