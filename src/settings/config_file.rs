//! The `--config` YAML file (`mcp-eval.yaml`): typed sections with the line and column of every
//! value, so a bad value is reported as `file:line:col: field: message`.
//!
//! One struct holds every section; a later issue adds a section by adding a field here and a
//! resolver in [`super`], without new parsing code. Sections:
//! - `server: {url, command}`, `layers`, `timeout_seconds`, `report_dir`, `junit_path`,
//!   `require_era`, `golden_set`: the same settings as the flags and Action inputs, at the
//!   lowest precedence (flags > inputs/environment > this file > defaults);
//! - `safe_tools: [{name, arguments}]`: tools that are safe to call (layer 0);
//! - `gate: {fail_on}`: when the run fails;
//! - `providers`, `models`: read by layers 1–3 (accepted and reported as not used by this version).
//!
//! Header values (secrets) have no place in the file: they come from flags or inputs only.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;
use serde_saphyr::Spanned;

/// A value of the file with its position (1-based line and column).
pub(crate) type Located<T> = Spanned<T>;

/// The whole file. Every field is optional; unknown keys are errors.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConfigFile {
    /// Where the server under test is.
    #[serde(default)]
    pub server: Option<ServerSection>,
    /// Layers to run: `0`, `"0,1"`, `"0-3"`, `all`, `auto` or a list of integers.
    #[serde(default)]
    pub layers: Option<Located<Value>>,
    /// Per-request timeout in seconds.
    #[serde(default)]
    pub timeout_seconds: Option<Located<Value>>,
    /// Directory for report.json, junit.xml and summary.md.
    #[serde(default)]
    pub report_dir: Option<Located<Value>>,
    /// A second place to write junit.xml.
    #[serde(default)]
    pub junit_path: Option<Located<Value>>,
    /// `2026-07-28` fails a legacy server.
    #[serde(default)]
    pub require_era: Option<Located<Value>>,
    /// The golden set (layer 1).
    #[serde(default)]
    pub golden_set: Option<Located<Value>>,
    /// Tools that are safe to call, with their arguments.
    #[serde(default)]
    pub safe_tools: Vec<Located<SafeToolEntry>>,
    /// The gate policy.
    #[serde(default)]
    pub gate: Option<GateSection>,
    /// Model providers (layers 1–3; not used by this version).
    #[serde(default)]
    pub providers: Option<Located<Value>>,
    /// Models to evaluate with (layers 1–3; not used by this version).
    #[serde(default)]
    pub models: Option<Located<Value>>,
}

/// `server:`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ServerSection {
    /// A Streamable HTTP endpoint.
    #[serde(default)]
    pub url: Option<Located<Value>>,
    /// A stdio server's start command.
    #[serde(default)]
    pub command: Option<Located<Value>>,
}

/// One entry of `safe_tools:`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SafeToolEntry {
    /// The tool name as the server lists it.
    pub name: String,
    /// The arguments object to call it with (default `{}`).
    #[serde(default)]
    pub arguments: Option<serde_json::Map<String, Value>>,
}

/// `gate:`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GateSection {
    /// `must`, `should` or `never`.
    #[serde(default)]
    pub fail_on: Option<Located<Value>>,
}

/// A config file that cannot be read or parsed: the position is known when the YAML parser
/// gave one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileProblem {
    /// The file.
    pub path: PathBuf,
    /// 1-based line and column, when known.
    pub position: Option<(u64, u64)>,
    /// What was wrong.
    pub message: String,
}

/// Reads and parses the file.
///
/// # Errors
/// The file cannot be read, is not YAML, or has an unknown key or a value of the wrong shape.
pub(crate) fn load(path: &Path) -> Result<ConfigFile, FileProblem> {
    let text = fs_err::read_to_string(path).map_err(|error| FileProblem {
        path: path.to_owned(),
        position: None,
        message: format!("cannot read the file: {}", error.kind()),
    })?;
    parse(path, &text)
}

/// Parses the text of a config file (`path` is used in messages only).
///
/// # Errors
/// As [`load`], less the reading.
pub(crate) fn parse(path: &Path, text: &str) -> Result<ConfigFile, FileProblem> {
    if text.trim().is_empty() {
        return Ok(ConfigFile::default());
    }
    serde_saphyr::from_str::<ConfigFile>(text).map_err(|error| {
        let position = error.location().map(|location| (location.line(), location.column()));
        let first_line = error.to_string().lines().next().unwrap_or_default().to_owned();
        FileProblem { path: path.to_owned(), position, message: first_line }
    })
}

/// The text of a scalar (or a list of scalars joined with `,`), as a flag would carry it.
pub(crate) fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Array(items) => items.iter().map(scalar_text).collect::<Option<Vec<_>>>().map(|parts| parts.join(",")),
        Value::Null | Value::Object(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_section_is_read_with_positions() {
        let file = parse(
            Path::new("c.yaml"),
            "server:\n  url: http://127.0.0.1:1/mcp\nlayers: [0, 1]\ntimeout_seconds: 5\nsafe_tools:\n  - name: get_time\n    arguments: {timezone: UTC}\ngate:\n  fail_on: should\n",
        )
        .expect("valid");
        let url = file.server.as_ref().and_then(|server| server.url.as_ref()).expect("url");
        assert_eq!((url.referenced.line(), url.referenced.column()), (2, 8));
        assert_eq!(scalar_text(&file.layers.as_ref().expect("layers").value).as_deref(), Some("0,1"));
        assert_eq!(scalar_text(&file.timeout_seconds.as_ref().expect("timeout").value).as_deref(), Some("5"));
        assert_eq!(file.safe_tools[0].value.name, "get_time");
        assert_eq!(file.safe_tools[0].referenced.line(), 6);
        assert!(file.gate.is_some());
    }

    #[test]
    fn an_unknown_key_is_named_with_its_line() {
        let problem = parse(Path::new("c.yaml"), "safe_tools:\n  - name: a\n    argumnets: {}\n").expect_err("unknown");
        assert_eq!(problem.position.map(|(line, _)| line), Some(3), "{problem:?}");
        assert!(problem.message.contains("argumnets"), "{problem:?}");
    }

    #[test]
    fn an_empty_file_is_an_empty_config() {
        assert!(parse(Path::new("c.yaml"), "\n# nothing\n").expect("valid").safe_tools.is_empty());
    }
}
