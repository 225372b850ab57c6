//! Layer 3's trial wrapper ([`Traced`], a [`TrialWrap`] under the runner's events): each trial is
//! a trace ([`super::trace::TrialTrace`]), each model call (the model's and the judge's) and each
//! `tools/call` sent a span beneath it; a tool call's request carries the span in `_meta` as its
//! `traceparent`. It wraps the real parts, so a span times the server or the provider.

use serde_json::Value;

use super::trace::{Attributes, Spans, TrialTrace, Value as Attr};
use crate::agent::input::Session;
use crate::agent::observe::{answer_kind, outcome_kind};
use crate::agent::tools::{CallSite, ToolExecutor, ToolOutcome};
use crate::agent::wrap::{Place, TrialSite, TrialWrap, WrappedTrial};
use crate::agent::{ModelCaller, ModelFailure, ModelReply, TurnKey};
use crate::mcp::transport::BoxFuture;
use crate::providers::CompletionRequest;

/// The spans of one layer's trials: `layer` (1 or 2) is the trace's `mcp_eval.layer`.
pub(crate) struct Traced<'a> {
    /// The run's spans.
    pub spans: &'a Spans,
    /// The layer whose trials these are.
    pub layer: u8,
}

impl TrialWrap for Traced<'_> {
    fn place(&self) -> Place {
        Place::UnderEvents
    }

    fn open<'a>(&'a self, site: TrialSite<'a>) -> Box<dyn WrappedTrial + 'a> {
        Box::new(TracedTrial(self.spans.trial(site.trial, self.layer)))
    }
}

/// One trial's trace.
struct TracedTrial<'a>(TrialTrace<'a>);

impl WrappedTrial for TracedTrial<'_> {
    fn trace_id(&self) -> Option<String> {
        Some(self.0.trace_id())
    }

    fn tools<'s>(&'s self, inner: Box<dyn ToolExecutor + 's>) -> Box<dyn ToolExecutor + 's> {
        Box::new(TracedTools { inner, trace: &self.0 })
    }

    fn model<'s>(
        &'s self,
        inner: Box<dyn ModelCaller + 's>,
        role: &'static str,
        model: &'s str,
    ) -> Box<dyn ModelCaller + 's> {
        Box::new(TracedModel { inner, trace: &self.0, role, model })
    }

    fn end(&self, ending: &str) {
        self.0.end(ending);
    }
}

/// A tool executor whose calls are spans of the trial's trace, each request's `traceparent`
/// its span.
struct TracedTools<'a> {
    inner: Box<dyn ToolExecutor + 'a>,
    trace: &'a TrialTrace<'a>,
}

impl ToolExecutor for TracedTools<'_> {
    fn call<'a>(
        &'a self,
        at: CallSite<'a>,
        name: &'a str,
        arguments: &'a Value,
        inputs: Option<&'a mut Session<'_>>,
    ) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let open = self.trace.open();
            let meta = self.trace.meta(&open);
            let at = CallSite { trace: Some(&meta), ..at };
            let outcome = self.inner.call(at, name, arguments, inputs).await;
            let (kind, _, server_bytes) = outcome_kind(&outcome);
            let error = match kind {
                "result" => None,
                "error_result" => Some("tool_error"),
                other => Some(other),
            };
            let mut attributes: Attributes = vec![
                ("mcp.method.name", Attr::from("tools/call")),
                ("gen_ai.operation.name", Attr::from("execute_tool")),
                ("gen_ai.tool.name", Attr::from(name)),
                ("mcp_eval.turn", Attr::from(at.turn)),
                ("mcp_eval.outcome", Attr::from(kind)),
            ];
            attributes.extend(server_bytes.map(|bytes| ("mcp_eval.result_bytes", Attr::from(bytes))));
            attributes.extend(error.map(|error| ("error.type", Attr::from(error))));
            self.trace.close(open, format!("tools/call {name}"), attributes, error.map(str::to_owned));
            outcome
        })
    }
}

/// A model caller whose calls are spans of the trial's trace.
struct TracedModel<'a> {
    inner: Box<dyn ModelCaller + 'a>,
    trace: &'a TrialTrace<'a>,
    /// `model` or `judge`.
    role: &'static str,
    /// `PROVIDER:MODEL`.
    model: &'a str,
}

impl ModelCaller for TracedModel<'_> {
    fn call<'a>(
        &'a self,
        key: TurnKey,
        request: &'a CompletionRequest,
    ) -> BoxFuture<'a, Result<ModelReply, ModelFailure>> {
        Box::pin(async move {
            let turn = usize::try_from(key.turn).unwrap_or(usize::MAX);
            let open = self.trace.open();
            let answered = self.inner.call(key, request).await;
            let (outcome, attempts, reply) = answer_kind(&answered);
            let usage = reply.and_then(|reply| reply.completion.usage).unwrap_or_default();
            let (provider, model) = self.model.split_once(':').unwrap_or(("", self.model));
            let mut attributes: Attributes = vec![
                ("gen_ai.operation.name", Attr::from("chat")),
                ("gen_ai.provider.name", Attr::from(provider)),
                ("gen_ai.request.model", Attr::from(model)),
                ("mcp_eval.role", Attr::from(self.role)),
                ("mcp_eval.turn", Attr::from(turn)),
                ("mcp_eval.attempts", Attr::from(attempts)),
                ("mcp_eval.outcome", Attr::from(outcome)),
            ];
            attributes.extend(usage.input_tokens.map(|tokens| ("gen_ai.usage.input_tokens", Attr::from(tokens))));
            attributes.extend(usage.output_tokens.map(|tokens| ("gen_ai.usage.output_tokens", Attr::from(tokens))));
            let error = (outcome != "answer").then_some(outcome);
            attributes.extend(error.map(|error| ("error.type", Attr::from(error))));
            self.trace.close(open, format!("chat {model}"), attributes, error.map(str::to_owned));
            answered
        })
    }
}
