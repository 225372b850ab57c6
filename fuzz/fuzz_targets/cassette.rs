//! The cassette reader: no panic, and a cassette that reads is written so that it reads back to
//! the same text.
//! The checks are `mcp_eval::fuzzing::check`'s, which the crate's tests replay on the corpus.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mcp_eval::fuzzing::check("cassette", data));
