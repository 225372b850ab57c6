//! The verdict and the exit table: turns what a run produced into the verdict, the Action's
//! `result` and the exit status. Pure (no IO, no clock), and the only place in the product where that policy lives.
//!
//! The exit statuses, one table for every front end (documented in docs/exit-status.md):
//!
//! | status | meaning |
//! |---|---|
//! | 0 | passed |
//! | 1 | the verdict failed: a MUST check failed or layer 1 failed under `fail-on-evals` (a failed case, or the regression gate) (with `fail-on: should`, a warning too) |
//! | 2 | invalid input: a flag, input, environment variable or file |
//! | 3 | the server could not be reached, started, or evaluated without credentials, or the URL is not an MCP endpoint |
//! | 4 | our own environment failed (the reports could not be written, no runtime, no port) |
//! | 5 | layer 1 or 2: a model provider is unusable at the start, or spoiled more than a fifth of the trials |
//! | 6 | layer 1 or 2: a limit — the model-call cap or the cost budget — stopped the run; what ran is reported |
//! | 130 / 143 | interrupted by SIGINT / SIGTERM; the reports were written |
//!
//! When several apply, the first in this order wins: 130/143 > 2 > 4 > 3 > 5 > 6 > 1 > 0.
//!
//! Every front end reaches its status through [`Met`], the table's rows as facts: [`decide`]
//! fills one from a report (`run`, `action`, `merge`), and the commands that write no report
//! (`golden check`, `golden init`, `judge calibrate`) fill one with what they met (the kinds of
//! their [`crate::error::UserError`]s among them). No front end names a status by hand.

use crate::report::evals::EvalsSection;
use crate::report::model::{INTERNAL_CHECK_ID, RunOutcome, RunReport, Status, Verdict};

/// When the run fails (the exit status); reports and outputs are written either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FailOn {
    /// A MUST failure fails the run (the default).
    Must,
    /// A MUST failure or a SHOULD warning fails the run.
    Should,
    /// Findings never fail the run (errors such as an unreachable server still do).
    Never,
}

impl FailOn {
    /// `must`, `should` or `never`, as the user spells it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            FailOn::Must => "must",
            FailOn::Should => "should",
            FailOn::Never => "never",
        }
    }

    /// The policy a report's `gate.fail_on` names (`must` for a report without one).
    pub(crate) fn of_report(report: &RunReport) -> Self {
        match report.gate.as_ref().map(|gate| gate.fail_on.as_str()) {
            Some("should") => FailOn::Should,
            Some("never") => FailOn::Never,
            _ => FailOn::Must,
        }
    }
}

/// An exit status of `mcp-eval` (see the module table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// 0: passed.
    Passed,
    /// 1: the verdict failed.
    VerdictFailed,
    /// 2: invalid input.
    InvalidInput,
    /// 3: the server could not be reached, started, or evaluated without credentials.
    Unreachable,
    /// 4: our own environment failed.
    Environment,
    /// 5: a model provider is unusable.
    Provider,
    /// 6: a limit — the model-call cap or the cost budget — stopped the run.
    Budget,
    /// 130: SIGINT.
    Interrupted,
    /// 143: SIGTERM.
    Terminated,
}

impl ExitStatus {
    /// The process exit code.
    pub fn code(self) -> i32 {
        match self {
            ExitStatus::Passed => 0,
            ExitStatus::VerdictFailed => 1,
            ExitStatus::InvalidInput => 2,
            ExitStatus::Unreachable => 3,
            ExitStatus::Environment => 4,
            ExitStatus::Provider => 5,
            ExitStatus::Budget => 6,
            ExitStatus::Interrupted => 130,
            ExitStatus::Terminated => 143,
        }
    }

    /// Rank in the precedence order (higher wins).
    fn rank(self) -> u8 {
        match self {
            ExitStatus::Passed => 0,
            ExitStatus::VerdictFailed => 1,
            ExitStatus::Budget => 2,
            ExitStatus::Provider => 3,
            ExitStatus::Unreachable => 4,
            ExitStatus::Environment => 5,
            ExitStatus::InvalidInput => 6,
            ExitStatus::Interrupted | ExitStatus::Terminated => 7,
        }
    }

    /// The status that wins when both apply.
    #[must_use]
    pub fn max(self, other: ExitStatus) -> ExitStatus {
        if other.rank() > self.rank() { other } else { self }
    }
}

// The verdict of a report is decided here, not by the report (a floor below).
impl RunReport {
    /// The verdict of this report, as [`verdict`] decides it under the report's own `fail-on`
    /// (its `gate`): what the headline says and the exit status follows.
    pub fn verdict(&self) -> Verdict {
        verdict(
            FailOn::of_report(self),
            self.outcome,
            &self.checks,
            self.evals.as_ref(),
            self.resilience.as_ref(),
            self.security.as_ref(),
            self.budget.as_ref(),
        )
    }
}

// The exit status of an expected failure lives beside the table, so that `error` (a floor
// below) depends on nothing.
impl crate::error::Kind {
    /// The exit status the table gives this kind alone ([`Met`]).
    pub(crate) fn exit_status(self) -> ExitStatus {
        Met::of(self).exit_status()
    }
}

impl crate::error::UserError {
    /// The exit status of this error.
    pub(crate) fn exit_status(&self) -> ExitStatus {
        self.kind.exit_status()
    }
}

/// What a command met, one field per row of the exit table; [`Met::exit_status`] is the status
/// the table gives (the first row that applies, in the module's order).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Met {
    /// The verdict failed (1).
    pub verdict_failed: bool,
    /// A flag, input, environment variable or file is invalid (2).
    pub invalid_input: bool,
    /// The server could not be reached, started, listed or evaluated without credentials (3).
    pub unreachable: bool,
    /// Our own environment failed: a report, a cassette or a file could not be written (4).
    pub environment: bool,
    /// A model provider is unusable, or spoiled trials (5).
    pub provider: bool,
    /// A limit — the model-call cap or the cost budget — stopped it (6).
    pub budget: bool,
    /// The signal that stopped it (130/143).
    pub interrupt: Option<Interrupt>,
}

impl Met {
    /// Nothing met: passed.
    pub(crate) fn nothing() -> Self {
        Self::default()
    }

    /// Only the row of an expected failure of this kind.
    pub(crate) fn of(kind: crate::error::Kind) -> Self {
        let mut met = Self::default();
        met.add(kind);
        met
    }

    /// Adds the row of an expected failure of this kind.
    pub(crate) fn add(&mut self, kind: crate::error::Kind) {
        use crate::error::Kind;
        match kind {
            Kind::InvalidInput => self.invalid_input = true,
            Kind::Unreachable => self.unreachable = true,
            Kind::Environment => self.environment = true,
            Kind::Provider => self.provider = true,
            Kind::Budget => self.budget = true,
        }
    }

    /// The exit status the table gives: of every row met, the first in the module's order.
    pub(crate) fn exit_status(self) -> ExitStatus {
        let rows = [
            (self.verdict_failed, ExitStatus::VerdictFailed),
            (self.budget, ExitStatus::Budget),
            (self.provider, ExitStatus::Provider),
            (self.unreachable, ExitStatus::Unreachable),
            (self.environment, ExitStatus::Environment),
            (self.invalid_input, ExitStatus::InvalidInput),
        ];
        let status = rows.iter().filter(|(met, _)| *met).fold(ExitStatus::Passed, |status, (_, row)| status.max(*row));
        self.interrupt.map_or(status, |signal| status.max(signal.exit_status()))
    }
}

/// The signal that interrupted a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Interrupt {
    /// SIGINT (Ctrl-C).
    Int,
    /// SIGTERM (the runner cancelling the job).
    Term,
}

impl Interrupt {
    /// The signal's name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Interrupt::Int => "SIGINT",
            Interrupt::Term => "SIGTERM",
        }
    }

    /// The exit status it ends a run with: 130 for SIGINT, 143 for SIGTERM.
    pub(crate) fn exit_status(self) -> ExitStatus {
        match self {
            Interrupt::Int => ExitStatus::Interrupted,
            Interrupt::Term => ExitStatus::Terminated,
        }
    }
}

/// The Action's `result` output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RunResult {
    /// The gate passed.
    Pass,
    /// The gate failed on findings.
    Fail,
    /// No verdict could be reached.
    Error,
}

impl RunResult {
    /// `pass`, `fail` or `error`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RunResult::Pass => "pass",
            RunResult::Fail => "fail",
            RunResult::Error => "error",
        }
    }
}

/// What the verdict is decided on besides the report.
#[derive(Debug, Clone, Copy)]
pub(crate) struct VerdictInput {
    /// When findings fail the run.
    pub fail_on: FailOn,
    /// The signal that stopped the run, if one did.
    pub interrupt: Option<Interrupt>,
    /// True when a report file could not be written.
    pub reports_failed: bool,
}

/// What was decided: the verdict, the Action's `result` and the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Decision {
    /// The verdict of the evaluation under `fail-on`.
    pub verdict: Verdict,
    /// The `result` output: the verdict, as the Action's output names it.
    pub result: RunResult,
    /// The exit status.
    pub exit: ExitStatus,
}

/// The verdict of a run under `fail_on`: `error` when the server was unreachable or mcp-eval
/// itself failed (an `INTERNAL` row); `fail` when a graded check failed or a layer-1 case × model
/// failed its threshold (also on an interrupted run), or, with `should`, a graded check warned;
/// `error` when the run was interrupted, stopped by the model-call cap or the cost budget, had an
/// unusable provider or layer 1 refused its input (a tool the server does not list), without a
/// failure (an incomplete run never passes); `pass` otherwise. With `never` findings fail
/// nothing (the rest stands). INFO rows never grade, whatever their status; checks with status
/// `error` or `not_applicable` do not fail the verdict. The verdict is what the headline says,
/// `result` is, and the exit status follows: the three agree on every path.
pub(crate) fn verdict(
    fail_on: FailOn,
    outcome: RunOutcome,
    checks: &[crate::report::model::CheckResult],
    evals: Option<&EvalsSection>,
    resilience: Option<&crate::report::layer2::ResilienceSection>,
    security: Option<&crate::report::layer2::SecuritySection>,
    budget: Option<&crate::report::telemetry::BudgetSection>,
) -> Verdict {
    // Layer 1 fails the verdict as its gate says (`--fail-on-evals`); without a gate, on any
    // failed case.
    let layer1_failed =
        evals.is_some_and(|evals| evals.eval_gate.as_ref().map_or_else(|| evals.any_failed(), |gate| gate.fails));
    let layer2_failed =
        resilience.is_some_and(|section| section.fails) || security.is_some_and(|section| section.fails);
    let graded = |status: Status| {
        checks.iter().any(|check| check.status == status && check.level != crate::report::model::Level::Info)
    };
    let failed = match fail_on {
        FailOn::Never => false,
        FailOn::Must => graded(Status::Fail) || layer1_failed || layer2_failed,
        FailOn::Should => graded(Status::Fail) || graded(Status::Warn) || layer1_failed || layer2_failed,
    };
    // Layer 1 stopped by the call cap or an unusable provider, or refused its input, or a run the
    // cost budget stopped, is incomplete: never a pass.
    let incomplete = evals.is_some_and(|evals| {
        evals.call_cap_reached || evals.provider_failed() || evals.input_refused() || evals.tools_unlisted
    }) || resilience.is_some_and(|section| section.call_cap_reached || section.provider_failed)
        || budget.is_some_and(|budget| budget.stopped.is_some());
    let internal = checks.iter().any(|check| check.id == INTERNAL_CHECK_ID);
    match outcome {
        RunOutcome::Unreachable | RunOutcome::NeedsCredentials | RunOutcome::Environment => Verdict::Error,
        _ if internal => Verdict::Error,
        _ if failed => Verdict::Fail,
        RunOutcome::Interrupted => Verdict::Error,
        _ if incomplete => Verdict::Error,
        RunOutcome::Completed => Verdict::Pass,
    }
}

/// Layer 2's failure rule under the `--fail-on-evals` policy `fail_on_evals`, as the report
/// spells it: a failed case × fault (or × payload) fails the run with `failure`, a failed hard
/// one with `regression` and `strict`, none with `never`. Sets each section's `fail_on` and
/// `fails`, which [`verdict`] reads.
pub(crate) fn gate_layer2(
    resilience: &mut crate::report::layer2::ResilienceSection,
    security: Option<&mut crate::report::layer2::SecuritySection>,
    fail_on_evals: &str,
) {
    let fails = |any_failed: bool, hard_failed: bool| match fail_on_evals {
        "failure" => any_failed,
        "regression" | "strict" => hard_failed,
        _ => false,
    };
    resilience.fail_on = fail_on_evals.to_owned();
    resilience.fails = fails(resilience.any_failed(), resilience.hard_failed());
    if let Some(security) = security {
        security.fail_on = fail_on_evals.to_owned();
        security.fails = fails(security.any_failed(), security.hard_failed());
    }
}

/// Decides the verdict, the `result` output and the exit status of a run.
pub(crate) fn decide(report: &RunReport, input: VerdictInput) -> Decision {
    let budget_stopped = report.budget.as_ref().is_some_and(|budget| budget.stopped.is_some());
    let verdict = verdict(
        input.fail_on,
        report.outcome,
        &report.checks,
        report.evals.as_ref(),
        report.resilience.as_ref(),
        report.security.as_ref(),
        report.budget.as_ref(),
    );
    // `result` is the verdict under the same `fail-on`, so the headline, `verdict`, `result`
    // and the exit status never disagree.
    let result = match verdict {
        Verdict::Error => RunResult::Error,
        Verdict::Fail => RunResult::Fail,
        Verdict::Pass => RunResult::Pass,
    };
    let met = Met {
        verdict_failed: result == RunResult::Fail,
        invalid_input: false,
        unreachable: matches!(report.outcome, RunOutcome::Unreachable | RunOutcome::NeedsCredentials)
            || report.evals.as_ref().is_some_and(|evals| evals.tools_unlisted),
        environment: input.reports_failed || report.checks.iter().any(|check| check.id == INTERNAL_CHECK_ID),
        provider: report.evals.as_ref().is_some_and(EvalsSection::provider_failed)
            || report.resilience.as_ref().is_some_and(|section| section.provider_failed),
        budget: report.evals.as_ref().is_some_and(|evals| evals.call_cap_reached)
            || report.resilience.as_ref().is_some_and(|section| section.call_cap_reached)
            || budget_stopped,
        interrupt: input.interrupt,
    };
    Decision { verdict, result, exit: met.exit_status() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{CheckResult, Level};

    fn check(status: Status) -> CheckResult {
        CheckResult {
            id: "X-1".into(),
            title: String::new(),
            level: Level::Must,
            status,
            message: String::new(),
            spec: String::new(),
            evidence: Vec::new(),
            duration_ms: 0,
            migration: false,
            waiver: None,
        }
    }

    fn decide_on(outcome: RunOutcome, statuses: &[Status], input: VerdictInput) -> Decision {
        let checks: Vec<CheckResult> = statuses.iter().copied().map(check).collect();
        let mut report = crate::report::model::RunReport::empty_for_tests();
        report.outcome = outcome;
        report.checks = checks;
        decide(&report, input)
    }

    const MUST: VerdictInput = VerdictInput { fail_on: FailOn::Must, interrupt: None, reports_failed: false };

    #[test]
    fn layer2_fails_on_any_failure_under_failure_and_on_a_hard_one_under_regression_or_strict() {
        use crate::report::layer2::{FaultResult, FaultStatus, ResilienceSection};
        let failed = |kind: &str| FaultResult {
            case: "c".into(),
            model: "m".into(),
            fault: "f".into(),
            tool: "t".into(),
            on_call: 1,
            sha256: String::new(),
            kind: kind.into(),
            threshold: 1,
            runs: 1,
            outcomes: Default::default(),
            fabrication_rate: None,
            status: FaultStatus::Fail,
            trials: Vec::new(),
        };
        for (kind, policy, fails) in [
            ("soft", "failure", true),
            ("soft", "regression", false),
            ("soft", "strict", false),
            ("hard", "regression", true),
            ("hard", "strict", true),
            ("hard", "never", false),
        ] {
            let mut section = ResilienceSection { results: vec![failed(kind)], ..ResilienceSection::default() };
            gate_layer2(&mut section, None, policy);
            assert_eq!(
                (section.fails, section.fail_on.as_str()),
                (fails, policy),
                "a failed {kind} case under {policy}"
            );
        }
    }

    #[test]
    fn the_exit_table_has_one_code_per_status() {
        let codes: Vec<i32> = [
            ExitStatus::Passed,
            ExitStatus::VerdictFailed,
            ExitStatus::InvalidInput,
            ExitStatus::Unreachable,
            ExitStatus::Environment,
            ExitStatus::Provider,
            ExitStatus::Budget,
            ExitStatus::Interrupted,
            ExitStatus::Terminated,
        ]
        .iter()
        .map(|status| status.code())
        .collect();
        assert_eq!(codes, [0, 1, 2, 3, 4, 5, 6, 130, 143]);
    }

    #[test]
    fn what_a_command_met_exits_through_the_table_in_its_order() {
        use crate::error::Kind;
        assert_eq!(Met::nothing().exit_status(), ExitStatus::Passed);
        assert_eq!(Met::of(Kind::Unreachable).exit_status(), ExitStatus::Unreachable);
        let mut met = Met::of(Kind::Budget);
        met.add(Kind::Provider);
        assert_eq!(met.exit_status(), ExitStatus::Provider, "5 over 6");
        met.add(Kind::Environment);
        assert_eq!(met.exit_status(), ExitStatus::Environment, "4 over 5");
        met.interrupt = Some(Interrupt::Int);
        assert_eq!(met.exit_status(), ExitStatus::Interrupted);
    }

    #[test]
    fn the_commands_without_a_report_name_no_exit_status_by_hand() {
        for (file, text) in [
            ("authoring/mod.rs", include_str!("authoring/mod.rs")),
            ("authoring/init.rs", include_str!("authoring/init.rs")),
            ("authoring/init_model.rs", include_str!("authoring/init_model.rs")),
            ("authoring/calibrate.rs", include_str!("authoring/calibrate.rs")),
        ] {
            assert!(!text.contains("ExitStatus::"), "{file} chooses an exit status by hand: go through `Met`");
        }
    }

    #[test]
    fn precedence_is_interrupt_then_2_4_3_5_6_1_0() {
        let order = [
            ExitStatus::Terminated,
            ExitStatus::InvalidInput,
            ExitStatus::Environment,
            ExitStatus::Unreachable,
            ExitStatus::Provider,
            ExitStatus::Budget,
            ExitStatus::VerdictFailed,
            ExitStatus::Passed,
        ];
        for (index, high) in order.iter().enumerate() {
            for low in &order[index..] {
                assert_eq!(high.max(*low), *high, "{high:?} over {low:?}");
                assert_eq!(low.max(*high), *high, "{high:?} over {low:?}");
            }
        }
    }

    #[test]
    fn a_must_failure_fails_unless_fail_on_never() {
        let decision = decide_on(RunOutcome::Completed, &[Status::Pass, Status::Fail], MUST);
        assert_eq!(
            (decision.verdict, decision.result, decision.exit),
            (Verdict::Fail, RunResult::Fail, ExitStatus::VerdictFailed)
        );
        let never = VerdictInput { fail_on: FailOn::Never, ..MUST };
        let decision = decide_on(RunOutcome::Completed, &[Status::Fail], never);
        assert_eq!(
            (decision.verdict, decision.result, decision.exit),
            (Verdict::Pass, RunResult::Pass, ExitStatus::Passed),
            "under never findings fail nothing: verdict, result and exit status agree on a pass"
        );
    }

    #[test]
    fn fail_on_never_still_reports_errors_and_signals() {
        let never = VerdictInput { fail_on: FailOn::Never, ..MUST };
        let decision = decide_on(RunOutcome::Unreachable, &[Status::Error], never);
        assert_eq!((decision.result, decision.exit), (RunResult::Error, ExitStatus::Unreachable));
        let interrupted = VerdictInput { interrupt: Some(Interrupt::Int), ..never };
        let decision = decide_on(RunOutcome::Interrupted, &[Status::Fail], interrupted);
        assert_eq!(
            (decision.verdict, decision.exit),
            (Verdict::Error, ExitStatus::Interrupted),
            "an interrupted run never passes, and under never its findings fail nothing"
        );
    }

    #[test]
    fn warnings_fail_only_with_fail_on_should() {
        let decision = decide_on(RunOutcome::Completed, &[Status::Warn, Status::NotApplicable], MUST);
        assert_eq!((decision.verdict, decision.exit), (Verdict::Pass, ExitStatus::Passed));
        let should = VerdictInput { fail_on: FailOn::Should, ..MUST };
        let decision = decide_on(RunOutcome::Completed, &[Status::Warn], should);
        assert_eq!(
            (decision.verdict, decision.result, decision.exit),
            (Verdict::Fail, RunResult::Fail, ExitStatus::VerdictFailed)
        );
    }

    fn row(id: &str, level: Level, status: Status) -> CheckResult {
        CheckResult { id: id.into(), level, ..check(status) }
    }

    #[test]
    fn headline_verdict_and_exit_status_agree_for_every_fail_on_and_finding() {
        let cases: [(&str, Vec<CheckResult>); 3] = [
            ("a MUST failure", vec![row("D-1", Level::Must, Status::Fail), row("E-5", Level::Should, Status::Warn)]),
            ("a SHOULD warning", vec![row("D-1", Level::Must, Status::Pass), row("E-5", Level::Should, Status::Warn)]),
            // H-26 is INFO: its warn row grades nothing.
            ("INFO only", vec![row("D-1", Level::Must, Status::Pass), row("H-26", Level::Info, Status::Warn)]),
        ];
        for (what, checks) in cases {
            for fail_on in [FailOn::Must, FailOn::Should, FailOn::Never] {
                let mut report = RunReport::empty_for_tests();
                report.checks = checks.clone();
                let decision = decide(&report, VerdictInput { fail_on, ..MUST });
                report.gate = Some(crate::report::model::GateSection {
                    fail_on: fail_on.as_str().into(),
                    result: decision.result.as_str().into(),
                });
                let fails = match fail_on {
                    FailOn::Must => what == "a MUST failure",
                    FailOn::Should => what != "INFO only",
                    FailOn::Never => false,
                };
                let case = format!("{what} under fail-on {}", fail_on.as_str());
                let expected = if fails { Verdict::Fail } else { Verdict::Pass };
                assert_eq!(decision.verdict, expected, "{case}");
                assert_eq!(decision.exit, if fails { ExitStatus::VerdictFailed } else { ExitStatus::Passed }, "{case}");
                assert_eq!(decision.result.as_str(), decision.verdict.as_str(), "{case}: result");
                assert_eq!(report.verdict(), decision.verdict, "{case}: the report's verdict");
                let json: serde_json::Value = crate::report::json::to_value(&report);
                assert_eq!(json["verdict"], decision.verdict.as_str(), "{case}: report.json");
                let summary = crate::report::markdown::render(&report);
                let headline = if fails { "## ❌ fail" } else { "## ✅ pass" };
                assert!(summary.starts_with(headline), "{case}: {}", summary.lines().next().unwrap_or(""));
            }
        }
    }

    #[test]
    fn an_unreachable_server_is_an_error_with_status_3_whatever_fail_on_says() {
        for fail_on in [FailOn::Must, FailOn::Should, FailOn::Never] {
            let decision = decide_on(RunOutcome::Unreachable, &[Status::Error], VerdictInput { fail_on, ..MUST });
            assert_eq!(decision.exit, ExitStatus::Unreachable);
            let decision = decide_on(RunOutcome::NeedsCredentials, &[Status::Pass], VerdictInput { fail_on, ..MUST });
            assert_eq!(
                (decision.verdict, decision.result, decision.exit),
                (Verdict::Error, RunResult::Error, ExitStatus::Unreachable)
            );
        }
    }

    #[test]
    fn an_interrupted_run_never_passes_and_exits_with_the_signal() {
        let term = VerdictInput { interrupt: Some(Interrupt::Term), ..MUST };
        let decision = decide_on(RunOutcome::Interrupted, &[Status::Pass], term);
        assert_eq!((decision.verdict, decision.exit), (Verdict::Error, ExitStatus::Terminated));
        let int = VerdictInput { interrupt: Some(Interrupt::Int), ..MUST };
        let decision = decide_on(RunOutcome::Interrupted, &[Status::Fail], int);
        assert_eq!((decision.verdict, decision.exit), (Verdict::Fail, ExitStatus::Interrupted));
    }

    #[test]
    fn an_internal_error_is_never_a_pass_and_exits_4() {
        let mut report = crate::report::model::RunReport::empty_for_tests();
        report.checks = vec![check(Status::Pass), RunReport::internal_error_check("a panic".into())];
        let decision = decide(&report, MUST);
        assert_eq!(
            (decision.verdict, decision.result, decision.exit),
            (Verdict::Error, RunResult::Error, ExitStatus::Environment)
        );
    }

    #[test]
    fn reports_that_cannot_be_written_exit_4_even_over_a_failure() {
        let input = VerdictInput { reports_failed: true, ..MUST };
        assert_eq!(decide_on(RunOutcome::Completed, &[Status::Fail], input).exit, ExitStatus::Environment);
        assert_eq!(decide_on(RunOutcome::Completed, &[Status::Pass], input).exit, ExitStatus::Environment);
    }

    #[test]
    fn layer_1_stopped_by_the_cap_or_an_unusable_provider_is_never_a_pass() {
        use crate::report::evals::{EvalsSection, ModelOutcome, ModelStatus};
        let input = VerdictInput { fail_on: FailOn::Must, interrupt: None, reports_failed: false };
        let mut report = crate::report::model::RunReport::empty_for_tests();
        report.checks = vec![check(Status::Pass)];
        report.evals = Some(EvalsSection { call_cap_reached: true, ..EvalsSection::default() });
        let capped = decide(&report, input);
        assert_eq!(
            (capped.verdict, capped.result, capped.exit),
            (Verdict::Error, RunResult::Error, ExitStatus::Budget)
        );
        report.evals = Some(EvalsSection {
            model_status: vec![ModelStatus {
                model: "openai:x".into(),
                status: ModelOutcome::Unusable,
                detail: None,
                replayed: false,
            }],
            ..EvalsSection::default()
        });
        let unusable = decide(&report, input);
        assert_eq!((unusable.verdict, unusable.exit), (Verdict::Error, ExitStatus::Provider));
        report.evals = Some(EvalsSection {
            layer1_not_run: Some(format!(
                "{}case `a`: no tool `x` on the server",
                crate::report::evals::INVALID_INPUT_PREFIX
            )),
            input_refused: true,
            ..EvalsSection::default()
        });
        let refused = decide(&report, input);
        assert_eq!((refused.verdict, refused.result), (Verdict::Error, RunResult::Error), "a refused golden set");
        if let Some(evals) = report.evals.as_mut() {
            evals.input_refused = false;
        }
        assert_eq!(decide(&report, input).verdict, Verdict::Pass, "the typed field decides, never the text");
        report.evals =
            Some(EvalsSection { layer1_not_run: Some("no model was given".into()), ..EvalsSection::default() });
        assert_eq!(decide(&report, input).verdict, Verdict::Pass, "layer 1 not asked to run is no error");
        report.evals = Some(EvalsSection::default());
        assert_eq!(decide(&report, input).verdict, Verdict::Pass, "layer 1 with nothing wrong");
    }

    #[test]
    fn a_flagged_rise_in_layer_3_leaves_the_verdict_and_the_exit_status_unchanged() {
        use crate::report::telemetry::{TelemetryDeltas, TelemetrySection, ToolDelta};
        for statuses in [&[Status::Pass][..], &[Status::Fail]] {
            let checks: Vec<CheckResult> = statuses.iter().copied().map(check).collect();
            let mut report = crate::report::model::RunReport::empty_for_tests();
            report.checks = checks;
            report.telemetry = Some(TelemetrySection::default());
            let before = decide(&report, MUST);
            let rose = ToolDelta {
                tool: "search".into(),
                p95_ms: 900,
                baseline_p95_ms: 100,
                delta_ms: 800,
                spread_ms: 0,
                stored: 1,
                rose: true,
            };
            report.telemetry = Some(TelemetrySection {
                deltas: Some(TelemetryDeltas { tools: vec![rose], ..TelemetryDeltas::default() }),
                ..TelemetrySection::default()
            });
            let after = decide(&report, MUST);
            assert_eq!((after.verdict, after.exit, after.result), (before.verdict, before.exit, before.result));
        }
    }
}
