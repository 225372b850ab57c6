//! Secret-bearing input: `Name: value` header lines (every value is a secret), `NAME[=VALUE]`
//! entries of a stdio server's environment (every value is a secret) and the secret parts of a
//! server URL (a `user:password@` password, query values). Everything here is used to redact:
//! no secret may reach a log, report, JUnit file or comment.

/// Why a header line was refused; the value is never part of it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{shown}`: {detail}")]
pub(crate) struct HeaderProblem {
    /// The line as given, with everything after the colon hidden (it may be a secret).
    pub shown: String,
    /// What is wrong.
    pub detail: String,
}

/// Splits `Name: value` headers; values are secrets and never appear in errors.
///
/// # Errors
/// The first line that has no colon, an invalid header name (RFC 9110 token characters) or a
/// control character in its value.
pub(crate) fn parse_headers(values: &[String]) -> Result<Vec<(String, String)>, HeaderProblem> {
    values
        .iter()
        .map(|raw| {
            let shown = match raw.split_once(':') {
                Some((name, _)) => format!("{name}: ***"),
                None => "***".into(),
            };
            let Some((name, value)) = raw.split_once(':') else {
                return Err(HeaderProblem { shown, detail: "no `:` between the name and the value".into() });
            };
            let name = name.trim();
            let valid_name = !name.is_empty()
                && name.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte));
            if !valid_name {
                return Err(HeaderProblem { shown, detail: format!("`{name}` is not a valid header name") });
            }
            let value = value.trim();
            if value.bytes().any(|byte| byte < 0x20 && byte != b'\t') {
                return Err(HeaderProblem { shown, detail: "the value holds control characters".into() });
            }
            Ok((name.to_owned(), value.to_owned()))
        })
        .collect()
}

/// One entry of a stdio server's environment (`--server-env`, input `server-env`, config
/// `server.env`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EnvEntry {
    /// `NAME`: our own variable of that name, passed through when it is set.
    PassThrough(String),
    /// `NAME=VALUE`: the variable set to this value (a secret).
    Set(String, String),
}

/// Why a `NAME[=VALUE]` entry was refused; the value is never part of it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{shown}`: {detail}")]
pub(crate) struct EnvProblem {
    /// The entry as given, with the value hidden: `NAME=***`, or `***` for an entry without
    /// `=` that is not a name (it may be a value given by mistake).
    pub shown: String,
    /// What is wrong.
    pub detail: String,
}

/// True for a portable environment variable name: `[A-Za-z_][A-Za-z0-9_]*`.
pub(crate) fn valid_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|first| first.is_ascii_alphabetic() || first == b'_')
        && bytes.all(|byte| byte.is_ascii_alphanumeric() || byte == b'_')
}

/// Parses one `NAME=VALUE` (set) or `NAME` (pass through) entry. The value is everything after
/// the first `=`, as given (it may be empty).
///
/// # Errors
/// A name that is not `[A-Za-z_][A-Za-z0-9_]*`, or a value holding a NUL byte (no environment
/// can carry it).
pub(crate) fn parse_env_entry(raw: &str) -> Result<EnvEntry, EnvProblem> {
    const NAME_RULE: &str = "a name is letters, digits and `_`, and does not start with a digit";
    match raw.split_once('=') {
        None if valid_env_name(raw) => Ok(EnvEntry::PassThrough(raw.to_owned())),
        None => Err(EnvProblem {
            shown: "***".into(),
            detail: format!("not a variable name ({NAME_RULE}); the entry is hidden in case it is a value"),
        }),
        Some(("", _)) => Err(EnvProblem { shown: "=***".into(), detail: "no variable name before the `=`".into() }),
        Some((name, _)) if !valid_env_name(name) => Err(EnvProblem {
            shown: format!("{name}=***"),
            detail: format!("`{name}` is not a variable name ({NAME_RULE})"),
        }),
        Some((name, value)) if value.contains('\0') => {
            Err(EnvProblem { shown: format!("{name}=***"), detail: "the value holds a NUL byte".into() })
        }
        Some((name, value)) => Ok(EnvEntry::Set(name.to_owned(), value.to_owned())),
    }
}

/// The secret parts of a URL: the password of `user:password@` (or the whole userinfo when it
/// has no password), and every query value (API keys travel there). They are redacted from
/// every output like header values.
pub(crate) fn url_secrets(url: &str) -> Vec<String> {
    let mut secrets = Vec::new();
    let Ok(parsed) = url::Url::parse(url) else {
        return lenient_url_secrets(url);
    };
    let decode = |text: &str| percent_decode(text);
    match parsed.password() {
        Some(password) if !password.is_empty() => {
            secrets.push(password.to_owned());
            secrets.push(decode(password));
        }
        _ if !parsed.username().is_empty() => {
            secrets.push(parsed.username().to_owned());
            secrets.push(decode(parsed.username()));
        }
        _ => {}
    }
    for (_, value) in parsed.query_pairs() {
        if !value.is_empty() {
            secrets.push(value.into_owned());
        }
    }
    if let Some(query) = parsed.query() {
        // The raw (still percent-encoded) spelling appears in the URL as the user gave it.
        secrets.extend(query.split('&').filter_map(|pair| pair.split_once('=')).map(|(_, v)| v.to_owned()));
    }
    secrets.retain(|secret| !secret.is_empty());
    secrets.dedup();
    secrets
}

/// [`url_secrets`] for text that does not parse as a URL (it is still redacted as well as we can).
fn lenient_url_secrets(url: &str) -> Vec<String> {
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

fn percent_decode(text: &str) -> String {
    url::form_urlencoded::parse(format!("x={text}").as_bytes())
        .next()
        .map(|(_, value)| value.into_owned())
        .unwrap_or_else(|| text.to_owned())
}

/// The URL with its secret parts (see [`url_secrets`]) replaced by `***`, for messages.
pub(crate) fn url_without_secrets(url: &str) -> String {
    let mut secrets = url_secrets(url);
    secrets.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
    secrets.iter().fold(url.to_owned(), |url, secret| url.replace(secret.as_str(), "***"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_passwords_and_query_values_are_secrets() {
        let secrets = url_secrets("http://alice:pw0rd@127.0.0.1:9/mcp?api_key=QSECRET&x=");
        assert!(secrets.contains(&"pw0rd".to_owned()) && secrets.contains(&"QSECRET".to_owned()), "{secrets:?}");
        assert_eq!(url_without_secrets("http://alice:pw0rd@h/mcp"), "http://alice:***@h/mcp");
        assert!(url_secrets("http://127.0.0.1:9/mcp").is_empty());
    }

    #[test]
    fn percent_encoded_secrets_are_redacted_in_both_spellings() {
        let url = "http://u:p%40ss%2Fword@h/mcp?key=a%20b";
        let shown = url_without_secrets(url);
        assert!(!shown.contains("p%40ss") && !shown.contains("a%20b"), "{shown}");
        let secrets = url_secrets(url);
        assert!(secrets.contains(&"p@ss/word".to_owned()) && secrets.contains(&"a b".to_owned()), "{secrets:?}");
    }

    #[test]
    fn text_that_is_not_a_url_is_still_redacted() {
        assert_eq!(url_without_secrets("http://a:s3cret@[bad/mcp"), "http://a:***@[bad/mcp");
    }

    #[test]
    fn env_entries_set_or_pass_through_and_names_are_validated() {
        assert_eq!(parse_env_entry("FOO=bar=baz"), Ok(EnvEntry::Set("FOO".into(), "bar=baz".into())));
        assert_eq!(parse_env_entry("_x1="), Ok(EnvEntry::Set("_x1".into(), String::new())));
        assert_eq!(parse_env_entry("KEEP"), Ok(EnvEntry::PassThrough("KEEP".into())));
        for name in ["A", "_", "a_B_9", "GITHUB_TOKEN"] {
            assert!(valid_env_name(name), "{name}");
        }
        for name in ["", "9A", "MY-VAR", "A B", "INPUT_GITHUB-TOKEN", "É", "A.B", "A\0"] {
            assert!(!valid_env_name(name), "{name:?}");
        }
        for (raw, shown) in [("1X=v", "1X=***"), ("=v", "=***"), ("MY-VAR", "***"), ("X=a\0b", "X=***")] {
            let problem = parse_env_entry(raw).expect_err(raw);
            assert_eq!(problem.shown, shown, "{raw:?}: {problem}");
        }
    }

    #[test]
    fn env_values_never_appear_in_errors() {
        for raw in ["BAD-NAME=s3cret-v", "api key s3cret-v", "X=s3cret-v\0", "=s3cret-v"] {
            let error = parse_env_entry(raw).expect_err(raw).to_string();
            assert!(!error.contains("s3cret-v"), "{error}");
        }
    }

    #[test]
    fn header_values_never_appear_in_errors() {
        let error = parse_headers(&["Bad Name: s3cret".to_owned()]).expect_err("invalid").to_string();
        assert!(!error.contains("s3cret"));
        assert_eq!(parse_headers(&["Authorization: Bearer x".to_owned()]).expect("valid")[0].1, "Bearer x");
    }
}
