//! `list_empty_dirs`: directories that hold nothing but other empty
//! directories, deepest first so they can be removed in order.

use crate::budget::Budget;
use crate::paths::{input_path, relative, require_directory};
use crate::walk::io_reason;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use wamcp_policy::error::ToolError;
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
pub fn list_empty_dirs(
    path_arg: &str,
    cwd: &Path,
    budget: &dyn Budget,
) -> Result<String, ToolError> {
    let root = input_path(path_arg, cwd)?;
    require_directory(path_arg, &root)?;

    // Depth-first with an explicit stack: deep trees must not overflow a thread's stack.
    struct Node {
        path: PathBuf,
        depth: usize,
        parent: Option<usize>,
        has_content: bool,
    }
    let mut nodes = vec![Node {
        path: root.clone(),
        depth: 0,
        parent: None,
        has_content: false,
    }];
    let mut stack = vec![0usize];
    let mut unreadable = Vec::new();
    let mut out_of_time = false;
    while let Some(index) = stack.pop() {
        if budget.exhausted(0) {
            // Unexplored: they, and so their ancestors, may hold files.
            out_of_time = true;
            nodes[index].has_content = true;
            for pending in stack.drain(..) {
                nodes[pending].has_content = true;
            }
            break;
        }
        let path = nodes[index].path.clone();
        let entries = match std::fs::read_dir(&path) {
            Ok(entries) => entries,
            Err(e) => {
                unreadable.push(format!("{} ({})", relative(&path, &root), io_reason(&e)));
                nodes[index].has_content = true;
                continue;
            }
        };
        for entry in entries {
            let Ok(entry) = entry else {
                nodes[index].has_content = true;
                continue;
            };
            let is_real_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if !is_real_dir || entry.file_name().to_str().is_none_or(is_skipped_directory) {
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
    // Children always come after their parent, so walking backwards settles
    // every child before its parent: a non-empty child makes its parent non-empty.
    for index in (1..nodes.len()).rev() {
        if nodes[index].has_content
            && let Some(parent) = nodes[index].parent
        {
            nodes[parent].has_content = true;
        }
    }
    let mut empty: Vec<(usize, String)> = nodes
        .iter()
        .filter(|n| !n.has_content)
        .map(|n| match n.depth {
            0 => (0, ".".to_string()),
            depth => (depth, relative(&n.path, &root)),
        })
        .collect();
    empty.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then_with(|| a.1.to_lowercase().cmp(&b.1.to_lowercase()))
            .then_with(|| a.1.cmp(&b.1))
    });

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
        if empty.len() > MAX_EMPTY_DIR_RESULTS {
            let _ = writeln!(
                out,
                "Showing {MAX_EMPTY_DIR_RESULTS} of {} empty directories. The list is INCOMPLETE; pass a \
                 subdirectory as path to see the rest.",
                empty.len()
            );
        } else {
            let _ = writeln!(
                out,
                "{} empty director{}",
                empty.len(),
                if empty.len() == 1 { "y" } else { "ies" }
            );
        }
    }
    if out_of_time {
        let _ = writeln!(
            out,
            "[INCOMPLETE: the time budget of {} ran out after {} director{}; directories not fully explored \
             are not listed as empty. Pass a subdirectory as path to finish the rest.]",
            budget.describe(),
            nodes.len(),
            if nodes.len() == 1 { "y" } else { "ies" }
        );
    }
    crate::find::append_unreadable(&mut out, &unreadable);
    Ok(out)
}
