//! The tool-surface footprint: the tokens each tool definition costs on every model call, as
//! each model's wire sends it (the `tools` of a Chat Completions or Messages request, from the
//! provider adapters themselves).
//!
//! For a model on the OpenAI wire whose name tiktoken knows (the GPT-4o, GPT-4.1, GPT-5 and o
//! families: `o200k_base`; GPT-4 and GPT-3.5: `cl100k_base`), the definition's JSON text is
//! counted with that encoding: method `tokenizer` (the provider renders tools its own way
//! before counting, so this is close, not exact). Every other model (Anthropic, whose tokenizer
//! is not public; an OpenAI-compatible server's own model; a replayed one) gets `estimated`:
//! bytes ÷ 4.

use std::collections::BTreeMap;

use serde_json::Value;
use tiktoken_rs::tokenizer::{Tokenizer, get_tokenizer};

use crate::mcp::tools::ToolView;
use crate::providers::ToolSpec;
use crate::report::telemetry::FootprintEntry;

/// The wire a model is asked on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    /// OpenAI Chat Completions (and compatible servers).
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
    /// Replayed from cassettes: sized as the OpenAI wire sends it.
    Replay,
}

/// A model whose footprint is counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Asked {
    /// `PROVIDER:MODEL`.
    pub label: String,
    /// The model name the provider is asked for.
    pub model: String,
    /// Its wire.
    pub wire: Wire,
}

/// The tokens of every tool of `tools` for every model of `models`, in tool order then model
/// order. A surface whose names a wire cannot send is estimated from the MCP definition.
pub(crate) fn footprint(tools: &[ToolView], models: &[Asked]) -> Vec<FootprintEntry> {
    let specs: Vec<ToolSpec> = tools.iter().map(ToolSpec::from).collect();
    let mut encoders: BTreeMap<&'static str, Option<tiktoken_rs::CoreBPE>> = BTreeMap::new();
    let mut rows: Vec<(usize, usize, FootprintEntry)> = Vec::new();
    for (model_index, asked) in models.iter().enumerate() {
        let definitions = match asked.wire {
            Wire::Anthropic => crate::providers::anthropic::tool_definitions(&specs),
            Wire::OpenAi | Wire::Replay => crate::providers::openai::tool_definitions(&specs),
        };
        let definitions: Vec<String> = match definitions {
            Some(definitions) => definitions.iter().map(Value::to_string).collect(),
            None => specs
                .iter()
                .map(|spec| {
                    serde_json::json!({"name": spec.name, "description": spec.description, "parameters": spec.input_schema})
                        .to_string()
                })
                .collect(),
        };
        let encoding = (asked.wire == Wire::OpenAi).then(|| get_tokenizer(&asked.model)).flatten().and_then(|kind| {
            let name = encoding_name(kind)?;
            encoders.entry(name).or_insert_with(|| encoder(kind)).as_ref()
        });
        for (tool_index, (spec, text)) in specs.iter().zip(&definitions).enumerate() {
            let (tokens, method) = match encoding {
                Some(bpe) => (bpe.encode_ordinary(text).len() as u64, "tokenizer"),
                None => (super::budget::tokens_of(text.len()), "estimated"),
            };
            rows.push((
                tool_index,
                model_index,
                FootprintEntry { tool: spec.name.clone(), model: asked.label.clone(), tokens, method: method.into() },
            ));
        }
    }
    rows.sort_by_key(|(tool, model, _)| (*tool, *model));
    rows.into_iter().map(|(_, _, entry)| entry).collect()
}

/// The most tools `--count-tokens` counts one by one (each costs a request); a larger surface
/// keeps its other counts.
pub(crate) const MAX_COUNTED_TOOLS: usize = 128;

/// Recounts `rows` of `label` (an Anthropic model) with `count` — the input tokens of a request
/// offering the given tools, from the provider's count-tokens endpoint: each tool's tokens are
/// what the request with every tool reads beyond the request without it (so the tool-use
/// preamble the provider adds once is in no tool's count). Method `count_tokens`.
///
/// # Errors
/// The first request that failed; `rows` are then left as they were.
pub(crate) async fn count_with<F, Fut, E>(
    rows: &mut [FootprintEntry],
    tools: &[ToolView],
    label: &str,
    count: F,
) -> Result<(), E>
where
    F: Fn(Vec<ToolSpec>) -> Fut,
    Fut: std::future::Future<Output = Result<u64, E>>,
{
    let specs: Vec<ToolSpec> = tools.iter().map(ToolSpec::from).collect();
    if specs.is_empty() || specs.len() > MAX_COUNTED_TOOLS {
        return Ok(());
    }
    let all = count(specs.clone()).await?;
    let mut counted = Vec::with_capacity(specs.len());
    for index in 0..specs.len() {
        let mut without = specs.clone();
        without.remove(index);
        counted.push(all.saturating_sub(count(without).await?));
    }
    for (spec, tokens) in specs.iter().zip(counted) {
        if let Some(row) = rows.iter_mut().find(|row| row.model == label && row.tool == spec.name) {
            row.tokens = tokens;
            row.method = "count_tokens".into();
        }
    }
    Ok(())
}

/// The encodings counted here (the ones OpenAI's current and recent chat models use).
fn encoding_name(kind: Tokenizer) -> Option<&'static str> {
    match kind {
        Tokenizer::O200kBase => Some("o200k_base"),
        Tokenizer::Cl100kBase => Some("cl100k_base"),
        _ => None,
    }
}

fn encoder(kind: Tokenizer) -> Option<tiktoken_rs::CoreBPE> {
    match kind {
        Tokenizer::O200kBase => tiktoken_rs::o200k_base().ok(),
        Tokenizer::Cl100kBase => tiktoken_rs::cl100k_base().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, description: &str) -> ToolView {
        ToolView::from_entry(&serde_json::json!({
            "name": name,
            "description": description,
            "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}
        }))
        .expect("a tool")
    }

    fn asked(label: &str, wire: Wire) -> Asked {
        Asked { label: label.into(), model: label.split_once(':').map_or(label, |(_, model)| model).into(), wire }
    }

    #[test]
    fn an_openai_model_tiktoken_knows_is_counted_with_its_encoding_and_others_are_estimated() {
        let tools = [tool("get_weather", "Gets the weather for a city."), tool("get_time", "Gets the time.")];
        let models = [
            asked("openai:gpt-4.1-mini", Wire::OpenAi),
            asked("anthropic:claude-sonnet-4-5", Wire::Anthropic),
            asked("openai:qwen3:8b", Wire::OpenAi),
        ];
        let rows = footprint(&tools, &models);
        assert_eq!(rows.len(), 6);
        let methods: Vec<(&str, &str, &str)> =
            rows.iter().map(|row| (row.tool.as_str(), row.model.as_str(), row.method.as_str())).collect();
        assert_eq!(
            methods[..3],
            [
                ("get_weather", "openai:gpt-4.1-mini", "tokenizer"),
                ("get_weather", "anthropic:claude-sonnet-4-5", "estimated"),
                ("get_weather", "openai:qwen3:8b", "estimated"),
            ]
        );
        // The OpenAI definition `{"function":{"description":…,"name":"get_weather","parameters":…},"type":"function"}`:
        // BPE tokens are fewer than its bytes and more than a tenth of them.
        let definition =
            crate::providers::openai::tool_definitions(&[ToolSpec::from(&tools[0])]).unwrap()[0].to_string();
        let counted = rows[0].tokens;
        assert!(
            counted > 0 && (counted as usize) < definition.len() && counted as usize > definition.len() / 10,
            "{counted}"
        );
        assert_eq!(rows[2].tokens, super::super::budget::tokens_of(definition.len()), "the same JSON, estimated");
        assert!(rows[4].tokens < rows[3].tokens, "a shorter description costs fewer tokens");
    }

    #[tokio::test]
    async fn counted_tokens_are_each_tools_share_beyond_the_request_without_it() {
        let tools = [tool("a", "A."), tool("bb", "Bee.")];
        let models = [asked("anthropic:claude-x", Wire::Anthropic)];
        let mut rows = footprint(&tools, &models);
        // A scripted endpoint: 300 for the tool-use preamble, 10 per character of the tool names.
        let count = |offered: Vec<ToolSpec>| async move {
            let names: usize = offered.iter().map(|spec| spec.name.len()).sum();
            Ok::<u64, String>(if offered.is_empty() { 20 } else { 320 + 10 * names as u64 })
        };
        count_with(&mut rows, &tools, "anthropic:claude-x", count).await.expect("counted");
        let counted: Vec<(&str, u64, &str)> =
            rows.iter().map(|row| (row.tool.as_str(), row.tokens, row.method.as_str())).collect();
        assert_eq!(counted, [("a", 10, "count_tokens"), ("bb", 20, "count_tokens")]);
        let failing = |_: Vec<ToolSpec>| async { Err::<u64, String>("401".into()) };
        let mut kept = footprint(&tools, &models);
        assert_eq!(count_with(&mut kept, &tools, "anthropic:claude-x", failing).await, Err("401".into()));
        assert!(kept.iter().all(|row| row.method == "estimated"), "left as they were");
    }

    #[test]
    fn the_encoding_counts_known_text_exactly() {
        let bpe = encoder(Tokenizer::O200kBase).expect("embedded");
        assert_eq!(bpe.encode_ordinary("hello world").len(), 2);
        assert_eq!(encoding_name(get_tokenizer("gpt-4").expect("known")), Some("cl100k_base"));
        assert_eq!(encoding_name(get_tokenizer("gpt-5-mini").expect("known")), Some("o200k_base"));
    }
}
