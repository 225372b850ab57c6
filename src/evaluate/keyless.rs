//! The Action's keyless run: when layer 1 was asked for and no model has a key (a fork's pull
//! request gets no secrets), `golden check --execute` stands in for it over the same session.

use crate::golden::GoldenSet;
use crate::mcp::era;
use crate::mcp::evidence::Redactor;
use crate::settings::Settings;

use super::RunEvent;

/// Whether the Action runs `golden check --execute` in place of layer 1: layer 1 was asked for,
/// and did not run because no model has a key (a fork's pull request gets no secrets), with no
/// cassettes to replay.
pub(super) fn in_place_of_layer1(
    settings: &Settings,
    section: &crate::report::evals::EvalsSection,
    cassettes: bool,
) -> bool {
    use crate::report::evals::ModelOutcome;
    settings.action.is_some()
        && !cassettes
        && section.layer1_not_run.is_some()
        && !section.model_status.is_empty()
        && section.model_status.iter().all(|status| status.status == ModelOutcome::NoApiKey)
}

/// `golden check --execute` over the session layer 1 would have used: each expected call of
/// the set made once for real, no model; its lines kept (at most 200) for the report, a notice
/// with its summary.
pub(super) async fn execute_in_place(
    settings: &Settings,
    set: &GoldenSet,
    connected: &era::Connected,
    surface: &crate::mcp::tools::ToolSurface,
    events: &(dyn Fn(&RunEvent) + Sync),
) -> crate::report::evals::ExpectedCalls {
    const MAX_LINES: usize = 200;
    let redactor = Redactor::new(settings.secrets());
    let mut lines: Vec<String> = Vec::new();
    let mut keep = |line: &str| {
        if lines.len() < MAX_LINES {
            lines.push(line.to_owned());
        }
    };
    let tally = crate::authoring::execute::run_into(set, connected, surface, &redactor, &mut keep).await;
    let calls = crate::report::evals::ExpectedCalls {
        expected: tally.expected,
        sent: tally.sent,
        ok: tally.ok,
        failed: tally.is_error + tally.rpc_error + tally.no_answer + tally.refused,
        not_executed: tally.not_executed,
        lines,
    };
    events(&RunEvent::Notice {
        text: format!("layer 1: no model key; {}", crate::report::evals::expected_calls_line(&calls)),
    });
    calls
}
