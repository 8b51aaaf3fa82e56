//! Directories the walking tools never descend into.
//!
//! On a C++ or game tree the build output dwarfs the source: pruning these
//! names before descending is what keeps a search fast and its output about
//! code. They are pruned at any depth, case-insensitively (Windows spells
//! `Debug` and `debug` interchangeably). To look inside one, name a file in it
//! directly, or point the tool's `path` at the directory itself.

/// The names pruned, lower-case: version control,
/// editors, build output, dependencies, caches.
pub const SKIPPED_DIRECTORY_NAMES: &[&str] = &[
    ".git",
    ".svn",
    ".hg",
    ".vs",
    ".vscode",
    ".idea",
    ".venv",
    "venv",
    "__pycache__",
    "node_modules",
    "build",
    "builds",
    "out",
    "bin",
    "obj",
    "binaries",
    "intermediate",
    "deriveddatacache",
    "cmakefiles",
    "x64",
    "x86",
    "debug",
    "release",
    "relwithdebinfo",
    "minsizerel",
    "packages",
    "target",
    "dist",
    ".cache",
];

/// Whether a directory with this name is pruned.
pub fn is_skipped_directory(name: &str) -> bool {
    SKIPPED_DIRECTORY_NAMES
        .iter()
        .any(|skip| skip.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_in_any_case_and_only_whole() {
        for name in [
            ".git",
            "Debug",
            "RELEASE",
            "node_modules",
            "CMakeFiles",
            "x64",
            "Target",
        ] {
            assert!(is_skipped_directory(name), "{name}");
        }
        for name in [
            "src",
            "builder",
            "debugger",
            "bins",
            "output",
            ".github",
            "git",
            "x64-tools",
            "",
        ] {
            assert!(!is_skipped_directory(name), "{name}");
        }
    }

    #[test]
    fn the_list_is_lower_case_so_comparison_is_uniform() {
        for name in SKIPPED_DIRECTORY_NAMES {
            assert_eq!(*name, name.to_ascii_lowercase());
        }
    }
}
