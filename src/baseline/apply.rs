//! Layer 1 against its baseline, end to end: the baseline read (the stored runs beside the
//! verdict cache, or `--baseline FILE`), this run compared and gated
//! ([`super::regression`]), the tool-surface diff ([`super::surface`]), and this run stored as the new
//! baseline when the rules of [`super::store::should_store`] say so. Layer 3 likewise
//! ([`layer3`]): its deltas against the stored runs' figures ([`super::telemetry_delta`]), the
//! trends ([`super::trends`]), and its figures stored by the same rule; shown, never enforced.

use std::collections::BTreeSet;
use std::path::Path;

use super::regression::{self, BaselineRun, FailOnEvals, GateSettings};
use super::store::{Baseline, StoredRun, StoredTelemetry};
use crate::report::evals::{EvalResult, EvalStatus, EvalsSection, Layer1GateSection, ReportedModel};
use crate::report::telemetry::{TelemetrySection, TrendsSection};

/// Where the baseline comes from.
pub(crate) enum Source<'a> {
    /// A report.json (`--baseline FILE`).
    File(&'a Path),
    /// The stored baseline of the cache directory.
    Stored(&'a Path),
    /// None.
    Nothing,
}

/// Who reads the baseline: the label says how one gets stored, and that differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reader {
    /// `mcp-eval run` or `merge` on the command line: only `--accept-baseline` stores one.
    CommandLine,
    /// The Action: the default branch stores one (schedule, push, `workflow_dispatch`), and
    /// `accept-baseline: true` does whatever the gate says.
    Action,
}

/// The label of a stored baseline: how many runs it holds of the golden set stored last, why
/// each was stored ([`StoredRun::reason`]) and when the newest was, e.g. `the last 2 stored
/// run(s) (1 scheduled run of the default branch, 1 accepted with --accept-baseline / input
/// accept-baseline), the newest measured 2026-11-30T02:00:00Z`.
fn stored_label(baseline: &Baseline) -> String {
    let Some(runs) = baseline.runs.values().max_by(|a, b| {
        let newest = |runs: &Vec<StoredRun>| runs.first().map(|run| run.measured_at.clone()).unwrap_or_default();
        newest(a).cmp(&newest(b))
    }) else {
        return "stored verdicts (no record of the runs that stored them)".to_owned();
    };
    let mut reasons: Vec<(&str, usize)> = Vec::new();
    for run in runs {
        match reasons.iter_mut().find(|(reason, _)| *reason == run.reason) {
            Some((_, count)) => *count += 1,
            None => reasons.push((&run.reason, 1)),
        }
    }
    let why: Vec<String> = reasons
        .iter()
        .map(|(reason, count)| match *reason {
            "schedule" => format!("{count} scheduled run(s) of the default branch"),
            "push" => format!("{count} push run(s) of the default branch"),
            "workflow_dispatch" => format!("{count} workflow_dispatch run(s) of the default branch"),
            "accept-baseline" => format!("{count} accepted with --accept-baseline / input accept-baseline"),
            other => format!("{count} stored on {other}"),
        })
        .collect();
    let newest = runs.first().map(|run| run.measured_at.as_str()).unwrap_or_default();
    format!("the last {} stored run(s) ({}), the newest measured {newest}", runs.len(), why.join(", "))
}

/// Reads the baseline; a warning when one was expected but could not be read. `reader` picks
/// the wording of the empty state (how a baseline gets stored).
pub(crate) fn load(
    source: &Source<'_>,
    endpoint: &dyn Fn(&str) -> String,
    reader: Reader,
) -> (Baseline, String, Option<String>) {
    match source {
        Source::Nothing => (Baseline::default(), "none (no cache directory and no --baseline)".into(), None),
        Source::Stored(path) => match Baseline::load(path) {
            Ok(baseline) if baseline.verdicts.is_empty() => {
                let label = match reader {
                    Reader::CommandLine => {
                        format!("{NONE_STORED} (--accept-baseline stores this run's results as one)")
                    }
                    // Why there is none, short: the gate's lines say how one gets there.
                    Reader::Action => {
                        let dir = path.parent().and_then(Path::file_name).unwrap_or_default().to_string_lossy();
                        if path.exists() {
                            format!(
                                "{NONE_STORED}: the baselines.json of the cache directory `{dir}` holds no verdicts"
                            )
                        } else {
                            format!("{NONE_STORED}: no baselines.json in the cache directory `{dir}`")
                        }
                    }
                };
                (baseline, label, None)
            }
            Ok(baseline) => {
                let label = stored_label(&baseline);
                (baseline, label, None)
            }
            Err(warning) => (Baseline::default(), "none (unreadable)".into(), Some(warning.to_string())),
        },
        Source::File(path) => {
            let read = std::fs::read_to_string(path)
                .map_err(|error| error.to_string())
                .and_then(|text| crate::report::json::parse(&text).map_err(|error| error.to_string()));
            match read {
                Ok(report) => {
                    let section = report.evals.unwrap_or_default();
                    let measured_at = report.started_at.to_rfc3339();
                    let mut baseline = Baseline::from_evals(&section.evals, endpoint, &measured_at);
                    // The tools it saw, for the tool-surface diff (reports of mcp-eval 0.x
                    // before `tool_surface` have none: no diff then).
                    baseline.tools = section.tool_surface.as_ref().map(crate::mcp::tools::canonical);
                    // Its layer-3 figures, for layer 3's deltas (one run: no spread).
                    baseline.telemetry = report
                        .telemetry
                        .iter()
                        .filter(|telemetry| telemetry.not_run.is_none())
                        .map(|telemetry| StoredTelemetry::of(telemetry, &measured_at))
                        .collect();
                    (baseline, format!("{} (--baseline)", path.display()), None)
                }
                Err(error) => (
                    Baseline::default(),
                    "none (unreadable --baseline)".into(),
                    Some(format!("the baseline {} cannot be read ({error}); no baseline used", path.display())),
                ),
            }
        }
    }
}

/// The baseline of a run's layer-1 settings: `--baseline FILE` when given, else the one stored
/// in the cache directory; with its label, a warning when it could not be read, and the stored
/// baseline's path (where this run may store its own).
pub(crate) fn load_for(
    layer1: &crate::settings::layer1::Layer1Settings,
) -> (Baseline, String, Option<String>, Option<std::path::PathBuf>) {
    let stored_path = layer1.cache_dir.as_deref().map(Baseline::path_in);
    let source = match (&layer1.baseline_file, &stored_path) {
        (Some(file), _) => Source::File(file),
        (None, Some(path)) => Source::Stored(path),
        (None, None) => Source::Nothing,
    };
    let reader = match &layer1.store_context {
        Some(context) if context.event != crate::settings::layer1::CLI_EVENT => Reader::Action,
        _ => Reader::CommandLine,
    };
    let (baseline, label, warning) = load(&source, &|model| layer1.endpoint_of(model), reader);
    (baseline, label, warning, stored_path)
}

/// A confirmation re-run, for the final decision of [`gate_section`]: `section.evals` then pool
/// the re-run's runs (what the report shows), and the gate pairs the first runs with the
/// baseline and adds the re-run's counts to them (k + k′ of n + n′).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Confirmed<'a> {
    /// The evals of the first runs, before the re-run was pooled in.
    pub first: &'a [EvalResult],
    /// The results of the re-run, one per case × model re-run.
    pub reruns: &'a [EvalResult],
}

/// The gate of `section` against `baseline` under `policy`, with the tool-surface diff
/// (`tools_now`: the canonical surface of this run; `sees(case, tool)`, `None` when the golden
/// set is not at hand to say which cases see a tool). `confirmed` is a confirmation re-run,
/// pooled into the current counts before the (final) decision ([`Confirmed`]); the second value
/// lists the cases × models to re-run when the gate tripped and no re-run was given yet.
#[allow(clippy::too_many_arguments, reason = "one argument per input of the gate")]
pub(crate) fn gate_section(
    section: &EvalsSection,
    baseline: &Baseline,
    baseline_label: String,
    endpoint: &dyn Fn(&str) -> String,
    policy: FailOnEvals,
    max_drop: f64,
    tools_now: &str,
    sees: Option<super::surface::Sees<'_>>,
    confirmed: Option<Confirmed<'_>>,
    layer0: Option<&[crate::report::model::CheckResult]>,
) -> (Layer1GateSection, Vec<regression::CaseKey>) {
    let reruns = confirmed.map(|confirmed| confirmed.reruns);
    let first = confirmed.map_or(section.evals.as_slice(), |confirmed| confirmed.first);
    // The stored verdicts as up to three runs, newest first, of this golden set.
    let golden = section.golden_set.as_ref().map(|set| set.sha256.clone()).unwrap_or_default();
    // A model is compared across a change of its endpoint (a gateway URL), and its line names
    // both: model → (the endpoints its records were measured on, this run's).
    let mut runs: Vec<Vec<EvalResult>> = vec![Vec::new(); super::store::KEPT_RUNS];
    let mut moved: std::collections::BTreeMap<&str, (BTreeSet<String>, String)> = std::collections::BTreeMap::new();
    for eval in &section.evals {
        let comparable = baseline.comparable_across(eval, &endpoint(&eval.model));
        for (index, stored) in comparable.verdicts.iter().enumerate() {
            runs[index].push(stored.eval.clone());
        }
        if !comparable.other_endpoints.is_empty() {
            let now = super::store::shown_endpoint(&endpoint(&eval.model));
            moved.entry(&eval.model).or_insert_with(|| (BTreeSet::new(), now)).0.extend(comparable.other_endpoints);
        }
    }
    runs.retain(|run| !run.is_empty());
    let baseline_runs: Vec<BaselineRun<'_>> =
        runs.iter().map(|evals| BaselineRun { golden_set_sha256: &golden, evals }).collect();
    // A reused verdict is "no change by construction" only when the baseline holds that very
    // measurement; one measured on other code (this pull request's earlier run, say) is
    // compared like a fresh one, so a cached regression still fails the gate.
    let same_measurement = |eval: &EvalResult| {
        eval.cached.as_ref().is_some_and(|from| {
            baseline
                .comparable_across(eval, &endpoint(&eval.model))
                .verdicts
                .iter()
                .any(|stored| stored.measured_at == from.measured_at)
        })
    };
    let mut comparison = regression::compare(first, &baseline_runs, same_measurement);
    // The runs above hold only the verdicts stored under this run's case hashes, so `compare`
    // cannot see an edited case: ask the whole baseline why a case has no record.
    for case in &mut comparison.not_comparable {
        if matches!(case.reason, regression::Reason::NewCase | regression::Reason::OtherModel) {
            let known = baseline.reason_without_record(&case.key.case, &case.key.model, &case.key.case_sha256);
            if known == regression::Reason::ChangedCase || case.reason == regression::Reason::NewCase {
                case.reason = known;
            }
        }
    }
    let settings = GateSettings { max_drop, ..GateSettings::default() };
    let mut decision = regression::decide(&comparison, &settings);
    let mut to_confirm = Vec::new();
    match reruns {
        Some(reruns) => {
            comparison.pool_confirmation(reruns);
            decision = regression::decide(&comparison, &settings);
        }
        None => to_confirm = decision.to_confirm(),
    }
    let layer1 = regression::layer1_gate(&decision, &section.evals, policy);
    let first = decision.models.first();
    let cases: Vec<String> = section
        .evals
        .iter()
        .map(|eval| eval.case.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let tool_changes = match &baseline.tools {
        Some(before) => super::surface::lines(&super::surface::diff(before, tools_now), &cases, sees),
        None => Vec::new(),
    };
    let mut lines = layer1.lines;
    if let Some(reruns) = reruns {
        lines.push(format!(
            "the gate tripped and was confirmed by re-running the {} worsened case(s) × model(s) ({} more trial(s)) before this verdict",
            reruns.len(),
            reruns.iter().map(|eval| eval.runs).sum::<usize>()
        ));
    }
    // Flips: a comparable case whose verdict changed since the baseline.
    let status_now = |key: &regression::CaseKey| {
        section.evals.iter().find(|eval| eval.case == key.case && eval.model == key.model).map(|eval| eval.status)
    };
    let flips: Vec<String> = comparison
        .pairs
        .iter()
        .filter_map(|pair| {
            let now = status_now(&pair.key)?;
            let failed_now = now == crate::report::evals::EvalStatus::Fail;
            let counts = |counts: regression::Counts| format!("{}/{}", counts.passed, counts.completed);
            match (pair.baseline_passed, failed_now) {
                (true, true) => Some(format!(
                    "`{}` on `{}`: pass {} → fail {}",
                    pair.key.case,
                    pair.key.model,
                    counts(pair.baseline),
                    counts(pair.current())
                )),
                (false, false) if now == crate::report::evals::EvalStatus::Pass => Some(format!(
                    "`{}` on `{}`: fail {} → pass {}",
                    pair.key.case,
                    pair.key.model,
                    counts(pair.baseline),
                    counts(pair.current())
                )),
                _ => None,
            }
        })
        .collect();
    // Drift: the rate fell with the golden set and the tools unchanged.
    let unchanged_set = !comparison
        .not_comparable
        .iter()
        .any(|case| matches!(case.reason, regression::Reason::NewCase | regression::Reason::ChangedCase));
    let fell = decision
        .models
        .iter()
        .any(|model| model.cases > 0 && model.drop > 0.0 && model.verdict == regression::ModelVerdict::Regression);
    let drift = (fell && unchanged_set && baseline.tools.is_some() && tool_changes.is_empty()).then(|| {
        // The evidence, per model that fell: what the provider reported serving the compared
        // cases in the pooled baseline runs and in this run (confirmation runs included).
        let paired = |eval: &EvalResult, model: &str| {
            eval.model == model
                && comparison.pairs.iter().any(|pair| {
                    pair.key.model == eval.model
                        && pair.key.case == eval.case
                        && pair.key.case_sha256 == eval.case_sha256
                })
        };
        let evidence: Vec<String> = decision
            .models
            .iter()
            .filter(|model| model.cases > 0 && model.drop > 0.0 && model.verdict == regression::ModelVerdict::Regression)
            .map(|model| {
                let before = reported(
                    runs.iter().take(regression::POOLED_BASELINES).flatten().filter(|eval| paired(eval, &model.model)),
                );
                let now = reported(
                    // The evals pool the confirmation runs, their reported models included.
                    section.evals.iter().filter(|eval| paired(eval, &model.model)),
                );
                format!("`{}`: {}", model.model, drift_evidence(&before, &now))
            })
            .collect();
        format!(
            "the golden set and the tool definitions are unchanged since the baseline, yet the pass rate fell: the model or the server's behaviour moved, not the tool definitions; {}",
            evidence.join("; ")
        )
    });
    // Every verdict reused from the cache, each the very measurement the baseline holds:
    // nothing a verdict depends on changed since the baseline, "no change" (`pass`). Every
    // verdict reused but nothing compared and nothing failing (no baseline): `no-baseline`, and
    // the line says what is known. A reused verdict measured on other code is compared like a
    // fresh one above, so a cached regression still fails.
    let as_the_baseline = !comparison.not_comparable.is_empty()
        && comparison.pairs.is_empty()
        && comparison.not_comparable.iter().all(|case| case.reason == regression::Reason::Cached);
    let every_reused = section.evals.iter().any(|eval| eval.cached.is_some())
        && section
            .evals
            .iter()
            .filter(|eval| matches!(eval.status, EvalStatus::Pass | EvalStatus::Fail))
            .all(|eval| eval.cached.is_some());
    let per_model =
        |line: &str| -> Vec<String> { comparison.models.iter().map(|model| format!("`{model}`: {line}")).collect() };
    let (result, lines) = if as_the_baseline {
        (
            regression::GateResult::Pass.as_str().to_owned(),
            per_model("no change — every verdict was reused from the cache, as the baseline measured it"),
        )
    } else if every_reused && layer1.result == regression::GateResult::NoBaseline {
        // Some may be the baseline's own measurements, the rest have no record in it.
        let known = comparison.not_comparable.iter().filter(|case| case.reason == regression::Reason::Cached).count();
        let all = comparison.not_comparable.len();
        if known == 0 {
            (
                regression::GateResult::NoBaseline.as_str().to_owned(),
                per_model(
                    "no change since these verdicts were measured (every verdict reused from the cache); no baseline to compare with",
                ),
            )
        } else {
            (
                regression::GateResult::Pass.as_str().to_owned(),
                per_model(&format!(
                    "no change — every verdict was reused from the cache; {} of {all} have no record in the baseline",
                    all - known
                )),
            )
        }
    } else {
        (layer1.result.as_str().to_owned(), lines)
    };
    let mut lines = with_endpoint_changes(lines, &moved);
    if result == regression::GateResult::NoBaseline.as_str() {
        lines.extend(why_no_baseline(baseline, &baseline_label, section, &comparison));
    }
    // report.json keeps `result` and `policy` within their values of format 1: a gate without
    // enough data is a `pass` with `insufficient_data`, `strict` a `regression` with `strict`.
    let insufficient_data = result == regression::GateResult::InsufficientData.as_str();
    let result = if insufficient_data { regression::GateResult::Pass.as_str().to_owned() } else { result };
    let strict = policy == FailOnEvals::Strict;
    let out = Layer1GateSection {
        result,
        policy: if strict { FailOnEvals::Regression } else { policy }.as_str().to_owned(),
        insufficient_data,
        strict,
        fails: layer1.fails,
        baseline: baseline_label,
        lines,
        not_comparable: regression::not_comparable_counts(&comparison)
            .into_iter()
            .map(|(reason, count)| (reason.as_str().to_owned(), count))
            .collect(),
        not_comparable_cases: {
            let mut named: std::collections::BTreeMap<String, Vec<String>> = std::collections::BTreeMap::new();
            for case in comparison.not_comparable.iter().filter(|case| case.reason != regression::Reason::Cached) {
                let list = named.entry(case.reason.as_str().to_owned()).or_default();
                if list.len() < crate::report::evals::NOT_COMPARABLE_NAMED {
                    list.push(format!("`{}` on `{}`", case.key.case, case.key.model));
                }
            }
            named
        },
        tool_changes,
        flips,
        drift,
        layer0_delta: layer0.zip(baseline.layer0.as_ref()).map(|(checks, before)| {
            let before = super::State {
                failing: before.failing.iter().cloned().collect(),
                warning: before.warning.iter().cloned().collect(),
                catalogue: before.catalogue,
                // The stored baseline keeps no digests: descriptions are compared run to run on
                // a pull request, through its comment.
                descriptions: std::collections::BTreeMap::new(),
            };
            super::delta_line(super::Previous::Run(&before), &super::State::of_checks(checks))
                .replace("**Since the previous run:**", "layer 0 since the baseline:")
        }),
        pass_rate: first.map(|model| model.rate_now).filter(|_| first.is_some_and(|model| model.cases > 0)),
        pass_rate_delta: first.filter(|model| model.cases > 0).map(|model| delta_of_drop(model.drop)),
        minimum_detectable_drop: first.and_then(|model| model.minimum_detectable_drop),
    };
    (out, to_confirm)
}

/// Why a run found no baseline and how to get one, as gate lines beginning `no baseline:`:
/// nothing stored in the Action's cache directory (the workflow does not keep it between jobs,
/// or the default branch has not stored one yet), or a baseline stored for another golden set
/// or other models. Empty when the label says it already (the command line, `--baseline`).
fn why_no_baseline(
    baseline: &Baseline,
    label: &str,
    section: &EvalsSection,
    comparison: &regression::Comparison,
) -> Vec<String> {
    if baseline.verdicts.is_empty() {
        if !label.starts_with(&format!("{NONE_STORED}:")) {
            return Vec::new();
        }
        return vec![
            "no baseline: nothing is stored in this job's cache directory — a pull request finds the baseline of its default branch only when the workflow keeps that directory between jobs: an actions/cache step whose restore-keys match the default branch's entry (docs/cache-baseline-gate.md, “A workflow that keeps the cache”)".to_owned(),
            "the default branch stores one when layer 1 runs clean there — on schedule, or on push and workflow_dispatch with the gate passing — and accept-baseline: true stores one whatever the gate says".to_owned(),
        ];
    }
    if !comparison.pairs.is_empty() {
        return Vec::new();
    }
    let short = |sha: &str| sha.strip_prefix("sha256:").unwrap_or(sha).chars().take(12).collect::<String>();
    let mut why = Vec::new();
    let newest_set = baseline
        .runs
        .iter()
        .max_by(|a, b| {
            let newest = |runs: &Vec<StoredRun>| runs.first().map(|run| run.measured_at.clone()).unwrap_or_default();
            newest(a.1).cmp(&newest(b.1))
        })
        .map(|(sha, _)| sha);
    if let (Some(set), Some(stored)) = (&section.golden_set, newest_set)
        && !baseline.runs.contains_key(&set.sha256)
    {
        why.push(format!(
            "it was stored for golden set `{}` and this run's is `{}` (the default branch stores the new set once it runs it)",
            short(stored),
            short(&set.sha256)
        ));
    }
    let stored_models: BTreeSet<&str> =
        baseline.verdicts.values().flatten().map(|stored| stored.eval.model.as_str()).collect();
    if comparison.models.iter().all(|model| !stored_models.contains(model.as_str())) {
        let names = |models: &mut dyn Iterator<Item = &str>| {
            models.take(5).map(|model| format!("`{model}`")).collect::<Vec<_>>().join(", ")
        };
        why.push(format!(
            "it holds {} and this run evaluates {}",
            names(&mut stored_models.iter().copied()),
            names(&mut comparison.models.iter().map(String::as_str))
        ));
    }
    if why.is_empty() {
        why.push("none of this run's cases × models has a usable record (see Not compared)".to_owned());
    }
    vec![format!(
        "no baseline: the stored baseline holds {} verdict(s), none for this run: {}",
        baseline.verdicts.values().map(Vec::len).sum::<usize>(),
        why.join("; ")
    )]
}

/// The gate's lines with, on each model's line whose cases were compared with records of
/// another endpoint, the caveat `endpoint changed: A → B (compared as the same
/// provider:model)` (endpoints as [`super::store::shown_endpoint`] shows them).
fn with_endpoint_changes(
    lines: Vec<String>,
    moved: &std::collections::BTreeMap<&str, (BTreeSet<String>, String)>,
) -> Vec<String> {
    lines
        .into_iter()
        .map(|mut line| {
            let changed = moved.iter().find(|(model, _)| line.starts_with(&format!("`{model}`: ")));
            if let Some((_, (before, now))) = changed {
                let before = before.iter().map(String::as_str).collect::<Vec<_>>().join(", ");
                line.push_str(&format!("; endpoint changed: {before} → {now} (compared as the same provider:model)"));
            }
            line
        })
        .collect()
}

/// The distinct model versions and fingerprints `evals` report, sorted.
fn reported<'a>(evals: impl Iterator<Item = &'a EvalResult>) -> BTreeSet<&'a ReportedModel> {
    evals.flat_map(|eval| eval.reported_models.iter()).collect()
}

/// The most reported versions named on each side of a drift line; more are counted.
const SHOWN_REPORTED: usize = 3;

/// What the provider's reports say about a fall in the pass rate, as part of one line: a
/// different version or fingerprint (the model moved), the same one (the server's behaviour, or
/// sampling noise, moved), or none reported (no evidence either way).
fn drift_evidence(before: &BTreeSet<&ReportedModel>, now: &BTreeSet<&ReportedModel>) -> String {
    let list = |reported: &BTreeSet<&ReportedModel>| {
        if reported.is_empty() {
            return "no version".to_owned();
        }
        let shown: Vec<String> = reported.iter().take(SHOWN_REPORTED).map(ToString::to_string).collect();
        match reported.len().checked_sub(SHOWN_REPORTED).filter(|more| *more > 0) {
            Some(more) => format!("{} and {more} more", shown.join(", ")),
            None => shown.join(", "),
        }
    };
    if before.is_empty() && now.is_empty() {
        "the provider reported no model version or fingerprint, in the baseline or now, so there is no evidence of which moved".to_owned()
    } else if before == now {
        format!(
            "the provider reported the same version in the baseline and now ({}), so the server's behaviour (or sampling noise) moved",
            list(now)
        )
    } else {
        format!("the provider reported {} in the baseline and {} now", list(before), list(now))
    }
}

/// `pass_rate_delta` from a drop in pass rate (both 0..1): the drop negated, with no drop written
/// as `0.0`, never `-0.0` (which JSON readers and the Action's `pass-rate-delta` output would show as
/// a negative zero).
fn delta_of_drop(drop: f64) -> f64 {
    let delta = -drop;
    if delta == 0.0 { 0.0 } else { delta }
}

/// Stores this run as the baseline when the rules say so, and says so in `section`: a note, and,
/// when there was no baseline before, the gate's baseline line says this run is now the
/// baseline (not "none stored yet" above a note that says it was stored).
#[allow(clippy::too_many_arguments, reason = "one argument per fact the storing rule reads")]
pub(crate) fn maybe_store(
    path: &Path,
    section: &mut EvalsSection,
    endpoint: &dyn Fn(&str) -> String,
    tools_now: String,
    event: &str,
    on_default_branch: bool,
    accept: bool,
    measured_at: &str,
    layer0: Option<&[crate::report::model::CheckResult]>,
) {
    if !admits(section, event, on_default_branch, accept) {
        return;
    }
    let mut baseline = Baseline::load(path).unwrap_or_default();
    let golden = section.golden_set.as_ref().map(|set| set.sha256.clone()).unwrap_or_default();
    let reason = if accept { "accept-baseline".to_owned() } else { event.to_owned() };
    baseline.store(
        &section.evals,
        endpoint,
        &golden,
        Some(tools_now),
        StoredRun { measured_at: measured_at.to_owned(), reason },
    );
    if let Some(checks) = layer0 {
        let state = super::State::of_checks(checks);
        baseline.layer0 = Some(super::store::Layer0State {
            failing: state.failing.into_iter().collect(),
            warning: state.warning.into_iter().collect(),
            catalogue: state.catalogue,
        });
    }
    let note = match baseline.save(path) {
        Err(error) => format!("the baseline could not be stored: {error}"),
        Ok(()) => {
            if let Some(gate) = section.eval_gate.as_mut().filter(|gate| gate.result == "no-baseline") {
                if gate.baseline.starts_with(NONE_STORED) {
                    gate.baseline =
                        "none before this run: this run's layer-1 results are now stored as the baseline".into();
                }
            }
            if event == crate::settings::layer1::CLI_EVENT {
                "this run's layer-1 results were stored as the baseline (--accept-baseline)".to_owned()
            } else {
                format!("this run's layer-1 results were stored as the baseline ({event} on the default branch)")
            }
        }
    };
    section.layer1_notes.push(note);
}

/// Whether layer 1's `section` is stored as the baseline ([`super::store::should_store`] over
/// its facts): layer 1 ran clean (no error, no unusable provider, not cut by the call cap) and
/// its gate did not fail, as the event requires.
fn admits(section: &EvalsSection, event: &str, on_default_branch: bool, accept: bool) -> bool {
    let clean = section.layer1_not_run.is_none()
        && !section.call_cap_reached
        && !section.provider_failed()
        && section.evals.iter().all(|eval| eval.status != crate::report::evals::EvalStatus::Error);
    let gate_failed = section.eval_gate.as_ref().is_some_and(|gate| gate.result == "fail");
    super::store::should_store(event, on_default_branch, clean, gate_failed, accept)
}

/// Layer 3 against its baseline and in the trends, once its section is built: the deltas
/// against the layer-3 figures of the stored runs (or of the `--baseline` report), the trends
/// (`trends.json` of the cache directory, and this run), and — when the run stores its baseline
/// (the same rule as layer 1's, [`maybe_store`], on a run that `completed`) — this run's figures
/// stored with the baseline and added to the trends. Returns the warnings (an unreadable file,
/// a failed write). Shown, never enforced: nothing here reaches the verdict.
pub(crate) fn layer3(
    section: &mut TelemetrySection,
    evals: Option<&EvalsSection>,
    layer1: &crate::settings::layer1::Layer1Settings,
    completed: bool,
    measured_at: &str,
    commit: Option<&str>,
) -> Vec<String> {
    let mut warnings = Vec::new();
    if section.not_run.is_some() {
        return warnings;
    }
    if layer1.shard.is_some() {
        section.notes.push(
            "a shard measures a slice of the run: layer 3 is not compared with the baseline nor added to the trends"
                .into(),
        );
        return warnings;
    }
    let (baseline, label, warning, stored_path) = load_for(layer1);
    // Layer 1's gate said it already when it ran.
    if evals.is_none_or(|evals| evals.eval_gate.is_none()) {
        warnings.extend(warning);
    }
    let label = match &layer1.baseline_file {
        Some(_) => label,
        None => match baseline.telemetry.first() {
            Some(newest) => format!(
                "the last {} stored run(s) with layer-3 figures, the newest measured {}",
                baseline.telemetry.len(),
                newest.measured_at
            ),
            None => label,
        },
    };
    section.deltas = super::telemetry_delta::deltas(section, &baseline.telemetry, &label);
    let stores = completed
        && stored_path.is_some()
        && layer1.store_context.as_ref().zip(evals).is_some_and(|(context, evals)| {
            admits(evals, &context.event, context.on_default_branch, layer1.accept_baseline)
        });
    if stores && let Some(path) = &stored_path {
        let mut stored = Baseline::load(path).unwrap_or_default();
        stored.store_telemetry(StoredTelemetry::of(section, measured_at));
        if let Err(error) = stored.save(path) {
            warnings.push(format!("layer 3's figures could not be stored with the baseline: {error}"));
        }
    }
    let Some(dir) = &layer1.cache_dir else { return warnings };
    let path = super::trends::Trends::path_in(dir);
    let (mut trends, writable) = match super::trends::Trends::load(&path) {
        Ok(trends) => (trends, true),
        Err(not_read) => {
            warnings.push(not_read.warning);
            (super::trends::Trends::default(), not_read.replace)
        }
    };
    let point = super::trends::point_of(section, evals, measured_at, commit);
    let mut added = false;
    if stores && writable {
        trends.push(point.clone());
        match trends.save(&path) {
            Ok(()) => {
                added = true;
                section.notes.push(format!(
                    "this run's layer-3 figures were stored with the baseline and added to the trends ({} of the last {} green runs kept)",
                    trends.runs.len(),
                    super::trends::KEPT_POINTS
                ));
            }
            Err(error) => warnings.push(format!("the trends could not be written: {error}")),
        }
    }
    let mut points = trends.runs;
    if !added {
        points.push(point);
    }
    let extra = points.len().saturating_sub(super::trends::KEPT_POINTS);
    points.drain(..extra);
    section.trends = Some(TrendsSection { kept: super::trends::KEPT_POINTS, stored: added, points });
    warnings
}

/// How the baseline line of an empty store begins.
const NONE_STORED: &str = "none stored yet";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::evals::CachedFrom;

    const MODEL: &str = "openai:m";
    const OTHER: &str = "openai:other";

    fn endpoint(_: &str) -> String {
        "https://api.example/v1".into()
    }

    /// Case `case` at hash `sha256:HASH` on `model`, 5 of 5 passed.
    fn eval(case: &str, hash: &str, model: &str) -> EvalResult {
        EvalResult { case_sha256: format!("sha256:{hash}"), ..EvalResult::for_tests(case, model, false, 5, 5, 4) }
    }

    fn reused(mut eval: EvalResult) -> EvalResult {
        eval.cached = Some(CachedFrom {
            key: "sha256:k".into(),
            measured_at: "2026-11-30T00:00:00Z".into(),
            server_key: "none".into(),
        });
        eval
    }

    fn gate(evals: Vec<EvalResult>, baseline: &Baseline) -> Layer1GateSection {
        let section = EvalsSection { evals, ..EvalsSection::default() };
        let policy = FailOnEvals::Regression;
        gate_section(&section, baseline, "label".into(), &endpoint, policy, 0.02, "[]", None, None, None).0
    }

    fn stored(evals: &[EvalResult], reason: &str, at: &str) -> Baseline {
        let mut baseline = Baseline::default();
        let run = StoredRun { measured_at: at.into(), reason: reason.into() };
        baseline.store(evals, &endpoint, "sha256:set", None, run);
        baseline
    }

    #[test]
    fn an_edited_case_is_a_changed_case_and_an_unknown_id_a_new_case_for_both_baselines() {
        let before = [eval("edited", "v1", MODEL), eval("same", "same", MODEL), eval("moved", "moved", OTHER)];
        let now = vec![
            eval("edited", "v2", MODEL),
            eval("fresh", "fresh", MODEL),
            eval("same", "same", MODEL),
            eval("moved", "moved", MODEL),
        ];
        let from_file = Baseline::from_evals(&before, &endpoint, "2026-11-29T00:00:00Z");
        for baseline in [stored(&before, "push", "2026-11-29T00:00:00Z"), from_file] {
            let gate = gate(now.clone(), &baseline);
            let reasons: Vec<(&str, usize)> =
                gate.not_comparable.iter().map(|(reason, count)| (reason.as_str(), *count)).collect();
            assert_eq!(reasons, [("changed case", 1), ("new case", 1), ("other model", 1)], "{gate:?}");
        }
    }

    #[test]
    fn records_graded_by_another_version_are_not_compared_never_a_regression() {
        // Stored and `--baseline` records of the old graders, 5/5; now 0/5 under the new ones.
        let old_graders =
            |case: &str| EvalResult { grader_version: crate::cache::GRADER_VERSION - 1, ..eval(case, case, MODEL) };
        let before: Vec<EvalResult> = ["a", "b", "c", "d"].iter().map(|case| old_graders(case)).collect();
        let now: Vec<EvalResult> = ["a", "b", "c", "d"]
            .iter()
            .map(|case| EvalResult {
                case_sha256: format!("sha256:{case}"),
                ..EvalResult::for_tests(case, MODEL, false, 0, 5, 4)
            })
            .collect();
        let from_file = Baseline::from_evals(&before, &endpoint, "2026-11-29T00:00:00Z");
        for baseline in [stored(&before, "push", "2026-11-29T00:00:00Z"), from_file] {
            let gate = gate(now.clone(), &baseline);
            assert_eq!((gate.result.as_str(), gate.fails), ("no-baseline", false), "{gate:?}");
            let reasons: Vec<(&str, usize)> =
                gate.not_comparable.iter().map(|(reason, count)| (reason.as_str(), *count)).collect();
            assert_eq!(reasons, [("graded by another version", 4)], "{gate:?}");
            assert!(gate.flips.is_empty() && gate.drift.is_none(), "{gate:?}");
            let mut report = crate::report::model::RunReport::empty_for_tests();
            report.layers = vec![1];
            report.evals = Some(EvalsSection { evals: now.clone(), eval_gate: Some(gate), ..EvalsSection::default() });
            let summary = crate::report::markdown::render(&report);
            assert!(
                summary.contains("Not compared: 4 graded by another version (`a`, `b`, `c`, `d` on `openai:m`)"),
                "{summary}"
            );
            assert!(!summary.contains("regression ·"), "{summary}");
        }
        // A pool that holds both versions compares with this version's records only.
        let mut mixed = stored(&before, "push", "2026-11-28T00:00:00Z");
        let current: Vec<EvalResult> = ["a", "b", "c", "d"].iter().map(|case| eval(case, case, MODEL)).collect();
        let run = StoredRun { measured_at: "2026-11-29T00:00:00Z".into(), reason: "push".into() };
        mixed.store(&current, &endpoint, "sha256:set", None, run);
        let gate = gate(now.clone(), &mixed);
        assert_eq!(gate.result, "fail", "this version's 5/5 → 0/5 is a regression: {gate:?}");
    }

    #[test]
    fn an_edited_case_on_another_endpoint_is_a_changed_case() {
        // The model is compared across endpoints, so an edit is an edit wherever it was measured.
        let baseline = stored(&[eval("edited", "v1", MODEL)], "push", "2026-11-29T00:00:00Z");
        assert_eq!(baseline.reason_without_record("edited", MODEL, "sha256:v2"), regression::Reason::ChangedCase);
        assert_eq!(baseline.reason_without_record("edited", OTHER, "sha256:v2"), regression::Reason::OtherModel);
        assert_eq!(baseline.reason_without_record("other", MODEL, "sha256:v2"), regression::Reason::NewCase);
        let elsewhere = |_: &str| "http://127.0.0.1:8080/v1".to_owned();
        let section = EvalsSection { evals: vec![eval("edited", "v2", MODEL)], ..EvalsSection::default() };
        let policy = FailOnEvals::Regression;
        let gate =
            gate_section(&section, &baseline, "label".into(), &elsewhere, policy, 0.02, "[]", None, None, None).0;
        let reasons: Vec<&str> = gate.not_comparable.keys().map(String::as_str).collect();
        assert_eq!(reasons, ["changed case"], "{gate:?}");
    }

    /// Five cases × 3 trials on `MODEL`, `passed` of 3 each.
    fn three_trials(passed: [usize; 5]) -> Vec<EvalResult> {
        ["a", "b", "c", "d", "e"]
            .iter()
            .zip(passed)
            .map(|(case, passed)| EvalResult::for_tests(case, MODEL, false, passed, 3, 2))
            .collect()
    }

    #[test]
    fn a_gateway_url_change_keeps_the_comparison_and_names_both_endpoints_in_the_gate_line() {
        // Recorded through gateway A (credentials and a query in its URL), run through B: a case
        // that fell 3/3 → 0/3 fails the gate as it would on one endpoint.
        let at_a = |_: &str| "https://user:s3cret@gw-a.example/v1?api-key=k3y".to_owned();
        let at_b = |_: &str| "https://gw-b.example:8443/openai/v1".to_owned();
        let mut baseline = Baseline::default();
        let run = StoredRun { measured_at: "2026-11-29T00:00:00Z".into(), reason: "push".into() };
        baseline.store(&three_trials([3; 5]), &at_a, "sha256:set", None, run);
        let dir = tempfile::tempdir().expect("temp dir");
        let path = Baseline::path_in(dir.path());
        baseline.save(&path).expect("saved");
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(!text.contains("s3cret") && !text.contains("k3y") && !text.contains("user"), "{text}");
        let baseline = Baseline::load(&path).expect("loads");
        let section = EvalsSection { evals: three_trials([0, 3, 3, 3, 3]), ..EvalsSection::default() };
        let policy = FailOnEvals::Regression;
        let gate = gate_section(&section, &baseline, "label".into(), &at_b, policy, 0.02, "[]", None, None, None).0;
        assert_eq!((gate.result.as_str(), gate.fails), ("fail", true), "{gate:?}");
        assert!(gate.not_comparable.is_empty(), "{gate:?}");
        assert_eq!(
            gate.lines,
            ["`openai:m`: pass rate 1.00 → 0.80 (−0.20, noise ±0.13): regression; endpoint changed: \
              https://gw-a.example/v1 → https://gw-b.example:8443/openai/v1 (compared as the same provider:model)"]
        );
        let mut report = crate::report::model::RunReport::empty_for_tests();
        report.layers = vec![1];
        report.evals = Some(EvalsSection { eval_gate: Some(gate), ..section });
        let summary = crate::report::markdown::render(&report);
        assert!(
            summary.contains("endpoint changed: https://gw-a.example/v1 → https://gw-b.example:8443/openai/v1"),
            "{summary}"
        );
        assert!(!summary.contains("other model"), "{summary}");
    }

    #[test]
    fn the_endpoint_is_shown_as_scheme_host_and_path_only() {
        use super::super::store::shown_endpoint;
        assert_eq!(shown_endpoint("https://u:p@h.example/v1/?key=1#x"), "https://h.example/v1/");
        assert_eq!(shown_endpoint("http://127.0.0.1:8000/v1"), "http://127.0.0.1:8000/v1");
        assert_eq!(shown_endpoint(""), "no endpoint");
        assert_eq!(shown_endpoint("not a url"), "an endpoint that is not a URL");
    }

    #[test]
    fn every_verdict_reused_without_a_baseline_is_no_baseline_not_a_pass() {
        let now = vec![reused(eval("a", "a", MODEL)), reused(eval("b", "b", MODEL))];
        let gate = gate(now, &Baseline::default());
        assert_eq!(gate.result, "no-baseline");
        assert_eq!(
            gate.lines,
            [
                "`openai:m`: no change since these verdicts were measured (every verdict reused from the cache); no baseline to compare with"
            ]
        );
    }

    #[test]
    fn every_verdict_reused_as_the_baseline_measured_it_is_no_change_and_a_pass() {
        // The baseline holds the very measurements the cache gives back (the same time).
        let baseline = stored(&[eval("a", "a", MODEL), eval("b", "b", MODEL)], "schedule", "2026-11-30T00:00:00Z");
        let all = gate(vec![reused(eval("a", "a", MODEL)), reused(eval("b", "b", MODEL))], &baseline);
        assert_eq!(all.result, "pass");
        assert_eq!(
            all.lines,
            ["`openai:m`: no change — every verdict was reused from the cache, as the baseline measured it"]
        );
        let partly = gate(vec![reused(eval("a", "a", MODEL)), reused(eval("c", "c", MODEL))], &baseline);
        assert_eq!(partly.result, "pass");
        assert_eq!(
            partly.lines,
            ["`openai:m`: no change — every verdict was reused from the cache; 1 of 2 have no record in the baseline"]
        );
    }

    #[test]
    fn a_reused_regression_measured_on_other_code_still_fails_the_gate() {
        // The baseline passed 5/5; the cache gives back this pull request's earlier, failing
        // measurement (another time than the baseline's): compared like a fresh verdict.
        let cases = ["a", "b", "c", "d"];
        let passing: Vec<EvalResult> = cases.iter().map(|case| eval(case, case, MODEL)).collect();
        let baseline = stored(&passing, "schedule", "2026-11-29T00:00:00Z");
        let failing: Vec<EvalResult> = cases
            .iter()
            .map(|case| {
                reused(EvalResult {
                    case_sha256: format!("sha256:{case}"),
                    ..EvalResult::for_tests(case, MODEL, false, 0, 5, 4)
                })
            })
            .collect();
        let gate = gate(failing, &baseline);
        assert_eq!(gate.result, "fail", "{gate:?}");
        assert!(gate.fails);
        assert!(gate.not_comparable.is_empty(), "every reused verdict was compared: {gate:?}");
    }

    #[test]
    fn one_measurement_reused_run_after_run_is_stored_once() {
        let mut baseline = stored(&[eval("a", "a", MODEL)], "schedule", "2026-11-30T00:00:00Z");
        for at in ["2026-12-01T00:00:00Z", "2026-12-02T00:00:00Z"] {
            let run = StoredRun { measured_at: at.into(), reason: "push".into() };
            baseline.store(&[reused(eval("a", "a", MODEL))], &endpoint, "sha256:set", None, run);
        }
        let kept = baseline.comparable(&eval("a", "a", MODEL), &endpoint(MODEL));
        assert_eq!(kept.len(), 1, "the reused verdict is the stored measurement, not a new one: {kept:?}");
    }

    #[test]
    fn the_stored_baseline_is_labelled_by_why_its_runs_were_stored() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = Baseline::path_in(&dir.path().join(".mcp-eval-cache"));
        let label = |reader| load(&Source::Stored(&path), &endpoint, reader).1;
        assert_eq!(label(Reader::CommandLine), "none stored yet (--accept-baseline stores this run's results as one)");
        assert_eq!(
            label(Reader::Action),
            "none stored yet: no baselines.json in the cache directory `.mcp-eval-cache`"
        );

        let mut baseline = stored(&[eval("a", "a", MODEL)], "accept-baseline", "2026-11-28T00:00:00Z");
        baseline.save(&path).expect("saved");
        assert_eq!(
            label(Reader::CommandLine),
            "the last 1 stored run(s) (1 accepted with --accept-baseline / input accept-baseline), the newest measured 2026-11-28T00:00:00Z"
        );
        for (reason, at) in [("schedule", "2026-11-29T00:00:00Z"), ("push", "2026-11-30T00:00:00Z")] {
            let run = StoredRun { measured_at: at.into(), reason: reason.into() };
            baseline.store(&[eval("a", "a", MODEL)], &endpoint, "sha256:set", None, run);
        }
        baseline.save(&path).expect("saved");
        assert_eq!(
            label(Reader::Action),
            "the last 3 stored run(s) (1 push run(s) of the default branch, 1 scheduled run(s) of the default branch, 1 accepted with --accept-baseline / input accept-baseline), the newest measured 2026-11-30T00:00:00Z"
        );
    }

    #[test]
    fn a_pull_request_without_a_baselines_file_says_why_and_how_to_keep_one() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = Baseline::path_in(&dir.path().join(".mcp-eval-cache"));
        let (baseline, label, warning) = load(&Source::Stored(&path), &endpoint, Reader::Action);
        assert!(warning.is_none());
        assert_eq!(label, "none stored yet: no baselines.json in the cache directory `.mcp-eval-cache`");
        let section = EvalsSection { evals: vec![eval("a", "a", MODEL)], ..EvalsSection::default() };
        let policy = FailOnEvals::Regression;
        let gate = gate_section(&section, &baseline, label, &endpoint, policy, 0.02, "[]", None, None, None).0;
        assert_eq!(gate.result, "no-baseline");
        let why = gate.lines.iter().find(|line| line.starts_with("no baseline:")).expect("a line says why");
        assert!(why.contains("actions/cache") && why.contains("restore-keys"), "{why}");
        assert!(why.contains("docs/cache-baseline-gate.md"), "{why}");
        assert!(gate.lines.iter().any(|line| line.contains("accept-baseline: true stores one")), "{:?}", gate.lines);
        let mut report = crate::report::model::RunReport::empty_for_tests();
        report.layers = vec![1];
        report.evals = Some(EvalsSection { eval_gate: Some(gate), ..section });
        let summary = crate::report::markdown::render(&report);
        assert!(summary.contains("no baselines.json in the cache directory `.mcp-eval-cache`"), "{summary}");
        assert!(summary.contains("- no baseline: "), "{summary}");
    }

    #[test]
    fn a_baseline_of_another_golden_set_and_model_says_so() {
        let mut baseline = Baseline::default();
        let run = StoredRun { measured_at: "2026-11-29T00:00:00Z".into(), reason: "push".into() };
        baseline.store(&[eval("old", "old", OTHER)], &endpoint, "sha256:0ldset0000000000", None, run);
        let golden = crate::report::evals::GoldenSetInfo {
            path: "golden/tasks.yaml".into(),
            sha256: "sha256:newset0000000000".into(),
            cases: 1,
            today: None,
            timezone: None,
        };
        let section =
            EvalsSection { evals: vec![eval("a", "a", MODEL)], golden_set: Some(golden), ..EvalsSection::default() };
        let policy = FailOnEvals::Regression;
        let gate = gate_section(&section, &baseline, "label".into(), &endpoint, policy, 0.02, "[]", None, None, None).0;
        assert_eq!(gate.result, "no-baseline");
        let why = gate.lines.iter().find(|line| line.starts_with("no baseline:")).expect("a line says why");
        assert!(why.contains("golden set `0ldset000000`") && why.contains("`newset000000`"), "{why}");
        assert!(why.contains("`openai:other`") && why.contains("`openai:m`"), "{why}");
    }

    #[test]
    fn a_gate_that_cannot_see_is_shown_as_not_enough_data_in_the_summary_and_comment() {
        let one_trial = |passed| vec![EvalResult::for_tests("a", MODEL, false, passed, 1, 1)];
        let baseline = stored(&one_trial(1), "push", "2026-11-29T00:00:00Z");
        let section = EvalsSection { evals: one_trial(1), ..EvalsSection::default() };
        for (policy, fails, effect) in [
            (FailOnEvals::Regression, false, "does not fail the check (`fail-on-evals: regression`; `strict` would)"),
            (FailOnEvals::Strict, true, "fails the check: too few cases or trials to gate (`fail-on-evals: strict`)"),
        ] {
            let gate =
                gate_section(&section, &baseline, "label".into(), &endpoint, policy, 0.02, "[]", None, None, None).0;
            assert_eq!((gate.result.as_str(), gate.insufficient_data, gate.fails), ("pass", true, fails), "{gate:?}");
            assert_eq!((gate.policy.as_str(), gate.strict), ("regression", policy == FailOnEvals::Strict));
            let mut report = crate::report::model::RunReport::empty_for_tests();
            report.layers = vec![1];
            report.evals = Some(EvalsSection { eval_gate: Some(gate), ..section.clone() });
            let summary = crate::report::markdown::render(&report);
            let state = crate::baseline::State::default();
            let parts = crate::github::comment::CommentParts {
                comment_id: "default",
                summary: &summary,
                notes: &[],
                state: &state,
                report_location: "mcp-eval-report/report.json",
                run_url: None,
            };
            let comment = crate::github::comment::render(&parts, crate::baseline::Previous::First);
            for body in [&summary, &comment] {
                assert!(body.contains("**Regression gate:** ⚠️ not enough data to see a regression"), "{body}");
                assert!(body.contains(effect), "{body}");
                assert!(body.contains("not enough data: only a drop of 77 points or more is seen"), "{body}");
            }
        }
    }

    const TOOLS: &str = r#"[{"name":"search","description":"Finds things"}]"#;

    /// Cases a–d at 5/5, on `model`, each reporting `reported` (model version, fingerprint).
    fn suite(model: &str, passed: usize, reported: &[(&str, Option<&str>)]) -> Vec<EvalResult> {
        ["a", "b", "c", "d"]
            .iter()
            .map(|case| EvalResult {
                case_sha256: format!("sha256:{case}"),
                reported_models: reported
                    .iter()
                    .filter_map(|(version, fingerprint)| ReportedModel::of(Some(version), *fingerprint))
                    .collect(),
                ..EvalResult::for_tests(case, model, false, passed, 5, 4)
            })
            .collect()
    }

    /// The gate of `now` against `before` stored with the tool surface [`TOOLS`], when this run
    /// saw `tools_now`.
    fn gate_on_surface(before: &[EvalResult], now: Vec<EvalResult>, tools_now: &str) -> Layer1GateSection {
        let mut baseline = Baseline::default();
        let run = StoredRun { measured_at: "2026-11-29T00:00:00Z".into(), reason: "schedule".into() };
        baseline.store(before, &endpoint, "sha256:set", Some(TOOLS.into()), run);
        let section = EvalsSection { evals: now, ..EvalsSection::default() };
        let policy = FailOnEvals::Regression;
        gate_section(&section, &baseline, "label".into(), &endpoint, policy, 0.02, tools_now, None, None, None).0
    }

    #[test]
    fn a_falling_rate_with_the_golden_set_and_tools_unchanged_is_reported_as_drift() {
        let gate = gate_on_surface(&suite(MODEL, 5, &[]), suite(MODEL, 0, &[]), TOOLS);
        assert_eq!(gate.result, "fail", "{gate:?}");
        assert_eq!(
            gate.drift.as_deref(),
            Some(
                "the golden set and the tool definitions are unchanged since the baseline, yet the pass rate fell: the model or the server's behaviour moved, not the tool definitions; `openai:m`: the provider reported no model version or fingerprint, in the baseline or now, so there is no evidence of which moved"
            )
        );
    }

    #[test]
    fn no_drift_is_reported_when_the_rate_holds_or_the_tools_changed() {
        let steady = gate_on_surface(&suite(MODEL, 5, &[]), suite(MODEL, 5, &[]), TOOLS);
        assert_eq!(steady.drift, None, "{steady:?}");
        let edited = r#"[{"name":"search","description":"Finds other things"}]"#;
        let moved_tools = gate_on_surface(&suite(MODEL, 5, &[]), suite(MODEL, 0, &[]), edited);
        assert_eq!(moved_tools.result, "fail");
        assert!(!moved_tools.tool_changes.is_empty(), "{moved_tools:?}");
        assert_eq!(moved_tools.drift, None, "the tool change explains the fall: {moved_tools:?}");
        // A baseline that does not know its tools cannot rule them out.
        let unknown = gate(suite(MODEL, 0, &[]), &stored(&suite(MODEL, 5, &[]), "push", "2026-11-29T00:00:00Z"));
        assert_eq!(unknown.result, "fail");
        assert_eq!(unknown.drift, None, "{unknown:?}");
    }

    #[test]
    fn the_drift_line_names_the_versions_the_provider_reported_when_they_differ() {
        let before = suite(MODEL, 5, &[("gpt-4.1-2025-04-14", Some("fp_abc"))]);
        let now = suite(MODEL, 0, &[("gpt-4.1-2025-06-01", Some("fp_def"))]);
        let drift = gate_on_surface(&before, now, TOOLS).drift.expect("drift");
        assert!(
            drift.ends_with(
                "; `openai:m`: the provider reported gpt-4.1-2025-04-14 (fp_abc) in the baseline and gpt-4.1-2025-06-01 (fp_def) now"
            ),
            "{drift}"
        );
        assert!(!drift.contains('\n'), "one line: {drift}");
    }

    #[test]
    fn the_drift_line_says_when_the_provider_reported_the_same_version() {
        let same = [("claude-sonnet-4-5-20250929", None)];
        let drift = gate_on_surface(&suite(MODEL, 5, &same), suite(MODEL, 0, &same), TOOLS).drift.expect("drift");
        assert!(
            drift.ends_with(
                "; `openai:m`: the provider reported the same version in the baseline and now (claude-sonnet-4-5-20250929), so the server's behaviour (or sampling noise) moved"
            ),
            "{drift}"
        );
    }

    #[test]
    fn a_baseline_stored_before_versions_were_recorded_says_so_and_long_lists_are_counted() {
        let many = [("m-1", Some("fp_1")), ("m-1", Some("fp_2")), ("m-1", Some("fp_3")), ("m-1", Some("fp_4"))];
        let drift = gate_on_surface(&suite(MODEL, 5, &[]), suite(MODEL, 0, &many), TOOLS).drift.expect("drift");
        assert!(
            drift.ends_with(
                "the provider reported no version in the baseline and m-1 (fp_1), m-1 (fp_2), m-1 (fp_3) and 1 more now"
            ),
            "{drift}"
        );
    }

    #[test]
    fn the_drift_evidence_reads_only_the_model_that_fell() {
        // `openai:other` holds steady on another version; only `openai:m` fell.
        let mut before = suite(MODEL, 5, &[("v1", None)]);
        before.extend(suite(OTHER, 5, &[("other-v1", None)]));
        let mut now = suite(MODEL, 0, &[("v2", None)]);
        now.extend(suite(OTHER, 5, &[("other-v2", None)]));
        let drift = gate_on_surface(&before, now, TOOLS).drift.expect("drift");
        assert!(drift.ends_with("; `openai:m`: the provider reported v1 in the baseline and v2 now"), "{drift}");
        assert!(!drift.contains("other-v"), "{drift}");
    }

    #[test]
    fn no_drop_is_a_positive_zero_delta() {
        for drop in [0.0, -0.0] {
            let delta = delta_of_drop(drop);
            assert!(delta == 0.0 && delta.is_sign_positive(), "{drop} gave {delta}");
            assert_eq!(serde_json::to_string(&delta).unwrap(), "0.0");
            assert_eq!(format!("{delta:+.4}"), "+0.0000");
        }
    }

    #[test]
    fn a_drop_is_a_negative_delta_and_a_gain_a_positive_one() {
        assert_eq!(delta_of_drop(0.25), -0.25);
        assert_eq!(delta_of_drop(-0.1), 0.1);
    }
}
