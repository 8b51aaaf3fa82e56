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
/// a folder should be), for comparing a file wamcp itself names (its
/// config, rules, catalog, grants) with the places commands write. A
/// name that no longer resolves as a whole must still be judged where its
/// resolvable part leads: compared as written, a trust file behind a link
/// into a root would look outside it.
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

/// The first of `places` (resolved) that holds `path`, resolved now.
pub fn holding<'a>(path: &Path, places: &'a [PathBuf]) -> Option<&'a PathBuf> {
    let path = resolved(path);
    places.iter().find(|place| inside(&path, place))
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
    fn a_name_that_stops_resolving_is_judged_where_its_ancestor_leads() {
        let tmp = tempfile::tempdir().unwrap();
        let base = resolve_existing(tmp.path()).unwrap();
        let root = base.join("root");
        std::fs::create_dir_all(&root).unwrap();
        std::os::unix::fs::symlink(&root, base.join("alias")).unwrap();
        // A loop under the alias: the whole name fails with ELOOP.
        std::os::unix::fs::symlink("loop", root.join("loop")).unwrap();
        let file = base.join("alias").join("loop").join("config.json");
        assert_eq!(resolve_lenient(&file), None);
        assert_eq!(holding(&file, std::slice::from_ref(&root)), Some(&root));
    }

    #[test]
    fn places_are_found_holding_a_path_or_inside_it() {
        let tmp = tempfile::tempdir().unwrap();
        let base = resolve_existing(tmp.path()).unwrap();
        let (root, other) = (base.join("root"), base.join("other"));
        let places = vec![root.clone()];
        assert_eq!(holding(&root.join("a/b"), &places), Some(&root));
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
