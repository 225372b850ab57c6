//! `mcp-eval golden init --model PROVIDER:MODEL`: a model writes each tool's draft case.
//!
//! For every tool the model is asked once (case key `init:TOOL`, run 1, turn 0, so cassettes
//! record and replay it like any layer-1 call) for a request a user might type that should lead
//! an assistant to call the tool, and for the argument values that request implies. The answer
//! is forced through one named tool, [`PROPOSE_TOOL`], on both wires (as the rubric judge does):
//! `{prompt: string, arguments: object}`, where `arguments` carries the tool's `inputSchema`
//! lowered for the provider. One more call (`init:negatives`) asks for up to
//! [`MAX_MODEL_NEGATIVES`] requests that need none of the tools, through
//! [`NEGATIVES_TOOL`] (`{prompts: [string]}`).
//!
//! The proposed arguments are checked against the tool's *original* `inputSchema` with the
//! validator the template drafts use. Whatever goes wrong for one tool — arguments that break
//! the schema, no call of the answer tool, an empty or overlong prompt, an HTTP error after the
//! retries, a replay miss, the call cap — makes that tool's case the template's (prompt *and*
//! arguments, so the prompt never contradicts the expected arguments), with the reason in its
//! comment; the other tools keep the model's drafts. Only a provider that refuses the first
//! calls before answering any (rejected key, unknown model, no quota, unreachable endpoint)
//! stops the command ([`Drafted::Refused`]): exit status 5, nothing written.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::agent::{ModelCaller, ModelFailure, TurnKey};
use crate::error::{Kind, UserError};
use crate::mcp::tools::{ToolSurface, ToolView};
use crate::providers::cassette::{Cassettes, Mode};
use crate::providers::schema::{self, ArgumentValidator, Family, Validation};
use crate::providers::{Completion, CompletionRequest, Message, ProviderError, Sampling, ToolChoice, ToolSpec};
use crate::settings::layer1::{Api, CassetteSource, Layer1Settings, ModelRef};
use crate::trials::caller::{Budget, LiveModel, RetryPolicy};

/// The tool the model must call with its proposal for one tool.
pub(crate) const PROPOSE_TOOL: &str = "propose_case";

/// The tool the model must call with its negative prompts.
pub(crate) const NEGATIVES_TOOL: &str = "propose_negative_prompts";

/// The longest prompt (in characters) taken from the model.
pub(crate) const MAX_PROMPT_CHARS: usize = 1000;

/// The most negative cases the model writes (on top of the three small-talk ones).
pub(crate) const MAX_MODEL_NEGATIVES: usize = 2;

/// The longest `inputSchema` text (in characters) put into a request; a longer one is cut (the
/// lowered schema of the answer tool still carries all of it).
const MAX_SCHEMA_TEXT: usize = 16_000;

/// The longest reason (in characters) written into a case's comment.
const MAX_REASON: usize = 300;

/// The case key of the negatives call (a tool case key is `init:TOOL`).
pub(crate) const NEGATIVES_KEY: &str = "init:negatives";

/// Who wrote one tool's positive case.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Authored {
    /// The model: its prompt and the arguments it implies (valid against the tool's schema).
    Model {
        /// The user request, one or more sentences.
        prompt: String,
        /// The arguments (a JSON object; may be empty).
        args: Map<String, Value>,
    },
    /// The template, because the model's draft could not be used: the reason, on one line.
    Template {
        /// Why (e.g. "the model's arguments break the tool's inputSchema: …").
        reason: String,
    },
}

/// What the model wrote for a whole surface.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Authoring {
    /// `PROVIDER:MODEL`.
    pub model: String,
    /// One entry per tool of the surface, in its order.
    pub tools: Vec<Authored>,
    /// The negative prompts the model wrote (at most [`MAX_MODEL_NEGATIVES`]).
    pub negatives: Vec<String>,
    /// Why the model wrote no negative prompts, when it wrote none.
    pub negatives_note: Option<String>,
}

/// The outcome of asking the model about a surface.
#[derive(Debug)]
pub(crate) enum Drafted {
    /// Drafts, some perhaps from the template.
    Written(Authoring),
    /// The provider refused the calls before answering any: the error (its message is redacted
    /// by the adapter and holds no key).
    Refused(ProviderError),
}

/// `text` on one line (controls and line breaks as spaces, runs of whitespace folded), at most
/// `max` characters: what a YAML comment or a stderr note may hold.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let flat = flat.split_whitespace().collect::<Vec<_>>().join(" ");
    crate::text::clip(&flat, max)
}

/// The answer tool of [`propose_request`]: `prompt` and `arguments` (the tool's schema as
/// lowered for `family`), both required.
fn propose_tool(tool: &ToolView, family: Family) -> ToolSpec {
    let arguments = schema::lower(&tool.input_schema, family).schema;
    ToolSpec {
        name: PROPOSE_TOOL.into(),
        description: Some("Record the user request and the arguments the assistant should pass to the tool.".into()),
        input_schema: json!({
            "type": "object",
            "properties": {
                "prompt": {
                    "type": "string",
                    "description": "What a user would type to an assistant, in their own words, without naming the tool."
                },
                "arguments": arguments
            },
            "required": ["prompt", "arguments"]
        }),
    }
}

/// The request for one tool's draft: the tool's name, title, description and `inputSchema`
/// (JSON, cut at 16 000 characters), temperature 0 (dropped by the caller for a model that
/// refuses it), at most 1024 output tokens, [`PROPOSE_TOOL`] forced.
pub(crate) fn propose_request(tool: &ToolView, family: Family) -> CompletionRequest {
    let system = "You write test cases for the tools of an MCP server. For the tool described, write one realistic \
                  request a user might type to an AI assistant that has this tool, such that a good assistant would \
                  call it. Write it as the user would, in their own words, without naming the tool. State in the \
                  request every value the tool needs; give the arguments the assistant should pass, exactly as that \
                  request implies them, using only arguments the schema defines and values it accepts. Answer by \
                  calling propose_case.";
    let schema_text = crate::text::clip(&tool.input_schema.to_string(), MAX_SCHEMA_TEXT);
    let mut user = format!("Tool name: {}\n", tool.name);
    if let Some(title) = tool.title.as_deref().filter(|title| !title.trim().is_empty()) {
        user.push_str(&format!("Title: {title}\n"));
    }
    if let Some(description) = tool.description.as_deref().filter(|text| !text.trim().is_empty()) {
        user.push_str(&format!("Description: {description}\n"));
    }
    user.push_str(&format!("Input schema (JSON Schema): {schema_text}\n"));
    CompletionRequest {
        system: Some(system.to_owned()),
        messages: vec![Message::User(user)],
        tools: vec![propose_tool(tool, family)],
        sampling: Sampling { temperature: Some(0.0), top_p: None, max_output_tokens: Some(1024) },
        tool_choice: ToolChoice::Named(PROPOSE_TOOL.into()),
    }
}

/// Reads the model's proposal for `tool` and checks it: a call of [`PROPOSE_TOOL`], a prompt
/// of 1 to [`MAX_PROMPT_CHARS`] characters, and arguments that are a JSON object (or the JSON
/// text of one) valid against the tool's original `inputSchema`. `Err` is the one-line reason
/// the template is used instead.
pub(crate) fn read_proposal(
    completion: &Completion,
    tool: &ToolView,
) -> Result<(String, Map<String, Value>), AnswerRefused> {
    let call = completion
        .tool_calls
        .iter()
        .find(|call| call.name == PROPOSE_TOOL)
        .ok_or(AnswerRefused::NoCall(PROPOSE_TOOL))?;
    let prompt = call.arguments.get("prompt").and_then(Value::as_str).map(str::trim).unwrap_or_default();
    if prompt.is_empty() {
        return Err(AnswerRefused::EmptyPrompt);
    }
    if prompt.chars().count() > MAX_PROMPT_CHARS {
        return Err(AnswerRefused::LongPrompt);
    }
    let args = match call.arguments.get("arguments") {
        Some(Value::Object(args)) => args.clone(),
        // Some models send a nested object as its JSON text.
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(args)) => args,
            _ => return Err(AnswerRefused::NotAnObject),
        },
        None => return Err(AnswerRefused::NoArguments),
        Some(_) => return Err(AnswerRefused::NotAnObject),
    };
    match ArgumentValidator::new(&tool.input_schema).validate(&Value::Object(args.clone())) {
        Validation::Valid => Ok((prompt.to_owned(), args)),
        Validation::Invalid(errors) => Err(AnswerRefused::BreaksSchema(errors)),
        Validation::SchemaUnusable(reason) => Err(AnswerRefused::SchemaUnusable(reason)),
    }
}

/// Why the model's answer is not taken (a proposal: the template is used instead; the
/// negative prompts: none are written), on one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum AnswerRefused {
    /// The answer tool was not called.
    #[error("the model did not call {0}")]
    NoCall(&'static str),
    /// No prompt, or a blank one.
    #[error("the model's prompt is missing or empty")]
    EmptyPrompt,
    /// A prompt over [`MAX_PROMPT_CHARS`].
    #[error("the model's prompt is longer than {MAX_PROMPT_CHARS} characters")]
    LongPrompt,
    /// Arguments that are not a JSON object (nor its text).
    #[error("the model's arguments are not a JSON object")]
    NotAnObject,
    /// No arguments.
    #[error("the model gave no arguments")]
    NoArguments,
    /// Arguments the tool's `inputSchema` refuses, each violation.
    #[error("the model's arguments break the tool's inputSchema: {}", .0.join("; "))]
    BreaksSchema(Vec<String>),
    /// A schema that cannot be compiled, and why.
    #[error("the tool's inputSchema cannot check the model's arguments: {0}")]
    SchemaUnusable(String),
    /// No usable negative prompt.
    #[error("the model gave no usable negative prompt")]
    NoNegative,
}

/// The request for the negative prompts: the tools' names and first description lines, and
/// [`NEGATIVES_TOOL`] forced.
pub(crate) fn negatives_request(surface: &ToolSurface) -> CompletionRequest {
    let system = "You write test cases for the tools of an MCP server. Write requests a user might send to an AI \
                  assistant that has these tools, for which a good assistant would call none of them: everyday \
                  questions or requests the tools do not serve, ideally close to their topic. Answer by calling \
                  propose_negative_prompts.";
    let lines: Vec<String> = surface
        .tools
        .iter()
        .filter(|tool| !tool.name.trim().is_empty())
        .take(200)
        .map(|tool| {
            let description = tool.description.as_deref().map(|text| one_line(text, 200)).unwrap_or_default();
            format!("- {}: {description}", tool.name)
        })
        .collect();
    let user = format!("The tools:\n{}\n\nWrite {MAX_MODEL_NEGATIVES} such requests.", lines.join("\n"));
    CompletionRequest {
        system: Some(system.to_owned()),
        messages: vec![Message::User(user)],
        tools: vec![ToolSpec {
            name: NEGATIVES_TOOL.into(),
            description: Some("Record requests that need none of the tools.".into()),
            input_schema: json!({
                "type": "object",
                "properties": {"prompts": {"type": "array", "items": {"type": "string"}}},
                "required": ["prompts"]
            }),
        }],
        sampling: Sampling { temperature: Some(0.0), top_p: None, max_output_tokens: Some(512) },
        tool_choice: ToolChoice::Named(NEGATIVES_TOOL.into()),
    }
}

/// Reads the negative prompts: the first [`MAX_MODEL_NEGATIVES`] distinct non-empty strings of
/// at most [`MAX_PROMPT_CHARS`] characters. `Err` when there is none.
pub(crate) fn read_negatives(completion: &Completion) -> Result<Vec<String>, AnswerRefused> {
    let call = completion
        .tool_calls
        .iter()
        .find(|call| call.name == NEGATIVES_TOOL)
        .ok_or(AnswerRefused::NoCall(NEGATIVES_TOOL))?;
    let mut prompts: Vec<String> = Vec::new();
    for prompt in call.arguments.get("prompts").and_then(Value::as_array).into_iter().flatten() {
        let Some(text) = prompt.as_str().map(str::trim) else { continue };
        if !text.is_empty() && text.chars().count() <= MAX_PROMPT_CHARS && !prompts.iter().any(|seen| seen == text) {
            prompts.push(text.to_owned());
        }
        if prompts.len() == MAX_MODEL_NEGATIVES {
            break;
        }
    }
    if prompts.is_empty() { Err(AnswerRefused::NoNegative) } else { Ok(prompts) }
}

/// Why a failed call leaves the template in place, on one line.
fn failure_reason(failure: ModelFailure) -> String {
    let text = match failure {
        ModelFailure::Provider { error, attempts } => {
            format!("the model call failed after {attempts} attempt(s): {error}")
        }
        ModelFailure::CapReached => "the model-call cap (--max-model-calls) was reached".into(),
        ModelFailure::NoRecording(reason) => format!("no recording answers this call: {reason}"),
    };
    one_line(&text, MAX_REASON)
}

/// One tool's draft: the model's, or the template's with the reason; `Err` when the provider
/// refused before answering any call.
async fn ask_one(model: &LiveModel, tool: &ToolView, family: Family) -> Result<Authored, ProviderError> {
    if tool.name.trim().is_empty() {
        return Ok(Authored::Template { reason: "the tool has no name".into() });
    }
    let key = TurnKey { case: format!("init:{}", tool.name), trial: 1, turn: 0 };
    match model.call(key, &propose_request(tool, family)).await {
        Ok(reply) => Ok(match read_proposal(&reply.completion, tool) {
            Ok((prompt, args)) => Authored::Model { prompt, args },
            Err(reason) => Authored::Template { reason: one_line(&reason.to_string(), MAX_REASON) },
        }),
        Err(failure) => match model.refused() {
            Some(error) => Err(error),
            None => Ok(Authored::Template { reason: failure_reason(failure) }),
        },
    }
}

/// How many tools' drafts are asked for at once, after the first.
const CONCURRENT_DRAFTS: usize = 4;

/// Asks `model` for every tool's draft — the first tool alone (so a refused key costs one call),
/// then up to [`CONCURRENT_DRAFTS`] at once, kept in the server's order — then for the negative
/// prompts (see the module documentation). [`Drafted::Refused`] as soon as the provider refuses
/// before answering any call; the tools not asked yet are not asked.
pub(crate) async fn draft(model: &LiveModel, surface: &ToolSurface, family: Family) -> Drafted {
    use futures_util::StreamExt;
    let ask = |tool| ask_one(model, tool, family);
    let mut tools = Vec::with_capacity(surface.tools.len());
    let mut rest = surface.tools.iter();
    if let Some(first) = rest.next() {
        match ask(first).await {
            Ok(authored) => tools.push(authored),
            Err(error) => return Drafted::Refused(error),
        }
    }
    let answers: Vec<_> = futures_util::stream::iter(rest).map(ask).buffered(CONCURRENT_DRAFTS).collect().await;
    for answer in answers {
        match answer {
            Ok(authored) => tools.push(authored),
            Err(error) => return Drafted::Refused(error),
        }
    }
    let (negatives, negatives_note) = if tools.is_empty() {
        (Vec::new(), Some("the server lists no tools".to_owned()))
    } else {
        let key = TurnKey { case: NEGATIVES_KEY.into(), trial: 1, turn: 0 };
        match model.call(key, &negatives_request(surface)).await {
            Ok(reply) => match read_negatives(&reply.completion) {
                Ok(prompts) => (prompts, None),
                Err(reason) => (Vec::new(), Some(reason.to_string())),
            },
            Err(failure) => {
                if let Some(error) = model.refused() {
                    return Drafted::Refused(error);
                }
                (Vec::new(), Some(failure_reason(failure)))
            }
        }
    };
    Drafted::Written(Authoring { model: model.label().to_owned(), tools, negatives, negatives_note })
}

/// A model ready for `golden init`: the caller (live, recording or replaying, with the retries
/// and the call cap of layer 1), the schema family of its wire, and the cassettes to save after
/// a recording.
pub(crate) struct ModelPlan {
    /// The model as layer 1 calls it.
    pub caller: LiveModel,
    /// The schema family its answer tool is lowered for.
    pub family: Family,
    /// The cassettes, saved after the calls when recording.
    pub cassettes: Option<Arc<Cassettes>>,
    /// `--record`.
    pub record: bool,
    /// What to check when the provider refuses (e.g. "check `OPENAI_API_KEY`").
    pub refused_hint: String,
}

/// Builds the model of `golden init --model` from the resolved layer-1 settings (providers,
/// keys, `--cassettes`, `--record`, `--max-model-calls`), through the same code `run` uses.
///
/// # Errors
/// Exit status 2 for: a provider that is not defined, cassettes that cannot be read, a
/// `replay:` model without `--cassettes`, a provider the HTTP client refuses, and a key that is
/// needed but unset or empty (the message names its variable; the key is never shown).
pub(crate) fn plan(layer1: &Layer1Settings, model: &ModelRef) -> Result<ModelPlan, UserError> {
    let label = model.label();
    let def = layer1.provider(model).ok_or_else(|| {
        UserError::new(Kind::InvalidInput, format!("--model: no provider `{}` is defined", model.provider))
            .with_hint("use openai, anthropic, replay or a provider of the config file (--config)")
    })?;
    let cassettes = match &layer1.cassettes {
        None => None,
        // Built-in cassettes (the demo's) are not `golden init`'s: read as `run` reads them.
        Some(CassetteSource::Builtin(_)) => layer1.open_cassettes()?,
        Some(CassetteSource::Dir(dir)) => {
            let mode = if layer1.record { Mode::Record } else { Mode::Replay };
            let cassettes = Cassettes::open(dir, mode).map_err(|error| {
                UserError::new(Kind::InvalidInput, format!("--cassettes: {error}"))
                    .with_hint("point --cassettes at a directory of cassettes (or add --record to write one)")
            })?;
            Some(Arc::new(cassettes))
        }
    };
    let variable = def.api_key_env.clone().unwrap_or_default();
    let source = match layer1.model_source(def, model, cassettes.as_ref()) {
        Ok(Some(source)) => source,
        Ok(None) => {
            return Err(UserError::new(
                Kind::InvalidInput,
                format!("--model {label}: `{variable}` is unset or empty, and the model needs its key"),
            )
            .with_hint(format!(
                "export {variable} with the key of provider `{}`, or replay recorded answers with --cassettes DIR",
                def.id
            )));
        }
        Err(error) => {
            return Err(UserError::new(
                Kind::InvalidInput,
                format!("--model {label}: cannot use the provider: {error}"),
            )
            .with_hint("check the provider's base URL, and give --cassettes DIR to a `replay:` model"));
        }
    };
    let refused_hint = match def.api_key_env.as_deref() {
        Some(variable) => format!(
            "check `{variable}`, the model name after `{}:`, the account's quota and the base URL `{}`",
            def.id,
            crate::settings::secrets::url_without_secrets(&def.base_url)
        ),
        None => format!(
            "check the model name after `{}:` and the base URL `{}`",
            def.id,
            crate::settings::secrets::url_without_secrets(&def.base_url)
        ),
    };
    let family = if def.api == Api::Anthropic { Family::Anthropic } else { Family::OpenAi };
    let budget = Arc::new(Budget::new(layer1.max_model_calls));
    Ok(ModelPlan {
        caller: LiveModel::new(label, source, budget, RetryPolicy::default()),
        family,
        cassettes,
        record: layer1.record,
        refused_hint,
    })
}

#[cfg(test)]
mod tests {
    use super::super::init::tests::{arg_value, has_expected_args};
    use super::*;
    use crate::mcp::transport::BoxFuture;
    use crate::providers::{FinishReason, Provider, ToolCall};
    use crate::trials::caller::Source;
    use std::path::Path;
    use std::time::Duration;

    fn tool(name: &str, schema: Value) -> ToolView {
        ToolView { description: Some(format!("The {name} tool.")), ..ToolView::for_tests(name, schema) }
    }

    fn unit_tool() -> ToolView {
        tool(
            "temperature",
            json!({"type": "object", "properties": {"unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "additionalProperties": false}),
        )
    }

    fn region_tool() -> ToolView {
        tool("region", json!({"type": "object", "required": ["region"], "properties": {"region": {"type": "string"}}}))
    }

    fn called(name: &str, arguments: Value) -> Completion {
        Completion {
            text: None,
            tool_calls: vec![ToolCall::new("c1", name, arguments)],
            finish: FinishReason::ToolCalls,
            usage: None,
            reported_model: None,
            system_fingerprint: None,
        }
    }

    #[test]
    fn a_proposal_with_schema_valid_arguments_is_taken() {
        let answer =
            called(PROPOSE_TOOL, json!({"prompt": "  How warm is it, in celsius? ", "arguments": {"unit": "celsius"}}));
        let (prompt, args) = read_proposal(&answer, &unit_tool()).expect("valid");
        assert_eq!(prompt, "How warm is it, in celsius?");
        assert_eq!(Value::Object(args), json!({"unit": "celsius"}));
        // Arguments sent as JSON text are read too.
        let text = called(PROPOSE_TOOL, json!({"prompt": "Echo eu.", "arguments": "{\"region\": \"eu\"}"}));
        assert_eq!(
            read_proposal(&text, &region_tool()).map(|(_, args)| Value::Object(args)),
            Ok(json!({"region": "eu"}))
        );
    }

    #[test]
    fn a_proposal_that_breaks_the_schema_or_the_answer_shape_is_refused_with_the_reason() {
        let kelvin = called(PROPOSE_TOOL, json!({"prompt": "How warm, in kelvin?", "arguments": {"unit": "kelvin"}}));
        let reason = read_proposal(&kelvin, &unit_tool()).expect_err("kelvin is not in the enum").to_string();
        assert!(reason.starts_with("the model's arguments break the tool's inputSchema: "), "{reason}");
        let missing = called(PROPOSE_TOOL, json!({"prompt": "Echo my region.", "arguments": {}}));
        assert!(
            read_proposal(&missing, &region_tool())
                .expect_err("region is required")
                .to_string()
                .contains("inputSchema")
        );
        let cases = [
            (called("other", json!({})), "did not call propose_case"),
            (called(PROPOSE_TOOL, json!({"prompt": " ", "arguments": {}})), "missing or empty"),
            (called(PROPOSE_TOOL, json!({"prompt": "x".repeat(MAX_PROMPT_CHARS + 1), "arguments": {}})), "longer than"),
            (called(PROPOSE_TOOL, json!({"prompt": "Hi", "arguments": [1]})), "not a JSON object"),
            (called(PROPOSE_TOOL, json!({"prompt": "Hi"})), "no arguments"),
        ];
        for (answer, expected) in cases {
            let reason = read_proposal(&answer, &unit_tool()).expect_err("refused").to_string();
            assert!(reason.contains(expected), "{reason} lacks {expected}");
        }
    }

    #[test]
    fn the_request_forces_the_answer_tool_and_shows_the_schema() {
        let request = propose_request(&unit_tool(), Family::OpenAi);
        assert_eq!(request.tool_choice, ToolChoice::Named(PROPOSE_TOOL.into()));
        assert_eq!(request.tools.len(), 1);
        let schema = &request.tools[0].input_schema;
        assert_eq!(schema["required"], json!(["prompt", "arguments"]));
        assert_eq!(schema["properties"]["arguments"]["properties"]["unit"]["enum"], json!(["celsius", "fahrenheit"]));
        let Message::User(text) = &request.messages[0] else { panic!("a user message") };
        assert!(text.contains("Tool name: temperature") && text.contains("\"celsius\""), "{text}");
    }

    #[test]
    fn negatives_are_distinct_bounded_and_at_most_two() {
        let answer = called(
            NEGATIVES_TOOL,
            json!({"prompts": ["Tell me a joke.", " ", "Tell me a joke.", 3, "What is 2+2?", "A third"]}),
        );
        assert_eq!(read_negatives(&answer), Ok(vec!["Tell me a joke.".to_owned(), "What is 2+2?".to_owned()]));
        assert!(read_negatives(&called(NEGATIVES_TOOL, json!({"prompts": []}))).is_err());
        assert!(read_negatives(&called(PROPOSE_TOOL, json!({}))).is_err());
        let request = negatives_request(&ToolSurface { tools: vec![unit_tool()], skipped: 0 });
        assert_eq!(request.tool_choice, ToolChoice::Named(NEGATIVES_TOOL.into()));
    }

    #[test]
    fn comments_and_notes_stay_on_one_bounded_line() {
        assert_eq!(one_line("a\nb\r\n\tc  d", 100), "a b c d");
        assert_eq!(one_line("abcdef", 3), "abc…");
    }

    /// Answers by the tool the request is about: a canned result per case key text found in
    /// the user message.
    #[derive(Debug)]
    struct ByTool(Vec<(&'static str, Result<Completion, ProviderError>)>);

    impl Provider for ByTool {
        fn complete<'a>(&'a self, request: &'a CompletionRequest) -> BoxFuture<'a, Result<Completion, ProviderError>> {
            let Some(Message::User(text)) = request.messages.first() else { panic!("a user message") };
            let answer = self
                .0
                .iter()
                .find(|(needle, _)| text.contains(needle))
                .map_or_else(|| Err(ProviderError::InvalidRequest("unscripted".into())), |(_, answer)| answer.clone());
            Box::pin(async move { answer })
        }
    }

    fn model(answers: Vec<(&'static str, Result<Completion, ProviderError>)>) -> LiveModel {
        let retry = RetryPolicy { attempts: 2, base: Duration::from_millis(1), max_wait: Duration::from_millis(5) };
        LiveModel::new("scripted:m".into(), Source::Live(Arc::new(ByTool(answers))), Arc::new(Budget::new(100)), retry)
    }

    fn surface() -> ToolSurface {
        ToolSurface { tools: vec![unit_tool(), region_tool(), tool("broken", json!({}))], skipped: 0 }
    }

    #[tokio::test]
    async fn one_tools_failure_falls_back_to_the_template_and_keeps_the_others() {
        let busy = ProviderError::Server { status: 503, message: "busy".into() };
        let model = model(vec![
            (
                "Tool name: temperature",
                Ok(called(
                    PROPOSE_TOOL,
                    json!({"prompt": "Is it cold? Answer in celsius.", "arguments": {"unit": "celsius"}}),
                )),
            ),
            (
                "Tool name: region",
                Ok(called(
                    PROPOSE_TOOL,
                    json!({"prompt": "Echo my region, which is mars.", "arguments": {"zone": "mars"}}),
                )),
            ),
            ("Tool name: broken", Err(busy)),
            ("The tools:", Ok(called(NEGATIVES_TOOL, json!({"prompts": ["What's the capital of Peru?"]})))),
        ]);
        let Drafted::Written(authoring) = draft(&model, &surface(), Family::OpenAi).await else { panic!("written") };
        assert!(
            matches!(&authoring.tools[0], Authored::Model { prompt, .. } if prompt == "Is it cold? Answer in celsius.")
        );
        assert!(
            matches!(&authoring.tools[1], Authored::Template { reason } if reason.contains("inputSchema")),
            "{:?}",
            authoring.tools[1]
        );
        assert!(
            matches!(&authoring.tools[2], Authored::Template { reason } if reason.contains("after 2 attempt(s)") && reason.contains("503")),
            "{:?}",
            authoring.tools[2]
        );
        assert_eq!(authoring.negatives, vec!["What's the capital of Peru?".to_owned()]);

        // The written set: the model's case has its prompt and arguments, the others the
        // template's (the rejected "mars" appears nowhere), and it loads.
        let rendered = super::super::init::render_with(&surface(), Some(&authoring));
        let set = crate::golden::load::parse(Path::new("tasks.yaml"), &rendered.text)
            .unwrap_or_else(|problems| panic!("{problems:?}\n{}", rendered.text));
        assert_eq!(set.cases.len(), 3 + 3 + 1, "{}", rendered.text);
        assert_eq!(set.cases[0].run.prompt[0], "Is it cold? Answer in celsius.");
        assert_eq!(arg_value(&set.cases[0], "unit"), json!("celsius"));
        assert_eq!(arg_value(&set.cases[1], "region"), json!("example"));
        assert!(!rendered.text.contains("mars"), "{}", rendered.text);
        assert_eq!(rendered.text.matches("# draft: edit the prompt and expectations").count(), 7);
        assert_eq!(rendered.text.matches("# written by the model scripted:m").count(), 2, "{}", rendered.text);
        assert_eq!(rendered.text.matches("# written by the template").count(), 5, "{}", rendered.text);
        assert_eq!((rendered.by_model, rendered.by_template.len()), (1, 2));
        assert!(set.cases[6].expect.negative);
    }

    #[test]
    fn a_model_case_without_arguments_says_so_and_has_no_expect_args() {
        let authoring = Authoring {
            model: "scripted:m".into(),
            tools: vec![Authored::Model { prompt: "Which units can you give?".into(), args: Map::new() }],
            negatives: Vec::new(),
            negatives_note: Some("none asked".into()),
        };
        let surface = ToolSurface { tools: vec![unit_tool()], skipped: 0 };
        let rendered = super::super::init::render_with(&surface, Some(&authoring));
        assert!(
            rendered.text.contains("# written by the model scripted:m: the prompt (no arguments)\n"),
            "{}",
            rendered.text
        );
        let set = crate::golden::load::parse(Path::new("tasks.yaml"), &rendered.text).expect("loads");
        assert!(!has_expected_args(&set.cases[0]));
        assert_eq!(set.cases.len(), 4, "three small-talk negatives, no model negative");
    }

    #[tokio::test]
    async fn the_call_cap_leaves_the_remaining_tools_to_the_template() {
        let retry = RetryPolicy { attempts: 2, base: Duration::from_millis(1), max_wait: Duration::from_millis(5) };
        let answers = ByTool(vec![(
            "Tool name:",
            Ok(called(PROPOSE_TOOL, json!({"prompt": "Is it cold? Answer in celsius.", "arguments": {}}))),
        )]);
        let model =
            LiveModel::new("scripted:m".into(), Source::Live(Arc::new(answers)), Arc::new(Budget::new(1)), retry);
        let Drafted::Written(authoring) = draft(&model, &surface(), Family::OpenAi).await else { panic!("written") };
        assert!(matches!(authoring.tools[0], Authored::Model { .. }));
        for authored in &authoring.tools[1..] {
            assert!(
                matches!(authored, Authored::Template { reason } if reason.contains("--max-model-calls")),
                "{authored:?}"
            );
        }
        assert!(authoring.negatives.is_empty());
        assert!(authoring.negatives_note.as_deref().is_some_and(|note| note.contains("--max-model-calls")));
    }

    #[tokio::test]
    async fn a_refused_key_stops_before_the_other_tools_are_asked() {
        let refused = ProviderError::Unauthorized { status: 401, message: "bad key".into() };
        let model = model(vec![("Tool name:", Err(refused.clone())), ("The tools:", Err(refused.clone()))]);
        match draft(&model, &surface(), Family::Anthropic).await {
            Drafted::Refused(error) => assert_eq!(error, refused),
            Drafted::Written(authoring) => panic!("not refused: {authoring:?}"),
        }
        assert_eq!(model.notes(), Vec::<String>::new());
    }

    #[test]
    fn a_missing_key_names_its_variable_and_an_unknown_provider_is_refused() {
        let mut layer1 = Layer1Settings::default();
        layer1.providers.push(crate::settings::layer1::ProviderDef {
            id: "openai".into(),
            api: Api::OpenAi,
            base_url: "https://api.openai.com/v1".into(),
            api_key_env: Some("OPENAI_API_KEY".into()),
            api_key: None,
        });
        let openai = ModelRef { provider: "openai".into(), model: "gpt-4.1-mini".into() };
        let Err(error) = plan(&layer1, &openai) else { panic!("no key") };
        assert_eq!(error.kind, Kind::InvalidInput);
        assert!(error.to_string().contains("`OPENAI_API_KEY` is unset or empty"), "{error}");
        let other = ModelRef { provider: "nope".into(), model: "m".into() };
        let Err(error) = plan(&layer1, &other) else { panic!("no provider") };
        assert!(error.to_string().contains("no provider `nope`"), "{error}");
        layer1.providers[0].api_key = Some("sk-secret-value".into());
        let plan = plan(&layer1, &openai).expect("a key");
        assert!(!plan.refused_hint.contains("sk-secret-value"));
        assert!(plan.refused_hint.contains("OPENAI_API_KEY"), "{}", plan.refused_hint);
    }
}
