//! User input that is not a flag: the `--config` YAML file (`safe_tools`) and `--header` values.
//! Every error names the file, line and column, the field and the fix.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::conformance::context::SafeTool;

/// An input error: the exit status is 2.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The config file cannot be read.
    #[error("cannot read the config file `{path}`: {source}\n  hint: check the path given to --config")]
    ReadConfig {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The config file is not valid.
    #[error("invalid config file `{path}`: {detail}\n  hint: {hint}")]
    Config {
        /// The file.
        path: PathBuf,
        /// Line, column, field and what was wrong.
        detail: String,
        /// How to fix it.
        hint: String,
    },
    /// A `--header` value is not `Name: value`.
    #[error(
        "invalid --header `{value}`: {detail}\n  hint: write it as --header 'Name: value', e.g. --header 'Authorization: Bearer …'"
    )]
    Header {
        /// The value as given, with everything after the colon hidden (it may be a secret).
        value: String,
        /// What is wrong.
        detail: String,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    safe_tools: Vec<SafeToolEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SafeToolEntry {
    name: String,
    #[serde(default)]
    arguments: Option<serde_json::Map<String, Value>>,
}

const CONFIG_HINT: &str =
    "the file holds `safe_tools:`, a list of `{name: TOOL, arguments: {…}}` entries naming tools that are safe to call";

/// Reads the `--config` YAML file.
pub fn load_config(path: &Path) -> Result<Vec<SafeTool>, InputError> {
    let text =
        fs_err::read_to_string(path).map_err(|source| InputError::ReadConfig { path: path.to_owned(), source })?;
    parse_config(path, &text)
}

/// Parses the text of a config file (`path` is used in messages only).
pub fn parse_config(path: &Path, text: &str) -> Result<Vec<SafeTool>, InputError> {
    let config: ConfigFile = serde_saphyr::from_str(text).map_err(|error| InputError::Config {
        path: path.to_owned(),
        detail: error.to_string().lines().next().unwrap_or_default().to_owned(),
        hint: CONFIG_HINT.into(),
    })?;
    let mut tools = Vec::new();
    for (index, entry) in config.safe_tools.into_iter().enumerate() {
        if entry.name.trim().is_empty() {
            return Err(InputError::Config {
                path: path.to_owned(),
                detail: format!("`safe_tools[{index}].name` is empty"),
                hint: "give the exact tool name as the server lists it".into(),
            });
        }
        tools.push(SafeTool { name: entry.name, arguments: Value::Object(entry.arguments.unwrap_or_default()) });
    }
    Ok(tools)
}

/// Splits `Name: value` headers; values are secrets and never appear in errors.
pub fn parse_headers(values: &[String]) -> Result<Vec<(String, String)>, InputError> {
    values
        .iter()
        .map(|raw| {
            let hidden = match raw.split_once(':') {
                Some((name, _)) => format!("{name}: ***"),
                None => "***".into(),
            };
            let Some((name, value)) = raw.split_once(':') else {
                return Err(InputError::Header {
                    value: hidden,
                    detail: "no `:` between the name and the value".into(),
                });
            };
            let name = name.trim();
            let valid_name = !name.is_empty()
                && name.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte));
            if !valid_name {
                return Err(InputError::Header {
                    value: hidden,
                    detail: format!("`{name}` is not a valid header name"),
                });
            }
            let value = value.trim();
            if value.bytes().any(|byte| byte < 0x20 && byte != b'\t') {
                return Err(InputError::Header { value: hidden, detail: "the value holds control characters".into() });
            }
            Ok((name.to_owned(), value.to_owned()))
        })
        .collect()
}

/// The secret parts of a URL: the password of `user:password@`, and every query value (API
/// keys travel there). They are redacted from every output like header values.
pub fn url_secrets(url: &str) -> Vec<String> {
    let mut secrets = Vec::new();
    let Some((_, rest)) = url.split_once("://") else { return secrets };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if let Some((userinfo, _)) = authority.rsplit_once('@') {
        match userinfo.split_once(':') {
            Some((_, password)) if !password.is_empty() => secrets.push(password.to_owned()),
            _ => secrets.push(userinfo.to_owned()),
        }
    }
    if let Some((_, query)) = rest.split_once('?') {
        let query = query.split('#').next().unwrap_or("");
        secrets.extend(
            query
                .split('&')
                .filter_map(|pair| pair.split_once('='))
                .map(|(_, value)| value.to_owned())
                .filter(|value| !value.is_empty()),
        );
    }
    secrets
}

/// The URL with its secret parts (see [`url_secrets`]) replaced by `***`, for messages.
pub fn url_without_secrets(url: &str) -> String {
    url_secrets(url).iter().fold(url.to_owned(), |url, secret| url.replace(secret.as_str(), "***"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_error(text: &str, expected: &str) {
        let error = parse_config(Path::new("mcp-eval.yaml"), text).expect_err("must fail").to_string();
        assert!(error.contains(expected), "{error}");
        assert!(error.contains("mcp-eval.yaml"), "{error}");
    }

    #[test]
    fn safe_tools_are_read_with_their_arguments() {
        let tools = parse_config(
            Path::new("c.yaml"),
            "safe_tools:\n  - name: get_time\n    arguments: {timezone: UTC}\n  - name: ping\n",
        )
        .expect("valid");
        assert_eq!(tools.len(), 2);
        assert_eq!(tools[0].arguments["timezone"], "UTC");
        assert_eq!(tools[1].arguments, serde_json::json!({}));
    }

    #[test]
    fn unknown_fields_are_named_with_their_line() {
        check_error("safe_tools:\n  - name: a\n    argumnets: {}\n", "line 3");
    }

    #[test]
    fn a_wrong_type_is_an_error() {
        check_error("safe_tools: 7\n", "safe_tools");
    }

    #[test]
    fn url_passwords_and_query_values_are_secrets() {
        assert_eq!(url_secrets("http://alice:pw0rd@127.0.0.1:9/mcp?api_key=QSECRET&x="), ["pw0rd", "QSECRET"]);
        assert_eq!(url_without_secrets("http://alice:pw0rd@h/mcp"), "http://alice:***@h/mcp");
        assert!(url_secrets("http://127.0.0.1:9/mcp").is_empty());
    }

    #[test]
    fn header_values_never_appear_in_errors() {
        let error = parse_headers(&["Bad Name: s3cret".to_owned()]).expect_err("invalid").to_string();
        assert!(!error.contains("s3cret"));
        assert_eq!(parse_headers(&["Authorization: Bearer x".to_owned()]).expect("valid")[0].1, "Bearer x");
    }
}
