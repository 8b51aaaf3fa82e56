//! The wire itself: protocol versions of the handshake era, and a stdout that
//! carries nothing but JSON-RPC while warnings go to stderr.

mod common;

use common::Sandbox;
use serde_json::{Value, json};
use std::io::Write;
use std::process::Stdio;

/// Sends `lines` to a fresh server, closes stdin, and returns (stdout lines, stderr).
fn exchange(sandbox: &Sandbox, lines: &[Value]) -> (Vec<Value>, String) {
    let mut cmd = sandbox.command(&[]);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn wamcp");
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(out.stdout).expect("stdout is UTF-8");
    let parsed = stdout
        .lines()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("non-JSON on stdout: {l:?} ({e})"))
        })
        .collect();
    (parsed, String::from_utf8_lossy(&out.stderr).into_owned())
}

fn initialize(version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
}

#[test]
fn handshake_versions_are_echoed() {
    for version in ["2025-06-18", "2025-11-25", "2025-03-26"] {
        let (replies, _) = exchange(&Sandbox::new(), &[initialize(version)]);
        assert_eq!(replies[0]["result"]["protocolVersion"], version);
        assert_eq!(replies[0]["result"]["serverInfo"]["name"], "wamcp");
    }
}

#[test]
fn stdout_is_protocol_only_and_warnings_go_to_stderr() {
    let sandbox = Sandbox::new().set("WAMCP_TOOLS", "core,bogus");
    let (replies, stderr) = exchange(
        &sandbox,
        &[
            initialize("2025-11-25"),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read_file", "arguments": {"path": "missing.txt"}}}),
        ],
    );
    assert_eq!(replies.len(), 2, "{replies:?}");
    assert_eq!(replies[1]["result"]["isError"], true);
    assert!(stderr.contains("Unknown tool group 'bogus'"), "{stderr}");
}
