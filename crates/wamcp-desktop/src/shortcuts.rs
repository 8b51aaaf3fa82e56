//! Finding a Start-menu shortcut by its title: the file name a person
//! sees in the Start menu, without `.lnk`, anywhere under the Start menu's
//! program folders. Plain file-system work, tested on every platform.

use std::path::{Path, PathBuf};

/// How deep under a root the search goes, and how many entries it reads
/// in all: Start menus are shallow, and a search must end.
const MAX_DEPTH: usize = 4;
const MAX_ENTRIES: usize = 5_000;

/// The first shortcut titled `title` (without case) under `roots`, in
/// order: each root breadth first, entries sorted by name. Links and
/// junctions are not followed.
pub fn find_in(roots: &[PathBuf], title: &str) -> Option<PathBuf> {
    let wanted = format!("{}.lnk", title.trim()).to_lowercase();
    let mut read = 0;
    for root in roots {
        let mut level = vec![root.clone()];
        for _ in 0..=MAX_DEPTH {
            let mut next = Vec::new();
            for folder in level {
                let mut entries = entries(&folder);
                read += entries.len();
                if read > MAX_ENTRIES {
                    return None;
                }
                entries.sort();
                for (name, path, is_dir) in entries {
                    if is_dir {
                        next.push(path);
                    } else if name.to_lowercase() == wanted {
                        return Some(path);
                    }
                }
            }
            level = next;
        }
    }
    None
}

/// A folder's entries: name, path, and whether it is a real folder (not
/// a link to one). Unreadable folders have none.
fn entries(folder: &Path) -> Vec<(String, PathBuf, bool)> {
    let Ok(listing) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    listing
        .flatten()
        .filter_map(|entry| {
            let kind = entry.file_type().ok()?;
            let name = entry.file_name().to_string_lossy().into_owned();
            (kind.is_dir() || kind.is_file()).then(|| (name, entry.path(), kind.is_dir()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, b"").unwrap();
    }

    #[test]
    fn a_shortcut_is_found_by_its_title_in_the_first_root_that_has_it() {
        let all = tempfile::tempdir().unwrap();
        let mine = tempfile::tempdir().unwrap();
        touch(&all.path().join("Accessories/Notepad.lnk"));
        touch(&mine.path().join("Notepad.lnk"));
        touch(&mine.path().join("Tools/Visual Studio Code.LNK"));
        let roots = [all.path().to_path_buf(), mine.path().to_path_buf()];
        assert_eq!(
            find_in(&roots, "notepad"),
            Some(all.path().join("Accessories/Notepad.lnk"))
        );
        assert_eq!(
            find_in(&roots, " Visual Studio Code "),
            Some(mine.path().join("Tools/Visual Studio Code.LNK"))
        );
        for absent in ["Note", "Notepad.lnk", "Tools", ""] {
            assert_eq!(find_in(&roots, absent), None, "{absent}");
        }
    }

    #[test]
    fn the_search_stays_shallow_and_bounded() {
        let root = tempfile::tempdir().unwrap();
        touch(&root.path().join("1/2/3/4/5/Deep.lnk"));
        touch(&root.path().join("1/2/3/4/Shallow.lnk"));
        let roots = [root.path().to_path_buf()];
        assert_eq!(find_in(&roots, "Deep"), None);
        assert!(find_in(&roots, "Shallow").is_some());
        // Folders of 500: Wine rescans a folder for every file made in it.
        let crowded = tempfile::tempdir().unwrap();
        for i in 0..MAX_ENTRIES + 1 {
            touch(&crowded.path().join(format!("{:02}/{i:05}.lnk", i / 500)));
        }
        touch(&crowded.path().join("z/Late.lnk"));
        assert_eq!(find_in(&[crowded.path().to_path_buf()], "Late"), None);
    }

    #[cfg(unix)]
    #[test]
    fn links_to_folders_are_not_followed() {
        let root = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        touch(&elsewhere.path().join("Planted.lnk"));
        std::os::unix::fs::symlink(elsewhere.path(), root.path().join("link")).unwrap();
        assert_eq!(find_in(&[root.path().to_path_buf()], "Planted"), None);
    }
}
