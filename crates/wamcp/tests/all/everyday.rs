//! A normal day's work through the real binary, in both postures: where
//! the OS layer confines commands (Linux), the project's own programs,
//! build tools without a grammar and inline code run, and the line idioms
//! are performed by wamcp; with `WAMCP_COMMAND_SANDBOX=off` the grammars
//! alone decide, as before. Effects, not decisions, are what is checked:
//! a file the project's build wrote, a canary outside the roots that never
//! appears.

use crate::common::{self, Sandbox};
use serde_json::json;

/// A project with a C program built by make and by CMake, a git
/// repository, and an npm package installed in its `node_modules`.
#[cfg(unix)]
fn project() -> (Sandbox, std::path::PathBuf) {
    let (sandbox, project) = Sandbox::with_project();
    let write = |file: &str, text: &str| {
        let path = project.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "hello.c",
        "#include <stdio.h>\nint main(void){puts(\"hello from the build\");return 0;}\n",
    );
    write("Makefile", "hello: hello.c\n\tcc -o hello hello.c\n");
    write(
        "CMakeLists.txt",
        "cmake_minimum_required(VERSION 3.10)\nproject(hi C)\nadd_executable(hi hello.c)\n",
    );
    write(
        "node_modules/greet/package.json",
        r#"{"name": "greet", "version": "1.0.0", "bin": {"greet": "cli.js"}}"#,
    );
    write(
        "node_modules/greet/cli.js",
        "#!/usr/bin/env node\nconsole.log('greet ' + process.argv.slice(2).join(' '));\n",
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let cli = project.join("node_modules/greet/cli.js");
        std::fs::set_permissions(&cli, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::create_dir_all(project.join("node_modules/.bin")).unwrap();
        std::os::unix::fs::symlink("../greet/cli.js", project.join("node_modules/.bin/greet"))
            .unwrap();
    }
    common::git(&project, &["init", "-q"]);
    (sandbox, project)
}

async fn run(client: &common::Client, command: &str) -> Result<String, String> {
    let result = client
        .call(
            "run_powershell",
            json!({"command": command, "working_directory": "proj"}),
        )
        .await;
    let text = result.content[0].as_text().unwrap().text.clone();
    match result.is_error {
        Some(true) => Err(text),
        _ => Ok(text),
    }
}

#[cfg(target_os = "linux")]
fn have(program: &str) -> bool {
    let found = std::process::Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    // scripts/test.sh installs every program: there a missing one fails.
    assert!(
        found || std::env::var("WAMCP_TEST_STRICT").as_deref() != Ok("1"),
        "{program} is required under scripts/test.sh"
    );
    found
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn confined_a_days_work_runs_and_nothing_leaves_the_roots() {
    if !["cmake", "make", "cc", "node", "python3"]
        .iter()
        .all(|p| have(p))
    {
        eprintln!(
            "!!! SKIPPED: cmake, make, cc, node or python3 missing (scripts/test.sh installs them) !!!"
        );
        return;
    }
    let (sandbox, project) = project();
    let canary = sandbox.root().join("canary.txt");
    // The undo journal off: what loses work is asked about, and what a
    // line's earlier commands changed is judged again (with the journal on,
    // undo brings it back instead: tests/all/undo.rs).
    let client = sandbox.set("WAMCP_UNDO_BUDGET_MB", "0").connect().await;
    assert_eq!(client.server_info().await["command_posture"], "confined");
    // A build tool without a grammar, then the program it built.
    let made = run(&client, "make && ./hello").await.unwrap();
    assert!(made.contains("=== make ==="), "{made}");
    assert!(made.contains("hello from the build"), "{made}");
    // CMake configure and build, the project-built executable through a filter.
    let cmake = run(
        &client,
        "cmake -S . -B build 2>&1 | tail -n 3 && cmake --build build",
    )
    .await
    .unwrap();
    assert!(cmake.contains("--- EXIT CODE: 0 ---"), "{cmake}");
    assert!(project.join("build/hi").is_file(), "{cmake}");
    let hi = run(&client, "cd build && ./hi | grep -c hello")
        .await
        .unwrap();
    assert!(
        hi.starts_with("--- STDOUT after the filters ---\n1\n"),
        "{hi}"
    );
    // A venv the command made, and its own python.
    let venv = run(
        &client,
        "python3 -m venv .venv && .venv/bin/python -c 'import sys; print(sys.prefix)'",
    )
    .await
    .unwrap();
    assert!(
        venv.contains(&project.join(".venv").display().to_string()),
        "{venv}"
    );
    // npx of a package the project installed runs it, with no download.
    let greet = run(&client, "npx greet the day").await.unwrap();
    assert!(greet.contains("greet the day"), "{greet}");
    // git with variables and a heredoc message.
    let commit = "git add hello.c && GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b GIT_COMMITTER_NAME=a \
                  GIT_COMMITTER_EMAIL=a@b git commit -q -m \"$(cat <<'EOF'\nFirst commit\n\nWith a body.\nEOF\n)\" \
                  && git log -1 --format=%B";
    let logged = run(&client, commit).await.unwrap();
    assert!(logged.contains("First commit\n\nWith a body."), "{logged}");
    // Inline code runs, confined: it writes in the project, never outside.
    let code = format!(
        "python3 -c \"open('inside.txt','w').write('x'); open(r'{}','w').write('x')\"",
        canary.display()
    );
    let wrote = run(&client, &code).await.unwrap();
    assert!(project.join("inside.txt").is_file(), "{wrote}");
    assert!(!canary.exists(), "{wrote}");
    // What loses work still asks (and this client cannot be asked).
    let reset = run(&client, "git reset --hard").await.unwrap_err();
    assert!(reset.contains("cannot be undone"), "{reset}");
    // A delete judged harmless when the line was read ("build" is a build's)
    // is judged again after the commands before it ran: src is kept.
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(project.join("src/work.c"), "int x;\n").unwrap();
    std::fs::remove_dir_all(project.join("build")).unwrap();
    for line in [
        "ln -s src build && rm -rf build/",
        "mv src build && rm -rf build",
    ] {
        let stopped = run(&client, line).await.unwrap_err();
        assert!(
            stopped.contains("was not run: after the commands before it"),
            "{line}: {stopped}"
        );
        let kept = ["src/work.c", "build/work.c"]
            .iter()
            .any(|f| project.join(f).is_file());
        assert!(kept, "{line}");
        if project.join("build").is_symlink() {
            std::fs::remove_file(project.join("build")).unwrap();
        }
    }
    // Work moved into a build folder that was already there.
    std::fs::create_dir_all(project.join("out")).unwrap();
    std::fs::write(project.join("notes.txt"), "mine\n").unwrap();
    let stopped = run(&client, "mv notes.txt out/ && rm -rf out")
        .await
        .unwrap_err();
    assert!(stopped.contains("is not what it was"), "{stopped}");
    assert!(project.join("out/notes.txt").is_file());
    // A link made on the line, named like a harmless program, is judged as
    // what it leads to: rm, or git writing its configuration.
    std::fs::create_dir_all(project.join("keep")).unwrap();
    std::fs::write(project.join("keep/x.c"), "int y;\n").unwrap();
    for line in [
        "ln -s /bin/rm make && ./make -rf keep",
        "ln -s /usr/bin/git g && ./g config core.fsmonitor ./x",
    ] {
        let stopped = run(&client, line).await.unwrap_err();
        assert!(stopped.contains("now leads to"), "{line}: {stopped}");
    }
    assert!(project.join("keep/x.c").is_file());
    let config = std::fs::read_to_string(project.join(".git/config")).unwrap();
    assert!(!config.contains("fsmonitor"), "{config}");
    // The same in a second call: judged as rm, which asks; as git, refused.
    assert!(
        run(&client, "./make -rf keep")
            .await
            .unwrap_err()
            .contains("cannot be undone")
    );
    assert!(
        run(&client, "./g config core.fsmonitor ./x")
            .await
            .unwrap_err()
            .contains("COMMAND_NOT_ALLOWED")
    );
    assert!(project.join("keep/x.c").is_file());
    client.close().await;
}

#[cfg(unix)]
#[tokio::test]
async fn unconfined_the_grammars_alone_decide_as_before() {
    let (sandbox, project) = project();
    let client = sandbox.set("WAMCP_COMMAND_SANDBOX", "off").connect().await;
    assert_eq!(client.server_info().await["command_posture"], "grammars");
    for command in [
        "make",
        "./hello",
        ".venv/bin/python -V",
        "python3 -c 'print(1)'",
        "npx greet x",
    ] {
        let refused: serde_json::Value =
            serde_json::from_str(&run(&client, command).await.unwrap_err()).unwrap();
        assert_eq!(
            refused["error"]["posture"], "grammars",
            "{command}: {refused}"
        );
    }
    // The idioms around allowed commands work here too.
    let status = run(
        &client,
        "git status --short 2>&1 | grep -c Makefile || git status",
    )
    .await
    .unwrap();
    assert!(
        status.starts_with(
            "=== git status --short ===\n--- STDOUT+STDERR after the filters ---\n1\n"
        ),
        "{status}"
    );
    assert!(
        status.ends_with("=== git status ===\n(not run: the command before it succeeded)\n"),
        "{status}"
    );
    assert!(!project.join("hello").exists());
    client.close().await;
}

/// The idioms around allowed programs, on every platform and in both
/// postures (under Wine: the grammars posture, through `npm.cmd`): each
/// command's part of the answer, the filters applied, a chain that stops
/// where its operator says, and a line refused whole.
#[tokio::test]
async fn the_idioms_answer_per_command_in_both_postures() {
    for mode in ["auto", "off"] {
        let (sandbox, _project) = Sandbox::with_project();
        let path = crate::run_tools::shim_tools(&sandbox);
        let client = sandbox
            .set("PATH", path)
            .set("WAMCP_COMMAND_SANDBOX", mode)
            .connect()
            .await;
        let answer = run(
            &client,
            "npm run build -- one && npm run build -- two 2>&1 | findstr two",
        )
        .await
        .unwrap();
        let sections: Vec<&str> = answer.split("=== ").collect();
        assert_eq!(sections.len(), 3, "{mode}: {answer}");
        assert!(
            sections[1].starts_with("npm run build -- one ===\n--- STDOUT ---\n"),
            "{answer}"
        );
        assert!(
            sections[1].contains("npm-args: run build -- one"),
            "{answer}"
        );
        assert!(
            sections[2].starts_with(
                "npm run build -- two ===\n--- STDOUT+STDERR after the filters ---\nnpm-args: run build -- two\n--- STDERR ---\n(merged into the output above)\n"
            ),
            "{mode}: {answer}"
        );
        assert!(answer.ends_with("--- EXIT CODE: 0 ---\n"), "{answer}");
        let stopped = run(&client, "npm run build -- one | findstr nothing && npm run build -- two || npm run build -- three")
            .await
            .unwrap();
        assert!(
            stopped
                .contains("=== npm run build -- two ===\n(not run: a command before it failed)\n"),
            "{stopped}"
        );
        assert!(
            stopped.contains("npm-args: run build -- three"),
            "{stopped}"
        );
        let counted = run(&client, "npm run build -- x | Measure-Object -Line")
            .await
            .unwrap();
        let lines = if cfg!(windows) { "3" } else { "1" };
        assert!(
            counted.starts_with(&format!("--- STDOUT after the filters ---\n{lines}\n")),
            "{counted}"
        );
        if mode == "off" {
            let refused = run(&client, "npm run build -- one && calc")
                .await
                .unwrap_err();
            assert!(
                refused.contains("'calc' is not on the allowlist"),
                "{refused}"
            );
        }
        client.close().await;
    }
}
