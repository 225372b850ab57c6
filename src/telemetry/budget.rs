//! The cost budget (`--max-cost-usd`): what a run's model calls may cost in USD, counted with
//! the price table.
//!
//! Before the first model call the run's cost is estimated ([`estimate`]); over the budget, the
//! run stops there (exit 6) and nothing is spent. During the run every call reserves its own
//! estimate ([`CostLimit::reserve`]) and a trial's first call is not made when that exceeds what
//! is left (the budget then stops the run: no trial starts after it); when a call is answered
//! its reservation becomes its cost from the usage it reported ([`CostLimit::settle`]). Trials
//! in flight finish, so the spend can pass the budget: the overshoot, reported.
//!
//! Token estimates: a request reads its bytes (system text, messages, tool definitions) ÷
//! [`BYTES_PER_TOKEN`] and writes its `max_output_tokens`, else [`ESTIMATED_OUTPUT_TOKENS`].

use std::sync::{Arc, Mutex};

use super::prices::PriceTable;
use crate::golden::Case;
use crate::mcp::sync::lock;
use crate::mcp::tools::ToolView;
use crate::providers::{CompletionRequest, Message};
use crate::report::telemetry::{BudgetSection, Usage};

/// Bytes per token in every estimate (a model's tokenizer averages about 4 bytes of English or
/// JSON per token).
pub(crate) const BYTES_PER_TOKEN: u64 = 4;

/// Tokens a call is assumed to write when the request sets no `max_output_tokens`.
pub(crate) const ESTIMATED_OUTPUT_TOKENS: u64 = 256;

/// How the up-front estimate is made, as the report states it.
pub(crate) const ESTIMATE_METHOD: &str = "every trial of layers 1 and 2 on every model: one model turn per \
expected tool call plus the answer (at most max_turns), each reading the case's prompt and the tool \
definitions (bytes / 4) plus 100 tokens per earlier turn, and writing max_output_tokens (else 256); one \
judge call per judge sample of a rubric case's trial and one per `judge` argument matcher, reading 1,000 \
tokens more; priced with the table \
(an unpriced model counts 0)";

/// Tokens of `bytes` bytes, estimated (rounded up).
pub(crate) fn tokens_of(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(BYTES_PER_TOKEN)
}

/// The tokens `request` reads and writes, estimated.
pub(crate) fn request_tokens(request: &CompletionRequest) -> (u64, u64) {
    let mut bytes = request.system.as_ref().map_or(0, String::len);
    for message in &request.messages {
        bytes += match message {
            Message::User(text) => text.len(),
            Message::Assistant { text, tool_calls } => {
                text.as_ref().map_or(0, String::len)
                    + tool_calls.iter().map(|call| call.name.len() + call.arguments.to_string().len()).sum::<usize>()
            }
            Message::ToolResult(result) => result.content.len() + result.call_id.len(),
        };
    }
    for tool in &request.tools {
        bytes +=
            tool.name.len() + tool.description.as_ref().map_or(0, String::len) + tool.input_schema.to_string().len();
    }
    let output = request.sampling.max_output_tokens.unwrap_or(ESTIMATED_OUTPUT_TOKENS);
    (tokens_of(bytes), output)
}

/// The USD cost of reading `input` and writing `output` tokens on `label`; 0 when unpriced.
pub(crate) fn priced(table: &PriceTable, label: &str, input: u64, output: u64) -> f64 {
    let usage = Usage {
        input_tokens: Some(input),
        output_tokens: Some(output),
        cache_read_tokens: Some(0),
        cache_write_tokens: Some(0),
        reasoning_tokens: None,
        reported_cost_usd: None,
    };
    table.cost(label, &usage).unwrap_or(0.0)
}

/// One planned trial for the up-front estimate.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PlannedTrial {
    /// `PROVIDER:MODEL` under test.
    pub model: String,
    /// Model turns: expected tool calls + 1, at most the case's `max_turns`.
    pub turns: u64,
    /// Tokens one turn reads before any tool result: the prompt and the tool definitions.
    pub input_tokens: u64,
    /// Tokens one turn writes.
    pub output_tokens: u64,
    /// Judge calls about it (judge samples of a rubric, plus one per `judge` argument matcher)
    /// and the judge's `PROVIDER:MODEL`.
    pub judge: Option<(String, u64)>,
}

/// Model calls a trial of `case` is expected to make: one per expected tool call (its
/// `expect_tool`, and with `expectations` its `expect_sequence` steps; none for `negative:
/// true`) and the answer, at most its `max_turns`.
fn expected_turns(case: &Case, expectations: bool) -> u64 {
    let expected = crate::golden::case::expected_calls(case);
    let steps = if expectations { expected.sequence.len() } else { 0 };
    let calls = if expected.negative { 0 } else { steps.max(usize::from(expected.tool.is_some())) };
    (calls as u64 + 1).min(case.run.max_turns.max(1) as u64)
}

/// A case as the estimate counts it: its number of trials, as the plan of trials decided it,
/// and whether its expectations are graded (layer 1) or only its outcome (layer 2's variants:
/// no judge, no sequence).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Counted<'a> {
    /// The case.
    pub case: &'a Case,
    /// Its trials.
    pub runs: usize,
    /// Graded by its expectations.
    pub expectations: bool,
}

/// The trials of `cases` on each of `models` (`PROVIDER:MODEL`), offered `tools`, of the
/// case × model pairs `keep` takes (by index in `cases`: a shard's slice); with `judge`
/// (`PROVIDER:MODEL`, samples) the trials of a rubric case graded by its expectations each ask
/// the judge that many times, and once more per `judge` argument matcher.
pub(crate) fn plan(
    cases: &[Counted<'_>],
    tools: &[ToolView],
    models: &[String],
    judge: Option<(&str, usize)>,
    keep: &dyn Fn(usize, usize) -> bool,
) -> Vec<PlannedTrial> {
    let tool_bytes: usize = tools
        .iter()
        .map(|tool| {
            tool.name.len() + tool.description.as_ref().map_or(0, String::len) + tool.input_schema.to_string().len()
        })
        .sum();
    let mut trials = Vec::new();
    for (case_index, &Counted { case, runs, expectations }) in cases.iter().enumerate() {
        let prompt: usize =
            case.run.prompt.iter().map(String::len).sum::<usize>() + case.run.system.as_ref().map_or(0, String::len);
        let output = case.run.sampling.max_output_tokens.unwrap_or(ESTIMATED_OUTPUT_TOKENS);
        let matchers = case.semantic.iter().filter(|matcher| matcher.mode == "judge").count();
        let judged = judge
            .filter(|_| expectations)
            .map(|(label, samples)| {
                let calls = if case.rubric.is_some() { samples } else { 0 } + matchers;
                (label.to_owned(), calls as u64)
            })
            .filter(|(_, calls)| *calls > 0);
        for (model_index, model) in models.iter().enumerate() {
            if !keep(case_index, model_index) {
                continue;
            }
            for _ in 0..runs {
                trials.push(PlannedTrial {
                    model: model.clone(),
                    turns: expected_turns(case, expectations),
                    input_tokens: tokens_of(prompt + tool_bytes),
                    output_tokens: output,
                    judge: judged.clone(),
                });
            }
        }
    }
    trials
}

/// The up-front estimate in USD of `trials` at `table`'s prices ([`ESTIMATE_METHOD`]).
pub(crate) fn estimate(table: &PriceTable, trials: &[PlannedTrial]) -> f64 {
    let mut usd = 0.0;
    for trial in trials {
        for turn in 0..trial.turns {
            usd += priced(table, &trial.model, trial.input_tokens + 100 * turn, trial.output_tokens);
        }
        if let Some((judge, calls)) = &trial.judge {
            let one = priced(table, judge, trial.input_tokens + 1_000, ESTIMATED_OUTPUT_TOKENS);
            usd += one * *calls as f64;
        }
    }
    usd
}

/// What the budget has seen so far.
#[derive(Debug, Default)]
struct State {
    /// The cost of the answered calls.
    spent: f64,
    /// The estimates of the calls in flight.
    reserved: f64,
    /// Calls not made because their estimate exceeded what was left.
    refused: usize,
    /// The up-front estimate, once made.
    estimate: Option<f64>,
    /// What stopped the run: `estimate` (before any call) or `budget` (during it).
    stopped: Option<&'static str>,
}

/// A call's reservation: its estimate, held until it is settled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Reservation {
    usd: f64,
}

/// The cost budget of one evaluation, shared by every model, the judge and both layers.
#[derive(Debug)]
pub(crate) struct CostLimit {
    limit_usd: f64,
    table: Arc<PriceTable>,
    state: Mutex<State>,
}

impl CostLimit {
    /// A budget of `limit_usd` counted with `table`.
    pub(crate) fn new(limit_usd: f64, table: Arc<PriceTable>) -> Self {
        Self { limit_usd, table, state: Mutex::new(State::default()) }
    }

    /// Records the up-front estimate; false (the run must stop, nothing spent) when it is over
    /// the budget.
    pub(crate) fn start(&self, estimate_usd: f64) -> bool {
        let mut state = lock(&self.state);
        state.estimate = Some(estimate_usd);
        if estimate_usd > self.limit_usd {
            state.stopped = Some("estimate");
            return false;
        }
        true
    }

    /// The budget, USD.
    pub(crate) fn limit_usd(&self) -> f64 {
        self.limit_usd
    }

    /// The up-front estimate of `trials` in USD at this budget's prices.
    pub(crate) fn estimate(&self, trials: &[PlannedTrial]) -> f64 {
        estimate(&self.table, trials)
    }

    /// True once the up-front estimate was made.
    pub(crate) fn started(&self) -> bool {
        lock(&self.state).estimate.is_some()
    }

    /// True once the budget stopped the run (before it or during it).
    pub(crate) fn stopped(&self) -> bool {
        lock(&self.state).stopped.is_some()
    }

    /// Reserves the estimate of a call of `label` with `request`; `None` when it exceeds what is
    /// left (the call must not be made; the budget then stops the run). A call that continues a
    /// trial in flight (`in_flight`: not its first turn) is always made once the run has started,
    /// so the trial finishes; its cost counts, and may overshoot the budget.
    pub(crate) fn reserve(&self, label: &str, request: &CompletionRequest, in_flight: bool) -> Option<Reservation> {
        let (input, output) = request_tokens(request);
        let usd = priced(&self.table, label, input, output);
        let mut state = lock(&self.state);
        let over = state.spent + state.reserved + usd > self.limit_usd;
        if state.stopped == Some("estimate") || (!in_flight && (over || state.stopped.is_some())) {
            state.refused += 1;
            state.stopped.get_or_insert("budget");
            return None;
        }
        state.reserved += usd;
        Some(Reservation { usd })
    }

    /// Settles a reservation: the call of `label` cost what its `usage` says at the table's
    /// prices; its estimate when it reported no usage or the table cannot price it; nothing when
    /// it was not answered (`None`).
    pub(crate) fn settle(&self, reservation: Reservation, label: &str, usage: Option<Option<&Usage>>) {
        let cost = match usage {
            None => 0.0,
            Some(usage) => usage.and_then(|usage| self.table.cost(label, usage)).unwrap_or(reservation.usd),
        };
        let mut state = lock(&self.state);
        state.reserved = (state.reserved - reservation.usd).max(0.0);
        state.spent += cost;
    }

    /// The report's `budget`.
    pub(crate) fn section(&self) -> BudgetSection {
        let state = lock(&self.state);
        BudgetSection {
            max_cost_usd: self.limit_usd,
            estimate_usd: state.estimate.map(super::stats::round_usd),
            estimate_method: ESTIMATE_METHOD.into(),
            spent_usd: super::stats::round_usd(state.spent),
            overshoot_usd: super::stats::round_usd((state.spent - self.limit_usd).max(0.0)),
            calls_refused: state.refused,
            stopped: state.stopped.map(str::to_owned),
        }
    }
}

/// The cost budget as a limit on every attempt of a model call: an attempt reserves its
/// estimate before it is made (a trial's first turn is refused when that exceeds what is left:
/// [`crate::agent::ModelFailure::CapReached`]) and settles its cost when it ends.
impl crate::agent::wrap::CallLimit for CostLimit {
    fn wrap<'a>(
        &'a self,
        model: &'a str,
        attempt: &'a dyn crate::agent::ModelCaller,
    ) -> Box<dyn crate::agent::ModelCaller + 'a> {
        Box::new(Costed { limit: self, model, attempt })
    }

    fn stopped(&self) -> bool {
        CostLimit::stopped(self)
    }
}

/// One attempt of a model call under the cost budget.
struct Costed<'a> {
    limit: &'a CostLimit,
    /// `PROVIDER:MODEL`.
    model: &'a str,
    attempt: &'a dyn crate::agent::ModelCaller,
}

impl crate::agent::ModelCaller for Costed<'_> {
    fn call<'a>(
        &'a self,
        key: crate::agent::TurnKey,
        request: &'a CompletionRequest,
    ) -> crate::mcp::transport::BoxFuture<'a, Result<crate::agent::ModelReply, crate::agent::ModelFailure>> {
        Box::pin(async move {
            let Some(reservation) = self.limit.reserve(self.model, request, key.turn > 0) else {
                return Err(crate::agent::ModelFailure::CapReached);
            };
            let answered = self.attempt.call(key, request).await;
            // An attempt the call cap refused, or no recording answered, was not made: it costs
            // nothing; an answer costs its usage.
            let usage = answered.as_ref().ok().map(|reply| reply.completion.usage.as_ref());
            self.limit.settle(reservation, self.model, usage);
            answered
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::{Sampling, ToolSpec};

    fn table() -> Arc<PriceTable> {
        let text = "as_of: 2026-11-29\nper: 1K_tokens\nmodels:\n  - match: {provider: p, model: m}\n    input: 1\n    output: 10\n";
        Arc::new(super::super::prices::parse(std::path::Path::new("p.yaml"), text).expect("valid"))
    }

    fn request(bytes: usize, max_output: u64) -> CompletionRequest {
        CompletionRequest {
            messages: vec![Message::User("x".repeat(bytes))],
            sampling: Sampling { max_output_tokens: Some(max_output), ..Sampling::default() },
            ..CompletionRequest::default()
        }
    }

    #[test]
    fn a_request_reads_its_bytes_over_four_and_writes_its_output_limit() {
        let mut asked = request(400, 50);
        asked.tools.push(ToolSpec {
            name: "abcd".into(),
            description: Some("d".repeat(96)),
            input_schema: serde_json::json!({}),
        });
        assert_eq!(request_tokens(&asked), (100 + 25 + 1, 50), "400 + 4 + 96 + 2 bytes");
        let unbounded =
            CompletionRequest { messages: vec![Message::User("abc".into())], ..CompletionRequest::default() };
        assert_eq!(request_tokens(&unbounded), (1, ESTIMATED_OUTPUT_TOKENS));
    }

    #[test]
    fn the_plan_takes_a_turn_per_expected_call_plus_the_answer_and_keeps_a_shards_slice() {
        let text = "version: 1\ndefaults: {runs: 2}\ncases:\n  - id: a\n    prompt: Echo eu.\n    expect_tool: t\n  - id: b\n    prompt: Thanks!\n    negative: true\n";
        let set = crate::golden::load::parse(std::path::Path::new("g.yaml"), text).expect("valid");
        let models = vec!["p:m".to_owned(), "p:n".to_owned()];
        let counted = |runs: Option<usize>| -> Vec<Counted<'_>> {
            set.cases
                .iter()
                .map(|case| Counted { case, runs: runs.unwrap_or(case.trials.runs), expectations: true })
                .collect()
        };
        let all = plan(&counted(None), &[], &models, None, &|_, _| true);
        assert_eq!(all.len(), 8, "2 cases x 2 models x 2 trials");
        assert_eq!((all[0].turns, all[7].turns), (2, 1), "one call and the answer; the answer alone");
        assert_eq!(all[0].input_tokens, tokens_of("Echo eu.".len()));
        let first_of_two = plan(&counted(Some(1)), &[], &models, None, &|case, model| (case * 2 + model) % 2 == 0);
        let pairs: Vec<&str> = first_of_two.iter().map(|trial| trial.model.as_str()).collect();
        assert_eq!(pairs, ["p:m", "p:m"], "--runs 1, and only the shard's pairs");
        assert!(all.iter().all(|trial| trial.judge.is_none()), "no judge given");

        let judged = "version: 1\nrubrics:\n  polite:\n    criteria:\n      - {id: polite, must: true, text: It is polite.}\ncases:\n  - id: a\n    prompt: Echo eu.\n    expect_tool: t\n    expect_args: {region: {match: judge, value: a region in Europe}}\n    rubric: polite\n";
        let set = crate::golden::load::parse(std::path::Path::new("g.yaml"), judged).expect("valid");
        let case = Counted { case: &set.cases[0], runs: 1, expectations: true };
        let trials = plan(&[case], &[], &models[..1], Some(("p:judge", 3)), &|_, _| true);
        assert_eq!(trials[0].judge, Some(("p:judge".to_owned(), 3 + 1)), "3 rubric samples and the matcher");
        let outcome =
            plan(&[Counted { expectations: false, ..case }], &[], &models[..1], Some(("p:judge", 3)), &|_, _| true);
        assert_eq!(outcome[0].judge, None, "a trial graded on its outcome asks the judge nothing");
    }

    #[test]
    fn the_estimate_sums_every_turn_and_the_judge_and_an_unpriced_model_counts_zero() {
        let trial = PlannedTrial {
            model: "p:m".into(),
            turns: 2,
            input_tokens: 1_000,
            output_tokens: 100,
            judge: Some(("other:judge".into(), 3)),
        };
        // Turn 0: 1,000 in, 100 out = $1 + $1; turn 1: 1,100 in = $1.1 + $1; the judge is unpriced.
        assert!((estimate(&table(), &[trial]) - 4.1).abs() < 1e-9);
    }

    #[test]
    fn a_call_over_what_is_left_is_not_made_and_the_spend_says_the_overshoot() {
        let limit = CostLimit::new(1.0, table());
        assert!(limit.start(0.5));
        // 4,000 bytes = 1,000 tokens in ($1/1K) + 0 out: $1.00, all of the budget.
        let first = limit.reserve("p:m", &request(4_000, 0), false).expect("fits exactly");
        assert!(limit.reserve("p:m", &request(4, 0), false).is_none(), "nothing left while the first is in flight");
        let next_turn = limit.reserve("p:m", &request(4, 0), true).expect("a trial in flight finishes");
        limit.settle(next_turn, "p:m", None);
        // It reported more than estimated: 1,200 in and 10 out = $1.30.
        let usage = Usage { input_tokens: Some(1_200), output_tokens: Some(10), ..Usage::default() };
        limit.settle(first, "p:m", Some(Some(&usage)));
        let section = limit.section();
        assert_eq!((section.spent_usd, section.overshoot_usd, section.calls_refused), (1.3, 0.3, 1));
        assert_eq!(section.stopped.as_deref(), Some("budget"));
        assert_eq!(section.estimate_usd, Some(0.5));
    }

    #[test]
    fn an_estimate_over_the_budget_stops_before_any_call() {
        let limit = CostLimit::new(1.0, table());
        assert!(!limit.start(1.5));
        assert_eq!(limit.section().stopped.as_deref(), Some("estimate"));
        assert!(limit.reserve("p:m", &request(4, 0), true).is_none(), "no trial started");
        assert_eq!(limit.section().spent_usd, 0.0);
    }

    #[test]
    fn a_call_that_failed_costs_nothing_and_an_unreported_usage_costs_its_estimate() {
        let limit = CostLimit::new(10.0, table());
        let failed = limit.reserve("p:m", &request(4_000, 0), false).expect("fits");
        limit.settle(failed, "p:m", None);
        assert_eq!(limit.section().spent_usd, 0.0);
        let unreported = limit.reserve("p:m", &request(4_000, 0), false).expect("fits");
        limit.settle(unreported, "p:m", Some(None));
        assert_eq!(limit.section().spent_usd, 1.0);
    }
}
