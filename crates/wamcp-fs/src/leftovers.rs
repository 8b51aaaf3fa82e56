//! Temporary files a killed server left behind.
//!
//! Every write goes to `.wamcp-<pid>-<time>-<n>.tmp` beside its target and is
//! renamed over it; a server killed in between leaves that file. At start-up
//! the server sweeps its own leftovers, and only them: files of exactly that
//! shape, whose process is gone, untouched for an hour, in the writable
//! roots' top directories and in the directories writes went to before (a
//! small journal in the per-user data directory remembers those).

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime};
use wamcp_platform::atomic::temp_owner;
use wamcp_platform::process::is_running;

/// A leftover must be at least this old: a slow writer is not a dead one.
pub const STALE_AFTER: Duration = Duration::from_secs(3600);
/// Directories the journal remembers, most recent last.
const JOURNAL_ENTRIES: usize = 256;

struct Journal {
    path: PathBuf,
    noted: Mutex<BTreeSet<PathBuf>>,
}

static JOURNAL: OnceLock<Journal> = OnceLock::new();

/// Names the journal file; set once, at start-up.
pub fn keep_journal(path: PathBuf) {
    let _ = JOURNAL.set(Journal {
        path,
        noted: Mutex::new(BTreeSet::new()),
    });
}

/// Records `dir` the first time this process writes there. Failing to
/// record only means a leftover there waits for the user.
pub(crate) fn note_write_dir(dir: &Path) {
    let Some(journal) = JOURNAL.get() else { return };
    // One line per directory: a name holding a line break would add a
    // second, invented one.
    if dir.to_string_lossy().contains(['\n', '\r']) {
        return;
    }
    let mut noted = journal.noted.lock().unwrap_or_else(|e| e.into_inner());
    if !noted.insert(dir.to_path_buf()) {
        return;
    }
    if let Some(parent) = journal.path.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&journal.path)
    {
        let _ = writeln!(file, "{}", dir.display());
    }
}

/// Removes stale leftovers from `roots` and the journal's directories;
/// returns how many were removed. The journal is trimmed to directories
/// that still exist.
pub fn sweep(roots: &[PathBuf]) -> usize {
    let remembered = JOURNAL.get().map(read_journal).unwrap_or_default();
    let removed = dirs_to_sweep(roots, &remembered)
        .iter()
        .map(|d| sweep_dir(d, SystemTime::now()))
        .sum();
    if let Some(journal) = JOURNAL.get() {
        let kept: Vec<&PathBuf> = remembered.iter().filter(|d| d.is_dir()).collect();
        if kept.len() != remembered.len() {
            let text: String = kept.iter().map(|d| format!("{}\n", d.display())).collect();
            let _ = std::fs::write(&journal.path, text);
        }
    }
    removed
}

/// The roots, and the remembered directories inside them (the journal
/// names places wamcp wrote to, never a licence to delete elsewhere) that
/// still resolve to themselves (one swapped for a link since leads
/// somewhere that is not ours to sweep).
fn dirs_to_sweep(roots: &[PathBuf], remembered: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: BTreeSet<&Path> = roots.iter().map(PathBuf::as_path).collect();
    dirs.extend(
        remembered
            .iter()
            .map(PathBuf::as_path)
            .filter(|d| roots.iter().any(|r| d.starts_with(r))),
    );
    dirs.into_iter()
        .filter(|d| dunce::canonicalize(d).is_ok_and(|now| now == *d))
        .map(Path::to_path_buf)
        .collect()
}

fn read_journal(journal: &Journal) -> Vec<PathBuf> {
    let text = std::fs::read_to_string(&journal.path).unwrap_or_default();
    let mut seen = BTreeSet::new();
    let mut dirs: Vec<PathBuf> = text
        .lines()
        .rev()
        .filter(|l| !l.trim().is_empty())
        .map(PathBuf::from)
        .filter(|d| seen.insert(d.clone()))
        .take(JOURNAL_ENTRIES)
        .collect();
    dirs.reverse();
    dirs
}

/// Removes leftovers in one directory (not below it).
pub fn sweep_dir(dir: &Path, now: SystemTime) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(temp_owner) else {
            continue;
        };
        // Not a link, not a directory: only a file we would have made.
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        let old = meta
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .is_some_and(|age| age >= STALE_AFTER);
        if meta.is_file()
            && old
            && pid != std::process::id()
            && !is_running(pid)
            && std::fs::remove_file(entry.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_old_files_of_dead_writers_in_our_shape_go() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let dead = {
            let mut child = std::process::Command::new(if cfg!(windows) { "cmd" } else { "true" })
                .args(if cfg!(windows) {
                    &["/c", "exit"][..]
                } else {
                    &[][..]
                })
                .spawn()
                .unwrap();
            let pid = child.id();
            child.wait().unwrap();
            pid
        };
        let me = std::process::id();
        let names = [
            (format!(".wamcp-{dead}-1f-0.tmp"), true),
            (format!(".wamcp-{me}-1f-1.tmp"), false),
            (format!(".wamcp-{dead}-1f-2.tmp.keep"), false),
            (format!("wamcp-{dead}-1f-3.tmp"), false),
            ("notes.tmp".to_string(), false),
        ];
        for (name, _) in &names {
            std::fs::write(d.join(name), "x").unwrap();
        }
        std::fs::create_dir(d.join(format!(".wamcp-{dead}-1f-4.tmp"))).unwrap();
        let later = SystemTime::now() + STALE_AFTER + Duration::from_secs(5);
        assert_eq!(
            sweep_dir(d, SystemTime::now()),
            0,
            "nothing is an hour old yet"
        );
        assert_eq!(sweep_dir(d, later), 1);
        for (name, gone) in &names {
            assert_eq!(!d.join(name).exists(), *gone, "{name}");
        }
        assert!(d.join(format!(".wamcp-{dead}-1f-4.tmp")).is_dir());
    }

    #[test]
    fn only_remembered_directories_inside_the_roots_are_swept() {
        let dir = tempfile::tempdir().unwrap();
        let base = dunce::canonicalize(dir.path()).unwrap();
        let (root, inside, outside) = (base.join("root"), base.join("root/sub"), base.join("out"));
        for d in [&inside, &outside] {
            std::fs::create_dir_all(d).unwrap();
        }
        let swept = dirs_to_sweep(
            std::slice::from_ref(&root),
            &[inside.clone(), outside, root.join("gone")],
        );
        assert_eq!(swept, [root, inside]);
    }
}
