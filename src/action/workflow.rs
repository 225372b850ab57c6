//! GitHub Actions workflow commands, as pure functions that return the exact text to print or
//! append: `::add-mask::`, `::stop-commands::`, `::error`/`::warning` annotations, the
//! `$GITHUB_OUTPUT` heredoc form. Escaping follows the runner's rules: in data, `%`, `\r` and
//! `\n` are escaped; in properties, also `:` and `,`.
//!
//! Nothing here prints or touches a file; [`super::run`] does.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};

/// Most `::error` annotations the runner shows for one step.
pub(crate) const MAX_ERROR_ANNOTATIONS: usize = 10;
/// Most `::warning` annotations the runner shows for one step.
pub(crate) const MAX_WARNING_ANNOTATIONS: usize = 10;
/// Longest annotation message we send, in characters (longer ones end with `…`).
pub(crate) const MAX_ANNOTATION_CHARS: usize = 1_000;
/// Longest annotation title we send, in characters.
pub(crate) const MAX_TITLE_CHARS: usize = 200;

/// The severity of an annotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Severity {
    /// `::error`.
    Error,
    /// `::warning`.
    Warning,
}

/// One annotation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Annotation {
    /// Its severity.
    pub severity: Severity,
    /// The file it points to, relative to the workspace.
    pub file: Option<String>,
    /// The line in that file (1-based).
    pub line: Option<usize>,
    /// A short title.
    pub title: String,
    /// The message (untrusted text is fine: it is escaped).
    pub message: String,
}

/// A random token for `::stop-commands::` and heredoc delimiters: 32 hex digits from the
/// process's randomly keyed hasher (seeded by the operating system), never guessable by a
/// server under test.
pub(crate) fn random_token() -> String {
    let mut token = String::with_capacity(32);
    for salt in 0..2u64 {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u64(salt);
        hasher.write_u128(
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos(),
        );
        hasher.write_u32(std::process::id());
        token.push_str(&format!("{:016x}", hasher.finish()));
    }
    token
}

/// Escapes the data part of a workflow command.
pub(crate) fn escape_data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// Escapes a property value of a workflow command.
pub(crate) fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// `::add-mask::VALUE` lines for a secret: the value itself, and for a value of the form
/// `Scheme credential` (as in `Bearer abc`), the credential alone too. Empty values are not
/// masked (the runner would mask nothing useful).
pub(crate) fn add_mask(secret: &str) -> Vec<String> {
    let mut values = vec![secret.trim().to_owned()];
    if let Some((_, credential)) = secret.trim().split_once(' ') {
        values.push(credential.trim().to_owned());
    }
    values.retain(|value| value.chars().count() >= 3);
    values.dedup();
    values.into_iter().map(|value| format!("::add-mask::{}", escape_data(&value))).collect()
}

/// The line that stops workflow-command processing until [`resume_commands`] with the same token.
pub(crate) fn stop_commands(token: &str) -> String {
    format!("::stop-commands::{token}")
}

/// The line that resumes workflow-command processing.
pub(crate) fn resume_commands(token: &str) -> String {
    format!("::{token}::")
}

/// A `::error file=…,line=…,title=…::message` line (or `::warning`, `::notice`).
pub(crate) fn annotation(annotation: &Annotation) -> String {
    let command = match annotation.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let mut properties = Vec::new();
    if let Some(file) = &annotation.file {
        properties.push(format!("file={}", escape_property(file)));
    }
    if let Some(line) = annotation.line {
        properties.push(format!("line={line}"));
    }
    properties.push(format!("title={}", escape_property(&crate::text::clip(&annotation.title, MAX_TITLE_CHARS))));
    format!(
        "::{command} {}::{}",
        properties.join(","),
        escape_data(&crate::text::clip(&annotation.message, MAX_ANNOTATION_CHARS))
    )
}

/// One output in the `$GITHUB_OUTPUT` heredoc form: `name<<DELIM`, the value, `DELIM`. The
/// delimiter is random and never occurs in the value.
pub(crate) fn output_entry(name: &str, value: &str, delimiter: &str) -> String {
    let mut delimiter = format!("ghadelimiter_{delimiter}");
    while value.contains(&delimiter) {
        delimiter.push('_');
    }
    format!("{name}<<{delimiter}\n{value}\n{delimiter}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_and_properties_are_escaped() {
        assert_eq!(escape_data("50%\r\nnext"), "50%25%0D%0Anext");
        assert_eq!(escape_property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
    }

    #[test]
    fn annotations_carry_file_line_and_title() {
        let line = annotation(&Annotation {
            severity: Severity::Error,
            file: Some("out/report.json".into()),
            line: Some(12),
            title: "D-1: discover, answered".into(),
            message: "line one\n::set-output name=x::y".into(),
        });
        assert_eq!(
            line,
            "::error file=out/report.json,line=12,title=D-1%3A discover%2C answered::line one%0A::set-output name=x::y"
        );
        assert_eq!(line.lines().count(), 1);
    }

    #[test]
    fn long_messages_are_cut() {
        let line = annotation(&Annotation {
            severity: Severity::Warning,
            file: None,
            line: None,
            title: "t".into(),
            message: "x".repeat(5_000),
        });
        assert!(line.starts_with("::warning title=t::"));
        assert!(line.chars().count() < MAX_ANNOTATION_CHARS + 40);
    }

    #[test]
    fn masks_cover_the_value_and_the_credential() {
        assert_eq!(add_mask("Bearer abc123"), ["::add-mask::Bearer abc123", "::add-mask::abc123"]);
        assert_eq!(add_mask("tok%en"), ["::add-mask::tok%25en"]);
        assert!(add_mask("").is_empty());
    }

    #[test]
    fn untrusted_text_is_fenced_by_a_random_token() {
        let token = random_token();
        assert_eq!(token.len(), 32);
        assert_ne!(token, random_token());
        assert_eq!(stop_commands(&token), format!("::stop-commands::{token}"));
        assert_eq!(resume_commands(&token), format!("::{token}::"));
    }

    #[test]
    fn outputs_use_a_delimiter_absent_from_the_value() {
        assert_eq!(output_entry("result", "pass", "abc"), "result<<ghadelimiter_abc\npass\nghadelimiter_abc\n");
        let tricky = output_entry("x", "a\nghadelimiter_abc\nb", "abc");
        assert!(tricky.starts_with("x<<ghadelimiter_abc_\n"));
        assert!(tricky.ends_with("\nghadelimiter_abc_\n"));
    }
}
