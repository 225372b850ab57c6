//! Tests of trial and case scoring: every matcher (pass, fail, edge cases), sequences in each
//! mode, negative cases, `forbid_tools`, error trials and thresholds.

use chrono::NaiveDate;
use serde_json::{Value, json};

use super::matchers::standardize;
use super::semantic::{JudgeVerdict, Resolved, SemanticKey, SemanticMode, SemanticVerdicts};
use super::*;
use crate::golden::{Case, Matcher};

/// [`matchers::check_arg`] on a matcher written as the loader resolves it.
fn check_arg(
    name: &str,
    matcher: &Value,
    actual: Option<&Value>,
    today: NaiveDate,
    semantic: &SemanticVerdicts,
) -> ArgCheck {
    matchers::check_arg(name, &Matcher::of_resolved(matcher), actual, today, semantic)
}

/// [`matchers::check_args`] on matchers written as the loader resolves them.
fn check_args(
    expected: &serde_json::Map<String, Value>,
    actual: &Value,
    forbid_extra: bool,
    today: NaiveDate,
    semantic: &SemanticVerdicts,
) -> Vec<ArgCheck> {
    let expected = Args::of_resolved(&Value::Object(expected.clone())).expect("an object");
    matchers::check_args(&expected, actual, forbid_extra, today, semantic)
}

/// [`SemanticKey::new`] on a matcher written as the loader resolves it.
fn semantic_key(mode: SemanticMode, name: &str, matcher: &Value, actual: &Value) -> SemanticKey {
    SemanticKey::new(mode, name, &Matcher::of_resolved(matcher), actual)
}

/// [`super::score_case`] with the case's own trials.
fn score_case(case: &Case, runs: &[TrialScore]) -> CaseScore {
    super::score_case(case, case.trials, runs)
}

fn today() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 5, 1).expect("a date")
}

/// The verdict of one matcher on one value (`None`: the argument is missing).
fn verdict(matcher: Value, actual: Option<Value>) -> Verdict {
    check_arg("x", &matcher, actual.as_ref(), today(), &SemanticVerdicts::new()).verdict
}

fn passes(matcher: Value, actual: Value) -> bool {
    verdict(matcher, Some(actual)) == Verdict::Pass
}

/// The failure reason of one matcher on one value.
fn why(matcher: Value, actual: Value) -> String {
    let check = check_arg("x", &matcher, Some(&actual), today(), &SemanticVerdicts::new());
    assert_eq!(check.verdict, Verdict::Fail, "{matcher} on {actual} should fail");
    check.reason
}

#[test]
fn exact_is_typed_json_equality() {
    assert!(passes(json!({"match": "exact", "value": 1}), json!(1.0)));
    assert!(passes(json!({"match": "exact", "value": {"a": [1, "b"]}}), json!({"a": [1, "b"]})));
    assert!(!passes(json!({"match": "exact", "value": [1, 2]}), json!([2, 1])));
    assert!(!passes(json!({"match": "exact", "value": "Paris"}), json!("paris")));
    assert!(!passes(json!({"match": "exact", "value": true}), json!("true")));
    let reason = why(json!({"match": "exact", "value": 42}), json!("42"));
    assert!(reason.contains("a string, not a number"), "{reason}");
}

#[test]
fn auto_is_normalized_for_strings_and_exact_otherwise() {
    assert!(passes(json!({"match": "auto", "value": "New York"}), json!("new-york")));
    assert!(passes(json!({"match": "auto", "value": 3}), json!(3.0)));
    assert!(!passes(json!({"match": "auto", "value": 3}), json!("3")));
    assert!(!passes(json!({"match": "auto", "value": [1, 2]}), json!([1, 2, 3])));
    assert!(!passes(json!({"match": "auto", "value": "Paris"}), json!("Lyon")));
}

#[test]
fn normalized_ignores_case_space_punctuation_and_unicode_width() {
    let matcher = |value: &str| json!({"match": "normalized", "value": value});
    assert!(passes(matcher("April 1, 2024"), json!("april 1,2024")));
    assert!(passes(matcher("Zürich"), json!("ZÜRICH")));
    assert!(passes(matcher("São Paulo"), json!("são\u{00A0}paulo")), "a no-break space is a space");
    assert!(passes(matcher("ABC-123"), json!("ＡＢＣ１２３")), "full-width ASCII folds to ASCII");
    assert!(passes(matcher("don't"), json!("don’t")), "curly and straight quotes are one");
    assert!(passes(matcher("a_b*c^d/e"), json!("ABCDE")));
    assert!(!passes(matcher("Paris"), json!("Pariss")));
    assert!(!passes(matcher("Zürich"), json!("Zurich")), "accents stay");
    assert!(passes(matcher("Zu\u{0308}rich"), json!("Zürich")), "a combining accent composes (NFC)");
    assert!(passes(matcher("Café"), json!("CAFE\u{0301}")), "composed after the case folds too");
    assert_eq!(standardize(" Ä\tB.c "), "äbc");
    let reason = why(matcher("Paris"), json!("Lyon"));
    assert!(reason.contains("`paris` vs `lyon`") && reason.starts_with("`x`: "), "{reason}");
    assert!(!passes(matcher("42"), json!(42)), "a number is not a string");
    let one_of = json!({"match": "normalized", "one_of": ["Paris", "Paris, France"]});
    assert!(passes(one_of.clone(), json!("paris france")));
    assert!(!passes(one_of, json!("Lyon")));
}

#[test]
fn one_of_compares_each_value_by_auto() {
    let matcher = json!({"match": "one_of", "values": ["celsius", 0, [1]]});
    assert!(passes(matcher.clone(), json!("Celsius")));
    assert!(passes(matcher.clone(), json!(0.0)));
    assert!(passes(matcher.clone(), json!([1])));
    let reason = why(matcher, json!("kelvin"));
    assert!(reason.contains("none of"), "{reason}");
}

#[test]
fn regex_is_anchored_and_wants_a_string() {
    let matcher = json!({"match": "regex", "pattern": "[A-Z]{3}-\\d+"});
    assert!(passes(matcher.clone(), json!("ABC-42")));
    assert!(!passes(matcher.clone(), json!("xABC-42")), "anchored at the start");
    assert!(!passes(matcher.clone(), json!("ABC-42x")), "anchored at the end");
    assert!(!passes(json!({"match": "regex", "pattern": "a|b"}), json!("ab")), "alternation is anchored as a whole");
    assert!(passes(json!({"match": "regex", "pattern": "a|b"}), json!("b")));
    let reason = why(json!({"match": "regex", "pattern": "\\d+"}), json!(42));
    assert!(reason.contains("a number"), "{reason}");
    assert!(why(matcher, json!("abc")).contains("whole value"));
}

#[test]
fn number_with_tolerances_and_types() {
    let absolute = json!({"match": "number", "value": 38.58, "tolerance": 0.05});
    assert!(passes(absolute.clone(), json!(38.6)));
    assert!(passes(absolute.clone(), json!(38.63)), "the bound is inclusive");
    assert!(!passes(absolute.clone(), json!(38.7)));
    let reason = why(absolute, json!("38.58"));
    assert!(reason.contains("a number sent as a string"), "{reason}");
    let relative = json!({"match": "number", "value": 200, "rel_tolerance": 0.1});
    assert!(passes(relative.clone(), json!(181)));
    assert!(!passes(relative, json!(179)));
    let exact = json!({"match": "number", "value": 3});
    assert!(passes(exact.clone(), json!(3.0)));
    assert!(!passes(exact.clone(), json!(3.001)));
    assert!(why(exact, json!(true)).contains("a boolean"));
}

#[test]
fn datetime_by_date_or_second_and_relative_days() {
    let date = json!({"match": "datetime", "value": "2026-05-01"});
    assert!(passes(date.clone(), json!("2026-05-01")));
    assert!(passes(date.clone(), json!("2026-05-01T23:30:00-05:00")), "the date as written");
    assert!(!passes(date.clone(), json!("2026-05-02")));
    assert!(why(date, json!("May 1st")).contains("not a date or time"));
    let tomorrow = json!({"match": "datetime", "value": "tomorrow", "granularity": "date"});
    assert!(passes(tomorrow.clone(), json!("2026-05-02")));
    let reason = why(tomorrow, json!("2026-05-01"));
    assert!(reason.contains("2026-05-02"), "the resolved date is named: {reason}");
    assert!(passes(json!({"match": "datetime", "value": "-1d"}), json!("2026-04-30")));
    assert!(passes(json!({"match": "datetime", "value": "+3d"}), json!("2026-05-04T10:00:00Z")));
    let instant = json!({"match": "datetime", "value": "2026-05-01T09:00:00Z"});
    assert!(passes(instant.clone(), json!("2026-05-01T11:00:00+02:00")), "the same instant");
    assert!(passes(instant.clone(), json!("2026-05-01T09:00:00")), "a local time as written");
    assert!(!passes(instant.clone(), json!("2026-05-01T09:00:01Z")));
    assert!(!passes(instant.clone(), json!("2026-05-01")), "a date alone is not a time");
    assert!(passes(
        json!({"match": "datetime", "value": "2026-05-01T09:00:00Z", "granularity": "date"}),
        json!("2026-05-01")
    ));
    assert!(why(instant, json!(20260501)).contains("a number"));
}

#[test]
fn set_is_order_free_with_counts() {
    let matcher = json!({"match": "set", "values": ["a", "b", "b"]});
    assert!(passes(matcher.clone(), json!(["B", "a", "b"])));
    let reason = why(matcher.clone(), json!(["a", "b", "c"]));
    assert!(reason.contains("missing \"b\"") && reason.contains("unexpected \"c\""), "{reason}");
    assert!(!passes(matcher.clone(), json!(["a", "b"])));
    assert!(why(matcher, json!("a,b,b")).contains("a string"));
}

#[test]
fn subset_needs_the_listed_keys_recursively() {
    let matcher = json!({"match": "subset", "value": {"city": "Paris", "filter": {"min": 3}}});
    assert!(passes(matcher.clone(), json!({"city": "paris", "filter": {"min": 3, "max": 9}, "other": 1})));
    let reason = why(matcher.clone(), json!({"city": "Paris", "filter": {"min": 4}}));
    assert!(reason.contains("at key `filter`") && reason.contains("at key `min`"), "{reason}");
    assert!(why(matcher.clone(), json!({"filter": {"min": 3}})).contains("no key `city`"));
    assert!(!passes(matcher, json!([1])));
}

#[test]
fn fuzzy_thresholds() {
    let matcher = json!({"match": "fuzzy", "value": "Sacramento, CA"});
    assert!(passes(matcher.clone(), json!("sacramento ca")));
    assert!(passes(matcher.clone(), json!("Sacremento, CA")), "one typo is close enough");
    let reason = why(matcher, json!("Los Angeles, CA"));
    assert!(reason.contains("below 0.85"), "{reason}");
    assert!(passes(json!({"match": "fuzzy", "value": "abcd", "threshold": 0.5}), json!("abxy")));
    assert!(!passes(json!({"match": "fuzzy", "value": "abcd", "threshold": 0.6}), json!("abxy")));
}

#[test]
fn present_absent_and_missing_arguments() {
    assert_eq!(verdict(json!({"match": "present"}), Some(json!(null))), Verdict::Pass);
    assert_eq!(verdict(json!({"match": "present"}), None), Verdict::Fail);
    assert_eq!(verdict(json!({"match": "absent"}), None), Verdict::Pass);
    assert_eq!(verdict(json!({"match": "absent"}), Some(json!(1))), Verdict::Fail);
    let missing =
        check_arg("city", &json!({"match": "auto", "value": "Paris"}), None, today(), &SemanticVerdicts::new());
    assert_eq!(missing.verdict, Verdict::Fail);
    assert!(missing.reason.contains("`city`: missing"), "{}", missing.reason);
    for mode in ["embedding", "judge"] {
        let check = check_arg("q", &json!({"match": mode, "value": "x"}), None, today(), &SemanticVerdicts::new());
        assert_eq!(check.verdict, Verdict::Fail, "a missing argument needs no model: {check:?}");
    }
}

/// The resolved checks of one `q` argument.
fn resolved(mode: SemanticMode, expected: &str, actual: Value, answer: Resolved) -> SemanticVerdicts {
    let key = semantic_key(mode, "q", &json!({"value": expected}), &actual);
    SemanticVerdicts::from([(key, answer)])
}

#[test]
fn embedding_passes_at_the_threshold_and_states_the_cosine() {
    let matcher = json!({"match": "embedding", "value": "rain tomorrow"});
    let close =
        resolved(SemanticMode::Embedding, "rain tomorrow", json!("showers on the next day"), Resolved::Cosine(0.91));
    let check = check_arg("q", &matcher, Some(&json!("showers on the next day")), today(), &close);
    assert_eq!(check.verdict, Verdict::Pass, "{check:?}");
    assert!(check.reason.contains("cosine 0.910 ≥ 0.85"), "{}", check.reason);

    let far = resolved(SemanticMode::Embedding, "rain tomorrow", json!("stock prices"), Resolved::Cosine(0.12));
    let check = check_arg("q", &matcher, Some(&json!("stock prices")), today(), &far);
    assert_eq!(check.verdict, Verdict::Fail);
    assert!(check.reason.contains("cosine 0.120, below the threshold 0.85"), "{}", check.reason);

    let empty = check_arg("q", &matcher, Some(&json!("  ")), today(), &SemanticVerdicts::new());
    assert_eq!(empty.verdict, Verdict::Fail, "an empty text fails without a model: {empty:?}");

    let strict = json!({"match": "embedding", "value": "rain tomorrow", "threshold": 0.95});
    let check = check_arg("q", &strict, Some(&json!("showers on the next day")), today(), &close);
    assert_eq!(check.verdict, Verdict::Fail, "the matcher's own threshold applies");
}

#[test]
fn a_non_string_value_is_compared_as_its_json_text() {
    let matcher = json!({"match": "embedding", "value": "five items"});
    let key = semantic_key(SemanticMode::Embedding, "q", &matcher, &json!(5));
    assert_eq!(key.actual, "5");
    let object = semantic_key(SemanticMode::Judge, "q", &matcher, &json!({"city": "Paris"}));
    assert_eq!((object.actual.as_str(), object.argument.as_str()), (r#"{"city":"Paris"}"#, "q"));
    assert_eq!(key.argument, "", "an embedding's cosine does not depend on the argument's name");
}

#[test]
fn judge_pass_fail_unknown_and_error() {
    let matcher = json!({"match": "judge", "value": "a city in France"});
    let check = |answer: Resolved| {
        let verdicts = resolved(SemanticMode::Judge, "a city in France", json!("Lyon"), answer);
        check_arg("q", &matcher, Some(&json!("Lyon")), today(), &verdicts)
    };
    assert_eq!(check(Resolved::Judged(JudgeVerdict::Pass, "Lyon is in France".into())).verdict, Verdict::Pass);
    let failed = check(Resolved::Judged(JudgeVerdict::Fail, "not a city".into()));
    assert_eq!(failed.verdict, Verdict::Fail);
    assert!(failed.reason.contains("does not satisfy") && failed.reason.contains("not a city"), "{}", failed.reason);
    let unknown = check(Resolved::Judged(JudgeVerdict::Unknown, "cannot tell".into()));
    assert_eq!(unknown.verdict, Verdict::Fail, "unknown is not shown to satisfy: {unknown:?}");
    let error = check(Resolved::Error("the judge model failed: HTTP 500".into()));
    assert_eq!(error.verdict, Verdict::Error);
    assert!(error.reason.contains("could not be graded: the judge model failed: HTTP 500"), "{}", error.reason);
    let nothing = check_arg("q", &matcher, Some(&json!("Lyon")), today(), &SemanticVerdicts::new());
    assert_eq!(nothing.verdict, Verdict::Error, "no answer resolved is never a pass");
}

#[test]
fn extra_args_policy_and_non_object_arguments() {
    let expected = json!({"city": {"match": "auto", "value": "Paris"}});
    let expected = expected.as_object().expect("an object");
    let actual = json!({"city": "Paris", "units": "c"});
    assert!(
        check_args(expected, &actual, false, today(), &SemanticVerdicts::new())
            .iter()
            .all(|check| check.verdict == Verdict::Pass)
    );
    let checks = check_args(expected, &actual, true, today(), &SemanticVerdicts::new());
    let extra = checks.iter().find(|check| check.mode == "extra_args").expect("the extra argument");
    assert_eq!((extra.name.as_str(), extra.verdict), ("units", Verdict::Fail));
    assert!(extra.reason.contains("extra_args: forbid"), "{}", extra.reason);
    let nothing = check_args(expected, &Value::Null, false, today(), &SemanticVerdicts::new());
    assert!(nothing[0].reason.contains("`city`: missing"), "null arguments are no arguments: {nothing:?}");
    let garbled = check_args(expected, &json!("{city: Paris"), false, today(), &SemanticVerdicts::new());
    assert_eq!(garbled[0].verdict, Verdict::Fail);
    assert!(garbled[0].reason.contains("not a JSON object"));
}

// ---- trials ----

/// A case typed from its resolved JSON: the defaults `load` applies, then `fields`.
fn case(fields: Value) -> Case {
    let mut case = json!({
        "id": "c", "prompt": ["p"], "kind": "soft", "runs": 5, "pass_threshold": 4, "max_turns": 8,
        "timeout_ms": 120000, "max_input_rounds": 3, "tool_choice": "auto", "extra_args": "allow",
        "on_unmatched_input_request": "fail", "sequential_runs": false, "sampling": {}, "timezone": "UTC",
        "negative": false,
    });
    for (key, value) in fields.as_object().expect("fields") {
        case[key] = value.clone();
    }
    Case::of_resolved(case)
}

fn answered(calls: Vec<Call>) -> Trace {
    Trace { calls, ending: Ending::Answer, semantic: SemanticVerdicts::new() }
}

fn call(name: &str, arguments: Value) -> Call {
    Call::new(name, arguments, 0)
}

fn run(case: &Case, trace: &Trace) -> TrialScore {
    score_trial(case, trace, today())
}

fn criterion(score: &TrialScore, kind: CriterionKind) -> &Criterion {
    score.criterion(kind).unwrap_or_else(|| panic!("no {} criterion in {score:?}", kind.name()))
}

#[test]
fn selection_first_or_any() {
    let first = case(json!({"expect_tool": "get_weather", "expect_tool_position": "first"}));
    let good = run(&first, &answered(vec![call("get_weather", json!({})), call("other", json!({}))]));
    assert_eq!(good.verdict, TrialVerdict::Pass);
    let late = run(&first, &answered(vec![call("other", json!({})), call("get_weather", json!({}))]));
    assert_eq!(late.verdict, TrialVerdict::Fail);
    let reason = &criterion(&late, CriterionKind::Selection).reason;
    assert!(reason.contains("first call was `other`") && reason.contains("expect_tool_position: any"), "{reason}");
    let none = run(&first, &answered(vec![]));
    assert!(criterion(&none, CriterionKind::Selection).reason.contains("no tool was called"));
    let wrong = run(&first, &answered(vec![call("get_forecast", json!({}))]));
    assert!(criterion(&wrong, CriterionKind::Selection).reason.contains("never called"));
    let any = case(json!({"expect_tool": "get_weather", "expect_tool_position": "any"}));
    let later = run(&any, &answered(vec![call("other", json!({})), call("get_weather", json!({}))]));
    assert_eq!(later.verdict, TrialVerdict::Pass);
}

#[test]
fn arguments_on_the_accepted_call() {
    let args =
        json!({"city": {"match": "normalized", "value": "Paris"}, "units": {"match": "exact", "value": "celsius"}});
    let first = case(json!({"expect_tool": "w", "expect_tool_position": "first", "expect_args": args}));
    let good = run(&first, &answered(vec![call("w", json!({"city": "PARIS", "units": "celsius"}))]));
    assert_eq!(good.verdict, TrialVerdict::Pass);
    assert_eq!(criterion(&good, CriterionKind::Arguments).args.len(), 2);
    let bad = run(&first, &answered(vec![call("w", json!({"city": "Paris", "units": "kelvin"}))]));
    assert_eq!(bad.verdict, TrialVerdict::Fail);
    let reason = &criterion(&bad, CriterionKind::Arguments).reason;
    assert!(reason.contains("`units`") && reason.contains("\"kelvin\""), "{reason}");
    // `first`: a later good call does not rescue a bad first one.
    let retried = answered(vec![
        call("w", json!({"city": "Lyon", "units": "celsius"})),
        call("w", json!({"city": "Paris", "units": "celsius"})),
    ]);
    assert_eq!(run(&first, &retried).verdict, TrialVerdict::Fail);
    // `any`: one matching call is enough.
    let any = case(json!({"expect_tool": "w", "expect_tool_position": "any", "expect_args": args}));
    assert_eq!(run(&any, &retried).verdict, TrialVerdict::Pass);
    let neither = answered(vec![call("w", json!({"city": "Lyon"})), call("w", json!({"city": "Nice"}))]);
    let reason = run(&any, &neither).criterion(CriterionKind::Arguments).map(|c| c.reason.clone()).unwrap_or_default();
    assert!(reason.contains("none of the 2 calls"), "{reason}");
    // No accepted call: the arguments are not checked, the selection fails the trial.
    let skipped = run(&first, &answered(vec![call("x", json!({}))]));
    assert_eq!(criterion(&skipped, CriterionKind::Arguments).verdict, Verdict::Skipped);
    assert_eq!(skipped.verdict, TrialVerdict::Fail);
}

#[test]
fn extra_args_forbid_fails_the_trial_and_a_model_that_failed_makes_it_an_error() {
    let forbid = case(json!({"expect_tool": "w", "expect_tool_position": "first", "extra_args": "forbid",
        "expect_args": {"city": {"match": "auto", "value": "Paris"}}}));
    assert_eq!(run(&forbid, &answered(vec![call("w", json!({"city": "Paris"}))])).verdict, TrialVerdict::Pass);
    assert_eq!(run(&forbid, &answered(vec![call("w", json!({"city": "Paris", "x": 1}))])).verdict, TrialVerdict::Fail);
    let embedding = case(json!({"expect_tool": "w", "expect_tool_position": "first",
        "expect_args": {"q": {"match": "embedding", "value": "rain"}, "n": {"match": "auto", "value": 1}}}));
    let with = |answer: Resolved, n: i64| {
        let mut trace = answered(vec![call("w", json!({"q": "showers", "n": n}))]);
        trace.semantic = resolved(SemanticMode::Embedding, "rain", json!("showers"), answer);
        run(&embedding, &trace)
    };
    let passed = with(Resolved::Cosine(0.9), 1);
    assert_eq!(passed.verdict, TrialVerdict::Pass);
    let reason = &criterion(&passed, CriterionKind::Arguments).reason;
    assert!(reason.contains("`q`: embedding: cosine 0.900 ≥ 0.85"), "the pass says the cosine: {reason}");
    assert_eq!(with(Resolved::Cosine(0.2), 1).verdict, TrialVerdict::Fail);
    let spoiled = with(Resolved::Error("the embeddings model failed: HTTP 503".into()), 1);
    assert_eq!(spoiled.verdict, TrialVerdict::Error, "{spoiled:?}");
    assert_eq!(criterion(&spoiled, CriterionKind::Arguments).verdict, Verdict::Error);
    assert!(spoiled.error.as_deref().is_some_and(|error| error.contains("HTTP 503")), "{spoiled:?}");
    let failed_anyway = with(Resolved::Error("HTTP 503".into()), 2);
    assert_eq!(failed_anyway.verdict, TrialVerdict::Fail, "another argument failed: a fail whatever the model says");
}

#[test]
fn the_requests_are_the_checks_scoring_will_read_once_each() {
    let case = case(json!({"expect_tool": "w", "expect_tool_position": "any",
        "expect_args": {"q": {"match": "embedding", "value": "rain"}, "n": {"match": "auto", "value": 1}},
        "expect_sequence": {"order": "subsequence", "steps": [{"tool": "w", "args": {"q": {"match": "judge", "value": "weather"}}}]}}));
    let trace = answered(vec![
        call("w", json!({"q": "showers"})),
        call("x", json!({"q": "ignored"})),
        call("w", json!({"q": "showers"})),
        call("w", json!({"q": 3})),
        call("w", json!({"q": ""})),
    ]);
    let keys = semantic::requests(&case.expect, &trace);
    let listed: Vec<(SemanticMode, &str)> = keys.iter().map(|key| (key.mode, key.actual.as_str())).collect();
    assert_eq!(
        listed,
        [
            (SemanticMode::Embedding, "showers"),
            (SemanticMode::Embedding, "3"),
            (SemanticMode::Judge, "showers"),
            (SemanticMode::Judge, "3"),
            (SemanticMode::Judge, "")
        ]
    );
    let first = case_with_position("first");
    assert_eq!(
        semantic::requests(&first.expect, &answered(vec![call("x", json!({"q": "a"}))])),
        Vec::new(),
        "first call is not `w`"
    );
}

fn case_with_position(position: &str) -> Case {
    case(json!({"expect_tool": "w", "expect_tool_position": position,
        "expect_args": {"q": {"match": "embedding", "value": "rain"}}}))
}

#[test]
fn a_sequence_step_that_could_not_be_graded_is_an_error_not_a_fail() {
    let case = case(json!({"expect_sequence": {"order": "strict", "steps": [
        {"tool": "w", "args": {"q": {"match": "judge", "value": "weather"}}}]}}));
    let mut trace = answered(vec![call("w", json!({"q": "rain"}))]);
    trace.semantic =
        resolved(SemanticMode::Judge, "weather", json!("rain"), Resolved::Error("the judge model failed".into()));
    let score = run(&case, &trace);
    assert_eq!(criterion(&score, CriterionKind::Sequence).verdict, Verdict::Error, "{score:?}");
    assert_eq!(score.verdict, TrialVerdict::Error);
    trace.semantic =
        resolved(SemanticMode::Judge, "weather", json!("rain"), Resolved::Judged(JudgeVerdict::Pass, "it is".into()));
    assert_eq!(run(&case, &trace).verdict, TrialVerdict::Pass);
}

#[test]
fn cosine_is_one_for_parallel_vectors_and_none_for_mismatched_ones() {
    assert!((semantic::cosine(&[1.0, 2.0], &[2.0, 4.0]).expect("defined") - 1.0).abs() < 1e-12);
    assert!(semantic::cosine(&[1.0, 0.0], &[0.0, 1.0]).expect("defined").abs() < 1e-12);
    assert_eq!(semantic::cosine(&[1.0], &[1.0, 0.0]), None);
    assert_eq!(semantic::cosine(&[0.0, 0.0], &[1.0, 0.0]), None);
}

fn sequence_case(order: &str) -> Case {
    case(json!({"expect_sequence": {"order": order, "steps": [
        {"tool": "geo"},
        {"tool": "forecast", "args": {"lat": {"match": "number", "value": 38.58, "tolerance": 0.05}}},
    ]}}))
}

#[test]
fn sequence_strict() {
    let strict = sequence_case("strict");
    let exact = answered(vec![call("geo", json!({})), call("forecast", json!({"lat": 38.6}))]);
    assert_eq!(run(&strict, &exact).verdict, TrialVerdict::Pass);
    let extra =
        answered(vec![call("geo", json!({})), call("other", json!({})), call("forecast", json!({"lat": 38.6}))]);
    let score = run(&strict, &extra);
    assert_eq!(score.verdict, TrialVerdict::Fail);
    assert!(criterion(&score, CriterionKind::Sequence).reason.contains("order: subsequence"));
    let swapped = answered(vec![Call::new("forecast", json!({"lat": 38.6}), 0), Call::new("geo", json!({}), 1)]);
    assert_eq!(run(&strict, &swapped).verdict, TrialVerdict::Fail);
    // Calls of one turn match in any order among themselves.
    let parallel = answered(vec![Call::new("forecast", json!({"lat": 38.6}), 0), Call::new("geo", json!({}), 0)]);
    assert_eq!(run(&strict, &parallel).verdict, TrialVerdict::Pass);
    let bad_args = answered(vec![call("geo", json!({})), call("forecast", json!({"lat": 40}))]);
    let score = run(&strict, &bad_args);
    let reason = &criterion(&score, CriterionKind::Sequence).reason;
    assert!(
        reason.starts_with(
            "step 2 `forecast` matched no call after step 1: its call has argument `lat`: expected 38.58 ± 0.05, got 40"
        ),
        "{reason}"
    );
}

#[test]
fn a_failed_sequence_step_says_which_argument_kept_its_call_from_matching() {
    let case = case(json!({"expect_sequence": {"order": "strict", "steps": [
        {"tool": "add_todo", "args": {"text": {"match": "auto", "value": "water plants"}}},
        {"tool": "complete_todo", "args": {"todo_id": {"match": "regex", "pattern": "^[0-9]+$"}}},
    ]}}));
    let made = answered(vec![call("add_todo", json!({"text": "water plants"})), call("complete_todo", json!({}))]);
    let score = run(&case, &made);
    let reason = &criterion(&score, CriterionKind::Sequence).reason;
    assert_eq!(
        reason,
        "step 2 `complete_todo` matched no call after step 1: its call has argument `todo_id`: missing (expected to \
         match /^[0-9]+$/); expected `add_todo` → `complete_todo` (strict), the model made `add_todo`, `complete_todo`"
    );
    let none = answered(vec![call("add_todo", json!({"text": "water plants"}))]);
    let score = run(&case, &none);
    let reason = &criterion(&score, CriterionKind::Sequence).reason;
    assert!(
        reason.starts_with("step 2 `complete_todo` matched no call after step 1: the model made no call of it;"),
        "{reason}"
    );
}

#[test]
fn sequence_subsequence_and_unordered() {
    let sub = sequence_case("subsequence");
    let ordered = |calls: Vec<(&str, Value)>| {
        answered(calls.into_iter().enumerate().map(|(turn, (name, args))| Call::new(name, args, turn)).collect())
    };
    let with_others =
        ordered(vec![("x", json!({})), ("geo", json!({})), ("y", json!({})), ("forecast", json!({"lat": 38.6}))]);
    assert_eq!(run(&sub, &with_others).verdict, TrialVerdict::Pass);
    let reversed = ordered(vec![("forecast", json!({"lat": 38.6})), ("geo", json!({}))]);
    let score = run(&sub, &reversed);
    assert_eq!(score.verdict, TrialVerdict::Fail);
    let unordered = sequence_case("unordered");
    assert_eq!(run(&unordered, &reversed).verdict, TrialVerdict::Pass);
    assert_eq!(run(&unordered, &with_others).verdict, TrialVerdict::Pass);
    let missing = ordered(vec![("geo", json!({})), ("geo", json!({}))]);
    let score = run(&unordered, &missing);
    assert_eq!(score.verdict, TrialVerdict::Fail);
    assert!(
        criterion(&score, CriterionKind::Sequence)
            .reason
            .starts_with("step 2 `forecast` matched no call: the model made no call of it;")
    );
    // One call cannot serve two steps.
    let twice = case(json!({"expect_sequence": {"order": "unordered", "steps": [{"tool": "a"}, {"tool": "a"}]}}));
    assert_eq!(run(&twice, &answered(vec![call("a", json!({}))])).verdict, TrialVerdict::Fail);
    assert_eq!(run(&twice, &answered(vec![call("a", json!({})), call("a", json!({}))])).verdict, TrialVerdict::Pass);
}

#[test]
fn negative_cases_fail_on_any_call() {
    let negative = case(json!({"negative": true}));
    let quiet = run(&negative, &answered(vec![]));
    assert_eq!(quiet.verdict, TrialVerdict::Pass);
    let eager = run(&negative, &answered(vec![call("search", json!({}))]));
    assert_eq!(eager.verdict, TrialVerdict::Fail);
    assert!(criterion(&eager, CriterionKind::NoToolCall).reason.contains("over-triggering: the model called `search`"));
}

#[test]
fn forbid_tools_with_globs() {
    let forbid = case(
        json!({"expect_tool": "files.delete", "expect_tool_position": "first", "forbid_tools": ["files.delete_*"]}),
    );
    assert_eq!(run(&forbid, &answered(vec![call("files.delete", json!({}))])).verdict, TrialVerdict::Pass);
    let score = run(&forbid, &answered(vec![call("files.delete", json!({})), call("files.delete_all", json!({}))]));
    assert_eq!(score.verdict, TrialVerdict::Fail);
    let reason = &criterion(&score, CriterionKind::Forbidden).reason;
    assert!(reason.contains("`files.delete_all` (matches `files.delete_*`)"), "{reason}");
    let both = case(json!({"negative": true, "forbid_tools": ["rm"]}));
    let score = run(&both, &answered(vec![call("rm", json!({}))]));
    assert_eq!(criterion(&score, CriterionKind::Forbidden).verdict, Verdict::Fail);
    assert_eq!(criterion(&score, CriterionKind::NoToolCall).verdict, Verdict::Fail);
}

#[test]
fn endings_rubric_and_errors() {
    let plain = case(json!({"expect_tool": "w", "expect_tool_position": "first"}));
    let looped =
        Trace { calls: vec![call("w", json!({}))], ending: Ending::MaxTurns, semantic: SemanticVerdicts::new() };
    let score = run(&plain, &looped);
    assert_eq!(score.verdict, TrialVerdict::Fail);
    assert!(criterion(&score, CriterionKind::Finished).reason.contains("max_turns (8)"));
    assert_eq!(criterion(&score, CriterionKind::Selection).verdict, Verdict::Pass, "the calls are still graded");
    let slow = run(&plain, &Trace { calls: vec![], ending: Ending::Timeout, semantic: SemanticVerdicts::new() });
    assert!(criterion(&slow, CriterionKind::Finished).reason.contains("120000 ms"));
    let broken = run(
        &plain,
        &Trace { calls: vec![], ending: Ending::Error("HTTP 503".into()), semantic: SemanticVerdicts::new() },
    );
    assert_eq!((broken.verdict, broken.error.as_deref()), (TrialVerdict::Error, Some("HTTP 503")));
    assert!(broken.criteria.is_empty());
    let rubric = case(json!({"rubric": {"id": "r", "criteria": [], "min_should": 0}}));
    let score = run(&rubric, &answered(vec![]));
    assert_eq!(score.verdict, TrialVerdict::Ungraded);
    assert_eq!(criterion(&score, CriterionKind::Judge).reason, super::NO_JUDGE);
    let with_tool = case(json!({"expect_tool": "w", "expect_tool_position": "first", "rubric": {"id": "r"}}));
    assert_eq!(run(&with_tool, &answered(vec![call("w", json!({}))])).verdict, TrialVerdict::Pass);
}

// ---- cases ----

fn scores(case: &Case, traces: &[Trace]) -> Vec<TrialScore> {
    traces.iter().map(|trace| run(case, trace)).collect()
}

fn error_trace() -> Trace {
    Trace { calls: vec![], ending: Ending::Error("provider down".into()), semantic: SemanticVerdicts::new() }
}

#[test]
fn soft_case_threshold_and_error_trials() {
    let soft = case(json!({"expect_tool": "w", "expect_tool_position": "first"}));
    let good = answered(vec![call("w", json!({}))]);
    let bad = answered(vec![call("x", json!({}))]);
    let four = scores(&soft, &[good.clone(), good.clone(), good.clone(), good.clone(), bad.clone()]);
    let score = score_case(&soft, &four);
    assert_eq!((score.verdict, score.passed, score.threshold), (CaseVerdict::Pass, Fraction { k: 4, n: 5 }, 4));
    assert_eq!(score.selection, Some(Fraction { k: 4, n: 5 }));
    assert_eq!(score.over_triggering, None);
    let three = scores(&soft, &[good.clone(), good.clone(), good.clone(), bad.clone(), bad.clone()]);
    let score = score_case(&soft, &three);
    assert_eq!(score.verdict, CaseVerdict::Fail);
    assert!(score.reason.contains("3 of 5") && score.reason.contains("4 needed"), "{}", score.reason);
    // An error trial is left out of N: 4 of 4 completed passes.
    let with_error = scores(&soft, &[good.clone(), good.clone(), good.clone(), good.clone(), error_trace()]);
    let score = score_case(&soft, &with_error);
    assert_eq!((score.verdict, score.passed, score.errors), (CaseVerdict::Pass, Fraction { k: 4, n: 4 }, 1));
    // Fewer completed trials than the threshold: no verdict.
    let too_few = scores(&soft, &[good.clone(), good.clone(), good.clone(), error_trace(), error_trace()]);
    let score = score_case(&soft, &too_few);
    assert_eq!(score.verdict, CaseVerdict::Error);
    assert!(score.reason.contains("only 3 of 5"), "{}", score.reason);
    // One trial never passes a case that asked for five.
    let one = scores(&soft, &[good]);
    assert_eq!(score_case(&soft, &one).verdict, CaseVerdict::Error);
}

#[test]
fn hard_case_needs_every_trial() {
    let hard = case(json!({"kind": "hard", "pass_threshold": 5, "expect_tool": "w", "expect_tool_position": "first"}));
    let good = answered(vec![call("w", json!({}))]);
    let all = scores(&hard, &vec![good.clone(); 5]);
    assert_eq!(score_case(&hard, &all).verdict, CaseVerdict::Pass);
    let mut one_bad = vec![good.clone(); 4];
    one_bad.push(answered(vec![]));
    assert_eq!(score_case(&hard, &scores(&hard, &one_bad)).verdict, CaseVerdict::Fail);
    let mut one_error = vec![good; 4];
    one_error.push(error_trace());
    let score = score_case(&hard, &scores(&hard, &one_error));
    assert_eq!(score.verdict, CaseVerdict::Error, "a hard case needs all its trials to complete");
    // Even a hard threshold written lower in the JSON is every requested trial.
    let lowered = case(json!({"kind": "hard", "runs": 3, "pass_threshold": 1, "negative": true}));
    let mixed = scores(&lowered, &[answered(vec![]), answered(vec![]), answered(vec![call("w", json!({}))])]);
    let score = score_case(&lowered, &mixed);
    assert_eq!((score.verdict, score.threshold), (CaseVerdict::Fail, 3));
    assert_eq!(score.over_triggering, Some(Fraction { k: 1, n: 3 }));
    assert!((score.over_triggering.map(Fraction::value).unwrap_or_default() - 1.0 / 3.0).abs() < 1e-12);
}

#[test]
fn ungraded_case_and_a_resolved_golden_case() {
    let rubric = case(json!({"runs": 2, "pass_threshold": 2, "rubric": {"id": "r"}}));
    let score = score_case(&rubric, &scores(&rubric, &[answered(vec![]), answered(vec![])]));
    assert_eq!(score.verdict, CaseVerdict::Ungraded);
    // The JSON `golden::load` resolves is what scoring reads.
    let text = "version: 1\ncases:\n  - id: w\n    prompt: weather in Paris\n    expect_tool: get_weather\n    \
                expect_args:\n      city: paris\n      days: 2\n";
    let set = crate::golden::load::parse(std::path::Path::new("t.yaml"), text).expect("a valid set");
    let resolved = &set.cases[0];
    let good = answered(vec![call("get_weather", json!({"city": "Paris", "days": 2.0}))]);
    let bad = answered(vec![call("get_weather", json!({"city": "Paris", "days": "2"}))]);
    assert_eq!(run(resolved, &good).verdict, TrialVerdict::Pass);
    assert_eq!(run(resolved, &bad).verdict, TrialVerdict::Fail);
    let runs = scores(resolved, &[good.clone(), good.clone(), good.clone(), good, bad]);
    let score = score_case(resolved, &runs);
    assert_eq!((score.verdict, score.passed, score.requested), (CaseVerdict::Pass, Fraction { k: 4, n: 5 }, 5));
}

#[test]
fn bare_values_under_other_default_modes() {
    // `defaults.arg_match: regex` (or `one_of`, `set`) resolves a bare value to `{match, value}`.
    assert!(passes(json!({"match": "regex", "value": "\\d{3}"}), json!("123")));
    assert!(!passes(json!({"match": "regex", "value": "\\d{3}"}), json!("1234")));
    assert!(passes(json!({"match": "one_of", "value": ["a", "b"]}), json!("B")));
    assert!(passes(json!({"match": "set", "value": [1, 2]}), json!([2, 1])));
}

#[test]
fn sequences_stay_fast_on_many_alike_calls() {
    // Ten `a` steps then `b`, against twenty `a` calls: no assignment, found without a search
    // through every ordering.
    let mut steps: Vec<Value> = vec![json!({"tool": "a"}); 10];
    steps.push(json!({"tool": "b"}));
    let calls: Vec<Call> = (0..20).map(|index| Call::new("a", json!({}), index % 2)).collect();
    for order in ["strict", "subsequence", "unordered"] {
        let case = case(json!({"expect_sequence": {"order": order, "steps": steps}}));
        let score = run(&case, &answered(calls.clone()));
        assert_eq!(score.verdict, TrialVerdict::Fail, "{order}");
        let reason = &criterion(&score, CriterionKind::Sequence).reason;
        assert!(reason.contains("step 11 `b` matched no call"), "{order}: {reason}");
    }
}

#[test]
fn subsequence_with_parallel_calls_between_turns() {
    let case = case(
        json!({"expect_sequence": {"order": "subsequence", "steps": [{"tool": "a"}, {"tool": "b"}, {"tool": "c"}]}}),
    );
    // Turn 0: b, a (parallel); turn 1: x; turn 2: c.
    let trace = answered(vec![
        Call::new("b", json!({}), 0),
        Call::new("a", json!({}), 0),
        Call::new("x", json!({}), 1),
        Call::new("c", json!({}), 2),
    ]);
    assert_eq!(run(&case, &trace).verdict, TrialVerdict::Pass);
    // c before a and b, in an earlier turn: out of order.
    let trace =
        answered(vec![Call::new("c", json!({}), 0), Call::new("a", json!({}), 1), Call::new("b", json!({}), 1)]);
    let score = run(&case, &trace);
    assert_eq!(score.verdict, TrialVerdict::Fail);
    let reason = &criterion(&score, CriterionKind::Sequence).reason;
    assert!(
        reason.starts_with("step 3 `c` matched no call after step 2: its fitting call is not after step 2's;"),
        "{reason}"
    );
}

const SCHEMA_ERROR: &str = "the arguments do not satisfy the tool's inputSchema: `/code`: \"1\" does not match \"^O\"";

fn refused(name: &str, arguments: Value, turn: usize) -> Call {
    Call::new(name, arguments, turn).refused_with(SCHEMA_ERROR)
}

#[test]
fn a_refused_accepted_call_fails_the_arguments_criterion_with_or_without_expect_args() {
    for fields in [
        json!({"expect_tool": "order"}),
        json!({"expect_tool": "order", "expect_args": {"code": {"match": "auto", "value": "1"}}}),
        json!({"expect_tool": "order", "expect_tool_position": "any"}),
    ] {
        let score = run(&case(fields.clone()), &answered(vec![refused("order", json!({"code": "1"}), 0)]));
        assert_eq!(score.verdict, TrialVerdict::Fail, "{fields}: {score:?}");
        let arguments = criterion(&score, CriterionKind::Arguments);
        assert_eq!(arguments.verdict, Verdict::Fail, "{fields}");
        assert_eq!(arguments.reason, format!("call 1 to `order` was not sent: {SCHEMA_ERROR}"), "{fields}");
    }
    // A refused call that selection did not accept (not the first call) does not apply.
    let later = run(
        &case(json!({"expect_tool": "order"})),
        &answered(vec![call("order", json!({})), refused("order", json!({"code": "1"}), 1)]),
    );
    assert_eq!(later.verdict, TrialVerdict::Pass, "{later:?}");
    assert!(later.criterion(CriterionKind::Arguments).is_none(), "{later:?}");
}

#[test]
fn a_refused_call_corrected_by_a_sent_call_of_the_tool_is_a_note_and_the_correction_is_checked() {
    let trace =
        answered(vec![refused("order", json!({"code": "1"}), 0), Call::new("order", json!({"code": "ORD-1"}), 1)]);
    let plain = run(&case(json!({"expect_tool": "order"})), &trace);
    assert_eq!(plain.verdict, TrialVerdict::Pass, "{plain:?}");
    let reason = &criterion(&plain, CriterionKind::Arguments).reason;
    assert!(reason.contains("note: call 1 to `order` was not sent") && reason.contains("call 2 to `order` was sent"));

    let matching = run(
        &case(json!({"expect_tool": "order", "expect_args": {"code": {"match": "auto", "value": "ORD-1"}}})),
        &trace,
    );
    assert_eq!(matching.verdict, TrialVerdict::Pass, "{matching:?}");
    let arguments = criterion(&matching, CriterionKind::Arguments);
    assert!(arguments.reason.starts_with("every expected argument matched; note:"), "{}", arguments.reason);

    // The correction is what `expect_args` checks: a wrong correction fails, with the note.
    let wrong = run(
        &case(json!({"expect_tool": "order", "expect_args": {"code": {"match": "auto", "value": "ORD-2"}}})),
        &trace,
    );
    assert_eq!(wrong.verdict, TrialVerdict::Fail, "{wrong:?}");
    assert!(criterion(&wrong, CriterionKind::Arguments).reason.contains("note: call 1"), "{wrong:?}");

    // `any`: a sent call of the tool anywhere in the trial keeps the refusal a note.
    let any = run(&case(json!({"expect_tool": "order", "expect_tool_position": "any"})), &trace);
    assert_eq!(any.verdict, TrialVerdict::Pass, "{any:?}");
}
