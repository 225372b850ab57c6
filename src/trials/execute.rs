//! Runs a [`Plan`]'s trials: concurrently up to `--concurrency`, each through the agent loop
//! ([`crate::agent::run_trial`]) then its argument matchers and the rubric judge; a model whose
//! provider refused its first calls is unusable; trials the provider spoiled get one more try.
//! Every finished trial goes to [`Progress`] as it ends, so a signal still reports it.

use std::collections::BTreeMap;

use futures_util::StreamExt as _;

use super::Progress;
use super::caller::LiveModel;
use super::plan::{Grading, Plan, Ready, Work};
use super::semantic;
use crate::agent::observe::{ObservedModel, ObservedTools};
use crate::agent::tools::ToolExecutor;
use crate::agent::wrap::{Place, TrialSite, TrialWrap, WrappedTrial};
use crate::agent::{self, CaseSpec, ModelCaller, TrialContext, TrialEnding, TrialRecord, ValidateArguments};
use crate::events::RunEvent;
use crate::providers::{ProviderError, ToolSpec};
use crate::report::evals::{JudgeTrace, JudgedCriterion};
use crate::scoring::judge;
use crate::settings::layer1::Layer1Settings;

/// What executing a plan left: every trial's record, and the models found unusable.
pub(crate) struct Executed {
    /// Records by (model index, case index), trials in order.
    pub records: BTreeMap<(usize, usize), Vec<TrialRecord>>,
    /// The unusable models by index: what refused them and the fix.
    pub unusable: BTreeMap<usize, String>,
}

/// Runs every trial of `plan`, reporting each to `progress` as it ends and the trials' events
/// to `events`. A provider that refuses the first calls (a refused key, an unknown model, no
/// quota, no connection) is asked nothing more: the trials in flight then are all it costs.
pub(crate) async fn execute(plan: &Plan<'_>, progress: &Progress, events: &(dyn Fn(&RunEvent) + Sync)) -> Executed {
    progress.begin(plan);
    let concurrency = plan.input.settings.concurrency.max(1);
    futures_util::stream::iter(plan.work.iter().cloned())
        .map(|work| async move {
            let mut done = Vec::new();
            for &trial in &work.trials {
                done.push(trial_of(plan, &work, trial, events).await);
            }
            ((work.model, work.case), done)
        })
        .buffer_unordered(concurrency)
        .for_each(|(key, done)| {
            if !done.is_empty() {
                progress.add(key, done);
            }
            std::future::ready(())
        })
        .await;
    let mut unusable = BTreeMap::new();
    for model in &plan.ready {
        let Some(error) = model.caller.refused() else { continue };
        if let Some(fix) = unusable_fix(&error, model, plan.input.settings) {
            unusable.insert(model.index, format!("{error}; {fix}"));
        }
    }
    for (index, detail) in &unusable {
        let model = plan.input.settings.models[*index].label();
        events(&RunEvent::ProviderUnusable { model, detail: detail.clone() });
    }
    try_spoiled_again(plan, &unusable, progress, events).await;
    let mut records = progress.records();
    for runs in records.values_mut() {
        runs.sort_by_key(|record| record.trial);
    }
    Executed { records, unusable }
}

/// Runs once more each trial the provider spoiled (of a model still usable), while the budget
/// lasts, but for a provider error that repeated itself (deterministic); the new record
/// replaces the old one, its model calls added.
async fn try_spoiled_again(
    plan: &Plan<'_>,
    unusable: &BTreeMap<usize, String>,
    progress: &Progress,
    events: &(dyn Fn(&RunEvent) + Sync),
) {
    let retry: Vec<Work> = progress
        .records()
        .iter()
        .filter(|(key, _)| !unusable.contains_key(&key.0))
        .flat_map(|(key, runs)| {
            // A provider error that repeated itself word for word would repeat again.
            let spoiled =
                |run: &&TrialRecord| matches!(run.ending, TrialEnding::ProviderError(_)) && !run.deterministic_error;
            runs.iter().filter(spoiled).map(move |run| Work { model: key.0, case: key.1, trials: vec![run.trial] })
        })
        .collect();
    if retry.is_empty() || plan.input.budget.exhausted() {
        return;
    }
    events(&RunEvent::Notice {
        text: format!("{}: trying {} trial(s) spoiled by the provider once more", plan.layer, retry.len()),
    });
    futures_util::stream::iter(retry)
        .map(|work| async move { ((work.model, work.case), trial_of(plan, &work, work.trials[0], events).await) })
        .buffer_unordered(plan.input.settings.concurrency.max(1))
        .for_each(|(key, record)| {
            progress.replace(key, record);
            std::future::ready(())
        })
        .await;
}

/// Trial `trial` of `work`'s case on its model, with what the plan gives it.
async fn trial_of(plan: &Plan<'_>, work: &Work, trial: usize, events: &(dyn Fn(&RunEvent) + Sync)) -> TrialRecord {
    let model = plan.ready.iter().find(|model| model.index == work.model).expect("work names a ready model");
    let offered: &[ToolSpec] = plan.offered.get(&(work.model, work.case)).map(|tools| &tools[..]).unwrap_or_default();
    let judge = plan.judge.as_deref().and_then(|caller| {
        let samples = plan.input.settings.judge_samples.max(1);
        Some((Judge { caller, samples }, plan.rubrics[work.case].as_ref()?))
    });
    let item = &plan.items[work.case];
    let graded = Graded {
        shown: trial + plan.scope.numbered_after.get(&(work.model, work.case)).copied().unwrap_or(0),
        semantic: &plan.semantic,
        expect: match item.grading {
            Grading::Expectations => Some(&plan.input.set.cases[item.case].expect),
            Grading::Outcome => None,
        },
        injection: item.injection.as_ref(),
        case_sha256: &item.hash,
        events,
        wraps: &plan.input.wraps,
    };
    let spec = &plan.specs[work.case];
    one_trial(spec, trial, model.caller.as_ref(), plan.input.tools, offered, &plan.validators, judge, graded).await
}

/// The rubric judge as a trial uses it.
#[derive(Clone, Copy)]
struct Judge<'a> {
    caller: &'a LiveModel,
    samples: usize,
}

/// What grades a trial's `embedding` and `judge` matchers, and the case they read.
#[derive(Clone, Copy)]
struct Graded<'a> {
    /// The trial's number in its events (a confirmation re-run's follow the first pass's).
    shown: usize,
    semantic: &'a semantic::Semantic,
    /// What the case expects, when the trial is graded by it ([`Grading::Expectations`]).
    expect: Option<&'a crate::golden::Expect>,
    /// What a layer injects into the trial.
    injection: Option<&'a crate::golden::Injection>,
    /// The item's hash.
    case_sha256: &'a str,
    /// Where the trial's events go.
    events: &'a (dyn Fn(&RunEvent) + Sync),
    /// The layers' wrappers of the trial's seams.
    wraps: &'a [&'a dyn TrialWrap],
}

#[allow(clippy::too_many_arguments, reason = "one trial's inputs, each a separate borrow of the plan")]
async fn one_trial(
    case: &CaseSpec,
    run: usize,
    model: &LiveModel,
    tools: &dyn ToolExecutor,
    specs: &[ToolSpec],
    arguments: &dyn ValidateArguments,
    judge: Option<(Judge<'_>, &judge::Rubric)>,
    graded: Graded<'_>,
) -> TrialRecord {
    // `run` keys the cassettes; the events name the trial as the report numbers it.
    let trial = crate::events::TrialRef { case: case.id.clone(), model: model.label().to_owned(), trial: graded.shown };
    // Each layer's part in the trial, opened before it starts (a trace begins here).
    let site = TrialSite {
        trial: &trial,
        injection: graded.injection,
        case_sha256: graded.case_sha256,
        events: graded.events,
    };
    let opened: Vec<(Place, Box<dyn WrappedTrial + '_>)> =
        graded.wraps.iter().map(|wrap| (wrap.place(), wrap.open(site))).collect();
    (graded.events)(&RunEvent::TrialStarted {
        trial: trial.clone(),
        trace_id: opened.iter().find_map(|(_, part)| part.trace_id()),
    });
    // The wrappers under the events wrap the real parts, so the times the events report are the
    // server's and the provider's; the wrappers over them change what the loop sees.
    let real_tools = tools_at(&opened, Place::UnderEvents, Box::new(tools));
    let observed_tools = ObservedTools { inner: real_tools.as_ref(), events: graded.events };
    let tools = tools_at(&opened, Place::OverEvents, Box::new(&observed_tools));
    let real_model = model_at(&opened, Place::UnderEvents, Box::new(model), "model", model.label());
    let observed_model = ObservedModel {
        inner: real_model.as_ref(),
        trial: &trial,
        role: "model",
        model: model.label(),
        events: graded.events,
    };
    let asked_model = model_at(&opened, Place::OverEvents, Box::new(&observed_model), "model", model.label());
    let context = TrialContext {
        model: asked_model.as_ref(),
        tools: tools.as_ref(),
        specs,
        arguments,
        events: graded.events,
        trial: trial.clone(),
    };
    let mut record = agent::run_trial(case, run, &context).await;
    let judged = !matches!(
        record.ending,
        TrialEnding::ProviderError(_)
            | TrialEnding::NoRecording(_)
            | TrialEnding::ServerError(_)
            | TrialEnding::CapReached
    );
    if let Some(expect) = graded.expect.filter(|_| judged) {
        let keys = crate::scoring::semantic::requests(expect, &record.trace());
        if !keys.is_empty() {
            record.semantic =
                graded.semantic.resolve(&case.id, &case.run.prompt.join("\n"), keys, (&trial, graded.events)).await;
        }
    }
    if let Some((judge, rubric)) = judge.filter(|_| judged) {
        let label = judge.caller.label();
        let real = model_at(&opened, Place::UnderEvents, Box::new(judge.caller), "judge", label);
        let observed =
            ObservedModel { inner: real.as_ref(), trial: &trial, role: "judge", model: label, events: graded.events };
        let asked = model_at(&opened, Place::OverEvents, Box::new(&observed), "judge", label);
        judge_trial(&mut record, case, rubric, judge, asked.as_ref()).await;
    }
    // Last, after the judge's calls: a reader sees every call of the trial before its end.
    for (_, part) in &opened {
        part.end(record.ending.as_str());
    }
    (graded.events)(&RunEvent::TrialFinished {
        trial: trial.clone(),
        ending: record.ending.as_str(),
        turns: record.turns,
        duration_ms: record.duration_ms,
    });
    record
}

/// `inner` wrapped by the trial's parts at `place`, in their order (the first innermost).
fn tools_at<'s>(
    opened: &'s [(Place, Box<dyn WrappedTrial + '_>)],
    place: Place,
    inner: Box<dyn ToolExecutor + 's>,
) -> Box<dyn ToolExecutor + 's> {
    opened.iter().filter(|(at, _)| *at == place).fold(inner, |inner, (_, part)| part.tools(inner))
}

/// `inner`, the caller of `model` in `role`, wrapped by the trial's parts at `place`, in their
/// order (the first innermost).
fn model_at<'s>(
    opened: &'s [(Place, Box<dyn WrappedTrial + '_>)],
    place: Place,
    inner: Box<dyn ModelCaller + 's>,
    role: &'static str,
    model: &'s str,
) -> Box<dyn ModelCaller + 's> {
    opened.iter().filter(|(at, _)| *at == place).fold(inner, |inner, (_, part)| part.model(inner, role, model))
}

/// Asks the judge about a finished trial (`samples` times, majority vote) and records its result.
/// `asked` is the judge's caller as the trial's events see it.
async fn judge_trial(
    record: &mut TrialRecord,
    case: &CaseSpec,
    rubric: &judge::Rubric,
    judge: Judge<'_>,
    asked: &dyn agent::ModelCaller,
) {
    let trace = record.judge_text();
    let request = judge::judge_request(&case.run.prompt.join("\n"), rubric, &trace);
    let mut samples = Vec::new();
    for sample in 0..judge.samples {
        let key = agent::TurnKey {
            case: format!("judge:{}", case.id),
            trial: u32::try_from(record.trial).unwrap_or(u32::MAX),
            turn: u32::try_from(sample).unwrap_or(u32::MAX),
        };
        use crate::report::evals::ErrorCause;
        let verdicts = match asked.call(key, &request).await {
            Ok(reply) => {
                record.result_changed += usize::from(reply.result_changed);
                judge::parse_verdicts(&reply.completion, rubric, &trace)
                    .map_err(|reason| (ErrorCause::Judge, reason.to_string()))
            }
            Err(agent::ModelFailure::Provider { error, .. }) => {
                Err((ErrorCause::Judge, format!("the judge model failed: {error}")))
            }
            Err(agent::ModelFailure::CapReached) => {
                Err((ErrorCause::CallCap, crate::report::evals::JUDGE_CAP_REACHED.into()))
            }
            Err(agent::ModelFailure::NoRecording(reason)) => {
                Err((ErrorCause::JudgeReplayMiss, format!("{}: {reason}", crate::scoring::semantic::REPLAY_MISS)))
            }
        };
        match verdicts {
            Ok(verdicts) => samples.push(verdicts),
            Err((cause, reason)) => {
                record.judge_cause = Some(cause);
                record.judge_trace = Some(JudgeTrace {
                    verdict: "judge_error".into(),
                    reason: Some(reason.clone()),
                    ..judge_trace(judge, rubric, Vec::new())
                });
                record.judge = Some(crate::scoring::JudgeResult::Error(reason));
                return;
            }
        }
    }
    let voted = judge::majority(&samples);
    record.judge_lines = voted
        .iter()
        .map(|judged| {
            let verdict = match judged.verdict {
                judge::CriterionVerdict::Pass => "pass",
                judge::CriterionVerdict::Fail => "fail",
                judge::CriterionVerdict::Unknown if judged.downgraded => "unknown (its quote is not in the trace)",
                judge::CriterionVerdict::Unknown => "unknown",
            };
            format!(
                "{}: {verdict} — {} [evidence: \"{}\"]",
                judged.id,
                judged.reason,
                crate::text::clip(&judged.evidence, 200)
            )
        })
        .collect();
    let passes = judge::trial_passes(rubric, &voted);
    record.judge_trace = Some(JudgeTrace {
        verdict: if passes.is_ok() { "pass" } else { "fail" }.into(),
        reason: passes.as_ref().err().map(ToString::to_string),
        ..judge_trace(judge, rubric, voted)
    });
    record.judge = Some(match passes {
        Ok(()) => crate::scoring::JudgeResult::Pass,
        Err(reason) => crate::scoring::JudgeResult::Fail(reason.to_string()),
    });
}

/// The judge's part of a trial's trace, its verdict still to fill in.
fn judge_trace(judge: Judge<'_>, rubric: &judge::Rubric, voted: Vec<judge::Judged>) -> JudgeTrace {
    JudgeTrace {
        model: judge.caller.label().to_owned(),
        prompt_version: judge::JUDGE_PROMPT_VERSION,
        rubric_sha256: rubric.sha256(),
        samples: judge.samples,
        verdict: String::new(),
        reason: None,
        criteria: voted
            .into_iter()
            .map(|judged| JudgedCriterion {
                must: rubric.criteria.iter().any(|criterion| criterion.id == judged.id && criterion.must),
                verdict: match judged.verdict {
                    judge::CriterionVerdict::Pass => "pass",
                    judge::CriterionVerdict::Fail => "fail",
                    judge::CriterionVerdict::Unknown => "unknown",
                }
                .into(),
                evidence: crate::text::clip(&judged.evidence, 200),
                criterion_id: judged.id,
                reason: judged.reason,
                downgraded: judged.downgraded,
            })
            .collect(),
    }
}

/// When a first trial's provider error means the provider cannot be used at all: the fix.
fn unusable_fix(error: &ProviderError, model: &Ready, settings: &Layer1Settings) -> Option<String> {
    let def = settings.provider(&settings.models[model.index])?;
    let key = def.api_key_env.as_deref().unwrap_or("the key");
    match error {
        ProviderError::Unauthorized { .. } => {
            Some(format!("provider `{}` refused the key for model `{}`: check `{key}`", def.id, model.label))
        }
        ProviderError::ModelNotFound(_) => Some(format!(
            "provider `{}` does not know model `{}`: check the name after `{}:`, and that this key may use it",
            def.id, model.label, def.id
        )),
        ProviderError::QuotaExhausted(_) => {
            Some(format!("provider `{}`: the account behind `{key}` has no quota or credit left", def.id))
        }
        ProviderError::Network(_) => {
            Some(format!("provider `{}`: check the base URL `{}` and the network", def.id, def.base_url))
        }
        _ => None,
    }
}
