//! stdio framing detection over a server's stdout (newline-delimited JSON, Content-Length
//! headers, pretty-printed, concatenated, BOM, stray lines): no panic, and without rests the same
//! violations and deliveries however stdout is cut into reads.
//! The checks are `mcp_eval::fuzzing::check`'s, which the crate's tests replay on the corpus.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mcp_eval::fuzzing::check("stdio_stream", data));
