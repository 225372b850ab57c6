//! Authorization (A-1..A-4, Streamable HTTP only): run when the user gave credentials with
//! `--header 'Authorization: …'`. Authorization is optional in MCP, so an open server is
//! `not_applicable`, never a failure. Every probe is a `server/discover` or a read-only GET of
//! the protected-resource metadata; metadata is fetched only from the server's own origin.

use serde_json::{Value, json};

use super::modern;
use crate::conformance::context::Context;
use crate::conformance::finding::Finding;
use crate::mcp::client::{Client, Connection};
use crate::mcp::exchange::{Body, Exchange, Outgoing};

const IDS: [&str; 4] = ["A-1", "A-2", "A-3", "A-4"];

/// A-1..A-4.
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
    findings.push(match query.status {
        Some(401) => Finding::kept("A-4", "the token in the query string (no Authorization header) got 401"),
        _ if query.result().is_some() => Finding::broken(
            "A-4",
            "the token was accepted in the query string; servers should accept it only in the Authorization header (URLs leak into logs)",
        )
        .with(&query),
        _ => Finding::kept("A-4", format!("the token in the query string was refused: {}", query.describe())),
    });
    findings.extend(metadata_findings(client, &endpoint, &anonymous).await);
    findings
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
    findings.extend(metadata_findings(client, endpoint, &anonymous).await);
    findings
}

/// A-3: missing or invalid credentials get 401 (403 is for insufficient scope).
fn a3(anonymous: &Exchange, forged: &Exchange) -> Finding {
    match (anonymous.status, forged.status) {
        (Some(401), Some(401)) => {
            Finding::kept("A-3", "no credentials and an invalid bearer token both got 401").with(forged)
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

/// The `resource_metadata` URL of a `WWW-Authenticate: Bearer …` challenge.
fn resource_metadata(challenge: &str) -> Option<String> {
    let start = challenge.find("resource_metadata=")? + "resource_metadata=".len();
    let rest = &challenge[start..];
    let value = match rest.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next()?,
        None => rest.split([',', ' ']).next()?,
    };
    (!value.is_empty()).then(|| value.to_owned())
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
