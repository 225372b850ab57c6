//! A golden case as the agent loop reads it: the loader's typed fields ([`crate::golden::CaseRun`]:
//! prompt turns, system text, limits, the tools the model may see, tool choice, sampling), its
//! scripted input answers, and why a case cannot run as configured (a case only a rubric grades,
//! run without a judge model).

use std::time::Duration;

use crate::golden::{Case, CaseRun, glob_matches};
use crate::providers::Sampling;

/// What the agent loop needs of one case.
#[derive(Debug, Clone)]
pub(crate) struct CaseSpec {
    /// The case id.
    pub id: String,
    /// What each trial does, as the loader typed it, but `sampling` with temperature 0 when the
    /// set gives none (the usual advice for evals; a model that refuses it gets it dropped, see
    /// `crate::trials::caller`). `tool_choice` holds on the first model turn only (later turns
    /// are `auto`, so the model can answer); a forbidden tool's call gets an error result.
    pub run: CaseRun,
    /// Wall time per trial.
    pub timeout: Duration,
    /// The answers to the server's input requests (`input_responses`), when the case has them.
    pub inputs: Option<super::input::InputScript>,
    /// Why this version cannot run the case, when it cannot (it is then `skipped`).
    pub deferred: Option<String>,
}

/// Temperature 0 unless the set says otherwise.
fn with_default_temperature(sampling: Sampling) -> Sampling {
    Sampling { temperature: sampling.temperature.or(Some(0.0)), ..sampling }
}

impl CaseSpec {
    /// The loop's view of `case` (typed by the loader), with temperature 0 unless the set
    /// gives one, and its scripted input answers.
    pub(crate) fn from_case(case: &Case) -> Self {
        let run = &case.run;
        let deferred = (!run.graded_without_judge)
            .then(|| "only a rubric grades this case, and no judge model was given (--judge-model)".to_owned());
        CaseSpec {
            id: case.id.clone(),
            run: CaseRun { sampling: with_default_temperature(run.sampling), ..run.clone() },
            timeout: Duration::from_millis(run.timeout_ms),
            inputs: case.inputs.clone(),
            deferred,
        }
    }

    /// True when the model may see the tool called `name`.
    pub(crate) fn sees(&self, name: &str) -> bool {
        self.run.visible.as_ref().is_none_or(|globs| globs.iter().any(|glob| glob_matches(glob, name)))
    }

    /// True when `name` is one of the case's forbidden tools.
    pub(crate) fn forbids(&self, name: &str) -> bool {
        self.run.forbidden.iter().any(|glob| glob_matches(glob, name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::ToolChoice;

    fn spec(yaml: &str) -> CaseSpec {
        let set = crate::golden::load::parse(std::path::Path::new("set.yaml"), yaml).expect("a valid set");
        CaseSpec::from_case(&set.cases[0])
    }

    #[test]
    fn a_case_reads_its_turns_limits_and_tools() {
        let case = spec(
            "version: 1\ndefaults: {runs: 3, max_turns: 4, sampling: {temperature: 0}}\ncases:\n  - id: a\n    prompt: [\"hi\", \"now echo\"]\n    system: be brief\n    tools: [\"echo*\"]\n    tool_choice: required\n    timeout_ms: 2000\n    expect_tool: echo\n",
        );
        assert_eq!(case.run.prompt, vec!["hi".to_owned(), "now echo".to_owned()]);
        assert_eq!(case.run.system.as_deref(), Some("be brief"));
        assert_eq!((case.run.max_turns, case.timeout), (4, Duration::from_secs(2)));
        assert_eq!(case.run.tool_choice, ToolChoice::Required);
        assert_eq!(case.run.sampling.temperature, Some(0.0));
        assert!(case.sees("echo_upper") && !case.sees("delete"));
        assert_eq!(case.deferred, None);
        let plain = spec("version: 1\ncases:\n  - id: a\n    prompt: hi\n    expect_tool: t\n");
        assert_eq!(plain.run.sampling.temperature, Some(0.0), "temperature 0 unless the set says otherwise");
    }

    #[test]
    fn a_rubric_only_case_is_deferred_with_a_reason_and_a_scripted_input_case_is_not() {
        let rubric = spec(
            "version: 1\nrubrics:\n  r:\n    criteria: [{id: a, text: ok, must: true}]\ncases:\n  - id: a\n    prompt: hi\n    rubric: r\n",
        );
        assert!(rubric.deferred.as_deref().is_some_and(|reason| reason.contains("judge")), "{rubric:?}");
        let scripted = spec(
            "version: 1\ncases:\n  - id: a\n    prompt: hi\n    expect_tool: t\n    input_responses:\n      - key: k\n        respond: {action: accept}\n",
        );
        assert_eq!(scripted.deferred, None);
        assert!(scripted.inputs.is_some());
    }
}
