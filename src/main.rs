//! The `mcp-eval` command line: parses flags into [`mcp_eval::evaluate::Settings`], runs the
//! evaluation, prints progress to stderr (and the report to stdout with `--json`), and exits with
//! the status documented in [`mcp_eval::exit_code`].

#![allow(clippy::print_stdout, clippy::print_stderr, reason = "the binary is where output is printed")]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use mcp_eval::conformance::Options;
use mcp_eval::demo::{self, DemoConfig};
use mcp_eval::evaluate::{self, Settings};
use mcp_eval::exit_code;
use mcp_eval::mcp::era::Target;
use mcp_eval::mcp::http::HttpSettings;
use mcp_eval::report;

/// Evaluates MCP servers: layer-0 conformance to MCP 2026-07-28.
#[derive(Debug, Parser)]
#[command(name = "mcp-eval", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Evaluate one server and write report.json, junit.xml and summary.md.
    Run(RunArgs),
    /// Serve the embedded demo server (a correct 2026-07-28 server; also our fault fixture).
    #[command(hide = true)]
    DemoServer(DemoArgs),
    /// The GitHub Action entrypoint: reads INPUT_* and GITHUB_* (or these flags), evaluates,
    /// writes the reports, outputs and job summary, and upserts the pull request comment.
    Action(Box<mcp_eval::action::ActionArgs>),
}

#[derive(Debug, Args)]
struct RunArgs {
    /// URL of a Streamable HTTP server, e.g. http://127.0.0.1:8000/mcp
    #[arg(long, value_name = "URL", conflicts_with_all = ["server_cmd", "demo"])]
    server_url: Option<String>,
    /// Command that starts a stdio server (run through `sh -c`), e.g. 'python -m my_server'
    #[arg(long, value_name = "CMD", conflicts_with = "demo")]
    server_cmd: Option<String>,
    /// Start the embedded demo server and evaluate it (no other setup needed)
    #[arg(long)]
    demo: bool,
    /// Extra HTTP header for every request, 'Name: value' (repeatable); values are secrets
    #[arg(long = "header", value_name = "'NAME: VALUE'")]
    headers: Vec<String>,
    /// Layers to run, comma-separated; this version runs layer 0 only
    #[arg(long, default_value = "0", value_name = "LIST")]
    layers: String,
    /// Directory for report.json, junit.xml and summary.md
    #[arg(long, default_value = "mcp-eval-report", value_name = "DIR")]
    out: PathBuf,
    /// Per-request timeout in seconds
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS", allow_negative_numbers = true)]
    timeout_seconds: f64,
    /// YAML file listing tools that are safe to call: `safe_tools: [{name, arguments}]`
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Fail a server that does not speak this revision (only `2026-07-28` is accepted)
    #[arg(long, value_name = "REVISION")]
    require_era: Option<String>,
    /// Print nothing but errors on stderr
    #[arg(long)]
    quiet: bool,
    /// Print report.json on stdout
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct DemoArgs {
    /// Port on 127.0.0.1 (0 picks a free one; the URL is printed on stdout)
    #[arg(long, conflicts_with = "stdio")]
    port: Option<u16>,
    /// Serve over stdio instead of HTTP
    #[arg(long)]
    stdio: bool,
    /// Break one rule (a lowercase requirement id, e.g. h-4); repeatable
    #[arg(long = "fault", value_name = "ID")]
    faults: Vec<String>,
    /// Require `Authorization: Bearer TOKEN` on HTTP (and serve protected-resource metadata)
    #[arg(long, value_name = "TOKEN")]
    require_token: Option<String>,
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let code = if error.use_stderr() { exit_code::INVALID_INPUT } else { exit_code::PASSED };
            let _ = error.print();
            std::process::exit(code);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            std::process::exit(exit_code::ENVIRONMENT);
        }
    };
    let code = match cli.command {
        Command::Run(args) => runtime.block_on(Box::pin(run(args))),
        Command::DemoServer(args) => runtime.block_on(demo_server(args)),
        Command::Action(args) => runtime.block_on(Box::pin(mcp_eval::action::run(
            *args,
            &|name| std::env::var(name).ok(),
            Box::new(std::io::stdout()),
        ))),
    };
    runtime.shutdown_timeout(Duration::from_millis(200));
    std::process::exit(code);
}

fn input_error(message: &str) -> i32 {
    eprintln!("error: {message}");
    exit_code::INVALID_INPUT
}

async fn run(args: RunArgs) -> i32 {
    if !(args.timeout_seconds.is_finite() && args.timeout_seconds > 0.0 && args.timeout_seconds <= 3600.0) {
        return input_error(&format!(
            "invalid --timeout-seconds `{}`\n  hint: give a number of seconds greater than 0 and at most 3600, e.g. --timeout-seconds 10",
            args.timeout_seconds
        ));
    }
    let timeout = Duration::from_secs_f64(args.timeout_seconds);
    let mut layers = Vec::new();
    for part in args.layers.split(',').map(str::trim).filter(|part| !part.is_empty()) {
        match part.parse::<u8>() {
            Ok(layer @ 0..=3) => layers.push(layer),
            _ => {
                return input_error(&format!(
                    "invalid --layers `{}`: `{part}` is not a layer\n  hint: layers are 0 to 3, e.g. --layers 0",
                    args.layers
                ));
            }
        }
    }
    let headers = match mcp_eval::settings::parse_headers(&args.headers) {
        Ok(headers) => headers,
        Err(error) => return input_error(&error.to_string()),
    };
    let safe_tools = match &args.config {
        Some(path) => match mcp_eval::settings::load_config(path) {
            Ok(tools) => tools,
            Err(error) => return input_error(&error.to_string()),
        },
        None => Vec::new(),
    };
    let require_modern = match args.require_era.as_deref() {
        None => false,
        Some("2026-07-28") => true,
        Some(other) => {
            return input_error(&format!(
                "invalid --require-era `{other}`\n  hint: the only revision that can be required is 2026-07-28"
            ));
        }
    };
    if !args.headers.is_empty() && args.server_cmd.is_some() {
        return input_error(
            "--header applies to --server-url only\n  hint: pass credentials to a stdio server through its own environment or flags",
        );
    }
    let quiet = args.quiet;
    let mut _demo_task = None;
    let (target, label) = if args.demo {
        let listener = match tokio::net::TcpListener::bind("127.0.0.1:0").await {
            Ok(listener) => listener,
            Err(error) => {
                eprintln!("error: cannot start the demo server on 127.0.0.1: {error}");
                return exit_code::ENVIRONMENT;
            }
        };
        let url = match listener.local_addr() {
            Ok(address) => format!("http://{address}/mcp"),
            Err(error) => {
                eprintln!("error: cannot read the demo server's address: {error}");
                return exit_code::ENVIRONMENT;
            }
        };
        _demo_task = Some(tokio::spawn(demo::serve_http(listener, Arc::new(DemoConfig::default()))));
        (
            Target::Http(HttpSettings { url: url.clone(), extra_headers: headers.clone(), timeout }),
            format!("{url} (embedded demo server)"),
        )
    } else if let Some(url) = &args.server_url {
        let parsed = reqwest::Url::parse(url);
        let usable = parsed
            .as_ref()
            .is_ok_and(|parsed| matches!(parsed.scheme(), "http" | "https") && parsed.host_str().is_some());
        if !usable {
            let why = parsed.as_ref().err().map(|error| format!(" ({error})")).unwrap_or_default();
            return input_error(&format!(
                "invalid --server-url `{}`{why}\n  hint: give the full endpoint URL, e.g. http://127.0.0.1:8000/mcp",
                mcp_eval::settings::url_without_secrets(url)
            ));
        }
        (Target::Http(HttpSettings { url: url.clone(), extra_headers: headers.clone(), timeout }), url.clone())
    } else if let Some(command) = &args.server_cmd {
        if command.trim().is_empty() {
            return input_error(
                "--server-cmd is empty\n  hint: give the command that starts the stdio server, e.g. --server-cmd 'npx my-server --stdio'",
            );
        }
        (Target::Stdio { command: command.clone(), timeout }, command.clone())
    } else {
        return input_error(
            "no server to evaluate\n  hint: pass --server-url URL (Streamable HTTP), --server-cmd 'CMD ARGS' (stdio) or --demo",
        );
    };
    let settings = Settings {
        target,
        target_label: label,
        secrets: headers
            .iter()
            .map(|(_, value)| value.clone())
            .chain(args.server_url.as_deref().map(mcp_eval::settings::url_secrets).unwrap_or_default())
            .collect(),
        options: Options { safe_tools, require_modern },
        out_dir: args.out.clone(),
        layers: layers.clone(),
    };
    let progress = move |line: &str| {
        if !quiet {
            eprintln!("mcp-eval: {line}");
        }
    };
    if layers.iter().any(|layer| *layer > 0) {
        progress("layers 1-3 were requested but are not available in this version; running layer 0");
    }
    let evaluation = evaluate::evaluate(&settings, &progress).await;
    let counts = evaluation.report.counts();
    match &evaluation.written {
        Ok(files) => progress(&format!(
            "{} pass, {} fail, {} warn, {} not applicable, {} error; reports in {}",
            counts.pass,
            counts.fail,
            counts.warn,
            counts.not_applicable,
            counts.error,
            files.report_json.parent().map(|dir| dir.display().to_string()).unwrap_or_default()
        )),
        Err(error) => {
            eprintln!("error: {error}\n  hint: check that --out points to a writable directory with free space")
        }
    }
    if args.json {
        print!("{}", report::json::render(&evaluation.report));
    }
    if let Some(detail) = &evaluation.report.outcome_detail {
        if evaluation.exit_code == exit_code::UNREACHABLE {
            eprintln!("error: {detail}");
            if let Some(tail) = &evaluation.report.server.stderr_tail {
                let lines: Vec<&str> = tail.lines().rev().take(5).collect();
                eprintln!("  the server's stderr ended with:");
                for line in lines.into_iter().rev() {
                    eprintln!("    {line}");
                }
            }
        } else {
            progress(detail);
        }
    }
    evaluation.exit_code
}

async fn demo_server(args: DemoArgs) -> i32 {
    let mut faults = std::collections::BTreeSet::new();
    for fault in &args.faults {
        match demo::parse_fault(fault) {
            Ok(id) => {
                faults.insert(id);
            }
            Err(message) => return input_error(&format!("invalid --fault `{fault}`: {message}")),
        }
    }
    let config = Arc::new(DemoConfig { faults, bearer_token: args.require_token.clone() });
    if args.stdio {
        return match demo::serve_stdio(config).await {
            Ok(()) => exit_code::PASSED,
            Err(error) => {
                eprintln!("error: demo server: {error}");
                exit_code::ENVIRONMENT
            }
        };
    }
    let listener = match tokio::net::TcpListener::bind(("127.0.0.1", args.port.unwrap_or(0))).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("error: cannot listen on 127.0.0.1: {error}");
            return exit_code::ENVIRONMENT;
        }
    };
    match listener.local_addr() {
        Ok(address) => {
            println!("http://{address}/mcp");
            use std::io::Write;
            let _ = std::io::stdout().flush();
        }
        Err(error) => {
            eprintln!("error: {error}");
            return exit_code::ENVIRONMENT;
        }
    }
    tokio::select! {
        result = demo::serve_http(listener, config) => match result {
            Ok(()) => exit_code::PASSED,
            Err(error) => {
                eprintln!("error: demo server: {error}");
                exit_code::ENVIRONMENT
            }
        },
        _ = tokio::signal::ctrl_c() => exit_code::PASSED,
    }
}
