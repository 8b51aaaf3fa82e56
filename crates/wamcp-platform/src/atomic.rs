//! Atomic file replacement inside a directory that cannot be swapped
//! underneath us.
//!
//! The caller has already decided, on resolved paths, that `dir` may be
//! written. Between that decision and the write, another process could
//! replace `dir` (or an ancestor) with a symbolic link or junction pointing
//! elsewhere. So the directory is opened first, the open handle is checked to
//! still be `dir`, and everything after happens through that handle (Unix:
//! `openat`/`renameat`) or while that handle pins the path (Windows: a
//! directory opened without delete sharing cannot be renamed or removed).
//!
//! The bytes go to a temporary file in the same directory, are flushed to
//! disk, and only then replace the target in one rename, so a crash at any
//! point leaves either the whole old file or the whole new one.

use std::ffi::OsStr;
use std::io;
use std::path::Path;

#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(unix)]
use unix as native;
#[cfg(windows)]
use windows as native;

/// Whether the target may already exist.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Commit {
    /// Fail with `AlreadyExists` if the target exists when committing, even
    /// if it appeared after the caller looked.
    CreateNew,
    /// Replace an existing target, keeping its permissions (Unix mode and
    /// owner; Windows attributes).
    Replace,
}

/// The error raised when `dir` no longer is the directory that was checked.
#[derive(Debug)]
pub struct DirectoryChanged {
    /// The directory that was checked, as the caller resolved it.
    pub expected: String,
    /// What is there now: the path the open
    /// handle resolves to, or `a symbolic link`.
    pub found: String,
}

impl std::fmt::Display for DirectoryChanged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the directory changed while writing: expected {}, found {}",
            self.expected, self.found
        )
    }
}

impl std::error::Error for DirectoryChanged {}

/// Writes `bytes` as `dir/name`. `dir` must be the resolved (canonical)
/// directory the caller approved.
pub fn write_atomically(dir: &Path, name: &OsStr, bytes: &[u8], commit: Commit) -> io::Result<()> {
    native::write_atomically(dir, name, bytes, commit)
}

/// Creates the directory `dir/name`, where `dir` is the resolved directory
/// the caller approved, through a handle checked to still be `dir`: a
/// parent swapped for a link after the check cannot send the new
/// directory elsewhere.
pub fn create_dir(dir: &Path, name: &OsStr) -> io::Result<()> {
    native::create_dir(dir, name)
}

/// A name for a temporary file that no other writer picks: process id, time
/// and a per-process counter. Starts with a dot so listings sort it away.
fn temp_name() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        ".wamcp-{}-{nanos:x}-{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// The process id in a name [`temp_name`] made, or `None` for any other
/// name: only files of exactly this shape are ever swept as leftovers.
pub fn temp_owner(name: &str) -> Option<u32> {
    let inner = name.strip_prefix(".wamcp-")?.strip_suffix(".tmp")?;
    let mut parts = inner.split('-');
    let (pid, nanos, count) = (parts.next()?, parts.next()?, parts.next()?);
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let hex = !nanos.is_empty() && nanos.bytes().all(|b| b.is_ascii_hexdigit());
    (parts.next().is_none() && digits(pid) && hex && digits(count))
        .then(|| pid.parse().ok())
        .flatten()
}

/// Whether another program holds `path` open without sharing it. Windows
/// reports a rename onto such a file as "access denied", indistinguishable
/// from a permissions problem; opening it with every share mode tells them
/// apart. Always false on Unix, which has no mandatory sharing.
pub fn is_held_open(path: &Path) -> bool {
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        const SHARE_ALL: u32 = 0x1 | 0x2 | 0x4;
        let probe = std::fs::OpenOptions::new()
            .read(true)
            .share_mode(SHARE_ALL)
            .open(path);
        matches!(probe, Err(e) if is_file_in_use(&e))
    }
    #[cfg(not(windows))]
    {
        let _ = path;
        false
    }
}

/// Whether an error means another program holds the file open (Windows
/// sharing and lock violations).
pub fn is_file_in_use(error: &io::Error) -> bool {
    cfg!(windows) && matches!(error.raw_os_error(), Some(32 | 33 | 1224))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_of_our_own_shape_have_an_owner() {
        assert_eq!(temp_owner(&temp_name()), Some(std::process::id()));
        assert_eq!(temp_owner(".wamcp-123-1a2b-0.tmp"), Some(123));
        for other in [
            ".wamcp-123-1a2b-0.tmp.bak",
            "wamcp-123-1a2b-0.tmp",
            ".wamcp-x-1a2b-0.tmp",
            ".wamcp-123-zz-0.tmp",
            ".wamcp-123-1a2b.tmp",
            ".wamcp-123-1a2b-0-9.tmp",
            ".wamcp--1a2b-0.tmp",
            "notes.tmp",
        ] {
            assert_eq!(temp_owner(other), None, "{other}");
        }
    }

    #[test]
    fn creates_replaces_and_refuses_to_clobber() {
        let dir = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(dir.path()).unwrap();
        write_atomically(&root, OsStr::new("a.txt"), b"one", Commit::CreateNew).unwrap();
        assert_eq!(std::fs::read(root.join("a.txt")).unwrap(), b"one");
        let err =
            write_atomically(&root, OsStr::new("a.txt"), b"two", Commit::CreateNew).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(root.join("a.txt")).unwrap(), b"one");
        write_atomically(&root, OsStr::new("a.txt"), b"three", Commit::Replace).unwrap();
        assert_eq!(std::fs::read(root.join("a.txt")).unwrap(), b"three");
        let names: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            names,
            [OsStr::new("a.txt")],
            "no temporary file is left behind"
        );
    }

    #[test]
    fn a_directory_that_is_not_the_resolved_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(root.join("real")).unwrap();
        // A non-canonical spelling stands in for "the path now leads elsewhere".
        let indirect = root.join("real").join("..").join("real");
        let err =
            write_atomically(&indirect, OsStr::new("x"), b"x", Commit::CreateNew).unwrap_err();
        assert!(
            err.get_ref().is_some_and(|e| e.is::<DirectoryChanged>()),
            "{err:?}"
        );
        assert!(!root.join("real").join("x").exists());
    }

    /// A parent that now leads elsewhere (here through `..`; in the
    /// attack, a directory swapped for a link) gets no new directory.
    #[test]
    fn a_directory_is_created_only_in_the_resolved_parent() {
        let dir = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(root.join("real")).unwrap();
        create_dir(&root.join("real"), OsStr::new("made")).unwrap();
        assert!(root.join("real").join("made").is_dir());
        let indirect = root.join("real").join("..").join("real");
        let err = create_dir(&indirect, OsStr::new("elsewhere")).unwrap_err();
        assert!(
            err.get_ref().is_some_and(|e| e.is::<DirectoryChanged>()),
            "{err:?}"
        );
        assert!(!root.join("real").join("elsewhere").exists());
    }

    #[cfg(windows)]
    #[test]
    fn replacing_keeps_windows_attributes() {
        use std::os::windows::fs::MetadataExt;
        const HIDDEN: u32 = 0x2;
        let dir = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(dir.path()).unwrap();
        let target = root.join("hidden.txt");
        std::fs::write(&target, b"old").unwrap();
        let status = std::process::Command::new("attrib")
            .arg("+H")
            .arg(&target)
            .status()
            .unwrap();
        assert!(status.success());
        assert_ne!(
            std::fs::metadata(&target).unwrap().file_attributes() & HIDDEN,
            0
        );
        write_atomically(&root, OsStr::new("hidden.txt"), b"new", Commit::Replace).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert_ne!(
            std::fs::metadata(&target).unwrap().file_attributes() & HIDDEN,
            0
        );
    }

    #[cfg(unix)]
    #[test]
    fn replacing_keeps_the_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(dir.path()).unwrap();
        let target = root.join("run.sh");
        std::fs::write(&target, b"old").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o751)).unwrap();
        write_atomically(&root, OsStr::new("run.sh"), b"new", Commit::Replace).unwrap();
        assert_eq!(
            std::fs::metadata(&target).unwrap().permissions().mode() & 0o7777,
            0o751
        );
        // New content never inherits set-user/group-ID powers.
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o6755)).unwrap();
        write_atomically(&root, OsStr::new("run.sh"), b"newer", Commit::Replace).unwrap();
        assert_eq!(
            std::fs::metadata(&target).unwrap().permissions().mode() & 0o7777,
            0o755
        );
    }
}
