//! Resolves a trial's model-graded argument checks after the trial and before scoring (which stays
//! pure): the `embedding` checks through the embeddings model (`--embedding-model`), the `judge`
//! checks through the judge model (`--judge-model`). [`Semantic::resolve`] takes the checks
//! [`crate::scoring::semantic::requests`] lists and returns what the models said of each.
//!
//! - Embeddings: one vector per distinct text for the whole layer-1 run; a pair whose texts are
//!   not both known yet costs one request carrying the missing ones (one or two texts). Each
//!   pair is resolved once, even by concurrent trials. The cosine goes to scoring, which compares
//!   it with the matcher's threshold.
//! - The judge: one call per distinct (case, argument, expected, actual), with its own forced
//!   verdict tool and prompt version; a cassette key names the case and a hash of the check.
//!
//! Every request goes through the call cap (`--max-model-calls`, one call per attempt), the
//! retries of [`RetryPolicy`] (429/5xx/network) and the cassettes (record, replay: a text or
//! check never recorded is an error of that check). Any failure makes the check `error` with the
//! reason — never a pass.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::OnceCell;

use super::caller::{Budget, LiveModel, RetryPolicy};
use crate::agent::observe::{ObservedModel, Sink};
use crate::agent::{ModelCaller, ModelFailure, TurnKey};
use crate::events::TrialRef;

/// The trial a model-graded check is resolved for, and where its calls' events go.
pub(crate) type Observer<'a> = (&'a TrialRef, Sink<'a>);
use crate::mcp::sync::lock;
use crate::providers::cassette::CassetteError;
pub(crate) use crate::providers::source::EmbedSource;
use crate::scoring::semantic::{self, Resolved, SemanticKey, SemanticMode, SemanticVerdicts};

/// Each check, resolved once by whoever asks first (concurrent trials wait for that answer).
type Once<K> = std::sync::Mutex<HashMap<K, Arc<OnceCell<Resolved>>>>;

/// The embeddings model as the `embedding` matchers use it.
pub(crate) struct Embedder {
    /// `PROVIDER:MODEL`.
    label: String,
    source: EmbedSource,
    budget: Arc<Budget>,
    retry: RetryPolicy,
    /// The vector of every text fetched so far.
    vectors: std::sync::Mutex<HashMap<String, Vec<f64>>>,
    /// Each pair (expected, actual), resolved once.
    pairs: Once<(String, String)>,
}

impl Embedder {
    /// `label` answered from `source`, under `budget`.
    pub(crate) fn new(label: String, source: EmbedSource, budget: Arc<Budget>, retry: RetryPolicy) -> Self {
        Self {
            label,
            source,
            budget,
            retry,
            vectors: std::sync::Mutex::new(HashMap::new()),
            pairs: std::sync::Mutex::new(HashMap::new()),
        }
    }

    /// `PROVIDER:MODEL`.
    pub(crate) fn label(&self) -> &str {
        &self.label
    }

    /// The cosine of the two texts' embeddings, or why there is none.
    async fn cosine(&self, expected: &str, actual: &str) -> Resolved {
        let cell = lock(&self.pairs).entry((expected.to_owned(), actual.to_owned())).or_default().clone();
        cell.get_or_init(|| self.compute(expected, actual)).await.clone()
    }

    async fn compute(&self, expected: &str, actual: &str) -> Resolved {
        let mut missing: Vec<String> = Vec::new();
        {
            let known = lock(&self.vectors);
            for text in [expected, actual] {
                if !known.contains_key(text) && !missing.iter().any(|seen| seen == text) {
                    missing.push(text.to_owned());
                }
            }
        }
        if !missing.is_empty() {
            match self.fetch(&missing).await {
                Ok(vectors) => {
                    let mut known = lock(&self.vectors);
                    for (text, vector) in missing.into_iter().zip(vectors) {
                        known.insert(text, vector);
                    }
                }
                Err(unresolved) => return unresolved,
            }
        }
        let known = lock(&self.vectors);
        match (known.get(expected), known.get(actual)) {
            (Some(want), Some(got)) => match semantic::cosine(want, got) {
                Some(cosine) => Resolved::Cosine(cosine),
                None => Resolved::Error(format!(
                    "the embeddings model {} gave vectors of different lengths ({} and {}) or an all-zero one",
                    self.label,
                    want.len(),
                    got.len()
                )),
            },
            _ => Resolved::Error(format!("the embeddings model {} returned no vector for a text", self.label)),
        }
    }

    /// One request for `texts`, tried again on 429/5xx/network errors; every attempt takes one
    /// call of the cap.
    async fn fetch(&self, texts: &[String]) -> Result<Vec<Vec<f64>>, Resolved> {
        let mut attempts = 0;
        loop {
            if !self.budget.take() {
                return Err(Resolved::Error(
                    "the model-call cap was reached before the embeddings were fetched".into(),
                ));
            }
            attempts += 1;
            if matches!(self.source, EmbedSource::Replay(_)) {
                self.budget.count_replayed();
            }
            let answer = match &self.source {
                EmbedSource::Live(client) => client.embed(texts).await.map(|answer| answer.vectors).map_err(Into::into),
                EmbedSource::Record(client, cassettes) => cassettes.embed(&self.label, Some(client), texts).await,
                EmbedSource::Replay(cassettes) => cassettes.embed(&self.label, None, texts).await,
            };
            let error = match answer {
                Ok(vectors) if vectors.len() == texts.len() => return Ok(vectors),
                Ok(vectors) => {
                    return Err(Resolved::Error(format!(
                        "{} vectors for {} texts from {}",
                        vectors.len(),
                        texts.len(),
                        self.label
                    )));
                }
                Err(CassetteError::Provider(error)) => error,
                Err(miss @ CassetteError::EmbeddingMiss { .. }) => {
                    return Err(Resolved::Missed(format!("{}: {miss}", semantic::REPLAY_MISS)));
                }
                Err(other) => return Err(Resolved::Error(other.to_string())),
            };
            if !error.is_retryable() || attempts >= self.retry.attempts {
                let tries = if attempts > 1 { format!(" (after {attempts} attempts)") } else { String::new() };
                return Err(Resolved::Error(format!("the embeddings model {} failed{tries}: {error}", self.label)));
            }
            tokio::time::sleep(self.retry.wait(attempts, &error)).await;
        }
    }
}

/// The judge model as the `judge` matchers use it.
pub(crate) struct ArgumentJudge {
    caller: Arc<LiveModel>,
    /// Each (case, check), resolved once.
    checks: Once<(String, SemanticKey)>,
}

impl ArgumentJudge {
    /// The judge `caller` (the rubric judge's, sharing its retries and the call cap).
    pub(crate) fn new(caller: Arc<LiveModel>) -> Self {
        Self { caller, checks: std::sync::Mutex::new(HashMap::new()) }
    }

    async fn judge(&self, case: &str, task: &str, key: &SemanticKey, observer: Observer<'_>) -> Resolved {
        let cell = lock(&self.checks).entry((case.to_owned(), key.clone())).or_default().clone();
        cell.get_or_init(|| self.ask(case, task, key, observer)).await.clone()
    }

    /// Asks once; the call is observed (a `model_call_finished` event of role `judge`, so layer
    /// 3 prices it) under the first trial that needed the check.
    async fn ask(&self, case: &str, task: &str, key: &SemanticKey, (trial, events): Observer<'_>) -> Resolved {
        let request = semantic::argument_judge_request(task, key);
        let check = serde_json::json!({"argument": key.argument, "expected": key.expected, "actual": key.actual});
        let hash = crate::jcs::hash(&check);
        let short = hash.trim_start_matches("sha256:").chars().take(16).collect::<String>();
        let turn_key = TurnKey { case: format!("judge-arg:{case}:{short}"), trial: 0, turn: 0 };
        let label = self.caller.label().to_owned();
        let observed = ObservedModel { inner: self.caller.as_ref(), trial, role: "judge", model: &label, events };
        match ModelCaller::call(&observed, turn_key, &request).await {
            Ok(reply) => match semantic::parse_argument_verdict(&reply.completion) {
                Ok((verdict, reason)) => Resolved::Judged(verdict, reason),
                Err(reason) => Resolved::Error(reason.to_string()),
            },
            Err(ModelFailure::Provider { error, .. }) => {
                Resolved::Error(format!("the judge model {} failed: {error}", self.caller.label()))
            }
            Err(ModelFailure::CapReached) => {
                Resolved::Error("the model-call cap was reached before the judge answered".into())
            }
            Err(ModelFailure::NoRecording(reason)) => Resolved::Missed(format!("{}: {reason}", semantic::REPLAY_MISS)),
        }
    }
}

/// What resolves a trial's model-graded checks: the embeddings model and the judge, when given.
#[derive(Default)]
pub(crate) struct Semantic {
    /// For `embedding` matchers.
    pub embedder: Option<Embedder>,
    /// For `judge` matchers.
    pub judge: Option<ArgumentJudge>,
}

impl Semantic {
    /// Resolves every check of `keys` for a trial of case `case` (its id) whose task is `task`;
    /// a check without its model is an error of that check.
    pub(crate) async fn resolve(
        &self,
        case: &str,
        task: &str,
        keys: Vec<SemanticKey>,
        observer: Observer<'_>,
    ) -> SemanticVerdicts {
        let mut verdicts = SemanticVerdicts::new();
        for key in keys {
            let resolved = match (key.mode, &self.embedder, &self.judge) {
                (SemanticMode::Embedding, Some(embedder), _) => embedder.cosine(&key.expected, &key.actual).await,
                (SemanticMode::Judge, _, Some(judge)) => judge.judge(case, task, &key, observer).await,
                (mode, _, _) => Resolved::Error(format!("no model is available for `{}` matchers", mode.name())),
            };
            verdicts.insert(key, resolved);
        }
        verdicts
    }
}
