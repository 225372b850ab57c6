//! The baseline a run is compared with, and the delta against it: which checks fail or warn now
//! and did not before, and which were fixed. Pure (no IO). Today the baseline is the previous
//! run of the same pull request, carried in the sticky comment. [`regression`] holds layer 1's
//! regression gate against the last green runs of the base branch (pure functions), [`store`]
//! the stored baseline, [`surface`] the tool-surface diff, [`telemetry_delta`] layer 3's deltas
//! against the stored runs (pure), [`trends`] the history of green runs the charts draw, and
//! [`apply`] wires them for layer 1's gate within a run ([`run_gate`]: the verdict cache, the
//! gate, the confirmation re-runs) and for layer 3.

pub(crate) mod regression;

pub(crate) mod apply;
pub(crate) mod run_gate;
pub(crate) mod store;
pub(crate) mod surface;
pub(crate) mod telemetry_delta;
pub(crate) mod trends;

use std::collections::{BTreeMap, BTreeSet};

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
    /// Listed element → the digest of its texts ([`crate::report::model::ServerSection::descriptions`]);
    /// carried in the comment as a short hash of the element's name → a short digest, so only
    /// the current run's names can be named. Empty when unknown.
    pub descriptions: BTreeMap<String, String>,
}

/// The first 8 hex digits of the SHA-256 of `text`: how the comment keys an element.
pub(crate) fn short_hash(text: &str) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(text.as_bytes()).iter().take(4).map(|byte| format!("{byte:02x}")).collect()
}

impl Default for State {
    /// No failing or warning id, of this version's catalogue.
    fn default() -> Self {
        State {
            failing: BTreeSet::new(),
            warning: BTreeSet::new(),
            catalogue: crate::conformance::requirements::CATALOGUE,
            descriptions: BTreeMap::new(),
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
    /// Listed elements whose texts changed since the previous run (both runs digested them).
    pub changed_descriptions: Vec<String>,
    /// Listed elements the previous run did not list (when it digested any).
    pub new_elements: Vec<String>,
}

impl State {
    /// The state of a report: its failing and warning check ids.
    pub(crate) fn of(report: &RunReport) -> Self {
        State { descriptions: report.server.descriptions.clone(), ..Self::of_checks(&report.checks) }
    }

    /// The state of a list of checks.
    /// A waived row counts under the status it had before its waiver, so that adding a waiver
    /// is not "fixed" and a waiver that expires is not a new failure.
    pub(crate) fn of_checks(checks: &[crate::report::model::CheckResult]) -> Self {
        let graded = |check: &crate::report::model::CheckResult| match (&check.status, &check.waiver) {
            (Status::Waived, Some(waiver)) => waiver.status,
            (status, _) => *status,
        };
        let ids = |status: Status| {
            checks.iter().filter(|check| graded(check) == status).map(|check| check.id.clone()).collect()
        };
        State { failing: ids(Status::Fail), warning: ids(Status::Warn), ..State::default() }
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
    // The previous state keys elements by a short hash of the name; a state of either form is
    // compared the same way.
    let before: BTreeMap<String, String> = previous
        .descriptions
        .iter()
        .map(|(element, digest)| (hashed_key(element), digest.chars().take(8).collect()))
        .collect();
    let (mut changed_descriptions, mut new_elements) = (Vec::new(), Vec::new());
    if !before.is_empty() {
        for (element, digest) in &current.descriptions {
            match before.get(&short_hash(element)) {
                Some(old) if *old != digest.chars().take(8).collect::<String>() => {
                    changed_descriptions.push(element.clone())
                }
                Some(_) => {}
                None => new_elements.push(element.clone()),
            }
        }
    }
    Delta {
        new_failures,
        fixed: minus(&previous.failing, &current.failing),
        new_warnings,
        resolved_warnings: minus(&previous.warning, &current.warning),
        new_rules,
        changed_descriptions,
        new_elements,
    }
}

/// How a state keys an element in the comment: a state read back from a comment holds `#HASH`
/// keys already; one built from a report holds names, hashed here.
pub(crate) fn hashed_key(element: &str) -> String {
    element.strip_prefix('#').map_or_else(|| short_hash(element), str::to_owned)
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
    // Element names come from the server: escaped into code spans, at most five named.
    let named = |elements: &[String]| {
        let shown: Vec<String> =
            elements.iter().take(5).map(|element| format!("`{}`", element.replace('`', "'"))).collect();
        let more = if elements.len() > 5 { format!(" and {} more", elements.len() - 5) } else { String::new() };
        format!("{}{more}", shown.join(", "))
    };
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
    if !delta.changed_descriptions.is_empty() {
        parts.push(format!(
            "🔎 {} description(s) changed, review what the model will read: {}",
            delta.changed_descriptions.len(),
            named(&delta.changed_descriptions)
        ));
    }
    if !delta.new_elements.is_empty() {
        parts.push(format!("🔎 {} newly listed: {}", delta.new_elements.len(), named(&delta.new_elements)));
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
