//! Signing in as a CI client: the OAuth 2.1 client-credentials grant for a protected server.
//!
//! Discovery follows MCP's authorization profile: the server's 401 names its protected-resource
//! metadata (`WWW-Authenticate: Bearer resource_metadata=…`, RFC 9728), else the metadata is read
//! at its well-known paths on the server's origin; the metadata names the authorization server,
//! whose own metadata (RFC 8414 `/.well-known/oauth-authorization-server`, else OpenID discovery
//! `/.well-known/openid-configuration`) gives the token endpoint. The token is asked for with
//! `grant_type=client_credentials`, `resource` = the server's canonical URL (RFC 8707) and the
//! scopes when given; the client authenticates with `client_secret_basic`, or
//! `client_secret_post` when that is all the metadata allows.
//!
//! A [`TokenSource`] holds the token and obtains a new one when it is about to expire, or when
//! the server refuses it (`invalid_token`). Every token, and the client secret, is added to the
//! run's [`Redactor`] the moment it is known, so neither reaches any evidence; neither is ever in
//! a `Debug` form or an error.

use std::fmt;
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::Value;

use super::evidence::Redactor;

/// The most bytes of a metadata document or token answer read.
const MAX_BODY_BYTES: usize = 1024 * 1024;
/// A token is renewed this long before it expires (at most a fifth of its lifetime).
const RENEW_MARGIN: Duration = Duration::from_secs(30);
/// How long after a failed renewal the next is tried.
const RETRY_AFTER: Duration = Duration::from_secs(5);

/// Who the client is: its id, its secret, and the scopes it asks for.
#[derive(Clone)]
pub(crate) struct ClientCredentials {
    /// The client id registered at the authorization server.
    pub client_id: String,
    /// The client secret (a secret).
    pub client_secret: String,
    /// The scopes asked for, space-separated; `None`: the authorization server's default.
    pub scopes: Option<String>,
    /// Another resource registered for the same client, for the audience probe (A-5).
    pub other_resource: Option<String>,
}

/// Never shows the secret.
impl fmt::Debug for ClientCredentials {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("ClientCredentials")
            .field("client_id", &self.client_id)
            .field("client_secret", &"***")
            .field("scopes", &self.scopes)
            .field("other_resource", &self.other_resource)
            .finish()
    }
}

/// A token waited out for the expiry probe (A-6), or why there is none.
#[derive(Debug)]
pub(crate) enum Expired {
    /// A token of the server's that has expired (it was waited out).
    Token(String),
    /// The authorization server's tokens live longer than the probe waits (or say nothing of
    /// their lifetime): their lifetime, when given.
    TooLong(Option<Duration>),
    /// The authorization server refused a token.
    Refused(SignInError),
}

/// What a failed sign-in is about, so the caller can name the setting to check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Check {
    /// The client id or secret (`invalid_client`, `unauthorized_client`).
    Client,
    /// The scopes (`invalid_scope`).
    Scopes,
    /// The resource asked for (`invalid_target`).
    Resource,
    /// The server's protected-resource metadata, or the way to it.
    Discovery,
    /// The authorization server the server's metadata names (in
    /// [`SignInError::authorization_server`]): it could not be reached or served no metadata.
    AuthorizationServer,
}

/// A sign-in that failed: what happened (redacted) and what to check.
#[derive(Debug, Clone)]
pub(crate) struct SignInError {
    /// One sentence, naming the authorization server's `error` and `error_description`.
    pub message: String,
    /// What to check.
    pub check: Check,
    /// The authorization server concerned, once the server's metadata named it.
    pub authorization_server: Option<String>,
}

impl fmt::Display for SignInError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.message)
    }
}

/// An access token and when it is due for renewal.
struct Token {
    value: String,
    renew_at: Option<Instant>,
    /// Its lifetime (`expires_in`), when the authorization server gave one.
    lifetime: Option<Duration>,
}

/// The access tokens of one run, obtained and renewed by the client-credentials grant.
pub(crate) struct TokenSource {
    credentials: ClientCredentials,
    /// The server's canonical URL, the `resource` of every token.
    resource: String,
    /// The authorization server's issuer, as the protected-resource metadata names it.
    issuer: String,
    token_endpoint: String,
    /// `client_secret_post` rather than `client_secret_basic`.
    post: bool,
    client: reqwest::Client,
    redactor: Redactor,
    current: tokio::sync::Mutex<Token>,
}

/// Never shows a token or the secret.
impl fmt::Debug for TokenSource {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("TokenSource")
            .field("client_id", &self.credentials.client_id)
            .field("resource", &self.resource)
            .field("token_endpoint", &self.token_endpoint)
            .finish_non_exhaustive()
    }
}

impl TokenSource {
    /// Discovers the authorization server of the server at `endpoint` and obtains a first
    /// token. The secret is added to `redactor` before anything is sent, each token as it comes.
    ///
    /// # Errors
    /// The server names no authorization server, its metadata cannot be read, or the
    /// authorization server refuses the grant.
    pub(crate) async fn sign_in(
        credentials: ClientCredentials,
        endpoint: &str,
        timeout: Duration,
        redactor: Redactor,
    ) -> Result<Self, SignInError> {
        redactor.add(&credentials.client_secret);
        super::http::install_crypto_provider();
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(super::tls::reqwest_config().map_err(|error| discovery(error.to_string()))?)
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|error| discovery(format!("cannot build the HTTP client: {error}")))?;
        let resource = canonical(endpoint);
        let (issuer, metadata) = discover(&client, endpoint).await?;
        let token_endpoint = metadata
            .get("token_endpoint")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                authorization_server(
                    &issuer,
                    format!("the authorization server {issuer}'s metadata names no `token_endpoint`"),
                )
            })?
            .to_owned();
        let methods: Vec<&str> = metadata
            .get("token_endpoint_auth_methods_supported")
            .and_then(Value::as_array)
            .map(|methods| methods.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let post =
            !methods.is_empty() && !methods.contains(&"client_secret_basic") && methods.contains(&"client_secret_post");
        let source = Self {
            credentials,
            resource,
            issuer,
            token_endpoint,
            post,
            client,
            redactor,
            current: tokio::sync::Mutex::new(Token { value: String::new(), renew_at: None, lifetime: None }),
        };
        let first = source.obtain(&source.resource).await?;
        *source.current.lock().await = first;
        Ok(source)
    }

    /// The server's canonical URL, the `resource` of the tokens.
    pub(crate) fn resource(&self) -> &str {
        &self.resource
    }

    /// Another resource registered for the client (A-5), when one was named.
    pub(crate) fn other_resource(&self) -> Option<&str> {
        self.credentials.other_resource.as_deref()
    }

    /// A token of the server's, obtained now and waited out until a second after it expired
    /// (its `exp` has a resolution of a second), when it lives at most `max_wait`.
    pub(crate) async fn expired_token(&self, max_wait: Duration) -> Expired {
        let token = match self.obtain(&self.resource).await {
            Ok(token) => token,
            Err(error) => return Expired::Refused(error),
        };
        match token.lifetime {
            Some(lifetime) if lifetime <= max_wait => {
                tokio::time::sleep(lifetime + Duration::from_millis(1500)).await;
                Expired::Token(token.value)
            }
            lifetime => Expired::TooLong(lifetime),
        }
    }

    /// The current token, renewed first when it is about to expire. A renewal that fails keeps
    /// the old token (the server's refusal then shows what happened) and is tried again
    /// [`RETRY_AFTER`] later, not on every request.
    pub(crate) async fn bearer(&self) -> String {
        let mut current = self.current.lock().await;
        if current.renew_at.is_some_and(|at| Instant::now() >= at) {
            match self.obtain(&self.resource).await {
                Ok(token) => *current = token,
                Err(_) => current.renew_at = Some(Instant::now() + RETRY_AFTER),
            }
        }
        current.value.clone()
    }

    /// After the server refused `stale` as `invalid_token`: a new token, unless another
    /// request already replaced it; `None` when the authorization server refuses.
    pub(crate) async fn renew(&self, stale: &str) -> Option<String> {
        let mut current = self.current.lock().await;
        if current.value != stale {
            return Some(current.value.clone());
        }
        let token = self.obtain(&self.resource).await.ok()?;
        *current = token;
        Some(current.value.clone())
    }

    /// A token for another resource registered for the same client (RFC 8707), not kept.
    ///
    /// # Errors
    /// The authorization server refuses it.
    pub(crate) async fn token_for(&self, resource: &str) -> Result<String, SignInError> {
        self.obtain(resource).await.map(|token| token.value)
    }

    /// One token request at the token endpoint.
    async fn obtain(&self, resource: &str) -> Result<Token, SignInError> {
        let mut request = self
            .client
            .post(&self.token_endpoint)
            .header("Accept", "application/json")
            .header("Content-Type", "application/x-www-form-urlencoded");
        if !self.post {
            // RFC 6749 §2.3.1: each part form-encoded, then Basic.
            let encode = |text: &str| url::form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>();
            let pair = format!("{}:{}", encode(&self.credentials.client_id), encode(&self.credentials.client_secret));
            let basic = base64::engine::general_purpose::STANDARD.encode(pair);
            request = request.header("Authorization", format!("Basic {basic}"));
        }
        let started = Instant::now();
        let answer = request.body(self.form(resource)).send().await.map_err(|error| {
            authorization_server(
                &self.issuer,
                self.redactor.redact(&format!(
                    "cannot reach the token endpoint {}: {}",
                    self.token_endpoint,
                    super::http::root_cause(&error)
                )),
            )
        })?;
        let status = answer.status().as_u16();
        let body = read_json(answer).await;
        let value = body.as_ref().and_then(|body| body.get("access_token")).and_then(Value::as_str);
        match (status, value) {
            (200, Some(value)) if !value.is_empty() => {
                self.redactor.add(value);
                let lifetime = body
                    .as_ref()
                    .and_then(|body| body.get("expires_in"))
                    .and_then(Value::as_f64)
                    .filter(|seconds| seconds.is_finite() && *seconds >= 0.0)
                    .map(|seconds| Duration::from_secs_f64(seconds.min(1e9)));
                let renew_at = lifetime.map(|lifetime| started + lifetime - RENEW_MARGIN.min(lifetime / 5));
                Ok(Token { value: value.to_owned(), renew_at, lifetime })
            }
            _ => Err(self.refusal(status, body.as_ref(), resource)),
        }
    }

    /// The token request's form: the grant, the resource, the scopes, and with
    /// `client_secret_post` the client's credentials.
    fn form(&self, resource: &str) -> String {
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", "client_credentials");
        form.append_pair("resource", resource);
        if let Some(scopes) = self.credentials.scopes.as_deref().filter(|scopes| !scopes.trim().is_empty()) {
            form.append_pair("scope", scopes.trim());
        }
        if self.post {
            form.append_pair("client_id", &self.credentials.client_id);
            form.append_pair("client_secret", &self.credentials.client_secret);
        }
        form.finish()
    }

    /// The authorization server's refusal as one error: its `error` and `error_description`.
    fn refusal(&self, status: u16, body: Option<&Value>, resource: &str) -> SignInError {
        let field = |name: &str| body.and_then(|body| body.get(name)).and_then(Value::as_str);
        let code = field("error").unwrap_or("(no `error` in the answer)");
        let description = field("error_description").map(|text| format!(": {text}")).unwrap_or_default();
        let check = match code {
            "invalid_client" | "unauthorized_client" => Check::Client,
            "invalid_scope" => Check::Scopes,
            "invalid_target" => Check::Resource,
            _ => Check::Discovery,
        };
        let message = format!(
            "the authorization server {} refused the client-credentials grant for client `{}` and resource {resource} (HTTP {status}): {code}{description}",
            self.issuer, self.credentials.client_id
        );
        SignInError { message: self.redactor.redact(&message), check, authorization_server: Some(self.issuer.clone()) }
    }
}

/// A discovery error.
fn discovery(message: String) -> SignInError {
    SignInError { message, check: Check::Discovery, authorization_server: None }
}

/// An error of the authorization server `issuer`, named by the server's metadata: unreachable,
/// or serving no metadata or token endpoint.
fn authorization_server(issuer: &str, message: String) -> SignInError {
    SignInError { message, check: Check::AuthorizationServer, authorization_server: Some(issuer.to_owned()) }
}

/// The canonical URL of an MCP endpoint (RFC 8707 `resource`): scheme and host in lower case,
/// no fragment, no query.
pub(crate) fn canonical(endpoint: &str) -> String {
    match url::Url::parse(endpoint) {
        Ok(mut url) => {
            url.set_fragment(None);
            url.set_query(None);
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.to_string()
        }
        Err(_) => endpoint.to_owned(),
    }
}

/// The authorization server's issuer and metadata, from the server at `endpoint`.
async fn discover(client: &reqwest::Client, endpoint: &str) -> Result<(String, Value), SignInError> {
    // The 401 of a request without credentials names the protected-resource metadata.
    let probe = client
        .post(endpoint)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}"#)
        .send()
        .await
        .map_err(|error| {
            discovery(format!(
                "cannot reach the server to discover its authorization server: {}",
                super::http::root_cause(&error)
            ))
        })?;
    let named =
        probe.headers().get("www-authenticate").and_then(|value| value.to_str().ok()).and_then(resource_metadata);
    let mut candidates: Vec<String> = named.into_iter().collect();
    candidates.extend(well_known(endpoint, "oauth-protected-resource"));
    let mut tried = Vec::new();
    let mut prm = None;
    for url in candidates {
        match get_json(client, &url).await {
            Ok(document) => {
                prm = Some(document);
                break;
            }
            Err(why) => tried.push(format!("{url}: {why}")),
        }
    }
    let Some(prm) = prm else {
        return Err(discovery(format!(
            "the server advertises no protected-resource metadata (RFC 9728), so its authorization server is unknown; tried {}",
            tried.join("; ")
        )));
    };
    let issuer = prm
        .get("authorization_servers")
        .and_then(Value::as_array)
        .and_then(|servers| servers.iter().find_map(Value::as_str))
        .ok_or_else(|| discovery("the server's protected-resource metadata names no `authorization_servers`".into()))?
        .to_owned();
    let mut tried = Vec::new();
    let mut candidates = well_known(&issuer, "oauth-authorization-server");
    candidates.extend(well_known(&issuer, "openid-configuration"));
    // OpenID discovery also appends the well-known path to the issuer.
    candidates.push(format!("{}/.well-known/openid-configuration", issuer.trim_end_matches('/')));
    candidates.dedup();
    for url in candidates {
        match get_json(client, &url).await {
            Ok(metadata) => return Ok((issuer, metadata)),
            Err(why) => tried.push(format!("{url}: {why}")),
        }
    }
    Err(authorization_server(
        &issuer,
        format!(
            "the authorization server {issuer} serves no metadata (RFC 8414 or OpenID discovery); tried {}",
            tried.join("; ")
        ),
    ))
}

/// The well-known URLs of `name` for `url`: the path inserted after the origin (RFC 8414 §3,
/// RFC 9728 §3.1), then at the root.
fn well_known(url: &str, name: &str) -> Vec<String> {
    let Ok(parsed) = url::Url::parse(url) else { return Vec::new() };
    let origin = parsed.origin().ascii_serialization();
    let path = parsed.path().trim_end_matches('/');
    let mut urls = Vec::new();
    if !path.is_empty() {
        urls.push(format!("{origin}/.well-known/{name}{path}"));
    }
    urls.push(format!("{origin}/.well-known/{name}"));
    urls
}

/// Why a metadata document could not be read.
#[derive(Debug, thiserror::Error)]
enum Unfetched {
    /// No answer: the transport's root cause.
    #[error("{0}")]
    Unreachable(String),
    /// An answer other than 200.
    #[error("HTTP {0}")]
    Status(u16),
    /// A 200 whose body is not a JSON object.
    #[error("not a JSON object")]
    NotAnObject,
}

/// A JSON object fetched by GET, or why not.
async fn get_json(client: &reqwest::Client, url: &str) -> Result<Value, Unfetched> {
    let answer = client
        .get(url)
        .header("Accept", "application/json")
        .send()
        .await
        .map_err(|error| Unfetched::Unreachable(super::http::root_cause(&error)))?;
    let status = answer.status().as_u16();
    if status != 200 {
        return Err(Unfetched::Status(status));
    }
    read_json(answer).await.filter(Value::is_object).ok_or(Unfetched::NotAnObject)
}

/// The body as JSON, read up to [`MAX_BODY_BYTES`].
async fn read_json(mut answer: reqwest::Response) -> Option<Value> {
    let mut bytes = Vec::new();
    while let Ok(Some(chunk)) = answer.chunk().await {
        bytes.extend_from_slice(&chunk);
        if bytes.len() > MAX_BODY_BYTES {
            return None;
        }
    }
    serde_json::from_slice(&bytes).ok()
}

/// The `resource_metadata` URL of a `WWW-Authenticate: Bearer …` challenge.
pub(crate) fn resource_metadata(challenge: &str) -> Option<String> {
    let start = challenge.find("resource_metadata=")? + "resource_metadata=".len();
    let rest = &challenge[start..];
    let value = match rest.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next()?,
        None => rest.split([',', ' ']).next()?,
    };
    (!value.is_empty()).then(|| value.to_owned())
}

/// Whether a 401 says the token itself was refused (RFC 6750 `invalid_token`): in the
/// challenge or in an OAuth error body.
pub(crate) fn invalid_token(challenge: Option<&str>, body: Option<&Value>) -> bool {
    challenge.is_some_and(|challenge| challenge.contains("invalid_token"))
        || body.and_then(|body| body.get("error")).and_then(Value::as_str) == Some("invalid_token")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_known_paths_insert_the_path_after_the_origin() {
        assert_eq!(
            well_known("http://h:1/tenant/a", "oauth-authorization-server"),
            [
                "http://h:1/.well-known/oauth-authorization-server/tenant/a",
                "http://h:1/.well-known/oauth-authorization-server"
            ]
        );
        assert_eq!(well_known("http://h:1", "openid-configuration"), ["http://h:1/.well-known/openid-configuration"]);
    }

    #[test]
    fn the_canonical_url_drops_query_fragment_and_user() {
        assert_eq!(canonical("HTTP://Example.COM:8000/mcp?key=1#x"), "http://example.com:8000/mcp");
        assert_eq!(canonical("http://u:p@127.0.0.1:9/mcp"), "http://127.0.0.1:9/mcp");
    }

    #[test]
    fn the_debug_form_never_shows_the_secret() {
        let credentials = ClientCredentials {
            client_id: "ci".into(),
            client_secret: "s3cret-never".into(),
            scopes: None,
            other_resource: None,
        };
        assert!(!format!("{credentials:?}").contains("s3cret-never"));
    }

    #[test]
    fn an_invalid_token_is_read_from_the_challenge_or_the_body() {
        assert!(invalid_token(Some(r#"Bearer error="invalid_token""#), None));
        assert!(invalid_token(None, Some(&serde_json::json!({"error": "invalid_token"}))));
        assert!(!invalid_token(Some(r#"Bearer error="insufficient_scope""#), None));
    }
}
