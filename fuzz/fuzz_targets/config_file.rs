//! The config-file loader on any text: problems with positions, never a panic.
//! The checks are `mcp_eval::fuzzing::check`'s, which the crate's tests replay on the corpus.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mcp_eval::fuzzing::check("config_file", data));
