//! run_powershell over MCP: refusals, exact argv delivery, timeouts.

use crate::common;
use std::io::Write;

use crate::common::Sandbox;
use serde_json::{Value, json};

async fn error_type(client: &common::Client, args: Value) -> String {
    let result = client.call("run_powershell", args.clone()).await;
    assert_eq!(result.is_error, Some(true), "{args}: {result:?}");
    result.structured_content.unwrap()["error"]["type"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn refusals_come_before_anything_runs() {
    // The grammars posture: where the OS layer confines commands, inline
    // code and unknown programs run (tests/all/everyday.rs).
    let (sandbox, project) = Sandbox::with_project();
    let client = sandbox.set("WAMCP_COMMAND_SANDBOX", "off").connect().await;
    let marker = project.join("ran.txt");
    for (command, kind) in [
        ("git status; calc", "COMMAND_NOT_ALLOWED"),
        ("git log | xargs calc", "COMMAND_NOT_ALLOWED"),
        ("python -c 'open(\"ran.txt\",\"w\")'", "COMMAND_NOT_ALLOWED"),
        ("cmd /c echo x > ran.txt", "COMMAND_NOT_ALLOWED"),
        ("powershell -Command x", "COMMAND_NOT_ALLOWED"),
        ("git -c alias.x=!calc x", "COMMAND_NOT_ALLOWED"),
        ("", "INVALID_COMMAND"),
    ] {
        assert_eq!(
            error_type(&client, json!({"command": command})).await,
            kind,
            "{command}"
        );
    }
    let outside = json!({"command": "git status", "working_directory": ".."});
    assert_eq!(
        error_type(&client, outside).await,
        "WORKING_DIRECTORY_NOT_ALLOWED"
    );
    // The command is judged first: a refused command with a bad directory names the command.
    let both = json!({"command": "calc", "working_directory": ".."});
    assert_eq!(error_type(&client, both).await, "COMMAND_NOT_ALLOWED");
    assert!(!marker.exists());
    client.close().await;
}

/// Quoted metacharacters reach the program as part of one argument, exactly.
#[cfg(unix)]
#[tokio::test]
async fn quoted_metacharacters_arrive_as_one_argument() {
    let (sandbox, project) = Sandbox::with_project();
    std::fs::write(
        project.join("argv.py"),
        "import json, sys\nprint(json.dumps(sys.argv[1:]))\n",
    )
    .unwrap();
    let client = sandbox.connect().await;
    let command = r#"python3 argv.py 'a;b|c && d' "it's $ 5" --x="(y)" plain"#;
    let result = client
        .call(
            "run_powershell",
            json!({"command": command, "working_directory": "proj"}),
        )
        .await;
    let text = result.content[0].as_text().unwrap().text.clone();
    assert!(text.starts_with("--- STDOUT ---\n[\"a;b|c && d\", \"it's $ 5\", \"--x=(y)\", \"plain\"]\n--- STDERR ---\n"), "{text}");
    assert!(text.ends_with("--- EXIT CODE: 0 ---\n"), "{text}");
    client.close().await;
}

#[cfg(unix)]
#[tokio::test]
async fn a_timeout_kills_the_tree_and_keeps_the_partial_output() {
    let (sandbox, project) = Sandbox::with_project();
    std::fs::write(
        project.join("slow.py"),
        "import subprocess, sys, time\nprint('started', flush=True)\nsubprocess.Popen(['sleep', '60'])\ntime.sleep(60)\n",
    )
    .unwrap();
    let client = sandbox.connect().await;
    let result = client
        .call(
            "run_powershell",
            json!({"command": "python3 slow.py", "timeout_seconds": 2}),
        )
        .await;
    let envelope = result.structured_content.unwrap();
    assert_eq!(envelope["error"]["type"], "COMMAND_TIMEOUT");
    assert!(
        envelope["error"]["partial_output"]
            .as_str()
            .unwrap()
            .contains("started"),
        "{envelope}"
    );
    assert!(
        envelope["error"]["message"]
            .as_str()
            .unwrap()
            .contains("every process it started were killed")
    );
    client.close().await;
}

/// Under Wine no allowed developer tool is installed: the launch failure is
/// typed and says what to do.
#[cfg(windows)]
#[tokio::test]
async fn a_missing_program_is_a_launch_failure() {
    let (sandbox, _) = Sandbox::with_project();
    let client = sandbox.connect().await;
    assert_eq!(
        error_type(&client, json!({"command": "ninja --version"})).await,
        "POWERSHELL_LAUNCH_FAILED"
    );
    client.close().await;
}

/// A user rule file (outside the writable roots) adds rules and reports
/// rules that fail their own examples.
#[tokio::test]
async fn a_user_rule_file_adds_rules() {
    let (sandbox, _project) = Sandbox::with_project();
    let rules = sandbox.cwd.join("wamcp-rules.json");
    std::fs::write(
        &rules,
        r#"{"rules": [
            {"id": "ask-before-push", "programs": ["git"], "when": {"args": ["push"]}, "decision": "prompt",
             "justification": "pushing leaves the machine", "match": ["git push"], "not_match": ["git pull"]},
            {"id": "wrong", "programs": ["cmake"], "when": {"args": ["-x"]}, "decision": "forbidden",
             "justification": "j", "match": ["cmake --build b"]}
        ]}"#,
    )
    .unwrap();
    let client = sandbox
        .set("WAMCP_COMMAND_RULES", rules.display().to_string())
        .connect()
        .await;
    let info = client.server_info().await;
    assert_eq!(
        info["command_rules_file"],
        json!(rules.display().to_string())
    );
    let errors = info["command_rules_errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0]
            .as_str()
            .unwrap()
            .contains("rule 'wrong' failed its examples, so the programs it names are refused"),
        "{errors:?}"
    );
    // A broken forbidding rule keeps guarding what it names.
    let result = client
        .call("run_powershell", json!({"command": "cmake --version"}))
        .await;
    let envelope = result.structured_content.unwrap();
    assert_eq!(envelope["error"]["type"], "COMMAND_NOT_ALLOWED");
    assert!(
        envelope["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Refused by 'wrong (broken)'"),
        "{envelope}"
    );
    let result = client
        .call("run_powershell", json!({"command": "git push origin main"}))
        .await;
    let envelope = result.structured_content.unwrap();
    assert_eq!(envelope["error"]["type"], "COMMAND_NOT_ALLOWED");
    assert!(
        envelope["error"]["message"]
            .as_str()
            .unwrap()
            .contains("(pushing leaves the machine)"),
        "{envelope}"
    );
    client.close().await;
}

/// The self-test decides. Wine enforces no access list and blocks no
/// network, so its probe, started under the write-restricted token as
/// commands are, writes everywhere: `auto` runs commands unconfined and
/// says why, and `require` refuses them with the same evidence. On Windows
/// itself the parts that hold are reported as holding.
#[cfg(windows)]
#[tokio::test]
async fn the_self_test_decides_whether_commands_run_confined() {
    let outside = "fails: the system let the probe write outside the writable roots";
    for mode in ["auto", "require"] {
        let (sandbox, project) = Sandbox::with_project();
        std::fs::write(project.join("a.txt"), "needle here\r\n").unwrap();
        let rules = sandbox.write(
            "rules.json",
            r#"{"rules": [{"id": "find", "programs": ["find"], "decision": "allow",
                "justification": "reads files"}]}"#,
        );
        let home = sandbox.home();
        let client = sandbox
            .set("WAMCP_COMMAND_RULES", rules.display().to_string())
            .set("WAMCP_COMMAND_SANDBOX", mode)
            .connect()
            .await;
        let info = client.server_info().await;
        let proof = &info["command_confinement_proof"];
        let call = json!({"command": "find 'needle here' a.txt", "working_directory": "proj"});
        if !common::under_wine() {
            assert_eq!(proof["writes"], "holds", "{info}");
            common::skipped("on Windows itself only the writes part is checked here");
            continue;
        }
        assert_eq!(info["command_sandbox"], mode);
        assert_eq!(info["command_confinement"], "none", "{info}");
        assert_eq!(proof["writes"], outside, "{info}");
        assert!(
            proof["network"]
                .as_str()
                .unwrap()
                .contains("connected to a loopback listener"),
            "{info}"
        );
        let detail = info["command_confinement_detail"].as_str().unwrap();
        assert!(
            detail.starts_with("restricted-token is not trusted here: writes: the system let"),
            "{detail}"
        );
        assert_eq!(info["command_posture"], "grammars");
        // The probe ran under the token: the capability SID was made for it.
        let sid =
            std::fs::read_to_string(home.join("AppData/Local/wamcp/capability-sid.txt")).unwrap();
        assert!(sid.starts_with("S-1-5-21-"), "{sid}");
        if mode == "auto" {
            let text = client.call_text("run_powershell", call).await;
            assert!(text.contains("needle here"), "{text}");
            assert!(text.ends_with("--- EXIT CODE: 0 ---\n"), "{text}");
        } else {
            let error = client.error_of("run_powershell", call).await;
            assert_eq!(error["type"], "SANDBOX_UNAVAILABLE", "{error}");
            let message = error["message"].as_str().unwrap();
            assert!(
                message.contains("the system let the probe write outside the writable roots"),
                "{message}"
            );
        }
    }
}

/// Trust files a command could rewrite are not trusted: a config file, a
/// grants file or a rules file inside a writable root (here the project,
/// which is also the server's working directory).
#[tokio::test]
async fn trust_files_inside_a_writable_root_are_not_trusted() {
    let (sandbox, project) = Sandbox::with_project();
    std::fs::create_dir_all(project.join("input")).unwrap();
    std::fs::write(
        project.join("input/config.json"),
        r#"{"settings": {"WAMCP_COMMAND_SANDBOX": "off", "WAMCP_TOOLS": "all"}}"#,
    )
    .unwrap();
    std::fs::write(
        project.join("mcp-allowed-hosts.json"),
        r#"{"version": 1, "hosts": ["evil.example.com"]}"#,
    )
    .unwrap();
    std::fs::write(project.join("rules.json"), r#"{"rules": []}"#).unwrap();
    let client = sandbox
        .in_dir(&project)
        .set("WAMCP_COMMAND_RULES", "rules.json")
        .set("WAMCP_CONFIG_FILE", "input/config.json")
        .set("WAMCP_ALLOWED_HOSTS_FILE", "mcp-allowed-hosts.json")
        .connect()
        .await;
    let info = client.server_info().await;
    let config_error = info["config_error"].as_str().unwrap_or_default();
    assert!(
        config_error.contains("where commands can write")
            && config_error.contains("it was not used"),
        "{info}"
    );
    assert_eq!(info["config_file"], Value::Null);
    assert_eq!(info["command_sandbox"], "auto");
    assert_eq!(info["granted_hosts"], json!([]));
    assert!(
        info["granted_hosts_error"]
            .as_str()
            .unwrap_or_default()
            .contains("so it grants nothing"),
        "{info}"
    );
    let error = client
        .error_of("run_powershell", json!({"command": "git status"}))
        .await;
    assert_eq!(error["type"], "COMMAND_NOT_ALLOWED");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("where commands can write; no command runs"),
        "{error}"
    );
}

/// Stand-ins for `npm` and `msbuild` that print their arguments (msbuild's
/// as a warning, which the build report shows), in a
/// directory outside the roots, first on the server's PATH: batch files on
/// Windows (with an extension-less shell script beside `npm.cmd`, as Node
/// ships one), shell scripts elsewhere. Returns the PATH value.
pub(crate) fn shim_tools(sandbox: &Sandbox) -> String {
    let tools = sandbox.dir.path().join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    for (name, prefix) in [("npm", ""), ("msbuild", "main.cpp(3,5): warning C4100: ")] {
        if cfg!(windows) {
            let batch = format!(
                "@echo off\r\necho {prefix}{name}-args: %*\r\necho cwd-search-off=%NoDefaultCurrentDirectoryInExePath%\r\nhelper\r\n"
            );
            std::fs::write(tools.join(format!("{name}.cmd")), batch).unwrap();
            std::fs::write(tools.join(name), "#!/bin/sh\necho wrong file\n").unwrap();
        } else {
            let script = tools.join(name);
            let body = format!("#!/bin/sh\necho \"{prefix}{name}-args: $*\"\n");
            std::fs::write(&script, body).unwrap();
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
        }
    }
    if cfg!(windows) {
        std::fs::write(tools.join("helper.cmd"), "@echo the helper on PATH\r\n").unwrap();
    }
    let mut dirs = vec![tools];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap().into_string().unwrap()
}

/// `npm` is `npm.cmd` on Windows: found through PATHEXT, run confined and
/// unconfined, its arguments reaching it as checked, never as cmd.exe
/// commands; `msbuild` gets the quiet-logging switches from build_project.
#[tokio::test]
async fn batch_file_shims_run_by_name_with_their_arguments_intact() {
    for sandbox_mode in ["auto", "off"] {
        let (sandbox, project) = Sandbox::with_project();
        let path = shim_tools(&sandbox);
        // What a batch file starts by bare name must not come from the project.
        std::fs::write(project.join("helper.cmd"), "@echo PLANTED HELPER RAN\r\n").unwrap();
        let work = sandbox.cwd.clone();
        let client = sandbox
            .set("PATH", path)
            .set("WAMCP_COMMAND_SANDBOX", sandbox_mode)
            .connect()
            .await;
        let text = client
            .call_text(
                "run_powershell",
                json!({
                    "command": "npm run build -- 'x&echo INJECTED>canary.txt' 'a|b' '(x)^'",
                    "working_directory": "proj"
                }),
            )
            .await;
        let expected = if cfg!(windows) {
            r#"npm-args: run build -- "x&echo INJECTED>canary.txt" "a|b" "(x)^""#
        } else {
            "npm-args: run build -- x&echo INJECTED>canary.txt a|b (x)^"
        };
        assert!(text.contains(expected), "{sandbox_mode}: {text}");
        assert!(text.ends_with("--- EXIT CODE: 0 ---\n"), "{text}");
        if cfg!(windows) {
            // What keeps cmd.exe from running a node.cmd planted in the
            // project. Wine's cmd.exe ignores it (the planted helper runs
            // there), so only Windows can show the effect.
            assert!(text.contains("cwd-search-off=1"), "{text}");
            if !common::under_wine() {
                assert!(text.contains("the helper on PATH"), "{text}");
                assert!(!text.contains("PLANTED"), "{text}");
            }
        }
        assert!(!project.join("canary.txt").exists(), "{sandbox_mode}");
        assert!(!work.join("canary.txt").exists(), "{sandbox_mode}");
        if cfg!(windows) {
            for (command, why) in [
                (
                    "npm run build -- 'two\nlines'",
                    "npm.cmd', which runs through cmd.exe: argument 4 holds a line break",
                ),
                // A shim that re-expands with `call` would expand it past any escape.
                (
                    "npm run build -- '%PATH%'",
                    "npm.cmd', which runs through cmd.exe: argument 4 holds '%'",
                ),
                // A fullwidth quote reaches an ANSI program as '"' (Wine runs code page 1252).
                (
                    "npm run build -- 'x\u{FF02} --evil \u{FF02}'",
                    "Argument 4 holds '\u{FF02}' (U+FF02)",
                ),
            ] {
                let error = client
                    .error_of(
                        "run_powershell",
                        json!({"command": command, "working_directory": "proj"}),
                    )
                    .await;
                assert_eq!(error["type"], "COMMAND_NOT_ALLOWED", "{error}");
                assert!(error["message"].as_str().unwrap().contains(why), "{error}");
            }
        }
        let text = client
            .call_text(
                "build_project",
                json!({"command": "msbuild app.sln", "working_directory": "proj"}),
            )
            .await;
        assert!(
            text.contains("msbuild-args: -v:minimal -nologo app.sln"),
            "{sandbox_mode}: {text}"
        );
        client.close().await;
    }
}

/// With no project named anywhere, nothing that starts a program runs, in
/// whatever folder it is asked to, and a refused write leaves no folder
/// behind (an earlier build ran `git init` in the download folder).
#[tokio::test]
async fn without_a_project_nothing_runs_anywhere() {
    let sandbox = Sandbox::new().set("WAMCP_TOOLS", "core,edit,build");
    let data = sandbox.home();
    let client = sandbox.connect().await;
    let downloads = client.server_info().await["download_root"]
        .as_str()
        .unwrap()
        .to_string();
    let write = client
        .error_of("write_file", json!({"path": "here.txt", "content": "x"}))
        .await;
    assert_eq!(write["type"], "WRITE_PATH_NOT_ALLOWED", "{write}");
    assert!(
        !std::path::Path::new(&downloads).exists(),
        "a refused write created {downloads}"
    );
    std::fs::create_dir_all(&downloads).unwrap();
    for (tool, args) in [
        ("run_powershell", json!({"command": "git init"})),
        (
            "run_powershell",
            json!({"command": "git init", "working_directory": downloads}),
        ),
        ("build_project", json!({"command": "cmake --build build"})),
        (
            "capability_run",
            json!({"capability": "inspect-git", "cwd": downloads}),
        ),
        ("compile_shader", json!({"source": "a.comp"})),
    ] {
        let error = client.error_of(tool, args.clone()).await;
        assert_eq!(error["type"], "NO_PROJECT_ROOT", "{tool} {args}: {error}");
        let recovery = error["recovery"].to_string();
        for way in ["WAMCP_PROJECT_ROOTS", "roots", "WAMCP_WORKSPACE_FROM_CWD"] {
            assert!(recovery.contains(way), "{tool}: {recovery}");
        }
    }
    let sandbox = client.close().await;
    for dir in [
        std::path::PathBuf::from(&downloads),
        sandbox.cwd.clone(),
        data,
    ] {
        assert!(
            !dir.join(".git").exists(),
            "git init ran in {}",
            dir.display()
        );
    }
}

/// A capability's working directory is refused under its own name.
#[tokio::test]
async fn capability_run_names_its_cwd_parameter() {
    let (sandbox, _project) = Sandbox::with_project();
    let client = sandbox.set("WAMCP_TOOLS", "core,build").connect().await;
    let error = client
        .error_of(
            "capability_run",
            json!({"capability": "inspect-git", "cwd": ".."}),
        )
        .await;
    assert_eq!(error["type"], "WORKING_DIRECTORY_NOT_ALLOWED", "{error}");
    let text = error.to_string();
    assert!(text.contains("cwd '"), "{text}");
    assert!(!text.contains("working_directory"), "{text}");
    client.close().await;
}

/// A command that destroys work is put to the user; a client that cannot
/// ask gets a refusal, and the work is still there.
#[tokio::test]
async fn commands_that_destroy_work_ask_first() {
    // With the undo journal off, nothing brings the work back: every
    // command that destroys it asks.
    let (sandbox, project) = Sandbox::with_project();
    std::fs::write(project.join("draft.txt"), "two hours of work\n").unwrap();
    let client = sandbox.set("WAMCP_UNDO_BUDGET_MB", "0").connect().await;
    for command in ["git clean -fdx", "git stash clear", "cmake -E rm -rf ."] {
        let error = client
            .error_of("run_powershell", json!({"command": command}))
            .await;
        assert_eq!(error["type"], "COMMAND_NOT_ALLOWED", "{command}: {error}");
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains("cannot be undone"),
            "{command}: {error}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(project.join("draft.txt")).unwrap(),
        "two hours of work\n"
    );
    client.close().await;
}

/// With the journal on, the same delete runs, and undo brings the work back.
#[tokio::test]
async fn commands_that_destroy_work_are_undone_when_the_journal_records() {
    if std::process::Command::new("cmake")
        .arg("--version")
        .output()
        .is_err()
    {
        let _ = writeln!(std::io::stderr(), "!!! SKIPPED: cmake is not installed !!!");
        return;
    }
    let (sandbox, project) = Sandbox::with_project();
    std::fs::write(project.join("draft.txt"), "two hours of work\n").unwrap();
    let client = sandbox.connect().await;
    let ran = client
        .call_text(
            "run_powershell",
            json!({"command": "cmake -E rm -rf draft.txt", "working_directory": "proj"}),
        )
        .await;
    assert!(!project.join("draft.txt").exists(), "{ran}");
    let step = ran
        .rsplit("[step ")
        .next()
        .unwrap()
        .split(':')
        .next()
        .unwrap();
    let step: u64 = step.parse().unwrap();
    client.call_text("undo", json!({"step": step})).await;
    assert_eq!(
        std::fs::read_to_string(project.join("draft.txt")).unwrap(),
        "two hours of work\n"
    );
    client.close().await;
}
