//! Invalid arguments to a real tool: E-9, H-14, H-27 (Streamable HTTP) and X-6 (stdio).
//!
//! Only tools we may call are used (annotated `readOnlyHint: true` or listed in `safe_tools`),
//! and only those that answered their valid arguments with a successful result, so that an
//! answer to invalid arguments can be told apart from a tool that fails anyway. Three kinds of
//! schema violation are sent, each to the first such tool it applies to: `arguments` as a JSON
//! string of the valid object, a required property left out (when a schema has one), a property
//! of the wrong JSON type (when a schema types one). After each, the same call with valid
//! arguments must still be served.
//!
//! One broken thing is one finding (spec-notes §12.3):
//! - the server stopped answering after invalid arguments (a dead process, a 5xx or a failed
//!   connection afterwards): H-27 over HTTP, X-6 over stdio, and nothing else;
//! - it survived, but answered the invalid call with something that is not JSON-RPC (an HTML
//!   500 page): H-14, the content-type rule of Streamable HTTP;
//! - it answered in JSON-RPC, but neither `-32602` nor a result with `isError: true` (SEP-1303
//!   made tool execution errors the preferred answer to invalid arguments): E-9.
//!
//! The probe runs after every other family: a server that dies on invalid arguments takes no
//! other check down with it.

use serde_json::{Value, json};

use super::calls::{CALL_TIMEOUT, MAX_TOOLS};
use crate::conformance::context::{Context, SafeTool};
use crate::conformance::finding::Finding;
use crate::mcp::era::Era;
use crate::mcp::exchange::Exchange;
use crate::mcp::jsonrpc::{HEADER_MISMATCH, INVALID_PARAMS};
use crate::report::model::ToolErrorNotice;

/// The reason the rows of this probe are `not_applicable` when no tool may be called.
pub(crate) const NO_CALLABLE_TOOL: &str = "no tool may be called: no tool is annotated readOnlyHint or listed in safe_tools (of --config), so no invalid arguments were sent";

/// One way of breaking a tool's `inputSchema`.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// `arguments` sent as a JSON string holding the valid object.
    JsonString,
    /// A required property left out.
    MissingRequired(String),
    /// A property given a value of a JSON type its schema does not allow.
    WrongType {
        /// The property.
        property: String,
        /// The type(s) the schema allows, as written there.
        expected: String,
        /// The value sent instead.
        value: Value,
        /// The JSON type of `value`, in words.
        sent: &'static str,
    },
}

impl Kind {
    /// The kind in words, as messages name it.
    fn describe(&self) -> String {
        match self {
            Kind::JsonString => "arguments as a JSON string".into(),
            Kind::MissingRequired(property) => format!("the required argument `{property}` missing"),
            Kind::WrongType { property, expected, sent, .. } => {
                format!("argument `{property}` of the wrong type ({sent} where the schema says {expected})")
            }
        }
    }

    /// The invalid `arguments` made from the valid ones.
    fn arguments(&self, valid: &Value) -> Value {
        match self {
            Kind::JsonString => Value::String(valid.to_string()),
            Kind::MissingRequired(property) => {
                let mut arguments = valid.clone();
                if let Some(object) = arguments.as_object_mut() {
                    object.remove(property);
                }
                arguments
            }
            Kind::WrongType { property, value, .. } => {
                let mut arguments = if valid.is_object() { valid.clone() } else { json!({}) };
                arguments[property.as_str()] = value.clone();
                arguments
            }
        }
    }

    /// This kind for a tool's `inputSchema`, when the schema allows it.
    fn for_schema(template: &Kind, schema: &Value, valid: &Value) -> Option<Kind> {
        match template {
            Kind::JsonString => Some(Kind::JsonString),
            Kind::MissingRequired(_) => schema
                .get("required")
                .and_then(Value::as_array)?
                .iter()
                .find_map(Value::as_str)
                .map(|property| Kind::MissingRequired(property.to_owned())),
            Kind::WrongType { .. } => wrong_type(schema, valid),
        }
    }
}

/// A property the schema types, with a value of another type: properties that are not
/// mirrored into `Mcp-Param-*` headers first (one thing varies per probe), then those the
/// valid arguments carry.
fn wrong_type(schema: &Value, valid: &Value) -> Option<Kind> {
    let properties = schema.get("properties").and_then(Value::as_object)?;
    let mut typed: Vec<(&String, Vec<&str>)> = properties
        .iter()
        .filter_map(|(name, property)| {
            let types = match property.get("type")? {
                Value::String(kind) => vec![kind.as_str()],
                Value::Array(kinds) => kinds.iter().filter_map(Value::as_str).collect(),
                _ => return None,
            };
            (!types.is_empty()).then_some((name, types))
        })
        .collect();
    typed.sort_by_key(|(name, _)| {
        (properties[name.as_str()].get("x-mcp-header").is_some(), valid.get(name.as_str()).is_none())
    });
    // A value no lenient validator turns into the expected type: no numeric strings, no 0/1.
    let candidates: [(Value, &'static str, &[&str]); 5] = [
        (json!(12345), "a number", &["number", "integer"]),
        (json!("mcp-eval-wrong-type"), "a string", &["string"]),
        (json!({"mcp-eval": "wrong type"}), "an object", &["object"]),
        (json!(["mcp-eval-wrong-type"]), "an array", &["array"]),
        (json!(true), "a boolean", &["boolean"]),
    ];
    typed.into_iter().find_map(|(name, types)| {
        let (value, sent, _) =
            candidates.iter().find(|(_, _, kinds)| !kinds.iter().any(|kind| types.contains(kind)))?;
        Some(Kind::WrongType { property: name.clone(), expected: types.join(" or "), value: value.clone(), sent })
    })
}

/// True when an exchange is a successful, complete tool result: the tool works with these
/// arguments, so a refusal of invalid ones is about the arguments.
fn succeeded(exchange: &Exchange) -> bool {
    exchange.result().is_some_and(|result| {
        result.get("isError").and_then(Value::as_bool) != Some(true)
            && result.get("resultType").and_then(Value::as_str).is_none_or(|kind| kind == "complete")
    })
}

/// True when an exchange is a tool result with `isError: true`.
fn is_tool_error(exchange: &Exchange) -> bool {
    exchange.result().and_then(|result| result.get("isError")).and_then(Value::as_bool) == Some(true)
}

/// The notice of a tool that answered its valid arguments with `isError: true`: its name, the
/// arguments sent (at most 200 characters) and the text of the result's content blocks (at
/// most 500), which only `report.json` shows. `None` for any other answer.
fn tool_error(name: &str, arguments: &Value, exchange: &Exchange) -> Option<ToolErrorNotice> {
    if !is_tool_error(exchange) {
        return None;
    }
    let result = exchange.result()?;
    let texts: Vec<&str> = result
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| blocks.iter().filter_map(|block| block.get("text").and_then(Value::as_str)).collect())
        .unwrap_or_default();
    let error = if texts.is_empty() {
        format!("(no text content; the result's shape: {})", crate::conformance::finding::shape_of(Some(result)))
    } else {
        texts.join("\n")
    };
    Some(ToolErrorNotice {
        tool: crate::text::clip_chars(name, 200),
        arguments: crate::text::clip_chars(&arguments.to_string(), 200),
        error: crate::text::clip_chars(&error, 500),
    })
}

/// True when the server answered in JSON-RPC and not with a server error status: it is serving.
fn served(exchange: &Exchange) -> bool {
    exchange.response.is_some() && exchange.status.is_none_or(|status| status < 500)
}

/// True when the answer refuses the arguments as the spec asks: `-32602` (over HTTP also
/// `-32020`, when a header mirrors an argument and the server checks headers first), or a
/// result with `isError: true`.
fn refused(exchange: &Exchange, is_http: bool) -> bool {
    exchange.error_code() == Some(INVALID_PARAMS)
        || (is_http && exchange.error_code() == Some(HEADER_MISMATCH))
        || exchange.result().and_then(|result| result.get("isError")).and_then(Value::as_bool) == Some(true)
}

/// The answer in words, for messages.
fn answer(exchange: &Exchange) -> String {
    match exchange.result() {
        Some(result) if result.get("isError").and_then(Value::as_bool) == Some(true) => {
            "a result with `isError: true`".into()
        }
        Some(result) => format!(
            "a result without `isError` (resultType {}): the tool ran on arguments its inputSchema forbids",
            result.get("resultType").map_or_else(|| "absent".into(), Value::to_string)
        ),
        // "got no answer (could not connect: …)", never "got could not connect".
        None if exchange.unanswered() => format!("no answer ({})", exchange.describe()),
        None => exchange.describe(),
    }
}

/// One invalid call and the valid call after it.
struct Attempt {
    tool: String,
    kind: Kind,
    invalid: Exchange,
    after: Exchange,
}

/// E-9, H-14, H-27 / X-6 on invalid tool arguments.
pub(crate) async fn run(ctx: &Context) -> Vec<Finding> {
    let is_http = ctx.is_http();
    let survival = if is_http { "H-27" } else { "X-6" };
    let tools: Vec<&SafeTool> = ctx.safe_tools.iter().take(MAX_TOOLS).collect();
    if tools.is_empty() {
        // X-6 keeps the finding of its own probe; only H-27 has no other evidence.
        return if is_http { vec![Finding::not_applicable("H-27", NO_CALLABLE_TOOL)] } else { Vec::new() };
    }
    let call = |name: &str, arguments: Value| {
        let mut request = ctx.request("tools/call", json!({"name": name, "arguments": arguments}));
        request.timeout = Some(CALL_TIMEOUT.min(ctx.client_timeout()));
        ctx.client.send(request)
    };
    // Whether each tool answered its valid arguments with a successful result (asked once).
    let mut working: Vec<(String, bool)> = Vec::new();
    let mut first_failure: Option<(String, Value, Exchange)> = None;
    let mut tool_errors: Vec<ToolErrorNotice> = Vec::new();
    let mut attempts: Vec<Attempt> = Vec::new();
    let templates = [
        Kind::JsonString,
        Kind::MissingRequired(String::new()),
        Kind::WrongType { property: String::new(), expected: String::new(), value: Value::Null, sent: "" },
    ];
    'kinds: for template in &templates {
        for tool in &tools {
            let definition = ctx
                .tools
                .items
                .iter()
                .find(|item| item.get("name").and_then(Value::as_str) == Some(tool.name.as_str()));
            let schema = definition.and_then(|definition| definition.get("inputSchema").cloned()).unwrap_or(json!({}));
            let Some(kind) = Kind::for_schema(template, &schema, &tool.arguments) else { continue };
            let works = match working.iter().find(|(name, _)| *name == tool.name) {
                Some((_, works)) => *works,
                None => {
                    let baseline = call(&tool.name, tool.arguments.clone()).await;
                    let works = succeeded(&baseline);
                    if let Some(notice) = tool_error(&tool.name, &tool.arguments, &baseline) {
                        tool_errors.push(notice);
                    }
                    if !works && first_failure.is_none() {
                        first_failure = Some((tool.name.clone(), tool.arguments.clone(), baseline));
                    }
                    working.push((tool.name.clone(), works));
                    works
                }
            };
            if !works {
                continue;
            }
            let invalid = call(&tool.name, kind.arguments(&tool.arguments)).await;
            let after = call(&tool.name, tool.arguments.clone()).await;
            let alive = served(&after);
            attempts.push(Attempt { tool: tool.name.clone(), kind, invalid, after });
            if !alive {
                // Nothing more can be learnt from a server that stopped answering.
                break 'kinds;
            }
            continue 'kinds;
        }
    }
    if attempts.is_empty() {
        // No call succeeded: say so for every tool that answered `isError: true`, whatever the
        // transport (the rows that need a successful call are only not applicable otherwise).
        crate::mcp::sync::lock(&ctx.tool_errors).extend(tool_errors);
        if !is_http {
            return Vec::new();
        }
        // Say what was sent and the fix: the arguments are ours (generated from the schema) or
        // the config file's, and `safe_tools` is where the user gives ones the tool accepts.
        let finding = match &first_failure {
            Some((name, arguments, exchange)) => Finding::not_applicable(
                "H-27",
                format!(
                    "no callable tool answered its valid arguments with a successful result (`{name}` with arguments `{}` got {}), so an answer to invalid arguments could not be told apart; give the tool arguments it accepts under `safe_tools` in the config file (--config, e.g. `safe_tools: [{{name: {name}, arguments: {{…}}}}]`){}",
                    crate::text::clip(&arguments.to_string(), 200),
                    answer(exchange),
                    if is_tool_error(exchange) { "; the error text is in report.json (`server.tool_errors`)" } else { "" }
                ),
            )
            .with(exchange),
            None => Finding::not_applicable("H-27", "no callable tool answered its valid arguments with a successful result"),
        };
        return vec![finding];
    }
    grade(&attempts, survival, is_http, ctx.era)
}

/// The findings of the attempts made: at most one per rule, and one rule per broken thing.
fn grade(attempts: &[Attempt], survival: &'static str, is_http: bool, era: Era) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut refusals = Vec::new();
    let mut wrong_answer: Option<Finding> = None;
    let mut not_json_rpc: Option<Finding> = None;
    for attempt in attempts {
        let Attempt { tool, kind, invalid, after } = attempt;
        let kind = kind.describe();
        if !served(after) {
            // The one broken thing: whatever the invalid call itself got is part of it.
            findings.push(
                Finding::broken(
                    survival,
                    format!(
                        "the server stopped answering after invalid arguments: `{tool}` with {kind} got {}; the same call with valid arguments then got {}",
                        invalid.describe(),
                        after.describe()
                    ),
                )
                .with(invalid)
                .with(after),
            );
            continue;
        }
        if refused(invalid, is_http) {
            refusals.push(format!("`{tool}` with {kind} got {}", short(invalid)));
        } else if let Some(status) =
            invalid.status.filter(|_| invalid.response.is_none() && !json_content_type(invalid))
        {
            let content_type = invalid
                .content_type()
                .map_or_else(|| "no Content-Type".into(), |media_type| format!("Content-Type `{media_type}`"));
            not_json_rpc.get_or_insert_with(|| {
                Finding::broken(
                    "H-14",
                    format!(
                        "`{tool}` with {kind} was answered HTTP {status} with {content_type} instead of a JSON-RPC response: a Streamable HTTP response to a request is application/json or text/event-stream (and invalid arguments SHOULD get -32602 or a result with `isError: true`)"
                    ),
                )
                .with(invalid)
            });
        } else {
            wrong_answer.get_or_insert_with(|| {
                Finding::broken(
                    "E-9",
                    format!(
                        "invalid tool arguments SHOULD get -32602 or a result with `isError: true`: `{tool}` with {kind} got {}",
                        answer(invalid)
                    ),
                )
                .with(invalid)
            });
        }
    }
    if findings.is_empty() {
        let kinds: Vec<String> = attempts.iter().map(|attempt| attempt.kind.describe()).collect();
        findings.push(Finding::kept(
            survival,
            format!(
                "the server kept serving after invalid tool arguments ({}): the same calls with valid arguments were answered",
                kinds.join("; ")
            ),
        ));
    }
    findings.extend(not_json_rpc);
    // E-9 is a 2026-07-28 row (a legacy server's is its migration list, graded by the
    // method-level probes alone).
    if era == Era::Modern {
        match wrong_answer {
            Some(finding) => findings.push(finding),
            None if !refusals.is_empty() => {
                findings.push(Finding::kept(
                    "E-9",
                    format!("invalid tool arguments were refused: {}", refusals.join("; ")),
                ));
            }
            None => {}
        }
    }
    findings
}

/// True when the response's media type is one a Streamable HTTP response may have.
fn json_content_type(exchange: &Exchange) -> bool {
    matches!(exchange.content_type().as_deref(), Some("application/json" | "text/event-stream"))
}

/// A refusal in a few words.
fn short(exchange: &Exchange) -> String {
    match exchange.error_code() {
        Some(code) => format!("JSON-RPC error {code}"),
        None => "a result with `isError: true`".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(response: Value) -> Exchange {
        Exchange { response: Some(response), ..Exchange::default() }
    }

    fn html_500() -> Exchange {
        Exchange {
            status: Some(500),
            headers: vec![("content-type".into(), "text/html".into())],
            body_excerpt: "<html><body>500</body></html>".into(),
            failure: Some(crate::mcp::exchange::Failure::NotJsonRpc("not JSON".into())),
            ..Exchange::default()
        }
    }

    fn ok() -> Exchange {
        exchange(json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "content": []}}))
    }

    fn attempt(kind: Kind, invalid: Exchange, after: Exchange) -> Attempt {
        Attempt { tool: "t".into(), kind, invalid, after }
    }

    fn ids(findings: &[Finding]) -> Vec<(&str, crate::conformance::finding::Outcome)> {
        findings.iter().map(|finding| (finding.id, finding.outcome)).collect()
    }

    use crate::conformance::finding::Outcome::{Broken, Kept};

    #[test]
    fn the_kinds_are_made_from_the_schema_and_the_valid_arguments() {
        let schema = json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "count": {"type": "integer"},
                "label": {"type": ["string", "null"]},
            },
            "required": ["region"],
        });
        let valid = json!({"region": "eu", "label": "x"});
        assert_eq!(Kind::JsonString.arguments(&valid), json!(valid.to_string()));
        let missing = Kind::for_schema(&Kind::MissingRequired(String::new()), &schema, &valid).expect("required");
        assert_eq!(missing.arguments(&valid), json!({"label": "x"}));
        // Not the header-mirrored property; the one the valid arguments carry first.
        let wrong = wrong_type(&schema, &valid).expect("a typed property");
        assert_eq!(wrong.arguments(&valid), json!({"region": "eu", "label": 12345}));
        assert!(wrong.describe().contains("a number where the schema says string or null"), "{}", wrong.describe());
        let count = wrong_type(&json!({"properties": {"count": {"type": "integer"}}}), &json!({})).expect("count");
        assert_eq!(count.arguments(&json!({})), json!({"count": "mcp-eval-wrong-type"}));
        assert_eq!(Kind::for_schema(&Kind::MissingRequired(String::new()), &json!({"type": "object"}), &valid), None);
        assert_eq!(wrong_type(&json!({"properties": {"unit": {"$ref": "#/$defs/unit"}}}), &json!({})), None);
    }

    #[test]
    fn refusals_keep_e9_and_the_survival_rule() {
        let invalid = exchange(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "bad"}}));
        let tool_error = exchange(json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [], "isError": true}}));
        let attempts = [
            attempt(Kind::JsonString, invalid, ok()),
            attempt(Kind::MissingRequired("region".into()), tool_error, ok()),
        ];
        let findings = grade(&attempts, "H-27", true, Era::Modern);
        assert_eq!(ids(&findings), [("H-27", Kept), ("E-9", Kept)]);
        assert!(
            findings[1]
                .message
                .contains("with the required argument `region` missing got a result with `isError: true`")
        );
    }

    #[test]
    fn an_html_500_that_the_server_survives_is_h14_only() {
        let findings = grade(&[attempt(Kind::JsonString, html_500(), ok())], "H-27", true, Era::Modern);
        assert_eq!(ids(&findings), [("H-27", Kept), ("H-14", Broken)]);
        assert!(
            findings[1].message.contains("with arguments as a JSON string was answered HTTP 500"),
            "{}",
            findings[1].message
        );
        assert!(findings[1].message.contains("`text/html`"));
    }

    #[test]
    fn a_server_that_stops_answering_is_one_finding_under_the_survival_rule() {
        let dead = Exchange {
            failure: Some(crate::mcp::exchange::Failure::Exited("stdout closed".into())),
            ..Exchange::default()
        };
        let findings = grade(&[attempt(Kind::JsonString, dead.clone(), dead)], "X-6", false, Era::Modern);
        assert_eq!(ids(&findings), [("X-6", Broken)]);
        assert!(
            findings[0].message.starts_with(
                "the server stopped answering after invalid arguments: `t` with arguments as a JSON string"
            )
        );
        // An HTML page before the end is part of the same broken thing.
        let refused = Exchange { status: Some(502), ..html_500() };
        let findings = grade(&[attempt(Kind::JsonString, html_500(), refused)], "H-27", true, Era::Modern);
        assert_eq!(ids(&findings), [("H-27", Broken)]);
    }

    #[test]
    fn an_accepted_invalid_argument_breaks_e9_on_modern_servers_only() {
        let attempts = [attempt(Kind::JsonString, ok(), ok())];
        let findings = grade(&attempts, "H-27", true, Era::Modern);
        assert_eq!(ids(&findings), [("H-27", Kept), ("E-9", Broken)]);
        assert!(findings[1].message.contains("the tool ran on arguments its inputSchema forbids"));
        let internal = exchange(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "boom"}}));
        let findings = grade(&[attempt(Kind::JsonString, internal, ok())], "X-6", false, Era::Modern);
        assert!(findings[1].message.contains("JSON-RPC error -32603"), "{}", findings[1].message);
        assert_eq!(ids(&grade(&attempts, "H-27", true, Era::Legacy)), [("H-27", Kept)]);
    }

    #[test]
    fn a_call_that_got_no_answer_reads_as_no_answer() {
        // Was "`get_weather` … got could not connect: …" in H-27's reason.
        let refused = Exchange {
            failure: Some(crate::mcp::exchange::Failure::Connect("connection refused".into())),
            ..Exchange::default()
        };
        assert_eq!(answer(&refused), "no answer (could not connect: connection refused)");
        assert_eq!(answer(&html_500()), html_500().describe(), "an answer is described as before");
    }
}
