//! Layer 1 in the run report: the golden set that ran, the models, one [`EvalResult`] per
//! case × model with its bounded trial traces, and the suite metrics per model
//! ([`EvalMetrics`]). Plain data like the rest of [`crate::report::model`]: built by the layer-1
//! runner, rendered by `report.json`, `junit.xml` and `summary.md`, read back by the baseline.
//!
//! Tool results and model text appear only in [`TrialTrace`] (bounded by `--trace-results`);
//! `summary.md`, the job summary and the pull-request comment never show them, only the
//! one-line `reason` of a failing trial.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Everything layer 1 adds to a report: its members sit at the top level of `report.json`.
/// Absent (`None` on [`crate::report::model::RunReport`]) when layer 1 was not asked for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EvalsSection {
    /// The golden set that ran.
    pub golden_set: Option<GoldenSetInfo>,
    /// The models asked for, as `PROVIDER:MODEL`, in the order given.
    pub models: Vec<String>,
    /// What became of each model: ran, or why not (no API key, unusable provider).
    pub model_status: Vec<ModelStatus>,
    /// One entry per case × model, cases in file order, then models in the order given.
    pub evals: Vec<EvalResult>,
    /// Suite metrics per model that ran.
    pub eval_metrics: Vec<EvalMetrics>,
    /// Why layer 1 did not run at all, when it did not (no golden set, no model, no model could
    /// run, or [`INVALID_INPUT_PREFIX`] and the input it refused).
    pub layer1_not_run: Option<String>,
    /// The Action without a model key: `golden check --execute` ran in place of layer 1 (each
    /// expected call made for real, no model). Shown, never gating.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_calls: Option<ExpectedCalls>,
    /// Layer 1 refused its input (a golden set naming a tool the server does not list, more
    /// tools than a provider takes): no verdict (`error`), exit status 2. Absent when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub input_refused: bool,
    /// Layer 1 could not list the server's tools (its `tools/list` failed or could not be
    /// read): the server could not be evaluated, so no verdict (`error`), exit status 3.
    /// Absent when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tools_unlisted: bool,
    /// Things the reader should know: dropped sampling parameters, renamed tools, the call cap.
    pub layer1_notes: Vec<String>,
    /// The model-call cap stopped the run: the cases that did not run are `skipped`.
    pub call_cap_reached: bool,
    /// Model calls made (every attempt counted, retries included; replayed calls included).
    pub model_calls: u64,
    /// Of [`EvalsSection::model_calls`], those the cassettes answered (`--cassettes` without
    /// `--record`, or the demo): no model was called for them. The rest were live calls. Absent
    /// (0) when none was replayed, and in reports written before it was kept.
    #[serde(default, skip_serializing_if = "no_calls")]
    pub replayed_model_calls: u64,
    /// The regression gate against the baseline, when layer 1 ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eval_gate: Option<Layer1GateSection>,
    /// The slice of the case × model list this run took (`--shard i/n`); absent when the run
    /// took the whole list (a run without `--shard`, or a merged report).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
    /// The tools the server listed, canonical (`name`, `title`, `description`, `inputSchema`,
    /// `outputSchema`, `annotations`; sorted by name) when layer 1 ran: a run that takes this
    /// report as its `--baseline`, and the merge job of shards (which lists no tools itself),
    /// diff their surface against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_surface: Option<Value>,
    /// The rubric judge's pass rates and whether they are calibrated (`--judge-calibration`):
    /// present when a judge graded rubrics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_calibration: Option<JudgeCalibration>,
}

/// The rubric judge's pass rates, raw and — with a calibration file measured on this judge —
/// Rogan–Gladen corrected: `(observed + TNR − 1) / (TPR + TNR − 1)`, clipped to [0, 1].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeCalibration {
    /// The judge, `PROVIDER:MODEL` as the run named it.
    pub judge_model: String,
    /// A calibration file of this judge (model and prompt version) was applied.
    pub calibrated: bool,
    /// Why the rates are uncalibrated (no file; a file of another judge or prompt version);
    /// `null` when calibrated.
    pub reason: Option<String>,
    /// The calibration file as given, when one was.
    pub file: Option<String>,
    /// The judge's true-positive rate (judge pass | human pass), 0..1, when calibrated.
    pub tpr: Option<f64>,
    /// The judge's true-negative rate (judge fail | human fail), 0..1, when calibrated.
    pub tnr: Option<f64>,
    /// Labels a human passed that TPR was measured on, when calibrated.
    pub positives: Option<usize>,
    /// Labels a human failed that TNR was measured on, when calibrated.
    pub negatives: Option<usize>,
    /// When the calibration was measured (`YYYY-MM-DD`), when calibrated.
    pub measured_at: Option<String>,
    /// One entry per model with judged trials.
    pub rates: Vec<JudgeRate>,
}

/// One model's judge pass rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeRate {
    /// `PROVIDER:MODEL` under test.
    pub model: String,
    /// Trials the judge graded (its rubric verdict pass or fail; judge errors left out).
    pub judged_runs: usize,
    /// Of those, trials whose rubric the judge passed.
    pub passed_runs: usize,
    /// `passed_runs / judged_runs`, 0..1.
    pub observed: f64,
    /// The Rogan–Gladen corrected rate, 0..1; `null` when uncalibrated or when the judge is no
    /// better than chance.
    pub corrected: Option<f64>,
    /// Calibrated, but TPR + TNR ≤ 1: the judge is no better than chance and its rate cannot be
    /// corrected.
    #[serde(default)]
    pub no_better_than_chance: bool,
}

/// How many pairs `eval_gate.not_comparable_cases` names per reason.
pub const NOT_COMPARABLE_NAMED: usize = 20;

/// One shard of a run split across jobs (`--shard INDEX/COUNT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardInfo {
    /// 1-based index of this shard.
    pub index: u32,
    /// How many shards the run was split into.
    pub count: u32,
}

/// Layer 1's regression gate: this run against the last green runs of the base branch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Layer1GateSection {
    /// `pass`, `fail` or `no-baseline` (the gate, whatever the policy).
    pub result: String,
    /// `regression`, `failure` or `never` (`--fail-on-evals`).
    pub policy: String,
    /// Layer 1 fails the run under the policy.
    pub fails: bool,
    /// Where the baseline came from (the stored runs, or `--baseline FILE`), or why there is none.
    pub baseline: String,
    /// One line per model: the pass rate before → now, the drop, the noise, the verdict.
    pub lines: Vec<String>,
    /// Cases × models without a comparable baseline, by reason (new case, changed case, …).
    pub not_comparable: BTreeMap<String, usize>,
    /// The same pairs named, by reason: `` `case` on `model` ``, at most
    /// [`NOT_COMPARABLE_NAMED`] per reason (the count above is the whole). `cached` pairs, the
    /// baseline's own measurements, are not named.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub not_comparable_cases: BTreeMap<String, Vec<String>>,
    /// Tools added, removed or changed since the baseline, and the cases that see them.
    pub tool_changes: Vec<String>,
    /// Cases × models whose verdict flipped since the baseline (pass → fail, fail → pass), with
    /// k/N before and now.
    #[serde(default)]
    pub flips: Vec<String>,
    /// Why the rate moved when nothing the team changed can explain it (golden set and tool
    /// surface unchanged): the model or the server's behaviour moved.
    #[serde(default)]
    pub drift: Option<String>,
    /// Layer 0 against the baseline's: new failures and fixes, in one line (when both ran it).
    #[serde(default)]
    pub layer0_delta: Option<String>,
    /// The smallest drop in pass rate this suite detects with 80 % power (first model), in 0..1:
    /// when it is large, the golden set is too small to catch small regressions.
    #[serde(default)]
    pub minimum_detectable_drop: Option<f64>,
    /// `result` is `pass`, but a compared model has too few cases or trials to see a drop of
    /// half its pass rate: the pass says nothing (the Action's `gate` output is
    /// `insufficient-data`). Absent when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub insufficient_data: bool,
    /// `fail-on-evals: strict`: `policy` is `regression`, and `insufficient_data` fails too.
    /// Absent when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub strict: bool,
    /// The mean per-case pass rate now, over comparable cases (the first model).
    pub pass_rate: Option<f64>,
    /// That rate minus the baseline's (negative: worse).
    pub pass_rate_delta: Option<f64>,
}

/// The golden set of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GoldenSetInfo {
    /// The file as given.
    pub path: String,
    /// `sha256:…` over the case hashes (see `crate::jcs`).
    pub sha256: String,
    /// Number of cases in the set.
    pub cases: usize,
    /// The date relative dates (`today`, `tomorrow`, `+Nd`) resolved to, `YYYY-MM-DD`, fixed
    /// at the run's start in `timezone`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub today: Option<String>,
    /// The set's `defaults.timezone` (IANA name; `UTC` when not given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
}

/// Whether a model ran, and why not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelStatus {
    /// `PROVIDER:MODEL`.
    pub model: String,
    /// What became of it.
    pub status: ModelOutcome,
    /// A sentence for the reader (the fix when it did not run).
    pub detail: Option<String>,
    /// Its answers were replayed from cassettes (`--cassettes` without `--record`, or the demo):
    /// the model itself was not called. Absent when false (a live model, one recorded with
    /// `--record`, and reports written before it was kept).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replayed: bool,
}

/// What became of one model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelOutcome {
    /// Its cases ran (live or replayed).
    Ran,
    /// Its key variable is empty or unset: not run, never a failure.
    NoApiKey,
    /// The provider refused it at the start (401/403, unknown model, unreachable): exit 5.
    Unusable,
}

/// The verdict on one case × model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EvalStatus {
    /// k ≥ threshold.
    Pass,
    /// k < threshold.
    Fail,
    /// Fewer trials than the threshold completed (provider or server failures): no verdict.
    Error,
    /// Not run or not graded; `reason` says why (call cap, a rubric the judge grades later).
    Skipped,
}

/// How `layer1_not_run` reads when layer 1 refused its input ([`EvalsSection::input_refused`]
/// says so, typed): for the reader, never parsed.
pub const INVALID_INPUT_PREFIX: &str = "invalid input: ";

impl EvalsSection {
    /// True when layer 1 refused its input ([`EvalsSection::input_refused`], the typed field,
    /// never the text of `layer1_not_run`). Such a run never passes.
    pub fn input_refused(&self) -> bool {
        self.input_refused
    }

    /// True when a case × model failed its threshold.
    pub fn any_failed(&self) -> bool {
        self.evals.iter().any(|eval| eval.status == EvalStatus::Fail)
    }

    /// Trials the model provider spoiled (`ending: provider_error`, after the retries and the
    /// second try, an `embedding`/`judge` argument check whose model failed, or a rubric judge
    /// that failed: `judge_error`, the call cap aside) and trials started,
    /// over every case × model.
    pub fn run_errors(&self) -> (usize, usize) {
        let started = self.evals.iter().map(|eval| eval.traces.len()).sum();
        let errors = self
            .evals
            .iter()
            .flat_map(|eval| &eval.traces)
            .filter(|run| run.status == TrialStatus::Error && run.cause.is_some_and(ErrorCause::spoiled_by_provider))
            .count();
        (errors, started)
    }

    /// True when a replayed request had no cassette (`ending: replay_miss`): one of the causes of
    /// [`EvalsSection::provider_failed`] (exit status 5), but no provider's fault, so headlined as
    /// what it was.
    pub fn replay_missed(&self) -> bool {
        self.evals.iter().flat_map(|eval| &eval.traces).any(|run| run.cause.is_some_and(ErrorCause::replay_miss))
    }

    /// True when a provider was unusable at the start, a replayed request had no cassette
    /// (`ending: replay_miss`: deterministic, so one is enough), or the provider spoiled more than
    /// a fifth of all trials (exit status 5). Trials the server spoiled are `error` too, but say
    /// nothing about the provider.
    pub fn provider_failed(&self) -> bool {
        let (errors, started) = self.run_errors();
        self.model_status.iter().any(|model| model.status == ModelOutcome::Unusable)
            || self.replay_missed()
            || errors * 5 > started
    }
}

fn no_calls(calls: &u64) -> bool {
    *calls == 0
}

/// What a verdict reached on replayed answers says about itself: shown wherever such a verdict
/// is (the summary's gate line, the pull-request comment, JUnit).
pub const REPLAYED_VERDICT: &str = "reached on replayed model answers (cassettes), not live calls";

impl EvalsSection {
    /// True when `model`'s answers were replayed from cassettes ([`ModelStatus::replayed`]).
    pub fn replayed(&self, model: &str) -> bool {
        self.model_status.iter().any(|status| status.model == model && status.replayed)
    }

    /// True when some model's answers were replayed from cassettes, or some call was.
    pub fn any_replayed(&self) -> bool {
        self.replayed_model_calls > 0 || self.model_status.iter().any(|status| status.replayed)
    }

    /// Model calls sent to a live provider: [`EvalsSection::model_calls`] less the replayed ones.
    pub fn live_model_calls(&self) -> u64 {
        self.model_calls.saturating_sub(self.replayed_model_calls)
    }

    /// `model` as a reader should see it: `openai:demo (replayed)` when its answers came from
    /// cassettes, else the label alone.
    pub fn model_shown(&self, model: &str) -> String {
        if self.replayed(model) { format!("{model} (replayed)") } else { model.to_owned() }
    }

    /// The model calls for a reader: `60`, or with replayed ones, how many were live and how
    /// many replayed (`5 (0 live, 5 replayed from cassettes)`).
    pub fn model_calls_text(&self) -> String {
        if self.any_replayed() {
            format!(
                "{} ({} live, {} replayed from cassettes)",
                self.model_calls,
                self.live_model_calls(),
                self.replayed_model_calls
            )
        } else {
            self.model_calls.to_string()
        }
    }
}

/// The version of the agent loop and graders: bump it when a change could change a verdict, so
/// no cached verdict of the old logic is reused, and the gate compares no verdict with a
/// baseline record graded by the old logic (each [`EvalResult`] carries the version that graded
/// it). 2: a call the harness refused for its arguments fails the arguments grader.
pub(crate) const GRADER_VERSION: u32 = 2;

/// The most bytes of a tool result a model is given; the rest is cut with a marker.
pub(crate) const MODEL_RESULT_BYTES: usize = 256 * 1024;

/// How the reason of a trial whose model-graded check could not be graded starts.
pub(crate) const ARGUMENT_CHECK_ERROR: &str = "argument_check_error";

/// What the reason of such a check says when a cassette had no recording for it (a replay miss,
/// deterministic like a model's).
pub(crate) const REPLAY_MISS: &str = "replay miss";

/// The judge error of a judge the model-call cap stopped.
pub(crate) const JUDGE_CAP_REACHED: &str = "the model-call cap was reached before the judge answered";

impl EvalStatus {
    /// `pass`, `fail`, `error` or `skipped`.
    pub fn as_str(self) -> &'static str {
        match self {
            EvalStatus::Pass => "pass",
            EvalStatus::Fail => "fail",
            EvalStatus::Error => "error",
            EvalStatus::Skipped => "skipped",
        }
    }
}

impl EvalsSection {
    /// The case ids, each once, in the order they first appear in `evals` (file order).
    pub fn case_ids(&self) -> Vec<&str> {
        let mut ids: Vec<&str> = Vec::new();
        for eval in &self.evals {
            if !ids.contains(&eval.case.as_str()) {
                ids.push(&eval.case);
            }
        }
        ids
    }

    /// The models that have results, in the order given (then any others in `evals` order).
    pub fn models_with_results(&self) -> Vec<&str> {
        let mut models: Vec<&str> = Vec::new();
        let named = self.models.iter().map(String::as_str);
        for model in named.chain(self.evals.iter().map(|eval| eval.model.as_str())) {
            if !models.contains(&model) && self.evals.iter().any(|eval| eval.model == model) {
                models.push(model);
            }
        }
        models
    }

    /// Distinct cases with at least one model failing their threshold.
    pub fn failed_cases(&self) -> usize {
        self.case_ids()
            .into_iter()
            .filter(|case| self.evals.iter().any(|eval| eval.case == *case && eval.status == EvalStatus::Fail))
            .count()
    }

    /// True when some case ran at temperature 0 (its trials are then not independent draws).
    pub fn any_at_temperature_zero(&self) -> bool {
        self.evals.iter().any(EvalResult::at_temperature_zero)
    }
}

impl EvalResult {
    /// The graders that failed a trial they graded (passed < graded), in name order.
    pub fn failing_graders(&self) -> Vec<(&str, GraderTally)> {
        self.graders
            .iter()
            .filter(|(_, tally)| tally.passed < tally.graded)
            .map(|(name, tally)| (name.as_str(), *tally))
            .collect()
    }

    /// The trial that explains a `fail` or an `error`: its number (when a trace is kept) and its
    /// reason on one line. For `fail` (and a `pass` with a failed trial) the first failed trial; for
    /// `error` the first trial that ended in an error (else the first failed one). Falls back to
    /// the last line of `reason`; `None` for a `pass` without a failed trial.
    pub fn first_bad_trial(&self) -> Option<(Option<usize>, String)> {
        let wanted: &[TrialStatus] = match self.status {
            EvalStatus::Fail | EvalStatus::Pass => &[TrialStatus::Fail],
            EvalStatus::Error => &[TrialStatus::Error, TrialStatus::Fail],
            EvalStatus::Skipped => return None,
        };
        let trace = wanted.iter().find_map(|status| self.traces.iter().find(|run| run.status == *status));
        match trace {
            None if self.status == EvalStatus::Pass => None,
            Some(run) => {
                let reason = run.reason.as_deref().map(one_line).unwrap_or_else(|| "no reason given".to_owned());
                Some((Some(run.run), reason))
            }
            None => self.reason.as_deref().and_then(|text| text.lines().last()).map(|line| (None, one_line(line))),
        }
    }

    /// Every failing (for an `error` eval: errored, then failing) trial of the eval, in the order
    /// [`EvalResult::first_bad_trial`] picks its first, as (trial number, reason on one line); for an
    /// eval with no kept trial, its reason alone (run `None`). Empty for a pass without a failed
    /// trial and for a skipped eval.
    pub fn bad_trials(&self) -> Vec<(Option<usize>, String)> {
        let wanted: &[TrialStatus] = match self.status {
            EvalStatus::Fail | EvalStatus::Pass => &[TrialStatus::Fail],
            EvalStatus::Error => &[TrialStatus::Error, TrialStatus::Fail],
            EvalStatus::Skipped => return Vec::new(),
        };
        let runs: Vec<(Option<usize>, String)> = wanted
            .iter()
            .flat_map(|status| self.traces.iter().filter(move |run| run.status == *status))
            .map(|run| {
                (Some(run.run), run.reason.as_deref().map(one_line).unwrap_or_else(|| "no reason given".to_owned()))
            })
            .collect();
        if runs.is_empty() {
            return self.first_bad_trial().into_iter().collect();
        }
        runs
    }

    /// True when the sampling parameters sent had `temperature` 0.
    pub fn at_temperature_zero(&self) -> bool {
        self.sampling.get("temperature").and_then(Value::as_f64) == Some(0.0)
    }
}

/// `text` with its line breaks folded to spaces and trimmed.
fn one_line(text: &str) -> String {
    text.split(['\r', '\n']).map(str::trim).filter(|part| !part.is_empty()).collect::<Vec<_>>().join(" ")
}

/// Layer 1's note when a soft case needs every one of fewer than five trials (its threshold
/// equals its runs: 4 of 5 scaled to 3 runs is 3 of 3), so it is as strict as a hard case;
/// `None` otherwise. One note for the run, naming each such run count.
pub(crate) fn soft_as_strict_as_hard_note(evals: &[EvalResult]) -> Option<String> {
    let mut counts: Vec<usize> = evals
        .iter()
        .filter(|eval| eval.kind == "soft" && eval.threshold == eval.runs && eval.runs < 5)
        .map(|eval| eval.runs)
        .collect();
    counts.sort_unstable();
    counts.dedup();
    if counts.is_empty() {
        return None;
    }
    let needs: Vec<String> = counts
        .iter()
        .map(|runs| format!("with {runs} run{} a soft case needs {runs}/{runs}", if *runs == 1 { "" } else { "s" }))
        .collect();
    Some(format!(
        "{}, the same as a hard case (a soft threshold is 4 of 5 scaled to the run count, rounded up): use 5 runs (`runs: 5` or `--runs 5`) for 4/5",
        needs.join("; ")
    ))
}

/// One case × model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalResult {
    /// The case id.
    pub case: String,
    /// `PROVIDER:MODEL`.
    pub model: String,
    /// `hard` or `soft`.
    pub kind: String,
    /// The number of trials asked for (N).
    pub runs: usize,
    /// Trials that passed (k).
    pub passed: usize,
    /// Trials that completed (not `error`); k is out of these.
    pub completed: usize,
    /// The verdict.
    pub status: EvalStatus,
    /// Passes needed (hard: N; soft: `pass_threshold`).
    pub threshold: usize,
    /// 95 % Wilson score interval of the pass rate over completed trials, `[lo, hi]` in 0..1
    /// (`[0, 1]` when none completed). Indicative at temperature 0 (trials are not independent).
    pub wilson_95: [f64; 2],
    /// `sha256:…` of the resolved case (the cache and baseline key on it).
    pub case_sha256: String,
    /// The version of the agent loop and graders that measured this verdict
    /// ([`GRADER_VERSION`]): the gate compares a verdict only with baseline
    /// records graded by the same version. Reports written before it was recorded read as 1.
    #[serde(default = "first_grader_version")]
    pub grader_version: u32,
    /// Per grader (`selection`, `arguments`, `sequence`, `no_tool_call`, `forbidden`,
    /// `finished`): trials it passed of the trials it graded.
    pub graders: BTreeMap<String, GraderTally>,
    /// The verdict in one sentence, then the first failing trial's reason (one line each).
    pub reason: Option<String>,
    /// 0 < k < completed: the case neither always passes nor always fails.
    pub flaky: bool,
    /// The sampling parameters actually sent (after any the model refused were dropped).
    pub sampling: Value,
    /// The trials, bounded (see `--trace-results`).
    pub traces: Vec<TrialTrace>,
    /// Set when this verdict was reused from the verdict cache instead of measured in this run
    /// (no model call, no `tools/call`): where it came from and what it was keyed on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached: Option<CachedFrom>,
    /// The distinct model versions and fingerprints the provider reported answering this case's
    /// trials, sorted; empty (absent from `report.json`) when it reported none. The drift line of
    /// the gate compares them with the baseline's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reported_models: Vec<ReportedModel>,
}

/// The grader version of a verdict that does not say (written before it was recorded).
fn first_grader_version() -> u32 {
    1
}

/// What a provider said served a model call: `model` of the response (the dated version behind
/// an alias) and OpenAI's `system_fingerprint`; at least one is set. Ordered by model, then
/// fingerprint (absent first).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ReportedModel {
    /// The model version, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The system fingerprint, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_fingerprint: Option<String>,
}

impl ReportedModel {
    /// The pair, or `None` when the provider reported neither.
    pub fn of(model: Option<&str>, system_fingerprint: Option<&str>) -> Option<Self> {
        (model.is_some() || system_fingerprint.is_some()).then(|| Self {
            model: model.map(str::to_owned),
            system_fingerprint: system_fingerprint.map(str::to_owned),
        })
    }
}

impl std::fmt::Display for ReportedModel {
    /// `gpt-4.1-2025-04-14 (fp_abc)`, `gpt-4.1-2025-04-14`, or `unnamed model (fp_abc)`.
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.model.as_deref().unwrap_or("unnamed model"))?;
        match &self.system_fingerprint {
            Some(fingerprint) => write!(formatter, " ({fingerprint})"),
            None => Ok(()),
        }
    }
}

/// Where a reused verdict came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CachedFrom {
    /// The cache key it was found under (`sha256:…`).
    pub key: String,
    /// When the run that measured it started (RFC 3339).
    pub measured_at: String,
    /// The server key it was keyed on (`none` when the key left the server out), so a reader
    /// knows what a reused verdict is worth.
    pub server_key: String,
}

/// Trials a grader passed, of the trials it graded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraderTally {
    /// Trials it passed.
    pub passed: usize,
    /// Trials it graded (skipped ones left out).
    pub graded: usize,
}

/// How one trial ended, as graded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrialStatus {
    /// Every criterion that applies passed.
    Pass,
    /// A criterion failed.
    Fail,
    /// The trial could not complete (provider or server failure, ours): neither pass nor fail.
    Error,
    /// Nothing was graded.
    Skipped,
}

/// One trial of a case on a model: what the model said and did, bounded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialTrace {
    /// 1-based trial number.
    pub run: usize,
    /// The trial's verdict.
    pub status: TrialStatus,
    /// Why it failed or errored, in one line.
    pub reason: Option<String>,
    /// How it ended: `answer`, `max_turns`, `timeout`, `finding`, `provider_error`,
    /// `replay_miss`, `server_error` or `call_cap` (`TrialEnding::as_str` in the agent module).
    pub ending: String,
    /// Model turns taken.
    pub turns: usize,
    /// Model calls made for this trial (retries included).
    pub model_calls: usize,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// Tool calls in order.
    pub calls: Vec<TraceCall>,
    /// The model's final text (bounded by `--trace-results`; `null` when none or not kept).
    pub answer: Option<String>,
    /// What the model wrote on each turn that had text, in order (bounded by `--trace-results`;
    /// empty when not kept). The user turns are the case's `prompt`.
    #[serde(default)]
    pub model_text: Vec<ModelText>,
    /// Why the model stopped on each turn, as reported (`stop`, `tool_calls`, `length`, …).
    pub stop_reasons: Vec<String>,
    /// Tokens read, summed over turns; `null` when any turn's count was unknown.
    pub input_tokens: Option<u64>,
    /// Tokens written, summed over turns; `null` when any turn's count was unknown.
    pub output_tokens: Option<u64>,
    /// The wall time of each model call of the trial, in milliseconds, in order (the latency
    /// percentiles of `eval_metrics` are computed from them). Absent when the trial made none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub model_latencies_ms: Vec<u64>,
    /// Each criterion's verdict and reason.
    pub criteria: Vec<CriterionOut>,
    /// The rubric judge's part of this trial (absent when the case has no rubric or no judge
    /// model was given): which judge, prompt and rubric, and each criterion's voted verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeTrace>,
    /// Why the trial is `error` (or was cut by the call cap), typed: what the exit status reads.
    /// Absent on a trial that passed or failed, and in reports written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<ErrorCause>,
    /// Model calls of the trial (the judge's included) that tolerant replay answered although
    /// the tool results they read differed from the recording: the trace's note "tool result
    /// differed from the recording". 0 (absent) when none did.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub result_changed: usize,
}

/// How a trace's `reason` heads the error a trial ended in (`error: DETAIL`): written by
/// [`error_reason`], read back by [`TrialTrace::error_detail`].
const ERROR_REASON: &str = "error: ";

/// The `reason` of a trial that ended in an error, as its trace gives it.
pub(crate) fn error_reason(detail: &str) -> String {
    format!("{ERROR_REASON}{detail}")
}

impl TrialTrace {
    /// The error a trial ended in, when its reason is one ([`error_reason`]); else its reason.
    pub(crate) fn error_detail(&self) -> Option<&str> {
        self.reason.as_deref().map(|reason| reason.strip_prefix(ERROR_REASON).unwrap_or(reason))
    }
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

/// `evals.expected_calls`: what `golden check --execute` found when it ran in place of layer 1.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpectedCalls {
    /// Expected calls of the set.
    pub expected: usize,
    /// Sent.
    pub sent: usize,
    /// Answered with a result that is not `isError`.
    pub ok: usize,
    /// Failed: `isError`, a JSON-RPC error, no answer, or not sent because no trial could pass
    /// them (a schema-breaking value, a forbidden tool).
    pub failed: usize,
    /// Not executed (a non-exact matcher, arguments left to the model).
    pub not_executed: usize,
    /// One line per expected call and note, as the command prints them (no tool result; an
    /// error's first line, clipped), at most 200.
    pub lines: Vec<String>,
}

/// What `golden check --execute` found in place of layer 1, in one line.
pub(crate) fn expected_calls_line(calls: &ExpectedCalls) -> String {
    format!(
        "`golden check --execute` ran in its place (each expected call made for real, no model): {} expected call(s), {} sent, {} ok, {} failed, {} not executed",
        calls.expected, calls.sent, calls.ok, calls.failed, calls.not_executed
    )
}

/// The most calls [`keyless_note`] lists.
const KEYLESS_LISTED: usize = 20;

/// The summary's note of `golden check --execute` run in place of layer 1 (Markdown): what ran
/// and its counts, said once, what it proves, then each expected call that failed (❌) and each
/// one not executed or skipped (➖), with why; negative cases and forbidden tools, which send
/// nothing by design, are left to `report.json`.
pub(crate) fn keyless_note(calls: &ExpectedCalls) -> String {
    use std::fmt::Write as _;
    let mut out = format!(
        "\n> **In its place:** `golden check --execute` made each expected call for real, with no model: {} expected call(s), {} sent, {} ok, {} failed, {} not executed. It proves the set can be passed and the server still serves it; it says nothing about a model, and it does not gate.\n",
        calls.expected, calls.sent, calls.ok, calls.failed, calls.not_executed
    );
    let calls_only = calls.lines.iter().filter(|line| {
        line.contains(" → ")
            && !line.contains("→ ok")
            && !line.contains("→ nothing sent")
            && !line.contains("→ never called")
    });
    let (neutral, failed): (Vec<&String>, Vec<&String>) =
        calls_only.partition(|line| line.contains("→ not executed") || line.contains("→ skipped"));
    let listed: Vec<(&str, &String)> =
        failed.iter().map(|line| ("❌", *line)).chain(neutral.iter().map(|line| ("➖", *line))).collect();
    for (mark, line) in listed.iter().take(KEYLESS_LISTED) {
        let _ = writeln!(out, "- {mark} {}", super::md::message(&crate::text::clip(line, 2_000)));
    }
    if listed.len() > KEYLESS_LISTED {
        let _ = writeln!(out, "- …and {} more: see `report.json`", listed.len() - KEYLESS_LISTED);
    }
    out
}

/// The note of a trial replayed over changed tool results.
pub(crate) const RESULT_CHANGED: &str = "tool result differed from the recording";

/// Why a trial is `error` or was cut: the exit table reads this, never a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCause {
    /// The provider of the model under test failed after its retries (`provider_error`).
    Provider,
    /// Replaying, no recording answered the model under test (`replay_miss`).
    ReplayMiss,
    /// The rubric judge failed: its provider, or an answer that could not be read.
    Judge,
    /// Replaying, no recording answered the rubric judge.
    JudgeReplayMiss,
    /// The model of an `embedding` or `judge` argument check failed.
    ArgumentJudge,
    /// Replaying, no recording answered the model of an argument check.
    ArgumentJudgeReplayMiss,
    /// The model-call cap stopped the trial or its judge (exit status 6, not the provider's).
    CallCap,
    /// The server under test gave no answer to a tool call (`server_error`).
    Server,
    /// A fault a layer injected ended the trial (layer 2).
    InjectedFault,
}

impl ErrorCause {
    /// A model provider spoiled the trial (counts toward the fifth of trials that is exit status 5).
    pub fn spoiled_by_provider(self) -> bool {
        matches!(
            self,
            ErrorCause::Provider
                | ErrorCause::Judge
                | ErrorCause::JudgeReplayMiss
                | ErrorCause::ArgumentJudge
                | ErrorCause::ArgumentJudgeReplayMiss
        )
    }

    /// A recording was missing (deterministic: one is exit status 5, and the fix is to record).
    pub fn replay_miss(self) -> bool {
        matches!(self, ErrorCause::ReplayMiss | ErrorCause::JudgeReplayMiss | ErrorCause::ArgumentJudgeReplayMiss)
    }
}

/// What the rubric judge said of one trial: enough to tell which judge, prompt and rubric gave
/// the verdict, and to check each `pass` against its quote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeTrace {
    /// The judge model, `PROVIDER:MODEL`.
    pub model: String,
    /// The judge prompt's version (`JUDGE_PROMPT_VERSION`).
    pub prompt_version: u32,
    /// `"sha256:"` and 64 hex digits over the rubric as judged (criteria ids, texts, must or
    /// should, in order, and `min_should`).
    pub rubric_sha256: String,
    /// Judge calls per trial (`--judge-samples`), majority vote.
    pub samples: usize,
    /// `pass`, `fail` or `judge_error` (the judge failed: neither a pass nor a fail).
    pub verdict: String,
    /// Why it failed, or what the judge error was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Each criterion's voted verdict (empty on `judge_error`).
    pub criteria: Vec<JudgedCriterion>,
}

/// One criterion as the judge voted it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgedCriterion {
    /// The criterion's id in the rubric.
    pub criterion_id: String,
    /// `must` (true) or `should` (false).
    pub must: bool,
    /// `pass`, `fail` or `unknown`.
    pub verdict: String,
    /// The judge's quote from the trace (at most 200 characters kept).
    pub evidence: String,
    /// The judge's reason.
    pub reason: String,
    /// A `pass` whose quote is not in the trace, downgraded to `unknown`.
    pub downgraded: bool,
}

/// The text of one model turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelText {
    /// The model turn (1-based).
    pub turn: usize,
    /// The text, bounded by `--trace-results`.
    pub text: String,
}

/// One tool call of a trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceCall {
    /// The model turn (1-based) it came in.
    pub turn: usize,
    /// The MCP tool name (or the name the model used when it named no offered tool).
    pub name: String,
    /// The arguments as the model sent them.
    pub arguments: Value,
    /// Whether it reached the server (`false`: unknown tool, arguments invalid against the
    /// tool's `inputSchema`, a forbidden tool: the model got an error result instead).
    pub sent: bool,
    /// Why it was not sent, or what went wrong sending it.
    pub error: Option<String>,
    /// The result text as the model saw it (bounded by `--trace-results`; `null` when not kept).
    pub result: Option<String>,
    /// The result had `isError: true`.
    pub is_error: bool,
    /// Set when the result was cut for the model (over 256 KiB of text): what the server sent
    /// and what the model saw. `result` is then (a part of) the model's copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_cut: Option<ResultCut>,
    /// Wall time of the `tools/call` in milliseconds (0 when not sent), every round included.
    pub latency_ms: u64,
    /// The multi round-trip rounds of the call: what the server asked (`inputRequests` keys and
    /// methods) and what the case's `input_responses` answered. The model never sees them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub input_rounds: Vec<InputRound>,
}

/// A tool result cut for the model: its text was longer than a model is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultCut {
    /// Bytes of the result's text as the server sent it.
    pub server_bytes: usize,
    /// Bytes of the text the model saw: the first part and the marker that says it was cut.
    pub model_bytes: usize,
}

/// One multi round-trip round of a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputRound {
    /// `key: method` of each input request.
    pub requests: BTreeMap<String, String>,
    /// The `inputResponses` sent back (bounded by `--trace-results` like tool results: `null`
    /// when not kept).
    pub responses: Option<Value>,
    /// Whether the server's `requestState` was echoed.
    pub request_state: bool,
}

/// One criterion of a trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriterionOut {
    /// `selection`, `arguments`, `sequence`, `no_tool_call`, `forbidden`, `finished`, `judge`.
    pub criterion: String,
    /// `pass`, `fail` or `skipped`.
    pub verdict: String,
    /// Why.
    pub reason: String,
}

/// A fraction k of n, with its value (`null` when n is 0).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    /// How many.
    pub k: usize,
    /// Out of how many.
    pub n: usize,
    /// k / n, or `null` when n is 0.
    pub rate: Option<f64>,
}

impl Rate {
    /// k of n.
    pub fn new(k: usize, n: usize) -> Self {
        Rate { k, n, rate: (n > 0).then(|| k as f64 / n as f64) }
    }
}

/// Suite metrics of one model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalMetrics {
    /// `PROVIDER:MODEL`.
    pub model: String,
    /// Cases that passed, of the cases with a verdict (pass or fail).
    pub pass_rate: Rate,
    /// Trials whose tool selection passed, of the completed trials of cases with `expect_tool`.
    pub tool_selection_accuracy: Rate,
    /// Trials that called a tool, of the completed trials of negative cases.
    pub over_triggering_rate: Rate,
    /// Trials whose arguments passed, of the completed trials of cases with `expect_args`.
    pub argument_accuracy: Rate,
    /// Trials whose sequence passed, of the completed trials of cases with `expect_sequence`.
    pub sequence_accuracy: Rate,
    /// Cases by status.
    pub cases: BTreeMap<String, usize>,
    /// Trials that ended in an error, of all trials started.
    pub run_errors: Rate,
    /// Tokens read, summed; `null` when any call's count was unknown.
    pub input_tokens: Option<u64>,
    /// Tokens written, summed; `null` when any call's count was unknown.
    pub output_tokens: Option<u64>,
    /// Median model-call latency in milliseconds.
    pub model_latency_p50_ms: Option<u64>,
    /// 95th percentile model-call latency in milliseconds.
    pub model_latency_p95_ms: Option<u64>,
}

/// The suite metrics of `model` over its results `evals` (the case × model results of that
/// model): the same numbers whether computed when the run ends or after shards are merged.
/// Verdicts reused from the cache (`cached`) count their status and grader tallies only.
pub fn metrics_of(model: &str, evals: &[&EvalResult]) -> EvalMetrics {
    let mut cases: BTreeMap<String, usize> = BTreeMap::new();
    let (mut selection, mut over_triggering, mut arguments, mut sequence) = ((0, 0), (0, 0), (0, 0), (0, 0));
    let (mut runs, mut run_errors) = (0, 0);
    let (mut input_tokens, mut output_tokens, mut tokens_unknown) = (0_u64, 0_u64, false);
    let mut latencies: Vec<u64> = Vec::new();
    for eval in evals {
        *cases.entry(eval.status.as_str().to_owned()).or_default() += 1;
        // Every completed trial of a case with `expect_tool` is graded on its selection, every
        // completed trial of a negative case on `no_tool_call`.
        if let Some(tally) = eval.graders.get("selection") {
            selection.0 += tally.passed;
            selection.1 += tally.graded;
        }
        if let Some(tally) = eval.graders.get("no_tool_call") {
            over_triggering.0 += tally.graded - tally.passed;
            over_triggering.1 += tally.graded;
        }
        for (name, sums) in [("arguments", &mut arguments), ("sequence", &mut sequence)] {
            if let Some(tally) = eval.graders.get(name) {
                sums.0 += tally.passed;
                sums.1 += tally.graded;
            }
        }
        // A verdict reused from the cache counts its status and tallies; its trials, tokens and
        // latencies were not spent in this run.
        if eval.cached.is_some() {
            continue;
        }
        for run in &eval.traces {
            runs += 1;
            latencies.extend(&run.model_latencies_ms);
            match (run.input_tokens, run.output_tokens) {
                (Some(input), Some(output)) => {
                    input_tokens += input;
                    output_tokens += output;
                }
                _ => tokens_unknown = true,
            }
            if run.status == TrialStatus::Error {
                run_errors += 1;
            }
        }
    }
    let passed = cases.get("pass").copied().unwrap_or(0);
    let failed = cases.get("fail").copied().unwrap_or(0);
    latencies.sort_unstable();
    let percentile = |p: f64| -> Option<u64> {
        if latencies.is_empty() {
            return None;
        }
        let rank = ((p * latencies.len() as f64).ceil() as usize).clamp(1, latencies.len());
        Some(latencies[rank - 1])
    };
    let known = runs > 0 && !tokens_unknown;
    EvalMetrics {
        model: model.to_owned(),
        pass_rate: Rate::new(passed, passed + failed),
        tool_selection_accuracy: Rate::new(selection.0, selection.1),
        over_triggering_rate: Rate::new(over_triggering.0, over_triggering.1),
        argument_accuracy: Rate::new(arguments.0, arguments.1),
        sequence_accuracy: Rate::new(sequence.0, sequence.1),
        cases,
        run_errors: Rate::new(run_errors, runs),
        input_tokens: known.then_some(input_tokens),
        output_tokens: known.then_some(output_tokens),
        model_latency_p50_ms: percentile(0.5),
        model_latency_p95_ms: percentile(0.95),
    }
}

impl EvalResult {
    /// A case × model for the tests of other modules: `passed` of `runs` (every trial completed),
    /// `pass` when `passed ≥ threshold`, case hash `sha256:CASE`, no traces.
    #[cfg(test)]
    pub(crate) fn for_tests(case: &str, model: &str, hard: bool, passed: usize, runs: usize, threshold: usize) -> Self {
        EvalResult {
            case: case.to_owned(),
            model: model.to_owned(),
            kind: if hard { "hard" } else { "soft" }.to_owned(),
            runs,
            passed,
            completed: runs,
            status: if passed >= threshold { EvalStatus::Pass } else { EvalStatus::Fail },
            threshold,
            wilson_95: wilson_95(passed, runs),
            case_sha256: format!("sha256:{case}"),
            grader_version: GRADER_VERSION,
            graders: BTreeMap::new(),
            reason: None,
            flaky: passed > 0 && passed < runs,
            sampling: Value::Null,
            traces: Vec::new(),
            cached: None,
            reported_models: Vec::new(),
        }
    }
}

/// The 95 % Wilson score interval of k successes in n trials, `[lo, hi]` (`[0, 1]` for n = 0).
pub fn wilson_95(k: usize, n: usize) -> [f64; 2] {
    if n == 0 {
        return [0.0, 1.0];
    }
    let z = 1.959_963_984_540_054_f64;
    let n = n as f64;
    let p = k as f64 / n;
    let z2 = z * z;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half = z * ((p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt()) / denominator;
    let round = |value: f64| (value.clamp(0.0, 1.0) * 10_000.0).round() / 10_000.0;
    [round(centre - half), round(centre + half)]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `runs: 3` scales a soft case's 4-of-5 to 3 of 3: the summary says once that it is as
    /// strict as a hard case, and nothing at 4 of 5 or for a hard case.
    #[test]
    fn a_soft_case_needing_every_one_of_three_runs_gets_one_note() {
        let mut evals = crate::report::test_support::sample_evals_report().evals.expect("evals").evals;
        assert_eq!(soft_as_strict_as_hard_note(&evals), None, "the sample runs 5 trials");
        for eval in &mut evals {
            eval.runs = 3;
            eval.threshold = 3;
        }
        assert!(evals.iter().filter(|eval| eval.kind == "soft").count() > 1);
        let note = soft_as_strict_as_hard_note(&evals).expect("a note");
        assert_eq!(
            note,
            "with 3 runs a soft case needs 3/3, the same as a hard case (a soft threshold is 4 of 5 scaled to the run count, rounded up): use 5 runs (`runs: 5` or `--runs 5`) for 4/5"
        );
        evals.retain(|eval| eval.kind == "hard");
        assert_eq!(soft_as_strict_as_hard_note(&evals), None, "hard cases need every run anyway");
    }

    #[test]
    fn wilson_interval_matches_values_computed_by_hand() {
        // 5 of 5: [0.5655, 1]; 4 of 5: [0.3755, 0.9638]; 0 of 5: [0, 0.4345].
        assert_eq!(wilson_95(5, 5), [0.5655, 1.0]);
        assert_eq!(wilson_95(4, 5), [0.3755, 0.9638]);
        assert_eq!(wilson_95(0, 5), [0.0, 0.4345]);
        assert_eq!(wilson_95(0, 0), [0.0, 1.0]);
    }

    #[test]
    fn rate_has_no_value_without_trials() {
        assert_eq!(Rate::new(0, 0).rate, None);
        assert_eq!(Rate::new(3, 4).rate, Some(0.75));
    }

    #[test]
    fn the_keyless_note_says_in_its_place_once_and_lists_each_call_not_ok_with_why() {
        let mut report = crate::report::test_support::sample_evals_report();
        let evals = report.evals.as_mut().expect("evals");
        evals.evals.clear();
        evals.layer1_not_run = Some("no model could run (openai:gpt-4.1-mini: no API key)".into());
        evals.expected_calls = Some(ExpectedCalls {
            expected: 4,
            sent: 2,
            ok: 1,
            failed: 1,
            not_executed: 2,
            lines: [
                "execute: each expected call of the set, sent once for real (no model)",
                "case a: echo {} → ok (3 ms)",
                "case b: echo {} → isError: boom (3 ms)",
                "case c: region → not executed: no exact value to send for `unit` (a `one_of` matcher)",
                "case d: delete_todo → skipped: the tool is annotated `destructiveHint: true`; `golden check --execute-destructive` sends it (against a test deployment)",
                "case e: negative (expects no tool call) → nothing sent",
                "case e: forbid_tools `delete_todo` → never called",
                "summary: 4 expected call(s): …",
            ]
            .map(str::to_owned)
            .to_vec(),
        });
        let summary = crate::report::markdown::render(&report);
        assert_eq!(summary.to_lowercase().matches("in its place").count(), 1, "{summary}");
        let listed: Vec<&str> = summary.lines().filter(|line| line.starts_with("- ") && line.contains(" → ")).collect();
        assert_eq!(
            listed,
            [
                "- ❌ case b: echo \\{\\} → isError: boom (3 ms)",
                "- ➖ case c: region → not executed: no exact value to send for `unit` (a `one_of` matcher)",
                "- ➖ case d: delete\\_todo → skipped: the tool is annotated `destructiveHint: true`; `golden check --execute-destructive` sends it (against a test deployment)",
            ],
            "{summary}"
        );
    }

    #[test]
    fn a_replayed_model_is_shown_as_replayed_and_its_calls_are_split_into_live_and_replayed() {
        let status = |model: &str, replayed| ModelStatus {
            model: model.into(),
            status: ModelOutcome::Ran,
            detail: None,
            replayed,
        };
        let mut section = EvalsSection {
            model_status: vec![status("openai:demo", true), status("openai:live", false)],
            model_calls: 5,
            replayed_model_calls: 5,
            ..EvalsSection::default()
        };
        assert_eq!(section.model_shown("openai:demo"), "openai:demo (replayed)");
        assert_eq!(section.model_shown("openai:live"), "openai:live");
        assert_eq!(section.model_calls_text(), "5 (0 live, 5 replayed from cassettes)");
        // Were some calls live (no mode does this today), the split says how many of each.
        section.model_calls = 8;
        assert_eq!(section.model_calls_text(), "8 (3 live, 5 replayed from cassettes)");
        // Nothing replayed: the count alone, as before.
        let live = EvalsSection { model_calls: 60, ..EvalsSection::default() };
        assert!(!live.any_replayed());
        assert_eq!(live.model_calls_text(), "60");
    }
}
