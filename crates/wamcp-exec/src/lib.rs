//! Running a checked argv: no shell, stdin closed, output capped with the
//! cut announced, and a timeout that kills the whole process tree (see
//! `tree`: nothing a command started outlives it).

#![deny(missing_docs)]

pub mod build;
pub mod build_report;
pub mod command;
pub mod confine;
#[cfg(windows)]
mod confine_windows;
pub mod diagnostics;
pub mod environment;
pub mod repository;
pub mod rules_file;
pub mod self_test;
pub mod shader;
mod temp;
mod tree;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt};
use wamcp_platform::search_path::ProgramSearch;

/// What to run.
#[derive(Clone, Debug)]
pub struct RunSpec {
    /// The program: a name looked up on the child's `PATH`, or on Windows
    /// the file the plan found for it.
    pub program: String,
    /// Its arguments, passed as they are, with no shell between.
    pub args: Vec<String>,
    /// Variables added to the inherited environment.
    pub env: Vec<(String, String)>,
    /// The working directory, already checked to be inside a project.
    pub cwd: PathBuf,
    /// When the whole process tree is killed.
    pub timeout: Duration,
    /// Bytes kept from the start of each stream (the end is kept too).
    pub keep_head: usize,
    /// Bytes kept from the end of each stream.
    pub keep_tail: usize,
    /// `None` runs the program unconfined (confinement off or unavailable).
    pub confinement: Option<confine::Confinement>,
    /// The child's `PATH`, and on Windows where a program named without a
    /// path is found (a plan names the file it found, so none is needed).
    pub search: ProgramSearch,
}

/// One output stream, possibly cut in the middle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Captured {
    /// The first bytes written, up to the spec's `keep_head`.
    pub head: Vec<u8>,
    /// The last bytes written after the head, up to `keep_tail`.
    pub tail: Vec<u8>,
    /// Total bytes the program wrote.
    pub total: u64,
}

impl Captured {
    /// The text as shown: head, a marker naming how much was left out, and
    /// tail; invalid UTF-8 replaced, and the replacement announced.
    pub fn render(&self) -> String {
        let (mut head, mut tail) = (&self.head[..], &self.tail[..]);
        if self.total > (head.len() + tail.len()) as u64 {
            // The cuts fall on byte counts: a character they split is left
            // out whole (and counted), not shown as undecodable.
            (head, tail) = (without_cut_end(head), without_cut_start(tail));
        }
        let omitted = self.total - (head.len() + tail.len()) as u64;
        let mut bytes = head.to_vec();
        if omitted > 0 {
            bytes.extend_from_slice(format!("\n[... {omitted} bytes omitted ...]\n").as_bytes());
        }
        bytes.extend_from_slice(tail);
        match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => {
                if let Some((text, code_page)) =
                    wamcp_platform::console::decode_console(e.as_bytes())
                {
                    return format!(
                        "{text}\n[output was not UTF-8; decoded with the console code page {code_page}]"
                    );
                }
                let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
                format!(
                    "{text}\n[output was not valid UTF-8; undecodable bytes are shown as \u{FFFD}]"
                )
            }
        }
    }
}

/// `bytes` without a UTF-8 character its end cuts short.
fn without_cut_end(bytes: &[u8]) -> &[u8] {
    match std::str::from_utf8(bytes) {
        Err(e) if e.error_len().is_none() => &bytes[..e.valid_up_to()],
        _ => bytes,
    }
}

/// `bytes` without the continuation bytes of a character its start cut.
fn without_cut_start(bytes: &[u8]) -> &[u8] {
    let cut = bytes
        .iter()
        .take(3)
        .take_while(|&&b| b & 0xC0 == 0x80)
        .count();
    &bytes[cut..]
}

/// How a run ended.
#[derive(Debug)]
pub struct RunOutput {
    /// `None` when killed by the timeout or by a signal.
    pub exit_code: Option<i32>,
    /// The timeout ended the run (and the tree was killed).
    pub timed_out: bool,
    /// What the program wrote to standard output.
    pub stdout: Captured,
    /// What the program wrote to standard error.
    pub stderr: Captured,
    /// From start to end of the run.
    pub elapsed: Duration,
    /// Whether the OS layer confined the run.
    pub confined: bool,
    /// Hosts the egress proxy refused the command.
    pub refused_hosts: Vec<String>,
}

/// Starts `spec` and waits for it, killing the tree at the timeout.
/// Errors only when the program cannot be started.
pub async fn run(spec: &RunSpec) -> std::io::Result<RunOutput> {
    // Its own temp directory, removed when the run ends: confined, the
    // command may write nowhere else outside the roots.
    let temp = match &spec.confinement {
        Some(_) => Some(temp::TempTree::new("wamcp-cmd-")?),
        None => None,
    };
    let launch = match (&spec.confinement, &temp) {
        // Resolved, as every writable path is (a temp directory under a
        // linked /tmp would not open as the path it was given).
        (Some(confinement), Some(temp)) => {
            confinement.launch(&dunce::canonicalize(temp.path())?)?
        }
        _ => confine::Launch::default(),
    };
    let (program, args) = argv(spec, launch.wrapper)?;
    #[cfg(unix)]
    let (confine, channel) = (launch.pre_exec, launch.egress);
    #[cfg(windows)]
    let (confine, channel) = (None, None::<()>);
    // Without a network of its own the command is only told where the
    // proxy is: on this machine's loopback, for the run.
    let shared = match &spec.confinement {
        Some(c) if c.proxy_by_settings() => Some(std::net::TcpListener::bind("127.0.0.1:0")?),
        _ => None,
    };
    let proxy_port = match &shared {
        Some(listener) => Some(listener.local_addr()?.port()),
        None => channel.is_some().then_some(confine::EGRESS_PORT),
    };
    let command = command(
        spec,
        &program,
        &args,
        temp.as_ref().map(|t| t.path()),
        proxy_port,
    );
    let started = Instant::now();
    let mut child = tree::Tree::spawn(command, confine)?;
    let listener = match (channel, shared) {
        #[cfg(target_os = "linux")]
        (Some(channel), _) => Some(wamcp_platform::confine::receive_listener(&channel)?),
        (_, Some(shared)) => {
            shared.set_nonblocking(true)?;
            Some(shared)
        }
        _ => None,
    };
    let egress = match (listener, &spec.confinement) {
        (Some(listener), Some(confinement)) => confinement.serve_egress(listener).transpose()?,
        _ => None,
    };
    let (keep_head, keep_tail) = (spec.keep_head, spec.keep_tail);
    let (out_state, err_state) = (
        Arc::new(Mutex::new(Ring::new(keep_head, keep_tail))),
        Arc::new(Mutex::new(Ring::new(keep_head, keep_tail))),
    );
    let out_task = tokio::spawn(capture(child.stdout(), out_state.clone()));
    let err_task = tokio::spawn(capture(child.stderr(), err_state.clone()));
    let (exit_code, timed_out) = child.finish(spec.timeout).await?;
    let stdout = collect(out_task, out_state).await;
    let stderr = collect(err_task, err_state).await;
    if let Some(temp) = temp {
        temp.remove().await;
    }
    Ok(RunOutput {
        exit_code,
        timed_out,
        stdout,
        stderr,
        elapsed: started.elapsed(),
        confined: spec.confinement.is_some(),
        refused_hosts: egress.map(|run| run.refused()).unwrap_or_default(),
    })
}

/// The program and arguments that start `spec`: behind the confining
/// helper when there is one. On Windows the file is found here, through
/// PATHEXT on the child's PATH: the standard library would add only `.exe`
/// (no `npm.cmd`), and the helper starts exactly the file it is given. A
/// plan names the file it found, so nothing is looked up twice.
fn argv(
    spec: &RunSpec,
    wrapper: Option<(String, Vec<String>)>,
) -> std::io::Result<(String, Vec<String>)> {
    let program = if cfg!(windows) {
        let resolved = spec
            .search
            .resolve_program(&spec.program)
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))?;
        resolved.display().to_string()
    } else {
        spec.program.clone()
    };
    Ok(match wrapper {
        Some((helper, mut helper_args)) => {
            helper_args.push(program);
            helper_args.extend(spec.args.iter().cloned());
            (helper, helper_args)
        }
        None => (program, spec.args.clone()),
    })
}

/// The process to spawn: no stdin, piped output, the server's environment
/// less its credentials plus the spec's, the child's `PATH`, and the run's
/// own temp directory when it has one.
fn command(
    spec: &RunSpec,
    program: &str,
    args: &[String],
    temp: Option<&std::path::Path>,
    proxy_port: Option<u16>,
) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(program);
    environment::withhold(&mut command);
    command
        .args(args)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&spec.cwd)
        // A child that inherits the server's stdin can hang at start on
        // Windows, and must never read the protocol stream anywhere.
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // A toolchain installed after the server started is found (and, on
    // Windows, the program is looked up in this PATH, not the server's).
    if let Some(path) = spec.search.child_path() {
        command.env("PATH", path);
    }
    // cmd.exe (running a batch file such as npm.cmd) looks for a program the
    // batch names (`node`) in the working directory before PATH: a
    // `node.cmd` the agent wrote into the project would run instead.
    #[cfg(windows)]
    command.env("NoDefaultCurrentDirectoryInExePath", "1");
    if let Some(temp) = temp {
        for name in ["TMPDIR", "TEMP", "TMP"] {
            command.env(name, temp);
        }
    }
    if let Some(port) = proxy_port {
        proxy_environment(&mut command, port);
    }
    command
}

/// Points every HTTP client the toolchains use at the egress proxy. In a
/// network of its own there is no other way out, so a client that ignores
/// these cannot connect; elsewhere these are all that holds it.
fn proxy_environment(command: &mut tokio::process::Command, port: u16) {
    let proxy = format!("http://127.0.0.1:{port}");
    for name in [
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "npm_config_proxy",
        "npm_config_https_proxy",
        "CARGO_HTTP_PROXY",
        "PIP_PROXY",
    ] {
        command.env(name, &proxy);
    }
    for name in ["no_proxy", "NO_PROXY", "npm_config_noproxy"] {
        command.env_remove(name);
    }
}

/// What a stream's reader kept, once the run is over. A grandchild that
/// escaped the tree could hold the pipes open; this does not wait for it
/// forever, and keeps what was read before giving up.
async fn collect(mut task: tokio::task::JoinHandle<()>, state: Arc<Mutex<Ring>>) -> Captured {
    if tokio::time::timeout(Duration::from_secs(5), &mut task)
        .await
        .is_err()
    {
        // Dropping the handle would leave the task reading forever,
        // holding the pipe (a descriptor per stream per call).
        task.abort();
    }
    state.lock().unwrap_or_else(|e| e.into_inner()).captured()
}

/// How often a long run reports that it is still going.
pub const PROGRESS_INTERVAL: Duration = Duration::from_secs(5);

/// Receives the elapsed time while a process runs, every
/// [`PROGRESS_INTERVAL`]; the MCP adapter turns it into progress
/// notifications so a client does not give up on a long build.
pub type Progress<'a> = &'a (dyn Fn(Duration) + Send + Sync);

/// [`run`], reporting progress while it waits.
pub async fn run_reporting(
    spec: &RunSpec,
    progress: Option<Progress<'_>>,
) -> std::io::Result<RunOutput> {
    let Some(progress) = progress else {
        return run(spec).await;
    };
    let started = Instant::now();
    let running = run(spec);
    tokio::pin!(running);
    let mut ticks = tokio::time::interval_at(
        tokio::time::Instant::now() + PROGRESS_INTERVAL,
        PROGRESS_INTERVAL,
    );
    loop {
        tokio::select! {
            out = &mut running => return out,
            _ = ticks.tick() => progress(started.elapsed()),
        }
    }
}

/// A stream's first `head` bytes and last `tail` bytes, as read so far:
/// shared with the reader, so an abandoned read still yields its output.
struct Ring {
    head: Vec<u8>,
    keep_head: usize,
    tail: VecDeque<u8>,
    keep_tail: usize,
    total: u64,
}

impl Ring {
    fn new(keep_head: usize, keep_tail: usize) -> Ring {
        Ring {
            head: Vec::new(),
            keep_head,
            tail: VecDeque::with_capacity(keep_tail.min(64 * 1024)),
            keep_tail,
            total: 0,
        }
    }

    fn push(&mut self, mut chunk: &[u8]) {
        self.total += chunk.len() as u64;
        let room = self.keep_head - self.head.len();
        if room > 0 {
            let take = room.min(chunk.len());
            self.head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        if self.keep_tail == 0 {
            return;
        }
        let chunk = &chunk[chunk.len().saturating_sub(self.keep_tail)..];
        let overflow = (self.tail.len() + chunk.len()).saturating_sub(self.keep_tail);
        self.tail.drain(..overflow);
        self.tail.extend(chunk);
    }

    fn captured(&self) -> Captured {
        Captured {
            head: self.head.clone(),
            tail: self.tail.iter().copied().collect(),
            total: self.total,
        }
    }
}

/// Reads a stream to its end into `ring`.
async fn capture(stream: Option<impl AsyncRead + Unpin>, ring: Arc<Mutex<Ring>>) {
    let Some(mut stream) = stream else {
        return;
    };
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        ring.lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(&buf[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(script: &str) -> RunSpec {
        let (program, args) = if cfg!(windows) {
            (
                "cmd".to_string(),
                vec!["/c".to_string(), script.to_string()],
            )
        } else {
            ("sh".to_string(), vec!["-c".to_string(), script.to_string()])
        };
        RunSpec {
            program,
            args,
            env: Vec::new(),
            cwd: std::env::temp_dir(),
            timeout: Duration::from_secs(30),
            keep_head: 64 * 1024,
            keep_tail: 16 * 1024,
            confinement: None,
            search: Default::default(),
        }
    }

    /// Cuts made by byte counts through a character leave it out whole:
    /// valid UTF-8 is never announced as undecodable.
    #[test]
    fn a_character_split_by_the_cut_is_left_out_whole() {
        let text = "a".to_string() + &"€".repeat(10);
        let bytes = text.as_bytes();
        for (head, tail) in [(2, 2), (3, 4), (5, 1)] {
            let captured = Captured {
                head: bytes[..head].to_vec(),
                tail: bytes[bytes.len() - tail..].to_vec(),
                total: bytes.len() as u64,
            };
            let shown = captured.render();
            assert!(
                !shown.contains('\u{FFFD}') && !shown.contains("not valid"),
                "{shown}"
            );
            let kept = shown.replace(|c: char| c != '€' && c != 'a', "");
            let omitted: u64 = shown
                .split("[... ")
                .nth(1)
                .and_then(|r| r.split(' ').next())
                .and_then(|n| n.parse().ok())
                .unwrap();
            assert_eq!(kept.len() as u64 + omitted, bytes.len() as u64, "{shown}");
        }
    }

    #[test]
    fn output_that_is_not_utf8_is_decoded_and_says_how() {
        let head = b"Fehler in Zeile 3 (\x81)".to_vec();
        let captured = Captured {
            total: head.len() as u64,
            head,
            tail: Vec::new(),
        };
        let text = captured.render();
        if cfg!(windows) {
            assert!(
                text.contains("decoded with the console code page"),
                "{text}"
            );
            assert!(!text.contains('\u{FFFD}'), "{text}");
        } else {
            assert!(
                text.starts_with("Fehler in Zeile 3 (\u{FFFD})\n[output was not valid UTF-8"),
                "{text}"
            );
            assert!(
                text.ends_with("undecodable bytes are shown as \u{FFFD}]"),
                "{text}"
            );
        }
    }

    #[tokio::test]
    async fn exit_codes_and_both_streams_arrive() {
        let out = run(&shell("echo out&& echo err 1>&2&& exit 3"))
            .await
            .unwrap();
        assert_eq!(out.exit_code, Some(3));
        assert!(!out.timed_out);
        assert_eq!(out.stdout.render().trim(), "out");
        assert_eq!(out.stderr.render().trim(), "err");
    }

    #[tokio::test]
    async fn a_missing_program_is_an_error() {
        let spec = RunSpec {
            program: "wamcp-no-such-program".into(),
            args: vec![],
            env: Vec::new(),
            ..shell("")
        };
        assert_eq!(
            run(&spec).await.unwrap_err().kind(),
            std::io::ErrorKind::NotFound
        );
    }

    #[test]
    fn capture_keeps_head_and_tail_and_says_what_it_cut() {
        let data: Vec<u8> = (0..100u8).collect();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let read = |bytes: &[u8]| {
            let ring = Arc::new(Mutex::new(Ring::new(10, 5)));
            rt.block_on(capture(Some(bytes), ring.clone()));
            ring.lock().map(|r| r.captured()).unwrap()
        };
        let captured = read(&data);
        assert_eq!(captured.head, (0..10u8).collect::<Vec<_>>());
        assert_eq!(captured.tail, (95..100u8).collect::<Vec<_>>());
        assert_eq!(captured.total, 100);
        assert_eq!(read(b"short").render(), "short");
        let text = Captured {
            head: b"abc".to_vec(),
            tail: b"xyz".to_vec(),
            total: 10,
        }
        .render();
        assert_eq!(text, "abc\n[... 4 bytes omitted ...]\nxyz");
    }

    /// A process that leaves the tree with the output pipes open: the run
    /// returns after the grace period and the server keeps no descriptor
    /// for it (each would otherwise be held for as long as it lives).
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn an_escaped_process_does_not_keep_the_pipes() {
        let open_fds = || std::fs::read_dir("/proc/self/fd").unwrap().count();
        let before = open_fds();
        let marker = format!("wamcp-escape-{}", std::process::id());
        let out = run(&shell(&format!("setsid sh -c 'sleep 30; echo {marker}' &")))
            .await
            .unwrap();
        assert_eq!(out.exit_code, Some(0));
        let mut after = open_fds();
        for _ in 0..100 {
            if after <= before {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
            after = open_fds();
        }
        let _ = std::process::Command::new("pkill")
            .args(["-f", &marker])
            .status();
        assert!(
            after <= before,
            "{before} descriptors before, {after} after"
        );
    }

    /// A daemon (`setsid` in the background) that writes its process
    /// number into `dir`, then sleeps; the command waits for the number.
    #[cfg(target_os = "linux")]
    fn detaching(dir: &std::path::Path, then: &str) -> RunSpec {
        RunSpec {
            cwd: dir.to_path_buf(),
            ..shell(&format!(
                "setsid sh -c 'echo $$ > daemon.tmp && mv daemon.tmp daemon.pid; exec sleep 300' & \
                 while [ ! -s daemon.pid ]; do sleep 0.01; done; {then}"
            ))
        }
    }

    /// The daemon's process number, once it wrote it.
    #[cfg(target_os = "linux")]
    fn daemon_of(dir: &std::path::Path) -> Option<u32> {
        std::fs::read_to_string(dir.join("daemon.pid"))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// A process that left the command's session and process group is
    /// still of its tree: it is gone when the run returns, whether the
    /// command exited (with its own code kept) or the timeout struck.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_detached_daemon_ends_with_its_command() {
        for (then, timeout, code) in [
            ("exit 7", Duration::from_secs(30), Some(7)),
            ("sleep 300", Duration::from_millis(1500), None),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let out = run(&RunSpec {
                timeout,
                ..detaching(dir.path(), then)
            })
            .await
            .unwrap();
            assert_eq!(
                (out.exit_code, out.timed_out),
                (code, code.is_none()),
                "{then}"
            );
            let daemon = daemon_of(dir.path()).unwrap();
            assert!(
                !std::path::Path::new(&format!("/proc/{daemon}")).exists(),
                "{then}: daemon {daemon} outlived its command"
            );
        }
    }

    /// A run abandoned midway (a cancelled call) ends the daemon too.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn an_abandoned_run_ends_its_detached_daemon() {
        let dir = tempfile::tempdir().unwrap();
        let spec = detaching(dir.path(), "sleep 300");
        let mut running = Box::pin(run(&spec));
        let mut daemon = None;
        for _ in 0..1000 {
            tokio::select! {
                out = &mut running => panic!("the command ended: {out:?}"),
                _ = tokio::time::sleep(Duration::from_millis(10)) => {}
            }
            daemon = daemon_of(dir.path());
            if daemon.is_some() {
                break;
            }
        }
        let daemon = daemon.expect("the daemon started");
        drop(running);
        let gone = || !std::path::Path::new(&format!("/proc/{daemon}")).exists();
        for _ in 0..200 {
            if gone() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        assert!(gone(), "daemon {daemon} outlived its abandoned run");
    }

    /// A process that traces its own parent keeps that parent, once killed,
    /// from being reaped until the tracer is gone; the tracer left the
    /// session. Cleanup must neither wait on the zombie (the run would
    /// answer only at the timeout, as timed out) nor leave the tracer.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_tracer_that_left_the_session_ends_and_the_run_is_not_held() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("trace.py"),
            "import ctypes, os, time\n\
             libc = ctypes.CDLL(None, use_errno=True)\n\
             if os.fork() == 0:\n\
             \x20   libc.prctl(0x59616d61, ctypes.c_ulong(-1))\n\
             \x20   parent = os.getpid()\n\
             \x20   if os.fork() == 0:\n\
             \x20       os.setsid()\n\
             \x20       libc.ptrace(0x4206, parent, 0, 0)\n\
             \x20       open('tracer.tmp', 'w').write(str(os.getpid()))\n\
             \x20       os.rename('tracer.tmp', 'tracer.pid')\n\
             \x20       os.closerange(0, 256)\n\
             \x20       os.execvp('sleep', ['sleep', '300'])\n\
             \x20   while True: time.sleep(100)\n\
             while not os.path.exists('tracer.pid'): time.sleep(0.01)\n",
        )
        .unwrap();
        let out = run(&RunSpec {
            program: "python3".into(),
            args: vec!["trace.py".into()],
            cwd: dir.path().to_path_buf(),
            timeout: Duration::from_secs(60),
            ..shell("")
        })
        .await
        .unwrap();
        assert_eq!(
            (out.exit_code, out.timed_out),
            (Some(0), false),
            "{}",
            out.stderr.render()
        );
        let tracer = std::fs::read_to_string(dir.path().join("tracer.pid")).unwrap();
        assert!(
            !std::path::Path::new(&format!("/proc/{tracer}")).exists(),
            "tracer {tracer} outlived its command"
        );
    }

    /// A child that traces the command keeps the command's exit from its
    /// parent until the tracer is gone: the run still answers at once, with
    /// the command's own status, not at the timeout as timed out.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_command_traced_by_its_child_answers_with_its_own_status() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("traced.py"),
            "import ctypes, os, sys, time\n\
             libc = ctypes.CDLL(None, use_errno=True)\n\
             libc.prctl(0x59616d61, ctypes.c_ulong(-1))\n\
             main = os.getpid()\n\
             r, w = os.pipe()\n\
             if os.fork() == 0:\n\
             \x20   os.write(w, b'%d' % libc.ptrace(0x4206, main, 0, 0))\n\
             \x20   os.closerange(0, 256)\n\
             \x20   while True: time.sleep(100)\n\
             print('seized', os.read(r, 10).decode(), flush=True)\n\
             sys.exit(3)\n",
        )
        .unwrap();
        let out = run(&RunSpec {
            program: "python3".into(),
            args: vec!["traced.py".into()],
            cwd: dir.path().to_path_buf(),
            timeout: Duration::from_secs(60),
            ..shell("")
        })
        .await
        .unwrap();
        assert_eq!(out.stdout.render(), "seized 0\n", "{}", out.stderr.render());
        assert_eq!((out.exit_code, out.timed_out), (Some(3), false));
    }

    /// A command that makes its parent (the supervisor) its tracer runs on
    /// as if untraced: its next signal stop is let go, not taken for its end.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_command_that_asks_to_be_traced_runs_on_untraced() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("traceme.py"),
            "import ctypes, os, signal, sys, time\n\
             signal.signal(signal.SIGUSR1, lambda *a: print('signalled', flush=True))\n\
             print('traceme', ctypes.CDLL(None).ptrace(0, 0, 0, 0), flush=True)\n\
             os.kill(os.getpid(), signal.SIGUSR1)\n\
             time.sleep(0.3)\n\
             sys.exit(5)\n",
        )
        .unwrap();
        let out = run(&RunSpec {
            program: "python3".into(),
            args: vec!["traceme.py".into()],
            cwd: dir.path().to_path_buf(),
            ..shell("")
        })
        .await
        .unwrap();
        assert_eq!(
            out.stdout.render(),
            "traceme 0\nsignalled\n",
            "{}",
            out.stderr.render()
        );
        assert_eq!((out.exit_code, out.timed_out), (Some(5), false));
    }

    /// The supervisor exits as the command did: a command killed by a
    /// signal has no exit code, as before.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_command_killed_by_a_signal_has_no_exit_code() {
        let out = run(&shell("echo before; kill -KILL $$")).await.unwrap();
        assert_eq!((out.exit_code, out.timed_out), (None, false));
        assert_eq!(out.stdout.render(), "before\n");
    }

    /// A command that leaves a background child behind: the child ends with
    /// the command, so the answer comes at once and carries the output.
    #[cfg(unix)]
    #[tokio::test]
    async fn a_background_child_ends_with_the_command_and_the_output_stays() {
        let out = run(&shell("sleep 300 & echo started")).await.unwrap();
        assert_eq!(out.exit_code, Some(0));
        assert_eq!(out.stdout.render(), "started\n");
        assert!(out.elapsed < Duration::from_secs(4), "{:?}", out.elapsed);
    }

    /// An escaped process holding the pipes: what the command printed before
    /// it exited is still returned.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn output_read_before_an_escaped_process_held_the_pipes_is_kept() {
        let marker = format!("wamcp-held-{}", std::process::id());
        let out = run(&shell(&format!(
            "echo before; setsid sh -c 'sleep 30; echo {marker}' &"
        )))
        .await
        .unwrap();
        let _ = std::process::Command::new("pkill")
            .args(["-f", &marker])
            .status();
        assert_eq!(out.stdout.render(), "before\n");
    }

    #[test]
    fn the_ring_keeps_head_and_tail_across_chunks() {
        let mut ring = Ring::new(3, 4);
        for chunk in [&b"ab"[..], b"cdef", b"", b"ghijk", b"l"] {
            ring.push(chunk);
        }
        let c = ring.captured();
        assert_eq!(
            (c.head.as_slice(), c.tail.as_slice(), c.total),
            (&b"abc"[..], &b"ijkl"[..], 12)
        );
        let mut none = Ring::new(0, 0);
        none.push(b"xyz");
        assert_eq!(
            none.captured(),
            Captured {
                head: vec![],
                tail: vec![],
                total: 3
            }
        );
    }

    /// A child that starts grandchildren and sleeps: after the timeout, no
    /// process of the tree may remain.
    #[tokio::test]
    async fn a_timeout_kills_the_whole_tree() {
        let marker = format!("wamcp-tree-{}", std::process::id());
        let script = if cfg!(windows) {
            "start /b ping -n 60 127.0.0.1 >NUL & ping -n 60 127.0.0.1 >NUL".to_string()
        } else {
            // Durations unique to this run, so another process's sleep is never counted.
            let id = std::process::id();
            format!("sleep 60.{id} & sleep 61.{id} & echo {marker}; wait")
        };
        let spec = RunSpec {
            timeout: Duration::from_millis(1500),
            ..shell(&script)
        };
        let out = run(&spec).await.unwrap();
        assert!(out.timed_out);
        assert_eq!(out.exit_code, None);
        assert!(out.elapsed < Duration::from_secs(30), "the kill returned");
        #[cfg(target_os = "linux")]
        {
            // No process still carries the test's sleeps. A loaded machine
            // may take a moment to deliver the kill, so this waits for it.
            let sleeps = [60, 61].map(|n| format!("sleep\0{n}.{}\0", std::process::id()));
            let survivors = || -> Vec<u32> {
                std::fs::read_dir("/proc")
                    .unwrap()
                    .filter_map(|e| {
                        let pid: u32 = e.ok()?.file_name().to_str()?.parse().ok()?;
                        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
                        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                        // Zombies are dead; only running sleeps count.
                        let state = stat
                            .rsplit(')')
                            .next()?
                            .split_whitespace()
                            .next()?
                            .to_string();
                        (sleeps.iter().any(|s| cmdline == s.as_bytes()) && state != "Z")
                            .then_some(pid)
                    })
                    .collect()
            };
            let mut alive = survivors();
            for _ in 0..100 {
                if alive.is_empty() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
                alive = survivors();
            }
            assert!(alive.is_empty(), "survivors: {alive:?}");
        }
    }
}
