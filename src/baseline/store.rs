//! The stored baseline of layer 1: the last green runs of the base branch, kept per
//! comparability key — case hash × model × provider endpoint — so a pull request that edits one
//! case still compares every other case, and a pull request that changes the server or the tool
//! surface (exactly what must be compared) still finds its baseline. The last three stored runs
//! of each key are kept (the gate pools them), with a record per golden-set hash naming the runs
//! and the tool surface of the last one (for the tool-surface diff), and layer 3's figures of the
//! last three stored runs that ran it (p95 per tool, tokens and cost per case × model: what
//! layer 3's deltas compare with, their spread the noise).
//!
//! The file lives beside the verdict cache (`CACHE_DIR/baselines.json`), so pull-request runs,
//! which restore the base branch's cache, find it without an API call. It is written atomically;
//! one that cannot be read is ignored with a warning (no baseline, never a wrong one).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::regression::Reason;
use crate::report::evals::{EvalResult, EvalStatus};
use crate::report::telemetry::TelemetrySection;

/// Stored runs kept per comparability key (the gate pools them).
pub(crate) const KEPT_RUNS: usize = 3;

/// The format of the baseline file.
const FORMAT: u32 = 1;

/// One stored verdict (traces left out: the baseline keeps counts, not conversations).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct StoredVerdict {
    /// When the run that measured it started (RFC 3339).
    pub measured_at: String,
    /// The provider endpoint it was measured on, as [`shown_endpoint`] shows it (scheme, host
    /// and path: never credentials or a query); absent in a file written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// The verdict.
    pub eval: EvalResult,
}

/// Stored verdicts comparable with one case × model of this run ([`Baseline::comparable_across`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct Comparable<'a> {
    /// Newest first, at most [`KEPT_RUNS`].
    pub verdicts: Vec<&'a StoredVerdict>,
    /// When none was measured on this run's endpoint and these were measured on others: those
    /// endpoints as shown ([`shown_endpoint`]; `an endpoint not recorded` for a file written
    /// before endpoints were kept), sorted.
    pub other_endpoints: Vec<String>,
}

/// A provider endpoint as the summary and the baseline file show it: scheme, host (and port)
/// and path, never the user, password, query or fragment a base URL may carry.
pub(crate) fn shown_endpoint(url: &str) -> String {
    if url.is_empty() {
        return "no endpoint".to_owned();
    }
    match url::Url::parse(url) {
        Ok(parsed) if parsed.has_host() => {
            let port = parsed.port().map(|port| format!(":{port}")).unwrap_or_default();
            format!("{}://{}{port}{}", parsed.scheme(), parsed.host_str().unwrap_or_default(), parsed.path())
        }
        _ => "an endpoint that is not a URL".to_owned(),
    }
}

/// How [`Comparable::other_endpoints`] names an endpoint a stored verdict did not record.
const UNRECORDED_ENDPOINT: &str = "an endpoint not recorded";

/// A run that stored a baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct StoredRun {
    /// When it started (RFC 3339).
    pub measured_at: String,
    /// Why it was stored: `schedule`, `push`, `workflow_dispatch`, `accept-baseline`, `file`.
    pub reason: String,
}

/// The whole baseline file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Baseline {
    /// Always [`FORMAT`].
    pub format: u32,
    /// Comparability key → the last stored verdicts, newest first.
    pub verdicts: BTreeMap<String, Vec<StoredVerdict>>,
    /// Golden-set hash → the runs that stored it, newest first.
    pub runs: BTreeMap<String, Vec<StoredRun>>,
    /// The canonical tool surface of the last stored run (for the tool-surface diff).
    pub tools: Option<String>,
    /// Layer 0 of the last stored run that ran it: failing and warning check ids.
    #[serde(default)]
    pub layer0: Option<Layer0State>,
    /// Layer 3's figures of the last [`KEPT_RUNS`] stored runs that ran it, newest first (a file
    /// written before they were kept has none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub telemetry: Vec<StoredTelemetry>,
}

/// Layer 3's figures of a stored run: what its deltas are taken against.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct StoredTelemetry {
    /// When the run started (RFC 3339).
    pub measured_at: String,
    /// Tool → its p95 latency, ms (tools without samples are absent).
    pub p95_ms: BTreeMap<String, u64>,
    /// Per case × model (and layer) measured.
    pub cases: Vec<StoredCase>,
}

/// A case × model's spend in a stored run, summed over its trials (`None`: unknown, never 0).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct StoredCase {
    /// The case id (layer 2: the variant id).
    pub case: String,
    /// `PROVIDER:MODEL` under test.
    pub model: String,
    /// 1 or 2.
    pub layer: u8,
    /// Trials measured.
    pub trials: usize,
    /// Input tokens (read, not from the cache).
    pub input_tokens: Option<f64>,
    /// Output tokens.
    pub output_tokens: Option<f64>,
    /// Cost, USD.
    pub cost_usd: Option<f64>,
}

impl StoredTelemetry {
    /// The figures of a layer-3 section measured at `measured_at`: every tool with a p95, every
    /// case × model with trials measured.
    pub(crate) fn of(section: &TelemetrySection, measured_at: &str) -> Self {
        StoredTelemetry {
            measured_at: measured_at.to_owned(),
            p95_ms: section
                .tools
                .iter()
                .filter_map(|tool| tool.latency.p95_ms.map(|p95| (tool.tool.clone(), p95)))
                .collect(),
            cases: section
                .cases
                .iter()
                .filter(|case| case.trials > 0)
                .map(|case| StoredCase {
                    case: case.case.clone(),
                    model: case.model.clone(),
                    layer: case.layer,
                    trials: case.trials,
                    input_tokens: case.spend.input_tokens,
                    output_tokens: case.spend.output_tokens,
                    cost_usd: case.spend.cost_usd,
                })
                .collect(),
        }
    }
}

/// Layer 0's failing and warning check ids of a stored run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Layer0State {
    /// Failing check ids.
    pub failing: Vec<String>,
    /// Warning check ids.
    pub warning: Vec<String>,
    /// The catalogue generation of the stored run (1 when the file predates the field).
    #[serde(default = "first_catalogue")]
    pub catalogue: u8,
}

fn first_catalogue() -> u8 {
    1
}

/// The comparability key of a case × model on an endpoint.
pub(crate) fn comparability_key(case_sha256: &str, model: &str, endpoint: &str) -> String {
    crate::jcs::hash(&json!({"case": case_sha256, "model": model, "endpoint": endpoint}))
}

/// Why a stored baseline is not used (a warning: the run goes on without a baseline).
#[derive(Debug, thiserror::Error)]
pub(crate) enum LoadError {
    /// The file exists and cannot be read.
    #[error("cannot read the baseline {}: {source}; no baseline used", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a baseline's JSON.
    #[error("the baseline {} is not readable ({source}); no baseline used", .path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
    /// The file is of another format.
    #[error("the baseline {} is of format {format}; no baseline used", .path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// Its format.
        format: u32,
    },
}

impl Baseline {
    /// The baseline file of a cache directory.
    pub(crate) fn path_in(cache_dir: &Path) -> PathBuf {
        cache_dir.join("baselines.json")
    }

    /// Reads the baseline at `path`: empty when there is none; `Err` with a warning when the
    /// file cannot be read (the caller then runs without a baseline).
    pub(crate) fn load(path: &Path) -> Result<Self, LoadError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => return Err(LoadError::Read { path: path.to_owned(), source }),
        };
        let baseline: Self =
            serde_json::from_str(&text).map_err(|source| LoadError::Unreadable { path: path.to_owned(), source })?;
        if baseline.format != FORMAT {
            return Err(LoadError::Format { path: path.to_owned(), format: baseline.format });
        }
        Ok(baseline)
    }

    /// A baseline made of one report's evals (`--baseline FILE`: a report.json).
    pub(crate) fn from_evals(evals: &[EvalResult], endpoint: &dyn Fn(&str) -> String, measured_at: &str) -> Self {
        let mut baseline = Self { format: FORMAT, ..Self::default() };
        baseline.add(evals, endpoint, measured_at);
        baseline
    }

    /// Adds the verdicts of a run (pass and fail only; reused ones too, they are still this
    /// code's verdicts), newest first, keeping [`KEPT_RUNS`] per key. A verdict is stored under
    /// the time it was measured — `measured_at` for this run's, the original measurement's for a
    /// reused one — and one measurement is stored once: a verdict reused run after run does not
    /// fill the pool with copies of itself (they would understate the noise).
    fn add(&mut self, evals: &[EvalResult], endpoint: &dyn Fn(&str) -> String, measured_at: &str) {
        for eval in evals.iter().filter(|eval| matches!(eval.status, EvalStatus::Pass | EvalStatus::Fail)) {
            let key = comparability_key(&eval.case_sha256, &eval.model, &endpoint(&eval.model));
            let kept = self.verdicts.entry(key).or_default();
            let at = eval.cached.as_ref().map_or(measured_at, |from| from.measured_at.as_str());
            if kept.iter().any(|stored| stored.measured_at == at) {
                continue;
            }
            let stored = StoredVerdict {
                measured_at: at.to_owned(),
                endpoint: Some(shown_endpoint(&endpoint(&eval.model))),
                eval: EvalResult { traces: Vec::new(), cached: None, ..eval.clone() },
            };
            kept.insert(0, stored);
            kept.truncate(KEPT_RUNS);
        }
    }

    /// Stores a run: its verdicts, the run record of its golden-set hash, and its tool surface.
    pub(crate) fn store(
        &mut self,
        evals: &[EvalResult],
        endpoint: &dyn Fn(&str) -> String,
        golden_sha256: &str,
        tools: Option<String>,
        run: StoredRun,
    ) {
        self.format = FORMAT;
        self.add(evals, endpoint, &run.measured_at);
        let runs = self.runs.entry(golden_sha256.to_owned()).or_default();
        runs.insert(0, run);
        runs.truncate(KEPT_RUNS);
        if tools.is_some() {
            self.tools = tools;
        }
    }

    /// Stores a run's layer-3 figures, newest first, keeping [`KEPT_RUNS`].
    pub(crate) fn store_telemetry(&mut self, figures: StoredTelemetry) {
        self.format = FORMAT;
        self.telemetry.insert(0, figures);
        self.telemetry.truncate(KEPT_RUNS);
    }

    /// The stored verdicts comparable with `eval` (same case hash, model and endpoint), newest
    /// first.
    pub(crate) fn comparable(&self, eval: &EvalResult, endpoint: &str) -> &[StoredVerdict] {
        let key = comparability_key(&eval.case_sha256, &eval.model, endpoint);
        self.verdicts.get(&key).map(Vec::as_slice).unwrap_or_default()
    }

    /// The stored verdicts the gate compares `eval` with: those of its case hash and model on
    /// `endpoint` ([`Self::comparable`]); when there are none, those of its case hash and model
    /// on any other endpoint, newest first, and which endpoints they were measured on. A model
    /// is the same model behind another gateway URL: the gate compares it, and its line names
    /// both endpoints (a model that is not the same goes under another provider id, whose
    /// `PROVIDER:MODEL` differs).
    pub(crate) fn comparable_across(&self, eval: &EvalResult, endpoint: &str) -> Comparable<'_> {
        let here = self.comparable(eval, endpoint);
        if !here.is_empty() {
            return Comparable { verdicts: here.iter().collect(), other_endpoints: Vec::new() };
        }
        let mut verdicts: Vec<&StoredVerdict> = self
            .verdicts
            .values()
            .flatten()
            .filter(|stored| stored.eval.model == eval.model && stored.eval.case_sha256 == eval.case_sha256)
            .collect();
        verdicts.sort_by(|a, b| b.measured_at.cmp(&a.measured_at));
        verdicts.truncate(KEPT_RUNS);
        let mut other_endpoints: Vec<String> = verdicts
            .iter()
            .map(|stored| stored.endpoint.clone().unwrap_or_else(|| UNRECORDED_ENDPOINT.to_owned()))
            .collect();
        other_endpoints.sort();
        other_endpoints.dedup();
        Comparable { verdicts, other_endpoints }
    }

    /// Why a case × model with no comparable stored verdict (none under its case hash and
    /// model, on any endpoint: [`Self::comparable_across`]) has none: [`Reason::ChangedCase`]
    /// when the same case id × model is stored under another case hash (the case was edited),
    /// [`Reason::OtherModel`] when the case id is stored only for other models,
    /// [`Reason::NewCase`] when the id was never stored.
    pub(crate) fn reason_without_record(&self, case: &str, model: &str, case_sha256: &str) -> Reason {
        let mut reason = Reason::NewCase;
        for kept in self.verdicts.values() {
            for stored in kept.iter().filter(|stored| stored.eval.case == case) {
                if stored.eval.model == model && stored.eval.case_sha256 != case_sha256 {
                    return Reason::ChangedCase;
                }
                reason = Reason::OtherModel;
            }
        }
        reason
    }

    /// Writes the file atomically.
    pub(crate) fn save(&self, path: &Path) -> Result<(), crate::error::SaveError> {
        use crate::error::SaveError;
        if let Some(parent) = path.parent().filter(|parent| !parent.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .map_err(|source| SaveError::CreateDir { dir: parent.to_path_buf(), source })?;
        }
        let text = serde_json::to_string(self)?;
        crate::atomic::write_atomic(path, &text).map_err(|source| SaveError::Write { path: path.to_path_buf(), source })
    }
}

/// Whether a run stores its results as the baseline: only on the default branch; a scheduled
/// run always once layer 1 completed without errors (it measures the model afresh); a push or
/// `workflow_dispatch` run only when its own gate did not fail (a regression merged by mistake
/// must not ratchet in); `accept` (`--accept-baseline`) whatever the gate says. Pull requests
/// never store.
pub(crate) fn should_store(
    event: &str,
    on_default_branch: bool,
    layer1_clean: bool,
    gate_failed: bool,
    accept: bool,
) -> bool {
    if !on_default_branch || event.starts_with("pull_request") {
        return false;
    }
    if accept {
        return true;
    }
    match event {
        "schedule" => layer1_clean,
        "push" | "workflow_dispatch" => layer1_clean && !gate_failed,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(case: &str, passed: usize) -> EvalResult {
        EvalResult::for_tests(case, "openai:m", false, passed, 5, 4)
    }

    fn endpoint(_: &str) -> String {
        "https://api.example/v1".into()
    }

    fn run(at: &str) -> StoredRun {
        StoredRun { measured_at: at.into(), reason: "push".into() }
    }

    #[test]
    fn the_last_three_runs_are_kept_per_case_model_and_endpoint() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = Baseline::path_in(dir.path());
        let mut baseline = Baseline::load(&path).expect("none yet");
        for (n, passed) in [5, 4, 5, 3].iter().enumerate() {
            baseline.store(&[eval("a", *passed)], &endpoint, "sha256:set", None, run(&format!("t{n}")));
        }
        baseline.save(&path).expect("saved");
        let loaded = Baseline::load(&path).expect("readable");
        let kept: Vec<usize> =
            loaded.comparable(&eval("a", 0), &endpoint("")).iter().map(|stored| stored.eval.passed).collect();
        assert_eq!(kept, vec![3, 5, 4], "newest first, three kept");
        assert_eq!(loaded.runs["sha256:set"].len(), 3);
        assert!(loaded.comparable(&eval("a", 0), "http://other/v1").is_empty(), "another endpoint is not comparable");
        assert!(loaded.comparable(&eval("b", 0), &endpoint("")).is_empty(), "another case is not comparable");
    }

    #[test]
    fn a_stored_verdict_keeps_the_model_versions_the_provider_reported() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = Baseline::path_in(dir.path());
        let reported = crate::report::evals::ReportedModel::of(Some("gpt-4.1-2025-04-14"), Some("fp_abc"));
        let served = EvalResult { reported_models: reported.into_iter().collect(), ..eval("a", 5) };
        let mut baseline = Baseline::default();
        baseline.store(std::slice::from_ref(&served), &endpoint, "sha256:set", None, run("t0"));
        baseline.save(&path).expect("saved");
        let loaded = Baseline::load(&path).expect("readable");
        let kept = loaded.comparable(&served, &endpoint(""));
        assert_eq!(kept[0].eval.reported_models, served.reported_models);

        // A baseline file written before versions were kept reads with none.
        let text = std::fs::read_to_string(&path).expect("file").replace("\"reported_models\"", "\"ignored\"");
        std::fs::write(&path, text).expect("write");
        let old = Baseline::load(&path).expect("readable");
        assert!(old.comparable(&served, &endpoint(""))[0].eval.reported_models.is_empty());
    }

    #[test]
    fn layer_3_figures_keep_the_last_three_runs_and_an_older_file_reads_without_them() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = Baseline::path_in(dir.path());
        let mut baseline = Baseline::default();
        baseline.store(&[eval("a", 5)], &endpoint, "sha256:set", None, run("t0"));
        baseline.save(&path).expect("saved");
        let text = std::fs::read_to_string(&path).expect("file");
        assert!(!text.contains("\"telemetry\""), "no figures, no field: {text}");
        // A file written before layer 3's figures were kept reads with none.
        let old = Baseline::load(&path).expect("readable");
        assert!(old.telemetry.is_empty());
        assert_eq!(old.comparable(&eval("a", 0), &endpoint("")).len(), 1);

        let mut baseline = old;
        for n in 0..4 {
            let figures = StoredTelemetry {
                measured_at: format!("t{n}"),
                p95_ms: [("search".to_owned(), 100 + n)].into(),
                cases: vec![StoredCase {
                    case: "a".into(),
                    model: "openai:m".into(),
                    layer: 1,
                    trials: 1,
                    ..StoredCase::default()
                }],
            };
            baseline.store_telemetry(figures);
        }
        baseline.save(&path).expect("saved");
        let loaded = Baseline::load(&path).expect("readable");
        let kept: Vec<&str> = loaded.telemetry.iter().map(|figures| figures.measured_at.as_str()).collect();
        assert_eq!(kept, ["t3", "t2", "t1"], "newest first, three kept");
        assert_eq!(loaded.telemetry[0].cases[0].input_tokens, None, "unknown stays unknown");
    }

    #[test]
    fn an_unreadable_baseline_is_ignored_with_a_warning() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = Baseline::path_in(dir.path());
        std::fs::write(&path, "{broken").expect("write");
        assert!(Baseline::load(&path).expect_err("a warning").to_string().contains("not readable"));
    }

    #[test]
    fn only_the_default_branch_stores_and_a_failed_gate_never_ratchets_in() {
        assert!(should_store("schedule", true, true, true, false), "schedule measures afresh");
        assert!(!should_store("schedule", true, false, false, false), "not with layer-1 errors");
        assert!(should_store("push", true, true, false, false));
        assert!(!should_store("push", true, true, true, false), "a failed gate does not ratchet in");
        assert!(should_store("push", true, true, true, true), "unless accepted");
        assert!(!should_store("pull_request", true, true, false, true), "pull requests never store");
        assert!(!should_store("push", false, true, false, false), "other branches never store");
    }
}
