//! Proving the OS layer on this machine before trusting it: a probe child
//! (`wamcp __confine-probe`) is started exactly as commands are (the same
//! [`crate::run`], temp folder, launch, job and environment), confined to a
//! root of its own, and tries to write inside and outside it and to reach
//! a loopback listener wamcp holds. wamcp then looks for the files and the
//! connection itself; `wamcp_policy::command::self_test` judges.
//!
//! The verdict is kept in a file per boot and per binary: the probe costs a
//! process start or two, which Windows makes slow, and nothing it tests
//! changes without a reboot, a new binary or a new kernel.

use crate::confine::Sandbox;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;
use wamcp_platform::atomic::Commit;
use wamcp_policy::command::self_test::{
    Observed, Outcome, Place, Proof, judge, parse_report, read_record, record, report_line,
};

/// The subcommand of the wamcp binary that probes.
pub const PROBE: &str = "__confine-probe";

/// The probe's file name in each place.
const PROBE_FILE: &str = "wamcp-probe.txt";

/// What the files the probe must not change hold.
const VICTIM: &[u8] = b"wamcp canary: must keep these bytes\n";

/// What the probe does to the system, so that its own decisions are tested
/// with systems that refuse and allow.
pub trait ProbeSystem {
    /// Creates `path` with a few bytes.
    fn write(&self, path: &Path) -> io::Result<()>;
    /// Truncates the file `path` to nothing, by its path.
    fn truncate(&self, path: &Path) -> io::Result<()>;
    /// Opens the file `path` for reading with `O_TRUNC` (Windows: for
    /// writing, truncating), which empties it.
    fn empty(&self, path: &Path) -> io::Result<()>;
    /// Deletes the file `path`.
    fn remove(&self, path: &Path) -> io::Result<()>;
    /// Renames `from` to `to`.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Connects to `port` on this machine's loopback.
    fn connect(&self, port: u16) -> io::Result<()>;
    /// Where its temp folder is.
    fn temp_dir(&self) -> PathBuf;
}

/// The real system.
pub struct RealSystem;

impl ProbeSystem for RealSystem {
    fn write(&self, path: &Path) -> io::Result<()> {
        std::fs::write(path, b"wamcp self-test\n")
    }

    /// `truncate(2)` on Unix: the call Landlock bounds only from ABI 3,
    /// which a write by opening the file does not exercise.
    #[cfg(unix)]
    fn truncate(&self, path: &Path) -> io::Result<()> {
        use std::os::unix::ffi::OsStrExt;
        let path = std::ffi::CString::new(path.as_os_str().as_bytes())?;
        // SAFETY: a NUL-terminated path that outlives the call.
        match unsafe { libc::truncate(path.as_ptr(), 0) } {
            0 => Ok(()),
            _ => Err(io::Error::last_os_error()),
        }
    }

    /// Windows truncates only through a handle opened for writing.
    #[cfg(not(unix))]
    fn truncate(&self, path: &Path) -> io::Result<()> {
        std::fs::OpenOptions::new()
            .write(true)
            .open(path)?
            .set_len(0)
    }

    #[cfg(unix)]
    fn empty(&self, path: &Path) -> io::Result<()> {
        use std::os::unix::fs::OpenOptionsExt;
        // O_RDONLY is zero: read access, with the truncation as a flag.
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_TRUNC)
            .open(path)
            .map(drop)
    }

    #[cfg(not(unix))]
    fn empty(&self, path: &Path) -> io::Result<()> {
        std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(path)
            .map(drop)
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    fn connect(&self, port: u16) -> io::Result<()> {
        let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        TcpStream::connect_timeout(&address, Duration::from_secs(3)).map(drop)
    }

    fn temp_dir(&self) -> PathBuf {
        std::env::temp_dir()
    }
}

/// The body of `wamcp __confine-probe --port P PLACE=PATH... temp`: tries
/// each change (a new file in a folder, a truncation, an emptying open, a
/// delete, a rename: see `Place`) and the connection, and answers the
/// report, one line each. An argument it does not understand is an error,
/// never skipped.
pub fn probe_main(args: &[String], system: &dyn ProbeSystem) -> Result<String, String> {
    let mut report = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if arg == "--port" {
            let port = args.next().and_then(|p| p.parse::<u16>().ok());
            let port = port.ok_or("--port needs a port number")?;
            report.push(report_line(None, &outcome(system.connect(port))));
            continue;
        }
        let (label, path) = match arg.split_once('=') {
            Some((label, path)) => (label, PathBuf::from(path)),
            None => (arg.as_str(), system.temp_dir()),
        };
        let place = Place::from_label(label).ok_or_else(|| format!("unknown place '{arg}'"))?;
        let done = match place {
            Place::Root | Place::Temp | Place::Outside | Place::Trust => {
                system.write(&path.join(PROBE_FILE))
            }
            Place::Victim => system.truncate(&path),
            Place::Emptied => system.empty(&path),
            Place::Doomed | Place::TrustFile => system.remove(&path),
            Place::TrustFolder => system.rename(&path, &moved(&path)),
        };
        report.push(report_line(Some(place), &outcome(done)));
    }
    Ok(report.join("\n") + "\n")
}

/// A refusal is the system saying no to this process: access denied, not
/// permitted, a read-only view. Anything else is another failure.
fn outcome(result: io::Result<()>) -> Outcome {
    match result {
        Ok(()) => Outcome::Done,
        Err(e) if refused(&e) => Outcome::Refused(e.to_string()),
        Err(e) => Outcome::Failed(e.to_string()),
    }
}

fn refused(error: &io::Error) -> bool {
    // EBUSY: a mount point (a read-only trust folder) cannot be renamed.
    const EPERM: i32 = 1;
    const EBUSY: i32 = 16;
    const EROFS: i32 = 30;
    matches!(
        error.kind(),
        io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem
    ) || (cfg!(unix) && matches!(error.raw_os_error(), Some(EPERM | EBUSY | EROFS)))
}

/// Where the probe tries to rename a folder to.
fn moved(folder: &Path) -> PathBuf {
    let mut name = folder.as_os_str().to_os_string();
    name.push("-moved");
    PathBuf::from(name)
}

/// The verdict for this machine: the kept one when it holds for this boot,
/// binary and mechanism, else a new self-test (kept for next time).
pub fn proof(sandbox: &Sandbox, program: &Path, kept: Option<&Path>, key: &str) -> Proof {
    let file = kept.filter(|_| !key.is_empty());
    if let Some(proof) = file
        .and_then(|f| std::fs::read_to_string(f).ok())
        .and_then(|text| read_record(&text, key))
    {
        return proof;
    }
    renew(sandbox, program, file, key)
}

/// A new self-test, kept in `file` for `key` when the probe ran (a set-up
/// or start that failed is tried again next time, not kept for the boot).
pub fn renew(sandbox: &Sandbox, program: &Path, file: Option<&Path>, key: &str) -> Proof {
    let proof = prove(sandbox, program);
    if let Some(file) = file.filter(|_| proof.ran && !key.is_empty()) {
        let _ = keep(file, &record(key, &proof));
    }
    proof
}

/// Writes the record whole or not at all.
fn keep(file: &Path, text: &str) -> io::Result<()> {
    let (Some(dir), Some(name)) = (file.parent(), file.file_name()) else {
        return Err(io::Error::other("the record needs a folder and a name"));
    };
    std::fs::create_dir_all(dir)?;
    let dir = dunce::canonicalize(dir)?;
    wamcp_platform::atomic::write_atomically(&dir, name, text.as_bytes(), Commit::Replace)
}

/// Runs the self-test now.
pub fn prove(sandbox: &Sandbox, program: &Path) -> Proof {
    match attempt(sandbox, program) {
        Ok(proof) => proof,
        Err(e) => Proof::unproven(&format!("the self-test could not be set up: {e}")),
    }
}

fn attempt(sandbox: &Sandbox, program: &Path) -> io::Result<Proof> {
    let area = tempfile::Builder::new().prefix("wamcp-probe-").tempdir()?;
    let (root, outside) = (area.path().join("root"), area.path().join("outside"));
    let trust = root.join(".vscode");
    for dir in [&trust, &outside] {
        std::fs::create_dir_all(dir)?;
    }
    let root = dunce::canonicalize(&root)?;
    let path = |place| match place {
        Place::Root => root.clone(),
        Place::Temp => PathBuf::new(),
        Place::Outside => outside.clone(),
        Place::Trust | Place::TrustFolder => trust.clone(),
        Place::Victim => outside.join("victim.txt"),
        Place::Emptied => outside.join("emptied.txt"),
        Place::Doomed => outside.join("doomed.txt"),
        Place::TrustFile => trust.join("settings.json"),
    };
    for place in [
        Place::Victim,
        Place::Emptied,
        Place::Doomed,
        Place::TrustFile,
    ] {
        std::fs::write(path(place), VICTIM)?;
    }
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    listener.set_nonblocking(true)?;
    let mut args = vec![PROBE.to_string()];
    args.extend(Place::ALL.iter().map(|&place| match place {
        Place::Temp => place.label().to_string(),
        _ => format!("{}={}", place.label(), path(place).display()),
    }));
    args.push("--port".into());
    args.push(listener.local_addr()?.port().to_string());
    let spec = crate::RunSpec {
        program: program.display().to_string(),
        args,
        env: Vec::new(),
        cwd: root.clone(),
        timeout: Duration::from_secs(60),
        keep_head: 16 * 1024,
        keep_tail: 4 * 1024,
        confinement: Some(sandbox.probe_confinement(&root)),
        search: Default::default(),
    };
    let output = run_apart(spec)?;
    let kept = |file: PathBuf| std::fs::read(file).is_ok_and(|bytes| bytes == VICTIM);
    let changed = |place| match place {
        Place::Temp => false,
        Place::Root | Place::Outside => path(place).join(PROBE_FILE).exists(),
        // Looked for where the rename below may have taken it too.
        Place::Trust => [trust.clone(), moved(&trust)]
            .iter()
            .any(|dir| dir.join(PROBE_FILE).exists()),
        Place::TrustFolder => !trust.is_dir() || moved(&trust).exists(),
        _ => !kept(path(place)),
    };
    let observed = Observed {
        changed: Place::ALL.into_iter().filter(|p| changed(*p)).collect(),
        accepted: listener.accept().is_ok(),
    };
    let started = match output.exit_code {
        Some(0) => Ok(()),
        code => Err(format!(
            "it ended with {} ({})",
            code.map_or("no exit code".to_string(), |c| format!("exit code {c}")),
            output.stderr.render().trim()
        )),
    };
    Ok(judge(
        started,
        &observed,
        &parse_report(&output.stdout.render()),
    ))
}

/// Runs `spec` on a thread and runtime of its own: the verdict is asked for
/// from synchronous code, often on one of the server's runtime threads,
/// which must not block on a future of their own runtime.
fn run_apart(spec: crate::RunSpec) -> io::Result<crate::RunOutput> {
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
            .block_on(crate::run(&spec))
    })
    .join()
    .map_err(|_| io::Error::other("the self-test's thread panicked"))?
}

/// What identifies this boot, binary and OS layer for the kept verdict:
/// empty when the boot cannot be told (then nothing is kept).
pub fn key(program: &Path, mechanism: &str, detail: &str) -> String {
    let Some(boot) = wamcp_platform::system::boot_id() else {
        return String::new();
    };
    let binary = std::fs::metadata(program)
        .map(|m| {
            let modified = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{} {} {modified}", program.display(), m.len())
        })
        .unwrap_or_default();
    format!("{boot} | {binary} | {mechanism} | {detail}")
}

#[cfg(test)]
mod tests;
