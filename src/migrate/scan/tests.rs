//! Tests of the migration scan's matching: every rule on small snippets, hit and miss; the
//! notes (comments, dual-era files, handlers that answer 405) and the gate.

use super::*;

/// The uses of `text` as a file of this extension: (rule, line, why).
fn uses(extension: &str, text: &str) -> Vec<(&'static str, usize, Option<String>)> {
    let syntax = Syntax::for_path(Path::new(&format!("x.{extension}"))).expect("a source extension");
    let lines = Lines::new(text);
    source_uses(text, syntax)
        .into_iter()
        .map(|found| {
            assert!(!found.gated, "{extension}: {text}: a file that names MCP is never gated");
            (found.rule, lines.locate(text, found.offset).0, found.why)
        })
        .collect()
}

/// The rules found, findings only.
fn findings(extension: &str, text: &str) -> Vec<&'static str> {
    uses(extension, text).into_iter().filter(|(_, _, why)| why.is_none()).map(|(rule, _, _)| rule).collect()
}

/// A file that names MCP, so the gated patterns apply.
fn mcp(body: &str) -> String {
    format!("import {{ McpServer }} from \"@modelcontextprotocol/sdk/server/mcp.js\";\n{body}\n")
}

#[test]
fn mig_1_the_initialize_handshake() {
    for (extension, body) in [
        ("ts", "send({ jsonrpc: \"2.0\", id: 1, method: \"initialize\", params: {} });"),
        ("js", "const body = '{\"jsonrpc\":\"2.0\",\"method\":\"initialize\"}';"),
        ("go", "switch req.Method {\ncase \"initialize\":\n}"),
        ("py", "method: Literal[\"initialize\"] = \"initialize\""),
        ("ts", "server.setRequestHandler(InitializeRequestSchema, handler);"),
        ("py", "if isinstance(request, types.InitializeRequest): pass"),
    ] {
        assert!(findings(extension, &mcp(body)).contains(&"MIG-1"), "{extension}: {body}");
    }
    for body in [
        "function initialize() {}",
        "initialize();",
        "const initializeTimeout = null;",
        "emit('initialized');",
        "const s = \"initializer\";",
        "// call initialize() first",
    ] {
        assert_eq!(uses("js", &mcp(body)), vec![], "{body}");
    }
}

#[test]
fn mig_2_notifications_initialized() {
    assert_eq!(uses("rs", "const NOTIFY: &str = \"notifications/initialized\";"), vec![("MIG-2", 1, None)]);
    assert_eq!(findings("js", &mcp("server.server.oninitialized = async () => {};")), vec!["MIG-2"]);
    assert_eq!(
        findings("js", &mcp("x.onInitialized(); const a = 'notifications/initialized_at';")),
        Vec::<&str>::new()
    );
}

#[test]
fn mig_3_ping_as_a_method_only() {
    for body in [
        "client.request({ method: 'ping' });",
        "if msg.method == \"ping\":",
        "PingRequestSchema",
        "await session.send_ping()",
    ] {
        assert_eq!(findings("ts", &mcp(body)), vec!["MIG-3"], "{body}");
    }
    for body in ["server.tool(\"ping\", handler);", "const ping = 3;", "await redis.ping();", "// ping the host"] {
        assert_eq!(uses("ts", &mcp(body)), vec![], "{body}");
    }
}

#[test]
fn mig_4_logging_set_level() {
    assert_eq!(findings("py", "METHOD = \"logging/setLevel\""), vec!["MIG-4"]);
    assert_eq!(findings("ts", &mcp("await client.setLoggingLevel(\"debug\");")), vec!["MIG-4"]);
    assert_eq!(findings("ts", &mcp("server.setRequestHandler(SetLevelRequestSchema, h);")), vec!["MIG-4"]);
    assert_eq!(uses("py", &mcp("logging.getLogger().setLevel(logging.DEBUG)")), vec![]);
}

#[test]
fn mig_5_resources_subscribe_and_unsubscribe() {
    for body in [
        "c.request('resources/subscribe', {uri})",
        "c.request('resources/unsubscribe', {uri})",
        "import { SubscribeRequestSchema, UnsubscribeRequestSchema } from \"@modelcontextprotocol/sdk/types.js\";",
        "await session.subscribe_resource(uri)",
    ] {
        assert_eq!(findings("ts", &mcp(body)), vec!["MIG-5"], "{body}");
    }
    for body in [
        "capabilities: { resources: { subscribe: true } }",
        "c.request('subscriptions/listen')",
        "'resources/subscribed'",
    ] {
        assert_eq!(uses("ts", &mcp(body)), vec![], "{body}");
    }
}

#[test]
fn mig_6_roots_list_changed() {
    assert_eq!(findings("java", "String m = \"notifications/roots/list_changed\";"), vec!["MIG-6"]);
    assert_eq!(findings("ts", &mcp("await client.sendRootsListChanged();")), vec!["MIG-6"]);
    assert_eq!(uses("ts", "const m = 'notifications/tools/list_changed';"), vec![]);
}

#[test]
fn mig_7_the_session_header() {
    assert_eq!(findings("js", "const id = req.headers[\"mcp-session-id\"];"), vec!["MIG-7"]);
    assert_eq!(findings("py", "MCP_SESSION_ID_HEADER = \"Mcp-Session-Id\"  # the header"), vec!["MIG-7"]);
    assert_eq!(findings("go", "r.Header.Get(\"Mcp-Session-Id\")"), vec!["MIG-7"]);
    assert_eq!(uses("js", &mcp("const id = req.headers['x-session-id']; const session_id = 1;")), vec![]);
}

/// Decoys: the TypeScript SDK v1's stateless mode (`sessionIdGenerator: undefined`) and the
/// Python SDK's (`session_id_generator=None`) mint no session; a generator function does.
#[test]
fn mig_7_a_stateless_transport_is_not_a_session() {
    for (extension, body) in [
        ("ts", "const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });"),
        (
            "ts",
            "new StreamableHTTPServerTransport({\n  sessionIdGenerator : undefined,\n  enableJsonResponse: true,\n});",
        ),
        ("js", "const options = { sessionIdGenerator: void 0 };"),
        ("py", "manager = StreamableHTTPSessionManager(app=app, session_id_generator=None, stateless=True)"),
        ("py", "transport = StreamableHTTPServerTransport(\n    session_id_generator = None,\n)"),
    ] {
        assert_eq!(uses(extension, &mcp(body)), vec![], "{extension}: {body}");
    }
    for (extension, body) in [
        ("ts", "new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });"),
        ("ts", "new StreamableHTTPServerTransport({ sessionIdGenerator: undefinedOrNot });"),
        ("js", "const { sessionIdGenerator } = options;"),
        ("py", "StreamableHTTPServerTransport(session_id_generator=lambda: uuid4().hex)"),
        ("py", "session_id_generator=None_or_uuid"),
    ] {
        assert_eq!(findings(extension, &mcp(body)), vec!["MIG-7"], "{extension}: {body}");
    }
}

#[test]
fn mig_8_the_get_stream_and_the_http_sse_transport() {
    let session = "const header = \"mcp-session-id\";\n";
    assert!(findings("js", &format!("{session}app.get(\"/mcp\", async (req, res) => {{}});")).contains(&"MIG-8"));
    assert!(findings("py", &format!("{session}@app.get(\"/sse\")\nasync def sse(): pass")).contains(&"MIG-8"));
    assert!(findings("py", &format!("{session}elif request.method == \"GET\":")).contains(&"MIG-8"));
    assert!(findings("go", &format!("{session}mux.HandleFunc(\"GET /mcp\", h)")).contains(&"MIG-8"));
    assert_eq!(findings("ts", &mcp("const t = new SSEServerTransport('/messages', res);")), vec!["MIG-8"]);
    assert_eq!(findings("py", "from mcp.client.sse import sse_client"), vec!["MIG-8"]);
    // No session header or event stream in the file: a GET route is not the MCP stream.
    assert_eq!(uses("js", &mcp("app.get(\"/mcp\", (req, res) => res.json({}));")), vec![]);
    // Other routes and maps.
    assert_eq!(findings("js", &format!("{session}app.get(\"/health\", ok); transports.get(\"mcp\");")), vec!["MIG-7"]);
}

#[test]
fn mig_9_delete_to_end_a_session() {
    let session = "const header = \"mcp-session-id\";\n";
    assert!(findings("js", &format!("{session}app.delete(\"/mcp\", async (req, res) => {{}});")).contains(&"MIG-9"));
    assert!(findings("py", &format!("{session}elif request.method == \"DELETE\":")).contains(&"MIG-9"));
    assert!(findings("ts", &mcp("await transport.terminateSession();")).contains(&"MIG-9"));
    assert_eq!(findings("js", &format!("{session}transports.delete(sid); delete cache[sid];")), vec!["MIG-7"]);
    assert_eq!(uses("js", &mcp("app.delete(\"/items/:id\", remove);")), vec![], "no session header in the file");
}

#[test]
fn a_get_or_delete_handler_that_answers_405_is_a_note() {
    let text = "const h = 'mcp-session-id';\napp.get(\"/mcp\", (req, res) => {\n  res.status(405).end();\n});\napp.delete(\"/mcp\", (req, res) => res.writeHead(405));\n";
    let found = uses("js", text);
    let why = Some("the handler answers 405, as a 2026-07-28 server does".to_owned());
    assert!(found.contains(&("MIG-8", 2, why.clone())), "{found:?}");
    assert!(found.contains(&("MIG-9", 5, why)), "{found:?}");
}

#[test]
fn mig_10_last_event_id() {
    assert_eq!(findings("js", &mcp("const last = req.headers[\"last-event-id\"];")), vec!["MIG-10"]);
    assert_eq!(findings("ts", &mcp("async replayEventsAfter(lastEventId, { send }) {}")), vec!["MIG-10"]);
    assert_eq!(uses("js", &mcp("let lastEventId = null;")), vec![]);
}

#[test]
fn mig_11_to_13_the_codes_and_32001_only_where_it_is_sent() {
    assert_eq!(findings("ts", &mcp("throw new McpError(-32003, 'needs sampling');")), vec!["MIG-11"]);
    assert_eq!(findings("py", &mcp("UNSUPPORTED_VERSION = -32004")), vec!["MIG-12"]);
    assert_eq!(findings("go", &mcp("return &Error{Code: -32002, Message: \"not found\"}")), vec!["MIG-13"]);
    assert_eq!(findings("js", &mcp("res.end('{\"error\":{\"code\":-32002}}');")), vec!["MIG-13"]);
    for body in [
        "const a = 132002; const b = -320021; const c = -32002.5; const d = x-32002;",
        "const e = 32002; const f = -32000; const g = 32003;",
        "const SESSION_NOT_FOUND = -32001; const TIMEOUT = -32001;",
    ] {
        assert_eq!(uses("ts", &mcp(body)), vec![], "{body}");
    }
    // Sent as an error's code (issue 40: 2025-era servers answer an unknown session with it).
    assert_eq!(findings("ts", &mcp("res.json({code: -32001});")), vec!["MIG-16"]);
}

#[test]
fn a_use_in_a_comment_or_a_docstring_is_a_note() {
    let comment = Some("in a comment".to_owned());
    assert_eq!(uses("ts", "// the client sends notifications/initialized"), vec![("MIG-2", 1, comment.clone())]);
    assert_eq!(uses("ts", &mcp("/* -32002 was resource not found */")), vec![("MIG-13", 2, comment.clone())]);
    assert_eq!(
        uses("py", &mcp("def f():\n    \"\"\"Sends logging/setLevel.\"\"\"\n    # Mcp-Session-Id\n")),
        vec![("MIG-4", 3, comment.clone()), ("MIG-7", 4, comment)]
    );
}

#[test]
fn a_dual_era_file_makes_its_uses_notes() {
    let found = uses(
        "ts",
        &mcp("if (msg.method === 'initialize') legacy(); else if (msg.method === 'server/discover') modern();"),
    );
    assert_eq!(found, vec![("MIG-1", 2, Some("dual-era: the file also has `server/discover`".into()))]);
    let found = uses("ts", &mcp("const NOT_FOUND = [-32002, -32602];"));
    assert_eq!(found, vec![("MIG-13", 2, Some("dual-era: the file also has `-32602`".into()))]);
    let found = uses("py", "SUPPORTED = (\"2025-11-25\", \"2026-07-28\")\nHEADER = \"mcp-session-id\"\n");
    assert_eq!(found, vec![("MIG-7", 2, Some("dual-era: the file also has `2026-07-28`".into()))]);
    // The replacement only in a comment does not make a file dual-era.
    assert_eq!(findings("ts", &mcp("// TODO: -32602 (2026-07-28)\nthrow err(-32002);")), vec!["MIG-13"]);
    // Another rule's replacement does not either: -32602 says nothing of sessions.
    assert_eq!(findings("js", "const h = 'mcp-session-id'; const c = -32602;"), vec!["MIG-7"]);
}

#[test]
fn gated_patterns_wait_for_mcp_to_be_named_and_the_others_do_not() {
    let syntax = Syntax::for_path(Path::new("x.js")).expect("js");
    let text = "emitter.on(\"initialize\", f); const code = -32002; fetch(u, {headers: {'Last-Event-ID': id}});\nconst m = 'notifications/initialized';";
    let found: Vec<(&str, bool)> =
        source_uses(text, syntax).into_iter().map(|found| (found.rule, found.gated)).collect();
    assert_eq!(found, vec![("MIG-1", true), ("MIG-13", true), ("MIG-10", true), ("MIG-2", false)]);
}

#[test]
fn one_use_per_rule_and_line_at_its_column() {
    let text = "x[MCP_SESSION_ID_HEADER] = \"mcp-session-id\"; y = 'mcp-session-id'\n";
    let syntax = Syntax::for_path(Path::new("x.py")).expect("py");
    let found = source_uses(text, syntax);
    assert_eq!(found.len(), 1);
    assert_eq!((found[0].rule, found[0].offset, found[0].text.as_str()), ("MIG-7", 2, "MCP_SESSION_ID_HEADER"));
    let lines = Lines::new("ab\ncé d\n");
    assert_eq!(lines.locate("ab\ncé d\n", 7), (2, 4), "columns count characters");
}
