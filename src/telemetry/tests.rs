//! Layer 3's figures from a scripted event stream, with exact values.

use super::*;
use crate::golden::GoldenSet;

fn set(text: &str) -> GoldenSet {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("golden.yaml");
    std::fs::write(&path, text).expect("write");
    crate::golden::load::load(&path).unwrap_or_else(|problems| panic!("{problems:?}"))
}

const SET: &str = r#"version: 1
cases:
  - id: weather
    prompt: "Weather?"
    expect_tool: get_weather
  - id: forecast
    prompt: "Forecast?"
    expect_tool: get_forecast
  - id: thanks
    prompt: "Thanks."
    negative: true
"#;

fn trial(case: &str, run: usize) -> TrialRef {
    TrialRef { case: case.into(), model: "openai:m".into(), trial: run }
}

fn usage(read: u64, cached: u64, output: u64) -> Usage {
    Usage {
        input_tokens: Some(read),
        output_tokens: Some(output),
        cache_read_tokens: Some(cached),
        cache_write_tokens: Some(0),
        reasoning_tokens: None,
        reported_cost_usd: None,
    }
}

fn model_call(case: &str, run: usize, turn: usize, usage: Usage, tools: &[&str]) -> RunEvent {
    RunEvent::ModelCallFinished {
        trial: trial(case, run),
        role: "model",
        turn,
        outcome: "answer",
        attempts: 1,
        latency_ms: Some(100 + turn as u64),
        model: "openai:m".into(),
        usage,
        tools: tools.iter().map(|tool| (*tool).to_owned()).collect(),
        replayed: false,
    }
}

fn tool_call(case: &str, run: usize, tool: &str, outcome: &'static str, latency_ms: u64) -> RunEvent {
    RunEvent::ToolCallFinished {
        trial: trial(case, run),
        turn: 1,
        tool: tool.into(),
        outcome,
        sent: outcome != "injected",
        injected: outcome == "injected",
        latency_ms,
        server_bytes: (outcome == "result").then_some(40),
    }
}

fn finished(case: &str, run: usize, ending: &'static str) -> RunEvent {
    RunEvent::TrialFinished { trial: trial(case, run), ending, turns: 2, duration_ms: 10 }
}

/// $1 per token read, $0.10 per cached token, $2 per token written: costs are easy to check.
fn price(asked: &str, usage: &Usage) -> Option<f64> {
    if asked != "openai:m" {
        return None;
    }
    let cached = usage.cache_read_tokens.unwrap_or(0);
    Some((usage.input_tokens? - cached) as f64 + cached as f64 * 0.1 + usage.output_tokens? as f64 * 2.0)
}

fn stream(collector: &Collector, events: &[RunEvent]) {
    collector.observe(&RunEvent::LayerStarted { layer: 1 });
    for event in events {
        collector.observe(event);
    }
}

#[test]
fn a_turn_with_two_calls_splits_its_tokens_and_cost_equally_and_the_answer_keeps_its_own() {
    let collector = Collector::default();
    stream(
        &collector,
        &[
            model_call("weather", 1, 0, usage(100, 40, 10), &["get_weather", "get_forecast"]),
            tool_call("weather", 1, "get_weather", "result", 30),
            tool_call("weather", 1, "get_forecast", "error_result", 50),
            model_call("weather", 1, 1, usage(200, 100, 20), &[]),
            finished("weather", 1, "answer"),
        ],
    );
    let golden = set(SET);
    let section = section(&collector, &Inputs { golden: Some(&golden), price: &price, prices: None, cached_pairs: 0 });
    // Turn 0: input 60 + 4 (cache) + 20 (output) = $84; turn 1: 100 + 10 + 40 = $150.
    assert_eq!(section.total.cost_usd, Some(234.0));
    assert_eq!(section.total.input_tokens, Some(160.0), "read minus cache reads");
    assert_eq!(section.total.cache_read_tokens, Some(140.0));
    let weather = section.tools.iter().find(|tool| tool.tool == "get_weather").unwrap();
    assert_eq!((weather.spend.cost_usd, weather.spend.input_tokens), (Some(42.0), Some(30.0)), "half of turn 0");
    let forecast = section.tools.iter().find(|tool| tool.tool == "get_forecast").unwrap();
    assert_eq!((forecast.error_results, forecast.error_result_rate), (1, Some(1.0)));
    assert_eq!(section.trials[0].answer.cost_usd, Some(150.0), "the answer's turn");
    assert_eq!(section.trials[0].spend.cost_usd, Some(234.0));
    assert_eq!((section.trials[0].tool_calls, section.trials[0].tool_latency_ms), (2, 80));
    assert_eq!(section.cases[0].spend.cost_usd, Some(234.0));
    assert_eq!(section.model_calls.len(), 2);
    assert_eq!(section.model_calls[0].input_tokens, Some(60));
}

/// Issue 41: with no price table, a case whose model calls all failed showed `$0` and 0 tokens,
/// and its failed calls were not counted anywhere. Unknown is never 0: the failed calls are
/// counted apart, listed with their outcome, and a sum with no answered call is unknown.
#[test]
fn failed_model_calls_are_counted_and_a_case_with_no_answer_has_unknown_spend_never_zero() {
    let collector = Collector::default();
    let failed = |case: &str, run: usize| RunEvent::ModelCallFinished {
        trial: trial(case, run),
        role: "model",
        turn: 0,
        outcome: "provider_error",
        attempts: 2,
        latency_ms: Some(80),
        model: "openai:m".into(),
        usage: Usage::default(),
        tools: Vec::new(),
        replayed: false,
    };
    stream(
        &collector,
        &[
            failed("weather", 1),
            finished("weather", 1, "provider_error"),
            model_call("forecast", 1, 0, usage(100, 0, 10), &[]),
            failed("forecast", 1),
            finished("forecast", 1, "provider_error"),
        ],
    );
    let golden = set(SET);
    let unpriced = |_: &str, _: &Usage| None;
    let section =
        section(&collector, &Inputs { golden: Some(&golden), price: &unpriced, prices: None, cached_pairs: 0 });
    let weather = section.cases.iter().find(|case| case.case == "weather").expect("the weather case");
    assert_eq!((weather.spend.cost_usd, weather.spend.input_tokens, weather.spend.output_tokens), (None, None, None));
    assert_eq!((weather.spend.model_calls, weather.spend.failed_calls), (0, 1));
    let forecast = section.cases.iter().find(|case| case.case == "forecast").expect("the forecast case");
    assert_eq!((forecast.spend.model_calls, forecast.spend.failed_calls), (1, 1));
    assert_eq!(forecast.spend.input_tokens, Some(100.0), "the answered call's counts");
    assert_eq!(section.total.failed_calls, 2);
    let outcomes: Vec<&str> = section.model_calls.iter().map(|call| call.outcome.as_str()).collect();
    assert_eq!(outcomes, ["provider_error", "answer", "provider_error"], "every model call made is listed");
    assert_eq!(section.trials.iter().map(|trial| trial.spend.failed_calls).sum::<usize>(), 2);
}

#[test]
fn injected_calls_are_counted_apart_and_left_out_of_the_latency_figures() {
    let collector = Collector::default();
    let mut events = Vec::new();
    for (run, latency) in [(1, 10), (2, 20), (3, 30), (4, 400)] {
        events.push(tool_call("weather", run, "get_weather", "result", latency));
    }
    events.push(tool_call("weather", 5, "get_weather", "injected", 0));
    events.push(tool_call("weather", 6, "get_weather", "jsonrpc_error", 5));
    stream(&collector, &events);
    let section = section(&collector, &Inputs { golden: None, price: &price, prices: None, cached_pairs: 0 });
    let tool = &section.tools[0];
    assert_eq!(
        (tool.latency.count, tool.latency.p50_ms, tool.latency.p95_ms, tool.latency.max_ms),
        (5, Some(20), Some(400), Some(400))
    );
    assert_eq!((tool.injected, tool.transport_errors, tool.error_results), (1, 1, 0));
    assert_eq!(tool.transport_error_rate, Some(0.2));
    assert_eq!((tool.result_bytes, tool.max_result_bytes), (160, Some(40)));
}

#[test]
fn a_run_whose_every_verdict_was_reused_says_so_and_how_to_measure_afresh() {
    let collector = Collector::default();
    let section = section(&collector, &Inputs { golden: None, price: &price, prices: None, cached_pairs: 3 });
    let why = section.not_run.expect("nothing measured");
    assert!(why.contains("every verdict came from the verdict cache (3 case × model pair(s))"), "{why}");
    assert!(why.contains("--cache-mode write-only"), "{why}");
    let section = super::section(&collector, &Inputs { golden: None, price: &price, prices: None, cached_pairs: 0 });
    assert_eq!(section.not_run.as_deref(), Some("no trial of layer 1 or 2 ran: there was nothing to measure"));
}

#[test]
fn usage_missing_on_one_call_makes_the_sums_unknown_with_the_call_counted_and_an_unpriced_model_has_no_cost() {
    let collector = Collector::default();
    let unknown = Usage { input_tokens: None, ..usage(0, 0, 5) };
    stream(
        &collector,
        &[model_call("weather", 1, 0, usage(100, 0, 10), &[]), model_call("weather", 2, 0, unknown, &[])],
    );
    let section = section(&collector, &Inputs { golden: None, price: &price, prices: None, cached_pairs: 2 });
    assert_eq!((section.total.input_tokens, section.total.output_tokens), (None, Some(15.0)));
    assert_eq!((section.total.unknown_calls, section.total.cost_usd, section.total.unpriced_calls), (1, None, 1));
    assert_eq!(section.model_calls[1].input_tokens, None, "never 0");
    assert!(section.notes[0].contains("2 case × model pair(s)"), "{:?}", section.notes);
    let none = |_: &str, _: &Usage| None;
    let collector = Collector::default();
    stream(&collector, &[model_call("weather", 1, 0, usage(100, 0, 10), &[])]);
    let section = super::section(&collector, &Inputs { golden: None, price: &none, prices: None, cached_pairs: 0 });
    assert_eq!((section.total.cost_usd, section.total.unpriced_calls), (None, 1), "unknown, never $0");
}

#[test]
fn the_confusion_matrix_names_the_tool_called_instead_and_precision_and_recall_follow() {
    let collector = Collector::default();
    stream(
        &collector,
        &[
            model_call("weather", 1, 0, usage(10, 0, 1), &["get_weather"]),
            finished("weather", 1, "answer"),
            model_call("weather", 2, 0, usage(10, 0, 1), &["get_forecast"]),
            finished("weather", 2, "answer"),
            model_call("forecast", 1, 0, usage(10, 0, 1), &["get_forecast"]),
            finished("forecast", 1, "answer"),
            model_call("thanks", 1, 0, usage(10, 0, 1), &["get_forecast"]),
            finished("thanks", 1, "answer"),
            // Spoiled by the provider: not graded, not counted.
            model_call("forecast", 2, 0, usage(10, 0, 1), &["get_weather"]),
            finished("forecast", 2, "provider_error"),
        ],
    );
    let golden = set(SET);
    let section = section(&collector, &Inputs { golden: Some(&golden), price: &price, prices: None, cached_pairs: 0 });
    let model = &section.models[0];
    assert_eq!(model.confusion.len(), 2);
    assert_eq!(
        (
            &model.confusion[0].expected,
            &model.confusion[0].selected,
            model.confusion[0].count,
            &model.confusion[0].cases
        ),
        (&NO_TOOL.to_owned(), &"get_forecast".to_owned(), 1, &vec!["thanks".to_owned()])
    );
    assert_eq!(
        (&model.confusion[1].expected, &model.confusion[1].selected),
        (&"get_weather".to_owned(), &"get_forecast".to_owned())
    );
    let forecast = model.accuracy.iter().find(|row| row.tool == "get_forecast").unwrap();
    assert_eq!((forecast.expected, forecast.selected, forecast.correct), (1, 3, 1));
    assert_eq!((forecast.precision, forecast.recall), (Some(1.0 / 3.0), Some(1.0)));
    let weather = model.accuracy.iter().find(|row| row.tool == "get_weather").unwrap();
    assert_eq!((weather.precision, weather.recall), (Some(1.0), Some(0.5)));
}

#[test]
fn events_outside_layers_1_and_2_are_not_kept_and_nothing_measured_says_so() {
    let collector = Collector::default();
    collector.observe(&tool_call("weather", 1, "get_weather", "result", 3));
    let section = section(&collector, &Inputs { golden: None, price: &price, prices: None, cached_pairs: 0 });
    assert!(section.tools.is_empty());
    assert!(section.not_run.is_some());
}

#[test]
fn a_call_without_cache_counts_reports_everything_it_read_as_input_and_an_unknown_cache() {
    let usage = Usage { input_tokens: Some(120), output_tokens: Some(7), ..Usage::default() };
    let part = super::part(&usage, Some(0.5));
    assert_eq!((part.input, part.cache_read, part.output), (Some(120), None, Some(7)));
    let cached = Usage { cache_read_tokens: Some(100), ..usage };
    assert_eq!(super::part(&cached, None).input, Some(20));
    let unread = Usage { input_tokens: None, ..cached };
    assert_eq!(super::part(&unread, None).input, None, "not reported: unknown, never 0");
}

#[test]
fn a_layer_whose_trials_were_not_kept_is_forgotten_and_the_others_stay() {
    let collector = Collector::default();
    collector.observe(&RunEvent::LayerStarted { layer: 1 });
    collector.observe(&tool_call("weather", 1, "get_weather", "result", 40));
    collector.observe(&RunEvent::LayerStarted { layer: 2 });
    collector.observe(&tool_call("weather/http-500@get_weather#1", 1, "get_weather", "result", 90));
    collector.observe(&model_call("weather/http-500@get_weather#1", 1, 0, usage(10, 0, 1), &[]));
    collector.forget_layer(2);
    let none = |_: &str, _: &Usage| None;
    let section = section(&collector, &Inputs { golden: None, price: &none, prices: None, cached_pairs: 0 });
    assert_eq!(section.tools.len(), 1);
    assert_eq!((section.tools[0].latency.count, section.tools[0].latency.max_ms), (1, Some(40)));
    assert!(section.model_calls.is_empty(), "layer 2's call is gone");
}

/// Calls answered from cassettes called no model: they are counted apart (each kind, in a run
/// that mixes live and replayed calls), their spend is kept (the recorded tokens, priced), and
/// their time, a cassette lookup's, is never a latency sample.
#[test]
fn replayed_calls_are_counted_apart_and_never_a_latency_sample() {
    let collector = Collector::default();
    let replayed = |case: &str, run: usize, turn: usize| {
        let mut event = model_call(case, run, turn, usage(100, 40, 10), &[]);
        if let RunEvent::ModelCallFinished { replayed, latency_ms, model, trial, .. } = &mut event {
            *replayed = true;
            *latency_ms = Some(0);
            *model = "openai:cassette".into();
            trial.model = "openai:cassette".into();
        }
        event
    };
    stream(
        &collector,
        &[
            replayed("weather", 1, 0),
            replayed("weather", 1, 1),
            model_call("weather", 1, 0, usage(100, 40, 10), &[]),
            finished("weather", 1, "answer"),
        ],
    );
    let section = section(&collector, &Inputs { golden: None, price: &price, prices: None, cached_pairs: 0 });
    assert_eq!((section.total.model_calls, section.replayed_model_calls), (3, 2));
    let cassette = section.models.iter().find(|model| model.model == "openai:cassette").unwrap();
    assert_eq!((cassette.spend.model_calls, cassette.replayed_calls), (2, 2));
    assert_eq!(cassette.latency, crate::report::telemetry::Latency::default(), "no sample: —, never 0 ms");
    assert_eq!(cassette.spend.input_tokens, Some(120.0), "the recorded tokens are kept");
    let live = section.models.iter().find(|model| model.model == "openai:m").unwrap();
    assert_eq!((live.replayed_calls, live.latency.count, live.latency.p50_ms), (0, 1, Some(100)));
    let rows: Vec<bool> = section.model_calls.iter().map(|call| call.replayed).collect();
    assert_eq!(rows.iter().filter(|replayed| **replayed).count(), 2, "{rows:?}");
}
