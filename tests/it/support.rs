//! Helpers shared by the integration tests: run `mcp-eval`, start the embedded demo server
//! (optionally with faults), read the reports back.

#![allow(dead_code, reason = "each test module uses a different subset")]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;

/// The `mcp-eval` binary under test.
pub(crate) fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_mcp-eval"))
}

/// The outcome of one `mcp-eval run`.
pub(crate) struct Run {
    /// The process output.
    pub output: Output,
    /// The parsed report.json, when it was written.
    pub report: Option<Value>,
    /// The directory with the reports (kept alive while the run is).
    pub dir: tempfile::TempDir,
}

impl Run {
    /// The exit status.
    pub(crate) fn code(&self) -> i32 {
        self.output.status.code().unwrap_or(-1)
    }

    /// The report, which must exist.
    pub(crate) fn report(&self) -> &Value {
        self.report.as_ref().unwrap_or_else(|| panic!("no report.json; stderr: {}", self.stderr()))
    }

    /// stderr as text.
    pub(crate) fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// The check with this id.
    pub(crate) fn check(&self, id: &str) -> &Value {
        self.report()["checks"]
            .as_array()
            .and_then(|checks| checks.iter().find(|check| check["id"] == id))
            .unwrap_or_else(|| panic!("no check {id} in the report"))
    }

    /// The status of the check with this id.
    pub(crate) fn status(&self, id: &str) -> String {
        self.check(id)["status"].as_str().unwrap_or_default().to_owned()
    }

    /// A file of the report directory, as text.
    pub(crate) fn file(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name))
            .unwrap_or_else(|error| panic!("cannot read {name}: {error}"))
    }

    /// Every file of the report directory plus stdout and stderr, as one text (secret scans).
    pub(crate) fn everything(&self) -> String {
        let mut all = String::from_utf8_lossy(&self.output.stdout).into_owned();
        all.push_str(&self.stderr());
        for name in ["report.json", "junit.xml", "summary.md"] {
            if let Ok(text) = std::fs::read_to_string(self.dir.path().join(name)) {
                all.push_str(&text);
            }
        }
        all
    }
}

/// Runs `mcp-eval run ARGS --out <temp dir>`.
pub(crate) fn run(args: &[&str]) -> Run {
    run_with_env(args, &[])
}

/// Runs `mcp-eval run ARGS --out <temp dir>` with these variables added to its environment.
pub(crate) fn run_with_env(args: &[&str], vars: &[(&str, &str)]) -> Run {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().to_str().expect("utf-8 path").to_owned();
    let output = Command::new(binary())
        .arg("run")
        .args(args)
        .args(["--out", &out, "--quiet"])
        .envs(vars.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("run mcp-eval");
    let report =
        std::fs::read_to_string(dir.path().join("report.json")).ok().and_then(|text| serde_json::from_str(&text).ok());
    Run { output, report, dir }
}

/// A demo server started as a child process; killed on drop.
pub(crate) struct DemoServer {
    child: Child,
    /// Its endpoint URL.
    pub url: String,
}

impl DemoServer {
    /// Starts `mcp-eval demo-server --port 0` with these faults and waits for its URL.
    pub(crate) fn start(faults: &[&str]) -> Self {
        let args: Vec<String> = faults.iter().flat_map(|fault| ["--fault".to_owned(), (*fault).to_owned()]).collect();
        Self::start_with(&args.iter().map(String::as_str).collect::<Vec<_>>())
    }

    /// Starts `mcp-eval demo-server --port 0 ARGS` and waits for its URL.
    pub(crate) fn start_with(args: &[&str]) -> Self {
        let mut command = Command::new(binary());
        command.args(["demo-server", "--port", "0"]).args(args);
        let mut child = command.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().expect("start demo server");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).expect("read the demo server URL");
        let url = line.trim().to_owned();
        assert!(url.starts_with("http://127.0.0.1:"), "unexpected demo server output: {url:?}");
        Self { child, url }
    }
}

impl Drop for DemoServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The command line that starts the demo server over stdio with these faults.
pub(crate) fn demo_stdio_command(faults: &[&str]) -> String {
    let mut command = format!("'{}' demo-server --stdio", binary().display());
    for fault in faults {
        command.push_str(&format!(" --fault {fault}"));
    }
    command
}

/// A stdio server command that writes the environment it was started with to a new file in
/// `dir` (one per process: `env.<pid>`), then becomes the demo server.
pub(crate) fn env_dumping_stdio_command(dir: &Path) -> String {
    format!("env > '{}/env.'$$; exec {}", dir.display(), demo_stdio_command(&[]))
}

/// The environments the processes of [`env_dumping_stdio_command`] saw, one text per process.
pub(crate) fn env_dumps(dir: &Path) -> Vec<String> {
    let mut dumps: Vec<String> = std::fs::read_dir(dir)
        .expect("the dump directory")
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("env."))
        .map(|entry| std::fs::read_to_string(entry.path()).expect("an env dump"))
        .collect();
    dumps.sort();
    dumps
}

/// The repository root.
pub(crate) fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}
