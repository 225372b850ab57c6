//! Layer 3 end to end through the binary: layer 1's golden set, run once per case by the demo
//! model (`mcp-eval demo-model`) against the demo server with `chaos-slow-tools` (every
//! `tools/call` result sent a known delay late), over HTTP and over stdio. report.json's
//! `telemetry.tools` must show each tool's latency at least that delay; without the break the
//! same figures must be there. No figure has an upper bound: nothing here is timed, so a slow
//! machine cannot fail it. Every exchange stays on 127.0.0.1.

use serde_json::{Value, json};

use crate::layer1::{DemoModel, OPENAI_CANARY, SET, run_layer1, utf8, write_set};
use crate::support::{DemoServer, Run, demo_stdio_command};

/// The delay `chaos-slow-tools` adds to every `tools/call` result, in milliseconds (the demo
/// server's `SLOW_TOOLS_DELAY`; its break description states it).
const SLOW_TOOLS_DELAY_MS: u64 = 200;

/// The tools the demo model calls for [`SET`] (its negative case calls none).
const CALLED_TOOLS: [&str; 4] = ["test_header_param", "test_progress", "test_simple_text", "test_structured"];

/// The start of the layer-3 table of tool latencies in summary.md.
const LATENCY_TABLE_HEADER: &str = "| Tool | Calls | p50 | p95 | Max |";

/// Runs [`SET`] with one trial per case through the demo model, layers 1 and 3, against the
/// server `server` names (`--server-url URL` or `--server-cmd CMD`); the run must pass.
fn run_set(server: [&str; 2]) -> Run {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), SET);
    let model = DemoModel::start(&set, &[]);
    let mut args = server.to_vec();
    args.extend_from_slice(&["--golden-set", utf8(&set), "--model", "openai:demo", "--runs", "1", "--layers", "1,3"]);
    let run = run_layer1(&args, &[("OPENAI_BASE_URL", &model.openai_url()), ("OPENAI_API_KEY", OPENAI_CANARY)]);
    assert_eq!(run.code(), 0, "{}", run.stderr());
    assert_eq!(run.report()["layers"], json!([1, 3]));
    let summary = run.file("summary.md");
    assert!(summary.contains("Layer 3 — latency, tokens and cost"), "{summary}");
    assert!(summary.contains(LATENCY_TABLE_HEADER), "no latency table in {summary}");
    let junit = run.file("junit.xml");
    assert!(junit.contains("<testsuite name=\"layer-3 telemetry\""), "{junit}");
    for tool in CALLED_TOOLS {
        assert!(junit.contains(&format!("<testcase name=\"{tool} · latency\"")), "{tool}: {junit}");
    }
    run
}

/// `(tool, p50_ms, p95_ms, max_ms)` of every `telemetry.tools` row with samples, after checking
/// that every tool the set calls has such a row and that no call failed on the way.
fn latencies(run: &Run) -> Vec<(String, u64, u64, u64)> {
    let report = run.report();
    let rows = report["telemetry"]["tools"].as_array().unwrap_or_else(|| panic!("no telemetry.tools in {report}"));
    let count = |row: &Value| row["latency"]["count"].as_u64().unwrap_or_else(|| panic!("no latency count: {row}"));
    for tool in CALLED_TOOLS {
        let row = rows.iter().find(|row| row["tool"] == tool).unwrap_or_else(|| panic!("no row of {tool}: {report}"));
        assert!(count(row) > 0, "{tool} was called but not measured: {row}");
    }
    rows.iter()
        .filter(|row| count(row) > 0)
        .map(|row| {
            assert_eq!(row["transport_errors"], 0, "{row}");
            let figure = |name: &str| row["latency"][name].as_u64().unwrap_or_else(|| panic!("no {name}: {row}"));
            let tool = row["tool"].as_str().expect("a tool name").to_owned();
            (tool, figure("p50_ms"), figure("p95_ms"), figure("max_ms"))
        })
        .collect()
}

/// Every figure of every measured tool is at least the server's delay.
fn assert_at_least_the_delay(run: &Run) {
    for (tool, p50, p95, max) in latencies(run) {
        for (name, figure) in [("p50", p50), ("p95", p95), ("max", max)] {
            assert!(
                figure >= SLOW_TOOLS_DELAY_MS,
                "{tool}: {name} {figure} ms < the server's {SLOW_TOOLS_DELAY_MS} ms"
            );
        }
    }
}

#[test]
fn each_tool_latency_over_http_is_at_least_the_servers_delay() {
    let server = DemoServer::start(&["chaos-slow-tools"]);
    let run = run_set(["--server-url", &server.url]);
    assert_eq!(run.report()["server"]["transport"], "http");
    assert_at_least_the_delay(&run);
}

#[test]
fn each_tool_latency_over_stdio_is_at_least_the_servers_delay() {
    let run = run_set(["--server-cmd", &demo_stdio_command(&["chaos-slow-tools"])]);
    assert_eq!(run.report()["server"]["transport"], "stdio");
    assert_at_least_the_delay(&run);
}

#[test]
fn without_a_delay_every_called_tool_still_has_its_latency_figures() {
    let server = DemoServer::start(&[]);
    let run = run_set(["--server-url", &server.url]);
    let measured = latencies(&run);
    assert!(measured.len() >= CALLED_TOOLS.len(), "{measured:?}");
}

/// `golden/demo-prices.yaml` in the repository, as a path.
fn demo_prices() -> String {
    utf8(&crate::support::repo_root().join("golden/demo-prices.yaml")).to_owned()
}

/// Runs the demo's layers 0, 1 and 3 with `extra` flags.
fn run_demo(extra: &[&str]) -> Run {
    let mut args = vec!["--demo", "--layers", "0,1,3"];
    args.extend_from_slice(extra);
    run_layer1(&args, &[])
}

#[test]
fn the_demo_prices_its_calls_from_the_example_table_and_records_its_hash() {
    let run = run_demo(&[]);
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let telemetry = &run.report()["telemetry"];
    let table = &telemetry["price_table"];
    assert_eq!(table["path"], "golden/demo-prices.yaml");
    assert_eq!(table["as_of"], "2026-12-01");
    let bytes = std::fs::read(demo_prices()).expect("the example table");
    let sha = {
        use sha2::Digest as _;
        format!("{:x}", sha2::Sha256::digest(&bytes))
    };
    assert_eq!(table["sha256"], sha.as_str());
    let total = telemetry["total"]["cost_usd"].as_f64().expect("every demo model is priced");
    assert!(total > 0.0, "{total}");
    assert!(telemetry["prompt_cache_saved_usd"].as_f64().is_some_and(|saved| saved > 0.0), "{telemetry}");
    let calls = telemetry["model_calls"].as_array().expect("calls");
    assert!(calls.iter().all(|call| call["cost_usd"].as_f64().is_some()), "every call priced");
    let summary = run.file("summary.md");
    assert!(summary.contains("prices as of 2026-12-01"), "{summary}");
    // The demo replays every call from cassettes: layer 3 says so wherever it shows a figure.
    assert!(calls.iter().all(|call| call["replayed"] == true), "{calls:?}");
    let answered = telemetry["total"]["model_calls"].as_u64().expect("a count");
    assert_eq!(telemetry["replayed_model_calls"].as_u64(), Some(answered), "{telemetry}");
    let section = summary.split("### 📈 Layer 3").nth(1).expect("a layer 3 section");
    assert!(section.contains(&format!("all {answered} replayed from cassettes: no model was called")), "{section}");
    assert!(section.contains("no money was spent this run"), "{section}");
    assert!(section.contains("prompt caches would have saved"), "{section}");
    let rows: Vec<&str> = section.lines().filter(|line| line.starts_with("| `replay:demo:")).collect();
    assert!(!rows.is_empty(), "{section}");
    for row in rows {
        assert!(row.contains("(replayed) |") && !row.contains(" 0 ms"), "{row}");
    }
    for model in telemetry["models"].as_array().expect("models") {
        assert_eq!(model["latency"]["count"], 0, "a cassette lookup is no latency sample: {model}");
    }
}

#[test]
fn a_model_the_table_does_not_price_has_an_unknown_cost_and_a_note_naming_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let table = dir.path().join("prices.yaml");
    // Only the model under test (by a glob); the judge and the embeddings model are unpriced,
    // and an entry for another provider with a matching glob prices nothing here.
    std::fs::write(
        &table,
        "as_of: 2026-11-30\nmodels:\n  - match: {provider: openai, model: \"demo:*\"}\n    input: 100\n    output: 100\n  - match: {provider: replay, model: \"demo:scr*\"}\n    input: 0.4\n    output: 1.6\n",
    )
    .expect("write");
    let run = run_demo(&["--prices", utf8(&table)]);
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let telemetry = &run.report()["telemetry"];
    let models = telemetry["models"].as_array().expect("models");
    let row = |label: &str| models.iter().find(|row| row["model"] == label).expect(label);
    assert!(row("replay:demo:scripted")["spend"]["cost_usd"].as_f64().is_some());
    assert_eq!(row("replay:demo:judge")["spend"]["cost_usd"], Value::Null, "unknown, never 0");
    assert_eq!(telemetry["total"]["cost_usd"], Value::Null, "a sum with an unpriced part is unknown");
    let notes = telemetry["notes"].to_string();
    assert!(notes.contains("no entry for `replay:demo:judge`"), "{notes}");
    assert!(!notes.contains("replay:demo:scripted"), "{notes}");
}

#[test]
fn a_bad_price_table_is_refused_before_any_connection_naming_its_line_and_field() {
    let dir = tempfile::tempdir().expect("temp dir");
    let table = dir.path().join("prices.yaml");
    std::fs::write(&table, "as_of: 2026-11-30\nmodels:\n  - match: {provider: openai, model: gpt}\n    input: cheap\n")
        .expect("write");
    let run = run_demo(&["--prices", utf8(&table)]);
    assert_eq!(run.code(), 2, "{}", run.stderr());
    let stderr = run.stderr();
    assert!(stderr.contains("prices.yaml:4") && stderr.contains("models[0].input"), "{stderr}");
    assert!(stderr.contains("models[0].output") && stderr.contains("missing"), "{stderr}");
}

#[test]
fn a_budget_refuses_to_start_with_an_unpriced_model_unless_allowed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), SET);
    let table = dir.path().join("prices.yaml");
    std::fs::write(
        &table,
        "as_of: 2026-11-30\nmodels:\n  - match: {provider: anthropic, model: \"*\"}\n    input: 1\n    output: 1\n",
    )
    .expect("write");
    let model = DemoModel::start(&set, &[]);
    let server = DemoServer::start(&[]);
    let vars = [("OPENAI_BASE_URL", model.openai_url()), ("OPENAI_API_KEY", OPENAI_CANARY.to_owned())];
    let vars: Vec<(&str, &str)> = vars.iter().map(|(name, value)| (*name, value.as_str())).collect();
    let base = ["--server-url", &server.url, "--golden-set", utf8(&set), "--model", "openai:demo", "--runs", "1"];
    let mut args = base.to_vec();
    args.extend_from_slice(&["--prices", utf8(&table), "--max-cost-usd", "5"]);
    let refused = run_layer1(&args, &vars);
    assert_eq!(refused.code(), 2, "{}", refused.stderr());
    assert!(refused.stderr().contains("prices no `openai:demo`"), "{}", refused.stderr());
    assert!(refused.stderr().contains("--allow-unpriced"), "{}", refused.stderr());
    args.push("--allow-unpriced");
    let allowed = run_layer1(&args, &vars);
    assert_eq!(allowed.code(), 0, "{}", allowed.stderr());
    let budget = &allowed.report()["budget"];
    assert_eq!((budget["spent_usd"].as_f64(), budget["stopped"].clone()), (Some(0.0), Value::Null), "{budget}");
}

#[test]
fn a_budget_on_the_demo_server_with_models_of_ones_own_needs_a_price_table() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), SET);
    let run = run_layer1(
        &["--demo", "--golden-set", utf8(&set), "--model", "openai:demo", "--max-cost-usd", "1", "--layers", "1"],
        &[],
    );
    assert_eq!(run.code(), 2, "the example table prices the demo's own models only: {}", run.stderr());
    assert!(run.stderr().contains("needs a price table"), "{}", run.stderr());
}

#[test]
fn an_estimate_over_the_budget_stops_the_run_before_any_model_call() {
    let run = run_demo(&["--max-cost-usd", "0.001"]);
    assert_eq!(run.code(), 6, "{}", run.stderr());
    let report = run.report();
    assert_eq!(report["budget"]["stopped"], "estimate");
    assert!(report["budget"]["estimate_usd"].as_f64().is_some_and(|estimate| estimate > 0.001));
    assert_eq!(report["budget"]["spent_usd"], 0.0);
    assert_eq!(report["verdict"], "error");
    assert!(report["layer1_not_run"].as_str().is_some_and(|why| why.contains("no model call was made")), "{report}");
    assert_eq!(report["telemetry"]["model_calls"], json!([]));
    assert!(run.file("summary.md").contains("Cost budget"));
    let junit = run.file("junit.xml");
    assert!(junit.contains("<testcase name=\"cost budget\"") && junit.contains("type=\"budget\""), "{junit}");
}

#[test]
fn a_budget_the_calls_overrun_stops_the_run_skips_what_it_cut_and_reports_the_overshoot() {
    // The demo's recordings with every call reporting 1,000 times the input it read: the
    // estimate (from the requests) fits in the budget, the calls do not.
    let dir = tempfile::tempdir().expect("temp dir");
    let cassettes = dir.path().join("cassettes");
    std::fs::create_dir(&cassettes).expect("dir");
    let recorded = crate::support::repo_root().join("golden/cassettes");
    for name in ["demo_scripted.json", "demo_judge.json", "demo_embeddings.json"] {
        let mut cassette: Value =
            serde_json::from_str(&std::fs::read_to_string(recorded.join(name)).expect("cassette")).expect("json");
        for interaction in cassette["interactions"].as_array_mut().into_iter().flatten() {
            if let Some(read) = interaction.pointer_mut("/response/usage/input_tokens") {
                *read = json!(read.as_u64().unwrap_or(0) * 1000);
            }
        }
        std::fs::write(cassettes.join(name), cassette.to_string()).expect("write");
    }
    let golden = crate::support::repo_root().join("golden/demo.yaml");
    let prices = demo_prices();
    let run = run_layer1(
        &[
            "--demo",
            "--golden-set",
            utf8(&golden),
            "--model",
            "replay:demo:scripted",
            "--judge-model",
            "replay:demo:judge",
            "--embedding-model",
            "replay:demo:embeddings",
            "--cassettes",
            utf8(&cassettes),
            "--prices",
            &prices,
            "--max-cost-usd",
            "1",
            "--layers",
            "1,3",
        ],
        &[],
    );
    assert_eq!(run.code(), 6, "{}", run.stderr());
    let report = run.report();
    let budget = &report["budget"];
    assert_eq!(budget["stopped"], "budget", "{budget}");
    let spent = budget["spent_usd"].as_f64().expect("spent");
    assert!(spent >= 1.0, "the calls in flight finish: {budget}");
    assert!((budget["overshoot_usd"].as_f64().expect("overshoot") - (spent - 1.0)).abs() < 1e-6, "{budget}");
    assert!(budget["calls_refused"].as_u64().is_some_and(|refused| refused > 0), "{budget}");
    assert!(budget["estimate_usd"].as_f64().is_some_and(|estimate| estimate <= 1.0), "{budget}");
    let skipped: Vec<&Value> =
        report["evals"].as_array().expect("evals").iter().filter(|eval| eval["status"] == "skipped").collect();
    assert!(!skipped.is_empty());
    assert!(
        skipped
            .iter()
            .all(|eval| eval["reason"].as_str().is_some_and(|why| why.starts_with("skipped: cost budget reached"))),
        "{skipped:?}"
    );
    assert_eq!(report["verdict"], "error");
    let summary = run.file("summary.md");
    assert!(summary.contains("the cost budget stopped the run") && summary.contains("overshoot"), "{summary}");
}

#[test]
fn layer_3_alone_says_on_stderr_that_it_did_not_run_and_why() {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = std::process::Command::new(crate::support::binary())
        .args(["run", "--demo", "--layers", "3", "--out"])
        .arg(dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run mcp-eval");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("layer 3 did not run: layer 3 measures the trials of layers 1 and 2"), "{stderr}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).expect("report")).expect("json");
    assert!(report["telemetry"]["not_run"].is_string());
}

/// Runs [`SET`] once per case through the demo model on `server`, layers 1 and 3, with `cache`
/// as the cache directory (write-only: every run measures afresh, so layer 3 has trials to
/// measure) and a price table for the model; `extra` flags after. The run must exit 0: no
/// layer-3 delta fails it.
fn run_stored(
    server: &DemoServer,
    set: &std::path::Path,
    model: &DemoModel,
    cache: &std::path::Path,
    extra: &[&str],
) -> Run {
    let prices = cache.parent().expect("a parent").join("prices.yaml");
    std::fs::write(
        &prices,
        "as_of: 2026-11-30\nmodels:\n  - match: {provider: openai, model: demo}\n    input: 1\n    output: 2\n",
    )
    .expect("write");
    let mut args = vec![
        "--server-url",
        &server.url,
        "--golden-set",
        utf8(set),
        "--model",
        "openai:demo",
        "--runs",
        "1",
        "--layers",
        "1,3",
        "--cache-dir",
        utf8(cache),
        "--cache-mode",
        "write-only",
        "--prices",
        utf8(&prices),
    ];
    args.extend_from_slice(extra);
    let run = run_layer1(&args, &[("OPENAI_BASE_URL", &model.openai_url()), ("OPENAI_API_KEY", OPENAI_CANARY)]);
    assert_eq!(run.code(), 0, "{}", run.stderr());
    run
}

/// The labels of the x axis of the chart titled `title` in `summary`.
fn chart_points(summary: &str, title: &str) -> usize {
    let chart = summary
        .split("```mermaid\n")
        .find(|block| block.contains(&format!("title \"{title}\"")))
        .unwrap_or_else(|| panic!("no chart {title} in {summary}"));
    let axis = chart.lines().find(|line| line.trim_start().starts_with("x-axis [")).expect("an x axis");
    axis.matches('"').count() / 2
}

#[test]
fn stored_runs_give_deltas_flagging_a_slower_server_and_trends_drawn_as_mermaid_charts() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), SET);
    let cache = dir.path().join("cache");
    let model = DemoModel::start(&set, &[]);
    let fast = DemoServer::start(&[]);
    // Two runs stored as the baseline (the command line's way: --accept-baseline).
    for _ in 0..2 {
        let stored = run_stored(&fast, &set, &model, &cache, &["--accept-baseline"]);
        let trends = &stored.report()["telemetry"]["trends"];
        assert_eq!(trends["stored"], true, "{trends}");
    }
    let baseline: Value =
        serde_json::from_str(&std::fs::read_to_string(cache.join("baselines.json")).expect("baseline")).expect("json");
    assert_eq!(baseline["telemetry"].as_array().map(Vec::len), Some(2), "{baseline}");

    // The same set on a server that answers every call 200 ms late: not stored (no
    // --accept-baseline), compared, drawn, and still a pass.
    let slow = DemoServer::start(&["chaos-slow-tools"]);
    let run = run_stored(&slow, &set, &model, &cache, &[]);
    let report = run.report();
    assert_eq!(report["verdict"], "pass", "a layer-3 delta is shown, never enforced");
    let deltas = &report["telemetry"]["deltas"];
    assert_eq!(deltas["stored_runs"], 2, "{deltas}");
    assert!(deltas["baseline"].as_str().is_some_and(|label| label.starts_with("the last 2 stored run(s)")), "{deltas}");
    let tools = deltas["tools"].as_array().expect("tools");
    for tool in CALLED_TOOLS {
        assert!(tools.iter().any(|row| row["tool"] == tool), "{tool}: {deltas}");
    }
    for row in tools {
        let figure = |name: &str| row[name].as_u64().unwrap_or_else(|| panic!("{name}: {row}"));
        let delta = row["delta_ms"].as_i64().expect("delta");
        assert_eq!(delta, figure("p95_ms") as i64 - figure("baseline_p95_ms") as i64, "{row}");
        let rule =
            figure("p95_ms") as f64 > 1.5 * figure("baseline_p95_ms") as f64 && delta > figure("spread_ms") as i64;
        assert_eq!(row["rose"], rule, "the flag is the rule: {row}");
        assert_eq!(row["stored"], 2, "{row}");
    }
    // The server is 200 ms slower on every call: its tools' p95 rose past 1.5 × and the spread.
    assert!(tools.iter().any(|row| row["rose"] == true), "{deltas}");
    let cases = deltas["cases"].as_array().expect("cases");
    assert!(!cases.is_empty(), "{deltas}");
    for case in cases {
        for field in ["input_tokens", "output_tokens", "cost_usd"] {
            let change = &case[field];
            let known = change["now"].is_number() && change["baseline"].is_number();
            assert_eq!(change["delta"].is_number(), known, "a delta only when both sides are known: {case}");
        }
    }
    let trends = &report["telemetry"]["trends"];
    assert_eq!((trends["stored"].clone(), trends["kept"].clone()), (json!(false), json!(30)), "{trends}");
    assert_eq!(trends["points"].as_array().map(Vec::len), Some(3), "two stored runs and this one: {trends}");
    let summary = run.file("summary.md");
    assert!(summary.contains("#### Layer 3 since the baseline") && summary.contains("⚠️ rose"), "{summary}");
    assert!(summary.contains("Shown, not enforced"), "{summary}");
    assert_eq!(summary.matches("```mermaid\nxychart-beta\n").count(), 3, "{summary}");
    for title in ["Pass rate per model", "p95 latency per tool", "Cost per run"] {
        assert_eq!(chart_points(&summary, title), 3, "{title}: {summary}");
    }

    // Stored, the slow run becomes the newest point of the file.
    let stored = run_stored(&slow, &set, &model, &cache, &["--accept-baseline"]);
    let trends = &stored.report()["telemetry"]["trends"];
    assert_eq!(
        (trends["stored"].clone(), trends["points"].as_array().map(Vec::len)),
        (json!(true), Some(3)),
        "{trends}"
    );
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(cache.join("trends.json")).expect("trends")).expect("json");
    assert_eq!(file["format"], 1);
    let runs = file["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 3, "{file}");
    let newest = &runs[2];
    assert!(newest["p95_ms"]["test_simple_text"].as_u64().is_some_and(|p95| p95 >= SLOW_TOOLS_DELAY_MS), "{newest}");
    assert!(newest["cost_usd"].as_f64().is_some_and(|cost| cost > 0.0), "{newest}");
    assert!(newest["pass_rate"]["openai:demo"].is_number(), "{newest}");
}

/// The demo model's wait before each answer in the queueing tests, in milliseconds.
const MODEL_DELAY_MS: &str = "100";

/// Runs [`SET`] three times per case through the demo model started with `model_args` (its
/// delay, and `--single-slot` or not) at `concurrency`, layers 1 and 3; the run must pass.
/// Returns layer 3's notes and summary.md.
fn run_queued(model_args: &[&str], concurrency: &str) -> (Vec<String>, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = write_set(dir.path(), SET);
    let server = DemoServer::start(&[]);
    let mut args = vec!["--delay-ms", MODEL_DELAY_MS];
    args.extend_from_slice(model_args);
    let model = DemoModel::start(&set, &args);
    let run = run_layer1(
        &[
            "--server-url",
            &server.url,
            "--golden-set",
            utf8(&set),
            "--model",
            "openai:demo",
            "--runs",
            "3",
            "--layers",
            "1,3",
            "--concurrency",
            concurrency,
        ],
        &[("OPENAI_BASE_URL", &model.openai_url()), ("OPENAI_API_KEY", OPENAI_CANARY)],
    );
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let report = run.report();
    let notes = report["telemetry"]["notes"].as_array().unwrap_or_else(|| panic!("no telemetry.notes: {report}"));
    let notes = notes.iter().map(|note| note.as_str().expect("a note is text").to_owned()).collect();
    (notes, run.file("summary.md"))
}

/// The note of queueing at the model server among `notes`.
fn queueing_note(notes: &[String]) -> Option<&String> {
    notes.iter().find(|note| note.contains("others in flight"))
}

// Timed: it measures real latencies, and on a loaded 2-core CI machine the single-slot run missed
// its 2x in 1 of 3 runs (at 100 ms and at 400 ms per answer alike). The rule itself is tested
// without a clock in `telemetry::queueing`; run these by hand on a quiet machine:
// `cargo test --test it -- --ignored layer3::a_`.
#[test]
#[ignore = "timed: measures real latencies; run with --ignored on a quiet machine"]
fn a_single_slot_model_server_at_concurrency_4_gets_a_note_that_p50_includes_queueing() {
    let (notes, summary) = run_queued(&["--single-slot"], "4");
    let note = queueing_note(&notes).unwrap_or_else(|| panic!("no queueing note in {notes:?}"));
    assert!(note.contains("model calls to `openai:demo` started with 2+ others in flight"), "{note}");
    assert!(note.contains("`--concurrency 1`") && note.contains("llama-server `--parallel`"), "{note}");
    assert!(summary.contains("p50 includes waiting"), "{summary}");
}

#[test]
#[ignore = "timed: measures real latencies; run with --ignored on a quiet machine"]
fn a_parallel_model_server_at_concurrency_4_keeps_latency_flat_and_gets_no_note() {
    let (notes, _) = run_queued(&[], "4");
    assert_eq!(queueing_note(&notes), None, "{notes:?}");
}

#[test]
fn a_single_slot_model_server_at_concurrency_1_gets_no_note() {
    let (notes, _) = run_queued(&["--single-slot"], "1");
    assert_eq!(queueing_note(&notes), None, "{notes:?}");
}
