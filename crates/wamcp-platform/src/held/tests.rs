use super::*;

fn names_of(dir: &HeldDir) -> Vec<String> {
    let mut names: Vec<String> = dir
        .names(100)
        .unwrap()
        .into_iter()
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_tree_is_read_through_handles() {
    let tmp = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(tmp.path()).unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    std::fs::write(root.join("sub").join("a.txt"), "alpha").unwrap();
    std::fs::write(root.join("b.bin"), "bravo!").unwrap();
    let held = HeldDir::open(&root).unwrap();
    assert_eq!(names_of(&held), ["b.bin", "sub"]);
    let Entry::Dir(sub) = held.entry(OsStr::new("sub")).unwrap() else {
        panic!("sub is a folder")
    };
    assert_eq!(names_of(&sub), ["a.txt"]);
    let Entry::File { mut file, links } = sub.entry(OsStr::new("a.txt")).unwrap() else {
        panic!("a.txt is a file")
    };
    let mut text = String::new();
    io::Read::read_to_string(&mut file, &mut text).unwrap();
    assert_eq!((text.as_str(), links), ("alpha", 1));
    let missing = held.entry(OsStr::new("nope")).unwrap_err();
    assert_eq!(missing.kind(), io::ErrorKind::NotFound);
}

#[test]
fn more_than_one_name_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(tmp.path()).unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    let held = HeldDir::open(&root).unwrap();
    for name in ["", ".", "..", "sub/x", "a\0b"] {
        let err = held.entry(OsStr::new(name)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{name:?}");
    }
    assert!(HeldDir::open(Path::new("relative")).is_err());
}

/// The point of the module: a folder renamed away and replaced by a link
/// to another folder after it was opened is still the folder it was. On
/// Windows the held folder cannot even be renamed (no delete sharing).
#[test]
fn a_folder_swapped_after_opening_is_still_the_opened_one() {
    let tmp = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(tmp.path()).unwrap();
    let outside = root.join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("secret"), "do not copy").unwrap();
    let project = root.join("project");
    std::fs::create_dir_all(project.join("sub")).unwrap();
    std::fs::write(project.join("sub").join("ok.txt"), "fine").unwrap();
    let held = HeldDir::open(&project).unwrap();
    let Entry::Dir(sub) = held.entry(OsStr::new("sub")).unwrap() else {
        panic!("sub is a folder")
    };
    let moved = std::fs::rename(project.join("sub"), root.join("moved"));
    if cfg!(windows) {
        // ERROR_SHARING_VIOLATION: the open handle pins the folder.
        assert_eq!(moved.unwrap_err().raw_os_error(), Some(32));
    } else {
        moved.unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(&outside, project.join("sub")).unwrap();
        assert!(matches!(
            held.entry(OsStr::new("sub")).unwrap(),
            Entry::Link
        ));
    }
    assert_eq!(names_of(&sub), ["ok.txt"]);
    let err = sub.entry(OsStr::new("secret")).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::NotFound);
}

/// A file opened through the folder cannot lose a name while it is open
/// on Windows, and on Unix its count comes from the look at the name.
#[test]
fn a_hard_linked_file_reports_its_names() {
    let tmp = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(tmp.path()).unwrap();
    std::fs::write(root.join("one"), "x").unwrap();
    std::fs::hard_link(root.join("one"), root.join("two")).unwrap();
    let held = HeldDir::open(&root).unwrap();
    let Entry::File { links, .. } = held.entry(OsStr::new("two")).unwrap() else {
        panic!("two is a file")
    };
    assert_eq!(links, 2);
    let Entry::File { file, .. } = held.entry(OsStr::new("one")).unwrap() else {
        panic!("one is a file")
    };
    let removed = std::fs::remove_file(root.join("two"));
    if cfg!(windows) {
        assert_eq!(removed.unwrap_err().raw_os_error(), Some(32));
    } else {
        removed.unwrap();
    }
    drop(file);
}

#[cfg(unix)]
#[test]
fn links_and_fifos_are_seen_not_followed_or_opened() {
    let tmp = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(tmp.path()).unwrap();
    std::os::unix::fs::symlink("/etc", root.join("to-etc")).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", root.join("to-file")).unwrap();
    let fifo = std::ffi::CString::new(root.join("pipe").to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let held = HeldDir::open(&root).unwrap();
    assert!(matches!(
        held.entry(OsStr::new("to-etc")).unwrap(),
        Entry::Link
    ));
    assert!(matches!(
        held.entry(OsStr::new("to-file")).unwrap(),
        Entry::Link
    ));
    assert!(matches!(
        held.entry(OsStr::new("pipe")).unwrap(),
        Entry::Other
    ));
    let err = HeldDir::open(&root.join("to-etc")).unwrap_err();
    assert!(err.to_string().contains("is a link"), "{err}");
}

#[test]
fn a_listing_past_its_limit_is_an_error_and_ids_tell_folders_apart() {
    let tmp = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(tmp.path()).unwrap();
    for name in ["a", "b", "c"] {
        std::fs::create_dir(root.join(name)).unwrap();
    }
    let held = HeldDir::open(&root).unwrap();
    assert_eq!(held.names(3).unwrap().len(), 3);
    let err = held.names(2).unwrap_err();
    assert_eq!(err.to_string(), "holds more than 2 entries");
    assert_eq!(err.kind(), io::ErrorKind::QuotaExceeded);
    let again = HeldDir::open(&root).unwrap();
    assert_eq!(held.id().unwrap(), again.id().unwrap());
    let Entry::Dir(a) = held.entry(OsStr::new("a")).unwrap() else {
        panic!("a is a folder")
    };
    assert_ne!(a.id().unwrap(), held.id().unwrap());
    assert_eq!(a.id().unwrap().0, held.id().unwrap().0, "one volume");
}

#[cfg(windows)]
#[test]
fn names_windows_would_read_otherwise_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(tmp.path()).unwrap();
    std::fs::write(root.join("x"), "data").unwrap();
    let held = HeldDir::open(&root).unwrap();
    for name in ["x::$DATA", "x:stream", "x.", "x ", "a\\b"] {
        let err = held.entry(OsStr::new(name)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{name:?}");
    }
}
