//! `find_files`: files whose names match a glob, under a directory.

use crate::budget::Bounds;
use crate::globs::NameGlobs;
use crate::paths::{input_path, require_directory};
use crate::walk::walk_files;
use std::fmt::Write;
use std::path::Path;
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::limits::{MAX_FIND_RESULTS, clamp_request};

/// Lists files under `path_arg` matching `glob_arg`, sorted, at most
/// `max_results` (clamped to 1..=500).
pub fn find_files(
    glob_arg: &str,
    path_arg: &str,
    cwd: &Path,
    max_results: i64,
    bounds: &Bounds,
) -> Result<String, ToolError> {
    let globs = NameGlobs::parse(glob_arg)?.ok_or_else(|| {
        ToolError::new(ErrorType::InvalidPattern, "file_glob is empty.").recover(
            "Pass a name pattern such as *.cpp, or several separated by commas: *.vert,*.frag.",
        )
    })?;
    let path_arg = if path_arg.trim().is_empty() {
        "."
    } else {
        path_arg
    };
    let root = input_path(path_arg, cwd)?;
    require_directory(path_arg, &root, ErrorType::DirectoryReadFailed)?;
    crate::secrets::refuse_secret(bounds.secrets, path_arg, &root, "it is not walked")?;
    let (limit, capped) = clamp_request(max_results, MAX_FIND_RESULTS as u64);
    let walk = walk_files(
        &root,
        &|rel, name| globs.matches_entry(rel, name),
        bounds,
        limit as usize,
    );

    let mut out = format!("FIND: {} in {}\n", glob_arg.trim(), root.display());
    let total = walk.files.len();
    for file in walk.files.iter().take(limit as usize) {
        out.push_str(file);
        out.push('\n');
    }
    let shown = total.min(limit as usize);
    if walk.cut_short {
        let _ = writeln!(
            out,
            "[INCOMPLETE: the time budget of {} ran out while listing; these are {shown} of the {total} matching \
             files found in the directories reached so far, which are not the first in path order. Narrow path \
             or file_glob; the user can raise WAMCP_SEARCH_BUDGET_SECONDS.]",
            bounds.budget.describe()
        );
    } else if shown < total {
        let _ = writeln!(
            out,
            "Showing the first {shown} of {total} matching files, in path order. The list is INCOMPLETE; \
             narrow file_glob or path to see the rest."
        );
    } else {
        let _ = writeln!(out, "{total} file{}", if total == 1 { "" } else { "s" });
    }
    if total == 0 && !walk.cut_short {
        write_skipped_folders(&mut out, &walk.pruned);
    }
    // Said only when the clamp cut the answer: otherwise it is noise.
    if capped && shown < total {
        let _ = writeln!(
            out,
            "(max_results {max_results} is outside 1-{MAX_FIND_RESULTS}; used {limit}.)"
        );
    }
    append_unreadable(&mut out, &walk.unreadable);
    Ok(out)
}

/// Why a walk may have found nothing: the pruned directories, named, when
/// there were any.
pub(crate) fn write_skipped_folders(out: &mut String, pruned: &[String]) {
    if !pruned.is_empty() {
        let _ = writeln!(
            out,
            "Skipped as tool folders: {}; pass one as path to look inside.",
            name_some(pruned, 3)
        );
    }
}

/// Names what could not be read, so a short result is not mistaken for a
/// complete one.
pub(crate) fn append_unreadable(out: &mut String, unreadable: &[String]) {
    if unreadable.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "{} path{} could not be read: {}",
        unreadable.len(),
        if unreadable.len() == 1 { "" } else { "s" },
        name_some(unreadable, 10)
    );
}

/// At most `named` of `items`, comma-separated, then ", and N more": a big
/// tree must not spend hundreds of tokens on a notice.
pub(crate) fn name_some<T: AsRef<str>>(items: &[T], named: usize) -> String {
    let mut text = items
        .iter()
        .take(named)
        .map(AsRef::as_ref)
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > named {
        let _ = write!(text, ", and {} more", items.len() - named);
    }
    text
}
