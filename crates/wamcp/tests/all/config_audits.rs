//! mcp_audit and ecosystem_scan over real project trees with secrets in
//! them: structure comes back, no value ever does.

use crate::common;

use crate::common::Sandbox;
use serde_json::{Value, json};

const SECRET: &str = "ghp_SECRETSECRET0123456789";

fn project_with_configs() -> (Sandbox, std::path::PathBuf) {
    let (sandbox, project) = Sandbox::with_project();
    let files = [
        (
            ".mcp.json",
            json!({"mcpServers": {
                "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": SECRET}},
                "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv"]},
                "wamcp": {"command": "wamcp", "args": []},
            }})
            .to_string(),
        ),
        (
            ".vscode/mcp.json",
            json!({"servers": {
                "fs-again": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv"]},
                "remote": {"type": "http", "url": format!("https://mcp.example.com/?token={SECRET}"), "headers": {"Authorization": SECRET}},
            }})
            .to_string(),
        ),
        (".cursor/mcp.json", format!("{{\"mcpServers\": {{\"x\": \"{SECRET}\"")),
        (
            ".codex/config.toml",
            format!("[mcp_servers.wamcp]\ncommand = \"wamcp\"\n[mcp_servers.wamcp.env]\nTOKEN = \"{SECRET}\"\n"),
        ),
        (
            ".claude/settings.json",
            json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": format!("curl -H {SECRET}")}]}]},
                   "permissions": {"allow": [format!("Bash(echo {SECRET})"), "Read"], "deny": []},
                   "enabledPlugins": {"formatter@market": true, "off@market": false}})
            .to_string(),
        ),
        (".claude/skills/release/SKILL.md", "---\nname: release\n---\n".to_string()),
        ("CLAUDE.md", "Be brief.\n".to_string()),
    ];
    for (relative, text) in files {
        let path = project.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let home = sandbox.home();
    std::fs::write(
        home.join(".claude.json"),
        json!({"mcpServers": {"github": {"command": "npx", "args": ["other"], "env": {"T": SECRET}}},
               "projects": {project.display().to_string(): {"mcpServers": {"local-db": {"command": "db-mcp", "args": [SECRET]}}}}})
        .to_string(),
    )
    .unwrap();
    (sandbox.set("WAMCP_TOOLS", "core,edit,env"), project)
}

async fn data(client: &common::Client, tool: &str, args: Value) -> Value {
    let result = client.call(tool, args.clone()).await;
    assert_eq!(result.is_error, Some(false), "{tool} {args}: {result:?}");
    let value = result.structured_content.unwrap();
    let text = result.content[0].as_text().unwrap().text.clone();
    assert!(
        !text.contains(SECRET) && !value.to_string().contains(SECRET),
        "a secret left: {text}"
    );
    value
}

fn servers(audit: &Value) -> Vec<String> {
    audit["files"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["servers"].as_array().cloned().unwrap_or_default())
        .map(|s| {
            format!(
                "{} {} {} args={} env={}",
                s["name"].as_str().unwrap(),
                s["transport"].as_str().unwrap(),
                s["valid"],
                s["arg_count"],
                s["has_env"]
            )
        })
        .collect()
}

#[tokio::test]
async fn mcp_audit_shows_the_shape_of_every_entry_and_no_value() {
    let (sandbox, project) = project_with_configs();
    let explicit = sandbox.write(
        "elsewhere/desktop.json",
        &json!({"mcpServers": {"desk": {"command": "x", "env": {"K": SECRET}}}}).to_string(),
    );
    let client = sandbox.connect().await;
    let audit = data(&client, "mcp_audit", json!({"cwd": "proj"})).await;
    assert_eq!(audit["status"], "ok");
    assert_eq!(
        servers(&audit),
        [
            "github stdio true args=2 env=true",
            "files stdio true args=3 env=false",
            "wamcp stdio true args=0 env=false",
            "fs-again stdio true args=3 env=false",
            "remote http true args=0 env=false",
            "wamcp stdio true args=0 env=true",
        ]
    );
    let cursor = &audit["files"][2];
    assert_eq!(cursor["valid"], false);
    assert!(
        cursor["error"]
            .as_str()
            .unwrap()
            .starts_with("not valid JSON"),
        "{cursor}"
    );
    assert_eq!(audit["server_count"], 6);
    assert!(
        audit["files"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["scope"] == "project")
    );

    let wider = data(
        &client,
        "mcp_audit",
        json!({"cwd": project.display().to_string(), "include_host": true, "config_path": explicit.display().to_string()}),
    )
    .await;
    let all = servers(&wider);
    assert!(
        all.contains(&"local-db stdio true args=1 env=false".to_string()),
        "{all:?}"
    );
    assert!(
        all.contains(&"desk stdio true args=0 env=true".to_string()),
        "{all:?}"
    );
    let error = client
        .error_of("mcp_audit", json!({"cwd": "no-such-dir"}))
        .await;
    assert_eq!(error["type"], "WORKING_DIRECTORY_NOT_ALLOWED");
    assert_eq!(error["status"], "invalid_input");
    // Outside the project (the home folder holds the user's own client
    // configuration) only with include_host, which the host asks about.
    let home = client.sandbox.home().display().to_string();
    for tool in ["mcp_audit", "ecosystem_scan"] {
        let error = client.error_of(tool, json!({"cwd": home})).await;
        assert_eq!(
            error["type"], "WORKING_DIRECTORY_NOT_ALLOWED",
            "{tool}: {error}"
        );
        let wide = data(&client, tool, json!({"cwd": home, "include_host": true})).await;
        assert_eq!(wide["include_host"], true, "{tool}: {wide}");
    }
    client.close().await;
}

#[cfg(unix)]
#[tokio::test]
async fn a_fifo_under_a_config_name_is_not_opened() {
    let (sandbox, project) = Sandbox::with_project();
    let fifo = project.join(".mcp.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let client = sandbox.set("WAMCP_TOOLS", "core,env").connect().await;
    let audit = data(&client, "mcp_audit", json!({"cwd": "proj"})).await;
    assert!(
        audit["files"][0]["error"]
            .as_str()
            .unwrap()
            .contains("FIFO"),
        "{audit:#}"
    );
    client.close().await;
}

#[tokio::test]
async fn ecosystem_scan_finds_overlaps_and_plans_reversible_steps() {
    let (sandbox, _project) = project_with_configs();
    let client = sandbox.connect().await;
    let scan = data(&client, "ecosystem_scan", json!({"cwd": "proj"})).await;
    let overlaps = scan["overlaps"].as_array().unwrap();
    let mut kinds: Vec<&str> = overlaps
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    kinds.sort();
    assert_eq!(
        kinds,
        [
            "filesystem_servers",
            "same_name",
            "same_server",
            "shadows_wamcp",
            "shadows_wamcp"
        ],
        "{scan:#}"
    );
    let names = |o: &Value| -> Vec<String> {
        o["servers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["server"].as_str().unwrap().to_string())
            .collect()
    };
    let same: Vec<Vec<String>> = overlaps
        .iter()
        .filter(|o| o["kind"] == "same_server")
        .map(names)
        .collect();
    assert!(
        same.contains(&vec!["files".to_string(), "fs-again".to_string()]),
        "{same:?}"
    );
    let steps = scan["consolidation_plan"].as_array().unwrap();
    let planned: Vec<String> = steps
        .iter()
        .map(|s| {
            format!(
                "{} {}",
                s["server"].as_str().unwrap(),
                s["action"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        planned,
        [
            "fs-again copy the file, then remove this entry: an identical one comes first",
            "files copy the file, then disable this entry: wamcp's file tools cover it",
            "fs-again copy the file, then disable this entry: wamcp's file tools cover it",
        ]
    );
    assert!(
        steps
            .iter()
            .all(|s| s["undo"].as_str().unwrap().contains("restore"))
    );
    let project = &scan["project"];
    assert_eq!(project["skills"], json!(["release"]));
    assert_eq!(project["instructions"][0]["path"], "CLAUDE.md");
    let settings = &project["claude_settings"][0];
    assert_eq!(settings["hooks"]["PreToolUse"], 1);
    assert_eq!(settings["permission_rules"]["allow"], 2);
    assert_eq!(settings["enabled_plugins"], json!(["formatter@market"]));
    assert!(scan.get("host").is_none());
    let error = client
        .error_of("ecosystem_scan", json!({"include_packages": true}))
        .await;
    assert_eq!(error["type"], "INVALID_INPUT");
    let wide = data(
        &client,
        "ecosystem_scan",
        json!({"cwd": "proj", "include_host": true, "include_packages": true}),
    )
    .await;
    assert!(wide["host"].is_object());
    assert_eq!(wide["packages"]["vscode_extensions"], json!([]));
    client.close().await;
}

/// A project file (the agent's to write) is never compared by content with
/// the user's files: it can neither confirm a guess about a value there nor
/// make the plan remove the user's entry.
#[tokio::test]
async fn a_project_entry_cannot_probe_or_remove_a_host_entry() {
    let (sandbox, project) = Sandbox::with_project();
    let entry = json!({"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"T": SECRET}});
    std::fs::write(
        sandbox.home().join(".claude.json"),
        json!({"mcpServers": {"github": entry}}).to_string(),
    )
    .unwrap();
    std::fs::write(
        project.join(".mcp.json"),
        json!({"mcpServers": {"aaa": entry}}).to_string(),
    )
    .unwrap();
    let client = sandbox.set("WAMCP_TOOLS", "core,env").connect().await;
    let scan = data(
        &client,
        "ecosystem_scan",
        json!({"cwd": "proj", "include_host": true}),
    )
    .await;
    assert_eq!(scan["overlaps"], json!([]), "{scan:#}");
    assert_eq!(scan["consolidation_plan"], json!([]));
    client.close().await;
}

/// With the host and packages: the WinGet inventory (from a stand-in
/// `winget export`), Codex's plugins, the same skill in two folders and
/// the same hook in two hosts — the command never shown.
#[tokio::test]
async fn ecosystem_scan_lists_packages_plugins_and_duplicates() {
    let (sandbox, log, _state) = common::with_fake_winget();
    let project = sandbox.root().join("work").join("proj");
    assert!(project.is_dir());
    let home = sandbox.home();
    let codex = home.join(".codex");
    let hook = json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": format!("notify {SECRET}")}]}]}});
    let files = [
        (project.join(".claude/skills/review/SKILL.md"), "---\nname: review\n---\n".to_string()),
        (project.join(".agents/skills/review/SKILL.md"), "---\nname: review\n---\n".to_string()),
        (home.join(".claude/settings.json"), hook.to_string()),
        (codex.join("hooks.json"), hook.to_string()),
        (
            codex.join("config.toml"),
            "[plugins.\"wamcp@wamcp\"]\nenabled = true\n[plugins.\"gone@market\"]\nenabled = false\n".to_string(),
        ),
        (codex.join("plugins/cache/wamcp/wamcp/0.1.0/.codex-plugin/plugin.json"), "{}".to_string()),
        (codex.join("plugins/cache/market/other/local/plugin.json"), "{}".to_string()),
    ];
    for (path, text) in files {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let client = sandbox
        .set("CODEX_HOME", codex.display().to_string())
        .connect()
        .await;
    let scan = data(
        &client,
        "ecosystem_scan",
        json!({"cwd": "proj", "include_host": true, "include_packages": true}),
    )
    .await;
    assert_eq!(
        scan["packages"]["winget"],
        json!({"state": "listed", "count": 1, "packages": [{"id": "Fake.Tool", "version": "1.0", "source": "winget"}]}),
        "{scan:#}"
    );
    assert!(
        std::fs::read_to_string(&log)
            .unwrap()
            .starts_with("export -o "),
        "winget export ran"
    );
    assert_eq!(
        scan["host"]["codex_plugins"],
        json!([
            {"plugin": "gone@market", "installed": false, "enabled": false},
            {"plugin": "other@market", "installed": true, "enabled": null},
            {"plugin": "wamcp@wamcp", "installed": true, "enabled": true},
        ])
    );
    let of_kind = |kind: &str| -> Vec<Value> {
        scan["overlaps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o["kind"] == kind)
            .cloned()
            .collect()
    };
    let skills = of_kind("same_skill");
    assert_eq!(skills.len(), 1, "{scan:#}");
    assert_eq!(skills[0]["skill"], "review");
    let hooks = of_kind("same_hook");
    assert_eq!(hooks.len(), 1, "{scan:#}");
    let clients: Vec<&str> = hooks[0]["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["client"].as_str().unwrap())
        .collect();
    assert_eq!(clients, ["claude-code", "codex"]);
    assert!(!scan.to_string().contains(SECRET), "{scan:#}");
    client.close().await;
}

/// Links the agent plants in the project to the user's own files are not
/// read as the project's: nothing of the user's files is shown, counted or
/// compared with what the agent wrote beside them.
#[cfg(unix)]
#[tokio::test]
async fn links_out_of_the_project_are_not_read_as_the_project() {
    use std::os::unix::fs::symlink;
    let (sandbox, project) = Sandbox::with_project();
    let home = sandbox.home();
    let secret_entry = json!({"command": "npx", "args": ["x"], "env": {"T": SECRET}});
    std::fs::write(
        home.join(".claude.json"),
        json!({"mcpServers": {"github": secret_entry}}).to_string(),
    )
    .unwrap();
    let hook = json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": format!("notify {SECRET}")}]}]},
                      "enabledPlugins": {"private@market": true}});
    std::fs::create_dir_all(home.join(".claude/skills/private-skill")).unwrap();
    std::fs::write(home.join(".claude/settings.json"), hook.to_string()).unwrap();
    // The agent's guesses beside the links.
    std::fs::create_dir_all(project.join(".vscode")).unwrap();
    std::fs::write(
        project.join(".vscode/mcp.json"),
        json!({"servers": {"guess": secret_entry}}).to_string(),
    )
    .unwrap();
    std::fs::create_dir_all(project.join(".codex")).unwrap();
    std::fs::write(project.join(".codex/hooks.json"), hook.to_string()).unwrap();
    symlink(home.join(".claude.json"), project.join(".mcp.json")).unwrap();
    symlink(home.join(".claude"), project.join(".claude")).unwrap();
    let client = sandbox.set("WAMCP_TOOLS", "core,env").connect().await;
    let scan = data(&client, "ecosystem_scan", json!({"cwd": "proj"})).await;
    assert_eq!(scan["overlaps"], json!([]), "{scan:#}");
    let linked = scan["mcp"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with(".mcp.json"))
        .unwrap()
        .clone();
    assert_eq!(
        linked["error"], "not read: a link leads it out of the project folder",
        "{linked}"
    );
    assert_eq!(linked["servers"], json!([]));
    assert_eq!(scan["project"]["claude_settings"], json!([]), "{scan:#}");
    assert_eq!(scan["project"]["skills"], json!([]));
    assert!(!scan.to_string().contains("private"), "{scan:#}");
    let audit = data(&client, "mcp_audit", json!({"cwd": "proj"})).await;
    assert!(!audit.to_string().contains("github"), "{audit:#}");
    client.close().await;
}
