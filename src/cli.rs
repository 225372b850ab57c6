//! The command line: clap definitions of `run`, `action`, `merge`, `golden check`, `golden init`,
//! `judge calibrate` ([`crate::calibration`]), `migrate-scan` ([`crate::migrate`]) and `demo-server`, the `golden check` and `golden
//! init` front ends ([`crate::golden`]), and the `run` front end (flags →
//! [`crate::settings::resolve`] → [`crate::evaluate`] → exit status).
//! The Action's front end is [`crate::action`].

use std::collections::BTreeSet;
use std::sync::Arc;

use std::io::Write as _;

use clap::{Args, Parser, Subcommand};

/// `eprintln!` that never panics: a closed stderr (`mcp-eval run … 2>&1 | head -1`) must not stop
/// the run or the reports.
macro_rules! say {
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

use crate::demo::{self, DemoConfig};
use crate::error::{Kind, UserError};
use crate::evaluate::{self, RunEvent};
use crate::settings::{self, ActionFlags, FrontEnd, SettingsArgs};
use crate::verdict::ExitStatus;
use crate::{authoring, golden};

/// Evaluates MCP servers: layer 0 conformance to MCP 2026-07-28, layer 1 behaviour of models on
/// a golden set, layer 2 faults injected into its tool calls, layer 3 latency, tokens and cost.
#[derive(Debug, Parser)]
#[command(name = "mcp-eval", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Evaluate one server and write report.json, junit.xml and summary.md.
    Run(Box<RunArgs>),
    /// Serve the embedded demo server (a correct 2026-07-28 server; `--break ID` breaks one rule).
    DemoServer(DemoArgs),
    /// The GitHub Action entrypoint: reads INPUT_* and GITHUB_* (or these flags), evaluates,
    /// writes the reports, outputs and job summary, and upserts the pull request comment.
    Action(Box<ActionArgs>),
    /// Join the reports of shards (`--shard i/n`), and of legs that ran other models, into one
    /// report.json, junit.xml and summary.md; refuses different golden sets, a model in two
    /// legs' lists, or a shard missing or given twice.
    Merge(MergeArgs),
    /// Golden sets (layer 1): check a golden-set file, or write a starter one from a server.
    #[command(subcommand)]
    Golden(GoldenCommand),
    /// The rubric judge (layer 1): measure it against hand-labelled trials.
    #[command(subcommand)]
    Judge(JudgeCommand),
    /// Find the 2025-era protocol a repository still uses (removed methods, sessions, the GET
    /// stream and DELETE, Last-Event-ID, old error codes, SDK pins), each at file:line with its
    /// 2026-07-28 replacement; walks the files git would track.
    MigrateScan(MigrateScanArgs),
    /// Serve the demo model: a scripted stand-in for a good model, written from a golden set, on
    /// both wires (Chat Completions at `URL/v1`, Messages at `URL`); prints the URL. For the
    /// demo's cassettes, the layer-1 benchmark and tests; it is no model.
    #[command(hide = true)]
    DemoModel(DemoModelArgs),
}

/// Flags of the hidden `mcp-eval demo-model`.
#[derive(Debug, Args)]
pub struct DemoModelArgs {
    /// The golden set whose expected calls it makes
    #[arg(long, value_name = "FILE")]
    pub golden_set: std::path::PathBuf,
    /// Port on 127.0.0.1 (0 picks a free one)
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Wait this long before each answer
    #[arg(long, value_name = "MS", default_value_t = 0)]
    pub delay_ms: u64,
    /// Serve one request at a time, the others waiting their turn (a model server with one
    /// slot): a test fixture, hidden
    #[arg(long, hide = true)]
    pub single_slot: bool,
    /// CASE:N — every Nth trial of the case calls a wrong tool (repeatable)
    #[arg(long, value_name = "CASE:N")]
    pub flaky: Vec<String>,
    /// CASE:N — every Nth final answer of the case quotes the last tool result (repeatable)
    #[arg(long, value_name = "CASE:N")]
    pub quote_result: Vec<String>,
    /// CASE:BEHAVIOUR — after a failed tool result in the case: retry, fallback=TOOL, honest,
    /// invent, say=TEXT or silent (repeatable; layer 2's tests)
    #[arg(long, value_name = "CASE:BEHAVIOUR")]
    pub on_fault: Vec<String>,
    /// CASE:follow or CASE:refuse — after a tool result carrying a layer-2 payload (repeatable;
    /// layer 2's tests)
    #[arg(long, value_name = "CASE:BEHAVIOUR")]
    pub on_payload: Vec<String>,
    /// Answer this share of the requests (0 to 1) with HTTP 429 or 500, drawn from `--seed` per
    /// (first user turn, model turn, attempt): a test fixture (the soak), hidden
    #[arg(long, value_name = "SHARE", value_parser = demo::seeded::parse_rate, hide = true)]
    pub fail_rate: Option<f64>,
    /// The seed of `--fail-rate`'s draws (hidden)
    #[arg(long, value_name = "N", default_value_t = 0, hide = true)]
    pub seed: u64,
}

/// Flags of `mcp-eval migrate-scan`.
#[derive(Debug, Args)]
pub struct MigrateScanArgs {
    /// The directory or file to scan
    #[arg(value_name = "PATH", default_value = ".")]
    pub path: std::path::PathBuf,
    /// Also write every finding and note as JSON to FILE
    #[arg(long, value_name = "FILE")]
    pub json: Option<std::path::PathBuf>,
    /// Also write the findings (not the notes) as SARIF 2.1.0 to FILE, for GitHub code scanning
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<std::path::PathBuf>,
    /// Scan the files .gitignore leaves out too
    #[arg(long)]
    pub no_ignore: bool,
    /// Exit 1 when there is a finding (notes never fail)
    #[arg(long)]
    pub fail_on_findings: bool,
}

/// Flags of `mcp-eval merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The report directories of the shards (each holding a report.json)
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<std::path::PathBuf>,
    /// Directory for the merged report.json, junit.xml and summary.md [default mcp-eval-report]
    #[arg(long, value_name = "DIR")]
    pub out: Option<std::path::PathBuf>,
    /// Also write junit.xml here
    #[arg(long, value_name = "FILE")]
    pub junit_path: Option<std::path::PathBuf>,
    /// The YAML config file (its providers name the endpoints baselines are compared on; gate.fail_on)
    #[arg(long, value_name = "FILE")]
    pub config: Option<String>,
    /// When layer 0's findings fail the merged run: must, should or never [default: the shards' own]
    #[arg(long, value_name = "WHEN")]
    pub fail_on: Option<String>,
    /// When layer 1 fails the merged run: regression (the gate against the baseline), strict (also when the gate has too few trials to see a drop), failure (any failed case) or never [default failure]
    #[arg(long, value_name = "WHEN")]
    pub fail_on_evals: Option<String>,
    /// The verdict cache directory whose stored baseline the merged run is gated against
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<String>,
    /// A report.json to gate the merged run against, instead of the stored baseline
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<String>,
    /// Store the merged run as the baseline in --cache-dir, whatever the gate says
    #[arg(long)]
    pub accept_baseline: bool,
    /// The smallest drop of the mean pass rate that can fail the gate, 0..1 [default 0.02]
    #[arg(long, value_name = "FRACTION")]
    pub max_drop: Option<String>,
    /// The golden set the shards ran: names the cases that see each changed tool
    #[arg(long, value_name = "FILE")]
    pub golden_set: Option<String>,
}

/// `mcp-eval judge …`.
#[derive(Debug, Subcommand)]
pub enum JudgeCommand {
    /// Re-judge hand-labelled trials (LABELS.yaml names a report.json and its golden set) with
    /// --judge-model, print the judge's TPR, TNR and n, and write a calibration file for
    /// --judge-calibration.
    Calibrate(JudgeCalibrateArgs),
}

/// Flags of `mcp-eval judge calibrate`.
#[derive(Debug, Args)]
pub struct JudgeCalibrateArgs {
    /// The labels file (YAML: `report`, `golden_set`, `labels: [{case, model, run, criterion, human}]`)
    #[arg(value_name = "LABELS.yaml")]
    pub labels: std::path::PathBuf,
    /// The judge to measure, PROVIDER:MODEL (the one your runs use)
    #[arg(long, value_name = "PROVIDER:MODEL")]
    pub judge_model: String,
    /// Judge calls per trial, majority vote [default 1]
    #[arg(long, value_name = "N")]
    pub judge_samples: Option<String>,
    /// The golden set whose rubrics are judged, instead of the labels file's `golden_set`
    #[arg(long, value_name = "FILE")]
    pub golden_set: Option<std::path::PathBuf>,
    /// Replay the judge's answers from this directory of cassettes (or record into it with --record)
    #[arg(long, value_name = "DIR")]
    pub cassettes: Option<String>,
    /// Call the real judge and write what it answered into --cassettes
    #[arg(long)]
    pub record: bool,
    /// A config file (for providers beyond openai, anthropic and replay)
    #[arg(long, value_name = "FILE")]
    pub config: Option<String>,
    /// The hard cap on judge calls [default 2000]
    #[arg(long, value_name = "N")]
    pub max_model_calls: Option<String>,
    /// Where to write the calibration file (JSON)
    #[arg(long, value_name = "FILE", default_value = "judge-calibration.json")]
    pub out: std::path::PathBuf,
}

/// `mcp-eval golden …`.
#[derive(Debug, Subcommand)]
pub enum GoldenCommand {
    /// Validate a golden set and print its hash and each case's hash; with a server, also check
    /// every tool name of the set against the server's `tools/list`, and with `--execute` make
    /// every expected call of the set on it (no model).
    Check(GoldenCheckArgs),
    /// Write a starter golden set from a server's `tools/list`: one draft case per tool (its
    /// required arguments filled with schema-valid examples, or with `--model` a model's prompt
    /// and arguments, checked against the schema) and a few negative cases; prints the path and
    /// the set hash.
    Init(GoldenInitArgs),
}

/// The server flags of the `golden` subcommands (the `run` flags of the same names).
#[derive(Debug, Clone, Default, Args)]
pub struct GoldenServerArgs {
    /// A Streamable HTTP endpoint to list the tools of
    #[arg(long, value_name = "URL", conflicts_with = "server_cmd")]
    pub server_url: Option<String>,
    /// A stdio server to list the tools of (started through `sh -c`)
    #[arg(long, value_name = "CMD")]
    pub server_cmd: Option<String>,
    /// Extra HTTP header for every request, 'Name: value' (repeatable); values are secrets
    #[arg(long = settings::table::HEADER.long(), value_name = "'NAME: VALUE'")]
    pub headers: Vec<String>,
    /// An environment variable for the stdio server, NAME=VALUE or NAME to pass ours (repeatable)
    #[arg(long = settings::table::SERVER_ENV.long(), value_name = "NAME[=VALUE]")]
    pub server_env: Vec<String>,
    /// [`settings::table::OAUTH_CLIENT_ID`]: a protected server is reached signed in, as `run` is.
    #[arg(long = settings::table::OAUTH_CLIENT_ID.long(), value_name = "ID", help = settings::table::OAUTH_CLIENT_ID.help())]
    pub oauth_client_id: Option<String>,
    /// [`settings::table::OAUTH_CLIENT_SECRET_ENV`].
    #[arg(long = settings::table::OAUTH_CLIENT_SECRET_ENV.long(), value_name = "NAME", help = settings::table::OAUTH_CLIENT_SECRET_ENV.help())]
    pub oauth_client_secret_env: Option<String>,
    /// [`settings::table::OAUTH_SCOPES`].
    #[arg(long = settings::table::OAUTH_SCOPES.long(), value_name = "SCOPES", help = settings::table::OAUTH_SCOPES.help())]
    pub oauth_scopes: Option<String>,
    /// Per-request timeout in seconds [default 30, or the config file's `timeout_seconds`]
    #[arg(long, value_name = "SECONDS", allow_hyphen_values = true)]
    pub timeout_seconds: Option<String>,
    /// The YAML config file `run` reads: its `server` (when no --server-url or --server-cmd is
    /// given), `timeout_seconds`, `oauth`, and the `providers:` a --model may name
    #[arg(long, value_name = "FILE")]
    pub config: Option<String>,
}

/// Flags of `mcp-eval golden init`.
#[derive(Debug, Args)]
pub struct GoldenInitArgs {
    /// The server whose tools the set is written from (a URL or a command is required)
    #[command(flatten)]
    pub server: GoldenServerArgs,
    /// Where to write the set
    #[arg(long, value_name = "FILE", default_value = authoring::init::DEFAULT_OUT)]
    pub out: std::path::PathBuf,
    /// Replace the file when it exists
    #[arg(long)]
    pub force: bool,
    /// Have this model write each tool's prompt and arguments, PROVIDER:MODEL (providers as for
    /// `run --model`); its arguments are checked against the tool's inputSchema, and the
    /// template writes the case when they fail
    #[arg(long, value_name = "PROVIDER:MODEL")]
    pub model: Option<String>,
    /// Replay the model's answers from this directory instead of calling it
    #[arg(long, value_name = "DIR", requires = "model")]
    pub cassettes: Option<String>,
    /// With --cassettes: call the model and write what it answered into the directory
    #[arg(long, requires = "cassettes")]
    pub record: bool,
    /// Hard cap on model calls, retries included [default 2000]
    #[arg(long, value_name = "N", requires = "model", allow_hyphen_values = true)]
    pub max_model_calls: Option<String>,
}

/// Flags of `mcp-eval golden check`.
#[derive(Debug, Args)]
pub struct GoldenCheckArgs {
    /// The golden-set YAML file
    pub file: std::path::PathBuf,
    /// With a server, every tool name of the set is checked against its `tools/list`
    #[command(flatten)]
    pub server: GoldenServerArgs,
    /// Make every expected call of the set on the server, for real and with no model: the
    /// expected tool with its exact arguments, once each (needs a server; exit 1 when a call
    /// fails or returns isError)
    #[arg(long)]
    pub execute: bool,
    /// With --execute (implied): also call the tools that may change or delete data (not
    /// annotated `readOnlyHint: true` or `destructiveHint: false`), skipped otherwise
    #[arg(long)]
    pub execute_destructive: bool,
}

/// Flags of `mcp-eval run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The settings every front end shares.
    #[command(flatten)]
    pub settings: SettingsArgs,
    /// Start the embedded demo server and evaluate it (no other setup needed)
    #[arg(long)]
    pub demo: bool,
    /// Print nothing but errors on stderr
    #[arg(long)]
    pub quiet: bool,
    /// Print report.json on stdout
    #[arg(long)]
    pub json: bool,
}

/// Flags of `mcp-eval action`; each overrides the input or variable named in its help, and an
/// empty value counts as not given.
#[derive(Debug, Clone, Default, Args)]
pub struct ActionArgs {
    /// The settings every front end shares.
    #[command(flatten)]
    pub settings: SettingsArgs,
    /// The Action's own settings.
    #[command(flatten)]
    pub action: ActionFlags,
}

/// Flags of the hidden `mcp-eval demo-server`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Port on 127.0.0.1 (0 picks a free one; the URL is printed on stdout)
    #[arg(long, conflicts_with = "stdio")]
    pub port: Option<u16>,
    /// Serve over stdio instead of HTTP
    #[arg(long)]
    pub stdio: bool,
    /// Break one rule (a lowercase requirement id, e.g. h-4); repeatable
    // `--fault` is the former, deprecated name (layer 2 owns the word "fault"): a hidden alias
    // so that existing scripts keep working.
    #[arg(long = "break", alias = "fault", value_name = "ID")]
    pub breaks: Vec<String>,
    /// Require `Authorization: Bearer TOKEN` on HTTP (and serve protected-resource metadata)
    #[arg(long, value_name = "TOKEN")]
    pub require_token: Option<String>,
    /// Append every tools/call received to FILE as a JSON line (tests)
    #[arg(long, value_name = "FILE", hide = true)]
    pub calls_log: Option<std::path::PathBuf>,
    /// Fail this share of the tools/calls (0 to 1), drawn from `--seed` per (tool, arguments,
    /// attempt): half `isError` results, half -32603 errors; a test fixture (the soak), hidden
    #[arg(long, value_name = "SHARE", value_parser = demo::seeded::parse_rate, hide = true)]
    pub fail_rate: Option<f64>,
    /// The seed of `--fail-rate`'s draws (hidden)
    #[arg(long, value_name = "N", default_value_t = 0, hide = true)]
    pub seed: u64,
}

/// The whole process: parses the command line, runs the subcommand on a two-thread runtime, and
/// returns the exit code decided by [`crate::verdict`]. The binary's `main` only exits with it.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let status = if error.use_stderr() { ExitStatus::InvalidInput } else { ExitStatus::Passed };
            let _ = error.print();
            return status.code();
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        // As much stack as the main thread: the readers of nested input (YAML to 64 levels, JSON to
        // serde_json's 128) may run on a worker.
        .thread_stack_size(8 * 1024 * 1024)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            say!("{}", UserError::new(Kind::Environment, "cannot start the async runtime").caused_by(error));
            return ExitStatus::Environment.code();
        }
    };
    let status = match cli.command {
        Command::Run(args) => runtime.block_on(async {
            // Before anything can block: a signal from here on is kept (the reports say it).
            crate::evaluate::signals::install();
            let status = Box::pin(run(*args)).await;
            // A signal outside the evaluation (while the settings or the golden set were read)
            // still ends the run as interrupted.
            match crate::evaluate::signals::received() {
                Some(signal) => status.max(signal.exit_status()),
                None => status,
            }
        }),
        Command::DemoServer(args) => runtime.block_on(demo_server(args)),
        Command::Action(args) => runtime.block_on(async {
            crate::evaluate::signals::install();
            Box::pin(crate::action::run(*args, &|name| std::env::var(name).ok(), Box::new(std::io::stdout()))).await
        }),
        Command::Golden(GoldenCommand::Check(args)) => runtime.block_on(golden_check(args)),
        Command::Golden(GoldenCommand::Init(args)) => runtime.block_on(golden_init(args)),
        Command::Merge(args) => merge(&args),
        Command::Judge(JudgeCommand::Calibrate(args)) => runtime.block_on(judge_calibrate(args)),
        Command::MigrateScan(args) => migrate_scan(&args),
        Command::DemoModel(args) => runtime.block_on(demo_model(args)),
    };
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    status.code()
}

/// `mcp-eval run`: resolve, evaluate, print; returns the exit status.
pub async fn run(args: RunArgs) -> ExitStatus {
    let request =
        settings::Request { flags: args.settings, action: ActionFlags::default(), demo: args.demo, merging: false };
    // The CLI reads no `INPUT_*`/`GITHUB_*` variables (resolve ignores them for it); the lookup
    // serves the variables `--server-env NAME` passes through to a stdio server.
    let settings = match settings::resolve(&request, FrontEnd::Cli, &|name| std::env::var(name).ok()) {
        Ok(settings) => settings,
        Err(problems) => {
            for problem in problems {
                say!("{}", problem.into_error());
            }
            return ExitStatus::InvalidInput;
        }
    };
    let quiet = args.quiet;
    let events = move |event: &RunEvent| print_event(event, quiet);
    let layers = evaluate::layers_outside_the_action(&settings);
    // Every problem of an input file, then how many (exit status 2).
    let refused = |problems: Vec<crate::golden::Problem>, what: &str| {
        let count = problems.len();
        for problem in problems {
            say!("{}", problem.into_error());
        }
        say!("the {what} has {count} problem(s)");
        ExitStatus::InvalidInput
    };
    let golden = match evaluate::load_golden(&settings, &layers) {
        Ok(golden) => golden,
        Err(problems) => return refused(problems, "golden set"),
    };
    // A plan over the model-call cap is a budget message, not a problem of the set (exit status 2).
    if let Some(error) = evaluate::layer2_budget(&settings, &layers, golden.as_ref()) {
        say!("{error}");
        return ExitStatus::InvalidInput;
    }
    let prices = match evaluate::load_prices(&settings, &layers) {
        Ok(prices) => prices,
        Err(problems) => return refused(problems, "price table"),
    };
    let evaluation = evaluate::evaluate(&settings, &layers, golden.as_ref(), prices.as_ref(), &events, None).await;
    if let Err(error) = &evaluation.written {
        say!("{error}");
    }
    if args.json {
        // A closed stdout (`--json | head`) is the reader's choice, not our failure: no panic.
        let _ = std::io::stdout().write_all(crate::report::json::render(&evaluation.report).as_bytes());
    }
    evaluation.decision.exit
}

/// `mcp-eval merge`: read the shards, join them, write the reports; the exit status is the
/// gate's on the merged report (2 when the shards do not belong together).
pub fn merge(args: &MergeArgs) -> ExitStatus {
    // The gate's settings go through the resolver `run` uses: the same defaults, the same
    // config file, the same messages.
    let flags = settings::SettingsArgs {
        config: args.config.clone(),
        fail_on: args.fail_on.clone(),
        fail_on_evals: args.fail_on_evals.clone(),
        cache_dir: args.cache_dir.clone(),
        baseline: args.baseline.clone(),
        accept_baseline: args.accept_baseline,
        max_drop: args.max_drop.clone(),
        golden_set: args.golden_set.clone(),
        ..settings::SettingsArgs::default()
    };
    let request = settings::Request { flags, merging: true, ..settings::Request::default() };
    let settings = match settings::resolve(&request, FrontEnd::Cli, &|name| std::env::var(name).ok()) {
        Ok(settings) => settings,
        Err(problems) => {
            for problem in problems {
                say!("{}", problem.into_error());
            }
            return ExitStatus::InvalidInput;
        }
    };
    let merged = crate::merge::read_parts(&args.dirs).and_then(crate::merge::merge);
    let mut report = match merged {
        Ok(report) => report,
        Err(error) => {
            say!("{error}");
            return error.exit_status();
        }
    };
    crate::merge::gate_merged(&mut report, &settings);
    let out = args.out.clone().unwrap_or_else(|| settings::DEFAULT_REPORT_DIR.into());
    let fail_on = args.fail_on.is_some().then_some(settings.fail_on);
    let evaluation = crate::merge::finish(report, fail_on, &out, args.junit_path.as_deref());
    match &evaluation.written {
        Ok(written) => say!(
            "mcp-eval: merged {} report(s) into {}: result {}",
            args.dirs.len(),
            written.report_json.display(),
            evaluation.decision.result.as_str()
        ),
        Err(error) => say!("{error}"),
    }
    evaluation.decision.exit
}

/// `mcp-eval migrate-scan`: the table on stdout; the exit status from the one table.
pub fn migrate_scan(args: &MigrateScanArgs) -> ExitStatus {
    let options = crate::migrate::Options {
        path: args.path.clone(),
        json: args.json.clone(),
        sarif: args.sarif.clone(),
        no_ignore: args.no_ignore,
        fail_on_findings: args.fail_on_findings,
    };
    crate::migrate::command(&options, &mut std::io::stdout(), &mut std::io::stderr())
}

/// Prints one event to stderr: errors always, the rest unless `quiet`.
fn print_event(event: &RunEvent, quiet: bool) {
    match event {
        RunEvent::InputError { text } | RunEvent::Failure { text } => say!("{text}"),
        RunEvent::ProviderUnusable { .. } | RunEvent::ReplayMiss { .. } => {
            if let Some(line) = event.line() {
                say!("error: {line}");
            }
        }
        RunEvent::EndedEarly { interrupted: false, detail, stderr_tail } => {
            say!("error: {detail}");
            if let Some(tail) = stderr_tail {
                let lines: Vec<&str> = tail.lines().rev().take(5).collect();
                say!("  the server's stderr ended with:");
                for line in lines.into_iter().rev() {
                    say!("    {line}");
                }
            }
        }
        _ if quiet => {}
        event => {
            if let Some(line) = event.line() {
                say!("mcp-eval: {line}");
            }
        }
    }
}

/// `mcp-eval demo-server`: serve until stdin closes (stdio) or SIGINT (HTTP).
pub async fn demo_server(args: DemoArgs) -> ExitStatus {
    let mut breaks = BTreeSet::new();
    for given in &args.breaks {
        match demo::parse_break(given) {
            Ok(id) => {
                breaks.insert(id);
            }
            Err(message) => {
                say!("{}", UserError::new(Kind::InvalidInput, format!("invalid --break `{given}`: {message}")));
                return ExitStatus::InvalidInput;
            }
        }
    }
    let seeded_failures = args.fail_rate.map(|rate| Arc::new(demo::seeded::SeededFailures::new(rate, args.seed)));
    let config = Arc::new(DemoConfig {
        breaks,
        bearer_token: args.require_token.clone(),
        calls_log: args.calls_log.clone(),
        seeded_failures,
    });
    if args.stdio {
        return match demo::serve_stdio(config).await {
            Ok(()) => ExitStatus::Passed,
            Err(error) => environment(UserError::new(Kind::Environment, "demo server").caused_by(error)),
        };
    }
    let listener = match listen(args.port.unwrap_or(0), "/mcp").await {
        Ok(listener) => listener,
        Err(error) => return environment(error),
    };
    tokio::select! {
        result = demo::serve_http(listener, config) => match result {
            Ok(()) => ExitStatus::Passed,
            Err(error) => environment(UserError::new(Kind::Environment, "demo server").caused_by(error)),
        },
        _ = tokio::signal::ctrl_c() => ExitStatus::Passed,
    }
}

/// `mcp-eval judge calibrate`: TPR, TNR and n on stdout, the calibration file written.
pub async fn judge_calibrate(args: JudgeCalibrateArgs) -> ExitStatus {
    let flags = SettingsArgs {
        judge_model: Some(args.judge_model),
        judge_samples: args.judge_samples,
        cassettes: args.cassettes,
        record: args.record,
        config: args.config,
        max_model_calls: args.max_model_calls,
        ..SettingsArgs::default()
    };
    let request = crate::authoring::calibrate::CalibrateRequest {
        labels: args.labels,
        golden_set: args.golden_set,
        out: args.out,
        flags,
        retry: crate::trials::caller::RetryPolicy::default(),
    };
    crate::authoring::calibrate::calibrate(request, &mut std::io::stdout()).await
}

/// `mcp-eval demo-model`: serve until SIGINT.
pub async fn demo_model(args: DemoModelArgs) -> ExitStatus {
    let set = match golden::load::load(&args.golden_set) {
        Ok(set) => set,
        Err(problems) => {
            for problem in problems {
                say!("{}", problem.into_error());
            }
            return ExitStatus::InvalidInput;
        }
    };
    let (flaky, quote) = match (case_every("--flaky", &args.flaky), case_every("--quote-result", &args.quote_result)) {
        (Ok(flaky), Ok(quote)) => (flaky, quote),
        (Err(error), _) | (_, Err(error)) => {
            say!("{error}");
            return ExitStatus::InvalidInput;
        }
    };
    let mut model = demo::model::DemoModel::new(&set, &flaky, &quote, chrono::Utc::now().date_naive());
    model.delay = std::time::Duration::from_millis(args.delay_ms);
    model.single_slot = args.single_slot.then(|| tokio::sync::Mutex::new(()));
    model.seeded_failures = args.fail_rate.map(|rate| demo::seeded::SeededFailures::new(rate, args.seed));
    for text in &args.on_payload {
        match text.split_once(':') {
            Some((case, "follow")) => {
                model.on_payload.insert(case.to_owned(), true);
            }
            Some((case, "refuse")) => {
                model.on_payload.insert(case.to_owned(), false);
            }
            _ => {
                say!("error: --on-payload {text}: write CASE:follow or CASE:refuse");
                return ExitStatus::InvalidInput;
            }
        }
    }
    for text in &args.on_fault {
        match demo::model::OnFault::parse(text) {
            Ok((case, behaviour)) => {
                model.on_fault.insert(case, behaviour);
            }
            Err(error) => {
                say!("error: --on-fault {text}: {error}");
                return ExitStatus::InvalidInput;
            }
        }
    }
    let listener = match listen(args.port, "").await {
        Ok(listener) => listener,
        Err(error) => return environment(error),
    };
    tokio::select! {
        () = demo::model::serve(listener, Arc::new(model)) => ExitStatus::Passed,
        _ = tokio::signal::ctrl_c() => ExitStatus::Passed,
    }
}

/// `CASE:N` entries of a demo-model flag (N ≥ 1).
fn case_every(flag: &str, entries: &[String]) -> Result<Vec<(String, usize)>, UserError> {
    entries
        .iter()
        .map(|entry| {
            match entry.rsplit_once(':').and_then(|(case, every)| Some((case.to_owned(), every.parse::<usize>().ok()?)))
            {
                Some((case, every)) if every > 0 => Ok((case, every)),
                _ => Err(UserError::new(Kind::InvalidInput, format!("invalid {flag} `{entry}`"))
                    .with_hint(format!("write CASE:N, e.g. {flag} lookup:5"))),
            }
        })
        .collect()
}

/// Listens on 127.0.0.1:`port` (0: a free one) and prints `http://ADDRESS{path}` on stdout, for
/// the process that started us to read.
async fn listen(port: u16, path: &str) -> Result<tokio::net::TcpListener, UserError> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|error| UserError::new(Kind::Environment, "cannot listen on 127.0.0.1").caused_by(error))?;
    let address = listener
        .local_addr()
        .map_err(|error| UserError::new(Kind::Environment, "cannot read the address").caused_by(error))?;
    let _ = writeln!(std::io::stdout(), "http://{address}{path}");
    let _ = std::io::stdout().flush();
    Ok(listener)
}

fn environment(error: UserError) -> ExitStatus {
    say!("{error}");
    error.exit_status()
}

/// `mcp-eval golden check`.
pub async fn golden_check(args: GoldenCheckArgs) -> ExitStatus {
    let given = args.server.server_url.is_some() || args.server.server_cmd.is_some() || args.server.config.is_some();
    let server = if given {
        let settings = match resolve_golden(args.server, SettingsArgs::default()) {
            Ok(settings) => settings,
            Err(status) => return status,
        };
        match golden_server(&settings).await {
            Ok(server) => server,
            Err(error) => return authoring::refuse(&error),
        }
    } else {
        None
    };
    let execute = match (args.execute, args.execute_destructive) {
        (_, true) => Some(authoring::execute::Sends::Destructive),
        (true, false) => Some(authoring::execute::Sends::Safe),
        (false, false) => None,
    };
    if execute.is_some() && server.is_none() {
        return authoring::refuse(
            &UserError::new(Kind::InvalidInput, "--execute needs a server to call: none was given")
                .with_hint("pass --server-url URL or --server-cmd CMD, or a --config whose `server` names one"),
        );
    }
    authoring::check(args.file, server, execute).await
}

/// `mcp-eval golden init`: the server (and, with `--model`, the model) resolved through the
/// settings code `run` uses.
pub async fn golden_init(args: GoldenInitArgs) -> ExitStatus {
    let extra = SettingsArgs {
        models: args.model.iter().cloned().collect(),
        cassettes: args.cassettes.clone(),
        record: args.record,
        max_model_calls: args.max_model_calls.clone(),
        ..SettingsArgs::default()
    };
    let settings = match resolve_golden(args.server, extra) {
        Ok(settings) => settings,
        Err(status) => return status,
    };
    let server = match golden_server(&settings).await {
        Ok(server) => server,
        Err(error) => return authoring::refuse(&error),
    };
    let Some(server) = server else {
        return authoring::refuse(
            &UserError::new(Kind::InvalidInput, "no server given")
                .with_hint("pass --server-url URL or --server-cmd CMD, or a --config whose `server` names one"),
        );
    };
    let plan = match settings.layer1.models.first().filter(|_| args.model.is_some()) {
        None => None,
        Some(model) => match authoring::init_model::plan(&settings.layer1, model) {
            Ok(plan) => Some(plan),
            Err(error) => {
                say!("{error}");
                return error.exit_status();
            }
        },
    };
    authoring::init::init(server, &args.out, args.force, plan).await
}

/// The server a `golden` subcommand talks to, reached as `run` reaches it (signed in as a CI
/// client when the settings ask; the tokens join the redactor); `None` for no server.
///
/// # Errors
/// The sign-in failed (exit status 3), or no CA certificates for an `https://` server.
async fn golden_server(settings: &settings::Settings) -> Result<Option<authoring::CheckServer>, UserError> {
    let redactor = crate::mcp::evidence::Redactor::new(settings.secrets());
    let target = evaluate::connectable_target(settings, &redactor).await?;
    Ok(target.map(|target| authoring::CheckServer { target, redactor }))
}

/// The settings of a `golden` subcommand: its server flags on top of `extra`, then the config
/// file (timeout 30 s unless a flag or the file gives one); every problem is printed and gives
/// exit status 2.
fn resolve_golden(server: GoldenServerArgs, extra: SettingsArgs) -> Result<settings::Settings, ExitStatus> {
    let timeout = server.timeout_seconds.or_else(|| server.config.is_none().then(|| "30".to_owned()));
    let flags = SettingsArgs {
        server_url: server.server_url,
        server_command: server.server_cmd,
        headers: server.headers,
        server_env: server.server_env,
        oauth_client_id: server.oauth_client_id,
        oauth_client_secret_env: server.oauth_client_secret_env,
        oauth_scopes: server.oauth_scopes,
        timeout_seconds: timeout,
        config: server.config,
        ..extra
    };
    let request = settings::Request { flags, action: ActionFlags::default(), demo: false, merging: false };
    match settings::resolve(&request, FrontEnd::Cli, &|name| std::env::var(name).ok()) {
        Ok(settings) => Ok(settings),
        Err(problems) => {
            let mut met = crate::verdict::Met::nothing();
            for problem in problems {
                let error = problem.into_error();
                say!("{error}");
                met.add(error.kind);
            }
            Err(met.exit_status())
        }
    }
}
