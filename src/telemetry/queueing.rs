//! Layer 3 on queueing at the model server: whether the model calls ran with more in flight
//! than the server serves at once, read from the calls themselves. A call's interval is its
//! end (when its event came) less its latency; the calls *ahead* of it are the others of the
//! same model still in flight when it started (ties of the same millisecond ordered by their
//! end: the server answered those first). The rule, in one sentence: when at least
//! [`MIN_CROWDED`] calls started with 2 or more ahead and at least [`MIN_FEW`] with at most 1,
//! and the p50 latency of the first is at least [`RATIO`] times that of the second and
//! [`MIN_GAP_MS`] longer, the server is queueing. A server that serves them all at once keeps
//! latency flat however many overlap, and says nothing here; so does a run without calls at
//! both levels. Only calls answered at the first attempt count (a retry's wait is not the
//! server's).
//!
//! The calls with at most 1 ahead are few by nature: at a steady concurrency of 4 against one
//! slot, every call but a run's first two starts with 3 ahead (measured: 2 of 27 calls, the
//! other 25 at 3.4× their latency), so [`MIN_FEW`] is 2 — the two every run of 2 calls or more
//! starts with — and the ratio asked for is high to make up for it.

use std::collections::BTreeMap;

/// The flag and the Action input that set how many trials are in flight (telemetry sits below
/// settings: a test there keeps these the table's `CONCURRENCY` row).
pub(crate) const CONCURRENCY_FLAG: &str = "--concurrency";
/// See [`CONCURRENCY_FLAG`].
pub(crate) const CONCURRENCY_INPUT: &str = "concurrency";

/// The fewest calls with at most 1 ahead before anything is said.
pub(crate) const MIN_FEW: usize = 2;
/// The fewest calls with 2 or more ahead before anything is said.
pub(crate) const MIN_CROWDED: usize = 5;
/// How many times slower the crowded calls' p50 must be.
pub(crate) const RATIO: f64 = 2.0;
/// How much slower, at least, in milliseconds (loopback jitter is no queue).
pub(crate) const MIN_GAP_MS: u64 = 100;

/// One answered model call: the model asked and its interval, in milliseconds of the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Call {
    /// `PROVIDER:MODEL`.
    pub model: String,
    /// When it was sent.
    pub start_ms: u64,
    /// When it was answered.
    pub end_ms: u64,
}

/// The notes of the models whose calls queued at their server, in the models' order.
pub(crate) fn notes(calls: &[Call]) -> Vec<String> {
    let mut by_model: BTreeMap<&str, Vec<(u64, u64)>> = BTreeMap::new();
    for call in calls {
        by_model.entry(&call.model).or_default().push((call.start_ms, call.end_ms));
    }
    by_model.into_iter().filter_map(|(model, intervals)| note(model, intervals)).collect()
}

/// The note of one model's calls, when they queued.
fn note(model: &str, mut intervals: Vec<(u64, u64)>) -> Option<String> {
    intervals.sort_unstable();
    let (mut few, mut crowded) = (Vec::new(), Vec::new());
    for (index, &(start, end)) in intervals.iter().enumerate() {
        let ahead = intervals[..index].iter().filter(|&&(_, other_end)| other_end > start).count();
        if ahead >= 2 { &mut crowded } else { &mut few }.push(end - start);
    }
    if few.len() < MIN_FEW || crowded.len() < MIN_CROWDED {
        return None;
    }
    let (few_p50, crowded_p50) = (p50(&few), p50(&crowded));
    let ratio = crowded_p50 as f64 / few_p50.max(1) as f64;
    if ratio < RATIO || crowded_p50 < few_p50 + MIN_GAP_MS {
        return None;
    }
    Some(format!(
        "{} of {} model calls to `{model}` started with 2+ others in flight and took {ratio:.1}× as long (p50 {crowded_p50} vs {few_p50} ms with ≤1): the model server seems to queue them, so p50 includes waiting; set `{} 1` (input `{}`) or more server slots (llama-server `--parallel`, `OLLAMA_NUM_PARALLEL`)",
        crowded.len(),
        intervals.len(),
        CONCURRENCY_FLAG,
        CONCURRENCY_INPUT,
    ))
}

/// Nearest-rank p50, as the report's.
fn p50(samples: &[u64]) -> u64 {
    super::stats::latency(samples).p50_ms.unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calls(intervals: &[(u64, u64)]) -> Vec<Call> {
        intervals.iter().map(|&(start_ms, end_ms)| Call { model: "openai:m".into(), start_ms, end_ms }).collect()
    }

    /// Four trials at once against one slot of 100 ms, two calls each, then one trial alone.
    fn one_slot() -> Vec<(u64, u64)> {
        vec![
            (0, 100),
            (0, 200),
            (0, 300),
            (0, 400),
            (100, 500),
            (200, 600),
            (300, 700),
            (400, 800),
            (900, 1000),
            (1000, 1100),
        ]
    }

    #[test]
    fn calls_served_one_at_a_time_are_named_with_the_flag_and_the_servers_settings() {
        let notes = notes(&calls(&one_slot()));
        assert_eq!(notes.len(), 1, "{notes:?}");
        let note = &notes[0];
        assert!(note.starts_with("6 of 10 model calls to `openai:m` started with 2+ others in flight"), "{note}");
        assert!(note.contains("4.0× as long (p50 400 vs 100 ms"), "{note}");
        assert!(
            note.contains("`--concurrency 1` (input `concurrency`)") && note.contains("OLLAMA_NUM_PARALLEL"),
            "{note}"
        );
        assert!(note.chars().count() <= 300, "summary.md clips a note at 300 characters: {note}");
    }

    #[test]
    fn overlapping_calls_with_flat_latency_say_nothing() {
        let parallel: Vec<(u64, u64)> =
            (0..10).flat_map(|wave| (0..4).map(move |at| (wave * 110 + at, wave * 110 + at + 100))).collect();
        assert!(notes(&calls(&parallel)).is_empty());
    }

    #[test]
    fn too_few_calls_at_a_level_say_nothing() {
        let mut queued = one_slot();
        queued.truncate(4);
        assert!(notes(&calls(&queued)).is_empty(), "two crowded calls are not enough");
        queued.extend([(100, 500), (200, 600)]);
        assert!(notes(&calls(&queued)).is_empty(), "four crowded calls are not enough");
        queued.push((300, 700));
        assert_eq!(notes(&calls(&queued)).len(), 1, "five are");
    }

    #[test]
    fn a_small_rise_on_fast_calls_is_jitter_not_a_queue() {
        let fast: Vec<(u64, u64)> = one_slot().into_iter().map(|(start, end)| (start / 10, end / 10)).collect();
        assert!(notes(&calls(&fast)).is_empty());
    }

    #[test]
    fn each_model_is_judged_on_its_own_calls() {
        let mut mixed = calls(&one_slot());
        for call in &mut mixed[..5] {
            call.model = "anthropic:other".into();
        }
        assert!(notes(&mixed).is_empty(), "neither model has enough calls at both levels alone");
    }
}
