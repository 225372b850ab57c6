//! What layer 1's settings build, as ripgrep's resolved arguments build their matcher and
//! printer: the cassettes they name (a directory, or the demo's built into the binary) and, for
//! each model, where its answers come from ([`Source`]: the provider of its wire, live or
//! recording, or the cassettes alone) and the embeddings model's ([`EmbedSource`]). The layers
//! and the authoring commands ask the settings; none builds a provider itself.

use std::sync::Arc;
use std::time::Duration;

use super::layer1::{Api, CassetteSource, Layer1Settings, ModelRef, ProviderDef};
use crate::error::{Kind, UserError};
use crate::providers::anthropic::AnthropicProvider;
use crate::providers::cassette::{Cassettes, Mode};
use crate::providers::embeddings::EmbeddingsClient;
use crate::providers::openai::OpenAiProvider;
use crate::providers::source::{EmbedSource, Source};
use crate::providers::{EndpointConfig, Provider, ProviderError};

/// How long one model request may take, connection included.
pub(crate) const MODEL_REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

impl Layer1Settings {
    /// The cassettes to replay from (or record into, with `record`): `--cassettes DIR`, or the
    /// ones built into the binary; `None` when there are none.
    ///
    /// # Errors
    /// A directory that cannot be read as cassettes (exit status 2), or built-in cassettes that
    /// do not read (the binary is broken).
    pub(crate) fn open_cassettes(&self) -> Result<Option<Arc<Cassettes>>, UserError> {
        match &self.cassettes {
            None => Ok(None),
            Some(CassetteSource::Dir(dir)) => {
                let mode = if self.record { Mode::Record } else { Mode::Replay };
                Cassettes::open(dir, mode)
                    .map(|cassettes| Some(Arc::new(cassettes.matching(self.replay_match))))
                    .map_err(|error| {
                        UserError::new(Kind::InvalidInput, format!("--cassettes: {error}"))
                            .with_hint("point --cassettes at a directory of cassettes (or add --record to write one)")
                    })
            }
            Some(CassetteSource::Builtin(files)) => Cassettes::from_texts(files)
                .map(|cassettes| Some(Arc::new(cassettes)))
                .map_err(|error| UserError::from_error(Kind::Environment, &super::demo::BrokenDemo::Cassettes(error))),
        }
    }

    /// Where `model`'s answers come from: the live provider `def`, recording into `cassettes`
    /// (with `record`), or the cassettes alone; `None` when its key is needed but not set (its
    /// variable is `def.api_key_env`). Layers 1 and 2, `golden init --model` and `judge
    /// calibrate` all take their callers from here.
    ///
    /// # Errors
    /// A `replay:` model without cassettes, or an endpoint the HTTP client refuses.
    pub(crate) fn model_source(
        &self,
        def: &ProviderDef,
        model: &ModelRef,
        cassettes: Option<&Arc<Cassettes>>,
    ) -> Result<Option<Source>, ProviderError> {
        // `replay:LABEL` replays what was recorded under LABEL; any other model given with
        // `--cassettes` (and no `--record`) replays under its own label.
        let recorded_as = if def.api == Api::Replay { model.model.clone() } else { model.label() };
        match (build_provider(def, model), cassettes) {
            (Ok(Some(provider)), Some(cassettes)) if self.record => {
                Ok(Some(Source::Record(provider, cassettes.clone(), recorded_as)))
            }
            // Cassettes without `--record` replay, key or no key: no model is called.
            (Ok(_), Some(cassettes)) => Ok(Some(Source::Replay(cassettes.clone(), recorded_as))),
            (Ok(Some(provider)), None) => Ok(Some(Source::Live(provider))),
            (Ok(None), None) if def.api == Api::Replay => Err(ProviderError::InvalidRequest(
                "`replay:` models answer from cassettes only: give --cassettes DIR".into(),
            )),
            (Ok(None), None) => Ok(None),
            (Err(error), _) => Err(error),
        }
    }

    /// Where the embeddings model `model` of `embedding` matchers answers from (the endpoint
    /// `def`, recording, or `cassettes` alone); `None` when its key is needed but not set.
    ///
    /// # Errors
    /// A provider of the Anthropic wire (no embeddings endpoint), a `replay:` model without
    /// cassettes, or an endpoint the HTTP client refuses.
    pub(crate) fn embed_source(
        &self,
        def: &ProviderDef,
        model: &ModelRef,
        cassettes: Option<&Arc<Cassettes>>,
    ) -> Result<Option<EmbedSource>, ProviderError> {
        if def.api == Api::Anthropic {
            return Err(ProviderError::InvalidRequest(format!(
                "provider `{}` speaks the Anthropic Messages API, which has no embeddings endpoint",
                def.id
            )));
        }
        let needs_key = def.api_key_env.is_some() && def.api_key.is_none();
        let client = if def.api == Api::OpenAi && !needs_key {
            Some(Arc::new(EmbeddingsClient::new(endpoint(def, model))?))
        } else {
            None
        };
        Ok(match (client, cassettes) {
            (Some(client), Some(cassettes)) if self.record => Some(EmbedSource::Record(client, cassettes.clone())),
            (_, Some(cassettes)) => Some(EmbedSource::Replay(cassettes.clone())),
            (Some(client), None) => Some(EmbedSource::Live(client)),
            (None, None) if def.api == Api::Replay => {
                return Err(ProviderError::InvalidRequest(
                    "`replay:` models answer from cassettes only: give --cassettes DIR".into(),
                ));
            }
            (None, None) => None,
        })
    }
}

impl Layer1Settings {
    /// With `--count-tokens`, each Anthropic model's label and the provider that counts its tool
    /// footprint through the endpoint's count-tokens (or why that provider cannot be built);
    /// none without the flag.
    pub(crate) fn token_counters(&self) -> Vec<(String, Result<AnthropicProvider, ProviderError>)> {
        self.models
            .iter()
            .filter(|_| self.count_tokens)
            .filter_map(|model| {
                let def = self.providers.iter().find(|def| def.id == model.provider && def.api == Api::Anthropic)?;
                let config = EndpointConfig { timeout: COUNT_TOKENS_TIMEOUT, ..endpoint(def, model) };
                Some((model.label(), AnthropicProvider::new(config)))
            })
            .collect()
    }
}

/// How long one count-tokens request may take.
const COUNT_TOKENS_TIMEOUT: Duration = Duration::from_secs(30);

/// The endpoint of `model` at provider `def`.
fn endpoint(def: &ProviderDef, model: &ModelRef) -> EndpointConfig {
    EndpointConfig {
        base_url: def.base_url.clone(),
        api_key: def.api_key.clone(),
        model: model.model.clone(),
        timeout: MODEL_REQUEST_TIMEOUT,
    }
}

/// The provider of `model`'s wire, `None` when its key is needed but not set or its wire is
/// replay alone.
fn build_provider(def: &ProviderDef, model: &ModelRef) -> Result<Option<Arc<dyn Provider>>, ProviderError> {
    if def.api_key_env.is_some() && def.api_key.is_none() {
        return Ok(None);
    }
    Ok(match def.api {
        Api::OpenAi => Some(Arc::new(OpenAiProvider::new(endpoint(def, model))?)),
        Api::Anthropic => Some(Arc::new(AnthropicProvider::new(endpoint(def, model))?)),
        Api::Replay => None,
    })
}
