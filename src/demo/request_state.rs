//! Integrity-protected `requestState` tokens for multi round-trip requests (spec-notes §9.4).
//!
//! A token is `base64url(payload).hex(mac)`, where the MAC is a keyed SipHash over the payload
//! with a key drawn at server start. The payload binds the token to the method target and its
//! arguments. This is a fixture, not a security product: it detects tampering, which is all the
//! checklist observes, but makes no claim beyond that. Tokens do not survive a restart.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// Signs and verifies `requestState` tokens with a per-process random key.
#[derive(Debug, Clone)]
pub(crate) struct StateSigner {
    key: RandomState,
}

impl Default for StateSigner {
    fn default() -> Self {
        StateSigner::new()
    }
}

impl StateSigner {
    /// A signer with a fresh random key.
    pub(crate) fn new() -> Self {
        StateSigner { key: RandomState::new() }
    }

    /// Returns an opaque token carrying `payload`.
    pub(crate) fn sign(&self, payload: &str) -> String {
        format!("{}.{}", URL_SAFE_NO_PAD.encode(payload.as_bytes()), self.mac(payload.as_bytes()))
    }

    /// Returns the payload of `token` when its MAC verifies, `None` when it was altered.
    pub(crate) fn verify(&self, token: &str) -> Option<String> {
        let (encoded, mac) = token.split_once('.')?;
        let payload = URL_SAFE_NO_PAD.decode(encoded).ok()?;
        if self.mac(&payload) != mac {
            return None;
        }
        String::from_utf8(payload).ok()
    }

    /// 128 bits from two domain-separated SipHash runs under the random key.
    fn mac(&self, payload: &[u8]) -> String {
        let run = |domain: u8| {
            let mut hasher = self.key.build_hasher();
            hasher.write_u8(domain);
            hasher.write(payload);
            hasher.finish()
        };
        format!("{:016x}{:016x}", run(1), run(2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_tamper_detection() {
        let signer = StateSigner::new();
        let token = signer.sign("tool|{}");
        assert_eq!(signer.verify(&token).as_deref(), Some("tool|{}"));
        let mut tampered = token.clone();
        tampered.insert(0, 'x');
        assert_eq!(signer.verify(&tampered), None);
        assert_eq!(signer.verify("garbage"), None);
        assert_eq!(StateSigner::new().verify(&token), None);
    }
}
