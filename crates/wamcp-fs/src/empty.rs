//! `list_empty_dirs`: directories that hold nothing but other empty
//! directories, deepest first so they can be removed in order.

use crate::budget::{Bounds, Budget};
use crate::paths::{input_path, io_error, relative, require_directory};
use crate::secrets::{Secrets, refuse_secret};
use crate::walk::io_reason;
use std::fmt::Write;
use std::fs::ReadDir;
use std::path::{Path, PathBuf};
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::limits::MAX_EMPTY_DIR_RESULTS;
use wamcp_policy::skip::is_skipped_directory;

/// Reports the empty directories below `path_arg`, and the root itself (as
/// `.`, last) when the whole tree is empty: deleting the list in order then
/// leaves nothing behind.
///
/// A directory is empty when it holds no files, no links and no skipped
/// directory (`.git`, `build`, ...: those are never descended into, so they
/// count as content), and every subdirectory is itself empty. A directory that
/// cannot be read is never called empty.
/// A tree too big to walk within `budget` is reported from what was walked:
/// a directory not fully explored is never called empty.
/// Secret stores are never entered: they count as content.
pub fn list_empty_dirs(path_arg: &str, cwd: &Path, bounds: &Bounds) -> Result<String, ToolError> {
    let root = input_path(path_arg, cwd)?;
    require_directory(path_arg, &root, ErrorType::DirectoryWalkFailed)?;
    refuse_secret(bounds.secrets, path_arg, &root, "it is not walked")?;
    let budget = bounds.budget;
    // Below the root an unreadable folder is reported and counted as
    // content; the root itself unreadable leaves nothing to report.
    let mut tree = walk_tree(&root, bounds)
        .map_err(|e| io_error(path_arg, &root, &e, ErrorType::DirectoryWalkFailed))?;
    settle_content(&mut tree.nodes);
    let empty = empty_deepest_first(&tree.nodes, &root);
    Ok(render_empty(&root, &empty, &tree, budget))
}

/// A directory met on the walk.
struct Node {
    path: PathBuf,
    /// 0 for the root.
    depth: usize,
    /// The index of its parent in the walk's nodes; `None` for the root.
    parent: Option<usize>,
    /// It holds something other than empty directories, or may.
    has_content: bool,
}

/// What the walk below the root found.
struct Tree {
    /// Every directory reached, each after its parent.
    nodes: Vec<Node>,
    /// Directories that could not be read, as `path (reason)`.
    unreadable: Vec<String>,
    /// The budget ran out before every directory was read.
    out_of_time: bool,
}

/// Walks the directories below `root` within `budget`, marking each that
/// holds content of its own; a directory it could not read, or did not
/// reach, is marked as holding content. Fails only when the root itself
/// cannot be read.
fn walk_tree(root: &Path, bounds: &Bounds) -> std::io::Result<Tree> {
    // Depth-first with an explicit stack: deep trees must not overflow a thread's stack.
    let mut tree = Tree {
        nodes: vec![Node {
            path: root.to_path_buf(),
            depth: 0,
            parent: None,
            has_content: false,
        }],
        unreadable: Vec::new(),
        out_of_time: false,
    };
    let mut stack = vec![0usize];
    while let Some(index) = stack.pop() {
        if bounds.budget.exhausted(0) {
            // Unexplored: they, and so their ancestors, may hold files.
            tree.out_of_time = true;
            tree.nodes[index].has_content = true;
            for pending in stack.drain(..) {
                tree.nodes[pending].has_content = true;
            }
            break;
        }
        let path = tree.nodes[index].path.clone();
        let entries = match std::fs::read_dir(&path) {
            Ok(entries) => entries,
            Err(e) if index == 0 => return Err(e),
            Err(e) => {
                let reason = format!("{} ({})", relative(&path, root), io_reason(&e));
                tree.unreadable.push(reason);
                tree.nodes[index].has_content = true;
                continue;
            }
        };
        read_children(&mut tree.nodes, index, entries, &mut stack, bounds.secrets);
    }
    Ok(tree)
}

/// Adds the subdirectories of the directory `nodes[index]` to the walk
/// (`nodes` and `stack`); anything else in it (a file, a link, a skipped
/// directory, an entry that cannot be read) marks it as holding content.
fn read_children(
    nodes: &mut Vec<Node>,
    index: usize,
    entries: ReadDir,
    stack: &mut Vec<usize>,
    secrets: &Secrets,
) {
    for entry in entries {
        let Ok(entry) = entry else {
            nodes[index].has_content = true;
            continue;
        };
        let is_real_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if !is_real_dir
            || entry.file_name().to_str().is_none_or(is_skipped_directory)
            || secrets.hides(&entry.file_name(), || entry.path()).is_some()
        {
            nodes[index].has_content = true;
            continue;
        }
        let child = nodes.len();
        let depth = nodes[index].depth + 1;
        nodes.push(Node {
            path: entry.path(),
            depth,
            parent: Some(index),
            has_content: false,
        });
        stack.push(child);
    }
}

/// Marks every ancestor of a directory with content as having content.
fn settle_content(nodes: &mut [Node]) {
    // Children always come after their parent, so walking backwards settles
    // every child before its parent: a non-empty child makes its parent non-empty.
    for index in (1..nodes.len()).rev() {
        if nodes[index].has_content
            && let Some(parent) = nodes[index].parent
        {
            nodes[parent].has_content = true;
        }
    }
}

/// The empty directories as `(depth, path relative to root)`, the root as
/// `.`: deepest first, then by name case-insensitively, so deleting them in
/// order never meets a directory that still holds one.
fn empty_deepest_first(nodes: &[Node], root: &Path) -> Vec<(usize, String)> {
    let mut empty: Vec<(usize, String)> = nodes
        .iter()
        .filter(|n| !n.has_content)
        .map(|n| match n.depth {
            0 => (0, ".".to_string()),
            depth => (depth, relative(&n.path, root)),
        })
        .collect();
    empty.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then_with(|| a.1.to_lowercase().cmp(&b.1.to_lowercase()))
            .then_with(|| a.1.cmp(&b.1))
    });
    empty
}

/// The answer: at most `MAX_EMPTY_DIR_RESULTS` of `empty`, a count, and
/// what the walk could not cover.
fn render_empty(
    root: &Path,
    empty: &[(usize, String)],
    tree: &Tree,
    budget: &dyn Budget,
) -> String {
    let mut out = String::new();
    if empty.is_empty() {
        let _ = writeln!(out, "no empty directories found under {}", root.display());
    } else {
        let _ = writeln!(
            out,
            "EMPTY DIRECTORIES under {} (deepest first):",
            root.display()
        );
        for (_, rel) in empty.iter().take(MAX_EMPTY_DIR_RESULTS) {
            out.push_str(rel);
            out.push('\n');
        }
        write_empty_count(&mut out, empty.len());
    }
    if tree.out_of_time {
        let walked = tree.nodes.len();
        let _ = writeln!(
            out,
            "[INCOMPLETE: the time budget of {} ran out after {} director{}; directories not fully explored \
             are not listed as empty. Pass a subdirectory as path to finish the rest.]",
            budget.describe(),
            walked,
            if walked == 1 { "y" } else { "ies" }
        );
    }
    crate::find::append_unreadable(&mut out, &tree.unreadable);
    out
}

/// The line after a non-empty list: how many there are, and whether the
/// list was cut.
fn write_empty_count(out: &mut String, found: usize) {
    if found > MAX_EMPTY_DIR_RESULTS {
        let _ = writeln!(
            out,
            "Showing {MAX_EMPTY_DIR_RESULTS} of {} empty directories. The list is INCOMPLETE; pass a \
             subdirectory as path to see the rest.",
            found
        );
    } else {
        let _ = writeln!(
            out,
            "{} empty director{}",
            found,
            if found == 1 { "y" } else { "ies" }
        );
    }
}
