//! `edit_file`: replace an exact string, keeping the file's shape.
//!
//! Matching happens in LF space, so a caller's `\n` finds a CRLF file (the
//! most common reason an edit "cannot match" for reasons invisible in the
//! output, after which a model rewrites the whole file). The file's dominant
//! line ending is then restored on every line, a UTF-8 BOM is kept, and
//! UTF-16 files are written back as UTF-16 with their BOM.

use crate::confine::{WriteScope, resolve_for_write};
use crate::file_lock::{self, Snapshot};
use crate::paths::not_found;
use crate::read::describe_non_utf8;
use crate::write::commit_bytes;
use std::path::Path;
use wamcp_platform::atomic::Commit;
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::limits::MAX_EDIT_BYTES;

/// Reads a file to edit, refusing special files and files over the cap,
/// with the snapshot the commit is checked against.
fn read_for_edit(raw: &str, path: &Path) -> Result<(Vec<u8>, Snapshot), ToolError> {
    let io = |e: &std::io::Error| crate::paths::io_error(raw, path, e, ErrorType::ReadFailed);
    let mut file = crate::regular::open_regular(path).map_err(|e| io(&e))?;
    let meta = file.metadata().map_err(|e| io(&e))?;
    if meta.len() > MAX_EDIT_BYTES as u64 {
        return Err(too_large(raw, meta.len() as usize));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // A file growing while it is read is read no further than the cap.
    std::io::Read::read_to_end(
        &mut std::io::Read::take(&mut file, MAX_EDIT_BYTES as u64 + 1),
        &mut bytes,
    )
    .map_err(|e| io(&e))?;
    if bytes.len() > MAX_EDIT_BYTES {
        return Err(too_large(raw, bytes.len()));
    }
    let snapshot = Snapshot::of(&bytes, &meta);
    Ok((bytes, snapshot))
}

/// How a file's text was stored.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Encoding {
    Utf8 { bom: bool },
    Utf16Le,
    Utf16Be,
}

/// Replaces `old_string` with `new_string` in the file `raw` names, once unless
/// `replace_all`. The write is confined to `scope` like `write_file`'s.
pub fn edit_file(
    raw: &str,
    old_string: &str,
    new_string: &str,
    replace_all: bool,
    cwd: &Path,
    scope: &WriteScope,
) -> Result<String, ToolError> {
    let change = Change::checked(raw, old_string, new_string, replace_all)?;
    let target = resolve_for_write(raw, cwd, scope)?;
    if !target.exists {
        return Err(not_found(raw, &target.path)
            .recover("edit_file changes existing files; use write_file to create one."));
    }
    // Held until the commit: parallel edits of one file apply in turn.
    let _held = file_lock::lock(&target.path);
    let (bytes, read_as) = read_for_edit(raw, &target.path)?;
    let (text, encoding) = decode(raw, &bytes)?;
    let use_crlf = mostly_crlf(&text);
    let lf_text = text.replace("\r\n", "\n");
    let offsets = occurrences(raw, &lf_text, &change)?;
    let first_line = line_of(&lf_text, offsets[0]);
    let out = apply(raw, &lf_text, &change, use_crlf, encoding)?;
    ensure_unchanged(raw, &read_as, &target.path)?;
    commit_bytes(raw, &target, &out, Commit::Replace)?;
    let count = if replace_all { offsets.len() } else { 1 };
    Ok(summary(&target.path, count, first_line, use_crlf, encoding))
}

/// An edit as asked for, its strings in LF space.
struct Change {
    old: String,
    new: String,
    replace_all: bool,
}

impl Change {
    /// The edit with its line endings normalised, refused when `old_string`
    /// is empty or the edit would change nothing.
    fn checked(
        raw: &str,
        old_string: &str,
        new_string: &str,
        replace_all: bool,
    ) -> Result<Change, ToolError> {
        if old_string.is_empty() {
            return Err(ToolError::new(ErrorType::InvalidEdit, "old_string is empty.")
                .with_path(raw)
                .recover("Pass the exact text to replace, including indentation; use write_file to create a file."));
        }
        let old = old_string.replace("\r\n", "\n");
        let new = new_string.replace("\r\n", "\n");
        if old == new {
            return Err(no_op(raw));
        }
        Ok(Change {
            old,
            new,
            replace_all,
        })
    }
}

/// Whether CRLF is the file's dominant line ending, restored on every line
/// after the edit.
fn mostly_crlf(text: &str) -> bool {
    let crlf = text.matches("\r\n").count();
    let bare_lf = text.matches('\n').count() - crlf;
    crlf > bare_lf
}

/// The 1-based line of `text` that `offset` falls on.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

/// Where `change.old` occurs in `lf_text`, at least once; more than once
/// only with `replace_all`, since otherwise which one is meant is a guess.
fn occurrences(raw: &str, lf_text: &str, change: &Change) -> Result<Vec<usize>, ToolError> {
    let offsets: Vec<usize> = lf_text.match_indices(&change.old).map(|(i, _)| i).collect();
    match offsets.len() {
        0 => return Err(not_found_in_file(raw, lf_text, &change.old)),
        n if n > 1 && !change.replace_all => {
            let lines: Vec<String> = offsets
                .iter()
                .take(5)
                .map(|&o| line_of(lf_text, o).to_string())
                .collect();
            return Err(ToolError::new(
                ErrorType::EditStringNotUnique,
                format!("old_string occurs {n} times in '{raw}' (at lines {}{}).", lines.join(", "), if n > 5 { ", ..." } else { "" }),
            )
            .with_path(raw)
            .detail("occurrences", n)
            .recover("Add surrounding lines to old_string so it matches exactly once, or pass replace_all=true to change every occurrence."));
        }
        _ => {}
    }
    Ok(offsets)
}

/// The file's new bytes: `change` applied in LF space, then the file's
/// line ending and encoding restored; refused when nothing changes or the
/// result is over the cap.
fn apply(
    raw: &str,
    lf_text: &str,
    change: &Change,
    use_crlf: bool,
    encoding: Encoding,
) -> Result<Vec<u8>, ToolError> {
    let edited = if change.replace_all {
        lf_text.replace(&change.old, &change.new)
    } else {
        lf_text.replacen(&change.old, &change.new, 1)
    };
    if edited == lf_text {
        return Err(no_op(raw));
    }
    let edited = if use_crlf {
        edited.replace('\n', "\r\n")
    } else {
        edited
    };
    let out = encode(&edited, encoding);
    if out.len() > MAX_EDIT_BYTES {
        return Err(too_large(raw, out.len()));
    }
    Ok(out)
}

/// Refuses the commit when the file on disk is no longer what was read.
fn ensure_unchanged(raw: &str, read_as: &Snapshot, path: &Path) -> Result<(), ToolError> {
    // Another program may have written the file since it was read here;
    // replacing it now would silently drop that change.
    if !read_as.still_current(path) {
        return Err(ToolError::new(
            ErrorType::FileChanged,
            format!("'{raw}' changed on disk while it was being edited; nothing was written."),
        )
        .with_path(raw)
        .retryable(
            "Read the file again with read_file, then repeat the edit against what it holds now.",
        ));
    }
    Ok(())
}

/// The answer after a commit: where the edit landed and what of the file's
/// shape was kept.
fn summary(
    path: &Path,
    count: usize,
    first_line: usize,
    use_crlf: bool,
    encoding: Encoding,
) -> String {
    let place = if count == 1 {
        format!("1 replacement at line {first_line}")
    } else {
        format!("{count} replacements, first at line {first_line}")
    };
    let ending = if use_crlf { "CRLF" } else { "LF" };
    let kept = match encoding {
        Encoding::Utf8 { bom: false } => "",
        Encoding::Utf8 { bom: true } => ", UTF-8 BOM kept",
        Encoding::Utf16Le => ", UTF-16 LE kept",
        Encoding::Utf16Be => ", UTF-16 BE kept",
    };
    format!(
        "EDITED: {} ({place}, {ending} preserved{kept})",
        path.display()
    )
}

fn decode(raw: &str, bytes: &[u8]) -> Result<(String, Encoding), ToolError> {
    let utf16 = |body: &[u8], little: bool| -> Option<String> {
        if !body.len().is_multiple_of(2) {
            return None;
        }
        let units = body.chunks_exact(2).map(|c| {
            if little {
                u16::from_le_bytes([c[0], c[1]])
            } else {
                u16::from_be_bytes([c[0], c[1]])
            }
        });
        char::decode_utf16(units)
            .collect::<Result<String, _>>()
            .ok()
    };
    let invalid = |sample: &[u8]| {
        let (looks_like, advice) = describe_non_utf8(sample);
        ToolError::new(
            ErrorType::InvalidTextEncoding,
            format!("'{raw}' is not text edit_file can change safely: it looks like {looks_like}."),
        )
        .with_path(raw)
        .detail("looks_like", looks_like)
        .recover(advice)
    };
    let sample = &bytes[..bytes.len().min(8192)];
    if let Some(body) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        return utf16(body, true)
            .map(|t| (t, Encoding::Utf16Le))
            .ok_or_else(|| invalid(sample));
    }
    if let Some(body) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        return utf16(body, false)
            .map(|t| (t, Encoding::Utf16Be))
            .ok_or_else(|| invalid(sample));
    }
    let (body, bom) = match bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        Some(body) => (body, true),
        None => (bytes, false),
    };
    if body.contains(&0) {
        return Err(invalid(sample));
    }
    std::str::from_utf8(body)
        .map(|t| (t.to_string(), Encoding::Utf8 { bom }))
        .map_err(|_| invalid(sample))
}

fn encode(text: &str, encoding: Encoding) -> Vec<u8> {
    match encoding {
        Encoding::Utf8 { bom } => {
            let mut out = Vec::with_capacity(text.len() + 3);
            if bom {
                out.extend_from_slice(&[0xEF, 0xBB, 0xBF]);
            }
            out.extend_from_slice(text.as_bytes());
            out
        }
        Encoding::Utf16Le => [0xFF, 0xFE]
            .into_iter()
            .chain(text.encode_utf16().flat_map(u16::to_le_bytes))
            .collect(),
        Encoding::Utf16Be => [0xFE, 0xFF]
            .into_iter()
            .chain(text.encode_utf16().flat_map(u16::to_be_bytes))
            .collect(),
    }
}

fn no_op(raw: &str) -> ToolError {
    ToolError::new(ErrorType::InvalidEdit, "old_string and new_string are the same (line endings aside): the edit would change nothing.")
        .with_path(raw)
        .recover("Decide what should change; repeating a no-op edit never makes progress.")
}

fn too_large(raw: &str, size: usize) -> ToolError {
    ToolError::new(
        ErrorType::ContentTooLarge,
        format!("'{raw}' would be {size} bytes; edit_file handles files up to {MAX_EDIT_BYTES}."),
    )
    .with_path(raw)
}

/// The refusal for text that is not in the file, with the nearest miss when
/// one is obvious: the same line with other indentation or spacing.
fn not_found_in_file(raw: &str, text: &str, old: &str) -> ToolError {
    let mut error = ToolError::new(
        ErrorType::EditStringNotFound,
        format!("old_string was not found in '{raw}'."),
    )
    .with_path(raw);
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some(first) = old.lines().map(str::trim).find(|l| !l.is_empty()) {
        let first = squash(first);
        if let Some((n, line)) = text.lines().enumerate().find(|(_, l)| squash(l) == first) {
            error = error
                .detail("near_miss_line", n + 1)
                .recover(format!(
                    "Line {} matches the first line of old_string except for whitespace: {:?}. Copy the exact text \
                     (indentation included) from read_file.",
                    n + 1,
                    line
                ));
            return error;
        }
    }
    error.recover("Read the file again with read_file and copy old_string exactly from it.")
}
