//! The operating system's confinement, tested by its effects: files that
//! must not appear, connections that must not be accepted.
#![cfg(target_os = "linux")]

use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::Duration;
use wamcp_exec::confine::Sandbox;
use wamcp_exec::{RunOutput, RunSpec, run};
use wamcp_policy::command::sandbox::{Caches, SandboxMode};

/// The confined sandbox, or `None` (with a loud note) where the kernel has
/// no Landlock; `WAMCP_TEST_STRICT=1` makes that a failure.
fn sandbox() -> Option<Sandbox> {
    let sandbox = Sandbox::new(SandboxMode::Auto, Caches::default());
    if sandbox.status().mechanism.is_none() {
        let why = sandbox.status().detail.clone();
        assert!(
            std::env::var_os("WAMCP_TEST_STRICT").is_none(),
            "no confinement here: {why}"
        );
        eprintln!("SKIPPED: no confinement here: {why}");
        return None;
    }
    Some(sandbox)
}

async fn sh(sandbox: &Sandbox, root: &Path, network: bool, script: &str) -> RunOutput {
    let spec = RunSpec {
        program: "sh".into(),
        args: vec!["-c".into(), script.into()],
        env: Vec::new(),
        cwd: root.to_path_buf(),
        timeout: Duration::from_secs(60),
        keep_head: 64 * 1024,
        keep_tail: 0,
        confinement: sandbox.confinement(&[root.to_path_buf()], network).unwrap(),
    };
    run(&spec).await.unwrap()
}

struct Layout {
    _base: tempfile::TempDir,
    root: PathBuf,
    canary: PathBuf,
}

fn layout() -> Layout {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("root");
    let canary = base.path().join("canary");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&canary).unwrap();
    std::fs::write(canary.join("existing.txt"), "original").unwrap();
    Layout {
        _base: base,
        root,
        canary,
    }
}

fn canary_untouched(l: &Layout) {
    let names: Vec<_> = std::fs::read_dir(&l.canary)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        names,
        ["existing.txt"],
        "something was written beside the root"
    );
    assert_eq!(
        std::fs::read_to_string(l.canary.join("existing.txt")).unwrap(),
        "original"
    );
}

#[tokio::test]
async fn writes_land_inside_the_root_and_nowhere_else() {
    let Some(sandbox) = sandbox() else { return };
    let l = layout();
    let c = l.canary.display();
    let script = format!(
        "echo a > {c}/new.txt; echo b >> {c}/existing.txt; true > {c}/existing.txt; mkdir {c}/d; \
         ln -s /etc/passwd {c}/link; mv {c}/existing.txt {c}/moved.txt; mkfifo {c}/fifo; \
         sh -c 'sh -c \"echo grandchild > {c}/deep.txt\"'; \
         echo inside > in.txt; mkdir -p build/obj && echo o > build/obj/x.o; \
         echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"; echo n > /dev/null && echo devnull-ok"
    );
    let out = sh(&sandbox, &l.root, false, &script).await;
    canary_untouched(&l);
    assert_eq!(
        std::fs::read_to_string(l.root.join("in.txt")).unwrap(),
        "inside\n"
    );
    assert!(l.root.join("build/obj/x.o").is_file());
    let stdout = out.stdout.render();
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        ["t", "devnull-ok"],
        "{stdout}"
    );
    assert!(out.stderr.render().contains("Permission denied"));
}

/// A process that leaves the tree (a new session, double fork) stays confined.
#[tokio::test]
async fn a_daemonised_grandchild_is_confined_too() {
    let Some(sandbox) = sandbox() else { return };
    let l = layout();
    let c = l.canary.display();
    let script = format!(
        "setsid sh -c 'sleep 0.2; echo x > {c}/late.txt; echo done > late-in-root.txt' & wait"
    );
    sh(&sandbox, &l.root, false, &script).await;
    for _ in 0..50 {
        if l.root.join("late-in-root.txt").exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(l.root.join("late-in-root.txt").exists());
    canary_untouched(&l);
}

/// Counts connections accepted by a loopback listener while `script` runs.
async fn accepts_while(sandbox: &Sandbox, network: bool, script: &str) -> (usize, RunOutput) {
    let l = layout();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let out = sh(
        sandbox,
        &l.root,
        network,
        &script.replace("PORT", &port.to_string()),
    )
    .await;
    let mut accepted = 0;
    while let Ok((mut stream, _)) = listener.accept() {
        let mut buf = Vec::new();
        stream.set_nonblocking(false).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        let _ = stream.read_to_end(&mut buf);
        accepted += 1;
    }
    (accepted, out)
}

#[tokio::test]
async fn the_network_is_closed_unless_the_rule_opens_it() {
    let Some(sandbox) = sandbox() else { return };
    let python = "python3 -c \"import socket; s=socket.create_connection(('127.0.0.1', PORT), 5); s.sendall(b'x'); s.close(); print('connected')\"";
    let (accepted, out) = accepts_while(&sandbox, false, python).await;
    assert_eq!(accepted, 0, "{}", out.stderr.render());
    assert!(
        out.stderr.render().contains("Permission denied"),
        "{}",
        out.stderr.render()
    );
    let udp = "python3 -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', 9))\"";
    let (_, out) = accepts_while(&sandbox, false, udp).await;
    assert_ne!(out.exit_code, Some(0), "a UDP socket is refused too");
    let (accepted, out) = accepts_while(&sandbox, true, python).await;
    assert_eq!(accepted, 1, "{}", out.stderr.render());
    assert_eq!(out.stdout.render().trim(), "connected");
}

/// A Unix socket reaches daemons that act outside the sandbox (Docker's,
/// the session bus), so without the network no connect succeeds; local
/// socket pairs, which runtimes use for their own plumbing, still work.
#[tokio::test]
async fn unix_sockets_do_not_reach_daemons_without_the_network() {
    let Some(sandbox) = sandbox() else { return };
    let l = layout();
    let path = l.canary.join("daemon.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    listener.set_nonblocking(true).unwrap();
    let script = format!(
        "python3 -c \"import socket; a, b = socket.socketpair(); a.sendall(b'p'); print(b.recv(1).decode()); \
         s = socket.socket(socket.AF_UNIX); s.connect('{}')\"",
        path.display()
    );
    let out = sh(&sandbox, &l.root, false, &script).await;
    assert_eq!(out.stdout.render().trim(), "p");
    assert!(
        out.stderr.render().contains("PermissionError"),
        "{}",
        out.stderr.render()
    );
    assert!(listener.accept().is_err(), "the daemon was reached");
}

/// Runtimes' own plumbing still works confined: Python's multiprocessing
/// (semaphores in /dev/shm, a pool of workers over pipes) and asyncio.
#[tokio::test]
async fn runtime_plumbing_works_confined() {
    let Some(sandbox) = sandbox() else { return };
    let l = layout();
    std::fs::write(
        l.root.join("mp.py"),
        "import multiprocessing as m, asyncio\n\
         if __name__ == '__main__':\n\
         \x20   lock = m.Lock()\n\
         \x20   with m.Pool(2) as p: print(sum(p.map(abs, [-1, -2])))\n\
         \x20   print(asyncio.run(asyncio.sleep(0, 'async-ok')))\n",
    )
    .unwrap();
    let script = "python3 mp.py";
    let out = sh(&sandbox, &l.root, false, script).await;
    assert_eq!(
        out.stdout.render(),
        "3\nasync-ok\n",
        "{}",
        out.stderr.render()
    );
    canary_untouched(&l);
}
