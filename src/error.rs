//! Expected failures of our own (bad input, an unreachable server, a broken environment, …):
//! [`UserError`] carries a message, its causes and a hint, renders them uv-style
//!
//! ```text
//! error: invalid --timeout-seconds: `-1` is not a timeout
//!   Caused by: …
//!   hint: give a number of seconds greater than 0 and at most 3600, e.g. 10
//! ```
//!
//! and maps to its exit status through the exit table (`Kind::exit_status`, kept beside the
//! table in `verdict`, so that this module depends on nothing). A misbehaving server under
//! test is never a `UserError`: it is a finding in the report.

use std::fmt;

/// What kind of expected failure; decides the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A flag, input, environment variable or file is invalid (exit 2).
    InvalidInput,
    /// The server could not be reached, started or its tools listed, outside an evaluation
    /// (`golden check --server-url`, `golden init`; exit 3).
    Unreachable,
    /// Our own environment failed: a runtime, a report file, a port (exit 4).
    Environment,
    /// A model provider is unusable (exit 5; layers 1–3).
    Provider,
    /// A budget or call cap stopped the run early (exit 6; layers 1–3).
    Budget,
}

/// An expected failure with its rendering parts; never holds a secret (callers redact first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UserError {
    /// The kind (and so the exit status).
    pub kind: Kind,
    /// One line saying what failed.
    pub message: String,
    /// Underlying causes, outermost first.
    pub causes: Vec<String>,
    /// How to fix it.
    pub hint: Option<String>,
}

impl UserError {
    /// A new error of `kind`.
    pub(crate) fn new(kind: Kind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into(), causes: Vec::new(), hint: None }
    }

    /// Adds a cause.
    #[must_use]
    pub(crate) fn caused_by(mut self, cause: impl fmt::Display) -> Self {
        self.causes.push(cause.to_string());
        self
    }

    /// Sets the hint.
    #[must_use]
    pub(crate) fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Sets the hint when there is one.
    #[must_use]
    pub(crate) fn with_hint_opt(mut self, hint: Option<String>) -> Self {
        self.hint = hint;
        self
    }
}

impl fmt::Display for UserError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "error: {}", self.message)?;
        for cause in &self.causes {
            write!(formatter, "\n  Caused by: {cause}")?;
        }
        if let Some(hint) = &self.hint {
            write!(formatter, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for UserError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_render_message_causes_and_hint() {
        let error = UserError::new(Kind::Environment, "cannot write the reports to `out`")
            .caused_by("permission denied")
            .with_hint("check that --out points to a writable directory");
        assert_eq!(
            error.to_string(),
            "error: cannot write the reports to `out`\n  Caused by: permission denied\n  hint: check that --out points to a writable directory"
        );
        assert_eq!(error.exit_status().code(), 4);
    }
}
