//! One evaluation from start to finish, shared by every front end: start the demo server when
//! asked, connect to the server under test (the session is owned here and lent to each layer in
//! turn), run layer 0, build the [`RunReport`], write `report.json`, `junit.xml` and
//! `summary.md` on every path (pass, fail, unreachable server, server crash, timeout,
//! SIGINT/SIGTERM), and let [`crate::verdict`] decide the verdict and the exit status.
//!
//! Progress is a [`RunEvent`] stream ([`crate::events`]); signals are in [`signals`].

pub(crate) mod signals;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use chrono::Utc;
use futures_util::FutureExt as _;

use crate::conformance::{self, Options};
use crate::error::{Kind, UserError};
pub(crate) use crate::events::RunEvent;
use crate::golden::GoldenSet;
use crate::mcp::era::{self, Target};
use crate::mcp::evidence::Redactor;
use crate::mcp::http::HttpSettings;
use crate::report::model::{Evidence, GateSection, RunOutcome, RunReport, ServerSection};
use crate::report::{self, WrittenFiles};
use crate::settings::{LayersInput, Server, Settings};
use crate::telemetry::budget::CostLimit;
use crate::verdict::{self, Decision, Interrupt, VerdictInput};

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

/// Reads the golden set when layer 1 or 2 is among `layers` and one is given: every problem of
/// the file at once (exit status 2, before any connection), including matchers that need a
/// model that is not configured ([`unconfigured_matchers`]). A layer-2 plan over the model-call
/// cap is not a problem of the file: see [`layer2_budget`].
pub(crate) fn load_golden(
    settings: &Settings,
    layers: &[u8],
) -> Result<Option<GoldenSet>, Vec<crate::golden::Problem>> {
    match &settings.golden_set {
        Some(path) if layers.contains(&1) || layers.contains(&2) => {
            let mut set = crate::golden::load::load(path)?;
            if let Some(plan) = &settings.layer1.fault_plan {
                let entries = read_fault_plan(plan, &set)?;
                if layers.contains(&2) {
                    set.fault_plan = Some((plan.clone(), entries));
                }
            }
            // Layer 2 grades no argument matcher: only layer 1 needs their models.
            let problems = if layers.contains(&1) { unconfigured_matchers(&set, &settings.layer1) } else { Vec::new() };
            if problems.is_empty() { Ok(Some(set)) } else { Err(problems) }
        }
        _ => {
            // A plan that will not be used (no layer 2, or no golden set to plan over) is still
            // read: a bad file is an input error either way.
            if let Some(plan) = &settings.layer1.fault_plan {
                crate::golden::load::load_fault_plan(plan)?;
            }
            Ok(None)
        }
    }
}

/// Layer 3's price table: the file `--prices` names, else for the demo's own layer 1 the
/// example table in the binary (`golden/demo-prices.yaml`), else none. With a budget
/// (`--max-cost-usd`) every model asked must be priced unless `--allow-unpriced`.
///
/// # Errors
/// Every problem of the file at once (exit status 2, before any connection), and each model a
/// budget cannot count.
pub(crate) fn load_prices(
    settings: &Settings,
    layers: &[u8],
) -> Result<Option<crate::telemetry::prices::PriceTable>, Vec<crate::golden::Problem>> {
    let table = match &settings.layer1.price_table {
        Some(path) => Some(crate::telemetry::prices::load(path)?),
        None if settings.server == Server::Demo && settings.layer1.models.is_empty() => {
            Some(crate::telemetry::prices::from_bytes(Path::new(DEMO_PRICES_PATH), DEMO_PRICES.as_bytes())?)
        }
        None => None,
    };
    let runs_models = layers.iter().any(|layer| matches!(layer, 1 | 2));
    let Some(table) = table else {
        // `--demo` with models of its own has no example table to count against.
        if settings.layer1.max_cost_usd.is_some() && runs_models {
            return Err(vec![crate::golden::Problem {
                path: PathBuf::from("--max-cost-usd"),
                position: None,
                field: None,
                message: crate::settings::BUDGET_WITHOUT_TABLE.0.into(),
                hint: crate::settings::BUDGET_WITHOUT_TABLE.1.into(),
            }]);
        }
        return Ok(None);
    };
    if settings.layer1.max_cost_usd.is_some() && !settings.layer1.allow_unpriced && runs_models {
        let layer1 = &settings.layer1;
        // Embedding calls are not priced (their usage is not kept), so they need no entry.
        let asked = layer1.models.iter().chain(&layer1.judge_model);
        let problems: Vec<crate::golden::Problem> = asked
            .map(|model| format!("{}:{}", model.provider, model.model))
            .filter(|label| table.price(label).is_none())
            .map(|label| crate::golden::Problem {
                path: PathBuf::from(&table.info.path),
                position: None,
                field: None,
                message: format!("the price table prices no `{label}`: a cost budget cannot count its calls"),
                hint: format!(
                    "add an entry `- match: {{provider: {}, model: \"{}\"}}` with its `input:` and `output:` prices, or pass --allow-unpriced (input `allow-unpriced: true`) to count its calls as free",
                    label.split(':').next().unwrap_or_default(),
                    label.split_once(':').map_or("", |(_, model)| model)
                ),
            })
            .collect();
        if !problems.is_empty() {
            return Err(problems);
        }
    }
    Ok(Some(table))
}

/// The entries of the fault plan at `path`, each of whose `cases` glob must match a case of
/// `set`: every problem of the file at once, with its line and column.
fn read_fault_plan(
    path: &std::path::Path,
    set: &GoldenSet,
) -> Result<Vec<crate::golden::PlanEntry>, Vec<crate::golden::Problem>> {
    let entries = crate::golden::load::load_fault_plan(path)?;
    let problems: Vec<crate::golden::Problem> = entries
        .iter()
        .enumerate()
        .filter_map(|(index, entry)| {
            let matched: Vec<&crate::golden::Case> =
                set.cases.iter().filter(|case| crate::golden::glob_matches(&entry.cases, &case.id)).collect();
            let message = if matched.is_empty() {
                format!("`{}` matches no case of the golden set", entry.cases)
            } else if entry.tool == "*" && matched.iter().all(|case| crate::faults::expected_tools(case).is_empty()) {
                format!(
                    "`{}` matches only cases that expect no tool call: `tool: \"*\"` gives them no fault",
                    entry.cases
                )
            } else {
                return None;
            };
            Some(crate::golden::Problem {
                path: path.to_owned(),
                position: Some(entry.position),
                field: Some(format!("[{index}].cases")),
                message,
                hint: "use a case id or a glob of them (`*`, `?`), e.g. `weather-*`, of cases that call a tool".into(),
            })
        })
        .collect();
    if problems.is_empty() { Ok(entries) } else { Err(problems) }
}

/// The refusal, before any connection, of a layer-2 plan the user wrote (the cases' `faults:`
/// or `adversarial:`, a `--fault-plan`) whose most model calls, with layer 1's when it runs too
/// (one cap for the evaluation), exceed `--max-model-calls`: a budget message with the figure
/// and every input that changes it ([`crate::faults::sample::over_cap`]), exit status 2. The
/// default suite is never refused (it is sampled to fit, [`crate::faults::sample::fit`]), and
/// nothing is checked when no model can run (none given, no key, no cassettes). Retries and
/// layer 1's judge are not counted.
pub(crate) fn layer2_budget(settings: &Settings, layers: &[u8], golden: Option<&GoldenSet>) -> Option<UserError> {
    let layer1 = &settings.layer1;
    let set = golden.filter(|_| layers.contains(&2))?;
    // Only the models that can make a call are counted: none, nothing to check.
    let models = crate::faults::sample::runnable_models(layer1, layer1.cassettes.is_some());
    if models == 0 {
        return None;
    }
    let (variants, source) = crate::faults::variants(set);
    let cost = crate::faults::planned(set, &variants, models, layer1.runs);
    let before = if layers.contains(&1) { crate::faults::sample::layer1_at_most(set, layer1, models) } else { 0 };
    crate::faults::sample::over_cap(&cost, source, models, before, layer1.max_model_calls)
}

/// Every `embedding` matcher of `set` when no `--embedding-model` is given, and every `judge`
/// matcher when no `--judge-model` is, each with its file, line and column and the fix. Nothing
/// when no model is given (layer 1 does not run then).
pub(crate) fn unconfigured_matchers(
    set: &GoldenSet,
    layer1: &crate::settings::layer1::Layer1Settings,
) -> Vec<crate::golden::Problem> {
    if layer1.models.is_empty() {
        return Vec::new();
    }
    let mut problems = Vec::new();
    for matcher in set.cases.iter().flat_map(|case| &case.semantic) {
        let (configured, message, hint) = match matcher.mode.as_str() {
            "embedding" => (
                layer1.embedding_model.is_some(),
                "an `embedding` matcher needs an embeddings model, and none is given",
                "give --embedding-model PROVIDER:MODEL (Action input `embedding-model`, config `embedding_model`) on an OpenAI-compatible provider, e.g. openai:text-embedding-3-small; or use `match: fuzzy`",
            ),
            _ => (
                layer1.judge_model.is_some(),
                "a `judge` matcher needs the judge model, and none is given",
                "give --judge-model PROVIDER:MODEL (Action input `judge-model`), a model other than those under test; or use another matcher",
            ),
        };
        if !configured {
            problems.push(crate::golden::Problem {
                path: set.path.clone(),
                position: Some((matcher.line, matcher.column)),
                field: Some(matcher.field.clone()),
                message: message.to_owned(),
                hint: hint.to_owned(),
            });
        }
    }
    problems
}

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

/// Runs an evaluation of `settings` with the layers in `layers` (the caller decides `auto`),
/// sending progress to `events`.
pub(crate) async fn evaluate(
    settings: &Settings,
    layers: &[u8],
    golden: Option<&GoldenSet>,
    prices: Option<&crate::telemetry::prices::PriceTable>,
    events: &(dyn Fn(&RunEvent) + Sync),
) -> Evaluation {
    let started = Instant::now();
    let started_at = Utc::now();
    // What layer 0 has said so far (the era, the sizes of the lists): a signal that arrives
    // before its outcome keeps them in the report instead of "era unknown".
    let known = std::sync::Mutex::new(ServerSection::default());
    let redactor = Redactor::new(settings.secrets());
    // `--events FILE`: every event below goes there too, stamped; a file that cannot be
    // created is our environment failing (exit status 4), and the run goes on without it.
    let (log, log_error) = open_events_log(settings, &redactor, started);
    // The cost budget, shared by layers 1 and 2 (and their judges).
    let cost = settings
        .layer1
        .max_cost_usd
        .zip(prices)
        .filter(|_| layers.iter().any(|layer| matches!(layer, 1 | 2)))
        .map(|(limit, table)| Arc::new(CostLimit::new(limit, Arc::new(table.clone()))));
    // Layer 3 only reads: it keeps what the events of layers 1 and 2 say, and the footprint of
    // the tools they listed.
    let telemetry = layers.contains(&3).then(crate::telemetry::Collector::default);
    // And traces each trial: one trace, a span per call, the `traceparent` in `_meta`.
    let spans = telemetry.as_ref().map(|_| {
        crate::telemetry::trace::Spans::new(settings.trace.trace_state.clone(), settings.trace.baggage.clone())
    });
    let footprint: std::sync::Mutex<Footprint> = std::sync::Mutex::new((Vec::new(), Vec::new()));
    let noting = |event: &RunEvent| {
        note(&known, event);
        if let Some(collector) = &telemetry {
            collector.observe(event);
        }
        if let Some(log) = &log {
            log.record(event);
        }
        events(event);
    };
    let events: &(dyn Fn(&RunEvent) + Sync) = &noting;
    if let Some(text) = &log_error {
        events(&RunEvent::Failure { text: text.clone() });
    }
    for notice in &settings.notices {
        events(&RunEvent::Notice { text: redactor.redact(notice) });
    }
    if let Some(source) = settings.trace.otlp_source.as_ref().filter(|_| telemetry.is_none()) {
        events(&RunEvent::Notice {
            text: format!("layer 3 is not asked for: no span is exported to the OTLP endpoint {source} gives"),
        });
    }
    let unavailable: Vec<u8> = layers.iter().copied().filter(|layer| !LAYERS_AVAILABLE.contains(layer)).collect();
    if !unavailable.is_empty() {
        events(&RunEvent::LayersUnavailable { layers: unavailable });
    }

    let mut server = ServerSection {
        transport: match settings.server {
            Server::Command(_) => "stdio".into(),
            Server::Url(_) | Server::Demo => "http".into(),
        },
        target: redactor.redact(&settings.target_label()),
        ..ServerSection::default()
    };

    // The demo server lives as long as this evaluation.
    let mut demo_task = None;
    let target = match target_of(settings, &mut demo_task).await {
        Ok(target) => target,
        Err(error) => {
            let reason = error.to_string().trim_start_matches("error: ").to_owned();
            let mut report = RunReport::environment(started_at, elapsed_ms(started), server, reason);
            // Layer 3 asked for, and the budget set, say so even here.
            report.telemetry = telemetry.as_ref().map(|_| crate::report::telemetry::TelemetrySection {
                not_run: Some("the run ended before any trial: mcp-eval's own environment failed".into()),
                ..crate::report::telemetry::TelemetrySection::default()
            });
            report.budget = cost.as_ref().map(|limit| limit.section());
            return finish(
                settings,
                report,
                None,
                Ending { environment_failed: true, input_error: false },
                &redactor,
                events,
            );
        }
    };
    if let (Server::Demo, Target::Http(http)) = (&settings.server, &target) {
        server.target = format!("{} (embedded demo server)", http.url);
    }
    events(&RunEvent::Connecting { target: server.target.clone(), transport: server.transport.clone() });

    let options = Options {
        safe_tools: settings.safe_tools.clone(),
        require_modern: settings.require_modern,
        waivers: settings.waivers.clone(),
    };
    let LayerPlan { ran, layer1_missing, layer2_missing, shard_note } = plan_layers(settings, layers, golden, events);
    // Layer 0's outcome as soon as it is graded, so a signal during layer 1 or the session's
    // shutdown (a stdio server can take seconds to exit) keeps every check instead of losing them.
    let finished: std::sync::Mutex<Option<conformance::Layer0Result>> = std::sync::Mutex::new(None);
    // Layer 0's own wall time (its checks, not the connection or layer 1), once it finished:
    // what the summary's `N checks in T` says.
    let layer0_time: std::sync::Mutex<Option<u64>> = std::sync::Mutex::new(None);
    // Layer 1's finished runs, likewise.
    let progress = crate::trials::Progress::default();
    let cassettes_failed = std::sync::atomic::AtomicBool::new(false);
    // Layer 1's section once it finished, as layer 0's outcome above.
    let layer1_done: std::sync::Mutex<Option<crate::report::evals::EvalsSection>> = std::sync::Mutex::new(None);
    // The layer running now (0 until layer 1 starts): what a panic's `INTERNAL` row names.
    let running = std::sync::atomic::AtomicU8::new(0);
    // What layers 1 and 2 share: the budget, the cassettes' failure flag, layer 3's footprint.
    let limits = Limits {
        cost: cost.clone(),
        with_layer2: ran.contains(&2),
        cassettes_failed: &cassettes_failed,
        footprint: telemetry.as_ref().map(|_| &footprint),
        spans: spans.as_ref(),
    };
    let work = async {
        // The session is owned here and lent to each layer in turn; dropping this future (on a
        // signal) drops the session, which ends a stdio server's process group.
        // Layer 0 needs processes of its own on a stdio server: started with the session's.
        let spares = if ran.contains(&0) { conformance::context::SPARES } else { 0 };
        let connected = Box::pin(era::connect(&target, redactor.clone(), spares)).await?;
        if std::env::var_os(PANIC_FOR_TESTS_VAR).is_some_and(|value| value != PANIC_IN_LAYER1) {
            panic!("{PANIC_FOR_TESTS_VAR} is set");
        }
        let layer0 = if ran.contains(&0) {
            events(&RunEvent::LayerStarted { layer: 0 });
            let layer0_started = Instant::now();
            let mut layer0 =
                Box::pin(conformance::run(&connected, target.clone(), redactor.clone(), &options, events)).await;
            // The config file's waivers, on today's date (an expired one no longer waives).
            let today = chrono::Utc::now().date_naive();
            let waivers = conformance::waiver::for_transport(&options.waivers, &layer0.server.transport);
            layer0.waiver_notes = conformance::waiver::apply(&mut layer0.checks, &waivers, today);
            for note in &layer0.waiver_notes {
                events(&RunEvent::Notice { text: format!("warning: {note}") });
            }
            let layer0_ms = elapsed_ms(layer0_started);
            *crate::mcp::sync::lock(&finished) = Some(layer0.clone());
            *crate::mcp::sync::lock(&layer0_time) = Some(layer0_ms);
            // As soon as layer 0 is graded, before layer 1 starts: a reader of the events sees them then.
            for check in &layer0.checks {
                events(&RunEvent::CheckGraded { id: check.id.clone(), status: check.status });
            }
            events(&RunEvent::LayerFinished { layer: 0, duration_ms: layer0_ms });
            Some(layer0)
        } else {
            None
        };
        let layer1 = if ran.contains(&1) {
            running.store(1, std::sync::atomic::Ordering::SeqCst);
            events(&RunEvent::LayerStarted { layer: 1 });
            let layer1_started = Instant::now();
            let checks0 = layer0.as_ref().map(|outcome: &conformance::Layer0Result| outcome.checks.as_slice());
            let layer1 = Box::pin(layer1(settings, golden, &connected, &progress, checks0, &limits, events)).await;
            events(&RunEvent::LayerFinished { layer: 1, duration_ms: elapsed_ms(layer1_started) });
            // Kept whole (gate included) for a signal or a panic during layer 2.
            if let Ok(section) = &layer1 {
                *crate::mcp::sync::lock(&layer1_done) = Some(section.clone());
            }
            Some(layer1)
        } else {
            None
        };
        let layer2 = if ran.contains(&2) && matches!(layer1, Some(Err(_))) {
            // The same set, refused once (exit status 2): said once, not again by layer 2.
            let resilience = crate::report::layer2::ResilienceSection {
                not_run: Some("layer 1 refused the golden set (above): layer 2 runs on the same set".into()),
                ..crate::report::layer2::ResilienceSection::default()
            };
            Some(Ok(crate::faults::Layer2 { resilience, security: None }))
        } else if ran.contains(&2) {
            running.store(2, std::sync::atomic::Ordering::SeqCst);
            events(&RunEvent::LayerStarted { layer: 2 });
            let layer2_started = Instant::now();
            // One cap for the whole evaluation: what layer 1 spent is gone.
            let spent = match &layer1 {
                Some(Ok(section)) => section.model_calls,
                _ => 0,
            };
            let after_layer1 = ran.contains(&1);
            let layer2 = Box::pin(layer2(settings, golden, &connected, (spent, after_layer1), &limits, events)).await;
            events(&RunEvent::LayerFinished { layer: 2, duration_ms: elapsed_ms(layer2_started) });
            Some(layer2)
        } else {
            None
        };
        let server = layer0.as_ref().map_or_else(
            || ServerSection {
                era: Some(connected.era.revision().to_owned()),
                era_evidence: Some(connected.evidence.clone()),
                stdio_starts: connected.starts.reasons(),
                ..ServerSection::default()
            },
            |layer0| layer0.server.clone(),
        );
        connected.shutdown().await;
        Ok::<_, era::Unreachable>((server, layer0.map(|layer0| layer0.checks).unwrap_or_default(), layer1, layer2))
    };
    // A panic inside a layer must not lose the reports: it becomes an `INTERNAL` row (exit 4).
    let work = Box::pin(std::panic::AssertUnwindSafe(work).catch_unwind());
    // A signal or a panic during layer 2 keeps none of its trials: layer 3 forgets them too.
    let mut layer2_dropped = false;
    let mut input_error = false;
    let (report, interrupt) = tokio::select! {
        result = work => match result {
            Err(panic) => {
                // Like a signal: what had finished (layer 0's checks, layer 1's runs) is kept.
                let layer = running.load(std::sync::atomic::Ordering::SeqCst);
                let layer1 = crate::mcp::sync::lock(&layer1_done)
                    .take()
                    .or_else(|| progress.interrupted("a panic inside mcp-eval"));
                let mut checks = partial_checks(&mut server, &finished, &known);
                let message = panic_message(layer, &panic_text(panic.as_ref()), !checks.is_empty(), layer1.is_some());
                checks.push(RunReport::internal_error_check(message));
                let layers: Vec<u8> = ran.iter().copied().filter(|layer| *layer != 2 && (*layer != 1 || layer1.is_some())).collect();
                let layers = if layers.is_empty() { vec![0] } else { layers };
                let mut report = RunReport::new(started_at, elapsed_ms(started), layers, RunOutcome::Completed, None, server, checks);
                report.evals = layer1;
                report.resilience = (layer == 2).then(|| layer2_cut("a panic inside mcp-eval"));
                layer2_dropped = layer == 2;
                (report, None)
            }
            Ok(Ok((found, checks, layer1, layer2))) => {
                let done = Completed { found, checks, layer1, layer1_missing, layer2, layer2_missing, shard_note: shard_note.clone() };
                let (report, refused) = completed_report(settings, done, server, &ran, (started_at, started), &redactor, events);
                input_error = refused;
                (report, None)
            }
            Ok(Err(unreachable)) if unreachable.needs_credentials => {
                // Refused without credentials: grade what needs none (the authorization rows).
                let checks = conformance::needs_credentials(&target, redactor.clone()).await.unwrap_or_default();
                (RunReport::new(started_at, elapsed_ms(started), vec![0], RunOutcome::NeedsCredentials, Some(unreachable.reason), server, checks), None)
            }
            Ok(Err(unreachable)) => {
                server.stderr_tail = unreachable.stderr_tail.clone();
                let evidence = unreachable.evidence.iter().map(|(label, text)| Evidence { label: label.clone(), text: text.clone() }).collect();
                (RunReport::unreachable(started_at, elapsed_ms(started), server, unreachable.reason, evidence), None)
            }
        },
        signal = signals::interrupt_signal() => {
            let in_layer2 = running.load(std::sync::atomic::Ordering::SeqCst) == 2;
            let layer1 = crate::mcp::sync::lock(&layer1_done).take().or_else(|| progress.interrupted(signal.name()));
            let graded = crate::mcp::sync::lock(&finished).is_some();
            let detail = if in_layer2 {
                format!(
                    "interrupted by {} after {} ms during layer 2; layers 0 and 1 are reported whole, layer 2's trials are not kept",
                    signal.name(),
                    started.elapsed().as_millis()
                )
            } else {
                interrupt_detail(signal.name(), started.elapsed().as_millis(), graded, layer1.is_some())
            };
            let checks = partial_checks(&mut server, &finished, &known);
            let layers: Vec<u8> = ran.iter().copied().filter(|layer| *layer != 2 && (*layer != 1 || layer1.is_some())).collect();
            let mut report = RunReport::new(started_at, elapsed_ms(started), layers, RunOutcome::Interrupted, Some(detail), server, checks);
            report.evals = layer1;
            report.resilience = in_layer2.then(|| layer2_cut(signal.name()));
            layer2_dropped = in_layer2;
            (report, Some(signal))
        }
    };
    let mut report = report;
    report.layer0_duration_ms = *crate::mcp::sync::lock(&layer0_time);
    report.waiver_notes =
        crate::mcp::sync::lock(&finished).as_ref().map(|layer0| layer0.waiver_notes.clone()).unwrap_or_default();
    report.budget = cost.as_ref().map(|limit| limit.section());
    if let Some(budget) = &report.budget
        && budget.stopped.is_some()
    {
        events(&RunEvent::Notice { text: budget_stop(budget) });
    }
    if let Some(collector) = &telemetry {
        if layer2_dropped {
            collector.forget_layer(2);
        }
        // The demo's layers 1 and 2 run its own set.
        let demo_set = demo_layer1(settings, golden)
            .then(|| crate::golden::load::parse(Path::new("golden/demo.yaml"), DEMO_GOLDEN_SET).ok())
            .flatten();
        let mut section = layer3(collector, &report, demo_set.as_ref().or(golden), prices, layers);
        if let Some(why) = &section.not_run {
            report.layers.retain(|layer| *layer != 3);
            events(&RunEvent::Notice { text: format!("layer 3 did not run: {why}") });
        } else if !report.layers.contains(&3) {
            report.layers.push(3);
        }
        if section.not_run.is_none() {
            let (rows, notes) = std::mem::take(&mut *crate::mcp::sync::lock(&footprint));
            section.footprint = rows;
            section.notes.extend(notes);
        }
        if let Some(spans) = spans.as_ref().filter(|spans| spans.traces() > 0) {
            section.notes.extend(m9_warning(&report.checks));
            let trace = trace_section(spans, settings, interrupt.is_some(), &redactor).await;
            if let Some(export) = &trace.export {
                events(&RunEvent::Notice { text: export_line(export) });
            }
            section.trace = Some(trace);
        }
        // Against the stored baseline and in the trends: shown, never enforced.
        let completed = report.outcome == RunOutcome::Completed
            && !report.checks.iter().any(|check| check.id == crate::report::model::INTERNAL_CHECK_ID);
        let measured_at = report.started_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let commit = settings.action.as_ref().and_then(|action| action.github.sha.as_deref());
        let evals = report.evals.as_ref();
        for warning in
            crate::baseline::apply::layer3(&mut section, evals, &settings.layer1, completed, &measured_at, commit)
        {
            events(&RunEvent::Notice { text: format!("layer 3: {warning}") });
        }
        report.telemetry = Some(section);
    }
    drop(demo_task);
    let log_failed = log.as_ref().and_then(crate::events::EventLog::failure);
    if let Some(reason) = &log_failed {
        events(&RunEvent::Failure {
            text: format!("error: the events file `{}` stopped being written: {reason}", events_label(settings)),
        });
    }
    let environment_failed =
        cassettes_failed.load(std::sync::atomic::Ordering::SeqCst) || log_error.is_some() || log_failed.is_some();
    let mut evaluation =
        finish(settings, report, interrupt, Ending { environment_failed, input_error }, &redactor, events);
    // The last lines (`finished`, `closed`) are written as the run finishes: a write that fails
    // there still makes the events file incomplete, which is our environment failing too.
    if log_failed.is_none()
        && let Some(reason) = log.as_ref().and_then(crate::events::EventLog::failure)
    {
        events(&RunEvent::Failure {
            text: format!("error: the events file `{}` stopped being written: {reason}", events_label(settings)),
        });
        evaluation.decision.exit = evaluation.decision.exit.max(verdict::ExitStatus::Environment);
    }
    evaluation
}

/// Layer 3's section of a run: what `collector` kept of layers 1 and 2's events, or why there
/// is nothing to measure.
fn layer3(
    collector: &crate::telemetry::Collector,
    report: &RunReport,
    golden: Option<&GoldenSet>,
    prices: Option<&crate::telemetry::prices::PriceTable>,
    layers: &[u8],
) -> crate::report::telemetry::TelemetrySection {
    let cached_pairs =
        report.evals.as_ref().map_or(0, |evals| evals.evals.iter().filter(|eval| eval.cached.is_some()).count());
    let price =
        |label: &str, usage: &crate::report::telemetry::Usage| prices.and_then(|table| table.cost(label, usage));
    let inputs = crate::telemetry::Inputs { golden, price: &price, prices, cached_pairs };
    let mut section = crate::telemetry::section(collector, &inputs);
    if !layers.contains(&1) && !layers.contains(&2) {
        section.not_run = Some(LAYER3_ALONE.into());
    }
    section
}

/// The warning of a server that failed M-9 (a `traceparent` in `_meta` refused or not
/// tolerated) while layer 3 sent one with every request of layers 1 and 2.
fn m9_warning(checks: &[crate::report::model::CheckResult]) -> Option<String> {
    use crate::report::model::Status;
    checks.iter().find(|check| check.id == "M-9" && matches!(check.status, Status::Fail | Status::Warn)).map(|_| {
        "the server did not tolerate a `traceparent` in `_meta` (M-9), and layer 3 sends one with every request of layers 1 and 2: their failures may be that; run without layer 3 to compare".to_owned()
    })
}

/// Layer 3's trace section: what the trials' traces held, and their export to the OTLP
/// endpoint when one is given — skipped after a signal (the reports come first), bounded by
/// its timeout otherwise, a warning when it fails.
async fn trace_section(
    spans: &crate::telemetry::trace::Spans,
    settings: &Settings,
    interrupted: bool,
    redactor: &Redactor,
) -> crate::report::telemetry::TraceSection {
    use crate::report::telemetry::{TraceExport, TraceSection};
    let finished = spans.take();
    let (tracestate, baggage) = spans.carries();
    let mut section = TraceSection {
        traces: spans.traces(),
        spans: finished.len(),
        dropped: spans.dropped(),
        tracestate,
        baggage,
        export: None,
    };
    if settings.trace.disabled {
        section.export = Some(TraceExport {
            endpoint: settings.trace.otlp_source.clone().unwrap_or_default(),
            warning: Some("not exported: OTEL_SDK_DISABLED=true turns the export off".into()),
            ..TraceExport::default()
        });
        return section;
    }
    let Some(target) = &settings.trace.otlp else { return section };
    let endpoint = crate::settings::secrets::url_without_secrets(&target.url);
    if interrupted {
        section.export = Some(TraceExport {
            endpoint,
            warning: Some("not exported: the run was interrupted, and the reports come first".into()),
            ..TraceExport::default()
        });
        return section;
    }
    let started = Instant::now();
    let (exported, failed) = crate::telemetry::otlp::export(target, finished).await;
    section.export = Some(TraceExport {
        endpoint,
        exported: exported.spans,
        requests: exported.requests,
        duration_ms: elapsed_ms(started),
        warning: failed.map(|error| {
            format!(
                "{}; check that the collector is up and that --otlp-endpoint (or OTEL_EXPORTER_OTLP_ENDPOINT) names its base URL",
                redactor.redact(&error)
            )
        }),
    });
    section
}

/// The log line of an export.
fn export_line(export: &crate::report::telemetry::TraceExport) -> String {
    match &export.warning {
        Some(warning) => format!("warning: layer 3's spans were not all exported to {}: {warning}", export.endpoint),
        None => format!(
            "layer 3: {} span(s) exported to {} in {} request(s), {} ms",
            export.exported, export.endpoint, export.requests, export.duration_ms
        ),
    }
}

/// Why layer 3 alone measures nothing.
pub(crate) const LAYER3_ALONE: &str =
    "layer 3 measures the trials of layers 1 and 2: ask for one of them too (`--layers 1,3`)";

/// The `INTERNAL` row's message for a panic in layer `layer` (`text`: what it said), saying what
/// of the run is kept.
fn panic_message(layer: u8, text: &str, checks_kept: bool, trials_kept: bool) -> String {
    let kept = match (checks_kept, trials_kept) {
        (true, true) => {
            "Layer 0's checks and layer 1's finished trials are kept; the cases with trials missing are skipped. "
        }
        (true, false) => "Layer 0's checks are kept. ",
        (false, true) => "Layer 1's finished trials are kept; the cases with trials missing are skipped. ",
        (false, false) => "",
    };
    format!(
        "mcp-eval failed inside layer {layer} (a panic: {text}); no verdict. {kept}Please report it with the server's name and version"
    )
}

/// The report's `outcome_detail` for a run `signal` stopped after `elapsed` ms: during layer 1
/// (`trials_kept`), while the server shut down (every check `graded`), or during the checks.
fn interrupt_detail(signal: &str, elapsed: u128, graded: bool, trials_kept: bool) -> String {
    match (graded, trials_kept) {
        (_, true) => format!(
            "interrupted by {signal} after {elapsed} ms during layer 1; its finished trials are reported and the cases with trials missing are skipped"
        ),
        // Every check had finished; only the server's shutdown was cut short.
        (true, false) => format!(
            "interrupted by {signal} after {elapsed} ms, while the server was being shut down; every check had finished"
        ),
        (false, false) => format!("interrupted by {signal} after {elapsed} ms; checks still running were abandoned"),
    }
}

/// Layer 2's section when `what` (a signal, a panic) stopped it: not run, and why.
fn layer2_cut(what: &str) -> crate::report::layer2::ResilienceSection {
    crate::report::layer2::ResilienceSection {
        not_run: Some(format!("{what} stopped layer 2: its finished trials are not kept")),
        ..crate::report::layer2::ResilienceSection::default()
    }
}

/// What the layers gave on a run that completed.
struct Completed {
    /// The server section layer 0 (or the connection) found.
    found: ServerSection,
    /// Layer 0's checks.
    checks: Vec<crate::report::model::CheckResult>,
    /// Layer 1's section, or the input error that stopped it; `None` when it did not run.
    layer1: Option<Result<crate::report::evals::EvalsSection, UserError>>,
    /// Why layer 1 did not run although asked for.
    layer1_missing: Option<&'static str>,
    /// Layer 2's sections, or the input error that stopped it; `None` when it did not run.
    layer2: Option<Result<crate::faults::Layer2, UserError>>,
    /// Why layer 2 did not run although asked for.
    layer2_missing: Option<&'static str>,
    /// The note of a shard after the first.
    shard_note: Option<String>,
}

/// The report of a run whose layers completed, and whether layer 1 refused its input (exit
/// status 2). `server` keeps the target label and transport.
fn completed_report(
    settings: &Settings,
    done: Completed,
    mut server: ServerSection,
    ran: &[u8],
    (started_at, started): (chrono::DateTime<Utc>, Instant),
    redactor: &Redactor,
    events: &(dyn Fn(&RunEvent) + Sync),
) -> (RunReport, bool) {
    let Completed { found, checks, layer1, layer1_missing, layer2, layer2_missing, shard_note } = done;
    let mut input_error = false;
    let label = std::mem::take(&mut server.target);
    let transport = std::mem::take(&mut server.transport);
    server = found;
    server.target = label;
    server.transport = transport;
    let mut checks = checks;
    if crate::mcp::sync::poisoned() {
        checks.push(RunReport::internal_error_check(
            "a panic inside mcp-eval poisoned shared state during the run: the results above may be missing findings; no verdict".into(),
        ));
    }
    let mut report =
        RunReport::new(started_at, elapsed_ms(started), ran.to_vec(), RunOutcome::Completed, None, server, checks);
    if let Some(reason) = layer1_missing {
        report.evals = Some(crate::report::evals::EvalsSection {
            layer1_not_run: Some(reason.to_owned()),
            ..crate::report::evals::EvalsSection::default()
        });
    }
    if let Some(layer1) = layer1 {
        // Layer 1 ran only when some model ran (and not when it refused its input).
        if layer1.as_ref().map_or(true, |section| section.layer1_not_run.is_some()) {
            report.layers.retain(|layer| *layer != 1);
        }
        report.evals = Some(match layer1 {
            Ok(mut section) => {
                section.layer1_notes.extend(shard_note.clone());
                section
            }
            Err(error) => {
                input_error = true;
                events(&RunEvent::InputError { text: redactor.redact(&error.to_string()) });
                crate::report::evals::EvalsSection {
                    layer1_not_run: Some(format!("{}{}", crate::report::evals::INVALID_INPUT_PREFIX, error.message)),
                    input_refused: true,
                    models: settings.layer1.models.iter().map(|model| model.label()).collect(),
                    ..crate::report::evals::EvalsSection::default()
                }
            }
        });
    }
    if let Some(reason) = layer2_missing {
        report.resilience = Some(crate::report::layer2::ResilienceSection {
            not_run: Some(reason.to_owned()),
            ..crate::report::layer2::ResilienceSection::default()
        });
    }
    if let Some(layer2) = layer2 {
        let section = match layer2 {
            Ok(crate::faults::Layer2 { mut resilience, mut security }) => {
                use crate::settings::layer1::FailOnEvals;
                let fail_on = settings.layer1.fail_on_evals;
                resilience.fail_on = fail_on.as_str().to_owned();
                resilience.fails = match fail_on {
                    FailOnEvals::Failure => resilience.any_failed(),
                    FailOnEvals::Regression | FailOnEvals::Strict => resilience.hard_failed(),
                    FailOnEvals::Never => false,
                };
                if let Some(security) = security.as_mut() {
                    security.fail_on = fail_on.as_str().to_owned();
                    security.fails = match fail_on {
                        FailOnEvals::Failure => security.any_failed(),
                        FailOnEvals::Regression | FailOnEvals::Strict => security.hard_failed(),
                        FailOnEvals::Never => false,
                    };
                }
                report.security = security;
                resilience
            }
            Err(error) => {
                input_error = true;
                events(&RunEvent::InputError { text: redactor.redact(&error.to_string()) });
                crate::report::layer2::ResilienceSection {
                    not_run: Some(format!("{}{}", crate::report::evals::INVALID_INPUT_PREFIX, error.message)),
                    ..crate::report::layer2::ResilienceSection::default()
                }
            }
        };
        if section.not_run.is_some() {
            report.layers.retain(|layer| *layer != 2);
        }
        report.resilience = Some(section);
    }
    (report, input_error)
}

/// The events file as the user named it (`--events`), for messages.
fn events_label(settings: &Settings) -> &str {
    settings.events_path.as_ref().map_or("", |(_, label)| label.as_str())
}

/// `--events FILE`: the log, or the failure line saying why it cannot be created (the run
/// goes on without it, and exits 4); neither without the flag.
fn open_events_log(
    settings: &Settings,
    redactor: &Redactor,
    started: Instant,
) -> (Option<crate::events::EventLog>, Option<String>) {
    match &settings.events_path {
        Some((path, label)) => match crate::events::EventLog::create(path, redactor.clone(), started) {
            Ok(log) => (Some(log), None),
            Err(error) => (
                None,
                Some(format!("error: cannot write the events file `{label}`: {}", crate::text::io_reason(&error))),
            ),
        },
        None => (None, None),
    }
}

/// Which layers run, and why some do not.
struct LayerPlan {
    /// The layers that run, in order.
    ran: Vec<u8>,
    /// Why layer 1 does not run although it was asked for, when it does not.
    layer1_missing: Option<&'static str>,
    /// Why layer 2 does not run although it was asked for, when it does not.
    layer2_missing: Option<&'static str>,
    /// The note of a shard after the first: layer 0 runs in shard 1 only.
    shard_note: Option<String>,
}

/// Decides which of `layers` run (the caller resolved `auto`), sending a notice for each asked
/// for that does not.
fn plan_layers(
    settings: &Settings,
    layers: &[u8],
    golden: Option<&GoldenSet>,
    events: &(dyn Fn(&RunEvent) + Sync),
) -> LayerPlan {
    // Layer 1 runs only with a golden set and a model; otherwise the report says why not.
    let layer1_missing = if !layers.contains(&1) || demo_layer1(settings, golden) {
        None
    } else if golden.is_none() {
        Some("no golden set was given (--golden-set, Action input `golden-set`, config `golden_set`)")
    } else if settings.layer1.models.is_empty() {
        Some(
            "no model was given (--model PROVIDER:MODEL, Action input `models`, config `models`; `--demo` alone replays the demo's own golden set and model)",
        )
    } else {
        None
    };
    if let Some(reason) = layer1_missing {
        events(&RunEvent::Notice { text: format!("layer 1 did not run: {reason}") });
    }
    // The demo's layer 2 needs neither (its own set, replayed).
    let layer2_missing = if !layers.contains(&2) || demo_layer1(settings, golden) {
        None
    } else if golden.is_none() {
        Some("no golden set was given (--golden-set, Action input `golden-set`, config `golden_set`)")
    } else if settings.layer1.models.is_empty() {
        Some("no model was given (--model PROVIDER:MODEL, Action input `models`, config `models`)")
    } else if settings.layer1.shard.is_some() {
        Some(
            "layer 2 does not run in a sharded run yet (its variants are not split across shards): run it in a job without --shard",
        )
    } else {
        None
    };
    if let Some(reason) = layer2_missing {
        events(&RunEvent::Notice { text: format!("layer 2 did not run: {reason}") });
    }
    // With `--shard`, layer 0 runs in shard 1 only (`merge` takes its checks from there).
    let shard_note = settings
        .layer1
        .shard
        .filter(|shard| shard.index > 1 && layers.contains(&0))
        .map(|shard| format!("{SHARD_LAYER0_NOTE} (this is shard {}/{})", shard.index, shard.count));
    if let Some(note) = &shard_note {
        events(&RunEvent::Notice { text: note.clone() });
    }
    let ran: Vec<u8> = layers
        .iter()
        .copied()
        .filter(|layer| LAYERS_AVAILABLE.contains(layer) && !(*layer == 1 && layer1_missing.is_some()))
        .filter(|layer| !(*layer == 2 && layer2_missing.is_some()))
        .filter(|layer| !(*layer == 0 && shard_note.is_some()))
        .collect();
    LayerPlan { ran, layer1_missing, layer2_missing, shard_note }
}

/// Layer 0's checks when its outcome was graded before the run stopped (a signal, a panic), with
/// the server section it found (the target label kept); otherwise none, and `server` keeps what
/// layer 0 had said so far (`known`: the era, the sizes of the lists).
fn partial_checks(
    server: &mut ServerSection,
    finished: &std::sync::Mutex<Option<conformance::Layer0Result>>,
    known: &std::sync::Mutex<ServerSection>,
) -> Vec<crate::report::model::CheckResult> {
    match crate::mcp::sync::lock(finished).take() {
        Some(outcome) => {
            let label = std::mem::take(&mut server.target);
            *server = outcome.server;
            server.target = label;
            outcome.checks
        }
        None => {
            let known = crate::mcp::sync::lock(known);
            server.era = server.era.take().or_else(|| known.era.clone());
            server.era_evidence = server.era_evidence.take().or_else(|| known.era_evidence.clone());
            server.listed = server.listed.or(known.listed);
            Vec::new()
        }
    }
}

/// Keeps in `known` what `event` says about the server (the era and the sizes of its lists).
fn note(known: &std::sync::Mutex<ServerSection>, event: &RunEvent) {
    match event {
        RunEvent::EraDetected { era, evidence } => {
            let mut known = crate::mcp::sync::lock(known);
            known.era = Some(era.clone());
            known.era_evidence = Some(evidence.clone());
        }
        RunEvent::ServerListed(listed) => crate::mcp::sync::lock(known).listed = Some(*listed),
        _ => {}
    }
}

/// What layers 1 and 2 share with the evaluation: the cost budget and the flag a cassette that
/// could not be written raises.
struct Limits<'a> {
    /// The budget, when `--max-cost-usd` is set.
    cost: Option<Arc<CostLimit>>,
    /// Layer 2 runs in this evaluation: layer 1's up-front estimate covers its trials too.
    with_layer2: bool,
    /// Set when cassettes could not be saved (exit 4).
    cassettes_failed: &'a std::sync::atomic::AtomicBool,
    /// Layer 3's tool-surface footprint and its notes, filled by the first layer that lists the
    /// tools (`None`: layer 3 was not asked for).
    footprint: Option<&'a std::sync::Mutex<Footprint>>,
    /// Layer 3's spans, when it traces the trials (`None`: layer 3 was not asked for).
    spans: Option<&'a crate::telemetry::trace::Spans>,
}

/// The footprint's rows and the notes of its counting (a count-tokens request that failed).
type Footprint = (Vec<crate::report::telemetry::FootprintEntry>, Vec<String>);

impl Limits<'_> {
    /// Counts the footprint of `surface` for `layer1`'s models, once, when layer 3 asks for it;
    /// with `--count-tokens`, Anthropic models' through the provider's count-tokens endpoint.
    async fn measure(
        &self,
        surface: &crate::mcp::tools::ToolSurface,
        layer1: &crate::settings::layer1::Layer1Settings,
    ) {
        use crate::settings::layer1::Api;
        use crate::telemetry::footprint::{Asked, Wire};
        let Some(slot) = self.footprint else { return };
        if !crate::mcp::sync::lock(slot).0.is_empty() {
            return;
        }
        let asked: Vec<Asked> = layer1
            .models
            .iter()
            .map(|model| Asked {
                label: model.label(),
                model: model.model.clone(),
                wire: match layer1.providers.iter().find(|provider| provider.id == model.provider).map(|p| p.api) {
                    Some(Api::Anthropic) => Wire::Anthropic,
                    Some(Api::OpenAi) => Wire::OpenAi,
                    Some(Api::Replay) | None => Wire::Replay,
                },
            })
            .collect();
        let mut rows = crate::telemetry::footprint::footprint(&surface.tools, &asked);
        let mut notes = Vec::new();
        for model in layer1.models.iter().filter(|_| layer1.count_tokens) {
            let Some(def) = layer1.providers.iter().find(|def| def.id == model.provider && def.api == Api::Anthropic)
            else {
                continue;
            };
            let label = model.label();
            let config = crate::providers::EndpointConfig {
                base_url: def.base_url.clone(),
                api_key: def.api_key.clone(),
                model: model.model.clone(),
                timeout: std::time::Duration::from_secs(30),
            };
            let counted = match crate::providers::anthropic::AnthropicProvider::new(config) {
                Ok(provider) => {
                    let count = |tools: Vec<crate::providers::ToolSpec>| {
                        let provider = &provider;
                        async move { provider.count_tokens(&tools).await }
                    };
                    crate::telemetry::footprint::count_with(&mut rows, &surface.tools, &label, count).await
                }
                Err(error) => Err(error),
            };
            if let Err(error) = counted {
                notes.push(format!("--count-tokens: {label}'s footprint stays estimated: {error}"));
            }
        }
        *crate::mcp::sync::lock(slot) = (rows, notes);
    }

    /// Makes the up-front estimate before the first model call (once: the first layer to run
    /// makes it, over every trial of layers 1 and 2 it knows); the reason the run stops when it
    /// is over the budget.
    fn refuse(
        &self,
        set: &GoldenSet,
        surface: &crate::mcp::tools::ToolSurface,
        layer1: &crate::settings::layer1::Layer1Settings,
        in_layer1: bool,
    ) -> Option<String> {
        let limit = self.cost.as_deref()?;
        if limit.started() {
            return None;
        }
        let models: Vec<String> = layer1.models.iter().map(crate::settings::layer1::ModelRef::label).collect();
        let judge = layer1.judge_model.as_ref().map(|model| (model.label(), layer1.judge_samples));
        let mut trials = Vec::new();
        if in_layer1 {
            let judge = judge.as_ref().map(|(label, samples)| (label.as_str(), *samples));
            // A shard estimates its own slice of the case × model list.
            let keep = |case: usize, model: usize| {
                layer1.shard.is_none_or(|shard| shard.contains(case, model, layer1.models.len()))
            };
            trials = crate::telemetry::budget::plan(set, &surface.tools, &models, layer1.runs, judge, &keep);
        }
        if !in_layer1 || self.with_layer2 {
            // The variants layer 2 will run: the default suite sampled to its share of the call cap.
            let (variants, source) = crate::faults::variants(set);
            let runnable = crate::faults::sample::runnable_models(layer1, layer1.cassettes.is_some());
            let share = crate::faults::sample::share(set, layer1, runnable, in_layer1);
            let (variants, _) = crate::faults::sample::fit(set, variants, source, runnable, layer1.runs, share);
            let (variant_set, _) = crate::faults::variant_set(set, &variants);
            let every = |_: usize, _: usize| true;
            trials.extend(crate::telemetry::budget::plan(
                &variant_set,
                &surface.tools,
                &models,
                layer1.runs,
                None,
                &every,
            ));
        }
        let estimate = limit.estimate(&trials);
        (!limit.start(estimate)).then(|| {
            format!(
                "the estimated cost of the run, {} for {} trial(s), is over the cost budget of {} (--max-cost-usd): no model call was made",
                crate::report::telemetry_summary::usd(Some(estimate)),
                trials.len(),
                crate::report::telemetry_summary::usd(Some(limit.limit_usd()))
            )
        })
    }
}

/// The line saying the cost budget stopped the run.
fn budget_stop(budget: &crate::report::telemetry::BudgetSection) -> String {
    let usd = |value: f64| crate::report::telemetry_summary::usd(Some(value));
    match budget.stopped.as_deref() {
        Some("estimate") => format!(
            "the cost budget ({}, --max-cost-usd) stopped the run before any model call: the estimate was {}",
            usd(budget.max_cost_usd),
            crate::report::telemetry_summary::usd(budget.estimate_usd)
        ),
        _ => format!(
            "the cost budget ({}, --max-cost-usd) stopped the run: {} spent, {} call(s) not made, overshoot {}; the trials it cut are skipped",
            usd(budget.max_cost_usd),
            usd(budget.spent_usd),
            budget.calls_refused,
            usd(budget.overshoot_usd)
        ),
    }
}

/// Runs layer 2 over the open session ([`crate::faults::run`]): the user's golden set and models,
/// a budget of what `--max-model-calls` leaves after layer 1's `spent` calls, and (with
/// `after_layer1`, layer 1 ran first) a share of the cap planned as the cap less layer 1's most.
async fn layer2(
    settings: &Settings,
    golden: Option<&GoldenSet>,
    connected: &era::Connected,
    (spent, after_layer1): (u64, bool),
    limits: &Limits<'_>,
    events: &(dyn Fn(&RunEvent) + Sync),
) -> Result<crate::faults::Layer2, UserError> {
    use crate::report::layer2::ResilienceSection;
    let not_run = |reason: String| {
        events(&RunEvent::Notice { text: format!("layer 2 did not run: {reason}") });
        let resilience = ResilienceSection { not_run: Some(reason), ..ResilienceSection::default() };
        Ok(crate::faults::Layer2 { resilience, security: None })
    };
    // The demo's layer 2: its own golden set's entries, replayed from the cassettes in the binary.
    let demo_set;
    let mut demo_settings;
    let (set, layer1, cassettes) = if demo_layer1(settings, golden) {
        demo_settings = settings.layer1.clone();
        let cassettes;
        (demo_set, cassettes) = match demo_inputs(&mut demo_settings, &|_: &RunEvent| {}) {
            Ok(inputs) => inputs,
            Err(reason) => return not_run(reason),
        };
        demo_settings.runs = None;
        // The demo's recordings hold no layer-2 judge calls: its outcomes are code's.
        demo_settings.judge_model = None;
        events(&RunEvent::Notice {
            text: "layer 2 (demo): golden/demo.yaml's faults and payloads replayed from cassettes recorded from the demo model — no key, no network".into(),
        });
        (&demo_set, &demo_settings, Some(cassettes))
    } else {
        let Some(set) = golden else { return not_run("no golden set was given".into()) };
        (set, &settings.layer1, crate::trials::open_cassettes(&settings.layer1)?)
    };
    if limits.cost.as_deref().is_some_and(CostLimit::stopped) {
        return not_run("the cost budget (--max-cost-usd) stopped the run before layer 2".into());
    }
    let surface = match crate::conformance::list_tools_on(connected).await {
        Ok(surface) => surface,
        Err(problem) => return not_run(format!("the server's tools could not be listed: {problem}")),
    };
    limits.measure(&surface, layer1).await;
    if let Some(reason) = limits.refuse(set, &surface, layer1, false) {
        return not_run(reason);
    }
    let tools = crate::agent::tools::McpTools::new(connected.client.clone(), connected.era);
    // Layer 3 traces layer 2's trials.
    let traced = limits.spans.map(|spans| crate::telemetry::traced::Traced { spans, layer: 2 });
    let input = crate::trials::Layer1Input {
        settings: layer1,
        set,
        set_label: match &settings.action {
            Some(action) => crate::text::shown_path(&set.path, Some(&action.github.workspace)),
            None => crate::text::shown(&set.path),
        },
        surface: &surface,
        tools: &tools,
        today: set.today_at(Utc::now()),
        retry: crate::trials::caller::RetryPolicy::default(),
        cassettes: cassettes.clone(),
        cache: None,
        budget: std::sync::Arc::new(crate::trials::caller::Budget::with_cost(
            layer1.max_model_calls.saturating_sub(spent),
            limits.cost.clone(),
        )),
        wraps: traced.iter().map(|traced| traced as &dyn crate::agent::wrap::TrialWrap).collect(),
    };
    let models = crate::faults::sample::runnable_models(layer1, cassettes.is_some() || layer1.cassettes.is_some());
    let share = crate::faults::Share {
        allowance: crate::faults::sample::share(set, layer1, models, after_layer1),
        after_layer1,
    };
    let call_timeout_ms = u64::try_from(settings.timeout.as_millis()).unwrap_or(u64::MAX);
    let ran = crate::faults::run(&input, share, call_timeout_ms, events).await;
    // Recorded as layer 1's are: the files layer 1 wrote were read back when they were opened
    // again here, so saving keeps both.
    if let Some(cassettes) = cassettes.filter(|_| layer1.record) {
        save_cassettes(&cassettes, " (layer 2)", limits.cassettes_failed, events);
    }
    ran
}

/// Writes what `cassettes` recorded, a notice per file (`what` after its path); a failure is our
/// environment's (exit status 4), flagged in `failed`.
fn save_cassettes(
    cassettes: &crate::providers::cassette::Cassettes,
    what: &str,
    failed: &std::sync::atomic::AtomicBool,
    events: &(dyn Fn(&RunEvent) + Sync),
) {
    match cassettes.save() {
        Ok(paths) => {
            for path in paths {
                events(&RunEvent::Notice { text: format!("recorded {}{what}", path.display()) });
            }
        }
        Err(error) => {
            failed.store(true, std::sync::atomic::Ordering::SeqCst);
            events(&RunEvent::Failure { text: format!("error: the cassettes could not be written: {error}") });
        }
    }
}

/// Runs layer 1 over the open session, or says why it cannot run.
async fn layer1(
    settings: &Settings,
    golden: Option<&GoldenSet>,
    connected: &era::Connected,
    progress: &crate::trials::Progress,
    layer0: Option<&[crate::report::model::CheckResult]>,
    limits: &Limits<'_>,
    events: &(dyn Fn(&RunEvent) + Sync),
) -> Result<crate::report::evals::EvalsSection, UserError> {
    use crate::report::evals::EvalsSection;

    let not_run = |reason: String| {
        events(&RunEvent::Notice { text: format!("layer 1 did not run: {reason}") });
        // Which models were to run, and why (the schedule split), even so.
        let layer1_notes = settings.layer1.models_note.clone().into_iter().collect();
        Ok(EvalsSection { layer1_not_run: Some(reason), layer1_notes, ..EvalsSection::default() })
    };
    // The demo's layer 1: its own golden set, replayed from the cassettes in the binary.
    let demo = demo_layer1(settings, golden);
    let demo_set;
    let mut layer1 = settings.layer1.clone();
    let mut lowered = None;
    let (set, cassettes) = if demo {
        let cassettes;
        (demo_set, cassettes) = match demo_inputs(&mut layer1, events) {
            Ok(inputs) => inputs,
            Err(reason) => return not_run(reason),
        };
        // The recordings hold the set's own trials: more would be replay misses no one can record.
        let recorded =
            demo_set.cases.iter().map(|case| case.trials.runs).min().unwrap_or(crate::golden::DEFAULT_TRIALS);
        if let Some(runs) = layer1.runs.filter(|runs| *runs as usize > recorded) {
            let note = format!(
                "layer 1 (demo): --runs {runs} is lowered to {recorded}: the demo's recordings hold {recorded} trials per case"
            );
            events(&RunEvent::Notice { text: note.clone() });
            lowered = Some(note);
            layer1.runs = u32::try_from(recorded).ok();
        }
        (&demo_set, Some(cassettes))
    } else {
        let Some(set) = golden else { return not_run("no golden set was given".into()) };
        (set, crate::trials::open_cassettes(&layer1)?)
    };
    if layer1.record {
        events(&RunEvent::Notice {
            text: "recording: cassettes keep the prompts, the model's answers and the tool results of this run (bounded by nothing): review them before committing".into(),
        });
    }
    let surface = match crate::conformance::list_tools_on(connected).await {
        Ok(surface) => surface,
        Err(problem) => return not_run(format!("the server's tools could not be listed: {problem}")),
    };
    limits.measure(&surface, &layer1).await;
    if let Some(reason) = limits.refuse(set, &surface, &layer1, true) {
        return not_run(reason);
    }
    let tools = crate::agent::tools::McpTools::new(connected.client.clone(), connected.era);
    // When this run's verdicts were measured: the time the cache and the baseline both store,
    // so a verdict reused later is known for the baseline's own measurement.
    let measured_at = Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    // One budget for the whole evaluation: the first runs, the judge and the matchers, and every
    // confirmation re-run draw on it, so `--max-model-calls` is a cap on all of them.
    let budget =
        std::sync::Arc::new(crate::trials::caller::Budget::with_cost(layer1.max_model_calls, limits.cost.clone()));
    // Layer 3 traces layer 1's trials (and a confirmation re-run's).
    let traced = limits.spans.map(|spans| crate::telemetry::traced::Traced { spans, layer: 1 });
    let input = crate::trials::Layer1Input {
        settings: &layer1,
        set,
        set_label: match &settings.action {
            Some(action) => crate::text::shown_path(&set.path, Some(&action.github.workspace)),
            None => crate::text::shown(&set.path),
        },
        surface: &surface,
        tools: &tools,
        today: set.today_at(Utc::now()),
        retry: crate::trials::caller::RetryPolicy::default(),
        cassettes: cassettes.clone(),
        cache: cache_use(settings, &layer1, set, &measured_at, events),
        budget: budget.clone(),
        wraps: traced.iter().map(|traced| traced as &dyn crate::agent::wrap::TrialWrap).collect(),
    };
    let mut section = crate::trials::run(&input, progress, events).await?;
    if in_place_of_layer1(settings, &section, cassettes.is_some()) {
        section.expected_calls = Some(execute_in_place(settings, set, connected, &surface, events).await);
    }
    section.layer1_notes.extend(lowered);
    section.layer1_notes.extend(layer1.models_note.clone());
    if std::env::var_os(PANIC_FOR_TESTS_VAR).is_some_and(|value| value == PANIC_IN_LAYER1) {
        panic!("{PANIC_FOR_TESTS_VAR} is set to {PANIC_IN_LAYER1}");
    }
    if section.layer1_not_run.is_none() {
        // Answers replayed from cassettes (`--cassettes` without `--record`, or the demo): a
        // confirmation re-run would replay the same recorded answers, so there is none.
        let replayed = cassettes.is_some() && !layer1.record;
        let confirm =
            regression_gate(&mut section, &layer1, set, &surface, None, replayed, &measured_at, layer0, events);
        // The gate tripped: re-run only the cases that got worse (each its own runs again), pool
        // them into the evals and decide again.
        if !confirm.is_empty() {
            events(&RunEvent::Notice {
                text: format!(
                    "layer 1: the gate tripped; re-running {} worsened case(s) × model(s) to confirm",
                    confirm.len()
                ),
            });
            // A second plan over the worsened pairs only: a case that got worse on one model is
            // not re-run on the others; each runs its own number of trials again.
            let pairs: std::collections::BTreeSet<(String, String)> =
                confirm.iter().map(|key| (key.model.clone(), key.case.clone())).collect();
            let again = crate::trials::Layer1Input { cache: None, set_label: input.set_label.clone(), ..input };
            let rerun = crate::trials::confirm(&again, &pairs).await?;
            if rerun.call_cap_reached && !section.call_cap_reached {
                section.call_cap_reached = true;
                section.layer1_notes.push(format!(
                    "the model-call cap ({} calls, --max-model-calls) was reached during the confirmation re-run: the confirmation trials it cut did not run",
                    layer1.max_model_calls
                ));
            }
            let reruns = rerun.evals;
            // Every call of the evaluation: the first runs and the confirmation runs.
            section.model_calls = budget.used();
            section.replayed_model_calls = budget.replayed();
            let first = pool_reruns(&mut section, &reruns);
            let confirmed = crate::baseline::apply::Confirmed { first: &first, reruns: &reruns };
            regression_gate(&mut section, &layer1, set, &surface, Some(confirmed), false, &measured_at, layer0, events);
        }
    }
    if let Some(cassettes) = cassettes.filter(|_| layer1.record) {
        save_cassettes(&cassettes, "", limits.cassettes_failed, events);
    }
    Ok(section)
}

/// Whether the Action runs `golden check --execute` in place of layer 1: layer 1 was asked for,
/// and did not run because no model has a key (a fork's pull request gets no secrets), with no
/// cassettes to replay.
fn in_place_of_layer1(settings: &Settings, section: &crate::report::evals::EvalsSection, cassettes: bool) -> bool {
    use crate::report::evals::ModelOutcome;
    settings.action.is_some()
        && !cassettes
        && section.layer1_not_run.is_some()
        && !section.model_status.is_empty()
        && section.model_status.iter().all(|status| status.status == ModelOutcome::NoApiKey)
}

/// `golden check --execute` over the session layer 1 would have used: each expected call of
/// the set made once for real, no model; its lines kept (at most 200) for the report, a notice
/// with its summary.
async fn execute_in_place(
    settings: &Settings,
    set: &GoldenSet,
    connected: &era::Connected,
    surface: &crate::mcp::tools::ToolSurface,
    events: &(dyn Fn(&RunEvent) + Sync),
) -> crate::report::evals::ExpectedCalls {
    const MAX_LINES: usize = 200;
    let redactor = Redactor::new(settings.secrets());
    let mut lines: Vec<String> = Vec::new();
    let mut keep = |line: &str| {
        if lines.len() < MAX_LINES {
            lines.push(line.to_owned());
        }
    };
    let tally = crate::authoring::execute::run_into(set, connected, surface, &redactor, &mut keep).await;
    let calls = crate::report::evals::ExpectedCalls {
        expected: tally.expected,
        sent: tally.sent,
        ok: tally.ok,
        failed: tally.is_error + tally.rpc_error + tally.no_answer + tally.refused,
        not_executed: tally.not_executed,
        lines,
    };
    events(&RunEvent::Notice {
        text: format!("layer 1: no model key; {}", crate::report::evals::expected_calls_line(&calls)),
    });
    calls
}

/// The demo's layer 1: its own golden set and the cassettes in the binary, with `layer1`'s
/// models, judge and embeddings model replaced by the recorded ones (a notice names each
/// setting that is then ignored). `Err` says what of the binary is broken.
fn demo_inputs(
    layer1: &mut crate::settings::layer1::Layer1Settings,
    events: &(dyn Fn(&RunEvent) + Sync),
) -> Result<(GoldenSet, std::sync::Arc<crate::providers::cassette::Cassettes>), String> {
    use crate::settings::layer1::{Api, ModelRef, ProviderDef};
    let set = crate::golden::load::parse(std::path::Path::new("golden/demo.yaml"), DEMO_GOLDEN_SET)
        .map_err(|problems| format!("the demo golden set is broken: {}", problems[0]))?;
    let cassettes = crate::providers::cassette::Cassettes::from_texts(&[
        ("demo_scripted.json", DEMO_CASSETTES),
        ("demo_judge.json", DEMO_JUDGE_CASSETTES),
        ("demo_embeddings.json", DEMO_EMBEDDING_CASSETTES),
    ])
    .map_err(|error| format!("the demo cassettes are broken: {error}"))?;
    for note in demo_ignores(layer1) {
        events(&RunEvent::Notice { text: note });
    }

    layer1.models = vec![ModelRef { provider: "replay".into(), model: DEMO_RECORDED_MODEL.into() }];
    layer1.judge_model = Some(ModelRef { provider: "replay".into(), model: DEMO_RECORDED_JUDGE.into() });
    layer1.embedding_model = Some(ModelRef { provider: "replay".into(), model: DEMO_RECORDED_EMBEDDINGS.into() });
    if !layer1.providers.iter().any(|provider| provider.id == "replay") {
        layer1.providers.push(ProviderDef {
            id: "replay".into(),
            api: Api::Replay,
            base_url: String::new(),
            api_key_env: None,
            api_key: None,
        });
    }
    events(&RunEvent::Notice {
        text: "layer 1 (demo): golden/demo.yaml replayed from cassettes recorded from the demo model, a scripted stand-in for a good model — no key, no network".into(),
    });
    Ok((set, std::sync::Arc::new(cassettes)))
}

/// Pools the confirmation `reruns` into `section`'s evals (counts, threshold, traces: what the
/// report, JUnit and the summary show) and recomputes each model's metrics; returns the evals
/// as they were before, which the gate pairs with the baseline.
fn pool_reruns(
    section: &mut crate::report::evals::EvalsSection,
    reruns: &[crate::report::evals::EvalResult],
) -> Vec<crate::report::evals::EvalResult> {
    let first = section.evals.clone();
    for rerun in reruns {
        if let Some(eval) = section.evals.iter_mut().find(|eval| eval.case == rerun.case && eval.model == rerun.model) {
            crate::trials::assemble::pool_confirmation(eval, rerun);
        }
    }
    section.eval_metrics = section
        .models
        .iter()
        .filter(|model| section.eval_metrics.iter().any(|metrics| metrics.model == **model))
        .map(|model| {
            let own: Vec<&crate::report::evals::EvalResult> =
                section.evals.iter().filter(|eval| eval.model == *model).collect();
            crate::report::evals::metrics_of(model, &own)
        })
        .collect();
    first
}

/// Compares layer 1 with its baseline and gates it (`--fail-on-evals`), and stores this run as
/// the baseline when the Action runs on the default branch and the rules say so. Returns the
/// cases × models a confirmation re-run should repeat (then nothing is stored yet); none when
/// `reruns` are given, or when `replayed` (the answers come from cassettes: a re-run would
/// replay the same answers, so the decision stands unconfirmed and a gate line says so).
#[allow(clippy::too_many_arguments, reason = "one argument per input of the gate")]
fn regression_gate(
    section: &mut crate::report::evals::EvalsSection,
    layer1: &crate::settings::layer1::Layer1Settings,
    set: &GoldenSet,
    surface: &crate::mcp::tools::ToolSurface,
    reruns: Option<crate::baseline::apply::Confirmed<'_>>,
    replayed: bool,
    measured_at: &str,
    layer0: Option<&[crate::report::model::CheckResult]>,
    events: &(dyn Fn(&RunEvent) + Sync),
) -> Vec<crate::baseline::regression::CaseKey> {
    use crate::baseline::apply;
    let endpoint = |label: &str| layer1.endpoint_of(label);
    let (baseline, label, warning, stored_path) = apply::load_for(layer1);
    if let Some(warning) = warning {
        events(&RunEvent::Notice { text: format!("layer 1: {warning}") });
    }
    let specs = case_specs(set);
    let sees = |case: &str, tool: &str| specs.get(case).is_some_and(|spec| spec.sees(tool));
    let tools_now = surface.canonical_text();
    let (gate, confirm) = apply::gate_section(
        section,
        &baseline,
        label,
        &endpoint,
        layer1.fail_on_evals,
        layer1.max_drop,
        &tools_now,
        Some(&sees),
        reruns,
        layer0,
    );
    let sharded = layer1.shard.is_some();
    section.eval_gate = Some(gate);
    if sharded {
        // A shard holds a slice: the merge job gates and stores the whole run.
        if let Some(gate) = section.eval_gate.as_mut() {
            gate.fails = false;
            gate.lines.push("this is one shard: the merge job gates the whole run and stores its baseline".into());
        }
        return Vec::new();
    }
    // The policy `never` reports only: no confirmation re-run is worth its model calls.
    if reruns.is_none()
        && !confirm.is_empty()
        && layer1.fail_on_evals != crate::baseline::regression::FailOnEvals::Never
    {
        if !replayed && layer1.confirm {
            return confirm;
        }
        let why = if replayed {
            "the model's answers are replayed from cassettes, and a re-run would replay the same ones"
        } else {
            "confirmation is off (--confirm false)"
        };
        if let Some(gate) = section.eval_gate.as_mut() {
            gate.lines.push(format!(
                "the gate tripped and was not confirmed by a re-run ({} worsened case(s) × model(s)): {why}; the decision stands on the unconfirmed counts",
                confirm.len()
            ));
        }
    }
    if let (Some(context), Some(path)) = (&layer1.store_context, &stored_path) {
        apply::maybe_store(
            path,
            section,
            &endpoint,
            tools_now,
            &context.event,
            context.on_default_branch,
            layer1.accept_baseline,
            measured_at,
            layer0,
        );
    }
    Vec::new()
}

/// Each case of `set` as the agent loop reads it, by id: what the tool-surface diff asks which
/// cases see a tool.
fn case_specs(set: &GoldenSet) -> std::collections::BTreeMap<String, crate::agent::CaseSpec> {
    set.cases.iter().map(|case| (case.id.clone(), crate::agent::CaseSpec::from_case(case))).collect()
}

/// The regression gate of a merged report (the merge job of a shard matrix): the merged
/// verdicts against the stored baseline of the cache directory (or `--baseline FILE`), and the
/// baseline stored from the whole run when the rules say so. The tool-surface diff uses the
/// tools the shards listed (`tool_surface`) and, for the cases that see each tool, the golden
/// set (`--golden-set`, else the path the shards name) when it is at hand and has the shards'
/// hash. No confirmation re-run: the merge job runs no model; a tripped gate says so.
pub(crate) fn gate_merged(report: &mut RunReport, settings: &Settings) {
    use crate::baseline::apply;
    let layer1 = &settings.layer1;
    let checks = report.checks.clone();
    let has_layer0 = report.layers.contains(&0);
    let Some(section) = report.evals.as_mut().filter(|section| section.layer1_not_run.is_none()) else { return };
    let endpoint = |label: &str| layer1.endpoint_of(label);
    let (baseline, label, warning, stored_path) = apply::load_for(layer1);
    if let Some(warning) = warning {
        section.layer1_notes.push(warning);
    }
    let tools = match &section.tool_surface {
        Some(surface) => crate::mcp::tools::canonical(surface),
        None => {
            if baseline.tools.is_some() {
                section.layer1_notes.push(
                    "no tool-surface diff: the shards' reports hold no tool list (written by an older mcp-eval)".into(),
                );
            }
            baseline.tools.clone().unwrap_or_else(|| "[]".into())
        }
    };
    // The golden set, to say which cases see a changed tool: only the one the shards ran.
    let shards_hash = section.golden_set.as_ref().map(|set| set.sha256.clone());
    let ran_by_shards = |set: &GoldenSet| Some(&set.hash) == shards_hash.as_ref();
    // The set given (`--golden-set`), read once; else the one at the path the shards recorded.
    let given = settings.golden_set.as_ref().map(|path| crate::golden::load::load(path).ok().filter(ran_by_shards));
    let given_is_theirs = matches!(given, None | Some(Some(_)));
    let golden = given.flatten().or_else(|| {
        let recorded = section.golden_set.as_ref().map(|set| std::path::PathBuf::from(&set.path))?;
        crate::golden::load::load(&recorded).ok().filter(ran_by_shards)
    });
    if let (Some(path), false) = (&settings.golden_set, given_is_theirs) {
        section.layer1_notes.push(format!(
            "the golden set {} is not the one the shards ran (it does not load, or its hash is not {}): {}",
            path.display(),
            shards_hash.as_deref().unwrap_or("none"),
            if golden.is_some() {
                "the cases that see a changed tool are named from the set at the path the shards recorded"
            } else {
                "the cases that see a changed tool are not named"
            }
        ));
    }
    let specs = golden.as_ref().map(case_specs).unwrap_or_default();
    let sees = |case: &str, tool: &str| specs.get(case).is_some_and(|spec| spec.sees(tool));
    let layer0 = has_layer0.then_some(checks.as_slice());
    let (mut gate, to_confirm) = apply::gate_section(
        section,
        &baseline,
        label,
        &endpoint,
        layer1.fail_on_evals,
        layer1.max_drop,
        &tools,
        golden.is_some().then_some(&sees as crate::baseline::surface::Sees<'_>),
        None,
        layer0,
    );
    if !to_confirm.is_empty() {
        gate.lines.push(format!(
            "the gate tripped and was not confirmed by a re-run ({} worsened case(s) × model(s)): the merge job runs no model",
            to_confirm.len()
        ));
    }
    section.eval_gate = Some(gate);
    if let (Some(context), Some(path)) = (&layer1.store_context, &stored_path) {
        let measured_at = report.started_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        apply::maybe_store(
            path,
            section,
            &endpoint,
            tools,
            &context.event,
            context.on_default_branch,
            layer1.accept_baseline,
            &measured_at,
            layer0,
        );
    }
}

/// The verdict cache of this run, when one is asked for (`--cache-dir`, the Action's default)
/// and not `off`; the server key of `--cache-key auto` hashes the workspace as git would track
/// it ([`crate::cache::workspace_manifest`]), leaving out the golden set's directory and the
/// cache and report directories. With `auto`, a key that differs from the one of the manifest
/// stored last is a notice naming the paths that moved it (`read-write` only: `write-only`
/// reuses nothing anyway); an unreadable manifest is a short notice, a missing one says nothing.
fn cache_use(
    settings: &Settings,
    layer1: &crate::settings::layer1::Layer1Settings,
    set: &GoldenSet,
    measured_at: &str,
    events: &(dyn Fn(&RunEvent) + Sync),
) -> Option<crate::trials::CacheUse> {
    use crate::settings::layer1::CacheKeySetting;
    let dir = layer1.cache_dir.clone().filter(|_| layer1.cache_mode != crate::cache::Mode::Off)?;
    let store = crate::cache::VerdictCache::new(dir.clone(), layer1.cache_mode);
    let mut manifest = None;
    let server_key = match &layer1.cache_key {
        CacheKeySetting::None => None,
        CacheKeySetting::Text(text) => Some(text.clone()),
        CacheKeySetting::Auto => {
            let root = settings
                .action
                .as_ref()
                .map_or_else(|| std::path::PathBuf::from("."), |action| action.github.workspace.clone());
            let mut skip = vec![dir.clone(), settings.out_dir.clone()];
            // The golden set's directory (its rubric files live there too); the file itself when
            // it sits at the top of the workspace, where its directory is the whole workspace.
            match set.path.parent().filter(|parent| !parent.as_os_str().is_empty()) {
                Some(golden_dir) if golden_dir != root.as_path() && golden_dir != std::path::Path::new(".") => {
                    skip.push(golden_dir.to_path_buf());
                }
                _ => skip.push(set.path.clone()),
            }
            let clean = |path: &std::path::Path| -> std::path::PathBuf {
                path.components().filter(|part| !matches!(part, std::path::Component::CurDir)).collect()
            };
            let skip: Vec<std::path::PathBuf> =
                skip.iter().map(|path| root.join(clean(path.strip_prefix(&root).unwrap_or(path)))).collect();
            match crate::cache::workspace_manifest(&root, &skip) {
                Ok(now) => {
                    let last = store.last_manifest();
                    let reusing = layer1.cache_mode == crate::cache::Mode::ReadWrite;
                    let notice = match &last {
                        Ok(Some(before)) => now.moved_since(before),
                        Ok(None) => None,
                        Err(warning) => Some(format!("{warning}; the paths that moved the cache key are not named")),
                    };
                    if let Some(text) = notice.filter(|_| reusing) {
                        events(&RunEvent::Notice { text: format!("layer 1: {text}") });
                    }
                    let key = now.key.clone();
                    // Written again only when it says something new.
                    if !matches!(&last, Ok(Some(before)) if before.key == now.key) {
                        manifest = Some(now);
                    }
                    Some(key)
                }
                Err(error) => {
                    events(&RunEvent::Notice {
                        text: format!(
                            "layer 1: the workspace could not be hashed for the cache key ({error}); the verdict cache is not used"
                        ),
                    });
                    return None;
                }
            }
        }
    };
    Some(crate::trials::CacheUse { store, server_key, measured_at: measured_at.to_owned(), manifest })
}

/// How the run ended besides the report, for the exit status.
#[derive(Debug, Clone, Copy)]
struct Ending {
    /// Our environment failed (no port for the demo server, cassettes that could not be written).
    environment_failed: bool,
    /// Layer 1 refused its input (a tool the server does not list, too many tools).
    input_error: bool,
}

/// Redacts, writes the reports, asks the gate, and reports the end.
fn finish(
    settings: &Settings,
    report: RunReport,
    interrupt: Option<Interrupt>,
    ending: Ending,
    redactor: &Redactor,
    events: &(dyn Fn(&RunEvent) + Sync),
) -> Evaluation {
    let report = redact_report(report, redactor);
    if let Some(detail) = &report.outcome_detail {
        events(&RunEvent::EndedEarly {
            interrupted: report.outcome == RunOutcome::Interrupted,
            detail: detail.clone(),
            stderr_tail: report.server.stderr_tail.clone(),
        });
    }
    let mut report = report;
    let mut decision =
        verdict::decide(&report, VerdictInput { fail_on: settings.fail_on, interrupt, reports_failed: false });
    report.gate = Some(GateSection {
        fail_on: settings.fail_on.as_str().to_owned(),
        result: decision.result.as_str().to_owned(),
    });
    let written = write_reports(&report, settings).map_err(|error| {
        UserError::new(Kind::Environment, redactor.redact(&error.to_string())).with_hint(
            "check that the report directory (--out, input `report-path`) and --junit-path point to writable places with free space",
        )
    });
    if written.is_err() {
        decision.exit = decision.exit.max(verdict::ExitStatus::Environment);
    }
    if ending.environment_failed {
        decision.exit = decision.exit.max(verdict::ExitStatus::Environment);
    }
    if ending.input_error {
        decision.exit = decision.exit.max(verdict::ExitStatus::InvalidInput);
    }
    events(&RunEvent::Finished {
        counts: report.counts(),
        fail_on: settings.fail_on,
        failing: report
            .checks
            .iter()
            .filter(|check| check.status == crate::report::model::Status::Fail)
            .map(|check| check.id.clone())
            .collect(),
        decision,
        out_dir: written.as_ref().ok().map(|_| settings.out_dir_label.clone()),
        cases: report.evals.as_ref().filter(|_| report.layers.contains(&1)).map(|evals| {
            use crate::report::evals::EvalStatus;
            let count = |status: EvalStatus| evals.evals.iter().filter(|eval| eval.status == status).count();
            [count(EvalStatus::Pass), count(EvalStatus::Fail), count(EvalStatus::Error), count(EvalStatus::Skipped)]
        }),
        variants: report.resilience.as_ref().filter(|_| report.layers.contains(&2)).map(|resilience| {
            use crate::report::layer2::FaultStatus;
            let statuses: Vec<FaultStatus> = resilience
                .results
                .iter()
                .map(|result| result.status)
                .chain(report.security.iter().flat_map(|section| section.results.iter().map(|result| result.status)))
                .collect();
            let count = |status: FaultStatus| statuses.iter().filter(|each| **each == status).count();
            [count(FaultStatus::Pass), count(FaultStatus::Fail), count(FaultStatus::Inconclusive)]
        }),
    });
    Evaluation { report, written, decision }
}

/// Writes the three report files, junit.xml again where `junit_path` asks, and SARIF where
/// `sarif_path` asks.
fn write_reports(report: &RunReport, settings: &Settings) -> Result<WrittenFiles, report::WriteError> {
    let written = report::write_all(report, &settings.out_dir)?;
    if let Some((junit_path, _)) = &settings.junit_path {
        if !same_path(&written.junit_xml, junit_path) {
            report::write_junit(report, junit_path)?;
        }
    }
    if let Some((sarif_path, _)) = &settings.sarif_path {
        report::write_sarif(report, sarif_path, settings.sarif_location.as_ref())?;
    }
    Ok(written)
}

fn same_path(a: &Path, b: &Path) -> bool {
    let clean = |path: &Path| -> std::path::PathBuf {
        path.components().filter(|c| !matches!(c, std::path::Component::CurDir)).collect()
    };
    clean(a) == clean(b)
}

/// The layers to run: an explicit list, or `auto` (the default outside the Action): layer 0,
/// and layer 1 when a golden set or a model is given — or for the demo, which needs neither
/// (its layer 1 replays recorded cassettes). With only one of the two, layer 1 is asked for but
/// does not run: the run says which is missing (a notice, and `layer1_not_run`).
pub(crate) fn layers_outside_the_action(settings: &Settings) -> Vec<u8> {
    match &settings.layers {
        LayersInput::Auto if settings.server == Server::Demo && settings.golden_set.is_none() => vec![0, 1],
        LayersInput::Auto if settings.golden_set.is_some() || !settings.layer1.models.is_empty() => vec![0, 1],
        LayersInput::Auto => vec![0],
        LayersInput::Explicit(list) => list.clone(),
    }
}

/// The demo's golden set (`golden/demo.yaml`), built into the binary.
pub(crate) const DEMO_GOLDEN_SET: &str = include_str!("../../golden/demo.yaml");

/// The example price table the demo prices its scripted models with.
pub(crate) const DEMO_PRICES: &str = include_str!("../../golden/demo-prices.yaml");
/// Its path in the repository, as the report names it.
const DEMO_PRICES_PATH: &str = "golden/demo-prices.yaml";

/// The demo's cassettes: the demo model (`mcp-eval demo-model`, a scripted stand-in for a good
/// model) answering the demo golden set, recorded with `scripts/record-demo-cassettes.sh`.
pub(crate) const DEMO_CASSETTES: &str = include_str!("../../golden/cassettes/demo_scripted.json");

/// The label the demo's cassettes were recorded under.
pub(crate) const DEMO_RECORDED_MODEL: &str = "demo:scripted";

/// The demo's judge cassettes: the demo model judging the rubric case.
pub(crate) const DEMO_JUDGE_CASSETTES: &str = include_str!("../../golden/cassettes/demo_judge.json");

/// The label the demo's judge cassettes were recorded under.
pub(crate) const DEMO_RECORDED_JUDGE: &str = "demo:judge";

/// The demo's embeddings cassette: the demo model's bag-of-words vectors of the texts the
/// `embedding` matcher compares.
pub(crate) const DEMO_EMBEDDING_CASSETTES: &str = include_str!("../../golden/cassettes/demo_embeddings.json");

/// The label the demo's embeddings were recorded under.
pub(crate) const DEMO_RECORDED_EMBEDDINGS: &str = "demo:embeddings";

/// What the demo's layer 1 ignores of `layer1` (it replays its own judge and embeddings model),
/// one notice each: `--judge-model` and `--embedding-model` given with `--demo`.
fn demo_ignores(layer1: &crate::settings::layer1::Layer1Settings) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(judge) = &layer1.judge_model {
        notes.push(format!(
            "layer 1 (demo): --judge-model {} is ignored: the demo replays its own recorded judge (replay:{DEMO_RECORDED_JUDGE}); give --golden-set and --model to use your judge",
            judge.label()
        ));
    }
    if let Some(embeddings) = &layer1.embedding_model {
        notes.push(format!(
            "layer 1 (demo): --embedding-model {} is ignored: the demo replays its own recorded embeddings (replay:{DEMO_RECORDED_EMBEDDINGS}); give --golden-set and --model to use yours",
            embeddings.label()
        ));
    }
    notes
}

/// True when layer 1 of this run is the demo's: the embedded demo server with neither a golden
/// set nor a model given.
fn demo_layer1(settings: &Settings, golden: Option<&GoldenSet>) -> bool {
    settings.server == Server::Demo && golden.is_none() && settings.layer1.models.is_empty()
}

/// The wire target of `settings`, starting the demo server when asked.
/// The wire target of a server given by URL or command; `None` for the demo server, which
/// [`evaluate`] starts itself.
pub(crate) fn wire_target(settings: &Settings) -> Option<Target> {
    match &settings.server {
        Server::Command(command) => Some(Target::Stdio {
            command: command.clone(),
            env: settings.server_env.clone(),
            timeout: settings.timeout,
        }),
        Server::Url(url) => Some(Target::Http(HttpSettings {
            url: url.clone(),
            extra_headers: settings.headers.clone(),
            timeout: settings.timeout,
        })),
        Server::Demo => None,
    }
}

async fn target_of(settings: &Settings, demo_task: &mut Option<DemoTask>) -> Result<Target, UserError> {
    if let Some(target) = wire_target(settings) {
        if let Target::Http(http) = &target {
            // An `https://` server needs CA certificates to be trusted; an `http://` one none.
            if url::Url::parse(&http.url).is_ok_and(|url| url.scheme() == "https") {
                crate::mcp::tls::roots()
                    .require()
                    .map_err(|error| UserError::new(Kind::Environment, error.to_string()))?;
            }
        }
        return Ok(target);
    }
    // The embedded demo server, started on loopback for this run.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.map_err(|error| {
        UserError::new(Kind::Environment, "cannot start the demo server on 127.0.0.1").caused_by(error)
    })?;
    let address = listener
        .local_addr()
        .map_err(|error| UserError::new(Kind::Environment, "cannot read the demo server's address").caused_by(error))?;
    let task = tokio::spawn(crate::demo::serve_http(listener, Arc::new(crate::demo::DemoConfig::default())));
    *demo_task = Some(DemoTask(task));
    Ok(Target::Http(HttpSettings {
        url: format!("http://{address}/mcp"),
        extra_headers: settings.headers.clone(),
        timeout: settings.timeout,
    }))
}

/// The embedded demo server's task, aborted when dropped.
struct DemoTask(tokio::task::JoinHandle<std::io::Result<()>>);

impl Drop for DemoTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The text of a panic payload.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into())
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// A last pass over every string of the report, so no secret can reach a file.
fn redact_report(mut report: RunReport, redactor: &Redactor) -> RunReport {
    for check in &mut report.checks {
        check.message = redactor.redact(&check.message);
        for evidence in &mut check.evidence {
            evidence.text = redactor.redact(&evidence.text);
        }
    }
    if let Some(detail) = &report.outcome_detail {
        report.outcome_detail = Some(redactor.redact(detail));
    }
    if let Some(tail) = &report.server.stderr_tail {
        report.server.stderr_tail = Some(redactor.redact(tail));
    }
    report.server.target = redactor.redact(&report.server.target);
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::layer1::{Layer1Settings, ModelRef};

    fn model(label: &str) -> ModelRef {
        let (provider, model) = label.split_once(':').expect("PROVIDER:MODEL");
        ModelRef { provider: provider.into(), model: model.into() }
    }

    #[test]
    fn the_demo_says_it_ignores_a_judge_and_an_embeddings_model_given_to_it() {
        assert!(demo_ignores(&Layer1Settings::default()).is_empty(), "nothing given, nothing ignored");
        let given = Layer1Settings {
            judge_model: Some(model("openai:gpt-4o")),
            embedding_model: Some(model("openai:text-embedding-3-small")),
            ..Layer1Settings::default()
        };
        let notes = demo_ignores(&given);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].contains("--judge-model openai:gpt-4o is ignored"), "{notes:?}");
        assert!(notes[1].contains("--embedding-model openai:text-embedding-3-small is ignored"), "{notes:?}");
    }

    #[test]
    fn a_model_graded_matcher_without_its_model_is_a_problem_at_its_line() {
        let text = "version: 1\ncases:\n  - id: a\n    prompt: p\n    expect_tool: t\n    expect_args:\n      city: {match: embedding, value: Paris}\n      note: {match: judge, value: a greeting}\n";
        let set = crate::golden::load::parse(std::path::Path::new("golden.yaml"), text).expect("valid set");
        let mut layer1 = Layer1Settings { models: vec![model("openai:gpt-4o")], ..Layer1Settings::default() };
        let problems: Vec<String> = unconfigured_matchers(&set, &layer1)
            .iter()
            .map(|problem| format!("{problem} / {}", problem.hint))
            .collect();
        assert_eq!(problems.len(), 2, "{problems:#?}");
        assert!(
            problems[0].contains("golden.yaml:7:13") && problems[0].contains("--embedding-model"),
            "{}",
            problems[0]
        );
        assert!(problems[1].contains("golden.yaml:8:13") && problems[1].contains("--judge-model"), "{}", problems[1]);

        layer1.embedding_model = Some(model("openai:text-embedding-3-small"));
        layer1.judge_model = Some(model("openai:gpt-4.1"));
        assert!(unconfigured_matchers(&set, &layer1).is_empty(), "both models given");
        let without_models = Layer1Settings::default();
        assert!(unconfigured_matchers(&set, &without_models).is_empty(), "layer 1 does not run without a model");
    }
}
