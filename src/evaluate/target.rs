//! The server under test as a wire target: a command (stdio) or a URL (HTTP), or the embedded
//! demo server, started on loopback for the run and stopped with it.

use std::sync::Arc;

use crate::error::{Kind, UserError};
use crate::mcp::era::Target;
use crate::mcp::evidence::Redactor;
use crate::mcp::http::HttpSettings;
use crate::mcp::oauth::{Check, ClientCredentials, TokenSource};
use crate::settings::oauth::OAuthSettings;
use crate::settings::{Server, Settings, table};

/// The wire target of a server given by URL or command; `None` for the demo server, which
/// [`evaluate`] starts itself.
pub(crate) fn wire_target(settings: &Settings) -> Option<Target> {
    match &settings.server {
        Server::Command(command) => Some(Target::Stdio {
            command: command.clone(),
            env: settings.server_env.clone(),
            timeout: settings.timeout,
        }),
        Server::Url(url) => Some(Target::Http(HttpSettings {
            url: url.clone(),
            extra_headers: settings.headers.clone(),
            timeout: settings.timeout,
            oauth: None,
        })),
        Server::Demo => None,
    }
}

/// The wire target of a server given by URL or command, ready to talk to: an `https://`
/// server's CA certificates found, and signed in as a CI client when the settings ask (the
/// tokens join `redactor`). `None` for the demo server. `run`, the Action and the `golden`
/// commands all reach the server through this.
///
/// # Errors
/// No CA certificates for an `https://` server (environment); a sign-in that failed
/// ([`Kind::Unreachable`], naming the setting to check).
pub(crate) async fn connectable_target(settings: &Settings, redactor: &Redactor) -> Result<Option<Target>, UserError> {
    let Some(mut target) = wire_target(settings) else { return Ok(None) };
    if let Target::Http(http) = &mut target {
        // An `https://` server needs CA certificates to be trusted; an `http://` one none.
        if url::Url::parse(&http.url).is_ok_and(|url| url.scheme() == "https") {
            crate::mcp::tls::roots().require().map_err(|error| UserError::new(Kind::Environment, error.to_string()))?;
        }
        if let Some(oauth) = &settings.oauth {
            http.oauth = Some(Arc::new(sign_in(oauth, &http.url, settings.timeout, redactor).await?));
        }
    }
    Ok(Some(target))
}

/// The wire target of `settings` ([`connectable_target`]), or the demo server started when
/// asked.
///
/// # Errors
/// As [`connectable_target`]; no port for the demo server (environment).
pub(super) async fn target_of(
    settings: &Settings,
    demo_task: &mut Option<DemoTask>,
    redactor: &Redactor,
) -> Result<Target, UserError> {
    if let Some(target) = connectable_target(settings, redactor).await? {
        return Ok(target);
    }
    // The embedded demo server, started on loopback for this run.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.map_err(|error| {
        UserError::new(Kind::Environment, "cannot start the demo server on 127.0.0.1").caused_by(error)
    })?;
    let address = listener
        .local_addr()
        .map_err(|error| UserError::new(Kind::Environment, "cannot read the demo server's address").caused_by(error))?;
    let task = tokio::spawn(crate::demo::serve_http(listener, Arc::new(crate::demo::DemoConfig::default())));
    *demo_task = Some(DemoTask(task));
    Ok(Target::Http(HttpSettings {
        url: format!("http://{address}/mcp"),
        extra_headers: settings.headers.clone(),
        timeout: settings.timeout,
        oauth: None,
    }))
}

/// The client-credentials sign-in at the server's authorization server.
///
/// # Errors
/// The sign-in failed: one error naming the authorization server's `error` and
/// `error_description` and the setting to check.
async fn sign_in(
    oauth: &OAuthSettings,
    url: &str,
    timeout: std::time::Duration,
    redactor: &Redactor,
) -> Result<TokenSource, UserError> {
    let credentials = ClientCredentials {
        client_id: oauth.client_id.clone(),
        client_secret: oauth.client_secret.clone(),
        scopes: oauth.scopes.clone(),
        other_resource: oauth.other_resource.clone(),
    };
    TokenSource::sign_in(credentials, url, timeout, redactor.clone()).await.map_err(|error| {
        let hint = match error.check {
            Check::Client => format!(
                "check the client id ({}) and the client secret (the variable {} names; input `{}`), and that the client may use the client-credentials grant",
                table::OAUTH_CLIENT_ID.flag_name(),
                table::OAUTH_CLIENT_SECRET_ENV.flag_name(),
                table::OAUTH_CLIENT_SECRET.input_name()
            ),
            Check::Scopes => format!("check the scopes ({})", table::OAUTH_SCOPES.flag_name()),
            Check::Resource => format!(
                "check that the server's URL ({}) is registered as a resource for this client at the authorization server",
                table::SERVER_URL.flag_name()
            ),
            Check::AuthorizationServer => format!(
                "the server's protected-resource metadata was found and names the authorization server {}, which could not be reached or answered without usable metadata: check that it is up and reachable from where the evaluation runs",
                error.authorization_server.as_deref().unwrap_or("it lists")
            ),
            Check::Discovery => format!(
                "check the server URL ({}) and that the server publishes its protected-resource metadata (RFC 9728) naming an authorization server with RFC 8414 or OpenID metadata",
                table::SERVER_URL.flag_name()
            ),
        };
        UserError::new(Kind::Unreachable, format!("cannot sign in as a CI client: {}", redactor.redact(&error.message)))
            .with_hint(hint)
    })
}

/// The embedded demo server's task, aborted when dropped.
pub(super) struct DemoTask(tokio::task::JoinHandle<std::io::Result<()>>);

impl Drop for DemoTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}
