//! Unix: `fstatat` without following, then `openat` with `O_NOFOLLOW`, and
//! the opened descriptor must be the object that was looked at.

use super::Entry;
use rustix::fs::{AtFlags, CWD, FileType, Mode, OFlags};
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

#[derive(Debug)]
pub(super) struct Dir(OwnedFd);

impl Dir {
    pub(super) fn root_of(_path: &Path) -> io::Result<Dir> {
        Ok(Dir(open_at(CWD, OsStr::new("/"), OFlags::DIRECTORY)?))
    }

    pub(super) fn entry(&self, name: &OsStr) -> io::Result<Entry> {
        let seen = rustix::fs::statat(&self.0, name.as_bytes(), AtFlags::SYMLINK_NOFOLLOW)?;
        // Only folders and regular files are opened: opening a device or a
        // FIFO can block or have effects of its own.
        let flags = match FileType::from_raw_mode(seen.st_mode) {
            FileType::Directory => OFlags::DIRECTORY,
            FileType::RegularFile => OFlags::NONBLOCK,
            FileType::Symlink => return Ok(Entry::Link),
            _ => return Ok(Entry::Other),
        };
        let fd = match open_at(&self.0, name, flags) {
            Ok(fd) => fd,
            // Swapped for a link between the look and the open.
            Err(e) if e == rustix::io::Errno::LOOP || e == rustix::io::Errno::NOTDIR => {
                return Ok(Entry::Link);
            }
            Err(e) => return Err(e.into()),
        };
        let opened = rustix::fs::fstat(&fd)?;
        if (opened.st_dev, opened.st_ino) != (seen.st_dev, seen.st_ino) {
            return Err(io::Error::other("replaced while it was being opened"));
        }
        Ok(match FileType::from_raw_mode(opened.st_mode) {
            FileType::Directory => Entry::Dir(super::HeldDir(Dir(fd))),
            FileType::RegularFile => Entry::File {
                file: File::from(fd),
                links: seen.st_nlink,
            },
            _ => Entry::Other,
        })
    }

    pub(super) fn names(&self, limit: usize) -> io::Result<Vec<OsString>> {
        let mut names = Vec::new();
        for entry in rustix::fs::Dir::read_from(&self.0)? {
            let bytes = entry?.file_name().to_bytes().to_vec();
            if bytes != b"." && bytes != b".." {
                if names.len() == limit {
                    return Err(super::too_many(limit));
                }
                names.push(OsString::from_vec(bytes));
            }
        }
        Ok(names)
    }

    pub(super) fn id(&self) -> io::Result<(u64, u64)> {
        let st = rustix::fs::fstat(&self.0)?;
        Ok((st.st_dev, st.st_ino))
    }
}

pub(super) fn file_id(file: &File) -> io::Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let meta = file.metadata()?;
    Ok((meta.dev(), meta.ino()))
}

fn open_at(
    dir: impl std::os::fd::AsFd,
    name: &OsStr,
    flags: OFlags,
) -> rustix::io::Result<OwnedFd> {
    let flags = flags | OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NOCTTY;
    rustix::fs::openat(dir, name.as_bytes(), flags, Mode::empty())
}
