//! Passive checks: rules about every message a server sends (M-6, M-7, M-8, M-10, M-11, D-3,
//! C-1..C-3, R-1..R-4, R-9, H-14..H-17, H-19, L-1), applied to each exchange as it happens.
//!
//! Only counts and a few bounded examples are kept per requirement, so memory stays flat however
//! many requests a run makes. Modern-only rules are applied only to exchanges whose request was
//! a 2026-07-28 request; replies to deliberately malformed probes (raw bodies) are skipped.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde_json::Value;

use super::finding::{Finding, Outcome};
use super::{problem, shapes};
use crate::mcp::exchange::{Body, Exchange, Failure, Outgoing};
use crate::mcp::jsonrpc;
use crate::report::model::Evidence;

/// How many examples of a violation are kept per requirement.
const MAX_EXAMPLES: usize = 3;

/// Methods whose `complete` results must carry caching hints (C-1).
pub(crate) const CACHEABLE: &[&str] =
    &["server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"];

/// Methods on which `input_required` may appear (R-2).
const INPUT_REQUIRED_ALLOWED: &[&str] = &["tools/call", "prompts/get", "resources/read"];

/// The probe whose exchange a passive rule quotes, in words, when it is not an ordinary request:
/// `from H-2's probe (no MCP-Protocol-Version header): ` for the probes of the header rows, else
/// the header edits it made, so that evidence never reads as the answer to a plain request
/// (empty for a request sent as a client sends it).
fn probe_of(outgoing: &Outgoing) -> String {
    use crate::mcp::exchange::HeaderEdit;
    let edits: Vec<String> = outgoing
        .header_edits
        .iter()
        .map(|edit| match edit {
            HeaderEdit::Remove(name) => format!("no {name} header"),
            HeaderEdit::Set(name, value) => format!("`{name}: {}`", crate::text::clip(value, 40)),
        })
        .collect();
    if edits.is_empty() && outgoing.http_method == "POST" {
        return String::new();
    }
    // The rows whose probe is this edit alone (probes/http.rs).
    let row = match outgoing.header_edits.as_slice() {
        [HeaderEdit::Remove(name)] if name.eq_ignore_ascii_case("mcp-protocol-version") => Some("H-2"),
        [HeaderEdit::Remove(name)] if name.eq_ignore_ascii_case("mcp-method") => Some("H-3"),
        [HeaderEdit::Set(name, _)] if name.eq_ignore_ascii_case("mcp-session-id") => Some("H-19"),
        [HeaderEdit::Set(name, _)] if name.eq_ignore_ascii_case("last-event-id") => Some("H-20"),
        [HeaderEdit::Set(name, _)] if name.eq_ignore_ascii_case("origin") => Some("H-21"),
        [] if outgoing.http_method != "POST" => Some("H-18"),
        _ => None,
    };
    let mut what = edits.join(", ");
    if outgoing.http_method != "POST" {
        what =
            if what.is_empty() { outgoing.http_method.to_owned() } else { format!("{}, {what}", outgoing.http_method) };
    }
    match row {
        Some(row) => format!("from {row}'s probe ({what}): "),
        None => format!("from a probe ({what}): "),
    }
}

#[derive(Debug, Default)]
struct Tally {
    observed: usize,
    violations: usize,
    examples: Vec<(String, Vec<Evidence>)>,
}

/// The unreadable answers of a run, by method.
#[derive(Debug, Default)]
struct Unreadable {
    by_method: BTreeMap<String, (usize, String, Vec<Evidence>)>,
    held_open: bool,
    not_sent: usize,
}

/// Collects passive observations during a run.
#[derive(Debug, Default)]
pub(crate) struct Passive {
    tallies: Mutex<BTreeMap<&'static str, Tally>>,
    /// The answers that could not be read as one JSON-RPC message (M-11): per method, how
    /// many, why (the first), and the evidence of the first; and how many requests were not
    /// sent because an earlier answer of theirs was held open.
    unreadable: Mutex<Unreadable>,
    /// The server is legacy: modern probes sent to it (the migration list) are not graded on
    /// the era-independent rules, which its legacy exchanges are graded on.
    legacy: bool,
}

impl Passive {
    /// A collector for a server of this era.
    pub(crate) fn new(legacy: bool) -> Self {
        Self { tallies: Mutex::default(), unreadable: Mutex::default(), legacy }
    }

    fn note(&self, id: &'static str, violation: Option<String>, exchange: &Exchange) {
        let mut tallies = crate::mcp::sync::lock(&self.tallies);
        let tally = tallies.entry(id).or_default();
        tally.observed += 1;
        if let Some(message) = violation {
            tally.violations += 1;
            if tally.examples.len() < MAX_EXAMPLES {
                tally.examples.push((message, super::finding::evidence_of(exchange)));
            }
        }
    }

    /// Applies every passive rule to one exchange. `modern` is true for exchanges of the client
    /// that speaks 2026-07-28 (for modern servers, every exchange).
    pub(crate) fn observe(&self, outgoing: &Outgoing, exchange: &Exchange, modern: bool) {
        let Body::Json(body) = &outgoing.body else { return };
        let Some(method) = body.get("method").and_then(Value::as_str) else { return };
        // Legacy-shaped requests sent to a modern server (e.g. the `initialize` probe) are not
        // graded on modern rules.
        let modern = modern && method != "initialize";
        if exchange.status.is_some() {
            self.http_rules(outgoing, exchange, method, modern);
        }
        // The authorization layer answered, not the JSON-RPC server: the A-rows grade it.
        if is_authorization_answer(exchange) {
            return;
        }
        if let Some(why) = exchange.unreadable_answer() {
            self.unreadable_answer(exchange, method, why, modern);
            return;
        }
        let Some(response) = &exchange.response else {
            self.unparsed_answer(outgoing, exchange, method, modern);
            return;
        };
        if !response.is_object() {
            return;
        }
        self.envelope_rules(outgoing, exchange, response, method, modern);
        if let Some(error) = response.get("error") {
            if modern {
                self.error_rules(exchange, error, method);
            }
            return;
        }
        let Some(result) = response.get("result") else { return };
        if !modern {
            return;
        }
        self.result_rules(body, exchange, result, method);
        self.notification_rules(body, exchange, method);
    }

    /// Transport-level rules (HTTP): H-14..H-17, H-19.
    fn http_rules(&self, outgoing: &Outgoing, exchange: &Exchange, method: &str, modern: bool) {
        if exchange.response.is_some() && !(self.legacy && modern) {
            let content_type = exchange.content_type().unwrap_or_default();
            let ok = content_type == "application/json" || content_type == "text/event-stream";
            self.note(
                "H-14",
                (!ok).then(|| format!("`{method}`: a JSON-RPC body came with Content-Type `{content_type}`")),
                exchange,
            );
        }
        if exchange.content_type().as_deref() == Some("text/event-stream") && !(self.legacy && modern) {
            let requests: Vec<&Value> =
                exchange.messages.iter().filter(|message| jsonrpc::is_request(message)).collect();
            self.note(
                "H-15",
                (!requests.is_empty())
                    .then(|| format!("`{method}`: the SSE stream carried a JSON-RPC request ({})", requests[0])),
                exchange,
            );
            if modern {
                if let Some(closed) = exchange.stream_closed_after_final {
                    self.note(
                        "H-16",
                        (!closed).then(|| format!("`{method}`: the SSE stream stayed open after the final response")),
                        exchange,
                    );
                }
                let buffering = exchange.header("x-accel-buffering").map(str::to_ascii_lowercase);
                self.note(
                    "H-17",
                    (buffering.as_deref() != Some("no"))
                        .then(|| format!("`{method}`: SSE response without `X-Accel-Buffering: no`")),
                    exchange,
                );
            }
        }
        if modern && exchange.header("mcp-session-id").is_some() {
            self.note(
                "H-19",
                Some(format!(
                    "{}`{method}`: the response minted an `Mcp-Session-Id` for a stateless request",
                    probe_of(outgoing)
                )),
                exchange,
            );
        }
    }

    /// An answer that came but cannot be read as one JSON-RPC message (whatever the probe) is
    /// one M-11 finding for the run, naming each method and what came; the checks that needed
    /// it are blocked, not failed. (Timeouts and refused connections are not counted: no
    /// answer came.)
    fn unreadable_answer(&self, exchange: &Exchange, method: &str, why: String, modern: bool) {
        if !(self.legacy && modern) {
            let mut unreadable = crate::mcp::sync::lock(&self.unreadable);
            if matches!(exchange.failure, Some(Failure::Skipped(_))) {
                unreadable.not_sent += 1;
            } else {
                unreadable.held_open |= exchange.sse_unread == Some(crate::mcp::exchange::SseUnread::Unterminated);
                let entry = unreadable
                    .by_method
                    .entry(method.to_owned())
                    .or_insert_with(|| (0, why, super::finding::evidence_of(exchange)));
                entry.0 += 1;
            }
        }
    }

    /// A body that is not JSON-RPC and not recognisably broken JSON-RPC either (an HTML page,
    /// plain text) is a broken envelope too, not an exchange the rules may skip: counting only
    /// what could be read would pass them on no evidence.
    fn unparsed_answer(&self, outgoing: &Outgoing, exchange: &Exchange, method: &str, modern: bool) {
        let unread = matches!(&exchange.failure, Some(Failure::NotJsonRpc(_)))
            || matches!(&exchange.failure, Some(Failure::Closed(detail)) if detail.contains("unparsable SSE frame"));
        let header_probe = modern && exchange.status.is_some() && !outgoing.header_edits.is_empty();
        let graded = !(header_probe || is_refusal(exchange) || (self.legacy && modern));
        if unread && graded {
            self.note(
                "M-11",
                Some(format!(
                    "`{method}`: the response could not be read as a JSON-RPC message ({})",
                    exchange.describe()
                )),
                exchange,
            );
        }
    }

    /// Envelope and id echo (both eras): M-6 for an error, M-11 for a result.
    fn envelope_rules(&self, outgoing: &Outgoing, exchange: &Exchange, response: &Value, method: &str, modern: bool) {
        // A 401/403 is an HTTP-level refusal (authorization, Origin): its body may be a JSON-RPC
        // error without an id (streamable-http §Security), so ids are not graded there.
        // A probe that breaks a header tests the header rule, not the id rule: the refusal may
        // come from a layer in front of JSON-RPC (vary one thing per probe).
        // Header edits only make a probe on modern HTTP requests: legacy requests drop the
        // modern headers as their normal shape, and stdio has no headers at all.
        let header_probe = modern && exchange.status.is_some() && !outgoing.header_edits.is_empty();
        let http_refusal = matches!(exchange.status, Some(401 | 403)) || header_probe;
        let skip_ids = self.legacy && modern;
        if let Some(sent_id) = exchange.id.as_ref().filter(|_| !http_refusal && !skip_ids) {
            let envelope = shapes::check_envelope(response);
            let id_ok = response.get("id") == Some(sent_id);
            let problem = if !envelope.is_empty() {
                Some(format!("`{method}`: {}", problem::join(&envelope, shapes::SHAPE_ID)))
            } else if !id_ok {
                Some(format!(
                    "`{method}`: sent id {sent_id}, the response carries {}",
                    response.get("id").map(Value::to_string).unwrap_or_else(|| "no id".into())
                ))
            } else {
                None
            };
            let id = if response.get("error").is_some() { "M-6" } else { "M-11" };
            self.note(id, problem, exchange);
        }
    }

    /// The rules of a modern error: M-8 (reserved codes) and M-10 (its shape).
    fn error_rules(&self, exchange: &Exchange, error: &Value, method: &str) {
        let code = error.get("code").and_then(Value::as_i64);
        let reserved = code.filter(|code| jsonrpc::RESERVED_CODES.contains(code) || (-32099..=-32023).contains(code));
        self.note(
            "M-8",
            reserved.map(|code| format!("`{method}`: the server emitted reserved/undefined code {code}")),
            exchange,
        );
        let problems = shapes::check_error(error);
        self.note(
            "M-10",
            (!problems.is_empty()).then(|| format!("`{method}` error: {}", problem::join(&problems, shapes::SHAPE_ID))),
            exchange,
        );
    }

    /// The rules of a modern result: M-7, R-1..R-4, R-9, D-3, C-1..C-3 and M-10 (its shape).
    fn result_rules(&self, body: &Value, exchange: &Exchange, result: &Value, method: &str) {
        let result_type = result.get("resultType");
        self.note(
            "M-7",
            result_type
                .is_none()
                .then(|| format!("`{method}`: the result has no `resultType` (a 2026-07-28 server MUST send it)")),
            exchange,
        );
        if let Some(result_type) = result_type {
            let known = matches!(result_type.as_str(), Some("complete" | "input_required"));
            self.note("R-1", (!known).then(|| format!("`{method}`: unknown resultType {result_type}")), exchange);
            if result_type.as_str() == Some("input_required") {
                self.note(
                    "R-2",
                    (!INPUT_REQUIRED_ALLOWED.contains(&method)).then(|| format!("`{method}` answered `input_required`, allowed only on tools/call, prompts/get, resources/read")),
                    exchange,
                );
                let has_hints = result.get("ttlMs").is_some() || result.get("cacheScope").is_some();
                self.note(
                    "R-9",
                    has_hints.then(|| format!("`{method}`: an `input_required` result carries caching hints")),
                    exchange,
                );
                let shape = shapes::check_result(method, result);
                self.note(
                    "R-3",
                    (!shape.is_empty()).then(|| format!("`{method}`: {}", problem::join(&shape, shapes::SHAPE_ID))),
                    exchange,
                );
                self.note(
                    "R-4",
                    undeclared_input_request(body, result).map(|kind| {
                        format!("`{method}`: the server asked for `{kind}`, which the request did not declare")
                    }),
                    exchange,
                );
            } else {
                self.note("R-2", None, exchange);
            }
        }
        let server_info = result.pointer(&format!("/_meta/{}", jsonrpc::META_SERVER_INFO.replace('/', "~1")));
        let info_ok = server_info.is_some_and(|info| {
            info.get("name").is_some_and(Value::is_string) && info.get("version").is_some_and(Value::is_string)
        });
        self.note(
            "D-3",
            (!info_ok)
                .then(|| format!("`{method}`: no `_meta[\"{}\"]` with name and version", jsonrpc::META_SERVER_INFO)),
            exchange,
        );
        let complete = result_type.and_then(Value::as_str).is_none_or(|value| value == "complete");
        if CACHEABLE.contains(&method) && complete {
            self.cache_rules(exchange, result, method);
        }
        let shape = shapes::own(shapes::check_answer(method, result, exchange.entries.as_ref()));
        self.note(
            "M-10",
            (!shape.is_empty()).then(|| format!("`{method}`: {}", problem::join(&shape, shapes::SHAPE_ID))),
            exchange,
        );
    }

    /// C-1..C-3: the caching hints of a `complete` result of a cacheable method.
    fn cache_rules(&self, exchange: &Exchange, result: &Value, method: &str) {
        let ttl = result.get("ttlMs");
        let scope = result.get("cacheScope");
        self.note(
            "C-1",
            (ttl.is_none() || scope.is_none()).then(|| {
                format!(
                    "`{method}`: missing {}",
                    [ttl.is_none().then_some("`ttlMs`"), scope.is_none().then_some("`cacheScope`")]
                        .into_iter()
                        .flatten()
                        .collect::<Vec<_>>()
                        .join(" and ")
                )
            }),
            exchange,
        );
        if let Some(ttl) = ttl {
            let ok = ttl.as_u64().is_some();
            self.note("C-2", (!ok).then(|| format!("`{method}`: ttlMs is {ttl}, not an integer >= 0")), exchange);
        }
        if let Some(scope) = scope {
            let ok = matches!(scope.as_str(), Some("public" | "private"));
            self.note(
                "C-3",
                (!ok).then(|| format!("`{method}`: cacheScope is {scope}, not \"public\" or \"private\"")),
                exchange,
            );
        }
    }

    /// Request-scoped notifications of this exchange: L-1 and M-10.
    fn notification_rules(&self, body: &Value, exchange: &Exchange, method: &str) {
        let log_level = body.pointer(&format!("/params/_meta/{}", jsonrpc::META_LOG_LEVEL.replace('/', "~1")));
        let logs = exchange
            .messages
            .iter()
            .filter(|message| message.get("method").and_then(Value::as_str) == Some("notifications/message"))
            .count();
        if log_level.is_none() {
            self.note(
                "L-1",
                (logs > 0).then(|| format!("`{method}`: {logs} `notifications/message` without a requested logLevel")),
                exchange,
            );
        }
        for message in &exchange.messages {
            if jsonrpc::is_notification(message) {
                let problems = shapes::check_notification(message);
                if !problems.is_empty() {
                    self.note(
                        "M-10",
                        Some(format!("`{method}` stream: {}", problem::join(&problems, shapes::SHAPE_ID))),
                        exchange,
                    );
                }
            }
        }
    }

    /// Findings for every requirement observed, with examples of violations.
    pub(crate) fn findings(&self) -> Vec<Finding> {
        let mut findings = self.unreadable_findings();
        let tallies = crate::mcp::sync::lock(&self.tallies);
        findings.extend(tallies.iter().map(|(id, tally)| {
            if tally.violations == 0 {
                return Finding::kept(
                    id,
                    match tally.observed {
                        1 => "kept in the 1 response observed".to_owned(),
                        n => format!("kept in all {n} responses observed"),
                    },
                );
            }
            let mut finding = Finding::new(
                id,
                Outcome::Broken,
                format!(
                    "{} of {} responses observed break this rule; first: {}",
                    tally.violations,
                    tally.observed,
                    tally.examples.first().map(|(message, _)| message.as_str()).unwrap_or("")
                ),
            );
            for (message, evidence) in tally.examples.iter().take(2) {
                finding.evidence.push(Evidence { label: "finding".into(), text: message.clone() });
                finding.evidence.extend(evidence.iter().cloned());
            }
            finding
        }));
        findings
    }

    /// The one M-11 finding of the answers that could not be read (none when all could),
    /// and H-16's warning when such a stream stayed open.
    fn unreadable_findings(&self) -> Vec<Finding> {
        let unreadable = crate::mcp::sync::lock(&self.unreadable);
        if unreadable.by_method.is_empty() {
            return Vec::new();
        }
        let answers: usize = unreadable.by_method.values().map(|(count, ..)| count).sum();
        let mut whys: Vec<(Vec<String>, &str)> = Vec::new();
        for (method, (count, why, _)) in &unreadable.by_method {
            let named = format!("`{method}` ({})", super::finding::count(*count, "answer", "answers"));
            match whys.iter_mut().find(|(_, known)| *known == why.as_str()) {
                Some((methods, _)) => methods.push(named),
                None => whys.push((vec![named], why)),
            }
        }
        let reasons: Vec<String> = whys.iter().map(|(methods, why)| format!("{}: {why}", methods.join(", "))).collect();
        let not_sent = match unreadable.not_sent {
            0 => String::new(),
            n => format!(
                "; {} not sent once an earlier answer of its method was held open for the whole timeout (their checks are blocked)",
                super::finding::count(n, "later request was", "later requests were")
            ),
        };
        let mut m11 = Finding::broken(
            "M-11",
            format!(
                "{} cannot be read as one JSON-RPC message: {}{not_sent}",
                super::finding::count(answers, "answer", "answers"),
                reasons.join("; ")
            ),
        );
        for (_, _, evidence) in unreadable.by_method.values().take(2) {
            m11.evidence.extend(evidence.iter().cloned());
        }
        let mut findings = vec![m11];
        if unreadable.held_open {
            findings.push(Finding::ambiguous("H-16", "the SSE stream stayed open after the (unterminated) response"));
        }
        findings
    }
}

/// An HTTP-level refusal (authorization, Origin, method not allowed): its body need not be
/// JSON-RPC.
/// An answer of the authorization layer in front of the server (RFC 6750 §3): a 401 or 403
/// with a `Bearer` challenge or an OAuth error body (`error` a string, as the official Python
/// SDK's bearer middleware sends). It is not a JSON-RPC message, so the message rules (M-6,
/// M-8, M-10, M-11) do not grade it; the authorization rows (A-*) do.
pub(crate) fn is_authorization_answer(exchange: &Exchange) -> bool {
    let challenge = exchange.header("www-authenticate").is_some_and(|challenge| {
        challenge.trim_start().get(..6).is_some_and(|scheme| scheme.eq_ignore_ascii_case("bearer"))
    });
    let oauth_body = exchange.response.as_ref().and_then(|body| body.get("error")).is_some_and(Value::is_string);
    matches!(exchange.status, Some(401 | 403)) && (challenge || oauth_body)
}

fn is_refusal(exchange: &Exchange) -> bool {
    matches!(exchange.status, Some(401 | 403 | 404 | 405 | 406 | 413 | 415 | 421 | 500..=599))
}

/// The first input-request kind in `result` that the request's clientCapabilities did not
/// declare (R-4).
fn undeclared_input_request(request: &Value, result: &Value) -> Option<String> {
    let capabilities =
        request.pointer(&format!("/params/_meta/{}", jsonrpc::META_CLIENT_CAPABILITIES.replace('/', "~1")))?;
    let requests = result.get("inputRequests")?.as_object()?;
    for input_request in requests.values() {
        let kind = input_request.get("method").and_then(Value::as_str).unwrap_or("");
        let declared = match kind {
            "elicitation/create" => {
                let mode = input_request.pointer("/params/mode").and_then(Value::as_str).unwrap_or("form");
                match capabilities.get("elicitation") {
                    None => false,
                    Some(elicitation) => {
                        let empty = elicitation.as_object().is_some_and(|object| object.is_empty());
                        if mode == "url" {
                            elicitation.get("url").is_some()
                        } else {
                            empty || elicitation.get("form").is_some()
                        }
                    }
                }
            }
            "sampling/createMessage" => capabilities.get("sampling").is_some(),
            "roots/list" => capabilities.get("roots").is_some(),
            _ => true,
        };
        if !declared {
            return Some(kind.to_owned());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn server_info() -> Value {
        json!({"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}})
    }

    fn request(method: &str) -> Outgoing {
        Outgoing::request(jsonrpc::modern_request(method, json!({})))
    }

    fn http_exchange(id: i64, response: Value) -> Exchange {
        Exchange {
            id: Some(json!(id)),
            status: Some(200),
            headers: vec![("content-type".into(), "application/json".into())],
            response: Some(response),
            ..Exchange::default()
        }
    }

    fn finding<'a>(findings: &'a [Finding], id: &str) -> &'a Finding {
        findings.iter().find(|finding| finding.id == id).unwrap_or_else(|| panic!("no {id} in {findings:?}"))
    }

    #[test]
    fn a_session_id_minted_for_another_rows_probe_names_that_probe() {
        // H-2's probe is sent without MCP-Protocol-Version; quoting its answer as if it were a
        // plain `server/discover` contradicted the header's "discover answered 200".
        let passive = Passive::new(false);
        let mut exchange = http_exchange(
            1,
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "Missing session ID"}}),
        );
        exchange.status = Some(400);
        exchange.headers.push(("mcp-session-id".into(), "abc".into()));
        passive.observe(&request("server/discover").remove("MCP-Protocol-Version"), &exchange, true);
        let findings = passive.findings();
        let h19 = finding(&findings, "H-19");
        assert!(
            h19.message
                .contains("from H-2's probe (no MCP-Protocol-Version header): `server/discover`: the response minted"),
            "{}",
            h19.message
        );
        assert_eq!(probe_of(&request("tools/list")), "", "an ordinary request names no probe");
    }

    #[test]
    fn a_well_formed_response_keeps_every_rule_it_was_observed_on() {
        let passive = Passive::new(false);
        let result =
            json!({"resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "public", "_meta": server_info()});
        passive.observe(
            &request("tools/list"),
            &http_exchange(1, json!({"jsonrpc": "2.0", "id": 1, "result": result})),
            true,
        );
        let findings = passive.findings();
        assert!(!findings.is_empty());
        for finding in &findings {
            assert_eq!(finding.outcome, Outcome::Kept, "{finding:?}");
            assert!(finding.message.contains("kept in the 1 response observed"), "{finding:?}");
        }
    }

    #[test]
    fn violations_are_counted_with_an_example_and_evidence() {
        let passive = Passive::new(false);
        let good =
            json!({"resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "public", "_meta": server_info()});
        passive.observe(
            &request("tools/list"),
            &http_exchange(1, json!({"jsonrpc": "2.0", "id": 1, "result": good})),
            true,
        );
        let no_result_type = json!({"tools": [], "ttlMs": 0, "cacheScope": "public", "_meta": server_info()});
        passive.observe(
            &request("tools/list"),
            &http_exchange(2, json!({"jsonrpc": "2.0", "id": 2, "result": no_result_type})),
            true,
        );
        let findings = passive.findings();
        let m7 = finding(&findings, "M-7");
        assert_eq!(m7.outcome, Outcome::Broken);
        assert!(m7.message.starts_with("1 of 2 responses observed break this rule"), "{}", m7.message);
        assert!(m7.evidence.iter().any(|evidence| evidence.label == "finding"));
        // M-10 leaves the missing resultType to M-7: one broken thing is one finding.
        assert_eq!(finding(&findings, "M-10").outcome, Outcome::Kept);
    }

    #[test]
    fn an_oauth_refusal_is_graded_by_the_authorization_rows_not_as_json_rpc() {
        // The official Python SDK's bearer middleware answers a missing or invalid token with an
        // RFC 6750 error body and a Bearer challenge: not a JSON-RPC message, and not M-10's.
        let passive = Passive::new(false);
        let mut refusal =
            http_exchange(1, json!({"error": "invalid_token", "error_description": "Authentication required"}));
        refusal.status = Some(401);
        refusal.headers.push((
            "www-authenticate".into(),
            r#"Bearer error="invalid_token", resource_metadata="http://h/.well-known/oauth-protected-resource/mcp""#
                .into(),
        ));
        passive.observe(&request("server/discover").remove("Authorization"), &refusal, true);
        let mut forbidden = http_exchange(2, json!({"error": "insufficient_scope", "error_description": "no"}));
        forbidden.status = Some(403);
        passive.observe(&request("server/discover"), &forbidden, true);
        let findings = passive.findings();
        for id in ["M-6", "M-8", "M-10", "M-11"] {
            if let Some(found) = findings.iter().find(|finding| finding.id == id) {
                assert_ne!(found.outcome, Outcome::Broken, "{id}: {}", found.message);
            }
        }
    }

    #[test]
    fn a_response_that_came_but_could_not_be_read_breaks_m11_instead_of_being_skipped() {
        let passive = Passive::new(false);
        let exchange = Exchange {
            id: Some(json!(1)),
            status: Some(200),
            headers: vec![("content-type".into(), "application/json".into())],
            failure: Some(Failure::NotJsonRpc("the body is \"{'jsonrpc': '2.0'}\"".into())),
            ..Exchange::default()
        };
        passive.observe(&request("tools/list"), &exchange, true);
        let findings = passive.findings();
        let m11 = finding(&findings, "M-11");
        assert_eq!(m11.outcome, Outcome::Broken);
        assert!(m11.message.contains("could not be read"), "{}", m11.message);
    }

    #[test]
    fn json_bodies_with_another_content_type_break_h14() {
        let passive = Passive::new(false);
        let mut exchange = http_exchange(1, json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}}));
        exchange.headers = vec![("content-type".into(), "text/plain".into())];
        passive.observe(&request("ping/none"), &exchange, true);
        let findings = passive.findings();
        assert_eq!(finding(&findings, "H-14").outcome, Outcome::Broken);
    }
}
