//! Streamable HTTP rules: H-1..H-13, H-18..H-26 (H-14..H-17 are passive). Every probe that
//! needs a tool name uses one that does not exist, so a server that validates headers before
//! dispatch rejects it and one that does not answers "unknown tool", which shows it did not.

use base64::Engine;
use serde_json::{Value, json};

use super::discovery::{accept_finding, reject_finding};
use super::{NO_SUCH_TOOL, modern};
use crate::conformance::context::Context;
use crate::conformance::expect;
use crate::conformance::finding::Finding;
use crate::mcp::era::Era;
use crate::mcp::exchange::{Body, Exchange, Outgoing};
use crate::mcp::jsonrpc::{self, HEADER_MISMATCH, METHOD_NOT_FOUND, PROTOCOL_VERSION};

/// All the HTTP probes (not applicable over stdio).
pub(crate) async fn run(ctx: &Context) -> Vec<Finding> {
    if !ctx.is_http() {
        return [
            "H-1", "H-2", "H-3", "H-4", "H-5", "H-6", "H-7", "H-8", "H-9", "H-10", "H-11", "H-13", "H-18", "H-19",
            "H-20", "H-21", "H-22", "H-24", "H-25", "H-26", "H-14", "H-15", "H-16", "H-17", "E-7", "E-8",
        ]
        .into_iter()
        .map(|id| Finding::not_applicable(id, "a Streamable HTTP rule; the server under test speaks stdio"))
        .collect();
    }
    // The endpoint's probes first (E-8's at their head): of the probes under way when a server
    // died, the first sent is named (see [`crate::conformance::survival`]).
    let (a, b, c, d) = tokio::join!(endpoint(ctx), version_and_method(ctx), names(ctx), param_headers(ctx));
    [a, b, c, d].into_iter().flatten().collect()
}

/// A probe of the HTTP rules, under way: its findings.
type Probe<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = Vec<Finding>> + 'a>>;

fn call(name: &str) -> Value {
    jsonrpc::modern_request("tools/call", json!({"name": name, "arguments": {}}))
}

/// True when the server accepted the header (anything but a -32020 / header rejection).
fn accepted(exchange: &Exchange) -> bool {
    exchange.error_code() != Some(HEADER_MISMATCH)
        && exchange.status.is_some_and(|status| status < 500)
        && exchange.response.is_some()
}

/// True for the answer a 2025-era Streamable HTTP server gives a request it cannot place (no
/// session): HTTP 400 or 404 with a JSON-RPC error of the older revisions (`-32600`, `-32000`,
/// `-32001`), not one of 2026-07-28's codes.
fn legacy_answer(exchange: &Exchange) -> bool {
    matches!(exchange.status, Some(400 | 404)) && matches!(exchange.error_code(), Some(-32600 | -32000 | -32001))
}

fn header_reject(id: &'static str, what: &str, exchange: &Exchange) -> Finding {
    reject_finding(id, what, exchange, HEADER_MISMATCH, Some(400))
}

/// The header probes call a made-up tool: a result, or the handler's `-32602` for the unknown
/// tool, shows the request got past the header checks. Any other error (say, `-32603` from a
/// server that fails everything) shows nothing either way: no evidence, no pass.
fn header_accept(id: &'static str, what: &str, exchange: &Exchange) -> Finding {
    let dispatched = exchange.result().is_some() || exchange.error_code() == Some(crate::mcp::jsonrpc::INVALID_PARAMS);
    if !accepted(exchange) {
        Finding::broken(id, format!("{what} must be accepted; got {}", exchange.describe()))
    } else if dispatched {
        Finding::kept(id, format!("{what}: accepted ({})", exchange.describe()))
    } else {
        Finding::not_applicable(
            id,
            format!("{what}: the answer ({}) shows neither acceptance nor refusal of the header", exchange.describe()),
        )
    }
    .with(exchange)
}

async fn version_and_method(ctx: &Context) -> Vec<Finding> {
    let blocks: Vec<Probe<'_>> = vec![
        Box::pin(h1_meta_version_mismatch(ctx)),
        Box::pin(h2_no_version_header(ctx)),
        Box::pin(h3_to_h5_method_header(ctx)),
        Box::pin(h6_header_name_case(ctx)),
        Box::pin(h13_removed_methods(ctx)),
    ];
    futures_util::future::join_all(blocks).await.into_iter().flatten().collect()
}

/// H-1: header and _meta disagree; -32020, not -32022.
async fn h1_meta_version_mismatch(ctx: &Context) -> Vec<Finding> {
    let client = &ctx.modern;
    let mut findings = Vec::new();
    let request = jsonrpc::with_meta_version(jsonrpc::modern_request("server/discover", json!({})), "2099-01-01");
    let exchange = ctx
        .probe(
            client,
            "H-1",
            "a `_meta` protocolVersion that disagrees with the header",
            Outgoing::request(request).set("MCP-Protocol-Version", PROTOCOL_VERSION),
        )
        .await;
    findings.push(header_reject("H-1", "header 2026-07-28 with `_meta` protocolVersion 2099-01-01", &exchange));
    findings
}

/// H-2: no version header.
async fn h2_no_version_header(ctx: &Context) -> Vec<Finding> {
    let client = &ctx.modern;
    let mut findings = Vec::new();
    let exchange = ctx
        .probe(
            client,
            "H-2",
            "a request without `MCP-Protocol-Version`",
            modern("server/discover", json!({})).remove("MCP-Protocol-Version"),
        )
        .await;
    let h2 = if expect::header_rejected(&exchange) && exchange.status == Some(400) {
        Finding::kept("H-2", format!("a request without `MCP-Protocol-Version` got {}", exchange.describe()))
    } else if exchange.error_code() == Some(METHOD_NOT_FOUND) {
        Finding::kept(
            "H-2",
            "without the header the server treated the request as 2025-03-26 (allowed: MAY), so `server/discover` is unknown",
        )
    } else if ctx.era == crate::mcp::era::Era::Modern && legacy_answer(&exchange) {
        // A modern server that still serves pre-2025-06-18 clients (a dual-era server)
        // MAY take a header-less request as 2025-03-26, and then answers it as a
        // 2025-era server does (a session is missing): information, not a failure. A
        // legacy-only server's answer stays on its migration list.
        let listed: Vec<&String> =
            ctx.supported_versions.iter().filter(|version| version.as_str() < "2025-06-18").collect();
        let why = if listed.is_empty() { String::new() } else { format!("; it lists {listed:?} in supportedVersions") };
        Finding::kept(
            "H-2",
            format!(
                "without the header the server answered as a 2025-era server would ({}): it treated the request as 2025-03-26, which a server serving older clients MAY do{why}",
                exchange.describe()
            ),
        )
    } else {
        Finding::broken(
            "H-2",
            format!("a request without `MCP-Protocol-Version` must get HTTP 400 + -32020; got {}", exchange.describe()),
        )
    };
    findings.push(h2.with(&exchange));
    findings
}

/// H-3..H-5 on tools/list.
async fn h3_to_h5_method_header(ctx: &Context) -> Vec<Finding> {
    let client = &ctx.modern;
    let mut findings = Vec::new();
    let exchange = ctx
        .probe(client, "H-3", "`tools/list` without `Mcp-Method`", modern("tools/list", json!({})).remove("Mcp-Method"))
        .await;
    findings.push(header_reject("H-3", "`tools/list` without `Mcp-Method`", &exchange));
    let exchange = ctx
        .probe(
            client,
            "H-4",
            "body `tools/list` with `Mcp-Method: prompts/list`",
            modern("tools/list", json!({})).set("Mcp-Method", "prompts/list"),
        )
        .await;
    findings.push(header_reject("H-4", "body `tools/list` with `Mcp-Method: prompts/list`", &exchange));
    let exchange = ctx
        .probe(
            client,
            "H-5",
            "`Mcp-Method: TOOLS/LIST`",
            modern("tools/list", json!({})).set("Mcp-Method", "TOOLS/LIST"),
        )
        .await;
    findings.push(header_reject("H-5", "`Mcp-Method: TOOLS/LIST` (values are case-sensitive)", &exchange));
    findings
}

/// H-6: header names in other cases, through the raw writer (on discover: any method shows
/// it, and discover's answer stays small however many tools a server has).
async fn h6_header_name_case(ctx: &Context) -> Vec<Finding> {
    let client = &ctx.modern;
    let mut findings = Vec::new();
    let lower = ctx
        .probe(
            client,
            "H-6",
            "lower-case header names",
            modern("server/discover", json!({}))
                .remove("Mcp-Method")
                .set("mcp-method", "server/discover")
                .remove("MCP-Protocol-Version")
                .set("mcp-protocol-version", PROTOCOL_VERSION)
                .raw(),
        )
        .await;
    let upper = ctx
        .probe(
            client,
            "H-6",
            "an upper-case `MCP-METHOD` header name",
            modern("server/discover", json!({})).remove("Mcp-Method").set("MCP-METHOD", "server/discover").raw(),
        )
        .await;
    let h6 = match (expect::result(&lower), expect::result(&upper)) {
        (Ok(_), Ok(_)) => Finding::kept("H-6", "`mcp-method` and `MCP-METHOD` were both accepted").with(&lower),
        (Err(message), _) => {
            Finding::broken("H-6", format!("lower-case header names must be accepted: {message}")).with(&lower)
        }
        (_, Err(message)) => {
            Finding::broken("H-6", format!("upper-case header names must be accepted: {message}")).with(&upper)
        }
    };
    findings.push(h6);
    findings
}

/// H-13: unknown and removed methods → 404 + -32601. A dual-era server may answer initialize.
/// The methods are probed at once: against a server that holds every answer open,
/// one after another would take one timeout each.
async fn h13_removed_methods(ctx: &Context) -> Vec<Finding> {
    let client = &ctx.modern;
    let mut findings = Vec::new();
    let methods = [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "tasks/list",
        "tasks/result",
        "foo/bar",
    ];
    let exchanges = futures_util::future::join_all(methods.iter().map(|&method| {
        let params = if method == "initialize" {
            json!({"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": jsonrpc::client_info()})
        } else {
            json!({})
        };
        ctx.probe(client, "H-13", "a removed or unknown method", modern(method, params))
    }))
    .await;
    let mut broken = Vec::new();
    let mut dual_era = false;
    let mut evidence = None;
    // An answer that cannot be read is M-11's: it breaks H-13 only when nothing else does.
    let mut unread = None;
    for (method, exchange) in methods.into_iter().zip(exchanges) {
        if method == "initialize" && exchange.result().is_some() {
            dual_era = true;
            continue;
        }
        if let Err(message) = expect::error(&exchange, METHOD_NOT_FOUND, Some(404)) {
            if exchange.unreadable_answer().is_some() {
                unread = unread.or(Some((format!("`{method}`: {message}"), exchange)));
                continue;
            }
            broken.push(format!("`{method}`: {message}"));
            evidence = evidence.or(Some(exchange));
        }
    }
    if let (true, Some((message, exchange))) = (broken.is_empty(), unread) {
        broken.push(message);
        evidence = Some(exchange);
    }
    let note = if dual_era { " (`initialize` was answered: dual-era, recorded, not a failure)" } else { "" };
    let h13 = if broken.is_empty() {
        Finding::kept("H-13", format!("removed and unknown methods got HTTP 404 + -32601{note}"))
    } else {
        Finding::broken("H-13", format!("{}{note}", broken.join("; ")))
    };
    findings.push(match evidence {
        Some(exchange) => h13.with(&exchange),
        None => h13,
    });
    findings
}

async fn names(ctx: &Context) -> Vec<Finding> {
    let client = &ctx.modern;
    let blocks: Vec<Probe<'_>> = vec![
        Box::pin(async {
            let mut findings = Vec::new();
            // H-7: Mcp-Name ≠ params.name (tools/call, prompts/get, resources/read), on names that do not exist.
            let mut broken = Vec::new();
            let mut evidence = None;
            // A probe that got no answer at all is no verdict on H-7 (the server stopped answering).
            let mut unanswered = None;
            let probes = [
                ("tools/call", json!({"name": NO_SUCH_TOOL, "arguments": {}})),
                ("prompts/get", json!({"name": super::NO_SUCH_PROMPT})),
                ("resources/read", json!({"uri": super::NO_SUCH_URI})),
            ];
            for (method, params) in probes {
                let exchange = ctx
                    .probe(
                        client,
                        "H-7",
                        "an `Mcp-Name` that disagrees with the body",
                        modern(method, params).set("Mcp-Name", "mcp-eval-probe-other-name"),
                    )
                    .await;
                if exchange.unanswered() {
                    unanswered = unanswered.or(Some(exchange));
                    continue;
                }
                if let Err(message) = expect::error(&exchange, HEADER_MISMATCH, Some(400)) {
                    broken.push(format!("`{method}` with a mismatched `Mcp-Name`: {message}"));
                    evidence = evidence.or(Some(exchange.clone()));
                }
                if evidence.is_none() && method == "tools/call" {
                    evidence = Some(exchange);
                }
            }
            let h7 = if let (true, Some(exchange)) = (broken.is_empty(), &unanswered) {
                Finding::not_applicable("H-7", format!("no answer: {}", exchange.describe())).with(exchange)
            } else if broken.is_empty() {
                Finding::kept(
                    "H-7",
                    "mismatched `Mcp-Name` got HTTP 400 + -32020 on tools/call, prompts/get and resources/read",
                )
            } else {
                Finding::broken("H-7", broken.join("; "))
            };
            findings.push(match evidence {
                Some(exchange) => h7.with(&exchange),
                None => h7,
            });
            findings
        }),
        Box::pin(async {
            let mut findings = Vec::new();
            // H-8: missing Mcp-Name.
            let exchange = ctx
                .probe(
                    client,
                    "H-8",
                    "`tools/call` without `Mcp-Name`",
                    Outgoing::request(call(NO_SUCH_TOOL)).remove("Mcp-Name"),
                )
                .await;
            findings.push(header_reject("H-8", "`tools/call` without `Mcp-Name`", &exchange));
            findings
        }),
        Box::pin(h9_base64_name(ctx)),
        Box::pin(async {
            let mut findings = Vec::new();
            // H-10: surrounding whitespace trimmed (raw writer keeps it).
            let exchange = ctx
                .probe(
                    client,
                    "H-10",
                    "`Mcp-Name` with surrounding whitespace",
                    Outgoing::request(call(NO_SUCH_TOOL)).set("Mcp-Name", &format!("  {NO_SUCH_TOOL}  ")).raw(),
                )
                .await;
            findings.push(header_accept("H-10", "`Mcp-Name` with surrounding whitespace", &exchange));
            findings
        }),
        Box::pin(async {
            let mut findings = Vec::new();
            // H-25: values not exactly in sentinel form are literal.
            let bare = base64::engine::general_purpose::STANDARD.encode(NO_SUCH_TOOL);
            let unclosed = format!("=?base64?{bare}");
            let bare_body = Outgoing::request(call(NO_SUCH_TOOL)).set("Mcp-Name", &bare);
            let exchange = ctx.probe(client, "H-25", "a bare base64 `Mcp-Name`", bare_body).await;
            let unclosed_exchange = ctx
                .probe(
                    client,
                    "H-25",
                    "an unclosed `=?base64?` `Mcp-Name`",
                    Outgoing::request(call(NO_SUCH_TOOL)).set("Mcp-Name", &unclosed),
                )
                .await;
            let h25 = if !expect::header_rejected(&exchange) {
                Finding::broken(
                    "H-25",
                    format!(
                        "a bare base64 `Mcp-Name` (no sentinel) must be compared literally (400 + -32020); got {}",
                        exchange.describe()
                    ),
                )
                .with(&exchange)
            } else if !expect::header_rejected(&unclosed_exchange) {
                Finding::broken(
                    "H-25",
                    format!(
                        "`=?base64?…` without the closing `?=` must be compared literally (400 + -32020); got {}",
                        unclosed_exchange.describe()
                    ),
                )
                .with(&unclosed_exchange)
            } else {
                Finding::kept("H-25", "values not exactly in sentinel form were compared literally").with(&exchange)
            };
            findings.push(h25);
            findings
        }),
    ];
    futures_util::future::join_all(blocks).await.into_iter().flatten().collect()
}

/// H-9: the base64 form of `Mcp-Name` decoded (accepted), bad base64 rejected.
async fn h9_base64_name(ctx: &Context) -> Vec<Finding> {
    let client = &ctx.modern;
    let mut findings = Vec::new();
    let encoded = format!("=?base64?{}?=", base64::engine::general_purpose::STANDARD.encode(NO_SUCH_TOOL));
    let accept = ctx
        .probe(
            client,
            "H-9",
            "`Mcp-Name` in base64 form",
            Outgoing::request(call(NO_SUCH_TOOL)).set("Mcp-Name", &encoded),
        )
        .await;
    // "SGVsbG8" is "Hello" without padding; the body names "Hello", so a lenient decoder matches.
    let padding = ctx
        .probe(
            client,
            "H-9",
            "`Mcp-Name` in base64 without padding",
            Outgoing::request(call("Hello")).set("Mcp-Name", "=?base64?SGVsbG8?="),
        )
        .await;
    let alphabet = ctx
        .probe(
            client,
            "H-9",
            "`Mcp-Name` in invalid base64",
            Outgoing::request(call("Hello")).set("Mcp-Name", "=?base64?SGVs!!!bG8=?="),
        )
        .await;
    let h9 = if !accepted(&accept) {
        Finding::broken(
            "H-9",
            format!("`Mcp-Name` in base64 form must be decoded and accepted; got {}", accept.describe()),
        )
        .with(&accept)
    } else if !expect::header_rejected(&padding) || padding.status != Some(400) {
        Finding::broken(
            "H-9",
            format!("invalid base64 (bad padding) must get HTTP 400 + -32020; got {}", padding.describe()),
        )
        .with(&padding)
    } else if !expect::header_rejected(&alphabet) || alphabet.status != Some(400) {
        Finding::broken(
            "H-9",
            format!("invalid base64 (non-alphabet characters) must get HTTP 400 + -32020; got {}", alphabet.describe()),
        )
        .with(&alphabet)
    } else {
        Finding::kept("H-9", "the base64 form was decoded; invalid base64 got HTTP 400 + -32020").with(&accept)
    };
    findings.push(h9);
    findings
}

/// H-11: `Mcp-Param-*` validation, on the first tool that declares `x-mcp-header`. Reject probes
/// execute nothing on a conformant server; accept probes run only on safe tools.
async fn param_headers(ctx: &Context) -> Vec<Finding> {
    let Some(tool) = ctx.header_tool() else {
        return vec![Finding::not_applicable("H-11", "no listed tool declares `x-mcp-header`")];
    };
    let name = tool.get("name").and_then(Value::as_str).unwrap_or("").to_owned();
    let Some((property, header)) =
        tool.pointer("/inputSchema/properties").and_then(Value::as_object).and_then(|properties| {
            properties
                .iter()
                .find_map(|(key, schema)| Some((key.clone(), schema.get("x-mcp-header")?.as_str()?.to_owned())))
        })
    else {
        return vec![Finding::not_applicable("H-11", "the `x-mcp-header` declaration is not a string")];
    };
    let safe = ctx.safe_tools.iter().find(|safe| safe.name == name);
    let mut arguments = safe.map(|safe| safe.arguments.clone()).unwrap_or_else(|| json!({}));
    let sample = arguments.get(&property).cloned().unwrap_or_else(|| json!("mcp-eval"));
    if let Some(object) = arguments.as_object_mut() {
        object.insert(property.clone(), sample.clone());
    }
    let header_name = format!("Mcp-Param-{header}");
    let body = jsonrpc::modern_request("tools/call", json!({"name": name, "arguments": arguments}));
    let missing = ctx
        .probe(
            &ctx.modern,
            "H-11",
            "a missing `Mcp-Param-*` header",
            Outgoing::request(body.clone()).remove(&header_name),
        )
        .await;
    let mismatch = ctx
        .probe(
            &ctx.modern,
            "H-11",
            "a mismatched `Mcp-Param-*` header",
            Outgoing::request(body.clone()).set(&header_name, "mcp-eval-mismatch"),
        )
        .await;
    let bad_base64 = ctx
        .probe(
            &ctx.modern,
            "H-11",
            "an `Mcp-Param-*` header in invalid base64",
            Outgoing::request(body.clone()).set(&header_name, "=?base64?SGVs!!!bG8=?="),
        )
        .await;
    for (what, exchange) in [("missing", &missing), ("mismatched", &mismatch), ("invalid base64", &bad_base64)] {
        if !expect::header_rejected(exchange) || exchange.status != Some(400) {
            return vec![Finding::broken("H-11", format!("tool `{name}`: a {what} `{header_name}` while `{property}` is in the body must get HTTP 400 + -32020; got {}", exchange.describe())).with(exchange)];
        }
    }
    if safe.is_none() && !crate::conformance::read_only(&tool) {
        return vec![Finding::kept("H-11", format!("tool `{name}`: missing, mismatched and invalid `{header_name}` were rejected (accept probes skipped: the tool is not read-only)")).with(&missing)];
    }
    let text = crate::mcp::http::header_text(&sample).unwrap_or_default();
    let encoded = format!("=?base64?{}?=", base64::engine::general_purpose::STANDARD.encode(text.as_bytes()));
    let accept = ctx
        .probe(
            &ctx.modern,
            "H-11",
            "an `Mcp-Param-*` header in base64 form",
            Outgoing::request(body).set(&header_name, &encoded),
        )
        .await;
    if !accepted(&accept) {
        return vec![
            Finding::broken(
                "H-11",
                format!("tool `{name}`: `{header_name}` in base64 form must be accepted; got {}", accept.describe()),
            )
            .with(&accept),
        ];
    }
    vec![Finding::kept("H-11", format!("tool `{name}`: missing, mismatched and invalid `{header_name}` were rejected; the base64 form was accepted")).with(&missing)]
}

/// The fix for H-21 on the SDKs known to serve a foreign Origin by default (said, not assumed).
pub(crate) const H21_SDK_HINT: &str = "If your server is built on the TypeScript SDK v2 (`createMcpHandler`), it checks no Origin by default: put an Origin check in front of it that answers a foreign `Origin` with 403 (`createMcpExpressApp()` of `@modelcontextprotocol/express`, which checks `Host` and `Origin` on a localhost host or with `allowedOrigins`; or the `localhostOriginValidation()` / `originValidation(…)` middleware of `@modelcontextprotocol/express` or `@modelcontextprotocol/node`; `hostHeaderValidation(…)` / `localhostHostValidation()` check `Host` only, not `Origin`); on the TypeScript SDK 1.x (`@modelcontextprotocol/sdk`), the check is off unless the transport is built with it: `new StreamableHTTPServerTransport({ …, enableDnsRebindingProtection: true, allowedHosts: [\"127.0.0.1:8000\", …], allowedOrigins: [\"http://localhost:8000\", …] })` (exact values, port included; 1.x's `createMcpExpressApp()` of `@modelcontextprotocol/sdk/server/express.js` checks `Host` only, so it does not fix this); on the Python SDK, `TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_origins=[…])`";

async fn endpoint(ctx: &Context) -> Vec<Finding> {
    let blocks: Vec<Probe<'_>> = vec![
        Box::pin(e7_e8_malformed_bodies(ctx)),
        Box::pin(h18_get_and_delete(ctx)),
        Box::pin(h19_h20_session_and_event_ids(ctx)),
        Box::pin(h21_foreign_origin(ctx)),
        Box::pin(h22_notification_post(ctx)),
        Box::pin(h24_batch(ctx)),
        Box::pin(h26_foreign_host(ctx)),
    ];
    futures_util::future::join_all(blocks).await.into_iter().flatten().collect()
}

/// H-18: GET and DELETE.
/// A legacy server may answer GET with a standalone SSE stream that never ends: bound it.
async fn h18_get_and_delete(ctx: &Context) -> Vec<Finding> {
    let client = &ctx.modern;
    let mut findings = Vec::new();
    let quick = Some(ctx.client_timeout().min(std::time::Duration::from_secs(2)));
    let mut get = modern("server/discover", json!({}));
    get.body = Body::Empty;
    get.http_method = "GET";
    get.timeout = quick;
    let get = ctx.probe(client, "H-18", "a GET", get).await;
    let mut delete = modern("server/discover", json!({}));
    delete.body = Body::Empty;
    delete.http_method = "DELETE";
    delete.timeout = quick;
    let delete = ctx.probe(client, "H-18", "a DELETE", delete).await;
    findings.push(if get.status == Some(405) && delete.status == Some(405) {
        Finding::kept("H-18", "GET and DELETE got 405").with(&get)
    } else {
        let culprit = if get.status != Some(405) { &get } else { &delete };
        Finding::broken(
            "H-18",
            format!("GET got {}, DELETE got {}; both SHOULD get 405", get.describe(), delete.describe()),
        )
        .with(culprit)
    });
    findings
}

/// H-19, H-20.
async fn h19_h20_session_and_event_ids(ctx: &Context) -> Vec<Finding> {
    let client = &ctx.modern;
    let mut findings = Vec::new();
    let exchange = ctx
        .probe(
            client,
            "H-19",
            "an unknown `Mcp-Session-Id`",
            modern("server/discover", json!({})).set("Mcp-Session-Id", "mcp-eval-probe-session"),
        )
        .await;
    findings.push(match expect::result(&exchange) {
        Ok(_) if exchange.header("mcp-session-id").is_some() => Finding::broken(
            "H-19",
            "the response carries an `Mcp-Session-Id` header; a 2026-07-28 server never mints or echoes one",
        )
        .with(&exchange),
        Ok(_) => {
            Finding::kept("H-19", "a request with `Mcp-Session-Id` was processed normally; no session id came back")
                .with(&exchange)
        }
        Err(message) => {
            Finding::broken("H-19", format!("a request with `Mcp-Session-Id` SHOULD be processed normally: {message}"))
                .with(&exchange)
        }
    });
    let exchange = ctx
        .probe(
            client,
            "H-20",
            "a `Last-Event-ID` header",
            modern("server/discover", json!({})).set("Last-Event-ID", "1"),
        )
        .await;
    findings.push(accept_finding("H-20", "a request with `Last-Event-ID: 1`", &exchange));
    findings
}

/// H-21: invalid Origin (in the server's era: 2025-11-25 requires it too).
async fn h21_foreign_origin(ctx: &Context) -> Vec<Finding> {
    let mut findings = Vec::new();
    let probe = if ctx.era == crate::mcp::era::Era::Legacy {
        ctx.request("tools/list", json!({}))
    } else {
        modern("server/discover", json!({}))
    };
    let exchange =
        ctx.probe(&ctx.client, "H-21", "a foreign `Origin`", probe.set("Origin", "http://evil.example")).await;
    findings.push(if exchange.status == Some(403) {
        Finding::kept("H-21", "`Origin: http://evil.example` got 403").with(&exchange)
    } else {
        Finding::broken(
            "H-21",
            format!("H-21's probe (a request with `Origin: http://evil.example`, otherwise valid) must get 403; got {}. {H21_SDK_HINT}", exchange.describe()),
        )
        .with(&exchange)
    });
    findings
}

/// H-22: notification POST.
async fn h22_notification_post(ctx: &Context) -> Vec<Finding> {
    let client = &ctx.modern;
    let mut findings = Vec::new();
    let notification = jsonrpc::modern_request(
        "notifications/cancelled",
        json!({"requestId": "mcp-eval-never-sent", "reason": "probe"}),
    );
    let exchange = ctx.probe(client, "H-22", "a notification POST", Outgoing::notification(notification)).await;
    findings.push(h22_verdict(ctx.era, &exchange));
    findings
}

/// A 2025-11-25 server refuses a 2026-07-28 request with a 4xx for its protocol version: the
/// rule was not exercised (never "met"), whatever a 4xx means for it on a 2026-07-28 server.
fn refused_by_legacy(id: &'static str, what: &str, era: Era, exchange: &Exchange) -> Option<Finding> {
    let status = exchange.status.filter(|status| (400..500).contains(status))?;
    (era == Era::Legacy).then(|| {
        let why = if exchange.body_excerpt.to_ascii_lowercase().contains("version") {
            "for its protocol version"
        } else {
            "(a 2025-11-25 server refuses a request of another protocol version, or one without its session)"
        };
        // The server's own reason, when its body is a JSON-RPC error (`Server not initialized`).
        let said = exchange
            .response
            .as_ref()
            .and_then(|response| response.pointer("/error/message"))
            .and_then(Value::as_str)
            .map(|message| format!(" (\"{}\")", crate::text::clip_chars(message, 120)))
            .unwrap_or_default();
        Finding::not_applicable(
            id,
            format!("not exercised: the server refused the 2026-07-28 {what} with HTTP {status}{said} {why}"),
        )
        .with(exchange)
    })
}

/// H-22's verdict on the answer to a notification POST.
fn h22_verdict(era: Era, exchange: &Exchange) -> Finding {
    if let Some(finding) = refused_by_legacy("H-22", "notification POST", era, exchange) {
        return finding;
    }
    let empty = exchange.body_excerpt.trim().is_empty();
    match exchange.status {
        Some(202) if empty => Finding::kept("H-22", "a notification POST got 202 with an empty body"),
        Some(202) => Finding::broken("H-22", "a notification POST got 202 but with a body (it must be empty)"),
        Some(status) if (400..500).contains(&status) => {
            Finding::kept("H-22", format!("a notification POST was refused with HTTP {status} (allowed)"))
        }
        _ => Finding::broken(
            "H-22",
            format!("a notification POST must get 202 (empty body) or a 4xx; got {}", exchange.describe()),
        ),
    }
    .with(exchange)
}

/// H-24: batch.
async fn h24_batch(ctx: &Context) -> Vec<Finding> {
    let client = &ctx.modern;
    let mut findings = Vec::new();
    let discover = jsonrpc::modern_request("server/discover", json!({}));
    let mut first = discover.clone();
    first["id"] = json!("mcp-eval-batch-1");
    let mut second = discover;
    second["id"] = json!("mcp-eval-batch-2");
    let mut batch = Outgoing::raw_body(serde_json::to_vec(&json!([first, second])).unwrap_or_default());
    batch.header_edits.push(crate::mcp::exchange::HeaderEdit::Set("Mcp-Method".into(), "server/discover".into()));
    batch
        .header_edits
        .push(crate::mcp::exchange::HeaderEdit::Set("MCP-Protocol-Version".into(), PROTOCOL_VERSION.into()));
    let exchange = ctx.probe(client, "H-24", "a JSON-RPC batch", batch).await;
    findings.push(h24_verdict(ctx.era, &exchange));
    findings
}

/// H-24's verdict on the answer to a JSON-RPC batch.
fn h24_verdict(era: Era, exchange: &Exchange) -> Finding {
    if let Some(finding) = refused_by_legacy("H-24", "batch", era, exchange) {
        return finding;
    }
    let array = exchange.response.as_ref().is_some_and(Value::is_array);
    let status = exchange.status.unwrap_or(0);
    if array {
        Finding::broken("H-24", "a JSON-RPC batch was answered with an array: the body MUST be a single message, so the batch SHOULD be rejected")
    } else if (400..500).contains(&status) || exchange.error_code() == Some(jsonrpc::INVALID_REQUEST) {
        Finding::kept("H-24", format!("a batch was rejected: {}", exchange.describe()))
    } else {
        Finding::broken("H-24", format!("a batch SHOULD get a 4xx or a single -32600; got {}", exchange.describe()))
    }
    .with(exchange)
}

/// E-7, E-8: malformed bodies (HTTP only; on stdio we never write non-MCP lines). E-8's first:
/// the first malformed probe sent, so a server that dies on it is named before anything else is
/// under way.
async fn e7_e8_malformed_bodies(ctx: &Context) -> Vec<Finding> {
    let mut unparsable = Outgoing::raw_body(b"{not json".to_vec());
    unparsable
        .header_edits
        .push(crate::mcp::exchange::HeaderEdit::Set("MCP-Protocol-Version".into(), PROTOCOL_VERSION.into()));
    let e8 = ctx.probe(&ctx.client, "E-8", "an unparsable body (`{not json` POSTed)", unparsable).await;
    let mut findings = Vec::new();
    let mut invalid = Outgoing::raw_body(br#"{"jsonrpc":"2.0","foo":1}"#.to_vec());
    invalid
        .header_edits
        .push(crate::mcp::exchange::HeaderEdit::Set("MCP-Protocol-Version".into(), PROTOCOL_VERSION.into()));
    let exchange =
        ctx.probe(&ctx.client, "E-7", "an invalid envelope (`{\"jsonrpc\":\"2.0\",\"foo\":1}` POSTed)", invalid).await;
    findings.push(malformed("E-7", "an invalid envelope", jsonrpc::INVALID_REQUEST, &exchange));
    findings.push(malformed("E-8", "an unparsable body", jsonrpc::PARSE_ERROR, &e8));
    findings
}

/// H-26 (info): a loopback server refuses a foreign Host.
async fn h26_foreign_host(ctx: &Context) -> Vec<Finding> {
    let client = &ctx.modern;
    let mut findings = Vec::new();
    let loopback = crate::mcp::raw::split_url(ctx.modern_url().unwrap_or_default().as_str())
        .is_some_and(|parts| parts.host == "127.0.0.1" || parts.host == "localhost" || parts.host == "::1");
    // A server that refuses every request refuses a foreign Host too: no evidence.
    let serves = ctx.era == crate::mcp::era::Era::Legacy
        || ctx.discover.status.is_some_and(|status| (200..300).contains(&status));
    if loopback && !serves {
        findings.push(Finding::not_applicable(
            "H-26",
            "the server refused the ordinary `server/discover` too: a refused foreign `Host` shows nothing",
        ));
    } else if loopback {
        let exchange = ctx
            .probe(
                client,
                "H-26",
                "a foreign `Host`",
                modern("server/discover", json!({})).set("Host", "evil.example.com").raw(),
            )
            .await;
        let status = exchange.status.unwrap_or(0);
        findings.push(
            if (400..500).contains(&status) {
                Finding::kept("H-26", format!("a foreign `Host` got HTTP {status}"))
            } else {
                Finding::broken(
                    "H-26",
                    format!(
                        "a loopback server should refuse `Host: evil.example.com` (DNS rebinding); got {}",
                        exchange.describe()
                    ),
                )
            }
            .with(&exchange),
        );
    } else {
        findings.push(Finding::not_applicable("H-26", "only checked for servers on a loopback address"));
    }
    findings
}

fn malformed(id: &'static str, what: &str, code: i64, exchange: &Exchange) -> Finding {
    let status = exchange.status.unwrap_or(0);
    let id_null = exchange.response.as_ref().and_then(|response| response.get("id")).is_none_or(Value::is_null);
    let finding = if exchange.result().is_some() || (200..300).contains(&status) {
        Finding::broken(
            id,
            format!("{what} must be refused, never answered with a result or a 2xx; got {}", exchange.describe()),
        )
    } else if status >= 500 {
        Finding::broken(
            id,
            format!("{what} must get a JSON-RPC error or a 4xx, not a server error; got {}", exchange.describe()),
        )
    } else if exchange.error_code() == Some(code) && id_null {
        Finding::kept(id, format!("{what} got {} with id null", exchange.describe()))
    } else if exchange.error_code() == Some(code) {
        Finding::ambiguous(id, format!("{what} got error {code}, but its id SHOULD be null"))
    } else if exchange.content_type().as_deref().is_some_and(|ct| ct.contains("html")) {
        Finding::broken(id, format!("{what} was answered with HTML; expected JSON-RPC error {code}"))
    } else {
        Finding::ambiguous(
            id,
            format!("{what} was refused ({}) but SHOULD carry JSON-RPC error {code}", exchange.describe()),
        )
    };
    finding.with(exchange)
}

#[cfg(test)]
mod tests {
    use super::{Era, Exchange, H21_SDK_HINT, h22_verdict, h24_verdict};
    use crate::report::model::Status;

    /// A 2025-11-25 server refuses H-22's and H-24's 2026-07-28 requests for their protocol
    /// version: the rule was not exercised, so the row never says it is met.
    #[test]
    fn h22_and_h24_refused_for_the_version_on_a_legacy_server_say_not_exercised() {
        let refused = Exchange {
            status: Some(400),
            body_excerpt: "Unsupported protocol version: 2026-07-28".into(),
            ..Exchange::default()
        };
        for finding in [h22_verdict(Era::Legacy, &refused), h24_verdict(Era::Legacy, &refused)] {
            let id = finding.id;
            let checks = crate::conformance::grade_all(&[(vec![finding], 0)], Era::Legacy, true, None);
            let check = checks.iter().find(|check| check.id == id).expect("graded");
            assert_eq!(check.status, Status::NotApplicable, "{check:?}");
            assert!(!check.message.contains("already met"), "{}", check.message);
            assert!(check.message.contains("not exercised"), "{}", check.message);
            assert!(check.message.contains("HTTP 400 for its protocol version"), "{}", check.message);
        }
        // A refusal that names no version: the server's reason, and both causes a legacy server has.
        let uninitialized = Exchange {
            status: Some(400),
            response: Some(serde_json::json!({"jsonrpc": "2.0", "id": null,
                "error": {"code": -32000, "message": "Bad Request: Server not initialized"}})),
            body_excerpt: "{\"error\":{\"code\":-32000,\"message\":\"Bad Request: Server not initialized\"}}".into(),
            ..Exchange::default()
        };
        let finding = h22_verdict(Era::Legacy, &uninitialized);
        assert!(
            finding.message.starts_with(
                "not exercised: the server refused the 2026-07-28 notification POST with HTTP 400 (\"Bad Request: Server not initialized\") (a 2025-11-25 server"
            ),
            "{}",
            finding.message
        );
        // On a 2026-07-28 server the same refusal is H-22's allowed 4xx and H-24's rejection.
        for finding in [h22_verdict(Era::Modern, &refused), h24_verdict(Era::Modern, &refused)] {
            let id = finding.id;
            let checks = crate::conformance::grade_all(&[(vec![finding], 0)], Era::Modern, true, None);
            let check = checks.iter().find(|check| check.id == id).expect("graded");
            assert_eq!(check.status, Status::Pass, "{check:?}");
        }
    }

    /// `npm i @modelcontextprotocol/sdk` installs 1.x, whose transport takes the protection
    /// as options: the hint names them, beside v2's middleware and the Python SDK's settings.
    #[test]
    fn the_h21_hint_names_the_fix_on_each_sdk_including_the_typescript_sdk_1() {
        for part in [
            "createMcpHandler",
            "localhostOriginValidation()",
            "new StreamableHTTPServerTransport({ …, enableDnsRebindingProtection: true, allowedHosts: [",
            "allowedOrigins: [",
            "TransportSecuritySettings(enable_dns_rebinding_protection=True",
        ] {
            assert!(H21_SDK_HINT.contains(part), "{part}");
        }
    }

    /// SDK 1.32.2's `createMcpExpressApp()` applies `hostHeaderValidation` /
    /// `localhostHostValidation` only: it checks `Host`, never `Origin`, so the hint must not offer
    /// it as H-21's fix; v2's (`@modelcontextprotocol/express`) checks both.
    #[test]
    fn the_h21_hint_says_the_sdk_1_express_app_checks_host_only() {
        assert!(
            H21_SDK_HINT.contains(
                "1.x's `createMcpExpressApp()` of `@modelcontextprotocol/sdk/server/express.js` checks `Host` only, so it does not fix this"
            ),
            "{H21_SDK_HINT}"
        );
        assert!(
            H21_SDK_HINT.contains(
                "`createMcpExpressApp()` of `@modelcontextprotocol/express`, which checks `Host` and `Origin`"
            )
        );
        assert!(!H21_SDK_HINT.contains("or `createMcpExpressApp()` of `@modelcontextprotocol/sdk/server/express.js`)"));
    }
}
