//! Layer 1: a golden set run through models against the server under test. For every model
//! asked for, every case, every run: the agent loop ([`crate::agent`]) with real `tools/call`s,
//! scored by [`crate::scoring`], assembled into the report's layer-1 section ([`assemble`]).
//!
//! - A model whose key is unset or empty is "not run: no API key" (never a failure).
//! - Each model's first run goes first, and its other runs wait for that run's first model call:
//!   a provider that refuses it (401/403, unknown model, out of quota, unreachable) is unusable
//!   (exit status 5) and its other runs do not run.
//! - Runs go concurrently up to `--concurrency`; a case with `sequential_runs` runs its runs one
//!   after another. Every model call counts against `--max-model-calls` (exit status 6 when the
//!   cap stopped the run; the cases it cut are `skipped`).
//! - Runs spoiled by the provider (still failing after the retries) are `error`, never `fail`,
//!   and are tried once more at the end.
//! - `embedding` and `judge` argument matchers are resolved after each run, before scoring, by
//!   the embeddings model and the judge ([`semantic`]); a case that needs one of them while it
//!   cannot run (no API key) is `skipped`.
//! - Before any model call, every tool name of the set is checked against the server's
//!   `tools/list`, and a case that would offer more tools than the provider accepts is refused:
//!   both are input errors (exit status 2) naming the case.

pub(crate) mod assemble;
pub(crate) mod caller;
pub(crate) mod semantic;

/// The `model_status.detail` of a model whose key variable `variable` (e.g. `OPENAI_API_KEY`) is
/// unset or empty: what to do about it — set the variable (or the Action input that fills it), or
/// replay recorded answers — and why it happens on pull requests from forks.
pub(crate) fn no_key_detail(variable: &str) -> String {
    let input = match variable {
        "OPENAI_API_KEY" => Some(crate::settings::env_vars::INPUT_OPENAI_API_KEY),
        "ANTHROPIC_API_KEY" => Some(crate::settings::env_vars::INPUT_ANTHROPIC_API_KEY),
        _ => None,
    };
    let set = match input {
        Some(input) => format!("set `{variable}` (in the Action, the input `{input}` from a secret)"),
        None => format!("set `{variable}`"),
    };
    format!(
        "`{variable}` is unset or empty: {set}, or replay recorded answers with `--cassettes DIR` (command line); pull requests from forks and Dependabot get no secrets"
    )
}

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use chrono::NaiveDate;
use futures_util::StreamExt as _;

use crate::agent::tools::ToolExecutor;
use crate::agent::{self, ArgumentCheck, CaseSpec, RunContext, RunEnding, RunRecord};
use crate::error::{Kind, UserError};
use crate::events::RunEvent;
use crate::golden::GoldenSet;
use crate::mcp::sync::lock;
use crate::mcp::tools::ToolSurface;
use crate::providers::anthropic::AnthropicProvider;
use crate::providers::cassette::Cassettes;
use crate::providers::names::{NameRule, ToolNames};
use crate::providers::openai::{self, OpenAiProvider};
use crate::providers::schema::{self, ArgumentValidator, Family, Validation};
use crate::providers::{EndpointConfig, Provider, ProviderError, ToolSpec};
use crate::report::evals::{
    EvalsSection, GoldenSetInfo, JudgeTrace, JudgedCriterion, ModelOutcome, ModelStatus, ShardInfo,
};
use crate::scoring::judge;
use crate::settings::layer1::{Api, Layer1Settings, ModelRef, ProviderDef, Shard};
use caller::{Budget, LiveModel, RetryPolicy, Source};

/// How long one model request may take, connection included.
pub(crate) const MODEL_REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

/// What layer 1 runs on.
pub(crate) struct Layer1Input<'a> {
    /// Models, providers, limits.
    pub settings: &'a Layer1Settings,
    /// The golden set, checked.
    pub set: &'a GoldenSet,
    /// The golden set's path as the user wrote it.
    pub set_label: String,
    /// The server's tools (every `tools/list` page).
    pub surface: &'a ToolSurface,
    /// Tool calls on the server.
    pub tools: &'a dyn ToolExecutor,
    /// The run's start date, for relative `datetime` matchers.
    pub today: NaiveDate,
    /// Replaces the default retry policy (tests).
    pub retry: RetryPolicy,
    /// Cassettes to replay from, or record into (`settings.record`).
    pub cassettes: Option<Arc<Cassettes>>,
    /// The verdict cache, when one is used.
    pub cache: Option<CacheUse>,
    /// The evaluation's one model-call budget (`--max-model-calls`), shared by every call of
    /// this run — trials, the judge, argument matchers, embeddings — and by any confirmation
    /// re-run given the same budget: the cap holds for the whole evaluation.
    pub budget: Arc<Budget>,
}

/// The verdict cache as a run uses it.
#[derive(Debug, Clone)]
pub(crate) struct CacheUse {
    /// The store.
    pub store: crate::cache::VerdictCache,
    /// The server key (`--cache-key`), when there is one.
    pub server_key: Option<String>,
    /// When this run started (RFC 3339): what a stored verdict says it was measured at.
    pub measured_at: String,
    /// The workspace manifest of `--cache-key auto` to write once this run stores or reuses a
    /// verdict ([`crate::cache::VerdictCache::put_manifest`]); `None` with another key, or when
    /// the manifest stored last has this run's key already.
    pub manifest: Option<crate::cache::Manifest>,
}

/// What layer 1 has finished so far, shared with the caller: a signal that stops the run
/// (SIGINT/SIGTERM drops the layer's future) still reports every finished run
/// ([`Progress::interrupted`]).
#[derive(Default)]
pub(crate) struct Progress(std::sync::Mutex<Option<Snapshot>>);

/// The parts [`assemble::fill`] needs, owned.
struct Snapshot {
    section: EvalsSection,
    set: GoldenSet,
    specs: Vec<CaseSpec>,
    models: Vec<(usize, String, Arc<LiveModel>)>,
    records: BTreeMap<(usize, usize), Vec<RunRecord>>,
    runs_override: Option<u32>,
    today: NaiveDate,
    trace_results: crate::settings::layer1::TraceResults,
    budget: Arc<Budget>,
    reused: BTreeMap<(usize, usize), crate::report::evals::EvalResult>,
    shard: Option<(Shard, usize)>,
}

impl Progress {
    fn begin(&self, snapshot: Snapshot) {
        *lock(&self.0) = Some(snapshot);
    }

    fn add(&self, key: (usize, usize), done: Vec<RunRecord>) {
        if let Some(snapshot) = lock(&self.0).as_mut() {
            snapshot.records.entry(key).or_default().extend(done);
        }
    }

    fn replace(&self, key: (usize, usize), record: RunRecord) {
        if let Some(runs) = lock(&self.0).as_mut().and_then(|snapshot| snapshot.records.get_mut(&key)) {
            if let Some(old) = runs.iter_mut().find(|run| run.run == record.run) {
                let spent = old.model_calls;
                *old = RunRecord { model_calls: record.model_calls + spent, ..record };
            }
        }
    }

    fn records(&self) -> BTreeMap<(usize, usize), Vec<RunRecord>> {
        lock(&self.0).as_ref().map(|snapshot| snapshot.records.clone()).unwrap_or_default()
    }

    /// The layer-1 section of the runs finished before `signal` stopped the run — a signal
    /// (`SIGINT`) or a panic, named in a note — (cases with runs missing are `skipped`); `None`
    /// when no model had started.
    pub(crate) fn interrupted(&self, signal: &str) -> Option<EvalsSection> {
        let mut guard = lock(&self.0);
        let snapshot = guard.as_mut()?;
        let mut section = snapshot.section.clone();
        section.model_calls = snapshot.budget.used();
        section.layer1_notes.push(format!("{signal} stopped layer 1: the cases with runs missing are skipped"));
        let models: Vec<(usize, String, &LiveModel)> =
            snapshot.models.iter().map(|(index, label, caller)| (*index, label.clone(), caller.as_ref())).collect();
        for runs in snapshot.records.values_mut() {
            runs.sort_by_key(|run| run.run);
        }
        assemble::fill(
            &mut section,
            &assemble::Inputs {
                set: &snapshot.set,
                specs: &snapshot.specs,
                models: &models,
                records: &snapshot.records,
                runs_override: snapshot.runs_override,
                today: snapshot.today,
                trace_results: snapshot.trace_results,
                cut: assemble::Cut::Interrupted,
                reused: &snapshot.reused,
                shard: snapshot.shard,
            },
        );
        Some(section)
    }
}

/// One model ready to run.
struct Ready {
    index: usize,
    label: String,
    api: Api,
    caller: Arc<LiveModel>,
}

/// Runs layer 1. An `Err` is an input error (exit status 2): an unknown tool name, too many
/// tools for a provider.
pub(crate) async fn run(
    input: &Layer1Input<'_>,
    progress: &Progress,
    events: &(dyn Fn(&RunEvent) + Sync),
) -> Result<EvalsSection, UserError> {
    let set = input.set;
    let listed: Vec<&str> = input.surface.tools.iter().map(|tool| tool.name.as_str()).collect();
    let unknown = crate::golden::unknown_tools(set, &listed);
    if !unknown.is_empty() {
        let count = unknown.len();
        let lines: Vec<String> = unknown.into_iter().map(|problem| problem.into_error().to_string()).collect();
        return Err(UserError::new(
            Kind::InvalidInput,
            format!("the golden set names {count} tool(s) the server does not list:\n{}", lines.join("\n")),
        )
        .with_hint("fix the names in the golden set (MCP names, as `tools/list` gives them)"));
    }
    let mut specs: Vec<CaseSpec> = set.cases.iter().map(CaseSpec::from_case).collect();
    let mut section = EvalsSection {
        golden_set: Some(GoldenSetInfo {
            path: input.set_label.clone(),
            sha256: set.hash.clone(),
            cases: set.cases.len(),
            today: Some(input.today.to_string()),
            timezone: Some(set.timezone().name().to_owned()),
        }),
        models: input.settings.models.iter().map(ModelRef::label).collect(),
        shard: input.settings.shard.map(|shard| ShardInfo { index: shard.index, count: shard.count }),
        // The tools it saw: a later run given this report as `--baseline`, and the merge job of
        // shards, diff them against their own.
        tool_surface: serde_json::from_str(&input.surface.canonical_text()).ok(),
        ..EvalsSection::default()
    };
    // With `--shard`, only the pairs of its slice run (and are reported).
    let shard = input.settings.shard.map(|shard| (shard, input.settings.models.len()));
    let in_shard = |case: usize, model: usize| shard.is_none_or(|(shard, models)| shard.contains(case, model, models));
    if input.settings.models.is_empty() {
        section.layer1_not_run = Some("no model was given (--model PROVIDER:MODEL, Action input `models`)".into());
        return Ok(section);
    }
    let budget = input.budget.clone();
    let mut ready = Vec::new();
    for (index, model) in input.settings.models.iter().enumerate() {
        let label = model.label();
        let Some(def) = input.settings.provider(model) else {
            let detail = format!("no provider `{}` is defined", model.provider);
            events(&RunEvent::ProviderUnusable { model: label.clone(), detail: detail.clone() });
            section.model_status.push(ModelStatus {
                model: label.clone(),
                status: ModelOutcome::Unusable,
                detail: Some(detail),
            });
            continue;
        };
        match model_source(def, model, input.settings, input.cassettes.as_ref()) {
            Ok(Some(source)) => {
                let caller = Arc::new(LiveModel::new(label.clone(), source, budget.clone(), input.retry));
                ready.push(Ready { index, label, api: def.api, caller });
            }
            Ok(None) => {
                let detail = no_key_detail(def.api_key_env.as_deref().unwrap_or_default());
                events(&RunEvent::Notice { text: format!("layer 1: {label}: not run, no API key: {detail}") });
                section.model_status.push(ModelStatus {
                    model: label,
                    status: ModelOutcome::NoApiKey,
                    detail: Some(detail),
                });
            }
            Err(error) => {
                let detail = format!("cannot use the provider: {error}");
                events(&RunEvent::ProviderUnusable { model: label.clone(), detail: detail.clone() });
                section.model_status.push(ModelStatus {
                    model: label,
                    status: ModelOutcome::Unusable,
                    detail: Some(detail),
                });
            }
        }
    }

    // What each case offers each wire (schemas lowered for the provider, names checked), before
    // any call.
    let mut offered: BTreeMap<(usize, usize), Vec<ToolSpec>> = BTreeMap::new();
    let mut lowered_notes = std::collections::BTreeSet::new();
    for model in &ready {
        let family = match model.api {
            Api::Anthropic => Family::Anthropic,
            Api::OpenAi | Api::Replay => Family::OpenAi,
        };
        let mut lowered: BTreeMap<&str, ToolSpec> = BTreeMap::new();
        for tool in &input.surface.tools {
            let result = schema::lower(&tool.input_schema, family);
            // Dropped keywords (`$defs` once inlined, `x-*` annotations) and an added empty
            // `properties` change nothing a model reads: only the other changes are worth a note.
            for note in result
                .notes
                .iter()
                .filter(|note| !note.starts_with("removed `") && !note.starts_with("the root had no `properties`"))
            {
                lowered_notes.insert(format!("{}: tool `{}`: {note}", model.label, tool.name));
            }
            lowered.insert(&tool.name, ToolSpec { input_schema: result.schema, ..ToolSpec::from(tool) });
        }
        let rule = if model.api == Api::Anthropic { NameRule::ANTHROPIC } else { NameRule::OPENAI };
        if let Ok(names) = ToolNames::new(input.surface.tools.iter().map(|tool| tool.name.as_str()), rule) {
            let renamed: Vec<String> =
                names.renamed().iter().map(|rename| format!("`{}` → `{}`", rename.mcp, rename.wire)).collect();
            if !renamed.is_empty() {
                section.layer1_notes.push(format!(
                    "{}: {} tool name(s) rewritten for the provider (the model sees the new names): {}",
                    model.label,
                    renamed.len(),
                    renamed.join(", ")
                ));
            }
        }
        for (case_index, case) in specs.iter().enumerate() {
            let tools: Vec<ToolSpec> =
                lowered.iter().filter(|(name, _)| case.sees(name)).map(|(_, spec)| spec.clone()).collect();
            if model.api == Api::OpenAi && tools.len() > openai::MAX_TOOLS {
                return Err(UserError::new(
                    Kind::InvalidInput,
                    format!(
                        "case `{}` would offer {} tools to {}; OpenAI accepts at most {}",
                        case.id,
                        tools.len(),
                        model.label,
                        openai::MAX_TOOLS
                    ),
                )
                .with_hint("narrow what the model sees with the case's `tools:` field (or `defaults.tools`), e.g. `tools: [\"search_*\"]`"));
            }
            offered.insert((model.index, case_index), tools);
        }
    }
    section.layer1_notes.extend(lowered_notes);

    if ready.is_empty() {
        let why: Vec<String> = section
            .model_status
            .iter()
            .map(|status| match status.status {
                ModelOutcome::NoApiKey => format!("{}: no API key", status.model),
                _ => format!("{}: {}", status.model, status.detail.as_deref().unwrap_or("unusable")),
            })
            .collect();
        section.layer1_not_run = Some(format!("no model could run ({})", why.join("; ")));
        return Ok(section);
    }
    // The rubric judge, when one is given: rubric-only cases then run too.
    let judge_caller: Option<Arc<LiveModel>> = input.settings.judge_model.as_ref().and_then(|model| {
        let label = model.label();
        let source = input
            .settings
            .provider(model)
            .map(|def| model_source(def, model, input.settings, input.cassettes.as_ref()));
        match source {
            Some(Ok(Some(source))) => Some(Arc::new(LiveModel::new(label, source, budget.clone(), input.retry))),
            Some(Ok(None)) => {
                let variable = input.settings.provider(model).and_then(|def| def.api_key_env.clone());
                let how = variable.map(|variable| format!(" ({})", no_key_detail(&variable))).unwrap_or_default();
                section
                    .layer1_notes
                    .push(format!("the judge {label} did not run: no API key{how}; rubrics are not graded"));
                None
            }
            Some(Err(error)) => {
                section.layer1_notes.push(format!("the judge {label} cannot be used: {error}; rubrics are not graded"));
                None
            }
            None => None,
        }
    });
    let rubrics: Vec<Option<judge::Rubric>> =
        set.cases.iter().map(|case| case.resolved.get("rubric").and_then(judge::Rubric::from_resolved)).collect();
    // The judge's calibration (`--judge-calibration`): read even when no judge runs, so a bad
    // file is an input error either way.
    let calibration = match &input.settings.judge_calibration {
        Some(path) => Some((crate::calibration::load(path)?, crate::text::shown(path))),
        None => None,
    };
    if judge_caller.is_none() && input.settings.judge_samples > 1 {
        section.layer1_notes.push(format!(
            "--judge-samples {} is not used: no judge model grades rubrics (--judge-model)",
            input.settings.judge_samples
        ));
    }
    let calibration_note = match (&judge_caller, &calibration) {
        (None, Some((_, name))) => {
            section.layer1_notes.push(format!("--judge-calibration {name} is not used: no judge graded rubrics"));
            String::new()
        }
        (None, None) => String::new(),
        (Some(_), None) => {
            "; judge pass rates are uncalibrated (no --judge-calibration file; `mcp-eval judge calibrate` measures one)"
                .to_owned()
        }
        (Some(judge), Some((file, name))) => match crate::calibration::mismatch(file, judge.label()) {
            Some(reason) => format!("; judge pass rates are uncalibrated: {name}: {reason}"),
            None if file.tpr + file.tnr <= 1.0 => format!(
                "; judge pass rates are not corrected: {name} measured this judge no better than chance (TPR {:.2}, TNR {:.2}, n = {} + {})",
                file.tpr, file.tnr, file.positives, file.negatives
            ),
            None => format!(
                "; judge pass rates are also given Rogan–Gladen corrected with {name} (TPR {:.2}, TNR {:.2}, n = {} + {}, measured {}){}",
                file.tpr,
                file.tnr,
                file.positives,
                file.negatives,
                file.measured_at,
                if crate::calibration::same_rubrics(file, set) {
                    ""
                } else {
                    "; ⚠️ it was measured on other rubrics than this golden set's: measure again"
                }
            ),
        },
    };
    if let Some(judge) = &judge_caller {
        for (spec, rubric) in specs.iter_mut().zip(&rubrics) {
            if rubric.is_some() {
                spec.deferred = None;
            }
        }
        let judged_by_itself = input.settings.models.iter().any(|model| model.label() == judge.label());
        section.layer1_notes.push(format!(
            "rubrics judged by {} ({} sample(s) per run, majority vote; judge prompt v{}){}{calibration_note}",
            judge.label(),
            input.settings.judge_samples,
            judge::JUDGE_PROMPT_VERSION,
            if judged_by_itself {
                "; ⚠️ it also is a model under test: it judges its own runs (--allow-self-judge)"
            } else {
                ""
            }
        ));
    }
    // The models of `embedding` and `judge` argument matchers.
    let embedder = input.settings.embedding_model.as_ref().and_then(|model| {
        let label = model.label();
        let Some(def) = input.settings.provider(model) else {
            section
                .layer1_notes
                .push(format!("the embeddings model {label} cannot be used: no provider `{}`", model.provider));
            return None;
        };
        match embed_source(def, model, input) {
            Ok(Some(source)) => {
                let recorded_as = if def.api == Api::Replay { model.model.clone() } else { label };
                Some(semantic::Embedder::new(recorded_as, source, budget.clone(), input.retry))
            }
            Ok(None) => {
                let how = def
                    .api_key_env
                    .as_deref()
                    .map(|variable| format!(" ({})", no_key_detail(variable)))
                    .unwrap_or_default();
                section.layer1_notes.push(format!("the embeddings model {label} did not run: no API key{how}"));
                None
            }
            Err(error) => {
                section.layer1_notes.push(format!("the embeddings model {label} cannot be used: {error}"));
                None
            }
        }
    });
    for (spec, case) in specs.iter_mut().zip(&set.cases) {
        let uses = |mode: &str| case.semantic.iter().any(|matcher| matcher.mode == mode);
        if spec.deferred.is_some() {
            continue;
        }
        if uses("embedding") && embedder.is_none() {
            spec.deferred =
                Some("its `embedding` matchers need the embeddings model, which cannot run (see the notes)".into());
        } else if uses("judge") && judge_caller.is_none() {
            spec.deferred = Some("its `judge` matchers need the judge model, which cannot run (see the notes)".into());
        }
    }
    let uses_mode = |mode: &str| set.cases.iter().flat_map(|case| &case.semantic).any(|matcher| matcher.mode == mode);
    if let Some(embedder) = embedder.as_ref().filter(|_| uses_mode("embedding")) {
        section.layer1_notes.push(format!(
            "`embedding` matchers graded by {} (the cosine of the two texts' embeddings against the matcher's threshold, default {})",
            embedder.label(),
            crate::scoring::matchers::EMBEDDING_THRESHOLD
        ));
    }
    if let Some(judge) = judge_caller.as_ref().filter(|_| uses_mode("judge")) {
        section.layer1_notes.push(format!(
            "`judge` matchers graded by {} (argument prompt v{}; `unknown` counts as a failure)",
            judge.label(),
            crate::scoring::semantic::ARGUMENT_JUDGE_PROMPT_VERSION
        ));
    }
    let semantic = semantic::Semantic { embedder, judge: judge_caller.clone().map(semantic::ArgumentJudge::new) };
    let semantic = &semantic;
    let judge_for = |case_index: usize| -> Option<(Judge<'_>, &judge::Rubric)> {
        let caller = judge_caller.as_deref()?;
        Some((Judge { caller, samples: input.settings.judge_samples.max(1) }, rubrics[case_index].as_ref()?))
    };
    let checker = SchemaCheck::new(input.surface);
    let mut unusable: BTreeMap<usize, String> = BTreeMap::new();
    progress.begin(Snapshot {
        section: section.clone(),
        set: set.clone(),
        specs: specs.clone(),
        models: ready.iter().map(|model| (model.index, model.label.clone(), model.caller.clone())).collect(),
        records: BTreeMap::new(),
        runs_override: input.settings.runs,
        today: input.today,
        trace_results: input.settings.trace_results,
        budget: budget.clone(),
        reused: BTreeMap::new(),
        shard,
    });
    let runnable: Vec<usize> = (0..specs.len()).filter(|&index| specs[index].deferred.is_none()).collect();
    let runs_of = |case: &CaseSpec| input.settings.runs.map_or(case.runs, |runs| runs as usize);
    let context_for = |model: &Ready, case_index: usize| -> (Arc<LiveModel>, Vec<ToolSpec>) {
        (model.caller.clone(), offered.get(&(model.index, case_index)).cloned().unwrap_or_default())
    };

    // Verdicts the cache holds for exactly this case, tool surface, model, endpoint, runs and
    // server key are reused: those cases × models are not run at all.
    let mut reused: BTreeMap<(usize, usize), crate::report::evals::EvalResult> = BTreeMap::new();
    let mut keys: BTreeMap<(usize, usize), crate::cache::CacheKey> = BTreeMap::new();
    if let Some(cache) = &input.cache {
        for model in &ready {
            let Some(def) = input.settings.provider(&input.settings.models[model.index]) else { continue };
            for &case_index in runnable.iter().filter(|&&case_index| in_shard(case_index, model.index)) {
                let spec = &specs[case_index];
                let tools =
                    crate::cache::tool_fingerprint(input.surface.tools.iter().filter(|tool| spec.sees(&tool.name)));
                let key = crate::cache::CacheKey::new(&crate::cache::KeyParts {
                    case_sha256: &set.cases[case_index].hash,
                    tools: &tools,
                    model: &model.label,
                    wire: wire_name(def.api),
                    base_url: &def.base_url,
                    runs: runs_of(spec),
                    server_key: cache.server_key.as_deref(),
                    judge: judge_caller.as_ref().filter(|_| rubrics[case_index].is_some()).map(|judge| {
                        format!(
                            "{}|samples {}|prompt v{}",
                            judge.label(),
                            input.settings.judge_samples,
                            judge::JUDGE_PROMPT_VERSION
                        )
                    }),
                    matchers: matcher_key(&set.cases[case_index], input.settings),
                });
                match cache.store.get(&key) {
                    Ok(Some((mut eval, from))) => {
                        eval.cached = Some(from);
                        reused.insert((model.index, case_index), eval);
                    }
                    Ok(None) => {}
                    Err(warning) => events(&RunEvent::Notice { text: format!("layer 1: {warning}") }),
                }
                keys.insert((model.index, case_index), key);
            }
        }
    }
    if let Some(snapshot) = lock(&progress.0).as_mut() {
        snapshot.reused = reused.clone();
    }
    let todo = |model_index: usize| -> Vec<usize> {
        runnable
            .iter()
            .copied()
            .filter(|case_index| {
                in_shard(*case_index, model_index) && !reused.contains_key(&(model_index, *case_index))
            })
            .collect()
    };

    // Every run, concurrently up to the limit. A provider that refuses the first calls (a
    // refused key, an unknown model, no quota, no connection) is asked nothing more: the runs
    // in flight then are all it costs, and the model is unusable.
    let mut work: Vec<(usize, usize, Vec<usize>)> = Vec::new();
    for model in &ready {
        for case_index in todo(model.index) {
            let case = &specs[case_index];
            let runs: Vec<usize> = (1..=runs_of(case)).collect();
            if case.sequential {
                work.push((model.index, case_index, runs));
            } else {
                work.extend(runs.into_iter().map(|run| (model.index, case_index, vec![run])));
            }
        }
    }
    let by_index: BTreeMap<usize, &Ready> = ready.iter().map(|model| (model.index, model)).collect();
    let concurrency = input.settings.concurrency.max(1);
    futures_util::stream::iter(work)
        .map(|(model_index, case_index, runs)| {
            let (caller, tools) = context_for(by_index[&model_index], case_index);
            let case = &specs[case_index];
            let checker = &checker;
            let graded = Graded { semantic, resolved: &set.cases[case_index].resolved, events };
            async move {
                let mut done = Vec::new();
                for run in runs {
                    done.push(
                        one_run(
                            case,
                            run,
                            caller.as_ref(),
                            input.tools,
                            &tools,
                            checker,
                            judge_for(case_index),
                            graded,
                        )
                        .await,
                    );
                }
                ((model_index, case_index), done)
            }
        })
        .buffer_unordered(concurrency)
        .for_each(|(key, done)| {
            if !done.is_empty() {
                progress.add(key, done);
            }
            std::future::ready(())
        })
        .await;
    let records = progress.records();
    for model in &ready {
        let Some(error) = model.caller.refused() else { continue };
        if let Some(fix) = unusable_fix(&error, model, input.settings) {
            unusable.insert(model.index, format!("{error}; {fix}"));
        }
    }
    for (index, detail) in &unusable {
        let label = input.settings.models[*index].label();
        events(&RunEvent::ProviderUnusable { model: label.clone(), detail: detail.clone() });
        section.model_status.push(ModelStatus {
            model: label,
            status: ModelOutcome::Unusable,
            detail: Some(detail.clone()),
        });
    }

    // Runs the provider spoiled get one more try.
    let retry: Vec<(usize, usize, usize)> = records
        .iter()
        .filter(|(key, _)| !unusable.contains_key(&key.0))
        .flat_map(|(key, runs)| {
            runs.iter()
                .filter(|run| matches!(run.ending, RunEnding::ProviderError(_)))
                .map(move |run| (key.0, key.1, run.run))
        })
        .collect();
    if !retry.is_empty() && !budget.exhausted() {
        events(&RunEvent::Notice {
            text: format!("layer 1: trying {} run(s) spoiled by the provider once more", retry.len()),
        });
        futures_util::stream::iter(retry)
            .map(|(model_index, case_index, run)| {
                let (caller, tools) = context_for(by_index[&model_index], case_index);
                let case = &specs[case_index];
                let checker = &checker;
                let graded = Graded { semantic, resolved: &set.cases[case_index].resolved, events };
                async move {
                    let judge = judge_for(case_index);
                    (
                        (model_index, case_index),
                        one_run(case, run, caller.as_ref(), input.tools, &tools, checker, judge, graded).await,
                    )
                }
            })
            .buffer_unordered(concurrency)
            .for_each(|(key, record)| {
                progress.replace(key, record);
                std::future::ready(())
            })
            .await;
    }
    let mut records = progress.records();
    for runs in records.values_mut() {
        runs.sort_by_key(|run| run.run);
    }

    for model in &ready {
        if !unusable.contains_key(&model.index) {
            section.model_status.push(ModelStatus {
                model: model.label.clone(),
                status: ModelOutcome::Ran,
                detail: None,
            });
        }
        section.layer1_notes.extend(model.caller.notes());
    }
    section.model_status.sort_by_key(|status| section.models.iter().position(|model| *model == status.model));
    // The evaluation's calls so far (a confirmation re-run shares the budget).
    section.model_calls = budget.used();
    section.call_cap_reached = records.values().flatten().any(|run| run.ending == RunEnding::CapReached);
    if section.call_cap_reached {
        section.layer1_notes.push(format!(
            "the model-call cap ({} calls, --max-model-calls) was reached: the cases it cut are skipped",
            input.settings.max_model_calls
        ));
    }
    let ran: Vec<(usize, String, &LiveModel)> = ready
        .iter()
        .filter(|model| !unusable.contains_key(&model.index))
        .map(|model| (model.index, model.label.clone(), model.caller.as_ref()))
        .collect();
    assemble::fill(
        &mut section,
        &assemble::Inputs {
            set,
            specs: &specs,
            models: &ran,
            records: &records,
            runs_override: input.settings.runs,
            today: input.today,
            trace_results: input.settings.trace_results,
            cut: assemble::Cut::CallCap,
            reused: &reused,
            shard,
        },
    );
    if let Some(judge) = &judge_caller {
        let calibration = calibration.as_ref().map(|(file, name)| (file, name.as_str()));
        section.judge_calibration = Some(crate::calibration::for_report(&section, judge.label(), calibration));
    }
    if let Some(cache) = &input.cache {
        let stored = store_verdicts(cache, &section, &keys, input.settings, set, events);
        // The workspace this run's cache use was keyed on, for the next run to compare with.
        if let Some(manifest) = cache.manifest.as_ref().filter(|_| stored > 0 || !reused.is_empty()) {
            if let Err(warning) = cache.store.put_manifest(manifest) {
                events(&RunEvent::Notice { text: format!("layer 1: the verdict cache: {warning}") });
            }
        }
        if !reused.is_empty() {
            let matchers =
                reused.keys().any(|(_, case)| set.cases.get(*case).is_some_and(|case| !case.semantic.is_empty()));
            let saved = saved_calls(reused.values(), matchers);
            let keyed_on = match cache.server_key.as_deref() {
                Some(key) => format!("the server key `{}`", crate::text::clip(key, 24)),
                None => "no server key (--cache-key none: a change to the server's code that keeps the tool surface reuses them; stale by design)".to_owned(),
            };
            section.layer1_notes.insert(
                0,
                format!(
                    "{} of {} cases × models reused from the verdict cache ({saved}); keyed on the case, the tools it sees, the model, the endpoint, the runs and {keyed_on}",
                    reused.len(),
                    section.evals.len()
                ),
            );
        }
    }
    for eval in &section.evals {
        events(&RunEvent::CaseGraded {
            case: eval.case.clone(),
            model: eval.model.clone(),
            status: eval.status,
            passed: eval.passed,
            runs: eval.runs,
            cached: eval.cached.is_some(),
        });
    }
    if let Some(miss) = first_replay_miss(&section) {
        events(&miss);
    }
    Ok(section)
}

/// What reusing `reused` saved, for the cache note: `~N model calls saved`, N the calls the
/// runs of those verdicts made when they were measured (each trace's `model_calls`, retries
/// included) plus the rubric judge's (`samples` calls per run it judged; its retries are not
/// recorded, hence the `~`), split in two when the judge took part. The argument matchers'
/// embeddings and judge calls are shared between runs and recorded nowhere: when `matchers`
/// (a reused case has `embedding` or `judge` matchers) the text says they are not counted.
pub(crate) fn saved_calls<'a>(
    reused: impl Iterator<Item = &'a crate::report::evals::EvalResult>,
    matchers: bool,
) -> String {
    let (mut runs, mut judge) = (0, 0);
    for trace in reused.flat_map(|eval| &eval.traces) {
        runs += trace.model_calls;
        judge +=
            trace.judge.as_ref().filter(|judged| judged.verdict != "judge_error").map_or(0, |judged| judged.samples);
    }
    let mut text = format!("~{} model calls saved", runs + judge);
    if judge > 0 {
        text.push_str(&format!(": {runs} by the runs under test, {judge} by the rubric judge"));
    }
    if matchers {
        text.push_str("; the argument matchers' embeddings and judge calls are not counted");
    }
    text
}

/// The [`RunEvent::ReplayMiss`] of the first run (cases in file order, then models, then runs)
/// that missed a recording — its cause is a replay miss of the model under test, its judge or
/// an argument check's model ([`crate::report::evals::ErrorCause::replay_miss`]) — counting them
/// all; `None` when no run missed.
pub(crate) fn first_replay_miss(section: &EvalsSection) -> Option<RunEvent> {
    let mut missed = section
        .evals
        .iter()
        .flat_map(|eval| eval.traces.iter().map(move |run| (eval, run)))
        .filter(|(_, run)| run.cause.is_some_and(crate::report::evals::ErrorCause::replay_miss));
    let (eval, run) = missed.next()?;
    let reason = run.reason.as_deref().unwrap_or("no recording answers this request; record it with --record");
    Some(RunEvent::ReplayMiss {
        model: eval.model.clone(),
        case: eval.case.clone(),
        run: run.run,
        reason: reason.trim_start_matches("error: ").to_owned(),
        count: 1 + missed.count(),
    })
}

/// Where `model`'s answers come from: the live provider, recording into `cassettes` (with
/// `settings.record`), or the cassettes alone; `None` when its key is needed but not set (its
/// variable is `def.api_key_env`). Also used by `golden init --model`.
///
/// # Errors
/// A `replay:` model without cassettes, or an endpoint the HTTP client refuses.
pub(crate) fn model_source(
    def: &ProviderDef,
    model: &ModelRef,
    settings: &Layer1Settings,
    cassettes: Option<&Arc<Cassettes>>,
) -> Result<Option<Source>, ProviderError> {
    // `replay:LABEL` replays what was recorded under LABEL; any other model given with
    // `--cassettes` (and no `--record`) replays under its own label.
    let recorded_as = if def.api == Api::Replay { model.model.clone() } else { model.label() };
    match (build_provider(def, model), cassettes) {
        (Ok(Some(provider)), Some(cassettes)) if settings.record => {
            Ok(Some(Source::Record(provider, cassettes.clone(), recorded_as)))
        }
        // Cassettes without `--record` replay, key or no key: no model is called.
        (Ok(_), Some(cassettes)) => Ok(Some(Source::Replay(cassettes.clone(), recorded_as))),
        (Ok(Some(provider)), None) => Ok(Some(Source::Live(provider))),
        (Ok(None), None) if def.api == Api::Replay => Err(ProviderError::InvalidRequest(
            "`replay:` models answer from cassettes only: give --cassettes DIR".into(),
        )),
        (Ok(None), None) => Ok(None),
        (Err(error), _) => Err(error),
    }
}

/// The cassettes of `--cassettes DIR` (to record into with `--record`), `None` without the flag;
/// `Err` (exit status 2) when the directory cannot be read as cassettes.
pub(crate) fn open_cassettes(settings: &Layer1Settings) -> Result<Option<Arc<Cassettes>>, UserError> {
    use crate::providers::cassette::Mode;
    let Some(dir) = &settings.cassettes else { return Ok(None) };
    let mode = if settings.record { Mode::Record } else { Mode::Replay };
    Cassettes::open(dir, mode).map(|cassettes| Some(Arc::new(cassettes))).map_err(|error| {
        UserError::new(Kind::InvalidInput, format!("--cassettes: {error}"))
            .with_hint("point --cassettes at a directory of cassettes (or add --record to write one)")
    })
}

/// Where the embeddings model of `embedding` matchers answers from (the endpoint, recording, or
/// the cassettes alone); `None` when its key is needed but not set.
fn embed_source(
    def: &ProviderDef,
    model: &ModelRef,
    input: &Layer1Input<'_>,
) -> Result<Option<semantic::EmbedSource>, ProviderError> {
    if def.api == Api::Anthropic {
        return Err(ProviderError::InvalidRequest(format!(
            "provider `{}` speaks the Anthropic Messages API, which has no embeddings endpoint",
            def.id
        )));
    }
    let needs_key = def.api_key_env.is_some() && def.api_key.is_none();
    let client = if def.api == Api::OpenAi && !needs_key {
        Some(Arc::new(crate::providers::embeddings::EmbeddingsClient::new(EndpointConfig {
            base_url: def.base_url.clone(),
            api_key: def.api_key.clone(),
            model: model.model.clone(),
            timeout: MODEL_REQUEST_TIMEOUT,
        })?))
    } else {
        None
    };
    Ok(match (client, &input.cassettes) {
        (Some(client), Some(cassettes)) if input.settings.record => {
            Some(semantic::EmbedSource::Record(client, cassettes.clone()))
        }
        (_, Some(cassettes)) => Some(semantic::EmbedSource::Replay(cassettes.clone())),
        (Some(client), None) => Some(semantic::EmbedSource::Live(client)),
        (None, None) if def.api == Api::Replay => {
            return Err(ProviderError::InvalidRequest(
                "`replay:` models answer from cassettes only: give --cassettes DIR".into(),
            ));
        }
        (None, None) => None,
    })
}

/// What a case's verdict depends on through its `embedding` and `judge` matchers (the
/// embeddings model and its endpoint; the judge and the argument prompt version), for the
/// verdict cache key; `None` when it has none.
fn matcher_key(case: &crate::golden::Case, settings: &Layer1Settings) -> Option<String> {
    let uses = |mode: &str| case.semantic.iter().any(|matcher| matcher.mode == mode);
    let mut parts = Vec::new();
    if uses("embedding")
        && let Some(model) = &settings.embedding_model
    {
        let endpoint = settings.provider(model).map(|def| def.base_url.as_str()).unwrap_or_default();
        parts.push(format!("embedding {}@{endpoint}", model.label()));
    }
    if uses("judge")
        && let Some(model) = &settings.judge_model
    {
        parts.push(format!(
            "judge {}|argument prompt v{}",
            model.label(),
            crate::scoring::semantic::ARGUMENT_JUDGE_PROMPT_VERSION
        ));
    }
    (!parts.is_empty()).then(|| parts.join("|"))
}

/// The rubric judge as a run uses it.
#[derive(Clone, Copy)]
struct Judge<'a> {
    caller: &'a LiveModel,
    samples: usize,
}

/// What grades a run's `embedding` and `judge` matchers, and the case they read.
#[derive(Clone, Copy)]
struct Graded<'a> {
    semantic: &'a semantic::Semantic,
    /// The case's resolved JSON.
    resolved: &'a serde_json::Value,
    /// Where the trial's events go.
    events: &'a (dyn Fn(&RunEvent) + Sync),
}

#[allow(clippy::too_many_arguments, reason = "one run's inputs, each a separate borrow of the runner's state")]
async fn one_run(
    case: &CaseSpec,
    run: usize,
    model: &LiveModel,
    tools: &dyn ToolExecutor,
    specs: &[ToolSpec],
    arguments: &dyn ArgumentCheck,
    judge: Option<(Judge<'_>, &judge::Rubric)>,
    graded: Graded<'_>,
) -> RunRecord {
    let trial = crate::events::TrialRef { case: case.id.clone(), model: model.label().to_owned(), trial: run };
    (graded.events)(&RunEvent::TrialStarted { trial: trial.clone() });
    let context = RunContext { model, tools, specs, arguments, events: graded.events, trial: trial.clone() };
    let mut record = agent::run_case(case, run, &context).await;
    (graded.events)(&RunEvent::TrialFinished {
        trial,
        ending: record.ending.as_str(),
        turns: record.turns,
        duration_ms: record.duration_ms,
    });
    let judged = !matches!(
        record.ending,
        RunEnding::ProviderError(_) | RunEnding::NoRecording(_) | RunEnding::ServerError(_) | RunEnding::CapReached
    );
    if judged {
        let keys = crate::scoring::semantic::requests(graded.resolved, &record.trace());
        if !keys.is_empty() {
            record.semantic = graded.semantic.resolve(&case.id, &case.prompt.join("\n"), keys).await;
        }
    }
    if let Some((judge, rubric)) = judge.filter(|_| judged) {
        judge_run(&mut record, case, rubric, judge).await;
    }
    record
}

/// Asks the judge about a finished run (`samples` times, majority vote) and records its result.
async fn judge_run(record: &mut RunRecord, case: &CaseSpec, rubric: &judge::Rubric, judge: Judge<'_>) {
    let trace = record.judge_text();
    let request = judge::judge_request(&case.prompt.join("\n"), rubric, &trace);
    let mut samples = Vec::new();
    for sample in 0..judge.samples {
        let key = agent::TurnKey {
            case: format!("judge:{}", case.id),
            run: u32::try_from(record.run).unwrap_or(u32::MAX),
            turn: u32::try_from(sample).unwrap_or(u32::MAX),
        };
        use crate::report::evals::ErrorCause;
        let verdicts = match agent::ModelCaller::call(judge.caller, key, &request).await {
            Ok(reply) => {
                judge::parse_verdicts(&reply.completion, rubric, &trace).map_err(|reason| (ErrorCause::Judge, reason))
            }
            Err(agent::ModelFailure::Provider { error, .. }) => {
                Err((ErrorCause::Judge, format!("the judge model failed: {error}")))
            }
            Err(agent::ModelFailure::CapReached) => {
                Err((ErrorCause::CallCap, crate::report::evals::JUDGE_CAP_REACHED.into()))
            }
            Err(agent::ModelFailure::NoRecording(reason)) => {
                Err((ErrorCause::JudgeReplayMiss, format!("{}: {reason}", crate::scoring::semantic::REPLAY_MISS)))
            }
        };
        match verdicts {
            Ok(verdicts) => samples.push(verdicts),
            Err((cause, reason)) => {
                record.judge_cause = Some(cause);
                record.judge_trace = Some(JudgeTrace {
                    verdict: "judge_error".into(),
                    reason: Some(reason.clone()),
                    ..judge_trace(judge, rubric, Vec::new())
                });
                record.judge = Some(crate::scoring::JudgeResult::Error(reason));
                return;
            }
        }
    }
    let voted = judge::majority(&samples);
    record.judge_lines = voted
        .iter()
        .map(|judged| {
            let verdict = match judged.verdict {
                judge::CriterionVerdict::Pass => "pass",
                judge::CriterionVerdict::Fail => "fail",
                judge::CriterionVerdict::Unknown if judged.downgraded => "unknown (its quote is not in the trace)",
                judge::CriterionVerdict::Unknown => "unknown",
            };
            format!(
                "{}: {verdict} — {} [evidence: \"{}\"]",
                judged.id,
                judged.reason,
                crate::text::clip(&judged.evidence, 200)
            )
        })
        .collect();
    let passes = judge::run_passes(rubric, &voted);
    record.judge_trace = Some(JudgeTrace {
        verdict: if passes.is_ok() { "pass" } else { "fail" }.into(),
        reason: passes.clone().err(),
        ..judge_trace(judge, rubric, voted)
    });
    record.judge = Some(match passes {
        Ok(()) => crate::scoring::JudgeResult::Pass,
        Err(reason) => crate::scoring::JudgeResult::Fail(reason),
    });
}

/// The judge's part of a run's trace, its verdict still to fill in.
fn judge_trace(judge: Judge<'_>, rubric: &judge::Rubric, voted: Vec<judge::Judged>) -> JudgeTrace {
    JudgeTrace {
        model: judge.caller.label().to_owned(),
        prompt_version: judge::JUDGE_PROMPT_VERSION,
        rubric_sha256: rubric.sha256(),
        samples: judge.samples,
        verdict: String::new(),
        reason: None,
        criteria: voted
            .into_iter()
            .map(|judged| JudgedCriterion {
                must: rubric.criteria.iter().any(|criterion| criterion.id == judged.id && criterion.must),
                verdict: match judged.verdict {
                    judge::CriterionVerdict::Pass => "pass",
                    judge::CriterionVerdict::Fail => "fail",
                    judge::CriterionVerdict::Unknown => "unknown",
                }
                .into(),
                evidence: crate::text::clip(&judged.evidence, 200),
                criterion_id: judged.id,
                reason: judged.reason,
                downgraded: judged.downgraded,
            })
            .collect(),
    }
}

/// The provider for `model`, `None` when its key is needed but not set.
fn build_provider(def: &ProviderDef, model: &ModelRef) -> Result<Option<Arc<dyn Provider>>, ProviderError> {
    if def.api_key_env.is_some() && def.api_key.is_none() {
        return Ok(None);
    }
    let config = EndpointConfig {
        base_url: def.base_url.clone(),
        api_key: def.api_key.clone(),
        model: model.model.clone(),
        timeout: MODEL_REQUEST_TIMEOUT,
    };
    Ok(match def.api {
        Api::OpenAi => Some(Arc::new(OpenAiProvider::new(config)?)),
        Api::Anthropic => Some(Arc::new(AnthropicProvider::new(config)?)),
        Api::Replay => None,
    })
}

/// When a first run's provider error means the provider cannot be used at all: the fix.
fn unusable_fix(error: &ProviderError, model: &Ready, settings: &Layer1Settings) -> Option<String> {
    let def = settings.provider(&settings.models[model.index])?;
    let key = def.api_key_env.as_deref().unwrap_or("the key");
    match error {
        ProviderError::Unauthorized { .. } => {
            Some(format!("provider `{}` refused the key for model `{}`: check `{key}`", def.id, model.label))
        }
        ProviderError::ModelNotFound(_) => Some(format!(
            "provider `{}` does not know model `{}`: check the name after `{}:`, and that this key may use it",
            def.id, model.label, def.id
        )),
        ProviderError::QuotaExhausted(_) => {
            Some(format!("provider `{}`: the account behind `{key}` has no quota or credit left", def.id))
        }
        ProviderError::Network(_) => {
            Some(format!("provider `{}`: check the base URL `{}` and the network", def.id, def.base_url))
        }
        _ => None,
    }
}

/// Checks arguments against each tool's original `inputSchema` (compiled once). A schema that
/// cannot be compiled checks nothing: the call is sent, and layer 0 reports the schema.
struct SchemaCheck {
    validators: BTreeMap<String, ArgumentValidator>,
}

impl SchemaCheck {
    fn new(surface: &ToolSurface) -> Self {
        Self {
            validators: surface
                .tools
                .iter()
                .map(|tool| (tool.name.clone(), ArgumentValidator::new(&tool.input_schema)))
                .collect(),
        }
    }
}

impl ArgumentCheck for SchemaCheck {
    fn check(&self, tool: &str, arguments: &serde_json::Value) -> Result<(), String> {
        match self.validators.get(tool).map(|validator| validator.validate(arguments)) {
            Some(Validation::Invalid(problems)) => Err(problems.join("; ")),
            _ => Ok(()),
        }
    }
}

/// `openai`, `anthropic` or `replay`: the wire in a cache key.
fn wire_name(api: Api) -> &'static str {
    match api {
        Api::OpenAi => "openai",
        Api::Anthropic => "anthropic",
        Api::Replay => "replay",
    }
}

/// Stores the verdicts measured in this run (pass or fail, not reused) in the cache; returns
/// how many were stored (a failed write is a notice, not counted).
fn store_verdicts(
    cache: &CacheUse,
    section: &EvalsSection,
    keys: &BTreeMap<(usize, usize), crate::cache::CacheKey>,
    settings: &Layer1Settings,
    set: &GoldenSet,
    events: &(dyn Fn(&RunEvent) + Sync),
) -> usize {
    let mut stored = 0;
    use crate::report::evals::EvalStatus;
    for eval in section.evals.iter().filter(|eval| eval.cached.is_none()) {
        if !matches!(eval.status, EvalStatus::Pass | EvalStatus::Fail) {
            continue;
        }
        let model_index = settings.models.iter().position(|model| model.label() == eval.model);
        let case_index = set.cases.iter().position(|case| case.id == eval.case);
        let Some(key) = model_index.zip(case_index).and_then(|index| keys.get(&index)) else { continue };
        match cache.store.put(key, eval, &cache.measured_at, cache.server_key.as_deref()) {
            Ok(()) => stored += 1,
            Err(warning) => events(&RunEvent::Notice { text: format!("layer 1: the verdict cache: {warning}") }),
        }
    }
    stored
}
