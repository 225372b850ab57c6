//! Fitting layer 2 into the model-call cap (`--max-model-calls`), which holds for the whole
//! evaluation:
//!
//! - **Layer 2's share** ([`share`]) is the cap less layer 1's most model calls when layer 1 runs
//!   too (its cases × models × trials × `max_turns`), and less what layer 1 actually spent when
//!   that was more (its judge, retries, a confirmation re-run).
//! - **The default suite is sampled** ([`fit`]) when its plan is over that share: its variants
//!   are put in a fixed order seeded by the golden set's hash — grouped by what they inject (each
//!   fault, each payload class), each group ordered by `sha256(set hash, variant id)`, then taken
//!   a group at a time, round by round, so every fault and payload class comes once before any
//!   comes twice — and the longest run from the start of that order whose calls fit is kept.
//!   The same set, models and runs give the same sample; a smaller share keeps a prefix of the
//!   same order. Nothing is dropped silently: the report says `N of M` ([`SuiteSample`]).
//! - **What the user wrote is never cut**: the cases' own `faults:`/`adversarial:` and a
//!   `--fault-plan` run whole or are refused up front ([`over_cap`]), with the inputs that
//!   change the plan.
//! - **Only models that can run are counted** ([`runnable_models`]): a model without a key
//!   makes no call. When none can run (none given, no key and no cassettes), layers 1 and 2
//!   make no call, so no plan is checked against the cap, sampled or printed.

use sha2::{Digest as _, Sha256};

use super::{Planned, Source, Variant, items, planned, variant_id};
use crate::golden::{GoldenSet, Injection};
use crate::report::layer2::SuiteSample;
use crate::settings::layer1::Layer1Settings;

/// The rule, as the report and the summary state it.
pub(crate) const RULE: &str =
    "one of each fault and payload class in turn, each in the order of sha256(golden set hash, variant id)";

/// The most model calls layer 1 can make over `set` on `models` models: each case's trials (as
/// layer 1's plan decides them) × models × `max_turns` (retries and the judge left out).
pub(crate) fn layer1_at_most(set: &GoldenSet, layer1: &Layer1Settings, models: usize) -> u64 {
    crate::trials::plan::Item::cases(set, layer1.runs)
        .iter()
        .map(|item| (item.trials.runs * models * set.cases[item.case].run.max_turns) as u64)
        .sum()
}

/// Layer 2's share of the cap, planned before any call: the cap less layer 1's most calls on
/// `models` models when layer 1 runs too.
pub(crate) fn share(set: &GoldenSet, layer1: &Layer1Settings, models: usize, with_layer1: bool) -> u64 {
    let before = if with_layer1 { layer1_at_most(set, layer1, models) } else { 0 };
    layer1.max_model_calls.saturating_sub(before)
}

/// How many models of `layer1` can make a call: their provider is defined and either cassettes
/// answer (`cassettes`: `--cassettes`, or the demo's) or their key is set (or they need none). A
/// model without a key makes no call, so the plan does not count it.
pub(crate) fn runnable_models(layer1: &Layer1Settings, cassettes: bool) -> usize {
    use crate::settings::layer1::Api;
    let runs = |def: &crate::settings::layer1::ProviderDef| {
        cassettes || (def.api != Api::Replay && (def.api_key_env.is_none() || def.api_key.is_some()))
    };
    layer1.models.iter().filter(|model| layer1.provider(model).is_some_and(runs)).count()
}

/// The variants to run within `allowance` model calls: the default suite sampled by [`RULE`]
/// when its plan is over it (with what was kept), anything else whole.
pub(crate) fn fit(
    set: &GoldenSet,
    variants: Vec<Variant>,
    source: Source,
    models: usize,
    runs: Option<u32>,
    allowance: u64,
) -> (Vec<Variant>, Option<SuiteSample>) {
    let planned_items = items(set, &variants, runs);
    let whole = planned(set, &planned_items, models);
    if source != Source::DefaultSuite || whole.model_calls <= allowance {
        return (variants, None);
    }
    let mut keep = vec![false; variants.len()];
    let mut spent = 0u64;
    for index in order(set, &variants) {
        let cost = planned(set, std::slice::from_ref(&planned_items[index]), models).model_calls;
        if spent + cost > allowance {
            break;
        }
        spent += cost;
        keep[index] = true;
    }
    let of = variants.len();
    let kept: Vec<Variant> =
        variants.into_iter().zip(keep).filter_map(|(variant, kept)| kept.then_some(variant)).collect();
    let sample = SuiteSample {
        kept: kept.len(),
        of,
        allowance,
        whole_model_calls: whole.model_calls,
        rule: RULE.to_owned(),
        seed: set.hash.clone(),
    };
    (kept, Some(sample))
}

/// The indices of `variants` in the sampling order ([`RULE`]).
fn order(set: &GoldenSet, variants: &[Variant]) -> Vec<usize> {
    // Groups in the suite's own order (faults, then payload classes, as first met).
    let mut groups: Vec<(String, Vec<(String, usize)>)> = Vec::new();
    for (index, variant) in variants.iter().enumerate() {
        let kind = match &variant.injection {
            Injection::Fault(fault) => format!("fault {}", fault.fault.as_str()),
            Injection::Payload(payload) => format!("payload {}", payload.id),
        };
        let id = variant_id(&set.cases[variant.case], &variant.injection);
        let key = hex(&Sha256::digest(format!("{}\n{id}", set.hash).as_bytes()));
        match groups.iter_mut().find(|(name, _)| *name == kind) {
            Some((_, members)) => members.push((key, index)),
            None => groups.push((kind, vec![(key, index)])),
        }
    }
    for (_, members) in &mut groups {
        members.sort();
    }
    let rounds = groups.iter().map(|(_, members)| members.len()).max().unwrap_or(0);
    (0..rounds)
        .flat_map(|round| groups.iter().filter_map(move |(_, members)| members.get(round).map(|(_, index)| *index)))
        .collect()
}

/// Lowercase hex of `bytes`.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The refusal of a plan the user wrote (the cases' `faults:`/`adversarial:`, a fault plan) over
/// the cap, with layer 1's most calls when it runs too: what it costs and every input that
/// changes it. `None` when it fits, or for the default suite (sampled instead, [`fit`]).
pub(crate) fn over_cap(
    cost: &Planned,
    source: Source,
    models: usize,
    layer1_calls: u64,
    cap: u64,
) -> Option<crate::error::UserError> {
    if source == Source::DefaultSuite || layer1_calls + cost.model_calls <= cap {
        return None;
    }
    let after = if layer1_calls > 0 {
        format!(" after layer 1's at most {layer1_calls} ({} in all)", layer1_calls + cost.model_calls)
    } else {
        String::new()
    };
    Some(
        crate::error::UserError::new(
            crate::error::Kind::InvalidInput,
            format!(
                "model-call budget: layer 2 plans {} variant(s) (case × fault or payload) from the {} × {models} model(s): {} trial(s), at most {} model call(s){after}: over the cap of {cap} (--max-model-calls, Action input `max-model-calls`); nothing was run",
                cost.variants,
                source.as_str(),
                cost.trials,
                cost.model_calls,
            ),
        )
        .with_hint(BUDGET_HINT),
    )
}

/// What changes a plan's model calls, and what else each changes.
pub(crate) const BUDGET_HINT: &str = "each of these changes it: a higher cap (--max-model-calls, Action input `max-model-calls`: more calls, more cost); fewer entries in the set's `faults:`/`adversarial:` (or its `defaults`, or the --fault-plan, Action input `fault-plan`: fewer variants); fewer models (--model, Action input `models`: each model runs every variant); a lower `max_turns` in the set (each trial's most model calls: a trial that needs more turns ends early); fewer runs (--runs, Action input `runs`: fewer trials per variant, and it changes what a soft case needs — 4 of 5 by default, 3 of 3 with 3 runs, so every trial must pass); or layer 2 in a run of its own (--layers 2, Action input `layers`: layer 1's calls are not counted)";

#[cfg(test)]
mod tests {
    use super::*;

    fn set(text: &str) -> GoldenSet {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("golden.yaml");
        std::fs::write(&path, text).expect("write");
        crate::golden::load::load(&path).unwrap_or_else(|problems| panic!("{problems:?}"))
    }

    /// `cases` cases over `tools` tools (case `i` calls tool `i % tools`), default runs and turns.
    fn server_set(cases: usize, tools: usize) -> GoldenSet {
        let mut text = String::from("version: 1\ncases:\n");
        for case in 0..cases {
            text.push_str(&format!(
                "  - id: c{case}\n    prompt: \"ask {case}\"\n    expect_tool: tool_{}\n",
                case % tools
            ));
        }
        set(&text)
    }

    fn layer1(models: usize) -> Layer1Settings {
        Layer1Settings {
            models: (0..models)
                .map(|_| crate::settings::layer1::ModelRef { provider: "openai".into(), model: "gpt-4.1-mini".into() })
                .collect(),
            ..Layer1Settings::default()
        }
    }

    #[test]
    fn the_default_suite_of_30_tools_and_30_cases_fits_the_default_cap_with_layer_1() {
        let set = server_set(30, 30);
        let settings = layer1(1);
        assert_eq!(settings.max_model_calls, 2000, "the default cap");
        let (variants, source) = super::super::variants(&set);
        assert_eq!(variants.len(), 30 * 6 + 30 * 7);
        assert_eq!(layer1_at_most(&set, &settings, 1), 1200, "30 cases × 5 runs × 8 turns");
        let allowance = share(&set, &settings, 1, true);
        let (kept, sample) = fit(&set, variants, source, 1, None, allowance);
        let cost = planned(&set, &items(&set, &kept, None), 1);
        assert!(1200 + cost.model_calls <= 2000, "{cost:?}");
        assert_eq!(kept.len(), 20, "800 calls left, 40 a variant");
        let sample = sample.expect("sampled");
        assert_eq!((sample.kept, sample.of, sample.allowance), (20, 390, 800));
        // Every fault and payload class is in before any comes twice.
        let kinds: std::collections::BTreeSet<String> = kept
            .iter()
            .map(|variant| match &variant.injection {
                Injection::Fault(fault) => fault.fault.as_str().to_owned(),
                Injection::Payload(payload) => payload.id.clone(),
            })
            .collect();
        assert_eq!(kinds.len(), 13, "{kinds:?}");
    }

    #[test]
    fn the_same_golden_set_gives_the_same_sample_and_a_smaller_share_a_prefix_of_it() {
        let seven = server_set(7, 4);
        let ids = |allowance| {
            let (variants, source) = super::super::variants(&seven);
            let (kept, _) = fit(&seven, variants, source, 1, None, allowance);
            kept.iter().map(|variant| variant_id(&seven.cases[variant.case], &variant.injection)).collect::<Vec<_>>()
        };
        assert_eq!(ids(1720), ids(1720));
        let small = ids(400);
        assert_eq!(small.len(), 10);
        assert!(small.iter().all(|id| ids(1720).contains(id)), "{small:?}");
        assert_eq!(ids(1720).len(), 43, "(2000 - 7 × 5 × 8) / 40");
    }

    #[test]
    fn a_default_suite_that_fits_and_the_sets_own_faults_are_never_sampled() {
        let seven = server_set(7, 4);
        let (variants, source) = super::super::variants(&seven);
        let all = variants.len();
        let (kept, sample) = fit(&seven, variants, source, 1, None, u64::MAX);
        assert_eq!((kept.len(), sample), (all, None));
        let (variants, _) = super::super::variants(&seven);
        let (kept, sample) = fit(&seven, variants, Source::GoldenSet, 1, None, 0);
        assert_eq!((kept.len(), sample), (all, None));
    }

    #[test]
    fn only_models_that_can_make_a_call_are_counted_in_the_plan() {
        use crate::settings::layer1::{Api, ModelRef, ProviderDef};
        let provider = |id: &str, api: Api, key: Option<&str>| ProviderDef {
            id: id.into(),
            api,
            base_url: "http://127.0.0.1:9".into(),
            api_key_env: Some(format!("{}_API_KEY", id.to_uppercase())),
            api_key: key.map(str::to_owned),
        };
        let model = |provider: &str| ModelRef { provider: provider.into(), model: "m".into() };
        let mut settings = Layer1Settings {
            providers: vec![
                provider("openai", Api::OpenAi, Some("sk-test")),
                provider("anthropic", Api::Anthropic, None),
                provider("replay", Api::Replay, None),
            ],
            models: vec![model("openai"), model("anthropic"), model("replay"), model("undefined")],
            ..Layer1Settings::default()
        };
        assert_eq!(runnable_models(&settings, false), 1, "no key, no cassettes, no provider: no call");
        assert_eq!(runnable_models(&settings, true), 3, "cassettes answer without a key");
        settings.models.remove(0);
        assert_eq!(runnable_models(&settings, false), 0);
        let seven = server_set(7, 4);
        assert_eq!(share(&seven, &settings, 1, true), 2000 - 280, "layer 1's most on the one model that runs");
    }

    #[test]
    fn a_plan_the_user_wrote_over_the_cap_is_a_budget_message_naming_every_input_that_changes_it() {
        let cost = Planned { variants: 40, trials: 200, model_calls: 1600 };
        assert!(over_cap(&cost, Source::DefaultSuite, 1, 280, 1000).is_none());
        assert!(over_cap(&cost, Source::GoldenSet, 1, 0, 1600).is_none());
        let error = over_cap(&cost, Source::GoldenSet, 1, 280, 1000).expect("over").to_string();
        assert!(error.contains("model-call budget"), "{error}");
        assert!(error.contains("after layer 1's at most 280 (1880 in all): over the cap of 1000"), "{error}");
        for input in
            ["max-model-calls", "--runs", "`runs`", "`models`", "`faults:`", "`adversarial:`", "max_turns", "3 of 3"]
        {
            assert!(error.contains(input), "{input}: {error}");
        }
        assert!(!error.contains("problem(s)"), "{error}");
    }
}
