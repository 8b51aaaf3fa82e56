//! The undo journal end to end: real git, the real binary, and every
//! destructive command users lose work to, each put back byte for byte.

use crate::common::{Sandbox, git, git_stdout, have_git};
use serde_json::json;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// A repository with committed, unstaged, staged, untracked and ignored
/// files, a second branch, a stash, and an ignored build folder.
fn seed(project: &Path) {
    let write = |rel: &str, text: &str| {
        let path = project.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    git(project, &["init", "-q", "-b", "main"]);
    write(".gitignore", "/target\n.env\n");
    write("README.md", "# project\r\n");
    write("src/main.c", "int main(void) { return 0; }\n");
    write("src/util.c", "int util(void) { return 1; }\n");
    git(project, &["add", "-A"]);
    git(project, &["commit", "-q", "-m", "first"]);
    git(project, &["checkout", "-q", "-b", "feature"]);
    write("src/feature.c", "int feature(void) { return 2; }\n");
    git(project, &["add", "-A"]);
    git(project, &["commit", "-q", "-m", "feature work"]);
    git(project, &["checkout", "-q", "main"]);
    write(
        "src/util.c",
        "int util(void) { return 42; } /* stashed */\n",
    );
    git(project, &["stash", "-q"]);
    write(
        "src/main.c",
        "int main(void) { return 7; } /* unstaged */\n",
    );
    write("src/staged.c", "/* staged */\n");
    git(project, &["add", "src/staged.c"]);
    write("notes.txt", "untracked notes\n");
    write(".env", "SECRET=1\n");
    write("target/debug/app", "built");
}

/// Every file under `project` but the ignored build folder, with its bytes
/// and mode, and every ref git knows with its reflog and the stash.
fn state(project: &Path) -> (BTreeMap<String, (Vec<u8>, u32)>, String) {
    let mut files = BTreeMap::new();
    let mut folders = vec![project.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(project).unwrap().display().to_string();
            if rel == "target" {
                continue;
            }
            let meta = path.symlink_metadata().unwrap();
            #[cfg(unix)]
            let mode = std::os::unix::fs::PermissionsExt::mode(&meta.permissions());
            #[cfg(not(unix))]
            let mode = u32::from(meta.permissions().readonly());
            if meta.is_dir() {
                files.insert(rel, (Vec::new(), mode));
                folders.push(path);
            } else {
                files.insert(rel, (std::fs::read(&path).unwrap(), mode));
            }
        }
    }
    let refs = git_stdout(
        project,
        &["for-each-ref", "--format=%(refname) %(objectname)"],
    );
    (files, refs)
}

/// The step id at the end of an answer.
fn step_of(answer: &str) -> u64 {
    let at = answer
        .rfind("[step ")
        .unwrap_or_else(|| panic!("no step in: {answer}"));
    answer[at + 6..].split(':').next().unwrap().parse().unwrap()
}

fn reseed(project: &Path) {
    std::fs::remove_dir_all(project).unwrap();
    std::fs::create_dir(project).unwrap();
    seed(project);
}

#[tokio::test]
async fn every_destructive_command_is_put_back_byte_for_byte() {
    if !have_git() {
        let _ = writeln!(
            std::io::stderr(),
            "!!! SKIPPED: git is not installed, so no repository can be seeded !!!"
        );
        return;
    }
    // Confined where the platform confines, and judged by the grammars.
    for sandbox_mode in ["auto", "off"] {
        destructive_commands_undone(sandbox_mode).await;
    }
}

async fn destructive_commands_undone(sandbox_mode: &str) {
    let (sandbox, project) = Sandbox::with_project();
    seed(&project);
    let client = sandbox
        .set("WAMCP_COMMAND_SANDBOX", sandbox_mode)
        .in_dir(&project)
        .connect()
        .await;
    let mut commands = vec![
        "git reset --hard",
        "git checkout -- README.md src/main.c",
        "git checkout -- .",
        "git clean -fdx",
        "git branch -D feature",
        "git stash clear",
        "git stash drop",
        "git rm -rf .",
        "git reflog expire --expire=now --all",
        "git branch -D feature && git reflog expire --expire=now --all && git gc --prune=now -q",
    ];
    if std::process::Command::new("cmake")
        .arg("--version")
        .output()
        .is_ok()
    {
        commands.push("cmake -E rm -rf src");
    } else {
        let _ = writeln!(
            std::io::stderr(),
            "!!! SKIPPED (one case): cmake is not installed !!!"
        );
    }
    for command in commands {
        reseed(&project);
        let before = state(&project);
        let answer = client
            .call_text("run_powershell", json!({"command": command}))
            .await;
        assert_ne!(
            state(&project),
            before,
            "{command} changed nothing: {answer}"
        );
        let step = step_of(&answer);
        let undone = client.call_text("undo", json!({"step": step})).await;
        assert!(
            undone.contains(&format!("Step {step} put back")),
            "{undone}"
        );
        assert!(!undone.contains("Not put back"), "{command}: {undone}");
        let after = state(&project);
        assert_eq!(after.1, before.1, "refs after undoing {command}");
        for (path, content) in &before.0 {
            assert_eq!(
                after.0.get(path),
                Some(content),
                "{path} after undoing {command} ({sandbox_mode})"
            );
        }
        assert_eq!(
            after.0.len(),
            before.0.len(),
            "paths after undoing {command}"
        );
    }
}

#[tokio::test]
async fn file_tools_and_a_script_are_undone_and_listed() {
    let (sandbox, project) = Sandbox::with_project();
    std::fs::write(project.join("a.txt"), "original\r\n").unwrap();
    let client = sandbox.in_dir(&project).connect().await;
    let written = client
        .call_text(
            "write_file",
            json!({"path": "a.txt", "content": "replaced\n", "overwrite": true}),
        )
        .await;
    let edited = client
        .call_text(
            "edit_file",
            json!({"path": "a.txt", "old_string": "replaced", "new_string": "edited"}),
        )
        .await;
    let (w, e) = (step_of(&written), step_of(&edited));
    assert!(e > w);
    let listed = client.call_text("undo", json!({})).await;
    let first = listed.lines().next().unwrap();
    assert!(first.starts_with(&format!("{e}  ")), "{listed}");
    assert!(
        first.contains("edit_file a.txt  -> 1 file changed"),
        "{listed}"
    );
    // The older step first: the newer one changed the same file since.
    let conflict = client.error_of("undo", json!({"step": w})).await;
    assert_eq!(conflict["type"], "UNDO_CONFLICT", "{conflict}");
    assert!(
        conflict["message"].as_str().unwrap().contains("a.txt"),
        "{conflict}"
    );
    assert_eq!(
        std::fs::read_to_string(project.join("a.txt")).unwrap(),
        "edited\n"
    );
    client
        .call_text("undo", json!({"step": w, "force": true}))
        .await;
    assert_eq!(
        std::fs::read(project.join("a.txt")).unwrap(),
        b"original\r\n"
    );
    let missing = client.error_of("undo", json!({"step": 999_999})).await;
    assert_eq!(missing["type"], "STEP_NOT_FOUND", "{missing}");
    let info = client.server_info().await;
    assert_eq!(info["undo"]["state"], "on", "{info}");
    assert!(info["undo"]["steps"].as_u64().unwrap() >= 3, "{info}");
}

#[tokio::test]
async fn a_step_over_the_budget_is_refused_where_the_client_cannot_ask() {
    let (sandbox, project) = Sandbox::with_project();
    std::fs::write(project.join("big.bin"), vec![7u8; 3 << 20]).unwrap();
    let client = sandbox
        .set("WAMCP_UNDO_BUDGET_MB", "1")
        .in_dir(&project)
        .connect()
        .await;
    let refused = client
        .error_of(
            "write_file",
            json!({"path": "big.bin", "content": "small", "overwrite": true}),
        )
        .await;
    assert_eq!(refused["type"], "UNDO_NOT_RECORDED", "{refused}");
    assert!(
        refused["message"].as_str().unwrap().contains("big.bin"),
        "{refused}"
    );
    assert_eq!(
        std::fs::read(project.join("big.bin")).unwrap().len(),
        3 << 20
    );
}

#[tokio::test]
async fn the_journal_off_records_nothing_and_undo_says_so() {
    let (sandbox, project) = Sandbox::with_project();
    let client = sandbox
        .set("WAMCP_UNDO_BUDGET_MB", "0")
        .in_dir(&project)
        .connect()
        .await;
    let written = client
        .call_text("write_file", json!({"path": "a.txt", "content": "x"}))
        .await;
    assert!(!written.contains("[step"), "{written}");
    let off = client.error_of("undo", json!({})).await;
    assert_eq!(off["type"], "CONFIGURATION_ERROR", "{off}");
}

#[tokio::test]
async fn a_journal_inside_a_root_is_refused_at_start_up() {
    let (sandbox, project) = Sandbox::with_project();
    let data = project.join("data");
    let client = sandbox
        .set("WAMCP_DATA_DIR", data.display().to_string())
        .in_dir(&project)
        .connect()
        .await;
    let info = client.server_info().await;
    assert_eq!(info["undo"]["state"], "unavailable", "{info}");
    assert!(
        info["undo"]["problem"]
            .as_str()
            .unwrap()
            .contains("where commands write"),
        "{info}"
    );
    let refused = client
        .error_of("write_file", json!({"path": "a.txt", "content": "x"}))
        .await;
    assert_eq!(refused["type"], "UNDO_NOT_RECORDED", "{refused}");
    assert!(!project.join("a.txt").exists());
}

#[tokio::test]
async fn the_terminal_lists_shows_and_restores() {
    let (sandbox, project) = Sandbox::with_project();
    std::fs::write(project.join("keep.txt"), "mine").unwrap();
    let client = sandbox.in_dir(&project).connect().await;
    client
        .call_text(
            "write_file",
            json!({"path": "keep.txt", "content": "overwritten", "overwrite": true}),
        )
        .await;
    let sandbox = client.close().await;
    let run = |args: &[&str]| {
        let out = sandbox
            .command(args)
            .current_dir(&project)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        (
            out.status.success(),
            text + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let (ok, listed) = run(&["undo"]);
    assert!(ok && listed.contains("write_file keep.txt"), "{listed}");
    let id = listed.split_whitespace().next().unwrap().to_string();
    let (ok, shown) = run(&["undo", "show", &id]);
    let changed = format!("~ {}", project.join("keep.txt").display());
    assert!(ok && shown.contains(&changed), "{shown}");
    let (ok, restored) = run(&["undo", "restore", &id]);
    assert!(ok, "{restored}");
    assert_eq!(
        std::fs::read_to_string(project.join("keep.txt")).unwrap(),
        "mine"
    );
    let (ok, gone) = run(&["undo", "restore", "424242"]);
    assert!(!ok && gone.contains("No step 424242"), "{gone}");
}

/// On Windows a command's step is recorded and put back like anywhere:
/// `xcopy /Y` (allowed by a user rule) overwrites a file, `attrib +r`
/// changes its mode; each comes back.
#[cfg(windows)]
#[tokio::test]
async fn a_windows_command_is_undone() {
    let (sandbox, project) = Sandbox::with_project();
    std::fs::create_dir_all(project.join("work")).unwrap();
    std::fs::create_dir_all(project.join("other")).unwrap();
    std::fs::write(project.join("work/a.txt"), "mine\r\n").unwrap();
    std::fs::write(project.join("other/a.txt"), "theirs").unwrap();
    let rules = sandbox.write(
        "rules.json",
        r#"{"rules": [{"id": "copy", "programs": ["xcopy", "attrib"], "decision": "allow",
            "justification": "copies files"}]}"#,
    );
    let client = sandbox
        .set("WAMCP_COMMAND_RULES", rules.display().to_string())
        .set("WAMCP_COMMAND_SANDBOX", "off")
        .in_dir(&project)
        .connect()
        .await;
    let a = project.join("work/a.txt");
    let copied = client
        .call_text(
            "run_powershell",
            json!({"command": "xcopy other\\a.txt work\\ /Y"}),
        )
        .await;
    assert_eq!(std::fs::read(&a).unwrap(), b"theirs", "{copied}");
    let undone = client
        .call_text("undo", json!({"step": step_of(&copied)}))
        .await;
    assert!(!undone.contains("Not put back"), "{undone}");
    assert_eq!(std::fs::read(&a).unwrap(), b"mine\r\n");
    let marked = client
        .call_text(
            "run_powershell",
            json!({"command": "attrib +r work\\a.txt"}),
        )
        .await;
    assert!(a.metadata().unwrap().permissions().readonly(), "{marked}");
    client
        .call_text("undo", json!({"step": step_of(&marked)}))
        .await;
    assert!(!a.metadata().unwrap().permissions().readonly());
}

/// A script the agent wrote deletes the sources; undo brings them back.
#[cfg(unix)]
#[tokio::test]
async fn a_script_the_agent_wrote_is_undone() {
    let (sandbox, project) = Sandbox::with_project();
    std::fs::create_dir_all(project.join("src/deep")).unwrap();
    std::fs::write(project.join("src/main.c"), "int main;\n").unwrap();
    std::fs::write(project.join("src/deep/x.h"), "#pragma once\n").unwrap();
    let client = sandbox.in_dir(&project).connect().await;
    client
        .call_text(
            "write_file",
            json!({"path": "tidy.py", "content": "import shutil\nshutil.rmtree('src')\n"}),
        )
        .await;
    let ran = client
        .call("run_powershell", json!({"command": "python3 tidy.py"}))
        .await;
    let text = ran.content[0].as_text().unwrap().text.clone();
    if ran.is_error == Some(true) {
        // Only the grammars posture refuses a script: no OS layer here.
        assert_ne!(
            client.server_info().await["command_posture"],
            "confined",
            "{text}"
        );
        let _ = writeln!(
            std::io::stderr(),
            "!!! SKIPPED: commands are not confined here !!!"
        );
        return;
    }
    assert!(!project.join("src").exists(), "{text}");
    client
        .call_text("undo", json!({"step": step_of(&text)}))
        .await;
    assert_eq!(
        std::fs::read(project.join("src/main.c")).unwrap(),
        b"int main;\n"
    );
    assert_eq!(
        std::fs::read(project.join("src/deep/x.h")).unwrap(),
        b"#pragma once\n"
    );
}

/// The journal is shared by every wamcp the user runs: an agent sees and
/// puts back only the steps made in the roots it writes now; another
/// project's steps stay with the agent working there (and the user).
#[tokio::test]
async fn an_agent_cannot_undo_another_projects_steps() {
    let (sandbox, project) = Sandbox::with_project();
    let other = sandbox.cwd.join("other");
    std::fs::create_dir_all(&other).unwrap();
    let elsewhere = Sandbox {
        dir: tempfile::tempdir().unwrap(),
        env: sandbox.env.clone(),
        cwd: other.clone(),
    }
    .set("WAMCP_PROJECT_ROOTS", other.display().to_string());
    let mine = sandbox.in_dir(&project).connect().await;
    let theirs = elsewhere.connect().await;
    let made = theirs
        .call_text(
            "write_file",
            json!({"path": "keep.txt", "content": "theirs"}),
        )
        .await;
    let id = step_of(&made);
    let listed = mine.call_text("undo", json!({})).await;
    assert!(!listed.contains("keep.txt"), "{listed}");
    let refused = mine
        .error_of("undo", json!({"step": id, "force": true}))
        .await;
    assert_eq!(refused["type"], "STEP_NOT_FOUND", "{refused}");
    assert_eq!(
        std::fs::read_to_string(other.join("keep.txt")).unwrap(),
        "theirs"
    );
    theirs.call_text("undo", json!({"step": id})).await;
    assert!(!other.join("keep.txt").exists());
}

/// Overwriting a file too large for the journal, with a write or with a
/// forced undo, could not be undone: the user is asked, and a client that
/// cannot ask gets a refusal with the file unchanged.
#[tokio::test]
async fn replacing_a_file_the_journal_cannot_keep_asks() {
    let (sandbox, project) = Sandbox::with_project();
    let client = sandbox.in_dir(&project).connect().await;
    let made = client
        .call_text("write_file", json!({"path": "app.db", "content": "v1"}))
        .await;
    let big = vec![b'd'; (64 << 20) + 1];
    std::fs::write(project.join("app.db"), &big).unwrap();
    for (tool, args) in [
        (
            "write_file",
            json!({"path": "app.db", "content": "small", "overwrite": true}),
        ),
        ("undo", json!({"step": step_of(&made), "force": true})),
    ] {
        let refused = client.error_of(tool, args).await;
        assert_eq!(refused["type"], "UNDO_NOT_RECORDED", "{tool}: {refused}");
        assert!(
            refused["message"].as_str().unwrap().contains("app.db"),
            "{refused}"
        );
        assert_eq!(
            std::fs::metadata(project.join("app.db")).unwrap().len(),
            big.len() as u64
        );
    }
}
