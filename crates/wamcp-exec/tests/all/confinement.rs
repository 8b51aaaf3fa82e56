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

/// A Python helper for the scripts below: `attempt(name, call)` prints
/// the name and `done`, or the errno the call failed with.
const ATTEMPT: &str = "import os\n\
    def attempt(name, call):\n\
    \x20   try:\n\
    \x20       call()\n\
    \x20       print(name, 'done')\n\
    \x20   except OSError as e:\n\
    \x20       print(name, e.errno)\n";

/// The confined sandbox, or `None` (with a loud note) where the kernel has
/// no Landlock; `WAMCP_TEST_STRICT=1` makes that a failure.
fn sandbox() -> Option<Sandbox> {
    let sandbox = crate::os_sandbox(SandboxMode::Auto, Caches::default());
    if sandbox.status().mechanism.is_none() {
        let why = sandbox.status().detail.clone();
        assert!(
            std::env::var_os("WAMCP_TEST_STRICT").is_none(),
            "no confinement here: {why}"
        );
        skipped(&format!("no confinement here: {why}"));
        return None;
    }
    Some(sandbox)
}

/// Says loudly that a test did not run: straight to stderr, since the
/// harness swallows `eprintln!` of a passing test.
fn skipped(why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "\n!!! SKIPPED: {why} !!!\n");
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
        search: Default::default(),
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

/// The supervisor that ends a command's daemons is outside the command's
/// Landlock domain: where Landlock scopes signals (ABI 6), the command
/// cannot kill it to set a daemon free, and the daemon ends with it.
#[tokio::test]
async fn a_command_cannot_kill_its_supervisor() {
    let Some(sandbox) = sandbox() else { return };
    if !sandbox.status().detail.contains("signals") {
        skipped("this kernel's Landlock does not scope signals (Linux 6.12, ABI 6)");
        return;
    }
    let l = layout();
    let script = "setsid sh -c 'echo $$ > daemon.tmp && mv daemon.tmp daemon.pid; exec sleep 300' & \
                  while [ ! -s daemon.pid ]; do sleep 0.01; done; kill -KILL $PPID; echo killed=$?";
    let out = sh(&sandbox, &l.root, false, script).await;
    assert_eq!(out.stdout.render(), "killed=1\n", "{}", out.stderr.render());
    assert_eq!(out.exit_code, Some(0));
    let daemon = std::fs::read_to_string(l.root.join("daemon.pid")).unwrap();
    assert!(
        !Path::new(&format!("/proc/{}", daemon.trim())).exists(),
        "daemon {daemon} outlived its command"
    );
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

/// A local datagram socket could send to any socket path without
/// connecting (journald, a daemon's notify socket) and pass descriptors:
/// without the network there is none.
#[tokio::test]
async fn no_datagram_reaches_a_socket_outside_without_the_network() {
    let Some(sandbox) = sandbox() else { return };
    let l = layout();
    let path = l.canary.join("dgram.sock");
    let receiver = std::os::unix::net::UnixDatagram::bind(&path).unwrap();
    receiver.set_nonblocking(true).unwrap();
    std::fs::write(
        l.root.join("dg.py"),
        format!(
            "import socket\n\
             for kind in (socket.SOCK_DGRAM, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC, socket.SOCK_RAW):\n\
             \x20   try:\n\
             \x20       socket.socket(socket.AF_UNIX, kind).sendto(b'out', '{}')\n\
             \x20   except OSError as e:\n\
             \x20       print('refused', e.errno)\n\
             try:\n\
             \x20   a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)\n\
             \x20   a.sendto(b'out', '{}')\n\
             except OSError as e:\n\
             \x20   print('refused', e.errno)\n",
            path.display(),
            path.display()
        ),
    )
    .unwrap();
    let out = sh(&sandbox, &l.root, false, "python3 dg.py").await;
    assert_eq!(
        out.stdout.render(),
        "refused 13\nrefused 13\nrefused 13\nrefused 13\n",
        "{}",
        out.stderr.render()
    );
    let mut buf = [0u8; 16];
    assert!(receiver.recv(&mut buf).is_err(), "a datagram got out");
}

/// Landlock confines writing, not metadata: giving a file away, set-ID
/// bits, the immutable flag and extended attributes are refused by the
/// filter, inside the root and outside; plain mode changes inside still work.
#[tokio::test]
async fn ownership_set_id_bits_flags_and_xattrs_are_refused() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let Some(sandbox) = sandbox() else { return };
    let l = layout();
    std::fs::write(l.root.join("f"), "x").unwrap();
    let outside = l.canary.join("existing.txt");
    let before = std::fs::metadata(&outside).unwrap();
    std::fs::write(
        l.root.join("meta.py"),
        format!(
            "{ATTEMPT}import fcntl, struct\n\
             for target in ('f', '{outside}'):\n\
             \x20   attempt('chown', lambda: os.chown(target, 1234, 1234))\n\
             \x20   attempt('setuid', lambda: os.chmod(target, 0o4755))\n\
             \x20   attempt('setgid', lambda: os.chmod(target, 0o2755))\n\
             \x20   attempt('xattr', lambda: os.setxattr(target, 'user.x', b'1'))\n\
             \x20   def immutable():\n\
             \x20       with open(target, 'rb') as f:\n\
             \x20           fcntl.ioctl(f, 0x40086602, struct.pack('l', 0x10))\n\
             \x20   attempt('immutable', immutable)\n\
             attempt('create-setuid', lambda: os.close(os.open('g', os.O_CREAT | os.O_WRONLY, 0o4755)))\n\
             attempt('create-setgid', lambda: os.close(os.open('g', os.O_CREAT | os.O_WRONLY, 0o2755)))\n\
             attempt('mknod-setuid', lambda: os.mknod('g', 0o100000 | 0o4755))\n\
             attempt('mknod-char', lambda: os.mknod('tty9', 0o020000 | 0o600, os.makedev(4, 9)))\n\
             attempt('tmpfile-setuid', lambda: os.close(os.open('.', os.O_TMPFILE | os.O_WRONLY, 0o4755)))\n\
             import ctypes\n\
             how = struct.pack('QQQ', os.O_CREAT | os.O_WRONLY, 0o4755, 0)\n\
             libc = ctypes.CDLL(None, use_errno=True)\n\
             rc = libc.syscall(437, -100, b'g', how, len(how))\n\
             print('openat2', ctypes.get_errno() if rc < 0 else 'done')\n\
             attempt('chmod-x', lambda: os.chmod('f', 0o755))\n",
            outside = outside.display()
        ),
    )
    .unwrap();
    let out = sh(&sandbox, &l.root, false, "python3 meta.py").await;
    let shown = out.stdout.render();
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(
        lines,
        [
            "chown 1",
            "setuid 1",
            "setgid 1",
            "xattr 95",
            "immutable 1",
            "chown 1",
            "setuid 1",
            "setgid 1",
            "xattr 95",
            "immutable 1",
            "create-setuid 1",
            "create-setgid 1",
            "mknod-setuid 1",
            "mknod-char 1",
            "tmpfile-setuid 1",
            "openat2 38",
            "chmod-x done"
        ],
        "{}",
        out.stderr.render()
    );
    let after = std::fs::metadata(&outside).unwrap();
    assert_eq!((after.uid(), after.mode()), (before.uid(), before.mode()));
    assert_eq!(
        std::fs::metadata(l.root.join("f"))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777,
        0o755
    );
    assert!(!l.root.join("g").exists());
    canary_untouched(&l);
}

/// A command keeps no capability, even when the server runs as root:
/// Landlock does not bound what capabilities allow (devices, BPF, raw I/O).
#[tokio::test]
async fn a_command_has_no_capabilities() {
    let Some(sandbox) = sandbox() else { return };
    let l = layout();
    let out = sh(
        &sandbox,
        &l.root,
        false,
        "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status",
    )
    .await;
    let shown = out.stdout.render();
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines.len(), 5, "{shown}");
    for line in lines {
        assert!(line.ends_with("0000000000000000"), "{shown}");
    }
}

/// Another process's resource limits, the user's keyrings and System V
/// IPC objects are out of reach; the command's own limits are not.
#[tokio::test]
async fn other_processes_limits_keyrings_and_ipc_are_out_of_reach() {
    let Some(sandbox) = sandbox() else { return };
    let l = layout();
    std::fs::write(
        l.root.join("reach.py"),
        format!(
            "{ATTEMPT}import resource, ctypes\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         attempt('prlimit-parent', lambda: resource.prlimit(os.getppid(), resource.RLIMIT_CPU, (1, 1)))\n\
         attempt('setrlimit-own', lambda: resource.setrlimit(resource.RLIMIT_CORE, (0, 0)))\n\
         def raw(name, number, *args):\n\
         \x20   rc = libc.syscall(number, *args)\n\
         \x20   print(name, ctypes.get_errno() if rc < 0 else 'done')\n\
         raw('shmget', 29, 0, 4096, 0o1600)\n\
         raw('msgget', 68, 0, 0o1600)\n\
         raw('add_key', 248, b'user', b'k', b'v', 1, -4)\n\
         raw('mq_open', 240, b'wamcp-test-queue', os.O_CREAT | os.O_RDWR, 0o600, None)\n\
         import fcntl\n\
         attempt('lease', lambda: fcntl.fcntl(os.open('../canary/existing.txt', os.O_RDONLY), 1024, fcntl.F_RDLCK))\n"
        ),
    )
    .unwrap();
    let before = std::fs::read_to_string("/proc/self/limits").unwrap();
    let out = sh(&sandbox, &l.root, false, "python3 reach.py").await;
    assert_eq!(
        out.stdout.render().lines().collect::<Vec<_>>(),
        [
            "prlimit-parent 1",
            "setrlimit-own done",
            "shmget 1",
            "msgget 1",
            "add_key 1",
            "mq_open 1",
            "lease 1"
        ],
        "{}",
        out.stderr.render()
    );
    assert_eq!(
        std::fs::read_to_string("/proc/self/limits").unwrap(),
        before
    );
}

/// A command that nests directories deeply in its temp directory leaves
/// nothing behind. (The removal keeps its stack and descriptors constant
/// whatever the depth: `tree.rs` tests that on a 64 KiB stack; 5,000 levels
/// here keep the test quick, since each mkdir under Landlock walks the
/// levels above it.)
#[tokio::test]
async fn a_temp_tree_of_any_depth_is_removed() {
    let Some(sandbox) = sandbox() else { return };
    let l = layout();
    std::fs::write(
        l.root.join("deep.py"),
        "import os\nos.chdir(os.environ['TMPDIR'])\nprint(os.getcwd())\n\
         for _ in range(5000):\n    os.mkdir('d')\n    os.chdir('d')\n",
    )
    .unwrap();
    let out = sh(&sandbox, &l.root, false, "python3 deep.py").await;
    assert_eq!(out.exit_code, Some(0), "{}", out.stderr.render());
    let temp = out.stdout.render();
    assert!(!std::path::Path::new(temp.trim()).exists(), "{temp}");
}
