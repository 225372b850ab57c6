//! Layer 3's part of `summary.md` (and of the pull-request comment): the spend of the run, p50
//! and p95 per tool, tokens and cost per model and per case, the tool-surface footprint, and the
//! tool pairs each model confuses. Pure, bounded to [`LAYER3_CHARS`]. The deltas against the
//! baseline and the trends follow it ([`super::telemetry_trends`]).

use std::fmt::Write as _;

use super::md::{code_span, escape, message, table_code};
use super::telemetry::{BudgetSection, Spend, TelemetrySection, TraceSection};
use crate::text::clip;

/// The most bytes the section takes.
pub(crate) const LAYER3_CHARS: usize = 10_000;

/// The most rows of a table.
const MAX_ROWS: usize = 25;

/// USD as the summary shows it: `$0`, six decimals under a cent, four above; `—` unknown.
pub(crate) fn usd(cost: Option<f64>) -> String {
    match cost {
        None => "—".into(),
        Some(0.0) => "$0".into(),
        Some(cost) if cost < 0.01 => format!("${cost:.6}"),
        Some(cost) => format!("${cost:.4}"),
    }
}

/// Tokens as the summary shows them (shares of a turn can be fractions); `—` unknown.
fn tokens(count: Option<f64>) -> String {
    match count {
        None => "—".into(),
        Some(count) if (count - count.round()).abs() < 0.05 => format!("{count:.0}"),
        Some(count) => format!("{count:.1}"),
    }
}

/// Milliseconds as the summary shows them; `—` without samples.
pub(crate) fn ms(value: Option<u64>) -> String {
    value.map_or_else(|| "—".into(), |value| format!("{value} ms"))
}

/// `input / cached / output`, with the unknown calls when some lacked a count.
fn spend_tokens(spend: &Spend) -> String {
    let mut text = format!(
        "{} / {} / {}",
        tokens(spend.input_tokens),
        tokens(spend.cache_read_tokens),
        tokens(spend.output_tokens)
    );
    if spend.unknown_calls > 0 {
        let _ = write!(text, " ({} call(s) unreported)", spend.unknown_calls);
    }
    text
}

fn cost(spend: &Spend) -> String {
    let mut text = usd(spend.cost_usd);
    if spend.cost_usd.is_none() && spend.unpriced_calls > 0 {
        let _ = write!(text, " ({} unpriced)", spend.unpriced_calls);
    }
    text
}

/// The cost budget's line: the spend against it, the estimate, and what stopped the run.
pub(crate) fn budget_line(budget: &BudgetSection) -> String {
    let mut out = format!(
        "\n**💵 Cost budget:** {} spent of {} (up-front estimate {})",
        usd(Some(budget.spent_usd)),
        usd(Some(budget.max_cost_usd)),
        usd(budget.estimate_usd)
    );
    match budget.stopped.as_deref() {
        Some("estimate") => out.push_str(": **the estimate is over the budget: no model call was made** (exit 6)"),
        Some(_) => {
            let _ = write!(
                out,
                ": **the budget stopped the run**: {} call(s) not made, the trials they cut are skipped; overshoot {} (exit 6)",
                budget.calls_refused,
                usd(Some(budget.overshoot_usd))
            );
        }
        None => {}
    }
    out.push_str(".\n");
    out
}

/// The confusion pairs' class of calling no tool (layer 3's `NO_TOOL`, which the report
/// cannot import: it is a floor below).
const NO_TOOL: &str = "(none)";

/// What the trace context was and where its spans went, in one line.
pub(crate) fn trace_line(trace: &TraceSection) -> String {
    let extra: Vec<&str> = [(trace.tracestate, "`tracestate`"), (trace.baggage, "`baggage`")]
        .into_iter()
        .filter_map(|(sent, name)| sent.then_some(name))
        .collect();
    let carried = if extra.is_empty() { String::new() } else { format!(" and {}", extra.join(" and ")) };
    // With no `tools/call` made there is nothing to claim of them (the model requests carried it).
    let what = match trace.tool_calls {
        Some(0) => format!("no `tools/call` was made, so none carried a W3C `traceparent`{carried}"),
        _ => format!("every `tools/call` carried a W3C `traceparent`{carried}"),
    };
    let mut line = format!("Trace context: {what} — {} trace(s), one per trial, {} span(s)", trace.traces, trace.spans);
    if trace.dropped > 0 {
        let _ = write!(line, " ({} more past the bound, not kept)", trace.dropped);
    }
    match &trace.export {
        None => line.push_str("; not exported (no `--otlp-endpoint`)."),
        Some(export) => match &export.warning {
            None => {
                let _ = write!(
                    line,
                    "; {} exported to {} in {} request(s), {} ms.",
                    export.exported,
                    code_span(&clip(&export.endpoint, 200)),
                    export.requests,
                    export.duration_ms
                );
            }
            Some(warning) if warning.starts_with("not exported") => {
                let _ = write!(line, "; {}.", message(&clip(warning, 300)));
            }
            Some(warning) => {
                let _ = write!(
                    line,
                    "; ⚠️ the export to {} failed (a warning, not a failure): {}",
                    code_span(&clip(&export.endpoint, 200)),
                    message(&clip(warning, 300))
                );
            }
        },
    }
    line
}

/// The lead line (the calls, live and replayed, their tokens and cost) and what the caches
/// saved. Replayed calls (cassettes) called no model: their tokens are the recorded ones, their
/// cost what those would cost, and their time a lookup's.
fn spend_lines(out: &mut String, section: &TelemetrySection) {
    let total = &section.total;
    let replayed = section.replayed_model_calls;
    let all_replayed = replayed > 0 && replayed >= total.model_calls;
    let (kinds, spent, latency) = if replayed == 0 {
        (String::new(), "", "")
    } else if all_replayed {
        (
            format!(" (all {replayed} replayed from cassettes: no model was called)"),
            " — what the recorded tokens would cost at the price table: no money was spent this run",
            " (model latency leaves out calls replayed from cassettes: a lookup is no model's latency, shown —)",
        )
    } else {
        (
            format!(" ({} live, {replayed} replayed from cassettes)", total.model_calls - replayed),
            " — the replayed calls' part is what their recorded tokens would cost at the price table, not money spent",
            " (model latency leaves out calls replayed from cassettes: a lookup is no model's latency)",
        )
    };
    let _ = writeln!(
        out,
        "{} model call(s){kinds}: tokens in (not cached) / cached / out {}; cost {}{}{}. Latency is nearest-rank p50 and p95{latency}; tokens and cost of a turn go to the tool calls it made, split equally.",
        total.model_calls,
        spend_tokens(total),
        cost(total),
        match &section.price_table {
            Some(table) => format!(" (prices as of {} from {})", escape(&table.as_of), code_span(&table.path)),
            None => " (no price table: `--prices FILE`)".into(),
        },
        if section.price_table.is_some() { spent } else { "" },
    );
    let mut saved = Vec::new();
    if let Some(usd_saved) = section.prompt_cache_saved_usd.filter(|usd| *usd > 0.0) {
        saved.push(if all_replayed {
            format!(
                "the providers' prompt caches would have saved {} on the recorded tokens (cache reads priced as fresh input; the calls were replayed, nothing was spent)",
                usd(Some(usd_saved))
            )
        } else if replayed > 0 {
            format!(
                "the providers' prompt caches saved {} (cache reads priced as fresh input; the replayed calls' part on their recorded tokens, not spent)",
                usd(Some(usd_saved))
            )
        } else {
            format!("the providers' prompt caches saved {} (cache reads priced as fresh input)", usd(Some(usd_saved)))
        });
    }
    if section.verdicts_reused > 0 {
        saved.push(format!(
            "the verdict cache reused {} case × model pair(s): no model call for them",
            section.verdicts_reused
        ));
    }
    if !saved.is_empty() {
        let _ = writeln!(out, "\nWhat the caches saved: {}.", saved.join("; "));
    }
}

/// The section, at most [`LAYER3_CHARS`] bytes.
pub(crate) fn telemetry_section(section: &TelemetrySection) -> String {
    let mut out = String::from("\n### 📈 Layer 3 — latency, tokens and cost\n\n");
    if let Some(why) = &section.not_run {
        let _ = writeln!(out, "> **Layer 3 did not run:** {}", message(&clip(why, 2_000)));
        return out;
    }
    spend_lines(&mut out, section);
    if let Some(trace) = &section.trace {
        let _ = writeln!(out, "\n{}", trace_line(trace));
    }
    if !section.notes.is_empty() {
        out.push('\n');
    }
    for note in section.notes.iter().take(10) {
        let _ = writeln!(out, "- {}", message(&clip(note, 300)));
    }
    if !section.tools.is_empty() {
        out.push_str("\n| Tool | Calls | p50 | p95 | Max | `isError` | Transport errors | Injected | Tokens in (not cached) / out per call | Cost per call |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for tool in section.tools.iter().take(MAX_ROWS) {
            let calls = tool.spend.model_calls.max(1) as f64;
            let per = |count: Option<f64>| tokens(count.map(|count| count / calls));
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} / {} | {} |",
                table_code(&clip(&tool.tool, 64)),
                tool.latency.count,
                ms(tool.latency.p50_ms),
                ms(tool.latency.p95_ms),
                ms(tool.latency.max_ms),
                tool.error_results,
                tool.transport_errors,
                tool.injected,
                per(tool.spend.input_tokens),
                per(tool.spend.output_tokens),
                if tool.spend.model_calls == 0 {
                    "—".into()
                } else {
                    usd(tool.spend.cost_usd.map(|cost| cost / calls))
                },
            );
        }
        more(&mut out, section.tools.len());
    }
    if !section.models.is_empty() {
        out.push_str("\n| Model | Role | Calls | p50 | p95 | Tokens in (not cached) / cached / out | Cost |\n|---|---|---:|---:|---:|---:|---:|\n");
        for model in section.models.iter().take(MAX_ROWS) {
            let label = table_code(&clip(&model.model, 80));
            let label = match model.replayed_calls {
                0 => label,
                replayed if replayed >= model.spend.model_calls => format!("{label} (replayed)"),
                replayed => format!("{label} ({replayed} of {} replayed)", model.spend.model_calls),
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                label,
                escape(&model.role),
                model.spend.model_calls,
                ms(model.latency.p50_ms),
                ms(model.latency.p95_ms),
                spend_tokens(&model.spend),
                cost(&model.spend),
            );
        }
    }
    if !section.cases.is_empty() {
        out.push_str("\n<details><summary>tokens and cost per case</summary>\n\n| Case | Model | Layer | Trials | Tokens in (not cached) / cached / out | Cost | Judge |\n|---|---|---:|---:|---:|---:|---:|\n");
        for case in section.cases.iter().take(MAX_ROWS * 2) {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                table_code(&clip(&case.case, 80)),
                table_code(&clip(&case.model, 80)),
                case.layer,
                case.trials,
                spend_tokens(&case.spend),
                cost(&case.spend),
                case.judge.as_ref().map_or_else(|| "—".into(), cost),
            );
        }
        more(&mut out, section.cases.len().saturating_sub(MAX_ROWS));
        out.push_str("\n</details>\n");
    }
    if !section.footprint.is_empty() {
        out.push_str("\n<details><summary>tool-surface footprint (tokens per tool definition)</summary>\n\n| Tool | Model | Tokens | Counted by |\n|---|---|---:|---|\n");
        for entry in section.footprint.iter().take(MAX_ROWS * 2) {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                table_code(&clip(&entry.tool, 64)),
                table_code(&clip(&entry.model, 80)),
                entry.tokens,
                escape(&entry.method)
            );
        }
        more(&mut out, section.footprint.len().saturating_sub(MAX_ROWS));
        out.push_str("\n</details>\n");
    }
    let confused: Vec<_> = section.models.iter().filter(|model| !model.confusion.is_empty()).collect();
    if !confused.is_empty() {
        out.push_str("\n**Tools the model confused** (expected → called instead):\n\n");
        for model in confused.iter().take(MAX_ROWS) {
            for pair in model.confusion.iter().take(5) {
                let cases: Vec<String> = pair.cases.iter().take(5).map(|case| code_span(&clip(case, 64))).collect();
                // `(none)` has no description to compare with: what is missing is a reason to call.
                let hint = if pair.selected == NO_TOOL {
                    "no tool was called: read the expected tool's description for when to call it"
                } else {
                    "compare the two descriptions"
                };
                let _ = writeln!(
                    out,
                    "- {}: {} → {} in {} trial(s) ({}) — {hint}",
                    code_span(&clip(&model.model, 80)),
                    code_span(&clip(&pair.expected, 64)),
                    code_span(&clip(&pair.selected, 64)),
                    pair.count,
                    cases.join(", ")
                );
            }
        }
    }
    if out.len() > LAYER3_CHARS {
        out = clip(&out, LAYER3_CHARS - 100);
        out.push_str("\n\n_…cut: see `report.json`._\n");
    }
    out
}

fn more(out: &mut String, total: usize) {
    if total > MAX_ROWS {
        let _ = writeln!(out, "\n_…and {} more in `report.json`._", total - MAX_ROWS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::telemetry::{Confusion, Latency, ModelTelemetry};

    #[test]
    fn an_unknown_cost_is_a_dash_never_zero_and_small_costs_keep_their_digits() {
        assert_eq!(usd(None), "—");
        assert_eq!(usd(Some(0.0)), "$0");
        assert_eq!(usd(Some(0.000_123)), "$0.000123");
        assert_eq!(usd(Some(1.5)), "$1.5000");
        let spend = Spend { model_calls: 2, unpriced_calls: 2, ..Spend::default() };
        assert_eq!(cost(&spend), "— (2 unpriced)");
    }

    /// Layer 3's `in` leaves out the cache reads it shows beside it (layer 1's includes them):
    /// the line says so.
    #[test]
    fn layer_3_token_line_says_its_input_leaves_out_cached_tokens() {
        let section = TelemetrySection {
            total: Spend {
                model_calls: 2,
                input_tokens: Some(4_377.0),
                cache_read_tokens: Some(3_139.0),
                output_tokens: Some(587.0),
                ..Spend::default()
            },
            ..TelemetrySection::default()
        };
        let text = telemetry_section(&section);
        assert!(text.contains("tokens in (not cached) / cached / out 4377 / 3139 / 587"), "{text}");
    }

    fn replayed_model(model: &str, calls: usize, replayed_calls: usize, p50: Option<u64>) -> ModelTelemetry {
        ModelTelemetry {
            model: model.into(),
            role: "model".into(),
            latency: Latency { count: calls - replayed_calls, p50_ms: p50, p95_ms: p50, max_ms: p50 },
            spend: Spend {
                model_calls: calls,
                input_tokens: Some(6_738.0),
                cache_read_tokens: Some(4_707.0),
                output_tokens: Some(720.0),
                cost_usd: Some(0.004_318),
                ..Spend::default()
            },
            replayed_calls,
            ..ModelTelemetry::default()
        }
    }

    /// A run replayed from cassettes called no model: the cost line says its figure is what
    /// the recorded tokens would cost, the model row says "(replayed)", and its latency is no
    /// model's (`—`, never `0 ms`).
    #[test]
    fn replayed_calls_are_labelled_priced_as_recorded_and_have_no_latency() {
        let model = replayed_model("openai:gpt-4.1-mini", 12, 12, None);
        let section = TelemetrySection {
            price_table: Some(crate::report::telemetry::PriceTableInfo {
                path: "prices.yaml".into(),
                as_of: "2026-08-01".into(),
                ..Default::default()
            }),
            total: model.spend.clone(),
            replayed_model_calls: 12,
            prompt_cache_saved_usd: Some(0.001_412),
            models: vec![model],
            ..TelemetrySection::default()
        };
        let text = telemetry_section(&section);
        assert!(text.contains("all 12 replayed from cassettes"), "{text}");
        assert!(
            text.contains("what the recorded tokens would cost at the price table: no money was spent this run"),
            "{text}"
        );
        assert!(text.contains("would have saved $0.001412"), "{text}");
        let row =
            text.lines().find(|line| line.starts_with("| `openai:gpt-4.1-mini`")).unwrap_or_else(|| panic!("{text}"));
        assert!(row.contains("`openai:gpt-4.1-mini` (replayed) | model | 12 | — | — |"), "{row}");
        assert!(!row.contains("0 ms"), "{row}");
        assert!(text.contains("latency leaves out calls replayed from cassettes"), "{text}");
    }

    /// Live and replayed calls in one run: each kind is counted, the live model keeps its
    /// latency, and only the replayed calls' cost is said not to be spent.
    #[test]
    fn a_mixed_run_counts_live_and_replayed_calls_apart() {
        let live = replayed_model("anthropic:claude", 8, 0, Some(420));
        let replayed = replayed_model("openai:gpt-4.1-mini", 12, 12, None);
        let section = TelemetrySection {
            price_table: Some(crate::report::telemetry::PriceTableInfo::default()),
            total: Spend { model_calls: 20, ..Spend::default() },
            replayed_model_calls: 12,
            models: vec![live, replayed],
            ..TelemetrySection::default()
        };
        let text = telemetry_section(&section);
        assert!(text.contains("20 model call(s) (8 live, 12 replayed from cassettes)"), "{text}");
        assert!(text.contains("the replayed calls' part is what their recorded tokens would cost"), "{text}");
        assert!(text.contains("| `anthropic:claude` | model | 8 | 420 ms | 420 ms |"), "{text}");
        assert!(text.contains("| `openai:gpt-4.1-mini` (replayed) | model | 12 | — | — |"), "{text}");
        // One model with both kinds says how many of its calls were replayed.
        let section = TelemetrySection { models: vec![replayed_model("openai:m", 5, 2, Some(300))], ..section };
        assert!(telemetry_section(&section).contains("| `openai:m` (2 of 5 replayed) | model | 5 | 300 ms |"));
    }

    /// Layer 1's `in` includes the cache reads; every layer-3 token header says its `in` does not.
    #[test]
    fn every_layer_3_token_header_says_whether_in_includes_cached_tokens() {
        let section = TelemetrySection {
            tools: vec![crate::report::telemetry::ToolTelemetry { tool: "t".into(), ..Default::default() }],
            models: vec![replayed_model("openai:m", 1, 0, Some(1))],
            cases: vec![crate::report::telemetry::CaseTelemetry { case: "c".into(), ..Default::default() }],
            ..TelemetrySection::default()
        };
        let text = telemetry_section(&section);
        let headers: Vec<&str> = text.lines().filter(|line| line.contains("Tokens")).collect();
        assert_eq!(headers.len(), 3, "{text}");
        for header in headers {
            assert!(header.contains("Tokens in (not cached) /"), "{header}");
        }
    }

    #[test]
    fn the_confusion_pairs_name_the_model_both_tools_and_the_cases_escaped() {
        let section = TelemetrySection {
            models: vec![ModelTelemetry {
                model: "openai:m".into(),
                role: "model".into(),
                confusion: vec![Confusion {
                    expected: "get_weather".into(),
                    selected: "get_`forecast`".into(),
                    count: 3,
                    cases: vec!["weather|1".into()],
                }],
                ..ModelTelemetry::default()
            }],
            ..TelemetrySection::default()
        };
        let text = telemetry_section(&section);
        assert!(text.contains("Tools the model confused"), "{text}");
        assert!(text.contains("in 3 trial(s)"), "{text}");
        assert!(text.contains("`get_weather` → `` get_`forecast` `` in 3 trial(s) (`weather|1`)"), "{text}");
        let not_run = TelemetrySection { not_run: Some("nothing ran".into()), ..TelemetrySection::default() };
        assert!(telemetry_section(&not_run).contains("**Layer 3 did not run:** nothing ran"));
    }

    /// Issue 41: `→ (none)` is a trial that called no tool; there is no second description to
    /// compare, so the line says what to look at instead.
    #[test]
    fn a_confusion_with_no_tool_called_does_not_ask_to_compare_two_descriptions() {
        let pair = |selected: &str| Confusion {
            expected: "get_weather".into(),
            selected: selected.into(),
            count: 2,
            cases: vec!["weather".into()],
        };
        let section = TelemetrySection {
            models: vec![ModelTelemetry {
                model: "openai:m".into(),
                role: "model".into(),
                confusion: vec![pair("(none)"), pair("get_forecast")],
                ..ModelTelemetry::default()
            }],
            ..TelemetrySection::default()
        };
        let text = telemetry_section(&section);
        let none = text.lines().find(|line| line.contains("(none)")).unwrap_or_else(|| panic!("{text}"));
        assert!(!none.contains("compare") && none.contains("no tool was called"), "{none}");
        let other = text.lines().find(|line| line.contains("`get_forecast`")).unwrap_or_else(|| panic!("{text}"));
        assert!(other.contains("compare the two descriptions"), "{other}");
    }

    /// Issue 41: with no `tools/call` made, the trace line does not claim that every one carried
    /// a `traceparent`.
    #[test]
    fn the_trace_line_claims_nothing_of_tool_calls_when_none_was_made() {
        let trace = |tool_calls| TraceSection { traces: 2, spans: 4, tool_calls, ..TraceSection::default() };
        assert!(trace_line(&trace(Some(3))).contains("every `tools/call` carried a W3C `traceparent`"));
        let none = trace_line(&trace(Some(0)));
        assert!(!none.contains("every `tools/call`") && none.contains("no `tools/call` was made"), "{none}");
    }
}
