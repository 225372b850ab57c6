//! What every probe shares: the client, the era, the discover result, the full list walks of
//! tools, prompts, resources and templates, and the tools that may be called (read-only or
//! listed as safe by the user).

use std::sync::Arc;

use serde_json::{Value, json};

use crate::mcp::client::Client;
use crate::mcp::client::Connection;
use crate::mcp::entries::Entries;
use crate::mcp::era::{self, Era, Spare, Target};
use crate::mcp::evidence::Redactor;
use crate::mcp::exchange::{Exchange, Outgoing};
use crate::mcp::jsonrpc;
use crate::mcp::stdio::StartLog;

use super::OpenError;

/// A tool the user allows us to call, with the arguments to call it with.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SafeTool {
    /// The tool name.
    pub name: String,
    /// The arguments object.
    pub arguments: Value,
}

/// The result of walking every page of one list method.
#[derive(Debug, Clone, Default)]
pub(crate) struct ListWalk {
    /// The list method (`tools/list`, …).
    pub method: &'static str,
    /// Every item of every page, in order, kept as text and parsed when read (empty when the
    /// walk was made without keeping items).
    pub items: Entries,
    /// The `name` (or `uri`) of every item, in order.
    pub names: Vec<String>,
    /// A hash of every item's full definition, in order (to compare walks without keeping them).
    pub digests: Vec<u64>,
    /// How many pages were read.
    pub pages: usize,
    /// `cacheScope` of each page (C-4).
    pub scopes: Vec<Option<Value>>,
    /// Pagination problems (P-2): non-string cursors, repeated cursors, page errors.
    pub problems: Vec<String>,
    /// The exchange of the first page, for evidence.
    pub first: Option<Exchange>,
    /// The first failing exchange, when a page failed.
    pub failed: Option<Exchange>,
}

impl ListWalk {
    /// True when every page was a result.
    pub(crate) fn ok(&self) -> bool {
        self.failed.is_none() && self.first.is_some()
    }
}

/// The most pages one walk reads (guards against servers that never stop paginating).
const MAX_PAGES: usize = 1000;

/// Everything probes share.
pub(crate) struct Context {
    /// The client in the server's era (legacy servers: after the handshake).
    pub client: Arc<Client>,
    /// A client that sends 2026-07-28 requests (the same as `client` for modern servers).
    pub modern: Arc<Client>,
    /// The era.
    pub era: Era,
    /// The discover exchange (modern) or the initialize exchange (legacy).
    pub discover: Exchange,
    /// The server's capabilities.
    pub capabilities: Value,
    /// Versions the server supports.
    pub supported_versions: Vec<String>,
    /// tools/list, prompts/list, resources/list, resources/templates/list walks.
    pub tools: ListWalk,
    /// prompts/list walk.
    pub prompts: ListWalk,
    /// resources/list walk.
    pub resources: ListWalk,
    /// resources/templates/list walk.
    pub templates: ListWalk,
    /// Tools we may call, with arguments.
    pub safe_tools: Vec<SafeTool>,
    /// One permit: second walks of the tool list (P-1, P-3) take turns, so a huge list is
    /// parsed at most once at a time.
    pub big_lists: tokio::sync::Semaphore,
    /// Where the server is (to open a second connection or process).
    pub target: Target,
    /// The second connections (stdio: processes) that checks need.
    pub seconds: Seconds,
    /// Tools that answered every valid call with `isError: true` when no tool call succeeded
    /// (the invalid-arguments probe finds them): `server.tool_errors` of the report.
    pub tool_errors: std::sync::Mutex<Vec<crate::report::model::ToolErrorNotice>>,
    /// Set when the server stopped answering after a probe (every request after it was refused
    /// or closed, or the process exited): the probe, and its row's failure. The checks that got
    /// no answer afterwards are blocked by it, not graded on their own rule.
    pub stopped: std::sync::Mutex<Option<super::survival::Stopped>>,
    /// How many probes of a malformed or unusual request were sent ([`Context::probe`]): their
    /// order, to name the one the server died on.
    pub probes_sent: std::sync::atomic::AtomicU64,
}

impl Context {
    /// The per-request timeout the user chose.
    pub(crate) fn client_timeout(&self) -> std::time::Duration {
        match &self.target {
            Target::Http(settings) => settings.timeout,
            Target::Stdio { timeout, .. } => *timeout,
        }
    }

    /// True over Streamable HTTP.
    pub(crate) fn is_http(&self) -> bool {
        self.client.is_http()
    }

    /// True when the server advertised this capability (`tools`, `prompts`, …).
    pub(crate) fn has_capability(&self, name: &str) -> bool {
        self.capabilities.get(name).is_some()
    }

    /// A request in the server's era: modern `_meta` for modern servers, none for legacy ones.
    pub(crate) fn request(&self, method: &str, params: Value) -> Outgoing {
        match self.era {
            Era::Modern => Outgoing::request(jsonrpc::modern_request(method, params)),
            Era::Legacy => era::legacy(method, params),
        }
    }

    /// The first tool listed with `x-mcp-header` declarations, when any.
    pub(crate) fn header_tool(&self) -> Option<Value> {
        self.tools.items.iter().find(|tool| {
            tool.pointer("/inputSchema/properties")
                .and_then(Value::as_object)
                .is_some_and(|properties| properties.values().any(|property| property.get("x-mcp-header").is_some()))
        })
    }
}

/// Walks every page of a list method with `client`, building requests with `request`. With
/// `keep_items` false only names and digests are kept, so a second walk of a huge list costs
/// little memory.
pub(crate) async fn walk(
    client: &Client,
    method: &'static str,
    key: &str,
    request: &dyn Fn(Value) -> Outgoing,
    keep_items: bool,
) -> ListWalk {
    let mut walk = ListWalk { method, ..ListWalk::default() };
    let mut cursor: Option<String> = None;
    let mut seen_cursors = std::collections::HashSet::new();
    while walk.pages < MAX_PAGES {
        let params = match &cursor {
            Some(cursor) => json!({"cursor": cursor}),
            None => json!({}),
        };
        let mut exchange = client.send(request(params)).await;
        walk.pages += 1;
        if exchange.result().is_none() {
            walk.problems.push(format!("page {} of `{method}` failed: {}", walk.pages, exchange.describe()));
            walk.failed = Some(exchange.clone());
            if walk.first.is_none() {
                walk.first = Some(exchange);
            }
            return walk;
        }
        // Move the page out of the exchange: a huge list is never held twice.
        let result = exchange.response.take().and_then(|mut response| response.get_mut("result").map(Value::take));
        let result = result.expect("checked above: the response is a result");
        // The client keeps a list method's entries apart whenever they are an array.
        let entries = exchange.entries.take();
        exchange.messages.clear();
        match entries {
            Some(entries) => {
                for item in entries.iter() {
                    let name = item.get("name").or_else(|| item.get("uri")).and_then(Value::as_str).unwrap_or("");
                    walk.names.push(name.to_owned());
                    walk.digests.push(digest(&item));
                }
                if keep_items {
                    walk.items.append(entries);
                }
            }
            None => walk.problems.push(format!("page {} of `{method}` has no `{key}` array", walk.pages)),
        }
        walk.scopes.push(result.get("cacheScope").cloned());
        let next = result.get("nextCursor").cloned();
        if walk.first.is_none() {
            // Kept for evidence (its excerpts); the parsed page itself is in `items`.
            walk.first = Some(exchange);
        }
        match next {
            None | Some(Value::Null) => {
                if matches!(next, Some(Value::Null)) {
                    walk.problems.push(format!(
                        "page {} of `{method}`: `nextCursor` is null (absent ends the list; null is not a string)",
                        walk.pages
                    ));
                }
                return walk;
            }
            Some(Value::String(next)) => {
                if !seen_cursors.insert(next.clone()) {
                    walk.problems
                        .push(format!("`{method}` returned the cursor {next:?} twice: the walk would never end"));
                    return walk;
                }
                cursor = Some(next);
            }
            Some(other) => {
                walk.problems.push(format!("page {} of `{method}`: `nextCursor` is {other}, not a string", walk.pages));
                return walk;
            }
        }
    }
    walk.problems.push(format!("`{method}` still had more pages after {MAX_PAGES}"));
    walk
}

/// A digest of an entry as parsed (its compact JSON hashed as it is written, never held as
/// text), compared between walks of the same run.
fn digest(item: &Value) -> u64 {
    struct Hashing(std::collections::hash_map::DefaultHasher);
    impl std::io::Write for Hashing {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            std::hash::Hasher::write(&mut self.0, bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut hashing = Hashing(std::collections::hash_map::DefaultHasher::new());
    // Writing into a hasher cannot fail.
    let _ = serde_json::to_writer(&mut hashing, item);
    std::hash::Hasher::finish(&hashing.0)
}

/// How many processes of its own layer 0 needs on a stdio server besides the session, started
/// as spares with it ([`era::connect`]): a modern server's [`Purpose::Shared`] and
/// [`Purpose::Handshake`], or a legacy server's modern client and [`Purpose::Shared`].
pub(crate) const SPARES: usize = 2;

/// What a second connection serves. Over HTTP every call opens a new connection (they are cheap
/// and families run at once); over stdio each is a process started once, as a spare with the
/// session's ([`era::connect`]), so that its start-up (seconds for an interpreter) overlaps the
/// session's and the other probes, and every start is recorded in the [`StartLog`] with its
/// reason. A spare is fresh: nothing was sent to it before its check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// P-3's walks, then X-5's `server/discover` and modern `initialize`, then X-4 closes its
    /// stdin: one process, used in that order (stdio families run one after another). Users
    /// of it must not shut it down; [`Seconds::shutdown`] does.
    Shared,
    /// B-3's legacy `initialize`, on a process of its own: a dual-era server may lock a process
    /// to 2025-11-25 after it, and X-5's modern `initialize` must not meet that state. The one
    /// user takes it and gives it back to [`Seconds::done`], which ends it in the background
    /// (a server can take a while to exit; [`Seconds::shutdown`] waits for it).
    Handshake,
}

/// The second connections of a layer-0 run (see [`Purpose`]).
pub(crate) struct Seconds {
    target: Target,
    redactor: Redactor,
    starts: StartLog,
    spares: std::sync::Mutex<std::collections::VecDeque<Spare>>,
    shared: std::sync::Mutex<Option<Result<Arc<Client>, OpenError>>>,
    handshake: std::sync::Mutex<Option<Result<Arc<Client>, OpenError>>>,
    ending: std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

/// A second connection to a server whose session answers were read: a stdio process learns so,
/// so that an answer no client can match (or a line that is not JSON where one should be) is
/// told to the request it leaves waiting, from its first request on ([`StdioTransport::answers_known`]).
///
/// [`StdioTransport::answers_known`]: crate::mcp::stdio::StdioTransport::answers_known
fn known(client: Client) -> Client {
    if let Connection::Stdio(stdio) = client.connection() {
        stdio.answers_known();
    }
    client
}

impl Seconds {
    /// Second connections to `target`; stdio starts are recorded in `starts`, and the `spares`
    /// started with the session are used, in order, before any new process is started.
    pub(crate) fn new(target: Target, redactor: Redactor, starts: StartLog, spares: Vec<Spare>) -> Self {
        Seconds {
            target,
            redactor,
            starts,
            spares: std::sync::Mutex::new(spares.into()),
            shared: std::sync::Mutex::new(None),
            handshake: std::sync::Mutex::new(None),
            ending: std::sync::Mutex::default(),
        }
    }

    /// stdio: gives the processes of the purposes given (each at most once) now, a spare or a
    /// new one, so that they start up while other probes run. Over HTTP nothing happens.
    pub(crate) fn start_early(&self, purposes: &[Purpose]) {
        if !self.is_stdio() {
            return;
        }
        for purpose in purposes {
            let mut slot = crate::mcp::sync::lock(self.slot(*purpose));
            if slot.is_none() {
                *slot = Some(self.open(reason(*purpose)).map(Arc::new));
            }
        }
    }

    /// The connection for `purpose`: over HTTP a new one; over stdio the process started for
    /// it (started now if [`Seconds::start_early`] did not). `Handshake` hands its process over
    /// (a second call starts another); `Shared` lends the same one every time. The error says
    /// why no connection could be opened.
    pub(crate) fn get(&self, purpose: Purpose) -> Result<Arc<Client>, OpenError> {
        if !self.is_stdio() {
            return self.open("").map(Arc::new);
        }
        let mut slot = crate::mcp::sync::lock(self.slot(purpose));
        let opened = slot.take().unwrap_or_else(|| self.open(reason(purpose)).map(Arc::new));
        if purpose == Purpose::Shared {
            *slot = Some(opened.clone());
        }
        opened
    }

    /// Ends a connection `get` gave: HTTP connections end here; the `Handshake` stdio process
    /// ends in the background (its exit is waited for by [`Seconds::shutdown`], not by the
    /// check); the `Shared` stdio process stays for the next check.
    pub(crate) async fn done(&self, purpose: Purpose, client: &Arc<Client>) {
        if !self.is_stdio() {
            client.shutdown().await;
        } else if purpose == Purpose::Handshake {
            let client = client.clone();
            let ending = tokio::spawn(async move { client.shutdown().await });
            crate::mcp::sync::lock(&self.ending).push(ending);
        }
    }

    /// A fresh connection to the server: stdio: a spare still running (its start is recorded
    /// again with `reason`), else a new process (recorded with `reason`).
    pub(crate) fn open(&self, reason: &str) -> Result<Client, OpenError> {
        while let Some(spare) = self.take_spare() {
            let running = match spare.client.connection() {
                Connection::Stdio(stdio) => stdio.exit_reason().is_none(),
                Connection::Http(_) => true,
            };
            if running {
                self.starts.explain(spare.entry, format!("{reason}; {}", spare.when));
                return Ok(known(spare.client));
            }
            // A spare that exited on its own would prove nothing (X-4 waits for an exit): a new one.
            self.starts
                .explain(spare.entry, format!("a spare process, {}; it exited before a check needed it", spare.when));
            let ending = tokio::spawn(async move { spare.client.shutdown().await });
            crate::mcp::sync::lock(&self.ending).push(ending);
        }
        let opened = crate::conformance::open_second(&self.target, &self.redactor);
        if opened.is_ok() && self.is_stdio() {
            self.starts.record(reason);
        }
        opened.map(known)
    }

    fn take_spare(&self) -> Option<Spare> {
        crate::mcp::sync::lock(&self.spares).pop_front()
    }

    /// Ends every process still held, and the spares no check needed (their reasons say so);
    /// waits for the ones ending in the background.
    pub(crate) async fn shutdown(&self) {
        let mut ending: Vec<tokio::task::JoinHandle<()>> = std::mem::take(&mut *crate::mcp::sync::lock(&self.ending));
        for slot in [&self.shared, &self.handshake] {
            let held = crate::mcp::sync::lock(slot).take();
            if let Some(Ok(client)) = held {
                ending.push(tokio::spawn(async move { client.shutdown().await }));
            }
        }
        while let Some(spare) = self.take_spare() {
            self.starts.explain(spare.entry, era::unused_reason(spare.when));
            ending.push(tokio::spawn(async move { spare.client.shutdown().await }));
        }
        for end in ending {
            let _ = end.await;
        }
    }

    fn slot(&self, purpose: Purpose) -> &std::sync::Mutex<Option<Result<Arc<Client>, OpenError>>> {
        match purpose {
            Purpose::Shared => &self.shared,
            Purpose::Handshake => &self.handshake,
        }
    }

    fn is_stdio(&self) -> bool {
        matches!(self.target, Target::Stdio { .. })
    }
}

/// The reason recorded for the process of `purpose`.
fn reason(purpose: Purpose) -> &'static str {
    match purpose {
        Purpose::Shared => {
            "a second process: P-3 lists the tools there, then X-5 sends `initialize` to it, then X-4 closes its stdin"
        }
        Purpose::Handshake => {
            "a process for B-3's legacy `initialize` alone (a dual-era server may lock that process to 2025-11-25)"
        }
    }
}
