//! Connecting to a server under test and deciding its era (spec-notes §17):
//! modern (2026-07-28, `server/discover`) or legacy (2025-11-25, the `initialize` handshake).
//!
//! HTTP: a modern `server/discover` first; a result, or a modern error (`-32020`/`-32021`/
//! `-32022`) in the body, means modern; anything else falls back to `initialize`. stdio: the
//! same probe; an error, silence or an exit means legacy, and a server that exited or stayed
//! silent is restarted once for the handshake. Only a server that never answers is unreachable.

use std::time::Duration;

use serde_json::{Value, json};

use std::sync::Arc;

use super::client::{Client, Connection};
use super::evidence::Redactor;
use super::exchange::{Exchange, Failure, Outgoing};
use super::http::{HttpSettings, HttpTransport};
use super::jsonrpc::{self, LEGACY_VERSION, PROTOCOL_VERSION};
use super::stdio::StdioTransport;

/// The protocol era of a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// 2026-07-28: stateless, `server/discover`.
    Modern,
    /// 2025-11-25: the `initialize` handshake.
    Legacy,
}

impl Era {
    /// The revision string of the era.
    pub(crate) fn revision(self) -> &'static str {
        match self {
            Era::Modern => PROTOCOL_VERSION,
            Era::Legacy => LEGACY_VERSION,
        }
    }
}

/// Where the server under test is.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    /// A Streamable HTTP endpoint.
    Http(HttpSettings),
    /// A command started through `sh -c` with a scrubbed environment, with the per-request
    /// timeout. Every process started for it (the first, a restart, second clients) gets the
    /// same environment.
    Stdio {
        /// The command line.
        command: String,
        /// The variables the server gets beyond [`super::stdio::INHERITED_VARS`] (name, value;
        /// the values may be secrets).
        env: Vec<(String, String)>,
        /// Per-request timeout.
        timeout: Duration,
    },
}

/// A connected server and what era detection found.
#[derive(Debug)]
pub(crate) struct Connected {
    /// The client, ready for checks (for legacy servers: after the handshake). The session's
    /// owner lends it to each layer and ends it with [`Connected::shutdown`].
    pub client: Arc<Client>,
    /// The era.
    pub era: Era,
    /// How the era was decided, in words, for the report.
    pub evidence: String,
    /// The `server/discover` exchange of the probe (modern servers: the discover result).
    pub discover: Exchange,
    /// The `initialize` exchange, when the fallback ran.
    pub initialize: Option<Exchange>,
}

impl Connected {
    /// Ends the session (stdio: the server's whole process group).
    pub(crate) async fn shutdown(&self) {
        self.client.shutdown().await;
    }
}

/// Why a server could not be evaluated at all.
#[derive(Debug, Clone)]
pub(crate) struct Unreachable {
    /// What happened, for the user.
    pub reason: String,
    /// Evidence excerpts (request/response).
    pub evidence: Vec<(String, String)>,
    /// stderr of a stdio server, when any.
    pub stderr_tail: Option<String>,
    /// True when the server answered, but refused the request without credentials (HTTP 401).
    pub needs_credentials: bool,
}

/// Connects and decides the era.
pub(crate) async fn connect(target: &Target, redactor: Redactor) -> Result<Connected, Unreachable> {
    match target {
        Target::Http(settings) => connect_http(settings, redactor).await,
        Target::Stdio { command, env, timeout } => connect_stdio(command, env, *timeout, redactor).await,
    }
}

/// True when an error response is one only a modern server sends (spec-notes §17).
fn modern_error(exchange: &Exchange) -> bool {
    match exchange.error_code() {
        Some(jsonrpc::HEADER_MISMATCH | jsonrpc::MISSING_CLIENT_CAPABILITY) => true,
        Some(jsonrpc::UNSUPPORTED_PROTOCOL_VERSION) => exchange
            .error()
            .and_then(|error| error.pointer("/data/supported"))
            .and_then(Value::as_array)
            .is_some_and(|supported| !supported.is_empty()),
        _ => false,
    }
}

/// True when an answer resembles JSON-RPC, even a broken one: a JSON body with a `jsonrpc`
/// member (also inside a batch), a JSON or SSE content type on a 2xx, or `jsonrpc` in the body.
/// An HTML or plain-text page, or an empty body, is not.
fn mcp_shaped(exchange: &Exchange) -> bool {
    let has_jsonrpc = |value: &Value| match value {
        Value::Object(object) => object.contains_key("jsonrpc"),
        Value::Array(items) => items.iter().any(|item| item.get("jsonrpc").is_some()),
        _ => false,
    };
    let content_type = exchange.content_type().unwrap_or_default();
    let success = exchange.status.is_some_and(|status| (200..300).contains(&status));
    exchange.response.as_ref().is_some_and(has_jsonrpc)
        || !exchange.messages.is_empty()
        || (success && matches!(content_type.as_str(), "application/json" | "text/event-stream"))
        || exchange.body_excerpt.contains("\"jsonrpc\"")
        || exchange.body_excerpt.contains("'jsonrpc'")
}

fn discover_succeeded(exchange: &Exchange) -> bool {
    exchange
        .result()
        .is_some_and(|result| result.get("supportedVersions").is_some() || result.get("capabilities").is_some())
}

async fn connect_http(settings: &HttpSettings, redactor: Redactor) -> Result<Connected, Unreachable> {
    let transport = HttpTransport::new(settings.clone(), redactor).map_err(|reason| Unreachable {
        reason,
        evidence: Vec::new(),
        stderr_tail: None,
        needs_credentials: false,
    })?;
    let client = Client::new(Connection::Http(transport.clone()));
    let discover = client.request("server/discover", json!({})).await;
    if let Some(failure) = &discover.failure {
        if matches!(failure, Failure::Connect(_) | Failure::Timeout) && discover.status.is_none() {
            return Err(Unreachable {
                reason: format!("the server at `{}` did not answer: {failure}", settings.url),
                evidence: vec![("request".into(), discover.request_excerpt.clone())],
                stderr_tail: None,
                needs_credentials: false,
            });
        }
    }
    if matches!(discover.status, Some(401)) {
        let gave_credentials =
            settings.extra_headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("authorization"));
        let reason = if gave_credentials {
            format!(
                "the server at `{}` refused the credentials given (HTTP 401): check the token passed with --header 'Authorization: …' (input `server-headers`)",
                settings.url
            )
        } else {
            format!(
                "the server at `{}` requires credentials (HTTP 401 without them): the authorization rows were graded without any; pass --header 'Authorization: Bearer …' (input `server-headers`) to run the rest",
                settings.url
            )
        };
        return Err(Unreachable {
            reason,
            evidence: vec![
                ("request".into(), discover.request_excerpt.clone()),
                ("response".into(), discover.body_excerpt.clone()),
            ],
            stderr_tail: None,
            needs_credentials: !gave_credentials,
        });
    }
    if discover_succeeded(&discover) {
        let evidence = match discover.status {
            Some(status) => format!("`server/discover` answered with a result (HTTP {status}): modern"),
            None => "`server/discover` answered with a result: modern".to_owned(),
        };
        return Ok(Connected { client: Arc::new(client), era: Era::Modern, evidence, discover, initialize: None });
    }
    if modern_error(&discover) {
        let evidence = format!(
            "`server/discover` answered with a modern error ({}): modern, although discover itself failed",
            discover.describe()
        );
        return Ok(Connected { client: Arc::new(client), era: Era::Modern, evidence, discover, initialize: None });
    }
    // Not modern evidence: try the legacy handshake on the same endpoint.
    let initialize = legacy_handshake(&client).await;
    if initialize.result().is_some() {
        if let Some(session) = initialize.header("mcp-session-id") {
            {
                let mut slot = crate::mcp::sync::write(&transport.session_id);
                *slot = Some(session.to_owned());
            }
        }
        {
            let mut version = crate::mcp::sync::write(&transport.protocol_version);
            *version = negotiated_version(&initialize);
        }
        send_initialized(&client).await;
        let evidence = format!(
            "`server/discover` got {} (not a modern answer); `initialize` succeeded: legacy",
            discover.describe()
        );
        return Ok(Connected {
            client: Arc::new(client),
            era: Era::Legacy,
            evidence,
            discover,
            initialize: Some(initialize),
        });
    }
    // Nothing came back that resembles JSON-RPC (HTML or plain-text pages, empty bodies): this URL
    // is not an MCP endpoint, and grading it as a broken MCP server would only mislead.
    if !mcp_shaped(&discover) && !mcp_shaped(&initialize) {
        let path_hint = match url::Url::parse(&settings.url) {
            Ok(url) if url.path() == "/" || url.path().is_empty() => {
                " The URL has no path: MCP servers usually serve at `/mcp` (e.g. http://host:port/mcp)."
            }
            _ => " Is the path right? `/mcp` is the usual one.",
        };
        return Err(Unreachable {
            reason: format!(
                "no MCP endpoint at `{}`: `server/discover` got {} and `initialize` got {}, nothing that resembles JSON-RPC.{path_hint}",
                settings.url,
                discover.describe(),
                initialize.describe()
            ),
            evidence: vec![
                ("request".into(), discover.request_excerpt.clone()),
                ("response".into(), discover.body_excerpt.clone()),
            ],
            stderr_tail: None,
            needs_credentials: false,
        });
    }
    // The server answers HTTP, and something like JSON-RPC, but neither way works: grade it as a
    // modern server (every modern check will say what is wrong) rather than calling it unreachable.
    let evidence = format!(
        "neither `server/discover` ({}) nor `initialize` ({}) succeeded; graded as 2026-07-28",
        discover.describe(),
        initialize.describe()
    );
    Ok(Connected { client: Arc::new(client), era: Era::Modern, evidence, discover, initialize: Some(initialize) })
}

async fn connect_stdio(
    command: &str,
    env: &[(String, String)],
    timeout: Duration,
    redactor: Redactor,
) -> Result<Connected, Unreachable> {
    let spawn = |redactor: Redactor| {
        StdioTransport::spawn(command, env, timeout, redactor).map_err(|error| Unreachable {
            reason: format!("cannot start `{command}`: {error}"),
            evidence: Vec::new(),
            stderr_tail: None,
            needs_credentials: false,
        })
    };
    let transport = spawn(redactor.clone())?;
    let client = Client::new(Connection::Stdio(transport.clone()));
    // The first request also waits for the server to start: an interpreter that imports for
    // seconds before it reads stdin is slow, not silent. Only the whole per-request timeout
    // without an answer counts as silence (legacy); calling a slow modern server legacy would
    // grade it against the wrong revision.
    let discover = client.send(Outgoing::request(jsonrpc::modern_request("server/discover", json!({})))).await;
    if discover_succeeded(&discover) {
        let evidence = "`server/discover` answered with a result over stdio: modern".to_owned();
        return Ok(Connected { client: Arc::new(client), era: Era::Modern, evidence, discover, initialize: None });
    }
    if modern_error(&discover) {
        let evidence = format!("`server/discover` answered with a modern error ({}): modern", discover.describe());
        return Ok(Connected { client: Arc::new(client), era: Era::Modern, evidence, discover, initialize: None });
    }
    // Legacy: an error, silence or an exit. A silent or exited server is restarted once.
    let restart = discover.response.is_none();
    let (client, transport) = if restart {
        client.shutdown().await;
        let transport = spawn(redactor)?;
        (Client::new(Connection::Stdio(transport.clone())), transport)
    } else {
        (client, transport)
    };
    let initialize = legacy_handshake(&client).await;
    if initialize.result().is_some() {
        send_initialized(&client).await;
        let evidence = format!(
            "`server/discover` got {}{}; `initialize` succeeded: legacy",
            discover.describe(),
            if restart { " (server restarted for the handshake)" } else { "" }
        );
        return Ok(Connected {
            client: Arc::new(client),
            era: Era::Legacy,
            evidence,
            discover,
            initialize: Some(initialize),
        });
    }
    if discover.response.is_none() && initialize.response.is_none() {
        let stderr_tail = transport.stderr_tail_settled().await;
        client.shutdown().await;
        return Err(Unreachable {
            reason: format!(
                "the stdio server `{command}` never answered: `server/discover`: {}; `initialize`: {}",
                discover.describe(),
                initialize.describe()
            ),
            evidence: vec![("request".into(), initialize.request_excerpt.clone())],
            stderr_tail: (!stderr_tail.is_empty()).then_some(stderr_tail),
            needs_credentials: false,
        });
    }
    let evidence = format!(
        "neither `server/discover` ({}) nor `initialize` ({}) succeeded; graded as 2026-07-28",
        discover.describe(),
        initialize.describe()
    );
    Ok(Connected { client: Arc::new(client), era: Era::Modern, evidence, discover, initialize: Some(initialize) })
}

/// The 2025-11-25 `initialize` request (no `_meta`, no `MCP-Protocol-Version` header).
pub(crate) fn initialize_request() -> Value {
    jsonrpc::legacy_request(
        "initialize",
        json!({"protocolVersion": LEGACY_VERSION, "capabilities": {}, "clientInfo": jsonrpc::client_info()}),
    )
}

async fn legacy_handshake(client: &Client) -> Exchange {
    client.send(Outgoing::request(initialize_request()).remove("MCP-Protocol-Version").remove("Mcp-Method")).await
}

async fn send_initialized(client: &Client) {
    let notification = jsonrpc::legacy_request("notifications/initialized", json!({}));
    client.send(Outgoing::notification(notification).remove("Mcp-Method")).await;
}

fn negotiated_version(initialize: &Exchange) -> String {
    initialize
        .result()
        .and_then(|result| result.get("protocolVersion"))
        .and_then(Value::as_str)
        .unwrap_or(LEGACY_VERSION)
        .to_owned()
}

/// A legacy request (no `_meta`) for use after the handshake.
pub(crate) fn legacy(method: &str, params: Value) -> Outgoing {
    Outgoing::request(jsonrpc::legacy_request(method, params)).remove("Mcp-Method").remove("Mcp-Name")
}
