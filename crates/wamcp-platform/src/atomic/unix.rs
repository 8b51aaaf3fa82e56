//! Unix: everything relative to one directory descriptor.

use super::{Commit, DirectoryChanged, temp_name};
use std::ffi::{CString, OsStr};
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

pub(super) fn write_atomically(
    dir: &Path,
    name: &OsStr,
    bytes: &[u8],
    commit: Commit,
) -> io::Result<()> {
    let dir_fd = open_verified_dir(dir)?;
    let name = cstring(name.as_bytes())?;
    let temp = cstring(temp_name().as_bytes())?;
    // O_EXCL and O_NOFOLLOW: the temporary name cannot be pre-planted as a link.
    // SAFETY: `dir_fd` is an open descriptor owned for this whole call and
    // `temp` a NUL-terminated string that outlives it.
    let fd = unsafe {
        libc::openat(
            dir_fd.as_raw_fd(),
            temp.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            0o644 as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned here.
    let mut file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    let result = (|| {
        file.write_all(bytes)?;
        if commit == Commit::Replace {
            keep_owner_and_mode(&dir_fd, &name, &file)?;
        }
        file.sync_all()?;
        match commit {
            // SAFETY: `dir_fd` stays open and `temp` and `name` are
            // NUL-terminated strings alive for the call.
            Commit::Replace => check(unsafe {
                libc::renameat(
                    dir_fd.as_raw_fd(),
                    temp.as_ptr(),
                    dir_fd.as_raw_fd(),
                    name.as_ptr(),
                )
            }),
            // A hard link never replaces an existing name, so a file that
            // appeared since the caller looked is not clobbered.
            // SAFETY: as for the rename above: an open descriptor and two
            // live NUL-terminated names.
            Commit::CreateNew => check(unsafe {
                libc::linkat(
                    dir_fd.as_raw_fd(),
                    temp.as_ptr(),
                    dir_fd.as_raw_fd(),
                    name.as_ptr(),
                    0,
                )
            }),
        }
    })();
    if result.is_err() || commit == Commit::CreateNew {
        // SAFETY: `dir_fd` is open and `temp` a live NUL-terminated name.
        unsafe { libc::unlinkat(dir_fd.as_raw_fd(), temp.as_ptr(), 0) };
    }
    result?;
    // Make the rename itself durable.
    // SAFETY: `dir_fd` is an open descriptor owned here; no memory is passed.
    unsafe { libc::fsync(dir_fd.as_raw_fd()) };
    Ok(())
}

pub(super) fn create_dir(dir: &Path, name: &OsStr) -> io::Result<()> {
    let dir_fd = open_verified_dir(dir)?;
    let name = cstring(name.as_bytes())?;
    // SAFETY: `dir_fd` is open and `name` a NUL-terminated string alive for
    // the call.
    check(unsafe { libc::mkdirat(dir_fd.as_raw_fd(), name.as_ptr(), 0o777) })
}

/// Opens `dir` and checks that the descriptor really is `dir`: a swap of
/// `dir` or an ancestor for a link after the caller resolved it is caught
/// here, and everything later goes through this descriptor.
fn open_verified_dir(dir: &Path) -> io::Result<OwnedFd> {
    let path = cstring(dir.as_os_str().as_bytes())?;
    // SAFETY: `path` is a NUL-terminated string alive for the call; the
    // descriptor returned is checked and owned just below.
    let fd = unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        let error = io::Error::last_os_error();
        if error.raw_os_error() == Some(libc::ELOOP) {
            return Err(changed(dir, "a symbolic link"));
        }
        return Err(error);
    }
    // SAFETY: `fd` was just opened and is owned here.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let actual = descriptor_path(&fd, dir)?;
    if actual != dir {
        return Err(changed(dir, &actual.display().to_string()));
    }
    Ok(fd)
}

/// The path the kernel has for an open descriptor.
#[cfg(target_os = "linux")]
fn descriptor_path(fd: &OwnedFd, _dir: &Path) -> io::Result<std::path::PathBuf> {
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
}

/// Without /proc, compare identities: the descriptor must be the same inode
/// as the canonical path names now.
#[cfg(not(target_os = "linux"))]
fn descriptor_path(fd: &OwnedFd, dir: &Path) -> io::Result<std::path::PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let opened = std::fs::File::from(fd.try_clone()?).metadata()?;
    let named = std::fs::metadata(std::fs::canonicalize(dir)?)?;
    if (opened.dev(), opened.ino()) == (named.dev(), named.ino()) {
        Ok(dir.to_path_buf())
    } else {
        Ok(std::path::PathBuf::from("another directory"))
    }
}

/// Gives the new file the replaced file's mode, and its owner when allowed.
fn keep_owner_and_mode(dir_fd: &OwnedFd, name: &CString, file: &std::fs::File) -> io::Result<()> {
    // SAFETY: `stat` is plain integers, for which all zeroes is a valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `dir_fd` is open, `name` NUL-terminated and `st` a writable
    // `stat` the kernel fills; all outlive the call.
    if unsafe {
        libc::fstatat(
            dir_fd.as_raw_fd(),
            name.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    } != 0
    {
        // Nothing to replace (yet): the default mode stands.
        return Ok(());
    }
    // Never set-user/group-ID: new content must not inherit those powers.
    // SAFETY: `file` is open for this call; no memory is passed.
    check(unsafe { libc::fchmod(file.as_raw_fd(), st.st_mode & 0o1777) })?;
    // Only root may give a file away; for anyone else this is a no-op by design.
    // SAFETY: `file` is open for this call; no memory is passed.
    unsafe { libc::fchown(file.as_raw_fd(), st.st_uid, st.st_gid) };
    Ok(())
}

fn changed(dir: &Path, found: &str) -> io::Error {
    io::Error::other(DirectoryChanged {
        expected: dir.display().to_string(),
        found: found.to_string(),
    })
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}
