//! Opening a file only if it is an ordinary file.
//!
//! Opening a FIFO for reading blocks until a writer appears, and reading
//! `/dev/zero` never ends: a `read_file` of either hung its worker, and
//! cancelling the request did not free it. The file is opened without
//! blocking (`O_NONBLOCK`, which changes nothing for regular files) and its
//! type is checked on the open handle, so nothing can swap it in between.

use std::fs::File;
use std::path::Path;

/// The error inside an `io::Error` for something that is not a regular file.
#[derive(Debug)]
pub struct NotRegular {
    /// What the path is instead, with its article (`a named pipe (FIFO)`).
    pub what: &'static str,
}

impl std::fmt::Display for NotRegular {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "it is {}, not a regular file", self.what)
    }
}

impl std::error::Error for NotRegular {}

/// Opens `path` for reading if, on the open handle, it is a regular file.
pub fn open_regular(path: &Path) -> std::io::Result<File> {
    // Asked first by path too: opening a socket fails with a confusing
    // "no such device or address".
    if let Some(what) = describe(&std::fs::metadata(path)?.file_type()) {
        return Err(not_regular(what));
    }
    let file = open_without_blocking(path, Links::Follow)?;
    checked(file).map(|(file, _)| file)
}

/// Opens `path`, which a directory listing just named as a regular file,
/// and checks on the handle that it still is one; returns its metadata too.
/// A link is not followed: one swapped in since the listing (pointing at a
/// key in `~/.ssh`, say) is refused, not read. The look by path is left
/// out: a search opens hundreds of thousands of listed files, and a socket
/// swapped in since the listing only words its refusal less well.
pub fn open_listed(path: &Path) -> std::io::Result<(File, std::fs::Metadata)> {
    let file = open_without_blocking(path, Links::Refuse).map_err(link_refused)?;
    checked(file)
}

/// The error of an open that met a link where it refuses one: `ELOOP`
/// on Unix, said as what it is.
#[cfg(unix)]
fn link_refused(error: std::io::Error) -> std::io::Error {
    if error.raw_os_error() == Some(libc::ELOOP) {
        return not_regular("a link");
    }
    error
}

/// On Windows the link itself is opened and refused on the handle.
#[cfg(not(unix))]
fn link_refused(error: std::io::Error) -> std::io::Error {
    error
}

/// The error for something that is `what` instead of a regular file.
pub(crate) fn not_regular(what: &'static str) -> std::io::Error {
    std::io::Error::other(NotRegular { what })
}

/// `file` and its metadata if, on the handle, it is a regular file.
pub(crate) fn checked(file: File) -> std::io::Result<(File, std::fs::Metadata)> {
    let metadata = file.metadata()?;
    match describe(&metadata.file_type()) {
        None => Ok((file, metadata)),
        Some(what) => Err(not_regular(what)),
    }
}

/// Whether opening follows a link at the path's last component.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Links {
    Follow,
    Refuse,
}

/// `None` for a regular file; otherwise what it is, in words.
pub fn describe(kind: &std::fs::FileType) -> Option<&'static str> {
    if kind.is_file() {
        return None;
    }
    if kind.is_dir() {
        return Some("a directory");
    }
    if kind.is_symlink() {
        return Some("a link");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return Some("a named pipe (FIFO)");
        }
        if kind.is_socket() {
            return Some("a socket");
        }
        if kind.is_char_device() {
            return Some("a character device");
        }
        if kind.is_block_device() {
            return Some("a block device");
        }
    }
    Some("a device or pipe")
}

#[cfg(unix)]
fn open_without_blocking(path: &Path, links: Links) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let no_follow = if links == Links::Refuse {
        libc::O_NOFOLLOW
    } else {
        0
    };
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | no_follow)
        .open(path)
}

/// On Windows a link (or junction) is opened itself rather than followed,
/// and then refused on the handle as a link.
#[cfg(windows)]
fn open_without_blocking(path: &Path, links: Links) -> std::io::Result<File> {
    use std::os::windows::fs::OpenOptionsExt;
    // FILE_FLAG_OPEN_REPARSE_POINT
    const OPEN_REPARSE_POINT: u32 = 0x0020_0000;
    let flags = if links == Links::Refuse {
        OPEN_REPARSE_POINT
    } else {
        0
    };
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
}

#[cfg(not(any(unix, windows)))]
fn open_without_blocking(path: &Path, _links: Links) -> std::io::Result<File> {
    File::open(path)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn special_files_are_refused_on_the_handle_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let c = std::ffi::CString::new(fifo.display().to_string()).unwrap();
        // SAFETY: `c` is a NUL-terminated path alive for the call.
        let made = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
        assert_eq!(made, 0);
        for (path, what) in [
            (fifo.as_path(), "a named pipe (FIFO)"),
            (Path::new("/dev/zero"), "a character device"),
            (Path::new("/dev/null"), "a character device"),
        ] {
            let error = open_regular(path).unwrap_err();
            let inner = error.get_ref().and_then(|e| e.downcast_ref::<NotRegular>());
            assert_eq!(inner.map(|n| n.what), Some(what), "{}", path.display());
        }
        std::fs::write(dir.path().join("f"), "x").unwrap();
        assert!(open_regular(&dir.path().join("f")).is_ok());
    }

    /// A listed file that is a link by the time it is opened (one swapped
    /// in for a file the walk saw) is refused on the open itself.
    #[test]
    fn a_listed_file_is_not_followed_when_it_has_become_a_link() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("key"), "secret").unwrap();
        std::os::unix::fs::symlink(dir.path().join("key"), dir.path().join("notes.txt")).unwrap();
        let error = open_listed(&dir.path().join("notes.txt")).unwrap_err();
        let inner = error.get_ref().and_then(|e| e.downcast_ref::<NotRegular>());
        assert_eq!(inner.map(|n| n.what), Some("a link"));
        assert!(
            open_regular(&dir.path().join("notes.txt")).is_ok(),
            "read_file follows"
        );
        let (_, metadata) = open_listed(&dir.path().join("key")).unwrap();
        assert_eq!(metadata.len(), 6);
    }
}

/// The bytes of the regular file `path`, refused (`InvalidData`) when it
/// holds more than `cap`: for small configuration files, read whole.
pub fn read_small(path: &Path, cap: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = open_regular(path)?;
    let mut bytes = Vec::new();
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {cap} bytes"),
        ));
    }
    Ok(bytes)
}
