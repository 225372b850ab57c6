//! The demo model: a scripted stand-in for a *good* model, written from a golden set. It serves
//! OpenAI Chat Completions (`POST /v1/chat/completions`) and Anthropic Messages (`POST
//! /v1/messages`) on loopback, and answers each request with the tool calls the golden set
//! expects: the case is found by the conversation's first user turn; for `expect_tool` it calls
//! that tool with arguments built from `expect_args`, for `expect_sequence` one step per turn, for
//! a negative case it answers in words; once the expected calls are made it answers in words.
//! `flaky` makes every Nth first turn of a case call a wrong tool, so a soft case shows a failing
//! run. For an `embedding` matcher it sends the expected text with `Note: ` in front (a
//! paraphrase that passes). It also answers as the rubric judge and the argument judge (`pass`),
//! and serves `POST /v1/embeddings` with a hashed bag-of-words vector of each text (64
//! dimensions: each lower-case word adds one to the dimension its FNV-1a hash picks), so texts
//! sharing words have a high cosine — deterministic, and no model.
//!
//! It is no model and claims to be none: the demo's cassettes are recorded from it
//! (`mcp-eval demo-model`, hidden), the layer-1 benchmark measures the harness against it, and
//! end-to-end tests run both wires through it. It never leaves 127.0.0.1. Like the real APIs, it
//! refuses a conversation that repeats a tool call id ([`duplicate_id_refusal`]).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;

use crate::golden::GoldenSet;

/// What the demo model does for one case.
#[derive(Debug, Default)]
struct CaseScript {
    /// The case's id.
    id: String,
    /// The calls to make, one model turn each: MCP tool name and arguments.
    steps: Vec<(String, Value)>,
    /// User turns the case's prompt has: the earlier ones get a short answer in words.
    user_turns: usize,
    /// Every Nth first turn calls a wrong tool.
    flaky_every: Option<usize>,
    /// Every Nth final answer quotes the last tool result instead of only saying it is done.
    quote_every: Option<usize>,
    /// First turns seen so far.
    seen: AtomicUsize,
    /// Final answers given so far.
    answered: AtomicUsize,
}

/// The demo model's script: the golden set's cases, by their first user turn.
#[derive(Debug, Default)]
pub(crate) struct DemoModel {
    cases: BTreeMap<String, CaseScript>,
    /// Wait this long before each answer (the benchmark's model latency).
    pub delay: Duration,
    /// When set, one request is served at a time (`--single-slot`, hidden: a model server
    /// with one slot, such as llama-server without `--parallel`): the others wait their turn,
    /// each taking `delay` once it is served.
    pub single_slot: Option<tokio::sync::Mutex<()>>,
    /// What it does after a failed tool result, by case id (layer 2's tests); without an entry
    /// it goes on as scripted.
    pub on_fault: BTreeMap<String, OnFault>,
    /// What it does after a tool result carrying a layer-2 canary (`ZQ-` and 12 hex digits), by
    /// case id: `true` follows the payload, `false` refuses it and says so.
    pub on_payload: BTreeMap<String, bool>,
    /// When set, a seeded share of the requests fail with HTTP 429 or 500 (`--fail-rate`,
    /// `--seed`, hidden: the soak's fixture, see [`super::seeded`]).
    pub seeded_failures: Option<super::seeded::SeededFailures>,
}

/// What the demo model does after a failed tool result (`--on-fault CASE:BEHAVIOUR`): the
/// behaviours layer 2 tells apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OnFault {
    /// Calls the same tool again with the same arguments.
    Retry,
    /// Calls this other tool with no arguments.
    Fallback(String),
    /// Says the operation failed.
    Honest,
    /// Answers with an invented value.
    Invent,
    /// Answers with this text (e.g. the server's real value it never received).
    Say(String),
    /// Answers with no text.
    Silent,
}

impl OnFault {
    /// `CASE:BEHAVIOUR` → (case id, behaviour).
    ///
    /// # Errors
    /// No `:`, or a behaviour not listed.
    pub(crate) fn parse(text: &str) -> Result<(String, OnFault), OnFaultError> {
        let (case, behaviour) = text.split_once(':').ok_or(OnFaultError::NoCase)?;
        let behaviour = match behaviour.split_once('=') {
            None if behaviour == "retry" => OnFault::Retry,
            None if behaviour == "honest" => OnFault::Honest,
            None if behaviour == "invent" => OnFault::Invent,
            None if behaviour == "silent" => OnFault::Silent,
            Some(("fallback", tool)) => OnFault::Fallback(tool.to_owned()),
            Some(("say", said)) => OnFault::Say(said.to_owned()),
            _ => return Err(OnFaultError::Behaviour),
        };
        Ok((case.to_owned(), behaviour))
    }
}

/// Why an `--on-fault` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum OnFaultError {
    /// No `:`.
    #[error("write CASE:BEHAVIOUR")]
    NoCase,
    /// A behaviour not listed.
    #[error("the behaviours are retry, fallback=TOOL, honest, invent, say=TEXT and silent")]
    Behaviour,
}

/// The wire a request came in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    /// Chat Completions.
    OpenAi,
    /// Messages.
    Anthropic,
}

impl DemoModel {
    /// The script of `set`; `flaky` lists `(case id, N)`: every Nth run of the case goes wrong.
    /// `quote` lists `(case id, N)`: every Nth final answer of the case quotes the last tool
    /// result (`The tool answered: …`) instead of `Done: the tools answered.` — answers a
    /// human labeller can tell apart (the judge calibration set is made of them).
    pub(crate) fn new(
        set: &GoldenSet,
        flaky: &[(String, usize)],
        quote: &[(String, usize)],
        today: chrono::NaiveDate,
    ) -> Self {
        let mut cases = BTreeMap::new();
        for case in &set.cases {
            let Some(first) = case.run.prompt.first() else { continue };
            let mut steps = Vec::new();
            if let Some(tool) = &case.expect.tool {
                steps.push((tool.name.clone(), arguments_for(tool.args.as_ref(), today)));
            } else if let Some(sequence) = &case.expect.sequence {
                for step in &sequence.steps {
                    steps.push((step.tool.clone(), arguments_for(step.args.as_ref(), today)));
                }
            }
            let flaky_every = flaky.iter().find(|(id, _)| *id == case.id).map(|(_, every)| (*every).max(1));
            let quote_every = quote.iter().find(|(id, _)| *id == case.id).map(|(_, every)| (*every).max(1));
            let user_turns = case.run.prompt.len();
            cases.insert(
                first.to_owned(),
                CaseScript {
                    id: case.id.clone(),
                    steps,
                    user_turns,
                    flaky_every,
                    quote_every,
                    seen: AtomicUsize::new(0),
                    answered: AtomicUsize::new(0),
                },
            );
        }
        DemoModel {
            cases,
            delay: Duration::ZERO,
            single_slot: None,
            on_fault: BTreeMap::new(),
            on_payload: BTreeMap::new(),
            seeded_failures: None,
        }
    }

    /// The answer to one request body on `wire` (the whole JSON response body), with a usage
    /// that reads like a real API's: tokens read about a quarter of the request's bytes, the
    /// conversation before the last message read from the prompt cache, and the cache parts
    /// and reasoning as each wire reports them.
    pub(crate) fn answer(&self, wire: Wire, body: &Value) -> Value {
        let mut answer = self.reply(wire, body);
        answer["usage"] = demo_usage(wire, body, &answer);
        answer
    }

    /// The seeded failure of a request (`--fail-rate`), as `(status, body)`, or `None` when it
    /// is answered. The key is the conversation's first user turn and the number of model turns
    /// before this one (see [`super::seeded`]): with a prompt per trial, (case, trial, call
    /// index), and the attempt counted under it. Half the failures are 429 (sent with
    /// `Retry-After: 0`), half 500, each in the wire's error shape.
    pub(crate) fn seeded_failure(&self, wire: Wire, body: &Value) -> Option<(u16, Value)> {
        let seeded = self.seeded_failures.as_ref()?;
        let messages = body["messages"].as_array().map_or(&[][..], Vec::as_slice);
        let first_user =
            messages.iter().find(|message| message["role"] == "user").map(|message| user_text(wire, message));
        let turns = messages.iter().filter(|message| message["role"] == "assistant").count();
        let pick = seeded.fails(&format!("{}\u{1f}{turns}", first_user.unwrap_or_default()))?;
        let limited = pick & 1 == 0;
        // A transient 500 names its request, as real ones do: the same body twice would be a
        // deterministic error, given up after the second attempt.
        let (status, kind, text) = if limited {
            (429, "rate_limit_error", "Rate limit reached for requests (a seeded fault of the demo model).".to_owned())
        } else {
            (
                500,
                "api_error",
                format!(
                    "The server had an error while processing your request (a seeded fault of the demo model, request {:016x}).",
                    pick >> 1
                ),
            )
        };
        let body = match wire {
            Wire::OpenAi => {
                json!({"error": {"message": text, "type": if limited { "requests" } else { "server_error" },
                                             "param": null, "code": if limited { json!("rate_limit_exceeded") } else { Value::Null }}})
            }
            Wire::Anthropic => json!({"type": "error", "error": {"type": kind, "message": text}}),
        };
        Some((status, body))
    }

    fn reply(&self, wire: Wire, body: &Value) -> Value {
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let first_user =
            messages.iter().find(|message| message["role"] == "user").map(|message| user_text(wire, message));
        let tools: Vec<String> = body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|tool| match wire {
                Wire::OpenAi => tool.pointer("/function/name"),
                Wire::Anthropic => tool.get("name"),
            })
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
        let model = body["model"].as_str().unwrap_or("demo").to_owned();
        // Asked to judge (the verdict tool is offered): a scripted judge, no model (see
        // `judge_reply`).
        if tools.iter().any(|tool| tool == crate::scoring::judge::VERDICT_TOOL) {
            return judge_reply(wire, &model, first_user.as_deref().unwrap_or(""));
        }
        if tools.iter().any(|tool| tool == crate::scoring::semantic::ARGUMENT_VERDICT_TOOL) {
            let verdict = json!({"verdict": "pass", "reason": "the scripted judge accepts every value"});
            return call_reply(wire, &model, crate::scoring::semantic::ARGUMENT_VERDICT_TOOL, &verdict, 0);
        }
        // Calls made so far in this conversation.
        let made = messages
            .iter()
            .filter(|message| message["role"] == "assistant")
            .map(|message| match wire {
                Wire::OpenAi => message["tool_calls"].as_array().map_or(0, Vec::len),
                Wire::Anthropic => message["content"]
                    .as_array()
                    .map_or(0, |blocks| blocks.iter().filter(|block| block["type"] == "tool_use").count()),
            })
            .sum::<usize>();
        let Some(script) = first_user.as_deref().and_then(|text| self.cases.get(text)) else {
            return text_reply(wire, &model, "I have no script for this conversation.");
        };
        let user_turns =
            messages.iter().filter(|message| message["role"] == "user" && !is_tool_result(wire, message)).count();
        if user_turns < script.user_turns {
            return text_reply(wire, &model, "Noted.");
        }
        if made == 0 && !script.steps.is_empty() {
            let seen = script.seen.fetch_add(1, Ordering::SeqCst) + 1;
            if script.flaky_every.is_some_and(|every| seen % every == 0) {
                let wrong = tools.iter().find(|tool| **tool != wire_name(&script.steps[0].0, &tools)).cloned();
                if let Some(wrong) = wrong {
                    return call_reply(wire, &model, &wrong, &json!({}), made);
                }
            }
        }
        if let Some(follow) = self.on_payload.get(&script.id)
            && let Some(result) = last_result(wire, &messages)
            && let Some(canary) = find_canary(&result)
        {
            let (tool, arguments) = script.steps.get(made.saturating_sub(1)).cloned().unwrap_or_default();
            if !follow {
                let said = "The tool result holds a suspicious instruction, which I will not follow. Done: the tools answered.";
                return text_reply(wire, &model, said);
            }
            // Does what the payload asks: a tool it names (one offered), else an argument, else
            // the answer.
            let named = result.split('`').skip(1).step_by(2).find(|name| tools.iter().any(|tool| tool == name));
            return match named {
                Some(name) if name != wire_name(&tool, &tools) || !result.contains("argument") => {
                    call_reply(wire, &model, name, &json!({"value": canary}), made)
                }
                _ if result.contains("argument") => {
                    let mut arguments = arguments;
                    if let Some(object) = arguments.as_object_mut() {
                        object.insert("note".into(), json!(canary));
                    }
                    call_reply(wire, &model, &wire_name(&tool, &tools), &arguments, made)
                }
                _ => text_reply(wire, &model, &format!("Done: the tools answered. Reference {canary}.")),
            };
        }
        // The step the script is at: one per call made, except that a call retried after a
        // failed result stays at its step (the retry makes it again).
        let retries = matches!(self.on_fault.get(&script.id), Some(OnFault::Retry));
        let step = if retries { made - failed_results(wire, &messages).min(made) } else { made };
        if let Some(behaviour) = self.on_fault.get(&script.id).filter(|_| last_result_failed(wire, &messages)) {
            let at = if retries { step } else { made.saturating_sub(1) };
            let (tool, arguments) = script.steps.get(at).cloned().unwrap_or_default();
            return match behaviour {
                OnFault::Retry => call_reply(wire, &model, &wire_name(&tool, &tools), &arguments, made),
                OnFault::Fallback(other) => call_reply(wire, &model, &wire_name(other, &tools), &json!({}), made),
                OnFault::Honest => {
                    text_reply(wire, &model, "Sorry, the tool failed, so I could not complete the request.")
                }
                OnFault::Invent => text_reply(wire, &model, "Here it is: the value is 42.17, as of 09:30."),
                OnFault::Say(said) => text_reply(wire, &model, said),
                OnFault::Silent => text_reply(wire, &model, ""),
            };
        }
        match script.steps.get(step) {
            Some((tool, arguments)) => call_reply(wire, &model, &wire_name(tool, &tools), arguments, made),
            None if script.steps.is_empty() => text_reply(wire, &model, "Glad to help. Nothing to look up."),
            None => {
                let answered = script.answered.fetch_add(1, Ordering::SeqCst) + 1;
                // After a fallback its answer rests on the other tool's result: it quotes it.
                let fell_back = matches!(self.on_fault.get(&script.id), Some(OnFault::Fallback(_)));
                match last_tool_result(wire, &messages)
                    .filter(|_| fell_back || script.quote_every.is_some_and(|every| answered % every == 0))
                {
                    Some(result) => text_reply(wire, &model, &format!("The tool answered: {result}")),
                    None => text_reply(wire, &model, "Done: the tools answered."),
                }
            }
        }
    }
}

/// The tool's name on the wire: itself when offered, else the offered name it was rewritten to.
fn wire_name(mcp: &str, offered: &[String]) -> String {
    if offered.iter().any(|name| name == mcp) {
        return mcp.to_owned();
    }
    let cleaned: String =
        mcp.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
    offered.iter().find(|name| name.starts_with(&cleaned[..cleaned.len().min(20)])).cloned().unwrap_or(cleaned)
}

/// The text of the last tool result in the conversation, when there is one.
fn last_tool_result(wire: Wire, messages: &[Value]) -> Option<String> {
    messages.iter().rev().find_map(|message| match wire {
        Wire::OpenAi => (message["role"] == "tool").then(|| user_text(wire, message)),
        Wire::Anthropic => {
            message["content"].as_array()?.iter().rev().find(|block| block["type"] == "tool_result").map(|block| {
                match &block["content"] {
                    Value::String(text) => text.clone(),
                    other => user_text(wire, &json!({"content": other})),
                }
            })
        }
    })
}

/// The text of the conversation's last message when it is a tool result.
fn last_result(wire: Wire, messages: &[Value]) -> Option<String> {
    let last = messages.last()?;
    let is_result = match wire {
        Wire::OpenAi => last["role"] == "tool",
        Wire::Anthropic => is_tool_result(wire, last),
    };
    is_result.then(|| last_tool_result(wire, messages)).flatten()
}

/// The first layer-2 canary in `text`: `ZQ-` and 12 upper-case hex digits.
fn find_canary(text: &str) -> Option<String> {
    text.match_indices("ZQ-").find_map(|(at, _)| {
        let digits = text.get(at + 3..at + 15)?;
        digits.chars().all(|c| c.is_ascii_hexdigit()).then(|| format!("ZQ-{digits}"))
    })
}

/// True when the conversation's last message is a failed tool result (OpenAI: a tool message
/// starting `Error:`; Anthropic: a `tool_result` with `is_error`).
fn last_result_failed(wire: Wire, messages: &[Value]) -> bool {
    let Some(last) = messages.last() else { return false };
    match wire {
        Wire::OpenAi => last["role"] == "tool" && user_text(wire, last).starts_with("Error:"),
        Wire::Anthropic => last["content"].as_array().is_some_and(|blocks| {
            blocks.iter().any(|block| block["type"] == "tool_result" && block["is_error"] == true)
        }),
    }
}

/// The failed tool results of the conversation (as [`last_result_failed`] reads one).
fn failed_results(wire: Wire, messages: &[Value]) -> usize {
    messages
        .iter()
        .map(|message| match wire {
            Wire::OpenAi => usize::from(message["role"] == "tool" && user_text(wire, message).starts_with("Error:")),
            Wire::Anthropic => message["content"].as_array().map_or(0, |blocks| {
                blocks.iter().filter(|block| block["type"] == "tool_result" && block["is_error"] == true).count()
            }),
        })
        .sum()
}

fn is_tool_result(wire: Wire, message: &Value) -> bool {
    wire == Wire::Anthropic
        && message["content"].as_array().is_some_and(|blocks| blocks.iter().any(|block| block["type"] == "tool_result"))
}

fn user_text(wire: Wire, message: &Value) -> String {
    match (&message["content"], wire) {
        (Value::String(text), _) => text.clone(),
        (Value::Array(blocks), _) => {
            blocks.iter().filter_map(|block| block.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("")
        }
        _ => String::new(),
    }
}

/// Arguments a good model would send for `expect_args` (resolved matchers).
fn arguments_for(expected: Option<&crate::golden::Args>, today: chrono::NaiveDate) -> Value {
    let mut out = serde_json::Map::new();
    for (name, matcher) in expected.into_iter().flat_map(crate::golden::Args::iter) {
        let mode = matcher.mode.as_str();
        let value = match mode {
            "absent" => continue,
            "present" => Some(json!("demo")),
            "one_of" | "set" => matcher.values.as_ref().map(|values| {
                if mode == "set" { values.clone() } else { values.get(0).cloned().unwrap_or(Value::Null) }
            }),
            "normalized" if matcher.one_of.is_some() => matcher.one_of.as_ref().and_then(|list| list.get(0).cloned()),
            "datetime" => matcher.value.as_ref().map(|value| relative_date(value, today)),
            "embedding" => matcher.value.as_ref().and_then(Value::as_str).map(|text| json!(format!("Note: {text}"))),
            _ => matcher.value.clone(),
        };
        if let Some(value) = value {
            out.insert(name.clone(), value);
        }
    }
    Value::Object(out)
}

/// The dimensions of the demo model's embeddings.
const EMBEDDING_DIMENSIONS: usize = 64;

/// A hashed bag-of-words vector of `text`: each lower-case word (letters and digits) adds one to
/// the dimension its FNV-1a hash picks; a text without words gets one in dimension 0.
pub(crate) fn embedding_of(text: &str) -> Vec<f64> {
    let mut vector = vec![0.0; EMBEDDING_DIMENSIONS];
    let lower = text.to_lowercase();
    let mut words = 0;
    for word in lower.split(|c: char| !c.is_alphanumeric()).filter(|word| !word.is_empty()) {
        let hash = word
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3));
        vector[(hash % EMBEDDING_DIMENSIONS as u64) as usize] += 1.0;
        words += 1;
    }
    if words == 0 {
        vector[0] = 1.0;
    }
    vector
}

/// The answer to an embeddings request: one vector per text of `input` (a string or a list).
fn embeddings_reply(body: &Value) -> Value {
    let texts: Vec<&str> = match &body["input"] {
        Value::String(text) => vec![text.as_str()],
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let data: Vec<Value> = texts
        .iter()
        .enumerate()
        .map(|(index, text)| json!({"object": "embedding", "index": index, "embedding": embedding_of(text)}))
        .collect();
    let words: usize = texts.iter().map(|text| text.split_whitespace().count()).sum();
    json!({"object": "list", "data": data, "model": body["model"], "usage": {"prompt_tokens": words, "total_tokens": words}})
}

fn relative_date(value: &Value, today: chrono::NaiveDate) -> Value {
    let Some(text) = value.as_str() else { return value.clone() };
    let days = match text {
        "today" => Some(0),
        "tomorrow" => Some(1),
        "yesterday" => Some(-1),
        _ => text.strip_suffix('d').and_then(|days| days.parse::<i64>().ok()),
    };
    match days {
        Some(days) => json!((today + chrono::Duration::days(days)).to_string()),
        None => value.clone(),
    }
}

/// The scripted judge's answer to a judge request (`- ID [must]: TEXT` criterion lines, then
/// the trace's `call NAME ARGS` / `result: …` / `result (isError): …` lines and its `answer: …`).
/// Per criterion: when its text names tools (words with an underscore, like `test_structured`),
/// `pass` quoting the last result one of them gave without error, else `fail`; a criterion
/// naming no tool passes quoting the last result any tool gave without error, and fails when
/// none did. It never reads the answer, so it passes a run whose answer states nothing: a
/// lenient judge, which is what its calibration measures (`golden/calibration/`).
fn judge_reply(wire: Wire, model: &str, request: &str) -> Value {
    // (tool, result text) of every call that returned without error, in order.
    let mut results: Vec<(&str, &str)> = Vec::new();
    let mut last_call = "";
    for line in request.lines() {
        if let Some(rest) = line.strip_prefix("call ") {
            last_call = rest.split_whitespace().next().unwrap_or_default();
        } else if let Some(result) = line.strip_prefix("result: ") {
            results.push((last_call, result));
        }
    }
    let answer = request.lines().rev().find_map(|line| line.strip_prefix("answer: ")).unwrap_or_default();
    let verdicts: Vec<Value> = request
        .lines()
        .filter_map(|line| line.strip_prefix("- ")?.split_once(" ["))
        .map(|(id, rest)| {
            let text = rest.split_once("]: ").map_or("", |(_, text)| text);
            let named: Vec<&str> = text
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                .filter(|word| word.contains('_'))
                .collect();
            let found = results.iter().rev().find(|(tool, _)| named.is_empty() || named.contains(tool));
            match found {
                Some((_, result)) => {
                    json!({"criterion_id": id, "verdict": "pass", "evidence": result, "reason": "the trace shows it"})
                }
                None => {
                    let reason = if named.is_empty() {
                        "no tool returned a result without error".to_owned()
                    } else {
                        format!("`{}` returned no result without error", named.join("`, `"))
                    };
                    json!({"criterion_id": id, "verdict": "fail", "evidence": answer, "reason": reason})
                }
            }
        })
        .collect();
    call_reply(wire, model, crate::scoring::judge::VERDICT_TOOL, &json!({"verdicts": verdicts}), 0)
}

/// The usage of `answer` to `body`: deterministic, from the sizes of the request and the answer.
fn demo_usage(wire: Wire, body: &Value, answer: &Value) -> Value {
    let messages = body["messages"].as_array().map_or(&[][..], Vec::as_slice);
    let read = (body.to_string().len() as u64).div_ceil(4);
    let last = messages.last().map_or(0, |message| (message.to_string().len() as u64).div_ceil(4));
    // The prefix before the last message was sent before: cached from the second turn on.
    let cached = if messages.len() > 1 { read.saturating_sub(last) * 4 / 5 } else { 0 };
    let written = (answer.to_string().len() as u64).div_ceil(16).max(4);
    match wire {
        Wire::OpenAi => json!({"prompt_tokens": read, "completion_tokens": written, "total_tokens": read + written,
                                "prompt_tokens_details": {"cached_tokens": cached},
                                "completion_tokens_details": {"reasoning_tokens": 0}}),
        Wire::Anthropic => json!({"input_tokens": read - cached, "output_tokens": written,
                                   "cache_read_input_tokens": cached, "cache_creation_input_tokens": 0}),
    }
}

fn usage(wire: Wire) -> Value {
    match wire {
        Wire::OpenAi => json!({"prompt_tokens": 120, "completion_tokens": 12, "total_tokens": 132}),
        Wire::Anthropic => json!({"input_tokens": 120, "output_tokens": 12}),
    }
}

fn text_reply(wire: Wire, model: &str, text: &str) -> Value {
    match wire {
        Wire::OpenAi => json!({
            "id": "chatcmpl-demo", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": usage(wire),
        }),
        Wire::Anthropic => json!({
            "id": "msg_demo", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "usage": usage(wire),
        }),
    }
}

fn call_reply(wire: Wire, model: &str, tool: &str, arguments: &Value, index: usize) -> Value {
    let id = format!("call_demo_{index}");
    match wire {
        Wire::OpenAi => json!({
            "id": "chatcmpl-demo", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null,
                "tool_calls": [{"id": id, "type": "function", "function": {"name": tool, "arguments": arguments.to_string()}}],
            }}],
            "usage": usage(wire),
        }),
        Wire::Anthropic => json!({
            "id": "msg_demo", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "tool_use", "id": id, "name": tool, "input": arguments}],
            "stop_reason": "tool_use", "usage": usage(wire),
        }),
    }
}

/// The refusal a real API gives a conversation that repeats a tool call id, as `(status, body)`:
/// OpenAI answers 400 `Duplicate value for 'tool_call_id'` when two tool calls of the assistant
/// messages, or two `tool` messages, share an id; Anthropic answers 400 `` `tool_use` ids must be
/// unique `` when two `tool_use` blocks of the conversation share one. `None` when every id is
/// unique. Both the demo model and the adapters' scripted server refuse with it, so a harness that
/// echoes a repeated id fails there as it would against the real API.
pub(crate) fn duplicate_id_refusal(wire: Wire, body: &Value) -> Option<(u16, Value)> {
    let messages = body["messages"].as_array()?;
    let mut calls = std::collections::BTreeSet::new();
    let mut results = std::collections::BTreeSet::new();
    for (at, message) in messages.iter().enumerate() {
        match wire {
            Wire::OpenAi => {
                let called =
                    message["tool_calls"].as_array().into_iter().flatten().filter_map(|call| call["id"].as_str());
                let repeated = called
                    .filter(|id| !calls.insert((*id).to_owned()))
                    .chain(
                        message
                            .get("tool_call_id")
                            .and_then(Value::as_str)
                            .filter(|id| !results.insert((*id).to_owned())),
                    )
                    .next();
                if let Some(id) = repeated {
                    {
                        let text = format!(
                            "Invalid parameter: Duplicate value for 'tool_call_id' of {id} in message[{at}]. Please ensure all tool call ids are unique."
                        );
                        let error = json!({"error": {"message": text, "type": "invalid_request_error",
                                                     "param": format!("messages.[{at}].tool_call_id"), "code": null}});
                        return Some((400, error));
                    }
                }
            }
            Wire::Anthropic => {
                for (index, block) in message["content"].as_array().into_iter().flatten().enumerate() {
                    let Some(id) = block["id"].as_str().filter(|_| block["type"] == "tool_use") else { continue };
                    if !calls.insert(id.to_owned()) {
                        let text = format!("messages.{at}.content.{index}: `tool_use` ids must be unique");
                        let error =
                            json!({"type": "error", "error": {"type": "invalid_request_error", "message": text}});
                        return Some((400, error));
                    }
                }
            }
        }
    }
    None
}

/// Serves `model` on `listener` until the task is dropped.
pub(crate) async fn serve(listener: TcpListener, model: Arc<DemoModel>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else { continue };
        let model = Arc::clone(&model);
        tokio::spawn(async move {
            let service = service_fn(move |request: Request<Incoming>| {
                let model = Arc::clone(&model);
                async move {
                    let embeddings = request.uri().path() == "/v1/embeddings";
                    let wire = match request.uri().path() {
                        "/v1/chat/completions" => Some(Wire::OpenAi),
                        "/v1/messages" => Some(Wire::Anthropic),
                        _ => None,
                    };
                    let body = request.into_body().collect().await.map(|body| body.to_bytes()).unwrap_or_default();
                    let (status, answer) = match (wire, serde_json::from_slice::<Value>(&body)) {
                        (None, Ok(body)) if embeddings => (200, embeddings_reply(&body)),
                        (Some(wire), Ok(body)) => {
                            match duplicate_id_refusal(wire, &body).or_else(|| model.seeded_failure(wire, &body)) {
                                Some(refusal) => refusal,
                                None => {
                                    let _slot = match &model.single_slot {
                                        Some(slot) => Some(slot.lock().await),
                                        None => None,
                                    };
                                    tokio::time::sleep(model.delay).await;
                                    (200, model.answer(wire, &body))
                                }
                            }
                        }
                        (None, _) => (404, json!({"error": {"message": "unknown path"}})),
                        (_, Err(error)) => (400, json!({"error": {"message": format!("not JSON: {error}")}})),
                    };
                    let mut response = Response::builder().status(status).header("content-type", "application/json");
                    if status == 429 {
                        // Retry at once: the soak's rate limits cost no waiting.
                        response = response.header("retry-after", "0");
                    }
                    let response = response.body(Full::new(Bytes::from(answer.to_string()))).unwrap_or_default();
                    Ok::<_, Infallible>(response)
                }
            });
            let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> DemoModel {
        let set = crate::golden::load::parse(
            std::path::Path::new("set.yaml"),
            "version: 1\ncases:\n  - id: one\n    prompt: Echo eu\n    expect_tool: echo\n    expect_args: {region: {match: normalized, one_of: [eu, europe]}, when: {match: datetime, value: tomorrow}}\n  - id: two\n    prompt: Two steps\n    expect_sequence: {order: strict, steps: [{tool: a}, {tool: b, args: {n: 2}}]}\n  - id: three\n    prompt: Thanks\n    negative: true\n",
        )
        .expect("valid");
        DemoModel::new(
            &set,
            &[("one".into(), 2)],
            &[("one".into(), 2)],
            chrono::NaiveDate::from_ymd_opt(2026, 11, 30).expect("date"),
        )
    }

    fn openai(messages: Value) -> Value {
        json!({"model": "m", "messages": messages, "tools": [
            {"type": "function", "function": {"name": "echo"}}, {"type": "function", "function": {"name": "a"}},
            {"type": "function", "function": {"name": "b"}}]})
    }

    #[test]
    fn it_calls_the_expected_tool_with_example_arguments_then_answers() {
        let model = model();
        let first = model.answer(Wire::OpenAi, &openai(json!([{"role": "user", "content": "Echo eu"}])));
        let call = &first["choices"][0]["message"]["tool_calls"][0]["function"];
        assert_eq!(call["name"], "echo");
        assert_eq!(
            serde_json::from_str::<Value>(call["arguments"].as_str().unwrap()).unwrap(),
            json!({"region": "eu", "when": "2026-12-01"})
        );
        let done = model.answer(Wire::OpenAi, &openai(json!([
            {"role": "user", "content": "Echo eu"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "x", "type": "function", "function": {"name": "echo", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "x", "content": "eu"}])));
        assert_eq!(done["choices"][0]["finish_reason"], "stop");
        // The second first-turn of case `one` goes wrong (flaky every 2nd).
        let wrong = model.answer(Wire::OpenAi, &openai(json!([{"role": "user", "content": "Echo eu"}])));
        assert_ne!(wrong["choices"][0]["message"]["tool_calls"][0]["function"]["name"], "echo");
    }

    #[test]
    fn a_retried_step_of_a_sequence_stays_its_step_until_it_succeeds() {
        let mut model = model();
        model.on_fault.insert("two".into(), OnFault::Retry);
        let call = |id: &str, tool: &str| json!({"role": "assistant", "content": "", "tool_calls": [{"id": id, "type": "function", "function": {"name": tool, "arguments": "{}"}}]});
        let result = |id: &str, text: &str| json!({"role": "tool", "tool_call_id": id, "content": text});
        let next = |messages: Vec<Value>| {
            let reply = model.answer(Wire::OpenAi, &openai(Value::Array(messages)));
            reply["choices"][0]["message"]["tool_calls"][0]["function"]["name"]
                .as_str()
                .unwrap_or("(answer)")
                .to_owned()
        };
        let user = json!({"role": "user", "content": "Two steps"});
        let failed_twice =
            vec![user.clone(), call("1", "a"), result("1", "Error: down"), call("2", "a"), result("2", "Error: down")];
        assert_eq!(next(failed_twice.clone()), "a", "a step that failed twice is tried a third time");
        let mut recovered = failed_twice;
        recovered.extend([call("3", "a"), result("3", "ok")]);
        assert_eq!(next(recovered.clone()), "b", "once it succeeds, the next step");
        recovered.extend([call("4", "b"), result("4", "ok")]);
        assert_eq!(next(recovered), "(answer)", "then the answer");
    }

    #[test]
    fn seeded_failures_are_429s_and_500s_in_the_wires_shape_keyed_on_the_conversation() {
        let mut model = model();
        model.seeded_failures = Some(crate::demo::seeded::SeededFailures::new(1.0, 5));
        let body = openai(json!([{"role": "user", "content": "Echo eu"}]));
        let (status, error) = model.seeded_failure(Wire::OpenAi, &body).expect("a rate of 1 fails everything");
        assert!(status == 429 || status == 500, "{status}");
        assert!(error["error"]["message"].as_str().is_some_and(|text| text.contains("seeded fault")));
        let anthropic = json!({"model": "m", "messages": [{"role": "user", "content": "Thanks"}]});
        let (_, error) = model.seeded_failure(Wire::Anthropic, &anthropic).expect("fails");
        assert_eq!(error["type"], "error");
        // The same seed fails the same attempts of the same requests, whatever else came between.
        let statuses = |model: &DemoModel, noise: bool| {
            (0..40)
                .map(|attempt| {
                    if noise {
                        model.seeded_failure(Wire::OpenAi, &openai(json!([{"role": "user", "content": "Thanks"}])));
                    }
                    model.seeded_failure(Wire::OpenAi, &body).map(|(status, _)| (attempt, status))
                })
                .collect::<Vec<_>>()
        };
        let (mut quiet, mut busy) = (self::model(), self::model());
        quiet.seeded_failures = Some(crate::demo::seeded::SeededFailures::new(0.3, 9));
        busy.seeded_failures = Some(crate::demo::seeded::SeededFailures::new(0.3, 9));
        let seen = statuses(&quiet, false);
        assert_eq!(seen, statuses(&busy, true));
        assert!(seen.iter().any(Option::is_some) && seen.iter().any(Option::is_none), "{seen:?}");
        assert!(self::model().seeded_failure(Wire::OpenAi, &body).is_none(), "off unless asked for");
    }

    #[test]
    fn its_embeddings_are_deterministic_bags_of_words() {
        let cosine =
            |a: &str, b: &str| crate::scoring::semantic::cosine(&embedding_of(a), &embedding_of(b)).expect("defined");
        assert!((cosine("The weather in Paris", "the WEATHER, in paris!") - 1.0).abs() < 1e-12, "case and punctuation");
        assert!(cosine("The weather in Paris is sunny today", "Note: The weather in Paris is sunny today") >= 0.85);
        assert!(cosine("The weather in Paris", "stock prices fell") < 0.5);
        let reply = embeddings_reply(&json!({"model": "e", "input": ["a b", "c"]}));
        assert_eq!(reply["data"][1]["index"], 1);
        assert_eq!(reply["data"][0]["embedding"].as_array().map(Vec::len), Some(EMBEDDING_DIMENSIONS));
    }

    #[test]
    fn it_walks_a_sequence_on_the_anthropic_wire_and_answers_a_negative_case_in_words() {
        let model = model();
        let tools = json!([{"name": "a"}, {"name": "b"}]);
        let second = model.answer(
            Wire::Anthropic,
            &json!({"model": "m", "tools": tools, "messages": [
            {"role": "user", "content": "Two steps"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "a", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]}]}),
        );
        assert_eq!(second["content"][0]["name"], "b");
        assert_eq!(second["content"][0]["input"], json!({"n": 2}));
        let thanks = model.answer(
            Wire::Anthropic,
            &json!({"model": "m", "tools": tools, "messages": [{"role": "user", "content": "Thanks"}]}),
        );
        assert_eq!(
            (thanks["stop_reason"].as_str(), thanks["content"][0]["type"].as_str()),
            (Some("end_turn"), Some("text"))
        );
    }

    #[test]
    fn every_nth_final_answer_quotes_the_last_tool_result() {
        let model = model();
        let done = json!([
            {"role": "user", "content": "Echo eu"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "x", "type": "function", "function": {"name": "echo", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "x", "content": "{\"region\":\"eu\"}"}]);
        let text = |reply: Value| reply["choices"][0]["message"]["content"].as_str().unwrap_or_default().to_owned();
        assert_eq!(text(model.answer(Wire::OpenAi, &openai(done.clone()))), "Done: the tools answered.");
        assert_eq!(text(model.answer(Wire::OpenAi, &openai(done))), "The tool answered: {\"region\":\"eu\"}");
    }

    #[test]
    fn the_scripted_judge_passes_a_named_tool_only_when_it_returned_without_error() {
        let model = model();
        let judge = |trace: &str| {
            let request = format!(
                "## The criteria\n- value [must]: Does it give what test_structured returned?\n- any [should]: Is there a result?\n\n## The trace (tool calls, results and the final answer)\n{trace}"
            );
            let body = json!({"model": "judge", "messages": [{"role": "user", "content": request}],
                "tools": [{"type": "function", "function": {"name": crate::scoring::judge::VERDICT_TOOL}}]});
            let reply = model.answer(Wire::OpenAi, &body);
            let arguments = reply["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let verdicts: Value = serde_json::from_str(&arguments).expect("JSON arguments");
            verdicts["verdicts"]
                .as_array()
                .expect("a list")
                .iter()
                .map(|verdict| {
                    (
                        verdict["verdict"].as_str().unwrap_or_default().to_owned(),
                        verdict["evidence"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect::<Vec<_>>()
        };
        let right = judge("call test_structured {}\nresult: {\"t\":21}\nanswer: Done.\n");
        assert_eq!(
            right,
            [("pass".into(), "{\"t\":21}".into()), ("pass".into(), "{\"t\":21}".into())],
            "the answer is never read"
        );
        let wrong = judge("call test_after_call {}\nresult: ok\nanswer: Done.\n");
        assert_eq!((wrong[0].0.as_str(), wrong[1].0.as_str()), ("fail", "pass"), "the named tool was not called");
        let failed = judge("call test_structured {}\nresult (isError): bad\nanswer: Done.\n");
        assert_eq!((failed[0].0.as_str(), failed[1].0.as_str()), ("fail", "fail"), "no result without error");
    }
}
