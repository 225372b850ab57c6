//! The seam under the MCP [`super::client::Client`]: a [`Transport`] sends one [`Outgoing`] and
//! returns what came back as an [`Exchange`]. Streamable HTTP ([`super::http::HttpTransport`])
//! and stdio ([`super::stdio::StdioTransport`]) implement it; a layer that injects faults (layer
//! 2) wraps one transport in another and hands the wrapper to [`super::client::Client::wrapped`].
//!
//! A transport never fails with an `Err`: a server that misbehaves is data in the exchange
//! (`failure`, status, body excerpt), graded by the checks.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use super::exchange::{Exchange, Outgoing};

/// A boxed future a transport returns (object-safe `async fn`).
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One connection to the server under test.
pub(crate) trait Transport: Send + Sync + std::fmt::Debug {
    /// `http` or `stdio`.
    fn name(&self) -> &'static str;

    /// Sends `outgoing` with the JSON-RPC `id` the client chose (`None` for notifications and
    /// raw bodies) and waits, within the request's timeout, for the final response.
    fn send<'a>(&'a self, outgoing: &'a Outgoing, id: Option<Value>) -> BoxFuture<'a, Exchange>;

    /// Ends the connection (stdio: the server's whole process group). Idempotent.
    fn shutdown(&self) -> BoxFuture<'_, ()>;
}

impl Transport for super::http::HttpTransport {
    fn name(&self) -> &'static str {
        "http"
    }

    fn send<'a>(&'a self, outgoing: &'a Outgoing, id: Option<Value>) -> BoxFuture<'a, Exchange> {
        Box::pin(super::http::HttpTransport::send(self, outgoing, id))
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        // Stateless: nothing to end.
        Box::pin(async {})
    }
}

impl Transport for super::stdio::StdioTransport {
    fn name(&self) -> &'static str {
        "stdio"
    }

    fn send<'a>(&'a self, outgoing: &'a Outgoing, id: Option<Value>) -> BoxFuture<'a, Exchange> {
        Box::pin(super::stdio::StdioTransport::send(self, outgoing, id))
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(super::stdio::StdioTransport::shutdown(self))
    }
}
