//! Atomic file writes shared by the reports and the cassettes: a reader never sees a half-written
//! file, and the file is readable by everyone (CI steps that upload or parse it may run as
//! another user).

use std::io::Write as _;
use std::path::Path;

/// Writes `contents` to `path` through a synced temporary file in the same directory, renamed
/// over the target; the file gets mode 0644 (a temporary file starts as 0600).
///
/// # Errors
///
/// The IO error of creating, writing, syncing or renaming the temporary file.
pub(crate) fn write_atomic(path: &Path, contents: &str) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let permissions = <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o644);
    let mut file =
        tempfile::Builder::new().prefix(".mcp-eval-").suffix(".tmp").permissions(permissions).tempfile_in(dir)?;
    file.write_all(contents.as_bytes())?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|error| error.error)?;
    Ok(())
}
