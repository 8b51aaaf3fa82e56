use super::*;
use std::collections::HashMap;

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("bin/sub")).unwrap();
    std::fs::write(root.join("bin/tool.exe"), b"MZ1234").unwrap();
    std::fs::write(root.join("bin/sub/data.txt"), b"hello").unwrap();
    std::fs::write(root.join("setup.msi"), b"0123456789").unwrap();
    dir
}

fn paths(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_real_tree_is_counted_entry_by_entry() {
    let dir = tree();
    let root = dunce::canonicalize(dir.path()).unwrap();
    let payload = check_payload(&root, &paths(&["bin", "setup.msi"]), &RealFs).unwrap();
    let names: Vec<String> = payload
        .entries
        .iter()
        .map(|(p, _)| p.display().to_string().replace('\\', "/"))
        .collect();
    // A folder's entries, then its subfolders' (each folder before its contents).
    assert_eq!(
        names,
        [
            "bin",
            "bin/sub",
            "bin/tool.exe",
            "bin/sub/data.txt",
            "setup.msi"
        ]
    );
    assert_eq!(payload.bytes, 21);
    let missing = check_payload(&root, &paths(&["nope"]), &RealFs).unwrap_err();
    assert_eq!(missing, "payload path 'nope' does not exist");
    let through_file = check_payload(&root, &paths(&["setup.msi/x"]), &RealFs).unwrap_err();
    assert!(
        through_file.contains("is a file, not a folder"),
        "{through_file}"
    );
}

#[cfg(unix)]
#[test]
fn links_anywhere_on_the_way_or_inside_are_refused_and_fifos_too() {
    let dir = tree();
    let root = dunce::canonicalize(dir.path()).unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), b"s").unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("out")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret"), root.join("bin/sub/link")).unwrap();
    let via = check_payload(&root, &paths(&["out/secret"]), &RealFs).unwrap_err();
    assert!(via.contains("'out' is a link or junction"), "{via}");
    let inside = check_payload(&root, &paths(&["bin"]), &RealFs).unwrap_err();
    assert!(
        inside.contains("bin/sub/link' inside the payload is a link"),
        "{inside}"
    );
    std::fs::remove_file(root.join("bin/sub/link")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(root.join("bin/pipe"))
        .status()
        .unwrap();
    assert!(made.success());
    let fifo = check_payload(&root, &paths(&["bin"]), &RealFs).unwrap_err();
    assert!(
        fifo.contains("bin/pipe' inside the payload is not a file or folder"),
        "{fifo}"
    );
}

/// A file system of our choosing: junctions, unreadable entries and sizes
/// Wine cannot show.
struct Fake {
    kinds: HashMap<PathBuf, Result<Kind, io::ErrorKind>>,
    children: HashMap<PathBuf, Vec<OsString>>,
}

impl Fake {
    fn new(entries: &[(&str, Result<Kind, io::ErrorKind>)]) -> Fake {
        let mut children: HashMap<PathBuf, Vec<OsString>> = HashMap::new();
        for (path, _) in entries {
            let path = Path::new(path);
            if let (Some(parent), Some(name)) = (path.parent(), path.file_name()) {
                children
                    .entry(parent.to_path_buf())
                    .or_default()
                    .push(name.to_os_string());
            }
        }
        Fake {
            kinds: entries
                .iter()
                .map(|(p, k)| (PathBuf::from(p), *k))
                .collect(),
            children,
        }
    }
}

impl PayloadFs for Fake {
    fn kind(&self, path: &Path) -> io::Result<Kind> {
        match self.kinds.get(path) {
            Some(Ok(k)) => Ok(*k),
            Some(Err(e)) => Err(io::Error::from(*e)),
            None => Err(io::ErrorKind::NotFound.into()),
        }
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<OsString>> {
        Ok(self.children.get(dir).cloned().unwrap_or_default())
    }
}

#[test]
fn junctions_unreadable_metadata_and_limits_through_the_trait() {
    let root = Path::new("/w");
    let junction = Fake::new(&[
        ("/w/src", Ok(Kind::Link)),
        ("/w/src/a.exe", Ok(Kind::File(1))),
    ]);
    let err = check_payload(root, &paths(&["src/a.exe"]), &junction).unwrap_err();
    assert!(err.contains("'src' is a link or junction"), "{err}");
    let unreadable = Fake::new(&[
        ("/w/src", Ok(Kind::Dir)),
        ("/w/src/a.exe", Err(io::ErrorKind::PermissionDenied)),
    ]);
    let err = check_payload(root, &paths(&["src"]), &unreadable).unwrap_err();
    assert!(
        err.contains("cannot be checked") && err.contains("refused rather than guessed"),
        "{err}"
    );
    let big = Fake::new(&[("/w/huge.iso", Ok(Kind::File(MAX_PAYLOAD_BYTES + 1)))]);
    assert!(
        check_payload(root, &paths(&["huge.iso"]), &big)
            .unwrap_err()
            .contains("larger than 1024 MiB")
    );
    let mut many: Vec<(String, Result<Kind, io::ErrorKind>)> = vec![("/w/d".into(), Ok(Kind::Dir))];
    many.extend((0..MAX_PAYLOAD_ENTRIES).map(|i| (format!("/w/d/f{i}"), Ok(Kind::File(1)))));
    let many: Vec<(&str, Result<Kind, io::ErrorKind>)> =
        many.iter().map(|(p, k)| (p.as_str(), *k)).collect();
    let err = check_payload(root, &paths(&["d"]), &Fake::new(&many)).unwrap_err();
    assert!(err.contains("more than 10000 files and folders"), "{err}");
}

#[test]
fn staging_copies_the_payload_and_writes_the_wsb_and_a_failed_one_leaves_nothing() {
    let dir = tree();
    let root = dunce::canonicalize(dir.path()).unwrap();
    let bundles = tempfile::tempdir().unwrap();
    let list = paths(&["bin", "setup.msi"]);
    let payload = check_payload(&root, &list, &RealFs).unwrap();
    let bundle = stage(&root, &list, &payload, "setup.msi /quiet", bundles.path()).unwrap();
    let staged = bundle.join("share").join("payload");
    assert_eq!(
        std::fs::read(staged.join("bin/sub/data.txt")).unwrap(),
        b"hello"
    );
    assert_eq!(
        std::fs::read(staged.join("setup.msi")).unwrap(),
        b"0123456789"
    );
    let wsb = std::fs::read_to_string(bundle.join("sandbox.wsb")).unwrap();
    assert!(
        wsb.contains("<Networking>Disable</Networking>")
            && wsb.contains("<ReadOnly>true</ReadOnly>")
    );
    assert!(wsb.contains(&format!(
        "<HostFolder>{}</HostFolder>",
        bundle.join("share").display()
    )));
    // What was checked is not what is there: nothing is left behind.
    let stale = Payload {
        bytes: 1,
        ..payload
    };
    let err = stage(&root, &list, &stale, "x", bundles.path()).unwrap_err();
    assert!(err.contains("changed while it was copied"), "{err}");
    let left: Vec<_> = std::fs::read_dir(bundles.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(left, [bundle]);
}

#[test]
fn a_file_with_another_hard_link_is_refused() {
    let dir = tree();
    let root = dunce::canonicalize(dir.path()).unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), b"s").unwrap();
    std::fs::hard_link(outside.path().join("secret.txt"), root.join("bin/copy.txt")).unwrap();
    let err = check_payload(&root, &paths(&["bin"]), &RealFs).unwrap_err();
    assert!(
        err.contains("copy.txt' inside the payload has other hard links"),
        "{err}"
    );
    let direct = check_payload(&root, &paths(&["bin/copy.txt"]), &RealFs).unwrap_err();
    assert!(direct.contains("has other hard links"), "{direct}");
}

#[cfg(unix)]
#[test]
fn bundles_older_than_a_day_are_swept() {
    let bundles = tempfile::tempdir().unwrap();
    let old = bundles.path().join("bundle-old");
    let new = bundles.path().join("bundle-new");
    let other = bundles.path().join("keep-me");
    for d in [&old, &new, &other] {
        std::fs::create_dir(d).unwrap();
    }
    let two_days = SystemTime::now() - Duration::from_secs(48 * 3600);
    for d in [&old, &other] {
        std::fs::File::open(d)
            .unwrap()
            .set_modified(two_days)
            .unwrap();
    }
    sweep(bundles.path(), STALE_BUNDLE_AGE);
    assert!(!old.exists() && new.exists() && other.exists());
}

#[test]
fn plans_validate_for_real_and_say_what_is_unavailable_here() {
    let dir = tree();
    let root = dunce::canonicalize(dir.path()).unwrap();
    let plan = SandboxPlan::new(
        Environment::WindowsSandbox,
        &root,
        "tool.exe",
        &paths(&["bin"]),
    )
    .unwrap();
    let view = plan.view(if plan.unavailable.is_some() {
        "unavailable"
    } else {
        "planned"
    });
    assert_eq!(view["payload"]["entries"], 4);
    assert!(view["wsb_preview"].as_str().unwrap().contains("tool.exe"));
    if !cfg!(windows) {
        assert_eq!(
            plan.unavailable.as_deref(),
            Some("Windows Sandbox exists only on Windows")
        );
        let wsl = SandboxPlan::new(Environment::Wsl, &root, "make", &[]).unwrap();
        assert_eq!(
            wsl.unavailable.as_deref(),
            Some("WSL exists only on Windows")
        );
    }
    let dc = SandboxPlan::new(Environment::DevContainer, &root, "npm test", &[]).unwrap();
    assert!(
        dc.unavailable
            .unwrap()
            .contains("no .devcontainer/devcontainer.json")
    );
    assert!(
        SandboxPlan::new(Environment::WindowsSandbox, &root, "x", &[])
            .unwrap_err()
            .contains("needs payload_paths")
    );
    assert!(
        SandboxPlan::new(Environment::Wsl, &root, "x", &paths(&["bin"]))
            .unwrap_err()
            .contains("only for windows_sandbox")
    );
}

#[test]
fn a_very_deep_tree_is_walked_without_recursion() {
    let root = Path::new("/w");
    let mut entries: Vec<(String, Result<Kind, io::ErrorKind>)> = Vec::new();
    let mut at = String::from("/w");
    for _ in 0..2000 {
        at.push_str("/d");
        entries.push((at.clone(), Ok(Kind::Dir)));
    }
    let refs: Vec<(&str, Result<Kind, io::ErrorKind>)> =
        entries.iter().map(|(p, k)| (p.as_str(), *k)).collect();
    let fs = Fake::new(&refs);
    // On a small stack: the old recursive walk overflowed a 2 MiB stack at
    // ~1,750 levels, and this one is an eighth of that.
    let payload = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || check_payload(root, &paths(&["d"]), &fs).map(|p| p.entries.len()))
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(payload, Ok(2000));
}

#[test]
fn names_inside_a_folder_must_reach_windows_unchanged_and_distinct() {
    let root = Path::new("/w");
    for (inner, want) in [
        ("CON", "names a Windows device"),
        ("trail.", "ending in a dot or space"),
        ("a:b", "alternate data stream"),
    ] {
        let path = format!("/w/d/{inner}");
        let fs = Fake::new(&[("/w/d", Ok(Kind::Dir)), (path.as_str(), Ok(Kind::File(1)))]);
        let err = check_payload(root, &paths(&["d"]), &fs).unwrap_err();
        assert!(err.contains(want), "{inner}: {err}");
    }
    let fs = Fake::new(&[
        ("/w/d", Ok(Kind::Dir)),
        ("/w/d/\u{3C3}", Ok(Kind::File(1))),
        ("/w/d/\u{3C2}", Ok(Kind::File(1))),
    ]);
    let err = check_payload(root, &paths(&["d"]), &fs).unwrap_err();
    assert!(err.contains("same name as another entry"), "{err}");
}

#[cfg(unix)]
#[test]
fn a_linked_devcontainer_config_or_a_replaced_folder_does_not_count() {
    let dir = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(dir.path()).unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("devcontainer.json"), "{}").unwrap();
    assert!(!has_devcontainer_config(&root));
    std::os::unix::fs::symlink(
        outside.path().join("devcontainer.json"),
        root.join(".devcontainer.json"),
    )
    .unwrap();
    assert!(
        !has_devcontainer_config(&root),
        "a link is not the project's own config"
    );
    std::fs::remove_file(root.join(".devcontainer.json")).unwrap();
    std::fs::write(root.join(".devcontainer.json"), "{}").unwrap();
    assert!(has_devcontainer_config(&root));
    std::fs::hard_link(
        root.join(".devcontainer.json"),
        outside.path().join("second-name.json"),
    )
    .unwrap();
    assert!(
        !has_devcontainer_config(&root),
        "a config with a second name may be another folder's"
    );
    std::fs::remove_file(outside.path().join("second-name.json")).unwrap();
    assert!(still_in_place(&root));
    let moved = root.join("w");
    std::os::unix::fs::symlink(outside.path(), &moved).unwrap();
    assert!(!still_in_place(&moved));
}
