//! Layer 3's W3C trace context (SEP-414): one trace per trial, a root span for the trial and
//! one child span per model call and per tool call, all sampled (flags `01`). A tool call's
//! span is the parent the server reads in the request's `_meta.traceparent`, so a server that
//! traces joins its own spans to ours.
//!
//! [`Spans`] is the run's collector: the trial wrapper [`super::traced::Traced`] opens and
//! closes spans through a trial's [`TrialTrace`]; finished spans are kept (at most [`MAX_SPANS`], the rest
//! counted as dropped) until the evaluation exports them once, at its end
//! ([`super::otlp::export`]). A span carries names, ids, counts and outcomes only: never a
//! key, a header value, a tool result, arguments or model text.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::SystemTime;

use crate::events::TrialRef;
use crate::mcp::jsonrpc::TraceMeta;

/// The most spans one run keeps for export (about 300 bytes each: some 30 MB at the bound);
/// later ones are counted in [`Spans::dropped`].
pub(crate) const MAX_SPANS: usize = 100_000;

/// The `traceparent` flags of every span: sampled.
const SAMPLED: &str = "01";

/// What kind of work a span stands for (OpenTelemetry's span kinds, the two we use).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The trial: work inside mcp-eval.
    Internal,
    /// A request to the server or to a model provider.
    Client,
}

/// An attribute value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// Text.
    Text(String),
    /// A whole number.
    Int(i64),
}

impl From<&str> for Value {
    fn from(text: &str) -> Self {
        Value::Text(text.to_owned())
    }
}

impl From<String> for Value {
    fn from(text: String) -> Self {
        Value::Text(text)
    }
}

impl From<u64> for Value {
    fn from(number: u64) -> Self {
        Value::Int(i64::try_from(number).unwrap_or(i64::MAX))
    }
}

impl From<u32> for Value {
    fn from(number: u32) -> Self {
        Value::Int(i64::from(number))
    }
}

impl From<usize> for Value {
    fn from(number: usize) -> Self {
        Value::Int(i64::try_from(number).unwrap_or(i64::MAX))
    }
}

/// A span's attributes: OpenTelemetry semantic-convention keys (`gen_ai.*`, `mcp.*`) and
/// ours (`mcp_eval.*`).
pub(crate) type Attributes = Vec<(&'static str, Value)>;

/// A finished span, ready to export.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FinishedSpan {
    /// The trace (the trial's).
    pub trace_id: [u8; 16],
    /// The span.
    pub span_id: [u8; 8],
    /// The parent span (`None`: the trial's root span).
    pub parent: Option<[u8; 8]>,
    /// The name: `mcp-eval trial`, `tools/call TOOL`, `chat MODEL`.
    pub name: String,
    /// Its kind.
    pub kind: Kind,
    /// When it started.
    pub start: SystemTime,
    /// When it ended.
    pub end: SystemTime,
    /// Its attributes.
    pub attributes: Attributes,
    /// The error status's description, when the work failed (an outcome name, never a message
    /// from the server or the provider).
    pub error: Option<String>,
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The run's spans: ids are drawn here, finished spans kept here until the export.
#[derive(Debug)]
pub(crate) struct Spans {
    /// `tracestate` sent with every request (`--trace-state`), when given.
    tracestate: Option<String>,
    /// `baggage` sent with every request (`--baggage`), when given.
    baggage: Option<String>,
    /// Finished spans, in the order they ended.
    finished: Mutex<Vec<FinishedSpan>>,
    /// Spans past [`MAX_SPANS`], not kept.
    dropped: AtomicUsize,
    /// Traces begun (one per trial).
    traces: AtomicUsize,
    /// Where ids come from.
    ids: Mutex<fastrand::Rng>,
}

impl Spans {
    /// A collector whose requests also carry `tracestate` and `baggage` when given.
    pub(crate) fn new(tracestate: Option<String>, baggage: Option<String>) -> Self {
        Self::with_rng(tracestate, baggage, fastrand::Rng::new())
    }

    /// A collector whose ids come from `rng` (tests: a seed gives the same ids).
    pub(crate) fn with_rng(tracestate: Option<String>, baggage: Option<String>, rng: fastrand::Rng) -> Self {
        Self {
            tracestate,
            baggage,
            finished: Mutex::new(Vec::new()),
            dropped: AtomicUsize::new(0),
            traces: AtomicUsize::new(0),
            ids: Mutex::new(rng),
        }
    }

    /// Random bytes, never all zero (W3C: an all-zero trace or span id is invalid).
    fn id<const N: usize>(&self) -> [u8; N] {
        let mut rng = crate::mcp::sync::lock(&self.ids);
        loop {
            let mut bytes = [0u8; N];
            rng.fill(&mut bytes);
            if bytes.iter().any(|byte| *byte != 0) {
                return bytes;
            }
        }
    }

    /// Begins the trace of `trial` (of `layer`, 1 or 2): its root span starts now.
    pub(crate) fn trial(&self, trial: &TrialRef, layer: u8) -> TrialTrace<'_> {
        self.traces.fetch_add(1, Ordering::Relaxed);
        TrialTrace {
            spans: self,
            trace_id: self.id(),
            root: self.id(),
            start: SystemTime::now(),
            trial: trial.clone(),
            layer,
        }
    }

    fn push(&self, span: FinishedSpan) {
        let mut finished = crate::mcp::sync::lock(&self.finished);
        if finished.len() < MAX_SPANS {
            finished.push(span);
        } else {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Takes the finished spans out (the export), leaving none.
    pub(crate) fn take(&self) -> Vec<FinishedSpan> {
        std::mem::take(&mut *crate::mcp::sync::lock(&self.finished))
    }

    /// Traces begun.
    pub(crate) fn traces(&self) -> usize {
        self.traces.load(Ordering::Relaxed)
    }

    /// Spans finished past [`MAX_SPANS`], not kept.
    pub(crate) fn dropped(&self) -> usize {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Whether requests carry `tracestate` and `baggage`.
    pub(crate) fn carries(&self) -> (bool, bool) {
        (self.tracestate.is_some(), self.baggage.is_some())
    }
}

/// A span begun and not yet ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OpenSpan {
    /// Its id.
    pub id: [u8; 8],
    start: SystemTime,
}

/// The trace of one trial: its root span, and the spans of its calls beneath it.
#[derive(Debug)]
pub(crate) struct TrialTrace<'a> {
    spans: &'a Spans,
    trace_id: [u8; 16],
    root: [u8; 8],
    start: SystemTime,
    trial: TrialRef,
    layer: u8,
}

impl TrialTrace<'_> {
    /// The trace id, 32 lower-case hex digits (what the report and the events name).
    pub(crate) fn trace_id(&self) -> String {
        hex(&self.trace_id)
    }

    /// Begins a span beneath the trial's root.
    pub(crate) fn open(&self) -> OpenSpan {
        OpenSpan { id: self.spans.id(), start: SystemTime::now() }
    }

    /// The `_meta` trace context of a request made inside `span`: `span` is its parent.
    pub(crate) fn meta(&self, span: &OpenSpan) -> TraceMeta {
        TraceMeta {
            traceparent: format!("00-{}-{}-{SAMPLED}", hex(&self.trace_id), hex(&span.id)),
            tracestate: self.spans.tracestate.clone(),
            baggage: self.spans.baggage.clone(),
        }
    }

    /// Ends `span` now (a client call named `name`), with an error status when `error` is set.
    pub(crate) fn close(&self, span: OpenSpan, name: String, attributes: Attributes, error: Option<String>) {
        self.spans.push(FinishedSpan {
            trace_id: self.trace_id,
            span_id: span.id,
            parent: Some(self.root),
            name,
            kind: Kind::Client,
            start: span.start,
            end: SystemTime::now().max(span.start),
            attributes,
            error,
        });
    }

    /// Ends the trial's root span now, with how the trial ended (`TrialEnding::as_str`); an
    /// ending other than `answered` is its error status.
    pub(crate) fn end(&self, ending: &str) {
        let attributes = vec![
            ("mcp_eval.case.id", Value::from(self.trial.case.as_str())),
            ("mcp_eval.model", Value::from(self.trial.model.as_str())),
            ("mcp_eval.trial", Value::from(self.trial.trial)),
            ("mcp_eval.layer", Value::from(u64::from(self.layer))),
            ("mcp_eval.trial.ending", Value::from(ending)),
        ];
        self.spans.push(FinishedSpan {
            trace_id: self.trace_id,
            span_id: self.root,
            parent: None,
            name: "mcp-eval trial".into(),
            kind: Kind::Internal,
            start: self.start,
            end: SystemTime::now().max(self.start),
            attributes,
            error: (ending != "answer").then(|| ending.to_owned()),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial() -> TrialRef {
        TrialRef { case: "weather".into(), model: "openai:m".into(), trial: 3 }
    }

    #[test]
    fn a_trials_calls_share_its_trace_and_hang_under_its_root_span() {
        let spans = Spans::with_rng(None, None, fastrand::Rng::with_seed(7));
        let trace = spans.trial(&trial(), 1);
        let call = trace.open();
        let meta = trace.meta(&call);
        trace.close(call, "tools/call get_weather".into(), vec![("gen_ai.tool.name", "get_weather".into())], None);
        let id = trace.trace_id();
        trace.end("answer");
        let finished = spans.take();
        assert_eq!(finished.len(), 2);
        let (tool, root) = (&finished[0], &finished[1]);
        assert_eq!(
            meta.traceparent,
            format!("00-{id}-{}-01", hex(&tool.span_id)),
            "the call's span is the parent sent"
        );
        assert_eq!((tool.trace_id, tool.parent), (root.trace_id, Some(root.span_id)));
        assert_eq!((root.parent, root.kind, tool.kind), (None, Kind::Internal, Kind::Client));
        assert_eq!(root.error, None, "an answered trial is not an error");
        assert!(root.start <= tool.start && tool.end <= root.end);
        assert_eq!(spans.traces(), 1);
    }

    #[test]
    fn a_traceparent_has_the_w3c_shape_and_never_an_all_zero_id() {
        let spans = Spans::new(Some("vendor=abc".into()), Some("team=mcp".into()));
        for _ in 0..200 {
            let trace = spans.trial(&trial(), 2);
            let meta = trace.meta(&trace.open());
            let parts: Vec<&str> = meta.traceparent.split('-').collect();
            assert_eq!(parts.len(), 4, "{}", meta.traceparent);
            assert_eq!((parts[0], parts[1].len(), parts[2].len(), parts[3]), ("00", 32, 16, "01"));
            assert!(
                parts[1..3]
                    .iter()
                    .all(|part| part.bytes().all(|byte| byte.is_ascii_hexdigit() && !byte.is_ascii_uppercase()))
            );
            assert!(parts[1].bytes().any(|byte| byte != b'0') && parts[2].bytes().any(|byte| byte != b'0'));
            assert_eq!((meta.tracestate.as_deref(), meta.baggage.as_deref()), (Some("vendor=abc"), Some("team=mcp")));
        }
    }

    #[test]
    fn the_trace_meta_goes_into_params_meta_beside_what_is_there() {
        let meta = TraceMeta { traceparent: "00-a-b-01".into(), tracestate: None, baggage: Some("k=v".into()) };
        let mut params = serde_json::json!({"name": "t", "_meta": {"io.modelcontextprotocol/protocolVersion": "v"}});
        meta.insert_into(&mut params);
        assert_eq!(
            params["_meta"],
            serde_json::json!({"io.modelcontextprotocol/protocolVersion": "v", "traceparent": "00-a-b-01", "baggage": "k=v"})
        );
        let mut bare = serde_json::json!({"name": "t"});
        meta.insert_into(&mut bare);
        assert_eq!(bare["_meta"]["traceparent"], "00-a-b-01");
        assert!(bare["_meta"].get("tracestate").is_none(), "not given, not sent");
    }

    #[test]
    fn spans_past_the_bound_are_counted_not_kept() {
        let spans = Spans::new(None, None);
        let trace = spans.trial(&trial(), 1);
        for _ in 0..MAX_SPANS + 5 {
            trace.close(trace.open(), "chat m".into(), Vec::new(), None);
        }
        assert_eq!((spans.take().len(), spans.dropped()), (MAX_SPANS, 5));
    }

    #[test]
    fn a_trial_that_did_not_answer_ends_its_root_span_in_error() {
        let spans = Spans::new(None, None);
        spans.trial(&trial(), 1).end("server_error");
        let root = spans.take().remove(0);
        assert_eq!(root.error.as_deref(), Some("server_error"));
        assert!(root.attributes.contains(&("mcp_eval.trial.ending", Value::from("server_error"))));
    }
}
