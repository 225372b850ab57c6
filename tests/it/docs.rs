//! The documentation cannot drift: the Action's input and output reference in `docs/action.md`
//! is generated from `action.yml`, every relative link and `#anchor` in the Markdown files (and
//! every `docs/PAGE.md#anchor` that an error message names) exists, the README stays a landing
//! page, and the one-line descriptions name every layer.
//!
//! `MCP_EVAL_UPDATE_DOCS=1 cargo test --test it docs::` rewrites the generated tables.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// `action.yml` as JSON, its mappings in file order.
fn action_yml() -> Value {
    serde_saphyr::from_str(&read(&root().join("action.yml"))).expect("action.yml parses")
}

/// One Markdown table of `action.yml`'s `inputs` or `outputs`, in file order.
fn reference_table(section: &str) -> String {
    let action = action_yml();
    let entries = action[section].as_object().unwrap_or_else(|| panic!("action.yml has `{section}`"));
    let cell = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|");
    let mut table = String::new();
    if section == "inputs" {
        table.push_str("| input | default | description |\n|---|---|---|\n");
    } else {
        table.push_str("| output | description |\n|---|---|\n");
    }
    for (name, entry) in entries {
        let description = cell(entry["description"].as_str().unwrap_or_default());
        if section == "inputs" {
            let default = match &entry["default"] {
                Value::String(text) if text.is_empty() => String::new(),
                Value::String(text) => format!("`{}`", cell(text)),
                Value::Null => String::new(),
                other => format!("`{other}`"),
            };
            table.push_str(&format!("| `{name}` | {default} | {description} |\n"));
        } else {
            table.push_str(&format!("| `{name}` | {description} |\n"));
        }
    }
    table
}

/// Checks (or with `MCP_EVAL_UPDATE_DOCS=1` rewrites) the text between `<!-- {kind}: generated
/// from action.yml -->` and `<!-- end of {kind} -->` in `docs/action.md`.
fn check_generated(kind: &str) {
    let path = root().join("docs/action.md");
    let text = read(&path);
    let begin = format!("<!-- {kind}: generated from action.yml -->\n");
    let end = format!("<!-- end of {kind} -->");
    let start = text.find(&begin).unwrap_or_else(|| panic!("docs/action.md lacks `{}`", begin.trim())) + begin.len();
    let stop = start + text[start..].find(&end).unwrap_or_else(|| panic!("docs/action.md lacks `{end}`"));
    let want = reference_table(kind);
    if text[start..stop] == want {
        return;
    }
    if std::env::var_os("MCP_EVAL_UPDATE_DOCS").is_some() {
        let updated = format!("{}{want}{}", &text[..start], &text[stop..]);
        std::fs::write(&path, updated).expect("docs/action.md is writable");
        return;
    }
    panic!(
        "docs/action.md's {kind} table differs from action.yml; run `MCP_EVAL_UPDATE_DOCS=1 cargo test --test it docs::` \
         to regenerate it.\nwanted:\n{want}\nfound:\n{}",
        &text[start..stop]
    );
}

#[test]
fn the_input_reference_is_generated_from_action_yml() {
    check_generated("inputs");
}

#[test]
fn the_output_reference_is_generated_from_action_yml() {
    check_generated("outputs");
}

/// The Markdown files of the project: the top-level ones and `docs/`.
fn markdown_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in [root(), root().join("docs"), root().join("golden")] {
        for entry in std::fs::read_dir(&dir).expect("directory is readable") {
            let path = entry.expect("directory entry").path();
            if path.extension().is_some_and(|ext| ext == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Markdown without its fenced code blocks and inline code spans (links there are not links).
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.push('\n');
            continue;
        }
        if fenced {
            out.push('\n');
            continue;
        }
        let mut in_code = false;
        for ch in line.chars() {
            if ch == '`' {
                in_code = !in_code;
            } else if !in_code {
                out.push(ch);
            }
        }
        out.push('\n');
    }
    out
}

/// GitHub's anchor of a heading: lower case, punctuation other than `-` and `_` dropped, spaces
/// as `-`; a repeated anchor gets `-1`, `-2`, ….
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#');
        if !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter_map(|ch| match ch {
                ' ' => Some('-'),
                '-' | '_' => Some(ch),
                ch if ch.is_alphanumeric() => Some(ch),
                _ => None,
            })
            .collect();
        let count = seen.entry(slug.clone()).or_insert(0);
        out.insert(if *count == 0 { slug.clone() } else { format!("{slug}-{count}") });
        *count += 1;
    }
    out
}

/// Every `](target)` of a Markdown text, with its line number.
fn links(text: &str) -> Vec<(usize, String)> {
    let pattern = regex::Regex::new(r"\]\(([^)\s]+)\)").expect("regex");
    let mut out = Vec::new();
    for (index, line) in prose(text).lines().enumerate() {
        for capture in pattern.captures_iter(line) {
            out.push((index + 1, capture[1].to_owned()));
        }
    }
    out
}

/// The problem with one link of `from`, if any.
fn broken(from: &Path, target: &str) -> Option<String> {
    if target.starts_with("http://") || target.starts_with("https://") || target.starts_with("mailto:") {
        return None;
    }
    let (file, anchor) = match target.split_once('#') {
        Some((file, anchor)) => (file, Some(anchor)),
        None => (target, None),
    };
    let path = if file.is_empty() { from.to_path_buf() } else { from.parent().expect("a parent").join(file) };
    if !path.exists() {
        return Some(format!("`{target}`: no file {}", path.strip_prefix(root()).unwrap_or(&path).display()));
    }
    let anchor = anchor?;
    if path.extension().is_none_or(|ext| ext != "md") {
        return Some(format!("`{target}`: an anchor into a file that is not Markdown"));
    }
    let known = anchors(&read(&path));
    (!known.contains(anchor)).then(|| format!("`{target}`: no heading with the anchor `#{anchor}`"))
}

#[test]
fn every_relative_link_and_anchor_in_the_docs_exists() {
    let mut problems = Vec::new();
    let mut count = 0;
    for file in markdown_files() {
        for (line, target) in links(&read(&file)) {
            count += 1;
            if let Some(problem) = broken(&file, &target) {
                problems.push(format!("{}:{line}: {problem}", file.strip_prefix(root()).unwrap_or(&file).display()));
            }
        }
    }
    assert!(count > 50, "the link scan found only {count} links: is it broken?");
    assert!(problems.is_empty(), "broken links:\n{}", problems.join("\n"));
}

#[test]
fn the_anchor_rule_matches_github_on_headings_with_code_and_punctuation() {
    let set = anchors(
        "# Permissions, forks and `pull_request_target`\n## §7.1 How we read a server's stdout (X-1)\n## A\n## A\n```\n# not a heading\n```\n",
    );
    for want in ["permissions-forks-and-pull_request_target", "71-how-we-read-a-servers-stdout-x-1", "a", "a-1"] {
        assert!(set.contains(want), "{want} missing from {set:?}");
    }
    assert!(!set.contains("not-a-heading"));
    assert!(broken(&root().join("README.md"), "docs/faq.md#no-such-heading").is_some());
    assert!(broken(&root().join("README.md"), "docs/no-such-page.md").is_some());
}

/// Every file under `src/`, and `action.yml`: where messages and descriptions are written.
fn message_sources() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![root().join("src"), root().join("action.yml")];
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).expect("directory is readable") {
                stack.push(entry.expect("directory entry").path());
            }
        } else {
            files.push(path);
        }
    }
    files
}

/// Every `docs/PAGE.md` or `docs/PAGE.md#anchor` that the source names (error hints, `--help`).
#[test]
fn every_docs_page_the_messages_point_at_exists() {
    let pattern = regex::Regex::new(r"docs/[a-z0-9_-]+\.md(#[a-z0-9_-]+)?").expect("regex");
    let mut problems = Vec::new();
    let mut count = 0;
    for path in message_sources() {
        if path.extension().is_none_or(|ext| ext != "rs" && ext != "yml") {
            continue;
        }
        for (index, line) in read(&path).lines().enumerate() {
            for found in pattern.find_iter(line) {
                count += 1;
                if let Some(problem) = broken(&root().join("README.md"), found.as_str()) {
                    problems.push(format!(
                        "{}:{}: {problem}",
                        path.strip_prefix(root()).unwrap_or(&path).display(),
                        index + 1
                    ));
                }
            }
        }
    }
    assert!(count >= 5, "only {count} pointers into docs/ found: the hints should name their page");
    assert!(problems.is_empty(), "pointers into docs/ that do not exist:\n{}", problems.join("\n"));
}

#[test]
fn no_message_points_at_a_readme_section() {
    let mut problems = Vec::new();
    for path in message_sources() {
        for (index, line) in read(&path).lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            if line.contains("the README") {
                problems.push(format!(
                    "{}:{}: {}",
                    path.strip_prefix(root()).unwrap_or(&path).display(),
                    index + 1,
                    code
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "messages that send the user to the README instead of docs/:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_readme_is_a_landing_page_of_at_most_200_lines() {
    let readme = read(&root().join("README.md"));
    let lines = readme.lines().count();
    assert!(lines <= 200, "README.md has {lines} lines; move the detail into docs/");
    for quick_start in ["layer 0 on your server", "layer 1 with your key", "the Action in a workflow"] {
        assert!(
            readme.to_lowercase().contains(&quick_start.to_lowercase()),
            "README.md lacks the quick start `{quick_start}`"
        );
    }
    assert!(readme.contains("scripts/test.sh"), "README.md names the test command");
    assert!(readme.contains("placeholder"), "README.md says that the owner `org` is a placeholder");
}

#[test]
fn the_one_line_descriptions_name_every_layer() {
    let manifest = read(&root().join("Cargo.toml"));
    let cargo = manifest.lines().find(|line| line.starts_with("description")).expect("Cargo.toml has a description");
    let action = action_yml()["description"].as_str().expect("action.yml has a description").to_owned();
    for (name, text) in [("Cargo.toml (`--help`)", cargo.to_owned()), ("action.yml", action)] {
        for layer in ["layer 0", "layer 1", "layer 2", "layer 3"] {
            assert!(text.contains(layer), "{name}'s description does not name {layer}: {text}");
        }
    }
}
