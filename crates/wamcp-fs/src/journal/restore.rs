//! Putting a step's paths back: first what the step made is removed
//! (deepest first), then what it changed or removed is written back
//! (shallowest first), each file atomically and with its mode.
//!
//! Nothing is written through a link: a path under which a link now stands
//! (a command replaced `src` with a link to the home folder) is a conflict,
//! and the atomic writer checks again that the folder it writes in is the
//! one named.

use super::blobs::Blobs;
use super::steps::{Change, Step};
use super::tree::{Node, node_now};
use std::path::{Path, PathBuf};

/// What an undo did.
#[derive(Debug, Default)]
pub struct Restored {
    /// Paths put back as they were.
    pub restored: usize,
    /// Paths the step made, removed.
    pub removed: usize,
    /// Paths that could not be put back, each with the reason.
    pub left: Vec<String>,
}

/// The paths of `step` that are not as the step left them.
pub(super) fn conflicts(step: &Step, cap: u64) -> Vec<String> {
    let mut found = Vec::new();
    for change in &step.changes {
        let path = step.path_of(change);
        if let Some(why) = link_in_the_way(&step.roots[change.root], &change.rel) {
            found.push(format!("{} ({why})", path.display()));
            continue;
        }
        let now = node_now(&path, cap);
        let same = match (&now, &change.after) {
            (None, None) => true,
            (Some(now), Some(after)) => now.same(after),
            _ => false,
        };
        if !same {
            found.push(format!("{} ({})", path.display(), describe(now.as_ref())));
        }
    }
    found
}

fn describe(node: Option<&Node>) -> &'static str {
    match node {
        None => "removed since",
        Some(Node::Dir { .. }) => "a folder now",
        Some(Node::Link { .. }) => "a link now",
        Some(_) => "changed since",
    }
}

/// Why writing `rel` under `root` could lead elsewhere: the root is gone
/// or moved, or a folder on the way is a link.
fn link_in_the_way(root: &Path, rel: &str) -> Option<String> {
    match dunce::canonicalize(root) {
        Ok(now) if now == root => {}
        _ => return Some(format!("the root {} is gone or moved", root.display())),
    }
    let parts: Vec<&str> = rel.split('/').collect();
    let mut path = root.to_path_buf();
    for part in &parts[..parts.len().saturating_sub(1)] {
        path.push(part);
        match path.symlink_metadata() {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Some(format!("{} is a link now", path.display()));
            }
            Ok(meta) if !meta.is_dir() => return Some(format!("{} is a file now", path.display())),
            _ => {}
        }
    }
    None
}

/// Puts every path of `step` back.
pub(super) fn apply(step: &Step, blobs: &Blobs) -> Restored {
    let mut done = Restored::default();
    let depth = |c: &&Change| c.rel.matches('/').count();
    let mut made: Vec<&Change> = step
        .changes
        .iter()
        .filter(|c| c.after.is_some() && kind_differs(c))
        .collect();
    made.sort_by_key(|c| std::cmp::Reverse(depth(c)));
    for change in made {
        let path = step.path_of(change);
        if let Some(why) = link_in_the_way(&step.roots[change.root], &change.rel) {
            done.left.push(format!("{} ({why})", path.display()));
            continue;
        }
        match remove(&path) {
            Ok(()) => done.removed += usize::from(change.before.is_none()),
            Err(e) => done
                .left
                .push(format!("{} (not removed: {e})", path.display())),
        }
    }
    let mut back: Vec<&Change> = step.changes.iter().filter(|c| c.before.is_some()).collect();
    back.sort_by_key(depth);
    for change in back {
        let path = step.path_of(change);
        if let Some(why) = link_in_the_way(&step.roots[change.root], &change.rel) {
            done.left.push(format!("{} ({why})", path.display()));
            continue;
        }
        match put_back(&path, change.before.as_ref(), blobs) {
            Ok(()) => done.restored += 1,
            Err(e) => done.left.push(format!("{} ({e})", path.display())),
        }
    }
    done
}

/// Whether what is there after the step must go before the old thing is
/// put back: it did not exist, or it is another kind of thing.
fn kind_differs(change: &Change) -> bool {
    match (&change.before, &change.after) {
        (None, Some(_)) => true,
        (Some(before), Some(after)) => {
            matches!(before, Node::Dir { .. }) != matches!(after, Node::Dir { .. })
                || matches!(before, Node::Link { .. }) != matches!(after, Node::Link { .. })
        }
        _ => false,
    }
}

/// Removes a file, a link or an empty folder (never a folder's content).
fn remove(path: &Path) -> std::io::Result<()> {
    let Ok(meta) = path.symlink_metadata() else {
        return Ok(());
    };
    if meta.is_dir() {
        return std::fs::remove_dir(path);
    }
    match std::fs::remove_file(path) {
        Err(e) if meta.permissions().readonly() => {
            // Windows will not delete a read-only file (git's objects are).
            let mut writable = meta.permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            writable.set_readonly(false);
            std::fs::set_permissions(path, writable).map_err(|_| e)?;
            std::fs::remove_file(path)
        }
        other => other,
    }
}

fn put_back(path: &Path, node: Option<&Node>, blobs: &Blobs) -> Result<(), String> {
    match node {
        None => Ok(()),
        Some(Node::Dir { mode }) => {
            // Asked without following: a link standing where the folder
            // was (put there since, and undone with `force`) is removed,
            // never given the folder's mode.
            let is_folder = path.symlink_metadata().is_ok_and(|m| m.is_dir());
            if !is_folder {
                remove(path).map_err(|e| format!("not made: {e}"))?;
                std::fs::create_dir(path).map_err(|e| format!("not made: {e}"))?;
            }
            set_mode(path, *mode)
        }
        Some(Node::File { hash, mode, .. }) => {
            let bytes = blobs.get(hash).map_err(|e| format!("not restored: {e}"))?;
            let (dir, name) = split(path)?;
            // Windows will not replace a read-only file; Unix renames over
            // one, and a mode set here would reach every hard link to it.
            if cfg!(windows)
                && path
                    .symlink_metadata()
                    .is_ok_and(|m| m.permissions().readonly())
            {
                set_mode(path, 0o644)?;
            }
            wamcp_platform::atomic::write_atomically(
                &dir,
                name,
                &bytes,
                wamcp_platform::atomic::Commit::Replace,
            )
            .map_err(|e| format!("not restored: {e}"))?;
            set_mode(path, *mode)
        }
        Some(Node::Link { target }) => {
            let _ = remove(path);
            make_link(target, path).map_err(|e| format!("link not made: {e}"))
        }
        Some(Node::Unkept { why, .. }) => Err(format!("its content was not kept: {why}")),
    }
}

fn split(path: &Path) -> Result<(PathBuf, &std::ffi::OsStr), String> {
    match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => Ok((dir.to_path_buf(), name)),
        _ => Err("not a file path".to_string()),
    }
}

fn set_mode(path: &Path, mode: u32) -> Result<(), String> {
    // Setting a mode follows a link: one found here now is left alone.
    if path
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink())
    {
        return Err("mode not set: a link stands there now".to_string());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .map_err(|e| format!("mode not set: {e}"))
    }
    #[cfg(not(unix))]
    {
        let meta = path.metadata().map_err(|e| format!("mode not set: {e}"))?;
        let mut permissions = meta.permissions();
        permissions.set_readonly(mode & 0o200 == 0);
        std::fs::set_permissions(path, permissions).map_err(|e| format!("mode not set: {e}"))
    }
}

fn make_link(target: &str, path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(target, path)
    }
    #[cfg(windows)]
    {
        std::os::windows::fs::symlink_file(target, path)
    }
}
