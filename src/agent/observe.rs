//! Telemetry decorators of the agent loop's two seams: [`ObservedTools`] wraps a
//! [`ToolExecutor`] and [`ObservedModel`] a [`ModelCaller`]; each reports every call it sees as
//! an event named by the trial and the turn, with the outcome, the latency and (tool calls) the
//! bytes of the server's result, or (model calls) the attempts and the usage as reported.
//!
//! They wrap the real parts (or the wrappers placed under them, [`super::wrap::Place`], which
//! only watch: layer 3's spans), so the times they report are the server's and the provider's.
//! A layer that changes what the loop sees (layer 2's faults) wraps *them*, and
//! reports the outcomes it injects as events of its own (`injected: true`); a telemetry layer
//! (layer 3) consumes these events. The loop itself reports only what it decides: a call
//! refused before it is sent (`not_sent`) and a call the trial's deadline cut (`timeout`).
//! No event carries a tool result or model text.

use serde_json::Value;

use super::input::Session;
use super::tools::{CallSite, ToolExecutor, ToolOutcome};
use super::{ModelCaller, ModelFailure, ModelReply, TurnKey};
use crate::events::{RunEvent, TrialRef};
use crate::mcp::transport::BoxFuture;
use crate::providers::CompletionRequest;

/// Where the decorators send their events.
pub(crate) type Sink<'a> = &'a (dyn Fn(&RunEvent) + Sync);

/// A tool executor whose calls are reported: `tool_call_started` before, `tool_call_finished`
/// after (sent, not injected).
pub(crate) struct ObservedTools<'a> {
    /// The executor wrapped (the real MCP tools).
    pub inner: &'a dyn ToolExecutor,
    /// Where the events go.
    pub events: Sink<'a>,
}

impl ToolExecutor for ObservedTools<'_> {
    fn call<'a>(
        &'a self,
        at: CallSite<'a>,
        name: &'a str,
        arguments: &'a Value,
        inputs: Option<&'a mut Session<'_>>,
    ) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            (self.events)(&RunEvent::ToolCallStarted { trial: at.trial.clone(), turn: at.turn, tool: name.to_owned() });
            let outcome = self.inner.call(at, name, arguments, inputs).await;
            let (kind, latency_ms, server_bytes) = outcome_kind(&outcome);
            (self.events)(&RunEvent::ToolCallFinished {
                trial: at.trial.clone(),
                turn: at.turn,
                tool: name.to_owned(),
                outcome: kind,
                sent: true,
                injected: false,
                latency_ms,
                server_bytes,
            });
            outcome
        })
    }
}

/// A tool call's outcome as the events and the spans name it, its latency, and (a result) the
/// bytes of the server's result.
pub(crate) fn outcome_kind(outcome: &ToolOutcome) -> (&'static str, u64, Option<usize>) {
    match outcome {
        ToolOutcome::Result { text, is_error, latency_ms, server_bytes, .. } => {
            (if *is_error { "error_result" } else { "result" }, *latency_ms, Some(server_bytes.unwrap_or(text.len())))
        }
        ToolOutcome::Error { latency_ms, .. } => ("jsonrpc_error", *latency_ms, None),
        ToolOutcome::Stopped { latency_ms, .. } => ("stopped", *latency_ms, None),
        ToolOutcome::Failed { latency_ms, .. } => ("failed", *latency_ms, None),
        ToolOutcome::Injected { .. } => ("injected", 0, None),
    }
}

/// A model caller whose calls are reported: `model_call_finished` when one is answered or
/// fails (a call the trial's deadline cuts is the loop's to report).
pub(crate) struct ObservedModel<'a> {
    /// The caller wrapped.
    pub inner: &'a dyn ModelCaller,
    /// The trial the calls belong to.
    pub trial: &'a TrialRef,
    /// Who is asked: `model` (the model under test) or `judge` (the rubric judge).
    pub role: &'static str,
    /// `PROVIDER:MODEL` of the model asked (the trial's, or the judge's).
    pub model: &'a str,
    /// Where the events go.
    pub events: Sink<'a>,
}

impl ModelCaller for ObservedModel<'_> {
    fn call<'a>(
        &'a self,
        key: TurnKey,
        request: &'a CompletionRequest,
    ) -> BoxFuture<'a, Result<ModelReply, ModelFailure>> {
        Box::pin(async move {
            let turn = usize::try_from(key.turn).unwrap_or(usize::MAX);
            let answered = self.inner.call(key, request).await;
            let (outcome, attempts, reply) = answer_kind(&answered);
            let usage = reply.and_then(|reply| reply.completion.usage).unwrap_or_default();
            (self.events)(&RunEvent::ModelCallFinished {
                trial: self.trial.clone(),
                role: self.role,
                turn,
                outcome,
                attempts,
                latency_ms: reply.map(|reply| reply.latency_ms),
                model: self.model.to_owned(),
                usage,
                tools: reply
                    .map(|reply| reply.completion.tool_calls.iter().map(|call| call.name.clone()).collect())
                    .unwrap_or_default(),
                replayed: reply.is_some_and(|reply| reply.replayed),
            });
            answered
        })
    }
}

/// A model call's outcome as the events and the spans name it, its attempts, and the reply.
pub(crate) fn answer_kind(answered: &Result<ModelReply, ModelFailure>) -> (&'static str, u32, Option<&ModelReply>) {
    match answered {
        Ok(reply) => ("answer", reply.attempts, Some(reply)),
        Err(ModelFailure::Provider { attempts, .. }) => ("provider_error", *attempts, None),
        Err(ModelFailure::NoRecording(_)) => ("replay_miss", 0, None),
        Err(ModelFailure::CapReached) => ("call_cap", 0, None),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::{Value, json};

    use super::*;

    /// Answers every call with `text`, or fails `down` with no answer.
    struct Fixed(&'static str);

    impl ToolExecutor for Fixed {
        fn call<'a>(
            &'a self,
            _at: CallSite<'a>,
            name: &'a str,
            _arguments: &'a Value,
            _inputs: Option<&'a mut Session<'_>>,
        ) -> BoxFuture<'a, ToolOutcome> {
            Box::pin(async move {
                if name == "down" {
                    return ToolOutcome::Failed { reason: "closed".into(), latency_ms: 7 };
                }
                ToolOutcome::Result {
                    text: self.0.into(),
                    is_error: false,
                    latency_ms: 3,
                    note: None,
                    server_bytes: None,
                    rounds: Vec::new(),
                }
            })
        }
    }

    /// The event as its kind and fields (the events file's line without the stamp).
    fn line(event: &RunEvent) -> Value {
        let (kind, mut fields) = event.fields();
        fields["kind"] = json!(kind);
        fields
    }

    fn trial() -> TrialRef {
        TrialRef { case: "c".into(), model: "p:m".into(), trial: 2 }
    }

    #[tokio::test]
    async fn observed_tools_report_each_call_they_send_with_its_turn_latency_and_bytes_but_not_its_result() {
        let seen = Mutex::new(Vec::new());
        let events = |event: &RunEvent| seen.lock().unwrap().push(line(event));
        let tools = ObservedTools { inner: &Fixed("secret result"), events: &events };
        let trial = trial();
        let at = CallSite { trial: &trial, turn: 1, trace: None };
        let outcome = tools.call(at, "echo", &json!({}), None).await;
        assert!(matches!(outcome, ToolOutcome::Result { .. }), "the outcome passes through unchanged");
        tools.call(CallSite { trial: &trial, turn: 2, trace: None }, "down", &json!({}), None).await;
        let seen = seen.into_inner().unwrap();
        let kinds: Vec<&str> = seen.iter().map(|event| event["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["tool_call_started", "tool_call_finished", "tool_call_started", "tool_call_finished"]);
        assert_eq!(
            (&seen[1]["outcome"], &seen[1]["turn"], &seen[1]["latency_ms"], &seen[1]["server_bytes"]),
            (&json!("result"), &json!(1), &json!(3), &json!(13))
        );
        assert_eq!((&seen[1]["sent"], &seen[1]["injected"]), (&json!(true), &json!(false)));
        assert_eq!((&seen[3]["outcome"], &seen[3]["server_bytes"]), (&json!("failed"), &Value::Null));
        assert!(!seen.iter().any(|event| event.to_string().contains("secret result")), "{seen:?}");
    }

    #[tokio::test]
    async fn an_observed_model_reports_attempts_latency_and_usage_as_reported() {
        let seen = Mutex::new(Vec::new());
        let events = |event: &RunEvent| seen.lock().unwrap().push(line(event));
        let scripted = crate::agent::ScriptedModel(|key: &TurnKey, _: &CompletionRequest| match key.turn {
            0 => Ok(crate::agent::text_answer("the model's words")),
            _ => Err(ModelFailure::CapReached),
        });
        let trial = trial();
        let model = ObservedModel { inner: &scripted, trial: &trial, role: "judge", model: "p:judge", events: &events };
        let request = CompletionRequest {
            system: None,
            messages: Vec::new(),
            tools: Vec::new(),
            sampling: crate::providers::Sampling::default(),
            tool_choice: crate::providers::ToolChoice::Auto,
        };
        for turn in 0..2 {
            let _ = model.call(TurnKey { case: "c".into(), trial: 2, turn }, &request).await;
        }
        let seen = seen.into_inner().unwrap();
        assert_eq!(
            (&seen[0]["outcome"], &seen[0]["turn"], &seen[0]["attempts"]),
            (&json!("answer"), &json!(0), &json!(1))
        );
        assert_eq!(
            (&seen[0]["input_tokens"], &seen[0]["trial"]["trial"]),
            (&Value::Null, &json!(2)),
            "unknown usage is null"
        );
        assert_eq!((&seen[1]["outcome"], &seen[1]["latency_ms"]), (&json!("call_cap"), &Value::Null));
        assert!(seen.iter().all(|event| event["role"] == "judge"), "{seen:?}");
        assert!(!seen.iter().any(|event| event.to_string().contains("the model's words")), "{seen:?}");
    }
}
