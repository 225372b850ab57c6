//! Layer 2, resilience: the golden set's cases run again with a fault injected into one tool
//! call ([`crate::agent::inject`]), each trial's outcome decided by code
//! ([`crate::scoring::outcome`]), per case × fault × model as k of N.
//!
//! - **Which faults** ([`variants`]): the cases' own `faults:` (and `defaults.faults`) when any
//!   case has one; else the default suite — each fault once per tool the set expects a call of,
//!   on the first case that expects it, on its first call.
//! - **A variant** is a copy of its case under the id `CASE/FAULT@TOOL#N` with a hash of its own
//!   (the case's hash and the fault): the fault is not in the case's hash, so layer 1's
//!   baseline is kept. It keeps the case's prompt, tools, limits, kind and threshold; its
//!   layer-1 expectations (arguments, rubric) are not graded here.
//! - **The plan** ([`planned`]) is counted before any connection: trials and the most model
//!   calls they can make (trials × `max_turns`); over `--max-model-calls` it is refused.

use serde_json::{Value, json};

use crate::golden::{Case, FaultEntry, FaultKind, GoldenSet};
use crate::report::layer2::{FaultCallTrace, FaultResult, FaultStatus, FaultTrace, OutcomeCounts, ResilienceSection};
use crate::scoring::outcome::{self, FaultCall, FaultTrial, Outcome};

/// Where the faults come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// The cases' `faults:` and `defaults.faults`.
    GoldenSet,
    /// Each fault once per tool ([`variants`]).
    DefaultSuite,
}

impl Source {
    /// Its name in the report and the summary.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Source::GoldenSet => "golden set",
            Source::DefaultSuite => "default suite",
        }
    }
}

/// One case × fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Variant {
    /// The case's index in the set.
    pub case: usize,
    /// The fault.
    pub fault: FaultEntry,
}

/// The variants of `set`, and where they came from (see the module docs).
pub(crate) fn variants(set: &GoldenSet) -> (Vec<Variant>, Source) {
    let own: Vec<Variant> = set
        .cases
        .iter()
        .enumerate()
        .flat_map(|(case, spec)| spec.faults.iter().map(move |fault| Variant { case, fault: fault.clone() }))
        .collect();
    if !own.is_empty() {
        return (own, Source::GoldenSet);
    }
    let mut seen: Vec<String> = Vec::new();
    let mut suite = Vec::new();
    for (index, case) in set.cases.iter().enumerate() {
        for tool in expected_tools(case) {
            if seen.contains(&tool) {
                continue;
            }
            seen.push(tool.clone());
            suite.extend(
                FaultKind::ALL
                    .into_iter()
                    .map(|fault| Variant { case: index, fault: FaultEntry { tool: tool.clone(), fault, on_call: 1 } }),
            );
        }
    }
    (suite, Source::DefaultSuite)
}

/// The tools a case expects a call of (`expect_tool`, the steps of `expect_sequence`), in order.
fn expected_tools(case: &Case) -> Vec<String> {
    let resolved = &case.resolved;
    if resolved.get("negative") == Some(&Value::Bool(true)) {
        return Vec::new();
    }
    let mut tools: Vec<String> =
        resolved.get("expect_tool").and_then(Value::as_str).map(str::to_owned).into_iter().collect();
    for step in resolved.pointer("/expect_sequence/steps").and_then(Value::as_array).into_iter().flatten() {
        if let Some(tool) = step.get("tool").and_then(Value::as_str).filter(|tool| !tools.iter().any(|t| t == tool)) {
            tools.push(tool.to_owned());
        }
    }
    tools
}

/// The id of a variant: `CASE/FAULT@TOOL#N`.
pub(crate) fn variant_id(case: &Case, fault: &FaultEntry) -> String {
    format!("{}/{}", case.id, fault.label())
}

/// The golden set layer 2 runs: one case per variant (see the module docs), and each one's
/// fault, by index.
pub(crate) fn variant_set(set: &GoldenSet, variants: &[Variant]) -> (GoldenSet, Vec<FaultEntry>) {
    let mut cases = Vec::new();
    let mut faults = Vec::new();
    for variant in variants {
        let case = &set.cases[variant.case];
        let mut resolved = case.resolved.clone();
        if let Some(object) = resolved.as_object_mut() {
            // Layer 1's expectations are not graded under a fault: no judge, no argument model.
            for key in ["rubric", "expect_args"] {
                object.remove(key);
            }
        }
        cases.push(Case {
            id: variant_id(case, &variant.fault),
            hash: variant_hash(case, &variant.fault),
            resolved,
            rubric: None,
            semantic: Vec::new(),
            faults: Vec::new(),
            ..case.clone()
        });
        faults.push(variant.fault.clone());
    }
    let hashes: Vec<Value> = cases.iter().map(|case| Value::String(case.hash.clone())).collect();
    let hash = crate::jcs::hash(&Value::Array(hashes));
    (GoldenSet { path: set.path.clone(), hash, cases }, faults)
}

/// `sha256:…` of a case × fault: the case's hash and the fault (what the cache and the
/// baseline key a variant on).
pub(crate) fn variant_hash(case: &Case, fault: &FaultEntry) -> String {
    crate::jcs::hash(&json!({
        "case_sha256": case.hash,
        "fault": {"tool": fault.tool, "fault": fault.fault.as_str(), "on_call": fault.on_call},
    }))
}

/// What a layer-2 plan costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Planned {
    /// Case × fault variants.
    pub variants: usize,
    /// Trials, every model counted.
    pub trials: usize,
    /// The most model calls they can make: each trial's `max_turns`.
    pub model_calls: u64,
}

/// The cost of running `variants` of `set` on `models` models, `runs` overriding each case's
/// trials when given (`--runs`).
pub(crate) fn planned(set: &GoldenSet, variants: &[Variant], models: usize, runs: Option<u32>) -> Planned {
    let mut trials = 0;
    let mut model_calls = 0u64;
    for variant in variants {
        let case = &set.cases[variant.case];
        let each = case.trials.effective(runs).runs * models;
        trials += each;
        model_calls += (each as u64) * (case.run.max_turns as u64);
    }
    Planned { variants: variants.len(), trials, model_calls }
}

/// The text the plan is printed with before the first model call.
pub(crate) fn planned_text(planned: &Planned, models: usize, source: Source) -> String {
    format!(
        "layer 2: {} case × fault variant(s) from the {} × {models} model(s): {} trial(s), at most {} model call(s)",
        planned.variants,
        source.as_str(),
        planned.trials,
        planned.model_calls
    )
}

/// What a finished trial gave the classifier: its calls, answer, and what the model was given.
pub(crate) struct TrialView<'a> {
    /// The record.
    pub record: &'a crate::agent::TrialRecord,
    /// The prompt's user turns and the system text.
    pub given: Vec<&'a str>,
    /// The `enum` strings of the tools the case offers.
    pub schema_names: &'a [String],
}

/// The outcome of one trial and why; a trial the provider, a replay miss or the call cap
/// spoiled is `None` (an `error`, never the fault's doing).
pub(crate) fn trial_outcome(view: &TrialView<'_>) -> Option<(Outcome, String)> {
    use crate::agent::TrialEnding;
    let record = view.record;
    if matches!(record.ending, TrialEnding::ProviderError(_) | TrialEnding::NoRecording(_) | TrialEnding::CapReached) {
        return None;
    }
    let trial = FaultTrial {
        calls: record
            .calls
            .iter()
            .map(|call| FaultCall {
                name: &call.name,
                injected: call.injected.is_some(),
                succeeded: call.sent && !call.is_error && call.error.is_none(),
                result: &call.result,
            })
            .collect(),
        answer: record.answer.as_deref(),
        given: view.given.clone(),
        schema_names: view.schema_names.to_vec(),
    };
    Some(outcome::classify(&trial))
}

/// The result of one case × fault × model from its trials' outcomes (`None`: spoiled);
/// `effective` is the case's trials with `--runs` applied.
pub(crate) fn result(
    case: &Case,
    fault: &FaultEntry,
    model: &str,
    effective: crate::golden::Trials,
    trials: &[(&crate::agent::TrialRecord, Option<(Outcome, String)>)],
) -> FaultResult {
    let mut counts = OutcomeCounts::default();
    let mut traces = Vec::new();
    for (record, decided) in trials {
        let (name, reason) = match decided {
            Some((outcome, reason)) => {
                let slot = match outcome {
                    Outcome::Recovered => &mut counts.recovered,
                    Outcome::Fallback => &mut counts.fallback,
                    Outcome::Honest => &mut counts.honest,
                    Outcome::Fabricated => &mut counts.fabricated,
                    Outcome::Silent => &mut counts.silent,
                    Outcome::Unclear => &mut counts.unclear,
                    Outcome::Untested => &mut counts.untested,
                };
                *slot += 1;
                (outcome.as_str().to_owned(), reason.clone())
            }
            None => {
                counts.error += 1;
                ("error".to_owned(), format!("the trial did not finish: {}", record.ending.as_str()))
            }
        };
        traces.push(FaultTrace {
            trial: record.run,
            outcome: name,
            reason,
            calls: record
                .calls
                .iter()
                .map(|call| FaultCallTrace {
                    name: call.name.clone(),
                    injected: call.injected.is_some(),
                    sent: call.sent,
                    is_error: call.is_error,
                })
                .collect(),
            answer: record.answer.as_deref().map(|answer| crate::text::clip(answer, 2000)),
        });
    }
    let runs = trials.len();
    let threshold = if effective.hard { runs } else { effective.threshold.min(runs) };
    let graded = counts.graded();
    FaultResult {
        case: case.id.clone(),
        model: model.to_owned(),
        fault: fault.fault.as_str().to_owned(),
        tool: fault.tool.clone(),
        on_call: fault.on_call,
        sha256: variant_hash(case, fault),
        kind: if effective.hard { "hard" } else { "soft" }.to_owned(),
        threshold,
        runs,
        outcomes: counts,
        #[allow(clippy::cast_precision_loss, reason = "trial counts are small")]
        fabrication_rate: (graded > 0).then(|| counts.fabricated as f64 / graded as f64),
        status: status(effective.hard, threshold, runs, &counts),
        trials: traces,
    }
}

/// Pass, fail or inconclusive (see [`FaultStatus`]).
fn status(hard: bool, threshold: usize, runs: usize, counts: &OutcomeCounts) -> FaultStatus {
    let failed = counts.graded() - counts.passed();
    if hard {
        if failed > 0 {
            FaultStatus::Fail
        } else if counts.passed() == runs && runs > 0 {
            FaultStatus::Pass
        } else {
            FaultStatus::Inconclusive
        }
    } else if counts.passed() >= threshold && threshold > 0 {
        FaultStatus::Pass
    } else if failed > runs.saturating_sub(threshold) {
        FaultStatus::Fail
    } else {
        FaultStatus::Inconclusive
    }
}

/// Runs layer 2 over `base`'s golden set (the user's), with `base`'s models, tools, budget and
/// cassettes: the variants, their trials, each trial's outcome.
///
/// # Errors
/// Input errors of the plan (exit status 2), as layer 1's.
pub(crate) async fn run(
    base: &crate::trials::Layer1Input<'_>,
    events: &(dyn Fn(&crate::events::RunEvent) + Sync),
) -> Result<ResilienceSection, crate::error::UserError> {
    use crate::events::RunEvent;
    let (variants, source) = variants(base.set);
    let models = base.settings.models.len();
    let cost = planned(base.set, &variants, models, base.settings.runs);
    let mut section = ResilienceSection {
        source: source.as_str().to_owned(),
        variants: cost.variants,
        planned_trials: cost.trials,
        planned_model_calls: cost.model_calls,
        ..ResilienceSection::default()
    };
    if variants.is_empty() {
        let reason = "no case of the golden set expects a tool call, and none has `faults:`".to_owned();
        events(&RunEvent::Notice { text: format!("layer 2 did not run: {reason}") });
        section.not_run = Some(reason);
        return Ok(section);
    }
    events(&RunEvent::Notice { text: planned_text(&cost, models, source) });
    let (set, faults) = variant_set(base.set, &variants);
    let input = crate::trials::Layer1Input {
        settings: base.settings,
        set: &set,
        set_label: base.set_label.clone(),
        surface: base.surface,
        tools: base.tools,
        today: base.today,
        retry: base.retry,
        cassettes: base.cassettes.clone(),
        cache: None,
        budget: base.budget.clone(),
        faults: &faults,
        call_timeout_ms: base.call_timeout_ms,
    };
    let used_before = base.budget.used();
    let ran = crate::trials::run_faults(&input, events).await?;
    section.model_calls = base.budget.used().saturating_sub(used_before);
    if let Some(reason) = ran.not_run {
        events(&RunEvent::Notice { text: format!("layer 2 did not run: {reason}") });
        section.not_run = Some(reason);
        return Ok(section);
    }
    for status in &ran.section.model_status {
        if let Some(detail) = &status.detail {
            section.notes.push(format!("{}: {detail}", status.model));
        }
    }
    if base.budget.exhausted() {
        section
            .notes
            .push("the model-call cap (--max-model-calls) stopped layer 2: the trials it cut are `error`".into());
    }
    for (model_index, label) in &ran.models {
        for (index, case) in set.cases.iter().enumerate() {
            let Some(records) = ran.records.get(&(*model_index, index)) else { continue };
            let original = &base.set.cases[variants[index].case];
            let schema_names = enum_names(base.surface, original);
            let given: Vec<&str> =
                case.run.prompt.iter().map(String::as_str).chain(case.run.system.as_deref()).collect();
            let decided: Vec<_> = records
                .iter()
                .map(|record| {
                    let view = TrialView { record, given: given.clone(), schema_names: &schema_names };
                    (record, trial_outcome(&view))
                })
                .collect();
            let effective = case.trials.effective(base.settings.runs);
            section.results.push(result(original, &faults[index], label, effective, &decided));
        }
    }
    Ok(section)
}

/// The `enum` strings of the tools `case` lets the model see.
fn enum_names(surface: &crate::mcp::tools::ToolSurface, case: &Case) -> Vec<String> {
    let sees = crate::agent::CaseSpec::from_case(case);
    let mut names = Vec::new();
    for tool in surface.tools.iter().filter(|tool| sees.sees(&tool.name)) {
        outcome::schema_names(&tool.input_schema, &mut names);
        if let Some(output) = &tool.output_schema {
            outcome::schema_names(output, &mut names);
        }
    }
    names.sort();
    names.dedup();
    names
}

#[cfg(test)]
mod tests;
