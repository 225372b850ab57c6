//! What layers 1 and 2 share within an evaluation ([`Limits`]): the cost budget and its up-front
//! estimate over the trials they plan, the flag a cassette that could not be written raises,
//! and layer 3's footprint and spans. The counting is [`crate::telemetry::run_limits`]'s; this
//! file reads the settings it needs.

use std::sync::Arc;

use crate::golden::GoldenSet;
use crate::telemetry::budget::CostLimit;
pub(super) use crate::telemetry::run_limits::Footprint;

/// What layers 1 and 2 share with the evaluation: the cost budget and the flag a cassette that
/// could not be written raises.
pub(super) struct Limits<'a> {
    /// The budget, when `--max-cost-usd` is set.
    pub cost: Option<Arc<CostLimit>>,
    /// Layer 2 runs in this evaluation: layer 1's up-front estimate covers its trials too.
    pub with_layer2: bool,
    /// Set when cassettes could not be saved (exit 4).
    pub cassettes_failed: &'a std::sync::atomic::AtomicBool,
    /// Layer 3's tool-surface footprint and its notes, filled by the first layer that lists the
    /// tools (`None`: layer 3 was not asked for).
    pub footprint: Option<&'a std::sync::Mutex<Footprint>>,
    /// Layer 3's spans, when it traces the trials (`None`: layer 3 was not asked for).
    pub spans: Option<&'a crate::telemetry::trace::Spans>,
}

impl Limits<'_> {
    /// Counts the footprint of `surface` for `layer1`'s models, once, when layer 3 asks for it;
    /// with `--count-tokens`, Anthropic models' through the provider's count-tokens endpoint.
    pub(super) async fn measure(
        &self,
        surface: &crate::mcp::tools::ToolSurface,
        layer1: &crate::settings::layer1::Layer1Settings,
    ) {
        use crate::settings::layer1::Api;
        use crate::telemetry::footprint::{Asked, Wire};
        let Some(slot) = self.footprint else { return };
        if !crate::mcp::sync::lock(slot).0.is_empty() {
            return;
        }
        let asked: Vec<Asked> = layer1
            .models
            .iter()
            .map(|model| Asked {
                label: model.label(),
                model: model.model.clone(),
                wire: match layer1.providers.iter().find(|provider| provider.id == model.provider).map(|p| p.api) {
                    Some(Api::Anthropic) => Wire::Anthropic,
                    Some(Api::OpenAi) => Wire::OpenAi,
                    Some(Api::Replay) | None => Wire::Replay,
                },
            })
            .collect();
        // With `--count-tokens`, each Anthropic model is counted by its provider, in turn.
        let counted = layer1.token_counters();
        let measured = crate::telemetry::run_limits::measure_footprint(&surface.tools, &asked, counted).await;
        *crate::mcp::sync::lock(slot) = measured;
    }

    /// Makes the up-front estimate before the first model call (once: the first layer to run
    /// makes it, over every trial of layers 1 and 2 it knows); the reason the run stops when it
    /// is over the budget.
    pub(super) fn refuse(
        &self,
        set: &GoldenSet,
        surface: &crate::mcp::tools::ToolSurface,
        layer1: &crate::settings::layer1::Layer1Settings,
        in_layer1: bool,
    ) -> Option<String> {
        let limit = self.cost.as_deref()?;
        if limit.started() {
            return None;
        }
        let models: Vec<String> = layer1.models.iter().map(crate::settings::layer1::ModelRef::label).collect();
        let judge = layer1.judge_model.as_ref().map(|model| (model.label(), layer1.judge_samples));
        let mut trials = Vec::new();
        if in_layer1 {
            let judge = judge.as_ref().map(|(label, samples)| (label.as_str(), *samples));
            // A shard estimates its own slice of the case × model list.
            let keep = |case: usize, model: usize| {
                layer1.shard.is_none_or(|shard| shard.contains(case, model, layer1.models.len()))
            };
            let items = crate::trials::plan::Item::cases(set, layer1.runs);
            trials = crate::telemetry::budget::plan(&counted(set, &items), &surface.tools, &models, judge, &keep);
        }
        if !in_layer1 || self.with_layer2 {
            // The variants layer 2 will run: the default suite sampled to its share of the call cap.
            let (variants, source) = crate::faults::variants(set);
            let runnable = crate::faults::sample::runnable_models(layer1, layer1.cassettes.is_some());
            let share = crate::faults::sample::share(set, layer1, runnable, in_layer1);
            let (variants, _) = crate::faults::sample::fit(set, variants, source, runnable, layer1.runs, share);
            let items = crate::faults::items(set, &variants, layer1.runs);
            let every = |_: usize, _: usize| true;
            trials.extend(crate::telemetry::budget::plan(&counted(set, &items), &surface.tools, &models, None, &every));
        }
        crate::telemetry::run_limits::start_or_refuse(limit, &trials)
    }
}

/// The plan items of `set` as the cost estimate counts them: each one's case, its trials as the
/// plan decided them, and whether its expectations are graded.
fn counted<'s>(set: &'s GoldenSet, items: &[crate::trials::plan::Item]) -> Vec<crate::telemetry::budget::Counted<'s>> {
    items
        .iter()
        .map(|item| crate::telemetry::budget::Counted {
            case: &set.cases[item.case],
            runs: item.trials.runs,
            expectations: item.grading == crate::trials::plan::Grading::Expectations,
        })
        .collect()
}
