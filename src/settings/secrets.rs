//! Secret-bearing input: `Name: value` header lines (every value is a secret) and the secret
//! parts of a server URL (a `user:password@` password, query values). Everything here is used
//! to redact: no secret may reach a log, report, JUnit file or comment.

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
    fn header_values_never_appear_in_errors() {
        let error = parse_headers(&["Bad Name: s3cret".to_owned()]).expect_err("invalid").to_string();
        assert!(!error.contains("s3cret"));
        assert_eq!(parse_headers(&["Authorization: Bearer x".to_owned()]).expect("valid")[0].1, "Bearer x");
    }
}
