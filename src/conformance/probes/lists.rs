//! Lists, pagination and tool definitions: C-4, P-1..P-6, T-1..T-4, T-8, T-9, H-12, H-23.

use serde_json::{Value, json};

use crate::conformance::context::{Context, ListWalk, Purpose, walk};
use crate::conformance::finding::{Finding, Outcome};
use crate::conformance::schema::{self, Severity};

/// C-4, P-2, P-6 from the walks made at start-up.
pub(crate) fn walks(ctx: &Context) -> Vec<Finding> {
    let all = [&ctx.tools, &ctx.prompts, &ctx.resources, &ctx.templates];
    let walked: Vec<&ListWalk> = all.into_iter().filter(|walk| walk.first.is_some()).collect();
    // Only walks that read every page are evidence for the pagination rules.
    let complete: Vec<&ListWalk> = walked.iter().copied().filter(|walk| walk.ok()).collect();
    let mut findings = Vec::new();
    // C-4 (modern): the same cacheScope on every page.
    let mut c4 = Vec::new();
    let mut multi_page = false;
    for walk in &walked {
        if walk.scopes.len() > 1 {
            multi_page = true;
            if walk.scopes.windows(2).any(|pair| pair[0] != pair[1]) {
                c4.push(format!("`{}` pages carry different cacheScopes: {:?}", walk.method, walk.scopes));
            }
        }
    }
    findings.push(if !c4.is_empty() {
        Finding::broken("C-4", c4.join("; "))
    } else if multi_page {
        Finding::kept("C-4", "every page of each paginated list carries the same cacheScope")
    } else {
        // One page per list: nothing to compare, so no evidence either way.
        Finding::not_applicable("C-4", "no list has more than one page: there is no second page to compare")
    });
    // P-2: pagination shape.
    let problems: Vec<String> = walked
        .iter()
        .flat_map(|walk| walk.problems.iter().filter(|problem| !problem.contains("failed")).cloned())
        .collect();
    let pages: usize = complete.iter().map(|walk| walk.pages).sum();
    findings.push(if !problems.is_empty() {
        Finding::broken("P-2", problems.join("; "))
    } else if complete.is_empty() {
        Finding::not_applicable("P-2", "no list could be walked to its end (see P-1 and the list errors)")
    } else {
        Finding::kept(
            "P-2",
            format!("{} list(s) walked to the end over {pages} page(s); every nextCursor was a string", complete.len()),
        )
    });
    // P-6: listed entries are well-formed.
    let mut p6 = Vec::new();
    for resource in ctx.resources.items.iter() {
        let uri = resource.get("uri").and_then(Value::as_str);
        match uri {
            Some(uri) if is_uri(uri) => {}
            _ => p6.push(format!("resource {} has no RFC 3986 `uri`", short(&resource))),
        }
        if !resource.get("name").is_some_and(Value::is_string) {
            p6.push(format!("resource {} has no `name`", short(&resource)));
        }
    }
    for template in ctx.templates.items.iter() {
        if !template.get("uriTemplate").is_some_and(Value::is_string)
            || !template.get("name").is_some_and(Value::is_string)
        {
            p6.push(format!("template {} needs `uriTemplate` and `name`", short(&template)));
        }
    }
    for prompt in ctx.prompts.items.iter() {
        if !prompt.get("name").is_some_and(Value::is_string) {
            p6.push(format!("prompt {} has no `name`", short(&prompt)));
        }
        if let Some(arguments) = prompt.get("arguments").and_then(Value::as_array) {
            if arguments.iter().any(|argument| !argument.get("name").is_some_and(Value::is_string)) {
                p6.push(format!("prompt {} has an argument without `name`", short(&prompt)));
            }
        }
    }
    let n_entries = ctx.resources.items.len() + ctx.templates.items.len() + ctx.prompts.items.len();
    findings.push(if !p6.is_empty() {
        Finding::broken("P-6", p6.into_iter().take(5).collect::<Vec<_>>().join("; "))
    } else if n_entries == 0 {
        Finding::not_applicable("P-6", "the server lists no resources, templates or prompts")
    } else {
        Finding::kept("P-6", format!("{n_entries} listed resources, templates and prompts are well-formed"))
    });
    findings
}

fn is_uri(text: &str) -> bool {
    let Some((scheme, _)) = text.split_once(':') else { return false };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|first| first.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && !text.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// A value as JSON text for a message, at most 80 characters ([`crate::text::clip`]).
fn short(value: &Value) -> String {
    crate::text::clip(&value.to_string(), 80)
}

/// P-1: two walks give the same order (and the same definitions). The second walk keeps only
/// names and digests.
pub(crate) async fn ordering(ctx: &Context) -> Vec<Finding> {
    let request = |params: Value| ctx.request("tools/list", params);
    let again = {
        let _permit = ctx.big_lists.acquire().await;
        walk(&ctx.client, "tools/list", "tools", &request, false).await
    };
    if !ctx.tools.ok() || !again.ok() {
        let mut finding = Finding::not_applicable("P-1", "tools/list could not be walked twice");
        // A walk that got no answer at all is blocked once the server stopped answering.
        finding.unanswered = [&ctx.tools, &again]
            .iter()
            .any(|walk| walk.failed.as_ref().is_some_and(crate::mcp::exchange::Exchange::unanswered));
        return vec![finding];
    }
    let (first, second) = (&ctx.tools.names, &again.names);
    let show = |names: &[String]| {
        let more = if names.len() > 8 { format!(" and {} more", names.len() - 8) } else { String::new() };
        format!("{}{more}", names.iter().take(8).cloned().collect::<Vec<_>>().join(", "))
    };
    if first != second {
        return vec![Finding::broken(
            "P-1",
            format!("two tools/list walks gave different orders: [{}] then [{}]", show(first), show(second)),
        )];
    }
    if ctx.tools.digests != again.digests {
        return vec![Finding::ambiguous(
            "P-1",
            "the order is stable but tool definitions changed between two walks (caching relies on stable content)",
        )];
    }
    vec![Finding::kept("P-1", format!("two tools/list walks gave the same {} tools in the same order", first.len()))]
}

/// P-3: a second connection (stdio: a second process) lists the same tools.
pub(crate) async fn across_connections(ctx: &Context) -> Vec<Finding> {
    if !ctx.tools.ok() {
        return vec![Finding::not_applicable("P-3", "tools/list failed")];
    }
    let Ok(second) = ctx.seconds.get(Purpose::Shared) else {
        return vec![Finding::not_applicable("P-3", "could not open a second connection")];
    };
    let request = |params: Value| crate::conformance::probes::modern("tools/list", params);
    let permit = ctx.big_lists.acquire().await;
    let other = walk(&second, "tools/list", "tools", &request, false).await;
    drop(permit);
    // "A tools/call in between does not change the set": call one read-only tool on the second
    // connection, then list again there.
    let mut called = None;
    if let Some(tool) = ctx.safe_tools.first().filter(|_| other.ok()) {
        let mut call =
            crate::conformance::probes::modern("tools/call", json!({"name": tool.name, "arguments": tool.arguments}));
        call.timeout = Some(ctx.client_timeout().min(std::time::Duration::from_secs(5)));
        second.send(call).await;
        let _permit = ctx.big_lists.acquire().await;
        called = Some((tool.name.clone(), walk(&second, "tools/list", "tools", &request, false).await));
    }
    ctx.seconds.done(Purpose::Shared, &second).await;
    let names = |walk: &ListWalk| {
        let mut names = walk.names.clone();
        names.sort();
        names
    };
    let (here, there) = (names(&ctx.tools), names(&other));
    if !other.ok() {
        let mut finding = Finding::broken(
            "P-3",
            format!(
                "tools/list on a second connection failed: {}",
                other.failed.as_ref().map(|e| e.describe()).unwrap_or_default()
            ),
        );
        // A walk that got no answer at all is blocked once the server stopped answering.
        finding.unanswered = other.failed.as_ref().is_some_and(crate::mcp::exchange::Exchange::unanswered);
        return vec![finding];
    }
    if let Some((tool, after)) = called.as_ref().filter(|(_, after)| after.ok()) {
        let after = names(after);
        if after != there {
            let added: Vec<&String> = after.iter().filter(|name| !there.contains(name)).collect();
            let removed: Vec<&String> = there.iter().filter(|name| !after.contains(name)).collect();
            return vec![Finding::broken(
                "P-3",
                format!(
                    "a `tools/call` of `{tool}` changed the tool set listed on the same connection ({} tools before, {} after; added {added:?}, removed {removed:?}); a call must not change the set unless list_changed semantics apply",
                    there.len(),
                    after.len()
                ),
            )];
        }
    }
    if here == there {
        vec![Finding::kept(
            "P-3",
            format!(
                "a second {} lists the same {} tools",
                if ctx.is_http() { "connection" } else { "process" },
                here.len()
            ),
        )]
    } else {
        vec![Finding::broken(
            "P-3",
            format!(
                "the tool set differs by connection: {} tools here, {} on a second connection",
                here.len(),
                there.len()
            ),
        )]
    }
}

/// How many listed resources P-4 reads (reads are read-only by design; the first few cover a
/// text and a binary resource on most servers).
const MAX_READS: usize = 3;

/// P-4 on one listed resource.
async fn read_listed(ctx: &Context, uri: &str) -> Finding {
    let exchange = ctx.client.send(ctx.request("resources/read", json!({"uri": uri}))).await;
    let finding = match exchange.result() {
        None if exchange.error_code() == Some(crate::mcp::jsonrpc::INVALID_PARAMS) => {
            Finding::broken("P-4", format!("reading `{uri}`, which the server itself listed, got -32602 (not found)"))
        }
        None => Finding::not_applicable("P-4", format!("reading `{uri}` got {}; not observed", exchange.describe())),
        Some(result) if result.get("resultType").and_then(Value::as_str) == Some("input_required") => {
            Finding::kept("P-4", format!("reading `{uri}` asked for input (input_required)"))
        }
        Some(result) => match result.get("contents").and_then(Value::as_array) {
            None => Finding::broken("P-4", "the result has no `contents` array"),
            Some(contents) if contents.is_empty() => {
                Finding::ambiguous("P-4", format!("reading `{uri}` returned empty `contents`"))
            }
            Some(contents) => {
                let bad: Vec<String> = contents
                    .iter()
                    .enumerate()
                    .filter_map(|(index, item)| {
                        content_problem(item).map(|problem| format!("contents[{index}]: {problem}"))
                    })
                    .collect();
                if bad.is_empty() {
                    Finding::kept("P-4", format!("reading `{uri}` returned {} well-formed item(s)", contents.len()))
                } else {
                    Finding::broken("P-4", format!("reading `{uri}`: {}", bad.join("; ")))
                }
            }
        },
    };
    finding.with(&exchange)
}

/// P-4, P-5: read the first listed resources and get the first prompt.
pub(crate) async fn read_and_get(ctx: &Context) -> Vec<Finding> {
    let mut findings = Vec::new();
    let uris: Vec<String> = ctx
        .resources
        .items
        .iter()
        .filter_map(|resource| resource.get("uri").and_then(Value::as_str).map(str::to_owned))
        .take(MAX_READS)
        .collect();
    if uris.is_empty() {
        findings.push(Finding::not_applicable("P-4", "the server lists no resources"));
    } else {
        let reads = futures_util::future::join_all(uris.iter().map(|uri| read_listed(ctx, uri))).await;
        // A broken or doubtful read decides; otherwise the reads that were observed.
        let rank = |outcome: Outcome| match outcome {
            Outcome::NotApplicable => 0,
            Outcome::Kept => 1,
            other => 2 + other as u8,
        };
        let worst = reads.iter().map(|finding| rank(finding.outcome)).max().unwrap_or(0);
        findings.extend(reads.into_iter().filter(|finding| rank(finding.outcome) == worst));
    }
    match ctx.prompts.items.first() {
        None => findings.push(Finding::not_applicable("P-5", "the server lists no prompts")),
        Some(prompt) => {
            let name = prompt.get("name").cloned().unwrap_or(Value::Null);
            let mut arguments = serde_json::Map::new();
            for argument in prompt.get("arguments").and_then(Value::as_array).into_iter().flatten() {
                if argument.get("required").and_then(Value::as_bool) == Some(true) {
                    if let Some(argument_name) = argument.get("name").and_then(Value::as_str) {
                        arguments.insert(argument_name.into(), json!("mcp-eval"));
                    }
                }
            }
            let exchange =
                ctx.client.send(ctx.request("prompts/get", json!({"name": name, "arguments": arguments}))).await;
            let finding = match exchange.result() {
                None if exchange.error_code() == Some(crate::mcp::jsonrpc::INVALID_PARAMS) => Finding::kept(
                    "P-5",
                    format!("prompt {name} rejected the placeholder arguments with -32602 (acceptable)"),
                ),
                None => Finding::broken(
                    "P-5",
                    format!("`prompts/get` of the listed prompt {name}: {}", exchange.describe()),
                ),
                Some(result) if result.get("resultType").and_then(Value::as_str) == Some("input_required") => {
                    Finding::kept("P-5", "the prompt asked for input (input_required)")
                }
                Some(result) => match result.get("messages").and_then(Value::as_array) {
                    None => Finding::broken("P-5", "the result has no `messages` array"),
                    Some(messages) => {
                        let bad = crate::conformance::shapes::own(crate::conformance::shapes::check_result(
                            "prompts/get",
                            result,
                        ));
                        if bad.is_empty() {
                            Finding::kept(
                                "P-5",
                                format!("prompt {name} returned {} well-formed message(s)", messages.len()),
                            )
                        } else {
                            Finding::broken("P-5", crate::conformance::problem::join(&bad[..bad.len().min(3)], "M-10"))
                        }
                    }
                },
            };
            findings.push(finding.with(&exchange));
        }
    }
    findings
}

fn content_problem(item: &Value) -> Option<String> {
    if !item.get("uri").is_some_and(Value::is_string) {
        return Some("no `uri`".into());
    }
    match (item.get("text"), item.get("blob")) {
        (Some(text), None) if text.is_string() => None,
        (None, Some(Value::String(blob))) => {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD
                .decode(blob)
                .err()
                .map(|error| format!("`blob` is not valid base64: {error}"))
        }
        (Some(_), Some(_)) => Some("has both `text` and `blob`".into()),
        _ => Some("needs exactly one of `text` (string) or `blob` (base64 string)".into()),
    }
}

/// T-1..T-4, T-8, T-9, H-12 over every listed tool.
pub(crate) fn tool_definitions(ctx: &Context) -> Vec<Finding> {
    if !ctx.tools.ok() {
        return ["T-1", "T-2", "T-3", "T-4", "T-8", "T-9", "H-12"]
            .into_iter()
            .map(|id| Finding::not_applicable(id, "tools/list could not be read"))
            .collect();
    }
    if ctx.tools.items.is_empty() {
        return ["T-1", "T-2", "T-3", "T-4", "T-8", "T-9", "H-12"]
            .into_iter()
            .map(|id| Finding::not_applicable(id, "the server lists no tools"))
            .collect();
    }
    let problems = schema::check_tools(ctx.tools.items.iter(), &schema::Limits::default());
    let n_tools = ctx.tools.items.len();
    ["T-1", "T-2", "T-3", "T-4", "T-8", "T-9", "H-12"]
        .into_iter()
        .map(|id| {
            let mine: Vec<&(String, schema::Problem)> =
                problems.iter().filter(|(_, problem)| problem.id == id).collect();
            if mine.is_empty() {
                return Finding::kept(id, format!("all {n_tools} tool definitions keep this rule"));
            }
            let fail = mine.iter().any(|(_, problem)| problem.severity == Severity::Fail);
            let text = mine
                .iter()
                .take(5)
                .map(|(tool, problem)| format!("`{tool}`: {}", problem.message))
                .collect::<Vec<_>>()
                .join("; ");
            let more = if mine.len() > 5 { format!(" (and {} more)", mine.len() - 5) } else { String::new() };
            let message = format!("{text}{more}");
            if fail { Finding::broken(id, message) } else { Finding::ambiguous(id, message) }
        })
        .collect()
}

/// H-23: three concurrent requests are each answered with their own id.
pub(crate) async fn concurrency(ctx: &Context) -> Vec<Finding> {
    // tools/list as the row says, unless the list is large: three copies of a huge list at once
    // would test our memory, not the server's concurrency.
    let method = if ctx.tools.ok() && ctx.tools.names.len() <= 100 { "tools/list" } else { "server/discover" };
    let send = || ctx.client.send(ctx.request(method, json!({})));
    let (a, b, c) = tokio::join!(send(), send(), send());
    let bad: Vec<String> = [&a, &b, &c]
        .iter()
        .filter(|exchange| {
            exchange.result().is_none() || exchange.response.as_ref().and_then(|r| r.get("id")) != exchange.id.as_ref()
        })
        .map(|exchange| exchange.describe())
        .collect();
    vec![if bad.is_empty() {
        Finding::kept("H-23", format!("three concurrent `{method}` requests were each answered with their own id"))
    } else {
        Finding::broken("H-23", format!("concurrent `{method}` requests: {}", bad.join("; "))).with(&a)
    }]
}
