//! Layer 2 on the driver's face: faults and payloads over the open session
//! ([`crate::faults::run`]), on the settings' golden set (the user's or the demo's) and their
//! layer-2 settings.

use chrono::Utc;

use crate::error::UserError;
use crate::golden::GoldenSet;
use crate::mcp::era;
use crate::mcp::sync::lock;
use crate::settings::Settings;
use crate::telemetry::budget::CostLimit;

use super::RunEvent;
use super::layer::{Context, Layer, Parts, Running, Sections};
use super::layer1::save_cassettes;
use super::limits::Limits;

/// Runs layer 2 over the open session ([`crate::faults::run`]): the golden set and `settings.layer2`,
/// a budget of what `--max-model-calls` leaves after layer 1's `spent` calls, and (with
/// `after_layer1`, layer 1 ran first) a share of the cap planned as the cap less layer 1's most.
async fn layer2(
    settings: &Settings,
    golden: Option<&GoldenSet>,
    connected: &era::Connected,
    (spent, after_layer1): (u64, bool),
    limits: &Limits<'_>,
    events: &(dyn Fn(&RunEvent) + Sync),
) -> Result<crate::faults::Layer2, UserError> {
    use crate::report::layer2::ResilienceSection;
    let not_run = |reason: String| {
        events(&RunEvent::Notice { text: format!("layer 2 did not run: {reason}") });
        let resilience = ResilienceSection { not_run: Some(reason), ..ResilienceSection::default() };
        Ok(crate::faults::Layer2 { resilience, security: None })
    };
    let Some(set) = golden else { return not_run("no golden set was given".into()) };
    let trials = &settings.layer2;
    // What the settings chose for the user (the demo's set, models and recordings), said first.
    for text in trials.notices.iter().chain(&trials.notes) {
        events(&RunEvent::Notice { text: text.clone() });
    }
    let cassettes = trials.open_cassettes()?;
    if limits.cost.as_deref().is_some_and(CostLimit::stopped) {
        return not_run("the cost budget (--max-cost-usd) stopped the run before layer 2".into());
    }
    let surface = match crate::conformance::list_tools_on(connected).await {
        Ok(surface) => surface,
        Err(problem) => return not_run(format!("the server's tools could not be listed: {problem}")),
    };
    limits.measure(&surface, trials).await;
    if let Some(reason) = limits.refuse(set, &surface, trials, false) {
        return not_run(reason);
    }
    let tools = crate::agent::tools::McpTools::new(connected.client.clone(), connected.era);
    // Layer 3 traces layer 2's trials.
    let traced = limits.spans.map(|spans| crate::telemetry::traced::Traced { spans, layer: 2 });
    let input = crate::trials::Layer1Input {
        settings: trials,
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
        cache: None,
        budget: std::sync::Arc::new(crate::trials::caller::Budget::with_cost(
            trials.max_model_calls.saturating_sub(spent),
            limits.cost.clone(),
        )),
        wraps: traced.iter().map(|traced| traced as &dyn crate::agent::wrap::TrialWrap).collect(),
    };
    let models = crate::faults::sample::runnable_models(trials, cassettes.is_some() || trials.cassettes.is_some());
    let share = crate::faults::Share {
        allowance: crate::faults::sample::share(set, trials, models, after_layer1),
        after_layer1,
    };
    let call_timeout_ms = u64::try_from(settings.timeout.as_millis()).unwrap_or(u64::MAX);
    let ran = crate::faults::run(&input, share, call_timeout_ms, events).await;
    // Recorded as layer 1's are: the files layer 1 wrote were read back when they were opened
    // again here, so saving keeps both.
    if let Some(cassettes) = cassettes.filter(|_| trials.record) {
        save_cassettes(&cassettes, " (layer 2)", limits.cassettes_failed, events);
    }
    ran
}

/// Layer 2, faults and payloads.
pub(super) struct Layer2;

impl Layer for Layer2 {
    fn number(&self) -> u8 {
        2
    }

    /// Layer 2 runs with a golden set and a model (the demo's needs neither), in a run not
    /// sharded.
    fn plan(&self, settings: &Settings, golden: Option<&GoldenSet>) -> Option<&'static str> {
        let no_model = "no model was given (--model PROVIDER:MODEL, Action input `models`, config `models`)";
        if let Some(missing) = super::layer::missing_set_or_model(settings, golden, no_model) {
            Some(missing)
        } else if settings.layer1.shard.is_some() {
            Some(
                "layer 2 does not run in a sharded run yet (its variants are not split across shards): run it in a job without --shard",
            )
        } else {
            None
        }
    }

    /// Not after layer 1 refused the golden set: said once (exit status 2), not again by layer 2.
    fn ready(&self, _cx: &Context<'_>, sections: &Sections) -> bool {
        if !matches!(*lock(&sections.layer1), Some(Err(_))) {
            return true;
        }
        let resilience = crate::report::layer2::ResilienceSection {
            not_run: Some("layer 1 refused the golden set (above): layer 2 runs on the same set".into()),
            ..crate::report::layer2::ResilienceSection::default()
        };
        *lock(&sections.layer2) = Some(Ok(crate::faults::Layer2 { resilience, security: None }));
        false
    }

    fn run<'a>(&'a self, cx: &'a Context<'a>, connected: &'a era::Connected, sections: &'a Sections) -> Running<'a> {
        Box::pin(async move {
            // One cap for the whole evaluation: what layer 1 spent is gone.
            let spent = match &*lock(&sections.layer1) {
                Some(Ok(section)) => section.model_calls,
                _ => 0,
            };
            let after_layer1 = cx.ran.contains(&1);
            let ran =
                Box::pin(layer2(cx.settings, cx.golden, connected, (spent, after_layer1), &cx.limits, cx.events)).await;
            *lock(&sections.layer2) = Some(ran);
        })
    }

    /// A signal or a panic during layer 2 keeps none of its trials.
    fn cut(&self, sections: &Sections, what: &str, parts: &mut Parts) -> bool {
        if sections.running.load(std::sync::atomic::Ordering::SeqCst) == 2 {
            parts.resilience = Some(crate::report::layer2::ResilienceSection {
                not_run: Some(format!("{what} stopped layer 2: its finished trials are not kept")),
                ..crate::report::layer2::ResilienceSection::default()
            });
        }
        false
    }
}
