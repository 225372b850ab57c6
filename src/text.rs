//! Small text helpers for messages shared by several modules: clipping a text to a number of
//! characters, naming a JSON value's type, and showing a path as the user gave it.

use serde_json::Value;

/// `text` cut to at most `max` characters, with `…` when cut.
pub(crate) fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut short: String = text.chars().take(max).collect();
        short.push('…');
        short
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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(json_kind(&serde_json::json!([1])), "an array");
    }
}
