//! Shards end to end through the binary: the same golden set run whole and as three shards
//! (`--shard i/3`, each against a fresh demo model), the shards joined by `mcp-eval merge`, and
//! the merged verdicts compared with the whole run's. Every exchange stays on 127.0.0.1.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::layer1::{DemoModel, FLAKY, SET, run_layer1, utf8, write_set};
use crate::support::{DemoServer, Run, binary};

/// `mcp-eval run` of [`SET`] on two models (one demo model per wire, started fresh so each run
/// sees the same flaky answers), with `extra` flags.
fn run_set(set: &Path, server: &DemoServer, extra: &[&str]) -> Run {
    let for_openai = DemoModel::start(set, &FLAKY);
    let for_anthropic = DemoModel::start(set, &FLAKY);
    let mut args = vec![
        "--server-url",
        &server.url,
        "--golden-set",
        utf8(set),
        "--model",
        "openai:demo",
        "--model",
        "anthropic:demo",
    ];
    args.extend_from_slice(extra);
    run_layer1(
        &args,
        &[
            ("OPENAI_BASE_URL", &for_openai.openai_url()),
            ("OPENAI_API_KEY", "sk-shard-test-openai"),
            ("ANTHROPIC_BASE_URL", &for_anthropic.url),
            ("ANTHROPIC_API_KEY", "sk-shard-test-anthropic"),
        ],
    )
}

/// `mcp-eval merge DIRS --out OUT`.
fn merge(dirs: &[&Path], out: &Path) -> Output {
    Command::new(binary())
        .arg("merge")
        .args(dirs)
        .arg("--out")
        .arg(out)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp-eval merge")
}

/// `(case, model, status, passed, runs)` of every eval, in report order.
fn verdicts(report: &Value) -> Vec<(String, String, String, u64, u64)> {
    report["evals"]
        .as_array()
        .expect("evals")
        .iter()
        .map(|eval| {
            (
                eval["case"].as_str().unwrap_or_default().to_owned(),
                eval["model"].as_str().unwrap_or_default().to_owned(),
                eval["status"].as_str().unwrap_or_default().to_owned(),
                eval["passed"].as_u64().unwrap_or(u64::MAX),
                eval["runs"].as_u64().unwrap_or(u64::MAX),
            )
        })
        .collect()
}

fn read_report(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("report.json")).expect("report.json");
    serde_json::from_str(&text).expect("JSON")
}

#[test]
fn three_shards_merge_to_the_unsharded_verdicts() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), SET);
    let server = DemoServer::start(&[]);
    let whole = run_set(&set, &server, &[]);
    assert_eq!(whole.code(), 1, "a failing case fails the run: {}", whole.stderr());
    let expected = verdicts(whole.report());
    assert_eq!(expected.len(), 10);

    let shards: Vec<Run> = (1..=3).map(|index| run_set(&set, &server, &["--shard", &format!("{index}/3")])).collect();
    let mut seen = 0;
    for (at, shard) in shards.iter().enumerate() {
        let report = shard.report();
        assert_eq!(report["shard"], json!({"index": at + 1, "count": 3}), "{}", shard.stderr());
        // Round-robin over (case, model) positions 0..10: shard 1 takes 0, 3, 6, 9.
        let taken: Vec<_> = expected.iter().skip(at).step_by(3).map(|(case, model, ..)| (case, model)).collect();
        let got: Vec<(String, String)> = verdicts(report).into_iter().map(|(case, model, ..)| (case, model)).collect();
        assert_eq!(got.iter().map(|(c, m)| (c, m)).collect::<Vec<_>>(), taken, "shard {}", at + 1);
        seen += got.len();
        let layers = if at == 0 { json!([0, 1]) } else { json!([1]) };
        assert_eq!(report["layers"], layers, "layer 0 runs in shard 1 only");
        if at > 0 {
            assert_eq!(report["checks"], json!([]));
            assert!(report["layer1_notes"].to_string().contains("layer 0 runs in shard 1 only"));
        }
    }
    assert_eq!(seen, expected.len(), "the shards are disjoint and cover the list");

    let out = dir.path().join("merged");
    // Any order on the command line.
    let output = merge(&[shards[2].dir.path(), shards[0].dir.path(), shards[1].dir.path()], &out);
    assert_eq!(output.status.code(), Some(1), "the merged run fails like the whole one: {output:?}");
    let merged = read_report(&out);
    assert_eq!(verdicts(&merged), expected);
    let whole_report = whole.report();
    assert_eq!(merged["layers"], json!([0, 1]));
    assert_eq!(merged["counts"], whole_report["counts"], "layer 0 comes from shard 1");
    assert_eq!(merged["model_calls"], whole_report["model_calls"]);
    assert_eq!(merged["golden_set"], whole_report["golden_set"]);
    assert_eq!(merged["verdict"], "fail");
    assert!(merged.get("shard").is_none(), "the merged report covers the whole list");
    for (merged_metrics, whole_metrics) in merged["eval_metrics"]
        .as_array()
        .expect("metrics")
        .iter()
        .zip(whole_report["eval_metrics"].as_array().expect("metrics"))
    {
        for key in
            ["model", "pass_rate", "tool_selection_accuracy", "over_triggering_rate", "argument_accuracy", "cases"]
        {
            assert_eq!(merged_metrics[key], whole_metrics[key], "{key}");
        }
    }
    assert!(out.join("junit.xml").is_file() && out.join("summary.md").is_file());
}

#[test]
fn merge_refuses_shards_of_different_golden_sets() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), SET);
    let server = DemoServer::start(&[]);
    let first = run_set(&set, &server, &["--shard", "1/2", "--runs", "1"]);
    let second = run_set(&set, &server, &["--shard", "2/2", "--runs", "1"]);
    let mut report = read_report(second.dir.path());
    report["golden_set"]["sha256"] = json!("sha256:0000000000000000000000000000000000000000000000000000000000000000");
    std::fs::write(second.dir.path().join("report.json"), report.to_string()).expect("rewrite");

    let out = dir.path().join("merged");
    let output = merge(&[first.dir.path(), second.dir.path()], &out);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("different golden sets"), "{stderr}");
    for shard in [&first, &second] {
        let file = shard.dir.path().join("report.json");
        assert!(stderr.contains(&file.display().to_string()), "names {}: {stderr}", file.display());
    }
    assert!(!out.join("report.json").exists(), "nothing merged");

    // A shard given twice, or one missing, is refused too.
    let output = merge(&[first.dir.path(), first.dir.path()], &out);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("given twice"));
    let output = merge(&[first.dir.path()], &out);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("2/2 missing"));
}

#[test]
fn a_bad_shard_is_an_input_error_naming_the_flag() {
    for bad in ["0/3", "4/3", "1/257", "two"] {
        let run = crate::support::run(&["--demo", "--shard", bad]);
        assert_eq!(run.code(), 2, "{bad}: {}", run.stderr());
        assert!(run.stderr().contains("--shard"), "{bad}: {}", run.stderr());
        assert!(run.stderr().contains("INDEX/COUNT"), "{bad}: {}", run.stderr());
    }
}
