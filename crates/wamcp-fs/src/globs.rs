//! File-name patterns as the tools accept them: comma-separated globs where
//! `*` also spans directory separators.
//!
//! A glob without a slash matches the file name (`*.cpp`); one with a slash
//! matches the path relative to the searched root, anchored at the start, and
//! `*` crosses directories, so `src/*.cpp` also finds `src/vk/device.cpp`: a
//! slash anchors the prefix, it does not limit depth. Matching ignores case
//! on every platform, as people type `*.CPP` and mean the same files.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use wamcp_policy::error::{ErrorType, ToolError};

pub struct NameGlobs {
    by_name: GlobSet,
    by_path: GlobSet,
}

impl NameGlobs {
    /// Parses `raw`; `Ok(None)` when it holds no pattern at all.
    pub fn parse(raw: &str) -> Result<Option<NameGlobs>, ToolError> {
        let mut by_name = GlobSetBuilder::new();
        let mut by_path = GlobSetBuilder::new();
        let mut any = false;
        for part in split_list(raw)
            .into_iter()
            .map(str::trim)
            .filter(|p| !p.is_empty())
        {
            // Windows users write `src\*.cpp`; match on `/` like the results print.
            let pattern = part.replace('\\', "/");
            let pattern = pattern.trim_start_matches("./");
            let glob = GlobBuilder::new(pattern)
                .literal_separator(false)
                .case_insensitive(true)
                .backslash_escape(false)
                .build()
                .map_err(|e| {
                    ToolError::new(
                        ErrorType::InvalidPattern,
                        format!("The glob '{part}' is invalid: {e}."),
                    )
                    .recover("Use globs like *.cpp or src/*.h, separated by commas.")
                })?;
            if pattern.contains('/') {
                by_path.add(glob);
            } else {
                by_name.add(glob);
            }
            any = true;
        }
        if !any {
            return Ok(None);
        }
        let build = |set: GlobSetBuilder| {
            set.build().map_err(|e| {
                ToolError::new(
                    ErrorType::InvalidPattern,
                    format!("The globs '{raw}' are invalid: {e}."),
                )
            })
        };
        Ok(Some(NameGlobs {
            by_name: build(by_name)?,
            by_path: build(by_path)?,
        }))
    }

    /// Whether a file at `relative` (with `/` separators) named `name` matches.
    pub fn matches(&self, relative: &str, name: &str) -> bool {
        self.by_name.is_match(name) || self.by_path.is_match(relative)
    }

    /// [`NameGlobs::matches`] for a walk's entry, whose relative path is
    /// spelled out only when a glob with a slash needs it: a find over
    /// 300,000 files may keep a few, and each spelling is an allocation.
    pub fn matches_entry(&self, relative: &dyn Fn() -> String, name: &str) -> bool {
        self.by_name.is_match(name)
            || (!self.by_path.is_empty() && self.by_path.is_match(relative()))
    }
}

/// Splits on commas, except inside `{...}`, so `*.{cpp,h}` stays one glob.
fn split_list(raw: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in raw.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&raw[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&raw[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn globs(raw: &str) -> NameGlobs {
        NameGlobs::parse(raw).unwrap().unwrap()
    }

    #[test]
    fn matching_table() {
        let cases: &[(&str, &str, bool)] = &[
            ("*.cpp", "src/a.cpp", true),
            ("*.cpp", "a.cpp", true),
            ("*.cpp", "a.cppx", false),
            ("*.CPP", "src/A.cpp", true),
            ("*.vert,*.frag", "shaders/x.frag", true),
            (" *.vert , *.frag ", "x.vert", true),
            ("*.vert,*.frag", "x.comp", false),
            ("src/*.cpp", "src/renderer/vk/device.cpp", true),
            ("src/*.cpp", "lib/src/a.cpp", false),
            (r"src\*.cpp", "src/x/a.cpp", true),
            ("./src/*.h", "src/a.h", true),
            ("foo*", "foodir/bar.txt", false),
            ("foo*", "x/foo.txt", true),
            ("**/*.rs", "a/b/c.rs", true),
            ("Makefile", "sub/makefile", true),
            ("a?c.txt", "abc.txt", true),
            ("[ab].txt", "b.txt", true),
            ("*.{cpp,h},*.rs", "x/y.h", true),
            ("*.{cpp,h},*.rs", "y.rs", true),
            ("*.{cpp,h},*.rs", "y.hpp", false),
        ];
        for (raw, rel, want) in cases {
            let name = rel.rsplit('/').next().unwrap();
            assert_eq!(globs(raw).matches(rel, name), *want, "{raw} vs {rel}");
        }
    }

    #[test]
    fn blank_lists_select_everything_and_bad_globs_are_typed_errors() {
        assert!(NameGlobs::parse("").unwrap().is_none());
        assert!(NameGlobs::parse(" , ,").unwrap().is_none());
        let err = NameGlobs::parse("*.cpp,[z-a]").err().unwrap();
        assert_eq!(err.kind, ErrorType::InvalidPattern);
        assert!(err.message.contains("'[z-a]'"), "{}", err.message);
        assert!(NameGlobs::parse("{a,b").is_err());
        // `***` is accepted by globset and behaves like `*`.
        assert!(globs("***").matches("a/b.txt", "b.txt"));
    }
}
