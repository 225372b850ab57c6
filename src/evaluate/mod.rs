//! One evaluation from start to finish, shared by every front end: a short driver over the
//! layers. It starts the demo server when asked, connects to the server under test (the session
//! is owned here and lent to each layer in turn), runs the layers that plan to run through their
//! one face ([`layer::Layer`]: plan, run into the event sink, give the partial section on a
//! signal or a panic), catches signals and panics, hands the sections to a pure assembly of the
//! [`RunReport`] ([`assemble`]), and writes `report.json`, `junit.xml` and `summary.md` on every
//! path (pass, fail, unreachable server, server crash, timeout, SIGINT/SIGTERM), letting
//! [`crate::verdict`] decide the verdict and the exit status ([`finish`]).
//!
//! Progress is a [`RunEvent`] stream ([`crate::events`]); signals are in [`signals`]. What is read
//! before connecting is in [`inputs`]; the Action's keyless run in [`keyless`]. The demo's set,
//! models and cassettes are the settings' own ([`crate::settings::demo`]).

mod assemble;
mod finish;
mod inputs;
mod keyless;
mod layer;
mod layer0;
mod layer1;
mod layer2;
mod layer3;
mod limits;
pub(crate) mod signals;
mod target;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use chrono::Utc;
use futures_util::FutureExt as _;

use crate::error::UserError;
pub(crate) use crate::events::RunEvent;
use crate::golden::GoldenSet;
use crate::mcp::era::{self, Target};
use crate::mcp::evidence::{Learnt, Redactor};
use crate::mcp::sync::lock;
use crate::report::WrittenFiles;
use crate::report::model::{Evidence, RunOutcome, RunReport, ServerSection};
use crate::settings::{Server, Settings};
use crate::telemetry::budget::CostLimit;
use crate::telemetry::prices::PriceTable;
use crate::verdict::{Decision, Interrupt};

pub(crate) use inputs::{layer2_budget, layers_outside_the_action, load_golden, load_prices};
pub(crate) use target::connectable_target;

use assemble::{Clock, Completed};
use finish::Ending;
use layer::{Context, LayerPlan, Parts, SESSION_LAYERS, Sections, Sink};
use layer3::Layer3;
use limits::Limits;

/// A failpoint for the tests: when this variable is set, the run panics, so the tests can show
/// that a panic still writes the reports (an `INTERNAL` row naming the layer, exit 4) and keeps
/// what had finished. With the value `layer1` the panic is inside layer 1, once its first runs
/// have finished (before any confirmation re-run); with any other value, in layer 0 right after
/// connecting.
pub const PANIC_FOR_TESTS_VAR: &str = "MCP_EVAL_PANIC_FOR_TESTS";

/// The value of [`PANIC_FOR_TESTS_VAR`] that panics inside layer 1.
const PANIC_IN_LAYER1: &str = "layer1";

/// The note of a shard other than the first, whose layer 0 did not run.
pub(crate) const SHARD_LAYER0_NOTE: &str = "layer 0 runs in shard 1 only";

/// The layers this version can run.
pub(crate) const LAYERS_AVAILABLE: [u8; 4] = [0, 1, 2, 3];

/// What an evaluation produced.
#[derive(Debug)]
pub(crate) struct Evaluation {
    /// The run report (secrets redacted).
    pub report: RunReport,
    /// The files written, or the error that stopped writing them.
    pub written: Result<WrittenFiles, UserError>,
    /// The gate's decision (verdict, `result`, exit status).
    pub decision: Decision,
}

/// How the layers ended: the report assembled from their sections, and what the end needs.
struct Ended {
    /// The report, before layer 3's section and the budget.
    report: RunReport,
    /// The signal that stopped the run, if one did.
    interrupt: Option<Interrupt>,
    /// A signal or a panic during layer 2 kept none of its trials.
    layer2_dropped: bool,
    /// Layer 1 or 2 refused its input (exit status 2).
    input_error: bool,
}

/// Runs an evaluation of `settings` with the layers in `layers` (the caller decides `auto`),
/// sending progress to `events`; `learnt` is told of each secret learnt during the run (the
/// sign-in's access tokens), the moment it is learnt.
pub(crate) async fn evaluate(
    settings: &Settings,
    layers: &[u8],
    golden: Option<&GoldenSet>,
    prices: Option<&PriceTable>,
    events: &(dyn Fn(&RunEvent) + Sync),
    learnt: Option<Learnt>,
) -> Evaluation {
    let started = Instant::now();
    let started_at = Utc::now();
    let redactor = Redactor::new(settings.secrets());
    let redactor = match learnt {
        Some(learnt) => redactor.telling(learnt),
        None => redactor,
    };
    // `--events FILE`: every event below goes there too, stamped; a file that cannot be
    // created is our environment failing (exit status 4), and the run goes on without it.
    let (log, log_error) = finish::open_events_log(settings, &redactor, started);
    let cost = cost_limit(settings, layers, prices);
    let layer3 = Layer3::plan(settings, layers);
    let sections = Sections::default();
    let noting = |event: &RunEvent| {
        layer0::note(&sections.known, event);
        layer3.observe(event);
        if let Some(log) = &log {
            log.record(event);
        }
        events(event);
    };
    let events: Sink<'_> = &noting;
    opening(settings, layers, &redactor, log_error.as_deref(), &layer3, events);
    let mut server = server_section(settings, &redactor);
    // The demo server lives as long as this evaluation.
    let mut demo_task = None;
    let target = match target::target_of(settings, &mut demo_task, &redactor).await {
        Ok(target) => target,
        Err(error) if error.kind == crate::error::Kind::Unreachable => {
            // The sign-in failed: nothing can be evaluated (exit status 3), as when the server
            // refuses the credentials given.
            let reason = redactor.redact(error.to_string().trim_start_matches("error: "));
            let mut report = RunReport::unreachable(started_at, elapsed_ms(started), server, reason, Vec::new());
            report.telemetry = layer3.unrun();
            report.budget = cost.as_ref().map(|limit| limit.section());
            let ending = Ending { environment_failed: false, input_error: false };
            return finish::finish(settings, report, None, ending, &redactor, events);
        }
        Err(error) => {
            // Our environment failed; layer 3 asked for, and the budget set, say so even here.
            let reason = error.body();
            let mut report = RunReport::environment(started_at, elapsed_ms(started), server, reason);
            report.telemetry = layer3.unrun();
            report.budget = cost.as_ref().map(|limit| limit.section());
            let ending = Ending { environment_failed: true, input_error: false };
            return finish::finish(settings, report, None, ending, &redactor, events);
        }
    };
    if let (Server::Demo, Target::Http(http)) = (&settings.server, &target) {
        server.target = format!("{} (embedded demo server)", http.url);
    }
    events(&RunEvent::Connecting { target: server.target.clone(), transport: server.transport.clone() });
    let plan = layer::plan_layers(settings, layers, golden, events);
    let cassettes_failed = AtomicBool::new(false);
    let limits = Limits {
        cost: cost.clone(),
        with_layer2: plan.ran.contains(&2),
        cassettes_failed: &cassettes_failed,
        footprint: layer3.footprint(),
        spans: layer3.spans(),
    };
    let cx = Context { settings, golden, target: &target, redactor: &redactor, ran: &plan.ran, limits, events };
    let ended = run_layers(&cx, &sections, &plan, server, (started_at, started)).await;
    let Ended { mut report, interrupt, layer2_dropped, input_error } = ended;
    kept(&mut report, &sections, cost.as_deref(), events);
    let interrupted = interrupt.is_some();
    let after =
        layer3::After { settings, golden, prices, layers, interrupted, layer2_dropped, redactor: &redactor, events };
    layer3.section(&mut report, &after).await;
    drop(demo_task);
    let environment_failed = cassettes_failed.load(Ordering::SeqCst) || log_error.is_some();
    let ending = Ending { environment_failed, input_error };
    end(settings, report, interrupt, ending, log.as_ref(), &redactor, events)
}

/// The server section before the connection: the transport and the target label, redacted.
fn server_section(settings: &Settings, redactor: &Redactor) -> ServerSection {
    ServerSection {
        transport: match settings.server {
            Server::Command(_) => "stdio".into(),
            Server::Url(_) | Server::Demo => "http".into(),
        },
        target: redactor.redact(&settings.target_label()),
        ..ServerSection::default()
    }
}

/// What the report keeps on every path that reached the server: layer 0's own wall time and
/// waiver notes (as `sections` kept them), and the budget, with the line saying it stopped the run.
fn kept(report: &mut RunReport, sections: &Sections, cost: Option<&CostLimit>, events: Sink<'_>) {
    report.layer0_duration_ms = lock(&sections.durations)[0];
    report.waiver_notes = lock(&sections.layer0).as_ref().map(|layer0| layer0.waiver_notes.clone()).unwrap_or_default();
    report.budget = cost.map(CostLimit::section);
    if let Some(budget) = report.budget.as_ref().filter(|budget| budget.stopped.is_some()) {
        events(&RunEvent::Notice { text: crate::telemetry::run_limits::budget_stop(budget) });
    }
}

/// The cost budget, shared by layers 1 and 2 (and their judges), when `--max-cost-usd` and a
/// price table are given and one of them runs.
fn cost_limit(settings: &Settings, layers: &[u8], prices: Option<&PriceTable>) -> Option<Arc<CostLimit>> {
    settings
        .layer1
        .max_cost_usd
        .zip(prices)
        .filter(|_| layers.iter().any(|layer| matches!(layer, 1 | 2)))
        .map(|(limit, table)| Arc::new(CostLimit::new(limit, Arc::new(table.clone()))))
}

/// The run's first lines: the events file that cannot be written, the settings' notices, an
/// OTLP endpoint without layer 3, the layers this version cannot run.
fn opening(
    settings: &Settings,
    layers: &[u8],
    redactor: &Redactor,
    log_error: Option<&str>,
    layer3: &Layer3,
    events: Sink<'_>,
) {
    if let Some(text) = log_error {
        events(&RunEvent::Failure { text: text.to_owned() });
    }
    for notice in &settings.notices {
        events(&RunEvent::Notice { text: redactor.redact(notice) });
    }
    if let Some(source) = settings.trace.otlp_source.as_ref().filter(|_| !layer3.asked()) {
        events(&RunEvent::Notice {
            text: format!("layer 3 is not asked for: no span is exported to the OTLP endpoint {source} gives"),
        });
    }
    let unavailable: Vec<u8> = layers.iter().copied().filter(|layer| !LAYERS_AVAILABLE.contains(layer)).collect();
    if !unavailable.is_empty() {
        events(&RunEvent::LayersUnavailable { layers: unavailable });
    }
}

/// Connects and runs the session layers of `cx.ran` in turn, each through its face; then ends
/// the session. The server section layer 0 (or the connection) found.
async fn session(cx: &Context<'_>, sections: &Sections) -> Result<ServerSection, era::Unreachable> {
    // The session is owned here and lent to each layer in turn; dropping this future (on a
    // signal) drops the session, which ends a stdio server's process group.
    // Layer 0 needs processes of its own on a stdio server: started with the session's.
    let spares = if cx.ran.contains(&0) { crate::conformance::context::SPARES } else { 0 };
    let connected = Box::pin(era::connect(cx.target, cx.redactor.clone(), spares)).await?;
    if std::env::var_os(PANIC_FOR_TESTS_VAR).is_some_and(|value| value != PANIC_IN_LAYER1) {
        panic!("{PANIC_FOR_TESTS_VAR} is set");
    }
    for layer in SESSION_LAYERS.iter().filter(|layer| cx.ran.contains(&layer.number())) {
        if !layer.ready(cx, sections) {
            continue;
        }
        let number = layer.number();
        sections.running.store(number, Ordering::SeqCst);
        (cx.events)(&RunEvent::LayerStarted { layer: number });
        let started = Instant::now();
        layer.run(cx, &connected, sections).await;
        let duration_ms = elapsed_ms(started);
        lock(&sections.durations)[usize::from(number)] = Some(duration_ms);
        (cx.events)(&RunEvent::LayerFinished { layer: number, duration_ms });
    }
    let server = layer0::found(sections, &connected);
    connected.shutdown().await;
    Ok(server)
}

/// Runs the session, racing a signal, with a panic inside a layer caught: the report of each
/// ending, assembled from what the layers kept.
async fn run_layers(
    cx: &Context<'_>,
    sections: &Sections,
    plan: &LayerPlan,
    mut server: ServerSection,
    (started_at, started): (chrono::DateTime<Utc>, Instant),
) -> Ended {
    let clock = || Clock { started_at, duration_ms: elapsed_ms(started) };
    // A panic inside a layer must not lose the reports: it becomes an `INTERNAL` row (exit 4).
    let work = Box::pin(std::panic::AssertUnwindSafe(session(cx, sections)).catch_unwind());
    let ended = |report: RunReport| Ended { report, interrupt: None, layer2_dropped: false, input_error: false };
    tokio::select! {
        result = work => match result {
            Err(panic) => {
                // Like a signal: what had finished (layer 0's checks, layer 1's runs) is kept.
                let layer = sections.running.load(Ordering::SeqCst);
                let parts = cut(sections, &plan.ran, server, "a panic inside mcp-eval");
                let report = assemble::panicked(parts, layer, &assemble::panic_text(panic.as_ref()), clock());
                Ended { layer2_dropped: layer == 2, ..ended(report) }
            }
            Ok(Ok(found)) => {
                let done = Completed {
                    found,
                    checks: layer0::checks(sections),
                    layer1: lock(&sections.layer1).take(),
                    layer1_missing: plan.layer1_missing,
                    layer2: lock(&sections.layer2).take(),
                    layer2_missing: plan.layer2_missing,
                    shard_note: plan.shard_note.clone(),
                };
                let poisoned = crate::mcp::sync::poisoned();
                let (report, refusals) =
                    assemble::completed(cx.settings, done, server, &plan.ran, clock(), poisoned, cx.redactor);
                for text in &refusals {
                    (cx.events)(&RunEvent::InputError { text: text.clone() });
                }
                Ended { input_error: !refusals.is_empty(), ..ended(report) }
            }
            Ok(Err(unreachable)) if unreachable.needs_credentials => {
                // Refused without credentials: grade what needs none (the authorization rows).
                let checks =
                    crate::conformance::needs_credentials(cx.target, cx.redactor.clone()).await.unwrap_or_default();
                let outcome = RunOutcome::NeedsCredentials;
                let (at, ms) = (started_at, elapsed_ms(started));
                ended(RunReport::new(at, ms, vec![0], outcome, Some(unreachable.reason), server, checks))
            }
            Ok(Err(unreachable)) => {
                server.stderr_tail = unreachable.stderr_tail.clone();
                let evidence = unreachable
                    .evidence
                    .iter()
                    .map(|(label, text)| Evidence { label: label.clone(), text: text.clone() })
                    .collect();
                ended(RunReport::unreachable(started_at, elapsed_ms(started), server, unreachable.reason, evidence))
            }
        },
        signal = signals::interrupt_signal() => {
            let in_layer2 = sections.running.load(Ordering::SeqCst) == 2;
            let graded = lock(&sections.layer0).is_some();
            let parts = cut(sections, &plan.ran, server, signal.name());
            let elapsed = started.elapsed().as_millis();
            let report = assemble::interrupted(parts, signal.name(), elapsed, graded, in_layer2, clock());
            Ended { interrupt: Some(signal), layer2_dropped: in_layer2, ..ended(report) }
        }
    }
}

/// What each session layer had finished when `what` (a signal's name, a panic) stopped the run;
/// the report names the layers of `ran` that kept something (layer 3 reads on).
fn cut(sections: &Sections, ran: &[u8], server: ServerSection, what: &str) -> Parts {
    let mut parts = Parts { server, checks: Vec::new(), evals: None, resilience: None, layers: Vec::new() };
    let mut kept = Vec::new();
    for layer in SESSION_LAYERS {
        if layer.cut(sections, what, &mut parts) {
            kept.push(layer.number());
        }
    }
    let session_layers: Vec<u8> = SESSION_LAYERS.iter().map(|layer| layer.number()).collect();
    parts.layers =
        ran.iter().copied().filter(|layer| !session_layers.contains(layer) || kept.contains(layer)).collect();
    parts
}

/// The end of a run that reached the server: the events file's failure (exit status 4) said,
/// the reports written and decided ([`finish::finish`]).
fn end(
    settings: &Settings,
    report: RunReport,
    interrupt: Option<Interrupt>,
    ending: Ending,
    log: Option<&crate::events::EventLog>,
    redactor: &Redactor,
    events: Sink<'_>,
) -> Evaluation {
    let log_failed = log.and_then(crate::events::EventLog::failure);
    if let Some(reason) = &log_failed {
        events(&RunEvent::Failure {
            text: format!(
                "error: the events file `{}` stopped being written: {reason}",
                finish::events_label(settings)
            ),
        });
    }
    let ending = Ending { environment_failed: ending.environment_failed || log_failed.is_some(), ..ending };
    let mut evaluation = finish::finish(settings, report, interrupt, ending, redactor, events);
    // The last lines (`finished`, `closed`) are written as the run finishes: a write that fails
    // there still makes the events file incomplete, which is our environment failing too.
    if log_failed.is_none()
        && let Some(reason) = log.and_then(crate::events::EventLog::failure)
    {
        events(&RunEvent::Failure {
            text: format!(
                "error: the events file `{}` stopped being written: {reason}",
                finish::events_label(settings)
            ),
        });
        evaluation.decision.exit = evaluation.decision.exit.max(crate::verdict::ExitStatus::Environment);
    }
    evaluation
}

/// The wall time since `started`, in ms.
fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}
