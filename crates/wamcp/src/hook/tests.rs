use super::*;
use serde_json::json;

/// A project, a home without a config file, and a user catalog outside
/// the project with a forbidden capability.
struct Setup {
    _dir: tempfile::TempDir,
    project: PathBuf,
    outside: PathBuf,
    vars: Vec<(&'static str, String)>,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let base = dunce::canonicalize(dir.path()).unwrap();
    let (project, outside, home) = (base.join("proj"), base.join("other"), base.join("home"));
    for d in [&project, &outside, &home] {
        std::fs::create_dir_all(d).unwrap();
    }
    let catalog = home.join("caps.json");
    std::fs::write(
        &catalog,
        r#"{"capabilities": [{"id": "wipe", "description": "Wipe.", "safety": "forbidden",
            "argv": [["git", "clean", "-fdx"]]}]}"#,
    )
    .unwrap();
    let vars = vec![
        ("HOME", home.display().to_string()),
        ("USERPROFILE", home.display().to_string()),
        ("APPDATA", home.display().to_string()),
        ("LOCALAPPDATA", home.display().to_string()),
        ("CLAUDE_PROJECT_DIR", project.display().to_string()),
        ("WAMCP_CAPABILITIES_FILE", catalog.display().to_string()),
    ];
    Setup {
        _dir: dir,
        project,
        outside,
        vars,
    }
}

impl Setup {
    /// Runs the hook on an event shaped like the host's, recorded fields
    /// included (Codex adds `turn_id` and `model`).
    fn hook(&self, event: &str, tool_name: &str, input: Value) -> Option<Value> {
        let mut payload = json!({
            "session_id": "8f14e45f",
            "transcript_path": "/tmp/transcript.jsonl",
            "cwd": self.project.display().to_string(),
            "permission_mode": "default",
            "hook_event_name": if event.ends_with("permission-request") { "PermissionRequest" } else { "PreToolUse" },
            "tool_name": tool_name,
            "tool_input": input,
            "tool_use_id": "toolu_01",
        });
        if event.starts_with("codex") {
            payload["turn_id"] = json!("turn-3");
            payload["model"] = json!("gpt-5-codex");
        }
        let env = |name: &str| {
            self.vars
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.clone())
        };
        respond(event, payload.to_string().as_bytes(), &env, &self.outside).unwrap()
    }
}

fn decision(answer: &Option<Value>) -> Option<String> {
    let out = &answer.as_ref()?["hookSpecificOutput"];
    out["permissionDecision"]
        .as_str()
        .or_else(|| out["decision"]["behavior"].as_str())
        .map(str::to_string)
}

const CLAUDE: &str = "claude-pre-tool-use";
const CODEX: &str = "codex-pre-tool-use";
const CODEX_PERMISSION: &str = "codex-permission-request";

#[test]
fn each_host_and_event_gets_only_the_decisions_it_supports() {
    let s = setup();
    let inside = s.project.join("sub");
    std::fs::create_dir_all(&inside).unwrap();
    let (inside, outside) = (
        inside.display().to_string(),
        s.outside.display().to_string(),
    );
    let plugin = |tool: &str| format!("mcp__plugin_wamcp_wamcp__{tool}");
    let plain = |tool: &str| format!("mcp__wamcp__{tool}");
    let table: Vec<(&str, String, Value, Option<&str>)> = vec![
        // Commands: the rules' answer.
        (
            CLAUDE,
            plugin("run_powershell"),
            json!({"command": "git status"}),
            None,
        ),
        (
            CLAUDE,
            plugin("run_powershell"),
            json!({"command": "curl https://example.com"}),
            Some("deny"),
        ),
        (
            CLAUDE,
            plain("run_powershell"),
            json!({"command": "npx cowsay hi"}),
            Some("ask"),
        ),
        // Work the journal brings back runs, as run_powershell runs it; a
        // remote's history does not come back, so a force push asks.
        (
            CLAUDE,
            plain("run_powershell"),
            json!({"command": "git clean -fdx"}),
            None,
        ),
        (
            CLAUDE,
            plain("run_powershell"),
            json!({"command": "git push --force origin main"}),
            Some("ask"),
        ),
        // A build of anything but a build driver is refused, as the server does.
        (
            CLAUDE,
            plain("build_project"),
            json!({"command": "git clean -fdx"}),
            Some("deny"),
        ),
        (
            CLAUDE,
            plain("build_project"),
            json!({"command": "powershell -Command x"}),
            Some("deny"),
        ),
        (
            CODEX,
            plain("run_powershell"),
            json!({"command": "curl https://example.com"}),
            Some("deny"),
        ),
        // Codex's PreToolUse cannot ask: its own MCP approval does.
        (
            CODEX,
            plain("run_powershell"),
            json!({"command": "npx cowsay hi"}),
            None,
        ),
        // Capabilities: forbidden is denied everywhere; approval-required asks when it runs.
        (
            CLAUDE,
            plugin("capability_run"),
            json!({"capability": "wipe"}),
            Some("deny"),
        ),
        (
            CODEX,
            plain("capability_run"),
            json!({"capability": "wipe", "execute": true}),
            Some("deny"),
        ),
        (
            CODEX_PERMISSION,
            plain("capability_run"),
            json!({"capability": "wipe", "cwd": inside}),
            Some("deny"),
        ),
        (
            CLAUDE,
            plugin("capability_run"),
            json!({"capability": "create-pr", "execute": true}),
            Some("ask"),
        ),
        (
            CLAUDE,
            plugin("capability_run"),
            json!({"capability": "inspect-git", "execute": true}),
            None,
        ),
        (
            CLAUDE,
            plugin("capability_run"),
            json!({"capability": "inspect-git", "extra_args": ["--x"], "execute": true}),
            Some("ask"),
        ),
        // Plans: Codex may skip its prompt only where the event proves the scope.
        (
            CODEX_PERMISSION,
            plain("capability_run"),
            json!({"capability": "inspect-git", "cwd": inside}),
            Some("allow"),
        ),
        (
            CODEX_PERMISSION,
            plain("capability_run"),
            json!({"capability": "inspect-git", "cwd": outside}),
            None,
        ),
        (
            CODEX_PERMISSION,
            plain("capability_run"),
            json!({"capability": "inspect-git", "cwd": "sub"}),
            None,
        ),
        (
            CODEX_PERMISSION,
            plain("capability_run"),
            json!({"capability": "inspect-git", "cwd": inside, "execute": true}),
            None,
        ),
        (
            CODEX_PERMISSION,
            plain("workflow_plan"),
            json!({"task": "build", "cwd": inside}),
            Some("allow"),
        ),
        (
            CODEX_PERMISSION,
            plain("workflow_plan"),
            json!({"task": "build", "cwd": outside}),
            None,
        ),
        (
            CODEX_PERMISSION,
            plain("package_install"),
            json!({"package_id": "Git.Git", "source": "winget"}),
            Some("allow"),
        ),
        // Another server's tool of the same name never skips a prompt.
        (
            CODEX_PERMISSION,
            "mcp__evil__package_install".into(),
            json!({"package_id": "Git.Git", "source": "winget"}),
            None,
        ),
        (
            CODEX_PERMISSION,
            "mcp__othermcp__wamcp__package_install".into(),
            json!({"package_id": "Git.Git", "source": "winget"}),
            None,
        ),
        (
            CODEX_PERMISSION,
            "mcp__evil__capability_run".into(),
            json!({"capability": "wipe"}),
            Some("deny"),
        ),
        (
            CODEX_PERMISSION,
            plain("package_install"),
            json!({"package_id": "Git.Git", "source": "winget", "execute": true}),
            None,
        ),
        (
            CODEX_PERMISSION,
            plain("sandbox_run"),
            json!({"command": "make", "isolation_requirement": "linux_compatibility"}),
            None,
        ),
        // Claude Code is never told "allow".
        (
            CLAUDE,
            plugin("package_install"),
            json!({"package_id": "Git.Git", "source": "winget"}),
            None,
        ),
        (
            CLAUDE,
            plugin("workflow_plan"),
            json!({"task": "build", "cwd": inside}),
            None,
        ),
        (
            CLAUDE,
            plugin("package_install"),
            json!({"package_id": "Git.Git", "source": "winget", "execute": true}),
            Some("ask"),
        ),
        (
            CLAUDE,
            plugin("sandbox_run"),
            json!({"command": "make", "isolation_requirement": "linux_compatibility", "execute": true}),
            Some("ask"),
        ),
        // Reading the host's own configuration is asked about.
        (
            CLAUDE,
            plugin("mcp_audit"),
            json!({"include_host": true}),
            Some("ask"),
        ),
        (
            CLAUDE,
            plugin("ecosystem_scan"),
            json!({"cwd": inside, "include_host": true}),
            Some("ask"),
        ),
        (
            CLAUDE,
            plugin("mcp_audit"),
            json!({"config_path": "/etc/x.json"}),
            Some("ask"),
        ),
        (CLAUDE, plugin("mcp_audit"), json!({"cwd": inside}), None),
        // Writing an agent trust file is asked about, as the server asks.
        (
            CLAUDE,
            plugin("write_file"),
            json!({"path": ".mcp.json", "content": "{}"}),
            Some("ask"),
        ),
        (
            CLAUDE,
            plugin("write_file"),
            json!({"path": "src/main.rs", "content": ""}),
            None,
        ),
        // Not a wamcp tool, or nothing to add.
        (
            CLAUDE,
            plugin("read_file"),
            json!({"path": "README.md"}),
            None,
        ),
        // The host's own shell: judged by effect, never allowed.
        (
            CLAUDE,
            "Bash".into(),
            json!({"command": "rm -rf /"}),
            Some("ask"),
        ),
        (
            CLAUDE,
            "Bash".into(),
            json!({"command": "cd sub && git reset --hard"}),
            Some("ask"),
        ),
        (
            CLAUDE,
            "Bash".into(),
            json!({"command": "git -c alias.x='!calc' x"}),
            Some("deny"),
        ),
        (
            CLAUDE,
            "Bash".into(),
            json!({"command": "echo x >> .git/hooks/post-checkout"}),
            Some("deny"),
        ),
        (
            CLAUDE,
            "Bash".into(),
            json!({"command": "cargo test 2>&1 | tail -5"}),
            None,
        ),
        (
            CLAUDE,
            "Bash".into(),
            json!({"command": "curl -s https://example.com"}),
            None,
        ),
        (
            CLAUDE,
            "PowerShell".into(),
            json!({"command": "Remove-Item -Recurse -Force sub"}),
            Some("ask"),
        ),
        (
            CLAUDE,
            "PowerShell".into(),
            json!({"command": "Get-ChildItem; git status"}),
            None,
        ),
        // Codex cannot ask: what destroys work is stopped there.
        (
            CODEX,
            "Bash".into(),
            json!({"command": "git push --force origin main"}),
            Some("deny"),
        ),
        (
            CODEX,
            "Bash".into(),
            json!({"command": ["bash", "-lc", "git clean -fdx"]}),
            Some("deny"),
        ),
        (CODEX, "Bash".into(), json!({"command": "git status"}), None),
        (
            CLAUDE,
            "Read".into(),
            json!({"file_path": ".git/config"}),
            None,
        ),
        (
            CLAUDE,
            plain("no_such_tool"),
            json!({"execute": true}),
            None,
        ),
    ];
    for (event, tool, input, want) in table {
        let got = s.hook(event, &tool, input.clone());
        assert_eq!(
            decision(&got).as_deref(),
            want,
            "{event} {tool} {input}: {got:?}"
        );
    }
}

#[test]
fn answers_carry_the_reason_in_each_hosts_field() {
    let s = setup();
    let denied = s
        .hook(
            CLAUDE,
            "mcp__wamcp__capability_run",
            json!({"capability": "wipe"}),
        )
        .unwrap();
    assert_eq!(
        denied["hookSpecificOutput"]["permissionDecisionReason"],
        "wamcp refuses the capability 'wipe': it is classified forbidden"
    );
    let refused = s
        .hook(
            CODEX_PERMISSION,
            "mcp__wamcp__capability_run",
            json!({"capability": "wipe"}),
        )
        .unwrap();
    assert_eq!(
        refused["hookSpecificOutput"]["decision"]["message"],
        "wamcp refuses the capability 'wipe': it is classified forbidden"
    );
    let asked = s
        .hook(
            CLAUDE,
            "mcp__wamcp__run_powershell",
            json!({"command": "npx cowsay hi"}),
        )
        .unwrap();
    let reason = asked["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(
        reason.starts_with("wamcp asks the user before running this command: "),
        "{reason}"
    );
    assert!(reason.contains("npx"), "{reason}");
}

#[test]
fn bad_events_are_errors_and_change_nothing() {
    let env = |_: &str| None;
    let cwd = std::env::temp_dir();
    assert!(
        respond("claude-pre-compact", &b"{}"[..], &env, &cwd)
            .unwrap_err()
            .starts_with("unknown hook event 'claude-pre-compact'; one of: claude-pre-tool-use")
    );
    assert!(
        respond(CLAUDE, &b"not json"[..], &env, &cwd)
            .unwrap_err()
            .starts_with("the hook event is not JSON")
    );
    let huge = vec![b' '; (MAX_INPUT_BYTES + 1) as usize];
    assert_eq!(
        respond(CLAUDE, &huge[..], &env, &cwd).unwrap_err(),
        "the hook event is larger than 1 MiB"
    );
    assert_eq!(respond(CLAUDE, &b"{}"[..], &env, &cwd), Ok(None));
    // A shell call whose command cannot be read is refused, not waved through.
    for input in [
        json!({"tool_name": "Bash", "tool_input": {}}),
        json!({"tool_name": "Bash", "tool_input": {"command": 7}}),
        json!({"tool_name": "PowerShell", "tool_input": {"command": ["a", 1]}}),
    ] {
        assert_eq!(
            respond(CLAUDE, input.to_string().as_bytes(), &env, &cwd).unwrap_err(),
            "the shell tool's input has no readable command",
            "{input}"
        );
    }
}

#[test]
fn the_shell_reason_names_the_command_and_codex_says_why_it_stops() {
    let s = setup();
    let asked = s
        .hook(CLAUDE, "Bash", json!({"command": "git stash clear"}))
        .unwrap();
    assert_eq!(
        asked["hookSpecificOutput"]["permissionDecisionReason"],
        "'git stash clear' cannot be undone: git stash deletes stashed work"
    );
    let stopped = s
        .hook(CODEX, "Bash", json!({"command": "git stash clear"}))
        .unwrap();
    let reason = stopped["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(
        reason.ends_with("run it yourself if you mean it."),
        "{reason}"
    );
}
