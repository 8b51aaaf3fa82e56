//! The repository as a Claude Code and a Codex plugin: the manifests, the
//! MCP entries started the way each host starts them, the hook commands,
//! and the skills.
#![cfg(not(windows))]

use crate::common;

use crate::common::{BIN, Sandbox};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("run by cargo test")).join("../..")
}

fn read_json(relative: &str) -> Value {
    let text = std::fs::read_to_string(repo().join(relative)).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

/// A folder holding `wamcp`, as an installed binary sits on PATH.
fn path_with_wamcp(sandbox: &Sandbox) -> String {
    let bin = sandbox.root().join("installed");
    std::fs::create_dir_all(&bin).unwrap();
    let link = bin.join("wamcp");
    if !link.exists() {
        std::os::unix::fs::symlink(BIN, &link).unwrap();
    }
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Replaces the host's `${VAR}` placeholders the way it would.
fn substitute(text: &str, vars: &[(&str, &Path)]) -> String {
    let mut out = text.to_string();
    for (name, value) in vars {
        out = out.replace(&format!("${{{name}}}"), &value.display().to_string());
    }
    assert!(!out.contains("${"), "an unsubstituted placeholder in {out}");
    out
}

/// Starts one MCP entry as a host does (command found on PATH, args, env)
/// and returns the tool names and `get_server_info`.
async fn start_entry(
    sandbox: &Sandbox,
    entry: &Value,
    vars: &[(&str, &Path)],
) -> (Vec<String>, Value) {
    let command = entry["command"].as_str().unwrap();
    assert_eq!(command, "wamcp", "the entry starts the installed binary");
    let mut cmd = std::process::Command::new(command);
    sandbox.apply(&mut cmd);
    cmd.env("PATH", path_with_wamcp(sandbox));
    for arg in entry["args"].as_array().unwrap() {
        cmd.arg(arg.as_str().unwrap());
    }
    for (key, value) in entry["env"].as_object().unwrap() {
        cmd.env(key, substitute(value.as_str().unwrap(), vars));
    }
    common::tools_and_info(cmd).await
}

#[tokio::test]
async fn the_claude_code_entry_keeps_code_data_and_project_apart() {
    let (sandbox, project) = Sandbox::with_project();
    let data = sandbox.root().join("plugin-data");
    let plugin_root = repo();
    let vars = [
        ("CLAUDE_PROJECT_DIR", project.as_path()),
        ("CLAUDE_PLUGIN_DATA", data.as_path()),
        ("CLAUDE_PLUGIN_ROOT", plugin_root.as_path()),
    ];
    let manifest = read_json(".claude-plugin/plugin.json");
    assert_eq!(manifest["name"], "wamcp");
    let servers = read_json(".mcp.json")["mcpServers"].clone();
    let entry = &servers["wamcp"];
    assert_eq!(entry["env"]["WAMCP_PROJECT_ROOTS"], "${CLAUDE_PROJECT_DIR}");
    assert_eq!(entry["env"]["WAMCP_DATA_DIR"], "${CLAUDE_PLUGIN_DATA}");
    let sandbox = sandbox.set("WAMCP_PROJECT_ROOTS", "");
    let (tools, info) = start_entry(&sandbox, entry, &vars).await;
    for tool in [
        "read_file",
        "build_project",
        "env_inspect",
        "package_install",
        "sandbox_run",
    ] {
        assert!(tools.contains(&tool.to_string()), "{tool} in {tools:?}");
    }
    let roots = info["writable_roots"].to_string();
    assert!(roots.contains(&project.display().to_string()), "{info}");
    assert!(
        !roots.contains(&plugin_root.display().to_string()),
        "the plugin's code is not writable: {info}"
    );
    assert!(
        roots.contains(&data.join("downloads").display().to_string()),
        "downloads go to the plugin's data folder: {info}"
    );
}

#[tokio::test]
async fn the_codex_entry_starts_with_a_timeout_above_the_longest_build() {
    let sandbox = Sandbox::new();
    let manifest = read_json(".codex-plugin/plugin.json");
    let entry = &manifest["mcpServers"]["wamcp"];
    assert!(
        entry["tool_timeout_sec"].as_u64().unwrap()
            > wamcp_policy::limits::MAX_BUILD_TIMEOUT_SECONDS,
        "{entry}"
    );
    let (tools, _) = start_entry(&sandbox, entry, &[]).await;
    assert!(tools.contains(&"package_install".to_string()), "{tools:?}");
    assert_eq!(manifest["hooks"], "./hooks/codex-hooks.json");
    assert_eq!(manifest["skills"], "./skills/");
}

/// Every hook command in both hosts' files runs `wamcp hook <event>` with
/// an event the binary knows, and answers a refused command.
#[test]
fn every_hook_command_is_one_wamcp_answers() {
    let sandbox = Sandbox::new();
    for (file, tool) in [
        (
            "hooks/hooks.json",
            "mcp__plugin_wamcp_wamcp__run_powershell",
        ),
        ("hooks/codex-hooks.json", "mcp__wamcp__run_powershell"),
    ] {
        let hooks = read_json(file)["hooks"].clone();
        let mut seen = 0;
        for (event, groups) in hooks.as_object().unwrap() {
            // Reports of what ran answer nothing; the trail test covers them.
            let reports = ["PostToolUse", "PostToolUseFailure", "Stop"].contains(&event.as_str());
            for group in groups.as_array().unwrap() {
                if reports {
                    for hook in group["hooks"].as_array().unwrap() {
                        let words: Vec<&str> =
                            hook["command"].as_str().unwrap().split(' ').collect();
                        assert_eq!(&words[..2], ["wamcp", "hook"], "{file}");
                        let input = json!({"session_id": "s", "cwd": sandbox.root(), "hook_event_name": event,
                            "tool_name": tool, "tool_input": {"command": "git status"}});
                        assert_eq!(
                            run_hook(&sandbox, words[2], &input),
                            Value::Null,
                            "{file} {event}"
                        );
                    }
                    continue;
                }
                let matcher = group["matcher"].as_str().unwrap();
                // wamcp's own tools, or the host's shell judged by effect.
                let (tool, command) = if matcher.contains("wamcp") {
                    (tool, "curl https://example.com")
                } else {
                    assert!(matcher.contains("Bash"), "{file} {event}: {matcher}");
                    ("Bash", "echo x > .git/hooks/pre-commit")
                };
                for hook in group["hooks"].as_array().unwrap() {
                    let words: Vec<&str> = hook["command"].as_str().unwrap().split(' ').collect();
                    assert_eq!(&words[..2], ["wamcp", "hook"], "{file}");
                    assert_eq!(words.len(), 3);
                    let input = json!({"session_id": "s", "cwd": sandbox.root(), "hook_event_name": event,
                        "tool_name": tool, "tool_input": {"command": command}});
                    let answer = run_hook(&sandbox, words[2], &input);
                    let decided = answer["hookSpecificOutput"]["permissionDecision"]
                        .as_str()
                        .or(answer["hookSpecificOutput"]["decision"]["behavior"].as_str());
                    assert_eq!(decided, Some("deny"), "{file} {event}: {answer}");
                    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], *event);
                    seen += 1;
                }
            }
        }
        assert!(seen > 0, "{file} has hooks");
    }
}

/// The six skills, each named as its folder, and every tool a skill names
/// is one wamcp has.
#[test]
fn skills_name_only_tools_that_exist() {
    let tools: Vec<&str> = wamcp::registry::TOOLS.iter().map(|t| t.name).collect();
    let mut names = Vec::new();
    for entry in std::fs::read_dir(repo().join("skills")).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(dir.join("SKILL.md")).unwrap();
        let front = text
            .strip_prefix("---\n")
            .and_then(|t| t.split_once("\n---\n"))
            .unwrap_or_else(|| panic!("{name}: no front matter"))
            .0;
        assert!(front.contains(&format!("name: {name}\n")), "{name}");
        let description = front.split("description: ").nth(1).unwrap_or("");
        assert!(
            description.len() > 40,
            "{name}: a description says when to use it"
        );
        for quoted in text.split('`').skip(1).step_by(2) {
            let looks_like_tool = quoted.contains('_')
                && quoted.chars().all(|c| c.is_ascii_lowercase() || c == '_')
                && !quoted.starts_with("expected_")
                && !matches!(
                    quoted,
                    "force_refresh"
                        | "include_host"
                        | "package_id"
                        | "payload_paths"
                        | "isolation_requirement"
                        | "linux_compatibility"
                        | "project_reproducibility"
                        | "untrusted_windows"
                        | "installed_after"
                        | "cleanup_path"
                        | "package_managers"
                );
            if looks_like_tool {
                assert!(
                    tools.contains(&quoted),
                    "{name} names '{quoted}', which is not a wamcp tool"
                );
            }
        }
        names.push(name);
    }
    names.sort();
    assert_eq!(
        names,
        [
            "ecosystem-defrag",
            "env-inspect",
            "package-install",
            "sandbox-run",
            "win-setup",
            "workflow-plan"
        ]
    );
}

/// The plugin's commands (`/wamcp:env`, `/wamcp:plan`, `/wamcp:defrag`)
/// each hand over to a skill that exists, and they and the orchestrator
/// agent name only wamcp tools that exist.
#[test]
fn commands_and_the_agent_point_at_what_exists() {
    let tools: Vec<&str> = wamcp::registry::TOOLS.iter().map(|t| t.name).collect();
    let skills: Vec<String> = std::fs::read_dir(repo().join("skills"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for (file, skill) in [
        ("commands/env.md", Some("env-inspect")),
        ("commands/plan.md", Some("workflow-plan")),
        ("commands/defrag.md", Some("ecosystem-defrag")),
        ("agents/orchestrator.md", None),
    ] {
        let text = std::fs::read_to_string(repo().join(file)).unwrap();
        let (front, body) = text
            .strip_prefix("---\n")
            .and_then(|t| t.split_once("\n---\n"))
            .unwrap_or_else(|| panic!("{file}: no front matter"));
        assert!(front.contains("description: "), "{file}");
        if let Some(skill) = skill {
            assert!(skills.iter().any(|s| s == skill), "{file}: {skill}");
            assert!(body.contains(&format!("`{skill}` skill")), "{file}");
            assert!(body.contains("$ARGUMENTS"), "{file}");
        } else {
            assert!(front.contains("name: orchestrator\n"), "{file}");
        }
        for quoted in body.split('`').skip(1).step_by(2) {
            let tool = quoted.split(':').next().unwrap_or_default();
            let looks_like_tool = tool.contains('_')
                && tool.chars().all(|c| c.is_ascii_lowercase() || c == '_')
                && !tool.starts_with("expected_")
                && !matches!(tool, "include_host");
            if looks_like_tool {
                assert!(
                    tools.contains(&tool),
                    "{file} names '{tool}', not a wamcp tool"
                );
            }
        }
    }
}

/// Python with `jsonschema` (the MCP SDK depends on it), or a loud skip;
/// under `WAMCP_TEST_STRICT=1` a missing one is a failure.
fn python_with_jsonschema() -> Option<String> {
    let python = std::env::var("WAMCP_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = std::process::Command::new(&python)
        .args(["-c", "import jsonschema"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some(python);
    }
    let message = format!("'{python}' cannot import jsonschema (run scripts/test.sh)");
    assert!(
        std::env::var("WAMCP_TEST_STRICT").as_deref() != Ok("1"),
        "{message}"
    );
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "\n!!! SKIPPED plugin schemas: {message} !!!\n"
    );
    None
}

/// The manifests and hook files against the hosts' published schemas
/// (copies in `plugin-schemas/`, sources in its SOURCES.md). The one
/// deliberate difference: Codex reads a `hooks` path from its manifest,
/// which the published schema predates, so it is checked apart.
#[test]
fn manifests_match_the_published_schemas() {
    let Some(python) = python_with_jsonschema() else {
        return;
    };
    let schemas = repo().join("plugin-schemas");
    let mut codex = read_json(".codex-plugin/plugin.json");
    let hooks_path = codex.as_object_mut().unwrap().remove("hooks").unwrap();
    assert!(
        repo().join(hooks_path.as_str().unwrap()).is_file(),
        "the Codex manifest's hooks file exists"
    );
    let claude_hooks = read_json("hooks/hooks.json")["hooks"].clone();
    let cases = json!([
        ["claude-code-plugin-manifest.json", read_json(".claude-plugin/plugin.json")],
        ["claude-code-plugin-manifest.json", {"name": "wamcp", "hooks": claude_hooks}],
        ["codex-plugin-manifest.json", codex],
        ["codex-hooks.json", read_json("hooks/codex-hooks.json")],
    ]);
    let script = r#"
import json, sys, pathlib, jsonschema
folder = pathlib.Path(sys.argv[1])
problems = []
for name, instance in json.load(sys.stdin):
    schema = json.loads((folder / name).read_text(encoding="utf-8"))
    for error in jsonschema.Draft7Validator(schema).iter_errors(instance):
        problems.append(f"{name}: {list(error.absolute_path)}: {error.message}")
print(json.dumps(problems))
"#;
    let mut python = std::process::Command::new(python);
    python.args(["-c", script]).arg(&schemas);
    let out = with_input(python, cases.to_string().as_bytes());
    assert!(out.status.success());
    let problems: Vec<String> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(problems.is_empty(), "{problems:#?}");
}

/// Codex lists no roots and starts its servers in the session directory:
/// with the plugin's entry as shipped, that directory is the project, so
/// writes and commands reach it (they were refused before).
#[tokio::test]
async fn the_codex_entry_makes_the_session_directory_the_project() {
    let sandbox = Sandbox::new();
    let project = sandbox.root().join("session");
    std::fs::create_dir_all(&project).unwrap();
    let manifest = read_json(".codex-plugin/plugin.json");
    let mut sandbox = sandbox.in_dir(&project);
    for (key, value) in manifest["mcpServers"]["wamcp"]["env"].as_object().unwrap() {
        sandbox = sandbox.set(key, value.as_str().unwrap());
    }
    let client = sandbox.connect().await;
    let info = client.server_info().await;
    assert_eq!(
        info["adopted_workspace"],
        json!(project.display().to_string()),
        "{info}"
    );
    let wrote = client
        .call(
            "write_file",
            json!({"path": "notes.txt", "content": "from codex\n"}),
        )
        .await;
    assert_eq!(wrote.is_error, Some(false), "{wrote:?}");
    assert_eq!(
        std::fs::read_to_string(project.join("notes.txt")).unwrap(),
        "from codex\n"
    );
    let ran = client
        .call_text("run_powershell", json!({"command": "git init -q"}))
        .await;
    assert!(ran.contains("EXIT CODE: 0"), "{ran}");
    assert!(project.join(".git").is_dir(), "git init ran in the project");
    client.close().await;

    // A project the user named wins over the session directory.
    let (sandbox, named) = Sandbox::with_project();
    let client = sandbox
        .set("WAMCP_WORKSPACE_FROM_CWD", "auto")
        .connect()
        .await;
    let info = client.server_info().await;
    assert_eq!(info["adopted_workspace"], Value::Null, "{info}");
    assert!(
        info["writable_roots"]
            .to_string()
            .contains(&named.display().to_string())
    );
    client.close().await;
}

/// Runs `command` with `input` on its stdin; its output.
fn with_input(mut command: std::process::Command, input: &[u8]) -> std::process::Output {
    use std::io::Write;
    let mut child = command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

/// Runs `wamcp hook <event>` on `input` as the host would; its answer
/// (`Null` when it adds nothing).
fn run_hook(sandbox: &Sandbox, event: &str, input: &Value) -> Value {
    let out = with_input(
        sandbox.command(&["hook", event]),
        input.to_string().as_bytes(),
    );
    assert!(out.status.success(), "{event}: {out:?}");
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

/// The host asked (its hook answered `ask` and it showed its prompt), so
/// the server runs the call without asking again, once, for that exact
/// call; a host that did not show its prompt leaves the question to the
/// server, which here cannot ask and refuses.
#[tokio::test]
async fn a_call_the_host_asked_about_is_not_asked_again() {
    let (sandbox, project) = Sandbox::with_project();
    let data = sandbox.root().join("plugin-data");
    let sandbox = sandbox
        .set("WAMCP_DATA_DIR", data.display().to_string())
        // Journal off: these commands lose work for good, so wamcp asks.
        .set("WAMCP_UNDO_BUDGET_MB", "0");
    common::git(&project, &["init", "-q"]);
    let event = |command: &str, mode: &str| {
        json!({"session_id": "s1", "cwd": project, "permission_mode": mode,
            "hook_event_name": "PreToolUse", "tool_name": "mcp__plugin_wamcp_wamcp__run_powershell",
            "tool_input": {"command": command}, "tool_use_id": "toolu_1"})
    };
    let asked = run_hook(
        &sandbox,
        "claude-pre-tool-use",
        &event("git stash clear", "default"),
    );
    assert_eq!(
        asked["hookSpecificOutput"]["permissionDecision"], "ask",
        "{asked}"
    );
    let unasked = run_hook(
        &sandbox,
        "claude-pre-tool-use",
        &event("git reflog expire --all", "bypassPermissions"),
    );
    assert_eq!(unasked["hookSpecificOutput"]["permissionDecision"], "ask");

    let client = sandbox.connect().await;
    // As Claude Code sends it: the call's tool-use id in `_meta`.
    let call = |command: &str, tool_use: Option<&str>| {
        let mut params = rmcp::model::CallToolRequestParams::new("run_powershell")
            .with_arguments(json!({"command": command}).as_object().unwrap().clone());
        params.meta = tool_use.map(|id| {
            rmcp::model::RequestMetaObject(rmcp::model::MetaObject(
                json!({"claudecode/toolUseId": id})
                    .as_object()
                    .unwrap()
                    .clone(),
            ))
        });
        let peer = client.service.peer().clone();
        async move { peer.call_tool(params).await.unwrap() }
    };
    for (command, tool_use, why) in [
        (
            "git stash clear",
            Some("toolu_2"),
            "another call than the one asked about",
        ),
        ("git stash clear", None, "a call without the host's id"),
    ] {
        let refused = call(command, tool_use).await;
        assert_eq!(refused.is_error, Some(true), "{why}: {refused:?}");
    }
    let ran = call("git stash clear", Some("toolu_1")).await;
    assert_eq!(ran.is_error, Some(false), "{ran:?}");
    for (command, why) in [
        ("git stash clear", "the host's yes answered one call"),
        (
            "git reflog expire --all",
            "the host showed no prompt in bypassPermissions",
        ),
        ("git clean -fdx", "the host never asked about this call"),
    ] {
        let refused = call(command, Some("toolu_1")).await;
        assert_eq!(refused.is_error, Some(true), "{why}: {refused:?}");
        let text = serde_json::to_string(&refused.structured_content).unwrap();
        assert!(text.contains("COMMAND_NOT_ALLOWED"), "{why}: {text}");
    }
    client.close().await;
}

/// What became of the calls the host asked about lands in the audit trail
/// (session, call, mode, outcome), and a turn with any ends with a summary;
/// calls nobody was asked about leave no record.
#[tokio::test]
async fn the_hosts_outcomes_land_in_the_trail() {
    let (sandbox, project) = Sandbox::with_project();
    let data = sandbox.root().join("plugin-data");
    let sandbox = sandbox
        .set("WAMCP_DATA_DIR", data.display().to_string())
        // Journal off: these commands lose work for good, so wamcp asks.
        .set("WAMCP_UNDO_BUDGET_MB", "0")
        .set("WAMCP_TOOLS", "core,env");
    let report = |event: &str, tool: &str, command: &str, id: &str| {
        json!({"session_id": "sess-1", "cwd": project, "permission_mode": "default",
            "hook_event_name": event, "tool_name": tool, "tool_input": {"command": command},
            "tool_response": {}, "tool_use_id": id})
    };
    for (hook, event, tool, command, id) in [
        (
            "claude-post-tool-use",
            "PostToolUse",
            "Bash",
            "git reset --hard",
            "t1",
        ),
        (
            "claude-post-tool-use-failure",
            "PostToolUseFailure",
            "Bash",
            "git push --force",
            "t2",
        ),
        (
            "claude-post-tool-use",
            "PostToolUse",
            "Bash",
            "git status",
            "t3",
        ),
        (
            "claude-post-tool-use",
            "PostToolUse",
            "mcp__plugin_wamcp_wamcp__run_powershell",
            "git clean -fdx",
            "t4",
        ),
    ] {
        assert_eq!(
            run_hook(&sandbox, hook, &report(event, tool, command, id)),
            Value::Null
        );
    }
    let stop = json!({"session_id": "sess-1", "hook_event_name": "Stop", "cwd": project});
    run_hook(&sandbox, "claude-stop", &stop);
    run_hook(&sandbox, "claude-stop", &stop);

    let client = sandbox.connect().await;
    let trail = client
        .call("logs_query", json!({"filter": "approvals", "last_n": 50}))
        .await
        .structured_content
        .unwrap();
    let records: Vec<String> = trail["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{} {} {} | {}",
                r["tool"], r["outcome"], r["subject"], r["detail"]
            )
        })
        .collect();
    assert_eq!(
        records,
        [
            r#""host" "succeeded" "Bash: git reset --hard" | "session=sess-1 tool_use=t1 mode=default asked""#,
            r#""host" "failed" "Bash: git push --force" | "session=sess-1 tool_use=t2 mode=default asked""#,
            r#""host" "succeeded" "mcp__plugin_wamcp_wamcp__run_powershell: git clean -fdx" | "session=sess-1 tool_use=t4 mode=default asked""#,
            r#""host" "not_applicable" "turn summary" | "session=sess-1 asked calls: 2 ran, 1 failed""#,
        ],
        "{trail:#}"
    );
    assert_eq!(trail["chain_intact"], true);
    client.close().await;
}
