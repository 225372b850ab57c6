//! Every environment variable the Action reads, as a documented constant: the action inputs
//! (`INPUT_*`, as the runner spells them, from the inputs of [`super::table`]'s rows), the
//! `GITHUB_*` variables of the workflow run and the
//! built-in model providers' URL and key variables (read by every front end).
//!
//! This module only names variables; reading them is [`super::resolve`]'s job.

/// Prefix of the action inputs. The runner upper-cases the input name and keeps its hyphens
/// (`server-url` arrives as `INPUT_SERVER-URL`); we also accept the underscore spelling.
pub(crate) const INPUT_PREFIX: &str = "INPUT_";

/// Input `openai-api-key`: the key of the built-in `openai` provider (a secret), named by its row.
pub(crate) const INPUT_OPENAI_API_KEY: &str = super::table::OPENAI_API_KEY.input_name();
/// Input `anthropic-api-key`: the key of the built-in `anthropic` provider (a secret), named by its
/// row.
pub(crate) const INPUT_ANTHROPIC_API_KEY: &str = super::table::ANTHROPIC_API_KEY.input_name();

/// Where the OAuth client secret is read when `--oauth-client-secret-env` names no variable.
pub(crate) const MCP_EVAL_OAUTH_CLIENT_SECRET: &str = "MCP_EVAL_OAUTH_CLIENT_SECRET";

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
    fn input_names_map_as_the_runner_spells_them() {
        assert_eq!(input_var(super::super::table::SERVER_URL.input_name()), "INPUT_SERVER-URL");
        assert_eq!(input_var_underscore(super::super::table::SERVER_URL.input_name()), "INPUT_SERVER_URL");
        assert_eq!(input_var(super::super::table::COMMENT.input_name()), "INPUT_COMMENT");
    }
}
