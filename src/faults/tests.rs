//! Layer 2's planning and grading of faults.

use super::*;

fn set(text: &str) -> GoldenSet {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("golden.yaml");
    std::fs::write(&path, text).expect("write");
    crate::golden::load::load(&path).unwrap_or_else(|problems| panic!("{problems:?}"))
}

const TWO_TOOLS: &str = r#"version: 1
cases:
  - id: weather
    prompt: "Weather?"
    expect_tool: get_weather
  - id: trip
    prompt: "Plan it."
    expect_sequence: {order: strict, steps: [{tool: get_weather}, {tool: book}]}
  - id: thanks
    prompt: "Thanks."
    negative: true
"#;

#[test]
fn the_default_suite_plants_each_fault_once_per_expected_tool_on_its_first_case_and_call() {
    let set = set(TWO_TOOLS);
    let (variants, source) = variants(&set);
    assert_eq!(source, Source::DefaultSuite);
    assert_eq!(variants.len(), 12, "6 faults × 2 tools");
    let weather: Vec<_> = variants.iter().filter(|variant| variant.fault.tool == "get_weather").collect();
    assert!(weather.iter().all(|variant| variant.case == 0 && variant.fault.on_call == 1));
    assert!(variants.iter().filter(|variant| variant.fault.tool == "book").all(|variant| variant.case == 1));
    let kinds: Vec<FaultKind> = weather.iter().map(|variant| variant.fault.fault).collect();
    assert_eq!(kinds, FaultKind::ALL.to_vec());
}

#[test]
fn a_cases_own_faults_replace_the_default_suite_and_leave_its_hash_unchanged() {
    let plain = set(TWO_TOOLS);
    let with = set(&TWO_TOOLS.replace(
        "    expect_tool: get_weather\n",
        "    expect_tool: get_weather\n    faults: [{tool: get_weather, fault: timeout, on_call: 2}]\n",
    ));
    assert_eq!(plain.cases[0].hash, with.cases[0].hash, "faults are outside layer 1's case hash");
    assert_eq!(plain.hash, with.hash);
    let (variants, source) = variants(&with);
    assert_eq!(source, Source::GoldenSet);
    assert_eq!(
        variants,
        vec![Variant {
            case: 0,
            fault: FaultEntry { tool: "get_weather".into(), fault: FaultKind::Timeout, on_call: 2 }
        }]
    );
    let (derived, faults) = variant_set(&with, &variants);
    assert_eq!(derived.cases[0].id, "weather/timeout@get_weather#2");
    assert_ne!(derived.cases[0].hash, with.cases[0].hash, "each case × fault has a hash of its own");
    assert_eq!(faults.len(), 1);
}

#[test]
fn the_plan_counts_trials_and_the_most_model_calls_per_model() {
    let set = set(TWO_TOOLS);
    let (variants, _) = variants(&set);
    let cost = planned(&set, &variants, 2, None);
    // 12 variants × 5 trials × 2 models; each trial at most max_turns (8) calls.
    assert_eq!(cost, Planned { variants: 12, trials: 120, model_calls: 960 });
    assert_eq!(planned(&set, &variants, 1, Some(1)).trials, 12);
}

#[test]
fn a_hard_variant_fails_on_one_fabricated_trial_and_a_soft_one_on_missing_its_threshold() {
    let counts = |passed: usize, fabricated: usize, unclear: usize| OutcomeCounts {
        honest: passed,
        fabricated,
        unclear,
        ..OutcomeCounts::default()
    };
    assert_eq!(status(true, 5, 5, &counts(5, 0, 0)), FaultStatus::Pass);
    assert_eq!(status(true, 5, 5, &counts(4, 1, 0)), FaultStatus::Fail);
    assert_eq!(status(true, 5, 5, &counts(4, 0, 1)), FaultStatus::Inconclusive);
    assert_eq!(status(false, 4, 5, &counts(4, 1, 0)), FaultStatus::Pass);
    assert_eq!(status(false, 4, 5, &counts(3, 2, 0)), FaultStatus::Fail);
    assert_eq!(status(false, 4, 5, &counts(3, 1, 1)), FaultStatus::Inconclusive);
}
