//! Where `--sarif FILE` (input `sarif-path`, config `sarif_path`) is written, and the location
//! its results point at: in the Action, the line of the workflow step that runs us (the workflow
//! file named by `GITHUB_WORKFLOW_REF`, its first `uses:` line naming mcp-eval, else its line 1);
//! on the command line, the config file's line that names the server (`server.url` or
//! `server.command`) when the file lies below the working directory, else the workflow step's
//! line when the command runs in a GitHub workflow (`GITHUB_WORKFLOW_REF`), else the golden
//! set's first line, else the SARIF file's own: code scanning refuses a result without a
//! location ("expected at least one location", github/codeql-action#1738 and #2459).

use std::path::Path;

use super::{FrontEnd, Sources, env_vars, table};
use crate::report::sarif::Location;

/// The location of every SARIF result of this run: a file of the repository (`workspace`) and a
/// line. `golden_set` and `sarif` are the run's golden set and SARIF file, the command line's
/// last resorts.
pub(super) fn location(
    sources: &Sources<'_>,
    workspace: &Path,
    golden_set: Option<&Path>,
    sarif: &Path,
) -> Option<Location> {
    let workflow_step = || {
        let reference = (sources.lookup)(env_vars::GITHUB_WORKFLOW_REF)?;
        let uri = workflow_path(&reference)?;
        let text = std::fs::read_to_string(workspace.join(&uri)).unwrap_or_default();
        Some(Location { line: step_line(&text).unwrap_or(1), uri })
    };
    match sources.front_end {
        FrontEnd::Action => workflow_step(),
        FrontEnd::Cli => {
            let config_line = || {
                let (path, file) = sources.file?;
                let named = file.value(&table::SERVER_URL).or_else(|| file.value(&table::SERVER_COMMAND))?;
                let uri = relative_uri(path, workspace)?;
                Some(Location { uri, line: named.referenced.line().max(1) })
            };
            let first_line = |path: &Path| relative_uri(path, workspace).map(|uri| Location { uri, line: 1 });
            config_line()
                .or_else(workflow_step)
                .or_else(|| golden_set.and_then(first_line))
                .or_else(|| first_line(sarif))
                // A SARIF file outside the repository: its name, as the upload will know it.
                .or_else(|| {
                    let name = sarif.file_name()?.to_str()?.to_owned();
                    Some(Location { uri: name, line: 1 })
                })
        }
    }
}

/// The workflow file of `GITHUB_WORKFLOW_REF` (`owner/repo/.github/workflows/ci.yml@refs/heads/main`
/// → `.github/workflows/ci.yml`).
pub(crate) fn workflow_path(reference: &str) -> Option<String> {
    let path = reference.split('@').next()?;
    let mut parts = path.splitn(3, '/');
    let (_owner, _repo, file) = (parts.next()?, parts.next()?, parts.next()?);
    (file.starts_with(".github/") && !file.contains("..")).then(|| file.to_owned())
}

/// The 1-based line of the first step whose `uses:` names mcp-eval (the action, a fork of it, or
/// a local `./` checkout of it).
pub(crate) fn step_line(workflow: &str) -> Option<u64> {
    workflow
        .lines()
        .position(|line| {
            let line = line.trim_start().trim_start_matches("- ").trim_start();
            line.starts_with("uses:") && line.to_ascii_lowercase().contains("mcp-eval")
        })
        .map(|index| u64::try_from(index).unwrap_or(u64::MAX - 1) + 1)
}

/// `path` relative to `base`, `/`-separated, when it lies below it.
fn relative_uri(path: &Path, base: &Path) -> Option<String> {
    let absolute = |path: &Path| -> Option<std::path::PathBuf> {
        if path.is_absolute() {
            Some(path.to_path_buf())
        } else {
            std::env::current_dir().ok().map(|cwd| cwd.join(path))
        }
    };
    let (path, base) = (absolute(path)?, absolute(base)?);
    let clean = |path: &Path| -> std::path::PathBuf {
        path.components().filter(|part| !matches!(part, std::path::Component::CurDir)).collect()
    };
    let relative = clean(&path).strip_prefix(clean(&base)).ok()?.to_path_buf();
    let parts: Vec<String> = relative
        .components()
        .map(|part| match part {
            std::path::Component::Normal(name) => name.to_str().map(str::to_owned),
            _ => None,
        })
        .collect::<Option<_>>()?;
    (!parts.is_empty()).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workflow_ref_names_the_file_and_the_step_its_line() {
        assert_eq!(
            workflow_path("octo/server/.github/workflows/mcp.yml@refs/heads/main").as_deref(),
            Some(".github/workflows/mcp.yml")
        );
        assert_eq!(workflow_path("octo/server/../etc/passwd@x"), None);
        assert_eq!(workflow_path("nothing"), None);
        let workflow = "on: push\njobs:\n  mcp:\n    steps:\n      - uses: actions/checkout@v4\n      - uses: org/mcp-eval-action@v1\n        with:\n";
        assert_eq!(step_line(workflow), Some(6));
        assert_eq!(step_line("on: push\n"), None);
    }

    #[test]
    fn a_path_below_the_base_is_relative_with_slashes_and_others_are_none() {
        assert_eq!(
            relative_uri(Path::new("/w/repo/conf/mcp.yaml"), Path::new("/w/repo")).as_deref(),
            Some("conf/mcp.yaml")
        );
        assert_eq!(relative_uri(Path::new("/elsewhere/mcp.yaml"), Path::new("/w/repo")), None);
    }
}
