//! Layer-0 conformance checks for MCP revision 2026-07-28: pure functions that grade what a
//! server sent (tool definitions, wire shapes) without doing any IO themselves.

pub mod schema;
pub mod shapes;
