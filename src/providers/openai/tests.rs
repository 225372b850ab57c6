//! The Chat Completions adapter against a scripted server on loopback: the wire shapes real
//! servers send (a normal call, arguments as an object, a missing id, `usage: null`, 401, 429
//! with `Retry-After`, 500) and the exact request we send.

use std::time::Duration;

use serde_json::{Value, json};

use super::*;
use crate::providers::test_server::{Canned, ScriptedServer};
use crate::providers::wire::retry_after;
use crate::providers::{Sampling, ToolResult, ToolSpec};

const KEY: &str = "sk-test-0123456789abcdef";

fn provider(server: &ScriptedServer) -> OpenAiProvider {
    provider_at(server.base_url.clone())
}

/// The adapter for the API whose base URL is `base_url`, with [`KEY`].
fn provider_at(base_url: String) -> OpenAiProvider {
    OpenAiProvider::new(EndpointConfig {
        base_url,
        api_key: Some(KEY.to_owned()),
        model: "gpt-test".into(),
        timeout: Duration::from_secs(10),
    })
    .expect("client")
}

use super::super::test_server::{assert_a_closed_port_is_a_network_error, request, tools};

/// A 200 answer whose `choices[0].message` is `message`, plus `extra` top-level fields.
fn answer(message: Value, finish: &str, usage: Value) -> Canned {
    Canned::json(
        200,
        &json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-test",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage})
        .to_string(),
    )
}

async fn complete_once(canned: Canned) -> (Result<Completion, ProviderError>, ScriptedServer) {
    let server = ScriptedServer::start(vec![canned]).await;
    let result = provider(&server).complete(&request()).await;
    (result, server)
}

#[tokio::test]
async fn a_normal_tool_call_is_read_and_mapped_back_to_the_mcp_name() {
    let (result, server) = complete_once(answer(
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_abc", "type": "function",
               "function": {"name": "files_read", "arguments": "{\"path\":\"/etc/hosts\"}"}}]}),
        "tool_calls",
        json!({"prompt_tokens": 812, "completion_tokens": 31, "total_tokens": 843}),
    ))
    .await;
    let completion = result.expect("a completion");
    assert_eq!(completion.text, None);
    assert_eq!(completion.tool_calls, [ToolCall::new("call_abc", "files.read", json!({"path": "/etc/hosts"}))]);
    assert_eq!(completion.finish, FinishReason::ToolCalls);
    assert_eq!(
        completion.usage,
        Some(Usage { input_tokens: Some(812), output_tokens: Some(31), ..Default::default() })
    );

    let received = server.received();
    assert_eq!(received.len(), 1);
    let sent = &received[0];
    assert_eq!((sent.method.as_str(), sent.path.as_str()), ("POST", "/v1/chat/completions"));
    assert_eq!(sent.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    // The whole body: tools renamed, no `description` when there is none, `tool_choice` with
    // tools, no sampling fields when none is set.
    assert_eq!(
        sent.json(),
        json!({
            "model": "gpt-test",
            "messages": [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "Read /etc/hosts"}
            ],
            "tools": [
                {"type": "function", "function": {"name": "files_read", "description": "Reads a file",
                    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
                {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}
            ],
            "tool_choice": "auto"
        })
    );
    // Key order as written (serde_json keeps insertion order here).
    let text = String::from_utf8(sent.body.clone()).expect("UTF-8");
    assert!(text.starts_with(r#"{"model":"gpt-test","messages":["#), "{text}");
}

#[tokio::test]
async fn arguments_as_an_object_are_accepted() {
    let (result, _server) = complete_once(answer(
        json!({"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
               "function": {"name": "get_time", "arguments": {"zone": "UTC"}}}]}),
        "tool_calls",
        json!({"prompt_tokens": 1, "completion_tokens": 2}),
    ))
    .await;
    let completion = result.expect("a completion");
    assert_eq!(completion.tool_calls, [ToolCall::new("c1", "get_time", json!({"zone": "UTC"}))]);
}

#[tokio::test]
async fn cache_reads_writes_reasoning_and_a_reported_cost_are_read_from_the_usage_details() {
    let (result, _server) = complete_once(answer(
        json!({"role": "assistant", "content": "done"}),
        "stop",
        json!({"prompt_tokens": 812, "completion_tokens": 31, "total_tokens": 843, "cost": 0.0021,
               "prompt_tokens_details": {"cached_tokens": 768, "cache_write_tokens": 12},
               "completion_tokens_details": {"reasoning_tokens": 20}}),
    ))
    .await;
    let usage = result.expect("a completion").usage.expect("usage");
    assert_eq!(
        usage,
        Usage {
            input_tokens: Some(812),
            output_tokens: Some(31),
            cache_read_tokens: Some(768),
            cache_write_tokens: Some(12),
            reasoning_tokens: Some(20),
            reported_cost_usd: Some(0.0021),
        }
    );
}

#[tokio::test]
async fn a_missing_id_is_generated_null_usage_is_unknown_and_stop_keeps_the_calls() {
    let (result, _server) = complete_once(answer(
        json!({"role": "assistant", "content": "Calling.", "tool_calls": [
            {"type": "function", "function": {"name": "get_time", "arguments": "{}"}},
            {"id": "", "type": "function", "function": {"name": "get_time", "arguments": "{\"zone\": \"CET\""}},
            {"id": "c3", "type": "function", "function": {"name": "delete_all", "arguments": "{}"}}
        ]}),
        "stop",
        Value::Null,
    ))
    .await;
    let completion = result.expect("a completion");
    assert_eq!(completion.text.as_deref(), Some("Calling."));
    assert_eq!(completion.finish, FinishReason::Stop);
    assert_eq!(completion.usage, None);
    let [first, second, third] = completion.tool_calls.as_slice() else { panic!("{:?}", completion.tool_calls) };
    assert_eq!((first.id.as_str(), first.id_generated), ("call_0_0", true));
    assert_eq!(first.arguments, json!({}));
    assert_eq!((second.id.as_str(), second.id_generated), ("call_0_1", true));
    assert!(second.arguments_unparsable);
    assert_eq!(second.arguments, json!("{\"zone\": \"CET\""));
    assert!(third.unknown_tool && third.name == "delete_all" && !third.id_generated);
}

/// Public report NousResearch/hermes-agent#83937: a gateway sends `arguments: ""` for a tool
/// that takes none; it is read as `{}` and the call goes ahead, while broken JSON is still
/// refused.
#[tokio::test]
async fn hermes_agent_83937_empty_string_arguments_are_no_arguments() {
    let (result, _server) = complete_once(answer(
        json!({"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_time", "arguments": ""}},
            {"id": "c2", "type": "function", "function": {"name": "get_time", "arguments": "  "}},
            {"id": "c3", "type": "function", "function": {"name": "get_time", "arguments": "{"}}
        ]}),
        "tool_calls",
        json!({}),
    ))
    .await;
    let completion = result.expect("a completion");
    let [empty, blank, broken] = completion.tool_calls.as_slice() else { panic!("{:?}", completion.tool_calls) };
    assert_eq!((empty.arguments.clone(), empty.arguments_unparsable), (json!({}), false));
    assert_eq!((blank.arguments.clone(), blank.arguments_unparsable), (json!({}), false));
    assert!(broken.arguments_unparsable, "broken JSON is still refused");
}

#[tokio::test]
async fn generated_ids_are_stable_for_the_same_conversation() {
    let missing_id = || {
        answer(
            json!({"role": "assistant", "tool_calls": [{"function": {"name": "get_time", "arguments": "{}"}}]}),
            "tool_calls",
            json!({}),
        )
    };
    let server = ScriptedServer::start(vec![missing_id(), missing_id()]).await;
    let provider = provider(&server);
    let first = provider.complete(&request()).await.expect("a completion");
    let again = provider.complete(&request()).await.expect("a completion");
    assert_eq!(first.tool_calls[0].id, again.tool_calls[0].id);
    // `usage: {}` is reported but empty: both counts unknown.
    assert_eq!(first.usage, Some(Usage { input_tokens: None, output_tokens: None, ..Default::default() }));
}

#[tokio::test]
async fn a_conversation_is_sent_back_with_empty_content_and_tool_results() {
    // A call whose arguments were not JSON goes back as `{}` (issue 41: llama.cpp answers 500 to
    // a history whose arguments it cannot parse); its tool result says why it was not sent.
    let server =
        ScriptedServer::start(vec![answer(json!({"role": "assistant", "content": "Done."}), "stop", json!({}))]).await;
    let mut unparsable = ToolCall::new("call_0_1", "get_time", json!("{\"zone\": \"CET\""));
    unparsable.arguments_unparsable = true;
    let request = CompletionRequest {
        system: None,
        messages: vec![
            Message::User("Read it".into()),
            Message::Assistant {
                text: None,
                tool_calls: vec![ToolCall::new("call_abc", "files.read", json!({"path": "/etc/hosts"})), unparsable],
            },
            Message::ToolResult(ToolResult {
                call_id: "call_abc".into(),
                content: "127.0.0.1".into(),
                is_error: false,
            }),
            Message::ToolResult(ToolResult { call_id: "call_0_1".into(), content: "bad JSON".into(), is_error: true }),
        ],
        tools: tools(),
        sampling: Sampling { temperature: Some(0.0), top_p: Some(0.5), max_output_tokens: Some(256) },
        tool_choice: ToolChoice::Named("files.read".into()),
    };
    let completion = provider(&server).complete(&request).await.expect("a completion");
    assert_eq!(completion.text.as_deref(), Some("Done."));
    assert!(completion.tool_calls.is_empty());

    let body = server.received()[0].json();
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": "Read it"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "call_abc", "type": "function",
                 "function": {"name": "files_read", "arguments": "{\"path\":\"/etc/hosts\"}"}},
                {"id": "call_0_1", "type": "function",
                 "function": {"name": "get_time", "arguments": "{}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_abc", "content": "127.0.0.1"},
            {"role": "tool", "tool_call_id": "call_0_1", "content": "Error: bad JSON"}
        ])
    );
    assert_eq!(body["tool_choice"], json!({"type": "function", "function": {"name": "files_read"}}));
    assert_eq!((&body["temperature"], &body["top_p"], &body["max_tokens"]), (&json!(0.0), &json!(0.5), &json!(256)));
}

#[tokio::test]
async fn without_tools_neither_tools_nor_tool_choice_is_sent() {
    let server = ScriptedServer::start(vec![answer(json!({"content": "hi"}), "stop", json!({}))]).await;
    let request = CompletionRequest {
        messages: vec![Message::User("hi".into())],
        sampling: Sampling { max_output_tokens: Some(5), ..Sampling::default() },
        ..CompletionRequest::default()
    };
    provider(&server).complete(&request).await.expect("a completion");
    let body = server.received()[0].json();
    assert_eq!(body, json!({"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 5}));
}

#[tokio::test]
async fn a_401_is_unauthorized_and_never_repeats_the_key() {
    let (result, _server) = complete_once(Canned::json(
        401,
        &json!({"error": {"message": format!("Incorrect API key provided: {KEY}."), "type": "invalid_request_error",
                          "code": "invalid_api_key"}})
        .to_string(),
    ))
    .await;
    let error = result.expect_err("refused");
    assert!(matches!(&error, ProviderError::Unauthorized { status: 401, .. }), "{error:?}");
    assert!(!error.is_retryable());
    let text = error.to_string();
    assert!(text.contains("Incorrect API key provided: ***."), "{text}");
    assert!(!text.contains(KEY) && !format!("{error:?}").contains(KEY), "{text}");
}

#[tokio::test]
async fn a_429_is_rate_limited_with_its_retry_after() {
    let (result, _server) = complete_once(
        Canned::json(
            429,
            r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#,
        )
        .header("retry-after", "7"),
    )
    .await;
    let error = result.expect_err("limited");
    assert_eq!(
        error,
        ProviderError::RateLimited { retry_after: Some(Duration::from_secs(7)), message: "Rate limit reached".into() }
    );
    assert!(error.is_retryable());

    let (result, _server) = complete_once(Canned::json(
        429,
        r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#,
    ))
    .await;
    let error = result.expect_err("out of quota");
    assert!(matches!(error, ProviderError::QuotaExhausted(_)) && !error.is_retryable(), "{error:?}");
}

#[tokio::test]
async fn a_500_is_a_server_error_with_a_bounded_message() {
    let long = "x".repeat(5000);
    let (result, _server) = complete_once(Canned::json(500, &json!({"error": {"message": long}}).to_string())).await;
    let error = result.expect_err("failed");
    let ProviderError::Server { status: 500, message } = &error else { panic!("{error:?}") };
    assert!(message.chars().count() <= MAX_MESSAGE_CHARS + 1 && message.ends_with('…'), "{}", message.len());
    assert!(error.is_retryable());
    // A body that is not JSON: its text, as given.
    let (result, _server) = complete_once(Canned::json(502, "Bad Gateway")).await;
    assert_eq!(result, Err(ProviderError::Server { status: 502, message: "Bad Gateway".into() }));
}

#[tokio::test]
async fn a_404_naming_the_model_is_model_not_found_and_other_4xx_are_rejected() {
    let (result, _server) = complete_once(Canned::json(
        404,
        r#"{"error":{"message":"The model `gpt-nope` does not exist","type":"invalid_request_error","code":"model_not_found"}}"#,
    ))
    .await;
    assert!(matches!(result, Err(ProviderError::ModelNotFound(_))), "{result:?}");
    let (result, _server) = complete_once(Canned::json(404, "404 page not found")).await;
    assert_eq!(result, Err(ProviderError::Rejected { status: 404, message: "404 page not found".into() }));
    let (result, _server) = complete_once(Canned::json(400, r#"{"error":"tool_choice is not supported"}"#)).await;
    assert_eq!(result, Err(ProviderError::Rejected { status: 400, message: "tool_choice is not supported".into() }));
}

#[tokio::test]
async fn unreadable_answers_and_a_closed_port_are_typed_errors() {
    let (result, _server) = complete_once(Canned::json(200, "{not json")).await;
    assert!(matches!(result, Err(ProviderError::BadResponse(_))), "{result:?}");
    let (result, _server) = complete_once(Canned::json(200, r#"{"choices":[]}"#)).await;
    assert!(matches!(result, Err(ProviderError::BadResponse(_))), "{result:?}");

    assert_a_closed_port_is_a_network_error(KEY, |root| provider_at(format!("{root}/v1"))).await;
}

#[tokio::test]
async fn requests_that_cannot_be_sent_fail_before_any_traffic() {
    let server = ScriptedServer::start(Vec::new()).await;
    let provider = provider(&server);
    let mut named = request();
    named.tool_choice = ToolChoice::Named("not_offered".into());
    assert!(matches!(provider.complete(&named).await, Err(ProviderError::InvalidRequest(_))));
    let mut duplicate = request();
    duplicate.tools.push(duplicate.tools[0].clone());
    assert!(matches!(provider.complete(&duplicate).await, Err(ProviderError::InvalidRequest(_))));
    let mut many = request();
    many.tools = (0..=MAX_TOOLS)
        .map(|index| ToolSpec { name: format!("t{index}"), description: None, input_schema: json!({"type": "object"}) })
        .collect();
    let error = provider.complete(&many).await.expect_err("too many tools");
    assert!(error.to_string().contains("at most 128"), "{error}");
    assert!(server.received().is_empty());
}

#[test]
fn retry_after_reads_seconds_and_milliseconds() {
    let mut headers = reqwest::header::HeaderMap::new();
    assert_eq!(retry_after(&headers), None);
    headers.insert("retry-after", "2".parse().expect("header"));
    assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
    headers.insert("retry-after-ms", "1500".parse().expect("header"));
    assert_eq!(retry_after(&headers), Some(Duration::from_millis(1500)));
    let mut dated = reqwest::header::HeaderMap::new();
    dated.insert("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT".parse().expect("header"));
    assert_eq!(retry_after(&dated), None);
    // Out of range or negative: no wait known, and no panic.
    for odd in ["1e300", "-3", "NaN", "inf"] {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert("retry-after", odd.parse().expect("header"));
        assert_eq!(retry_after(&headers), None, "{odd}");
    }
}

#[tokio::test]
async fn content_parts_are_joined_and_the_name_rule_explains_the_renames() {
    let (result, _server) = complete_once(answer(
        json!({"role": "assistant", "content": [{"type": "text", "text": "Hello, "}, {"type": "text", "text": "world"}]}),
        "stop",
        json!({"prompt_tokens": 3, "completion_tokens": 2}),
    ))
    .await;
    assert_eq!(result.expect("a completion").text.as_deref(), Some("Hello, world"));
    let names = ToolNames::new(tools().iter().map(|tool| tool.name.as_str()), NameRule::OPENAI).expect("mappable");
    let renamed: Vec<(&str, &str)> =
        names.renamed().iter().map(|rename| (rename.mcp.as_str(), rename.wire.as_str())).collect();
    assert_eq!(renamed, [("files.read", "files_read")]);
}

#[tokio::test]
async fn the_debug_form_of_a_provider_hides_the_key() {
    let server = ScriptedServer::start(Vec::new()).await;
    let text = format!("{:?}", provider(&server));
    assert!(!text.contains(KEY) && text.contains(r#"api_key: Some("***")"#), "{text}");
}

#[tokio::test]
async fn the_reported_model_version_and_system_fingerprint_are_kept() {
    let body = json!({"id": "chatcmpl-2", "object": "chat.completion", "model": "gpt-4.1-2025-04-14",
                      "system_fingerprint": "fp_abc123",
                      "choices": [{"index": 0, "message": {"role": "assistant", "content": "Done."},
                                   "finish_reason": "stop"}]});
    let (result, _server) = complete_once(Canned::json(200, &body.to_string())).await;
    let completion = result.expect("a completion");
    assert_eq!(completion.reported_model.as_deref(), Some("gpt-4.1-2025-04-14"));
    assert_eq!(completion.system_fingerprint.as_deref(), Some("fp_abc123"));
}

#[tokio::test]
async fn a_missing_null_or_empty_fingerprint_is_unknown_and_a_long_one_is_bounded() {
    // Compatible servers leave the fingerprint out, send `null` or `""`, or echo odd values.
    let long = "x".repeat(500);
    let cases = [
        (json!({}), None, None),
        (json!({"model": null, "system_fingerprint": null}), None, None),
        (json!({"model": " ", "system_fingerprint": ""}), None, None),
        (json!({"model": 7, "system_fingerprint": "fp_1"}), None, Some("fp_1".to_owned())),
        (json!({"model": long}), Some(format!("{}…", "x".repeat(crate::providers::MAX_REPORTED_CHARS))), None),
    ];
    for (fields, model, fingerprint) in cases {
        let mut body = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"},
                                           "finish_reason": "stop"}]});
        body.as_object_mut().expect("object").extend(fields.as_object().expect("object").clone());
        let (result, _server) = complete_once(Canned::json(200, &body.to_string())).await;
        let completion = result.expect("a completion");
        assert_eq!((completion.reported_model, completion.system_fingerprint), (model, fingerprint), "{fields}");
    }
}

#[tokio::test]
async fn a_reported_model_that_echoes_the_key_is_redacted() {
    // A proxy that echoes what it was sent must not put the key into a report or a cassette.
    let body = json!({"model": format!("proxy/{KEY}"), "system_fingerprint": format!("fp_{KEY}"),
                      "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"},
                                   "finish_reason": "stop"}]});
    let (result, _server) = complete_once(Canned::json(200, &body.to_string())).await;
    let completion = result.expect("a completion");
    assert_eq!(completion.reported_model.as_deref(), Some("proxy/***"));
    assert_eq!(completion.system_fingerprint.as_deref(), Some("fp_***"));
}

#[test]
fn groq_typescript_28_a_tool_use_failed_400_is_an_unreadable_call_never_retried() {
    let body = br#"{"error":{"message":"Failed to call a function.","type":"invalid_request_error","code":"tool_use_failed","failed_generation":"<function=lookup{}</function>"}}"#;
    let error = error_for(400, None, body, &Redactor::default());
    assert_eq!(
        error,
        ProviderError::UnreadableCall {
            message: "Failed to call a function.".into(),
            generation: "<function=lookup{}</function>".into()
        }
    );
    assert!(!error.is_retryable());
    let other = error_for(400, None, br#"{"error":{"message":"bad","code":"invalid_value"}}"#, &Redactor::default());
    assert!(matches!(other, ProviderError::Rejected { status: 400, .. }), "{other:?}");
}
