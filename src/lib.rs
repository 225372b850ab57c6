//! mcp-eval: evaluates MCP servers. This library holds everything the `mcp-eval` binary does;
//! the binary (`src/main.rs`) only exits with the code [`cli::main`] returns.
//!
//! Code map: [`cli`] defines the command line and the `run` front end, [`settings`] resolves
//! every setting from flags, Action inputs, the config file and defaults, [`evaluate`] runs one
//! evaluation end to end and emits [`events::RunEvent`]s, [`verdict`] decides the verdict and the
//! exit status (the product's one exit table), [`error`] renders expected failures; [`mcp`] is our
//! MCP client (the wire), [`conformance`] is layer 0 (requirements, probes, grading), [`report`]
//! holds the run report, its wire format and renderers, [`baseline`] the delta against a previous
//! run; [`providers`] is the seam to the models layer 1 asks (OpenAI Chat Completions first);
//! [`merge`] joins the reports of shards; [`migrate`] scans a repository for the 2025-era
//! protocol it still uses (`migrate-scan`); [`demo`] is the embedded demo/fixture server; [`action`] is the GitHub Action entrypoint
//! and [`github`] its GitHub client and pull request comment.

// The public surface is what the binary, the integration tests and the benchmarks use: the
// process entry point, the report format (read back by baselines), and a few test hooks.
// Everything else is crate-private so the compiler finds dead code (`unreachable_pub`).
pub(crate) mod action;
pub(crate) mod agent;
pub(crate) mod atomic;
pub(crate) mod authoring;
pub(crate) mod baseline;
pub(crate) mod cache;
pub(crate) mod calibration;
pub mod cli;
pub(crate) mod conformance;
pub(crate) mod demo;
pub(crate) mod error;
pub(crate) mod evaluate;
pub(crate) mod events;
pub(crate) mod faults;
// The fuzz targets' entry points (fuzz/): compiled for them and for the corpus replay test.
#[cfg(any(fuzzing, test))]
pub mod fuzzing;
pub(crate) mod github;
pub(crate) mod golden;
pub(crate) mod jcs;
pub(crate) mod mcp;
pub(crate) mod merge;
pub(crate) mod migrate;
pub(crate) mod providers;
pub mod report;
pub(crate) mod scoring;
pub(crate) mod settings;
pub(crate) mod suggest;
pub(crate) mod telemetry;
pub(crate) mod text;
pub(crate) mod trials;
pub(crate) mod verdict;

pub use demo::DEMO_TOKEN;
pub use evaluate::PANIC_FOR_TESTS_VAR;
pub use mcp::sse;

#[cfg(test)]
mod tidy;
