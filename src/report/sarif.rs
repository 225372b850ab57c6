//! SARIF 2.1.0 (`--sarif FILE`), for GitHub code scanning (`github/codeql-action/upload-sarif`):
//! one run of the tool `mcp-eval`, one rule per requirement id the run graded (layer 0's rows
//! and the static scan's SEC rows), one result per row that failed or warned, and per row a
//! waiver of the config file covers (`suppressions`: kind `external`, the waiver's reason as
//! the justification).
//!
//! A rule carries its level (MUST → `error`, SHOULD → `warning`), a short description (the
//! title), a full one (level, title and where the requirement is stated), help text and, for a
//! row of the MCP specification, a link to its section. SEC rows are tagged `security` and carry
//! a `security-severity` (7.0 for a MUST row, 4.0 for a SHOULD row), which the Security tab ranks
//! by. A result's location is what the caller knows ([`Location`]: the workflow step that runs
//! us, the config file's line that names the server, the golden set, or the SARIF file itself;
//! `settings::sarif` always finds one for a run that writes SARIF, since code scanning refuses a
//! result without one). The server's own source is unknown to us.
//!
//! Bounds: GitHub rejects a run of more than 25,000 results or rules and a rule of more than 20
//! tags; a report holds a few hundred rows, a rule 2 tags. Messages are cut at
//! [`MAX_MESSAGE_CHARS`]. Pure: the same report and location give the same bytes.

use serde_json::{Value, json};

use super::model::{CheckResult, Level, RunReport, Status};

/// The most characters of a result's message (the report's message is bounded already; this
/// keeps a SARIF file small whatever a row says).
pub(crate) const MAX_MESSAGE_CHARS: usize = 4_000;

/// The revision whose specification the rules link to.
const SPEC_BASE: &str = "https://modelcontextprotocol.io/specification/2026-07-28/";

/// Where every result of a run points: a file of the repository (relative, `/`-separated) and a
/// 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Location {
    /// The file, relative to the repository root, with `/` separators.
    pub uri: String,
    /// The line, from 1.
    pub line: u64,
}

/// One rule of a SARIF run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rule {
    /// The id (`H-4`, `SEC-2`, `MIG-1`).
    pub id: String,
    /// `error`, `warning` or `note`.
    pub level: &'static str,
    /// A one-line description.
    pub short: String,
    /// The full description.
    pub full: String,
    /// Help text (Markdown allowed in `help.markdown`; the same text in `help.text`).
    pub help: String,
    /// A link to where the rule is explained.
    pub help_uri: Option<String>,
    /// Tags (at most 20; code scanning shows 10).
    pub tags: Vec<&'static str>,
    /// `security-severity` (0.0–10.0 as text) for security rules.
    pub security_severity: Option<&'static str>,
}

/// One result of a SARIF run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Finding {
    /// The rule's id.
    pub rule_id: String,
    /// `error`, `warning` or `note`.
    pub level: &'static str,
    /// What was found.
    pub message: String,
    /// Where (`None`: no location).
    pub location: Option<Location>,
    /// A stable fingerprint of the finding (code scanning tracks an alert across runs by it).
    pub fingerprint: String,
    /// The justification of a finding the user waived in the config file: the result carries
    /// a `suppressions` entry of kind `external` (code scanning closes the alert as dismissed).
    pub suppression: Option<String>,
}

/// The SARIF log of `rules` and `findings`, pretty JSON with a final newline; `complete`:
/// whether the run reached its verdicts (`invocations[0].executionSuccessful`: an unreachable
/// server's empty results are not a clean bill).
pub(crate) fn render(rules: &[Rule], findings: &[Finding], complete: bool) -> String {
    let index: std::collections::HashMap<&str, usize> =
        rules.iter().enumerate().map(|(at, rule)| (rule.id.as_str(), at)).collect();
    let rules_json: Vec<Value> = rules
        .iter()
        .map(|rule| {
            let mut properties = json!({"tags": rule.tags});
            if let Some(severity) = rule.security_severity {
                properties["security-severity"] = json!(severity);
            }
            let mut value = json!({
                "id": rule.id,
                "name": rule_name(&rule.id),
                "shortDescription": {"text": rule.short},
                "fullDescription": {"text": rule.full},
                "help": {"text": rule.help, "markdown": rule.help},
                "defaultConfiguration": {"level": rule.level},
                "properties": properties,
            });
            if let Some(uri) = &rule.help_uri {
                value["helpUri"] = json!(uri);
            }
            value
        })
        .collect();
    let results: Vec<Value> = findings
        .iter()
        .map(|finding| {
            let mut value = json!({
                "ruleId": finding.rule_id,
                "level": finding.level,
                "message": {"text": crate::text::clip(&finding.message, MAX_MESSAGE_CHARS)},
                "partialFingerprints": {"mcpEvalFinding/v1": finding.fingerprint},
            });
            if let Some(at) = index.get(finding.rule_id.as_str()) {
                value["ruleIndex"] = json!(at);
            }
            if let Some(justification) = &finding.suppression {
                value["suppressions"] = json!([{"kind": "external", "justification": justification}]);
            }
            if let Some(location) = &finding.location {
                value["locations"] = json!([{
                    "physicalLocation": {
                        "artifactLocation": {"uri": location.uri, "uriBaseId": "%SRCROOT%"},
                        "region": {"startLine": location.line.max(1)},
                    }
                }]);
            }
            value
        })
        .collect();
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "mcp-eval",
                "version": env!("CARGO_PKG_VERSION"),
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "rules": rules_json,
            }},
            "results": results,
            "invocations": [{"executionSuccessful": complete}],
        }],
    });
    let mut text = serde_json::to_string_pretty(&log).unwrap_or_default();
    text.push('\n');
    text
}

/// A rule's name: its id without the dash (`H4`, `SEC2`), SARIF's identifier-like name.
fn rule_name(id: &str) -> String {
    id.chars().filter(char::is_ascii_alphanumeric).collect()
}

/// The SARIF log of `report`: a rule per graded row (layer 0 and the static scan), a result per
/// row that failed or warned, each at `location` when one is known.
pub(crate) fn of_report(report: &RunReport, location: Option<&Location>) -> String {
    let mut rules: Vec<Rule> = Vec::new();
    let mut findings = Vec::new();
    for check in report.checks.iter().filter(|check| graded(check)) {
        if !rules.iter().any(|rule| rule.id == check.id) {
            rules.push(rule_of(check));
        }
        // A waived row is a result too, suppressed with the waiver's reason: never dropped.
        let waived = (check.status == Status::Waived).then_some(check.waiver.as_ref()).flatten();
        let level = match waived.map_or(check.status, |waiver| waiver.status) {
            Status::Fail => "error",
            Status::Warn => "warning",
            _ => continue,
        };
        findings.push(Finding {
            rule_id: check.id.clone(),
            level,
            message: format!("{}: {}", check.title, check.message),
            location: location.cloned(),
            fingerprint: crate::jcs::hash(&json!({"rule": check.id, "target": report.server.target})),
            suppression: waived.map(|waiver| waiver.reason.clone()),
        });
    }
    let complete = report.outcome == crate::report::model::RunOutcome::Completed;
    render(&rules, &findings, complete)
}

/// A row with a verdict on the server: not an `INTERNAL` row (ours), a migration hint, or an
/// `INFO` fact.
fn graded(check: &CheckResult) -> bool {
    check.id != "INTERNAL" && !check.migration && check.level != Level::Info
}

fn rule_of(check: &CheckResult) -> Rule {
    let security = check.id.starts_with("SEC-");
    let (level, severity) = match check.level {
        Level::Must => ("error", "7.0"),
        Level::Should | Level::Info => ("warning", "4.0"),
    };
    Rule {
        id: check.id.clone(),
        level,
        short: check.title.clone(),
        full: format!("{} ({}): {}. Stated in {}.", check.id, check.level.as_str(), check.title, check.spec),
        help: format!(
            "**{}** ({}) — {}. Stated in `{}`. mcp-eval checks it against the server under test; the finding's message says what was seen and the fix.",
            check.id,
            check.level.as_str(),
            check.title,
            check.spec
        ),
        help_uri: help_uri(&check.spec),
        tags: if security { vec!["mcp", "security"] } else { vec!["mcp", "conformance"] },
        security_severity: security.then_some(severity),
    }
}

/// The specification page (and section) of a row's source (`basic/index.mdx §Error Codes` →
/// `…/basic/index#error-codes`); `None` for a source that is not a page of the specification.
pub(crate) fn help_uri(spec: &str) -> Option<String> {
    let first = spec.split(';').next().unwrap_or(spec).trim();
    // As the report names them: a file of the specification's repository.
    let first = first.strip_prefix("docs/specification/2026-07-28/").unwrap_or(first);
    let (path, section) = match first.split_once('§') {
        Some((path, section)) => (path.trim(), Some(section.trim())),
        None => (first, None),
    };
    let page = path.strip_suffix(".mdx").unwrap_or(path);
    if page.contains('.') || page.contains(' ') {
        return None;
    }
    let page = if page.starts_with("transports/") { format!("basic/{page}") } else { page.to_owned() };
    if !["basic/", "server/", "client/"].iter().any(|root| page.starts_with(root)) {
        return None;
    }
    let anchor = section.map(|section| {
        let slug: String = section
            .to_lowercase()
            .chars()
            .filter_map(|character| match character {
                'a'..='z' | '0'..='9' | '-' => Some(character),
                ' ' | '_' => Some('-'),
                _ => None,
            })
            .collect();
        format!("#{slug}")
    });
    Some(format!("{SPEC_BASE}{page}{}", anchor.unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_source_links_to_its_page_and_section_and_others_link_nowhere() {
        assert_eq!(
            help_uri("basic/index.mdx §Error Codes").as_deref(),
            Some("https://modelcontextprotocol.io/specification/2026-07-28/basic/index#error-codes")
        );
        assert_eq!(
            help_uri("transports/streamable-http.mdx §Server Validation").as_deref(),
            Some(
                "https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#server-validation"
            )
        );
        assert_eq!(
            help_uri("server/utilities/caching.mdx; schema.json").as_deref(),
            Some("https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching")
        );
        assert_eq!(
            help_uri("docs/specification/2026-07-28/basic/index.mdx §Error Codes").as_deref(),
            Some("https://modelcontextprotocol.io/specification/2026-07-28/basic/index#error-codes"),
            "as report.json names the row's source"
        );
        assert_eq!(
            help_uri("docs/specification/2026-07-28/basic/authorization; RFC 9728").as_deref(),
            Some("https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization")
        );
        assert_eq!(help_uri("RFC 9110 §5.5"), None);
        assert_eq!(help_uri("docs/security-scan.md#sec-1 (OWASP MCP03)"), None);
        assert_eq!(help_uri("seps/2663-tasks-extension.md"), None);
    }

    #[test]
    fn a_waived_row_stays_a_result_suppressed_with_its_reason() {
        let report = crate::report::test_support::waived_report();
        let log: Value = serde_json::from_str(&of_report(&report, None)).expect("json");
        let results = log["runs"][0]["results"].as_array().cloned().unwrap_or_default();
        let waived = results.iter().find(|result| result["ruleId"] == "D-1").expect("the waived row is a result");
        assert_eq!(waived["level"], "error", "at the level it had");
        assert_eq!(waived["suppressions"], json!([{"kind": "external", "justification": "an upstream SDK's error"}]));
        let others: Vec<&Value> = results.iter().filter(|result| result["ruleId"] != "D-1").collect();
        assert!(others.iter().all(|result| result.get("suppressions").is_none()), "{others:?}");
    }

    #[test]
    fn failing_and_warning_rows_are_results_and_every_graded_row_a_rule() {
        let report = crate::report::test_support::sample_report();
        let location = Location { uri: ".github/workflows/ci.yml".into(), line: 12 };
        let log: Value = serde_json::from_str(&of_report(&report, Some(&location))).expect("json");
        let run = &log["runs"][0];
        let rules = run["tool"]["driver"]["rules"].as_array().expect("rules");
        let results = run["results"].as_array().expect("results");
        let bad = report.checks.iter().filter(|check| matches!(check.status, Status::Fail | Status::Warn)).count();
        assert_eq!(results.len(), bad);
        assert!(!results.is_empty(), "the sample report has failures");
        for result in results {
            let id = result["ruleId"].as_str().expect("a rule id");
            let at = result["ruleIndex"].as_u64().expect("an index") as usize;
            assert_eq!(rules[at]["id"], id);
            assert_eq!(result["locations"][0]["physicalLocation"]["region"]["startLine"], 12);
            assert_eq!(
                result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                ".github/workflows/ci.yml"
            );
        }
        let without: Value = serde_json::from_str(&of_report(&report, None)).expect("json");
        assert!(
            without["runs"][0]["results"].as_array().unwrap().iter().all(|result| result.get("locations").is_none())
        );
        assert_eq!(of_report(&report, None), of_report(&report, None), "pure");
    }
}
