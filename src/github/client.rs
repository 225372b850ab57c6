//! The GitHub REST client (octocrab, base URL from `GITHUB_API_URL`) and the sticky comment
//! upsert: list the pull request's comments page by page (`Link` headers), update ours in place
//! or create it, retrying transient failures (5xx, 429, network) with bounded backoff.
//!
//! A 403 or 404 (a fork's read-only token, a missing `pull-requests: write` permission) is
//! returned as [`CommentErrorKind::Forbidden`] for the caller to turn into a warning. The token
//! never appears in an error: messages are redacted before they leave this module.

use std::time::Duration;

use octocrab::Octocrab;
use serde::Deserialize;

use crate::mcp::evidence::Redactor;

use super::comment;

/// How often and how patiently transient failures are retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RetryPolicy {
    /// Attempts in all (the first one included).
    pub attempts: u32,
    /// The wait before the second attempt; it doubles for each further one.
    pub first_backoff: Duration,
    /// The longest wait between two attempts.
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self { attempts: 4, first_backoff: Duration::from_millis(500), max_backoff: Duration::from_secs(4) }
    }
}

/// Where the comment goes.
#[derive(Debug, Clone)]
pub(crate) struct CommentTarget {
    /// `GITHUB_API_URL`.
    pub api_url: String,
    /// The token.
    pub token: Option<String>,
    /// Repository owner.
    pub owner: String,
    /// Repository name.
    pub repo: String,
    /// The pull request number.
    pub pull_request: u64,
    /// The `comment-id` input.
    pub comment_id: String,
    /// Timeout of one request.
    pub timeout: Duration,
}

/// What the upsert did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Upserted {
    /// The comment's web URL (empty when GitHub did not say).
    pub url: String,
    /// True when the comment was created, false when an existing one was updated.
    pub created: bool,
    /// Attempts made (1 when nothing had to be retried).
    pub attempts: u32,
}

/// Why the comment could not be posted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub(crate) struct CommentError {
    /// What kind of failure.
    pub kind: CommentErrorKind,
    /// A redacted description (status and GitHub's message).
    pub message: String,
}

/// The kinds of [`CommentError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CommentErrorKind {
    /// 401, 403 or 404: the token may not write here (a fork pull request, a missing permission).
    Forbidden,
    /// Still failing after every retry: 5xx, 429 or network errors.
    Transient,
    /// Anything else (a malformed answer, an invalid URL).
    Other,
}

#[derive(Debug, Deserialize)]
struct RemoteComment {
    id: u64,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    html_url: Option<String>,
}

/// Finds our comment on the pull request (by its marker) and updates it, or creates it.
/// `render` gets the previous run's state (from our comment, when there is one) and returns the
/// body. Transient failures restart the whole find-then-write step, so a create that failed
/// half-way is found on the next attempt instead of being posted twice.
pub(crate) async fn upsert(
    target: &CommentTarget,
    render: &(dyn Fn(Option<&crate::baseline::State>) -> String + Sync),
    policy: RetryPolicy,
    log: &(dyn Fn(&str) + Sync),
) -> Result<Upserted, CommentError> {
    let redactor = Redactor::new(target.token.clone());
    let client = build(target).map_err(|error| CommentError {
        kind: CommentErrorKind::Other,
        message: redactor.redact(&format!("cannot set up the GitHub client: {error}")),
    })?;
    let mut backoff = policy.first_backoff;
    let mut attempt = 1;
    loop {
        match upsert_once(&client, target, render).await {
            Ok((url, created)) => return Ok(Upserted { url, created, attempts: attempt }),
            Err(error) => {
                let error = CommentError { kind: error.kind, message: redactor.redact(&error.message) };
                if error.kind != CommentErrorKind::Transient || attempt >= policy.attempts {
                    return Err(error);
                }
                log(&format!(
                    "GitHub API: {} (attempt {attempt} of {}); retrying in {} ms",
                    error.message,
                    policy.attempts,
                    backoff.as_millis()
                ));
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(policy.max_backoff);
                attempt += 1;
            }
        }
    }
}

fn build(target: &CommentTarget) -> octocrab::Result<Octocrab> {
    let mut builder = Octocrab::builder()
        .base_uri(target.api_url.trim_end_matches('/'))?
        .set_connect_timeout(Some(target.timeout))
        .set_read_timeout(Some(target.timeout))
        .set_write_timeout(Some(target.timeout));
    if let Some(token) = &target.token {
        builder = builder.personal_token(token.clone());
    }
    builder.build()
}

async fn upsert_once(
    client: &Octocrab,
    target: &CommentTarget,
    render: &(dyn Fn(Option<&crate::baseline::State>) -> String + Sync),
) -> Result<(String, bool), CommentError> {
    let route = format!("/repos/{}/{}/issues/{}/comments", target.owner, target.repo, target.pull_request);
    let mut page: octocrab::Page<RemoteComment> =
        client.get(&route, Some(&[("per_page", "100")])).await.map_err(classify)?;
    let mut ours = None;
    // Bounded: 100 pages of 100 comments.
    for _ in 0..100 {
        if let Some(found) =
            page.items.iter().find(|c| c.body.as_deref().is_some_and(|b| comment::is_ours(b, &target.comment_id)))
        {
            ours = Some((found.id, found.body.clone().unwrap_or_default()));
            break;
        }
        match client.get_page::<RemoteComment>(&page.next).await.map_err(classify)? {
            Some(next) => page = next,
            None => break,
        }
    }
    let body =
        serde_json::json!({ "body": render(ours.as_ref().and_then(|(_, body)| comment::parse_state(body)).as_ref()) });
    let (written, created): (RemoteComment, bool) = match ours {
        Some((id, _)) => {
            let route = format!("/repos/{}/{}/issues/comments/{id}", target.owner, target.repo);
            (client.patch(route, Some(&body)).await.map_err(classify)?, false)
        }
        None => (client.post(route, Some(&body)).await.map_err(classify)?, true),
    };
    Ok((written.html_url.unwrap_or_default(), created))
}

fn classify(error: octocrab::Error) -> CommentError {
    match &error {
        octocrab::Error::GitHub { source, .. } => {
            let status = source.status_code.as_u16();
            let kind = match status {
                401 | 403 | 404 => CommentErrorKind::Forbidden,
                429 | 500..=599 => CommentErrorKind::Transient,
                _ => CommentErrorKind::Other,
            };
            let message: String = source.message.chars().take(300).collect();
            CommentError { kind, message: format!("HTTP {status}: {message}") }
        }
        octocrab::Error::Hyper { .. } | octocrab::Error::Service { .. } | octocrab::Error::Http { .. } => {
            CommentError {
                kind: CommentErrorKind::Transient,
                message: format!("network error: {}", first_line(&error)),
            }
        }
        _ => CommentError { kind: CommentErrorKind::Other, message: first_line(&error) },
    }
}

/// The first line of an error's text (octocrab appends backtraces on later lines).
fn first_line(error: &octocrab::Error) -> String {
    error.to_string().lines().next().unwrap_or_default().chars().take(300).collect()
}
