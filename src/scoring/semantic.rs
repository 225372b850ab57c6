//! The argument checks that need a model — `embedding` (cosine of two embedding vectors) and
//! `judge` (the judge model asked whether a value satisfies a description) — split so that
//! scoring stays pure: [`requests`] lists what a trial needs resolved (pure), the runner resolves
//! each request with a model (`crate::trials::semantic`), and [`score_trial`](super::score_trial)
//! reads the answers from the [`SemanticVerdicts`] of the trial's [`Trace`].
//!
//! A request is keyed by its content ([`SemanticKey`]: the mode, the argument — for `judge`
//! only —, the expected text and the actual value as text), so one pair is resolved once however
//! many calls, steps or trials show it.
//!
//! The actual value is compared as text: a string as it is, any other JSON value (a number, an
//! object) as its compact JSON text (`42`, `{"city":"Paris"}`). A missing argument needs no
//! model: it fails as for every matcher, and so does an empty (or blank) text under `embedding`,
//! which has no embedding to compare.

use std::collections::BTreeMap;

use serde_json::Value;

use super::Trace;
use crate::golden::{Args, Expect, ExpectTool, Matcher};

/// Which model-graded matcher.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum SemanticMode {
    /// Cosine similarity of embedding vectors against a threshold.
    Embedding,
    /// The judge model's verdict.
    Judge,
}

impl SemanticMode {
    /// `embedding` or `judge`, as written in a golden set.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Embedding => "embedding",
            Self::Judge => "judge",
        }
    }

    /// The mode a resolved matcher names, when it is one of these.
    pub(crate) fn of(matcher: &Matcher) -> Option<Self> {
        match matcher.mode.as_str() {
            "embedding" => Some(Self::Embedding),
            "judge" => Some(Self::Judge),
            _ => None,
        }
    }
}

/// One check to resolve, by content.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct SemanticKey {
    /// The matcher.
    pub mode: SemanticMode,
    /// The argument's name for `judge` (the judge reads it); empty for `embedding`, whose
    /// cosine depends on the two texts only.
    pub argument: String,
    /// The matcher's `value`: the expected text or description.
    pub expected: String,
    /// The actual value as text (see [`actual_text`]).
    pub actual: String,
}

impl SemanticKey {
    /// The key of `matcher` (resolved, `embedding` or `judge`) on the argument `name` = `actual`.
    pub(crate) fn new(mode: SemanticMode, name: &str, matcher: &Matcher, actual: &Value) -> Self {
        Self {
            mode,
            argument: if mode == SemanticMode::Judge { name.to_owned() } else { String::new() },
            expected: matcher.value.as_ref().map(actual_text).unwrap_or_default(),
            actual: actual_text(actual),
        }
    }
}

/// A value as the text a model reads: a string as it is, anything else as compact JSON.
pub(crate) fn actual_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// What the judge said of one argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JudgeVerdict {
    /// The value satisfies the description.
    Pass,
    /// It does not.
    Fail,
    /// The judge could not tell (graded as a failure: the value was not shown to satisfy it).
    Unknown,
}

/// A resolved check.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Resolved {
    /// The cosine similarity of the two texts' embeddings, in [-1, 1].
    Cosine(f64),
    /// The judge's verdict and its reason.
    Judged(JudgeVerdict, String),
    /// The model could not answer (HTTP error, call cap, unreadable answer): the check is
    /// `error`, never a pass.
    Error(String),
    /// Replaying, no recording answers the request (deterministic: record again): `error`
    /// like [`Resolved::Error`], told apart for the exit status.
    Missed(String),
}

/// The resolved checks of one trial.
pub(crate) type SemanticVerdicts = BTreeMap<SemanticKey, Resolved>;

/// Every model-graded check a trial of `case` (what it expects) needs, without duplicates, in
/// a fixed order: the `expect_args` of the calls the selection may accept (`first`: the first
/// call when it names the tool; `any`: every call to it) and each sequence step's `args` on the
/// calls to its tool.
pub(crate) fn requests(case: &Expect, trace: &Trace) -> Vec<SemanticKey> {
    let mut keys = Vec::new();
    let mut add = |expected: &Args, arguments: &Value| {
        for (name, matcher) in expected.iter() {
            let Some(mode) = SemanticMode::of(matcher) else { continue };
            let Some(actual) = arguments.get(name) else { continue };
            let key = SemanticKey::new(mode, name, matcher, actual);
            if mode == SemanticMode::Embedding && key.actual.trim().is_empty() {
                // Fails without a model (see `matchers`): an empty text has no embedding.
                continue;
            }
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    };
    if let Some(ExpectTool { name: tool, any_position: any, args: Some(expected) }) = &case.tool {
        let (tool, any) = (tool.as_str(), *any);
        let to_tool = trace.calls.iter().filter(|call| call.name == tool);
        let accepted: Vec<_> = if any {
            to_tool.collect()
        } else {
            trace.calls.first().filter(|call| call.name == tool).into_iter().collect()
        };
        for call in accepted {
            add(expected, &call.arguments);
        }
    }
    for step in case.sequence.iter().flat_map(|sequence| &sequence.steps) {
        let Some(args) = &step.args else { continue };
        for call in trace.calls.iter().filter(|call| call.name == step.tool) {
            add(args, &call.arguments);
        }
    }
    keys
}

/// Cosine similarity of two vectors; `None` when their lengths differ or one is all zeros.
pub(crate) fn cosine(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() != b.len() || a.is_empty() {
        return None;
    }
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    let (na, nb) = (norm(a), norm(b));
    (na > 0.0 && nb > 0.0).then(|| (dot / (na * nb)).clamp(-1.0, 1.0))
}

pub(crate) use crate::report::evals::{ARGUMENT_CHECK_ERROR, REPLAY_MISS};

/// The version of the argument judge's prompt: part of a verdict's cache key.
pub(crate) const ARGUMENT_JUDGE_PROMPT_VERSION: u32 = 1;

/// The tool the judge must call to give its verdict on one argument.
pub(crate) const ARGUMENT_VERDICT_TOOL: &str = "record_argument_verdict";

/// The argument verdict tool's definition.
pub(crate) fn argument_verdict_tool() -> crate::providers::ToolSpec {
    crate::providers::ToolSpec {
        name: ARGUMENT_VERDICT_TOOL.into(),
        description: Some("Record whether the argument value satisfies the expected description.".into()),
        input_schema: serde_json::json!({
            "type": "object",
            "properties": {
                "verdict": {"type": "string", "enum": ["pass", "fail", "unknown"]},
                "reason": {"type": "string", "description": "One sentence: why."}
            },
            "required": ["verdict", "reason"]
        }),
    }
}

/// The judge's request for one `judge` check: the task (the case's prompt), the argument's name,
/// the expected description and the actual value; temperature 0 (dropped by the caller for a
/// model that refuses it); the verdict tool forced.
pub(crate) fn argument_judge_request(task: &str, key: &SemanticKey) -> crate::providers::CompletionRequest {
    use crate::providers::{CompletionRequest, Message, Sampling, ToolChoice};
    let system = "You check one argument of a tool call an AI assistant made for a user's task. Decide whether \
                  the actual value satisfies the expected description in the context of the task: `pass` when it \
                  does (other wording, spelling or format is fine when the meaning is the same), `fail` when it does \
                  not, `unknown` when you cannot tell. Record the verdict with the record_argument_verdict tool.";
    let user = format!(
        "## The task\n{task}\n\n## The argument\n`{}`\n\n## Expected\n{}\n\n## Actual value\n{}",
        key.argument, key.expected, key.actual
    );
    CompletionRequest {
        system: Some(system.to_owned()),
        messages: vec![Message::User(user)],
        tools: vec![argument_verdict_tool()],
        sampling: Sampling { temperature: Some(0.0), top_p: None, max_output_tokens: Some(256) },
        tool_choice: ToolChoice::Named(ARGUMENT_VERDICT_TOOL.into()),
    }
}

/// Why the argument judge's answer holds no verdict.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum UnreadableVerdict {
    /// The verdict tool was not called.
    #[error("the judge did not call its verdict tool")]
    NoCall,
    /// A verdict that is none of the three.
    #[error("the judge's verdict `{0}` is none of pass, fail, unknown")]
    Unknown(String),
    /// No verdict.
    #[error("the judge's answer has no verdict")]
    Missing,
}

/// Reads the judge's verdict on one argument; `Err` when the answer holds none (the check is
/// then `error`).
pub(crate) fn parse_argument_verdict(
    completion: &crate::providers::Completion,
) -> Result<(JudgeVerdict, String), UnreadableVerdict> {
    let call = completion
        .tool_calls
        .iter()
        .find(|call| call.name == ARGUMENT_VERDICT_TOOL)
        .ok_or(UnreadableVerdict::NoCall)?;
    let verdict = match call.arguments.get("verdict").and_then(Value::as_str) {
        Some("pass") => JudgeVerdict::Pass,
        Some("fail") => JudgeVerdict::Fail,
        Some("unknown") => JudgeVerdict::Unknown,
        Some(other) => return Err(UnreadableVerdict::Unknown(other.to_owned())),
        None => return Err(UnreadableVerdict::Missing),
    };
    let reason = call.arguments.get("reason").and_then(Value::as_str).unwrap_or("no reason given").trim();
    Ok((verdict, crate::text::clip(reason, 300)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::{Completion, FinishReason, Message, ToolCall, ToolChoice};
    use serde_json::json;

    fn answer(arguments: Value) -> Completion {
        Completion {
            text: None,
            tool_calls: vec![ToolCall::new("v", ARGUMENT_VERDICT_TOOL, arguments)],
            finish: FinishReason::ToolCalls,
            usage: None,
            reported_model: None,
            system_fingerprint: None,
        }
    }

    #[test]
    fn the_argument_judge_is_forced_to_its_tool_and_reads_task_argument_and_both_values() {
        let key = SemanticKey::new(
            SemanticMode::Judge,
            "city",
            &Matcher::of_resolved(&json!({"value": "a city in France"})),
            &json!("Lyon"),
        );
        let request = argument_judge_request("Book me a hotel in Lyon.", &key);
        assert_eq!(request.tool_choice, ToolChoice::Named(ARGUMENT_VERDICT_TOOL.into()));
        assert_eq!(request.sampling.temperature, Some(0.0));
        let Message::User(text) = &request.messages[0] else { panic!("a user message") };
        for part in ["Book me a hotel in Lyon.", "`city`", "a city in France", "Lyon"] {
            assert!(text.contains(part), "{part} in {text}");
        }
    }

    #[test]
    fn a_verdict_is_read_and_anything_else_is_an_error() {
        assert_eq!(
            parse_argument_verdict(&answer(json!({"verdict": "pass", "reason": " same city "}))),
            Ok((JudgeVerdict::Pass, "same city".into()))
        );
        assert_eq!(
            parse_argument_verdict(&answer(json!({"verdict": "unknown", "reason": "?"}))).map(|(verdict, _)| verdict),
            Ok(JudgeVerdict::Unknown)
        );
        assert!(parse_argument_verdict(&answer(json!({"verdict": "maybe"}))).is_err());
        assert!(parse_argument_verdict(&answer(json!({"reason": "no verdict"}))).is_err());
        let words = Completion {
            text: Some("pass".into()),
            tool_calls: Vec::new(),
            finish: FinishReason::Stop,
            usage: None,
            reported_model: None,
            system_fingerprint: None,
        };
        assert!(parse_argument_verdict(&words).is_err(), "an answer in words is no verdict");
    }
}
