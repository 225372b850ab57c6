//! The config file's waivers: reviewed findings that no longer fail the run (`waivers:`, and
//! `suppress:`, its older spelling for the static scan's SEC rows). Applied to layer 0's graded
//! rows, after grading: a row that failed or warned and that a waiver covers gets status
//! `waived`, its message led by the waiver's reason and the file and line it is written at
//! ([`CheckResult::waiver`] keeps them, with the status the row had). Never dropped: every
//! renderer shows a waived row as waived, with its reason.
//!
//! A waiver names a requirement id (`rule`) and, to narrow it, an `element` (a tool, prompt or
//! resource the row's message names; for a SEC row, the element as the scan names it,
//! `tools[connect]`, with an optional field `path` under it), and a `probe` (text the row's
//! message names, such as the probe `X-5` or the method `initialize`, or an evidence label). A
//! SEC row is waived when every finding it lists is covered; when only some are, it keeps its
//! status and its message names the waived ones with their reasons.
//!
//! A waiver past its `expires` day no longer waives: the row keeps its status and its message
//! says `waiver expired on DATE`. A waiver that matches no failing or warning row is a warning
//! naming its file and line ([`apply`]'s notes).

use chrono::NaiveDate;

use crate::report::model::{CheckResult, Status, WaiverNote};

/// The evidence label of a SEC row's full list of findings, one `ELEMENTPATH: evidence` line
/// each ([`crate::conformance::probes::security`] writes it).
pub(crate) const FOUND_LABEL: &str = "found";

/// The most findings [`FOUND_LABEL`] lists; a last line says how many more there are, and no
/// waiver covers it, so a row with findings not listed is never waived whole.
pub(crate) const FOUND_LINES: usize = 50;

/// One waiver of the config file, checked by [`crate::settings`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Waiver {
    /// The requirement id, upper case (`M-10`, `SEC-7`).
    pub rule: String,
    /// The element the finding is about: `tools[connect]` for a SEC row; for another row a name
    /// its message holds.
    pub element: Option<String>,
    /// Text the row's message holds, or an evidence label (a row with several probes).
    pub probe: Option<String>,
    /// SEC rows: a field path under the element (`.inputSchema.properties.password`).
    pub path: Option<String>,
    /// Why the finding is accepted here.
    pub reason: String,
    /// The last day the waiver holds.
    pub expires: Option<NaiveDate>,
    /// `http` or `stdio`: it waives rows of runs over that transport only (none: both).
    pub transport: Option<String>,
    /// Where it is written: `FILE:LINE`.
    pub source: String,
    /// `waivers` or `suppress`: the key it was written under (the wording of the row follows it).
    pub key: &'static str,
}

impl Waiver {
    /// Holds on `today` (an `expires` day is the last one it holds).
    fn active(&self, today: NaiveDate) -> bool {
        self.expires.is_none_or(|last| today <= last)
    }

    /// Covers a line `ELEMENTPATH: evidence` of a SEC row's findings.
    fn covers_line(&self, line: &str) -> bool {
        let Some(element) = &self.element else { return true };
        let Some(after) = line.strip_prefix(element.as_str()) else { return false };
        let after = match &self.path {
            None => after,
            Some(path) => match after.strip_prefix(path.as_str()) {
                Some(rest) => rest,
                None => return false,
            },
        };
        after.starts_with(':') || after.starts_with('.')
    }

    /// Covers a row other than SEC's: its message names the element and the probe (or an
    /// evidence label is the probe).
    fn covers_row(&self, check: &CheckResult) -> bool {
        self.element.as_deref().is_none_or(|element| check.message.contains(element))
            && self.probe.as_deref().is_none_or(|probe| {
                check.message.contains(probe) || check.evidence.iter().any(|evidence| evidence.label == probe)
            })
    }

    /// `waived by the config file (FILE:LINE): REASON`, or `suppressed …` for a `suppress` entry.
    fn lead(&self) -> String {
        let verb = if self.key == "suppress" { "suppressed" } else { "waived" };
        format!("{verb} by the config file ({}): {}", self.source, self.reason)
    }
}

/// The waivers that hold for a run over `transport` (`http` or `stdio`): those that name no
/// transport or name this one. A waiver of the other transport neither waives nor warns.
pub(crate) fn for_transport(waivers: &[Waiver], transport: &str) -> Vec<Waiver> {
    waivers.iter().filter(|waiver| waiver.transport.as_deref().is_none_or(|only| only == transport)).cloned().collect()
}

/// Applies `waivers` to `checks` on `today`; returns a warning for each waiver that matched no
/// failing or warning row, naming its file and line.
pub(crate) fn apply(checks: &mut [CheckResult], waivers: &[Waiver], today: NaiveDate) -> Vec<String> {
    let mut matched = vec![false; waivers.len()];
    for check in checks.iter_mut().filter(|check| matches!(check.status, Status::Fail | Status::Warn)) {
        let mine: Vec<usize> =
            (0..waivers.len()).filter(|&at| waivers[at].rule.eq_ignore_ascii_case(&check.id)).collect();
        if mine.is_empty() {
            continue;
        }
        if check.id.starts_with("SEC-") {
            apply_to_scan_row(check, waivers, &mine, today, &mut matched);
            continue;
        }
        let covering: Vec<usize> = mine.into_iter().filter(|&at| waivers[at].covers_row(check)).collect();
        for &at in &covering {
            matched[at] = true;
        }
        let (active, expired): (Vec<usize>, Vec<usize>) =
            covering.into_iter().partition(|&at| waivers[at].active(today));
        if let Some(&first) = active.first() {
            waive(check, &[&waivers[first]]);
        } else if !expired.is_empty() {
            expire(check, &expired.iter().map(|&at| &waivers[at]).collect::<Vec<_>>());
        }
    }
    waivers.iter().zip(matched).filter(|(_, matched)| !matched).map(|(waiver, _)| unmatched(waiver, checks)).collect()
}

/// A SEC row: each listed finding is covered or not; the row is waived when all are.
fn apply_to_scan_row(
    check: &mut CheckResult,
    waivers: &[Waiver],
    mine: &[usize],
    today: NaiveDate,
    matched: &mut [bool],
) {
    let lines: Vec<String> = check
        .evidence
        .iter()
        .filter(|evidence| evidence.label == FOUND_LABEL)
        .flat_map(|evidence| evidence.text.lines().map(str::to_owned).collect::<Vec<_>>())
        .collect();
    let mut waived_by: Vec<Option<usize>> = vec![None; lines.len()];
    let mut expired: Vec<usize> = Vec::new();
    for &at in mine {
        let waiver = &waivers[at];
        for (line, by) in lines.iter().zip(waived_by.iter_mut()) {
            if !waiver.covers_line(line) {
                continue;
            }
            matched[at] = true;
            if !waiver.active(today) {
                if !expired.contains(&at) {
                    expired.push(at);
                }
            } else if by.is_none() {
                *by = Some(at);
            }
        }
    }
    let used: Vec<usize> = mine.iter().copied().filter(|at| waived_by.contains(&Some(*at))).collect();
    let whole = !lines.is_empty() && waived_by.iter().all(Option::is_some);
    if whole {
        waive(check, &used.iter().map(|&at| &waivers[at]).collect::<Vec<_>>());
    } else if !used.is_empty() {
        // Some findings waived, the others still count: the row keeps its status.
        let named: Vec<String> = lines
            .iter()
            .zip(&waived_by)
            .filter_map(|(line, by)| by.map(|at| (line, at)))
            .take(5)
            .map(|(line, at)| {
                let what = line.split_once(": ").map_or(line.as_str(), |(what, _)| what);
                format!("`{what}` ({})", waivers[at].lead())
            })
            .collect();
        check.message.push_str(&format!("; waived: {}", named.join(", ")));
    }
    if !whole && !expired.is_empty() {
        expire(check, &expired.iter().map(|&at| &waivers[at]).collect::<Vec<_>>());
    }
}

/// Marks `check` waived by `by` (one waiver, or a SEC row's several).
fn waive(check: &mut CheckResult, by: &[&Waiver]) {
    let leads: Vec<String> = by.iter().map(|waiver| waiver.lead()).collect();
    check.message = format!("{} — {}", leads.join("; "), check.message);
    check.waiver = Some(WaiverNote {
        reason: by.iter().map(|waiver| waiver.reason.as_str()).collect::<Vec<_>>().join("; "),
        source: by.iter().map(|waiver| waiver.source.as_str()).collect::<Vec<_>>().join(", "),
        status: check.status,
        expires: by.iter().filter_map(|waiver| waiver.expires).min().map(|day| day.to_string()),
        expired: false,
    });
    check.status = Status::Waived;
}

/// Says on `check` that its waivers expired: the row keeps its status.
fn expire(check: &mut CheckResult, by: &[&Waiver]) {
    for waiver in by {
        if let Some(day) = waiver.expires {
            check.message.push_str(&format!(" (waiver expired on {day}: {})", waiver.source));
        }
    }
    if check.waiver.is_none()
        && let Some(first) = by.first()
    {
        check.waiver = Some(WaiverNote {
            reason: first.reason.clone(),
            source: first.source.clone(),
            status: check.status,
            expires: first.expires.map(|day| day.to_string()),
            expired: true,
        });
    }
}

/// The warning of a waiver that matched nothing, with what its row is.
fn unmatched(waiver: &Waiver, checks: &[CheckResult]) -> String {
    let narrowed = match (&waiver.element, &waiver.probe) {
        (Some(element), Some(probe)) => format!(" on `{element}` and `{probe}`"),
        (Some(element), None) => format!(" on `{element}`{}", waiver.path.as_deref().unwrap_or("")),
        (None, Some(probe)) => format!(" on `{probe}`"),
        (None, None) => String::new(),
    };
    let row = match checks.iter().find(|check| check.id.eq_ignore_ascii_case(&waiver.rule)) {
        Some(check) if matches!(check.status, Status::Fail | Status::Warn) => {
            format!("{} {} but names no finding the waiver describes", check.id, check.status.as_str())
        }
        Some(check) => format!("{} is {}", check.id, check.status.as_str().replace('_', " ")),
        None => format!("{} was not graded in this run", waiver.rule),
    };
    format!(
        "{}: the waiver of {}{narrowed} matches nothing ({row}): remove it from `{}`, or narrow it to what the report shows",
        waiver.source, waiver.rule, waiver.key
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{Evidence, Level};

    fn row(id: &str, status: Status, message: &str) -> CheckResult {
        CheckResult {
            id: id.into(),
            title: "a row".into(),
            level: Level::Must,
            status,
            message: message.into(),
            spec: String::new(),
            evidence: Vec::new(),
            duration_ms: 0,
            migration: false,
            waiver: None,
        }
    }

    #[test]
    fn a_waiver_of_one_transport_neither_waives_nor_warns_on_the_other() {
        let mut stdio_only = waiver("M-10", 3);
        stdio_only.transport = Some("stdio".into());
        let both = waiver("E-4", 4);
        let waivers = [stdio_only, both];
        let over_http = for_transport(&waivers, "http");
        assert_eq!(over_http.iter().map(|w| w.rule.as_str()).collect::<Vec<_>>(), ["E-4"]);
        let mut checks = vec![row("E-4", Status::Warn, "resources/read …")];
        assert!(apply(&mut checks, &over_http, day(TODAY)).is_empty(), "no 'matches nothing' for the stdio waiver");
        assert_eq!(for_transport(&waivers, "stdio").len(), 2);
    }

    fn waiver(rule: &str, line: u64) -> Waiver {
        Waiver {
            rule: rule.into(),
            element: None,
            probe: None,
            path: None,
            reason: "an upstream SDK's error".into(),
            expires: None,
            transport: None,
            source: format!("mcp-eval.yaml:{line}"),
            key: "waivers",
        }
    }

    fn day(text: &str) -> NaiveDate {
        NaiveDate::parse_from_str(text, "%Y-%m-%d").expect("a date")
    }

    const TODAY: &str = "2026-12-07";

    #[test]
    fn a_waived_failing_row_is_waived_with_its_reason_and_the_status_it_had() {
        let mut checks = [row("M-10", Status::Fail, "the error lacks `data.requested`")];
        let mut until = waiver("M-10", 3);
        until.expires = Some(day("2027-03-31"));
        let notes = apply(&mut checks, &[until], day(TODAY));
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(checks[0].status, Status::Waived);
        assert_eq!(
            checks[0].message,
            "waived by the config file (mcp-eval.yaml:3): an upstream SDK's error — the error lacks `data.requested`"
        );
        let note = checks[0].waiver.as_ref().expect("the waiver is kept");
        assert_eq!((note.status, note.expires.as_deref(), note.expired), (Status::Fail, Some("2027-03-31"), false));
    }

    #[test]
    fn an_expired_waiver_no_longer_waives_and_the_row_says_when_it_expired() {
        let mut checks = [row("M-10", Status::Fail, "the error lacks `data.requested`")];
        let mut past = waiver("M-10", 4);
        past.expires = Some(day("2026-01-31"));
        let notes = apply(&mut checks, &[past], day(TODAY));
        assert!(notes.is_empty(), "an expired waiver still matched its row: {notes:?}");
        assert_eq!(checks[0].status, Status::Fail);
        assert!(
            checks[0].message.ends_with("(waiver expired on 2026-01-31: mcp-eval.yaml:4)"),
            "{}",
            checks[0].message
        );
        assert!(checks[0].waiver.as_ref().is_some_and(|note| note.expired));
    }

    #[test]
    fn a_waiver_holds_through_its_expiry_day() {
        let mut checks = [row("E-4", Status::Warn, "expected -32602")];
        let mut last = waiver("E-4", 2);
        last.expires = Some(day(TODAY));
        apply(&mut checks, &[last], day(TODAY));
        assert_eq!(checks[0].status, Status::Waived);
    }

    #[test]
    fn a_waiver_that_matches_nothing_is_a_warning_naming_its_file_and_line() {
        let mut checks = [row("M-10", Status::Pass, "kept"), row("E-4", Status::Warn, "got -32603 on `prompts/get`")];
        let mut elsewhere = waiver("E-4", 9);
        elsewhere.element = Some("get_weather".into());
        let notes = apply(&mut checks, &[waiver("M-10", 7), elsewhere, waiver("K-9", 11)], day(TODAY));
        assert_eq!(
            notes,
            [
                "mcp-eval.yaml:7: the waiver of M-10 matches nothing (M-10 is pass): remove it from `waivers`, or narrow it to what the report shows",
                "mcp-eval.yaml:9: the waiver of E-4 on `get_weather` matches nothing (E-4 warn but names no finding the waiver describes): remove it from `waivers`, or narrow it to what the report shows",
                "mcp-eval.yaml:11: the waiver of K-9 matches nothing (K-9 was not graded in this run): remove it from `waivers`, or narrow it to what the report shows",
            ]
        );
        assert_eq!(checks[1].status, Status::Warn, "a waiver for another element leaves the row as it was");
    }

    #[test]
    fn element_and_probe_narrow_a_waiver_to_the_finding_they_name() {
        let mut checks = [row("M-10", Status::Fail, "It was sent by the X-5 probe to `initialize`")];
        let mut probe = waiver("M-10", 2);
        probe.probe = Some("X-5".into());
        apply(&mut checks, &[probe], day(TODAY));
        assert_eq!(checks[0].status, Status::Waived);

        let mut checks = [row("M-10", Status::Fail, "It was sent by the X-5 probe")];
        let mut other = waiver("M-10", 2);
        other.probe = Some("B-3".into());
        apply(&mut checks, &[other], day(TODAY));
        assert_eq!(checks[0].status, Status::Fail);
    }

    #[test]
    fn a_scan_row_is_waived_only_when_every_finding_it_lists_is_covered() {
        let scan_row = || {
            let mut check =
                row("SEC-7", Status::Warn, "`tools[connect].inputSchema.properties.password`: asks for a secret");
            check.evidence.push(Evidence {
                label: FOUND_LABEL.into(),
                text: "tools[connect].inputSchema.properties.password: asks for a secret\ntools[mail].inputSchema.properties.token: asks for a secret".into(),
            });
            check
        };
        let mut connect = waiver("SEC-7", 5);
        connect.element = Some("tools[connect]".into());
        connect.path = Some(".inputSchema.properties.password".into());
        let mut checks = [scan_row()];
        assert!(apply(&mut checks, std::slice::from_ref(&connect), day(TODAY)).is_empty());
        assert_eq!(checks[0].status, Status::Warn, "tools[mail] is not waived");
        assert!(checks[0].message.contains("; waived: `tools[connect].inputSchema.properties.password` (waived by the config file (mcp-eval.yaml:5): an upstream SDK's error)"), "{}", checks[0].message);

        let mut mail = waiver("SEC-7", 9);
        mail.element = Some("tools[mail]".into());
        let mut checks = [scan_row()];
        apply(&mut checks, &[connect.clone(), mail], day(TODAY));
        assert_eq!(checks[0].status, Status::Waived);
        assert_eq!(
            checks[0].waiver.as_ref().map(|note| note.source.as_str()),
            Some("mcp-eval.yaml:5, mcp-eval.yaml:9")
        );

        let mut prefix = connect;
        prefix.element = Some("tools[conn".into());
        prefix.path = None;
        let mut checks = [scan_row()];
        assert_eq!(apply(&mut checks, &[prefix], day(TODAY)).len(), 1, "an element matches whole, never by prefix");
    }
}
