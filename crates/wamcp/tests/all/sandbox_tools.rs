//! sandbox_run: routing by requirement, payload rules on real trees, plans
//! that say what is unavailable here, and a Dev Container run through a
//! fake `devcontainer` CLI (the approved run is in python_sdk.rs).

use crate::common;

use crate::common::Sandbox;
use serde_json::{Value, json};

async fn data(client: &common::Client, args: Value) -> Value {
    let result = client.call("sandbox_run", args.clone()).await;
    assert_eq!(result.is_error, Some(false), "{args}: {result:?}");
    result.structured_content.unwrap()
}

fn project() -> (Sandbox, std::path::PathBuf) {
    let (sandbox, project) = Sandbox::with_project();
    std::fs::create_dir_all(project.join("bin")).unwrap();
    std::fs::write(project.join("bin/setup.exe"), b"MZ").unwrap();
    std::fs::write(project.join("notes.txt"), b"n").unwrap();
    (sandbox.set("WAMCP_TOOLS", "core,env,sandbox"), project)
}

#[tokio::test]
async fn windows_sandbox_plans_check_the_payload_for_real() {
    let (sandbox, _project) = project();
    let client = sandbox.connect().await;
    let plan = data(
        &client,
        json!({"command": "setup.exe /S", "isolation_requirement": "untrusted_windows", "workspace_folder": "proj", "payload_paths": ["bin"]}),
    )
    .await;
    // Neither Linux nor Wine has Windows Sandbox; the plan is still made.
    assert_eq!(plan["status"], "unavailable", "{plan:#}");
    assert_eq!(plan["environment"], "windows_sandbox");
    assert_eq!(plan["payload"]["entries"], 2);
    assert_eq!(plan["payload"]["bytes"], 2);
    let wsb = plan["wsb_preview"].as_str().unwrap();
    assert!(
        wsb.contains("<Networking>Disable</Networking>") && wsb.contains("setup.exe /S"),
        "{wsb}"
    );
    for (paths, want) in [
        (json!(["../x"]), "must not climb out"),
        (json!(["missing.exe"]), "does not exist"),
        (json!(["bin", "bin/setup.exe"]), "overlaps"),
        (json!([]), "needs payload_paths"),
    ] {
        let error = client
            .error_of(
                "sandbox_run",
                json!({"command": "x", "isolation_requirement": "untrusted_windows", "workspace_folder": "proj", "payload_paths": paths}),
            )
            .await;
        assert_eq!(error["type"], "INVALID_INPUT", "{paths}");
        assert!(
            error["message"].as_str().unwrap().contains(want),
            "{paths}: {error}"
        );
    }
    let wrong = client
        .error_of("sandbox_run", json!({"command": "x", "isolation_requirement": "untrusted_windows", "environment": "wsl"}))
        .await;
    assert!(
        wrong["message"]
            .as_str()
            .unwrap()
            .contains("does not provide isolation"),
        "{wrong}"
    );
    let args = json!({"command": "setup.exe", "isolation_requirement": "untrusted_windows", "workspace_folder": "proj", "payload_paths": ["bin"], "execute": true});
    let blind = client.error_of("sandbox_run", args.clone()).await;
    assert_eq!(blind["type"], "INVALID_INPUT", "{blind}");
    let executed = data(
        &client,
        common::reviewed(&client, "sandbox_run", args).await,
    )
    .await;
    assert_eq!(executed["status"], "unavailable");
    let info = client.server_info().await;
    let bundles =
        std::path::PathBuf::from(info["audit_log_dir"].as_str().unwrap()).join("sandbox-bundles");
    assert!(
        !bundles.exists(),
        "planning and an unavailable route stage nothing"
    );
    let trail = client
        .call("logs_query", json!({"filter": "sandbox"}))
        .await;
    let trail = trail.structured_content.unwrap();
    let details: Vec<&str> = trail["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["detail"].as_str().unwrap())
        .collect();
    // The plan is not recorded; the attempted run is.
    assert_eq!(details, ["unavailable"], "{trail:#}");
    client.close().await;
}

#[cfg(unix)]
#[tokio::test]
async fn a_linked_payload_is_refused() {
    let (sandbox, project) = project();
    let outside = sandbox.root().join("secret.txt");
    std::fs::write(&outside, "s").unwrap();
    std::os::unix::fs::symlink(&outside, project.join("bin/key.txt")).unwrap();
    let client = sandbox.connect().await;
    let error = client
        .error_of(
            "sandbox_run",
            json!({"command": "x", "isolation_requirement": "untrusted_windows", "workspace_folder": "proj", "payload_paths": ["bin"]}),
        )
        .await;
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("inside the payload is a link"),
        "{error}"
    );
    client.close().await;
}

#[tokio::test]
async fn wsl_and_dev_container_routes_say_why_they_cannot_run() {
    let (sandbox, project) = project();
    let client = sandbox.connect().await;
    let wsl = data(&client, json!({"command": "make", "isolation_requirement": "linux_compatibility", "workspace_folder": "proj"})).await;
    assert_eq!(wsl["status"], "unavailable");
    assert_eq!(
        wsl["argv"],
        json!([
            "wsl",
            "--cd",
            project.display().to_string(),
            "--",
            "sh",
            "-lc",
            "make"
        ])
    );
    let dc = data(&client, json!({"command": "npm test", "isolation_requirement": "project_reproducibility", "workspace_folder": "proj"})).await;
    assert_eq!(dc["status"], "unavailable");
    assert!(
        dc["reason"]
            .as_str()
            .unwrap()
            .contains("no .devcontainer/devcontainer.json"),
        "{dc:#}"
    );
    client.close().await;
}

#[cfg(unix)]
#[tokio::test]
async fn a_dev_container_plan_needs_the_users_yes_to_run() {
    let (sandbox, project, log) = common::with_fake_devcontainer();
    std::fs::create_dir_all(project.join(".devcontainer")).unwrap();
    std::fs::write(project.join(".devcontainer/devcontainer.json"), "{}").unwrap();
    let client = sandbox.connect().await;
    let args = json!({"command": "npm test", "isolation_requirement": "project_reproducibility", "workspace_folder": "proj"});
    let plan = data(&client, args.clone()).await;
    assert_eq!(plan["status"], "planned", "{plan:#}");
    let run = common::reviewed(&client, "sandbox_run", args).await;
    let refused = data(&client, run).await;
    assert_eq!(refused["status"], "approval_required");
    assert!(!log.exists(), "nothing ran");
    client.close().await;
}
