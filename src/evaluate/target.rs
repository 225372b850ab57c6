//! The server under test as a wire target: a command (stdio) or a URL (HTTP), or the embedded
//! demo server, started on loopback for the run and stopped with it.

use std::sync::Arc;

use crate::error::{Kind, UserError};
use crate::mcp::era::Target;
use crate::mcp::http::HttpSettings;
use crate::settings::{Server, Settings};

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
        })),
        Server::Demo => None,
    }
}

/// The wire target of `settings`, starting the demo server when asked.
pub(super) async fn target_of(settings: &Settings, demo_task: &mut Option<DemoTask>) -> Result<Target, UserError> {
    if let Some(target) = wire_target(settings) {
        if let Target::Http(http) = &target {
            // An `https://` server needs CA certificates to be trusted; an `http://` one none.
            if url::Url::parse(&http.url).is_ok_and(|url| url.scheme() == "https") {
                crate::mcp::tls::roots()
                    .require()
                    .map_err(|error| UserError::new(Kind::Environment, error.to_string()))?;
            }
        }
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
    }))
}

/// The embedded demo server's task, aborted when dropped.
pub(super) struct DemoTask(tokio::task::JoinHandle<std::io::Result<()>>);

impl Drop for DemoTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}
