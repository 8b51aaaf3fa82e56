use super::*;
use std::collections::BTreeMap;

const MIB: u64 = 1 << 20;

fn limits(budget: u64) -> Limits {
    Limits {
        budget,
        max_age: Duration::from_secs(14 * 86400),
        file_cap: MIB,
    }
}

/// A root and a journal beside it (never inside).
fn setup(budget: u64) -> (tempfile::TempDir, PathBuf, Journal) {
    let temp = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(temp.path()).unwrap().join("project");
    std::fs::create_dir(&root).unwrap();
    let journal = Journal::open(&temp.path().join("journal"), limits(budget)).unwrap();
    (temp, root, journal)
}

/// Every path under `root` with its bytes (or `dir`/`link -> x`) and mode.
fn state(root: &Path) -> BTreeMap<String, (Vec<u8>, u32)> {
    let mut found = BTreeMap::new();
    let mut folders = vec![root.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            let meta = path.symlink_metadata().unwrap();
            let mode = tree::mode(&meta);
            if meta.is_dir() {
                found.insert(rel, (b"dir".to_vec(), mode));
                folders.push(path);
            } else if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                found.insert(
                    rel,
                    (format!("link -> {}", target.display()).into_bytes(), 0),
                );
            } else {
                found.insert(rel, (std::fs::read(&path).unwrap(), mode));
            }
        }
    }
    found
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn step_of(journal: &Journal, root: &Path, change: impl FnOnce()) -> Option<Recorded> {
    let pending = journal
        .begin(&Scope::Roots(vec![root.to_path_buf()]), Overflow::Refuse)
        .unwrap();
    change();
    journal.finish(pending, "run_powershell", "test").unwrap()
}

#[test]
fn a_deleting_step_is_put_back_byte_for_byte() {
    let (_t, root, journal) = setup(64 * MIB);
    write(&root, "src/main.rs", "fn main() {}\r\n");
    write(&root, "src/lib/deep.rs", "// deep\n");
    write(&root, ".env", "TOKEN=1\n");
    write(&root, "notes/empty/.keep", "");
    let before = state(&root);
    let recorded = step_of(&journal, &root, || {
        std::fs::remove_dir_all(root.join("src")).unwrap();
        std::fs::remove_file(root.join(".env")).unwrap();
        write(&root, "new.txt", "made by the step");
    })
    .expect("a step");
    assert_eq!(recorded.summary, "1 file added, 3 files removed");
    let step = journal.step(recorded.id).unwrap();
    assert!(journal.conflicts(&step).is_empty());
    let restored = journal.restore(&step);
    assert!(restored.left.is_empty(), "{:?}", restored.left);
    assert_eq!(state(&root), before);
}

#[test]
fn a_step_that_changes_nothing_is_not_kept() {
    let (_t, root, journal) = setup(64 * MIB);
    write(&root, "a.txt", "a");
    assert!(step_of(&journal, &root, || {}).is_none());
    assert!(journal.steps().is_empty());
}

#[cfg(unix)]
#[test]
fn modes_and_links_come_back() {
    use std::os::unix::fs::PermissionsExt;
    let (_t, root, journal) = setup(64 * MIB);
    write(&root, "run.sh", "#!/bin/sh\n");
    std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("run.sh", root.join("link")).unwrap();
    let before = state(&root);
    let recorded = step_of(&journal, &root, || {
        std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o600))
            .unwrap();
        std::fs::write(root.join("run.sh"), "changed").unwrap();
        std::fs::remove_file(root.join("link")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join("link")).unwrap();
    })
    .unwrap();
    let step = journal.step(recorded.id).unwrap();
    let restored = journal.restore(&step);
    assert!(restored.left.is_empty(), "{:?}", restored.left);
    assert_eq!(state(&root), before);
}

#[test]
fn a_path_changed_again_is_a_conflict() {
    let (_t, root, journal) = setup(64 * MIB);
    write(&root, "a.txt", "one");
    let recorded = step_of(&journal, &root, || write(&root, "a.txt", "two")).unwrap();
    write(&root, "a.txt", "three, by the user");
    let step = journal.step(recorded.id).unwrap();
    let conflicts = journal.conflicts(&step);
    assert_eq!(conflicts.len(), 1, "{conflicts:?}");
    assert!(
        conflicts[0].contains("a.txt (changed since)"),
        "{conflicts:?}"
    );
    // Forced, the step's before comes back all the same.
    assert!(journal.restore(&step).left.is_empty());
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "one");
}

#[cfg(unix)]
#[test]
fn nothing_is_written_through_a_link_that_replaced_a_folder() {
    let (temp, root, journal) = setup(64 * MIB);
    let outside = temp.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    write(&root, "src/a.txt", "mine");
    let recorded = step_of(&journal, &root, || {
        std::fs::remove_dir_all(root.join("src")).unwrap();
    })
    .unwrap();
    std::os::unix::fs::symlink(&outside, root.join("src")).unwrap();
    let step = journal.step(recorded.id).unwrap();
    assert!(
        journal
            .conflicts(&step)
            .iter()
            .any(|c| c.contains("a link now"))
    );
    // Put back anyway (what `force` does): the link goes, not followed.
    let restored = journal.restore(&step);
    assert!(restored.left.is_empty(), "{:?}", restored.left);
    assert!(std::fs::read_dir(&outside).unwrap().next().is_none());
    assert_eq!(
        std::fs::read_to_string(root.join("src/a.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn regenerated_folders_are_left_out_and_tracked_ones_kept() {
    let (_t, root, journal) = setup(64 * MIB);
    std::fs::create_dir_all(root.join(".git/info")).unwrap();
    write(&root, ".gitignore", "/target\nnode_modules/\n");
    write(&root, "target/debug/app", "binary");
    write(&root, "node_modules/x/index.js", "x");
    write(&root, "bin/tool.sh", "tracked script");
    let recorded = step_of(&journal, &root, || {
        std::fs::remove_dir_all(root.join("target")).unwrap();
        std::fs::remove_dir_all(root.join("node_modules")).unwrap();
        std::fs::remove_dir_all(root.join("bin")).unwrap();
    })
    .unwrap();
    assert_eq!(recorded.summary, "1 file removed");
}

#[test]
fn an_unchanged_file_is_not_read_again() {
    let (_t, root, journal) = setup(64 * MIB);
    write(&root, "a.txt", "a");
    // Old enough that a change within the clock tick would show.
    let old = SystemTime::now() - Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(root.join("a.txt"))
        .unwrap()
        .set_modified(old)
        .unwrap();
    step_of(&journal, &root, || write(&root, "b.txt", "b"));
    let cache = journal.load_root(&root);
    let seen = Scan {
        root: &root,
        cap: MIB,
        cache: &cache,
        after_step: false,
    }
    .walk();
    assert!(seen.to_read.iter().all(|f| f.rel != "a.txt"));
}

#[test]
fn a_step_over_the_budget_is_refused_until_agreed() {
    let (_t, root, journal) = setup(1000);
    write(&root, "big.txt", &"x".repeat(4000));
    write(&root, "small.txt", "s");
    let scope = Scope::Roots(vec![root.clone()]);
    match journal.begin(&scope, Overflow::Refuse) {
        Err(BeginError::OverBudget(over)) => {
            assert_eq!(over.needed, 4001);
            assert_eq!(over.largest[0], ("big.txt".to_string(), 4000));
        }
        other => panic!("expected over budget, got {:?}", other.err()),
    }
    let pending = journal.begin(&scope, Overflow::KeepWhatFits).unwrap();
    assert!(pending.not_kept.iter().any(|n| n.starts_with("big.txt")));
    std::fs::remove_file(root.join("small.txt")).unwrap();
    let recorded = journal.finish(pending, "t", "t").unwrap().unwrap();
    let step = journal.step(recorded.id).unwrap();
    assert!(journal.restore(&step).left.is_empty());
    assert_eq!(
        std::fs::read_to_string(root.join("small.txt")).unwrap(),
        "s"
    );
}

/// Makes every kept step look `secs` older.
fn age_steps(journal: &Journal, secs: u64) {
    for mut step in journal.steps() {
        step.time -= secs;
        let path = journal.dir().join("steps").join(steps::file_name(step.id));
        std::fs::write(path, serde_json::to_vec(&step).unwrap()).unwrap();
    }
    journal.times.lock().unwrap().clear();
}

#[test]
fn old_steps_are_evicted_first_under_a_small_budget() {
    let (_t, root, journal) = setup(10_000);
    let mut ids = Vec::new();
    for i in 0..6 {
        let text = format!("{i}").repeat(3000);
        ids.push(
            step_of(&journal, &root, || write(&root, "f.txt", &text))
                .unwrap()
                .id,
        );
        age_steps(&journal, PROTECTED.as_secs());
    }
    let kept: Vec<u64> = journal.steps().iter().map(|s| s.id).collect();
    assert!(kept.len() < 6 && !kept.is_empty(), "{kept:?}");
    assert_eq!(kept[0], *ids.last().unwrap());
    assert!(
        journal.usage_now().bytes <= 10_000,
        "{:?}",
        journal.usage_now()
    );
    // The newest step still restores.
    let newest = journal.step(kept[0]).unwrap();
    assert!(journal.restore(&newest).left.is_empty());
    assert_eq!(
        std::fs::read_to_string(root.join("f.txt")).unwrap(),
        "4".repeat(3000)
    );
}

#[test]
fn a_file_step_records_its_file_and_the_folders_it_made() {
    let (_t, root, journal) = setup(64 * MIB);
    write(&root, "other.txt", "untouched");
    let file = root.join("a/b/c.txt");
    let scope = Scope::File {
        root: root.clone(),
        file: file.clone(),
    };
    let pending = journal.begin(&scope, Overflow::Refuse).unwrap();
    write(&root, "a/b/c.txt", "new");
    let recorded = journal
        .finish(pending, "write_file", "a/b/c.txt")
        .unwrap()
        .unwrap();
    assert_eq!(recorded.summary, "1 file added");
    let step = journal.step(recorded.id).unwrap();
    assert!(journal.restore(&step).left.is_empty());
    assert!(!root.join("a").exists());
    assert!(root.join("other.txt").exists());
}

#[test]
fn a_journal_folder_that_is_a_link_is_refused() {
    let temp = tempfile::tempdir().unwrap();
    let real = temp.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = temp.path().join("journal");
    #[cfg(unix)]
    std::os::unix::fs::symlink(&real, &link).unwrap();
    #[cfg(windows)]
    if std::os::windows::fs::symlink_dir(&real, &link).is_err()
        || !link
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
    {
        // Wine makes the link but reports it as a plain folder (WINE.md).
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "!!! SKIPPED: this system cannot make, or does not report, a directory link !!!"
        );
        return;
    }
    let error = Journal::open(&link, limits(MIB)).err().unwrap();
    assert!(error.contains("is a link or a file"), "{error}");
}

#[test]
fn a_damaged_copy_is_never_restored() {
    let (_t, root, journal) = setup(64 * MIB);
    write(&root, "a.txt", "original");
    let recorded = step_of(&journal, &root, || write(&root, "a.txt", "changed")).unwrap();
    let step = journal.step(recorded.id).unwrap();
    let Some(Node::File { hash, .. }) = &step.changes[0].before else {
        panic!("a file before");
    };
    let copy = journal
        .dir()
        .join("blobs")
        .join(&hash[..2])
        .join(&hash[2..]);
    std::fs::write(copy, "tampered").unwrap();
    let restored = journal.restore(&step);
    assert!(restored.left[0].contains("damaged"), "{:?}", restored.left);
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "changed"
    );
}

/// A command that writes enough new bytes cannot push out a recent step
/// (the one that could undo what it destroyed): the next step that does
/// not fit is refused, so the user is asked, and the old step still
/// restores.
#[test]
fn churn_does_not_push_out_a_recent_step() {
    let (_t, root, journal) = setup(10_000);
    write(&root, "work.txt", &"w".repeat(3000));
    let lost = step_of(&journal, &root, || {
        std::fs::remove_file(root.join("work.txt")).unwrap();
        write(&root, "churn1.bin", &"1".repeat(4000));
    })
    .unwrap();
    write(&root, "churn2.bin", &"2".repeat(6000));
    let scope = Scope::Roots(vec![root.clone()]);
    assert!(matches!(
        journal.begin(&scope, Overflow::Refuse),
        Err(BeginError::OverBudget(_))
    ));
    let pending = journal.begin(&scope, Overflow::KeepWhatFits).unwrap();
    journal.finish(pending, "t", "t").unwrap();
    let step = journal.step(lost.id).expect("the step is still kept");
    assert!(journal.restore(&step).left.is_empty());
    assert_eq!(
        std::fs::read_to_string(root.join("work.txt")).unwrap(),
        "w".repeat(3000)
    );
}

/// A folder once recorded stays recorded when the project starts to
/// ignore it, so a later delete of it comes back; a step that makes the
/// root a repository does not claim the dependencies it now ignores.
#[test]
fn ignoring_a_folder_does_not_hide_it_from_the_journal() {
    let (_t, root, journal) = setup(64 * MIB);
    std::fs::create_dir_all(root.join(".git/info")).unwrap();
    write(&root, "bin/deploy.sh", "tracked script");
    step_of(&journal, &root, || write(&root, "a.txt", "a")).unwrap();
    write(&root, ".gitignore", "bin/\n");
    let recorded = step_of(&journal, &root, || {
        std::fs::remove_dir_all(root.join("bin")).unwrap();
    })
    .expect("the delete is recorded");
    let step = journal.step(recorded.id).unwrap();
    assert!(journal.restore(&step).left.is_empty());
    assert_eq!(
        std::fs::read_to_string(root.join("bin/deploy.sh")).unwrap(),
        "tracked script"
    );

    let (_t, plain, journal) = setup(64 * MIB);
    write(&plain, "node_modules/x/index.js", "x");
    write(&plain, "main.js", "m");
    let recorded = step_of(&journal, &plain, || {
        std::fs::create_dir_all(plain.join(".git/info")).unwrap();
    })
    .unwrap();
    let step = journal.step(recorded.id).unwrap();
    assert!(
        step.changes.iter().all(|c| c.rel.starts_with(".git")),
        "{:?}",
        step.changes
    );
    assert!(journal.restore(&step).left.is_empty());
    assert_eq!(
        std::fs::read_to_string(plain.join("node_modules/x/index.js")).unwrap(),
        "x"
    );
}

/// A file over the size cap changed in place (same size) since the step
/// is a conflict: putting the step back would destroy the later work.
#[test]
fn a_file_not_kept_that_changed_since_is_a_conflict() {
    let (_t, root, journal) = setup(64 * MIB);
    let big = "b".repeat(MIB as usize + 1);
    let recorded = step_of(&journal, &root, || write(&root, "big.db", &big)).unwrap();
    let later = SystemTime::now() + Duration::from_secs(5);
    std::fs::File::options()
        .write(true)
        .open(root.join("big.db"))
        .unwrap()
        .set_modified(later)
        .unwrap();
    let step = journal.step(recorded.id).unwrap();
    assert_eq!(journal.conflicts(&step).len(), 1);
}

/// A step file naming a path outside its root (damaged or forged) is not
/// a step.
#[test]
fn a_step_that_leads_outside_its_root_is_not_read() {
    let (_t, root, journal) = setup(64 * MIB);
    let recorded = step_of(&journal, &root, || write(&root, "a.txt", "a")).unwrap();
    let path = journal
        .dir()
        .join("steps")
        .join(steps::file_name(recorded.id));
    let text = std::fs::read_to_string(&path).unwrap();
    for forged in [
        text.replace("\"a.txt\"", "\"../outside.txt\""),
        text.replace("\"a.txt\"", "\"\""),
        text.replace("\"root\":0", "\"root\":7"),
    ] {
        assert_ne!(forged, text);
        std::fs::write(&path, &forged).unwrap();
        assert!(journal.step(recorded.id).is_none(), "{forged}");
    }
}

/// Where a file is over the size cap, the journal does not claim the
/// root: a loss there would not come back.
#[test]
fn a_root_with_a_file_not_kept_is_not_claimed() {
    let (temp, root, journal) = setup(64 * MIB);
    let other = dunce::canonicalize(temp.path()).unwrap().join("other");
    std::fs::create_dir(&other).unwrap();
    write(&root, "small.txt", "s");
    write(&other, "big.bin", &"b".repeat(MIB as usize + 1));
    let both = [root.clone(), other.clone()];
    assert_eq!(journal.keeping(&both), vec![root.clone()]);
    step_of(&journal, &other, || write(&other, "x.txt", "x"));
    assert_eq!(journal.keeping(&both), vec![root.clone()]);
}

/// A FIFO in the root is neither opened nor recorded: a step around it
/// finishes, and a restore next to it works.
#[cfg(unix)]
#[test]
fn a_fifo_in_the_root_never_blocks_a_step() {
    let (_t, root, journal) = setup(64 * MIB);
    write(&root, "a.txt", "a");
    let fifo = std::ffi::CString::new(root.join("pipe").display().to_string()).unwrap();
    let recorded = step_of(&journal, &root, || {
        // SAFETY: `fifo` is a NUL-terminated path alive for the call.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        std::fs::remove_file(root.join("a.txt")).unwrap();
    })
    .unwrap();
    assert_eq!(recorded.summary, "1 file removed");
    let step = journal.step(recorded.id).unwrap();
    assert!(journal.conflicts(&step).is_empty());
    assert!(journal.restore(&step).left.is_empty());
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "a");
}

/// A folder the step removed, where a link to a folder outside stands
/// now, is made again with `force`: the link goes, and the folder it
/// pointed at keeps its mode.
#[cfg(unix)]
#[test]
fn a_forced_restore_never_sets_a_mode_through_a_link() {
    use std::os::unix::fs::PermissionsExt;
    let (temp, root, journal) = setup(64 * MIB);
    let outside = temp.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::create_dir(root.join("d")).unwrap();
    std::fs::set_permissions(root.join("d"), std::fs::Permissions::from_mode(0o777)).unwrap();
    let recorded = step_of(&journal, &root, || {
        std::fs::remove_dir(root.join("d")).unwrap();
    })
    .unwrap();
    std::os::unix::fs::symlink(&outside, root.join("d")).unwrap();
    let step = journal.step(recorded.id).unwrap();
    assert_eq!(journal.conflicts(&step).len(), 1);
    journal.restore(&step);
    let mode = |p: &Path| p.symlink_metadata().unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode(&outside), 0o755);
    assert!(root.join("d").symlink_metadata().unwrap().is_dir());
    assert_eq!(mode(&root.join("d")), 0o777);
}

/// Outside a repository, a name builds share with sources is left out
/// only at the top of the root (`src/bin` is the project's own); a root
/// inside a repository takes that repository's rules.
#[test]
fn sources_under_a_build_name_are_kept_outside_and_below_a_repository() {
    let (_t, root, journal) = setup(64 * MIB);
    write(&root, "src/bin/tool.rs", "fn main() {}");
    write(&root, "bin/app", "built");
    write(&root, "web/node_modules/x/index.js", "x");
    let recorded = step_of(&journal, &root, || {
        std::fs::remove_dir_all(root.join("src")).unwrap();
        std::fs::remove_dir_all(root.join("bin")).unwrap();
        std::fs::remove_dir_all(root.join("web")).unwrap();
    })
    .unwrap();
    let step = journal.step(recorded.id).unwrap();
    let removed: Vec<&str> = step.changes.iter().map(|c| c.rel.as_str()).collect();
    assert!(removed.contains(&"src/bin/tool.rs"), "{removed:?}");
    assert!(
        !removed
            .iter()
            .any(|r| r.starts_with("bin") || r.contains("node_modules"))
    );

    let (_t, repo, _) = setup(64 * MIB);
    std::fs::create_dir_all(repo.join(".git/info")).unwrap();
    write(&repo, ".gitignore", "/app/out/\n");
    let app = repo.join("app");
    write(&app, "bin/deploy.sh", "tracked");
    write(&app, "out/data.bin", "built");
    let journal = Journal::open(&repo.with_file_name("journal2"), limits(64 * MIB)).unwrap();
    let recorded = step_of(&journal, &app, || {
        std::fs::remove_dir_all(app.join("bin")).unwrap();
        std::fs::remove_dir_all(app.join("out")).unwrap();
    })
    .unwrap();
    assert_eq!(recorded.summary, "1 file removed");
}

/// Another step that rewrites the root's record and evicts while a step
/// is in progress leaves that step's earlier copies alone.
#[test]
fn eviction_meanwhile_keeps_a_running_steps_copies() {
    let (_t, root, journal) = setup(10_000);
    let scope = Scope::Roots(vec![root.clone()]);
    step_of(&journal, &root, || {
        write(&root, "x.txt", &"x".repeat(3000));
        // Old enough to be trusted unchanged: the running step will not
        // read it again, so only the root's record names its copy.
        std::fs::File::options()
            .write(true)
            .open(root.join("x.txt"))
            .unwrap()
            .set_modified(SystemTime::now() - Duration::from_secs(60))
            .unwrap();
    })
    .unwrap();
    age_steps(&journal, PROTECTED.as_secs());
    let running = journal.begin(&scope, Overflow::Refuse).unwrap();
    std::fs::remove_file(root.join("x.txt")).unwrap();
    step_of(&journal, &root, || write(&root, "y.bin", &"y".repeat(6000))).unwrap();
    age_steps(&journal, PROTECTED.as_secs());
    write(&root, "z.bin", &"z".repeat(3000));
    let evicting = journal.begin(&scope, Overflow::KeepWhatFits).unwrap();
    journal.finish(evicting, "t", "t").unwrap();
    let recorded = journal.finish(running, "t", "t").unwrap().unwrap();
    let step = journal.step(recorded.id).unwrap();
    assert!(step.not_kept.is_empty(), "{:?}", step.not_kept);
    journal.restore(&step);
    assert_eq!(
        std::fs::read_to_string(root.join("x.txt")).unwrap(),
        "x".repeat(3000)
    );
}

/// A name that is not UTF-8 cannot be kept: the root is then not claimed
/// as kept whole.
#[cfg(target_os = "linux")]
#[test]
fn a_name_that_is_not_utf8_keeps_the_root_from_being_claimed() {
    use std::os::unix::ffi::OsStrExt;
    let (_t, root, journal) = setup(64 * MIB);
    write(&root, "a.txt", "a");
    let odd = root.join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    std::fs::create_dir(&odd).unwrap();
    std::fs::write(odd.join("work.txt"), "w").unwrap();
    let both = [root.clone()];
    assert!(journal.keeping(&both).is_empty());
    step_of(&journal, &root, || write(&root, "b.txt", "b")).unwrap();
    assert!(journal.keeping(&both).is_empty());
}

/// The first record of a root never follows ignore rules a file step is
/// writing: the root is recorded before.
#[test]
fn ignore_rules_written_before_any_command_hide_nothing() {
    let (_t, root, journal) = setup(64 * MIB);
    std::fs::create_dir_all(root.join(".git/info")).unwrap();
    write(&root, "bin/deploy.sh", "tracked script");
    let rules = Scope::File {
        root: root.clone(),
        file: root.join(".gitignore"),
    };
    let pending = journal.begin(&rules, Overflow::Refuse).unwrap();
    write(&root, ".gitignore", "bin/\n");
    journal.finish(pending, "write_file", ".gitignore").unwrap();
    let recorded = step_of(&journal, &root, || {
        std::fs::remove_dir_all(root.join("bin")).unwrap();
    })
    .expect("the delete is recorded");
    journal.restore(&journal.step(recorded.id).unwrap());
    assert_eq!(
        std::fs::read_to_string(root.join("bin/deploy.sh")).unwrap(),
        "tracked script"
    );
}
