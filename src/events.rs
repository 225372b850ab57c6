//! What a run reports while it runs: a typed [`RunEvent`] stream that every front end consumes
//! (the CLI prints lines to stderr, the Action to its log, a progress bar later), instead of
//! prose strings built deep in the layers.

use crate::gate::Decision;
use crate::gate::FailOn;
use crate::report::model::{Counts, Status};

/// One thing that happened during a run. Texts in events may hold text from the server under
/// test (already redacted); front ends that interpret their output (the Action's workflow
/// commands) must fence them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RunEvent {
    /// Connecting to the server under test.
    Connecting {
        /// The target, secrets removed.
        target: String,
        /// `http` or `stdio`.
        transport: String,
    },
    /// A layer started.
    LayerStarted {
        /// 0–3.
        layer: u8,
    },
    /// The server's protocol era was decided (layer 0, before any check).
    EraDetected {
        /// `2026-07-28` or `2025-11-25`.
        era: String,
        /// How it was decided, in words.
        evidence: String,
    },
    /// The server's lists were walked (every page): how many items each held.
    ServerListed(crate::report::model::Listed),
    /// The probe families of layer 0 started.
    ProbesStarted,
    /// Layer 0's probes are still running: sent every few seconds while a probe family takes
    /// long (a slow stdio server, a huge list), so that a long wait is never silent.
    ProbesRunning {
        /// The checks of the family in flight (`P-3`, `X-3..X-7`, …), or `every family` when
        /// they run at once.
        running: String,
        /// Families finished so far.
        done: usize,
        /// Families in all.
        total: usize,
        /// Milliseconds since the probes started.
        elapsed_ms: u64,
    },
    /// The probe families of layer 0 finished.
    ProbesFinished {
        /// Wall time of the probes in milliseconds.
        duration_ms: u64,
    },
    /// A check was graded.
    CheckGraded {
        /// The requirement id.
        id: String,
        /// Its status.
        status: Status,
    },
    /// Layer 1 graded a case on a model.
    CaseGraded {
        /// The case id.
        case: String,
        /// `PROVIDER:MODEL`.
        model: String,
        /// Its verdict.
        status: crate::report::evals::EvalStatus,
        /// Runs passed.
        passed: usize,
        /// Runs asked for.
        runs: usize,
        /// The verdict was reused from the verdict cache, not measured by this run.
        cached: bool,
    },
    /// A layer finished.
    LayerFinished {
        /// The layer.
        layer: u8,
        /// Wall time in milliseconds.
        duration_ms: u64,
    },
    /// Layers that were asked for but this version cannot run (not a failure).
    LayersUnavailable {
        /// The layers.
        layers: Vec<u8>,
    },
    /// Input a layer refused (a golden set naming tools the server does not list): exit status 2.
    InputError {
        /// The error, rendered (`error: …` with its hint).
        text: String,
    },
    /// A model's provider cannot be used (exit status 5): said even with `--quiet`, so that the
    /// exit status never goes unexplained.
    ProviderUnusable {
        /// `PROVIDER:MODEL`.
        model: String,
        /// Why, with the fix.
        detail: String,
    },
    /// Replaying, a request had no recording (exit status 5). Sent once per run, for the first
    /// such run, so that the fix (record again) is on stderr and not only in the reports; front
    /// ends show it even when quiet.
    ReplayMiss {
        /// `PROVIDER:MODEL` of the first run that missed.
        model: String,
        /// Its case id.
        case: String,
        /// Its run number (from 1).
        run: usize,
        /// The miss's message, with what changed and the hint (`record it with --record`).
        reason: String,
        /// Runs that missed a recording, over every case × model.
        count: usize,
    },
    /// Something failed on our side that does not stop the run (cassettes not written): exit
    /// status 4. Front ends show it even when quiet.
    Failure {
        /// The error, rendered (`error: …`).
        text: String,
    },
    /// Something the user should know that does not stop the run.
    Notice {
        /// The text.
        text: String,
    },
    /// The run ended early: unreachable server or a signal.
    EndedEarly {
        /// True when a signal ended it (progress, not an error: the user asked for it).
        interrupted: bool,
        /// Why, in a sentence.
        detail: String,
        /// The last lines of a stdio server's stderr, when any.
        stderr_tail: Option<String>,
    },
    /// The run is over and the gate decided.
    Finished {
        /// Counts of checks by status.
        counts: Counts,
        /// The gate's policy.
        fail_on: FailOn,
        /// Ids of the failed checks, in report order.
        failing: Vec<String>,
        /// The gate's decision.
        decision: Decision,
        /// The report directory, when the reports were written.
        out_dir: Option<String>,
        /// Layer 1's cases × models by status (pass, fail, error, skipped), when it ran.
        cases: Option<[usize; 4]>,
    },
}

impl RunEvent {
    /// The event as one log line (no prefix), or `None` for events too fine for a log.
    pub(crate) fn line(&self) -> Option<String> {
        match self {
            RunEvent::Connecting { target, transport } => {
                // `http` names the transport (Streamable HTTP), not the URL's scheme.
                let transport = if transport == "http" { "Streamable HTTP" } else { transport.as_str() };
                Some(format!("connecting to {target} ({transport})"))
            }
            RunEvent::LayerStarted { .. } | RunEvent::CheckGraded { .. } => None,
            RunEvent::EraDetected { era, evidence } => Some(format!("era: {era} ({evidence})")),
            RunEvent::ServerListed(listed) => {
                let count = |n: usize, noun: &str| format!("{n} {noun}{}", if n == 1 { "" } else { "s" });
                Some(format!(
                    "lists: {}, {}, {}, {}",
                    count(listed.tools, "tool"),
                    count(listed.prompts, "prompt"),
                    count(listed.resources, "resource"),
                    count(listed.resource_templates, "template")
                ))
            }
            RunEvent::ProbesStarted => Some("probes: running".into()),
            RunEvent::ProbesRunning { running, done, total, elapsed_ms } => Some(format!(
                "probes: {done} of {total} families done, {:.0} s in; waiting on {running}",
                *elapsed_ms as f64 / 1000.0
            )),
            RunEvent::ProbesFinished { duration_ms } => Some(format!("probes: done in {duration_ms} ms")),
            RunEvent::CaseGraded { case, model, status, passed, runs, cached } => Some(format!(
                "layer 1: {case} on {model}: {} ({passed}/{runs}{})",
                status.as_str(),
                if *cached { ", cached" } else { "" }
            )),
            RunEvent::LayerFinished { layer, duration_ms } => Some(format!("layer {layer}: done in {duration_ms} ms")),
            RunEvent::LayersUnavailable { layers } => Some(format!(
                "layer(s) {} were requested but are not available in this version",
                layers.iter().map(u8::to_string).collect::<Vec<_>>().join(",")
            )),
            RunEvent::ProviderUnusable { model, detail } => Some(format!("layer 1: {model} cannot be used: {detail}")),
            RunEvent::ReplayMiss { model, case, run, reason, count } => {
                let others = match count {
                    0 | 1 => String::new(),
                    n => format!(" ({} more run(s) missed too: see report.json)", n - 1),
                };
                Some(format!("layer 1: replay miss on {model}, case `{case}` run {run}: {reason}{others}"))
            }
            RunEvent::Notice { text } | RunEvent::InputError { text } | RunEvent::Failure { text } => {
                Some(text.clone())
            }
            RunEvent::EndedEarly { detail, .. } => Some(detail.clone()),
            RunEvent::Finished { counts, fail_on, failing, decision, out_dir, cases } => {
                let gate = if decision.result.as_str() == decision.verdict.as_str() {
                    String::new()
                } else {
                    format!("; with --fail-on {} the run is a {}", fail_on.as_str(), decision.result.as_str())
                };
                let failed = match failing.len() {
                    0 => String::new(),
                    n if n <= 10 => format!(" ({})", failing.join(", ")),
                    n => format!(" ({}, and {} more)", failing[..10].join(", "), n - 10),
                };
                // A run that failed on layer 1 alone says so before its layer-0 counts ("0 fail").
                let which = match cases {
                    _ if counts.fail > 0 || decision.verdict.as_str() != "fail" => "",
                    Some([_, failed_cases, ..]) if *failed_cases > 0 => " (layer 1)",
                    _ => "",
                };
                let cases = cases.map_or_else(String::new, |[pass, fail, error, skipped]| {
                    format!("; cases: {pass} pass, {fail} fail, {error} error, {skipped} skipped")
                });
                Some(format!(
                    "{}{which}: checks: {} pass, {} fail{failed}, {} warn, {} not applicable, {} error{cases}{gate}{}",
                    decision.verdict.as_str(),
                    counts.pass,
                    counts.fail,
                    counts.warn,
                    counts.not_applicable,
                    counts.error,
                    out_dir.as_deref().map(|dir| format!("; reports in {dir}")).unwrap_or_default()
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_reused_from_the_cache_is_marked_on_its_line() {
        let graded = |cached| RunEvent::CaseGraded {
            case: "c0".into(),
            model: "openai:demo".into(),
            status: crate::report::evals::EvalStatus::Pass,
            passed: 5,
            runs: 5,
            cached,
        };
        assert_eq!(graded(true).line().as_deref(), Some("layer 1: c0 on openai:demo: pass (5/5, cached)"));
        assert_eq!(graded(false).line().as_deref(), Some("layer 1: c0 on openai:demo: pass (5/5)"));
    }

    #[test]
    fn a_run_failed_by_layer_1_alone_says_so_before_its_check_counts() {
        use crate::report::model::{Counts, Verdict};
        let finished = |fail: usize, cases: [usize; 4]| RunEvent::Finished {
            counts: Counts { pass: 94, fail, ..Counts::default() },
            fail_on: crate::gate::FailOn::Must,
            failing: (0..fail).map(|i| format!("T-{i}")).collect(),
            decision: crate::gate::Decision {
                verdict: Verdict::Fail,
                result: crate::gate::RunResult::Fail,
                exit: crate::gate::ExitStatus::VerdictFailed,
            },
            out_dir: None,
            cases: Some(cases),
        };
        let line = finished(0, [9, 1, 0, 0]).line().expect("a line");
        assert!(line.starts_with("fail (layer 1): checks: 94 pass, 0 fail"), "{line}");
        assert!(line.contains("; cases: 9 pass, 1 fail"), "{line}");
        let both = finished(1, [9, 1, 0, 0]).line().expect("a line");
        assert!(both.starts_with("fail: checks: 94 pass, 1 fail (T-0)"), "{both}");
    }
}
