//! OpenAI-compatible embeddings (`POST {base_url}/embeddings`), what the `embedding` argument
//! matcher compares texts with. OpenAI, Azure OpenAI's v1 API, Ollama, vLLM (a pooling model),
//! llama.cpp (`--embeddings`) and OpenRouter serve it; Anthropic's API has none.
//!
//! The request is `{"model": M, "input": [text, …]}` (several texts in one request); the answer's
//! `data[].embedding` (float arrays, put in input order by `data[].index` when given) and
//! `usage.prompt_tokens` are read. Errors map like Chat Completions' (401/403, 404, 429 with
//! `Retry-After`, 5xx), bounded and with the key redacted, through the same HTTP code
//! ([`super::wire`]).

use serde_json::{Value, json};

use super::{EndpointConfig, ProviderError};

/// The most texts one request carries (OpenAI accepts 2048; local servers often fewer).
pub(crate) const MAX_INPUTS: usize = 64;

/// An embeddings endpoint. Its `Debug` shows the config (key hidden), not the redactor.
#[derive(Debug)]
pub(crate) struct EmbeddingsClient {
    http: super::wire::Endpoint,
}

/// The vectors of one request, in the order of its texts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Embeddings {
    /// One vector per text.
    pub vectors: Vec<Vec<f64>>,
    /// `usage.prompt_tokens`, when reported (`None` is unknown, never zero).
    pub input_tokens: Option<u64>,
}

impl EmbeddingsClient {
    /// A client for `config` (its `model` is the embeddings model). Fails only when the HTTP
    /// client cannot be built (the TLS backend).
    pub(crate) fn new(config: EndpointConfig) -> Result<Self, ProviderError> {
        Ok(Self { http: super::wire::Endpoint::new(config, "/embeddings")? })
    }

    /// The embeddings of `texts` (1 to [`MAX_INPUTS`]), in order.
    ///
    /// # Errors
    /// A [`ProviderError`]: the API's (mapped by status), `BadResponse` when the answer does not
    /// hold one float vector per text, `InvalidRequest` for no text or too many.
    pub(crate) async fn embed(&self, texts: &[String]) -> Result<Embeddings, ProviderError> {
        if texts.is_empty() || texts.len() > MAX_INPUTS {
            return Err(ProviderError::InvalidRequest(format!(
                "an embeddings request takes 1 to {MAX_INPUTS} texts, not {}",
                texts.len()
            )));
        }
        let body = json!({"model": self.http.config.model, "input": texts});
        let builder = self.http.post_json_bearer(body.to_string());
        let value = super::wire::send_json(builder, &self.http.redactor, super::openai::error_for).await?;
        parse_embeddings(&value, texts.len())
    }
}

/// Reads a 2xx answer that must hold `count` vectors.
pub(crate) fn parse_embeddings(value: &Value, count: usize) -> Result<Embeddings, ProviderError> {
    let data = value
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| ProviderError::BadResponse("no `data` list".into()))?;
    if data.len() != count {
        return Err(ProviderError::BadResponse(format!("{} embeddings for {count} texts", data.len())));
    }
    let mut vectors: Vec<Option<Vec<f64>>> = vec![None; count];
    for (position, item) in data.iter().enumerate() {
        let index = match item.get("index") {
            Some(index) => {
                index.as_u64().and_then(|index| usize::try_from(index).ok()).filter(|index| *index < count).ok_or_else(
                    || ProviderError::BadResponse(format!("`data[{position}].index` is not 0 to {}", count - 1)),
                )?
            }
            None => position,
        };
        let floats = item.get("embedding").and_then(Value::as_array).ok_or_else(|| {
            ProviderError::BadResponse(format!("`data[{position}].embedding` is not a list of numbers"))
        })?;
        let vector: Option<Vec<f64>> = floats.iter().map(Value::as_f64).collect();
        let vector = vector.filter(|vector| !vector.is_empty()).ok_or_else(|| {
            ProviderError::BadResponse(format!("`data[{position}].embedding` is not a non-empty list of numbers"))
        })?;
        if vectors[index].replace(vector).is_some() {
            return Err(ProviderError::BadResponse(format!("two embeddings for index {index}")));
        }
    }
    let vectors = vectors
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| ProviderError::BadResponse("an index is missing from `data`".into()))?;
    let input_tokens = value.get("usage").and_then(|usage| usage.get("prompt_tokens")).and_then(Value::as_u64);
    Ok(Embeddings { vectors, input_tokens })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::test_server::{Canned, ScriptedServer};

    fn client(base_url: &str, key: Option<&str>) -> EmbeddingsClient {
        EmbeddingsClient::new(EndpointConfig {
            base_url: base_url.to_owned(),
            api_key: key.map(str::to_owned),
            model: "text-embedding-3-small".into(),
            timeout: std::time::Duration::from_secs(5),
        })
        .expect("a client")
    }

    #[tokio::test]
    async fn both_texts_go_in_one_request_and_come_back_in_input_order() {
        let body = json!({"object": "list", "data": [
            {"object": "embedding", "index": 1, "embedding": [0.0, 1.0]},
            {"object": "embedding", "index": 0, "embedding": [1.0, 0.0]}
        ], "model": "text-embedding-3-small", "usage": {"prompt_tokens": 7, "total_tokens": 7}});
        let server = ScriptedServer::start(vec![Canned::json(200, &body.to_string())]).await;
        let texts = vec!["Paris".to_owned(), "the French capital".to_owned()];
        let answer = client(&server.base_url, Some("sk-test")).embed(&texts).await.expect("embedded");
        assert_eq!(answer.vectors, vec![vec![1.0, 0.0], vec![0.0, 1.0]]);
        assert_eq!(answer.input_tokens, Some(7));
        let received = server.received();
        assert_eq!((received.len(), received[0].path.as_str()), (1, "/v1/embeddings"));
        assert_eq!(received[0].json(), json!({"model": "text-embedding-3-small", "input": texts}));
        assert_eq!(received[0].header("authorization"), Some("Bearer sk-test"));
    }

    #[tokio::test]
    async fn an_http_error_is_a_provider_error_without_the_key() {
        let server = ScriptedServer::start(vec![Canned::json(
            401,
            r#"{"error":{"message":"Incorrect API key provided: sk-secret-123","type":"invalid_request_error"}}"#,
        )])
        .await;
        let error = client(&server.base_url, Some("sk-secret-123")).embed(&["a".into()]).await.expect_err("refused");
        assert!(matches!(error, ProviderError::Unauthorized { status: 401, .. }), "{error:?}");
        assert!(!error.to_string().contains("sk-secret-123"), "{error}");
    }

    #[test]
    fn an_answer_without_one_vector_per_text_is_unreadable() {
        let one = json!({"data": [{"index": 0, "embedding": [0.5]}]});
        assert!(matches!(parse_embeddings(&one, 2), Err(ProviderError::BadResponse(_))));
        let text = json!({"data": [{"index": 0, "embedding": "AAAA"}]});
        assert!(matches!(parse_embeddings(&text, 1), Err(ProviderError::BadResponse(_))));
        let twice = json!({"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [2.0]}]});
        assert!(matches!(parse_embeddings(&twice, 2), Err(ProviderError::BadResponse(_))));
        let unordered = json!({"data": [{"embedding": [1.0]}, {"embedding": [2.0]}]});
        assert_eq!(parse_embeddings(&unordered, 2).expect("by position").vectors, vec![vec![1.0], vec![2.0]]);
    }
}
