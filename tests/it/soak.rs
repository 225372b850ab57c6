//! A small soak under faults, `bench/soak.sh`'s twin: a golden set of one trial per case (each
//! case's prompt and tool arguments its own) against the stdio demo server failing a share of its
//! `tools/call`s and the demo model answering a share of its requests with 429 or 500, both
//! seeded (the hidden `--fail-rate`/`--seed` fixtures). Every trial is accounted for, and the
//! same seed gives the same outcomes one trial at a time and eight at once.

use std::path::Path;

use serde_json::{Value, json};

use crate::layer1::{DemoModel, run_layer1};
use crate::support::demo_stdio_command;

/// Cases (one trial each).
const CASES: usize = 24;

/// The share of tool calls and of model requests that fail.
const RATE: &str = "0.2";

/// The seed of the failures.
const SEED: &str = "11";

/// Writes the soak's set to `dir/set.yaml` (the shapes of `bench/soak.sh`): a call, a strict
/// sequence in at most 3 turns, another call, a negative case. Returns the demo model's
/// `--on-fault` flags: the first two shapes call a failed tool again.
fn soak_set(dir: &Path) -> Vec<String> {
    let mut yaml = String::from("version: 1\ndefaults: {runs: 1, kind: hard, max_turns: 4}\ncases:\n");
    let mut on_fault = Vec::new();
    for i in 0..CASES {
        let tag = format!("soak-{i:04}");
        let case = match i % 4 {
            0 => json!({"id": tag, "prompt": format!("Case {tag}: echo the word {tag} with the text tool."),
                        "expect_tool": "test_simple_text", "expect_args": {"text": {"match": "exact", "value": tag}}}),
            1 => json!({"id": tag, "prompt": format!("Case {tag}: echo {tag}-a, then send the region {tag}-b."),
                        "max_turns": 3, "expect_sequence": {"order": "strict", "steps": [
                            {"tool": "test_simple_text", "args": {"text": {"match": "exact", "value": format!("{tag}-a")}}},
                            {"tool": "test_header_param", "args": {"region": {"match": "exact", "value": format!("{tag}-b")}}}]}}),
            2 => json!({"id": tag, "prompt": format!("Case {tag}: my region is {tag}; echo it back."),
                        "expect_tool": "test_header_param", "expect_args": {"region": {"match": "exact", "value": tag}}}),
            _ => json!({"id": tag, "prompt": format!("Case {tag}: thanks, that was all."), "negative": true}),
        };
        if i % 4 < 2 {
            on_fault.extend(["--on-fault".to_owned(), format!("{tag}:retry")]);
        }
        yaml.push_str(&format!("  - {case}\n"));
    }
    std::fs::write(dir.join("set.yaml"), yaml).expect("write the set");
    on_fault
}

/// What one run gave: its exit status, each trial's (case, trial, status, ending, cause, reason)
/// in report order, the model calls, the model turns and the tool calls that failed.
struct Soaked {
    code: i32,
    outcomes: Vec<Value>,
    model_calls: u64,
    turns: u64,
    failed_tools: usize,
}

/// One run at `concurrency`, against a fresh demo model (its attempt counts start at zero).
fn soak(dir: &Path, on_fault: &[String], concurrency: &str) -> Soaked {
    let set = dir.join("set.yaml");
    let mut args: Vec<&str> = vec!["--delay-ms", "0", "--fail-rate", RATE, "--seed", SEED];
    args.extend(on_fault.iter().map(String::as_str));
    let model = DemoModel::start(&set, &args);
    let server = format!("{} --fail-rate {RATE} --seed {SEED}", demo_stdio_command(&[]));
    let run = run_layer1(
        &[
            "--server-cmd",
            &server,
            "--layers",
            "1",
            "--golden-set",
            set.to_str().expect("utf-8 path"),
            "--model",
            "openai:soak",
            "--concurrency",
            concurrency,
            "--max-model-calls",
            "400",
        ],
        &[("OPENAI_BASE_URL", &model.openai_url()), ("OPENAI_API_KEY", "sk-soak")],
    );
    let report = run.report();
    let traces: Vec<(&Value, &Value)> = report["evals"]
        .as_array()
        .expect("evals")
        .iter()
        .flat_map(|case| case["traces"].as_array().into_iter().flatten().map(move |trace| (case, trace)))
        .collect();
    Soaked {
        code: run.code(),
        outcomes: traces
            .iter()
            .map(|(case, trace)| {
                json!([case["case"], trace["run"], trace["status"], trace["ending"], trace["cause"], trace["reason"]])
            })
            .collect(),
        model_calls: report["model_calls"].as_u64().unwrap_or_default(),
        turns: traces.iter().map(|(_, trace)| trace["turns"].as_u64().unwrap_or_default()).sum(),
        failed_tools: traces
            .iter()
            .flat_map(|(_, trace)| trace["calls"].as_array().into_iter().flatten())
            .filter(|call| call["is_error"] == true)
            .count(),
    }
}

#[test]
fn a_seeded_soak_accounts_for_every_trial_and_gives_the_same_outcomes_at_any_concurrency() {
    let dir = tempfile::tempdir().expect("temp dir");
    let on_fault = soak_set(dir.path());
    let one = soak(dir.path(), &on_fault, "1");
    assert!(one.code == 0 || one.code == 1, "a verdict, not exit {}", one.code);
    assert_eq!(one.outcomes.len(), CASES, "every trial is in the report");
    for outcome in &one.outcomes {
        let status = outcome[2].as_str().unwrap_or_default();
        assert!(["pass", "fail", "error"].contains(&status), "{outcome}");
        assert!(status != "error" || outcome[5].as_str().is_some_and(|reason| !reason.is_empty()), "{outcome}");
    }
    assert!(
        one.model_calls > one.turns,
        "the model's failures were retried: {} calls, {} turns",
        one.model_calls,
        one.turns
    );
    assert!(one.failed_tools > 0, "some tool calls failed");
    let eight = soak(dir.path(), &on_fault, "8");
    assert_eq!(eight.code, one.code);
    assert_eq!(eight.outcomes, one.outcomes, "the same seed, the same outcomes, whatever the concurrency");
    assert_eq!((eight.model_calls, eight.failed_tools), (one.model_calls, one.failed_tools));
}
