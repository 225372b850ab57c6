//! The static scan (SEC-1…SEC-8) on real servers' own descriptions, installed pinned by
//! `scripts/install-servers.sh` into `.interop/node-scan` and `.interop/venv-scan/NAME` (one venv
//! per Python server): 22 servers of different authors and domains, Node and Python — the
//! official reference servers (filesystem, memory, sequential-thinking, git, time, and everything
//! from the interop set, plus the archived GitHub and Brave Search ones), Playwright's and Chrome
//! DevTools' browser servers, ESLint's, MongoDB's, DBHub's (SQL), Context7's (library docs), Excel
//! and Word documents, DuckDuckGo and arXiv search, and servers whose descriptions are in
//! Chinese or French.
//! False positives make people switch a scan off, so every one of them must give zero failing
//! SEC rows, and each warning is listed here with the reason it is right (today there is none).
//! A test sends nothing past loopback, and layer 0 calls every tool annotated read-only. So a
//! server whose tools stay on this machine runs as it is; a server whose tools (or telemetry)
//! would reach the internet runs in a network namespace of its own with nothing but its own
//! loopback (`unshare -rn`, see [`offline`]): it starts and lists its tools as usual, and a call
//! that would leave the machine fails on the spot. Servers that need the network or an account
//! just to start are not in the set.

use std::path::PathBuf;

use crate::support::{repo_root, run};

/// The calibration set's install (the Node modules, the directory of the Python venvs), or a
/// failure that names the fix.
fn scan_servers() -> (PathBuf, PathBuf) {
    let interop = repo_root().join(".interop");
    let (node, venv) = (interop.join("node-scan").join("node_modules"), interop.join("venv-scan"));
    assert!(
        node.join("chrome-devtools-mcp").is_dir() && venv.join("arxiv-mcp-server").join("bin").is_dir(),
        "the scan's calibration servers are not installed in {}: run `scripts/install-servers.sh` first",
        interop.display()
    );
    (node, venv)
}

/// Runs layer 0 on a stdio server and checks its SEC rows: none fails, and the warnings are
/// exactly `warnings` (row id, a text its message must hold).
fn calibrate(name: &str, command: &str, env: &[&str], warnings: &[(&str, &str)]) {
    let mut args = vec!["--server-cmd", command, "--layers", "0", "--timeout-seconds", "60"];
    for entry in env {
        args.extend(["--server-env", entry]);
    }
    let outcome = run(&args);
    let rows: Vec<(String, String, String)> = outcome.report()["checks"]
        .as_array()
        .unwrap_or_else(|| {
            panic!("{name}: no checks in the report: {}", String::from_utf8_lossy(&outcome.output.stderr))
        })
        .iter()
        .filter(|check| check["id"].as_str().is_some_and(|id| id.starts_with("SEC-")))
        .map(|check| {
            let text = |key: &str| check[key].as_str().unwrap_or_default().to_owned();
            (text("id"), text("status"), text("message"))
        })
        .collect();
    assert_eq!(
        rows.len(),
        8,
        "{name}: every SEC row is reported: {rows:#?}\n{}",
        String::from_utf8_lossy(&outcome.output.stderr)
    );
    let failing: Vec<_> = rows.iter().filter(|(_, status, _)| status == "fail").collect();
    assert!(failing.is_empty(), "{name}: a real server's own descriptions fail the scan: {failing:#?}");
    let not_applicable: Vec<_> = rows.iter().filter(|(_, status, _)| status == "not_applicable").collect();
    assert!(
        not_applicable.is_empty(),
        "{name}: the server listed nothing? {not_applicable:#?}\n{}",
        String::from_utf8_lossy(&outcome.output.stderr)
    );
    let warned: Vec<&(String, String, String)> = rows.iter().filter(|(_, status, _)| status == "warn").collect();
    assert_eq!(
        warned.iter().map(|(id, ..)| id.as_str()).collect::<Vec<_>>(),
        warnings.iter().map(|(id, _)| *id).collect::<Vec<_>>(),
        "{name}: the warnings are the reviewed ones: {warned:#?}"
    );
    for ((_, _, message), (id, text)) in warned.iter().zip(warnings) {
        assert!(message.contains(text), "{name}: {id}: {message}");
    }
}

fn node(path: &std::path::Path, script: &str) -> String {
    format!("node {}", path.join(script).display())
}

/// The command `command` of the Python server installed as `package` (its own venv).
fn python(venvs: &std::path::Path, package: &str, command: &str) -> String {
    venvs.join(package).join("bin").join(command).display().to_string()
}

/// `command` in a network namespace of its own (`unshare -rn`: a user namespace, so no
/// privilege is needed), where nothing but its own loopback exists: a server whose tools would
/// reach the internet starts and lists them, and a call of one fails on this machine.
fn offline(command: &str) -> String {
    let works =
        std::process::Command::new("unshare").args(["-rn", "true"]).status().is_ok_and(|status| status.success());
    assert!(
        works,
        "`unshare -rn true` failed: the servers whose tools reach the internet run in a network namespace of their own (util-linux's unshare, with user namespaces allowed)"
    );
    format!("unshare -rn {command}")
}

#[test]
fn the_reference_filesystem_server_passes_the_scan() {
    let (modules, _) = scan_servers();
    let root = tempfile::tempdir().expect("temp dir");
    let command = format!(
        "{} {}",
        node(&modules, "@modelcontextprotocol/server-filesystem/dist/index.js"),
        root.path().display()
    );
    calibrate("server-filesystem", &command, &[], &[]);
}

#[test]
fn the_reference_memory_and_sequential_thinking_servers_pass_the_scan() {
    let (modules, _) = scan_servers();
    let dir = tempfile::tempdir().expect("temp dir");
    let memory = format!("MEMORY_FILE_PATH={}", dir.path().join("memory.jsonl").display());
    calibrate("server-memory", &node(&modules, "@modelcontextprotocol/server-memory/dist/index.js"), &[&memory], &[]);
    calibrate(
        "server-sequential-thinking",
        &node(&modules, "@modelcontextprotocol/server-sequential-thinking/dist/index.js"),
        &[],
        &[],
    );
}

#[test]
fn the_reference_everything_server_passes_the_scan() {
    // Installed with the interop set (`.interop/node`), a 2025-11-25 server over stdio: the scan
    // runs on every era.
    let (modules, _) = scan_servers();
    let everything = modules
        .parent()
        .and_then(std::path::Path::parent)
        .expect("the .interop directory")
        .join("node")
        .join("node_modules")
        .join("@modelcontextprotocol/server-everything/dist/index.js");
    calibrate("server-everything", &format!("node {} stdio", everything.display()), &[], &[]);
}

#[test]
fn playwrights_server_passes_the_scan() {
    let (modules, _) = scan_servers();
    calibrate("@playwright/mcp", &node(&modules, "@playwright/mcp/cli.js"), &[], &[]);
}

#[test]
fn servers_with_chinese_descriptions_pass_the_scan() {
    let (modules, _) = scan_servers();
    calibrate("howtocook-mcp", &node(&modules, "howtocook-mcp/build/index.js"), &[], &[]);
    // Both map servers refuse to start without a key; they list their tools with any value and
    // have no read-only tool, so layer 0 calls none of them.
    calibrate(
        "amap-maps-mcp-server",
        &node(&modules, "@amap/amap-maps-mcp-server/build/index.js"),
        &["AMAP_MAPS_API_KEY=not-a-key"],
        &[],
    );
    calibrate(
        "mcp-server-baidu-map",
        &node(&modules, "@baidumap/mcp-server-baidu-map/dist/index.js"),
        &["BAIDU_MAP_API_KEY=not-a-key"],
        &[],
    );
}

#[test]
fn a_server_with_french_descriptions_passes_the_scan() {
    // Its forecasts come from a weather API, and its tools are not annotated read-only: layer 0
    // calls none of them.
    let (_, venvs) = scan_servers();
    calibrate("mcp-meteo", &python(&venvs, "mcp-meteo", "mcp-meteo"), &[], &[]);
}

#[test]
fn the_reference_git_and_time_servers_pass_the_scan() {
    let (_, venvs) = scan_servers();
    let repository = tempfile::tempdir().expect("temp dir");
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=scan", "-c", "user.email=scan@localhost"])
            .args(args)
            .current_dir(repository.path())
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["commit", "-q", "--allow-empty", "-m", "first"]);
    let command =
        format!("{} --repository {}", python(&venvs, "mcp-server-git", "mcp-server-git"), repository.path().display());
    calibrate("mcp-server-git", &command, &[], &[]);
    // Installed with the interop set (`.interop/venv`).
    let time = venvs.parent().expect("the .interop directory").join("venv").join("bin").join("mcp-server-time");
    calibrate("mcp-server-time", &format!("{} --local-timezone UTC", time.display()), &[], &[]);
}

#[test]
fn document_and_database_servers_pass_the_scan() {
    let (modules, venvs) = scan_servers();
    let dir = tempfile::tempdir().expect("temp dir");
    let files = format!("EXCEL_FILES_PATH={}", dir.path().display());
    calibrate(
        "excel-mcp-server",
        &format!("{} stdio", python(&venvs, "excel-mcp-server", "excel-mcp-server")),
        &[&files],
        &[],
    );
    // The Word server lists the documents of its working directory and reads a `.env` there:
    // it starts in an empty one.
    let word =
        format!("cd {} && {}", dir.path().display(), python(&venvs, "office-word-mcp-server", "word_mcp_server"));
    calibrate("office-word-mcp-server", &word, &[], &[]);
    // DBHub's demo is an in-memory SQLite database, which needs Node 22's built-in `node:sqlite`
    // (the interop set's node22).
    let node22 =
        modules.parent().and_then(std::path::Path::parent).expect("the .interop directory").join("bin").join("node22");
    calibrate(
        "@bytebase/dbhub",
        &format!("{} {} --demo", node22.display(), modules.join("@bytebase/dbhub/dist/index.js").display()),
        &[],
        &[],
    );
}

#[test]
fn eslints_server_passes_the_scan() {
    let (modules, _) = scan_servers();
    calibrate("@eslint/mcp", &node(&modules, "@eslint/mcp/src/mcp-cli.js"), &[], &[]);
}

#[test]
fn servers_of_web_apis_pass_the_scan_offline() {
    let (modules, venvs) = scan_servers();
    // The archived reference servers need a token or a key to start; any value lists the tools.
    calibrate(
        "server-github",
        &offline(&node(&modules, "@modelcontextprotocol/server-github/dist/index.js")),
        &["GITHUB_PERSONAL_ACCESS_TOKEN=not-a-token"],
        &[],
    );
    calibrate(
        "server-brave-search",
        &offline(&node(&modules, "@modelcontextprotocol/server-brave-search/dist/index.js")),
        &["BRAVE_API_KEY=not-a-key"],
        &[],
    );
    // Context7's two tools are read-only and ask its web service.
    calibrate("@upstash/context7-mcp", &offline(&node(&modules, "@upstash/context7-mcp/dist/index.js")), &[], &[]);
    calibrate(
        "duckduckgo-mcp-server",
        &offline(&python(&venvs, "duckduckgo-mcp-server", "duckduckgo-mcp-server")),
        &[],
        &[],
    );
    let papers = tempfile::tempdir().expect("temp dir");
    calibrate(
        "arxiv-mcp-server",
        &offline(&format!(
            "{} --storage-path {}",
            python(&venvs, "arxiv-mcp-server", "arxiv-mcp-server"),
            papers.path().display()
        )),
        &[],
        &[],
    );
}

#[test]
fn mongodbs_and_chrome_devtools_servers_pass_the_scan_offline() {
    // Both report usage to their vendors (switched off here too), and their read-only tools would
    // reach a database or a browser's pages.
    let (modules, _) = scan_servers();
    let home = tempfile::tempdir().expect("temp dir");
    let home = format!("HOME={}", home.path().display());
    calibrate(
        "mongodb-mcp-server",
        &offline(&node(&modules, "mongodb-mcp-server/dist/esm/index.js")),
        &[&home, "MDB_MCP_TELEMETRY=disabled", "DO_NOT_TRACK=1"],
        &[],
    );
    calibrate(
        "chrome-devtools-mcp",
        &offline(&format!(
            "{} --no-usage-statistics",
            node(&modules, "chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js")
        )),
        &[&home],
        &[],
    );
}
