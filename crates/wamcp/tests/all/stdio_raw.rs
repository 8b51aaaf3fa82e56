//! The wire itself: protocol versions of the handshake era, and a stdout that
//! carries nothing but JSON-RPC while warnings go to stderr.

use crate::common::Sandbox;
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

/// Ctrl-D at a terminal, or a client that gives up before `initialize`: a
/// normal end, with status 0 and no error line.
#[test]
fn end_of_input_before_initialize_is_a_clean_exit() {
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.command(&[]);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out = cmd.output().expect("run wamcp");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(!stderr.contains("ERROR"), "{stderr}");
    assert!(out.stdout.is_empty());
}

/// A client that closes stdin while a long command runs: the call is
/// answered CANCELLED, the command's process is killed, and the server exits
/// instead of waiting for it.
#[cfg(target_os = "linux")]
#[test]
fn closing_stdin_stops_running_calls_and_exits() {
    let (sandbox, project) = Sandbox::with_project();
    std::fs::write(
        project.join("sleeper.py"),
        "import os, time\nopen('pid', 'w').write(str(os.getpid()))\ntime.sleep(120)\n",
    )
    .unwrap();
    let mut cmd = sandbox.command(&[]);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn wamcp");
    let mut stdin = child.stdin.take().unwrap();
    for line in [
        initialize("2025-11-25"),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "run_powershell",
            "arguments": {"command": "python3 sleeper.py", "working_directory": "proj"}}}),
    ] {
        writeln!(stdin, "{line}").unwrap();
    }
    let pid_file = project.join("pid");
    let started = std::time::Instant::now();
    while !pid_file.exists() {
        assert!(
            started.elapsed().as_secs() < 60,
            "the command never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    drop(stdin);
    // A hang guard, not a speed test: wait_with_output blocks until exit.
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains(r#"\"type\":\"CANCELLED\""#), "{stdout}");
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!running(pid), "the command's process {pid} survived");
}

/// Whether `pid` is a live process (a zombie waiting for its reaper is dead).
#[cfg(target_os = "linux")]
fn running(pid: i32) -> bool {
    for _ in 0..50 {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return false,
            Ok(stat)
                if stat
                    .rsplit(')')
                    .next()
                    .is_some_and(|s| s.trim_start().starts_with('Z')) =>
            {
                return false;
            }
            Ok(_) => std::thread::sleep(std::time::Duration::from_millis(100)),
        }
    }
    true
}

/// Node-based clients (libuv) give a child Unix sockets, not pipes, as its
/// stdin and stdout: the server reads and answers there too, and ends when
/// the client shuts its side down.
#[cfg(unix)]
#[test]
fn stdio_over_a_socket_pair_is_served() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::net::UnixStream;
    let (ours, theirs) = UnixStream::pair().unwrap();
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.command(&[]);
    cmd.stdin(Stdio::from(std::os::fd::OwnedFd::from(
        theirs.try_clone().unwrap(),
    )))
    .stdout(Stdio::from(std::os::fd::OwnedFd::from(theirs)))
    .stderr(Stdio::null());
    let mut child = cmd.spawn().expect("spawn wamcp");
    let mut writer = ours.try_clone().unwrap();
    writeln!(writer, "{}", initialize("2025-11-25")).unwrap();
    let mut line = String::new();
    BufReader::new(ours.try_clone().unwrap())
        .read_line(&mut line)
        .unwrap();
    let reply: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(reply["result"]["serverInfo"]["name"], "wamcp", "{line}");
    ours.shutdown(std::net::Shutdown::Write).unwrap();
    assert!(child.wait().unwrap().success());
}

/// The server switches its stdin to non-blocking to read it through the
/// event loop; the pipe is shared (a shell's next command may read it), so
/// it is blocking again when the server has exited.
#[cfg(unix)]
#[test]
fn stdin_is_blocking_again_after_the_server_exits() {
    use std::os::fd::AsRawFd;
    let (reader, mut writer) = std::io::pipe().unwrap();
    let shared = reader.try_clone().unwrap();
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.command(&[]);
    cmd.stdin(reader)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let child = cmd.spawn().expect("spawn wamcp");
    writeln!(writer, "{}", initialize("2025-11-25")).unwrap();
    drop(writer);
    let out = child.wait_with_output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"serverInfo\""));
    // SAFETY: reads the status flags of a descriptor this test holds.
    let flags = unsafe { libc::fcntl(shared.as_raw_fd(), libc::F_GETFL) };
    assert_eq!(flags & libc::O_NONBLOCK, 0, "flags {flags:o}");
}
