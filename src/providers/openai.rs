//! OpenAI Chat Completions (`POST {base_url}/chat/completions`), the wire most model servers
//! speak (OpenAI, Azure's v1 API, vLLM, Ollama, llama.cpp, OpenRouter, Groq).
//!
//! Strict in what we send: tool names renamed to `^[a-zA-Z0-9_-]{1,64}$` ([`super::names`]),
//! schemas sent non-strict as given, `temperature`/`top_p`/`max_tokens` only when set,
//! `tool_choice` only with tools, and an assistant message that carried tool calls sent back with
//! `"content": ""` (llama.cpp answers 500 to `null`), and a call whose arguments were not JSON sent
//! back with `"arguments": "{}"` (llama.cpp answers 500 to a history it cannot parse). A tool error is sent as text with an
//! `Error: ` prefix (a `tool` message has no error flag).
//!
//! Lenient in what we read, because compatible servers deviate: `arguments` as a JSON string or
//! as an object (text that is not JSON is kept and flagged, never an error), missing or empty
//! call ids (generated: `call_<turn>_<index>`, the same for the same conversation; an id the
//! conversation already has is made unique by the agent loop, `super::make_call_ids_unique`), `usage`
//! missing or `null` (unknown, not zero), tool calls with any `finish_reason`, `content` as text
//! or as text parts. The response's `model` (the dated version behind an alias) and
//! `system_fingerprint` are kept when present (either may be missing), as evidence of drift.
//!
//! Errors: 401/403 → `Unauthorized`, 404 naming a model → `ModelNotFound`, 429 → `RateLimited`
//! with `Retry-After`/`retry-after-ms` (or `QuotaExhausted` for `insufficient_quota`), 408/5xx →
//! `Server`, other 4xx → `Rejected`; the API's `error.message` is kept, bounded and redacted.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::EndpointConfig;
use super::names::{NameRule, ToolNames};
use super::{
    BoxFuture, Completion, CompletionRequest, FinishReason, Message, Provider, ProviderError, ToolCall, ToolChoice,
    Usage,
};
use crate::mcp::evidence::Redactor;

/// The most tools one request may carry (OpenAI refuses more).
pub(crate) const MAX_TOOLS: usize = 128;

use super::wire::{MAX_MESSAGE_CHARS, bounded};

/// The Chat Completions adapter. Its `Debug` shows the config (key hidden), not the redactor.
#[derive(Debug)]
pub(crate) struct OpenAiProvider {
    http: super::wire::Endpoint,
}

impl OpenAiProvider {
    /// An adapter for `config`. Fails only when the HTTP client cannot be built (the TLS backend).
    pub(crate) fn new(config: EndpointConfig) -> Result<Self, ProviderError> {
        Ok(Self { http: super::wire::Endpoint::new(config, "/chat/completions")? })
    }

    async fn call(&self, request: &CompletionRequest) -> Result<Completion, ProviderError> {
        let names = tool_names(request)?;
        let body = request_body(&self.http.config.model, request, &names)?;
        let builder = self.http.post_json_bearer(body.to_string());
        let value = super::wire::send_json(builder, &self.http.redactor, error_for).await?;
        let turn = request.messages.iter().filter(|message| matches!(message, Message::Assistant { .. })).count();
        let mut completion = parse_completion(&value, &names, turn)?;
        super::wire::redact_reported(&mut completion, &self.http.redactor);
        Ok(completion)
    }
}

impl Provider for OpenAiProvider {
    fn complete<'a>(&'a self, request: &'a CompletionRequest) -> BoxFuture<'a, Result<Completion, ProviderError>> {
        Box::pin(self.call(request))
    }
}

/// The wire names of the request's tools, or why they cannot be sent.
fn tool_names(request: &CompletionRequest) -> Result<ToolNames, ProviderError> {
    if request.tools.len() > MAX_TOOLS {
        return Err(ProviderError::InvalidRequest(format!(
            "{} tools offered; OpenAI accepts at most {MAX_TOOLS} (name a subset of the tools)",
            request.tools.len()
        )));
    }
    ToolNames::new(request.tools.iter().map(|tool| tool.name.as_str()), NameRule::OPENAI)
        .map_err(|error| ProviderError::InvalidRequest(error.to_string()))
}

/// The tool definitions as a Chat Completions request sends them (its `tools`), in order;
/// `None` when their names cannot be sent on this wire.
pub(crate) fn tool_definitions(tools: &[super::ToolSpec]) -> Option<Vec<Value>> {
    let request = CompletionRequest { tools: tools.to_vec(), ..CompletionRequest::default() };
    let names = tool_names(&request).ok()?;
    let body = request_body("", &request, &names).ok()?;
    body.get("tools")?.as_array().cloned()
}

/// The JSON body of one Chat Completions request.
pub(crate) fn request_body(
    model: &str,
    request: &CompletionRequest,
    names: &ToolNames,
) -> Result<Value, ProviderError> {
    let wire = |name: &str| names.wire(name).unwrap_or(name).to_owned();
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = &request.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    for message in &request.messages {
        messages.push(match message {
            Message::User(text) => json!({"role": "user", "content": text}),
            Message::Assistant { text, tool_calls } => {
                let mut object = Map::new();
                object.insert("role".into(), json!("assistant"));
                object.insert("content".into(), json!(text.as_deref().unwrap_or("")));
                if !tool_calls.is_empty() {
                    let calls: Vec<Value> = tool_calls
                        .iter()
                        .map(|call| {
                            // Arguments that were not JSON (a call cut by the output limit:
                            // `"{"`) go back as `{}`: the call was not sent, its tool result says
                            // why, and llama.cpp answers 500 to a history whose arguments it
                            // cannot parse (issue 41).
                            let arguments =
                                if call.arguments_unparsable { "{}".to_owned() } else { call.arguments.to_string() };
                            json!({"id": call.id, "type": "function",
                                   "function": {"name": wire(&call.name), "arguments": arguments}})
                        })
                        .collect();
                    object.insert("tool_calls".into(), Value::Array(calls));
                }
                Value::Object(object)
            }
            Message::ToolResult(result) => {
                let content =
                    if result.is_error { format!("Error: {}", result.content) } else { result.content.clone() };
                json!({"role": "tool", "tool_call_id": result.call_id, "content": content})
            }
        });
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                let mut function = Map::new();
                function.insert("name".into(), json!(wire(&tool.name)));
                if let Some(description) = &tool.description {
                    function.insert("description".into(), json!(description));
                }
                function.insert("parameters".into(), tool.input_schema.clone());
                json!({"type": "function", "function": function})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        let choice = match &request.tool_choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::Required => json!("required"),
            ToolChoice::None => json!("none"),
            ToolChoice::Named(name) => {
                let Some(wire) = names.wire(name) else {
                    return Err(ProviderError::InvalidRequest(format!(
                        "the tool choice names `{name}`, which is not offered"
                    )));
                };
                json!({"type": "function", "function": {"name": wire}})
            }
        };
        body.insert("tool_choice".into(), choice);
    }
    let sampling = &request.sampling;
    if let Some(temperature) = sampling.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if let Some(top_p) = sampling.top_p {
        body.insert("top_p".into(), json!(top_p));
    }
    if let Some(tokens) = sampling.max_output_tokens {
        body.insert("max_tokens".into(), json!(tokens));
    }
    Ok(Value::Object(body))
}

/// Reads a 2xx body. `turn` numbers generated call ids (the assistant messages before this one).
pub(crate) fn parse_completion(value: &Value, names: &ToolNames, turn: usize) -> Result<Completion, ProviderError> {
    let choice = value
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|choices| choices.first())
        .ok_or_else(|| ProviderError::BadResponse("no `choices[0]`".into()))?;
    let message = choice.get("message").ok_or_else(|| ProviderError::BadResponse("no `choices[0].message`".into()))?;
    let text = match message.get("content") {
        Some(Value::String(text)) => Some(text.clone()),
        // Content parts: keep the text ones.
        Some(Value::Array(parts)) => {
            Some(parts.iter().filter_map(|part| part.get("text").and_then(Value::as_str)).collect::<String>())
        }
        _ => None,
    }
    .filter(|text| !text.is_empty());
    let mut tool_calls = Vec::new();
    for (index, call) in message.get("tool_calls").and_then(Value::as_array).into_iter().flatten().enumerate() {
        tool_calls.push(parse_tool_call(call, names, turn, index)?);
    }
    let finish = match choice.get("finish_reason").and_then(Value::as_str) {
        Some("stop") => FinishReason::Stop,
        Some("tool_calls" | "function_call") => FinishReason::ToolCalls,
        Some("length") => FinishReason::Length,
        Some("content_filter") => FinishReason::ContentFilter,
        Some(other) => FinishReason::Other(bounded(other, 64)),
        None => FinishReason::Unknown,
    };
    let usage = value.get("usage").filter(|usage| usage.is_object()).map(|usage| Usage {
        input_tokens: usage.get("prompt_tokens").and_then(Value::as_u64),
        output_tokens: usage.get("completion_tokens").and_then(Value::as_u64),
        cache_read_tokens: usage.pointer("/prompt_tokens_details/cached_tokens").and_then(Value::as_u64),
        cache_write_tokens: usage.pointer("/prompt_tokens_details/cache_write_tokens").and_then(Value::as_u64),
        reasoning_tokens: usage.pointer("/completion_tokens_details/reasoning_tokens").and_then(Value::as_u64),
        reported_cost_usd: usage.get("cost").and_then(Value::as_f64).filter(|cost| cost.is_finite() && *cost >= 0.0),
    });
    Ok(Completion {
        text,
        tool_calls,
        finish,
        usage,
        reported_model: super::reported_text(value.get("model")),
        system_fingerprint: super::reported_text(value.get("system_fingerprint")),
    })
}

fn parse_tool_call(call: &Value, names: &ToolNames, turn: usize, index: usize) -> Result<ToolCall, ProviderError> {
    let function = call
        .get("function")
        .ok_or_else(|| ProviderError::BadResponse(format!("tool call {index} has no `function`")))?;
    let wire_name = function
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| ProviderError::BadResponse(format!("tool call {index} has no `function.name`")))?;
    let (id, id_generated) = match call.get("id").and_then(Value::as_str) {
        Some(id) if !id.is_empty() => (id.to_owned(), false),
        _ => (format!("call_{turn}_{index}"), true),
    };
    let (arguments, arguments_unparsable) = match function.get("arguments") {
        // Gateways send `""` for a call of a tool that takes no arguments (public report:
        // NousResearch/hermes-agent#83937): no arguments, as when the member is absent.
        Some(Value::String(raw)) if raw.trim().is_empty() => (Value::Object(Map::new()), false),
        Some(Value::String(raw)) => match serde_json::from_str::<Value>(raw) {
            Ok(parsed) => (parsed, false),
            Err(_) => (Value::String(raw.clone()), true),
        },
        // Some servers send the object itself.
        Some(object @ Value::Object(_)) => (object.clone(), false),
        // Absent: a call without arguments.
        None => (Value::Object(Map::new()), false),
        Some(other) => (Value::String(other.to_string()), true),
    };
    let (name, unknown_tool) = match names.mcp(wire_name) {
        Some(mcp) => (mcp.to_owned(), false),
        None => (wire_name.to_owned(), true),
    };
    Ok(ToolCall { id, name, arguments, id_generated, arguments_unparsable, unknown_tool })
}

/// The error for a non-2xx answer.
pub(super) fn error_for(status: u16, retry_after: Option<Duration>, body: &[u8], redactor: &Redactor) -> ProviderError {
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    // `{"error": {"message", "type", "code"}}`, `{"error": "text"}` or `{"message": …}`.
    let error = parsed.as_ref().and_then(|value| value.get("error"));
    let field = |key: &str| error.and_then(|error| error.get(key)).and_then(Value::as_str).unwrap_or("");
    let message = error
        .and_then(|error| error.as_str().or_else(|| error.get("message").and_then(Value::as_str)))
        .or_else(|| parsed.as_ref().and_then(|value| value.get("message")).and_then(Value::as_str))
        .map(str::to_owned)
        .unwrap_or_else(|| String::from_utf8_lossy(body).trim().to_owned());
    let message = bounded(&redactor.redact(&message), MAX_MESSAGE_CHARS);
    let message = if message.is_empty() { "(no message)".to_owned() } else { message };
    let (kind, code) = (field("type"), field("code"));
    match status {
        401 | 403 => ProviderError::Unauthorized { status, message },
        404 if code == "model_not_found" || message.to_lowercase().contains("model") => {
            ProviderError::ModelNotFound(message)
        }
        429 if kind == "insufficient_quota" || code == "insufficient_quota" => ProviderError::QuotaExhausted(message),
        429 => ProviderError::RateLimited { retry_after, message },
        408 | 500.. => ProviderError::Server { status, message },
        400 if code == "tool_use_failed" => ProviderError::UnreadableCall {
            message,
            generation: bounded(&redactor.redact(field("failed_generation")), MAX_MESSAGE_CHARS),
        },
        _ => ProviderError::Rejected { status, message },
    }
}

#[cfg(test)]
mod tests;
