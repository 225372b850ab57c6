//! Pure figures over samples: nearest-rank percentiles ([`latency`]) and the sums of token
//! counts and costs with their unknowns ([`Tally`]).

use crate::report::telemetry::{Latency, Spend};

/// The nearest-rank `p`-th percentile (0 < p ≤ 100) of `sorted` (ascending): the
/// ⌈p/100 · n⌉-th smallest; `None` without samples.
pub(crate) fn nearest_rank(sorted: &[u64], p: u32) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let n = sorted.len() as u64;
    // ⌈p·n/100⌉ in integers, at least 1.
    let rank = (u64::from(p) * n).div_ceil(100).max(1);
    sorted.get(usize::try_from(rank - 1).unwrap_or(usize::MAX).min(sorted.len() - 1)).copied()
}

/// Count, p50, p95 and max of `samples` (milliseconds, any order).
pub(crate) fn latency(samples: &[u64]) -> Latency {
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    Latency {
        count: sorted.len(),
        p50_ms: nearest_rank(&sorted, 50),
        p95_ms: nearest_rank(&sorted, 95),
        max_ms: sorted.last().copied(),
    }
}

/// One call's normalised counts and cost, or a share of them (`share` of 1 for a whole call).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Part {
    /// Read, not from the cache.
    pub input: Option<u64>,
    /// Read from the cache.
    pub cache_read: Option<u64>,
    /// Written to the cache.
    pub cache_write: Option<u64>,
    /// Written, reasoning included.
    pub output: Option<u64>,
    /// Reasoning reported apart.
    pub reasoning: Option<u64>,
    /// Our cost in USD.
    pub cost: Option<f64>,
    /// The provider's.
    pub reported_cost: Option<f64>,
}

/// A running sum of [`Part`]s: a field with any unknown part is unknown.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Tally {
    calls: usize,
    input: Option<f64>,
    cache_read: Option<f64>,
    cache_write: Option<f64>,
    output: Option<f64>,
    reasoning: Option<f64>,
    unknown_calls: usize,
    cost: Option<f64>,
    unpriced: usize,
    reported: Option<f64>,
    reported_missing: bool,
    /// Calls that got no answer: in no sum, but a sum with no answered call is then unknown.
    failed: usize,
}

impl Tally {
    /// Adds `share` (0 < share ≤ 1) of `part`.
    pub(crate) fn add(&mut self, part: &Part, share: f64) {
        fn sum(total: &mut Option<f64>, first: bool, value: Option<u64>, share: f64) {
            *total = match (first, *total, value) {
                (true, _, Some(value)) => Some(value as f64 * share),
                (false, Some(total), Some(value)) => Some(total + value as f64 * share),
                _ => None,
            };
        }
        let first = self.calls == 0;
        sum(&mut self.input, first, part.input, share);
        sum(&mut self.cache_read, first, part.cache_read, share);
        sum(&mut self.cache_write, first, part.cache_write, share);
        sum(&mut self.output, first, part.output, share);
        sum(&mut self.reasoning, first, part.reasoning, share);
        if part.input.is_none() || part.output.is_none() {
            self.unknown_calls += 1;
        }
        self.cost = match (first, self.cost, part.cost) {
            (true, _, Some(cost)) => Some(cost * share),
            (false, Some(total), Some(cost)) => Some(total + cost * share),
            _ => None,
        };
        if part.cost.is_none() {
            self.unpriced += 1;
        }
        match part.reported_cost {
            Some(cost) if !self.reported_missing => self.reported = Some(self.reported.unwrap_or(0.0) + cost * share),
            _ => {
                self.reported_missing = true;
                self.reported = None;
            }
        }
        self.calls += 1;
    }

    /// Counts a call that got no answer (a provider error, a timeout): its tokens and cost are
    /// unknown, never 0.
    pub(crate) fn fail(&mut self) {
        self.failed += 1;
    }

    /// The sum as the report shows it (no call: every count 0, cost 0; only failed calls: every
    /// count and the cost unknown).
    pub(crate) fn spend(&self) -> Spend {
        let zero = |value: Option<f64>| match (self.calls, self.failed) {
            (0, 0) => Some(0.0),
            (0, _) => None,
            _ => value,
        };
        Spend {
            model_calls: self.calls,
            input_tokens: zero(self.input),
            cache_read_tokens: zero(self.cache_read),
            cache_write_tokens: zero(self.cache_write),
            output_tokens: zero(self.output),
            reasoning_tokens: zero(self.reasoning),
            unknown_calls: self.unknown_calls,
            cost_usd: zero(self.cost).map(round_usd),
            unpriced_calls: self.unpriced,
            reported_cost_usd: if self.calls == 0 { None } else { self.reported.map(round_usd) },
            failed_calls: self.failed,
        }
    }
}

/// USD kept to 10⁻⁹ (a nano-dollar): sums of shares stay readable.
pub(crate) fn round_usd(usd: f64) -> f64 {
    (usd * 1e9).round() / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles_pick_a_sample_never_an_interpolation() {
        let sorted: Vec<u64> = (1..=20).map(|n| n * 10).collect();
        assert_eq!(nearest_rank(&sorted, 50), Some(100), "⌈0.5·20⌉ = 10th");
        assert_eq!(nearest_rank(&sorted, 95), Some(190), "⌈0.95·20⌉ = 19th");
        assert_eq!(nearest_rank(&[7], 95), Some(7));
        assert_eq!(nearest_rank(&[1, 2, 3], 50), Some(2), "⌈1.5⌉ = 2nd");
        assert_eq!(nearest_rank(&[], 50), None);
        let figures = latency(&[30, 10, 20, 1000]);
        assert_eq!(figures, Latency { count: 4, p50_ms: Some(20), p95_ms: Some(1000), max_ms: Some(1000) });
    }

    fn part(input: Option<u64>, output: Option<u64>, cost: Option<f64>) -> Part {
        Part { input, cache_read: Some(0), cache_write: Some(0), output, reasoning: None, cost, reported_cost: None }
    }

    #[test]
    fn a_sum_with_an_unknown_part_is_unknown_and_counts_the_calls_that_lacked_it() {
        let mut tally = Tally::default();
        tally.add(&part(Some(100), Some(10), Some(0.002)), 1.0);
        tally.add(&part(Some(50), None, None), 1.0);
        let spend = tally.spend();
        assert_eq!((spend.input_tokens, spend.output_tokens), (Some(150.0), None));
        assert_eq!((spend.unknown_calls, spend.unpriced_calls, spend.cost_usd), (1, 1, None));
        assert_eq!(spend.reasoning_tokens, None, "never reported apart");
    }

    #[test]
    fn shares_split_a_turn_and_no_calls_is_zero_not_unknown() {
        let mut tally = Tally::default();
        tally.add(&part(Some(90), Some(30), Some(0.003)), 1.0 / 3.0);
        let spend = tally.spend();
        assert_eq!((spend.input_tokens, spend.output_tokens, spend.cost_usd), (Some(30.0), Some(10.0), Some(0.001)));
        assert_eq!(Tally::default().spend().cost_usd, Some(0.0));
        assert_eq!(Tally::default().spend().model_calls, 0);
    }
}
