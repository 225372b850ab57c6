//! What stands between the agent loop and a model: the model-call cap shared by every trial
//! ([`Budget`]), retries with exponential backoff and jitter on 429/5xx/529 and network errors
//! honouring `Retry-After` ([`RetryPolicy`]; a server error other than 408/502/503/504/529 that
//! comes back the same twice is given up, `ProviderError::Repeated`), sampling parameters a model refuses (dropped once,
//! with a note), and cassettes ([`Source`]: replay, or record what the live provider answered).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::agent::wrap::CallLimit;
use crate::agent::{ModelCaller, ModelFailure, ModelReply, TurnKey};
use crate::mcp::sync::lock;
use crate::mcp::transport::BoxFuture;
use crate::providers::cassette::{CallKey, CassetteError, Replayed};
pub(crate) use crate::providers::source::Source;
use crate::providers::{CompletionRequest, ProviderError, Sampling};

/// The limits on model calls in one evaluation, shared by every model: the hard cap on their
/// number (`--max-model-calls`) and, when set, a limit every attempt passes (the cost budget,
/// `--max-cost-usd`).
#[derive(Debug)]
pub(crate) struct Budget {
    used: AtomicU64,
    /// Of `used`, the calls the cassettes answered (no model was called).
    replayed: AtomicU64,
    cap: u64,
    cost: Option<Arc<dyn CallLimit>>,
}

impl Budget {
    /// A budget of `cap` calls.
    pub(crate) fn new(cap: u64) -> Self {
        Self { used: AtomicU64::new(0), replayed: AtomicU64::new(0), cap, cost: None }
    }

    /// A budget of `cap` calls and, when given, the limit `cost` on every attempt.
    pub(crate) fn with_cost<L: CallLimit + 'static>(cap: u64, cost: Option<Arc<L>>) -> Self {
        let cost = cost.map(|cost| cost as Arc<dyn CallLimit>);
        Self { used: AtomicU64::new(0), replayed: AtomicU64::new(0), cap, cost }
    }

    /// True when the cost budget stopped the run (its calls were refused).
    pub(crate) fn cost_stopped(&self) -> bool {
        self.cost.as_ref().is_some_and(|cost| cost.stopped())
    }

    /// The calls left before the cap.
    pub(crate) fn remaining(&self) -> u64 {
        self.cap.saturating_sub(self.used())
    }

    /// Takes one call; false when the cap is reached (the call must not be made).
    pub(crate) fn take(&self) -> bool {
        self.used.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| (used < self.cap).then_some(used + 1)).is_ok()
    }

    /// Calls taken so far.
    pub(crate) fn used(&self) -> u64 {
        self.used.load(Ordering::SeqCst)
    }

    /// Counts one call taken ([`Budget::take`]) as answered from the cassettes, not a model.
    pub(crate) fn count_replayed(&self) {
        self.replayed.fetch_add(1, Ordering::SeqCst);
    }

    /// Of [`Budget::used`], the calls the cassettes answered; the rest went to a live provider.
    pub(crate) fn replayed(&self) -> u64 {
        self.replayed.load(Ordering::SeqCst)
    }

    /// True when no call is left.
    pub(crate) fn exhausted(&self) -> bool {
        self.used() >= self.cap
    }
}

/// When and how often a failed model call is tried again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RetryPolicy {
    /// Attempts in all (the first one included).
    pub attempts: u32,
    /// The wait before the first retry; doubled for each further one.
    pub base: Duration,
    /// The longest wait, `Retry-After` included.
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self { attempts: 4, base: Duration::from_millis(500), max_wait: Duration::from_secs(60) }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (1-based): `Retry-After` when the API gave one,
    /// else `base · 2^(retry-1)` with full jitter in its upper half; never above `max_wait`.
    pub(crate) fn wait(&self, retry: u32, error: &ProviderError) -> Duration {
        if let Some(asked) = error.retry_after() {
            return asked.min(self.max_wait);
        }
        let exponential = self.base.saturating_mul(1 << retry.saturating_sub(1).min(16));
        let jittered = exponential.mul_f64(0.5 + fastrand::f64() / 2.0);
        jittered.min(self.max_wait)
    }
}

/// A sampling parameter the model refused, recognised from the API's 400 message.
fn refused_parameter(error: &ProviderError, sampling: &Sampling) -> Option<&'static str> {
    let ProviderError::Rejected { status: 400, message } = error else { return None };
    let message = message.to_ascii_lowercase();
    if sampling.temperature.is_some() && message.contains("temperature") {
        Some("temperature")
    } else if sampling.top_p.is_some() && message.contains("top_p") {
        Some("top_p")
    } else {
        None
    }
}

/// True for the errors that mean a provider cannot be used at all (not a transient failure): a
/// refused key, an unknown model, no quota, no connection after the retries.
pub(crate) fn refuses_model(error: &ProviderError) -> bool {
    matches!(
        error,
        ProviderError::Unauthorized { .. }
            | ProviderError::ModelNotFound(_)
            | ProviderError::QuotaExhausted(_)
            | ProviderError::Network(_)
    )
}

/// One model as the agent loop calls it.
pub(crate) struct LiveModel {
    /// `PROVIDER:MODEL`.
    label: String,
    source: Source,
    budget: Arc<Budget>,
    retry: RetryPolicy,
    /// Sampling parameters this model refused, dropped from every later request.
    dropped: std::sync::Mutex<Vec<&'static str>>,
    /// Notes for the report (a dropped parameter).
    notes: std::sync::Mutex<Vec<String>>,
    /// The error that showed the provider cannot be used (a refused key, an unknown model, no
    /// quota, no connection after the retries), when one did before any call was answered:
    /// every later call fails at once with it, without a request.
    refused: std::sync::Mutex<Option<ProviderError>>,
    /// Some call was answered: the provider works (a later refusal spoils trials, it does not
    /// stop the model).
    answered: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for LiveModel {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("LiveModel").field("label", &self.label).finish_non_exhaustive()
    }
}

impl LiveModel {
    /// `label` answered from `source`, under `budget`.
    pub(crate) fn new(label: String, source: Source, budget: Arc<Budget>, retry: RetryPolicy) -> Self {
        Self {
            label,
            source,
            budget,
            retry,
            dropped: std::sync::Mutex::new(Vec::new()),
            notes: std::sync::Mutex::new(Vec::new()),
            refused: std::sync::Mutex::new(None),
            answered: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The error that showed this provider cannot be used, when one did before any call was
    /// answered (the model is then unusable: exit status 5).
    pub(crate) fn refused(&self) -> Option<ProviderError> {
        if self.answered.load(std::sync::atomic::Ordering::SeqCst) {
            return None;
        }
        lock(&self.refused).clone()
    }

    /// `PROVIDER:MODEL`.
    pub(crate) fn label(&self) -> &str {
        &self.label
    }

    /// True when its answers come from the cassettes alone ([`Source::Replay`]): no model is
    /// called, and the report says so wherever the model appears.
    pub(crate) fn replays(&self) -> bool {
        matches!(self.source, Source::Replay(..))
    }

    /// The notes gathered so far (dropped parameters).
    pub(crate) fn notes(&self) -> Vec<String> {
        lock(&self.notes).clone()
    }

    /// `sampling` without the parameters this model refused: what is actually sent.
    pub(crate) fn effective(&self, sampling: Sampling) -> Sampling {
        let dropped = lock(&self.dropped);
        Sampling {
            temperature: sampling.temperature.filter(|_| !dropped.contains(&"temperature")),
            top_p: sampling.top_p.filter(|_| !dropped.contains(&"top_p")),
            max_output_tokens: sampling.max_output_tokens,
        }
    }

    async fn call_source(&self, key: TurnKey, request: &CompletionRequest) -> Result<ModelReply, ModelFailure> {
        // A provider that refused us before answering anything is not asked again: the calls
        // already in flight (at most the concurrency) are all a refused key costs.
        if let Some(error) = self.refused() {
            return Err(ModelFailure::Provider { error, attempts: 0 });
        }
        let result = self.call_with_retries(key, request).await;
        match &result {
            Ok(_) => self.answered.store(true, std::sync::atomic::Ordering::SeqCst),
            Err(ModelFailure::Provider { error, .. }) if refuses_model(error) => {
                lock(&self.refused).get_or_insert_with(|| error.clone());
            }
            Err(_) => {}
        }
        result
    }

    async fn call_with_retries(&self, key: TurnKey, request: &CompletionRequest) -> Result<ModelReply, ModelFailure> {
        let started = Instant::now();
        let mut attempts = 0;
        let mut request = request.clone();
        let attempt = Attempt(self);
        // The last attempt's error: a server error that repeats itself word for word is given up.
        let mut previous: Option<ProviderError> = None;
        loop {
            request.sampling = self.effective(request.sampling);
            // The limit on every attempt first (the cost budget): an attempt it refuses is not made.
            let answer = match &self.budget.cost {
                Some(limit) => limit.wrap(&self.label, &attempt).call(key.clone(), &request).await,
                None => attempt.call(key.clone(), &request).await,
            };
            let error = match answer {
                Ok(reply) => {
                    attempts += 1;
                    let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                    return Ok(ModelReply { attempts, latency_ms, ..reply });
                }
                Err(ModelFailure::Provider { error, .. }) => error,
                Err(failure) => return Err(failure),
            };
            attempts += 1;
            if let Some(parameter) = refused_parameter(&error, &request.sampling) {
                let mut dropped = lock(&self.dropped);
                if !dropped.contains(&parameter) {
                    dropped.push(parameter);
                    lock(&self.notes).push(format!(
                        "{}: the model refused `{parameter}`; it was dropped from every later request",
                        self.label
                    ));
                }
                drop(dropped);
                continue;
            }
            if let Some(given_up) = error.repeated(previous.as_ref()) {
                return Err(ModelFailure::Provider { error: given_up, attempts });
            }
            if !error.is_retryable() || attempts >= self.retry.attempts {
                return Err(ModelFailure::Provider { error, attempts });
            }
            tokio::time::sleep(self.retry.wait(attempts, &error)).await;
            previous = Some(error);
        }
    }
}

/// One attempt of a model call: it takes a call from the cap, then asks the source once (an
/// answer's `attempts` and `latency_ms` are the caller's to fill in).
struct Attempt<'a>(&'a LiveModel);

impl ModelCaller for Attempt<'_> {
    fn call<'a>(
        &'a self,
        key: TurnKey,
        request: &'a CompletionRequest,
    ) -> BoxFuture<'a, Result<ModelReply, ModelFailure>> {
        let model = self.0;
        Box::pin(async move {
            if !model.budget.take() {
                return Err(ModelFailure::CapReached);
            }
            if model.replays() {
                model.budget.count_replayed();
            }
            let key = CallKey { case: key.case, trial: key.trial, turn: key.turn };
            // `Err(Err(_))`: no recording answers the request.
            let recorded = |result: Result<_, CassetteError>| match result {
                Ok(completion) => Ok(completion),
                Err(CassetteError::Provider(error)) => Err(Ok(error)),
                Err(other) => Err(Err(other.to_string())),
            };
            let answer = match &model.source {
                Source::Live(provider) => provider
                    .complete(request)
                    .await
                    .map(|completion| Replayed { completion, result_changed: false })
                    .map_err(Ok),
                Source::Record(provider, cassettes, label) => {
                    recorded(cassettes.complete(label, Some(provider.as_ref()), &key, request).await)
                }
                Source::Replay(cassettes, label) => recorded(cassettes.complete(label, None, &key, request).await),
            };
            match answer {
                Ok(Replayed { completion, result_changed }) => Ok(ModelReply {
                    completion,
                    attempts: 1,
                    latency_ms: 0,
                    result_changed,
                    replayed: matches!(model.source, Source::Replay(..)),
                }),
                Err(Err(missing)) => Err(ModelFailure::NoRecording(missing)),
                Err(Ok(error)) => Err(ModelFailure::Provider { error, attempts: 1 }),
            }
        })
    }
}

impl ModelCaller for LiveModel {
    fn call<'a>(
        &'a self,
        key: TurnKey,
        request: &'a CompletionRequest,
    ) -> BoxFuture<'a, Result<ModelReply, ModelFailure>> {
        Box::pin(self.call_source(key, request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::{Completion, FinishReason, Provider};

    /// Answers from a list of results, in order; records the sampling of each request.
    #[derive(Debug)]
    struct Sequence {
        answers: std::sync::Mutex<Vec<Result<Completion, ProviderError>>>,
        seen: std::sync::Mutex<Vec<Sampling>>,
    }

    impl Provider for Sequence {
        fn complete<'a>(&'a self, request: &'a CompletionRequest) -> BoxFuture<'a, Result<Completion, ProviderError>> {
            lock(&self.seen).push(request.sampling);
            let next = lock(&self.answers).remove(0);
            Box::pin(async move { next })
        }
    }

    fn answer() -> Completion {
        Completion {
            text: Some("ok".into()),
            tool_calls: Vec::new(),
            finish: FinishReason::Stop,
            usage: None,
            reported_model: None,
            system_fingerprint: None,
        }
    }

    fn live(answers: Vec<Result<Completion, ProviderError>>, cap: u64) -> (LiveModel, Arc<Sequence>) {
        let provider =
            Arc::new(Sequence { answers: std::sync::Mutex::new(answers), seen: std::sync::Mutex::new(Vec::new()) });
        let retry = RetryPolicy { attempts: 3, base: Duration::from_millis(1), max_wait: Duration::from_millis(50) };
        (LiveModel::new("t:m".into(), Source::Live(provider.clone()), Arc::new(Budget::new(cap)), retry), provider)
    }

    fn key() -> TurnKey {
        TurnKey { case: "c".into(), trial: 1, turn: 0 }
    }

    #[tokio::test]
    async fn a_rate_limit_with_retry_after_is_waited_out_and_the_call_succeeds() {
        let limited =
            ProviderError::RateLimited { retry_after: Some(Duration::from_millis(30)), message: "slow".into() };
        let (model, _) = live(vec![Err(limited), Ok(answer())], 10);
        let started = Instant::now();
        let reply = model.call(key(), &CompletionRequest::default()).await.expect("answered on the retry");
        assert_eq!(reply.attempts, 2);
        assert!(started.elapsed() >= Duration::from_millis(30), "waited as asked: {:?}", started.elapsed());
        assert_eq!(model.budget.used(), 2, "every attempt counts against the cap");
    }

    #[tokio::test]
    async fn a_refused_key_is_not_retried_and_a_server_error_stops_after_the_attempts() {
        let refused = ProviderError::Unauthorized { status: 401, message: "bad key".into() };
        let (model, _) = live(vec![Err(refused.clone())], 10);
        assert_eq!(
            model.call(key(), &CompletionRequest::default()).await,
            Err(ModelFailure::Provider { error: refused, attempts: 1 })
        );

        let failing = ProviderError::Server { status: 503, message: "busy".into() };
        let (model, _) = live(vec![Err(failing.clone()), Err(failing.clone()), Err(failing.clone())], 10);
        assert_eq!(
            model.call(key(), &CompletionRequest::default()).await,
            Err(ModelFailure::Provider { error: failing, attempts: 3 })
        );
    }

    #[tokio::test]
    async fn the_same_500_twice_is_given_up_after_two_attempts() {
        let failing = ProviderError::Server { status: 500, message: "template failed".into() };
        let (model, provider) = live(vec![Err(failing.clone()), Err(failing.clone()), Err(failing)], 10);
        let failure = model.call(key(), &CompletionRequest::default()).await;
        let Err(ModelFailure::Provider { error: ProviderError::Repeated { status: 500, .. }, attempts: 2 }) = failure
        else {
            panic!("given up after two attempts: {failure:?}")
        };
        assert_eq!(lock(&provider.seen).len(), 2);
    }

    #[tokio::test]
    async fn the_cap_stops_calls_before_they_are_made() {
        let (model, provider) = live(vec![Ok(answer()), Ok(answer())], 1);
        assert!(model.call(key(), &CompletionRequest::default()).await.is_ok());
        assert_eq!(model.call(key(), &CompletionRequest::default()).await, Err(ModelFailure::CapReached));
        assert_eq!(lock(&provider.seen).len(), 1);
    }

    #[tokio::test]
    async fn a_refused_temperature_is_dropped_once_with_a_note() {
        let refused = ProviderError::Rejected {
            status: 400,
            message: "Unsupported parameter: 'temperature' is not supported with this model.".into(),
        };
        let (model, provider) = live(vec![Err(refused), Ok(answer()), Ok(answer())], 10);
        let request = CompletionRequest {
            sampling: Sampling { temperature: Some(0.0), top_p: None, max_output_tokens: Some(64) },
            ..CompletionRequest::default()
        };
        assert!(model.call(key(), &request).await.is_ok());
        assert!(model.call(key(), &request).await.is_ok());
        let seen = lock(&provider.seen).clone();
        assert_eq!(seen.iter().map(|s| s.temperature).collect::<Vec<_>>(), vec![Some(0.0), None, None]);
        assert_eq!(seen[2].max_output_tokens, Some(64));
        assert_eq!(model.notes().len(), 1, "{:?}", model.notes());
    }
}
