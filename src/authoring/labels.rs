//! The labels file of `mcp-eval judge calibrate`: hand verdicts on the runs of a report the user
//! already has. The file names the golden set (for the task and the rubric) and a `report.json`
//! of a run of that set (for the traces), both relative to the labels file, and lists one label
//! per run × rubric criterion:
//!
//! ```yaml
//! version: 1
//! golden_set: ../demo.yaml          # the set the report ran (its rubrics are judged)
//! report: demo-runs.json            # a report.json of that set; evals[].traces hold the runs
//! labels:
//!   - {case: temperature-stated, model: demo:scripted, run: 1, criterion: has_value, human: pass}
//! ```
//!
//! Reading is one structural pass, like the golden-set loader: every unknown key, wrong type and
//! broken reference (a case the set lacks or without a rubric, a criterion its rubric lacks, a
//! case × model or run the report lacks, a case the report ran in another version, a label given
//! twice) is a [`Problem`] naming file, line, column, field and the fix (exit status 2).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::golden::tree::{self, Node, NodeValue};
use crate::golden::{GoldenSet, Problem};
use crate::report::evals::{EvalsSection, TrialTrace};
use crate::scoring::judge::Rubric;
use crate::suggest;

const TOP_KEYS: &[&str] = &["version", "golden_set", "report", "labels"];
const LABEL_KEYS: &[&str] = &["case", "model", "run", "criterion", "human", "note"];
const LABEL_EXAMPLE: &str =
    "e.g. `- {case: temperature-stated, model: openai:gpt-4.1, run: 1, criterion: has_value, human: pass}`";

/// One hand verdict, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Label {
    /// The case id (of the golden set and the report).
    pub case: String,
    /// The model whose run it is, `PROVIDER:MODEL` as the report names it.
    pub model: String,
    /// The 1-based run number of the report's trace.
    pub run: usize,
    /// A criterion id of the case's rubric.
    pub criterion: String,
    /// The human verdict: true for `pass`, false for `fail`.
    pub human: bool,
    /// Where the label starts in the file (1-based line and column).
    pub position: (u64, u64),
    /// Its field path, `labels[3]`.
    pub field: String,
}

/// A labels file as written (paths resolved against its directory).
#[derive(Debug, Clone)]
pub(crate) struct LabelsFile {
    /// The file.
    pub path: PathBuf,
    /// The golden set (`golden_set:`, relative to the file), when given.
    pub golden_set: Option<PathBuf>,
    /// The report whose traces are labelled (`report:`, relative to the file).
    pub report: PathBuf,
    /// The labels, in file order.
    pub labels: Vec<Label>,
}

/// Reads and checks the structure of the labels file at `path`; every problem at once.
pub(crate) fn load(path: &Path) -> Result<LabelsFile, Vec<Problem>> {
    match fs_err::read_to_string(path) {
        Ok(text) => parse(path, &text),
        Err(error) => Err(vec![Problem::located(
            path.to_owned(),
            None,
            None,
            format!("cannot read the labels file: {}", crate::text::io_reason(&error)),
            "check the path of the labels file",
        )]),
    }
}

/// Checks the text of a labels file (`path` names it in messages and anchors its paths).
pub(crate) fn parse(path: &Path, text: &str) -> Result<LabelsFile, Vec<Problem>> {
    let mut problems = Vec::new();
    let problem = |position: Option<(u64, u64)>, field: Option<&str>, message: String, hint: &str| {
        Problem::located(path.to_owned(), position, field.map(str::to_owned), message, hint.to_owned())
    };
    let root = match tree::parse(text) {
        Ok(Some(root)) => root,
        Ok(None) => {
            return Err(vec![problem(
                Some((1, 1)),
                None,
                "the file is empty".into(),
                "start with `version: 1`, `report:`, `golden_set:` and `labels:` (see docs/scoring.md#calibrating-the-judge)",
            )]);
        }
        Err((position, message)) => {
            return Err(vec![problem(
                position,
                None,
                message,
                "the file is not valid YAML there; check indentation (spaces, not tabs) and quoting",
            )]);
        }
    };
    let here = |node: &Node| Some((node.line, node.column));
    let NodeValue::Map(entries) = &root.value else {
        return Err(vec![problem(
            here(&root),
            None,
            format!("expected a mapping, found {}", root.kind()),
            "start with `version: 1`, `report:`, `golden_set:` and `labels:`",
        )]);
    };
    let dir = path.parent().unwrap_or(Path::new(""));
    let (mut version, mut golden_set, mut report, mut labels_node) = (None, None, None, None);
    for (key, value) in entries {
        let name = key.as_str().unwrap_or("?");
        match name {
            "version" => version = Some(value),
            "golden_set" => golden_set = Some(value),
            "report" => report = Some(value),
            "labels" => labels_node = Some(value),
            _ => problems.push(problem(
                here(key),
                Some(name),
                "unknown key".into(),
                &suggest::unknown_key_hint(name, TOP_KEYS),
            )),
        }
    }
    match version {
        Some(node) if matches!(&node.value, NodeValue::Number(number) if number.as_i64() == Some(1)) => {}
        Some(node) => problems.push(problem(
            here(node),
            Some("version"),
            format!("`{}` is not a labels format version", node.to_json()),
            "write `version: 1`",
        )),
        None => problems.push(problem(Some((1, 1)), Some("version"), "missing".into(), "add `version: 1`")),
    }
    let mut path_of = |node: Option<&Node>, field: &str, hint: &str| -> Option<PathBuf> {
        match node {
            Some(node) => match node.as_str().map(str::trim).filter(|text| !text.is_empty()) {
                Some(text) => Some(lexical(&dir.join(text))),
                None => {
                    problems.push(problem(
                        here(node),
                        Some(field),
                        format!("expected a file path, found {}", node.kind()),
                        hint,
                    ));
                    None
                }
            },
            None => None,
        }
    };
    let golden_set = path_of(golden_set, "golden_set", "the golden set the report ran, relative to this file");
    let report_path = path_of(report, "report", "a report.json of a run of the golden set, relative to this file");
    if report.is_none() {
        problems.push(problem(
            Some((1, 1)),
            Some("report"),
            "missing".into(),
            "add `report: FILE`: a report.json whose evals[].traces hold the trials you label (relative to this file)",
        ));
    }
    let mut labels = Vec::new();
    match labels_node.map(|node| (node, &node.value)) {
        Some((_, NodeValue::List(items))) if !items.is_empty() => {
            for (index, item) in items.iter().enumerate() {
                if let Some(label) = read_label(item, &format!("labels[{index}]"), &mut problems, &problem) {
                    labels.push(label);
                }
            }
        }
        Some((node, _)) => problems.push(problem(
            here(node),
            Some("labels"),
            format!(
                "expected a list of labels, found {}",
                if matches!(node.value, NodeValue::List(_)) { "an empty list" } else { node.kind() }
            ),
            LABEL_EXAMPLE,
        )),
        None => problems.push(problem(Some((1, 1)), Some("labels"), "missing".into(), LABEL_EXAMPLE)),
    }
    let mut seen = BTreeSet::new();
    for label in &labels {
        if !seen.insert((&label.case, &label.model, label.run, &label.criterion)) {
            problems.push(problem(
                Some(label.position),
                Some(&label.field),
                format!(
                    "trial {} of `{}` on {} is labelled twice for `{}`",
                    label.run, label.case, label.model, label.criterion
                ),
                "keep one label per trial and criterion",
            ));
        }
    }
    match (report_path, problems.is_empty()) {
        (Some(report), true) => Ok(LabelsFile { path: path.to_owned(), golden_set, report, labels }),
        _ => Err(problems),
    }
}

/// Builds a problem of the labels file: position, field, message, hint.
type MakeProblem<'a> = dyn Fn(Option<(u64, u64)>, Option<&str>, String, &str) -> Problem + 'a;

/// `path` with its `..` after a named directory taken out (no file system access): what a path
/// relative to the labels file is shown as.
fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir if matches!(out.components().next_back(), Some(Component::Normal(_))) => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// One entry of `labels:`.
fn read_label(node: &Node, field: &str, problems: &mut Vec<Problem>, problem: &MakeProblem<'_>) -> Option<Label> {
    let NodeValue::Map(entries) = &node.value else {
        problems.push(problem(
            Some((node.line, node.column)),
            Some(field),
            format!("expected a mapping, found {}", node.kind()),
            LABEL_EXAMPLE,
        ));
        return None;
    };
    let before = problems.len();
    let find = |name: &str| entries.iter().find(|(key, _)| key.as_str() == Some(name)).map(|(_, value)| value);
    for (key, _) in entries {
        let name = key.as_str().unwrap_or("?");
        if !LABEL_KEYS.contains(&name) {
            problems.push(problem(
                Some((key.line, key.column)),
                Some(&format!("{field}.{name}")),
                "unknown key".into(),
                &suggest::unknown_key_hint(name, LABEL_KEYS),
            ));
        }
    }
    let mut text = |name: &str, hint: &str| -> Option<String> {
        let child = format!("{field}.{name}");
        match find(name) {
            Some(value) => match value.as_str().map(str::trim).filter(|text| !text.is_empty()) {
                Some(text) => Some(text.to_owned()),
                None => {
                    problems.push(problem(
                        Some((value.line, value.column)),
                        Some(&child),
                        format!("expected text, found {}", value.kind()),
                        hint,
                    ));
                    None
                }
            },
            None => {
                problems.push(problem(Some((node.line, node.column)), Some(&child), "missing".into(), hint));
                None
            }
        }
    };
    let case = text("case", "the case id, as in the golden set");
    let model = text("model", "the model whose trial it is, PROVIDER:MODEL as the report names it");
    let criterion = text("criterion", "a criterion id of the case's rubric (`c1`, `c2`, … for a rubric file)");
    let human = text("human", "`pass` or `fail`: your verdict on the criterion for this trial");
    let human = human.and_then(|verdict| match verdict.to_ascii_lowercase().as_str() {
        "pass" => Some(true),
        "fail" => Some(false),
        _ => {
            let value = find("human").map_or((node.line, node.column), |value| (value.line, value.column));
            problems.push(problem(
                Some(value),
                Some(&format!("{field}.human")),
                format!("`{verdict}` is not a verdict"),
                "write `pass` or `fail` (a trial you cannot decide is better left unlabelled)",
            ));
            None
        }
    });
    let run = match find("run") {
        Some(value) => match &value.value {
            NodeValue::Number(number) if number.as_u64().is_some_and(|run| run >= 1) => {
                number.as_u64().and_then(|run| usize::try_from(run).ok())
            }
            _ => {
                problems.push(problem(
                    Some((value.line, value.column)),
                    Some(&format!("{field}.run")),
                    format!("expected a trial number (1 or more), found {}", value.to_json()),
                    "the 1-based `run` (trial number) of the trace in the report",
                ));
                None
            }
        },
        None => {
            problems.push(problem(
                Some((node.line, node.column)),
                Some(&format!("{field}.run")),
                "missing".into(),
                "the 1-based `run` (trial number) of the trace in the report",
            ));
            None
        }
    };
    if problems.len() > before {
        return None;
    }
    Some(Label {
        case: case?,
        model: model?,
        run: run?,
        criterion: criterion?,
        human: human?,
        position: (node.line, node.column),
        field: field.to_owned(),
    })
}

/// A label with what it refers to.
#[derive(Debug, Clone)]
pub(crate) struct Resolved<'a> {
    /// The label.
    pub label: &'a Label,
    /// The case's position in the golden set.
    pub case_index: usize,
    /// The labelled run's trace.
    pub trace: &'a TrialTrace,
}

/// Checks every label against the golden set (case, rubric, criterion) and the report (case ×
/// model, run, and that the report ran this version of the case); every problem at once.
pub(crate) fn resolve<'a>(
    file: &'a LabelsFile,
    set: &GoldenSet,
    rubrics: &[Option<Rubric>],
    report: &'a EvalsSection,
) -> Result<Vec<Resolved<'a>>, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut resolved = Vec::new();
    let case_ids: Vec<&str> = set.cases.iter().map(|case| case.id.as_str()).collect();
    for label in &file.labels {
        let mut problem = |field: &str, message: String, hint: String| {
            problems.push(Problem::located(
                file.path.clone(),
                Some(label.position),
                Some(format!("{}.{field}", label.field)),
                message,
                hint,
            ));
        };
        let Some(case_index) = case_ids.iter().position(|id| *id == label.case) else {
            let hint = match suggest::nearest(&label.case, case_ids.iter().copied()) {
                Some(near) => format!("did you mean `{near}`?"),
                None => format!("the golden set `{}` has no such case", set.path.display()),
            };
            problem("case", format!("no case `{}` in the golden set", label.case), hint);
            continue;
        };
        let Some(rubric) = rubrics[case_index].as_ref() else {
            problem(
                "case",
                format!("case `{}` has no rubric: nothing of it is judged", label.case),
                "label trials of cases with a `rubric`".into(),
            );
            continue;
        };
        let ids: Vec<&str> = rubric.criteria.iter().map(|criterion| criterion.id.as_str()).collect();
        if !ids.contains(&label.criterion.as_str()) {
            problem(
                "criterion",
                format!("the rubric of `{}` has no criterion `{}`", label.case, label.criterion),
                format!("use one of: {}", ids.join(", ")),
            );
            continue;
        }
        let Some(eval) = report.evals.iter().find(|eval| eval.case == label.case && eval.model == label.model) else {
            let models: Vec<&str> =
                report.evals.iter().filter(|eval| eval.case == label.case).map(|eval| eval.model.as_str()).collect();
            let hint = if models.is_empty() {
                format!("the report `{}` has no trial of this case", file.report.display())
            } else {
                format!("the report ran it on: {}", models.join(", "))
            };
            problem("model", format!("the report has no trials of `{}` on {}", label.case, label.model), hint);
            continue;
        };
        if eval.case_sha256 != set.cases[case_index].hash {
            problem(
                "case",
                format!(
                    "the report ran another version of `{}` ({} there, {} in the golden set)",
                    label.case, eval.case_sha256, set.cases[case_index].hash
                ),
                "label a report of a run of this golden set, or name the golden set it ran (`golden_set:`)".into(),
            );
            continue;
        }
        let Some(trace) = eval.traces.iter().find(|trace| trace.run == label.run) else {
            let runs: Vec<String> = eval.traces.iter().map(|trace| trace.run.to_string()).collect();
            problem(
                "run",
                format!("the report keeps no trial {} of `{}` on {}", label.run, label.case, label.model),
                format!("it keeps trials {}", if runs.is_empty() { "none".to_owned() } else { runs.join(", ") }),
            );
            continue;
        };
        resolved.push(Resolved { label, case_index, trace });
    }
    if problems.is_empty() { Ok(resolved) } else { Err(problems) }
}

/// The trace as the judge reads it, rebuilt from a report's run: the same lines the runner gives
/// the judge (`call NAME ARGS`, `result: …` or `result (isError): …`, `answer: …`). Results and
/// answers are as the report kept them (see `--trace-results`): label reports written with
/// `--trace-results full` so the judge reads what it read in the run.
/// True when a run made tool calls whose results the report did not keep
/// (`--trace-results none`): neither a result nor an error text is there.
pub(crate) fn results_not_kept(trace: &TrialTrace) -> bool {
    trace.calls.iter().any(|call| call.result.is_none() && call.error.is_none())
}

pub(crate) fn judge_text(trace: &TrialTrace) -> String {
    crate::scoring::judge::trace_text(
        trace.calls.iter().map(|call| {
            let result = call.result.as_deref().or(call.error.as_deref()).unwrap_or("(not kept in the report)");
            (call.name.as_str(), &call.arguments, call.is_error, result)
        }),
        trace.answer.as_deref(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(text: &str) -> Vec<String> {
        parse(Path::new("cal/labels.yaml"), text)
            .expect_err("invalid")
            .into_iter()
            .map(|problem| format!("{problem} | {}", problem.hint_text()))
            .collect()
    }

    #[test]
    fn a_labels_file_reads_its_labels_and_paths_relative_to_itself() {
        let file = parse(
            Path::new("cal/labels.yaml"),
            "version: 1\ngolden_set: ../demo.yaml\nreport: runs.json\nlabels:\n  - {case: a, model: 'p:m', run: 2, criterion: c1, human: FAIL, note: vague}\n",
        )
        .expect("valid");
        assert_eq!(file.golden_set, Some(PathBuf::from("demo.yaml")));
        assert_eq!(file.report, PathBuf::from("cal/runs.json"));
        assert_eq!(
            file.labels,
            [Label {
                case: "a".into(),
                model: "p:m".into(),
                run: 2,
                criterion: "c1".into(),
                human: false,
                position: (5, 5),
                field: "labels[0]".into(),
            }]
        );
    }

    #[test]
    fn a_bad_labels_file_names_file_line_field_and_fix() {
        let found = problems(
            "version: 1\nreport: runs.json\nlabels:\n  - {case: a, model: 'p:m', run: 0, criterion: c1, human: pass}\n  - {case: a, model: 'p:m', run: 1, critrion: c1, human: maybe}\n",
        );
        assert_eq!(
            found,
            [
                "cal/labels.yaml:4:34: labels[0].run: expected a trial number (1 or more), found 0 | the 1-based `run` (trial number) of the trace in the report",
                "cal/labels.yaml:5:37: labels[1].critrion: unknown key | did you mean `criterion`? (the keys here are case, model, run, criterion, human, note)",
                "cal/labels.yaml:5:5: labels[1].criterion: missing | a criterion id of the case's rubric (`c1`, `c2`, … for a rubric file)",
                "cal/labels.yaml:5:58: labels[1].human: `maybe` is not a verdict | write `pass` or `fail` (a trial you cannot decide is better left unlabelled)",
            ]
        );
        let twice = problems(
            "version: 1\nreport: r.json\nlabels:\n  - {case: a, model: 'p:m', run: 1, criterion: c1, human: pass}\n  - {case: a, model: 'p:m', run: 1, criterion: c1, human: fail}\n",
        );
        assert_eq!(
            twice,
            [
                "cal/labels.yaml:5:5: labels[1]: trial 1 of `a` on p:m is labelled twice for `c1` | keep one label per trial and criterion"
            ]
        );
        let empty = problems("version: 2\nlabels: []\n");
        assert_eq!(empty.len(), 3, "{empty:?}");
        assert!(empty[0].starts_with("cal/labels.yaml:1:10: version: `2` is not a labels format version"));
        assert!(empty[1].starts_with("cal/labels.yaml:1:1: report: missing"));
        assert!(empty[2].starts_with("cal/labels.yaml:2:9: labels: expected a list of labels, found an empty list"));
    }
}
