//! The settings of layer 1 (golden sets run through models): which models, through which
//! provider endpoints, with which keys, how many runs, how much concurrency, the model-call
//! cap, cassettes and how much of tool results and model text the traces keep.
//!
//! Models are named `PROVIDER:MODEL` (`openai:gpt-4.1-mini`, `anthropic:claude-sonnet-4-5`,
//! `myvllm:qwen3-8b`, `replay:demo`). `openai` and `anthropic` are built in (base URL from
//! `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL`, key from `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`);
//! more endpoints are named in the config file's `providers:`; `replay` answers from cassettes
//! only.

use std::path::PathBuf;

/// The wire format a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Api {
    /// OpenAI Chat Completions (OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp, OpenRouter, Groq).
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
    /// No wire: answers from cassettes only (`--cassettes DIR`, or the demo's embedded ones).
    Replay,
}

/// Where cassettes are read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CassetteSource {
    /// A directory (`--cassettes DIR`), recorded into with `--record`.
    Dir(PathBuf),
    /// Files built into the binary (the demo's): name and text, replayed only.
    Builtin(&'static [(&'static str, &'static str)]),
}

/// One provider endpoint: a built-in one or an entry of the config file's `providers:`.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct ProviderDef {
    /// The name before the `:` of a model (`openai`, `myvllm`).
    pub id: String,
    /// Its wire format.
    pub api: Api,
    /// The API root (`https://api.openai.com/v1`, `https://api.anthropic.com`).
    pub base_url: String,
    /// The variable its key is read from (`OPENAI_API_KEY`); `None` for an endpoint that needs
    /// no key (a local server).
    pub api_key_env: Option<String>,
    /// The key, when its variable (or the Action input) is set and not empty. A secret.
    pub api_key: Option<String>,
}

impl std::fmt::Debug for ProviderDef {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ProviderDef")
            .field("id", &self.id)
            .field("api", &self.api)
            .field("base_url", &self.base_url)
            .field("api_key_env", &self.api_key_env)
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .finish()
    }
}

/// A model as asked for: `PROVIDER:MODEL`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ModelRef {
    /// The provider id (before the first `:`).
    pub provider: String,
    /// The model name sent to the API (after the first `:`; may contain more `:`).
    pub model: String,
}

impl ModelRef {
    /// `PROVIDER:MODEL`.
    pub(crate) fn label(&self) -> String {
        format!("{}:{}", self.provider, self.model)
    }

    /// The model `label` names, `PROVIDER:MODEL` split at its first `:`, for tests.
    #[cfg(test)]
    pub(crate) fn for_tests(label: &str) -> Self {
        let (provider, model) = label.split_once(':').expect("PROVIDER:MODEL");
        ModelRef { provider: provider.into(), model: model.into() }
    }
}

/// How much of tool results and model text the traces keep (`--trace-results`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum TraceResults {
    /// Everything.
    Full,
    /// The first [`TRUNCATED_BYTES`] of each.
    #[default]
    Truncated,
    /// Nothing (lengths only).
    None,
}

/// What `--trace-results truncated` keeps of each tool result and model text, in bytes.
pub(crate) const TRUNCATED_BYTES: usize = 2048;

/// Default of `--concurrency`: runs in flight at once.
pub(crate) const DEFAULT_CONCURRENCY: usize = 4;

/// Default of `--max-model-calls`: the hard cap on model calls in one evaluation.
pub(crate) const DEFAULT_MAX_MODEL_CALLS: u64 = 2_000;

/// Everything layer 1 reads besides the golden set.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Layer1Settings {
    /// The models, in the order given (`--model`, input `models`, config `models`).
    pub models: Vec<ModelRef>,
    /// Every provider a model may name: the built-in ones, then the config file's.
    pub providers: Vec<ProviderDef>,
    /// `--runs`: overrides every case's `runs` (and scales its soft threshold), when given.
    pub runs: Option<u32>,
    /// `--concurrency`: runs in flight at once.
    pub concurrency: usize,
    /// `--max-model-calls`: the hard cap on model calls.
    pub max_model_calls: u64,
    /// `--cassettes DIR`: replay provider exchanges from here (and record with `record`); or the
    /// demo's, built into the binary.
    pub cassettes: Option<CassetteSource>,
    /// `--record`: call the real provider and write what it answered into `cassettes`.
    pub record: bool,
    /// `--replay-match`: how replay matches a recording.
    pub replay_match: crate::providers::cassette::Match,
    /// `--trace-results`.
    pub trace_results: TraceResults,
    /// `--cache-dir`: the verdict cache (none: no cache).
    pub cache_dir: Option<PathBuf>,
    /// `--cache-key`.
    pub cache_key: CacheKeySetting,
    /// `--cache-mode`.
    pub cache_mode: crate::cache::Mode,
    /// `--shard i/n`: the slice of the case × model list this run takes.
    pub shard: Option<Shard>,
    /// `--baseline FILE`: a report.json to compare with, instead of the stored baseline.
    pub baseline_file: Option<PathBuf>,
    /// `--accept-baseline`: store this run's results as the baseline whatever the gate says.
    pub accept_baseline: bool,
    /// `--fail-on-evals`: when layer 1 fails the run.
    pub fail_on_evals: FailOnEvals,
    /// Where the run stands for storing a baseline (the Action sets it: the event and whether
    /// it runs on the default branch); `None` never stores.
    pub store_context: Option<StoreContext>,
    /// `--judge-model`: the model that grades rubrics.
    pub judge_model: Option<ModelRef>,
    /// `--allow-self-judge`: a model may judge its own runs (flagged in the report).
    pub allow_self_judge: bool,
    /// `--judge-samples`: judge calls per run, majority vote.
    pub judge_samples: usize,
    /// `--judge-calibration FILE`: what `mcp-eval judge calibrate` measured of the judge; its
    /// judge pass rates are then also reported Rogan–Gladen corrected.
    pub judge_calibration: Option<PathBuf>,
    /// Layer 2's fault plan (`--fault-plan`), read with the golden set.
    pub fault_plan: Option<PathBuf>,
    /// Layer 3's price table (`--prices`, or the demo's example table), read before any
    /// connection.
    pub price_table: Option<super::InputFile>,
    /// `--max-cost-usd`: the most the model calls may cost, USD (`None`: no budget).
    pub max_cost_usd: Option<f64>,
    /// `--allow-unpriced`: a budget may start with models the price table does not price.
    pub allow_unpriced: bool,
    /// `--count-tokens`: layer 3 counts Anthropic models' footprint with the provider's endpoint.
    pub count_tokens: bool,
    /// Which of the models run and why, when the Action's schedule split chose (a note of
    /// layer 1's).
    pub models_note: Option<String>,
    /// `--embedding-model`: the model whose `/embeddings` grade `embedding` argument matchers
    /// (a provider of the OpenAI wire).
    pub embedding_model: Option<ModelRef>,
    /// What the layer says as it starts, when the settings chose for the user (the demo's set,
    /// models and recordings; the settings it then ignores).
    pub notices: Vec<String>,
    /// What the layer says as it starts and keeps in its notes (the demo's `--runs` lowered to
    /// what its recordings hold).
    pub notes: Vec<String>,
    /// `--confirm`: when the gate trips, re-run the worsened cases (5 more runs each) and decide
    /// again (default true).
    pub confirm: bool,
    /// `--max-drop`: the smallest drop of the mean per-case pass rate that can fail the gate,
    /// as a rate in 0..1 (default 0.02: two points).
    pub max_drop: f64,
}

/// The event of a run and whether it is on the repository's default branch: what decides
/// whether its results become the baseline (see `baseline::store::should_store`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoreContext {
    /// The workflow event (`push`, `schedule`, …).
    pub event: String,
    /// The run is on the default branch.
    pub on_default_branch: bool,
}

/// The event name of a command-line run in a [`StoreContext`]: it stores a baseline only with
/// `--accept-baseline` ([`crate::baseline::store::should_store`]).
pub(crate) const CLI_EVENT: &str = "command-line";

/// The largest shard count `--shard` accepts.
pub(crate) const MAX_SHARDS: u32 = 256;

/// `--shard INDEX/COUNT`: one of COUNT deterministic slices of the case × model list. The pairs
/// are ordered cases in file order, then models in the order given; shard INDEX takes every pair
/// whose position p has `p % COUNT == INDEX - 1` (round-robin, so slow cases spread out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shard {
    /// 1-based, at most `count`.
    pub index: u32,
    /// 1 to [`MAX_SHARDS`].
    pub count: u32,
}

impl Shard {
    /// Reads `i/n` (1 ≤ i ≤ n ≤ [`MAX_SHARDS`]); the error says what is wrong.
    pub(crate) fn parse(text: &str) -> Result<Shard, ShardError> {
        let text_of = || text.to_owned();
        let (index, count) = text.trim().split_once('/').ok_or_else(|| ShardError::Shape(text_of()))?;
        let number = |part: &str| part.trim().parse::<u32>().map_err(|_| ShardError::Shape(text_of()));
        let (index, count) = (number(index)?, number(count)?);
        if count == 0 || count > MAX_SHARDS {
            return Err(ShardError::Count(text_of()));
        }
        if index == 0 || index > count {
            return Err(ShardError::Index(text_of(), count));
        }
        Ok(Shard { index, count })
    }

    /// True when the pair (case `case`, model `model`) of a run with `models` models belongs to
    /// this shard.
    pub(crate) fn contains(self, case: usize, model: usize, models: usize) -> bool {
        (case * models + model) % self.count as usize == (self.index - 1) as usize
    }
}

/// What is wrong with a `--shard` value (quoted).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ShardError {
    /// Not two numbers around a `/`.
    #[error("`{0}` is not INDEX/COUNT")]
    Shape(String),
    /// A count of 0 or over [`MAX_SHARDS`].
    #[error("`{0}`: the count must be 1 to {MAX_SHARDS}")]
    Count(String),
    /// An index of 0 or over the count.
    #[error("`{0}`: the index must be 1 to the count ({1})")]
    Index(String, u32),
}

/// What cached verdicts are also keyed on (`--cache-key`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) enum CacheKeySetting {
    /// Nothing: verdicts survive server changes that keep the tool surface (the CLI's default).
    #[default]
    None,
    /// A hash of the workspace (the Action's default).
    Auto,
    /// This text.
    Text(String),
}

impl Default for Layer1Settings {
    fn default() -> Self {
        Layer1Settings {
            models: Vec::new(),
            providers: Vec::new(),
            runs: None,
            concurrency: DEFAULT_CONCURRENCY,
            max_model_calls: DEFAULT_MAX_MODEL_CALLS,
            cassettes: None,
            replay_match: crate::providers::cassette::Match::default(),
            record: false,
            trace_results: TraceResults::default(),
            cache_dir: None,
            cache_key: CacheKeySetting::default(),
            cache_mode: crate::cache::Mode::default(),
            shard: None,
            baseline_file: None,
            accept_baseline: false,
            fail_on_evals: FailOnEvals::Failure,
            store_context: None,
            judge_model: None,
            allow_self_judge: false,
            judge_samples: 1,
            judge_calibration: None,
            fault_plan: None,
            price_table: None,
            max_cost_usd: None,
            allow_unpriced: false,
            models_note: None,
            count_tokens: false,
            embedding_model: None,
            max_drop: DEFAULT_MAX_DROP,
            notices: Vec::new(),
            notes: Vec::new(),
            confirm: true,
        }
    }
}

impl Layer1Settings {
    /// The base URL of the provider a `PROVIDER:MODEL` label names (empty when none is
    /// defined): the endpoint part of a baseline's comparability key.
    pub(crate) fn endpoint_of(&self, label: &str) -> String {
        let provider = label.split_once(':').map_or(label, |(provider, _)| provider);
        self.providers.iter().find(|def| def.id == provider).map_or_else(String::new, |def| def.base_url.clone())
    }

    /// The provider a model names.
    pub(crate) fn provider(&self, model: &ModelRef) -> Option<&ProviderDef> {
        self.providers.iter().find(|provider| provider.id == model.provider)
    }

    /// Every key (secrets to redact).
    pub(crate) fn keys(&self) -> impl Iterator<Item = &str> {
        self.providers.iter().filter_map(|provider| provider.api_key.as_deref())
    }
}

/// `max-drop`'s default: no more than two points below the last green run (a rate in 0..1).
pub(crate) const DEFAULT_MAX_DROP: f64 = 0.02;

/// `fail-on-evals`: when layer 1 fails the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FailOnEvals {
    /// Fail on the regression gate (the Action's default); without a baseline, only on a
    /// failing hard case.
    Regression,
    /// Fail on any case that failed its threshold (the CLI's default).
    Failure,
    /// Report only.
    Never,
    /// As `regression`, and also fail when the gate has too few cases or trials to see a drop
    /// (`insufficient-data`).
    Strict,
}

impl FailOnEvals {
    /// `regression`, `failure`, `never` or `strict`, as the user spells it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            FailOnEvals::Regression => "regression",
            FailOnEvals::Failure => "failure",
            FailOnEvals::Never => "never",
            FailOnEvals::Strict => "strict",
        }
    }

    /// The policy spelled `text`, or `None`.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        [FailOnEvals::Regression, FailOnEvals::Failure, FailOnEvals::Never, FailOnEvals::Strict]
            .into_iter()
            .find(|policy| policy.as_str() == text)
    }
}

#[cfg(test)]
mod shard_tests {
    use super::*;

    #[test]
    fn the_shards_cover_the_list_once_round_robin() {
        let (cases, models) = (7, 2);
        let mut seen = vec![0; cases * models];
        for index in 1..=3 {
            let shard = Shard::parse(&format!("{index}/3")).expect("valid");
            for case in 0..cases {
                for model in 0..models {
                    if shard.contains(case, model, models) {
                        seen[case * models + model] += 1;
                    }
                }
            }
        }
        assert_eq!(seen, vec![1; cases * models], "the union is the whole list, the shards are disjoint");
        let first = Shard { index: 1, count: 3 };
        let taken: Vec<(usize, usize)> = (0..3)
            .flat_map(|case| (0..2).map(move |model| (case, model)))
            .filter(|&(c, m)| first.contains(c, m, 2))
            .collect();
        assert_eq!(taken, [(0, 0), (1, 1)], "positions 0 and 3");
        assert!((0..5).all(|case| Shard { index: 1, count: 1 }.contains(case, 0, 1)));
    }

    #[test]
    fn bad_shards_say_what_is_wrong() {
        assert_eq!(Shard::parse(" 2/3 "), Ok(Shard { index: 2, count: 3 }));
        assert_eq!(Shard::parse("256/256"), Ok(Shard { index: 256, count: 256 }));
        for bad in ["0/3", "4/3", "1/0", "1/257", "2", "a/3", "-1/3", "1/3/4"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }
}
