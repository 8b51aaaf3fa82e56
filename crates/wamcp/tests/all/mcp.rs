//! The real binary, driven over stdio by rmcp's client in both protocol eras.

use crate::common;

use crate::common::Sandbox;
use serde_json::{Value, json};

const CORE: &[&str] = &[
    "read_file",
    "list_directory",
    "list_empty_dirs",
    "find_files",
    "search_files",
    "get_system_info",
    "get_server_info",
];

/// The tools registered for `groups`, in presentation order.
fn expected_tools(groups: &[&str]) -> Vec<&'static str> {
    let mut tools = CORE[..5].to_vec();
    if groups.contains(&"edit") {
        tools.extend(["write_file", "edit_file"]);
    }
    if groups.contains(&"edit") || groups.contains(&"build") {
        tools.push("undo");
    }
    if groups.contains(&"build") {
        tools.extend([
            "build_project",
            "compile_shader",
            "run_powershell",
            "capability_run",
        ]);
    }
    tools.push(CORE[5]);
    if groups.contains(&"build") {
        tools.push("get_gpu_info");
    }
    tools.push(CORE[6]);
    if groups.contains(&"net") {
        tools.extend([
            "download_file",
            "fetch_https_response",
            "get_github_latest_release",
        ]);
    }
    if groups.contains(&"docs") || groups.contains(&"research") {
        tools.push("fetch_web_page");
    }
    if groups.contains(&"search") || groups.contains(&"research") {
        tools.push("web_search");
    }
    if groups.contains(&"env") {
        tools.extend([
            "env_inspect",
            "tool_discover",
            "workflow_plan",
            "logs_query",
            "ecosystem_scan",
            "mcp_audit",
        ]);
    }
    if groups.contains(&"packages") {
        tools.extend(["package_search", "package_install"]);
    }
    if groups.contains(&"sandbox") {
        tools.push("sandbox_run");
    }
    if groups.contains(&"desktop") && cfg!(windows) {
        tools.extend(DESKTOP);
    }
    tools
}

const DESKTOP: [&str; 11] = [
    "windows",
    "see",
    "click",
    "type_text",
    "scroll",
    "key",
    "open_app",
    "reveal",
    "close_window",
    "move_window",
    "wait_for",
];

/// Desktop control is registered on Windows only; elsewhere the report
/// names the tools and says why, and the instructions leave out its rule.
#[tokio::test]
async fn desktop_tools_exist_on_windows_and_are_explained_elsewhere() {
    let client = Sandbox::new()
        .set("WAMCP_TOOLS", "core,desktop")
        .connect()
        .await;
    let names = client.tool_names().await;
    let info = client.server_info().await;
    let instructions = client
        .service
        .peer_info()
        .and_then(|i| i.instructions.clone())
        .unwrap_or_default();
    if cfg!(windows) {
        assert!(
            DESKTOP.iter().all(|t| names.contains(&t.to_string())),
            "{names:?}"
        );
        assert_eq!(info["tools_not_on_this_platform"], Value::Null);
        assert!(instructions.contains("credential dialog"), "{instructions}");
    } else {
        assert!(
            DESKTOP.iter().all(|t| !names.contains(&t.to_string())),
            "{names:?}"
        );
        assert_eq!(info["tools_not_on_this_platform"]["tools"], json!(DESKTOP));
        let reason = info["tools_not_on_this_platform"]["reason"]
            .as_str()
            .unwrap();
        assert!(
            reason.contains("only when wamcp runs on Windows"),
            "{reason}"
        );
        assert!(
            !instructions.contains("credential dialog"),
            "{instructions}"
        );
    }
    assert_eq!(info["tools_by_group"]["desktop"], json!(DESKTOP));
    client.close().await;
}

#[tokio::test]
async fn initialize_reports_identity_and_instructions() {
    let client = Sandbox::new().connect().await;
    let info = client.service.peer_info().expect("server info");
    assert_eq!(info.server_info.as_ref().unwrap().name, "wamcp");
    let instructions = info.instructions.clone().unwrap_or_default();
    assert!(instructions.contains("recovery"), "{instructions}");
    assert!(instructions.contains("get_server_info"), "{instructions}");
    assert!(info.capabilities.tools.is_some());
    client.close().await;
}

#[tokio::test]
async fn tools_list_follows_wamcp_tools() {
    let cases: &[(Option<&str>, &[&str], &str)] = &[
        (None, &["core", "edit", "build", "docs", "net"], ""),
        (Some("core"), &["core"], ""),
        (Some(" Core , DOCS,docs "), &["core", "docs"], ""),
        (
            Some("all"),
            &[
                "core", "edit", "build", "docs", "net", "env", "packages", "sandbox", "desktop",
                "search", "research",
            ],
            "",
        ),
        (
            Some("core,cpp"),
            &["core", "edit", "build", "docs", "net"],
            "Unknown tool group 'cpp'",
        ),
        (Some(",,,"), &["core", "edit", "build", "docs", "net"], ""),
    ];
    for (value, groups, error) in cases {
        let mut sandbox = Sandbox::new();
        if let Some(value) = value {
            sandbox = sandbox.set("WAMCP_TOOLS", *value);
        }
        let client = sandbox.connect().await;
        let expected = expected_tools(groups);
        assert_eq!(client.tool_names().await, expected, "WAMCP_TOOLS={value:?}");
        let info = client.server_info().await;
        assert_eq!(
            info["active_tool_groups"],
            json!(groups),
            "WAMCP_TOOLS={value:?}"
        );
        assert_eq!(info["registered_tools"], json!(expected));
        assert_eq!(info["registered_tool_count"], expected.len());
        if error.is_empty() {
            assert_eq!(
                info["tool_groups_error"],
                Value::Null,
                "WAMCP_TOOLS={value:?}"
            );
        } else {
            let text = info["tool_groups_error"].as_str().unwrap_or_default();
            assert!(text.contains(error), "{text}");
        }
        client.close().await;
    }
}

#[tokio::test]
async fn the_stateless_era_serves_the_same_tools() {
    let client = Sandbox::new()
        .set("WAMCP_TOOLS", "core,docs")
        .connect_modern()
        .await;
    assert_eq!(client.tool_names().await, expected_tools(&["core", "docs"]));
    let info = client.server_info().await;
    assert_eq!(info["active_tool_groups"], json!(["core", "docs"]));
    client.close().await;
}

#[tokio::test]
async fn server_info_has_every_documented_field() {
    let client = Sandbox::new().connect().await;
    let info = client.server_info().await;
    for field in [
        "name",
        "version",
        "transport",
        "tool_groups_env_var",
        "active_tool_groups",
        "available_tool_groups",
        "registered_tool_count",
        "registered_tools",
        "tools_by_group",
        "tool_groups_error",
        "config_file",
        "config_error",
        "active_profile",
        "download_root",
        "network_policy",
        "max_download_mb",
        "max_http_mb",
        "writable_roots",
        "project_roots_env_var",
        "project_roots_configured",
        "web_research",
        "web_research_env_var",
        "documentation_hosts",
        "granted_hosts",
        "granted_hosts_file",
        "granted_hosts_env_var",
        "granted_hosts_error",
        "session_granted_hosts",
        "host_consent",
        "web_search",
        "search_backend",
        "adopted_workspace",
        "workspace_note",
    ] {
        assert!(info.get(field).is_some(), "missing {field}");
    }
    assert_eq!(info["name"], "wamcp");
    assert_eq!(info["transport"], "stdio");
    assert_eq!(info["max_download_mb"], 500);
    assert_eq!(info["max_http_mb"], 2);
    assert_eq!(info["web_research"], false);
    assert_eq!(info["web_search"], false);
    assert_eq!(info["search_backend"], "duckduckgo");
    assert_eq!(info["tools_by_group"]["core"], json!(CORE));
    assert_eq!(
        info["tools_by_group"]["research"],
        json!(["fetch_web_page", "web_search"])
    );
    assert!(
        info["documentation_hosts"]
            .as_array()
            .unwrap()
            .contains(&json!("learn.microsoft.com"))
    );
    client.close().await;
}

/// Start-up writes nothing; `wamcp config --init` writes the documented
/// file, which the next start then reads.
#[tokio::test]
async fn config_init_writes_a_documented_file_and_start_up_writes_none() {
    let client = Sandbox::new().connect().await;
    let info = client.server_info().await;
    let sandbox = client.close().await;
    let path = sandbox.user_config();
    assert_eq!(info["config_file"], Value::Null);
    assert!(!path.exists(), "start-up wrote {}", path.display());
    sandbox.init_config();
    let client = sandbox.connect().await;
    let info = client.server_info().await;
    let sandbox = client.close().await;
    assert_eq!(info["config_file"], json!(path.display().to_string()));
    assert_eq!(info["config_error"], Value::Null);
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(file["version"], 1);
    for name in [
        "WAMCP_TOOLS",
        "WAMCP_PROJECT_ROOTS",
        "WAMCP_DOWNLOAD_ROOT",
        "WAMCP_SEARCH_BACKEND",
    ] {
        let setting = &file["settings"][name];
        assert_eq!(setting["value"], "", "{name}");
        assert!(
            setting["description"].as_str().unwrap().len() > 20,
            "{name}"
        );
        assert!(!setting["default"].as_str().unwrap().is_empty(), "{name}");
    }
    assert_eq!(file["profiles"]["research"]["enable"], false);
    // Nothing is written into the working directory.
    assert_eq!(std::fs::read_dir(&sandbox.cwd).unwrap().count(), 0);
}

#[tokio::test]
async fn a_malformed_config_leaves_the_server_on_defaults() {
    let sandbox = Sandbox::new();
    let path = sandbox.write(
        "cfg/config.json",
        "{ \"settings\": { \"WAMCP_TOOLS\": \"core\", } ",
    );
    let client = sandbox
        .set("WAMCP_CONFIG_FILE", path.display().to_string())
        .connect()
        .await;
    let info = client.server_info().await;
    let error = info["config_error"].as_str().unwrap();
    assert!(error.contains("invalid JSON"), "{error}");
    assert_eq!(info["config_file"], Value::Null);
    assert_eq!(
        info["active_tool_groups"],
        json!(["core", "edit", "build", "docs", "net"])
    );
    let _sandbox = client.close().await;
    // A broken file is reported, never rewritten.
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .starts_with("{ \"settings\"")
    );
}

#[tokio::test]
async fn unknown_setting_and_bad_profile_tools_are_reported_by_name() {
    let sandbox = Sandbox::new();
    let path = sandbox.write(
        "cfg/config.json",
        r#"{"version":1,"settings":{"WAMCP_TOOLZ":"core"},
            "profiles":{"cpp":{"tools":"core,cpp"}}}"#,
    );
    let client = sandbox
        .set("WAMCP_CONFIG_FILE", path.display().to_string())
        .connect()
        .await;
    let info = client.server_info().await;
    let error = info["config_error"].as_str().unwrap();
    assert!(error.contains("unknown setting \"WAMCP_TOOLZ\""), "{error}");
    assert!(
        error.contains("profiles.cpp.tools: Unknown tool group 'cpp'"),
        "{error}"
    );
    assert_eq!(
        info["active_tool_groups"],
        json!(["core", "edit", "build", "docs", "net"])
    );
    client.close().await;
}

/// Starts a server on a config file with three profiles, with `vars` set.
async fn connect_with_profiles(vars: &[(&str, &str)]) -> (common::Client, String) {
    let mut sandbox = Sandbox::new();
    let path = sandbox
        .write(
            "cfg/config.json",
            r#"{"version":1,
                "settings":{"WAMCP_TOOLS":{"value":"core,docs","default":"","description":""}},
                "active_profile":"review",
                "profiles":{
                    "review":{"tools":"build,docs","description":"review"},
                    "cpp":{"tools":"edit,build,docs","settings":{"WAMCP_EXTRA_DOC_HOSTS":"docs.example.org"}},
                    "parked":{"enable":false,"tools":"core"}}}"#,
        )
        .display()
        .to_string();
    sandbox = sandbox.set("WAMCP_CONFIG_FILE", &path);
    for (key, value) in vars {
        sandbox = sandbox.set(key, *value);
    }
    (sandbox.connect().await, path)
}

#[tokio::test]
async fn the_active_profile_selects_groups_and_settings() {
    let (client, path) = connect_with_profiles(&[("WAMCP_PROFILE", "cpp")]).await;
    let info = client.server_info().await;
    assert_eq!(info["active_profile"], "cpp");
    assert_eq!(info["config_file"], json!(path));
    assert_eq!(
        info["active_tool_groups"],
        json!(["core", "edit", "build", "docs"])
    );
    assert!(
        info["documentation_hosts"]
            .as_array()
            .unwrap()
            .contains(&json!("docs.example.org"))
    );
    let overrides = info["config_overrides"].as_array().unwrap();
    assert_eq!(overrides.len(), 1, "{overrides:?}");
    assert!(
        overrides[0]
            .as_str()
            .unwrap()
            .contains("replaces active_profile 'review'")
    );
    client.close().await;
}

#[tokio::test]
async fn an_unknown_or_disabled_profile_runs_on_defaults() {
    for (profile, reason) in [("nope", "is not defined"), ("parked", "is disabled")] {
        let (client, _) = connect_with_profiles(&[("WAMCP_PROFILE", profile)]).await;
        let info = client.server_info().await;
        let error = info["config_error"].as_str().unwrap();
        assert!(error.contains(reason), "{profile}: {error}");
        assert_eq!(info["active_profile"], Value::Null);
        // The whole file is set aside, so its WAMCP_TOOLS does not apply either.
        assert_eq!(
            info["active_tool_groups"],
            json!(["core", "edit", "build", "docs", "net"])
        );
        client.close().await;
    }
}

#[tokio::test]
async fn the_environment_overrides_the_profile_and_says_so() {
    let (client, _) = connect_with_profiles(&[("WAMCP_TOOLS", "core")]).await;
    let info = client.server_info().await;
    assert_eq!(info["active_profile"], "review");
    assert_eq!(info["active_tool_groups"], json!(["core"]));
    assert_eq!(
        info["config_overrides"],
        json!([
            "WAMCP_TOOLS='core' from the environment overrides 'build,docs' from the profile 'review'"
        ])
    );
    client.close().await;
}

#[tokio::test]
async fn search_without_docs_warns_and_research_is_reported() {
    let client = Sandbox::new()
        .set("WAMCP_TOOLS", "core,search")
        .connect()
        .await;
    let info = client.server_info().await;
    assert!(
        info["posture_warning"]
            .as_str()
            .unwrap()
            .contains("without 'docs'")
    );
    client.close().await;
    let client = Sandbox::new()
        .set("WAMCP_TOOLS", "core")
        .set("WAMCP_WEB_RESEARCH", " Yes ")
        .connect()
        .await;
    let info = client.server_info().await;
    assert_eq!(info["active_tool_groups"], json!(["core", "research"]));
    assert_eq!(info["web_research"], true);
    assert_eq!(info["posture_warning"], Value::Null);
    client.close().await;
}

#[tokio::test]
async fn the_search_budget_is_a_setting_and_a_bad_value_is_reported() {
    for (value, seconds, warned) in [
        ("", 10, false),
        ("42", 42, false),
        ("0", 10, true),
        ("1e3", 10, true),
    ] {
        let client = Sandbox::new()
            .set("WAMCP_SEARCH_BUDGET_SECONDS", value)
            .connect()
            .await;
        let info = client.server_info().await;
        assert_eq!(info["search_budget_seconds"], seconds, "{value}");
        let warnings = info["setting_warnings"].to_string();
        assert_eq!(
            warnings.contains("WAMCP_SEARCH_BUDGET_SECONDS"),
            warned,
            "{value}: {warnings}"
        );
        client.close().await;
    }
}

#[tokio::test]
async fn project_roots_are_resolved_and_stale_entries_reported() {
    let sandbox = Sandbox::new();
    let project = sandbox.root().join("proj");
    std::fs::create_dir_all(&project).unwrap();
    let missing = sandbox.root().join("gone");
    let sep = if cfg!(windows) { ";" } else { ":" };
    let value = format!("{}{sep}{}{sep} ", project.display(), missing.display());
    let client = sandbox.set("WAMCP_PROJECT_ROOTS", value).connect().await;
    let info = client.server_info().await;
    let roots = info["writable_roots"].as_array().unwrap();
    assert_eq!(roots.len(), 2, "{roots:?}");
    assert_eq!(roots[1], json!(project.display().to_string()));
    assert_eq!(
        info["project_roots_configured"].as_array().unwrap().len(),
        2
    );
    let warnings = info["setting_warnings"].as_array().unwrap();
    assert!(
        warnings[0].as_str().unwrap().contains("skipped"),
        "{warnings:?}"
    );
    client.close().await;
}

#[tokio::test]
async fn workspace_from_cwd_adopts_a_project_and_refuses_home() {
    let sandbox = Sandbox::new();
    let project = sandbox.root().join("work");
    let client = sandbox.set("WAMCP_WORKSPACE_FROM_CWD", "1").connect().await;
    let info = client.server_info().await;
    assert_eq!(
        info["adopted_workspace"],
        json!(project.display().to_string())
    );
    assert_eq!(info["workspace_note"], Value::Null);
    assert!(
        info["writable_roots"]
            .as_array()
            .unwrap()
            .contains(&json!(project.display().to_string()))
    );
    client.close().await;

    let sandbox = Sandbox::new();
    let home = sandbox.home();
    let client = sandbox
        .set("WAMCP_WORKSPACE_FROM_CWD", "1")
        .in_dir(&home)
        .connect()
        .await;
    let info = client.server_info().await;
    assert_eq!(info["adopted_workspace"], Value::Null);
    assert!(
        info["workspace_note"]
            .as_str()
            .unwrap()
            .contains("is your home directory")
    );
    client.close().await;

    let sandbox = Sandbox::new();
    let root = if cfg!(windows) {
        std::path::PathBuf::from("C:\\")
    } else {
        "/".into()
    };
    let client = sandbox
        .set("WAMCP_WORKSPACE_FROM_CWD", "true")
        .in_dir(&root)
        .connect()
        .await;
    let info = client.server_info().await;
    assert_eq!(info["adopted_workspace"], Value::Null);
    assert!(
        info["workspace_note"].as_str().unwrap().contains("root"),
        "{}",
        info["workspace_note"]
    );
    client.close().await;
}

#[tokio::test]
async fn system_info_names_the_os_without_a_version_field() {
    let client = Sandbox::new().connect().await;
    let info = client.data("get_system_info").await;
    assert!(info.get("version").is_none());
    for field in [
        "os",
        "os_build",
        "machine",
        "architecture",
        "username",
        "home",
        "cwd",
        "python_version",
    ] {
        assert!(info.get(field).is_some(), "missing {field}");
    }
    // Null when no Python is installed (Wine), else the version number alone.
    let has_python = ["python", "python3"].iter().any(|p| {
        std::process::Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success() && o.stdout.starts_with(b"Python 3"))
    });
    match info["python_version"].as_str() {
        Some(version) => assert!(
            version.starts_with('3') && version.contains('.'),
            "{version}"
        ),
        None => assert!(!has_python || cfg!(windows), "{info}"),
    }
    assert_eq!(info["architecture"], std::env::consts::ARCH);
    if cfg!(windows) {
        assert!(
            info["os"].as_str().unwrap().starts_with("Windows "),
            "{}",
            info["os"]
        );
    } else {
        assert!(
            info["kernel"].as_str().unwrap().starts_with("Linux"),
            "{}",
            info["kernel"]
        );
    }
    client.close().await;
}

#[tokio::test]
async fn bad_arguments_get_the_envelope_and_unknown_tools_a_protocol_error() {
    let client = Sandbox::new().connect().await;
    let result = client
        .call("get_server_info", json!({"verbose": true}))
        .await;
    assert_eq!(result.is_error, Some(true));
    let envelope = result.structured_content.clone().unwrap();
    assert_eq!(envelope["ok"], false);
    assert_eq!(envelope["error"]["type"], "INVALID_ARGUMENTS");
    assert_eq!(envelope["error"]["tool"], "get_server_info");
    let first = envelope["error"]["recovery"][0].as_str().unwrap();
    assert!(first.starts_with("DO NOT retry unchanged"), "{first}");
    let text = result.content[0].as_text().unwrap().text.clone();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), envelope);

    // A tool wamcp has, switched off here: web_search says why with
    // WEB_RESEARCH_DISABLED, the others name their groups; a name wamcp
    // never had is unknown.
    let error = client
        .error_of("web_search", json!({"query": "vulkan"}))
        .await;
    assert_eq!(error["type"], "WEB_RESEARCH_DISABLED", "{error}");
    let recovery = error["recovery"].to_string();
    assert!(
        recovery.contains("WAMCP_WEB_RESEARCH=1") && recovery.contains("WAMCP_TOOLS"),
        "{error}"
    );
    for (name, says) in [
        (
            "see",
            if cfg!(windows) {
                "'see' is switched off in this server: it belongs to the desktop group(s)"
            } else {
                "'see' works only on Windows"
            },
        ),
        ("bogus_tool", "Unknown tool 'bogus_tool'"),
    ] {
        let params = rmcp::model::CallToolRequestParams::new(name);
        let err = client
            .service
            .peer()
            .call_tool(params)
            .await
            .expect_err("not registered");
        assert!(format!("{err}").contains(says), "{err}");
    }
    client.close().await;
}

/// The six skills are prompts for every client, in both protocol eras.
#[tokio::test]
async fn the_skills_are_served_as_prompts_in_both_eras() {
    for modern in [false, true] {
        let sandbox = Sandbox::new();
        let client = if modern {
            sandbox.connect_modern().await
        } else {
            sandbox.connect().await
        };
        let peer = client.service.peer();
        let prompts = peer.list_all_prompts().await.expect("prompts/list");
        let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "env-inspect",
                "workflow-plan",
                "package-install",
                "sandbox-run",
                "win-setup",
                "ecosystem-defrag"
            ],
            "modern={modern}"
        );
        assert!(
            prompts
                .iter()
                .all(|p| p.description.as_ref().is_some_and(|d| !d.is_empty()))
        );
        let got = peer
            .get_prompt(rmcp::model::GetPromptRequestParams::new("package-install"))
            .await
            .expect("prompts/get");
        let message = serde_json::to_value(&got.messages).unwrap();
        assert_eq!(message[0]["role"], "user");
        let text = message[0]["content"]["text"].as_str().unwrap();
        assert!(text.contains("package_install"), "{text}");
        let unknown = peer
            .get_prompt(rmcp::model::GetPromptRequestParams::new("rm-rf"))
            .await;
        assert!(unknown.is_err(), "{unknown:?}");
        client.close().await;
    }
}
