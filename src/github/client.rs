//! The GitHub REST client (octocrab, base URL from `GITHUB_API_URL`) and the sticky comment
//! upsert: list the pull request's comments page by page (`Link` headers), update ours in place
//! or create it, retrying transient failures (5xx, 429, network) with bounded backoff.
//!
//! A rate limit (429, or 403 with `Retry-After` or `x-ratelimit-remaining: 0`) is transient too,
//! and we wait what GitHub asks (`Retry-After` seconds, or until `x-ratelimit-reset`) instead of
//! our own backoff, up to [`RetryPolicy::max_wait`]; when GitHub asks for longer we give up at
//! once ([`CommentErrorKind::RateLimited`]) rather than hold the job. Octocrab's error for a
//! failed response keeps the response headers, so the typed calls (and their pagination) stay.
//!
//! Any other 401 or 403, or a 404 (a fork's read-only token, a missing `pull-requests: write`
//! permission), is returned as [`CommentErrorKind::Forbidden`] for the caller to turn into a
//! warning; so is a TLS certificate the API's connection did not accept
//! ([`CommentErrorKind::Tls`]), which no retry would change. The token never appears in an error: messages are redacted before they leave this
//! module.

use std::time::Duration;

use chrono::{DateTime, Utc};
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
    /// The longest wait between two attempts of our own backoff.
    pub max_backoff: Duration,
    /// The longest wait GitHub may ask for (`Retry-After`, `x-ratelimit-reset`); a longer one
    /// ends the retries at once, so a rate limit never holds the job for long.
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            attempts: 4,
            first_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(4),
            max_wait: Duration::from_secs(60),
        }
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
    /// 401, 403 (without rate-limit headers) or 404: the token may not write here (a fork pull
    /// request, a missing permission).
    Forbidden,
    /// Still failing after every retry: 5xx, 429, rate-limited 403 or network errors.
    Transient,
    /// Rate limited, and GitHub asked for a longer wait than [`RetryPolicy::max_wait`].
    RateLimited,
    /// The API's TLS certificate was not accepted (an unknown issuer, expired, another name):
    /// not transient, so never retried; the message names the problem and `SSL_CERT_FILE`.
    Tls,
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
            Err(Failure { error, server_wait }) => {
                let error = CommentError { kind: error.kind, message: redactor.redact(&error.message) };
                if error.kind != CommentErrorKind::Transient || attempt >= policy.attempts {
                    return Err(error);
                }
                let (wait, why) = match server_wait {
                    Some(asked) if asked.wait > policy.max_wait => {
                        return Err(CommentError {
                            kind: CommentErrorKind::RateLimited,
                            message: format!(
                                "{}, longer than the {} this action waits, so it does not retry ({})",
                                asked.describe(),
                                format_wait(policy.max_wait),
                                error.message
                            ),
                        });
                    }
                    Some(asked) => (asked.wait, format!("{}, waiting that long", asked.describe())),
                    None => {
                        let wait = backoff;
                        backoff = (backoff * 2).min(policy.max_backoff);
                        (wait, format!("retrying in {}", format_wait(wait)))
                    }
                };
                log(&format!("GitHub API: {} (attempt {attempt} of {}); {why}", error.message, policy.attempts));
                tokio::time::sleep(wait).await;
                attempt += 1;
            }
        }
    }
}

/// A failed attempt: the error, and the wait GitHub asked for when it said.
#[derive(Debug)]
struct Failure {
    error: CommentError,
    server_wait: Option<ServerWait>,
}

impl From<CommentError> for Failure {
    fn from(error: CommentError) -> Self {
        Self { error, server_wait: None }
    }
}

/// A wait GitHub asked for, and which header asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ServerWait {
    wait: Duration,
    reason: WaitReason,
}

/// The header a [`ServerWait`] comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WaitReason {
    /// `Retry-After` (seconds, or an HTTP date).
    RetryAfter,
    /// `x-ratelimit-remaining: 0` with `x-ratelimit-reset` (epoch seconds).
    RateLimitReset,
}

impl ServerWait {
    /// Why we wait, for the log and for messages.
    fn describe(&self) -> String {
        match self.reason {
            WaitReason::RetryAfter => format!("GitHub asked to retry after {}", format_wait(self.wait)),
            WaitReason::RateLimitReset => format!("GitHub's rate limit resets in {}", format_wait(self.wait)),
        }
    }
}

/// `3 s` for whole seconds, `500 ms` otherwise.
fn format_wait(wait: Duration) -> String {
    if wait.subsec_millis() == 0 && !wait.is_zero() {
        format!("{} s", wait.as_secs())
    } else {
        format!("{} ms", wait.as_millis())
    }
}

/// The rate-limit headers of a failed response, as text (absent when not sent).
#[derive(Debug, Clone, Copy, Default)]
struct RateLimitHeaders<'a> {
    retry_after: Option<&'a str>,
    remaining: Option<&'a str>,
    reset: Option<&'a str>,
}

impl<'a> RateLimitHeaders<'a> {
    /// Reads them from a response's headers (`reqwest::header` is the `http` crate's, as octocrab's).
    fn of(headers: &'a reqwest::header::HeaderMap) -> Self {
        let get = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
        Self {
            retry_after: get("retry-after"),
            remaining: get("x-ratelimit-remaining"),
            reset: get("x-ratelimit-reset"),
        }
    }

    /// Whether a 403 with these headers is a rate limit rather than a refusal: GitHub's
    /// secondary rate limits answer 403 with `Retry-After`, an exhausted primary limit answers
    /// 403 with `x-ratelimit-remaining: 0`.
    fn limited(&self) -> bool {
        self.retry_after.is_some() || self.remaining.is_some_and(|remaining| remaining.trim() == "0")
    }

    /// The wait these headers ask for at `now`: `Retry-After` first (seconds or an HTTP date),
    /// else the time until `x-ratelimit-reset` when `x-ratelimit-remaining` is 0. A time in the
    /// past is no wait; an unreadable header is ignored.
    fn wait(&self, now: DateTime<Utc>) -> Option<ServerWait> {
        let until =
            |then: DateTime<Utc>| Duration::from_secs(u64::try_from(then.timestamp() - now.timestamp()).unwrap_or(0));
        let retry_after = self.retry_after.map(str::trim).and_then(|value| {
            value
                .parse::<u64>()
                .ok()
                .map(Duration::from_secs)
                .or_else(|| DateTime::parse_from_rfc2822(value).ok().map(|date| until(date.with_timezone(&Utc))))
        });
        if let Some(wait) = retry_after {
            return Some(ServerWait { wait, reason: WaitReason::RetryAfter });
        }
        if self.remaining.map(str::trim) != Some("0") {
            return None;
        }
        let reset = self.reset.and_then(|value| value.trim().parse::<i64>().ok())?;
        let reset = DateTime::from_timestamp(reset, 0)?;
        Some(ServerWait { wait: until(reset), reason: WaitReason::RateLimitReset })
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
) -> Result<(String, bool), Failure> {
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

fn classify(error: octocrab::Error) -> Failure {
    match &error {
        octocrab::Error::GitHub { source, .. } => {
            let status = source.status_code.as_u16();
            let headers = source.headers.as_ref().map(RateLimitHeaders::of).unwrap_or_default();
            let kind = kind_of(status, &headers);
            let message: String = source.message.chars().take(300).collect();
            let server_wait = if kind == CommentErrorKind::Transient { headers.wait(Utc::now()) } else { None };
            Failure { error: CommentError { kind, message: format!("HTTP {status}: {message}") }, server_wait }
        }
        octocrab::Error::Hyper { .. } | octocrab::Error::Service { .. } | octocrab::Error::Http { .. }
            if crate::mcp::tls::certificate_problem(&error).is_some() =>
        {
            let problem = crate::mcp::tls::certificate_problem(&error).unwrap_or_default();
            CommentError {
                kind: CommentErrorKind::Tls,
                message: format!(
                    "TLS certificate problem: {problem}; if the API's certificate is issued by a private CA, set {} to that CA's certificate (PEM)",
                    crate::mcp::tls::CERT_FILE_VAR
                ),
            }
            .into()
        }
        octocrab::Error::Hyper { .. } | octocrab::Error::Service { .. } | octocrab::Error::Http { .. } => {
            CommentError {
                kind: CommentErrorKind::Transient,
                message: format!("network error: {}", first_line(&error)),
            }
            .into()
        }
        _ => CommentError { kind: CommentErrorKind::Other, message: first_line(&error) }.into(),
    }
}

/// The kind of failure a status with these headers is: a 403 with rate-limit headers is a rate
/// limit (transient), any other 401/403/404 a refusal.
fn kind_of(status: u16, headers: &RateLimitHeaders<'_>) -> CommentErrorKind {
    match status {
        403 if headers.limited() => CommentErrorKind::Transient,
        401 | 403 | 404 => CommentErrorKind::Forbidden,
        429 | 500..=599 => CommentErrorKind::Transient,
        _ => CommentErrorKind::Other,
    }
}

/// The first line of an error's text (octocrab appends backtraces on later lines).
fn first_line(error: &octocrab::Error) -> String {
    error.to_string().lines().next().unwrap_or_default().chars().take(300).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        DateTime::from_timestamp(1_700_000_000, 0).expect("a valid time")
    }

    fn headers<'a>(
        retry_after: Option<&'a str>,
        remaining: Option<&'a str>,
        reset: Option<&'a str>,
    ) -> RateLimitHeaders<'a> {
        RateLimitHeaders { retry_after, remaining, reset }
    }

    fn asked(seconds: u64, reason: WaitReason) -> Option<ServerWait> {
        Some(ServerWait { wait: Duration::from_secs(seconds), reason })
    }

    #[test]
    fn retry_after_in_seconds_is_the_wait() {
        let wait = headers(Some("3"), None, None).wait(now());
        assert_eq!(wait, asked(3, WaitReason::RetryAfter));
        assert_eq!(wait.expect("a wait").describe(), "GitHub asked to retry after 3 s");
        assert_eq!(headers(Some(" 0 "), None, None).wait(now()), asked(0, WaitReason::RetryAfter));
    }

    #[test]
    fn retry_after_as_an_http_date_counts_from_now() {
        // 1_700_000_000 is Tue, 14 Nov 2023 22:13:20 GMT.
        let wait = headers(Some("Tue, 14 Nov 2023 22:13:50 GMT"), None, None).wait(now());
        assert_eq!(wait, asked(30, WaitReason::RetryAfter));
        let past = headers(Some("Tue, 14 Nov 2023 22:00:00 GMT"), None, None).wait(now());
        assert_eq!(past, asked(0, WaitReason::RetryAfter), "a date in the past is no wait");
    }

    #[test]
    fn retry_after_wins_over_the_reset_time() {
        let wait = headers(Some("5"), Some("0"), Some("1700000100")).wait(now());
        assert_eq!(wait, asked(5, WaitReason::RetryAfter));
    }

    #[test]
    fn an_exhausted_limit_waits_until_the_reset() {
        let wait = headers(None, Some("0"), Some("1700000042")).wait(now());
        assert_eq!(wait, asked(42, WaitReason::RateLimitReset));
        assert_eq!(wait.expect("a wait").describe(), "GitHub's rate limit resets in 42 s");
        assert_eq!(headers(None, Some("0"), Some("1699999000")).wait(now()), asked(0, WaitReason::RateLimitReset));
    }

    #[test]
    fn no_wait_without_a_readable_request() {
        assert_eq!(headers(None, None, None).wait(now()), None);
        assert_eq!(headers(None, Some("12"), Some("1700000042")).wait(now()), None, "requests remain");
        assert_eq!(headers(None, Some("0"), None).wait(now()), None, "no reset time");
        assert_eq!(headers(None, Some("0"), Some("soon")).wait(now()), None);
        assert_eq!(headers(Some("later"), None, None).wait(now()), None);
        assert_eq!(headers(Some("-3"), None, None).wait(now()), None);
    }

    #[test]
    fn a_403_is_a_rate_limit_only_with_its_headers() {
        assert!(!headers(None, None, None).limited(), "a plain 403 is a refusal");
        assert!(!headers(None, Some("4999"), Some("1700000042")).limited());
        assert!(headers(Some("60"), None, None).limited(), "a secondary rate limit");
        assert!(headers(None, Some("0"), Some("1700000042")).limited(), "an exhausted primary limit");
    }

    #[test]
    fn statuses_and_headers_make_the_kind() {
        let plain = headers(None, None, None);
        let secondary = headers(Some("60"), None, None);
        let exhausted = headers(None, Some("0"), Some("1700000042"));
        assert_eq!(kind_of(403, &plain), CommentErrorKind::Forbidden, "the fork case");
        assert_eq!(kind_of(403, &secondary), CommentErrorKind::Transient);
        assert_eq!(kind_of(403, &exhausted), CommentErrorKind::Transient);
        assert_eq!(kind_of(401, &secondary), CommentErrorKind::Forbidden);
        assert_eq!(kind_of(404, &plain), CommentErrorKind::Forbidden);
        assert_eq!(kind_of(429, &plain), CommentErrorKind::Transient);
        assert_eq!(kind_of(502, &plain), CommentErrorKind::Transient);
        assert_eq!(kind_of(422, &secondary), CommentErrorKind::Other);
    }

    #[test]
    fn headers_are_read_by_name_whatever_their_case() {
        let mut map = reqwest::header::HeaderMap::new();
        map.insert("Retry-After", reqwest::header::HeaderValue::from_static("7"));
        map.insert("X-RateLimit-Remaining", reqwest::header::HeaderValue::from_static("0"));
        map.insert("X-RateLimit-Reset", reqwest::header::HeaderValue::from_static("1700000009"));
        let read = RateLimitHeaders::of(&map);
        assert_eq!((read.retry_after, read.remaining, read.reset), (Some("7"), Some("0"), Some("1700000009")));
    }

    #[test]
    fn waits_are_written_in_seconds_or_milliseconds() {
        assert_eq!(format_wait(Duration::from_secs(3)), "3 s");
        assert_eq!(format_wait(Duration::from_millis(500)), "500 ms");
        assert_eq!(format_wait(Duration::from_millis(1500)), "1500 ms");
        assert_eq!(format_wait(Duration::ZERO), "0 ms");
    }
}
