//! The static scan (SEC-1…SEC-8) on real servers' own descriptions, installed pinned by
//! `scripts/install-servers.sh` into `.interop/node-scan` and `.interop/venv-scan`: the official
//! reference servers (filesystem, memory, sequential-thinking, and everything from the interop
//! set), Playwright's (25 tools), and servers whose descriptions are in Chinese or French.
//! False positives make people switch a scan off, so every one of them must give zero failing
//! SEC rows, and each warning is listed here with the reason it is right (today there is none).
//! Only servers whose read-only tools stay on this machine are in the set: layer 0 calls those
//! tools, and a test sends nothing past loopback (so the reference fetch server, and vendor
//! servers that call their APIs, such as Notion's, are not).

use std::path::PathBuf;

use crate::support::{repo_root, run};

/// The calibration set's install, or a failure that names the fix.
fn scan_servers() -> (PathBuf, PathBuf) {
    let interop = repo_root().join(".interop");
    let (node, venv) = (interop.join("node-scan").join("node_modules"), interop.join("venv-scan"));
    assert!(
        node.is_dir() && venv.join("bin").join("mcp-meteo").is_file(),
        "the scan's calibration servers are not installed in {}: run `scripts/install-servers.sh` first",
        interop.display()
    );
    (node, venv)
}

/// Runs layer 0 on a stdio server and checks its SEC rows: none fails, and the warnings are
/// exactly `warnings` (row id, a text its message must hold).
fn calibrate(name: &str, command: &str, env: &[&str], warnings: &[(&str, &str)]) {
    let mut args = vec!["--server-cmd", command, "--layers", "0", "--timeout-seconds", "20"];
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
    let (_, venv) = scan_servers();
    calibrate("mcp-meteo", &venv.join("bin").join("mcp-meteo").display().to_string(), &[], &[]);
}
