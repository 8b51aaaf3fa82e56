//! What the undo journal keeps, and how much of it.
//!
//! The journal copies the files a step could change so that `undo` can put
//! them back byte for byte. Folders a build or a package manager makes again
//! are not worth a copy: losing one loses no work (`rm -rf node_modules`
//! asks nothing for the same reason), and they would dwarf the source.

use crate::limits::MIB;

/// Folders a build or a package manager makes again, lower-case. The
/// journal leaves them out; deleting one is no loss of work.
pub const REGENERATED: &[&str] = &[
    "node_modules",
    "target",
    "build",
    "builds",
    "dist",
    "out",
    "bin",
    "obj",
    ".venv",
    "venv",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".tox",
    ".next",
    ".nuxt",
    ".turbo",
    ".parcel-cache",
    ".gradle",
    ".cache",
    "coverage",
    "cmakefiles",
    "cmake-build-debug",
    "cmake-build-release",
];

/// Whether a folder named `name` is one a build makes again.
pub fn is_regenerated(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    REGENERATED.contains(&lower.as_str()) || lower.ends_with(".egg-info")
}

/// Names a build uses that a project may also use for its own files
/// (`src/bin` of a Rust crate, a `build/` of scripts, `out/` of data).
/// Outside a git repository, whose ignore rules would tell, the journal
/// leaves a folder of such a name out only at the top of a root.
pub const MAY_HOLD_SOURCES: &[&str] = &[
    "bin", "build", "builds", "dist", "out", "obj", "target", "coverage",
];

/// Whether a folder named `name` may hold a project's own files although
/// builds use the name.
pub fn may_hold_sources(name: &str) -> bool {
    MAY_HOLD_SOURCES.contains(&name.to_ascii_lowercase().as_str())
}

/// The journal's default size, in MiB: room for a copy of a large project
/// and its history of steps.
pub const DEFAULT_BUDGET_MIB: u64 = 2048;

/// How many days a step is kept by default.
pub const DEFAULT_DAYS: u64 = 14;

/// The largest file the journal copies. A bigger one (a database, a
/// video, a large pack) is listed as not kept.
pub const FILE_CAP_BYTES: u64 = 64 * MIB;

/// How many steps `undo` lists without arguments.
pub const LISTED_STEPS: usize = 15;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regenerated_folders_match_in_any_case_and_only_whole() {
        for name in ["node_modules", "Target", "BUILD", ".venv", "wamcp.egg-info"] {
            assert!(is_regenerated(name), "{name}");
        }
        for name in ["src", "builder", "bins", ".git", "docs", "output", ""] {
            assert!(!is_regenerated(name), "{name}");
        }
        for name in MAY_HOLD_SOURCES {
            assert!(is_regenerated(name) && may_hold_sources(name), "{name}");
        }
        for name in ["node_modules", ".venv", "__pycache__"] {
            assert!(!may_hold_sources(name), "{name}");
        }
    }
}
