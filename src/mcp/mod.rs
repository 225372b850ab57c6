//! Our own MCP client, with full control of the wire: the core every layer is built on.
//!
//! It speaks MCP 2026-07-28 (stateless: per-request `_meta`, `Mcp-Method`/`Mcp-Name` headers)
//! over Streamable HTTP ([`http`], with a raw HTTP/1.1 writer in [`raw`] for bytes an HTTP
//! library will not send; both over `http://` and `https://`, trusting the roots of [`tls`])
//! and stdio ([`stdio`]), and the 2025-11-25 `initialize` handshake
//! for legacy servers ([`era`]). Nothing here smooths a server's errors over: every request
//! yields an [`exchange::Exchange`] that records what was sent and what came back, and a
//! misbehaving server is data for the checks, never an `Err`.
//!
//! [`transport`] is the seam under the client (HTTP and stdio implement it; a fault layer wraps
//! it); [`tools`] is a typed view of a server's tools for the layers that hand them to a model.
//!
//! This module depends on nothing else in the crate: it knows nothing of checks, reports,
//! LLMs or GitHub.

pub(crate) mod client;
pub(crate) mod entries;
pub(crate) mod era;
pub(crate) mod evidence;
pub(crate) mod exchange;
pub(crate) mod http;
pub(crate) mod jsonrpc;
pub(crate) mod limits;
pub(crate) mod oauth;
pub(crate) mod raw;
pub mod sse;
pub(crate) mod stdio;
pub(crate) mod sync;
pub(crate) mod tls;
pub(crate) mod tools;
pub(crate) mod transport;
