//! Removing a directory tree that a confined command filled.
//!
//! The standard library recurses once per level with a descriptor open per
//! level, so a command that nests directories tens of thousands deep could
//! overflow the server's stack or exhaust its descriptors when its temp
//! directory is cleaned up. Here the tree is flattened instead: a
//! directory that is not empty has its entries moved up into the top one,
//! which keeps the stack and the open descriptors constant whatever the
//! depth. Everything goes through descriptors opened without following
//! links, so a process still running in the tree cannot steer a move or a
//! delete outside it.

use std::io;
use std::path::Path;

/// Removes `dir` and everything below it.
pub fn remove_tree(dir: &Path) -> io::Result<()> {
    imp::remove_tree(dir)
}

#[cfg(target_os = "linux")]
mod imp {
    use std::ffi::{CStr, CString};
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;

    /// Most entries touched before giving up (a process still filling the
    /// tree must not keep the server busy forever); the rest is left.
    const MAX_STEPS: u64 = 10_000_000;

    pub fn remove_tree(dir: &Path) -> io::Result<()> {
        let top = open_dir(libc::AT_FDCWD, &CString::new(dir.as_os_str().as_bytes())?)?;
        // Every entry read and every call made is paid for, so no tree,
        // growing or stuck, keeps the server busy past the budget.
        let mut budget = Budget(MAX_STEPS);
        let mut fresh = 0u64;
        let mut opened_up = false;
        loop {
            let names = entries(&top)?;
            budget.spend(names.len() + 1)?;
            if names.is_empty() {
                break;
            }
            let fd = top.as_raw_fd();
            if remove_or_flatten(fd, &names, &mut budget, &mut fresh)? {
                opened_up = false;
            } else {
                // The program may have made its own directories read-only;
                // they are the server user's, so they are opened up, and
                // a pass that still moves nothing ends the removal.
                if opened_up {
                    return Err(io::Error::other(
                        "a directory in it cannot be emptied; left in place",
                    ));
                }
                opened_up = true;
                open_up(fd, None);
                for name in &names {
                    open_up(fd, Some(name));
                }
            }
        }
        drop(top);
        std::fs::remove_dir(dir)
    }

    /// The steps a removal may still take (entries read, calls made),
    /// starting at `MAX_STEPS`.
    struct Budget(u64);

    impl Budget {
        /// Pays for `n` steps; `Err` when the budget cannot cover them.
        fn spend(&mut self, n: usize) -> io::Result<()> {
            self.0 = self
                .0
                .checked_sub(n as u64)
                .ok_or_else(|| io::Error::other("too much to remove; left in place"))?;
            Ok(())
        }
    }

    /// One pass over the `names` in the top directory `fd`: each is removed
    /// when it can be, and a directory with entries has them moved up into
    /// `fd` to be removed next round. `true` when anything was removed or
    /// moved.
    fn remove_or_flatten(
        fd: libc::c_int,
        names: &[CString],
        budget: &mut Budget,
        fresh: &mut u64,
    ) -> io::Result<bool> {
        let mut progress = false;
        for name in names {
            budget.spend(2)?;
            if unlink(fd, name) {
                progress = true;
                continue;
            }
            // A directory with entries: move them up, remove it next round.
            let Ok(inner) = open_dir(fd, name) else {
                continue;
            };
            let children = entries(&inner)?;
            budget.spend(children.len())?;
            for child in children {
                if move_up(&inner, &child, fd, budget, fresh)? {
                    progress = true;
                }
            }
        }
        Ok(progress)
    }

    /// Removes `name` in `fd` as a file (or link) or as an empty directory;
    /// `true` when either worked. A link is removed, never followed.
    fn unlink(fd: libc::c_int, name: &CStr) -> bool {
        // SAFETY: `fd` belongs to the caller's `top`, open for the whole
        // loop, and `name` is a NUL-terminated string in its `names`.
        (unsafe { libc::unlinkat(fd, name.as_ptr(), 0) } == 0)
            // SAFETY: the same descriptor and name as the line above.
            || unsafe { libc::unlinkat(fd, name.as_ptr(), libc::AT_REMOVEDIR) } == 0
    }

    /// Moves `child` of `inner` into the top directory `fd` under a fresh
    /// `.wamcp-rm-N` name, never replacing an entry (a name taken is tried
    /// again with the next number); `true` when it moved.
    fn move_up(
        inner: &OwnedFd,
        child: &CStr,
        fd: libc::c_int,
        budget: &mut Budget,
        fresh: &mut u64,
    ) -> io::Result<bool> {
        loop {
            budget.spend(1)?;
            *fresh += 1;
            let target = CString::new(format!(".wamcp-rm-{fresh}"))?;
            // SAFETY: `inner` and `top` (`fd`) are open descriptors
            // owned by the caller, and `child` and `target` NUL-terminated
            // strings that outlive the call.
            let moved = unsafe {
                libc::renameat2(
                    inner.as_raw_fd(),
                    child.as_ptr(),
                    fd,
                    target.as_ptr(),
                    libc::RENAME_NOREPLACE,
                )
            };
            if moved == 0 {
                return Ok(true);
            }
            if io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST) {
                return Ok(false);
            }
        }
    }

    /// Makes a directory (`name` in `at`, or `at` itself) writable by its
    /// owner, through a descriptor that is never a link's target.
    fn open_up(at: libc::c_int, name: Option<&CStr>) {
        let fd = match name {
            // SAFETY: `at` is a descriptor the caller keeps open; the copy is
            // owned below.
            None => unsafe { libc::dup(at) },
            // SAFETY: `at` is open and `name` a NUL-terminated string alive
            // for the call; the descriptor returned is owned below.
            Some(name) => unsafe {
                libc::openat(
                    at,
                    name.as_ptr(),
                    libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                )
            },
        };
        if fd < 0 {
            return;
        }
        // SAFETY: just opened or duplicated, owned here.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // chmod through /proc names exactly this inode (fchmod refuses O_PATH).
        if let Ok(path) = CString::new(format!("/proc/self/fd/{}", fd.as_raw_fd())) {
            // SAFETY: `path` is a NUL-terminated string alive for the call.
            unsafe { libc::chmod(path.as_ptr(), 0o700) };
        }
    }

    fn open_dir(at: libc::c_int, name: &CStr) -> io::Result<OwnedFd> {
        // SAFETY: `at` is open (or AT_FDCWD) and `name` a NUL-terminated
        // string alive for the call; the result is checked and owned below.
        let fd = unsafe {
            libc::openat(
                at,
                name.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: just opened, owned here.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    /// The names in a directory, `.` and `..` left out.
    fn entries(dir: &OwnedFd) -> io::Result<Vec<CString>> {
        // SAFETY: `dir` is open for the call; the copy is handed to the
        // stream below (or closed), so `dir` itself is never closed twice.
        let copy = unsafe { libc::dup(dir.as_raw_fd()) };
        if copy < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `copy` is a fresh descriptor owned by nobody else; on
        // success the stream takes it over.
        let stream = unsafe { libc::fdopendir(copy) };
        if stream.is_null() {
            // SAFETY: the stream did not take `copy`, so it is still ours to
            // close, once.
            unsafe { libc::close(copy) };
            return Err(io::Error::last_os_error());
        }
        // The copy shares the offset: start from the beginning each time.
        // SAFETY: `stream` is a live stream from fdopendir, not yet closed.
        unsafe { libc::rewinddir(stream) };
        let mut names = Vec::new();
        loop {
            // SAFETY: `stream` is live; nothing else reads from it.
            let entry = unsafe { libc::readdir(stream) };
            if entry.is_null() {
                break;
            }
            // SAFETY: a non-null entry from readdir is valid until the next
            // readdir on `stream`, and `d_name` is NUL-terminated; the name
            // is copied out before then.
            let name = unsafe { CStr::from_ptr((*entry).d_name.as_ptr()) };
            if name.to_bytes() != b"." && name.to_bytes() != b".." {
                names.push(name.to_owned());
            }
        }
        // SAFETY: `stream` is live and closed once here, which closes `copy`.
        unsafe { libc::closedir(stream) };
        Ok(names)
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub fn remove_tree(dir: &std::path::Path) -> std::io::Result<()> {
        std::fs::remove_dir_all(dir)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// 20,000 levels (far past PATH_MAX, so built one level at a time
    /// through descriptors) removed on a 64 KiB stack.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_tree_deeper_than_any_stack_goes_away() {
        use std::ffi::CString;
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().join("t");
        std::fs::create_dir(&top).unwrap();
        let open = |at: i32, name: &CString| {
            // SAFETY: `at` is open (or AT_FDCWD) and `name` NUL-terminated.
            let fd = unsafe { libc::openat(at, name.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY) };
            assert!(fd >= 0);
            // SAFETY: `fd` was just opened, checked, and is owned by nothing else.
            unsafe { OwnedFd::from_raw_fd(fd) }
        };
        let d = CString::new("d").unwrap();
        let mut level = open(
            libc::AT_FDCWD,
            &CString::new(top.to_str().unwrap()).unwrap(),
        );
        for _ in 0..20_000 {
            // SAFETY: `level` is an open descriptor and `d` NUL-terminated.
            let made = unsafe { libc::mkdirat(level.as_raw_fd(), d.as_ptr(), 0o755) };
            assert_eq!(made, 0);
            level = open(level.as_raw_fd(), &d);
        }
        drop(level);
        std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn(move || remove_tree(&top).unwrap())
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    /// Directories the program made read-only (and unreadable) are opened
    /// up and removed; as root the permissions do not stop removal anyway.
    #[test]
    fn read_only_directories_are_opened_up() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().join("t");
        std::fs::create_dir_all(top.join("ro/inner")).unwrap();
        std::fs::write(top.join("ro/inner/f"), "x").unwrap();
        for (path, mode) in [(top.join("ro/inner"), 0o500), (top.join("ro"), 0o000)] {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        remove_tree(&top).unwrap();
        assert!(!top.exists());
    }

    #[test]
    fn a_link_inside_is_removed_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("keep"), "x").unwrap();
        let top = dir.path().join("t");
        std::fs::create_dir_all(top.join("a")).unwrap();
        std::os::unix::fs::symlink(&outside, top.join("a").join("link")).unwrap();
        std::os::unix::fs::symlink(&outside, top.join("link2")).unwrap();
        remove_tree(&top).unwrap();
        assert!(!top.exists());
        assert!(outside.join("keep").exists());
    }
}
