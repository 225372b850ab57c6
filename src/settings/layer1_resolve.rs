//! Resolves [`Layer1Settings`] from the same sources as every other setting (flags > Action
//! inputs / environment > the config file > defaults), reporting every problem with its source
//! and a hint. Keys are read through the resolver's `lookup`, never written into a message.

use std::path::{Path, PathBuf};

use super::config_file::ProviderEntry;
use super::layer1::{
    Api, CacheKeySetting, DEFAULT_CONCURRENCY, DEFAULT_MAX_MODEL_CALLS, Layer1Settings, ModelRef, ProviderDef,
    TraceResults,
};
use super::{Located, Problem, Source, Sources, check_url, env_vars, file_source, secrets, table};

/// The largest `--runs`.
const MAX_RUNS: u64 = 100;
/// The largest `--concurrency`.
const MAX_CONCURRENCY: u64 = 64;

/// A built-in provider: id, wire format, the variable of its base URL and its default, the input
/// and the variable of its key.
struct BuiltIn {
    id: &'static str,
    api: Api,
    base_url: Option<(&'static str, &'static str)>,
    key: Option<(&'static str, &'static str)>,
}

const BUILT_INS: [BuiltIn; 3] = [
    BuiltIn {
        id: "openai",
        api: Api::OpenAi,
        base_url: Some((env_vars::OPENAI_BASE_URL, "https://api.openai.com/v1")),
        key: Some((table::OPENAI_API_KEY.input_name(), env_vars::OPENAI_API_KEY)),
    },
    BuiltIn {
        id: "anthropic",
        api: Api::Anthropic,
        base_url: Some((env_vars::ANTHROPIC_BASE_URL, "https://api.anthropic.com")),
        key: Some((table::ANTHROPIC_API_KEY.input_name(), env_vars::ANTHROPIC_API_KEY)),
    },
    BuiltIn { id: "replay", api: Api::Replay, base_url: None, key: None },
];

/// The keys of the built-in providers, from their inputs and variables, before validation (so the
/// Action can mask them before anything is printed).
pub(super) fn raw_keys(sources: &Sources<'_>) -> Vec<String> {
    let mut keys = Vec::new();
    for (input, var) in BUILT_INS.iter().filter_map(|built_in| built_in.key) {
        keys.extend(sources.input(input).map(|(_, key)| key));
        keys.extend((sources.lookup)(var).map(|key| key.trim().to_owned()).filter(|key| !key.is_empty()));
    }
    keys
}

/// Layer 1's settings; problems and notices are appended to the resolver's. With `file_unread`
/// (the config file was given but could not be read), a model naming an unknown provider is not
/// a problem of its own: the file may define it.
///
/// # Errors
/// Adds to `problems` what every step finds, in this order: [`run_limits`], [`trace_results`],
/// [`shard`], [`cassettes`], [`providers`], [`models`], [`judging`], [`max_drop`], [`confirm`],
/// [`cache_and_baseline`]; every problem is collected, none stops the others.
pub(super) fn resolve(
    sources: &Sources<'_>,
    workspace: &super::workspace::Workspace,
    file_unread: bool,
    problems: &mut Vec<Problem>,
    notices: &mut Vec<String>,
) -> Layer1Settings {
    let flags = &sources.request.flags;
    let in_action = sources.front_end == super::FrontEnd::Action;

    let limits = run_limits(sources, problems);
    let trace_results = trace_results(sources, problems);
    let shard = shard(sources, problems);
    let cassettes = cassettes(sources, workspace, problems);
    let providers = providers(sources, problems);
    let models = models(sources, &providers, file_unread, problems, notices);
    let judging = judging(sources, workspace, &providers, &models, file_unread, problems);
    let max_drop = max_drop(sources, problems);
    let confirm = confirm(sources, problems);
    let store = cache_and_baseline(sources, workspace, in_action, problems);
    let fault_plan = fault_plan(sources, workspace, problems);
    let spending = spending(sources, workspace, problems);

    Layer1Settings {
        models,
        providers,
        runs: limits.runs,
        concurrency: limits.concurrency,
        max_model_calls: limits.max_model_calls,
        record: flags.record && cassettes.is_some(),
        cassettes: cassettes.map(super::layer1::CassetteSource::Dir),
        replay_match: replay_match(sources, problems),
        trace_results,
        cache_dir: store.cache_dir,
        cache_key: store.cache_key,
        cache_mode: store.cache_mode,
        baseline_file: store.baseline_file,
        accept_baseline: store.accept_baseline,
        fail_on_evals: store.fail_on_evals,
        // The command line stores a baseline only when asked (`--accept-baseline`); the Action's
        // comes from its event and branch (`super::event::apply`).
        store_context: (!in_action)
            .then(|| super::layer1::StoreContext { event: super::layer1::CLI_EVENT.into(), on_default_branch: true }),
        judge_model: judging.judge_model,
        allow_self_judge: judging.allow_self_judge,
        judge_samples: judging.judge_samples,
        judge_calibration: judging.judge_calibration,
        embedding_model: judging.embedding_model,
        max_drop,
        confirm,
        shard,
        fault_plan,
        price_table: spending.price_table.map(super::InputFile::Path),
        max_cost_usd: spending.max_cost_usd,
        allow_unpriced: spending.allow_unpriced,
        models_note: None,
        count_tokens: flags.count_tokens,
        notices: Vec::new(),
        notes: Vec::new(),
    }
}

/// The problem of a budget with no price table to count against, and its fix.
pub(crate) fn budget_without_table() -> (&'static str, String) {
    let table = &table::PRICE_TABLE;
    (
        "a cost budget needs a price table to count against",
        format!(
            "give {} FILE (input `{}`, config `{}`): USD per 1M tokens of each model (see docs/layer-3.md#the-price-table)",
            table.flag_name(),
            table.input_name(),
            table.key_name()
        ),
    )
}

/// What [`spending`] found.
struct Spending {
    price_table: Option<PathBuf>,
    max_cost_usd: Option<f64>,
    allow_unpriced: bool,
}

/// Layer 3's price table (`--prices`, input `price-table`, `price_table`; below the workspace;
/// its entries are read before any connection, by `telemetry::prices::load`), the budget
/// (`--max-cost-usd`, input `max-cost-usd`, `max_cost_usd`) and `--allow-unpriced`.
///
/// # Errors
/// Adds to `problems` a table path outside a shared-only workspace, a budget that is not a
/// number of USD above 0, and a budget without a price table.
fn spending(sources: &Sources<'_>, workspace: &super::workspace::Workspace, problems: &mut Vec<Problem>) -> Spending {
    let flags = &sources.request.flags;
    let price_table = workspace
        .shared(sources.setting(&table::PRICE_TABLE, &flags.prices), problems)
        .map(|(_, text)| text.trim().to_owned())
        .filter(|text| !text.is_empty())
        .map(|text| workspace.join(&text));
    let max_cost_usd = sources
        .setting(&table::MAX_COST_USD, &flags.max_cost_usd)
        .filter(|(_, text)| !text.trim().is_empty())
        .and_then(|(source, text)| match text.trim().trim_start_matches('$').parse::<f64>() {
            Ok(usd) if usd.is_finite() && usd > 0.0 && usd <= 1_000_000.0 => {
                // The demo prices its own models with the example table in the binary.
                if price_table.is_none() && !sources.request.demo {
                    let (message, hint) = budget_without_table();
                    problems.push(Problem::new(&source, message, hint));
                }
                Some(usd)
            }
            _ => {
                problems.push(Problem::new(
                    &source,
                    format!("`{text}` is not a budget in USD"),
                    "give a number of US dollars above 0 and at most 1000000, e.g. 2.50",
                ));
                None
            }
        });
    let allow_unpriced = flags.allow_unpriced
        || sources
            .setting(&table::ALLOW_UNPRICED, &None)
            .is_some_and(|(_, text)| matches!(text.trim().to_ascii_lowercase().as_str(), "true" | "yes" | "on" | "1"));
    Spending { price_table, max_cost_usd, allow_unpriced }
}

/// Layer 2's fault plan (`--fault-plan`, input `fault-plan`, `fault_plan`), below the workspace;
/// its entries are read with the golden set (`golden::load::load_fault_plan`), where their
/// problems get their line and column.
///
/// # Errors
/// Adds to `problems` a path outside a shared-only workspace.
fn fault_plan(
    sources: &Sources<'_>,
    workspace: &super::workspace::Workspace,
    problems: &mut Vec<Problem>,
) -> Option<PathBuf> {
    workspace
        .shared(sources.setting(&table::FAULT_PLAN, &sources.request.flags.fault_plan), problems)
        .map(|(_, text)| text.trim().to_owned())
        .filter(|text| !text.is_empty())
        .map(|text| workspace.join(&text))
}

/// The counts and caps of a layer-1 run, as [`run_limits`] found them.
struct RunLimits {
    /// Runs of every case (`None`: the golden set's).
    runs: Option<u32>,
    /// Runs in flight at once.
    concurrency: usize,
    /// The cap on model calls.
    max_model_calls: u64,
}

/// `runs` (1 to [`MAX_RUNS`], else the golden set's), `concurrency` (1 to [`MAX_CONCURRENCY`],
/// default [`DEFAULT_CONCURRENCY`]) and `max-model-calls` (at least 1, default
/// [`DEFAULT_MAX_MODEL_CALLS`]), in that order.
///
/// # Errors
/// Adds to `problems` every value that is not a whole number in its range (the setting is then
/// as if not given).
fn run_limits(sources: &Sources<'_>, problems: &mut Vec<Problem>) -> RunLimits {
    let flags = &sources.request.flags;
    let runs = sources.setting(&table::RUNS, &flags.runs).and_then(|(source, text)| {
        let runs = whole_number(&text, 1, MAX_RUNS, &source, "trials", "e.g. 5", problems)?;
        u32::try_from(runs).ok()
    });
    let concurrency = sources
        .setting(&table::CONCURRENCY, &flags.concurrency)
        .and_then(|(source, text)| {
            let hint = format!("the default is {DEFAULT_CONCURRENCY}");
            whole_number(&text, 1, MAX_CONCURRENCY, &source, "trials in flight", &hint, problems)
        })
        .and_then(|value| usize::try_from(value).ok())
        .unwrap_or(DEFAULT_CONCURRENCY);
    let max_model_calls = sources
        .setting(&table::MAX_MODEL_CALLS, &flags.max_model_calls)
        .and_then(|(source, text)| {
            let hint = format!("the default is {DEFAULT_MAX_MODEL_CALLS}");
            whole_number(&text, 1, u64::MAX, &source, "model calls", &hint, problems)
        })
        .unwrap_or(DEFAULT_MAX_MODEL_CALLS);
    RunLimits { runs, concurrency, max_model_calls }
}

/// How much of tool results and model text the traces keep (`--trace-results`, input
/// `trace-results`, `trace_results`); [`TraceResults::default`] when none is given.
///
/// # Errors
/// Adds to `problems` a value other than full, truncated or none (then the default).
fn trace_results(sources: &Sources<'_>, problems: &mut Vec<Problem>) -> TraceResults {
    match sources.setting(&table::TRACE_RESULTS, &sources.request.flags.trace_results) {
        None => TraceResults::default(),
        Some((source, text)) => match text.trim().to_ascii_lowercase().as_str() {
            "full" => TraceResults::Full,
            "truncated" => TraceResults::Truncated,
            "none" => TraceResults::None,
            _ => {
                problems.push(Problem::new(
                    &source,
                    format!("`{text}` is not a trace setting"),
                    "use full (everything), truncated (the first 2048 bytes of each tool result and model text) or none",
                ));
                TraceResults::default()
            }
        },
    }
}

/// The slice of the case × model list this run evaluates (`--shard`, input `shard`); `None`:
/// all of it.
///
/// # Errors
/// Adds to `problems` a value [`super::layer1::Shard::parse`] refuses (then `None`).
fn shard(sources: &Sources<'_>, problems: &mut Vec<Problem>) -> Option<super::layer1::Shard> {
    sources.setting(&table::SHARD, &sources.request.flags.shard).and_then(|(source, text)| {
        match super::layer1::Shard::parse(&text) {
            Ok(shard) => Some(shard),
            Err(message) => {
                problems.push(Problem::new(
                    &source,
                    message.to_string(),
                    format!("give INDEX/COUNT with 1 ≤ INDEX ≤ COUNT ≤ {}, e.g. 2/3", super::layer1::MAX_SHARDS),
                ));
                None
            }
        }
    })
}

/// The cassette directory model exchanges are replayed from (`--cassettes`, input
/// `cassettes`, config `cassettes`), below the workspace.
///
/// # Errors
/// Adds to `problems` `--record` without a cassette directory.
fn cassettes(
    sources: &Sources<'_>,
    workspace: &super::workspace::Workspace,
    problems: &mut Vec<Problem>,
) -> Option<PathBuf> {
    let flags = &sources.request.flags;
    let cassettes = sources.setting(&table::CASSETTES, &flags.cassettes).map(|(_, text)| workspace.join(&text));
    if flags.record && cassettes.is_none() {
        problems.push(Problem::new(
            &Source::Flag("--record".into()),
            "needs --cassettes DIR",
            "give --cassettes DIR: --record calls the real providers and writes what they answered there",
        ));
    }
    cassettes
}

/// `--replay-match` (config `replay_match`): `tolerant` (the default) or `exact`.
///
/// # Errors
/// Adds to `problems` any other value.
fn replay_match(sources: &Sources<'_>, problems: &mut Vec<Problem>) -> crate::providers::cassette::Match {
    use crate::providers::cassette::Match;
    let given = sources.setting(&table::REPLAY_MATCH, &sources.request.flags.replay_match);
    match given {
        None => Match::Tolerant,
        Some((_, text)) if text.trim().eq_ignore_ascii_case("tolerant") => Match::Tolerant,
        Some((_, text)) if text.trim().eq_ignore_ascii_case("exact") => Match::Exact,
        Some((source, text)) => {
            problems.push(Problem::new(
                &source,
                format!("`{text}` is not a replay match"),
                "give tolerant (tool results that changed are data: the recorded answer is replayed and noted) or exact (the whole request must match)",
            ));
            Match::Tolerant
        }
    }
}

/// The judge and embedding settings, as [`judging`] found them.
struct Judging {
    /// The model that grades rubrics and `judge` matchers.
    judge_model: Option<ModelRef>,
    /// A model may judge its own runs.
    allow_self_judge: bool,
    /// Judge calls per run.
    judge_samples: usize,
    /// The judge's calibration file.
    judge_calibration: Option<PathBuf>,
    /// The model of `embedding` matchers.
    embedding_model: Option<ModelRef>,
}

/// The rubric judge and the embeddings model, in this order: `allow-self-judge`,
/// `judge-model`, `embedding-model`, `judge-samples`, `judge-calibration`.
///
/// # Errors
/// Adds to `problems` what [`judge_model`], [`embedding_model`], [`judge_samples`] and
/// [`judge_calibration`] find, in that order.
fn judging(
    sources: &Sources<'_>,
    workspace: &super::workspace::Workspace,
    providers: &[ProviderDef],
    models: &[ModelRef],
    file_unread: bool,
    problems: &mut Vec<Problem>,
) -> Judging {
    let allow_self_judge = sources.request.flags.allow_self_judge
        || sources
            .setting(&table::ALLOW_SELF_JUDGE, &None)
            .is_some_and(|(_, text)| matches!(text.trim().to_ascii_lowercase().as_str(), "true" | "yes" | "on" | "1"));
    let judge_model = judge_model(sources, providers, models, allow_self_judge, problems);
    let embedding_model = embedding_model(sources, providers, file_unread, problems);
    let judge_samples = judge_samples(sources, problems);
    let judge_calibration = judge_calibration(sources, workspace, problems);
    Judging { judge_model, allow_self_judge, judge_samples, judge_calibration, embedding_model }
}

/// The model that grades rubrics and `judge` matchers (`--judge-model`, input `judge-model`,
/// `judge_model`), PROVIDER:MODEL.
///
/// # Errors
/// Adds to `problems` the first of: not PROVIDER:MODEL, a provider not defined (both then
/// `None`); and a model under test without `allow_self_judge` (the judge is still returned).
fn judge_model(
    sources: &Sources<'_>,
    providers: &[ProviderDef],
    models: &[ModelRef],
    allow_self_judge: bool,
    problems: &mut Vec<Problem>,
) -> Option<ModelRef> {
    sources.setting(&table::JUDGE_MODEL, &sources.request.flags.judge_model).and_then(|(source, text)| {
        let Some((provider, model)) = text.trim().split_once(':').filter(|(p, m)| !p.is_empty() && !m.is_empty())
        else {
            problems.push(Problem::new(&source, format!("`{text}` is not PROVIDER:MODEL"), "e.g. openai:gpt-4.1"));
            return None;
        };
        let judge = ModelRef { provider: provider.to_owned(), model: model.to_owned() };
        if !providers.iter().any(|defined| defined.id == judge.provider) {
            problems.push(Problem::new(
                &source,
                format!("no provider `{provider}` is defined"),
                "use openai, anthropic, replay or a provider of the config file",
            ));
            return None;
        }
        if models.contains(&judge) && !allow_self_judge {
            problems.push(Problem::new(
                &source,
                format!("`{text}` is also a model under test"),
                format!(
                    "judge with another model, or allow it with {} (input `{}: true`; the report then flags it)",
                    table::ALLOW_SELF_JUDGE.flag_name(),
                    table::ALLOW_SELF_JUDGE.input_name()
                ),
            ));
        }
        Some(judge)
    })
}

/// The embeddings model of `embedding` matchers (`--embedding-model`, input
/// `embedding-model`, `embedding_model`): an OpenAI-compatible provider (Anthropic's API has no
/// embeddings endpoint). With `file_unread`, an unknown provider is not a problem of its own.
///
/// # Errors
/// Adds to `problems` the first of: not PROVIDER:MODEL, a provider not defined, a provider that
/// speaks the Anthropic API (each then `None`).
fn embedding_model(
    sources: &Sources<'_>,
    providers: &[ProviderDef],
    file_unread: bool,
    problems: &mut Vec<Problem>,
) -> Option<ModelRef> {
    sources
        .setting(&table::EMBEDDING_MODEL, &sources.request.flags.embedding_model)
        .and_then(|(source, text)| {
            let Some((provider, model)) = text.trim().split_once(':').filter(|(p, m)| !p.is_empty() && !m.is_empty())
            else {
                problems.push(Problem::new(
                    &source,
                    format!("`{text}` is not PROVIDER:MODEL"),
                    "e.g. openai:text-embedding-3-small",
                ));
                return None;
            };
            let Some(def) = providers.iter().find(|defined| defined.id == provider) else {
                if !file_unread {
                    problems.push(Problem::new(
                        &source,
                        format!("no provider `{provider}` is defined"),
                        "use openai, replay or an OpenAI-compatible provider of the config file",
                    ));
                }
                return None;
            };
            if def.api == Api::Anthropic {
                problems.push(Problem::new(
                    &source,
                    format!("provider `{provider}` speaks the Anthropic Messages API, which has no embeddings endpoint"),
                    "use an OpenAI-compatible provider (`api: openai` in the config file: OpenAI, Azure OpenAI, Ollama, vLLM, llama.cpp), e.g. openai:text-embedding-3-small",
                ));
                return None;
            }
            Some(ModelRef { provider: provider.to_owned(), model: model.to_owned() })
        })
}

/// Judge calls per run (`--judge-samples`, input `judge-samples`, `judge_samples`), 1 to 9;
/// 1 when none is given.
///
/// # Errors
/// Adds to `problems` a value that is not a whole number from 1 to 9 (then 1).
fn judge_samples(sources: &Sources<'_>, problems: &mut Vec<Problem>) -> usize {
    match sources
        .setting(&table::JUDGE_SAMPLES, &sources.request.flags.judge_samples)
        .filter(|(_, text)| !text.trim().is_empty())
    {
        None => 1,
        Some((source, text)) => {
            whole_number(text.trim(), 1, 9, &source, "judge samples", "e.g. 3", problems).map_or(1, |n| n as usize)
        }
    }
}

/// The judge's calibration file (`--judge-calibration`, input `judge-calibration`,
/// `judge_calibration`), below the workspace; read now, with every other problem, not after the
/// evaluation's model calls.
///
/// # Errors
/// Adds to `problems` a path outside a shared-only workspace, or a file
/// [`crate::calibration::load`] refuses (both then `None`).
fn judge_calibration(
    sources: &Sources<'_>,
    workspace: &super::workspace::Workspace,
    problems: &mut Vec<Problem>,
) -> Option<PathBuf> {
    workspace
        .shared(sources.setting(&table::JUDGE_CALIBRATION, &sources.request.flags.judge_calibration), problems)
        .map(|(source, text)| (source, text.trim().to_owned()))
        .filter(|(_, text)| !text.is_empty())
        .and_then(|(source, text)| {
            // Read at start, with every other problem: not after the evaluation's model calls.
            let path = workspace.join(&text);
            match crate::calibration::load(&path) {
                Ok(_) => Some(path),
                Err(error) => {
                    let why =
                        if error.causes.is_empty() { String::new() } else { format!(" ({})", error.causes.join(": ")) };
                    let message = error.message.trim_start_matches("--judge-calibration: ").to_owned();
                    problems.push(Problem::new(
                        &source,
                        format!("{message}{why}"),
                        error.hint.as_deref().unwrap_or("give the file `mcp-eval judge calibrate` wrote"),
                    ));
                    None
                }
            }
        })
}

/// The smallest drop of the mean pass rate that can fail the gate (`--max-drop`, input
/// `max-drop`, `gate.max_drop`); [`super::layer1::DEFAULT_MAX_DROP`] when none is given.
///
/// # Errors
/// Adds to `problems` a value that is not a fraction from 0 to 1 (then the default).
fn max_drop(sources: &Sources<'_>, problems: &mut Vec<Problem>) -> f64 {
    match sources.setting(&table::MAX_DROP, &sources.request.flags.max_drop) {
        None => super::layer1::DEFAULT_MAX_DROP,
        Some((source, text)) => match text.trim().parse::<f64>() {
            Ok(value) if (0.0..=1.0).contains(&value) => value,
            _ => {
                problems.push(Problem::new(
                    &source,
                    format!("`{text}` is not a fraction from 0 to 1"),
                    "e.g. 0.02 (two points of pass rate)",
                ));
                super::layer1::DEFAULT_MAX_DROP
            }
        },
    }
}

/// Whether a tripped gate re-runs the worsened cases and decides again (`--confirm`, input
/// `confirm`, `confirm`); `true` when none is given.
///
/// # Errors
/// Adds to `problems` a value that is not true or false (then `true`).
fn confirm(sources: &Sources<'_>, problems: &mut Vec<Problem>) -> bool {
    match sources.setting(&table::CONFIRM, &sources.request.flags.confirm) {
        None => true,
        Some((source, text)) => match text.trim().to_ascii_lowercase().as_str() {
            "" | "true" | "yes" | "on" | "1" => true,
            "false" | "no" | "off" | "0" => false,
            _ => {
                problems.push(Problem::new(&source, format!("`{text}` is not true or false"), "e.g. false"));
                true
            }
        },
    }
}

/// The verdict cache and the baseline, as [`cache_and_baseline`] found them.
struct Store {
    /// The verdict cache directory.
    cache_dir: Option<PathBuf>,
    /// What cached verdicts are also keyed on.
    cache_key: CacheKeySetting,
    /// How the cache is used.
    cache_mode: crate::cache::Mode,
    /// The report.json layer 1 is compared with instead of the stored baseline.
    baseline_file: Option<PathBuf>,
    /// Store this run's results as the baseline whatever the gate says.
    accept_baseline: bool,
    /// When layer 1 fails the run.
    fail_on_evals: super::layer1::FailOnEvals,
}

/// The verdict cache (the Action keeps one by default, the CLI only when asked), the baseline
/// and layer 1's gate policy, in this order: `cache-dir`, `cache-key`, `baseline`,
/// `accept-baseline`, `fail-on-evals`, `cache`.
///
/// # Errors
/// Adds to `problems` what [`cache_dir`], [`baseline_file`], [`accept_baseline`],
/// [`fail_on_evals`] and [`cache_mode`] find, in that order.
fn cache_and_baseline(
    sources: &Sources<'_>,
    workspace: &super::workspace::Workspace,
    in_action: bool,
    problems: &mut Vec<Problem>,
) -> Store {
    let cache_dir = cache_dir(sources, workspace, in_action, problems);
    let cache_key = match sources.setting(&table::CACHE_KEY, &sources.request.flags.cache_key) {
        Some((_, text)) if text.trim() == "auto" => CacheKeySetting::Auto,
        Some((_, text)) if text.trim() == "none" => CacheKeySetting::None,
        Some((_, text)) => CacheKeySetting::Text(text.trim().to_owned()),
        None if in_action => CacheKeySetting::Auto,
        None => CacheKeySetting::None,
    };
    let baseline_file = baseline_file(sources, workspace, problems);
    let accept_baseline = accept_baseline(sources, cache_dir.is_some(), problems);
    let fail_on_evals = fail_on_evals(sources, in_action, problems);
    let cache_mode = cache_mode(sources, in_action, problems);
    Store { cache_dir, cache_key, cache_mode, baseline_file, accept_baseline, fail_on_evals }
}

/// The verdict cache directory (`--cache-dir`, input `cache-dir`, `cache_dir`), below the
/// workspace; [`DEFAULT_CACHE_DIR`] in the Action when none is given, else none.
///
/// # Errors
/// Adds to `problems` a path outside a shared-only workspace (then none, not the default).
fn cache_dir(
    sources: &Sources<'_>,
    workspace: &super::workspace::Workspace,
    in_action: bool,
    problems: &mut Vec<Problem>,
) -> Option<PathBuf> {
    let cache_dir_picked = sources.setting(&table::CACHE_DIR, &sources.request.flags.cache_dir);
    // Given but refused (outside a shared-only workspace): no default in its place.
    let cache_dir_given = cache_dir_picked.is_some();
    match workspace.shared(cache_dir_picked, problems) {
        Some((_, text)) => Some(workspace.join(&text)),
        None if in_action && !cache_dir_given => Some(workspace.join(DEFAULT_CACHE_DIR)),
        None => None,
    }
}

/// The report.json layer 1 is compared with (`--baseline`, input `baseline`, `baseline`),
/// below the workspace. A baseline the user named must be there: a typo would otherwise turn
/// the gate off unnoticed, after the model calls were spent.
///
/// # Errors
/// Adds to `problems` a path outside a shared-only workspace, or a file that cannot be read or
/// is not a report.json (both then `None`).
fn baseline_file(
    sources: &Sources<'_>,
    workspace: &super::workspace::Workspace,
    problems: &mut Vec<Problem>,
) -> Option<PathBuf> {
    let picked = sources.setting(&table::BASELINE, &sources.request.flags.baseline);
    workspace.shared(picked, problems).and_then(|(source, text)| {
        let path = workspace.join(&text);
        let read = std::fs::read_to_string(&path).map_err(|error| format!("cannot be read: {error}")).and_then(|text| {
            crate::report::json::parse(&text).map(|_| ()).map_err(|error| format!("is not a report.json: {error}"))
        });
        match read {
            Ok(()) => Some(path),
            Err(why) => {
                problems.push(Problem::new(
                    &source,
                    format!("`{}` {why}", path.display()),
                    "give the report.json of an earlier run (a committed file, a release asset or a downloaded artifact)",
                ));
                None
            }
        }
    })
}

/// Whether this run's results are stored as the baseline whatever the gate says
/// (`--accept-baseline`, input `accept-baseline`).
///
/// # Errors
/// Adds to `problems` `--accept-baseline` without a cache directory (`has_cache_dir`) to store
/// the baseline in (it is still returned).
fn accept_baseline(sources: &Sources<'_>, has_cache_dir: bool, problems: &mut Vec<Problem>) -> bool {
    let accept_baseline = sources.request.flags.accept_baseline
        || sources
            .input(table::ACCEPT_BASELINE.input_name())
            .is_some_and(|(_, text)| matches!(text.trim().to_ascii_lowercase().as_str(), "true" | "yes" | "on" | "1"));
    if accept_baseline && !has_cache_dir {
        // On the command line (the Action always has a cache directory): nowhere to store.
        problems.push(Problem::new(
            &Source::Flag("--accept-baseline".into()),
            "has nowhere to store the baseline",
            "add --cache-dir DIR: the baseline is stored there, beside the verdict cache",
        ));
    }
    accept_baseline
}

/// When layer 1 fails the run (`--fail-on-evals`, input `fail-on-evals`,
/// `gate.fail_on_evals`); regression in the Action and failure on the command line when none is
/// given.
///
/// # Errors
/// Adds to `problems` a value other than regression, strict, failure or never (then failure).
fn fail_on_evals(sources: &Sources<'_>, in_action: bool, problems: &mut Vec<Problem>) -> super::layer1::FailOnEvals {
    match sources.setting(&table::FAIL_ON_EVALS, &sources.request.flags.fail_on_evals) {
        None if in_action => super::layer1::FailOnEvals::Regression,
        None => super::layer1::FailOnEvals::Failure,
        Some((source, text)) => super::layer1::FailOnEvals::parse(text.trim()).unwrap_or_else(|| {
            problems.push(Problem::new(
                &source,
                format!("`{text}` is not a layer-1 policy"),
                "use regression (the gate on the drop against the baseline), strict (also when the gate has too few trials to see a drop), failure (any failed case) or never",
            ));
            super::layer1::FailOnEvals::Failure
        }),
    }
}

/// How the verdict cache is used (`--cache-mode`, input `cache`, `cache_mode`); write-only on
/// the Action's scheduled runs and read-write otherwise when none is given.
///
/// # Errors
/// Adds to `problems` a value other than read-write, write-only or off (then read-write).
fn cache_mode(sources: &Sources<'_>, in_action: bool, problems: &mut Vec<Problem>) -> crate::cache::Mode {
    let event =
        sources.request.action.github_event_name.clone().or_else(|| (sources.lookup)(env_vars::GITHUB_EVENT_NAME));
    let scheduled = in_action && event.as_deref().map(str::trim) == Some("schedule");
    match sources.setting(&table::CACHE_MODE, &sources.request.flags.cache_mode) {
        None if scheduled => crate::cache::Mode::WriteOnly,
        None => crate::cache::Mode::ReadWrite,
        Some((source, text)) => match text.trim().to_ascii_lowercase().as_str() {
            "read-write" => crate::cache::Mode::ReadWrite,
            "write-only" => crate::cache::Mode::WriteOnly,
            "off" => crate::cache::Mode::Off,
            _ => {
                problems.push(Problem::new(
                    &source,
                    format!("`{text}` is not a cache mode"),
                    "use read-write, write-only (measure afresh and refresh the cache) or off",
                ));
                crate::cache::Mode::ReadWrite
            }
        },
    }
}

/// The Action's verdict cache directory, in the workspace.
const DEFAULT_CACHE_DIR: &str = ".mcp-eval-cache";

/// A whole number in `low..=high`, or a problem naming what it counts.
fn whole_number(
    text: &str,
    low: u64,
    high: u64,
    source: &Source,
    what: &str,
    example: &str,
    problems: &mut Vec<Problem>,
) -> Option<u64> {
    let parsed = text.trim().parse::<u64>();
    match parsed {
        Ok(value) if (low..=high).contains(&value) => Some(value),
        _ => {
            let range = if high == u64::MAX {
                format!("a whole number of at least {low}")
            } else {
                format!("a whole number from {low} to {high}")
            };
            let message = match parsed {
                Ok(_) => format!("`{text}` {what} is out of range"),
                Err(_) => format!("`{text}` is not a number of {what}"),
            };
            problems.push(Problem::new(source, message, format!("give {range}; {example}")));
            None
        }
    }
}

/// The built-in providers, then the config file's.
///
/// # Errors
/// Adds to `problems` what [`ProviderCheck`] finds in every entry of the config file's
/// `providers:`, entry by entry; an entry with a problem is left out.
fn providers(sources: &Sources<'_>, problems: &mut Vec<Problem>) -> Vec<ProviderDef> {
    let mut providers = built_in_providers(sources);
    let Some((path, file)) = sources.file else { return providers };
    let mut defined: Vec<(String, String)> = Vec::new();
    for (index, entry) in file.providers.iter().enumerate() {
        let ProviderEntry { id, api, base_url, api_key_env } = &entry.value;
        let entry_source = file_source(path, entry, &format!("{}[{index}]", table::PROVIDERS.key_name()));
        let mut check = ProviderCheck { path, index, entry_source, valid: true, problems: &mut *problems };
        let id_text = check.id(id, &mut defined);
        let api_value = check.api(api);
        let url = check.base_url(base_url);
        let key_var = check.api_key_env(api_key_env);
        if let (true, Some(id)) = (check.valid, id_text) {
            let api_key = key_var.as_deref().and_then(|var| env_value(sources, var));
            providers.push(ProviderDef { id, api: api_value, base_url: url, api_key_env: key_var, api_key });
        }
    }
    providers
}

/// A variable seen through the resolver's `lookup`, trimmed; empty is unset.
fn env_value(sources: &Sources<'_>, var: &str) -> Option<String> {
    (sources.lookup)(var).map(|value| value.trim().to_owned()).filter(|value| !value.is_empty())
}

/// The built-in providers ([`BUILT_INS`]): each base URL from its variable or the public API,
/// each key from its input, else its variable. Never an error: a base URL is checked when a
/// model uses it ([`models`]).
fn built_in_providers(sources: &Sources<'_>) -> Vec<ProviderDef> {
    BUILT_INS
        .iter()
        .map(|built_in| {
            let (base_url, api_key_env, api_key) = match (built_in.base_url, built_in.key) {
                (Some((url_var, default)), Some((input, key_var))) => (
                    env_value(sources, url_var).unwrap_or_else(|| default.to_owned()),
                    Some(key_var.to_owned()),
                    sources.input(input).map(|(_, key)| key).or_else(|| env_value(sources, key_var)),
                ),
                _ => (String::new(), None, None),
            };
            ProviderDef { id: built_in.id.to_owned(), api: built_in.api, base_url, api_key_env, api_key }
        })
        .collect()
}

/// The checks of one entry of the config file's `providers:`, field by field; every problem
/// found is added to `problems` and makes the entry invalid.
struct ProviderCheck<'p> {
    /// The config file.
    path: &'p Path,
    /// The entry's index in `providers:`.
    index: usize,
    /// The entry itself, for a field it lacks.
    entry_source: Source,
    /// No problem was found yet.
    valid: bool,
    /// The resolver's problems.
    problems: &'p mut Vec<Problem>,
}

impl ProviderCheck<'_> {
    /// Where the field `name` is (`value`), or the entry when the field is missing.
    fn at(&self, value: &Option<Located<String>>, name: &str) -> Source {
        match value {
            Some(value) => file_source(self.path, value, &self.field(name)),
            None => self.entry_source.clone(),
        }
    }

    /// The key of the field `name` of this entry (`providers[2].id`).
    fn field(&self, name: &str) -> String {
        format!("{}[{}].{name}", table::PROVIDERS.key_name(), self.index)
    }

    /// Adds a problem and marks the entry invalid.
    fn refuse(&mut self, source: &Source, message: impl Into<String>, hint: impl Into<String>) {
        self.valid = false;
        self.problems.push(Problem::new(source, message, hint));
    }

    /// The entry's `id`, trimmed; a new id is added to `defined` with its field.
    ///
    /// # Errors
    /// Refuses a missing or empty id (then `None`), an id with characters other than letters,
    /// digits, `-`, `_` and `.`, the id of a built-in provider, or one already defined.
    fn id(&mut self, id: &Option<Located<String>>, defined: &mut Vec<(String, String)>) -> Option<String> {
        let id_text = located_text(id).filter(|id| !id.is_empty());
        let source = self.at(id, "id");
        match &id_text {
            None => self.refuse(
                &source,
                if id.is_some() { "the id is empty" } else { "has no `id`" },
                "give the provider an id, the name before `:` in its models (e.g. `id: myvllm` for myvllm:qwen3-8b)",
            ),
            Some(name) if !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')) => self
                .refuse(
                    &source,
                    format!("`{name}` is not a provider id"),
                    "an id is letters, digits, `-`, `_` and `.` (it is written before the `:` of a model)",
                ),
            Some(name) if BUILT_INS.iter().any(|built_in| built_in.id == name) => self.refuse(
                &source,
                format!("`{name}` is a built-in provider"),
                format!(
                    "choose another id, e.g. `{name}-local`; the built-in openai and anthropic take their URL from OPENAI_BASE_URL and ANTHROPIC_BASE_URL"
                ),
            ),
            Some(name) => {
                if let Some((_, first)) = defined.iter().find(|(other, _)| other == name) {
                    let message = format!("`{name}` is already the id of {first}");
                    self.refuse(&source, message, "give every provider its own id");
                } else {
                    defined.push((name.clone(), self.field("id")));
                }
            }
        }
        id_text
    }

    /// The entry's wire format (`api`).
    ///
    /// # Errors
    /// Refuses a missing `api` or one other than openai or anthropic (then [`Api::OpenAi`]).
    fn api(&mut self, api: &Option<Located<String>>) -> Api {
        let source = self.at(api, "api");
        match located_text(api) {
            None => {
                self.refuse(
                    &source,
                    "has no `api`",
                    "add `api: openai` (Chat Completions: vLLM, Ollama, llama.cpp, OpenRouter, …) or `api: anthropic` (Messages)",
                );
                Api::OpenAi
            }
            Some(name) => match name.to_ascii_lowercase().as_str() {
                "openai" => Api::OpenAi,
                "anthropic" => Api::Anthropic,
                other => {
                    let guess = crate::suggest::nearest(other, ["openai", "anthropic"])
                        .map(|guess| format!("did you mean `{guess}`? "))
                        .unwrap_or_default();
                    self.refuse(
                        &source,
                        format!("`{name}` is not an API"),
                        format!(
                            "{guess}use openai (Chat Completions: OpenAI, vLLM, Ollama, llama.cpp, OpenRouter, …) or anthropic (Messages)"
                        ),
                    );
                    Api::OpenAi
                }
            },
        }
    }

    /// The entry's API root (`base_url`).
    ///
    /// # Errors
    /// Refuses a missing or empty URL (then empty) or one that is not a usable http(s) URL.
    fn base_url(&mut self, base_url: &Option<Located<String>>) -> String {
        let source = self.at(base_url, "base_url");
        match located_text(base_url).filter(|url| !url.is_empty()) {
            None => {
                self.refuse(
                    &source,
                    "has no `base_url`",
                    "add the API root, e.g. `base_url: http://127.0.0.1:8000/v1`",
                );
                String::new()
            }
            Some(url) => {
                if let Err(why) = check_url(&url) {
                    self.refuse(
                        &source,
                        format!("`{}` is not a usable API URL ({why})", secrets::url_without_secrets(&url)),
                        "give the API root with http:// or https://, e.g. http://127.0.0.1:8000/v1",
                    );
                }
                url
            }
        }
    }

    /// The name of the variable that holds the entry's key (`api_key_env`); `None` when not
    /// given or empty.
    ///
    /// # Errors
    /// Refuses a value that is not a variable name (without showing it: it may be the key).
    fn api_key_env(&mut self, api_key_env: &Option<Located<String>>) -> Option<String> {
        let key_var = located_text(api_key_env).filter(|var| !var.is_empty());
        if let Some(var) = &key_var {
            if !secrets::valid_env_name(var) {
                let source = self.at(api_key_env, "api_key_env");
                self.refuse(
                    &source,
                    "is not a variable name (not shown: it may be the key itself)",
                    "give the name of the variable that holds the key (letters, digits and `_`, not starting with a digit), not the key itself",
                );
            }
        }
        key_var
    }
}

/// The text of an optional field of the config file, trimmed.
fn located_text(value: &Option<Located<String>>) -> Option<String> {
    value.as_ref().map(|value| value.value.trim().to_owned())
}

/// The models: every `--model`, else the input's lines, else the config file's list. A model
/// given twice runs once (a notice says so).
fn models(
    sources: &Sources<'_>,
    providers: &[ProviderDef],
    file_unread: bool,
    problems: &mut Vec<Problem>,
    notices: &mut Vec<String>,
) -> Vec<ModelRef> {
    let mut models: Vec<ModelRef> = Vec::new();
    let mut base_url_checked: Vec<String> = Vec::new();
    for (source, text) in model_entries(sources) {
        let Some((provider, model)) = text
            .split_once(':')
            .map(|(provider, model)| (provider.trim(), model.trim()))
            .filter(|(p, m)| !p.is_empty() && !m.is_empty())
        else {
            problems.push(Problem::new(
                &source,
                format!("`{text}` is not PROVIDER:MODEL"),
                "write it as openai:gpt-4.1-mini (the provider id, `:`, the model name the API knows)",
            ));
            continue;
        };
        let Some(definition) = providers.iter().find(|definition| definition.id == provider) else {
            if file_unread {
                continue;
            }
            let ids: Vec<&str> = providers.iter().map(|definition| definition.id.as_str()).collect();
            let lowered = provider.to_ascii_lowercase();
            let guess = crate::suggest::nearest(&lowered, ids.iter().copied())
                .map(|guess| format!("did you mean `{guess}:{model}`? "))
                .unwrap_or_default();
            problems.push(Problem::new(
                &source,
                format!("`{provider}` in `{text}` is not a provider"),
                format!("{guess}the providers are {}; define more in the config file's `providers:`", ids.join(", ")),
            ));
            continue;
        };
        // A built-in's URL comes from the environment: checked when a model uses it.
        if definition.api != Api::Replay && !base_url_checked.contains(&definition.id) {
            base_url_checked.push(definition.id.clone());
            let var = BUILT_INS
                .iter()
                .find(|built_in| built_in.id == definition.id)
                .and_then(|built_in| built_in.base_url)
                .map(|(var, _)| var);
            if let (Some(var), Err(why)) = (var, check_url(&definition.base_url)) {
                problems.push(Problem::new(
                    &Source::Env(var.to_owned()),
                    format!(
                        "`{}` is not a usable API URL ({why}) (model `{text}`)",
                        secrets::url_without_secrets(&definition.base_url)
                    ),
                    format!("set {var} to the API root with http:// or https://, or unset it for the public API"),
                ));
            }
        }
        let model = ModelRef { provider: provider.to_owned(), model: model.to_owned() };
        if models.contains(&model) {
            notices.push(format!("{source}: `{}` is given twice; it runs once", model.label()));
            continue;
        }
        models.push(model);
    }
    models
}

/// The model entries of the first source that gives any, each with its source.
fn model_entries(sources: &Sources<'_>) -> Vec<(Source, String)> {
    let flags: Vec<(Source, String)> = sources
        .request
        .flags
        .models
        .iter()
        .map(|text| text.trim())
        .filter(|text| !text.is_empty())
        .map(|text| (Source::Flag(table::MODELS.flag_name()), text.to_owned()))
        .collect();
    if !flags.is_empty() {
        return flags;
    }
    if let Some((source, text)) = sources.input(table::MODELS.input_name()) {
        return text
            .lines()
            .map(|line| line.split_once('#').map_or(line, |(before, _)| before).trim())
            .filter(|line| !line.is_empty())
            .map(|line| (source.clone(), line.to_owned()))
            .collect();
    }
    let Some((path, file)) = sources.file else { return Vec::new() };
    let key = table::MODELS.key_name();
    file.strings(&table::MODELS)
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(index, entry)| (file_source(path, entry, &format!("{key}[{index}]")), entry.value.trim().to_owned()))
        .collect()
}
