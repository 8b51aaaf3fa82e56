//! Paths as the file system resolves them, and the one "inside" check.
//!
//! Every containment decision outside the write path (is this trust file in
//! a writable root, is this `PATH` entry one the agent can write, does this
//! folder overlap a root) resolves with [`resolve_lenient`] and compares
//! with [`inside`], so no two checks can disagree about the same path.

use std::path::{Path, PathBuf};
use wamcp_policy::workspace::PathStyle;
use wamcp_policy::write_rules::is_within;

/// `path` with symbolic links, junctions and 8.3 names resolved. `dunce`
/// keeps the ordinary `C:\...` spelling on Windows instead of `\\?\C:\...`
/// when, and only when, both mean the same file.
pub fn resolve_existing(path: &Path) -> Option<PathBuf> {
    dunce::canonicalize(path).ok()
}

/// `path` resolved through its longest existing ancestor (what does not
/// exist yet may be created later, through a linked parent), or `None`
/// when resolution fails for any reason but absence: a path the resolver
/// gives up on (too long, a loop) may still lead anywhere.
pub fn resolve_lenient(path: &Path) -> Option<PathBuf> {
    let mut missing = Vec::new();
    let mut at = path;
    loop {
        match dunce::canonicalize(at) {
            Ok(resolved) => return Some(missing.iter().rev().fold(resolved, |p, n| p.join(n))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                missing.push(at.file_name()?.to_os_string());
                at = at.parent()?;
            }
            Err(_) => return None,
        }
    }
}

/// `path` as its nearest ancestor that resolves places it, whatever
/// stopped the deeper ones (absence, a loop, a name too long, a file where
/// a folder should be): for naming places (roots, caches, the folders
/// wamcp keeps) in the form the checks compare. Whether a trust file may
/// be read is decided by [`holding`], which refuses what this would guess.
pub fn resolved(path: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut at = path;
    loop {
        if let Some(found) = resolve_existing(at) {
            return missing.iter().rev().fold(found, |p, name| p.join(name));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name.to_os_string());
                at = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Whether `path` is `root` or below it, component by component (without
/// case on Windows). Both are taken as given: resolve them first.
pub fn inside(path: &Path, root: &Path) -> bool {
    is_within(
        &path.display().to_string(),
        &root.display().to_string(),
        PathStyle::native(),
    )
}

/// Why a file wamcp trusts (its config, rules, catalog, grants) may not be
/// read: a command could rewrite it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Held<'a> {
    /// It lies inside this place commands write.
    In(&'a PathBuf),
    /// No resolver can place it (a link loop, a name too long, `..` past a
    /// missing folder), so it may lie anywhere, a writable place included:
    /// a command can build such a path in the project while the kernel
    /// still opens the file through it.
    Unplaceable,
}

impl std::fmt::Display for Held<'_> {
    /// The clause after "the file is".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Held::In(place) => write!(f, "inside {}, where commands can write", place.display()),
            Held::Unplaceable => f.write_str(
                "at a path that cannot be resolved (a link loop, a name too long, or `..` past a missing \
                 folder), which may be where commands can write",
            ),
        }
    }
}

/// Whether the trust file `path`, resolved now, lies where a command could
/// rewrite it: inside one of `places` (resolved), or where it cannot be
/// placed at all. Resolved strictly ([`resolve_lenient`]): climbing past
/// a failure to the nearest resolvable folder would judge a path the agent
/// made unresolvable by its spelling, and trust it.
pub fn holding<'a>(path: &Path, places: &'a [PathBuf]) -> Option<Held<'a>> {
    let Some(path) = resolve_lenient(path) else {
        return Some(Held::Unplaceable);
    };
    places
        .iter()
        .find(|place| inside(&path, place))
        .map(Held::In)
}

/// The first of `places` (resolved) that holds `path` or lies inside it.
pub fn overlapping(path: &Path, places: impl IntoIterator<Item = PathBuf>) -> Option<PathBuf> {
    let path = resolved(path);
    places
        .into_iter()
        .find(|place| inside(&path, place) || inside(place, &path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tail_is_kept_on_its_resolved_ancestor() {
        let tmp = tempfile::tempdir().unwrap();
        let base = resolve_existing(tmp.path()).unwrap();
        let asked = tmp.path().join("not").join("yet");
        assert_eq!(resolve_lenient(&asked), Some(base.join("not").join("yet")));
        assert_eq!(resolved(&asked), base.join("not").join("yet"));
    }

    #[cfg(unix)]
    #[test]
    fn a_trust_file_that_cannot_be_resolved_is_not_trusted() {
        let tmp = tempfile::tempdir().unwrap();
        let base = resolve_existing(tmp.path()).unwrap();
        let root = base.join("root");
        std::fs::create_dir_all(&root).unwrap();
        std::os::unix::fs::symlink(&root, base.join("alias")).unwrap();
        // A loop under the alias: the whole name fails with ELOOP.
        std::os::unix::fs::symlink("loop", root.join("loop")).unwrap();
        let file = base.join("alias").join("loop").join("config.json");
        assert_eq!(resolve_lenient(&file), None);
        let places = std::slice::from_ref(&root);
        assert_eq!(holding(&file, places), Some(Held::Unplaceable));
        // A name too long to resolve, and `..` past a folder that is not
        // there: both spellings a command can make the config's take.
        let long = base.join("a".repeat(300)).join("config.json");
        assert_eq!(holding(&long, places), Some(Held::Unplaceable));
        let past = base.join("missing").join("..").join("config.json");
        assert_eq!(holding(&past, places), Some(Held::Unplaceable));
        // An ordinary file outside, existing or not, is trusted.
        assert_eq!(holding(&base.join("config.json"), places), None);
        assert_eq!(
            holding(&base.join("alias").join("..").join("c.json"), places),
            None
        );
    }

    #[test]
    fn places_are_found_holding_a_path_or_inside_it() {
        let tmp = tempfile::tempdir().unwrap();
        let base = resolve_existing(tmp.path()).unwrap();
        let (root, other) = (base.join("root"), base.join("other"));
        let places = vec![root.clone()];
        assert_eq!(holding(&root.join("a/b"), &places), Some(Held::In(&root)));
        assert_eq!(holding(&base, &places), None);
        assert_eq!(holding(&other, &places), None);
        assert_eq!(overlapping(&base, places.clone()), Some(root.clone()));
        assert_eq!(
            overlapping(&root.join("x"), places.clone()),
            Some(root.clone())
        );
        assert_eq!(overlapping(&other, places), None);
        // A sibling whose name starts with the root's is not inside it.
        assert!(!inside(&base.join("rootless"), &root));
    }
}
