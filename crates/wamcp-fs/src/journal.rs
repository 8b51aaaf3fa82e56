//! The undo journal: before a step that can change the roots, what is
//! needed to put them back; after it, what changed; on `undo`, every
//! changed path as it was, byte for byte.
//!
//! The journal lives in wamcp's data folder, outside every place a command
//! may write, so nothing a step runs can damage it. It keeps:
//!
//! - `blobs/`: file contents by SHA-256, each distinct content once;
//! - `roots/`: the last record of each root (path, kind, size, mode, hash
//!   and what `stat` said), so that an unchanged file costs one `stat`;
//! - `steps/`: one JSON record per step: each changed path before and after;
//! - `pending/`: the contents a step in progress relies on, so that another
//!   wamcp evicting at the same time leaves them alone.
//!
//! A git repository is recorded as the files it is made of (`.git` with its
//! refs, reflogs, stash and objects), so a deleted branch, a dropped stash
//! or an expired reflog comes back like any file. Folders a build makes
//! again and files over the size cap are left out (named in the step).

mod blobs;
mod restore;
mod steps;
mod tree;

#[cfg(test)]
mod tests;

pub use restore::Restored;
pub use steps::{Change, Step};
pub use tree::Node;

use blobs::Blobs;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime};
use tree::{Nodes, Scan, Seen, one_path, read_listed};

/// How long a step is safe from being dropped to make room.
pub const PROTECTED: Duration = Duration::from_secs(24 * 3600);

/// How much the journal keeps.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The most bytes of copies; the oldest steps go first.
    pub budget: u64,
    /// How long a step is kept.
    pub max_age: Duration,
    /// The largest file copied.
    pub file_cap: u64,
}

/// What a step may change.
#[derive(Clone, Debug)]
pub enum Scope {
    /// Anything under these roots (a command).
    Roots(Vec<PathBuf>),
    /// One file under `root` (a file tool), and the folders above it.
    File {
        /// The root the file is in.
        root: PathBuf,
        /// The file, resolved.
        file: PathBuf,
    },
}

/// What to do when the step's new copies do not fit the budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overflow {
    /// Keep nothing and say so: the caller asks the user.
    Refuse,
    /// The user agreed: keep what fits, list the rest as not kept.
    KeepWhatFits,
}

/// A step that does not fit the budget.
#[derive(Debug)]
pub struct OverBudget {
    /// New bytes the step would copy.
    pub needed: u64,
    /// The budget.
    pub budget: u64,
    /// The largest of the files to copy, with their sizes.
    pub largest: Vec<(String, u64)>,
}

/// Why a step could not be begun.
#[derive(Debug)]
pub enum BeginError {
    /// The copies do not fit the budget.
    OverBudget(OverBudget),
    /// The journal could not be written.
    Failed(String),
}

/// A step in progress: the roots as they were before it.
pub struct Pending {
    roots: Vec<PathBuf>,
    file: Option<PathBuf>,
    before: Arc<Vec<Nodes>>,
    not_kept: Vec<String>,
    marker: Option<PathBuf>,
}

impl Pending {
    /// What the step could not keep, each with the reason.
    pub fn not_kept(&self) -> &[String] {
        &self.not_kept
    }
}

/// A recorded step, for the tool's answer.
#[derive(Debug)]
pub struct Recorded {
    /// The step's number.
    pub id: u64,
    /// What changed, in a few words.
    pub summary: String,
    /// The paths the step created, each as its root and its `/`-separated
    /// path below it.
    pub added: Vec<(PathBuf, String)>,
}

/// The journal's size, for `get_server_info`.
#[derive(Debug)]
pub struct Usage {
    /// Bytes of copies kept.
    pub bytes: u64,
    /// Steps kept.
    pub steps: usize,
}

/// How long a copy a step relies on is spared without a marker naming it.
const PENDING_SPARED: Duration = Duration::from_secs(24 * 3600);

/// The journal in one folder.
pub struct Journal {
    dir: PathBuf,
    blobs: Blobs,
    limits: Limits,
    usage: Mutex<Option<u64>>,
    /// Each root's last record as this process read or wrote it, with the
    /// size and time of its file then.
    records: Mutex<HashMap<PathBuf, (Option<Stamp>, Nodes)>>,
    /// When each step was made, read once: eviction asks after every
    /// step, and the first step of a large project is a large file.
    times: Mutex<HashMap<u64, u64>>,
    /// The records before each step in progress here, so eviction by
    /// another call leaves their copies alone.
    in_flight: Mutex<Vec<Weak<Vec<Nodes>>>>,
}

/// A record file's size and modification time: when both still match, the
/// copy this process holds is the file's content.
type Stamp = (u64, SystemTime);

impl Journal {
    /// Opens (creating) the journal in `dir`, which must be a real folder,
    /// not a link to one: a link could be swapped to lead into a root.
    pub fn open(dir: &Path, limits: Limits) -> Result<Journal, String> {
        if let Ok(meta) = dir.symlink_metadata()
            && !meta.is_dir()
        {
            return Err(format!(
                "the undo journal folder {} is a link or a file, not a folder",
                dir.display()
            ));
        }
        for sub in ["", "blobs", "roots", "steps", "pending"] {
            std::fs::create_dir_all(dir.join(sub)).map_err(|e| {
                format!(
                    "the undo journal folder {} cannot be made: {e}",
                    dir.display()
                )
            })?;
        }
        let blobs = Blobs::new(dir.join("blobs"));
        blobs.clear_leftovers(Duration::from_secs(3600));
        Ok(Journal {
            dir: dir.to_path_buf(),
            blobs,
            limits,
            usage: Mutex::new(None),
            records: Mutex::new(HashMap::new()),
            times: Mutex::new(HashMap::new()),
            in_flight: Mutex::new(Vec::new()),
        })
    }

    /// The journal's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Its limits.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Records the scope as it is before a step.
    pub fn begin(&self, scope: &Scope, overflow: Overflow) -> Result<Pending, BeginError> {
        let _lock = self.lock().map_err(BeginError::Failed)?;
        let (roots, file) = match scope {
            Scope::Roots(roots) => (roots.clone(), None),
            Scope::File { root, file } => (vec![root.clone()], Some(file.clone())),
        };
        if let Some(file) = &file {
            self.record_before_new_rules(&roots[0], file);
        }
        let mut seen: Vec<Seen> = roots
            .iter()
            .map(|root| {
                // A file tool's step reads its one file; only a whole root
                // needs the last record.
                let cache = match file {
                    Some(_) => Nodes::new(),
                    None => self.load_root(root),
                };
                self.scan(root, file.as_deref(), &cache, false)
            })
            .collect();
        let needed: u64 = seen.iter().flat_map(|s| &s.to_read).map(|f| f.size).sum();
        let allowance = self.allowance(needed, &seen, overflow)?;
        let read: Vec<Vec<String>> = seen
            .iter()
            .map(|s| s.to_read.iter().map(|f| f.rel.clone()).collect())
            .collect();
        let mut stored = 0;
        for (root, seen) in roots.iter().zip(&mut seen) {
            stored += self.read_listed(root, seen, allowance - stored);
        }
        self.add_usage(stored);
        let before: Vec<Nodes> = seen
            .iter_mut()
            .map(|s| std::mem::take(&mut s.nodes))
            .collect();
        if file.is_none() {
            for (root, nodes) in roots.iter().zip(&before) {
                self.save_root(root, nodes);
            }
        }
        // The copies this step just made are named by no record yet when
        // it is a file's step; a whole root's are in its record, unless
        // another wamcp rewrites that record meanwhile.
        let fresh: Vec<String> = before
            .iter()
            .zip(&read)
            .flat_map(|(nodes, rels)| rels.iter().filter_map(|rel| nodes.get(rel)))
            .filter_map(|entry| match &entry.node {
                Node::File { hash, .. } => Some(hash.clone()),
                _ => None,
            })
            .collect();
        let marker = self.mark_pending(fresh);
        let before = Arc::new(before);
        let mut in_flight = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        in_flight.retain(|weak| weak.strong_count() > 0);
        in_flight.push(Arc::downgrade(&before));
        Ok(Pending {
            roots,
            file,
            not_kept: seen.into_iter().flat_map(|s| s.not_kept).collect(),
            before,
            marker,
        })
    }

    /// Records the whole root first when a file step writes its ignore
    /// rules and the root has no record yet: otherwise the first record
    /// would follow rules the agent just wrote (`bin/` added to
    /// `.gitignore`, then `bin` deleted unrecorded). What does not fit the
    /// budget is recorded as not kept.
    fn record_before_new_rules(&self, root: &Path, file: &Path) {
        let rules = file.file_name().is_some_and(|n| n == ".gitignore")
            || file.ends_with(Path::new(".git").join("info").join("exclude"));
        if !rules || !self.with_root(root, |nodes| nodes.is_empty()) {
            return;
        }
        let mut seen = self.scan(root, None, &Nodes::new(), false);
        let free = self.limits.budget.saturating_sub(self.usage());
        let stored = self.read_listed(root, &mut seen, free);
        self.add_usage(stored);
        self.save_root(root, &seen.nodes);
    }

    /// Records what the step changed; `None` when it changed nothing.
    /// Copies of the new contents are kept while they fit the budget; past
    /// it they are recorded by size and time only. Never fails the step:
    /// an error is the journal's to report.
    pub fn finish(
        &self,
        pending: Pending,
        tool: &str,
        what: &str,
    ) -> Result<Option<Recorded>, String> {
        let _lock = self.lock()?;
        if let Some(marker) = &pending.marker {
            let _ = std::fs::remove_file(marker);
        }
        let mut changes = Vec::new();
        let mut stored = 0;
        for (i, (root, before)) in pending.roots.iter().zip(pending.before.iter()).enumerate() {
            let mut seen = self.scan(root, pending.file.as_deref(), before, true);
            let allowance = self.limits.budget.saturating_sub(self.usage());
            stored += self.read_listed(root, &mut seen, allowance);
            if pending.file.is_none() {
                self.save_root(root, &seen.nodes);
            }
            changes.extend(steps::diff(i, before, &seen.nodes));
        }
        self.add_usage(stored);
        if changes.is_empty() {
            return Ok(None);
        }
        let mut not_kept = pending.not_kept;
        self.missing_copies(&mut changes, &mut not_kept);
        let step = Step {
            id: self.next_id(),
            time: now_seconds(),
            tool: tool.to_string(),
            what: what.to_string(),
            roots: pending.roots,
            changes,
            not_kept,
        };
        let text = serde_json::to_vec(&step).map_err(|e| e.to_string())?;
        let name = steps::file_name(step.id);
        wamcp_platform::atomic::write_atomically(
            &self.dir.join("steps"),
            std::ffi::OsStr::new(&name),
            &text,
            wamcp_platform::atomic::Commit::Replace,
        )
        .map_err(|e| format!("the step could not be written: {e}"))?;
        self.evict(step.id);
        let added = step
            .changes
            .iter()
            .filter(|c| c.before.is_none() && c.after.is_some())
            .map(|c| (step.roots[c.root].clone(), c.rel.clone()))
            .collect();
        Ok(Some(Recorded {
            id: step.id,
            summary: step.summary(),
            added,
        }))
    }

    /// The steps kept, newest first.
    pub fn steps(&self) -> Vec<Step> {
        let mut ids = steps::ids(&self.dir.join("steps"));
        ids.reverse();
        ids.into_iter().filter_map(|id| self.step(id)).collect()
    }

    /// Step `id`, if it is kept.
    pub fn step(&self, id: u64) -> Option<Step> {
        let path = self.dir.join("steps").join(steps::file_name(id));
        let bytes = std::fs::read(path).ok()?;
        serde_json::from_slice::<Step>(&bytes)
            .ok()
            .filter(Step::is_sound)
    }

    /// When step `id` was made (`None`: not kept, or unreadable).
    fn step_time(&self, id: u64) -> Option<u64> {
        let mut times = self.times.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(time) = times.get(&id) {
            return Some(*time);
        }
        let time = self.step(id)?.time;
        times.insert(id, time);
        Some(time)
    }

    /// The paths of `step` that changed again since (or where a link now
    /// stands in the way), each with what is there now.
    pub fn conflicts(&self, step: &Step) -> Vec<String> {
        restore::conflicts(step, self.limits.file_cap)
    }

    /// The paths `step` would change that now hold a file over the size
    /// cap: putting the step back over them could not itself be undone.
    pub fn unkept_now(&self, step: &Step) -> Vec<String> {
        step.changes
            .iter()
            .map(|change| step.path_of(change))
            .filter(|path| {
                path.symlink_metadata()
                    .is_ok_and(|m| m.is_file() && m.len() > self.limits.file_cap)
            })
            .map(|path| path.display().to_string())
            .collect()
    }

    /// Puts every path `step` changed back as it was before the step.
    pub fn restore(&self, step: &Step) -> Restored {
        restore::apply(step, &self.blobs)
    }

    /// The roots among `roots` where the journal keeps every file it
    /// records: where one is over the size cap or could not be kept, a
    /// loss there would not come back, so commands that lose work are
    /// judged there as without a journal. A root not recorded yet is
    /// walked (a `stat` per file, nothing read).
    pub fn keeping(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        roots
            .iter()
            .filter(|root| {
                let recorded = self.with_root(root, |nodes| {
                    let unkept = |e: &tree::Entry| matches!(e.node, Node::Unkept { .. });
                    (!nodes.is_empty()).then(|| !nodes.values().any(unkept))
                });
                recorded.unwrap_or_else(|| {
                    let none = Nodes::new();
                    self.scan(root, None, &none, false).not_kept.is_empty()
                })
            })
            .cloned()
            .collect()
    }

    /// How much the journal holds now.
    pub fn usage_now(&self) -> Usage {
        Usage {
            bytes: self.usage(),
            steps: steps::ids(&self.dir.join("steps")).len(),
        }
    }

    /// Reads and keeps the files `seen` lists, at most `allowance` new
    /// bytes; answers the bytes newly stored.
    fn read_listed(&self, root: &Path, seen: &mut Seen, allowance: u64) -> u64 {
        let cap = self.limits.file_cap;
        read_listed(root, seen, &self.blobs, cap, allowance, OVER_BUDGET)
    }

    fn scan(&self, root: &Path, file: Option<&Path>, cache: &Nodes, after_step: bool) -> Seen {
        match file {
            Some(file) => one_path(root, file, self.limits.file_cap),
            None => Scan {
                root,
                cap: self.limits.file_cap,
                cache,
                after_step,
            }
            .walk(),
        }
    }

    /// How many new bytes the step may copy: all it needs when they fit
    /// (after evicting old steps), else what `overflow` says.
    fn allowance(&self, needed: u64, seen: &[Seen], overflow: Overflow) -> Result<u64, BeginError> {
        let budget = self.limits.budget;
        if self.usage() + needed > budget {
            self.drop_oldest_until(needed, None);
        }
        let free = budget.saturating_sub(self.usage());
        if needed <= free {
            return Ok(u64::MAX);
        }
        if overflow == Overflow::KeepWhatFits {
            return Ok(free);
        }
        let mut largest: Vec<(String, u64)> = seen
            .iter()
            .flat_map(|s| &s.to_read)
            .map(|f| (f.rel.clone(), f.size))
            .collect();
        largest.sort_by_key(|f| std::cmp::Reverse(f.1));
        largest.truncate(5);
        Err(BeginError::OverBudget(OverBudget {
            needed,
            budget,
            largest,
        }))
    }

    /// Marks as not kept every earlier content a change names whose copy
    /// is gone: another wamcp rewrote the root's record while this step
    /// ran and evicted the copy. The step then says so instead of
    /// promising a restore that would fail.
    fn missing_copies(&self, changes: &mut [Change], not_kept: &mut Vec<String>) {
        for change in changes {
            if let Some(Node::File { size, mode, hash }) = &change.before
                && !self.blobs.has(hash)
            {
                let why = "its copy was evicted while the step ran".to_string();
                not_kept.push(format!("{} ({why})", change.rel));
                change.before = Some(Node::Unkept {
                    size: *size,
                    mode: *mode,
                    stamp: 0,
                    why,
                });
            }
        }
    }

    /// Drops steps past their age, then the oldest while the copies exceed
    /// the budget, never the step just recorded (`keep`).
    fn evict(&self, keep: u64) {
        let now = now_seconds();
        let max_age = self.limits.max_age.as_secs();
        let steps_dir = self.dir.join("steps");
        let mut dropped = false;
        for id in steps::ids(&steps_dir) {
            let old = self
                .step_time(id)
                .is_none_or(|time| now.saturating_sub(time) > max_age);
            if id != keep && old {
                let _ = std::fs::remove_file(steps_dir.join(steps::file_name(id)));
                dropped = true;
            }
        }
        if dropped || self.usage() > self.limits.budget {
            self.collect_garbage();
        }
        self.drop_oldest_until(0, Some(keep));
    }

    /// Drops the oldest steps but `keep` until `needed` more bytes fit in
    /// the budget, or none is left to drop. A step younger than
    /// [`PROTECTED`] is never dropped for room: otherwise a command that
    /// writes enough new bytes would push out the step that could undo
    /// what it just destroyed. The step that does not fit then asks.
    fn drop_oldest_until(&self, needed: u64, keep: Option<u64>) {
        let steps_dir = self.dir.join("steps");
        let now = now_seconds();
        for id in steps::ids(&steps_dir) {
            if self.usage() + needed <= self.limits.budget || Some(id) == keep {
                return;
            }
            // Ids grow with time: the rest are younger still.
            if self
                .step_time(id)
                .is_some_and(|time| now.saturating_sub(time) < PROTECTED.as_secs())
            {
                return;
            }
            let _ = std::fs::remove_file(steps_dir.join(steps::file_name(id)));
            self.collect_garbage();
        }
    }

    /// Removes every copy no step, root record or step in progress names.
    fn collect_garbage(&self) {
        let mut named: HashSet<String> = HashSet::new();
        for step in self.steps() {
            for change in &step.changes {
                for node in [&change.before, &change.after].into_iter().flatten() {
                    if let Node::File { hash, .. } = node {
                        named.insert(hash.clone());
                    }
                }
            }
        }
        for nodes in self.all_roots() {
            named.extend(hashes(&nodes));
        }
        named.extend(self.pending_hashes());
        // Every copy a step in progress in this process relies on, also
        // the unchanged files whose root record another step rewrote.
        let in_flight = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        for before in in_flight.iter().filter_map(Weak::upgrade) {
            for nodes in before.iter() {
                named.extend(hashes(nodes));
            }
        }
        let mut total = 0;
        for stored in self.blobs.all() {
            if named.contains(&stored.hash) {
                total += stored.size;
            } else {
                self.blobs.remove(&stored.hash);
            }
        }
        *self.usage.lock().unwrap_or_else(|p| p.into_inner()) = Some(total);
    }

    fn usage(&self) -> u64 {
        let mut usage = self.usage.lock().unwrap_or_else(|p| p.into_inner());
        *usage.get_or_insert_with(|| self.blobs.all().iter().map(|b| b.size).sum())
    }

    fn add_usage(&self, bytes: u64) {
        let now = self.usage() + bytes;
        *self.usage.lock().unwrap_or_else(|p| p.into_inner()) = Some(now);
    }

    /// Takes the journal's lock, held across processes (two hosts may run
    /// a wamcp each) until the returned file is dropped.
    fn lock(&self) -> Result<std::fs::File, String> {
        let file = std::fs::File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.dir.join("lock"))
            .map_err(|e| format!("the undo journal cannot be locked: {e}"))?;
        file.lock()
            .map_err(|e| format!("the undo journal cannot be locked: {e}"))?;
        Ok(file)
    }

    fn root_file(&self, root: &Path) -> PathBuf {
        let key = blobs::hash_of(root.to_string_lossy().as_bytes());
        self.dir.join("roots").join(format!("{}.json", &key[..16]))
    }

    /// The last record of `root`: from memory while the file on disk is
    /// the one this process last read or wrote, else parsed again.
    fn load_root(&self, root: &Path) -> Nodes {
        self.with_root(root, Nodes::clone)
    }

    /// `look` at the last record of `root` (empty when there is none),
    /// read from disk only when it changed since last read.
    fn with_root<T>(&self, root: &Path, look: impl FnOnce(&Nodes) -> T) -> T {
        let path = self.root_file(root);
        let stamp = file_stamp(&path);
        let mut records = self.records.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((kept, nodes)) = records.get(root)
            && stamp.is_some()
            && *kept == stamp
        {
            return look(nodes);
        }
        let nodes = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice::<RootRecord>(&b).ok())
            .filter(|r| r.root == root)
            .map(|r| r.nodes)
            .unwrap_or_default();
        let answer = look(&nodes);
        records.insert(root.to_path_buf(), (stamp, nodes));
        answer
    }

    /// Writes the record of `root`, unless it is the one on disk already.
    fn save_root(&self, root: &Path, nodes: &Nodes) {
        let path = self.root_file(root);
        let mut records = self.records.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((kept, known)) = records.get(root)
            && kept.is_some()
            && *kept == file_stamp(&path)
            && known == nodes
        {
            return;
        }
        let record = RootRecordRef { root, nodes };
        if let Ok(text) = serde_json::to_vec(&record)
            && wamcp_platform::atomic::write_atomically(
                &self.dir.join("roots"),
                path.file_name().unwrap_or_default(),
                &text,
                wamcp_platform::atomic::Commit::Replace,
            )
            .is_ok()
        {
            records.insert(root.to_path_buf(), (file_stamp(&path), nodes.clone()));
        }
    }

    fn all_roots(&self) -> Vec<Nodes> {
        std::fs::read_dir(self.dir.join("roots"))
            .map(|entries| {
                entries
                    .flatten()
                    .filter_map(|e| std::fs::read(e.path()).ok())
                    .filter_map(|b| serde_json::from_slice::<RootRecord>(&b).ok())
                    .map(|r| r.nodes)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Names the copies a step in progress relies on.
    fn mark_pending(&self, names: Vec<String>) -> Option<PathBuf> {
        if names.is_empty() {
            return None;
        }
        let path = self.dir.join("pending").join(format!(
            "{}-{}.json",
            std::process::id(),
            SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos()
        ));
        let text = serde_json::to_vec(&names).ok()?;
        std::fs::write(&path, text).ok().map(|()| path)
    }

    /// The copies steps in progress rely on; markers older than a day
    /// belong to a wamcp that stopped mid-step and are dropped.
    fn pending_hashes(&self) -> Vec<String> {
        let mut names = Vec::new();
        let Ok(entries) = std::fs::read_dir(self.dir.join("pending")) else {
            return names;
        };
        for entry in entries.flatten() {
            let age = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|m| SystemTime::now().duration_since(m).ok())
                .unwrap_or_default();
            if age > PENDING_SPARED {
                let _ = std::fs::remove_file(entry.path());
                continue;
            }
            if let Some(list) = std::fs::read(entry.path())
                .ok()
                .and_then(|b| serde_json::from_slice::<Vec<String>>(&b).ok())
            {
                names.extend(list);
            }
        }
        names
    }

    /// The next step number: one past every number ever given, kept in a
    /// counter so that a number is never reused after eviction.
    fn next_id(&self) -> u64 {
        let counter = self.dir.join("last-step");
        let last = std::fs::read_to_string(&counter)
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
            .unwrap_or(0)
            .max(
                steps::ids(&self.dir.join("steps"))
                    .last()
                    .copied()
                    .unwrap_or(0),
            );
        let id = last + 1;
        let _ = std::fs::write(&counter, id.to_string());
        id
    }
}

/// Why a file was not copied when the budget ran out.
const OVER_BUDGET: &str = "over the undo budget";

fn hashes(nodes: &Nodes) -> impl Iterator<Item = String> + '_ {
    nodes.values().filter_map(|e| match &e.node {
        Node::File { hash, .. } => Some(hash.clone()),
        _ => None,
    })
}

#[derive(serde::Deserialize)]
struct RootRecord {
    root: PathBuf,
    nodes: Nodes,
}

#[derive(serde::Serialize)]
struct RootRecordRef<'a> {
    root: &'a Path,
    nodes: &'a Nodes,
}

/// A file's size and modification time, to tell whether it was rewritten.
fn file_stamp(path: &Path) -> Option<Stamp> {
    let meta = path.metadata().ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

fn now_seconds() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
