//! One [`Settings`] for every front end, resolved by one function, [`resolve`], from four
//! sources with this precedence: flags > Action inputs / environment > the config file >
//! defaults. `mcp-eval run` and `mcp-eval action` both go through it, so a setting is validated
//! once, with one syntax (`layers` accepts `0,1`, `0-3`, `all` and `auto` everywhere), and every
//! problem is returned at once, each naming where the bad value came from (flag name, input
//! name and variable, or `file:line:col` and the field).
//!
//! Code map: [`env_vars`] names every environment variable read, [`config_file`] parses the YAML
//! file with positions, [`secrets`] parses header lines and a stdio server's `NAME[=VALUE]`
//! environment entries and finds the secret parts of a URL.

pub(crate) mod config_file;
pub(crate) mod demo;
pub(crate) mod env_vars;
mod event;
pub(crate) mod layer1;
mod layer1_resolve;
pub(crate) mod oauth;
pub(crate) use layer1_resolve::budget_without_table;
mod providers;
pub(crate) mod sarif;
pub(crate) mod secrets;
pub(crate) mod table;
pub(crate) mod trace;
pub(crate) mod workspace;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::conformance::context::SafeTool;
use crate::conformance::waiver::Waiver;
use crate::error::{self, UserError};
use config_file::{ConfigFile, Located};
use table::Setting;

/// Every layer this tool knows of: 0 conformance, 1 behaviour, 2 resilience, 3 telemetry.
pub(crate) const ALL_LAYERS: [u8; 4] = [0, 1, 2, 3];
/// Default of the report directory (`--out`, input `report-path`).
pub(crate) const DEFAULT_REPORT_DIR: &str = "mcp-eval-report";
/// Default of `junit-path` in the Action.
pub(crate) const DEFAULT_JUNIT_PATH: &str = "mcp-eval-report/junit.xml";
/// Default of `eval-label`.
pub(crate) const DEFAULT_EVAL_LABEL: &str = "run-evals";
/// Default of `comment-id`.
pub(crate) const DEFAULT_COMMENT_ID: &str = "default";
/// Default of `api-url` when `GITHUB_API_URL` is not set.
pub(crate) const DEFAULT_API_URL: &str = "https://api.github.com";
/// Default of the per-request timeout, in seconds.
pub(crate) const DEFAULT_TIMEOUT_SECONDS: f64 = 10.0;
/// The largest per-request timeout accepted, in seconds.
pub(crate) const MAX_TIMEOUT_SECONDS: f64 = 3600.0;

/// Which front end is resolving: it decides which sources exist (the Action reads `INPUT_*`
/// and `GITHUB_*`; the CLI reads neither) and some defaults (`layers`: `0` for the CLI, `auto`
/// for the Action).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FrontEnd {
    /// `mcp-eval run`.
    Cli,
    /// `mcp-eval action`.
    Action,
}

/// The flags every front end shares (`mcp-eval run` and `mcp-eval action` flatten this). Every
/// field is optional: a flag not given falls through to the next source. Each help line names
/// the Action input and the config-file key that set the same thing.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SettingsArgs {
    /// [`table::SERVER_URL`].
    #[arg(long = table::SERVER_URL.long(), value_name = "URL", help = table::SERVER_URL.help())]
    pub server_url: Option<String>,
    /// [`table::SERVER_COMMAND`].
    #[arg(long = table::SERVER_COMMAND.long(), visible_alias = table::SERVER_COMMAND.input_name(), value_name = "CMD", help = table::SERVER_COMMAND.help())]
    pub server_command: Option<String>,
    /// [`table::HEADER`].
    #[arg(long = table::HEADER.long(), value_name = "'NAME: VALUE'", help = table::HEADER.help())]
    pub headers: Vec<String>,
    /// [`table::SERVER_HEADERS`].
    #[arg(long = table::SERVER_HEADERS.long(), value_name = "LINES", help = table::SERVER_HEADERS.help())]
    pub server_headers: Option<String>,
    /// [`table::SERVER_ENV`].
    #[arg(long = table::SERVER_ENV.long(), value_name = "NAME[=VALUE]", help = table::SERVER_ENV.help())]
    pub server_env: Vec<String>,
    /// [`table::OAUTH_CLIENT_ID`].
    #[arg(long = table::OAUTH_CLIENT_ID.long(), value_name = "ID", help = table::OAUTH_CLIENT_ID.help())]
    pub oauth_client_id: Option<String>,
    /// [`table::OAUTH_CLIENT_SECRET_ENV`].
    #[arg(long = table::OAUTH_CLIENT_SECRET_ENV.long(), value_name = "NAME", help = table::OAUTH_CLIENT_SECRET_ENV.help())]
    pub oauth_client_secret_env: Option<String>,
    /// [`table::OAUTH_SCOPES`].
    #[arg(long = table::OAUTH_SCOPES.long(), value_name = "SCOPES", help = table::OAUTH_SCOPES.help())]
    pub oauth_scopes: Option<String>,
    /// [`table::OAUTH_OTHER_RESOURCE`].
    #[arg(long = table::OAUTH_OTHER_RESOURCE.long(), value_name = "URL", help = table::OAUTH_OTHER_RESOURCE.help())]
    pub oauth_other_resource: Option<String>,
    /// [`table::LAYERS`].
    #[arg(long = table::LAYERS.long(), value_name = "LIST", help = table::LAYERS.help())]
    pub layers: Option<String>,
    /// [`table::REPORT_DIR`].
    #[arg(long = table::REPORT_DIR.long(), visible_alias = table::REPORT_DIR.input_name(), value_name = "DIR", help = table::REPORT_DIR.help())]
    pub out: Option<String>,
    /// [`table::SARIF`].
    #[arg(long = table::SARIF.long(), value_name = "FILE", help = table::SARIF.help())]
    pub sarif: Option<String>,
    /// [`table::JUNIT_PATH`].
    #[arg(long = table::JUNIT_PATH.long(), value_name = "FILE", help = table::JUNIT_PATH.help())]
    pub junit_path: Option<String>,
    /// [`table::EVENTS`].
    #[arg(long = table::EVENTS.long(), visible_alias = table::EVENTS.input_name(), value_name = "FILE", help = table::EVENTS.help())]
    pub events: Option<String>,
    /// [`table::TIMEOUT_SECONDS`].
    #[arg(long = table::TIMEOUT_SECONDS.long(), value_name = "SECONDS", allow_hyphen_values = true, help = table::TIMEOUT_SECONDS.help())]
    pub timeout_seconds: Option<String>,
    /// [`table::CONFIG`].
    #[arg(long = table::CONFIG.long(), value_name = "FILE", help = table::CONFIG.help())]
    pub config: Option<String>,
    /// [`table::REQUIRE_ERA`].
    #[arg(long = table::REQUIRE_ERA.long(), value_name = "REVISION", help = table::REQUIRE_ERA.help())]
    pub require_era: Option<String>,
    /// [`table::FAIL_ON`].
    #[arg(long = table::FAIL_ON.long(), value_name = "WHEN", help = table::FAIL_ON.help())]
    pub fail_on: Option<String>,
    /// [`table::GOLDEN_SET`].
    #[arg(long = table::GOLDEN_SET.long(), value_name = "FILE", help = table::GOLDEN_SET.help())]
    pub golden_set: Option<String>,
    /// [`table::MODELS`].
    #[arg(long = table::MODELS.long(), value_name = "PROVIDER:MODEL", help = table::MODELS.help())]
    pub models: Vec<String>,
    /// [`table::RUNS`].
    #[arg(long = table::RUNS.long(), value_name = "N", allow_hyphen_values = true, help = table::RUNS.help())]
    pub runs: Option<String>,
    /// [`table::CONCURRENCY`].
    #[arg(long = table::CONCURRENCY.long(), value_name = "N", allow_hyphen_values = true, help = table::CONCURRENCY.help())]
    pub concurrency: Option<String>,
    /// [`table::MAX_MODEL_CALLS`].
    #[arg(long = table::MAX_MODEL_CALLS.long(), value_name = "N", allow_hyphen_values = true, help = table::MAX_MODEL_CALLS.help())]
    pub max_model_calls: Option<String>,
    /// [`table::CASSETTES`].
    #[arg(long = table::CASSETTES.long(), value_name = "DIR", help = table::CASSETTES.help())]
    pub cassettes: Option<String>,
    /// [`table::RECORD`].
    #[arg(long = table::RECORD.long(), help = table::RECORD.help())]
    pub record: bool,
    /// [`table::REPLAY_MATCH`].
    #[arg(long = table::REPLAY_MATCH.long(), value_name = "HOW", help = table::REPLAY_MATCH.help())]
    pub replay_match: Option<String>,
    /// [`table::TRACE_RESULTS`].
    #[arg(long = table::TRACE_RESULTS.long(), value_name = "HOW", help = table::TRACE_RESULTS.help())]
    pub trace_results: Option<String>,
    /// [`table::CACHE_DIR`].
    #[arg(long = table::CACHE_DIR.long(), value_name = "DIR", help = table::CACHE_DIR.help())]
    pub cache_dir: Option<String>,
    /// [`table::CACHE_KEY`].
    #[arg(long = table::CACHE_KEY.long(), value_name = "KEY", help = table::CACHE_KEY.help())]
    pub cache_key: Option<String>,
    /// [`table::CACHE_MODE`].
    #[arg(long = table::CACHE_MODE.long(), value_name = "MODE", help = table::CACHE_MODE.help())]
    pub cache_mode: Option<String>,
    /// [`table::BASELINE`].
    #[arg(long = table::BASELINE.long(), value_name = "FILE", help = table::BASELINE.help())]
    pub baseline: Option<String>,
    /// [`table::ACCEPT_BASELINE`].
    #[arg(long = table::ACCEPT_BASELINE.long(), help = table::ACCEPT_BASELINE.help())]
    pub accept_baseline: bool,
    /// [`table::FAIL_ON_EVALS`].
    #[arg(long = table::FAIL_ON_EVALS.long(), value_name = "WHEN", help = table::FAIL_ON_EVALS.help())]
    pub fail_on_evals: Option<String>,
    /// [`table::JUDGE_MODEL`].
    #[arg(long = table::JUDGE_MODEL.long(), value_name = "PROVIDER:MODEL", help = table::JUDGE_MODEL.help())]
    pub judge_model: Option<String>,
    /// [`table::ALLOW_SELF_JUDGE`].
    #[arg(long = table::ALLOW_SELF_JUDGE.long(), help = table::ALLOW_SELF_JUDGE.help())]
    pub allow_self_judge: bool,
    /// [`table::JUDGE_SAMPLES`].
    #[arg(long = table::JUDGE_SAMPLES.long(), value_name = "N", help = table::JUDGE_SAMPLES.help())]
    pub judge_samples: Option<String>,
    /// [`table::JUDGE_CALIBRATION`].
    #[arg(long = table::JUDGE_CALIBRATION.long(), value_name = "FILE", help = table::JUDGE_CALIBRATION.help())]
    pub judge_calibration: Option<String>,
    /// [`table::FAULT_PLAN`].
    #[arg(long = table::FAULT_PLAN.long(), value_name = "FILE", help = table::FAULT_PLAN.help())]
    pub fault_plan: Option<String>,
    /// [`table::PRICE_TABLE`].
    #[arg(long = table::PRICE_TABLE.long(), value_name = "FILE", help = table::PRICE_TABLE.help())]
    pub prices: Option<String>,
    /// [`table::MAX_COST_USD`].
    #[arg(long = table::MAX_COST_USD.long(), value_name = "USD", allow_hyphen_values = true, help = table::MAX_COST_USD.help())]
    pub max_cost_usd: Option<String>,
    /// [`table::COUNT_TOKENS`].
    #[arg(long = table::COUNT_TOKENS.long(), help = table::COUNT_TOKENS.help())]
    pub count_tokens: bool,
    /// [`table::OTLP_ENDPOINT`].
    #[arg(long = table::OTLP_ENDPOINT.long(), value_name = "URL", help = table::OTLP_ENDPOINT.help())]
    pub otlp_endpoint: Option<String>,
    /// [`table::OTLP_HEADERS`].
    #[arg(long = table::OTLP_HEADERS.long(), value_name = "K=V,...", hide_env_values = true, help = table::OTLP_HEADERS.help())]
    pub otlp_headers: Option<String>,
    /// [`table::TRACE_STATE`].
    #[arg(long = table::TRACE_STATE.long(), value_name = "TRACESTATE", help = table::TRACE_STATE.help())]
    pub trace_state: Option<String>,
    /// [`table::BAGGAGE`].
    #[arg(long = table::BAGGAGE.long(), value_name = "BAGGAGE", help = table::BAGGAGE.help())]
    pub baggage: Option<String>,
    /// [`table::ALLOW_UNPRICED`].
    #[arg(long = table::ALLOW_UNPRICED.long(), help = table::ALLOW_UNPRICED.help())]
    pub allow_unpriced: bool,
    /// [`table::EMBEDDING_MODEL`].
    #[arg(long = table::EMBEDDING_MODEL.long(), value_name = "PROVIDER:MODEL", help = table::EMBEDDING_MODEL.help())]
    pub embedding_model: Option<String>,
    /// [`table::MAX_DROP`].
    #[arg(long = table::MAX_DROP.long(), value_name = "FRACTION", help = table::MAX_DROP.help())]
    pub max_drop: Option<String>,
    /// [`table::CONFIRM`].
    #[arg(long = table::CONFIRM.long(), value_name = "BOOL", help = table::CONFIRM.help())]
    pub confirm: Option<String>,
    /// [`table::SHARD`].
    #[arg(long = table::SHARD.long(), value_name = "INDEX/COUNT", help = table::SHARD.help())]
    pub shard: Option<String>,
}

/// The flags only the Action has; each overrides the input or variable named in its help.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ActionFlags {
    /// [`table::EVAL_LABEL`].
    #[arg(long = table::EVAL_LABEL.long(), value_name = "LABEL", help = table::EVAL_LABEL.help())]
    pub eval_label: Option<String>,
    /// [`table::FULL_MATRIX_SCHEDULE`].
    #[arg(long = table::FULL_MATRIX_SCHEDULE.long(), value_name = "CRON", help = table::FULL_MATRIX_SCHEDULE.help())]
    pub full_matrix_schedule: Option<String>,
    /// [`table::COMMENT`].
    #[arg(long = table::COMMENT.long(), value_name = "BOOL", help = table::COMMENT.help())]
    pub comment: Option<String>,
    /// [`table::COMMENT_ID`].
    #[arg(long = table::COMMENT_ID.long(), value_name = "ID", help = table::COMMENT_ID.help())]
    pub comment_id: Option<String>,
    /// [`table::GITHUB_TOKEN`].
    #[arg(long = table::GITHUB_TOKEN.long(), value_name = "TOKEN", hide_env_values = true, help = table::GITHUB_TOKEN.help())]
    pub github_token: Option<String>,
    /// The workflow event name [env: GITHUB_EVENT_NAME]
    #[arg(long, value_name = "NAME")]
    pub github_event_name: Option<String>,
    /// The event payload file [env: GITHUB_EVENT_PATH]
    #[arg(long, value_name = "FILE")]
    pub github_event_path: Option<String>,
    /// owner/name of the repository [env: GITHUB_REPOSITORY]
    #[arg(long, value_name = "OWNER/NAME")]
    pub github_repository: Option<String>,
    /// REST API base URL [env: GITHUB_API_URL; default https://api.github.com]
    #[arg(long, value_name = "URL")]
    pub github_api_url: Option<String>,
    /// Web base URL, for links to the run [env: GITHUB_SERVER_URL]
    #[arg(long, value_name = "URL")]
    pub github_server_url: Option<String>,
    /// The run id, for links to the run [env: GITHUB_RUN_ID]
    #[arg(long, value_name = "ID")]
    pub github_run_id: Option<String>,
    /// The commit [env: GITHUB_SHA]
    #[arg(long, value_name = "SHA")]
    pub github_sha: Option<String>,
    /// The ref the run is for, e.g. refs/heads/main [env: GITHUB_REF]
    #[arg(long, value_name = "REF")]
    pub github_ref: Option<String>,
    /// Directory relative paths are resolved against [env: GITHUB_WORKSPACE]
    #[arg(long, value_name = "DIR")]
    pub github_workspace: Option<String>,
    /// File that receives the step outputs [env: GITHUB_OUTPUT]
    #[arg(long, value_name = "FILE")]
    pub github_output: Option<String>,
    /// File that receives the job summary [env: GITHUB_STEP_SUMMARY]
    #[arg(long, value_name = "FILE")]
    pub github_step_summary: Option<String>,
    /// [`table::MERGE_REPORTS`].
    #[arg(long = table::MERGE_REPORTS.long(), value_name = "GLOB", help = table::MERGE_REPORTS.help())]
    pub merge_reports: Option<String>,
    /// [`table::MIGRATION_SCAN`].
    #[arg(long = table::MIGRATION_SCAN.long(), value_name = "BOOL", help = table::MIGRATION_SCAN.help())]
    pub migration_scan: Option<String>,
}

/// Everything a front end hands to [`resolve`].
#[derive(Debug, Clone, Default)]
pub(crate) struct Request {
    /// The shared flags.
    pub flags: SettingsArgs,
    /// The Action's own flags (ignored by the CLI).
    pub action: ActionFlags,
    /// `mcp-eval run --demo`: evaluate the embedded demo server.
    pub demo: bool,
    /// `mcp-eval merge`: shards are merged, no server is evaluated (the Action says so with
    /// its input `merge-reports`).
    pub merging: bool,
}

/// Where a value came from; shown in front of every problem with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    /// A command-line flag, e.g. `--timeout-seconds`.
    Flag(String),
    /// An Action input: its name and the variable it arrived in.
    Input {
        /// The input name (`timeout-seconds`).
        name: String,
        /// The variable (`INPUT_TIMEOUT-SECONDS`).
        var: String,
    },
    /// An environment variable (`GITHUB_REPOSITORY`).
    Env(String),
    /// A value of the config file.
    File {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: u64,
        /// 1-based column.
        column: u64,
        /// The key (`gate.fail_on`).
        field: String,
    },
    /// Nothing was given.
    Default,
}

impl fmt::Display for Source {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Flag(name) => write!(formatter, "{name}"),
            Source::Input { name, var } => write!(formatter, "input `{name}` ({var})"),
            Source::Env(var) => write!(formatter, "{var}"),
            Source::File { path, line, column, field } if field.is_empty() => {
                write!(formatter, "{}:{line}:{column}", path.display())
            }
            Source::File { path, line, column, field } => {
                write!(formatter, "{}:{line}:{column}: {field}", path.display())
            }
            Source::Default => write!(formatter, "the default"),
        }
    }
}

/// One bad input: where it came from, what is wrong, how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    /// Where the value came from.
    pub source: Source,
    /// What is wrong (never a secret value).
    pub message: String,
    /// How to fix it.
    pub hint: Option<String>,
}

impl fmt::Display for Problem {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            Source::Default => write!(formatter, "{}", self.message)?,
            source => write!(formatter, "{source}: {}", self.message)?,
        }
        if let Some(hint) = &self.hint {
            write!(formatter, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}

impl Problem {
    fn new(source: &Source, message: impl Into<String>, hint: impl Into<String>) -> Self {
        Self { source: source.clone(), message: message.into(), hint: Some(hint.into()) }
    }

    /// This problem as a [`UserError`] (exit status 2).
    pub(crate) fn into_error(self) -> UserError {
        let hint = self.hint.clone();
        let message = match &self.source {
            Source::Default => self.message,
            source => format!("{source}: {}", self.message),
        };
        UserError::new(error::Kind::InvalidInput, message).with_hint_opt(hint)
    }
}

/// The server under test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Server {
    /// A Streamable HTTP endpoint.
    Url(String),
    /// A stdio server's start command, run through `sh -c` with a scrubbed environment
    /// ([`Settings::server_env`]).
    Command(String),
    /// The embedded demo server, started on loopback for this run.
    Demo,
}

/// A file an evaluation reads: one the user named, or the text the binary holds in its place
/// (the demo's golden set and price table) under its path in the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum InputFile {
    /// A file on disk.
    Path(PathBuf),
    /// Text built into the binary.
    Builtin {
        /// Its path in the repository, as reports and messages name it.
        path: &'static str,
        /// Its text.
        text: &'static str,
    },
}

impl InputFile {
    /// Its path: on disk, or in the repository for text built in.
    pub(crate) fn path(&self) -> &Path {
        match self {
            InputFile::Path(path) => path,
            InputFile::Builtin { path, .. } => Path::new(path),
        }
    }
}

/// The `layers` setting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LayersInput {
    /// `auto`: decided from the workflow event (layer 0 outside the Action).
    Auto,
    /// An explicit list, sorted, without duplicates.
    Explicit(Vec<u8>),
}

pub(crate) use crate::verdict::FailOn;

/// The workflow run's context, from the `GITHUB_*` variables (or the Action's flags).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct GithubContext {
    /// `GITHUB_EVENT_NAME` (empty for a local run).
    pub event_name: String,
    /// `GITHUB_EVENT_PATH`.
    pub event_path: Option<PathBuf>,
    /// `GITHUB_REPOSITORY`.
    pub repository: Option<String>,
    /// `GITHUB_API_URL`, or the public API.
    pub api_url: String,
    /// `GITHUB_SERVER_URL`.
    pub server_url: Option<String>,
    /// `GITHUB_RUN_ID`.
    pub run_id: Option<String>,
    /// `GITHUB_SHA`.
    pub sha: Option<String>,
    /// `GITHUB_REF`: the ref the run is for (`refs/heads/BRANCH`, `refs/pull/N/merge`, …).
    pub reference: Option<String>,
    /// `GITHUB_WORKSPACE`, or the current directory.
    pub workspace: PathBuf,
    /// `GITHUB_OUTPUT`.
    pub output_file: Option<PathBuf>,
    /// `GITHUB_STEP_SUMMARY`.
    pub step_summary: Option<PathBuf>,
}

/// A cron string with its fields separated by single spaces, for comparison.
pub(crate) fn normalise_cron(cron: &str) -> String {
    cron.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What only the Action needs.
#[derive(Debug, Clone)]
pub(crate) struct ActionSettings {
    /// The label that asks for every layer.
    pub eval_label: String,
    /// `full-matrix-schedule`: the cron string of the schedule that runs every model (other
    /// schedules run the first model only); `None`: every schedule runs every model.
    pub full_matrix_schedule: Option<String>,
    /// Whether to post the comment.
    pub comment: bool,
    /// The comment's id among several jobs.
    pub comment_id: String,
    /// The token (a secret).
    pub token: Option<String>,
    /// The workflow run's context.
    pub github: GithubContext,
    /// `merge-reports`: a glob of report directories to merge instead of evaluating.
    pub merge_reports: Option<String>,
    /// `migration-scan`: also scan the workspace for 2025-era protocol (`mcp-eval migrate-scan`).
    pub migration_scan: bool,
    /// The event payload (`GITHUB_EVENT_PATH`; `null` when there is none or it cannot be read).
    pub payload: Value,
    /// Why the event payload could not be read, when it could not (the Action warns with it).
    pub payload_problem: Option<String>,
}

/// Everything an evaluation needs, validated. Paths are absolute or relative to the current
/// directory (the Action resolves them against the workspace).
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// The server under test.
    pub server: Server,
    /// Extra HTTP headers (values are secrets).
    pub headers: Vec<(String, String)>,
    /// The client-credentials sign-in, when a client id is given.
    pub oauth: Option<oauth::OAuthSettings>,
    /// The variables a stdio server gets beyond the few it inherits
    /// ([`crate::mcp::stdio::INHERITED_VARS`]): name and value, pass-through entries already
    /// looked up (values are secrets). Empty for an HTTP server.
    pub server_env: Vec<(String, String)>,
    /// The layers asked for.
    pub layers: LayersInput,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Directory for report.json, junit.xml and summary.md.
    pub out_dir: PathBuf,
    /// `out_dir` as the user wrote it (for outputs and messages).
    pub out_dir_label: String,
    /// A second place for junit.xml, and how the user wrote it.
    pub junit_path: Option<(PathBuf, String)>,
    /// Where SARIF is written (`--sarif`), and how the user wrote it; `None`: nowhere.
    pub sarif_path: Option<(PathBuf, String)>,
    /// The location SARIF's results point at, when one is known.
    pub sarif_location: Option<crate::report::sarif::Location>,
    /// Where the events file (`--events`) is written, and how the user wrote it; `None`: none.
    pub events_path: Option<(PathBuf, String)>,
    /// Tools that are safe to call (config file `safe_tools`).
    pub safe_tools: Vec<SafeTool>,
    /// Fail a legacy server (`require-era 2026-07-28`).
    pub require_modern: bool,
    /// The config file's waivers (`waivers`, and `suppress`, their older spelling for SEC rows),
    /// in file order: `suppress` first.
    pub waivers: Vec<crate::conformance::waiver::Waiver>,
    /// When the run fails.
    pub fail_on: FailOn,
    /// The golden set (layers 1 and 2): the user's, or the demo's ([`demo`]).
    pub golden_set: Option<InputFile>,
    /// Models, providers and limits of layer 1.
    pub layer1: layer1::Layer1Settings,
    /// The same for layer 2's trials: layer 1's, but where the demo's recordings differ (the
    /// set's own trials, no judge).
    pub layer2: layer1::Layer1Settings,
    /// Layer 3's trace context and OTLP export.
    pub trace: trace::TraceSettings,
    /// The Action's own settings (`None` for the CLI).
    pub action: Option<ActionSettings>,
    /// Things the user should know that do not stop the run (a pass-through variable not set, a
    /// model given twice).
    pub notices: Vec<String>,
}

impl Settings {
    /// Every secret value: header values, the values of the stdio server's environment, the
    /// model providers' keys, the token and the secret parts of the URL.
    pub(crate) fn secrets(&self) -> Vec<String> {
        let mut secrets: Vec<String> = self.headers.iter().map(|(_, value)| value.clone()).collect();
        secrets.extend(self.oauth.iter().map(|oauth| oauth.client_secret.clone()));
        secrets.extend(self.server_env.iter().map(|(_, value)| value.clone()));
        secrets.extend(self.layer1.keys().map(str::to_owned));
        secrets.extend(self.trace.secrets().map(str::to_owned));
        if let Some(target) = &self.trace.otlp {
            secrets.extend(secrets::url_secrets(&target.url));
        }
        for provider in &self.layer1.providers {
            secrets.extend(secrets::url_secrets(&provider.base_url));
        }
        if let Some(action) = &self.action {
            secrets.extend(action.token.clone());
        }
        if let Server::Url(url) = &self.server {
            secrets.extend(secrets::url_secrets(url));
        }
        secrets.retain(|secret| !secret.is_empty());
        secrets
    }

    /// How the target is described in reports and messages (secrets removed).
    pub(crate) fn target_label(&self) -> String {
        match &self.server {
            Server::Url(url) => secrets::url_without_secrets(url),
            Server::Command(command) => command.clone(),
            Server::Demo => "the embedded demo server".into(),
        }
    }
}

/// Secret values found in the raw request before validation, so a front end can mask them
/// (the Action's `::add-mask::`) before anything is printed, even when a header line or a
/// `server-env` entry is malformed. Values that only the config file gives are not read here:
/// the front end masks [`Settings::secrets`] too, once resolved.
pub(crate) fn raw_secrets(request: &Request, lookup: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let sources = Sources::new(request, FrontEnd::Action, lookup, None);
    let mut secrets = Vec::new();
    if let Some((_, token)) = sources.setting(&table::GITHUB_TOKEN, &request.action.github_token) {
        secrets.push(token);
    }
    if let Some((_, url)) = sources.setting(&table::SERVER_URL, &request.flags.server_url) {
        secrets.extend(secrets::url_secrets(&url));
    }
    let lines = sources.header_lines();
    for (_, line) in lines {
        let value = line.split_once(':').map_or(line.as_str(), |(_, value)| value).trim();
        if !value.is_empty() {
            secrets.push(value.to_owned());
        }
    }
    secrets.extend(layer1_resolve::raw_keys(&sources));
    secrets.extend(oauth::raw_secret(&sources));
    // The OTLP export's header values, from the input or the variables, before they are parsed.
    let otlp_headers =
        sources.setting(&table::OTLP_HEADERS, &request.flags.otlp_headers).map(|(_, text)| text).into_iter().chain(
            [env_vars::OTEL_EXPORTER_OTLP_TRACES_HEADERS, env_vars::OTEL_EXPORTER_OTLP_HEADERS]
                .into_iter()
                .filter_map(lookup),
        );
    for text in otlp_headers {
        for member in text.split(',') {
            let value = member.split_once('=').map_or(member, |(_, value)| value).trim();
            if !value.is_empty() {
                secrets.push(value.to_owned());
                secrets.extend(trace::parse_headers(member).ok().into_iter().flatten().map(|(_, value)| value));
            }
        }
    }
    for (_, entry) in sources.server_env_entries() {
        let value = match entry.split_once('=') {
            Some((_, value)) => Some(value.to_owned()),
            // A name passes our value through; a malformed entry may be a value given by mistake.
            None if secrets::valid_env_name(&entry) => lookup(&entry),
            None => Some(entry),
        };
        secrets.extend(value.filter(|value| !value.is_empty()));
    }
    secrets
}

/// The GitHub context alone, known even when other settings are invalid, so the Action can
/// still write its outputs and job summary.
pub(crate) fn github_context(request: &Request, lookup: &dyn Fn(&str) -> Option<String>) -> GithubContext {
    let sources = Sources::new(request, FrontEnd::Action, lookup, None);
    let flags = &request.action;
    let text = |flag: &Option<String>, var: &str| sources.var(flag, var).map(|(_, value)| value);
    let path = |flag: &Option<String>, var: &str| text(flag, var).map(PathBuf::from);
    GithubContext {
        event_name: text(&flags.github_event_name, env_vars::GITHUB_EVENT_NAME).unwrap_or_default(),
        event_path: path(&flags.github_event_path, env_vars::GITHUB_EVENT_PATH),
        repository: text(&flags.github_repository, env_vars::GITHUB_REPOSITORY),
        api_url: text(&flags.github_api_url, env_vars::GITHUB_API_URL).unwrap_or_else(|| DEFAULT_API_URL.to_owned()),
        server_url: text(&flags.github_server_url, env_vars::GITHUB_SERVER_URL),
        run_id: text(&flags.github_run_id, env_vars::GITHUB_RUN_ID),
        sha: text(&flags.github_sha, env_vars::GITHUB_SHA),
        reference: text(&flags.github_ref, env_vars::GITHUB_REF),
        workspace: path(&flags.github_workspace, env_vars::GITHUB_WORKSPACE).unwrap_or_else(|| PathBuf::from(".")),
        output_file: path(&flags.github_output, env_vars::GITHUB_OUTPUT),
        step_summary: path(&flags.github_step_summary, env_vars::GITHUB_STEP_SUMMARY),
    }
}

/// A problem of the config file as a settings problem, with its position.
fn config_problem(problem: config_file::FileProblem) -> Problem {
    let source = match problem.position() {
        Some((line, column)) => {
            Source::File { path: problem.file.clone(), line, column, field: problem.field.clone().unwrap_or_default() }
        }
        None => Source::Flag(format!("config file `{}`", problem.file.display())),
    };
    Problem::new(&source, problem.message.clone(), problem.hint_text())
}

/// Only layer 1's settings, for a command line that evaluates no server (`judge calibrate`):
/// the flags, the keys from the environment, and the providers and limits of the config file
/// (`--config`); the file's other sections, its server included, are not used.
///
/// # Errors
/// Every problem found, each naming its source and the fix (exit status 2).
pub(crate) fn resolve_layer1(
    request: &Request,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<layer1::Layer1Settings, Vec<Problem>> {
    let mut problems = Vec::new();
    let config_path = request.flags.config.as_deref().map(str::trim).filter(|path| !path.is_empty());
    let config = config_path.and_then(|path| {
        let (config, file_problems) = config_file::load(Path::new(path));
        problems.extend(file_problems.into_iter().map(config_problem));
        config.map(|config| (PathBuf::from(path), config))
    });
    let file_pass = problems.len();
    let sources =
        Sources::new(request, FrontEnd::Cli, lookup, config.as_ref().map(|(path, file)| (path.as_path(), file)));
    let file_unread = config_path.is_some() && config.is_none();
    let mut notices = Vec::new();
    let layer1 =
        layer1_resolve::resolve(&sources, &workspace::Workspace::default(), file_unread, &mut problems, &mut notices);
    drop_repeated_fields(&mut problems, file_pass);
    if problems.is_empty() { Ok(layer1) } else { Err(problems) }
}

/// Drops the resolvers' problems about a field of the config file that the file's own pass
/// (its structural and type checks: the first `file_pass` problems) has named already, so a
/// value of the wrong type is one problem, not also "missing" or "invalid".
fn drop_repeated_fields(problems: &mut Vec<Problem>, file_pass: usize) {
    let field = |problem: &Problem| match &problem.source {
        Source::File { path, field, .. } if !field.is_empty() => Some((path.clone(), field.clone())),
        _ => None,
    };
    let named: Vec<(PathBuf, String)> = problems.iter().take(file_pass).filter_map(field).collect();
    let mut index = 0;
    problems.retain(|problem| {
        index += 1;
        index <= file_pass || field(problem).is_none_or(|field| !named.contains(&field))
    });
}

/// Resolves the settings of `front_end` from the request's flags, the environment seen through
/// `lookup` (Action inputs and `GITHUB_*`, read by the Action only; and, for every front end,
/// the variables a `server-env` entry `NAME` passes through to a stdio server) and the config
/// file.
///
/// # Errors
/// Every problem found, each naming its source and the fix (exit status 2).
pub(crate) fn resolve(
    request: &Request,
    front_end: FrontEnd,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Settings, Vec<Problem>> {
    let mut problems = Vec::new();
    let github = (front_end == FrontEnd::Action).then(|| github_context(request, lookup));
    let workspace = workspace::Workspace::new(github.as_ref().map(|github| github.workspace.clone()));

    // The config file first: its values are the lowest source but one.
    let bare = Sources::new(request, front_end, lookup, None);
    let config = load_config(&bare, &workspace, &mut problems);
    let file_pass = problems.len();
    let merging = is_merging(&bare);
    let sources =
        Sources::new(request, front_end, lookup, config.file.as_ref().map(|(path, file)| (path.as_path(), file)));

    let server = resolve_server(&sources, config.failed, merging, &mut problems);
    let headers = resolve_headers(&sources, server.as_ref(), &mut problems);
    let oauth = oauth::resolve(&sources, server.as_ref(), &headers, &mut problems);
    let mut notices = Vec::new();
    let server_env = resolve_server_env(&sources, server.as_ref(), &mut problems, &mut notices);
    let layers = resolve_layers(&sources, &mut problems);
    let timeout = resolve_timeout(&sources, &mut problems);
    let paths = resolve_paths(&sources, &workspace, &mut problems);
    let require_modern = resolve_require_era(&sources, &mut problems);
    let fail_on = resolve_fail_on(&sources, &mut problems);
    let safe_tools = resolve_safe_tools(&sources, &mut problems);
    let mut waivers = resolve_suppressions(&sources, &workspace.root(), &mut problems);
    waivers.extend(resolve_waivers(&sources, &workspace.root(), &mut problems));

    // Layer 1: models, providers and their keys, limits.
    // A file that could not be read may define the providers the models name.
    let file_unread = config.named && config.file.is_none();
    let mut layer1 = layer1_resolve::resolve(&sources, &workspace, file_unread, &mut problems, &mut notices);
    let trace = trace::resolve(&sources, &mut problems, &mut notices);

    let action = github.map(|github| resolve_action(&sources, &workspace, github, &mut problems));
    // The Action's event decides the rest of layer 1: the store context and the schedule split.
    if let Some(action) = &action {
        event::apply(&mut layer1, action);
    }
    let sarif_location = paths.sarif_label.as_ref().and_then(|label| {
        sarif::location(&sources, &workspace.root(), paths.golden_set.as_deref(), &workspace.join(label))
    });
    // `--demo` alone: the demo's set, models, cassettes and prices.
    demo::prices(request.demo, &mut layer1);
    let (golden_set, layer1, layer2) = demo::choose(request.demo, paths.golden_set.map(InputFile::Path), layer1);
    drop_repeated_fields(&mut problems, file_pass);

    match server {
        Some(server) if problems.is_empty() => Ok(Settings {
            server,
            headers,
            oauth,
            server_env,
            layers,
            timeout,
            out_dir: workspace.join(&paths.out_dir_label),
            out_dir_label: paths.out_dir_label,
            junit_path: paths.junit_label.map(|label| (workspace.join(&label), label)),
            sarif_path: paths.sarif_label.map(|label| (workspace.join(&label), label)),
            sarif_location,
            events_path: paths.events_label.map(|label| (workspace.join(&label), label)),
            safe_tools,
            waivers,
            require_modern,
            fail_on,
            golden_set,
            layer1,
            layer2,
            trace,
            action,
            notices,
        }),
        _ => Err(problems),
    }
}

/// The config file as [`load_config`] found it.
struct LoadedConfig {
    /// A config file was named (and not refused as outside a shared-only workspace).
    named: bool,
    /// The file, where it lies and what it holds; `None` when none was named or it could not
    /// be read.
    file: Option<(PathBuf, ConfigFile)>,
    /// The file was refused or had problems: it may hold the server, so "no server" would be a
    /// false problem.
    failed: bool,
}

/// Loads the config file that `--config` (input `config`) names, against the workspace.
///
/// # Errors
/// Adds to `problems` a path outside a shared-only workspace (the file is then not read), or
/// every problem of the file as [`config_file::load`] reports them.
fn load_config(bare: &Sources<'_>, workspace: &workspace::Workspace, problems: &mut Vec<Problem>) -> LoadedConfig {
    let mut config_path = bare.setting(&table::CONFIG, &bare.request.flags.config);
    // A file that cannot be read may hold the server: then "no server" would be a false problem.
    let mut failed = false;
    if let Some(problem) = config_path.as_ref().and_then(|(source, path)| workspace.refuse_outside(source, path)) {
        problems.push(problem);
        config_path = None;
        failed = true;
    }
    let config_path = config_path.map(|(_, path)| path);
    let file = match &config_path {
        None => None,
        Some(path) => {
            let (config, file_problems) = config_file::load(&workspace.join(path));
            failed = !file_problems.is_empty();
            problems.extend(file_problems.into_iter().map(config_problem));
            config.map(|config| (workspace.join(path), config))
        }
    };
    LoadedConfig { named: config_path.is_some(), file, failed }
}

/// Whether shards are merged instead of a server evaluated: `mcp-eval merge`, or the Action's
/// input `merge-reports`. Never an error.
fn is_merging(bare: &Sources<'_>) -> bool {
    bare.request.merging
        || (bare.front_end == FrontEnd::Action
            && bare.setting(&table::MERGE_REPORTS, &bare.request.action.merge_reports).is_some())
}

/// The server under test: `--demo`, a URL (`server-url`, `server.url`) or a command
/// (`server-command`, `server.command`). With none given, merging shards gets a placeholder that
/// is never started, and a config file that failed (`config_failed`) adds no problem of its own.
///
/// # Errors
/// Adds to `problems` (and returns `None`): a URL or command set together with `--demo`, a URL
/// that is not a usable endpoint, an empty command, both a URL and a command, or no server.
fn resolve_server(
    sources: &Sources<'_>,
    config_failed: bool,
    merging: bool,
    problems: &mut Vec<Problem>,
) -> Option<Server> {
    let request = sources.request;
    let url = sources.setting(&table::SERVER_URL, &request.flags.server_url);
    let command = sources.setting(&table::SERVER_COMMAND, &request.flags.server_command);
    match (request.demo, url, command) {
        (true, None, None) => Some(Server::Demo),
        (true, Some((source, _)), _) | (true, None, Some((source, _))) => {
            problems.push(Problem::new(
                &source,
                "is set together with --demo",
                "give one server: --demo, a URL or a command",
            ));
            None
        }
        (false, Some((source, url)), None) => match check_url(&url) {
            Ok(()) => Some(Server::Url(url)),
            Err(why) => {
                problems.push(Problem::new(
                    &source,
                    format!("`{}` is not a usable endpoint URL ({why})", secrets::url_without_secrets(&url)),
                    "give the full endpoint URL, e.g. http://127.0.0.1:8000/mcp",
                ));
                None
            }
        },
        (false, None, Some((source, command))) => {
            if command.trim().is_empty() {
                problems.push(Problem::new(
                    &source,
                    "is empty",
                    "give the command that starts the stdio server, e.g. 'npx my-server --stdio'",
                ));
                None
            } else {
                Some(Server::Command(command))
            }
        }
        (false, Some((url_source, _)), Some((command_source, _))) => {
            problems.push(Problem {
                source: Source::Default,
                message: format!("both {url_source} and {command_source} are set"),
                hint: Some("give one server: a URL (Streamable HTTP) or a command (stdio)".into()),
            });
            None
        }
        (false, None, None) if config_failed => None,
        // Merging shards evaluates no server: the placeholder is never started.
        (false, None, None) if merging => Some(Server::Demo),
        (false, None, None) => {
            let (url, command) = (&table::SERVER_URL, &table::SERVER_COMMAND);
            let hint = match sources.front_end {
                FrontEnd::Cli => format!(
                    "pass {} URL (Streamable HTTP), {} 'CMD ARGS' (stdio) or --demo",
                    url.flag_name(),
                    command.flag_name()
                ),
                FrontEnd::Action => format!(
                    "set input `{}` (Streamable HTTP) or input `{}` (stdio)",
                    url.input_name(),
                    command.input_name()
                ),
            };
            problems.push(Problem {
                source: Source::Default,
                message: "no server to evaluate".into(),
                hint: Some(hint),
            });
            None
        }
    }
}

/// The extra HTTP headers: `--header`, `--server-headers` or input `server-headers`, one
/// `Name: value` a line.
///
/// # Errors
/// Adds to `problems` every line that is not a header, then, when headers are given for a stdio
/// server, that they apply to a URL only.
fn resolve_headers(
    sources: &Sources<'_>,
    server: Option<&Server>,
    problems: &mut Vec<Problem>,
) -> Vec<(String, String)> {
    let header_lines = sources.header_lines();
    let mut headers = Vec::new();
    for (source, line) in &header_lines {
        match secrets::parse_headers(std::slice::from_ref(line)) {
            Ok(mut parsed) => headers.append(&mut parsed),
            Err(problem) => problems.push(Problem::new(
                source,
                problem.to_string(),
                "write each header as 'Name: value', e.g. 'Authorization: Bearer …'",
            )),
        }
    }
    if !headers.is_empty() && matches!(server, Some(Server::Command(_))) {
        let source = header_lines.first().map(|(source, _)| source.clone()).unwrap_or(Source::Default);
        problems.push(Problem::new(
            &source,
            "headers apply to a server URL only",
            "pass credentials to a stdio server through its own environment or flags",
        ));
    }
    headers
}

/// The stdio server's environment: `NAME=VALUE` sets, `NAME` passes ours through (if set; a
/// notice says when it is not).
///
/// # Errors
/// Adds to `problems` every malformed entry, then, when entries are given for a URL or the demo
/// server, that they apply to a stdio server only.
fn resolve_server_env(
    sources: &Sources<'_>,
    server: Option<&Server>,
    problems: &mut Vec<Problem>,
    notices: &mut Vec<String>,
) -> Vec<(String, String)> {
    let env_entries = sources.server_env_entries();
    let mut server_env = Vec::new();
    for (source, entry) in &env_entries {
        match secrets::parse_env_entry(entry) {
            Ok(secrets::EnvEntry::Set(name, value)) => server_env.push((name, value)),
            Ok(secrets::EnvEntry::PassThrough(name)) => match (sources.lookup)(&name) {
                Some(value) => server_env.push((name, value)),
                None => notices.push(format!("{source}: `{name}` is not set in mcp-eval's environment, so the server does not get it")),
            },
            Err(problem) => problems.push(Problem::new(
                source,
                problem.to_string(),
                "write NAME=VALUE to set a variable or NAME to pass ours through; a NAME is letters, digits and `_`, not starting with a digit",
            )),
        }
    }
    if !env_entries.is_empty() && matches!(server, Some(Server::Url(_) | Server::Demo)) {
        problems.push(Problem::new(
            &env_entries[0].0,
            "environment variables apply to a stdio server (a command) only",
            format!(
                "give an HTTP server its credentials in headers ({}, input `{}`)",
                table::HEADER.flag_name(),
                table::SERVER_HEADERS.input_name()
            ),
        ));
    }
    server_env
}

/// The layers asked for (`--layers`, input `layers`, `layers`); `auto` when none is given.
///
/// # Errors
/// Adds to `problems` an empty value or one [`parse_layers`] refuses (layer 0 is then used).
fn resolve_layers(sources: &Sources<'_>, problems: &mut Vec<Problem>) -> LayersInput {
    match sources.setting(&table::LAYERS, &sources.request.flags.layers) {
        None => LayersInput::Auto,
        Some((source, text)) if text.trim().is_empty() => {
            problems.push(Problem::new(
                &source,
                "no layer given",
                "layers are 0 to 3: use e.g. 0, 0,1, 0-3, all or auto",
            ));
            LayersInput::Explicit(vec![0])
        }
        Some((source, text)) => match parse_layers(&text) {
            Ok(layers) => layers,
            Err(error) => {
                // `9` is not a layer; in a longer value, say which part.
                let detail = error.to_string();
                let message = if detail.starts_with(&format!("`{}`", text.trim())) {
                    detail
                } else {
                    format!("`{text}`: {detail}")
                };
                problems.push(Problem::new(&source, message, "layers are 0 to 3: use e.g. 0, 0,1, 0-3, all or auto"));
                LayersInput::Explicit(vec![0])
            }
        },
    }
}

/// The per-request timeout (`--timeout-seconds`, input `timeout-seconds`, `timeout_seconds`);
/// [`DEFAULT_TIMEOUT_SECONDS`] when none is given.
///
/// # Errors
/// Adds to `problems` a value that is not a number of seconds above 0 and at most
/// [`MAX_TIMEOUT_SECONDS`] (the default is then used).
fn resolve_timeout(sources: &Sources<'_>, problems: &mut Vec<Problem>) -> Duration {
    match sources.setting(&table::TIMEOUT_SECONDS, &sources.request.flags.timeout_seconds) {
        None => Duration::from_secs_f64(DEFAULT_TIMEOUT_SECONDS),
        Some((source, text)) => match text.trim().parse::<f64>() {
            Ok(seconds) if seconds.is_finite() && seconds > 0.0 && seconds <= MAX_TIMEOUT_SECONDS => {
                Duration::from_secs_f64(seconds)
            }
            _ => {
                problems.push(Problem::new(
                    &source,
                    format!("`{text}` is not a timeout"),
                    "give a number of seconds greater than 0 and at most 3600, e.g. 10",
                ));
                Duration::from_secs_f64(DEFAULT_TIMEOUT_SECONDS)
            }
        },
    }
}

/// The paths [`resolve_paths`] found: the outputs as labels (how outputs and messages name
/// them), the golden set as a path.
struct Paths {
    /// The report directory.
    out_dir_label: String,
    /// The second junit.xml (by default one in the Action).
    junit_label: Option<String>,
    /// The events file.
    events_label: Option<String>,
    /// The golden set, below the workspace.
    golden_set: Option<PathBuf>,
    /// The SARIF file.
    sarif_label: Option<String>,
}

/// The report directory (`--out`, default [`DEFAULT_REPORT_DIR`]), the second junit.xml
/// (`--junit-path`, default [`DEFAULT_JUNIT_PATH`] in the Action), the events file (`--events`)
/// and the golden set (`--golden-set`), in that order. In a Docker action only the workspace is
/// shared with the runner: a path outside it is refused (a report written there would be lost
/// with the container).
///
/// # Errors
/// Adds to `problems` every path outside a shared-only workspace ([`workspace::Workspace::shared`]);
/// the setting is then as if not given.
fn resolve_paths(sources: &Sources<'_>, workspace: &workspace::Workspace, problems: &mut Vec<Problem>) -> Paths {
    let flags = &sources.request.flags;
    let out_dir_label = workspace
        .shared(sources.setting(&table::REPORT_DIR, &flags.out), problems)
        .map_or_else(|| DEFAULT_REPORT_DIR.to_owned(), |(_, text)| workspace.label(&text));
    let junit_label = workspace
        .shared(sources.setting(&table::JUNIT_PATH, &flags.junit_path), problems)
        .map(|(_, text)| workspace.label(&text))
        .or_else(|| (sources.front_end == FrontEnd::Action).then(|| DEFAULT_JUNIT_PATH.to_owned()));
    let events_label = workspace
        .shared(sources.setting(&table::EVENTS, &flags.events), problems)
        .map(|(_, text)| workspace.label(&text));
    let golden_set = workspace
        .shared(sources.setting(&table::GOLDEN_SET, &flags.golden_set), problems)
        .map(|(_, text)| workspace.join(&text));
    let sarif_label = workspace
        .shared(sources.setting(&table::SARIF, &flags.sarif), problems)
        .map(|(_, text)| workspace.label(&text));
    Paths { out_dir_label, junit_label, events_label, golden_set, sarif_label }
}

/// Whether a legacy server fails (`--require-era`, input `require-era`, `require_era`); `false`
/// when none is given.
///
/// # Errors
/// Adds to `problems` a revision other than the one that can be required (then `false`).
fn resolve_require_era(sources: &Sources<'_>, problems: &mut Vec<Problem>) -> bool {
    match sources.setting(&table::REQUIRE_ERA, &sources.request.flags.require_era) {
        None => false,
        Some((_, text)) if text.trim() == crate::mcp::jsonrpc::PROTOCOL_VERSION => true,
        Some((source, text)) => {
            problems.push(Problem::new(
                &source,
                format!("`{text}` cannot be required"),
                "the only revision that can be required is 2026-07-28",
            ));
            false
        }
    }
}

/// When the run fails (`--fail-on`, input `fail-on`, `gate.fail_on`); [`FailOn::Must`] when
/// none is given.
///
/// # Errors
/// Adds to `problems` a value other than must, should or never (then [`FailOn::Must`]).
fn resolve_fail_on(sources: &Sources<'_>, problems: &mut Vec<Problem>) -> FailOn {
    match sources.setting(&table::FAIL_ON, &sources.request.flags.fail_on) {
        None => FailOn::Must,
        Some((source, text)) => match text.trim().to_ascii_lowercase().as_str() {
            "must" => FailOn::Must,
            "should" => FailOn::Should,
            "never" => FailOn::Never,
            _ => {
                problems.push(Problem::new(&source, format!("`{text}` is not a policy"), "use must, should or never"));
                FailOn::Must
            }
        },
    }
}

/// The tools that are safe to call: the config file's `safe_tools`, in order.
///
/// # Errors
/// Adds to `problems` every entry whose name is empty (the entry is left out).
fn resolve_safe_tools(sources: &Sources<'_>, problems: &mut Vec<Problem>) -> Vec<SafeTool> {
    let mut safe_tools = Vec::new();
    if let Some((path, config)) = sources.file {
        for (index, entry) in config.safe_tools.iter().enumerate() {
            if entry.value.name.trim().is_empty() {
                problems.push(Problem::new(
                    &file_source(path, entry, &format!("{}[{index}].name", table::SAFE_TOOLS.key_name())),
                    "is empty",
                    "give the exact tool name as the server lists it",
                ));
                continue;
            }
            safe_tools.push(SafeTool {
                name: entry.value.name.clone(),
                arguments: Value::Object(entry.value.arguments.clone().unwrap_or_default()),
            });
        }
    }
    safe_tools
}

/// The findings of the static scan the config file suppresses (`suppress`, the older spelling
/// of `waivers` for SEC rows), in order, as waivers.
///
/// # Errors
/// Adds to `problems`, for every entry, the first of: a rule the scan does not have, an element
/// not named as the report names it, an empty reason (the entry is left out).
fn resolve_suppressions(sources: &Sources<'_>, root: &Path, problems: &mut Vec<Problem>) -> Vec<Waiver> {
    let mut suppressions = Vec::new();
    if let Some((path, config)) = sources.file {
        for (index, entry) in config.suppress.iter().enumerate() {
            let item = &entry.value;
            let rule = item.rule.trim().to_ascii_uppercase();
            if !crate::conformance::security::ROWS.contains(&rule.as_str()) {
                problems.push(Problem::new(
                    &file_source(path, entry, &format!("{}[{index}].rule", table::SUPPRESS.key_name())),
                    format!("`{}` is not a rule of the static scan", item.rule),
                    format!("use one of {}", crate::conformance::security::ROWS.join(", ")),
                ));
                continue;
            }
            if item.element.trim().is_empty() || !item.element.contains('[') {
                problems.push(Problem::new(
                    &file_source(path, entry, &format!("{}[{index}].element", table::SUPPRESS.key_name())),
                    format!("`{}` is not an element as the report names it", item.element),
                    "copy it from the finding, e.g. `tools[connect]` or `prompts[summarize]`",
                ));
                continue;
            }
            if item.reason.trim().is_empty() {
                problems.push(Problem::new(
                    &file_source(path, entry, &format!("{}[{index}].reason", table::SUPPRESS.key_name())),
                    "is empty",
                    "say why this finding is not a problem here: the report shows it",
                ));
                continue;
            }
            suppressions.push(Waiver {
                rule,
                element: Some(item.element.trim().to_owned()),
                probe: None,
                path: item.path.as_ref().map(|path| path.trim().to_owned()).filter(|path| !path.is_empty()),
                reason: item.reason.trim().to_owned(),
                expires: None,
                transport: None,
                source: waiver_source(path, root, entry.referenced.line()),
                key: table::SUPPRESS.key_name(),
            });
        }
    }
    suppressions
}

/// `FILE:LINE` of a waiver, the file relative to the workspace when it lies in it (the reports
/// name it as the repository does, not as the runner's disk does).
fn waiver_source(path: &Path, root: &Path, line: u64) -> String {
    format!("{}:{line}", path.strip_prefix(root).unwrap_or(path).display())
}

/// The config file's `waivers`, in order.
///
/// # Errors
/// Adds to `problems`, for every entry, each of: a missing or unknown rule (with the nearest
/// id), a missing or empty reason, an `expires` that is not a `YYYY-MM-DD` date, a SEC row's
/// element not named as the report names it (the entry is left out).
fn resolve_waivers(sources: &Sources<'_>, root: &Path, problems: &mut Vec<Problem>) -> Vec<Waiver> {
    use crate::conformance::requirements::REQUIREMENTS;
    let mut waivers = Vec::new();
    let Some((path, config)) = sources.file else { return waivers };
    let text = |value: &Option<Located<String>>| {
        value.as_ref().map(|value| value.value.trim().to_owned()).filter(|value| !value.is_empty())
    };
    for (index, entry) in config.waivers.iter().enumerate() {
        let item = &entry.value;
        let field = |name: &str| format!("{}[{index}].{name}", table::WAIVERS.key_name());
        let at = |value: Option<&Located<String>>, name: &str| match value {
            Some(value) => file_source(path, value, &field(name)),
            None => file_source(path, entry, &field(name)),
        };
        let before = problems.len();
        let rule = text(&item.rule).map(|rule| rule.to_ascii_uppercase());
        match &rule {
            None => problems.push(Problem::new(
                &at(item.rule.as_ref(), "rule"),
                "is missing",
                "name the row to waive by its requirement id, as the report shows it, e.g. `rule: M-10`",
            )),
            Some(rule) if !REQUIREMENTS.iter().any(|requirement| requirement.id == rule) => {
                let ids = REQUIREMENTS.iter().map(|requirement| requirement.id);
                let hint = match crate::suggest::nearest_id(rule, ids) {
                    Some(near) => {
                        format!("did you mean `{near}`? (the ids are the report's rows, listed in docs/layer-0.md)")
                    }
                    None => {
                        "use a requirement id as the report shows it, e.g. `M-10` or `SEC-7` (docs/layer-0.md)".into()
                    }
                };
                problems.push(Problem::new(
                    &at(item.rule.as_ref(), "rule"),
                    format!("`{rule}` is not a requirement id"),
                    hint,
                ));
            }
            Some(_) => {}
        }
        let reason = text(&item.reason);
        if reason.is_none() {
            problems.push(Problem::new(
                &at(item.reason.as_ref(), "reason"),
                if item.reason.is_some() { "is empty" } else { "is missing" },
                "say why this finding is accepted here, e.g. `reason: the SDK's error, reported upstream`: every report shows it",
            ));
        }
        let expires = match &item.expires {
            None => None,
            Some(value) => {
                let given = config_file::scalar_text(&value.value).unwrap_or_default();
                match chrono::NaiveDate::parse_from_str(given.trim(), "%Y-%m-%d") {
                    Ok(day) => Some(day),
                    Err(_) => {
                        problems.push(Problem::new(
                            &file_source(path, value, &field("expires")),
                            format!("`{given}` is not a date"),
                            "write the last day the waiver holds as YYYY-MM-DD, e.g. `expires: 2027-03-31`",
                        ));
                        None
                    }
                }
            }
        };
        let transport = text(&item.transport).map(|given| given.to_ascii_lowercase());
        if let Some(given) = &transport
            && given != "http"
            && given != "stdio"
        {
            problems.push(Problem::new(
                &at(item.transport.as_ref(), "transport"),
                format!("`{given}` is not a transport"),
                "write `transport: http` or `transport: stdio` (the runs it waives), or leave it out to waive on both",
            ));
        }
        let element = text(&item.element);
        if let (Some(rule), Some(element)) = (&rule, &element)
            && rule.starts_with("SEC-")
            && !element.contains('[')
        {
            problems.push(Problem::new(
                &at(item.element.as_ref(), "element"),
                format!("`{element}` is not an element as the report names it"),
                "copy it from the finding, e.g. `tools[connect]` or `prompts[summarize]`",
            ));
        }
        if problems.len() > before {
            continue;
        }
        waivers.push(Waiver {
            rule: rule.unwrap_or_default(),
            element,
            probe: text(&item.probe),
            path: text(&item.path),
            reason: reason.unwrap_or_default(),
            expires,
            transport,
            source: waiver_source(path, root, entry.referenced.line()),
            key: table::WAIVERS.key_name(),
        });
    }
    waivers
}

/// The Action's own settings: the eval label, the comment and its id, the token, the workflow
/// run's context (`github`) and `merge-reports`.
///
/// # Errors
/// Adds to `problems`, in this order: a `comment` that is not a boolean, a `comment-id` with
/// other characters or too long, a `GITHUB_REPOSITORY` that is not `owner/name`, a
/// `GITHUB_API_URL` that is not http(s), a `merge-reports` outside a shared-only workspace.
fn resolve_action(
    sources: &Sources<'_>,
    workspace: &workspace::Workspace,
    github: GithubContext,
    problems: &mut Vec<Problem>,
) -> ActionSettings {
    let flags = &sources.request.action;
    let eval_label = sources
        .setting(&table::EVAL_LABEL, &flags.eval_label)
        .map_or_else(|| DEFAULT_EVAL_LABEL.to_owned(), |(_, text)| text);
    let boolean = |given: Option<(Source, String)>, default: bool, problems: &mut Vec<Problem>| match given {
        None => default,
        Some((source, text)) => match text.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "1" => true,
            "false" | "no" | "off" | "0" => false,
            _ => {
                problems.push(Problem::new(&source, format!("`{text}` is not a boolean"), "use true or false"));
                default
            }
        },
    };
    let comment = boolean(sources.setting(&table::COMMENT, &flags.comment), true, problems);
    let migration_scan = boolean(sources.setting(&table::MIGRATION_SCAN, &flags.migration_scan), false, problems);
    let comment_id = resolve_comment_id(sources, problems);
    let full_matrix_schedule = sources
        .setting(&table::FULL_MATRIX_SCHEDULE, &flags.full_matrix_schedule)
        .filter(|(_, text)| !text.trim().is_empty())
        .and_then(|(source, text)| {
            let fields = text.split_whitespace().count();
            if fields == 5 {
                Some(normalise_cron(&text))
            } else {
                problems.push(Problem::new(
                    &source,
                    format!("`{text}` is not a cron string ({fields} field(s), not 5)"),
                    "copy the `cron:` of the workflow's weekly schedule, e.g. \"0 3 * * 0\"",
                ));
                None
            }
        });
    let token = sources.setting(&table::GITHUB_TOKEN, &flags.github_token).map(|(_, text)| text);
    if let Some(repository) = &github.repository {
        if repository.split('/').filter(|part| !part.is_empty()).count() != 2 {
            problems.push(Problem::new(
                &Source::Env(env_vars::GITHUB_REPOSITORY.into()),
                format!("`{repository}` is not `owner/name`"),
                "leave it to the runner, which sets it",
            ));
        }
    }
    if !(github.api_url.starts_with("http://") || github.api_url.starts_with("https://")) {
        problems.push(Problem::new(
            &Source::Env(env_vars::GITHUB_API_URL.into()),
            format!("`{}` is not an http(s) URL", github.api_url),
            "leave it to the runner, which sets it",
        ));
    }
    let merge_reports =
        workspace.shared(sources.setting(&table::MERGE_REPORTS, &flags.merge_reports), problems).map(|(_, text)| text);
    let (payload, payload_problem) = event::read_payload(&github);
    ActionSettings {
        eval_label,
        full_matrix_schedule,
        comment,
        comment_id,
        token,
        github,
        merge_reports,
        migration_scan,
        payload,
        payload_problem,
    }
}

/// The Action's `comment-id` (flag, then input); [`DEFAULT_COMMENT_ID`] when none is given.
///
/// # Errors
/// Adds to `problems` an id with characters other than letters, digits, `-`, `_`, `.`, `/` and
/// spaces, or longer than 100 (the id is still returned).
fn resolve_comment_id(sources: &Sources<'_>, problems: &mut Vec<Problem>) -> String {
    match sources.setting(&table::COMMENT_ID, &sources.request.action.comment_id) {
        None => DEFAULT_COMMENT_ID.to_owned(),
        Some((source, text)) => {
            let valid = text.chars().count() <= 100
                && text.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | ' '));
            if !valid {
                problems.push(Problem::new(
                    &source,
                    format!("`{text}` has characters other than letters, digits, `-`, `_`, `.`, `/` and spaces, or is longer than 100"),
                    "e.g. comment-id: ${{ matrix.server }}",
                ));
            }
            text
        }
    }
}

/// Why a `layers` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum LayersError {
    /// A part that is not 0–3.
    #[error("`{0}` is not a layer")]
    NotALayer(String),
    /// A range whose start is after its end.
    #[error("`{0}` is an empty range")]
    EmptyRange(String),
    /// Only separators.
    #[error("no layer given")]
    Empty,
}

/// Parses a `layers` value: `auto`, `all`, or a comma list of layers and ranges (`0,1`, `0-3`).
///
/// # Errors
/// A part that is not a layer 0–3, an empty range, or no layer at all.
pub(crate) fn parse_layers(text: &str) -> Result<LayersInput, LayersError> {
    let text = text.trim();
    if text.is_empty() || text.eq_ignore_ascii_case("auto") {
        return Ok(LayersInput::Auto);
    }
    if text.eq_ignore_ascii_case("all") {
        return Ok(LayersInput::Explicit(ALL_LAYERS.to_vec()));
    }
    let mut layers = Vec::new();
    for part in text.split(',').map(str::trim).filter(|part| !part.is_empty()) {
        let parse = |value: &str| match value.trim().parse::<u8>() {
            Ok(layer @ 0..=3) => Ok(layer),
            _ => Err(LayersError::NotALayer(part.to_owned())),
        };
        match part.split_once('-') {
            Some((low, high)) => {
                let (low, high) = (parse(low)?, parse(high)?);
                if low > high {
                    return Err(LayersError::EmptyRange(part.to_owned()));
                }
                layers.extend(low..=high);
            }
            None => layers.push(parse(part)?),
        }
    }
    if layers.is_empty() {
        return Err(LayersError::Empty);
    }
    layers.sort_unstable();
    layers.dedup();
    Ok(LayersInput::Explicit(layers))
}

/// `Err` says why `url` is not a usable endpoint.
fn check_url(url: &str) -> Result<(), UnusableUrl> {
    match url::Url::parse(url) {
        Ok(parsed) if matches!(parsed.scheme(), "http" | "https") && parsed.host_str().is_some() => Ok(()),
        Ok(parsed) => Err(UnusableUrl::Scheme(parsed.scheme().to_owned())),
        Err(error) => Err(UnusableUrl::Parse(error)),
    }
}

/// Why a URL is not a usable endpoint, shown in parentheses after the sentence quoting it.
#[derive(Debug, thiserror::Error)]
enum UnusableUrl {
    /// Not http or https (or no host).
    #[error("scheme `{0}`; http or https is needed")]
    Scheme(String),
    /// Not a URL.
    #[error("{0}")]
    Parse(url::ParseError),
}

fn file_source<T>(path: &Path, value: &Located<T>, field: &str) -> Source {
    Source::File {
        path: path.to_owned(),
        line: value.referenced.line(),
        column: value.referenced.column(),
        field: field.to_owned(),
    }
}

/// The sources of one resolution, in precedence order.
struct Sources<'a> {
    request: &'a Request,
    front_end: FrontEnd,
    lookup: &'a dyn Fn(&str) -> Option<String>,
    file: Option<(&'a Path, &'a ConfigFile)>,
}

impl<'a> Sources<'a> {
    fn new(
        request: &'a Request,
        front_end: FrontEnd,
        lookup: &'a dyn Fn(&str) -> Option<String>,
        file: Option<(&'a Path, &'a ConfigFile)>,
    ) -> Self {
        Self { request, front_end, lookup, file }
    }

    /// The config file's values, when a file was read.
    fn config(&self) -> Option<&'a ConfigFile> {
        self.file.map(|(_, file)| file)
    }

    /// An Action input, as the runner spells its variable or with underscores; empty is unset.
    fn input(&self, name: &str) -> Option<(Source, String)> {
        if self.front_end != FrontEnd::Action {
            return None;
        }
        [env_vars::input_var(name), env_vars::input_var_underscore(name)].into_iter().find_map(|var| {
            (self.lookup)(&var)
                .filter(|value| !value.trim().is_empty())
                .map(|value| (Source::Input { name: name.to_owned(), var }, value.trim().to_owned()))
        })
    }

    /// A setting with no Action input: the flag, else the config-file value.
    fn flag_or_file(
        &self,
        flag: &Option<String>,
        flag_name: &str,
        file: Option<(&Located<Value>, &str)>,
    ) -> Option<(Source, String)> {
        if let Some(value) = flag.as_deref().filter(|value| !value.trim().is_empty()) {
            return Some((Source::Flag(flag_name.to_owned()), value.trim().to_owned()));
        }
        let (path, _) = self.file?;
        let (value, field) = file?;
        let text = config_file::scalar_text(&value.value).unwrap_or_else(|| value.value.to_string());
        Some((file_source(path, value, field), text))
    }

    /// A setting by its row in [`table`]: its flag (`flag`, the request's field of it), else its
    /// Action input, else its config-file value.
    fn setting(&self, row: &Setting, flag: &Option<String>) -> Option<(Source, String)> {
        let flag_name = row.flag_name();
        let file = self.config().and_then(|config| config.value(row)).zip(row.key());
        self.flag_or_file(flag, &flag_name, None)
            .or_else(|| row.input.and_then(|input| self.input(input)))
            .or_else(|| self.flag_or_file(&None, &flag_name, file))
    }

    /// A `GITHUB_*` variable or the flag that overrides it.
    fn var(&self, flag: &Option<String>, var: &str) -> Option<(Source, String)> {
        if let Some(value) = flag.as_deref().map(str::trim).filter(|value| !value.is_empty()) {
            return Some((Source::Flag(format!("--{}", var.to_ascii_lowercase().replace('_', "-"))), value.to_owned()));
        }
        (self.lookup)(var)
            .map(|value| value.trim().to_owned())
            .filter(|value| !value.is_empty())
            .map(|value| (Source::Env(var.to_owned()), value))
    }

    /// `server-env` entries: every `--server-env` flag, else the input's lines, else the config
    /// file's `server.env` list (one precedence, like every other setting).
    fn server_env_entries(&self) -> Vec<(Source, String)> {
        let flags: Vec<(Source, String)> = self
            .request
            .flags
            .server_env
            .iter()
            .filter(|entry| !entry.trim().is_empty())
            .map(|entry| (Source::Flag(table::SERVER_ENV.flag_name()), entry.clone()))
            .collect();
        if !flags.is_empty() {
            return flags;
        }
        if let Some((source, text)) = self.input(table::SERVER_ENV.input_name()) {
            return text
                .lines()
                .map(str::trim)
                .filter(|line| !line.is_empty())
                .map(|line| (source.clone(), line.to_owned()))
                .collect();
        }
        let Some((path, file)) = self.file else { return Vec::new() };
        let key = table::SERVER_ENV.key_name();
        file.strings(&table::SERVER_ENV)
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(index, entry)| (file_source(path, entry, &format!("{key}[{index}]")), entry.value.clone()))
            .collect()
    }

    /// Header lines from `--header` (repeatable) and `--server-headers` (lines), else the input.
    fn header_lines(&self) -> Vec<(Source, String)> {
        let flags = &self.request.flags;
        let mut lines: Vec<(Source, String)> =
            flags.headers.iter().map(|line| (Source::Flag("--header".into()), line.clone())).collect();
        let block = match flags.server_headers.as_deref().filter(|text| !text.trim().is_empty()) {
            Some(text) => Some((Source::Flag("--server-headers".into()), text.to_owned())),
            None if lines.is_empty() => self.input(table::SERVER_HEADERS.input_name()),
            None => None,
        };
        if let Some((source, text)) = block {
            lines.extend(
                text.lines()
                    .map(str::trim)
                    .filter(|line| !line.is_empty())
                    .map(|line| (source.clone(), line.to_owned())),
            );
        }
        lines
    }
}

#[cfg(test)]
mod tests;
