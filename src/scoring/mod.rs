//! Deterministic scoring of layer 1 (golden sets): pure functions from a typed case
//! ([`crate::golden::Case`], its [`crate::golden::Expect`]) and a trial's [`Trace`] to a
//! [`TrialScore`], and from a case's trial scores to a [`CaseScore`]. No IO, no model.
//!
//! A trial passes when every criterion that applies passes (and at least one was graded):
//!
//! - `finished`: the trial ended with a final answer; a trial stopped by `max_turns` or the timeout
//!   fails (its calls are still graded). A trial that ended in an error (provider, server, ours)
//!   is neither a pass nor a fail: it is left out of the case's count.
//! - `selection` (`expect_tool`): with `expect_tool_position: first` (the default) the trial's first
//!   tool call names the tool; with `any`, some call does.
//! - `arguments` (`expect_args`, see [`matchers`]): checked on the call the selection accepted
//!   (`first`: the first call; `any`: every call to the tool, passing when one matches — the first
//!   call's checks explain a failure); with `extra_args: forbid` an argument the case does not
//!   name fails. `embedding` and `judge` matchers read the models' answers resolved before
//!   scoring ([`semantic`], carried in the [`Trace`]); when a model could not answer, the check
//!   is `error` and so is the trial (unless another criterion failed): never a pass.
//!
//!   The tool's own `inputSchema` is an expectation of every case with `expect_tool`, with or
//!   without `expect_args`: when the accepted call was refused by the harness (its arguments were
//!   not JSON or broke the schema: [`Call::refused`]), the criterion fails with the schema error
//!   as its reason, unless the model corrected it — a later call of the same tool that was sent
//!   (`first`), or another accepted call that was sent (`any`). A corrected refusal is a note in
//!   the criterion's reason, not a failure, and `expect_args` is checked on the sent call(s)
//!   only. Without a refusal and without `expect_args`, the criterion does not apply.
//! - `sequence` (`expect_sequence`): `strict` — exactly these calls, in this order; `subsequence`
//!   — these calls in this order, others allowed between them; `unordered` — each step matched
//!   by a different call, in any order, others allowed. In every mode the calls of one model turn
//!   (parallel calls) may match in any order among themselves. A step with `args` matches a call
//!   only when its arguments do (and `extra_args: forbid` applies).
//! - `no_tool_call` (`negative: true`): any tool call is over-triggering and fails.
//! - `forbidden` (`forbid_tools`): any call to a listed tool (or glob) fails.
//! - `judge` (`rubric`): skipped until the judge grades the trial ([`NO_JUDGE`] when none does).
//!
//! A case counts the passes k among the N trials that completed (not `error`); it passes when
//! k ≥ its threshold (`hard`: every requested trial; `soft`: `pass_threshold`), and is `error` when
//! fewer than the threshold completed, so one trial never passes a case that asked for more.

pub(crate) mod attack;
pub(crate) mod judge;
pub(crate) mod matchers;
pub(crate) mod outcome;
pub(crate) mod semantic;

#[cfg(test)]
mod tests;

use chrono::NaiveDate;
use serde_json::Value;

use crate::golden::{Args, Case, Sequence, Step, Trials, glob_matches};
pub(crate) use matchers::{ArgCheck, Verdict};

/// One tool call of a trial, in the neutral form scoring reads.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Call {
    /// The MCP name of the tool.
    pub name: String,
    /// The arguments as the model sent them.
    pub arguments: Value,
    /// The model turn (0-based) it came in: calls of one turn were emitted together.
    pub turn: usize,
    /// Set when the harness refused to send it because its arguments were not JSON or broke the
    /// tool's original `inputSchema`: the refusal in words (the schema error included).
    pub refused: Option<String>,
}

impl Call {
    /// A call of turn `turn` that was sent (or could have been: nothing refused its arguments).
    pub(crate) fn new(name: impl Into<String>, arguments: Value, turn: usize) -> Self {
        Self { name: name.into(), arguments, turn, refused: None }
    }

    /// The same call, refused for its arguments with `reason`.
    pub(crate) fn refused_with(self, reason: impl Into<String>) -> Self {
        Self { refused: Some(reason.into()), ..self }
    }
}

/// How a trial ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The model gave a final answer.
    Answer,
    /// The trial hit `max_turns`.
    MaxTurns,
    /// The trial hit `timeout_ms`.
    Timeout,
    /// The server broke the trial (an input request it may not make): it fails with this reason.
    Broken(String),
    /// Something broke (provider, server, harness): the trial is neither a pass nor a fail.
    Error(String),
}

/// What a trial did: its tool calls in order and how it ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Trace {
    /// The tool calls, in the order the model made them.
    pub calls: Vec<Call>,
    /// How the trial ended.
    pub ending: Ending,
    /// What the models said of the trial's `embedding` and `judge` checks
    /// ([`semantic::requests`], resolved by the runner); empty when the case has none.
    pub semantic: semantic::SemanticVerdicts,
}

/// The criteria a trial is graded on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CriterionKind {
    /// The trial ended with a final answer.
    Finished,
    /// `expect_tool`.
    Selection,
    /// `expect_args`.
    Arguments,
    /// `expect_sequence`.
    Sequence,
    /// `negative: true`: no tool call.
    NoToolCall,
    /// `forbid_tools`.
    Forbidden,
    /// `rubric`.
    Judge,
}

impl CriterionKind {
    /// Its name in reports.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Finished => "finished",
            Self::Selection => "selection",
            Self::Arguments => "arguments",
            Self::Sequence => "sequence",
            Self::NoToolCall => "no_tool_call",
            Self::Forbidden => "forbidden",
            Self::Judge => "judge",
        }
    }
}

/// One criterion of a trial: its verdict and why.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Criterion {
    /// Which criterion.
    pub kind: CriterionKind,
    /// Pass, fail or skipped.
    pub verdict: Verdict,
    /// Why, in words a user can act on.
    pub reason: String,
    /// For `arguments`: the verdict on each argument.
    pub args: Vec<ArgCheck>,
}

impl Criterion {
    fn new(kind: CriterionKind, verdict: Verdict, reason: impl Into<String>) -> Self {
        Self { kind, verdict, reason: reason.into(), args: Vec::new() }
    }
}

/// A trial's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TrialVerdict {
    /// Every criterion that applies passed.
    Pass,
    /// A criterion failed.
    Fail,
    /// The trial ended in an error: neither pass nor fail.
    Error,
    /// Nothing was graded (every criterion skipped, e.g. a case with a rubric only).
    Ungraded,
}

/// One trial, scored.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TrialScore {
    /// The verdict.
    pub verdict: TrialVerdict,
    /// Each criterion that applies, in a fixed order.
    pub criteria: Vec<Criterion>,
    /// For an `error` trial, what broke.
    pub error: Option<String>,
}

impl TrialScore {
    /// The criterion of that kind, when it applies.
    pub(crate) fn criterion(&self, kind: CriterionKind) -> Option<&Criterion> {
        self.criteria.iter().find(|criterion| criterion.kind == kind)
    }
}

/// Scores one trial of `case` (what it expects, its limits). `today` is the run's start date in
/// the set's timezone, for relative `datetime` values (`tomorrow`, `+3d`).
pub(crate) fn score_trial(case: &Case, trace: &Trace, today: NaiveDate) -> TrialScore {
    if let Ending::Error(error) = &trace.ending {
        return TrialScore { verdict: TrialVerdict::Error, criteria: Vec::new(), error: Some(error.clone()) };
    }
    let expect = &case.expect;
    let forbid_extra = expect.forbid_extra_args;
    let calls = &trace.calls;
    let semantic = &trace.semantic;
    let mut criteria = Vec::new();
    criteria.push(match trace.ending {
        Ending::MaxTurns => Criterion::new(
            CriterionKind::Finished,
            Verdict::Fail,
            format!(
                "the trial hit max_turns ({}) before a final answer (after {} tool call(s)); the model may be \
                 looping — check the tool results, or raise `max_turns`",
                case.run.max_turns,
                calls.len()
            ),
        ),
        Ending::Timeout => Criterion::new(
            CriterionKind::Finished,
            Verdict::Fail,
            format!(
                "the trial timed out after {} ms before a final answer; raise `timeout_ms` or check for slow tools",
                case.run.timeout_ms
            ),
        ),
        Ending::Broken(ref reason) => {
            Criterion::new(CriterionKind::Finished, Verdict::Fail, format!("the trial was stopped: {reason}"))
        }
        _ => Criterion::new(CriterionKind::Finished, Verdict::Pass, "the trial ended with a final answer"),
    });

    if let Some(expected_tool) = &expect.tool {
        let tool = expected_tool.name.as_str();
        let (selection, accepted) = selection(tool, expected_tool.any_position, calls);
        criteria.push(selection);
        let expected = expected_tool.args.as_ref();
        let checked = Checked::of(tool, &accepted, calls);
        if expected.is_some() || !checked.refused.is_empty() {
            criteria.push(arguments(tool, expected, &checked, forbid_extra, today, semantic));
        }
    }
    if let Some(sequence) = &expect.sequence {
        criteria.push(sequence_criterion(sequence, calls, forbid_extra, today, semantic));
    }
    if expect.negative {
        criteria.push(if calls.is_empty() {
            Criterion::new(CriterionKind::NoToolCall, Verdict::Pass, "no tool was called")
        } else {
            Criterion::new(
                CriterionKind::NoToolCall,
                Verdict::Fail,
                format!(
                    "over-triggering: the model called {} where no tool call was expected; make the tool \
                     descriptions say when not to use them",
                    names(calls.iter())
                ),
            )
        });
    }
    if let Some(forbidden) = &expect.forbid_tools {
        let patterns: Vec<&str> = forbidden.iter().map(String::as_str).collect();
        let hits: Vec<String> = calls
            .iter()
            .filter_map(|call| {
                let pattern = patterns.iter().find(|pattern| glob_matches(pattern, &call.name))?;
                Some(if *pattern == call.name {
                    format!("`{}`", call.name)
                } else {
                    format!("`{}` (matches `{pattern}`)", call.name)
                })
            })
            .collect();
        criteria.push(if hits.is_empty() {
            Criterion::new(CriterionKind::Forbidden, Verdict::Pass, "no forbidden tool was called")
        } else {
            Criterion::new(
                CriterionKind::Forbidden,
                Verdict::Fail,
                format!("called forbidden tool(s) {}", hits.join(", ")),
            )
        });
    }
    if expect.rubric {
        criteria.push(Criterion::new(CriterionKind::Judge, Verdict::Skipped, NO_JUDGE));
    }

    let (verdict, error) = verdict_of(&criteria);
    TrialScore { verdict, criteria, error }
}

/// A trial's verdict from its criteria: `fail` when one failed, else `error` (with its reason)
/// when a model-graded check could not be graded, `pass` when one besides `finished` passed,
/// else ungraded.
fn verdict_of(criteria: &[Criterion]) -> (TrialVerdict, Option<String>) {
    let failed = criteria.iter().any(|criterion| criterion.verdict == Verdict::Fail);
    let error = criteria.iter().find(|criterion| criterion.verdict == Verdict::Error);
    let graded = criteria
        .iter()
        .any(|criterion| criterion.kind != CriterionKind::Finished && criterion.verdict == Verdict::Pass);
    if failed {
        (TrialVerdict::Fail, None)
    } else if let Some(error) = error {
        (TrialVerdict::Error, Some(format!("{}: {}", semantic::ARGUMENT_CHECK_ERROR, error.reason)))
    } else if graded {
        (TrialVerdict::Pass, None)
    } else {
        (TrialVerdict::Ungraded, None)
    }
}

/// What the rubric judge said of a trial.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum JudgeResult {
    /// Every must and enough shoulds passed.
    Pass,
    /// The rubric failed, with the reason.
    Fail(String),
    /// The judge itself failed (`judge_error`): the trial is neither a pass nor a fail.
    Error(String),
}

impl TrialScore {
    /// The trial's score with the rubric judge's result in its `judge` criterion.
    pub(crate) fn with_judge(mut self, judged: &JudgeResult) -> Self {
        if self.verdict == TrialVerdict::Error {
            return self;
        }
        if let JudgeResult::Error(reason) = judged {
            for criterion in self.criteria.iter_mut().filter(|criterion| criterion.kind == CriterionKind::Judge) {
                criterion.reason = format!("judge_error: {reason}");
            }
            return TrialScore {
                verdict: TrialVerdict::Error,
                criteria: self.criteria,
                error: Some(format!("judge_error: {reason}")),
            };
        }
        for criterion in self.criteria.iter_mut().filter(|criterion| criterion.kind == CriterionKind::Judge) {
            (criterion.verdict, criterion.reason) = match judged {
                JudgeResult::Pass => (Verdict::Pass, "the rubric passed (every must, enough shoulds)".to_owned()),
                JudgeResult::Fail(reason) => (Verdict::Fail, reason.clone()),
                JudgeResult::Error(_) => unreachable!("handled above"),
            };
        }
        (self.verdict, self.error) = verdict_of(&self.criteria);
        self
    }
}

/// The rubric criterion's reason until the judge has graded the trial (and for good when no
/// judge model was given).
pub(crate) const NO_JUDGE: &str = "the rubric is not graded: no judge model was given (--judge-model)";

/// `` `a`, `b` `` for a list of calls.
fn names<'a>(calls: impl Iterator<Item = &'a Call>) -> String {
    calls.map(|call| format!("`{}`", call.name)).collect::<Vec<_>>().join(", ")
}

/// The selection criterion and the calls it accepts (whose arguments are checked).
fn selection<'a>(tool: &str, any: bool, calls: &'a [Call]) -> (Criterion, Vec<&'a Call>) {
    let to_tool: Vec<&Call> = calls.iter().filter(|call| call.name == tool).collect();
    let kind = CriterionKind::Selection;
    let Some(first) = calls.first() else {
        return (
            Criterion::new(kind, Verdict::Fail, format!("no tool was called; expected a call to `{tool}`")),
            Vec::new(),
        );
    };
    if first.name == tool {
        let accepted = if any { to_tool } else { vec![first] };
        return (Criterion::new(kind, Verdict::Pass, format!("the first call was `{tool}`")), accepted);
    }
    if any && !to_tool.is_empty() {
        let position = calls.iter().position(|call| call.name == tool).unwrap_or(0) + 1;
        return (Criterion::new(kind, Verdict::Pass, format!("`{tool}` was called (call {position})")), to_tool);
    }
    let reason = match calls.iter().position(|call| call.name == tool) {
        Some(index) => format!(
            "the first call was `{}`, not `{tool}` (it came as call {}); set `expect_tool_position: any` if the \
             order does not matter",
            first.name,
            index + 1
        ),
        None => format!("`{tool}` was never called; the model called {}", names(calls.iter())),
    };
    (Criterion::new(kind, Verdict::Fail, reason), Vec::new())
}

/// The calls the arguments criterion reads: the accepted calls that were sent, and the refused
/// ones (1-based call number, call) with what corrected them.
struct Checked<'a> {
    /// Accepted calls that were sent, and for `first` a refused first call's correction (the
    /// next call of the same tool that was sent).
    sent: Vec<&'a Call>,
    /// Accepted calls refused for their arguments: (1-based position in the trial, the call).
    refused: Vec<(usize, &'a Call)>,
    /// The 1-based positions of the calls in `sent`.
    sent_at: Vec<usize>,
}

impl<'a> Checked<'a> {
    fn of(tool: &str, accepted: &[&'a Call], calls: &'a [Call]) -> Self {
        let position = |call: &Call| calls.iter().position(|other| std::ptr::eq(other, call)).unwrap_or(0) + 1;
        let mut checked = Checked { sent: Vec::new(), refused: Vec::new(), sent_at: Vec::new() };
        for call in accepted {
            match call.refused {
                Some(_) => checked.refused.push((position(call), call)),
                None => {
                    checked.sent_at.push(position(call));
                    checked.sent.push(call);
                }
            }
        }
        // `first` accepts one call: when it was refused, the correction is the next call of the
        // same tool that was sent (`any` accepts every call to the tool: it is among them).
        if checked.sent.is_empty() {
            if let Some(&(at, _)) = checked.refused.first() {
                if let Some(offset) = calls[at..].iter().position(|call| call.name == tool && call.refused.is_none()) {
                    checked.sent_at.push(at + offset + 1);
                    checked.sent.push(&calls[at + offset]);
                }
            }
        }
        checked
    }

    /// The note on refused calls that a sent call corrected, or `None` when nothing was refused.
    fn note(&self, tool: &str) -> Option<String> {
        let (at, call) = self.refused.first()?;
        let reason = call.refused.as_deref().unwrap_or_default();
        let more = match self.refused.len() {
            1 => String::new(),
            n => format!(" (and {} more refused call(s))", n - 1),
        };
        let fixed = self.sent_at.iter().map(|at| format!("call {at}")).collect::<Vec<_>>().join(", ");
        Some(format!("note: call {at} to `{tool}` was not sent ({reason}){more}; {fixed} to `{tool}` was sent"))
    }
}

/// The arguments criterion over the accepted calls. A refused call that no sent call corrected
/// fails it with the refusal (the schema error). Otherwise, with `expect_args`, it passes when
/// one sent call matches; `error` when none matched and one could not be graded (a model-graded
/// check without an answer) though nothing else of it failed. A corrected refusal is a note in
/// the reason.
fn arguments(
    tool: &str,
    expected: Option<&Args>,
    checked: &Checked<'_>,
    forbid_extra: bool,
    today: NaiveDate,
    semantic: &semantic::SemanticVerdicts,
) -> Criterion {
    let kind = CriterionKind::Arguments;
    let accepted = &checked.sent;
    if accepted.is_empty() {
        if let Some((at, call)) = checked.refused.first() {
            let reason = call.refused.as_deref().unwrap_or_default();
            let more = match checked.refused.len() {
                1 => String::new(),
                n => format!("; {} call(s) to `{tool}` were refused, none was sent", n),
            };
            return Criterion::new(kind, Verdict::Fail, format!("call {at} to `{tool}` was not sent: {reason}{more}"));
        }
        return Criterion::new(kind, Verdict::Skipped, format!("not checked: no accepted call to `{tool}`"));
    }
    let note = checked.note(tool);
    let noted = |reason: String| match &note {
        Some(note) => format!("{reason}; {note}"),
        None => reason,
    };
    let Some(expected) = expected else {
        // Only a corrected refusal brings the criterion in without `expect_args`.
        return Criterion::new(kind, Verdict::Pass, noted(format!("the corrected call to `{tool}` was sent")));
    };
    let mut first_checks = None;
    let mut ungraded = None;
    for call in accepted {
        let checks = matchers::check_args(expected, &call.arguments, forbid_extra, today, semantic);
        if checks.iter().any(|check| check.verdict == Verdict::Fail) {
            first_checks.get_or_insert(checks);
            continue;
        }
        if checks.iter().any(|check| check.verdict == Verdict::Error) {
            ungraded.get_or_insert(checks);
            continue;
        }
        // A model-graded match says what the model said (the cosine, the judge's reason).
        let graded: Vec<String> = checks
            .iter()
            .filter(|check| matches!(check.mode.as_str(), "embedding" | "judge"))
            .map(|check| format!("`{}`: {}", check.name, check.reason))
            .collect();
        let reason = if graded.is_empty() {
            "every expected argument matched".to_owned()
        } else {
            format!("every expected argument matched; {}", graded.join("; "))
        };
        return Criterion { kind, verdict: Verdict::Pass, reason: noted(reason), args: checks };
    }
    if let Some(checks) = ungraded {
        let errors: Vec<&str> =
            checks.iter().filter(|check| check.verdict == Verdict::Error).map(|check| check.reason.as_str()).collect();
        return Criterion { kind, verdict: Verdict::Error, reason: noted(errors.join("; ")), args: checks };
    }
    let checks = first_checks.unwrap_or_default();
    let failures: Vec<&str> =
        checks.iter().filter(|check| check.verdict == Verdict::Fail).map(|check| check.reason.as_str()).collect();
    let prefix = if accepted.len() > 1 {
        format!("none of the {} calls to `{tool}` matched; the first: ", accepted.len())
    } else {
        String::new()
    };
    Criterion { kind, verdict: Verdict::Fail, reason: noted(format!("{prefix}{}", failures.join("; "))), args: checks }
}

/// Does `call` satisfy `step` (its tool and, when given, its arguments)?
/// `Err` with the reason when it cannot tell (a model-graded check without an answer, and no
/// check of the step failed).
fn step_matches(
    step: &Step,
    call: &Call,
    forbid_extra: bool,
    today: NaiveDate,
    semantic: &semantic::SemanticVerdicts,
) -> Result<bool, Ungraded> {
    if step.tool != call.name {
        return Ok(false);
    }
    let Some(args) = &step.args else { return Ok(true) };
    let checks = matchers::check_args(args, &call.arguments, forbid_extra, today, semantic);
    if checks.iter().any(|check| check.verdict == Verdict::Fail) {
        return Ok(false);
    }
    match checks.iter().find(|check| check.verdict == Verdict::Error) {
        Some(error) => Err(Ungraded(error.reason.clone())),
        None => Ok(true),
    }
}

/// A step that cannot be told to match a call: the reason of its first model-graded check
/// without an answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
struct Ungraded(String);

/// A maximum matching of the steps `rows` to the calls `cols` (`fits[step][call]`), by
/// augmenting paths: for each row, the call it got.
fn matching(fits: &[Vec<bool>], rows: &[usize], cols: &[usize]) -> Vec<Option<usize>> {
    fn augment(
        fits: &[Vec<bool>],
        rows: &[usize],
        cols: &[usize],
        row: usize,
        seen: &mut [bool],
        owner: &mut [Option<usize>],
    ) -> bool {
        for col in 0..cols.len() {
            if seen[col] || !fits[rows[row]][cols[col]] {
                continue;
            }
            seen[col] = true;
            let free = match owner[col] {
                None => true,
                Some(other) => augment(fits, rows, cols, other, seen, owner),
            };
            if free {
                owner[col] = Some(row);
                return true;
            }
        }
        false
    }
    let mut owner = vec![None; cols.len()];
    for row in 0..rows.len() {
        let mut seen = vec![false; cols.len()];
        augment(fits, rows, cols, row, &mut seen, &mut owner);
    }
    let mut got = vec![None; rows.len()];
    for (col, row) in owner.iter().enumerate() {
        if let Some(row) = row {
            got[*row] = Some(cols[col]);
        }
    }
    got
}

/// In order: can every step be given its own call, the calls' turns never going back (so the
/// calls of one turn match in any order among themselves)? The steps split into consecutive
/// blocks, one per turn, each matched inside its turn. Returns whether all steps fit and the
/// longest prefix of steps that does.
fn in_order(fits: &[Vec<bool>], calls: &[Call]) -> (bool, usize) {
    let steps = fits.len();
    let mut turns: Vec<(usize, Vec<usize>)> = Vec::new();
    for (index, call) in calls.iter().enumerate() {
        match turns.iter_mut().find(|(turn, _)| *turn == call.turn) {
            Some((_, members)) => members.push(index),
            None => turns.push((call.turn, vec![index])),
        }
    }
    turns.sort_by_key(|(turn, _)| *turn);
    // reach[i]: steps[..i] fit in the turns seen so far.
    let mut reach = vec![false; steps + 1];
    reach[0] = true;
    for (_, members) in &turns {
        let mut next = reach.clone();
        for start in (0..steps).filter(|&start| reach[start]) {
            let longest = steps.min(start + members.len());
            for (end, reached) in next.iter_mut().enumerate().take(longest + 1).skip(start + 1) {
                let block: Vec<usize> = (start..end).collect();
                // A block that does not fit makes every longer one fail too.
                if matching(fits, &block, members).iter().any(Option::is_none) {
                    break;
                }
                *reached = true;
            }
        }
        reach = next;
    }
    let best = reach.iter().rposition(|&reached| reached).unwrap_or(0);
    (reach[steps], best)
}

/// The sequence criterion.
fn sequence_criterion(
    sequence: &Sequence,
    calls: &[Call],
    forbid_extra: bool,
    today: NaiveDate,
    semantic: &semantic::SemanticVerdicts,
) -> Criterion {
    let kind = CriterionKind::Sequence;
    let order = sequence.order.as_str();
    let steps = sequence.steps.as_slice();
    // A step whose model-graded check could not be graded does not fit; when the sequence then
    // fails, the criterion is `error` (it cannot tell), not `fail`.
    let mut ungraded: Option<String> = None;
    let fits: Vec<Vec<bool>> = steps
        .iter()
        .map(|step| {
            calls
                .iter()
                .map(|call| match step_matches(step, call, forbid_extra, today, semantic) {
                    Ok(fits) => fits,
                    Err(reason) => {
                        ungraded.get_or_insert(reason.0);
                        false
                    }
                })
                .collect()
        })
        .collect();
    let wanted: Vec<String> = steps.iter().map(|step| format!("`{}`", step.tool)).collect();
    let made = if calls.is_empty() { "no call".to_owned() } else { names(calls.iter()) };
    let (found, best) = if order == "unordered" {
        let rows: Vec<usize> = (0..steps.len()).collect();
        let cols: Vec<usize> = (0..calls.len()).collect();
        let got = matching(&fits, &rows, &cols);
        let missing = got.iter().position(Option::is_none);
        (missing.is_none(), missing.unwrap_or(steps.len()))
    } else {
        in_order(&fits, calls)
    };
    let exact_count = order != "strict" || calls.len() == steps.len();
    if found && exact_count {
        return Criterion::new(
            kind,
            Verdict::Pass,
            format!("the calls matched the {order} sequence {}", wanted.join(" → ")),
        );
    }
    let reason = if found {
        format!(
            "a strict sequence allows no other call: expected exactly {} ({} call(s)), the model made {} ({}); use \
             `order: subsequence` if other calls are fine",
            wanted.join(" → "),
            steps.len(),
            made,
            calls.len()
        )
    } else {
        let failed = best.min(steps.len().saturating_sub(1));
        let step = &steps[failed];
        let tool = &step.tool;
        let place = match order {
            "unordered" => String::new(),
            _ if best == 0 => String::new(),
            _ => format!(" after step {best}"),
        };
        // Why first, then the context: a summary that shortens the reason keeps the why.
        let check =
            |args: &Args, call: &Call| matchers::check_args(args, &call.arguments, forbid_extra, today, semantic);
        let why = step_miss(step, calls, &fits[failed], check, order, best);
        format!(
            "step {} `{tool}` matched no call{place}: {why}; expected {} ({order}), the model made {made}",
            best + 1,
            wanted.join(if order == "unordered" { ", " } else { " → " }),
        )
    };
    match ungraded {
        Some(error) => Criterion::new(kind, Verdict::Error, format!("{error} (the sequence did not match without it)")),
        None => Criterion::new(kind, Verdict::Fail, reason),
    }
}

/// Why a sequence step matched no call: the model made no call of its tool; the arguments of
/// the first call of it that did not fit (each failing argument check); or its fitting call
/// came out of order (not after the previous step's, or taken by another step).
/// (`check` checks a step's arguments against a call's.)
fn step_miss(
    step: &Step,
    calls: &[Call],
    fits: &[bool],
    check: impl Fn(&Args, &Call) -> Vec<matchers::ArgCheck>,
    order: &str,
    best: usize,
) -> String {
    let same_tool: Vec<usize> = (0..calls.len()).filter(|&index| calls[index].name == step.tool).collect();
    if same_tool.is_empty() {
        return "the model made no call of it".to_owned();
    }
    let unfit = same_tool.iter().find(|&&index| !fits[index]);
    if let (Some(&index), Some(args)) = (unfit, &step.args)
        && !same_tool.iter().any(|&index| fits[index])
    {
        let checks = check(args, &calls[index]);
        let failed: Vec<String> = checks
            .iter()
            .filter(|check| check.verdict == Verdict::Fail)
            .map(
                |check| if check.name.is_empty() { check.reason.clone() } else { format!("argument {}", check.reason) },
            )
            .collect();
        let whose = if same_tool.len() == 1 { "its call has".to_owned() } else { format!("call {} has", index + 1) };
        if !failed.is_empty() {
            return format!("{whose} {}", failed.join(", "));
        }
    }
    match order {
        "unordered" => "its call is matched by another step".to_owned(),
        _ if best == 0 => "its call is matched by another step".to_owned(),
        _ => format!("its fitting call is not after step {best}'s"),
    }
}

/// k of n, as a fraction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fraction {
    /// How many.
    pub k: usize,
    /// Out of how many.
    pub n: usize,
}

#[cfg(test)]
impl Fraction {
    /// k / n (0 when n is 0).
    pub(crate) fn value(self) -> f64 {
        if self.n == 0 { 0.0 } else { self.k as f64 / self.n as f64 }
    }
}

/// A case's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CaseVerdict {
    /// At least the threshold of trials passed.
    Pass,
    /// Fewer did.
    Fail,
    /// Fewer trials than the threshold completed: no verdict.
    Error,
    /// Every completed trial was ungraded (e.g. a rubric-only case before the judge exists).
    Ungraded,
}

/// One case, scored from its trials.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CaseScore {
    /// The verdict.
    pub verdict: CaseVerdict,
    /// Passed trials (k) of the completed ones (n, `error` trials left out).
    pub passed: Fraction,
    /// Trials the case asked for.
    pub requested: usize,
    /// Trials that ended in an error.
    pub errors: usize,
    /// Passes needed.
    pub threshold: usize,
    /// Trials whose `selection` passed, of the completed ones (cases with `expect_tool`).
    pub selection: Option<Fraction>,
    /// Trials that called a tool, of the completed ones (negative cases).
    pub over_triggering: Option<Fraction>,
    /// The verdict in one sentence.
    pub reason: String,
}

/// Scores `case` from the scores of its trials; `trials` are the case's effective trials (with
/// `--runs`, [`Trials::effective`]).
pub(crate) fn score_case(case: &Case, trials: Trials, runs: &[TrialScore]) -> CaseScore {
    let (requested, hard, threshold) = (trials.runs, trials.hard, trials.threshold);
    let completed: Vec<&TrialScore> = runs.iter().filter(|run| run.verdict != TrialVerdict::Error).collect();
    let errors = runs.len() - completed.len();
    let n = completed.len();
    let k = completed.iter().filter(|run| run.verdict == TrialVerdict::Pass).count();
    let count = |kind: CriterionKind, verdict: Verdict| {
        completed.iter().filter(|run| run.criterion(kind).is_some_and(|c| c.verdict == verdict)).count()
    };
    let selection =
        case.expect.tool.is_some().then(|| Fraction { k: count(CriterionKind::Selection, Verdict::Pass), n });
    let over_triggering =
        case.expect.negative.then(|| Fraction { k: count(CriterionKind::NoToolCall, Verdict::Fail), n });
    let rule = if hard {
        "hard: every trial must pass".to_owned()
    } else {
        format!("soft: {threshold} of {requested} must pass")
    };
    let (verdict, reason) = if n < threshold.max(1) {
        (
            CaseVerdict::Error,
            format!(
                "only {n} of {requested} trial(s) completed ({errors} ended in an error), fewer than the {threshold} \
                 needed for a verdict ({rule})"
            ),
        )
    } else if completed.iter().all(|run| run.verdict == TrialVerdict::Ungraded) {
        (CaseVerdict::Ungraded, "nothing was graded: every criterion of this case was skipped (each says why)".into())
    } else if k >= threshold {
        (CaseVerdict::Pass, format!("{k} of {n} completed trial(s) passed ({rule})"))
    } else {
        (CaseVerdict::Fail, format!("{k} of {n} completed trial(s) passed, {threshold} needed ({rule})"))
    };
    CaseScore { verdict, passed: Fraction { k, n }, requested, errors, threshold, selection, over_triggering, reason }
}
