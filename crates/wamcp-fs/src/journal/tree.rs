//! What a root holds, as the journal records it: every folder, file and
//! link by its path relative to the root, except folders a build makes
//! again. A file whose size, times and identity are those of the last
//! record costs one `stat`; only a new or changed file is read.

use super::blobs::{Blobs, hash_of};
use crate::regular::read_small;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::SystemTime;
use wamcp_policy::undo::{is_regenerated, may_hold_sources};

/// One thing at a path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Node {
    /// A file whose content the journal keeps.
    File {
        /// Its length in bytes.
        size: u64,
        /// Its permissions (Unix mode bits; on Windows 0o444 when read-only).
        mode: u32,
        /// The SHA-256 of its content, the name of the journal's copy.
        hash: String,
    },
    /// A file the journal could not keep (over the size cap or the budget,
    /// or unreadable): seen, but not restorable.
    Unkept {
        /// Its length in bytes.
        size: u64,
        /// Its permissions.
        mode: u32,
        /// Its modification time, in nanoseconds: how a change is seen.
        stamp: i64,
        /// Why it was not kept.
        why: String,
    },
    /// A folder.
    Dir {
        /// Its permissions.
        mode: u32,
    },
    /// A symbolic link.
    Link {
        /// Where it points, as written in the link.
        target: String,
    },
}

impl Node {
    /// Whether `self` and `other` hold the same thing (a file not kept is
    /// compared by size and time, the rest by content).
    pub fn same(&self, other: &Node) -> bool {
        match (self, other) {
            (
                Node::Unkept { size, stamp, .. },
                Node::Unkept {
                    size: s, stamp: t, ..
                },
            ) => size == s && stamp == t,
            (Node::Dir { .. }, Node::Dir { .. }) => true,
            _ => self == other,
        }
    }

    /// Whether this is a file or a link (not a folder).
    pub fn is_file(&self) -> bool {
        !matches!(self, Node::Dir { .. })
    }
}

/// What `stat` says of a file, to tell whether it changed since it was
/// read. `None` in an entry means "read it again next time": the file was
/// written so recently that a change within the same clock tick would not
/// show.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stat {
    size: u64,
    mtime: i64,
    ctime: i64,
    ino: u64,
}

/// A path's record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// What is there.
    pub node: Node,
    #[serde(default)]
    stat: Option<Stat>,
}

/// Everything under one root, by relative path (`/`-separated).
pub type Nodes = BTreeMap<String, Entry>;

/// How a scan goes.
pub(super) struct Scan<'a> {
    pub root: &'a Path,
    pub cap: u64,
    /// The last record of this root, for unchanged files.
    pub cache: &'a Nodes,
    /// Whether `cache` is the scan before this very step.
    pub after_step: bool,
}

/// A file to read: its path, what stat said, and its mode.
pub(super) struct ToRead {
    pub rel: String,
    pub size: u64,
    stat: Stat,
    mode: u32,
}

/// A scan before the new files are read.
#[derive(Default)]
pub(super) struct Seen {
    pub nodes: Nodes,
    pub to_read: Vec<ToRead>,
    pub not_kept: Vec<String>,
}

/// Time within which a change may not show in the modification time.
const RACY_NANOS: i64 = 2_000_000_000;

impl Scan<'_> {
    /// Every path under the root; unchanged files from the cache, the rest
    /// listed to read.
    pub fn walk(&self) -> Seen {
        let mut seen = Seen::default();
        let top = Rc::new(Skip::for_root(self.root));
        let mut folders = vec![(self.root.to_path_buf(), String::new(), top)];
        while let Some((folder, prefix, skip)) = folders.pop() {
            let Ok(entries) = std::fs::read_dir(&folder) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let Some(name) = name.to_str() else {
                    // Recorded under a stand-in name, so the root is not
                    // taken for kept whole (the judge asks before a loss).
                    let why = "its name is not UTF-8".to_string();
                    let rel = format!("{prefix}{}", name.to_string_lossy());
                    seen.not_kept.push(format!("{rel} ({why})"));
                    let node = Node::Unkept {
                        size: 0,
                        mode: 0,
                        stamp: 0,
                        why,
                    };
                    seen.nodes.insert(rel, Entry { node, stat: None });
                    continue;
                };
                let rel = format!("{prefix}{name}");
                let path = entry.path();
                let Ok(meta) = metadata_of(&entry) else {
                    continue;
                };
                if meta.is_dir() {
                    if self.leaves_out(&skip, &path, &rel, name) {
                        continue;
                    }
                    let node = Node::Dir { mode: mode(&meta) };
                    seen.nodes.insert(rel.clone(), Entry { node, stat: None });
                    // A repository inside the root ignores by its own rules.
                    let skip = match path.join(".git").exists() {
                        true => Rc::new(Skip::for_repo(&path)),
                        false => skip.clone(),
                    };
                    folders.push((path, format!("{rel}/"), skip));
                } else if meta.file_type().is_symlink() {
                    seen.nodes.insert(rel, link(&path));
                } else if meta.is_file() {
                    self.file(rel, &meta, &mut seen);
                }
                // A FIFO, socket or device holds nothing to put back, and
                // opening one could block the journal (and every later
                // step) for good: it is not recorded.
            }
        }
        seen
    }

    /// Whether the folder `rel` is left out as one a build makes again.
    /// Once recorded, a folder stays recorded: a project that starts
    /// ignoring it (an agent adds `bin/` to `.gitignore`) does not hide
    /// what is in it from the next step. After a step, what the scan
    /// before it left out stays out, so a step that makes a root a
    /// repository does not record every old dependency as made by it
    /// (and an undo would not remove them).
    fn leaves_out(&self, skip: &Skip, path: &Path, rel: &str, name: &str) -> bool {
        if !is_regenerated(name) {
            return false;
        }
        match self.cache.get(rel) {
            Some(Entry {
                node: Node::Dir { .. },
                ..
            }) => false,
            _ if self.after_step => true,
            _ => skip.ignores(path, name, !rel.contains('/')),
        }
    }

    /// The record of one file: from the cache when unchanged, not kept
    /// when too large, else listed to read.
    fn file(&self, rel: String, meta: &std::fs::Metadata, seen: &mut Seen) {
        let stat = stat_of(meta);
        // The copy a cached record names is there: eviction never removes
        // a copy a root's record names.
        if let Some(cached) = self.cache.get(&rel)
            && cached.stat == Some(stat)
            && matches!(cached.node, Node::File { .. } | Node::Unkept { .. })
        {
            // Every step names what it cannot bring back, not only the
            // first to see it.
            if let Node::Unkept { why, .. } = &cached.node {
                seen.not_kept.push(format!("{rel} ({why})"));
            }
            seen.nodes.insert(rel, cached.clone());
            return;
        }
        if meta.len() > self.cap {
            let why = format!("over the {} MiB size cap", self.cap >> 20);
            seen.not_kept.push(format!("{rel} ({why})"));
            seen.nodes.insert(rel, unkept(stat, mode(meta), why, true));
            return;
        }
        seen.to_read.push(ToRead {
            rel,
            size: meta.len(),
            stat,
            mode: mode(meta),
        });
    }
}

/// A file seen but not kept. Only one over the size cap is remembered as
/// such; one that did not fit the budget or could not be read is tried
/// again at the next scan.
fn unkept(stat: Stat, mode: u32, why: String, remembered: bool) -> Entry {
    Entry {
        node: Node::Unkept {
            size: stat.size,
            mode,
            stamp: stat.mtime,
            why,
        },
        stat: remembered.then_some(stat),
    }
}

/// Reads and keeps the listed files, at most `allowance` new bytes (each
/// file that does not fit is recorded as not kept, with `over` as the
/// reason); answers the bytes newly stored.
pub(super) fn read_listed(
    root: &Path,
    seen: &mut Seen,
    blobs: &Blobs,
    cap: u64,
    allowance: u64,
    over: &str,
) -> u64 {
    let started = now_nanos();
    let mut stored = 0u64;
    for file in std::mem::take(&mut seen.to_read) {
        let path = root.join(&file.rel);
        let entry = match read_small(&path, cap) {
            Ok(bytes) => {
                let hash = hash_of(&bytes);
                let fits = stored + bytes.len() as u64 <= allowance || blobs.has(&hash);
                match fits.then(|| blobs.put(&hash, &bytes)) {
                    Some(Ok(new)) => {
                        stored += new;
                        let racy = file.stat.mtime > started - RACY_NANOS;
                        Entry {
                            node: Node::File {
                                size: bytes.len() as u64,
                                mode: file.mode,
                                hash,
                            },
                            stat: (!racy && bytes.len() as u64 == file.size).then_some(file.stat),
                        }
                    }
                    Some(Err(e)) => {
                        let why = format!("the journal could not store it: {e}");
                        seen.not_kept.push(format!("{} ({why})", file.rel));
                        unkept(file.stat, file.mode, why, false)
                    }
                    None => {
                        seen.not_kept.push(format!("{} ({over})", file.rel));
                        unkept(file.stat, file.mode, over.to_string(), false)
                    }
                }
            }
            Err(e) => {
                let why = format!("it could not be read: {e}");
                seen.not_kept.push(format!("{} ({why})", file.rel));
                unkept(file.stat, file.mode, why, false)
            }
        };
        seen.nodes.insert(file.rel, entry);
    }
    stored
}

/// The record of a single path and the folders above it up to `root`:
/// what a file tool's step needs.
pub(super) fn one_path(root: &Path, file: &Path, cap: u64) -> Seen {
    let mut seen = Seen::default();
    let Ok(rel) = file.strip_prefix(root) else {
        return seen;
    };
    let mut key = String::new();
    let parts: Vec<_> = rel.components().collect();
    for (i, part) in parts.iter().enumerate() {
        let Some(name) = part.as_os_str().to_str() else {
            return seen;
        };
        if !key.is_empty() {
            key.push('/');
        }
        key.push_str(name);
        let path = root.join(&key);
        let Ok(meta) = path.symlink_metadata() else {
            break;
        };
        let last = i + 1 == parts.len();
        if meta.is_dir() && !last {
            let node = Node::Dir { mode: mode(&meta) };
            seen.nodes.insert(key.clone(), Entry { node, stat: None });
        } else if meta.is_file() && last {
            let scan = Scan {
                root,
                cap,
                cache: &Nodes::new(),
                after_step: false,
            };
            scan.file(key.clone(), &meta, &mut seen);
        } else if meta.file_type().is_symlink() && last {
            seen.nodes.insert(key.clone(), link(&path));
        } else {
            break;
        }
    }
    seen
}

/// The record of the link at `path` (an unreadable target is recorded
/// empty, which never matches a later look, so undo sees a conflict).
fn link(path: &Path) -> Entry {
    let target = std::fs::read_link(path)
        .map(|t| t.to_string_lossy().into_owned())
        .unwrap_or_default();
    Entry {
        node: Node::Link { target },
        stat: None,
    }
}

/// The node at `path` now (its content hashed, nothing stored), for
/// telling whether it changed since a step.
pub(super) fn node_now(path: &Path, cap: u64) -> Option<Node> {
    let meta = path.symlink_metadata().ok()?;
    if meta.is_dir() {
        return Some(Node::Dir { mode: mode(&meta) });
    }
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(path).ok()?;
        return Some(Node::Link {
            target: target.to_string_lossy().into_owned(),
        });
    }
    if !meta.is_file() {
        return None;
    }
    if meta.len() > cap {
        return Some(unkept(stat_of(&meta), mode(&meta), String::new(), false).node);
    }
    match read_small(path, cap) {
        Ok(bytes) => Some(Node::File {
            size: bytes.len() as u64,
            mode: mode(&meta),
            hash: hash_of(&bytes),
        }),
        Err(_) => Some(unkept(stat_of(&meta), mode(&meta), String::new(), false).node),
    }
}

/// Which folders a scan leaves out: those a build makes again, where the
/// project says so. In a git repository (the root's own, one the root is
/// inside, or one inside the root) a folder of such a name is left out
/// only when the repository ignores it (a tracked `bin/` of scripts is
/// kept); elsewhere a name a project may also use for its own files
/// (`bin`, `build`, `out`, ...) only at the top of the root.
struct Skip {
    ignore: Option<ignore::gitignore::Gitignore>,
}

impl Skip {
    /// The rules for `root`: those of the repository it is in, if any.
    fn for_root(root: &Path) -> Skip {
        match root.ancestors().find(|dir| dir.join(".git").exists()) {
            Some(top) => Skip::for_repo_at(top, root),
            None => Skip { ignore: None },
        }
    }

    /// The rules for the repository whose top folder is `repo`.
    fn for_repo(repo: &Path) -> Skip {
        Skip::for_repo_at(repo, repo)
    }

    /// The rules of the repository at `top`, as they apply under `root`:
    /// its exclude file and every `.gitignore` from `top` down to `root`.
    fn for_repo_at(top: &Path, root: &Path) -> Skip {
        let mut builder = ignore::gitignore::GitignoreBuilder::new(top);
        let _ = builder.add(top.join(".git").join("info").join("exclude"));
        let mut folders: Vec<&Path> = root
            .ancestors()
            .take_while(|dir| dir.starts_with(top))
            .collect();
        folders.reverse();
        for folder in folders {
            let _ = builder.add(folder.join(".gitignore"));
        }
        Skip {
            ignore: builder.build().ok(),
        }
    }

    fn ignores(&self, path: &Path, name: &str, top_level: bool) -> bool {
        match &self.ignore {
            None => top_level || !may_hold_sources(name),
            Some(ignore) => ignore.matched_path_or_any_parents(path, true).is_ignore(),
        }
    }
}

/// What `entry` is, never following a link. On Unix a stat relative to
/// the open folder (no path lookup). On Windows the file itself is asked:
/// the listing's copy of its size and times can lag behind a file still
/// being written, and a stale record would hide a change.
fn metadata_of(entry: &std::fs::DirEntry) -> std::io::Result<std::fs::Metadata> {
    if cfg!(unix) {
        entry.metadata()
    } else {
        entry.path().symlink_metadata()
    }
}

fn stat_of(meta: &std::fs::Metadata) -> Stat {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Stat {
            size: meta.len(),
            mtime: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
            ctime: meta.ctime() * 1_000_000_000 + meta.ctime_nsec(),
            ino: meta.ino(),
        }
    }
    #[cfg(not(unix))]
    {
        Stat {
            size: meta.len(),
            mtime: nanos(meta.modified().ok()),
            ctime: nanos(meta.created().ok()),
            ino: 0,
        }
    }
}

#[cfg(not(unix))]
fn nanos(time: Option<SystemTime>) -> i64 {
    time.and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i64)
}

fn now_nanos() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// The permissions of `meta`, as the journal records them.
pub(super) fn mode(meta: &std::fs::Metadata) -> u32 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o7777
    }
    #[cfg(not(unix))]
    {
        if meta.permissions().readonly() {
            0o444
        } else {
            0o644
        }
    }
}

/// The absolute path of `rel` under `root`.
pub(super) fn absolute(root: &Path, rel: &str) -> PathBuf {
    rel.split('/')
        .fold(root.to_path_buf(), |p, part| p.join(part))
}
