//! Trial wrappers: how a layer plugs into the runner of trials without the runner naming it.
//! A layer gives the runner a [`TrialWrap`]; for each trial the runner opens it ([`TrialWrap::open`])
//! and the opened [`WrappedTrial`] wraps that trial's two seams — the tool executor and the model
//! caller (the model under test, and the rubric judge) — and hears how the trial ended.
//!
//! Where a wrapper sits ([`Place`]): under the runner's own event decorators
//! ([`super::observe`]), around the real parts, a wrapper sees what the server and the provider
//! do (layer 3's spans time them); over the decorators, it changes what the loop sees and reports
//! what it injects itself (layer 2's faults and payloads). Wrappers of one place apply in list
//! order, the first innermost.
//!
//! A limit on every attempt of every model call (the cost budget) is a [`CallLimit`]: it wraps
//! one attempt as a [`ModelCaller`], inside the retries, so a retry is checked again.

use super::observe::Sink;
use super::tools::{CallSite, ToolExecutor, ToolOutcome};
use super::{ModelCaller, ModelFailure, ModelReply, TurnKey};
use crate::agent::input::Session;
use crate::events::TrialRef;
use crate::mcp::transport::BoxFuture;
use crate::providers::CompletionRequest;

/// Where a wrapper goes around a trial's seams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// Around the real tools and model, under the runner's events: it sees the server's and the
    /// provider's answers and times.
    UnderEvents,
    /// Around the runner's events: it changes what the loop sees.
    OverEvents,
}

/// The trial a wrapper is opened for.
#[derive(Clone, Copy)]
pub(crate) struct TrialSite<'a> {
    /// The trial (case id, model, trial number).
    pub trial: &'a TrialRef,
    /// What a layer injects into the trial, as the plan's item carries it.
    pub injection: Option<&'a crate::golden::Injection>,
    /// The hash of the trial's plan item (its case's, or its case × injection's).
    pub case_sha256: &'a str,
    /// Where the trial's events go.
    pub events: Sink<'a>,
}

/// What a layer supplies to the runner: opened once per trial.
pub(crate) trait TrialWrap: Send + Sync {
    /// Where its wrappers sit.
    fn place(&self) -> Place;

    /// This layer's part in the trial `site`, opened before the trial starts.
    fn open<'a>(&'a self, site: TrialSite<'a>) -> Box<dyn WrappedTrial + 'a>;
}

/// A layer's part in one trial. Every method has a default that leaves the trial alone.
pub(crate) trait WrappedTrial: Send + Sync {
    /// The trial's trace id, when this layer traces it (the `trial_started` event names it).
    fn trace_id(&self) -> Option<String> {
        None
    }

    /// The trial's tool executor, wrapped.
    fn tools<'s>(&'s self, inner: Box<dyn ToolExecutor + 's>) -> Box<dyn ToolExecutor + 's> {
        inner
    }

    /// A model caller of the trial, wrapped: `role` is `model` (the model under test) or `judge`
    /// (the rubric judge), `model` its `PROVIDER:MODEL`.
    fn model<'s>(
        &'s self,
        inner: Box<dyn ModelCaller + 's>,
        role: &'static str,
        model: &'s str,
    ) -> Box<dyn ModelCaller + 's> {
        let _ = (role, model);
        inner
    }

    /// The trial ended (`TrialEnding::as_str`), after its judge's calls.
    fn end(&self, ending: &str) {
        let _ = ending;
    }
}

/// A limit every attempt of every model call passes (the cost budget): it wraps one attempt of
/// `model` (`PROVIDER:MODEL`). An attempt it refuses is [`ModelFailure::CapReached`].
pub(crate) trait CallLimit: Send + Sync + std::fmt::Debug {
    /// `attempt` of `model`, wrapped.
    fn wrap<'a>(&'a self, model: &'a str, attempt: &'a dyn ModelCaller) -> Box<dyn ModelCaller + 'a>;

    /// True once the limit stopped the run (it refused a call).
    fn stopped(&self) -> bool;
}

impl<T: ToolExecutor + ?Sized> ToolExecutor for &T {
    fn call<'a>(
        &'a self,
        at: CallSite<'a>,
        name: &'a str,
        arguments: &'a serde_json::Value,
        inputs: Option<&'a mut Session<'_>>,
    ) -> BoxFuture<'a, ToolOutcome> {
        (**self).call(at, name, arguments, inputs)
    }
}

impl<T: ModelCaller + ?Sized> ModelCaller for &T {
    fn call<'a>(
        &'a self,
        key: TurnKey,
        request: &'a CompletionRequest,
    ) -> BoxFuture<'a, Result<ModelReply, ModelFailure>> {
        (**self).call(key, request)
    }
}

impl<T: ToolExecutor + ?Sized> ToolExecutor for Box<T> {
    fn call<'a>(
        &'a self,
        at: CallSite<'a>,
        name: &'a str,
        arguments: &'a serde_json::Value,
        inputs: Option<&'a mut Session<'_>>,
    ) -> BoxFuture<'a, ToolOutcome> {
        (**self).call(at, name, arguments, inputs)
    }
}

impl<T: ModelCaller + ?Sized> ModelCaller for Box<T> {
    fn call<'a>(
        &'a self,
        key: TurnKey,
        request: &'a CompletionRequest,
    ) -> BoxFuture<'a, Result<ModelReply, ModelFailure>> {
        (**self).call(key, request)
    }
}
