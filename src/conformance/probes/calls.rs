//! Probes that call tools: only tools annotated `readOnlyHint: true` or listed as safe by the
//! user (`safe_tools` in `--config`). Covers T-5..T-7, E-2, M-5, R-5..R-8, R-10, L-2, L-3;
//! invalid arguments to the same tools are [`super::arguments`]'s.
//! What a tool returns is never copied into the report (it may hold anything); evidence keeps
//! the request and the shape of the result.

use serde_json::{Map, Value, json};

use super::modern_with_meta;
use crate::conformance::context::{Context, SafeTool};
use crate::conformance::finding::{Finding, Outcome};
use crate::conformance::schema;
use crate::mcp::era::Era;
use crate::mcp::exchange::Exchange;
use crate::mcp::jsonrpc::{self, META_CLIENT_CAPABILITIES};

/// How many safe tools are called at most.
pub(crate) const MAX_TOOLS: usize = 10;
/// Per-call timeout of tool probes: a slow tool must not hold the run up.
pub(crate) const CALL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// All tool-call probes.
pub(crate) async fn run(ctx: &Context) -> Vec<Finding> {
    let tools: Vec<&SafeTool> = ctx.safe_tools.iter().take(MAX_TOOLS).collect();
    let none =
        "no tool may be called: none is annotated `readOnlyHint: true` and none is listed in `safe_tools` of --config";
    if tools.is_empty() {
        return ["T-5", "T-6", "T-7", "E-2", "M-5", "R-5", "R-6", "R-7", "R-8", "R-10", "L-2", "L-3"]
            .into_iter()
            .map(|id| Finding::not_applicable(id, none))
            .collect();
    }
    let mut t5 = Vec::new();
    let mut t6 = Vec::new();
    let mut t7 = Vec::new();
    let mut l2 = Vec::new();
    let mut l3 = Vec::new();
    let mut capability_tools: Vec<(&SafeTool, Exchange)> = Vec::new();
    let mut input_required: Vec<(&SafeTool, Value, Exchange)> = Vec::new();
    // Every tool is called concurrently with a progress token; then (modern servers) every tool
    // that answered, concurrently again, with logLevel "error". The two rounds do not overlap:
    // on stdio, where log messages carry no request id, a log that arrives while only requests
    // without logLevel are in flight is attributable (L-1).
    let calls = tools.iter().map(|tool| async move {
        let params = json!({"name": tool.name, "arguments": tool.arguments, "_meta": {"progressToken": format!("mcp-eval-progress-{}", tool.name)}});
        let mut request = ctx.request("tools/call", params);
        request.timeout = Some(CALL_TIMEOUT.min(ctx.client_timeout()));
        (*tool, ctx.client.send(request).await)
    });
    let first_round = futures_util::future::join_all(calls).await;
    let logged_calls = first_round.iter().map(|(tool, exchange)| async move {
        if ctx.era == Era::Modern && exchange.result().is_some() {
            let params = json!({"name": tool.name, "arguments": tool.arguments});
            let mut request = modern_with_meta("tools/call", params, jsonrpc::META_LOG_LEVEL, json!("error"));
            request.timeout = Some(CALL_TIMEOUT.min(ctx.client_timeout()));
            Some(ctx.client.send(request).await)
        } else {
            None
        }
    });
    // Over stdio a log message carries no request id: it can be tied to its call only when that
    // call is the one in flight, so the logLevel round goes one call at a time there.
    let second_round = if ctx.is_http() {
        futures_util::future::join_all(logged_calls).await
    } else {
        let mut results = Vec::new();
        for call in logged_calls {
            results.push(call.await);
        }
        results
    };
    for ((tool, exchange), logged) in first_round.into_iter().zip(second_round) {
        let definition =
            ctx.tools.items.iter().find(|item| item.get("name").and_then(Value::as_str) == Some(tool.name.as_str()));
        if exchange.error_code() == Some(jsonrpc::MISSING_CLIENT_CAPABILITY) {
            capability_tools.push((tool, exchange.clone()));
        }
        let Some(result) = exchange.result() else { continue };
        if result.get("resultType").and_then(Value::as_str) == Some("input_required") {
            input_required.push((tool, json!({}), exchange.clone()));
            continue;
        }
        t7.push(call_shape(&tool.name, result, &exchange));
        if result.get("isError").and_then(Value::as_bool) != Some(true) {
            if let Some(output_schema) = definition.as_ref().and_then(|definition| definition.get("outputSchema")) {
                t5.push(output_conformance(&tool.name, output_schema, result, &exchange));
            }
        }
        if let Some(structured) = result.get("structuredContent") {
            t6.push(text_mirror(&tool.name, structured, result, &exchange));
        }
        l3.extend(progress(&tool.name, &exchange));
        if let Some(logged) = &logged {
            l2.extend(log_levels(&tool.name, logged));
        }
    }
    let mut findings = vec![
        merge("T-5", t5, "no called tool has an outputSchema and a successful result"),
        merge("T-6", t6, "no called tool returned structuredContent"),
        merge("T-7", t7, "no tool call returned a complete result"),
        merge("L-2", l2, "no called tool sent log messages for logLevel \"error\""),
        merge("L-3", l3, "no called tool sent progress notifications for a progressToken"),
    ];
    findings.extend(capabilities(ctx, &capability_tools, &mut input_required).await);
    findings.extend(round_trips(ctx, &input_required).await);
    findings
}

fn merge(id: &'static str, findings: Vec<Finding>, none: &str) -> Finding {
    if findings.is_empty() {
        return Finding::not_applicable(id, none);
    }
    let worst = findings.iter().map(|finding| finding.outcome).max().unwrap_or(Outcome::Kept);
    let mut chosen =
        findings.iter().find(|finding| finding.outcome == worst).cloned().unwrap_or_else(|| findings[0].clone());
    if findings.len() > 1 && worst == Outcome::Kept {
        chosen.message = findings.iter().map(|finding| finding.message.as_str()).collect::<Vec<_>>().join("; ");
    }
    chosen
}

fn call_shape(name: &str, result: &Value, exchange: &Exchange) -> Finding {
    let problems = crate::conformance::shapes::own(crate::conformance::shapes::check_result("tools/call", result));
    if problems.is_empty() {
        Finding::kept("T-7", format!("`{name}` returned a well-formed CallToolResult"))
    } else {
        Finding::broken("T-7", format!("`{name}`: {}", crate::conformance::problem::join(&problems, "M-10")))
            .with(exchange)
    }
}

fn output_conformance(name: &str, output_schema: &Value, result: &Value, exchange: &Exchange) -> Finding {
    let Some(structured) = result.get("structuredContent") else {
        return Finding::broken(
            "T-5",
            format!("`{name}` declares an outputSchema but its result has no `structuredContent`"),
        )
        .with(exchange);
    };
    match schema::compile_output_schema(output_schema) {
        Err(error) => {
            Finding::not_applicable("T-5", format!("`{name}`: its outputSchema cannot be compiled ({error}); see T-2"))
        }
        Ok(validator) => match schema::validate_instance(&validator, structured) {
            Ok(()) => Finding::kept("T-5", format!("`{name}`: structuredContent conforms to its outputSchema")),
            Err(errors) => Finding::broken(
                "T-5",
                format!(
                    "`{name}`: structuredContent does not conform to its outputSchema: {}",
                    errors.into_iter().take(3).collect::<Vec<_>>().join("; ")
                ),
            )
            .with(exchange),
        },
    }
}

fn text_mirror(name: &str, structured: &Value, result: &Value, exchange: &Exchange) -> Finding {
    let mirrored = result.get("content").and_then(Value::as_array).is_some_and(|blocks| {
        blocks.iter().any(|block| {
            block.get("type").and_then(Value::as_str) == Some("text")
                && block
                    .get("text")
                    .and_then(Value::as_str)
                    .and_then(|text| serde_json::from_str::<Value>(text).ok())
                    .as_ref()
                    == Some(structured)
        })
    });
    if mirrored {
        Finding::kept("T-6", format!("`{name}` mirrors its structuredContent in a text block"))
    } else {
        Finding::broken(
            "T-6",
            format!("`{name}` returns structuredContent without a TextContent block holding the same JSON"),
        )
        .with(exchange)
    }
}

fn progress(name: &str, exchange: &Exchange) -> Option<Finding> {
    let token = json!(format!("mcp-eval-progress-{name}"));
    let notes: Vec<&Value> = exchange
        .messages
        .iter()
        .filter(|message| message.get("method").and_then(Value::as_str) == Some("notifications/progress"))
        .collect();
    if notes.is_empty() {
        return None;
    }
    let mut last = f64::NEG_INFINITY;
    for note in &notes {
        if note.pointer("/params/progressToken") != Some(&token) {
            return Some(
                Finding::broken(
                    "L-3",
                    format!(
                        "`{name}`: a progress notification carries another token: {}",
                        note.pointer("/params/progressToken").unwrap_or(&Value::Null)
                    ),
                )
                .with(exchange),
            );
        }
        let value = note.pointer("/params/progress").and_then(Value::as_f64).unwrap_or(f64::NAN);
        if value.is_nan() || value <= last {
            return Some(
                Finding::broken("L-3", format!("`{name}`: progress must strictly increase; got {value} after {last}"))
                    .with(exchange),
            );
        }
        last = value;
    }
    Some(Finding::kept(
        "L-3",
        format!(
            "`{name}`: {} progress notifications with our token, strictly increasing, before the final response",
            notes.len()
        ),
    ))
}

fn log_levels(name: &str, exchange: &Exchange) -> Option<Finding> {
    let order = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];
    let levels: Vec<&str> = exchange
        .messages
        .iter()
        .filter(|message| message.get("method").and_then(Value::as_str) == Some("notifications/message"))
        .map(|message| message.pointer("/params/level").and_then(Value::as_str).unwrap_or("?"))
        .collect();
    if levels.is_empty() {
        return None;
    }
    let below: Vec<&&str> = levels
        .iter()
        .filter(|level| order.iter().position(|known| known == *level).is_none_or(|rank| rank < 4))
        .collect();
    Some(if below.is_empty() {
        Finding::kept("L-2", format!("`{name}`: {} log messages, all at or above \"error\"", levels.len()))
    } else {
        Finding::broken("L-2", format!("`{name}`: logLevel \"error\" was requested but messages at {below:?} arrived"))
            .with(exchange)
    })
}

/// E-2 and M-5: tools that need a client capability.
async fn capabilities<'a>(
    ctx: &Context,
    tools: &[(&'a SafeTool, Exchange)],
    input_required: &mut Vec<(&'a SafeTool, Value, Exchange)>,
) -> Vec<Finding> {
    let Some((tool, refused)) = tools.first() else {
        return vec![
            Finding::not_applicable(
                "E-2",
                "no callable tool needs a client capability (the official suite uses a fixture tool for this)",
            ),
            Finding::not_applicable("M-5", "no callable tool needs a client capability"),
        ];
    };
    let required = refused.error().and_then(|error| error.pointer("/data/requiredCapabilities")).cloned();
    let status_ok = refused.status.is_none_or(|status| status == 400);
    let e2 = match &required {
        Some(Value::Object(object)) if !object.is_empty() && status_ok => Finding::kept("E-2", format!("`{}` without the capability got -32021 naming {}", tool.name, Value::Object(object.clone()))),
        Some(Value::Object(_)) if !status_ok => Finding::broken("E-2", format!("`{}`: -32021 must come with HTTP 400; got {}", tool.name, refused.describe())),
        Some(other) => Finding::broken("E-2", format!("`{}`: `data.requiredCapabilities` must be a ClientCapabilities object naming the capability, got {other}", tool.name)),
        None => Finding::broken("E-2", format!("`{}`: -32021 must carry `data.requiredCapabilities`", tool.name)),
    }
    .with(refused);
    let Some(required) = required.filter(Value::is_object) else {
        return vec![e2, Finding::not_applicable("M-5", "the capability the tool needs is not named")];
    };
    // M-5: declare the capability on one request, then not on the next.
    let params = json!({"name": tool.name, "arguments": tool.arguments});
    let declared = ctx
        .client
        .send(modern_with_meta("tools/call", params.clone(), META_CLIENT_CAPABILITIES, required.clone()))
        .await;
    if declared.result().and_then(|result| result.get("resultType")).and_then(Value::as_str) == Some("input_required") {
        input_required.push((tool, required.clone(), declared.clone()));
    }
    let after = ctx.client.send(modern_with_meta("tools/call", params, META_CLIENT_CAPABILITIES, json!({}))).await;
    let m5 = if after.error_code() == Some(jsonrpc::MISSING_CLIENT_CAPABILITY) {
        Finding::kept(
            "M-5",
            format!("`{}`: declaring {required} on one request did not carry over to the next", tool.name),
        )
    } else {
        Finding::broken("M-5", format!("`{}`: after a request that declared {required}, a request declaring nothing must be refused again with -32021; got {}", tool.name, after.describe())).with(&after)
    };
    vec![e2, m5]
}

/// R-5..R-8, R-10: the MRTR retry chain on a tool that answered `input_required`.
async fn round_trips(ctx: &Context, candidates: &[(&SafeTool, Value, Exchange)]) -> Vec<Finding> {
    let ids = ["R-5", "R-6", "R-7", "R-8", "R-10"];
    let Some((tool, capabilities, first)) = candidates.first() else {
        return ids
            .into_iter()
            .map(|id| Finding::not_applicable(id, "no callable tool answered `input_required`"))
            .collect();
    };
    let result = first.result().cloned().unwrap_or(Value::Null);
    let requests = result.get("inputRequests").and_then(Value::as_object).cloned().unwrap_or_default();
    let state = result.get("requestState").cloned();
    let mut responses = Map::new();
    for (key, request) in &requests {
        responses.insert(key.clone(), answer(request));
    }
    let retry = |input_responses: Value, request_state: Option<Value>| {
        let mut params = json!({"name": tool.name, "arguments": tool.arguments, "inputResponses": input_responses});
        if let Some(state) = request_state {
            params["requestState"] = state;
        }
        ctx.client.send(modern_with_meta("tools/call", params, META_CLIENT_CAPABILITIES, capabilities.clone()))
    };
    let result_type = |exchange: &Exchange| {
        exchange.result().and_then(|result| result.get("resultType")).and_then(Value::as_str).map(str::to_owned)
    };
    let mut findings = Vec::new();

    let answered = retry(Value::Object(responses.clone()), state.clone()).await;
    findings.push(match result_type(&answered).as_deref() {
        Some("complete" | "input_required") => Finding::kept(
            "R-5",
            format!(
                "`{}`: the retry with inputResponses and requestState (new id) got `{}`",
                tool.name,
                result_type(&answered).unwrap_or_default()
            ),
        ),
        _ => Finding::broken("R-5", format!("`{}`: the MRTR retry failed: {}", tool.name, answered.describe()))
            .with(&answered),
    });
    findings.push(match &state {
        None => Finding::not_applicable("R-6", "the input_required result carries no requestState"),
        Some(state) => {
            let tampered = json!(format!("{}mcp-eval-tampered", state.as_str().unwrap_or("")));
            let exchange = retry(Value::Object(responses.clone()), Some(tampered)).await;
            if exchange.error().is_some() {
                Finding::kept("R-6", format!("a tampered requestState was rejected: {}", exchange.describe()))
            } else {
                Finding::broken(
                    "R-6",
                    format!(
                        "a tampered requestState must be rejected with an error, never completed; got {}",
                        exchange.describe()
                    ),
                )
                .with(&exchange)
            }
        }
    });
    if requests.is_empty() {
        for id in ["R-7", "R-8", "R-10"] {
            findings.push(Finding::not_applicable(id, "the input_required result carries only a requestState"));
        }
        return findings;
    }
    let missing = retry(json!({}), state.clone()).await;
    findings.push(match result_type(&missing).as_deref() {
        Some("input_required") => Finding::kept("R-7", "missing input responses were asked for again"),
        _ => Finding::broken(
            "R-7",
            format!("missing input responses SHOULD get a fresh input_required; got {}", missing.describe()),
        )
        .with(&missing),
    });
    let mut extra = responses.clone();
    extra.insert("mcp-eval-extra".into(), json!({"action": "decline"}));
    let extra = retry(Value::Object(extra), state.clone()).await;
    findings.push(match result_type(&extra).as_deref() {
        Some("complete" | "input_required") => Finding::kept("R-8", "an extra unknown input response was ignored"),
        _ => Finding::broken("R-8", format!("extra input responses SHOULD be ignored; got {}", extra.describe()))
            .with(&extra),
    });
    let key = requests.keys().next().cloned().unwrap_or_default();
    let malformed_value = retry(json!({ key: 12345 }), state.clone()).await;
    let malformed_null = retry(Value::Null, state.clone()).await;
    let refused =
        |exchange: &Exchange| exchange.error().is_some() || result_type(exchange).as_deref() == Some("input_required");
    findings.push(if refused(&malformed_value) && refused(&malformed_null) {
        Finding::kept("R-10", "malformed inputResponses were refused")
    } else {
        let culprit = if refused(&malformed_value) { &malformed_null } else { &malformed_value };
        Finding::broken(
            "R-10",
            format!("malformed inputResponses SHOULD be refused, never completed; got {}", culprit.describe()),
        )
        .with(culprit)
    });
    findings
}

/// An answer to one input request, as a user who accepts would give it.
fn answer(request: &Value) -> Value {
    match request.get("method").and_then(Value::as_str) {
        Some("elicitation/create") => {
            let mut content = Map::new();
            if let Some(properties) = request.pointer("/params/requestedSchema/properties").and_then(Value::as_object) {
                for (name, schema) in properties {
                    content.insert(name.clone(), sample(schema));
                }
            }
            json!({"action": "accept", "content": content})
        }
        Some("sampling/createMessage") => {
            json!({"role": "assistant", "content": {"type": "text", "text": "mcp-eval"}, "model": "mcp-eval"})
        }
        Some("roots/list") => json!({"roots": []}),
        _ => json!({"action": "decline"}),
    }
}

/// A value that fits a simple JSON Schema: its default, example, first enum value or a plain
/// value of its type.
pub(crate) fn sample(schema: &Value) -> Value {
    // Numbers take their smallest allowed value rather than a default: a default such as
    // "duration: 10" would make a probe wait for nothing.
    let numeric = matches!(schema.get("type").and_then(Value::as_str), Some("integer" | "number"));
    if numeric && schema.get("const").is_none() && schema.get("enum").is_none() {
        let minimum = schema.get("minimum").and_then(Value::as_f64).unwrap_or(0.0);
        let minimum =
            schema.get("exclusiveMinimum").and_then(Value::as_f64).map_or(minimum, |exclusive| exclusive + 1.0);
        return if schema.get("type").and_then(Value::as_str) == Some("integer") {
            json!(minimum.ceil() as i64)
        } else {
            json!(minimum)
        };
    }
    for key in ["default", "const"] {
        if let Some(value) = schema.get(key) {
            return value.clone();
        }
    }
    if let Some(value) = schema.get("examples").and_then(|examples| examples.get(0)) {
        return value.clone();
    }
    if let Some(value) = schema.get("enum").and_then(|values| values.get(0)) {
        return value.clone();
    }
    let kind = match schema.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        Some(Value::Array(kinds)) => {
            kinds.iter().filter_map(Value::as_str).find(|kind| *kind != "null").unwrap_or("string")
        }
        _ => "string",
    };
    match kind {
        "integer" => json!(schema.get("minimum").and_then(Value::as_i64).unwrap_or(1)),
        "number" => json!(schema.get("minimum").and_then(Value::as_f64).unwrap_or(1.0)),
        "boolean" => json!(true),
        "array" => json!([]),
        "object" => {
            let mut object = Map::new();
            for name in schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str)
            {
                let property = schema.pointer(&format!("/properties/{name}")).cloned().unwrap_or(json!({}));
                object.insert(name.into(), sample(&property));
            }
            Value::Object(object)
        }
        _ => json!("mcp-eval"),
    }
}

/// Arguments for a read-only tool with no user-given arguments: a sample of its inputSchema.
pub(crate) fn sample_arguments(tool: &Value) -> Value {
    let schema = tool.get("inputSchema").cloned().unwrap_or(json!({}));
    let mut object = Map::new();
    // Optional numbers get their smallest value too, so a tool whose defaults mean "work for
    // ten seconds" (durations, step counts) does the least work.
    for (name, property) in schema.get("properties").and_then(Value::as_object).into_iter().flatten() {
        if matches!(property.get("type").and_then(Value::as_str), Some("integer" | "number")) {
            object.insert(name.clone(), sample(property));
        }
    }
    for name in schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
        let property =
            schema.get("properties").and_then(|properties| properties.get(name)).cloned().unwrap_or(json!({}));
        object.insert(name.into(), sample(&property));
    }
    Value::Object(object)
}
