//! An incremental parser for `text/event-stream` bodies (the SSE framing of Streamable HTTP):
//! `data:` lines joined by newlines, events dispatched on a blank line, `:` comment lines
//! (keep-alives) ignored, `\r\n`, `\r` and `\n` line ends accepted.
//!
//! Linear in the stream size: every byte is scanned for a line end once (a line split across
//! chunks is not rescanned from its start), complete lines are read in place, and the buffer
//! is compacted once per [`Parser::feed`], keeping only the unfinished line.

/// One dispatched SSE event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The `event:` field, when present.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The first line of the event that is neither a known field (`data`, `event`, `id`,
    /// `retry`) nor a comment: SSE ignores it (e.g. JSON continued without a `data:` prefix).
    pub ignored: Option<String>,
    /// A line of the event was not UTF-8: its invalid bytes are U+FFFD in `data` (SSE decodes
    /// so), but a JSON message in it was not sent as valid JSON text.
    pub not_utf8: bool,
}

/// Buffer capacity (bytes) above which a mostly empty buffer is shrunk after a line is read.
const SHRINK_ABOVE: usize = 1 << 20;

/// Feeds bytes in, takes events out.
#[derive(Debug, Default)]
pub struct Parser {
    /// Bytes of the unfinished line (everything before it was consumed).
    buffer: Vec<u8>,
    /// How far into `buffer` we know there is no line end.
    scanned: usize,
    data: Option<String>,
    event: Option<String>,
    ignored: Option<String>,
    not_utf8: bool,
}

impl Parser {
    /// Appends bytes and returns every event they complete.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Event> {
        self.buffer.extend_from_slice(bytes);
        let mut events = Vec::new();
        let mut start = 0;
        loop {
            let Some(offset) = self.buffer[self.scanned..].iter().position(|&byte| byte == b'\n' || byte == b'\r')
            else {
                self.scanned = self.buffer.len();
                break;
            };
            let end = self.scanned + offset;
            // A lone `\r` at the end of the buffer may be followed by `\n`: wait for more.
            if self.buffer[end] == b'\r' && end + 1 == self.buffer.len() {
                self.scanned = end;
                break;
            }
            let skip = if self.buffer[end] == b'\r' && self.buffer.get(end + 1) == Some(&b'\n') { 2 } else { 1 };
            let line = std::mem::take(&mut self.buffer);
            let text = String::from_utf8_lossy(&line[start..end]);
            self.not_utf8 |= matches!(text, std::borrow::Cow::Owned(_));
            self.line(&text, &mut events);
            self.buffer = line;
            start = end + skip;
            self.scanned = start;
        }
        if start > 0 {
            self.buffer.drain(..start);
            self.scanned -= start;
            // A huge line leaves a huge buffer behind: give it back once the line is read.
            if self.buffer.capacity() > SHRINK_ABOVE && self.buffer.len() < self.buffer.capacity() / 4 {
                self.buffer.shrink_to(self.buffer.len().max(64 * 1024));
            }
        }
        events
    }

    /// The data of an event not yet ended by a blank line (its `data:` lines so far and the
    /// unfinished line), when it has any.
    pub fn pending(&self) -> Option<String> {
        let rest = String::from_utf8_lossy(&self.buffer);
        match (&self.data, rest.is_empty()) {
            (None, true) => None,
            (None, false) => rest.starts_with("data").then(|| rest.into_owned()),
            (Some(data), _) => Some(format!("{data}\n{rest}")),
        }
    }

    /// Ends the stream: an event with data but no closing blank line is dispatched too, since
    /// servers that close right after the last `data:` line are common.
    pub fn finish(&mut self) -> Vec<Event> {
        let mut events = Vec::new();
        if self.buffer.last() == Some(&b'\r') {
            // The lone `\r` that waited for a possible `\n` ends its line.
            self.buffer.pop();
            let bytes = std::mem::take(&mut self.buffer);
            self.not_utf8 |= std::str::from_utf8(&bytes).is_err();
            self.line(&String::from_utf8_lossy(&bytes), &mut events);
        }
        if !self.buffer.is_empty() {
            let bytes = std::mem::take(&mut self.buffer);
            self.not_utf8 |= std::str::from_utf8(&bytes).is_err();
            self.scanned = 0;
            self.line(&String::from_utf8_lossy(&bytes), &mut events);
        }
        self.line("", &mut events);
        events
    }

    fn line(&mut self, line: &str, events: &mut Vec<Event>) {
        if line.is_empty() {
            if let Some(data) = self.data.take() {
                let not_utf8 = std::mem::take(&mut self.not_utf8);
                events.push(Event { event: self.event.take(), data, ignored: self.ignored.take(), not_utf8 });
            }
            self.event = None;
            self.ignored = None;
            self.not_utf8 = false;
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            "event" => self.event = Some(value.to_owned()),
            "id" | "retry" => {}
            _ => {
                self.ignored.get_or_insert_with(|| line.chars().take(120).collect());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(chunks: &[&str], expected: &[&str]) {
        let mut parser = Parser::default();
        let mut data = Vec::new();
        for chunk in chunks {
            data.extend(parser.feed(chunk.as_bytes()).into_iter().map(|event| event.data));
        }
        data.extend(parser.finish().into_iter().map(|event| event.data));
        assert_eq!(data, expected);
    }

    #[test]
    fn an_event_with_bytes_that_are_not_utf8_says_so_and_the_next_one_does_not() {
        let mut parser = Parser::default();
        let events = parser.feed(b"data: {\"a\":\"\xFF\"}\n\ndata: {\"b\":1}\n\n");
        let flags: Vec<(String, bool)> = events.into_iter().map(|event| (event.data, event.not_utf8)).collect();
        assert_eq!(flags, [("{\"a\":\"\u{fffd}\"}".to_owned(), true), ("{\"b\":1}".to_owned(), false)]);
    }

    #[test]
    fn events_split_across_chunks_are_joined() {
        check(&["data: {\"a\"", ":1}\n", "\n"], &["{\"a\":1}"]);
    }

    #[test]
    fn comments_and_crlf_are_handled() {
        check(&[": keep-alive\r\n\r\nevent: message\r\ndata: x\r\n\r\n"], &["x"]);
    }

    #[test]
    fn multi_line_data_is_joined_with_newlines() {
        check(&["data: a\ndata: b\n\n"], &["a\nb"]);
    }

    #[test]
    fn lines_without_a_field_are_ignored_and_the_first_is_kept() {
        let mut parser = Parser::default();
        let events = parser.feed(b"data: {\n  \"jsonrpc\": \"2.0\"\n}\n\ndata: x\nid: 1\n\n");
        assert_eq!(events[0].data, "{");
        assert_eq!(events[0].ignored.as_deref(), Some("  \"jsonrpc\": \"2.0\""));
        assert_eq!((events[1].data.as_str(), events[1].ignored.as_deref()), ("x", None));
    }

    #[test]
    fn an_event_not_yet_ended_is_pending() {
        let mut parser = Parser::default();
        assert!(parser.feed(b"event: message\ndata: {\"id\":1}\n").is_empty());
        assert_eq!(parser.pending().as_deref(), Some("{\"id\":1}\n"));
        parser.feed(b"\n");
        assert_eq!(parser.pending(), None);
    }

    #[test]
    fn a_trailing_event_without_blank_line_is_dispatched_at_the_end() {
        check(&["data: last"], &["last"]);
    }

    #[test]
    fn a_crlf_split_between_chunks_is_one_line_end() {
        check(&["data: a\r", "\ndata: b\r", "\n\r", "\n"], &["a\nb"]);
    }

    #[test]
    fn a_lone_cr_ends_a_line() {
        check(&["data: a\rdata: b\r\r", "data: c\n\n"], &["a\nb", "c"]);
    }

    #[test]
    fn any_chunking_gives_the_same_events() {
        let stream = ": ping\r\nevent: message\r\ndata: {\"id\":1}\r\n\r\ndata: x\ndata: y\n\nid: 3\rdata: z\r\r";
        let whole = {
            let mut parser = Parser::default();
            let mut events = parser.feed(stream.as_bytes());
            events.extend(parser.finish());
            events
        };
        assert_eq!(whole.len(), 3);
        for size in 1..stream.len() {
            let mut parser = Parser::default();
            let mut events = Vec::new();
            for chunk in stream.as_bytes().chunks(size) {
                events.extend(parser.feed(chunk));
            }
            events.extend(parser.finish());
            assert_eq!(events, whole, "chunks of {size} bytes");
        }
    }

    #[test]
    fn a_long_line_in_small_chunks_keeps_only_the_unfinished_line() {
        let payload = "x".repeat(200_000);
        let stream = format!("data: {payload}\n\ndata: tail");
        let mut parser = Parser::default();
        let mut events = Vec::new();
        for chunk in stream.as_bytes().chunks(1000) {
            events.extend(parser.feed(chunk));
            assert!(parser.scanned <= parser.buffer.len());
        }
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data.len(), payload.len());
        assert_eq!(parser.buffer, b"data: tail");
        assert_eq!(parser.finish()[0].data, "tail");
    }
}
