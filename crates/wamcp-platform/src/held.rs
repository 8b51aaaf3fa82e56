//! Folders read through handles, so a name swapped for a link while a tree
//! is being read cannot redirect the reader.
//!
//! Checking a tree by path and then copying it by path leaves a window: a
//! folder checked as a real folder can be renamed away and replaced by a
//! link (or junction) to a folder outside before the copy opens a file
//! beneath it. Here every name is looked up *inside an open folder handle*
//! (Unix `openat`; Windows `NtCreateFile` with a root directory handle),
//! one component at a time, and a link is opened as itself (`O_NOFOLLOW`,
//! `FILE_OPEN_REPARSE_POINT`), never followed. What a name is — folder,
//! file, link, anything else — is read from the opened handle, so the
//! answer describes the very object that is then listed or read.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::path::{Component, Path};

#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(unix)]
use unix as native;
#[cfg(windows)]
use windows as native;

/// An open folder; names are looked up inside it.
#[derive(Debug)]
pub struct HeldDir(native::Dir);

/// What a name inside a [`HeldDir`] turned out to be, seen on its handle.
#[derive(Debug)]
pub enum Entry {
    /// A folder, opened, so names inside it can be looked up in turn.
    Dir(HeldDir),
    /// A regular file, opened for reading, and how many names it has. The
    /// count is one no name can have been removed from in between: on Unix
    /// it comes from the look at the name itself, and on Windows the file
    /// is opened without delete sharing, so no name of it can go while the
    /// handle is open. (A count read on a handle after the fact can be
    /// lowered by deleting the name inside the project that was opened,
    /// leaving the outside file's bytes on the handle.)
    File {
        /// The file, open for reading.
        file: File,
        /// How many names the file has; more than one
        /// means it may be linked in from outside.
        links: u64,
    },
    /// A symbolic link, junction or other reparse point (not followed).
    Link,
    /// A FIFO, socket, device or anything else that is not read.
    Other,
}

impl HeldDir {
    /// Opens the absolute, already resolved `path` one component at a time
    /// from the file-system root, refusing any component that is a link: a
    /// resolved path has none, so one found now was swapped in since.
    pub fn open(path: &Path) -> io::Result<HeldDir> {
        if !path.is_absolute() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not an absolute path",
            ));
        }
        let mut dir = HeldDir(native::Dir::root_of(path)?);
        for component in path.components() {
            match component {
                Component::Prefix(_) | Component::RootDir => {}
                Component::Normal(name) => {
                    dir = match dir.entry(name)? {
                        Entry::Dir(next) => next,
                        Entry::Link => return Err(changed(name, "is a link or junction")),
                        _ => return Err(changed(name, "is not a folder")),
                    }
                }
                Component::CurDir | Component::ParentDir => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "not a resolved path",
                    ));
                }
            }
        }
        Ok(dir)
    }

    /// Opens the single name `name` inside this folder without following it.
    pub fn entry(&self, name: &OsStr) -> io::Result<Entry> {
        if !is_single_name(name) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a single file name",
            ));
        }
        self.0.entry(name)
    }

    /// The names in this folder (without `.` and `..`), in no set order;
    /// an error once there are more than `limit`, so a folder of millions
    /// of names is refused before it is all in memory.
    pub fn names(&self, limit: usize) -> io::Result<Vec<OsString>> {
        self.0.names(limit)
    }

    /// The folder's identity: its volume (device) and its file number on
    /// it. Two opens of one folder give the same; a folder put in its
    /// place does not.
    pub fn id(&self) -> io::Result<(u64, u64)> {
        self.0.id()
    }
}

/// A regular file's identity, as [`HeldDir::id`] gives a folder's.
pub fn file_id(file: &File) -> io::Result<(u64, u64)> {
    native::file_id(file)
}

/// The listing went past its limit (`QuotaExceeded`, so callers can tell).
fn too_many(limit: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::QuotaExceeded,
        format!("holds more than {limit} entries"),
    )
}

fn changed(name: &OsStr, what: &str) -> io::Error {
    io::Error::other(format!("'{}' {what}", name.to_string_lossy()))
}

/// One name, not a path: no separator, not `.` or `..`, no NUL; on
/// Windows also no `:` (`x::$DATA` opens a stream of `x`) and no trailing
/// dot or space (Windows would strip them and open another name).
fn is_single_name(name: &OsStr) -> bool {
    let text = name.to_string_lossy();
    let forbidden = |c: char| c == '/' || c == '\0' || (cfg!(windows) && (c == '\\' || c == ':'));
    let altered = cfg!(windows) && text.ends_with(['.', ' ']);
    !text.is_empty() && text != "." && text != ".." && !text.contains(forbidden) && !altered
}

#[cfg(test)]
mod tests;
