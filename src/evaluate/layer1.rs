//! Layer 1 on the driver's face: the settings' golden set (the user's or the demo's) run on
//! their models over the open session ([`crate::trials::run`]), then the regression gate and its
//! confirmation re-runs ([`crate::baseline::run_gate`]).

use chrono::Utc;

use crate::baseline::run_gate::{cache_use, confirm_pairs, pool_reruns, regression_gate};
use crate::error::UserError;
use crate::golden::GoldenSet;
use crate::mcp::era;
use crate::mcp::sync::lock;
use crate::report::model::CheckResult;
use crate::settings::Settings;

use super::keyless::{execute_in_place, in_place_of_layer1};
use super::layer::{Context, Layer, Parts, Running, Sections};
use super::limits::Limits;
use super::{PANIC_FOR_TESTS_VAR, PANIC_IN_LAYER1, RunEvent};

/// Runs layer 1 over the open session, or says why it cannot run.
async fn layer1(
    settings: &Settings,
    golden: Option<&GoldenSet>,
    connected: &era::Connected,
    progress: &crate::trials::Progress,
    layer0: Option<&[crate::report::model::CheckResult]>,
    limits: &Limits<'_>,
    events: &(dyn Fn(&RunEvent) + Sync),
) -> Result<crate::report::evals::EvalsSection, UserError> {
    use crate::report::evals::EvalsSection;

    let not_run = |reason: String| {
        events(&RunEvent::Notice { text: format!("layer 1 did not run: {reason}") });
        // Which models were to run, and why (the schedule split), even so.
        let layer1_notes = settings.layer1.models_note.clone().into_iter().collect();
        Ok(EvalsSection { layer1_not_run: Some(reason), layer1_notes, ..EvalsSection::default() })
    };
    let Some(set) = golden else { return not_run("no golden set was given".into()) };
    let layer1 = &settings.layer1;
    // What the settings chose for the user (the demo's set, models and recordings), said first.
    for text in layer1.notices.iter().chain(&layer1.notes) {
        events(&RunEvent::Notice { text: text.clone() });
    }
    let cassettes = layer1.open_cassettes()?;
    if layer1.record {
        events(&RunEvent::Notice {
            text: "recording: cassettes keep the prompts, the model's answers and the tool results of this run in full (no size limit): review them before committing".into(),
        });
    }
    let surface = match crate::conformance::list_tools_on(connected).await {
        Ok(surface) => surface,
        Err(problem) => {
            let section = not_run(format!("the server's tools could not be listed: {problem}"))?;
            return Ok(EvalsSection { tools_unlisted: true, ..section });
        }
    };
    limits.measure(&surface, layer1).await;
    if let Some(reason) = limits.refuse(set, &surface, layer1, true) {
        return not_run(reason);
    }
    let tools = crate::agent::tools::McpTools::new(connected.client.clone(), connected.era);
    // When this run's verdicts were measured: the time the cache and the baseline both store,
    // so a verdict reused later is known for the baseline's own measurement.
    let measured_at = Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    // One budget for the whole evaluation: the first runs, the judge and the matchers, and every
    // confirmation re-run draw on it, so `--max-model-calls` is a cap on all of them.
    let budget =
        std::sync::Arc::new(crate::trials::caller::Budget::with_cost(layer1.max_model_calls, limits.cost.clone()));
    // Layer 3 traces layer 1's trials (and a confirmation re-run's).
    let traced = limits.spans.map(|spans| crate::telemetry::traced::Traced { spans, layer: 1 });
    let input = crate::trials::Layer1Input {
        settings: layer1,
        set,
        set_label: match &settings.action {
            Some(action) => crate::text::shown_path(&set.path, Some(&action.github.workspace)),
            None => crate::text::shown(&set.path),
        },
        surface: &surface,
        tools: &tools,
        today: set.today_at(Utc::now()),
        retry: crate::trials::caller::RetryPolicy::default(),
        cassettes: cassettes.clone(),
        cache: cache_use(settings, layer1, set, &measured_at, events),
        budget: budget.clone(),
        wraps: traced.iter().map(|traced| traced as &dyn crate::agent::wrap::TrialWrap).collect(),
    };
    let mut section = crate::trials::run(&input, progress, events).await?;
    if in_place_of_layer1(settings, &section, cassettes.is_some()) {
        section.expected_calls = Some(execute_in_place(settings, set, connected, &surface, events).await);
    }
    section.layer1_notes.extend(layer1.notes.iter().cloned());
    section.layer1_notes.extend(layer1.models_note.clone());
    section.layer1_notes.extend(crate::report::evals::soft_as_strict_as_hard_note(&section.evals));
    if std::env::var_os(PANIC_FOR_TESTS_VAR).is_some_and(|value| value == PANIC_IN_LAYER1) {
        panic!("{PANIC_FOR_TESTS_VAR} is set to {PANIC_IN_LAYER1}");
    }
    if section.layer1_not_run.is_none() {
        // Answers replayed from cassettes (`--cassettes` without `--record`, or the demo): a
        // confirmation re-run would replay the same recorded answers, so there is none.
        let replayed = cassettes.is_some() && !layer1.record;
        let confirm =
            regression_gate(&mut section, layer1, set, &surface, None, replayed, &measured_at, layer0, events);
        // The gate tripped: re-run only the cases that got worse (each its own runs again), pool
        // them into the evals and decide again.
        if !confirm.is_empty() {
            events(&RunEvent::Notice {
                text: format!(
                    "layer 1: the gate tripped; re-running {} worsened case(s) × model(s) to confirm",
                    confirm.len()
                ),
            });
            // A second plan over the worsened pairs only: a case that got worse on one model is
            // not re-run on the others; each runs its own number of trials again.
            let pairs = confirm_pairs(&section, &confirm);
            let again = crate::trials::Layer1Input { cache: None, set_label: input.set_label.clone(), ..input };
            let rerun = crate::trials::confirm(&again, &pairs, events).await?;
            if rerun.call_cap_reached && !section.call_cap_reached {
                section.call_cap_reached = true;
                section.layer1_notes.push(format!(
                    "the model-call cap ({} calls, --max-model-calls) was reached during the confirmation re-run: the confirmation trials it cut did not run",
                    layer1.max_model_calls
                ));
            }
            let reruns = rerun.evals;
            // Every call of the evaluation: the first runs and the confirmation runs.
            section.model_calls = budget.used();
            section.replayed_model_calls = budget.replayed();
            let first = pool_reruns(&mut section, &reruns);
            let confirmed = crate::baseline::apply::Confirmed { first: &first, reruns: &reruns };
            regression_gate(&mut section, layer1, set, &surface, Some(confirmed), false, &measured_at, layer0, events);
        }
    }
    if let Some(cassettes) = cassettes.filter(|_| layer1.record) {
        save_cassettes(&cassettes, "", limits.cassettes_failed, events);
    }
    Ok(section)
}

/// Writes what `cassettes` recorded, a notice per file (`what` after its path); a failure is our
/// environment's (exit status 4), flagged in `failed`.
pub(super) fn save_cassettes(
    cassettes: &crate::providers::cassette::Cassettes,
    what: &str,
    failed: &std::sync::atomic::AtomicBool,
    events: &(dyn Fn(&RunEvent) + Sync),
) {
    match cassettes.save() {
        Ok(paths) => {
            for path in paths {
                events(&RunEvent::Notice { text: format!("recorded {}{what}", path.display()) });
            }
        }
        Err(error) => {
            failed.store(true, std::sync::atomic::Ordering::SeqCst);
            events(&RunEvent::Failure { text: format!("error: the cassettes could not be written: {error}") });
        }
    }
}

/// Layer 1, the model's behaviour on the golden set.
pub(super) struct Layer1;

impl Layer for Layer1 {
    fn number(&self) -> u8 {
        1
    }

    /// Layer 1 runs only with a golden set and a model (`--demo` alone: the settings hold the demo's).
    fn plan(&self, settings: &Settings, golden: Option<&GoldenSet>) -> Option<&'static str> {
        super::layer::missing_set_or_model(
            settings,
            golden,
            "no model was given (--model PROVIDER:MODEL, Action input `models`, config `models`; `--demo` alone replays the demo's own golden set and model)",
        )
    }

    fn run<'a>(&'a self, cx: &'a Context<'a>, connected: &'a era::Connected, sections: &'a Sections) -> Running<'a> {
        Box::pin(async move {
            let checks0: Option<Vec<CheckResult>> =
                lock(&sections.layer0).as_ref().map(|outcome| outcome.checks.clone());
            let progress = &sections.progress;
            let ran = Box::pin(layer1(
                cx.settings,
                cx.golden,
                connected,
                progress,
                checks0.as_deref(),
                &cx.limits,
                cx.events,
            ))
            .await;
            // Kept whole (gate included) for a signal or a panic during layer 2.
            *lock(&sections.layer1) = Some(ran);
        })
    }

    /// Its section if it finished, else the trials finished so far (cases with trials missing
    /// are skipped).
    fn cut(&self, sections: &Sections, what: &str, parts: &mut Parts) -> bool {
        parts.evals = match lock(&sections.layer1).take() {
            Some(Ok(section)) => Some(section),
            _ => sections.progress.interrupted(what),
        };
        parts.evals.is_some()
    }
}
