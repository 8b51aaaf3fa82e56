//! The record of one step: what each changed path was before and after,
//! and how a person reads it.

use super::tree::{Node, Nodes, absolute};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// One recorded step.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Step {
    /// Its number, growing with every step.
    pub id: u64,
    /// When it was recorded, in seconds since 1970.
    pub time: u64,
    /// The tool that made it (`write_file`, `run_powershell`, `undo`...).
    pub tool: String,
    /// The command or path, as the tool was given it.
    pub what: String,
    /// The roots it was recorded in.
    pub roots: Vec<PathBuf>,
    /// Every path that changed.
    pub changes: Vec<Change>,
    /// Files the step could change but the journal did not keep.
    #[serde(default)]
    pub not_kept: Vec<String>,
}

/// One path's change.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Change {
    /// Which of the step's roots it is under.
    pub root: usize,
    /// Its path below the root, `/`-separated.
    pub rel: String,
    /// What was there before the step (`None`: nothing).
    pub before: Option<Node>,
    /// What was there after it.
    pub after: Option<Node>,
}

impl Step {
    /// Whether every change names one of the step's roots and a plain
    /// path below it: a step file is the journal's own, but one that was
    /// damaged or forged must not lead a restore anywhere else.
    pub(super) fn is_sound(&self) -> bool {
        self.changes.iter().all(|change| {
            change.root < self.roots.len()
                && change.rel.split('/').all(|part| {
                    Path::new(part).components().count() == 1
                        && matches!(
                            Path::new(part).components().next(),
                            Some(std::path::Component::Normal(_))
                        )
                })
        })
    }

    /// The absolute path of `change`.
    pub fn path_of(&self, change: &Change) -> PathBuf {
        absolute(&self.roots[change.root], &change.rel)
    }

    /// The step in a few words: what changed in the work tree, and in git.
    pub fn summary(&self) -> String {
        let mut counts = [0usize; 3];
        let mut git = GitMoves::default();
        for change in &self.changes {
            if let Some(inside) = git_inside(&change.rel) {
                git.note(inside);
                continue;
            }
            if change
                .before
                .as_ref()
                .or(change.after.as_ref())
                .is_some_and(Node::is_file)
            {
                let slot = match (&change.before, &change.after) {
                    (None, _) => 0,
                    (_, None) => 2,
                    _ => 1,
                };
                counts[slot] += 1;
            }
        }
        let mut parts: Vec<String> = ["added", "changed", "removed"]
            .iter()
            .zip(counts)
            .filter(|(_, n)| *n > 0)
            .map(|(word, n)| format!("{n} {} {word}", plural(n, "file")))
            .collect();
        parts.extend(git.describe());
        if parts.is_empty() {
            parts.push("folders only".to_string());
        }
        parts.join(", ")
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}

/// The part of `rel` inside a `.git` folder, if it is in one.
fn git_inside(rel: &str) -> Option<&str> {
    if let Some(rest) = rel.strip_prefix(".git/") {
        return Some(rest);
    }
    rel.find("/.git/").map(|at| &rel[at + 6..])
}

/// What a step did to git's branches, tags and stash, as its files show.
#[derive(Default)]
struct GitMoves {
    branches: BTreeSet<String>,
    tags: BTreeSet<String>,
    stash: bool,
    packed: bool,
    other: BTreeSet<String>,
}

impl GitMoves {
    fn note(&mut self, inside: &str) {
        if let Some(branch) = inside.strip_prefix("refs/heads/") {
            self.branches.insert(branch.to_string());
        } else if let Some(tag) = inside.strip_prefix("refs/tags/") {
            self.tags.insert(tag.to_string());
        } else if inside == "refs/stash" || inside == "logs/refs/stash" {
            self.stash = true;
        } else if inside == "packed-refs" {
            self.packed = true;
        } else if !inside.starts_with("logs/") {
            let top = inside.split('/').next().unwrap_or(inside);
            self.other.insert(top.to_string());
        }
    }

    fn describe(&self) -> Vec<String> {
        let mut parts = Vec::new();
        if !self.branches.is_empty() {
            let names: Vec<_> = self.branches.iter().map(String::as_str).collect();
            parts.push(format!(
                "{} {}",
                plural(names.len(), "branch").replace("branchs", "branches"),
                names.join(", ")
            ));
        }
        if !self.tags.is_empty() {
            let names: Vec<_> = self.tags.iter().map(String::as_str).collect();
            parts.push(format!(
                "{} {}",
                plural(names.len(), "tag"),
                names.join(", ")
            ));
        }
        if self.stash {
            parts.push("the stash".to_string());
        }
        if self.packed {
            parts.push("packed refs".to_string());
        }
        if parts.is_empty() && !self.other.is_empty() {
            let names: Vec<_> = self.other.iter().take(3).map(String::as_str).collect();
            parts.push(names.join(", "));
        }
        if parts.is_empty() {
            return parts;
        }
        vec![format!("git: {}", parts.join(", "))]
    }
}

/// The changes between two records of the same root.
pub(super) fn diff(root: usize, before: &Nodes, after: &Nodes) -> Vec<Change> {
    let mut changes = Vec::new();
    let keys: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    for rel in keys {
        let (b, a) = (before.get(rel), after.get(rel));
        let same = match (b, a) {
            (Some(b), Some(a)) => b.node.same(&a.node),
            (None, None) => true,
            _ => false,
        };
        if !same {
            changes.push(Change {
                root,
                rel: rel.clone(),
                before: b.map(|e| e.node.clone()),
                after: a.map(|e| e.node.clone()),
            });
        }
    }
    changes
}

/// The file name of step `id`.
pub(super) fn file_name(id: u64) -> String {
    format!("{id:010}.json")
}

/// The step number in a step file's name.
pub(super) fn id_of(name: &str) -> Option<u64> {
    name.strip_suffix(".json")?.parse().ok()
}

/// Every step number in `dir`, oldest first.
pub(super) fn ids(dir: &Path) -> Vec<u64> {
    let mut ids: Vec<u64> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.file_name().to_str().and_then(id_of))
                .collect()
        })
        .unwrap_or_default();
    ids.sort_unstable();
    ids
}
