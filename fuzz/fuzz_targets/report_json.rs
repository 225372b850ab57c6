//! `report.json` read back (baselines, merges): no panic, and a report that reads renders to
//! text that reads back to the same rendering.
//! The checks are `mcp_eval::fuzzing::check`'s, which the crate's tests replay on the corpus.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mcp_eval::fuzzing::check("report_json", data));
