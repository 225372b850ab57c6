//! Bounded, redacted excerpts of wire traffic kept as evidence for checks.
//!
//! Memory stays flat on huge servers because only [`EXCERPT_BYTES`] of any message is kept, and
//! secrets (user-supplied header values such as `Authorization`) never reach a report: every
//! excerpt passes through [`Redactor::redact`].

use std::sync::{Arc, RwLock};

/// The most bytes of one message kept as evidence.
pub(crate) const EXCERPT_BYTES: usize = 2048;

/// Told of each secret learnt during the run, the moment it is learnt (the Action masks it in
/// the runner's log).
pub(crate) type Learnt = Arc<dyn Fn(&str) + Send + Sync>;

/// Replaces every secret value with `***` in text bound for a report. Clones share their
/// secrets: one learnt during the run ([`Redactor::add`], an access token obtained by the
/// client-credentials sign-in) is redacted by every clone from then on, and told to the
/// [`Learnt`] hook when there is one ([`Redactor::telling`]).
#[derive(Clone, Default)]
pub(crate) struct Redactor {
    secrets: Arc<RwLock<Vec<String>>>,
    learnt: Option<Learnt>,
}

/// Never prints the secrets themselves (a `{:?}` of anything holding a redactor, such as a
/// transport, must not leak them): only how many there are.
impl std::fmt::Debug for Redactor {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let count = crate::mcp::sync::read(&self.secrets).len();
        formatter.debug_struct("Redactor").field("secrets", &format_args!("{count} hidden")).finish()
    }
}

impl Redactor {
    /// A redactor for these secret values; values shorter than 4 bytes are ignored (they would
    /// redact ordinary text and are not secrets worth the name).
    /// A value with an auth scheme (`Bearer abc…`) also redacts its credential alone, which may
    /// appear elsewhere (a query string, a server's echo).
    pub(crate) fn new(secrets: impl IntoIterator<Item = String>) -> Self {
        let mut secrets: Vec<String> = secrets
            .into_iter()
            .flat_map(|secret| {
                let credential =
                    secret.split_once(' ').map(|(_, rest)| rest.trim().to_owned()).filter(|rest| rest.len() >= 8);
                std::iter::once(secret).chain(credential)
            })
            .filter(|secret| secret.len() >= 4)
            .collect();
        // Longest first, so a secret that contains another is replaced whole.
        secrets.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
        Self { secrets: Arc::new(RwLock::new(secrets)), learnt: None }
    }

    /// This redactor, telling `learnt` of each secret [`Redactor::add`] learns that it did not
    /// know (before `add` returns, so before anything could print it).
    pub(crate) fn telling(self, learnt: Learnt) -> Self {
        Self { learnt: Some(learnt), ..self }
    }

    /// Adds a secret learnt during the run (an access token), for this redactor and every clone
    /// of it; a value shorter than 4 bytes is ignored, as in [`Redactor::new`].
    pub(crate) fn add(&self, secret: &str) {
        if secret.len() < 4 {
            return;
        }
        let new = {
            let mut secrets = crate::mcp::sync::write(&self.secrets);
            let new = !secrets.iter().any(|known| known == secret);
            if new {
                secrets.push(secret.to_owned());
                secrets.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
            }
            new
        };
        if let Some(learnt) = self.learnt.as_ref().filter(|_| new) {
            learnt(secret);
        }
    }

    /// `text` with every secret replaced by `***`.
    pub(crate) fn redact(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for secret in crate::mcp::sync::read(&self.secrets).iter() {
            if text.contains(secret.as_str()) {
                text = text.replace(secret.as_str(), "***");
            }
        }
        text
    }

    /// A redacted excerpt of at most [`EXCERPT_BYTES`] bytes, cut on a character boundary, with
    /// a note of how much was left out.
    pub(crate) fn excerpt(&self, bytes: &[u8]) -> String {
        excerpt_with(self, bytes, EXCERPT_BYTES)
    }
}

fn excerpt_with(redactor: &Redactor, bytes: &[u8], limit: usize) -> String {
    // Redact on a slightly larger window so a secret cut by the limit is still caught.
    let window = bytes.len().min(limit + 512);
    let text = String::from_utf8_lossy(&bytes[..window]);
    let text = redactor.redact(&text);
    if bytes.len() <= limit && text.len() <= limit {
        return text;
    }
    let mut cut = limit.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}… [{} bytes in all]", &text[..cut], bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_learnt_is_told_once_and_a_known_one_never() {
        let told = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = told.clone();
        let redactor = Redactor::new(["client-secret-known".to_owned()])
            .telling(Arc::new(move |secret: &str| seen.lock().expect("lock").push(secret.to_owned())));
        redactor.add("client-secret-known");
        redactor.clone().add("eyJ-token-learnt");
        redactor.add("eyJ-token-learnt");
        assert_eq!(*told.lock().expect("lock"), ["eyJ-token-learnt"]);
    }

    #[test]
    fn the_debug_form_never_shows_a_secret() {
        let redactor = Redactor::new(["canary-secret-41d7".to_owned()]);
        let shown = format!("{redactor:?}");
        assert!(!shown.contains("canary-secret-41d7"), "{shown}");
        assert!(shown.contains("hidden"), "{shown}");
    }

    #[test]
    fn secrets_are_replaced_everywhere() {
        let redactor = Redactor::new(["s3cr3t-token".to_owned()]);
        assert_eq!(redactor.redact("Bearer s3cr3t-token and s3cr3t-token"), "Bearer *** and ***");
    }

    #[test]
    fn a_credential_is_redacted_without_its_scheme_too() {
        let redactor = Redactor::new(["Bearer s3cr3t-token".to_owned()]);
        assert_eq!(redactor.redact("GET /mcp?access_token=s3cr3t-token"), "GET /mcp?access_token=***");
    }

    #[test]
    fn a_secret_added_during_the_run_is_redacted_by_every_clone() {
        let redactor = Redactor::new(["s3cr3t-token".to_owned()]);
        let clone = redactor.clone();
        redactor.add("eyJ-access-token-later");
        assert_eq!(clone.redact("Bearer eyJ-access-token-later"), "Bearer ***");
    }

    #[test]
    fn long_messages_are_cut_with_their_size() {
        let redactor = Redactor::default();
        let text = "é".repeat(3000);
        let excerpt = redactor.excerpt(text.as_bytes());
        assert!(excerpt.len() < EXCERPT_BYTES + 40);
        assert!(excerpt.ends_with("[6000 bytes in all]"));
    }

    #[test]
    fn a_secret_cut_by_the_limit_is_still_redacted() {
        let redactor = Redactor::new(["abcdefgh".to_owned()]);
        let mut text = "x".repeat(EXCERPT_BYTES - 4);
        text.push_str("abcdefgh");
        assert!(!redactor.excerpt(text.as_bytes()).contains("abcd"));
    }
}
