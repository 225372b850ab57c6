//! `--sarif FILE`: SARIF 2.1.0 for GitHub code scanning, read back with an independent SARIF
//! model from PyPI (`sarif-pydantic`, installed by `scripts/install-action-tools.sh`) and held to
//! what GitHub's upload enforces: every result names a rule of the run, a location's URI is
//! relative, its start line at least 1, and at most 25,000 results and rules per run, 20 tags
//! per rule.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support::{DemoServer, repo_root, run};

/// Reads `path` with sarif-pydantic, checks GitHub's upload rules there, and returns
/// `{"rules": [ids], "results": [{"rule", "level", "uri", "line", "message"}]}`.
pub(crate) fn read_sarif(path: &Path) -> Value {
    let python = repo_root().join(".interop/lint-venv/bin/python");
    assert!(
        python.exists(),
        "sarif-pydantic is not installed: run `scripts/install-action-tools.sh` (scripts/test.sh runs it); expected {}",
        python.display()
    );
    let script = r#"
import json, sys
from sarif_pydantic import load
log = load(sys.argv[1])
assert log.version == "2.1.0", log.version
assert len(log.runs) == 1, len(log.runs)
run = log.runs[0]
assert run.tool.driver.name == "mcp-eval"
rules = run.tool.driver.rules or []
ids = [rule.id for rule in rules]
assert len(ids) == len(set(ids)), "a rule twice"
assert len(rules) <= 25000 and len(run.results or []) <= 25000
invocations = run.invocations or []
out = {"rules": ids, "results": [], "help": {rule.id: rule.help_uri for rule in rules if rule.help_uri},
       "successful": [invocation.execution_successful for invocation in invocations]}
for rule in rules:
    tags = (rule.properties or {}).get("tags", []) if isinstance(rule.properties, dict) else getattr(rule.properties, "tags", [])
    assert len(tags) <= 20, rule.id
    assert rule.short_description and rule.short_description.text, rule.id
    assert rule.full_description and rule.full_description.text, rule.id
for result in run.results or []:
    assert result.rule_id, "a result without a ruleId"
    assert result.rule_id in ids, result.rule_id
    assert result.message and result.message.text
    assert len(result.locations or []) <= 1000
    uri = line = None
    for location in result.locations or []:
        physical = location.physical_location
        uri = physical.artifact_location.uri
        assert "://" not in uri and not uri.startswith("/"), uri
        line = physical.region.start_line
        assert line >= 1, line
    level = result.level.value if hasattr(result.level, "value") else result.level
    out["results"].append({"rule": result.rule_id, "level": level, "uri": uri, "line": line, "message": result.message.text})
print(json.dumps(out))
"#;
    let output = Command::new(python).args(["-c", script]).arg(path).output().expect("run python");
    assert!(
        output.status.success(),
        "sarif-pydantic refused {}: {}",
        path.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("the checker's JSON")
}

#[test]
fn the_cli_writes_sarif_whose_failing_rows_point_at_the_config_line_naming_the_server() {
    let server = DemoServer::start(&["t-2"]);
    let dir = tempfile::tempdir().expect("temp dir");
    // Run from the directory that holds the config file, as a repository would.
    let config = dir.path().join("mcp-eval.yaml");
    std::fs::write(&config, format!("# the server under test\nlayers: 0\nserver:\n  url: {}\n", server.url))
        .expect("config");
    let sarif = dir.path().join("out/mcp-eval.sarif");
    let output = Command::new(crate::support::binary())
        .current_dir(dir.path())
        .args(["run", "--config", "mcp-eval.yaml", "--sarif", "out/mcp-eval.sarif", "--quiet", "--fail-on", "never"])
        .args(["--out", "report"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let log = read_sarif(&sarif);
    let results = log["results"].as_array().expect("results");
    let t2 = results.iter().find(|result| result["rule"] == "T-2").unwrap_or_else(|| panic!("no T-2 in {log}"));
    assert_eq!((t2["uri"].as_str(), t2["line"].as_u64()), (Some("mcp-eval.yaml"), Some(4)), "{t2}");
    assert!(results.iter().all(|result| result["level"] == "error" || result["level"] == "warning"), "{log}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report/report.json")).expect("report"))
            .expect("json");
    let bad: Vec<&str> = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|check| check["status"] == "fail" || check["status"] == "warn")
        .filter_map(|check| check["id"].as_str())
        .collect();
    let reported: Vec<&str> = results.iter().filter_map(|result| result["rule"].as_str()).collect();
    assert_eq!(reported, bad, "one result per failing or warning row, in the report's order");
    let rules = log["rules"].as_array().expect("rules");
    assert!(rules.iter().any(|rule| rule == "SEC-1"), "the static scan's rows are rules too");
    assert!(rules.len() > 100, "every graded requirement is a rule: {}", rules.len());
    let help = log["help"].as_object().expect("help links");
    assert!(
        help["T-2"]
            .as_str()
            .is_some_and(|uri| uri.starts_with("https://modelcontextprotocol.io/specification/2026-07-28/")),
        "{help:?}"
    );
    assert!(help.len() > 50, "the spec's rows link to their sections: {}", help.len());
    assert_eq!(log["successful"], serde_json::json!([true]));
}

#[test]
fn an_unreachable_server_gives_a_run_that_says_it_did_not_execute_successfully() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sarif = dir.path().join("down.sarif");
    let run = run(&["--server-url", "http://127.0.0.1:9/mcp", "--sarif", sarif.to_str().expect("utf-8")]);
    assert_eq!(run.code(), 3, "{}", run.stderr());
    let log = read_sarif(&sarif);
    assert_eq!(log["successful"], serde_json::json!([false]), "no clean bill for a server that was not reached");
}

/// Public reports github/codeql-action#1738 and #2459: code scanning refuses a result without a
/// location ("locationFromSarifResult: expected at least one location"), so a run with no config
/// file still gives every result one (here the SARIF file's, the last resort).
#[test]
fn codeql_action_1738_without_a_config_file_every_result_still_has_a_location() {
    let server = DemoServer::start(&["t-2"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let sarif = dir.path().join("findings.sarif");
    let sarif_arg = sarif.to_str().expect("utf-8");
    let run = run(&["--server-url", &server.url, "--layers", "0", "--sarif", sarif_arg, "--fail-on", "never"]);
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let log = read_sarif(&sarif);
    let results = log["results"].as_array().expect("results");
    assert!(results.iter().any(|result| result["rule"] == "T-2"), "{log}");
    assert!(results.iter().all(|result| result["uri"] == "findings.sarif" && result["line"] == 1), "{log}");
}

#[test]
fn a_clean_server_gives_rules_and_no_results() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sarif = dir.path().join("clean.sarif");
    let run = run(&["--demo", "--layers", "0", "--sarif", sarif.to_str().expect("utf-8")]);
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let log = read_sarif(&sarif);
    assert_eq!(log["results"], serde_json::json!([]), "{log}");
    assert!(!log["rules"].as_array().expect("rules").is_empty());
}
