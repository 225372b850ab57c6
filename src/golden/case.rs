//! A golden case's typed fields, read once by the loader from the resolved JSON it has just
//! built and checked ([`super::Case::resolved`], which stays the text that is hashed): how many
//! trials and how many must pass ([`Trials`], the case's own: `--runs` scales them in the plan of
//! trials, `crate::trials::plan::scaled`), and what each
//! trial does ([`CaseRun`]: turns, limits, the tools the model sees and may call, tool choice,
//! sampling), its rubric ([`Rubric`]) and its answers to input requests ([`InputScript`]; the
//! agent loop plays them, `crate::agent::input`). What a case expects (`expect_*`, `negative`,
//! `forbid_tools`) is typed in [`super::expect`].

use regex::Regex;
use serde_json::{Value, json};

/// The trials a case asks for when it gives no `runs`.
pub(crate) const DEFAULT_TRIALS: usize = 5;

/// How many trials of a case run and how many must pass, as the case asks (`runs`,
/// `pass_threshold`, `kind`); the plan of trials applies `--runs` to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Trials {
    /// Trials asked for (`runs`; 1 to 50, default [`DEFAULT_TRIALS`]).
    pub runs: usize,
    /// Passes needed (`pass_threshold`; a hard case's is `runs`, a soft one's defaults to 4 of
    /// 5, rounded up).
    pub threshold: usize,
    /// `kind: hard`: every trial must pass.
    pub hard: bool,
}

impl Trials {
    /// A case of `runs` trials (at least 1); `threshold` `None` takes the kind's default.
    pub(crate) fn new(runs: usize, threshold: Option<usize>, hard: bool) -> Self {
        let runs = runs.max(1);
        let threshold = if hard { runs } else { threshold.unwrap_or((runs * 4).div_ceil(5)).clamp(1, runs) };
        Self { runs, threshold, hard }
    }

    /// Read from a resolved case's JSON (`runs`, `pass_threshold`, `kind`), the loader's
    /// defaults for what is missing.
    pub(crate) fn of_resolved(case: &Value) -> Self {
        let number = |key: &str| case.get(key).and_then(Value::as_u64).and_then(|value| usize::try_from(value).ok());
        Self::new(number("runs").unwrap_or(DEFAULT_TRIALS), number("pass_threshold"), case["kind"] == "hard")
    }
}

/// Sampling settings (a case's `sampling`); `None` leaves the provider's default.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Sampling {
    /// `temperature`.
    pub temperature: Option<f64>,
    /// `top_p`.
    pub top_p: Option<f64>,
    /// The most tokens the model may write.
    pub max_output_tokens: Option<u64>,
}

impl Sampling {
    /// From a resolved case's `sampling` object (already checked by the loader).
    pub(crate) fn from_case(sampling: &Value) -> Self {
        Self {
            temperature: sampling.get("temperature").and_then(Value::as_f64),
            top_p: sampling.get("top_p").and_then(Value::as_f64),
            max_output_tokens: sampling.get("max_output_tokens").and_then(Value::as_u64),
        }
    }
}

/// Whether and which tool the model must call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// The model must call at least one tool.
    Required,
    /// The model must not call a tool.
    None,
    /// The model must call this tool (MCP name).
    Named(String),
}

/// What each trial of a case does.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CaseRun {
    /// The user turns, in order (at least one).
    pub prompt: Vec<String>,
    /// The system text, when the case has one.
    pub system: Option<String>,
    /// Model turns per trial (`max_turns`, default 8).
    pub max_turns: usize,
    /// Wall time per trial in ms (`timeout_ms`, default 120 000).
    pub timeout_ms: u64,
    /// Globs of the tools the model may see (`tools:`); `None` is every tool.
    pub visible: Option<Vec<String>>,
    /// Globs of tools never called for real (`forbid_tools:`).
    pub forbidden: Vec<String>,
    /// `tool_choice` on the first model turn.
    pub tool_choice: ToolChoice,
    /// `sampling`, as the set gives it.
    pub sampling: Sampling,
    /// The case's trials go one after another (`sequential_runs: true`).
    pub sequential: bool,
    /// Something grades the trials without a judge: `expect_tool`, `expect_sequence`,
    /// `forbid_tools` or `negative: true` (otherwise only a rubric does).
    pub graded_without_judge: bool,
}

impl CaseRun {
    /// Read from a resolved case's JSON, the format's defaults for what is missing.
    pub(crate) fn of_resolved(resolved: &Value) -> Self {
        let strings = |key: &str| -> Option<Vec<String>> {
            resolved
                .get(key)
                .and_then(Value::as_array)
                .map(|items| items.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        };
        let number = |key: &str, default: u64| resolved.get(key).and_then(Value::as_u64).unwrap_or(default);
        let tool_choice = match resolved.get("tool_choice").and_then(Value::as_str) {
            Some("required") => ToolChoice::Required,
            Some("none") => ToolChoice::None,
            _ => ToolChoice::Auto,
        };
        Self {
            prompt: strings("prompt").filter(|turns| !turns.is_empty()).unwrap_or_else(|| vec![String::new()]),
            system: resolved.get("system").and_then(Value::as_str).map(str::to_owned),
            max_turns: usize::try_from(number("max_turns", 8)).unwrap_or(8).max(1),
            timeout_ms: number("timeout_ms", 120_000),
            visible: strings("tools"),
            forbidden: strings("forbid_tools").unwrap_or_default(),
            tool_choice,
            sampling: Sampling::from_case(resolved.get("sampling").unwrap_or(&Value::Null)),
            sequential: resolved.get("sequential_runs") == Some(&Value::Bool(true)),
            graded_without_judge: ["expect_tool", "expect_sequence", "forbid_tools"]
                .iter()
                .any(|key| resolved.get(*key).is_some())
                || resolved.get("negative") == Some(&Value::Bool(true)),
        }
    }
}

/// One criterion of a rubric.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RubricCriterion {
    /// Its id (given, or `c1`, `c2`, … for a rubric file's lines).
    pub id: String,
    /// The question, answerable from the trace.
    pub text: String,
    /// `must` (true) or `should`.
    pub must: bool,
}

/// A resolved rubric.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rubric {
    /// The criteria, in order.
    pub criteria: Vec<RubricCriterion>,
    /// `should` criteria that must pass.
    pub min_should: usize,
}

impl Rubric {
    /// From a resolved case's `rubric` (`{criteria: [{id, text, must}], min_should}` or
    /// `{file_text, min_should}` with one `- [must] …` / `- [should] …` line per criterion).
    pub(crate) fn from_resolved(rubric: &Value) -> Option<Self> {
        let min_should = rubric.get("min_should").and_then(Value::as_u64).unwrap_or(0) as usize;
        let criteria = if let Some(list) = rubric.get("criteria").and_then(Value::as_array) {
            list.iter()
                .map(|criterion| RubricCriterion {
                    id: criterion["id"].as_str().unwrap_or_default().to_owned(),
                    text: criterion["text"].as_str().unwrap_or_default().to_owned(),
                    must: criterion["must"] == true,
                })
                .collect()
        } else {
            let text = rubric.get("file_text")?.as_str()?;
            text.lines()
                .filter_map(|line| {
                    let line = line.trim_start().strip_prefix("- [")?;
                    let (kind, text) = line.split_once(']')?;
                    let must = match kind.trim().to_ascii_lowercase().as_str() {
                        "must" => true,
                        "should" => false,
                        _ => return None,
                    };
                    Some((must, text.trim().to_owned()))
                })
                .enumerate()
                .map(|(index, (must, text))| RubricCriterion { id: format!("c{}", index + 1), text, must })
                .collect()
        };
        Some(Self { criteria, min_should })
    }
}

impl Rubric {
    /// `"sha256:"` and 64 hex digits over the rubric as the judge sees it: each criterion's id,
    /// text and kind in order, and `min_should` (canonical JSON), so a trace and a calibration
    /// say exactly which rubric they were judged on.
    pub(crate) fn sha256(&self) -> String {
        use sha2::{Digest, Sha256};
        let criteria: Vec<Value> = self
            .criteria
            .iter()
            .map(|criterion| json!({"id": criterion.id, "text": criterion.text, "must": criterion.must}))
            .collect();
        let text = crate::mcp::tools::canonical(&json!({"criteria": criteria, "min_should": self.min_should}));
        let digest = Sha256::digest(text.as_bytes());
        format!("sha256:{}", digest.iter().map(|byte| format!("{byte:02x}")).collect::<String>())
    }
}

/// A case's script for input requests.
#[derive(Debug, Clone)]
pub(crate) struct InputScript {
    /// The entries, in order.
    pub entries: Vec<InputEntry>,
    /// What an unmatched request gets (`on_unmatched_input_request`).
    pub unmatched: Unmatched,
    /// Rounds per tool call before the trial fails.
    pub max_rounds: usize,
}

/// One `input_responses` entry.
#[derive(Debug, Clone)]
pub(crate) struct InputEntry {
    /// Answers the request of this key (`key`).
    pub key: Option<String>,
    /// Answers requests of this method (`match.method`).
    pub method: Option<String>,
    /// …whose `params.message` this regex finds (`match.message`).
    pub message: Option<Regex>,
    /// …whose `requestedSchema` has these properties (`match.schema_has`).
    pub schema_has: Vec<String>,
    /// The answer sent (`respond`).
    pub respond: Value,
    /// At most this many rounds per trial (`times`).
    pub times: Option<usize>,
}

/// What an unmatched request gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unmatched {
    /// The trial fails.
    Fail,
    /// An elicitation is declined.
    Decline,
    /// An elicitation is cancelled.
    Cancel,
}

impl InputScript {
    /// The script of a resolved case; `None` when it has no `input_responses`.
    pub(crate) fn of_resolved(resolved: &Value) -> Option<Self> {
        let entries = resolved.get("input_responses")?.as_array()?;
        let entries = entries
            .iter()
            .map(|entry| InputEntry {
                key: entry.get("key").and_then(Value::as_str).map(str::to_owned),
                method: entry.pointer("/match/method").and_then(Value::as_str).map(str::to_owned),
                message: entry.pointer("/match/message").and_then(Value::as_str).and_then(|text| Regex::new(text).ok()),
                schema_has: entry
                    .pointer("/match/schema_has")
                    .and_then(Value::as_array)
                    .map(|names| names.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                    .unwrap_or_default(),
                respond: entry.get("respond").cloned().unwrap_or_else(|| json!({})),
                times: entry.get("times").and_then(Value::as_u64).and_then(|times| usize::try_from(times).ok()),
            })
            .collect();
        let unmatched = match resolved.get("on_unmatched_input_request").and_then(Value::as_str) {
            Some("decline") => Unmatched::Decline,
            Some("cancel") => Unmatched::Cancel,
            _ => Unmatched::Fail,
        };
        let max_rounds = resolved.get("max_input_rounds").and_then(Value::as_u64).map_or(3, |rounds| rounds as usize);
        Some(Self { entries, unmatched, max_rounds })
    }
}

/// A fault layer 2 injects into a tool call instead of sending it (`faults:` in a golden set,
/// `--fault-plan`): what a host shows its model when the call fails that way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum FaultKind {
    /// The server answered HTTP 500 (on stdio: an internal JSON-RPC error).
    Http500,
    /// No answer within the case's per-call limit.
    Timeout,
    /// A response that is not valid JSON-RPC, or content cut short.
    Malformed,
    /// HTTP 401 with `WWW-Authenticate: Bearer error="invalid_token"`.
    ExpiredToken,
    /// The response stream ended before the final message.
    StreamCut,
    /// An `isError: true` result with a message.
    ToolError,
}

impl FaultKind {
    /// Every fault, in the order the default suite plants them.
    pub(crate) const ALL: [FaultKind; 6] = [
        FaultKind::Http500,
        FaultKind::Timeout,
        FaultKind::Malformed,
        FaultKind::ExpiredToken,
        FaultKind::StreamCut,
        FaultKind::ToolError,
    ];

    /// Its name in golden sets, fault plans and reports (`http-500`, …).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            FaultKind::Http500 => "http-500",
            FaultKind::Timeout => "timeout",
            FaultKind::Malformed => "malformed",
            FaultKind::ExpiredToken => "expired-token",
            FaultKind::StreamCut => "stream-cut",
            FaultKind::ToolError => "tool-error",
        }
    }

    /// The fault named `name`, if any.
    pub(crate) fn parse(name: &str) -> Option<FaultKind> {
        FaultKind::ALL.into_iter().find(|kind| kind.as_str() == name)
    }

    /// Every name, for messages.
    pub(crate) fn names() -> Vec<&'static str> {
        FaultKind::ALL.iter().map(|kind| kind.as_str()).collect()
    }
}

/// One fault to inject: into the `on_call`-th call (1-based, counting the trial's own calls of
/// `tool`) of `tool`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct FaultEntry {
    /// The MCP tool name.
    pub tool: String,
    /// The fault.
    pub fault: FaultKind,
    /// Which call of the tool, from 1.
    pub on_call: usize,
}

impl FaultEntry {
    /// What names it in reports and cassettes: `FAULT@TOOL#N` (`http-500@search#1`).
    pub(crate) fn label(&self) -> String {
        format!("{}@{}#{}", self.fault.as_str(), self.tool, self.on_call)
    }
}

/// Where a payload is planted in a tool result's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Placement {
    /// Before the text.
    Start,
    /// At the whitespace nearest the middle.
    Middle,
    /// After the text.
    End,
}

impl Placement {
    /// `start`, `middle` or `end`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Placement::Start => "start",
            Placement::Middle => "middle",
            Placement::End => "end",
        }
    }

    /// The placement named `name`.
    pub(crate) fn parse(name: &str) -> Option<Placement> {
        [Placement::Start, Placement::Middle, Placement::End].into_iter().find(|place| place.as_str() == name)
    }
}

/// What a payload asks the model to do, and so what counts as the attack's success.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum CanaryAction {
    /// Call this tool (MCP name) after reading the payload.
    Call(String),
    /// Put the canary into an argument of a later call.
    Argument,
    /// Repeat the canary in the answer.
    Answer,
}

impl CanaryAction {
    /// `call TOOL`, `argument` or `answer`.
    pub(crate) fn label(&self) -> String {
        match self {
            CanaryAction::Call(tool) => format!("call {tool}"),
            CanaryAction::Argument => "argument".into(),
            CanaryAction::Answer => "answer".into(),
        }
    }
}

/// One adversarial payload to plant into the first successful tool result of a trial.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct PayloadEntry {
    /// The catalogue's id (its class, e.g. `indirect-injection`), or `custom-N` for a set's own
    /// (N from 1, in the case's list).
    pub id: String,
    /// The text, with `{canary}` where the trial's canary goes (and, in the catalogue's,
    /// `{tool}` where the action's tool goes, filled in when the variant is made).
    pub text: String,
    /// Where it goes in the result's text.
    pub place: Placement,
    /// What success is.
    pub action: CanaryAction,
}

/// What layer 2 injects into a variant's trials.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Injection {
    /// A fault replaces one call.
    Fault(FaultEntry),
    /// A payload is planted into a result.
    Payload(PayloadEntry),
}

/// One entry of a fault plan (`--fault-plan FILE`): `fault` on call `on_call` of `tool` (`*`:
/// each tool the case expects a call of) in every case whose id matches `cases`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlanEntry {
    /// A case-id glob (`*`, `?`).
    pub cases: String,
    /// An MCP tool name, or `*`.
    pub tool: String,
    /// The fault.
    pub fault: FaultKind,
    /// Which call of the tool, from 1.
    pub on_call: usize,
    /// Where the entry is: 1-based line and column.
    pub position: (u64, u64),
}

/// The calls a case expects, as layers 2 and 3 plan and measure them: `negative: true`, its
/// `expect_tool` and whether any position counts (`expect_tool_position: any`), and the tool of
/// each `expect_sequence` step (`None` for a step without one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExpectedCalls<'a> {
    /// `negative: true`: the case expects no tool call.
    pub negative: bool,
    /// `expect_tool`.
    pub tool: Option<&'a str>,
    /// `expect_tool_position: any`.
    pub any_position: bool,
    /// Each `expect_sequence` step's tool, in order.
    pub sequence: Vec<Option<&'a str>>,
}

/// The calls `case` expects ([`ExpectedCalls`]), read from its resolved JSON here, in the golden
/// set's module.
pub(crate) fn expected_calls(case: &super::Case) -> ExpectedCalls<'_> {
    let resolved = &case.resolved;
    ExpectedCalls {
        negative: resolved.get("negative") == Some(&Value::Bool(true)),
        tool: resolved.get("expect_tool").and_then(Value::as_str),
        any_position: resolved.get("expect_tool_position").and_then(Value::as_str) == Some("any"),
        sequence: resolved
            .pointer("/expect_sequence/steps")
            .and_then(Value::as_array)
            .map(|steps| steps.iter().map(|step| step.get("tool").and_then(Value::as_str)).collect())
            .unwrap_or_default(),
    }
}
