//! Golden sets (layer 1): the YAML file of prompts and the tool calls a model should make for
//! them, checked and hashed before any model runs.
//!
//! - [`tree`]: the file as a tree of YAML nodes with their positions;
//! - [`load`]: the structural pass (every unknown key, wrong type and broken rule of a file at
//!   once, as `file:line:col: field: message` with a hint) and the resolution of each case
//!   (defaults applied, rubric files inlined) into plain JSON, the text the hashes cover;
//! - [`case`] and [`expect`]: the case typed once from that JSON ([`Case::of_resolved`]), which
//!   every other module reads instead of the JSON's keys;
//! - the case and set hashes are RFC 8785 canonical JSON and SHA-256 ([`crate::jcs`]);
//! - [`check`]: `mcp-eval golden check`, which also checks every tool name of the set against a
//!   server's `tools/list` when one is given;
//! - [`init`]: `mcp-eval golden init`, a starter set of draft cases written from a server's
//!   `tools/list`.
//!
//! This module only reads, checks and hashes: layer 1 (`crate::trials`) runs the cases against
//! models and grades them. Each case lists its `embedding` and `judge` matchers with their
//! position ([`MatcherRef`]), so a set that needs a model nobody configured is refused at the
//! start, at the matcher's line.

pub(crate) mod case;
pub(crate) mod expect;
pub(crate) mod load;
pub(crate) mod tree;

#[cfg(test)]
mod tests;

use std::path::PathBuf;

use serde_json::Value;

pub(crate) use case::{
    CanaryAction, CaseRun, DEFAULT_TRIALS, FaultEntry, FaultKind, Injection, PayloadEntry, Placement, PlanEntry,
    Rubric, Sampling, ToolChoice, Trials,
};
pub(crate) use expect::{Args, Expect, ExpectTool, Matcher, Sequence, Step};

/// A checked golden set.
#[derive(Debug, Clone)]
pub(crate) struct GoldenSet {
    /// The file it was read from.
    pub path: PathBuf,
    /// `sha256:…` over the canonical JSON list of the case hashes, in file order.
    pub hash: String,
    /// The cases, in file order.
    pub cases: Vec<Case>,
    /// Layer 2's fault plan (`--fault-plan`): its file and entries, when one was given.
    pub fault_plan: Option<(PathBuf, Vec<PlanEntry>)>,
}

impl GoldenSet {
    /// The set's `defaults.timezone` (IANA, validated at load; UTC when not given): relative
    /// dates (`today`, `tomorrow`, `+3d`) resolve in it.
    pub(crate) fn timezone(&self) -> chrono_tz::Tz {
        self.cases
            .iter()
            .find_map(|case| case.resolved.get("timezone").and_then(serde_json::Value::as_str))
            .and_then(|name| name.parse().ok())
            .unwrap_or(chrono_tz::UTC)
    }

    /// The date at `now` in the set's time zone: what `today` means for this run.
    pub(crate) fn today_at(&self, now: chrono::DateTime<chrono::Utc>) -> chrono::NaiveDate {
        now.with_timezone(&self.timezone()).date_naive()
    }
}

/// One case, resolved.
#[derive(Debug, Clone)]
pub(crate) struct Case {
    /// Its id.
    pub id: String,
    /// The case with the defaults applied and its rubric inlined (`tags` left out): the text the
    /// hash covers. Read by key only in this module; everyone else reads the typed fields.
    pub resolved: Value,
    /// `sha256:…` over the canonical JSON of [`Case::resolved`].
    pub hash: String,
    /// How many trials it asks for, and how many must pass.
    pub trials: Trials,
    /// What the trials of the case do (turns, limits, the tools the model sees, tool choice,
    /// sampling), typed once by the loader from [`Case::resolved`].
    pub run: CaseRun,
    /// What it expects of a trial (tool, arguments, sequence, negative, forbidden tools),
    /// typed once by the loader from [`Case::resolved`]: what scoring reads.
    pub expect: Expect,
    /// Its rubric (inline, named or from a file), when it has one.
    pub rubric: Option<Rubric>,
    /// Its answers to the server's input requests (`input_responses`), when it has them.
    pub inputs: Option<case::InputScript>,
    /// Every tool name the case mentions, with its position.
    pub tools: Vec<ToolRef>,
    /// Every `embedding` or `judge` matcher of the case, with its position: what needs an
    /// embeddings model or the judge model before the case can be graded.
    pub semantic: Vec<MatcherRef>,
    /// Layer 2's faults for the case (`faults:`, else `defaults.faults`): not in
    /// [`Case::resolved`], so they leave the case's hash, and layer 1's baseline, as they are.
    pub faults: Vec<FaultEntry>,
    /// Layer 2's payloads for the case (`adversarial:`, else `defaults.adversarial`), outside
    /// [`Case::resolved`] like `faults`.
    pub adversarial: Vec<PayloadEntry>,
}

impl Case {
    /// The case typed from its resolved JSON (`id`, the defaults applied, its rubric inlined):
    /// the hash, trials, what each trial does, the expectations, rubric and input script. Its
    /// tool names, semantic matchers, faults and payloads are empty (the loader adds them).
    pub(crate) fn of_resolved(resolved: Value) -> Self {
        let rubric = resolved.get("rubric").and_then(Rubric::from_resolved);
        Case {
            id: resolved.get("id").and_then(Value::as_str).unwrap_or_default().to_owned(),
            hash: crate::jcs::hash(&resolved),
            trials: Trials::of_resolved(&resolved),
            run: CaseRun::of_resolved(&resolved),
            expect: Expect::of_resolved(&resolved),
            rubric,
            inputs: case::InputScript::of_resolved(&resolved),
            resolved,
            tools: Vec::new(),
            semantic: Vec::new(),
            faults: Vec::new(),
            adversarial: Vec::new(),
        }
    }

    /// The case's rubric as resolved (`{id, criteria | file_text, min_should}`), `null` when it
    /// has none: the text a calibration's rubric hash covers.
    pub(crate) fn rubric_json(&self) -> Value {
        self.resolved.get("rubric").cloned().unwrap_or_default()
    }
}

/// An argument matcher that needs a model to grade (`embedding` or `judge`), where it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MatcherRef {
    /// `embedding` or `judge`.
    pub mode: String,
    /// 1-based line.
    pub line: u64,
    /// 1-based column.
    pub column: u64,
    /// Where in the case (`cases[0].expect_args.city`).
    pub field: String,
}

/// A tool name (or glob) written in a case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolRef {
    /// The name as written.
    pub name: String,
    /// 1-based line.
    pub line: u64,
    /// 1-based column.
    pub column: u64,
    /// Where in the case (`cases[0].expect_tool`).
    pub field: String,
}

/// What is wrong with a golden-set file, where, and how to fix it: the input problem every
/// reader of a user's file reports.
pub(crate) type Problem = crate::error::InputProblem;

/// A tool name written in a case, with the case's id (`#N` when it has none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NamedTool {
    /// The case's id.
    pub case: String,
    /// The name and where it is written.
    pub tool: ToolRef,
}

/// Every tool name of the set that the server does not list (a glob that matches none of its
/// tools), with the nearest listed tool as the hint.
pub(crate) fn unknown_tools(set: &GoldenSet, listed: &[&str]) -> Vec<Problem> {
    let named: Vec<NamedTool> = set
        .cases
        .iter()
        .flat_map(|case| case.tools.iter().map(|tool| NamedTool { case: case.id.clone(), tool: tool.clone() }))
        .collect();
    unknown_names(&set.path, &named, listed)
}

/// [`unknown_tools`] over the names of the file at `path`, read or not (a set with problems
/// gives its names through [`load::load_naming`]).
pub(crate) fn unknown_names(path: &std::path::Path, named: &[NamedTool], listed: &[&str]) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut reported = std::collections::HashSet::new();
    for NamedTool { case, tool } in named {
        // A name in `defaults.tools` is named once, with the first case that uses it.
        if listed.iter().any(|name| glob_matches(&tool.name, name)) || !reported.insert((tool.line, tool.column)) {
            continue;
        }
        let hint = match crate::suggest::closest(&tool.name, listed.iter().copied()) {
            Some(near) => format!("did you mean `{near}`? (the nearest tool the server lists)"),
            None => "the server lists no tools".into(),
        };
        problems.push(Problem::located(
            path.to_owned(),
            Some((tool.line, tool.column)),
            Some(tool.field.clone()),
            format!("case `{case}`: the server has no tool `{}`", tool.name),
            hint,
        ));
    }
    problems
}

/// True when `name` matches `pattern` (`*` any run of characters, `?` one; else equality).
pub(crate) fn glob_matches(pattern: &str, name: &str) -> bool {
    fn matches(pattern: &[char], name: &[char]) -> bool {
        match pattern.split_first() {
            None => name.is_empty(),
            Some(('*', rest)) => (0..=name.len()).any(|skip| matches(rest, &name[skip..])),
            Some(('?', rest)) => !name.is_empty() && matches(rest, &name[1..]),
            Some((first, rest)) => name.first() == Some(first) && matches(rest, &name[1..]),
        }
    }
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    matches(&pattern, &name)
}
