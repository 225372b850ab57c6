//! The `summary.md` renderer: what a person reads in a pull request comment or a GitHub Actions
//! job summary.
//!
//! Order: a title with the verdict, the server under test, a counts line, then **Failures**
//! (with spec source and folded evidence), **Warnings**, **Errors** (checks mcp-eval could not
//! bring to a verdict), and a folded table of every check.
//!
//! Server-provided text is untrusted: outside code it is escaped so it cannot open HTML or
//! markdown structure (`<`, `>`, `&` become entities; markdown punctuation is backslash-escaped;
//! newlines become spaces), and inside code blocks the fence is longer than any backtick run in
//! the text. The whole output stays under [`MAX_CHARS`]; long lists end with a line pointing to
//! `report.json`.

use std::fmt::Write as _;

use super::model::{CheckResult, RunOutcome, RunReport, Status, Verdict};

/// Upper bound of the rendered summary, in bytes (so also in characters). GitHub caps a
/// comment at 65,536 characters.
pub const MAX_CHARS: usize = 60_000;

/// Bytes kept free while adding failures, warnings and errors, so that the check table's
/// opening, its truncation note, its closing and the footer always fit.
const TAIL_RESERVE: usize = 3_000;
/// Longest message shown in the Failures / Warnings / Errors sections, in characters.
const MESSAGE_CHARS: usize = 2_000;
/// Longest message shown in the check table, in characters.
const CELL_CHARS: usize = 160;
/// Longest single evidence excerpt shown, in characters.
const EVIDENCE_CHARS: usize = 4_000;
/// Most evidence characters shown for one check, all excerpts together.
const EVIDENCE_TOTAL_CHARS: usize = 8_000;
/// Longest short field (target, server name, era evidence), in characters.
const FIELD_CHARS: usize = 300;
/// Most `supportedVersions` entries listed.
const MAX_VERSIONS: usize = 20;
/// Longest stderr tail shown for a run that did not complete, in characters.
const STDERR_CHARS: usize = 4_000;

/// Renders `summary.md`.
pub fn render(report: &RunReport) -> String {
    let mut out = String::new();
    write_header(report, &mut out);

    let sections = [
        (Status::Fail, "❌ Failures", "failures", ""),
        (Status::Warn, "⚠️ Warnings", "warnings", ""),
        (
            Status::Error,
            "🛠️ Errors",
            "errors",
            "\nThese checks have no verdict: the server could not be reached or started (is it running, on this URL or command?), or mcp-eval itself hit a problem.\n",
        ),
    ];
    for (status, heading, noun, intro) in sections {
        let checks: Vec<&CheckResult> = report.checks.iter().filter(|c| c.status == status).collect();
        if checks.is_empty() {
            continue;
        }
        let _ = write!(out, "\n### {heading} ({})\n{intro}", checks.len());
        for (shown, check) in checks.iter().enumerate() {
            let item = render_item(check);
            if out.len() + item.len() + TAIL_RESERVE > MAX_CHARS {
                let _ =
                    write!(out, "\n_…and {} more {noun} not shown here: see `report.json`._\n", checks.len() - shown);
                break;
            }
            out.push_str(&item);
        }
    }
    // The migration list of a legacy server: the 2026-07-28 requirements it would not meet.
    let migration: Vec<&CheckResult> = report.checks.iter().filter(|check| check.migration).collect();
    if !migration.is_empty() {
        let _ = write!(
            out,
            "\n### 🧭 2026-07-28 migration ({})\n\nThis server would not meet these 2026-07-28 requirements (not graded: the server speaks an earlier revision).\n\n<details><summary>the list</summary>\n\n",
            migration.len()
        );
        for check in migration {
            let line = format!(
                "- **{}** {} — {}\n",
                escape(&truncate(&check.id, 64)),
                escape(&truncate(&check.title, 80)),
                message(&truncate(
                    check.message.trim_start_matches("2026-07-28 migration: would not meet this requirement: "),
                    CELL_CHARS
                ))
            );
            if out.len() + line.len() + TAIL_RESERVE > MAX_CHARS {
                out.push_str("- …see `report.json` for the rest\n");
                break;
            }
            out.push_str(&line);
        }
        out.push_str("\n</details>\n");
    }

    write_table(report, &mut out);
    write_footer(report, &mut out);
    debug_assert!(out.len() <= MAX_CHARS, "summary.md is {} bytes", out.len());
    out
}

/// Title, server section, counts line and outcome detail.
fn write_header(report: &RunReport, out: &mut String) {
    let counts = report.counts();
    let title = match (report.outcome, report.verdict()) {
        (RunOutcome::Unreachable, _) => "⚠️ error: server unreachable".to_owned(),
        (RunOutcome::NeedsCredentials, _) => "⚠️ error: the server requires credentials".to_owned(),
        (RunOutcome::Interrupted, Verdict::Fail) => {
            format!("⚠️ interrupted, {} failed so far", plural(counts.fail, "check"))
        }
        (RunOutcome::Interrupted, _) => "⚠️ interrupted".to_owned(),
        (RunOutcome::Completed, Verdict::Fail) => {
            format!("❌ fail: {} failed", plural(counts.fail, "check"))
        }
        (RunOutcome::Completed, _) => "✅ pass".to_owned(),
    };
    let legacy = report.server.era.as_deref().is_some_and(|era| era != report.spec_revision);
    if legacy {
        // A legacy server passes or fails on what applies to its own revision; say so in the
        // headline rather than suggest it meets the current one.
        let era = escape(&truncate(report.server.era.as_deref().unwrap_or(""), FIELD_CHARS));
        let _ = writeln!(
            out,
            "## {title} — legacy MCP {era} server (graded on what applies to {era}; 2026-07-28 migration list below)\n"
        );
    } else {
        let _ =
            writeln!(out, "## {title} — MCP {} conformance\n", escape(&truncate(&report.spec_revision, FIELD_CHARS)));
    }

    if report.gate_overrides_verdict() {
        if let Some(gate) = &report.gate {
            let why = match gate.fail_on.as_str() {
                "should" => format!("{} also fail the run", plural(counts.warn, "warning")),
                "never" => "findings never fail the run".to_owned(),
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "**Gate:** with `fail-on: {}` the run is a **{}**: {why}.\n",
                escape(&truncate(&gate.fail_on, 16)),
                escape(&truncate(&gate.result, 16))
            );
        }
    }
    let server = &report.server;
    let _ = writeln!(out, "- **Target:** {}", code_span(&truncate(&server.target, FIELD_CHARS)));
    let era = match server.era.as_deref() {
        Some(era) => code_span(&truncate(era, FIELD_CHARS)),
        None => "unknown".to_owned(),
    };
    let _ = writeln!(out, "- **Transport:** {} · **Era:** {era}", escape(&truncate(&server.transport, FIELD_CHARS)));
    if let Some(evidence) = &server.era_evidence {
        let _ = writeln!(out, "- **Era evidence:** {}", message(&truncate(evidence, FIELD_CHARS)));
    }
    if let Some(info) = &server.server_info {
        let _ = writeln!(out, "- **Server:** {}", server_info_text(info));
    }
    if !server.supported_versions.is_empty() {
        let mut versions: Vec<String> =
            server.supported_versions.iter().take(MAX_VERSIONS).map(|v| code_span(&truncate(v, 64))).collect();
        if server.supported_versions.len() > MAX_VERSIONS {
            versions.push(format!("…{} more", server.supported_versions.len() - MAX_VERSIONS));
        }
        let _ = writeln!(out, "- **Supported versions:** {}", versions.join(", "));
    }
    if let Some(serde_json::Value::Object(caps)) = &server.capabilities {
        let mut names: Vec<String> = caps.keys().take(MAX_VERSIONS).map(|k| code_span(&truncate(k, 64))).collect();
        if caps.len() > MAX_VERSIONS {
            names.push(format!("…{} more", caps.len() - MAX_VERSIONS));
        }
        let list = if names.is_empty() { "none".to_owned() } else { names.join(", ") };
        let _ = writeln!(out, "- **Capabilities:** {list}");
    }

    let _ = writeln!(
        out,
        "\n**Checks:** {} pass · {} fail · {} warn · {} not applicable · {} error · {} in {}",
        counts.pass,
        counts.fail,
        counts.warn,
        counts.not_applicable,
        counts.error,
        plural(report.checks.len(), "check"),
        duration(report.duration_ms),
    );

    if report.outcome != RunOutcome::Completed {
        let what = match report.outcome {
            RunOutcome::Unreachable => "The server could not be reached or started; no check ran.",
            RunOutcome::NeedsCredentials => {
                "The server refuses every request without credentials: the authorization rows were graded without any; pass `--header 'Authorization: …'` (input `server-headers`) to run the rest."
            }
            _ => "The run was interrupted; the checks below are those finished before it.",
        };
        let _ = writeln!(out, "\n> **{what}**");
        if let Some(detail) = &report.outcome_detail {
            let _ = writeln!(out, "> Detail: {}", escape(&truncate(detail, MESSAGE_CHARS)));
        }
        if let Some(tail) = &report.server.stderr_tail {
            let _ = write!(
                out,
                "\n<details><summary>server stderr (last lines)</summary>\n\n{}\n</details>\n",
                code_block(&truncate_start(tail, STDERR_CHARS))
            );
        }
    }
}

/// One entry of the Failures / Warnings / Errors sections.
fn render_item(check: &CheckResult) -> String {
    let mut item = String::new();
    let _ = writeln!(
        item,
        "\n**{}** {} — {}\n",
        escape(&truncate(&check.id, 64)),
        escape(&truncate(&check.title, FIELD_CHARS)),
        message(&truncate(&check.message, MESSAGE_CHARS)),
    );
    let _ = writeln!(item, "{} · spec: {}", check.level.as_str(), spec_reference(&check.spec));
    if !check.evidence.is_empty() {
        item.push_str("\n<details><summary>evidence</summary>\n");
        let mut budget = EVIDENCE_TOTAL_CHARS;
        for (index, evidence) in check.evidence.iter().enumerate() {
            if budget == 0 {
                let _ = writeln!(item, "\n_…{} more excerpts in `report.json`._", check.evidence.len() - index);
                break;
            }
            let limit = budget.min(EVIDENCE_CHARS);
            let text = truncate(&evidence.text, limit);
            budget -= text.chars().count().min(budget);
            let _ = write!(item, "\n{}:\n\n{}", escape(&truncate(&evidence.label, 64)), code_block(&text));
        }
        item.push_str("\n</details>\n");
    }
    item
}

/// The folded table of every check, bounded by the space left.
fn write_table(report: &RunReport, out: &mut String) {
    // An unreachable run has only its `CONNECT` row, already shown under Errors.
    if report.checks.is_empty() || report.outcome == RunOutcome::Unreachable {
        return;
    }
    let _ = write!(
        out,
        "\n<details><summary>All checks ({})</summary>\n\n| ID | Title | Level | Status | Message |\n| --- | --- | --- | --- | --- |\n",
        report.checks.len()
    );
    // Room for the truncation note, the closing tag and the footer.
    let reserve = 1_000;
    for (shown, check) in report.checks.iter().enumerate() {
        let row = format!(
            "| {} | {} | {} | {} | {} |\n",
            escape(&truncate(&check.id, 64)),
            escape(&truncate(&check.title, 80)),
            check.level.as_str(),
            status_label(check.status),
            message(&truncate(&check.message, CELL_CHARS)).replace('|', "\\|").replace("\\\\|", "\\|"),
        );
        if out.len() + row.len() + reserve > MAX_CHARS {
            let _ = write!(
                out,
                "\n_…and {} more checks not shown here: see `report.json`._\n",
                report.checks.len() - shown
            );
            break;
        }
        out.push_str(&row);
    }
    out.push_str("\n</details>\n");
}

/// The spec source as a link a reader can open when it is a page of the published specification
/// (`docs/specification/REV/PATH.mdx[#anchor]` → `https://modelcontextprotocol.io/specification/REV/PATH[#anchor]`),
/// as a code span otherwise.
fn spec_reference(spec: &str) -> String {
    let page = spec.strip_prefix("docs/specification/").and_then(|rest| {
        let (path, anchor) = rest.split_once('#').map_or((rest, None), |(path, anchor)| (path, Some(anchor)));
        let path = path.strip_suffix(".mdx")?;
        let safe = |text: &str| text.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '-' | '_' | '.'));
        (safe(path) && anchor.is_none_or(safe)).then(|| {
            let path = path.strip_suffix("/index").unwrap_or(path);
            format!(
                "https://modelcontextprotocol.io/specification/{path}{}",
                anchor.map(|a| format!("#{a}")).unwrap_or_default()
            )
        })
    });
    match page {
        // The text is checked above: letters, digits, `/-_.#` only, nothing to escape.
        Some(url) => format!("[{spec}]({url})"),
        None => code_span(&truncate(spec, FIELD_CHARS)),
    }
}

/// Closing line: where the full data is, and which tool wrote it.
fn write_footer(report: &RunReport, out: &mut String) {
    let _ = writeln!(
        out,
        "\n<sub>{} · started {} · full details in `report.json` and `junit.xml`</sub>",
        escape(&truncate(&report.tool, 100)),
        report.started_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    );
}

/// `name version` (and title) from a serverInfo object, escaped; other shapes as compact JSON.
fn server_info_text(info: &serde_json::Value) -> String {
    let field = |key: &str| info.get(key).and_then(serde_json::Value::as_str);
    match (field("name"), field("version")) {
        (Some(name), version) => {
            let mut text = escape(&truncate(name, FIELD_CHARS));
            if let Some(version) = version {
                text.push(' ');
                text.push_str(&escape(&truncate(version, 64)));
            }
            if let Some(title) = field("title") {
                text.push_str(" (");
                text.push_str(&escape(&truncate(title, FIELD_CHARS)));
                text.push(')');
            }
            text
        }
        _ => code_span(&truncate(&info.to_string(), FIELD_CHARS)),
    }
}

/// The status column of the check table.
fn status_label(status: Status) -> &'static str {
    match status {
        Status::Pass => "✅ pass",
        Status::Fail => "❌ fail",
        Status::Warn => "⚠️ warn",
        Status::NotApplicable => "➖ not applicable",
        Status::Error => "🛠️ error",
    }
}

/// `1 check`, `2 checks`.
fn plural(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// A duration in milliseconds, for people: `850 ms`, `2.5 s`.
fn duration(ms: u64) -> String {
    if ms < 1_000 { format!("{ms} ms") } else { format!("{}.{} s", ms / 1_000, (ms % 1_000) / 100) }
}

/// The first `max` characters of `text`, with `…` when something was cut.
fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((cut, _)) => {
            let mut kept = text[..cut].to_owned();
            kept.push('…');
            kept
        }
    }
}

/// The last `max` characters of `text`, with `…` in front when something was cut.
fn truncate_start(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let skip = count - max;
    let start = text.char_indices().nth(skip).map_or(text.len(), |(i, _)| i);
    format!("…{}", &text[start..])
}

/// Escapes untrusted text for use inline (a paragraph, a list item or a table cell): no HTML,
/// no markdown structure, no line breaks, no control characters.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\r' | '\n' | '\t' => out.push(' '),
            // Inline markup; `#` and `!` too, for safety. Escaped text never starts a line, so
            // line-start markers (`-`, `+`, `1.`) need no escaping.
            '\\' | '`' | '*' | '_' | '[' | ']' | '{' | '}' | '|' | '#' | '~' | '!' | '$' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Escapes a message of ours, keeping its balanced single-backtick spans as code spans (our
/// messages quote names and values that way); anything unbalanced is escaped like any text.
fn message(text: &str) -> String {
    let parts: Vec<&str> = text.split('`').collect();
    if parts.len() < 3 || parts.len() % 2 == 0 {
        return escape(text);
    }
    parts
        .iter()
        .enumerate()
        .map(|(index, part)| {
            if index % 2 == 0 {
                escape(part)
            } else if part.is_empty() {
                String::new()
            } else {
                code_span(part)
            }
        })
        .collect()
}

/// An inline code span that no backtick in `text` can close early.
fn code_span(text: &str) -> String {
    let text: String = text
        .chars()
        .map(|c| if matches!(c, '\r' | '\n' | '\t') { ' ' } else { c })
        .filter(|c| !c.is_control())
        .collect();
    if text.trim().is_empty() {
        return "(empty)".to_owned();
    }
    let fence = "`".repeat(longest_backtick_run(&text) + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') { " " } else { "" };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// A fenced code block whose fence is longer than any backtick run in `text`, ending with a
/// newline.
fn code_block(text: &str) -> String {
    let text: String = text
        .chars()
        .map(|c| if c == '\r' { '\n' } else { c })
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
        .collect();
    let fence = "`".repeat((longest_backtick_run(&text) + 1).max(3));
    let newline = if text.ends_with('\n') { "" } else { "\n" };
    format!("{fence}\n{text}{newline}{fence}\n")
}

/// The length of the longest run of consecutive backticks in `text`.
fn longest_backtick_run(text: &str) -> usize {
    let (mut longest, mut run) = (0, 0);
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    longest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{Evidence, Level};
    use crate::report::test_support::{check, sample_report, unreachable_report};

    const HOSTILE: &str = "</details><script>x</script> | `` ``` ``";

    #[test]
    fn failures_before_warnings_before_table() {
        let md = render(&sample_report());
        assert!(md.starts_with("## ❌ fail: 1 check failed"));
        let failures = md.find("### ❌ Failures (1)").unwrap();
        let warnings = md.find("### ⚠️ Warnings (1)").unwrap();
        let errors = md.find("### 🛠️ Errors").unwrap();
        let table = md.find("<details><summary>All checks (5)</summary>").unwrap();
        assert!(failures < warnings && warnings < errors && errors < table);
        assert!(md.contains("**D-1** server/discover answers — server/discover returned"));
        assert!(md.contains(
            "spec: [docs/specification/2026-07-28/basic/lifecycle.mdx#discovery](https://modelcontextprotocol.io/specification/2026-07-28/basic/lifecycle#discovery)"
        ), "{md}");
        assert!(md.contains("<details><summary>evidence</summary>"));
        assert!(md.contains("```\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\"}\n```"));
        assert!(md.contains("- **Target:** `http://127.0.0.1:8080/mcp`"));
        assert!(md.contains("**Era:** `2026-07-28`"));
        assert!(md.contains("- **Server:** demo-server 1.2.3"));
        assert!(md.contains("- **Supported versions:** `2026-07-28`"));
        assert!(md.contains("**Checks:** 1 pass · 1 fail · 1 warn · 1 not applicable · 1 error"));
        assert!(md.contains(
            "| T-2 | tools/call errors | MUST | ➖ not applicable | the server advertises no tools capability |"
        ));
        assert_eq!(md.matches("<details>").count(), md.matches("</details>").count());
    }

    #[test]
    fn a_gate_that_overrides_the_verdict_is_said_under_the_title() {
        let mut report = sample_report();
        report.checks.retain(|c| c.status != Status::Fail);
        report.gate = Some(crate::report::model::GateSection { fail_on: "should".into(), result: "fail".into() });
        let md = render(&report);
        assert!(md.starts_with("## ✅ pass"), "{md}");
        assert!(
            md.contains("**Gate:** with `fail-on: should` the run is a **fail**: 1 warning also fail the run."),
            "{md}"
        );
        report.gate = Some(crate::report::model::GateSection { fail_on: "must".into(), result: "pass".into() });
        assert!(!render(&report).contains("**Gate:**"), "no line when the gate agrees");
    }

    #[test]
    fn pass_title() {
        let mut report = sample_report();
        report.checks.retain(|c| c.status != Status::Fail);
        let md = render(&report);
        assert!(md.starts_with("## ✅ pass"));
        assert!(!md.contains("### ❌ Failures"));
    }

    #[test]
    fn hostile_text_is_escaped() {
        let mut report = sample_report();
        let mut bad = check("D-2", HOSTILE, Level::Must, Status::Fail, HOSTILE);
        bad.evidence.push(Evidence { label: HOSTILE.to_owned(), text: format!("{HOSTILE}\n````` five\n") });
        bad.spec = HOSTILE.to_owned();
        report.checks.push(bad);
        report.server.target = HOSTILE.to_owned();
        report.server.server_info = Some(serde_json::json!({"name": HOSTILE, "version": "1\n# x"}));
        report.server.supported_versions.push(HOSTILE.to_owned());
        let md = render(&report);

        // Outside code blocks, no raw angle brackets from server text survive.
        let outside = strip_code_blocks(&md);
        assert!(!outside.contains("<script>"));
        assert!(!outside.contains("</details><script>"));
        assert_eq!(outside.matches("<details>").count(), outside.matches("</details>").count());
        assert!(md.contains("&lt;/details&gt;&lt;script&gt;x&lt;/script&gt; \\| \\`\\` \\`\\`\\` \\`\\`"));
        // The evidence fence is longer than the five-backtick run inside.
        assert!(md.contains("``````\n</details><script>x</script> | `` ``` ``\n````` five\n``````\n"));
        // Code spans use a longer backtick run and padding.
        assert!(md.contains("spec: ```` </details><script>x</script> | `` ``` `` ````"));
        // The table row stays one row with five cells.
        let row = md.lines().find(|l| l.starts_with("| D-2 ")).unwrap();
        let unescaped_pipes =
            row.char_indices().filter(|&(i, c)| c == '|' && (i == 0 || row.as_bytes()[i - 1] != b'\\')).count();
        assert_eq!(unescaped_pipes, 6, "{row}");
        // A newline in server text cannot start a heading.
        assert!(!md.lines().any(|l| l.starts_with("# x")));
    }

    /// The text outside fenced code blocks and code spans (good enough for the tests' inputs).
    fn strip_code_blocks(md: &str) -> String {
        let mut out = String::new();
        let mut fence: Option<String> = None;
        for line in md.lines() {
            let ticks: String = line.chars().take_while(|&c| c == '`').collect();
            match &fence {
                Some(open) if ticks.len() >= open.len() && line.trim_end() == ticks => fence = None,
                Some(_) => {}
                None if ticks.len() >= 3 && line.trim_end() == ticks => fence = Some(ticks),
                None => {
                    // Drop code spans: `...` with any run length.
                    let mut rest = line;
                    while let Some(start) = rest.find('`') {
                        out.push_str(&rest[..start]);
                        let run = rest[start..].chars().take_while(|&c| c == '`').count();
                        let after = &rest[start + run..];
                        let close = "`".repeat(run);
                        match after.find(&close) {
                            Some(end) => rest = &after[end + run..],
                            None => {
                                rest = after;
                            }
                        }
                    }
                    out.push_str(rest);
                    out.push('\n');
                }
            }
        }
        out
    }

    #[test]
    fn unreachable_summary() {
        let mut report = unreachable_report();
        report.server.stderr_tail = Some("Error: EADDRINUSE\n".to_owned());
        let md = render(&report);
        assert!(md.starts_with("## ⚠️ error: server unreachable"));
        assert!(md.contains("The server could not be reached or started; no check ran."));
        assert!(md.contains("connection refused"));
        assert!(md.contains("**Era:** unknown"));
        assert!(md.contains("```\nError: EADDRINUSE\n```"));
        assert!(md.contains("### 🛠️ Errors (1)"), "the CONNECT row: {md}");
        assert!(!md.contains("All checks"));
    }

    #[test]
    fn interrupted_title() {
        let mut report = sample_report();
        report.outcome = RunOutcome::Interrupted;
        assert!(render(&report).starts_with("## ⚠️ interrupted, 1 check failed so far"));
    }

    #[test]
    fn huge_report_stays_under_the_limit() {
        let mut report = sample_report();
        let long = "x`y<".repeat(3_000);
        for i in 0..500 {
            let status = if i % 2 == 0 { Status::Fail } else { Status::Warn };
            let mut c = check(&format!("Z-{i}"), &long, Level::Must, status, &long);
            c.evidence = vec![Evidence { label: "response".to_owned(), text: long.clone() }; 5];
            report.checks.push(c);
        }
        report.server.supported_versions = vec![long.clone(); 100];
        // Worst case for the header: every free-text field long and expanding when escaped.
        let wide = "<𝄞".repeat(50_000);
        report.outcome = RunOutcome::Interrupted;
        report.outcome_detail = Some(wide.clone());
        report.tool = wide.clone();
        report.server.target = wide.clone();
        report.server.era = Some(wide.clone());
        report.server.era_evidence = Some(wide.clone());
        report.server.stderr_tail = Some(wide.clone());
        report.server.server_info = Some(serde_json::json!({"name": wide, "version": wide, "title": wide}));
        let md = render(&report);
        assert!(md.len() <= MAX_CHARS, "{} bytes", md.len());
        assert!(md.contains("more failures not shown here: see `report.json`"));
        assert!(md.contains("more checks not shown here: see `report.json`"));
        assert_eq!(md.matches("<details>").count(), md.matches("</details>").count());
        assert!(md.contains("<sub>&lt;𝄞"));
    }

    #[test]
    fn helpers() {
        assert_eq!(truncate("abcdef", 3), "abc…");
        assert_eq!(truncate("abc", 3), "abc");
        assert_eq!(truncate_start("abcdef", 2), "…ef");
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`a"), "`` `a ``");
        assert_eq!(code_block("x"), "```\nx\n```\n");
        assert_eq!(duration(999), "999 ms");
        assert_eq!(duration(2_500), "2.5 s");
        assert_eq!(escape("a|b\nc"), "a\\|b c");
        assert_eq!(message("got `x|y` and `<b>`"), "got `x|y` and `<b>`");
        assert_eq!(message("odd ` tick <b>"), "odd \\` tick &lt;b&gt;");
    }
}
