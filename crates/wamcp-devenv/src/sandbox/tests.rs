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

/// What the fake file system says a path is.
#[derive(Clone, Copy, Debug)]
enum Spec {
    Dir,
    File(u64),
    Link,
    Other,
    HardLinked,
    Mount,
}

/// A file system of our choosing: junctions, unreadable entries and sizes
/// Wine cannot show. A folder "handle" is its path.
struct Fake {
    kinds: HashMap<PathBuf, Result<Spec, io::ErrorKind>>,
    children: HashMap<PathBuf, Vec<OsString>>,
}

impl Fake {
    fn new(entries: &[(&str, Result<Spec, io::ErrorKind>)]) -> Fake {
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
    type Dir = PathBuf;
    type File = io::Empty;

    fn open_root(&self, path: &Path) -> io::Result<PathBuf> {
        Ok(path.to_path_buf())
    }

    fn entry(&self, dir: &PathBuf, name: &OsStr) -> io::Result<Node<PathBuf, io::Empty>> {
        let path = dir.join(name);
        match self.kinds.get(&path) {
            Some(Ok(Spec::Dir)) => Ok(Node::Dir(path)),
            Some(Ok(Spec::File(len))) => Ok(Node::File(io::empty(), *len)),
            Some(Ok(Spec::Link)) => Ok(Node::Link),
            Some(Ok(Spec::Other)) => Ok(Node::Other),
            Some(Ok(Spec::HardLinked)) => Ok(Node::HardLinked),
            Some(Ok(Spec::Mount)) => Ok(Node::Mount),
            Some(Err(e)) => Err(io::Error::from(*e)),
            None => Err(io::ErrorKind::NotFound.into()),
        }
    }

    fn names(&self, dir: &PathBuf, limit: usize) -> io::Result<Vec<OsString>> {
        let names = self.children.get(dir).cloned().unwrap_or_default();
        if names.len() > limit {
            return Err(io::ErrorKind::QuotaExceeded.into());
        }
        Ok(names)
    }

    fn id(&self, _dir: &PathBuf) -> io::Result<(u64, u64)> {
        Ok((1, 1))
    }
}

#[test]
fn junctions_unreadable_metadata_and_limits_through_the_trait() {
    let root = Path::new("/w");
    let junction = Fake::new(&[
        ("/w/src", Ok(Spec::Link)),
        ("/w/src/a.exe", Ok(Spec::File(1))),
    ]);
    let err = check_payload(root, &paths(&["src/a.exe"]), &junction).unwrap_err();
    assert!(err.contains("'src' is a link or junction"), "{err}");
    for (spec, want) in [
        (Spec::Link, "x' inside the payload is a link or junction"),
        (Spec::Other, "x' inside the payload is not a file or folder"),
        (
            Spec::HardLinked,
            "x' inside the payload has other hard links",
        ),
        (Spec::Mount, "x' inside the payload is another file system"),
    ] {
        let fs = Fake::new(&[("/w/src", Ok(Spec::Dir)), ("/w/src/x", Ok(spec))]);
        let err = check_payload(root, &paths(&["src"]), &fs).unwrap_err();
        assert!(err.contains(want), "{spec:?}: {err}");
    }
    let unreadable = Fake::new(&[
        ("/w/src", Ok(Spec::Dir)),
        ("/w/src/a.exe", Err(io::ErrorKind::PermissionDenied)),
    ]);
    let err = check_payload(root, &paths(&["src"]), &unreadable).unwrap_err();
    assert!(
        err.contains("cannot be checked") && err.contains("refused rather than guessed"),
        "{err}"
    );
    let big = Fake::new(&[("/w/huge.iso", Ok(Spec::File(MAX_PAYLOAD_BYTES + 1)))]);
    assert!(
        check_payload(root, &paths(&["huge.iso"]), &big)
            .unwrap_err()
            .contains("larger than 1024 MiB")
    );
    let mut many: Vec<(String, Result<Spec, io::ErrorKind>)> = vec![("/w/d".into(), Ok(Spec::Dir))];
    many.extend((0..MAX_PAYLOAD_ENTRIES).map(|i| (format!("/w/d/f{i}"), Ok(Spec::File(1)))));
    let many: Vec<(&str, Result<Spec, io::ErrorKind>)> =
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
    let bundle = stage(
        &root,
        &list,
        &payload,
        "setup.msi /quiet",
        bundles.path(),
        &AtomicBool::new(false),
    )
    .unwrap();
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
    let err = stage(
        &root,
        &list,
        &stale,
        "x",
        bundles.path(),
        &AtomicBool::new(false),
    )
    .unwrap_err();
    assert!(err.contains("changed since it was planned"), "{err}");
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
    let killed = bundles.path().join("staging-killed");
    for d in [&old, &new, &other, &killed] {
        std::fs::create_dir(d).unwrap();
    }
    let two_days = SystemTime::now() - Duration::from_secs(48 * 3600);
    for d in [&old, &other, &killed] {
        std::fs::File::open(d)
            .unwrap()
            .set_modified(two_days)
            .unwrap();
    }
    sweep(bundles.path(), STALE_BUNDLE_AGE);
    assert!(!old.exists() && !killed.exists() && new.exists() && other.exists());
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
        &Default::default(),
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
        let wsl =
            SandboxPlan::new(Environment::Wsl, &root, "make", &[], &Default::default()).unwrap();
        assert_eq!(
            wsl.unavailable.as_deref(),
            Some("WSL exists only on Windows")
        );
    }
    let dc = SandboxPlan::new(
        Environment::DevContainer,
        &root,
        "npm test",
        &[],
        &Default::default(),
    )
    .unwrap();
    assert!(
        dc.unavailable
            .unwrap()
            .contains("no .devcontainer/devcontainer.json")
    );
    assert!(
        SandboxPlan::new(
            Environment::WindowsSandbox,
            &root,
            "x",
            &[],
            &Default::default()
        )
        .unwrap_err()
        .contains("needs payload_paths")
    );
    assert!(
        SandboxPlan::new(
            Environment::Wsl,
            &root,
            "x",
            &paths(&["bin"]),
            &Default::default()
        )
        .unwrap_err()
        .contains("only for windows_sandbox")
    );
}

#[test]
fn a_deep_tree_is_walked_without_recursion_up_to_the_depth_limit() {
    let root = Path::new("/w");
    let chain = |depth: usize| {
        let mut entries: Vec<(String, Result<Spec, io::ErrorKind>)> = Vec::new();
        let mut at = String::from("/w");
        for _ in 0..depth {
            at.push_str("/d");
            entries.push((at.clone(), Ok(Spec::Dir)));
        }
        entries
    };
    let check = |depth: usize| {
        let entries = chain(depth);
        let refs: Vec<(&str, Result<Spec, io::ErrorKind>)> =
            entries.iter().map(|(p, k)| (p.as_str(), *k)).collect();
        let fs = Fake::new(&refs);
        // On a small stack: a recursive walk would need a frame per level.
        std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn(move || check_payload(root, &paths(&["d"]), &fs).map(|p| p.entries.len()))
            .unwrap()
            .join()
            .unwrap()
    };
    assert_eq!(check(MAX_PAYLOAD_DEPTH), Ok(MAX_PAYLOAD_DEPTH));
    let err = check(MAX_PAYLOAD_DEPTH + 1).unwrap_err();
    assert_eq!(err, "the payload nests folders more than 128 deep");
    let err = check(5000).unwrap_err();
    assert_eq!(err, "the payload nests folders more than 128 deep");
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
        let fs = Fake::new(&[("/w/d", Ok(Spec::Dir)), (path.as_str(), Ok(Spec::File(1)))]);
        let err = check_payload(root, &paths(&["d"]), &fs).unwrap_err();
        assert!(err.contains(want), "{inner}: {err}");
    }
    let fs = Fake::new(&[
        ("/w/d", Ok(Spec::Dir)),
        ("/w/d/\u{3C3}", Ok(Spec::File(1))),
        ("/w/d/\u{3C2}", Ok(Spec::File(1))),
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

/// The attack the handle walk exists for: while the payload is staged, a
/// folder inside it is swapped back and forth with a link to a folder
/// outside the project that holds a file of the same name. No staged
/// bundle may ever contain the outside file.
#[cfg(unix)]
#[test]
fn a_folder_swapped_for_a_link_during_staging_never_brings_outside_bytes() {
    use std::os::unix::ffi::OsStringExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(dir.path()).unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("key"), b"SECRET").unwrap();
    std::fs::create_dir_all(root.join("p/sub")).unwrap();
    std::fs::write(root.join("p/sub/key"), b"inside").unwrap();
    let list = paths(&["p"]);
    let planned = check_payload(&root, &list, &RealFs).unwrap();
    let bundles = tempfile::tempdir().unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let (stop, root, outside) = (stop.clone(), root.clone(), outside.path().to_path_buf());
        std::os::unix::fs::symlink(&outside, root.join("alt")).unwrap();
        let real = std::ffi::CString::new(root.join("p/sub").into_os_string().into_vec()).unwrap();
        let link = std::ffi::CString::new(root.join("alt").into_os_string().into_vec()).unwrap();
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // SAFETY: two NUL-terminated paths; an atomic exchange, so
                // `p/sub` is always either the folder or the link.
                let rc = unsafe {
                    libc::renameat2(
                        libc::AT_FDCWD,
                        real.as_ptr(),
                        libc::AT_FDCWD,
                        link.as_ptr(),
                        libc::RENAME_EXCHANGE,
                    )
                };
                assert_eq!(rc, 0, "{}", io::Error::last_os_error());
            }
        })
    };
    let mut staged = 0;
    for _ in 0..300 {
        if let Ok(bundle) = stage(
            &root,
            &list,
            &planned,
            "x",
            bundles.path(),
            &AtomicBool::new(false),
        ) {
            let copied = std::fs::read(bundle.join("share/payload/p/sub/key")).unwrap();
            assert_eq!(copied, b"inside");
            std::fs::remove_dir_all(bundle).unwrap();
            staged += 1;
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    swapper.join().unwrap();
    // Whatever failed left nothing behind.
    assert_eq!(std::fs::read_dir(bundles.path()).unwrap().count(), 0);
    // The swapper is quiet now: with the link put aside, the tree stages.
    if std::fs::symlink_metadata(root.join("p/sub"))
        .unwrap()
        .is_symlink()
    {
        std::fs::rename(root.join("p/sub"), root.join("tmp")).unwrap();
        std::fs::rename(root.join("alt"), root.join("p/sub")).unwrap();
        std::fs::rename(root.join("tmp"), root.join("alt")).unwrap();
    }
    std::fs::remove_file(root.join("alt")).unwrap();
    stage(
        &root,
        &list,
        &planned,
        "x",
        bundles.path(),
        &AtomicBool::new(false),
    )
    .unwrap();
    eprintln!("{staged} of 300 stagings completed under the swapping");
}

#[test]
fn a_payload_that_grew_after_planning_is_not_staged() {
    let dir = tree();
    let root = dunce::canonicalize(dir.path()).unwrap();
    let bundles = tempfile::tempdir().unwrap();
    let list = paths(&["bin"]);
    let planned = check_payload(&root, &list, &RealFs).unwrap();
    std::fs::write(root.join("bin/added.dll"), b"new").unwrap();
    let err = stage(
        &root,
        &list,
        &planned,
        "x",
        bundles.path(),
        &AtomicBool::new(false),
    )
    .unwrap_err();
    assert_eq!(
        err,
        "staging failed, nothing was launched: the payload changed since it was planned"
    );
    assert_eq!(std::fs::read_dir(bundles.path()).unwrap().count(), 0);
}

#[test]
fn a_file_named_inside_a_folder_is_staged_with_its_folder() {
    let dir = tree();
    let root = dunce::canonicalize(dir.path()).unwrap();
    let bundles = tempfile::tempdir().unwrap();
    let list = paths(&["bin/tool.exe", "bin/sub/data.txt"]);
    let planned = check_payload(&root, &list, &RealFs).unwrap();
    assert_eq!(
        planned.entries.len(),
        2,
        "the folders on the way are not entries"
    );
    let bundle = stage(
        &root,
        &list,
        &planned,
        "tool.exe",
        bundles.path(),
        &AtomicBool::new(false),
    )
    .unwrap();
    let staged = bundle.join("share").join("payload");
    assert_eq!(
        std::fs::read(staged.join("bin/tool.exe")).unwrap(),
        b"MZ1234"
    );
    assert_eq!(
        std::fs::read(staged.join("bin/sub/data.txt")).unwrap(),
        b"hello"
    );
    assert!(
        bundle
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("bundle-")
    );
    let names: Vec<String> = std::fs::read_dir(bundles.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1, "no staging folder is left: {names:?}");
}

#[test]
fn a_workspace_replaced_by_another_folder_after_planning_is_not_staged() {
    let parent = tempfile::tempdir().unwrap();
    let parent = dunce::canonicalize(parent.path()).unwrap();
    let root = parent.join("ws");
    std::fs::create_dir_all(root.join("bin")).unwrap();
    std::fs::write(root.join("bin/a.txt"), b"approved").unwrap();
    let list = paths(&["bin"]);
    let planned = check_payload(&root, &list, &RealFs).unwrap();
    // Same names, same sizes, another folder.
    std::fs::rename(&root, parent.join("old")).unwrap();
    std::fs::create_dir_all(root.join("bin")).unwrap();
    std::fs::write(root.join("bin/a.txt"), b"replaced").unwrap();
    let bundles = tempfile::tempdir().unwrap();
    let err = stage(
        &root,
        &list,
        &planned,
        "x",
        bundles.path(),
        &AtomicBool::new(false),
    )
    .unwrap_err();
    assert!(err.contains("changed since it was planned"), "{err}");
    assert_eq!(std::fs::read_dir(bundles.path()).unwrap().count(), 0);
}

#[test]
fn a_folder_with_more_names_than_the_limit_is_refused_while_listing() {
    let fs = Fake::new(&[("/w/d", Ok(Spec::Dir))]);
    let mut fs = fs;
    fs.children.insert(
        PathBuf::from("/w/d"),
        (0..=MAX_PAYLOAD_ENTRIES)
            .map(|i| OsString::from(format!("f{i}")))
            .collect(),
    );
    let err = check_payload(Path::new("/w"), &paths(&["d"]), &fs).unwrap_err();
    assert_eq!(err, "the payload holds more than 10000 files and folders");
}

#[test]
fn a_cancelled_staging_stops_and_leaves_nothing() {
    let dir = tree();
    let root = dunce::canonicalize(dir.path()).unwrap();
    let bundles = tempfile::tempdir().unwrap();
    let list = paths(&["bin"]);
    let planned = check_payload(&root, &list, &RealFs).unwrap();
    let err = stage(
        &root,
        &list,
        &planned,
        "x",
        bundles.path(),
        &AtomicBool::new(true),
    )
    .unwrap_err();
    assert_eq!(
        err,
        "staging failed, nothing was launched: the call was cancelled"
    );
    assert_eq!(std::fs::read_dir(bundles.path()).unwrap().count(), 0);
}

#[test]
fn a_path_inside_the_payload_longer_than_the_limit_is_refused() {
    let long = "n".repeat(200);
    let mut entries: Vec<(String, Result<Spec, io::ErrorKind>)> = Vec::new();
    let mut at = String::from("/w/d");
    entries.push((at.clone(), Ok(Spec::Dir)));
    for _ in 0..30 {
        at = format!("{at}/{long}");
        entries.push((at.clone(), Ok(Spec::Dir)));
    }
    let refs: Vec<(&str, Result<Spec, io::ErrorKind>)> =
        entries.iter().map(|(p, k)| (p.as_str(), *k)).collect();
    let err = check_payload(Path::new("/w"), &paths(&["d"]), &Fake::new(&refs)).unwrap_err();
    assert_eq!(err, "a path inside the payload is longer than 4096 bytes");
}

#[test]
fn a_wsl_route_knows_whether_a_distribution_is_there() {
    let (ready, none) = wsl_readiness(Ok(Some(
        json!({"distributions": ["docker-desktop", "Ubuntu-24.04"]}),
    )));
    assert_eq!(
        ready,
        json!({"state": "ready", "distributions": ["Ubuntu-24.04"]})
    );
    assert_eq!(none, None);
    let (state, why) = wsl_readiness(Ok(Some(
        json!({"distributions": ["docker-desktop", "docker-desktop-data"]}),
    )));
    assert_eq!(state["state"], "no_distribution");
    assert!(why.unwrap().starts_with("WSL has no Linux distribution"));
    let (state, why) = wsl_readiness(Ok(Some(json!({"distributions": []}))));
    assert_eq!(state["state"], "no_distribution");
    assert!(why.is_some());
    // A failed probe is unknown: the plan stands, with the probe's words.
    let (state, why) = wsl_readiness(Err(
        "wsl.exe --list exited with Some(-1): Windows Subsystem for Linux is not installed.".into(),
    ));
    assert_eq!(state["state"], "unknown");
    assert!(state["error"].as_str().unwrap().contains("not installed"));
    assert_eq!(why, None);
    let (state, why) = wsl_readiness(Ok(None));
    assert_eq!(state, json!({"state": "missing"}));
    assert_eq!(why.as_deref(), Some("wsl.exe was not found"));
}
