//! The HTTP response assembler (JSON body or SSE, a list method or a call): no panic, the same
//! outcome however the body is cut into reads, and a list answer read lean (entries kept as
//! text) equals a whole read of the same JSON.
//! The checks are `mcp_eval::fuzzing::check`'s, which the crate's tests replay on the corpus.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mcp_eval::fuzzing::check("http_response", data));
