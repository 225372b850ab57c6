//! The verdict cache of layer 1: one entry per case × model, looked up by its own key, so an
//! unchanged pull request costs no model call and editing one case re-runs that case alone.
//!
//! The key ([`CacheKey::new`]) is SHA-256 over the canonical JSON of everything a verdict
//! depends on: the case hash (sampling included), the fingerprint of the tools the case can
//! see (name, title, description, `inputSchema`, `outputSchema`, annotations), the model, the
//! provider's wire and base URL, the number of runs, the judge settings when a rubric applies,
//! the embeddings model and the argument judge when `embedding` or `judge` matchers do,
//! mcp-eval's version and the version of its agent loop and graders, and a **server key** (`--cache-key`: the hash of the workspace in the
//! Action, so a change to the server's code re-runs its cases; `none` leaves it out).
//!
//! Entries are files `DIR/ab/abcdef….json` written atomically; one that cannot be read is
//! skipped with a warning (never a crash, never a wrong verdict); several writers may share the
//! directory (a file is either the old or the new entry); the directory is kept under a size
//! bound by evicting the least recently used entries first.
//!
//! With `--cache-key auto`, `DIR/workspace-manifest.json` ([`Manifest`]) keeps the paths and
//! content digests the last run hashed, so that a run whose key changed can name the paths that
//! changed it ([`Manifest::moved_since`]); a missing or unreadable manifest only leaves them
//! unnamed.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::SaveError;
use crate::report::evals::{CachedFrom, EvalResult};

/// Why a cache entry or the workspace manifest was not read or written: a warning, never a
/// failure of the run (the entry or manifest is then ignored). The message names the file and
/// quotes its cause.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CacheError {
    /// An entry exists but cannot be read.
    #[error("cannot read the cache entry {}: {source}; ignored", .path.display())]
    ReadEntry {
        /// The entry's file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// An entry is not JSON of the entry's shape.
    #[error("the cache entry {} is not readable ({source}); ignored", .path.display())]
    ParseEntry {
        /// The entry's file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
    /// An entry of another format, or stored under another key.
    #[error("the cache entry {} is of another format or key; ignored", .path.display())]
    OtherEntry {
        /// The entry's file.
        path: PathBuf,
    },
    /// The manifest exists but cannot be read.
    #[error("cannot read the workspace manifest {}: {source}", .path.display())]
    ReadManifest {
        /// The manifest's file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The manifest is of another format.
    #[error("the workspace manifest {} is of another format", .path.display())]
    OtherManifest {
        /// The manifest's file.
        path: PathBuf,
    },
    /// The manifest is not JSON of the manifest's shape.
    #[error("the workspace manifest {} is not readable ({source})", .path.display())]
    ParseManifest {
        /// The manifest's file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
    /// An entry or the manifest could not be written.
    #[error(transparent)]
    Save(#[from] SaveError),
}

/// The version of the agent loop and graders (kept with the report that carries it).
pub(crate) use crate::report::evals::GRADER_VERSION;

/// The format of an entry file.
const ENTRY_FORMAT: u32 = 1;

/// The default size bound of a cache directory, in bytes.
pub(crate) const DEFAULT_MAX_BYTES: u64 = 256 * 1024 * 1024;

/// How the cache is used (`--cache-mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Mode {
    /// Reuse hits, store new verdicts.
    #[default]
    ReadWrite,
    /// Store new verdicts, reuse none (scheduled runs measure the model afresh).
    WriteOnly,
    /// Neither.
    Off,
}

/// What a case × model verdict depends on, besides the case itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeyParts<'a> {
    /// `sha256:…` of the resolved case.
    pub case_sha256: &'a str,
    /// The canonical JSON of the tools the case can see (see [`tool_fingerprint`]).
    pub tools: &'a str,
    /// `PROVIDER:MODEL`.
    pub model: &'a str,
    /// `openai`, `anthropic` or `replay`.
    pub wire: &'a str,
    /// The provider's base URL.
    pub base_url: &'a str,
    /// The runs actually asked for.
    pub runs: usize,
    /// The server key, when there is one.
    pub server_key: Option<&'a str>,
    /// The judge settings when a rubric applies: the judge model, its samples and the judge
    /// prompt version (the rubric itself is in the case hash).
    pub judge: Option<String>,
    /// When the case has `embedding` or `judge` argument matchers: the embeddings model and its
    /// endpoint, the judge and the argument prompt version. Left out of the key when `None`, so
    /// the keys of other cases stay as they were.
    pub matchers: Option<String>,
}

/// A cache key: `sha256:…`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct CacheKey(pub String);

impl CacheKey {
    /// The key of `parts`.
    pub(crate) fn new(parts: &KeyParts<'_>) -> Self {
        let mut value = json!({
            "v": 1,
            "case": parts.case_sha256,
            "tools": crate::jcs::hash(&serde_json::from_str::<Value>(parts.tools).unwrap_or(Value::Null)),
            "model": parts.model,
            "wire": parts.wire,
            "base_url": parts.base_url,
            "runs": parts.runs,
            "server_key": parts.server_key,
            "judge": parts.judge,
            "mcp_eval": env!("CARGO_PKG_VERSION"),
            "graders": GRADER_VERSION,
        });
        if let Some(matchers) = &parts.matchers {
            value["matchers"] = json!(matchers);
        }
        CacheKey(crate::jcs::hash(&value))
    }

    fn hex(&self) -> &str {
        self.0.trim_start_matches("sha256:")
    }
}

/// The canonical JSON of the tools a case can see: each tool's name, title, description,
/// `inputSchema`, `outputSchema` and annotations, sorted by name.
pub(crate) fn tool_fingerprint<'a>(tools: impl IntoIterator<Item = &'a crate::mcp::tools::ToolView>) -> String {
    let surface = crate::mcp::tools::ToolSurface { tools: tools.into_iter().cloned().collect(), skipped: 0 };
    surface.canonical_text()
}

/// One entry file.
#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    format: u32,
    key: String,
    measured_at: String,
    server_key: String,
    eval: EvalResult,
}

/// A cache directory.
#[derive(Debug, Clone)]
pub(crate) struct VerdictCache {
    dir: PathBuf,
    mode: Mode,
    max_bytes: u64,
}

impl VerdictCache {
    /// The cache in `dir` (created when first written).
    pub(crate) fn new(dir: PathBuf, mode: Mode) -> Self {
        Self { dir, mode, max_bytes: DEFAULT_MAX_BYTES }
    }

    /// The same cache with another size bound (tests).
    #[cfg(test)]
    pub(crate) fn with_max_bytes(mut self, max_bytes: u64) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    fn path(&self, key: &CacheKey) -> PathBuf {
        let hex = key.hex();
        self.dir.join(&hex[..2.min(hex.len())]).join(format!("{hex}.json"))
    }

    /// The verdict stored under `key`, with where it came from; `Err` with a warning when an
    /// entry exists but cannot be read (it is then ignored).
    pub(crate) fn get(&self, key: &CacheKey) -> Result<Option<(EvalResult, CachedFrom)>, CacheError> {
        if self.mode != Mode::ReadWrite {
            return Ok(None);
        }
        let path = self.path(key);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(CacheError::ReadEntry { path, source }),
        };
        let entry: Entry = match serde_json::from_str(&text) {
            Ok(entry) => entry,
            Err(source) => return Err(CacheError::ParseEntry { path, source }),
        };
        if entry.format != ENTRY_FORMAT || entry.key != key.0 {
            return Err(CacheError::OtherEntry { path });
        }
        // Touch it: eviction is least recently used first.
        let _ = std::fs::File::options()
            .append(true)
            .open(&path)
            .and_then(|file| file.set_modified(std::time::SystemTime::now()));
        let from = CachedFrom { key: entry.key, measured_at: entry.measured_at, server_key: entry.server_key };
        Ok(Some((entry.eval, from)))
    }

    /// Stores `eval` under `key` (atomically), then keeps the directory under its size bound.
    pub(crate) fn put(
        &self,
        key: &CacheKey,
        eval: &EvalResult,
        measured_at: &str,
        server_key: Option<&str>,
    ) -> Result<(), CacheError> {
        if self.mode == Mode::Off {
            return Ok(());
        }
        let path = self.path(key);
        let entry = Entry {
            format: ENTRY_FORMAT,
            key: key.0.clone(),
            measured_at: measured_at.to_owned(),
            server_key: server_key.unwrap_or("none").to_owned(),
            eval: EvalResult { cached: None, ..eval.clone() },
        };
        let text = serde_json::to_string(&entry).map_err(SaveError::from)?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|source| SaveError::CreateDir { dir: parent.to_path_buf(), source })?;
        }
        crate::atomic::write_atomic(&path, &text).map_err(|source| SaveError::Write { path: path.clone(), source })?;
        self.evict();
        Ok(())
    }

    /// Deletes the least recently used entries until the directory fits its bound. Only the
    /// entries' shard directories are walked: the files beside them (`baselines.json`,
    /// `trends.json`, the workspace manifest) are neither removed nor counted.
    fn evict(&self) {
        let mut entries: Vec<(std::time::SystemTime, u64, PathBuf)> = Vec::new();
        let Ok(shards) = std::fs::read_dir(&self.dir) else { return };
        for shard in shards.flatten() {
            let Ok(files) = std::fs::read_dir(shard.path()) else { continue };
            for file in files.flatten() {
                let path = file.path();
                if path.extension().and_then(|ext| ext.to_str()) != Some("json") {
                    continue;
                }
                if let Ok(metadata) = file.metadata() {
                    entries.push((metadata.modified().unwrap_or(std::time::UNIX_EPOCH), metadata.len(), path));
                }
            }
        }
        let mut total: u64 = entries.iter().map(|(_, size, _)| size).sum();
        if total <= self.max_bytes {
            return;
        }
        entries.sort();
        for (_, size, path) in entries {
            if total <= self.max_bytes {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                total = total.saturating_sub(size);
            }
        }
    }
}

/// The file of the cache directory that keeps the workspace [`Manifest`] of the last run that
/// stored or reused verdicts with `--cache-key auto` (beside `baselines.json` and the entry
/// shards; eviction never removes it).
pub(crate) const MANIFEST_FILE: &str = "workspace-manifest.json";

/// The most paths a [`Manifest`] names. Past it the manifest keeps only the key and the number
/// of files: a changed key is then said with the two counts, without naming the paths that
/// moved it (the file stays under about 400 KB).
pub(crate) const MANIFEST_MAX_PATHS: usize = 5_000;

/// The format of the manifest file.
const MANIFEST_FORMAT: u32 = 1;

/// How many moved paths [`Manifest::moved_since`] names; the rest are counted (`+N more`).
const NAMED_PATHS: usize = 5;

/// What `--cache-key auto` hashed: the server key, and each file's path with a digest of its
/// contents (never the contents), so the next run can say which paths moved the key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Manifest {
    /// [`MANIFEST_FORMAT`].
    format: u32,
    /// The server key: `sha256:…` over every file ([`workspace_manifest`]).
    pub key: String,
    /// The number of files hashed.
    pub files: usize,
    /// Each file's workspace-relative path (`/` separators) → the first 16 hex digits of the
    /// SHA-256 of its contents; `None` when the workspace has more than [`MANIFEST_MAX_PATHS`]
    /// files.
    pub paths: Option<std::collections::BTreeMap<String, String>>,
}

impl Manifest {
    /// The sentence that says why the key changed since `before` (no `layer 1:` prefix), or
    /// `None` when it did not. It names at most five paths that moved it — added first, then
    /// changed, then removed, each sorted by path — and counts the rest (`+N more`); past
    /// [`MANIFEST_MAX_PATHS`] on either side it gives the two file counts instead.
    pub(crate) fn moved_since(&self, before: &Manifest) -> Option<String> {
        if self.key == before.key {
            return None;
        }
        let head = "the cache key (auto) changed since the last stored run";
        let tail = "; cached verdicts keyed on the old workspace are not reused";
        let (Some(now), Some(then)) = (&self.paths, &before.paths) else {
            return Some(format!(
                "{head}: the workspace has {} files ({} then), more than the {MANIFEST_MAX_PATHS} a manifest names, so the paths that moved it are not named{tail}",
                self.files, before.files
            ));
        };
        let added = now.keys().filter(|path| !then.contains_key(*path)).map(|path| (path, "added"));
        let changed = now
            .iter()
            .filter(|(path, digest)| then.get(*path).is_some_and(|old| old != *digest))
            .map(|(path, _)| (path, "changed"));
        let removed = then.keys().filter(|path| !now.contains_key(*path)).map(|path| (path, "removed"));
        let moved: Vec<(&String, &str)> = added.chain(changed).chain(removed).collect();
        if moved.is_empty() {
            // The same paths and contents under another key (another version of the recipe).
            return Some(format!("{head}{tail}"));
        }
        let named: Vec<String> =
            moved.iter().take(NAMED_PATHS).map(|(path, how)| format!("`{}` {how}", shown_path(path))).collect();
        let more = match moved.len().saturating_sub(NAMED_PATHS) {
            0 => String::new(),
            rest => format!(" (+{rest} more)"),
        };
        Some(format!("{head}: {}{more}{tail}", named.join(", ")))
    }
}

/// A manifest path as a notice shows it: on one line (control characters escaped), at most 120
/// characters.
fn shown_path(path: &str) -> String {
    let escaped: String =
        path.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect();
    crate::text::clip_chars(&escaped, 120)
}

impl VerdictCache {
    fn manifest_path(&self) -> PathBuf {
        self.dir.join(MANIFEST_FILE)
    }

    /// The manifest the last run that stored or reused verdicts here wrote: `Ok(None)` when
    /// there is none; `Err` with a warning when the file cannot be read or is of another
    /// format (it is then ignored, and replaced by the next run that stores).
    pub(crate) fn last_manifest(&self) -> Result<Option<Manifest>, CacheError> {
        let path = self.manifest_path();
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(CacheError::ReadManifest { path, source }),
        };
        match serde_json::from_str::<Manifest>(&text) {
            Ok(manifest) if manifest.format == MANIFEST_FORMAT => Ok(Some(manifest)),
            Ok(_) => Err(CacheError::OtherManifest { path }),
            Err(source) => Err(CacheError::ParseManifest { path, source }),
        }
    }

    /// Writes `manifest` as the last one (atomically, the directory created when needed).
    pub(crate) fn put_manifest(&self, manifest: &Manifest) -> Result<(), CacheError> {
        if self.mode == Mode::Off {
            return Ok(());
        }
        let text = serde_json::to_string(manifest).map_err(SaveError::from)?;
        std::fs::create_dir_all(&self.dir).map_err(|source| SaveError::CreateDir { dir: self.dir.clone(), source })?;
        let path = self.manifest_path();
        crate::atomic::write_atomic(&path, &text).map_err(|source| SaveError::Write { path, source })?;
        Ok(())
    }
}

/// The server key of `--cache-key auto` and its [`Manifest`]: the key is SHA-256 over the
/// workspace's files (paths and contents, sorted by path) as git would track them — `.gitignore`
/// files (and `.git/info/exclude`) are honoured, so build outputs and installed dependencies
/// that the repository ignores are left out — leaving out `.git/`, the paths in `skip` (the
/// golden-set directory, the cache and report directories) and any directory that holds an
/// mcp-eval report (`report.json` beside `summary.md`: earlier runs' `--out`). Symlinks are not
/// followed. The manifest names at most [`MANIFEST_MAX_PATHS`] paths. Errors: a directory or
/// file that cannot be read.
pub(crate) fn workspace_manifest(root: &Path, skip: &[PathBuf]) -> std::io::Result<Manifest> {
    manifest_capped(root, skip, MANIFEST_MAX_PATHS)
}

/// [`workspace_manifest`] with the bound on named paths given (tests use a small one).
fn manifest_capped(root: &Path, skip: &[PathBuf], max_paths: usize) -> std::io::Result<Manifest> {
    use sha2::{Digest, Sha256};
    let skip = skip.to_vec();
    let walk = ignore::WalkBuilder::new(root)
        .hidden(false)
        .parents(false)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_path(Ord::cmp)
        .filter_entry(move |entry| {
            let path = entry.path();
            let is_dir = entry.file_type().is_some_and(|kind| kind.is_dir());
            !(entry.file_name() == ".git"
                || skip.iter().any(|skipped| path.starts_with(skipped))
                || (is_dir && path.join("report.json").is_file() && path.join("summary.md").is_file()))
        })
        .build();
    let mut hasher = Sha256::new();
    let mut files = 0;
    let mut paths = Some(std::collections::BTreeMap::new());
    for entry in walk {
        let entry = entry.map_err(std::io::Error::other)?;
        if !entry.file_type().is_some_and(|kind| kind.is_file()) {
            continue;
        }
        let path = entry.path();
        let relative = path.strip_prefix(root).unwrap_or(path);
        let digest = Sha256::digest(std::fs::read(path)?);
        hasher.update(relative.to_string_lossy().as_bytes());
        hasher.update([0]);
        hasher.update(digest);
        files += 1;
        if files > max_paths {
            paths = None;
        }
        if let Some(paths) = paths.as_mut() {
            let shown: Vec<String> =
                relative.components().map(|part| part.as_os_str().to_string_lossy().into_owned()).collect();
            paths.insert(shown.join("/"), format!("{digest:x}")[..16].to_owned());
        }
    }
    Ok(Manifest { format: MANIFEST_FORMAT, key: format!("sha256:{:x}", hasher.finalize()), files, paths })
}

#[cfg(test)]
mod tests;
