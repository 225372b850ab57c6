//! `mcp-eval merge`: joins the reports of the shards of one run (`--shard i/n`, one job each of
//! an Actions matrix) into one report, as if the run had not been split. The matrix may split by
//! model as well: legs that ran different `models` lists (each list whole, or in shards) join
//! into one run of all of them.
//!
//! - Reports of different golden sets (`golden_set.sha256`) are refused. The others are grouped
//!   by their `models` list; within a group, a shard index missing or given twice, shards of
//!   different counts, or two whole (unsharded) runs are refused; across groups, a model in two
//!   lists is refused (its cases would count twice). Each refusal is an input error, exit
//!   status 2, naming the files.
//! - The merged `models` are the groups' lists one after the other, the groups in the order of
//!   their lists sorted by name (the first model, then the next, …), each list in its own order.
//! - `evals` are joined in the unsplit order (cases in golden-set order, then models in the
//!   merged order) and `eval_metrics` recomputed from them ([`crate::report::evals::metrics_of`]).
//! - Layer 0 (`checks`, `server`) comes from shard 1 of the first group (or from the first
//!   report that has checks); when several reports ran it (each group's shard 1 does) and a
//!   check's status differs, a note in `layer1_notes` names the checks and files. `model_status`
//!   is merged, `model_calls` and `replayed_model_calls` summed, `call_cap_reached` OR'ed.
//!
//! The merged report has no `shard` member: it covers the whole list. It keeps the shards'
//! `tool_surface` (the first shard's), which its gate diffs against the baseline's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Diagnostic, InputProblem, Kind, UserError};
use crate::report::evals::{EvalResult, EvalsSection, ModelOutcome, ModelStatus, metrics_of};
use crate::report::model::GateSection;
use crate::report::model::{RunOutcome, RunReport};
use crate::settings::FailOn;
use crate::verdict::{self, ExitStatus, VerdictInput};

/// One report to merge: where it was read from (for messages) and what it holds.
#[derive(Debug, Clone)]
pub(crate) struct Part {
    /// The file, as the user named it.
    pub label: String,
    /// The report read back.
    pub report: RunReport,
}

/// Reads `DIR/report.json` of every directory. A directory without a readable report is an
/// input error naming the file.
pub(crate) fn read_parts(dirs: &[PathBuf]) -> Result<Vec<Part>, UserError> {
    let mut parts = Vec::new();
    for dir in dirs {
        let path = dir.join(crate::report::REPORT_JSON);
        let label = path.display().to_string();
        let text = std::fs::read_to_string(&path).map_err(|error| {
            UserError::new(Kind::InvalidInput, format!("cannot read {label}: {error}"))
                .with_hint("give directories that each hold the report.json of one shard")
        })?;
        let report = crate::report::json::parse(&text).map_err(|error| {
            InputProblem::new(&path, error.to_string())
                .with_hint("give the report directories written by `mcp-eval run` or the Action")
                .into_error()
        })?;
        parts.push(Part { label, report });
    }
    Ok(parts)
}

/// The directories matching `pattern` (`*` and `?` within each path component; other
/// components literal), sorted; relative patterns are resolved against `base`.
pub(crate) fn glob_dirs(base: &Path, pattern: &str) -> Vec<PathBuf> {
    let root = if Path::new(pattern).is_absolute() { PathBuf::from("/") } else { base.to_path_buf() };
    let mut found = vec![root];
    for component in pattern.split('/').filter(|part| !part.is_empty() && *part != ".") {
        let mut next = Vec::new();
        for dir in &found {
            if !component.contains(['*', '?']) {
                next.push(dir.join(component));
                continue;
            }
            let Ok(entries) = std::fs::read_dir(dir) else { continue };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if !name.starts_with('.') && crate::golden::glob_matches(component, &name) {
                    next.push(entry.path());
                }
            }
        }
        found = next;
    }
    found.retain(|path| path.is_dir());
    found.sort();
    found
}

/// Merges the shards, of one `models` list or of several (a matrix by model as well as by
/// shard). `Err` is an input error (exit status 2) naming the files.
///
/// The parts are grouped by their `models` list. Within a group the shard rules hold: all
/// sharded or none, one count, every index once; a group of one unsharded report is that
/// list's whole run, two are refused (every case would count twice). Across groups the golden
/// set must be the same and the model lists disjoint. The groups are taken in the order of their
/// `models` lists sorted by name (so the directories' names and the order given do not matter),
/// and within a group in shard order.
pub(crate) fn merge(parts: Vec<Part>) -> Result<RunReport, UserError> {
    join(parts).map_err(|error| UserError::of(&error))
}

/// Why the reports cannot be merged: each names the files (exit status 2).
#[derive(Debug, thiserror::Error)]
pub(crate) enum Refused {
    /// No directory was given.
    #[error("no report to merge")]
    NoReport,
    /// The reports ran different golden sets.
    #[error("the shards ran different golden sets: {0}")]
    GoldenSets(String),
    /// A model is in two `models` lists.
    #[error("`{model}` is in more than one `models` list ({lists}): merging them would count its cases more than once")]
    ModelInTwoLists {
        /// The model.
        model: String,
        /// The lists and their files.
        lists: String,
    },
    /// The reports of one `models` list do not make one set of shards.
    #[error(transparent)]
    Shards(#[from] ShardsRefused),
}

impl Diagnostic for Refused {
    fn kind(&self) -> Kind {
        Kind::InvalidInput
    }

    fn hint(&self) -> Option<String> {
        Some("merge the report directories of one run: the same golden set, every shard of each `models` list once, each model in one list only".into())
    }
}

/// Why the reports of one `models` list (`of`: `models [a, b]` or `no model`) are not one set
/// of shards; `files` lists the reports concerned.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ShardsRefused {
    /// Two or more whole runs.
    #[error(
        "{files} are whole runs of {of}, not shards of one (none holds a `shard`): merging them would count every case more than once"
    )]
    WholeRuns {
        /// The files.
        files: String,
        /// The list.
        of: String,
    },
    /// Some reports are shards, others not.
    #[error("{without} hold(s) no shard, unlike {files} ({of})")]
    Unsharded {
        /// The reports without a shard.
        without: String,
        /// The reports with one.
        files: String,
        /// The list.
        of: String,
    },
    /// The shards were split in different counts.
    #[error("the shards of {of} were split in different counts ({counts:?}): {files}")]
    Counts {
        /// The list.
        of: String,
        /// The counts.
        counts: std::collections::BTreeSet<u32>,
        /// The files.
        files: String,
    },
    /// A shard is given twice.
    #[error("shard {index}/{count} of {of} is given twice: {files}")]
    Twice {
        /// The shard's index.
        index: u32,
        /// The count.
        count: u32,
        /// The list.
        of: String,
        /// The files holding it.
        files: String,
    },
    /// Shards are missing.
    #[error("shard(s) {missing} missing for {of} among {files}")]
    Missing {
        /// The missing shards, `i/n, …`.
        missing: String,
        /// The list.
        of: String,
        /// The files given.
        files: String,
    },
}

fn join(parts: Vec<Part>) -> Result<RunReport, Refused> {
    if parts.is_empty() {
        return Err(Refused::NoReport);
    }
    let listed = |parts: &[&Part]| parts.iter().map(|part| part.label.as_str()).collect::<Vec<_>>().join(", ");

    // The same golden set in every report.
    let golden = |part: &Part| {
        part.report.evals.as_ref().and_then(|evals| evals.golden_set.as_ref()).map(|set| set.sha256.clone())
    };
    let mut by_hash: BTreeMap<Option<String>, Vec<&Part>> = BTreeMap::new();
    for part in &parts {
        by_hash.entry(golden(part)).or_default().push(part);
    }
    if by_hash.len() > 1 {
        let groups: Vec<String> = by_hash
            .iter()
            .map(|(hash, parts)| format!("{} in {}", hash.as_deref().unwrap_or("no golden set"), listed(parts)))
            .collect();
        return Err(Refused::GoldenSets(groups.join("; ")));
    }

    // One group per `models` list; a model in two lists would count twice.
    let models = |part: &Part| part.report.evals.as_ref().map(|evals| evals.models.clone()).unwrap_or_default();
    let mut by_models: BTreeMap<Vec<String>, Vec<Part>> = BTreeMap::new();
    for part in parts {
        by_models.entry(models(&part)).or_default().push(part);
    }
    let mut lists_of: BTreeMap<&str, Vec<&Vec<String>>> = BTreeMap::new();
    for list in by_models.keys() {
        for model in list {
            lists_of.entry(model.as_str()).or_default().push(list);
        }
    }
    if let Some((model, lists)) = lists_of.iter().find(|(_, lists)| lists.len() > 1) {
        let groups: Vec<String> = lists
            .iter()
            .map(|list| format!("[{}] in {}", list.join(", "), listed(&by_models[*list].iter().collect::<Vec<_>>())))
            .collect();
        return Err(Refused::ModelInTwoLists { model: (*model).to_owned(), lists: groups.join("; ") });
    }
    let mut parts = Vec::new();
    for (models, mut group) in by_models {
        check_shards(&models, &mut group)?;
        parts.extend(group);
    }
    // Layer 0 from the first group's shard 1, or from the first report that has checks.
    let base_at = parts.iter().position(|part| !part.report.checks.is_empty()).unwrap_or(0);
    let mut merged = parts[base_at].report.clone();
    merged.started_at = parts.iter().map(|part| part.report.started_at).min().unwrap_or(merged.started_at);
    merged.duration_ms = parts.iter().map(|part| part.report.duration_ms).max().unwrap_or(0);
    let mut layers: Vec<u8> = parts.iter().flat_map(|part| part.report.layers.iter().copied()).collect();
    layers.sort_unstable();
    layers.dedup();
    merged.layers = layers;
    if merged.outcome == RunOutcome::Completed {
        if let Some(part) = parts.iter().find(|part| part.report.outcome == RunOutcome::Interrupted) {
            merged.outcome = RunOutcome::Interrupted;
            let detail = part.report.outcome_detail.as_deref().unwrap_or("interrupted");
            merged.outcome_detail = Some(format!("{}: {detail}", part.label));
        }
    }
    merged.evals = join_evals(&parts);
    // Layer 3's figures are one shard's: percentiles do not add up, so a merge keeps none and
    // says so; the cost budgets' spends do add up.
    if parts.iter().any(|part| part.report.telemetry.is_some()) {
        merged.telemetry = None;
        merged.layers.retain(|layer| *layer != 3);
        if let Some(evals) = merged.evals.as_mut() {
            evals.layer1_notes.push(
                "layer 3 is not merged (percentiles of shards do not add up): each shard's report.json has its own telemetry".into(),
            );
        }
    }
    merged.budget = join_budgets(&parts);
    if let Some(note) = layer0_differs(&parts, base_at) {
        if let Some(evals) = merged.evals.as_mut() {
            evals.layer1_notes.push(note);
        }
    }
    Ok(merged)
}

/// Checks the shard rules within the reports of one `models` list and puts them in shard order:
/// all sharded or none, one count, every index once; of unsharded reports, only one (a whole
/// run). `Err` names the files.
fn check_shards(models: &[String], group: &mut [Part]) -> Result<(), ShardsRefused> {
    let listed = |parts: &[&Part]| parts.iter().map(|part| part.label.as_str()).collect::<Vec<_>>().join(", ");
    let of = if models.is_empty() { "no model".to_owned() } else { format!("models [{}]", models.join(", ")) };
    let shard = |part: &Part| part.report.evals.as_ref().and_then(|evals| evals.shard);
    let with_shard: Vec<&Part> = group.iter().filter(|part| shard(part).is_some()).collect();
    if with_shard.is_empty() {
        if group.len() > 1 {
            // Whole runs of the same models, not shards: joining them would count every case twice.
            return Err(ShardsRefused::WholeRuns { files: listed(&group.iter().collect::<Vec<_>>()), of });
        }
        return Ok(());
    }
    if with_shard.len() != group.len() {
        let without: Vec<&Part> = group.iter().filter(|part| shard(part).is_none()).collect();
        return Err(ShardsRefused::Unsharded { without: listed(&without), files: listed(&with_shard), of });
    }
    let counts: std::collections::BTreeSet<u32> = group.iter().filter_map(shard).map(|s| s.count).collect();
    if counts.len() > 1 {
        return Err(ShardsRefused::Counts { of, counts, files: listed(&with_shard) });
    }
    let count = counts.into_iter().next().unwrap_or(1);
    let mut by_index: BTreeMap<u32, Vec<&Part>> = BTreeMap::new();
    for part in group.iter() {
        by_index.entry(shard(part).map_or(0, |s| s.index)).or_default().push(part);
    }
    if let Some((index, twice)) = by_index.iter().find(|(_, parts)| parts.len() > 1) {
        return Err(ShardsRefused::Twice { index: *index, count, of, files: listed(twice) });
    }
    let missing: Vec<String> =
        (1..=count).filter(|index| !by_index.contains_key(index)).map(|index| format!("{index}/{count}")).collect();
    if !missing.is_empty() {
        return Err(ShardsRefused::Missing { missing: missing.join(", "), of, files: listed(&with_shard) });
    }
    group.sort_by_key(|part| shard(part).map_or(0, |s| s.index));
    Ok(())
}

/// The shards' cost budgets as one: spends, estimates and refused calls summed against each
/// shard's own budget; stopped when any shard's budget stopped it.
fn join_budgets(parts: &[Part]) -> Option<crate::report::telemetry::BudgetSection> {
    let budgets: Vec<&crate::report::telemetry::BudgetSection> =
        parts.iter().filter_map(|part| part.report.budget.as_ref()).collect();
    let first = budgets.first()?;
    let sum =
        |value: fn(&crate::report::telemetry::BudgetSection) -> f64| budgets.iter().map(|b| value(b)).sum::<f64>();
    Some(crate::report::telemetry::BudgetSection {
        max_cost_usd: first.max_cost_usd,
        estimate_usd: budgets.iter().map(|budget| budget.estimate_usd).sum(),
        estimate_method: first.estimate_method.clone(),
        spent_usd: sum(|budget| budget.spent_usd),
        overshoot_usd: sum(|budget| budget.overshoot_usd),
        calls_refused: budgets.iter().map(|budget| budget.calls_refused).sum(),
        stopped: budgets.iter().find_map(|budget| budget.stopped.clone()),
    })
}

/// A note when layer 0 ran in more than one report (each `models` list's shard 1 runs it) and
/// a check's status differs from the one the merged report keeps (`parts[base_at]`'s): the
/// checks that differ and the files. `None` when they agree or only one report ran layer 0.
fn layer0_differs(parts: &[Part], base_at: usize) -> Option<String> {
    let base = parts.get(base_at)?;
    let statuses =
        |part: &Part| part.report.checks.iter().map(|check| (check.id.clone(), check.status)).collect::<Vec<_>>();
    let kept = statuses(base);
    let mut ids: Vec<String> = Vec::new();
    let mut files: Vec<&str> = Vec::new();
    for part in parts.iter().filter(|part| !part.report.checks.is_empty()) {
        let other = statuses(part);
        if other == kept {
            continue;
        }
        files.push(part.label.as_str());
        for (id, status) in &other {
            let same = kept.iter().any(|(kept_id, kept_status)| kept_id == id && kept_status == status);
            if !same && !ids.contains(id) {
                ids.push(id.clone());
            }
        }
        for (id, _) in &kept {
            if !other.iter().any(|(other_id, _)| other_id == id) && !ids.contains(id) {
                ids.push(id.clone());
            }
        }
    }
    if files.is_empty() {
        return None;
    }
    Some(format!(
        "layer 0 ran in more than one report and its results differ ({}) in {}: the merged report keeps those of {}",
        ids.join(", "),
        files.join(", "),
        base.label
    ))
}

/// The joined layer-1 section, `None` when no shard has one.
fn join_evals(parts: &[Part]) -> Option<EvalsSection> {
    let sections: Vec<&EvalsSection> = parts.iter().filter_map(|part| part.report.evals.as_ref()).collect();
    let first = *sections.first()?;
    // The groups' models, in the order the parts come (grouped, groups sorted): disjoint lists.
    let mut models: Vec<String> = Vec::new();
    for model in sections.iter().flat_map(|section| &section.models) {
        if !models.contains(model) {
            models.push(model.clone());
        }
    }
    let mut section = EvalsSection {
        golden_set: sections.iter().find_map(|section| section.golden_set.clone()),
        models: models.clone(),
        call_cap_reached: sections.iter().any(|section| section.call_cap_reached),
        input_refused: sections.iter().any(|section| section.input_refused),
        tools_unlisted: sections.iter().any(|section| section.tools_unlisted),
        model_calls: sections.iter().map(|section| section.model_calls).sum(),
        replayed_model_calls: sections.iter().map(|section| section.replayed_model_calls).sum(),
        layer1_not_run: if sections.iter().all(|section| section.layer1_not_run.is_some()) {
            first.layer1_not_run.clone()
        } else {
            None
        },
        ..EvalsSection::default()
    };
    // The tools the shards saw (for the merge gate's tool-surface diff): shard 1's; shards that
    // listed other tools (the server changed during the matrix) are named.
    section.tool_surface = sections.iter().find_map(|section| section.tool_surface.clone());
    if let Some(first_surface) = &section.tool_surface {
        let differing: Vec<&str> = parts
            .iter()
            .filter(|part| {
                part.report
                    .evals
                    .as_ref()
                    .and_then(|evals| evals.tool_surface.as_ref())
                    .is_some_and(|surface| surface != first_surface)
            })
            .map(|part| part.label.as_str())
            .collect();
        if !differing.is_empty() {
            section.layer1_notes.push(format!(
                "the server listed other tools in {} than in the first shard: the tool-surface diff uses the first shard's",
                differing.join(", ")
            ));
        }
    }
    for note in sections.iter().flat_map(|section| &section.layer1_notes) {
        if !note.starts_with(crate::evaluate::SHARD_LAYER0_NOTE) && !section.layer1_notes.contains(note) {
            section.layer1_notes.push(note.clone());
        }
    }
    // A model is unusable when a shard found it so, ran when a shard ran it, else had no key.
    for model in &models {
        let statuses: Vec<&ModelStatus> =
            sections.iter().flat_map(|section| &section.model_status).filter(|status| status.model == *model).collect();
        let pick = [ModelOutcome::Unusable, ModelOutcome::Ran, ModelOutcome::NoApiKey]
            .into_iter()
            .find_map(|outcome| statuses.iter().find(|status| status.status == outcome));
        if let Some(status) = pick {
            section.model_status.push((*status).clone());
        }
    }
    // Cases in golden-set order, then models in the merged order: a shard's position p in its
    // own list is case p / (its models) and model p % (its models).
    let mut evals: Vec<((usize, usize, usize), EvalResult)> = Vec::new();
    for (at, section) in sections.iter().enumerate() {
        let own = section.models.len().max(1);
        let keys = positions(section).into_iter().enumerate().map(|(nth, position)| {
            let model = section.evals.get(nth).and_then(|eval| models.iter().position(|name| *name == eval.model));
            match model {
                Some(model) if position < usize::MAX / 2 => (position / own, model, 0),
                // Not a pair `--shard` writes: kept, after every listed pair.
                _ => (usize::MAX, at, nth),
            }
        });
        evals.extend(keys.zip(section.evals.iter().cloned()));
    }
    evals.sort_by_key(|(key, _)| *key);
    section.evals = evals.into_iter().map(|(_, eval)| eval).collect();
    for model in &models {
        let ran =
            section.model_status.iter().any(|status| status.model == *model && status.status == ModelOutcome::Ran);
        let own: Vec<&EvalResult> = section.evals.iter().filter(|eval| eval.model == *model).collect();
        if ran || !own.is_empty() {
            section.eval_metrics.push(metrics_of(model, &own));
        }
    }
    // The judge's rates over the joined runs, with the calibration the shards applied.
    if let Some(mut calibration) = sections.iter().find_map(|section| section.judge_calibration.clone()) {
        let rates = calibration.calibrated.then_some(calibration.tpr.zip(calibration.tnr)).flatten();
        calibration.rates = crate::calibration::judge_rates(&section, rates);
        section.judge_calibration = Some(calibration);
    }
    Some(section)
}

/// Decides the gate on the merged report (with the `fail-on` the shards ran with), records it,
/// and writes `report.json`, `junit.xml` and `summary.md` into `out_dir` (and junit.xml again at
/// `junit_path`). A file that cannot be written is exit status 4.
pub(crate) fn finish(
    mut report: RunReport,
    fail_on: Option<FailOn>,
    out_dir: &Path,
    junit_path: Option<&Path>,
) -> crate::evaluate::Evaluation {
    let fail_on = fail_on.unwrap_or(match report.gate.as_ref().map(|gate| gate.fail_on.as_str()) {
        Some("should") => FailOn::Should,
        Some("never") => FailOn::Never,
        _ => FailOn::Must,
    });
    let mut decision = verdict::decide(&report, VerdictInput { fail_on, interrupt: None, reports_failed: false });
    report.gate =
        Some(GateSection { fail_on: fail_on.as_str().to_owned(), result: decision.result.as_str().to_owned() });
    let written = crate::report::write_all(&report, out_dir)
        .and_then(|written| match junit_path.filter(|path| *path != written.junit_xml.as_path()) {
            Some(path) => crate::report::write_junit(&report, path).map(|()| written),
            None => Ok(written),
        })
        .map_err(|error| {
            UserError::new(Kind::Environment, error.to_string())
                .with_hint("check that --out and --junit-path point to writable places with free space")
        });
    if written.is_err() {
        decision.exit = decision.exit.max(ExitStatus::Environment);
    }
    crate::evaluate::Evaluation { report, written, decision }
}

/// The position in the unsplit case × model list (case index × models + model index) of each of
/// `section`'s evals, in order. A shard's evals are its slice in list order, minus the models
/// that did not run (all of their pairs at once), so the k-th result of a model is the k-th
/// position of the slice that belongs to that model.
fn positions(section: &EvalsSection) -> Vec<usize> {
    let models = section.models.len().max(1);
    let (index, count) = section.shard.map_or((1, 1), |shard| (shard.index as usize, shard.count as usize));
    let mut next: BTreeMap<usize, usize> = BTreeMap::new();
    section
        .evals
        .iter()
        .enumerate()
        .map(|(at, eval)| {
            let Some(model) = section.models.iter().position(|name| *name == eval.model) else {
                // A model not among `models` (never written so): after every listed pair.
                return usize::MAX / 2 + at;
            };
            // Positions p with p % count == index - 1 and p % models == model, in order.
            let start = next.get(&model).copied().unwrap_or(index - 1);
            match (0..models).map(|step| start + step * count).find(|p| p % models == model) {
                Some(p) => {
                    next.insert(model, p + count);
                    p
                }
                // No such position: not a slice `--shard` writes; keep it, after the others.
                None => usize::MAX / 2 + at,
            }
        })
        .collect()
}

/// The regression gate of a merged report (the merge job of a shard matrix): the merged
/// verdicts against the stored baseline of the cache directory (or `--baseline FILE`), and the
/// baseline stored from the whole run when the rules say so. The tool-surface diff uses the
/// tools the shards listed (`tool_surface`) and, for the cases that see each tool, the golden
/// set (`--golden-set`, else the path the shards name) when it is at hand and has the shards'
/// hash. No confirmation re-run: the merge job runs no model; a tripped gate says so.
pub(crate) fn gate_merged(report: &mut RunReport, settings: &crate::settings::Settings) {
    use crate::baseline::apply;
    let layer1 = &settings.layer1;
    let checks = report.checks.clone();
    let has_layer0 = report.layers.contains(&0);
    let Some(section) = report.evals.as_mut().filter(|section| section.layer1_not_run.is_none()) else { return };
    let endpoint = |label: &str| layer1.endpoint_of(label);
    let (baseline, label, warning, stored_path) = apply::load_for(layer1);
    if let Some(warning) = warning {
        section.layer1_notes.push(warning);
    }
    let tools = match &section.tool_surface {
        Some(surface) => crate::mcp::tools::canonical(surface),
        None => {
            if baseline.tools.is_some() {
                section.layer1_notes.push(
                    "no tool-surface diff: the shards' reports hold no tool list (written by an older mcp-eval)".into(),
                );
            }
            baseline.tools.clone().unwrap_or_else(|| "[]".into())
        }
    };
    // The golden set, to say which cases see a changed tool: only the one the shards ran.
    let shards_hash = section.golden_set.as_ref().map(|set| set.sha256.clone());
    let ran_by_shards = |set: &crate::golden::GoldenSet| Some(&set.hash) == shards_hash.as_ref();
    // The set given (`--golden-set`), read once; else the one at the path the shards recorded.
    let given =
        settings.golden_set.as_ref().map(|given| crate::golden::load::load(given.path()).ok().filter(ran_by_shards));
    let given_is_theirs = matches!(given, None | Some(Some(_)));
    let golden = given.flatten().or_else(|| {
        let recorded = section.golden_set.as_ref().map(|set| std::path::PathBuf::from(&set.path))?;
        crate::golden::load::load(&recorded).ok().filter(ran_by_shards)
    });
    if let (Some(path), false) = (settings.golden_set.as_ref().map(crate::settings::InputFile::path), given_is_theirs) {
        section.layer1_notes.push(format!(
            "the golden set {} is not the one the shards ran (it does not load, or its hash is not {}): {}",
            path.display(),
            shards_hash.as_deref().unwrap_or("none"),
            if golden.is_some() {
                "the cases that see a changed tool are named from the set at the path the shards recorded"
            } else {
                "the cases that see a changed tool are not named"
            }
        ));
    }
    let specs = golden.as_ref().map(crate::baseline::run_gate::case_specs).unwrap_or_default();
    let sees = |case: &str, tool: &str| specs.get(case).is_some_and(|spec| spec.sees(tool));
    let layer0 = has_layer0.then_some(checks.as_slice());
    let (mut gate, to_confirm) = apply::gate_section(
        section,
        &baseline,
        label,
        &endpoint,
        layer1.fail_on_evals,
        layer1.max_drop,
        &tools,
        golden.is_some().then_some(&sees as crate::baseline::surface::Sees<'_>),
        None,
        layer0,
    );
    if !to_confirm.is_empty() {
        gate.lines.push(format!(
            "the gate tripped and was not confirmed by a re-run ({} worsened case(s) × model(s)): the merge job runs no model",
            to_confirm.len()
        ));
    }
    section.eval_gate = Some(gate);
    if let (Some(context), Some(path)) = (&layer1.store_context, &stored_path) {
        let measured_at = report.started_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        apply::maybe_store(
            path,
            section,
            &endpoint,
            tools,
            &context.event,
            context.on_default_branch,
            layer1.accept_baseline,
            &measured_at,
            layer0,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::evals::{GoldenSetInfo, ShardInfo};

    fn eval(case: &str, model: &str) -> EvalResult {
        EvalResult { case_sha256: String::new(), ..EvalResult::for_tests(case, model, false, 1, 1, 1) }
    }

    /// The report of shard `index`/`count` of `cases` × `models` (every model ran).
    fn shard_report(cases: &[&str], models: &[&str], shard: Option<(u32, u32)>, sha: &str) -> Part {
        let mut report = RunReport::empty_for_tests();
        let (index, count) = shard.unwrap_or((1, 1));
        let all: Vec<EvalResult> =
            cases.iter().flat_map(|case| models.iter().map(move |model| eval(case, model))).collect();
        let evals = all.into_iter().enumerate().filter(|(p, _)| p % count as usize == index as usize - 1);
        report.evals = Some(EvalsSection {
            golden_set: Some(GoldenSetInfo {
                path: "g.yaml".into(),
                sha256: sha.into(),
                cases: cases.len(),
                today: None,
                timezone: None,
            }),
            models: models.iter().map(|model| (*model).to_owned()).collect(),
            model_status: models
                .iter()
                .map(|model| ModelStatus {
                    model: (*model).into(),
                    status: ModelOutcome::Ran,
                    detail: None,
                    replayed: false,
                })
                .collect(),
            evals: evals.map(|(_, eval)| eval).collect(),
            model_calls: 3,
            shard: shard.map(|(index, count)| ShardInfo { index, count }),
            ..EvalsSection::default()
        });
        if index > 1 {
            report.checks.clear();
            report.layers = vec![1];
        }
        Part { label: format!("shard{index}/report.json"), report }
    }

    fn pairs(report: &RunReport) -> Vec<(String, String)> {
        report.evals.as_ref().unwrap().evals.iter().map(|eval| (eval.case.clone(), eval.model.clone())).collect()
    }

    #[test]
    fn shards_join_in_the_unsplit_order_whatever_order_they_come_in() {
        let cases = ["a", "b", "c", "d", "e"];
        let models = ["m1", "m2"];
        let whole = shard_report(&cases, &models, None, "sha256:1");
        let parts: Vec<Part> =
            [3, 1, 2].iter().map(|&index| shard_report(&cases, &models, Some((index, 3)), "sha256:1")).collect();
        let merged = merge(parts).expect("merges");
        assert_eq!(pairs(&merged), pairs(&whole.report));
        let evals = merged.evals.as_ref().unwrap();
        assert_eq!(evals.model_calls, 9);
        assert_eq!(evals.shard, None);
        assert_eq!(evals.eval_metrics.len(), 2);
        assert_eq!(evals.eval_metrics[0].cases.get("pass"), Some(&5));
    }

    #[test]
    fn the_judge_rates_are_recomputed_over_the_joined_runs_with_the_shards_calibration() {
        let calibration = crate::report::evals::JudgeCalibration {
            judge_model: "p:judge".into(),
            calibrated: true,
            reason: None,
            file: Some("cal.json".into()),
            tpr: Some(0.9),
            tnr: Some(0.8),
            positives: Some(10),
            negatives: Some(10),
            measured_at: Some("2026-11-30".into()),
            rates: Vec::new(),
        };
        let parts: Vec<Part> = [(1, "pass"), (2, "fail")]
            .into_iter()
            .map(|(index, verdict)| {
                let mut part = shard_report(&["a", "b"], &["m1"], Some((index, 2)), "sha256:1");
                let section = part.report.evals.as_mut().expect("layer 1");
                section.evals[0].traces = vec![
                    serde_json::from_value(serde_json::json!({
                        "run": 1, "status": "pass", "reason": null, "ending": "answer", "turns": 1,
                        "model_calls": 1, "duration_ms": 1, "calls": [], "answer": null, "stop_reasons": [],
                        "input_tokens": null, "output_tokens": null,
                        "criteria": [{"criterion": "judge", "verdict": verdict, "reason": ""}]
                    }))
                    .expect("a trace"),
                ];
                section.judge_calibration = Some(calibration.clone());
                part
            })
            .collect();
        let merged = merge(parts).expect("merges");
        let joined = merged.evals.as_ref().and_then(|evals| evals.judge_calibration.clone()).expect("kept");
        // 1 of 2 judged runs passed: (0.5 + 0.8 − 1) / (0.9 + 0.8 − 1) = 0.3 / 0.7.
        assert_eq!((joined.rates[0].judged_runs, joined.rates[0].passed_runs), (2, 1));
        assert!((joined.rates[0].corrected.expect("corrected") - 0.3 / 0.7).abs() < 1e-12, "{joined:?}");
    }

    #[test]
    fn positions_skip_a_model_that_did_not_run() {
        let mut part = shard_report(&["a", "b", "c"], &["m1", "m2"], Some((2, 2)), "sha256:1");
        let section = part.report.evals.as_mut().unwrap();
        // Shard 2/2 holds positions 1, 3, 5: (a, m2), (b, m2), (c, m2); m1 has none here.
        assert_eq!(positions(section), [1, 3, 5]);
        let mut three = shard_report(&["a", "b", "c"], &["m1", "m2", "m3"], Some((1, 2)), "sha256:1");
        let section = three.report.evals.as_mut().unwrap();
        // Positions 0, 2, 4, 6, 8 with m2 (positions 4) gone: 0 (a,m1), 2 (a,m3), 6 (c,m1), 8 (c,m3).
        section.evals.retain(|eval| eval.model != "m2");
        assert_eq!(positions(section), [0, 2, 6, 8]);
    }

    #[test]
    fn mismatched_shards_are_refused_naming_the_files() {
        let cases = ["a", "b"];
        let other = vec![
            shard_report(&cases, &["m"], Some((1, 2)), "sha256:1"),
            shard_report(&cases, &["m"], Some((2, 2)), "sha256:2"),
        ];
        let error = merge(other).unwrap_err();
        assert!(error.message.contains("different golden sets"), "{}", error.message);
        assert!(error.message.contains("shard1/report.json") && error.message.contains("shard2/report.json"));

        // Other models are another group, where each list is missing a shard.
        let models = vec![
            shard_report(&cases, &["m"], Some((1, 2)), "sha256:1"),
            shard_report(&cases, &["n"], Some((2, 2)), "sha256:1"),
        ];
        let error = merge(models).unwrap_err();
        assert!(error.message.contains("shard(s) 2/2 missing for models [m]"), "{}", error.message);

        let missing = vec![shard_report(&cases, &["m"], Some((1, 3)), "sha256:1")];
        assert!(merge(missing).unwrap_err().message.contains("shard(s) 2/3, 3/3 missing"));

        let twice = vec![
            shard_report(&cases, &["m"], Some((1, 2)), "sha256:1"),
            shard_report(&cases, &["m"], Some((1, 2)), "sha256:1"),
        ];
        assert!(merge(twice).unwrap_err().message.contains("given twice"));

        let whole_runs =
            vec![shard_report(&cases, &["m"], None, "sha256:1"), shard_report(&cases, &["m"], None, "sha256:1")];
        let error = merge(whole_runs).unwrap_err();
        assert!(error.message.contains("whole runs of models [m], not shards"), "{}", error.message);
        let one = vec![shard_report(&cases, &["m"], None, "sha256:1")];
        assert_eq!(pairs(&merge(one).expect("one whole run is itself")).len(), 2);
    }

    /// [`shard_report`] with layer 0's one check (`D-1`, passed) in every report that runs
    /// layer 0, and a label naming the leg (`m1-shard2/report.json`, `m1-whole/report.json`).
    fn leg(cases: &[&str], models: &[&str], shard: Option<(u32, u32)>) -> Part {
        let mut part = shard_report(cases, models, shard, "sha256:1");
        if part.report.layers.contains(&0) {
            part.report.checks = vec![crate::report::model::CheckResult {
                id: "D-1".into(),
                title: "a check".into(),
                level: crate::report::model::Level::Must,
                status: crate::report::model::Status::Pass,
                message: String::new(),
                spec: String::new(),
                evidence: Vec::new(),
                duration_ms: 0,
                migration: false,
                waiver: None,
            }];
        }
        let which = shard.map_or("whole".to_owned(), |(index, _)| format!("shard{index}"));
        part.label = format!("{}-{which}/report.json", models.join("+"));
        part
    }

    fn notes(report: &RunReport) -> String {
        report.evals.as_ref().map(|evals| evals.layer1_notes.join(" | ")).unwrap_or_default()
    }

    #[test]
    fn legs_by_model_and_by_shard_join_in_any_order_into_the_unsplit_run() {
        let cases = ["a", "b", "c"];
        let whole = leg(&cases, &["m1", "m2"], None).report;
        let legs = vec![
            leg(&cases, &["m2"], Some((2, 2))),
            leg(&cases, &["m1"], Some((1, 2))),
            leg(&cases, &["m2"], Some((1, 2))),
            leg(&cases, &["m1"], Some((2, 2))),
        ];
        for rotation in 0..legs.len() {
            for reversed in [false, true] {
                let mut given = legs.clone();
                given.rotate_left(rotation);
                if reversed {
                    given.reverse();
                }
                let order: Vec<String> = given.iter().map(|part| part.label.clone()).collect();
                let merged = merge(given).expect("merges");
                assert_eq!(pairs(&merged), pairs(&whole), "{order:?}");
                let evals = merged.evals.as_ref().unwrap();
                assert_eq!(evals.models, ["m1", "m2"], "{order:?}");
                assert_eq!(evals.shard, None);
                assert_eq!(evals.model_calls, 4 * 3, "summed over the four legs");
                let status: Vec<&str> = evals.model_status.iter().map(|status| status.model.as_str()).collect();
                assert_eq!(status, ["m1", "m2"]);
                let metrics: Vec<(&str, Option<&usize>)> = evals
                    .eval_metrics
                    .iter()
                    .map(|metrics| (metrics.model.as_str(), metrics.cases.get("pass")))
                    .collect();
                assert_eq!(metrics, [("m1", Some(&3)), ("m2", Some(&3))], "{order:?}");
                assert_eq!(merged.layers, [0, 1]);
                assert_eq!(merged.checks.len(), 1, "layer 0 from a shard 1");
                assert_eq!(notes(&merged), "", "the layer-0 results agree: no note");
            }
        }
    }

    #[test]
    fn a_whole_run_of_one_model_joins_the_shards_of_another() {
        let cases = ["a", "b", "c", "d"];
        let whole = leg(&cases, &["m1", "m2", "m3"], None).report;
        let legs = vec![
            leg(&cases, &["m3"], Some((2, 2))),
            leg(&cases, &["m1", "m2"], None),
            leg(&cases, &["m3"], Some((1, 2))),
        ];
        let merged = merge(legs).expect("merges");
        assert_eq!(pairs(&merged), pairs(&whole));
        assert_eq!(merged.evals.as_ref().unwrap().models, ["m1", "m2", "m3"]);
    }

    #[test]
    fn a_model_in_two_lists_is_refused_naming_the_files() {
        let cases = ["a", "b"];
        let legs = vec![leg(&cases, &["m1"], None), leg(&cases, &["m1", "m2"], None)];
        let error = merge(legs).unwrap_err();
        assert_eq!(error.kind, Kind::InvalidInput);
        assert!(error.message.contains("`m1` is in more than one `models` list"), "{}", error.message);
        assert!(error.message.contains("m1-whole/report.json"), "{}", error.message);
        assert!(error.message.contains("m1+m2-whole/report.json"), "{}", error.message);

        // Sharded the same: still the same model twice.
        let legs = vec![
            leg(&cases, &["m1"], Some((1, 2))),
            leg(&cases, &["m1"], Some((2, 2))),
            leg(&cases, &["m2", "m1"], Some((1, 1))),
        ];
        assert!(merge(legs).unwrap_err().message.contains("`m1` is in more than one"));
    }

    #[test]
    fn the_shard_rules_hold_within_each_models_list() {
        let cases = ["a", "b", "c"];
        let counts =
            vec![leg(&cases, &["m1"], Some((1, 2))), leg(&cases, &["m1"], Some((2, 3))), leg(&cases, &["m2"], None)];
        let error = merge(counts).unwrap_err();
        assert!(
            error.message.contains("the shards of models [m1] were split in different counts"),
            "{}",
            error.message
        );

        let missing = vec![leg(&cases, &["m1"], Some((1, 2))), leg(&cases, &["m2"], Some((1, 2)))];
        let error = merge(missing).unwrap_err();
        assert!(error.message.contains("shard(s) 2/2 missing for models [m1]"), "{}", error.message);

        let mixed =
            vec![leg(&cases, &["m1"], Some((1, 2))), leg(&cases, &["m1"], None), leg(&cases, &["m1"], Some((2, 2)))];
        assert!(merge(mixed).unwrap_err().message.contains("m1-whole/report.json hold(s) no shard"));

        // Two whole runs of the same models stay refused beside another list.
        let twice = vec![leg(&cases, &["m1"], None), leg(&cases, &["m1"], None), leg(&cases, &["m2"], None)];
        let error = merge(twice).unwrap_err();
        assert!(error.message.contains("whole runs of models [m1], not shards"), "{}", error.message);
    }

    #[test]
    fn layer0_results_that_differ_between_the_lists_are_noted_and_the_first_kept() {
        let cases = ["a"];
        let mut other = leg(&cases, &["m2"], None);
        other.report.checks[0].status = crate::report::model::Status::Fail;
        let merged = merge(vec![other, leg(&cases, &["m1"], None)]).expect("merges");
        assert_eq!(merged.checks[0].status, crate::report::model::Status::Pass, "m1's list comes first");
        let notes = notes(&merged);
        assert!(
            notes.contains("layer 0 ran in more than one report and its results differ (D-1) in m2-whole/report.json"),
            "{notes}"
        );
        assert!(notes.contains("keeps those of m1-whole/report.json"), "{notes}");
    }
}
