//! Resolves [`Layer1Settings`] from the same sources as every other setting (flags > Action
//! inputs / environment > the config file > defaults), reporting every problem with its source
//! and a hint. Keys are read through the resolver's `lookup`, never written into a message.

use super::config_file::ProviderEntry;
use super::layer1::{
    Api, CacheKeySetting, DEFAULT_CONCURRENCY, DEFAULT_MAX_MODEL_CALLS, Layer1Settings, ModelRef, ProviderDef,
    TraceResults,
};
use super::{Located, Problem, Source, Sources, check_url, env_vars, file_source, secrets};

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
        key: Some((env_vars::INPUT_OPENAI_API_KEY, env_vars::OPENAI_API_KEY)),
    },
    BuiltIn {
        id: "anthropic",
        api: Api::Anthropic,
        base_url: Some((env_vars::ANTHROPIC_BASE_URL, "https://api.anthropic.com")),
        key: Some((env_vars::INPUT_ANTHROPIC_API_KEY, env_vars::ANTHROPIC_API_KEY)),
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
pub(super) fn resolve(
    sources: &Sources<'_>,
    workspace: &super::workspace::Workspace,
    file_unread: bool,
    problems: &mut Vec<Problem>,
    notices: &mut Vec<String>,
) -> Layer1Settings {
    let flags = &sources.request.flags;
    let file = sources.file.map(|(_, config)| config);
    let in_workspace = |text: &str| workspace.join(text);

    let runs = sources
        .pick(
            &flags.runs,
            "--runs",
            env_vars::INPUT_RUNS,
            file.and_then(|c| c.runs.as_ref()).map(|value| (value, "runs")),
        )
        .and_then(|(source, text)| {
            let runs = whole_number(&text, 1, MAX_RUNS, &source, "runs", "e.g. 5", problems)?;
            u32::try_from(runs).ok()
        });
    let concurrency = sources
        .pick(
            &flags.concurrency,
            "--concurrency",
            env_vars::INPUT_CONCURRENCY,
            file.and_then(|c| c.concurrency.as_ref()).map(|value| (value, "concurrency")),
        )
        .and_then(|(source, text)| {
            let hint = format!("the default is {DEFAULT_CONCURRENCY}");
            whole_number(&text, 1, MAX_CONCURRENCY, &source, "runs in flight", &hint, problems)
        })
        .and_then(|value| usize::try_from(value).ok())
        .unwrap_or(DEFAULT_CONCURRENCY);
    let max_model_calls = sources
        .pick(
            &flags.max_model_calls,
            "--max-model-calls",
            env_vars::INPUT_MAX_MODEL_CALLS,
            file.and_then(|c| c.max_model_calls.as_ref()).map(|value| (value, "max_model_calls")),
        )
        .and_then(|(source, text)| {
            let hint = format!("the default is {DEFAULT_MAX_MODEL_CALLS}");
            whole_number(&text, 1, u64::MAX, &source, "model calls", &hint, problems)
        })
        .unwrap_or(DEFAULT_MAX_MODEL_CALLS);
    let trace_results = match sources.pick(
        &flags.trace_results,
        "--trace-results",
        env_vars::INPUT_TRACE_RESULTS,
        file.and_then(|c| c.trace_results.as_ref()).map(|value| (value, "trace_results")),
    ) {
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
    };

    let shard = sources.pick(&flags.shard, "--shard", env_vars::INPUT_SHARD, None).and_then(|(source, text)| {
        match super::layer1::Shard::parse(&text) {
            Ok(shard) => Some(shard),
            Err(message) => {
                problems.push(Problem::new(
                    &source,
                    message,
                    format!("give INDEX/COUNT with 1 ≤ INDEX ≤ COUNT ≤ {}, e.g. 2/3", super::layer1::MAX_SHARDS),
                ));
                None
            }
        }
    });
    let cassettes = sources
        .flag_or_file(
            &flags.cassettes,
            "--cassettes",
            file.and_then(|config| config.cassettes.as_ref()).map(|value| (value, "cassettes")),
        )
        .map(|(_, text)| in_workspace(&text));
    if flags.record && cassettes.is_none() {
        problems.push(Problem::new(
            &Source::Flag("--record".into()),
            "needs --cassettes DIR",
            "give --cassettes DIR: --record calls the real providers and writes what they answered there",
        ));
    }

    let providers = providers(sources, problems);
    let models = models(sources, &providers, file_unread, problems, notices);

    // The rubric judge.
    let allow_self_judge = flags.allow_self_judge
        || sources
            .pick(
                &None,
                "--allow-self-judge",
                env_vars::INPUT_ALLOW_SELF_JUDGE,
                file.and_then(|config| config.allow_self_judge.as_ref()).map(|value| (value, "allow_self_judge")),
            )
            .is_some_and(|(_, text)| matches!(text.trim().to_ascii_lowercase().as_str(), "true" | "yes" | "on" | "1"));
    let judge_model = sources.pick(&flags.judge_model, "--judge-model", env_vars::INPUT_JUDGE_MODEL, file.and_then(|config| config.judge_model.as_ref()).map(|value| (value, "judge_model"))).and_then(
        |(source, text)| {
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
                    "judge with another model, or allow it with --allow-self-judge (input `allow-self-judge: true`; the report then flags it)",
                ));
            }
            Some(judge)
        },
    );
    // The embeddings model of `embedding` matchers: an OpenAI-compatible provider (Anthropic's
    // API has no embeddings endpoint).
    let embedding_model = sources
        .pick(
            &flags.embedding_model,
            "--embedding-model",
            env_vars::INPUT_EMBEDDING_MODEL,
            file.and_then(|c| c.embedding_model.as_ref()).map(|value| (value, "embedding_model")),
        )
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
        });
    let judge_samples = match sources
        .pick(
            &flags.judge_samples,
            "--judge-samples",
            env_vars::INPUT_JUDGE_SAMPLES,
            file.and_then(|config| config.judge_samples.as_ref()).map(|value| (value, "judge_samples")),
        )
        .filter(|(_, text)| !text.trim().is_empty())
    {
        None => 1,
        Some((source, text)) => {
            whole_number(text.trim(), 1, 9, &source, "judge samples", "e.g. 3", problems).map_or(1, |n| n as usize)
        }
    };

    let judge_calibration = workspace
        .shared(
            sources.pick(
                &flags.judge_calibration,
                "--judge-calibration",
                env_vars::INPUT_JUDGE_CALIBRATION,
                file.and_then(|c| c.judge_calibration.as_ref()).map(|value| (value, "judge_calibration")),
            ),
            problems,
        )
        .map(|(source, text)| (source, text.trim().to_owned()))
        .filter(|(_, text)| !text.is_empty())
        .and_then(|(source, text)| {
            // Read at start, with every other problem: not after the evaluation's model calls.
            let path = in_workspace(&text);
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
        });

    let max_drop = match sources.pick(
        &flags.max_drop,
        "--max-drop",
        env_vars::INPUT_MAX_DROP,
        file.and_then(|config| config.gate.as_ref())
            .and_then(|gate| gate.max_drop.as_ref())
            .map(|value| (value, "gate.max_drop")),
    ) {
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
    };

    let confirm = match sources.pick(
        &flags.confirm,
        "--confirm",
        env_vars::INPUT_CONFIRM,
        file.and_then(|config| config.confirm.as_ref()).map(|value| (value, "confirm")),
    ) {
        None => true,
        Some((source, text)) => match text.trim().to_ascii_lowercase().as_str() {
            "" | "true" | "yes" | "on" | "1" => true,
            "false" | "no" | "off" | "0" => false,
            _ => {
                problems.push(Problem::new(&source, format!("`{text}` is not true or false"), "e.g. false"));
                true
            }
        },
    };

    // The verdict cache: the Action keeps one by default, the CLI only when asked.
    let in_action = sources.front_end == super::FrontEnd::Action;
    let cache_dir_picked = sources.pick(
        &flags.cache_dir,
        "--cache-dir",
        env_vars::INPUT_CACHE_DIR,
        file.and_then(|config| config.cache_dir.as_ref()).map(|value| (value, "cache_dir")),
    );
    // Given but refused (outside a shared-only workspace): no default in its place.
    let cache_dir_given = cache_dir_picked.is_some();
    let cache_dir = match workspace.shared(cache_dir_picked, problems) {
        Some((_, text)) => Some(in_workspace(&text)),
        None if in_action && !cache_dir_given => Some(in_workspace(DEFAULT_CACHE_DIR)),
        None => None,
    };
    let cache_key = match sources.pick(
        &flags.cache_key,
        "--cache-key",
        env_vars::INPUT_CACHE_KEY,
        file.and_then(|config| config.cache_key.as_ref()).map(|value| (value, "cache_key")),
    ) {
        Some((_, text)) if text.trim() == "auto" => CacheKeySetting::Auto,
        Some((_, text)) if text.trim() == "none" => CacheKeySetting::None,
        Some((_, text)) => CacheKeySetting::Text(text.trim().to_owned()),
        None if in_action => CacheKeySetting::Auto,
        None => CacheKeySetting::None,
    };
    let event =
        sources.request.action.github_event_name.clone().or_else(|| (sources.lookup)(env_vars::GITHUB_EVENT_NAME));
    let scheduled = in_action && event.as_deref().map(str::trim) == Some("schedule");
    // A baseline the user named must be there: a typo would otherwise turn the gate off
    // unnoticed, after the model calls were spent.
    let baseline_file = workspace.shared(sources.pick(&flags.baseline, "--baseline", env_vars::INPUT_BASELINE, file.and_then(|config| config.baseline.as_ref()).map(|value| (value, "baseline"))), problems).and_then(
        |(source, text)| {
            let path = in_workspace(&text);
            let read = std::fs::read_to_string(&path)
                .map_err(|error| format!("cannot be read: {error}"))
                .and_then(|text| crate::report::json::parse(&text).map(|_| ()).map_err(|error| format!("is not a report.json: {error}")));
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
        },
    );
    let accept_baseline = flags.accept_baseline
        || sources
            .input(env_vars::INPUT_ACCEPT_BASELINE)
            .is_some_and(|(_, text)| matches!(text.trim().to_ascii_lowercase().as_str(), "true" | "yes" | "on" | "1"));
    if accept_baseline && cache_dir.is_none() {
        // On the command line (the Action always has a cache directory): nowhere to store.
        problems.push(Problem::new(
            &Source::Flag("--accept-baseline".into()),
            "has nowhere to store the baseline",
            "add --cache-dir DIR: the baseline is stored there, beside the verdict cache",
        ));
    }
    let fail_on_evals = match sources.pick(
        &flags.fail_on_evals,
        "--fail-on-evals",
        env_vars::INPUT_FAIL_ON_EVALS,
        file.and_then(|config| config.gate.as_ref())
            .and_then(|gate| gate.fail_on_evals.as_ref())
            .map(|value| (value, "gate.fail_on_evals")),
    ) {
        None if in_action => super::layer1::FailOnEvals::Regression,
        None => super::layer1::FailOnEvals::Failure,
        Some((source, text)) => super::layer1::FailOnEvals::parse(text.trim()).unwrap_or_else(|| {
            problems.push(Problem::new(
                &source,
                format!("`{text}` is not a layer-1 policy"),
                "use regression (the gate on the drop against the baseline), failure (any failed case) or never",
            ));
            super::layer1::FailOnEvals::Failure
        }),
    };
    let cache_mode = match sources.pick(
        &flags.cache_mode,
        "--cache-mode",
        env_vars::INPUT_CACHE,
        file.and_then(|config| config.cache_mode.as_ref()).map(|value| (value, "cache_mode")),
    ) {
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
    };

    Layer1Settings {
        models,
        providers,
        runs,
        concurrency,
        max_model_calls,
        record: flags.record && cassettes.is_some(),
        cassettes,
        trace_results,
        cache_dir,
        cache_key,
        cache_mode,
        baseline_file,
        accept_baseline,
        fail_on_evals,
        // The command line stores a baseline only when asked (`--accept-baseline`); the Action
        // replaces this with its event and branch.
        store_context: (!in_action)
            .then(|| super::layer1::StoreContext { event: super::layer1::CLI_EVENT.into(), on_default_branch: true }),
        judge_model,
        allow_self_judge,
        judge_samples,
        judge_calibration,
        embedding_model,
        max_drop,
        confirm,
        shard,
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
fn providers(sources: &Sources<'_>, problems: &mut Vec<Problem>) -> Vec<ProviderDef> {
    let lookup =
        |var: &str| (sources.lookup)(var).map(|value| value.trim().to_owned()).filter(|value| !value.is_empty());
    let mut providers: Vec<ProviderDef> = BUILT_INS
        .iter()
        .map(|built_in| {
            let (base_url, api_key_env, api_key) = match (built_in.base_url, built_in.key) {
                (Some((url_var, default)), Some((input, key_var))) => (
                    lookup(url_var).unwrap_or_else(|| default.to_owned()),
                    Some(key_var.to_owned()),
                    sources.input(input).map(|(_, key)| key).or_else(|| lookup(key_var)),
                ),
                _ => (String::new(), None, None),
            };
            ProviderDef { id: built_in.id.to_owned(), api: built_in.api, base_url, api_key_env, api_key }
        })
        .collect();
    let Some((path, file)) = sources.file else { return providers };
    let mut defined: Vec<(String, String)> = Vec::new();
    for (index, entry) in file.providers.iter().enumerate() {
        let field = |name: &str| format!("providers[{index}].{name}");
        let entry_source = file_source(path, entry, &format!("providers[{index}]"));
        let ProviderEntry { id, api, base_url, api_key_env } = &entry.value;
        let text = |value: &Option<Located<String>>| value.as_ref().map(|value| value.value.trim().to_owned());
        let at = |value: &Option<Located<String>>, name: &str| match value {
            Some(value) => file_source(path, value, &field(name)),
            None => entry_source.clone(),
        };
        let mut valid = true;

        let id_text = text(id).filter(|id| !id.is_empty());
        match &id_text {
            None => {
                valid = false;
                problems.push(Problem::new(
                    &at(id, "id"),
                    if id.is_some() { "the id is empty" } else { "has no `id`" },
                    "give the provider an id, the name before `:` in its models (e.g. `id: myvllm` for myvllm:qwen3-8b)",
                ));
            }
            Some(name) if !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')) => {
                valid = false;
                problems.push(Problem::new(
                    &at(id, "id"),
                    format!("`{name}` is not a provider id"),
                    "an id is letters, digits, `-`, `_` and `.` (it is written before the `:` of a model)",
                ));
            }
            Some(name) if BUILT_INS.iter().any(|built_in| built_in.id == name) => {
                valid = false;
                problems.push(Problem::new(
                    &at(id, "id"),
                    format!("`{name}` is a built-in provider"),
                    format!(
                        "choose another id, e.g. `{name}-local`; the built-in openai and anthropic take their URL from OPENAI_BASE_URL and ANTHROPIC_BASE_URL"
                    ),
                ));
            }
            Some(name) => {
                if let Some((_, first)) = defined.iter().find(|(other, _)| other == name) {
                    valid = false;
                    problems.push(Problem::new(
                        &at(id, "id"),
                        format!("`{name}` is already the id of {first}"),
                        "give every provider its own id",
                    ));
                } else {
                    defined.push((name.clone(), field("id")));
                }
            }
        }

        let api_value = match text(api) {
            None => {
                valid = false;
                problems.push(Problem::new(
                    &at(api, "api"),
                    "has no `api`",
                    "add `api: openai` (Chat Completions: vLLM, Ollama, llama.cpp, OpenRouter, …) or `api: anthropic` (Messages)",
                ));
                Api::OpenAi
            }
            Some(name) => match name.to_ascii_lowercase().as_str() {
                "openai" => Api::OpenAi,
                "anthropic" => Api::Anthropic,
                other => {
                    valid = false;
                    let guess = crate::suggest::nearest(other, ["openai", "anthropic"])
                        .map(|guess| format!("did you mean `{guess}`? "))
                        .unwrap_or_default();
                    problems.push(Problem::new(
                        &at(api, "api"),
                        format!("`{name}` is not an API"),
                        format!(
                            "{guess}use openai (Chat Completions: OpenAI, vLLM, Ollama, llama.cpp, OpenRouter, …) or anthropic (Messages)"
                        ),
                    ));
                    Api::OpenAi
                }
            },
        };

        let url = match text(base_url).filter(|url| !url.is_empty()) {
            None => {
                valid = false;
                problems.push(Problem::new(
                    &at(base_url, "base_url"),
                    "has no `base_url`",
                    "add the API root, e.g. `base_url: http://127.0.0.1:8000/v1`",
                ));
                String::new()
            }
            Some(url) => {
                if let Err(why) = check_url(&url) {
                    valid = false;
                    problems.push(Problem::new(
                        &at(base_url, "base_url"),
                        format!("`{}` is not a usable API URL{why}", secrets::url_without_secrets(&url)),
                        "give the API root with http:// or https://, e.g. http://127.0.0.1:8000/v1",
                    ));
                }
                url
            }
        };

        let key_var = text(api_key_env).filter(|var| !var.is_empty());
        if let Some(var) = &key_var {
            if !secrets::valid_env_name(var) {
                valid = false;
                problems.push(Problem::new(
                    &at(api_key_env, "api_key_env"),
                    "is not a variable name (not shown: it may be the key itself)",
                    "give the name of the variable that holds the key (letters, digits and `_`, not starting with a digit), not the key itself",
                ));
            }
        }

        if let (true, Some(id)) = (valid, id_text) {
            let api_key = key_var.as_deref().and_then(lookup);
            providers.push(ProviderDef { id, api: api_value, base_url: url, api_key_env: key_var, api_key });
        }
    }
    providers
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
                        "`{}` is not a usable API URL{why} (model `{text}`)",
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
        .map(|text| (Source::Flag("--model".into()), text.to_owned()))
        .collect();
    if !flags.is_empty() {
        return flags;
    }
    if let Some((source, text)) = sources.input(env_vars::INPUT_MODELS) {
        return text
            .lines()
            .map(|line| line.split_once('#').map_or(line, |(before, _)| before).trim())
            .filter(|line| !line.is_empty())
            .map(|line| (source.clone(), line.to_owned()))
            .collect();
    }
    let Some((path, file)) = sources.file else { return Vec::new() };
    file.models
        .iter()
        .flatten()
        .enumerate()
        .map(|(index, entry)| (file_source(path, entry, &format!("models[{index}]")), entry.value.trim().to_owned()))
        .collect()
}
