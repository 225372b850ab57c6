//! Where a model's answers come from, as the settings build it
//! ([`crate::settings::layer1::Layer1Settings::model_source`]): the provider's API, the API with
//! each exchange recorded, or the cassettes alone (the demo's are built into the binary). The
//! runner's callers read these; none builds a provider itself.

use std::sync::Arc;

use super::Provider;
use super::cassette::Cassettes;
use super::embeddings::EmbeddingsClient;

/// Where a model's answers come from.
#[derive(Clone)]
pub(crate) enum Source {
    /// The provider's API.
    Live(Arc<dyn Provider>),
    /// The provider's API, each exchange recorded into the cassettes under `label`.
    Record(Arc<dyn Provider>, Arc<Cassettes>, String),
    /// Only the cassettes recorded under `label` (no network).
    Replay(Arc<Cassettes>, String),
}

/// Where the embeddings of `embedding` matchers come from.
pub(crate) enum EmbedSource {
    /// The endpoint.
    Live(Arc<EmbeddingsClient>),
    /// The endpoint, each vector recorded into the cassettes under the label.
    Record(Arc<EmbeddingsClient>, Arc<Cassettes>),
    /// The cassettes alone (no network).
    Replay(Arc<Cassettes>),
}
