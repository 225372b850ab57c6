//! The rubric judge of layer 1 (pure parts): a rubric of binary criteria (`must` / `should`),
//! the judge request (the task, the rubric, the whole trace and the final answer, with a forced
//! call to one verdict tool on either API), the verdicts read back from that call — a `pass`
//! whose `evidence` quote does not occur in the trace is downgraded to `unknown` — a majority
//! vote over several samples, the trial's verdict (every `must` passes and at least `min_should`
//! `should` criteria pass), and the Rogan–Gladen correction of a judge pass rate for a judge of
//! known true-positive and true-negative rates. No 1–10 score takes part in any gate.
//!
//! The runner (`crate::trials`) asks `--judge-model` after each finished trial of a case with a
//! rubric (`--judge-samples` times), through the same retries, call cap and cassettes as any
//! model; a judge that fails is `judge_error` for that trial, never a pass or a fail.

use serde_json::{Value, json};

use crate::providers::{Completion, CompletionRequest, Message, Sampling, ToolChoice, ToolSpec};

/// The version of the judge prompt: part of a judged verdict's cache key and trace.
pub(crate) const JUDGE_PROMPT_VERSION: u32 = 1;

/// The tool the judge must call to give its verdicts.
pub(crate) const VERDICT_TOOL: &str = "record_verdicts";

/// A resolved rubric and its criteria: typed by the golden-set loader.
pub(crate) use crate::golden::Rubric;

/// The verdict tool's definition: one entry per criterion.
pub(crate) fn verdict_tool() -> ToolSpec {
    ToolSpec {
        name: VERDICT_TOOL.into(),
        description: Some(
            "Record one verdict per rubric criterion, each with a quote from the trace as evidence.".into(),
        ),
        input_schema: json!({
            "type": "object",
            "properties": {
                "verdicts": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "criterion_id": {"type": "string"},
                            "verdict": {"type": "string", "enum": ["pass", "fail", "unknown"]},
                            "evidence": {"type": "string", "description": "An exact quote from the trace that supports the verdict."},
                            "reason": {"type": "string"}
                        },
                        "required": ["criterion_id", "verdict", "evidence", "reason"]
                    }
                }
            },
            "required": ["verdicts"]
        }),
    }
}

/// The trace as the judge reads it: per tool call `call NAME ARGUMENTS` and `result: TEXT` (or
/// `result (isError): TEXT`), then `answer: TEXT` (`(none)` without one). `calls` gives each
/// call's name, arguments, whether its result was an error, and the result text. One format for
/// a trial being judged and a labelled trial re-judged from its report (`judge calibrate`).
pub(crate) fn trace_text<'a>(
    calls: impl Iterator<Item = (&'a str, &'a Value, bool, &'a str)>,
    answer: Option<&str>,
) -> String {
    let mut text = String::new();
    for (name, arguments, is_error, result) in calls {
        text.push_str(&format!("call {name} {arguments}\n"));
        text.push_str(&format!("result{}: {result}\n", if is_error { " (isError)" } else { "" }));
    }
    text.push_str(&format!("answer: {}\n", answer.unwrap_or("(none)")));
    text
}

/// The judge's request: the task, the rubric, the trace and the answer; temperature 0 (dropped
/// by the caller for a model that refuses it); the verdict tool forced.
pub(crate) fn judge_request(task: &str, rubric: &Rubric, trace: &str) -> CompletionRequest {
    let criteria: Vec<String> = rubric
        .criteria
        .iter()
        .map(|criterion| {
            format!("- {} [{}]: {}", criterion.id, if criterion.must { "must" } else { "should" }, criterion.text)
        })
        .collect();
    let system = "You grade one run of an AI assistant that used tools. Answer each criterion from the trace alone: \
                  `pass` only with an exact quote from the trace as evidence, `fail` when the trace shows it is not met, \
                  `unknown` when the trace does not tell. Judge what happened, not how it is phrased; do not reward length. \
                  Record every verdict with the record_verdicts tool.";
    let user = format!(
        "## The task\n{task}\n\n## The criteria\n{}\n\n{}\n{trace}",
        criteria.join("\n"),
        crate::providers::TRACE_HEADING
    );
    CompletionRequest {
        system: Some(system.to_owned()),
        messages: vec![Message::User(user)],
        tools: vec![verdict_tool()],
        sampling: Sampling { temperature: Some(0.0), top_p: None, max_output_tokens: Some(1024) },
        tool_choice: ToolChoice::Named(VERDICT_TOOL.into()),
    }
}

/// A judge's verdict on one criterion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CriterionVerdict {
    /// Met, with evidence found in the trace.
    Pass,
    /// Not met.
    Fail,
    /// The trace does not tell (or a pass without evidence in the trace).
    Unknown,
}

/// One criterion as judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Judged {
    /// The criterion id.
    pub id: String,
    /// The verdict.
    pub verdict: CriterionVerdict,
    /// The quote given.
    pub evidence: String,
    /// Why.
    pub reason: String,
    /// A `pass` whose quote does not occur in the trace, downgraded to `unknown`.
    pub downgraded: bool,
}

/// Whitespace folded, for finding a quote in the trace.
fn folded(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Reads the verdicts from the judge's answer (the verdict tool's arguments); a criterion it did
/// not answer is `unknown`. `Err` (a `judge_error`) when the answer has no readable verdicts.
pub(crate) fn parse_verdicts(
    completion: &Completion,
    rubric: &Rubric,
    trace: &str,
) -> Result<Vec<Judged>, UnreadableVerdicts> {
    let call = completion.tool_calls.iter().find(|call| call.name == VERDICT_TOOL).ok_or(UnreadableVerdicts::NoCall)?;
    let verdicts = call.arguments.get("verdicts").and_then(Value::as_array).ok_or(UnreadableVerdicts::NotAList)?;
    let trace = folded(trace);
    Ok(rubric
        .criteria
        .iter()
        .map(|criterion| {
            let given = verdicts.iter().find(|verdict| verdict["criterion_id"].as_str() == Some(criterion.id.as_str()));
            let text = |key: &str| given.and_then(|verdict| verdict[key].as_str()).unwrap_or_default().to_owned();
            let (evidence, reason) = (text("evidence"), text("reason"));
            let stated = match given.and_then(|verdict| verdict["verdict"].as_str()) {
                Some("pass") => CriterionVerdict::Pass,
                Some("fail") => CriterionVerdict::Fail,
                _ => CriterionVerdict::Unknown,
            };
            let quoted = !evidence.trim().is_empty() && trace.contains(&folded(&evidence));
            let downgraded = stated == CriterionVerdict::Pass && !quoted;
            Judged {
                id: criterion.id.clone(),
                verdict: if downgraded { CriterionVerdict::Unknown } else { stated },
                evidence,
                reason,
                downgraded,
            }
        })
        .collect())
}

/// Why a judge's answer holds no readable verdicts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum UnreadableVerdicts {
    /// The verdict tool was not called.
    #[error("the judge did not call the verdict tool")]
    NoCall,
    /// Its `verdicts` are not a list.
    #[error("the judge's verdicts are not a list")]
    NotAList,
}

/// Why a trial does not pass its rubric (the first reason).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum RubricMiss {
    /// A `must` criterion failed: its id and text.
    #[error("must `{0}` failed: {1}")]
    MustFailed(String, String),
    /// A `must` criterion the trace does not show: its id and text.
    #[error("must `{0}` could not be shown from the trace: {1}")]
    MustUnshown(String, String),
    /// Too few `should` criteria passed: how many did, how many are needed.
    #[error("{0} should-criteria passed, {1} needed")]
    TooFewShould(usize, usize),
}

/// The majority verdict of each criterion over several samples (`judge-samples`); a tie is
/// `unknown`.
pub(crate) fn majority(samples: &[Vec<Judged>]) -> Vec<Judged> {
    let Some(first) = samples.first() else { return Vec::new() };
    first
        .iter()
        .map(|criterion| {
            let votes: Vec<&Judged> =
                samples.iter().filter_map(|sample| sample.iter().find(|judged| judged.id == criterion.id)).collect();
            let count = |verdict: CriterionVerdict| votes.iter().filter(|judged| judged.verdict == verdict).count();
            let (pass, fail, unknown) =
                (count(CriterionVerdict::Pass), count(CriterionVerdict::Fail), count(CriterionVerdict::Unknown));
            let verdict = if pass > fail && pass > unknown {
                CriterionVerdict::Pass
            } else if fail > pass && fail > unknown {
                CriterionVerdict::Fail
            } else {
                CriterionVerdict::Unknown
            };
            let example = votes.iter().find(|judged| judged.verdict == verdict).copied().unwrap_or(criterion);
            Judged { verdict, ..example.clone() }
        })
        .collect()
}

/// Whether a trial passes the rubric: every `must` passes and at least `min_should` `should`
/// criteria pass; `Err` with the first reason when it does not.
pub(crate) fn trial_passes(rubric: &Rubric, judged: &[Judged]) -> Result<(), RubricMiss> {
    let verdict = |id: &str| {
        judged.iter().find(|judged| judged.id == id).map_or(CriterionVerdict::Unknown, |judged| judged.verdict)
    };
    for criterion in rubric.criteria.iter().filter(|criterion| criterion.must) {
        match verdict(&criterion.id) {
            CriterionVerdict::Pass => {}
            CriterionVerdict::Fail => return Err(RubricMiss::MustFailed(criterion.id.clone(), criterion.text.clone())),
            CriterionVerdict::Unknown => {
                return Err(RubricMiss::MustUnshown(criterion.id.clone(), criterion.text.clone()));
            }
        }
    }
    let should_passed = rubric
        .criteria
        .iter()
        .filter(|criterion| !criterion.must && verdict(&criterion.id) == CriterionVerdict::Pass)
        .count();
    if should_passed < rubric.min_should {
        return Err(RubricMiss::TooFewShould(should_passed, rubric.min_should));
    }
    Ok(())
}

/// The Rogan–Gladen correction of an observed judge pass rate for a judge with true-positive
/// rate `tpr` and true-negative rate `tnr`: `(observed + tnr − 1) / (tpr + tnr − 1)`, clipped to
/// [0, 1]; `None` when the judge is no better than chance (`tpr + tnr ≤ 1`).
pub(crate) fn rogan_gladen(observed: f64, tpr: f64, tnr: f64) -> Option<f64> {
    let informedness = tpr + tnr - 1.0;
    (informedness > 0.0).then(|| ((observed + tnr - 1.0) / informedness).clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::golden::case::RubricCriterion;
    use crate::providers::{FinishReason, ToolCall};

    fn rubric() -> Rubric {
        Rubric::from_resolved(&json!({
            "criteria": [
                {"id": "value", "text": "Gives the temperature", "must": true},
                {"id": "unit", "text": "Names the unit", "must": false},
                {"id": "short", "text": "Is short", "must": false}
            ],
            "min_should": 1
        }))
        .expect("a rubric")
    }

    fn answer(verdicts: Value) -> Completion {
        Completion {
            text: None,
            tool_calls: vec![ToolCall::new("j", VERDICT_TOOL, json!({"verdicts": verdicts}))],
            finish: FinishReason::ToolCalls,
            usage: None,
            reported_model: None,
            system_fingerprint: None,
        }
    }

    const TRACE: &str = "call test_structured {\"unit\":\"celsius\"}\nresult: {\"temperature\": 21, \"unit\": \"celsius\"}\nanswer: It is 21 degrees   celsius.";

    #[test]
    fn a_rubric_file_becomes_criteria_with_their_kinds() {
        let rubric = Rubric::from_resolved(&json!({"file_text": "# Short answer\n- [must] Answers in one sentence\n- [should] Names the tool\nnotes\n", "min_should": 0}))
            .expect("a rubric");
        assert_eq!(
            rubric.criteria,
            vec![
                RubricCriterion { id: "c1".into(), text: "Answers in one sentence".into(), must: true },
                RubricCriterion { id: "c2".into(), text: "Names the tool".into(), must: false },
            ]
        );
    }

    #[test]
    fn a_pass_needs_a_quote_from_the_trace_and_missing_criteria_are_unknown() {
        let judged = parse_verdicts(
            &answer(json!([
                {"criterion_id": "value", "verdict": "pass", "evidence": "It is 21 degrees celsius.", "reason": "stated"},
                {"criterion_id": "unit", "verdict": "pass", "evidence": "It is 22 degrees", "reason": "invented"}
            ])),
            &rubric(),
            TRACE,
        )
        .expect("readable");
        assert_eq!(judged[0].verdict, CriterionVerdict::Pass, "whitespace-folded quote found");
        assert_eq!(
            (judged[1].verdict, judged[1].downgraded),
            (CriterionVerdict::Unknown, true),
            "quote not in the trace"
        );
        assert_eq!(judged[2].verdict, CriterionVerdict::Unknown, "not answered");
        assert_eq!(
            trial_passes(&rubric(), &judged).map_err(|miss| miss.to_string()),
            Err("0 should-criteria passed, 1 needed".into())
        );
    }

    #[test]
    fn a_judge_that_does_not_call_its_tool_is_a_judge_error() {
        let text = Completion {
            text: Some("pass".into()),
            tool_calls: Vec::new(),
            finish: FinishReason::Stop,
            usage: None,
            reported_model: None,
            system_fingerprint: None,
        };
        assert!(parse_verdicts(&text, &rubric(), TRACE).is_err());
        assert!(parse_verdicts(&answer(json!("not a list")), &rubric(), TRACE).is_err());
    }

    #[test]
    fn the_trial_passes_when_every_must_and_enough_shoulds_pass() {
        let verdict = |id: &str, verdict| Judged {
            id: id.into(),
            verdict,
            evidence: String::new(),
            reason: String::new(),
            downgraded: false,
        };
        let good = vec![
            verdict("value", CriterionVerdict::Pass),
            verdict("unit", CriterionVerdict::Pass),
            verdict("short", CriterionVerdict::Fail),
        ];
        assert_eq!(trial_passes(&rubric(), &good), Ok(()));
        let must_failed = vec![verdict("value", CriterionVerdict::Fail), verdict("unit", CriterionVerdict::Pass)];
        assert!(
            trial_passes(&rubric(), &must_failed)
                .is_err_and(|reason| reason.to_string().starts_with("must `value` failed"))
        );
    }

    #[test]
    fn the_majority_of_samples_decides_and_a_tie_is_unknown() {
        let sample = |value: CriterionVerdict, unit: CriterionVerdict| {
            vec![
                Judged {
                    id: "value".into(),
                    verdict: value,
                    evidence: "q".into(),
                    reason: String::new(),
                    downgraded: false,
                },
                Judged {
                    id: "unit".into(),
                    verdict: unit,
                    evidence: "q".into(),
                    reason: String::new(),
                    downgraded: false,
                },
            ]
        };
        use CriterionVerdict::{Fail, Pass, Unknown};
        let voted = majority(&[sample(Pass, Pass), sample(Pass, Fail), sample(Fail, Unknown)]);
        assert_eq!((voted[0].verdict, voted[1].verdict), (Pass, Unknown));
    }

    #[test]
    fn the_rubric_hash_changes_with_any_criterion_and_with_min_should_only() {
        let rubric = Rubric {
            criteria: vec![RubricCriterion { id: "a".into(), text: "Is it right?".into(), must: true }],
            min_should: 0,
        };
        let hash = rubric.sha256();
        assert_eq!(hash, rubric.clone().sha256(), "stable");
        let mut other = rubric.clone();
        other.criteria[0].must = false;
        assert_ne!(other.sha256(), hash);
        let mut other = rubric.clone();
        other.criteria[0].text.push('!');
        assert_ne!(other.sha256(), hash);
        let mut other = rubric.clone();
        other.min_should = 1;
        assert_ne!(other.sha256(), hash);
    }

    #[test]
    fn rogan_gladen_matches_values_computed_by_hand() {
        // TPR 0.9, TNR 0.8, observed 0.7: (0.7 + 0.8 − 1) / (0.9 + 0.8 − 1) = 0.5 / 0.7.
        let corrected = rogan_gladen(0.7, 0.9, 0.8).expect("informative");
        assert!((corrected - 0.5 / 0.7).abs() < 1e-12, "{corrected}");
        assert_eq!(rogan_gladen(0.05, 0.9, 0.8), Some(0.0), "clipped at 0");
        assert_eq!(rogan_gladen(0.99, 0.9, 0.95), Some(1.0), "clipped at 1");
        assert_eq!(rogan_gladen(0.5, 0.5, 0.5), None, "a judge no better than chance corrects nothing");
    }

    #[test]
    fn the_request_forces_the_verdict_tool_and_carries_task_rubric_and_trace() {
        let request = judge_request("What is the temperature?", &rubric(), TRACE);
        assert_eq!(request.tool_choice, ToolChoice::Named(VERDICT_TOOL.into()));
        assert_eq!(request.tools[0].name, VERDICT_TOOL);
        let Message::User(text) = &request.messages[0] else { panic!("a user message") };
        assert!(
            text.contains("What is the temperature?")
                && text.contains("- value [must]: Gives the temperature")
                && text.contains("21 degrees")
        );
        assert_eq!(request.sampling.temperature, Some(0.0));
    }
}
