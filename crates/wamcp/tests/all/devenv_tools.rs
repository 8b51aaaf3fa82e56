//! The development-environment tools over MCP: registration, the snapshot,
//! discovery, routing, capability plans and runs with their effects, and
//! the audit trail they leave.

use crate::common;

use crate::common::Sandbox;
use serde_json::{Value, json};
use std::path::PathBuf;

/// A program every test host has, and argv that writes `file` in the
/// working directory with it.
fn writer(file: &str) -> Value {
    if cfg!(windows) {
        json!(["cmd", "/c", "echo", format!("x>{file}")])
    } else {
        json!(["touch", file])
    }
}

/// A sandbox with a project root and a user catalog (outside the root)
/// holding `capabilities`.
fn with_catalog(capabilities: Value) -> (Sandbox, PathBuf, PathBuf) {
    let (sandbox, project) = Sandbox::with_project();
    let file = sandbox.write(
        "caps/capabilities.json",
        &json!({"capabilities": capabilities}).to_string(),
    );
    let sandbox = sandbox
        .set("WAMCP_CAPABILITIES_FILE", file.display().to_string())
        .set("WAMCP_TOOLS", "core,edit,build,env");
    (sandbox, project, file)
}

fn capability(id: &str, safety: &str, argv: Value) -> Value {
    json!({"id": id, "description": "A test capability.", "safety": safety, "argv": [argv]})
}

/// Runs `capability_run`; a call that executes carries the identity its
/// plan reviewed, unless it names one itself.
async fn run(client: &common::Client, args: Value) -> Value {
    let args = if args["execute"] == true {
        common::reviewed(client, "capability_run", args).await
    } else {
        args
    };
    let result = client.call("capability_run", args.clone()).await;
    assert_eq!(result.is_error, Some(false), "{args}: {result:?}");
    result.structured_content.unwrap()
}

/// Where the server keeps its audit trail.
async fn audit_dir(client: &common::Client) -> PathBuf {
    PathBuf::from(
        client.server_info().await["audit_log_dir"]
            .as_str()
            .unwrap(),
    )
}

async fn records(client: &common::Client, filter: &str) -> Value {
    let result = client
        .call("logs_query", json!({"filter": filter, "last_n": 200}))
        .await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    result.structured_content.unwrap()
}

fn outcomes(log: &Value) -> Vec<String> {
    log["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r["outcome"].as_str().unwrap(),
                r["detail"].as_str().unwrap_or("")
            )
        })
        .collect()
}

#[tokio::test]
async fn env_tools_join_only_with_their_group_and_capability_run_is_in_build() {
    let client = Sandbox::new().connect().await;
    let names = client.tool_names().await;
    assert!(names.contains(&"capability_run".to_string()), "{names:?}");
    assert!(!names.contains(&"env_inspect".to_string()));
    client.close().await;
    let client = Sandbox::new()
        .set("WAMCP_TOOLS", "core,env")
        .connect()
        .await;
    let names = client.tool_names().await;
    for tool in [
        "env_inspect",
        "tool_discover",
        "workflow_plan",
        "logs_query",
    ] {
        assert!(names.contains(&tool.to_string()), "{tool}: {names:?}");
    }
    assert!(!names.contains(&"capability_run".to_string()));
    client.close().await;
}

#[tokio::test]
async fn the_snapshot_is_tri_state_and_served_from_the_cache() {
    let client = Sandbox::new()
        .set("WAMCP_TOOLS", "core,env")
        .connect()
        .await;
    let first = client.data("env_inspect").await;
    let errors = first["errors"].as_array().unwrap();
    assert_eq!(
        first["status"],
        if errors.is_empty() { "ok" } else { "degraded" }
    );
    for (key, available) in first["availability"].as_object().unwrap() {
        let unknown = first["probe_states"][key] == "unknown";
        assert_eq!(available.is_null(), unknown, "{key}");
        assert_eq!(unknown, errors.iter().any(|e| e["probe"] == *key), "{key}");
    }
    let again = client.data("env_inspect").await;
    assert_eq!(again, first, "the cache returns exactly what it returned");
    let fresh = client
        .call("env_inspect", json!({"force_refresh": true}))
        .await;
    let fresh = fresh.structured_content.unwrap();
    assert_eq!(
        fresh["availability"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        first["availability"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>()
    );
    if cfg!(windows) {
        assert_eq!(first["platform"], "windows");
        assert!(
            first["os"]["name"]
                .as_str()
                .unwrap_or_default()
                .contains("Windows"),
            "{first:#}"
        );
        // Wine has no wsl.exe and no Visual Studio installer: observed absent.
        assert_eq!(first["availability"]["wsl"], false);
        assert_eq!(first["availability"]["visual_studio"], false);
    } else {
        assert_eq!(first["availability"]["runtime.rust"], true);
        assert!(first["os"]["kernel"].is_string());
    }
    client.close().await;
}

#[tokio::test]
async fn discovery_answers_per_category_and_refuses_unknown_ones() {
    let client = Sandbox::new()
        .set("WAMCP_TOOLS", "core,env")
        .connect()
        .await;
    let result = client
        .call("tool_discover", json!({"category": "vcs"}))
        .await;
    let found = result.structured_content.unwrap();
    let tools = found["tools"]["vcs"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["git", "gh", "git-lfs"]);
    if cfg!(unix) {
        assert!(
            tools[0]["version"]
                .as_str()
                .unwrap()
                .starts_with("git version"),
            "{found}"
        );
    }
    let error = client
        .error_of("tool_discover", json!({"category": "compilers"}))
        .await;
    assert_eq!(error["type"], "INVALID_ARGUMENTS");
    client.close().await;
}

#[tokio::test]
async fn workflow_plan_routes_ties_and_refuses_generic_words() {
    let (sandbox, _project, _file) = with_catalog(json!([
        {"id": "lint-rust", "description": "Lint Rust code.", "safety": "read-only", "argv": [["cargo", "clippy"]]},
        {"id": "fmt-rust", "description": "Format Rust code.", "safety": "reversible", "tags": ["rust", "format"], "argv": [["cargo", "fmt"]]},
    ]));
    let client = sandbox.connect().await;
    let plan = |task: &'static str| {
        let client = &client;
        async move {
            let r = client.call("workflow_plan", json!({"task": task})).await;
            assert_eq!(r.is_error, Some(false), "{r:?}");
            r.structured_content.unwrap()
        }
    };
    let tie = plan("rust").await;
    assert_eq!(tie["selection_status"], "ambiguous");
    assert_eq!(tie["selected_candidate"], Value::Null);
    assert_eq!(tie["phases"][2]["safety"], "unresolved");
    let generic = plan("run the tests").await;
    assert_eq!(generic["selection_status"], "no_match");
    let unavailable = plan("test python with pytest").await;
    if unavailable["candidate_capabilities"][0]["available_tool"].is_null() {
        assert_eq!(unavailable["selection_status"], "matched_unavailable");
        assert_eq!(unavailable["matched_candidate"], "test-python");
    }
    let format = plan("format the rust code").await;
    assert_eq!(format["matched_candidate"], "fmt-rust");
    assert_eq!(
        format["candidate_capabilities"].as_array().unwrap().len(),
        9
    );
    let error = client.error_of("workflow_plan", json!({"task": " "})).await;
    assert_eq!(error["type"], "INVALID_INPUT");
    assert_eq!(error["status"], "invalid_input");
    client.close().await;
}

#[tokio::test]
async fn a_reviewed_plan_runs_and_a_changed_identity_does_not() {
    let (sandbox, project, _file) = with_catalog(json!([capability(
        "make-marker",
        "reversible",
        writer("made.txt")
    )]));
    let client = sandbox.connect().await;
    let marker = project.join("made.txt");
    let plan = run(&client, json!({"capability": "make-marker", "cwd": "proj"})).await;
    assert_eq!(plan["status"], "planned", "{plan:#}");
    assert_eq!(plan["argv"], writer("made.txt"));
    assert!(!marker.exists(), "planning runs nothing");
    let exe = plan["executable"].as_str().unwrap();
    assert_eq!(
        plan["executable_identity_sha256"].as_str().unwrap().len(),
        64
    );

    let stale = run(
        &client,
        json!({
            "capability": "make-marker", "cwd": "proj", "execute": true,
            "expected_executable": exe, "expected_executable_identity_sha256": "0".repeat(64),
        }),
    )
    .await;
    assert_eq!(stale["status"], "stale_plan", "{stale:#}");
    assert!(!marker.exists(), "a stale plan runs nothing");

    let done = run(
        &client,
        json!({
            "capability": "make-marker", "cwd": "proj", "execute": true,
            "expected_executable": exe,
            "expected_executable_identity_kind": plan["executable_identity_kind"],
            "expected_executable_identity_sha256": plan["executable_identity_sha256"],
        }),
    )
    .await;
    assert_eq!(done["status"], "completed", "{done:#}");
    assert_eq!(done["exit_code"], 0);
    assert!(marker.exists(), "the run did its work");

    let log = records(&client, "all").await;
    assert_eq!(log["chain_intact"], true, "{log:#}");
    assert_eq!(
        outcomes(&log),
        ["not_executed stale_plan", "succeeded exit code 0"]
    );
    let record = &log["records"][1];
    assert_eq!(record["subject"], "make-marker");
    assert_eq!(record["safety"], "reversible");
    let text = log.to_string();
    assert!(
        !text.contains("made.txt") && !text.contains("touch"),
        "no argv in the trail: {text}"
    );
    client.close().await;
}

#[tokio::test]
async fn refusals_run_nothing_and_are_recorded() {
    let (sandbox, project, _file) = with_catalog(json!([
        capability("forbidden-one", "forbidden", writer("a.txt")),
        capability("needs-yes", "approval-required", writer("b.txt")),
        capability("plain", "read-only", writer("c.txt")),
        capability("missing", "read-only", json!(["wamcp-no-such-program"])),
    ]));
    let client = sandbox.connect().await;
    let ask = |id: &str, extra: Value| json!({"capability": id, "cwd": "proj", "execute": true, "extra_args": extra});
    let blocked = run(&client, ask("forbidden-one", json!([]))).await;
    assert_eq!(blocked["status"], "blocked");
    // This client cannot ask the user: approval-required answers so.
    let approval = run(&client, ask("needs-yes", json!([]))).await;
    assert_eq!(approval["status"], "approval_required", "{approval:#}");
    // Extra arguments make a read-only capability approval-required.
    let extra = run(&client, ask("plain", json!(["d.txt"]))).await;
    assert_eq!(extra["status"], "approval_required");
    assert_eq!(extra["effective_safety"], "approval-required");
    let missing = run(&client, ask("missing", json!([]))).await;
    assert_eq!(missing["status"], "unavailable");
    for file in ["a.txt", "b.txt", "c.txt", "d.txt"] {
        assert!(!project.join(file).exists(), "{file} was written");
    }
    let unknown = client
        .error_of("capability_run", json!({"capability": "nope"}))
        .await;
    assert_eq!(unknown["type"], "UNKNOWN_CAPABILITY");
    assert_eq!(unknown["status"], "unknown_capability");
    let outside = client
        .error_of(
            "capability_run",
            json!({"capability": "plain", "cwd": ".."}),
        )
        .await;
    assert_eq!(outside["type"], "WORKING_DIRECTORY_NOT_ALLOWED");
    assert_eq!(outside["status"], "invalid_input");
    let bad = client
        .error_of(
            "capability_run",
            json!({"capability": "plain", "timeout_seconds": 0}),
        )
        .await;
    assert_eq!(bad["type"], "INVALID_INPUT");

    let all = records(&client, "all").await;
    // Bad input changes nothing and is not recorded.
    assert!(!all.to_string().contains("unknown_capability"), "{all:#}");
    let log = records(&client, "approvals").await;
    let approvals: Vec<String> = outcomes(&log);
    assert_eq!(
        approvals,
        [
            "not_applicable approval not available",
            "not_executed approval not available",
            "not_applicable approval not available",
            "not_executed approval not available",
        ]
    );
    let all = records(&client, "all").await;
    assert_eq!(all["retained_records"], 6, "{all:#}");
    assert_eq!(records(&client, "failures").await["matching_records"], 0);
    client.close().await;
}

#[tokio::test]
async fn a_catalog_the_agent_could_rewrite_runs_nothing_and_cannot_be_written() {
    let (sandbox, project) = Sandbox::with_project();
    let inside = project.join("capabilities.json");
    std::fs::write(
        &inside,
        json!({"capabilities": [capability("plain", "read-only", writer("c.txt"))]}).to_string(),
    )
    .unwrap();
    let client = sandbox
        .set("WAMCP_CAPABILITIES_FILE", inside.display().to_string())
        .connect()
        .await;
    let info = client.server_info().await;
    assert!(
        info["capabilities_errors"][0]
            .as_str()
            .unwrap()
            .contains("where commands can write"),
        "{info:#}"
    );
    let error = client
        .error_of(
            "capability_run",
            common::reviewed(
                &client,
                "capability_run",
                json!({"capability": "inspect-git", "execute": true, "cwd": "proj"}),
            )
            .await,
        )
        .await;
    assert_eq!(error["type"], "CONFIGURATION_ERROR");
    assert_eq!(error["status"], "configuration_error");
    let write = client
        .error_of(
            "write_file",
            json!({"path": inside.display().to_string(), "content": "{}", "overwrite": true}),
        )
        .await;
    assert_eq!(write["type"], "PROTECTED_PATH");
    assert!(!project.join("c.txt").exists());
    client.close().await;
}

#[tokio::test]
async fn a_tampered_trail_is_reported() {
    let (sandbox, _project, _file) =
        with_catalog(json!([capability("plain", "read-only", writer("c.txt"))]));
    let client = sandbox.connect().await;
    for _ in 0..3 {
        run(
            &client,
            json!({"capability": "plain", "cwd": "proj", "execute": true}),
        )
        .await;
    }
    let dir = audit_dir(&client).await;
    let log = dir.join("agent.log");
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    std::fs::write(&log, format!("{}\n{}\n", lines[0], lines[2])).unwrap();
    let reading = records(&client, "all").await;
    assert_eq!(reading["chain_intact"], false);
    assert!(
        reading["chain_problems"][0]
            .as_str()
            .unwrap()
            .contains("record 3 does not follow record 1"),
        "{reading:#}"
    );
    client.close().await;
}

/// Confined like every command: a capability cannot write outside the
/// roots, and a run killed at its timeout is recorded as unknown.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn runs_are_confined_and_a_timeout_is_unknown() {
    let (sandbox, _project) = Sandbox::with_project();
    let canary = sandbox.root().join("canary.txt");
    let file = sandbox.write(
        "caps/capabilities.json",
        &json!({"capabilities": [
            capability("escape", "reversible", json!(["touch", canary.display().to_string()])),
            capability("slow", "reversible", json!(["sleep", "30"])),
        ]})
        .to_string(),
    );
    let client = sandbox
        .set("WAMCP_CAPABILITIES_FILE", file.display().to_string())
        .set("WAMCP_TOOLS", "core,build,env")
        .connect()
        .await;
    let escape = run(
        &client,
        json!({"capability": "escape", "cwd": "proj", "execute": true}),
    )
    .await;
    assert_eq!(escape["confined"], true, "{escape:#}");
    assert_eq!(escape["status"], "failed", "{escape:#}");
    assert!(!canary.exists(), "the confined run wrote outside the roots");
    let slow = run(
        &client,
        json!({"capability": "slow", "cwd": "proj", "execute": true, "timeout_seconds": 1}),
    )
    .await;
    assert_eq!(slow["status"], "unknown", "{slow:#}");
    assert_eq!(slow["timed_out"], true);
    let log = records(&client, "failures").await;
    assert_eq!(outcomes(&log), ["failed exit code 1", "unknown timed out"]);
    client.close().await;
}

/// A catalog may name a program by absolute path, but never one inside a
/// writable root: the agent could have written it.
#[cfg(unix)]
#[tokio::test]
async fn a_program_inside_a_writable_root_is_never_run() {
    let (sandbox, project) = Sandbox::with_project();
    let planted = project.join("tool");
    std::fs::copy("/usr/bin/touch", &planted).unwrap();
    let file = sandbox.write(
        "caps/capabilities.json",
        &json!({"capabilities": [
            capability("planted", "read-only", json!([planted.display().to_string(), "planted.txt"])),
            capability("system", "read-only", json!(["/usr/bin/touch", "system.txt"])),
        ]})
        .to_string(),
    );
    let client = sandbox
        .set("WAMCP_CAPABILITIES_FILE", file.display().to_string())
        .connect()
        .await;
    let planted_run = run(
        &client,
        json!({"capability": "planted", "cwd": "proj", "execute": true}),
    )
    .await;
    assert_eq!(planted_run["status"], "unavailable", "{planted_run:#}");
    assert!(!project.join("planted.txt").exists());
    let system = run(
        &client,
        json!({"capability": "system", "cwd": "proj", "execute": true}),
    )
    .await;
    assert_eq!(system["status"], "completed", "{system:#}");
    assert!(project.join("system.txt").exists());
    client.close().await;
}

/// The trail in a place commands can write proves nothing, and says so.
#[tokio::test]
async fn a_trail_inside_a_writable_root_is_reported() {
    let (sandbox, project, _file) =
        with_catalog(json!([capability("plain", "read-only", writer("c.txt"))]));
    let data = project.join(".data");
    // The journal would be unavailable there too, and refuse the run; it
    // is off here so the trail's own report is what is tested.
    let sandbox = sandbox
        .set("XDG_DATA_HOME", data.display().to_string())
        .set("LOCALAPPDATA", data.display().to_string())
        .set("WAMCP_UNDO_BUDGET_MB", "0");
    let client = sandbox.connect().await;
    run(
        &client,
        json!({"capability": "plain", "cwd": "proj", "execute": true}),
    )
    .await;
    let reading = records(&client, "all").await;
    assert_eq!(reading["chain_intact"], false);
    assert!(
        reading["chain_problems"]
            .to_string()
            .contains("where commands can write"),
        "{reading:#}"
    );
    let trail = data.join("wamcp").join("agent.log");
    assert!(trail.exists());
    let write = client
        .error_of(
            "write_file",
            json!({"path": trail.display().to_string(), "content": "", "overwrite": true}),
        )
        .await;
    assert_eq!(write["type"], "PROTECTED_PATH");
    client.close().await;
}

/// A catalog in a cache confined commands may write is no more trusted
/// than one in a root: a command could rewrite it between sessions.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_catalog_in_a_writable_cache_runs_nothing() {
    let sandbox = Sandbox::with_project().0;
    let cache = sandbox.home().join(".cache").join("pip");
    std::fs::create_dir_all(&cache).unwrap();
    let file = cache.join("caps.json");
    std::fs::write(
        &file,
        json!({"capabilities": [capability("plain", "read-only", writer("c.txt"))]}).to_string(),
    )
    .unwrap();
    let client = sandbox
        .set("WAMCP_CAPABILITIES_FILE", file.display().to_string())
        .connect()
        .await;
    let info = client.server_info().await;
    assert!(
        info["capabilities_errors"][0]
            .as_str()
            .unwrap()
            .contains("where commands can write"),
        "{info:#}"
    );
    let error = client
        .error_of(
            "capability_run",
            common::reviewed(
                &client,
                "capability_run",
                json!({"capability": "plain", "execute": true, "cwd": "proj"}),
            )
            .await,
        )
        .await;
    assert_eq!(error["type"], "CONFIGURATION_ERROR");
    client.close().await;
}

/// Executing without the identity the plan reviewed is not a run of any
/// plan: refused before anything starts, whatever else is given.
#[tokio::test]
async fn a_run_without_the_reviewed_identity_is_refused() {
    let (sandbox, project, _) = with_catalog(json!([capability(
        "make-marker",
        "read-only",
        writer("marker.txt")
    )]));
    let client = sandbox.connect().await;
    for partial in [
        json!({}),
        json!({"expected_executable": "x"}),
        json!({"expected_executable": "x", "expected_executable_identity_kind": "file"}),
        json!({"expected_executable_identity_sha256": "0".repeat(64)}),
    ] {
        let mut args = json!({"capability": "make-marker", "cwd": "proj", "execute": true});
        args.as_object_mut()
            .unwrap()
            .extend(partial.as_object().unwrap().clone());
        let error = client.error_of("capability_run", args.clone()).await;
        assert_eq!(error["type"], "INVALID_INPUT", "{args}: {error}");
        assert_eq!(error["status"], "invalid_input");
    }
    assert!(!project.join("marker.txt").exists());
    let done = run(
        &client,
        json!({"capability": "make-marker", "cwd": "proj", "execute": true}),
    )
    .await;
    assert_eq!(done["status"], "completed", "{done:#}");
    client.close().await;
}

/// Holds the exclusive lock on the trail's lock file, as any process of
/// the user can (reading it is enough to open it).
fn hold_trail_lock(dir: &std::path::Path) -> std::fs::File {
    std::fs::create_dir_all(dir).unwrap();
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join("agent.log.lock"))
        .unwrap();
    lock.lock().unwrap();
    lock
}

/// A held trail lock costs a run a bounded wait: the run still happens and
/// answers, its answer says the record could not be written, and other
/// tools are served meanwhile.
#[tokio::test]
async fn a_held_trail_lock_fails_the_record_visibly_never_the_call() {
    let (sandbox, project, _file) =
        with_catalog(json!([capability("plain", "read-only", writer("c.txt"))]));
    let client = sandbox.connect().await;
    let dir = audit_dir(&client).await;
    let lock = hold_trail_lock(&dir);
    let done = run(
        &client,
        json!({"capability": "plain", "cwd": "proj", "execute": true}),
    )
    .await;
    assert_eq!(done["status"], "completed", "{done:#}");
    assert!(project.join("c.txt").exists());
    let problem = done["audit_error"].as_str().unwrap_or_default();
    assert!(problem.contains("held by another process"), "{done:#}");
    drop(lock);
    let done = run(
        &client,
        json!({"capability": "plain", "cwd": "proj", "execute": true}),
    )
    .await;
    assert!(done.get("audit_error").is_none(), "{done:#}");
    client.close().await;
}

/// A client that hangs up while a finished run waits for the trail hears
/// the truth: the run completed (its effect is on disk), it was not
/// "stopped".
#[cfg(unix)]
#[tokio::test]
async fn hanging_up_after_a_run_finished_does_not_call_it_cancelled() {
    let (sandbox, project, _file) =
        with_catalog(json!([capability("plain", "read-only", writer("c.txt"))]));
    let client = sandbox.connect().await;
    let args = common::reviewed(
        &client,
        "capability_run",
        json!({"capability": "plain", "cwd": "proj", "execute": true}),
    )
    .await;
    let dir = audit_dir(&client).await;
    let sandbox = client.close().await;
    let _lock = hold_trail_lock(&dir);
    let (mut raw, _) = common::Raw::start(&sandbox, json!({}));
    let id = raw.send_request(
        "tools/call",
        json!({"name": "capability_run", "arguments": args}),
    );
    for _ in 0..300 {
        if project.join("c.txt").exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(project.join("c.txt").exists(), "the run never ran");
    let answers = raw.hang_up();
    let answer = answers
        .iter()
        .find(|m| m["id"] == json!(id))
        .unwrap_or_else(|| panic!("no answer: {answers:?}"));
    let text = answer.to_string();
    assert!(!text.contains("CANCELLED"), "{text}");
    assert!(text.contains("completed"), "{text}");
    assert!(text.contains("held by another process"), "{text}");
}
