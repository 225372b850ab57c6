//! Run reports and their renderers: `report.json`, `junit.xml` and `summary.md`.
//!
//! Renderers are pure functions of a [`model::RunReport`] (no IO, no clock); [`write_all`]
//! writes all three files into an output directory, each atomically.

pub mod evals;
pub mod json;
pub mod junit;
pub mod layer2;
mod layer2_summary;
pub mod markdown;
pub(crate) mod md;
pub mod model;
pub(crate) mod sarif;
pub mod telemetry;
pub(crate) mod telemetry_summary;
mod telemetry_trends;
pub mod wire;

#[cfg(test)]
mod snapshot_tests;
#[cfg(test)]
pub(crate) mod test_support;

use std::io;
use std::path::{Path, PathBuf};

use model::RunReport;

/// File name of the JSON report.
pub const REPORT_JSON: &str = "report.json";
/// File name of the JUnit XML report.
pub const JUNIT_XML: &str = "junit.xml";
/// File name of the Markdown summary.
pub const SUMMARY_MD: &str = "summary.md";

/// The paths [`write_all`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenFiles {
    /// `<out_dir>/report.json`.
    pub report_json: PathBuf,
    /// `<out_dir>/junit.xml`.
    pub junit_xml: PathBuf,
    /// `<out_dir>/summary.md`.
    pub summary_md: PathBuf,
}

/// A report file (or its directory) could not be written: an environment failure (exit
/// status 4).
#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {source}", path.display())]
pub struct WriteError {
    /// The file or directory that could not be created or written.
    pub path: PathBuf,
    /// The underlying IO error.
    #[source]
    pub source: io::Error,
}

/// Creates `out_dir` (and its parents) and writes `report.json`, `junit.xml` and `summary.md`
/// into it. Each file is written to a temporary file in `out_dir` and then renamed over the
/// target, so a reader never sees a half-written file.
///
/// # Errors
///
/// A [`WriteError`] naming the directory or file that failed. Files written before the failure
/// stay in place.
pub fn write_all(report: &RunReport, out_dir: &Path) -> Result<WrittenFiles, WriteError> {
    std::fs::create_dir_all(out_dir).map_err(|source| WriteError { path: out_dir.to_path_buf(), source })?;
    let report_json = out_dir.join(REPORT_JSON);
    let junit_xml = out_dir.join(JUNIT_XML);
    let summary_md = out_dir.join(SUMMARY_MD);
    write_atomic(&report_json, &json::render(report))?;
    write_atomic(&junit_xml, &junit::render(report))?;
    write_atomic(&summary_md, &markdown::render(report))?;
    Ok(WrittenFiles { report_json, junit_xml, summary_md })
}

/// Writes junit.xml alone to `path` (the Action's `junit-path`), creating its directory.
///
/// # Errors
/// A [`WriteError`] naming the directory or file that failed.
pub fn write_junit(report: &RunReport, path: &Path) -> Result<(), WriteError> {
    if let Some(parent) = path.parent().filter(|parent| !parent.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|source| WriteError { path: parent.to_path_buf(), source })?;
    }
    write_atomic(path, &junit::render(report))
}

/// Writes the SARIF log of `report` to `path` (`--sarif`), its results at `location`, creating
/// its directory.
///
/// # Errors
/// A [`WriteError`] naming the directory or file that failed.
pub(crate) fn write_sarif(
    report: &RunReport,
    path: &Path,
    location: Option<&sarif::Location>,
) -> Result<(), WriteError> {
    if let Some(parent) = path.parent().filter(|parent| !parent.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|source| WriteError { path: parent.to_path_buf(), source })?;
    }
    write_atomic(path, &sarif::of_report(report, location))
}

/// [`crate::atomic::write_atomic`], its error naming the file.
fn write_atomic(path: &Path, contents: &str) -> Result<(), WriteError> {
    crate::atomic::write_atomic(path, contents).map_err(|source| WriteError { path: path.to_path_buf(), source })
}

#[cfg(test)]
mod tests {
    use super::*;
    use test_support::sample_report;

    #[test]
    fn writes_three_files_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("nested/out");
        let report = sample_report();
        let files = write_all(&report, &out).unwrap();
        assert_eq!(files.report_json, out.join("report.json"));
        assert_eq!(files.junit_xml, out.join("junit.xml"));
        assert_eq!(files.summary_md, out.join("summary.md"));
        assert_eq!(std::fs::read_to_string(&files.report_json).unwrap(), json::render(&report));
        assert_eq!(std::fs::read_to_string(&files.junit_xml).unwrap(), junit::render(&report));
        assert_eq!(std::fs::read_to_string(&files.summary_md).unwrap(), markdown::render(&report));
        // Readable by others, like any file the user writes.
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&files.report_json).unwrap().permissions().mode();
        assert_eq!(mode & 0o044, 0o044, "mode {mode:o}");
        // Overwriting works and leaves no temporary files behind.
        write_all(&report, &out).unwrap();
        let mut names: Vec<String> =
            std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        assert_eq!(names, ["junit.xml", "report.json", "summary.md"]);
    }

    #[test]
    fn error_names_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, "not a directory").unwrap();
        let out = blocker.join("out");
        let err = write_all(&sample_report(), &out).unwrap_err();
        assert_eq!(err.path, out);
        assert!(err.to_string().starts_with("cannot write "));
        assert!(std::error::Error::source(&err).is_some());
    }
}
