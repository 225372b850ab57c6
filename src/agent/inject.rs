//! Layer 2's fault layer: a [`ToolExecutor`] decorator that answers one chosen tool call itself
//! instead of sending it ([`FaultTools`]), with the text a host shows its model for that failure
//! ([`fault_text`]). The call never reaches the server, so no tool runs twice and nothing the
//! model did after a fault is done for real by the fault itself.
//!
//! It wraps the telemetry decorator ([`super::observe::ObservedTools`]), so the calls it lets
//! through are timed as the server's, and it reports the calls it answers as events of its own
//! (`sent: false`, `injected: true`). The agent loop above it is the same on HTTP and stdio, so
//! each fault's text says what a host sees on both.

use std::sync::Mutex;

use serde_json::Value;

use super::input::Session;
use super::observe::Sink;
use super::tools::{CallSite, ToolExecutor, ToolOutcome};
use crate::events::RunEvent;
use crate::golden::{FaultEntry, FaultKind};
use crate::mcp::transport::BoxFuture;

/// The text the model reads for `fault` on a call of `tool`, whose per-call limit is
/// `call_timeout_ms` milliseconds. Documented in `docs/layer-2.md`; a test keeps them equal.
pub(crate) fn fault_text(fault: FaultKind, tool: &str, call_timeout_ms: u64) -> String {
    let seconds = call_timeout_ms.div_ceil(1000).max(1);
    match fault {
        FaultKind::Http500 => format!(
            "Error calling tool `{tool}`: the MCP server answered HTTP 500 Internal Server Error (over stdio, the same failure is a JSON-RPC error -32603, internal error). No result was returned."
        ),
        FaultKind::Timeout => format!(
            "Error calling tool `{tool}`: the request timed out after {seconds} s without an answer from the MCP server (over HTTP no response arrived; over stdio no reply line came). No result was returned."
        ),
        FaultKind::Malformed => format!(
            "Error calling tool `{tool}`: the MCP server's response could not be read: it is not valid JSON-RPC (unexpected end of input; over stdio, the reply line was cut short). No result was returned."
        ),
        FaultKind::ExpiredToken => format!(
            "Error calling tool `{tool}`: the MCP server answered HTTP 401 Unauthorized, WWW-Authenticate: Bearer error=\"invalid_token\", error_description=\"the access token expired\" (over stdio, the server refused the call's credentials). No result was returned."
        ),
        FaultKind::StreamCut => format!(
            "Error calling tool `{tool}`: the response stream from the MCP server ended before its final message (over HTTP the event stream closed early; over stdio the server's output closed mid-reply). No result was returned."
        ),
        FaultKind::ToolError => {
            format!("Tool `{tool}` reported an error (isError: true): the service behind this tool is unavailable.")
        }
    }
}

/// A tool executor that answers the `fault.on_call`-th call of `fault.tool` of one trial with
/// [`fault_text`] and passes every other call to `inner`. One per trial: it counts that trial's
/// calls.
pub(crate) struct FaultTools<'a> {
    /// The executor wrapped (the telemetry decorator around the real tools).
    pub inner: &'a dyn ToolExecutor,
    /// The fault and the call it replaces.
    pub fault: &'a FaultEntry,
    /// The per-call limit the `timeout` fault's text names, in milliseconds.
    pub call_timeout_ms: u64,
    /// Where the injected calls' events go.
    pub events: Sink<'a>,
    /// The trial's calls of `fault.tool` so far.
    pub seen: Mutex<usize>,
}

impl<'a> FaultTools<'a> {
    /// The fault layer of one trial.
    pub(crate) fn new(
        inner: &'a dyn ToolExecutor,
        fault: &'a FaultEntry,
        call_timeout_ms: u64,
        events: Sink<'a>,
    ) -> Self {
        Self { inner, fault, call_timeout_ms, events, seen: Mutex::new(0) }
    }

    /// True when this call of `name` is the one to replace (counting it).
    fn replaces(&self, name: &str) -> bool {
        if name != self.fault.tool {
            return false;
        }
        let mut seen = crate::mcp::sync::lock(&self.seen);
        *seen += 1;
        *seen == self.fault.on_call
    }
}

impl ToolExecutor for FaultTools<'_> {
    fn call<'a>(
        &'a self,
        at: CallSite<'a>,
        name: &'a str,
        arguments: &'a Value,
        inputs: Option<&'a mut Session<'_>>,
    ) -> BoxFuture<'a, ToolOutcome> {
        if !self.replaces(name) {
            return self.inner.call(at, name, arguments, inputs);
        }
        Box::pin(async move {
            (self.events)(&RunEvent::ToolCallStarted { trial: at.trial.clone(), turn: at.turn, tool: name.to_owned() });
            (self.events)(&RunEvent::ToolCallFinished {
                trial: at.trial.clone(),
                turn: at.turn,
                tool: name.to_owned(),
                outcome: "injected",
                sent: false,
                injected: true,
                latency_ms: 0,
                server_bytes: None,
            });
            ToolOutcome::Injected {
                text: fault_text(self.fault.fault, name, self.call_timeout_ms),
                label: self.fault.label(),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::json;

    use super::*;
    use crate::events::TrialRef;

    /// Counts the calls that reach it and answers each with `ok`.
    struct Server(AtomicUsize);

    impl ToolExecutor for Server {
        fn call<'a>(
            &'a self,
            _at: CallSite<'a>,
            _name: &'a str,
            _arguments: &'a Value,
            _inputs: Option<&'a mut Session<'_>>,
        ) -> BoxFuture<'a, ToolOutcome> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Box::pin(async {
                ToolOutcome::Result {
                    text: "ok".into(),
                    is_error: false,
                    latency_ms: 1,
                    note: None,
                    server_bytes: None,
                    rounds: Vec::new(),
                }
            })
        }
    }

    #[tokio::test]
    async fn the_chosen_call_is_answered_by_the_fault_and_never_reaches_the_server() {
        let server = Server(AtomicUsize::new(0));
        let fault = FaultEntry { tool: "search".into(), fault: FaultKind::Http500, on_call: 2 };
        let seen = Mutex::new(Vec::new());
        let sink = |event: &RunEvent| {
            if let RunEvent::ToolCallFinished { sent, injected, .. } = event {
                seen.lock().expect("lock").push((*sent, *injected));
            }
        };
        let tools = FaultTools::new(&server, &fault, 30_000, &sink);
        let trial = TrialRef { case: "c".into(), model: "m".into(), trial: 1 };
        let at = CallSite { trial: &trial, turn: 1 };
        let args = json!({});
        let first = tools.call(at, "search", &args, None).await;
        let other = tools.call(at, "fetch", &args, None).await;
        let second = tools.call(at, "search", &args, None).await;
        let third = tools.call(at, "search", &args, None).await;
        assert!(matches!(first, ToolOutcome::Result { .. }));
        assert!(matches!(other, ToolOutcome::Result { .. }));
        match second {
            ToolOutcome::Injected { text, label } => {
                assert!(text.contains("HTTP 500"), "{text}");
                assert_eq!(label, "http-500@search#2");
            }
            other => panic!("the second call of search is injected: {other:?}"),
        }
        assert!(matches!(third, ToolOutcome::Result { .. }));
        assert_eq!(server.0.load(Ordering::SeqCst), 3, "the injected call is not sent");
        assert_eq!(*seen.lock().expect("lock"), vec![(false, true)], "only the injected call is reported here");
    }

    #[test]
    fn the_layer_2_page_shows_every_fault_text_as_the_model_reads_it() {
        let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/layer-2.md")).expect("docs");
        for fault in FaultKind::ALL {
            let text = fault_text(fault, "TOOL", 30_000);
            assert!(page.contains(&text), "docs/layer-2.md lacks the text of {}: {text}", fault.as_str());
        }
    }

    #[test]
    fn every_fault_text_names_the_tool_and_says_no_result_came_back_or_the_error() {
        for fault in FaultKind::ALL {
            let text = fault_text(fault, "lookup", 30_000);
            assert!(text.contains("`lookup`"), "{text}");
        }
        assert!(fault_text(FaultKind::Timeout, "t", 30_000).contains("30 s"));
        assert!(fault_text(FaultKind::ExpiredToken, "t", 1).contains("error=\"invalid_token\""));
        assert!(fault_text(FaultKind::ToolError, "t", 1).contains("isError: true"));
    }
}
