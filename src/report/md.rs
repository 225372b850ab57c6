//! Markdown text helpers of the renderers: escaping text of others, keeping our messages' code
//! spans, code spans and blocks no backtick can close early. Pure.

/// Escapes untrusted text for use inline (a paragraph, a list item or a table cell): no HTML,
/// no markdown structure, no line breaks, no control characters.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\r' | '\n' | '\t' => out.push(' '),
            // Inline markup; `#` and `!` too, for safety. Escaped text never starts a line, so
            // line-start markers (`-`, `+`, `1.`) need no escaping.
            '\\' | '`' | '*' | '_' | '[' | ']' | '{' | '}' | '|' | '#' | '~' | '!' | '$' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Escapes a message of ours, keeping its balanced single-backtick spans as code spans (our
/// messages quote names and values that way); anything unbalanced is escaped like any text.
pub(crate) fn message(text: &str) -> String {
    let parts: Vec<&str> = text.split('`').collect();
    if parts.len() < 3 || parts.len() % 2 == 0 {
        return escape(text);
    }
    parts
        .iter()
        .enumerate()
        .map(|(index, part)| {
            if index % 2 == 0 {
                escape(part)
            } else if part.is_empty() {
                String::new()
            } else {
                code_span(part)
            }
        })
        .collect()
}

/// An inline code span that no backtick in `text` can close early.
pub(crate) fn code_span(text: &str) -> String {
    let text: String = text
        .chars()
        .map(|c| if matches!(c, '\r' | '\n' | '\t') { ' ' } else { c })
        .filter(|c| !c.is_control())
        .collect();
    if text.trim().is_empty() {
        return "(empty)".to_owned();
    }
    let fence = "`".repeat(longest_backtick_run(&text) + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') { " " } else { "" };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// A code span for a table cell: a `|` inside a code span would still end the cell, so it is
/// escaped (GitHub shows `\|` in a table's code span as `|`).
pub(crate) fn table_code(text: &str) -> String {
    code_span(text).replace('|', "\\|")
}

/// A fenced code block whose fence is longer than any backtick run in `text`, ending with a
/// newline.
pub(crate) fn code_block(text: &str) -> String {
    let text: String = text
        .chars()
        .map(|c| if c == '\r' { '\n' } else { c })
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
        .collect();
    let fence = "`".repeat((longest_backtick_run(&text) + 1).max(3));
    let newline = if text.ends_with('\n') { "" } else { "\n" };
    format!("{fence}\n{text}{newline}{fence}\n")
}

/// The length of the longest run of consecutive backticks in `text`.
fn longest_backtick_run(text: &str) -> usize {
    let (mut longest, mut run) = (0, 0);
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    longest
}
