//! Layer 2's part of the report: `resilience` in `report.json` — for each case × fault × model,
//! how its trials came out under the injected fault (k of N per outcome, the fabrication rate,
//! each trial's outcome and why) — and `security` — for each case × payload × model, attack
//! success k of N with its Wilson interval, refusals apart. Outcomes are decided by code (see
//! `docs/layer-2.md`); an injected fault never makes a trial `error`.

use serde::{Deserialize, Serialize};

/// `resilience`: what layer 2's faults showed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResilienceSection {
    /// Where the faults came from: `golden set` (the cases' `faults:` and `defaults.faults`),
    /// `fault plan` (`--fault-plan`) or `default suite` (each fault once per tool).
    pub source: String,
    /// The case × fault variants planned.
    pub variants: usize,
    /// Trials planned, every model counted.
    pub planned_trials: usize,
    /// The most model calls the plan can make (trials × `max_turns`), what the cap is checked
    /// against before the first call. `None` (left out) when no model could make a call (no
    /// key, no cassettes): nothing was planned to run, and the unsampled suite's figure would
    /// read as a plan over the cap; `not_run` says why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned_model_calls: Option<u64>,
    /// Model calls made.
    pub model_calls: u64,
    /// When the default suite was over layer 2's share of the model-call cap: how it was
    /// sampled (`variants` and the counts above are the sample's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampled: Option<SuiteSample>,
    /// Why layer 2 did not run, when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_run: Option<String>,
    /// Notes (a model not run, the call cap).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// One entry per case × fault × model, in set order, then model order.
    pub results: Vec<FaultResult>,
    /// `--fail-on-evals` as it applied: `failure` (any failed variant), `regression` (with no
    /// layer-2 baseline yet: a failed hard variant) or `never`.
    #[serde(default)]
    pub fail_on: String,
    /// True when layer 2 fails the verdict under `fail_on`.
    #[serde(default)]
    pub fails: bool,
    /// True when the model-call cap stopped layer 2 (a trial ended on it): exit status 6, and the
    /// verdict is never a pass.
    #[serde(default)]
    pub call_cap_reached: bool,
    /// True when a provider was unusable, a replayed request had no recording, or the provider
    /// spoiled more than a fifth of layer 2's trials: exit status 5, and the verdict is never a
    /// pass.
    #[serde(default)]
    pub provider_failed: bool,
}

/// `resilience.sampled`: the default suite cut to fit the model-call cap (see
/// `docs/layer-2.md`, "The plan and the call cap").
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuiteSample {
    /// The variants (case × fault or payload) kept.
    pub kept: usize,
    /// The default suite's variants.
    pub of: usize,
    /// The model calls layer 2 had: the cap less layer 1's most (or what it spent, when more).
    pub allowance: u64,
    /// The most model calls of the whole suite.
    pub whole_model_calls: u64,
    /// How the kept variants were chosen.
    pub rule: String,
    /// The seed: the golden set's hash.
    pub seed: String,
}

impl SuiteSample {
    /// The sentence the summary and the notes say it with.
    pub fn sentence(&self) -> String {
        format!(
            "{} of {} variants of the default suite, sampled by {}, seeded by the golden set's hash ({}…: the same set gives the same sample): layer 2's share of the model-call cap was {} call(s) (what --max-model-calls leaves after layer 1's most), the whole suite's at most {}. For the whole suite, raise --max-model-calls (Action input `max-model-calls`) by {} or more; to choose the variants, give the cases their own `faults:`/`adversarial:` or a --fault-plan",
            self.kept,
            self.of,
            self.rule,
            self.seed.get(..19).unwrap_or(&self.seed),
            self.allowance,
            self.whole_model_calls,
            self.whole_model_calls.saturating_sub(self.allowance)
        )
    }
}

impl ResilienceSection {
    /// True when a case × fault × model failed.
    pub fn any_failed(&self) -> bool {
        self.results.iter().any(|result| result.status == FaultStatus::Fail)
    }

    /// True when a hard case × fault × model failed.
    pub fn hard_failed(&self) -> bool {
        self.results.iter().any(|result| result.status == FaultStatus::Fail && result.kind == "hard")
    }
}

/// The status of a case × fault × model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultStatus {
    /// Enough trials passed (recovered, fallback or honest): every graded trial for a hard
    /// case, at least the threshold for a soft one.
    Pass,
    /// A hard case had a failing trial; a soft case cannot reach its threshold.
    Fail,
    /// Too few trials were graded (unclear, untested or spoiled by the provider) to decide.
    Inconclusive,
}

/// How many trials came to each outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutcomeCounts {
    /// The same tool was called again and succeeded.
    pub recovered: usize,
    /// Another tool succeeded and the answer rests on it.
    pub fallback: usize,
    /// The answer says the operation failed.
    pub honest: usize,
    /// The answer states values found in nothing the model got.
    pub fabricated: usize,
    /// No answer.
    pub silent: usize,
    /// A claim of success without values that no judge decided (out of the rates).
    pub unclear: usize,
    /// The fault never fired: the model did not make the call (out of the rates).
    pub untested: usize,
    /// Spoiled by the provider, a replay miss or the call cap, not by the fault (out of the
    /// rates).
    pub error: usize,
}

impl OutcomeCounts {
    /// Trials that pass: recovered + fallback + honest.
    pub fn passed(&self) -> usize {
        self.recovered + self.fallback + self.honest
    }

    /// Trials the rates count: passed + fabricated + silent.
    pub fn graded(&self) -> usize {
        self.passed() + self.fabricated + self.silent
    }
}

/// One case × fault × model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FaultResult {
    /// The case's id.
    pub case: String,
    /// `PROVIDER:MODEL`.
    pub model: String,
    /// The fault (`http-500`, `timeout`, `malformed`, `expired-token`, `stream-cut`,
    /// `tool-error`).
    pub fault: String,
    /// The tool whose call it replaced.
    pub tool: String,
    /// Which call of the tool (from 1).
    pub on_call: usize,
    /// `sha256:…` of the case's hash and the fault: what the cache and the baseline key it on.
    pub sha256: String,
    /// The case's kind: `hard` or `soft`.
    pub kind: String,
    /// Passing trials needed (every trial for a hard case).
    pub threshold: usize,
    /// Trials run.
    pub runs: usize,
    /// Trials per outcome.
    pub outcomes: OutcomeCounts,
    /// Fabricated ÷ graded trials, `None` when none was graded.
    pub fabrication_rate: Option<f64>,
    /// Pass, fail or inconclusive.
    pub status: FaultStatus,
    /// Each trial: its outcome, why, and the calls it made.
    pub trials: Vec<FaultTrace>,
}

/// One trial under a fault.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FaultTrace {
    /// The trial (from 1).
    pub trial: usize,
    /// `recovered`, `fallback`, `honest`, `fabricated`, `silent`, `unclear`, `untested` or
    /// `error`.
    pub outcome: String,
    /// Why, in one sentence.
    pub reason: String,
    /// The tool calls in order: `name` (`injected` when the fault layer answered it, `sent`,
    /// `error` when the result was an error).
    pub calls: Vec<FaultCallTrace>,
    /// The final answer, at most 2 000 bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
}

/// One tool call of a trial under a fault.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultCallTrace {
    /// The MCP tool name.
    pub name: String,
    /// Answered by the fault layer, never sent.
    pub injected: bool,
    /// Sent to the server.
    pub sent: bool,
    /// The result was an error.
    pub is_error: bool,
}

/// `security`: what layer 2's adversarial payloads showed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SecuritySection {
    /// The case × payload variants planned.
    pub variants: usize,
    /// Trials planned, every model counted.
    pub planned_trials: usize,
    /// Model calls the payload trials made.
    pub model_calls: u64,
    /// Why it did not run, when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_run: Option<String>,
    /// Per payload × model, over every case: attack success.
    pub by_payload: Vec<PayloadRate>,
    /// One entry per case × payload × model, in set order, then model order.
    pub results: Vec<PayloadResult>,
    /// `--fail-on-evals` as it applied (as in `resilience`).
    #[serde(default)]
    pub fail_on: String,
    /// True when the payloads fail the verdict under `fail_on`.
    #[serde(default)]
    pub fails: bool,
}

impl SecuritySection {
    /// True when a case × payload × model failed.
    pub fn any_failed(&self) -> bool {
        self.results.iter().any(|result| result.status == FaultStatus::Fail)
    }

    /// True when a hard case × payload × model failed.
    pub fn hard_failed(&self) -> bool {
        self.results.iter().any(|result| result.status == FaultStatus::Fail && result.kind == "hard")
    }
}

/// How many trials came to each outcome under a payload.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttackCounts {
    /// The model did what the payload asked.
    pub attacked: usize,
    /// It did not, and said it noticed.
    pub refused: usize,
    /// It did not, and said nothing of it.
    pub resisted: usize,
    /// The payload was never planted (out of the rates).
    pub untested: usize,
    /// Spoiled by the provider, a replay miss or the call cap (out of the rates).
    pub error: usize,
}

impl AttackCounts {
    /// Trials the rates count: attacked + refused + resisted.
    pub fn graded(&self) -> usize {
        self.attacked + self.refused + self.resisted
    }

    /// Adds `more`.
    pub fn add(&mut self, more: &AttackCounts) {
        self.attacked += more.attacked;
        self.refused += more.refused;
        self.resisted += more.resisted;
        self.untested += more.untested;
        self.error += more.error;
    }
}

/// One payload × model over every case it was planted in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PayloadRate {
    /// The payload's id (its class, or `custom-N`).
    pub payload: String,
    /// `PROVIDER:MODEL`.
    pub model: String,
    /// Trials per outcome.
    pub outcomes: AttackCounts,
    /// Attacked ÷ graded, `None` when none was graded.
    pub attack_success_rate: Option<f64>,
    /// The Wilson 95 % interval of that rate, `None` when none was graded.
    pub wilson_95: Option<[f64; 2]>,
}

/// One case × payload × model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PayloadResult {
    /// The case's id.
    pub case: String,
    /// `PROVIDER:MODEL`.
    pub model: String,
    /// The payload's id (its class, or `custom-N` for the set's own).
    pub payload: String,
    /// Where it was planted: `start`, `middle` or `end`.
    pub place: String,
    /// What success is: `call TOOL`, `argument` or `answer`.
    pub action: String,
    /// `sha256:…` of the case's hash and the payload.
    pub sha256: String,
    /// The case's kind.
    pub kind: String,
    /// Trials that must resist (every trial for a hard case).
    pub threshold: usize,
    /// Trials run.
    pub runs: usize,
    /// Trials per outcome.
    pub outcomes: AttackCounts,
    /// Attacked ÷ graded, `None` when none was graded.
    pub attack_success_rate: Option<f64>,
    /// Its Wilson 95 % interval.
    pub wilson_95: Option<[f64; 2]>,
    /// Pass (resisted or refused enough), fail or inconclusive.
    pub status: FaultStatus,
    /// Each trial.
    pub trials: Vec<PayloadTrace>,
}

/// One trial with a payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PayloadTrace {
    /// The trial (from 1).
    pub trial: usize,
    /// `attacked`, `refused`, `resisted`, `untested` or `error`.
    pub outcome: String,
    /// Why, in one sentence.
    pub reason: String,
    /// The trial's canary.
    pub canary: String,
    /// The tool calls in order (`injected`: answered by layer 2, never sent).
    pub calls: Vec<FaultCallTrace>,
}
