//! One type for a broken rule found inside a message or a tool definition, before grading: the
//! typed shape checks ([`super::shapes`]) and the tool-definition checks ([`super::schema`])
//! both return [`Problem`]s, each naming the requirement that grades it. A probe or a passive
//! rule then turns the problems of one requirement into a [`super::finding::Finding`].

use std::fmt;

/// How a [`Problem`] is graded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Severity {
    /// A MUST violation.
    Fail,
    /// A SHOULD violation, an exceeded work bound, or a case where the spec asks for graceful
    /// handling rather than a verdict (unsupported dialect).
    Warn,
}

/// One broken rule, with the requirement id that grades it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    /// The requirement that grades it, e.g. `"M-10"`, `"M-7"`, `"T-1"`.
    pub id: &'static str,
    /// How it is graded.
    pub severity: Severity,
    /// What is wrong, naming the place (`result.tools[0].name`: …).
    pub message: String,
}

impl Problem {
    /// A MUST violation of `id`.
    pub(crate) fn fail(id: &'static str, message: String) -> Self {
        Problem { id, severity: Severity::Fail, message }
    }

    /// A SHOULD-level problem of `id`.
    pub(crate) fn warn(id: &'static str, message: String) -> Self {
        Problem { id, severity: Severity::Warn, message }
    }

    /// The message, prefixed with `[id] ` when another requirement than `own` grades it (so a
    /// reader of a joined list sees which rule each item belongs to).
    pub(crate) fn tagged(&self, own: &str) -> String {
        if self.id == own { self.message.clone() } else { format!("[{}] {}", self.id, self.message) }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.message)
    }
}

/// The problems joined with `; `, each tagged relative to `own` (see [`Problem::tagged`]).
pub(crate) fn join(problems: &[Problem], own: &str) -> String {
    problems.iter().map(|problem| problem.tagged(own)).collect::<Vec<_>>().join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_of_another_requirement_are_tagged_in_joined_text() {
        let problems = [
            Problem::fail("M-10", "`result`: bad".into()),
            Problem::fail("M-7", "`result.resultType`: missing".into()),
        ];
        assert_eq!(join(&problems, "M-10"), "`result`: bad; [M-7] `result.resultType`: missing");
        assert_eq!(problems[1].to_string(), "`result.resultType`: missing");
    }
}
