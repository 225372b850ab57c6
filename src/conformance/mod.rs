//! Layer 0: deterministic conformance of a server under test to MCP 2026-07-28 (and, for legacy
//! servers, the parts of 2025-11-25 that still apply), graded requirement by requirement.
//!
//! [`run`] takes a connected client, walks the lists once, runs the probe families concurrently
//! (2026-07-28 is stateless, so requests are independent), applies the passive rules to every
//! exchange, and grades one [`CheckResult`] per requirement of [`requirements::REQUIREMENTS`].
//! Nothing here causes side effects on the server: tools are called only when annotated
//! `readOnlyHint: true` or listed as safe by the user.

pub(crate) mod context;
pub(crate) mod expect;
pub(crate) mod finding;
pub(crate) mod passive;
pub(crate) mod probes;
pub(crate) mod problem;
pub(crate) mod requirements;
pub(crate) mod schema;
pub(crate) mod security;
pub(crate) mod shapes;
pub(crate) mod survival;
pub(crate) mod waiver;

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};

use crate::events::RunEvent;
use crate::mcp::client::{Client, Connection};
use crate::mcp::entries::Entries;
use crate::mcp::era::{self, Connected, Era, Target};
use crate::mcp::evidence::Redactor;
use crate::mcp::exchange::Outgoing;
use crate::mcp::http::HttpTransport;
use crate::mcp::stdio::StdioTransport;
use crate::mcp::tools::ToolSurface;
use crate::report::model::{CheckResult, Evidence, Level, ServerSection, Status};
use context::{Context, ListWalk, Purpose, SafeTool, Seconds, walk};
use finding::{Finding, Outcome, grade};
use passive::Passive;
use requirements::{REQUIREMENTS, Scope};

/// Options of a layer-0 run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Options {
    /// Tools the user lists as safe to call, with their arguments (`--config`).
    pub safe_tools: Vec<SafeTool>,
    /// Fail a legacy server (`--require-era 2026-07-28`).
    pub require_modern: bool,
    /// The config file's waivers (`waivers`, `suppress`), applied by [`waiver::apply`] to the
    /// graded rows.
    pub waivers: Vec<waiver::Waiver>,
}

/// What layer 0 found: the server section and one check per requirement.
#[derive(Debug, Clone)]
pub(crate) struct Layer0Result {
    /// What is known about the server.
    pub server: ServerSection,
    /// Every check, in catalogue order.
    pub checks: Vec<CheckResult>,
    /// The waivers that matched no row, one warning each ([`waiver::apply`]).
    pub waiver_notes: Vec<String>,
}

/// True when a tool is annotated `readOnlyHint: true`.
pub(crate) fn read_only(tool: &Value) -> bool {
    tool.pointer("/annotations/readOnlyHint") == Some(&json!(true))
}

/// Why a second connection to the server could not be opened.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum OpenError {
    /// The HTTP transport could not be built (its reason).
    #[error("{0}")]
    Http(Arc<crate::mcp::http::BuildError>),
    /// The stdio server's process could not be spawned.
    #[error("{0}")]
    Spawn(#[source] Arc<std::io::Error>),
}

/// Opens a second connection to the same server (stdio: a second process, not recorded: use
/// [`context::Seconds`], which records why), modern era. The error says why it could not.
pub(crate) fn open_second(target: &Target, redactor: &Redactor) -> Result<Client, OpenError> {
    match target {
        Target::Http(settings) => HttpTransport::new(settings.clone(), redactor.clone())
            .map(|transport| Client::new(Connection::Http(transport)))
            .map_err(|error| OpenError::Http(Arc::new(error))),
        Target::Stdio { command, env, timeout } => StdioTransport::spawn(command, env, *timeout, redactor.clone())
            .map(|transport| Client::new(Connection::Stdio(transport)))
            .map_err(|error| OpenError::Spawn(Arc::new(error))),
    }
}

/// The `not_applicable` reason of a check that a stdio server's framing kept from being
/// exercised (its probes could read no answer). Reasons of checks blocked by another check's
/// failure start with `blocked:` and name that check.
pub(crate) const BLOCKED_BY_FRAMING: &str = "blocked: the server's stdout is not newline-delimited JSON (see X-1)";
/// How the reason of a check starts when some answers it needed could not be read, while
/// others could (M-11 fails and names them): the rest names those answers.
pub(crate) const BLOCKED_PREFIX: &str = "blocked: ";
/// The reason of the checks an unreadable HTTP answer blocks (M-11 fails).
pub(crate) const BLOCKED_BY_UNREADABLE: &str = "blocked: the server's responses are unreadable (see M-11)";

impl Context {
    /// The URL of the server under test, over HTTP.
    pub(crate) fn modern_url(&self) -> Option<String> {
        match &self.target {
            Target::Http(settings) => Some(settings.url.clone()),
            Target::Stdio { .. } => None,
        }
    }
}

/// Runs layer 0 on a connected server, borrowing its session (the caller ends it), and reports
/// its phases as [`RunEvent`]s.
pub(crate) async fn run(
    connected: &Connected,
    target: Target,
    redactor: Redactor,
    options: &Options,
    events: &(dyn Fn(&RunEvent) + Sync),
) -> Layer0Result {
    if connected.framing_blocked {
        return blocked_by_framing(connected, &target, &redactor, options, events).await;
    }
    if let Some(why) = &connected.unreadable {
        return blocked_by_unreadable(connected, why, events);
    }
    let started = Instant::now();
    let client = connected.client.clone();
    let (era, era_evidence) = (connected.era, connected.evidence.clone());
    let passive = observe_session(connected);
    let seconds = Seconds::new(target.clone(), redactor.clone(), connected.starts.clone(), connected.take_spares());
    let modern = modern_client(connected, &seconds, &passive);
    let announced = Announced::of(connected);
    events(&RunEvent::EraDetected { era: era.revision().into(), evidence: era_evidence.clone() });

    let (tools, prompts, resources, templates) = list_everything(&client, era).await;
    let listed = crate::report::model::Listed {
        tools: tools.items.len(),
        prompts: prompts.items.len(),
        resources: resources.items.len(),
        resource_templates: templates.items.len(),
    };
    events(&RunEvent::ServerListed(listed));
    if let Connection::Http(http) = client.connection() {
        record_param_headers(http, &tools.items);
    }
    if let Connection::Http(http) = modern.connection() {
        record_param_headers(http, &tools.items);
    }
    let safe_tools = safe_tools(options, &tools, events);

    let mut ctx = Context {
        client: client.clone(),
        modern: modern.clone(),
        era,
        discover: connected.discover.clone(),
        capabilities: announced.capabilities.clone(),
        supported_versions: announced.supported_versions.clone(),
        tools,
        prompts,
        resources,
        templates,
        safe_tools,
        big_lists: tokio::sync::Semaphore::new(1),
        target: target.clone(),
        seconds,
        tool_errors: std::sync::Mutex::new(Vec::new()),
        stopped: std::sync::Mutex::new(None),
        probes_sent: std::sync::atomic::AtomicU64::new(0),
    };
    // stdio: the second processes are given their uses now (spares started with the session,
    // so that their start-up overlapped it; a new process only when no spare is left).
    let early: &[Purpose] =
        if era == Era::Modern { &[Purpose::Shared, Purpose::Handshake] } else { &[Purpose::Shared] };
    ctx.seconds.start_early(early);

    events(&RunEvent::ProbesStarted);
    // The static scan reads every listed element, before the tool list is let go below.
    let (scan, descriptions) = probes::security::scan(&ctx);
    let mut groups: Vec<(Vec<Finding>, u64)> = vec![
        // A legacy server's failed discover is graded too: D-1 heads its migration list.
        (probes::discovery::discover_result(&ctx), connected.discover.elapsed_ms),
        (probes::lists::walks(&ctx), 0),
        (probes::lists::tool_definitions(&ctx), 0),
        (scan, 0),
    ];
    keep_needed_tools(&mut ctx);
    let ctx = ctx;
    run_families(&ctx, started, events, &mut groups).await;
    survival::block_after_stop(&ctx, &mut groups);
    groups.push((probes::stdio::framing(&ctx), 0));
    groups.push((passive.findings(), 0));
    events(&RunEvent::ProbesFinished { duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX) });

    let mut checks = grade_all(&groups, era, client.is_http(), None);
    if era == Era::Legacy {
        checks.push(era_check(options.require_modern, &era_evidence));
    }
    let stderr_tail = stderr_tail(&client);
    let tool_errors = redacted_tool_errors(&ctx, &redactor);
    // The session is the caller's: stop observing it, end only the connection opened here.
    client.set_observer(None);
    let modern_ends = async {
        if !Arc::ptr_eq(&client, &modern) {
            modern.shutdown().await;
        }
    };
    tokio::join!(modern_ends, ctx.seconds.shutdown());
    let server = ServerSection {
        transport: client.transport_name().into(),
        target: String::new(),
        era: Some(era.revision().into()),
        era_evidence: Some(era_evidence),
        supported_versions: announced.supported_versions,
        server_info: announced.server_info,
        capabilities: Some(announced.capabilities),
        stderr_tail,
        listed: Some(listed),
        stdio_starts: connected.starts.reasons(),
        descriptions,
        tool_errors,
    };
    Layer0Result { server, checks, waiver_notes: Vec::new() }
}

/// Observes every exchange of the caller's session with the passive rules; the era probe,
/// which happened before the observer existed, is fed in now.
fn observe_session(connected: &Connected) -> Arc<Passive> {
    let era = connected.era;
    let passive = Arc::new(Passive::new(era == Era::Legacy));
    let observer = passive.clone();
    let client_is_modern = era == Era::Modern;
    connected.client.set_observer(Some(Arc::new(move |outgoing: &Outgoing, exchange| {
        observer.observe(outgoing, exchange, client_is_modern)
    })));
    if era == Era::Modern {
        passive.observe(
            &Outgoing::request(crate::mcp::jsonrpc::modern_request("server/discover", json!({}))),
            &connected.discover,
            true,
        );
    }
    passive
}

/// The client of the 2026-07-28 probes: the session itself for a modern server; for a legacy
/// one a second connection apart from the legacy session (observed as well), or, when none
/// opens, a client on the session's connection.
fn modern_client(connected: &Connected, seconds: &Seconds, passive: &Arc<Passive>) -> Arc<Client> {
    let client = &connected.client;
    match connected.era {
        Era::Modern => client.clone(),
        Era::Legacy => {
            let fresh = seconds
                .open("a modern client for a legacy server: the 2026-07-28 probes, apart from the legacy session")
                .unwrap_or_else(|_| Client::new(client.connection().clone()));
            let observer = passive.clone();
            fresh.set_observer(Some(Arc::new(move |outgoing: &Outgoing, exchange| {
                observer.observe(outgoing, exchange, true)
            })));
            Arc::new(fresh)
        }
    }
}

/// What the server announced about itself: from `server/discover` (modern) or `initialize`
/// (legacy; its discover when it sent none).
struct Announced {
    capabilities: Value,
    supported_versions: Vec<String>,
    server_info: Option<Value>,
}

impl Announced {
    fn of(connected: &Connected) -> Self {
        let era = connected.era;
        let discover = &connected.discover;
        let basis = match era {
            Era::Modern => discover,
            Era::Legacy => connected.initialize.as_ref().unwrap_or(discover),
        };
        let capabilities = basis.result().and_then(|result| result.get("capabilities")).cloned().unwrap_or(json!({}));
        let supported_versions: Vec<String> = match era {
            Era::Modern => basis
                .result()
                .and_then(|result| result.get("supportedVersions"))
                .and_then(Value::as_array)
                .map(|list| list.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                .unwrap_or_default(),
            Era::Legacy => basis
                .result()
                .and_then(|result| result.get("protocolVersion"))
                .and_then(Value::as_str)
                .map(|version| vec![version.to_owned()])
                .unwrap_or_default(),
        };
        let server_info = basis.result().and_then(|result| match era {
            Era::Modern => {
                result.pointer(&format!("/_meta/{}", crate::mcp::jsonrpc::META_SERVER_INFO.replace('/', "~1"))).cloned()
            }
            Era::Legacy => result.get("serverInfo").cloned(),
        });
        Announced { capabilities, supported_versions, server_info }
    }
}

/// Walks the four lists at once, in the era's request shape: tools, prompts, resources and
/// resource templates.
async fn list_everything(client: &Client, era: Era) -> (ListWalk, ListWalk, ListWalk, ListWalk) {
    let request = |method: &'static str| {
        move |params: Value| match era {
            Era::Modern => Outgoing::request(crate::mcp::jsonrpc::modern_request(method, params)),
            Era::Legacy => era::legacy(method, params),
        }
    };
    let (list_tools, list_prompts, list_resources, list_templates) = (
        request("tools/list"),
        request("prompts/list"),
        request("resources/list"),
        request("resources/templates/list"),
    );
    tokio::join!(
        walk(client, "tools/list", "tools", &list_tools, true),
        walk(client, "prompts/list", "prompts", &list_prompts, true),
        walk(client, "resources/list", "resources", &list_resources, true),
        walk(client, "resources/templates/list", "resourceTemplates", &list_templates, true),
    )
}

/// The tools the probes may call: the user's safe tools and every tool annotated
/// `readOnlyHint: true`; a safe tool the server does not offer is dropped with a warning.
fn safe_tools(options: &Options, tools: &ListWalk, events: &(dyn Fn(&RunEvent) + Sync)) -> Vec<SafeTool> {
    let mut safe_tools = options.safe_tools.clone();
    for tool in tools.items.iter() {
        let Some(name) = tool.get("name").and_then(Value::as_str) else { continue };
        if read_only(&tool) && !safe_tools.iter().any(|safe| safe.name == name) {
            safe_tools.push(SafeTool { name: name.to_owned(), arguments: probes::calls::sample_arguments(&tool) });
        }
    }
    // Tools the user listed but the server does not offer are dropped.
    let offered: std::collections::HashSet<&str> = tools.names.iter().map(String::as_str).collect();
    for safe in &safe_tools {
        if !offered.contains(safe.name.as_str()) {
            events(&RunEvent::Notice {
                text: format!(
                    "warning: the config file lists the safe tool `{}`, which the server does not offer; it is ignored",
                    safe.name
                ),
            });
        }
    }
    safe_tools.retain(|safe| offered.contains(safe.name.as_str()));
    safe_tools
}

/// From here on only the tools we call and the first that declares `x-mcp-header` are
/// needed: the rest of the list's text is let go (and later lookups parse a few entries, not
/// thousands).
fn keep_needed_tools(ctx: &mut Context) {
    ctx.safe_tools.truncate(probes::calls::MAX_TOOLS);
    let header_tool = ctx.header_tool().and_then(|tool| tool.get("name").cloned());
    let keep: std::collections::HashSet<String> = ctx.safe_tools.iter().map(|tool| tool.name.clone()).collect();
    ctx.tools.items.retain(|tool| {
        let name = tool.get("name");
        name == header_tool.as_ref() || name.and_then(Value::as_str).is_some_and(|name| keep.contains(name))
    });
}

/// A probe family under way: its findings and its wall time.
type Family<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = (Vec<Finding>, u64)> + 'a>>;

/// The probe families, each named for the progress reports, in the order they run.
fn families(ctx: &Context) -> Vec<(&'static str, Family<'_>)> {
    vec![
        ("the advertised capabilities", Box::pin(timed(probes::discovery::capabilities_match(ctx)))),
        ("completion", Box::pin(timed(probes::discovery::completion(ctx)))),
        ("request `_meta`", Box::pin(timed(probes::discovery::request_meta(ctx)))),
        ("versions", Box::pin(timed(probes::discovery::versions(ctx)))),
        ("K-2..K-4 (tasks)", Box::pin(timed(probes::discovery::tasks(ctx)))),
        ("the HTTP rules", Box::pin(timed(probes::http::run(ctx)))),
        ("the error rules", Box::pin(timed(probes::errors::run(ctx)))),
        ("reads and gets", Box::pin(timed(probes::lists::read_and_get(ctx)))),
        ("P-3 (a second connection's tools/list)", Box::pin(timed(probes::lists::across_connections(ctx)))),
        ("concurrent requests", Box::pin(timed(probes::lists::concurrency(ctx)))),
        ("P-1 (a second tools/list walk)", Box::pin(timed(probes::lists::ordering(ctx)))),
        ("tool calls", Box::pin(timed(probes::calls::run(ctx)))),
        ("subscriptions", Box::pin(timed(probes::subscriptions::run(ctx)))),
        ("B-3 (a legacy `initialize`)", Box::pin(timed(probes::discovery::legacy_handshake(ctx, None)))),
        ("authorization", Box::pin(timed(probes::auth::run(ctx)))),
        ("X-3..X-7 (the stdio rules)", Box::pin(timed(probes::stdio::run(ctx)))),
        // Invalid tool arguments come last: a server they kill takes no other check down with it.
        // Before the framing check, which reads what stdout carried during the whole run.
        ("invalid tool arguments", Box::pin(timed(probes::arguments::run(ctx)))),
    ]
}

/// Runs the probe families into `groups`: over Streamable HTTP all at once but the last two,
/// over stdio one after another; the last two always in order.
async fn run_families(
    ctx: &Context,
    started: Instant,
    events: &(dyn Fn(&RunEvent) + Sync),
    groups: &mut Vec<(Vec<Finding>, u64)>,
) {
    let families = families(ctx);
    let total = families.len();
    let progress = Progress { started, total, events };
    let (at_once, last): (Vec<_>, Vec<_>) = families.into_iter().enumerate().partition(|(index, _)| *index + 2 < total);
    if ctx.is_http() {
        // Streamable HTTP requests are independent (2026-07-28 is stateless): run every family
        // at once (but the last two, in order, as on stdio).
        let all = futures_util::future::join_all(at_once.into_iter().map(|(_, (_, family))| family));
        groups.extend(progress.watch("every family", 0, all).await);
    } else {
        // On stdio, notifications carry no request id: a log or progress message can only be
        // attributed while few requests are in flight, so families run one after another.
        for (done, (name, family)) in at_once {
            groups.push(progress.watch(name, done, family).await);
        }
    }
    for (done, (name, family)) in last {
        groups.push(progress.watch(name, done, family).await);
    }
}

/// The tool errors the probes saw, redacted: a tool's error text is a tool result, shown only in
/// `report.json`.
fn redacted_tool_errors(ctx: &Context, redactor: &Redactor) -> Vec<crate::report::model::ToolErrorNotice> {
    let mut tool_errors = std::mem::take(&mut *crate::mcp::sync::lock(&ctx.tool_errors));
    for notice in &mut tool_errors {
        notice.arguments = redactor.redact(&notice.arguments);
        notice.error = redactor.redact(&notice.error);
    }
    tool_errors
}

/// The stderr tail of a stdio server, when it wrote anything.
fn stderr_tail(client: &Client) -> Option<String> {
    match client.connection() {
        Connection::Stdio(stdio) => {
            let tail = stdio.stderr_tail();
            (!tail.is_empty()).then_some(tail)
        }
        Connection::Http(_) => None,
    }
}

/// Layer 0 on a stdio server whose stdout is not newline-delimited JSON (spec-notes §7), so that
/// no probe can read an answer ([`Connected::framing_blocked`]): X-1 fails and names the
/// framing, X-4 (exit on stdin EOF, which needs no answer) is graded, and every other check is
/// `not_applicable` with [`BLOCKED_BY_FRAMING`], not a failure of its own rule. Nothing is
/// sent but the era probes: each request would only wait for its timeout.
async fn blocked_by_framing(
    connected: &Connected,
    target: &Target,
    redactor: &Redactor,
    options: &Options,
    events: &(dyn Fn(&RunEvent) + Sync),
) -> Layer0Result {
    let started = Instant::now();
    let (client, era) = (&connected.client, connected.era);
    events(&RunEvent::EraDetected { era: era.revision().into(), evidence: connected.evidence.clone() });
    events(&RunEvent::Notice {
        text: "the server's stdout is not newline-delimited JSON: no answer can be read, so only X-1 (the framing) and X-4 (exit on stdin EOF) are graded; the other checks are blocked".into(),
    });
    events(&RunEvent::ProbesStarted);
    // What the framing check found; a rule "kept" only because nothing could be read is no pass.
    let framing: Vec<Finding> = probes::stdio::framing_of(client, era)
        .into_iter()
        .filter(|finding| finding.outcome != finding::Outcome::Kept)
        .collect();
    let seconds = Seconds::new(target.clone(), redactor.clone(), connected.starts.clone(), connected.take_spares());
    let exit = timed(async {
        vec![
            probes::stdio::exits_on_eof(seconds.open("X-4: a process whose stdin is closed at once").map(Arc::new))
                .await,
        ]
    })
    .await;
    seconds.shutdown().await;
    let groups = vec![(framing, 0), exit];
    events(&RunEvent::ProbesFinished { duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX) });
    let mut checks = grade_all(&groups, era, client.is_http(), Some(BLOCKED_BY_FRAMING));
    if era == Era::Legacy {
        checks.push(era_check(options.require_modern, &connected.evidence));
    }
    Layer0Result { server: blocked_server(connected, stderr_tail(client)), checks, waiver_notes: Vec::new() }
}

/// The server section of a blocked run: the era and its evidence, nothing read from answers.
fn blocked_server(connected: &Connected, stderr_tail: Option<String>) -> ServerSection {
    ServerSection {
        transport: connected.client.transport_name().into(),
        target: String::new(),
        era: Some(connected.era.revision().into()),
        era_evidence: Some(connected.evidence.clone()),
        supported_versions: Vec::new(),
        server_info: None,
        capabilities: None,
        stderr_tail,
        listed: None,
        stdio_starts: connected.starts.reasons(),
        descriptions: std::collections::BTreeMap::new(),
        tool_errors: Vec::new(),
    }
}

/// Layer 0 on an HTTP server whose answers are recognisably JSON-RPC but cannot be read as one
/// message ([`Connected::unreadable`]): M-11 fails once, naming what came back, with the
/// evidence; H-16 warns as well when the stream stayed open; every other check is
/// `not_applicable` with [`BLOCKED_BY_UNREADABLE`] — not a failure of its own rule. The verdict
/// is `fail`: a server whose responses cannot be read never passes.
fn blocked_by_unreadable(connected: &Connected, why: &str, events: &(dyn Fn(&RunEvent) + Sync)) -> Layer0Result {
    let era = connected.era;
    events(&RunEvent::EraDetected { era: era.revision().into(), evidence: connected.evidence.clone() });
    events(&RunEvent::Notice {
        text: format!(
            "the server's responses cannot be read ({why}): only M-11 is graded; the other checks are blocked"
        ),
    });
    let discover = &connected.discover;
    let mut findings = vec![
        Finding::broken("M-11", format!("the server's responses cannot be read as JSON-RPC messages: {why}"))
            .with(discover),
    ];
    if why.contains("stream stayed open") {
        findings.push(
            Finding::ambiguous("H-16", "the SSE stream stayed open after the (unterminated) response").with(discover),
        );
    }
    let checks = grade_all(&[(findings, discover.elapsed_ms)], era, true, Some(BLOCKED_BY_UNREADABLE));
    Layer0Result { server: blocked_server(connected, None), checks, waiver_notes: Vec::new() }
}

/// How often [`Progress::watch`] says that probes are still running.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(3);

/// Progress reports of the probe families of one run.
struct Progress<'a> {
    started: Instant,
    total: usize,
    events: &'a (dyn Fn(&RunEvent) + Sync),
}

impl Progress<'_> {
    /// Awaits `future` (the family `name`, after `done` others), sending
    /// [`RunEvent::ProbesRunning`] every [`PROGRESS_EVERY`] while it runs.
    async fn watch<T>(&self, name: &str, done: usize, future: impl std::future::Future<Output = T>) -> T {
        let mut future = std::pin::pin!(future);
        let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + PROGRESS_EVERY, PROGRESS_EVERY);
        loop {
            tokio::select! {
                output = &mut future => return output,
                _ = ticks.tick() => (self.events)(&RunEvent::ProbesRunning {
                    running: name.to_owned(),
                    done,
                    total: self.total,
                    elapsed_ms: u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX),
                }),
            }
        }
    }
}

/// Runs a probe family and measures its wall time in milliseconds.
async fn timed(future: impl std::future::Future<Output = Vec<Finding>>) -> (Vec<Finding>, u64) {
    let started = Instant::now();
    let findings = future.await;
    (findings, started.elapsed().as_millis() as u64)
}

/// Records the tools' `x-mcp-header` declarations on the HTTP transport, so every later
/// `tools/call` mirrors those arguments into `Mcp-Param-*` headers.
pub(crate) fn record_param_headers(http: &HttpTransport, tools: &Entries) {
    let mut map = crate::mcp::http::ParamHeaders::new();
    for tool in tools.iter() {
        let Some(name) = tool.get("name").and_then(Value::as_str) else { continue };
        let Some(properties) = tool.pointer("/inputSchema/properties").and_then(Value::as_object) else { continue };
        let declared: Vec<(String, String)> = properties
            .iter()
            .filter_map(|(property, schema)| Some((property.clone(), schema.get("x-mcp-header")?.as_str()?.to_owned())))
            .collect();
        if !declared.is_empty() {
            map.insert(name.to_owned(), declared);
        }
    }
    {
        let mut slot = crate::mcp::sync::write(&http.param_headers);
        *slot = map;
    }
}

/// The check that records a legacy era (a failure only with `--require-era 2026-07-28`).
fn era_check(require_modern: bool, evidence: &str) -> CheckResult {
    let (status, level, message) = if require_modern {
        (
            Status::Fail,
            Level::Must,
            format!(
                "the server speaks 2025-11-25 only and `--require-era 2026-07-28` was given: migrate to 2026-07-28 (see the INFO rows for what it would fail). {evidence}"
            ),
        )
    } else {
        (
            Status::Warn,
            Level::Info,
            format!(
                "the server speaks 2025-11-25 only; the INFO rows list the 2026-07-28 requirements it would fail (a migration list). {evidence}"
            ),
        )
    };
    CheckResult {
        id: "ERA".into(),
        title: "protocol era".into(),
        level,
        status,
        message,
        spec: "docs/specification/2026-07-28/basic/versioning.mdx".into(),
        evidence: Vec::new(),
        duration_ms: 0,
        migration: false,
        waiver: None,
    }
}

/// Grades every requirement from the findings of all groups. A requirement without findings is
/// `not_applicable`: for the reason `blocked` gives when the run was blocked, otherwise for the
/// reason [`not_exercised`] gives.
fn grade_all(groups: &[(Vec<Finding>, u64)], era: Era, is_http: bool, blocked: Option<&str>) -> Vec<CheckResult> {
    REQUIREMENTS
        .iter()
        .map(|requirement| {
            let mut mine: Vec<(&Finding, u64)> = groups
                .iter()
                .flat_map(|(findings, duration)| {
                    findings
                        .iter()
                        .filter(|finding| finding.id == requirement.id)
                        .map(move |finding| (finding, *duration))
                })
                .collect();
            let wrong_transport = match requirement.scope {
                Scope::Any => None,
                Scope::Http if !is_http => Some("a Streamable HTTP rule; the server under test speaks stdio"),
                Scope::Stdio if is_http => Some("a stdio rule; the server under test speaks Streamable HTTP"),
                _ => None,
            };
            // A finding broken only because its answer could not be read is that answer's
            // (M-11 grades it once): the row is blocked, unless another finding is broken on
            // what could be read.
            let mut unread: Vec<&str> = Vec::new();
            if !matches!(requirement.id, "M-11" | "H-16" | "X-1") {
                mine.retain(|(finding, _)| match &finding.unreadable {
                    Some(why) if finding.outcome >= Outcome::Ambiguous => {
                        if !unread.contains(&why.as_str()) {
                            unread.push(why);
                        }
                        false
                    }
                    _ => true,
                });
            }
            let broken_on_what_was_read = mine.iter().any(|(finding, _)| finding.outcome >= Outcome::Ambiguous);
            let (outcome, message, evidence, duration_ms) = if let Some(reason) = wrong_transport {
                (Outcome::NotApplicable, reason.to_owned(), Vec::new(), 0)
            } else if !unread.is_empty() && !broken_on_what_was_read {
                let shown: Vec<&str> = unread.iter().take(3).copied().collect();
                let more = if unread.len() > 3 { format!("; and {} more", unread.len() - 3) } else { String::new() };
                (Outcome::NotApplicable, format!("{BLOCKED_PREFIX}{}{more}", shown.join("; ")), Vec::new(), 0)
            } else if mine.is_empty() {
                let reason = blocked.unwrap_or_else(|| not_exercised(requirement.id));
                (Outcome::NotApplicable, reason.to_owned(), Vec::new(), 0)
            } else {
                // The worst finding decides; passing findings are summarised together.
                mine.sort_by_key(|(finding, _)| std::cmp::Reverse(finding.outcome));
                let worst = mine[0].0.outcome;
                let duration = mine.iter().map(|(_, duration)| *duration).max().unwrap_or(0);
                let relevant: Vec<&Finding> =
                    mine.iter().map(|(finding, _)| *finding).filter(|finding| finding.outcome == worst).collect();
                // Each message once: the checks blocked by one cause all say the same.
                let mut messages: Vec<&str> = Vec::new();
                for finding in &relevant {
                    if !messages.contains(&finding.message.as_str()) {
                        messages.push(&finding.message);
                    }
                }
                let message = messages.join(" | ");
                let evidence: Vec<Evidence> =
                    relevant.iter().flat_map(|finding| finding.evidence.iter().cloned()).take(6).collect();
                (worst, message, evidence, duration)
            };
            let mut status = grade(outcome, requirement.level);
            if outcome == Outcome::Broken && mine.iter().any(|(finding, _)| finding.crash) {
                // The server stopped answering after this row's probe: a failure at any level.
                status = Status::Fail;
            }
            // A MUST row that only warns was kept in its MUST part and missed a SHOULD part (or
            // met an ambiguity of the spec): the row shows the level of what warned, so a
            // warning is never labelled MUST (E-7: refused, but without -32600).
            let mut level = match (outcome, requirement.level) {
                (Outcome::Ambiguous, Level::Must) => Level::Should,
                (_, level) => level,
            };
            let mut message = message;
            let mut migration = false;
            if era == Era::Legacy && !requirement.era_independent {
                // A legacy server is graded only on what applies to 2025-11-25; the rest is its
                // migration list.
                level = Level::Info;
                message = match status {
                    Status::Fail | Status::Warn => {
                        migration = true;
                        format!("2026-07-28 migration: would not meet this requirement: {message}")
                    }
                    Status::Pass => format!("2026-07-28 only (already met): {message}"),
                    _ => format!("2026-07-28 only: {message}"),
                };
                status = Status::NotApplicable;
            }
            CheckResult {
                id: requirement.id.into(),
                title: requirement.title.into(),
                level,
                status,
                message,
                spec: requirements::spec_source(requirement),
                evidence,
                duration_ms,
                migration,
                waiver: None,
            }
        })
        .collect()
}

/// The checks of a server that refuses every request without credentials, when none were
/// given: the authorization rows graded without any ([`probes::auth::without_credentials`]),
/// every other row `not_applicable` until credentials are given. `None` for a stdio target.
pub(crate) async fn needs_credentials(target: &Target, redactor: Redactor) -> Option<Vec<CheckResult>> {
    let Target::Http(settings) = target else { return None };
    let transport = HttpTransport::new(settings.clone(), redactor).ok()?;
    let client = Client::new(Connection::Http(transport));
    let started = Instant::now();
    let mut findings = probes::auth::without_credentials(&client, &settings.url).await;
    let graded: Vec<&str> = findings.iter().map(|finding| finding.id).collect::<Vec<_>>();
    let blocked: Vec<Finding> = REQUIREMENTS
        .iter()
        .filter(|requirement| !graded.contains(&requirement.id))
        .map(|requirement| {
            Finding::not_applicable(
                requirement.id,
                "the server requires credentials: pass --header 'Authorization: …' (input `server-headers`) or sign in with --oauth-client-id and its secret (inputs `oauth-client-id`, `oauth-client-secret`) to run this check",
            )
        })
        .collect();
    findings.extend(blocked);
    let duration = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    Some(grade_all(&[(findings, duration)], Era::Modern, true, None))
}

/// Why a requirement produced no finding.
fn not_exercised(id: &str) -> &'static str {
    match id {
        "A-1" | "A-2" | "A-3" | "A-4" | "A-5" | "A-6" => {
            "not exercised: the authorization probes did not run against this server (they run over Streamable HTTP, on a server that answered)"
        }
        "B-4" => "not exercised: the server is not dual-era",
        _ => "not exercised on this server (nothing observed that this requirement applies to)",
    }
}

/// Why the server's tools could not be listed: the first problem of the `tools/list` walk (a
/// page not answered, not read or malformed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Unlisted(pub String);

/// Walks every `tools/list` page over an open session, in its era's request shape, and records
/// the tools' `Mcp-Param-*` declarations for later `tools/call`s; `Err` with the first problem
/// of the walk.
pub(crate) async fn list_tools_on(connected: &era::Connected) -> Result<ToolSurface, Unlisted> {
    let era = connected.era;
    let request = move |params: Value| match era {
        Era::Modern => Outgoing::request(crate::mcp::jsonrpc::modern_request("tools/list", params)),
        Era::Legacy => era::legacy("tools/list", params),
    };
    let listed = walk(&connected.client, "tools/list", "tools", &request, true).await;
    if let Some(problem) = listed.problems.first() {
        return Err(Unlisted(problem.clone()));
    }
    if let crate::mcp::client::Connection::Http(http) = connected.client.connection() {
        record_param_headers(http, &listed.items);
    }
    let mut surface = ToolSurface::default();
    surface.add_page(&json!({"tools": listed.items.to_value()}));
    Ok(surface)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row<'a>(checks: &'a [CheckResult], id: &str) -> &'a CheckResult {
        checks.iter().find(|check| check.id == id).unwrap_or_else(|| panic!("no {id}"))
    }

    #[test]
    fn every_requirement_gets_a_row_and_unexercised_ones_say_why() {
        let checks = grade_all(&[], Era::Modern, true, None);
        assert_eq!(checks.len(), REQUIREMENTS.len());
        assert!(checks.iter().all(|check| check.status == Status::NotApplicable && !check.message.is_empty()));
        assert!(row(&checks, "X-1").message.contains("stdio rule"), "wrong transport is named");
    }

    #[test]
    fn a_blocked_run_gives_its_reason_to_every_check_without_findings() {
        let findings = vec![Finding::broken("X-1", "stdout is not newline-delimited JSON")];
        let checks = grade_all(&[(findings, 0)], Era::Modern, false, Some(BLOCKED_BY_FRAMING));
        assert_eq!(row(&checks, "X-1").status, Status::Fail);
        let d1 = row(&checks, "D-1");
        assert_eq!((d1.status, d1.message.as_str()), (Status::NotApplicable, BLOCKED_BY_FRAMING));
        assert!(row(&checks, "H-1").message.contains("Streamable HTTP rule"), "the transport's reason comes first");
    }

    #[test]
    fn a_crash_fails_its_row_whatever_the_level() {
        // E-8 is a SHOULD: broken, it warns; the server dying on its probe fails it.
        let warned = grade_all(&[(vec![Finding::broken("E-8", "no -32700")], 0)], Era::Modern, true, None);
        assert_eq!(row(&warned, "E-8").status, Status::Warn);
        let crashed = Finding { crash: true, ..Finding::broken("E-8", "the server stopped answering after …") };
        let failed = grade_all(&[(vec![crashed], 0)], Era::Modern, true, None);
        assert_eq!(row(&failed, "E-8").status, Status::Fail);
    }

    #[test]
    fn a_row_broken_only_on_an_unreadable_answer_is_blocked_and_names_it() {
        let unread = |id| Finding {
            unreadable: Some("the answer to `tools/list` could not be read (see M-11)".into()),
            ..Finding::broken(id, "tools/list failed")
        };
        let findings = vec![
            unread("D-4"),
            Finding::kept("D-4", "prompts/list answered"),
            unread("E-5"),
            Finding::broken("E-5", "an invalid cursor was accepted on prompts/list"),
            unread("M-11"),
        ];
        let checks = grade_all(&[(findings, 0)], Era::Modern, true, None);
        let d4 = row(&checks, "D-4");
        assert_eq!(
            (d4.status, d4.message.as_str()),
            (Status::NotApplicable, "blocked: the answer to `tools/list` could not be read (see M-11)")
        );
        let e5 = row(&checks, "E-5");
        assert_eq!((e5.status, e5.message.as_str()), (Status::Warn, "an invalid cursor was accepted on prompts/list"));
        assert_eq!(row(&checks, "M-11").status, Status::Fail, "M-11 itself is never blocked");
    }

    #[test]
    fn the_worst_finding_decides_and_its_messages_are_kept() {
        let findings = vec![
            Finding::kept("D-1", "answered once"),
            Finding::broken("D-1", "the second answer lacked supportedVersions"),
            Finding::ambiguous("M-6", "a SHOULD part"),
        ];
        let checks = grade_all(&[(findings, 12)], Era::Modern, true, None);
        let d1 = row(&checks, "D-1");
        assert_eq!(
            (d1.status, d1.message.as_str(), d1.duration_ms),
            (Status::Fail, "the second answer lacked supportedVersions", 12)
        );
        assert_eq!(row(&checks, "M-6").status, Status::Warn);
    }

    /// E-7 is a MUST (refuse an invalid envelope) with a SHOULD part (-32600 with id null): a
    /// server that refuses without the code warns, and the row says SHOULD, not MUST; a
    /// broken MUST still fails as MUST, and other levels keep theirs.
    #[test]
    fn a_must_row_that_only_warns_shows_the_should_level_it_warns_at() {
        let findings = vec![
            Finding::ambiguous(
                "E-7",
                "an invalid envelope was refused (HTTP 400) but SHOULD carry JSON-RPC error -32600",
            ),
            Finding::broken("H-21", "a foreign Origin was served"),
            Finding::ambiguous("H-26", "an ambiguity"),
        ];
        let checks = grade_all(&[(findings, 0)], Era::Modern, true, None);
        let e7 = row(&checks, "E-7");
        let declared =
            REQUIREMENTS.iter().find(|requirement| requirement.id == "E-7").map(|requirement| requirement.level);
        assert_eq!((declared, e7.status, e7.level), (Some(Level::Must), Status::Warn, Level::Should));
        let h21 = row(&checks, "H-21");
        assert_eq!((h21.status, h21.level), (Status::Fail, Level::Must));
        let h26 = row(&checks, "H-26");
        assert_eq!((h26.status, h26.level), (Status::Warn, Level::Info));
        let d1 = row(&checks, "D-1");
        assert_eq!((d1.status, d1.level), (Status::NotApplicable, Level::Must), "rows that do not warn keep theirs");
    }

    #[test]
    fn a_legacy_server_is_graded_on_era_independent_rows_and_the_rest_is_its_migration_list() {
        let findings =
            vec![Finding::broken("D-1", "server/discover answered -32601"), Finding::broken("M-6", "ids not echoed")];
        let checks = grade_all(&[(findings, 0)], Era::Legacy, true, None);
        let d1 = row(&checks, "D-1");
        assert_eq!((d1.level, d1.status, d1.migration), (Level::Info, Status::NotApplicable, true));
        assert!(d1.message.starts_with("2026-07-28 migration"), "{}", d1.message);
        let m6 = row(&checks, "M-6");
        assert_eq!((m6.status, m6.migration), (Status::Fail, false), "era-independent rows stay graded");
    }
}
