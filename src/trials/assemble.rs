//! From trial records to the report: each trial scored ([`crate::scoring::score_trial`]), each case ×
//! model scored from its trials ([`crate::scoring::score_case`]), grader tallies, the Wilson
//! interval, bounded traces, and the suite metrics per model.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use serde_json::{Value, json};

use super::caller::LiveModel;
use crate::agent::{CaseSpec, TrialEnding, TrialRecord};
use crate::golden::GoldenSet;
use crate::report::evals::{
    CriterionOut, ErrorCause, EvalResult, EvalStatus, EvalsSection, InputRound, ModelText, TraceCall, TrialStatus,
    TrialTrace, metrics_of, wilson_95,
};
use crate::scoring::{self, CaseVerdict, TrialScore, TrialVerdict, Verdict};
use crate::settings::layer1::{TRUNCATED_BYTES, TraceResults};

/// What [`fill`] reads.
pub(crate) struct Inputs<'a> {
    /// The golden set.
    pub set: &'a GoldenSet,
    /// The plan's items (layer 1's: item `i` is case `i`), each with its trials.
    pub items: &'a [super::plan::Item],
    /// Their cases as the loop read them (same order).
    pub specs: &'a [CaseSpec],
    /// The models that ran: index in the settings, label, caller.
    pub models: &'a [(usize, String, &'a LiveModel)],
    /// Trials by (model index, item index).
    pub records: &'a BTreeMap<(usize, usize), Vec<TrialRecord>>,
    /// For relative dates.
    pub today: NaiveDate,
    /// How much of results and answers to keep.
    pub trace_results: TraceResults,
    /// What cut the cases with trials missing.
    pub cut: Cut,
    /// Verdicts reused from the cache, by (model index, case index): reported as they are.
    pub reused: &'a BTreeMap<(usize, usize), EvalResult>,
    /// The case × model pairs the plan covers (a shard's slice, a confirmation's pairs).
    pub scope: &'a super::plan::Scope,
}

/// What cut the cases with trials missing (they are `skipped`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cut {
    /// The model-call cap.
    CallCap,
    /// The cost budget (`--max-cost-usd`).
    CostBudget,
    /// A signal.
    Interrupted,
}

/// Fills `section.evals` (cases in file order, then models in the order given; the pairs of the
/// plan's scope only) and `section.eval_metrics` (computed from those evals).
pub(crate) fn fill(section: &mut EvalsSection, inputs: &Inputs<'_>) {
    let mut evals: Vec<((usize, usize), EvalResult)> = Vec::new();
    for (model_index, label, caller) in inputs.models {
        for (case_index, (item, spec)) in inputs.items.iter().zip(inputs.specs).enumerate() {
            if !inputs.scope.contains(case_index, *model_index) {
                continue;
            }
            let case = &inputs.set.cases[item.case];
            let key = (case_index, *model_index);
            let trials = item.trials;
            let (requested, threshold) = (trials.runs, trials.threshold);
            let sampling = caller.effective(spec.run.sampling);
            let mut sampling_out = serde_json::Map::new();
            if let Some(value) = sampling.temperature {
                sampling_out.insert("temperature".into(), json!(value));
            }
            if let Some(value) = sampling.top_p {
                sampling_out.insert("top_p".into(), json!(value));
            }
            if let Some(value) = sampling.max_output_tokens {
                sampling_out.insert("max_output_tokens".into(), json!(value));
            }
            let mut eval = EvalResult {
                case: case.id.clone(),
                model: label.clone(),
                kind: if trials.hard { "hard" } else { "soft" }.to_owned(),
                runs: requested,
                passed: 0,
                completed: 0,
                status: EvalStatus::Skipped,
                threshold,
                wilson_95: [0.0, 1.0],
                case_sha256: case.hash.clone(),
                grader_version: crate::cache::GRADER_VERSION,
                graders: BTreeMap::new(),
                reason: None,
                flaky: false,
                sampling: Value::Object(sampling_out),
                traces: Vec::new(),
                cached: None,
                reported_models: Vec::new(),
            };
            if let Some(eval) = inputs.reused.get(&(*model_index, case_index)) {
                evals.push((key, eval.clone()));
                continue;
            }
            if let Some(reason) = &spec.deferred {
                eval.reason = Some(format!("skipped: {reason}"));
                evals.push((key, eval));
                continue;
            }
            let runs = inputs.records.get(&(*model_index, case_index)).map(Vec::as_slice).unwrap_or_default();
            let scored: Vec<(&TrialRecord, TrialScore)> = runs
                .iter()
                .filter(|run| run.ending != TrialEnding::CapReached)
                .map(|run| {
                    let score = scoring::score_trial(case, &run.trace(), inputs.today);
                    (
                        run,
                        match &run.judge {
                            Some(judged) => score.with_judge(judged),
                            None => score,
                        },
                    )
                })
                .collect();
            let scores: Vec<TrialScore> = scored.iter().map(|(_, score)| score.clone()).collect();
            let cut = runs.len() < requested || runs.iter().any(|run| run.ending == TrialEnding::CapReached);
            let case_score = scoring::score_case(case, trials, &scores);
            eval.passed = case_score.passed.k;
            eval.completed = case_score.passed.n;
            eval.wilson_95 = wilson_95(case_score.passed.k, case_score.passed.n);
            eval.flaky = case_score.passed.k > 0 && case_score.passed.k < case_score.passed.n;
            eval.status = match case_score.verdict {
                _ if cut => EvalStatus::Skipped,
                CaseVerdict::Pass => EvalStatus::Pass,
                CaseVerdict::Fail => EvalStatus::Fail,
                CaseVerdict::Error => EvalStatus::Error,
                CaseVerdict::Ungraded => EvalStatus::Skipped,
            };
            let first_failure = scored.iter().find_map(|(record, score)| match score.verdict {
                TrialVerdict::Fail | TrialVerdict::Error => {
                    Some(format!("trial {}: {}", record.trial, trial_reason(score)))
                }
                _ => None,
            });
            eval.reason = Some(match (cut, first_failure) {
                (true, _) if inputs.cut == Cut::CallCap => format!(
                    "skipped: call cap reached ({} of {requested} trial(s) completed before the cap)",
                    scores.len()
                ),
                (true, _) if inputs.cut == Cut::CostBudget => format!(
                    "skipped: cost budget reached ({} of {requested} trial(s) completed before the budget ran out)",
                    scores.len()
                ),
                (true, _) => format!("skipped: interrupted ({} of {requested} trial(s) completed)", scores.len()),
                (false, Some(failure)) if eval.status != EvalStatus::Pass => {
                    format!("{}; {failure}", case_score.reason)
                }
                (false, _) => case_score.reason.clone(),
            });
            let mut scored = scores.iter();
            for run in runs {
                let score = if run.ending == TrialEnding::CapReached { None } else { scored.next() };
                if let Some(score) = score.filter(|score| score.verdict != TrialVerdict::Error) {
                    for criterion in &score.criteria {
                        let tally = eval.graders.entry(criterion.kind.name().to_owned()).or_default();
                        match criterion.verdict {
                            Verdict::Pass => {
                                tally.passed += 1;
                                tally.graded += 1;
                            }
                            Verdict::Fail => tally.graded += 1,
                            Verdict::Skipped | Verdict::Error => {}
                        }
                    }
                }
                eval.traces.push(trace_of(run, score, inputs.trace_results, inputs.cut));
            }
            // Distinct and sorted: a set's order.
            eval.reported_models = runs
                .iter()
                .flat_map(|run| run.reported_models.iter().cloned())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            evals.push((key, eval));
        }
    }
    evals.sort_by_key(|(key, _)| *key);
    for (_, label, _) in inputs.models {
        let own: Vec<&EvalResult> = evals.iter().map(|(_, eval)| eval).filter(|eval| eval.model == *label).collect();
        section.eval_metrics.push(metrics_of(label, &own));
    }
    section.evals.extend(evals.into_iter().map(|(_, eval)| eval));
}

/// Pools the confirmation re-run `rerun` of a case × model into `eval`, its first trials, as one
/// sample: the re-run's trials join the traces numbered after the first ones, the counts add up
/// (k + k′ passed of n + n′ completed, N + N′ trials), the threshold is scaled to the pooled N (a
/// soft 4 of 5 needs 8 of 10; a hard case needs every trial), and the verdict, the Wilson
/// interval, the grader tallies, the flakiness and the reason are those of the pooled trials.
/// Trials the model-call cap cut from the re-run are not counted in N′ (their traces stay, as
/// `call_cap`). A re-run with no trial that ran changes nothing.
pub(crate) fn pool_confirmation(eval: &mut EvalResult, rerun: &EvalResult) {
    let cut = |trace: &TrialTrace| trace.ending == "call_cap";
    let ran = if rerun.status == EvalStatus::Skipped {
        rerun.traces.iter().filter(|trace| !cut(trace)).count()
    } else {
        rerun.runs
    };
    if ran == 0 || eval.runs == 0 {
        return;
    }
    let first_runs = eval.runs;
    let runs = first_runs + ran;
    let threshold =
        if eval.kind == "hard" { runs } else { (eval.threshold * runs).div_ceil(first_runs).clamp(1, runs) };
    eval.runs = runs;
    eval.threshold = threshold;
    eval.passed += rerun.passed;
    eval.completed += rerun.completed;
    for (name, tally) in &rerun.graders {
        let pooled = eval.graders.entry(name.clone()).or_default();
        pooled.passed += tally.passed;
        pooled.graded += tally.graded;
    }
    eval.traces.extend(rerun.traces.iter().cloned().map(|trace| TrialTrace { run: trace.run + first_runs, ..trace }));
    eval.reported_models = eval
        .reported_models
        .iter()
        .chain(&rerun.reported_models)
        .cloned()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let (k, n) = (eval.passed, eval.completed);
    eval.wilson_95 = wilson_95(k, n);
    eval.flaky = k > 0 && k < n;
    let rule = if eval.kind == "hard" {
        "hard: every trial must pass".to_owned()
    } else {
        format!("soft: {threshold} of {runs} must pass")
    };
    let pooled = format!("{ran} of them in the confirmation re-run");
    let (status, verdict) = if n < threshold.max(1) {
        (
            EvalStatus::Error,
            format!(
                "only {n} of {runs} trial(s) completed ({} ended in an error; {pooled}), fewer than the {threshold} needed for a verdict ({rule})",
                runs.saturating_sub(n)
            ),
        )
    } else if k >= threshold {
        (EvalStatus::Pass, format!("{k} of {n} completed trial(s) passed ({rule}; {pooled})"))
    } else {
        (EvalStatus::Fail, format!("{k} of {n} completed trial(s) passed, {threshold} needed ({rule}; {pooled})"))
    };
    eval.status = status;
    let first_failure = eval
        .traces
        .iter()
        .find(|trace| matches!(trace.status, TrialStatus::Fail | TrialStatus::Error) && !cut(trace))
        .map(|trace| format!("trial {}: {}", trace.run, trace.reason.as_deref().unwrap_or("failed")));
    eval.reason = Some(match first_failure {
        Some(failure) if status != EvalStatus::Pass => format!("{verdict}; {failure}"),
        _ => verdict,
    });
}

/// A failed or errored trial in one line: the error, or the first failing criterion's reason.
fn trial_reason(score: &TrialScore) -> String {
    if let Some(error) = &score.error {
        return crate::report::evals::error_reason(&one_line(error));
    }
    score
        .criteria
        .iter()
        .find(|criterion| criterion.verdict == Verdict::Fail)
        .map(|criterion| format!("{}: {}", criterion.kind.name(), one_line(&criterion.reason)))
        .unwrap_or_else(|| "no criterion failed".into())
}

/// `text` on one line, at most 300 characters.
fn one_line(text: &str) -> String {
    crate::text::clip(&text.split_whitespace().collect::<Vec<_>>().join(" "), 300)
}

/// Keeps what `--trace-results` allows of a tool result or model text.
fn bounded(text: &str, keep: TraceResults) -> Option<String> {
    match keep {
        TraceResults::Full => Some(text.to_owned()),
        TraceResults::None => None,
        TraceResults::Truncated if text.len() <= TRUNCATED_BYTES => Some(text.to_owned()),
        TraceResults::Truncated => {
            let mut cut = TRUNCATED_BYTES;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            Some(format!("{}… [{} bytes in all]", &text[..cut], text.len()))
        }
    }
}

/// A tool result as `--trace-results` keeps it. A result that was cut for the model keeps the
/// model's copy, and when `truncated` shortens it further, its marker gives both sizes (the cut
/// copy's length alone would hide what the server sent).
fn bounded_result(call: &crate::agent::CallRecord, keep: TraceResults) -> Option<String> {
    let (Some(sent), TraceResults::Truncated) = (call.server_bytes, keep) else {
        return bounded(&call.result, keep);
    };
    let mut cut = TRUNCATED_BYTES.min(call.result.len());
    while !call.result.is_char_boundary(cut) {
        cut -= 1;
    }
    Some(format!(
        "{}… [the model saw {} bytes, cut by mcp-eval; the server sent {sent} bytes]",
        &call.result[..cut],
        call.result.len()
    ))
}

/// Why trial `record` is `error` or was cut, from its typed parts: how it ended, then a
/// model-graded argument check that could not be graded (scoring keeps that over the judge),
/// then the judge's failure.
fn cause_of(record: &TrialRecord, score: Option<&TrialScore>, status: TrialStatus) -> Option<ErrorCause> {
    let ended = match &record.ending {
        TrialEnding::ProviderError(_) => Some(ErrorCause::Provider),
        TrialEnding::NoRecording(_) => Some(ErrorCause::ReplayMiss),
        TrialEnding::ServerError(_) => Some(ErrorCause::Server),
        TrialEnding::CapReached => Some(ErrorCause::CallCap),
        TrialEnding::Answer | TrialEnding::MaxTurns | TrialEnding::Timeout | TrialEnding::Finding(_) => None,
    };
    if ended.is_some() || status != TrialStatus::Error {
        return ended;
    }
    // A replay miss of the judge is deterministic (exit status 5) whatever else erred: it
    // comes before an argument check's own error.
    if record.judge_cause == Some(ErrorCause::JudgeReplayMiss) {
        return record.judge_cause;
    }
    let argument_error =
        score.is_some_and(|score| score.criteria.iter().any(|criterion| criterion.verdict == Verdict::Error));
    if argument_error {
        let missed =
            record.semantic.values().any(|resolved| matches!(resolved, scoring::semantic::Resolved::Missed(_)));
        return Some(if missed { ErrorCause::ArgumentJudgeReplayMiss } else { ErrorCause::ArgumentJudge });
    }
    record.judge_cause
}

fn trace_of(record: &TrialRecord, score: Option<&TrialScore>, keep: TraceResults, cut: Cut) -> TrialTrace {
    let status = match (score.map(|score| score.verdict), &record.ending) {
        (_, TrialEnding::CapReached) | (None, _) => TrialStatus::Skipped,
        (Some(TrialVerdict::Pass), _) => TrialStatus::Pass,
        (Some(TrialVerdict::Fail), _) => TrialStatus::Fail,
        (Some(TrialVerdict::Error), _) => TrialStatus::Error,
        (Some(TrialVerdict::Ungraded), _) => TrialStatus::Skipped,
    };
    let cause = cause_of(record, score, status);
    let reason = match status {
        TrialStatus::Fail | TrialStatus::Error => score.map(|score| {
            // A call written as text first: the server's template, not the model, is what to fix.
            match record.written_calls.first() {
                Some(tool) => format!("{}; {}", crate::agent::text_call::note(tool), trial_reason(score)),
                None => trial_reason(score),
            }
        }),
        TrialStatus::Skipped if record.ending == TrialEnding::CapReached && cut == Cut::CostBudget => {
            Some("cost budget reached".into())
        }
        TrialStatus::Skipped if record.ending == TrialEnding::CapReached => Some("call cap reached".into()),
        _ => None,
    };
    TrialTrace {
        judge: record.judge_trace.clone().map(|judged| judge_kept(judged, keep)),
        cause,
        result_changed: record.result_changed,
        run: record.trial,
        status,
        reason,
        ending: record.ending.as_str().to_owned(),
        turns: record.turns,
        model_calls: usize::try_from(record.model_calls).unwrap_or(usize::MAX),
        duration_ms: record.duration_ms,
        calls: record
            .calls
            .iter()
            .map(|call| TraceCall {
                turn: call.turn,
                name: call.name.clone(),
                arguments: call.arguments.clone(),
                sent: call.sent,
                error: call.error.clone(),
                result: bounded_result(call, keep),
                is_error: call.is_error,
                result_cut: call.server_bytes.map(|server_bytes| crate::report::evals::ResultCut {
                    server_bytes,
                    model_bytes: call.result.len(),
                }),
                latency_ms: call.latency_ms,
                input_rounds: call
                    .rounds
                    .iter()
                    .map(|round| InputRound {
                        requests: round.requests.iter().cloned().collect(),
                        responses: (keep != TraceResults::None).then(|| round.responses.clone()),
                        request_state: round.request_state,
                    })
                    .collect(),
            })
            .collect(),
        answer: record.answer.as_deref().and_then(|answer| bounded(answer, keep)),
        model_text: record
            .texts
            .iter()
            .filter_map(|(turn, text)| bounded(text, keep).map(|text| ModelText { turn: *turn, text }))
            .collect(),
        stop_reasons: record.stop_reasons.clone(),
        input_tokens: record.input_tokens,
        output_tokens: record.output_tokens,
        model_latencies_ms: record.model_latencies_ms.clone(),
        criteria: score
            .map(|score| {
                score
                    .criteria
                    .iter()
                    .map(|criterion| CriterionOut {
                        criterion: criterion.kind.name().to_owned(),
                        verdict: match criterion.verdict {
                            Verdict::Pass => "pass",
                            Verdict::Fail => "fail",
                            Verdict::Skipped => "skipped",
                            Verdict::Error => "error",
                        }
                        .to_owned(),
                        reason: criterion.reason.clone(),
                    })
                    .chain(record.judge_lines.iter().map(|line| {
                        let (id, rest) = line.split_once(": ").unwrap_or((line.as_str(), ""));
                        let verdict = rest.split_whitespace().next().unwrap_or("unknown");
                        // The judge's reason and quote come from the trace: kept as the results are.
                        let reason = match keep {
                            TraceResults::None => format!("{verdict} ({NOT_KEPT})"),
                            _ => rest.to_owned(),
                        };
                        CriterionOut { criterion: format!("judge:{id}"), verdict: verdict.to_owned(), reason }
                    }))
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// What stands for the judge's quotes and reasons with `--trace-results none`.
const NOT_KEPT: &str = "the judge's evidence and reason are not kept: --trace-results none";

/// The judge's part of a trace as `--trace-results` allows: its quotes and reasons repeat the
/// tool results and the answer, so `none` keeps only the verdicts.
fn judge_kept(mut judged: crate::report::evals::JudgeTrace, keep: TraceResults) -> crate::report::evals::JudgeTrace {
    if keep == TraceResults::None {
        for criterion in &mut judged.criteria {
            criterion.evidence = String::new();
            criterion.reason = NOT_KEPT.to_owned();
        }
    }
    judged
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `passed` of `runs` with a trace per trial (the passing ones first), case `c`.
    fn traced(hard: bool, passed: usize, runs: usize, threshold: usize) -> EvalResult {
        use crate::report::test_support::run;
        let traces = (1..=runs)
            .map(|number| {
                if number <= passed {
                    run(number, TrialStatus::Pass, None, Some("t"))
                } else {
                    run(number, TrialStatus::Fail, Some("called another tool"), Some("u"))
                }
            })
            .collect();
        EvalResult { traces, ..EvalResult::for_tests("c", "openai:m", hard, passed, runs, threshold) }
    }

    #[test]
    fn a_pooled_confirmation_is_judged_against_the_threshold_scaled_to_the_pooled_trials() {
        // Soft 4 of 5: 4/5 then 4/5 is 8 of 10 with 8 needed; 4/5 then 3/5 fails at 7 of 10.
        let mut borderline = traced(false, 4, 5, 4);
        pool_confirmation(&mut borderline, &traced(false, 4, 5, 4));
        assert_eq!(
            (borderline.status, borderline.passed, borderline.completed, borderline.runs, borderline.threshold),
            (EvalStatus::Pass, 8, 10, 10, 8)
        );
        let runs: Vec<usize> = borderline.traces.iter().map(|trace| trace.run).collect();
        assert_eq!(runs, (1..=10).collect::<Vec<_>>(), "the re-run's trials are numbered after the first ones");
        let reason = borderline.reason.clone().unwrap_or_default();
        assert!(reason.contains("8 of 10") && reason.contains("5 of them in the confirmation re-run"), "{reason}");
        let mut fell = traced(false, 4, 5, 4);
        pool_confirmation(&mut fell, &traced(false, 3, 5, 4));
        assert_eq!((fell.status, fell.passed, fell.threshold), (EvalStatus::Fail, 7, 8));
        let reason = fell.reason.unwrap_or_default();
        assert!(
            reason.contains("7 of 10 completed trial(s) passed, 8 needed") && reason.contains("trial 5: "),
            "{reason}"
        );
        // Hard: every pooled trial must pass.
        let mut hard = traced(true, 4, 5, 5);
        pool_confirmation(&mut hard, &traced(true, 5, 5, 5));
        assert_eq!((hard.status, hard.passed, hard.threshold), (EvalStatus::Fail, 9, 10));
    }

    #[test]
    fn a_confirmation_the_call_cap_cut_pools_only_the_trials_that_ran() {
        let mut eval = traced(false, 4, 5, 4);
        // Two trials of five ran before the cap; the third was cut.
        let mut cut = traced(false, 2, 3, 4);
        cut.traces[2].ending = "call_cap".into();
        cut.traces[2].status = TrialStatus::Skipped;
        cut.completed = 2;
        cut.runs = 5;
        cut.status = EvalStatus::Skipped;
        pool_confirmation(&mut eval, &cut);
        // 6 of 7 ran, threshold ⌈4 · 7 / 5⌉ = 6.
        assert_eq!(
            (eval.status, eval.passed, eval.completed, eval.runs, eval.threshold),
            (EvalStatus::Pass, 6, 7, 7, 6)
        );
        let mut unchanged = traced(false, 4, 5, 4);
        let before = unchanged.clone();
        pool_confirmation(
            &mut unchanged,
            &EvalResult { status: EvalStatus::Skipped, ..EvalResult::for_tests("c", "openai:m", false, 0, 5, 4) },
        );
        assert_eq!(unchanged, before, "a re-run the cap cut before any trial changes nothing");
    }

    #[test]
    fn a_judge_replay_miss_is_the_cause_even_when_an_argument_check_erred_too() {
        let mut run = TrialRecord::new(1);
        run.judge_cause = Some(ErrorCause::JudgeReplayMiss);
        let erred = crate::scoring::Criterion {
            kind: crate::scoring::CriterionKind::Arguments,
            verdict: Verdict::Error,
            reason: "the argument judge failed".into(),
            args: Vec::new(),
        };
        let score = TrialScore { verdict: TrialVerdict::Error, criteria: vec![erred], error: None };
        assert_eq!(cause_of(&run, Some(&score), TrialStatus::Error), Some(ErrorCause::JudgeReplayMiss));
        run.judge_cause = Some(ErrorCause::Judge);
        assert_eq!(cause_of(&run, Some(&score), TrialStatus::Error), Some(ErrorCause::ArgumentJudge));
    }

    #[test]
    fn traces_keep_what_trace_results_allows() {
        let long = "x".repeat(TRUNCATED_BYTES + 10);
        assert_eq!(bounded("short", TraceResults::Truncated).as_deref(), Some("short"));
        let cut = bounded(&long, TraceResults::Truncated).expect("kept");
        assert!(
            cut.starts_with(&"x".repeat(TRUNCATED_BYTES)) && cut.ends_with(&format!("[{} bytes in all]", long.len()))
        );
        assert_eq!(bounded(&long, TraceResults::None), None);
        assert_eq!(bounded(&long, TraceResults::Full), Some(long));
    }

    #[test]
    fn trace_results_none_keeps_the_judges_verdicts_but_not_its_quotes() {
        let judged: crate::report::evals::JudgeTrace = serde_json::from_value(json!({
            "model": "p:j", "prompt_version": 1, "rubric_sha256": "sha256:r", "samples": 1, "verdict": "pass",
            "criteria": [{"criterion_id": "c", "must": true, "verdict": "pass",
                "evidence": "{\"temperature\": 21.5}", "reason": "the result says 21.5", "downgraded": false}]
        }))
        .expect("a judge trace");
        let kept = judge_kept(judged.clone(), TraceResults::Truncated);
        assert_eq!(kept, judged);
        let none = judge_kept(judged, TraceResults::None);
        assert_eq!(none.criteria[0].verdict, "pass");
        assert!(none.criteria[0].evidence.is_empty() && !none.criteria[0].reason.contains("21.5"), "{none:?}");
    }
}
