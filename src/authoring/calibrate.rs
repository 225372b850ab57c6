//! `mcp-eval judge calibrate LABELS.yaml`: re-judges hand-labelled runs ([`labels`]) with
//! `--judge-model`, counts how often the judge agrees with the human, and writes the calibration
//! file that [`crate::calibration`] defines and later runs read.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::labels;
use crate::agent::{ModelCaller, ModelFailure, TurnKey};
use crate::calibration::{CALIBRATION_FORMAT, CalibrationFile, Confusion, judge_identity, rubrics_hash};
use crate::error::{Kind, UserError};
use crate::golden::GoldenSet;
use crate::report::evals::EvalsSection;
use crate::scoring::judge::{self, CriterionVerdict, Rubric};
use crate::trials::caller::{Budget, LiveModel, RetryPolicy};
use crate::verdict::{ExitStatus, Met};

/// `mcp-eval judge calibrate` as the command line gives it.
#[derive(Debug, Clone)]
pub(crate) struct CalibrateRequest {
    /// The labels file.
    pub labels: PathBuf,
    /// `--golden-set`, overriding the file's `golden_set:`.
    pub golden_set: Option<PathBuf>,
    /// Where to write the calibration file.
    pub out: PathBuf,
    /// The settings flags it shares with `run` (`--judge-model`, `--judge-samples`,
    /// `--cassettes`, `--record`, `--config`, `--max-model-calls`).
    pub flags: crate::settings::SettingsArgs,
    /// Replaces the default retry policy (tests).
    pub retry: RetryPolicy,
}

/// `mcp-eval judge calibrate`: prints TPR, TNR and n on stdout and writes the calibration file;
/// every problem on stderr. Exit 2 for bad input (the labels, the golden set, the report, the
/// flags), 5 when the judge could not judge some labelled run (the file is still written when
/// both rates could be measured), 6 when the call cap stopped it, 4 when the file cannot be
/// written; when several apply, the exit table's order decides ([`Met`]: 5 over 6, as for `run`).
pub(crate) async fn calibrate(request: CalibrateRequest, out: &mut dyn std::io::Write) -> ExitStatus {
    let (Ok(errors) | Err(errors)) = calibrate_inner(&request, out).await;
    let mut met = Met::nothing();
    for error in errors {
        let _ = writeln!(std::io::stderr(), "{error}");
        met.add(error.kind);
    }
    met.exit_status()
}

/// Calibrates; `Ok` with the labelled runs the judge could not judge (the file was still
/// written), `Err` with why nothing was written. Each error's kind is what the exit table reads.
async fn calibrate_inner(
    request: &CalibrateRequest,
    out: &mut dyn std::io::Write,
) -> Result<Vec<UserError>, Vec<UserError>> {
    let into_errors = |problems: Vec<crate::golden::Problem>| -> Vec<UserError> {
        problems.into_iter().map(crate::golden::Problem::into_error).collect()
    };
    let file = labels::load(&request.labels).map_err(into_errors)?;
    let set_path = request.golden_set.clone().or_else(|| file.golden_set.clone()).ok_or_else(|| {
        vec![
            UserError::new(Kind::InvalidInput, format!("{}: no golden set is named", request.labels.display()))
                .with_hint("add `golden_set: FILE` to the labels file (relative to it), or give --golden-set FILE"),
        ]
    })?;
    let set = crate::golden::load::load(&set_path).map_err(into_errors)?;
    let report = read_report(&file.report)?;
    let rubrics: Vec<Option<Rubric>> = set.cases.iter().map(|case| case.rubric.clone()).collect();
    let resolved = labels::resolve(&file, &set, &rubrics, &report).map_err(into_errors)?;
    let (human_pass, human_fail) = resolved
        .iter()
        .fold((0, 0), |(pass, fail), item| if item.label.human { (pass + 1, fail) } else { (pass, fail + 1) });
    if human_pass == 0 || human_fail == 0 {
        return Err(vec![UserError::new(
            Kind::InvalidInput,
            format!(
                "{}: the labels have {human_pass} human pass(es) and {human_fail} human fail(s): TPR and TNR need both",
                request.labels.display()
            ),
        )
        .with_hint("label trials the rubric should pass and trials it should fail (about as many of each)")]);
    }

    // The judge reads the trace as the report kept it: runs whose tool results were not kept
    // (`--trace-results none`) would be judged blind.
    let labelled_runs: BTreeMap<(usize, &str, usize), &crate::report::evals::TrialTrace> = resolved
        .iter()
        .map(|item| ((item.case_index, item.label.model.as_str(), item.label.run), item.trace))
        .collect();
    let blind = labelled_runs.values().filter(|trace| labels::results_not_kept(trace)).count();
    if blind > 0 && blind == labelled_runs.len() {
        return Err(vec![UserError::new(
            Kind::InvalidInput,
            format!(
                "{}: the tool results of the labelled trials are not in the report (written with --trace-results none): the judge would grade them blind",
                file.report.display()
            ),
        )
        .with_hint("label the trials of a report written with --trace-results full")]);
    }
    if blind > 0 {
        let _ = writeln!(
            out,
            "warning: {blind} of {} labelled trial(s) have tool results the report did not keep: the judge grades them without",
            labelled_runs.len()
        );
    }

    // The judge, through the same settings as `run` (no server: a config file's is not used).
    let settings_request = crate::settings::Request {
        flags: request.flags.clone(),
        action: crate::settings::ActionFlags::default(),
        demo: false,
        merging: false,
    };
    let lookup = |name: &str| std::env::var(name).ok();
    let layer1 = &crate::settings::resolve_layer1(&settings_request, &lookup)
        .map_err(|problems| problems.into_iter().map(|problem| problem.into_error()).collect::<Vec<_>>())?;
    let Some(judge_model) = layer1.judge_model.clone() else {
        return Err(vec![
            UserError::new(Kind::InvalidInput, "no judge model was given")
                .with_hint("give --judge-model PROVIDER:MODEL, the judge your runs use"),
        ]);
    };
    let judge_label = judge_model.label();
    let cassettes = layer1.open_cassettes().map_err(|error| vec![error])?;
    let def = layer1.provider(&judge_model).ok_or_else(|| {
        vec![UserError::new(Kind::InvalidInput, format!("no provider `{}` is defined", judge_model.provider))]
    })?;
    let source = match layer1.model_source(def, &judge_model, cassettes.as_ref()) {
        Ok(Some(source)) => source,
        Ok(None) => {
            return Err(vec![
                UserError::new(
                    Kind::InvalidInput,
                    format!(
                        "the judge {judge_label} needs an API key: `{}` is unset or empty",
                        def.api_key_env.clone().unwrap_or_default()
                    ),
                )
                .with_hint("set the key, or replay recorded judge answers with --cassettes DIR"),
            ]);
        }
        Err(error) => {
            return Err(vec![UserError::new(Kind::Provider, format!("cannot use the judge {judge_label}: {error}"))]);
        }
    };
    let budget = Arc::new(Budget::new(layer1.max_model_calls));
    let caller = LiveModel::new(judge_label.clone(), source, budget.clone(), request.retry);
    let samples = layer1.judge_samples.max(1);

    // One judge request per labelled run; every label of the run compares with its verdicts.
    let mut runs: BTreeMap<(usize, &str, usize), Vec<&labels::Resolved<'_>>> = BTreeMap::new();
    for item in &resolved {
        runs.entry((item.case_index, item.label.model.as_str(), item.label.run)).or_default().push(item);
    }
    let mut confusion = Confusion::default();
    let mut disagreements = Vec::new();
    let mut failures = Vec::new();
    let mut cap_reached = false;
    for ((case_index, model, run), items) in &runs {
        let case = &set.cases[*case_index];
        let Some(rubric) = rubrics[*case_index].as_ref() else { continue };
        let trace_text = labels::judge_text(items[0].trace);
        let judge_request = judge::judge_request(&case.run.prompt.join("\n"), rubric, &trace_text);
        let mut judged = Vec::new();
        let mut failure = None;
        for sample in 0..samples {
            let key = TurnKey {
                case: format!("calibrate:{}:{model}", case.id),
                trial: u32::try_from(*run).unwrap_or(u32::MAX),
                turn: u32::try_from(sample).unwrap_or(u32::MAX),
            };
            match ModelCaller::call(&caller, key, &judge_request).await {
                Ok(reply) => match judge::parse_verdicts(&reply.completion, rubric, &trace_text) {
                    Ok(verdicts) => judged.push(verdicts),
                    Err(reason) => failure = Some((Kind::Provider, reason.to_string())),
                },
                Err(ModelFailure::Provider { error, .. }) => {
                    failure = Some((Kind::Provider, format!("the judge model failed: {error}")));
                }
                Err(ModelFailure::CapReached) => {
                    cap_reached = true;
                    failure = Some((Kind::Budget, "the model-call cap was reached".into()));
                }
                Err(ModelFailure::NoRecording(reason)) => failure = Some((Kind::Provider, reason)),
            }
            if failure.is_some() {
                break;
            }
        }
        let voted = if failure.is_none() { judge::majority(&judged) } else { Vec::new() };
        if let Some((kind, reason)) = failure {
            failures.push(UserError::new(
                kind,
                format!("the judge could not judge {} trial {run} on {model}: {reason}", case.id),
            ));
        }
        for item in items {
            let verdict = voted.iter().find(|judged| judged.id == item.label.criterion);
            confusion.add(item.label.human, verdict.map(|judged| judged.verdict));
            if let Some(judged) =
                verdict.filter(|judged| (judged.verdict == CriterionVerdict::Pass) != item.label.human)
            {
                disagreements.push(format!(
                    "{} trial {run} on {model}, `{}`: human {}, judge {} ({})",
                    case.id,
                    item.label.criterion,
                    if item.label.human { "pass" } else { "fail" },
                    match judged.verdict {
                        CriterionVerdict::Pass => "pass",
                        CriterionVerdict::Fail => "fail",
                        CriterionVerdict::Unknown => "unknown",
                    },
                    crate::text::clip(&judged.reason, 120)
                ));
            }
        }
    }
    if let Some(cassettes) = cassettes.as_ref().filter(|_| layer1.record) {
        match cassettes.save() {
            Ok(paths) => {
                for path in paths {
                    let _ = writeln!(std::io::stderr(), "recorded {}", path.display());
                }
            }
            Err(error) => {
                failures.push(UserError::new(Kind::Environment, "the cassettes could not be written").caused_by(error));
                return Err(failures);
            }
        }
    }

    let _ = write!(out, "{}", render(&file, &set, &judge_label, samples, &confusion, resolved.len(), runs.len()));
    for line in disagreements.iter().take(20) {
        let _ = writeln!(out, "  disagree: {line}");
    }
    if disagreements.len() > 20 {
        let _ = writeln!(out, "  …and {} more disagreements", disagreements.len() - 20);
    }
    let Some((tpr, tnr)) = confusion.rates() else {
        // The cap, or a judge that could not judge (failed, or judged every such run unknown).
        failures.push(
            UserError::new(
                if cap_reached { Kind::Budget } else { Kind::Provider },
                "no calibration written: the judge judged no trial of a human pass, or none of a human fail",
            )
            .with_hint_opt(cap_reached.then(|| "raise --max-model-calls".to_owned())),
        );
        return Err(failures);
    };
    let calibration = CalibrationFile {
        format: CALIBRATION_FORMAT,
        judge_model: judge_identity(&judge_label).to_owned(),
        judge_prompt_version: judge::JUDGE_PROMPT_VERSION,
        judge_samples: samples,
        golden_set_sha256: set.hash.clone(),
        rubrics_sha256: rubrics_hash(&set, &rubrics, resolved.iter().map(|item| item.case_index)),
        rubric_cases: {
            let indices: std::collections::BTreeSet<usize> = resolved.iter().map(|item| item.case_index).collect();
            indices
                .into_iter()
                .filter(|&index| rubrics[index].is_some())
                .map(|index| set.cases[index].id.clone())
                .collect()
        },
        labels: request.labels.display().to_string(),
        tpr,
        tnr,
        positives: confusion.positives(),
        negatives: confusion.negatives(),
        true_positives: confusion.true_positives,
        true_negatives: confusion.true_negatives,
        unknown: confusion.unknown,
        errors: confusion.errors,
        measured_at: chrono::Utc::now().date_naive().to_string(),
    };
    let text = serde_json::to_string_pretty(&calibration).unwrap_or_default() + "\n";
    if let Err(error) = crate::atomic::write_atomic(&request.out, &text) {
        return Err(vec![
            UserError::new(Kind::Environment, format!("cannot write the calibration file `{}`", request.out.display()))
                .caused_by(error),
        ]);
    }
    let _ = writeln!(out, "wrote {}", request.out.display());
    Ok(failures)
}

/// The printed result: the judge, TPR, TNR, n and how unknowns and errors were counted.
fn render(
    file: &labels::LabelsFile,
    set: &GoldenSet,
    judge: &str,
    samples: usize,
    confusion: &Confusion,
    labels: usize,
    runs: usize,
) -> String {
    let rate = |k: usize, n: usize| if n == 0 { "—".to_owned() } else { format!("{:.3}", k as f64 / n as f64) };
    let mut text = format!(
        "judge {judge} (prompt v{}, {samples} sample(s) per trial): {labels} label(s) on {runs} trial(s) of {}, rubrics of {}\n",
        judge::JUDGE_PROMPT_VERSION,
        file.report.display(),
        set.path.display()
    );
    text.push_str(&format!(
        "  TPR {}  judge pass | human pass: {} of {}\n",
        rate(confusion.true_positives, confusion.positives()),
        confusion.true_positives,
        confusion.positives()
    ));
    text.push_str(&format!(
        "  TNR {}  judge fail | human fail: {} of {}\n",
        rate(confusion.true_negatives, confusion.negatives()),
        confusion.true_negatives,
        confusion.negatives()
    ));
    text.push_str(&format!(
        "  n {} ({} human pass, {} human fail); judge unknown: {} (counted as fail); judge errors: {} (left out)\n",
        confusion.positives() + confusion.negatives(),
        confusion.positives(),
        confusion.negatives(),
        confusion.unknown,
        confusion.errors
    ));
    if let Some((tpr, tnr)) = confusion.rates() {
        let informedness = tpr + tnr - 1.0;
        if informedness <= 0.0 {
            text.push_str(&format!(
                "  TPR + TNR − 1 = {informedness:.3}: this judge is no better than chance; reports will not correct its rates\n"
            ));
        } else {
            text.push_str(&format!(
                "  TPR + TNR − 1 = {informedness:.3}: a judge pass rate p is reported as (p + TNR − 1) / {informedness:.3}\n"
            ));
        }
    }
    text
}

/// The layer-1 section of the report the labels name.
fn read_report(path: &Path) -> Result<EvalsSection, Vec<UserError>> {
    let text = fs_err::read_to_string(path).map_err(|error| {
        vec![
            UserError::new(Kind::InvalidInput, format!("cannot read the labelled report `{}`", path.display()))
                .caused_by(crate::text::io_reason(&error))
                .with_hint("the labels file's `report:` names a report.json, relative to the labels file"),
        ]
    })?;
    let report = crate::report::json::parse(&text).map_err(|error| {
        vec![
            UserError::new(Kind::InvalidInput, format!("`{}` is not a readable report.json", path.display()))
                .caused_by(error)
                .with_hint("name the report.json an `mcp-eval run` wrote (layer 1 with traces)"),
        ]
    })?;
    report.evals.ok_or_else(|| {
        vec![
            UserError::new(Kind::InvalidInput, format!("the report `{}` has no layer-1 results", path.display()))
                .with_hint("label the report of a run with a golden set and a model (`--trace-results full`)"),
        ]
    })
}

#[cfg(test)]
mod tests;
