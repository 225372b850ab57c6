//! Judge calibration: `mcp-eval judge calibrate LABELS.yaml` (`crate::authoring::calibrate`)
//! re-judges hand-labelled runs with `--judge-model` and measures how often the judge agrees with the human —
//! TPR (judge `pass` | human `pass`) and TNR (judge `fail` | human `fail`) — then writes a
//! calibration file ([`CalibrationFile`], JSON). A run given `--judge-calibration FILE` whose judge
//! (model, prompt version) is the one measured reports its judge pass rates also Rogan–Gladen
//! corrected ([`for_report`]); without a file, or with one measured on another judge, the report
//! says "uncalibrated" and why.
//!
//! Counting: one judge call (or `--judge-samples` calls, majority vote) per labelled run; each
//! label compares the human verdict with the judge's verdict on that criterion. A criterion the
//! judge leaves `unknown` counts as not passed — as the rubric rule treats it — and is counted
//! in `unknown`; a run the judge could not judge (a provider error, a missing cassette, an
//! unreadable answer) leaves its labels out of TPR and TNR and counts them in `errors`.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::error::{Kind, UserError};
use crate::golden::GoldenSet;
use crate::report::evals::{EvalsSection, JudgeCalibration, JudgeRate};
use crate::scoring::judge::{self, CriterionVerdict, Rubric};

/// The only calibration file format.
pub(crate) const CALIBRATION_FORMAT: u32 = 1;

/// What `mcp-eval judge calibrate` measured: the calibration file (`--out`, JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct CalibrationFile {
    /// Always 1.
    pub format: u32,
    /// The judge measured, `PROVIDER:MODEL` — a `replay:LABEL` judge is recorded as `LABEL`,
    /// whose answers it replays.
    pub judge_model: String,
    /// The judge prompt version measured (`JUDGE_PROMPT_VERSION`); another version is another
    /// judge.
    pub judge_prompt_version: u32,
    /// Judge calls per run (majority vote).
    pub judge_samples: usize,
    /// `sha256:…` of the golden set whose rubrics were judged.
    pub golden_set_sha256: String,
    /// `sha256:…` over the resolved rubrics of the labelled cases (canonical JSON, by case id).
    pub rubrics_sha256: String,
    /// The ids of those cases: a run recomputes the hash over them, so a calibration stays
    /// valid while its rubrics do, whatever other cases the set gains (absent from files of
    /// the first builds: the whole set's hash decides then).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rubric_cases: Vec<String>,
    /// The labels file, as given.
    pub labels: String,
    /// True-positive rate: judge `pass` among the labels a human passed, in 0..1.
    pub tpr: f64,
    /// True-negative rate: judge not `pass` among the labels a human failed, in 0..1.
    pub tnr: f64,
    /// Labels a human passed (judged; errors left out).
    pub positives: usize,
    /// Labels a human failed (judged; errors left out).
    pub negatives: usize,
    /// Of the positives, those the judge passed.
    pub true_positives: usize,
    /// Of the negatives, those the judge did not pass.
    pub true_negatives: usize,
    /// Labels whose criterion the judge left `unknown` (counted as not passed).
    pub unknown: usize,
    /// Labels of runs the judge could not judge (left out of every rate).
    pub errors: usize,
    /// The day it was measured (UTC), `YYYY-MM-DD`.
    pub measured_at: String,
}

/// The judge a label names: `replay:LABEL` replays what `LABEL` answered, so it is `LABEL`.
pub(crate) fn judge_identity(label: &str) -> &str {
    label.strip_prefix("replay:").unwrap_or(label)
}

/// Agreement counts of judge and human.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Confusion {
    /// Human pass, judge pass.
    pub true_positives: usize,
    /// Human pass, judge fail or unknown.
    pub false_negatives: usize,
    /// Human fail, judge fail or unknown.
    pub true_negatives: usize,
    /// Human fail, judge pass.
    pub false_positives: usize,
    /// Judge `unknown` (inside the counts above, as not passed).
    pub unknown: usize,
    /// Labels of runs the judge could not judge (outside the counts above).
    pub errors: usize,
}

impl Confusion {
    /// Adds one label: the human verdict and the judge's (`None`: the run was not judged).
    pub(crate) fn add(&mut self, human: bool, judged: Option<CriterionVerdict>) {
        let Some(verdict) = judged else {
            self.errors += 1;
            return;
        };
        if verdict == CriterionVerdict::Unknown {
            self.unknown += 1;
        }
        match (human, verdict == CriterionVerdict::Pass) {
            (true, true) => self.true_positives += 1,
            (true, false) => self.false_negatives += 1,
            (false, false) => self.true_negatives += 1,
            (false, true) => self.false_positives += 1,
        }
    }

    /// Human passes judged.
    pub(crate) fn positives(&self) -> usize {
        self.true_positives + self.false_negatives
    }

    /// Human fails judged.
    pub(crate) fn negatives(&self) -> usize {
        self.true_negatives + self.false_positives
    }

    /// TPR and TNR; `None` when a class has no judged label.
    pub(crate) fn rates(&self) -> Option<(f64, f64)> {
        let (positives, negatives) = (self.positives(), self.negatives());
        (positives > 0 && negatives > 0)
            .then(|| (self.true_positives as f64 / positives as f64, self.true_negatives as f64 / negatives as f64))
    }
}

/// Whether `file` was measured on the rubrics `set` has now: the hash over its `rubric_cases`
/// recomputed on `set` (a case gone counts as changed); files without `rubric_cases` compare
/// the whole set's hash.
pub(crate) fn same_rubrics(file: &CalibrationFile, set: &GoldenSet) -> bool {
    if file.rubric_cases.is_empty() {
        return file.golden_set_sha256 == set.hash;
    }
    let rubrics: Vec<Option<Rubric>> = set.cases.iter().map(|case| case.rubric.clone()).collect();
    let indices: Option<Vec<usize>> = file
        .rubric_cases
        .iter()
        .map(|id| set.cases.iter().position(|case| &case.id == id).filter(|&index| rubrics[index].is_some()))
        .collect();
    indices.is_some_and(|indices| rubrics_hash(set, &rubrics, indices.into_iter()) == file.rubrics_sha256)
}

/// `sha256:…` over the resolved rubrics of the cases at `indices`, by case id.
pub(crate) fn rubrics_hash(
    set: &GoldenSet,
    rubrics: &[Option<Rubric>],
    indices: impl Iterator<Item = usize>,
) -> String {
    let mut by_case = serde_json::Map::new();
    for index in indices {
        if rubrics[index].is_some() {
            let case = &set.cases[index];
            by_case.insert(case.id.clone(), case.rubric_json());
        }
    }
    crate::jcs::hash(&json!(by_case))
}

/// Reads a calibration file (`--judge-calibration`); `Err` is an input error (exit 2).
pub(crate) fn load(path: &Path) -> Result<CalibrationFile, UserError> {
    let text = fs_err::read_to_string(path).map_err(|error| {
        UserError::new(Kind::InvalidInput, format!("--judge-calibration: cannot read `{}`", path.display()))
            .caused_by(crate::text::io_reason(&error))
            .with_hint("give the file `mcp-eval judge calibrate` wrote")
    })?;
    let file: CalibrationFile = serde_json::from_str(&text).map_err(|error| {
        UserError::new(
            Kind::InvalidInput,
            format!("--judge-calibration: `{}` line {}: not a calibration file", path.display(), error.line()),
        )
        .caused_by(error)
        .with_hint("give the file `mcp-eval judge calibrate` wrote (format 1)")
    })?;
    if file.format != CALIBRATION_FORMAT || !(0.0..=1.0).contains(&file.tpr) || !(0.0..=1.0).contains(&file.tnr) {
        return Err(UserError::new(
            Kind::InvalidInput,
            format!(
                "--judge-calibration: `{}`: format {} with TPR {} and TNR {}",
                path.display(),
                file.format,
                file.tpr,
                file.tnr
            ),
        )
        .with_hint("this build reads format 1 with rates from 0 to 1; measure again with `mcp-eval judge calibrate`"));
    }
    Ok(file)
}

/// Why `file` does not calibrate the judge `judge` (its label) of this build: another judge
/// model or another judge prompt version; `None` when it applies.
pub(crate) fn mismatch(file: &CalibrationFile, judge: &str) -> Option<String> {
    if file.judge_model != judge_identity(judge) {
        return Some(format!("the calibration file measured {}, not the judge {judge}", file.judge_model));
    }
    if file.judge_prompt_version != judge::JUDGE_PROMPT_VERSION {
        return Some(format!(
            "the calibration file measured judge prompt v{}, this build's is v{}",
            file.judge_prompt_version,
            judge::JUDGE_PROMPT_VERSION
        ));
    }
    None
}

/// Each model's judge pass rate over `section`'s runs — runs whose rubric the judge passed, of
/// the runs it judged (pass or fail; judge errors left out) — and, with `calibration` (TPR,
/// TNR), that rate Rogan–Gladen corrected. Models without a judged run are left out.
pub(crate) fn judge_rates(section: &EvalsSection, calibration: Option<(f64, f64)>) -> Vec<JudgeRate> {
    let mut rates = Vec::new();
    for model in section.models_with_results() {
        let (mut judged, mut passed) = (0, 0);
        for trace in section.evals.iter().filter(|eval| eval.model == model).flat_map(|eval| &eval.traces) {
            match trace.criteria.iter().find(|criterion| criterion.criterion == "judge").map(|c| c.verdict.as_str()) {
                Some("pass") => (judged, passed) = (judged + 1, passed + 1),
                Some("fail") => judged += 1,
                _ => {}
            }
        }
        if judged == 0 {
            continue;
        }
        let observed = passed as f64 / judged as f64;
        let corrected = calibration.map(|(tpr, tnr)| judge::rogan_gladen(observed, tpr, tnr));
        rates.push(JudgeRate {
            model: model.to_owned(),
            judged_runs: judged,
            passed_runs: passed,
            observed,
            corrected: corrected.flatten(),
            no_better_than_chance: corrected.is_some_and(|value| value.is_none()),
        });
    }
    rates
}

/// The report's judge calibration for a run judged by `judge`: each model's judge pass rate
/// (runs whose rubric the judge passed, of the runs it judged), and — when `calibration` (the
/// file and how it was named) applies — that rate Rogan–Gladen corrected; "uncalibrated" with
/// the reason otherwise.
pub(crate) fn for_report(
    section: &EvalsSection,
    judge: &str,
    calibration: Option<(&CalibrationFile, &str)>,
) -> JudgeCalibration {
    let applies = calibration.map(|(file, name)| (file, name, mismatch(file, judge)));
    let reason = match &applies {
        None => Some("no calibration file was given (--judge-calibration)".to_owned()),
        Some((_, _, mismatch)) => mismatch.clone(),
    };
    let used = applies.as_ref().filter(|(_, _, mismatch)| mismatch.is_none()).map(|(file, _, _)| *file);
    let rates = judge_rates(section, used.map(|file| (file.tpr, file.tnr)));
    JudgeCalibration {
        judge_model: judge.to_owned(),
        calibrated: used.is_some(),
        reason,
        file: applies.as_ref().map(|(_, name, _)| (*name).to_owned()),
        tpr: used.map(|file| file.tpr),
        tnr: used.map(|file| file.tnr),
        positives: used.map(|file| file.positives),
        negatives: used.map(|file| file.negatives),
        measured_at: used.map(|file| file.measured_at.clone()),
        rates,
    }
}
