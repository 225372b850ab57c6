//! Layer 3's part before a run's first model call, and its line after: the footprint of the tool
//! surface the models are shown ([`measure_footprint`], counted by the provider where
//! `--count-tokens` asks), the cost budget's up-front estimate over the trials the layers plan
//! ([`start_or_refuse`]), and the line saying the budget stopped the run ([`budget_stop`]).
//! The layers plan their trials; this module only counts and words them.

use crate::mcp::tools::ToolView;
use crate::providers::ProviderError;
use crate::providers::anthropic::AnthropicProvider;
use crate::report::telemetry::{BudgetSection, FootprintEntry};
use crate::telemetry::budget::{CostLimit, PlannedTrial};
use crate::telemetry::footprint::{self, Asked};

/// The footprint's rows and the notes of its counting (a count-tokens request that failed).
pub(crate) type Footprint = (Vec<FootprintEntry>, Vec<String>);

/// The footprint of `tools` for the `asked` models, estimated; then, for each of `counted` (an
/// Anthropic model's label and its provider as the settings built it, with `--count-tokens`) in
/// turn, counted through the provider's count-tokens endpoint, a note for each count that failed
/// (its rows stay estimated).
pub(crate) async fn measure_footprint(
    tools: &[ToolView],
    asked: &[Asked],
    counted: Vec<(String, Result<AnthropicProvider, ProviderError>)>,
) -> Footprint {
    let mut rows = footprint::footprint(tools, asked);
    let mut notes = Vec::new();
    for (label, provider) in counted {
        let counted = match provider {
            Ok(provider) => {
                let count = |tools: Vec<crate::providers::ToolSpec>| {
                    let provider = &provider;
                    async move { provider.count_tokens(&tools).await }
                };
                footprint::count_with(&mut rows, tools, &label, count).await
            }
            Err(error) => Err(error),
        };
        if let Err(error) = counted {
            notes.push(format!("--count-tokens: {label}'s footprint stays estimated: {error}"));
        }
    }
    (rows, notes)
}

/// Starts `limit` with the estimated cost of `trials` (every trial of layers 1 and 2 the first
/// layer to run knows): the reason the run stops when the estimate is over the budget.
pub(crate) fn start_or_refuse(limit: &CostLimit, trials: &[PlannedTrial]) -> Option<String> {
    let estimate = limit.estimate(trials);
    (!limit.start(estimate)).then(|| {
        format!(
            "the estimated cost of the run, {} for {} trial(s), is over the cost budget of {} (--max-cost-usd): no model call was made",
            crate::report::telemetry_summary::usd(Some(estimate)),
            trials.len(),
            crate::report::telemetry_summary::usd(Some(limit.limit_usd()))
        )
    })
}

/// The line saying the cost budget stopped the run.
pub(crate) fn budget_stop(budget: &BudgetSection) -> String {
    let usd = |value: f64| crate::report::telemetry_summary::usd(Some(value));
    match budget.stopped.as_deref() {
        Some("estimate") => format!(
            "the cost budget ({}, --max-cost-usd) stopped the run before any model call: the estimate was {}",
            usd(budget.max_cost_usd),
            crate::report::telemetry_summary::usd(budget.estimate_usd)
        ),
        _ => format!(
            "the cost budget ({}, --max-cost-usd) stopped the run: {} spent, {} call(s) not made, overshoot {}; the trials it cut are skipped",
            usd(budget.max_cost_usd),
            usd(budget.spent_usd),
            budget.calls_refused,
            usd(budget.overshoot_usd)
        ),
    }
}
