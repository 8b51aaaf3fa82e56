//! Turning a model's path argument into a checked path, and I/O failures into
//! typed errors with a next step.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use wamcp_policy::error::{ErrorType, ToolError};

/// Resolves a path argument against the server's working directory. Both
/// separators work on Windows. Reads are not confined: any path the server's
/// account can read may be read.
pub fn input_path(raw: &str, cwd: &Path) -> Result<PathBuf, ToolError> {
    if raw.trim().is_empty() {
        return Err(ToolError::new(ErrorType::InvalidPath, "The path is empty.")
            .recover("Pass a file or directory path, relative to the server's working directory or absolute."));
    }
    // A NUL would be cut off by the OS and silently name a different file.
    if raw.contains('\0') {
        return Err(
            ToolError::new(ErrorType::InvalidPath, "The path contains a NUL character.")
                .with_path(raw.replace('\0', "\\0")),
        );
    }
    Ok(cwd.join(raw))
}

/// The error for a path that does not exist, naming the deepest ancestor
/// that does so the model can look there instead of guessing again.
pub fn not_found(shown: &str, path: &Path) -> ToolError {
    // The folder as the caller would write it: a relative path's own
    // parent (`src`, or `.`), an absolute one above the working directory.
    let as_written = Path::new(shown)
        .ancestors()
        .skip(1)
        .map(|a| match a.as_os_str().is_empty() {
            true => ".".to_string(),
            false => a.display().to_string(),
        })
        .map(Some)
        .chain(std::iter::repeat(None));
    let ancestor = path
        .ancestors()
        .skip(1)
        .zip(as_written)
        .find(|(real, _)| real.is_dir())
        .map(|(real, written)| written.unwrap_or_else(|| real.display().to_string()));
    // Each fact once: the path in `path`, the folder in `existing_ancestor`.
    let mut error = ToolError::new(ErrorType::PathNotFound, "Not found.").with_path(shown);
    if let Some(ancestor) = ancestor {
        error = error
            .detail("existing_ancestor", ancestor)
            .recover("Call list_directory on existing_ancestor.");
    }
    error
}

/// Maps an I/O error on `path`, with `other` as the type for anything that is
/// neither "missing" nor "denied".
pub fn io_error(shown: &str, path: &Path, error: &std::io::Error, other: ErrorType) -> ToolError {
    if let Some(not) = error
        .get_ref()
        .and_then(|e| e.downcast_ref::<crate::regular::NotRegular>())
    {
        return not_regular(shown, not.what);
    }
    if wamcp_platform::atomic::is_file_in_use(error) {
        return file_in_use(shown);
    }
    match error.kind() {
        ErrorKind::NotFound => not_found(shown, path),
        ErrorKind::PermissionDenied => ToolError::new(
            ErrorType::PermissionDenied,
            format!("Permission denied for '{shown}'."),
        )
        .with_path(shown)
        .recover("The server's account cannot read it; ask the user, or choose another path."),
        _ => ToolError::new(other, format!("Cannot read '{shown}': {error}."))
            .with_path(shown)
            .retryable(
                "Retry once; if it fails again, ask the user to check the path and its disk.",
            ),
    }
}

/// The refusal for a FIFO, socket or device, which would block or never end.
pub fn not_regular(shown: &str, what: &str) -> ToolError {
    ToolError::new(
        ErrorType::NotARegularFile,
        format!("'{shown}' is {what}, not a regular file; it is never opened, as reading it could block forever."),
    )
    .with_path(shown)
    .recover("Pass an ordinary file; list_directory shows what the directory holds.")
}

/// The refusal for a file another program holds open (Windows sharing rules).
pub fn file_in_use(shown: &str) -> ToolError {
    ToolError::new(ErrorType::FileInUse, format!("Another program has '{shown}' open, so it cannot be used now."))
        .with_path(shown)
        .retryable("Ask the user to close the program holding it (an editor, a debugger, the build), then retry.")
}

/// Checks that `path` is an existing directory; a failure other than
/// not-found or permission is of type `unreadable`, the tool's own.
pub fn require_directory(shown: &str, path: &Path, unreadable: ErrorType) -> Result<(), ToolError> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(ToolError::new(
            ErrorType::PathIsNotDirectory,
            format!("'{shown}' is a file, not a directory."),
        )
        .with_path(shown)
        .recover("Use read_file to read it, or pass its parent directory.")),
        Err(e) => Err(io_error(shown, path, &e, unreadable)),
    }
}

/// `path` relative to `root`, with `/` separators whatever the platform, so
/// results read the same on Windows and can be pasted back as arguments.
pub fn relative(path: &Path, root: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let text = rel.to_string_lossy();
    if cfg!(windows) {
        text.replace('\\', "/")
    } else {
        text.into_owned()
    }
}

/// Quotes a string as a JSON string literal, for "call this next" hints a
/// model can copy into its arguments unchanged (Windows backslashes included).
pub fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| format!("\"{text}\""))
}

/// Orders paths for output: case-insensitively, as Windows users expect,
/// with the exact spelling breaking ties so the order is total.
pub fn sort_paths(paths: &mut [String]) {
    paths.sort_by(|a, b| path_order(a, b));
}

/// Moves the `n` first paths in path order to the front, sorted; the rest
/// follow in no particular order. A finder shows a page of what it found:
/// sorting all of 300,000 paths to show 500 took a third as long as the
/// whole walk.
pub fn sort_first(paths: &mut [String], n: usize) {
    if n < paths.len() {
        paths.select_nth_unstable_by(n, |a, b| path_order(a, b));
    }
    let n = n.min(paths.len());
    paths[..n].sort_by(|a, b| path_order(a, b));
}

/// The order of [`sort_paths`]: without regard to case, the spelling
/// breaking ties.
pub fn path_order(a: &str, b: &str) -> std::cmp::Ordering {
    folded_cmp(a, b).then_with(|| a.cmp(b))
}

/// `a` and `b` compared as lower-cased character sequences, without
/// allocating: sorting 200,000 paths made two lower-cased copies per
/// comparison, millions in all, and took longer than walking the tree.
fn folded_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    if a.is_ascii() && b.is_ascii() {
        a.bytes()
            .map(|c| c.to_ascii_lowercase())
            .cmp(b.bytes().map(|c| c.to_ascii_lowercase()))
    } else {
        a.chars()
            .flat_map(char::to_lowercase)
            .cmp(b.chars().flat_map(char::to_lowercase))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_paths_are_those_a_full_sort_puts_first() {
        let all: Vec<String> = (0..300)
            .map(|i| format!("d{}/F{}", i % 7, (i * 37) % 101))
            .collect();
        let mut sorted = all.clone();
        sort_paths(&mut sorted);
        for n in [0, 1, 5, 299, 300, 400] {
            let mut partly = all.clone();
            sort_first(&mut partly, n);
            let n = n.min(all.len());
            assert_eq!(partly[..n], sorted[..n], "n = {n}");
            partly[n..].sort_by(|a, b| path_order(a, b));
            assert_eq!(partly, sorted, "the rest are all there, n = {n}");
        }
    }

    #[test]
    fn paths_sort_case_insensitively_with_the_spelling_breaking_ties() {
        let mut paths: Vec<String> = [
            "b.txt", "A.txt", "a.txt", "src/Z.rs", "src/a.rs", "Ärger", "äb", "Zeta", "ä",
        ]
        .map(String::from)
        .to_vec();
        sort_paths(&mut paths);
        assert_eq!(
            paths,
            [
                "A.txt", "a.txt", "b.txt", "src/a.rs", "src/Z.rs", "Zeta", "ä", "äb", "Ärger"
            ]
        );
        // The same order as comparing lower-cased copies, which it replaces.
        let mut by_copies = paths.clone();
        by_copies.reverse();
        by_copies.sort_by(|a, b| {
            a.to_lowercase()
                .cmp(&b.to_lowercase())
                .then_with(|| a.cmp(b))
        });
        assert_eq!(by_copies, paths);
    }

    #[test]
    fn empty_and_nul_paths_are_invalid() {
        let cwd = Path::new("/w");
        assert_eq!(
            input_path("", cwd).unwrap_err().kind,
            ErrorType::InvalidPath
        );
        assert_eq!(
            input_path("  ", cwd).unwrap_err().kind,
            ErrorType::InvalidPath
        );
        assert_eq!(
            input_path("a\0b", cwd).unwrap_err().kind,
            ErrorType::InvalidPath
        );
        assert_eq!(input_path("a b", cwd).unwrap(), Path::new("/w/a b"));
    }

    #[test]
    fn sorting_is_case_insensitive_and_total() {
        let mut paths = vec![
            "b.txt".to_string(),
            "A.txt".into(),
            "a.txt".into(),
            "B/c".into(),
            "a/x".into(),
        ];
        sort_paths(&mut paths);
        assert_eq!(paths, ["A.txt", "a.txt", "a/x", "b.txt", "B/c"]);
    }

    #[test]
    fn quoting_escapes_backslashes() {
        assert_eq!(quoted(r"C:\src\a.cpp"), r#""C:\\src\\a.cpp""#);
    }
}
