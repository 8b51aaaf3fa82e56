//! The `wamcp config` commands, run as a user would run them.

use crate::common;

use crate::common::{BIN, Sandbox};
use serde_json::Value;

fn run(sandbox: &Sandbox, args: &[&str]) -> (bool, String, String) {
    let out = sandbox.command(args).output().expect("run wamcp");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn init_writes_once_and_force_replaces() {
    let sandbox = Sandbox::new();
    let (ok, stdout, _) = run(&sandbox, &["config", "--init"]);
    assert!(ok);
    let path = sandbox.user_config();
    assert_eq!(stdout.trim(), format!("wrote {}", path.display()));
    std::fs::write(&path, "{}").unwrap();
    let (ok, _, stderr) = run(&sandbox, &["config", "--init"]);
    assert!(!ok);
    assert!(stderr.contains("already exists; pass --force"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}");
    let (ok, _, _) = run(&sandbox, &["config", "--init", "--force"]);
    assert!(ok);
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .contains("WAMCP_PROJECT_ROOTS")
    );
}

#[test]
fn check_passes_a_sound_setup_and_counts_what_it_proved() {
    let sandbox = Sandbox::new();
    sandbox.init_config();
    let (ok, stdout, stderr) = run(&sandbox, &["config", "--check"]);
    assert!(ok, "{stdout}{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[0],
        format!("config file: {}", sandbox.user_config().display())
    );
    assert!(
        lines[1].starts_with("command rules (built in): ")
            && lines[1].contains(", examples checked "),
        "{stdout}"
    );
    assert!(
        lines[2].starts_with("host grants (") && lines[2].ends_with("): hosts 0"),
        "{stdout}"
    );
    assert_eq!(lines.last(), Some(&"ok: no problems found"), "{stdout}");
    assert!(!stdout.contains("problem:"), "{stdout}");
    // The OS layer's self-test, run now, part by part.
    let part = |name: &str| {
        let prefix = format!("  {name}: ");
        let line = lines.iter().find(|l| l.starts_with(&prefix));
        line.map(|l| l[prefix.len()..].to_string())
            .unwrap_or_default()
    };
    if cfg!(target_os = "linux") {
        for name in ["writes", "trust_folders", "network"] {
            assert!(part(name).starts_with("holds ("), "{name}: {stdout}");
        }
        assert!(
            stdout
                .contains("  commands run confined by landlock+seccomp, judged by their effects\n"),
            "{stdout}"
        );
    } else if common::under_wine() {
        assert_eq!(
            part("writes"),
            "fails (the system let the probe write outside the writable roots)"
        );
        assert!(part("network").starts_with("fails ("), "{stdout}");
        assert!(
            stdout.contains("  commands run unconfined, judged by the argument grammars ("),
            "{stdout}"
        );
    } else {
        common::skipped("the self-test's lines are checked on Linux and under Wine only");
    }
}

/// `require` where the OS layer does not hold is a problem `--check`
/// names (Wine); where it holds, none (Linux).
#[test]
fn check_names_a_require_the_machine_cannot_meet() {
    let sandbox = Sandbox::new().set("WAMCP_COMMAND_SANDBOX", "require");
    let (ok, stdout, _) = run(&sandbox, &["config", "--check"]);
    let refused = stdout.contains(
        "problem: WAMCP_COMMAND_SANDBOX=require, and the OS layer does not hold here: commands will be refused",
    );
    if cfg!(target_os = "linux") {
        assert!(ok && !refused, "{stdout}");
    } else if common::under_wine() {
        assert!(!ok && refused, "{stdout}");
    } else {
        common::skipped("require is checked on Linux and under Wine only");
    }
}

/// What confinement left on the user's files is taken away: on Windows
/// every recorded access entry and the capability SID (Wine keeps no
/// access list, so each path reports none removed); elsewhere nothing was
/// left. A second run has nothing to do.
#[test]
fn uninstall_sandbox_takes_away_what_was_recorded() {
    let sandbox = Sandbox::new().set("WAMCP_COMMAND_SANDBOX", "require");
    let (ok, stdout, stderr) = run(&sandbox, &["config", "--check"]);
    assert!(stdout.contains("  writes: "), "{ok} {stdout}{stderr}");
    let data = sandbox.home().join("AppData/Local/wamcp");
    let (ok, stdout, stderr) = run(&sandbox, &["uninstall-sandbox"]);
    assert!(ok, "{stdout}{stderr}");
    if cfg!(windows) {
        assert!(
            stdout.contains(": 0 entries removed\n")
                || stdout.contains(": gone, nothing to remove\n"),
            "{stdout}"
        );
        assert!(
            stdout.ends_with("the capability SID and the ledger are removed\n"),
            "{stdout}"
        );
        assert!(!data.join("sandbox-entries.txt").exists());
        assert!(!data.join("capability-sid.txt").exists());
        let (ok, again, _) = run(&sandbox, &["uninstall-sandbox"]);
        assert!(ok);
        assert_eq!(
            again,
            "nothing to remove: wamcp never confined a command for this user\n"
        );
    } else {
        assert_eq!(
            stdout,
            "nothing to remove: confinement on this system leaves nothing on the user's files\n"
        );
    }
}

/// The verdict is kept per boot and binary: a second server takes it as
/// kept (here edited to say the network was open, which the server then
/// reports and acts on), and a record for another key is proven again.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_self_tests_verdict_is_kept_for_this_boot_and_binary() {
    let sandbox = Sandbox::new();
    let record = sandbox
        .home()
        .join(".local/share/wamcp/confinement-proof.txt");
    let client = sandbox.connect().await;
    let info = client.server_info().await;
    assert_eq!(
        info["command_confinement_proof"]["network"], "holds",
        "{info}"
    );
    assert_eq!(info["command_posture"], "confined");
    let sandbox = client.close().await;
    let text = std::fs::read_to_string(&record).unwrap();
    let network = text
        .lines()
        .find(|l| l.starts_with("network holds "))
        .unwrap();
    std::fs::write(
        &record,
        text.replace(network, "network fails kept evidence"),
    )
    .unwrap();
    let client = sandbox.connect().await;
    let info = client.server_info().await;
    assert_eq!(
        info["command_confinement_proof"]["network"], "fails: kept evidence",
        "{info}"
    );
    assert_eq!(info["command_confinement"], "landlock+seccomp");
    assert_eq!(
        info["command_posture"], "grammars",
        "only a layer proven whole relaxes"
    );
    let sandbox = client.close().await;
    let edited = std::fs::read_to_string(&record).unwrap();
    std::fs::write(&record, edited.replacen("key ", "key another boot ", 1)).unwrap();
    let client = sandbox.connect().await;
    let info = client.server_info().await;
    assert_eq!(
        info["command_confinement_proof"]["network"], "holds",
        "{info}"
    );
    client.close().await;
}

#[test]
fn check_names_every_problem_and_fails() {
    let sandbox = Sandbox::new();
    let rules = sandbox.write(
        "rules.json",
        r#"{"rules": [
            {"id": "ask-before-push", "programs": ["git"], "when": {"args": ["push"]}, "decision": "prompt",
             "justification": "pushing leaves the machine", "match": ["git push"], "not_match": ["git pull"]},
            {"id": "liar", "programs": ["cmake"], "when": {"args": ["-x"]}, "decision": "forbidden",
             "justification": "j", "match": ["cmake --build b"]}
        ]}"#,
    );
    let grants = sandbox.write("grants.json", "{not json");
    let sandbox = sandbox
        .set("WAMCP_COMMAND_RULES", rules.display().to_string())
        .set("WAMCP_ALLOWED_HOSTS_FILE", grants.display().to_string())
        .set("WAMCP_TOOLS", "core,nonsense");
    let (ok, stdout, stderr) = run(&sandbox, &["config", "--check"]);
    assert!(!ok, "{stdout}");
    assert_eq!(stderr.trim(), "wamcp config: 3 problem(s) found");
    assert!(
        stdout.contains(&format!("command rules (built in + {}): ", rules.display())),
        "{stdout}"
    );
    let problems: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("problem: "))
        .collect();
    assert_eq!(problems.len(), 3, "{stdout}");
    assert!(problems.iter().any(|p| p.contains("nonsense")), "{stdout}");
    assert!(
        problems
            .iter()
            .any(|p| p.contains("rule 'liar' failed its examples")),
        "{stdout}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("problem: host grants: ")
                && p.contains("grants nothing until fixed")),
        "{stdout}"
    );
}

#[test]
fn check_fails_on_a_config_file_that_is_not_json() {
    let sandbox = Sandbox::new();
    let path = sandbox.write("c/config.json", "{");
    let sandbox = sandbox.set("WAMCP_CONFIG_FILE", path.display().to_string());
    let (ok, stdout, stderr) = run(&sandbox, &["config", "--check"]);
    assert!(!ok, "{stdout}");
    assert!(
        stdout.starts_with("config file: not loaded (see the problem below)\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("problem: ") && stdout.contains("invalid JSON"),
        "{stdout}"
    );
    assert_eq!(stderr.trim(), "wamcp config: 1 problem(s) found");
}

#[test]
fn list_shows_values_and_sources_and_fails_on_a_bad_file() {
    let sandbox = Sandbox::new();
    let path = sandbox.write(
        "c/config.json",
        r#"{"settings":{"WAMCP_TOOLS":"core,docs"},"profiles":{"p":{"tools":"core"}}}"#,
    );
    let sandbox = sandbox
        .set("WAMCP_CONFIG_FILE", path.display().to_string())
        .set("WAMCP_DOWNLOAD_ROOT", "/dl");
    let (ok, stdout, stderr) = run(&sandbox, &["config", "--list"]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains(&format!("config file: {}", path.display())),
        "{stdout}"
    );
    assert!(
        stdout.contains("WAMCP_TOOLS = core,docs   [config file]"),
        "{stdout}"
    );
    assert!(
        stdout.contains("WAMCP_DOWNLOAD_ROOT = /dl   [environment]"),
        "{stdout}"
    );
    assert!(
        stdout.contains("WAMCP_SEARCH_BACKEND = (default: duckduckgo)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("p            enabled   tools=core"),
        "{stdout}"
    );

    std::fs::write(&path, "{ nope").unwrap();
    let (ok, stdout, stderr) = run(&sandbox, &["config", "--list"]);
    assert!(!ok);
    assert!(
        stdout.contains("(ignored, see the error below)"),
        "{stdout}"
    );
    assert!(stderr.contains("invalid JSON"), "{stderr}");
}

/// `wamcp config --list | head`: the reader leaves before the report is
/// written, and wamcp ends as any Unix tool does, without a panic.
#[cfg(unix)]
#[test]
fn a_report_into_a_closed_pipe_ends_without_a_panic() {
    use std::os::unix::process::ExitStatusExt;
    let sandbox = Sandbox::new();
    for args in [&["config", "--list"][..], &["undo"][..]] {
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        let out = sandbox
            .command(args)
            .stdout(writer)
            .output()
            .expect("run wamcp");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(
            out.status.signal(),
            Some(libc::SIGPIPE),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn usage_errors_exit_non_zero() {
    let sandbox = Sandbox::new();
    for args in [
        &["config"][..],
        &["config", "--force"],
        &["config", "--list", "--init"],
        &["config", "--emit", "xml"],
        &["config", "--profile", "cpp"],
        &["nonsense"],
    ] {
        let (ok, _, stderr) = run(&sandbox, args);
        assert!(!ok, "{args:?} should fail");
        assert!(!stderr.is_empty(), "{args:?} should say why");
    }
    let (ok, _, stderr) = run(
        &sandbox,
        &["config", "--emit", "client", "--profile", "research"],
    );
    assert!(!ok);
    assert!(
        stderr.contains("profile 'research' is disabled"),
        "{stderr}"
    );
    let (ok, _, stderr) = run(
        &sandbox,
        &["config", "--emit", "client", "--profile", "nope"],
    );
    assert!(!ok);
    assert!(
        stderr.contains(
            "profile 'nope' is not defined; known profiles: cpp, review, explore, research"
        ),
        "{stderr}"
    );
}

#[test]
fn emit_formats_point_at_this_binary() {
    let sandbox = Sandbox::new();
    let exe = dunce::canonicalize(BIN).unwrap().display().to_string();
    let (ok, stdout, stderr) = run(&sandbox, &["config", "--emit", "client"]);
    assert!(ok, "{stderr}");
    let client: Value = serde_json::from_str(&stdout).unwrap();
    let servers = client["mcpServers"].as_object().unwrap();
    assert_eq!(
        servers.keys().collect::<Vec<_>>(),
        ["wamcp", "cpp", "review", "explore"]
    );
    assert_eq!(servers["wamcp"]["command"], exe);
    assert_eq!(
        servers["wamcp"]["env"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["WAMCP_CONFIG_FILE"],
        "the plain entry has no profile"
    );
    assert_eq!(servers["cpp"]["command"], exe);
    assert_eq!(servers["cpp"]["env"]["WAMCP_PROFILE"], "cpp");
    assert_eq!(
        servers["cpp"]["env"]["WAMCP_CONFIG_FILE"],
        sandbox.user_config().display().to_string()
    );

    let (_, stdout, _) = run(
        &sandbox,
        &["config", "--emit", "vscode", "--profile", "review"],
    );
    let vscode: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(vscode["servers"]["review"]["type"], "stdio");

    let (_, stdout, _) = run(&sandbox, &["config", "--emit", "inspector"]);
    let inspector: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(inspector["mcpServers"].as_object().unwrap().len(), 1);

    let (_, stdout, _) = run(
        &sandbox,
        &["config", "--emit", "codex", "--profile", "explore"],
    );
    assert!(
        stdout.starts_with("[mcp_servers.explore]\ncommand = \""),
        "{stdout}"
    );
    assert!(stdout.contains("WAMCP_PROFILE = \"explore\""), "{stdout}");
}

/// The promise of `--emit client`: paste it into a client and it connects.
#[tokio::test]
async fn an_emitted_entry_starts_a_working_server() {
    let sandbox = Sandbox::new();
    let (ok, stdout, stderr) = run(
        &sandbox,
        &["config", "--emit", "client", "--profile", "explore"],
    );
    assert!(ok, "{stderr}");
    let client: Value = serde_json::from_str(&stdout).unwrap();
    let entry = &client["mcpServers"]["explore"];
    let mut cmd = std::process::Command::new(entry["command"].as_str().unwrap());
    // A client starts servers with its own environment plus the entry's `env`.
    for (key, value) in &sandbox.env {
        cmd.env(key, value);
    }
    for (key, value) in entry["env"].as_object().unwrap() {
        cmd.env(key, value.as_str().unwrap());
    }
    cmd.env_remove("WAMCP_TOOLS").current_dir(&sandbox.cwd);
    let (tools, info) = common::tools_and_info(cmd).await;
    assert_eq!(tools.len(), 7);
    assert_eq!(tools[0], "read_file");
    assert_eq!(info["active_profile"], "explore");
    assert_eq!(info["active_tool_groups"], serde_json::json!(["core"]));
}

/// Started by hand from a terminal, the server says what it is and how to
/// connect a client; started by a client (a pipe), it says nothing.
#[cfg(unix)]
#[test]
fn a_start_from_a_terminal_says_what_it_is_waiting_for() {
    use std::io::BufRead;
    use std::os::fd::FromRawFd;
    let sandbox = Sandbox::new();
    let (mut leader, mut follower) = (0, 0);
    // SAFETY: out values for two descriptors; no name, settings or size.
    let rc = unsafe {
        libc::openpty(
            &mut leader,
            &mut follower,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened and are owned here.
    let (leader, follower) = unsafe {
        (
            std::fs::File::from_raw_fd(leader),
            std::fs::File::from_raw_fd(follower),
        )
    };
    let mut child = sandbox
        .command(&[])
        .stdin(follower)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    for _ in 0..3 {
        stderr.read_line(&mut said).unwrap();
    }
    child.kill().unwrap();
    child.wait().unwrap();
    drop(leader);
    let lines: Vec<&str> = said.lines().collect();
    assert_eq!(lines.len(), 3, "{said}");
    assert!(
        lines[0].starts_with("wamcp ") && lines[0].contains("is an MCP server"),
        "{said}"
    );
    assert!(lines[1].contains("waiting for an MCP client"), "{said}");
    assert!(lines[2].contains("wamcp config --emit client"), "{said}");

    let quiet = sandbox
        .command(&[])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(quiet.status.success());
    let stderr = String::from_utf8_lossy(&quiet.stderr);
    assert!(!stderr.contains("waiting for an MCP client"), "{stderr}");
}

/// `wamcp hook` as a host runs it: the event on stdin, the answer on stdout.
#[test]
fn a_hook_event_on_stdin_is_answered_on_stdout() {
    use std::io::Write;
    let sandbox = Sandbox::new();
    let ask = |event: &str, tool_input: Value| {
        let mut child = sandbox
            .command(&["hook", event])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let event_json = serde_json::json!({
            "session_id": "s", "cwd": sandbox.root().display().to_string(),
            "hook_event_name": "PreToolUse", "tool_name": "mcp__plugin_wamcp_wamcp__run_powershell",
            "tool_input": tool_input, "tool_use_id": "t"
        });
        // An unknown event is refused before the event is read: the pipe
        // may be closed by then.
        let _ = child
            .stdin
            .take()
            .unwrap()
            .write_all(event_json.to_string().as_bytes());
        let out = child.wait_with_output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (ok, stdout, stderr) = ask(
        "claude-pre-tool-use",
        serde_json::json!({"command": "curl https://example.com"}),
    );
    assert!(ok, "{stderr}");
    let answer: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    let (ok, stdout, _) = ask(
        "claude-pre-tool-use",
        serde_json::json!({"command": "git status"}),
    );
    assert!(ok && stdout.is_empty(), "{stdout}");
    let (ok, _, stderr) = ask("nonsense", serde_json::json!({}));
    assert!(
        !ok && stderr.contains("unknown hook event 'nonsense'"),
        "{stderr}"
    );
}

/// `install-task` registers a logon task that runs exactly
/// `wamcp serve --http ADDR` (checked in the task store Task Scheduler
/// keeps, which Wine keeps too), refuses a non-loopback address without
/// registering anything, and `uninstall-task` removes it. Elsewhere both
/// say they are for Windows.
#[test]
fn install_task_registers_the_http_server_at_logon_and_uninstall_removes_it() {
    let sandbox = Sandbox::new();
    if !cfg!(windows) {
        let (ok, _, stderr) = run(&sandbox, &["install-task"]);
        assert!(!ok && stderr.contains("Windows Task Scheduler"), "{stderr}");
        let (ok, _, stderr) = run(&sandbox, &["uninstall-task"]);
        assert!(!ok && stderr.contains("Windows Task Scheduler"), "{stderr}");
        return;
    }
    let store = std::path::Path::new(&std::env::var("SystemRoot").unwrap())
        .join("System32")
        .join("Tasks")
        .join("wamcp-http");
    // A run that failed midway may have left its task behind.
    run(&sandbox, &["uninstall-task"]);
    let (ok, _, stderr) = run(&sandbox, &["install-task", "--http", "0.0.0.0:8765"]);
    assert!(!ok && stderr.contains("not a loopback address"), "{stderr}");
    assert!(!store.exists());

    let (ok, stdout, stderr) = run(&sandbox, &["install-task", "--http", "127.0.0.1:8799"]);
    assert!(ok, "{stdout}{stderr}");
    let exe = dunce::canonicalize(BIN).unwrap();
    let announced = format!("\"{}\" serve --http 127.0.0.1:8799", exe.display());
    let (announce, run_line) = (stdout.find(&announced), stdout.find("running: "));
    assert!(
        announce.is_some() && run_line.is_some() && announce < run_line,
        "{stdout}"
    );
    assert!(
        sandbox.http_token_file().is_file(),
        "the token exists before the first logon"
    );
    // It is started at once, and the answer says whether it listens (under
    // Wine the task runs nothing: its action was dropped) and how to check.
    assert!(
        stdout.contains("running: ") && stdout.contains("/Run /TN wamcp-http"),
        "{stdout}"
    );
    assert!(
        stdout.contains("the server is listening at http://127.0.0.1:8799/mcp")
            || stdout.contains("warning: no wamcp server answers at 127.0.0.1:8799 after 5 s"),
        "{stdout}"
    );
    assert!(
        stdout.contains("curl.exe -s -o NUL -w \"%{http_code}\" http://127.0.0.1:8799/mcp"),
        "{stdout}"
    );
    let bytes = std::fs::read(&store).expect("the task is registered");
    let units: Vec<u16> = bytes
        .chunks_exact(2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .collect();
    let xml = String::from_utf16_lossy(&units);
    let xml = if xml.contains("<Task") {
        xml
    } else {
        String::from_utf8_lossy(&bytes).into_owned()
    };
    // Wine's Task Scheduler keeps the registration and settings but drops
    // the trigger and the action (Windows keeps them); what the task runs
    // is checked on the XML itself in `logon_task`'s unit test.
    assert!(xml.contains("http://127.0.0.1:8799/mcp"), "{xml}");
    assert!(
        xml.contains("<MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>"),
        "{xml}"
    );
    assert!(
        xml.contains("<ExecutionTimeLimit>PT0S</ExecutionTimeLimit>"),
        "{xml}"
    );

    let (ok, stdout, stderr) = run(&sandbox, &["uninstall-task"]);
    assert!(ok, "{stdout}{stderr}");
    assert!(!store.exists());
}
