//! The walk `search_files` searches behind. One thread lists the tree depth
//! first with each directory's entries sorted, so files come out already in
//! path order and are handed to the searchers the moment they are found.
//!
//! Knowing each file's place in the final order when it is found is what
//! lets the search run while the tree is still being listed, and still stop
//! early (at the match limit, or out of time) with a path-order prefix of
//! the complete answer: a parallel walker finds files in an order no one can
//! name until every directory has been read, so its files must all be
//! listed and sorted before the first one counts.
//!
//! The order is [`path_order`](crate::paths::path_order) of the relative
//! paths. A directory sorts as its name plus `/`, which is how every path
//! inside it begins, so sorting each directory's entries that way and
//! walking depth first gives exactly that order. The one exception is two
//! directories whose names differ only in case (possible on a
//! case-sensitive disk): each is walked whole, one after the other.

use crate::budget::Bounds;
use crate::folder::{Folder, Sort};
use crate::paths::path_order;
use crate::walk::{MAX_PRUNED_NOTED, io_reason, secret_note};
use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use wamcp_policy::skip::is_skipped_directory;

/// Files handed over at most this many at a time inside one directory, so
/// a directory of a hundred thousand files starts being searched early.
const MAX_BATCH: usize = 64;

/// A file the walk found: its `/`-separated path relative to the root, as
/// answers show it, and its folder and real name, which is what gets
/// opened (a name that is not valid Unicode is shown lossily but still
/// read).
pub struct Listed {
    /// The path relative to the root, `/`-separated.
    pub rel: String,
    /// The folder it is in, open; taken by the worker that searches it, so
    /// a folder is closed once its last file was searched.
    pub folder: Option<Arc<Folder>>,
    /// Its name there.
    pub name: OsString,
}

/// What the walk met besides the files it handed over.
#[derive(Default)]
pub struct OrderedWalk {
    /// Files handed over.
    pub listed: usize,
    /// Paths not listed (unreadable directories, secret stores) as
    /// `path (reason)`, each with the number of files handed over before it:
    /// a search cut short reports only those inside the prefix it covered.
    pub notes: Vec<(usize, String)>,
    /// The skipped directories (`.git`, `build`, ...) met, at most
    /// [`MAX_PRUNED_NOTED`], in path order.
    pub pruned: Vec<String>,
    /// The time budget ran out before every directory was read.
    pub out_of_time: bool,
    /// Every directory was read.
    pub finished: bool,
}

/// One entry of a directory, as the walk will treat it.
struct Entry {
    /// The name, with `/` after a directory's: the sort key and the
    /// relative path's last part.
    key: String,
    name: OsString,
    kind: Kind,
}

enum Kind {
    File,
    Directory,
    /// A skipped directory, noted but not entered.
    Pruned,
    /// A secret store, noted as what it holds.
    Secret(String),
}

/// Lists `root` in path order, handing batches of the files for which
/// `keep(relative, name)` holds to `deliver`. Stops, unfinished, when `stop`
/// is set or the budget runs out.
pub fn walk_in_order(
    root: &Path,
    keep: &dyn Fn(&str, &str) -> bool,
    bounds: &Bounds,
    stop: &AtomicBool,
    deliver: &mut dyn FnMut(Vec<Listed>),
) -> OrderedWalk {
    let mut walk = OrderedWalk::default();
    let mut batch = Vec::new();
    let mut open: Vec<(String, Arc<Folder>, std::vec::IntoIter<Entry>)> = Vec::new();
    let mut next_folder = Some((String::new(), Folder::open_root(root)));
    loop {
        if let Some((rel, folder)) = next_folder.take() {
            if !batch.is_empty() {
                deliver(std::mem::take(&mut batch));
            }
            if stop.load(Ordering::Relaxed) {
                break;
            }
            if bounds.budget.exhausted(0) {
                walk.out_of_time = true;
                break;
            }
            let read =
                folder.and_then(|mut f| read_sorted(&mut f, bounds).map(|entries| (f, entries)));
            match read {
                Ok((folder, entries)) => open.push((rel, Arc::new(folder), entries.into_iter())),
                Err(e) => {
                    let shown = if rel.is_empty() {
                        "."
                    } else {
                        rel.trim_end_matches('/')
                    };
                    let note = format!("{shown} ({})", io_reason(&e));
                    walk.notes.push((walk.listed, note));
                }
            }
        }
        let Some((prefix, folder, entries)) = open.last_mut() else {
            walk.finished = true;
            break;
        };
        let Some(entry) = entries.next() else {
            open.pop();
            continue;
        };
        let rel = format!("{prefix}{}", entry.key);
        match entry.kind {
            Kind::Directory => next_folder = Some((rel, folder.open_child(&entry.name))),
            Kind::File => {
                if keep(&rel, &entry.key) {
                    batch.push(Listed {
                        rel,
                        folder: Some(folder.clone()),
                        name: entry.name,
                    });
                    walk.listed += 1;
                    if batch.len() == MAX_BATCH {
                        deliver(std::mem::take(&mut batch));
                    }
                }
            }
            Kind::Pruned => {
                if walk.pruned.len() < MAX_PRUNED_NOTED {
                    walk.pruned.push(rel.trim_end_matches('/').to_string());
                }
            }
            Kind::Secret(what) => {
                let shown = rel.trim_end_matches('/');
                let note = secret_note(shown, &what);
                walk.notes.push((walk.listed, note));
            }
        }
    }
    if !batch.is_empty() {
        deliver(batch);
    }
    walk
}

/// The entries of `folder` that the walk treats, sorted so that depth first
/// they come in path order. Links are not followed: a link is neither a
/// file nor a folder here.
fn read_sorted(folder: &mut Folder, bounds: &Bounds) -> std::io::Result<Vec<Entry>> {
    let mut entries = Vec::new();
    for (name, sort) in folder.entries()? {
        let key = name.to_string_lossy().into_owned();
        let kind = match sort {
            Sort::Folder if is_skipped_directory(&key) => Kind::Pruned,
            Sort::Folder => Kind::Directory,
            Sort::File => Kind::File,
            Sort::Other => continue,
        };
        let kind = match kind {
            Kind::Pruned => kind,
            _ => match bounds.secrets.hides(&name, || folder.path_of(&name)) {
                Some(secret) => Kind::Secret(secret.what),
                None => kind,
            },
        };
        let key = if sort == Sort::Folder { key + "/" } else { key };
        entries.push(Entry { key, name, kind });
    }
    entries.sort_by(|a, b| path_order(&a.key, &b.key));
    Ok(entries)
}
