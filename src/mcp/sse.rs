//! An incremental parser for `text/event-stream` bodies (the SSE framing of Streamable HTTP):
//! `data:` lines joined by newlines, events dispatched on a blank line, `:` comment lines
//! (keep-alives) ignored, `\r\n`, `\r` and `\n` line ends accepted.

/// One dispatched SSE event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The `event:` field, when present.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// Feeds bytes in, takes events out.
#[derive(Debug, Default)]
pub struct Parser {
    buffer: Vec<u8>,
    data: Option<String>,
    event: Option<String>,
}

impl Parser {
    /// Appends bytes and returns every event they complete.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Event> {
        self.buffer.extend_from_slice(bytes);
        let mut events = Vec::new();
        while let Some(end) = self.buffer.iter().position(|&byte| byte == b'\n' || byte == b'\r') {
            // A lone `\r` at the end of the buffer may be followed by `\n`: wait for more.
            if self.buffer[end] == b'\r' && end + 1 == self.buffer.len() {
                break;
            }
            let line: Vec<u8> = self.buffer[..end].to_vec();
            let skip = if self.buffer[end] == b'\r' && self.buffer.get(end + 1) == Some(&b'\n') { 2 } else { 1 };
            self.buffer.drain(..end + skip);
            self.line(&String::from_utf8_lossy(&line), &mut events);
        }
        events
    }

    /// Ends the stream: an event with data but no closing blank line is dispatched too, since
    /// servers that close right after the last `data:` line are common.
    pub fn finish(&mut self) -> Vec<Event> {
        let mut events = Vec::new();
        if !self.buffer.is_empty() {
            let rest = String::from_utf8_lossy(&std::mem::take(&mut self.buffer)).into_owned();
            self.line(&rest, &mut events);
        }
        self.line("", &mut events);
        events
    }

    fn line(&mut self, line: &str, events: &mut Vec<Event>) {
        if line.is_empty() {
            if let Some(data) = self.data.take() {
                events.push(Event { event: self.event.take(), data });
            }
            self.event = None;
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
            _ => {}
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
    fn a_trailing_event_without_blank_line_is_dispatched_at_the_end() {
        check(&["data: last"], &["last"]);
    }
}
