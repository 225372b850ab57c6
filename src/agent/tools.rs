//! Tool calls of layer 1 made for real: the [`ToolExecutor`] seam, and [`McpTools`], which sends
//! each call as a `tools/call` over the session layer 0 opened (modern: with `_meta`,
//! `Mcp-Method` and `Mcp-Name`; legacy: inside the `initialize` session), and turns the result
//! into the text a model reads: at most [`MODEL_RESULT_BYTES`] of it, cut with a marker that
//! gives the size the tool sent (the outcome keeps that size for the trace and the summary).

use std::sync::Arc;

use serde_json::{Value, json};

use super::input::{Round, Session};
use crate::mcp::client::Client;
use crate::mcp::era::{self, Era};
use crate::mcp::exchange::Outgoing;
use crate::mcp::jsonrpc;
use crate::mcp::transport::BoxFuture;

/// The most bytes of a tool result a model is given (kept with the report, which states it).
pub(crate) use crate::report::evals::MODEL_RESULT_BYTES;

/// What one tool call gave.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ToolOutcome {
    /// A `tools/call` result: its text for the model, and `isError`.
    Result {
        /// The text the model reads.
        text: String,
        /// `isError: true`.
        is_error: bool,
        /// Wall time in milliseconds.
        latency_ms: u64,
        /// Something the trace should say about it (a result the model cannot use).
        note: Option<String>,
        /// Bytes of the text the server's result made, when it was longer than
        /// [`MODEL_RESULT_BYTES`] and `text` is the cut copy.
        server_bytes: Option<usize>,
        /// The multi round-trip rounds before the result.
        rounds: Vec<Round>,
    },
    /// The server's input requests could not be answered, or it kept asking past the bound: a
    /// finding that fails the trial.
    Stopped {
        /// Why.
        reason: String,
        /// Wall time in milliseconds.
        latency_ms: u64,
        /// The rounds made.
        rounds: Vec<Round>,
    },
    /// A JSON-RPC error: the model reads it as an error result.
    Error {
        /// The error, in one line.
        message: String,
        /// Wall time in milliseconds.
        latency_ms: u64,
        /// The multi round-trip rounds before the error.
        rounds: Vec<Round>,
    },
    /// No answer (timeout, closed connection, a server that died): the trial cannot go on.
    Failed {
        /// What happened.
        reason: String,
        /// Wall time in milliseconds.
        latency_ms: u64,
    },
    /// Answered by layer 2's fault layer instead of the server (never sent): a fault's text (an
    /// error result), or the answer to a call an adversarial payload asked for.
    Injected {
        /// The text the model reads.
        text: String,
        /// The model reads it as an error result.
        is_error: bool,
        /// What was injected (`http-500@search#1`).
        label: String,
    },
}

/// Which call of which trial a tool call is: what decorators name in their events.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CallSite<'a> {
    /// The trial.
    pub trial: &'a crate::events::TrialRef,
    /// The model turn (from 1) whose answer asked for the call.
    pub turn: usize,
    /// The W3C trace context the request carries in `_meta` (layer 3's span of the call), if
    /// any.
    pub trace: Option<&'a jsonrpc::TraceMeta>,
}

/// Makes tool calls on the server under test: the seam layers wrap (telemetry around the real
/// tools, [`super::observe::ObservedTools`]; layer 2's faults around that).
pub(crate) trait ToolExecutor: Send + Sync {
    /// Calls `name` with `arguments` for the call `at`, answering input requests from `inputs`
    /// when the case scripts them.
    fn call<'a>(
        &'a self,
        at: CallSite<'a>,
        name: &'a str,
        arguments: &'a Value,
        inputs: Option<&'a mut Session<'_>>,
    ) -> BoxFuture<'a, ToolOutcome>;
}

/// `tools/call` over an open session.
#[derive(Debug, Clone)]
pub(crate) struct McpTools {
    client: Arc<Client>,
    era: Era,
}

impl McpTools {
    /// Calls through `client`, in `era`'s request shape.
    pub(crate) fn new(client: Arc<Client>, era: Era) -> Self {
        Self { client, era }
    }
}

/// Why a `tools/call` got no answer, in words; a timeout names the setting a slow tool needs.
fn no_answer(name: &str, exchange: &crate::mcp::exchange::Exchange) -> String {
    let hint = if matches!(exchange.failure, Some(crate::mcp::exchange::Failure::Timeout)) {
        format!(
            " ({} s: raise `--timeout-seconds`, input `timeout-seconds`, for a tool that takes longer)",
            (exchange.elapsed_ms + 500) / 1000
        )
    } else {
        String::new()
    };
    format!("`tools/call {name}` got no answer: {}{hint}", exchange.describe())
}

impl ToolExecutor for McpTools {
    fn call<'a>(
        &'a self,
        at: CallSite<'a>,
        name: &'a str,
        arguments: &'a Value,
        mut inputs: Option<&'a mut Session<'_>>,
    ) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let mut rounds = Vec::new();
            let mut latency_ms = 0;
            let mut params = json!({"name": name, "arguments": arguments});
            loop {
                let outgoing = match self.era {
                    Era::Modern => {
                        let mut request = jsonrpc::modern_request("tools/call", params.clone());
                        if let Some(session) = inputs.as_deref() {
                            request["params"]["_meta"][jsonrpc::META_CLIENT_CAPABILITIES] = session.capabilities();
                        }
                        if let Some(trace) = at.trace {
                            trace.insert_into(&mut request["params"]);
                        }
                        Outgoing::request(request)
                    }
                    Era::Legacy => {
                        let mut params = params.clone();
                        if let Some(trace) = at.trace {
                            trace.insert_into(&mut params);
                        }
                        era::legacy("tools/call", params)
                    }
                };
                // Each round is a new request, so the client gives it a new JSON-RPC id.
                let exchange = self.client.send(outgoing).await;
                latency_ms += exchange.elapsed_ms;
                if let Some(error) = exchange.error() {
                    let code = error.get("code").map_or_else(|| "no code".into(), Value::to_string);
                    let message = error.get("message").and_then(Value::as_str).unwrap_or("");
                    let line = message.split_whitespace().collect::<Vec<_>>().join(" ");
                    return ToolOutcome::Error {
                        message: format!("JSON-RPC error {code}: {line}"),
                        latency_ms,
                        rounds,
                    };
                }
                let Some(result) = exchange.result() else {
                    return ToolOutcome::Failed { reason: no_answer(name, &exchange), latency_ms };
                };
                let asking = result.get("resultType").and_then(Value::as_str) == Some("input_required");
                let Some(session) = inputs.as_deref_mut().filter(|_| asking) else {
                    return outcome_of_result(result, latency_ms, rounds);
                };
                if rounds.len() >= session.max_rounds() {
                    return ToolOutcome::Stopped {
                        reason: format!(
                            "the server still asked for input after {} round(s) (max_input_rounds)",
                            rounds.len()
                        ),
                        latency_ms,
                        rounds,
                    };
                }
                let requests = result.get("inputRequests").and_then(Value::as_object).cloned().unwrap_or_default();
                let (responses, asked) = match session.answer(&requests) {
                    Ok(answer) => answer,
                    Err(reason) => return ToolOutcome::Stopped { reason, latency_ms, rounds },
                };
                // The same call again, with the answers and the requestState exactly as given.
                params = json!({"name": name, "arguments": arguments, "inputResponses": responses});
                let request_state = result.get("requestState").cloned();
                if let Some(state) = &request_state {
                    params["requestState"] = state.clone();
                }
                rounds.push(Round { requests: asked, responses, request_state: request_state.is_some() });
            }
        })
    }
}

/// A `tools/call` result as the model reads it: the text parts joined by newlines; without
/// text, `structuredContent` as JSON; other parts named by their type. `resultType:
/// "input_required"` (a multi round-trip request this version does not answer) becomes an
/// error result with a note.
pub(crate) fn outcome_of_result(result: &Value, latency_ms: u64, rounds: Vec<Round>) -> ToolOutcome {
    if result.get("resultType").and_then(Value::as_str) == Some("input_required") {
        return ToolOutcome::Result {
            text: "the tool asked for more input, which this evaluation cannot give".into(),
            is_error: true,
            latency_ms,
            note: Some("the server answered `resultType: input_required` (a multi round-trip request); this case scripts no input responses".into()),
            server_bytes: None,
            rounds,
        };
    }
    let is_error = result.get("isError") == Some(&Value::Bool(true));
    let mut parts = Vec::new();
    for part in result.get("content").and_then(Value::as_array).into_iter().flatten() {
        match part.get("type").and_then(Value::as_str) {
            Some("text") => parts.push(part.get("text").and_then(Value::as_str).unwrap_or("").to_owned()),
            Some("resource") => match part.pointer("/resource/text").and_then(Value::as_str) {
                Some(text) => parts.push(text.to_owned()),
                None => parts.push("[a binary resource]".into()),
            },
            Some("resource_link") => {
                parts.push(format!("[a link to {}]", part.get("uri").and_then(Value::as_str).unwrap_or("a resource")))
            }
            Some(other) => {
                let mime = part.get("mimeType").and_then(Value::as_str).unwrap_or("unknown type");
                parts.push(format!("[{other} content: {mime}]"));
            }
            None => {}
        }
    }
    let has_text = result
        .get("content")
        .and_then(Value::as_array)
        .is_some_and(|content| content.iter().any(|part| part.get("type").and_then(Value::as_str) == Some("text")));
    let mut text = match result.get("structuredContent") {
        Some(structured) if !has_text => structured.to_string(),
        _ => parts.join("\n"),
    };
    let server_bytes = (text.len() > MODEL_RESULT_BYTES).then_some(text.len());
    if let Some(sent) = server_bytes {
        let mut cut = MODEL_RESULT_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str(&format!("\n[… cut by mcp-eval: these are the first {cut} bytes; the tool sent {sent} bytes]"));
    }
    ToolOutcome::Result { text, is_error, latency_ms, note: None, server_bytes, rounds }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(result: Value) -> (String, bool) {
        match outcome_of_result(&result, 0, Vec::new()) {
            ToolOutcome::Result { text, is_error, .. } => (text, is_error),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_tool_call_that_timed_out_names_the_timeout_setting() {
        let timed_out = crate::mcp::exchange::Exchange {
            failure: Some(crate::mcp::exchange::Failure::Timeout),
            elapsed_ms: 10_004,
            ..Default::default()
        };
        let reason = no_answer("slow", &timed_out);
        assert!(reason.contains("(10 s: raise `--timeout-seconds`, input `timeout-seconds`"), "{reason}");
        let refused = crate::mcp::exchange::Exchange {
            failure: Some(crate::mcp::exchange::Failure::Connect("refused".into())),
            ..Default::default()
        };
        assert!(!no_answer("slow", &refused).contains("timeout-seconds"));
    }

    #[test]
    fn text_parts_are_joined_and_structured_content_is_used_only_without_text() {
        let both = json!({"content": [{"type": "text", "text": "21 C"}, {"type": "text", "text": "sunny"}], "structuredContent": {"t": 21}});
        assert_eq!(text_of(both), ("21 C\nsunny".into(), false));
        let structured = json!({"content": [], "structuredContent": {"t": 21}});
        assert_eq!(text_of(structured), (r#"{"t":21}"#.into(), false));
        let image = json!({"content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}], "isError": true});
        assert_eq!(text_of(image), ("[image content: image/png]".into(), true));
    }

    #[test]
    fn an_input_required_result_is_an_error_result_with_a_note() {
        let outcome = outcome_of_result(&json!({"resultType": "input_required", "inputRequests": {}}), 3, Vec::new());
        assert!(matches!(outcome, ToolOutcome::Result { is_error: true, note: Some(_), .. }), "{outcome:?}");
    }

    #[test]
    fn a_huge_result_is_cut_for_the_model() {
        let long = "é".repeat(MODEL_RESULT_BYTES);
        let (text, _) = text_of(json!({"content": [{"type": "text", "text": long}]}));
        assert!(text.len() <= MODEL_RESULT_BYTES + 100, "{}", text.len());
        assert!(text.ends_with(&format!("the tool sent {} bytes]", long.len())), "{}", &text[text.len() - 100..]);
    }
}
