//! What a run reports while it runs: a typed [`RunEvent`] stream that every front end consumes
//! (the CLI prints lines to stderr, the Action to its log), instead of prose strings built deep
//! in the layers; and [`EventLog`], the same stream as JSON lines (`--events FILE`), each event
//! stamped with the time it happened ([`Event`]). The file's format is `docs/events-format.md`.
//!
//! Layer 1's agent loop reports each trial's model calls and tool calls here ([`TrialRef`]
//! names the trial): their latency, attempts, token usage as reported (`null` when not) and
//! outcome — never a tool result or model text. Layers 2 and 3 consume the same stream.

use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use serde_json::{Value, json};

use crate::mcp::evidence::Redactor;
use crate::mcp::sync::lock;
use crate::report::model::{Counts, Status};
use crate::verdict::FailOn;
use crate::verdict::{Decision, ExitStatus};

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
        /// Trials passed.
        passed: usize,
        /// Trials asked for (`runs`).
        runs: usize,
        /// The verdict was reused from the verdict cache, not measured by this run.
        cached: bool,
        /// The model's answers were replayed from cassettes: no model was called.
        replayed: bool,
    },
    /// A trial (one repetition of a case on a model) started.
    TrialStarted {
        /// Which.
        trial: TrialRef,
        /// Its W3C trace id (32 hex digits) when layer 3 traces it.
        trace_id: Option<String>,
    },
    /// A trial ended (before it was graded).
    TrialFinished {
        /// Which.
        trial: TrialRef,
        /// How it ended (`TrialEnding::as_str`: `answer`, `max_turns`, `timeout`, …).
        ending: &'static str,
        /// Model turns taken.
        turns: usize,
        /// Wall time in milliseconds.
        duration_ms: u64,
    },
    /// A model call of a trial ended: the model under test's, or the rubric judge's.
    ModelCallFinished {
        /// The trial.
        trial: TrialRef,
        /// Who was asked: `model` (the model under test) or `judge` (the rubric judge).
        role: &'static str,
        /// 0-based model turn (the judge: its sample).
        turn: usize,
        /// `answer`, `provider_error`, `replay_miss`, `call_cap` or `timeout`.
        outcome: &'static str,
        /// HTTP attempts (retries included; a replayed answer counts 1; 0 when not made).
        attempts: u32,
        /// Wall time in milliseconds, retries included (`None` when it gave no reply).
        latency_ms: Option<u64>,
        /// `PROVIDER:MODEL` asked (the model under test, or the judge's model).
        model: String,
        /// The token counts as the provider reported them, normalised
        /// ([`crate::report::telemetry::Usage`]: `None` where it did not report one; all `None` without
        /// a reply).
        usage: crate::report::telemetry::Usage,
        /// The tools the reply called, in order (the MCP name, or the name the model used for a
        /// tool not offered); empty for an answer or no reply.
        tools: Vec<String>,
        /// Answered from a cassette: no model was called, the usage is the recorded one and
        /// `latency_ms` the lookup's.
        replayed: bool,
    },
    /// A tool call of a trial is about to be sent to the server.
    ToolCallStarted {
        /// The trial.
        trial: TrialRef,
        /// 1-based model turn that made it.
        turn: usize,
        /// The MCP tool name.
        tool: String,
    },
    /// A tool call of a trial ended (sent or not).
    ToolCallFinished {
        /// The trial.
        trial: TrialRef,
        /// 1-based model turn that made it.
        turn: usize,
        /// The tool name (the MCP name, or the name the model used for a tool not offered).
        tool: String,
        /// `result`, `error_result` (`isError: true`), `jsonrpc_error`, `stopped` (input
        /// requests that could not be answered), `failed` (no answer), `timeout` (the trial's
        /// time ran out) or `not_sent` (refused before sending).
        outcome: &'static str,
        /// Whether it reached the server.
        sent: bool,
        /// Whether a layer injected its outcome instead of the server (layer 2; `false` today).
        injected: bool,
        /// Wall time of the `tools/call` in milliseconds (0 when not sent).
        latency_ms: u64,
        /// Bytes of the result text the server's answer made (`None` when there was none).
        server_bytes: Option<usize>,
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
    /// Replaying, a request had no recording (exit status 5). Sent once per evaluation, for the
    /// first trial that missed, so that the fix (record again) is on stderr and not only in the reports; front
    /// ends show it even when quiet.
    ReplayMiss {
        /// `PROVIDER:MODEL` of the first trial that missed.
        model: String,
        /// Its case id.
        case: String,
        /// Its trial number (from 1).
        run: usize,
        /// The miss's message, with what changed and the hint (`record it with --record`).
        reason: String,
        /// Trials that missed a recording, over every case × model.
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
    /// The run is over and its verdict decided.
    Finished {
        /// Counts of checks by status.
        counts: Counts,
        /// When findings fail the run (`--fail-on`).
        fail_on: FailOn,
        /// Ids of the failed checks, in report order.
        failing: Vec<String>,
        /// The verdict, `result` and exit status.
        decision: Decision,
        /// The report directory, when the reports were written.
        out_dir: Option<String>,
        /// Layer 1's cases × models by status (pass, fail, error, skipped), when it ran.
        cases: Option<[usize; 4]>,
        /// Layer 2's variants × models by status (pass, fail, inconclusive), faults and payloads
        /// together, when it ran.
        variants: Option<[usize; 3]>,
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
            RunEvent::LayerStarted { .. }
            | RunEvent::CheckGraded { .. }
            | RunEvent::TrialStarted { .. }
            | RunEvent::TrialFinished { .. }
            | RunEvent::ModelCallFinished { .. }
            | RunEvent::ToolCallStarted { .. }
            | RunEvent::ToolCallFinished { .. } => None,
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
            RunEvent::CaseGraded { case, model, status, passed, runs, cached, replayed } => Some(format!(
                "layer 1: {case} on {model}{}: {} ({passed}/{runs}{})",
                if *replayed { " (replayed)" } else { "" },
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
                    n => format!(" ({} more trial(s) missed too: see report.json)", n - 1),
                };
                Some(format!("layer 1: replay miss on {model}, case `{case}` trial {run}: {reason}{others}"))
            }
            RunEvent::Notice { text } | RunEvent::InputError { text } | RunEvent::Failure { text } => {
                Some(text.clone())
            }
            RunEvent::EndedEarly { detail, .. } => Some(detail.clone()),
            RunEvent::Finished { counts, fail_on, failing, decision, out_dir, cases, variants } => {
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
                // A run that failed on layers 1 or 2 alone says which before its layer-0 counts.
                let layer1 = cases.is_some_and(|[_, failed, ..]| failed > 0);
                let layer2 = variants.is_some_and(|[_, failed, _]| failed > 0);
                let which = match (layer1, layer2) {
                    _ if counts.fail > 0 || decision.verdict.as_str() != "fail" => "",
                    (true, true) => " (layers 1 and 2)",
                    (true, false) => " (layer 1)",
                    (false, true) => " (layer 2)",
                    (false, false) => "",
                };
                let mut cases = cases.map_or_else(String::new, |[pass, fail, error, skipped]| {
                    format!("; cases: {pass} pass, {fail} fail, {error} error, {skipped} skipped")
                });
                if let Some([pass, fail, inconclusive]) = variants {
                    cases.push_str(&format!("; layer 2: {pass} pass, {fail} fail, {inconclusive} inconclusive"));
                }
                Some(format!(
                    "{}{which}: checks: {} pass, {} fail{failed}, {} warn, {} not applicable, {} error{}{cases}{gate}{}",
                    decision.verdict.as_str(),
                    counts.pass,
                    counts.fail,
                    counts.warn,
                    counts.not_applicable,
                    counts.error,
                    if counts.waived > 0 { format!(", {} waived", counts.waived) } else { String::new() },
                    out_dir.as_deref().map(|dir| format!("; reports in {dir}")).unwrap_or_default()
                ))
            }
        }
    }
}

/// Which trial an event belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TrialRef {
    /// The case id.
    pub case: String,
    /// `PROVIDER:MODEL`.
    pub model: String,
    /// 1-based trial number.
    pub trial: usize,
}

impl TrialRef {
    fn json(&self) -> Value {
        json!({"case": self.case, "model": self.model, "trial": self.trial})
    }
}

/// The version of the `--events` file's format (`docs/events-format.md`): raised when a field
/// changes meaning or goes; new kinds and new fields do not raise it.
pub(crate) const EVENTS_FORMAT: u32 = 1;

/// One event as the events file holds it: when it happened, and what.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Event<'a> {
    /// When, UTC.
    pub at: chrono::DateTime<chrono::Utc>,
    /// Milliseconds since the evaluation started.
    pub elapsed_ms: u64,
    /// What.
    pub kind: &'a RunEvent,
}

impl Event<'_> {
    /// The line as a JSON object: `{"v", "at", "elapsed_ms", "kind", …fields}`.
    fn to_value(&self) -> Value {
        let (kind, fields) = self.kind.fields();
        let mut line = serde_json::Map::new();
        line.insert("v".into(), json!(EVENTS_FORMAT));
        line.insert("at".into(), json!(self.at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)));
        line.insert("elapsed_ms".into(), json!(self.elapsed_ms));
        line.insert("kind".into(), json!(kind));
        if let Value::Object(fields) = fields {
            line.extend(fields);
        }
        Value::Object(line)
    }
}

/// `value` with every secret removed from its strings (object keys are ours): redacting the
/// values, never the serialized line, keeps numbers, `true` and the JSON's quoting intact
/// whatever a secret's text, and finds a secret that JSON would have escaped.
fn redact_strings(value: &mut Value, redactor: &Redactor) {
    match value {
        Value::String(text) => *text = redactor.redact(text),
        Value::Array(items) => items.iter_mut().for_each(|item| redact_strings(item, redactor)),
        Value::Object(fields) => fields.values_mut().for_each(|field| redact_strings(field, redactor)),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

impl RunEvent {
    /// The event's kind in the events file and its fields (an object).
    pub(crate) fn fields(&self) -> (&'static str, Value) {
        match self {
            RunEvent::Connecting { target, transport } => {
                ("connecting", json!({"target": target, "transport": transport}))
            }
            RunEvent::LayerStarted { layer } => ("layer_started", json!({"layer": layer})),
            RunEvent::EraDetected { era, evidence } => ("era_detected", json!({"era": era, "evidence": evidence})),
            RunEvent::ServerListed(listed) => ("server_listed", json!(listed)),
            RunEvent::ProbesStarted => ("probes_started", json!({})),
            RunEvent::ProbesRunning { running, done, total, elapsed_ms } => (
                "probes_running",
                json!({"running": running, "done": done, "total": total, "probes_elapsed_ms": elapsed_ms}),
            ),
            RunEvent::ProbesFinished { duration_ms } => ("probes_finished", json!({"duration_ms": duration_ms})),
            RunEvent::CheckGraded { id, status } => ("check_graded", json!({"id": id, "status": status})),
            RunEvent::CaseGraded { case, model, status, passed, runs, cached, replayed } => (
                "case_graded",
                json!({"case": case, "model": model, "status": status, "passed": passed, "trials": runs, "cached": cached,
                       "replayed": replayed}),
            ),
            RunEvent::TrialStarted { trial, trace_id } => {
                ("trial_started", json!({"trial": trial.json(), "trace_id": trace_id}))
            }
            RunEvent::TrialFinished { trial, ending, turns, duration_ms } => (
                "trial_finished",
                json!({"trial": trial.json(), "ending": ending, "turns": turns, "duration_ms": duration_ms}),
            ),
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
            } => (
                "model_call_finished",
                json!({"trial": trial.json(), "role": role, "turn": turn, "outcome": outcome, "attempts": attempts,
                       "latency_ms": latency_ms, "model": model, "input_tokens": usage.input_tokens,
                       "output_tokens": usage.output_tokens, "cache_read_tokens": usage.cache_read_tokens,
                       "cache_write_tokens": usage.cache_write_tokens, "reasoning_tokens": usage.reasoning_tokens,
                       "reported_cost_usd": usage.reported_cost_usd, "tools": tools, "replayed": replayed}),
            ),
            RunEvent::ToolCallStarted { trial, turn, tool } => {
                ("tool_call_started", json!({"trial": trial.json(), "turn": turn, "tool": tool}))
            }
            RunEvent::ToolCallFinished { trial, turn, tool, outcome, sent, injected, latency_ms, server_bytes } => (
                "tool_call_finished",
                json!({"trial": trial.json(), "turn": turn, "tool": tool, "outcome": outcome, "sent": sent,
                       "injected": injected, "latency_ms": latency_ms, "server_bytes": server_bytes}),
            ),
            RunEvent::LayerFinished { layer, duration_ms } => {
                ("layer_finished", json!({"layer": layer, "duration_ms": duration_ms}))
            }
            RunEvent::LayersUnavailable { layers } => ("layers_unavailable", json!({"layers": layers})),
            RunEvent::InputError { text } => ("input_error", json!({"text": text})),
            RunEvent::ProviderUnusable { model, detail } => {
                ("provider_unusable", json!({"model": model, "detail": detail}))
            }
            RunEvent::ReplayMiss { model, case, run, reason, count } => {
                ("replay_miss", json!({"model": model, "case": case, "trial": run, "reason": reason, "count": count}))
            }
            RunEvent::Failure { text } => ("failure", json!({"text": text})),
            RunEvent::Notice { text } => ("notice", json!({"text": text})),
            RunEvent::EndedEarly { interrupted, detail, stderr_tail } => {
                ("ended_early", json!({"interrupted": interrupted, "detail": detail, "stderr_tail": stderr_tail}))
            }
            RunEvent::Finished { counts, fail_on, failing, decision, out_dir, cases, variants } => (
                "finished",
                json!({"counts": counts, "fail_on": fail_on.as_str(), "failing": failing,
                       "verdict": decision.verdict.as_str(), "result": decision.result.as_str(),
                       "exit_status": decision.exit.code(), "out_dir": out_dir,
                       "cases": cases.map(|[pass, fail, error, skipped]| json!({"pass": pass, "fail": fail, "error": error, "skipped": skipped})),
                       "variants": variants.map(|[pass, fail, inconclusive]| json!({"pass": pass, "fail": fail, "inconclusive": inconclusive}))}),
            ),
        }
    }
}

/// The `--events FILE` stream: every event as one JSON line, stamped as it is written, redacted,
/// flushed per line (a reader tailing the file sees each event as it happens). The last line is
/// `{"kind": "closed", …}` on every path: after `finished`, or from [`Drop`] when the evaluation
/// was cut short before it (`"complete": false`). A write that fails stops the log and is kept
/// for [`EventLog::failure`]; the run goes on.
pub(crate) struct EventLog {
    out: Mutex<Option<Box<dyn Write + Send>>>,
    failure: Mutex<Option<String>>,
    started: Instant,
    redactor: Redactor,
}

impl EventLog {
    /// Creates (or truncates) `path`, its parent directories too.
    ///
    /// # Errors
    /// The file cannot be created.
    pub(crate) fn create(path: &Path, redactor: Redactor, started: Instant) -> std::io::Result<Self> {
        if let Some(parent) = path.parent().filter(|parent| !parent.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        let file = std::fs::File::create(path)?;
        Ok(Self::to_writer(Box::new(std::io::BufWriter::new(file)), redactor, started))
    }

    /// A log written to `out` (each line flushed).
    fn to_writer(out: Box<dyn Write + Send>, redactor: Redactor, started: Instant) -> Self {
        Self { out: Mutex::new(Some(out)), failure: Mutex::new(None), started, redactor }
    }

    fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn write_line(&self, line: &str) {
        let mut out = lock(&self.out);
        let Some(writer) = out.as_mut() else { return };
        let written =
            writer.write_all(line.as_bytes()).and_then(|()| writer.write_all(b"\n")).and_then(|()| writer.flush());
        if let Err(error) = written {
            *lock(&self.failure) = Some(crate::text::io_reason(&error));
            *out = None;
        }
    }

    /// Writes `event`, stamped now; after [`RunEvent::Finished`], the closing line too.
    pub(crate) fn record(&self, event: &RunEvent) {
        let stamped = Event { at: chrono::Utc::now(), elapsed_ms: self.elapsed_ms(), kind: event };
        let mut line = stamped.to_value();
        redact_strings(&mut line, &self.redactor);
        self.write_line(&line.to_string());
        if let RunEvent::Finished { decision, .. } = event {
            self.close(true, Some(decision.exit));
        }
    }

    fn close(&self, complete: bool, exit: Option<ExitStatus>) {
        if lock(&self.out).is_none() {
            return;
        }
        let line = json!({"v": EVENTS_FORMAT, "at": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                          "elapsed_ms": self.elapsed_ms(), "kind": "closed", "complete": complete,
                          "exit_status": exit.map(ExitStatus::code)});
        self.write_line(&line.to_string());
        *lock(&self.out) = None;
    }

    /// Why the log stopped writing, when a write failed.
    pub(crate) fn failure(&self) -> Option<String> {
        lock(&self.failure).clone()
    }
}

impl Drop for EventLog {
    fn drop(&mut self) {
        self.close(false, None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes `lines` lines, then fails every write as a full disk does.
    struct FillsUp {
        lines: usize,
        written: std::sync::Arc<Mutex<Vec<u8>>>,
    }

    impl Write for FillsUp {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            if self.lines == 0 {
                return Err(std::io::Error::from(std::io::ErrorKind::StorageFull));
            }
            self.lines -= bytes.iter().filter(|byte| **byte == b'\n').count();
            lock(&self.written).extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn secrets_are_redacted_in_the_values_so_every_line_stays_json() {
        let written = std::sync::Arc::new(Mutex::new(Vec::new()));
        let out = Box::new(FillsUp { lines: 10, written: written.clone() });
        // A server-env value such as `PORT=8080` or `DEBUG=true` is a secret too.
        let secrets = vec!["8080".to_owned(), "true".to_owned(), "s\"cr\\et".to_owned()];
        let log = EventLog::to_writer(out, Redactor::new(secrets), Instant::now());
        log.record(&RunEvent::LayerFinished { layer: 0, duration_ms: 18_080 });
        log.record(&RunEvent::Notice { text: "port 8080, flag true, key s\"cr\\et".into() });
        let text = String::from_utf8(lock(&written).clone()).expect("utf-8");
        let lines: Vec<Value> = text.lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect();
        assert_eq!(lines[0]["duration_ms"], 18_080, "numbers are not secrets' text");
        assert_eq!(lines[1]["text"], "port ***, flag ***, key ***", "{text}");
    }

    #[test]
    fn a_write_that_fails_on_the_finished_line_is_kept_as_the_log_s_failure() {
        let written = std::sync::Arc::new(Mutex::new(Vec::new()));
        let out = Box::new(FillsUp { lines: 1, written: written.clone() });
        let log = EventLog::to_writer(out, Redactor::new(Vec::new()), Instant::now());
        log.record(&RunEvent::LayerStarted { layer: 0 });
        assert_eq!(log.failure(), None);
        log.record(&RunEvent::Finished {
            counts: crate::report::model::Counts::default(),
            fail_on: crate::verdict::FailOn::Must,
            failing: Vec::new(),
            decision: crate::verdict::Decision {
                verdict: crate::report::model::Verdict::Pass,
                result: crate::verdict::RunResult::Pass,
                exit: crate::verdict::ExitStatus::Passed,
            },
            out_dir: None,
            cases: None,
            variants: None,
        });
        assert!(log.failure().is_some(), "the finished line could not be written: the log says so");
        let text = String::from_utf8(lock(&written).clone()).expect("utf-8");
        assert_eq!(text.lines().count(), 1, "{text}");
    }

    #[test]
    fn a_verdict_reused_from_the_cache_is_marked_on_its_line() {
        let graded = |cached| RunEvent::CaseGraded {
            case: "c0".into(),
            model: "openai:demo".into(),
            status: crate::report::evals::EvalStatus::Pass,
            passed: 5,
            runs: 5,
            cached,
            replayed: false,
        };
        assert_eq!(graded(true).line().as_deref(), Some("layer 1: c0 on openai:demo: pass (5/5, cached)"));
        assert_eq!(graded(false).line().as_deref(), Some("layer 1: c0 on openai:demo: pass (5/5)"));
    }

    #[test]
    fn a_case_graded_on_replayed_answers_says_replayed_on_its_line_and_in_its_fields() {
        let graded = RunEvent::CaseGraded {
            case: "c0".into(),
            model: "openai:demo".into(),
            status: crate::report::evals::EvalStatus::Pass,
            passed: 5,
            runs: 5,
            cached: false,
            replayed: true,
        };
        assert_eq!(graded.line().as_deref(), Some("layer 1: c0 on openai:demo (replayed): pass (5/5)"));
        assert_eq!(graded.fields().1["replayed"], true);
    }

    #[test]
    fn a_run_failed_by_layer_1_alone_says_so_before_its_check_counts() {
        use crate::report::model::{Counts, Verdict};
        let finished = |fail: usize, cases: [usize; 4]| RunEvent::Finished {
            counts: Counts { pass: 94, fail, ..Counts::default() },
            fail_on: crate::verdict::FailOn::Must,
            failing: (0..fail).map(|i| format!("T-{i}")).collect(),
            decision: crate::verdict::Decision {
                verdict: Verdict::Fail,
                result: crate::verdict::RunResult::Fail,
                exit: crate::verdict::ExitStatus::VerdictFailed,
            },
            out_dir: None,
            cases: Some(cases),
            variants: None,
        };
        let line = finished(0, [9, 1, 0, 0]).line().expect("a line");
        assert!(line.starts_with("fail (layer 1): checks: 94 pass, 0 fail"), "{line}");
        assert!(line.contains("; cases: 9 pass, 1 fail"), "{line}");
        let both = finished(1, [9, 1, 0, 0]).line().expect("a line");
        assert!(both.starts_with("fail: checks: 94 pass, 1 fail (T-0)"), "{both}");
    }
}
