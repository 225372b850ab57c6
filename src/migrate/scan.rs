//! The walk and the matching of the migration scan. The walk reads the tree as git would track
//! it (the approach of `--cache-key auto`, [`crate::cache::workspace_manifest`]): `.gitignore`
//! files, the parents' ones too, and `.git/info/exclude` are honoured, `.git/` is left out,
//! symlinks are not followed; `--no-ignore` reads ignored files too. Installed dependencies
//! ([`dependency_dir`]: `node_modules`, virtualenvs, `site-packages`) are left out either way. Only source and test files
//! ([`Syntax::for_path`]) and manifests ([`manifest::kind_of`]) are read, each at most
//! [`MAX_FILE_BYTES`]; a file with a NUL byte in its first 8 KiB is binary and skipped.
//!
//! A use in a comment, or in a file that also has the rule's 2026-07-28 replacement (or the
//! version `2026-07-28` itself) in code or a string, is a note: the code handles both eras.
//! A gated pattern (words common outside MCP) fires only in a file that names MCP, or in a
//! tree whose manifests do. Each rule gives at most one use a line.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, LazyLock, Mutex};

use regex::Regex;
use serde::Serialize;

use super::lex::{self, Kind, Span, Syntax};
use super::manifest;
use super::rules::{self, Matcher, PATTERNS, Pattern, RULES};

/// The largest file the scan reads (2 MiB); larger ones are counted and skipped.
pub(crate) const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;

/// One use of a 2025-era construct: a finding, or a note when [`Self::note`] is true. This is
/// what `--json` writes, one object per use, and what a SARIF or annotation writer reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct MigrationFinding {
    /// The rule's id, `MIG-N` ([`rules::RULES`]).
    pub rule: &'static str,
    /// The file, relative to the scanned path, `/`-separated (the file's name when a file was
    /// scanned).
    pub path: String,
    /// The line, from 1.
    pub line: usize,
    /// The column, from 1, in characters.
    pub column: usize,
    /// The text found (one line, at most 80 characters).
    pub text: String,
    /// The 2026-07-28 replacement.
    pub replacement: &'static str,
    /// True for a note: in a comment, dual-era code, or a handler that answers 405. Notes never
    /// fail a scan.
    pub note: bool,
    /// Why it is a note.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// What a scan found and read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Scan {
    /// Every use, findings and notes, sorted by path, line and column.
    pub uses: Vec<MigrationFinding>,
    /// Source and test files read.
    pub sources: usize,
    /// Manifests read.
    pub manifests: usize,
    /// Other files, not read (prose, data, anything else).
    pub other: usize,
    /// Files over [`MAX_FILE_BYTES`], skipped.
    pub too_large: usize,
    /// Binary files, skipped.
    pub binary: usize,
    /// Files and directories that could not be read, with the reason.
    pub unreadable: Vec<String>,
    /// Installed-dependency directories not walked, by kind ([`dependency_dir`]).
    pub dependency_dirs: BTreeMap<&'static str, usize>,
}

impl Scan {
    /// The findings (uses that are not notes).
    pub(crate) fn findings(&self) -> impl Iterator<Item = &MigrationFinding> {
        self.uses.iter().filter(|found| !found.note)
    }

    /// The notes.
    pub(crate) fn notes(&self) -> impl Iterator<Item = &MigrationFinding> {
        self.uses.iter().filter(|found| found.note)
    }
}

/// A pattern with its regular expressions compiled.
struct Compiled {
    pattern: &'static Pattern,
    regex: Option<Regex>,
    requires: Option<Regex>,
    answered: Option<Regex>,
    /// [`Pattern::unless_followed_by`], anchored at the use's end.
    unless_followed_by: Option<Regex>,
}

fn compile(regex: &str) -> Regex {
    // The catalogue's own regular expressions (tested in `rules`).
    Regex::new(regex).unwrap_or_else(|error| panic!("the migration catalogue's regex {regex}: {error}"))
}

static COMPILED: LazyLock<Vec<Compiled>> = LazyLock::new(|| {
    PATTERNS
        .iter()
        .map(|pattern| Compiled {
            pattern,
            regex: match pattern.matcher {
                Matcher::Text(regex) => Some(compile(regex)),
                Matcher::Ident(names) => Some(compile(&format!("\\b(?:{})\\b", names.join("|")))),
                Matcher::Literal(_) | Matcher::Code(_) => None,
            },
            requires: pattern.requires.map(compile),
            answered: pattern.answered.map(compile),
            unless_followed_by: pattern.unless_followed_by.map(|regex| compile(&format!("^(?:{regex})"))),
        })
        .collect()
});

/// Each rule's dual-era markers, then the version `2026-07-28`.
static DUAL: LazyLock<HashMap<&'static str, Vec<Regex>>> = LazyLock::new(|| {
    RULES
        .iter()
        .map(|rule| {
            let mut markers: Vec<Regex> = rule.dual.iter().map(|marker| compile(marker)).collect();
            markers.push(compile(&regex::escape(rules::DUAL_ERA_VERSION)));
            (rule.id, markers)
        })
        .collect()
});

/// A use before its gate is decided.
struct Pending {
    found: MigrationFinding,
    gated: bool,
}

/// Scans `root` (a directory or a file). Never fails: what cannot be read is counted in
/// [`Scan::unreadable`].
pub(crate) fn scan(root: &Path, no_ignore: bool) -> Scan {
    let skipped: Arc<Mutex<BTreeMap<&'static str, usize>>> = Arc::default();
    let counted = Arc::clone(&skipped);
    let mut builder = ignore::WalkBuilder::new(root);
    builder
        .hidden(false)
        .ignore(false)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_path(Ord::cmp)
        .filter_entry(move |entry| {
            if entry.file_name() == ".git" {
                return false;
            }
            let kind = (entry.depth() > 0 && entry.file_type().is_some_and(|kind| kind.is_dir()))
                .then(|| dependency_dir(entry.path()))
                .flatten();
            if let Some(kind) = kind {
                let mut skipped = counted.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                *skipped.entry(kind).or_default() += 1;
            }
            kind.is_none()
        });
    if no_ignore {
        builder.git_ignore(false).git_exclude(false).parents(false);
    } else {
        builder.parents(true);
    }
    let mut scan = Scan::default();
    let mut tree_names_mcp = false;
    let mut pending = Vec::new();
    for entry in builder.build() {
        let entry = match entry {
            Ok(entry) => entry,
            Err(error) => {
                scan.unreadable.push(error.to_string());
                continue;
            }
        };
        if !entry.file_type().is_some_and(|kind| kind.is_file()) {
            continue;
        }
        let path = entry.path();
        let syntax = Syntax::for_path(path);
        let manifest = manifest::kind_of(path);
        if syntax.is_none() && manifest.is_none() {
            scan.other += 1;
            continue;
        }
        let shown = shown_path(root, path);
        if entry.metadata().map_or(0, |metadata| metadata.len()) > MAX_FILE_BYTES {
            scan.too_large += 1;
            continue;
        }
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(error) => {
                scan.unreadable.push(format!("{shown}: {error}"));
                continue;
            }
        };
        if bytes.iter().take(8192).any(|byte| *byte == 0) {
            scan.binary += 1;
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        let lines = Lines::new(&text);
        if let Some(kind) = manifest {
            scan.manifests += 1;
            tree_names_mcp |= manifest::names_mcp(&text);
            for pin in manifest::pins(kind, &text) {
                let (line, column) = lines.locate(&text, pin.offset);
                pending.push(Pending {
                    found: MigrationFinding {
                        rule: pin.rule,
                        path: shown.clone(),
                        line,
                        column,
                        text: crate::text::clip_chars(&pin.text, 80),
                        replacement: rules::rule(pin.rule).replacement,
                        note: pin.note.is_some(),
                        why: pin.note,
                    },
                    gated: false,
                });
            }
        }
        if let Some(syntax) = syntax {
            scan.sources += 1;
            pending.extend(source_uses(&text, syntax).into_iter().map(|found| {
                let (line, column) = lines.locate(&text, found.offset);
                Pending {
                    found: MigrationFinding {
                        rule: found.rule,
                        path: shown.clone(),
                        line,
                        column,
                        text: found.text,
                        replacement: rules::rule(found.rule).replacement,
                        note: found.why.is_some(),
                        why: found.why,
                    },
                    gated: found.gated,
                }
            }));
        }
    }
    scan.dependency_dirs = std::mem::take(&mut *skipped.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    scan.uses = pending.into_iter().filter(|use_| !use_.gated || tree_names_mcp).map(|use_| use_.found).collect();
    scan.uses.sort_by(|a, b| {
        (&a.path, a.line, a.column, rule_number(a.rule)).cmp(&(&b.path, b.line, b.column, rule_number(b.rule)))
    });
    scan
}

/// The kind of installed-dependency directory `path` is, if it is one: skipped whatever the
/// ignore files say (a project with no `.gitignore` would otherwise be scanned with every
/// package it installed). Only what is certain: `node_modules`, a Python virtualenv (a
/// directory holding `pyvenv.cfg`, whatever its name), `site-packages` / `dist-packages`.
/// The scanned path itself is never skipped: naming a dependency directory scans it.
pub(crate) fn dependency_dir(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_str()?;
    if name == "node_modules" {
        Some("node_modules")
    } else if name == "site-packages" || name == "dist-packages" {
        Some("site-packages")
    } else if path.join("pyvenv.cfg").is_file() {
        Some("virtualenv")
    } else {
        None
    }
}

fn rule_number(id: &str) -> u32 {
    id.trim_start_matches("MIG-").parse().unwrap_or(0)
}

/// `path` relative to the scanned `root`, `/`-separated.
fn shown_path(root: &Path, path: &Path) -> String {
    let relative = match path.strip_prefix(root) {
        Ok(relative) if !relative.as_os_str().is_empty() => relative,
        _ => path.file_name().map_or(path, Path::new),
    };
    let parts: Vec<String> =
        relative.components().map(|part| part.as_os_str().to_string_lossy().into_owned()).collect();
    parts.join("/")
}

/// The line starts of a file, to turn byte offsets into lines and columns.
struct Lines(Vec<usize>);

impl Lines {
    fn new(text: &str) -> Self {
        Lines(std::iter::once(0).chain(text.match_indices('\n').map(|(at, _)| at + 1)).collect())
    }

    /// The line and the column (in characters), both from 1.
    fn locate(&self, text: &str, offset: usize) -> (usize, usize) {
        let index = self.0.partition_point(|start| *start <= offset).saturating_sub(1);
        let start = self.0[index];
        let column = text.get(start..offset).map_or(1, |head| head.chars().count() + 1);
        (index + 1, column)
    }
}

/// A use found in a source file, before its line is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SourceUse {
    /// The rule.
    pub rule: &'static str,
    /// Byte offset in the file.
    pub offset: usize,
    /// The text found.
    pub text: String,
    /// Why it is a note, if it is one.
    pub why: Option<String>,
    /// True when it stands only where MCP is named elsewhere in the tree (the file itself does
    /// not name it).
    pub gated: bool,
}

/// The uses of one source file, one per rule and line (the first), in the file's order.
pub(crate) fn source_uses(text: &str, syntax: Syntax) -> Vec<SourceUse> {
    let spans = lex::spans(text, syntax);
    let file_names_mcp = manifest::names_mcp(text);
    let mut found: Vec<(usize, usize, &Compiled)> = Vec::new();
    for compiled in COMPILED.iter() {
        if compiled.requires.as_ref().is_some_and(|requires| !requires.is_match(text)) {
            continue;
        }
        let matches: Vec<(usize, usize)> = match (compiled.pattern.matcher, &compiled.regex) {
            (Matcher::Literal(word), _) => spans
                .iter()
                .filter(|span| span.kind == Kind::Str && text.get(span.content.0..span.content.1) == Some(word))
                .map(|span| (span.start, span.end))
                .collect(),
            (Matcher::Code(number), _) => code_literals(text, number),
            (Matcher::Ident(_), Some(regex)) => regex
                .find_iter(text)
                .filter(|found| !text[..found.start()].ends_with('$') && !text[found.end()..].starts_with('$'))
                .map(|found| (found.start(), found.end()))
                .collect(),
            (_, Some(regex)) => regex.find_iter(text).map(|found| (found.start(), found.end())).collect(),
            (_, None) => Vec::new(),
        };
        let stateless =
            |end: usize| compiled.unless_followed_by.as_ref().is_some_and(|regex| regex.is_match(&text[end..]));
        found
            .extend(matches.into_iter().filter(|(_, end)| !stateless(*end)).map(|(start, end)| (start, end, compiled)));
    }
    found.sort_by_key(|(start, _, compiled)| (*start, rule_number(compiled.pattern.rule)));
    let lines = Lines::new(text);
    let mut seen = std::collections::HashSet::new();
    let mut markers: HashMap<&str, Option<String>> = HashMap::new();
    let mut uses = Vec::new();
    for (start, end, compiled) in found {
        let rule = compiled.pattern.rule;
        if !seen.insert((rule, lines.locate(text, start).0)) {
            continue;
        }
        let why = if lex::kind_at(&spans, start) == Some(Kind::Comment) {
            Some("in a comment".to_owned())
        } else if compiled.answered.as_ref().is_some_and(|answered| answered.is_match(following_lines(text, start, 8)))
        {
            Some("the handler answers 405, as a 2026-07-28 server does".to_owned())
        } else {
            markers
                .entry(rule)
                .or_insert_with(|| dual_marker(text, &spans, rule))
                .as_ref()
                .map(|marker| format!("dual-era: the file also has `{marker}`"))
        };
        let shown: String = text[start..end].lines().next().unwrap_or_default().trim().to_owned();
        uses.push(SourceUse {
            rule,
            offset: start,
            text: crate::text::clip_chars(&shown, 80),
            why,
            gated: compiled.pattern.gated && !file_names_mcp,
        });
    }
    uses
}

/// The text from `start` to the end of the `count`th line after it.
fn following_lines(text: &str, start: usize, count: usize) -> &str {
    let rest = &text[start..];
    let end = rest.match_indices('\n').nth(count).map_or(rest.len(), |(at, _)| at);
    &rest[..end]
}

/// The first of the rule's dual-era markers (then `2026-07-28`) found in code or a string.
fn dual_marker(text: &str, spans: &[Span], rule: &str) -> Option<String> {
    DUAL.get(rule)?.iter().find_map(|marker| {
        marker
            .find_iter(text)
            .find(|found| lex::kind_at(spans, found.start()) != Some(Kind::Comment))
            .map(|found| found.as_str().to_owned())
    })
}

/// The literals `-N` in `text` (start, end), the minus against the number: not inside a longer
/// number (`132002`, `-320021`, `-32002.5`) or after an identifier (`x-32002`).
fn code_literals(text: &str, number: u32) -> Vec<(usize, usize)> {
    let digits = number.to_string();
    let bytes = text.as_bytes();
    text.match_indices(&digits)
        .filter_map(|(at, _)| {
            let minus = at.checked_sub(1).filter(|minus| bytes[*minus] == b'-')?;
            let end = at + digits.len();
            let word = |byte: &u8| byte.is_ascii_alphanumeric() || *byte == b'_' || *byte == b'.';
            let before = minus.checked_sub(1).and_then(|index| bytes.get(index)).is_some_and(word);
            let fraction = bytes.get(end) == Some(&b'.') && bytes.get(end + 1).is_some_and(u8::is_ascii_digit);
            let after = bytes.get(end).is_some_and(|byte| byte.is_ascii_alphanumeric() || *byte == b'_');
            (!before && !fraction && !after).then_some((minus, end))
        })
        .collect()
}

#[cfg(test)]
mod tests;
