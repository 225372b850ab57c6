//! The sticky pull request comment, as pure functions: the hidden marker that finds our comment
//! again, the hidden line that carries the previous run's [`State`] (the delta itself is
//! [`crate::baseline`]'s), and the body, bounded under GitHub's 65,536-character limit.
//!
//! Talking to GitHub is [`super::client`]'s job; this module does no IO.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::baseline::{Previous, State, delta_line};

/// GitHub's limit on a comment body, in characters.
pub(crate) const GITHUB_COMMENT_LIMIT: usize = 65_536;
const _: () = assert!(MAX_COMMENT_CHARS < GITHUB_COMMENT_LIMIT);
/// Our bound on the body, a margin below [`GITHUB_COMMENT_LIMIT`].
pub(crate) const MAX_COMMENT_CHARS: usize = 65_000;
/// Most ids kept per list in the hidden state.
const MAX_STATE_IDS: usize = 500;
/// The most listed elements whose description digests the hidden state carries (18 bytes each).
const MAX_STATE_DESCRIPTIONS: usize = 300;

/// What the comment shows besides the summary.
#[derive(Debug, Clone)]
pub(crate) struct CommentParts<'a> {
    /// The `comment-id` input.
    pub comment_id: &'a str,
    /// `summary.md`: verdict title first, then failures, warnings, the folded table.
    pub summary: &'a str,
    /// Lines placed right after the verdict (layers requested and run, the trigger's reason).
    pub notes: &'a [String],
    /// This run's state (kept hidden for the next run).
    pub state: &'a State,
    /// Where the full report is, for the truncation pointer (e.g. `mcp-eval-report/report.json`).
    pub report_location: &'a str,
    /// A link to the workflow run, when known.
    pub run_url: Option<&'a str>,
}

/// The hidden first line that identifies our comment for this `comment-id`.
pub(crate) fn marker(comment_id: &str) -> String {
    let comment_id: String = comment_id.chars().filter(|c| !matches!(c, '<' | '>' | '"')).collect();
    format!("<!-- mcp-eval-action comment-id=\"{comment_id}\" -->")
}

/// True when `body` is our comment for this `comment-id`.
pub(crate) fn is_ours(body: &str, comment_id: &str) -> bool {
    body.lines().next().is_some_and(|line| line.trim() == marker(comment_id))
}

/// The hidden line holding the state.
pub(crate) fn render_state(state: &State) -> String {
    let list = |ids: &BTreeSet<String>| ids.iter().take(MAX_STATE_IDS).cloned().collect::<Vec<_>>().join(",");
    // Each element as a short hash of its name and a short digest of its texts: names come from
    // the server and could hold anything, hashes cannot end the comment.
    let descriptions: Vec<String> = state
        .descriptions
        .iter()
        .take(MAX_STATE_DESCRIPTIONS)
        .map(|(element, digest)| {
            format!("{}:{}", crate::baseline::hashed_key(element), digest.chars().take(8).collect::<String>())
        })
        .collect();
    format!(
        "<!-- mcp-eval-state v1 fail={} warn={} rules={} desc={} -->",
        list(&state.failing),
        list(&state.warning),
        state.catalogue,
        descriptions.join(",")
    )
}

/// Reads the state back from a previous comment's body; `None` when absent or unreadable.
/// Only plausible check ids are kept (a comment can be edited by anyone with write access).
pub(crate) fn parse_state(body: &str) -> Option<State> {
    let line = body.lines().find(|line| line.starts_with("<!-- mcp-eval-state v1 "))?;
    let inner = line.strip_prefix("<!-- mcp-eval-state v1 ")?.strip_suffix(" -->")?;
    // A state written before catalogue generations were recorded is of the first one.
    let mut state = State { catalogue: 1, ..State::default() };
    for field in inner.split(' ') {
        let (key, value) = field.split_once('=')?;
        let ids = value
            .split(',')
            .filter(|id| !id.is_empty() && id.len() <= 32 && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
            .take(MAX_STATE_IDS)
            .map(str::to_owned);
        match key {
            "fail" => state.failing.extend(ids),
            "warn" => state.warning.extend(ids),
            "rules" => state.catalogue = value.parse().unwrap_or(1),
            "desc" => {
                let hex = |text: &str| text.len() == 8 && text.chars().all(|c| c.is_ascii_hexdigit());
                for entry in value.split(',').take(MAX_STATE_DESCRIPTIONS) {
                    if let Some((key, digest)) = entry.split_once(':').filter(|(key, digest)| hex(key) && hex(digest)) {
                        state.descriptions.insert(format!("#{key}"), digest.to_owned());
                    }
                }
            }
            _ => {}
        }
    }
    Some(state)
}

/// Renders the whole comment body: marker, hidden state, the verdict line of the summary, the
/// delta and the notes, then the rest of the summary (failures with their fix, warnings, the
/// folded table), and a link to the run. Bounded by [`MAX_COMMENT_CHARS`] characters: a longer
/// body is cut at a top-level line, open `<details>` are closed, and a pointer to the report
/// file ends it.
pub(crate) fn render(parts: &CommentParts<'_>, previous: Previous<'_>) -> String {
    let mut head = String::new();
    let _ = writeln!(head, "{}", marker(parts.comment_id));
    let _ = writeln!(head, "{}", render_state(parts.state));
    let (title, rest) = parts.summary.split_once('\n').unwrap_or((parts.summary, ""));
    let _ = writeln!(head, "{title}\n");
    let _ = writeln!(head, "{}\n", delta_line(previous, parts.state));
    for note in parts.notes {
        let _ = writeln!(head, "{note}\n");
    }
    let mut tail = String::new();
    if let Some(url) = parts.run_url {
        let _ = write!(tail, "\n[Workflow run]({url}) · ");
    } else {
        tail.push('\n');
    }
    let _ = writeln!(tail, "full report: `{}`", parts.report_location);

    let budget = MAX_COMMENT_CHARS.saturating_sub(head.chars().count() + tail.chars().count());
    let body = bound(rest, budget, parts.report_location);
    format!("{head}{body}{tail}")
}

/// `text` when it fits in `max` characters; otherwise its longest prefix that ends on a line
/// outside any code fence, with open `<details>` closed and a pointer to `report_location`.
pub(crate) fn bound(text: &str, max: usize, report_location: &str) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let note = format!("\n_…the rest does not fit in a comment: see `{report_location}` (and the job summary)._\n");
    let room = max.saturating_sub(note.chars().count() + 200);
    let mut kept = String::new();
    let mut kept_chars = 0;
    let mut fence: Option<usize> = None;
    let mut depth = 0usize;
    // The last safe cut: (byte length of `kept`, details depth there).
    let mut safe = (0usize, 0usize);
    for line in text.split_inclusive('\n') {
        let line_chars = line.chars().count();
        if kept_chars + line_chars > room {
            break;
        }
        kept.push_str(line);
        kept_chars += line_chars;
        let trimmed = line.trim_start();
        let ticks = trimmed.chars().take_while(|c| *c == '`').count();
        match fence {
            Some(open) if ticks >= open && trimmed.trim_end().chars().all(|c| c == '`') => fence = None,
            Some(_) => {}
            None if ticks >= 3 => fence = Some(ticks),
            None => {
                depth += line.matches("<details>").count();
                depth = depth.saturating_sub(line.matches("</details>").count());
            }
        }
        if fence.is_none() {
            safe = (kept.len(), depth);
        }
    }
    kept.truncate(safe.0);
    for _ in 0..safe.1 {
        kept.push_str("\n</details>\n");
    }
    kept.push_str(&note);
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(fail: &[&str], warn: &[&str]) -> State {
        State {
            failing: fail.iter().map(|id| (*id).to_owned()).collect(),
            warning: warn.iter().map(|id| (*id).to_owned()).collect(),
            ..State::default()
        }
    }

    #[test]
    fn the_marker_identifies_one_comment_id() {
        let body = format!("{}\nrest", marker("matrix-a"));
        assert!(is_ours(&body, "matrix-a"));
        assert!(!is_ours(&body, "matrix-b"));
        assert!(!is_ours("hello", "matrix-a"));
        assert!(!marker("x --> <b>").contains("-->  "), "{}", marker("x --> <b>"));
        assert_eq!(marker("x --> <b>").matches("-->").count(), 1);
    }

    #[test]
    fn state_round_trips_and_hostile_ids_are_dropped() {
        let current = state(&["D-1", "H-4"], &["P-2"]);
        assert_eq!(parse_state(&format!("x\n{}\n", render_state(&current))), Some(current));
        // A state of the current catalogue (`rules=`), as `state` builds it.
        let hostile = format!(
            "<!-- mcp-eval-state v1 fail=D-1,<script>,`x` warn= rules={} -->",
            crate::conformance::requirements::CATALOGUE
        );
        assert_eq!(parse_state(&hostile), Some(state(&["D-1"], &[])));
        assert_eq!(parse_state("no state here"), None);
    }

    #[test]
    fn rows_added_since_the_previous_run_are_new_rules_not_new_failures() {
        let before_the_scan = parse_state("<!-- mcp-eval-state v1 fail=D-1 warn= -->").expect("a state");
        assert_eq!(before_the_scan.catalogue, 1, "a state without `rules=` is of the first catalogue");
        let current = state(&["D-1", "SEC-3", "H-4"], &["SEC-7"]);
        let line = delta_line(Previous::Run(&before_the_scan), &current);
        assert!(line.contains("1 new failure(s): `H-4`"), "{line}");
        assert!(line.contains("2 rule(s) new in this version, not in the previous run: `SEC-3`, `SEC-7`"), "{line}");
        assert!(!line.contains("new warning"), "{line}");
        let since_the_scan = state(&["D-1"], &[]);
        let line = delta_line(Previous::Run(&since_the_scan), &current);
        assert!(line.contains("2 new failure(s): `H-4`, `SEC-3`"), "{line}");
    }

    #[test]
    fn a_description_changed_since_the_previous_run_is_called_out_for_review() {
        let with = |pairs: &[(&str, &str)]| State {
            descriptions: pairs.iter().map(|(element, digest)| ((*element).to_owned(), (*digest).to_owned())).collect(),
            ..state(&[], &[])
        };
        let previous = with(&[("tools[read_file]", "0123456789abcdef"), ("tools[list]", "aaaaaaaabbbbbbbb")]);
        // As the next run reads it back from the comment: hashed names, short digests.
        let carried = parse_state(&render_state(&previous)).expect("a state");
        assert_eq!(carried.descriptions.len(), 2);
        assert!(carried.descriptions.keys().all(|key| key.starts_with('#')), "{:?}", carried.descriptions);
        let current = with(&[
            ("tools[read_file]", "ffffffff89abcdef"),
            ("tools[list]", "aaaaaaaa00000000"),
            ("tools[new --> tool]", "1111111111111111"),
        ]);
        let line = delta_line(Previous::Run(&carried), &current);
        assert!(
            line.contains("🔎 1 description(s) changed, review what the model will read: `tools[read_file]`"),
            "{line}"
        );
        assert!(line.contains("🔎 1 newly listed: `tools[new --> tool]`"), "{line}");
        assert!(!render_state(&current).contains("new -->"), "names never enter the hidden line");
        let unknown = parse_state("<!-- mcp-eval-state v1 fail= warn= rules=2 -->").expect("a state");
        assert!(
            delta_line(Previous::Run(&unknown), &current).contains("no change"),
            "no digests before: nothing to say"
        );
    }

    #[test]
    fn the_delta_names_new_and_fixed() {
        let previous = state(&["D-1", "H-4"], &["P-2"]);
        let current = state(&["H-4", "E-1"], &["C-1"]);
        let line = delta_line(Previous::Run(&previous), &current);
        assert!(line.contains("1 new failure(s): `E-1`"), "{line}");
        assert!(line.contains("1 fixed: `D-1`"), "{line}");
        assert!(line.contains("new warning(s): `C-1`"), "{line}");
        assert!(line.contains("resolved: `P-2`"), "{line}");
        assert!(delta_line(Previous::Run(&current), &current).contains("no change"));
        assert!(delta_line(Previous::First, &current).contains("first run"));
        assert!(!delta_line(Previous::Unread, &current).contains("first run"), "unread is not first");
    }

    #[test]
    fn the_body_leads_with_the_verdict_and_stays_bounded() {
        let current = state(&["D-1"], &[]);
        let mut summary = String::from("## ❌ fail: 1 check failed — MCP 2026-07-28 conformance\n\n- **Target:** x\n");
        summary.push_str("\n<details><summary>All checks</summary>\n\n");
        while summary.len() < 200_000 {
            summary.push_str("| D-1 | a row | MUST | fail | message |\n");
        }
        summary.push_str("```\ncode\n```\n</details>\n");
        let notes = vec!["**Layers:** requested 0,1,2,3; ran 0.".to_owned()];
        let parts = CommentParts {
            comment_id: "default",
            summary: &summary,
            notes: &notes,
            state: &current,
            report_location: "mcp-eval-report/report.json",
            run_url: Some("https://github.example/o/r/actions/runs/1"),
        };
        let body = render(&parts, Previous::First);
        assert!(body.chars().count() <= MAX_COMMENT_CHARS);
        let lines: Vec<&str> = body.lines().collect();
        assert_eq!(lines[0], marker("default"));
        assert!(lines[1].starts_with("<!-- mcp-eval-state"));
        assert!(lines[2].starts_with("## ❌ fail"));
        assert!(body.contains("see `mcp-eval-report/report.json`"));
        assert_eq!(body.matches("<details>").count(), body.matches("</details>").count());
        assert!(body.ends_with("full report: `mcp-eval-report/report.json`\n"));
    }

    #[test]
    fn a_waived_row_shows_in_the_comment_with_its_reason() {
        let summary = crate::report::markdown::render(&crate::report::test_support::waived_report());
        let current = state(&[], &[]);
        let parts = CommentParts {
            comment_id: "default",
            summary: &summary,
            notes: &[],
            state: &current,
            report_location: "mcp-eval-report/report.json",
            run_url: None,
        };
        let body = render(&parts, Previous::First);
        assert!(body.contains("### 🙈 Waived (1)"), "{body}");
        assert!(body.contains("waived by the config file (mcp-eval.yaml:3): an upstream SDK's error"), "{body}");
        assert!(body.contains("mcp-eval.yaml:7: the waiver of H-4 matches nothing"), "{body}");
    }

    #[test]
    fn the_comment_shows_layer_3_deltas_and_trends_charts() {
        use crate::report::telemetry::{TelemetryDeltas, TelemetrySection, ToolDelta, TrendPoint, TrendsSection};
        let mut report = crate::report::model::RunReport::empty_for_tests();
        let point = |at: &str, p95: u64| TrendPoint {
            measured_at: at.into(),
            p95_ms: [("search".to_owned(), p95)].into(),
            cost_usd: Some(0.01),
            ..TrendPoint::default()
        };
        report.telemetry = Some(TelemetrySection {
            deltas: Some(TelemetryDeltas {
                baseline: "the last 1 stored run(s) with layer-3 figures".into(),
                stored_runs: 1,
                tools: vec![ToolDelta {
                    tool: "search".into(),
                    p95_ms: 400,
                    baseline_p95_ms: 100,
                    delta_ms: 300,
                    spread_ms: 0,
                    stored: 1,
                    rose: true,
                }],
                ..TelemetryDeltas::default()
            }),
            trends: Some(TrendsSection {
                kept: 30,
                stored: false,
                points: vec![point("2026-12-01T00:00:00Z", 100), point("2026-12-02T00:00:00Z", 400)],
            }),
            ..TelemetrySection::default()
        });
        let summary = crate::report::markdown::render(&report);
        let current = state(&[], &[]);
        let parts = CommentParts {
            comment_id: "default",
            summary: &summary,
            notes: &[],
            state: &current,
            report_location: "mcp-eval-report/report.json",
            run_url: None,
        };
        let body = render(&parts, Previous::First);
        assert!(body.contains("| `search` | 400 ms | 100 ms | +300 ms | 0 ms (1) | ⚠️ rose |"), "{body}");
        assert!(body.contains("```mermaid\nxychart-beta\n    title \"p95 latency per tool\""), "{body}");
        assert!(body.contains("    line \"search\" [100, 400]"), "{body}");
        assert_eq!(body.lines().filter(|line| line.starts_with("```")).count() % 2, 0, "{body}");
    }

    #[test]
    fn a_cut_never_lands_inside_a_code_fence() {
        let text = format!("intro\n\n```\n{}```\nafter\n", "line of code\n".repeat(100));
        let bounded = bound(&text, 400, "r.json");
        assert_eq!(bounded.matches("```").count() % 2, 0, "{bounded}");
        assert!(bounded.contains("see `r.json`"));
    }

    #[test]
    fn the_gate_line_reaches_the_comment_whole() {
        let baseline = "none stored yet (the default branch stores one when layer 1 runs clean there — on schedule, or on push and workflow_dispatch with the gate passing — and accept-baseline: true stores one whatever the gate says)";
        let mut report = crate::report::model::RunReport::empty_for_tests();
        report.layers = vec![1];
        let gate = crate::report::evals::Layer1GateSection {
            result: "no-baseline".into(),
            baseline: baseline.into(),
            ..Default::default()
        };
        report.evals = Some(crate::report::evals::EvalsSection { eval_gate: Some(gate), ..Default::default() });
        let summary = crate::report::markdown::render(&report);
        let parts = CommentParts {
            comment_id: "default",
            summary: &summary,
            notes: &[],
            state: &state(&[], &[]),
            report_location: "mcp-eval-report/report.json",
            run_url: None,
        };
        let body = render(&parts, Previous::First);
        let line =
            body.lines().find(|line| line.starts_with("**Regression gate:**")).unwrap_or_else(|| panic!("{body}"));
        assert!(line.ends_with("stores one whatever the gate says)"), "cut mid-sentence: {line}");
        assert!(!line.contains('…'), "{line}");
    }

    #[test]
    fn the_comment_of_a_replayed_run_says_so_in_its_title_table_and_gate_line() {
        let report = crate::report::test_support::replayed_evals_report();
        let summary = crate::report::markdown::render(&report);
        let current = state(&[], &[]);
        let parts = CommentParts {
            comment_id: "default",
            summary: &summary,
            notes: &[],
            state: &current,
            report_location: "mcp-eval-report/report.json",
            run_url: None,
        };
        let body = render(&parts, Previous::First);
        let title = body.lines().nth(2).unwrap_or_default();
        assert!(title.contains("golden set (replayed from cassettes)"), "{title}");
        assert!(body.contains("`openai:gpt-4.1-mini` (replayed) |"), "{body}");
        assert!(body.contains("- **Model calls:** 60 (0 live, 60 replayed from cassettes)"), "{body}");
        let gate = body.lines().find(|line| line.starts_with("**Regression gate:**")).expect("a gate line");
        assert!(gate.ends_with("reached on replayed model answers (cassettes), not live calls"), "{gate}");
    }
}
