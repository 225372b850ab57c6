//! mcp-eval: evaluates MCP servers. This library holds everything the `mcp-eval` binary does;
//! the binary (`src/main.rs`) only parses arguments and maps outcomes to exit codes.
//!
//! Code map: [`mcp`] is our MCP client (the wire), [`conformance`] is layer 0 (requirements,
//! probes, grading), [`report`] holds the run report and its renderers, [`evaluate`] runs one
//! evaluation end to end, [`demo`] is the embedded demo/fixture server, [`settings`] reads user
//! input, [`exit_code`] documents the exit statuses.

pub mod conformance;
pub mod demo;
pub mod evaluate;
pub mod exit_code;
pub mod mcp;
pub mod report;
pub mod settings;
