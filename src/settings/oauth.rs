//! The client-credentials sign-in's settings: the client id (`--oauth-client-id`), the secret
//! (from the variable `--oauth-client-secret-env` names, default
//! `MCP_EVAL_OAUTH_CLIENT_SECRET`, or the Action's masked input `oauth-client-secret`; never a
//! flag's value, which lands in shell history and process lists), the scopes and another
//! resource registered for the same client (for A-5).

use std::fmt;

use super::{Problem, Server, Source, Sources, env_vars, table};

/// How to sign in as a CI client.
#[derive(Clone)]
pub(crate) struct OAuthSettings {
    /// The client id.
    pub client_id: String,
    /// The client secret (a secret).
    pub client_secret: String,
    /// The scopes, space-separated.
    pub scopes: Option<String>,
    /// Another resource registered for the client, as given.
    pub other_resource: Option<String>,
}

/// Never shows the secret.
impl fmt::Debug for OAuthSettings {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("OAuthSettings")
            .field("client_id", &self.client_id)
            .field("client_secret", &"***")
            .field("scopes", &self.scopes)
            .field("other_resource", &self.other_resource)
            .finish()
    }
}

/// The sign-in's settings; `None` when no client id is given.
///
/// # Errors
/// Adds to `problems` a client id without a secret, a variable name that is not one, a
/// sign-in for a server that is not a URL, an `Authorization` header beside it, and another
/// resource that is not an absolute URL.
pub(super) fn resolve(
    sources: &Sources<'_>,
    server: Option<&Server>,
    headers: &[(String, String)],
    problems: &mut Vec<Problem>,
) -> Option<OAuthSettings> {
    let flags = &sources.request.flags;
    let scopes = sources.setting(&table::OAUTH_SCOPES, &flags.oauth_scopes);
    let secret_env = sources.setting(&table::OAUTH_CLIENT_SECRET_ENV, &flags.oauth_client_secret_env);
    let other = sources.setting(&table::OAUTH_OTHER_RESOURCE, &flags.oauth_other_resource);
    let Some((source, client_id)) = sources.setting(&table::OAUTH_CLIENT_ID, &flags.oauth_client_id) else {
        // Each sign-in setting without the client id is the same error (never silently ignored).
        for (source, what) in [
            (scopes.as_ref(), "scopes are"),
            (secret_env.as_ref(), "the client secret's variable is"),
            (other.as_ref(), "another resource is"),
        ]
        .into_iter()
        .filter_map(|(setting, what)| setting.map(|(source, _)| (source, what)))
        {
            problems.push(Problem::new(
                source,
                format!("{what} only used with the client-credentials sign-in"),
                format!("give the client id too ({})", table::OAUTH_CLIENT_ID.flag_name()),
            ));
        }
        return None;
    };
    let scopes = scopes.map(|(_, text)| text);
    if !matches!(server, Some(Server::Url(_))) && server.is_some() {
        problems.push(Problem::new(
            &source,
            "the client-credentials sign-in applies to a server URL only",
            "give a Streamable HTTP server with --server-url (input `server-url`)",
        ));
    }
    if headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("authorization")) {
        problems.push(Problem::new(
            &source,
            "an `Authorization` header and the client-credentials sign-in both give the credentials",
            "keep one: the sign-in obtains and renews the token itself",
        ));
    }
    let client_secret = secret(sources, problems, &source);
    let other_resource = other.and_then(|(source, text)| match url::Url::parse(&text) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => Some(text),
        _ => {
            problems.push(Problem::new(
                &source,
                format!("`{text}` is not an http:// or https:// URL"),
                "name another resource registered for the same client at the authorization server, e.g. https://other.example/mcp",
            ));
            None
        }
    });
    Some(OAuthSettings { client_id, client_secret: client_secret.unwrap_or_default(), scopes, other_resource })
}

/// The secret: the Action's input, else the variable named by `--oauth-client-secret-env`
/// (default [`env_vars::MCP_EVAL_OAUTH_CLIENT_SECRET`]).
fn secret(sources: &Sources<'_>, problems: &mut Vec<Problem>, client_source: &Source) -> Option<String> {
    if let Some((_, secret)) = sources.input(table::OAUTH_CLIENT_SECRET.input_name()) {
        return Some(secret);
    }
    let named = sources.setting(&table::OAUTH_CLIENT_SECRET_ENV, &sources.request.flags.oauth_client_secret_env);
    let (source, var) =
        named.clone().unwrap_or_else(|| (client_source.clone(), env_vars::MCP_EVAL_OAUTH_CLIENT_SECRET.to_owned()));
    if !super::secrets::valid_env_name(&var) {
        problems.push(Problem::new(
            &source,
            "this names the variable that holds the secret, and is not a variable name",
            "give the name of an environment variable (letters, digits and `_`), e.g. MCP_EVAL_OAUTH_CLIENT_SECRET, and put the secret in it",
        ));
        return None;
    }
    let value = (sources.lookup)(&var);
    if let Some(secret) = value.clone().filter(|value| !value.is_empty()) {
        return Some(secret);
    }
    let state = if value.is_some() { "is set but empty" } else { "is not set" };
    let input = table::OAUTH_CLIENT_SECRET.input_name();
    let fix = if sources.front_end == super::FrontEnd::Action && named.is_none() {
        format!(
            "give the Action input `{input}` the client secret from a repository secret (`{input}: ${{{{ secrets.… }}}}`), or set `{var}`"
        )
    } else {
        format!(
            "set `{var}` to the client secret (in a workflow, from a repository secret), or name another variable with {}; in the Action, the input `{input}`",
            table::OAUTH_CLIENT_SECRET_ENV.flag_name(),
        )
    };
    let what = if sources.front_end == super::FrontEnd::Action && named.is_none() {
        format!("the client secret is missing: the input `{input}` is not given and `{var}` {state}")
    } else {
        format!("the client secret is missing: `{var}` {state}")
    };
    problems.push(Problem::new(&source, what, fix));
    None
}

/// The secret as given, before validation, for the Action to mask first.
pub(super) fn raw_secret(sources: &Sources<'_>) -> Option<String> {
    if let Some((_, secret)) = sources.input(table::OAUTH_CLIENT_SECRET.input_name()) {
        return Some(secret);
    }
    let var = sources
        .setting(&table::OAUTH_CLIENT_SECRET_ENV, &sources.request.flags.oauth_client_secret_env)
        .map_or_else(|| env_vars::MCP_EVAL_OAUTH_CLIENT_SECRET.to_owned(), |(_, var)| var);
    sources.setting(&table::OAUTH_CLIENT_ID, &sources.request.flags.oauth_client_id)?;
    (sources.lookup)(&var).filter(|value| !value.is_empty())
}
