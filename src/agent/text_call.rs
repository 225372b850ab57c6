//! A tool call the model wrote as text: an answer with no call whose text is a call of an
//! offered tool in JSON (`{"name": …, "arguments": …}`, alone, in a code fence or in a
//! `<tool_call>` block), as models write them when the model server's chat template or
//! tool-call parser does not turn them into calls (llama.cpp without `--jinja`, an Ollama model
//! whose template has no tools, vLLM without `--tool-call-parser`). Never counted as a call:
//! the trace and the summary say what the model wrote and that the server is what to fix.

use serde_json::Value;

use crate::providers::ToolSpec;

/// What the trial's reason adds when the model wrote a call of `tool` as text.
pub(crate) fn note(tool: &str) -> String {
    format!(
        "the model wrote a call of `{tool}` as text, not as a tool call: check the model server's chat template or \
         tool-call parser (llama.cpp: --jinja; Ollama: the model's template; vLLM: --tool-call-parser)"
    )
}

/// The offered tool `text` calls, when the whole answer (or its one JSON object) is a call.
pub(crate) fn written_call(text: &str, offered: &[ToolSpec]) -> Option<String> {
    let mut body = text.trim();
    for (open, close) in [("<tool_call>", "</tool_call>"), ("```json", "```"), ("```", "```")] {
        if let Some(rest) = body.strip_prefix(open) {
            body = rest.strip_suffix(close).unwrap_or(rest).trim();
            break;
        }
    }
    let parsed = serde_json::from_str::<Value>(body).ok().or_else(|| {
        let (start, end) = (body.find('{')?, body.rfind('}')?);
        serde_json::from_str::<Value>(body.get(start..=end)?).ok()
    })?;
    let call = match &parsed {
        Value::Array(calls) => calls.first()?,
        other => other,
    };
    let name = call
        .get("name")
        .or_else(|| call.pointer("/function/name"))
        .or_else(|| call.get("tool"))
        .and_then(Value::as_str)?;
    offered.iter().find(|spec| spec.name == name).map(|spec| spec.name.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn offered() -> Vec<ToolSpec> {
        vec![ToolSpec { name: "get_time".into(), description: None, input_schema: json!({"type": "object"}) }]
    }

    #[test]
    fn calls_written_as_text_are_recognised_and_other_text_is_not() {
        let named = |text: &str| written_call(text, &offered());
        assert_eq!(named(r#"{"name": "get_time", "arguments": {"tz": "UTC"}}"#).as_deref(), Some("get_time"));
        assert_eq!(
            named("<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>").as_deref(),
            Some("get_time")
        );
        assert_eq!(named("```json\n{\"name\": \"get_time\"}\n```").as_deref(), Some("get_time"));
        assert_eq!(named(r#"[{"type": "function", "function": {"name": "get_time"}}]"#).as_deref(), Some("get_time"));
        assert_eq!(named(r#"Calling it: {"name": "get_time", "parameters": {}}"#).as_deref(), Some("get_time"));
        assert_eq!(named(r#"{"name": "set_time", "arguments": {}}"#), None, "a tool not offered");
        assert_eq!(named("It is noon."), None);
        assert_eq!(named(r#"{"time": "12:00"}"#), None);
    }
}
