//! The commands that prepare what an evaluation reads: [`check`] (`mcp-eval golden check`: the
//! set's hashes, and every tool name it names against a server's `tools/list` when one is given;
//! with `--execute`, every expected call made on that server, [`execute`]),
//! [`init`] (`mcp-eval golden init`: a starter set drafted from a server's tools, by template or,
//! with `--model`, by a model through [`init_model`]) and [`calibrate`] (`mcp-eval judge
//! calibrate`: the judge measured on hand labels, [`labels`]). The formats they write, golden
//! sets and calibration files, are [`crate::golden`] and [`crate::calibration`].

pub(crate) mod calibrate;
pub(crate) mod execute;
pub(crate) mod init;
pub(crate) mod init_model;
pub(crate) mod labels;

use std::io::Write as _;
use std::path::PathBuf;

use crate::error::{Kind, UserError};
use crate::golden::{Problem, load, unknown_tools};
use crate::mcp::era::{self, Target};
use crate::mcp::evidence::Redactor;
use crate::verdict::{ExitStatus, Met};

/// The server `golden check` and `golden init` talk to: where it is (signed in when asked), and
/// the redactor of the secrets to keep out of what they print (no `Debug`: it holds them).
pub(crate) struct CheckServer {
    /// Where it is.
    pub target: Target,
    /// Header and environment values, the sign-in's secret and tokens, redacted from what the
    /// server's answers print.
    pub redactor: Redactor,
}

/// `mcp-eval golden check FILE [--server-url URL | --server-cmd CMD] [--execute]`: prints the
/// set hash and each case hash on stdout, or every problem on stderr (exit 2); with a server,
/// checks every tool name of the set against its `tools/list`, and with `execute` then makes
/// every expected call of the set on it that `execute` allows ([`execute`]: exit 1 when one
/// fails).
pub(crate) async fn check(path: PathBuf, server: Option<CheckServer>, execute: Option<execute::Sends>) -> ExitStatus {
    let set = match load::load_naming(&path) {
        Ok(set) => set,
        Err((problems, named)) => return report(with_unknown_names(&path, problems, &named, server.as_ref()).await),
    };
    let mut out = format!("golden set {}: {} case(s)\nset {}\n", set.path.display(), set.cases.len(), set.hash);
    for case in &set.cases {
        out.push_str(&format!("case {} {}\n", case.id, case.hash));
    }
    let Some(server) = server else {
        out.push_str("tool names: not checked against a server (give --server-url, --server-cmd or --config)\n");
        let _ = std::io::stdout().write_all(out.as_bytes());
        return Met::nothing().exit_status();
    };
    let redactor = server.redactor;
    let connected = match connect(&server.target, redactor.clone()).await {
        Ok(connected) => connected,
        Err(error) => return refuse(&error),
    };
    let against = server_label(&server.target, &redactor);
    let status = check_on(&set, &connected, &redactor, (out, &against), execute).await;
    connected.shutdown().await;
    status
}

/// The server as `golden check` names it: its URL, or its command (secrets redacted).
fn server_label(target: &Target, redactor: &Redactor) -> String {
    match target {
        Target::Http(http) => redactor.redact(&http.url),
        Target::Stdio { command, .. } => format!("the command `{}`", redactor.redact(command)),
    }
}

/// The line that says what the tool names were checked against and what was missing (stderr,
/// before the problems that name each miss).
fn misses_line(against: &str, listed: usize, missing: usize) -> String {
    format!(
        "tool names: checked against {against} ({listed} tool(s) listed): {missing} name(s) the set gives not found"
    )
}

/// The rest of `golden check` over an open session: the tool names (checked against the server
/// `against` names, which the output says), then (`execute`) the calls.
async fn check_on(
    set: &crate::golden::GoldenSet,
    connected: &era::Connected,
    redactor: &Redactor,
    (mut out, against): (String, &str),
    execute: Option<execute::Sends>,
) -> ExitStatus {
    let surface = match crate::conformance::list_tools_on(connected).await {
        Ok(surface) => surface,
        Err(problem) => return refuse(&unlisted(problem)),
    };
    let names: Vec<&str> = surface.tools.iter().map(|tool| tool.name.as_str()).collect();
    let problems = unknown_tools(set, &names);
    if !problems.is_empty() {
        let _ = writeln!(std::io::stderr(), "{}", misses_line(against, names.len(), problems.len()));
        return report(problems);
    }
    out.push_str(&format!(
        "tool names: every one the set names is listed by the server ({} tool(s) listed), checked against {against}\n",
        names.len()
    ));
    let _ = std::io::stdout().write_all(out.as_bytes());
    let mut met = Met::nothing();
    if let Some(sends) = execute {
        met.verdict_failed = execute::run(set, connected, &surface, redactor, sends).await.failed();
    }
    met.exit_status()
}
/// The problems of a set that did not load, and, when a server is given and can be listed, the
/// tool names it does not list among them (in file order): every fix in one pass, not the names
/// only once the rest is fixed.
async fn with_unknown_names(
    path: &std::path::Path,
    mut problems: Vec<Problem>,
    named: &[crate::golden::NamedTool],
    server: Option<&CheckServer>,
) -> Vec<Problem> {
    let Some(server) = server.filter(|_| !named.is_empty()) else { return problems };
    // A server that cannot be reached or listed leaves the names unchecked: the file's own
    // problems are still every one found.
    let Ok(surface) = list_tools(server).await else { return problems };
    let names: Vec<&str> = surface.tools.iter().map(|tool| tool.name.as_str()).collect();
    let misses = crate::golden::unknown_names(path, named, &names);
    if !misses.is_empty() {
        let against = server_label(&server.target, &server.redactor);
        let _ = writeln!(std::io::stderr(), "{}", misses_line(&against, names.len(), misses.len()));
    }
    problems.extend(misses);
    problems.sort_by_key(|problem| problem.position().unwrap_or((u64::MAX, u64::MAX)));
    problems
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

/// Connects (layer-0 era detection); an error means the server could not be reached (exit
/// status 3).
async fn connect(target: &Target, redactor: Redactor) -> Result<era::Connected, UserError> {
    era::connect(target, redactor, 0).await.map_err(|unreachable| {
        UserError::new(Kind::Unreachable, format!("cannot reach the server: {}", unreachable.reason))
            .with_hint("check --server-url / --server-cmd (`mcp-eval run` against it says more)")
    })
}

/// Connects and walks every `tools/list` page; an error means the server could not be reached
/// or listed (exit status 3).
async fn list_tools(server: &CheckServer) -> Result<crate::mcp::tools::ToolSurface, UserError> {
    let connected = connect(&server.target, server.redactor.clone()).await?;
    let listed = crate::conformance::list_tools_on(&connected).await;
    connected.shutdown().await;
    listed.map_err(unlisted)
}

/// The error of a `tools/list` walk that failed (exit status 3).
fn unlisted(problem: crate::conformance::Unlisted) -> UserError {
    UserError::new(Kind::Unreachable, format!("cannot list the server's tools: {problem}"))
        .with_hint("`mcp-eval run` against the server grades its tools/list")
}
