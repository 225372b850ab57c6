//! Discovery, per-request `_meta` and versioning: D-1..D-6, M-1..M-4, M-9, M-12, M-13, V-1, V-2,
//! B-3, B-4 and the tasks-extension rows K-1..K-4.

use serde_json::{Value, json};

use super::{modern, modern_with_meta};
use crate::conformance::context::{Context, Purpose};
use crate::conformance::expect;
use crate::conformance::finding::Finding;
use crate::mcp::era::{self, Era};
use crate::mcp::exchange::Outgoing;
use crate::mcp::jsonrpc::{self, INVALID_PARAMS, METHOD_NOT_FOUND, PROTOCOL_VERSION, UNSUPPORTED_PROTOCOL_VERSION};

/// The discover result's own rules (D-1, D-2, D-5, K-1), read from the era probe.
pub(crate) fn discover_result(ctx: &Context) -> Vec<Finding> {
    let exchange = &ctx.discover;
    let mut findings = Vec::new();
    let Some(result) = exchange.result() else {
        findings.push(
            Finding::broken("D-1", format!("`server/discover` must be implemented; {}", exchange.describe()))
                .with(exchange),
        );
        findings.push(Finding::not_applicable("D-2", "no discover result to check"));
        findings.push(Finding::not_applicable("D-5", "no discover result to check"));
        return findings;
    };
    let mut problems = Vec::new();
    match result.get("supportedVersions").and_then(Value::as_array) {
        Some(versions) if !versions.is_empty() && versions.iter().all(Value::is_string) => {}
        _ => problems.push("`supportedVersions` must be a non-empty array of strings"),
    }
    if !result.get("capabilities").is_some_and(Value::is_object) {
        problems.push("`capabilities` must be an object");
    }
    if result.get("resultType").and_then(Value::as_str) != Some("complete") {
        problems.push("`resultType` must be \"complete\"");
    }
    findings.push(if problems.is_empty() {
        Finding::kept(
            "D-1",
            "`server/discover` answered with supportedVersions, capabilities and resultType \"complete\"",
        )
    } else {
        Finding::broken("D-1", format!("the discover result is incomplete: {}", problems.join("; "))).with(exchange)
    });
    let ttl_ok = result.get("ttlMs").and_then(Value::as_u64).is_some();
    let scope_ok = matches!(result.get("cacheScope").and_then(Value::as_str), Some("public" | "private"));
    findings.push(if ttl_ok && scope_ok {
        Finding::kept("D-2", "discover carries an integer ttlMs and a valid cacheScope")
    } else {
        Finding::broken(
            "D-2",
            format!(
                "discover must carry `ttlMs` (integer >= 0) and `cacheScope` (\"public\"|\"private\"); got ttlMs {}, cacheScope {}",
                result.get("ttlMs").map(Value::to_string).unwrap_or_else(|| "absent".into()),
                result.get("cacheScope").map(Value::to_string).unwrap_or_else(|| "absent".into())
            ),
        )
        .with(exchange)
    });
    if result.get("serverInfo").is_some() {
        findings.push(Finding::ambiguous("D-3", "a top-level `serverInfo` in the discover result is a pre-release shape; put it in `_meta[\"io.modelcontextprotocol/serverInfo\"]`").with(exchange));
    }
    findings.push(if ctx.supported_versions.iter().any(|version| version == PROTOCOL_VERSION) {
        Finding::kept("D-5", format!("supportedVersions {:?} include {PROTOCOL_VERSION}", ctx.supported_versions))
    } else {
        Finding::broken(
            "D-5",
            format!(
                "supportedVersions {:?} do not include {PROTOCOL_VERSION}: no common version",
                ctx.supported_versions
            ),
        )
    });
    let capabilities = &ctx.capabilities;
    if capabilities.get("tasks").is_some()
        && capabilities.pointer("/extensions/io.modelcontextprotocol~1tasks").is_none()
    {
        findings.push(Finding::ambiguous("K-1", "`capabilities.tasks` is a v1 leftover: advertise tasks under `capabilities.extensions[\"io.modelcontextprotocol/tasks\"]`"));
    } else if capabilities.pointer("/extensions/io.modelcontextprotocol~1tasks").is_some() {
        findings.push(Finding::kept("K-1", "tasks advertised under capabilities.extensions"));
    } else {
        findings.push(Finding::not_applicable("K-1", "the server does not advertise the tasks extension"));
    }
    findings
}

/// D-4: advertised capabilities match handlers.
pub(crate) async fn capabilities_match(ctx: &Context) -> Vec<Finding> {
    let mut broken = Vec::new();
    let mut checked = Vec::new();
    let mut evidence = None;
    for (capability, walk) in [("tools", &ctx.tools), ("prompts", &ctx.prompts), ("resources", &ctx.resources)] {
        let advertised = ctx.has_capability(capability);
        if advertised {
            checked.push(format!("{capability} advertised and listed"));
            if !walk.ok() {
                broken.push(format!(
                    "`{capability}` is advertised but `{}` failed: {}",
                    walk.method,
                    walk.failed.as_ref().map(|e| e.describe()).unwrap_or_default()
                ));
                evidence = evidence.or(walk.failed.clone());
            }
        } else {
            let exchange = ctx.modern.send(modern(walk.method, json!({}))).await;
            checked.push(format!("{capability} not advertised"));
            if exchange.error_code() != Some(METHOD_NOT_FOUND) {
                broken.push(format!(
                    "`{capability}` is not advertised, so `{}` must get -32601; got {}",
                    walk.method,
                    exchange.describe()
                ));
                evidence = evidence.or(Some(exchange));
            }
        }
    }
    if !ctx.has_capability("completions") {
        let exchange = ctx
            .modern
            .send(modern("completion/complete", json!({"ref": {"type": "ref/prompt", "name": super::NO_SUCH_PROMPT}, "argument": {"name": "x", "value": ""}})))
            .await;
        checked.push("completions not advertised".into());
        if exchange.error_code() != Some(METHOD_NOT_FOUND) {
            broken.push(format!(
                "`completions` is not advertised, so `completion/complete` must get -32601; got {}",
                exchange.describe()
            ));
            evidence = evidence.or(Some(exchange));
        }
    }
    let finding = if broken.is_empty() {
        Finding::kept("D-4", checked.join("; "))
    } else {
        Finding::broken("D-4", broken.join("; "))
    };
    vec![match evidence {
        Some(exchange) => finding.with(&exchange),
        None => finding,
    }]
}

/// D-6: completion/complete result shape.
pub(crate) async fn completion(ctx: &Context) -> Vec<Finding> {
    if !ctx.has_capability("completions") {
        return vec![Finding::not_applicable("D-6", "the server does not advertise `completions`")];
    }
    let prompt = ctx.prompts.items.iter().find(|prompt| prompt.pointer("/arguments/0/name").is_some());
    let params = if let Some(prompt) = prompt {
        json!({"ref": {"type": "ref/prompt", "name": prompt["name"]}, "argument": {"name": prompt.pointer("/arguments/0/name"), "value": ""}})
    } else if let Some(template) = ctx.templates.items.first() {
        let uri_template = template.get("uriTemplate").and_then(Value::as_str).unwrap_or("");
        let variable = uri_template
            .split('{')
            .nth(1)
            .and_then(|rest| rest.split('}').next())
            .unwrap_or("id")
            .trim_start_matches(['+', '#', '/', '?', '&', '.', ';']);
        json!({"ref": {"type": "ref/resource", "uri": uri_template}, "argument": {"name": variable, "value": ""}})
    } else {
        return vec![Finding::not_applicable(
            "D-6",
            "`completions` is advertised but no prompt argument or resource template can be referenced",
        )];
    };
    let exchange = ctx.modern.send(modern("completion/complete", params)).await;
    let finding = match expect::result(&exchange) {
        Err(message) => Finding::broken("D-6", message.to_string()),
        Ok(result) => {
            let values = result.pointer("/completion/values").and_then(Value::as_array);
            let mut problems = Vec::new();
            match values {
                None => problems.push("`completion.values` must be an array".to_owned()),
                Some(values) => {
                    if values.len() > 100 {
                        problems.push(format!("`completion.values` has {} entries (at most 100)", values.len()));
                    }
                    if !values.iter().all(Value::is_string) {
                        problems.push("`completion.values` must hold strings".into());
                    }
                }
            }
            if result.pointer("/completion/total").is_some_and(|total| total.as_i64().is_none()) {
                problems.push("`completion.total` must be an integer".into());
            }
            if result.pointer("/completion/hasMore").is_some_and(|more| !more.is_boolean()) {
                problems.push("`completion.hasMore` must be a boolean".into());
            }
            if problems.is_empty() {
                Finding::kept("D-6", "completion/complete answered with a well-formed completion")
            } else {
                Finding::broken("D-6", problems.join("; "))
            }
        }
    };
    vec![finding.with(&exchange)]
}

/// M-1..M-4, M-9, M-12, M-13: per-request `_meta`.
pub(crate) async fn request_meta(ctx: &Context) -> Vec<Finding> {
    let client = &ctx.modern;
    let http = ctx.is_http();
    let status_400 = http.then_some(400);
    let blocks: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = Vec<Finding>> + '_>>> = vec![
        Box::pin(async {
            let mut findings = Vec::new();
            let no_meta = Outgoing::request(json!({"jsonrpc": "2.0", "method": "server/discover", "params": {}}));
            let exchange = client.send(no_meta).await;
            findings.push(reject_finding(
                "M-1",
                "`server/discover` with `params: {}` (no `_meta`)",
                &exchange,
                INVALID_PARAMS,
                status_400,
            ));
            findings
        }),
        Box::pin(async {
            // M-2..M-4: one `_meta` key left out per request; the two required ones are
            // refused, the optional clientInfo is not needed.
            let omissions = [
                ("M-2", jsonrpc::META_PROTOCOL_VERSION, "`_meta` without protocolVersion", true),
                ("M-3", jsonrpc::META_CLIENT_CAPABILITIES, "`_meta` without clientCapabilities", true),
                ("M-4", jsonrpc::META_CLIENT_INFO, "a request without clientInfo (it is optional)", false),
            ];
            let sends = omissions.map(|(_, key, _, _)| {
                let request = jsonrpc::without_meta_key(jsonrpc::modern_request("server/discover", json!({})), key);
                client.send(Outgoing::request(request))
            });
            let exchanges = futures_util::future::join_all(sends).await;
            omissions
                .iter()
                .zip(&exchanges)
                .map(|((id, _, what, required), exchange)| {
                    if *required {
                        reject_finding(id, what, exchange, INVALID_PARAMS, status_400)
                    } else {
                        accept_finding(id, what, exchange)
                    }
                })
                .collect::<Vec<_>>()
        }),
        Box::pin(async {
            let mut findings = Vec::new();
            let exchange = client
                .send(modern_with_meta(
                    "server/discover",
                    json!({}),
                    "traceparent",
                    json!("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"),
                ))
                .await;
            findings.push(accept_finding("M-9", "a request with a W3C `traceparent` in `_meta`", &exchange));
            findings
        }),
        Box::pin(async {
            // Ids of several shapes come back with the same value and the same JSON type: a
            // digit-only string must not become a number, the largest integer JSON carries
            // exactly between implementations (2^53 - 1, RFC 8259 §6) must not be truncated,
            // zero and negatives survive.
            let shapes = [json!("7"), json!(9_007_199_254_740_991_u64), json!(0), json!(-42), json!("0042")];
            let exchanges = futures_util::future::join_all(shapes.iter().map(|id| {
                let probe = match ctx.era {
                    Era::Modern => Outgoing::request(jsonrpc::modern_request("server/discover", json!({}))),
                    Era::Legacy => ctx.request("tools/list", json!({})),
                };
                ctx.client.send(probe.with_id(id.clone()))
            }))
            .await;
            let mut answered = 0;
            let mut wrong = Vec::new();
            for (sent, exchange) in shapes.iter().zip(&exchanges) {
                // M-11 is about results; ids of error responses are M-6's (graded passively).
                let Some(response) = exchange.response.as_ref().filter(|_| exchange.result().is_some()) else {
                    continue;
                };
                answered += 1;
                match response.get("id") {
                    Some(got) if got == sent => {}
                    got => wrong.push(format!(
                        "sent {}, got back {}",
                        id_shape(sent),
                        got.map_or_else(|| "no id".to_owned(), id_shape)
                    )),
                }
            }
            let finding = if !wrong.is_empty() {
                Finding::broken(
                    "M-11",
                    format!("ids must come back with the same value and the same JSON type: {}", wrong.join("; ")),
                )
            } else if answered == 0 {
                Finding::not_applicable("M-11", "no result to the id-shape probes (see M-6 for the ids of errors)")
            } else {
                Finding::kept(
                    "M-11",
                    format!(
                        "{answered} ids of different shapes (digit-only strings, 2^53-1, 0, negative) came back unchanged"
                    ),
                )
            };
            let evidence = wrong.first().and(exchanges.iter().find(|exchange| exchange.response.is_some()));
            vec![match evidence {
                Some(exchange) => finding.with(exchange),
                None => finding,
            }]
        }),
        Box::pin(async {
            let mut findings = Vec::new();
            let unicode = "id-漢字-🙂";
            // In the server's era: a legacy server is graded on this too (ids are JSON-RPC).
            let probe = match ctx.era {
                Era::Modern => {
                    let request = jsonrpc::modern_request("server/discover", json!({}));
                    Outgoing::request(jsonrpc::with_meta_key(
                        request,
                        jsonrpc::META_CLIENT_INFO,
                        json!({"name": unicode, "version": "1"}),
                    ))
                }
                Era::Legacy => ctx.request("tools/list", json!({})),
            };
            let exchange = ctx.client.send(probe.with_id(json!(unicode))).await;
            let finding = if exchange.response.as_ref().and_then(|response| response.get("id")) == Some(&json!(unicode))
                && exchange.result().is_some()
            {
                Finding::kept("M-12", "a Unicode string id and clientInfo name survived the round trip")
            } else {
                Finding::broken(
                    "M-12",
                    format!("sent id {unicode:?}; expected a result with the same id, got {}", exchange.describe()),
                )
            };
            findings.push(finding.with(&exchange));
            findings
        }),
        Box::pin(async {
            let mut findings = Vec::new();
            let exchange = client
                .send(modern_with_meta("server/discover", json!({}), "com.example.mcp-eval/probe", json!("x")))
                .await;
            findings.push(accept_finding("M-13", "a request with an unknown vendor-prefixed `_meta` key", &exchange));
            findings
        }),
    ];
    futures_util::future::join_all(blocks).await.into_iter().flatten().collect()
}

/// When V-1's probe was sent. On stdio the families run one after another (conformance::run), so
/// the probe follows the opening discover and the families before "versions"; a server may answer
/// differently by then than to a discover sent first, and a user checking by hand must know.
fn v1_when(http: bool) -> &'static str {
    if http {
        "a request of its own (Streamable HTTP requests are independent)"
    } else {
        "sent on the session's process after the opening `server/discover`, the list walks (`tools/list` first, then prompts and resources) and the capability, `completion/complete` and request-`_meta` probes"
    }
}

/// V-1's hint for the TypeScript SDK's `serveStdio`, given when the probe got a result on stdio.
const V1_SERVE_STDIO: &str = ". If your server is built on the TypeScript SDK's `serveStdio`: it answers -32022 with `data.requested` to such a discover sent first or right after the opening discover, but a result once other requests (e.g. a `tools/list`) were served, so a check by hand must send it in the same order. Check `_meta` protocolVersion on every request against the versions you support and answer -32022 with `data.supported` and `data.requested`";

/// V-1, V-2: version negotiation.
pub(crate) async fn versions(ctx: &Context) -> Vec<Finding> {
    let bad = "1900-01-01";
    let request = jsonrpc::with_meta_version(jsonrpc::modern_request("server/discover", json!({})), bad);
    let exchange = ctx.modern.send(Outgoing::request(request).set("MCP-Protocol-Version", bad)).await;
    let status = ctx.is_http().then_some(400);
    let mut problems = Vec::new();
    if let Err(message) = expect::error(&exchange, UNSUPPORTED_PROTOCOL_VERSION, status) {
        problems.push(message.to_string());
    }
    let data = exchange.error().and_then(|error| error.get("data"));
    let supported: Vec<String> = data
        .and_then(|data| data.get("supported"))
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    if exchange.error_code() == Some(UNSUPPORTED_PROTOCOL_VERSION) {
        if supported.is_empty() {
            problems.push("`data.supported` must be a non-empty array of strings".into());
        } else if !ctx.supported_versions.is_empty()
            && !supported.iter().all(|version| ctx.supported_versions.contains(version))
        {
            problems.push(format!(
                "`data.supported` {supported:?} is not a subset of discover's supportedVersions {:?}",
                ctx.supported_versions
            ));
        }
        if data.and_then(|data| data.get("requested")).and_then(Value::as_str) != Some(bad) {
            problems.push(format!("`data.requested` must echo {bad:?}"));
        }
    }
    let v1 = if problems.is_empty() {
        Finding::kept(
            "V-1",
            format!("version {bad} in header and `_meta` got -32022 with data.supported {supported:?}"),
        )
    } else {
        let sdk = if ctx.is_http() || exchange.result().is_none() { "" } else { V1_SERVE_STDIO };
        Finding::broken(
            "V-1",
            format!(
                "V-1's probe (`server/discover` asking for version {bad} in the header and `_meta`, {}): {}{sdk}",
                v1_when(ctx.is_http()),
                problems.join("; ")
            ),
        )
    }
    .with(&exchange);
    let v2 = match supported.iter().find(|version| version.as_str() == PROTOCOL_VERSION).or(supported.first()) {
        None => Finding::not_applicable("V-2", "no `data.supported` to retry with"),
        Some(version) => {
            let request = jsonrpc::with_meta_version(jsonrpc::modern_request("server/discover", json!({})), version);
            let retry = ctx.modern.send(Outgoing::request(request).set("MCP-Protocol-Version", version)).await;
            match expect::result(&retry) {
                Ok(_) => Finding::kept("V-2", format!("the retry with {version} succeeded")),
                Err(message) => {
                    Finding::broken("V-2", format!("retrying with {version} from data.supported: {message}"))
                        .with(&retry)
                }
            }
        }
    };
    vec![v1, v2]
}

/// B-3, B-4 (and X-5's `initialize` on stdio is in the stdio probes): how the server answers
/// a legacy `initialize`. Runs on a separate connection (stdio: a separate process) because a
/// dual-era server may lock a connection to the legacy era.
pub(crate) async fn legacy_handshake(
    ctx: &Context,
    initialize: Option<&crate::mcp::exchange::Exchange>,
) -> Vec<Finding> {
    if ctx.era == Era::Legacy {
        return vec![
            Finding::not_applicable("B-3", "the server is legacy (2025-11-25): it answers `initialize` by design"),
            Finding::not_applicable("B-4", "the server is legacy only"),
        ];
    }
    let owned;
    let exchange = match initialize {
        Some(exchange) => exchange,
        None => {
            let Ok(connection) = ctx.seconds.get(Purpose::Handshake) else {
                return vec![Finding::not_applicable(
                    "B-3",
                    "could not open a second connection for the `initialize` probe",
                )];
            };
            owned = connection
                .send(Outgoing::request(era::initialize_request()).remove("MCP-Protocol-Version").remove("Mcp-Method"))
                .await;
            ctx.seconds.done(Purpose::Handshake, &connection).await;
            &owned
        }
    };
    if exchange.result().is_some() {
        return vec![
            Finding::kept("B-3", "the server answered the legacy `initialize`: it is dual-era (2025-11-25 served too)")
                .with(exchange),
            Finding::kept(
                "B-4",
                "dual-era: `initialize` succeeded on one connection while 2026-07-28 requests are served statelessly",
            )
            .with(exchange),
        ];
    }
    if exchange.error().is_some_and(|error| error.get("message").is_some_and(|message| !message.is_string())) {
        // The refusal is malformed: that is M-10's finding, and no text can name versions.
        return vec![
            Finding::not_applicable(
                "B-3",
                "the refusal of `initialize` has no string `message` to name versions in (see M-10)",
            )
            .with(exchange),
            Finding::not_applicable("B-4", "modern-only server (initialize refused)"),
        ];
    }
    let text = exchange.error().map(Value::to_string).unwrap_or_else(|| exchange.body_excerpt.clone());
    let b3 = if text.contains(PROTOCOL_VERSION) {
        Finding::kept("B-3", "a modern-only server: its answer to `initialize` names its supported versions")
    } else {
        Finding::broken(
            "B-3",
            format!(
                "a modern-only server SHOULD name its supported versions when refusing `initialize`; got {}",
                exchange.describe()
            ),
        )
    };
    vec![b3.with(exchange), Finding::not_applicable("B-4", "modern-only server (initialize refused)")]
}

/// K-2..K-4: the tasks extension, only when advertised. No task is ever created.
pub(crate) async fn tasks(ctx: &Context) -> Vec<Finding> {
    let extension = "io.modelcontextprotocol/tasks";
    if ctx.capabilities.pointer("/extensions/io.modelcontextprotocol~1tasks").is_none() {
        return ["K-2", "K-3", "K-4"]
            .into_iter()
            .map(|id| Finding::not_applicable(id, "the server does not advertise the tasks extension"))
            .collect();
    }
    let task_id = "mcp-eval-probe-no-such-task";
    let mut findings = Vec::new();
    let exchange = ctx.modern.send(modern("tasks/get", json!({"taskId": task_id}))).await;
    let data_names = exchange
        .error()
        .and_then(|error| error.pointer("/data/requiredCapabilities/extensions"))
        .and_then(|extensions| extensions.get(extension))
        .is_some();
    findings.push(
        match expect::error(&exchange, jsonrpc::MISSING_CLIENT_CAPABILITY, ctx.is_http().then_some(400)) {
            Ok(message) if data_names => Finding::kept("K-2", message),
            Ok(_) => Finding::broken("K-2", "-32021 must name the extension in `data.requiredCapabilities.extensions`"),
            Err(message) => Finding::broken("K-2", format!("`tasks/get` without the extension declared: {message}")),
        }
        .with(&exchange),
    );
    let declared = json!({"extensions": {extension: {}}});
    let exchange = ctx
        .modern
        .send(modern_with_meta(
            "tasks/get",
            json!({"taskId": task_id}),
            jsonrpc::META_CLIENT_CAPABILITIES,
            declared.clone(),
        ))
        .await;
    findings.push(
        match expect::error(&exchange, INVALID_PARAMS, None) {
            Ok(message) => Finding::kept("K-3", message),
            Err(message) => Finding::broken("K-3", format!("`tasks/get` of an unknown taskId: {message}")),
        }
        .with(&exchange),
    );
    if ctx.is_http() {
        let exchange = ctx
            .modern
            .send(
                modern_with_meta("tasks/get", json!({"taskId": task_id}), jsonrpc::META_CLIENT_CAPABILITIES, declared)
                    .set("Mcp-Name", "mcp-eval-other-task"),
            )
            .await;
        findings.push(
            match expect::error(&exchange, jsonrpc::HEADER_MISMATCH, Some(400)) {
                Ok(message) => Finding::kept("K-4", message),
                Err(message) => Finding::broken("K-4", format!("`Mcp-Name` ≠ `taskId`: {message}")),
            }
            .with(&exchange),
        );
    } else {
        findings.push(Finding::not_applicable("K-4", "headers exist only on Streamable HTTP"));
    }
    findings
}

/// An id as a user reads it: its JSON type and value (`the string "7"`, `the number 7`).
fn id_shape(id: &Value) -> String {
    match id {
        Value::String(text) => format!("the string {text:?}"),
        Value::Number(number) => format!("the number {number}"),
        Value::Null => "null".to_owned(),
        other => format!("{other}"),
    }
}

/// A finding for a probe that must be rejected with `code` (and `status` over HTTP).
pub(crate) fn reject_finding(
    id: &'static str,
    what: &str,
    exchange: &crate::mcp::exchange::Exchange,
    code: i64,
    status: Option<u16>,
) -> Finding {
    match expect::error(exchange, code, status) {
        Ok(message) => Finding::kept(id, format!("{what}: {message}")),
        Err(message) => Finding::broken(id, format!("{what}: {message}")),
    }
    .with(exchange)
}

/// A finding for a probe that must be served normally.
pub(crate) fn accept_finding(id: &'static str, what: &str, exchange: &crate::mcp::exchange::Exchange) -> Finding {
    match expect::result(exchange) {
        Ok(_) => Finding::kept(id, format!("{what} was served")),
        Err(message) => Finding::broken(id, format!("{what} must be served: {message}")),
    }
    .with(exchange)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_says_on_stdio_that_its_probe_came_after_the_opening_discover_and_tools_list() {
        let stdio = v1_when(false);
        assert!(stdio.contains("after the opening `server/discover`") && stdio.contains("`tools/list`"), "{stdio}");
        assert!(v1_when(true).contains("of its own"), "{}", v1_when(true));
    }

    #[test]
    fn the_serve_stdio_hint_says_a_discover_sent_first_gets_32022_and_only_later_a_result() {
        assert!(!V1_SERVE_STDIO.contains("whatever the version"), "{V1_SERVE_STDIO}");
        assert!(
            V1_SERVE_STDIO.contains("sent first") && V1_SERVE_STDIO.contains("once other requests"),
            "{V1_SERVE_STDIO}"
        );
    }
}
