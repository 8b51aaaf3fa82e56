//! The journal's copies of file contents, one file per distinct content,
//! named by its SHA-256. A content kept for many steps is stored once, and
//! a copy that no longer matches its name is never handed back.

use sha2::{Digest, Sha256};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The folder of copies.
pub(super) struct Blobs {
    dir: PathBuf,
}

/// One stored copy, as eviction sees it.
pub(super) struct Stored {
    pub hash: String,
    pub size: u64,
}

/// The SHA-256 of `bytes`, in lower-case hex.
pub(super) fn hash_of(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for byte in digest.iter() {
        hex.push_str(&format!("{byte:02x}"));
    }
    hex
}

impl Blobs {
    pub fn new(dir: PathBuf) -> Blobs {
        Blobs { dir }
    }

    fn path(&self, hash: &str) -> PathBuf {
        let (head, tail) = hash.split_at(2.min(hash.len()));
        self.dir.join(head).join(tail)
    }

    /// Keeps `bytes` (whose hash is `hash`); answers how many bytes were
    /// newly stored (0 when the content was there already). A copy that is
    /// already there is marked as used now, so that eviction, which spares
    /// recent copies, leaves it to the step that is being recorded.
    pub fn put(&self, hash: &str, bytes: &[u8]) -> io::Result<u64> {
        let path = self.path(hash);
        if path.is_file() {
            let _ = std::fs::File::options()
                .append(true)
                .open(&path)
                .and_then(|f| f.set_modified(SystemTime::now()));
            return Ok(0);
        }
        let folder = path.parent().unwrap_or(&self.dir);
        std::fs::create_dir_all(folder)?;
        let mut temp = tempfile_in(folder)?;
        // Not flushed one by one: a copy a crash cut short no longer
        // matches its name, and is never handed back (`get`).
        temp.1.write_all(bytes)?;
        drop(temp.1);
        std::fs::rename(&temp.0, &path).inspect_err(|_| {
            let _ = std::fs::remove_file(&temp.0);
        })?;
        Ok(bytes.len() as u64)
    }

    /// The content named `hash`, checked against its name.
    pub fn get(&self, hash: &str) -> io::Result<Vec<u8>> {
        let bytes = std::fs::read(self.path(hash))?;
        if hash_of(&bytes) != hash {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the journal's copy {hash} is damaged"),
            ));
        }
        Ok(bytes)
    }

    /// Whether the content named `hash` is kept.
    pub fn has(&self, hash: &str) -> bool {
        self.path(hash).is_file()
    }

    /// Every stored copy.
    pub fn all(&self) -> Vec<Stored> {
        let mut found = Vec::new();
        let Ok(heads) = std::fs::read_dir(&self.dir) else {
            return found;
        };
        for head in heads.flatten() {
            let Ok(tails) = std::fs::read_dir(head.path()) else {
                continue;
            };
            for tail in tails.flatten() {
                let (Ok(meta), Some(a), Some(b)) = (
                    tail.metadata(),
                    head.file_name().to_str().map(String::from),
                    tail.file_name().to_str().map(String::from),
                ) else {
                    continue;
                };
                if b.starts_with(TEMP_PREFIX) {
                    continue;
                }
                found.push(Stored {
                    hash: a + &b,
                    size: meta.len(),
                });
            }
        }
        found
    }

    /// Removes the copy named `hash`; answers the bytes freed.
    pub fn remove(&self, hash: &str) -> u64 {
        let path = self.path(hash);
        let size = path.metadata().map(|m| m.len()).unwrap_or(0);
        match std::fs::remove_file(&path) {
            Ok(()) => size,
            Err(_) => 0,
        }
    }

    /// Leftover temporary files of an interrupted write, older than `age`.
    pub fn clear_leftovers(&self, age: Duration) {
        let Ok(heads) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let now = SystemTime::now();
        for tail in heads
            .flatten()
            .filter_map(|h| std::fs::read_dir(h.path()).ok())
            .flat_map(|t| t.flatten())
        {
            let old = tail
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|m| now.duration_since(m).unwrap_or_default() > age);
            if old && tail.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
                let _ = std::fs::remove_file(tail.path());
            }
        }
    }
}

const TEMP_PREFIX: &str = ".tmp-";

/// A new file in `folder` with a name no other writer uses.
fn tempfile_in(folder: &Path) -> io::Result<(PathBuf, std::fs::File)> {
    let stamp = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    for attempt in 0..100u32 {
        let path = folder.join(format!(
            "{TEMP_PREFIX}{}-{stamp}-{attempt}",
            std::process::id()
        ));
        match std::fs::File::options()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("no free temporary name in the journal"))
}
