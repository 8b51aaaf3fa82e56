//! The `net` tools over MCP, on everything that is decided before a byte
//! leaves the machine: the suite is hermetic, so success paths are proven
//! against loopback HTTPS servers in `wamcp-web`'s own tests.

use crate::common::Sandbox;
use serde_json::{Value, json};

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
        let error = client.error_of(tool, args.clone()).await;
        assert_eq!(error["type"], kind, "{tool} {args}: {error}");
    }
    let error = client
        .error_of(
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
        let error = client.error_of("download_file", args).await;
        assert_eq!(error["type"], "DESTINATION_EXISTS", "{error}");
    }
    assert_eq!(std::fs::read(downloads.join("tool.zip")).unwrap(), b"mine");
    client.close().await;
}

const UNLISTED: &str = "https://www.redblobgames.com/grids/hexagons/";

#[tokio::test]
async fn an_unlisted_host_is_refused_whole_with_the_grant_command() {
    let sandbox = Sandbox::new();
    let client = sandbox.connect().await;
    let error = client
        .error_of("fetch_web_page", json!({"url": UNLISTED}))
        .await;
    assert_eq!(error["type"], "URL_NOT_ALLOWED", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("the whole host is refused"), "{message}");
    assert!(message.contains("cannot ask the user"), "{message}");
    let recovery = error["recovery"].to_string();
    assert!(
        recovery.contains("wamcp hostgrants --add www.redblobgames.com"),
        "{recovery}"
    );
    assert!(recovery.contains("learn.microsoft.com"), "{recovery}");
    assert!(recovery.contains("may not exist"), "{recovery}");
    // What is wrong with the URL itself is not a host to grant.
    for url in [
        "http://learn.microsoft.com/",
        "https://127.0.0.1/",
        "https://intranet/",
        "ftp://x.com/",
    ] {
        let error = client.error_of("fetch_web_page", json!({"url": url})).await;
        assert_eq!(error["type"], "URL_NOT_ALLOWED", "{url}");
        assert!(!error.to_string().contains("hostgrants"), "{url}: {error}");
    }
    client.close().await;

    let client = Sandbox::new()
        .set("WAMCP_HOST_CONSENT", "0")
        .connect()
        .await;
    let error = client
        .error_of("fetch_web_page", json!({"url": UNLISTED}))
        .await;
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("asking is switched off"),
        "{error}"
    );
    client.close().await;
}

/// The grants file is read on every call: a grant, an edit and a broken
/// file show up in the next call without a restart.
#[tokio::test]
async fn the_grants_file_is_read_fresh_on_every_call() {
    let sandbox = Sandbox::new();
    let grants = sandbox.grants_file();
    std::fs::create_dir_all(grants.parent().unwrap()).unwrap();
    let client = sandbox.connect().await;
    let info = client.server_info().await;
    assert_eq!(info["granted_hosts"], json!([]));
    assert_eq!(info["granted_hosts_error"], Value::Null);

    std::fs::write(&grants, r#"{"version": 1, "hosts": ["www.redblobgames.com", {"host": "parked.example.com", "enable": false}]}"#).unwrap();
    let info = client.server_info().await;
    assert_eq!(info["granted_hosts"], json!(["www.redblobgames.com"]));
    let error = client
        .error_of(
            "fetch_web_page",
            json!({"url": "https://other.example.com/"}),
        )
        .await;
    assert!(
        error["recovery"]
            .to_string()
            .contains("www.redblobgames.com"),
        "{error}"
    );

    std::fs::write(&grants, "{ broken").unwrap();
    let info = client.server_info().await;
    assert_eq!(info["granted_hosts"], json!([]));
    assert!(
        info["granted_hosts_error"]
            .as_str()
            .unwrap()
            .contains("grants nothing"),
        "{info}"
    );
    client.close().await;
}

#[test]
fn hostgrants_cli_edits_the_file_the_server_reads() {
    let sandbox = Sandbox::new();
    let run = |args: &[&str]| {
        let out = sandbox.command(args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, out, _) = run(&[
        "hostgrants",
        "--add",
        "WWW.RedBlobGames.com",
        "--note",
        "hex grids",
    ]);
    assert_eq!(code, Some(0));
    assert!(out.starts_with("granted www.redblobgames.com in "), "{out}");
    let (_, out, _) = run(&["hostgrants", "--list"]);
    assert!(
        out.ends_with("mcp-allowed-hosts.json\n  www.redblobgames.com\n"),
        "{out}"
    );
    let (code, _, err) = run(&["hostgrants", "--add", "*.example.com"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("is not a host name"), "{err}");
    let (code, _, err) = run(&["hostgrants", "--remove", "absent.example.com"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("is not listed"), "{err}");
    let (code, _, _) = run(&["hostgrants", "--remove", "www.redblobgames.com"]);
    assert_eq!(code, Some(0));
    let text = std::fs::read_to_string(sandbox.grants_file()).unwrap();
    assert!(!text.contains("redblob"), "{text}");
}

/// Run inside a project, `hostgrants --add` writes the user's grants file
/// (one in the project would grant nothing), says where, and the server
/// working in that project reads the grant.
#[tokio::test]
async fn a_grant_made_inside_a_project_reaches_the_server() {
    let (sandbox, project) = Sandbox::with_project();
    let sandbox = sandbox.in_dir(&project);
    let out = sandbox
        .command(&["hostgrants", "--add", "www.redblobgames.com"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(
        said.contains(&sandbox.grants_file().display().to_string()),
        "{said}"
    );
    assert!(!project.join("mcp-allowed-hosts.json").exists());
    let client = sandbox.connect().await;
    let info = client.server_info().await;
    assert_eq!(
        info["granted_hosts"],
        json!(["www.redblobgames.com"]),
        "{info}"
    );
    assert_eq!(info["granted_hosts_error"], Value::Null, "{info}");
    client.close().await;
}

#[test]
fn extract_prints_what_the_model_sees() {
    let sandbox = Sandbox::new();
    let page = sandbox.write(
        "page.html",
        "<title>T</title><nav>menu</nav><p>Shown <span style='display:none'>secret</span>text</p>\
         <template>tpl</template><a href='/next'>Next</a>",
    );
    let out = sandbox
        .command(&[
            "extract",
            &page.display().to_string(),
            "--url",
            "https://docs.test/a",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("--- BEGIN UNTRUSTED WEB CONTENT (https://docs.test/a) ---\n"),
        "{text}"
    );
    assert!(text.contains("TITLE: T\nURL: https://docs.test/a\n\nShown text\nNext\n\nLINKS:\n- https://docs.test/next (Next)\n--- END UNTRUSTED WEB CONTENT ---\n"), "{text}");
    for hidden in ["menu", "secret", "tpl"] {
        assert!(!text.contains(hidden), "{hidden}");
    }
}

#[tokio::test]
async fn web_search_refuses_bad_queries_and_an_unknown_backend() {
    let client = Sandbox::new()
        .set("WAMCP_TOOLS", "core,docs,search")
        .connect()
        .await;
    for query in ["", "   ", &"q".repeat(401)] {
        let error = client.error_of("web_search", json!({"query": query})).await;
        assert_eq!(error["type"], "INVALID_QUERY", "{query:?}");
    }
    client.close().await;
    let client = Sandbox::new()
        .set("WAMCP_TOOLS", "core,docs,search")
        .set("WAMCP_SEARCH_BACKEND", "bing")
        .connect()
        .await;
    let error = client
        .error_of("web_search", json!({"query": "vulkan"}))
        .await;
    assert_eq!(error["type"], "SEARCH_BACKEND_INVALID", "{error}");
    client.close().await;
}
