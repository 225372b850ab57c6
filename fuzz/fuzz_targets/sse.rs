//! The SSE parser on any bytes: no panic, and the same events in the same order however the
//! bytes are cut into chunks; no event's data has more characters than the input has bytes.
//! The checks are `mcp_eval::fuzzing::check`'s, which the crate's tests replay on the corpus.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mcp_eval::fuzzing::check("sse", data));
