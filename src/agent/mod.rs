//! The agent loop of layer 1: one trial of one golden case on one model. The case's system text
//! and user turn(s) and the tools the case lets the model see go to the model; each tool call it
//! makes becomes a real `tools/call` on the server ([`tools::ToolExecutor`]); the results go
//! back to the model; until a final answer (for every user turn), `max_turns` model turns, or
//! the case's `timeout_ms`.
//!
//! A call is not sent to the server, and the model gets an error result instead, when it names
//! a tool that was not offered, when its arguments are not JSON or do not satisfy the tool's
//! original `inputSchema` ([`ValidateArguments`]), or when the case forbids the tool
//! (`forbid_tools`: destructive tools are never called). A call refused for its arguments is
//! marked so in the record and in the [`Trace`]: scoring fails the arguments grader on it unless
//! the model corrected it with a sent call of the same tool. The trial's record keeps every call, the
//! stop reasons, token usage as reported (unknown stays unknown) and how the trial ended; scoring
//! reads it through [`TrialRecord::trace`].
//!
//! Call ids are made unique in the conversation before it goes back to the model
//! ([`crate::providers::make_call_ids_unique`]): some OpenAI-compatible servers give parallel
//! calls one id, and the real APIs refuse a history that repeats one. Each result goes back
//! under its own call's id.
//!
//! An answer with no call whose text is a call of an offered tool (a model server whose chat
//! template does not parse calls) is never a call: [`text_call`] recognises it for the trace.
//!
//! The model is behind [`ModelCaller`] (retries, the call cap, cassettes and the sampling a model
//! refuses are the caller's business, see `crate::trials`), so this loop is a pure sequence of
//! awaits, tested with scripted models and tools.

pub(crate) mod case;
pub(crate) mod inject;
pub(crate) mod input;
pub(crate) mod observe;
pub(crate) mod text_call;
pub(crate) mod tools;
pub(crate) mod wrap;

use std::time::Instant;

use serde_json::Value;

pub(crate) use case::CaseSpec;
use tools::{ToolExecutor, ToolOutcome};

use crate::events::{RunEvent, TrialRef};
use crate::mcp::transport::BoxFuture;
use crate::providers::{
    Completion, CompletionRequest, FinishReason, Message, ProviderError, ToolCall, ToolChoice, ToolResult, ToolSpec,
};
use crate::scoring::{Call, Ending, Trace};

/// Which model turn of which trial a call is (the cassette key's context).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TurnKey {
    /// The case id.
    pub case: String,
    /// 1-based trial.
    pub trial: u32,
    /// 0-based model turn within the trial.
    pub turn: u32,
}

/// What a model call gave.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ModelReply {
    /// The answer.
    pub completion: Completion,
    /// HTTP attempts it took (retries included; an answer replayed from a cassette counts 1).
    pub attempts: u32,
    /// Wall time of the call in milliseconds, retries included.
    pub latency_ms: u64,
    /// Replayed from a cassette by the tolerant match over tool results (or a judge's trace)
    /// that differed from the recording.
    pub result_changed: bool,
    /// Answered from a cassette (replay): no model was called, and `latency_ms` is the
    /// lookup's, not a model's.
    pub replayed: bool,
}

/// Why a model call gave no answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ModelFailure {
    /// The provider failed, after the retries.
    Provider {
        /// The last error.
        error: ProviderError,
        /// Attempts made.
        attempts: u32,
    },
    /// `--max-model-calls` was reached: the call was not made.
    CapReached,
    /// Replay: no cassette answers this request (the text says which and why).
    NoRecording(String),
}

/// Asks a model, whatever stands between us and it (retries, the cap, cassettes).
pub(crate) trait ModelCaller: Send + Sync {
    /// One model call.
    fn call<'a>(
        &'a self,
        key: TurnKey,
        request: &'a CompletionRequest,
    ) -> BoxFuture<'a, Result<ModelReply, ModelFailure>>;
}

/// Validates a call's arguments against the tool's original MCP `inputSchema` before it is sent.
pub(crate) trait ValidateArguments: Send + Sync {
    /// `Err` with the reasons when the arguments do not satisfy the schema.
    fn validate(&self, tool: &str, arguments: &Value) -> Result<(), ArgumentMismatch>;
}

/// Why a call's arguments do not satisfy the tool's `inputSchema`: each violation (the
/// instance path first), shown on one line joined by `; `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.join("; "))]
pub(crate) struct ArgumentMismatch(pub Vec<String>);

/// What a trial needs besides its case.
pub(crate) struct TrialContext<'a> {
    /// The model.
    pub model: &'a dyn ModelCaller,
    /// The server's tools.
    pub tools: &'a dyn ToolExecutor,
    /// The tools the model sees (already narrowed to the case's `tools:`).
    pub specs: &'a [ToolSpec],
    /// The argument check.
    pub arguments: &'a dyn ValidateArguments,
    /// Where the loop reports each model call and tool call.
    pub events: &'a (dyn Fn(&RunEvent) + Sync),
    /// The trial the events name.
    pub trial: TrialRef,
}

/// How a trial ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TrialEnding {
    /// The model answered every user turn.
    Answer,
    /// `max_turns` model turns were used up.
    MaxTurns,
    /// `timeout_ms` passed.
    Timeout,
    /// The model API failed after its retries (or no cassette answered).
    ProviderError(String),
    /// Replay: no cassette answers a request (deterministic: never tried again).
    NoRecording(String),
    /// The server gave no answer to a tool call.
    ServerError(String),
    /// The model-call cap was reached: the trial did not complete (not a pass, not a fail).
    CapReached,
    /// The server broke the trial (input requests it may not make, or past the bound): the trial
    /// fails with this reason.
    Finding(String),
}

impl TrialEnding {
    /// `answer`, `max_turns`, `timeout`, `provider_error`, `replay_miss`, `server_error`,
    /// `call_cap` or `finding`.
    pub(crate) fn as_str(&self) -> &'static str {
        match self {
            TrialEnding::Answer => "answer",
            TrialEnding::MaxTurns => "max_turns",
            TrialEnding::Timeout => "timeout",
            TrialEnding::ProviderError(_) => "provider_error",
            TrialEnding::NoRecording(_) => "replay_miss",
            TrialEnding::ServerError(_) => "server_error",
            TrialEnding::CapReached => "call_cap",
            TrialEnding::Finding(_) => "finding",
        }
    }
}

/// One tool call of a trial, as made.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CallRecord {
    /// 1-based model turn.
    pub turn: usize,
    /// MCP name (or the name the model used, for a tool not offered).
    pub name: String,
    /// The arguments as sent by the model.
    pub arguments: Value,
    /// Whether it reached the server.
    pub sent: bool,
    /// Why it was not sent, or what went wrong.
    pub error: Option<String>,
    /// Set when it was not sent because its arguments were not JSON or broke the tool's
    /// original `inputSchema`: the refusal, as in `error` (scoring fails the arguments grader
    /// on it, see [`crate::scoring::Call::refused`]).
    pub refused_arguments: Option<String>,
    /// The text the model got back (whole; the report bounds it).
    pub result: String,
    /// It was an error result.
    pub is_error: bool,
    /// Bytes of the text the server's result made, when it was cut for the model (`result` is
    /// the cut copy).
    pub server_bytes: Option<usize>,
    /// Wall time of the `tools/call` in milliseconds.
    pub latency_ms: u64,
    /// The multi round-trip rounds the call took (input requests answered from the script).
    pub rounds: Vec<input::Round>,
    /// Set when layer 2's fault layer answered the call instead of the server (never sent):
    /// what it injected (`http-500@search#1`).
    pub injected: Option<String>,
}

/// Everything one trial did.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TrialRecord {
    /// 1-based trial number.
    pub trial: usize,
    /// Tool calls in order.
    pub calls: Vec<CallRecord>,
    /// How it ended.
    pub ending: TrialEnding,
    /// Model turns taken.
    pub turns: usize,
    /// Model calls made (attempts, retries included).
    pub model_calls: u64,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// The model's last text.
    pub answer: Option<String>,
    /// Each turn's text (1-based turn), for turns that had text.
    pub texts: Vec<(usize, String)>,
    /// Each turn's stop reason.
    pub stop_reasons: Vec<String>,
    /// Tokens read, summed (`None` when a turn's count was unknown).
    pub input_tokens: Option<u64>,
    /// Tokens written, summed (`None` when a turn's count was unknown).
    pub output_tokens: Option<u64>,
    /// Latency of each model call, in milliseconds.
    pub model_latencies_ms: Vec<u64>,
    /// The rubric judge's result, when the case has a rubric and a judge model is given.
    pub judge: Option<crate::scoring::JudgeResult>,
    /// The judge's verdict on each criterion (`id: verdict — reason`), for the trace.
    pub judge_lines: Vec<String>,
    /// The judge's part of the trace: judge, prompt version, rubric hash, voted criteria.
    pub judge_trace: Option<crate::report::evals::JudgeTrace>,
    /// Why the judge gave no verdict, when it failed.
    pub judge_cause: Option<crate::report::evals::ErrorCause>,
    /// What the models said of the trial's `embedding` and `judge` argument checks (resolved
    /// after the trial, before scoring).
    pub semantic: crate::scoring::semantic::SemanticVerdicts,
    /// The model versions and fingerprints the provider reported for the trial's turns.
    pub reported_models: std::collections::BTreeSet<crate::report::evals::ReportedModel>,
    /// Model calls (the judge's included) a cassette answered by the tolerant match over tool
    /// results that differed from the recording.
    pub result_changed: usize,
    /// The trial ended on a provider error that repeated itself ([`ProviderError::Repeated`]):
    /// running the trial again would meet it again, so it is not.
    pub deterministic_error: bool,
    /// The offered tools the model wrote a call of as text in an answer with no call
    /// ([`text_call::written_call`]): never counted as calls; the trial's reason says so.
    pub written_calls: Vec<String>,
}

impl TrialRecord {
    /// Trial number `run` (1-based) before its first model call: no calls, no turns, token
    /// counts 0 (they become `None` once a reply reports none), ending `Answer` until another.
    pub(crate) fn new(run: usize) -> Self {
        TrialRecord {
            trial: run,
            calls: Vec::new(),
            ending: TrialEnding::Answer,
            turns: 0,
            model_calls: 0,
            duration_ms: 0,
            answer: None,
            texts: Vec::new(),
            stop_reasons: Vec::new(),
            input_tokens: Some(0),
            output_tokens: Some(0),
            model_latencies_ms: Vec::new(),
            judge: None,
            judge_lines: Vec::new(),
            judge_trace: None,
            judge_cause: None,
            semantic: crate::scoring::semantic::SemanticVerdicts::new(),
            reported_models: std::collections::BTreeSet::new(),
            result_changed: 0,
            deterministic_error: false,
            written_calls: Vec::new(),
        }
    }

    /// The trial as scoring reads it: calls (0-based turns) and the ending.
    pub(crate) fn trace(&self) -> Trace {
        let ending = match &self.ending {
            TrialEnding::Answer => Ending::Answer,
            TrialEnding::MaxTurns => Ending::MaxTurns,
            TrialEnding::Timeout => Ending::Timeout,
            TrialEnding::ProviderError(reason)
            | TrialEnding::NoRecording(reason)
            | TrialEnding::ServerError(reason) => Ending::Error(reason.clone()),
            TrialEnding::CapReached => Ending::Error("the model-call cap was reached".into()),
            TrialEnding::Finding(reason) => Ending::Broken(reason.clone()),
        };
        let calls = self
            .calls
            .iter()
            .map(|call| {
                let made = Call::new(call.name.clone(), call.arguments.clone(), call.turn - 1);
                match &call.refused_arguments {
                    Some(reason) => made.refused_with(reason.clone()),
                    None => made,
                }
            })
            .collect();
        Trace { calls, ending, semantic: self.semantic.clone() }
    }
}

/// The name of a stop reason in traces.
fn finish_name(finish: &FinishReason) -> String {
    match finish {
        FinishReason::Stop => "stop".into(),
        FinishReason::ToolCalls => "tool_calls".into(),
        FinishReason::Length => "length".into(),
        FinishReason::ContentFilter => "content_filter".into(),
        FinishReason::Other(other) => other.clone(),
        FinishReason::Unknown => "unknown".into(),
    }
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Runs `case` once: trial number `run`, 1-based.
pub(crate) async fn run_trial(case: &CaseSpec, run: usize, context: &TrialContext<'_>) -> TrialRecord {
    let started = Instant::now();
    let deadline = tokio::time::Instant::now() + case.timeout;
    let mut record = TrialRecord::new(run);
    let mut messages: Vec<Message> = Vec::new();
    // Every call id of the conversation so far: the history echoed to the model repeats none.
    let mut call_ids = std::collections::HashSet::new();
    let mut inputs = case.inputs.as_ref().map(input::Session::new);
    record.ending = 'trial: {
        for user_turn in &case.run.prompt {
            messages.push(Message::User(user_turn.clone()));
            loop {
                if record.turns >= case.run.max_turns {
                    break 'trial TrialEnding::MaxTurns;
                }
                let request = CompletionRequest {
                    system: case.run.system.clone(),
                    messages: messages.clone(),
                    tools: context.specs.to_vec(),
                    sampling: case.run.sampling,
                    tool_choice: if record.turns == 0 { case.run.tool_choice.clone() } else { ToolChoice::Auto },
                };
                let completion = match ask_model(case, run, &request, deadline, &mut record, context).await {
                    Ok(completion) => completion,
                    Err(ending) => break 'trial ending,
                };
                if completion.tool_calls.is_empty() {
                    let written =
                        completion.text.as_deref().and_then(|text| text_call::written_call(text, context.specs));
                    record.written_calls.extend(written);
                    messages.push(Message::Assistant { text: completion.text.clone(), tool_calls: Vec::new() });
                    break;
                }
                let mut calls = completion.tool_calls.clone();
                crate::providers::make_call_ids_unique(&mut calls, &mut call_ids);
                messages.push(Message::Assistant { text: completion.text.clone(), tool_calls: calls.clone() });
                let cut = completion.finish == FinishReason::Length;
                for call in &calls {
                    let turn = record.turns;
                    let (made, ending) = make_call(case, call, (turn, cut), deadline, inputs.as_mut(), context).await;
                    if ending.is_none() {
                        messages.push(Message::ToolResult(ToolResult {
                            call_id: call.id.clone(),
                            content: made.result.clone(),
                            is_error: made.is_error,
                        }));
                    }
                    record.calls.push(made);
                    if let Some(ending) = ending {
                        break 'trial ending;
                    }
                }
            }
        }
        TrialEnding::Answer
    };
    record.duration_ms = elapsed_ms(started);
    record
}

/// One model turn within the trial's deadline: the completion, its cost, usage and text added
/// to `record`; `Err` is the ending of a trial the call could not go on from (the deadline, the
/// cap, a replay miss, a provider failure).
async fn ask_model(
    case: &CaseSpec,
    run: usize,
    request: &CompletionRequest,
    deadline: tokio::time::Instant,
    record: &mut TrialRecord,
    context: &TrialContext<'_>,
) -> Result<Completion, TrialEnding> {
    let key = TurnKey {
        case: case.id.clone(),
        trial: u32::try_from(run).unwrap_or(u32::MAX),
        turn: u32::try_from(record.turns).unwrap_or(u32::MAX),
    };
    // The model caller's decorator reports the calls it saw end; a call the deadline cut is
    // the loop's to report.
    let reply = match tokio::time::timeout_at(deadline, context.model.call(key, request)).await {
        Err(_) => {
            (context.events)(&RunEvent::ModelCallFinished {
                trial: context.trial.clone(),
                role: "model",
                turn: record.turns,
                outcome: "timeout",
                attempts: 0,
                latency_ms: None,
                model: context.trial.model.clone(),
                usage: crate::report::telemetry::Usage::default(),
                tools: Vec::new(),
                replayed: false,
            });
            return Err(TrialEnding::Timeout);
        }
        Ok(Err(ModelFailure::CapReached)) => return Err(TrialEnding::CapReached),
        Ok(Err(ModelFailure::NoRecording(reason))) => return Err(TrialEnding::NoRecording(reason)),
        Ok(Err(ModelFailure::Provider { error: ProviderError::UnreadableCall { generation, .. }, attempts })) => {
            // The model answered; its API could not read the call it wrote. Graded as the
            // model's answer with no call (its stop reason says why), never a provider error.
            record.model_calls += u64::from(attempts);
            record.turns += 1;
            record.stop_reasons.push("tool_use_failed".to_owned());
            record.input_tokens = None;
            record.output_tokens = None;
            let text = Some(generation).filter(|text| !text.is_empty());
            if let Some(text) = &text {
                record.answer = Some(text.clone());
                record.texts.push((record.turns, text.clone()));
            }
            return Ok(Completion {
                text,
                tool_calls: Vec::new(),
                finish: FinishReason::Other("tool_use_failed".to_owned()),
                usage: None,
                reported_model: None,
                system_fingerprint: None,
            });
        }
        Ok(Err(ModelFailure::Provider { error, attempts })) => {
            record.model_calls += u64::from(attempts);
            record.deterministic_error = matches!(error, ProviderError::Repeated { .. });
            return Err(TrialEnding::ProviderError(format!("after {attempts} attempt(s): {error}")));
        }
        Ok(Ok(reply)) => reply,
    };
    record.turns += 1;
    record.model_calls += u64::from(reply.attempts);
    record.result_changed += usize::from(reply.result_changed);
    record.model_latencies_ms.push(reply.latency_ms);
    let completion = reply.completion;
    record.stop_reasons.push(finish_name(&completion.finish));
    record.reported_models.extend(crate::report::evals::ReportedModel::of(
        completion.reported_model.as_deref(),
        completion.system_fingerprint.as_deref(),
    ));
    let usage = completion.usage.unwrap_or_default();
    record.input_tokens = record.input_tokens.zip(usage.input_tokens).map(|(a, b)| a + b);
    record.output_tokens = record.output_tokens.zip(usage.output_tokens).map(|(a, b)| a + b);
    if completion.usage.is_none() {
        record.input_tokens = None;
        record.output_tokens = None;
    }
    if let Some(text) = completion.text.as_ref().filter(|text| !text.is_empty()) {
        record.answer = Some(text.clone());
        record.texts.push((record.turns, text.clone()));
    }
    Ok(completion)
}

/// Why the loop does not send `call`, when it does not: the reason the model reads, and
/// whether it is the arguments' fault. `cut`: the model's turn ended at the output limit
/// (`finish_reason: length`), which is why arguments that are not JSON usually are not.
fn refusal(case: &CaseSpec, call: &ToolCall, cut: bool, context: &TrialContext<'_>) -> Option<(String, bool)> {
    if call.unknown_tool || !context.specs.iter().any(|spec| spec.name == call.name) {
        Some((format!("no tool named `{}` is offered", call.name), false))
    } else if call.arguments_unparsable && cut {
        Some((
            "the arguments were cut by the output limit (finish reason `length`): not a JSON object".to_owned(),
            true,
        ))
    } else if call.arguments_unparsable {
        Some(("the arguments are not a JSON object".to_owned(), true))
    } else if case.forbids(&call.name) {
        Some((format!("`{}` is forbidden in this case (forbid_tools): not called", call.name), false))
    } else if let Err(reason) = context.arguments.validate(&call.name, &call.arguments) {
        Some((format!("the arguments do not satisfy the tool's inputSchema: {reason}"), true))
    } else {
        None
    }
}

/// One tool call the model asked for at model turn `turn` (`cut`: a turn the output limit
/// ended): refused, or sent within the trial's deadline. The record of the call, and the trial's
/// ending when the call ends it (the deadline, input requests that could not be answered, no
/// answer from the server).
async fn make_call(
    case: &CaseSpec,
    call: &ToolCall,
    (turn, cut): (usize, bool),
    deadline: tokio::time::Instant,
    inputs: Option<&mut input::Session<'_>>,
    context: &TrialContext<'_>,
) -> (CallRecord, Option<TrialEnding>) {
    let mut made = CallRecord {
        turn,
        name: call.name.clone(),
        arguments: call.arguments.clone(),
        sent: false,
        error: None,
        refused_arguments: None,
        result: String::new(),
        is_error: true,
        server_bytes: None,
        latency_ms: 0,
        rounds: Vec::new(),
        injected: None,
    };
    // What the loop decides it reports itself (a call not sent, a call the deadline cut); the
    // tool executor's decorator reports the calls it made.
    let decided = |made: &CallRecord, outcome: &'static str| {
        (context.events)(&RunEvent::ToolCallFinished {
            trial: context.trial.clone(),
            turn: made.turn,
            tool: made.name.clone(),
            outcome,
            sent: made.sent,
            injected: false,
            latency_ms: made.latency_ms,
            server_bytes: None,
        });
    };
    if let Some((reason, arguments)) = refusal(case, call, cut, context) {
        made.result = format!("error: this call was not sent: {reason}");
        made.refused_arguments = arguments.then(|| reason.clone());
        made.error = Some(reason);
        decided(&made, "not_sent");
        return (made, None);
    }
    let at = tools::CallSite { trial: &context.trial, turn, trace: None };
    let sent_at = Instant::now();
    let sent = context.tools.call(at, &call.name, &call.arguments, inputs);
    let Ok(outcome) = tokio::time::timeout_at(deadline, sent).await else {
        let made = CallRecord {
            sent: true,
            error: Some("the trial's time ran out during this call".into()),
            latency_ms: elapsed_ms(sent_at),
            ..made
        };
        decided(&made, "timeout");
        return (made, Some(TrialEnding::Timeout));
    };
    made.sent = true;
    match outcome {
        ToolOutcome::Result { text, is_error, latency_ms, note, server_bytes, rounds } => {
            made.result = text;
            made.server_bytes = server_bytes;
            made.is_error = is_error;
            made.latency_ms = latency_ms;
            made.error = note;
            made.rounds = rounds;
            (made, None)
        }
        ToolOutcome::Error { message, latency_ms, rounds } => {
            made.result = format!("error: {message}");
            made.error = Some(message);
            made.latency_ms = latency_ms;
            made.rounds = rounds;
            (made, None)
        }
        ToolOutcome::Stopped { reason, latency_ms, rounds } => {
            made.error = Some(reason.clone());
            made.latency_ms = latency_ms;
            made.rounds = rounds;
            (made, Some(TrialEnding::Finding(reason)))
        }
        ToolOutcome::Failed { reason, latency_ms } => {
            made.error = Some(reason.clone());
            made.latency_ms = latency_ms;
            (made, Some(TrialEnding::ServerError(reason)))
        }
        ToolOutcome::Injected { text, is_error, label } => {
            // Answered by the fault layer: never sent, never the trial's end.
            made.sent = false;
            made.result = text;
            made.is_error = is_error;
            made.error = Some(format!("injected by layer 2: {label}"));
            made.injected = Some(label);
            (made, None)
        }
    }
}

/// A scripted model for tests: answers each turn from a function of the key and the request.
#[cfg(test)]
pub(crate) struct ScriptedModel<F>(pub F);

#[cfg(test)]
impl<F> ModelCaller for ScriptedModel<F>
where
    F: Fn(&TurnKey, &CompletionRequest) -> Result<Completion, ModelFailure> + Send + Sync,
{
    fn call<'a>(
        &'a self,
        key: TurnKey,
        request: &'a CompletionRequest,
    ) -> BoxFuture<'a, Result<ModelReply, ModelFailure>> {
        let answer = (self.0)(&key, request);
        Box::pin(async move {
            answer.map(|completion| ModelReply {
                completion,
                attempts: 1,
                latency_ms: 1,
                result_changed: false,
                replayed: false,
            })
        })
    }
}

/// A completion with only text (tests).
#[cfg(test)]
pub(crate) fn text_answer(text: &str) -> Completion {
    Completion {
        text: Some(text.into()),
        tool_calls: Vec::new(),
        finish: FinishReason::Stop,
        usage: None,
        reported_model: None,
        system_fingerprint: None,
    }
}

/// A completion with tool calls (tests).
#[cfg(test)]
pub(crate) fn calls_answer(calls: Vec<crate::providers::ToolCall>) -> Completion {
    Completion {
        text: None,
        tool_calls: calls,
        finish: FinishReason::ToolCalls,
        usage: Some(crate::report::telemetry::Usage {
            input_tokens: Some(10),
            output_tokens: Some(2),
            ..Default::default()
        }),
        reported_model: None,
        system_fingerprint: None,
    }
}

#[cfg(test)]
mod tests;

impl TrialRecord {
    /// The trial as the judge reads it: each tool call (name, arguments, result, `isError`) and
    /// the final answer, whole.
    pub(crate) fn judge_text(&self) -> String {
        crate::scoring::judge::trace_text(
            self.calls.iter().map(|call| (call.name.as_str(), &call.arguments, call.is_error, call.result.as_str())),
            self.answer.as_deref(),
        )
    }
}
