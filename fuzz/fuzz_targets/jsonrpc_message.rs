//! The JSON-RPC message reader (an HTTP body, an SSE event's data, a stdio line): the lean read
//! of every list method equals a whole read, and what we write of a message reads back the same.
//! The checks are `mcp_eval::fuzzing::check`'s, which the crate's tests replay on the corpus.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mcp_eval::fuzzing::check("jsonrpc_message", data));
