//! package_search and package_install against a fake winget that records
//! its argv: exact argv, plans that install nothing, refusals, and (with a
//! user who says yes, in python_sdk.rs) an install that is verified.

use crate::common;

use crate::common::with_fake_winget;
use serde_json::{Value, json};
use std::path::Path;

async fn data(client: &common::Client, tool: &str, args: Value) -> Value {
    let result = client.call(tool, args.clone()).await;
    assert_eq!(result.is_error, Some(false), "{tool} {args}: {result:?}");
    result.structured_content.unwrap()
}

fn logged(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| l.trim().to_string())
        .collect()
}

#[tokio::test]
async fn search_and_plan_use_the_exact_argv_and_install_nothing() {
    let (sandbox, log, state) = with_fake_winget();
    let client = sandbox.connect().await;
    let found = data(&client, "package_search", json!({"query": "fake tool"})).await;
    assert_eq!(found["status"], "completed", "{found:#}");
    assert_eq!(
        found["results"],
        json!([{"id": "Fake.Tool", "name": "Fake", "version": "1.0"}])
    );
    let plan = data(
        &client,
        "package_install",
        json!({"package_id": "Fake.Tool"}),
    )
    .await;
    assert_eq!(plan["status"], "planned", "{plan:#}");
    assert_eq!(
        plan["argv"],
        json!([
            "winget",
            "install",
            "--id",
            "Fake.Tool",
            "--exact",
            "--source",
            "winget",
            "--accept-package-agreements",
            "--accept-source-agreements",
            "--disable-interactivity"
        ])
    );
    assert_eq!(
        plan["executable_identity_sha256"].as_str().unwrap().len(),
        64
    );
    // This client cannot ask the user: nothing is installed.
    let refused = data(
        &client,
        "package_install",
        json!({"package_id": "Fake.Tool", "execute": true,
               "expected_executable": plan["executable"],
               "expected_executable_identity_kind": plan["executable_identity_kind"],
               "expected_executable_identity_sha256": plan["executable_identity_sha256"]}),
    )
    .await;
    assert_eq!(refused["status"], "approval_required", "{refused:#}");
    let stale = data(
        &client,
        "package_install",
        json!({"package_id": "Fake.Tool", "execute": true, "expected_executable": plan["executable"],
               "expected_executable_identity_kind": "file", "expected_executable_identity_sha256": "0".repeat(64)}),
    )
    .await;
    assert_eq!(stale["status"], "stale_plan");
    // Without the reviewed identity, executing is not a run of any plan.
    let blind = client
        .error_of(
            "package_install",
            json!({"package_id": "Fake.Tool", "execute": true}),
        )
        .await;
    assert_eq!(blind["type"], "INVALID_INPUT", "{blind}");
    assert_eq!(blind["status"], "invalid_input");
    assert!(!state.exists(), "nothing was installed");
    let quoted = if cfg!(windows) {
        "\"fake tool\""
    } else {
        "fake tool"
    };
    assert_eq!(
        logged(&log),
        [format!(
            "search --query {quoted} --source winget --disable-interactivity"
        )]
    );
    let trail = data(&client, "logs_query", json!({"filter": "installs"})).await;
    let details: Vec<&str> = trail["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["detail"].as_str().unwrap())
        .collect();
    // The question (unanswerable here) and the call itself.
    assert_eq!(
        details,
        [
            "approval not available",
            "approval not available",
            "stale_plan"
        ]
    );
    client.close().await;
}

#[tokio::test]
async fn bad_ids_queries_and_missing_managers() {
    let (sandbox, log, _state) = with_fake_winget();
    let client = sandbox.connect().await;
    for id in ["-rf", "a b", "Fake.Tool;calc", ""] {
        let error = client
            .error_of("package_install", json!({"package_id": id}))
            .await;
        assert_eq!(error["type"], "INVALID_INPUT", "{id:?}");
        assert_eq!(error["status"], "invalid_input");
    }
    for query in ["--version", "", "a\nb"] {
        let error = client
            .error_of("package_search", json!({"query": query}))
            .await;
        assert_eq!(error["type"], "INVALID_INPUT", "{query:?}");
    }
    let choco = data(
        &client,
        "package_install",
        json!({"package_id": "git", "source": "chocolatey"}),
    )
    .await;
    assert_eq!(choco["status"], "unavailable", "{choco:#}");
    let scoop = data(
        &client,
        "package_search",
        json!({"query": "git", "source": "scoop"}),
    )
    .await;
    assert_eq!(scoop["status"], "unavailable");
    assert_eq!(logged(&log), Vec::<String>::new());
    client.close().await;
}
