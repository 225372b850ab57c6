//! The `mcp-eval` binary: parses the command line ([`mcp_eval::cli`]), runs the subcommand on a
//! two-thread runtime, and exits with the status decided by [`mcp_eval::gate`].

#![allow(clippy::print_stderr, reason = "the binary is where output is printed")]

use std::time::Duration;

use clap::Parser;
use mcp_eval::cli::{self, Cli, Command};
use mcp_eval::gate::ExitStatus;

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let status = if error.use_stderr() { ExitStatus::InvalidInput } else { ExitStatus::Passed };
            let _ = error.print();
            std::process::exit(status.code());
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime\n  Caused by: {error}");
            std::process::exit(ExitStatus::Environment.code());
        }
    };
    let status = match cli.command {
        Command::Run(args) => runtime.block_on(Box::pin(cli::run(*args))),
        Command::DemoServer(args) => runtime.block_on(cli::demo_server(args)),
        Command::Action(args) => runtime.block_on(Box::pin(mcp_eval::action::run(
            *args,
            &|name| std::env::var(name).ok(),
            Box::new(std::io::stdout()),
        ))),
    };
    runtime.shutdown_timeout(Duration::from_millis(200));
    std::process::exit(status.code());
}
