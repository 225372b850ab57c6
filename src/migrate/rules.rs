//! The catalogue of the migration scan: each rule's id, what it flags, the 2026-07-28
//! replacement, the spec section (a page of the 2026-07-28 specification, relative to
//! `docs/specification/2026-07-28/`), and the markers of its replacement that make a file
//! dual-era; then the patterns that find each rule's uses in source files. The manifest rules
//! (MIG-14, MIG-15) are read by [`super::manifest`]. docs/migration-scan.md is the user's view
//! of this table (a test keeps the two in step).

/// One rule of the scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rule {
    /// `MIG-N`.
    pub id: &'static str,
    /// What it flags: a 2025-era construct.
    pub what: &'static str,
    /// What 2026-07-28 has instead.
    pub replacement: &'static str,
    /// Where the specification says so.
    pub spec: &'static str,
    /// Regular expressions of the replacement: a file that has one in code or a string (not a
    /// comment) handles both eras, and its uses of this rule are notes. `2026-07-28` itself is
    /// such a marker for every rule ([`DUAL_ERA_VERSION`]).
    pub dual: &'static [&'static str],
}

/// The protocol version whose presence in code or a string makes any file dual-era.
pub(crate) const DUAL_ERA_VERSION: &str = "2026-07-28";

const LIFECYCLE: &[&str] = &["server/discover", "DiscoverRequest", "io\\.modelcontextprotocol/protocolVersion"];
const HTTP: &[&str] = &["(?i)\\bmcp-method\\b", "server/discover", "DiscoverRequest"];
const LISTEN: &[&str] = &["subscriptions/listen", "SubscriptionsListen", "subscriptions_listen"];

/// Every rule, in report order.
pub(crate) const RULES: &[Rule] = &[
    Rule {
        id: "MIG-1",
        what: "the `initialize` handshake",
        replacement: "none: every request carries its `_meta` (protocol version, client capabilities); `server/discover` says what the server supports",
        spec: "basic/versioning.mdx §Protocol Version Negotiation; server/discover.mdx",
        dual: LIFECYCLE,
    },
    Rule {
        id: "MIG-2",
        what: "`notifications/initialized`",
        replacement: "none: there is no handshake to finish",
        spec: "basic/versioning.mdx §Protocol Version Negotiation; changelog.mdx",
        dual: LIFECYCLE,
    },
    Rule {
        id: "MIG-3",
        what: "`ping`",
        replacement: "none: removed in both directions; any cheap request (e.g. `server/discover`) shows the server is up",
        spec: "changelog.mdx (removed methods)",
        dual: LIFECYCLE,
    },
    Rule {
        id: "MIG-4",
        what: "`logging/setLevel`",
        replacement: "`_meta[\"io.modelcontextprotocol/logLevel\"]` on each request that wants log messages (logging is deprecated)",
        spec: "server/utilities/logging.mdx",
        dual: &["io\\.modelcontextprotocol/logLevel"],
    },
    Rule {
        id: "MIG-5",
        what: "`resources/subscribe` / `resources/unsubscribe`",
        replacement: "`subscriptions/listen` with `notifications.resourceSubscriptions`; closing the stream ends it",
        spec: "basic/patterns/subscriptions.mdx",
        dual: LISTEN,
    },
    Rule {
        id: "MIG-6",
        what: "`notifications/roots/list_changed`",
        replacement: "none: a server that needs the roots asks for them within the request, as an input request (`roots/list`, deprecated)",
        spec: "changelog.mdx (removed methods); basic/patterns/mrtr.mdx",
        dual: LIFECYCLE,
    },
    Rule {
        id: "MIG-7",
        what: "the `Mcp-Session-Id` header (sessions)",
        replacement: "none: requests are independent; state travels as explicit identifiers (e.g. a tool-level handle)",
        spec: "basic/transports/streamable-http.mdx; basic/index.mdx §Statelessness",
        dual: HTTP,
    },
    Rule {
        id: "MIG-8",
        what: "the GET SSE stream on the MCP endpoint (or the HTTP+SSE transport)",
        replacement: "`subscriptions/listen` over POST; a modern server answers GET with 405",
        spec: "basic/patterns/subscriptions.mdx; basic/transports/streamable-http.mdx §Earlier Streamable HTTP Revisions",
        dual: &["subscriptions/listen", "SubscriptionsListen", "subscriptions_listen", "(?i)\\bmcp-method\\b"],
    },
    Rule {
        id: "MIG-9",
        what: "DELETE to end a session",
        replacement: "none: there is no session to end; a modern server answers DELETE with 405",
        spec: "basic/transports/streamable-http.mdx §Earlier Streamable HTTP Revisions",
        dual: HTTP,
    },
    Rule {
        id: "MIG-10",
        what: "`Last-Event-ID` stream resumption",
        replacement: "none: the request of a broken stream is sent again with a new id (durable work: the Tasks extension)",
        spec: "basic/transports/streamable-http.mdx; changelog.mdx",
        dual: HTTP,
    },
    Rule {
        id: "MIG-11",
        what: "error code -32003 (a draft code for a missing client capability)",
        replacement: "-32021 MissingRequiredClientCapability, with `data.requiredCapabilities`",
        spec: "basic/index.mdx §Error Codes",
        dual: &["-32021\\b"],
    },
    Rule {
        id: "MIG-12",
        what: "error code -32004 (a draft code for an unsupported protocol version)",
        replacement: "-32022 UnsupportedProtocolVersion, with `data.supported` and `data.requested`",
        spec: "basic/index.mdx §Error Codes",
        dual: &["-32022\\b"],
    },
    Rule {
        id: "MIG-13",
        what: "error code -32002 (resource not found)",
        replacement: "-32602 Invalid params, with `data.uri` (a client may still accept -32002 from a legacy server)",
        spec: "basic/index.mdx §Error Codes; server/resources.mdx §Error Handling",
        dual: &["-32602\\b"],
    },
    Rule {
        id: "MIG-14",
        what: "a manifest pins `@modelcontextprotocol/sdk` 1.x (it implements MCP up to 2025-11-25)",
        replacement: "the v2 TypeScript SDK: `@modelcontextprotocol/server` / `@modelcontextprotocol/client` 2.x",
        spec: "basic/versioning.mdx §Backward Compatibility",
        dual: &[],
    },
    Rule {
        id: "MIG-15",
        what: "a manifest pins the Python SDK `mcp` below 2",
        replacement: "`mcp` 2.x (2.3 serves both eras)",
        spec: "basic/versioning.mdx §Backward Compatibility",
        dual: &[],
    },
    Rule {
        id: "MIG-16",
        what: "error code -32001 (a draft code, and 2025-era SDKs' answer to an unknown session)",
        replacement: "-32020 HeaderMismatch for a header that disagrees with the body; nothing for a session, as there are none (-32001 is reserved: never emitted)",
        spec: "basic/index.mdx §Error Codes",
        dual: &["-32020\\b"],
    },
];

/// The rule with this id.
pub(crate) fn rule(id: &str) -> &'static Rule {
    RULES.iter().find(|rule| rule.id == id).unwrap_or(&RULES[0])
}

/// How a pattern finds a use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Matcher {
    /// A string literal whose whole content is this text (`"initialize"`, `'ping'`).
    Literal(&'static str),
    /// One of these identifiers, whole (not part of a longer identifier).
    Ident(&'static [&'static str]),
    /// A regular expression, anywhere in the file (code, string or comment).
    Text(&'static str),
    /// The negative integer literal `-N`, not inside a longer number.
    Code(u32),
}

/// One way of finding a rule's uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pattern {
    /// The rule it finds.
    pub rule: &'static str,
    /// How.
    pub matcher: Matcher,
    /// True when the words are common outside MCP: it fires only in a file that names MCP, or in
    /// a tree whose manifests do ([`super::scan`]).
    pub gated: bool,
    /// A regular expression the file must also hold (anywhere), e.g. the session header for a
    /// DELETE handler.
    pub requires: Option<&'static str>,
    /// A regular expression that, found on the use's line or the 8 after it, makes the use a
    /// note: a GET or DELETE handler answering 405 is what 2026-07-28 asks for.
    pub answered: Option<&'static str>,
    /// A regular expression that, matching right after the use, drops it: the SDKs' stateless
    /// mode (`sessionIdGenerator: undefined`, `session_id_generator=None`) mints no session.
    pub unless_followed_by: Option<&'static str>,
}

const fn text(rule: &'static str, regex: &'static str) -> Pattern {
    Pattern {
        rule,
        matcher: Matcher::Text(regex),
        gated: false,
        requires: None,
        answered: None,
        unless_followed_by: None,
    }
}

const fn gated(rule: &'static str, matcher: Matcher) -> Pattern {
    Pattern { rule, matcher, gated: true, requires: None, answered: None, unless_followed_by: None }
}

/// A GET or DELETE handler or request, in a file that also holds `requires`.
const fn http(rule: &'static str, regex: &'static str, requires: &'static str) -> Pattern {
    Pattern {
        rule,
        matcher: Matcher::Text(regex),
        gated: true,
        requires: Some(requires),
        answered: Some("\\b405\\b|(?i)method ?not ?allowed|METHOD_NOT_ALLOWED"),
        unless_followed_by: None,
    }
}

/// `method: "NAME"`, `"method":"NAME"`, `method="NAME"`, `method == 'NAME'` (also with escaped
/// quotes, inside a JSON string).
macro_rules! method_is {
    ($name:literal) => {
        concat!("\\bmethod\\\\?[\"']?\\s*(?::|==?=?)\\s*\\\\?[\"'`]", $name, "\\\\?[\"'`]")
    };
}

/// `NAME` as a branch of a dispatch on the method: `case "NAME":` (JavaScript, Go, Python's
/// `match`), `"NAME" =>` (Rust), `"NAME" |` (one of several patterns of a Rust arm).
macro_rules! case_label {
    ($name:literal) => {
        concat!("\\bcase\\s+[\"'`]", $name, "[\"'`]\\s*:|[\"']", $name, "[\"']\\s*(?:=>|\\|)")
    };
}

const SESSION: &str = "(?i)mcp-session-id";
const SESSION_OR_SSE: &str = "(?i)mcp-session-id|text/event-stream";

/// Every pattern. The identifiers are the names the TypeScript SDK 1.x and the Python SDK give
/// the removed methods (`SubscribeRequestSchema`, `subscribe_resource`, …): an SDK-built server
/// rarely spells the method names out.
pub(crate) const PATTERNS: &[Pattern] = &[
    // MIG-1: initialize.
    gated("MIG-1", Matcher::Literal("initialize")),
    gated("MIG-1", Matcher::Text(method_is!("initialize"))),
    gated(
        "MIG-1",
        Matcher::Ident(&[
            "InitializeRequestSchema",
            "InitializeRequestParamsSchema",
            "InitializeResultSchema",
            "isInitializeRequest",
            "InitializeRequest",
            "InitializeRequestParams",
            "InitializeResult",
        ]),
    ),
    // MIG-2: notifications/initialized.
    text("MIG-2", "notifications/initialized\\b"),
    gated(
        "MIG-2",
        Matcher::Ident(&[
            "InitializedNotificationSchema",
            "InitializedNotification",
            "isInitializedNotification",
            "oninitialized",
        ]),
    ),
    // MIG-3: ping.
    gated("MIG-3", Matcher::Text(method_is!("ping"))),
    gated("MIG-3", Matcher::Text(case_label!("ping"))),
    gated("MIG-3", Matcher::Ident(&["PingRequestSchema", "PingRequest", "send_ping"])),
    // MIG-4: logging/setLevel.
    text("MIG-4", "logging/setLevel\\b"),
    gated(
        "MIG-4",
        Matcher::Ident(&["SetLevelRequestSchema", "SetLevelRequest", "set_logging_level", "setLoggingLevel"]),
    ),
    // MIG-5: resources/subscribe and resources/unsubscribe.
    text("MIG-5", "resources/(?:un)?subscribe\\b"),
    gated(
        "MIG-5",
        Matcher::Ident(&[
            "SubscribeRequestSchema",
            "SubscribeRequest",
            "UnsubscribeRequestSchema",
            "UnsubscribeRequest",
            "subscribe_resource",
            "unsubscribe_resource",
            "subscribeResource",
            "unsubscribeResource",
        ]),
    ),
    // MIG-6: notifications/roots/list_changed.
    text("MIG-6", "(?:notifications/)?roots/list_changed\\b"),
    gated(
        "MIG-6",
        Matcher::Ident(&[
            "RootsListChangedNotificationSchema",
            "RootsListChangedNotification",
            "sendRootsListChanged",
            "send_roots_list_changed",
        ]),
    ),
    // MIG-7: the session header.
    text("MIG-7", "(?i)\\bmcp-session-id\\b"),
    gated(
        "MIG-7",
        Matcher::Ident(&[
            "MCP_SESSION_ID_HEADER",
            "MCP_SESSION_ID",
            "mcp_session_id",
            // The stateful transport's hooks on a session's start and end.
            "onsessioninitialized",
            "onsessionclosed",
        ]),
    ),
    // The stateful transport's option, the id it mints; set to nothing, it is the stateless
    // mode (TypeScript SDK 1.x, Python SDK), no session at all.
    Pattern {
        unless_followed_by: Some("\\s*[:=]\\s*(?:undefined|void\\s+0|None|null)\\b"),
        ..gated("MIG-7", Matcher::Ident(&["sessionIdGenerator", "session_id_generator"]))
    },
    // MIG-8: the GET stream, and the HTTP+SSE transport before it. A route is one registered on
    // an app or a router with a path that looks like the MCP endpoint.
    http(
        "MIG-8",
        "\\b(?:app|router|route|server|api|mcp)\\s*\\.\\s*get\\s*\\(\\s*[\"'`][^\"'`\\n]*(?i:mcp|sse|stream|event)",
        SESSION_OR_SSE,
    ),
    http("MIG-8", "methods\\s*=\\s*\\[[^\\]\\n]*[\"']GET[\"']", SESSION_OR_SSE),
    http("MIG-8", "[\"'`]GET\\s+/[^\"'`\\n]*(?i:mcp|sse|stream|event)", SESSION_OR_SSE),
    http(
        "MIG-8",
        "\\b(?i:method)\\s*(?:===?|:)\\s*(?:[\"']GET[\"']|http\\.MethodGet)|\\bcase\\s+(?:[\"']GET[\"']|http\\.MethodGet)\\s*:",
        SESSION,
    ),
    gated("MIG-8", Matcher::Ident(&["SSEServerTransport", "SSEClientTransport", "SseServerTransport"])),
    gated("MIG-8", Matcher::Text("\\bmcp\\.(?:server|client)\\.sse\\b")),
    // MIG-9: DELETE.
    http("MIG-9", "\\b(?:app|router|route|server|api|mcp)\\s*\\.\\s*delete\\s*\\(\\s*[\"'`]", SESSION),
    http("MIG-9", "methods\\s*=\\s*\\[[^\\]\\n]*[\"']DELETE[\"']", SESSION),
    http("MIG-9", "[\"'`]DELETE\\s+/", SESSION),
    http(
        "MIG-9",
        "\\b(?i:method)\\s*(?:===?|:)\\s*(?:[\"']DELETE[\"']|http\\.MethodDelete)|\\bcase\\s+(?:[\"']DELETE[\"']|http\\.MethodDelete)\\s*:",
        SESSION,
    ),
    gated("MIG-9", Matcher::Ident(&["terminateSession", "terminate_session"])),
    // MIG-10: Last-Event-ID.
    gated("MIG-10", Matcher::Text("(?i)\\blast-event-id\\b")),
    gated(
        "MIG-10",
        Matcher::Ident(&["LAST_EVENT_ID_HEADER", "LAST_EVENT_ID", "replayEventsAfter", "replay_events_after"]),
    ),
    // MIG-11..13: the codes.
    gated("MIG-11", Matcher::Code(32003)),
    gated("MIG-12", Matcher::Code(32004)),
    gated("MIG-13", Matcher::Code(32002)),
    // MIG-16: -32001 only where it is sent (an error's `code`, an error built with it): SDK
    // clients also name their local request timeout -32001, which never goes on the wire.
    gated(
        "MIG-16",
        Matcher::Text("(?:\\bcode\\b[\"']?\\s*[:=]\\s*|(?:Error|Exception|ErrorData)\\s*\\(\\s*)-32001\\b"),
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_names_a_rule_and_every_regex_compiles() {
        for pattern in PATTERNS {
            assert!(RULES.iter().any(|rule| rule.id == pattern.rule), "{pattern:?}");
            if let Matcher::Text(regex) = pattern.matcher {
                regex::Regex::new(regex).unwrap_or_else(|error| panic!("{regex}: {error}"));
            }
            for regex in pattern.requires.iter().chain(pattern.answered.iter()).chain(pattern.unless_followed_by.iter())
            {
                regex::Regex::new(regex).unwrap_or_else(|error| panic!("{regex}: {error}"));
            }
        }
        for rule in RULES {
            for marker in rule.dual {
                regex::Regex::new(marker).unwrap_or_else(|error| panic!("{marker}: {error}"));
            }
        }
    }

    #[test]
    fn the_docs_page_lists_every_rule_with_its_replacement_and_spec_section() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/migration-scan.md");
        let page = std::fs::read_to_string(path).expect("docs/migration-scan.md");
        for rule in RULES {
            let row = page
                .lines()
                .find(|line| line.starts_with(&format!("| {} |", rule.id)))
                .unwrap_or_else(|| panic!("docs/migration-scan.md has no row for {}", rule.id));
            assert!(row.contains(rule.replacement), "{}: the row's replacement is not the catalogue's", rule.id);
            assert!(
                row.ends_with(&format!("| {} |", rule.spec)),
                "{}: the row's spec section is not the catalogue's",
                rule.id
            );
        }
    }

    #[test]
    fn ids_are_numbered_in_order_and_every_source_rule_has_a_pattern() {
        for (index, rule) in RULES.iter().enumerate() {
            assert_eq!(rule.id, format!("MIG-{}", index + 1));
            let manifest = matches!(rule.id, "MIG-14" | "MIG-15");
            assert_eq!(PATTERNS.iter().any(|pattern| pattern.rule == rule.id), !manifest, "{}", rule.id);
        }
    }
}
