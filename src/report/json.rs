//! The `report.json` renderer: the documented, versioned machine-readable format
//! (`format_version` 1, see `docs/report-format.md`).
//!
//! The output is the serialized [`RunReport`] with two computed fields inserted right after
//! `outcome_detail`: `verdict` ([`RunReport::verdict`]) and `counts` ([`RunReport::counts`]).

use serde_json::{Map, Value};

use super::model::RunReport;

/// Renders `report.json`: pretty-printed JSON with a trailing newline.
///
/// Field order is stable: the fields of [`RunReport`] in declaration order, with `verdict` and
/// `counts` inserted after `outcome_detail`.
pub fn render(report: &RunReport) -> String {
    let mut text = serde_json::to_string_pretty(&to_value(report)).expect("a serde_json::Value always serializes");
    text.push('\n');
    text
}

/// Builds the JSON value of `report.json` (the same document [`render`] prints).
pub fn to_value(report: &RunReport) -> Value {
    let base = serde_json::to_value(report).expect("RunReport serializes to JSON");
    let Value::Object(fields) = base else { unreachable!("RunReport serializes to a JSON object") };
    let verdict = Value::String(report.verdict().as_str().to_owned());
    let counts = serde_json::to_value(report.counts()).expect("Counts serializes to JSON");
    let mut out = Map::with_capacity(fields.len() + 2);
    for (key, value) in fields {
        let after_detail = key == "outcome_detail";
        out.insert(key, value);
        if after_detail {
            out.insert("verdict".to_owned(), verdict.clone());
            out.insert("counts".to_owned(), counts.clone());
        }
    }
    // Defensive: should the model ever lose `outcome_detail`, still emit both fields.
    if !out.contains_key("verdict") {
        out.insert("verdict".to_owned(), verdict);
        out.insert("counts".to_owned(), counts);
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{RunOutcome, Status};
    use crate::report::test_support::{sample_report, unreachable_report};

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
        assert_eq!(value["checks"], serde_json::json!([]));
        assert_eq!(value["counts"]["pass"], 0);
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
}
