//! The `mcp-eval` command line.
fn main() {}
