//! The entry points of the fuzz targets (`fuzz/`): the crate's readers of untrusted bytes,
//! which are crate-private, reached from outside the crate. Compiled only for the fuzz targets
//! (`cfg(fuzzing)`, which cargo-fuzz sets) and for this crate's own tests, which replay the
//! committed corpus (`fuzz/corpus/TARGET/*`) through the same functions; no release binary holds
//! it.
//!
//! Each function reads what the product reads, the way it reads it, and returns a plain summary
//! (counts, texts, `Debug` renderings) a target can compare; what must hold is asserted by the
//! targets in `fuzz/fuzz_targets/` (and [`check`], which both they and the replay test call).

use std::path::Path;

use serde_json::Value;

use crate::mcp::entries;
use crate::mcp::evidence::Redactor;
use crate::mcp::exchange::Exchange;
use crate::mcp::http::Assembler;

/// The targets, by name (`fuzz/fuzz_targets/NAME.rs`, `fuzz/corpus/NAME/`).
pub const TARGETS: [&str; 10] = [
    "sse",
    "http_response",
    "jsonrpc_message",
    "stdio_stream",
    "golden_set",
    "config_file",
    "report_json",
    "cassette",
    "fault_plan",
    "price_table",
];

/// A path in messages only: nothing is read there (a rubric file named relative to it is not
/// found; an absolute one is read, bounded like any rubric file).
fn nowhere(name: &str) -> std::path::PathBuf {
    Path::new("/nonexistent/mcp-eval-fuzz").join(name)
}

/// What an HTTP response came to: the final response, the other messages, the entries of a
/// list answer, and why there is no response.
#[derive(Debug, PartialEq)]
pub struct HttpOutcome {
    /// The final response, its list entries put back (a list answer keeps them apart).
    pub response: Option<Value>,
    /// How many list entries were kept apart.
    pub entries: Option<usize>,
    /// The messages before and after the final response.
    pub messages: Vec<Value>,
    /// Why there is no final response (`Debug` of the failure).
    pub failure: Option<String>,
}

/// Assembles the body of an HTTP response to request id 1 of `method` as [`Assembler`] does:
/// SSE when `sse`, else one JSON body; `chunks` are the reads as they came off the socket.
pub fn http_response(method: &str, sse: bool, chunks: &[&[u8]]) -> HttpOutcome {
    let content_type = if sse { "text/event-stream" } else { "application/json" };
    let mut exchange = Exchange {
        method: Some(method.to_owned()),
        headers: vec![("content-type".into(), content_type.into())],
        ..Exchange::default()
    };
    let id = Value::from(1);
    let mut assembler = Assembler::new(&exchange, Some(&id));
    for chunk in chunks {
        if !assembler.push(chunk) {
            break;
        }
    }
    assembler.finish(&mut exchange, &Redactor::new([]), true);
    let entries = exchange.entries.as_ref().map(entries::Entries::len);
    let mut response = exchange.response.take();
    if let (Some(message), Some(key), Some(listed)) =
        (response.as_mut(), entries::list_key(method), exchange.entries.take())
    {
        entries::restore(message, key, listed);
    }
    HttpOutcome { response, entries, messages: exchange.messages, failure: exchange.failure.map(|f| format!("{f:?}")) }
}

/// Reads one JSON-RPC message (an HTTP body, an SSE event's data, a stdio line) as the client
/// does for a response to `method`, its list entries put back; `None` when it is no JSON.
pub fn jsonrpc_message(text: &str, method: &str) -> Option<Value> {
    let key = entries::list_key(method);
    let (mut message, listed) = entries::read_message(text.to_owned(), key).ok()?;
    if let (Some(key), Some(listed)) = (key, listed) {
        entries::restore(&mut message, key, listed);
    }
    Some(message)
}

/// What a stdio server's stdout came to with requests 1, 2 and 3 waiting: the framing
/// violations (`Debug`) and each request's delivery (`Debug`), in id order. `idle_after[i]`:
/// stdout rested after chunk `i` (where a message with no newline after it is looked for).
pub fn stdio_stream(chunks: &[&[u8]], idle_after: &[bool]) -> (String, Vec<String>) {
    crate::mcp::stdio::read_for_fuzzing(chunks, idle_after)
}

/// Checks a golden set: the number of cases, or of problems.
pub fn golden_set(text: &str) -> Result<usize, usize> {
    crate::golden::load::parse(&nowhere("golden.yaml"), text)
        .map(|set| set.cases.len())
        .map_err(|problems| problems.len())
}

/// Parses a config file: whether a typed file came out, and how many problems.
pub fn config_file(text: &str) -> (bool, usize) {
    let (file, problems) = crate::settings::config_file::parse(&nowhere("mcp-eval.yaml"), text);
    (file.is_some(), problems.len())
}

/// A cassette file read and written back (see [`crate::providers::cassette::reread`]); `None`
/// when it is no cassette.
pub fn cassette(text: &str) -> Option<String> {
    crate::providers::cassette::reread(&nowhere("cassette.json"), text).ok()
}

/// Checks a fault plan (`--fault-plan`): the number of entries, or of problems.
pub fn fault_plan(text: &str) -> Result<usize, usize> {
    crate::golden::load::parse_fault_plan(&nowhere("faults.yaml"), text)
        .map(|plan| plan.len())
        .map_err(|problems| problems.len())
}

/// Checks a price table's bytes (`--prices`): the number of prices, or of problems.
pub fn price_table(bytes: &[u8]) -> Result<usize, usize> {
    crate::telemetry::prices::from_bytes(&nowhere("prices.yaml"), bytes)
        .map(|table| table.prices.len())
        .map_err(|problems| problems.len())
}

/// Runs target `name` on one input and asserts what must hold for it (panics otherwise): what
/// each target in `fuzz/fuzz_targets/` does, so that the corpus replays under `cargo test` too.
///
/// # Panics
/// On an unknown target name, and when the input breaks the target's invariant.
pub fn check(name: &str, data: &[u8]) {
    let text = || String::from_utf8_lossy(data);
    match name {
        "sse" => targets::sse(data),
        "http_response" => targets::http_response(data),
        "jsonrpc_message" => targets::jsonrpc_message(&text()),
        "stdio_stream" => targets::stdio_stream(data),
        "golden_set" => {
            let _ = golden_set(&text());
        }
        "config_file" => {
            let _ = config_file(&text());
        }
        "report_json" => targets::report_json(&text()),
        "cassette" => targets::cassette(&text()),
        "fault_plan" => {
            let _ = fault_plan(&text());
        }
        "price_table" => {
            let _ = price_table(data);
        }
        other => panic!("no fuzz target {other:?}; the targets are {TARGETS:?}"),
    }
}

/// The invariants, one function per target.
mod targets {
    use serde_json::Value;

    use super::{cassette as reread_cassette, http_response as assemble, jsonrpc_message as read};
    use crate::mcp::sse::Parser;

    /// The input cut where its first byte says: pieces of 1 to 7 bytes.
    fn pieces(data: &[u8]) -> Option<(&[u8], Vec<&[u8]>)> {
        let (&cut, stream) = data.split_first()?;
        Some((stream, stream.chunks(usize::from(cut % 7) + 1).collect()))
    }

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

    /// The same events however the bytes are cut; no event's data has more characters than
    /// the input has bytes.
    pub(super) fn sse(data: &[u8]) {
        let Some((stream, pieces)) = pieces(data) else { return };
        let whole = events(&[stream]);
        assert_eq!(events(&pieces), whole, "chunked differently");
        assert!(whole.iter().all(|(_, data)| data.chars().count() <= stream.len()));
    }

    /// The same outcome however the body is cut, for SSE and JSON bodies alike; a list answer
    /// whose entries were kept apart reads, put back, as a whole read of the same JSON.
    pub(super) fn http_response(data: &[u8]) {
        let Some((body, pieces)) = pieces(data) else { return };
        for sse in [false, true] {
            for method in ["tools/list", "tools/call"] {
                let whole = assemble(method, sse, &[body]);
                assert_eq!(assemble(method, sse, &pieces), whole, "{method}, sse {sse}: chunked differently");
                if !sse && whole.response.is_some() {
                    let plain: Value = serde_json::from_slice(body).expect("a JSON body read lean is JSON");
                    assert_eq!(whole.response.as_ref(), Some(&plain), "{method}: the lean read differs");
                }
            }
        }
    }

    /// A message read lean (list entries apart) is the message a whole read gives, and what
    /// we write of it reads back the same.
    pub(super) fn jsonrpc_message(text: &str) {
        let whole = serde_json::from_str::<Value>(text).ok();
        for method in ["tools/list", "prompts/list", "resources/list", "resources/templates/list", "tools/call"] {
            let lean = read(text, method);
            assert_eq!(lean, whole, "{method}: the lean read differs from a whole read");
            if let Some(message) = lean {
                let written = serde_json::to_string(&message).expect("a Value serializes");
                assert_eq!(read(&written, method).as_ref(), Some(&message), "{method}: no round trip");
            }
        }
    }

    /// Without rests, the same violations and deliveries however stdout is cut into reads.
    pub(super) fn stdio_stream(data: &[u8]) {
        let Some((stream, pieces)) = pieces(data) else { return };
        let whole = super::stdio_stream(&[stream], &[false]);
        let cut = super::stdio_stream(&pieces, &vec![false; pieces.len()]);
        assert_eq!(cut, whole, "chunked differently");
        // With a rest after every read: no panic, every request answered at most once.
        let rested = super::stdio_stream(&pieces, &vec![true; pieces.len()]);
        assert_eq!(rested.1.len(), 3);
    }

    /// A report that reads renders, and the rendering reads back to the same rendering.
    pub(super) fn report_json(text: &str) {
        let Ok(report) = crate::report::json::parse(text) else { return };
        let written = crate::report::json::render(&report);
        let again = crate::report::json::parse(&written).expect("a rendered report reads back");
        assert_eq!(crate::report::json::render(&again), written, "report.json does not round-trip");
    }

    /// A cassette that reads is written so that it reads back to the same text.
    pub(super) fn cassette(text: &str) {
        let Some(written) = reread_cassette(text) else { return };
        assert_eq!(reread_cassette(&written).as_deref(), Some(written.as_str()), "the cassette does not round-trip");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every committed corpus input of every target, through the target's checks.
    #[test]
    fn the_committed_fuzz_corpus_replays_without_a_failure() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
        let mut replayed = 0;
        for name in TARGETS {
            let dir = root.join(name);
            let mut inputs: Vec<_> = std::fs::read_dir(&dir)
                .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
                .map(|entry| entry.expect("a corpus entry").path())
                .collect();
            inputs.sort();
            assert!(!inputs.is_empty(), "target {name} has no seed in {}", dir.display());
            for input in inputs {
                let data = match std::fs::read(&input) {
                    Ok(data) => data,
                    // A fuzzer running beside the test replaces inputs with smaller ones.
                    Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(error) => panic!("{}: {error}", input.display()),
                };
                let outcome = std::panic::catch_unwind(|| check(name, &data));
                assert!(outcome.is_ok(), "target {name} fails on {}", input.display());
                replayed += 1;
            }
        }
        assert!(replayed >= TARGETS.len());
    }

    /// Inputs far past what the fuzzer's small inputs reach: nesting a hundred thousand deep
    /// (flow, block, compact) and a YAML alias bomb. Each reader gives problems, never a stack overflow or a blow-up.
    #[test]
    fn nesting_far_past_the_parsers_limits_and_alias_bombs_are_problems() {
        // The readers run on the main thread or a runtime worker, both with 8 MiB of stack; a
        // test thread has 2 MiB, less than 64 levels of YAML take in a debug build.
        let worker = std::thread::Builder::new().stack_size(8 * 1024 * 1024);
        worker.spawn(deep_inputs).expect("a thread").join().expect("no panic");
    }

    fn deep_inputs() {
        let deep_json = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let deep_yaml = format!("version: 1\ncases: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        let deep_block: String = (0..2_000).map(|depth| format!("{}- \n", "  ".repeat(depth))).collect();
        let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for level in 1..12 {
            let previous = format!("*a{}", level - 1);
            bomb.push_str(&format!("a{level}: &a{level} [{}]\n", vec![previous; 10].join(", ")));
        }
        let compact = format!("{}x\n", "- ".repeat(100_000));
        for text in [&deep_json, &deep_yaml, &deep_block, &compact, &bomb] {
            assert!(golden_set(text).is_err());
            let _ = config_file(text);
            assert!(fault_plan(text).is_err());
            assert!(price_table(text.as_bytes()).is_err());
            assert!(cassette(text).is_none());
            for name in ["report_json", "jsonrpc_message", "http_response", "stdio_stream", "sse"] {
                check(name, text.as_bytes());
            }
        }
    }

    #[test]
    fn every_target_has_a_fuzz_target_file_of_its_name() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
        let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("fuzz/Cargo.toml");
        for name in TARGETS {
            assert!(root.join("fuzz_targets").join(format!("{name}.rs")).is_file(), "fuzz/fuzz_targets/{name}.rs");
            assert!(manifest.contains(&format!("name = \"{name}\"")), "fuzz/Cargo.toml has no [[bin]] {name}");
        }
    }
}
