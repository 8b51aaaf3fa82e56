//! write_file and edit_file over MCP, and what a killed server leaves behind.

use crate::common;

use crate::common::Sandbox;
use serde_json::json;
use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

#[tokio::test]
async fn write_then_edit_inside_a_project_root() {
    let (sandbox, project) = Sandbox::with_project();
    let client = sandbox.connect().await;
    let result = client
        .call(
            "write_file",
            json!({"path": "proj/src/a.cpp", "content": "int a;\r\nint b;\r\n"}),
        )
        .await;
    let text = result.content[0].as_text().unwrap().text.clone();
    assert_eq!(
        text,
        format!(
            "WROTE: {} (16 bytes, new file)\n[step 1: 1 file added; undo(step=1) puts it back]",
            project.join("src").join("a.cpp").display()
        )
    );
    let result = client
        .call("edit_file", json!({"path": "proj/src/a.cpp", "old_string": "int b;\n", "new_string": "int b = 2;\n"}))
        .await;
    let text = result.content[0].as_text().unwrap().text.clone();
    assert!(
        text.ends_with(
            "(1 replacement at line 2, CRLF preserved)\n[step 2: 1 file changed; undo(step=2) puts it back]"
        ),
        "{text}"
    );
    assert_eq!(
        std::fs::read(project.join("src").join("a.cpp")).unwrap(),
        b"int a;\r\nint b = 2;\r\n"
    );

    for (args, kind) in [
        (
            json!({"path": "outside.txt", "content": "x"}),
            "WRITE_PATH_NOT_ALLOWED",
        ),
        (
            json!({"path": "proj/../outside.txt", "content": "x"}),
            "WRITE_PATH_NOT_ALLOWED",
        ),
        (
            json!({"path": "proj/input/config.json", "content": "{}"}),
            "PROTECTED_PATH",
        ),
        (
            json!({"path": "proj/src/a.cpp", "content": "x"}),
            "FILE_EXISTS",
        ),
    ] {
        let result = client.call("write_file", args.clone()).await;
        assert_eq!(
            result.structured_content.unwrap()["error"]["type"],
            kind,
            "{args}"
        );
    }
    assert!(!sandbox_file_exists(&client, "outside.txt"));
    client.close().await;
}

fn sandbox_file_exists(client: &common::Client, name: &str) -> bool {
    client.sandbox.cwd.join(name).exists()
}

#[tokio::test]
async fn the_config_file_in_use_is_protected_wherever_it_is() {
    let (sandbox, project) = Sandbox::with_project();
    let config = project.join("wamcp-settings.json");
    std::fs::write(&config, "{\"version\": 1}").unwrap();
    let client = sandbox
        .set("WAMCP_CONFIG_FILE", config.display().to_string())
        .connect()
        .await;
    let result = client
        .call(
            "write_file",
            json!({"path": "proj/wamcp-settings.json", "content": "{}", "overwrite": true}),
        )
        .await;
    assert_eq!(
        result.structured_content.unwrap()["error"]["type"],
        "PROTECTED_PATH"
    );
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        "{\"version\": 1}"
    );
    client.close().await;
}

/// Trust files are judged by what they resolve to: a config file that fails
/// to parse, one that does not exist yet, and either reached through a `..`
/// or a symbolically linked spelling of its directory.
#[tokio::test]
async fn trust_files_are_protected_by_identity_even_broken_or_missing() {
    let (sandbox, project) = Sandbox::with_project();
    std::fs::create_dir_all(project.join("cfg")).unwrap();
    let broken = project.join("cfg").join("broken.json");
    std::fs::write(&broken, "{ not json").unwrap();
    // Configured through a `..` spelling, so only resolution can match it.
    let rules = project
        .join("cfg")
        .join("..")
        .join("cfg")
        .join("rules-not-yet.json");
    let client = sandbox
        .set("WAMCP_CONFIG_FILE", broken.display().to_string())
        .set("WAMCP_COMMAND_RULES", rules.display().to_string())
        .connect()
        .await;
    let linked = symlinked_spellings(&project);
    let spellings = [
        "proj/cfg/broken.json",
        "proj/cfg/../cfg/broken.json",
        "proj/cfg/rules-not-yet.json",
        "proj/./cfg/rules-not-yet.json",
    ]
    .into_iter()
    .map(String::from)
    .chain(linked);
    for path in spellings {
        let error = client
            .error_of(
                "write_file",
                json!({"path": path, "content": "{\"version\": 1}", "overwrite": true}),
            )
            .await;
        assert_eq!(error["type"], "PROTECTED_PATH", "{path}: {error}");
    }
    assert_eq!(std::fs::read_to_string(&broken).unwrap(), "{ not json");
    assert!(!rules.exists());
    client.close().await;
}

/// Spellings through a symbolic link to `proj/cfg` (Unix: Wine cannot make links).
fn symlinked_spellings(project: &std::path::Path) -> Vec<String> {
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(project.join("cfg"), project.join("link")).unwrap();
        vec![
            "proj/link/broken.json".into(),
            "proj/link/rules-not-yet.json".into(),
        ]
    }
    #[cfg(not(unix))]
    {
        let _ = project;
        Vec::new()
    }
}

#[tokio::test]
async fn without_a_project_root_only_the_download_root_is_writable() {
    let client = Sandbox::new().connect().await;
    let info = client.server_info().await;
    let download_root = info["download_root"].as_str().unwrap().to_string();
    let result = client
        .call("write_file", json!({"path": "here.txt", "content": "x"}))
        .await;
    assert_eq!(
        result.structured_content.unwrap()["error"]["type"],
        "WRITE_PATH_NOT_ALLOWED"
    );
    let target = format!("{download_root}/notes.txt");
    let result = client
        .call("write_file", json!({"path": target, "content": "x"}))
        .await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    client.close().await;
    let client = Sandbox::new().set("WAMCP_TOOLS", "core").connect().await;
    assert!(
        !client
            .tool_names()
            .await
            .contains(&"write_file".to_string())
    );
    client.close().await;
}

/// Puts `text` back into `target`. Under Wine a killed writer's handle can
/// linger in wineserver for a moment and the write fails with "Internal
/// error" (1359); the next try succeeds.
fn reset(target: &std::path::Path, text: &str) {
    for _ in 0..100 {
        if std::fs::write(target, text).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::write(target, text).unwrap();
}

/// A server killed at arbitrary points during a large write or edit leaves
/// the file wholly old or wholly new, never truncated or mixed.
#[test]
fn a_killed_writer_never_leaves_a_torn_file() {
    const SIZE: usize = 2 * 1024 * 1024 - 64;
    let (sandbox, project) = Sandbox::with_project();
    let target = project.join("big.txt");
    let old = "a".repeat(SIZE);
    let new = "b".repeat(SIZE);
    let mut outcomes = [0usize; 2];
    // 40 rounds with kills spread over 0-60 ms; if one outcome has not been
    // seen by then (a much faster or slower machine), up to 80 more with the
    // kills spread wider, so the assertion below tests a real race.
    for round in 0..120u64 {
        if round >= 40 && outcomes.iter().all(|&n| n > 0) {
            break;
        }
        let spread = if round < 40 { 60_000 } else { 600_000 };
        reset(&target, &old);
        let call = if round % 2 == 0 {
            json!({"name": "write_file", "arguments": {"path": "proj/big.txt", "content": new, "overwrite": true}})
        } else {
            json!({"name": "edit_file", "arguments": {"path": "proj/big.txt", "old_string": "a", "new_string": "b", "replace_all": true}})
        };
        let mut cmd = sandbox.command(&[]);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut child = cmd.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
        let request = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call});
        writeln!(
            stdin,
            "{init}\n{}\n{request}",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        .unwrap();
        // Spread the kill points over the whole write: 0 to ~60 ms in uneven steps.
        std::thread::sleep(Duration::from_micros((round * 7919) % spread));
        child.kill().unwrap();
        child.wait().unwrap();
        let bytes = std::fs::read(&target).unwrap();
        let whole_old = bytes == old.as_bytes();
        let whole_new = bytes == new.as_bytes();
        assert!(
            whole_old || whole_new,
            "round {round}: torn file of {} bytes",
            bytes.len()
        );
        outcomes[whole_new as usize] += 1;
    }
    // Both outcomes must occur, or the kill points missed the write window
    // and the test proved nothing.
    assert!(
        outcomes[0] > 0 && outcomes[1] > 0,
        "killed writer outcomes: {} old, {} new",
        outcomes[0],
        outcomes[1]
    );
    // A kill between creating and renaming the temporary file can leave it
    // behind; it is never mistaken for the target and never named like one.
    for entry in std::fs::read_dir(&project).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            name == "big.txt" || (name.starts_with(".wamcp-") && name.ends_with(".tmp")),
            "{name}"
        );
    }
}

/// Fifty edits of one file sent at once, half through another spelling of
/// its path: every reported success is on disk.
#[tokio::test]
async fn parallel_edits_through_the_server_are_never_lost() {
    let (sandbox, project) = Sandbox::with_project();
    let lines: String = (0..50).map(|i| format!("line {i}\n")).collect();
    std::fs::write(project.join("f.txt"), &lines).unwrap();
    std::fs::create_dir_all(project.join("sub")).unwrap();
    let client = sandbox.connect().await;
    let calls = (0..50).map(|i| {
        let path = if i % 2 == 0 { "proj/f.txt" } else { "proj/sub/../f.txt" };
        client.call(
            "edit_file",
            json!({"path": path, "old_string": format!("line {i}\n"), "new_string": format!("edited {i}\n")}),
        )
    });
    let results = futures::future::join_all(calls).await;
    let text = std::fs::read_to_string(project.join("f.txt")).unwrap();
    for (i, result) in results.iter().enumerate() {
        assert_eq!(result.is_error, Some(false), "edit {i}: {result:?}");
        assert!(
            text.contains(&format!("edited {i}\n")),
            "edit {i} was lost:\n{text}"
        );
    }
    client.close().await;
}

/// A FIFO, a socket or a device as the path of any file tool is a typed
/// refusal, and the server goes on answering.
#[cfg(unix)]
#[tokio::test]
async fn special_files_are_refused_by_every_file_tool() {
    let (sandbox, project) = Sandbox::with_project();
    let fifo = project.join("pipe");
    let c = std::ffi::CString::new(fifo.display().to_string()).unwrap();
    // SAFETY: `c` is a NUL-terminated path alive for the call.
    let made = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    assert_eq!(made, 0);
    let client = sandbox.connect().await;
    for (tool, args) in [
        ("read_file", json!({"path": "proj/pipe"})),
        ("read_file", json!({"path": "/dev/zero"})),
        (
            "edit_file",
            json!({"path": "proj/pipe", "old_string": "a", "new_string": "b"}),
        ),
        (
            "write_file",
            json!({"path": "proj/pipe", "content": "x", "overwrite": true}),
        ),
    ] {
        let error = client.error_of(tool, args.clone()).await;
        assert_eq!(
            error["type"], "NOT_A_REGULAR_FILE",
            "{tool} {args}: {error}"
        );
    }
    let listing = client.call("list_directory", json!({"path": "proj"})).await;
    assert_eq!(listing.is_error, Some(false));
    client.close().await;
}

/// At start-up the server removes its own stale temporary files from the
/// roots, and nothing else.
#[test]
fn stale_temporary_files_of_dead_servers_are_swept() {
    let (sandbox, project) = Sandbox::with_project();
    let hours_ago = std::time::SystemTime::now() - Duration::from_secs(2 * 3600);
    let stale = project.join(".wamcp-4000000-1f-0.tmp");
    let keep = [
        project.join(".wamcp-4000000-1f-1.tmp.bak"),
        project.join("wamcp-4000000-1f-2.tmp"),
        project.join("notes.tmp"),
    ];
    for path in keep.iter().chain([&stale]) {
        std::fs::write(path, "x").unwrap();
        let file = std::fs::File::options().write(true).open(path).unwrap();
        file.set_modified(hours_ago).unwrap();
    }
    let mut cmd = sandbox.command(&[]);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let started = std::time::Instant::now();
    while stale.exists() {
        assert!(
            started.elapsed().as_secs() < 30,
            "the leftover was never swept"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("removed 1 temporary file(s)"), "{stderr}");
    for path in &keep {
        assert!(path.exists(), "{}", path.display());
    }
}
