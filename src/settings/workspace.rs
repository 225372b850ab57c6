//! The workspace that relative paths are resolved against, and which paths the runner can see.
//!
//! A Docker action runs in a container that shares one directory with the runner: the
//! workspace, mounted at [`CONTAINER_WORKSPACE`] (actions/runner's container handler sets
//! `GITHUB_WORKSPACE` to it). A report written anywhere else is written on the container's own
//! disk and deleted with it, and a file read from anywhere else is not the runner's file. So when
//! the workspace is that mount, every path setting outside it is refused at start (exit status 2)
//! instead of being lost silently. Run as a plain step on the runner (or from the command line),
//! any path is fine.

use std::path::{Component, Path, PathBuf};

use super::{Problem, Source};

/// Where actions/runner's container handler mounts the workspace (`GITHUB_WORKSPACE` inside a
/// Docker action).
pub(crate) const CONTAINER_WORKSPACE: &str = "/github/workspace";

/// The directory relative paths are resolved against (the Action's workspace; `None` on the
/// command line, where they stay relative to the working directory).
#[derive(Debug, Clone, Default)]
pub(crate) struct Workspace {
    root: Option<PathBuf>,
    /// True in the container handler: only `root` is shared with the runner.
    shared_only: bool,
}

impl Workspace {
    /// The workspace at `root` (`None`: the command line's working directory).
    pub(crate) fn new(root: Option<PathBuf>) -> Self {
        let shared_only = root.as_deref().is_some_and(|root| normalized(root) == Path::new(CONTAINER_WORKSPACE));
        Self { root, shared_only }
    }

    /// The workspace's directory (`.` on the command line).
    pub(crate) fn root(&self) -> PathBuf {
        self.root.clone().unwrap_or_else(|| PathBuf::from("."))
    }

    /// `text` as a path: below the workspace when relative, as given otherwise.
    pub(crate) fn join(&self, text: &str) -> PathBuf {
        let path = Path::new(text);
        match &self.root {
            Some(root) if !path.is_absolute() => root.join(path),
            _ => path.to_path_buf(),
        }
    }

    /// `text` as outputs, annotations and reports name it: relative to the workspace when it
    /// lies below it (the runner cannot open `/github/workspace/…`), as given otherwise.
    pub(crate) fn label(&self, text: &str) -> String {
        match &self.root {
            Some(root) => {
                let path = normalized(&self.join(text));
                match path.strip_prefix(normalized(root)) {
                    Ok(relative) if relative.as_os_str().is_empty() => ".".to_owned(),
                    Ok(relative) => relative.display().to_string(),
                    Err(_) => text.to_owned(),
                }
            }
            None => text.to_owned(),
        }
    }

    /// The problem with the path setting `text` from `source`, when only the workspace is
    /// shared with the runner and `text` lies outside it (`..` counted, links not followed).
    pub(crate) fn refuse_outside(&self, source: &Source, text: &str) -> Option<Problem> {
        let root = self.root.as_deref().filter(|_| self.shared_only)?;
        if normalized(&self.join(text)).starts_with(normalized(root)) {
            return None;
        }
        Some(Problem::new(
            source,
            format!(
                "`{text}` is outside the workspace: this Docker action runs in a container that shares only the workspace ({CONTAINER_WORKSPACE}) with the runner, so a file elsewhere is the container's own and is lost with it"
            ),
            "give a path relative to the workspace, e.g. mcp-eval-report, and upload it from there with actions/upload-artifact (`${{ github.workspace }}` and `${{ runner.temp }}` name the runner's directories, which the container does not see)",
        ))
    }
}

impl Workspace {
    /// `picked` when it may be used; `None`, with its problem added to `problems`, when it is a
    /// path outside a shared-only workspace ([`Workspace::refuse_outside`]).
    pub(crate) fn shared(
        &self,
        picked: Option<(Source, String)>,
        problems: &mut Vec<Problem>,
    ) -> Option<(Source, String)> {
        let (source, text) = picked?;
        let text = text.trim().to_owned();
        match self.refuse_outside(&source, &text) {
            Some(problem) => {
                problems.push(problem);
                None
            }
            None => Some((source, text)),
        }
    }
}

/// `path` with `.` dropped and `..` applied, without touching the file system.
fn normalized(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(name: &str) -> Source {
        Source::Input { name: name.into(), var: format!("INPUT_{}", name.to_ascii_uppercase()) }
    }

    #[test]
    fn in_the_container_handler_a_path_outside_the_workspace_is_refused() {
        let workspace = Workspace::new(Some(PathBuf::from(CONTAINER_WORKSPACE)));
        for outside in ["/tmp/report", "../report", "out/../../elsewhere", "/home/runner/work/_temp/r"] {
            let problem = workspace.refuse_outside(&input("report-path"), outside).expect(outside);
            let text = problem.to_string();
            assert!(text.contains("INPUT_REPORT-PATH") && text.contains("shares only the workspace"), "{text}");
        }
        for inside in ["out", "./out/x.xml", "/github/workspace/out", "a/../b"] {
            assert!(workspace.refuse_outside(&input("report-path"), inside).is_none(), "{inside}");
        }
    }

    #[test]
    fn on_the_runner_itself_any_path_is_accepted() {
        let workspace = Workspace::new(Some(PathBuf::from("/home/runner/work/repo/repo")));
        assert!(workspace.refuse_outside(&input("report-path"), "/tmp/report").is_none());
        assert!(Workspace::new(None).refuse_outside(&input("report-path"), "/tmp/report").is_none());
    }

    #[test]
    fn labels_are_relative_to_the_workspace() {
        let workspace = Workspace::new(Some(PathBuf::from(CONTAINER_WORKSPACE)));
        assert_eq!(workspace.label("/github/workspace/out/junit.xml"), "out/junit.xml");
        assert_eq!(workspace.label("./out"), "out");
        assert_eq!(workspace.label("out"), "out");
        assert_eq!(workspace.label("/github/workspace"), ".");
        assert_eq!(Workspace::new(None).label("/tmp/x"), "/tmp/x");
    }
}
