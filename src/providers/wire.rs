//! What every provider adapter does the same way over HTTP: send a built request, read a bounded
//! JSON answer, map a failure to a [`ProviderError`] with a redacted message.

use serde_json::Value;

use super::{EndpointConfig, ProviderError};
use crate::mcp::evidence::Redactor;

/// A JSON answer's status-to-error mapping, per provider.
pub(super) type ErrorFor = fn(u16, Option<std::time::Duration>, &[u8], &Redactor) -> ProviderError;

/// Sends a built request and reads the JSON answer: the body bounded by
/// [`MAX_RESPONSE_BYTES`], a non-2xx status mapped by the
/// provider's `error_for`, an unreadable body a [`ProviderError::BadResponse`] with a bounded,
/// redacted excerpt. Shared by every adapter.
pub(super) async fn send_json(
    builder: reqwest::RequestBuilder,
    redactor: &Redactor,
    error_for: ErrorFor,
) -> Result<Value, ProviderError> {
    let mut response = builder.send().await.map_err(|error| network(&error, redactor))?;
    let status = response.status().as_u16();
    let retry_after = retry_after(response.headers());
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|error| network(&error, redactor))? {
        if bytes.len() + chunk.len() > MAX_RESPONSE_BYTES {
            return Err(ProviderError::BadResponse(format!("the response exceeds {MAX_RESPONSE_BYTES} bytes")));
        }
        bytes.extend_from_slice(&chunk);
    }
    if !(200..300).contains(&status) {
        return Err(error_for(status, retry_after, &bytes, redactor));
    }
    serde_json::from_slice(&bytes).map_err(|error| {
        ProviderError::BadResponse(format!(
            "not JSON ({error}): {}",
            bounded(&redactor.excerpt(&bytes), MAX_MESSAGE_CHARS)
        ))
    })
}

/// A network failure with its causes, redacted and bounded.
fn network(error: &reqwest::Error, redactor: &Redactor) -> ProviderError {
    let mut message = if error.is_timeout() { "timed out".to_owned() } else { error.to_string() };
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        message = format!("{message}: {cause}");
        source = cause.source();
    }
    ProviderError::Network(bounded(&redactor.redact(&message), MAX_MESSAGE_CHARS))
}

/// One model endpoint as an adapter uses it: the config, the method's URL, an HTTP client that
/// never follows redirects (a redirect is an answer, never followed with the key) and a redactor
/// for the key. Its `Debug` shows the config (key hidden) and the URL, not the redactor.
pub(super) struct Endpoint {
    /// How to reach the model.
    pub(super) config: EndpointConfig,
    /// The base URL joined with the method's path.
    pub(super) url: String,
    /// The HTTP client.
    pub(super) client: reqwest::Client,
    /// Redacts the key.
    pub(super) redactor: Redactor,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Endpoint").field("config", &self.config).field("url", &self.url).finish()
    }
}

impl Endpoint {
    /// The endpoint of `config` for the method at `path` (`/chat/completions`, `/v1/messages`).
    /// Fails only when the HTTP client cannot be built (the TLS backend).
    pub(super) fn new(config: EndpointConfig, path: &str) -> Result<Self, ProviderError> {
        // Installing twice is harmless; the first provider wins.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(config.timeout)
            .connect_timeout(config.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|error| ProviderError::Network(format!("cannot build the HTTP client: {error}")))?;
        let url = format!("{}{path}", config.base_url.trim_end_matches('/'));
        let redactor = Redactor::new(config.api_key.iter().cloned());
        Ok(Self { config, url, client, redactor })
    }

    /// A POST of the JSON `body` to the method's URL, with the key (if any) as a bearer token:
    /// how every OpenAI-compatible method authenticates.
    pub(super) fn post_json_bearer(&self, body: String) -> reqwest::RequestBuilder {
        let builder = self.client.post(&self.url).header(reqwest::header::CONTENT_TYPE, "application/json").body(body);
        match &self.config.api_key {
            Some(key) => builder.bearer_auth(key),
            None => builder,
        }
    }
}

/// The reported model version and fingerprint of `completion` with the key taken out: they are
/// copied into reports and cassettes, and a proxy that echoes what it was sent must not leak it.
pub(super) fn redact_reported(completion: &mut super::Completion, redactor: &Redactor) {
    for field in [&mut completion.reported_model, &mut completion.system_fingerprint] {
        if let Some(text) = field.as_mut() {
            *text = redactor.redact(text);
        }
    }
}

/// The most bytes of a response body read.
pub(super) const MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;

/// The most characters of an API error message kept.
pub(super) const MAX_MESSAGE_CHARS: usize = 512;

/// `Retry-After` in seconds, or `retry-after-ms` (OpenAI), when present and readable (an HTTP
/// date is not read: no wait is known then).
pub(super) fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<std::time::Duration> {
    let seconds = |name: &str, scale: f64| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.trim().parse::<f64>().ok())
            .and_then(|value| std::time::Duration::try_from_secs_f64(value / scale).ok())
    };
    seconds("retry-after-ms", 1000.0).or_else(|| seconds("retry-after", 1.0))
}

/// `text` cut to at most `limit` characters, with `…` when cut, at a word boundary
/// ([`crate::text::clip`]).
pub(super) fn bounded(text: &str, limit: usize) -> String {
    crate::text::clip(text, limit)
}
