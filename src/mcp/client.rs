//! One client over either transport: assigns unique request ids, sends [`Outgoing`] messages,
//! and hands every [`Exchange`] to an optional observer (the passive checks) before returning it.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use serde_json::Value;

use super::exchange::{Exchange, Outgoing};
use super::http::HttpTransport;
use super::jsonrpc;
use super::stdio::StdioTransport;

/// The transport under a [`Client`].
#[derive(Debug, Clone)]
pub enum Connection {
    /// Streamable HTTP.
    Http(Arc<HttpTransport>),
    /// stdio.
    Stdio(Arc<StdioTransport>),
}

/// Called with every exchange, before the caller sees it.
pub type Observer = Arc<dyn Fn(&Outgoing, &Exchange) + Send + Sync>;

/// An MCP client over one connection.
pub struct Client {
    connection: Connection,
    next_id: AtomicI64,
    observer: Option<Observer>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Client").field("connection", &self.connection).finish()
    }
}

impl Client {
    /// A client over `connection`.
    pub fn new(connection: Connection) -> Self {
        Self { connection, next_id: AtomicI64::new(1), observer: None }
    }

    /// Sets the observer that sees every exchange.
    pub fn set_observer(&mut self, observer: Observer) {
        self.observer = Some(observer);
    }

    /// The transport.
    pub fn connection(&self) -> &Connection {
        &self.connection
    }

    /// `http` or `stdio`.
    pub fn transport_name(&self) -> &'static str {
        match self.connection {
            Connection::Http(_) => "http",
            Connection::Stdio(_) => "stdio",
        }
    }

    /// True over Streamable HTTP.
    pub fn is_http(&self) -> bool {
        matches!(self.connection, Connection::Http(_))
    }

    /// A fresh integer id, unique for this client.
    pub fn fresh_id(&self) -> Value {
        Value::from(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Sends a message. Requests get a fresh id unless the probe set one; notifications none.
    pub async fn send(&self, outgoing: Outgoing) -> Exchange {
        let id = if outgoing.notification || outgoing.method().is_none() {
            outgoing.id.clone()
        } else {
            Some(outgoing.id.clone().unwrap_or_else(|| self.fresh_id()))
        };
        let exchange = match &self.connection {
            Connection::Http(http) => http.send(&outgoing, id).await,
            Connection::Stdio(stdio) => stdio.send(&outgoing, id).await,
        };
        if let Some(observer) = &self.observer {
            observer(&outgoing, &exchange);
        }
        exchange
    }

    /// Sends a valid modern request (`_meta` filled in) for `method` with `params`.
    pub async fn request(&self, method: &str, params: Value) -> Exchange {
        self.send(Outgoing::request(jsonrpc::modern_request(method, params))).await
    }

    /// Ends the connection (for stdio: the whole process group).
    pub async fn shutdown(&self) {
        if let Connection::Stdio(stdio) = &self.connection {
            stdio.shutdown().await;
        }
    }
}
