//! Layer 3's deltas and trends in `summary.md` (and the pull-request comment): a table of each
//! tool's p95 against the baseline, flagged rises first, and of each case's tokens and cost per
//! trial; then the trends as Mermaid `xychart-beta` charts (GitHub renders them) — pass rate per
//! model, p95 per tool (the [`MAX_SERIES`] slowest now) and cost per run — when at least two runs
//! are there to draw. Pure, bounded to [`DELTAS_CHARS`] and [`TRENDS_CHARS`].
//!
//! Names in a chart are the server's and the user's text: inside the fenced block they are
//! reduced to [`chart_text`]'s characters (no quote, backtick, `%`, bracket or newline can end a
//! string, the block or the statement), and the Markdown around the chart escapes them as any
//! other text.

use std::fmt::Write as _;

use super::md::{code_span, table_code};
use super::telemetry::{Change, TelemetryDeltas, TrendPoint, TrendsSection};
use super::telemetry_summary::usd;
use crate::text::clip;

/// The most bytes the deltas take.
pub(crate) const DELTAS_CHARS: usize = 6_000;

/// The most bytes the trends take.
pub(crate) const TRENDS_CHARS: usize = 12_000;

/// The most rows of each deltas table.
const MAX_DELTA_ROWS: usize = 10;

/// The most lines of a chart.
pub(crate) const MAX_SERIES: usize = 5;

/// The longest name in a chart, in characters.
const CHART_NAME_CHARS: usize = 40;

/// The deltas against the baseline, at most [`DELTAS_CHARS`] bytes.
pub(crate) fn deltas_section(deltas: &TelemetryDeltas) -> String {
    let mut out = format!(
        "\n#### Layer 3 since the baseline\n\nAgainst {}. Shown, not enforced: no layer-3 delta fails the run. ⚠️ marks a p95 that rose: more than 1.5 × the baseline's (the newest stored p95) **and** by more than the spread (max − min) of the stored p95s, the noise between the stored runs (0 with one stored run).\n",
        super::md::message(&clip(&deltas.baseline, 300))
    );
    let reserve = 200;
    if !deltas.tools.is_empty() {
        out.push_str("\n| Tool | p95 | Baseline | Δ | Spread (runs) | |\n|---|---:|---:|---:|---:|---|\n");
        for (shown, tool) in deltas.tools.iter().enumerate() {
            let row = format!(
                "| {} | {} ms | {} ms | {:+} ms | {} ms ({}) | {} |\n",
                table_code(&clip(&tool.tool, 64)),
                tool.p95_ms,
                tool.baseline_p95_ms,
                tool.delta_ms,
                tool.spread_ms,
                tool.stored,
                if tool.rose { "⚠️ rose" } else { "" }
            );
            if shown == MAX_DELTA_ROWS || out.len() + row.len() + reserve > DELTAS_CHARS / 2 {
                let _ = writeln!(out, "\n_…and {} more tool(s) in `report.json`._", deltas.tools.len() - shown);
                break;
            }
            out.push_str(&row);
        }
    }
    if !deltas.cases.is_empty() {
        out.push_str(
            "\n| Case | Model | Tokens in (not cached) / out per trial | Δ in / out | Cost per trial | Δ cost |\n|---|---|---:|---:|---:|---:|\n",
        );
        for (shown, case) in deltas.cases.iter().enumerate() {
            let row = format!(
                "| {} | {} | {} / {} | {} / {} | {} | {} |\n",
                table_code(&clip(&case.case, 64)),
                table_code(&clip(&case.model, 64)),
                tokens(case.input_tokens.now),
                tokens(case.output_tokens.now),
                signed_tokens(case.input_tokens),
                signed_tokens(case.output_tokens),
                usd(case.cost_usd.now),
                signed_usd(case.cost_usd),
            );
            if shown == MAX_DELTA_ROWS || out.len() + row.len() + reserve > DELTAS_CHARS {
                let _ = writeln!(out, "\n_…and {} more case(s) in `report.json`._", deltas.cases.len() - shown);
                break;
            }
            out.push_str(&row);
        }
    }
    if deltas.tools.is_empty() && deltas.cases.is_empty() {
        out.push_str("\nNo tool or case measured now was measured in the stored runs.\n");
    }
    debug_assert!(out.len() <= DELTAS_CHARS, "{} bytes", out.len());
    out
}

/// Tokens per trial (a mean, so possibly a fraction); `—` unknown.
fn tokens(count: Option<f64>) -> String {
    match count {
        None => "—".into(),
        Some(count) if (count - count.round()).abs() < 0.05 => format!("{count:.0}"),
        Some(count) => format!("{count:.1}"),
    }
}

fn signed_tokens(change: Change) -> String {
    match change.delta {
        None => "—".into(),
        Some(delta) if delta.abs() < 0.05 => "±0".into(),
        Some(delta) if delta > 0.0 => format!("+{}", tokens(Some(delta))),
        Some(delta) => format!("−{}", tokens(Some(-delta))),
    }
}

fn signed_usd(change: Change) -> String {
    match change.delta {
        None => "—".into(),
        Some(0.0) => "±$0".into(),
        Some(delta) if delta > 0.0 => format!("+{}", usd(Some(delta))),
        Some(delta) => format!("−{}", usd(Some(-delta))),
    }
}

/// `text` as a chart may show it: letters, digits, space and `-_.:/@+#`, every other character
/// a `?`, at most [`CHART_NAME_CHARS`] characters; never empty.
pub(crate) fn chart_text(text: &str) -> String {
    let mut out: String = text
        .chars()
        .take(CHART_NAME_CHARS)
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, ' ' | '-' | '_' | '.' | ':' | '/' | '@' | '+' | '#') {
                c
            } else {
                '?'
            }
        })
        .collect();
    if text.chars().count() > CHART_NAME_CHARS {
        out.push_str("...");
    }
    if out.trim().is_empty() { "?".into() } else { out }
}

/// A number as Mermaid reads it: fixed decimals (never an exponent), trailing zeros dropped.
fn number(value: f64, decimals: usize) -> String {
    let text = format!("{value:.decimals$}");
    if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_owned() } else { text }
}

/// One line of a chart: its name and a value per point (`None`: not measured in that run).
struct Series {
    name: String,
    values: Vec<Option<f64>>,
}

/// What a chart draws, once its series are chosen: the points every drawn series measured.
struct Chart<'a> {
    title: &'a str,
    unit: &'a str,
    decimals: usize,
    /// A fixed top of the y axis (pass rate: 100); else the largest value and a tenth.
    top: Option<f64>,
    /// One line that needs no name in the legend (the cost of the run).
    unnamed: bool,
    series: Vec<Series>,
}

/// The x labels of `points`: the day (`MM-DD`) each was measured, a repeated day numbered, the
/// last `this run`.
fn labels(points: &[TrendPoint]) -> Vec<String> {
    let mut labels: Vec<String> = Vec::new();
    for (index, point) in points.iter().enumerate() {
        let day = point.measured_at.get(5..10).map_or_else(|| "?".to_owned(), chart_text);
        let mut label = if index + 1 == points.len() { "this run".to_owned() } else { day };
        let base = label.clone();
        let mut n = 1;
        while labels.contains(&label) {
            n += 1;
            label = format!("{base} ({n})");
        }
        labels.push(label);
    }
    labels
}

/// The chart's block and its legend, or `None` when fewer than two points remain. Series
/// measured in too few runs are left out (named in the legend) while they would thin the chart
/// below half of its runs or below two.
fn render_chart(chart: Chart<'_>, points: &[TrendPoint]) -> Option<String> {
    let mut series = chart.series;
    let mut left_out: Vec<String> = Vec::new();
    let measured = |series: &[Series]| -> Vec<usize> {
        (0..points.len()).filter(|index| series.iter().all(|line| line.values[*index].is_some())).collect()
    };
    let any = (0..points.len()).filter(|index| series.iter().any(|line| line.values[*index].is_some())).count();
    loop {
        let kept = measured(&series).len();
        if series.len() <= 1 || (kept >= 2 && kept * 2 >= any) {
            break;
        }
        let fewest = (0..series.len())
            .rev()
            .min_by_key(|index| series[*index].values.iter().filter(|value| value.is_some()).count())
            .unwrap_or(0);
        left_out.push(series.remove(fewest).name);
    }
    let kept = measured(&series);
    if series.is_empty() || kept.len() < 2 {
        return None;
    }
    let all_labels = labels(points);
    let shown: Vec<String> = kept.iter().map(|index| format!("\"{}\"", all_labels[*index])).collect();
    let values = |line: &Series| -> Vec<f64> { kept.iter().filter_map(|index| line.values[*index]).collect() };
    let largest = series.iter().flat_map(values).fold(0.0_f64, f64::max);
    let top = chart.top.unwrap_or_else(|| {
        let top = largest * 11.0 / 10.0;
        let top = if chart.decimals == 0 { top.ceil() } else { top };
        if top > 0.0 { top } else { 1.0 }
    });
    let quoted = |text: &str| format!("\"{text}\"");
    let mut out = String::from("\n```mermaid\nxychart-beta\n");
    let _ = writeln!(out, "    title {}", quoted(chart.title));
    let _ = writeln!(out, "    x-axis [{}]", shown.join(", "));
    let _ = writeln!(out, "    y-axis {} 0 --> {}", quoted(chart.unit), number(top, chart.decimals.max(1)));
    for line in &series {
        let numbers: Vec<String> = values(line).iter().map(|value| number(*value, chart.decimals)).collect();
        let _ = writeln!(out, "    line {} [{}]", quoted(&chart_text(&line.name)), numbers.join(", "));
    }
    out.push_str("```\n\n");
    let legend: Vec<String> = series
        .iter()
        .map(|line| {
            let values = values(line);
            let first = values.first().map_or_else(String::new, |value| number(*value, chart.decimals));
            let last = values.last().map_or_else(String::new, |value| number(*value, chart.decimals));
            if chart.unnamed {
                format!("{first} → {last}")
            } else {
                format!("{} {first} → {last}", code_span(&clip(&line.name, CHART_NAME_CHARS)))
            }
        })
        .collect();
    let _ = write!(out, "{} ({}, oldest → newest drawn): {}", chart.title, chart.unit, legend.join(" · "));
    if !left_out.is_empty() {
        let names: Vec<String> = left_out.iter().map(|name| code_span(&clip(name, CHART_NAME_CHARS))).collect();
        let _ = write!(out, "; left out, measured in too few of the runs: {}", names.join(", "));
    }
    out.push_str(".\n");
    Some(out)
}

/// The trends as charts, at most [`TRENDS_CHARS`] bytes; empty with fewer than two runs.
pub(crate) fn trends_section(trends: &TrendsSection) -> String {
    let points = &trends.points;
    if points.len() < 2 {
        return String::new();
    }
    let newest = &points[points.len() - 1];
    let series_of = |names: Vec<String>, value: &dyn Fn(&TrendPoint, &str) -> Option<f64>| -> Vec<Series> {
        names
            .into_iter()
            .map(|name| Series { values: points.iter().map(|point| value(point, &name)).collect(), name })
            .collect()
    };
    // The models this run measured; the tools slowest now first.
    let models: Vec<String> = newest.pass_rate.keys().take(MAX_SERIES).cloned().collect();
    let mut tools: Vec<(&String, &u64)> = newest.p95_ms.iter().collect();
    tools.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let tools: Vec<String> = tools.into_iter().take(MAX_SERIES).map(|(tool, _)| tool.clone()).collect();
    let charts = [
        Chart {
            title: "Pass rate per model",
            unit: "%",
            decimals: 1,
            top: Some(100.0),
            unnamed: false,
            series: series_of(models, &|point, model| point.pass_rate.get(model).map(|rate| rate * 100.0)),
        },
        Chart {
            title: "p95 latency per tool",
            unit: "ms",
            decimals: 0,
            top: None,
            unnamed: false,
            series: series_of(tools, &|point, tool| point.p95_ms.get(tool).map(|p95| *p95 as f64)),
        },
        Chart {
            title: "Cost per run",
            unit: "USD",
            decimals: 6,
            top: None,
            unnamed: true,
            series: series_of(vec!["cost".into()], &|point, _| point.cost_usd),
        },
    ];
    let mut body = String::new();
    for chart in charts {
        if let Some(block) = render_chart(chart, points) {
            if body.len() + block.len() + 600 > TRENDS_CHARS {
                break;
            }
            body.push_str(&block);
        }
    }
    if body.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\n#### Trends\n\nThe last {} run(s): the green runs that stored their baseline, kept in `trends.json` (at most {}), oldest first, and this run last ({}). Pass rate is layer 1's cases passed of the cases with a verdict; p95 is drawn for the {} slowest tools now; a chart draws the runs that measured every line it draws.\n",
        points.len(),
        trends.kept,
        if trends.stored { "stored" } else { "not stored: shown for comparison" },
        MAX_SERIES
    );
    out.push_str(&body);
    debug_assert!(out.len() <= TRENDS_CHARS, "{} bytes", out.len());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::telemetry::ToolDelta;

    #[test]
    fn chart_text_cannot_end_a_string_the_block_or_the_statement() {
        for hostile in ["a\"b", "x`y", "```", "a%%b", "l]\nline [1]", "<script>", "a;b", "日本"] {
            let text = chart_text(hostile);
            assert!(!text.contains(['"', '`', '%', ']', '[', '\n', '<', ';']), "{hostile:?} → {text:?}");
        }
        assert_eq!(chart_text("日本_tool-1"), "日本_tool-1");
        assert_eq!(chart_text(""), "?");
        assert_eq!(chart_text(&"a".repeat(50)), format!("{}...", "a".repeat(40)));
    }

    /// Three runs: two models (one measured only in the last two), six tools (one with a name
    /// that tries to end the block), a cost unknown in the middle run.
    pub(crate) fn sample_trends() -> TrendsSection {
        let point = |at: &str, rates: &[(&str, f64)], p95: &[(&str, u64)], cost: Option<f64>| TrendPoint {
            measured_at: at.into(),
            commit: None,
            pass_rate: rates.iter().map(|(model, rate)| ((*model).to_owned(), *rate)).collect(),
            p95_ms: p95.iter().map(|(tool, ms)| ((*tool).to_owned(), *ms)).collect(),
            cost_usd: cost,
        };
        let tools =
            |scale: u64| [("a", 10 * scale), ("b", 20 * scale), ("c", 30), ("d", 40), ("e", 50), ("x\"]\n```%%", 60)];
        TrendsSection {
            kept: 30,
            stored: false,
            points: vec![
                point("2026-12-01T03:00:00Z", &[("openai:m", 0.8)], &tools(1), Some(0.0123)),
                point("2026-12-01T15:00:00Z", &[("openai:m", 0.9), ("anthropic:c", 0.5)], &tools(2), None),
                point("2026-12-03T03:00:00Z", &[("openai:m", 0.85), ("anthropic:c", 0.75)], &tools(9), Some(0.0101)),
            ],
        }
    }

    #[test]
    fn the_trends_draw_three_charts_with_escaped_names() {
        let text = trends_section(&sample_trends());
        assert_eq!(text.matches("```mermaid\nxychart-beta\n").count(), 3, "{text}");
        // Only our fences: every line of three backticks opens or closes one of the charts.
        assert_eq!(text.lines().filter(|line| line.starts_with("```")).count(), 6, "{text}");
        assert!(text.len() <= TRENDS_CHARS);
        insta::assert_snapshot!(text);
    }

    #[test]
    fn fewer_than_two_runs_draw_nothing() {
        let mut trends = sample_trends();
        trends.points.truncate(1);
        assert_eq!(trends_section(&trends), "");
        trends.points.clear();
        assert_eq!(trends_section(&trends), "");
    }

    #[test]
    fn a_model_measured_in_too_few_runs_is_left_out_and_named() {
        let mut trends = sample_trends();
        let first = trends.points[0].clone();
        // Five runs of one model, the other model only in the last two: the chart keeps the five.
        trends.points.splice(0..0, [first.clone(), first.clone(), first]);
        let text = trends_section(&trends);
        let chart = text.split("```mermaid").nth(1).expect("a pass-rate chart");
        assert_eq!(chart.matches("    line ").count(), 1, "{chart}");
        assert!(text.contains("left out, measured in too few of the runs: `anthropic:c`"), "{text}");
    }

    #[test]
    fn numbers_never_use_an_exponent() {
        assert_eq!(number(0.000_001_2, 6), "0.000001");
        assert_eq!(number(12.0, 0), "12");
        assert_eq!(number(97.50, 1), "97.5");
        assert_eq!(number(100.0, 1), "100");
    }

    #[test]
    fn a_flagged_tool_shows_the_rule_and_unknowns_stay_dashes() {
        let deltas = TelemetryDeltas {
            baseline: "the last 1 stored run(s)".into(),
            stored_runs: 1,
            tools: vec![ToolDelta {
                tool: "a|b".into(),
                p95_ms: 400,
                baseline_p95_ms: 100,
                delta_ms: 300,
                spread_ms: 0,
                stored: 1,
                rose: true,
            }],
            cases: vec![crate::report::telemetry::CaseDelta {
                case: "c".into(),
                model: "openai:m".into(),
                layer: 1,
                trials: 1,
                baseline_trials: 1,
                input_tokens: Change::of(Some(12.0), Some(10.0)),
                output_tokens: Change::of(Some(5.0), None),
                cost_usd: Change::of(Some(0.001), Some(0.002)),
            }],
            ..TelemetryDeltas::default()
        };
        let text = deltas_section(&deltas);
        assert!(text.contains("| `a\\|b` | 400 ms | 100 ms | +300 ms | 0 ms (1) | ⚠️ rose |"), "{text}");
        assert!(text.contains("| `c` | `openai:m` | 12 / 5 | +2 / — | $0.001000 | −$0.001000 |"), "{text}");
        assert!(text.contains("Shown, not enforced"), "{text}");
    }
}
