//! One client over either transport: assigns unique request ids, sends [`Outgoing`] messages
//! through a [`Transport`] (the concrete one, or a wrapper such as a fault layer), and hands every
//! [`Exchange`] to an optional observer (the passive checks) before returning it.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use serde_json::Value;

use super::exchange::{Exchange, Outgoing};
use super::http::HttpTransport;
use super::jsonrpc;
use super::stdio::StdioTransport;
use super::transport::Transport;

/// The concrete transport under a [`Client`] (probes that need HTTP- or stdio-specific access
/// match on it; sending goes through [`Transport`]).
#[derive(Debug, Clone)]
pub(crate) enum Connection {
    /// Streamable HTTP.
    Http(Arc<HttpTransport>),
    /// stdio.
    Stdio(Arc<StdioTransport>),
}

/// Called with every exchange, before the caller sees it.
pub(crate) type Observer = Arc<dyn Fn(&Outgoing, &Exchange) + Send + Sync>;

/// An MCP client over one connection.
pub(crate) struct Client {
    connection: Connection,
    transport: Arc<dyn Transport>,
    next_id: AtomicI64,
    observer: RwLock<Option<Observer>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Client").field("connection", &self.connection).finish()
    }
}

impl Client {
    /// A client over `connection`, sending through it directly.
    pub(crate) fn new(connection: Connection) -> Self {
        let transport: Arc<dyn Transport> = match &connection {
            Connection::Http(http) => http.clone(),
            Connection::Stdio(stdio) => stdio.clone(),
        };
        Self::wrapped(connection, transport)
    }

    /// A client that sends through `transport` (a wrapper of `connection`'s transport, e.g. a
    /// fault layer) while probes still see the concrete `connection`.
    pub(crate) fn wrapped(connection: Connection, transport: Arc<dyn Transport>) -> Self {
        Self { connection, transport, next_id: AtomicI64::new(1), observer: RwLock::new(None) }
    }

    /// Sets (or, with `None`, removes) the observer that sees every exchange. A layer that
    /// borrows the session sets its observer and removes it when it is done.
    pub(crate) fn set_observer(&self, observer: Option<Observer>) {
        *self.observer.write().unwrap_or_else(PoisonError::into_inner) = observer;
    }

    /// The transport.
    pub(crate) fn connection(&self) -> &Connection {
        &self.connection
    }

    /// `http` or `stdio`.
    pub(crate) fn transport_name(&self) -> &'static str {
        self.transport.name()
    }

    /// True over Streamable HTTP.
    pub(crate) fn is_http(&self) -> bool {
        matches!(self.connection, Connection::Http(_))
    }

    /// A fresh integer id, unique for this client.
    pub(crate) fn fresh_id(&self) -> Value {
        Value::from(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Sends a message. Requests get a fresh id unless the probe set one; notifications none.
    pub(crate) async fn send(&self, outgoing: Outgoing) -> Exchange {
        let id = if outgoing.notification || outgoing.method().is_none() {
            outgoing.id.clone()
        } else {
            Some(outgoing.id.clone().unwrap_or_else(|| self.fresh_id()))
        };
        let exchange = self.transport.send(&outgoing, id).await;
        let observer = self.observer.read().unwrap_or_else(PoisonError::into_inner).clone();
        if let Some(observer) = observer {
            observer(&outgoing, &exchange);
        }
        exchange
    }

    /// Sends a valid modern request (`_meta` filled in) for `method` with `params`.
    pub(crate) async fn request(&self, method: &str, params: Value) -> Exchange {
        self.send(Outgoing::request(jsonrpc::modern_request(method, params))).await
    }

    /// Ends the connection (for stdio: the whole process group).
    pub(crate) async fn shutdown(&self) {
        self.transport.shutdown().await;
    }
}
