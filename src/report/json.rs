//! The `report.json` wire format: the documented, versioned machine-readable format
//! (`format_version` 1, see `docs/report-format.md`), written by [`render`] and read back by
//! [`parse`] into the same [`RunReport`] types (a baseline and `merge` read old reports).
//!
//! The document's shape is [`super::wire`]: the [`RunReport`] with the gate's `verdict` and the
//! `counts` after `outcome_detail`.

use serde_json::Value;

use super::model::{FORMAT_VERSION, RunReport, WAIVED_FORMAT_VERSION};
use super::wire::{ReportIn, ReportOut};

/// Renders `report.json`: pretty-printed JSON with a trailing newline, fields in the model's
/// declaration order.
pub fn render(report: &RunReport) -> String {
    let mut text = serde_json::to_string_pretty(&ReportOut::new(report)).expect("a RunReport always serializes");
    text.push('\n');
    text
}

/// Builds the JSON value of `report.json` (the same document [`render`] prints).
pub fn to_value(report: &RunReport) -> Value {
    serde_json::to_value(ReportOut::new(report)).expect("a RunReport always serializes")
}

/// Why a `report.json` could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// Not JSON, or not the shape of a report.
    #[error("not a mcp-eval report: {0}")]
    Shape(#[from] serde_json::Error),
    /// A `format_version` this build does not read.
    #[error(
        "report format_version {found} is not {FORMAT_VERSION} or {WAIVED_FORMAT_VERSION}, the versions this build reads"
    )]
    Version {
        /// The version found.
        found: u64,
    },
}

/// Reads a `report.json` back. Members this version does not know (added by a later version of
/// format 1) are ignored.
///
/// # Errors
/// [`ParseError::Version`] for another `format_version`, [`ParseError::Shape`] otherwise.
pub fn parse(text: &str) -> Result<RunReport, ParseError> {
    let value: Value = serde_json::from_str(text)?;
    let found = value.get("format_version").and_then(Value::as_u64).unwrap_or(0);
    if found != u64::from(FORMAT_VERSION) && found != u64::from(WAIVED_FORMAT_VERSION) {
        return Err(ParseError::Version { found });
    }
    Ok(serde_json::from_value::<ReportIn>(value)?.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{RunOutcome, Status};
    use crate::report::test_support::{sample_report, unreachable_report};
    use serde_json::Value;

    #[test]
    fn round_trips_and_has_documented_fields() {
        let report = sample_report();
        let text = render(&report);
        assert!(text.ends_with("}\n"));
        let value: Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(value, to_value(&report));

        let keys: Vec<&str> = value.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "format_version",
                "tool",
                "spec_revision",
                "started_at",
                "duration_ms",
                "layers",
                "outcome",
                "outcome_detail",
                "verdict",
                "counts",
                "server",
                "checks",
            ]
        );
        assert_eq!(value["format_version"], 1);
        assert_eq!(value["outcome"], "completed");
        assert_eq!(value["verdict"], "fail");
        assert_eq!(
            value["counts"],
            serde_json::json!({"pass": 1, "fail": 1, "warn": 1, "not_applicable": 1, "error": 1})
        );

        let server = value["server"].as_object().unwrap();
        for key in [
            "transport",
            "target",
            "era",
            "era_evidence",
            "supported_versions",
            "server_info",
            "capabilities",
            "stderr_tail",
        ] {
            assert!(server.contains_key(key), "server.{key} missing");
        }

        let checks = value["checks"].as_array().unwrap();
        assert_eq!(checks.len(), report.checks.len());
        let statuses: Vec<&str> = checks.iter().map(|c| c["status"].as_str().unwrap()).collect();
        assert_eq!(statuses, ["pass", "fail", "warn", "not_applicable", "error"]);
        let levels: Vec<&str> = checks.iter().map(|c| c["level"].as_str().unwrap()).collect();
        assert_eq!(levels, ["MUST", "MUST", "SHOULD", "MUST", "INFO"]);
        for check in checks {
            let keys: Vec<&str> = check.as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(keys, ["id", "title", "level", "status", "message", "spec", "evidence", "duration_ms"]);
        }
        assert_eq!(value["started_at"], "2026-08-01T12:00:00Z");
        assert_eq!(parse(&text).expect("reads back"), report);
        assert_eq!(checks[1]["evidence"][0]["label"], "request");
    }

    #[test]
    fn verdict_pass_when_no_failure() {
        let mut report = sample_report();
        report.checks.retain(|c| c.status != Status::Fail);
        let value: Value = serde_json::from_str(&render(&report)).unwrap();
        assert_eq!(value["verdict"], "pass");
        assert_eq!(value["counts"]["fail"], 0);
    }

    #[test]
    fn verdict_of_interrupted_run() {
        let mut report = sample_report();
        report.outcome = RunOutcome::Interrupted;
        assert_eq!(to_value(&report)["verdict"], "fail");
        report.checks.retain(|c| c.status != Status::Fail);
        assert_eq!(to_value(&report)["verdict"], "error");
    }

    #[test]
    fn unreachable_verdict_is_error() {
        let value: Value = serde_json::from_str(&render(&unreachable_report())).unwrap();
        assert_eq!(value["outcome"], "unreachable");
        assert_eq!(value["verdict"], "error");
        assert_eq!(value["server"]["era"], Value::Null);
        assert_eq!(value["checks"].as_array().map(Vec::len), Some(1));
        assert_eq!(value["checks"][0]["id"], "CONNECT");
        assert_eq!(value["checks"][0]["status"], "error");
        assert_eq!(value["counts"]["pass"], 0);
        assert_eq!(value["counts"]["error"], 1);
    }

    #[test]
    fn a_migration_row_carries_its_flag_and_other_rows_do_not() {
        let mut report = sample_report();
        report.checks[4].migration = true;
        let value = to_value(&report);
        assert_eq!(value["checks"][4]["migration"], true);
        assert!(value["checks"][0].get("migration").is_none());
        assert!(parse(&render(&report)).expect("reads back").checks[4].migration);
    }

    #[test]
    fn a_waived_row_is_written_as_version_2_with_its_waiver_and_reads_back() {
        let plain = to_value(&sample_report());
        assert_eq!(plain["format_version"], 1, "a report without waivers keeps version 1");
        assert!(plain["counts"].get("waived").is_none() && plain.get("waiver_notes").is_none());

        let report = crate::report::test_support::waived_report();
        let value = to_value(&report);
        assert_eq!(value["format_version"], 2);
        assert_eq!((value["verdict"].as_str(), value["counts"]["waived"].as_u64()), (Some("pass"), Some(1)));
        assert_eq!(value["checks"][1]["status"], "waived");
        assert_eq!(
            value["checks"][1]["waiver"],
            serde_json::json!({"reason": "an upstream SDK's error", "source": "mcp-eval.yaml:3", "status": "fail", "expires": "2027-03-31"})
        );
        assert_eq!(
            value["waiver_notes"][0],
            "mcp-eval.yaml:7: the waiver of H-4 matches nothing (H-4 is not applicable)"
        );
        assert_eq!(parse(&render(&report)).expect("version 2 reads back"), report);
    }

    #[test]
    fn another_format_version_or_a_foreign_document_is_refused() {
        let mut value = to_value(&sample_report());
        value["format_version"] = 3.into();
        assert!(matches!(parse(&value.to_string()), Err(ParseError::Version { found: 3 })));
        assert!(matches!(parse("{\"format_version\": 1}"), Err(ParseError::Shape(_))));
        assert!(parse("not json").is_err());
    }

    #[test]
    fn members_added_later_in_format_1_are_ignored_on_read() {
        let mut value = to_value(&sample_report());
        value["evals"] = serde_json::json!([]);
        assert_eq!(parse(&value.to_string()).expect("reads"), sample_report());
    }

    #[test]
    fn layer_0s_own_time_is_written_after_the_runs_time_only_when_known_and_reads_back() {
        let mut report = sample_report();
        assert!(to_value(&report).get("layer0_duration_ms").is_none(), "absent when unknown");
        report.layer0_duration_ms = Some(311);
        let text = render(&report);
        let value: Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(value["layer0_duration_ms"], 311);
        let keys: Vec<&String> = value.as_object().expect("object").keys().collect();
        let at = |key: &str| keys.iter().position(|k| *k == key).expect("key");
        assert_eq!(at("layer0_duration_ms"), at("duration_ms") + 1);
        assert_eq!(parse(&text).expect("reads back"), report);
    }

    #[test]
    fn the_layer1_section_round_trips_at_the_top_level() {
        let report = crate::report::test_support::sample_evals_report();
        let text = render(&report);
        let value: Value = serde_json::from_str(&text).expect("valid JSON");
        for key in [
            "golden_set",
            "models",
            "model_status",
            "evals",
            "eval_metrics",
            "layer1_not_run",
            "layer1_notes",
            "call_cap_reached",
            "model_calls",
        ] {
            assert!(value.get(key).is_some(), "{key} missing at the top level");
        }
        assert_eq!(value["verdict"], "fail", "a failed case fails the verdict though every check passed");
        let back = parse(&text).expect("reads back");
        assert_eq!(back.evals, report.evals);
        assert_eq!(back, report);
    }

    #[test]
    fn layer_3_deltas_and_trends_round_trip() {
        use crate::report::telemetry::{
            CaseDelta, Change, TelemetryDeltas, TelemetrySection, ToolDelta, TrendPoint, TrendsSection,
        };
        let mut report = sample_report();
        report.telemetry = Some(TelemetrySection {
            deltas: Some(TelemetryDeltas {
                baseline: "the last 1 stored run(s) with layer-3 figures".into(),
                stored_runs: 1,
                measured_at: "2026-12-01T00:00:00Z".into(),
                rule: crate::report::telemetry::P95_RISE_RULE.into(),
                tools: vec![ToolDelta {
                    tool: "t".into(),
                    p95_ms: 9,
                    baseline_p95_ms: 4,
                    delta_ms: 5,
                    spread_ms: 0,
                    stored: 1,
                    rose: true,
                }],
                cases: vec![CaseDelta {
                    case: "c".into(),
                    model: "openai:m".into(),
                    layer: 1,
                    trials: 2,
                    baseline_trials: 1,
                    input_tokens: Change::of(Some(10.5), Some(10.0)),
                    output_tokens: Change::of(None, Some(3.0)),
                    cost_usd: Change::of(None, None),
                }],
            }),
            trends: Some(TrendsSection {
                kept: 30,
                stored: true,
                points: vec![TrendPoint {
                    measured_at: "2026-12-01T00:00:00Z".into(),
                    commit: Some("abc".into()),
                    pass_rate: [("openai:m".to_owned(), 0.5)].into(),
                    p95_ms: [("t".to_owned(), 9)].into(),
                    cost_usd: None,
                }],
            }),
            ..TelemetrySection::default()
        });
        let text = render(&report);
        let value: Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(
            value["telemetry"]["deltas"]["cases"][0]["output_tokens"],
            serde_json::json!({"now": null, "baseline": 3.0, "delta": null})
        );
        assert_eq!(value["telemetry"]["trends"]["points"][0]["cost_usd"], Value::Null, "unknown, never 0");
        assert_eq!(parse(&text).expect("reads back"), report);
        // A report written before they existed reads with none.
        let mut older = value.clone();
        older["telemetry"].as_object_mut().expect("object").retain(|key, _| key != "deltas" && key != "trends");
        let back = parse(&older.to_string()).expect("reads back");
        assert_eq!(
            back.telemetry.as_ref().map(|telemetry| (telemetry.deltas.is_none(), telemetry.trends.is_none())),
            Some((true, true))
        );
    }

    /// The keys of every object in `value`, by path, so two documents can be compared by shape.
    fn shape(value: &Value, path: &str, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, child) in map {
                    let child_path = format!("{path}.{key}");
                    out.push(child_path.clone());
                    shape(child, &child_path, out);
                }
            }
            Value::Array(items) => {
                for item in items {
                    shape(item, &format!("{path}[]"), out);
                }
            }
            _ => {}
        }
    }

    #[test]
    fn documented_example_matches_the_renderer() {
        let doc = include_str!("../../docs/report-format.md");
        let start = doc.find("```json\n").expect("example in docs") + "```json\n".len();
        let end = start + doc[start..].find("\n```").unwrap();
        let example: Value = serde_json::from_str(&doc[start..end]).expect("example is JSON");

        let mut report = sample_report();
        report.checks.truncate(2);
        let rendered = to_value(&report);
        let (mut want, mut got) = (Vec::new(), Vec::new());
        shape(&example, "", &mut want);
        shape(&rendered, "", &mut got);
        want.dedup();
        got.dedup();
        assert_eq!(want, got);
        assert_eq!(example["checks"], rendered["checks"]);
        assert_eq!(example["server"], rendered["server"]);

        // Every field is documented in a table row of its own.
        // (Except inside `server_info` and `capabilities`, which are the server's own objects.)
        let ours = got.iter().filter(|p| !p.contains(".server_info.") && !p.contains(".capabilities."));
        for key in ours.filter_map(|p| p.rsplit('.').next()) {
            let key = key.trim_end_matches("[]");
            assert!(doc.contains(&format!("| `{key}`")), "{key} not documented");
        }
    }

    #[test]
    fn a_replayed_model_reads_back_and_an_old_report_without_the_replay_members_reads_as_live() {
        let report = crate::report::test_support::replayed_evals_report();
        let text = render(&report);
        let value: Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(value["model_status"][0]["status"], "ran", "format 1 readers still read `ran`");
        assert_eq!(value["model_status"][0]["replayed"], true);
        assert_eq!(value["replayed_model_calls"], 60);
        assert_eq!(parse(&text).expect("reads back"), report);

        // A report written before the members were kept: the model reads as live, no call replayed.
        let mut old = value;
        old["model_status"][0].as_object_mut().expect("an object").remove("replayed");
        old.as_object_mut().expect("an object").remove("replayed_model_calls");
        let read = parse(&old.to_string()).expect("an old report reads back");
        let evals = read.evals.expect("layer 1");
        assert!(!evals.model_status[0].replayed && !evals.any_replayed(), "{:?}", evals.model_status);
        assert_eq!((evals.model_calls, evals.live_model_calls()), (60, 60));

        // A live run's report carries neither member.
        let live = to_value(&crate::report::test_support::sample_evals_report());
        assert_eq!(live["model_status"][0].get("replayed"), None);
        assert_eq!(live.get("replayed_model_calls"), None);
    }
}
