//! The parallel file walk of `find_files`: ripgrep's
//! `ignore` walker with the skipped directory names pruned before descending
//! (filtering afterwards would still pay to enumerate every object file in a
//! build tree), symbolic links not followed, and no `.gitignore` rules: the
//! tools answer "what is on disk", and the skip list covers build output.

use crate::budget::Bounds;
use crate::paths::{relative, sort_first, sort_paths};
use crate::secrets::Secrets;
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkState};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use wamcp_policy::skip::is_skipped_directory;

/// Skipped directories noted per walk: enough to name a few and count.
pub const MAX_PRUNED_NOTED: usize = 1000;

/// Files found under a root.
pub struct Walk {
    /// `/`-separated paths relative to the root; the first `shown` (see
    /// [`walk_files`]) are the first in path order, sorted.
    pub files: Vec<String>,
    /// Directories or files that could not be read, as `path (reason)`.
    pub unreadable: Vec<String>,
    /// The budget ran out before every directory was listed: `files` holds
    /// what the directories reached so far held, not a path-order prefix.
    pub cut_short: bool,
    /// The skipped directories (`.git`, `build`, ...) met and left out, as
    /// sorted relative paths, at most [`MAX_PRUNED_NOTED`]: only when there
    /// are some is "nothing found" worth a note about where was not looked,
    /// and the note names them.
    pub pruned: Vec<String>,
}

/// Walks `root` and keeps the regular files for which `keep(relative, name)`
/// holds; `relative` spells out the `/`-separated relative path when asked. The first `shown` files are sorted, so what is shown never
/// depends on thread timing.
pub fn walk_files(
    root: &Path,
    keep: &(dyn Fn(&dyn Fn() -> String, &str) -> bool + Sync),
    bounds: &Bounds,
    shown: usize,
) -> Walk {
    let shared = Mutex::new((Vec::new(), Vec::new()));
    let cut_short = AtomicBool::new(false);
    // The filter must own what it uses: the walker keeps it past this call.
    let secret = std::sync::Arc::new(Mutex::new(Vec::new()));
    let (noted, secrets, owned_root) = (secret.clone(), bounds.secrets.clone(), root.to_path_buf());
    let pruned = std::sync::Arc::new(Mutex::new(Vec::new()));
    let met = pruned.clone();
    let pruned_root = root.to_path_buf();
    let mut builder = Collector {
        root,
        keep,
        shared: &shared,
        bounds,
        cut_short: &cut_short,
    };
    WalkBuilder::new(root)
        .standard_filters(false)
        .hidden(false)
        .follow_links(false)
        .threads(bounds.threads.unwrap_or(0))
        .filter_entry(move |entry| {
            if entry.depth() == 0 {
                return true;
            }
            if is_pruned(entry) {
                let mut met = met.lock().unwrap_or_else(|e| e.into_inner());
                if met.len() < MAX_PRUNED_NOTED {
                    met.push(crate::paths::relative(entry.path(), &pruned_root));
                }
                return false;
            }
            !is_secret(entry, &owned_root, &secrets, &noted)
        })
        .build_parallel()
        .visit(&mut builder);
    let (mut files, mut unreadable) = shared.into_inner().unwrap_or_else(|e| e.into_inner());
    unreadable.append(&mut secret.lock().unwrap_or_else(|e| e.into_inner()));
    sort_first(&mut files, shown);
    sort_paths(&mut unreadable);
    Walk {
        files,
        unreadable,
        cut_short: cut_short.into_inner(),
        pruned: {
            let mut met = std::mem::take(&mut *pruned.lock().unwrap_or_else(|e| e.into_inner()));
            sort_paths(&mut met);
            met
        },
    }
}

fn is_pruned(entry: &DirEntry) -> bool {
    entry.file_type().is_some_and(|t| t.is_dir())
        && entry.file_name().to_str().is_some_and(is_skipped_directory)
}

/// Whether `entry` is a secret store, noted as `path (a secret store: what)`
/// so the answer says what was left out.
fn is_secret(entry: &DirEntry, root: &Path, secrets: &Secrets, noted: &Mutex<Vec<String>>) -> bool {
    let Some(secret) = secrets.hides(entry.file_name(), || entry.path().to_path_buf()) else {
        return false;
    };
    let line = secret_note(&relative(entry.path(), root), &secret.what);
    noted.lock().unwrap_or_else(|e| e.into_inner()).push(line);
    true
}

/// How a walk notes a secret store it left out: `path (a secret store: what)`.
pub fn secret_note(shown: &str, what: &str) -> String {
    format!("{shown} (a secret store: {what})")
}

struct Collector<'a> {
    root: &'a Path,
    keep: &'a (dyn Fn(&dyn Fn() -> String, &str) -> bool + Sync),
    shared: &'a Mutex<(Vec<String>, Vec<String>)>,
    bounds: &'a Bounds<'a>,
    cut_short: &'a AtomicBool,
}

impl<'s> ParallelVisitorBuilder<'s> for Collector<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Visitor {
            root: self.root,
            keep: self.keep,
            shared: self.shared,
            bounds: self.bounds,
            cut_short: self.cut_short,
            files: Vec::new(),
            unreadable: Vec::new(),
        })
    }
}

/// One walker thread's state; it batches results and hands them over once,
/// when the thread finishes, so threads do not contend on the lock per file.
struct Visitor<'a> {
    root: &'a Path,
    keep: &'a (dyn Fn(&dyn Fn() -> String, &str) -> bool + Sync),
    shared: &'a Mutex<(Vec<String>, Vec<String>)>,
    bounds: &'a Bounds<'a>,
    cut_short: &'a AtomicBool,
    files: Vec<String>,
    unreadable: Vec<String>,
}

impl ParallelVisitor for Visitor<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        if self.bounds.budget.exhausted(0) {
            self.cut_short.store(true, Ordering::Relaxed);
            return WalkState::Quit;
        }
        match entry {
            Ok(entry) => {
                if entry.file_type().is_some_and(|t| t.is_file()) {
                    let rel = || relative(entry.path(), self.root);
                    let name = entry.file_name().to_string_lossy();
                    if (self.keep)(&rel, &name) {
                        self.files.push(rel());
                    }
                    self.bounds.progress.fetch_add(1, Ordering::Relaxed);
                }
            }
            Err(error) => self.unreadable.push(describe_error(&error, self.root)),
        }
        WalkState::Continue
    }
}

impl Drop for Visitor<'_> {
    fn drop(&mut self) {
        let mut shared = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        shared.0.append(&mut self.files);
        shared.1.append(&mut self.unreadable);
    }
}

/// `relative/path (reason)` for a walk error.
fn describe_error(error: &ignore::Error, root: &Path) -> String {
    fn path_and_cause(error: &ignore::Error) -> (Option<PathBuf>, String) {
        match error {
            ignore::Error::WithPath { path, err } => (Some(path.clone()), path_and_cause(err).1),
            ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
                path_and_cause(err)
            }
            ignore::Error::Io(e) => (None, io_reason(e)),
            other => (None, other.to_string()),
        }
    }
    match path_and_cause(error) {
        (Some(path), cause) => format!("{} ({cause})", relative(&path, root)),
        (None, cause) => cause,
    }
}

/// A short reason for an I/O error, without the OS's error-code suffix.
pub fn io_reason(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        std::io::ErrorKind::NotFound => "vanished while searching".into(),
        _ => error.to_string(),
    }
}
