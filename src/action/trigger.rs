//! The trigger logic: which layers a run asks for, decided from the workflow event, its payload,
//! the `layers` input and the eval label. A pure function of its inputs (no IO), so the table in
//! the tests is the specification.
//!
//! It decides what is *requested*; which layers actually run is the caller's business (this
//! version has layers 0 and 1; layer 1 also needs a golden set and a model).

use serde_json::Value;

#[cfg(test)]
use crate::settings::LayersError;
pub(crate) use crate::settings::{ALL_LAYERS, LayersInput, parse_layers};

/// What the trigger logic decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Decision {
    /// The layers requested, sorted, without duplicates.
    pub layers: Vec<u8>,
    /// Why, in one sentence (printed and reported).
    pub reason: String,
}

/// Decides the layers requested for a run.
///
/// With an explicit `layers` input, that list wins for every event. With `auto`: `push` → 0;
/// `schedule` → 0–3; a pull request event that adds the eval label, or whose pull request
/// carries it → 0–3; any other pull request event → 0; `workflow_dispatch` → the dispatch's
/// `layers` input when it has one, else 0–3 (someone asked for a run by hand); any other event → 0.
pub(crate) fn decide(event_name: &str, payload: &Value, layers: &LayersInput, eval_label: &str) -> Decision {
    if let LayersInput::Explicit(list) = layers {
        return Decision { layers: list.clone(), reason: format!("the `layers` setting asks for {}", join(list)) };
    }
    let full = |reason: String| Decision { layers: ALL_LAYERS.to_vec(), reason };
    let base = |reason: String| Decision { layers: vec![0], reason };
    match event_name {
        "push" => base("a push runs layer 0".into()),
        "schedule" => full("a scheduled run runs every layer".into()),
        "pull_request" | "pull_request_target" => {
            let action = payload.get("action").and_then(Value::as_str).unwrap_or("");
            let added = payload.pointer("/label/name").and_then(Value::as_str);
            if action == "labeled" && added == Some(eval_label) {
                return full(format!("the pull request was just labelled `{eval_label}`"));
            }
            let carries = payload.pointer("/pull_request/labels").and_then(Value::as_array).is_some_and(|labels| {
                labels.iter().any(|label| label.get("name").and_then(Value::as_str) == Some(eval_label))
            });
            if carries {
                return full(format!("the pull request carries the label `{eval_label}`"));
            }
            let action = if action.is_empty() { "event" } else { action };
            base(format!(
                "pull request {action} without the label `{eval_label}` runs layer 0 (add the label for every layer)"
            ))
        }
        "workflow_dispatch" => {
            let dispatched = payload.pointer("/inputs/layers").and_then(Value::as_str).map(parse_layers);
            match dispatched {
                Some(Ok(LayersInput::Explicit(list))) => Decision {
                    reason: format!("the workflow_dispatch input `layers` asks for {}", join(&list)),
                    layers: list,
                },
                _ => full("a manual (workflow_dispatch) run with `layers: auto` runs every layer".into()),
            }
        }
        "" => base("a local run without a workflow event runs layer 0".into()),
        other => base(format!("event `{other}` runs layer 0")),
    }
}

/// `0,1,2,3`: the form of the `layers-requested` and `layers-run` outputs.
pub(crate) fn join(layers: &[u8]) -> String {
    layers.iter().map(u8::to_string).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(event: &str, payload: Value, layers: &str, expected: &[u8], reason_part: &str) {
        let input = parse_layers(layers).expect("valid layers");
        let decision = decide(event, &payload, &input, "run-evals");
        assert_eq!(decision.layers, expected, "{event} {payload}");
        assert!(decision.reason.contains(reason_part), "{}", decision.reason);
    }

    fn pr(action: &str, label: Option<&str>, labels: &[&str]) -> Value {
        let labels: Vec<Value> = labels.iter().map(|name| json!({"name": name})).collect();
        let mut payload = json!({"action": action, "number": 7, "pull_request": {"number": 7, "labels": labels}});
        if let Some(label) = label {
            payload["label"] = json!({"name": label});
        }
        payload
    }

    #[test]
    fn auto_follows_the_event() {
        check("push", json!({}), "auto", &[0], "push");
        check("schedule", json!({}), "", &[0, 1, 2, 3], "scheduled");
        check("pull_request", pr("opened", None, &[]), "auto", &[0], "opened");
        check("pull_request", pr("synchronize", None, &["bug"]), "auto", &[0], "synchronize");
        check("pull_request", pr("labeled", Some("run-evals"), &["run-evals"]), "auto", &[0, 1, 2, 3], "just labelled");
        check("pull_request", pr("labeled", Some("docs"), &["docs"]), "auto", &[0], "labeled without");
        check("pull_request", pr("unlabeled", Some("run-evals"), &[]), "auto", &[0], "unlabeled");
        check("pull_request", pr("synchronize", None, &["run-evals"]), "auto", &[0, 1, 2, 3], "carries");
        check("pull_request", pr("unlabeled", Some("docs"), &["run-evals"]), "auto", &[0, 1, 2, 3], "carries");
        check("workflow_dispatch", json!({"inputs": {}}), "auto", &[0, 1, 2, 3], "manual");
        check("workflow_dispatch", json!({"inputs": {"layers": "0,2"}}), "auto", &[0, 2], "workflow_dispatch input");
        check("merge_group", json!({}), "auto", &[0], "merge_group");
        check("", json!({}), "auto", &[0], "local");
    }

    /// The event payload fixtures in `tests/fixtures/events/`, each with the event name the
    /// runner would set and the layers `auto` must choose.
    #[test]
    fn event_fixtures_choose_their_layers() {
        let table: [(&str, &str, &[u8]); 10] = [
            ("push.json", "push", &[0]),
            ("schedule.json", "schedule", &[0, 1, 2, 3]),
            ("workflow_dispatch.json", "workflow_dispatch", &[0, 1, 2, 3]),
            ("workflow_dispatch_layers.json", "workflow_dispatch", &[0, 2]),
            ("pull_request_opened.json", "pull_request", &[0]),
            ("pull_request_synchronize.json", "pull_request", &[0]),
            ("pull_request_labeled_eval.json", "pull_request", &[0, 1, 2, 3]),
            ("pull_request_labeled_other.json", "pull_request", &[0]),
            ("pull_request_unlabeled.json", "pull_request", &[0]),
            ("pull_request_synchronize_carrying_label.json", "pull_request", &[0, 1, 2, 3]),
        ];
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/events");
        let mut n_fixtures = 0;
        for entry in std::fs::read_dir(&dir).expect("fixture dir") {
            let name = entry.expect("entry").file_name().to_string_lossy().into_owned();
            assert!(table.iter().any(|(file, _, _)| *file == name), "fixture {name} has no row in the table");
            n_fixtures += 1;
        }
        assert_eq!(n_fixtures, table.len());
        for (file, event, expected) in table {
            let text = std::fs::read_to_string(dir.join(file)).expect("fixture");
            let payload: Value = serde_json::from_str(&text).expect("fixture is JSON");
            let decision = decide(event, &payload, &LayersInput::Auto, "run-evals");
            assert_eq!(decision.layers, expected, "{file}: {}", decision.reason);
            assert!(!decision.reason.is_empty());
        }
    }

    #[test]
    fn an_explicit_input_wins() {
        check("push", json!({}), "0,1", &[0, 1], "`layers` setting");
        check("schedule", json!({}), "0", &[0], "`layers` setting");
        check("workflow_dispatch", json!({"inputs": {"layers": "3"}}), "1-2", &[1, 2], "`layers` setting");
        check("push", json!({}), "all", &[0, 1, 2, 3], "`layers` setting");
    }

    #[test]
    fn layer_lists_parse_and_bad_ones_say_why() {
        assert_eq!(parse_layers("3, 1,1"), Ok(LayersInput::Explicit(vec![1, 3])));
        assert_eq!(parse_layers(" AUTO "), Ok(LayersInput::Auto));
        assert_eq!(parse_layers("4"), Err(LayersError::NotALayer("4".into())));
        assert_eq!(parse_layers("2-1").expect_err("invalid").to_string(), "`2-1` is an empty range");
        assert_eq!(parse_layers(","), Err(LayersError::Empty));
    }
}
