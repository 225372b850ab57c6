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

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::mcp::evidence::Redactor;
    use crate::mcp::http::HttpSettings;
    use crate::mcp::transport::BoxFuture;

    /// A wire-level layer: answers every request itself (never the server) and keeps the
    /// methods and ids it saw.
    #[derive(Debug, Default)]
    struct Answering {
        seen: Mutex<Vec<(Option<String>, Option<Value>)>>,
    }

    impl Transport for Answering {
        fn name(&self) -> &'static str {
            "answering"
        }

        fn send<'a>(&'a self, outgoing: &'a Outgoing, id: Option<Value>) -> BoxFuture<'a, Exchange> {
            self.seen.lock().unwrap().push((outgoing.method().map(str::to_owned), id.clone()));
            Box::pin(async move {
                Exchange {
                    response: Some(json!({"jsonrpc": "2.0", "id": id, "result": {"injected": true}})),
                    ..Exchange::default()
                }
            })
        }

        fn shutdown(&self) -> BoxFuture<'_, ()> {
            Box::pin(async {})
        }
    }

    #[tokio::test]
    async fn a_wrapped_transport_carries_every_request_and_its_exchange_is_what_the_caller_sees() {
        // Port 9 on loopback: nothing listens, so an answer can only come from the wrapper.
        let settings = HttpSettings {
            url: "http://127.0.0.1:9/mcp".into(),
            extra_headers: Vec::new(),
            timeout: Duration::from_secs(1),
            oauth: None,
        };
        let http = crate::mcp::http::HttpTransport::new(settings, Redactor::new(Vec::new())).expect("a client");
        let layer = Arc::new(Answering::default());
        let client = Client::wrapped(Connection::Http(http), layer.clone());
        let seen_by_observer = Arc::new(Mutex::new(0));
        let count = seen_by_observer.clone();
        client.set_observer(Some(Arc::new(move |_: &Outgoing, _: &Exchange| *count.lock().unwrap() += 1)));
        let first = client.request("tools/list", json!({})).await;
        let second = client.request("tools/call", json!({"name": "echo"})).await;
        assert_eq!(first.response.as_ref().map(|response| &response["result"]), Some(&json!({"injected": true})));
        assert_eq!(second.response.as_ref().map(|response| &response["id"]), Some(&json!(2)));
        let seen = layer.seen.lock().unwrap().clone();
        assert_eq!(seen, [(Some("tools/list".into()), Some(json!(1))), (Some("tools/call".into()), Some(json!(2)))]);
        assert_eq!(*seen_by_observer.lock().unwrap(), 2, "the observer sees the wrapper's exchanges");
        assert_eq!(
            (client.transport_name(), client.is_http()),
            ("answering", true),
            "probes still see the HTTP connection"
        );
    }
}
