//! Every setting as one row: its flag, its Action input (and so its `INPUT_*` variable), its
//! config-file key and the shape of its value there (or why the file has none), and its help
//! line. The rest is derived from these rows: the clap flags' names and help
//! ([`Setting::long`], [`Setting::help`]), the config file's keys and their shapes
//! ([`super::config_file`]), where each flag of `run` lives in the file (`FLAG_KEYS`, tested) and
//! the resolvers' lookups ([`super::Sources::setting`]). `action.yml` stays a file of its own; a
//! test checks its inputs against these rows.
//!
//! The rows of the file's keys are in the order the file's hint lists them (the
//! `the keys here are …` of an unknown key); a section (`server`, `gate`) sits where its first
//! key does, and its keys are the rows whose key starts with `SECTION.`.
//!
//! A new setting is a row here, a field of [`super::SettingsArgs`] (or
//! [`super::ActionFlags`]) that names it, a line in `action.yml` and its use in a resolver.

use super::config_file::Shape;

/// Who has the setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Front {
    /// `mcp-eval run` and `mcp-eval action` (a field of [`super::SettingsArgs`]).
    Both,
    /// The Action only (a field of [`super::ActionFlags`], or an input with no flag).
    Action,
    /// The config file only (no flag, no input).
    File,
}

/// Where a setting lives in the config file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileKey {
    /// Its key (dotted below a section: `gate.fail_on`) and the shape of its value.
    Key(&'static str, Shape),
    /// The file has no key for it, and why.
    Not(&'static str),
}

/// Which names the help line shows in its brackets, `[Action input: …; config: …; default …]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shows {
    /// The input and the key.
    Both,
    /// The input only.
    Input,
    /// The key only.
    Key,
    /// Neither.
    Neither,
}

/// One setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Setting {
    /// Its flag, without `--`; `None`: it has none.
    pub flag: Option<&'static str>,
    /// Its Action input (`INPUT_` and the name upper-cased is its variable); `None`: none.
    pub input: Option<&'static str>,
    /// Its config-file key, or why it has none.
    pub file: FileKey,
    /// Who has it.
    pub front: Front,
    /// The help line of its flag, before the brackets.
    pub help: &'static str,
    /// What the brackets of the help line name.
    pub shows: Shows,
    /// Said after the input's name in the help (`, one per line`).
    pub input_note: &'static str,
    /// The default as the help says it (`default 10`, `default: none for the CLI, …`).
    pub default: Option<&'static str>,
}

/// A row's fields that most rows share.
const ROW: Setting = Setting {
    flag: None,
    input: None,
    file: FileKey::Not(""),
    front: Front::Both,
    help: "",
    shows: Shows::Both,
    input_note: "",
    default: None,
};

/// `base` with a flag and an Action input of the same name.
const fn named(name: &'static str, base: Setting) -> Setting {
    Setting { flag: Some(name), input: Some(name), ..base }
}

/// A key of the file that holds no setting of a flag or an input: its shape only.
const fn file_only(key: &'static str, shape: Shape) -> Setting {
    Setting { file: FileKey::Key(key, shape), front: Front::File, shows: Shows::Neither, ..ROW }
}

impl Setting {
    /// The flag's long name, for clap. Panics for a row without a flag (a bug in the table).
    pub(crate) const fn long(&self) -> &'static str {
        match self.flag {
            Some(flag) => flag,
            None => panic!("a setting without a flag"),
        }
    }

    /// The input's name. Panics for a row without an input (a bug in the table).
    pub(crate) const fn input_name(&self) -> &'static str {
        match self.input {
            Some(input) => input,
            None => panic!("a setting without an Action input"),
        }
    }

    /// The config-file key, when it has one.
    pub(crate) const fn key(&self) -> Option<&'static str> {
        match self.file {
            FileKey::Key(key, _) => Some(key),
            FileKey::Not(_) => None,
        }
    }

    /// The config-file key. Panics for a row without one (a bug in the table).
    pub(crate) const fn key_name(&self) -> &'static str {
        match self.file {
            FileKey::Key(key, _) => key,
            FileKey::Not(_) => panic!("a setting without a config-file key"),
        }
    }

    /// The flag as the user types it (`--timeout-seconds`), for messages.
    pub(crate) fn flag_name(&self) -> String {
        format!("--{}", self.flag.or(self.input).unwrap_or_default())
    }

    /// The help line of the flag: the text, then in brackets what [`Setting::shows`] names and the
    /// default.
    pub(crate) fn help(&self) -> String {
        let mut parts = Vec::new();
        if matches!(self.shows, Shows::Both | Shows::Input)
            && let Some(input) = self.input
        {
            parts.push(format!("Action input: {input}{}", self.input_note));
        }
        if matches!(self.shows, Shows::Both | Shows::Key)
            && let Some(key) = self.key()
        {
            parts.push(format!("config: {key}"));
        }
        parts.extend(self.default.map(str::to_owned));
        if parts.is_empty() { self.help.to_owned() } else { format!("{} [{}]", self.help, parts.join("; ")) }
    }
}

/// `--server-url`.
pub(crate) const SERVER_URL: Setting = Setting {
    file: FileKey::Key("server.url", Shape::Scalar),
    help: "URL of a Streamable HTTP server, e.g. http://127.0.0.1:8000/mcp",
    ..named("server-url", ROW)
};
/// `--server-cmd`.
pub(crate) const SERVER_COMMAND: Setting = Setting {
    flag: Some("server-cmd"),
    input: Some("server-command"),
    file: FileKey::Key("server.command", Shape::Scalar),
    help: "Command that starts a stdio server (run through `sh -c`)",
    ..ROW
};
/// `--server-env`.
pub(crate) const SERVER_ENV: Setting = Setting {
    file: FileKey::Key("server.env", Shape::Strings),
    help: "Environment variable for a stdio server (repeatable): NAME=VALUE sets it (the value is a secret), NAME passes ours through when set; the server inherits nothing else but PATH, HOME, USER, LOGNAME, SHELL, LANG, LC_ALL, LC_CTYPE, TZ, TMPDIR and TERM",
    ..named("server-env", ROW)
};
/// `--header`.
pub(crate) const HEADER: Setting = Setting {
    flag: Some("header"),
    file: FileKey::Not("a header may hold a secret, and secrets have no place in the file"),
    help: "Extra HTTP header for every request, 'Name: value' (repeatable); values are secrets",
    shows: Shows::Neither,
    ..ROW
};
/// `--server-headers`.
pub(crate) const SERVER_HEADERS: Setting = Setting {
    file: FileKey::Not("headers may hold secrets, and secrets have no place in the file"),
    help: "Extra HTTP headers, one 'Name: value' per line; values are secrets",
    ..named("server-headers", ROW)
};
/// `--oauth-client-id`.
pub(crate) const OAUTH_CLIENT_ID: Setting = Setting {
    file: FileKey::Key("oauth.client_id", Shape::Scalar),
    help: "Sign in to a protected HTTP server as a CI client (OAuth client-credentials grant) with this client id; the secret is read from the variable --oauth-client-secret-env names",
    ..named("oauth-client-id", ROW)
};
/// `--oauth-client-secret-env`.
pub(crate) const OAUTH_CLIENT_SECRET_ENV: Setting = Setting {
    flag: Some("oauth-client-secret-env"),
    file: FileKey::Key("oauth.client_secret_env", Shape::Scalar),
    help: "The environment variable that holds the OAuth client secret (a name, never the secret: flags land in shell history)",
    shows: Shows::Key,
    default: Some("default MCP_EVAL_OAUTH_CLIENT_SECRET"),
    ..ROW
};
/// `--oauth-scopes`.
pub(crate) const OAUTH_SCOPES: Setting = Setting {
    file: FileKey::Key("oauth.scopes", Shape::Scalar),
    help: "The scopes the client-credentials sign-in asks for, space-separated",
    default: Some("default: the authorization server's"),
    ..named("oauth-scopes", ROW)
};
/// `--oauth-other-resource`.
pub(crate) const OAUTH_OTHER_RESOURCE: Setting = Setting {
    file: FileKey::Key("oauth.other_resource", Shape::Scalar),
    help: "Another resource registered for the same client: a token minted for it must be refused by the server (A-5)",
    ..named("oauth-other-resource", ROW)
};
/// `--layers`.
pub(crate) const LAYERS: Setting = Setting {
    file: FileKey::Key("layers", Shape::Scalars),
    help: "Layers: `0`, `0,1`, `0-3`, `all` or `auto` (decided from the event)",
    ..named("layers", ROW)
};
/// `--timeout-seconds`.
pub(crate) const TIMEOUT_SECONDS: Setting = Setting {
    file: FileKey::Key("timeout_seconds", Shape::Scalar),
    help: "Per-request timeout in seconds",
    default: Some("default 10"),
    ..named("timeout-seconds", ROW)
};
/// `--out`.
pub(crate) const REPORT_DIR: Setting = Setting {
    flag: Some("out"),
    input: Some("report-path"),
    file: FileKey::Key("report_dir", Shape::Scalar),
    help: "Directory for report.json, junit.xml and summary.md",
    default: Some("default mcp-eval-report"),
    ..ROW
};
/// `--junit-path`.
pub(crate) const JUNIT_PATH: Setting = Setting {
    file: FileKey::Key("junit_path", Shape::Scalar),
    help: "Also write junit.xml here",
    ..named("junit-path", ROW)
};
/// `--events`.
pub(crate) const EVENTS: Setting = Setting {
    flag: Some("events"),
    input: Some("events-path"),
    file: FileKey::Key("events_path", Shape::Scalar),
    help: "Also write the run's events here, one JSON line each (docs/events-format.md)",
    ..ROW
};
/// `--sarif`.
pub(crate) const SARIF: Setting = Setting {
    flag: Some("sarif"),
    input: Some("sarif-path"),
    file: FileKey::Key("sarif_path", Shape::Scalar),
    help: "Also write the layer-0 and static-scan findings as SARIF 2.1.0 here, for GitHub code scanning",
    ..ROW
};
/// `--require-era`.
pub(crate) const REQUIRE_ERA: Setting = Setting {
    file: FileKey::Key("require_era", Shape::Scalar),
    help: "Fail a server that does not speak this revision (only `2026-07-28`)",
    ..named("require-era", ROW)
};
/// `--golden-set`.
pub(crate) const GOLDEN_SET: Setting = Setting {
    file: FileKey::Key("golden_set", Shape::Scalar),
    help: "Golden set for layer 1",
    ..named("golden-set", ROW)
};
/// `safe_tools:` (the file only).
pub(crate) const SAFE_TOOLS: Setting = file_only("safe_tools", Shape::ListOf(&["name", "arguments"]));
/// `suppress:` (the file only; the older spelling of `waivers` for SEC rows).
pub(crate) const SUPPRESS: Setting = file_only("suppress", Shape::ListOf(&["rule", "element", "path", "reason"]));
/// `waivers:` (the file only).
pub(crate) const WAIVERS: Setting =
    file_only("waivers", Shape::ListOf(&["rule", "element", "probe", "path", "reason", "expires", "transport"]));
/// `--fail-on`.
pub(crate) const FAIL_ON: Setting = Setting {
    file: FileKey::Key("gate.fail_on", Shape::Scalar),
    help: "When the run fails: must (a MUST failure), should (also a warning), never",
    default: Some("default must"),
    ..named("fail-on", ROW)
};
/// `--fail-on-evals`.
pub(crate) const FAIL_ON_EVALS: Setting = Setting {
    file: FileKey::Key("gate.fail_on_evals", Shape::Scalar),
    help: "When layer 1 fails the run: regression, strict, failure or never",
    shows: Shows::Input,
    default: Some("default: failure for the CLI, regression for the Action"),
    ..named("fail-on-evals", ROW)
};
/// `--max-drop`.
pub(crate) const MAX_DROP: Setting = Setting {
    file: FileKey::Key("gate.max_drop", Shape::Scalar),
    help: "The smallest drop of the mean pass rate that can fail the gate, 0..1",
    shows: Shows::Input,
    default: Some("default 0.02"),
    ..named("max-drop", ROW)
};
/// `--model`.
pub(crate) const MODELS: Setting = Setting {
    flag: Some("model"),
    input: Some("models"),
    file: FileKey::Key("models", Shape::Strings),
    help: "Model for layer 1, PROVIDER:MODEL, e.g. openai:gpt-4.1-mini (repeatable); providers: openai, anthropic, replay and the config file's",
    input_note: ", one per line",
    ..ROW
};
/// `providers:` (the file only).
pub(crate) const PROVIDERS: Setting = file_only("providers", Shape::ListOf(&["id", "api", "base_url", "api_key_env"]));
/// `--runs`.
pub(crate) const RUNS: Setting = Setting {
    file: FileKey::Key("runs", Shape::Scalar),
    help: "The number of trials of every layer-1 case, 1 to 100, overriding the golden set's",
    ..named("runs", ROW)
};
/// `--concurrency`.
pub(crate) const CONCURRENCY: Setting = Setting {
    file: FileKey::Key("concurrency", Shape::Scalar),
    help: "Layer-1 trials in flight at once, 1 to 64",
    default: Some("default 4"),
    ..named("concurrency", ROW)
};
/// `--max-model-calls`.
pub(crate) const MAX_MODEL_CALLS: Setting = Setting {
    file: FileKey::Key("max_model_calls", Shape::Scalar),
    help: "Hard cap on model calls in one evaluation, at least 1",
    default: Some("default 2000"),
    ..named("max-model-calls", ROW)
};
/// `--trace-results`.
pub(crate) const TRACE_RESULTS: Setting = Setting {
    file: FileKey::Key("trace_results", Shape::Scalar),
    help: "How much of tool results and model text the traces keep: full, truncated (the first 2048 bytes of each) or none",
    default: Some("default truncated"),
    ..named("trace-results", ROW)
};
/// `--judge-calibration`.
pub(crate) const JUDGE_CALIBRATION: Setting = Setting {
    file: FileKey::Key("judge_calibration", Shape::Scalar),
    help: "What `mcp-eval judge calibrate` measured of the judge (a JSON file): judge pass rates are then also reported Rogan–Gladen corrected",
    ..named("judge-calibration", ROW)
};
/// `--fault-plan`.
pub(crate) const FAULT_PLAN: Setting = Setting {
    file: FileKey::Key("fault_plan", Shape::Scalar),
    help: "Layer 2's faults for the whole suite: a YAML list of {cases: GLOB, tool: NAME|\"*\", fault, on_call}",
    ..named("fault-plan", ROW)
};
/// `--prices`.
pub(crate) const PRICE_TABLE: Setting = Setting {
    flag: Some("prices"),
    input: Some("price-table"),
    file: FileKey::Key("price_table", Shape::Scalar),
    help: "Layer 3's price table: a YAML file of USD prices per 1M (or 1K) tokens by provider and model glob; without one every cost is unknown; it also counts the cost budget",
    ..ROW
};
/// `--max-cost-usd`.
pub(crate) const MAX_COST_USD: Setting = Setting {
    file: FileKey::Key("max_cost_usd", Shape::Scalar),
    help: "The most the run's model calls may cost, in USD, above 0 and at most 1000000 (needs --prices; the demo has its own): an up-front estimate over it stops the run before any model call (exit 6); during the run no trial starts once it is reached, and the cases left are skipped (exit 6)",
    ..named("max-cost-usd", ROW)
};
/// `--allow-unpriced`.
pub(crate) const ALLOW_UNPRICED: Setting = Setting {
    file: FileKey::Key("allow_unpriced", Shape::Flag),
    help: "With --max-cost-usd: start even when the price table does not price every model asked (their calls count as free against the budget)",
    ..named("allow-unpriced", ROW)
};
/// `--otlp-endpoint`.
pub(crate) const OTLP_ENDPOINT: Setting = Setting {
    file: FileKey::Key("otlp_endpoint", Shape::Scalar),
    help: "Layer 3: export the trials' spans over OTLP/HTTP (protobuf) to this collector, a base URL to which /v1/traces is added; OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and OTEL_EXPORTER_OTLP_ENDPOINT are honoured when it is not given",
    ..named("otlp-endpoint", ROW)
};
/// `--otlp-headers`.
pub(crate) const OTLP_HEADERS: Setting = Setting {
    file: FileKey::Not("headers may hold secrets, and secrets have no place in the file"),
    help: "The OTLP export's headers, key=value pairs separated by commas, values percent-encoded (secrets); else OTEL_EXPORTER_OTLP_TRACES_HEADERS or OTEL_EXPORTER_OTLP_HEADERS",
    ..named("otlp-headers", ROW)
};
/// `--trace-state`.
pub(crate) const TRACE_STATE: Setting = Setting {
    file: FileKey::Key("trace_state", Shape::Scalar),
    help: "Layer 3: a W3C tracestate sent beside every traceparent",
    ..named("trace-state", ROW)
};
/// `--baggage`.
pub(crate) const BAGGAGE: Setting = Setting {
    file: FileKey::Key("baggage", Shape::Scalar),
    help: "Layer 3: W3C baggage sent beside every traceparent",
    ..named("baggage", ROW)
};
/// `--embedding-model`.
pub(crate) const EMBEDDING_MODEL: Setting = Setting {
    file: FileKey::Key("embedding_model", Shape::Scalar),
    help: "The model whose embeddings grade `embedding` argument matchers, PROVIDER:MODEL on an OpenAI-compatible provider",
    shows: Shows::Input,
    ..named("embedding-model", ROW)
};
/// `--cassettes`.
pub(crate) const CASSETTES: Setting = Setting {
    file: FileKey::Key("cassettes", Shape::Scalar),
    help: "Replay model exchanges from this directory instead of calling the providers",
    shows: Shows::Neither,
    ..named("cassettes", ROW)
};
/// `--replay-match`.
pub(crate) const REPLAY_MATCH: Setting = Setting {
    flag: Some("replay-match"),
    file: FileKey::Key("replay_match", Shape::Scalar),
    help: "How replay matches a recording: tolerant (the model side — system text, prompt, tools, calls so far and their error flags; tool-result text that changed is data, replayed and noted) or exact (the whole request)",
    shows: Shows::Key,
    default: Some("default tolerant"),
    ..ROW
};
/// `--cache-dir`.
pub(crate) const CACHE_DIR: Setting = Setting {
    file: FileKey::Key("cache_dir", Shape::Scalar),
    help: "The layer-1 verdict cache directory: unchanged cases × models are reused, zero model calls",
    shows: Shows::Input,
    default: Some("default: none for the CLI, .mcp-eval-cache for the Action"),
    ..named("cache-dir", ROW)
};
/// `--cache-key`.
pub(crate) const CACHE_KEY: Setting = Setting {
    file: FileKey::Key("cache_key", Shape::Scalar),
    help: "What cached verdicts are also keyed on: auto (a hash of the working directory's files as git would track them), none, or a text",
    shows: Shows::Input,
    default: Some("default: none for the CLI, auto for the Action"),
    ..named("cache-key", ROW)
};
/// `--cache-mode`.
pub(crate) const CACHE_MODE: Setting = Setting {
    flag: Some("cache-mode"),
    input: Some("cache"),
    file: FileKey::Key("cache_mode", Shape::Scalar),
    help: "read-write, write-only or off",
    shows: Shows::Input,
    default: Some("default read-write, write-only on schedule"),
    ..ROW
};
/// `--baseline`.
pub(crate) const BASELINE: Setting = Setting {
    file: FileKey::Key("baseline", Shape::Scalar),
    help: "A report.json to compare layer 1 with, instead of the stored baseline",
    shows: Shows::Input,
    ..named("baseline", ROW)
};
/// `--judge-model`.
pub(crate) const JUDGE_MODEL: Setting = Setting {
    file: FileKey::Key("judge_model", Shape::Scalar),
    help: "The model that grades rubrics and `judge` argument matchers, PROVIDER:MODEL; it must differ from the models under test",
    shows: Shows::Input,
    ..named("judge-model", ROW)
};
/// `--judge-samples`.
pub(crate) const JUDGE_SAMPLES: Setting = Setting {
    file: FileKey::Key("judge_samples", Shape::Scalar),
    help: "Judge calls per trial, majority vote",
    shows: Shows::Neither,
    default: Some("default 1"),
    ..named("judge-samples", ROW)
};
/// `--allow-self-judge`.
pub(crate) const ALLOW_SELF_JUDGE: Setting = Setting {
    file: FileKey::Key("allow_self_judge", Shape::Flag),
    help: "Let a model judge its own trials (flagged in the report)",
    shows: Shows::Neither,
    ..named("allow-self-judge", ROW)
};
/// `--confirm`.
pub(crate) const CONFIRM: Setting = Setting {
    file: FileKey::Key("confirm", Shape::Flag),
    help: "When the gate trips, re-run the worsened cases (5 more trials each) and decide again: true or false",
    shows: Shows::Input,
    default: Some("default true"),
    ..named("confirm", ROW)
};
/// `--config`.
pub(crate) const CONFIG: Setting = Setting {
    file: FileKey::Not("it names the file itself"),
    help: "The YAML config file (safe_tools, gate, server, …)",
    ..named("config", ROW)
};
/// `--record`.
pub(crate) const RECORD: Setting = Setting {
    flag: Some("record"),
    file: FileKey::Not("a one-off: it re-records the cassettes, which a standing key would do on every run"),
    help: "With --cassettes: call the real providers and write what they answered into the directory",
    ..ROW
};
/// `--accept-baseline`.
pub(crate) const ACCEPT_BASELINE: Setting = Setting {
    file: FileKey::Not("a one-off decision about one run's results"),
    help: "Store this run's layer-1 results as the baseline whatever the gate says",
    ..named("accept-baseline", ROW)
};
/// `--count-tokens`.
pub(crate) const COUNT_TOKENS: Setting = Setting {
    flag: Some("count-tokens"),
    file: FileKey::Not("it sends the tool definitions to the provider on every run: asked for run by run"),
    help: "Layer 3: count each tool definition's tokens for Anthropic models with the provider's free count-tokens endpoint (one request per tool and model, not a model call) instead of estimating them",
    ..ROW
};
/// `--shard`.
pub(crate) const SHARD: Setting = Setting {
    file: FileKey::Not("it differs from job to job of a matrix: give it per job"),
    help: "Run one slice of layer 1's case × model list, INDEX/COUNT (1 ≤ INDEX ≤ COUNT ≤ 256), e.g. 2/3; layer 0 runs in shard 1 only; join the shards with `mcp-eval merge`",
    ..named("shard", ROW)
};

/// A row of the Action's own settings: its flag is its input's name.
const ACTION: Setting = Setting { front: Front::Action, file: FileKey::Not("the Action's own"), ..ROW };

/// `eval-label`.
pub(crate) const EVAL_LABEL: Setting = Setting {
    help: "The pull request label that asks for every layer",
    default: Some("default run-evals"),
    ..named("eval-label", ACTION)
};
/// `full-matrix-schedule`.
pub(crate) const FULL_MATRIX_SCHEDULE: Setting = Setting {
    help: "The cron string of the schedule that runs every model; other schedules run only the first of `models`",
    ..named("full-matrix-schedule", ACTION)
};
/// `comment`.
pub(crate) const COMMENT: Setting = Setting {
    help: "Post and update the pull request comment: true or false",
    default: Some("default true"),
    ..named("comment", ACTION)
};
/// `comment-id`.
pub(crate) const COMMENT_ID: Setting = Setting {
    help: "Tells the comments of several jobs or matrix legs apart",
    default: Some("default default"),
    ..named("comment-id", ACTION)
};
/// `github-token`.
pub(crate) const GITHUB_TOKEN: Setting = Setting {
    help: "Token for the comment; prefer the environment, flags are visible to other processes",
    ..named("github-token", ACTION)
};
/// `merge-reports`.
pub(crate) const MERGE_REPORTS: Setting = Setting {
    help: "Merge the reports of shards instead of evaluating: a glob of report directories, e.g. reports/*",
    ..named("merge-reports", ACTION)
};
/// `migration-scan`.
pub(crate) const MIGRATION_SCAN: Setting = Setting {
    help: "Also scan the workspace for 2025-era MCP protocol the 2026-07-28 revision removed (mcp-eval migrate-scan): annotations and a table in the job summary; never fails the job: true or false",
    default: Some("default false"),
    ..named("migration-scan", ACTION)
};
/// Input `openai-api-key`: the key of the built-in `openai` provider (a secret); wins over
/// `OPENAI_API_KEY`.
pub(crate) const OPENAI_API_KEY: Setting = Setting { input: Some("openai-api-key"), ..ACTION };
/// Input `anthropic-api-key`: the key of the built-in `anthropic` provider (a secret); wins over
/// `ANTHROPIC_API_KEY`.
pub(crate) const ANTHROPIC_API_KEY: Setting = Setting { input: Some("anthropic-api-key"), ..ACTION };

/// Input `oauth-client-secret`: the OAuth client secret (masked); wins over the variable
/// `--oauth-client-secret-env` names.
pub(crate) const OAUTH_CLIENT_SECRET: Setting =
    Setting { input: Some("oauth-client-secret"), file: FileKey::Not("a secret has no place in the file"), ..ACTION };

/// Every row. The rows with a config-file key are in the file's order (see the module's doc).
pub(crate) const SETTINGS: &[Setting] = &[
    SERVER_URL,
    SERVER_COMMAND,
    SERVER_ENV,
    HEADER,
    SERVER_HEADERS,
    OAUTH_CLIENT_ID,
    OAUTH_CLIENT_SECRET_ENV,
    OAUTH_SCOPES,
    OAUTH_OTHER_RESOURCE,
    LAYERS,
    TIMEOUT_SECONDS,
    REPORT_DIR,
    JUNIT_PATH,
    EVENTS,
    SARIF,
    REQUIRE_ERA,
    GOLDEN_SET,
    SAFE_TOOLS,
    SUPPRESS,
    WAIVERS,
    FAIL_ON,
    FAIL_ON_EVALS,
    MAX_DROP,
    MODELS,
    PROVIDERS,
    RUNS,
    CONCURRENCY,
    MAX_MODEL_CALLS,
    TRACE_RESULTS,
    JUDGE_CALIBRATION,
    FAULT_PLAN,
    PRICE_TABLE,
    MAX_COST_USD,
    ALLOW_UNPRICED,
    OTLP_ENDPOINT,
    TRACE_STATE,
    BAGGAGE,
    EMBEDDING_MODEL,
    CASSETTES,
    REPLAY_MATCH,
    CACHE_DIR,
    CACHE_KEY,
    CACHE_MODE,
    BASELINE,
    JUDGE_MODEL,
    JUDGE_SAMPLES,
    ALLOW_SELF_JUDGE,
    CONFIRM,
    CONFIG,
    RECORD,
    ACCEPT_BASELINE,
    OTLP_HEADERS,
    COUNT_TOKENS,
    SHARD,
    EVAL_LABEL,
    FULL_MATRIX_SCHEDULE,
    COMMENT,
    COMMENT_ID,
    GITHUB_TOKEN,
    MERGE_REPORTS,
    MIGRATION_SCAN,
    OPENAI_API_KEY,
    ANTHROPIC_API_KEY,
    OAUTH_CLIENT_SECRET,
];

/// Where each flag of `run` lives in the file: its key (dotted below a section), or why it has
/// none. A test walks the flags of `run` and fails on one missing here.
#[cfg(test)]
pub(crate) fn flag_keys() -> Vec<(&'static str, Result<&'static str, &'static str>)> {
    SETTINGS
        .iter()
        .filter(|row| row.front == Front::Both)
        .filter_map(|row| {
            let key = match row.file {
                FileKey::Key(key, _) => Ok(key),
                FileKey::Not(why) => Err(why),
            };
            Some((row.flag?, key))
        })
        .collect()
}

/// Every Action input.
#[cfg(test)]
pub(crate) fn inputs() -> Vec<&'static str> {
    SETTINGS.iter().filter_map(|row| row.input).collect()
}

/// The Markdown table, in `docs/action.md`, of the Action inputs whose flag of `mcp-eval action`
/// is not spelled as the input (and of those with no flag), in the rows' order.
#[cfg(test)]
pub(crate) fn renamed_inputs_table() -> String {
    let mut table = String::from("| input | flag of `mcp-eval action` |\n|---|---|\n");
    for row in SETTINGS {
        match (row.input, row.flag) {
            (Some(input), Some(flag)) if input != flag => table.push_str(&format!("| `{input}` | `--{flag}` |\n")),
            (Some(input), None) => {
                let named = format!("{input}-env");
                let cell = match SETTINGS.iter().find(|other| other.flag == Some(named.as_str())) {
                    Some(_) => format!("none (a secret): `--{named}` names the variable that holds it"),
                    None => "none (a secret): the input or the environment only".to_owned(),
                };
                table.push_str(&format!("| `{input}` | {cell} |\n"));
            }
            _ => {}
        }
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `docs/action.md` lists every input whose flag is spelled otherwise, from these rows, between
    /// `<!-- renamed inputs: generated from src/settings/table.rs -->` and
    /// `<!-- end of renamed inputs -->`; `MCP_EVAL_UPDATE_DOCS=1 cargo test --lib settings::`
    /// rewrites it.
    #[test]
    fn the_docs_list_every_input_whose_flag_is_spelled_otherwise() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/action.md");
        let text = std::fs::read_to_string(&path).expect("docs/action.md");
        let begin = "<!-- renamed inputs: generated from src/settings/table.rs -->\n";
        let end = "<!-- end of renamed inputs -->";
        let start = text.find(begin).expect("docs/action.md has the renamed inputs' table") + begin.len();
        let stop = start + text[start..].find(end).expect("the table ends");
        let want = renamed_inputs_table();
        if text[start..stop] == want {
            return;
        }
        if std::env::var_os("MCP_EVAL_UPDATE_DOCS").is_some() {
            std::fs::write(&path, format!("{}{want}{}", &text[..start], &text[stop..]))
                .expect("docs/action.md is writable");
            return;
        }
        panic!(
            "docs/action.md's table of renamed inputs differs from the settings' rows; run \
             `MCP_EVAL_UPDATE_DOCS=1 cargo test --lib settings::` to regenerate it.\nwanted:\n{want}\nfound:\n{}",
            &text[start..stop]
        );
    }

    #[test]
    fn every_input_of_action_yml_is_read_and_none_else() {
        let yml = include_str!("../../action.yml");
        let section = &yml[yml.find("\ninputs:\n").expect("inputs")..yml.find("\noutputs:\n").expect("outputs")];
        let mut names: Vec<&str> = section
            .lines()
            .filter_map(|line| line.strip_prefix("  ").and_then(|rest| rest.strip_suffix(':')))
            .filter(|name| !name.starts_with(' '))
            .collect();
        let mut rows = inputs();
        names.sort_unstable();
        rows.sort_unstable();
        assert_eq!(names, rows);
    }

    #[test]
    fn names_are_given_once() {
        for (index, row) in SETTINGS.iter().enumerate() {
            for other in &SETTINGS[index + 1..] {
                assert!(row.flag.is_none() || row.flag != other.flag, "{row:?}");
                assert!(row.input.is_none() || row.input != other.input, "{row:?}");
                assert!(row.key().is_none() || row.key() != other.key(), "{row:?}");
            }
            if let FileKey::Not(why) = row.file {
                assert!(!why.trim().is_empty(), "{row:?} needs a key or a reason");
            }
        }
    }
}
