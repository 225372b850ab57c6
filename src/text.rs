//! Small text helpers for messages shared by several modules: clipping a text to a number of
//! characters at a word boundary ([`clip`]), a clause boundary ([`clip_clauses`]) or at any
//! character ([`clip_chars`]), naming a JSON value's type, and showing a path as the user gave
//! it.

use serde_json::Value;

/// What a clipped text does not end on before its `…`: a dangling opening bracket or quote, a
/// separator or a dash left by the word cut after it.
const DANGLING: &[char] = &['(', '[', '{', '"', '\'', '“', '‘', ',', ';', ':', '—', '–', '-', '/', '='];

/// `text` cut to at most `max` characters (not bytes; never inside a UTF-8 sequence), with `…`
/// when cut, so a sentence never ends mid-word. The cut is at a word boundary (whitespace: a
/// hyphen joins `accept-baseline` into one word), and never inside an inline code span (text
/// between single backticks, as [`crate::report`] renders them): a cut that would land in
/// one goes before the span, whole. A dangling bracket, quote, separator or dash before the
/// cut is dropped too ("see (" before a span cut away becomes "see…"). Two exceptions keep a
/// text from losing most of its room: a word longer than half of `max` is cut inside itself,
/// and a code span that opens the text and is longer than `max` is cut inside and closed
/// after the `…`, so the markdown stays balanced.
pub(crate) fn clip(text: &str, max: usize) -> String {
    let Some((end, _)) = text.char_indices().nth(max) else { return text.to_owned() };
    let head = &text[..end];
    let mut cut =
        if text[end..].starts_with(char::is_whitespace) { end } else { head.rfind(char::is_whitespace).unwrap_or(0) };
    if head[..cut].chars().count() < max / 2 {
        cut = end;
    }
    if let Some(open) = open_code_span(&text[..cut]) {
        cut = open;
    }
    let kept = text[..cut].trim_end_matches(|c: char| c.is_whitespace() || DANGLING.contains(&c));
    if !kept.is_empty() {
        return format!("{kept}…");
    }
    match open_code_span(head) {
        Some(_) => format!("{head}…`"),
        None => format!("{head}…"),
    }
}

/// `text` cut to at most `max` characters like [`clip`], but at a clause boundary (`; `) when
/// one leaves at least a third of `max`: the clauses after it are dropped whole (`; …`), so a
/// reason that puts its why first and its context after keeps the why and never ends on a
/// context clause cut midway ("the model made…"). Without such a boundary, [`clip`].
pub(crate) fn clip_clauses(text: &str, max: usize) -> String {
    if text.chars().nth(max).is_none() {
        return text.to_owned();
    }
    let boundary = text
        .match_indices("; ")
        .map(|(index, _)| index)
        .take_while(|&index| text[..index].chars().count() + 3 <= max)
        .filter(|&index| open_code_span(&text[..index]).is_none())
        .last()
        .filter(|&index| text[..index].chars().count() >= max / 3);
    match boundary {
        Some(index) => format!("{}; …", &text[..index]),
        None => clip(text, max),
    }
}

/// The byte index of the backtick that opens a code span `text` leaves open (an odd number of
/// backticks), if any.
fn open_code_span(text: &str) -> Option<usize> {
    let mut open = None;
    for (index, _) in text.char_indices().filter(|(_, c)| *c == '`') {
        open = if open.is_some() { None } else { Some(index) };
    }
    open
}

/// `text` cut to its first `max` characters, with `…` when cut: for raw data shown as data
/// (evidence in a code block), where a word boundary means nothing.
pub(crate) fn clip_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}

/// `path` as reports show it: relative to `base` (the working directory, which is the workspace
/// in the Action) when it lies below it, so a report or a pull-request comment never shows the
/// runner's directories; as given otherwise.
pub(crate) fn shown_path(path: &std::path::Path, base: Option<&std::path::Path>) -> String {
    match base.and_then(|base| path.strip_prefix(base).ok()) {
        Some(relative) if !relative.as_os_str().is_empty() => relative.display().to_string(),
        _ => path.display().to_string(),
    }
}

/// [`shown_path`] against the current working directory.
pub(crate) fn shown(path: &std::path::Path) -> String {
    shown_path(path, std::env::current_dir().ok().as_deref())
}

/// Why a file could not be read, in words a user acts on: "no such file", "permission denied",
/// "it is a directory", else the system's description of the error kind.
pub(crate) fn io_reason(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        std::io::ErrorKind::IsADirectory => "it is a directory".into(),
        std::io::ErrorKind::InvalidData => "it is not UTF-8 text".into(),
        kind => kind.to_string(),
    }
}

/// The JSON type of a value, for messages: "null", "a boolean", "a number", "a string", "an
/// array" or "an object".
pub(crate) fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The YAML parser's message without its own `error: line N column M:` prefix (the position is
/// shown once, as `file:line:col`).
pub(crate) fn saphyr_message(text: &str) -> String {
    let first = text.lines().next().unwrap_or_default();
    let rest = first.strip_prefix("error: ").unwrap_or(first);
    if rest.contains("budget breached: Depth") {
        return "nested deeper than 64 levels, the most a YAML file here may nest".to_owned();
    }
    match rest.strip_prefix("line ").and_then(|rest| rest.split_once(": ")) {
        Some((position, message)) if position.contains("column") => message.to_owned(),
        _ => rest.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_clauses_drops_whole_clauses_and_falls_back_to_a_word_cut() {
        assert_eq!(clip_clauses("short; text", 20), "short; text");
        assert_eq!(clip_clauses("the why is here; context one; context two", 32), "the why is here; context one; …");
        assert_eq!(clip_clauses("why; then a long context clause", 20), "why; then a long…");
        // A `; ` inside a code span is not a boundary.
        assert_eq!(clip_clauses("see `a; b; c` and more text here", 20), "see `a; b; c` and…");
    }

    #[test]
    fn a_path_below_the_workspace_is_shown_relative_and_any_other_as_given() {
        use std::path::Path;
        let workspace = Path::new("/github/workspace");
        assert_eq!(shown_path(Path::new("/github/workspace/golden/tasks.yaml"), Some(workspace)), "golden/tasks.yaml");
        assert_eq!(shown_path(Path::new("/elsewhere/tasks.yaml"), Some(workspace)), "/elsewhere/tasks.yaml");
        assert_eq!(shown_path(Path::new("golden/tasks.yaml"), Some(workspace)), "golden/tasks.yaml");
        assert_eq!(shown_path(workspace, Some(workspace)), "/github/workspace");
        assert_eq!(shown_path(Path::new("/a/b"), None), "/a/b");
    }

    #[test]
    fn a_missing_file_reads_as_no_such_file() {
        let error = std::fs::read_to_string("/nonexistent/file/for/a/test").expect_err("missing");
        assert_eq!(io_reason(&error), "no such file");
    }

    #[test]
    fn clip_counts_characters_not_bytes() {
        assert_eq!(clip("ééé", 3), "ééé");
        assert_eq!(clip("éééé", 3), "ééé…");
        assert_eq!(clip("ééé éééé", 6), "ééé…");
        assert_eq!(clip_chars("éééé", 3), "ééé…");
        assert_eq!(json_kind(&serde_json::json!([1])), "an array");
    }

    #[test]
    fn a_cut_inside_a_code_span_goes_before_the_span() {
        let text = "the recordings are missing: record them again with `--cassettes DIR` and `--record`";
        let inside = |needle: &str| text.find(needle).expect("in the text") + 2;
        // The limit inside `--cassettes`, then inside `DIR` (after the space in the span).
        for limit in [inside("--cassettes"), inside("DIR")] {
            let clipped = clip(text, limit);
            assert_eq!(clipped, "the recordings are missing: record them again with…", "limit {limit}");
            assert_eq!(clipped.matches('`').count() % 2, 0, "no span left open: {clipped}");
        }
        // Past the span: it is kept whole.
        let after = text.find(" and").expect("and") + 4;
        assert_eq!(clip(text, after), "the recordings are missing: record them again with `--cassettes DIR` and…");
        // In parentheses: the dangling bracket goes with the span; so does a dangling comma.
        assert_eq!(clip("see (`--cassettes DIR`)", 9), "see…");
        assert_eq!(clip("one, two, three", 9), "one, two…");
    }

    #[test]
    fn a_cut_inside_a_hyphenated_word_keeps_the_whole_words_before_it() {
        let text = "no baseline yet: store this run as the baseline on the default branch and accept-baseline it";
        let at = text.find("accept-").expect("accept") + "accept-".len();
        for limit in [at - 3, at, at + 4] {
            let clipped = clip(text, limit);
            assert_eq!(
                clipped, "no baseline yet: store this run as the baseline on the default branch and…",
                "{limit}"
            );
        }
        // A limit on a word's end keeps that word.
        assert_eq!(clip("alpha beta gamma", 10), "alpha beta…");
        assert_eq!(clip("alpha beta gamma", 16), "alpha beta gamma");
    }

    #[test]
    fn a_word_longer_than_half_the_limit_or_an_opening_code_span_is_cut_inside() {
        assert_eq!(clip(&format!("a {}", "x".repeat(40)), 10), format!("a {}…", "x".repeat(8)));
        assert_eq!(clip("sha256:0123456789abcdef", 10), "sha256:012…");
        assert_eq!(clip("`a-very-long-command --with flags` and more", 10), "`a-very-lo…`");
    }
}
