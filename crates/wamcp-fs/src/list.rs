//! `list_directory`: one directory's entries, directories first.

use crate::budget::Budget;
use crate::paths::{input_path, io_error, require_directory, sort_paths};
use std::fmt::Write;
use std::path::Path;
use wamcp_policy::error::ErrorType;
use wamcp_policy::error::ToolError;
use wamcp_policy::limits::MAX_DIRECTORY_ENTRIES;

/// Lists `path_arg` (blank means the working directory): directories, then
/// files, each sorted case-insensitively; at most 1000 entries. A directory
/// too big to read within `budget` is listed from the entries read.
pub fn list_directory(
    path_arg: &str,
    cwd: &Path,
    budget: &dyn Budget,
) -> Result<String, ToolError> {
    let path_arg = if path_arg.trim().is_empty() {
        "."
    } else {
        path_arg
    };
    let dir = input_path(path_arg, cwd)?;
    require_directory(path_arg, &dir)?;
    let entries = std::fs::read_dir(&dir)
        .map_err(|e| io_error(path_arg, &dir, &e, ErrorType::DirectoryReadFailed))?;
    let mut dirs = Vec::new();
    let mut files = Vec::new();
    let mut unreadable = 0usize;
    let mut out_of_time = false;
    for (read, entry) in entries.enumerate() {
        // The clock is read every few thousand entries: it is cheap, not free.
        if read % 4096 == 4095 && budget.exhausted(0) {
            out_of_time = true;
            break;
        }
        let Ok(entry) = entry else {
            unreadable += 1;
            continue;
        };
        let name = entry.file_name().to_string_lossy().into_owned();
        // A link to a directory lists as a directory; a broken link as a file.
        let is_dir = match entry.file_type() {
            Ok(t) if t.is_symlink() => entry.path().is_dir(),
            Ok(t) => t.is_dir(),
            Err(_) => false,
        };
        if is_dir {
            dirs.push(name)
        } else {
            files.push(name)
        }
    }
    sort_paths(&mut dirs);
    sort_paths(&mut files);

    let shown_path = dunce::canonicalize(&dir).unwrap_or(dir);
    let mut out = format!("DIRECTORY: {}\n", shown_path.display());
    let total = dirs.len() + files.len();
    let listed = dirs
        .iter()
        .map(|d| ("[dir ]", d))
        .chain(files.iter().map(|f| ("[file]", f)));
    for (tag, name) in listed.take(MAX_DIRECTORY_ENTRIES) {
        let _ = writeln!(out, "  {tag} {name}");
    }
    if out_of_time {
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
    if unreadable > 0 {
        let _ = writeln!(out, "{unreadable} entries could not be read.");
    }
    Ok(out)
}
