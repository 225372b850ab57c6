//! Shards end to end through the binary: the same golden set run whole and as three shards
//! (`--shard i/3`, each against a fresh demo model), the shards joined by `mcp-eval merge`, and
//! the merged verdicts compared with the whole run's; likewise a matrix by model and by shard
//! (one model per leg, two shards each). Every exchange stays on 127.0.0.1.

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

/// `mcp-eval run` of [`SET`] on one model (`openai:demo` or `anthropic:demo`, against a fresh
/// demo model on its wire): one leg of a matrix by model, with `extra` flags.
fn run_leg(set: &Path, server: &DemoServer, model: &str, extra: &[&str]) -> Run {
    let demo = DemoModel::start(set, &FLAKY);
    let mut args = vec!["--server-url", &server.url, "--golden-set", utf8(set), "--model", model];
    args.extend_from_slice(extra);
    let openai_url = demo.openai_url();
    let env: [(&str, &str); 2] = if model.starts_with("openai:") {
        [("OPENAI_BASE_URL", &openai_url), ("OPENAI_API_KEY", "sk-shard-test-openai")]
    } else {
        [("ANTHROPIC_BASE_URL", &demo.url), ("ANTHROPIC_API_KEY", "sk-shard-test-anthropic")]
    };
    run_layer1(&args, &env)
}

/// `mcp-eval merge DIRS --out OUT`.
fn merge(dirs: &[&Path], out: &Path) -> Output {
    merge_with(dirs, out, &[])
}

/// `mcp-eval merge DIRS --out OUT EXTRA…`.
fn merge_with(dirs: &[&Path], out: &Path, extra: &[&str]) -> Output {
    Command::new(binary())
        .arg("merge")
        .args(dirs)
        .arg("--out")
        .arg(out)
        .args(extra)
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
fn a_matrix_by_model_and_by_shard_merges_to_the_unsplit_verdicts() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), SET);
    let server = DemoServer::start(&[]);
    let whole = run_set(&set, &server, &[]);
    let whole_report = whole.report();
    // The merge orders the legs' models lists by name: anthropic's before openai's.
    let mut expected = verdicts(whole_report);
    let first_at = |case: &str| expected.iter().position(|(name, ..)| name == case);
    let mut keyed: Vec<(usize, String, _)> = expected
        .iter()
        .map(|verdict| (first_at(&verdict.0).unwrap_or(0), verdict.1.clone(), verdict.clone()))
        .collect();
    keyed.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    expected = keyed.into_iter().map(|(.., verdict)| verdict).collect();

    let legs: Vec<Run> = ["openai:demo", "anthropic:demo"]
        .into_iter()
        .flat_map(|model| [1, 2].map(|index| (model, index)))
        .map(|(model, index)| run_leg(&set, &server, model, &["--shard", &format!("{index}/2")]))
        .collect();
    let dirs: Vec<&Path> = legs.iter().map(|leg| leg.dir.path()).collect();
    let out = dir.path().join("merged");
    let output = merge(&dirs, &out);
    assert_eq!(output.status.code(), Some(1), "the merged run fails like the whole one: {output:?}");
    let merged = read_report(&out);
    assert_eq!(merged["models"], json!(["anthropic:demo", "openai:demo"]));
    assert_eq!(verdicts(&merged), expected);
    assert_eq!(merged["layers"], json!([0, 1]));
    assert_eq!(merged["counts"], whole_report["counts"], "layer 0 from the first list's shard 1");
    assert_eq!(merged["model_calls"], whole_report["model_calls"], "summed over the four legs");
    let notes = merged["layer1_notes"].to_string();
    assert!(!notes.contains("layer 0 ran in more than one report"), "both shard 1s saw the same server: {notes}");
    for model in ["anthropic:demo", "openai:demo"] {
        let metrics = |report: &Value| {
            report["eval_metrics"].as_array().expect("metrics").iter().find(|m| m["model"] == model).cloned()
        };
        let (got, want) = (metrics(&merged).expect("merged"), metrics(whole_report).expect("whole"));
        for key in ["pass_rate", "tool_selection_accuracy", "argument_accuracy", "cases"] {
            assert_eq!(got[key], want[key], "{model} {key}");
        }
    }

    // The same model in two legs' lists is refused, naming both files.
    let output = merge(&[legs[0].dir.path(), legs[1].dir.path(), whole.dir.path()], &out);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("`openai:demo` is in more than one `models` list"), "{stderr}");
    assert!(stderr.contains(&whole.dir.path().join("report.json").display().to_string()), "{stderr}");
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

#[test]
fn merge_gates_the_whole_run_against_a_baseline_and_diffs_the_tools_on_the_command_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), SET);
    let server = DemoServer::start(&[]);
    let whole = run_set(&set, &server, &[]);
    let whole_report = whole.report();
    let surface = whole_report["tool_surface"].as_array().expect("a run with layer 1 writes the tools it saw");
    assert!(surface.iter().any(|tool| tool["name"] == "test_header_param"), "{surface:?}");

    // A baseline where every case passed 5/5, and whose server listed one tool less and described
    // `test_header_param` otherwise: the merged run dropped and its tools changed since.
    let mut baseline = whole_report.clone();
    for eval in baseline["evals"].as_array_mut().expect("evals") {
        let runs = eval["runs"].clone();
        eval["passed"] = runs.clone();
        eval["completed"] = runs;
        eval["status"] = json!("pass");
    }
    let tools = baseline["tool_surface"].as_array_mut().expect("tools");
    tools.retain(|tool| tool["name"] != "test_structured");
    for tool in tools.iter_mut().filter(|tool| tool["name"] == "test_header_param") {
        tool["description"] = json!("an older description");
    }
    let baseline_file = dir.path().join("baseline.json");
    std::fs::write(&baseline_file, baseline.to_string()).expect("write baseline");

    let shards: Vec<Run> = (1..=2).map(|index| run_set(&set, &server, &["--shard", &format!("{index}/2")])).collect();
    let dirs: Vec<&Path> = shards.iter().map(|shard| shard.dir.path()).collect();
    let out = dir.path().join("merged");
    let output = merge_with(
        &dirs,
        &out,
        &["--fail-on-evals", "regression", "--baseline", utf8(&baseline_file), "--golden-set", utf8(&set)],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "the drop fails the merged gate: {stderr}");
    let merged = read_report(&out);
    let gate = &merged["eval_gate"];
    assert_eq!(gate["result"], "fail", "{gate}");
    assert_eq!(gate["policy"], "regression");
    assert!(gate["flips"].to_string().contains("`wrong` on `openai:demo`: pass 5/5 → fail"), "{gate}");
    assert!(gate["lines"].to_string().contains("not confirmed by a re-run"), "{gate}");
    let changes = gate["tool_changes"].to_string();
    assert!(changes.contains("`test_structured` added; seen by"), "{changes}");
    assert!(changes.contains("`test_header_param` changed (description); seen by"), "{changes}");
    let summary = std::fs::read_to_string(out.join("summary.md")).expect("summary");
    assert!(summary.contains("regression"), "{summary}");

    // `never` reports the same gate and does not fail on it.
    let output = merge_with(
        &dirs,
        &out,
        &["--fail-on-evals", "never", "--baseline", utf8(&baseline_file), "--golden-set", utf8(&set)],
    );
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(read_report(&out)["eval_gate"]["result"], "fail");

    // `--accept-baseline` stores the merged run; merged again against what it stored, nothing
    // dropped and the tools are the same.
    let cache = dir.path().join("cache");
    let output =
        merge_with(&dirs, &out, &["--fail-on-evals", "never", "--cache-dir", utf8(&cache), "--accept-baseline"]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(cache.join("baselines.json").is_file(), "stored");
    assert!(read_report(&out)["layer1_notes"].to_string().contains("stored as the baseline (--accept-baseline)"));
    let output = merge_with(&dirs, &out, &["--fail-on-evals", "regression", "--cache-dir", utf8(&cache)]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let gate = read_report(&out)["eval_gate"].clone();
    assert_eq!(gate["result"], "pass", "{gate}");
    assert_eq!(gate["tool_changes"], json!([]), "{gate}");

    // A golden set that is not the shards' is said to be so, not silently ignored.
    std::fs::create_dir(dir.path().join("other")).expect("mkdir");
    let other = write_set(&dir.path().join("other"), &SET.replace("Echo my region, eu.", "Echo my region, us."));
    let output = merge_with(
        &dirs,
        &out,
        &["--fail-on-evals", "never", "--baseline", utf8(&baseline_file), "--golden-set", utf8(&other)],
    );
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let merged = read_report(&out);
    assert!(merged["layer1_notes"].to_string().contains("is not the one the shards ran"), "{}", merged["layer1_notes"]);
    // The shards' own set is still at the path they recorded: it names the cases.
    assert!(merged["eval_gate"]["tool_changes"].to_string().contains("seen by"), "{}", merged["eval_gate"]);
}

#[test]
fn a_bad_merge_flag_is_an_input_error_naming_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = merge_with(&[dir.path()], &dir.path().join("out"), &["--fail-on-evals", "sometimes"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--fail-on-evals"), "{stderr}");
}
