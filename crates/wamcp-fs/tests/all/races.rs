//! A command racing a search: folders and files the walk listed are
//! swapped, again and again, with links to a secret store. The store's
//! contents must never reach an answer, and the search must still answer.

use crate::navigate::Never;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use wamcp_fs::{Bounds, SearchRequest, Secrets, search_files};

const CANARY: &str = "CANARY-FROM-THE-KEY-STORE";

/// Swaps the two paths' entries atomically (`renameat2(RENAME_EXCHANGE)`).
fn exchange(a: &Path, b: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let a = std::ffi::CString::new(a.as_os_str().as_bytes()).unwrap();
    let b = std::ffi::CString::new(b.as_os_str().as_bytes()).unwrap();
    // SAFETY: both are NUL-terminated paths that live across the call.
    let done = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    assert_eq!(done, 0, "{}", std::io::Error::last_os_error());
}

/// `home/.ssh` (a store holding the canary) and `proj`, where 40 folders
/// and 40 files each have a twin link into the store.
fn racing_tree() -> (tempfile::TempDir, PathBuf, Secrets) {
    let dir = tempfile::tempdir().unwrap();
    let base = dunce::canonicalize(dir.path()).unwrap();
    let store = base.join("home/.ssh");
    std::fs::create_dir_all(&store).unwrap();
    std::fs::write(store.join("id_ed25519"), format!("{CANARY}\n")).unwrap();
    let project = base.join("proj");
    for i in 0..40 {
        let folder = project.join(format!("d{i:02}"));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("id_ed25519"), "plain text\n").unwrap();
        std::os::unix::fs::symlink(&store, project.join(format!("l{i:02}"))).unwrap();
        std::fs::write(project.join(format!("f{i:02}.txt")), "plain text\n").unwrap();
        std::os::unix::fs::symlink(
            store.join("id_ed25519"),
            project.join(format!("g{i:02}.txt")),
        )
        .unwrap();
    }
    let secrets = Secrets::new([(store, "SSH keys".to_string())]).with_roots(vec![project.clone()]);
    (dir, project, secrets)
}

#[cfg(target_os = "linux")]
#[test]
fn swapping_listed_entries_for_links_never_reveals_a_store() {
    let (_dir, project, secrets) = racing_tree();
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, project) = (stop.clone(), project.clone());
        std::thread::spawn(move || {
            let mut rounds = 0u32;
            while !stop.load(Ordering::Relaxed) {
                for i in 0..40 {
                    exchange(
                        &project.join(format!("d{i:02}")),
                        &project.join(format!("l{i:02}")),
                    );
                    exchange(
                        &project.join(format!("f{i:02}.txt")),
                        &project.join(format!("g{i:02}.txt")),
                    );
                }
                rounds += 1;
            }
            rounds
        })
    };
    let request = SearchRequest {
        pattern: "CANARY",
        path: ".",
        file_glob: "",
        ignore_case: false,
        regex: false,
        max_results: 100,
    };
    let mut answers = Vec::new();
    for _ in 0..150 {
        let progress = AtomicUsize::new(0);
        let bounds = Bounds {
            budget: &Never,
            progress: &progress,
            threads: Some(2),
            secrets: &secrets,
        };
        answers.push(search_files(&request, &project, &bounds).unwrap());
    }
    stop.store(true, Ordering::Relaxed);
    let rounds = swapper.join().unwrap();
    assert!(rounds > 0, "the swaps ran");
    for answer in &answers {
        assert!(!answer.contains(CANARY), "{answer}");
        assert!(answer.contains("No match ("), "{answer}");
    }
}
