//! The SSE parser (`mcp_eval::sse::Parser`) on any bytes: it never panics, and the events it
//! gives do not depend on how the bytes are cut into chunks — the whole input fed at once gives
//! the same events, in the same order, as the input fed in the pieces its first byte chooses.
//! No event's data has more characters than the input has bytes (invalid UTF-8 becomes one
//! U+FFFD per byte at most).

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_eval::sse::Parser;

/// Every event of `chunks` fed one after the other, then the stream's end.
fn events(chunks: &[&[u8]]) -> Vec<(Option<String>, String)> {
    let mut parser = Parser::default();
    let mut out = Vec::new();
    for chunk in chunks {
        out.extend(parser.feed(chunk).into_iter().map(|event| (event.event, event.data)));
    }
    out.extend(parser.finish().into_iter().map(|event| (event.event, event.data)));
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&cut, stream)) = data.split_first() else { return };
    let whole = events(&[stream]);
    let size = usize::from(cut % 7) + 1;
    let pieces: Vec<&[u8]> = stream.chunks(size).collect();
    assert_eq!(events(&pieces), whole, "chunks of {size} bytes");
    assert!(whole.iter().all(|(_, data)| data.chars().count() <= stream.len()));
});
