//! Windows: a pinned directory handle checked with GetFinalPathNameByHandleW,
//! then MoveFileExW: with MOVEFILE_REPLACE_EXISTING an NTFS rename that is
//! atomic, without it a move that never clobbers.
//!
//! Not ReplaceFileW: it moves the old file aside and the new one in as
//! separate steps (Wine's leaves an `rf*.tmp` behind when killed between
//! them, and Windows documents outcomes where the target ends up under the
//! backup name), so a crash could leave no file at all. The replaced file's
//! attributes are copied instead; its ACL is the directory's inherited one in
//! both cases, and only explicit, non-inherited entries on the old file
//! would not carry over.

use super::{Commit, DirectoryChanged, temp_name};
use std::ffi::OsStr;
use std::io::{self, Write};
use std::os::windows::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use windows_sys::Win32::Foundation::{CloseHandle, GENERIC_READ, HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::Storage::FileSystem::{
    CreateFileW, FILE_ATTRIBUTE_ARCHIVE, FILE_ATTRIBUTE_HIDDEN, FILE_ATTRIBUTE_NOT_CONTENT_INDEXED,
    FILE_ATTRIBUTE_SYSTEM, FILE_FLAG_BACKUP_SEMANTICS, FILE_SHARE_READ, FILE_SHARE_WRITE,
    GetFileAttributesW, GetFinalPathNameByHandleW, INVALID_FILE_ATTRIBUTES,
    MOVEFILE_REPLACE_EXISTING, MOVEFILE_WRITE_THROUGH, MoveFileExW, OPEN_EXISTING,
    SetFileAttributesW, VOLUME_NAME_DOS,
};

pub(super) fn write_atomically(
    dir: &Path,
    name: &OsStr,
    bytes: &[u8],
    commit: Commit,
) -> io::Result<()> {
    // Held until the commit is done.
    let pinned = pin_verified(dir)?;
    let target = dir.join(name);
    let temp = dir.join(temp_name());
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        let (temp_w, target_w) = (wide(&temp), wide(&target));
        let flags = match commit {
            Commit::CreateNew => MOVEFILE_WRITE_THROUGH,
            Commit::Replace => {
                keep_attributes(&target_w, &temp_w);
                MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH
            }
        };
        move_over(&temp_w, &target_w, flags)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    drop(pinned);
    result
}

/// Opens `dir` so that, while the handle lives, nobody can rename or
/// remove it (or, on NTFS, an ancestor: no FILE_SHARE_DELETE), and checks
/// that the handle really is `dir`.
fn pin_verified(dir: &Path) -> io::Result<DirHandle> {
    let pinned = DirHandle::open(dir)?;
    let actual = pinned.final_path()?;
    if !same_path(&actual, dir) {
        return Err(io::Error::other(DirectoryChanged {
            expected: dir.display().to_string(),
            found: actual.display().to_string(),
        }));
    }
    Ok(pinned)
}

pub(super) fn create_dir(dir: &Path, name: &OsStr) -> io::Result<()> {
    // Held until the new directory exists.
    let pinned = pin_verified(dir)?;
    let result = std::fs::create_dir(dir.join(name));
    drop(pinned);
    result
}

/// Gives the new file the hidden, system, archive and not-indexed flags of
/// the file it replaces (read-only targets are refused before this point).
fn keep_attributes(target: &[u16], temp: &[u16]) {
    // SAFETY: both paths come from `wide`, so they end in a NUL, and they
    // outlive the calls.
    let attributes = unsafe { GetFileAttributesW(target.as_ptr()) };
    if attributes != INVALID_FILE_ATTRIBUTES {
        let kept = attributes
            & (FILE_ATTRIBUTE_HIDDEN
                | FILE_ATTRIBUTE_SYSTEM
                | FILE_ATTRIBUTE_ARCHIVE
                | FILE_ATTRIBUTE_NOT_CONTENT_INDEXED);
        if kept != 0 {
            // SAFETY: as above: a NUL-terminated path from `wide`.
            unsafe { SetFileAttributesW(temp.as_ptr(), kept) };
        }
    }
}

struct DirHandle(HANDLE);

impl DirHandle {
    fn open(dir: &Path) -> io::Result<DirHandle> {
        let path = wide(dir);
        // BACKUP_SEMANTICS opens a directory; without OPEN_REPARSE_POINT a
        // junction is followed, so its target shows in the final path.
        // SAFETY: `path` is NUL-terminated and outlives the call; the other
        // pointers are the documented nulls (no security attributes, no
        // template); the handle is checked and then owned by `DirHandle`.
        let handle = unsafe {
            CreateFileW(
                path.as_ptr(),
                GENERIC_READ,
                FILE_SHARE_READ | FILE_SHARE_WRITE,
                std::ptr::null(),
                OPEN_EXISTING,
                FILE_FLAG_BACKUP_SEMANTICS,
                std::ptr::null_mut(),
            )
        };
        if handle == INVALID_HANDLE_VALUE {
            return Err(io::Error::last_os_error());
        }
        Ok(DirHandle(handle))
    }

    fn final_path(&self) -> io::Result<PathBuf> {
        let mut buf = vec![0u16; 1024];
        loop {
            // SAFETY: `self.0` is an open handle while `self` lives, and the
            // function writes at most `buf.len()` u16s into `buf`.
            let n = unsafe {
                GetFinalPathNameByHandleW(
                    self.0,
                    buf.as_mut_ptr(),
                    buf.len() as u32,
                    VOLUME_NAME_DOS,
                )
            };
            if n == 0 {
                return Err(io::Error::last_os_error());
            }
            if (n as usize) < buf.len() {
                buf.truncate(n as usize);
                return Ok(PathBuf::from(std::ffi::OsString::from_wide(&buf)));
            }
            buf.resize(n as usize + 1, 0);
        }
    }
}

impl Drop for DirHandle {
    fn drop(&mut self) {
        // SAFETY: a `DirHandle` holds only a handle CreateFileW opened, and
        // closes it once, here.
        unsafe { CloseHandle(self.0) };
    }
}

/// Compares a final path (`\\?\C:\x`, `\\?\UNC\s\h\x`) with an ordinary one,
/// ignoring case as NTFS does.
fn same_path(final_path: &Path, expected: &Path) -> bool {
    let text = final_path.to_string_lossy();
    let plain = match text.strip_prefix(r"\\?\UNC\") {
        Some(rest) => format!(r"\\{rest}"),
        None => text.strip_prefix(r"\\?\").unwrap_or(&text).to_string(),
    };
    let normalise = |s: &str| s.trim_end_matches('\\').to_lowercase();
    normalise(&plain) == normalise(&expected.to_string_lossy())
}

fn wide(path: &Path) -> Vec<u16> {
    path.as_os_str().encode_wide().chain(Some(0)).collect()
}

/// MoveFileExW, tried again for a moment while the target is briefly open
/// elsewhere: a path being resolved by another call, a virus scanner or an
/// indexer holds a handle for milliseconds, and a replace fails meanwhile.
/// A file held open for longer is still reported (FILE_IN_USE upstream).
fn move_over(temp: &[u16], target: &[u16], flags: u32) -> io::Result<()> {
    const ATTEMPTS: u32 = 20;
    let mut attempt = 0;
    loop {
        // SAFETY: both paths come from `wide`, NUL-terminated, and outlive
        // the call.
        let result = win32(unsafe { MoveFileExW(temp.as_ptr(), target.as_ptr(), flags) });
        let busy = result.as_ref().is_err_and(|e| {
            e.kind() == io::ErrorKind::PermissionDenied || super::is_file_in_use(e)
        });
        attempt += 1;
        if !busy || attempt == ATTEMPTS {
            return result;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
}

fn win32(ok: windows_sys::core::BOOL) -> io::Result<()> {
    if ok != 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
