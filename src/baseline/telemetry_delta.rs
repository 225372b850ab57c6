//! Layer 3 against its baseline, pure: this run's p95 per tool and tokens and cost per case ×
//! model against the layer-3 figures of the stored runs ([`super::store::StoredTelemetry`]). A
//! tool's p95 is flagged when it rose by more than [`RISE_FACTOR`] × the newest stored p95 *and*
//! by more than the spread (max − min) of the stored p95s, the noise the stored runs show (0 with
//! one stored run, so the factor alone decides then). Shown, never enforced: nothing here reaches
//! the verdict or the exit status.

use std::cmp::Ordering;

use super::store::StoredTelemetry;
use crate::report::telemetry::{CaseDelta, Change, P95_RISE_RULE, TelemetryDeltas, TelemetrySection, ToolDelta};

/// How many times the newest stored p95 a p95 must exceed to be flagged.
pub(crate) const RISE_FACTOR: f64 = 1.5;

/// The delta of a tool's p95 `now` against its `stored` p95s, newest first (`None` without any).
pub(crate) fn tool_delta(tool: &str, now: u64, stored: &[u64]) -> Option<ToolDelta> {
    let latest = *stored.first()?;
    let spread = stored.iter().max().copied().unwrap_or(latest) - stored.iter().min().copied().unwrap_or(latest);
    let delta = i64::try_from(now).unwrap_or(i64::MAX).saturating_sub(i64::try_from(latest).unwrap_or(i64::MAX));
    let rose = now as f64 > RISE_FACTOR * latest as f64 && delta > i64::try_from(spread).unwrap_or(i64::MAX);
    Some(ToolDelta {
        tool: tool.to_owned(),
        p95_ms: now,
        baseline_p95_ms: latest,
        delta_ms: delta,
        spread_ms: spread,
        stored: stored.len(),
        rose,
    })
}

/// `now`'s figures against `stored` (newest first), described as `baseline`; `None` when no
/// stored run holds layer-3 figures. Tools and cases measured now but in no stored run are left
/// out; per case the newest stored run that measured it is the baseline, and tokens and cost are
/// compared per trial (so a changed `--runs` still compares).
pub(crate) fn deltas(now: &TelemetrySection, stored: &[StoredTelemetry], baseline: &str) -> Option<TelemetryDeltas> {
    let newest = stored.first()?;
    let mut tools: Vec<ToolDelta> = now
        .tools
        .iter()
        .filter_map(|tool| {
            let p95 = tool.latency.p95_ms?;
            let kept: Vec<u64> = stored.iter().filter_map(|run| run.p95_ms.get(&tool.tool).copied()).collect();
            tool_delta(&tool.tool, p95, &kept)
        })
        .collect();
    tools.sort_by(|a, b| b.rose.cmp(&a.rose).then(b.delta_ms.cmp(&a.delta_ms)).then(a.tool.cmp(&b.tool)));
    let per_trial = |value: Option<f64>, trials: usize| value.map(|value| value / trials as f64);
    let mut cases: Vec<CaseDelta> = now
        .cases
        .iter()
        .filter(|case| case.trials > 0)
        .filter_map(|case| {
            let before = stored.iter().flat_map(|run| &run.cases).find(|before| {
                before.case == case.case
                    && before.model == case.model
                    && before.layer == case.layer
                    && before.trials > 0
            })?;
            Some(CaseDelta {
                case: case.case.clone(),
                model: case.model.clone(),
                layer: case.layer,
                trials: case.trials,
                baseline_trials: before.trials,
                input_tokens: Change::of(
                    per_trial(case.spend.input_tokens, case.trials),
                    per_trial(before.input_tokens, before.trials),
                ),
                output_tokens: Change::of(
                    per_trial(case.spend.output_tokens, case.trials),
                    per_trial(before.output_tokens, before.trials),
                ),
                cost_usd: Change::of(
                    per_trial(case.spend.cost_usd, case.trials),
                    per_trial(before.cost_usd, before.trials),
                ),
            })
        })
        .collect();
    // The largest rise first; unknown deltas last.
    let descending = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => b.partial_cmp(&a).unwrap_or(Ordering::Equal),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    };
    let tokens =
        |case: &CaseDelta| case.input_tokens.delta.zip(case.output_tokens.delta).map(|(input, output)| input + output);
    cases.sort_by(|a, b| descending(a.cost_usd.delta, b.cost_usd.delta).then(descending(tokens(a), tokens(b))));
    Some(TelemetryDeltas {
        baseline: baseline.to_owned(),
        stored_runs: stored.len(),
        measured_at: newest.measured_at.clone(),
        rule: P95_RISE_RULE.to_owned(),
        tools,
        cases,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::store::StoredCase;
    use crate::report::telemetry::{CaseTelemetry, Latency, Spend, ToolTelemetry};

    #[test]
    fn a_rise_is_flagged_only_past_both_the_factor_and_the_spread() {
        // The newest stored p95 is 100: 1.5 × 100 = 150.
        let flagged = |now: u64, stored: &[u64]| tool_delta("t", now, stored).expect("stored").rose;
        assert!(flagged(151, &[100]), "one stored run: spread 0, the factor decides");
        assert!(!flagged(150, &[100]), "exactly 1.5 × is not more than it");
        assert!(flagged(151, &[100, 140, 90]), "past the factor, and the rise (51) past the spread (50)");
        assert!(!flagged(150, &[100, 140, 90]), "past the spread, not past the factor");
        assert!(!flagged(160, &[100, 170, 90]), "past the factor, but the rise (60) within the spread (80)");
        assert!(!flagged(90, &[100]), "a fall is never flagged");
        let delta = tool_delta("t", 160, &[100, 200, 40]).expect("stored");
        assert_eq!(
            (delta.baseline_p95_ms, delta.delta_ms, delta.spread_ms, delta.stored),
            (100, 60, 160, 3),
            "{delta:?}"
        );
        assert_eq!(tool_delta("t", 90, &[100]).expect("stored").delta_ms, -10);
        assert_eq!(tool_delta("t", 90, &[]), None, "nothing stored: no delta");
    }

    fn section(tools: &[(&str, Option<u64>)], cases: &[(&str, usize, Option<f64>, Option<f64>)]) -> TelemetrySection {
        TelemetrySection {
            tools: tools
                .iter()
                .map(|(tool, p95)| ToolTelemetry {
                    tool: (*tool).into(),
                    latency: Latency { count: 1, p50_ms: *p95, p95_ms: *p95, max_ms: *p95 },
                    ..ToolTelemetry::default()
                })
                .collect(),
            cases: cases
                .iter()
                .map(|(case, trials, input, cost)| CaseTelemetry {
                    case: (*case).into(),
                    model: "openai:m".into(),
                    layer: 1,
                    trials: *trials,
                    spend: Spend {
                        input_tokens: *input,
                        output_tokens: Some(10.0),
                        cost_usd: *cost,
                        ..Spend::default()
                    },
                    judge: None,
                })
                .collect(),
            ..TelemetrySection::default()
        }
    }

    #[test]
    fn deltas_take_the_newest_stored_run_and_keep_unknowns_unknown() {
        let before = StoredTelemetry::of(
            &section(
                &[("fast", Some(10)), ("slow", Some(100))],
                &[("a", 2, Some(200.0), Some(0.02)), ("b", 1, None, Some(0.01)), ("gone", 1, Some(1.0), None)],
            ),
            "2026-12-01T00:00:00Z",
        );
        let older = StoredTelemetry {
            measured_at: "2026-11-30T00:00:00Z".into(),
            p95_ms: [("slow".to_owned(), 120)].into(),
            cases: vec![StoredCase {
                case: "c".into(),
                model: "openai:m".into(),
                layer: 1,
                trials: 1,
                ..StoredCase::default()
            }],
        };
        let now = section(
            &[("fast", Some(11)), ("slow", Some(400)), ("new", Some(5)), ("unmeasured", None)],
            &[("a", 4, Some(440.0), None), ("b", 1, Some(50.0), Some(0.03)), ("c", 1, Some(1.0), None)],
        );
        let deltas = deltas(&now, &[before, older], "the stored runs").expect("stored figures");
        assert_eq!((deltas.stored_runs, deltas.measured_at.as_str()), (2, "2026-12-01T00:00:00Z"));
        let tools: Vec<(&str, i64, u64, bool)> =
            deltas.tools.iter().map(|tool| (tool.tool.as_str(), tool.delta_ms, tool.spread_ms, tool.rose)).collect();
        assert_eq!(tools, [("slow", 300, 20, true), ("fast", 1, 0, false)], "flagged first; new tools left out");
        let case = |id: &str| deltas.cases.iter().find(|case| case.case == id).expect(id);
        // Per trial: 440 / 4 against 200 / 2.
        assert_eq!(case("a").input_tokens, Change { now: Some(110.0), baseline: Some(100.0), delta: Some(10.0) });
        assert_eq!(case("a").cost_usd, Change { now: None, baseline: Some(0.01), delta: None }, "unknown now");
        assert_eq!(case("b").input_tokens.delta, None, "unknown in the baseline: never 0");
        assert!(case("b").cost_usd.delta.is_some_and(|delta| (delta - 0.02).abs() < 1e-12));
        assert_eq!(case("c").baseline_trials, 1, "from the older stored run, the newest that has it");
        assert_eq!(deltas.cases[0].case, "b", "the largest Δ cost first, unknown last");
        assert_eq!(super::deltas(&now, &[], "none"), None, "nothing stored: no deltas");
    }
}
