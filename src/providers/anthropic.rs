//! The Anthropic Messages API (`POST {base_url}/v1/messages`, `x-api-key`,
//! `anthropic-version: 2023-06-01`).
//!
//! What we send: tool names renamed to `^[a-zA-Z0-9_-]{1,128}$` ([`super::names`]), schemas as
//! given as `input_schema`, the system text as the top-level `system`, `max_tokens` always (the
//! API requires it: the case's `max_output_tokens`, else [`DEFAULT_MAX_TOKENS`]),
//! `temperature`/`top_p` only when set (only `temperature` when both are: see [`request_body`]),
//! `tool_choice` only with tools. An assistant message is a list of blocks (`text` when there is
//! any, then one `tool_use` per call with its `input` object); tool results that follow each other
//! go back together as one user message of `tool_result` blocks with `is_error` (a user text right
//! after them joins that message, after the results).
//!
//! What we read: `content` blocks (`text` joined, `tool_use` with `input` as an object — or, from a
//! lenient server, as JSON text, kept and flagged when it is not JSON), missing call ids generated
//! (`toolu_<turn>_<index>`, the same for the same conversation; a repeated id is made unique by
//! the agent loop, `super::make_call_ids_unique`), `stop_reason`, and `usage` whose
//! input count includes the cache reads and writes (Anthropic's `input_tokens` leaves them out),
//! and the response's `model` (the version that answered; Messages has no fingerprint).
//!
//! Errors (`{"type": "error", "error": {"type", "message"}}`): 401/403 → `Unauthorized`, 404
//! `not_found_error` → `ModelNotFound`, 429 → `RateLimited` with `retry-after` (or
//! `QuotaExhausted` for a spend limit, which waiting does not fix), 402 `billing_error` →
//! `QuotaExhausted`, `overloaded_error` (529, or a 429 that says so), 408/409 and 5xx → `Server`,
//! other 4xx → `Rejected`; the API's `error.message` is kept, bounded and redacted.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::EndpointConfig;
use super::names::{NameRule, ToolNames};
use super::wire::{MAX_MESSAGE_CHARS, bounded};
use super::{
    BoxFuture, Completion, CompletionRequest, FinishReason, Message, Provider, ProviderError, ToolCall, ToolChoice,
    Usage,
};
use crate::mcp::evidence::Redactor;

/// The `anthropic-version` header sent.
pub(crate) const API_VERSION: &str = "2023-06-01";

/// `max_tokens` when the case sets no `max_output_tokens` (the API requires the field).
pub(crate) const DEFAULT_MAX_TOKENS: u64 = 1024;

/// The Messages adapter. Its `Debug` shows the config (key hidden), not the redactor.
#[derive(Debug)]
pub(crate) struct AnthropicProvider {
    http: super::wire::Endpoint,
}

impl AnthropicProvider {
    /// A POST of `body` to `url` with the version header and the key (marked sensitive).
    fn post(&self, url: &str, body: &Value) -> Result<reqwest::RequestBuilder, ProviderError> {
        let mut builder = self
            .http
            .client
            .post(url)
            .header("anthropic-version", API_VERSION)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_string());
        if let Some(key) = &self.http.config.api_key {
            let mut value = reqwest::header::HeaderValue::from_str(key)
                .map_err(|_| ProviderError::InvalidRequest("the API key is not a valid header value".into()))?;
            value.set_sensitive(true);
            builder = builder.header("x-api-key", value);
        }
        Ok(builder)
    }

    /// An adapter for `config`. Fails only when the HTTP client cannot be built (the TLS backend).
    pub(crate) fn new(config: EndpointConfig) -> Result<Self, ProviderError> {
        Ok(Self { http: super::wire::Endpoint::new(config, "/v1/messages")? })
    }

    async fn call(&self, request: &CompletionRequest) -> Result<Completion, ProviderError> {
        let names = ToolNames::new(request.tools.iter().map(|tool| tool.name.as_str()), NameRule::ANTHROPIC)
            .map_err(|error| ProviderError::InvalidRequest(error.to_string()))?;
        let body = request_body(&self.http.config.model, request, &names)?;
        let value = super::wire::send_json(self.post(&self.http.url, &body)?, &self.http.redactor, error_for).await?;
        let turn = request.messages.iter().filter(|message| matches!(message, Message::Assistant { .. })).count();
        let mut completion = parse_completion(&value, &names, turn)?;
        super::wire::redact_reported(&mut completion, &self.http.redactor);
        Ok(completion)
    }

    /// The input tokens a Messages request offering `tools` would read with one short user
    /// message, as the API's `POST /v1/messages/count_tokens` counts them (free of charge; not
    /// a model call): what `--count-tokens` measures the footprint with.
    ///
    /// # Errors
    /// The API's errors, as [`Provider::complete`] gives them; a body without `input_tokens`
    /// is `BadResponse`.
    pub(crate) async fn count_tokens(&self, tools: &[super::ToolSpec]) -> Result<u64, ProviderError> {
        let request = CompletionRequest {
            messages: vec![Message::User("Hi.".into())],
            tools: tools.to_vec(),
            ..CompletionRequest::default()
        };
        let names = ToolNames::new(request.tools.iter().map(|tool| tool.name.as_str()), NameRule::ANTHROPIC)
            .map_err(|error| ProviderError::InvalidRequest(error.to_string()))?;
        let mut body = request_body(&self.http.config.model, &request, &names)?;
        if let Some(fields) = body.as_object_mut() {
            // The endpoint counts a request; it takes no output settings.
            fields.remove("max_tokens");
        }
        let url = format!("{}/count_tokens", self.http.url);
        let value = super::wire::send_json(self.post(&url, &body)?, &self.http.redactor, error_for).await?;
        value
            .get("input_tokens")
            .and_then(Value::as_u64)
            .ok_or_else(|| ProviderError::BadResponse("the count_tokens answer has no input_tokens".into()))
    }
}

impl Provider for AnthropicProvider {
    fn complete<'a>(&'a self, request: &'a CompletionRequest) -> BoxFuture<'a, Result<Completion, ProviderError>> {
        Box::pin(self.call(request))
    }
}

/// The tool definitions as a Messages request sends them (its `tools`), in order; `None` when
/// their names cannot be sent on this wire.
pub(crate) fn tool_definitions(tools: &[super::ToolSpec]) -> Option<Vec<Value>> {
    let request = CompletionRequest { tools: tools.to_vec(), ..CompletionRequest::default() };
    let names = ToolNames::new(request.tools.iter().map(|tool| tool.name.as_str()), NameRule::ANTHROPIC).ok()?;
    let body = request_body("", &request, &names).ok()?;
    body.get("tools")?.as_array().cloned()
}

/// The JSON body of one Messages request.
///
/// When both `temperature` and `top_p` are set only `temperature` is sent: newer models refuse
/// the two together, and `temperature` is the one a golden case is expected to pin.
///
/// A tool call whose arguments were not a JSON object (possible only when the conversation came
/// from another wire) is sent back with `input: {}`, since `tool_use.input` must be an object; its
/// tool result says what went wrong.
pub(crate) fn request_body(
    model: &str,
    request: &CompletionRequest,
    names: &ToolNames,
) -> Result<Value, ProviderError> {
    let wire = |name: &str| names.wire(name).unwrap_or(name).to_owned();
    let mut messages: Vec<Value> = Vec::with_capacity(request.messages.len());
    // Tool results that follow each other share one user message (the API wants every result of
    // one assistant turn right after it, in one message).
    let mut results: Vec<Value> = Vec::new();
    for message in &request.messages {
        let next = match message {
            Message::ToolResult(result) => {
                results.push(json!({"type": "tool_result", "tool_use_id": result.call_id,
                                    "content": result.content, "is_error": result.is_error}));
                continue;
            }
            // Text after tool results joins their message, after them (the API wants the results
            // first in the user message that carries them).
            Message::User(text) if !results.is_empty() => {
                results.push(json!({"type": "text", "text": text}));
                messages.push(json!({"role": "user", "content": std::mem::take(&mut results)}));
                continue;
            }
            Message::User(text) => json!({"role": "user", "content": text}),
            Message::Assistant { text, tool_calls } => {
                let mut blocks = Vec::with_capacity(tool_calls.len() + 1);
                if let Some(text) = text.as_deref().filter(|text| !text.is_empty()) {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for call in tool_calls {
                    let input = match &call.arguments {
                        object @ Value::Object(_) if !call.arguments_unparsable => object.clone(),
                        _ => Value::Object(Map::new()),
                    };
                    blocks.push(json!({"type": "tool_use", "id": call.id, "name": wire(&call.name), "input": input}));
                }
                json!({"role": "assistant", "content": blocks})
            }
        };
        if !results.is_empty() {
            messages.push(json!({"role": "user", "content": std::mem::take(&mut results)}));
        }
        messages.push(next);
    }
    if !results.is_empty() {
        messages.push(json!({"role": "user", "content": results}));
    }
    let sampling = &request.sampling;
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("max_tokens".into(), json!(sampling.max_output_tokens.unwrap_or(DEFAULT_MAX_TOKENS)));
    if let Some(system) = &request.system {
        body.insert("system".into(), json!(system));
    }
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                let mut object = Map::new();
                object.insert("name".into(), json!(wire(&tool.name)));
                if let Some(description) = &tool.description {
                    object.insert("description".into(), json!(description));
                }
                object.insert("input_schema".into(), tool.input_schema.clone());
                Value::Object(object)
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        let choice = match &request.tool_choice {
            ToolChoice::Auto => json!({"type": "auto"}),
            ToolChoice::Required => json!({"type": "any"}),
            ToolChoice::None => json!({"type": "none"}),
            ToolChoice::Named(name) => {
                let Some(wire) = names.wire(name) else {
                    return Err(ProviderError::InvalidRequest(format!(
                        "the tool choice names `{name}`, which is not offered"
                    )));
                };
                json!({"type": "tool", "name": wire})
            }
        };
        body.insert("tool_choice".into(), choice);
    }
    if let Some(temperature) = sampling.temperature {
        body.insert("temperature".into(), json!(temperature));
    } else if let Some(top_p) = sampling.top_p {
        body.insert("top_p".into(), json!(top_p));
    }
    Ok(Value::Object(body))
}

/// Reads a 2xx body. `turn` numbers generated call ids (the assistant messages before this one).
pub(crate) fn parse_completion(value: &Value, names: &ToolNames, turn: usize) -> Result<Completion, ProviderError> {
    let blocks = value
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| ProviderError::BadResponse("no `content`".into()))?;
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(block.get("text").and_then(Value::as_str).unwrap_or("")),
            Some("tool_use") => tool_calls.push(parse_tool_use(block, names, turn, tool_calls.len())?),
            // Thinking and server-tool blocks carry nothing the runner reads.
            _ => {}
        }
    }
    let finish = match value.get("stop_reason").and_then(Value::as_str) {
        Some("end_turn" | "stop_sequence") => FinishReason::Stop,
        Some("tool_use") => FinishReason::ToolCalls,
        Some("max_tokens" | "model_context_window_exceeded") => FinishReason::Length,
        Some("refusal") => FinishReason::ContentFilter,
        Some(other) => FinishReason::Other(bounded(other, 64)),
        None => FinishReason::Unknown,
    };
    let usage = value.get("usage").filter(|usage| usage.is_object()).map(|usage| {
        let count = |key: &str| usage.get(key).and_then(Value::as_u64);
        // `input_tokens` leaves out cache writes and reads; the neutral count is everything read.
        let input_tokens = count("input_tokens").map(|input| {
            input + count("cache_creation_input_tokens").unwrap_or(0) + count("cache_read_input_tokens").unwrap_or(0)
        });
        Usage {
            input_tokens,
            output_tokens: count("output_tokens"),
            cache_read_tokens: count("cache_read_input_tokens"),
            cache_write_tokens: count("cache_creation_input_tokens"),
            reasoning_tokens: None,
            reported_cost_usd: None,
        }
    });
    Ok(Completion {
        text: Some(text).filter(|text| !text.is_empty()),
        tool_calls,
        finish,
        usage,
        reported_model: super::reported_text(value.get("model")),
        system_fingerprint: None,
    })
}

fn parse_tool_use(block: &Value, names: &ToolNames, turn: usize, index: usize) -> Result<ToolCall, ProviderError> {
    let wire_name = block
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| ProviderError::BadResponse(format!("tool_use block {index} has no `name`")))?;
    let (id, id_generated) = match block.get("id").and_then(Value::as_str) {
        Some(id) if !id.is_empty() => (id.to_owned(), false),
        _ => (format!("toolu_{turn}_{index}"), true),
    };
    let (arguments, arguments_unparsable) = match block.get("input") {
        Some(object @ Value::Object(_)) => (object.clone(), false),
        // A lenient stand-in may send JSON text.
        Some(Value::String(raw)) => match serde_json::from_str::<Value>(raw) {
            Ok(parsed) => (parsed, false),
            Err(_) => (Value::String(raw.clone()), true),
        },
        None | Some(Value::Null) => (Value::Object(Map::new()), false),
        Some(other) => (Value::String(other.to_string()), true),
    };
    let (name, unknown_tool) = match names.mcp(wire_name) {
        Some(mcp) => (mcp.to_owned(), false),
        None => (wire_name.to_owned(), true),
    };
    Ok(ToolCall { id, name, arguments, id_generated, arguments_unparsable, unknown_tool })
}

/// The error for a non-2xx answer; `error.type` decides before the status where they disagree.
fn error_for(status: u16, retry_after: Option<Duration>, body: &[u8], redactor: &Redactor) -> ProviderError {
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let error = parsed.as_ref().and_then(|value| value.get("error"));
    let kind = error.and_then(|error| error.get("type")).and_then(Value::as_str).unwrap_or("");
    let code = error.and_then(|error| error.pointer("/details/error_code")).and_then(Value::as_str).unwrap_or("");
    let message = error
        .and_then(|error| error.as_str().or_else(|| error.get("message").and_then(Value::as_str)))
        .or_else(|| parsed.as_ref().and_then(|value| value.get("message")).and_then(Value::as_str))
        .map(str::to_owned)
        .unwrap_or_else(|| String::from_utf8_lossy(body).trim().to_owned());
    let message = bounded(&redactor.redact(&message), MAX_MESSAGE_CHARS);
    let message = if message.is_empty() { "(no message)".to_owned() } else { message };
    match status {
        401 | 403 => ProviderError::Unauthorized { status, message },
        _ if kind == "overloaded_error" => ProviderError::Server { status, message },
        402 => ProviderError::QuotaExhausted(message),
        404 if kind == "not_found_error" => ProviderError::ModelNotFound(message),
        429 if code == "enforced_spend_limit_reached" => ProviderError::QuotaExhausted(message),
        429 => ProviderError::RateLimited { retry_after, message },
        408 | 409 | 500.. => ProviderError::Server { status, message },
        _ => ProviderError::Rejected { status, message },
    }
}

#[cfg(test)]
mod tests;
