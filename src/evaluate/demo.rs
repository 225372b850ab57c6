//! The demo's substitution: with `--demo` and neither a golden set nor a model, layers 1 and 2
//! run the demo's own golden set (`golden/demo.yaml`), replayed from the cassettes built into the
//! binary; and the Action's keyless run, where `golden check --execute` stands in for layer 1.
//! Kept whole in one file: settings resolution is to take it over.

use crate::golden::GoldenSet;
use crate::mcp::era;
use crate::mcp::evidence::Redactor;
use crate::settings::{Server, Settings};

use super::RunEvent;

/// The demo's golden set (`golden/demo.yaml`), built into the binary.
pub(crate) const DEMO_GOLDEN_SET: &str = include_str!("../../golden/demo.yaml");

/// The example price table the demo prices its scripted models with.
pub(crate) const DEMO_PRICES: &str = include_str!("../../golden/demo-prices.yaml");
/// Its path in the repository, as the report names it.
pub(super) const DEMO_PRICES_PATH: &str = "golden/demo-prices.yaml";

/// The demo's cassettes: the demo model (`mcp-eval demo-model`, a scripted stand-in for a good
/// model) answering the demo golden set, recorded with `scripts/record-demo-cassettes.sh`.
pub(crate) const DEMO_CASSETTES: &str = include_str!("../../golden/cassettes/demo_scripted.json");

/// The label the demo's cassettes were recorded under.
pub(crate) const DEMO_RECORDED_MODEL: &str = "demo:scripted";

/// The demo's judge cassettes: the demo model judging the rubric case.
pub(crate) const DEMO_JUDGE_CASSETTES: &str = include_str!("../../golden/cassettes/demo_judge.json");

/// The label the demo's judge cassettes were recorded under.
pub(crate) const DEMO_RECORDED_JUDGE: &str = "demo:judge";

/// The demo's embeddings cassette: the demo model's bag-of-words vectors of the texts the
/// `embedding` matcher compares.
pub(crate) const DEMO_EMBEDDING_CASSETTES: &str = include_str!("../../golden/cassettes/demo_embeddings.json");

/// The label the demo's embeddings were recorded under.
pub(crate) const DEMO_RECORDED_EMBEDDINGS: &str = "demo:embeddings";

/// True when layer 1 of this run is the demo's: the embedded demo server with neither a golden
/// set nor a model given.
pub(super) fn demo_layer1(settings: &Settings, golden: Option<&GoldenSet>) -> bool {
    settings.server == Server::Demo && golden.is_none() && settings.layer1.models.is_empty()
}

/// What the demo's layer 1 ignores of `layer1` (it replays its own judge and embeddings model),
/// one notice each: `--judge-model` and `--embedding-model` given with `--demo`.
pub(super) fn demo_ignores(layer1: &crate::settings::layer1::Layer1Settings) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(judge) = &layer1.judge_model {
        notes.push(format!(
            "layer 1 (demo): --judge-model {} is ignored: the demo replays its own recorded judge (replay:{DEMO_RECORDED_JUDGE}); give --golden-set and --model to use your judge",
            judge.label()
        ));
    }
    if let Some(embeddings) = &layer1.embedding_model {
        notes.push(format!(
            "layer 1 (demo): --embedding-model {} is ignored: the demo replays its own recorded embeddings (replay:{DEMO_RECORDED_EMBEDDINGS}); give --golden-set and --model to use yours",
            embeddings.label()
        ));
    }
    notes
}

/// What of the binary's demo is broken.
#[derive(Debug, thiserror::Error)]
pub(super) enum BrokenDemo {
    /// Its golden set does not load: the first problem.
    #[error("the demo golden set is broken: {0}")]
    Set(Box<crate::golden::Problem>),
    /// Its cassettes do not load.
    #[error("the demo cassettes are broken: {0}")]
    Cassettes(#[source] crate::providers::cassette::CassetteError),
}

/// The demo's layer 1: its own golden set and the cassettes in the binary, with `layer1`'s
/// models, judge and embeddings model replaced by the recorded ones (a notice names each
/// setting that is then ignored). `Err` says what of the binary is broken.
pub(super) fn demo_inputs(
    layer1: &mut crate::settings::layer1::Layer1Settings,
    events: &(dyn Fn(&RunEvent) + Sync),
) -> Result<(GoldenSet, std::sync::Arc<crate::providers::cassette::Cassettes>), BrokenDemo> {
    use crate::settings::layer1::{Api, ModelRef, ProviderDef};
    let set = crate::golden::load::parse(std::path::Path::new("golden/demo.yaml"), DEMO_GOLDEN_SET)
        .map_err(|mut problems| BrokenDemo::Set(Box::new(problems.swap_remove(0))))?;
    let cassettes = crate::providers::cassette::Cassettes::from_texts(&[
        ("demo_scripted.json", DEMO_CASSETTES),
        ("demo_judge.json", DEMO_JUDGE_CASSETTES),
        ("demo_embeddings.json", DEMO_EMBEDDING_CASSETTES),
    ])
    .map_err(BrokenDemo::Cassettes)?;
    for note in demo_ignores(layer1) {
        events(&RunEvent::Notice { text: note });
    }

    layer1.models = vec![ModelRef { provider: "replay".into(), model: DEMO_RECORDED_MODEL.into() }];
    layer1.judge_model = Some(ModelRef { provider: "replay".into(), model: DEMO_RECORDED_JUDGE.into() });
    layer1.embedding_model = Some(ModelRef { provider: "replay".into(), model: DEMO_RECORDED_EMBEDDINGS.into() });
    if !layer1.providers.iter().any(|provider| provider.id == "replay") {
        layer1.providers.push(ProviderDef {
            id: "replay".into(),
            api: Api::Replay,
            base_url: String::new(),
            api_key_env: None,
            api_key: None,
        });
    }
    events(&RunEvent::Notice {
        text: "layer 1 (demo): golden/demo.yaml replayed from cassettes recorded from the demo model, a scripted stand-in for a good model — no key, no network".into(),
    });
    Ok((set, std::sync::Arc::new(cassettes)))
}

/// Whether the Action runs `golden check --execute` in place of layer 1: layer 1 was asked for,
/// and did not run because no model has a key (a fork's pull request gets no secrets), with no
/// cassettes to replay.
pub(super) fn in_place_of_layer1(
    settings: &Settings,
    section: &crate::report::evals::EvalsSection,
    cassettes: bool,
) -> bool {
    use crate::report::evals::ModelOutcome;
    settings.action.is_some()
        && !cassettes
        && section.layer1_not_run.is_some()
        && !section.model_status.is_empty()
        && section.model_status.iter().all(|status| status.status == ModelOutcome::NoApiKey)
}

/// `golden check --execute` over the session layer 1 would have used: each expected call of
/// the set made once for real, no model; its lines kept (at most 200) for the report, a notice
/// with its summary.
pub(super) async fn execute_in_place(
    settings: &Settings,
    set: &GoldenSet,
    connected: &era::Connected,
    surface: &crate::mcp::tools::ToolSurface,
    events: &(dyn Fn(&RunEvent) + Sync),
) -> crate::report::evals::ExpectedCalls {
    const MAX_LINES: usize = 200;
    let redactor = Redactor::new(settings.secrets());
    let mut lines: Vec<String> = Vec::new();
    let mut keep = |line: &str| {
        if lines.len() < MAX_LINES {
            lines.push(line.to_owned());
        }
    };
    let tally = crate::authoring::execute::run_into(set, connected, surface, &redactor, &mut keep).await;
    let calls = crate::report::evals::ExpectedCalls {
        expected: tally.expected,
        sent: tally.sent,
        ok: tally.ok,
        failed: tally.is_error + tally.rpc_error + tally.no_answer + tally.refused,
        not_executed: tally.not_executed,
        lines,
    };
    events(&RunEvent::Notice {
        text: format!("layer 1: no model key; {}", crate::report::evals::expected_calls_line(&calls)),
    });
    calls
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::layer1::{Layer1Settings, ModelRef};

    fn model(label: &str) -> ModelRef {
        let (provider, model) = label.split_once(':').expect("PROVIDER:MODEL");
        ModelRef { provider: provider.into(), model: model.into() }
    }

    #[test]
    fn the_demo_says_it_ignores_a_judge_and_an_embeddings_model_given_to_it() {
        assert!(demo_ignores(&Layer1Settings::default()).is_empty(), "nothing given, nothing ignored");
        let given = Layer1Settings {
            judge_model: Some(model("openai:gpt-4o")),
            embedding_model: Some(model("openai:text-embedding-3-small")),
            ..Layer1Settings::default()
        };
        let notes = demo_ignores(&given);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].contains("--judge-model openai:gpt-4o is ignored"), "{notes:?}");
        assert!(notes[1].contains("--embedding-model openai:text-embedding-3-small is ignored"), "{notes:?}");
    }
}
