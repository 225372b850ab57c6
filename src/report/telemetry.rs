//! Layer 3's part of the report: `telemetry` in `report.json` — per tool the server's latency
//! (count, p50, p95, max), its error rates and result sizes; per model call its latency and
//! tokens; tokens and cost attributed to tools, cases, trials and models; the tool-surface
//! footprint; selection accuracy per tool and the confusion pairs. Built from the event stream
//! by `crate::telemetry`; the methods it uses are stated in the section itself
//! ([`PERCENTILE_METHOD`], [`TOKEN_COUNTS`], [`ATTRIBUTION`]) and in `docs/layer-3.md`.

use serde::{Deserialize, Serialize};

/// How p50 and p95 are computed, as the report states it.
pub const PERCENTILE_METHOD: &str =
    "nearest rank: the p-th percentile of n samples is the ceil(p/100 * n)-th smallest; max is the largest";

/// How token counts are normalised, as the report states it.
pub const TOKEN_COUNTS: &str = "input_tokens: read and not from the prompt cache (cache writes included; \
everything read when the provider reported no cache reads); \
cache_read_tokens: read from the cache; cache_write_tokens: written to the cache (part of input_tokens); \
output_tokens: written, reasoning included; reasoning_tokens: the part of output the wire reports apart \
(null on Anthropic); null: the provider did not report it, never 0; a sum with an unknown part is null; \
unknown_calls counts the calls that lacked input or output";

/// How tokens and cost are attributed, as the report states it.
pub const ATTRIBUTION: &str = "a model turn's tokens and cost go to the tool calls it produced, split \
equally among them, or to the answer when it produced none; a tool result's tokens are counted once, \
as input of the next turn; the judge's calls go to the case they judged, apart";

/// Token counts of one call, normalised the same way on both wires (`None`: the provider did
/// not report it, never 0).
///
/// `input_tokens` is everything read, cache reads and writes included (OpenAI's
/// `prompt_tokens`; Anthropic's `input_tokens` + `cache_creation_input_tokens` +
/// `cache_read_input_tokens`); the cache counts are parts of it. `output_tokens` is everything
/// written, reasoning included; `reasoning_tokens` is the part of it the wire reports apart
/// (OpenAI's `completion_tokens_details.reasoning_tokens`; never on Anthropic).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens read (the prompt, tools included).
    pub input_tokens: Option<u64>,
    /// Tokens written (reasoning included).
    pub output_tokens: Option<u64>,
    /// Of `input_tokens`, those read from the provider's prompt cache.
    pub cache_read_tokens: Option<u64>,
    /// Of `input_tokens`, those written to the provider's prompt cache.
    pub cache_write_tokens: Option<u64>,
    /// Of `output_tokens`, the reasoning the wire reports apart.
    pub reasoning_tokens: Option<u64>,
    /// The cost the provider reported for the call in USD (OpenRouter's `usage.cost`), kept
    /// beside ours.
    pub reported_cost_usd: Option<f64>,
}

/// `telemetry`: what layer 3 measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TelemetrySection {
    /// [`PERCENTILE_METHOD`].
    pub percentiles: String,
    /// [`TOKEN_COUNTS`].
    pub token_counts: String,
    /// [`ATTRIBUTION`].
    pub attribution: String,
    /// Why layer 3 measured nothing, when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_run: Option<String>,
    /// Notes (trials reused from the verdict cache are not measured, an unpriced model, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The price table costs come from (`None`: no table was given; every cost is unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_table: Option<PriceTableInfo>,
    /// Everything this run's model calls took, every role.
    pub total: Spend,
    /// Of the answered model calls, those answered from cassettes (replay): no model was
    /// called for them, so their part of `total` is what the recorded tokens would cost at the
    /// price table, not money spent. Absent when 0.
    #[serde(default, skip_serializing_if = "is_zero_calls")]
    pub replayed_model_calls: usize,
    /// What the providers' prompt caches saved, in USD: the priced calls' cost with their cache
    /// reads priced as fresh input, minus their cost (`None` without a price table or when no
    /// call was priced).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache_saved_usd: Option<f64>,
    /// Case × model pairs whose verdicts the verdict cache reused: their trials made no model
    /// call (what the cache saved in calls).
    #[serde(default)]
    pub verdicts_reused: usize,
    /// Per tool, every model and layer together, in name order.
    pub tools: Vec<ToolTelemetry>,
    /// Per model asked (the models under test, then the judge), in the order they were asked.
    pub models: Vec<ModelTelemetry>,
    /// Per case × model, in case order.
    pub cases: Vec<CaseTelemetry>,
    /// Per trial.
    pub trials: Vec<TrialTelemetry>,
    /// Every model call, in the order they finished.
    pub model_calls: Vec<ModelCallTelemetry>,
    /// The tokens of each tool definition as each model's provider receives it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub footprint: Vec<FootprintEntry>,
    /// The trace context layer 3 sent and the spans it exported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSection>,
    /// This run's figures against the layer-3 figures of the stored baseline (`None`: no stored
    /// run holds any). Shown, never enforced: no delta changes the verdict or the exit status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deltas: Option<TelemetryDeltas>,
    /// The history of green runs (`trends.json` in the cache directory) and this run, for the
    /// charts (`None`: no cache directory, or layer 3 measured nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trends: Option<TrendsSection>,
}

/// `telemetry.trace`: the W3C trace context sent with every request of layers 1 and 2 (one
/// trace per trial) and the OTLP export of its spans.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceSection {
    /// Traces begun: one per trial run (a trial tried again is traced again).
    pub traces: usize,
    /// Spans finished and kept: each trial's, and one per model call and per tool call sent.
    pub spans: usize,
    /// Spans past the bound of 100,000, not kept (not exported).
    #[serde(default)]
    pub dropped: usize,
    /// `tools/call` requests that carried a `traceparent` (their spans); absent in reports
    /// written before it was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<usize>,
    /// Requests also carried the `tracestate` given (`--trace-state`).
    #[serde(default)]
    pub tracestate: bool,
    /// Requests also carried the `baggage` given (`--baggage`).
    #[serde(default)]
    pub baggage: bool,
    /// The export (`None`: no OTLP endpoint was given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub export: Option<TraceExport>,
}

/// `telemetry.trace.export`: the OTLP/HTTP export of the spans.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceExport {
    /// The traces endpoint (secrets removed).
    pub endpoint: String,
    /// Spans the collector accepted.
    pub exported: usize,
    /// Requests made or tried (batches of 512 spans).
    pub requests: usize,
    /// How long the export took, in milliseconds (at most its timeout).
    pub duration_ms: u64,
    /// Why spans were not delivered (an unreachable or refusing collector): a warning, never a
    /// failure of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// The rule that flags a tool's p95, as the report states it.
pub const P95_RISE_RULE: &str = "a tool's p95 rose when it is more than 1.5 times the newest stored p95 and \
the rise is more than the spread (max - min) of the stored p95s (0 with one stored run); shown, never enforced";

/// `telemetry.deltas`: this run against the layer-3 figures of the stored baseline.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TelemetryDeltas {
    /// Where the stored figures come from (the stored runs, or a `--baseline` report).
    pub baseline: String,
    /// The stored runs with layer-3 figures (1 to 3).
    pub stored_runs: usize,
    /// When the newest of them was measured (RFC 3339).
    pub measured_at: String,
    /// [`P95_RISE_RULE`].
    pub rule: String,
    /// Per tool measured now and in a stored run: flagged ones first, then by Δ, largest first.
    pub tools: Vec<ToolDelta>,
    /// Per case × model (and layer) measured now and in the newest stored run that has it, per
    /// trial; the largest Δ cost first, then the largest Δ tokens.
    pub cases: Vec<CaseDelta>,
}

/// One tool's p95 against the stored ones.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolDelta {
    /// The MCP tool name.
    pub tool: String,
    /// This run's p95, ms.
    pub p95_ms: u64,
    /// The newest stored p95, ms.
    pub baseline_p95_ms: u64,
    /// `p95_ms - baseline_p95_ms` (negative: faster).
    pub delta_ms: i64,
    /// max - min of the stored p95s, ms (0 with one).
    pub spread_ms: u64,
    /// The stored p95s the spread is taken over.
    pub stored: usize,
    /// [`P95_RISE_RULE`] holds: more than 1.5 × `baseline_p95_ms` and `delta_ms` > `spread_ms`.
    pub rose: bool,
}

/// One case × model's tokens and cost per trial, now and in the baseline.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CaseDelta {
    /// The case id (layer 2: the variant id).
    pub case: String,
    /// `PROVIDER:MODEL` under test.
    pub model: String,
    /// 1 or 2.
    pub layer: u8,
    /// Trials measured now.
    pub trials: usize,
    /// Trials measured in the stored run.
    pub baseline_trials: usize,
    /// Input tokens (read, not from the cache) per trial.
    pub input_tokens: Change,
    /// Output tokens per trial.
    pub output_tokens: Change,
    /// Cost per trial, USD.
    pub cost_usd: Change,
}

/// A figure now, in the baseline, and their difference (`None`: unknown; the difference is
/// unknown when either side is).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// This run's.
    pub now: Option<f64>,
    /// The stored run's.
    pub baseline: Option<f64>,
    /// `now - baseline`.
    pub delta: Option<f64>,
}

impl Change {
    /// `now` against `baseline`; the difference only when both are known.
    pub fn of(now: Option<f64>, baseline: Option<f64>) -> Self {
        Change { now, baseline, delta: now.zip(baseline).map(|(now, before)| now - before) }
    }
}

/// `telemetry.trends`: the green runs kept in `trends.json`, oldest first, and this run last.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrendsSection {
    /// The most runs the file keeps.
    pub kept: usize,
    /// Whether this run was added to the file (the runs that store the baseline are).
    pub stored: bool,
    /// The runs, oldest first; the last is this run.
    pub points: Vec<TrendPoint>,
}

/// One run's summary in the trends: what the charts draw.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrendPoint {
    /// When it started (RFC 3339).
    pub measured_at: String,
    /// The commit it ran on, when known (`GITHUB_SHA`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// `PROVIDER:MODEL` → layer 1's pass rate (cases that passed of the cases with a verdict,
    /// `eval_metrics.pass_rate`), 0..1; models without a verdict are absent.
    #[serde(default)]
    pub pass_rate: std::collections::BTreeMap<String, f64>,
    /// Tool → its p95 latency, ms; tools without samples are absent.
    #[serde(default)]
    pub p95_ms: std::collections::BTreeMap<String, u64>,
    /// What the run's model calls cost, USD (`telemetry.total.cost_usd`; `None`: unknown).
    #[serde(default)]
    pub cost_usd: Option<f64>,
}

/// `budget`: the cost budget (`--max-cost-usd`) and what the run spent against it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BudgetSection {
    /// The budget, USD.
    pub max_cost_usd: f64,
    /// The up-front estimate, USD (`None`: the run stopped before it was made).
    pub estimate_usd: Option<f64>,
    /// How the estimate is made, in words.
    pub estimate_method: String,
    /// What the answered calls cost, USD (a call that reported no usage counts its estimate).
    pub spent_usd: f64,
    /// `spent_usd` beyond the budget (calls in flight finish), USD; 0 within it.
    pub overshoot_usd: f64,
    /// Calls not made because their estimate exceeded what was left.
    pub calls_refused: usize,
    /// What stopped the run: `estimate` (before any call; nothing spent) or `budget` (during
    /// it: the remaining trials are skipped); `None`: it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

/// The price table a run used.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PriceTableInfo {
    /// The file as given.
    pub path: String,
    /// SHA-256 of its bytes (hex): a delta can tell a changed table from a changed run.
    pub sha256: String,
    /// Its `as_of` date.
    pub as_of: String,
    /// Its `source`, when it gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// Latency figures of a set of samples, in milliseconds (`None` without samples).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Latency {
    /// Samples.
    pub count: usize,
    /// Median (nearest rank).
    pub p50_ms: Option<u64>,
    /// 95th percentile (nearest rank).
    pub p95_ms: Option<u64>,
    /// The slowest.
    pub max_ms: Option<u64>,
}

/// Tokens and cost summed over model calls (or attributed shares of them).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Spend {
    /// Model calls counted (whole calls; a share of a call counts 1).
    pub model_calls: usize,
    /// Read, not from the cache (`None` when a call did not report it).
    pub input_tokens: Option<f64>,
    /// Read from the cache.
    pub cache_read_tokens: Option<f64>,
    /// Written to the cache.
    pub cache_write_tokens: Option<f64>,
    /// Written, reasoning included.
    pub output_tokens: Option<f64>,
    /// Reasoning, where the wire reports it apart.
    pub reasoning_tokens: Option<f64>,
    /// Calls that lacked the input or the output count (a sum with an unknown part is `None`).
    pub unknown_calls: usize,
    /// Cost in USD from the price table (`None` when any call is unpriced or lacked a count
    /// the price needs).
    pub cost_usd: Option<f64>,
    /// Calls with no cost: no price for the model, or no input or output count.
    pub unpriced_calls: usize,
    /// What the providers reported the calls cost (USD), when every call reported one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported_cost_usd: Option<f64>,
    /// Model calls that got no answer (a provider error after its retries, a timeout): not in
    /// `model_calls` nor the sums, which they make unknown when no call was answered (never 0).
    #[serde(default, skip_serializing_if = "is_zero_calls")]
    pub failed_calls: usize,
}

fn is_zero_calls(count: &usize) -> bool {
    *count == 0
}

/// One tool's figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolTelemetry {
    /// The MCP tool name.
    pub tool: String,
    /// `tools/call` round trips sent to the server (request sent → final response, after our
    /// in-flight limit): the latency's samples.
    pub latency: Latency,
    /// Results with `isError: true`.
    pub error_results: usize,
    /// JSON-RPC errors, no answer, input requests left unanswered or the trial's time running
    /// out: transport errors, apart from `isError` results.
    pub transport_errors: usize,
    /// `error_results` ÷ sent (`None` when none was sent).
    pub error_result_rate: Option<f64>,
    /// `transport_errors` ÷ sent.
    pub transport_error_rate: Option<f64>,
    /// Bytes of result text the server sent, summed over the results.
    pub result_bytes: u64,
    /// The largest result, in bytes.
    pub max_result_bytes: Option<u64>,
    /// Calls a layer answered itself (layer 2's faults and payloads): left out of the figures above.
    pub injected: usize,
    /// Calls refused before sending (unknown tool, invalid arguments).
    pub not_sent: usize,
    /// The tokens and cost of the turns that called it (their attributed shares).
    pub spend: Spend,
}

/// One model's figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelTelemetry {
    /// `PROVIDER:MODEL`.
    pub model: String,
    /// `model` (under test) or `judge`.
    pub role: String,
    /// Latency of its answered live calls (retries included); calls replayed from cassettes
    /// are not samples (a lookup is no model's latency).
    pub latency: Latency,
    /// What its calls took (replayed calls included: their recorded tokens, priced).
    pub spend: Spend,
    /// Of its calls, those answered from cassettes (replay): no model was called for them.
    /// Absent when 0.
    #[serde(default, skip_serializing_if = "is_zero_calls")]
    pub replayed_calls: usize,
    /// Selection precision and recall per expected tool, from layer 1's trials.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accuracy: Vec<ToolAccuracy>,
    /// The tool confusion matrix: each expected tool × the tool a trial called instead, with
    /// the cases it happened in (correct selections are not listed; see `accuracy`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub confusion: Vec<Confusion>,
}

/// Selection accuracy of one tool on one model, treating tool selection as multi-class
/// classification over layer 1's trials (`(none)` is the class of calling no tool).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolAccuracy {
    /// The tool, or `(none)`.
    pub tool: String,
    /// Trials that expected it.
    pub expected: usize,
    /// Trials whose selection was it.
    pub selected: usize,
    /// Trials that expected it and selected it.
    pub correct: usize,
    /// `correct ÷ selected` (`None` when never selected).
    pub precision: Option<f64>,
    /// `correct ÷ expected` (`None` when never expected).
    pub recall: Option<f64>,
}

/// One cell off the diagonal of a confusion matrix.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Confusion {
    /// The tool the case expected, or `(none)` (a case that expects no call).
    pub expected: String,
    /// The tool the trials selected instead, or `(none)`.
    pub selected: String,
    /// Trials.
    pub count: usize,
    /// The cases, in set order.
    pub cases: Vec<String>,
}

/// One case on one model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CaseTelemetry {
    /// The case id (layer 2: the variant id).
    pub case: String,
    /// `PROVIDER:MODEL` under test.
    pub model: String,
    /// 1 or 2.
    pub layer: u8,
    /// Trials measured.
    pub trials: usize,
    /// What the model under test's calls took.
    pub spend: Spend,
    /// What the judge's calls about its trials took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<Spend>,
}

/// One trial.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrialTelemetry {
    /// The case id (layer 2: the variant id).
    pub case: String,
    /// `PROVIDER:MODEL` under test.
    pub model: String,
    /// 1-based.
    pub trial: usize,
    /// 1 or 2.
    pub layer: u8,
    /// Tool calls sent to the server.
    pub tool_calls: usize,
    /// Their latencies summed, in milliseconds.
    pub tool_latency_ms: u64,
    /// What the model under test's calls took.
    pub spend: Spend,
    /// The part of `spend` attributed to the final answer (turns that called no tool).
    pub answer: Spend,
    /// The trial's W3C trace id (32 hex digits): its spans in the user's tracing backend, and
    /// the `traceparent` its `tools/call` requests carried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
}

/// One model call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelCallTelemetry {
    /// The case id (layer 2: the variant id).
    pub case: String,
    /// `PROVIDER:MODEL` under test.
    pub model: String,
    /// 1-based trial.
    pub trial: usize,
    /// 1 or 2.
    pub layer: u8,
    /// `model` or `judge`.
    pub role: String,
    /// `PROVIDER:MODEL` asked (the judge's model for `judge`).
    pub asked: String,
    /// 0-based turn (the judge: its sample).
    pub turn: usize,
    /// `answer`: only answered calls are listed (the others have no usage to count).
    pub outcome: String,
    /// Wall time in milliseconds, retries included (`None` without a reply).
    pub latency_ms: Option<u64>,
    /// Read, not from the cache.
    pub input_tokens: Option<u64>,
    /// Read from the cache.
    pub cache_read_tokens: Option<u64>,
    /// Written to the cache.
    pub cache_write_tokens: Option<u64>,
    /// Written, reasoning included.
    pub output_tokens: Option<u64>,
    /// Reasoning, where the wire reports it apart.
    pub reasoning_tokens: Option<u64>,
    /// Cost in USD from the price table (`None`: unpriced or a count missing).
    pub cost_usd: Option<f64>,
    /// What the provider reported it cost (USD).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported_cost_usd: Option<f64>,
    /// The tools the reply called, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// Answered from a cassette (replay): no model was called, the tokens are the recorded
    /// ones (`cost_usd` is what they would cost at the price table, not money spent), and
    /// `latency_ms` is the lookup's, not a model's. Absent when live.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replayed: bool,
}

/// The tokens of one tool definition as one model's provider receives it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FootprintEntry {
    /// The MCP tool name.
    pub tool: String,
    /// `PROVIDER:MODEL`.
    pub model: String,
    /// Tokens.
    pub tokens: u64,
    /// How they were counted: `tokenizer` (a real tokenizer of the model family over the
    /// definition as we send it; the provider renders tools its own way), `count_tokens` (the
    /// provider's count-tokens endpoint) or `estimated` (bytes ÷ 4).
    pub method: String,
}
