//! Layer 1: a golden set run through models against the server under test. For every model
//! asked for, every case, every trial: the agent loop ([`crate::agent`]) with real `tools/call`s,
//! scored by [`crate::scoring`], assembled into the report's layer-1 section ([`assemble`]).
//!
//! - A model whose key is unset or empty is "not run: no API key" (never a failure).
//! - A provider that refuses a model's calls before answering any (401/403, unknown model, out
//!   of quota, unreachable) is unusable (exit status 5): its later calls fail at once without a
//!   request ([`caller::LiveModel::refused`]), so the trials in flight are all it costs.
//! - Trials go concurrently up to `--concurrency`; a case with `sequential_runs` runs its trials one
//!   after another. Every model call counts against `--max-model-calls` (exit status 6 when the
//!   cap stopped the run; the cases it cut are `skipped`).
//! - Trials spoiled by the provider (still failing after the retries) are `error`, never `fail`,
//!   and are tried once more at the end.
//! - `embedding` and `judge` argument matchers are resolved after each trial, before scoring, by
//!   the embeddings model and the judge ([`semantic`]); a case that needs one of them while it
//!   cannot run (no API key) is `skipped`.
//! - Before any model call, every tool name of the set is checked against the server's
//!   `tools/list`, and a case that would offer more tools than the provider accepts is refused:
//!   both are input errors (exit status 2) naming the case.

pub(crate) mod assemble;
pub(crate) mod caller;
mod execute;
pub(crate) mod plan;
pub(crate) mod semantic;

/// The `model_status.detail` of a model whose key variable `variable` (e.g. `OPENAI_API_KEY`) is
/// unset or empty: what to do about it — set the variable (or the Action input that fills it), or
/// replay recorded answers — and why it happens on pull requests from forks.
pub(crate) fn no_key_detail(variable: &str) -> String {
    let input = match variable {
        "OPENAI_API_KEY" => Some(crate::settings::env_vars::INPUT_OPENAI_API_KEY),
        "ANTHROPIC_API_KEY" => Some(crate::settings::env_vars::INPUT_ANTHROPIC_API_KEY),
        _ => None,
    };
    let set = match input {
        Some(input) => format!("set `{variable}` (in the Action, the input `{input}` from a secret)"),
        None => format!("set `{variable}`"),
    };
    format!(
        "`{variable}` is unset or empty: {set}, or replay recorded answers with `--cassettes DIR` (command line); pull requests from forks and Dependabot get no secrets"
    )
}

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::NaiveDate;

use crate::agent::tools::ToolExecutor;
use crate::agent::{CaseSpec, TrialEnding, TrialRecord};
use crate::error::UserError;
use crate::events::RunEvent;
use crate::golden::GoldenSet;
use crate::mcp::sync::lock;
use crate::mcp::tools::ToolSurface;
use crate::providers::cassette::Cassettes;
use crate::report::evals::{EvalsSection, ModelOutcome, ModelStatus};
use crate::settings::layer1::Layer1Settings;
use caller::{Budget, LiveModel, RetryPolicy};
use execute::Executed;
use plan::{Item, Plan, Planned, Scope};

/// What layer 1 runs on.
pub(crate) struct Layer1Input<'a> {
    /// Models, providers, limits.
    pub settings: &'a Layer1Settings,
    /// The golden set, checked.
    pub set: &'a GoldenSet,
    /// The golden set's path as the user wrote it.
    pub set_label: String,
    /// The server's tools (every `tools/list` page).
    pub surface: &'a ToolSurface,
    /// Tool calls on the server.
    pub tools: &'a dyn ToolExecutor,
    /// The run's start date, for relative `datetime` matchers.
    pub today: NaiveDate,
    /// Replaces the default retry policy (tests).
    pub retry: RetryPolicy,
    /// Cassettes to replay from, or record into (`settings.record`).
    pub cassettes: Option<Arc<Cassettes>>,
    /// The verdict cache, when one is used.
    pub cache: Option<CacheUse>,
    /// The evaluation's one model-call budget (`--max-model-calls`), shared by every call of
    /// this run — trials, the judge, argument matchers, embeddings — and by any confirmation
    /// re-run given the same budget: the cap holds for the whole evaluation.
    pub budget: Arc<Budget>,
    /// The wrappers the layers put around each trial's tool executor and model caller, in
    /// order ([`crate::agent::wrap`]).
    pub wraps: Vec<&'a dyn crate::agent::wrap::TrialWrap>,
}

/// The verdict cache as a run uses it.
#[derive(Debug, Clone)]
pub(crate) struct CacheUse {
    /// The store.
    pub store: crate::cache::VerdictCache,
    /// The server key (`--cache-key`), when there is one.
    pub server_key: Option<String>,
    /// When this run started (RFC 3339): what a stored verdict says it was measured at.
    pub measured_at: String,
    /// The workspace manifest of `--cache-key auto` to write once this run stores or reuses a
    /// verdict ([`crate::cache::VerdictCache::put_manifest`]); `None` with another key, or when
    /// the manifest stored last has this run's key already.
    pub manifest: Option<crate::cache::Manifest>,
    /// Why `--cache-key auto` moved since the manifest stored last, naming the paths that moved
    /// it ([`crate::cache::Manifest::moved_since`]): a note of the section, so the summary and
    /// `report.json` say it too, not only the log; `None` when it did not move.
    pub moved: Option<String>,
}

/// What layer 1 has finished so far, shared with the caller: a signal that stops the run
/// (SIGINT/SIGTERM drops the layer's future) still reports every finished trial
/// ([`Progress::interrupted`]).
#[derive(Default)]
pub(crate) struct Progress(std::sync::Mutex<Option<Snapshot>>);

/// The parts [`assemble::fill`] needs, owned.
struct Snapshot {
    section: EvalsSection,
    set: GoldenSet,
    items: Vec<Item>,
    specs: Vec<CaseSpec>,
    models: Vec<(usize, String, Arc<LiveModel>)>,
    records: BTreeMap<(usize, usize), Vec<TrialRecord>>,
    today: NaiveDate,
    trace_results: crate::settings::layer1::TraceResults,
    budget: Arc<Budget>,
    reused: BTreeMap<(usize, usize), crate::report::evals::EvalResult>,
    scope: Scope,
}

impl Progress {
    /// Starts recording `plan`'s trials.
    fn begin(&self, plan: &Plan<'_>) {
        *lock(&self.0) = Some(Snapshot {
            section: plan.section.clone(),
            set: plan.input.set.clone(),
            items: plan.items.clone(),
            specs: plan.specs.clone(),
            models: plan.ready.iter().map(|model| (model.index, model.label.clone(), model.caller.clone())).collect(),
            records: BTreeMap::new(),
            today: plan.input.today,
            trace_results: plan.input.settings.trace_results,
            budget: plan.input.budget.clone(),
            reused: plan.reused.clone(),
            scope: plan.scope.clone(),
        });
    }

    fn add(&self, key: (usize, usize), done: Vec<TrialRecord>) {
        if let Some(snapshot) = lock(&self.0).as_mut() {
            snapshot.records.entry(key).or_default().extend(done);
        }
    }

    fn replace(&self, key: (usize, usize), record: TrialRecord) {
        if let Some(runs) = lock(&self.0).as_mut().and_then(|snapshot| snapshot.records.get_mut(&key)) {
            if let Some(old) = runs.iter_mut().find(|old| old.trial == record.trial) {
                let spent = old.model_calls;
                *old = TrialRecord { model_calls: record.model_calls + spent, ..record };
            }
        }
    }

    fn records(&self) -> BTreeMap<(usize, usize), Vec<TrialRecord>> {
        lock(&self.0).as_ref().map(|snapshot| snapshot.records.clone()).unwrap_or_default()
    }

    /// The layer-1 section of the trials finished before `signal` stopped the run — a signal
    /// (`SIGINT`) or a panic, named in a note — (cases with trials missing are `skipped`); `None`
    /// when no model had started.
    pub(crate) fn interrupted(&self, signal: &str) -> Option<EvalsSection> {
        let mut guard = lock(&self.0);
        let snapshot = guard.as_mut()?;
        let mut section = snapshot.section.clone();
        section.model_calls = snapshot.budget.used();
        section.replayed_model_calls = snapshot.budget.replayed();
        section.layer1_notes.push(format!("{signal} stopped layer 1: the cases with trials missing are skipped"));
        let models: Vec<(usize, String, &LiveModel)> =
            snapshot.models.iter().map(|(index, label, caller)| (*index, label.clone(), caller.as_ref())).collect();
        for runs in snapshot.records.values_mut() {
            runs.sort_by_key(|record| record.trial);
        }
        assemble::fill(
            &mut section,
            &assemble::Inputs {
                set: &snapshot.set,
                items: &snapshot.items,
                specs: &snapshot.specs,
                models: &models,
                records: &snapshot.records,
                today: snapshot.today,
                trace_results: snapshot.trace_results,
                cut: assemble::Cut::Interrupted,
                reused: &snapshot.reused,
                scope: &snapshot.scope,
            },
        );
        Some(section)
    }
}

/// Runs layer 1: plans it ([`Plan::build`]), runs its trials ([`execute::execute`]) and builds
/// the section from their records ([`finish`]). An `Err` is an input error (exit status 2): an
/// unknown tool name, too many tools for a provider, an unreadable calibration file.
pub(crate) async fn run(
    input: &Layer1Input<'_>,
    progress: &Progress,
    events: &(dyn Fn(&RunEvent) + Sync),
) -> Result<EvalsSection, UserError> {
    let scope =
        Scope { shard: input.settings.shard.map(|shard| (shard, input.settings.models.len())), ..Scope::default() };
    let plan = match Plan::build(input, Item::cases(input.set, input.settings.runs), scope, events)? {
        Planned::NotRun(section) => return Ok(*section),
        Planned::Run(plan) => plan,
    };
    let executed = execute::execute(&plan, progress, events).await;
    Ok(finish(*plan, executed, events))
}

/// What ungraded trials left ([`run_ungraded`]): every trial's record by (model index, item
/// index), the models that ran (index, `PROVIDER:MODEL`), and the plan's section (model status,
/// notes; with `layer1_not_run` set when nothing could run).
pub(crate) struct Ungraded {
    /// Records by (model index, item index), trials in order.
    pub records: BTreeMap<(usize, usize), Vec<TrialRecord>>,
    /// The models that ran.
    pub models: Vec<(usize, String)>,
    /// Why no trial could run, when none could.
    pub not_run: Option<String>,
    /// The model statuses and notes the plan made.
    pub section: EvalsSection,
    /// The judge (`--judge-model`), when one can run: it decides the answers code leaves unclear.
    pub judge: Option<Arc<LiveModel>>,
}

/// The trials of `items` (a higher layer's: each a case of `input`'s set with what the layer
/// injects, graded on its outcome), planned and run as [`run`]'s (models, tools and their
/// wrappers, concurrency, budget, cassettes) and graded by the caller on their records. No
/// cache, no shard: every item runs.
///
/// # Errors
/// As [`run`].
pub(crate) async fn run_ungraded(
    input: &Layer1Input<'_>,
    items: Vec<Item>,
    events: &(dyn Fn(&RunEvent) + Sync),
) -> Result<Ungraded, UserError> {
    let plan = match Plan::build(input, items, Scope::default(), events)? {
        Planned::NotRun(section) => {
            return Ok(Ungraded {
                records: BTreeMap::new(),
                models: Vec::new(),
                not_run: section.layer1_not_run.clone(),
                section: *section,
                judge: None,
            });
        }
        Planned::Run(plan) => plan,
    };
    // Only layer 2 runs ungraded trials: its notices name it.
    let mut plan = plan;
    plan.layer = "layer 2";
    let executed = execute::execute(&plan, &Progress::default(), events).await;
    let models = plan.ready.iter().map(|model| (model.index, model.label.clone())).collect();
    let mut section = plan.section.clone();
    for (index, detail) in &executed.unusable {
        section.model_status.push(ModelStatus {
            model: input.settings.models[*index].label(),
            status: ModelOutcome::Unusable,
            detail: Some(detail.clone()),
            replayed: false,
        });
    }
    // A model answered from cassettes is marked, so the caller labels it as [`run`] does.
    for model in
        plan.ready.iter().filter(|model| model.caller.replays() && !executed.unusable.contains_key(&model.index))
    {
        section.model_status.push(ModelStatus {
            model: model.label.clone(),
            status: ModelOutcome::Ran,
            detail: Some(REPLAYED_DETAIL.to_owned()),
            replayed: true,
        });
    }
    Ok(Ungraded { records: executed.records, models, not_run: None, section, judge: plan.judge.clone() })
}

/// The `detail` of a model whose answers were replayed from cassettes.
const REPLAYED_DETAIL: &str = "its answers were replayed from cassettes: the model was not called";

/// The confirmation re-run of a tripped gate: a second plan over `input` scoped to the
/// worsened pairs `pairs` (`(PROVIDER:MODEL, case id)` → the trials the pair ran in the first
/// pass), each case its own number of trials again, run with fresh callers on the input's
/// budget. Its trials, model calls and tool calls go to `events` as the first pass's do,
/// numbered on after the first pass's trials ([`Scope::numbered_after`]); the planning and the
/// grading are quiet (the first pass said it all, and the pooled verdict is the report's). The
/// section holds the evals of those pairs only.
///
/// # Errors
/// As [`run`].
pub(crate) async fn confirm(
    input: &Layer1Input<'_>,
    pairs: &BTreeMap<(String, String), usize>,
    events: &(dyn Fn(&RunEvent) + Sync),
) -> Result<EvalsSection, UserError> {
    let models = &input.settings.models;
    let numbered_after: BTreeMap<(usize, usize), usize> = models
        .iter()
        .enumerate()
        .flat_map(|(model, label)| {
            let label = label.label();
            input.set.cases.iter().enumerate().filter_map(move |(case, spec)| {
                pairs.get(&(label.clone(), spec.id.clone())).map(|first| ((model, case), *first))
            })
        })
        .collect();
    let quiet = |_: &RunEvent| {};
    let only = numbered_after.keys().copied().collect();
    let scope = Scope { shard: None, only: Some(only), numbered_after };
    let plan = match Plan::build(input, Item::cases(input.set, input.settings.runs), scope, &quiet)? {
        Planned::NotRun(section) => return Ok(*section),
        Planned::Run(plan) => plan,
    };
    let executed = execute::execute(&plan, &Progress::default(), events).await;
    let mut section = finish(*plan, executed, &quiet);
    section.evals.retain(|eval| pairs.contains_key(&(eval.model.clone(), eval.case.clone())));
    Ok(section)
}

/// The section of an executed plan: each model's status and notes, the call cap, the evals
/// ([`assemble::fill`]), the judge's calibration, the verdicts stored in the cache, and an
/// event per graded case.
fn finish(mut plan: Plan<'_>, executed: Executed, events: &(dyn Fn(&RunEvent) + Sync)) -> EvalsSection {
    let Executed { records, unusable } = executed;
    let input = plan.input;
    let mut section = std::mem::take(&mut plan.section);
    for (index, detail) in &unusable {
        let label = input.settings.models[*index].label();
        section.model_status.push(ModelStatus {
            model: label,
            status: ModelOutcome::Unusable,
            detail: Some(detail.clone()),
            replayed: false,
        });
    }
    for model in &plan.ready {
        if !unusable.contains_key(&model.index) {
            section.model_status.push(ModelStatus {
                model: model.label.clone(),
                status: ModelOutcome::Ran,
                detail: model.caller.replays().then(|| REPLAYED_DETAIL.to_owned()),
                replayed: model.caller.replays(),
            });
        }
        section.layer1_notes.extend(model.caller.notes());
    }
    section.model_status.sort_by_key(|status| section.models.iter().position(|model| *model == status.model));
    let changed = records.values().flatten().filter(|run| run.result_changed > 0).count();
    if changed > 0 {
        section.layer1_notes.push(format!(
            "{changed} trial(s) were replayed over tool results that differed from the recording (tolerant replay, `--replay-match tolerant`): the recorded answers prove the model's choices for these prompts and tool descriptions, not how it would react to today's results; `--replay-match exact` refuses them"
        ));
    }
    // The evaluation's calls so far (a confirmation re-run shares the budget).
    section.model_calls = input.budget.used();
    section.replayed_model_calls = input.budget.replayed();
    section.call_cap_reached = records.values().flatten().any(|run| run.ending == TrialEnding::CapReached);
    let cost_stopped = input.budget.cost_stopped();
    if section.call_cap_reached && cost_stopped {
        section.layer1_notes.push(
            "the cost budget (--max-cost-usd) was reached: the calls it would have passed were not made, the cases it cut are skipped".into(),
        );
    } else if section.call_cap_reached {
        section.layer1_notes.push(format!(
            "the model-call cap ({} calls, --max-model-calls) was reached: the cases it cut are skipped",
            input.settings.max_model_calls
        ));
    }
    let ran: Vec<(usize, String, &LiveModel)> = plan
        .ready
        .iter()
        .filter(|model| !unusable.contains_key(&model.index))
        .map(|model| (model.index, model.label.clone(), model.caller.as_ref()))
        .collect();
    assemble::fill(
        &mut section,
        &assemble::Inputs {
            set: input.set,
            items: &plan.items,
            specs: &plan.specs,
            models: &ran,
            records: &records,
            today: input.today,
            trace_results: input.settings.trace_results,
            cut: if cost_stopped { assemble::Cut::CostBudget } else { assemble::Cut::CallCap },
            reused: &plan.reused,
            scope: &plan.scope,
        },
    );
    if let Some(judge) = &plan.judge {
        let calibration = plan.calibration.as_ref().map(|(file, name)| (file, name.as_str()));
        section.judge_calibration = Some(crate::calibration::for_report(&section, judge.label(), calibration));
    }
    if let Some(cache) = &input.cache {
        cache_notes(cache, &mut section, &plan, events);
    }
    for eval in &section.evals {
        events(&RunEvent::CaseGraded {
            case: eval.case.clone(),
            model: eval.model.clone(),
            status: eval.status,
            passed: eval.passed,
            runs: eval.runs,
            cached: eval.cached.is_some(),
            replayed: eval.cached.is_none() && section.replayed(&eval.model),
        });
    }
    if section.any_replayed() {
        events(&RunEvent::Notice {
            text: format!(
                "layer 1: model calls: {}: verdicts {}",
                section.model_calls_text(),
                crate::report::evals::REPLAYED_VERDICT
            ),
        });
    }
    if let Some(miss) = first_replay_miss(&section) {
        events(&miss);
    }
    section
}

/// Stores this run's verdicts in the cache, then the workspace manifest it was keyed on (when
/// it stored or reused any), and puts the note on the reused verdicts first.
fn cache_notes(cache: &CacheUse, section: &mut EvalsSection, plan: &Plan<'_>, events: &(dyn Fn(&RunEvent) + Sync)) {
    let (settings, set, reused) = (plan.input.settings, plan.input.set, &plan.reused);
    let stored = store_verdicts(cache, section, &plan.keys, settings, set, events);
    if let Some(moved) = &cache.moved {
        section.layer1_notes.insert(0, moved.clone());
    }
    // The workspace this run's cache use was keyed on, for the next run to compare with.
    if let Some(manifest) = cache.manifest.as_ref().filter(|_| stored > 0 || !reused.is_empty()) {
        if let Err(warning) = cache.store.put_manifest(manifest) {
            events(&RunEvent::Notice { text: format!("layer 1: the verdict cache: {warning}") });
        }
    }
    if reused.is_empty() {
        return;
    }
    let matchers = reused.keys().any(|(_, case)| set.cases.get(*case).is_some_and(|case| !case.semantic.is_empty()));
    let saved = saved_calls(reused.values(), matchers);
    let keyed_on = match cache.server_key.as_deref() {
        Some(key) => format!("the server key `{}`", crate::text::clip(key, 24)),
        None => "no server key (--cache-key none: a change to the server's code that keeps the tool surface reuses them; stale by design)".to_owned(),
    };
    section.layer1_notes.insert(
        0,
        format!(
            "{} of {} cases × models reused from the verdict cache ({saved}); keyed on the case, the tools it sees, the model, the endpoint, the number of trials and {keyed_on}",
            reused.len(),
            section.evals.len()
        ),
    );
}

/// What reusing `reused` saved, for the cache note: `~N model calls saved`, N the calls the
/// trials of those verdicts made when they were measured (each trace's `model_calls`, retries
/// included) plus the rubric judge's (`samples` calls per trial it judged; its retries are not
/// recorded, hence the `~`), split in two when the judge took part. The argument matchers'
/// embeddings and judge calls are shared between trials and recorded nowhere: when `matchers`
/// (a reused case has `embedding` or `judge` matchers) the text says they are not counted.
pub(crate) fn saved_calls<'a>(
    reused: impl Iterator<Item = &'a crate::report::evals::EvalResult>,
    matchers: bool,
) -> String {
    let (mut runs, mut judge) = (0, 0);
    for trace in reused.flat_map(|eval| &eval.traces) {
        runs += trace.model_calls;
        judge +=
            trace.judge.as_ref().filter(|judged| judged.verdict != "judge_error").map_or(0, |judged| judged.samples);
    }
    let mut text = format!("~{} model calls saved", runs + judge);
    if judge > 0 {
        text.push_str(&format!(": {runs} by the trials under test, {judge} by the rubric judge"));
    }
    if matchers {
        text.push_str("; the argument matchers' embeddings and judge calls are not counted");
    }
    text
}

/// The [`RunEvent::ReplayMiss`] of the first trial (cases in file order, then models, then trials)
/// that missed a recording — its cause is a replay miss of the model under test, its judge or
/// an argument check's model ([`crate::report::evals::ErrorCause::replay_miss`]) — counting them
/// all; `None` when no trial missed.
pub(crate) fn first_replay_miss(section: &EvalsSection) -> Option<RunEvent> {
    let mut missed = section
        .evals
        .iter()
        .flat_map(|eval| eval.traces.iter().map(move |run| (eval, run)))
        .filter(|(_, run)| run.cause.is_some_and(crate::report::evals::ErrorCause::replay_miss));
    let (eval, run) = missed.next()?;
    let reason = run.error_detail().unwrap_or("no recording answers this request; record it with --record");
    Some(RunEvent::ReplayMiss {
        model: eval.model.clone(),
        case: eval.case.clone(),
        run: run.run,
        reason: reason.to_owned(),
        count: 1 + missed.count(),
    })
}

/// Stores the verdicts measured in this run (pass or fail, not reused) in the cache; returns
/// how many were stored (a failed write is a notice, not counted).
fn store_verdicts(
    cache: &CacheUse,
    section: &EvalsSection,
    keys: &BTreeMap<(usize, usize), crate::cache::CacheKey>,
    settings: &Layer1Settings,
    set: &GoldenSet,
    events: &(dyn Fn(&RunEvent) + Sync),
) -> usize {
    let mut stored = 0;
    use crate::report::evals::EvalStatus;
    for eval in section.evals.iter().filter(|eval| eval.cached.is_none()) {
        if !matches!(eval.status, EvalStatus::Pass | EvalStatus::Fail) {
            continue;
        }
        let model_index = settings.models.iter().position(|model| model.label() == eval.model);
        let case_index = set.cases.iter().position(|case| case.id == eval.case);
        let Some(key) = model_index.zip(case_index).and_then(|index| keys.get(&index)) else { continue };
        match cache.store.put(key, eval, &cache.measured_at, cache.server_key.as_deref()) {
            Ok(()) => stored += 1,
            Err(warning) => events(&RunEvent::Notice { text: format!("layer 1: the verdict cache: {warning}") }),
        }
    }
    stored
}
