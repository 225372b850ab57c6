//! `mcp-eval golden check FILE --execute`: every expected call of a golden set made for real on
//! the server, with no model. [`plan`] (pure) reads each case's expected calls — `expect_tool`
//! with `expect_args`, then each step of `expect_sequence` — and decides, before anything is
//! sent, which can be sent as they are written: a call whose arguments are all exact values (an
//! `exact` or `auto` matcher; `absent` leaves the argument out), of a tool the server lists, the
//! case shows and does not forbid, and that satisfy the tool's `inputSchema`. [`run`] sends those
//! once each, in file order, over the one session `golden check` opened (through
//! [`McpTools`], the `tools/call` layer 1 makes), and prints one line per expected call and a
//! summary. Tool results are never printed: an `isError` result gives its first line, clipped.
//!
//! What a line can say, and whether it fails the check (exit status 1):
//! - sent: `ok`, or `isError`, a JSON-RPC error, no answer, or input requests the case could
//!   not answer (each a failure);
//! - not sent because the set cannot be passed that way (a failure): the arguments break the
//!   tool's `inputSchema` beyond what a model could add, the case forbids or hides the tool, or
//!   the server lists no tool of exactly that name;
//! - not executed (neutral): a value under a matcher other than exact equality (no one value to
//!   send), or arguments the tool needs that the set leaves to the model;
//! - skipped (neutral): a tool that may change or delete data, unless asked for with
//!   [`Sends::Destructive`] (`--execute-destructive`). MCP's annotations are hints with
//!   defaults: `readOnlyHint` false and `destructiveHint` true, so only a tool annotated
//!   `readOnlyHint: true`, or `destructiveHint: false` (it only adds), is sent by default; an
//!   unannotated tool is presumed destructive, as the spec says. [`destructive`] decides;
//! - nothing sent: a negative case, a case with no expected call; the tools of `forbid_tools`
//!   are never called.
//!
//! The golden-set format has no argument taken from an earlier result, so no step is held back
//! for that reason.

use std::io::Write as _;

use serde_json::{Map, Value};

use crate::agent::input::Session;
use crate::agent::tools::{CallSite, McpTools, ToolExecutor as _, ToolOutcome};
use crate::golden::{Args, Case, GoldenSet, glob_matches};
use crate::mcp::era::Connected;
use crate::mcp::evidence::Redactor;
use crate::mcp::tools::ToolSurface;
use crate::providers::schema::{ArgumentValidator, Validation};

/// The most characters of the arguments a line shows.
const ARGUMENTS_SHOWN: usize = 160;
/// The most characters of an error's first line a line shows.
const ERROR_SHOWN: usize = 160;

/// One expected call of a case, and what is done with it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Expected {
    /// The index of its case in the set.
    pub case: usize,
    /// `case ID` or `case ID step N`.
    pub label: String,
    /// The tool.
    pub tool: String,
    /// What is done with it.
    pub action: Action,
}

/// What is done with one expected call.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Action {
    /// Sent with these arguments.
    Send(Value),
    /// Not sent: the set cannot be passed with this call (a failure).
    Refused(String),
    /// Not executed, and not a failure: why.
    NotExecuted(String),
    /// Not sent because the tool may change or delete data, and not a failure: why.
    Skipped(String),
}

/// Which of the calls that can be sent are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Sends {
    /// Only calls of tools that cannot destroy data (the default; the Action's only choice).
    #[default]
    Safe,
    /// Every call, a tool that may change or delete data too (`--execute-destructive`).
    Destructive,
}

/// Why a call of `tool` may change or delete data, or `None` when MCP's annotations say it
/// cannot: `readOnlyHint: true`, or `destructiveHint: false`. The spec's defaults are
/// `readOnlyHint: false` and `destructiveHint: true`, so a tool without them is presumed
/// destructive.
pub(crate) fn destructive(tool: &crate::mcp::tools::ToolView) -> Option<&'static str> {
    let hint = |key: &str| tool.annotations.as_ref().and_then(|annotations| annotations.get(key));
    if tool.read_only() || hint("destructiveHint") == Some(&Value::Bool(false)) {
        return None;
    }
    Some(if hint("destructiveHint") == Some(&Value::Bool(true)) {
        "the tool is annotated `destructiveHint: true`"
    } else {
        "the tool is not annotated `readOnlyHint: true` or `destructiveHint: false`, so MCP presumes it may change or delete data"
    })
}

/// A line of the report that is no call: a negative case, a case with no expected call, the
/// forbidden tools of a case.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Entry {
    /// An expected call.
    Call(Expected),
    /// A line about a case that sends nothing.
    Note(String),
}

/// Every line of the report, in file order, before anything is sent; a tool that may change or
/// delete data is skipped ([`Sends::Safe`]).
#[cfg(test)]
pub(crate) fn plan(set: &GoldenSet, surface: &ToolSurface) -> Vec<Entry> {
    plan_with(set, surface, Sends::Safe)
}

/// [`plan`], with `sends` deciding whether the calls of tools that may destroy data are sent.
pub(crate) fn plan_with(set: &GoldenSet, surface: &ToolSurface, sends: Sends) -> Vec<Entry> {
    let mut entries = Vec::new();
    for (index, case) in set.cases.iter().enumerate() {
        let label = format!("case {}", case.id);
        let mut calls = Vec::new();
        if let Some(tool) = &case.expect.tool {
            calls.push((label.clone(), tool.name.as_str(), tool.args.as_ref()));
        }
        let steps = case.expect.sequence.iter().flat_map(|sequence| &sequence.steps);
        for (index, step) in steps.enumerate() {
            calls.push((format!("{label} step {}", index + 1), step.tool.as_str(), step.args.as_ref()));
        }
        if case.expect.negative {
            entries.push(Entry::Note(format!("{label}: negative (expects no tool call) → nothing sent")));
        } else if calls.is_empty() {
            entries.push(Entry::Note(format!("{label}: no expected call → nothing sent")));
        }
        for (label, tool, args) in calls {
            let action = match action(case, tool, args, surface) {
                Action::Send(arguments) => skip_destructive(tool, surface, sends).unwrap_or(Action::Send(arguments)),
                other => other,
            };
            entries.push(Entry::Call(Expected { case: index, label, tool: tool.to_owned(), action }));
        }
        if !case.run.forbidden.is_empty() {
            let names: Vec<String> = case.run.forbidden.iter().map(|name| format!("`{name}`")).collect();
            entries.push(Entry::Note(format!("{label}: forbid_tools {} → never called", names.join(", "))));
        }
    }
    entries
}

/// What is done with the call of `tool` whose expected arguments are `args` (`None`: the set
/// names none).
fn action(case: &Case, tool: &str, args: Option<&Args>, surface: &ToolSurface) -> Action {
    let Some(listed) = surface.tools.iter().find(|listed| listed.name == tool) else {
        return Action::Refused(format!(
            "not sent: the server lists no tool named exactly `{tool}` (an expected tool is a name, not a glob)"
        ));
    };
    if let Some(glob) = case.run.forbidden.iter().find(|glob| glob_matches(glob, tool)) {
        return Action::Refused(format!(
            "not sent: the case forbids it (forbid_tools `{glob}`), so no trial can make this call"
        ));
    }
    if let Some(visible) = &case.run.visible
        && !visible.iter().any(|glob| glob_matches(glob, tool))
    {
        return Action::Refused(
            "not sent: the case's `tools:` hides it from the model, so no trial can make this call".into(),
        );
    }
    let mut arguments = Map::new();
    let mut inexact = Vec::new();
    for (name, matcher) in args.into_iter().flat_map(Args::iter) {
        match matcher.mode.as_str() {
            "exact" | "auto" => {
                arguments.insert(name.clone(), matcher.value.clone().unwrap_or(Value::Null));
            }
            "absent" => {}
            mode => inexact.push(format!("`{name}` (a `{mode}` matcher)")),
        }
    }
    if !inexact.is_empty() {
        return Action::NotExecuted(format!("not executed: no exact value to send for {}", inexact.join(", ")));
    }
    let arguments = Value::Object(arguments);
    match ArgumentValidator::new(&listed.input_schema).validate(&arguments) {
        // A schema that cannot be compiled checks nothing, as in layer 1: the call is sent.
        Validation::Valid | Validation::SchemaUnusable(_) => Action::Send(arguments),
        Validation::Invalid(problems) => {
            let reasons = problems.join("; ");
            // Problems with the whole object (a required argument the set does not give, say)
            // are what a model adds to, unless the case forbids extra arguments; a problem with
            // a value the set gives is one no trial can avoid.
            let of_the_object =
                problems.iter().all(|problem| problem.starts_with("`(root)`") || problem.starts_with("… and "));
            if of_the_object && !case.expect.forbid_extra_args {
                Action::NotExecuted(format!(
                    "not executed: the tool's inputSchema needs more than the set gives ({reasons}); a model chooses the rest"
                ))
            } else {
                Action::Refused(format!(
                    "not sent: the set's arguments break the tool's inputSchema ({reasons}), so no trial can pass with them"
                ))
            }
        }
    }
}

/// [`Action::Skipped`] when `tool` may change or delete data and `sends` does not allow it.
fn skip_destructive(tool: &str, surface: &ToolSurface, sends: Sends) -> Option<Action> {
    if sends == Sends::Destructive {
        return None;
    }
    let listed = surface.tools.iter().find(|listed| listed.name == tool)?;
    destructive(listed).map(|why| {
        Action::Skipped(format!(
            "skipped: {why}; `golden check --execute-destructive` sends it (against a test deployment)"
        ))
    })
}

/// What the calls gave, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    /// Expected calls.
    pub expected: usize,
    /// Sent.
    pub sent: usize,
    /// Sent and answered with a result that is not `isError`.
    pub ok: usize,
    /// Answered with `isError: true`.
    pub is_error: usize,
    /// Answered with a JSON-RPC error.
    pub rpc_error: usize,
    /// No answer, or input requests the case could not answer.
    pub no_answer: usize,
    /// Not sent: the set cannot be passed with them.
    pub refused: usize,
    /// Not executed, the skipped ones included.
    pub not_executed: usize,
    /// Of those not executed, skipped: the tool may change or delete data.
    pub skipped: usize,
}

impl Tally {
    /// True when a call failed or could not be passed: exit status 1.
    pub(crate) fn failed(&self) -> bool {
        self.is_error + self.rpc_error + self.no_answer + self.refused > 0
    }

    /// The summary line.
    fn line(&self) -> String {
        let skipped = if self.skipped > 0 {
            format!(
                " ({} skipped: a tool that may change or delete data; --execute-destructive sends it)",
                self.skipped
            )
        } else {
            String::new()
        };
        format!(
            "summary: {} expected call(s): {} sent ({} ok, {} isError, {} JSON-RPC error, {} no answer), {} not sent (the set cannot pass them), {} not executed{skipped}",
            self.expected,
            self.sent,
            self.ok,
            self.is_error,
            self.rpc_error,
            self.no_answer,
            self.refused,
            self.not_executed
        )
    }
}

/// Sends every call [`plan_with`] allows over `connected`, printing each line on stdout as it is
/// known, then the summary; secrets in what the server answered are redacted.
pub(crate) async fn run(
    set: &GoldenSet,
    connected: &Connected,
    surface: &ToolSurface,
    redactor: &Redactor,
    sends: Sends,
) -> Tally {
    run_sending(set, connected, surface, redactor, sends, &mut say).await
}

/// [`run`], each line given to `say` instead of stdout, and the calls of tools that may destroy
/// data skipped (the Action keeps the lines for its report).
pub(crate) async fn run_into(
    set: &GoldenSet,
    connected: &Connected,
    surface: &ToolSurface,
    redactor: &Redactor,
    say: &mut (dyn FnMut(&str) + Send),
) -> Tally {
    run_sending(set, connected, surface, redactor, Sends::Safe, say).await
}

/// [`run_into`] with `sends` deciding about the tools that may destroy data.
async fn run_sending(
    set: &GoldenSet,
    connected: &Connected,
    surface: &ToolSurface,
    redactor: &Redactor,
    sends: Sends,
    say: &mut (dyn FnMut(&str) + Send),
) -> Tally {
    let tools = McpTools::new(connected.client.clone(), connected.era);
    let mut tally = Tally::default();
    say("execute: each expected call of the set, sent once for real (no model)");
    let entries = plan_with(set, surface, sends);
    let mut sessions: Vec<Option<Session<'_>>> =
        set.cases.iter().map(|case| case.inputs.as_ref().map(Session::new)).collect();
    for entry in entries {
        let expected = match entry {
            Entry::Note(text) => {
                (say)(&text);
                continue;
            }
            Entry::Call(expected) => expected,
        };
        tally.expected += 1;
        let arguments = match expected.action {
            Action::Send(arguments) => arguments,
            Action::Refused(why) => {
                tally.refused += 1;
                (say)(&format!("{}: {} → {why}", expected.label, expected.tool));
                continue;
            }
            Action::NotExecuted(why) => {
                tally.not_executed += 1;
                (say)(&format!("{}: {} → {why}", expected.label, expected.tool));
                continue;
            }
            Action::Skipped(why) => {
                tally.not_executed += 1;
                tally.skipped += 1;
                (say)(&format!("{}: {} → {why}", expected.label, expected.tool));
                continue;
            }
        };
        let id = set.cases.get(expected.case).map(|case| case.id.clone()).unwrap_or_default();
        let trial = crate::events::TrialRef { case: id, model: "none".into(), trial: 1 };
        let at = CallSite { trial: &trial, turn: 1, trace: None };
        let inputs = sessions.get_mut(expected.case).and_then(Option::as_mut);
        tally.sent += 1;
        let outcome = tools.call(at, &expected.tool, &arguments, inputs).await;
        let result = match outcome {
            ToolOutcome::Result { is_error: false, latency_ms, .. } => {
                tally.ok += 1;
                format!("ok ({latency_ms} ms)")
            }
            ToolOutcome::Result { is_error: true, text, latency_ms, note, .. } => {
                tally.is_error += 1;
                let first = note.as_deref().unwrap_or(&text).lines().next().unwrap_or("").to_owned();
                let shown = crate::text::clip_chars(&redactor.redact(&first), ERROR_SHOWN);
                format!("isError: {shown} ({latency_ms} ms){}", made_up_hint(&arguments))
            }
            ToolOutcome::Error { message, latency_ms, .. } => {
                tally.rpc_error += 1;
                format!("{} ({latency_ms} ms)", crate::text::clip_chars(&redactor.redact(&message), ERROR_SHOWN))
            }
            ToolOutcome::Failed { reason, latency_ms } => {
                tally.no_answer += 1;
                let reason = reason.split_once("got no answer: ").map_or(reason.as_str(), |(_, rest)| rest);
                format!("no answer: {} ({latency_ms} ms)", redactor.redact(reason))
            }
            ToolOutcome::Stopped { reason, latency_ms, .. } => {
                tally.no_answer += 1;
                format!("stopped: {} ({latency_ms} ms)", redactor.redact(&reason))
            }
            ToolOutcome::Injected { .. } => unreachable!("no fault layer wraps these calls"),
        };
        let shown = crate::text::clip_chars(&arguments.to_string(), ARGUMENTS_SHOWN);
        (say)(&format!("{}: {} {shown} → {result}", expected.label, expected.tool));
    }
    (say)(&tally.line());
    tally
}

/// One line on stdout, written at once (the calls may take a while).
fn say(line: &str) {
    let mut stdout = std::io::stdout();
    let _ = writeln!(stdout, "{line}");
    let _ = stdout.flush();
}

/// After an `isError` to a call whose arguments hold an id `golden init` made up: what to do.
fn made_up_hint(arguments: &Value) -> String {
    let names = super::init::made_up_names(arguments);
    if names.is_empty() {
        return String::new();
    }
    let names = names.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", ");
    format!(
        "; {names}: a made-up id `golden init` drafted: give one your test deployment has, or create the record first in an `expect_sequence` (docs/golden-sets.md)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_is_error_to_a_made_up_id_says_what_to_do() {
        let hint = made_up_hint(&serde_json::json!({"note_id": 990_002, "title": "groceries"}));
        assert!(hint.contains("`note_id`: a made-up id `golden init` drafted"), "{hint}");
        assert!(hint.contains("`expect_sequence`"), "{hint}");
        assert!(made_up_hint(&serde_json::json!({"id": "draft-id-990003"})).contains("`id`"));
        assert!(made_up_hint(&serde_json::json!({"id": "00000000-0000-4000-8000-000000990004"})).contains("`id`"));
        assert_eq!(made_up_hint(&serde_json::json!({"note_id": 7})), "");
    }
    use serde_json::json;

    fn set(yaml: &str) -> GoldenSet {
        crate::golden::load::parse(std::path::Path::new("set.yaml"), yaml).expect("a valid set")
    }

    fn surface() -> ToolSurface {
        let mut surface = ToolSurface::default();
        surface.add_page(&json!({"tools": [
            {"name": "echo", "annotations": {"readOnlyHint": true}, "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
            {"name": "region", "annotations": {"readOnlyHint": true}, "inputSchema": {"type": "object", "properties": {"region": {"type": "string"}, "unit": {"enum": ["c", "f"]}}, "required": ["region"]}},
            {"name": "delete_all", "inputSchema": {"type": "object"}},
        ]}));
        surface
    }

    fn actions(yaml: &str) -> Vec<(String, Action)> {
        plan(&set(yaml), &surface())
            .into_iter()
            .filter_map(|entry| match entry {
                Entry::Call(expected) => Some((expected.label, expected.action)),
                Entry::Note(_) => None,
            })
            .collect()
    }

    fn notes(yaml: &str) -> Vec<String> {
        plan(&set(yaml), &surface())
            .into_iter()
            .filter_map(|entry| match entry {
                Entry::Note(text) => Some(text),
                Entry::Call(_) => None,
            })
            .collect()
    }

    #[test]
    fn exact_and_bare_values_are_sent_as_written_and_absent_ones_left_out() {
        let got = actions(
            "version: 1\ncases:\n  - id: a\n    prompt: p\n    expect_tool: region\n    expect_args:\n      region: eu\n      unit: {match: exact, value: c}\n      other: {match: absent}\n",
        );
        assert_eq!(got, vec![("case a".into(), Action::Send(json!({"region": "eu", "unit": "c"})))]);
        // No expected arguments: an empty object.
        let got = actions("version: 1\ncases:\n  - id: a\n    prompt: p\n    expect_tool: echo\n");
        assert_eq!(got, vec![("case a".into(), Action::Send(json!({})))]);
    }

    #[test]
    fn a_value_under_another_matcher_is_not_executed_and_named() {
        let got = actions(
            "version: 1\ncases:\n  - id: a\n    prompt: p\n    expect_sequence:\n      steps:\n        - tool: echo\n          args: {text: {match: regex, pattern: 'h.*'}}\n        - tool: echo\n          args: {text: hi}\n",
        );
        let Action::NotExecuted(why) = &got[0].1 else { panic!("{got:?}") };
        assert_eq!(got[0].0, "case a step 1");
        assert!(why.contains("`text` (a `regex` matcher)"), "{why}");
        assert_eq!(got[1], ("case a step 2".into(), Action::Send(json!({"text": "hi"}))));
        // A default matcher that is not exact makes bare values inexact too.
        let got = actions(
            "version: 1\ndefaults: {arg_match: normalized}\ncases:\n  - id: a\n    prompt: p\n    expect_tool: echo\n    expect_args: {text: hi}\n",
        );
        assert!(
            matches!(&got[0].1, Action::NotExecuted(why) if why.contains("`text` (a `normalized` matcher)")),
            "{got:?}"
        );
    }

    #[test]
    fn a_required_argument_the_set_leaves_out_is_not_executed_but_a_bad_value_fails() {
        let got = actions("version: 1\ncases:\n  - id: a\n    prompt: p\n    expect_tool: region\n");
        assert!(
            matches!(&got[0].1, Action::NotExecuted(why) if why.contains("\"region\" is a required property")),
            "{got:?}"
        );
        let forbid = "version: 1\ncases:\n  - id: a\n    prompt: p\n    extra_args: forbid\n    expect_tool: region\n    expect_args: {unit: c}\n";
        assert!(matches!(&actions(forbid)[0].1, Action::Refused(_)), "no model may add it");
        let bad = "version: 1\ncases:\n  - id: a\n    prompt: p\n    expect_tool: region\n    expect_args: {region: eu, unit: k}\n";
        let got = actions(bad);
        assert!(matches!(&got[0].1, Action::Refused(why) if why.contains("`/unit`")), "{got:?}");
    }

    #[test]
    fn a_forbidden_or_hidden_expected_tool_is_refused_and_forbidden_tools_are_never_sent() {
        let got = actions(
            "version: 1\ncases:\n  - id: a\n    prompt: p\n    expect_tool: delete_all\n    forbid_tools: ['delete_*']\n  - id: b\n    prompt: p\n    tools: [echo]\n    expect_tool: region\n    expect_args: {region: eu}\n",
        );
        assert!(matches!(&got[0].1, Action::Refused(why) if why.contains("forbid_tools `delete_*`")), "{got:?}");
        assert!(matches!(&got[1].1, Action::Refused(why) if why.contains("`tools:` hides it")), "{got:?}");
        let yaml = "version: 1\ncases:\n  - id: safe\n    prompt: p\n    forbid_tools: [delete_all]\n  - id: thanks\n    prompt: p\n    negative: true\n";
        assert!(actions(yaml).is_empty(), "nothing to send");
        assert_eq!(
            notes(yaml),
            vec![
                "case safe: no expected call → nothing sent".to_owned(),
                "case safe: forbid_tools `delete_all` → never called".to_owned(),
                "case thanks: negative (expects no tool call) → nothing sent".to_owned(),
            ]
        );
    }

    #[test]
    fn a_tally_fails_on_any_error_or_refusal_only() {
        assert!(!Tally { expected: 3, sent: 2, ok: 2, not_executed: 1, ..Tally::default() }.failed());
        for failed in [
            Tally { is_error: 1, ..Tally::default() },
            Tally { rpc_error: 1, ..Tally::default() },
            Tally { no_answer: 1, ..Tally::default() },
            Tally { refused: 1, ..Tally::default() },
        ] {
            assert!(failed.failed(), "{failed:?}");
        }
    }

    fn annotated(name: &str, annotations: Option<Value>) -> serde_json::Value {
        let mut tool =
            json!({"name": name, "inputSchema": {"type": "object", "properties": {"id": {"type": "integer"}}}});
        if let Some(annotations) = annotations {
            tool["annotations"] = annotations;
        }
        tool
    }

    #[test]
    fn a_tool_that_may_destroy_data_is_skipped_with_its_reason_unless_asked_for() {
        let mut surface = ToolSurface::default();
        surface.add_page(&json!({"tools": [
            annotated("delete_todo", Some(json!({"destructiveHint": true}))),
            annotated("complete_todo", None),
            annotated("get_todo", Some(json!({"readOnlyHint": true}))),
            annotated("add_todo", Some(json!({"destructiveHint": false}))),
            annotated("purge", Some(json!({"readOnlyHint": true, "destructiveHint": true}))),
        ]}));
        let yaml = "version: 1\ncases:\n  - {id: a, prompt: p, expect_tool: delete_todo, expect_args: {id: 7}}\n  - {id: b, prompt: p, expect_tool: complete_todo, expect_args: {id: 7}}\n  - {id: c, prompt: p, expect_tool: get_todo, expect_args: {id: 7}}\n  - {id: d, prompt: p, expect_tool: add_todo, expect_args: {id: 7}}\n  - {id: e, prompt: p, expect_tool: purge}\n";
        let set = set(yaml);
        let got: Vec<Action> = plan(&set, &surface)
            .into_iter()
            .filter_map(|entry| match entry {
                Entry::Call(expected) => Some(expected.action),
                Entry::Note(_) => None,
            })
            .collect();
        assert!(
            matches!(&got[0], Action::Skipped(why) if why.contains("annotated `destructiveHint: true`") && why.contains("--execute-destructive")),
            "{got:?}"
        );
        // No annotation: MCP presumes a tool that is not read-only may destroy data.
        assert!(
            matches!(&got[1], Action::Skipped(why) if why.contains("not annotated `readOnlyHint: true`") && why.contains("--execute-destructive")),
            "{got:?}"
        );
        assert_eq!(got[2], Action::Send(json!({"id": 7})), "read-only");
        assert_eq!(got[3], Action::Send(json!({"id": 7})), "destructiveHint: false only adds");
        // readOnlyHint wins: destructiveHint means nothing on a read-only tool.
        assert_eq!(got[4], Action::Send(json!({})));
        let all: Vec<Action> = plan_with(&set, &surface, Sends::Destructive)
            .into_iter()
            .filter_map(|entry| match entry {
                Entry::Call(expected) => Some(expected.action),
                Entry::Note(_) => None,
            })
            .collect();
        assert!(all.iter().all(|action| matches!(action, Action::Send(_))), "{all:?}");
    }

    #[test]
    fn a_skipped_call_is_neutral_and_the_summary_counts_it() {
        let tally = Tally { expected: 2, sent: 1, ok: 1, not_executed: 1, skipped: 1, ..Tally::default() };
        assert!(!tally.failed());
        assert!(
            tally.line().ends_with(
                ", 1 not executed (1 skipped: a tool that may change or delete data; --execute-destructive sends it)"
            ),
            "{}",
            tally.line()
        );
    }
}
