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
    assert_eq!(
        names,
        [
            "bin",
            "bin/sub",
            "bin/sub/data.txt",
            "bin/tool.exe",
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
struct Fake(HashMap<PathBuf, io::Result<Kind>>);

impl Fake {
    fn new(entries: &[(&str, Result<Kind, io::ErrorKind>)]) -> Fake {
        Fake(
            entries
                .iter()
                .map(|(p, k)| (PathBuf::from(p), k.map_err(io::Error::from)))
                .collect(),
        )
    }
}

impl PayloadFs for Fake {
    fn kind(&self, path: &Path) -> io::Result<Kind> {
        match self.0.get(path) {
            Some(Ok(k)) => Ok(*k),
            Some(Err(e)) => Err(io::Error::from(e.kind())),
            None => Err(io::ErrorKind::NotFound.into()),
        }
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<OsString>> {
        Ok(self
            .0
            .keys()
            .filter(|p| p.parent() == Some(dir))
            .map(|p| p.file_name().unwrap().to_os_string())
            .collect())
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
