//! Layer 3's part of the report: `telemetry` in `report.json`. For now the token counts of a
//! model call as every layer keeps them ([`Usage`]).

use serde::{Deserialize, Serialize};

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
