//! The commands that prepare what an evaluation reads: [`check`] (`mcp-eval golden check`: the
//! set's hashes, and every tool name it names against a server's `tools/list` when one is given),
//! [`init`] (`mcp-eval golden init`: a starter set drafted from a server's tools, by template or,
//! with `--model`, by a model through [`init_model`]) and [`calibrate`] (`mcp-eval judge
//! calibrate`: the judge measured on hand labels, [`labels`]). The formats they write, golden
//! sets and calibration files, are [`crate::golden`] and [`crate::calibration`].

pub(crate) mod calibrate;
pub(crate) mod init;
pub(crate) mod init_model;
pub(crate) mod labels;

use std::io::Write as _;
use std::path::PathBuf;

use crate::error::{Kind, UserError};
use crate::golden::{Problem, load, unknown_tools};
use crate::mcp::era::{self, Target};
use crate::mcp::evidence::Redactor;
use crate::mcp::tools::ToolSurface;
use crate::verdict::{ExitStatus, Met};

/// `mcp-eval golden check FILE [--server-url URL | --server-cmd CMD]`: prints the set hash and
/// each case hash on stdout, or every problem on stderr (exit 2).
pub(crate) async fn check(path: PathBuf, server: Option<Target>) -> ExitStatus {
    let set = match load::load(&path) {
        Ok(set) => set,
        Err(problems) => return report(problems),
    };
    let mut checked = None;
    if let Some(target) = server {
        let surface = match list_tools(&target).await {
            Ok(surface) => surface,
            Err(error) => return refuse(&error),
        };
        let names: Vec<&str> = surface.tools.iter().map(|tool| tool.name.as_str()).collect();
        let problems = unknown_tools(&set, &names);
        if !problems.is_empty() {
            return report(problems);
        }
        checked = Some(names.len());
    }
    let mut out = format!("golden set {}: {} case(s)\nset {}\n", set.path.display(), set.cases.len(), set.hash);
    for case in &set.cases {
        out.push_str(&format!("case {} {}\n", case.id, case.hash));
    }
    out.push_str(&match checked {
        Some(listed) => {
            format!("tool names: every one the set names is listed by the server ({listed} tool(s) listed)\n")
        }
        None => "tool names: not checked against a server (give --server-url, --server-cmd or --config)\n".into(),
    });
    let _ = std::io::stdout().write_all(out.as_bytes());
    Met::nothing().exit_status()
}

/// Prints `error` (stderr) and gives the status the exit table gives its kind.
pub(crate) fn refuse(error: &UserError) -> ExitStatus {
    let _ = writeln!(std::io::stderr(), "{error}");
    error.exit_status()
}

/// Prints every problem (stderr) and gives exit status 2.
fn report(problems: Vec<Problem>) -> ExitStatus {
    let mut stderr = std::io::stderr();
    let count = problems.len();
    for problem in problems {
        let _ = writeln!(stderr, "{}", problem.into_error());
    }
    let _ = writeln!(stderr, "the golden set has {count} problem(s)");
    Met::of(Kind::InvalidInput).exit_status()
}

/// Connects (layer-0 era detection) and walks every `tools/list` page; an error means the
/// server could not be reached or listed (exit status 3).
async fn list_tools(target: &Target) -> Result<ToolSurface, UserError> {
    let connected = era::connect(target, Redactor::new(Vec::new()), 0).await.map_err(|unreachable| {
        UserError::new(Kind::Unreachable, format!("cannot reach the server: {}", unreachable.reason))
            .with_hint("check --server-url / --server-cmd (`mcp-eval run` against it says more)")
    })?;
    let listed = crate::conformance::list_tools_on(&connected).await;
    connected.shutdown().await;
    listed.map_err(|problem| {
        UserError::new(Kind::Unreachable, format!("cannot list the server's tools: {problem}"))
            .with_hint("`mcp-eval run` against the server grades its tools/list")
    })
}
