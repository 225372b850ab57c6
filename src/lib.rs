//! mcp-eval: evaluates MCP servers. This library holds everything the `mcp-eval` binary does;
//! the binary (`src/main.rs`) only parses arguments and maps outcomes to exit codes.

pub mod conformance;
pub mod report;
