//! The `summary.md` renderer: what a person reads in a pull request comment or a GitHub Actions
//! job summary.
//!
//! Order: a title with the verdict, the server under test, a counts line, then **Failures**
//! (with spec source and folded evidence), **Warnings**, **Errors** (checks mcp-eval could not
//! bring to a verdict), and a folded table of every check. With layer 1, a section on the golden
//! set follows: a cases × models table, the metrics per model and one line per failing case ×
//! model (its one-line reason only: never a tool's result or the model's answer).
//!
//! Server-provided text is untrusted: outside code it is escaped so it cannot open HTML or
//! markdown structure (`<`, `>`, `&` become entities; markdown punctuation is backslash-escaped;
//! newlines become spaces), and inside code blocks the fence is longer than any backtick run in
//! the text. The whole output stays under [`MAX_CHARS`]; long lists end with a line pointing to
//! `report.json`. Long text is shortened by [`crate::text::clip`], at a word boundary and never
//! inside a code span; evidence in a code block is raw data and is cut at any character.

use std::fmt::Write as _;

use super::evals::{EvalResult, EvalStatus, EvalsSection, Layer1GateSection, ModelOutcome, Rate};
use super::md::{code_block, code_span, escape, message, table_code};
use super::model::{CheckResult, Level, RunOutcome, RunReport, ServerSection, Status, Verdict};
use crate::text::clip;

/// Upper bound of the rendered summary, in bytes (so also in characters). GitHub caps a
/// comment at 65,536 characters.
pub const MAX_CHARS: usize = 60_000;

/// Bytes kept free while adding failures, warnings and errors, so that the check table's
/// opening, its truncation note, its closing and the footer always fit.
const TAIL_RESERVE: usize = 3_000;
/// Bytes kept free after layer 3's deltas and trends: the budget line, the note that they did
/// not fit, the footer.
const LAYER3_TAIL: usize = 1_000;
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
/// Upper bound of the layer-1 section, in bytes.
const LAYER1_CHARS: usize = 20_000;
/// Where the cases × models table stops, in bytes of the layer-1 section, so that the metrics
/// and the failing trials after it always have room.
const LAYER1_TABLE_CHARS: usize = 10_000;
/// Bytes of the layer-1 section kept free for the truncation notes and the sentences at its end.
const LAYER1_RESERVE: usize = 1_000;
/// Failing trials the summary shows per case × model (the rest are counted).
const TRIALS_PER_CASE: usize = 3;
/// Most lines in the layer-1 Failing trials list.
const MAX_FAILING_TRIALS: usize = 20;
/// Warnings shown open in the summary; more fold under a one-line count.
const MAX_OPEN_WARNINGS: usize = 3;
/// Models whose judge pass rate the summary shows (the rest are in `report.json`).
const MAX_JUDGE_LINES: usize = 10;

/// Renders `summary.md`.
pub fn render(report: &RunReport) -> String {
    let mut out = String::new();
    write_header(report, &mut out);
    // Layer 1 comes after layer 0 but is written first, so layer 0's lists leave room for it.
    let reports_only = report.gate.as_ref().is_some_and(|gate| gate.fail_on == "never");
    let budget_stopped = report.budget.as_ref().is_some_and(|budget| budget.stopped.is_some());
    let layer1 =
        report.evals.as_ref().map(|evals| layer1_section(evals, reports_only, budget_stopped)).unwrap_or_default();
    let mut layer2 = report
        .resilience
        .as_ref()
        .map(|section| super::layer2_summary::layer2_section(section, reports_only))
        .unwrap_or_default();
    if let Some(section) = report.security.as_ref().filter(|section| section.not_run.is_none()) {
        layer2.push_str(&super::layer2_summary::security_section(section, reports_only));
    }
    if let Some(section) = &report.telemetry {
        layer2.push_str(&super::telemetry_summary::telemetry_section(section));
        // Layer 3's deltas and trends, each bounded on its own and never cut inside a table or
        // a chart: what does not fit beside everything above is left to `report.json`.
        let fits = |layer2: &str, more: &str| {
            out.len() + layer1.len() + layer2.len() + more.len() + TAIL_RESERVE + LAYER3_TAIL <= MAX_CHARS
        };
        for more in [
            section.deltas.as_ref().map(super::telemetry_trends::deltas_section),
            section.trends.as_ref().map(super::telemetry_trends::trends_section),
        ]
        .into_iter()
        .flatten()
        {
            if fits(&layer2, &more) {
                layer2.push_str(&more);
            } else {
                layer2.push_str("\n_…layer 3's deltas or trends do not fit here: see `report.json`._\n");
                break;
            }
        }
    }
    if let Some(budget) = &report.budget {
        layer2.push_str(&super::telemetry_summary::budget_line(budget));
    }
    let layer1 = layer1 + &layer2;
    let tail_reserve = TAIL_RESERVE + layer1.len();

    let sections = [
        (Status::Fail, "❌ Failures", "failures", ""),
        (Status::Warn, "⚠️ Warnings", "warnings", ""),
        (
            Status::Error,
            "🛠️ Errors",
            "errors",
            "\nThese checks have no verdict: the server could not be reached or started (is it running, on this URL or command?), or mcp-eval itself hit a problem.\n",
        ),
        (
            Status::Waived,
            "🙈 Waived",
            "waived checks",
            "\nThese checks failed or warned, and a reviewed waiver of the config file covers each (its reason first): they do not fail the run.\n",
        ),
    ];
    for (status, heading, noun, intro) in sections {
        let checks: Vec<&CheckResult> = report.checks.iter().filter(|c| c.status == status).collect();
        if checks.is_empty() {
            continue;
        }
        let _ = write!(out, "\n### {heading} ({})\n{intro}", checks.len());
        // Many warnings fold under one line, so they do not bury what follows (layer 1).
        let folded = status == Status::Warn && checks.len() > MAX_OPEN_WARNINGS;
        if folded {
            let _ = write!(
                out,
                "\n<details><summary>{} (SHOULD and INFO: they fail the run only with <code>fail-on: should</code>, INFO never)</summary>\n",
                plural(checks.len(), "warning")
            );
        }
        for (shown, check) in checks.iter().enumerate() {
            let item = render_item(check);
            if out.len() + item.len() + tail_reserve > MAX_CHARS {
                let _ =
                    write!(out, "\n_…and {} more {noun} not shown here: see `report.json`._\n", checks.len() - shown);
                break;
            }
            out.push_str(&item);
        }
        if folded {
            out.push_str("\n</details>\n");
        }
    }
    write_waiver_notes(report, &mut out);
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
                escape(&clip(&check.id, 64)),
                escape(&clip(&check.title, 80)),
                message(&clip(
                    check.message.trim_start_matches("2026-07-28 migration: would not meet this requirement: "),
                    CELL_CHARS
                ))
            );
            if out.len() + line.len() + tail_reserve > MAX_CHARS {
                out.push_str("- …see `report.json` for the rest\n");
                break;
            }
            out.push_str(&line);
        }
        out.push_str("\n</details>\n");
    }

    write_table(report, layer1.len(), &mut out);
    out.push_str(&layer1);
    write_footer(report, &mut out);
    debug_assert!(out.len() <= MAX_CHARS, "summary.md is {} bytes", out.len());
    out
}

/// The config file's waivers that matched no row, one line each (file and line first).
fn write_waiver_notes(report: &RunReport, out: &mut String) {
    if report.waiver_notes.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n### ⚠️ Waivers that match nothing ({})\n", report.waiver_notes.len());
    for note in report.waiver_notes.iter().take(20) {
        let _ = writeln!(out, "- {}", message(&clip(note, CELL_CHARS * 2)));
    }
}

/// Why a completed run is incomplete (an internal failure, a refused input, a cap, the budget,
/// a provider or a replay miss), in a few words: what its exit status says beyond the verdict.
fn incomplete_reason(report: &RunReport) -> Option<&'static str> {
    let why = match &report.evals {
        _ if report.checks.iter().any(|check| check.id == crate::report::model::INTERNAL_CHECK_ID) => {
            "mcp-eval itself failed"
        }
        Some(evals) if evals.input_refused() => "layer 1 refused its input",
        Some(evals) if evals.tools_unlisted => "layer 1 could not list the server's tools",
        _ if report.budget.as_ref().is_some_and(|budget| budget.stopped.is_some()) => "the cost budget stopped the run",
        Some(evals) if evals.call_cap_reached => "the model-call cap stopped layer 1",
        Some(evals) if evals.replay_missed() => "a replayed request had no recording (replay miss)",
        Some(evals) if evals.provider_failed() => "a model provider failed",
        _ if report.resilience.as_ref().is_some_and(|section| section.call_cap_reached) => {
            "the model-call cap stopped layer 2"
        }
        _ if report.resilience.as_ref().is_some_and(|section| section.provider_failed) => {
            "a model provider failed in layer 2"
        }
        _ => return None,
    };
    Some(why)
}

/// The title of a completed run without a verdict: why there is none, in a few words.
fn no_verdict_title(report: &RunReport) -> String {
    format!("⚠️ error: {}", incomplete_reason(report).unwrap_or("no verdict"))
}

/// The title of a failed run: what failed and, when the run was also incomplete (its exit
/// status then names that, e.g. 5 for a replay miss), why.
fn fail_title(report: &RunReport, failed: &str) -> String {
    match incomplete_reason(report) {
        Some(why) => format!("❌ fail: {failed}; and {why}"),
        None => format!("❌ fail: {failed}"),
    }
}

/// Whether the server answered but refused our Host or Origin header on every request.
fn header_refused(report: &RunReport) -> bool {
    report.outcome_detail.as_deref().is_some_and(crate::mcp::era::is_header_refusal)
}

/// Title, server section, counts line and outcome detail.
fn write_header(report: &RunReport, out: &mut String) {
    let counts = report.counts();
    write_title(report, out);
    write_gate_override(report, counts, out);
    write_server(&report.server, out);
    write_counts(report, counts, out);
    write_outcome(report, out);
}

/// The headline: the outcome or verdict and what was graded.
fn write_title(report: &RunReport, out: &mut String) {
    let title = match (report.outcome, report.verdict()) {
        (RunOutcome::Unreachable, _) if header_refused(report) => {
            "⚠️ error: the server refused our Host or Origin header".to_owned()
        }
        (RunOutcome::Unreachable, _) => "⚠️ error: server unreachable".to_owned(),
        (RunOutcome::Environment, _) => "⚠️ error: mcp-eval could not run here".to_owned(),
        (RunOutcome::NeedsCredentials, _) => "⚠️ error: the server requires credentials".to_owned(),
        (RunOutcome::Interrupted, Verdict::Fail) => format!("⚠️ interrupted, {} so far", failed_text(report)),
        (RunOutcome::Interrupted, _) => "⚠️ interrupted".to_owned(),
        (RunOutcome::Completed, Verdict::Fail) => fail_title(report, &failed_text(report)),
        (RunOutcome::Completed, Verdict::Error) => no_verdict_title(report),
        (RunOutcome::Completed, Verdict::Pass) => pass_title(report),
    };
    let legacy = report.server.era.as_deref().is_some_and(|era| era != report.spec_revision);
    if legacy {
        // A legacy server passes or fails on what applies to its own revision; say so in the
        // headline rather than suggest it meets the current one.
        let era = escape(&clip(report.server.era.as_deref().unwrap_or(""), FIELD_CHARS));
        let _ = writeln!(
            out,
            "## {title} — legacy MCP {era} server (graded on what applies to {era}; 2026-07-28 migration list below)\n"
        );
    } else {
        let golden = match (
            report.evals.as_ref().is_some_and(|evals| !evals.evals.is_empty()),
            report.layers.contains(&2) && report.resilience.as_ref().is_some_and(|section| section.not_run.is_none()),
        ) {
            (true, true) => " + golden set + faults and payloads",
            (true, false) => " + golden set",
            (false, true) => " + faults and payloads",
            (false, false) => "",
        };
        let replayed = if report.evals.as_ref().is_some_and(EvalsSection::any_replayed) && !golden.is_empty() {
            " (replayed from cassettes)"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "## {title} — MCP {} conformance{golden}{replayed}\n",
            escape(&clip(&report.spec_revision, FIELD_CHARS))
        );
    }
}

/// Why the gate decides the verdict, when it overrides the checks' (`fail-on`).
fn write_gate_override(report: &RunReport, counts: crate::report::model::Counts, out: &mut String) {
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
                escape(&clip(&gate.fail_on, 16)),
                escape(&clip(&gate.result, 16))
            );
        }
    }
}

/// The server's lines: target, transport and era, what it announced and listed, its processes.
fn write_server(server: &ServerSection, out: &mut String) {
    let _ = writeln!(out, "- **Target:** {}", code_span(&clip(&server.target, FIELD_CHARS)));
    let era = match server.era.as_deref() {
        Some(era) => code_span(&clip(era, FIELD_CHARS)),
        None => "unknown".to_owned(),
    };
    let _ = writeln!(out, "- **Transport:** {} · **Era:** {era}", escape(&clip(&server.transport, FIELD_CHARS)));
    if let Some(evidence) = &server.era_evidence {
        let _ = writeln!(out, "- **Era evidence:** {}", message(&clip(evidence, FIELD_CHARS)));
    }
    if let Some(info) = &server.server_info {
        let _ = writeln!(out, "- **Server:** {}", server_info_text(info));
    }
    if !server.supported_versions.is_empty() {
        let mut versions: Vec<String> =
            server.supported_versions.iter().take(MAX_VERSIONS).map(|v| code_span(&clip(v, 64))).collect();
        if server.supported_versions.len() > MAX_VERSIONS {
            versions.push(format!("…{} more", server.supported_versions.len() - MAX_VERSIONS));
        }
        let _ = writeln!(out, "- **Supported versions:** {}", versions.join(", "));
    }
    if let Some(serde_json::Value::Object(caps)) = &server.capabilities {
        let mut names: Vec<String> = caps.keys().take(MAX_VERSIONS).map(|k| code_span(&clip(k, 64))).collect();
        if caps.len() > MAX_VERSIONS {
            names.push(format!("…{} more", caps.len() - MAX_VERSIONS));
        }
        let list = if names.is_empty() { "none".to_owned() } else { names.join(", ") };
        let _ = writeln!(out, "- **Capabilities:** {list}");
    }
    if let Some(listed) = &server.listed {
        let _ = writeln!(
            out,
            "- **Listed:** {} · {} · {} · {}",
            plural(listed.tools, "tool"),
            plural(listed.prompts, "prompt"),
            plural(listed.resources, "resource"),
            plural(listed.resource_templates, "resource template"),
        );
    }
    if !server.stdio_starts.is_empty() {
        // The count, then one nested item per process: why it was started.
        let _ = writeln!(out, "- **Server processes started:** {}", server.stdio_starts.len());
        for reason in &server.stdio_starts {
            let _ = writeln!(out, "  - {}", message(reason));
        }
    }
}

/// The counts of checks and cases, the tool errors, and the regression gate's answer.
fn write_counts(report: &RunReport, counts: crate::report::model::Counts, out: &mut String) {
    if report.checks.is_empty() && report.outcome == RunOutcome::Interrupted {
        let _ = writeln!(
            out,
            "\n**Checks:** none had finished when the run was interrupted, after {}",
            duration(report.duration_ms)
        );
    } else {
        checks_line(out, report, counts);
    }
    tool_error_lines(out, report);
    if let Some(evals) = report.evals.as_ref().filter(|evals| !evals.evals.is_empty()) {
        let count = |status: EvalStatus| evals.evals.iter().filter(|eval| eval.status == status).count();
        let _ = writeln!(
            out,
            "\n**Cases (case × model):** {} pass · {} fail · {} error · {} skipped{}",
            count(EvalStatus::Pass),
            count(EvalStatus::Fail),
            count(EvalStatus::Error),
            count(EvalStatus::Skipped),
            replayed_suffix(evals),
        );
        // The answer first: the regression gate, one line per model (details in layer 1 below).
        if let Some(gate) = evals.eval_gate.as_ref().filter(|gate| gate.result != "no-baseline") {
            for line in gate.lines.iter().take(5) {
                let _ = writeln!(out, "\n**Since the baseline:** {}", message(&clip(line, CELL_CHARS * 2)));
            }
            if !gate.flips.is_empty() {
                let _ = writeln!(out, "\n**Flipped:** {} case(s) × model(s) (listed under layer 1)", gate.flips.len());
            }
            if let Some(layer0) = &gate.layer0_delta {
                let _ = writeln!(out, "\n{}", message(&clip(layer0, CELL_CHARS * 2)));
            }
        }
    }
}

/// What a run that did not complete means, its detail and the server's stderr.
fn write_outcome(report: &RunReport, out: &mut String) {
    if report.outcome != RunOutcome::Completed {
        let what = match report.outcome {
            RunOutcome::Unreachable if header_refused(report) => {
                "The server answered, but refused every request for a header of ours (see the detail); no check ran."
            }
            RunOutcome::Unreachable => "The server could not be reached or started; no check ran.",
            RunOutcome::Environment => {
                "mcp-eval's own environment failed before any request was sent (nothing is wrong with the server as far as this run knows); no check ran."
            }
            RunOutcome::NeedsCredentials => {
                "The server refuses every request without credentials: the authorization rows were graded without any; pass `--header 'Authorization: …'` (input `server-headers`) to run the rest."
            }
            _ => "The run was interrupted; the checks below are those finished before it.",
        };
        let _ = writeln!(out, "\n> **{what}**");
        if let Some(detail) = &report.outcome_detail {
            let _ = writeln!(out, "> Detail: {}", escape(&clip(detail, MESSAGE_CHARS)));
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

/// What failed, for the title: `1 check failed`, `2 cases failed`, or both.
/// The `fail-on` the report was gated with (`must` without a gate).
fn fail_on(report: &RunReport) -> &str {
    report.gate.as_ref().map_or("must", |gate| gate.fail_on.as_str())
}

/// The title of a pass: under `fail-on: never` it says what failed and that it does not gate.
fn pass_title(report: &RunReport) -> String {
    let failed = failed_text(report);
    if fail_on(report) == "never" && failed != "0 checks failed" {
        format!("✅ pass (`fail-on: never`: {failed}, reported only)")
    } else {
        "✅ pass".to_owned()
    }
}

/// Graded warnings: SHOULD rows that warn (an INFO row grades nothing).
fn graded_warnings(report: &RunReport) -> usize {
    report.checks.iter().filter(|check| check.status == Status::Warn && check.level != Level::Info).count()
}

fn failed_text(report: &RunReport) -> String {
    let checks = report.counts().fail;
    let warnings = if fail_on(report) == "should" { graded_warnings(report) } else { 0 };
    let cases = report.evals.as_ref().map_or(0, EvalsSection::failed_cases);
    let failed = super::layer2::FaultStatus::Fail;
    let variants = report.resilience.iter().flat_map(|section| &section.results).filter(|r| r.status == failed).count()
        + report.security.iter().flat_map(|section| &section.results).filter(|r| r.status == failed).count();
    let mut parts = Vec::new();
    if checks > 0 {
        parts.push(plural(checks, "check"));
    }
    if cases > 0 {
        parts.push(plural(cases, "case"));
    }
    if variants > 0 {
        parts.push(format!("{} (layer 2)", plural(variants, "variant")));
    }
    let failed = match parts.len() {
        0 if warnings > 0 => String::new(),
        0 => "0 checks failed".to_owned(),
        1 => format!("{} failed", parts[0]),
        _ => {
            let last = parts.pop().unwrap_or_default();
            format!("{} and {last} failed", parts.join(", "))
        }
    };
    match (warnings, failed.is_empty()) {
        (0, _) => failed,
        (_, true) => format!("{} (`fail-on: should`)", plural(warnings, "SHOULD warning")),
        (_, false) => format!("{failed}, {} (`fail-on: should`)", plural(warnings, "SHOULD warning")),
    }
}

/// One entry of the Failures / Warnings / Errors sections.
fn render_item(check: &CheckResult) -> String {
    let mut item = String::new();
    let _ = writeln!(
        item,
        "\n**{}** {} — {}\n",
        escape(&clip(&check.id, 64)),
        escape(&clip(&check.title, FIELD_CHARS)),
        message(&clip(&check.message, MESSAGE_CHARS)),
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
            let text = crate::text::clip_chars(&evidence.text, limit);
            budget -= text.chars().count().min(budget);
            let _ = write!(item, "\n{}:\n\n{}", escape(&clip(&evidence.label, 64)), code_block(&text));
        }
        item.push_str("\n</details>\n");
    }
    item
}

/// The folded table of every check, bounded by the space left.
fn write_table(report: &RunReport, keep_free: usize, out: &mut String) {
    // An unreachable run has only its `CONNECT` row, already shown under Errors.
    if report.checks.is_empty() || matches!(report.outcome, RunOutcome::Unreachable | RunOutcome::Environment) {
        return;
    }
    let _ = write!(
        out,
        "\n<details><summary>All checks ({})</summary>\n\n| ID | Title | Level | Status | Message |\n| --- | --- | --- | --- | --- |\n",
        report.checks.len()
    );
    // Room for the truncation note, the closing tag and the footer.
    let reserve = 1_000 + keep_free;
    for (shown, check) in report.checks.iter().enumerate() {
        let row = format!(
            "| {} | {} | {} | {} | {} |\n",
            escape(&clip(&check.id, 64)),
            escape(&clip(&check.title, 80)),
            check.level.as_str(),
            status_label(check.status),
            message(&clip(&check.message, CELL_CHARS)).replace('|', "\\|").replace("\\\\|", "\\|"),
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

/// The layer-1 section, at most [`LAYER1_CHARS`] bytes: the golden set, the models that did not
/// run, a cases × models table, the metrics per model and one line per failing case × model.
/// Never a tool's result or the model's answer: only our one-line reasons. `reports_only` is
/// `fail-on: never`, under which layer 1 fails nothing even when its gate says it would.
fn layer1_section(evals: &EvalsSection, reports_only: bool, budget_stopped: bool) -> String {
    let mut out = String::from("\n### 🧪 Layer 1 — golden set\n\n");
    // The answer first: the regression gate against the baseline.
    if let Some(gate) = &evals.eval_gate {
        write_regression_gate(&mut out, evals, gate, reports_only);
    }
    write_layer1_run(&mut out, evals, budget_stopped);
    write_case_table(&mut out, evals);
    write_model_metrics(&mut out, evals);
    write_failing_trials(&mut out, evals);
    write_layer1_notes(&mut out, evals);
    out
}

/// The regression gate against the baseline: its verdict and effect on the check, its lines,
/// what was not compared, drift, flips and tool changes.
fn write_regression_gate(out: &mut String, evals: &EvalsSection, gate: &Layer1GateSection, reports_only: bool) {
    let verdict = match gate.result.as_str() {
        "fail" => "❌ regression",
        "pass" if gate.insufficient_data => "⚠️ not enough data to see a regression",
        "pass" => "✅ no regression",
        _ => "➖ no baseline to compare with",
    };
    // What layer 1 does to the check, and why when it is not the regression this line leads
    // with: under `fail-on-evals: failure` a case below its threshold fails the run whatever
    // the baseline says. The policy is named as the setting it is, never as a result.
    let why = match gate.policy.as_str() {
        "failure" => ": a case failed its threshold (`fail-on-evals: failure`)",
        _ if gate.strict && gate.insufficient_data => ": too few cases or trials to gate (`fail-on-evals: strict`)",
        _ => "",
    };
    let effect = match (gate.fails, reports_only) {
        (true, false) => format!(" · fails the check{why}"),
        (true, true) => format!(" · would fail the check{why}, but `fail-on: never` only reports"),
        (false, _) if gate.result == "fail" => {
            format!(" · does not fail the check (`fail-on-evals: {}`)", escape(&gate.policy))
        }
        (false, _) if gate.insufficient_data => {
            format!(" · does not fail the check (`fail-on-evals: {}`; `strict` would)", escape(&gate.policy))
        }
        (false, _) => String::new(),
    };
    let _ = writeln!(
        out,
        "**Regression gate:** {verdict}{effect} · baseline: {}{}
",
        // Our own sentence: bounded, never cut at a table cell's length.
        message(&clip(&gate.baseline, MESSAGE_CHARS)),
        replayed_suffix(evals),
    );
    for line in gate.lines.iter().take(20) {
        let _ = writeln!(out, "- {}", message(&clip(line, CELL_CHARS * 2)));
    }
    if let Some(drop) = gate.minimum_detectable_drop {
        let _ = writeln!(
            out,
            "- This suite detects a drop of {:.0} points or more (80 % power); smaller drops pass as noise — add cases or trials to see them",
            drop * 100.0
        );
    }
    let all_new = gate.not_comparable.keys().all(|reason| reason == "new case");
    if !gate.not_comparable.is_empty() && gate.result == "no-baseline" && all_new {
        // Nothing to compare with at all: say that, not every case by name.
        let pairs: usize = gate.not_comparable.values().sum();
        let _ = writeln!(out, "- Not compared: no baseline yet ({})", plural(pairs, "case × model pair"));
    } else if !gate.not_comparable.is_empty() {
        let reasons: Vec<String> = gate
            .not_comparable
            .iter()
            .map(|(reason, count)| {
                let named = gate.not_comparable_cases.get(reason).filter(|named| !named.is_empty());
                match named {
                    Some(named) => {
                        let shown = &named[..named.len().min(NAMED_PER_REASON)];
                        let more = count.saturating_sub(shown.len());
                        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
                        format!("{count} {} ({}{more})", escape(reason), by_model(shown))
                    }
                    None => format!("{count} {}", escape(reason)),
                }
            })
            .collect();
        let _ = writeln!(out, "- Not compared: {}", reasons.join(", "));
    }
    if let Some(drift) = &gate.drift {
        let _ = writeln!(out, "- ⚠️ {}", message(drift));
    }
    if !gate.flips.is_empty() {
        let _ = writeln!(out, "- Flipped since the baseline:");
        for flip in gate.flips.iter().take(15) {
            let _ = writeln!(out, "  - {}", message(&clip(flip, CELL_CHARS)));
        }
        if gate.flips.len() > 15 {
            let _ = writeln!(out, "  - …and {} more: see `report.json`", gate.flips.len() - 15);
        }
    }
    if !gate.tool_changes.is_empty() {
        let _ = writeln!(out, "- Tools changed since the baseline:");
        for change in gate.tool_changes.iter().take(10) {
            let _ = writeln!(out, "  - {}", message(&clip(change, CELL_CHARS)));
        }
    }
    out.push('\n');
}

/// What layer 1 ran on: the golden set, the shard, the models not run, the model calls, and
/// why it stopped or did not run.
fn write_layer1_run(out: &mut String, evals: &EvalsSection, budget_stopped: bool) {
    if let Some(golden) = &evals.golden_set {
        let hash = golden.sha256.strip_prefix("sha256:").unwrap_or(&golden.sha256);
        let _ = writeln!(
            out,
            "- **Golden set:** {} · `{}` · {}",
            code_span(&clip(&golden.path, FIELD_CHARS)),
            escape(&hash.chars().take(12).collect::<String>()),
            plural(golden.cases, "case"),
        );
    }
    if let Some(shard) = evals.shard {
        let _ = writeln!(
            out,
            "- **Shard:** {} of {}: this report holds that slice of the case × model list only; merge the shards (`mcp-eval merge`, input `merge-reports`) for the whole run",
            shard.index, shard.count
        );
    }
    for status in evals.model_status.iter().filter(|status| status.status != ModelOutcome::Ran) {
        if out.len() > LAYER1_CHARS / 4 {
            out.push_str("- …more models not run: see `report.json`\n");
            break;
        }
        let why = match status.status {
            ModelOutcome::NoApiKey => "no API key",
            _ => "the provider is unusable",
        };
        let detail = status.detail.as_deref().map(|d| format!(" ({})", message(&clip(d, CELL_CHARS))));
        let _ =
            writeln!(out, "- {}: not run — {why}{}", code_span(&clip(&status.model, 100)), detail.unwrap_or_default());
    }
    if evals.model_calls > 0 || evals.golden_set.is_some() {
        let _ = writeln!(out, "- **Model calls:** {}", evals.model_calls_text());
    }
    if let Some(line) = cut_results_line(evals) {
        out.push_str(&line);
    }
    if let Some(why) = &evals.layer1_not_run {
        let _ = writeln!(out, "\n> **Layer 1 did not run:** {}", message(&clip(why, MESSAGE_CHARS)));
    }
    if let Some(calls) = &evals.expected_calls {
        out.push_str(&crate::report::evals::keyless_note(calls));
    }
    if evals.call_cap_reached && budget_stopped {
        out.push_str("\n> **The cost budget stopped the run:** the cases that did not run are marked skipped.\n");
    } else if evals.call_cap_reached {
        out.push_str("\n> **The model-call cap stopped the run:** the cases that did not run are marked skipped.\n");
    }
}

/// The table of cases × models.
fn write_case_table(out: &mut String, evals: &EvalsSection) {
    let models = evals.models_with_results();
    let cases = evals.case_ids();
    if !models.is_empty() {
        out.push_str("\n| Case | Kind |");
        for model in &models {
            let _ = write!(out, " {} |", model_cell(evals, model));
        }
        out.push_str("\n| --- | --- |");
        out.push_str(&" --- |".repeat(models.len()));
        out.push('\n');
        for (shown, case) in cases.iter().enumerate() {
            let results: Vec<Option<&EvalResult>> = models
                .iter()
                .map(|model| evals.evals.iter().find(|eval| eval.case == *case && eval.model == *model))
                .collect();
            let first = results.iter().flatten().next();
            let kind = first.map_or(String::new(), |eval| match eval.kind.as_str() {
                "soft" => format!("soft ≥ {}/{}", eval.threshold, eval.runs),
                kind => escape(&clip(kind, 16)),
            });
            let mut row = format!("| {} | {kind} |", escape(&clip(case, 80)));
            for result in results {
                let _ = write!(row, " {} |", result.map_or("—".to_owned(), eval_cell));
            }
            row.push('\n');
            if out.len() + row.len() > LAYER1_TABLE_CHARS {
                let _ = writeln!(out, "\n_…and {} more cases not shown here: see `report.json`._", cases.len() - shown);
                break;
            }
            out.push_str(&row);
        }
    }
}

/// The table of metrics per model, the judge's calibration and the temperature-0 note.
fn write_model_metrics(out: &mut String, evals: &EvalsSection) {
    if !evals.eval_metrics.is_empty() {
        let tokens = evals.eval_metrics.iter().any(|m| m.input_tokens.is_some() || m.output_tokens.is_some());
        out.push_str("\n| Model | Pass rate | Tool selection | Over-triggering | Arguments | Sequence |");
        out.push_str(if tokens { " Tokens (in incl. cached / out) |\n" } else { "\n" });
        out.push_str("| --- | --- | --- | --- | --- | --- |");
        out.push_str(if tokens { " --- |\n" } else { "\n" });
        for metrics in &evals.eval_metrics {
            let mut row = format!(
                "| {} | {} | {} | {} | {} | {} |",
                model_cell(evals, &metrics.model),
                rate(&metrics.pass_rate),
                rate(&metrics.tool_selection_accuracy),
                rate(&metrics.over_triggering_rate),
                rate(&metrics.argument_accuracy),
                rate(&metrics.sequence_accuracy),
            );
            if tokens {
                let count = |n: Option<u64>| n.map_or("—".to_owned(), |n| n.to_string());
                let _ = write!(row, " {} / {} |", count(metrics.input_tokens), count(metrics.output_tokens));
            }
            row.push('\n');
            if out.len() + row.len() + LAYER1_RESERVE > LAYER1_CHARS {
                out.push_str("\n_…more models in `report.json`._\n");
                break;
            }
            out.push_str(&row);
        }
    }
    if let Some(calibration) = &evals.judge_calibration {
        out.push_str(&judge_lines(calibration));
    }
    if evals.any_at_temperature_zero() {
        out.push_str(
            "\nTrials at temperature 0 are not independent draws: k/N and its 95 % interval (in `report.json`) are indicative only.\n",
        );
    }
}

/// Failed and errored cases, then passing cases with a failed trial: one line per failing trial.
fn write_failing_trials(out: &mut String, evals: &EvalsSection) {
    // Failed and errored cases, then passing cases with a failed trial (a soft case at 4/5).
    let mut bad: Vec<&EvalResult> =
        evals.evals.iter().filter(|eval| matches!(eval.status, EvalStatus::Fail | EvalStatus::Error)).collect();
    bad.extend(evals.evals.iter().filter(|eval| eval.status == EvalStatus::Pass && eval.first_bad_trial().is_some()));
    if !bad.is_empty() {
        // One line per failing trial, at most [`TRIALS_PER_CASE`] per case × model.
        let lines: Vec<String> = bad.iter().flat_map(|eval| failing_trial_lines(eval)).collect();
        let trials: usize = bad.iter().map(|eval| eval.bad_trials().len().max(1)).sum();
        let _ = write!(out, "\n#### Failing trials ({})\n\n", plural(trials, "trial"));
        for (shown, line) in lines.iter().enumerate() {
            if shown == MAX_FAILING_TRIALS || out.len() + line.len() + LAYER1_RESERVE > LAYER1_CHARS {
                let _ = writeln!(out, "- …and {} more lines: see `report.json`", lines.len() - shown);
                break;
            }
            out.push_str(line);
        }
    }
}

/// Layer 1's notes.
fn write_layer1_notes(out: &mut String, evals: &EvalsSection) {
    if !evals.layer1_notes.is_empty() {
        out.push_str("\n**Notes:**\n\n");
        for (shown, note) in evals.layer1_notes.iter().enumerate() {
            let line = format!("- {}\n", message(&clip(note, CELL_CHARS * 2)));
            if out.len() + line.len() + LAYER1_RESERVE > LAYER1_CHARS {
                let _ = writeln!(out, "- …and {} more notes: see `report.json`", evals.layer1_notes.len() - shown);
                break;
            }
            out.push_str(&line);
        }
    }
}

/// A model in a table's cell: its label, and `(replayed)` when its answers came from cassettes.
fn model_cell(evals: &EvalsSection, model: &str) -> String {
    let label = table_code(&clip(model, 100));
    if evals.replayed(model) { format!("{label} (replayed)") } else { label }
}

/// ` · reached on replayed model answers (cassettes), not live calls` after a verdict of layer 1
/// when some answer was replayed; empty otherwise.
fn replayed_suffix(evals: &EvalsSection) -> String {
    if evals.any_replayed() { format!(" · {}", crate::report::evals::REPLAYED_VERDICT) } else { String::new() }
}

/// The most tools [`cut_results_line`] names.
const MAX_CUT_TOOLS: usize = 5;

/// One line naming the tools whose results were cut for the model (longer than a model is
/// given), each with the largest result it sent; `None` when no result was cut. Hosts cut long
/// results too, so the server's author should know.
fn cut_results_line(evals: &EvalsSection) -> Option<String> {
    let mut largest: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for call in evals.evals.iter().flat_map(|eval| &eval.traces).flat_map(|run| &run.calls) {
        if let Some(cut) = call.result_cut {
            let entry = largest.entry(call.name.as_str()).or_default();
            *entry = (*entry).max(cut.server_bytes);
        }
    }
    if largest.is_empty() {
        return None;
    }
    let mut named: Vec<String> = largest
        .iter()
        .take(MAX_CUT_TOOLS)
        .map(|(tool, bytes)| {
            format!("{} sent results of up to {:.1} MB", code_span(&clip(tool, 100)), *bytes as f64 / 1_048_576.0)
        })
        .collect();
    if largest.len() > MAX_CUT_TOOLS {
        named.push(format!("{} more tools too (see `result_cut` in `report.json`)", largest.len() - MAX_CUT_TOOLS));
    }
    Some(format!(
        "- **Results cut for the model:** {}; a model is given the first {} KiB of a result, so it saw part of them (hosts cut long results too)\n",
        named.join(", "),
        crate::report::evals::MODEL_RESULT_BYTES / 1024
    ))
}

/// The judge pass rate of each model, Rogan–Gladen corrected when a calibration of this judge
/// applies (with its TPR, TNR and n), else marked uncalibrated with the reason.
fn judge_lines(calibration: &crate::report::evals::JudgeCalibration) -> String {
    let mut out = String::new();
    let judge = table_code(&clip(&calibration.judge_model, 100));
    for rate in calibration.rates.iter().take(MAX_JUDGE_LINES) {
        let percent = |value: f64| format!("{}%", (value * 1000.0).round() / 10.0);
        let mut line = format!(
            "\n- **Judge pass rate** of {} (judged by {judge}): {}/{} trials ({})",
            table_code(&clip(&rate.model, 100)),
            rate.passed_runs,
            rate.judged_runs,
            percent(rate.observed)
        );
        match (calibration.calibrated, rate.corrected) {
            (true, Some(corrected)) => line.push_str(&format!(
                "; Rogan–Gladen corrected: **{}** (TPR {:.2}, TNR {:.2}, n = {} + {}, measured {})",
                percent(corrected),
                calibration.tpr.unwrap_or_default(),
                calibration.tnr.unwrap_or_default(),
                calibration.positives.unwrap_or_default(),
                calibration.negatives.unwrap_or_default(),
                escape(calibration.measured_at.as_deref().unwrap_or("?"))
            )),
            (true, None) => line.push_str(&format!(
                "; not corrected: the judge is no better than chance (TPR {:.2} + TNR {:.2} ≤ 1)",
                calibration.tpr.unwrap_or_default(),
                calibration.tnr.unwrap_or_default()
            )),
            (false, _) => line.push_str(&format!(
                "; uncalibrated: {}",
                message(&clip(calibration.reason.as_deref().unwrap_or("no calibration"), CELL_CHARS * 2))
            )),
        }
        out.push_str(&line);
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// A cell of the cases × models table: `✅ 5/5`, `❌ 3/5`, `⚠️ error 1/5`, `⏭️ skipped`.
fn eval_cell(eval: &EvalResult) -> String {
    let mut cell = match eval.status {
        EvalStatus::Pass => format!("✅ {}/{}", eval.passed, eval.runs),
        EvalStatus::Fail => format!("❌ {}/{}", eval.passed, eval.runs),
        EvalStatus::Error => format!("⚠️ error {}/{}", eval.passed, eval.runs),
        EvalStatus::Skipped => "⏭️ skipped".to_owned(),
    };
    if eval.flaky {
        cell.push_str(" (flaky)");
    }
    if eval.cached.is_some() {
        cell.push_str(" ♻️");
    }
    cell
}

/// One line of the Failing trials list: case, model, trial and the trial's one-line reason.
fn failing_trial_lines(eval: &EvalResult) -> Vec<String> {
    let what = match eval.status {
        EvalStatus::Error => "error",
        EvalStatus::Pass => "passed despite it",
        _ => "fail",
    };
    let mut trials = eval.bad_trials();
    if trials.is_empty() {
        trials.push((None, "no reason given".to_owned()));
    }
    let mut lines: Vec<String> = trials
        .iter()
        .take(TRIALS_PER_CASE)
        .map(|(trial, reason)| {
            let trial = trial.map_or_else(|| "no trial kept".to_owned(), |trial| format!("trial {trial}"));
            format!(
                "- **{}** · {} · {what} · {trial}: {}\n",
                escape(&clip(&eval.case, 80)),
                code_span(&clip(&eval.model, 100)),
                message(&crate::text::clip_clauses(reason, CELL_CHARS)),
            )
        })
        .collect();
    if trials.len() > TRIALS_PER_CASE {
        lines.push(format!(
            "  - +{} more failing trials of this case: see `report.json`\n",
            trials.len() - TRIALS_PER_CASE
        ));
    }
    lines
}

/// `k/n (pct%)`, or `—` when n is 0.
fn rate(rate: &Rate) -> String {
    if rate.n == 0 {
        return "—".to_owned();
    }
    let percent = (rate.k as f64 * 1000.0 / rate.n as f64).round() / 10.0;
    format!("{}/{} ({percent}%)", rate.k, rate.n)
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
        None => code_span(&clip(spec, FIELD_CHARS)),
    }
}

/// Closing line: where the full data is, and which tool wrote it.
fn write_footer(report: &RunReport, out: &mut String) {
    let _ = writeln!(
        out,
        "\n<sub>{} · started {} · full details in `report.json` and `junit.xml`</sub>",
        escape(&clip(&report.tool, 100)),
        report.started_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    );
}

/// `name version` (and title) from a serverInfo object, escaped; other shapes as compact JSON.
fn server_info_text(info: &serde_json::Value) -> String {
    let field = |key: &str| info.get(key).and_then(serde_json::Value::as_str);
    match (field("name"), field("version")) {
        (Some(name), version) => {
            let mut text = escape(&clip(name, FIELD_CHARS));
            // An SDK may send `version: ""`: no version then, and no trailing space.
            if let Some(version) = version.filter(|version| !version.trim().is_empty()) {
                text.push(' ');
                text.push_str(&escape(&clip(version, 64)));
            }
            if let Some(title) = field("title") {
                text.push_str(" (");
                text.push_str(&escape(&clip(title, FIELD_CHARS)));
                text.push(')');
            }
            text
        }
        _ => code_span(&clip(&info.to_string(), FIELD_CHARS)),
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
        Status::Waived => "🙈 waived",
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

/// How many not-compared pairs the summary names per reason (report.json keeps more).
const NAMED_PER_REASON: usize = 6;

/// `` `case` on `model` `` pairs with each model said once: `` `a`, `b` on `m` ``, in the order
/// the models first appear; pairs of another shape are kept as they are.
fn by_model(named: &[String]) -> String {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for pair in named {
        let (case, model) = pair.rsplit_once(" on ").unwrap_or((pair.as_str(), ""));
        match groups.iter_mut().find(|(known, _)| *known == model) {
            Some((_, cases)) => cases.push(case),
            None => groups.push((model, vec![case])),
        }
    }
    groups
        .iter()
        .map(
            |(model, cases)| {
                if model.is_empty() { cases.join(", ") } else { format!("{} on {model}", cases.join(", ")) }
            },
        )
        .collect::<Vec<_>>()
        .join("; ")
}

/// The `**Checks:**` line: the counts by status, the number of checks and layer 0's own time
/// (`layer0_duration_ms`: the checks alone, not layer 1 nor the connection). A report without
/// it (an older mcp-eval, an unreachable server) shows the run's time when layer 0 was asked
/// for, and no time when it was not (layer 1 alone, a later shard).
fn checks_line(out: &mut String, report: &RunReport, counts: crate::report::model::Counts) {
    let time = match report.layer0_duration_ms {
        Some(ms) => format!(" in {}", duration(ms)),
        None if report.layers.contains(&0) => format!(" in {}", duration(report.duration_ms)),
        None => String::new(),
    };
    let _ = writeln!(
        out,
        "\n**Checks:** {} pass · {} fail · {} warn · {} not applicable · {} error · {}{time}",
        counts.pass,
        counts.fail,
        counts.warn,
        counts.not_applicable,
        counts.error,
        plural(report.checks.len(), "check"),
    );
    if counts.waived > 0 {
        let _ = writeln!(out, "\n**Waived:** {} (see below)", plural(counts.waived, "check"));
    }
}

/// Layer 0's notice of the tools that answered every valid call with `isError: true` (no tool
/// call succeeded, so the rows that need one were not applicable), one line: each tool and the
/// arguments sent (at most three named), never the error text (a tool result: `report.json`
/// keeps it).
fn tool_error_lines(out: &mut String, report: &RunReport) {
    const NAMED: usize = 3;
    let notices = &report.server.tool_errors;
    let tool = |notice: &crate::report::model::ToolErrorNotice| code_span(&clip(&notice.tool, 64));
    let arguments = |notice: &crate::report::model::ToolErrorNotice| {
        format!("arguments {}", code_span(&crate::text::clip_chars(&notice.arguments, 120)))
    };
    let tail = "the checks that need a successful call were not applicable";
    let _ = match notices.as_slice() {
        [] => return,
        [notice] => writeln!(
            out,
            "\n**Notice:** {} answered every valid call with `isError: true` ({}): {tail}; give it arguments it accepts under `safe_tools` (--config) — the error text is in `report.json` (`server.tool_errors`)",
            tool(notice),
            arguments(notice),
        ),
        _ => {
            let mut list: Vec<String> =
                notices.iter().take(NAMED).map(|notice| format!("{} ({})", tool(notice), arguments(notice))).collect();
            if notices.len() > NAMED {
                list.push(format!("{} more", notices.len() - NAMED));
            }
            let last = list.pop().unwrap_or_default();
            writeln!(
                out,
                "\n**Notice:** {} tools answered every valid call with `isError: true` ({} and {last}): {tail}; give them arguments they accept under `safe_tools` (--config) — the error texts are in `report.json` (`server.tool_errors`)",
                notices.len(),
                list.join(", "),
            )
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{Evidence, Level};
    use crate::report::test_support::{check, sample_report, unreachable_report};

    /// Layer 1's token count is everything read, prompt-cache reads included; layer 3's line
    /// counts the cache reads apart. The headers say so, so 7516 beside 4377 / 3139 adds up.
    #[test]
    fn layer_1_token_column_says_its_input_includes_cached_tokens() {
        let md = render(&crate::report::test_support::sample_evals_report());
        assert!(md.contains("| Tokens (in incl. cached / out) |"), "{md}");
        assert!(!md.contains("Tokens (in / out)"), "{md}");
    }

    #[test]
    fn not_compared_pairs_say_each_model_once_and_no_baseline_is_said_in_words() {
        assert_eq!(
            by_model(&["`a` on `m`".into(), "`b` on `m`".into(), "`a` on `n`".into()]),
            "`a`, `b` on `m`; `a` on `n`"
        );
        let mut report = crate::report::model::RunReport::empty_for_tests();
        report.layers = vec![1];
        let mut gate = crate::report::evals::Layer1GateSection {
            result: "no-baseline".into(),
            baseline: "none stored yet".into(),
            ..Default::default()
        };
        gate.not_comparable.insert("new case".into(), 40);
        gate.not_comparable_cases
            .insert("new case".into(), (0..20).map(|case| format!("`case-{case}` on `openai:gpt-4.1-mini`")).collect());
        report.evals = Some(crate::report::evals::EvalsSection { eval_gate: Some(gate), ..Default::default() });
        let summary = render(&report);
        assert!(summary.contains("- Not compared: no baseline yet (40 case × model pairs)"), "{summary}");
        assert!(!summary.contains("case-0"), "{summary}");
    }

    #[test]
    fn the_checks_line_times_layer_0_alone_when_layer_1_ran_too() {
        let mut report = sample_report();
        report.layers = vec![0, 1];
        // 311 ms of checks in a run of 42 s, layer 1's model calls included.
        report.duration_ms = 42_000;
        report.layer0_duration_ms = Some(311);
        let summary = render(&report);
        assert!(summary.contains(" · 5 checks in 311 ms\n"), "{summary}");
        assert!(!summary.contains("42.0 s"), "the whole run's time is not the checks' time: {summary}");

        // An older report without layer 0's own time shows the run's, as it did.
        report.layer0_duration_ms = None;
        assert!(render(&report).contains(" · 5 checks in 42.0 s\n"));
        // Layer 1 alone: no checks ran, so no time is given for them.
        report.layers = vec![1];
        report.checks.clear();
        let summary = render(&report);
        assert!(summary.contains(" · 0 checks\n"), "{summary}");
    }

    #[test]
    fn a_tool_that_answered_every_valid_call_with_is_error_is_named_with_its_arguments_never_its_error_text() {
        let mut report = sample_report();
        let notice = |tool: &str| crate::report::model::ToolErrorNotice {
            tool: tool.into(),
            arguments: r#"{"id":"mcp-eval"}"#.into(),
            error: "SECRET-ISH tool output: note not found".into(),
        };
        report.server.tool_errors = vec![notice("get_note")];
        let summary = render(&report);
        assert!(
            summary.contains("\n**Notice:** `get_note` answered every valid call with `isError: true` (arguments `{\"id\":\"mcp-eval\"}`): the checks that need a successful call were not applicable; give it arguments it accepts under `safe_tools` (--config) — the error text is in `report.json` (`server.tool_errors`)\n"),
            "{summary}"
        );
        assert!(!summary.contains("SECRET-ISH"), "{summary}");

        report.server.tool_errors = ["a", "b", "c", "d", "e"].into_iter().map(notice).collect();
        let summary = render(&report);
        let line = summary.lines().find(|line| line.starts_with("**Notice:**")).expect("one notice line");
        assert!(
            line.starts_with("**Notice:** 5 tools answered every valid call with `isError: true` (`a` (arguments"),
            "{line}"
        );
        assert!(line.contains("`c` (arguments `{\"id\":\"mcp-eval\"}`) and 2 more): "), "{line}");
        assert_eq!(summary.matches("**Notice:**").count(), 1, "{summary}");
        assert!(!summary.contains("SECRET-ISH"), "{summary}");

        report.server.tool_errors.clear();
        assert!(!render(&report).contains("**Notice:**"));
    }

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
    fn with_fail_on_should_a_warning_makes_the_title_a_fail_that_names_it() {
        // Was "✅ pass" with a Gate line under it while the run exited 1: the title now is the
        // verdict under the report's own fail-on, which the exit status follows.
        let mut report = sample_report();
        report.checks.retain(|c| c.status != Status::Fail);
        report.gate = Some(crate::report::model::GateSection { fail_on: "should".into(), result: "fail".into() });
        let md = render(&report);
        assert!(md.starts_with("## ❌ fail: 1 SHOULD warning (`fail-on: should`)"), "{md}");
        assert!(!md.contains("**Gate:**"), "the title and the gate agree: {md}");
        report.gate = Some(crate::report::model::GateSection { fail_on: "must".into(), result: "pass".into() });
        assert!(render(&report).starts_with("## ✅ pass —"), "a warning fails nothing under must");
    }

    #[test]
    fn a_completed_run_without_a_verdict_is_titled_error_with_the_reason_never_pass() {
        let mut report = sample_report();
        report.checks.retain(|c| c.status != Status::Fail);
        report.evals = Some(crate::report::evals::EvalsSection {
            layer1_not_run: Some(format!("{}case `a`: no tool `x`", crate::report::evals::INVALID_INPUT_PREFIX)),
            input_refused: true,
            ..Default::default()
        });
        assert!(render(&report).starts_with("## ⚠️ error: layer 1 refused its input"), "{}", render(&report));
        report.evals = Some(crate::report::evals::EvalsSection { call_cap_reached: true, ..Default::default() });
        assert!(render(&report).starts_with("## ⚠️ error: the model-call cap stopped layer 1"));
    }

    /// Layer 1 of one case whose one trial found no recording (a replay miss).
    fn replay_missed_evals() -> crate::report::evals::EvalsSection {
        let mut evals = crate::report::test_support::sample_evals();
        evals.evals.truncate(1);
        evals.evals[0].status = crate::report::evals::EvalStatus::Error;
        evals.call_cap_reached = false;
        let trace = evals.evals[0].traces.first_mut().expect("a trial");
        trace.status = crate::report::evals::TrialStatus::Error;
        trace.cause = Some(crate::report::evals::ErrorCause::ReplayMiss);
        evals
    }

    #[test]
    fn a_replay_miss_is_headlined_as_a_missing_recording_not_a_provider_failure() {
        let mut report = sample_report();
        report.checks.retain(|c| c.status != Status::Fail);
        // One case whose trial found no recording: no verdict (exit status 5), not a failure.
        report.evals = Some(replay_missed_evals());
        let summary = render(&report);
        assert!(summary.starts_with("## ⚠️ error: a replayed request had no recording (replay miss)"), "{summary}");
        assert!(!summary.starts_with("## ⚠️ error: a model provider failed"), "{summary}");
    }

    #[test]
    fn a_failed_run_that_also_missed_a_recording_says_both_in_its_headline() {
        // A failing check and a replay miss: the verdict is fail, the exit status 5 (a replay
        // miss outranks a failed verdict), and the headline names both.
        let mut report = sample_report();
        report.evals = Some(replay_missed_evals());
        let summary = render(&report);
        let title = summary.lines().next().unwrap_or_default();
        assert!(title.starts_with("## ❌ fail: "), "{title}");
        assert!(title.contains("; and a replayed request had no recording (replay miss)"), "{title}");
    }

    #[test]
    fn a_refused_host_header_is_titled_as_such_not_as_an_unreachable_server() {
        let mut report = sample_report();
        report.checks.clear();
        report.outcome = RunOutcome::Unreachable;
        report.outcome_detail = Some("the server at `http://192.0.2.2:8000/mcp` refused our Host header `192.0.2.2:8000` (HTTP 421: Invalid Host header): …".into());
        let summary = render(&report);
        assert!(summary.starts_with("## ⚠️ error: the server refused our Host or Origin header"), "{summary}");
        report.outcome_detail = Some("connection refused".into());
        assert!(render(&report).starts_with("## ⚠️ error: server unreachable"));
    }

    #[test]
    fn an_empty_server_version_leaves_no_trailing_space_on_the_server_line() {
        assert_eq!(server_info_text(&serde_json::json!({"name": "notes", "version": ""})), "notes");
        assert_eq!(server_info_text(&serde_json::json!({"name": "notes", "version": " "})), "notes");
        assert_eq!(server_info_text(&serde_json::json!({"name": "notes", "version": "1.0"})), "notes 1.0");
        let mut report = sample_report();
        report.server.server_info = Some(serde_json::json!({"name": "notes", "version": ""}));
        assert!(render(&report).contains("- **Server:** notes\n"), "{}", render(&report));
    }

    #[test]
    fn the_reasons_a_server_process_was_started_keep_their_code_spans() {
        // Our own sentence quotes a method as code: rendered as code, never as `\``.
        let mut report = sample_report();
        report.server.stdio_starts = vec!["a second process: X-5 sends `initialize` to it".into()];
        let md = render(&report);
        assert!(md.contains("X-5 sends `initialize` to it"), "{md}");
        assert!(!md.contains("\\`initialize"), "{md}");
    }

    #[test]
    fn the_server_processes_started_are_a_count_with_one_item_per_reason() {
        let mut report = sample_report();
        report.server.stdio_starts = vec![
            "the session: the era probe, then every layer's requests".into(),
            "a second process: P-3 lists the tools there; started with the session".into(),
        ];
        let md = render(&report);
        assert!(
            md.contains(
                "- **Server processes started:** 2\n  - the session: the era probe, then every layer's requests\n  - a second process: P-3 lists the tools there; started with the session\n"
            ),
            "{md}"
        );
    }

    #[test]
    fn fail_on_never_titles_the_run_a_pass_and_says_what_failed() {
        // The run exits 0 under never: the title agrees, and still names the failure.
        let mut report = sample_report();
        report.gate = Some(crate::report::model::GateSection { fail_on: "never".into(), result: "pass".into() });
        let md = render(&report);
        assert!(md.starts_with("## ✅ pass (`fail-on: never`: 1 check failed, reported only)"), "{md}");
        assert!(md.contains("### ❌ Failures (1)"), "{md}");
    }

    #[test]
    fn more_than_a_few_warnings_fold_under_a_one_line_count() {
        let mut report = sample_report();
        let warn = report.checks.iter().find(|c| c.status == Status::Warn).cloned().expect("a warning");
        report.checks.extend((0..4).map(|n| CheckResult { id: format!("W-{n}"), ..warn.clone() }));
        let md = render(&report);
        let at = md.find("### ⚠️ Warnings (5)").expect("warnings");
        assert!(md[at..].contains("<details><summary>5 warnings (SHOULD and INFO"), "{md}");
        assert_eq!(md.matches("<details>").count(), md.matches("</details>").count());
        report.checks.retain(|c| !c.id.starts_with("W-"));
        assert!(!render(&report).contains("<summary>1 warning"), "a few stay open");
    }

    #[test]
    fn a_waived_row_is_listed_with_its_reason_and_an_unmatched_waiver_is_a_warning() {
        let md = render(&crate::report::test_support::waived_report());
        assert!(!md.contains("### ❌ Failures"), "{md}");
        assert!(md.contains("**Waived:** 1 check (see below)"), "{md}");
        assert!(md.contains("### 🙈 Waived (1)"), "{md}");
        assert!(md.contains("**D-1** server/discover answers — waived by the config file (mcp-eval.yaml:3): an upstream SDK's error — server/discover returned"), "{md}");
        assert!(md.contains("| D-1 | server/discover answers | MUST | 🙈 waived |"), "{md}");
        assert!(
            md.contains(
                "### ⚠️ Waivers that match nothing (1)\n\n- mcp-eval.yaml:7: the waiver of H-4 matches nothing"
            ),
            "{md}"
        );
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
    fn a_failed_case_fails_the_title_when_every_check_passed() {
        // The sample's layer 1 also reached the call cap (exit status 6): the title says so too.
        let md = render(&crate::report::test_support::sample_evals_report());
        assert!(
            md.starts_with(
                "## ❌ fail: 3 cases failed; and the model-call cap stopped layer 1 — MCP 2026-07-28 conformance + golden set"
            ),
            "{md}"
        );
        let mut report = crate::report::test_support::sample_evals_report();
        report.checks = sample_report().checks;
        assert!(render(&report).starts_with("## ❌ fail: 1 check and 3 cases failed; and the model-call cap"));
        report.outcome = RunOutcome::Interrupted;
        assert!(render(&report).starts_with("## ⚠️ interrupted, 1 check and 3 cases failed so far"));
    }

    #[test]
    fn a_shard_says_which_slice_it_holds() {
        let mut report = crate::report::test_support::sample_evals_report();
        assert!(!render(&report).contains("**Shard:**"));
        if let Some(evals) = report.evals.as_mut() {
            evals.shard = Some(crate::report::evals::ShardInfo { index: 2, count: 3 });
        }
        assert!(render(&report).contains("- **Shard:** 2 of 3: this report holds that slice"));
    }

    #[test]
    fn the_gate_line_says_that_a_case_failed_its_threshold_and_shows_no_policy_as_a_result() {
        let mut report = crate::report::test_support::sample_evals_report();
        if let Some(evals) = report.evals.as_mut() {
            evals.eval_gate = Some(crate::report::evals::Layer1GateSection {
                result: "pass".into(),
                policy: "failure".into(),
                fails: true,
                baseline: "stored".into(),
                ..Default::default()
            });
        }
        report.gate = Some(crate::report::model::GateSection { fail_on: "must".into(), result: "fail".into() });
        let md = render(&report);
        assert!(!md.contains("(failure)"), "the policy is no result: {md}");
        assert!(
            md.contains(
                "**Regression gate:** ✅ no regression · fails the check: a case failed its threshold (`fail-on-evals: failure`) ·"
            ),
            "{md}"
        );
    }

    #[test]
    fn a_failing_layer1_gate_fails_the_check_unless_fail_on_never() {
        let mut report = crate::report::test_support::sample_evals_report();
        if let Some(evals) = report.evals.as_mut() {
            evals.eval_gate = Some(crate::report::evals::Layer1GateSection {
                result: "fail".into(),
                policy: "regression".into(),
                fails: true,
                baseline: "stored".into(),
                ..Default::default()
            });
        }
        report.gate = Some(crate::report::model::GateSection { fail_on: "must".into(), result: "fail".into() });
        let md = render(&report);
        assert!(md.contains("**Regression gate:** ❌ regression · fails the check ·"), "{md}");
        report.gate = Some(crate::report::model::GateSection { fail_on: "never".into(), result: "pass".into() });
        let md = render(&report);
        assert!(!md.contains("· fails the check"), "{md}");
        assert!(md.contains("❌ regression · would fail the check, but `fail-on: never` only reports ·"), "{md}");
    }

    #[test]
    fn layer1_section_order_and_lines() {
        let md = render(&crate::report::test_support::sample_evals_report());
        let table = md.find("All checks").unwrap();
        let layer1 = md.find("### 🧪 Layer 1 — golden set").unwrap();
        let metrics = md.find("| Model | Pass rate |").unwrap();
        let failing = md.find("#### Failing trials (12 trials)").unwrap();
        assert!(table < layer1 && layer1 < metrics && metrics < failing);
        assert!(md.contains("- **Golden set:** `evals/golden.yaml` · `3f1c9a7be20d` · 7 cases"));
        assert!(md.contains("- `anthropic:claude-sonnet-4-5`: not run — no API key (ANTHROPIC\\_API\\_KEY is not set"));
        assert!(md.contains("| search-docs | soft ≥ 4/5 | ❌ 3/5 (flaky) |"));
        assert!(md.contains("| flaky-backend | soft ≥ 3/5 | ⚠️ error 1/5 |"));
        assert!(md.contains("| weekly-digest | hard | ⏭️ skipped |"));
        assert!(md.contains("| 2/5 (40%) | 16/21 (76.2%) | 0/5 (0%) |"));
        assert!(md.contains(
            "- **convert-units** · `openai:gpt-4.1-mini` · fail · trial 1: called `get_weather`, expected `convert_units`"
        ));
        // One line per failing trial, at most three per case, then the rest counted.
        assert!(md.contains(
            "- **convert-units** · `openai:gpt-4.1-mini` · fail · trial 3: called `get_weather`, expected `convert_units`\n  - +2 more failing trials of this case: see `report.json`"
        ), "{md}");
        assert!(md.contains("model-call cap stopped the run"));
        assert!(md.contains("temperature 0"));
        assert!(md.contains("- `openai:gpt-4.1-mini` refused `top_p`"));
    }

    #[test]
    fn judge_pass_rates_are_corrected_when_calibrated_and_say_why_when_not() {
        use crate::report::evals::{JudgeCalibration, JudgeRate};
        let mut report = crate::report::test_support::sample_evals_report();
        let rate = JudgeRate {
            model: "openai:gpt-4.1-mini".into(),
            judged_runs: 4,
            passed_runs: 3,
            observed: 0.75,
            corrected: Some(0.55 / 0.7),
            no_better_than_chance: false,
        };
        let calibrated = JudgeCalibration {
            judge_model: "anthropic:claude".into(),
            calibrated: true,
            reason: None,
            file: Some("cal.json".into()),
            tpr: Some(0.9),
            tnr: Some(0.8),
            positives: Some(40),
            negatives: Some(60),
            measured_at: Some("2026-11-30".into()),
            rates: vec![rate.clone()],
        };
        report.evals.as_mut().unwrap().judge_calibration = Some(calibrated.clone());
        let md = render(&report);
        assert!(
            md.contains("- **Judge pass rate** of `openai:gpt-4.1-mini` (judged by `anthropic:claude`): 3/4 trials (75%); Rogan–Gladen corrected: **78.6%** (TPR 0.90, TNR 0.80, n = 40 + 60, measured 2026-11-30)"),
            "{md}"
        );
        let chance = JudgeCalibration {
            rates: vec![JudgeRate { corrected: None, no_better_than_chance: true, ..rate.clone() }],
            tpr: Some(0.6),
            tnr: Some(0.3),
            ..calibrated.clone()
        };
        report.evals.as_mut().unwrap().judge_calibration = Some(chance);
        assert!(
            render(&report).contains("not corrected: the judge is no better than chance (TPR 0.60 + TNR 0.30 ≤ 1)")
        );
        let uncalibrated = JudgeCalibration {
            calibrated: false,
            reason: Some("the calibration file measured `openai:gpt-4.1`, not the judge".into()),
            ..calibrated
        };
        report.evals.as_mut().unwrap().judge_calibration = Some(uncalibrated);
        let md = render(&report);
        assert!(
            md.contains("(75%); uncalibrated: the calibration file measured `openai:gpt-4.1`, not the judge"),
            "{md}"
        );
        assert!(!md.contains("Rogan–Gladen corrected"));
    }

    #[test]
    fn layer1_without_temperature_0_unusable_model_and_not_run() {
        use crate::report::evals::{EvalsSection, ModelOutcome};
        let mut report = crate::report::test_support::sample_evals_report();
        let evals = report.evals.as_mut().unwrap();
        for eval in &mut evals.evals {
            eval.sampling = serde_json::json!({"temperature": 0.7});
        }
        evals.model_status[1].status = ModelOutcome::Unusable;
        evals.model_status[1].detail = Some("the provider answered 401".into());
        evals.call_cap_reached = false;
        let md = render(&report);
        assert!(!md.contains("temperature 0"));
        assert!(!md.contains("call cap"));
        assert!(
            md.contains(
                "`anthropic:claude-sonnet-4-5`: not run — the provider is unusable (the provider answered 401)"
            )
        );

        report.evals =
            Some(EvalsSection { layer1_not_run: Some("no model has an API key".into()), ..EvalsSection::default() });
        let md = render(&report);
        assert!(md.contains("> **Layer 1 did not run:** no model has an API key"), "{md}");
        assert!(!md.contains("| Case |"));
        assert!(md.starts_with("## ✅ pass — MCP 2026-07-28 conformance\n"), "{md}");
    }

    #[test]
    fn layer1_text_is_escaped_and_lists_are_capped() {
        let mut report = crate::report::test_support::sample_evals_report();
        let evals = report.evals.as_mut().unwrap();
        let template = evals.evals[1].clone();
        for i in 0..300 {
            let mut eval = template.clone();
            eval.case = format!("{HOSTILE} {i}");
            for run in &mut eval.traces {
                run.reason = Some(format!("{HOSTILE}\n# heading"));
            }
            evals.evals.push(eval);
        }
        evals.layer1_notes.push(HOSTILE.to_owned());
        evals.models.push("x:a|b".to_owned());
        evals.evals[0].model = "x:a|b".to_owned();
        // Layer 0's lists leave room for layer 1, however long they are.
        let long = "x`y<".repeat(3_000);
        for i in 0..300 {
            report.checks.push(check(&format!("Z-{i}"), &long, Level::Must, Status::Fail, &long));
        }
        let md = render(&report);
        assert!(md.contains("more failures not shown here"));
        assert!(md.contains("### 🧪 Layer 1 — golden set"));
        assert!(md.contains("<sub>mcp-eval 0.1.0"));
        assert!(md.len() <= MAX_CHARS);
        let outside = strip_code_blocks(&md);
        assert!(!outside.contains("<script>"));
        assert_eq!(outside.matches("<details>").count(), outside.matches("</details>").count());
        assert!(!md.lines().any(|l| l.starts_with("# heading")));
        assert!(md.contains("more cases not shown here: see `report.json`"), "{md}");
        // A `|` in a model name does not add a column.
        assert!(md.contains("| Case | Kind | `openai:gpt-4.1-mini` | `x:a\\|b` |"), "{md}");
        let lines =
            md.lines().filter(|l| (l.starts_with("- **") && l.contains(" · trial ")) || l.starts_with("  - +")).count();
        assert_eq!(lines, MAX_FAILING_TRIALS, "{md}");
        let evals = report.evals.as_ref().expect("evals");
        let total: usize = evals
            .evals
            .iter()
            .filter(|eval| eval.status != EvalStatus::Skipped)
            .filter(|eval| eval.status != EvalStatus::Pass || eval.first_bad_trial().is_some())
            .map(|eval| failing_trial_lines(eval).len())
            .sum();
        assert!(md.contains(&format!("- …and {} more lines: see `report.json`", total - MAX_FAILING_TRIALS)), "{md}");
    }

    #[test]
    fn a_long_failing_trial_reason_keeps_its_why_and_drops_whole_context_clauses() {
        let mut report = crate::report::test_support::sample_evals_report();
        let evals = report.evals.as_mut().expect("evals");
        let reason = "sequence: step 2 `complete_todo` matched no call after step 1: its call has argument `todo_id`: \
                      missing (expected to match /^[0-9]+$/); expected `add_todo` → `complete_todo` (strict), the model \
                      made `add_todo`, `complete_todo`";
        let eval = &mut evals.evals[1];
        for run in &mut eval.traces {
            run.reason = Some(reason.to_owned());
        }
        let line = failing_trial_lines(eval).remove(0);
        assert!(
            line.ends_with(
                ": sequence: step 2 `complete_todo` matched no call after step 1: its call has argument `todo_id`: \
                 missing (expected to match /^\\[0-9\\]+\\$/); …\n"
            ),
            "{line}"
        );
        assert!(!line.contains("the model made…"), "{line}");
    }

    #[test]
    fn layer_3s_deltas_and_trends_fit_under_the_limit_or_point_to_the_report() {
        use crate::report::telemetry::{
            Latency, TelemetryDeltas, TelemetrySection, ToolDelta, ToolTelemetry, TrendPoint, TrendsSection,
        };
        let tool = |n: usize| format!("{HOSTILE} tool {n} {}", "x".repeat(100));
        let section = TelemetrySection {
            tools: (0..100)
                .map(|n| ToolTelemetry {
                    tool: tool(n),
                    latency: Latency { count: 1, p50_ms: Some(1), p95_ms: Some(1), max_ms: Some(1) },
                    ..ToolTelemetry::default()
                })
                .collect(),
            deltas: Some(TelemetryDeltas {
                tools: (0..100)
                    .map(|n| ToolDelta {
                        tool: tool(n),
                        p95_ms: 9,
                        baseline_p95_ms: 1,
                        rose: true,
                        ..ToolDelta::default()
                    })
                    .collect(),
                ..TelemetryDeltas::default()
            }),
            trends: Some(TrendsSection {
                kept: 30,
                stored: true,
                points: (0..30)
                    .map(|n| TrendPoint {
                        measured_at: format!("2026-12-{:02}T00:00:00Z", n % 28 + 1),
                        pass_rate: (0..10).map(|m| (format!("{HOSTILE} model {m}"), 0.5)).collect(),
                        p95_ms: (0..10).map(|t| (tool(t), 1000 + n as u64)).collect(),
                        cost_usd: Some(0.123_456),
                        ..TrendPoint::default()
                    })
                    .collect(),
            }),
            ..TelemetrySection::default()
        };
        let fault = |n: usize| crate::report::layer2::FaultResult {
            case: format!("{HOSTILE} {n} {}", "y".repeat(200)),
            model: "openai:m".into(),
            fault: "timeout".into(),
            tool: tool(n),
            on_call: 1,
            sha256: String::new(),
            kind: "soft".into(),
            threshold: 1,
            runs: 1,
            outcomes: crate::report::layer2::OutcomeCounts::default(),
            fabrication_rate: None,
            status: crate::report::layer2::FaultStatus::Fail,
            trials: Vec::new(),
        };
        for crowded in [false, true] {
            let mut report = crate::report::test_support::sample_evals_report();
            if crowded {
                // Every other section at its bound: the deltas and trends may not fit.
                let evals = report.evals.as_mut().expect("evals");
                let template = evals.evals[1].clone();
                for i in 0..300 {
                    evals.evals.push(EvalResult { case: format!("{HOSTILE} {i}"), ..template.clone() });
                }
                report.layers.push(2);
                report.resilience = Some(crate::report::layer2::ResilienceSection {
                    results: (0..300).map(fault).collect(),
                    variants: 300,
                    notes: vec![format!("{HOSTILE} {}", "z".repeat(400)); 10],
                    ..crate::report::layer2::ResilienceSection::default()
                });
            }
            report.telemetry = Some(section.clone());
            let md = render(&report);
            assert!(md.len() <= MAX_CHARS, "{} bytes", md.len());
            assert_eq!(md.lines().filter(|line| line.starts_with("```")).count() % 2, 0, "fences balanced");
            let outside = strip_code_blocks(&md);
            assert_eq!(outside.matches("<details>").count(), outside.matches("</details>").count());
            assert!(!outside.contains("<script>"), "{md}");
            assert!(
                md.contains("#### Trends") || md.contains("deltas or trends do not fit here"),
                "drawn, or pointed to: {md}"
            );
        }
    }

    #[test]
    fn helpers() {
        assert_eq!(clip("abcdef", 3), "abc…");
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(truncate_start("abcdef", 2), "…ef");
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`a"), "`` `a ``");
        assert_eq!(code_block("x"), "```\nx\n```\n");
        assert_eq!(duration(999), "999 ms");
        assert_eq!(duration(2_500), "2.5 s");
        assert_eq!(escape("a|b\nc"), "a\\|b c");
        assert_eq!(message("got `x|y` and `<b>`"), "got `x|y` and `<b>`");
        assert_eq!(message("odd ` tick <b>"), "odd \\` tick &lt;b&gt;");
        use crate::report::evals::Rate;
        assert_eq!(rate(&Rate::new(0, 0)), "—");
        assert_eq!(rate(&Rate::new(2, 3)), "2/3 (66.7%)");
        assert_eq!(rate(&Rate::new(5, 5)), "5/5 (100%)");
    }
}
