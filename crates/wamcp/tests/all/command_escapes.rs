//! Escapes through allowed programs, tried through the real binary against
//! real git, tar, python, node, cmake and gcc. Each attack's payload writes a
//! canary file outside every writable root. Every payload is first run
//! directly (without wamcp) to prove it really writes its canary; through
//! wamcp the canary must never appear. Everyday commands must still work.
//! Linux only: the programs are Debian's. Under `WAMCP_TEST_STRICT=1`
//! (scripts/test.sh) a missing program fails instead of skipping.
#![cfg(unix)]

use crate::common::{Client, Sandbox, git};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;

fn have(program: &str) -> bool {
    let found = Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found || std::env::var("WAMCP_TEST_STRICT").as_deref() != Ok("1"),
        "{program} is required under scripts/test.sh"
    );
    if !found {
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            format!(
                "\n!!! SKIPPED: {program} is not installed (scripts/test.sh installs it) !!!\n"
            )
            .as_bytes(),
        );
    }
    found
}

/// One argument per word, single-quoted for the command string.
fn command_line(argv: &[String]) -> String {
    let mut words = vec![argv[0].clone()];
    words.extend(
        argv[1..]
            .iter()
            .map(|a| format!("'{}'", a.replace('\'', "''"))),
    );
    words.join(" ")
}

/// A project with one commit (a.c, src/x.txt, t.tar) and a modified a.c.
fn seed_project(dir: &Path) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("a.c"), "int main(void){return 0;}\n").unwrap();
    std::fs::write(dir.join("src/x.txt"), "needle\n").unwrap();
    std::fs::write(dir.join("a.js"), "\n").unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", "one"]);
    std::fs::write(dir.join("a.c"), "int main(void){return 1;}\n").unwrap();
    let out = Command::new("tar")
        .args(["-cf", "t.tar", "src"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success());
}

/// Attacks as argv; `C` stands for the canary path.
fn attacks() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        ("git", vec!["git", "-C", ".", "-c", "alias.x=!touch C", "x"]),
        ("git", vec!["git", "-c", "diff.external=touch C", "diff"]),
        (
            "git",
            vec!["git", "-C", ".", "-c", "diff.external=touch C", "diff"],
        ),
        ("git", vec!["git", "grep", "-Otouch C", "needle"]),
        (
            "git",
            vec!["git", "grep", "--open-files-in-pag=touch C", "needle"],
        ),
        ("git", vec!["git", "fetch", "--upload-pac=touch C", "."]),
        ("git", vec!["git", "-c", "core.fsmonitor=touch C", "status"]),
        ("git", vec!["git", "-c", "Core.FSMonitor=touch C", "status"]),
        (
            "tar",
            vec![
                "tar",
                "--checkpoint=1",
                "--checkpoint-act=exec=touch C",
                "-cf",
                "o.tar",
                "src",
            ],
        ),
        ("tar", vec!["tar", "-xf", "t.tar", "--to-command=touch C"]),
        ("tar", vec!["tar", "-Itouch C", "-cf", "o.tar", "src"]),
        ("python3", vec!["python3", "-m", "timeit", "open('C','w')"]),
        ("python3", vec!["python3", "-Ic", "open('C','w')"]),
        (
            "python3",
            vec!["python3", "-mtimeit", "-s", "open('C','w')", "pass"],
        ),
        (
            "node",
            vec!["node", "-e", "require('fs').writeFileSync('C','')"],
        ),
        (
            "node",
            vec!["node", "-pe", "require('fs').writeFileSync('C','')"],
        ),
        (
            "node",
            vec![
                "node",
                "--import",
                "data:text/javascript,import fs from 'fs'; fs.writeFileSync('C','')",
                "a.js",
            ],
        ),
        ("cmake", vec!["cmake", "-E", "env", "touch", "C"]),
        ("cmake", vec!["cmake", "-E", "time", "touch", "C"]),
        (
            "gcc",
            vec!["gcc", "-wrapper", "sh,-c,touch C", "-c", "a.c", "-o", "a.o"],
        ),
    ]
}

fn with_canary(argv: &[&str], canary: &Path) -> Vec<String> {
    argv.iter().map(|a| substitute(a, canary)).collect()
}

/// Replaces the placeholder word `C` (alone, or after a space, `=` or `,`,
/// or inside quotes) with the canary path, leaving other capital Cs alone.
fn substitute(arg: &str, canary: &Path) -> String {
    let path = canary.display().to_string();
    let mut out = String::new();
    let chars: Vec<char> = arg.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let before = i.checked_sub(1).map(|j| chars[j]);
        let after = chars.get(i + 1);
        let alone = before.is_none_or(|b| " =,'\"".contains(b))
            && after.is_none_or(|a| " ,'\"".contains(*a));
        if c == 'C' && alone && arg != "-C" {
            out.push_str(&path);
        } else {
            out.push(c);
        }
    }
    out
}

#[tokio::test]
async fn one_call_escapes_through_allowed_programs_never_run() {
    // Control: each payload, run directly, really writes its canary.
    let control = tempfile::tempdir().unwrap();
    let control_dir = dunce::canonicalize(control.path()).unwrap();
    let mut usable = Vec::new();
    for (index, (program, argv)) in attacks().into_iter().enumerate() {
        if !have(program) {
            continue;
        }
        let work = control_dir.join(format!("w{index}"));
        seed_project(&work);
        let canary = control_dir.join(format!("canary{index}"));
        let args = with_canary(&argv, &canary);
        let _ = Command::new(&args[0])
            .args(&args[1..])
            .current_dir(&work)
            .output();
        assert!(
            canary.exists(),
            "the payload itself does not work: {args:?}"
        );
        usable.push(argv);
    }

    // Without the OS layer the grammars refuse every one; with it, a
    // payload may run, confined, and still writes nothing outside.
    for mode in ["off", "auto"] {
        let (sandbox, project) = Sandbox::with_project();
        seed_project(&project);
        let outside = sandbox.cwd.join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        let client = sandbox.set("WAMCP_COMMAND_SANDBOX", mode).connect().await;
        let confined = client.server_info().await["command_posture"] == "confined";
        for (index, argv) in usable.iter().enumerate() {
            let canary = outside.join(format!("canary{index}"));
            let command = command_line(&with_canary(argv, &canary));
            for tool in ["run_powershell", "build_project"] {
                let result = client.call(tool, json!({"command": command})).await;
                if !confined {
                    assert_eq!(result.is_error, Some(true), "{tool} {command}: {result:?}");
                }
            }
            assert!(!canary.exists(), "escaped ({mode}): {command}");
        }
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0, "{mode}");
        client.close().await;
    }
}

async fn refused(client: &Client, tool: &str, args: serde_json::Value) -> String {
    let error = client.error_of(tool, args).await;
    error["type"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn two_call_escapes_through_git_configuration_never_run() {
    if !have("git") {
        return;
    }
    let (sandbox, project) = Sandbox::with_project();
    seed_project(&project);
    let outside = sandbox.cwd.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let canary = outside.join("canary");
    let touch = format!("touch {}", canary.display());
    let client = sandbox.connect().await;

    // Plant through git config: refused in every posture (what git config
    // writes outlives the command). The trigger runs nothing it could plant.
    for command in [
        format!("git config alias.zz '!{touch}'"),
        format!("git config core.fsmonitor '{touch}'"),
        format!("git config --add core.sshCommand '{touch}'"),
    ] {
        let kind = refused(&client, "run_powershell", json!({"command": command})).await;
        assert_eq!(kind, "COMMAND_NOT_ALLOWED", "{command}");
    }
    let _ = client
        .call("run_powershell", json!({"command": "git zz"}))
        .await;
    assert!(!canary.exists(), "git zz ran a planted alias");
    // Plant through the file tools: git's own files ask, and this client cannot answer.
    for path in [
        "proj/.git/config",
        "proj/.git/hooks/pre-commit",
        "proj/.GIT/hooks/post-checkout",
    ] {
        let kind = refused(
            &client,
            "write_file",
            json!({"path": path, "content": format!("#!/bin/sh\n{touch}\n"), "overwrite": true}),
        )
        .await;
        assert_eq!(kind, "PROTECTED_PATH", "{path}");
    }
    let kind = refused(
        &client,
        "edit_file",
        json!({"path": "proj/.git/config", "old_string": "[core]", "new_string": format!("[core]\n\tfsmonitor = {touch}")}),
    )
    .await;
    assert_eq!(kind, "PROTECTED_PATH");

    // A bare repository written file by file brings its own configuration:
    // git must not adopt it (safe.bareRepository=explicit in its environment).
    let files = [
        ("proj/evil/HEAD", "ref: refs/heads/main\n".to_string()),
        (
            "proj/evil/config",
            format!(
                "[core]\n\trepositoryformatversion = 0\n\tbare = true\n\tsshCommand = {touch}\n\
                 [remote \"origin\"]\n\turl = ssh://example.invalid/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
            ),
        ),
        ("proj/evil/objects/info/keep", String::new()),
        ("proj/evil/refs/heads/keep", String::new()),
    ];
    for (path, content) in &files {
        let result = client
            .call("write_file", json!({"path": path, "content": content}))
            .await;
        assert_eq!(result.is_error, Some(false), "{path}: {result:?}");
    }
    let _ = client
        .call(
            "run_powershell",
            json!({"command": "git -C evil fetch origin"}),
        )
        .await;
    assert!(
        !canary.exists(),
        "the planted bare repository ran its sshCommand"
    );
    // Control: the same repository, used by git directly, does run it.
    let _ = Command::new("git")
        .args(["-C", "evil", "fetch", "origin"])
        .current_dir(&project)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output();
    assert!(
        canary.exists(),
        "control: the planted repository should run its command"
    );
    client.close().await;
}

#[tokio::test]
async fn everyday_commands_still_work() {
    if !(have("git") && have("tar") && have("python3")) {
        return;
    }
    let (sandbox, project) = Sandbox::with_project();
    seed_project(&project);
    std::fs::create_dir_all(project.join("tests")).unwrap();
    std::fs::write(
        project.join("tests/test_a.py"),
        "import unittest\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        self.assertTrue(True)\n",
    )
    .unwrap();
    std::fs::write(project.join("hello.js"), "console.log('hello from node')\n").unwrap();
    let client = sandbox.connect().await;
    let mut commands = vec![
        (
            "git -c user.name=t -c user.email=t@t commit -am two",
            "1 file changed",
        ),
        ("git log --oneline -n 5", "two"),
        ("git -C src status --short", ""),
        ("git archive -o out.zip HEAD", ""),
        ("tar -cf b.tar src", ""),
        ("tar -tf b.tar", "src/x.txt"),
        ("python3 -m unittest discover -s tests -q", "OK"),
    ];
    if have("node") {
        commands.push(("node hello.js", "hello from node"));
    }
    if have("cmake") {
        commands.push(("cmake -E make_directory made", ""));
    }
    for (command, expect) in commands {
        let result = client
            .call("run_powershell", json!({"command": command}))
            .await;
        assert_eq!(result.is_error, Some(false), "{command}: {result:?}");
        let text = &result.content[0].as_text().unwrap().text;
        assert!(text.contains("--- EXIT CODE: 0 ---"), "{command}: {text}");
        assert!(text.contains(expect), "{command}: {text}");
    }
    assert!(project.join("out.zip").is_file());
    assert!(project.join("made").is_dir() || !have("cmake"));
    client.close().await;
}

#[tokio::test]
async fn a_program_named_by_its_path_runs_unless_it_lives_in_a_root() {
    if !have("git") {
        return;
    }
    let (sandbox, project) = Sandbox::with_project();
    let git_path: PathBuf = String::from_utf8(
        Command::new("sh")
            .args(["-c", "command -v git"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .into();
    std::fs::write(project.join("git"), "#!/bin/sh\ntouch planted\n").unwrap();
    let client = sandbox.set("WAMCP_COMMAND_SANDBOX", "off").connect().await;
    let result = client
        .call(
            "run_powershell",
            json!({"command": format!("'{}' --version", git_path.display())}),
        )
        .await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert!(
        result.content[0]
            .as_text()
            .unwrap()
            .text
            .contains("git version")
    );
    let inside = project.join("git").display().to_string();
    let error = client
        .error_of(
            "run_powershell",
            json!({"command": format!("'{inside}' status")}),
        )
        .await;
    assert_eq!(error["type"], "COMMAND_NOT_ALLOWED");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("inside a writable root"),
        "{error}"
    );
    let error = client
        .error_of("run_powershell", json!({"command": "./git status"}))
        .await;
    assert!(
        error["message"].as_str().unwrap().contains("relative path"),
        "{error}"
    );
    assert!(!project.join("planted").exists());
    client.close().await;
}

/// Where commands run confined, a program in the project runs by its path,
/// confined, and never with the network its name would get from a grammar:
/// a planted `git` asked to `fetch` cannot reach a listener on loopback.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn confined_a_program_in_a_root_never_borrows_a_grammars_network() {
    if !have("python3") {
        return;
    }
    let (sandbox, project) = Sandbox::with_project();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let planted = project.join("git");
    std::fs::write(
        &planted,
        format!(
            "#!/bin/sh\ntouch ran\npython3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3)\" \
             && touch connected\n"
        ),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    // A link named like git that leads to python, which then runs a
    // project file called `fetch`: judged as git, run as python.
    let python = Command::new("sh")
        .args(["-c", "command -v python3"])
        .output()
        .unwrap()
        .stdout;
    let python = String::from_utf8(python).unwrap();
    std::fs::create_dir_all(project.join("bin")).unwrap();
    std::os::unix::fs::symlink(python.trim(), project.join("bin/git")).unwrap();
    std::fs::write(
        project.join("fetch"),
        format!(
            "import socket\nopen('ran-link', 'w')\nsocket.create_connection(('127.0.0.1', {port}), timeout=3)\n\
             open('connected', 'w')\n"
        ),
    )
    .unwrap();
    let client = sandbox.connect().await;
    assert_eq!(client.server_info().await["command_posture"], "confined");
    for command in [
        "bin/git fetch",
        "./git fetch origin",
        &format!("'{}' push origin main", planted.display()),
    ] {
        let result = client
            .call("run_powershell", json!({"command": command}))
            .await;
        assert_eq!(result.is_error, Some(false), "{command}: {result:?}");
    }
    assert!(
        project.join("ran").exists(),
        "the planted program did not run at all"
    );
    assert!(!project.join("connected").exists());
    assert!(
        listener.accept().is_err(),
        "a connection reached the listener"
    );
    client.close().await;
}

/// A program found by name is the one the search trusts, not the one
/// `execvp` would take: a link in a trusted `PATH` folder that leads into
/// the project (as `npm link` makes) is passed over for the real program.
#[cfg(unix)]
#[tokio::test]
async fn a_name_on_path_that_links_into_a_root_is_passed_over() {
    if !have("git") {
        return;
    }
    let (sandbox, project) = Sandbox::with_project();
    let planted = project.join("git");
    std::fs::write(&planted, "#!/bin/sh\ntouch planted\n").unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let tools = sandbox.root().join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    std::os::unix::fs::symlink(&planted, tools.join("git")).unwrap();
    let path = format!(
        "{}:{}",
        tools.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let client = sandbox.set("PATH", path).connect().await;
    let text = client
        .call_text("run_powershell", json!({"command": "git --version"}))
        .await;
    assert!(text.contains("git version"), "{text}");
    assert!(!project.join("planted").exists(), "the linked program ran");
    client.close().await;
}

/// A repository's own `.git/config` may come from anywhere (an archive,
/// or a confined command where no private view keeps `.git` read-only).
/// The programs it names must not run when git runs through wamcp:
/// fsmonitor on status, sshCommand on fetch, and no hook (it would run as
/// git's child with `.git` writable), which the answer says. The canaries are
/// inside the root, where a command may write, so only the pinned settings
/// stop them.
#[tokio::test]
async fn programs_a_rewritten_git_config_names_never_run() {
    if !have("git") {
        return;
    }
    let (sandbox, project) = Sandbox::with_project();
    seed_project(&project);
    let ran = |what: &str| project.join(format!("ran-{what}"));
    let mut config = std::fs::read_to_string(project.join(".git/config")).unwrap();
    config.push_str(&format!(
        "[core]\n\tfsmonitor = touch {}\n\tsshCommand = touch {}\n\
         [remote \"origin\"]\n\turl = ssh://example.invalid/r.git\n",
        ran("fsmonitor").display(),
        ran("ssh").display()
    ));
    std::fs::write(project.join(".git/config"), config).unwrap();
    let hook = project.join(".git/hooks/post-checkout");
    std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
    std::fs::write(
        &hook,
        format!("#!/bin/sh\ntouch {}\n", ran("hook").display()),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let client = sandbox.connect().await;
    let status = client
        .call_text("run_powershell", json!({"command": "git status --short"}))
        .await;
    assert!(status.contains("a.c"), "{status}");
    let switched = client
        .call_text(
            "run_powershell",
            json!({"command": "git checkout -q -b feature"}),
        )
        .await;
    assert!(switched.contains("EXIT CODE: 0"), "{switched}");
    let _ = client
        .call("run_powershell", json!({"command": "git fetch origin"}))
        .await;
    for what in ["fsmonitor", "ssh"] {
        assert!(!ran(what).exists(), "the planted {what} ran");
    }
    assert!(!ran("hook").exists(), "the hook ran: {switched}");
    assert!(switched.contains("hooks did not run"), "{switched}");
    // Control: git run directly obeys the file and runs them.
    let direct = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(&project)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap()
    };
    direct(&["status", "--short"]);
    direct(&["checkout", "-q", "-b", "control"]);
    assert!(
        ran("fsmonitor").exists() && ran("hook").exists(),
        "control: the payloads run"
    );
    client.close().await;
}
