//! Layer 1 against its baseline, end to end: the baseline read (the stored runs beside the
//! verdict cache, or `--baseline FILE`), this run compared and gated
//! ([`super::gate`]), the tool-surface diff ([`super::surface`]), and this run stored as the new
//! baseline when the rules of [`super::store::should_store`] say so.

use std::path::Path;

use super::gate::{self, BaselineRun, FailOnEvals, GateSettings};
use super::store::{Baseline, StoredRun};
use crate::report::evals::{EvalResult, EvalsSection, Layer1GateSection};

/// Where the baseline comes from.
pub(crate) enum Source<'a> {
    /// A report.json (`--baseline FILE`).
    File(&'a Path),
    /// The stored baseline of the cache directory.
    Stored(&'a Path),
    /// None.
    Nothing,
}

/// Reads the baseline; a warning when one was expected but could not be read.
pub(crate) fn load(source: &Source<'_>, endpoint: &dyn Fn(&str) -> String) -> (Baseline, String, Option<String>) {
    match source {
        Source::Nothing => (Baseline::default(), "none (no cache directory and no --baseline)".into(), None),
        Source::Stored(path) => match Baseline::load(path) {
            Ok(baseline) if baseline.verdicts.is_empty() => {
                (baseline, "none stored yet (the default branch stores one when it runs layer 1 green)".into(), None)
            }
            Ok(baseline) => {
                let runs = baseline.runs.values().map(Vec::len).max().unwrap_or(0);
                (baseline, format!("the last {runs} green run(s) of the default branch (stored)"), None)
            }
            Err(warning) => (Baseline::default(), "none (unreadable)".into(), Some(warning)),
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
    let (baseline, label, warning) = load(&source, &|model| layer1.endpoint_of(model));
    (baseline, label, warning, stored_path)
}

/// The gate of `section` against `baseline` under `policy`, with the tool-surface diff
/// (`tools_now`: the canonical surface of this run; `sees(case, tool)`, `None` when the golden
/// set is not at hand to say which cases see a tool). `reruns` are the
/// results of a confirmation re-run, pooled into the current counts before the (final)
/// decision; the second value lists the cases × models to re-run when the gate tripped and no
/// re-run was given yet.
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
    reruns: Option<&[EvalResult]>,
    layer0: Option<&[crate::report::model::CheckResult]>,
) -> (Layer1GateSection, Vec<gate::CaseKey>) {
    // The stored verdicts as up to three runs, newest first, of this golden set.
    let golden = section.golden_set.as_ref().map(|set| set.sha256.clone()).unwrap_or_default();
    let mut runs: Vec<Vec<EvalResult>> = vec![Vec::new(); super::store::KEPT_RUNS];
    for eval in &section.evals {
        for (index, stored) in baseline.comparable(eval, &endpoint(&eval.model)).iter().enumerate() {
            runs[index].push(stored.eval.clone());
        }
    }
    runs.retain(|run| !run.is_empty());
    let baseline_runs: Vec<BaselineRun<'_>> =
        runs.iter().map(|evals| BaselineRun { golden_set_sha256: &golden, evals }).collect();
    let mut comparison = gate::compare(&section.evals, &baseline_runs, |eval| eval.cached.is_some());
    let settings = GateSettings { max_drop, ..GateSettings::default() };
    let mut decision = gate::decide(&comparison, &settings);
    let mut to_confirm = Vec::new();
    match reruns {
        Some(reruns) => {
            comparison.pool_confirmation(reruns);
            decision = gate::decide(&comparison, &settings);
        }
        None => to_confirm = decision.to_confirm(),
    }
    let layer1 = gate::layer1_gate(&decision, &section.evals, policy);
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
            "the gate tripped and was confirmed by re-running the {} worsened case(s) × model(s) ({} more run(s)) before this verdict",
            reruns.len(),
            reruns.iter().map(|eval| eval.runs).sum::<usize>()
        ));
    }
    // Flips: a comparable case whose verdict changed since the baseline.
    let status_now = |key: &gate::CaseKey| {
        section.evals.iter().find(|eval| eval.case == key.case && eval.model == key.model).map(|eval| eval.status)
    };
    let flips: Vec<String> = comparison
        .pairs
        .iter()
        .filter_map(|pair| {
            let now = status_now(&pair.key)?;
            let failed_now = now == crate::report::evals::EvalStatus::Fail;
            let counts = |counts: gate::Counts| format!("{}/{}", counts.passed, counts.completed);
            match (pair.baseline_passed, failed_now) {
                (true, true) => Some(format!(
                    "`{}` on `{}`: pass {} → fail {}",
                    pair.key.case,
                    pair.key.model,
                    counts(pair.baseline),
                    counts(pair.now)
                )),
                (false, false) if now == crate::report::evals::EvalStatus::Pass => Some(format!(
                    "`{}` on `{}`: fail {} → pass {}",
                    pair.key.case,
                    pair.key.model,
                    counts(pair.baseline),
                    counts(pair.now)
                )),
                _ => None,
            }
        })
        .collect();
    // Drift: the rate fell with the golden set and the tools unchanged.
    let unchanged_set = !comparison
        .not_comparable
        .iter()
        .any(|case| matches!(case.reason, gate::Reason::NewCase | gate::Reason::ChangedCase));
    let fell = decision
        .models
        .iter()
        .any(|model| model.cases > 0 && model.drop > 0.0 && model.verdict == gate::ModelVerdict::Regression);
    let drift = (fell && unchanged_set && baseline.tools.is_some() && tool_changes.is_empty()).then(|| {
        "the golden set and the tool definitions are unchanged since the baseline, yet the pass rate fell: the model or the server's behaviour moved, not the tool definitions".to_owned()
    });
    // Every verdict reused from the cache: nothing a verdict depends on changed since it was
    // measured, which is "no change", not "no baseline".
    let all_reused = !comparison.not_comparable.is_empty()
        && comparison.pairs.is_empty()
        && comparison.not_comparable.iter().all(|case| case.reason == gate::Reason::Cached);
    let (result, lines) = if all_reused && layer1.result == gate::GateResult::NoBaseline {
        let models: Vec<String> = comparison
            .models
            .iter()
            .map(|model| format!("`{model}`: no change — every verdict was reused from the cache"))
            .collect();
        ("pass".to_owned(), models)
    } else {
        (layer1.result.as_str().to_owned(), lines)
    };
    let out = Layer1GateSection {
        result,
        policy: policy.as_str().to_owned(),
        fails: layer1.fails,
        baseline: baseline_label,
        lines,
        not_comparable: gate::not_comparable_counts(&comparison)
            .into_iter()
            .map(|(reason, count)| (reason.as_str().to_owned(), count))
            .collect(),
        tool_changes,
        flips,
        drift,
        layer0_delta: layer0.zip(baseline.layer0.as_ref()).map(|(checks, before)| {
            let before = super::State {
                failing: before.failing.iter().cloned().collect(),
                warning: before.warning.iter().cloned().collect(),
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

/// `pass_rate_delta` from a drop in pass rate (both 0..1): the drop negated, with no drop written
/// as `0.0`, never `-0.0` (which JSON readers and the Action's `pass-rate-delta` output would show as
/// a negative zero).
fn delta_of_drop(drop: f64) -> f64 {
    let delta = -drop;
    if delta == 0.0 { 0.0 } else { delta }
}

/// Stores this run as the baseline when the rules say so; the note to report, if any.
#[allow(clippy::too_many_arguments, reason = "one argument per fact the storing rule reads")]
pub(crate) fn maybe_store(
    path: &Path,
    section: &EvalsSection,
    endpoint: &dyn Fn(&str) -> String,
    tools_now: String,
    event: &str,
    on_default_branch: bool,
    accept: bool,
    measured_at: &str,
    layer0: Option<&[crate::report::model::CheckResult]>,
) -> Option<String> {
    let clean = section.layer1_not_run.is_none()
        && !section.call_cap_reached
        && !section.provider_failed()
        && section.evals.iter().all(|eval| eval.status != crate::report::evals::EvalStatus::Error);
    let gate_failed = section.eval_gate.as_ref().is_some_and(|gate| gate.result == "fail");
    if !super::store::should_store(event, on_default_branch, clean, gate_failed, accept) {
        return None;
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
        });
    }
    Some(match baseline.save(path) {
        Ok(()) if event == crate::settings::layer1::CLI_EVENT => {
            "this run's layer-1 results were stored as the baseline (--accept-baseline)".to_owned()
        }
        Ok(()) => format!("this run's layer-1 results were stored as the baseline ({event} on the default branch)"),
        Err(error) => format!("the baseline could not be stored: {error}"),
    })
}

#[cfg(test)]
mod tests {
    use super::delta_of_drop;

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
