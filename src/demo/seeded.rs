//! Seeded failures for the soak (`bench/soak.sh`, and its small twin in the integration tests):
//! hidden test fixtures, off unless asked for. With `--fail-rate R --seed S` the demo server
//! fails a share R of its `tools/call`s and the demo model answers a share R of its requests
//! with HTTP 429 or 500.
//!
//! Which requests fail is a pure function of the seed, a key naming the request by what it says
//! (the demo server: the tool's name and its arguments; the demo model: the conversation's first
//! user turn and the number of model turns before this one) and how many times the same key was
//! asked before (the attempt: a retried request gets a draw of its own). Nothing else is read —
//! no JSON-RPC id, no trace id, no arrival order across keys — so the failures stay the same
//! under any concurrency as long as no two trials send the same requests: a golden set whose
//! every trial has a prompt of its own and tool arguments naming it (the soak's set: one trial
//! per case) gets each trial's failures keyed on (case, trial, call index, attempt). Two trials
//! of one case send the same requests, so which of them a failure lands on is then up to the
//! scheduler; the harness itself sends nothing trial-specific and adds nothing for this.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::mcp::sync::lock;

/// The seeded draws of one demo process: the share that fails, the seed, and how many times each
/// key was asked so far (a few bytes per distinct request; the processes are test fixtures).
#[derive(Debug)]
pub(crate) struct SeededFailures {
    /// The share of requests that fail, in [0, 1].
    rate: f64,
    /// The seed every draw starts from.
    seed: u64,
    /// Per key, the attempts seen so far.
    asked: Mutex<HashMap<String, u64>>,
}

impl SeededFailures {
    /// Fails a share `rate` (clamped to [0, 1]) of the requests, drawn from `seed`.
    pub(crate) fn new(rate: f64, seed: u64) -> Self {
        Self { rate: rate.clamp(0.0, 1.0), seed, asked: Mutex::new(HashMap::new()) }
    }

    /// Counts one more request under `key` and draws its fate: `Some(pick)` when it fails,
    /// `pick` a second 64-bit draw for choosing how (e.g. its lowest bit: 429 or 500).
    pub(crate) fn fails(&self, key: &str) -> Option<u64> {
        let attempt = {
            let mut asked = lock(&self.asked);
            let count = asked.entry(key.to_owned()).or_insert(0);
            *count += 1;
            *count - 1
        };
        let hash = draw(self.seed, key, attempt);
        // The top 53 bits as a uniform number in [0, 1).
        let uniform = (hash >> 11) as f64 / (1_u64 << 53) as f64;
        (uniform < self.rate).then(|| mix(hash))
    }
}

/// The draw of (`seed`, `key`, `attempt`): FNV-1a over the key's bytes, started from the seed,
/// then the attempt mixed in (SplitMix64's finaliser spreads every input bit).
fn draw(seed: u64, key: &str, attempt: u64) -> u64 {
    let hashed = key.bytes().fold(0xcbf2_9ce4_8422_2325_u64 ^ mix(seed), |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    mix(hashed ^ mix(attempt.wrapping_add(0x9e37_79b9_7f4a_7c15)))
}

/// SplitMix64's finaliser.
fn mix(value: u64) -> u64 {
    let mut z = value.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Parses a `--fail-rate` value: a number from 0 to 1.
///
/// # Errors
/// Not a number, or outside [0, 1].
pub(crate) fn parse_rate(text: &str) -> Result<f64, NotARate> {
    match text.trim().parse::<f64>() {
        Ok(rate) if (0.0..=1.0).contains(&rate) => Ok(rate),
        _ => Err(NotARate(text.to_owned())),
    }
}

/// A `--fail-rate` value that is not a share from 0 to 1: the text given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a share from 0 to 1 (e.g. 0.1)")]
pub(crate) struct NotARate(String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_fails_the_same_requests_whatever_order_they_come_in() {
        let keys: Vec<String> = (0..2000).map(|i| format!("case-{i}")).collect();
        let forwards = SeededFailures::new(0.1, 7);
        let backwards = SeededFailures::new(0.1, 7);
        let ahead: Vec<bool> = keys.iter().map(|key| forwards.fails(key).is_some()).collect();
        let mut behind: Vec<bool> = keys.iter().rev().map(|key| backwards.fails(key).is_some()).collect();
        behind.reverse();
        assert_eq!(ahead, behind);
        let failed = ahead.iter().filter(|failed| **failed).count();
        assert!((140..=260).contains(&failed), "about 10 % of 2000 fail, not {failed}");
        let other = SeededFailures::new(0.1, 8);
        assert_ne!(ahead, keys.iter().map(|key| other.fails(key).is_some()).collect::<Vec<_>>(), "another seed");
    }

    #[test]
    fn a_repeated_request_gets_a_draw_of_its_own() {
        let always = SeededFailures::new(1.0, 1);
        assert!(always.fails("k").is_some() && always.fails("k").is_some());
        let never = SeededFailures::new(0.0, 1);
        assert!(never.fails("k").is_none());
        // Of many keys failing at their first attempt, about a tenth fail the second time too.
        let faults = SeededFailures::new(0.1, 3);
        let first: Vec<String> = (0..5000).map(|i| format!("k{i}")).filter(|key| faults.fails(key).is_some()).collect();
        let again = first.iter().filter(|key| faults.fails(key).is_some()).count();
        assert!(again * 4 < first.len(), "{again} of {} failed twice", first.len());
    }

    #[test]
    fn a_rate_is_a_share_from_0_to_1() {
        assert_eq!(parse_rate("0.1"), Ok(0.1));
        assert!(parse_rate("10%").is_err() && parse_rate("1.5").is_err() && parse_rate("-0.1").is_err());
    }
}
