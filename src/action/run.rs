//! `mcp-eval action` end to end: mask the secrets, resolve the settings, decide the layers,
//! run the evaluation (layer 0), write the reports, annotations, step outputs and job summary,
//! then upsert the pull request comment. The exit status follows `fail-on` and the evaluation,
//! never the comment's fate, with one exception: a signal in any stage, the comment's upsert
//! included, ends the run with 130/143 and `result=error` (the job is being cancelled).
//!
//! Everything this prints goes to one console stream, in order: `::add-mask::` lines first,
//! then our own lines, and every line that may hold text from the server under test inside a
//! `::stop-commands::` block with a random token. A secret learnt mid-run (each access token of
//! the client-credentials sign-in) is masked the moment it is learnt, the block closed around
//! its `::add-mask::` lines.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::trigger::{self, Decision};
use super::workflow::{self, Annotation, Severity};
use crate::cli::ActionArgs;
use crate::evaluate::{self, LAYERS_AVAILABLE, RunEvent};
use crate::github::client::{self, CommentErrorKind, CommentTarget, RetryPolicy};
use crate::github::comment::{self, CommentParts};
use crate::mcp::evidence::Learnt;
use crate::report::model::{RunReport, Status, Verdict};
use crate::settings::{self, ActionSettings, FrontEnd, GithubContext, Settings};
use crate::verdict::ExitStatus;

/// Every output action.yml declares, in its order: each path writes every one (empty where
/// there is nothing to say), so a later step never reads a missing output.
pub(crate) const OUTPUTS: [&str; 13] = [
    "result",
    "layers-requested",
    "layers-run",
    "cases-passed",
    "gate",
    "pass-rate",
    "pass-rate-delta",
    "cases-failed",
    "failures",
    "warnings",
    "junit-path",
    "report-path",
    "comment-url",
];

/// Where the action writes its log lines (stdout in the container).
pub(crate) type Console = Box<dyn Write + Send>;

/// Runs the action with flags `args`, the environment seen through `lookup`, and `console`
/// for the log. Returns the exit status: 130/143 with `result=error` whenever SIGINT/SIGTERM
/// arrived (see [`crate::evaluate::signals`]), whichever stage it cut short.
pub(crate) async fn run(args: ActionArgs, lookup: &dyn Fn(&str) -> Option<String>, console: Console) -> ExitStatus {
    let console: Shared = Arc::new(Mutex::new(console));
    let say = |line: &str| write_line(&console, line);
    let request = settings::Request { flags: args.settings, action: args.action, demo: false, merging: false };
    let github = settings::github_context(&request, lookup);
    let exit = Box::pin(stages(request, lookup, &say, &console)).await;
    // The evaluation ends itself on a signal (with 130/143); one that arrived in any other stage
    // (reading the inputs, a merge, the comment, writing the outputs) still ends the run as the
    // job's cancellation, not with the stage's own status.
    match crate::evaluate::signals::received() {
        Some(signal) if !matches!(exit, ExitStatus::Interrupted | ExitStatus::Terminated) => {
            say(&format!(
                "mcp-eval: interrupted by {}; what was written stands; exit status {}",
                signal.name(),
                signal.exit_status().code()
            ));
            write_outputs(&github, &[("result", "error".into())], &say);
            append_summary(
                &github,
                &format!("\n> **⚠️ error: interrupted by {}** before the run could finish.\n", signal.name()),
                &say,
            );
            signal.exit_status()
        }
        _ => exit,
    }
}

/// The console, shared with what outlives a borrow of it ([`mask_learnt`]).
type Shared = Arc<Mutex<Console>>;

/// Writes `line` (one or more lines: one write, so no other line falls in between).
fn write_line(console: &Mutex<Console>, line: &str) {
    // A poisoned console means a panic while printing: keep printing, the log matters more.
    let mut out = console.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Masks each secret learnt during the evaluation (every access token the sign-in obtains, the
/// first and each renewed one) the moment it is learnt. The evaluation runs inside the
/// `::stop-commands::` block `token` opened, where the runner reads no command, so the block is
/// closed around the `::add-mask::` lines and opened again with the same token, in one write.
fn mask_learnt(console: Shared, token: String) -> Learnt {
    Arc::new(move |secret: &str| {
        let mut lines = vec![workflow::resume_commands(&token)];
        lines.extend(workflow::add_mask(secret));
        lines.push(workflow::stop_commands(&token));
        write_line(&console, &lines.join("\n"));
    })
}

/// The action's stages, in order: masks, settings, the evaluation or the merge, the reports and
/// the comment. Returns the exit status.
async fn stages(
    request: settings::Request,
    lookup: &dyn Fn(&str) -> Option<String>,
    say: &(dyn Fn(&str) + Sync),
    console: &Shared,
) -> ExitStatus {
    // Mask first: nothing below may print a secret before the runner knows it.
    let masked = settings::raw_secrets(&request, lookup);
    for secret in &masked {
        for line in workflow::add_mask(secret) {
            say(&line);
        }
    }
    let github = settings::github_context(&request, lookup);
    let settings = match settings::resolve(&request, FrontEnd::Action, lookup) {
        Ok(settings) => settings,
        Err(problems) => return input_error(&github, &problems, &say),
    };
    // Secrets only the config file held (a stdio server's `server.env` values), still before any
    // other line.
    for secret in settings.secrets().iter().filter(|secret| !masked.contains(secret)) {
        for line in workflow::add_mask(secret) {
            say(&line);
        }
    }
    let Some(action) = settings.action.clone() else {
        let missing = settings::Problem {
            source: settings::Source::Default,
            message: "the Action's settings are missing".into(),
            hint: None,
        };
        return input_error(&github, &[missing], &say);
    };
    let redactor = crate::mcp::evidence::Redactor::new(settings.secrets());
    // A loopback `server-url` from inside the container: its port forwarded to the runner's
    // host, at the gateway, for as long as this run (the URL is kept as given).
    let super::runner_host::Reach { note: host_note, forward: _forward } =
        super::runner_host::reach(&settings.server, &action.github.workspace);
    if let Some(note) = &host_note {
        say(&format!("mcp-eval: {note}"));
    }

    if let Some(problem) = &action.payload_problem {
        say(&format!("::warning title=mcp-eval::{}", workflow::escape_data(problem)));
    }
    let payload = &action.payload;
    if let Some(pattern) = action.merge_reports.clone() {
        return merge_reports(
            &After { settings: &settings, action: &action, payload, redactor: &redactor, host_note: None },
            &pattern,
            &say,
        )
        .await;
    }
    let decision = trigger::decide(&action.github.event_name, payload, &settings.layers, &action.eval_label);
    say(&format!("mcp-eval: layers requested: {} ({})", trigger::join(&decision.layers), decision.reason));
    if let Some(reason) = &settings.layer1.models_note {
        say(&format!("mcp-eval: models: {reason}"));
    }

    let golden = match evaluate::load_golden(&settings, &decision.layers) {
        Ok(golden) => golden,
        Err(problems) => return input_error(&github, &file_problems(problems), &say),
    };
    // A plan over the model-call cap: refused before anything runs, as an input error with the
    // inputs that change it (the job summary and the outputs say so).
    if let Some(error) = evaluate::layer2_budget(&settings, &decision.layers, golden.as_ref()) {
        let problem = settings::Problem { source: settings::Source::Default, message: error.message, hint: error.hint };
        return input_error(&github, &[problem], &say);
    }
    let prices = match evaluate::load_prices(&settings, &decision.layers) {
        Ok(prices) => prices,
        Err(problems) => return input_error(&github, &file_problems(problems), &say),
    };

    let token = workflow::random_token();
    say(&workflow::stop_commands(&token));
    let events = |event: &RunEvent| match event {
        // Already said above, with the Action's wording.
        RunEvent::LayersUnavailable { .. } => {}
        RunEvent::EndedEarly { detail, stderr_tail, .. } => {
            say(&format!("mcp-eval: {}", detail.replace(&token, "[token]")));
            if let Some(tail) = stderr_tail {
                say(&format!("server stderr (last lines):\n{}", tail.replace(&token, "[token]")));
            }
        }
        event => {
            if let Some(line) = event.line() {
                say(&format!("mcp-eval: {}", line.replace(&token, "[token]")));
            }
        }
    };
    let learnt = mask_learnt(console.clone(), token.clone());
    let evaluation =
        evaluate::evaluate(&settings, &decision.layers, golden.as_ref(), prices.as_ref(), &events, Some(learnt)).await;
    say(&workflow::resume_commands(&token));

    let after =
        After { settings: &settings, action: &action, payload, redactor: &redactor, host_note: host_note.as_deref() };
    after_evaluation(&after, &decision, &evaluation, &say).await
}

/// What the part after an evaluation (or a merge) reads besides its result.
struct After<'a> {
    settings: &'a Settings,
    action: &'a ActionSettings,
    payload: &'a Value,
    redactor: &'a crate::mcp::evidence::Redactor,
    /// How a loopback `server-url` reaches the runner's host ([`super::runner_host`]).
    host_note: Option<&'a str>,
}

/// After the evaluation or the merge: notes, annotations, outputs, the job summary and the pull
/// request comment. Returns the exit status.
async fn after_evaluation(
    after: &After<'_>,
    decision: &Decision,
    evaluation: &evaluate::Evaluation,
    say: &(dyn Fn(&str) + Sync),
) -> ExitStatus {
    let After { settings, action, payload, redactor, host_note } = *after;
    let mut notes = layer_notes(decision, &evaluation.report);
    for note in &notes[1..] {
        say(&format!("mcp-eval: {}", strip_markdown(note)));
    }
    // Printed before the evaluation already; the summary and the comment say it too.
    notes.extend(host_note.map(|note| format!("ℹ️ {note}")));
    let exit = evaluation.decision.exit;
    if let Err(error) = &evaluation.written {
        say(&format!("::error title=mcp-eval::{}", workflow::escape_data(&redactor.redact(&error.to_string()))));
    }
    let report_location = format!("{}/{}", settings.out_dir_label.trim_end_matches('/'), crate::report::REPORT_JSON);
    for annotation in annotations(&evaluation.report) {
        say(&workflow::annotation(&annotation));
    }

    let counts = evaluation.report.counts();
    let result = evaluation.decision.result.as_str();
    say(&format!(
        "mcp-eval: result {result}: {} fail, {} warn, {} pass, {} not applicable; exit status {}",
        counts.fail,
        counts.warn,
        counts.pass,
        counts.not_applicable,
        exit.code()
    ));
    let outputs = [
        ("result", result.to_owned()),
        ("layers-requested", trigger::join(&decision.layers)),
        ("layers-run", trigger::join(&evaluation.report.layers)),
        ("failures", counts.fail.to_string()),
        ("cases-passed", cases(&evaluation.report, crate::report::evals::EvalStatus::Pass)),
        ("gate", layer1_gate_output(&evaluation.report, gate_output)),
        (
            "pass-rate",
            layer1_gate_output(&evaluation.report, |gate| {
                gate.pass_rate.map(|rate| format!("{rate:.4}")).unwrap_or_default()
            }),
        ),
        (
            "pass-rate-delta",
            layer1_gate_output(&evaluation.report, |gate| {
                gate.pass_rate_delta.map(|delta| format!("{delta:+.4}")).unwrap_or_default()
            }),
        ),
        ("cases-failed", cases(&evaluation.report, crate::report::evals::EvalStatus::Fail)),
        ("warnings", counts.warn.to_string()),
        ("junit-path", settings.junit_path.as_ref().map(|(_, label)| label.clone()).unwrap_or_default()),
        ("report-path", settings.out_dir_label.clone()),
    ];
    write_outputs(&action.github, &outputs, say);
    let summary = crate::report::markdown::render(&evaluation.report);
    let summary_with_notes = insert_after_title(&summary, &notes);
    append_summary(&action.github, &summary_with_notes, say);
    if action.migration_scan {
        migration_scan(&action.github, say);
    }

    let comment_url = if matches!(exit, ExitStatus::Interrupted | ExitStatus::Terminated) {
        // The runner is stopping the job: exit now, with what is known written.
        say("mcp-eval: comment: skipped, the run was interrupted");
        None
    } else {
        post_comment(settings, action, payload, &evaluation.report, &summary, &notes, &report_location, say).await
    };
    write_outputs(&action.github, &[("comment-url", comment_url.unwrap_or_default())], say);
    // A signal while the comment was posted: `run` turns the status into 130/143 and `result`
    // into `error`, as for a signal in any stage outside the evaluation.
    exit
}

/// Input `migration-scan: true`: the workspace scanned as git tracks it, a warning annotation at
/// each finding (the first [`workflow::MAX_WARNING_ANNOTATIONS`]) and a table in the job summary.
/// Never changes the exit status.
fn migration_scan(github: &GithubContext, say: &(dyn Fn(&str) + Sync)) {
    let scan = crate::migrate::scan::scan(&github.workspace, false);
    let findings: Vec<_> = scan.findings().collect();
    for found in findings.iter().take(workflow::MAX_WARNING_ANNOTATIONS) {
        let rule = crate::migrate::rules::rule(found.rule);
        say(&workflow::annotation(&Annotation {
            severity: Severity::Warning,
            file: Some(found.path.clone()),
            line: Some(found.line),
            title: format!("mcp-eval {}", found.rule),
            message: format!("2025-era protocol: {} → 2026-07-28: {}", rule.what, rule.replacement),
        }));
    }
    say(&format!(
        "mcp-eval: migration scan: {} finding(s), {} note(s) (never a failure; the job summary lists them)",
        findings.len(),
        scan.notes().count()
    ));
    append_summary(github, &crate::migrate::summary(&scan), say);
}

/// Input `merge-reports`: merge the report directories the glob matches (relative to the
/// workspace) instead of evaluating, then go on as after an evaluation. The gate follows this
/// job's `fail-on`.
async fn merge_reports(after: &After<'_>, pattern: &str, say: &(dyn Fn(&str) + Sync)) -> ExitStatus {
    let github = &after.action.github;
    let source = settings::Source::Input {
        name: crate::settings::table::MERGE_REPORTS.input_name().into(),
        var: crate::settings::env_vars::input_var(crate::settings::table::MERGE_REPORTS.input_name()),
    };
    let dirs = crate::merge::glob_dirs(&github.workspace, pattern);
    if dirs.is_empty() {
        let problem = settings::Problem {
            source,
            message: format!("`{pattern}` matches no directory"),
            hint: Some("give a glob of the report directories downloaded from the shards, e.g. reports/*".into()),
        };
        return input_error(github, &[problem], say);
    }
    let merged = crate::merge::read_parts(&dirs).and_then(crate::merge::merge);
    let report = match merged {
        Ok(report) => report,
        Err(error) => {
            let problem = settings::Problem { source, message: error.message.clone(), hint: error.hint.clone() };
            return input_error(github, &[problem], say);
        }
    };
    say(&format!("mcp-eval: merging {} report(s) matching `{pattern}`", dirs.len()));
    let mut report = report;
    crate::merge::gate_merged(&mut report, after.settings);
    let junit = after.settings.junit_path.as_ref().map(|(path, _)| path.as_path());
    let evaluation = crate::merge::finish(report, Some(after.settings.fail_on), &after.settings.out_dir, junit);
    let decision = Decision {
        layers: evaluation.report.layers.clone(),
        reason: format!("merged from {} shard report(s)", dirs.len()),
    };
    after_evaluation(after, &decision, &evaluation, say).await
}

/// Invalid input: say every problem (a config-file problem as an annotation on its file and
/// line), write `result=error`, every output and a summary, exit 2.
fn input_error(github: &GithubContext, problems: &[settings::Problem], say: &dyn Fn(&str)) -> ExitStatus {
    let problems = &relative_to_workspace(github, problems);
    for problem in problems {
        let (file, line) = match &problem.source {
            settings::Source::File { path, line, .. } => {
                let relative = path.strip_prefix(&github.workspace).unwrap_or(path);
                (Some(relative.display().to_string()), usize::try_from(*line).ok())
            }
            _ => (None, None),
        };
        say(&workflow::annotation(&Annotation {
            severity: Severity::Error,
            file,
            line,
            title: "mcp-eval input".into(),
            message: problem.to_string(),
        }));
    }
    let problems: Vec<String> = problems.iter().map(ToString::to_string).collect();
    let outputs: Vec<(&str, String)> = OUTPUTS
        .iter()
        .map(|&name| match name {
            "result" => (name, "error".to_owned()),
            "failures" | "warnings" => (name, "0".to_owned()),
            _ => (name, String::new()),
        })
        .collect();
    write_outputs(github, &outputs, say);
    let mut summary = String::from("## ⚠️ error: invalid input — mcp-eval\n\n");
    for problem in problems {
        summary.push_str(&format!("```\n{}\n```\n", problem.replace("```", "'''")));
    }
    append_summary(github, &summary, say);
    ExitStatus::InvalidInput
}

/// `problems` with the files of the workspace named by their path in it, as the annotations
/// name them (`prices.yaml:4:12`, not the runner's absolute path), in the source and the text.
fn relative_to_workspace(github: &GithubContext, problems: &[settings::Problem]) -> Vec<settings::Problem> {
    let prefix = format!("{}/", github.workspace.display().to_string().trim_end_matches('/'));
    let workspace_given = !github.workspace.as_os_str().is_empty() && prefix != "/";
    problems
        .iter()
        .map(|problem| {
            let mut problem = problem.clone();
            if !workspace_given {
                return problem;
            }
            if let settings::Source::File { path, .. } = &mut problem.source
                && let Ok(relative) = path.strip_prefix(&github.workspace)
            {
                *path = relative.to_path_buf();
            }
            problem.message = problem.message.replace(&prefix, "");
            problem.hint = problem.hint.map(|hint| hint.replace(&prefix, ""));
            problem
        })
        .collect()
}

/// The `gate` output: `eval_gate.result`, or `insufficient-data` for a pass that says nothing
/// (`eval_gate.insufficient_data`).
fn gate_output(gate: &crate::report::evals::Layer1GateSection) -> String {
    if gate.insufficient_data { "insufficient-data".to_owned() } else { gate.result.clone() }
}

/// A field of layer 1's gate as an output value (empty when layer 1 did not run).
fn layer1_gate_output(
    report: &RunReport,
    field: impl Fn(&crate::report::evals::Layer1GateSection) -> String,
) -> String {
    report.evals.as_ref().and_then(|evals| evals.eval_gate.as_ref()).map(field).unwrap_or_default()
}

/// Layer-1 evaluations (case × model) with this status, as an output value (empty when layer 1
/// did not run).
fn cases(report: &RunReport, status: crate::report::evals::EvalStatus) -> String {
    match &report.evals {
        Some(evals) if report.layers.contains(&1) => {
            evals.evals.iter().filter(|eval| eval.status == status).count().to_string()
        }
        _ => String::new(),
    }
}

/// The notes shown after the verdict: layers requested and run, what is not available, and why
/// layer 1 did not run when it did not.
fn layer_notes(decision: &Decision, report: &RunReport) -> Vec<String> {
    let mut notes = vec![format!(
        "**Layers:** requested {} ({}); ran {}.",
        trigger::join(&decision.layers),
        decision.reason,
        trigger::join(&report.layers)
    )];
    let missing: Vec<u8> = decision.layers.iter().copied().filter(|layer| !LAYERS_AVAILABLE.contains(layer)).collect();
    if !missing.is_empty() {
        notes.push(format!(
            "ℹ️ Layer(s) {} were requested but are not available in this version of mcp-eval. This does not fail the run.",
            trigger::join(&missing)
        ));
    }
    if let Some(reason) = report.evals.as_ref().and_then(|evals| evals.layer1_not_run.as_ref()) {
        notes.push(format!("ℹ️ Layer 1 did not run: {reason}. This does not fail the run."));
    }
    if let Some(evals) = report.evals.as_ref().filter(|evals| evals.any_replayed()) {
        notes.push(format!(
            "ℹ️ **Layer 1 replayed its model answers from cassettes:** no model was called (model calls: {}); its verdicts were {}.",
            evals.model_calls_text(),
            crate::report::evals::REPLAYED_VERDICT
        ));
    }
    notes
}

fn strip_markdown(note: &str) -> String {
    note.replace("**", "").replace('`', "").replace("ℹ️ ", "")
}

/// `::error` for the first failures and `::warning` for the first warnings, within the
/// runner's per-step limits. A check is a finding on the server, with no place in the
/// repository: its annotation names no file (`report.json` is generated, not a file of the
/// repository, so a line of it lands nowhere), and the run's page shows it.
fn annotations(report: &RunReport) -> Vec<Annotation> {
    let pick = |status: Status, severity: Severity, max: usize| {
        report.checks.iter().filter(move |check| check.status == status).take(max).map(move |check| Annotation {
            severity,
            file: None,
            line: None,
            title: format!("mcp-eval {} ({}): {}", check.id, check.level.as_str(), check.title),
            message: check.message.clone(),
        })
    };
    let mut all: Vec<Annotation> = pick(Status::Fail, Severity::Error, workflow::MAX_ERROR_ANNOTATIONS).collect();
    all.extend(pick(Status::Warn, Severity::Warning, workflow::MAX_WARNING_ANNOTATIONS));
    if report.verdict() == Verdict::Error {
        if let Some(detail) = &report.outcome_detail {
            all.push(Annotation {
                severity: Severity::Error,
                file: None,
                line: None,
                title: format!("mcp-eval: run {}", report.outcome.as_str()),
                message: detail.clone(),
            });
        }
    }
    all
}

fn write_outputs(github: &GithubContext, outputs: &[(&str, String)], say: &dyn Fn(&str)) {
    let Some(path) = &github.output_file else { return };
    let delimiter = workflow::random_token();
    let text: String = outputs.iter().map(|(name, value)| workflow::output_entry(name, value, &delimiter)).collect();
    if let Err(error) = append(path, &text) {
        say(&format!(
            "::warning title=mcp-eval::{}",
            workflow::escape_data(&format!("cannot write the step outputs: {error}"))
        ));
    }
}

fn append_summary(github: &GithubContext, markdown: &str, say: &dyn Fn(&str)) {
    let Some(path) = &github.step_summary else { return };
    let mut text = markdown.to_owned();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    if let Err(error) = append(path, &text) {
        say(&format!(
            "::warning title=mcp-eval::{}",
            workflow::escape_data(&format!("cannot write the job summary: {error}"))
        ));
    }
}

fn append(path: &Path, text: &str) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
    file.write_all(text.as_bytes())
}

/// The summary with `notes` as paragraphs right after its title line.
fn insert_after_title(summary: &str, notes: &[String]) -> String {
    let (title, rest) = summary.split_once('\n').unwrap_or((summary, ""));
    let mut out = format!("{title}\n\n");
    for note in notes {
        out.push_str(note);
        out.push_str("\n\n");
    }
    out.push_str(rest);
    out
}

/// The pull request number of a pull request event.
fn pull_request_number(event_name: &str, payload: &Value) -> Option<u64> {
    if !matches!(event_name, "pull_request" | "pull_request_target") {
        return None;
    }
    payload.pointer("/pull_request/number").or_else(|| payload.get("number")).and_then(Value::as_u64)
}

/// Upserts the comment when asked to and possible; a failure becomes a warning and the job
/// summary carries the comment's content. Returns the comment's URL; a signal while it is posted
/// is said in the summary (and `run` ends the run with 130/143).
#[allow(clippy::too_many_arguments, reason = "the comment needs every part of the run")]
async fn post_comment(
    settings: &Settings,
    action: &ActionSettings,
    payload: &Value,
    report: &RunReport,
    summary: &str,
    notes: &[String],
    report_location: &str,
    say: &(dyn Fn(&str) + Sync),
) -> Option<String> {
    if !action.comment {
        say(&format!("mcp-eval: comment: off (input `{}`)", crate::settings::table::COMMENT.input_name()));
        return None;
    }
    let Some(number) = pull_request_number(&action.github.event_name, payload) else {
        if action.github.event_name.is_empty() {
            say("mcp-eval: comment: skipped, no workflow event (GITHUB_EVENT_NAME is not set: a local run)");
        } else {
            say(&format!("mcp-eval: comment: skipped, event `{}` is not a pull request", action.github.event_name));
        }
        return None;
    };
    if action.token.as_deref().is_none_or(|token| token.trim().is_empty()) {
        say(&format!(
            "::warning title=mcp-eval comment::no token given (input `{}`): the comment was skipped; the job summary carries the report",
            crate::settings::table::GITHUB_TOKEN.input_name()
        ));
        return None;
    }
    let Some((owner, repo)) = action.github.repository.as_deref().and_then(|r| r.split_once('/')) else {
        say("::warning title=mcp-eval comment::GITHUB_REPOSITORY is not set; the comment was not posted");
        return None;
    };
    let state = crate::baseline::State::of(report);
    let run_url = match (&action.github.server_url, &action.github.repository, &action.github.run_id) {
        (Some(server), Some(repository), Some(run_id)) => {
            Some(format!("{}/{repository}/actions/runs/{run_id}", server.trim_end_matches('/')))
        }
        _ => None,
    };
    let parts = CommentParts {
        comment_id: &action.comment_id,
        summary,
        notes,
        state: &state,
        report_location,
        run_url: run_url.as_deref(),
    };
    let target = CommentTarget {
        api_url: action.github.api_url.clone(),
        token: action.token.clone(),
        owner: owner.to_owned(),
        repo: repo.to_owned(),
        pull_request: number,
        comment_id: action.comment_id.clone(),
        timeout: settings.timeout.max(std::time::Duration::from_secs(10)),
    };
    let render = |previous: Option<&crate::baseline::State>| comment::render(&parts, previous.into());
    let log = |line: &str| say(&format!("mcp-eval: {line}"));
    let upsert = client::upsert(&target, &render, RetryPolicy::default(), &log);
    let outcome = tokio::select! {
        outcome = upsert => Ok(outcome),
        signal = crate::evaluate::signals::interrupt_signal() => Err(signal),
    };
    match outcome {
        Ok(Ok(upserted)) => {
            let verb = if upserted.created { "created" } else { "updated" };
            say(&format!("mcp-eval: comment {verb}: {}", upserted.url));
            Some(upserted.url)
        }
        Ok(Err(error)) => {
            let why = match error.kind {
                CommentErrorKind::Forbidden => {
                    "the token may not comment here (a pull request from a fork gets a read-only token, or the job lacks `pull-requests: write`)"
                }
                CommentErrorKind::Transient => "GitHub kept failing after retries",
                CommentErrorKind::RateLimited => "GitHub's rate limit asks for a longer wait than this action allows",
                CommentErrorKind::Tls => "the TLS connection to GitHub's API failed",
                CommentErrorKind::Other => "GitHub's answer was unexpected",
            };
            say(&format!(
                "::warning title=mcp-eval comment not posted::{}",
                workflow::escape_data(&format!(
                    "{why}: {}. The job summary carries the comment's content.",
                    error.message
                ))
            ));
            // The comment's body is this summary again with its delta line, which the earlier
            // comments, unread, cannot give: a note with that line, not a second copy.
            let delta = crate::baseline::delta_line(crate::baseline::Previous::Unread, &state);
            append_summary(
                &action.github,
                &format!(
                    "\n---\n\n> **The pull request comment was not posted:** {why}. Its content is the summary above; {}\n",
                    delta.replacen("**Since the previous run:**", "since the previous run:", 1)
                ),
                say,
            );
            None
        }
        Err(signal) => {
            say(&format!(
                "mcp-eval: interrupted by {} while posting the comment; the reports are written",
                signal.name()
            ));
            append_summary(
                &action.github,
                "\n> **⚠️ error: interrupted while posting the comment:** the reports above are complete; the pull request comment may be missing or out of date.\n",
                say,
            );
            None
        }
    }
}

/// The problems of an input file (the golden set, the fault plan, the price table) as settings
/// problems: each names its file, line, column and field.
fn file_problems(problems: Vec<crate::golden::Problem>) -> Vec<settings::Problem> {
    problems
        .into_iter()
        .map(|problem| settings::Problem {
            source: match problem.position() {
                Some((line, column)) => settings::Source::File {
                    path: problem.file.clone(),
                    line,
                    column,
                    field: problem.field.clone().unwrap_or_default(),
                },
                None => settings::Source::Default,
            },
            message: match problem.position() {
                Some(_) => problem.message.clone(),
                None => problem.to_string(),
            },
            hint: problem.hint.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `report.json` is generated, not a file of the repository: an annotation pointing at its
    /// line lands nowhere. A check's annotation names no file (the run's page shows it).
    #[test]
    fn a_check_annotation_names_no_generated_file() {
        let report = crate::report::test_support::sample_report();
        let all = annotations(&report);
        assert!(all.iter().any(|annotation| annotation.severity == Severity::Error), "a failing check is annotated");
        for annotation in &all {
            assert_eq!((&annotation.file, annotation.line), (&None, None), "{}", annotation.title);
            assert!(!workflow::annotation(annotation).contains("file="));
        }
    }

    #[test]
    fn the_gate_output_says_insufficient_data_for_a_pass_that_cannot_see() {
        let gate = |result: &str, insufficient_data| crate::report::evals::Layer1GateSection {
            result: result.into(),
            insufficient_data,
            ..Default::default()
        };
        assert_eq!(gate_output(&gate("pass", true)), "insufficient-data");
        assert_eq!(gate_output(&gate("pass", false)), "pass");
        assert_eq!(gate_output(&gate("no-baseline", false)), "no-baseline");
    }

    #[test]
    fn the_pull_request_number_comes_from_pull_request_events_only() {
        let payload = json!({"number": 5, "pull_request": {"number": 5}});
        assert_eq!(pull_request_number("pull_request", &payload), Some(5));
        assert_eq!(pull_request_number("pull_request_target", &json!({"number": 6})), Some(6));
        assert_eq!(pull_request_number("push", &payload), None);
    }

    #[test]
    fn the_outputs_are_those_action_yml_declares() {
        let text = include_str!("../../action.yml");
        let section = text.split("\noutputs:\n").nth(1).expect("an outputs: section");
        let section = section.split("\nruns:").next().unwrap_or(section);
        let declared: Vec<&str> = section
            .lines()
            .filter_map(|line| line.strip_prefix("  ").filter(|rest| !rest.starts_with(' ')))
            .filter_map(|line| line.strip_suffix(':'))
            .collect();
        assert_eq!(declared, OUTPUTS);
    }

    #[test]
    fn an_input_problem_names_its_file_by_its_path_in_the_workspace() {
        let github = GithubContext { workspace: "/home/runner/work/repo".into(), ..GithubContext::default() };
        let problems = [
            settings::Problem {
                source: settings::Source::File {
                    path: "/home/runner/work/repo/prices.yaml".into(),
                    line: 4,
                    column: 12,
                    field: "models[0].input".into(),
                },
                message: "expected a number, found a string".into(),
                hint: Some("use a number from 0 to 1000000".into()),
            },
            settings::Problem {
                source: settings::Source::Default,
                message: "/home/runner/work/repo/golden/tasks.yaml: cannot read the golden set: not found".into(),
                hint: None,
            },
        ];
        let said = std::sync::Mutex::new(Vec::new());
        let say = |line: &str| said.lock().expect("lines").push(line.to_owned());
        let _ = input_error(&github, &problems, &say);
        let said = said.into_inner().expect("lines");
        assert!(said.iter().all(|line| !line.contains("/home/runner")), "{said:#?}");
        assert!(said[0].ends_with("::prices.yaml:4:12: models[0].input: expected a number, found a string%0A  hint: use a number from 0 to 1000000"), "{said:#?}");
        assert!(said[1].ends_with("::golden/tasks.yaml: cannot read the golden set: not found"), "{said:#?}");
    }

    #[test]
    fn a_run_on_replayed_answers_says_so_in_a_note_after_the_title() {
        let decision = Decision { layers: vec![0, 1], reason: "the label".into() };
        let mut report = RunReport::new(
            chrono::Utc::now(),
            0,
            vec![0, 1],
            crate::report::model::RunOutcome::Completed,
            None,
            crate::report::model::ServerSection::default(),
            Vec::new(),
        );
        report.evals = Some(crate::report::evals::EvalsSection {
            model_calls: 5,
            replayed_model_calls: 5,
            ..crate::report::evals::EvalsSection::default()
        });
        let notes = layer_notes(&decision, &report);
        assert_eq!(
            notes.last().map(String::as_str),
            Some(
                "ℹ️ **Layer 1 replayed its model answers from cassettes:** no model was called (model calls: 5 (0 live, 5 replayed from cassettes)); its verdicts were reached on replayed model answers (cassettes), not live calls."
            )
        );
        report.evals.as_mut().expect("layer 1").replayed_model_calls = 0;
        assert_eq!(layer_notes(&decision, &report).len(), 1, "a live run has the layers note alone");
    }

    #[test]
    fn notes_follow_the_title() {
        let text = insert_after_title("## ✅ pass\nrest\n", &["a".into(), "b".into()]);
        assert_eq!(text, "## ✅ pass\n\na\n\nb\n\nrest\n");
    }
}
