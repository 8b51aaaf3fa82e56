//! The `net` tools over MCP, on everything that is decided before a byte
//! leaves the machine: the suite is hermetic, so success paths are proven
//! against loopback HTTPS servers in `wamcp-web`'s own tests.

mod common;

use common::Sandbox;
use serde_json::{Value, json};

async fn error_of(client: &common::Client, tool: &str, args: Value) -> Value {
    let result = client.call(tool, args.clone()).await;
    assert_eq!(result.is_error, Some(true), "{tool} {args}: {result:?}");
    result.structured_content.unwrap()["error"].clone()
}

#[tokio::test]
async fn refused_urls_and_names_are_typed_and_touch_nothing() {
    let sandbox = Sandbox::new();
    let downloads = sandbox.root().join("downloads");
    let sandbox = sandbox.set("WAMCP_DOWNLOAD_ROOT", downloads.display().to_string());
    let client = sandbox.connect().await;
    let cases = [
        (
            "fetch_https_response",
            json!({"url": "http://github.com/x"}),
            "URL_NOT_ALLOWED",
        ),
        (
            "fetch_https_response",
            json!({"url": "https://example.com/"}),
            "URL_NOT_ALLOWED",
        ),
        (
            "fetch_https_response",
            json!({"url": "https://127.0.0.1/"}),
            "URL_NOT_ALLOWED",
        ),
        (
            "fetch_https_response",
            json!({"url": "https://github.com:8443/"}),
            "URL_NOT_ALLOWED",
        ),
        (
            "fetch_https_response",
            json!({"url": "https://u:p@github.com/"}),
            "URL_NOT_ALLOWED",
        ),
        (
            "fetch_https_response",
            json!({"url": "https://github.com/", "x": 1}),
            "INVALID_ARGUMENTS",
        ),
        (
            "download_file",
            json!({"url": "https://evil.example/a.zip"}),
            "DOWNLOAD_NOT_ALLOWED",
        ),
        (
            "download_file",
            json!({"url": "file:///etc/passwd"}),
            "DOWNLOAD_NOT_ALLOWED",
        ),
        (
            "download_file",
            json!({"url": "https://github.com/a/b", "filename": "../.."}),
            "DOWNLOAD_FAILED",
        ),
        (
            "get_github_latest_release",
            json!({"repository": "https://github.com/a/b"}),
            "INVALID_REPOSITORY",
        ),
        (
            "get_github_latest_release",
            json!({"repository": "a/../b"}),
            "INVALID_REPOSITORY",
        ),
    ];
    for (tool, args, kind) in cases {
        let error = error_of(&client, tool, args.clone()).await;
        assert_eq!(error["type"], kind, "{tool} {args}: {error}");
    }
    let error = error_of(
        &client,
        "fetch_https_response",
        json!({"url": "https://example.com/"}),
    )
    .await;
    let recovery = error["recovery"].to_string();
    assert!(recovery.contains("raw.githubusercontent.com"), "{recovery}");
    assert!(!downloads.exists() || std::fs::read_dir(&downloads).unwrap().count() == 0);
    client.close().await;
}

#[tokio::test]
async fn an_existing_download_is_never_replaced() {
    let sandbox = Sandbox::new();
    let downloads = sandbox.root().join("downloads");
    std::fs::create_dir_all(&downloads).unwrap();
    std::fs::write(downloads.join("tool.zip"), b"mine").unwrap();
    let sandbox = sandbox.set("WAMCP_DOWNLOAD_ROOT", downloads.display().to_string());
    let client = sandbox.connect().await;
    for args in [
        json!({"url": "https://github.com/o/r/releases/download/v1/tool.zip"}),
        json!({"url": "https://github.com/o/r/x", "filename": "sub/tool.zip"}),
    ] {
        let error = error_of(&client, "download_file", args).await;
        assert_eq!(error["type"], "DESTINATION_EXISTS", "{error}");
    }
    assert_eq!(std::fs::read(downloads.join("tool.zip")).unwrap(), b"mine");
    client.close().await;
}
