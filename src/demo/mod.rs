//! The embedded demo server: a small, correct MCP 2026-07-28 server (modern only: no
//! `initialize`, no sessions) that doubles as the fixture server for our own tests.
//!
//! Every rule of the conformance checklist that the server can break on purpose is a *break*,
//! named by the lowercase checklist id (`h-4`, `m-7`, …) and listed in [`BREAKS`]. With no break
//! set the server follows the spec; with one set it breaks exactly that rule.
//!
//! Layout: [`core`] holds the whole protocol as a pure function from one parsed message (plus,
//! on HTTP, the request headers) to a [`core::Reply`]; [`catalog`] holds the tools, prompts and
//! resources; [`protocol`] holds the types both share (request context, handler outcome, errors,
//! server state, wire constants), so `core` depends on `catalog` and `protocol`, and `catalog` on
//! `protocol` only; [`http`] and [`stdio`] are thin front ends that only move bytes and honour
//! timing and cancellation. This module is *not* the CLI: wiring `mcp-eval demo-server` lives elsewhere.

pub(crate) mod breaks;
pub(crate) mod catalog;
pub(crate) mod chaos;
pub(crate) mod core;
pub(crate) mod http;
pub(crate) mod later;
pub(crate) mod model;
pub(crate) mod protocol;
pub(crate) mod request_state;
pub(crate) mod seeded;
pub(crate) mod stdio;

use std::collections::BTreeSet;

pub(crate) use breaks::parse_break;
#[cfg(test)]
pub(crate) use catalog::BIG_RESULT_BYTES;
pub(crate) use http::serve_http;
pub(crate) use stdio::serve_stdio;

/// How a demo server instance behaves: which breaks are switched on.
#[derive(Debug, Clone, Default)]
pub(crate) struct DemoConfig {
    /// Break ids (lowercase checklist ids, e.g. `"h-4"`), each validated by [`parse_break`].
    pub breaks: BTreeSet<String>,
    /// When set, HTTP requests need `Authorization: Bearer <token>` (the A-* rows); an `a-*`
    /// break switches this on with [`DEMO_TOKEN`].
    pub bearer_token: Option<String>,
    /// When set, every `tools/call` received is appended to this file as one JSON line
    /// (`{"name": …, "arguments": …}`): what the tests read to prove a call never reached the
    /// server (`--calls-log`, hidden).
    pub calls_log: Option<std::path::PathBuf>,
    /// When set, a seeded share of `tools/call`s fail (`--fail-rate`, `--seed`, hidden: the
    /// soak's fixture, see [`seeded`]).
    pub seeded_failures: Option<std::sync::Arc<seeded::SeededFailures>>,
}

/// The token an `a-*` break makes the demo require.
pub const DEMO_TOKEN: &str = "mcp-eval-demo-token";

impl DemoConfig {
    /// A configuration with the given breaks switched on (ids are not validated here; tests).
    #[cfg(test)]
    pub(crate) fn with_breaks<I, S>(breaks: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        DemoConfig {
            breaks: breaks.into_iter().map(Into::into).collect(),
            bearer_token: None,
            calls_log: None,
            seeded_failures: None,
        }
    }

    /// The bearer token HTTP requests need, if any.
    pub(crate) fn token(&self) -> Option<&str> {
        self.bearer_token.as_deref().or_else(|| self.breaks.iter().any(|id| id.starts_with("a-")).then_some(DEMO_TOKEN))
    }

    /// Whether the break `id` (lowercase, e.g. `"d-2"`) is switched on.
    pub(crate) fn has(&self, id: &str) -> bool {
        self.breaks.contains(id)
    }
}
