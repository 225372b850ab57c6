//! Tests of the agent loop against scripted models and tools.

use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value, json};

use super::*;
use crate::providers::ToolCall;

/// Tools that answer `echo` with its `text` and fail `broken`; records what was called.
#[derive(Default)]
struct FakeTools {
    called: Mutex<Vec<(String, Value)>>,
}

impl ToolExecutor for FakeTools {
    fn call<'a>(
        &'a self,
        _at: tools::CallSite<'a>,
        name: &'a str,
        arguments: &'a Value,
        _inputs: Option<&'a mut input::Session<'_>>,
    ) -> BoxFuture<'a, ToolOutcome> {
        self.called.lock().unwrap().push((name.to_owned(), arguments.clone()));
        Box::pin(async move {
            match name {
                "echo" => ToolOutcome::Result {
                    text: arguments["text"].as_str().unwrap_or("").to_owned(),
                    is_error: false,
                    latency_ms: 2,
                    note: None,
                    server_bytes: None,
                    rounds: Vec::new(),
                },
                "slow" => {
                    tokio::time::sleep(Duration::from_secs(5)).await;
                    ToolOutcome::Result {
                        text: String::new(),
                        is_error: false,
                        latency_ms: 5000,
                        note: None,
                        server_bytes: None,
                        rounds: Vec::new(),
                    }
                }
                _ => ToolOutcome::Failed { reason: "connection closed".into(), latency_ms: 1 },
            }
        })
    }
}

struct NoEmptyText;

impl ValidateArguments for NoEmptyText {
    fn validate(&self, tool: &str, arguments: &Value) -> Result<(), ArgumentMismatch> {
        if tool != "echo" || arguments.get("text").is_some_and(Value::is_string) {
            Ok(())
        } else {
            Err(ArgumentMismatch(vec!["/text: required".into()]))
        }
    }
}

fn specs() -> Vec<ToolSpec> {
    ["echo", "delete", "slow", "broken"]
        .iter()
        .map(|name| ToolSpec { name: (*name).into(), description: None, input_schema: json!({"type": "object"}) })
        .collect()
}

fn case(prompt: &[&str]) -> CaseSpec {
    CaseSpec {
        id: "c".into(),
        run: crate::golden::CaseRun {
            prompt: prompt.iter().map(|turn| (*turn).to_owned()).collect(),
            system: Some("be brief".into()),
            max_turns: 4,
            timeout_ms: 2000,
            visible: None,
            forbidden: vec!["delete".into()],
            tool_choice: ToolChoice::Required,
            sampling: crate::providers::Sampling::default(),
            sequential: false,
            graded_without_judge: true,
        },
        timeout: Duration::from_secs(2),
        inputs: None,
        deferred: None,
    }
}

async fn run_with<F>(case: &CaseSpec, tools: &FakeTools, script: F) -> TrialRecord
where
    F: Fn(&TurnKey, &CompletionRequest) -> Result<Completion, ModelFailure> + Send + Sync,
{
    let model = ScriptedModel(script);
    let specs = specs();
    let context = TrialContext {
        model: &model,
        tools,
        specs: &specs,
        arguments: &NoEmptyText,
        events: &|_| {},
        trial: crate::events::TrialRef { case: case.id.clone(), model: "scripted".into(), trial: 1 },
    };
    run_trial(case, 1, &context).await
}

#[tokio::test]
async fn a_tool_call_is_made_for_real_and_its_result_goes_back_to_the_model() {
    let tools = FakeTools::default();
    let seen = Mutex::new(Vec::new());
    let record = run_with(&case(&["say hi"]), &tools, |key, request| {
        seen.lock().unwrap().push((key.turn, request.tool_choice.clone(), request.messages.clone()));
        Ok(match key.turn {
            0 => calls_answer(vec![ToolCall::new("a1", "echo", json!({"text": "hi"}))]),
            _ => text_answer("It said hi."),
        })
    })
    .await;
    assert_eq!(record.ending, TrialEnding::Answer);
    assert_eq!((record.turns, record.model_calls), (2, 2));
    assert_eq!(tools.called.lock().unwrap().clone(), vec![("echo".to_owned(), json!({"text": "hi"}))]);
    assert_eq!(record.calls.len(), 1);
    assert_eq!((record.calls[0].sent, record.calls[0].result.as_str(), record.calls[0].turn), (true, "hi", 1));
    assert_eq!(record.answer.as_deref(), Some("It said hi."));
    assert_eq!(record.stop_reasons, vec!["tool_calls".to_owned(), "stop".to_owned()]);
    // Usage unknown on the second turn: the sums are unknown, never a partial count.
    assert_eq!((record.input_tokens, record.output_tokens), (None, None));
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0].1, ToolChoice::Required, "the case's tool choice on the first turn");
    assert_eq!(seen[1].1, ToolChoice::Auto, "auto afterwards, so the model can answer");
    assert_eq!(
        seen[1].2.last(),
        Some(&Message::ToolResult(ToolResult { call_id: "a1".into(), content: "hi".into(), is_error: false }))
    );
    let trace = record.trace();
    assert_eq!((trace.calls[0].name.as_str(), trace.calls[0].turn, trace.ending), ("echo", 0, Ending::Answer));
}

#[tokio::test]
async fn forbidden_unknown_and_invalid_calls_are_not_sent_and_the_model_reads_why() {
    let tools = FakeTools::default();
    let mut unparsable = ToolCall::new("a4", "echo", json!("{not json"));
    unparsable.arguments_unparsable = true;
    let calls = vec![
        ToolCall::new("a1", "delete", json!({"all": true})),
        ToolCall::new("a2", "nope", json!({})),
        ToolCall::new("a3", "echo", json!({"text": 3})),
        unparsable,
    ];
    let record = run_with(&case(&["clean up"]), &tools, move |key, _| {
        Ok(if key.turn == 0 { calls_answer(calls.clone()) } else { text_answer("done") })
    })
    .await;
    assert!(tools.called.lock().unwrap().is_empty(), "nothing reached the server");
    let errors: Vec<String> = record.calls.iter().map(|call| call.error.clone().unwrap_or_default()).collect();
    assert!(record.calls.iter().all(|call| !call.sent && call.is_error));
    assert!(errors[0].contains("forbidden"), "{errors:?}");
    assert!(errors[1].contains("no tool named `nope`"), "{errors:?}");
    assert!(errors[2].contains("/text: required"), "{errors:?}");
    assert!(errors[3].contains("not a JSON object"), "{errors:?}");
    assert_eq!(record.trace().calls.len(), 4, "every call is graded");
}

#[tokio::test]
async fn each_user_turn_gets_its_own_answer() {
    let tools = FakeTools::default();
    let record = run_with(&case(&["I am in the EU.", "Echo my region."]), &tools, |key, request| {
        let users = request.messages.iter().filter(|message| matches!(message, Message::User(_))).count();
        Ok(match (key.turn, users) {
            (0, 1) => text_answer("Noted."),
            (1, 2) => calls_answer(vec![ToolCall::new("b", "echo", json!({"text": "eu"}))]),
            _ => text_answer("eu"),
        })
    })
    .await;
    assert_eq!((record.ending.clone(), record.turns, record.calls.len()), (TrialEnding::Answer, 3, 1));
    assert_eq!(record.calls[0].turn, 2);
}

#[tokio::test]
async fn a_model_that_never_stops_calling_ends_at_max_turns() {
    let tools = FakeTools::default();
    let record = run_with(&case(&["loop"]), &tools, |_, _| {
        Ok(calls_answer(vec![ToolCall::new("x", "echo", json!({"text": "again"}))]))
    })
    .await;
    assert_eq!((record.ending, record.turns, record.calls.len()), (TrialEnding::MaxTurns, 4, 4));
}

#[tokio::test]
async fn a_tool_that_outlives_the_trial_ends_it_as_a_timeout() {
    let tools = FakeTools::default();
    let mut slow_case = case(&["wait"]);
    slow_case.timeout = Duration::from_millis(100);
    let record =
        run_with(&slow_case, &tools, |_, _| Ok(calls_answer(vec![ToolCall::new("s", "slow", json!({}))]))).await;
    assert_eq!(record.ending, TrialEnding::Timeout);
    assert!(record.duration_ms < 2000, "{}", record.duration_ms);
    let cut = &record.calls[0];
    assert!(cut.sent && cut.latency_ms >= 50, "the call is timed until the deadline cut it: {cut:?}");
}

#[tokio::test]
async fn a_server_that_gives_no_answer_and_a_failing_provider_end_the_trial_in_an_error() {
    let tools = FakeTools::default();
    let record =
        run_with(&case(&["break"]), &tools, |_, _| Ok(calls_answer(vec![ToolCall::new("s", "broken", json!({}))])))
            .await;
    assert_eq!(record.ending, TrialEnding::ServerError("connection closed".into()));
    assert!(matches!(record.trace().ending, Ending::Error(_)));

    let record = run_with(&case(&["hi"]), &tools, |_, _| {
        Err(ModelFailure::Provider {
            error: ProviderError::Server { status: 503, message: "busy".into() },
            attempts: 4,
        })
    })
    .await;
    assert!(
        matches!(&record.ending, TrialEnding::ProviderError(reason) if reason.contains("after 4 attempt(s)") && reason.contains("503"))
    );
    assert_eq!(record.model_calls, 4);

    let record = run_with(&case(&["hi"]), &tools, |_, _| Err(ModelFailure::CapReached)).await;
    assert_eq!(record.ending, TrialEnding::CapReached);
}

/// A model behind a real adapter, without retries or a cap.
struct Adapter<P>(P);

impl<P: crate::providers::Provider> ModelCaller for Adapter<P> {
    fn call<'a>(
        &'a self,
        _key: TurnKey,
        request: &'a CompletionRequest,
    ) -> BoxFuture<'a, Result<ModelReply, ModelFailure>> {
        Box::pin(async move {
            self.0
                .complete(request)
                .await
                .map(|completion| ModelReply {
                    completion,
                    attempts: 1,
                    latency_ms: 1,
                    result_changed: false,
                    replayed: false,
                })
                .map_err(|error| ModelFailure::Provider { error, attempts: 1 })
        })
    }
}

/// Runs `case` through `provider` against `server`; returns the record and the second request's
/// body (the one that echoes the first turn's calls and results).
async fn parallel_calls_through<P: crate::providers::Provider>(
    provider: P,
    server: &crate::providers::test_server::ScriptedServer,
) -> (TrialRecord, Value) {
    let tools = FakeTools::default();
    let model = Adapter(provider);
    let specs = specs();
    let context = TrialContext {
        model: &model,
        tools: &tools,
        specs: &specs,
        arguments: &NoEmptyText,
        events: &|_| {},
        trial: crate::events::TrialRef { case: "parallel".into(), model: "scripted".into(), trial: 1 },
    };
    let record = run_trial(&case(&["echo a and b"]), 1, &context).await;
    let received = server.received();
    assert_eq!(received.len(), 2, "two model turns: {received:?}");
    (record, received[1].json())
}

fn endpoint(base_url: String) -> crate::providers::EndpointConfig {
    crate::providers::EndpointConfig {
        base_url,
        api_key: Some("sk-test".into()),
        model: "m".into(),
        timeout: Duration::from_secs(10),
    }
}

#[tokio::test]
async fn parallel_calls_sharing_one_id_are_echoed_with_unique_ids_on_the_openai_wire() {
    use crate::providers::test_server::{Canned, ScriptedServer};
    // What DeepSeek and GLM send: two parallel calls under one id.
    let call = |text: &str| {
        json!({"id": "call_0", "type": "function",
               "function": {"name": "echo", "arguments": json!({"text": text}).to_string()}})
    };
    let first = json!({"choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": null, "tool_calls": [call("a"), call("b")]}}]});
    let last = json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": "a and b"}}]});
    let server =
        ScriptedServer::start(vec![Canned::json(200, &first.to_string()), Canned::json(200, &last.to_string())]).await;
    let provider = crate::providers::openai::OpenAiProvider::new(endpoint(server.base_url.clone())).expect("client");
    let (record, body) = parallel_calls_through(provider, &server).await;
    assert_eq!(record.ending, TrialEnding::Answer, "the echoed history was refused: {:?}", record.ending);
    let messages = body["messages"].as_array().expect("messages");
    let calls = messages.iter().find_map(|message| message["tool_calls"].as_array()).expect("the assistant's calls");
    let ids: Vec<&str> = calls.iter().filter_map(|call| call["id"].as_str()).collect();
    assert!(ids.len() == 2 && ids[0] != ids[1], "{ids:?}");
    // Each result under its own call's id, with its own text.
    for call in calls {
        let text: Value = serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
        let result = messages.iter().find(|message| message["tool_call_id"] == call["id"]).expect("its result");
        assert_eq!(result["content"], text["text"], "{body}");
    }
}

#[tokio::test]
async fn parallel_calls_sharing_one_id_are_echoed_with_unique_ids_on_the_anthropic_wire() {
    use crate::providers::test_server::{Canned, ScriptedServer};
    let call = |text: &str| json!({"type": "tool_use", "id": "toolu_0", "name": "echo", "input": {"text": text}});
    let first = json!({"type": "message", "role": "assistant", "stop_reason": "tool_use",
                       "content": [call("a"), call("b")]});
    let last = json!({"type": "message", "role": "assistant", "stop_reason": "end_turn",
                      "content": [{"type": "text", "text": "a and b"}]});
    let server =
        ScriptedServer::start(vec![Canned::json(200, &first.to_string()), Canned::json(200, &last.to_string())]).await;
    let root = server.base_url.trim_end_matches("/v1").to_owned();
    let provider = crate::providers::anthropic::AnthropicProvider::new(endpoint(root)).expect("client");
    let (record, body) = parallel_calls_through(provider, &server).await;
    assert_eq!(record.ending, TrialEnding::Answer, "the echoed history was refused: {:?}", record.ending);
    let blocks: Vec<&Value> =
        body["messages"].as_array().expect("messages").iter().flat_map(|m| m["content"].as_array()).flatten().collect();
    let uses: Vec<&&Value> = blocks.iter().filter(|block| block["type"] == "tool_use").collect();
    assert!(uses.len() == 2 && uses[0]["id"] != uses[1]["id"], "{body}");
    for used in uses {
        let result = blocks.iter().find(|block| block["tool_use_id"] == used["id"]).expect("its result");
        assert_eq!(result["content"], used["input"]["text"], "{body}");
    }
}

#[tokio::test]
async fn the_scripted_servers_refuse_a_repeated_tool_call_id_as_the_real_apis_do() {
    use crate::demo::model::{Wire, duplicate_id_refusal};
    let openai = json!({"messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "echo", "arguments": "{}"}},
            {"id": "c", "type": "function", "function": {"name": "echo", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c", "content": "a"},
        {"role": "tool", "tool_call_id": "c", "content": "b"}]});
    let (status, error) = duplicate_id_refusal(Wire::OpenAi, &openai).expect("refused");
    assert_eq!(status, 400);
    assert!(error["error"]["message"].as_str().unwrap().contains("Duplicate value for 'tool_call_id'"), "{error}");
    let anthropic = json!({"messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "echo", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "a"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "echo", "input": {}}]}]});
    let (status, error) = duplicate_id_refusal(Wire::Anthropic, &anthropic).expect("refused");
    assert_eq!(status, 400);
    assert!(error["error"]["message"].as_str().unwrap().contains("`tool_use` ids must be unique"), "{error}");
    // A paired call and result share their id: that is no repetition.
    let paired = json!({"messages": [
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "echo", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c", "content": "a"}]});
    assert_eq!(duplicate_id_refusal(Wire::OpenAi, &paired), None);
}

#[tokio::test]
async fn a_call_id_an_earlier_turn_used_goes_back_under_a_new_one() {
    let tools = FakeTools::default();
    let seen = Mutex::new(Vec::new());
    run_with(&case(&["twice"]), &tools, |key, request| {
        seen.lock().unwrap().push(request.messages.clone());
        // A server that restarts its numbering every turn.
        Ok(match key.turn {
            0 | 1 => calls_answer(vec![ToolCall::new("call_0", "echo", json!({"text": key.turn.to_string()}))]),
            _ => text_answer("done"),
        })
    })
    .await;
    let last = seen.lock().unwrap().last().cloned().expect("a third request");
    let ids: Vec<(String, bool)> = last
        .iter()
        .filter_map(|message| match message {
            Message::Assistant { tool_calls, .. } => {
                tool_calls.first().map(|call| (call.id.clone(), call.id_generated))
            }
            _ => None,
        })
        .collect();
    assert_eq!(ids, vec![("call_0".to_owned(), false), ("call_0_2".to_owned(), true)]);
    let results: Vec<(String, String)> = last
        .iter()
        .filter_map(|message| match message {
            Message::ToolResult(result) => Some((result.call_id.clone(), result.content.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(results, vec![("call_0".to_owned(), "0".to_owned()), ("call_0_2".to_owned(), "1".to_owned())]);
}
