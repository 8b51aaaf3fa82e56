//! `write_file` and the commit step `edit_file` shares with it.

use crate::confine::{Target, WriteScope, resolve_for_write};
use crate::paths::file_in_use;
use std::fmt::Write as _;
use std::path::Path;
use wamcp_platform::atomic::{
    Commit, DirectoryChanged, is_file_in_use, is_held_open, write_atomically,
};
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::limits::MAX_WRITE_BYTES;

/// Creates or (with `overwrite`) replaces a file with exactly `content`.
pub fn write_file(
    raw: &str,
    content: &str,
    overwrite: bool,
    cwd: &Path,
    scope: &WriteScope,
) -> Result<String, ToolError> {
    if content.len() > MAX_WRITE_BYTES {
        return Err(ToolError::new(
            ErrorType::ContentTooLarge,
            format!(
                "The content is {} bytes; write_file takes at most {MAX_WRITE_BYTES}.",
                content.len()
            ),
        )
        .with_path(raw)
        .recover("Write a smaller file, or change an existing one in place with edit_file."));
    }
    if content.contains('\0') {
        return Err(ToolError::new(
            ErrorType::InvalidContent,
            "The content contains a NUL character; write_file writes text.",
        )
        .with_path(raw));
    }
    let target = resolve_for_write(raw, cwd, scope)?;
    if target.exists && !overwrite {
        return Err(ToolError::new(ErrorType::FileExists, format!("'{raw}' already exists."))
            .with_path(raw)
            .recover("To change part of it, use edit_file: rewriting a whole file to change a few lines is how content gets lost.")
            .recover("To replace it entirely, call write_file again with overwrite=true."));
    }
    let commit = if target.exists {
        Commit::Replace
    } else {
        Commit::CreateNew
    };
    commit_bytes(raw, &target, content.as_bytes(), commit)?;
    let mut out = String::new();
    let _ = write!(
        out,
        "WROTE: {} ({} bytes, {})",
        target.path.display(),
        content.len(),
        if target.exists {
            "overwritten"
        } else {
            "new file"
        }
    );
    Ok(out)
}

/// Refuses to replace a read-only file: the flag is the owner saying "do not
/// change this", and a rename would silently ignore it.
pub(crate) fn refuse_read_only(raw: &str, target: &Target) -> Result<(), ToolError> {
    let read_only = std::fs::metadata(&target.path).is_ok_and(|m| m.permissions().readonly());
    if target.exists && read_only {
        return Err(ToolError::new(
            ErrorType::PermissionDenied,
            format!("'{raw}' is read-only."),
        )
        .with_path(raw)
        .recover("Ask the user to clear the read-only flag if the file should change."));
    }
    Ok(())
}

/// Creates missing directories, writes atomically, and removes what it
/// created if the write fails, so a failure changes nothing on disk.
pub(crate) fn commit_bytes(
    raw: &str,
    target: &Target,
    bytes: &[u8],
    commit: Commit,
) -> Result<(), ToolError> {
    refuse_read_only(raw, target)?;
    let mut created = Vec::new();
    let result = (|| {
        for dir in &target.missing_dirs {
            std::fs::create_dir(dir)?;
            created.push(dir.clone());
        }
        let name = target
            .path
            .file_name()
            .ok_or_else(|| std::io::Error::other("no file name"))?;
        write_atomically(&target.dir, name, bytes, commit)
    })();
    if let Err(error) = result {
        for dir in created.iter().rev() {
            let _ = std::fs::remove_dir(dir);
        }
        return Err(write_error(raw, target, &error));
    }
    Ok(())
}

fn write_error(raw: &str, target: &Target, error: &std::io::Error) -> ToolError {
    if let Some(changed) = error
        .get_ref()
        .and_then(|e| e.downcast_ref::<DirectoryChanged>())
    {
        return ToolError::new(
            ErrorType::WritePathNotAllowed,
            format!("Nothing was written to '{raw}': {changed}."),
        )
        .with_path(raw)
        .recover(
            "Something is changing this directory; check with list_directory before trying again.",
        );
    }
    let denied = error.kind() == std::io::ErrorKind::PermissionDenied;
    if is_file_in_use(error) || (denied && target.exists && is_held_open(&target.path)) {
        return file_in_use(raw);
    }
    match error.kind() {
        std::io::ErrorKind::AlreadyExists => ToolError::new(
            ErrorType::FileExists,
            format!("'{raw}' appeared while writing; it was not replaced."),
        )
        .with_path(raw)
        .recover("Read it, then use edit_file or write_file with overwrite=true."),
        std::io::ErrorKind::PermissionDenied => ToolError::new(
            ErrorType::PermissionDenied,
            format!("Permission denied writing '{raw}'."),
        )
        .with_path(raw)
        .recover("The server's account cannot write there; ask the user."),
        _ => ToolError::new(
            ErrorType::WriteFailed,
            format!("Writing '{raw}' failed: {error}. Nothing was changed."),
        )
        .with_path(raw)
        .retryable(),
    }
}
