//! Connecting to a server under test and deciding its era (spec-notes §17):
//! modern (2026-07-28, `server/discover`) or legacy (2025-11-25, the `initialize` handshake).
//!
//! HTTP: a modern `server/discover` first; a result, or a modern error (`-32020`/`-32021`/
//! `-32022`) in the body, means modern; anything else falls back to `initialize`. stdio: the
//! same probe; an error, silence or an exit means legacy, and a server that exited or stayed
//! silent is restarted once for the handshake. Only a server that never answers is unreachable.
//!
//! stdio servers that answer in another framing than newline-delimited JSON (spec-notes §7:
//! `Content-Length` headers, pretty-printed or concatenated messages) did answer: they are
//! neither legacy nor unreachable. The era is read from the misframed answer where it tells
//! (2026-07-28 otherwise), and the connection is marked [`Connected::framing_blocked`]: X-1
//! fails and the checks that need an answer are blocked. So is a server that answered neither
//! probe, is still running and wrote other output on stdout (stdout had bytes, but no message).
//!
//! stdio: the processes layer 0 needs besides the session ([`Connected::spares`]) start with
//! the session's, so that their start-up (seconds for an interpreter) overlaps it and era
//! detection; only for a command that may install the server on its first start (`npx`, …)
//! do they wait until the session answered, because concurrent first installs into one package
//! cache can break one another ([`installs_on_first_start`]).

use std::time::Duration;

use serde_json::{Value, json};

use std::sync::Arc;

use super::client::{Client, Connection};
use super::evidence::Redactor;
use super::exchange::{Exchange, Failure, Outgoing};
use super::http::{HttpSettings, HttpTransport};
use super::jsonrpc::{self, LEGACY_VERSION, PROTOCOL_VERSION};
use super::stdio::{StartLog, StdioTransport};

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
    /// stdio: the server answers, but its stdout is not newline-delimited JSON, so no probe can
    /// read an answer: X-1 grades the framing and the checks that need an answer are blocked.
    pub framing_blocked: bool,
    /// HTTP: `server/discover` got an answer that is recognisably JSON-RPC but cannot be read as
    /// one message in its framing (a batch array, single quotes, an SSE event never ended):
    /// M-11 grades it and the checks that need an answer are blocked. The text says what came.
    pub unreadable: Option<String>,
    /// stdio: every process of the server started so far and why (the session's, a restart
    /// after silence, the spares); layer 0 adds the ones its checks need. Empty over HTTP.
    pub starts: StartLog,
    /// stdio: fresh processes started with the session, to which nothing has been sent, for
    /// layer 0 to give to the checks that need a process of their own (see
    /// [`Connected::take_spares`]). Empty over HTTP.
    pub spares: std::sync::Mutex<Vec<Spare>>,
}

/// A process of the stdio server started before any check needed it (with the session's, so
/// that its start-up overlaps the session's), to which nothing has been sent yet. Its entry in
/// the [`StartLog`] says so until the process is given a use.
#[derive(Debug)]
pub(crate) struct Spare {
    /// The client over the process.
    pub client: Client,
    /// Its entry in the [`StartLog`].
    pub entry: usize,
    /// When it was started, in words, for its reason (`started with the session, …`).
    pub when: &'static str,
}

/// The reason a spare is recorded with until it is given a use.
const SPARE_REASON: &str = "a spare process for a check that needs a process of its own";

impl Connected {
    /// Neither `server/discover` nor `initialize` succeeded, but the server answered something
    /// like JSON-RPC: graded as a modern server (every modern check says what is wrong) rather
    /// than called unreachable.
    fn neither(client: Client, discover: Exchange, initialize: Exchange) -> Self {
        let evidence = format!(
            "neither `server/discover` ({}) nor `initialize` ({}) succeeded; graded as 2026-07-28",
            discover.describe(),
            initialize.describe()
        );
        Connected { initialize: Some(initialize), ..Connected::modern(client, evidence, discover) }
    }

    /// A legacy session: `initialize` succeeded.
    fn legacy(client: Client, evidence: String, discover: Exchange, initialize: Exchange) -> Self {
        Connected { era: Era::Legacy, initialize: Some(initialize), ..Connected::modern(client, evidence, discover) }
    }

    /// A modern session decided by its `server/discover` answer alone.
    fn modern(client: Client, evidence: String, discover: Exchange) -> Self {
        Connected {
            client: Arc::new(client),
            era: Era::Modern,
            evidence,
            discover,
            initialize: None,
            framing_blocked: false,
            unreadable: None,
            starts: StartLog::default(),
            spares: std::sync::Mutex::default(),
        }
    }

    /// The spare processes, for layer 0 (see [`Connected::spares`]); later calls get none.
    pub(crate) fn take_spares(&self) -> Vec<Spare> {
        std::mem::take(&mut *crate::mcp::sync::lock(&self.spares))
    }

    /// Ends the session (stdio: the server's whole process group) and any spare no layer took.
    pub(crate) async fn shutdown(&self) {
        let unused = self.take_spares();
        let spares = futures_util::future::join_all(unused.iter().map(|spare| {
            self.starts.explain(spare.entry, unused_reason(spare.when));
            spare.client.shutdown()
        }));
        tokio::join!(self.client.shutdown(), spares);
    }
}

/// The reason of a spare that no check needed.
pub(crate) fn unused_reason(when: &str) -> String {
    format!("{SPARE_REASON}, {when}; no check needed it: ended unused")
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

/// Connects and decides the era. stdio: `spares` more processes are started for the checks
/// that need a process of their own (layer 0 asks for two;
/// nothing else needs any) — with the session's process, or, for a command that may install
/// the server on its first start, as soon as the session answered (see the module docs). A
/// server that cannot be reached takes its spares down with it. Over HTTP `spares` is ignored.
pub(crate) async fn connect(target: &Target, redactor: Redactor, spares: usize) -> Result<Connected, Unreachable> {
    match target {
        Target::Http(settings) => connect_http(settings, redactor).await,
        Target::Stdio { command, env, timeout } => {
            let starts = StartLog::default();
            let spawn_spares = |when: &'static str| -> Vec<Spare> {
                (0..spares)
                    .filter_map(|_| StdioTransport::spawn(command, env, *timeout, redactor.clone()).ok())
                    .map(|transport| Spare {
                        client: Client::new(Connection::Stdio(transport)),
                        entry: starts.record(format!("{SPARE_REASON}, {when}")),
                        when,
                    })
                    .collect()
            };
            let early = spares > 0 && !installs_on_first_start(command);
            let started = std::sync::Mutex::new(Vec::new());
            // Right after the session's process, before its first request.
            let with_session = || {
                if early {
                    *crate::mcp::sync::lock(&started) = spawn_spares(SPARES_WITH_SESSION);
                }
            };
            let connected = connect_stdio(command, env, *timeout, redactor.clone(), &starts, &with_session).await;
            let mut started = std::mem::take(&mut *crate::mcp::sync::lock(&started));
            match connected {
                Ok(connected) => {
                    if !early {
                        started = spawn_spares(SPARES_AFTER_ANSWER);
                    }
                    Ok(Connected { starts, spares: std::sync::Mutex::new(started), ..connected })
                }
                Err(unreachable) => {
                    futures_util::future::join_all(started.iter().map(|spare| spare.client.shutdown())).await;
                    Err(unreachable)
                }
            }
        }
    }
}

/// When spares started with the session were started, in words.
const SPARES_WITH_SESSION: &str = "started with the session, so that its start-up overlaps the session's";
/// When spares of a command that may install the server on its first start were started.
const SPARES_AFTER_ANSWER: &str = "started when the session had answered: the command may install the server on its first start, and concurrent first installs into one package cache can break one another";

/// True when `command` may install the server on its first start: it runs a package runner
/// that fetches into a shared cache without a lock against concurrent runs (`npx`, `npm exec`,
/// `pnpm dlx`, `yarn dlx`, `bunx`, `pipx run`). Such a command's spare processes start only
/// after the session's process answered, when the package is in the cache. Erring on the side
/// of `true` only costs time.
pub(crate) fn installs_on_first_start(command: &str) -> bool {
    let words: Vec<&str> = command
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '`' | '"' | '\''))
        .filter(|word| !word.is_empty())
        .map(|word| word.rsplit('/').next().unwrap_or(word))
        .collect();
    words.iter().enumerate().any(|(index, word)| {
        let next = words.get(index + 1).copied().unwrap_or("");
        matches!(*word, "npx" | "pnpx" | "bunx")
            || (*word == "npm" && matches!(next, "exec" | "x"))
            || (matches!(*word, "pnpm" | "yarn") && next == "dlx")
            || (*word == "pipx" && next == "run")
    })
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
        || (crate::mcp::exchange::payload_shaped(&exchange.body_excerpt)
            && (exchange.body_excerpt.contains("\"jsonrpc\"") || exchange.body_excerpt.contains("'jsonrpc'")))
}

/// Why the server refused the first request for its `Host` (or `Origin`) header, when it did: a
/// 403 or 421 whose body says so (the TypeScript SDK answers 403 "Invalid Host: …", the Python
/// SDK 421 "Invalid Host header"). A server that validates `Host` against an allow-list answers
/// every request so, whatever else it would do.
fn host_refused(exchange: &Exchange, settings: &HttpSettings) -> Option<String> {
    let status = exchange.status.filter(|status| matches!(status, 403 | 421))?;
    let body = exchange.body_excerpt.to_ascii_lowercase();
    let origin = body.contains("invalid origin") || body.contains("origin not allowed");
    let names_host = ["invalid host", "host not allowed", "host header"].iter().any(|words| body.contains(words));
    if !origin && !names_host {
        return None;
    }
    let given =
        settings.extra_headers.iter().find(|(name, _)| name.eq_ignore_ascii_case("host")).map(|(_, v)| v.clone());
    let host = given.unwrap_or_else(|| match url::Url::parse(&settings.url) {
        Ok(url) => match (url.host_str(), url.port()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_owned(),
            _ => settings.url.clone(),
        },
        Err(_) => settings.url.clone(),
    });
    let said = crate::text::clip(exchange.body_excerpt.trim(), 200);
    Some(if origin {
        format!(
            "the server at `{}` refused our request for its `Origin` header (HTTP {status}: {said}): it validates Origin against an allow-list; allow the origin, or run it without Origin validation for the evaluation",
            settings.url
        )
    } else {
        format!(
            "the server at `{}` refused our Host header `{host}` (HTTP {status}: {said}): it validates Host against an allow-list (DNS-rebinding protection). Allow `{host}` in the server's allowed hosts, or reach it by a name it allows (e.g. `localhost` instead of an IP address, or a --header 'Host: …' it accepts); nothing could be evaluated",
            settings.url
        )
    })
}

/// Whether an unreachable run's detail is the refusal of our Host or Origin header worded above
/// (the server answered, but evaluated nothing): how the summary titles it.
pub(crate) fn is_header_refusal(detail: &str) -> bool {
    detail.contains("refused our Host header") || detail.contains("refused our request for its `Origin` header")
}

fn discover_succeeded(exchange: &Exchange) -> bool {
    exchange
        .result()
        .is_some_and(|result| result.get("supportedVersions").is_some() || result.get("capabilities").is_some())
}

async fn connect_http(settings: &HttpSettings, redactor: Redactor) -> Result<Connected, Unreachable> {
    let transport = HttpTransport::new(settings.clone(), redactor).map_err(|reason| Unreachable {
        reason: reason.to_string(),
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
        let gave_credentials = settings.oauth.is_some()
            || settings.extra_headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("authorization"));
        let reason = if let Some(source) = &settings.oauth {
            format!(
                "the server at `{}` refused the token the client-credentials sign-in obtained for resource {} (HTTP 401): check that the authorization server issues tokens the server accepts (its audience, issuer and scopes)",
                settings.url,
                source.resource()
            )
        } else if gave_credentials {
            format!(
                "the server at `{}` refused the credentials given (HTTP 401): check the token passed with --header 'Authorization: …' (input `server-headers`)",
                settings.url
            )
        } else {
            format!(
                "the server at `{}` requires credentials (HTTP 401 without them): the authorization rows were graded without any; pass --header 'Authorization: Bearer …' (input `server-headers`), or sign in as a CI client with --oauth-client-id and its secret (in the variable --oauth-client-secret-env names; Action inputs `oauth-client-id` and `oauth-client-secret`), to run the rest",
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
    if let Some(reason) = host_refused(&discover, settings) {
        // One root cause, whichever way the server words it: nothing can be evaluated, and
        // grading its refusals as twenty MUST failures (or as no MCP endpoint) would mislead.
        return Err(Unreachable {
            reason,
            evidence: vec![
                ("request".into(), discover.request_excerpt.clone()),
                ("response".into(), discover.body_excerpt.clone()),
            ],
            stderr_tail: None,
            needs_credentials: false,
        });
    }
    if let Some(why) = discover.unreadable() {
        // JSON-RPC came back, in a form no client can read: one finding (M-11), not twenty.
        let evidence = format!(
            "`server/discover` got an answer that is recognisably JSON-RPC but cannot be read as one message: {why}; graded as 2026-07-28"
        );
        return Ok(Connected { unreadable: Some(why), ..Connected::modern(client, evidence, discover) });
    }
    if discover_succeeded(&discover) {
        let evidence = match discover.status {
            Some(status) => format!("`server/discover` answered with a result (HTTP {status}): modern"),
            None => "`server/discover` answered with a result: modern".to_owned(),
        };
        return Ok(Connected::modern(client, evidence, discover));
    }
    if modern_error(&discover) {
        let evidence = format!(
            "`server/discover` answered with a modern error ({}): modern, although discover itself failed",
            discover.describe()
        );
        return Ok(Connected::modern(client, evidence, discover));
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
        return Ok(Connected::legacy(client, evidence, discover, initialize));
    }
    // Nothing came back that resembles JSON-RPC (HTML or plain-text pages, empty bodies): this URL
    // is not an MCP endpoint, and grading it as a broken MCP server would only mislead.
    if !mcp_shaped(&discover) && !mcp_shaped(&initialize) {
        let path_hint = match url::Url::parse(&settings.url) {
            Ok(url) if url.path() == "/" || url.path().is_empty() => format!(
                " The URL has no path: MCP servers usually serve at `/mcp` (e.g. {}://host:port/mcp).",
                url.scheme()
            ),
            Ok(url) if url.path().trim_end_matches('/').ends_with("/mcp") => {
                " Is this the server's address? Nothing on it speaks MCP.".to_owned()
            }
            _ => " Is the path right? `/mcp` is the usual one.".to_owned(),
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
                ("initialize request".into(), initialize.request_excerpt.clone()),
                ("initialize response".into(), initialize.body_excerpt.clone()),
            ],
            stderr_tail: None,
            needs_credentials: false,
        });
    }
    // Something like JSON-RPC came back, but neither way works.
    Ok(Connected::neither(client, discover, initialize))
}

async fn connect_stdio(
    command: &str,
    env: &[(String, String)],
    timeout: Duration,
    redactor: Redactor,
    starts: &StartLog,
    with_session: &dyn Fn(),
) -> Result<Connected, Unreachable> {
    let spawn = |redactor: Redactor, reason: &str| {
        let spawned = StdioTransport::spawn(command, env, timeout, redactor);
        if spawned.is_ok() {
            starts.record(reason);
        }
        spawned.map_err(|error| Unreachable {
            reason: format!("cannot start `{command}`: {error}"),
            evidence: Vec::new(),
            stderr_tail: None,
            needs_credentials: false,
        })
    };
    let transport = spawn(redactor.clone(), "the session: the era probe, then every layer's requests")?;
    with_session();
    let client = Client::new(Connection::Stdio(transport.clone()));
    // The first request also waits for the server to start: an interpreter that imports for
    // seconds before it reads stdin is slow, not silent. Only the whole per-request timeout
    // without an answer counts as silence (legacy); calling a slow modern server legacy would
    // grade it against the wrong revision.
    let discover = client.send(Outgoing::request(jsonrpc::modern_request("server/discover", json!({})))).await;
    if discover_succeeded(&discover) {
        let evidence =
            format!("`server/discover` answered with a result over stdio{}: modern", start_up_note(&transport));
        return Ok(Connected::modern(client, evidence, discover));
    }
    if modern_error(&discover) {
        let evidence = format!(
            "`server/discover` answered with a modern error ({}){}: modern",
            discover.describe(),
            start_up_note(&transport)
        );
        return Ok(Connected::modern(client, evidence, discover));
    }
    if discover.response.is_none() && transport.exit_reason().is_none() && transport.unread_stdin() > 0 {
        // Not silence: the server never read the request (a restart would wait as long again).
        let stderr_tail = transport.stderr_tail_settled().await;
        client.shutdown().await;
        return Err(Unreachable {
            reason: format!(
                "the stdio server `{command}` never read its stdin: `server/discover` was still unread in the pipe {} s after the process started ({} s allowed for start-up, then the {} s timeout). Is the command a stdio MCP server? One that listens on HTTP is evaluated with `--server-url`",
                transport.started_ago().as_secs(),
                (timeout * crate::mcp::stdio::START_UP_TIMEOUTS).as_secs_f64(),
                timeout.as_secs_f64()
            ),
            evidence: vec![("request".into(), discover.request_excerpt.clone())],
            stderr_tail: (!stderr_tail.is_empty()).then_some(stderr_tail),
            needs_credentials: false,
        });
    }
    if misframed_answer(&discover).is_some() {
        return Ok(misframed(client, discover).await);
    }
    // Legacy: an error, silence or an exit. A silent or exited server is restarted once.
    let restart = discover.response.is_none();
    let first = transport.clone();
    let (client, transport) = if restart {
        client.shutdown().await;
        let transport = spawn(
            redactor,
            "a restart for the legacy handshake: the first process was silent on `server/discover` or exited",
        )?;
        (Client::new(Connection::Stdio(transport.clone())), transport)
    } else {
        (client, transport)
    };
    let initialize = legacy_handshake(&client).await;
    if initialize.result().is_some() {
        send_initialized(&client).await;
        let evidence = format!(
            "`server/discover` got {}{}{}; `initialize` succeeded: legacy",
            discover.describe(),
            start_up_note(&first),
            if restart { " (server restarted for the handshake)" } else { "" }
        );
        return Ok(Connected::legacy(client, evidence, discover, initialize));
    }
    if let Some(answer) = misframed_answer(&initialize) {
        // Silent on `server/discover`, but `initialize` answered in another framing.
        let era = if answer.get("result").is_some() { Era::Legacy } else { Era::Modern };
        let evidence = format!(
            "`server/discover` got {}; `initialize` was {}, with {}: {}; see X-1",
            discover.describe(),
            initialize.describe().replace("; the answer is not used", ""),
            as_read(answer).describe(),
            if era == Era::Legacy { "legacy" } else { "graded as 2026-07-28" }
        );
        return Ok(Connected {
            era,
            initialize: Some(initialize),
            framing_blocked: true,
            ..Connected::modern(client, evidence, discover)
        });
    }
    if discover.response.is_none() && initialize.response.is_none() {
        let stdout = transport.violations();
        if stdout.other_output() && transport.exit_reason().is_none() {
            // stdout had bytes, but no message: the server is running and writes something
            // else than newline-delimited JSON (X-1), not nothing.
            let evidence = format!(
                "neither `server/discover` ({}) nor `initialize` ({}) got an answer, but the running server wrote output on stdout that is not newline-delimited JSON: graded as 2026-07-28; see X-1",
                discover.describe(),
                initialize.describe()
            );
            return Ok(Connected {
                initialize: Some(initialize),
                framing_blocked: true,
                ..Connected::modern(client, evidence, discover)
            });
        }
        let stderr_tail = transport.stderr_tail_settled().await;
        client.shutdown().await;
        let mut evidence = vec![("request".into(), initialize.request_excerpt.clone())];
        let mut reason = format!(
            "the stdio server `{command}` never answered: `server/discover`: {}; `initialize`: {}",
            discover.describe(),
            initialize.describe()
        );
        // What an exiting server wrote on stdout is often its reason (printed to the wrong
        // stream): keep it.
        let stdout = if stdout.other_output() { stdout } else { first.violations() };
        if stdout.other_output() {
            reason.push_str("; it wrote output on stdout that is not JSON-RPC (see the stdout evidence)");
            evidence.push((
                "stdout".into(),
                stdout.non_json.iter().chain(&stdout.partial).cloned().collect::<Vec<_>>().join("\n"),
            ));
        }
        return Err(Unreachable {
            reason,
            evidence,
            stderr_tail: (!stderr_tail.is_empty()).then_some(stderr_tail),
            needs_credentials: false,
        });
    }
    Ok(Connected::neither(client, discover, initialize))
}

/// Says how long the server took to begin reading its first request, when that was waited for
/// (the timeout counted from then: see `mcp::stdio`), so that a slow start shows in the era's
/// evidence.
fn start_up_note(transport: &StdioTransport) -> String {
    match transport.start_up() {
        Some(after) if after >= START_UP_WORTH_SAYING => format!(
            " (the server began reading stdin {:.1} s after it was started; its timeout counted from then)",
            after.as_secs_f64()
        ),
        _ => String::new(),
    }
}

/// A start-up shorter than this goes unsaid.
const START_UP_WORTH_SAYING: Duration = Duration::from_secs(1);

/// The answer of a stdio exchange that came in another framing than newline-delimited JSON.
fn misframed_answer(exchange: &Exchange) -> Option<&Value> {
    match &exchange.failure {
        Some(Failure::Misframed { answer, .. }) => Some(answer),
        _ => None,
    }
}

/// The answer of a misframed exchange as if it had been read (to decide the era, and to
/// describe it), never used as the exchange's response.
fn as_read(answer: &Value) -> Exchange {
    Exchange { response: Some(answer.clone()), ..Exchange::default() }
}

/// A stdio server that answered `server/discover` in another framing than newline-delimited
/// JSON: it did answer, so it is neither unreachable nor legacy for lack of an answer. The era
/// comes from what the answer says when read anyway: a discover result or a modern error is
/// modern; another answer (a legacy server's `-32601`) is legacy when `initialize` gets a result
/// (in the same framing); anything else is graded as 2026-07-28.
async fn misframed(client: Client, discover: Exchange) -> Connected {
    let framing = match &discover.failure {
        Some(Failure::Misframed { framing, .. }) => framing.clone(),
        _ => String::new(),
    };
    let read = misframed_answer(&discover).map(as_read).unwrap_or_default();
    let client = Arc::new(client);
    let blocked = |era, evidence, initialize| Connected {
        client: client.clone(),
        era,
        evidence,
        discover: discover.clone(),
        initialize,
        framing_blocked: true,
        unreadable: None,
        starts: StartLog::default(),
        spares: std::sync::Mutex::default(),
    };
    if discover_succeeded(&read) || modern_error(&read) {
        let evidence = format!(
            "`server/discover` was answered, but not as newline-delimited JSON ({framing}); read anyway, the answer ({}) is a modern one: 2026-07-28; see X-1",
            read.describe()
        );
        return blocked(Era::Modern, evidence, None);
    }
    let initialize = legacy_handshake(&client).await;
    let legacy = misframed_answer(&initialize).is_some_and(|answer| answer.get("result").is_some());
    let evidence = format!(
        "`server/discover` was answered, but not as newline-delimited JSON ({framing}), with {}; `initialize` got {}: {}; see X-1",
        read.describe(),
        misframed_answer(&initialize).map(as_read).map_or_else(|| initialize.describe(), |read| read.describe()),
        if legacy { "legacy" } else { "graded as 2026-07-28" }
    );
    blocked(if legacy { Era::Legacy } else { Era::Modern }, evidence, Some(initialize))
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

#[cfg(test)]
mod tests {
    use super::*;

    async fn connect_to(command: &str) -> Result<Connected, Unreachable> {
        let target = Target::Stdio { command: command.into(), env: Vec::new(), timeout: Duration::from_millis(400) };
        connect(&target, Redactor::default(), 0).await
    }

    #[test]
    fn package_runners_that_install_on_first_start_are_recognised_anywhere_in_the_command() {
        for command in [
            "npx -y @modelcontextprotocol/server-everything stdio",
            "/usr/local/bin/npx server",
            "FOO=1 npm exec -- server",
            "cd app && pnpm dlx server",
            "yarn dlx server",
            "bunx server",
            "pipx run mcp-server-time",
            "sh -c 'npx server'",
        ] {
            assert!(installs_on_first_start(command), "{command}");
        }
        for command in ["node dist/index.js", "uvx mcp-server-time", "python -m server", "my-npx-wrapper", "npm start"]
        {
            assert!(!installs_on_first_start(command), "{command}");
        }
    }

    #[tokio::test]
    async fn a_legacy_server_answering_in_content_length_framing_is_legacy_and_blocked() {
        let command = r#"read line; printf 'Content-Length: 78\r\n\r\n{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}'; read line; printf 'Content-Length: 88\r\n\r\n{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-11-25","capabilities":{}}}'; cat >/dev/null"#;
        let connected = connect_to(command).await.expect("answered: not unreachable");
        assert_eq!((connected.era, connected.framing_blocked), (Era::Legacy, true), "{}", connected.evidence);
        assert!(connected.evidence.contains("Content-Length"), "{}", connected.evidence);
        connected.shutdown().await;
    }

    #[tokio::test]
    async fn a_modern_answer_in_another_framing_is_modern_and_blocked() {
        let command = r#"read line; printf '{\n  "jsonrpc": "2.0",\n  "id": 1,\n  "result": {"supportedVersions": ["2026-07-28"], "capabilities": {}}\n}\n'; cat >/dev/null"#;
        let connected = connect_to(command).await.expect("answered: not unreachable");
        assert_eq!((connected.era, connected.framing_blocked), (Era::Modern, true), "{}", connected.evidence);
        assert!(connected.initialize.is_none(), "no legacy fallback");
        connected.shutdown().await;
    }

    #[tokio::test]
    async fn a_running_server_that_writes_only_other_output_on_stdout_is_blocked_not_unreachable() {
        let connected = connect_to("echo 'listening on stdio'; cat >/dev/null").await.expect("not unreachable");
        assert_eq!((connected.era, connected.framing_blocked), (Era::Modern, true), "{}", connected.evidence);
        connected.shutdown().await;
    }

    #[tokio::test]
    async fn a_server_that_exits_after_writing_to_stdout_is_unreachable_and_its_output_kept() {
        let unreachable = connect_to("echo 'Error: API_KEY is not set'; exit 1").await.expect_err("it exited");
        assert!(unreachable.reason.contains("stdout"), "{}", unreachable.reason);
        let stdout = unreachable.evidence.iter().find(|(label, _)| label == "stdout").map(|(_, text)| text.as_str());
        assert_eq!(stdout, Some("Error: API_KEY is not set"));
    }
}
