//! Error paths: E-1..E-6, E-9, and an error with a string id for M-6. In the server's era, so
//! legacy servers are graded on the codes 2025-11-25 defines (resource not found was -32002
//! there).

use serde_json::{Value, json};

use super::{NO_SUCH_PROMPT, NO_SUCH_TOOL, NO_SUCH_URI};
use crate::conformance::context::Context;
use crate::conformance::expect;
use crate::conformance::finding::Finding;
use crate::mcp::era::Era;
use crate::mcp::exchange::Exchange;
use crate::mcp::jsonrpc::{self, HEADER_MISMATCH, INVALID_PARAMS, METHOD_NOT_FOUND};

/// A probe of the error rules, under way: its findings.
type Probe<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = Vec<Finding>> + 'a>>;

/// E-1..E-6, E-9, M-6.
pub(crate) async fn run(ctx: &Context) -> Vec<Finding> {
    let legacy = ctx.era == Era::Legacy;
    let mut findings = Vec::new();

    let blocks: Vec<Probe<'_>> = vec![
        Box::pin(e1_unknown_resource(ctx)),
        Box::pin(e3_unknown_tool(ctx)),
        Box::pin(e4_unknown_prompt(ctx)),
        Box::pin(e5_invalid_cursor(ctx)),
    ];
    findings.extend(futures_util::future::join_all(blocks).await.into_iter().flatten());
    if legacy {
        findings.push(Finding::not_applicable("E-6", "per-request logLevel is a 2026-07-28 feature"));
        findings.push(Finding::not_applicable("E-9", "graded for 2026-07-28 servers"));
        return findings;
    }
    findings.push(e6_invalid_log_level(ctx).await);
    findings.push(e9_invalid_params(ctx).await);
    findings
}

/// E-6: invalid logLevel.
async fn e6_invalid_log_level(ctx: &Context) -> Finding {
    let client = &ctx.client;
    let exchange = ctx
        .probe(
            client,
            "E-6",
            "an invalid logLevel (`verbose`)",
            super::modern_with_meta("server/discover", json!({}), jsonrpc::META_LOG_LEVEL, json!("verbose")),
        )
        .await;
    match expect::error(&exchange, INVALID_PARAMS, None) {
        Ok(message) => Finding::kept("E-6", format!("logLevel \"verbose\": {message}")),
        Err(message) => Finding::broken("E-6", format!("logLevel \"verbose\" SHOULD get -32602: {message}")),
    }
    .with(&exchange)
}

/// E-9: params that break the request schema.
/// At once: against a server that holds every answer open, one after another would take
/// one timeout each. An answer that cannot be read is M-11's: it breaks E-9 only when
/// nothing else does.
/// A method of a capability the server does not advertise may be unknown to it: -32601 is
/// its answer there (D-4 grades capabilities against handlers), not a params error.
async fn e9_invalid_params(ctx: &Context) -> Finding {
    let client = &ctx.client;
    let methods = [("tools/call", "tools"), ("resources/read", "resources"), ("prompts/get", "prompts")];
    let exchanges = futures_util::future::join_all(methods.iter().map(|&(method, _)| {
        ctx.probe(client, "E-9", "a request without its required params", super::modern(method, json!({})))
    }))
    .await;
    let answers: Vec<(&str, bool, Exchange)> = methods
        .into_iter()
        .zip(exchanges)
        .map(|((method, capability), exchange)| (method, ctx.has_capability(capability), exchange))
        .collect();
    grade_e9(answers, ctx.is_http())
}

/// E-1: resource not found.
async fn e1_unknown_resource(ctx: &Context) -> Vec<Finding> {
    let client = &ctx.client;
    let legacy = ctx.era == Era::Legacy;
    let mut findings = Vec::new();
    if ctx.has_capability("resources") {
        let exchange = ctx
            .probe(
                client,
                "E-1",
                "a `resources/read` of an unknown URI",
                ctx.request("resources/read", json!({"uri": NO_SUCH_URI})),
            )
            .await;
        let code = exchange.error_code();
        let empty_contents = exchange
            .result()
            .and_then(|result| result.get("contents"))
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty);
        let finding = if empty_contents {
            Finding::broken(
                "E-1",
                "`resources/read` of an unknown URI returned empty `contents`; it MUST be error -32602",
            )
        } else if code == Some(INVALID_PARAMS) {
            let has_uri = exchange.error().and_then(|error| error.pointer("/data/uri")).is_some();
            if has_uri {
                Finding::kept("E-1", "an unknown URI got -32602 with data.uri")
            } else {
                Finding::ambiguous("E-1", "an unknown URI got -32602, but `data.uri` SHOULD name the URI")
            }
        } else if legacy && code == Some(-32002) {
            Finding::kept(
                "E-1",
                "an unknown URI got -32002, the 2025-11-25 resource-not-found code (2026-07-28 uses -32602)",
            )
        } else {
            Finding::broken("E-1", format!("an unknown URI must get -32602; got {}", exchange.describe()))
        };
        findings.push(finding.with(&exchange));
    } else {
        findings.push(Finding::not_applicable("E-1", "the server does not advertise `resources`"));
    }

    // E-2 lives with the tool calls (it needs a tool that requires a capability).

    findings
}

/// E-3: unknown tool (string id, which also checks M-6 on an error).
async fn e3_unknown_tool(ctx: &Context) -> Vec<Finding> {
    let client = &ctx.client;
    let mut findings = Vec::new();
    let exchange = ctx
        .probe(
            client,
            "E-3",
            "a call of an unknown tool",
            ctx.request("tools/call", json!({"name": NO_SUCH_TOOL, "arguments": {}})).with_id(json!("mcp-eval-err-7")),
        )
        .await;
    let e3 = if exchange.error_code() == Some(INVALID_PARAMS) {
        Finding::kept("E-3", "an unknown tool got JSON-RPC error -32602")
    } else if exchange.result().and_then(|result| result.get("isError")).and_then(Value::as_bool) == Some(true) {
        Finding::broken(
            "E-3",
            "an unknown tool got a result with `isError: true`; it SHOULD be JSON-RPC error -32602 (a protocol error, not a tool error)",
        )
    } else {
        Finding::broken("E-3", format!("an unknown tool SHOULD get -32602; got {}", exchange.describe()))
    };
    findings.push(e3.with(&exchange));
    findings.push(match exchange.response.as_ref().and_then(|response| response.get("id")) {
        Some(id) if id == &json!("mcp-eval-err-7") => {
            Finding::kept("M-6", "an error answered to a string id echoed it")
        }
        _ if exchange.response.is_none() => Finding::not_applicable("M-6", "no error response to check"),
        other => Finding::broken(
            "M-6",
            format!(
                "sent id \"mcp-eval-err-7\", the error carries {}",
                other.map(Value::to_string).unwrap_or_else(|| "no id".into())
            ),
        )
        .with(&exchange),
    });

    findings
}

/// E-4: unknown prompt.
async fn e4_unknown_prompt(ctx: &Context) -> Vec<Finding> {
    let client = &ctx.client;
    let mut findings = Vec::new();
    if ctx.has_capability("prompts") {
        let exchange = ctx
            .probe(
                client,
                "E-4",
                "a `prompts/get` of an unknown prompt",
                ctx.request("prompts/get", json!({"name": NO_SUCH_PROMPT})),
            )
            .await;
        findings.push(
            match expect::error(&exchange, INVALID_PARAMS, None) {
                Ok(message) => Finding::kept("E-4", format!("an unknown prompt: {message}")),
                Err(message) => Finding::broken("E-4", format!("an unknown prompt SHOULD get -32602: {message}")),
            }
            .with(&exchange),
        );
    } else {
        findings.push(Finding::not_applicable("E-4", "the server does not advertise `prompts`"));
    }

    findings
}

/// E-5: invalid cursor, on the shortest advertised list (a server that accepts any cursor
/// answers with the whole list, so the shortest keeps memory flat).
async fn e5_invalid_cursor(ctx: &Context) -> Vec<Finding> {
    let client = &ctx.client;
    let mut findings = Vec::new();
    let method = [&ctx.tools, &ctx.prompts, &ctx.resources, &ctx.templates]
        .into_iter()
        .filter(|walk| walk.ok())
        .min_by_key(|walk| walk.names.len())
        .map_or("tools/list", |walk| walk.method);
    let exchange =
        ctx.probe(client, "E-5", "an invalid cursor", ctx.request(method, json!({"cursor": "%%garbage%%"}))).await;
    findings.push(
        match expect::error(&exchange, INVALID_PARAMS, None) {
            Ok(message) => Finding::kept("E-5", format!("an invalid cursor: {message}")),
            Err(message) => Finding::broken(
                "E-5",
                format!("an invalid cursor SHOULD get -32602 (some servers accept any cursor): {message}"),
            ),
        }
        .with(&exchange),
    );

    findings
}

/// E-9 from the answers to `tools/call`, `resources/read` and `prompts/get` without their
/// required param: `(method, its capability advertised, answer)`. -32602 (over HTTP also -32020)
/// keeps the rule; -32601 to a method whose capability is not advertised is no params answer at
/// all (the method may be unknown there), so it neither keeps nor breaks it.
fn grade_e9(answers: Vec<(&str, bool, Exchange)>, is_http: bool) -> Finding {
    let mut broken = Vec::new();
    let mut refused = Vec::new();
    let mut evidence = None;
    let mut unread = None;
    let mut unadvertised = Vec::new();
    for (method, advertised, exchange) in answers {
        let ok = exchange.error_code() == Some(INVALID_PARAMS)
            || (is_http && exchange.error_code() == Some(HEADER_MISMATCH));
        if ok {
            refused.push(method);
            continue;
        }
        if !advertised && exchange.error_code() == Some(METHOD_NOT_FOUND) {
            unadvertised
                .push(format!("`{method}` got -32601 (its capability is not advertised, so it may be unknown)"));
            continue;
        }
        let message = format!("`{method}` without its required param: {}", exchange.describe());
        if exchange.unreadable_answer().is_some() {
            unread = unread.or(Some((message, exchange)));
            continue;
        }
        broken.push(message);
        evidence = evidence.or(Some(exchange));
    }
    if let (true, Some((message, exchange))) = (broken.is_empty(), unread) {
        broken.push(message);
        evidence = Some(exchange);
    }
    let also = if unadvertised.is_empty() { String::new() } else { format!("; {}", unadvertised.join("; ")) };
    let e9 = if !broken.is_empty() {
        Finding::broken("E-9", format!("SHOULD get -32602: {}", broken.join("; ")))
    } else if refused.is_empty() {
        Finding::not_applicable("E-9", format!("no method of an advertised capability to send invalid params to{also}"))
    } else if unadvertised.is_empty() {
        Finding::kept(
            "E-9",
            "tools/call without name, resources/read without uri and prompts/get without name got -32602 (or -32020)",
        )
    } else {
        Finding::kept(
            "E-9",
            format!("{} without its required param got -32602 (or -32020){also}", refused.join(" and ")),
        )
    };
    match evidence {
        Some(exchange) => e9.with(&exchange),
        None => e9,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::conformance::finding::Outcome;

    fn answer(response: serde_json::Value) -> Exchange {
        Exchange { response: Some(response), ..Exchange::default() }
    }

    fn error(code: i64) -> Exchange {
        answer(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": "m"}}))
    }

    #[test]
    fn e9_takes_minus_32601_to_methods_of_unadvertised_capabilities_as_no_params_answer() {
        // A tools-only server: resources/read and prompts/get are unknown to it.
        let finding = grade_e9(
            vec![
                ("tools/call", true, error(INVALID_PARAMS)),
                ("resources/read", false, error(METHOD_NOT_FOUND)),
                ("prompts/get", false, error(METHOD_NOT_FOUND)),
            ],
            true,
        );
        assert_eq!(finding.outcome, Outcome::Kept, "{}", finding.message);
        assert!(finding.message.starts_with("tools/call without its required param got -32602"), "{}", finding.message);
        assert!(finding.message.contains("`prompts/get` got -32601"), "{}", finding.message);
    }

    #[test]
    fn e9_still_warns_on_minus_32601_where_the_capability_is_advertised() {
        let finding = grade_e9(
            vec![
                ("tools/call", true, error(INVALID_PARAMS)),
                ("resources/read", true, error(METHOD_NOT_FOUND)),
                ("prompts/get", false, error(-32603)),
            ],
            false,
        );
        assert_eq!(finding.outcome, Outcome::Broken);
        assert!(finding.message.contains("`resources/read`") && finding.message.contains("`prompts/get`"));
    }

    #[test]
    fn e9_without_a_served_method_has_no_evidence_and_is_not_applicable() {
        let finding = grade_e9(
            vec![
                ("tools/call", false, error(METHOD_NOT_FOUND)),
                ("resources/read", false, error(METHOD_NOT_FOUND)),
                ("prompts/get", false, error(METHOD_NOT_FOUND)),
            ],
            true,
        );
        assert_eq!(finding.outcome, Outcome::NotApplicable);
    }
}
