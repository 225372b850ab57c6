//! Layer 3, telemetry: it only reads. A [`Collector`] consumes the run's event stream (the
//! `model_call_finished`, `tool_call_finished` and `trial_finished` events of layers 1 and 2,
//! which the telemetry decorators of `agent::observe` send) and [`section`] turns what it kept
//! into the report's `telemetry`: per tool the server's latency (nearest-rank p50, p95, max),
//! its error rates and result sizes, injected calls apart; per model call its latency, tokens
//! (normalised as [`crate::report::telemetry::TOKEN_COUNTS`] says) and cost; those tokens and
//! costs attributed to tools, cases, trials and models (`ATTRIBUTION`); and, per model,
//! selection precision and recall per tool with the confusion pairs; and a note when the model
//! calls queued at the model server ([`queueing`]: a model call's event is stamped as it comes).
//!
//! Trials whose verdicts were reused from the verdict cache made no calls and are not measured
//! (a note says how many). Memory grows with the calls made, which the call cap bounds.

pub(crate) mod budget;
pub(crate) mod footprint;
pub(crate) mod otlp;
pub(crate) mod prices;
pub(crate) mod queueing;
pub(crate) mod run_limits;
pub(crate) mod section_run;
mod stats;
pub(crate) mod trace;
pub(crate) mod traced;

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Instant;

use crate::events::{RunEvent, TrialRef};
use crate::golden::GoldenSet;
use crate::mcp::sync::lock;
use crate::report::telemetry::{
    ATTRIBUTION, CaseTelemetry, Confusion, ModelCallTelemetry, ModelTelemetry, PERCENTILE_METHOD, TOKEN_COUNTS,
    TelemetrySection, ToolAccuracy, ToolTelemetry, TrialTelemetry, Usage,
};
pub(crate) use stats::{Part, Tally};

/// The class of calling no tool, in accuracy and confusion.
pub(crate) const NO_TOOL: &str = "(none)";

/// What the collector keeps of one event.
#[derive(Debug, Clone, PartialEq)]
enum Sample {
    Tool {
        layer: u8,
        trial: TrialRef,
        tool: String,
        outcome: &'static str,
        sent: bool,
        injected: bool,
        latency_ms: u64,
        bytes: Option<usize>,
    },
    Model {
        layer: u8,
        trial: TrialRef,
        role: &'static str,
        turn: usize,
        outcome: &'static str,
        latency_ms: Option<u64>,
        asked: String,
        usage: Usage,
        tools: Vec<String>,
        /// HTTP attempts it took.
        attempts: u32,
        /// When its event came, in milliseconds since the collector was made: the call's end.
        ended_ms: u64,
        /// Answered from a cassette: its usage is the recorded one, its latency no model's.
        replayed: bool,
    },
    Trial {
        layer: u8,
        trial: TrialRef,
        ending: &'static str,
    },
    /// A traced trial began: its trace id.
    Traced {
        layer: u8,
        trial: TrialRef,
        trace_id: String,
    },
}

/// Keeps the events layer 3 reads, tagged with the layer that sent them (layers run one after
/// the other; the `layer_started` events say which is running) and, a model call's, with the
/// time it came (the call's end: the event is sent as the call returns).
#[derive(Debug)]
pub(crate) struct Collector {
    layer: AtomicU8,
    samples: Mutex<Vec<Sample>>,
    made: Instant,
}

impl Default for Collector {
    fn default() -> Self {
        Self { layer: AtomicU8::default(), samples: Mutex::default(), made: Instant::now() }
    }
}

impl Collector {
    /// Keeps what layer 3 needs of `event`, stamped now.
    pub(crate) fn observe(&self, event: &RunEvent) {
        let now = u64::try_from(self.made.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.observe_at(event, now);
    }

    /// Keeps what layer 3 needs of `event`, come `now_ms` after the collector was made.
    pub(crate) fn observe_at(&self, event: &RunEvent, now_ms: u64) {
        let layer = self.layer.load(Ordering::SeqCst);
        let sample = match event {
            RunEvent::LayerStarted { layer } => {
                self.layer.store(*layer, Ordering::SeqCst);
                return;
            }
            RunEvent::ToolCallFinished { trial, tool, outcome, sent, injected, latency_ms, server_bytes, .. } => {
                Sample::Tool {
                    layer,
                    trial: trial.clone(),
                    tool: tool.clone(),
                    outcome,
                    sent: *sent,
                    injected: *injected,
                    latency_ms: *latency_ms,
                    bytes: *server_bytes,
                }
            }
            RunEvent::ModelCallFinished {
                trial,
                role,
                turn,
                outcome,
                attempts,
                latency_ms,
                model,
                usage,
                tools,
                replayed,
            } => Sample::Model {
                layer,
                trial: trial.clone(),
                role,
                turn: *turn,
                outcome,
                latency_ms: *latency_ms,
                asked: model.clone(),
                usage: *usage,
                tools: tools.clone(),
                attempts: *attempts,
                ended_ms: now_ms,
                replayed: *replayed,
            },
            RunEvent::TrialFinished { trial, ending, .. } => Sample::Trial { layer, trial: trial.clone(), ending },
            RunEvent::TrialStarted { trial, trace_id: Some(trace_id) } => {
                Sample::Traced { layer, trial: trial.clone(), trace_id: trace_id.clone() }
            }
            _ => return,
        };
        if layer == 1 || layer == 2 {
            lock(&self.samples).push(sample);
        }
    }

    /// Drops what layer `layer` sent (its trials were not kept: a signal or a panic cut it).
    pub(crate) fn forget_layer(&self, layer: u8) {
        lock(&self.samples).retain(|sample| {
            let (Sample::Tool { layer: of, .. }
            | Sample::Model { layer: of, .. }
            | Sample::Trial { layer: of, .. }
            | Sample::Traced { layer: of, .. }) = sample;
            *of != layer
        });
    }

    fn samples(&self) -> Vec<Sample> {
        lock(&self.samples).clone()
    }
}

/// Prices a model call: `asked` (`PROVIDER:MODEL`) and its counts → USD, `None` when unpriced.
pub(crate) type Pricer<'a> = &'a dyn Fn(&str, &Usage) -> Option<f64>;

/// What [`section`] reads besides the events.
pub(crate) struct Inputs<'a> {
    /// The golden set (expected tools for accuracy and confusion; case order).
    pub golden: Option<&'a GoldenSet>,
    /// Prices a call.
    pub price: Pricer<'a>,
    /// The price table `price` reads, for the report's `price_table` and notes (`None`: no
    /// table; every cost is unknown).
    pub prices: Option<&'a prices::PriceTable>,
    /// Verdicts reused from the cache (case × model pairs not measured).
    pub cached_pairs: usize,
}

/// A call's counts as the report's parts: input is what was read minus the cache reads (all of
/// it when the provider reported no cache reads: the price table prices it so too).
pub(crate) fn part(usage: &Usage, cost: Option<f64>) -> Part {
    Part {
        input: usage.input_tokens.map(|read| read.saturating_sub(usage.cache_read_tokens.unwrap_or(0))),
        cache_read: usage.cache_read_tokens,
        cache_write: usage.cache_write_tokens,
        output: usage.output_tokens,
        reasoning: usage.reasoning_tokens,
        cost,
        reported_cost: usage.reported_cost_usd,
    }
}

/// Sort key of a case id: layer, then its place in the set (a layer-2 variant `CASE/…` sorts
/// by its case), then the id.
fn case_key(golden: Option<&GoldenSet>, layer: u8, case: &str) -> (u8, usize, String) {
    let base = case.split('/').next().unwrap_or(case);
    let index = golden.and_then(|set| set.cases.iter().position(|known| known.id == base)).unwrap_or(usize::MAX);
    (layer, index, case.to_owned())
}

/// A model call that got no answer, in the section's list and its model's and the run's sums.
fn failed_call(sample: &Sample, section: &mut TelemetrySection, model: &mut Tally, total: &mut Tally) {
    let Some(row) = call_row(sample, &Part::default(), Vec::new()) else { return };
    model.fail();
    total.fail();
    section.model_calls.push(row);
}

/// The row of a model call in the section's list: what it was and its part of the spend (all
/// unknown for a call that got no answer).
fn call_row(sample: &Sample, part: &Part, tools: Vec<String>) -> Option<ModelCallTelemetry> {
    let Sample::Model { layer, trial, role, turn, outcome, latency_ms, asked, replayed, .. } = sample else {
        return None;
    };
    Some(ModelCallTelemetry {
        case: trial.case.clone(),
        model: trial.model.clone(),
        trial: trial.trial,
        layer: *layer,
        role: (*role).into(),
        asked: asked.clone(),
        turn: *turn,
        outcome: (*outcome).into(),
        latency_ms: *latency_ms,
        input_tokens: part.input,
        cache_read_tokens: part.cache_read,
        cache_write_tokens: part.cache_write,
        output_tokens: part.output,
        reasoning_tokens: part.reasoning,
        cost_usd: part.cost.map(stats::round_usd),
        reported_cost_usd: part.reported_cost,
        tools,
        replayed: *replayed,
    })
}

/// The `telemetry` section of what `collector` saw.
pub(crate) fn section(collector: &Collector, inputs: &Inputs<'_>) -> TelemetrySection {
    let samples = collector.samples();
    let mut section = TelemetrySection {
        percentiles: PERCENTILE_METHOD.into(),
        token_counts: TOKEN_COUNTS.into(),
        attribution: ATTRIBUTION.into(),
        ..TelemetrySection::default()
    };
    section.verdicts_reused = inputs.cached_pairs;
    if inputs.cached_pairs > 0 {
        section.notes.push(format!(
            "{} case × model pair(s) reused their verdicts from the verdict cache: their trials made no calls and are not measured",
            inputs.cached_pairs
        ));
    }
    section.price_table = inputs.prices.map(|table| table.info.clone());
    if inputs.prices.is_none() {
        section.notes.push(
            "no price table was given (--prices, input `price-table`): every cost is unknown (—), never 0".into(),
        );
    }
    if samples.is_empty() {
        section.not_run = Some(if inputs.cached_pairs > 0 {
            format!(
                "every verdict came from the verdict cache ({} case × model pair(s)): no trial ran, there was nothing to measure; `--cache-mode write-only` (input `cache: write-only`) measures afresh",
                inputs.cached_pairs
            )
        } else {
            "no trial of layer 1 or 2 ran: there was nothing to measure".into()
        });
    }

    // Per tool: the server's figures, from the calls sent and not injected.
    #[derive(Default)]
    struct ToolAcc {
        latencies: Vec<u64>,
        row: ToolTelemetry,
        spend: Tally,
    }
    let mut tools: BTreeMap<String, ToolAcc> = BTreeMap::new();
    type TrialKey = (u8, String, String, usize);
    #[derive(Default)]
    struct TrialAcc {
        tool_calls: usize,
        tool_latency_ms: u64,
        spend: Tally,
        answer: Tally,
        ending: Option<&'static str>,
        selections: Vec<(usize, Vec<String>)>,
        trace_id: Option<String>,
    }
    let mut trials: BTreeMap<TrialKey, TrialAcc> = BTreeMap::new();
    let key_of = |layer: u8, trial: &TrialRef| (layer, trial.case.clone(), trial.model.clone(), trial.trial);
    let mut judges: BTreeMap<(u8, String, String), Tally> = BTreeMap::new();
    // A case's spend: the sum of its trials' calls to the model under test.
    let mut case_spend: BTreeMap<(u8, String, String), Tally> = BTreeMap::new();
    // Per model: its live calls' latencies, its spend, and its calls replayed from cassettes.
    let mut models: BTreeMap<(&'static str, String), (Vec<u64>, Tally, usize)> = BTreeMap::new();
    let mut total = Tally::default();
    let mut saved: Option<f64> = None;
    for sample in &samples {
        match sample {
            Sample::Tool { layer, trial, tool, outcome, sent, injected, latency_ms, bytes } => {
                let acc = tools.entry(tool.clone()).or_default();
                if *injected {
                    acc.row.injected += 1;
                    continue;
                }
                if !*sent {
                    acc.row.not_sent += 1;
                    continue;
                }
                acc.latencies.push(*latency_ms);
                match *outcome {
                    "error_result" => acc.row.error_results += 1,
                    "result" => {}
                    _ => acc.row.transport_errors += 1,
                }
                if let Some(bytes) = bytes {
                    let bytes = *bytes as u64;
                    acc.row.result_bytes += bytes;
                    acc.row.max_result_bytes = Some(acc.row.max_result_bytes.map_or(bytes, |max| max.max(bytes)));
                }
                let entry = trials.entry(key_of(*layer, trial)).or_default();
                entry.tool_calls += 1;
                entry.tool_latency_ms += latency_ms;
            }
            Sample::Model {
                layer,
                trial,
                role,
                turn,
                outcome,
                latency_ms,
                asked,
                usage,
                tools: called,
                replayed,
                ..
            } => {
                let answered = *outcome == "answer";
                let cost = if answered { (inputs.price)(asked, usage) } else { None };
                if let Some(cost) = cost
                    && let Some(uncached) = (inputs.price)(asked, &Usage { cache_read_tokens: Some(0), ..*usage })
                {
                    saved = Some(saved.unwrap_or(0.0) + (uncached - cost).max(0.0));
                }
                let part = part(usage, cost);
                let (latencies, tally, replayed_calls) = models.entry((role, asked.clone())).or_default();
                // A replayed answer's time is the cassette lookup's, not a model's: it is counted,
                // never a latency sample.
                if *replayed {
                    *replayed_calls += 1;
                    section.replayed_model_calls += 1;
                } else {
                    latencies.extend(latency_ms);
                }
                if !answered {
                    // Made but not answered: counted apart (unknown tokens and cost, never 0) and
                    // listed with its outcome.
                    failed_call(sample, &mut section, tally, &mut total);
                    let spend = if *role == "model" {
                        trials.entry(key_of(*layer, trial)).or_default().spend.fail();
                        case_spend.entry((*layer, trial.case.clone(), trial.model.clone())).or_default()
                    } else {
                        judges.entry((*layer, trial.case.clone(), trial.model.clone())).or_default()
                    };
                    spend.fail();
                    continue;
                }
                tally.add(&part, 1.0);
                total.add(&part, 1.0);
                section.model_calls.extend(call_row(sample, &part, called.clone()));
                if *role != "model" {
                    judges.entry((*layer, trial.case.clone(), trial.model.clone())).or_default().add(&part, 1.0);
                    continue;
                }
                case_spend.entry((*layer, trial.case.clone(), trial.model.clone())).or_default().add(&part, 1.0);
                let entry = trials.entry(key_of(*layer, trial)).or_default();
                entry.spend.add(&part, 1.0);
                if called.is_empty() {
                    entry.answer.add(&part, 1.0);
                } else {
                    let share = 1.0 / called.len() as f64;
                    for tool in called {
                        tools.entry(tool.clone()).or_default().spend.add(&part, share);
                    }
                }
                entry.selections.push((*turn, called.clone()));
            }
            Sample::Trial { layer, trial, ending } => {
                trials.entry(key_of(*layer, trial)).or_default().ending = Some(ending);
            }
            Sample::Traced { layer, trial, trace_id } => {
                // A trial tried again is traced again: its last trace is the one kept.
                trials.entry(key_of(*layer, trial)).or_default().trace_id = Some(trace_id.clone());
            }
        }
    }
    section.notes.extend(queueing::notes(&answered_calls(&samples)));
    section.total = total.spend();
    section.prompt_cache_saved_usd = saved.map(stats::round_usd);
    if let Some(table) = inputs.prices {
        let mut unpriced: BTreeMap<&str, usize> = BTreeMap::new();
        for call in &section.model_calls {
            if table.price(&call.asked).is_none() {
                *unpriced.entry(call.asked.as_str()).or_default() += 1;
            }
        }
        for (label, calls) in unpriced {
            section.notes.push(format!(
                "the price table has no entry for `{label}`: its {calls} call(s) have an unknown cost, and so does every sum over them"
            ));
        }
    }
    section.tools = tools
        .into_iter()
        .map(|(tool, acc)| {
            let mut row = acc.row;
            row.tool = tool;
            row.latency = stats::latency(&acc.latencies);
            let sent = acc.latencies.len();
            let rate = |count: usize| (sent > 0).then(|| count as f64 / sent as f64);
            row.error_result_rate = rate(row.error_results);
            row.transport_error_rate = rate(row.transport_errors);
            row.spend = acc.spend.spend();
            row
        })
        .collect();

    // Accuracy and confusion per model under test, from layer 1's completed trials.
    let mut by_model: BTreeMap<String, Vec<(String, String, String)>> = BTreeMap::new();
    for ((layer, case, model, _), acc) in &trials {
        if *layer != 1 || !completed(acc.ending) {
            continue;
        }
        let Some(expected) = inputs.golden.and_then(|set| expected_class(set, case)) else { continue };
        let mut turns = acc.selections.clone();
        turns.sort_by_key(|(turn, _)| *turn);
        let called: Vec<String> = turns.into_iter().flat_map(|(_, tools)| tools).collect();
        let selected = selection(&expected, &called);
        by_model.entry(model.clone()).or_default().push((case.clone(), expected.0, selected));
    }
    let mut rows: Vec<ModelTelemetry> = models
        .into_iter()
        .map(|((role, model), (latencies, tally, replayed_calls))| {
            let mut row = ModelTelemetry {
                model: model.clone(),
                role: role.into(),
                latency: stats::latency(&latencies),
                spend: tally.spend(),
                replayed_calls,
                ..ModelTelemetry::default()
            };
            if role == "model"
                && let Some(trials) = by_model.get(&model)
            {
                (row.accuracy, row.confusion) = accuracy(trials, inputs.golden);
            }
            row
        })
        .collect();
    rows.sort_by_key(|row| (row.role != "model", row.model.clone()));
    section.models = rows;

    let mut cases: BTreeMap<(u8, usize, String, String), CaseTelemetry> = BTreeMap::new();
    for ((layer, case, model, run), acc) in &trials {
        let (layer_key, index, id) = case_key(inputs.golden, *layer, case);
        let row = cases.entry((layer_key, index, id, model.clone())).or_insert_with(|| CaseTelemetry {
            case: case.clone(),
            model: model.clone(),
            layer: *layer,
            ..CaseTelemetry::default()
        });
        row.trials += 1;
        section.trials.push(TrialTelemetry {
            case: case.clone(),
            model: model.clone(),
            trial: *run,
            layer: *layer,
            tool_calls: acc.tool_calls,
            tool_latency_ms: acc.tool_latency_ms,
            spend: acc.spend.spend(),
            answer: acc.answer.spend(),
            trace_id: acc.trace_id.clone(),
        });
    }
    for row in cases.values_mut() {
        let key = (row.layer, row.case.clone(), row.model.clone());
        row.spend = case_spend.get(&key).map_or_else(|| Tally::default().spend(), Tally::spend);
        row.judge = judges.get(&key).map(Tally::spend);
    }
    section.cases = cases.into_values().collect();
    section
        .trials
        .sort_by_key(|trial| (case_key(inputs.golden, trial.layer, &trial.case), trial.model.clone(), trial.trial));
    section.model_calls.sort_by_key(|call| {
        (
            case_key(inputs.golden, call.layer, &call.case),
            call.model.clone(),
            call.trial,
            call.role != "model",
            call.turn,
        )
    });
    section
}

/// The model calls answered at their first attempt, as intervals of the run (replayed calls,
/// which take no time, left out).
fn answered_calls(samples: &[Sample]) -> Vec<queueing::Call> {
    samples
        .iter()
        .filter_map(|sample| match sample {
            Sample::Model {
                outcome: "answer",
                attempts: 1,
                latency_ms: Some(latency),
                asked,
                ended_ms,
                replayed: false,
                ..
            } if *latency > 0 => Some(queueing::Call {
                model: asked.clone(),
                start_ms: ended_ms.saturating_sub(*latency),
                end_ms: *ended_ms,
            }),
            _ => None,
        })
        .collect()
}

/// Whether a trial ending is one its graders judged (not spoiled by the provider, a missing
/// recording, the server or the call cap).
fn completed(ending: Option<&str>) -> bool {
    !matches!(ending, None | Some("provider_error" | "replay_miss" | "server_error" | "call_cap"))
}

/// The class a case expects — its `expect_tool`, or [`NO_TOOL`] for `negative: true` — and
/// whether any position counts (`expect_tool_position: any`); `None` for a case that is
/// neither (a sequence alone, a rubric alone).
fn expected_class(set: &GoldenSet, case: &str) -> Option<(String, bool)> {
    let case = set.cases.iter().find(|known| known.id == case)?;
    let expected = crate::golden::case::expected_calls(case);
    if expected.negative {
        return Some((NO_TOOL.into(), false));
    }
    Some((expected.tool?.to_owned(), expected.any_position))
}

/// The tool a trial selected, as the selection grader reads it: the first call (any call of the
/// expected tool with `expect_tool_position: any`), or [`NO_TOOL`].
pub(crate) fn selection((expected, any): &(String, bool), called: &[String]) -> String {
    if *any && called.iter().any(|tool| tool == expected) {
        return expected.clone();
    }
    called.first().cloned().unwrap_or_else(|| NO_TOOL.into())
}

/// Precision and recall per class, and the confusion pairs, of `(case, expected, selected)`
/// trials.
pub(crate) fn accuracy(
    trials: &[(String, String, String)],
    golden: Option<&GoldenSet>,
) -> (Vec<ToolAccuracy>, Vec<Confusion>) {
    let mut classes: BTreeMap<&str, ToolAccuracy> = BTreeMap::new();
    let mut pairs: BTreeMap<(&str, &str), (usize, Vec<String>)> = BTreeMap::new();
    for (case, expected, selected) in trials {
        classes
            .entry(expected)
            .or_insert_with(|| ToolAccuracy { tool: expected.clone(), ..ToolAccuracy::default() })
            .expected += 1;
        classes
            .entry(selected)
            .or_insert_with(|| ToolAccuracy { tool: selected.clone(), ..ToolAccuracy::default() })
            .selected += 1;
        if expected == selected {
            if let Some(row) = classes.get_mut(expected.as_str()) {
                row.correct += 1;
            }
        } else {
            let pair = pairs.entry((expected, selected)).or_default();
            pair.0 += 1;
            if !pair.1.contains(case) {
                pair.1.push(case.clone());
            }
        }
    }
    let accuracy = classes
        .into_values()
        .map(|mut row| {
            row.precision = (row.selected > 0).then(|| row.correct as f64 / row.selected as f64);
            row.recall = (row.expected > 0).then(|| row.correct as f64 / row.expected as f64);
            row
        })
        .collect();
    let mut confusion: Vec<Confusion> = pairs
        .into_iter()
        .map(|((expected, selected), (count, mut cases))| {
            cases.sort_by_key(|case| case_key(golden, 1, case));
            Confusion { expected: expected.into(), selected: selected.into(), count, cases }
        })
        .collect();
    confusion.sort_by(|a, b| {
        b.count.cmp(&a.count).then_with(|| (&a.expected, &a.selected).cmp(&(&b.expected, &b.selected)))
    });
    (accuracy, confusion)
}

#[cfg(test)]
mod tests;
