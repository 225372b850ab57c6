//! The seam between layer 1 and the models: a [`Provider`] takes a conversation in our own
//! neutral form ([`CompletionRequest`]: system text, [`Message`]s, [`ToolSpec`]s with MCP names,
//! [`Sampling`], [`ToolChoice`]) and returns one [`Completion`] or a typed [`ProviderError`].
//! Each adapter owns its wire's quirks (tool-name rules, arguments as text or object, missing
//! ids, missing usage); the runner sees only these types.
//!
//! - [`names`]: MCP tool names ↔ the names a provider accepts (deterministic, reversible);
//! - [`openai`]: OpenAI Chat Completions and the servers that speak it;
//! - [`anthropic`]: the Anthropic Messages API;
//! - [`cassette`]: recorded exchanges, replayed instead of a live model (and `--record`);
//! - [`embeddings`]: OpenAI-compatible `/embeddings`, for the `embedding` argument matcher;
//! - [`source`]: where a model's answers come from (live, recording, replaying), as the settings
//!   build it;
//! - [`schema`]: tool input schemas as each provider accepts them, and the model's arguments
//!   validated against the original.
//!
//! Secrets never reach an error text: adapters redact their key from every message they keep.

pub(crate) mod anthropic;
pub(crate) mod cassette;
pub(crate) mod embeddings;
pub(crate) mod names;
pub(crate) mod openai;
pub(crate) mod schema;
pub(crate) mod source;
mod wire;

#[cfg(test)]
pub(crate) mod test_server;

/// How to reach one model: the API root (`https://api.openai.com/v1` for Chat Completions,
/// `https://api.anthropic.com` for Messages), the key (`None` for a local server that needs
/// none), the `model` field and the time one request may take, connection included. Its `Debug`
/// shows whether a key is set, never the key.
#[derive(Clone)]
pub(crate) struct EndpointConfig {
    /// The API root, without the method's path.
    pub base_url: String,
    /// The key (`Authorization: Bearer …` or `x-api-key`).
    pub api_key: Option<String>,
    /// The `model` field.
    pub model: String,
    /// The time one request may take, connection included.
    pub timeout: std::time::Duration,
}

impl std::fmt::Debug for EndpointConfig {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("EndpointConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .field("model", &self.model)
            .field("timeout", &self.timeout)
            .finish()
    }
}

use std::time::Duration;

use serde_json::Value;

use crate::mcp::tools::ToolView;
pub(crate) use crate::mcp::transport::BoxFuture;

/// One model API.
pub(crate) trait Provider: Send + Sync + std::fmt::Debug {
    /// Asks the model for its next message.
    fn complete<'a>(&'a self, request: &'a CompletionRequest) -> BoxFuture<'a, Result<Completion, ProviderError>>;
}

/// The heading after which the rubric judge's request quotes the trial's trace (tool calls,
/// their results and the final answer): tolerant replay keys a judge's request on the text up
/// to it (`cassette::model_key`), since the results below it are data.
pub(crate) const TRACE_HEADING: &str = "## The trace (tool calls, results and the final answer)";

/// Everything one model call needs.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CompletionRequest {
    /// The system text, when there is one.
    pub system: Option<String>,
    /// The conversation so far, oldest first.
    pub messages: Vec<Message>,
    /// The tools the model may call (MCP names; the adapter renames them for its wire).
    pub tools: Vec<ToolSpec>,
    /// Sampling settings; an unset field is not sent.
    pub sampling: Sampling,
    /// Whether and which tool the model must call.
    pub tool_choice: ToolChoice,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Message {
    /// What the user says.
    User(String),
    /// What the model said: text, tool calls or both.
    Assistant {
        /// The text, when there is any.
        text: Option<String>,
        /// The tool calls, in order.
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call.
    ToolResult(ToolResult),
}

/// One tool call of the model.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolCall {
    /// The call's id (the model's, or one we generated: see `id_generated`).
    pub id: String,
    /// The MCP name of the tool; the wire name as sent when the model named no known tool (see
    /// `unknown_tool`).
    pub name: String,
    /// The arguments: a JSON value, or the raw text when it was not JSON (see
    /// `arguments_unparsable`).
    pub arguments: Value,
    /// The model sent no id (or an empty one), or one an earlier call of the conversation has,
    /// and this one was generated ([`make_call_ids_unique`]).
    pub id_generated: bool,
    /// The arguments text was not JSON; `arguments` is that text as a JSON string.
    pub arguments_unparsable: bool,
    /// The model named a tool that was not offered.
    pub unknown_tool: bool,
}

/// Gives each call of `calls` an id no other call of the conversation has: `seen` holds the ids
/// used so far and gains these. A repeated id (OpenAI-compatible servers such as DeepSeek's and
/// GLM's give parallel calls one id; some restart their numbering each turn) becomes
/// `<id>_<n>`, the smallest `n` from 2 that is free, and is marked `id_generated`. The real APIs
/// refuse a history that repeats an id (OpenAI: `Duplicate value for 'tool_call_id'`,
/// Anthropic: `` `tool_use` ids must be unique ``), so the conversation echoed to the model
/// carries these ids, each result under its own call's.
pub(crate) fn make_call_ids_unique(calls: &mut [ToolCall], seen: &mut std::collections::HashSet<String>) {
    for call in calls {
        if seen.insert(call.id.clone()) {
            continue;
        }
        let fresh = (2u64..)
            .map(|n| format!("{}_{n}", call.id))
            .find(|id| !seen.contains(id))
            .expect("an unbounded range has a free id");
        seen.insert(fresh.clone());
        call.id = fresh;
        call.id_generated = true;
    }
}

#[cfg(test)]
impl ToolCall {
    /// A well-formed call (model id, known tool, JSON arguments).
    pub(crate) fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments,
            id_generated: false,
            arguments_unparsable: false,
            unknown_tool: false,
        }
    }
}

/// The result of one tool call, as text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolResult {
    /// The id of the call it answers.
    pub call_id: String,
    /// The result's text.
    pub content: String,
    /// The tool reported an error (MCP `isError: true`).
    pub is_error: bool,
}

/// A tool as offered to a model.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolSpec {
    /// The MCP name.
    pub name: String,
    /// The description, when there is one.
    pub description: Option<String>,
    /// The input JSON Schema as the model should see it.
    pub input_schema: Value,
}

impl From<&ToolView> for ToolSpec {
    fn from(tool: &ToolView) -> Self {
        Self { name: tool.name.clone(), description: tool.description.clone(), input_schema: tool.input_schema.clone() }
    }
}

/// Sampling settings and tool choice: a golden case's, sent as they are.
pub(crate) use crate::golden::{Sampling, ToolChoice};

/// The model's answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Completion {
    /// The message text, when there is any.
    pub text: Option<String>,
    /// The tool calls, in order (tool use is decided from these, never from `finish`).
    pub tool_calls: Vec<ToolCall>,
    /// Why the model stopped, as reported.
    pub finish: FinishReason,
    /// Token counts, when reported (`None` is unknown, never zero).
    pub usage: Option<Usage>,
    /// The model version the provider says answered (`model` of the response, e.g.
    /// `gpt-4.1-2025-04-14` for the alias `gpt-4.1`), at most [`MAX_REPORTED_CHARS`] characters;
    /// `None` when it said none. Evidence of a model change between runs, never a key.
    pub reported_model: Option<String>,
    /// OpenAI's `system_fingerprint` (the backend configuration that served the call), at most
    /// [`MAX_REPORTED_CHARS`] characters; `None` when not reported (Anthropic never reports one).
    pub system_fingerprint: Option<String>,
}

/// The most characters kept of a reported model version or fingerprint.
pub(crate) const MAX_REPORTED_CHARS: usize = 128;

/// A reported model version or fingerprint as kept: a non-empty string, trimmed and bounded to
/// [`MAX_REPORTED_CHARS`] characters; anything else (absent, `null`, empty, not a string) is
/// `None`.
pub(crate) fn reported_text(value: Option<&Value>) -> Option<String> {
    let text = value.and_then(Value::as_str).map(str::trim).filter(|text| !text.is_empty())?;
    Some(wire::bounded(text, MAX_REPORTED_CHARS))
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FinishReason {
    /// It finished its message.
    Stop,
    /// It called tools.
    ToolCalls,
    /// It reached the token limit (tool calls may be cut).
    Length,
    /// A content filter stopped it.
    ContentFilter,
    /// Another reason, as reported.
    Other(String),
    /// No reason given.
    Unknown,
}

/// Token counts of one call, normalised the same way on both wires: the report's type.
pub(crate) use crate::report::telemetry::Usage;

/// Why a model call failed. Texts are bounded and never hold a secret.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum ProviderError {
    /// The key was refused (401/403).
    #[error("the model API refused the credentials (HTTP {status}): {message}")]
    Unauthorized {
        /// 401 or 403.
        status: u16,
        /// The API's message.
        message: String,
    },
    /// The model does not exist or this key cannot use it.
    #[error("the model API does not know this model: {0}")]
    ModelNotFound(String),
    /// Too many requests; try again after `retry_after` when given.
    #[error("the model API is rate limiting (retry after {retry_after:?}): {message}")]
    RateLimited {
        /// What `Retry-After` (or `retry-after-ms`) asked for.
        retry_after: Option<Duration>,
        /// The API's message.
        message: String,
    },
    /// The account is out of quota or credit (a 429 that waiting does not fix).
    #[error("the model API account is out of quota: {0}")]
    QuotaExhausted(String),
    /// The API refused the request itself (another 4xx: a schema it does not accept, a parameter
    /// the model does not support, a wrong URL).
    #[error("the model API rejected the request (HTTP {status}): {message}")]
    Rejected {
        /// The status.
        status: u16,
        /// The API's message.
        message: String,
    },
    /// The model answered with a tool call its own API could not read (Groq's 400
    /// `tool_use_failed`, with the model's text in `failed_generation`; groq/groq-typescript#28):
    /// the model's failure, which the agent loop grades as an answer with no call, never the
    /// provider's error. Not retried: the same request gives the same kind of answer.
    #[error("the model API could not read the tool call the model wrote (HTTP 400): {message}")]
    UnreadableCall {
        /// The API's message.
        message: String,
        /// What the model wrote, as the API returned it (bounded, redacted).
        generation: String,
    },
    /// The API failed (5xx, or 408).
    #[error("the model API failed (HTTP {status}): {message}")]
    Server {
        /// The status.
        status: u16,
        /// The API's message.
        message: String,
    },
    /// The API failed the same way twice (the same status and message): an error that trying
    /// again does not change (llama.cpp's 500 on a history it cannot parse), given up. Only
    /// rate limits, 408/502/503/504/529, timeouts and dropped connections are tried on.
    #[error(
        "the model API failed the same way twice (HTTP {status}): {message}; not tried again: the same answer twice is a deterministic error, which a retry does not change (only rate limits, HTTP 408/502/503/504/529, timeouts and dropped connections are tried on)"
    )]
    Repeated {
        /// The status.
        status: u16,
        /// The API's message.
        message: String,
    },
    /// No answer: connection refused or reset, timeout.
    #[error("cannot reach the model API: {0}")]
    Network(String),
    /// An answer we cannot read.
    #[error("the model API answered something unreadable: {0}")]
    BadResponse(String),
    /// Our request cannot be sent as asked (tool names that cannot be told apart, too many tools,
    /// a named tool choice that is not offered).
    #[error("cannot ask the model: {0}")]
    InvalidRequest(String),
}

impl ProviderError {
    /// Whether the same request may succeed when tried again.
    pub(crate) fn is_retryable(&self) -> bool {
        matches!(self, Self::RateLimited { .. } | Self::Server { .. } | Self::Network(_))
    }

    /// Whether trying again can change the answer whatever it said (a rate limit, an overloaded
    /// or unreachable upstream, a timeout, a dropped connection), as opposed to a server error
    /// that may be deterministic: that one is tried again only while its answer changes.
    pub(crate) fn may_change(&self) -> bool {
        match self {
            Self::RateLimited { .. } | Self::Network(_) => true,
            Self::Server { status, .. } => matches!(status, 408 | 502 | 503 | 504 | 529),
            _ => false,
        }
    }

    /// This error as given up because `previous`, the attempt before, failed the same way:
    /// [`Self::Repeated`] for a server error that [`Self::may_change`] does not cover.
    pub(crate) fn repeated(&self, previous: Option<&ProviderError>) -> Option<ProviderError> {
        match self {
            Self::Server { status, message } if !self.may_change() && previous == Some(self) => {
                Some(Self::Repeated { status: *status, message: message.clone() })
            }
            _ => None,
        }
    }

    /// How long the API asked us to wait, when it did.
    pub(crate) fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sampling_reads_a_resolved_case() {
        let sampling = Sampling::from_case(&json!({"temperature": 1, "top_p": 0.9, "max_output_tokens": 100}));
        assert_eq!(sampling, Sampling { temperature: Some(1.0), top_p: Some(0.9), max_output_tokens: Some(100) });
        assert_eq!(Sampling::from_case(&json!({})), Sampling::default());
    }

    #[test]
    fn only_transient_failures_are_retryable() {
        let wait = Some(Duration::from_secs(3));
        let limited = ProviderError::RateLimited { retry_after: wait, message: "slow down".into() };
        assert!(limited.is_retryable());
        assert_eq!(limited.retry_after(), wait);
        assert!(ProviderError::Server { status: 503, message: String::new() }.is_retryable());
        assert!(ProviderError::Network("reset".into()).is_retryable());
        assert!(!ProviderError::Unauthorized { status: 401, message: String::new() }.is_retryable());
        assert!(!ProviderError::QuotaExhausted(String::new()).is_retryable());
        assert!(!ProviderError::ModelNotFound(String::new()).is_retryable());
        assert!(!ProviderError::BadResponse(String::new()).is_retryable());
    }

    #[test]
    fn a_server_error_that_repeats_itself_is_given_up_and_one_that_may_change_is_not() {
        let failed = |status: u16, message: &str| ProviderError::Server { status, message: message.into() };
        let first = failed(500, "template failed");
        assert_eq!(first.repeated(None), None, "a first 500 is tried again");
        assert_eq!(first.repeated(Some(&failed(500, "other"))), None, "a 500 that changed is tried again");
        let given_up = first.repeated(Some(&first.clone())).expect("the same 500 twice is given up");
        assert!(!given_up.is_retryable());
        assert!(given_up.to_string().contains("not tried again"), "{given_up}");
        let busy = failed(503, "busy");
        assert_eq!(busy.repeated(Some(&busy.clone())), None, "an overloaded server may recover");
        let limited = ProviderError::RateLimited { retry_after: None, message: "slow".into() };
        assert_eq!(limited.repeated(Some(&limited.clone())), None);
    }
}
