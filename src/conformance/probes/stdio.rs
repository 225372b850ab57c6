//! stdio rules: X-1..X-7. X-1/X-2 read what the reader saw on stdout during the whole run, so
//! [`framing`] runs last; the others probe the running process or a second one.

use std::time::Duration;

use serde_json::{Value, json};

use crate::conformance::OpenError;
use crate::conformance::context::{Context, Purpose, SafeTool};
use crate::conformance::finding::Finding;
use crate::conformance::shapes;
use crate::mcp::client::{Client, Connection};
use crate::mcp::era::Era;
use crate::mcp::exchange::{Exchange, Outgoing};
use crate::mcp::jsonrpc::{self, METHOD_NOT_FOUND};
use crate::mcp::stdio::{Framing, StdoutViolations};

/// How long a server may take to exit after stdin closes (X-4).
const EXIT_GRACE: Duration = Duration::from_secs(5);

/// Messages that arrive within this time after a cancellation were already on their way (X-3).
const CANCEL_GRACE: Duration = Duration::from_millis(30);
/// How long we watch for further messages after a cancellation (X-3).
const CANCEL_WATCH: Duration = Duration::from_millis(600);
/// How many read-only tools are tried for one that sends notifications before its result (X-3).
const CANCEL_CANDIDATES: usize = 3;

const IDS: [&str; 7] = ["X-1", "X-2", "X-3", "X-4", "X-5", "X-6", "X-7"];

/// X-3..X-7.
pub(crate) async fn run(ctx: &Context) -> Vec<Finding> {
    if ctx.is_http() {
        return IDS[2..]
            .iter()
            .map(|id| Finding::not_applicable(id, "a stdio rule; the server under test speaks Streamable HTTP"))
            .collect();
    }
    let mut findings = vec![cancellation(ctx).await];
    // X-6: an error, then at once a normal request, on the same process.
    let (error, after) = tokio::join!(
        ctx.probe(&ctx.client, "X-6", "an unknown method (`foo/bar`)", ctx.request("foo/bar", json!({}))),
        ctx.client.send(ctx.request(if ctx.era == Era::Modern { "server/discover" } else { "tools/list" }, json!({})))
    );
    findings.push(if after.result().is_some() && error.error().is_some() {
        Finding::kept("X-6", format!("after `foo/bar` got {}, the next request was served", error.describe()))
    } else {
        // The error's exchange first: an answer in another framing makes this X-1's, not X-6's.
        Finding::broken("X-6", format!("`foo/bar` got {}; the next request got {}", error.describe(), after.describe()))
            .with(&error)
            .with(&after)
    });
    // X-7: cancellation of a request that was never sent.
    let before = unattributed(ctx);
    let cancel = match ctx.era {
        Era::Modern => jsonrpc::modern_request(
            "notifications/cancelled",
            json!({"requestId": "mcp-eval-never-sent", "reason": "probe"}),
        ),
        Era::Legacy => jsonrpc::legacy_request(
            "notifications/cancelled",
            json!({"requestId": "mcp-eval-never-sent", "reason": "probe"}),
        ),
    };
    ctx.client.send(Outgoing::notification(cancel)).await;
    let next = ctx
        .client
        .send(ctx.request(if ctx.era == Era::Modern { "server/discover" } else { "tools/list" }, json!({})))
        .await;
    let replies = unattributed(ctx).saturating_sub(before);
    findings.push(if replies > 0 {
        Finding::broken(
            "X-7",
            "the server replied to a `notifications/cancelled` (receivers MUST NOT reply to notifications)",
        )
    } else if next.result().is_none() {
        Finding::broken(
            "X-7",
            format!("after a cancellation of an unknown request, the next request got {}", next.describe()),
        )
        .with(&next)
    } else {
        Finding::kept("X-7", "a cancellation of an unknown request was ignored silently")
    });
    // X-5: removed methods, sent as 2026-07-28 requests (`params: {_meta}`). `ping` on the
    // running process; `initialize` on a second process that first opened as a modern client
    // does (discover first, B-1), so that a dual-era server cannot take it for a handshake on a
    // fresh connection, and the running one stays untouched.
    if ctx.era == Era::Modern {
        let ping = ctx.probe(&ctx.client, "X-5", "the removed method `ping`", super::modern("ping", json!({}))).await;
        let second = ctx.seconds.get(Purpose::Shared);
        let initialize = match &second {
            Ok(client) => {
                client.send(super::modern("server/discover", json!({}))).await;
                // As the row says: `initialize` as a 2026-07-28 request, `params: {_meta}` only.
                Some(client.send(super::modern("initialize", json!({}))).await)
            }
            Err(_) => None,
        };
        if let Ok(client) = &second {
            ctx.seconds.done(Purpose::Shared, client).await;
        }
        findings.push(removed_methods(&ping, initialize.as_ref()));
        // The reply to `initialize` is a message the server sent: M-10 applies to it too (the
        // passive checks do not see the second process).
        if let Some(problems) = initialize.as_ref().and_then(|exchange| exchange.error()).map(shapes::check_error) {
            if !problems.is_empty() {
                findings.push(
                    Finding::broken(
                        "M-10",
                        initialize_m10(
                            &crate::conformance::problem::join(&problems, "M-10"),
                            initialize.as_ref().and_then(|exchange| exchange.error()),
                        ),
                    )
                    .with(initialize.as_ref().expect("an initialize exchange")),
                );
            }
        }
    } else {
        findings.push(Finding::not_applicable("X-5", "graded for 2026-07-28 servers"));
    }
    // X-4 closes the stdin of the shared second process, unless it has already exited (then
    // its exit would prove nothing): a process of its own then.
    let shared = ctx.seconds.get(Purpose::Shared).ok().filter(|client| match client.connection() {
        Connection::Stdio(stdio) => stdio.exit_reason().is_none(),
        Connection::Http(_) => false,
    });
    let process = match shared {
        Some(client) => Ok(client),
        None => ctx
            .seconds
            .open("X-4: a process of its own, because the shared second process had already exited")
            .map(std::sync::Arc::new),
    };
    findings.push(exits_on_eof(process).await);
    findings
}

/// X-4: the stdin of a running second process is closed; the server should exit. Needs no
/// answer from the server, so it is graded even when the server's stdout framing blocks every
/// other probe. `process` is the process, or why none could be started.
pub(crate) async fn exits_on_eof(process: Result<std::sync::Arc<Client>, OpenError>) -> Finding {
    match process {
        Err(_) => Finding::not_applicable("X-4", "could not start a second process"),
        Ok(client) => {
            let exited = match client.connection() {
                Connection::Stdio(stdio) => stdio.close_stdin_and_wait(EXIT_GRACE).await,
                Connection::Http(_) => false,
            };
            client.shutdown().await;
            if exited {
                Finding::kept("X-4", "the server exited when stdin closed")
            } else {
                Finding::broken(
                    "X-4",
                    format!(
                        "the server was still running {} s after stdin closed (servers SHOULD exit on EOF)",
                        EXIT_GRACE.as_secs()
                    ),
                )
            }
        }
    }
}

/// X-5 from the `ping` on the running process and the `initialize` on a modern second one.
fn removed_methods(ping: &Exchange, initialize: Option<&Exchange>) -> Finding {
    if ping.error_code() != Some(METHOD_NOT_FOUND) {
        return Finding::broken(
            "X-5",
            format!("`ping` was removed in 2026-07-28 and must get -32601; got {}", ping.describe()),
        )
        .with(ping);
    }
    let Some(exchange) = initialize else {
        return Finding::kept("X-5", "`ping` got -32601 (`initialize` not probed: no second process)");
    };
    if exchange.result().is_some() {
        return Finding::kept(
            "X-5",
            "`ping` got -32601; `initialize` was answered (dual-era server: recorded, not a failure)",
        );
    }
    if exchange.error_code() == Some(METHOD_NOT_FOUND) {
        return Finding::kept("X-5", "`ping` and `initialize` got -32601");
    }
    // A server that will not run the handshake on a modern connection SHOULD name its versions
    // in the error (spec-notes §17.4); -32022 with `data.supported` does exactly that. Its exact
    // shape is M-10's business.
    let names_versions = exchange.error_code() == Some(jsonrpc::UNSUPPORTED_PROTOCOL_VERSION)
        && exchange
            .error()
            .and_then(|error| error.pointer("/data/supported"))
            .and_then(Value::as_array)
            .is_some_and(|supported| !supported.is_empty());
    if names_versions {
        return Finding::kept(
            "X-5",
            format!(
                "`ping` got -32601; `initialize` on a modern connection got {}, which names the supported versions (a dual-era server refusing the handshake there, spec-notes §17.4)",
                exchange.describe()
            ),
        );
    }
    Finding::broken(
        "X-5",
        format!(
            "`initialize` with modern `_meta` must get -32601 (or be served by a dual-era server); got {}",
            exchange.describe()
        ),
    )
    .with(exchange)
}

/// X-3: a tool call with a progress token is cancelled once its first notification arrives;
/// after a short grace (messages already in the pipe), at most one more message may come (the
/// response, per the race rules).
async fn cancellation(ctx: &Context) -> Finding {
    let Connection::Stdio(stdio) = ctx.client.connection() else {
        return Finding::not_applicable("X-3", "a stdio rule; the server under test speaks Streamable HTTP");
    };
    if ctx.era != Era::Modern {
        return Finding::not_applicable("X-3", "graded for 2026-07-28 servers");
    }
    let mut tools: Vec<&SafeTool> = ctx.safe_tools.iter().collect();
    tools.sort_by_key(|tool| !tool.name.to_ascii_lowercase().contains("progress"));
    for tool in tools.into_iter().take(CANCEL_CANDIDATES) {
        let id = ctx.client.fresh_id();
        let params = json!({"name": tool.name, "arguments": tool.arguments,
                            "_meta": {"progressToken": format!("mcp-eval-cancel-{}", tool.name)}});
        let mut request = super::modern("tools/call", params).with_id(id.clone());
        request.timeout = Some(ctx.client_timeout().min(Duration::from_secs(5)));
        let call = ctx.client.send(request);
        tokio::pin!(call);
        let first_message = async {
            while stdio.messages_so_far(&id).unwrap_or(0) == 0 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        };
        let finished_early = tokio::select! {
            exchange = &mut call => Some(exchange),
            () = first_message => None,
        };
        if finished_early.is_some() {
            // No notification before the result: nothing to cancel mid-way; try another tool.
            continue;
        }
        let cancel = jsonrpc::modern_request(
            "notifications/cancelled",
            json!({"requestId": id, "reason": "mcp-eval: cancellation probe"}),
        );
        ctx.client.send(Outgoing::notification(cancel)).await;
        tokio::time::sleep(CANCEL_GRACE).await;
        let at_grace = stdio.messages_so_far(&id);
        let (late, exchange) = match tokio::time::timeout(CANCEL_WATCH, &mut call).await {
            Ok(exchange) => {
                let late = at_grace.map_or(0, |seen| exchange.messages.len().saturating_sub(seen) + 1);
                (late, Some(exchange))
            }
            Err(_) => {
                let late = stdio.messages_so_far(&id).unwrap_or(0).saturating_sub(at_grace.unwrap_or(0));
                stdio.abandon(&id);
                (late, None)
            }
        };
        let grace = CANCEL_GRACE.as_millis();
        return if late > 1 {
            let finding = Finding::broken(
                "X-3",
                format!(
                    "`{}` was cancelled after its first notification, yet {late} more messages for it arrived more than {grace} ms later (at most the response may still come)",
                    tool.name
                ),
            );
            match &exchange {
                Some(exchange) => finding.with(exchange),
                None => finding,
            }
        } else {
            Finding::kept(
                "X-3",
                format!(
                    "`{}` was cancelled after its first notification; {late} message(s) for it arrived after a {grace} ms grace",
                    tool.name
                ),
            )
        };
    }
    Finding::not_applicable(
        "X-3",
        "no read-only tool sent a notification before its result (progress token given): nothing could be cancelled mid-way",
    )
}

fn unattributed(ctx: &Context) -> usize {
    match ctx.client.connection() {
        Connection::Stdio(stdio) => stdio.violations().unattributed.len(),
        Connection::Http(_) => 0,
    }
}

/// What X-1 says a server should do about its stdout framing.
const NDJSON_FIX: &str =
    "write one JSON-RPC message per line, newline-terminated, nothing else on stdout (logs go to stderr)";

/// X-1 from everything the reader saw on stdout (spec-notes §7): kept when every line was one
/// JSON-RPC message (`\r\n` line ends accepted); otherwise broken, naming each framing found
/// ([`Framing`]) and the stray lines (logs), with the first offending lines as evidence.
fn x1(violations: &StdoutViolations) -> Finding {
    if !violations.not_ndjson() {
        let crlf = match violations.crlf_lines {
            0 => String::new(),
            lines => {
                format!(" ({lines} ended with \\r\\n, which is accepted: the \\r is whitespace after the JSON text)")
            }
        };
        return Finding::kept(
            "X-1",
            match violations.message_count {
                1 => format!("the 1 stdout line was a JSON-RPC message{crlf}"),
                n => format!("all {n} stdout lines were JSON-RPC messages{crlf}"),
            },
        );
    }
    let mut found: Vec<String> = violations
        .framings
        .iter()
        .map(|(framing, count)| match framing {
            Framing::ContentLength => format!(
                "it frames messages with `Content-Length` headers as LSP does (JSON-RPC over stdio with headers: `Content-Length: N`, a blank line, then the message with no newline after it; {count} headers seen)"
            ),
            Framing::Pretty => format!(
                "it pretty-prints messages over several lines ({count} seen; a message must not contain a newline)"
            ),
            Framing::Concatenated => format!(
                "messages are not separated by newlines ({count} seen written back to back, or with no newline after them)"
            ),
            Framing::Bom => format!(
                "a UTF-8 byte order mark (U+FEFF) precedes {count} message(s) (RFC 8259 §8.1: JSON texts MUST NOT start with one; line readers that parse each line as JSON reject it)"
            ),
        })
        .collect();
    let framed = !found.is_empty();
    if violations.stray > 0 || (!framed && violations.non_json_count > 0) {
        let lines = if framed { violations.stray } else { violations.non_json_count };
        let were = if lines == 1 { "was" } else { "were" };
        found.push(format!(
            "{} {were} not JSON-RPC messages (stdout carries only MCP messages; log to stderr)",
            crate::conformance::finding::count(lines, "stdout line", "stdout lines")
        ));
    }
    if violations.partial.is_some() && found.is_empty() {
        found.push(format!("stdout carries output that is not JSON and has no newline after it; {NDJSON_FIX}"));
    }
    let message = if framed {
        format!("stdout is not newline-delimited JSON: {}; {NDJSON_FIX}", found.join("; "))
    } else {
        found.join("; ")
    };
    let examples: Vec<String> = violations.non_json.iter().chain(&violations.partial).cloned().collect();
    Finding::broken("X-1", message).with_text("stdout", examples.join("\n"))
}

/// X-1, X-2: everything the server wrote on stdout during the run.
pub(crate) fn framing(ctx: &Context) -> Vec<Finding> {
    framing_of(&ctx.client, ctx.era)
}

/// [`framing`] for a client and era (a run whose framing blocks the probes has no [`Context`]).
pub(crate) fn framing_of(client: &Client, era: Era) -> Vec<Finding> {
    let Connection::Stdio(stdio) = client.connection() else {
        return vec![
            Finding::not_applicable("X-1", "a stdio rule; the server under test speaks Streamable HTTP"),
            Finding::not_applicable("X-2", "a stdio rule; the server under test speaks Streamable HTTP"),
        ];
    };
    let violations = stdio.violations();
    let x1 = x1(&violations);
    let x2 = if violations.requests.is_empty() {
        Finding::kept("X-2", "the server sent no JSON-RPC requests")
    } else {
        Finding::broken("X-2", "the server wrote JSON-RPC requests on stdout (servers MUST NOT send requests)")
            .with_text("stdout", violations.requests.iter().map(Value::to_string).collect::<Vec<_>>().join("\n"))
    };
    let mut findings = vec![x1, x2];
    // Responses no request could be matched with, because their id is not one we sent: the
    // requests they answer timed out, so the passive id checks never saw them.
    if violations.unechoed_count > 0 && violations.timed_out > 0 {
        let examples = |error: bool| -> Vec<String> {
            violations
                .unechoed
                .iter()
                .filter(|response| response.get("error").is_some() == error)
                .map(Value::to_string)
                .collect()
        };
        for (id, error, kind) in [("M-6", true, "error"), ("M-11", false, "result")] {
            let examples = examples(error);
            if !examples.is_empty() {
                findings.push(
                    Finding::broken(
                        id,
                        format!(
                            "{} responses carried an id we never sent (null, another JSON type or altered) while {} requests got no response: the {kind} responses do not echo the request id",
                            violations.unechoed_count, violations.timed_out
                        ),
                    )
                    .with_text("stdout", examples.join("\n")),
                );
            }
        }
    }
    if era == Era::Modern {
        if violations.unrequested_log_count > 0 {
            findings.push(
                Finding::broken(
                    "L-1",
                    format!(
                        "{} `notifications/message` arrived while no request in flight had asked for logs (`_meta` logLevel)",
                        violations.unrequested_log_count
                    ),
                )
                .with_text(
                    "stdout",
                    violations.unrequested_logs.iter().map(Value::to_string).collect::<Vec<_>>().join("\n"),
                ),
            );
        }
        if violations.untagged_subscription_count > 0 {
            findings.push(
                Finding::broken(
                    "S-2",
                    format!(
                        "{} subscription notifications on stdout lack `_meta[\"{}\"]` (stdio clients demultiplex listen streams by it)",
                        violations.untagged_subscription_count,
                        jsonrpc::META_SUBSCRIPTION_ID
                    ),
                )
                .with_text(
                    "stdout",
                    violations.untagged_subscription.iter().map(Value::to_string).collect::<Vec<_>>().join("\n"),
                ),
            );
        }
    }
    findings
}

/// M-10's text for an invalid error that answered X-5's `initialize`: what is wrong and the fix
/// first (the GitHub annotation shows the start), then what X-5 sent. What X-5 accepts (-32601,
/// or -32022 naming the supported versions from a dual-era server) is said as X-5 grades it, so
/// that the two rows never contradict each other; `problems` are the schema problems.
fn initialize_m10(problems: &str, error: Option<&Value>) -> String {
    format!(
        "the error that answered X-5's `initialize` is not a valid JSON-RPC error: {problems}. Fix: {}. What was sent: \
         the X-5 probe, on stdio only, to a second server process after its `server/discover`: `initialize` as a \
         2026-07-28 request, whose `params` hold only `_meta` (protocol version 2026-07-28, client info, capabilities) \
         and no `params.protocolVersion`; a 2025-11-25 `initialize` with `params.protocolVersion` is a handshake such \
         servers answer correctly, and it is not what was sent. A 2026-07-28 server answers the removed `initialize` \
         with -32601, or, as a dual-era server refusing the handshake on a modern connection, with -32022 and its \
         versions{}",
        initialize_fix(error),
        initialize_detail(error)
    )
}

/// How to fix the error that answered X-5's `initialize`, by its code: a -32022 must carry the
/// versions, any other error the JSON-RPC shape.
fn initialize_fix(error: Option<&Value>) -> &'static str {
    match error_code(error) {
        Some(-32022) => {
            "answer -32601 (method not found) to an `initialize` sent as a 2026-07-28 request, or keep -32022 and include `data.requested` beside `data.supported`"
        }
        _ => "fix the server's error for unknown methods: an integer `code`, a string `message`, optional `data`",
    }
}

/// What the schema asks of a -32022, said after what X-5 sent; nothing for other codes.
fn initialize_detail(error: Option<&Value>) -> &'static str {
    match error_code(error) {
        Some(-32022) => {
            "; the server answered -32022 (unsupported protocol version), which the schema requires to carry `data.supported` (a list of the versions it speaks) and `data.requested` (the version the request asked for, a string: here the `_meta` one)"
        }
        _ => "",
    }
}

fn error_code(error: Option<&Value>) -> Option<i64> {
    error.and_then(|error| error.get("code")).and_then(Value::as_i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::finding::Outcome;

    #[test]
    fn the_fix_for_a_bad_initialize_error_follows_its_code() {
        let versions = initialize_fix(Some(&json!({"code": -32022, "message": "Unsupported protocol version"})));
        assert!(versions.contains("data.requested") && versions.contains("data.supported"), "{versions}");
        let other = initialize_fix(Some(&json!({"code": "x"})));
        assert!(other.contains("unknown methods"), "{other}");
    }

    #[test]
    fn m10_on_a_32022_initialize_answer_names_data_requested_and_accepts_what_x5_accepts() {
        let error =
            json!({"code": -32022, "message": "Unsupported protocol version", "data": {"supported": ["2026-07-28"]}});
        let text = initialize_m10("`error.data.requested`: missing", Some(&error));
        assert!(text.contains("data.requested") && text.contains("X-5 probe"), "{text}");
        // X-5 keeps a -32022 that names the versions: M-10 must not say -32601 is the only answer.
        assert!(!text.contains("must answer the removed `initialize` with -32601"), "{text}");
        assert!(text.contains("-32022 and its versions"), "{text}");
    }

    /// The Python SDK 2.3.0 answers a 2025-11-25 `initialize` correctly: M-10's text says what
    /// X-5 sent instead (a 2026-07-28 request, `_meta` only, no `params.protocolVersion`) and
    /// both ways out (-32601, or -32022 with `data.requested`).
    #[test]
    fn m10_on_x5_initialize_says_what_was_sent_and_both_fixes() {
        let error =
            json!({"code": -32022, "message": "Unsupported protocol version", "data": {"supported": ["2025-11-25"]}});
        let text = initialize_m10("`error.data.requested`: missing", Some(&error));
        for part in [
            "`params` hold only `_meta`",
            "no `params.protocolVersion`",
            "a 2025-11-25 `initialize` with `params.protocolVersion` is a handshake such servers answer correctly",
            "answer -32601 (method not found) to an `initialize` sent as a 2026-07-28 request",
            "or keep -32022 and include `data.requested`",
        ] {
            assert!(text.contains(part), "{part}: {text}");
        }
    }

    /// The GitHub annotation shows the start of the message (clipped at
    /// [`crate::action::workflow::MAX_ANNOTATION_CHARS`], and read at a glance): what is wrong and
    /// the fix come first, within 300 characters; what X-5 sent follows, for `report.json`.
    #[test]
    fn m10_on_x5_initialize_says_what_is_wrong_and_the_fix_first() {
        let versions =
            json!({"code": -32022, "message": "Unsupported protocol version", "data": {"supported": ["2025-11-25"]}});
        let other = json!({"code": "x", "message": 3});
        for (error, fix) in [
            (versions, "or keep -32022 and include `data.requested`"),
            (other, "an integer `code`, a string `message`, optional `data`"),
        ] {
            let text = initialize_m10("`error.data.requested`: missing", Some(&error));
            let end = text.find(fix).map(|at| at + fix.len()).unwrap_or(usize::MAX);
            assert!(end <= 300, "the fix ends at {end}: {text}");
            assert!(text.starts_with("the error that answered X-5's `initialize` is not a valid JSON-RPC error: `error.data.requested`: missing."), "{text}");
            let annotation = crate::text::clip(&text, crate::action::workflow::MAX_ANNOTATION_CHARS);
            assert!(annotation.contains(fix), "{annotation}");
        }
    }

    #[test]
    fn x1_accepts_crlf_line_ends_and_says_so() {
        let violations = StdoutViolations { message_count: 4, crlf_lines: 4, ..StdoutViolations::default() };
        let finding = x1(&violations);
        assert_eq!(finding.outcome, Outcome::Kept);
        assert!(finding.message.contains("4 ended with \\r\\n, which is accepted"), "{}", finding.message);
    }

    #[test]
    fn x1_keeps_its_message_for_log_lines() {
        let violations = StdoutViolations {
            non_json: vec!["server started".into()],
            non_json_count: 3,
            stray: 3,
            message_count: 9,
            ..StdoutViolations::default()
        };
        let finding = x1(&violations);
        assert_eq!(finding.outcome, Outcome::Broken);
        assert_eq!(
            finding.message,
            "3 stdout lines were not JSON-RPC messages (stdout carries only MCP messages; log to stderr)"
        );
        assert_eq!(finding.evidence[0].text, "server started");
    }

    #[test]
    fn x1_names_every_framing_found_and_the_fix() {
        let violations = StdoutViolations {
            non_json: vec!["Content-Length: 60\\r".into(), "starting".into()],
            non_json_count: 4,
            stray: 1,
            framings: [(Framing::ContentLength, 2), (Framing::Bom, 1)].into_iter().collect(),
            ..StdoutViolations::default()
        };
        let finding = x1(&violations);
        assert_eq!(finding.outcome, Outcome::Broken);
        let message = &finding.message;
        assert!(message.starts_with("stdout is not newline-delimited JSON: "), "{message}");
        for part in
            ["`Content-Length` headers as LSP does", "2 headers seen", "byte order mark", "1 stdout line was not"]
        {
            assert!(message.contains(part), "{part:?} missing: {message}");
        }
        assert!(message.ends_with(NDJSON_FIX), "{message}");
        assert_eq!(finding.evidence[0].text, "Content-Length: 60\\r\nstarting");
    }

    #[test]
    fn x1_fails_on_resting_output_without_a_newline() {
        let violations = StdoutViolations { partial: Some("Ready> ".into()), ..StdoutViolations::default() };
        let finding = x1(&violations);
        assert_eq!(finding.outcome, Outcome::Broken);
        assert!(finding.message.contains("no newline after it"), "{}", finding.message);
        assert_eq!(finding.evidence[0].text, "Ready> ");
    }
}
