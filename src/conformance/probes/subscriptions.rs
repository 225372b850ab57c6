//! `subscriptions/listen`: S-1..S-4, S-6 (S-5, and S-3 when no change notification arrives, need
//! a fixture that changes a list, which a read-only evaluation cannot cause).

use std::time::Duration;

use serde_json::{Value, json};

use super::modern;
use crate::conformance::context::Context;
use crate::conformance::finding::Finding;
use crate::mcp::exchange::{Exchange, Failure, Outgoing};
use crate::mcp::jsonrpc::{self, METHOD_NOT_FOUND};

/// How long we listen before closing the stream ourselves.
const LISTEN_FOR: Duration = Duration::from_millis(1500);
/// How long we keep listening after the acknowledgement (a server that ends the subscription
/// gracefully does it within this window; most keep it open).
const SETTLE: Duration = Duration::from_millis(120);

/// The reason of the rows only a fixture that changes a list could exercise.
const FIXTURE: &str = "needs a fixture that changes a list while we listen; a read-only evaluation cannot cause one";

/// S-1..S-6.
pub(crate) async fn run(ctx: &Context) -> Vec<Finding> {
    let mut findings = vec![Finding::not_applicable("S-5", FIXTURE)];
    let advertised = ctx.capabilities.pointer("/tools/listChanged") == Some(&json!(true))
        || ctx.capabilities.pointer("/prompts/listChanged") == Some(&json!(true))
        || ctx.capabilities.pointer("/resources/listChanged") == Some(&json!(true))
        || ctx.capabilities.pointer("/resources/subscribe") == Some(&json!(true));
    let (exchange, id) = listen(ctx).await;
    if exchange.error().is_some() {
        findings.push(Finding::not_applicable("S-3", "no subscription was opened"));
    }
    if exchange.error_code() == Some(METHOD_NOT_FOUND) && !advertised {
        for id in ["S-1", "S-2", "S-4", "S-6"] {
            findings.push(Finding::not_applicable(
                id,
                "the server advertises no listChanged or subscribe and answers -32601",
            ));
        }
        return findings;
    }
    if exchange.error().is_some() {
        let message = format!("`subscriptions/listen` got {}", exchange.describe());
        findings.push(
            if advertised {
                Finding::broken("S-1", format!("{message}, although list changes are advertised"))
            } else {
                Finding::not_applicable("S-1", message)
            }
            .with(&exchange),
        );
        for id in ["S-2", "S-4", "S-6"] {
            findings.push(Finding::not_applicable(id, "no subscription was opened"));
        }
        return findings;
    }
    findings.push(acknowledgement(&exchange, &id).with(&exchange));
    let notifications: Vec<&Value> =
        exchange.messages.iter().filter(|message| jsonrpc::is_notification(message)).collect();
    findings.push(notifications_tagged(&exchange, &notifications, &id));
    findings.push(changes_requested(&exchange, &notifications));
    findings.push(no_request_scoped(&exchange, &notifications));
    findings.push(closure(&exchange, &id));
    findings
}

/// Sends `subscriptions/listen` (tool list changes only) and listens for [`LISTEN_FOR`]; on
/// stdio a stream left open is cancelled. The exchange and the listen request's id.
async fn listen(ctx: &Context) -> (Exchange, Value) {
    let mut probe = modern("subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    probe.timeout = Some(LISTEN_FOR);
    probe.settle_after_first = Some(SETTLE);
    let id = ctx.modern.fresh_id();
    let probe: Outgoing = probe.with_id(id.clone());
    let exchange = ctx.modern.send(probe).await;
    if !ctx.is_http() && exchange.response.is_none() {
        let cancel = jsonrpc::modern_request(
            "notifications/cancelled",
            json!({"requestId": id, "reason": "mcp-eval: done listening"}),
        );
        ctx.modern.send(Outgoing::notification(cancel)).await;
    }
    (exchange, id)
}

/// The `_meta` key of the subscription id, as a JSON pointer segment.
fn subscription_key() -> String {
    jsonrpc::META_SUBSCRIPTION_ID.replace('/', "~1")
}

/// True when a message is tagged with the subscription (the listen request's id).
fn tagged(message: &Value, id: &Value) -> bool {
    message.pointer(&format!("/params/_meta/{}", subscription_key())) == Some(id)
}

/// S-1: the first message on the stream is the acknowledgement, tagged, honouring a subset.
fn acknowledgement(exchange: &Exchange, id: &Value) -> Finding {
    let first = exchange.messages.first();
    let unreadable = matches!(&exchange.failure, Some(Failure::NotJsonRpc(_)))
        || matches!(&exchange.failure, Some(Failure::Closed(detail)) if detail.contains("unparsable SSE frame"));
    match first {
        // Nothing on the stream could be read: say so, rather than what the unread
        // acknowledgement lacked.
        None if unreadable => Finding::not_applicable(
            "S-1",
            format!("blocked: the listen stream could not be read ({}) (see M-11)", exchange.describe()),
        ),
        None => Finding::broken(
            "S-1",
            format!("no `notifications/subscriptions/acknowledged` arrived within {} ms", LISTEN_FOR.as_millis()),
        ),
        Some(message)
            if message.get("method").and_then(Value::as_str) != Some("notifications/subscriptions/acknowledged") =>
        {
            Finding::broken(
                "S-1",
                format!(
                    "the first message on the stream must be the acknowledgement; got `{}`",
                    message.get("method").and_then(Value::as_str).unwrap_or("?")
                ),
            )
        }
        Some(message) if !tagged(message, id) => Finding::broken(
            "S-1",
            format!(
                "the acknowledgement must carry `_meta[\"{}\"]` = the listen request id {id}",
                jsonrpc::META_SUBSCRIPTION_ID
            ),
        ),
        Some(message) => {
            let honoured = message.pointer("/params/notifications").and_then(Value::as_object);
            let subset = honoured.is_some_and(|honoured| honoured.keys().all(|key| key == "toolsListChanged"));
            if subset {
                Finding::kept(
                    "S-1",
                    "the acknowledgement came first, tagged with the listen id, honouring a subset of the request",
                )
            } else {
                Finding::broken(
                    "S-1",
                    "`params.notifications` of the acknowledgement must be a subset of what was requested",
                )
            }
        }
    }
}

/// S-2: every notification on the listen stream carries the subscription id.
fn notifications_tagged(exchange: &Exchange, notifications: &[&Value], id: &Value) -> Finding {
    let untagged = notifications.iter().filter(|message| !tagged(message, id)).count();
    if notifications.is_empty() {
        Finding::not_applicable("S-2", "the listen stream carried no notifications to check")
    } else if untagged == 0 {
        Finding::kept(
            "S-2",
            match notifications.len() {
                1 => "the 1 notification on the stream carries the subscription id".to_owned(),
                n => format!("all {n} notifications on the stream carry the subscription id"),
            },
        )
    } else {
        Finding::broken(
            "S-2",
            format!(
                "{untagged} of {} notifications on the listen stream lack the subscription id",
                notifications.len()
            ),
        )
        .with(exchange)
    }
}

/// S-3: we asked for tool list changes only; any other change notification on the stream was
/// not requested. Without any change notification this needs a fixture.
fn changes_requested(exchange: &Exchange, notifications: &[&Value]) -> Finding {
    let changes: Vec<&str> = notifications
        .iter()
        .filter_map(|message| message.get("method").and_then(Value::as_str))
        .filter(|method| method.ends_with("/list_changed") || *method == "notifications/resources/updated")
        .collect();
    let unrequested: Vec<&&str> =
        changes.iter().filter(|method| **method != "notifications/tools/list_changed").collect();
    if !unrequested.is_empty() {
        Finding::broken(
            "S-3",
            format!(
                "we subscribed to tool list changes only, yet the listen stream carried {}",
                unrequested.iter().map(|method| format!("`{method}`")).collect::<Vec<_>>().join(", ")
            ),
        )
        .with(exchange)
    } else if changes.is_empty() {
        Finding::not_applicable("S-3", FIXTURE)
    } else {
        Finding::kept("S-3", format!("{} change notification(s), all of the requested type", changes.len()))
    }
}

/// S-4: no request-scoped notifications (progress, log messages) on the listen stream.
fn no_request_scoped(exchange: &Exchange, notifications: &[&Value]) -> Finding {
    let scoped = notifications
        .iter()
        .filter(|message| {
            matches!(
                message.get("method").and_then(Value::as_str),
                Some("notifications/progress" | "notifications/message")
            )
        })
        .count();
    if scoped == 0 {
        Finding::kept("S-4", "no progress or log notifications on the listen stream")
    } else {
        Finding::broken(
            "S-4",
            format!("{scoped} request-scoped notifications (progress/message) arrived on the listen stream"),
        )
        .with(exchange)
    }
}

/// S-6: a server that ends the subscription first sends the closure result.
fn closure(exchange: &Exchange, id: &Value) -> Finding {
    let subscription_key = subscription_key();
    match &exchange.response {
        None if matches!(exchange.failure, Some(Failure::Closed(_))) => Finding::broken(
            "S-6",
            "the server ended the subscription stream without first sending `{resultType: \"complete\", _meta: {subscriptionId}}`",
        )
        .with(exchange),
        None => Finding::not_applicable("S-6", format!("the server kept the subscription open {} ms after the acknowledgement; we closed it", SETTLE.as_millis())),
        Some(response) => {
            let ok = response.pointer("/result/resultType").and_then(Value::as_str) == Some("complete") && response.pointer(&format!("/result/_meta/{subscription_key}")) == Some(id);
            if ok {
                Finding::kept("S-6", "the server ended the subscription with the closure result")
            } else {
                Finding::broken("S-6", "when the server ends a subscription it SHOULD first send `{resultType: \"complete\", _meta: {subscriptionId}}`").with(exchange)
            }
        }
    }
}
