//! The ways the `chaos-later-*` modes spoil every answer but `server/discover`'s (and, over HTTP,
//! the listen stream's, whose notifications are no answer): the run gets its era and
//! capabilities from a readable discover, then answers no client can read, or reads only by
//! luck. The fixtures of the root-cause rule, one broken thing being one finding.
//!
//! [`Later`] names each way; the front ends ask [`super::core::later_way`] which one is on and
//! spoil a response with [`Later::http`] (a body, its content type and its encoding) or
//! [`Later::stdio`] (what is written on stdout for it).

use serde_json::Value;

/// One way of spoiling an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Later {
    /// A body or line that is not JSON (an error text), where the answer should be.
    NotJson,
    /// The response wrapped in a one-element JSON array.
    Array,
    /// `jsonrpc` is `"1.0"`.
    WrongVersion,
    /// The response has no `id`.
    NoId,
    /// The result alone, with no JSON-RPC envelope.
    BareResult,
    /// A byte that is not UTF-8 inside the message.
    BadUtf8,
    /// A UTF-8 byte order mark before the message.
    Bom,
    /// HTTP: the JSON body under `Content-Type: text/plain`.
    TextPlain,
    /// HTTP: an HTML page (`text/html`) with the JSON inside a `<pre>`.
    Html,
    /// HTTP: SSE framing (`event:`/`data:` lines) under `Content-Type: application/json`.
    JsonWithSse,
    /// HTTP: `Content-Type: text/event-stream` over a bare JSON body.
    SseBareJson,
    /// HTTP: an SSE event with no `data:` field (the JSON in another field).
    SseNoData,
    /// HTTP: an SSE event whose data is not JSON (`[object Object]`).
    SseNotJson,
    /// The message serialized twice: a JSON string holding it.
    DoubleEncoded,
    /// HTTP: `Content-Encoding: gzip` declared on a body that is not compressed.
    GzipDeclared,
    /// HTTP: a gzip-compressed body with no `Content-Encoding`.
    GzipUndeclared,
    /// HTTP: the body cut off mid-way (the connection closes before the declared length).
    Truncated,
    /// stdio: the line ends with `\r\n` (accepted: not unreadable at all).
    Crlf,
    /// stdio: LSP-style `Content-Length` framing.
    ContentLength,
    /// stdio: a log line written on stdout before the response.
    Log,
}

/// An HTTP answer spoiled one way: the body bytes, its content type and encoding, and the length
/// to declare when it is longer than the body (the connection closes short of it).
pub(crate) struct SpoiledBody {
    pub body: Vec<u8>,
    pub content_type: &'static str,
    pub content_encoding: Option<&'static str>,
    pub declared_length: Option<usize>,
}

impl Later {
    /// The HTTP answer for `message` (its JSON text as the server would send it).
    pub(crate) fn http(self, message: &Value) -> SpoiledBody {
        let text = message.to_string();
        let mut spoiled = SpoiledBody {
            body: Vec::new(),
            content_type: "application/json",
            content_encoding: None,
            declared_length: None,
        };
        spoiled.body = match self {
            Later::TextPlain => {
                spoiled.content_type = "text/plain";
                text.into_bytes()
            }
            Later::Html => {
                spoiled.content_type = "text/html";
                format!("<!DOCTYPE html><html><body><pre>{text}</pre></body></html>").into_bytes()
            }
            Later::JsonWithSse => format!("event: message\ndata: {text}\n\n").into_bytes(),
            Later::SseBareJson => {
                spoiled.content_type = "text/event-stream";
                format!("{text}\n").into_bytes()
            }
            Later::SseNoData => {
                spoiled.content_type = "text/event-stream";
                format!("event: message\nmessage: {text}\n\n").into_bytes()
            }
            Later::SseNotJson => {
                spoiled.content_type = "text/event-stream";
                b"event: message\ndata: [object Object]\n\n".to_vec()
            }
            Later::GzipDeclared => {
                spoiled.content_encoding = Some("gzip");
                text.into_bytes()
            }
            Later::GzipUndeclared => gzip_stored(text.as_bytes()),
            Later::Truncated => {
                let bytes = text.into_bytes();
                spoiled.declared_length = Some(bytes.len());
                bytes[..bytes.len() / 2].to_vec()
            }
            other => other.message_bytes(message),
        };
        spoiled
    }

    /// What is written on stdout for `message` (its line and newline, or its framing).
    pub(crate) fn stdio(self, message: &Value) -> Vec<u8> {
        let text = message.to_string();
        let mut bytes = match self {
            Later::Crlf => return format!("{text}\r\n").into_bytes(),
            Later::ContentLength => return format!("Content-Length: {}\r\n\r\n{text}", text.len()).into_bytes(),
            Later::Log => return format!("[info] answering request {}\n{text}\n", message["id"]).into_bytes(),
            other => other.message_bytes(message),
        };
        bytes.push(b'\n');
        bytes
    }

    /// The message's own text spoiled the ways both transports share (the others: as it is).
    fn message_bytes(self, message: &Value) -> Vec<u8> {
        let mut message = message.clone();
        match self {
            Later::NotJson => return b"Error: the handler returned undefined".to_vec(),
            Later::Array => return format!("[{message}]").into_bytes(),
            Later::WrongVersion => message["jsonrpc"] = Value::from("1.0"),
            Later::NoId => drop(message.as_object_mut().and_then(|object| object.remove("id"))),
            Later::BareResult => {
                if let Some(result) = message.get("result").or_else(|| message.get("error")) {
                    message = result.clone();
                }
            }
            Later::BadUtf8 => {
                // `"jsonrpc":"2.0"` becomes `"jsonrpc":"2.0<0xFF>"`.
                let text = message.to_string().replacen("\"2.0\"", "\"2.0\u{1}\"", 1);
                return text.into_bytes().into_iter().map(|byte| if byte == 1 { 0xFF } else { byte }).collect();
            }
            Later::Bom => return [b"\xEF\xBB\xBF".as_slice(), message.to_string().as_bytes()].concat(),
            Later::DoubleEncoded => return Value::String(message.to_string()).to_string().into_bytes(),
            _ => {}
        }
        message.to_string().into_bytes()
    }
}

/// `bytes` as a gzip member of one stored (uncompressed) deflate block: gzip a client can
/// inflate, made without a compressor.
fn gzip_stored(bytes: &[u8]) -> Vec<u8> {
    let length = u16::try_from(bytes.len()).unwrap_or(u16::MAX);
    let bytes = &bytes[..usize::from(length)];
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    out.push(1);
    out.extend_from_slice(&length.to_le_bytes());
    out.extend_from_slice(&(!length).to_le_bytes());
    out.extend_from_slice(bytes);
    out.extend_from_slice(&crc32(bytes).to_le_bytes());
    out.extend_from_slice(&u32::from(length).to_le_bytes());
    out
}

/// CRC-32 (IEEE), bit by bit: the demo gzips a few kilobytes at most.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_of_a_known_text() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn the_message_ways_spoil_the_text_as_named() {
        let message = serde_json::json!({"jsonrpc": "2.0", "id": 3, "result": {"tools": []}});
        assert_eq!(Later::NoId.stdio(&message), b"{\"jsonrpc\":\"2.0\",\"result\":{\"tools\":[]}}\n");
        assert_eq!(Later::BareResult.stdio(&message), b"{\"tools\":[]}\n");
        assert!(String::from_utf8(Later::BadUtf8.stdio(&message)).is_err());
        let double = Later::DoubleEncoded.stdio(&message);
        let inner: String = serde_json::from_slice(&double).expect("a JSON string");
        assert_eq!(serde_json::from_str::<Value>(&inner).expect("holding the message"), message);
    }
}
