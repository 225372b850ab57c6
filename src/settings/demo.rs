//! The demo's inputs, chosen at resolution: `--demo` with neither a golden set nor a model runs
//! layers 1 and 2 on the demo's own golden set (`golden/demo.yaml`), its model answered from
//! the cassettes built into the binary (recorded from the demo model, `mcp-eval demo-model`, a
//! scripted stand-in for a good model), and prices its calls with the example table. Once
//! [`super::resolve`] returns, the settings describe all of it; no later step substitutes
//! anything.

use std::path::Path;

use super::InputFile;
use super::layer1::{Api, CassetteSource, Layer1Settings, ModelRef, ProviderDef};

/// The demo's golden set, built into the binary.
pub(crate) const DEMO_GOLDEN_SET: InputFile =
    InputFile::Builtin { path: "golden/demo.yaml", text: include_str!("../../golden/demo.yaml") };

/// The example price table the demo prices its models with.
pub(crate) const DEMO_PRICES: InputFile =
    InputFile::Builtin { path: "golden/demo-prices.yaml", text: include_str!("../../golden/demo-prices.yaml") };

/// The demo's cassettes: the demo model answering the demo golden set (recorded with
/// `scripts/record-demo-cassettes.sh`), judging its rubric case, and its bag-of-words vectors of
/// the texts the `embedding` matcher compares.
pub(crate) const DEMO_CASSETTES: CassetteSource = CassetteSource::Builtin(&[
    ("demo_scripted.json", include_str!("../../golden/cassettes/demo_scripted.json")),
    ("demo_judge.json", include_str!("../../golden/cassettes/demo_judge.json")),
    ("demo_embeddings.json", include_str!("../../golden/cassettes/demo_embeddings.json")),
]);

/// The label the demo's model answers were recorded under.
pub(crate) const DEMO_RECORDED_MODEL: &str = "demo:scripted";

/// The label the demo's judge answers were recorded under.
pub(crate) const DEMO_RECORDED_JUDGE: &str = "demo:judge";

/// The label the demo's embeddings were recorded under.
pub(crate) const DEMO_RECORDED_EMBEDDINGS: &str = "demo:embeddings";

/// What of the binary's demo is broken: the cassettes built into it do not load (its golden
/// set, read like any other, reports its own problems).
#[derive(Debug, thiserror::Error)]
pub(crate) enum BrokenDemo {
    /// Its cassettes do not load.
    #[error("the demo cassettes are broken: {0}")]
    Cassettes(#[source] crate::providers::cassette::CassetteError),
}

/// The demo's price table when `--demo` is given with no model of the user's and no `--prices`.
pub(super) fn prices(demo: bool, layer1: &mut Layer1Settings) {
    if demo && layer1.models.is_empty() && layer1.price_table.is_none() {
        layer1.price_table = Some(DEMO_PRICES);
    }
}

/// With `--demo` and neither a golden set nor a model: the demo's set, and layer 1's and layer
/// 2's settings with its recorded models and cassettes in place of the user's (each setting then
/// ignored said once). Otherwise `golden_set`, and `layer1` for both layers, as they are.
pub(super) fn choose(
    demo: bool,
    golden_set: Option<InputFile>,
    layer1: Layer1Settings,
) -> (Option<InputFile>, Layer1Settings, Layer1Settings) {
    if !demo || golden_set.is_some() || !layer1.models.is_empty() {
        let layer2 = layer1.clone();
        return (golden_set, layer1, layer2);
    }
    let mut layer1 = layer1;
    let replay = |model: &str| ModelRef { provider: "replay".into(), model: model.into() };
    let mut notices = ignored(&layer1);
    notices.push(
        "layer 1 (demo): golden/demo.yaml replayed from cassettes recorded from the demo model, a scripted stand-in for a good model — no key, no network".into(),
    );
    layer1.models = vec![replay(DEMO_RECORDED_MODEL)];
    layer1.judge_model = Some(replay(DEMO_RECORDED_JUDGE));
    layer1.embedding_model = Some(replay(DEMO_RECORDED_EMBEDDINGS));
    layer1.cassettes = Some(DEMO_CASSETTES);
    if !layer1.providers.iter().any(|provider| provider.id == "replay") {
        layer1.providers.push(ProviderDef {
            id: "replay".into(),
            api: Api::Replay,
            base_url: String::new(),
            api_key_env: None,
            api_key: None,
        });
    }
    // Layer 2 runs the set's own trials (its faults' recordings hold them) and no judge (they
    // hold no layer-2 judge calls: its outcomes are code's).
    let mut layer2 = layer1.clone();
    layer2.runs = None;
    layer2.judge_model = None;
    layer2.notices = vec![
        "layer 2 (demo): golden/demo.yaml's faults and payloads replayed from cassettes recorded from the demo model — no key, no network".into(),
    ];
    // The recordings hold the set's own trials: more would be replay misses no one can record.
    let recorded = match &DEMO_GOLDEN_SET {
        InputFile::Builtin { path, text } => crate::golden::load::parse(Path::new(path), text)
            .ok()
            .and_then(|set| set.cases.iter().map(|case| case.trials.runs).min()),
        InputFile::Path(_) => None,
    }
    .unwrap_or(crate::golden::DEFAULT_TRIALS);
    if let Some(runs) = layer1.runs.filter(|runs| *runs as usize > recorded) {
        layer1.notes.push(format!(
            "layer 1 (demo): --runs {runs} is lowered to {recorded}: the demo's recordings hold {recorded} trials per case"
        ));
        layer1.runs = u32::try_from(recorded).ok();
    }
    layer1.notices = notices;
    (Some(DEMO_GOLDEN_SET), layer1, layer2)
}

/// What the demo's layer 1 ignores of `layer1` (it replays its own judge and embeddings model),
/// one notice each: `--judge-model` and `--embedding-model` given with `--demo`.
fn ignored(layer1: &Layer1Settings) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_says_it_ignores_a_judge_and_an_embeddings_model_given_to_it() {
        assert!(ignored(&Layer1Settings::default()).is_empty(), "nothing given, nothing ignored");
        let given = Layer1Settings {
            judge_model: Some(ModelRef::for_tests("openai:gpt-4o")),
            embedding_model: Some(ModelRef::for_tests("openai:text-embedding-3-small")),
            ..Layer1Settings::default()
        };
        let notes = ignored(&given);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].contains("--judge-model openai:gpt-4o is ignored"), "{notes:?}");
        assert!(notes[1].contains("--embedding-model openai:text-embedding-3-small is ignored"), "{notes:?}");
    }

    #[test]
    fn the_demo_s_set_and_cassettes_built_into_the_binary_read() {
        let InputFile::Builtin { path, text } = DEMO_GOLDEN_SET else { panic!("built in") };
        let set = crate::golden::load::parse(Path::new(path), text).expect("the demo golden set reads");
        assert!(set.cases.iter().all(|case| case.trials.runs == 5), "the recordings hold 5 trials per case");
        let demo = Layer1Settings { cassettes: Some(DEMO_CASSETTES), ..Layer1Settings::default() };
        assert!(demo.open_cassettes().expect("the demo cassettes read").is_some());
    }

    #[test]
    fn the_demo_is_chosen_only_with_neither_a_set_nor_a_model() {
        let (set, layer1, layer2) = choose(true, None, Layer1Settings { runs: Some(7), ..Layer1Settings::default() });
        assert_eq!(set, Some(DEMO_GOLDEN_SET));
        assert_eq!(layer1.models, [ModelRef::for_tests("replay:demo:scripted")]);
        assert_eq!(layer1.runs, Some(5), "lowered to what the recordings hold");
        assert_eq!(layer1.notes.len(), 1, "{:?}", layer1.notes);
        assert_eq!((layer2.runs, layer2.judge_model.as_ref()), (None, None), "the set's own trials, no judge");
        let given = Layer1Settings { models: vec![ModelRef::for_tests("openai:gpt-4o")], ..Layer1Settings::default() };
        let (set, layer1, layer2) = choose(true, None, given.clone());
        assert_eq!((set, &layer1, &layer2), (None, &given, &given), "a model of the user's: nothing chosen");
    }
}
