//! Repository hygiene that is cheap to check, run with the unit tests: every source file opens
//! with a `//!` doc, and the house keeps its floors — the `crate::…` imports between the
//! top-level modules of `src/` form no circle of more than two modules and never run up to a
//! higher floor, except the imports ARCHITECTURE.md lists with their reason.
//!
//! The floors and the exceptions are read from ARCHITECTURE.md ("Floors of the code"): a fenced
//! block of lines `N module module …` (floor N, 0 the ground), then lines `` - `a → b`: reason ``.
//! Imports are read as text: `crate::NAME` and `crate::{NAME, …}` outside comments, in every
//! file of `src/` but the test modules (`tests.rs`, `*_tests.rs`, files declared under
//! `#[cfg(test)]`, and a file's own `#[cfg(test)] mod tests { … }` at its end).
//!
//! It also keeps the shape of the layer path: no function there over 150 lines (few anywhere),
//! the runner of trials naming no higher layer, golden cases read by key only in `src/golden/`,
//! and ARCHITECTURE.md a map of at most 250 lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            found.push(path);
        }
    }
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn every_file_the_binary_embeds_is_copied_into_the_image_builder() {
    // The Dockerfile's builder stage sees only what it COPYs: a file `include_str!`/
    // `include_bytes!` reads from elsewhere breaks the real image build (the image test builds
    // the runtime stage only).
    let dockerfile = std::fs::read_to_string(root().join("Dockerfile")).expect("Dockerfile");
    let copied: Vec<&str> = dockerfile
        .lines()
        .filter_map(|line| line.strip_prefix("COPY "))
        .filter(|line| !line.starts_with("--from"))
        .flat_map(|line| {
            let parts: Vec<&str> = line.split_whitespace().collect();
            parts[..parts.len().saturating_sub(1)].to_vec()
        })
        .collect();
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    for file in files.into_iter().filter(|file| !is_test_file(file)) {
        let text = code_of(&std::fs::read_to_string(&file).expect("readable"));
        for (index, _) in text.match_indices("include_") {
            let rest = &text[index..];
            let Some(rest) = rest.strip_prefix("include_str!(\"").or_else(|| rest.strip_prefix("include_bytes!(\""))
            else {
                continue;
            };
            let Some(relative) = rest.split('"').next() else { continue };
            let embedded = file.parent().expect("in a directory").join(relative);
            let embedded = embedded.canonicalize().unwrap_or(embedded);
            let inside = embedded.strip_prefix(root().canonicalize().expect("root")).expect("in the repository");
            let first = inside.components().next().map(|part| part.as_os_str().to_string_lossy().into_owned());
            assert!(
                first.as_deref().is_some_and(|first| copied.iter().any(|copy| copy.trim_end_matches('/') == first)),
                "{} embeds {} but the Dockerfile's builder does not COPY `{}`",
                file.display(),
                inside.display(),
                first.unwrap_or_default()
            );
        }
    }
}

#[test]
fn every_source_file_opens_with_a_module_doc() {
    let mut files = Vec::new();
    for dir in ["src", "tests", "benches"] {
        rust_files(&root().join(dir), &mut files);
    }
    let missing: Vec<String> = files
        .iter()
        .filter(|path| {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            !text.lines().find(|line| !line.trim().is_empty()).is_some_and(|line| line.starts_with("//!"))
        })
        .map(|path| path.display().to_string())
        .collect();
    assert!(missing.is_empty(), "files without a `//!` module doc: {missing:?}");
}

/// The top-level modules of `src/` (a file `x.rs` or a folder `x/`), `lib` and `main` aside.
fn top_level_modules() -> BTreeSet<String> {
    let mut modules = BTreeSet::new();
    for entry in std::fs::read_dir(root().join("src")).expect("src").flatten() {
        let path = entry.path();
        let name = path.file_stem().and_then(|stem| stem.to_str()).unwrap_or_default().to_owned();
        let source = path.extension().is_some_and(|extension| extension == "rs") && !is_test_file(&path);
        if path.is_dir() || (source && name != "lib" && name != "main") {
            modules.insert(name);
        }
    }
    modules
}

/// True for a file that only tests compile: by its name, or declared under `#[cfg(test)]` by
/// the file that names it.
fn is_test_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|name| name.to_str()).unwrap_or_default();
    if ["tests.rs", "test_support.rs", "test_server.rs"].contains(&name) || name.ends_with("_tests.rs") {
        return true;
    }
    let stem = name.trim_end_matches(".rs");
    let Some(dir) = path.parent() else { return false };
    if stem == "mod" {
        return false;
    }
    let parent = if dir == root().join("src") {
        dir.join("lib.rs")
    } else if dir.join("mod.rs").exists() {
        dir.join("mod.rs")
    } else {
        dir.with_extension("rs")
    };
    let text = std::fs::read_to_string(parent).unwrap_or_default();
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    lines.windows(2).any(|pair| {
        pair[0] == "#[cfg(test)]"
            && [format!("mod {stem};"), format!("pub(crate) mod {stem};")].iter().any(|line| pair[1] == line)
    })
}

/// The code of a file without its comments and its trailing `#[cfg(test)] mod tests { … }`.
fn code_of(text: &str) -> String {
    let text = match text.find("\n#[cfg(test)]\nmod tests {") {
        Some(at) => &text[..at],
        None => text,
    };
    without_line_comments(text)
}

/// `text` without its `//` comments (doc comments too); a `//` inside a string literal (a URL)
/// is code, and so is what follows it on the line. Char literals such as `'"'` do not open a
/// string.
fn without_line_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut in_comment) = (false, false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if in_comment {
            if c == '\n' {
                in_comment = false;
                out.push(c);
            }
            continue;
        }
        match c {
            '\\' if in_string => {
                out.push(c);
                out.extend(chars.next());
                continue;
            }
            '"' => in_string = !in_string,
            '\'' if !in_string => {
                // A char literal: `'x'`, `'"'`, `'\''`; a lifetime has no closing quote.
                let ahead: String = chars.clone().take(3).collect();
                let quoted = ahead.starts_with("\\") || ahead.chars().nth(1) == Some('\'');
                if quoted {
                    out.push(c);
                    let escaped = chars.peek() == Some(&'\\');
                    out.extend(chars.by_ref().take(if escaped { 3 } else { 2 }));
                    continue;
                }
            }
            '/' if !in_string && chars.peek() == Some(&'/') => {
                in_comment = true;
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

/// The top-level modules `code` names through `crate::`.
fn imports_of(code: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let word = |text: &str| -> String { text.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect() };
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = group.split('}').next().unwrap_or_default();
            for part in group.split(',') {
                found.insert(word(part.trim()));
            }
        } else {
            found.insert(word(rest));
        }
    }
    found.retain(|name| modules.contains(name));
    found
}

/// Every import between two top-level modules: (from, to) → the files that make it.
fn import_graph(modules: &BTreeSet<String>) -> BTreeMap<(String, String), BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut graph: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for path in files {
        let relative = path.strip_prefix(root().join("src")).expect("under src").to_path_buf();
        let first = relative.components().next().and_then(|part| part.as_os_str().to_str()).unwrap_or_default();
        let from = first.trim_end_matches(".rs").to_owned();
        if !modules.contains(&from) || is_test_file(&path) {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(&path).expect("readable"));
        for to in imports_of(&code, modules) {
            if to != from {
                graph.entry((from.clone(), to)).or_default().insert(relative.display().to_string());
            }
        }
    }
    graph
}

/// The floors and the listed exceptions of ARCHITECTURE.md.
fn floors_and_exceptions() -> (BTreeMap<String, u32>, BTreeMap<(String, String), String>) {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let section = text.split("## Floors of the code").nth(1).expect("ARCHITECTURE.md has `## Floors of the code`");
    let section = section.split("\n## ").next().unwrap_or_default();
    let block = section.split("```").nth(1).expect("a fenced block of floors");
    let mut floors = BTreeMap::new();
    for line in block.lines().filter(|line| !line.trim().is_empty()) {
        let mut words = line.split_whitespace();
        let floor: u32 = words.next().and_then(|word| word.parse().ok()).expect("a floor number first");
        for module in words {
            assert!(floors.insert(module.to_owned(), floor).is_none(), "`{module}` is on two floors");
        }
    }
    let mut exceptions = BTreeMap::new();
    for line in section.lines().filter_map(|line| line.strip_prefix("- `")) {
        let Some((pair, reason)) = line.split_once("`:") else { continue };
        let Some((from, to)) = pair.split_once(" → ") else { continue };
        assert!(!reason.trim().is_empty(), "the exception `{pair}` gives no reason");
        exceptions.insert((from.to_owned(), to.to_owned()), reason.trim().to_owned());
    }
    (floors, exceptions)
}

/// The strongly connected components of more than one module (Tarjan).
fn circles(graph: &BTreeMap<(String, String), BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: BTreeMap<&'a str, Vec<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(state: &mut State<'a>, node: &'a str) {
        let next = state.index.len();
        state.index.insert(node, next);
        state.low.insert(node, next);
        state.stack.push(node);
        for to in state.edges.get(node).cloned().unwrap_or_default() {
            if !state.index.contains_key(to) {
                visit(state, to);
                let low = state.low[node].min(state.low[to]);
                state.low.insert(node, low);
            } else if state.stack.contains(&to) {
                let low = state.low[node].min(state.index[to]);
                state.low.insert(node, low);
            }
        }
        if state.low[node] == state.index[node] {
            let mut component = Vec::new();
            while let Some(top) = state.stack.pop() {
                component.push(top.to_owned());
                if top == node {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                state.found.push(component);
            }
        }
    }
    let mut edges: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in graph.keys() {
        edges.entry(from).or_default().push(to);
    }
    let nodes: Vec<&str> = edges.keys().copied().collect();
    let mut state = State { edges, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), found: Vec::new() };
    for node in nodes {
        if !state.index.contains_key(node) {
            visit(&mut state, node);
        }
    }
    state.found
}

#[test]
#[allow(clippy::print_stderr, reason = "the counts are the test's report, shown with --nocapture")]
fn the_imports_between_top_level_modules_keep_to_their_floors() {
    let modules = top_level_modules();
    let graph = import_graph(&modules);
    let (floors, exceptions) = floors_and_exceptions();
    let unplaced: Vec<&String> = modules.iter().filter(|module| !floors.contains_key(*module)).collect();
    assert!(
        unplaced.is_empty(),
        "put these modules on a floor in ARCHITECTURE.md (`## Floors of the code`): {unplaced:?}"
    );
    let gone: Vec<&String> = floors.keys().filter(|module| !modules.contains(*module)).collect();
    assert!(gone.is_empty(), "ARCHITECTURE.md places modules that no longer exist: {gone:?}");

    let up: Vec<String> = graph
        .iter()
        .filter(|((from, to), _)| floors[from] < floors[to] && !exceptions.contains_key(&(from.clone(), to.clone())))
        .map(|((from, to), files)| {
            format!("{from} (floor {}) → {to} (floor {}) in {files:?}", floors[from], floors[to])
        })
        .collect();
    assert!(
        up.is_empty(),
        "imports that run up a floor, not listed in ARCHITECTURE.md with a reason:\n{}",
        up.join("\n")
    );
    let stale: Vec<String> = exceptions
        .keys()
        .filter(|(from, to)| !graph.contains_key(&(from.clone(), to.clone())) || floors[from] >= floors[to])
        .map(|(from, to)| format!("{from} → {to}"))
        .collect();
    assert!(stale.is_empty(), "ARCHITECTURE.md lists exceptions no import needs any more: {stale:?}");

    let big: Vec<Vec<String>> = circles(&graph).into_iter().filter(|circle| circle.len() > 2).collect();
    assert!(big.is_empty(), "circles of more than two modules: {big:?}");
    let listed_up = graph.keys().filter(|(from, to)| floors[from] < floors[to]).count();
    eprintln!(
        "{} modules, {} imports between them, {listed_up} up a floor (listed), largest circle {} modules",
        modules.len(),
        graph.len(),
        circles(&graph).iter().map(Vec::len).max().unwrap_or(1)
    );
}

#[test]
fn the_import_reader_sees_grouped_and_plain_paths_but_not_comments() {
    let modules: BTreeSet<String> = ["mcp", "report", "gate"].into_iter().map(str::to_owned).collect();
    let code =
        code_of("use crate::{mcp, report::model};\n// crate::verdict is only named here\nlet x = crate::report::x;");
    let found: Vec<String> = imports_of(&code, &modules).into_iter().collect();
    assert_eq!(found, ["mcp", "report"]);
    let graph: BTreeMap<(String, String), BTreeSet<String>> =
        [("a", "b"), ("b", "c"), ("c", "a"), ("d", "e"), ("e", "d")]
            .into_iter()
            .map(|(from, to)| ((from.to_owned(), to.to_owned()), BTreeSet::new()))
            .collect();
    let mut found = circles(&graph);
    found.sort();
    assert_eq!(found, [vec!["a", "b", "c"], vec!["d", "e"]]);
}

#[test]
fn a_double_slash_inside_a_string_is_code_and_a_comment_after_it_is_not() {
    let modules: BTreeSet<String> = ["mcp", "report", "verdict", "text"].into_iter().map(str::to_owned).collect();
    let code = code_of(
        "let url = \"https://example.test/a\"; let m = crate::mcp::x; // crate::verdict\nlet q = '\"'; let r = crate::report::y;\nlet s = \"a \\\" // b\"; crate::text::z(); fn f<'a>(x: &'a str) {}\n",
    );
    let found: Vec<String> = imports_of(&code, &modules).into_iter().collect();
    assert_eq!(found, ["mcp", "report", "text"]);
}

#[test]
fn the_runner_of_trials_names_no_higher_layer() {
    // Layers 2 and 3 plug into the runner as trial wrappers (`agent::wrap`), never by name.
    let modules = top_level_modules();
    let mut files = Vec::new();
    rust_files(&root().join("src/trials"), &mut files);
    let named: Vec<String> = files
        .iter()
        .filter(|path| !is_test_file(path))
        .flat_map(|path| {
            let code = code_of(&std::fs::read_to_string(path).expect("readable"));
            let imports = imports_of(&code, &modules);
            ["faults", "telemetry"]
                .into_iter()
                .filter(move |layer| imports.contains(*layer))
                .map(move |layer| format!("{} → {layer}", path.display()))
        })
        .collect();
    assert!(named.is_empty(), "the runner of trials names a higher layer: {named:?}");
}

/// `text` with every comment, string literal (raw ones too) and char literal blanked to spaces,
/// newlines kept: what is left is code whose braces can be counted.
fn blanked(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
        } else if (c == 'r' || c == 'b' && next == Some('r'))
            && !chars[..i].last().is_some_and(|p| p.is_alphanumeric() || *p == '_')
            && {
                let start = if c == 'b' { i + 2 } else { i + 1 };
                let hashes = chars[start..].iter().take_while(|h| **h == '#').count();
                chars.get(start + hashes) == Some(&'"')
            }
        {
            // A raw string: r"…", r#"…"#, br"…".
            let start = if c == 'b' { i + 2 } else { i + 1 };
            let hashes = chars[start..].iter().take_while(|h| **h == '#').count();
            let mut j = start + hashes + 1;
            loop {
                if j >= chars.len() {
                    break;
                }
                if chars[j] == '"' && chars[j + 1..].iter().take(hashes).filter(|h| **h == '#').count() == hashes {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            for &c in &chars[i..j.min(chars.len())] {
                blank(&mut out, c);
            }
            i = j;
        } else if c == '"' {
            blank(&mut out, c);
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
                if i < chars.len() {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
            if i < chars.len() {
                blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{1F600}', '{'); a lifetime has no closing quote.
            let end = if next == Some('\\') {
                chars[i + 2..].iter().position(|q| *q == '\'').map(|at| i + 2 + at)
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    for &c in &chars[i..=end] {
                        blank(&mut out, c);
                    }
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The functions of a file's non-test code with their length in lines, from the `fn` line to
/// the line of its closing brace: a `#[test]` function and a `#[cfg(test)] mod … { … }` are
/// left out.
fn function_lengths(text: &str) -> Vec<(String, usize)> {
    let code = blanked(text);
    let bytes = code.as_bytes();
    let line_of = |at: usize| code[..at].matches('\n').count();
    // The byte ranges of test code: `#[cfg(test)]` items and `#[test]` functions.
    let mut skipped: Vec<(usize, usize)> = Vec::new();
    for marker in ["#[cfg(test)]", "#[test]"] {
        for (at, _) in code.match_indices(marker) {
            if let Some(open) = code[at..].find(['{', ';']).map(|offset| at + offset)
                && bytes[open] == b'{'
            {
                skipped.push((at, closing(bytes, open)));
            }
        }
    }
    let mut out = Vec::new();
    let mut search = 0;
    while let Some(offset) = code[search..].find("fn ") {
        let at = search + offset;
        search = at + 3;
        let word_start = at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
        if !word_start || skipped.iter().any(|(start, end)| (*start..=*end).contains(&at)) {
            continue;
        }
        let name: String =
            code[at + 3..].trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if name.is_empty() {
            continue;
        }
        let Some(open) = code[at..].find(['{', ';']).map(|offset| at + offset) else { continue };
        if bytes[open] == b';' {
            continue;
        }
        let close = closing(bytes, open);
        out.push((name, line_of(close) - line_of(at) + 1));
    }
    out
}

/// The index of the brace that closes the one at `open`.
fn closing(bytes: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (index, byte) in bytes.iter().enumerate().skip(open) {
        match byte {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return index;
                }
            }
            _ => {}
        }
    }
    bytes.len().saturating_sub(1)
}

/// The folders of the layer path, where no function may be longer than [`LONGEST_FUNCTION`].
const LAYER_PATH: [&str; 6] = ["evaluate", "trials", "settings", "golden", "scoring", "agent"];

/// The most lines a function of the layer path may have.
const LONGEST_FUNCTION: usize = 150;

/// How many functions of all of `src/` may be longer than [`LONGEST_FUNCTION`].
const LONG_FUNCTIONS_ALLOWED: usize = 5;

#[test]
fn no_function_of_the_layer_path_is_over_150_lines_and_few_are_elsewhere() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut long: Vec<(String, String, usize)> = Vec::new();
    for file in files.iter().filter(|file| !is_test_file(file)) {
        let relative = file.strip_prefix(root()).expect("under the root").to_string_lossy().replace('\\', "/");
        let text = std::fs::read_to_string(file).expect("readable");
        for (name, lines) in function_lengths(&text) {
            if lines > LONGEST_FUNCTION {
                long.push((relative.clone(), name, lines));
            }
        }
    }
    let in_layer_path: Vec<&(String, String, usize)> = long
        .iter()
        .filter(|(file, _, _)| LAYER_PATH.iter().any(|dir| file.starts_with(&format!("src/{dir}/"))))
        .collect();
    assert!(
        in_layer_path.is_empty(),
        "functions of the layer path over {LONGEST_FUNCTION} lines (split them into named steps): {in_layer_path:?}"
    );
    assert!(
        long.len() <= LONG_FUNCTIONS_ALLOWED,
        "{} functions over {LONGEST_FUNCTION} lines in src/, at most {LONG_FUNCTIONS_ALLOWED} allowed: {long:?}",
        long.len()
    );
}

#[test]
fn function_lengths_skip_tests_and_braces_in_strings_comments_and_chars() {
    let text = "fn short() {\n    let s = \"{{{\";\n    let r = r#\"}\"}\"#;\n    let c = '{';\n    // }\n}\n\
                /* } */\nfn two<'a>(x: &'a str) -> &'a str {\n    x\n}\n\
                #[test]\nfn a_test() {\n    one();\n}\n\
                #[cfg(test)]\nmod tests {\n    fn helper() {}\n}\n\
                trait T {\n    fn declared(&self);\n}\n";
    assert_eq!(function_lengths(text), vec![("short".to_owned(), 6), ("two".to_owned(), 3)]);
}

#[test]
fn golden_expectations_are_read_by_key_only_in_the_golden_loader() {
    // Outside `src/golden/`, a case is read through its types (`golden::Case`, `golden::Expect`),
    // never by a key of its JSON.
    let read = regex::Regex::new(
        r#"\b(?:resolved|case|sequence|step|matcher|rubric|criterion)(?:\["|\.get\("|\.pointer\("/)|\.resolved(?:\["|\.get\("|\.pointer\("/)"#,
    )
    .expect("a regex");
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let golden = root().join("src").join("golden");
    let found: Vec<String> = files
        .iter()
        .filter(|file| !is_test_file(file) && !file.starts_with(&golden))
        .flat_map(|file| {
            let code = code_of(&std::fs::read_to_string(file).expect("readable"));
            read.find_iter(&code).map(|hit| format!("{}: {}", file.display(), hit.as_str())).collect::<Vec<_>>()
        })
        .collect();
    assert!(found.is_empty(), "a golden case read by key outside src/golden/: {found:?}");
}

#[test]
fn architecture_md_stays_a_map_with_the_checklists_for_a_layer_a_setting_and_a_golden_set_field() {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let lines = text.lines().count();
    assert!(lines <= 250, "ARCHITECTURE.md has {lines} lines: a map stays at most 250 (details go to docs/)");
    for checklist in ["**A layer.**", "**A setting.**", "**A golden-set field.**"] {
        assert!(text.contains(checklist), "ARCHITECTURE.md has no checklist {checklist}");
    }
}

#[test]
fn no_function_answers_a_bare_string_as_its_error() {
    // Errors are types (with causes chained and one renderer at the edge), never a `String` a
    // caller can only print or pattern-match on its words.
    let stringly = regex::Regex::new(r"\bResult<[^;{}]*?,\s*String\s*>").expect("a regex");
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let found: Vec<String> = files
        .iter()
        .filter(|file| !is_test_file(file))
        .flat_map(|file| {
            let text = blanked(&std::fs::read_to_string(file).expect("readable"));
            let relative = file.strip_prefix(root()).expect("under the root").display().to_string();
            stringly
                .find_iter(&text)
                .map(|hit| format!("{relative}:{}", text[..hit.start()].lines().count().max(1)))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(found.is_empty(), "`Result<_, String>` (give the error a type): {found:?}");
}
