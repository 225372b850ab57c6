//! Findings: what one probe concluded about one requirement, before grading.
//!
//! A probe says whether the rule was kept or broken (or could not be exercised); grading turns
//! that into a report status using the requirement's level: a broken MUST fails, a broken
//! SHOULD warns, and [`Outcome::Ambiguous`] always warns (spec ambiguities, spec-notes §19).

use crate::mcp::exchange::Exchange;
use crate::report::model::{Evidence, Level, Status};

/// What a probe concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Outcome {
    /// The rule was exercised and kept.
    Kept,
    /// Not exercisable here (capability absent, fixture needed, other transport).
    NotApplicable,
    /// Kept in its MUST part but not in a SHOULD part, or the spec is ambiguous: a warning.
    Ambiguous,
    /// The rule was broken.
    Broken,
}

/// One finding about one requirement.
#[derive(Debug, Clone)]
pub(crate) struct Finding {
    /// The requirement id.
    pub id: &'static str,
    /// What the probe concluded.
    pub outcome: Outcome,
    /// A message a user can act on.
    pub message: String,
    /// Evidence excerpts.
    pub evidence: Vec<Evidence>,
    /// Set when an exchange given as evidence ([`Finding::with`]) got an answer that cannot be
    /// read as one JSON-RPC message: the blocked reason, naming the method (and that it was not
    /// sent when an earlier answer was held open) and the rule that grades it, `(see M-11)` or,
    /// for a stdio answer in another framing, `()`. A broken finding with it is blocked,
    /// not failed.
    pub unreadable: Option<String>,
    /// Set when an exchange given as evidence got no answer at all (the connection was refused
    /// or closed, or the process exited): after the server stopped answering, such a finding
    /// is blocked, not a verdict on its own rule.
    pub unanswered: bool,
    /// Set on the finding that says the server stopped answering after a probe: it fails its
    /// row whatever the row's level (a server that dies on a request passes nothing).
    pub crash: bool,
}

impl Finding {
    /// A finding with no evidence.
    pub(crate) fn new(id: &'static str, outcome: Outcome, message: impl Into<String>) -> Self {
        Self {
            id,
            outcome,
            message: message.into(),
            evidence: Vec::new(),
            unreadable: None,
            unanswered: false,
            crash: false,
        }
    }

    /// The rule was kept.
    pub(crate) fn kept(id: &'static str, message: impl Into<String>) -> Self {
        Self::new(id, Outcome::Kept, message)
    }

    /// The rule was broken.
    pub(crate) fn broken(id: &'static str, message: impl Into<String>) -> Self {
        Self::new(id, Outcome::Broken, message)
    }

    /// A warning whatever the level.
    pub(crate) fn ambiguous(id: &'static str, message: impl Into<String>) -> Self {
        Self::new(id, Outcome::Ambiguous, message)
    }

    /// Not exercisable here; the message says why.
    pub(crate) fn not_applicable(id: &'static str, message: impl Into<String>) -> Self {
        Self::new(id, Outcome::NotApplicable, message)
    }

    /// Adds the request and response of an exchange as evidence.
    pub(crate) fn with(mut self, exchange: &Exchange) -> Self {
        self.evidence.extend(evidence_of(exchange));
        self.unanswered |= exchange.unanswered();
        if self.unreadable.is_some() {
            return self;
        }
        let method = exchange.method.as_deref();
        if let Some(crate::mcp::exchange::Failure::Misframed { framing, .. }) = &exchange.failure {
            // stdio: the answer came in another framing than one message per line (X-1's).
            self.unreadable = Some(format!(
                "the answer to `{}` was not one line of JSON ({framing}) (see X-1)",
                method.unwrap_or("a request")
            ));
            return self;
        }
        if exchange.unreadable_answer().is_none() {
            return self;
        }
        self.unreadable = Some(match (method, &exchange.failure) {
            (None, _) => "the answer to a malformed request could not be read (see M-11)".into(),
            (Some(method), Some(crate::mcp::exchange::Failure::Skipped(_))) => format!(
                "`{method}` was not sent: an earlier `{method}` answer was held open unreadable, so it would only have waited for the timeout (see M-11)"
            ),
            (Some(method), _) => format!("the answer to `{method}` could not be read (see M-11)"),
        });
        self
    }

    /// Adds a piece of evidence.
    pub(crate) fn with_text(mut self, label: &str, text: impl Into<String>) -> Self {
        self.evidence.push(Evidence { label: label.into(), text: text.into() });
        self
    }
}

/// The request and response excerpts of an exchange.
pub(crate) fn evidence_of(exchange: &Exchange) -> Vec<Evidence> {
    let mut evidence = vec![Evidence { label: "request".into(), text: exchange.request_excerpt.clone() }];
    let mut response = String::new();
    if let Some(status) = exchange.status {
        response.push_str(&format!("HTTP {status}\n"));
        for (name, value) in &exchange.headers {
            if matches!(
                name.as_str(),
                "content-type" | "mcp-session-id" | "x-accel-buffering" | "www-authenticate" | "allow"
            ) {
                response.push_str(&format!("{name}: {value}\n"));
            }
        }
        response.push('\n');
    }
    if exchange.method.as_deref() == Some("tools/call") && exchange.result().is_some() {
        // What a tool returns may hold anything (files, environment, personal data): keep only
        // its shape.
        response
            .push_str(&format!("(tool result withheld from the report; its shape: {})", shape_of(exchange.result())));
    } else if exchange.body_excerpt.is_empty() {
        match &exchange.failure {
            Some(failure) => response.push_str(&format!("({failure})")),
            None => response.push_str("(empty body)"),
        }
    } else {
        response.push_str(&exchange.body_excerpt);
        if let Some(failure) = &exchange.failure {
            response.push_str(&format!("\n({failure})"));
        }
    }
    if exchange.messages_not_kept > 0 {
        response.push_str(&format!(
            "\n({} other messages came for this request: the first {} were kept, the other {} counted)",
            exchange.messages.len() + exchange.messages_not_kept,
            exchange.messages.len(),
            exchange.messages_not_kept
        ));
    }
    evidence.push(Evidence { label: "response".into(), text: response });
    evidence
}

/// A one-line description of a JSON value's structure: keys and types, no values.
pub(crate) fn shape_of(value: Option<&serde_json::Value>) -> String {
    use serde_json::Value;
    fn kind(value: &Value, depth: usize) -> String {
        match value {
            Value::Null => "null".into(),
            Value::Bool(_) => "boolean".into(),
            Value::Number(_) => "number".into(),
            Value::String(text) => format!("string({} bytes)", text.len()),
            Value::Array(items) if depth < 2 => {
                format!("[{}]", items.iter().take(3).map(|item| kind(item, depth + 1)).collect::<Vec<_>>().join(", "))
            }
            Value::Array(items) => format!("array({})", items.len()),
            Value::Object(map) if depth < 3 => format!(
                "{{{}}}",
                map.iter()
                    .take(12)
                    .map(|(key, item)| format!("{key}: {}", kind(item, depth + 1)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Value::Object(map) => format!("object({} keys)", map.len()),
        }
    }
    value.map(|value| kind(value, 0)).unwrap_or_else(|| "none".into())
}

/// `n` and the noun, singular or plural (`1 line`, `3 lines`): messages read as English.
pub(crate) fn count(n: usize, singular: &str, plural: &str) -> String {
    if n == 1 { format!("1 {singular}") } else { format!("{n} {plural}") }
}

/// The report status of an outcome for a requirement of this level.
pub(crate) fn grade(outcome: Outcome, level: Level) -> Status {
    match (outcome, level) {
        (Outcome::Kept, _) => Status::Pass,
        (Outcome::NotApplicable, _) => Status::NotApplicable,
        (Outcome::Ambiguous, _) => Status::Warn,
        (Outcome::Broken, Level::Must) => Status::Fail,
        (Outcome::Broken, Level::Should | Level::Info) => Status::Warn,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_evidence_counts_the_messages_that_were_not_kept() {
        let exchange = Exchange {
            messages: vec![serde_json::json!({"method": "a"}); 3],
            messages_not_kept: 9997,
            ..Exchange::default()
        };
        let response = evidence_of(&exchange).pop().expect("response evidence").text;
        assert!(
            response.ends_with(
                "(10000 other messages came for this request: the first 3 were kept, the other 9997 counted)"
            ),
            "{response}"
        );
    }

    #[test]
    fn broken_fails_a_must_and_warns_otherwise() {
        assert_eq!(grade(Outcome::Broken, Level::Must), Status::Fail);
        assert_eq!(grade(Outcome::Broken, Level::Should), Status::Warn);
        assert_eq!(grade(Outcome::Broken, Level::Info), Status::Warn);
    }

    #[test]
    fn kept_ambiguous_and_not_applicable_grade_the_same_at_every_level() {
        for level in [Level::Must, Level::Should, Level::Info] {
            assert_eq!(grade(Outcome::Kept, level), Status::Pass);
            assert_eq!(grade(Outcome::Ambiguous, level), Status::Warn);
            assert_eq!(grade(Outcome::NotApplicable, level), Status::NotApplicable);
        }
    }
}
