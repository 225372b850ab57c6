//! The Action's settings: the `mcp-eval action` flags, the `INPUT_*` variables exactly as the
//! runner sets them, and the `GITHUB_*` variables, merged with the precedence
//! flag > environment > default and validated into one [`ActionSettings`].
//!
//! The mapping from input names to fields is written once, in [`ActionArgs::merge_env`]. An
//! input that arrives as an empty string is "not set" (that is how the runner passes an input
//! the workflow did not give). Every problem is reported at once, each naming the input.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;

use super::env_vars as env;
use super::trigger::{self, LayersInput};

/// Default of `report-path`.
pub const DEFAULT_REPORT_PATH: &str = "mcp-eval-report";
/// Default of `junit-path`.
pub const DEFAULT_JUNIT_PATH: &str = "mcp-eval-report/junit.xml";
/// Default of `eval-label`.
pub const DEFAULT_EVAL_LABEL: &str = "run-evals";
/// Default of `comment-id`.
pub const DEFAULT_COMMENT_ID: &str = "default";
/// Default of `api-url` when `GITHUB_API_URL` is not set.
pub const DEFAULT_API_URL: &str = "https://api.github.com";
/// Default of the per-request timeout, in seconds.
pub const DEFAULT_TIMEOUT_SECONDS: f64 = 10.0;

/// Flags of `mcp-eval action`. Each one overrides the input or variable named in its help; an
/// empty value counts as not given.
#[derive(Debug, Clone, Default, Args)]
pub struct ActionArgs {
    /// Streamable HTTP endpoint of the server under test [input: server-url]
    #[arg(long, value_name = "URL")]
    pub server_url: Option<String>,
    /// Command that starts a stdio server, run through `sh -c` [input: server-command]
    #[arg(long, value_name = "CMD")]
    pub server_command: Option<String>,
    /// Extra HTTP headers, one 'Name: value' per line; values are secrets [input: server-headers]
    #[arg(long, value_name = "LINES")]
    pub server_headers: Option<String>,
    /// `auto` (decided from the event) or a list such as `0,1` or `0-3` [input: layers]
    #[arg(long, value_name = "LIST")]
    pub layers: Option<String>,
    /// The pull request label that asks for every layer [input: eval-label; default run-evals]
    #[arg(long, value_name = "LABEL")]
    pub eval_label: Option<String>,
    /// Golden set for layer 1 (not available in this version) [input: golden-set]
    #[arg(long, value_name = "FILE")]
    pub golden_set: Option<String>,
    /// Where the JUnit file goes [input: junit-path; default mcp-eval-report/junit.xml]
    #[arg(long, value_name = "FILE")]
    pub junit_path: Option<String>,
    /// Directory for report.json, junit.xml and summary.md [input: report-path; default mcp-eval-report]
    #[arg(long, value_name = "DIR")]
    pub report_path: Option<String>,
    /// Post and update the pull request comment: true or false [input: comment; default true]
    #[arg(long, value_name = "BOOL")]
    pub comment: Option<String>,
    /// Tells the comments of several jobs or matrix legs apart [input: comment-id; default default]
    #[arg(long, value_name = "ID")]
    pub comment_id: Option<String>,
    /// Token for the comment; prefer the environment, flags are visible to other processes [input: github-token]
    #[arg(long, value_name = "TOKEN", hide_env_values = true)]
    pub github_token: Option<String>,
    /// When the run fails: must (a MUST failure), should (also a warning), never [input: fail-on; default must]
    #[arg(long, value_name = "WHEN")]
    pub fail_on: Option<String>,
    /// Per-request timeout in seconds [input: timeout-seconds; default 10]
    #[arg(long, value_name = "SECONDS")]
    pub timeout_seconds: Option<String>,
    /// YAML file listing tools that are safe to call [input: config]
    #[arg(long, value_name = "FILE")]
    pub config: Option<String>,
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
    /// Directory relative paths are resolved against [env: GITHUB_WORKSPACE]
    #[arg(long, value_name = "DIR")]
    pub github_workspace: Option<String>,
    /// File that receives the step outputs [env: GITHUB_OUTPUT]
    #[arg(long, value_name = "FILE")]
    pub github_output: Option<String>,
    /// File that receives the job summary [env: GITHUB_STEP_SUMMARY]
    #[arg(long, value_name = "FILE")]
    pub github_step_summary: Option<String>,
}

/// When the run fails (the exit status); reports and outputs are written either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailOn {
    /// A MUST failure fails the run (the default).
    Must,
    /// A MUST failure or a SHOULD warning fails the run.
    Should,
    /// Findings never fail the run (errors such as an unreachable server still do).
    Never,
}

/// Where the server under test is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerInput {
    /// A Streamable HTTP endpoint.
    Url(String),
    /// A stdio server's start command.
    Command(String),
}

/// The workflow run's context, from the `GITHUB_*` variables.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GithubContext {
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
    /// `GITHUB_WORKSPACE`, or the current directory.
    pub workspace: PathBuf,
    /// `GITHUB_OUTPUT`.
    pub output_file: Option<PathBuf>,
    /// `GITHUB_STEP_SUMMARY`.
    pub step_summary: Option<PathBuf>,
}

/// Everything `mcp-eval action` needs, validated.
#[derive(Debug, Clone)]
pub struct ActionSettings {
    /// The server under test.
    pub server: ServerInput,
    /// Extra HTTP headers (values are secrets).
    pub headers: Vec<(String, String)>,
    /// The `layers` input.
    pub layers: LayersInput,
    /// The label that asks for every layer.
    pub eval_label: String,
    /// The golden set, when given (layer 1; not available in this version).
    pub golden_set: Option<String>,
    /// The JUnit file, as given (relative to the workspace unless absolute).
    pub junit_path: String,
    /// The report directory, as given (relative to the workspace unless absolute).
    pub report_path: String,
    /// Whether to post the comment.
    pub comment: bool,
    /// The comment's id among several jobs.
    pub comment_id: String,
    /// The token (a secret).
    pub token: Option<String>,
    /// When the run fails.
    pub fail_on: FailOn,
    /// Per-request timeout.
    pub timeout: Duration,
    /// The safe-tools file.
    pub config: Option<PathBuf>,
    /// The workflow run's context.
    pub github: GithubContext,
}

impl ActionSettings {
    /// A path given relative to the workspace, made absolute.
    pub fn in_workspace(&self, path: &str) -> PathBuf {
        let path = Path::new(path);
        if path.is_absolute() { path.to_path_buf() } else { self.github.workspace.join(path) }
    }

    /// Every secret value: header values and the token.
    pub fn secrets(&self) -> Vec<String> {
        let mut secrets: Vec<String> = self.headers.iter().map(|(_, value)| value.clone()).collect();
        secrets.extend(self.token.clone());
        if let ServerInput::Url(url) = &self.server {
            secrets.extend(crate::settings::url_secrets(url));
        }
        secrets.retain(|secret| !secret.is_empty());
        secrets
    }
}

impl ActionArgs {
    /// Fills every flag not given (or given empty) from the environment: the input's runner
    /// spelling (`INPUT_SERVER-URL`), then its underscore spelling (`INPUT_SERVER_URL`), then
    /// the `GITHUB_*` variable. Empty values count as not set.
    pub fn merge_env(mut self, lookup: &dyn Fn(&str) -> Option<String>) -> Self {
        let input = |name: &str| {
            [env::input_var(name), env::input_var_underscore(name)]
                .iter()
                .filter_map(|var| lookup(var))
                .find(|value| !value.trim().is_empty())
        };
        let var = |name: &str| lookup(name).filter(|value| !value.trim().is_empty());
        fn or(flag: &mut Option<String>, fallback: impl FnOnce() -> Option<String>) {
            if flag.as_deref().is_none_or(|value| value.trim().is_empty()) {
                *flag = fallback();
            }
        }
        or(&mut self.server_url, || input(env::INPUT_SERVER_URL));
        or(&mut self.server_command, || input(env::INPUT_SERVER_COMMAND));
        or(&mut self.server_headers, || input(env::INPUT_SERVER_HEADERS));
        or(&mut self.layers, || input(env::INPUT_LAYERS));
        or(&mut self.eval_label, || input(env::INPUT_EVAL_LABEL));
        or(&mut self.golden_set, || input(env::INPUT_GOLDEN_SET));
        or(&mut self.junit_path, || input(env::INPUT_JUNIT_PATH));
        or(&mut self.report_path, || input(env::INPUT_REPORT_PATH));
        or(&mut self.comment, || input(env::INPUT_COMMENT));
        or(&mut self.comment_id, || input(env::INPUT_COMMENT_ID));
        or(&mut self.github_token, || input(env::INPUT_GITHUB_TOKEN));
        or(&mut self.fail_on, || input(env::INPUT_FAIL_ON));
        or(&mut self.timeout_seconds, || input(env::INPUT_TIMEOUT_SECONDS));
        or(&mut self.config, || input(env::INPUT_CONFIG));
        or(&mut self.github_event_name, || var(env::GITHUB_EVENT_NAME));
        or(&mut self.github_event_path, || var(env::GITHUB_EVENT_PATH));
        or(&mut self.github_repository, || var(env::GITHUB_REPOSITORY));
        or(&mut self.github_api_url, || var(env::GITHUB_API_URL));
        or(&mut self.github_server_url, || var(env::GITHUB_SERVER_URL));
        or(&mut self.github_run_id, || var(env::GITHUB_RUN_ID));
        or(&mut self.github_sha, || var(env::GITHUB_SHA));
        or(&mut self.github_workspace, || var(env::GITHUB_WORKSPACE));
        or(&mut self.github_output, || var(env::GITHUB_OUTPUT));
        or(&mut self.github_step_summary, || var(env::GITHUB_STEP_SUMMARY));
        self
    }

    /// The GitHub context alone (known even when the inputs are invalid, so outputs and the
    /// summary can still be written).
    pub fn github_context(&self) -> GithubContext {
        let text =
            |value: &Option<String>| value.as_deref().map(str::trim).filter(|v| !v.is_empty()).map(str::to_owned);
        let path = |value: &Option<String>| text(value).map(PathBuf::from);
        GithubContext {
            event_name: text(&self.github_event_name).unwrap_or_default(),
            event_path: path(&self.github_event_path),
            repository: text(&self.github_repository),
            api_url: text(&self.github_api_url).unwrap_or_else(|| DEFAULT_API_URL.to_owned()),
            server_url: text(&self.github_server_url),
            run_id: text(&self.github_run_id),
            sha: text(&self.github_sha),
            workspace: path(&self.github_workspace).unwrap_or_else(|| PathBuf::from(".")),
            output_file: path(&self.github_output),
            step_summary: path(&self.github_step_summary),
        }
    }

    /// Validates the merged flags into [`ActionSettings`]; the error lists every problem, each
    /// naming the input and the fix.
    pub fn resolve(&self) -> Result<ActionSettings, Vec<String>> {
        let mut problems = Vec::new();
        let given =
            |value: &Option<String>| value.as_deref().map(str::trim).filter(|v| !v.is_empty()).map(str::to_owned);
        let name = |input: &str| format!("input `{input}` ({})", env::input_var(input));

        let server = match (given(&self.server_url), given(&self.server_command)) {
            (Some(url), None) => {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    problems.push(format!(
                        "{} is `{url}`, not an http(s) URL\n  hint: give the full endpoint, e.g. http://mcp-server:8000/mcp",
                        name(env::INPUT_SERVER_URL)
                    ));
                }
                Some(ServerInput::Url(url))
            }
            (None, Some(command)) => Some(ServerInput::Command(command)),
            (Some(_), Some(_)) => {
                problems.push(format!(
                    "both {} and {} are set\n  hint: give one of them",
                    name(env::INPUT_SERVER_URL),
                    name(env::INPUT_SERVER_COMMAND)
                ));
                None
            }
            (None, None) => {
                problems.push(format!(
                    "no server to evaluate\n  hint: set {} (Streamable HTTP) or {} (stdio)",
                    name(env::INPUT_SERVER_URL),
                    name(env::INPUT_SERVER_COMMAND)
                ));
                None
            }
        };

        let header_lines: Vec<String> = given(&self.server_headers)
            .map(|text| text.lines().map(str::trim).filter(|line| !line.is_empty()).map(str::to_owned).collect())
            .unwrap_or_default();
        let headers = match crate::settings::parse_headers(&header_lines) {
            Ok(headers) => headers,
            Err(error) => {
                problems.push(format!("{}: {error}", name(env::INPUT_SERVER_HEADERS)));
                Vec::new()
            }
        };
        if !headers.is_empty() && matches!(server, Some(ServerInput::Command(_))) {
            problems.push(format!(
                "{} applies to `server-url` only\n  hint: pass credentials to a stdio server through its own environment",
                name(env::INPUT_SERVER_HEADERS)
            ));
        }

        let layers = match trigger::parse_layers(given(&self.layers).as_deref().unwrap_or("auto")) {
            Ok(layers) => layers,
            Err(detail) => {
                problems.push(format!(
                    "{}: {detail}\n  hint: use auto, all, or a list such as 0,1",
                    name(env::INPUT_LAYERS)
                ));
                LayersInput::Auto
            }
        };

        let comment = match given(&self.comment).map(|value| value.to_ascii_lowercase()).as_deref() {
            None | Some("true" | "yes" | "on" | "1") => true,
            Some("false" | "no" | "off" | "0") => false,
            Some(other) => {
                problems.push(format!("{} is `{other}`\n  hint: use true or false", name(env::INPUT_COMMENT)));
                true
            }
        };

        let comment_id = given(&self.comment_id).unwrap_or_else(|| DEFAULT_COMMENT_ID.to_owned());
        if comment_id.chars().count() > 100
            || !comment_id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | ' '))
        {
            problems.push(format!(
                "{} `{comment_id}` has characters other than letters, digits, `-`, `_`, `.`, `/` and spaces, or is longer than 100\n  hint: e.g. comment-id: ${{{{ matrix.server }}}}",
                name(env::INPUT_COMMENT_ID)
            ));
        }

        let fail_on = match given(&self.fail_on).map(|value| value.to_ascii_lowercase()).as_deref() {
            None | Some("must") => FailOn::Must,
            Some("should") => FailOn::Should,
            Some("never") => FailOn::Never,
            Some(other) => {
                problems.push(format!("{} is `{other}`\n  hint: use must, should or never", name(env::INPUT_FAIL_ON)));
                FailOn::Must
            }
        };

        let timeout = match given(&self.timeout_seconds) {
            None => Duration::from_secs_f64(DEFAULT_TIMEOUT_SECONDS),
            Some(text) => match text.parse::<f64>() {
                Ok(seconds) if seconds.is_finite() && seconds > 0.0 && seconds <= 3600.0 => {
                    Duration::from_secs_f64(seconds)
                }
                _ => {
                    problems.push(format!(
                        "{} is `{text}`\n  hint: give a number of seconds between 0 and 3600, e.g. 10",
                        name(env::INPUT_TIMEOUT_SECONDS)
                    ));
                    Duration::from_secs_f64(DEFAULT_TIMEOUT_SECONDS)
                }
            },
        };

        let github = self.github_context();
        if let Some(repository) = &github.repository {
            if repository.split('/').filter(|part| !part.is_empty()).count() != 2 {
                problems.push(format!("{} is `{repository}`, not `owner/name`", env::GITHUB_REPOSITORY));
            }
        }
        if !(github.api_url.starts_with("http://") || github.api_url.starts_with("https://")) {
            problems.push(format!("{} is `{}`, not an http(s) URL", env::GITHUB_API_URL, github.api_url));
        }

        match server {
            Some(server) if problems.is_empty() => Ok(ActionSettings {
                server,
                headers,
                layers,
                eval_label: given(&self.eval_label).unwrap_or_else(|| DEFAULT_EVAL_LABEL.to_owned()),
                golden_set: given(&self.golden_set),
                junit_path: given(&self.junit_path).unwrap_or_else(|| DEFAULT_JUNIT_PATH.to_owned()),
                report_path: given(&self.report_path).unwrap_or_else(|| DEFAULT_REPORT_PATH.to_owned()),
                comment,
                comment_id,
                token: given(&self.github_token),
                fail_on,
                timeout,
                config: given(&self.config).map(PathBuf::from),
                github,
            }),
            _ => Err(problems),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn resolve(vars: &[(&str, &str)], args: ActionArgs) -> Result<ActionSettings, Vec<String>> {
        let vars: HashMap<String, String> = vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        args.merge_env(&|name| vars.get(name).cloned()).resolve()
    }

    #[test]
    fn inputs_arrive_with_hyphens_or_underscores_and_empty_means_unset() {
        let settings = resolve(
            &[
                ("INPUT_SERVER-URL", "http://127.0.0.1:1/mcp"),
                ("INPUT_SERVER-COMMAND", ""),
                ("INPUT_FAIL_ON", "should"),
                ("INPUT_LAYERS", ""),
                ("INPUT_COMMENT", ""),
                ("INPUT_SERVER-HEADERS", "Authorization: Bearer abc\n\nX-Key: k2\n"),
                ("GITHUB_API_URL", "http://127.0.0.1:2"),
                ("GITHUB_REPOSITORY", "octo/repo"),
            ],
            ActionArgs::default(),
        )
        .expect("valid");
        assert_eq!(settings.server, ServerInput::Url("http://127.0.0.1:1/mcp".into()));
        assert_eq!(settings.fail_on, FailOn::Should);
        assert_eq!(settings.layers, LayersInput::Auto);
        assert!(settings.comment);
        assert_eq!(settings.headers.len(), 2);
        assert_eq!(settings.secrets(), ["Bearer abc", "k2"]);
        assert_eq!(settings.github.api_url, "http://127.0.0.1:2");
        assert_eq!(settings.junit_path, DEFAULT_JUNIT_PATH);
        assert_eq!(settings.eval_label, DEFAULT_EVAL_LABEL);
    }

    #[test]
    fn flags_win_over_the_environment() {
        let args = ActionArgs {
            server_url: Some("http://127.0.0.1:9/mcp".into()),
            fail_on: Some("never".into()),
            github_api_url: Some("http://127.0.0.1:3".into()),
            ..ActionArgs::default()
        };
        let settings = resolve(
            &[
                ("INPUT_SERVER-URL", "http://127.0.0.1:1/mcp"),
                ("INPUT_FAIL-ON", "must"),
                ("GITHUB_API_URL", "http://x"),
            ],
            args,
        )
        .expect("valid");
        assert_eq!(settings.server, ServerInput::Url("http://127.0.0.1:9/mcp".into()));
        assert_eq!(settings.fail_on, FailOn::Never);
        assert_eq!(settings.github.api_url, "http://127.0.0.1:3");
    }

    #[test]
    fn every_problem_is_reported_naming_the_input() {
        let problems = resolve(
            &[
                ("INPUT_FAIL-ON", "sometimes"),
                ("INPUT_LAYERS", "9"),
                ("INPUT_TIMEOUT-SECONDS", "-1"),
                ("INPUT_COMMENT", "maybe"),
            ],
            ActionArgs::default(),
        )
        .expect_err("invalid");
        let all = problems.join("\n");
        for part in ["no server", "`fail-on`", "`layers`", "`timeout-seconds`", "`comment`", "INPUT_FAIL-ON"] {
            assert!(all.contains(part), "{part} missing in {all}");
        }
        assert_eq!(problems.len(), 5);
    }

    #[test]
    fn header_secrets_stay_out_of_errors() {
        let problems = resolve(
            &[("INPUT_SERVER-URL", "http://h/mcp"), ("INPUT_SERVER-HEADERS", "Bad Name: s3cret")],
            ActionArgs::default(),
        )
        .expect_err("invalid");
        assert!(!problems.join("\n").contains("s3cret"));
    }
}
