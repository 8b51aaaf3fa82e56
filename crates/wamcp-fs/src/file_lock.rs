//! One lock per file inside this process, held from read to commit.
//!
//! Models batch tool calls: forty `edit_file` calls on one file, each
//! changing a different line, all read the same old text, and each commit
//! replaced the file with its own version, so all but the last change were
//! lost while every call answered "EDITED". Edits of one file now run one
//! after another, each reading what the previous one wrote. The key is the
//! resolved path (case-folded on Windows), so two spellings of one file
//! share a lock. Another process can still change the file; that is what the
//! commit-time [`Snapshot`] check is for.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, OnceLock};

struct Held {
    busy: Mutex<HashSet<PathBuf>>,
    freed: Condvar,
}

fn held() -> &'static Held {
    static HELD: OnceLock<Held> = OnceLock::new();
    HELD.get_or_init(|| Held {
        busy: Mutex::new(HashSet::new()),
        freed: Condvar::new(),
    })
}

/// Holds the lock of one file until dropped.
#[must_use]
pub struct FileLock {
    key: PathBuf,
}

/// Waits until no other call holds `resolved`, then holds it.
pub fn lock(resolved: &Path) -> FileLock {
    let key = identity(resolved);
    let held = held();
    let mut busy = held.busy.lock().unwrap_or_else(|e| e.into_inner());
    while busy.contains(&key) {
        busy = held.freed.wait(busy).unwrap_or_else(|e| e.into_inner());
    }
    busy.insert(key.clone());
    FileLock { key }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let held = held();
        let mut busy = held.busy.lock().unwrap_or_else(|e| e.into_inner());
        busy.remove(&self.key);
        held.freed.notify_all();
    }
}

fn identity(path: &Path) -> PathBuf {
    if cfg!(windows) {
        PathBuf::from(path.to_string_lossy().to_lowercase())
    } else {
        path.to_path_buf()
    }
}

/// What a file was when it was read: size, modification time and a hash of
/// its bytes, compared again just before the commit replaces it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    len: u64,
    modified: Option<std::time::SystemTime>,
    hash: u64,
}

impl Snapshot {
    pub fn of(bytes: &[u8], meta: &std::fs::Metadata) -> Snapshot {
        Snapshot {
            len: bytes.len() as u64,
            modified: meta.modified().ok(),
            hash: fnv1a(bytes),
        }
    }

    /// Whether the file at `path` is still exactly what was read.
    pub fn still_current(&self, path: &Path) -> bool {
        let Ok(mut file) = crate::regular::open_regular(path) else {
            return false;
        };
        let Ok(meta) = file.metadata() else {
            return false;
        };
        if meta.len() != self.len || meta.modified().ok() != self.modified {
            return false;
        }
        let mut bytes = Vec::with_capacity(self.len as usize);
        // One byte past the size seen is enough to know it changed.
        std::io::Read::read_to_end(
            &mut std::io::Read::take(&mut file, self.len + 1),
            &mut bytes,
        )
        .is_ok()
            && bytes.len() as u64 == self.len
            && fnv1a(&bytes) == self.hash
    }
}

/// FNV-1a: not cryptographic, and need not be; it catches a concurrent
/// writer that kept the size and the timestamp.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn one_holder_at_a_time_per_file_and_none_across_files() {
        let inside = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (inside, most) = (inside.clone(), most.clone());
                std::thread::spawn(move || {
                    for _ in 0..50 {
                        let _held = lock(Path::new("/locks/one"));
                        let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        inside.fetch_sub(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 1);
        let _a = lock(Path::new("/locks/a"));
        let _b = lock(Path::new("/locks/b"));
    }

    #[test]
    fn a_snapshot_notices_any_change() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        std::fs::write(&path, "one\n").unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        let snap = Snapshot::of(b"one\n", &meta);
        assert!(snap.still_current(&path));
        // Same size, and the timestamp put back: only the hash can tell.
        std::fs::write(&path, "two\n").unwrap();
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(meta.modified().unwrap()).unwrap();
        assert!(!snap.still_current(&path));
        std::fs::remove_file(&path).unwrap();
        assert!(!snap.still_current(&path));
    }
}
