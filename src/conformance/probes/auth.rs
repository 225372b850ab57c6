//! Authorization (A-1..A-6, Streamable HTTP only): run when the user gave credentials with
//! `--header 'Authorization: …'` or the run signed in as a CI client (`--oauth-client-id`).
//! Authorization is optional in MCP, so an open server is `not_applicable`, never a failure.
//! Every probe is a `server/discover` or a read-only GET of the protected-resource metadata;
//! metadata is fetched only from the server's own origin. The probes that need tokens only an
//! authorization server can mint (A-5: one for another resource; A-6: one that expired) run
//! with the sign-in alone.

use serde_json::{Value, json};

use super::modern;
use crate::conformance::context::Context;
use crate::conformance::finding::Finding;
use crate::mcp::client::{Client, Connection};
use crate::mcp::exchange::{Body, Exchange, Outgoing};
use crate::mcp::oauth::{Expired, TokenSource, resource_metadata};

const IDS: [&str; 6] = ["A-1", "A-2", "A-3", "A-4", "A-5", "A-6"];

/// The longest an expired token is waited for (A-6): the authorization server's tokens must
/// live at most this long.
const EXPIRY_WAIT: std::time::Duration = std::time::Duration::from_secs(15);

/// A-1..A-6.
pub(crate) async fn run(ctx: &Context) -> Vec<Finding> {
    let Connection::Http(http) = ctx.modern.connection() else {
        return IDS
            .iter()
            .map(|id| Finding::not_applicable(id, "an HTTP authorization rule; the server speaks stdio"))
            .collect();
    };
    let Some(credential) = http.credential() else {
        return IDS
            .iter()
            .map(|id| {
                Finding::not_applicable(
                    id,
                    "no credentials were given (--header 'Authorization: …') and the server answered without them: authorization is optional in MCP",
                )
            })
            .collect();
    };
    let endpoint = http.url().to_owned();
    let client = &ctx.modern;
    let invalid = format!("Bearer mcp-eval-invalid-{:016x}{:016x}", std::process::id(), endpoint.len() as u64 * 7919);
    let token = credential.split_once(' ').map_or(credential.as_str(), |(_, token)| token.trim()).to_owned();
    let separator = if endpoint.contains('?') { '&' } else { '?' };
    let in_query = {
        let mut probe = modern("server/discover", json!({})).remove("Authorization");
        probe.url = Some(format!("{endpoint}{separator}access_token={token}"));
        probe
    };
    let (anonymous, forged, query) = tokio::join!(
        client.send(modern("server/discover", json!({})).remove("Authorization")),
        client.send(modern("server/discover", json!({})).set("Authorization", &invalid)),
        client.send(in_query),
    );
    if anonymous.result().is_some() {
        // Credentials were given, but the server serves requests without them: it does not
        // require authorization, which MCP allows.
        return IDS
            .iter()
            .map(|id| {
                Finding::not_applicable(
                    id,
                    "the server answered `server/discover` without credentials: it does not require authorization (optional in MCP)",
                )
            })
            .collect();
    }
    let mut findings = Vec::new();
    // A-3: missing or invalid credentials get 401 (403 is for insufficient scope).
    findings.push(a3(&anonymous, &forged));
    // A-4: a valid token in the query string is not accepted.
    findings.push(match query.bearer_refusal() {
        Some(refusal) => Finding::kept("A-4", format!("the token in the query string (no Authorization header) got {refusal}")),
        None if query.result().is_some() => Finding::broken(
            "A-4",
            "the token was accepted in the query string; servers should accept it only in the Authorization header (URLs leak into logs)",
        )
        .with(&query),
        None => not_the_token_check("A-4", "the token in the query string (no Authorization header)", &query),
    });
    let (other, expired) = tokio::join!(a5(client, http.oauth()), a6(client, http.oauth()));
    findings.extend([other, expired]);
    findings.extend(metadata_findings(client, &endpoint, &anonymous).await);
    findings
}

/// A-5: a token the authorization server minted for another resource registered for the same
/// client is refused (RFC 8707 audience binding: otherwise a token for any service of the
/// client's works here, the confused deputy).
async fn a5(client: &Client, oauth: Option<&TokenSource>) -> Finding {
    let Some(oauth) = oauth else {
        return Finding::not_applicable(
            "A-5",
            "needs a token minted for another resource: sign in as a CI client (--oauth-client-id) and name another resource registered for the same client (--oauth-other-resource)",
        );
    };
    let Some(other) = oauth.other_resource() else {
        return Finding::not_applicable(
            "A-5",
            "needs another resource registered for the same client (--oauth-other-resource): an authorization server mints tokens only for resources it knows",
        );
    };
    let token = match oauth.token_for(other).await {
        Ok(token) => token,
        Err(error) => {
            return Finding::not_applicable("A-5", format!("no token for the other resource {other}: {error}"));
        }
    };
    let exchange =
        client.send(modern("server/discover", json!({})).set("Authorization", &format!("Bearer {token}"))).await;
    match exchange.bearer_refusal() {
        Some(refusal) => Finding::kept("A-5", format!("a token minted for {other} got {refusal}")).with(&exchange),
        None if exchange.result().is_some() => Finding::broken(
            "A-5",
            format!(
                "a token minted for another resource ({other}) was accepted: the server MUST accept only tokens issued for itself ({}), checking their audience (RFC 8707)",
                oauth.resource()
            ),
        )
        .with(&exchange),
        None => not_the_token_check("A-5", &format!("a token minted for {other}"), &exchange),
    }
}

/// A-6: a token of the server's own that has expired is refused. The token is obtained during
/// the probe and waited out, so the authorization server's tokens must live at most
/// [`EXPIRY_WAIT`].
async fn a6(client: &Client, oauth: Option<&TokenSource>) -> Finding {
    let Some(oauth) = oauth else {
        return Finding::not_applicable(
            "A-6",
            "needs an expired token, which only the authorization server can mint: sign in as a CI client (--oauth-client-id)",
        );
    };
    let token = match oauth.expired_token(EXPIRY_WAIT).await {
        Expired::Token(token) => token,
        Expired::TooLong(lifetime) => {
            let lives = lifetime.map_or_else(
                || "give no lifetime (`expires_in`)".to_owned(),
                |lifetime| format!("live {} s", lifetime.as_secs()),
            );
            return Finding::not_applicable(
                "A-6",
                format!(
                    "the authorization server's tokens {lives}: longer than the {} s this probe waits for one to expire",
                    EXPIRY_WAIT.as_secs()
                ),
            );
        }
        Expired::Refused(error) => return Finding::not_applicable("A-6", format!("no token to wait out: {error}")),
    };
    let exchange =
        client.send(modern("server/discover", json!({})).set("Authorization", &format!("Bearer {token}"))).await;
    match exchange.bearer_refusal() {
        Some(refusal) => Finding::kept("A-6", format!("a token that had expired got {refusal}")).with(&exchange),
        None if exchange.result().is_some() => {
            Finding::broken("A-6", "a token that had expired was accepted: the server MUST check a token's expiry")
                .with(&exchange)
        }
        None => not_the_token_check("A-6", "a token that had expired", &exchange),
    }
}

/// A token probe answered neither with a result nor by the authorization layer (HTTP 401/403
/// with a Bearer challenge or an RFC 6750 error body): e.g. a JSON-RPC error from a proxy
/// in front that dropped headers. That is no evidence the token was checked, so the row cannot
/// pass: it fails, since the spec requires invalid credentials to get 401 (A-3's rule, the
/// row's MUST for A-5/A-6, its SHOULD for A-4) — unless nothing answered, which is a warning.
fn not_the_token_check(id: &'static str, what: &str, exchange: &Exchange) -> Finding {
    if exchange.status.is_none() {
        return Finding::ambiguous(
            id,
            format!(
                "{what} got no HTTP answer ({}): whether the token is checked could not be seen",
                exchange.describe()
            ),
        )
        .with(exchange);
    }
    Finding::broken(
        id,
        format!(
            "{what} got {}: not an answer of the authorization layer (HTTP 401 with a Bearer `WWW-Authenticate` challenge or an RFC 6750 error body), so it is no evidence the token was checked; an invalid token must get 401 (something in front of the token check, such as a proxy that drops headers, may have answered)",
            exchange.describe()
        ),
    )
    .with(exchange)
}

/// A-1 (the protected-resource metadata is discoverable, from `WWW-Authenticate` or a well-known
/// path on the server's origin) and A-2 (the document is well-formed), from the answer to a
/// request without credentials. Authorization is optional in MCP and HTTP servers SHOULD follow
/// its OAuth profile, so a server that demands credentials without advertising metadata (a
/// static API key is legal) gets A-1 as a warning.
async fn metadata_findings(client: &Client, endpoint: &str, anonymous: &Exchange) -> Vec<Finding> {
    let mut findings = Vec::new();
    // A-1: the metadata is discoverable, from WWW-Authenticate or a well-known path.
    let advertised = anonymous.header("www-authenticate").and_then(resource_metadata);
    let origin = origin_of(endpoint);
    let path = endpoint.strip_prefix(origin.as_str()).unwrap_or("").split('?').next().unwrap_or("").to_owned();
    let mut candidates = Vec::new();
    if let Some(url) = &advertised {
        candidates.push(url.clone());
    }
    candidates.push(format!("{origin}/.well-known/oauth-protected-resource{path}"));
    candidates.push(format!("{origin}/.well-known/oauth-protected-resource"));
    let mut document: Option<(String, Exchange)> = None;
    let mut tried = Vec::new();
    for url in candidates {
        if !url.starts_with(&origin) {
            tried.push(format!("{url} (not fetched: another origin than the server's)"));
            continue;
        }
        let mut get = Outgoing::request(Value::Null);
        get.body = Body::Empty;
        get.http_method = "GET";
        get.url = Some(url.clone());
        let exchange = client.send(get.remove("Authorization")).await;
        if exchange.status == Some(200) && exchange.response.as_ref().is_some_and(Value::is_object) {
            document = Some((url, exchange));
            break;
        }
        tried.push(format!("{url}: {}", exchange.describe()));
    }
    findings.push(match (&advertised, &document) {
        (_, Some((url, exchange))) => {
            let how = if advertised.as_deref() == Some(url.as_str()) { "named by WWW-Authenticate" } else { "at a well-known path" };
            Finding::kept("A-1", format!("protected-resource metadata found {how}: {url}")).with(exchange)
        }
        (Some(url), None) if !url.starts_with(&origin) => {
            Finding::kept("A-1", format!("the 401 names protected-resource metadata at {url} (another origin: not fetched)"))
        }
        _ => Finding::ambiguous(
            "A-1",
            format!(
                "the server demands credentials but advertises no protected-resource metadata (the 401 has no `resource_metadata` and none is served at the well-known paths: {}); legal for a server behind a static API key, but clients following MCP's OAuth profile cannot find how to authorize",
                tried.join("; ")
            ),
        )
        .with(anonymous),
    });
    // A-2: the document is well-formed.
    findings.push(match &document {
        None => Finding::not_applicable("A-2", "no protected-resource metadata document could be read"),
        Some((_, exchange)) => {
            let doc = exchange.response.clone().unwrap_or(Value::Null);
            let resource = doc.get("resource").and_then(Value::as_str);
            let servers = doc.get("authorization_servers").and_then(Value::as_array).filter(|list| !list.is_empty());
            match (resource, servers) {
                (Some(resource), Some(_)) if resource.trim_end_matches('/') == endpoint.trim_end_matches('/') => {
                    Finding::kept(
                        "A-2",
                        "the metadata names the endpoint as `resource` and lists authorization servers",
                    )
                }
                (Some(resource), Some(_)) => Finding::ambiguous(
                    "A-2",
                    format!("`resource` is `{resource}`, which SHOULD be the endpoint's canonical URI `{endpoint}`"),
                )
                .with(exchange),
                _ => Finding::broken(
                    "A-2",
                    "the metadata MUST hold `resource` and a non-empty `authorization_servers` array",
                )
                .with(exchange),
            }
        }
    });
    findings
}

/// A-1..A-4 for a server that refuses every request without credentials when none were given:
/// A-3 (no credentials and a forged token both get 401), A-1 and A-2 from the refusal, A-4 needs
/// a real token and is `not_applicable`. `client` sends without an `Authorization` header.
pub(crate) async fn without_credentials(client: &Client, endpoint: &str) -> Vec<Finding> {
    let invalid = format!("Bearer mcp-eval-invalid-{:016x}", std::process::id());
    let (anonymous, forged) = tokio::join!(
        client.send(modern("server/discover", json!({}))),
        client.send(modern("server/discover", json!({})).set("Authorization", &invalid)),
    );
    let mut findings = vec![a3(&anonymous, &forged)];
    findings.push(Finding::not_applicable(
        "A-4",
        "needs a valid token to test (pass --header 'Authorization: …'): whether it is refused in the query string",
    ));
    findings.extend([a5(client, None).await, a6(client, None).await]);
    findings.extend(metadata_findings(client, endpoint, &anonymous).await);
    findings
}

/// A-3: missing or invalid credentials get 401 (403 is for insufficient scope). Passes only on
/// 401s of the authorization layer ([`Exchange::bearer_refusal`]): a bare 401 (no Bearer
/// challenge, no RFC 6750 body) keeps the status but may come from something in front of the
/// server (a proxy with credentials of its own), so it is no evidence the server refuses the
/// credentials, and RFC 6750 §3 has the resource server's 401 carry a Bearer challenge: a
/// warning, with that answer as evidence.
fn a3(anonymous: &Exchange, forged: &Exchange) -> Finding {
    match (anonymous.status, forged.status) {
        (Some(401), Some(401)) => {
            let bare = [("a request without credentials", anonymous), ("an invalid bearer token", forged)]
                .into_iter()
                .find(|(_, exchange)| exchange.bearer_refusal().is_none());
            match bare {
                None => Finding::kept("A-3", "no credentials and an invalid bearer token both got 401 with a Bearer challenge")
                    .with(forged),
                Some((what, exchange)) => Finding::ambiguous(
                    "A-3",
                    format!(
                        "{what} got {}: a 401, but with no Bearer challenge (`WWW-Authenticate: Bearer …`) and no RFC 6750 error body, so not an answer of the authorization layer; something in front of the server (a proxy with credentials of its own) may have answered, which is no evidence the server refuses the credentials, and MCP clients cannot tell from it how to authorize",
                        exchange.describe()
                    ),
                )
                .with(exchange),
            }
        }
        (Some(401), _) => {
            Finding::broken("A-3", format!("an invalid bearer token must get 401; got {}", forged.describe()))
                .with(forged)
        }
        _ => {
            Finding::broken("A-3", format!("a request without credentials must get 401; got {}", anonymous.describe()))
                .with(anonymous)
        }
    }
}

/// `scheme://host[:port]` of a URL (the URL as given when it does not parse).
fn origin_of(url: &str) -> String {
    url::Url::parse(url).map(|parsed| parsed.origin().ascii_serialization()).unwrap_or_else(|_| url.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_url_is_read_from_the_challenge() {
        assert_eq!(
            resource_metadata(
                r#"Bearer realm="x", resource_metadata="http://h/.well-known/oauth-protected-resource/mcp""#
            ),
            Some("http://h/.well-known/oauth-protected-resource/mcp".to_owned())
        );
        assert_eq!(resource_metadata("Bearer"), None);
        assert_eq!(origin_of("http://127.0.0.1:9/mcp?x=1"), "http://127.0.0.1:9");
    }
}
