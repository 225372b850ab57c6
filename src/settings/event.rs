//! The workflow event's part in the Action's settings: the event payload (read once, here), the
//! context that decides whether a run may store the layer-1 baseline ([`StoreContext`]), and the
//! schedule split of the models (`full-matrix-schedule`). [`super::resolve`] applies them, so the
//! [`super::Settings`] the Action gets are final.

use serde_json::Value;

use super::layer1::{Layer1Settings, ModelRef, StoreContext};
use super::{ActionSettings, GithubContext, normalise_cron};

/// The event payload (`GITHUB_EVENT_PATH`), or `null` with what kept it from being read (the
/// Action warns with it).
pub(super) fn read_payload(github: &GithubContext) -> (Value, Option<String>) {
    let Some(path) = &github.event_path else { return (Value::Null, None) };
    match std::fs::read_to_string(path)
        .map_err(|error| error.to_string())
        .and_then(|text| serde_json::from_str::<Value>(&text).map_err(|error| format!("not JSON: {error}")))
    {
        Ok(payload) => (payload, None),
        Err(problem) => (Value::Null, Some(format!("cannot read the event payload {}: {problem}", path.display()))),
    }
}

/// What the event decides of layer 1's settings in the Action: the store context (the event,
/// and whether the run is on the repository's default branch; scheduled runs always are) and
/// the schedule split ([`models`]: the models kept, and the note that says why).
pub(super) fn apply(layer1: &mut Layer1Settings, action: &ActionSettings) {
    let payload = &action.payload;
    let event = action.github.event_name.clone();
    let default_branch = payload.pointer("/repository/default_branch").and_then(Value::as_str);
    let on_default_branch = event == "schedule"
        || default_branch
            .zip(
                action
                    .github
                    .reference
                    .clone()
                    .or_else(|| payload.get("ref").and_then(Value::as_str).map(str::to_owned)),
            )
            .is_some_and(|(branch, reference)| reference == format!("refs/heads/{branch}"));
    layer1.store_context = Some(StoreContext { event, on_default_branch });
    let labels: Vec<String> = layer1.models.iter().map(ModelRef::label).collect();
    let choice = models(&action.github.event_name, payload, action.full_matrix_schedule.as_deref(), &labels);
    if choice.primary_only {
        layer1.models.truncate(1);
    }
    if let Some(reason) = choice.reason {
        layer1.models_note = Some(reason);
    }
}

/// Which of `models` models a run evaluates.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ModelChoice {
    /// Only the first model (the primary) runs.
    primary_only: bool,
    /// Why, in one sentence; `None` when the split does not apply (no `full-matrix-schedule`,
    /// not a `schedule` event, or at most one model).
    reason: Option<String>,
}

/// The schedule split: with `full_matrix` (a normalised cron string) set, a `schedule` event
/// whose `schedule` (the payload's cron) equals it runs every model, any other `schedule`
/// event only the first; every other event, and a run without the setting, runs every model.
fn models(event_name: &str, payload: &Value, full_matrix: Option<&str>, models: &[String]) -> ModelChoice {
    let every = ModelChoice { primary_only: false, reason: None };
    let Some(full_matrix) = full_matrix else { return every };
    if event_name != "schedule" || models.len() < 2 {
        return every;
    }
    let cron = payload.get("schedule").and_then(Value::as_str).map(normalise_cron);
    if cron.as_deref() == Some(full_matrix) {
        return ModelChoice {
            primary_only: false,
            reason: Some(format!(
                "the schedule `{full_matrix}` is the full-matrix schedule: every model runs ({})",
                models.join(", ")
            )),
        };
    }
    let this = cron.map_or_else(|| "(unknown cron)".to_owned(), |cron| format!("`{cron}`"));
    ModelChoice {
        primary_only: true,
        reason: Some(format!(
            "the schedule {this} is not the full-matrix schedule `{full_matrix}`: only the primary model `{}` runs; the other {} model(s) run on `{full_matrix}`",
            models[0],
            models.len() - 1
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_full_matrix_schedule_runs_every_model_and_other_schedules_the_primary_only() {
        let models: Vec<String> = vec!["openai:a".into(), "anthropic:b".into()];
        let weekly = Some("0 3 * * 0");
        let on = |event: &str, payload: Value, full: Option<&str>| super::models(event, &payload, full, &models);
        let full = on("schedule", json!({"schedule": "0  3 * * 0"}), weekly);
        assert!(!full.primary_only && full.reason.as_deref().is_some_and(|why| why.contains("every model")));
        let nightly = on("schedule", json!({"schedule": "0 2 * * *"}), weekly);
        assert!(nightly.primary_only, "{nightly:?}");
        let why = nightly.reason.unwrap_or_default();
        assert!(why.contains("`openai:a`") && why.contains("`0 2 * * *`") && why.contains("`0 3 * * 0`"), "{why}");
        assert!(on("schedule", json!({}), weekly).primary_only, "a schedule without its cron is not the full one");
        for event in ["pull_request", "push", "workflow_dispatch"] {
            assert_eq!(on(event, json!({}), weekly), ModelChoice { primary_only: false, reason: None }, "{event}");
        }
        assert!(!on("schedule", json!({"schedule": "0 2 * * *"}), None).primary_only, "no split without the input");
        let one = super::models("schedule", &json!({"schedule": "1 1 * * *"}), weekly, &models[..1]);
        assert!(!one.primary_only && one.reason.is_none());
    }
}
