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
//!
//! Modules keep errors of their own (`thiserror` enums whose causes chain through
//! [`std::error::Error::source`]); the edge turns one into a `UserError` with
//! [`UserError::of`] (a [`Diagnostic`]: the module says the kind and the hint) or
//! [`UserError::from_error`], and prints that, the one renderer. Every reader of a file the user
//! wrote says what is wrong with it as an [`InputProblem`].

use std::fmt;
use std::path::PathBuf;

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

impl UserError {
    /// The error without its `error: ` leader: the message, then each cause and the hint on
    /// lines of their own, as a report that heads it itself quotes it (a run's environment
    /// failure).
    pub(crate) fn body(&self) -> String {
        Body(self).to_string()
    }
}

/// A [`UserError`]'s message, causes and hint, without the leader.
struct Body<'a>(&'a UserError);

impl fmt::Display for Body<'_> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}", self.0.message)?;
        for cause in &self.0.causes {
            write!(formatter, "\n  Caused by: {cause}")?;
        }
        if let Some(hint) = &self.0.hint {
            write!(formatter, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}

impl fmt::Display for UserError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "error: {}", Body(self))
    }
}

impl std::error::Error for UserError {}

impl UserError {
    /// `error` as a user error of `kind`: its text is the message, and each error of its
    /// [`source`](std::error::Error::source) chain a `Caused by:` line, outermost first. A cause
    /// whose text the line above already quotes is not repeated (errors whose message quotes
    /// their cause, as many warnings of ours do, render as before).
    pub(crate) fn from_error(kind: Kind, error: &(dyn std::error::Error + 'static)) -> Self {
        let mut rendered = Self::new(kind, error.to_string());
        let mut above = rendered.message.clone();
        let mut cause = error.source();
        while let Some(error) = cause {
            let text = error.to_string();
            if !above.contains(&text) {
                rendered.causes.push(text.clone());
            }
            above = text;
            cause = error.source();
        }
        rendered
    }

    /// A module's error as a user error: the kind and hint it gives, its causes chained
    /// ([`UserError::from_error`]).
    pub(crate) fn of<E: Diagnostic>(error: &E) -> Self {
        Self::from_error(error.kind(), error).with_hint_opt(error.hint())
    }
}

/// An error a command may end on: it says its [`Kind`] (and so the exit status) and, when there
/// is one, how to fix it; [`UserError::of`] renders it.
pub(crate) trait Diagnostic: std::error::Error + 'static {
    /// The kind of failure.
    fn kind(&self) -> Kind;
    /// How to fix it.
    fn hint(&self) -> Option<String> {
        None
    }
}

/// Writing a file of ours (the baseline, the trends, a cache entry, …): the directory could not
/// be made, the text could not be made, or the file could not be written. The message names the
/// path and quotes the cause, as the warnings that carry it always have.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SaveError {
    /// The directory could not be created.
    #[error("cannot create {}: {source}", .dir.display())]
    CreateDir {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The value could not be turned into JSON.
    #[error("{0}")]
    Encode(#[from] serde_json::Error),
    /// The file could not be written.
    #[error("cannot write {}: {source}", .path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// One problem of a file the user wrote (a golden set, a config file, a price table, a labels
/// file, a report to merge, …): the file; the 1-based line and column, when known; the field
/// (`cases[2].expect_args.city`, `gate.fail_on`), when known; what is wrong; how to fix it.
/// Shown as `FILE:LINE:COLUMN: FIELD: MESSAGE`, each part only when known, the hint on a line
/// of its own (through [`InputProblem::into_error`], exit status 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InputProblem {
    /// The file, as the user named it.
    pub file: PathBuf,
    /// 1-based line, when known.
    pub line: Option<u64>,
    /// 1-based column, when known (only with a line).
    pub column: Option<u64>,
    /// The field, when known.
    pub field: Option<String>,
    /// What is wrong (never a secret value).
    pub message: String,
    /// How to fix it.
    pub hint: Option<String>,
}

impl InputProblem {
    /// A problem of `file` at no known place.
    pub(crate) fn new(file: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Self { file: file.into(), line: None, column: None, field: None, message: message.into(), hint: None }
    }

    /// With this hint.
    #[must_use]
    pub(crate) fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// A problem of `file` at `position` (1-based line and column), in `field`, saying
    /// `message`, with `hint` (none when empty).
    pub(crate) fn located(
        file: impl Into<PathBuf>,
        position: Option<(u64, u64)>,
        field: Option<String>,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        let (line, column) = position.unzip();
        let hint: String = hint.into();
        Self {
            file: file.into(),
            line,
            column,
            field,
            message: message.into(),
            hint: (!hint.is_empty()).then_some(hint),
        }
    }

    /// The line and column, when both are known.
    pub(crate) fn position(&self) -> Option<(u64, u64)> {
        self.line.zip(self.column)
    }

    /// The hint, empty when there is none.
    pub(crate) fn hint_text(&self) -> &str {
        self.hint.as_deref().unwrap_or_default()
    }

    /// This problem as a [`UserError`] (exit status 2).
    pub(crate) fn into_error(self) -> UserError {
        UserError::new(Kind::InvalidInput, self.to_string()).with_hint_opt(self.hint)
    }
}

impl fmt::Display for InputProblem {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(formatter, ":{line}")?;
            if let Some(column) = self.column {
                write!(formatter, ":{column}")?;
            }
        }
        if let Some(field) = &self.field {
            write!(formatter, ": {field}")?;
        }
        write!(formatter, ": {}", self.message)
    }
}

impl std::error::Error for InputProblem {}

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
        assert_eq!(error.to_string().strip_prefix("error: "), Some(error.body().as_str()));
    }

    #[derive(Debug, thiserror::Error)]
    enum Outer {
        #[error("cannot read the set")]
        Read(#[source] Middle),
        #[error("cannot read the set: {0}")]
        Quoted(#[source] Middle),
    }

    #[derive(Debug, thiserror::Error)]
    #[error("line 3 is broken")]
    struct Middle(#[source] std::io::Error);

    impl Diagnostic for Outer {
        fn kind(&self) -> Kind {
            Kind::InvalidInput
        }
        fn hint(&self) -> Option<String> {
            Some("fix line 3".into())
        }
    }

    #[test]
    fn a_chain_renders_one_cause_a_line_and_a_quoted_cause_once() {
        let io = || std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8");
        let error = UserError::of(&Outer::Read(Middle(io())));
        assert_eq!(
            error.to_string(),
            "error: cannot read the set\n  Caused by: line 3 is broken\n  Caused by: not UTF-8\n  hint: fix line 3"
        );
        assert_eq!(error.exit_status().code(), 2);
        let quoted = UserError::of(&Outer::Quoted(Middle(io())));
        assert_eq!(
            quoted.to_string(),
            "error: cannot read the set: line 3 is broken\n  Caused by: not UTF-8\n  hint: fix line 3"
        );
    }

    #[test]
    fn an_input_problem_shows_each_part_it_knows() {
        let problem = InputProblem {
            line: Some(4),
            column: Some(7),
            field: Some("cases[0].promt".into()),
            ..InputProblem::new("golden/tasks.yaml", "unknown key")
        };
        assert_eq!(problem.to_string(), "golden/tasks.yaml:4:7: cases[0].promt: unknown key");
        assert_eq!(InputProblem::new("out/report.json", "not JSON").to_string(), "out/report.json: not JSON");
        let located = InputProblem::located("g.yaml", Some((2, 3)), None, "bad", "");
        assert_eq!(
            (located.to_string(), located.position(), located.hint),
            ("g.yaml:2:3: bad".into(), Some((2, 3)), None)
        );
        let error = InputProblem::new("a.yaml", "empty").with_hint("add a case").into_error();
        assert_eq!(error.to_string(), "error: a.yaml: empty\n  hint: add a case");
        assert_eq!(error.exit_status().code(), 2);
    }
}
