//! The baseline a run is compared with, and the delta against it: which checks fail or warn now
//! and did not before, and which were fixed. Pure (no IO). Today the baseline is the previous
//! run of the same pull request, carried in the sticky comment. [`gate`] holds layer 1's
//! regression gate against the last green runs of the base branch (pure functions), [`store`]
//! the stored baseline, [`surface`] the tool-surface diff, and [`apply`] wires them for
//! `evaluate::regression_gate`.

pub(crate) mod gate;

pub(crate) mod apply;
pub(crate) mod store;
pub(crate) mod surface;

use std::collections::BTreeSet;

use crate::report::model::{RunReport, Status};

/// The check ids of one run that matter for the next run's delta.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct State {
    /// Ids of checks that failed.
    pub failing: BTreeSet<String>,
    /// Ids of checks that warned.
    pub warning: BTreeSet<String>,
    /// The catalogue generation of the run ([`crate::conformance::requirements::CATALOGUE`]);
    /// 1 for a state written before generations were recorded.
    pub catalogue: u8,
}

impl Default for State {
    /// No failing or warning id, of this version's catalogue.
    fn default() -> Self {
        State {
            failing: BTreeSet::new(),
            warning: BTreeSet::new(),
            catalogue: crate::conformance::requirements::CATALOGUE,
        }
    }
}

/// What changed since the previous run of this pull request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Delta {
    /// Failing now, not before.
    pub new_failures: Vec<String>,
    /// Failing before, not now.
    pub fixed: Vec<String>,
    /// Warning now, not before.
    pub new_warnings: Vec<String>,
    /// Warning before, not now.
    pub resolved_warnings: Vec<String>,
    /// Failing or warning now, under a rule the previous run's catalogue did not have.
    pub new_rules: Vec<String>,
}

impl State {
    /// The state of a report: its failing and warning check ids.
    pub(crate) fn of(report: &RunReport) -> Self {
        Self::of_checks(&report.checks)
    }

    /// The state of a list of checks.
    pub(crate) fn of_checks(checks: &[crate::report::model::CheckResult]) -> Self {
        let ids = |status: Status| {
            checks.iter().filter(|check| check.status == status).map(|check| check.id.clone()).collect()
        };
        State {
            failing: ids(Status::Fail),
            warning: ids(Status::Warn),
            catalogue: crate::conformance::requirements::CATALOGUE,
        }
    }
}

/// What is known of the previous run.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Previous<'a> {
    /// There is none: this is the first run.
    First,
    /// It could not be read (GitHub refused or failed): nothing can be said.
    Unread,
    /// Its state.
    Run(&'a State),
}

impl<'a> From<Option<&'a State>> for Previous<'a> {
    fn from(state: Option<&'a State>) -> Self {
        state.map_or(Previous::First, Previous::Run)
    }
}

/// The delta between the previous run's state and this one's.
pub(crate) fn delta(previous: &State, current: &State) -> Delta {
    let minus = |a: &BTreeSet<String>, b: &BTreeSet<String>| a.difference(b).cloned().collect::<Vec<_>>();
    // A row the previous run's catalogue did not have is a new rule, not a regression.
    let new_rule = |id: &String| crate::conformance::requirements::since(id) > previous.catalogue;
    let (new_rules_failing, new_failures): (Vec<String>, Vec<String>) =
        minus(&current.failing, &previous.failing).into_iter().partition(new_rule);
    let (new_rules_warning, new_warnings): (Vec<String>, Vec<String>) =
        minus(&current.warning, &previous.warning).into_iter().partition(new_rule);
    let mut new_rules = new_rules_failing;
    new_rules.extend(new_rules_warning);
    Delta {
        new_failures,
        fixed: minus(&previous.failing, &current.failing),
        new_warnings,
        resolved_warnings: minus(&previous.warning, &current.warning),
        new_rules,
    }
}

/// The delta as one Markdown line.
pub(crate) fn delta_line(previous: Previous<'_>, current: &State) -> String {
    let previous = match previous {
        Previous::First => return "**Since the previous run:** this is the first run on this pull request.".to_owned(),
        Previous::Unread => {
            return "**Since the previous run:** unknown (the earlier comments could not be read).".to_owned();
        }
        Previous::Run(previous) => previous,
    };
    let delta = delta(previous, current);
    let ids = |ids: &[String]| ids.iter().map(|id| format!("`{id}`")).collect::<Vec<_>>().join(", ");
    let mut parts = Vec::new();
    if !delta.new_failures.is_empty() {
        parts.push(format!("🆕 {} new failure(s): {}", delta.new_failures.len(), ids(&delta.new_failures)));
    }
    if !delta.fixed.is_empty() {
        parts.push(format!("✅ {} fixed: {}", delta.fixed.len(), ids(&delta.fixed)));
    }
    if !delta.new_warnings.is_empty() {
        parts.push(format!("⚠️ {} new warning(s): {}", delta.new_warnings.len(), ids(&delta.new_warnings)));
    }
    if !delta.new_rules.is_empty() {
        parts.push(format!(
            "🆕 {} rule(s) new in this version, not in the previous run: {}",
            delta.new_rules.len(),
            ids(&delta.new_rules)
        ));
    }
    if !delta.resolved_warnings.is_empty() {
        parts.push(format!("{} warning(s) resolved: {}", delta.resolved_warnings.len(), ids(&delta.resolved_warnings)));
    }
    if parts.is_empty() {
        "**Since the previous run:** no change.".to_owned()
    } else {
        format!("**Since the previous run:** {}", parts.join(" · "))
    }
}
