//! The trends: a size-bounded history of green runs' summaries — pass rate per model, p95 per
//! tool, cost per run — in `CACHE_DIR/trends.json`, apart from the gate's pool of the last three
//! stored runs (`baselines.json`) and from the verdict cache's eviction (which only walks the
//! entries' shard directories). A run is added when it stores its baseline
//! ([`super::store::should_store`]); the file keeps the last [`KEPT_POINTS`], oldest first.
//!
//! Written atomically. A file that cannot be read is a warning and is replaced by the next run
//! that stores; a file of another format is a warning and is left as it is (a newer mcp-eval's
//! history is not overwritten by an older one).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::report::evals::EvalsSection;
use crate::report::telemetry::{TelemetrySection, TrendPoint};

/// The most runs the file keeps.
pub(crate) const KEPT_POINTS: usize = 30;

/// The format of the trends file.
const FORMAT: u32 = 1;

/// The file in the cache directory.
pub(crate) const TRENDS_FILE: &str = "trends.json";

/// The trends file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Trends {
    /// Always [`FORMAT`].
    pub format: u32,
    /// The runs, oldest first, at most [`KEPT_POINTS`].
    pub runs: Vec<TrendPoint>,
}

impl Default for Trends {
    fn default() -> Self {
        Trends { format: FORMAT, runs: Vec::new() }
    }
}

/// Why a trends file was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NotRead {
    /// The warning.
    pub warning: String,
    /// The file may be replaced (unreadable), or must be left alone (another format).
    pub replace: bool,
}

impl Trends {
    /// The trends file of a cache directory.
    pub(crate) fn path_in(cache_dir: &Path) -> PathBuf {
        cache_dir.join(TRENDS_FILE)
    }

    /// Reads the file at `path`: empty when there is none.
    pub(crate) fn load(path: &Path) -> Result<Self, NotRead> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(error) => {
                return Err(NotRead {
                    warning: format!("cannot read the trends {}: {error}; no history shown", path.display()),
                    replace: true,
                });
            }
        };
        let unreadable = |error: serde_json::Error| NotRead {
            warning: format!(
                "the trends {} are not readable ({error}); no history shown, and the file is replaced when a run stores its baseline",
                path.display()
            ),
            replace: true,
        };
        let value: serde_json::Value = serde_json::from_str(&text).map_err(unreadable)?;
        let format = value.get("format").and_then(serde_json::Value::as_u64);
        if format != Some(u64::from(FORMAT)) {
            return Err(NotRead {
                warning: format!(
                    "the trends {} are of format {}, not {FORMAT}: ignored, and left as they are",
                    path.display(),
                    format.map_or_else(|| "unknown".to_owned(), |format| format.to_string())
                ),
                replace: false,
            });
        }
        let mut trends: Self = serde_json::from_value(value).map_err(unreadable)?;
        trends.bound();
        Ok(trends)
    }

    /// Adds a run as the newest, dropping the oldest beyond [`KEPT_POINTS`].
    pub(crate) fn push(&mut self, point: TrendPoint) {
        self.format = FORMAT;
        self.runs.push(point);
        self.bound();
    }

    fn bound(&mut self) {
        let extra = self.runs.len().saturating_sub(KEPT_POINTS);
        self.runs.drain(..extra);
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

/// This run's point: layer 1's pass rate per model (`eval_metrics.pass_rate`: cases that passed
/// of the cases with a verdict), layer 3's p95 per tool and the run's cost.
pub(crate) fn point_of(
    section: &TelemetrySection,
    evals: Option<&EvalsSection>,
    measured_at: &str,
    commit: Option<&str>,
) -> TrendPoint {
    TrendPoint {
        measured_at: measured_at.to_owned(),
        commit: commit.map(str::to_owned),
        pass_rate: evals
            .map(|evals| {
                evals
                    .eval_metrics
                    .iter()
                    .filter_map(|metrics| metrics.pass_rate.rate.map(|rate| (metrics.model.clone(), rate)))
                    .collect()
            })
            .unwrap_or_default(),
        p95_ms: section
            .tools
            .iter()
            .filter_map(|tool| tool.latency.p95_ms.map(|p95| (tool.tool.clone(), p95)))
            .collect(),
        cost_usd: section.total.cost_usd,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(n: usize) -> TrendPoint {
        TrendPoint {
            measured_at: format!("2026-12-{:02}T00:00:00Z", n % 28 + 1),
            cost_usd: Some(n as f64),
            ..TrendPoint::default()
        }
    }

    #[test]
    fn the_31st_run_drops_the_oldest() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = Trends::path_in(dir.path());
        for n in 0..=KEPT_POINTS {
            let mut trends = Trends::load(&path).expect("readable");
            trends.push(point(n));
            trends.save(&path).expect("saved");
        }
        let trends = Trends::load(&path).expect("readable");
        assert_eq!(trends.runs.len(), KEPT_POINTS);
        let costs: Vec<f64> = trends.runs.iter().filter_map(|point| point.cost_usd).collect();
        assert_eq!(costs.first(), Some(&1.0), "the first run was dropped");
        assert_eq!(costs.last(), Some(&(KEPT_POINTS as f64)), "newest last");
    }

    #[test]
    fn an_unreadable_file_is_replaced_and_another_format_left_alone() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = Trends::path_in(dir.path());
        assert_eq!(Trends::load(&path), Ok(Trends::default()), "none yet: empty");
        std::fs::write(&path, "{broken").expect("write");
        let broken = Trends::load(&path).expect_err("a warning");
        assert!(broken.replace && broken.warning.contains("not readable"), "{broken:?}");
        std::fs::write(&path, r#"{"format": 1, "runs": "no"}"#).expect("write");
        assert!(Trends::load(&path).expect_err("a warning").replace);
        std::fs::write(&path, r#"{"format": 2, "points": []}"#).expect("write");
        let newer = Trends::load(&path).expect_err("a warning");
        assert!(!newer.replace && newer.warning.contains("of format 2, not 1: ignored"), "{newer:?}");
    }

    #[test]
    fn a_point_keeps_unknown_cost_unknown_and_leaves_out_tools_without_samples() {
        use crate::report::telemetry::{Latency, ToolTelemetry};
        let section = TelemetrySection {
            tools: vec![
                ToolTelemetry {
                    tool: "a".into(),
                    latency: Latency { count: 2, p50_ms: Some(3), p95_ms: Some(9), max_ms: Some(9) },
                    ..ToolTelemetry::default()
                },
                ToolTelemetry { tool: "never-sent".into(), ..ToolTelemetry::default() },
            ],
            ..TelemetrySection::default()
        };
        let evals = EvalsSection {
            eval_metrics: vec![crate::report::evals::EvalMetrics {
                model: "openai:m".into(),
                pass_rate: crate::report::evals::Rate::new(3, 4),
                ..crate::report::evals::metrics_of("openai:m", &[])
            }],
            ..EvalsSection::default()
        };
        let point = point_of(&section, Some(&evals), "2026-12-01T00:00:00Z", Some("abc"));
        assert_eq!(point.p95_ms, [("a".to_owned(), 9)].into());
        assert_eq!(point.pass_rate, [("openai:m".to_owned(), 0.75)].into());
        assert_eq!((point.cost_usd, point.commit.as_deref()), (None, Some("abc")));
    }
}
