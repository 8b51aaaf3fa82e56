//! `list_directory`: one directory's entries, directories first.

use crate::budget::{Bounds, Budget};
use crate::paths::{input_path, io_error, require_directory, sort_paths};
use crate::secrets::refuse_secret;
use std::fmt::Write;
use std::fs::{DirEntry, ReadDir};
use std::path::{Path, PathBuf};
use wamcp_policy::error::ErrorType;
use wamcp_policy::error::ToolError;
use wamcp_policy::limits::MAX_DIRECTORY_ENTRIES;

/// Lists `path_arg` (blank means the working directory): directories, then
/// files, each sorted case-insensitively; at most 1000 entries. A directory
/// too big to read within `budget` is listed from the entries read.
pub fn list_directory(path_arg: &str, cwd: &Path, bounds: &Bounds) -> Result<String, ToolError> {
    let budget = bounds.budget;
    let path_arg = if path_arg.trim().is_empty() {
        "."
    } else {
        path_arg
    };
    let dir = input_path(path_arg, cwd)?;
    require_directory(path_arg, &dir, ErrorType::DirectoryReadFailed)?;
    refuse_secret(bounds.secrets, path_arg, &dir, "it is not listed")?;
    let entries = std::fs::read_dir(&dir)
        .map_err(|e| io_error(path_arg, &dir, &e, ErrorType::DirectoryReadFailed))?;
    let listing = collect_entries(entries, bounds);
    Ok(render_listing(dir, &listing, budget))
}

/// One directory's entries as read: names split into directories and
/// files, each sorted, and what could not be read.
struct Listing {
    dirs: Vec<String>,
    files: Vec<String>,
    /// Entries the directory stream failed to yield.
    unreadable: usize,
    /// Entries left out because they are secret stores.
    secret: Vec<String>,
    /// The budget ran out before the stream ended.
    out_of_time: bool,
}

/// Reads `entries` into a [`Listing`], stopping when `budget` runs out,
/// then sorts each kind case-insensitively.
fn collect_entries(entries: ReadDir, bounds: &Bounds) -> Listing {
    let mut listing = Listing {
        dirs: Vec::new(),
        files: Vec::new(),
        unreadable: 0,
        secret: Vec::new(),
        out_of_time: false,
    };
    for (read, entry) in entries.enumerate() {
        // The clock is read every few thousand entries: it is cheap, not free.
        if read % 4096 == 4095 && bounds.budget.exhausted(0) {
            listing.out_of_time = true;
            break;
        }
        let Ok(entry) = entry else {
            listing.unreadable += 1;
            continue;
        };
        let name = entry.file_name().to_string_lossy().into_owned();
        if bounds
            .secrets
            .hides(&entry.file_name(), || entry.path())
            .is_some()
        {
            listing.secret.push(name);
            continue;
        }
        if lists_as_dir(&entry) {
            listing.dirs.push(name)
        } else {
            listing.files.push(name)
        }
    }
    sort_paths(&mut listing.dirs);
    sort_paths(&mut listing.files);
    sort_paths(&mut listing.secret);
    listing
}

/// Whether `entry` is listed among the directories.
fn lists_as_dir(entry: &DirEntry) -> bool {
    // A link to a directory lists as a directory; a broken link as a file.
    match entry.file_type() {
        Ok(t) if t.is_symlink() => entry.path().is_dir(),
        Ok(t) => t.is_dir(),
        Err(_) => false,
    }
}

/// The answer: the directory's resolved path, at most
/// `MAX_DIRECTORY_ENTRIES` entries (directories first), then a line saying
/// how complete the listing is.
fn render_listing(dir: PathBuf, listing: &Listing, budget: &dyn Budget) -> String {
    let shown_path = dunce::canonicalize(&dir).unwrap_or(dir);
    let mut out = format!("DIRECTORY: {}\n", shown_path.display());
    // A folder is its name and a slash, a file its name: indented
    // `[dir ]`/`[file]` tags would cost more than most names.
    let listed = listing
        .dirs
        .iter()
        .map(|d| (d, "/"))
        .chain(listing.files.iter().map(|f| (f, "")));
    for (name, slash) in listed.take(MAX_DIRECTORY_ENTRIES) {
        let _ = writeln!(out, "{name}{slash}");
    }
    write_completeness(&mut out, listing, budget);
    if listing.unreadable > 0 {
        let _ = writeln!(out, "{} entries could not be read.", listing.unreadable);
    }
    if !listing.secret.is_empty() {
        let _ = writeln!(
            out,
            "Not listed, as secret stores: {}.",
            listing.secret.join(", ")
        );
    }
    out
}

/// The line after the entries: why the listing is incomplete, or how many
/// entries there are.
fn write_completeness(out: &mut String, listing: &Listing, budget: &dyn Budget) {
    let (dirs, files) = (&listing.dirs, &listing.files);
    let total = dirs.len() + files.len();
    if listing.out_of_time {
        let _ = writeln!(
            out,
            "[INCOMPLETE: the time budget of {} ran out after reading {total} entries ({} directories, {} \
             files); the listing is sorted among those only. Use find_files with a glob to narrow it.]",
            budget.describe(),
            dirs.len(),
            files.len()
        );
    } else if total == 0 {
        out.push_str("(empty)\n");
    } else if total > MAX_DIRECTORY_ENTRIES {
        let _ = writeln!(
            out,
            "Showing {MAX_DIRECTORY_ENTRIES} of {total} entries ({} directories, {} files). The listing is \
             INCOMPLETE; use find_files with a glob to narrow it.",
            dirs.len(),
            files.len()
        );
    } else {
        let _ = writeln!(out, "{total} entr{}", if total == 1 { "y" } else { "ies" });
    }
}
