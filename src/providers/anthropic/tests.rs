//! The Messages adapter against a scripted server on loopback: the exact requests we send (a
//! tool-use turn, a tool-result turn) and the answers the API gives (a tool call, text-only
//! `end_turn`, `max_tokens`, usage with cache counts, 401, 429 with `retry-after`, 529 overloaded,
//! a 500 with a plain body).

use std::time::Duration;

use serde_json::{Value, json};

use super::*;
use crate::providers::test_server::{Canned, ScriptedServer};
use crate::providers::{Sampling, ToolResult, ToolSpec};

const KEY: &str = "sk-ant-test-0123456789abcdef";

fn provider(server: &ScriptedServer) -> AnthropicProvider {
    // The scripted server's root ends in `/v1`; this adapter adds `/v1/messages` itself.
    provider_at(server.base_url.trim_end_matches("/v1").to_owned())
}

/// The adapter for the API whose root is `root`, with [`KEY`].
fn provider_at(root: String) -> AnthropicProvider {
    AnthropicProvider::new(EndpointConfig {
        base_url: root,
        api_key: Some(KEY.to_owned()),
        model: "claude-test".into(),
        timeout: Duration::from_secs(10),
    })
    .expect("client")
}

use super::super::test_server::{assert_a_closed_port_is_a_network_error, request, tools};

/// A 200 answer with these content blocks, stop reason and usage.
fn answer(content: Value, stop_reason: &str, usage: Value) -> Canned {
    Canned::json(
        200,
        &json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
                "content": content, "stop_reason": stop_reason, "stop_sequence": null, "usage": usage})
        .to_string(),
    )
}

fn error_body(kind: &str, message: &str) -> String {
    json!({"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_1"}).to_string()
}

async fn complete_once(canned: Canned) -> (Result<Completion, ProviderError>, ScriptedServer) {
    let server = ScriptedServer::start(vec![canned]).await;
    let result = provider(&server).complete(&request()).await;
    (result, server)
}

#[tokio::test]
async fn a_tool_use_turn_sends_the_exact_request_and_reads_the_call_back() {
    let (result, server) = complete_once(answer(
        json!([{"type": "text", "text": "Reading it."},
               {"type": "tool_use", "id": "toolu_01", "name": "files_read", "input": {"path": "/etc/hosts"}}]),
        "tool_use",
        json!({"input_tokens": 812, "output_tokens": 31}),
    ))
    .await;
    let completion = result.expect("a completion");
    assert_eq!(completion.text.as_deref(), Some("Reading it."));
    assert_eq!(completion.tool_calls, [ToolCall::new("toolu_01", "files.read", json!({"path": "/etc/hosts"}))]);
    assert_eq!(completion.finish, FinishReason::ToolCalls);
    assert_eq!(
        completion.usage,
        Some(Usage { input_tokens: Some(812), output_tokens: Some(31), ..Default::default() })
    );

    let received = server.received();
    assert_eq!(received.len(), 1);
    let sent = &received[0];
    assert_eq!((sent.method.as_str(), sent.path.as_str()), ("POST", "/v1/messages"));
    assert_eq!(sent.header("x-api-key"), Some(KEY));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(sent.header("authorization"), None);
    // The whole body: the default `max_tokens`, a top-level `system`, tools renamed, no
    // `description` when there is none, `tool_choice` with tools, no sampling fields.
    assert_eq!(
        sent.json(),
        json!({
            "model": "claude-test",
            "max_tokens": 1024,
            "system": "You are terse.",
            "messages": [{"role": "user", "content": "Read /etc/hosts"}],
            "tools": [
                {"name": "files_read", "description": "Reads a file",
                 "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
                {"name": "get_time", "input_schema": {"type": "object"}}
            ],
            "tool_choice": {"type": "auto"}
        })
    );
    let text = String::from_utf8(sent.body.clone()).expect("UTF-8");
    assert!(text.starts_with(r#"{"model":"claude-test","max_tokens":1024,"system":"#), "{text}");
}

#[tokio::test]
async fn a_tool_result_turn_groups_the_results_in_one_user_message() {
    let server = ScriptedServer::start(vec![answer(
        json!([{"type": "text", "text": "Done."}]),
        "end_turn",
        json!({"input_tokens": 900, "output_tokens": 3}),
    )])
    .await;
    let mut unparsable = ToolCall::new("toolu_0_1", "get_time", json!("{\"zone\": \"CET\""));
    unparsable.arguments_unparsable = true;
    let request = CompletionRequest {
        system: None,
        messages: vec![
            Message::User("Read it".into()),
            Message::Assistant {
                text: Some("Reading.".into()),
                tool_calls: vec![ToolCall::new("toolu_01", "files.read", json!({"path": "/etc/hosts"})), unparsable],
            },
            Message::ToolResult(ToolResult {
                call_id: "toolu_01".into(),
                content: "127.0.0.1".into(),
                is_error: false,
            }),
            Message::ToolResult(ToolResult { call_id: "toolu_0_1".into(), content: "bad JSON".into(), is_error: true }),
            Message::Assistant { text: None, tool_calls: vec![ToolCall::new("toolu_02", "get_time", json!({}))] },
            Message::ToolResult(ToolResult { call_id: "toolu_02".into(), content: "12:00".into(), is_error: false }),
        ],
        tools: tools(),
        sampling: Sampling { temperature: Some(0.0), top_p: Some(0.5), max_output_tokens: Some(256) },
        tool_choice: ToolChoice::Named("files.read".into()),
    };
    let completion = provider(&server).complete(&request).await.expect("a completion");
    assert_eq!(completion.text.as_deref(), Some("Done."));
    assert!(completion.tool_calls.is_empty());
    assert_eq!(completion.finish, FinishReason::Stop);

    let body = server.received()[0].json();
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": "Read it"},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "toolu_01", "name": "files_read", "input": {"path": "/etc/hosts"}},
                {"type": "tool_use", "id": "toolu_0_1", "name": "get_time", "input": {}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": "127.0.0.1", "is_error": false},
                {"type": "tool_result", "tool_use_id": "toolu_0_1", "content": "bad JSON", "is_error": true}
            ]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_02", "name": "get_time", "input": {}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_02", "content": "12:00", "is_error": false}
            ]}
        ])
    );
    assert_eq!(body.get("system"), None);
    assert_eq!(body["tool_choice"], json!({"type": "tool", "name": "files_read"}));
    // Both set: only `temperature` is sent.
    assert_eq!((&body["temperature"], &body["max_tokens"]), (&json!(0.0), &json!(256)));
    assert_eq!(body.get("top_p"), None);
}

#[tokio::test]
async fn tool_choices_and_top_p_alone_are_sent_as_the_api_spells_them() {
    let done = || answer(json!([{"type": "text", "text": "ok"}]), "end_turn", json!({}));
    let server = ScriptedServer::start(vec![done(), done(), done()]).await;
    let provider = provider(&server);
    for choice in [ToolChoice::Required, ToolChoice::None] {
        let mut asked = request();
        asked.tool_choice = choice;
        asked.sampling = Sampling { top_p: Some(0.9), ..Sampling::default() };
        provider.complete(&asked).await.expect("a completion");
    }
    let without_tools =
        CompletionRequest { messages: vec![Message::User("hi".into())], ..CompletionRequest::default() };
    provider.complete(&without_tools).await.expect("a completion");
    let received = server.received();
    assert_eq!(received[0].json()["tool_choice"], json!({"type": "any"}));
    assert_eq!(received[0].json()["top_p"], json!(0.9));
    assert_eq!(received[1].json()["tool_choice"], json!({"type": "none"}));
    assert_eq!(
        received[2].json(),
        json!({"model": "claude-test", "max_tokens": 1024, "messages": [{"role": "user", "content": "hi"}]})
    );
}

#[tokio::test]
async fn a_text_only_end_turn_has_no_calls() {
    let (result, _server) = complete_once(answer(
        json!([{"type": "text", "text": "Hello, "}, {"type": "text", "text": "world"}]),
        "end_turn",
        json!({"input_tokens": 10, "output_tokens": 2}),
    ))
    .await;
    let completion = result.expect("a completion");
    assert_eq!(completion.text.as_deref(), Some("Hello, world"));
    assert!(completion.tool_calls.is_empty());
    assert_eq!(completion.finish, FinishReason::Stop);
}

#[tokio::test]
async fn max_tokens_is_length_and_usage_counts_the_cache() {
    let (result, _server) = complete_once(answer(
        json!([{"type": "text", "text": "The file says"}]),
        "max_tokens",
        json!({"input_tokens": 100, "output_tokens": 256, "cache_creation_input_tokens": 20,
               "cache_read_input_tokens": 5, "service_tier": "standard"}),
    ))
    .await;
    let completion = result.expect("a completion");
    assert_eq!(completion.finish, FinishReason::Length);
    assert_eq!(
        completion.usage,
        Some(Usage {
            input_tokens: Some(125),
            output_tokens: Some(256),
            cache_read_tokens: Some(5),
            cache_write_tokens: Some(20),
            reasoning_tokens: None,
            reported_cost_usd: None,
        }),
        "everything read is input; the cache counts are its parts; Anthropic reports no reasoning apart"
    );
}

#[tokio::test]
async fn other_stop_reasons_missing_ids_and_unknown_tools_are_kept() {
    let (result, _server) = complete_once(answer(
        json!([{"type": "thinking", "thinking": "hmm", "signature": "s"},
               {"type": "tool_use", "name": "get_time", "input": {}},
               {"type": "tool_use", "id": "toolu_9", "name": "delete_all", "input": "{not json"}]),
        "pause_turn",
        Value::Null,
    ))
    .await;
    let completion = result.expect("a completion");
    assert_eq!(completion.finish, FinishReason::Other("pause_turn".into()));
    assert_eq!(completion.usage, None);
    assert_eq!(completion.text, None);
    let [first, second] = completion.tool_calls.as_slice() else { panic!("{:?}", completion.tool_calls) };
    assert_eq!((first.id.as_str(), first.id_generated), ("toolu_0_0", true));
    assert!(second.unknown_tool && second.name == "delete_all" && second.arguments_unparsable);

    let (result, _server) = complete_once(answer(json!([]), "refusal", json!({}))).await;
    assert_eq!(result.expect("a completion").finish, FinishReason::ContentFilter);
}

#[tokio::test]
async fn a_401_is_unauthorized_and_never_repeats_the_key() {
    let (result, _server) =
        complete_once(Canned::json(401, &error_body("authentication_error", &format!("invalid x-api-key {KEY}"))))
            .await;
    let error = result.expect_err("refused");
    assert_eq!(error, ProviderError::Unauthorized { status: 401, message: "invalid x-api-key ***".into() });
    assert!(!error.is_retryable());
    assert!(!error.to_string().contains(KEY) && !format!("{error:?}").contains(KEY));
}

#[tokio::test]
async fn a_429_is_rate_limited_with_its_retry_after() {
    let (result, _server) = complete_once(
        Canned::json(429, &error_body("rate_limit_error", "Number of requests has exceeded your rate limit"))
            .header("retry-after", "12"),
    )
    .await;
    let error = result.expect_err("limited");
    assert_eq!(
        error,
        ProviderError::RateLimited {
            retry_after: Some(Duration::from_secs(12)),
            message: "Number of requests has exceeded your rate limit".into()
        }
    );
    assert!(error.is_retryable());

    let spent = json!({"type": "error", "error": {"type": "rate_limit_error", "message": "Spend limit reached",
                       "details": {"error_code": "enforced_spend_limit_reached"}}});
    let (result, _server) = complete_once(Canned::json(429, &spent.to_string())).await;
    let error = result.expect_err("out of quota");
    assert!(matches!(error, ProviderError::QuotaExhausted(_)) && !error.is_retryable(), "{error:?}");
}

#[tokio::test]
async fn overloaded_is_a_retryable_server_error_whatever_the_status() {
    let (result, _server) = complete_once(Canned::json(529, &error_body("overloaded_error", "Overloaded"))).await;
    let error = result.expect_err("overloaded");
    assert_eq!(error, ProviderError::Server { status: 529, message: "Overloaded".into() });
    assert!(error.is_retryable());
    let (result, _server) = complete_once(Canned::json(429, &error_body("overloaded_error", "Overloaded"))).await;
    assert_eq!(result, Err(ProviderError::Server { status: 429, message: "Overloaded".into() }));
}

#[tokio::test]
async fn a_500_with_a_plain_body_keeps_its_text_bounded() {
    let (result, _server) = complete_once(Canned::json(500, "Internal Server Error")).await;
    let error = result.expect_err("failed");
    assert_eq!(error, ProviderError::Server { status: 500, message: "Internal Server Error".into() });
    assert!(error.is_retryable());
    let long = "x".repeat(5000);
    let (result, _server) = complete_once(Canned::json(500, &long)).await;
    let error = result.expect_err("failed");
    let ProviderError::Server { status: 500, message } = &error else { panic!("{error:?}") };
    assert!(message.chars().count() <= MAX_MESSAGE_CHARS + 1 && message.ends_with('…'), "{}", message.len());
}

#[tokio::test]
async fn a_404_not_found_is_model_not_found_and_other_4xx_are_rejected() {
    let (result, _server) =
        complete_once(Canned::json(404, &error_body("not_found_error", "model: claude-nope"))).await;
    assert_eq!(result, Err(ProviderError::ModelNotFound("model: claude-nope".into())));
    let (result, _server) = complete_once(Canned::json(404, "404 page not found")).await;
    assert_eq!(result, Err(ProviderError::Rejected { status: 404, message: "404 page not found".into() }));
    let (result, _server) = complete_once(Canned::json(
        400,
        &error_body("invalid_request_error", "input_schema does not support oneOf, allOf, or anyOf at the top level"),
    ))
    .await;
    assert!(matches!(result, Err(ProviderError::Rejected { status: 400, .. })), "{result:?}");
    let (result, _server) = complete_once(Canned::json(403, &error_body("permission_error", "no access"))).await;
    assert!(matches!(result, Err(ProviderError::Unauthorized { status: 403, .. })), "{result:?}");
}

#[tokio::test]
async fn unreadable_answers_and_unsendable_requests_are_typed_errors() {
    let (result, _server) = complete_once(Canned::json(200, "{not json")).await;
    assert!(matches!(result, Err(ProviderError::BadResponse(_))), "{result:?}");
    let (result, _server) = complete_once(Canned::json(200, r#"{"type":"message"}"#)).await;
    assert!(matches!(result, Err(ProviderError::BadResponse(_))), "{result:?}");

    let server = ScriptedServer::start(Vec::new()).await;
    let provider = provider(&server);
    let mut named = request();
    named.tool_choice = ToolChoice::Named("not_offered".into());
    assert!(matches!(provider.complete(&named).await, Err(ProviderError::InvalidRequest(_))));
    let mut duplicate = request();
    duplicate.tools.push(duplicate.tools[0].clone());
    assert!(matches!(provider.complete(&duplicate).await, Err(ProviderError::InvalidRequest(_))));
    assert!(server.received().is_empty());
}

#[tokio::test]
async fn names_up_to_128_characters_are_kept_and_the_debug_form_hides_the_key() {
    let server = ScriptedServer::start(Vec::new()).await;
    let provider = provider(&server);
    let long = "y".repeat(100);
    let names = ToolNames::new(["files.read", long.as_str()], NameRule::ANTHROPIC).expect("mappable");
    assert_eq!(names.wire(&long), Some(long.as_str()));
    assert_eq!(names.wire("files.read"), Some("files_read"));
    let text = format!("{provider:?}");
    assert!(!text.contains(KEY) && text.contains(r#"api_key: Some("***")"#), "{text}");
}

#[tokio::test]
async fn a_user_text_after_tool_results_joins_their_message() {
    let server =
        ScriptedServer::start(vec![answer(json!([{"type": "text", "text": "ok"}]), "end_turn", json!({}))]).await;
    let request = CompletionRequest {
        messages: vec![
            Message::User("Time?".into()),
            Message::Assistant { text: None, tool_calls: vec![ToolCall::new("toolu_1", "get_time", json!({}))] },
            Message::ToolResult(ToolResult { call_id: "toolu_1".into(), content: "12:00".into(), is_error: false }),
            Message::User("And in UTC?".into()),
        ],
        tools: tools(),
        ..CompletionRequest::default()
    };
    provider(&server).complete(&request).await.expect("a completion");
    assert_eq!(
        server.received()[0].json()["messages"],
        json!([
            {"role": "user", "content": "Time?"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_time", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "12:00", "is_error": false},
                {"type": "text", "text": "And in UTC?"}
            ]}
        ])
    );
}

#[tokio::test]
async fn a_closed_port_is_a_network_error_without_the_key() {
    assert_a_closed_port_is_a_network_error(KEY, provider_at).await;
}

#[tokio::test]
async fn the_reported_model_version_is_kept_and_there_is_no_fingerprint() {
    let body = json!({"id": "msg_2", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
                      "content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn",
                      "usage": {"input_tokens": 3, "output_tokens": 1}});
    let (result, _server) = complete_once(Canned::json(200, &body.to_string())).await;
    let completion = result.expect("a completion");
    assert_eq!(completion.reported_model.as_deref(), Some("claude-sonnet-4-5-20250929"));
    assert_eq!(completion.system_fingerprint, None);

    let without = json!({"content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn"});
    let (result, _server) = complete_once(Canned::json(200, &without.to_string())).await;
    assert_eq!(result.expect("a completion").reported_model, None, "a lenient stand-in may leave it out");

    // One that echoes the key does not carry it on.
    let echo = json!({"model": KEY, "content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn"});
    let (result, _server) = complete_once(Canned::json(200, &echo.to_string())).await;
    assert_eq!(result.expect("a completion").reported_model.as_deref(), Some("***"));
}

#[tokio::test]
async fn count_tokens_posts_the_tools_to_the_count_endpoint_and_reads_input_tokens() {
    let server = ScriptedServer::start(vec![
        Canned::json(200, r#"{"input_tokens": 412}"#),
        Canned::json(200, r#"{"tokens": 1}"#),
    ])
    .await;
    let tools = vec![ToolSpec {
        name: "files.read".into(),
        description: Some("Reads a file.".into()),
        input_schema: json!({"type": "object"}),
    }];
    assert_eq!(provider(&server).count_tokens(&tools).await, Ok(412));
    let asked = &server.received()[0];
    assert_eq!(asked.path, "/v1/messages/count_tokens");
    assert_eq!(asked.header("x-api-key"), Some(KEY));
    let body = asked.json();
    assert_eq!(body["model"], "claude-test");
    assert_eq!(body["tools"][0]["name"], "files_read", "the wire name, as a Messages request sends it");
    assert!(body.get("max_tokens").is_none(), "{body}");
    assert!(matches!(provider(&server).count_tokens(&tools).await, Err(ProviderError::BadResponse(_))));
}
