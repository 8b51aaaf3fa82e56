//! A folder the ordered walk has open, and the files in it.
//!
//! On Unix each folder is opened from its parent's handle, and each file
//! from its folder's, never following a link: a command that swaps a
//! folder the walk listed for a link to `~/.ssh` (between the listing and
//! the read) gets an error, not the store's files searched. Reading by
//! path would resolve every component again at that moment. On Windows the
//! folder is read by its path, which does not close that window; files
//! there are still opened without following a link
//! ([`crate::regular::open_listed`]).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// What an entry of a folder is, seen without following links.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Sort {
    File,
    Folder,
    /// A link, a device, a pipe, a socket: not walked, not searched.
    Other,
}

/// Folders open in this process: each holds a handle while files in it
/// wait to be searched, and a process may have as few as 256 handles.
static OPEN: AtomicUsize = AtomicUsize::new(0);

/// How many walk folders are open in this process now.
pub fn open_folders() -> usize {
    OPEN.load(Ordering::Relaxed)
}

/// An open folder of the walk.
pub struct Folder {
    /// Where it is, for names in answers and the secret-store check.
    path: PathBuf,
    /// The open folder: its entries are read once, and its handle is
    /// what children and files are opened from.
    #[cfg(unix)]
    dir: rustix::fs::Dir,
}

impl Drop for Folder {
    fn drop(&mut self) {
        OPEN.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Folder {
    /// Counted as open from here until it is dropped.
    fn opened(path: PathBuf, #[cfg(unix)] fd: rustix::fd::OwnedFd) -> std::io::Result<Folder> {
        let folder = Folder {
            path,
            #[cfg(unix)]
            dir: rustix::fs::Dir::new(fd)?,
        };
        OPEN.fetch_add(1, Ordering::Relaxed);
        Ok(folder)
    }

    /// The root of a walk; a link here is followed, as the caller named it.
    pub fn open_root(path: &Path) -> std::io::Result<Folder> {
        #[cfg(unix)]
        {
            use rustix::fs::{Mode, OFlags};
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
            let fd = rustix::fs::open(path, flags, Mode::empty())?;
            Folder::opened(path.to_path_buf(), fd)
        }
        #[cfg(not(unix))]
        Folder::opened(path.to_path_buf())
    }

    /// The folder `name` inside this one, refused if it is now a link.
    pub fn open_child(&self, name: &OsStr) -> std::io::Result<Folder> {
        let path = self.path.join(name);
        #[cfg(unix)]
        {
            use rustix::fs::{Mode, OFlags};
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd = rustix::fs::openat(self.dir.fd()?, name, flags, Mode::empty())?;
            Folder::opened(path, fd)
        }
        #[cfg(not(unix))]
        Folder::opened(path)
    }

    /// The path of `name` in this folder.
    pub fn path_of(&self, name: &OsStr) -> PathBuf {
        self.path.join(name)
    }

    /// The entries, `.` and `..` left out, in the order the system gives.
    /// Read once, before the folder is shared.
    pub fn entries(&mut self) -> std::io::Result<Vec<(OsString, Sort)>> {
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let mut entries = Vec::new();
            while let Some(entry) = self.dir.read() {
                let entry = entry?;
                let name = entry.file_name().to_bytes();
                if name == b"." || name == b".." {
                    continue;
                }
                let sort = self.sort_of(entry.file_name(), entry.file_type());
                entries.push((OsStr::from_bytes(name).to_os_string(), sort));
            }
            Ok(entries)
        }
        #[cfg(not(unix))]
        {
            let mut entries = Vec::new();
            for item in std::fs::read_dir(&self.path)? {
                let item = item?;
                let Ok(kind) = item.file_type() else {
                    continue;
                };
                let sort = if kind.is_file() {
                    Sort::File
                } else if kind.is_dir() {
                    Sort::Folder
                } else {
                    Sort::Other
                };
                entries.push((item.file_name(), sort));
            }
            Ok(entries)
        }
    }

    /// What an entry is: from the listing, or (when the file system does
    /// not say there) from `fstatat` without following a link.
    #[cfg(unix)]
    fn sort_of(&self, name: &std::ffi::CStr, kind: rustix::fs::FileType) -> Sort {
        use rustix::fs::{AtFlags, FileType};
        let kind = if kind == FileType::Unknown {
            let stat = self
                .dir
                .fd()
                .and_then(|fd| rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW));
            match stat {
                Ok(stat) => FileType::from_raw_mode(stat.st_mode),
                Err(_) => return Sort::Other,
            }
        } else {
            kind
        };
        match kind {
            FileType::RegularFile => Sort::File,
            FileType::Directory => Sort::Folder,
            _ => Sort::Other,
        }
    }

    /// Opens the file `name` in this folder for reading, refused if it is
    /// now a link or not a regular file; with its metadata.
    pub fn open_file(&self, name: &OsStr) -> std::io::Result<(File, std::fs::Metadata)> {
        #[cfg(unix)]
        {
            use rustix::fs::{Mode, OFlags};
            let flags = OFlags::RDONLY
                | OFlags::NONBLOCK
                | OFlags::NOCTTY
                | OFlags::NOFOLLOW
                | OFlags::CLOEXEC;
            match rustix::fs::openat(self.dir.fd()?, name, flags, Mode::empty()) {
                Ok(fd) => crate::regular::checked(File::from(fd)),
                Err(rustix::io::Errno::LOOP) => Err(crate::regular::not_regular("a link")),
                Err(e) => Err(e.into()),
            }
        }
        #[cfg(not(unix))]
        crate::regular::open_listed(&self.path.join(name))
    }
}
