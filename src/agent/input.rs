//! Multi round-trip requests (MCP 2026-07-28, spec-notes §9): a `tools/call` answered with
//! `resultType: "input_required"` and `inputRequests` is answered from the golden case's
//! `input_responses` script and re-sent — same method and params, plus `inputResponses` and the
//! `requestState` echoed exactly, under a new JSON-RPC id — up to `max_input_rounds`. The model
//! never sees these rounds; the trace keeps them.
//!
//! An entry answers a request by its `key`, or by `match` (the request's `method`, a regex over
//! `params.message`, property names of `params.requestedSchema`), at most `times` rounds per
//! trial. A request no entry answers gets `on_unmatched_input_request`: `decline` or `cancel`
//! (elicitation only), or `fail`, which fails the trial. The client declares only the capabilities
//! its script can answer; a server that asks for another, or keeps asking past the bound, fails
//! the trial with that reason (a finding about the server).

use serde_json::{Map, Value, json};

/// The script, typed by the golden-set loader; this module plays it.
pub(crate) use crate::golden::case::{InputEntry, InputScript, Unmatched};

/// The input methods a script can answer, and the client capability each needs.
const CAPABILITIES: [(&str, &str); 3] =
    [("elicitation/create", "elicitation"), ("sampling/createMessage", "sampling"), ("roots/list", "roots")];

/// One round of a tool call: what the server asked and what we answered.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Round {
    /// Each request's key and method.
    pub requests: Vec<(String, String)>,
    /// The `inputResponses` sent.
    pub responses: Value,
    /// Whether a `requestState` was echoed.
    pub request_state: bool,
}

/// Why the rounds could not go on: the trial fails with this reason.
pub(crate) type Stop = String;

/// The client capabilities this script can answer (`_meta` of the request): one per input
/// method an entry matches, plus elicitation when unmatched requests are declined or
/// cancelled (an elicitation answer).
pub(crate) fn capabilities(script: &InputScript) -> Value {
    let mut capabilities = Map::new();
    for (method, capability) in CAPABILITIES {
        let used = script.entries.iter().any(|entry| answers(entry) == Some(method))
            || (method == "elicitation/create" && script.unmatched != Unmatched::Fail);
        if used {
            let value = if capability == "elicitation" { json!({"form": {}}) } else { json!({}) };
            capabilities.insert(capability.to_owned(), value);
        }
    }
    Value::Object(capabilities)
}

/// The script's state within one trial.
#[derive(Debug)]
pub(crate) struct Session<'a> {
    script: &'a InputScript,
    used: Vec<usize>,
}

impl<'a> Session<'a> {
    /// A fresh per-trial state of `script` (`times` counts per trial).
    pub(crate) fn new(script: &'a InputScript) -> Self {
        Session { script, used: vec![0; script.entries.len()] }
    }

    /// The most rounds per tool call.
    pub(crate) fn max_rounds(&self) -> usize {
        self.script.max_rounds
    }

    /// The client capabilities to declare.
    pub(crate) fn capabilities(&self) -> Value {
        capabilities(self.script)
    }

    /// Answers every request of one `inputRequests` object, or says why the trial must stop.
    pub(crate) fn answer(&mut self, requests: &Map<String, Value>) -> Result<(Value, Vec<(String, String)>), Stop> {
        let declared = capabilities(self.script);
        let mut responses = Map::new();
        let mut asked = Vec::new();
        for (key, request) in requests {
            let method = request.get("method").and_then(Value::as_str).unwrap_or("");
            asked.push((key.clone(), method.to_owned()));
            let capability = CAPABILITIES.iter().find(|(name, _)| *name == method).map(|(_, capability)| *capability);
            match capability {
                None => {
                    return Err(format!("the server asked for input with an unknown method `{method}` (key `{key}`)"));
                }
                Some(capability) if declared.get(capability).is_none() => {
                    return Err(format!(
                        "the server asked for `{method}` (key `{key}`), but this client did not declare the `{capability}` capability"
                    ));
                }
                Some(_) => {}
            }
            let params = request.get("params").unwrap_or(&Value::Null);
            let found = self.script.entries.iter().enumerate().find(|(index, entry)| {
                entry.times.is_none_or(|times| self.used[*index] < times) && matches(entry, key, method, params)
            });
            let response = match (found, self.script.unmatched) {
                (Some((index, entry)), _) => {
                    self.used[index] += 1;
                    entry.respond.clone()
                }
                (None, Unmatched::Decline) if method == "elicitation/create" => json!({"action": "decline"}),
                (None, Unmatched::Cancel) if method == "elicitation/create" => json!({"action": "cancel"}),
                (None, _) => {
                    let message = params.get("message").and_then(Value::as_str).unwrap_or("");
                    return Err(format!(
                        "no input response is scripted for `{key}` ({method}{}); add an `input_responses` entry",
                        if message.is_empty() {
                            String::new()
                        } else {
                            format!(": \"{}\"", crate::text::clip(message, 80))
                        }
                    ));
                }
            };
            responses.insert(key.clone(), response);
        }
        Ok((Value::Object(responses), asked))
    }
}

/// The input method `entry` answers: its `match.method`, or for a `key` entry the method its
/// `respond` is shaped for (`action` → elicitation, `roots` → roots, else sampling).
fn answers(entry: &InputEntry) -> Option<&str> {
    match (&entry.method, &entry.key) {
        (Some(method), _) => Some(method),
        (None, Some(_)) if entry.respond.get("action").is_some() => Some("elicitation/create"),
        (None, Some(_)) if entry.respond.get("roots").is_some() => Some("roots/list"),
        (None, Some(_)) => Some("sampling/createMessage"),
        (None, None) => None,
    }
}

fn matches(entry: &InputEntry, key: &str, method: &str, params: &Value) -> bool {
    if let Some(wanted) = &entry.key {
        return wanted == key;
    }
    if entry.method.as_deref() != Some(method) {
        return false;
    }
    if let Some(pattern) = &entry.message {
        let message = params.get("message").and_then(Value::as_str).unwrap_or("");
        if !pattern.is_match(message) {
            return false;
        }
    }
    let properties = params.pointer("/requestedSchema/properties").and_then(Value::as_object);
    entry.schema_has.iter().all(|name| properties.is_some_and(|properties| properties.contains_key(name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(yaml_entries: &str, unmatched: &str) -> InputScript {
        let text = format!(
            "version: 1\ncases:\n  - id: a\n    prompt: p\n    expect_tool: t\n    on_unmatched_input_request: {unmatched}\n    input_responses:\n{yaml_entries}"
        );
        let set = crate::golden::load::parse(std::path::Path::new("s.yaml"), &text).expect("valid");
        set.cases[0].inputs.clone().expect("a script")
    }

    fn elicit(message: &str) -> Value {
        json!({"method": "elicitation/create", "params": {"mode": "form", "message": message,
            "requestedSchema": {"type": "object", "properties": {"confirm": {"type": "boolean"}}}}})
    }

    #[test]
    fn a_request_matched_by_regex_is_answered_at_most_times_rounds() {
        let script = script(
            "      - match: {method: elicitation/create, message: \"(?i)confirm\", schema_has: [confirm]}\n        respond: {action: accept, content: {confirm: true}}\n        times: 1\n",
            "fail",
        );
        assert_eq!(capabilities(&script), json!({"elicitation": {"form": {}}}));
        let mut session = Session::new(&script);
        let requests = json!({"ok": elicit("Please confirm the order")});
        let (responses, asked) = session.answer(requests.as_object().unwrap()).expect("answered");
        assert_eq!(responses, json!({"ok": {"action": "accept", "content": {"confirm": true}}}));
        assert_eq!(asked, vec![("ok".to_owned(), "elicitation/create".to_owned())]);
        let again = session.answer(requests.as_object().unwrap()).expect_err("times: 1 is used up");
        assert!(again.contains("no input response is scripted for `ok`"), "{again}");
    }

    #[test]
    fn an_unmatched_elicitation_is_declined_when_the_case_says_so() {
        let script = script("      - key: other\n        respond: {action: accept}\n", "decline");
        let mut session = Session::new(&script);
        let (responses, _) =
            session.answer(json!({"k": elicit("Delete everything?")}).as_object().unwrap()).expect("declined");
        assert_eq!(responses, json!({"k": {"action": "decline"}}));
    }

    #[test]
    fn a_capability_that_was_not_declared_stops_the_trial() {
        let script = script("      - match: {method: elicitation/create}\n        respond: {action: accept}\n", "fail");
        let mut session = Session::new(&script);
        let stop = session
            .answer(json!({"s": {"method": "sampling/createMessage", "params": {"messages": []}}}).as_object().unwrap())
            .expect_err("not declared");
        assert!(stop.contains("did not declare the `sampling` capability"), "{stop}");
    }
}
