//! The dependency manifests of the migration scan: which files are manifests, whether they name
//! MCP at all (the scan's context for its gated rules), and the SDK pins that cannot speak
//! 2026-07-28 — `@modelcontextprotocol/sdk` 1.x (MIG-14: the v1.x line implements MCP up to
//! 2025-11-25; 2026-07-28 is in the v2 packages `@modelcontextprotocol/server` and `/client`)
//! and the Python SDK `mcp` below 2 (MIG-15). A range is a finding only when it admits no
//! version at or above 2.0.0 ([`super::versions`]); an unreadable one (a tag, a URL) is not.
//!
//! Read: `package.json` (`dependencies`, `devDependencies`, `peerDependencies`,
//! `optionalDependencies`, `npm:` aliases), `package-lock.json` / `npm-shrinkwrap.json`
//! (resolved versions), `requirements*.txt` / `constraints*.txt` (and `*.txt` under a
//! `requirements/` folder), `pyproject.toml` (PEP 621 strings and Poetry tables), `setup.py`,
//! `setup.cfg`, `Pipfile`, `uv.lock` / `poetry.lock` / `pylock*.toml` (resolved versions), and
//! core metadata (`METADATA`, `PKG-INFO`: `Requires-Dist`). Not read: `yarn.lock`,
//! `pnpm-lock.yaml`, other languages' SDKs (their manifests only count as context).

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::versions::{Flavor, only_below};

/// What kind of manifest a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Manifest {
    /// `package.json`.
    PackageJson,
    /// `package-lock.json`, `npm-shrinkwrap.json`.
    NpmLock,
    /// A pip requirements or constraints file, or `setup.cfg`: one requirement a line.
    Requirements,
    /// `pyproject.toml`, `setup.py`, `Pipfile`: requirement strings and `mcp = "…"` keys.
    PythonProject,
    /// `uv.lock`, `poetry.lock`, `pylock*.toml`: `[[package]]` blocks.
    PythonLock,
    /// `METADATA`, `PKG-INFO`: `Requires-Dist:` headers.
    CoreMetadata,
    /// Another language's manifest (`go.mod`, `Cargo.toml`, …): read for context only.
    Other,
}

/// The kind of manifest at `path`, by its name.
pub(crate) fn kind_of(path: &Path) -> Option<Manifest> {
    let name = path.file_name()?.to_str()?;
    let lower = name.to_ascii_lowercase();
    let in_requirements_dir =
        path.parent().and_then(Path::file_name).is_some_and(|dir| dir.eq_ignore_ascii_case("requirements"));
    Some(match name {
        "package.json" => Manifest::PackageJson,
        "package-lock.json" | "npm-shrinkwrap.json" => Manifest::NpmLock,
        "pyproject.toml" | "setup.py" | "Pipfile" => Manifest::PythonProject,
        "setup.cfg" => Manifest::Requirements,
        "uv.lock" | "poetry.lock" => Manifest::PythonLock,
        "METADATA" | "PKG-INFO" => Manifest::CoreMetadata,
        "go.mod" | "Cargo.toml" | "pom.xml" | "build.gradle" | "build.gradle.kts" | "Gemfile" | "composer.json"
        | "mix.exs" => Manifest::Other,
        _ if lower.starts_with("pylock") && lower.ends_with(".toml") => Manifest::PythonLock,
        _ if lower.ends_with(".txt")
            && (lower.starts_with("requirements") || lower.starts_with("constraints") || in_requirements_dir) =>
        {
            Manifest::Requirements
        }
        _ if lower.ends_with(".csproj") => Manifest::Other,
        _ => return None,
    })
}

static NAMES_MCP: LazyLock<Regex> =
    LazyLock::new(|| Regex::new("(?i)mcp|modelcontextprotocol").expect("a valid regex"));

/// True when `text` names MCP (`mcp` in any case, or `modelcontextprotocol`): a file or a
/// manifest that does is where the gated rules apply.
pub(crate) fn names_mcp(text: &str) -> bool {
    NAMES_MCP.is_match(text)
}

/// A pin of an SDK that cannot speak 2026-07-28.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pin {
    /// `MIG-14` or `MIG-15`.
    pub rule: &'static str,
    /// Byte offset of the pin in the manifest.
    pub offset: usize,
    /// The pin as written (`"@modelcontextprotocol/sdk": "^1.30.0"`, `mcp>=1.2,<2`).
    pub text: String,
    /// Why it is a note, not a finding (the manifest also names a 2026-capable SDK).
    pub note: Option<String>,
}

const TS_SDK: &str = "@modelcontextprotocol/sdk";
const TS_V2: &[&str] = &["@modelcontextprotocol/server", "@modelcontextprotocol/client"];
const NPM_SECTIONS: &[&str] = &["dependencies", "devDependencies", "peerDependencies", "optionalDependencies"];

/// The pins of one manifest.
pub(crate) fn pins(kind: Manifest, text: &str) -> Vec<Pin> {
    match kind {
        Manifest::PackageJson => package_json(text),
        Manifest::NpmLock => npm_lock(text),
        Manifest::Requirements => requirement_lines(text, Some),
        Manifest::PythonProject => python_project(text),
        Manifest::PythonLock => python_lock(text),
        Manifest::CoreMetadata => {
            // The headers end at the first empty line; the description after it is prose.
            let headers = text.split("\n\n").next().unwrap_or_default();
            requirement_lines(headers, |line| line.strip_prefix("Requires-Dist:"))
        }
        Manifest::Other => Vec::new(),
    }
}

fn package_json(text: &str) -> Vec<Pin> {
    let Ok(value) = serde_json::from_str::<Value>(text) else { return Vec::new() };
    let sections: Vec<&serde_json::Map<String, Value>> =
        NPM_SECTIONS.iter().filter_map(|section| value.get(*section).and_then(Value::as_object)).collect();
    let v2 = TS_V2.iter().find(|name| sections.iter().any(|section| section.contains_key(**name)));
    let mut pins = Vec::new();
    let mut used = Vec::new();
    for section in &sections {
        for (key, full) in section.iter() {
            let Some(full) = full.as_str() else { continue };
            let range = match full.strip_prefix("npm:@modelcontextprotocol/sdk@") {
                Some(aliased) => aliased,
                None if key == TS_SDK => full,
                None => continue,
            };
            if only_below(range, Flavor::Npm, 2) != Some(true) {
                continue;
            }
            let pattern = format!("\"{}\"\\s*:\\s*\"{}\"", regex::escape(key), regex::escape(full));
            let offset = Regex::new(&pattern)
                .ok()
                .and_then(|regex| regex.find_iter(text).map(|found| found.start()).find(|start| !used.contains(start)))
                .unwrap_or(0);
            used.push(offset);
            pins.push(Pin {
                rule: "MIG-14",
                offset,
                text: format!("\"{key}\": \"{full}\""),
                note: v2.map(|name| format!("the manifest also depends on `{name}` (the v2 SDK)")),
            });
        }
    }
    pins
}

fn npm_lock(text: &str) -> Vec<Pin> {
    let Ok(value) = serde_json::from_str::<Value>(text) else { return Vec::new() };
    let mut found: Vec<(String, String)> = Vec::new();
    if let Some(packages) = value.get("packages").and_then(Value::as_object) {
        for (key, entry) in packages {
            if key == &format!("node_modules/{TS_SDK}") || key.ends_with(&format!("/node_modules/{TS_SDK}")) {
                if let Some(version) = entry.get("version").and_then(Value::as_str) {
                    found.push((key.clone(), version.to_owned()));
                }
            }
        }
    } else if let Some(version) =
        value.get("dependencies").and_then(|deps| deps.get(TS_SDK)).and_then(|entry| entry.get("version"))
    {
        found.push((TS_SDK.to_owned(), version.as_str().unwrap_or_default().to_owned()));
    }
    found
        .into_iter()
        .filter(|(_, version)| only_below(version, Flavor::Npm, 2) == Some(true))
        .map(|(key, version)| {
            let entry = text.find(&format!("\"{key}\"")).unwrap_or(0);
            let offset = text[entry..].find("\"version\"").map_or(entry, |at| entry + at);
            Pin { rule: "MIG-14", offset, text: format!("{key} {version}"), note: None }
        })
        .collect()
}

static REQUIREMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*\(?\s*([^;()#]*?)\s*\)?\s*(?:;.*)?$")
        .expect("a valid regex")
});

/// True when a requirement's name is the Python SDK's (`mcp`, normalised as PEP 503 does).
fn is_python_sdk(name: &str) -> bool {
    name.eq_ignore_ascii_case("mcp")
}

/// The specifier of a requirement on `mcp` (`mcp[cli]>=1.2,<2; python_version>"3.9"` →
/// `>=1.2,<2`), or `None` for another package, a URL or an option line.
fn python_sdk_specifier(requirement: &str) -> Option<String> {
    let requirement = requirement.split(" --").next().unwrap_or_default();
    if requirement.trim_start().starts_with('-') || requirement.contains(" @ ") {
        return None;
    }
    let captures = REQUIREMENT.captures(requirement)?;
    is_python_sdk(&captures[1]).then(|| captures[2].trim().to_owned())
}

/// One requirement a line (`pick` takes the requirement out of a line, or skips the line).
fn requirement_lines<'a>(text: &'a str, pick: impl Fn(&'a str) -> Option<&'a str>) -> Vec<Pin> {
    let mut pins = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let Some(requirement) = pick(line.trim_end_matches(['\n', '\r'])) else { continue };
        let requirement = requirement.split(" #").next().unwrap_or_default();
        if requirement.trim_start().starts_with('#') {
            continue;
        }
        let Some(specifier) = python_sdk_specifier(requirement) else { continue };
        if only_below(&specifier, Flavor::Pep440, 2) == Some(true) {
            let column = line.len() - line.trim_start().len();
            pins.push(Pin { rule: "MIG-15", offset: start + column, text: requirement.trim().to_owned(), note: None });
        }
    }
    pins
}

static QUOTED_REQUIREMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"["']\s*(?i:mcp)\s*(?:\[[^\]"']*\])?\s*\(?\s*([<>=!~][^"';()]*)?\)?\s*(?:;[^"']*)?["']"#)
        .expect("a valid regex")
});
static KEY_REQUIREMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?m)^[ \t]*["']?(?i:mcp)["']?[ \t]*=[ \t]*(?:["']([^"'\n]*)["']|\{[^}\n]*\bversion[ \t]*=[ \t]*["']([^"'\n]*)["'])"#)
        .expect("a valid regex")
});

/// `pyproject.toml`, `setup.py`, `Pipfile`: requirement strings (`"mcp>=1.2,<2"`, PEP 440) and
/// keys (`mcp = "^1.2"`, `mcp = { version = "~1.5" }`: Poetry's and Pipfile's constraints).
fn python_project(text: &str) -> Vec<Pin> {
    let mut pins = Vec::new();
    for captures in QUOTED_REQUIREMENT.captures_iter(text) {
        let whole = captures.get(0).map_or((0, ""), |whole| (whole.start(), whole.as_str()));
        let specifier = captures.get(1).map_or("", |specifier| specifier.as_str());
        if only_below(specifier.trim(), Flavor::Pep440, 2) == Some(true) {
            pins.push(Pin { rule: "MIG-15", offset: whole.0, text: whole.1.to_owned(), note: None });
        }
    }
    for captures in KEY_REQUIREMENT.captures_iter(text) {
        let whole = captures.get(0).map_or((0, ""), |whole| (whole.start(), whole.as_str()));
        let constraint = captures.get(1).or_else(|| captures.get(2)).map_or("", |constraint| constraint.as_str());
        if only_below(constraint, Flavor::Npm, 2) == Some(true) {
            let column = whole.1.len() - whole.1.trim_start().len();
            pins.push(Pin { rule: "MIG-15", offset: whole.0 + column, text: whole.1.trim().to_owned(), note: None });
        }
    }
    pins.sort_by_key(|pin| pin.offset);
    pins
}

/// `uv.lock`, `poetry.lock`, `pylock.toml`: the `version` of a `[[package]]` named `mcp`.
fn python_lock(text: &str) -> Vec<Pin> {
    let mut pins = Vec::new();
    let mut offset = 0;
    let mut in_sdk = false;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            in_sdk = false;
        } else if let Some(name) = toml_string(trimmed, "name") {
            in_sdk = is_python_sdk(name);
        } else if let Some(version) = toml_string(trimmed, "version").filter(|_| in_sdk) {
            if only_below(&format!("=={version}"), Flavor::Pep440, 2) == Some(true) {
                let column = line.len() - line.trim_start().len();
                pins.push(Pin { rule: "MIG-15", offset: start + column, text: format!("mcp {version}"), note: None });
            }
            in_sdk = false;
        }
    }
    pins
}

/// The value of `key = "value"` on a TOML line.
fn toml_string<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(key)?.trim_start().strip_prefix('=')?.trim();
    rest.strip_prefix('"')?.strip_suffix('"')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(kind: Manifest, text: &str) -> Vec<(String, usize, Option<String>)> {
        pins(kind, text)
            .into_iter()
            .map(|pin| {
                let line = text[..pin.offset].matches('\n').count() + 1;
                (format!("{} {}", pin.rule, pin.text), line, pin.note)
            })
            .collect()
    }

    #[test]
    fn package_json_pins_of_the_v1_sdk_are_findings_at_their_line() {
        let text = "{\n  \"name\": \"x\",\n  \"dependencies\": {\n    \"@modelcontextprotocol/sdk\": \"^1.30.0\",\n    \"zod\": \"^4\"\n  },\n  \"devDependencies\": {\n    \"sdk-old\": \"npm:@modelcontextprotocol/sdk@~1.31.2\"\n  },\n  \"peerDependencies\": {\n    \"@modelcontextprotocol/sdk\": \">=1.0 <1.33\"\n  }\n}\n";
        assert_eq!(
            found(Manifest::PackageJson, text),
            vec![
                ("MIG-14 \"@modelcontextprotocol/sdk\": \"^1.30.0\"".into(), 4, None),
                ("MIG-14 \"sdk-old\": \"npm:@modelcontextprotocol/sdk@~1.31.2\"".into(), 8, None),
                ("MIG-14 \"@modelcontextprotocol/sdk\": \">=1.0 <1.33\"".into(), 11, None),
            ]
        );
    }

    #[test]
    fn a_range_that_admits_2_an_unreadable_one_and_another_package_are_not_findings() {
        for text in [
            r#"{"dependencies": {"@modelcontextprotocol/sdk": "^2.0.0"}}"#,
            r#"{"dependencies": {"@modelcontextprotocol/sdk": ">=1.0"}}"#,
            r#"{"dependencies": {"@modelcontextprotocol/sdk": "latest"}}"#,
            r#"{"dependencies": {"@modelcontextprotocol/server": "2.0.0", "mcp-sdk-ish": "1.0.0"}}"#,
            r#"{"scripts": {"@modelcontextprotocol/sdk": "1.0.0"}}"#,
            "not json",
        ] {
            assert_eq!(found(Manifest::PackageJson, text), vec![], "{text}");
        }
    }

    #[test]
    fn a_package_json_that_also_depends_on_the_v2_sdk_makes_the_pin_a_note() {
        let text =
            r#"{"dependencies": {"@modelcontextprotocol/sdk": "1.32.0", "@modelcontextprotocol/server": "^2.0.0"}}"#;
        let pins = found(Manifest::PackageJson, text);
        assert_eq!(pins.len(), 1);
        assert_eq!(
            pins[0].2.as_deref(),
            Some("the manifest also depends on `@modelcontextprotocol/server` (the v2 SDK)")
        );
    }

    #[test]
    fn npm_locks_give_the_resolved_version_at_its_line() {
        let text = "{\n  \"lockfileVersion\": 3,\n  \"packages\": {\n    \"\": {\"dependencies\": {\"@modelcontextprotocol/sdk\": \"^1.30.0\"}},\n    \"node_modules/@modelcontextprotocol/sdk\": {\n      \"version\": \"1.32.2\"\n    },\n    \"node_modules/@modelcontextprotocol/server\": {\n      \"version\": \"2.0.0\"\n    }\n  }\n}\n";
        assert_eq!(
            found(Manifest::NpmLock, text),
            vec![("MIG-14 node_modules/@modelcontextprotocol/sdk 1.32.2".into(), 6, None)]
        );
    }

    #[test]
    fn requirements_lines_below_2_are_findings() {
        let text = "# pins\nrequests==2.0\nmcp==1.9\n  mcp[cli]>=1.2,<2 ; python_version >= \"3.10\"\nmcp~=1.5  # old\nmcp>=2.3\nmcp\nmcp-server-time==1.0\nfastmcp==1.0\n-e ./mcp\nmcp @ https://x.test/mcp-1.0.tar.gz\nmcp (<2)\n";
        assert_eq!(
            found(Manifest::Requirements, text),
            vec![
                ("MIG-15 mcp==1.9".into(), 3, None),
                ("MIG-15 mcp[cli]>=1.2,<2 ; python_version >= \"3.10\"".into(), 4, None),
                ("MIG-15 mcp~=1.5".into(), 5, None),
                ("MIG-15 mcp (<2)".into(), 12, None),
            ]
        );
        assert_eq!(kind_of(Path::new("requirements-dev.txt")), Some(Manifest::Requirements));
        assert_eq!(kind_of(Path::new("requirements/base.txt")), Some(Manifest::Requirements));
        assert_eq!(kind_of(Path::new("notes.txt")), None);
    }

    #[test]
    fn pyproject_strings_and_poetry_keys() {
        let text = "[project]\ndependencies = [\n  \"mcp[cli]>=1.2,<2\",\n  \"httpx>=0.27\",\n  'mcp-server-x==1.0',\n]\n[project.optional-dependencies]\nold = [\"mcp==1.9.4\"]\nnew = [\"mcp>=2.3\"]\n[tool.poetry.dependencies]\nmcp = \"^1.2\"\n[tool.poetry.group.dev.dependencies]\nmcp = { version = \"~1.5\", extras = [\"cli\"] }\n[tool.other]\nmcp = \"enabled\"\n";
        assert_eq!(
            found(Manifest::PythonProject, text),
            vec![
                ("MIG-15 \"mcp[cli]>=1.2,<2\"".into(), 3, None),
                ("MIG-15 \"mcp==1.9.4\"".into(), 8, None),
                ("MIG-15 mcp = \"^1.2\"".into(), 11, None),
                ("MIG-15 mcp = { version = \"~1.5\"".into(), 13, None),
            ]
        );
    }

    #[test]
    fn python_locks_and_core_metadata() {
        let lock = "[[package]]\nname = \"anyio\"\nversion = \"1.0.0\"\n\n[[package]]\nname = \"mcp\"\nversion = \"1.9.0\"\nsource = { registry = \"https://x.test\" }\n";
        assert_eq!(found(Manifest::PythonLock, lock), vec![("MIG-15 mcp 1.9.0".into(), 7, None)]);
        let new_lock = "[[package]]\nname = \"mcp\"\nversion = \"2.3.0\"\n";
        assert_eq!(found(Manifest::PythonLock, new_lock), vec![]);
        let metadata = "Metadata-Version: 2.1\nName: x\nRequires-Dist: mcp<3,>=2.3\nRequires-Dist: mcp (>=1.2,<2); extra == 'old'\n\nRequires-Dist: mcp==1.0 in the prose\n";
        assert_eq!(
            found(Manifest::CoreMetadata, metadata),
            vec![("MIG-15 mcp (>=1.2,<2); extra == 'old'".into(), 4, None)]
        );
    }
}
