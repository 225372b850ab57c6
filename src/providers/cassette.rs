//! Recorded model exchanges ("cassettes"): layer 1 replays a golden set against stored answers
//! instead of a live model, so an evaluation in a pull request is fast, free and deterministic;
//! `--record` asks the live model and stores what it said.
//!
//! [`Cassettes`] sits in front of a [`Provider`]. Every call is named by a key: the SHA-256 of
//! the RFC 8785 canonical JSON of the neutral request (see [`canonical_request`]): the model
//! label, the system text, the messages, the tools (the input schema by its hash), the tool
//! choice and the sampling, plus the case, run and turn. Tool-call ids are replaced by their
//! position in the conversation (`call_1`, `call_2`, …), so ids an adapter generated at random do
//! not cause misses. The endpoint, the key and the headers are no part of a request here, so they
//! never reach a cassette.
//!
//! One file per model, named after its label (`openai:gpt-4.1-mini` → `openai_gpt-4.1-mini.json`):
//!
//! ```text
//! {"format": 2, "model": "openai:gpt-4.1-mini",
//!  "interactions": [{"key": "sha256:…", "model_key": "sha256:…", "case": "…", "run": 1, "turn": 0,
//!                    "request": {…the canonical request…},
//!                    "response": {"text": …, "tool_calls": [{"id", "name", "arguments"}],
//!                                 "finish": "tool_calls", "usage": {…} or null,
//!                                 "model": "…", "system_fingerprint": "…"},
//!                    "recorded_at": "2026-01-01T00:00:00Z"}]}
//! ```
//!
//! `model` and `system_fingerprint` are what the provider reported (the drift gate's evidence);
//! each is left out when it reported none, and files recorded before they were kept read as
//! before. They are no part of a key.
//!
//! Interactions are sorted by case, run and turn and the file is written pretty, with a fixed
//! field order, so a re-recording reads well as a diff.
//!
//! Replay matches in one of two ways ([`Match`]). *Exact*: the request's key must be the
//! recorded one. *Tolerant* (the default): a request whose key differs is still answered when
//! its model-side key matches — the `model_key` of format 2, the hash of the canonical request
//! with every tool result's text left out (its call id and `isError` kept) and a judge's trace
//! cut at [`super::TRACE_HEADING`]: the same system text, prompt, tools, calls so far and error
//! flags. The tool results are data the model reads, and a server whose results change (the
//! time, today's date) would otherwise miss on every run; such an answer is marked
//! ([`Replayed::result_changed`]) and the trial's trace says so. Format 1 files (no
//! `model_key`) are read with it computed from their stored requests.
//!
//! An embeddings model (`--embedding-model`) has a file of its own whose `embeddings` list holds
//! one `{"text", "vector", "recorded_at"}` per text, sorted by text ([`Cassettes::embed`]): a
//! vector depends on the model and the text alone, so replay looks each text up, whatever
//! request (and order of concurrent runs) first asked for it. Files without the list read as
//! before.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{
    Completion, CompletionRequest, FinishReason, Message, Provider, ProviderError, ToolCall, ToolChoice, Usage,
};
use crate::jcs;
use crate::mcp::sync;

/// The version of the cassette file format this build writes (2: each interaction has its
/// `model_key`); format 1 is read too.
const FORMAT: u32 = 2;

/// The version of the key recipe (the `v` field of a canonical request).
const KEY_VERSION: u32 = 1;

/// Which call of an evaluation this is: the golden case, the trial (1-based, as the runner
/// numbers it; `run` in a cassette file) and the turn (0-based, one per model call within the
/// trial).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct CallKey {
    /// The golden case's id.
    pub case: String,
    /// The trial of the case.
    pub trial: u32,
    /// The model call within the trial.
    pub turn: u32,
}

/// How replay matches a request to a recording.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Match {
    /// The model side must match (system text, prompt, tools, calls so far and their error
    /// flags); tool-result text that differs from the recording is data, and the answer is
    /// replayed, marked [`Replayed::result_changed`].
    #[default]
    Tolerant,
    /// The whole request must match, tool results included.
    Exact,
}

/// A completion from the cassettes (or the live model when recording).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Replayed {
    /// The answer.
    pub completion: Completion,
    /// Replayed by the tolerant match: the request's tool results (or a judge's trace)
    /// differed from the recording's.
    pub result_changed: bool,
}

/// Whether calls are answered from the cassettes or from the live model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Answer from the recordings; a call that was not recorded fails ([`CassetteError::Miss`]).
    Replay,
    /// Ask the live model and record the exchange ([`Cassettes::save`] writes it).
    Record,
}

/// Why a call through the cassettes, or reading or writing them, failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CassetteError {
    /// Replay found no recorded embedding of a text. The text itself is not quoted (it may be
    /// what a model wrote, and this message reaches the events file): its size and digest are.
    #[error(
        "embeddings model {model}: no recording of the embedding of a text of {chars} characters ({digest}); \
         record it with --record (--cassettes DIR and the live --embedding-model)"
    )]
    EmbeddingMiss {
        /// The embeddings model label.
        model: String,
        /// The text's length in characters.
        chars: usize,
        /// `sha256:` and the first 12 hex digits of the text's SHA-256.
        digest: String,
    },
    /// Replay found no recording of this request.
    #[error(
        "model {model}, case {case:?}, trial {trial}, turn {turn}: no recording matches this request; {}",
        miss_hint(.nearest.as_deref())
    )]
    Miss {
        /// The model label (`PROVIDER:MODEL`).
        model: String,
        /// The golden case.
        case: String,
        /// The trial.
        trial: u32,
        /// The turn.
        turn: u32,
        /// When a recording exists for the same case, run and turn: how its request differs
        /// (`messages[2] differs (a tool result changed?)`).
        nearest: Option<String>,
    },
    /// The live model failed; nothing was recorded.
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// Record mode was asked to call a model without a live provider.
    #[error("cannot record model {model}: no live provider is configured for it")]
    NoLiveProvider {
        /// The model label.
        model: String,
    },
    /// Replay was asked to read a directory that does not exist.
    #[error("no cassette directory at {}: record the cassettes first with --record", .dir.display())]
    NoDirectory {
        /// The directory.
        dir: PathBuf,
    },
    /// A cassette file cannot be read as a cassette.
    #[error("cassette {} is corrupt: {reason}; fix it, or delete it and re-record with --record", .path.display())]
    Corrupt {
        /// The file (or the name it was embedded under).
        path: PathBuf,
        /// What is wrong, with the line and column when the JSON itself is broken.
        reason: String,
    },
    /// A cassette file or directory cannot be read.
    #[error("cannot read cassettes at {}: {source}", .path.display())]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// The failure.
        source: std::io::Error,
    },
    /// A cassette file cannot be written.
    #[error("cannot write cassette {}: {source}", .path.display())]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// The failure.
        source: std::io::Error,
    },
    /// Two models would be saved to the same file (their labels differ only in characters a file
    /// name cannot hold).
    #[error("models {first} and {second} would both be saved to cassette {}; rename one of them", .path.display())]
    NameClash {
        /// The file.
        path: PathBuf,
        /// One model label.
        first: String,
        /// The other model label.
        second: String,
    },
}

/// The second half of a miss's message: what changed, and what to do.
fn miss_hint(nearest: Option<&str>) -> String {
    match nearest {
        Some(difference) => format!(
            "a recording exists for this case, trial and turn, but the request changed: {difference}; \
             re-record with --record"
        ),
        None => "nothing is recorded for this case, trial and turn; record it with --record".to_owned(),
    }
}

/// Recorded model exchanges, keyed per model label. Shared by concurrent runs (`Arc`); a lock
/// guards the recordings and is never held across a model call.
#[derive(Debug)]
pub(crate) struct Cassettes {
    mode: Mode,
    matching: Match,
    /// Where [`Cassettes::save`] writes; `None` for embedded cassettes.
    dir: Option<PathBuf>,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The recordings by model label.
    tapes: HashMap<String, Tape>,
    /// The (model, case, run) triples recorded in this session: their old turns were dropped.
    rerecorded: HashSet<(String, String, u32)>,
}

/// The recordings of one model.
#[derive(Debug, Default)]
struct Tape {
    /// The file it was read from, when it was.
    source: Option<PathBuf>,
    /// By (case, run, turn); one request per call of a run.
    interactions: BTreeMap<(String, u32, u32), Interaction>,
    /// Something was recorded in this session (so [`Cassettes::save`] writes it).
    recorded: bool,
    /// An embeddings model's vectors by text, with when each was recorded.
    vectors: BTreeMap<String, (Vec<f64>, String)>,
}

#[derive(Debug, Clone)]
struct Interaction {
    key: String,
    /// The model-side key ([`model_key`]).
    model_key: String,
    request: Value,
    response: Completion,
    recorded_at: String,
}

impl Cassettes {
    /// Reads every `*.json` cassette file in `dir` (not its subdirectories). A missing directory
    /// is an empty store in [`Mode::Record`], an error in [`Mode::Replay`].
    ///
    /// # Errors
    /// [`CassetteError::NoDirectory`], [`CassetteError::Read`], or [`CassetteError::Corrupt`]
    /// naming the file that is not a cassette.
    pub(crate) fn open(dir: &Path, mode: Mode) -> Result<Self, CassetteError> {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return match mode {
                    Mode::Record => Ok(Self::new(mode, Some(dir.to_path_buf()), State::default())),
                    Mode::Replay => Err(CassetteError::NoDirectory { dir: dir.to_path_buf() }),
                };
            }
            Err(source) => return Err(CassetteError::Read { path: dir.to_path_buf(), source }),
        };
        let mut paths = Vec::new();
        for entry in entries {
            let path = entry.map_err(|source| CassetteError::Read { path: dir.to_path_buf(), source })?.path();
            if path.extension().is_some_and(|extension| extension == "json") && path.is_file() {
                paths.push(path);
            }
        }
        paths.sort();
        let mut files = Vec::with_capacity(paths.len());
        for path in paths {
            let text =
                std::fs::read_to_string(&path).map_err(|source| CassetteError::Read { path: path.clone(), source })?;
            files.push((path, text));
        }
        let state = load(files.iter().map(|(path, text)| (path.as_path(), text.as_str())))?;
        Ok(Self::new(mode, Some(dir.to_path_buf()), state))
    }

    /// Replay-only cassettes from texts embedded in the binary (`include_str!`): pairs of a name
    /// (used in errors) and the file's text.
    ///
    /// # Errors
    /// [`CassetteError::Corrupt`] naming the text that is not a cassette.
    pub(crate) fn from_texts(files: &[(&str, &str)]) -> Result<Self, CassetteError> {
        let state = load(files.iter().map(|(name, text)| (Path::new(*name), *text)))?;
        Ok(Self::new(Mode::Replay, None, state))
    }

    fn new(mode: Mode, dir: Option<PathBuf>, state: State) -> Self {
        Self { mode, matching: Match::default(), dir, state: Mutex::new(state) }
    }

    /// The same store, replaying with `matching`.
    #[must_use]
    pub(crate) fn matching(mut self, matching: Match) -> Self {
        self.matching = matching;
        self
    }

    /// The mode the store was opened in.
    #[cfg(test)]
    pub(crate) fn mode(&self) -> Mode {
        self.mode
    }

    /// Answers one model call. Replay returns the recorded completion (its tool-call ids as
    /// recorded) without touching `live`, matched as [`Match`] says; Record asks `live` and
    /// keeps the exchange.
    ///
    /// # Errors
    /// [`CassetteError::Miss`] in replay when nothing recorded matches;
    /// [`CassetteError::NoLiveProvider`] in record without `live`; [`CassetteError::Provider`]
    /// when the live model fails (that exchange is not recorded).
    pub(crate) async fn complete(
        &self,
        model: &str,
        live: Option<&dyn Provider>,
        key: &CallKey,
        request: &CompletionRequest,
    ) -> Result<Replayed, CassetteError> {
        let canonical = canonical_request(model, key, request);
        let hash = jcs::hash(&canonical);
        match self.mode {
            Mode::Replay => self.replay(model, key, &hash, &canonical),
            Mode::Record => {
                let live = live.ok_or_else(|| CassetteError::NoLiveProvider { model: model.to_owned() })?;
                let completion = live.complete(request).await?;
                self.record(model, key, hash, canonical, &completion);
                Ok(Replayed { completion, result_changed: false })
            }
        }
    }

    /// The embeddings of `texts` from the embeddings model `model`: replay reads each text's
    /// recorded vector without touching `live`; Record asks `live` (one request for all the
    /// texts) and keeps each vector.
    ///
    /// # Errors
    /// [`CassetteError::EmbeddingMiss`] in replay for a text never recorded;
    /// [`CassetteError::NoLiveProvider`] in record without `live`; [`CassetteError::Provider`]
    /// when the live endpoint fails (nothing is recorded).
    pub(crate) async fn embed(
        &self,
        model: &str,
        live: Option<&super::embeddings::EmbeddingsClient>,
        texts: &[String],
    ) -> Result<Vec<Vec<f64>>, CassetteError> {
        match self.mode {
            Mode::Replay => {
                let state = sync::lock(&self.state);
                let tape = state.tapes.get(model);
                texts
                    .iter()
                    .map(|text| {
                        tape.and_then(|tape| tape.vectors.get(text)).map(|(vector, _)| vector.clone()).ok_or_else(
                            || CassetteError::EmbeddingMiss {
                                model: model.to_owned(),
                                chars: text.chars().count(),
                                digest: crate::jcs::hash(&serde_json::Value::String(text.clone()))
                                    .chars()
                                    .take("sha256:".len() + 12)
                                    .collect(),
                            },
                        )
                    })
                    .collect()
            }
            Mode::Record => {
                let live = live.ok_or_else(|| CassetteError::NoLiveProvider { model: model.to_owned() })?;
                let answer = live.embed(texts).await?;
                let recorded_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
                let mut state = sync::lock(&self.state);
                let tape = state.tapes.entry(model.to_owned()).or_default();
                tape.recorded = true;
                for (text, vector) in texts.iter().zip(&answer.vectors) {
                    tape.vectors.insert(text.clone(), (vector.clone(), recorded_at.clone()));
                }
                Ok(answer.vectors)
            }
        }
    }

    fn replay(&self, model: &str, key: &CallKey, hash: &str, canonical: &Value) -> Result<Replayed, CassetteError> {
        let state = sync::lock(&self.state);
        let stored =
            state.tapes.get(model).and_then(|tape| tape.interactions.get(&(key.case.clone(), key.trial, key.turn)));
        match stored {
            Some(interaction) if interaction.key == hash => {
                Ok(Replayed { completion: interaction.response.clone(), result_changed: false })
            }
            Some(interaction) if self.matching == Match::Tolerant && interaction.model_key == model_key(canonical) => {
                Ok(Replayed { completion: interaction.response.clone(), result_changed: true })
            }
            other => Err(CassetteError::Miss {
                model: model.to_owned(),
                case: key.case.clone(),
                trial: key.trial,
                turn: key.turn,
                nearest: other.map(|interaction| difference(&interaction.request, canonical)),
            }),
        }
    }

    fn record(&self, model: &str, key: &CallKey, hash: String, request: Value, completion: &Completion) {
        let recorded_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let mut guard = sync::lock(&self.state);
        let state = &mut *guard;
        let tape = state.tapes.entry(model.to_owned()).or_default();
        // The first call of a run recorded in this session replaces every turn recorded for that
        // run before: a run that now takes fewer turns leaves no stale ones behind.
        if state.rerecorded.insert((model.to_owned(), key.case.clone(), key.trial)) {
            tape.interactions.retain(|(case, run, _), _| !(*case == key.case && *run == key.trial));
        }
        tape.recorded = true;
        tape.interactions.insert(
            (key.case.clone(), key.trial, key.turn),
            Interaction {
                key: hash,
                model_key: model_key(&request),
                request,
                response: completion.clone(),
                recorded_at,
            },
        );
    }

    /// Writes the cassette of every model recorded in this session, each through a temporary
    /// file renamed over the target, and returns their paths (sorted). A model read from a file
    /// is written back to that file; a new one to `<sanitised label>.json`. Writes nothing when
    /// nothing was recorded.
    ///
    /// # Errors
    /// [`CassetteError::Write`] naming the file, or [`CassetteError::NameClash`].
    pub(crate) fn save(&self) -> Result<Vec<PathBuf>, CassetteError> {
        let Some(dir) = &self.dir else { return Ok(Vec::new()) };
        let files: Vec<(PathBuf, String)> = {
            let state = sync::lock(&self.state);
            let mut targets: BTreeMap<PathBuf, (&str, &Tape)> = BTreeMap::new();
            for (label, tape) in &state.tapes {
                let path = tape.source.clone().unwrap_or_else(|| dir.join(file_name(label)));
                if let Some((other, _)) = targets.insert(path.clone(), (label, tape)) {
                    let (first, second) =
                        if other < label.as_str() { (other, label.as_str()) } else { (label.as_str(), other) };
                    return Err(CassetteError::NameClash { path, first: first.to_owned(), second: second.to_owned() });
                }
            }
            let mut files = Vec::new();
            for (path, (label, tape)) in targets {
                if tape.recorded {
                    let text =
                        render(label, tape).map_err(|source| CassetteError::Write { path: path.clone(), source })?;
                    files.push((path, text));
                }
            }
            files
        };
        if files.is_empty() {
            return Ok(Vec::new());
        }
        std::fs::create_dir_all(dir).map_err(|source| CassetteError::Write { path: dir.clone(), source })?;
        let mut written = Vec::with_capacity(files.len());
        for (path, text) in files {
            crate::atomic::write_atomic(&path, &text)
                .map_err(|source| CassetteError::Write { path: path.clone(), source })?;
            written.push(path);
        }
        Ok(written)
    }
}

/// The file name of a model's cassette: the label with every character outside
/// `[A-Za-z0-9._-]` as `_`, never hidden, and `.json`.
pub(crate) fn file_name(label: &str) -> String {
    let mut name: String =
        label
            .chars()
            .map(|character| {
                if character.is_ascii_alphanumeric() || matches!(character, '.' | '_' | '-') { character } else { '_' }
            })
            .collect();
    if name.is_empty() || name.starts_with('.') {
        name.insert(0, '_');
    }
    format!("{name}.json")
}

/// The JSON a call's key is the hash of (and that a cassette stores, for diffs):
/// `{"v", "model", "system", "messages", "tools", "tool_choice", "sampling", "case", "run",
/// "turn"}`. Tool-call ids become `call_1`, `call_2`, … in the order they first appear; a tool
/// is its name, description and the hash of its input schema; unset sampling fields are `null`.
pub(crate) fn canonical_request(model: &str, key: &CallKey, request: &CompletionRequest) -> Value {
    let mut ids = CallIds::default();
    let messages: Vec<Value> = request.messages.iter().map(|message| message_json(message, &mut ids)).collect();
    let tools: Vec<Value> = request
        .tools
        .iter()
        .map(|tool| {
            json!({"name": tool.name, "description": tool.description,
                   "schema_sha256": jcs::hash(&tool.input_schema)})
        })
        .collect();
    let tool_choice = match &request.tool_choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::Required => json!("required"),
        ToolChoice::None => json!("none"),
        ToolChoice::Named(name) => json!({"name": name}),
    };
    let sampling = &request.sampling;
    json!({
        "v": KEY_VERSION,
        "model": model,
        "system": request.system,
        "messages": messages,
        "tools": tools,
        "tool_choice": tool_choice,
        "sampling": {"temperature": sampling.temperature, "top_p": sampling.top_p,
                     "max_output_tokens": sampling.max_output_tokens},
        "case": key.case,
        "run": key.trial,
        "turn": key.turn,
    })
}

/// The model-side key of a canonical request: its hash with every tool result's `content` left
/// out (the call id and `is_error` kept) and each user text cut after [`super::TRACE_HEADING`]
/// (a judge's trace: tool results quoted as data). What tolerant replay matches on.
pub(crate) fn model_key(canonical: &Value) -> String {
    let mut side = canonical.clone();
    if let Some(messages) = side.get_mut("messages").and_then(Value::as_array_mut) {
        for message in messages {
            match message.get("role").and_then(Value::as_str) {
                Some("tool") => {
                    if let Some(object) = message.as_object_mut() {
                        object.remove("content");
                    }
                }
                Some("user") => {
                    let cut = message.get("text").and_then(Value::as_str).and_then(|text| {
                        text.find(super::TRACE_HEADING).map(|at| text[..at + super::TRACE_HEADING.len()].to_owned())
                    });
                    if let Some(cut) = cut {
                        message["text"] = Value::String(cut);
                    }
                }
                _ => {}
            }
        }
    }
    jcs::hash(&side)
}

/// Call ids by order of first appearance.
#[derive(Default)]
struct CallIds(HashMap<String, usize>);

impl CallIds {
    fn canonical(&mut self, id: &str) -> String {
        let next = self.0.len() + 1;
        let position = *self.0.entry(id.to_owned()).or_insert(next);
        format!("call_{position}")
    }
}

fn message_json(message: &Message, ids: &mut CallIds) -> Value {
    match message {
        Message::User(text) => json!({"role": "user", "text": text}),
        Message::Assistant { text, tool_calls } => {
            let calls: Vec<Value> = tool_calls
                .iter()
                .map(|call| {
                    let mut value =
                        json!({"id": ids.canonical(&call.id), "name": call.name, "arguments": call.arguments});
                    // What the model was shown depends on these; `id_generated` does not (the id
                    // is canonical already).
                    if call.arguments_unparsable {
                        value["arguments_unparsable"] = Value::Bool(true);
                    }
                    if call.unknown_tool {
                        value["unknown_tool"] = Value::Bool(true);
                    }
                    value
                })
                .collect();
            json!({"role": "assistant", "text": text, "tool_calls": calls})
        }
        Message::ToolResult(result) => json!({"role": "tool", "call_id": ids.canonical(&result.call_id),
                                              "content": result.content, "is_error": result.is_error}),
    }
}

/// The first top-level field in which `now` differs from `recorded`, said for a person.
fn difference(recorded: &Value, now: &Value) -> String {
    const FIELDS: [&str; 10] =
        ["v", "model", "system", "messages", "tools", "tool_choice", "sampling", "case", "run", "turn"];
    for field in FIELDS {
        let (before, after) = (recorded.get(field), now.get(field));
        if before == after {
            continue;
        }
        return match field {
            "v" => "the key version differs (recorded by another version of mcp-eval?)".to_owned(),
            "system" => "system differs (the system prompt changed?)".to_owned(),
            "messages" => list_difference("messages", before, after, |item| {
                match item.and_then(|message| message.get("role")).and_then(Value::as_str) {
                    Some("tool") => "a tool result changed?",
                    Some("user") => "the case's prompt changed?",
                    Some("assistant") => "an earlier answer was not replayed as recorded?",
                    _ => "the conversation changed?",
                }
            }),
            "tools" => {
                list_difference("tools", before, after, |_| "a tool's name, description or input schema changed?")
            }
            "sampling" => {
                let inner = ["temperature", "top_p", "max_output_tokens"]
                    .into_iter()
                    .find(|name| before.and_then(|value| value.get(name)) != after.and_then(|value| value.get(name)));
                match inner {
                    Some(name) => format!("sampling.{name} differs (the case's sampling changed?)"),
                    None => "sampling differs (the case's sampling changed?)".to_owned(),
                }
            }
            "tool_choice" => "tool_choice differs (the case's tool choice changed?)".to_owned(),
            other => format!("{other} differs"),
        };
    }
    "the request differs from the recording in a field this version does not know".to_owned()
}

/// `name[i] differs (hint)` for the first differing entry of two arrays, or their lengths.
fn list_difference(
    name: &str,
    before: Option<&Value>,
    after: Option<&Value>,
    hint: impl Fn(Option<&Value>) -> &'static str,
) -> String {
    let empty = Vec::new();
    let before = before.and_then(Value::as_array).unwrap_or(&empty);
    let after = after.and_then(Value::as_array).unwrap_or(&empty);
    match before.iter().zip(after).position(|(old, new)| old != new) {
        Some(index) => format!("{name}[{index}] differs ({})", hint(after.get(index).or(before.get(index)))),
        None => format!("{name} has {} entries where the recording has {}", after.len(), before.len()),
    }
}

// The file format. Field order here is the order in the file.

#[derive(Serialize, Deserialize)]
struct FileForm {
    format: u32,
    model: String,
    interactions: Vec<InteractionForm>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    embeddings: Vec<EmbeddingForm>,
}

#[derive(Serialize, Deserialize)]
struct EmbeddingForm {
    text: String,
    vector: Vec<f64>,
    recorded_at: String,
}

#[derive(Serialize, Deserialize)]
struct InteractionForm {
    key: String,
    /// Format 2: the model-side key ([`model_key`]); absent in format 1 files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model_key: Option<String>,
    case: String,
    /// The trial, `run` in the file.
    #[serde(rename = "run")]
    trial: u32,
    turn: u32,
    request: Value,
    response: ResponseForm,
    recorded_at: String,
}

#[derive(Serialize, Deserialize)]
struct ResponseForm {
    text: Option<String>,
    tool_calls: Vec<ToolCallForm>,
    finish: String,
    usage: Option<UsageForm>,
    /// Absent in files recorded before it was kept, and when the provider reported none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    /// Likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    system_fingerprint: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct ToolCallForm {
    id: String,
    name: String,
    arguments: Value,
    #[serde(default, skip_serializing_if = "is_false")]
    id_generated: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    arguments_unparsable: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    unknown_tool: bool,
}

#[derive(Serialize, Deserialize)]
struct UsageForm {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    /// Absent in files recorded before they were kept, and when the provider reported none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cache_read_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cache_write_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reasoning_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reported_cost_usd: Option<f64>,
}

impl From<Usage> for UsageForm {
    fn from(usage: Usage) -> Self {
        Self {
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cache_read_tokens: usage.cache_read_tokens,
            cache_write_tokens: usage.cache_write_tokens,
            reasoning_tokens: usage.reasoning_tokens,
            reported_cost_usd: usage.reported_cost_usd,
        }
    }
}

impl From<UsageForm> for Usage {
    fn from(form: UsageForm) -> Self {
        Self {
            input_tokens: form.input_tokens,
            output_tokens: form.output_tokens,
            cache_read_tokens: form.cache_read_tokens,
            cache_write_tokens: form.cache_write_tokens,
            reasoning_tokens: form.reasoning_tokens,
            reported_cost_usd: form.reported_cost_usd,
        }
    }
}

fn is_false(flag: &bool) -> bool {
    !*flag
}

fn response_form(completion: &Completion) -> ResponseForm {
    ResponseForm {
        text: completion.text.clone(),
        tool_calls: completion
            .tool_calls
            .iter()
            .map(|call| ToolCallForm {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
                id_generated: call.id_generated,
                arguments_unparsable: call.arguments_unparsable,
                unknown_tool: call.unknown_tool,
            })
            .collect(),
        finish: finish_text(&completion.finish),
        usage: completion.usage.map(UsageForm::from),
        model: completion.reported_model.clone(),
        system_fingerprint: completion.system_fingerprint.clone(),
    }
}

fn completion_from_form(form: ResponseForm) -> Completion {
    Completion {
        text: form.text,
        tool_calls: form
            .tool_calls
            .into_iter()
            .map(|call| ToolCall {
                id: call.id,
                name: call.name,
                arguments: call.arguments,
                id_generated: call.id_generated,
                arguments_unparsable: call.arguments_unparsable,
                unknown_tool: call.unknown_tool,
            })
            .collect(),
        finish: finish_from_text(&form.finish),
        usage: form.usage.map(Usage::from),
        reported_model: form.model,
        system_fingerprint: form.system_fingerprint,
    }
}

/// `stop`, `tool_calls`, `length`, `content_filter`, `unknown`, or `other:<as reported>`.
fn finish_text(finish: &FinishReason) -> String {
    match finish {
        FinishReason::Stop => "stop".to_owned(),
        FinishReason::ToolCalls => "tool_calls".to_owned(),
        FinishReason::Length => "length".to_owned(),
        FinishReason::ContentFilter => "content_filter".to_owned(),
        FinishReason::Unknown => "unknown".to_owned(),
        FinishReason::Other(reason) => format!("other:{reason}"),
    }
}

fn finish_from_text(text: &str) -> FinishReason {
    match text {
        "stop" => FinishReason::Stop,
        "tool_calls" => FinishReason::ToolCalls,
        "length" => FinishReason::Length,
        "content_filter" => FinishReason::ContentFilter,
        "unknown" => FinishReason::Unknown,
        other => FinishReason::Other(other.strip_prefix("other:").unwrap_or(other).to_owned()),
    }
}

/// Reads cassette texts (name, text) into one store; a model held by two files is an error.
fn load<'a>(files: impl Iterator<Item = (&'a Path, &'a str)>) -> Result<State, CassetteError> {
    let mut state = State::default();
    for (path, text) in files {
        let (label, tape) = parse(path, text)?;
        if let Some(first) = state.tapes.get(&label) {
            let first = first.source.as_deref().map(Path::display).map(|shown| shown.to_string()).unwrap_or_default();
            return Err(CassetteError::Corrupt {
                path: path.to_path_buf(),
                reason: format!("it holds model {label}, which {first} holds too; merge or delete one"),
            });
        }
        state.tapes.insert(label, tape);
    }
    Ok(state)
}

/// The text one cassette file reads back as: parsed as [`Cassettes::open`] reads it, then
/// written as [`Cassettes::save`] writes it (the fuzz targets' round trip).
///
/// # Errors
/// What reading the file gives ([`CassetteError::Corrupt`]).
#[cfg(any(fuzzing, test))]
pub(crate) fn reread(path: &Path, text: &str) -> Result<String, CassetteError> {
    let (label, tape) = parse(path, text)?;
    render(&label, &tape)
        .map_err(|error| CassetteError::Corrupt { path: path.to_path_buf(), reason: error.to_string() })
}

fn parse(path: &Path, text: &str) -> Result<(String, Tape), CassetteError> {
    let corrupt = |reason: String| CassetteError::Corrupt { path: path.to_path_buf(), reason };
    let file: FileForm = serde_json::from_str(text).map_err(|error| corrupt(error.to_string()))?;
    if !(1..=FORMAT).contains(&file.format) {
        return Err(corrupt(format!("it is format {}, and this version reads formats 1 to {FORMAT}", file.format)));
    }
    let mut interactions = BTreeMap::new();
    for (index, stored) in file.interactions.into_iter().enumerate() {
        let at =
            format!("interactions[{index}] (case {:?}, trial {}, turn {})", stored.case, stored.trial, stored.turn);
        if jcs::hash(&stored.request) != stored.key {
            return Err(corrupt(format!("{at}: its key is not the hash of its request (edited by hand?)")));
        }
        let computed = model_key(&stored.request);
        if stored.model_key.as_ref().is_some_and(|stored| *stored != computed) {
            return Err(corrupt(format!("{at}: its model_key is not the model side of its request (edited by hand?)")));
        }
        if file.format >= 2 && stored.model_key.is_none() {
            return Err(corrupt(format!("{at}: format {} needs a model_key", file.format)));
        }
        let interaction = Interaction {
            key: stored.key,
            model_key: computed,
            request: stored.request,
            response: completion_from_form(stored.response),
            recorded_at: stored.recorded_at,
        };
        if interactions.insert((stored.case, stored.trial, stored.turn), interaction).is_some() {
            return Err(corrupt(format!("{at}: a second recording of this case, trial and turn")));
        }
    }
    let mut vectors = BTreeMap::new();
    for (index, stored) in file.embeddings.into_iter().enumerate() {
        if stored.vector.is_empty() {
            return Err(corrupt(format!("embeddings[{index}] (text {:?}): the vector is empty", stored.text)));
        }
        if vectors.insert(stored.text.clone(), (stored.vector, stored.recorded_at)).is_some() {
            return Err(corrupt(format!("embeddings[{index}]: a second recording of the text {:?}", stored.text)));
        }
    }
    Ok((file.model, Tape { source: Some(path.to_path_buf()), interactions, recorded: false, vectors }))
}

/// The file's text: pretty JSON with a final newline, interactions by (case, run, turn).
fn render(label: &str, tape: &Tape) -> Result<String, std::io::Error> {
    let file = FileForm {
        format: FORMAT,
        model: label.to_owned(),
        interactions: tape
            .interactions
            .iter()
            .map(|((case, run, turn), interaction)| InteractionForm {
                key: interaction.key.clone(),
                model_key: Some(interaction.model_key.clone()),
                case: case.clone(),
                trial: *run,
                turn: *turn,
                request: interaction.request.clone(),
                response: response_form(&interaction.response),
                recorded_at: interaction.recorded_at.clone(),
            })
            .collect(),
        embeddings: tape
            .vectors
            .iter()
            .map(|(text, (vector, recorded_at))| EmbeddingForm {
                text: text.clone(),
                vector: vector.clone(),
                recorded_at: recorded_at.clone(),
            })
            .collect(),
    };
    let mut text = serde_json::to_string_pretty(&file).map_err(std::io::Error::other)?;
    text.push('\n');
    Ok(text)
}

#[cfg(test)]
mod tests;
