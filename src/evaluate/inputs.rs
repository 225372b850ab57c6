//! What an evaluation reads before it connects: the layers `auto` stands for, the golden set
//! (every problem of the file at once, with the matchers whose model is not configured), the
//! fault plan, the price table and layer 2's plan against the model-call cap. A problem here is
//! an input error (exit status 2) before any connection.

use std::path::{Path, PathBuf};

use crate::error::UserError;
use crate::golden::GoldenSet;
use crate::settings::{InputFile, LayersInput, Settings};

/// The layers to run: an explicit list, or `auto` (the default outside the Action): layer 0,
/// and layer 1 when a golden set or a model is given (`--demo` alone has the demo's both: its
/// layer 1 replays recorded cassettes). With only one of the two, layer 1 is asked for but does
/// not run: the run says which is missing (a notice, and `layer1_not_run`).
pub(crate) fn layers_outside_the_action(settings: &Settings) -> Vec<u8> {
    match &settings.layers {
        LayersInput::Auto if settings.golden_set.is_some() || !settings.layer1.models.is_empty() => vec![0, 1],
        LayersInput::Auto => vec![0],
        LayersInput::Explicit(list) => list.clone(),
    }
}

/// Reads the golden set when layer 1 or 2 is among `layers` and one is given: every problem of
/// the file at once (exit status 2, before any connection), including matchers that need a
/// model that is not configured ([`unconfigured_matchers`]). A layer-2 plan over the model-call
/// cap is not a problem of the file: see [`layer2_budget`].
pub(crate) fn load_golden(
    settings: &Settings,
    layers: &[u8],
) -> Result<Option<GoldenSet>, Vec<crate::golden::Problem>> {
    match &settings.golden_set {
        // A set built into the binary (the demo's) takes no fault plan: its recordings hold only
        // its own variants. The plan is still read: a bad file is an input error either way.
        Some(InputFile::Builtin { path, text }) if layers.contains(&1) || layers.contains(&2) => {
            if let Some(plan) = &settings.layer1.fault_plan {
                crate::golden::load::load_fault_plan(plan)?;
            }
            let set = crate::golden::load::parse(Path::new(path), text)?;
            let problems = if layers.contains(&1) { unconfigured_matchers(&set, &settings.layer1) } else { Vec::new() };
            if problems.is_empty() { Ok(Some(set)) } else { Err(problems) }
        }
        Some(InputFile::Path(path)) if layers.contains(&1) || layers.contains(&2) => {
            let mut set = crate::golden::load::load(path)?;
            if let Some(plan) = &settings.layer1.fault_plan {
                let entries = read_fault_plan(plan, &set)?;
                if layers.contains(&2) {
                    set.fault_plan = Some((plan.clone(), entries));
                }
            }
            // Layer 2 grades no argument matcher: only layer 1 needs their models.
            let problems = if layers.contains(&1) { unconfigured_matchers(&set, &settings.layer1) } else { Vec::new() };
            if problems.is_empty() { Ok(Some(set)) } else { Err(problems) }
        }
        _ => {
            // A plan that will not be used (no layer 2, or no golden set to plan over) is still
            // read: a bad file is an input error either way.
            if let Some(plan) = &settings.layer1.fault_plan {
                crate::golden::load::load_fault_plan(plan)?;
            }
            Ok(None)
        }
    }
}

/// Layer 3's price table: the file `--prices` names, or for `--demo` without models of one's own
/// the example table in the binary (`golden/demo-prices.yaml`), or none. With a budget
/// (`--max-cost-usd`) every model asked must be priced unless `--allow-unpriced`.
///
/// # Errors
/// Every problem of the file at once (exit status 2, before any connection), and each model a
/// budget cannot count.
pub(crate) fn load_prices(
    settings: &Settings,
    layers: &[u8],
) -> Result<Option<crate::telemetry::prices::PriceTable>, Vec<crate::golden::Problem>> {
    let table = match &settings.layer1.price_table {
        Some(InputFile::Path(path)) => Some(crate::telemetry::prices::load(path)?),
        Some(InputFile::Builtin { path, text }) => {
            Some(crate::telemetry::prices::from_bytes(Path::new(path), text.as_bytes())?)
        }
        None => None,
    };
    let runs_models = layers.iter().any(|layer| matches!(layer, 1 | 2));
    let Some(table) = table else {
        // `--demo` with models of its own has no example table to count against.
        if settings.layer1.max_cost_usd.is_some() && runs_models {
            let (message, hint) = crate::settings::budget_without_table();
            return Err(vec![crate::golden::Problem::located(
                PathBuf::from(crate::settings::table::MAX_COST_USD.flag_name()),
                None,
                None,
                message,
                hint,
            )]);
        }
        return Ok(None);
    };
    if settings.layer1.max_cost_usd.is_some() && !settings.layer1.allow_unpriced && runs_models {
        let layer1 = &settings.layer1;
        // Embedding calls are not priced (their usage is not kept), so they need no entry.
        let asked = layer1.models.iter().chain(&layer1.judge_model);
        let problems: Vec<crate::golden::Problem> = asked
            .map(|model| format!("{}:{}", model.provider, model.model))
            .filter(|label| table.price(label).is_none())
            .map(|label| crate::golden::Problem::located(PathBuf::from(&table.info.path), None, None, format!("the price table prices no `{label}`: a cost budget cannot count its calls"), format!(
                    "add an entry `- match: {{provider: {}, model: \"{}\"}}` with its `input:` and `output:` prices, or pass --allow-unpriced (input `allow-unpriced: true`) to count its calls as free",
                    label.split(':').next().unwrap_or_default(),
                    label.split_once(':').map_or("", |(_, model)| model)
                )))
            .collect();
        if !problems.is_empty() {
            return Err(problems);
        }
    }
    Ok(Some(table))
}

/// The entries of the fault plan at `path`, each of whose `cases` glob must match a case of
/// `set`: every problem of the file at once, with its line and column.
fn read_fault_plan(
    path: &std::path::Path,
    set: &GoldenSet,
) -> Result<Vec<crate::golden::PlanEntry>, Vec<crate::golden::Problem>> {
    let entries = crate::golden::load::load_fault_plan(path)?;
    let problems: Vec<crate::golden::Problem> = entries
        .iter()
        .enumerate()
        .filter_map(|(index, entry)| {
            let matched: Vec<&crate::golden::Case> =
                set.cases.iter().filter(|case| crate::golden::glob_matches(&entry.cases, &case.id)).collect();
            let message = if matched.is_empty() {
                format!("`{}` matches no case of the golden set", entry.cases)
            } else if entry.tool == "*" && matched.iter().all(|case| crate::faults::expected_tools(case).is_empty()) {
                format!(
                    "`{}` matches only cases that expect no tool call: `tool: \"*\"` gives them no fault",
                    entry.cases
                )
            } else {
                return None;
            };
            Some(crate::golden::Problem::located(
                path.to_owned(),
                Some(entry.position),
                Some(format!("[{index}].cases")),
                message,
                "use a case id or a glob of them (`*`, `?`), e.g. `weather-*`, of cases that call a tool",
            ))
        })
        .collect();
    if problems.is_empty() { Ok(entries) } else { Err(problems) }
}

/// The refusal, before any connection, of a layer-2 plan the user wrote (the cases' `faults:`
/// or `adversarial:`, a `--fault-plan`) whose most model calls, with layer 1's when it runs too
/// (one cap for the evaluation), exceed `--max-model-calls`: a budget message with the figure
/// and every input that changes it ([`crate::faults::sample::over_cap`]), exit status 2. The
/// default suite is never refused (it is sampled to fit, [`crate::faults::sample::fit`]), and
/// nothing is checked when no model can run (none given, no key, no cassettes). Retries and
/// layer 1's judge are not counted.
pub(crate) fn layer2_budget(settings: &Settings, layers: &[u8], golden: Option<&GoldenSet>) -> Option<UserError> {
    // Layer 2's own trial settings (the demo's differ from its layer 1's).
    let layer1 = &settings.layer2;
    let set = golden.filter(|_| layers.contains(&2))?;
    // Only the models that can make a call are counted: none, nothing to check.
    let models = crate::faults::sample::runnable_models(layer1, layer1.cassettes.is_some());
    if models == 0 {
        return None;
    }
    let (variants, source) = crate::faults::variants(set);
    let cost = crate::faults::planned(set, &crate::faults::items(set, &variants, layer1.runs), models);
    let before =
        if layers.contains(&1) { crate::faults::sample::layer1_at_most(set, &settings.layer1, models) } else { 0 };
    crate::faults::sample::over_cap(&cost, source, models, before, layer1.max_model_calls)
}

/// Every `embedding` matcher of `set` when no `--embedding-model` is given, and every `judge`
/// matcher when no `--judge-model` is, each with its file, line and column and the fix. Nothing
/// when no model is given (layer 1 does not run then).
pub(crate) fn unconfigured_matchers(
    set: &GoldenSet,
    layer1: &crate::settings::layer1::Layer1Settings,
) -> Vec<crate::golden::Problem> {
    if layer1.models.is_empty() {
        return Vec::new();
    }
    let mut problems = Vec::new();
    for matcher in set.cases.iter().flat_map(|case| &case.semantic) {
        let (configured, message, hint) = match matcher.mode.as_str() {
            "embedding" => (
                layer1.embedding_model.is_some(),
                "an `embedding` matcher needs an embeddings model, and none is given",
                "give --embedding-model PROVIDER:MODEL (Action input `embedding-model`, config `embedding_model`) on an OpenAI-compatible provider, e.g. openai:text-embedding-3-small; or use `match: fuzzy`",
            ),
            _ => (
                layer1.judge_model.is_some(),
                "a `judge` matcher needs the judge model, and none is given",
                "give --judge-model PROVIDER:MODEL (Action input `judge-model`), a model other than those under test; or use another matcher",
            ),
        };
        if !configured {
            problems.push(crate::golden::Problem::located(
                set.path.clone(),
                Some((matcher.line, matcher.column)),
                Some(matcher.field.clone()),
                message.to_owned(),
                hint.to_owned(),
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::layer1::{Layer1Settings, ModelRef};

    #[test]
    fn a_model_graded_matcher_without_its_model_is_a_problem_at_its_line() {
        let text = "version: 1\ncases:\n  - id: a\n    prompt: p\n    expect_tool: t\n    expect_args:\n      city: {match: embedding, value: Paris}\n      note: {match: judge, value: a greeting}\n";
        let set = crate::golden::load::parse(std::path::Path::new("golden.yaml"), text).expect("valid set");
        let mut layer1 =
            Layer1Settings { models: vec![ModelRef::for_tests("openai:gpt-4o")], ..Layer1Settings::default() };
        let problems: Vec<String> = unconfigured_matchers(&set, &layer1)
            .iter()
            .map(|problem| format!("{problem} / {}", problem.hint_text()))
            .collect();
        assert_eq!(problems.len(), 2, "{problems:#?}");
        assert!(
            problems[0].contains("golden.yaml:7:13") && problems[0].contains("--embedding-model"),
            "{}",
            problems[0]
        );
        assert!(problems[1].contains("golden.yaml:8:13") && problems[1].contains("--judge-model"), "{}", problems[1]);

        layer1.embedding_model = Some(ModelRef::for_tests("openai:text-embedding-3-small"));
        layer1.judge_model = Some(ModelRef::for_tests("openai:gpt-4.1"));
        assert!(unconfigured_matchers(&set, &layer1).is_empty(), "both models given");
        let without_models = Layer1Settings::default();
        assert!(unconfigured_matchers(&set, &without_models).is_empty(), "layer 1 does not run without a model");
    }
}
