//! The cassette store against a scripted fake model: record then replay, misses and what they
//! say, generated tool-call ids, one key per run, corrupt files, atomic and deterministic saves,
//! and that a provider's key never reaches a cassette.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::{Value, json};

use super::*;
use crate::providers::{BoxFuture, Sampling, ToolResult, ToolSpec};

const MODEL: &str = "openai:gpt-4.1-mini";
const CANARY: &str = "sk-canary-7f3a9c2e5b1d4e6f8a0b";

/// A model that calls `files.read` once (with an id it makes up anew each time, as an adapter
/// does for a model that sent none), then answers with the tool's text, reporting the model
/// version and fingerprint that served it. It holds a key, as a real
/// adapter does, and counts its calls.
#[derive(Debug)]
struct FakeModel {
    api_key: String,
    base_url: String,
    calls: AtomicU32,
    fail: Option<ProviderError>,
}

impl FakeModel {
    fn new() -> Self {
        Self {
            api_key: CANARY.to_owned(),
            base_url: "http://127.0.0.1:9/v1".into(),
            calls: AtomicU32::new(0),
            fail: None,
        }
    }

    fn failing(error: ProviderError) -> Self {
        Self { fail: Some(error), ..Self::new() }
    }

    fn calls(&self) -> u32 {
        self.calls.load(Ordering::SeqCst)
    }
}

impl Provider for FakeModel {
    fn complete<'a>(&'a self, request: &'a CompletionRequest) -> BoxFuture<'a, Result<Completion, ProviderError>> {
        Box::pin(async move {
            let call = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
            if let Some(error) = &self.fail {
                return Err(error.clone());
            }
            // Both would be sent on the wire; neither may reach a cassette.
            assert!(!self.api_key.is_empty() && !self.base_url.is_empty());
            match request.messages.last() {
                Some(Message::ToolResult(result)) => Ok(Completion {
                    text: Some(format!("The file says: {}", result.content)),
                    tool_calls: Vec::new(),
                    finish: FinishReason::Stop,
                    usage: Some(Usage {
                        input_tokens: Some(120),
                        output_tokens: Some(9),
                        cache_read_tokens: Some(100),
                        cache_write_tokens: None,
                        reasoning_tokens: Some(4),
                        reported_cost_usd: Some(0.0005),
                    }),
                    // What the provider said served the answer (the first turn reports nothing).
                    reported_model: Some("gpt-4.1-mini-2025-04-14".into()),
                    system_fingerprint: Some("fp_fake01".into()),
                }),
                _ => {
                    let mut tool_call =
                        ToolCall::new(format!("gen_{call}"), "files.read", json!({"path": "/etc/hosts"}));
                    tool_call.id_generated = true;
                    Ok(Completion {
                        text: None,
                        tool_calls: vec![tool_call],
                        finish: FinishReason::ToolCalls,
                        usage: Some(Usage { input_tokens: Some(100), output_tokens: None, ..Default::default() }),
                        reported_model: None,
                        system_fingerprint: None,
                    })
                }
            }
        })
    }
}

fn first_request() -> CompletionRequest {
    CompletionRequest {
        system: Some("Answer briefly.".into()),
        messages: vec![Message::User("What is in /etc/hosts?".into())],
        tools: vec![ToolSpec {
            name: "files.read".into(),
            description: Some("Reads a file".into()),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        }],
        sampling: Sampling { temperature: Some(0.2), top_p: None, max_output_tokens: Some(256) },
        tool_choice: ToolChoice::Auto,
    }
}

fn key(case: &str, run: u32, turn: u32) -> CallKey {
    CallKey { case: case.into(), trial: run, turn }
}

/// What the runner does: call, feed tool calls back with `tool_output` as their result, until the
/// model stops calling tools. `rename_ids` stands for a runner that gives calls ids of its own.
async fn run_case(
    cassettes: &Cassettes,
    live: Option<&dyn Provider>,
    case: &str,
    run: u32,
    tool_output: &str,
    rename_ids: bool,
) -> Result<Vec<Completion>, CassetteError> {
    let mut request = first_request();
    let mut completions = Vec::new();
    for turn in 0..4 {
        let completion = cassettes.complete(MODEL, live, &key(case, run, turn), &request).await?.completion;
        completions.push(completion.clone());
        if completion.tool_calls.is_empty() {
            break;
        }
        let mut tool_calls = completion.tool_calls.clone();
        if rename_ids {
            for call in &mut tool_calls {
                call.id = format!("runner-{turn}-{}", call.id.len() * 7919);
            }
        }
        request.messages.push(Message::Assistant { text: completion.text.clone(), tool_calls: tool_calls.clone() });
        for call in &tool_calls {
            request.messages.push(Message::ToolResult(ToolResult {
                call_id: call.id.clone(),
                content: tool_output.into(),
                is_error: false,
            }));
        }
    }
    Ok(completions)
}

/// Records `runs` runs of case `hosts` into `dir` and saves; returns the live model.
async fn record(dir: &Path, runs: u32) -> FakeModel {
    let live = FakeModel::new();
    let cassettes = Cassettes::open(dir, Mode::Record).expect("open for recording");
    for run in 0..runs {
        run_case(&cassettes, Some(&live), "hosts", run, "127.0.0.1 localhost", false).await.expect("recorded");
    }
    cassettes.save().expect("saved");
    live
}

fn saved(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("openai_gpt-4.1-mini.json")).expect("file")).expect("json")
}

#[tokio::test]
async fn record_then_replay_gives_identical_completions_without_a_live_model() {
    let dir = tempfile::tempdir().expect("temp dir");
    let live = FakeModel::new();
    let recorder = Cassettes::open(dir.path(), Mode::Record).expect("open");
    let recorded = run_case(&recorder, Some(&live), "hosts", 0, "127.0.0.1 localhost", false).await.expect("recorded");
    assert_eq!(live.calls(), 2);
    assert_eq!(recorded.len(), 2);
    assert_eq!(recorded[0].tool_calls[0].id, "gen_1");
    assert_eq!(recorded[1].text.as_deref(), Some("The file says: 127.0.0.1 localhost"));
    let paths = recorder.save().expect("saved");
    assert_eq!(paths, [dir.path().join("openai_gpt-4.1-mini.json")]);
    // The reported version and fingerprint are stored with the answer that carried them, and
    // left out of the one that carried none.
    let file = saved(dir.path());
    assert_eq!(file["interactions"][1]["response"]["model"], "gpt-4.1-mini-2025-04-14");
    assert_eq!(file["interactions"][1]["response"]["system_fingerprint"], "fp_fake01");
    let first = file["interactions"][0]["response"].as_object().expect("object");
    assert!(!first.contains_key("model") && !first.contains_key("system_fingerprint"), "{first:?}");

    let player = Cassettes::open(dir.path(), Mode::Replay).expect("open for replay");
    assert_eq!(player.mode(), Mode::Replay);
    let replayed = run_case(&player, None, "hosts", 0, "127.0.0.1 localhost", false).await.expect("replayed");
    assert_eq!(replayed, recorded);
    assert_eq!(
        (replayed[1].reported_model.as_deref(), replayed[1].system_fingerprint.as_deref()),
        (Some("gpt-4.1-mini-2025-04-14"), Some("fp_fake01"))
    );
    // A live model given to replay is not asked either.
    let again = run_case(&player, Some(&live), "hosts", 0, "127.0.0.1 localhost", false).await.expect("replayed");
    assert_eq!(again, recorded);
    assert_eq!(live.calls(), 2);
    // Replay has nothing to save.
    assert_eq!(player.save().expect("nothing to save"), Vec::<PathBuf>::new());

    // The same file embedded in the binary replays alike.
    let text = std::fs::read_to_string(&paths[0]).expect("file");
    let embedded = Cassettes::from_texts(&[("openai_gpt-4.1-mini.json", &text)]).expect("embedded");
    assert_eq!(run_case(&embedded, None, "hosts", 0, "127.0.0.1 localhost", false).await.expect("hit"), recorded);
}

#[tokio::test]
async fn a_hand_written_cassette_replays_its_exact_response() {
    // Written in the form of files recorded before `model` and `system_fingerprint` were kept.
    let call_key = key("weather", 2, 0);
    let request = first_request();
    let canonical = canonical_request(MODEL, &call_key, &request);
    let file = json!({
        "format": 1,
        "model": MODEL,
        "interactions": [{
            "key": jcs::hash(&canonical), "case": "weather", "run": 2, "turn": 0, "request": canonical,
            "response": {"text": "Sunny.", "tool_calls": [{"id": "toolu_01", "name": "files.read",
                         "arguments": {"path": "a"}, "unknown_tool": true}],
                         "finish": "other:end_turn", "usage": null},
            "recorded_at": "2026-11-30T12:00:00Z"
        }]
    });
    let cassettes = Cassettes::from_texts(&[("weather.json", &file.to_string())]).expect("readable");
    let completion = cassettes.complete(MODEL, None, &call_key, &request).await.expect("a hit").completion;
    let mut expected_call = ToolCall::new("toolu_01", "files.read", json!({"path": "a"}));
    expected_call.unknown_tool = true;
    assert_eq!(
        completion,
        Completion {
            text: Some("Sunny.".into()),
            tool_calls: vec![expected_call],
            finish: FinishReason::Other("end_turn".into()),
            usage: None,
            reported_model: None,
            system_fingerprint: None,
        }
    );
}

#[tokio::test]
async fn a_miss_names_the_case_run_and_turn() {
    let dir = tempfile::tempdir().expect("temp dir");
    record(dir.path(), 1).await;
    let player = Cassettes::open(dir.path(), Mode::Replay).expect("open");
    let error = player.complete(MODEL, None, &key("other-case", 3, 0), &first_request()).await.expect_err("a miss");
    let CassetteError::Miss { model, case, trial: run, turn, nearest } = &error else {
        panic!("not a miss: {error:?}")
    };
    assert_eq!((model.as_str(), case.as_str(), *run, *turn, nearest), (MODEL, "other-case", 3, 0, &None));
    assert_eq!(
        error.to_string(),
        "model openai:gpt-4.1-mini, case \"other-case\", trial 3, turn 0: no recording matches this request; \
         nothing is recorded for this case, trial and turn; record it with --record"
    );
}

#[tokio::test]
async fn a_changed_tool_result_is_replayed_by_the_tolerant_match_and_marked() {
    let dir = tempfile::tempdir().expect("temp dir");
    record(dir.path(), 1).await;
    let player = Cassettes::open(dir.path(), Mode::Replay).expect("open");
    let changed = run_case(&player, None, "hosts", 0, "10.0.0.1 router", false).await.expect("replayed");
    assert_eq!(changed.len(), 2, "both turns answered as recorded");
    assert_eq!(changed[1].text.as_deref(), Some("The file says: 127.0.0.1 localhost"), "the recorded answer");

    // The second turn read a changed result: marked; the first read none: not marked.
    let mut request = first_request();
    let first = player.complete(MODEL, None, &key("hosts", 0, 0), &request).await.expect("a hit");
    assert!(!first.result_changed);
    request.messages.push(Message::Assistant { text: None, tool_calls: first.completion.tool_calls.clone() });
    let result = |content: &str, is_error: bool| {
        Message::ToolResult(ToolResult {
            call_id: first.completion.tool_calls[0].id.clone(),
            content: content.into(),
            is_error,
        })
    };
    let mut same = request.clone();
    same.messages.push(result("127.0.0.1 localhost", false));
    assert!(!player.complete(MODEL, None, &key("hosts", 0, 1), &same).await.expect("exact").result_changed);
    let mut other = request.clone();
    other.messages.push(result("10.0.0.1 router", false));
    assert!(player.complete(MODEL, None, &key("hosts", 0, 1), &other).await.expect("tolerant").result_changed);

    // The model side still counts: an error flag that changed, or another prompt, misses.
    let mut flagged = request.clone();
    flagged.messages.push(result("127.0.0.1 localhost", true));
    let error = player.complete(MODEL, None, &key("hosts", 0, 1), &flagged).await.expect_err("a miss");
    assert!(error.to_string().contains("messages[2] differs"), "{error}");
    let mut prompt = first_request();
    prompt.messages[0] = Message::User("What is in /etc/passwd?".into());
    player.complete(MODEL, None, &key("hosts", 0, 0), &prompt).await.expect_err("another prompt misses");
}

#[test]
fn a_judges_trace_is_data_to_the_tolerant_match_and_its_task_is_not() {
    let judge = |task: &str, trace: &str| {
        let text = format!("## The task\n{task}\n\n{}\n{trace}", crate::providers::TRACE_HEADING);
        let request = CompletionRequest { messages: vec![Message::User(text)], ..first_request() };
        canonical_request(MODEL, &key("judge:hosts", 1, 0), &request)
    };
    let recorded = judge("Read the hosts file.", "files.read -> 127.0.0.1");
    assert_eq!(model_key(&recorded), model_key(&judge("Read the hosts file.", "files.read -> 10.0.0.1")));
    assert_ne!(jcs::hash(&recorded), jcs::hash(&judge("Read the hosts file.", "files.read -> 10.0.0.1")));
    assert_ne!(model_key(&recorded), model_key(&judge("Read the passwd file.", "files.read -> 127.0.0.1")));
}

#[tokio::test]
async fn a_changed_tool_result_misses_in_exact_mode_and_names_the_message() {
    let dir = tempfile::tempdir().expect("temp dir");
    record(dir.path(), 1).await;
    let player = Cassettes::open(dir.path(), Mode::Replay).expect("open").matching(Match::Exact);
    let error = run_case(&player, None, "hosts", 0, "10.0.0.1 router", false).await.expect_err("a miss");
    let CassetteError::Miss { case, trial: run, turn, nearest, .. } = &error else { panic!("not a miss: {error:?}") };
    assert_eq!((case.as_str(), *run, *turn), ("hosts", 0, 1));
    assert_eq!(nearest.as_deref(), Some("messages[2] differs (a tool result changed?)"));
    let text = error.to_string();
    assert!(text.contains("case \"hosts\", trial 0, turn 1"), "{text}");
    assert!(text.contains("the request changed: messages[2] differs (a tool result changed?)"), "{text}");
    assert!(text.contains("re-record with --record"), "{text}");
}

#[tokio::test]
async fn other_changes_are_named_too() {
    let dir = tempfile::tempdir().expect("temp dir");
    record(dir.path(), 1).await;
    let player = Cassettes::open(dir.path(), Mode::Replay).expect("open");
    let nearest = |error: CassetteError| match error {
        CassetteError::Miss { nearest, .. } => nearest,
        other => panic!("not a miss: {other:?}"),
    };

    let mut request = first_request();
    request.sampling.temperature = Some(0.7);
    let error = player.complete(MODEL, None, &key("hosts", 0, 0), &request).await.expect_err("a miss");
    assert_eq!(nearest(error).as_deref(), Some("sampling.temperature differs (the case's sampling changed?)"));

    let mut request = first_request();
    request.tools[0].input_schema["properties"]["encoding"] = json!({"type": "string"});
    let error = player.complete(MODEL, None, &key("hosts", 0, 0), &request).await.expect_err("a miss");
    assert_eq!(
        nearest(error).as_deref(),
        Some("tools[0] differs (a tool's name, description or input schema changed?)")
    );

    let mut request = first_request();
    request.messages.push(Message::User("And /etc/passwd?".into()));
    let error = player.complete(MODEL, None, &key("hosts", 0, 0), &request).await.expect_err("a miss");
    assert_eq!(nearest(error).as_deref(), Some("messages has 2 entries where the recording has 1"));

    let mut request = first_request();
    request.system = None;
    let error = player.complete(MODEL, None, &key("hosts", 0, 0), &request).await.expect_err("a miss");
    assert_eq!(nearest(error).as_deref(), Some("system differs (the system prompt changed?)"));
}

#[tokio::test]
async fn generated_tool_call_ids_do_not_break_replay() {
    let dir = tempfile::tempdir().expect("temp dir");
    let recorded = {
        let live = FakeModel::new();
        let recorder = Cassettes::open(dir.path(), Mode::Record).expect("open");
        let completions = run_case(&recorder, Some(&live), "hosts", 0, "127.0.0.1", false).await.expect("recorded");
        recorder.save().expect("saved");
        completions
    };
    let player = Cassettes::open(dir.path(), Mode::Replay).expect("open");
    // The runner gives the calls ids of its own: the next request still matches.
    let replayed = run_case(&player, None, "hosts", 0, "127.0.0.1", true).await.expect("replayed");
    assert_eq!(replayed, recorded);
    // Ids come back as recorded.
    assert_eq!(replayed[0].tool_calls[0].id, "gen_1");
    assert!(replayed[0].tool_calls[0].id_generated);

    // The stored request holds positions, not ids.
    let file = saved(dir.path());
    let request = &file["interactions"][1]["request"];
    assert_eq!(request["messages"][1]["tool_calls"][0]["id"], "call_1");
    assert_eq!(request["messages"][2]["call_id"], "call_1");
    assert_eq!(request["messages"][1]["tool_calls"][0].get("id_generated"), None);
}

#[test]
fn call_ids_become_positions_in_first_appearance_order() {
    let mut request = first_request();
    request.messages.push(Message::Assistant {
        text: Some("Reading both.".into()),
        tool_calls: vec![
            ToolCall::new("zz", "files.read", json!({"path": "a"})),
            ToolCall::new("aa", "files.read", json!({"path": "b"})),
        ],
    });
    for id in ["aa", "zz"] {
        request.messages.push(Message::ToolResult(ToolResult {
            call_id: id.into(),
            content: id.into(),
            is_error: false,
        }));
    }
    let canonical = canonical_request(MODEL, &key("c", 0, 1), &request);
    assert_eq!(
        canonical["messages"],
        json!([
            {"role": "user", "text": "What is in /etc/hosts?"},
            {"role": "assistant", "text": "Reading both.", "tool_calls": [
                {"id": "call_1", "name": "files.read", "arguments": {"path": "a"}},
                {"id": "call_2", "name": "files.read", "arguments": {"path": "b"}}]},
            {"role": "tool", "call_id": "call_2", "content": "aa", "is_error": false},
            {"role": "tool", "call_id": "call_1", "content": "zz", "is_error": false},
        ])
    );
    assert_eq!(canonical["sampling"], json!({"temperature": 0.2, "top_p": null, "max_output_tokens": 256}));
    assert_eq!(canonical["tool_choice"], "auto");
    assert_eq!(canonical["tools"][0]["schema_sha256"], jcs::hash(&request.tools[0].input_schema));
    assert_eq!(canonical["v"], 1);

    // Other ids in the same positions give the same key; swapping which result answers which call
    // does not.
    let mut renamed = request.clone();
    for message in &mut renamed.messages {
        match message {
            Message::Assistant { tool_calls, .. } => tool_calls.iter_mut().for_each(|call| call.id.insert(0, 'x')),
            Message::ToolResult(result) => result.call_id.insert(0, 'x'),
            Message::User(_) => {}
        }
    }
    let hash = |request: &CompletionRequest| jcs::hash(&canonical_request(MODEL, &key("c", 0, 1), request));
    assert_eq!(hash(&renamed), hash(&request));
    let mut swapped = request.clone();
    swapped.messages.swap(2, 3);
    assert_ne!(hash(&swapped), hash(&request));
    // The label is part of the key.
    assert_ne!(
        jcs::hash(&canonical_request("anthropic:claude", &key("c", 0, 1), &request)),
        jcs::hash(&canonical_request(MODEL, &key("c", 0, 1), &request))
    );
}

#[tokio::test]
async fn five_runs_of_one_case_are_five_keys() {
    let distinct: HashSet<String> =
        (0..5).map(|run| jcs::hash(&canonical_request(MODEL, &key("hosts", run, 0), &first_request()))).collect();
    assert_eq!(distinct.len(), 5);

    let dir = tempfile::tempdir().expect("temp dir");
    let live = record(dir.path(), 5).await;
    assert_eq!(live.calls(), 10);
    let file = saved(dir.path());
    let interactions = file["interactions"].as_array().expect("interactions");
    assert_eq!(interactions.len(), 10);
    let keys: HashSet<&str> =
        interactions.iter().map(|interaction| interaction["key"].as_str().expect("key")).collect();
    assert_eq!(keys.len(), 10);
    let first_turns: HashSet<&str> = interactions
        .iter()
        .filter(|interaction| interaction["turn"] == 0)
        .map(|interaction| interaction["key"].as_str().expect("key"))
        .collect();
    assert_eq!(first_turns, distinct.iter().map(String::as_str).collect());
}

#[test]
fn a_corrupt_file_is_named_with_the_line_and_column() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("broken.json");
    std::fs::write(&path, "{\n  \"format\": 2,\n  \"model\": oops\n}\n").expect("written");
    let error = Cassettes::open(dir.path(), Mode::Replay).expect_err("corrupt");
    let CassetteError::Corrupt { path: named, reason } = &error else { panic!("not corrupt: {error:?}") };
    assert_eq!(named, &path);
    assert!(reason.contains("line 3 column"), "{reason}");
    let text = error.to_string();
    assert!(text.contains("broken.json") && text.contains("is corrupt") && text.contains("--record"), "{text}");

    let error = Cassettes::from_texts(&[("embedded.json", "{\"format\": 3, \"model\": \"m\", \"interactions\": []}")])
        .expect_err("unknown format");
    assert_eq!(
        error.to_string(),
        "cassette embedded.json is corrupt: it is format 3, and this version reads formats 1 to 2; \
         fix it, or delete it and re-record with --record"
    );
    // Format 1 (before `model_key`) still reads, and a hand-edited model_key is refused.
    let format1 = "{\"format\": 1, \"model\": \"m\", \"interactions\": []}";
    assert!(Cassettes::from_texts(&[("old.json", format1)]).is_ok());

    // Other files in the directory are not cassettes and are ignored.
    std::fs::remove_file(&path).expect("removed");
    std::fs::write(dir.path().join("notes.txt"), "not json").expect("written");
    assert!(Cassettes::open(dir.path(), Mode::Replay).is_ok());
}

#[tokio::test]
async fn a_request_edited_by_hand_is_caught_at_open() {
    let dir = tempfile::tempdir().expect("temp dir");
    record(dir.path(), 1).await;
    let path = dir.path().join("openai_gpt-4.1-mini.json");
    let mut file = saved(dir.path());
    file["interactions"][0]["request"]["system"] = json!("Answer at length.");
    std::fs::write(&path, serde_json::to_string_pretty(&file).expect("json")).expect("written");
    let error = Cassettes::open(dir.path(), Mode::Replay).expect_err("corrupt");
    assert!(
        error
            .to_string()
            .contains("interactions[0] (case \"hosts\", trial 0, turn 0): its key is not the hash of its request"),
        "{error}"
    );
}

#[tokio::test]
async fn saving_is_atomic_sorted_and_deterministic() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("cassettes");
    let live = FakeModel::new();
    let recorder = Cassettes::open(&out, Mode::Record).expect("a missing directory is fine for recording");
    // Recorded out of order.
    for (case, run) in [("zeta", 1), ("alpha", 2), ("zeta", 0), ("alpha", 0)] {
        run_case(&recorder, Some(&live), case, run, "127.0.0.1", false).await.expect("recorded");
    }
    let paths = recorder.save().expect("saved");
    let first = std::fs::read(&paths[0]).expect("file");
    let again = recorder.save().expect("saved again");
    assert_eq!(again, paths);
    assert_eq!(std::fs::read(&paths[0]).expect("file"), first);

    let names: Vec<String> = std::fs::read_dir(&out)
        .expect("dir")
        .map(|entry| entry.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["openai_gpt-4.1-mini.json"]);
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(&paths[0]).expect("metadata").permissions().mode();
    assert_eq!(mode & 0o644, 0o644, "mode {mode:o}");

    let text = String::from_utf8(first).expect("utf-8");
    assert!(
        text.starts_with("{\n  \"format\": 2,\n  \"model\": \"openai:gpt-4.1-mini\",\n  \"interactions\": ["),
        "{text}"
    );
    assert!(text.ends_with("}\n"));
    let file: Value = serde_json::from_str(&text).expect("json");
    let order: Vec<(String, u64, u64)> = file["interactions"]
        .as_array()
        .expect("interactions")
        .iter()
        .map(|interaction| {
            (
                interaction["case"].as_str().expect("case").to_owned(),
                interaction["run"].as_u64().expect("run"),
                interaction["turn"].as_u64().expect("turn"),
            )
        })
        .collect();
    let expected: Vec<(String, u64, u64)> = [("alpha", 0), ("alpha", 2), ("zeta", 0), ("zeta", 1)]
        .into_iter()
        .flat_map(|(case, run)| [(case.to_owned(), run, 0), (case.to_owned(), run, 1)])
        .collect();
    assert_eq!(order, expected);
    let interaction = &file["interactions"][0];
    let keys: Vec<&str> = interaction.as_object().expect("object").keys().map(String::as_str).collect();
    assert_eq!(keys, ["key", "model_key", "case", "run", "turn", "request", "response", "recorded_at"]);
    assert_eq!(
        interaction["response"],
        json!({"text": null, "tool_calls": [{"id": interaction["response"]["tool_calls"][0]["id"], "name": "files.read",
               "arguments": {"path": "/etc/hosts"}, "id_generated": true}],
               "finish": "tool_calls", "usage": {"input_tokens": 100, "output_tokens": null}})
    );
    assert!(chrono::DateTime::parse_from_rfc3339(interaction["recorded_at"].as_str().expect("time")).is_ok());

    // Reading the file back and saving after re-recording one run keeps the other runs' bytes.
    let reopened = Cassettes::open(&out, Mode::Record).expect("open");
    run_case(&reopened, Some(&live), "alpha", 0, "127.0.0.1", false).await.expect("recorded");
    reopened.save().expect("saved");
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&paths[0]).expect("file")).expect("json");
    assert_eq!(after["interactions"].as_array().expect("interactions").len(), 8);
    assert_eq!(after["interactions"][2], file["interactions"][2]);
}

#[tokio::test]
async fn re_recording_a_run_drops_its_stale_turns() {
    let dir = tempfile::tempdir().expect("temp dir");
    record(dir.path(), 2).await;
    // Now the model answers at once: run 0 takes one turn.
    let direct = Completion {
        text: Some("No need.".into()),
        tool_calls: Vec::new(),
        finish: FinishReason::Stop,
        usage: None,
        reported_model: None,
        system_fingerprint: None,
    };
    let recorder = Cassettes::open(dir.path(), Mode::Record).expect("open");
    assert_eq!(sync::lock(&recorder.state).tapes[MODEL].interactions.len(), 4);
    let canonical = canonical_request(MODEL, &key("hosts", 0, 0), &first_request());
    recorder.record(MODEL, &key("hosts", 0, 0), jcs::hash(&canonical), canonical, &direct);
    recorder.save().expect("saved");
    let file = saved(dir.path());
    let turns: Vec<(u64, u64)> = file["interactions"]
        .as_array()
        .expect("interactions")
        .iter()
        .map(|interaction| (interaction["run"].as_u64().expect("run"), interaction["turn"].as_u64().expect("turn")))
        .collect();
    assert_eq!(turns, [(0, 0), (1, 0), (1, 1)]);
    assert_eq!(file["interactions"][0]["response"]["text"], "No need.");
}

#[tokio::test]
async fn a_provider_key_never_reaches_a_cassette() {
    let dir = tempfile::tempdir().expect("temp dir");
    let live = record(dir.path(), 3).await;
    // The canary is really held by the provider that was called.
    assert!(format!("{live:?}").contains(CANARY));
    let bytes = std::fs::read(dir.path().join("openai_gpt-4.1-mini.json")).expect("file");
    let text = String::from_utf8(bytes).expect("utf-8");
    assert!(!text.contains(CANARY));
    assert!(!text.contains("sk-canary"));
    assert!(!text.contains("127.0.0.1:9"), "the endpoint is not recorded either");
}

#[tokio::test]
async fn a_provider_error_passes_through_and_is_not_recorded() {
    let dir = tempfile::tempdir().expect("temp dir");
    let live = FakeModel::failing(ProviderError::RateLimited { retry_after: None, message: "slow down".into() });
    let recorder = Cassettes::open(dir.path(), Mode::Record).expect("open");
    let error = recorder.complete(MODEL, Some(&live), &key("hosts", 0, 0), &first_request()).await.expect_err("fails");
    assert!(
        matches!(&error, CassetteError::Provider(ProviderError::RateLimited { message, .. }) if message == "slow down"),
        "{error:?}"
    );
    assert_eq!(error.to_string(), "the model API is rate limiting (retry after None): slow down");
    assert_eq!(recorder.save().expect("nothing to save"), Vec::<PathBuf>::new());
    assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 0);

    let error = recorder.complete(MODEL, None, &key("hosts", 0, 0), &first_request()).await.expect_err("no live");
    assert_eq!(error.to_string(), "cannot record model openai:gpt-4.1-mini: no live provider is configured for it");
}

#[tokio::test]
async fn a_cassette_of_another_model_is_not_used() {
    let dir = tempfile::tempdir().expect("temp dir");
    record(dir.path(), 1).await;
    // The same file under the other model's name still says which model it holds.
    std::fs::rename(dir.path().join("openai_gpt-4.1-mini.json"), dir.path().join("openai_gpt-4.1.json"))
        .expect("renamed");
    let player = Cassettes::open(dir.path(), Mode::Replay).expect("open");
    let error = player.complete("openai:gpt-4.1", None, &key("hosts", 0, 0), &first_request()).await.expect_err("miss");
    assert!(matches!(&error, CassetteError::Miss { nearest: None, .. }), "{error:?}");
    assert!(player.complete(MODEL, None, &key("hosts", 0, 0), &first_request()).await.is_ok());

    // Two files holding one model are ambiguous.
    std::fs::copy(dir.path().join("openai_gpt-4.1.json"), dir.path().join("copy.json")).expect("copied");
    let error = Cassettes::open(dir.path(), Mode::Replay).expect_err("ambiguous");
    assert!(error.to_string().contains("holds too"), "{error}");
}

#[test]
fn a_missing_directory_is_an_error_only_for_replay() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("nothing-here");
    let error = Cassettes::open(&missing, Mode::Replay).expect_err("missing");
    assert!(matches!(&error, CassetteError::NoDirectory { dir } if *dir == missing), "{error:?}");
    assert!(error.to_string().ends_with("record the cassettes first with --record"), "{error}");
    let recorder = Cassettes::open(&missing, Mode::Record).expect("fine for recording");
    assert_eq!(recorder.save().expect("nothing"), Vec::<PathBuf>::new());
    assert!(!missing.exists());
}

#[test]
fn file_names_keep_only_safe_characters() {
    assert_eq!(file_name("openai:gpt-4.1-mini"), "openai_gpt-4.1-mini.json");
    assert_eq!(file_name("local:llama3/8b q4"), "local_llama3_8b_q4.json");
    assert_eq!(file_name("../x"), "_.._x.json");
    assert_eq!(file_name(""), "_.json");
}

#[tokio::test]
async fn labels_that_share_a_file_name_are_refused_at_save() {
    let dir = tempfile::tempdir().expect("temp dir");
    let live = FakeModel::new();
    let recorder = Cassettes::open(dir.path(), Mode::Record).expect("open");
    for model in ["openai:m", "openai/m"] {
        recorder.complete(model, Some(&live), &key("c", 0, 0), &first_request()).await.expect("recorded");
    }
    let error = recorder.save().expect_err("clash");
    let CassetteError::NameClash { path, first, second } = &error else { panic!("not a clash: {error:?}") };
    assert_eq!(
        (path.file_name().and_then(|name| name.to_str()), first.as_str(), second.as_str()),
        (Some("openai_m.json"), "openai/m", "openai:m")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_runs_share_one_store() {
    let dir = tempfile::tempdir().expect("temp dir");
    let live = Arc::new(FakeModel::new());
    let recorder = Arc::new(Cassettes::open(dir.path(), Mode::Record).expect("open"));
    let mut tasks = Vec::new();
    for run in 0..8 {
        let (recorder, live) = (recorder.clone(), live.clone());
        tasks.push(tokio::spawn(async move {
            run_case(&recorder, Some(live.as_ref()), "hosts", run, "127.0.0.1", false).await
        }));
    }
    let mut recorded = Vec::new();
    for task in tasks {
        recorded.push(task.await.expect("joined").expect("recorded"));
    }
    recorder.save().expect("saved");
    assert_eq!(saved(dir.path())["interactions"].as_array().expect("interactions").len(), 16);

    let player = Arc::new(Cassettes::open(dir.path(), Mode::Replay).expect("open"));
    let mut tasks = Vec::new();
    for run in 0..8 {
        let player = player.clone();
        tasks.push(tokio::spawn(async move { run_case(&player, None, "hosts", run, "127.0.0.1", false).await }));
    }
    for (task, expected) in tasks.into_iter().zip(recorded) {
        assert_eq!(task.await.expect("joined").expect("replayed"), expected);
    }
    assert_eq!(live.calls(), 16);
}
