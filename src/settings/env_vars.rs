//! Every environment variable the Action reads, as a documented constant: the action inputs
//! (`INPUT_*`, as the runner spells them), the `GITHUB_*` variables of the workflow run and the
//! built-in model providers' URL and key variables (read by every front end).
//!
//! This module only names variables; reading them is [`super::resolve`]'s job.

/// Prefix of the action inputs. The runner upper-cases the input name and keeps its hyphens
/// (`server-url` arrives as `INPUT_SERVER-URL`); we also accept the underscore spelling.
pub(crate) const INPUT_PREFIX: &str = "INPUT_";

/// Input `server-url`: the Streamable HTTP endpoint of the server under test.
pub(crate) const INPUT_SERVER_URL: &str = "server-url";
/// Input `server-command`: the command that starts a stdio server inside the container.
pub(crate) const INPUT_SERVER_COMMAND: &str = "server-command";
/// Input `server-headers`: one `Name: value` per line; values are secrets.
pub(crate) const INPUT_SERVER_HEADERS: &str = "server-headers";
/// Input `server-env`: a stdio server's environment, one `NAME=VALUE` (the value is a secret) or
/// `NAME` (our variable passed through) per line.
pub(crate) const INPUT_SERVER_ENV: &str = "server-env";
/// Input `layers`: `auto` (the trigger logic decides) or an explicit list such as `0,1`.
pub(crate) const INPUT_LAYERS: &str = "layers";
/// Input `eval-label`: the pull request label that asks for every layer.
pub(crate) const INPUT_EVAL_LABEL: &str = "eval-label";
/// Input `golden-set`: the golden set for layer 1 (accepted, not used by layer 0).
pub(crate) const INPUT_GOLDEN_SET: &str = "golden-set";
/// Input `junit-path`: where the JUnit file is written.
pub(crate) const INPUT_JUNIT_PATH: &str = "junit-path";
/// Input `events-path`: where the events file (JSON lines) is written; empty: none.
pub(crate) const INPUT_EVENTS_PATH: &str = "events-path";
/// Input `report-path`: the directory for `report.json`, `junit.xml` and `summary.md`.
pub(crate) const INPUT_REPORT_PATH: &str = "report-path";
/// Input `comment`: post (and update) the pull request comment.
pub(crate) const INPUT_COMMENT: &str = "comment";
/// Input `comment-id`: distinguishes the comments of several jobs or matrix legs.
pub(crate) const INPUT_COMMENT_ID: &str = "comment-id";
/// Input `github-token`: the token for the comment (a secret).
pub(crate) const INPUT_GITHUB_TOKEN: &str = "github-token";
/// Input `fail-on`: `must`, `should` or `never`.
pub(crate) const INPUT_FAIL_ON: &str = "fail-on";
/// Input `timeout-seconds`: the per-request timeout.
pub(crate) const INPUT_TIMEOUT_SECONDS: &str = "timeout-seconds";
/// Input `config`: the YAML config file (safe_tools, gate, …).
pub(crate) const INPUT_CONFIG: &str = "config";
/// Input `require-era`: `2026-07-28` fails a legacy server.
pub(crate) const INPUT_REQUIRE_ERA: &str = "require-era";

/// Input `models`: layer 1's models, one `PROVIDER:MODEL` per line (`#` starts a comment).
pub(crate) const INPUT_MODELS: &str = "models";
/// Input `openai-api-key`: the key of the built-in `openai` provider (a secret); wins over
/// `OPENAI_API_KEY`.
pub(crate) const INPUT_OPENAI_API_KEY: &str = "openai-api-key";
/// Input `anthropic-api-key`: the key of the built-in `anthropic` provider (a secret); wins over
/// `ANTHROPIC_API_KEY`.
pub(crate) const INPUT_ANTHROPIC_API_KEY: &str = "anthropic-api-key";
/// Input `runs`: runs of every layer-1 case, overriding the golden set's.
pub(crate) const INPUT_RUNS: &str = "runs";
/// Input `concurrency`: layer-1 runs in flight at once.
pub(crate) const INPUT_CONCURRENCY: &str = "concurrency";
/// Input `max-model-calls`: the hard cap on model calls in one evaluation.
pub(crate) const INPUT_MAX_MODEL_CALLS: &str = "max-model-calls";
/// Input `trace-results`: `full`, `truncated` or `none`.
pub(crate) const INPUT_TRACE_RESULTS: &str = "trace-results";
/// Input `cassettes`: a directory of recorded model exchanges layer 1 replays instead of calling
/// the providers (`--cassettes`, config `cassettes`), relative to the workspace.
pub(crate) const INPUT_CASSETTES: &str = "cassettes";
/// Input `cache-dir`: the verdict cache's directory (default `.mcp-eval-cache`).
pub(crate) const INPUT_CACHE_DIR: &str = "cache-dir";
/// Input `cache-key`: the server key of cached verdicts: `auto` (default), `none` or a text.
pub(crate) const INPUT_CACHE_KEY: &str = "cache-key";
/// Input `cache`: `read-write` (default; `write-only` on `schedule`), `write-only` or `off`.
pub(crate) const INPUT_CACHE: &str = "cache";
/// Input `baseline`: a report.json to compare layer 1 with, instead of the stored baseline.
pub(crate) const INPUT_BASELINE: &str = "baseline";
/// Input `accept-baseline`: `true` stores this run's results as the baseline whatever the gate.
pub(crate) const INPUT_ACCEPT_BASELINE: &str = "accept-baseline";
/// Input `fail-on-evals`: `regression` (default in the Action), `failure` or `never`.
pub(crate) const INPUT_FAIL_ON_EVALS: &str = "fail-on-evals";
/// Input `judge-model`: the `PROVIDER:MODEL` that grades rubrics.
pub(crate) const INPUT_JUDGE_MODEL: &str = "judge-model";
/// Input `judge-samples`: judge calls per run, majority vote (1 to 9).
pub(crate) const INPUT_JUDGE_SAMPLES: &str = "judge-samples";
/// Input `allow-self-judge`: `true` lets a model under test judge its own runs (flagged).
pub(crate) const INPUT_ALLOW_SELF_JUDGE: &str = "allow-self-judge";
/// Input `judge-calibration`: the file `mcp-eval judge calibrate` wrote.
pub(crate) const INPUT_JUDGE_CALIBRATION: &str = "judge-calibration";
/// Layer 2's fault plan, relative to the workspace.
pub(crate) const INPUT_FAULT_PLAN: &str = "fault-plan";
/// Input `price-table`: layer 3's price table, relative to the workspace.
pub(crate) const INPUT_PRICE_TABLE: &str = "price-table";
/// Input `max-cost-usd`: the most the run's model calls may cost, in USD.
pub(crate) const INPUT_MAX_COST_USD: &str = "max-cost-usd";
/// Input `allow-unpriced`: `true` lets a budget start with models the price table does not price.
pub(crate) const INPUT_ALLOW_UNPRICED: &str = "allow-unpriced";
/// Input `full-matrix-schedule`: the cron string of the schedule that runs every model.
pub(crate) const INPUT_FULL_MATRIX_SCHEDULE: &str = "full-matrix-schedule";
/// Input `otlp-endpoint`: the OTLP/HTTP collector's base URL layer 3 exports spans to.
pub(crate) const INPUT_OTLP_ENDPOINT: &str = "otlp-endpoint";
/// Input `otlp-headers`: `key=value,…` headers of the OTLP export; values are secrets.
pub(crate) const INPUT_OTLP_HEADERS: &str = "otlp-headers";
/// Input `trace-state`: the W3C `tracestate` sent beside every `traceparent`.
pub(crate) const INPUT_TRACE_STATE: &str = "trace-state";
/// Input `baggage`: the W3C `baggage` sent beside every `traceparent`.
pub(crate) const INPUT_BAGGAGE: &str = "baggage";
/// Input `sarif-path`: where the SARIF file of layer 0's and the static scan's findings goes.
pub(crate) const INPUT_SARIF_PATH: &str = "sarif-path";
/// Input `embedding-model`: the `PROVIDER:MODEL` whose embeddings grade `embedding` matchers.
pub(crate) const INPUT_EMBEDDING_MODEL: &str = "embedding-model";
/// Input `confirm`: `false` turns the gate's confirmation re-run off.
pub(crate) const INPUT_CONFIRM: &str = "confirm";
/// Input `max-drop`: the smallest drop of the mean pass rate that can fail the gate (0..1).
pub(crate) const INPUT_MAX_DROP: &str = "max-drop";
/// Input `shard`: `INDEX/COUNT`, the slice of layer 1's case × model list this job runs.
pub(crate) const INPUT_SHARD: &str = "shard";
/// Input `migration-scan`: `true` also scans the workspace for 2025-era protocol.
pub(crate) const INPUT_MIGRATION_SCAN: &str = "migration-scan";
/// Input `merge-reports`: a glob of report directories; when set, the Action merges them instead
/// of evaluating.
pub(crate) const INPUT_MERGE_REPORTS: &str = "merge-reports";

/// Every input name, in the order of `action.yml`.
#[cfg(test)]
pub(crate) const ALL_INPUTS: [&str; 51] = [
    INPUT_SERVER_URL,
    INPUT_SERVER_COMMAND,
    INPUT_SERVER_HEADERS,
    INPUT_SERVER_ENV,
    INPUT_LAYERS,
    INPUT_EVAL_LABEL,
    INPUT_GOLDEN_SET,
    INPUT_JUNIT_PATH,
    INPUT_SARIF_PATH,
    INPUT_EVENTS_PATH,
    INPUT_REPORT_PATH,
    INPUT_COMMENT,
    INPUT_COMMENT_ID,
    INPUT_GITHUB_TOKEN,
    INPUT_FAIL_ON,
    INPUT_TIMEOUT_SECONDS,
    INPUT_CONFIG,
    INPUT_REQUIRE_ERA,
    INPUT_MODELS,
    INPUT_OPENAI_API_KEY,
    INPUT_ANTHROPIC_API_KEY,
    INPUT_RUNS,
    INPUT_CONCURRENCY,
    INPUT_MAX_MODEL_CALLS,
    INPUT_TRACE_RESULTS,
    INPUT_CASSETTES,
    INPUT_CACHE_DIR,
    INPUT_CACHE_KEY,
    INPUT_CACHE,
    INPUT_SHARD,
    INPUT_MERGE_REPORTS,
    INPUT_BASELINE,
    INPUT_ACCEPT_BASELINE,
    INPUT_FAIL_ON_EVALS,
    INPUT_JUDGE_MODEL,
    INPUT_JUDGE_SAMPLES,
    INPUT_ALLOW_SELF_JUDGE,
    INPUT_JUDGE_CALIBRATION,
    INPUT_FAULT_PLAN,
    INPUT_CONFIRM,
    INPUT_MAX_DROP,
    INPUT_EMBEDDING_MODEL,
    INPUT_PRICE_TABLE,
    INPUT_MAX_COST_USD,
    INPUT_ALLOW_UNPRICED,
    INPUT_FULL_MATRIX_SCHEDULE,
    INPUT_OTLP_ENDPOINT,
    INPUT_OTLP_HEADERS,
    INPUT_TRACE_STATE,
    INPUT_BAGGAGE,
    INPUT_MIGRATION_SCAN,
];

/// The API root of the built-in `openai` provider (default `https://api.openai.com/v1`).
pub(crate) const OPENAI_BASE_URL: &str = "OPENAI_BASE_URL";
/// The key of the built-in `openai` provider.
pub(crate) const OPENAI_API_KEY: &str = "OPENAI_API_KEY";
/// The API root of the built-in `anthropic` provider (default `https://api.anthropic.com`).
pub(crate) const ANTHROPIC_BASE_URL: &str = "ANTHROPIC_BASE_URL";
/// The key of the built-in `anthropic` provider.
pub(crate) const ANTHROPIC_API_KEY: &str = "ANTHROPIC_API_KEY";

/// OpenTelemetry's exporter variables (the OTLP exporter specification), read for layer 3's
/// export: the traces endpoint used as it is, the base endpoint (`/v1/traces` added), headers
/// (`key=value,…`; values are secrets), the timeout in milliseconds, the protocol, and the
/// switch that turns the SDK off.
pub(crate) const OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
/// See [`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`].
pub(crate) const OTEL_EXPORTER_OTLP_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
/// See [`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`].
pub(crate) const OTEL_EXPORTER_OTLP_TRACES_HEADERS: &str = "OTEL_EXPORTER_OTLP_TRACES_HEADERS";
/// See [`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`].
pub(crate) const OTEL_EXPORTER_OTLP_HEADERS: &str = "OTEL_EXPORTER_OTLP_HEADERS";
/// See [`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`].
pub(crate) const OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: &str = "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT";
/// See [`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`].
pub(crate) const OTEL_EXPORTER_OTLP_TIMEOUT: &str = "OTEL_EXPORTER_OTLP_TIMEOUT";
/// See [`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`].
pub(crate) const OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: &str = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL";
/// See [`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`].
pub(crate) const OTEL_EXPORTER_OTLP_PROTOCOL: &str = "OTEL_EXPORTER_OTLP_PROTOCOL";
/// See [`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`].
pub(crate) const OTEL_SDK_DISABLED: &str = "OTEL_SDK_DISABLED";

/// The event that triggered the workflow (`push`, `pull_request`, `schedule`, …).
pub(crate) const GITHUB_EVENT_NAME: &str = "GITHUB_EVENT_NAME";
/// Path of the JSON file holding the event payload.
pub(crate) const GITHUB_EVENT_PATH: &str = "GITHUB_EVENT_PATH";
/// `owner/name` of the repository.
pub(crate) const GITHUB_REPOSITORY: &str = "GITHUB_REPOSITORY";
/// Base URL of the REST API (`https://api.github.com`, or a GitHub Enterprise Server URL).
pub(crate) const GITHUB_API_URL: &str = "GITHUB_API_URL";
/// Base URL of the web UI, for links to the run.
pub(crate) const GITHUB_SERVER_URL: &str = "GITHUB_SERVER_URL";
/// The workflow run's id, for links to the run.
pub(crate) const GITHUB_RUN_ID: &str = "GITHUB_RUN_ID";
/// The commit the run is for.
pub(crate) const GITHUB_SHA: &str = "GITHUB_SHA";
/// The ref the run is for (`refs/heads/main`): with the payload's default branch, whether the
/// run may store the layer-1 baseline.
pub(crate) const GITHUB_REF: &str = "GITHUB_REF";
/// The workflow file and ref of the run (`owner/repo/.github/workflows/ci.yml@refs/heads/main`):
/// SARIF's results point at the step in it that runs us.
pub(crate) const GITHUB_WORKFLOW_REF: &str = "GITHUB_WORKFLOW_REF";
/// The checkout directory; relative paths are resolved against it.
pub(crate) const GITHUB_WORKSPACE: &str = "GITHUB_WORKSPACE";
/// The file that receives step outputs.
pub(crate) const GITHUB_OUTPUT: &str = "GITHUB_OUTPUT";
/// The file that receives the job summary (Markdown).
pub(crate) const GITHUB_STEP_SUMMARY: &str = "GITHUB_STEP_SUMMARY";

/// The environment variable name an input arrives in, as the runner spells it
/// (`server-url` → `INPUT_SERVER-URL`).
pub(crate) fn input_var(name: &str) -> String {
    format!("{INPUT_PREFIX}{}", name.to_ascii_uppercase())
}

/// The underscore spelling of an input's variable (`server-url` → `INPUT_SERVER_URL`), which a
/// shell can set.
pub(crate) fn input_var_underscore(name: &str) -> String {
    input_var(name).replace('-', "_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_input_of_action_yml_is_read_and_none_else() {
        let yml = include_str!("../../action.yml");
        let inputs = &yml[yml.find("\ninputs:\n").expect("inputs")..yml.find("\noutputs:\n").expect("outputs")];
        let names: Vec<&str> = inputs
            .lines()
            .filter_map(|line| line.strip_prefix("  ").and_then(|rest| rest.strip_suffix(':')))
            .filter(|name| !name.starts_with(' '))
            .collect();
        assert_eq!(names, ALL_INPUTS);
    }

    #[test]
    fn input_names_map_as_the_runner_spells_them() {
        assert_eq!(input_var(INPUT_SERVER_URL), "INPUT_SERVER-URL");
        assert_eq!(input_var_underscore(INPUT_SERVER_URL), "INPUT_SERVER_URL");
        assert_eq!(input_var(INPUT_COMMENT), "INPUT_COMMENT");
    }
}
