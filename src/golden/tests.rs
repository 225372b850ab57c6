//! Unit tests of golden-set loading and hashing: every field and matcher, every kind of
//! problem (with positions, all at once), and the hash properties.

use std::path::Path;

use serde_json::{Value, json};

use super::load::parse;
use super::{GoldenSet, Problem, glob_matches, unknown_tools};

fn ok(text: &str) -> GoldenSet {
    parse(Path::new("g.yaml"), text).unwrap_or_else(|problems| panic!("{problems:#?}"))
}

fn problems(text: &str) -> Vec<Problem> {
    match parse(Path::new("g.yaml"), text) {
        Ok(set) => panic!("expected problems, got {set:#?}"),
        Err(problems) => problems,
    }
}

/// `(field, line, column)` of each problem.
fn places(problems: &[Problem]) -> Vec<(String, u64, u64)> {
    problems
        .iter()
        .map(|problem| {
            let (line, column) = problem.position().unwrap_or((0, 0));
            (problem.field.clone().unwrap_or_default(), line, column)
        })
        .collect()
}

fn only(text: &str) -> Problem {
    let mut found = problems(text);
    assert_eq!(found.len(), 1, "{found:#?}");
    found.remove(0)
}

/// One case with these extra lines (indented four spaces).
fn case(lines: &str) -> String {
    format!("version: 1\ncases:\n  - id: c\n    prompt: hi\n{lines}")
}

#[test]
fn a_minimal_case_gets_every_default() {
    let set = ok(&case("    expect_tool: t\n"));
    assert_eq!(set.cases.len(), 1);
    let case = &set.cases[0];
    assert_eq!(case.id, "c");
    assert_eq!(
        case.resolved,
        json!({
            "id": "c", "prompt": ["hi"], "kind": "soft", "runs": 5, "pass_threshold": 4, "max_turns": 8,
            "timeout_ms": 120000, "max_input_rounds": 3, "tool_choice": "auto", "extra_args": "allow",
            "on_unmatched_input_request": "fail", "sequential_runs": false, "sampling": {},
            "timezone": "UTC", "expect_tool": "t", "expect_tool_position": "first", "negative": false,
        })
    );
    assert_eq!(case.tools.len(), 1);
    assert_eq!(
        (case.tools[0].line, case.tools[0].column, case.tools[0].field.as_str()),
        (5, 18, "cases[0].expect_tool")
    );
}

#[test]
fn every_field_is_read_and_defaults_apply_key_by_key() {
    let text = r#"version: 1
defaults:
  system: "Be brief."
  kind: soft
  runs: 10
  pass_threshold: 7
  max_turns: 4
  timeout_ms: 9000
  tools: [a, "b*"]
  tool_choice: required
  extra_args: forbid
  arg_match: exact
  timezone: Europe/Paris
  on_unmatched_input_request: decline
  max_input_rounds: 2
  sequential_runs: true
  sampling: {temperature: 0.2, top_p: 0.9}
rubrics:
  r:
    min_should: 1
    criteria:
      - {id: x, text: "X?", must: true}
      - {id: y, text: "Y?", must: false}
cases:
  - id: full.case-1
    prompt: ["one", "two"]
    system: "Other."
    runs: 3
    pass_threshold: 2
    tool_choice: none
    sampling: {max_output_tokens: 100, temperature: 1}
    expect_tool: a
    expect_tool_position: any
    expect_args:
      q: "bare"
    forbid_tools: [z]
    rubric: r
    tags: [t1, t2]
  - id: hard
    prompt: p
    kind: hard
    sequential_runs: false
    negative: true
"#;
    let set = ok(text);
    let first = &set.cases[0].resolved;
    assert_eq!(first["prompt"], json!(["one", "two"]));
    assert_eq!(first["system"], "Other.");
    assert_eq!((first["runs"].clone(), first["pass_threshold"].clone()), (json!(3), json!(2)));
    assert_eq!((first["max_turns"].clone(), first["timeout_ms"].clone()), (json!(4), json!(9000)));
    assert_eq!(first["tools"], json!(["a", "b*"]));
    assert_eq!(first["tool_choice"], "none");
    assert_eq!(first["extra_args"], "forbid");
    assert_eq!(first["timezone"], "Europe/Paris");
    assert_eq!(first["on_unmatched_input_request"], "decline");
    assert_eq!(first["max_input_rounds"], 2);
    assert_eq!(first["sequential_runs"], true);
    assert_eq!(first["sampling"], json!({"temperature": 1, "top_p": 0.9, "max_output_tokens": 100}));
    assert_eq!(first["expect_tool_position"], "any");
    // `defaults.arg_match: exact` makes bare values exact.
    assert_eq!(first["expect_args"], json!({"q": {"match": "exact", "value": "bare"}}));
    assert_eq!(first["forbid_tools"], json!(["z"]));
    assert_eq!(first["rubric"]["id"], "r");
    assert_eq!(first["rubric"]["min_should"], 1);
    assert_eq!(first["rubric"]["criteria"][1], json!({"id": "y", "text": "Y?", "must": false}));
    assert!(first.get("tags").is_none(), "tags are not part of the resolved case");
    let names: Vec<&str> = set.cases[0].tools.iter().map(|tool| tool.name.as_str()).collect();
    assert_eq!(names, ["a", "b*", "z", "a"]);

    let hard = &set.cases[1].resolved;
    assert_eq!(
        (hard["kind"].clone(), hard["runs"].clone(), hard["pass_threshold"].clone()),
        (json!("hard"), json!(10), json!(10))
    );
    assert_eq!(hard["sequential_runs"], false);
    assert_eq!(hard["negative"], true);
    assert_eq!(hard["system"], "Be brief.");
    assert_eq!(hard["sampling"], json!({"temperature": 0.2, "top_p": 0.9}));
}

#[test]
fn every_matcher_is_read() {
    let text = case(
        r#"    expect_tool: t
    expect_args:
      bare_string: Paris
      bare_list: [1, 2]
      bare_object: {a: 1}
      auto: {match: auto, value: 3}
      exact: {match: exact, value: "celsius"}
      normalized: {match: normalized, one_of: ["Paris", "Paris, France"]}
      normalized_value: {match: normalized, value: "Paris"}
      one_of: {match: one_of, values: [a, b]}
      regex: {match: regex, pattern: "^q[0-9]+$"}
      number: {match: number, value: 38.58, tolerance: 0.05}
      number_rel: {match: number, value: 10, rel_tolerance: 0.1}
      datetime: {match: datetime, value: tomorrow, granularity: date}
      datetime_abs: {match: datetime, value: "2026-05-01T09:00:00Z", granularity: second}
      datetime_rel: {match: datetime, value: "+3d"}
      datetime_date: {match: datetime, value: "2026-05-01"}
      set: {match: set, values: [x, y]}
      subset: {match: subset, value: {k: v}}
      fuzzy: {match: fuzzy, value: "Sacramento, CA", threshold: 0.9}
      embedding: {match: embedding, value: "a city"}
      judge: {match: judge, value: "a polite greeting"}
      present: {match: present}
      absent: {match: absent}
"#,
    );
    let set = ok(&text);
    let args = &set.cases[0].resolved["expect_args"];
    assert_eq!(args["bare_string"], json!({"match": "auto", "value": "Paris"}));
    assert_eq!(args["bare_list"], json!({"match": "auto", "value": [1, 2]}));
    assert_eq!(args["bare_object"], json!({"match": "auto", "value": {"a": 1}}));
    assert_eq!(args["number"], json!({"match": "number", "value": 38.58, "tolerance": 0.05}));
    assert_eq!(args["datetime"]["value"], "tomorrow", "relative dates stay as written");
    assert_eq!(args["present"], json!({"match": "present"}));
    assert_eq!(args.as_object().map(|map| map.len()), Some(22));
}

#[test]
fn sequences_rubric_files_and_input_responses_are_read() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("r.md"), "# R\n- [must] A\n- [should] B\n").expect("write");
    let text = r#"version: 1
rubrics:
  from_file: {file: r.md, min_should: 1}
cases:
  - id: s
    prompt: p
    expect_sequence:
      order: unordered
      steps:
        - tool: geo.lookup
          args: {query: {match: fuzzy, value: "Sacramento"}}
        - tool: get_forecast
    rubric: from_file
    input_responses:
      - key: confirm
        respond: {action: accept}
      - match: {method: elicitation/create, message: "(?i)confirm", schema_has: [confirm]}
        respond: {action: decline}
        times: 2
"#;
    let path = dir.path().join("g.yaml");
    let set = parse(&path, text).unwrap_or_else(|problems| panic!("{problems:#?}"));
    let case = &set.cases[0].resolved;
    assert_eq!(case["expect_sequence"]["order"], "unordered");
    assert_eq!(case["expect_sequence"]["steps"][0]["args"]["query"]["match"], "fuzzy");
    assert_eq!(case["expect_sequence"]["steps"][1], json!({"tool": "get_forecast"}));
    assert_eq!(case["rubric"]["file_text"], "# R\n- [must] A\n- [should] B\n");
    assert_eq!(case["input_responses"][1]["times"], 2);
    let places: Vec<(&str, u64)> = set.cases[0].tools.iter().map(|tool| (tool.field.as_str(), tool.line)).collect();
    assert_eq!(
        places,
        [("cases[0].expect_sequence.steps[0].tool", 10), ("cases[0].expect_sequence.steps[1].tool", 12)]
    );
}

#[test]
fn an_unknown_key_is_named_with_its_position_and_the_nearest_key() {
    let problem = only(&case("    expect_tol: t\n    expect_tool: t\n"));
    assert_eq!(places(std::slice::from_ref(&problem)), [("cases[0].expect_tol".to_owned(), 5, 5)]);
    assert_eq!(problem.message, "unknown key");
    assert!(problem.hint_text().starts_with("did you mean `expect_tool`?"), "{problem:?}");
    assert_eq!(problem.to_string(), "g.yaml:5:5: cases[0].expect_tol: unknown key");

    let problem = only("version: 1\ndefaults: {runz: 3}\ncases: [{id: a, prompt: p, negative: true}]\n");
    assert_eq!((problem.field.as_deref(), problem.position()), (Some("defaults.runz"), Some((2, 12))));
    assert!(problem.hint_text().contains("did you mean `runs`"));

    let problem =
        only(&case("    expect_tool: t\n    expect_args:\n      a: {match: number, value: 1, tolerence: 1}\n"));
    assert_eq!(problem.field.as_deref(), Some("cases[0].expect_args.a.tolerence"));
    assert!(problem.hint_text().contains("did you mean `tolerance`"), "{problem:?}");

    let problem = only("version: 1\ncolour: blue\ncases: [{id: a, prompt: p, negative: true}]\n");
    assert_eq!((problem.field.as_deref(), problem.position()), (Some("colour"), Some((2, 1))));
}

#[test]
fn wrong_types_are_named_with_their_position() {
    let found = problems(&case(
        "    runs: five\n    negative: yes\n    tags: solo\n    prompt_extra: 1\n    expect_tool: [a]\n",
    ));
    let fields: Vec<String> = places(&found).into_iter().map(|(field, _, _)| field).collect();
    assert_eq!(
        fields,
        ["cases[0].runs", "cases[0].negative", "cases[0].tags", "cases[0].prompt_extra", "cases[0].expect_tool"],
        "{found:#?}"
    );
    assert!(found[0].message.contains("expected an integer, found a string"));
    assert!(found[1].message.contains("expected true or false"));
    assert!(found[2].message.contains("expected a list of strings"));
    assert!(found[4].message.contains("expected a string, found a list"));
}

#[test]
fn every_problem_of_a_file_is_reported_at_once_in_file_order() {
    let text = r#"version: 2
defaults:
  runz: 5
rubrics:
  r1:
    criteria:
      - {id: a, text: "x", must: true}
      - {id: a, text: "y", must: false}
cases:
  - id: a
    prompt: "p"
    runs: 3
    pass_threshold: 4
    expect_tool: t
    expect_args:
      x: {match: regex, pattern: "("}
      y: {match: nuber, value: 3}
      d: {match: datetime, value: "next week"}
    rubric: r2
  - id: a
    prompt: "q"
    negative: true
    expect_tool: t
  - id: Bad_Id
    prompt: ""
  - id: b
    prompt: p
    kind: hard
    pass_threshold: 2
    expect_args: {a: 1}
"#;
    let found = problems(text);
    let expected: Vec<(String, u64, u64)> = [
        ("version", 1, 10),
        ("defaults.runz", 3, 3),
        ("rubrics.r1.criteria[1].id", 8, 14),
        ("cases[0].pass_threshold", 13, 21),
        ("cases[0].expect_args.x.pattern", 16, 34),
        ("cases[0].expect_args.y.match", 17, 18),
        ("cases[0].expect_args.d.value", 18, 35),
        ("cases[0].rubric", 19, 13),
        ("cases[1].id", 20, 9),
        ("cases[1].negative", 22, 5),
        ("cases[2].id", 24, 9),
        ("cases[2].prompt", 25, 13),
        ("cases[2]", 24, 5),
        ("cases[3]", 26, 5),
        ("cases[3].pass_threshold", 29, 5),
        ("cases[3].expect_args", 30, 5),
    ]
    .into_iter()
    .map(|(field, line, column)| (field.to_owned(), line, column))
    .collect();
    let mut sorted = expected.clone();
    sorted.sort_by_key(|(_, line, column)| (*line, *column));
    assert_eq!(places(&found), sorted, "{found:#?}");
    let message = |field: &str| {
        found
            .iter()
            .find(|problem| problem.field.as_deref() == Some(field))
            .map(|problem| problem.message.clone())
            .unwrap_or_default()
    };
    assert_eq!(message("version"), "version 2 is not supported");
    assert_eq!(message("cases[0].pass_threshold"), "4 is more than the 3 trials");
    assert!(message("cases[0].expect_args.x.pattern").starts_with("invalid regular expression"));
    assert!(message("cases[0].rubric").contains("unknown rubric `r2`"));
    assert!(found.iter().any(|problem| problem.hint_text().contains("did you mean `r1`")));
    assert!(found.iter().any(|problem| problem.hint_text().contains("did you mean `number`")));
    assert!(message("cases[1].id").contains("duplicate case id `a`"));
    assert!(found.iter().any(|problem| problem.hint_text().contains("the first `a` is at line 10")));
    assert!(message("cases[1].negative").contains("cannot have `expect_tool`"));
    assert!(message("cases[2]").contains("case `#3` expects nothing"));
    assert!(message("cases[3]").contains("case `b` expects nothing"), "only `expect_args`, no `expect_tool`");
    assert!(message("cases[3].pass_threshold").contains("hard case"));
    assert!(message("cases[3].expect_args").contains("needs `expect_tool`"));
}

#[test]
fn rule_violations_of_matchers_sequences_rubrics_and_input_responses() {
    let missing_value = only(&case("    expect_tool: t\n    expect_args:\n      a: {match: exact}\n"));
    assert_eq!(missing_value.field.as_deref(), Some("cases[0].expect_args.a.value"));
    let both =
        only(&case("    expect_tool: t\n    expect_args:\n      a: {match: normalized, value: x, one_of: [x]}\n"));
    assert!(both.message.contains("not both"), "{both:?}");
    let subset = only(&case("    expect_tool: t\n    expect_args:\n      a: {match: subset, value: 3}\n"));
    assert!(subset.message.contains("expected a mapping"));
    let threshold =
        only(&case("    expect_tool: t\n    expect_args:\n      a: {match: fuzzy, value: x, threshold: 2}\n"));
    assert!(threshold.message.contains("out of range"));
    let order = only(&case("    expect_sequence:\n      order: sorted\n      steps: [{tool: a}]\n"));
    assert_eq!(order.field.as_deref(), Some("cases[0].expect_sequence.order"));
    let steps = only(&case("    expect_sequence: {order: strict, steps: []}\n"));
    assert!(steps.message.contains("no step"));
    let step_key = only(&case("    expect_sequence:\n      steps:\n        - {tool: a, argz: {}}\n"));
    assert!(step_key.hint_text().contains("did you mean `args`"), "{step_key:?}");
    let entry = only(&case("    negative: true\n    input_responses:\n      - {respond: {action: accept}}\n"));
    assert!(entry.message.contains("`key` or `match`"));
    let method = only(&case(
        "    negative: true\n    input_responses:\n      - {match: {method: elicitation/creat}, respond: {}}\n",
    ));
    assert!(method.hint_text().contains("did you mean `elicitation/create`"), "{method:?}");
    let min_should = only(
        "version: 1\nrubrics:\n  r:\n    min_should: 1\n    criteria: [{id: a, text: t, must: true}]\ncases: [{id: a, prompt: p, rubric: r}]\n",
    );
    assert_eq!(min_should.field.as_deref(), Some("rubrics.r.min_should"));
    let no_file = only("version: 1\nrubrics:\n  r: {file: nowhere.md}\ncases: [{id: a, prompt: p, negative: true}]\n");
    assert!(no_file.message.contains("cannot read"), "{no_file:?}");
    let sampling = only(&case("    negative: true\n    sampling: {temperature: 1, top_k: 4}\n"));
    assert!(sampling.hint_text().contains("did you mean `top_p`"), "{sampling:?}");
    let sampling = problems(&case("    negative: true\n    sampling: {temperature: 3}\n"));
    assert!(sampling[0].message.contains("out of range"));
    let timezone = only("version: 1\ndefaults: {timezone: Paris time}\ncases: [{id: a, prompt: p, negative: true}]\n");
    assert_eq!(timezone.field.as_deref(), Some("defaults.timezone"));
    let runs = only(&case("    negative: true\n    runs: 51\n"));
    assert!(runs.message.contains("out of range"));
    assert!(only("version: 1\ncases: []\n").message.contains("no case"));
    assert_eq!(only("cases: [{id: a, prompt: p, negative: true}]\n").field.as_deref(), Some("version"));
}

#[test]
fn a_bad_default_is_reported_once_however_many_cases_use_it() {
    let found = problems(
        "version: 1\ndefaults: {kind: hardd, sampling: {temprature: 1}}\ncases:\n  - {id: a, prompt: p, negative: true}\n  - {id: b, prompt: p, negative: true}\n",
    );
    let fields: Vec<String> = places(&found).into_iter().map(|(field, _, _)| field).collect();
    assert_eq!(fields, ["defaults.kind", "defaults.sampling.temprature"], "{found:#?}");

    let set = ok(
        "version: 1\ndefaults: {tools: [nope]}\ncases:\n  - {id: a, prompt: p, negative: true}\n  - {id: b, prompt: p, negative: true}\n",
    );
    let found = unknown_tools(&set, &["yes"]);
    assert_eq!(places(&found), [("defaults.tools[0]".to_owned(), 2, 20)]);
    assert!(found[0].message.starts_with("case `a`:"), "{found:?}");
}

#[test]
fn a_duplicate_key_is_named() {
    let problem = only("version: 1\nversion: 1\ncases: [{id: a, prompt: p, negative: true}]\n");
    assert_eq!(problem.position(), Some((2, 1)));
    assert_eq!(problem.message, "duplicate key `version`");
    assert!(problem.hint_text().contains("appears once"), "{problem:?}");
}

#[test]
fn yaml_errors_and_empty_files_are_problems_with_a_position() {
    let problem = only("version: 1\ncases: [unclosed\n");
    assert!(problem.position().is_some());
    assert!(!problem.message.starts_with("error:"));
    assert!(only("").message.contains("empty"));
}

#[test]
fn the_hash_ignores_key_order_comments_number_spelling_tags_and_crlf() {
    let base = "version: 1\ndefaults: {runs: 5}\ncases:\n  - id: a\n    prompt: p\n    expect_tool: t\n    expect_args: {n: {match: number, value: 1, tolerance: 0.5}}\n    tags: [x]\n";
    let reordered = "# a comment\ncases:\n  - expect_args: {n: {tolerance: 0.5, value: 1.0, match: number}}  # trailing\n    expect_tool: t\n    prompt: [p]\n    id: a\n    tags: [b, c]\n    runs: 5\nversion: 1\n";
    let (one, two) = (ok(base), ok(reordered));
    assert_eq!(one.cases[0].hash, two.cases[0].hash);
    assert_eq!(one.hash, two.hash);
    assert!(one.hash.starts_with("sha256:") && one.hash.len() == 71);

    for changed in [
        base.replace("value: 1,", "value: 2,"),
        base.replace("runs: 5", "runs: 6"),
        base.replace("prompt: p", "prompt: q"),
        base.replace("expect_tool: t", "expect_tool: u"),
        base.replace("match: number, value: 1, tolerance: 0.5", "match: number, value: 1, tolerance: 0.25"),
        base.replace("defaults: {runs: 5}", "defaults: {runs: 5, arg_match: exact}")
            .replace("{match: number, value: 1, tolerance: 0.5}", "1"),
        base.replace("    tags: [x]\n", "    tags: [x]\n    sequential_runs: true\n"),
    ] {
        assert_ne!(ok(&changed).cases[0].hash, one.cases[0].hash, "{changed}");
        assert_ne!(ok(&changed).hash, one.hash, "{changed}");
    }
    // The set hash covers the cases in order.
    let two_cases = format!("{base}  - id: b\n    prompt: p\n    negative: true\n");
    let swapped = "version: 1\ndefaults: {runs: 5}\ncases:\n  - id: b\n    prompt: p\n    negative: true\n  - id: a\n    prompt: p\n    expect_tool: t\n    expect_args: {n: {match: number, value: 1, tolerance: 0.5}}\n";
    let (first, second) = (ok(&two_cases), ok(swapped));
    assert_eq!(first.cases[0].hash, second.cases[1].hash);
    assert_ne!(first.hash, second.hash);
    let hashes: Vec<Value> = first.cases.iter().map(|case| json!(case.hash)).collect();
    assert_eq!(first.hash, crate::jcs::hash(&Value::Array(hashes)));
}

#[test]
fn a_default_and_the_same_value_written_in_the_case_hash_the_same() {
    let with_default = ok("version: 1\ndefaults: {max_turns: 3}\ncases: [{id: a, prompt: p, negative: true}]\n");
    let in_case = ok("version: 1\ncases: [{id: a, prompt: p, negative: true, max_turns: 3}]\n");
    let implicit = ok("version: 1\ncases: [{id: a, prompt: p, negative: true, max_turns: 8}]\n");
    let none = ok("version: 1\ncases: [{id: a, prompt: p, negative: true}]\n");
    assert_eq!(with_default.hash, in_case.hash);
    assert_eq!(implicit.hash, none.hash);
    assert_ne!(with_default.hash, none.hash);
}

#[test]
fn a_rubric_file_with_crlf_line_ends_hashes_like_one_with_lf() {
    let (lf, crlf) = (tempfile::tempdir().expect("dir"), tempfile::tempdir().expect("dir"));
    std::fs::write(lf.path().join("r.md"), "- [must] A\n- [should] B\n").expect("write");
    std::fs::write(crlf.path().join("r.md"), "- [must] A\r\n- [should] B\r\n").expect("write");
    let text = "version: 1\nrubrics:\n  r: {file: r.md}\ncases: [{id: a, prompt: p, rubric: r}]\n";
    let load = |dir: &Path| parse(&dir.join("g.yaml"), text).unwrap_or_else(|problems| panic!("{problems:#?}"));
    let (one, two) = (load(lf.path()), load(crlf.path()));
    assert_eq!(one.hash, two.hash);
    std::fs::write(crlf.path().join("r.md"), "- [must] A\r\n- [should] C\r\n").expect("write");
    assert_ne!(load(crlf.path()).hash, one.hash, "a changed criterion changes the hash");
}

#[test]
fn tool_names_are_checked_against_a_listed_surface_with_the_nearest_name() {
    let set = ok(
        "version: 1\ncases:\n  - id: a\n    prompt: p\n    expect_tool: test_progres\n    tools: [\"test_*\", \"other_*\"]\n    forbid_tools: [test_logging_tool]\n",
    );
    let found = unknown_tools(&set, &["test_progress", "test_logging_tool"]);
    assert_eq!(places(&found), [("cases[0].tools[1]".to_owned(), 6, 23), ("cases[0].expect_tool".to_owned(), 5, 18)]);
    assert_eq!(found[1].message, "case `a`: the server has no tool `test_progres`");
    assert_eq!(found[1].hint_text(), "did you mean `test_progress`? (the nearest tool the server lists)");
    assert!(glob_matches("test_*", "test_x") && glob_matches("a?c", "abc") && !glob_matches("a?c", "ac"));
    assert!(glob_matches("exact", "exact") && !glob_matches("exact", "exactly"));
}

#[test]
fn the_example_set_of_the_repository_is_valid() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("golden/demo.yaml");
    let set = super::load::load(&path).unwrap_or_else(|problems| panic!("{problems:#?}"));
    assert!(set.cases.len() >= 5);
}

#[test]
fn a_time_zone_name_is_checked_against_the_iana_database_with_the_nearest_suggested() {
    let typo = only("version: 1\ndefaults: {timezone: Europe/Pariss}\ncases: [{id: a, prompt: p, negative: true}]\n");
    assert_eq!(typo.field.as_deref(), Some("defaults.timezone"));
    assert!(typo.hint_text().contains("did you mean `Europe/Paris`"), "{typo:?}");
    // Well formed, yet no such zone: the old shape check let it through.
    let unknown = only("version: 1\ndefaults: {timezone: Mars/Olympus}\ncases: [{id: a, prompt: p, negative: true}]\n");
    assert!(unknown.message.contains("not an IANA time zone name"), "{unknown:?}");
}

#[test]
fn today_is_the_date_in_the_sets_time_zone() {
    let now = chrono::DateTime::parse_from_rfc3339("2026-11-30T12:30:00Z").expect("time").to_utc();
    let set = |zone: &str| {
        ok(&format!("version: 1\ndefaults: {{timezone: {zone}}}\ncases: [{{id: a, prompt: p, negative: true}}]\n"))
    };
    let date = |text: &str| chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").expect("date");
    assert_eq!(set("UTC").today_at(now), date("2026-11-30"));
    assert_eq!(set("Pacific/Kiritimati").today_at(now), date("2026-12-01"), "UTC+14: already tomorrow");
    let early = chrono::DateTime::parse_from_rfc3339("2026-11-30T05:00:00Z").expect("time").to_utc();
    assert_eq!(set("America/Los_Angeles").today_at(early), date("2026-11-29"), "UTC-8: still yesterday");
    let unset = ok("version: 1\ncases: [{id: a, prompt: p, negative: true}]\n");
    assert_eq!(unset.timezone(), chrono_tz::UTC);
}

#[test]
fn embedding_and_judge_matchers_are_listed_with_their_position() {
    let text = "version: 1\ndefaults: {arg_match: judge}\ncases:\n  - id: a\n    prompt: p\n    expect_tool: t\n    expect_args:\n      city: {match: embedding, value: Paris}\n      note: a kind greeting\n      n: {match: exact, value: 1}\n    expect_sequence:\n      steps:\n        - tool: t\n          args: {q: {match: judge, value: weather}}\n  - id: b\n    prompt: p\n    expect_tool: t\n    expect_args: {n: {match: exact, value: 1}}\n";
    let set = ok(text);
    let listed: Vec<(&str, u64, u64, &str)> = set.cases[0]
        .semantic
        .iter()
        .map(|matcher| (matcher.mode.as_str(), matcher.line, matcher.column, matcher.field.as_str()))
        .collect();
    assert_eq!(
        listed,
        [
            ("embedding", 8, 13, "cases[0].expect_args.city"),
            ("judge", 9, 13, "cases[0].expect_args.note"),
            ("judge", 14, 21, "cases[0].expect_sequence.steps[0].args.q"),
        ]
    );
    assert!(set.cases[1].semantic.is_empty(), "a case without them lists none");
}

#[test]
fn a_bad_message_pattern_of_an_input_response_says_it_is_searched_not_anchored() {
    let text = "version: 1\ncases:\n  - id: a\n    prompt: p\n    negative: true\n    input_responses:\n      - match: {method: elicitation/create, message: \"(\"}\n        respond: {action: decline}\n";
    let problem = only(text);
    assert!(problem.message.starts_with("invalid regular expression"), "{problem:?}");
    assert!(problem.hint_text().contains("anywhere in the message"), "{problem:?}");
    let anchored = only(&case("    expect_tool: t\n    expect_args:\n      x: {match: regex, pattern: \"(\"}\n"));
    assert!(anchored.hint_text().contains("anchored at both ends"), "{anchored:?}");
}

#[test]
fn a_case_s_trials_are_typed_once_with_the_format_s_defaults() {
    let text = "version: 1\ncases:\n  - id: plain\n    prompt: p\n    expect_tool: t\n  - id: three\n    prompt: p\n    expect_tool: t\n    runs: 3\n  - id: hard\n    prompt: p\n    expect_tool: t\n    kind: hard\n    runs: 4\n  - id: two_of_six\n    prompt: p\n    expect_tool: t\n    runs: 6\n    pass_threshold: 2\n";
    let trials: Vec<super::Trials> = ok(text).cases.iter().map(|case| case.trials).collect();
    let new = super::Trials::new;
    assert_eq!(trials, [new(5, Some(4), false), new(3, Some(3), false), new(4, None, true), new(6, Some(2), false)]);
    assert_eq!((trials[0].runs, trials[0].threshold), (super::DEFAULT_TRIALS, 4), "4 of 5 by default");
    assert_eq!(trials[2].threshold, 4, "a hard case needs every trial");
}

#[test]
fn what_a_trial_does_is_typed_once_with_the_format_s_defaults() {
    let text = "version: 1\ncases:\n  - id: plain\n    prompt: p\n    expect_tool: t\n  - id: set\n    prompt: [a, b]\n    system: s\n    max_turns: 3\n    timeout_ms: 2000\n    tools: [\"t*\"]\n    forbid_tools: [rm]\n    tool_choice: required\n    sampling: {temperature: 0.5}\n    sequential_runs: true\n    negative: true\n";
    let set = ok(text);
    let (plain, given) = (&set.cases[0].run, &set.cases[1].run);
    assert_eq!((plain.max_turns, plain.timeout_ms, plain.sequential), (8, 120_000, false));
    assert_eq!((&plain.visible, plain.forbidden.is_empty()), (&None, true), "every tool, none forbidden");
    assert_eq!((&plain.tool_choice, plain.sampling), (&super::ToolChoice::Auto, super::Sampling::default()));
    assert!(plain.graded_without_judge);
    assert_eq!(
        (given.prompt.as_slice(), given.system.as_deref()),
        (["a".to_owned(), "b".to_owned()].as_slice(), Some("s"))
    );
    assert_eq!((given.max_turns, given.timeout_ms, given.sequential), (3, 2000, true));
    assert_eq!((given.visible.clone(), given.forbidden.clone()), (Some(vec!["t*".to_owned()]), vec!["rm".to_owned()]));
    assert_eq!((&given.tool_choice, given.sampling.temperature), (&super::ToolChoice::Required, Some(0.5)));
    assert!(given.graded_without_judge, "negative: true grades without a judge");
}

#[test]
fn a_rubric_file_without_end_is_a_problem_not_a_hang() {
    let dir = tempfile::tempdir().expect("temp dir");
    let text = "version: 1\nrubrics:\n  endless: {file: /dev/zero, min_should: 0}\ncases:\n  - id: s\n    prompt: p\n    rubric: endless\n";
    let problems = parse(&dir.path().join("g.yaml"), text).expect_err("a problem");
    assert!(problems.iter().any(|problem| problem.message.contains("larger than 1048576 bytes")), "{problems:#?}");
}

#[test]
fn yaml_nested_past_64_levels_is_one_problem_that_names_the_bound() {
    let mut text = String::from("version: 1\ncases:\n");
    for depth in 1..=100 {
        text.push_str(&format!("{}- \n", "  ".repeat(depth)));
    }
    // A test thread's 2 MiB of stack is less than 64 levels take in a debug build; the binary
    // parses with 8 MiB.
    let worker = std::thread::Builder::new().stack_size(8 * 1024 * 1024);
    let problems = worker
        .spawn(move || parse(Path::new("g.yaml"), &text).expect_err("a problem"))
        .expect("a thread")
        .join()
        .expect("no panic");
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(problems[0].message.contains("nested deeper than 64 levels"), "{problems:#?}");
}

#[test]
fn negative_yes_is_one_problem_naming_the_field_and_the_fix() {
    let problem = only("version: 1\ncases:\n  - id: thanks\n    prompt: \"Thanks!\"\n    negative: yes\n");
    assert_eq!((problem.field.as_deref(), problem.position()), (Some("cases[0].negative"), Some((5, 15))));
    assert!(problem.message.contains("expected true or false, found the string `yes`"), "{problem:?}");
    assert_eq!(problem.hint_text(), "write `negative: true` (YAML 1.2 reads `yes`, `no`, `on` and `off` as strings)");
    let problem = only("version: 1\ncases:\n  - {id: a, prompt: p, expect_tool: t, negative: off}\n");
    assert!(problem.hint_text().starts_with("write `negative: false`"), "{problem:?}");
}

#[test]
fn the_tool_names_of_a_set_with_problems_are_kept_for_the_same_pass() {
    let text = "version: 1\ncases:\n  - id: a\n    prompt: p\n    expect_tool: get_tme\n    runs: five\n  - id: b\n    prompt: p\n    expect_sequence: {steps: [{tool: get_time}, {tool: set_alarn}]}\n";
    let (problems, named) = match super::load::parse_naming(Path::new("g.yaml"), text) {
        Ok(set) => panic!("expected problems, got {set:#?}"),
        Err(failed) => failed,
    };
    assert_eq!(places(&problems), [("cases[0].runs".to_owned(), 6, 11)]);
    let unknown = super::unknown_names(Path::new("g.yaml"), &named, &["get_time", "set_alarm"]);
    assert_eq!(
        places(&unknown),
        [("cases[0].expect_tool".to_owned(), 5, 18), ("cases[1].expect_sequence.steps[1].tool".to_owned(), 9, 56)]
    );
    assert_eq!(unknown[0].message, "case `a`: the server has no tool `get_tme`");
    assert_eq!(unknown[0].hint_text(), "did you mean `get_time`? (the nearest tool the server lists)");
}

#[test]
fn a_bad_order_does_not_hide_the_unknown_tool_and_the_bad_regex_of_its_sequence() {
    let text = "version: 1\ncases:\n  - id: seq\n    prompt: x\n    expect_sequence:\n      order: strickt\n      steps:\n        - tool: add_todoo\n          args: {text: {match: regex, pattern: '(['}}\n";
    let (problems, named) = match super::load::parse_naming(Path::new("g.yaml"), text) {
        Ok(set) => panic!("expected problems, got {set:#?}"),
        Err(failed) => failed,
    };
    assert_eq!(
        places(&problems),
        [
            ("cases[0].expect_sequence.order".to_owned(), 6, 14),
            ("cases[0].expect_sequence.steps[0].args.text.pattern".to_owned(), 9, 48),
        ]
    );
    assert!(problems[1].message.starts_with("invalid regular expression"), "{problems:#?}");
    let unknown = super::unknown_names(Path::new("g.yaml"), &named, &["add_todo"]);
    assert_eq!(places(&unknown), [("cases[0].expect_sequence.steps[0].tool".to_owned(), 8, 17)]);
}

#[test]
fn a_step_without_a_usable_tool_still_has_its_arguments_checked() {
    for tool in ["", "          tool: 3\n"] {
        let text = format!(
            "version: 1\ncases:\n  - id: seq\n    prompt: x\n    expect_sequence:\n      steps:\n        - args: {{text: {{match: regex, pattern: '(['}}}}\n{tool}"
        );
        let found = places(&problems(&text));
        assert!(
            found.contains(&("cases[0].expect_sequence.steps[0].args.text.pattern".to_owned(), 7, 48)),
            "{found:#?}"
        );
        assert_eq!(found.len(), 2, "{found:#?}");
    }
}

#[test]
fn a_rubric_with_bad_criteria_still_has_its_min_should_checked() {
    let text = "version: 1\nrubrics:\n  r:\n    criteria: nope\n    min_should: -1\ncases:\n  - id: s\n    prompt: p\n    rubric: r\n";
    assert_eq!(
        places(&problems(text)),
        [("rubrics.r.criteria".to_owned(), 4, 15), ("rubrics.r.min_should".to_owned(), 5, 17)]
    );
}

#[test]
fn a_bad_expect_tool_is_one_problem_and_its_position_is_still_checked() {
    let text = case(
        "    expect_tool: 3\n    expect_tool_position: frist\n    expect_args: {text: {match: regex, pattern: '(['}}\n",
    );
    assert_eq!(
        places(&problems(&text)),
        [
            ("cases[0].expect_tool".to_owned(), 5, 18),
            ("cases[0].expect_tool_position".to_owned(), 6, 27),
            ("cases[0].expect_args.text.pattern".to_owned(), 7, 49),
        ]
    );
}
