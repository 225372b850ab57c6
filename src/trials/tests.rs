//! Layer 1 end to end in-process: the embedded demo server (real `tools/call`s over HTTP), the
//! demo model on both wires (our adapters' real HTTP), scoring and the report section.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::*;
use crate::demo::model::DemoModel;
use crate::mcp::era::{self, Target};
use crate::mcp::evidence::Redactor;
use crate::mcp::http::HttpSettings;
use crate::report::evals::{EvalStatus, TrialStatus};
use crate::settings::layer1::{Api, Layer1Settings, ModelRef, ProviderDef, TraceResults};

const SET: &str = r#"version: 1
defaults: {runs: 5, sampling: {temperature: 0}}
cases:
  - id: region
    prompt: "Echo my region, eu."
    kind: hard
    expect_tool: test_header_param
    expect_args: {region: eu}
  - id: flaky-soft
    prompt: "Give me the short text."
    expect_tool: test_simple_text
  - id: flaky-hard
    prompt: "Give me the short text, please."
    kind: hard
    expect_tool: test_simple_text
  - id: too-flaky
    prompt: "The short text again."
    pass_threshold: 4
    expect_tool: test_simple_text
  - id: sequence
    prompt: "Progress then logs."
    expect_sequence: {order: strict, steps: [{tool: test_progress}, {tool: test_logging_tool}]}
  - id: thanks
    prompt: "Thanks!"
    kind: hard
    negative: true
  - id: wrong-tool
    prompt: "Temperature please."
    expect_tool: test_structured
    expect_args: {unit: celsius}
"#;

pub(crate) const CANARY_KEY: &str = "sk-canary-0123456789abcdef";

struct Fixture {
    _mcp: tokio::task::JoinHandle<std::io::Result<()>>,
    _model: tokio::task::JoinHandle<()>,
    mcp_url: String,
    model_url: String,
    set: crate::golden::GoldenSet,
}

async fn fixture(flaky: &[(&str, usize)]) -> Fixture {
    fixture_of(SET, flaky).await
}

async fn fixture_of(text: &str, flaky: &[(&str, usize)]) -> Fixture {
    fixture_with(text, flaky, &[]).await
}

async fn fixture_with(text: &str, flaky: &[(&str, usize)], breaks: &[&str]) -> Fixture {
    let set = crate::golden::load::parse(std::path::Path::new("golden.yaml"), text).expect("valid set");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let mcp_url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let config = crate::demo::DemoConfig::with_breaks(breaks.iter().copied());
    let mcp = tokio::spawn(crate::demo::serve_http(listener, Arc::new(config)));
    let flaky: Vec<(String, usize)> = flaky.iter().map(|(id, every)| ((*id).to_owned(), *every)).collect();
    let model = Arc::new(DemoModel::new(&set, &flaky, &[], chrono::Utc::now().date_naive()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let model_url = format!("http://{}", listener.local_addr().expect("addr"));
    let model_task = tokio::spawn(crate::demo::model::serve(listener, model));
    Fixture { _mcp: mcp, _model: model_task, mcp_url, model_url, set }
}

fn settings(fixture: &Fixture, models: &[&str]) -> Layer1Settings {
    let provider = |id: &str, api: Api, base_url: String| ProviderDef {
        id: id.into(),
        api,
        base_url,
        api_key_env: Some(format!("{}_API_KEY", id.to_ascii_uppercase())),
        api_key: Some(CANARY_KEY.into()),
    };
    Layer1Settings {
        models: models.iter().map(|label| ModelRef::for_tests(label)).collect(),
        providers: vec![
            provider("openai", Api::OpenAi, format!("{}/v1", fixture.model_url)),
            provider("anthropic", Api::Anthropic, fixture.model_url.clone()),
            ProviderDef { api_key: None, ..provider("nokey", Api::OpenAi, format!("{}/v1", fixture.model_url)) },
        ],
        concurrency: 4,
        trace_results: TraceResults::Truncated,
        ..Layer1Settings::default()
    }
}

async fn run_layer1(fixture: &Fixture, settings: &Layer1Settings) -> Result<EvalsSection, UserError> {
    run_layer1_cached(fixture, settings, None).await
}

async fn run_layer1_cached(
    fixture: &Fixture,
    settings: &Layer1Settings,
    cache: Option<CacheUse>,
) -> Result<EvalsSection, UserError> {
    run_layer1_full(fixture, settings, cache, None).await
}

async fn run_layer1_full(
    fixture: &Fixture,
    settings: &Layer1Settings,
    cache: Option<CacheUse>,
    cassettes: Option<Arc<Cassettes>>,
) -> Result<EvalsSection, UserError> {
    run_layer1_observed(fixture, settings, cache, cassettes, &|_| {}).await
}

/// As [`run_layer1_full`], sending the run's events to `events`.
async fn run_layer1_observed(
    fixture: &Fixture,
    settings: &Layer1Settings,
    cache: Option<CacheUse>,
    cassettes: Option<Arc<Cassettes>>,
    events: &(dyn Fn(&crate::events::RunEvent) + Sync),
) -> Result<EvalsSection, UserError> {
    on_demo_server(fixture, settings, cache, cassettes, Pass::Run, events).await
}

/// Which of layer 1's passes [`on_demo_server`] runs.
enum Pass<'a> {
    /// The whole run ([`run`]).
    Run,
    /// The re-run of these (model, case) pairs after a tripped gate ([`confirm`]).
    Confirm(&'a BTreeMap<(String, String), usize>),
}

/// Connects to the fixture's demo server, runs `pass` over the fixture's set with `settings`,
/// sending its events to `events`, and shuts the connection down.
async fn on_demo_server(
    fixture: &Fixture,
    settings: &Layer1Settings,
    cache: Option<CacheUse>,
    cassettes: Option<Arc<Cassettes>>,
    pass: Pass<'_>,
    events: &(dyn Fn(&crate::events::RunEvent) + Sync),
) -> Result<EvalsSection, UserError> {
    let target = Target::Http(HttpSettings {
        url: fixture.mcp_url.clone(),
        extra_headers: Vec::new(),
        timeout: Duration::from_secs(10),
        oauth: None,
    });
    let connected =
        era::connect(&target, Redactor::new(vec![CANARY_KEY.into()]), 0).await.expect("demo server reachable");
    let surface = crate::conformance::list_tools_on(&connected).await.expect("tools listed");
    let tools = crate::agent::tools::McpTools::new(connected.client.clone(), connected.era);
    let input = Layer1Input {
        settings,
        set: &fixture.set,
        set_label: "golden.yaml".into(),
        surface: &surface,
        tools: &tools,
        today: chrono::Utc::now().date_naive(),
        retry: RetryPolicy { attempts: 2, base: Duration::from_millis(1), max_wait: Duration::from_millis(10) },
        cassettes,
        cache,
        budget: Arc::new(caller::Budget::new(settings.max_model_calls)),
        wraps: Vec::new(),
    };
    let result = match pass {
        Pass::Run => run(&input, &Progress::default(), events).await,
        Pass::Confirm(pairs) => confirm(&input, pairs, events).await,
    };
    connected.shutdown().await;
    result
}

fn eval<'a>(section: &'a EvalsSection, case: &str, model: &str) -> &'a crate::report::evals::EvalResult {
    section.evals.iter().find(|eval| eval.case == case && eval.model == model).expect("evaluated")
}

#[tokio::test]
async fn a_golden_set_runs_through_both_wires_against_the_demo_server() {
    let fixture = fixture(&[("flaky-soft", 5), ("flaky-hard", 5), ("too-flaky", 2), ("wrong-tool", 1)]).await;
    let settings = settings(&fixture, &["openai:demo-good", "anthropic:demo-good", "nokey:model"]);
    let section = run_layer1(&fixture, &settings).await.expect("ran");
    for model in ["openai:demo-good", "anthropic:demo-good"] {
        let region = eval(&section, "region", model);
        assert_eq!((region.status, region.passed, region.runs), (EvalStatus::Pass, 5, 5), "{region:?}");
        assert_eq!(region.wilson_95, [0.5655, 1.0]);
        let call = &region.traces[0].calls[0];
        assert_eq!(
            (call.name.as_str(), &call.arguments, call.sent),
            ("test_header_param", &json!({"region": "eu"}), true)
        );
        assert_eq!(call.result.as_deref(), Some("Region: eu"), "the real server answered");
        let sequence = eval(&section, "sequence", model);
        assert_eq!((sequence.status, sequence.passed), (EvalStatus::Pass, 5), "{sequence:?}");
        let thanks = eval(&section, "thanks", model);
        assert_eq!((thanks.status, thanks.passed), (EvalStatus::Pass, 5));
        let wrong = eval(&section, "wrong-tool", model);
        assert_eq!((wrong.status, wrong.passed), (EvalStatus::Fail, 0));
        assert!(
            wrong.reason.as_deref().is_some_and(|reason| reason.contains("trial 1: selection")),
            "{:?}",
            wrong.reason
        );
        assert_eq!(wrong.graders["selection"], crate::report::evals::GraderTally { passed: 0, graded: 5 });
    }
    // The flaky cases share the demo model's counters across both wires (10 trials of each).
    let soft: Vec<_> = section.evals.iter().filter(|eval| eval.case == "flaky-soft").collect();
    assert_eq!(soft.iter().map(|eval| eval.passed).sum::<usize>(), 8, "every 5th of 10 trials went wrong");
    assert!(soft.iter().all(|eval| eval.status == EvalStatus::Pass), "4/5 passes a soft case");
    let hard: Vec<_> = section.evals.iter().filter(|eval| eval.case == "flaky-hard").collect();
    assert!(hard.iter().all(|eval| eval.status == EvalStatus::Fail && eval.passed == 4 && eval.flaky), "{hard:?}");
    let too_flaky: Vec<_> = section.evals.iter().filter(|eval| eval.case == "too-flaky").collect();
    assert!(too_flaky.iter().all(|eval| eval.status == EvalStatus::Fail), "{too_flaky:?}");
    let failing_run = hard[0].traces.iter().find(|run| run.status == TrialStatus::Fail).expect("one failing trial");
    assert!(failing_run.reason.as_deref().is_some_and(|reason| reason.starts_with("selection:")), "{failing_run:?}");

    let statuses: Vec<(String, ModelOutcome)> =
        section.model_status.iter().map(|status| (status.model.clone(), status.status)).collect();
    assert_eq!(
        statuses,
        vec![
            ("openai:demo-good".to_owned(), ModelOutcome::Ran),
            ("anthropic:demo-good".to_owned(), ModelOutcome::Ran),
            ("nokey:model".to_owned(), ModelOutcome::NoApiKey),
        ]
    );
    assert!(section.evals.iter().all(|eval| eval.model != "nokey:model"));
    let metrics = &section.eval_metrics[0];
    assert_eq!((metrics.over_triggering_rate.k, metrics.over_triggering_rate.n), (0, 5));
    assert_eq!(metrics.input_tokens, Some(metrics.input_tokens.unwrap_or(0)).filter(|tokens| *tokens > 0));
    assert!(!section.call_cap_reached);
    let json = serde_json::to_string(&section).expect("serialises");
    assert!(!json.contains(CANARY_KEY), "the key appears nowhere in the layer-1 report");
}

#[tokio::test]
async fn the_call_cap_skips_what_it_cut() {
    let fixture = fixture(&[]).await;
    let mut settings = settings(&fixture, &["openai:demo-good"]);
    settings.max_model_calls = 12;
    settings.concurrency = 1;
    let section = run_layer1(&fixture, &settings).await.expect("ran");
    assert!(section.call_cap_reached);
    assert_eq!(section.model_calls, 12);
    assert_eq!(eval(&section, "region", "openai:demo-good").status, EvalStatus::Pass, "10 calls: region finished");
    let cut = eval(&section, "flaky-soft", "openai:demo-good");
    assert_eq!(cut.status, EvalStatus::Skipped);
    assert!(cut.reason.as_deref().is_some_and(|reason| reason.contains("call cap reached")), "{:?}", cut.reason);
}

#[tokio::test]
async fn an_unknown_tool_in_the_set_is_an_input_error_naming_the_case() {
    let mut fixture = fixture(&[]).await;
    fixture.set = crate::golden::load::parse(
        std::path::Path::new("golden.yaml"),
        "version: 1\ncases:\n  - id: typo\n    prompt: hi\n    expect_tool: test_header_parm\n",
    )
    .expect("valid");
    let error = run_layer1(&fixture, &settings(&fixture, &["openai:demo-good"])).await.expect_err("refused");
    assert_eq!(error.exit_status(), crate::verdict::ExitStatus::InvalidInput);
    assert!(error.message.contains("golden.yaml:5:18") && error.message.contains("typo"), "{error}");
    assert!(error.message.contains("test_header_param"), "nearest tool named: {error}");
}

#[tokio::test]
async fn a_refused_key_makes_the_model_unusable_and_costs_only_the_calls_in_flight() {
    let fixture = fixture(&[]).await;
    let refused = crate::providers::test_server::Canned::json(
        401,
        r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}"#,
    );
    let server = crate::providers::test_server::ScriptedServer::start(vec![refused; 40]).await;
    let mut settings = settings(&fixture, &["openai:gpt-x"]);
    settings.providers[0].base_url = server.base_url.clone();
    let section = run_layer1(&fixture, &settings).await.expect("ran");
    assert_eq!(section.model_status[0].status, ModelOutcome::Unusable);
    let detail = section.model_status[0].detail.clone().unwrap_or_default();
    assert!(detail.contains("OPENAI_API_KEY") && detail.contains("openai:gpt-x"), "{detail}");
    // 35 trials; only those in flight when the first refusal came (at most the concurrency, 4)
    // asked; a refused key is never retried.
    assert!((1..=4).contains(&server.received().len()), "{} requests", server.received().len());
    assert!(section.provider_failed());
    assert!(!detail.contains(CANARY_KEY));
}

#[tokio::test]
async fn a_first_call_the_provider_spoiled_does_not_hold_back_the_other_trials() {
    // Every answer is a 500: retried, then the trial is spoiled, but the provider is not unusable.
    let fixture = fixture(&[]).await;
    let server = crate::providers::test_server::ScriptedServer::start(Vec::new()).await;
    let mut settings = settings(&fixture, &["openai:gpt-x"]);
    settings.providers[0].base_url = server.base_url.clone();
    let section = run_layer1(&fixture, &settings).await.expect("ran");
    assert_eq!(section.model_status[0].status, ModelOutcome::Ran, "{:?}", section.model_status);
    assert!(server.received().len() > 2, "the other trials were tried, not only the first trial's 2 attempts");
}

#[tokio::test]
async fn a_first_trial_that_never_reaches_the_model_releases_the_other_trials() {
    let fixture = fixture(&[]).await;
    let mut settings = settings(&fixture, &["openai:demo-good"]);
    settings.max_model_calls = 0;
    let section = tokio::time::timeout(Duration::from_secs(60), run_layer1(&fixture, &settings))
        .await
        .expect("no trial waits forever for a first call that was never made")
        .expect("ran");
    assert!(section.call_cap_reached);
    assert_eq!(section.model_calls, 0);
}

#[tokio::test]
async fn arguments_that_break_the_tools_schema_are_scored_and_never_sent() {
    let fixture = fixture_of(
        "version: 1\ndefaults: {runs: 1}\ncases:\n  - id: kelvin\n    prompt: In kelvin please.\n    expect_tool: test_structured\n    expect_args: {unit: kelvin}\n",
        &[],
    )
    .await;
    let section = run_layer1(&fixture, &settings(&fixture, &["openai:demo-good"])).await.expect("ran");
    let kelvin = eval(&section, "kelvin", "openai:demo-good");
    assert!(!kelvin.traces.is_empty(), "{section:?}");
    let call = &kelvin.traces[0].calls[0];
    assert!(!call.sent, "{call:?}");
    let error = call.error.clone().unwrap_or_default();
    assert!(error.contains("inputSchema") && error.contains("kelvin"), "{error}");
}

const MRTR_SET: &str = r#"version: 1
defaults: {runs: 1}
cases:
  - id: accept
    prompt: "Start the task, confirm it."
    expect_tool: test_input_required_result
    input_responses:
      - match: { method: elicitation/create, message: "(?i)confirm", schema_has: [confirm] }
        respond: { action: accept, content: { confirm: true } }
        times: 1
  - id: decline
    prompt: "Start the task, but decline."
    expect_tool: test_input_required_result
    input_responses:
      - key: not-the-demo-key
        respond: { action: accept }
    on_unmatched_input_request: decline
  - id: unmatched
    prompt: "Start the task with no answer."
    expect_tool: test_input_required_result
    input_responses:
      - match: { method: elicitation/create, message: "never matches" }
        respond: { action: accept }
  - id: sampling
    prompt: "Start the task that needs a model."
    expect_tool: test_input_required_result
    input_responses:
      - match: { method: roots/list }
        respond: { roots: [] }
"#;

#[tokio::test]
async fn input_requests_are_answered_from_the_script_and_a_server_past_the_bound_fails_the_trial() {
    let fixture = fixture_of(MRTR_SET, &[]).await;
    let section = run_layer1(&fixture, &settings(&fixture, &["openai:demo-good"])).await.expect("ran");
    let call = |case: &str| eval(&section, case, "openai:demo-good").traces[0].calls[0].clone();

    let accept = call("accept");
    assert_eq!(accept.result.as_deref(), Some("Confirmation received (action: accept)."), "{accept:?}");
    assert_eq!(accept.input_rounds.len(), 1);
    assert_eq!(accept.input_rounds[0].requests.get("confirm").map(String::as_str), Some("elicitation/create"));
    assert!(accept.input_rounds[0].request_state, "the requestState was echoed (the demo verifies its signature)");
    assert_eq!(eval(&section, "accept", "openai:demo-good").status, EvalStatus::Pass);

    let decline = call("decline");
    assert_eq!(decline.result.as_deref(), Some("Confirmation received (action: decline)."), "{decline:?}");

    let unmatched = eval(&section, "unmatched", "openai:demo-good");
    assert_eq!(unmatched.status, EvalStatus::Fail);
    let reason = unmatched.traces[0].reason.clone().unwrap_or_default();
    assert!(reason.contains("no input response is scripted for `confirm`"), "{reason}");

    // The script answers roots only: the demo's elicitation asks for a capability never declared
    // (the demo refuses with -32021 before asking, and the model reads that error).
    let sampling = call("sampling");
    assert!(sampling.error.as_deref().is_some_and(|error| error.contains("-32021")), "{sampling:?}");
}

#[tokio::test]
async fn a_server_that_keeps_asking_for_input_fails_the_trial_at_the_bound() {
    let set = "version: 1\ndefaults: {runs: 1}\ncases:\n  - id: loops\n    prompt: \"Start the task.\"\n    expect_tool: test_input_required_result\n    max_input_rounds: 2\n    input_responses:\n      - key: confirm\n        respond: {action: accept}\n";
    let fixture = fixture_with(set, &[], &["chaos-ask-forever"]).await;
    let section = run_layer1(&fixture, &settings(&fixture, &["openai:demo-good"])).await.expect("ran");
    let loops = eval(&section, "loops", "openai:demo-good");
    assert_eq!(loops.status, EvalStatus::Fail);
    let run = &loops.traces[0];
    assert_eq!(run.ending, "finding");
    assert_eq!(run.calls[0].input_rounds.len(), 2, "two rounds, then the bound");
    assert!(run.reason.as_deref().is_some_and(|reason| reason.contains("after 2 round(s)")), "{run:?}");
}

#[tokio::test]
async fn an_unchanged_set_is_reused_from_the_cache_with_zero_model_calls_and_one_changed_case_reruns_alone() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = |server_key: &str| CacheUse {
        store: crate::cache::VerdictCache::new(dir.path().to_path_buf(), crate::cache::Mode::ReadWrite),
        server_key: Some(server_key.to_owned()),
        measured_at: "2026-11-30T10:00:00Z".into(),
        manifest: None,
        moved: None,
    };
    let fixture = fixture(&[]).await;
    let settings = settings(&fixture, &["openai:demo-good"]);
    let first = run_layer1_cached(&fixture, &settings, Some(cache("sha256:ws1"))).await.expect("ran");
    assert!(first.model_calls > 0 && first.evals.iter().all(|eval| eval.cached.is_none()));

    let second = run_layer1_cached(&fixture, &settings, Some(cache("sha256:ws1"))).await.expect("ran");
    assert_eq!(second.model_calls, 0, "zero model calls");
    let verdicts = |section: &EvalsSection| -> Vec<(String, EvalStatus, usize)> {
        section.evals.iter().map(|eval| (eval.case.clone(), eval.status, eval.passed)).collect()
    };
    assert_eq!(verdicts(&second), verdicts(&first), "the same verdicts");
    let graded = second.evals.iter().filter(|eval| eval.status != EvalStatus::Skipped);
    assert!(graded.clone().all(|eval| eval.cached.as_ref().is_some_and(|from| from.server_key == "sha256:ws1")));
    assert!(second.layer1_notes[0].contains("reused from the verdict cache"), "{:?}", second.layer1_notes);
    assert_eq!(second.eval_metrics[0].pass_rate, first.eval_metrics[0].pass_rate, "metrics count reused verdicts");

    // Another server key (the server's code changed): everything runs again.
    let changed_server = run_layer1_cached(&fixture, &settings, Some(cache("sha256:ws2"))).await.expect("ran");
    assert_eq!(changed_server.model_calls, first.model_calls);

    // One case edited: that case alone runs.
    let edited = fixture_of(&SET.replace("Echo my region, eu.", "Echo my region (eu)."), &[]).await;
    let third = run_layer1_cached(&edited, &settings, Some(cache("sha256:ws1"))).await.expect("ran");
    let ran: Vec<&str> = third
        .evals
        .iter()
        .filter(|eval| eval.cached.is_none() && eval.status != EvalStatus::Skipped)
        .map(|eval| eval.case.as_str())
        .collect();
    assert_eq!(ran, vec!["region"]);
    // The model of the first fixture has no script for the edited prompt: it answers in words,
    // one call per trial.
    assert_eq!(third.model_calls, 5, "the edited case alone ran");
}

fn judge_answer(verdict: &str, evidence: &str) -> crate::providers::test_server::Canned {
    let arguments = json!({"verdicts": [{"criterion_id": "helped", "verdict": verdict, "evidence": evidence, "reason": "read from the trace"}]});
    let body = json!({
        "id": "j", "object": "chat.completion", "model": "judge",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
            "tool_calls": [{"id": "v", "type": "function", "function": {"name": "record_verdicts", "arguments": arguments.to_string()}}]}}],
        "usage": {"prompt_tokens": 300, "completion_tokens": 40}
    });
    crate::providers::test_server::Canned::json(200, &body.to_string())
}

async fn judged_section(script: Vec<crate::providers::test_server::Canned>) -> (EvalsSection, usize) {
    judged_section_with(script, |_| {}).await
}

/// [`judged_section`] with the settings changed by `tweak` first.
async fn judged_section_with(
    script: Vec<crate::providers::test_server::Canned>,
    tweak: impl FnOnce(&mut crate::settings::layer1::Layer1Settings),
) -> (EvalsSection, usize) {
    let fixture = fixture_of(
        "version: 1\ndefaults: {runs: 2}\nrubrics:\n  r:\n    criteria: [{id: helped, text: \"Does the answer offer help?\", must: true}]\ncases:\n  - id: greet\n    prompt: \"Hello there.\"\n    rubric: r\n",
        &[],
    )
    .await;
    let judge = crate::providers::test_server::ScriptedServer::start(script).await;
    let mut settings = settings(&fixture, &["openai:demo-good"]);
    settings.providers.push(ProviderDef {
        id: "judge".into(),
        api: Api::OpenAi,
        base_url: judge.base_url.clone(),
        api_key_env: None,
        api_key: None,
    });
    settings.judge_model = Some(ModelRef { provider: "judge".into(), model: "j".into() });
    tweak(&mut settings);
    let section = run_layer1(&fixture, &settings).await.expect("ran");
    (section, judge.received().len())
}

#[tokio::test]
async fn a_calibration_of_a_judge_no_better_than_chance_is_said_not_to_correct_in_the_notes_too() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("cal.json");
    std::fs::write(
        &file,
        r#"{"format": 1, "judge_model": "judge:j", "judge_prompt_version": 1, "judge_samples": 1,
            "golden_set_sha256": "sha256:s", "rubrics_sha256": "sha256:r", "labels": "l.yaml", "tpr": 0.5,
            "tnr": 0.4, "positives": 10, "negatives": 10, "true_positives": 5, "true_negatives": 4, "unknown": 0,
            "errors": 0, "measured_at": "2026-11-30"}"#,
    )
    .expect("write");
    let (section, _) = judged_section_with(vec![judge_answer("pass", "Glad to help."); 2], |settings| {
        settings.judge_calibration = Some(file.clone());
    })
    .await;
    let notes = section.layer1_notes.join("\n");
    assert!(notes.contains("not corrected") && notes.contains("no better than chance"), "{notes}");
    assert!(!notes.contains("also given Rogan–Gladen corrected"), "{notes}");
}

#[tokio::test]
async fn judge_samples_without_a_judge_say_they_are_not_used() {
    let fixture = fixture_of(
        "version: 1\ndefaults: {runs: 1}\ncases:\n  - id: greet\n    prompt: \"Hello there.\"\n    negative: true\n",
        &[],
    )
    .await;
    let mut settings = settings(&fixture, &["openai:demo-good"]);
    settings.judge_samples = 3;
    let section = run_layer1(&fixture, &settings).await.expect("ran");
    assert!(
        section.layer1_notes.iter().any(|note| note.contains("--judge-samples 3 is not used")),
        "{:?}",
        section.layer1_notes
    );
}

#[tokio::test]
async fn the_judge_grades_a_rubric_from_the_trace_and_a_quote_not_in_it_is_unknown() {
    // The demo model answers a case without expected calls "Glad to help. Nothing to look up."
    let (section, calls) = judged_section(vec![judge_answer("pass", "Glad to help."); 2]).await;
    let greet = eval(&section, "greet", "openai:demo-good");
    assert_eq!((greet.status, greet.passed), (EvalStatus::Pass, 2), "{greet:?}");
    assert_eq!(calls, 2, "one judge call per trial");
    let lines: Vec<&str> = greet.traces[0].criteria.iter().map(|criterion| criterion.criterion.as_str()).collect();
    assert!(lines.contains(&"judge") && lines.contains(&"judge:helped"), "{lines:?}");
    let judged = greet.traces[0].judge.as_ref().expect("the judge's part of the trace");
    assert_eq!((judged.model.as_str(), judged.verdict.as_str(), judged.samples), ("judge:j", "pass", 1));
    assert_eq!(judged.prompt_version, crate::scoring::judge::JUDGE_PROMPT_VERSION);
    assert!(judged.rubric_sha256.starts_with("sha256:") && judged.rubric_sha256.len() == 71, "{judged:?}");
    assert_eq!(judged.criteria.len(), 1);
    let criterion = &judged.criteria[0];
    assert_eq!((criterion.criterion_id.as_str(), criterion.must), ("helped", true));
    assert_eq!((criterion.verdict.as_str(), criterion.evidence.as_str()), ("pass", "Glad to help."));
    assert!(
        section.layer1_notes.iter().any(|note| note.contains("rubrics judged by judge:j")),
        "{:?}",
        section.layer1_notes
    );

    let (section, _) = judged_section(vec![judge_answer("pass", "I found 3 results."); 2]).await;
    let greet = eval(&section, "greet", "openai:demo-good");
    assert_eq!((greet.status, greet.passed), (EvalStatus::Fail, 0), "an invented quote is not evidence");
    let judged = greet.traces[0].judge.as_ref().expect("judged");
    assert_eq!(judged.verdict, "fail");
    assert!(judged.criteria[0].downgraded && judged.criteria[0].verdict == "unknown", "{judged:?}");
    let reason = greet.traces[0].reason.clone().unwrap_or_default();
    assert!(reason.contains("must `helped` could not be shown from the trace"), "{reason}");
}

#[tokio::test]
async fn a_judge_that_fails_is_a_judge_error_never_a_pass_or_a_fail() {
    let broken = crate::providers::test_server::Canned::json(400, r#"{"error":{"message":"bad request"}}"#);
    let (section, _) = judged_section(vec![broken; 4]).await;
    let greet = eval(&section, "greet", "openai:demo-good");
    assert_eq!(greet.status, EvalStatus::Error, "{greet:?}");
    let criterion = greet.traces[0].criteria.iter().find(|criterion| criterion.criterion == "judge").expect("judge");
    assert!(criterion.reason.starts_with("judge_error: "), "the criterion says what happened: {criterion:?}");
    let judged = greet.traces[0].judge.as_ref().expect("a judge error is traced too");
    assert_eq!(judged.verdict, "judge_error");
    assert!(judged.reason.as_deref().is_some_and(|reason| reason.contains("judge")), "{judged:?}");
    assert!(
        greet.traces.iter().all(|run| run.reason.as_deref().is_some_and(|reason| reason.contains("judge_error"))),
        "{greet:?}"
    );
}

// ---- `embedding` and `judge` argument matchers ----

use crate::providers::test_server::{Canned, ScriptedServer};

/// A Chat Completions answer calling `tool` with `arguments`.
fn chat_call(tool: &str, arguments: &serde_json::Value) -> Canned {
    let body = json!({
        "id": "c", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
            "tool_calls": [{"id": "t", "type": "function", "function": {"name": tool, "arguments": arguments.to_string()}}]}}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 5}
    });
    Canned::json(200, &body.to_string())
}

/// A Chat Completions answer in words.
fn chat_text(text: &str) -> Canned {
    let body = json!({
        "id": "c", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 5}
    });
    Canned::json(200, &body.to_string())
}

/// A judge answer on one argument.
fn argument_verdict(verdict: &str, reason: &str) -> Canned {
    chat_call(crate::scoring::semantic::ARGUMENT_VERDICT_TOOL, &json!({"verdict": verdict, "reason": reason}))
}

/// The vectors of the embeddings server: "Europe" and a paraphrase close together, "Asia" apart.
const VECTORS: [(&str, [f64; 3]); 3] =
    [("Europe", [1.0, 0.0, 0.0]), ("the European Union", [0.95, 0.1, 0.0]), ("Asia", [0.0, 1.0, 0.0])];

async fn vectors_server(script: Vec<Canned>) -> ScriptedServer {
    let table: Vec<(&str, Vec<f64>)> = VECTORS.iter().map(|(text, vector)| (*text, vector.to_vec())).collect();
    ScriptedServer::with_vectors(script, &table).await
}

/// A set of one case whose `region` argument is graded by `matcher` (YAML), run `runs` times.
fn matcher_set(matcher: &str, runs: usize) -> String {
    format!(
        "version: 1\ndefaults: {{runs: {runs}}}\ncases:\n  - id: region\n    prompt: \"Echo my region, Europe.\"\n    expect_tool: test_header_param\n    expect_args:\n      region: {matcher}\n"
    )
}

/// Settings for a scripted model `model:m` (one trial at a time), an embeddings model `emb:e` and
/// a judge `judge:j`, each on its own server.
fn matcher_settings(fixture: &Fixture, model: &str, embeddings: &str, judge: Option<&str>) -> Layer1Settings {
    let endpoint = |id: &str, base_url: &str| ProviderDef {
        id: id.into(),
        api: Api::OpenAi,
        base_url: base_url.into(),
        api_key_env: None,
        api_key: None,
    };
    let mut settings = settings(fixture, &["model:m"]);
    settings.providers.push(endpoint("model", model));
    settings.providers.push(endpoint("emb", embeddings));
    settings.embedding_model = Some(ModelRef { provider: "emb".into(), model: "e".into() });
    if let Some(judge) = judge {
        settings.providers.push(endpoint("judge", judge));
        settings.judge_model = Some(ModelRef { provider: "judge".into(), model: "j".into() });
    }
    settings.concurrency = 1;
    settings
}

/// The script of a model that calls the tool with `region` then answers, `runs` times.
fn region_script(region: &str, runs: usize) -> Vec<Canned> {
    (0..runs).flat_map(|_| [chat_call("test_header_param", &json!({"region": region})), chat_text("Done.")]).collect()
}

#[tokio::test]
async fn an_embedding_matcher_passes_a_paraphrase_once_per_pair_and_fails_an_unrelated_value_with_the_cosine() {
    let fixture = fixture_of(&matcher_set("{match: embedding, value: Europe}", 3), &[]).await;
    let model = ScriptedServer::start(region_script("the European Union", 3)).await;
    let embeddings = vectors_server(Vec::new()).await;
    let settings = matcher_settings(&fixture, &model.base_url, &embeddings.base_url, None);
    let section = run_layer1(&fixture, &settings).await.expect("ran");
    let region = eval(&section, "region", "model:m");
    assert_eq!((region.status, region.passed), (EvalStatus::Pass, 3), "{region:?}");
    let requests = embeddings.received();
    assert_eq!(requests.len(), 1, "one request for the one pair of three trials");
    assert_eq!(requests[0].json()["input"], json!(["Europe", "the European Union"]), "both texts in one request");
    assert_eq!(section.model_calls, 6 + 1, "the embeddings call counts against the cap");
    assert!(
        section.layer1_notes.iter().any(|note| note.contains("`embedding` matchers graded")),
        "{:?}",
        section.layer1_notes
    );

    let model = ScriptedServer::start(region_script("Asia", 1)).await;
    let fixture = fixture_of(&matcher_set("{match: embedding, value: Europe}", 1), &[]).await;
    let settings = matcher_settings(&fixture, &model.base_url, &embeddings.base_url, None);
    let section = run_layer1(&fixture, &settings).await.expect("ran");
    let region = eval(&section, "region", "model:m");
    assert_eq!(region.status, EvalStatus::Fail, "{region:?}");
    let reason = region.traces[0].reason.clone().unwrap_or_default();
    assert!(reason.contains("cosine 0.000, below the threshold 0.85"), "{reason}");
}

#[tokio::test]
async fn an_embeddings_http_error_is_an_error_never_a_pass() {
    let fixture = fixture_of(&matcher_set("{match: embedding, value: Europe}", 1), &[]).await;
    let model = ScriptedServer::start(region_script("the European Union", 1)).await;
    let refused = Canned::json(400, r#"{"error":{"message":"this model does not embed"}}"#);
    let embeddings = ScriptedServer::start(vec![refused]).await;
    let settings = matcher_settings(&fixture, &model.base_url, &embeddings.base_url, None);
    let section = run_layer1(&fixture, &settings).await.expect("ran");
    let region = eval(&section, "region", "model:m");
    assert_eq!(region.status, EvalStatus::Error, "{region:?}");
    let reason = region.traces[0].reason.clone().unwrap_or_default();
    assert!(reason.contains("could not be graded") && reason.contains("this model does not embed"), "{reason}");
    assert!(section.provider_failed(), "a spoiled argument check counts as the provider's (exit status 5)");
}

async fn judged_argument(
    verdict: Canned,
) -> (crate::report::evals::EvalResult, Vec<crate::providers::test_server::Received>) {
    let fixture = fixture_of(&matcher_set("{match: judge, value: \"a region in Europe\"}", 1), &[]).await;
    let model = ScriptedServer::start(region_script("eu", 1)).await;
    let judge = ScriptedServer::start(vec![verdict]).await;
    let settings = matcher_settings(&fixture, &model.base_url, "http://127.0.0.1:9/v1", Some(&judge.base_url));
    let section = run_layer1(&fixture, &settings).await.expect("ran");
    (eval(&section, "region", "model:m").clone(), judge.received())
}

#[tokio::test]
async fn a_judge_matcher_passes_fails_and_a_judge_error_is_an_error() {
    let (passed, asked) = judged_argument(argument_verdict("pass", "eu is Europe")).await;
    assert_eq!(passed.status, EvalStatus::Pass, "{passed:?}");
    let request = asked[0].json();
    assert_eq!(request["tool_choice"]["function"]["name"], json!(crate::scoring::semantic::ARGUMENT_VERDICT_TOOL));
    let question = request["messages"][1]["content"].as_str().unwrap_or_default().to_owned();
    assert!(
        question.contains("Echo my region, Europe.")
            && question.contains("a region in Europe")
            && question.contains("eu"),
        "{question}"
    );

    let (failed, _) = judged_argument(argument_verdict("fail", "eu is not a city")).await;
    assert_eq!(failed.status, EvalStatus::Fail, "{failed:?}");
    let reason = failed.traces[0].reason.clone().unwrap_or_default();
    assert!(reason.contains("does not satisfy") && reason.contains("eu is not a city"), "{reason}");

    let (unknown, _) = judged_argument(argument_verdict("unknown", "cannot tell")).await;
    assert_eq!(unknown.status, EvalStatus::Fail, "unknown is never a pass: {unknown:?}");

    let (broken, _) = judged_argument(Canned::json(400, r#"{"error":{"message":"bad request"}}"#)).await;
    assert_eq!(broken.status, EvalStatus::Error, "{broken:?}");
    let (no_tool, _) = judged_argument(chat_text("pass")).await;
    assert_eq!(no_tool.status, EvalStatus::Error, "an answer without the verdict tool: {no_tool:?}");
}

#[tokio::test]
async fn an_argument_judge_call_is_an_event_of_role_judge_so_layer_3_prices_it() {
    let fixture = fixture_of(&matcher_set("{match: judge, value: \"a region in Europe\"}", 1), &[]).await;
    let model = ScriptedServer::start(region_script("eu", 1)).await;
    let judge = ScriptedServer::start(vec![argument_verdict("pass", "eu is Europe")]).await;
    let settings = matcher_settings(&fixture, &model.base_url, "http://127.0.0.1:9/v1", Some(&judge.base_url));
    let seen = std::sync::Mutex::new(Vec::new());
    let events = |event: &crate::events::RunEvent| {
        if let crate::events::RunEvent::ModelCallFinished { trial, role, model, .. } = event {
            lock(&seen).push((trial.case.clone(), *role, model.clone()));
        }
    };
    run_layer1_observed(&fixture, &settings, None, None, &events).await.expect("ran");
    let seen = lock(&seen).clone();
    let judged: Vec<_> = seen.iter().filter(|(_, role, _)| *role == "judge").collect();
    assert_eq!(judged.len(), 1, "one judge call for the one check: {seen:?}");
    assert_eq!(judged[0].0, "region", "under the trial that needed it");
}

/// The one `region` case graded by an embedding matcher, recorded into cassettes in `dir` from
/// live model and embeddings servers that are gone when it returns: the fixture, the recorded
/// section, the files the cassettes wrote, and the settings that replay it (the same endpoints,
/// not recording).
async fn recorded_embedding_matcher(
    dir: &std::path::Path,
) -> (Fixture, EvalsSection, Vec<std::path::PathBuf>, Layer1Settings) {
    use crate::providers::cassette::Mode;
    let fixture = fixture_of(&matcher_set("{match: embedding, value: Europe}", 1), &[]).await;
    let model = ScriptedServer::start(region_script("the European Union", 1)).await;
    let embeddings = vectors_server(Vec::new()).await;
    let mut settings = matcher_settings(&fixture, &model.base_url, &embeddings.base_url, None);
    settings.record = true;
    let cassettes = Arc::new(Cassettes::open(dir, Mode::Record).expect("opened"));
    let recorded = run_layer1_full(&fixture, &settings, None, Some(cassettes.clone())).await.expect("ran");
    let written = cassettes.save().expect("saved");
    drop((model, embeddings));
    let settings = Layer1Settings { record: false, ..settings };
    (fixture, recorded, written, settings)
}

#[tokio::test]
async fn replayed_calls_are_counted_apart_and_the_replayed_model_is_marked_while_a_recording_run_is_live() {
    use crate::providers::cassette::Mode;
    let dir = tempfile::tempdir().expect("temp dir");
    let (fixture, recorded, _, settings) = recorded_embedding_matcher(dir.path()).await;
    assert!(recorded.model_calls > 0);
    assert_eq!(recorded.replayed_model_calls, 0, "recording calls the model");
    assert!(!recorded.model_status.iter().any(|status| status.replayed), "{:?}", recorded.model_status);

    let replay = Arc::new(Cassettes::open(dir.path(), Mode::Replay).expect("opened"));
    let replayed = run_layer1_full(&fixture, &settings, None, Some(replay)).await.expect("ran");
    assert_eq!(replayed.model_calls, recorded.model_calls, "the same calls, the embeddings' included");
    assert_eq!(replayed.replayed_model_calls, replayed.model_calls, "every one replayed");
    let status = &replayed.model_status[0];
    assert_eq!((status.status, status.replayed), (ModelOutcome::Ran, true), "{status:?}");
}

#[tokio::test]
async fn embeddings_are_recorded_then_replayed_without_the_network_and_a_miss_is_an_error() {
    use crate::providers::cassette::Mode;
    let dir = tempfile::tempdir().expect("temp dir");
    let (fixture, recorded, written, settings) = recorded_embedding_matcher(dir.path()).await;
    assert_eq!(eval(&recorded, "region", "model:m").status, EvalStatus::Pass);
    let file = dir.path().join("emb_e.json");
    assert!(written.contains(&file), "{written:?}");
    let text = std::fs::read_to_string(&file).expect("the embeddings cassette");
    assert!(text.contains("\"embeddings\"") && text.contains("the European Union"), "{text}");

    // Replay: the servers are gone, the answers come from the files.
    let replay = Arc::new(Cassettes::open(dir.path(), Mode::Replay).expect("opened"));
    let replayed = run_layer1_full(&fixture, &settings, None, Some(replay)).await.expect("ran");
    assert_eq!(eval(&replayed, "region", "model:m").status, EvalStatus::Pass, "{replayed:?}");

    std::fs::remove_file(&file).expect("removed");
    let replay = Arc::new(Cassettes::open(dir.path(), Mode::Replay).expect("opened"));
    let missed = run_layer1_full(&fixture, &settings, None, Some(replay)).await.expect("ran");
    let region = eval(&missed, "region", "model:m");
    assert_eq!(region.status, EvalStatus::Error, "{region:?}");
    let reason = region.traces[0].reason.clone().unwrap_or_default();
    assert!(reason.contains("no recording of the embedding of a text of 6 characters (sha256:"), "{reason}");
    assert!(!reason.contains("Europe"), "the text is not quoted (it may be a model's): {reason}");
    assert!(missed.provider_failed(), "a replay miss is exit status 5, as a model's");
    match first_replay_miss(&missed) {
        Some(RunEvent::ReplayMiss { case, run, reason, .. }) => {
            assert_eq!((case.as_str(), run), ("region", 1));
            assert!(reason.contains("no recording of the embedding"), "{reason}");
        }
        other => panic!("the embedding's miss is said on stderr too: {other:?}"),
    }
}

#[tokio::test]
async fn a_case_whose_embeddings_model_has_no_key_is_skipped_with_the_reason_and_costs_no_call() {
    let fixture = fixture_of(&matcher_set("{match: embedding, value: Europe}", 1), &[]).await;
    let model = ScriptedServer::start(region_script("the European Union", 1)).await;
    let mut settings = matcher_settings(&fixture, &model.base_url, "http://127.0.0.1:9/v1", None);
    // `nokey` needs NOKEY_API_KEY, which is not set.
    settings.embedding_model = Some(ModelRef { provider: "nokey".into(), model: "e".into() });
    let section = run_layer1(&fixture, &settings).await.expect("ran");
    let region = eval(&section, "region", "model:m");
    assert_eq!(region.status, EvalStatus::Skipped, "{region:?}");
    assert!(region.reason.as_deref().is_some_and(|reason| reason.contains("`embedding` matchers need")), "{region:?}");
    assert!(
        section
            .layer1_notes
            .iter()
            .any(|note| note.contains("nokey:e did not run: no API key") && note.contains("set `NOKEY_API_KEY`")),
        "{:?}",
        section.layer1_notes
    );
    assert!(model.received().is_empty(), "the case did not run");
}

#[tokio::test]
async fn a_cached_verdict_of_an_embedding_case_is_reused_only_with_the_same_embeddings_model() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = || CacheUse {
        store: crate::cache::VerdictCache::new(dir.path().to_path_buf(), crate::cache::Mode::ReadWrite),
        server_key: None,
        measured_at: "2026-11-30T10:00:00Z".into(),
        manifest: None,
        moved: None,
    };
    let fixture = fixture_of(&matcher_set("{match: embedding, value: Europe}", 1), &[]).await;
    let model = ScriptedServer::start(region_script("the European Union", 2)).await;
    let embeddings = vectors_server(Vec::new()).await;
    let mut settings = matcher_settings(&fixture, &model.base_url, &embeddings.base_url, None);
    let first = run_layer1_cached(&fixture, &settings, Some(cache())).await.expect("ran");
    assert_eq!(eval(&first, "region", "model:m").status, EvalStatus::Pass);
    let again = run_layer1_cached(&fixture, &settings, Some(cache())).await.expect("ran");
    assert!(eval(&again, "region", "model:m").cached.is_some(), "same embeddings model: reused");
    assert_eq!(again.model_calls, 0);
    assert!(
        again.layer1_notes[0].contains("the argument matchers' embeddings and judge calls are not counted"),
        "{:?}",
        again.layer1_notes
    );

    settings.embedding_model = Some(ModelRef { provider: "emb".into(), model: "e-large".into() });
    let other = run_layer1_cached(&fixture, &settings, Some(cache())).await.expect("ran");
    let region = eval(&other, "region", "model:m");
    assert!(region.cached.is_none(), "another embeddings model measures afresh: {region:?}");
    assert_eq!(region.status, EvalStatus::Pass);
    assert_eq!(embeddings.received().len(), 2, "one embeddings request per model");
}

/// A trial of `calls` model calls, judged `samples` times with `verdict` when given.
fn judged_trace(calls: usize, judge: Option<(&str, usize)>) -> crate::report::evals::TrialTrace {
    let judge = judge.map(|(verdict, samples)| {
        json!({"model": "judge:j", "prompt_version": 1, "rubric_sha256": "sha256:r", "samples": samples,
            "verdict": verdict, "criteria": []})
    });
    serde_json::from_value(json!({
        "run": 1, "status": "pass", "reason": null, "ending": "answer", "turns": calls, "model_calls": calls,
        "duration_ms": 1, "calls": [], "answer": null, "stop_reasons": [], "input_tokens": null,
        "output_tokens": null, "criteria": [], "judge": judge
    }))
    .expect("a trace")
}

#[test]
fn the_calls_a_reused_verdict_saved_count_the_rubric_judge_and_say_what_is_not_counted() {
    let mut plain = crate::report::evals::EvalResult::for_tests("a", "m:x", false, 2, 2, 2);
    plain.traces = vec![judged_trace(2, None), judged_trace(3, None)];
    assert_eq!(saved_calls([&plain].into_iter(), false), "~5 model calls saved");
    let mut judged = plain.clone();
    judged.traces = vec![judged_trace(2, Some(("pass", 3))), judged_trace(2, Some(("fail", 3)))];
    let mut errored = plain.clone();
    errored.traces = vec![judged_trace(1, Some(("judge_error", 3)))];
    assert_eq!(
        saved_calls([&plain, &judged, &errored].into_iter(), false),
        "~16 model calls saved: 10 by the trials under test, 6 by the rubric judge"
    );
    assert_eq!(
        saved_calls([&plain].into_iter(), true),
        "~5 model calls saved; the argument matchers' embeddings and judge calls are not counted"
    );
}

#[test]
fn a_missing_key_says_which_variable_to_set_the_action_input_and_the_replay_way_out() {
    let detail = no_key_detail("OPENAI_API_KEY");
    for part in ["`OPENAI_API_KEY` is unset or empty", "input `openai-api-key`", "--cassettes DIR", "forks"] {
        assert!(detail.contains(part), "{part:?} missing from {detail}");
    }
    assert!(no_key_detail("ANTHROPIC_API_KEY").contains("input `anthropic-api-key`"));
    let custom = no_key_detail("ACME_KEY");
    assert!(custom.contains("set `ACME_KEY`") && !custom.contains("Action, the input"), "{custom}");
}

#[test]
fn no_replay_miss_is_said_when_no_trial_missed() {
    assert_eq!(first_replay_miss(&EvalsSection::default()), None);
}

/// A trial the rubric judge could not judge, for `reason` (of that `cause`).
fn judge_error_trace(cause: &str, reason: &str) -> crate::report::evals::TrialTrace {
    serde_json::from_value(json!({
        "run": 1, "status": "error", "reason": format!("judge_error: {reason}"), "cause": cause, "ending": "answer", "turns": 1,
        "model_calls": 1, "duration_ms": 1, "calls": [], "answer": null, "stop_reasons": [], "input_tokens": null,
        "output_tokens": null, "criteria": [],
        "judge": {"model": "judge:j", "prompt_version": 1, "rubric_sha256": "sha256:r", "samples": 1,
            "verdict": "judge_error", "reason": reason, "criteria": []}
    }))
    .expect("a trace")
}

#[test]
fn a_judge_replay_miss_is_a_provider_failure_said_once_and_a_failing_judge_counts_as_spoiled_trials() {
    let section_of = |traces: Vec<crate::report::evals::TrialTrace>| {
        let mut eval = crate::report::evals::EvalResult::for_tests("a", "m:x", false, 0, traces.len(), 1);
        eval.traces = traces;
        EvalsSection { evals: vec![eval], ..EvalsSection::default() }
    };
    let missed = section_of(vec![judge_error_trace(
        "judge_replay_miss",
        "replay miss: model judge:j, case \"judge:a\": no recording",
    )]);
    assert!(missed.provider_failed(), "one judge replay miss is exit 5, as a model's is");
    assert!(matches!(first_replay_miss(&missed), Some(RunEvent::ReplayMiss { count: 1, .. })));

    let broken = section_of(vec![judge_error_trace("judge", "the judge model failed: HTTP 500"); 2]);
    assert_eq!(broken.run_errors(), (2, 2));
    assert!(broken.provider_failed(), "a judge that fails every trial spoils more than a fifth");
    assert_eq!(first_replay_miss(&broken), None);

    let capped = section_of(vec![judge_error_trace("call_cap", crate::report::evals::JUDGE_CAP_REACHED); 2]);
    assert_eq!(capped.run_errors(), (0, 2), "the call cap is its own exit status, not the provider's");
}

/// `canned`'s JSON body with the provider's `model` and `system_fingerprint` set.
fn reporting(canned: &Canned, model: &str, fingerprint: &str) -> Canned {
    let mut body: serde_json::Value = serde_json::from_str(&canned.body).expect("json");
    body["model"] = json!(model);
    body["system_fingerprint"] = json!(fingerprint);
    Canned::json(200, &body.to_string())
}

#[tokio::test]
async fn each_eval_lists_the_distinct_model_versions_its_trials_were_served_by_sorted() {
    let fixture = fixture_of(&matcher_set("Europe", 3), &[]).await;
    let call = chat_call("test_header_param", &json!({"region": "Europe"}));
    let done = chat_text("Done.");
    // Run 1 on fp_b, run 2 on fp_a (both turns), run 3 on fp_b again: two distinct pairs.
    let script = vec![
        reporting(&call, "gpt-x-2026-01-01", "fp_b"),
        reporting(&done, "gpt-x-2026-01-01", "fp_b"),
        reporting(&call, "gpt-x-2026-01-01", "fp_a"),
        reporting(&done, "gpt-x-2026-01-01", "fp_a"),
        reporting(&call, "gpt-x-2026-01-01", "fp_b"),
        done,
    ];
    let model = ScriptedServer::start(script).await;
    let embeddings = vectors_server(Vec::new()).await;
    let settings = matcher_settings(&fixture, &model.base_url, &embeddings.base_url, None);
    let section = run_layer1(&fixture, &settings).await.expect("ran");
    let region = eval(&section, "region", "model:m");
    assert_eq!((region.status, region.passed), (EvalStatus::Pass, 3), "{region:?}");
    let shown: Vec<String> = region.reported_models.iter().map(ToString::to_string).collect();
    // The last answer's `"model": "m"` is a third version.
    assert_eq!(shown, ["gpt-x-2026-01-01 (fp_a)", "gpt-x-2026-01-01 (fp_b)", "m"]);
    let written = serde_json::to_value(region).expect("json");
    assert_eq!(
        written["reported_models"][0],
        json!({"model": "gpt-x-2026-01-01", "system_fingerprint": "fp_a"}),
        "{written}"
    );
    assert_eq!(written["reported_models"][2], json!({"model": "m"}), "no fingerprint, no member");
}

#[tokio::test]
async fn a_result_over_256_kib_is_cut_and_the_trace_and_summary_say_what_the_server_sent() {
    let set = "version: 1\ndefaults: {runs: 1}\ncases:\n  - id: big\n    prompt: \"Give me the short text.\"\n    expect_tool: test_simple_text\n";
    let fixture = fixture_with(set, &[], &["chaos-big-result"]).await;
    let mut settings = settings(&fixture, &["openai:demo-good"]);
    settings.trace_results = TraceResults::Full;
    let section = run_layer1(&fixture, &settings).await.expect("ran");
    let big = eval(&section, "big", "openai:demo-good");
    assert_eq!(big.status, EvalStatus::Pass, "{big:?}");
    let call = &big.traces[0].calls[0];
    let cut = call.result_cut.expect("the trace says the result was cut");
    assert_eq!(cut.server_bytes, crate::demo::BIG_RESULT_BYTES, "the size the server sent, 2.5 MB");
    let result = call.result.as_deref().expect("kept in full");
    assert_eq!(cut.model_bytes, result.len(), "the size the model saw");
    assert!(cut.model_bytes < crate::agent::tools::MODEL_RESULT_BYTES + 200, "{cut:?}");
    assert!(
        result.ends_with(&format!("the tool sent {} bytes]", cut.server_bytes)),
        "{}",
        &result[result.len() - 120..]
    );
    // Truncated traces say both sizes too, not the cut copy's length alone.
    settings.trace_results = TraceResults::Truncated;
    let section = run_layer1(&fixture, &settings).await.expect("ran");
    let call = &eval(&section, "big", "openai:demo-good").traces[0].calls[0];
    let result = call.result.as_deref().expect("kept in part");
    assert!(result.contains(&format!("the server sent {} bytes", crate::demo::BIG_RESULT_BYTES)), "{result}");
    assert!(result.contains(&format!("the model saw {}", call.result_cut.expect("cut").model_bytes)), "{result}");
    // The summary names the tool whose results were cut.
    let mut report = crate::report::model::RunReport::empty_for_tests();
    report.layers = vec![1];
    report.evals = Some(section);
    let summary = crate::report::markdown::render(&report);
    assert!(summary.contains("`test_simple_text` sent results of up to 2.5 MB"), "{summary}");
}

// ---- calls the harness refused to send ----

/// Settings for the scripted model `model:m` at `base_url`, one trial at a time.
fn scripted_settings(fixture: &Fixture, base_url: &str) -> Layer1Settings {
    let mut settings = settings(fixture, &["model:m"]);
    settings.providers.push(ProviderDef {
        id: "model".into(),
        api: Api::OpenAi,
        base_url: base_url.into(),
        api_key_env: None,
        api_key: None,
    });
    settings.concurrency = 1;
    settings.trace_results = TraceResults::Full;
    settings
}

/// One trial of a case that expects `tool` (no `expect_args`), against the demo server with the
/// strict-schema tools, the model answering with `script`.
async fn strict_case(tool: &str, script: Vec<Canned>) -> crate::report::evals::EvalResult {
    let set = format!(
        "version: 1\ndefaults: {{runs: 1}}\ncases:\n  - id: strict\n    prompt: \"Use {tool}.\"\n    expect_tool: {tool}\n"
    );
    let fixture = fixture_with(&set, &[], &["chaos-strict-schemas"]).await;
    let model = ScriptedServer::start(script).await;
    let section = run_layer1(&fixture, &scripted_settings(&fixture, &model.base_url)).await.expect("ran");
    eval(&section, "strict", "model:m").clone()
}

/// The arguments criterion of a trial's trace: (verdict, reason).
fn arguments_criterion(trace: &crate::report::evals::TrialTrace) -> (String, String) {
    let criterion = trace.criteria.iter().find(|criterion| criterion.criterion == "arguments");
    let criterion = criterion.unwrap_or_else(|| panic!("no arguments criterion: {trace:?}"));
    (criterion.verdict.clone(), criterion.reason.clone())
}

#[tokio::test]
async fn a_call_refused_for_its_schema_fails_the_arguments_grader_with_the_schema_error() {
    // `{}` for a top-level anyOf of two required fields, an object argument sent as a JSON
    // string, a value that breaks a pattern: none is sent, and none passes without expect_args.
    let refused = [
        ("test_lookup", json!({}), "anyOf"),
        ("test_search", json!({"filter": "{\"status\": \"open\"}"}), "\"object\""),
        ("test_order", json!({"code": "12345"}), "^ORD-[0-9]{6}$"),
    ];
    for (tool, arguments, error) in refused {
        let script = vec![chat_call(tool, &arguments), chat_text("Sorry, that did not work.")];
        let strict = strict_case(tool, script).await;
        assert_eq!((strict.status, strict.passed), (EvalStatus::Fail, 0), "{tool}: {strict:?}");
        let trace = &strict.traces[0];
        assert_eq!(trace.status, TrialStatus::Fail, "{tool}: {trace:?}");
        assert!(!trace.calls[0].sent, "{tool}: the call was not sent: {trace:?}");
        let (verdict, reason) = arguments_criterion(trace);
        assert_eq!(verdict, "fail", "{tool}: {reason}");
        assert!(reason.contains("inputSchema") && reason.contains(error), "{tool}: the schema error: {reason}");
        assert_eq!(strict.graders["arguments"], crate::report::evals::GraderTally { passed: 0, graded: 1 }, "{tool}");
        assert_eq!(strict.graders["selection"].passed, 1, "{tool}: selection accepted the call");
        assert!(trace.reason.as_deref().is_some_and(|why| why.starts_with("arguments:")), "{tool}: {trace:?}");
    }
}

#[tokio::test]
async fn a_refused_call_the_model_corrects_with_a_sent_call_passes_with_a_note() {
    let script = vec![
        chat_call("test_order", &json!({"code": "12345"})),
        chat_call("test_order", &json!({"code": "ORD-123456"})),
        chat_text("Here is your order."),
    ];
    let strict = strict_case("test_order", script).await;
    assert_eq!((strict.status, strict.passed), (EvalStatus::Pass, 1), "{strict:?}");
    let trace = &strict.traces[0];
    assert_eq!((trace.calls[0].sent, trace.calls[1].sent), (false, true), "{trace:?}");
    let (verdict, reason) = arguments_criterion(trace);
    assert_eq!(verdict, "pass", "{reason}");
    assert!(reason.contains("note: call 1 to `test_order` was not sent"), "{reason}");
    assert!(reason.contains("^ORD-[0-9]{6}$") && reason.contains("call 2 to `test_order` was sent"), "{reason}");
}

#[test]
fn the_exit_status_reads_a_trials_typed_cause_never_its_message() {
    let section_of = |trace: crate::report::evals::TrialTrace| {
        let mut eval = crate::report::evals::EvalResult::for_tests("a", "m:x", false, 0, 1, 1);
        eval.traces = vec![trace];
        EvalsSection { evals: vec![eval], ..EvalsSection::default() }
    };
    // A message that reads like a replay miss, from a trial the server spoiled: not the provider's.
    let server = section_of(judge_error_trace("server", "replay miss: argument_check_error: judge_error"));
    assert_eq!(server.run_errors(), (0, 1));
    assert!(!server.provider_failed());
    assert_eq!(first_replay_miss(&server), None);
    // A replay miss whatever its message says.
    let missed = section_of(judge_error_trace("replay_miss", "no recording"));
    assert!(missed.provider_failed());
    assert!(matches!(first_replay_miss(&missed), Some(RunEvent::ReplayMiss { count: 1, .. })));
}

/// [`confirm`] of `pairs` over the fixture, as layer 1 calls it after a tripped gate, sending
/// the re-run's events to `events`.
async fn confirm_observed(
    fixture: &Fixture,
    settings: &Layer1Settings,
    cassettes: Option<Arc<Cassettes>>,
    pairs: &BTreeMap<(String, String), usize>,
    events: &(dyn Fn(&crate::events::RunEvent) + Sync),
) -> Result<EvalsSection, UserError> {
    on_demo_server(fixture, settings, None, cassettes, Pass::Confirm(pairs), events).await
}

#[tokio::test]
async fn a_confirmation_re_run_keeps_the_cassette_keys_and_its_events_number_the_trials_on_after_the_first() {
    use crate::events::RunEvent;
    use crate::providers::cassette::Mode;
    let dir = tempfile::tempdir().expect("temp dir");
    let fixture = fixture(&[]).await;
    let mut settings = settings(&fixture, &["openai:demo-good"]);
    settings.runs = Some(2);
    settings.record = true;
    let cassettes = Arc::new(Cassettes::open(dir.path(), Mode::Record).expect("opened"));
    run_layer1_full(&fixture, &settings, None, Some(cassettes.clone())).await.expect("ran");
    cassettes.save().expect("saved");

    // The re-run of `region` after its 2 first trials, replayed: it finds its answers under the
    // keys the first pass recorded (trials 1 and 2), and its events call its trials 3 and 4.
    let settings = Layer1Settings { record: false, ..settings };
    let replay = Arc::new(Cassettes::open(dir.path(), Mode::Replay).expect("opened"));
    let pairs = BTreeMap::from([(("openai:demo-good".to_owned(), "region".to_owned()), 2)]);
    let seen = std::sync::Mutex::new(Vec::new());
    let observe = |event: &RunEvent| seen.lock().expect("lock").push(event.clone());
    let rerun = confirm_observed(&fixture, &settings, Some(replay), &pairs, &observe).await.expect("ran");
    let region = eval(&rerun, "region", "openai:demo-good");
    assert_eq!((region.status, region.passed, region.runs), (EvalStatus::Pass, 2, 2), "{region:?}");
    let seen = seen.into_inner().expect("lock");
    let mut started: Vec<usize> = seen
        .iter()
        .filter_map(|event| match event {
            RunEvent::TrialStarted { trial, .. } => Some(trial.trial),
            _ => None,
        })
        .collect();
    started.sort_unstable();
    assert_eq!(started, [3, 4], "{seen:?}");
    let calls: Vec<usize> = seen
        .iter()
        .filter_map(|event| match event {
            RunEvent::ModelCallFinished { trial, outcome: "answer", .. } => Some(trial.trial),
            _ => None,
        })
        .collect();
    assert!(calls.len() == 4 && calls.iter().all(|trial| [3, 4].contains(trial)), "two turns a trial: {calls:?}");
    assert!(!seen.iter().any(|event| matches!(event, RunEvent::CaseGraded { .. })), "the re-run grades nothing aloud");
}
