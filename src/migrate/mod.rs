//! `mcp-eval migrate-scan [PATH]`: finds the 2025-era protocol a repository still uses — the
//! removed methods and flows, the session header, the GET stream, DELETE, `Last-Event-ID`,
//! the draft and renumbered error codes, and manifests pinning an SDK that cannot speak
//! 2026-07-28 — each at `file:line` with its replacement (docs/migration-scan.md).
//!
//! [`rules`] is the catalogue (MIG-1…MIG-15), [`scan`] the walk and the matching (on
//! [`lex`]'s strings and comments), [`manifest`] and [`versions`] the SDK pins. A use is a
//! [`scan::MigrationFinding`]; `--json FILE` writes them, notes included, for a SARIF or
//! annotation writer. The exit status goes through the one table ([`crate::verdict::Met`]):
//! findings fail only with `--fail-on-findings` (notes never), a missing path is invalid input,
//! a `--json` file that cannot be written is our environment.

pub(crate) mod lex;
pub(crate) mod manifest;
pub(crate) mod rules;
pub(crate) mod scan;
pub(crate) mod versions;

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Kind, UserError};
use crate::report::md;
use crate::verdict::{ExitStatus, Met};

use scan::{MigrationFinding, Scan};

/// The format of the `--json` file.
pub(crate) const JSON_FORMAT: u32 = 1;

/// What `migrate-scan` is asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Options {
    /// The directory or file to scan.
    pub path: PathBuf,
    /// Where to write the uses as JSON.
    pub json: Option<PathBuf>,
    /// Where to write the findings as SARIF 2.1.0 (notes left out).
    pub sarif: Option<PathBuf>,
    /// Read the files `.gitignore` leaves out too.
    pub no_ignore: bool,
    /// Findings (not notes) fail the scan: exit status 1.
    pub fail_on_findings: bool,
}

/// Runs the scan: the table on `out`, problems on `err`; returns the exit status.
pub(crate) fn command(options: &Options, out: &mut dyn Write, err: &mut dyn Write) -> ExitStatus {
    if let Err(cause) = std::fs::symlink_metadata(&options.path) {
        let shown = options.path.display();
        let error = match cause.kind() {
            std::io::ErrorKind::NotFound => UserError::new(Kind::InvalidInput, format!("`{shown}` does not exist")),
            _ => UserError::new(Kind::InvalidInput, format!("cannot read `{shown}`")).caused_by(cause),
        }
        .with_hint("give the directory or the file to scan, e.g. `mcp-eval migrate-scan .`");
        let _ = writeln!(err, "{error}");
        return Met::of(error.kind).exit_status();
    }
    let scan = scan::scan(&options.path, options.no_ignore);
    let mut met = Met::nothing();
    for problem in scan.unreadable.iter().take(10) {
        let _ = writeln!(err, "warning: migrate-scan: cannot read {problem}; skipped");
    }
    if scan.unreadable.len() > 10 {
        let _ = writeln!(err, "warning: migrate-scan: {} more could not be read", scan.unreadable.len() - 10);
    }
    let _ = out.write_all(table(&scan).as_bytes());
    if let Some(path) = &options.json {
        if let Err(error) = write_json(path, &scan) {
            let _ = writeln!(err, "{error}");
            met.add(error.kind);
        }
    }
    if let Some(path) = &options.sarif {
        if let Err(error) = crate::atomic::write_atomic(path, &sarif(&scan)).map_err(|error| {
            UserError::new(Kind::Environment, format!("cannot write --sarif `{}`", path.display())).caused_by(error)
        }) {
            let _ = writeln!(err, "{error}");
            met.add(error.kind);
        }
    }
    met.verdict_failed = options.fail_on_findings && scan.findings().next().is_some();
    met.exit_status()
}

/// The table: findings, then notes, then the counts.
pub(crate) fn table(scan: &Scan) -> String {
    let location = |found: &MigrationFinding| format!("{}:{}:{}", found.path, found.line, found.column);
    let width = scan.uses.iter().map(|found| location(found).chars().count()).max().unwrap_or(0).min(60);
    let mut text = String::new();
    for found in scan.findings() {
        let rule = rules::rule(found.rule);
        text.push_str(&format!(
            "{:width$}  {:<6}  {} → {}\n",
            location(found),
            found.rule,
            rule.what,
            rule.replacement
        ));
    }
    if scan.notes().next().is_some() {
        text.push_str("notes (never a failure):\n");
        for found in scan.notes() {
            let why = found.why.as_deref().unwrap_or_default();
            text.push_str(&format!(
                "{:width$}  {:<6}  {} ({why})\n",
                location(found),
                found.rule,
                rules::rule(found.rule).what
            ));
        }
    }
    text.push_str(&counts_line(scan));
    text.push('\n');
    text
}

/// `N finding(s) and M note(s) in F file(s); read …; skipped …`.
fn counts_line(scan: &Scan) -> String {
    let files: std::collections::BTreeSet<&str> = scan.findings().map(|found| found.path.as_str()).collect();
    let mut line = format!(
        "migrate-scan: {} finding(s) in {} file(s) and {} note(s); read {} source file(s) and {} manifest(s); skipped {} over 2 MiB and {} binary",
        scan.findings().count(),
        files.len(),
        scan.notes().count(),
        scan.sources,
        scan.manifests,
        scan.too_large,
        scan.binary,
    );
    if !scan.unreadable.is_empty() {
        line.push_str(&format!(", {} unreadable", scan.unreadable.len()));
    }
    line.push_str(&format!("; {} other file(s) not read (prose, data)", scan.other));
    let dependencies: usize = scan.dependency_dirs.values().sum();
    if dependencies > 0 {
        let kinds: Vec<String> = scan.dependency_dirs.iter().map(|(kind, count)| format!("{kind}: {count}")).collect();
        line.push_str(&format!(
            "; skipped {dependencies} installed-dependency director(ies) whatever the ignore files say ({}; name one as the path to scan it)",
            kinds.join(", ")
        ));
    }
    line
}

/// The `--json` file.
#[derive(Debug, Serialize)]
struct JsonScan<'a> {
    format: u32,
    findings: &'a [MigrationFinding],
    counts: JsonCounts,
    rules: Vec<JsonRule>,
}

#[derive(Debug, Serialize)]
struct JsonCounts {
    findings: usize,
    notes: usize,
    sources: usize,
    manifests: usize,
    other: usize,
    too_large: usize,
    binary: usize,
    unreadable: usize,
    dependency_dirs: usize,
}

#[derive(Debug, Serialize)]
struct JsonRule {
    id: &'static str,
    what: &'static str,
    replacement: &'static str,
    spec: &'static str,
}

/// The scan as the `--json` file holds it (docs/migration-scan.md).
pub(crate) fn json(scan: &Scan) -> String {
    let document = JsonScan {
        format: JSON_FORMAT,
        findings: &scan.uses,
        counts: JsonCounts {
            findings: scan.findings().count(),
            notes: scan.notes().count(),
            sources: scan.sources,
            manifests: scan.manifests,
            other: scan.other,
            too_large: scan.too_large,
            binary: scan.binary,
            unreadable: scan.unreadable.len(),
            dependency_dirs: scan.dependency_dirs.values().sum(),
        },
        rules: rules::RULES
            .iter()
            .map(|rule| JsonRule { id: rule.id, what: rule.what, replacement: rule.replacement, spec: rule.spec })
            .collect(),
    };
    let mut text = serde_json::to_string_pretty(&document).unwrap_or_default();
    text.push('\n');
    text
}

/// The most findings the job summary's table lists (the rest are counted).
pub(crate) const SUMMARY_ROWS: usize = 50;

/// The scan as a section of the job summary: the counts, then a table of the findings (at most
/// [`SUMMARY_ROWS`]) with each one's location, rule, what and replacement. Cells are escaped by
/// the renderers' own helpers (`report::md`): a repository's file names cannot break the table
/// or the page, and the rules' code spans stay code.
pub(crate) fn summary(scan: &Scan) -> String {
    let findings: Vec<&MigrationFinding> = scan.findings().collect();
    let notes = scan.notes().count();
    let mut text = String::from("\n### 🧭 Migration to MCP 2026-07-28 (`mcp-eval migrate-scan`)\n\n");
    if findings.is_empty() {
        text.push_str(&format!("No 2025-era protocol found ({notes} note(s): dual-era code or comments).\n"));
        return text;
    }
    text.push_str(&format!(
        "{} finding(s) and {notes} note(s) (dual-era code or comments, never a failure); each is also an annotation.\n\n| Where | Rule | What | Instead |\n|---|---|---|---|\n",
        findings.len()
    ));
    for found in findings.iter().take(SUMMARY_ROWS) {
        let rule = rules::rule(found.rule);
        text.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            md::table_code(&format!("{}:{}", found.path, found.line)),
            found.rule,
            md::message(rule.what),
            md::message(rule.replacement)
        ));
    }
    if findings.len() > SUMMARY_ROWS {
        text.push_str(&format!(
            "\n…and {} more: run `mcp-eval migrate-scan` for all of them.\n",
            findings.len() - SUMMARY_ROWS
        ));
    }
    text
}

/// The findings (not the notes) as SARIF 2.1.0: a rule per `MIG-N` of the catalogue (level
/// `warning`; the replacement and the specification's section in its help), a result per
/// finding at its file and line (relative to the scanned directory, as the table names them).
pub(crate) fn sarif(scan: &Scan) -> String {
    use crate::report::sarif::{Finding, Location, Rule};
    let rules: Vec<Rule> = rules::RULES
        .iter()
        .map(|rule| Rule {
            id: rule.id.to_owned(),
            level: "warning",
            short: format!("2025-era protocol: {}", rule.what),
            full: format!("{} was removed by MCP 2026-07-28; instead: {}. Stated in {}.", rule.what, rule.replacement, rule.spec),
            help: format!(
                "**{}**: {} was removed by MCP 2026-07-28.\n\nInstead: {}.\n\nStated in `{}` (see docs/migration-scan.md).",
                rule.id, rule.what, rule.replacement, rule.spec
            ),
            help_uri: crate::report::sarif::help_uri(rule.spec),
            tags: vec!["mcp", "migration"],
            security_severity: None,
        })
        .collect();
    let findings: Vec<Finding> = scan
        .findings()
        .map(|found| Finding {
            rule_id: found.rule.to_owned(),
            level: "warning",
            message: format!("{} (`{}`) → {}", rules::rule(found.rule).what, found.text, found.replacement),
            location: Some(Location { uri: found.path.clone(), line: u64::try_from(found.line).unwrap_or(1) }),
            fingerprint: crate::jcs::hash(
                &serde_json::json!({"rule": found.rule, "path": found.path, "text": found.text}),
            ),
            suppression: None,
        })
        .collect();
    crate::report::sarif::render(&rules, &findings, true)
}

fn write_json(path: &Path, scan: &Scan) -> Result<(), UserError> {
    crate::atomic::write_atomic(path, &json(scan)).map_err(|error| {
        UserError::new(Kind::Environment, format!("cannot write --json `{}`", path.display())).caused_by(error)
    })
}

#[cfg(test)]
mod tests;
