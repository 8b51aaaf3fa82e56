//! A private view of the file system for one command: a user and mount
//! namespace in which the secret stores are empty and the trust folders of
//! the writable roots are read-only.
//!
//! Landlock only grants, so it cannot take one folder back out of a
//! writable root (`.git` inside the project) or hide `~/.ssh` while the rest
//! of the home folder stays readable; a mount over the place can. Mounts
//! made in a namespace owned by an unprivileged user namespace are locked
//! (the command cannot unmount them, even in a namespace of its own), and
//! Landlock, applied after them, refuses the command every later mount.
//! `/proc/<pid>/root` of a process outside the namespace is a ptrace-class
//! access, which Landlock refuses across its domains.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The mounts one command gets, prepared in the parent: the child only
/// makes system calls with what is here.
pub struct Mounts {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    steps: Vec<Step>,
}

enum Step {
    /// An empty, read-only file system over a folder.
    Empty(CString),
    /// The null device over a file: it reads as empty.
    Null(CString),
    /// The place itself again, read-only, keeping the flags its own mount
    /// has (a remount may not drop them inside a user namespace).
    ReadOnly(CString, libc::c_ulong),
}

impl Mounts {
    /// Mounts that hide each of `hidden` and make each of `read_only`
    /// read-only. Paths must be resolved and exist.
    pub fn new(hidden: &[impl AsRef<Path>], read_only: &[impl AsRef<Path>]) -> io::Result<Mounts> {
        // Read-only binds first: a hidden place is then mounted over
        // whatever view it has.
        let mut steps = Vec::new();
        for path in read_only {
            let path = path.as_ref();
            steps.push(Step::ReadOnly(c_path(path)?, kept_flags(path)?));
        }
        for path in hidden {
            let path = path.as_ref();
            let c = c_path(path)?;
            steps.push(match std::fs::metadata(path)?.is_dir() {
                true => Step::Empty(c),
                false => Step::Null(c),
            });
        }
        // SAFETY: no arguments; these cannot fail.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        Ok(Mounts {
            uid_map: format!("{uid} {uid} 1").into_bytes(),
            gid_map: format!("{gid} {gid} 1").into_bytes(),
            steps,
        })
    }

    /// Enters a new user and mount namespace and makes the mounts. For the
    /// child between fork and exec: system calls only, errors as errno.
    pub fn enter(&self) -> io::Result<()> {
        // SAFETY: flags only.
        if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // The same user and group inside as outside: files keep their owner.
        // `setgroups` is absent on kernels older than 3.19; nothing to deny.
        match write_proc(c"/proc/self/setgroups", b"deny") {
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
            other => other?,
        }
        write_proc(c"/proc/self/uid_map", &self.uid_map)?;
        write_proc(c"/proc/self/gid_map", &self.gid_map)?;
        // Nothing done here may reach the parent's view.
        mount(None, c"/", None, libc::MS_REC | libc::MS_SLAVE, None)?;
        for step in &self.steps {
            match step {
                Step::Empty(path) => mount(
                    Some(c"wamcp-hidden"),
                    path,
                    Some(c"tmpfs"),
                    libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    Some(c"size=4k,mode=0500"),
                )?,
                Step::Null(path) => mount(Some(c"/dev/null"), path, None, libc::MS_BIND, None)?,
                Step::ReadOnly(path, kept) => {
                    mount(Some(path), path, None, libc::MS_BIND | libc::MS_REC, None)?;
                    mount(
                        None,
                        path,
                        None,
                        libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | kept,
                        None,
                    )?;
                }
            }
        }
        Ok(())
    }
}

/// Whether this machine lets an unprivileged process make the namespace
/// and mount in it, tried once in a forked child (user namespaces can be
/// switched off, or limited by AppArmor or a container's seccomp profile).
pub fn probe() -> Result<(), String> {
    static RESULT: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    RESULT
        .get_or_init(|| {
            let mounts = Mounts::new(&[Path::new("/")], &[Path::new("/")])
                .map_err(|e| format!("the probe could not be prepared: {e}"))?;
            // SAFETY: the child only makes system calls on memory prepared
            // before the fork, then leaves with `_exit`.
            match unsafe { libc::fork() } {
                -1 => Err(format!("fork failed: {}", io::Error::last_os_error())),
                0 => {
                    let code = match mounts.enter() {
                        Ok(()) => 0,
                        Err(e) => e.raw_os_error().unwrap_or(255).clamp(1, 255),
                    };
                    // SAFETY: leaves the forked child without running
                    // anything of the parent's.
                    unsafe { libc::_exit(code) }
                }
                child => waited(child),
            }
        })
        .clone()
}

fn waited(child: libc::pid_t) -> Result<(), String> {
    let mut status = 0;
    // SAFETY: waits for the child forked above; `status` is writable.
    let waited = unsafe { libc::waitpid(child, &mut status, 0) };
    if waited != child || !libc::WIFEXITED(status) {
        return Err("the probe child did not finish".into());
    }
    match libc::WEXITSTATUS(status) {
        0 => Ok(()),
        errno => Err(format!(
            "this system does not let wamcp make a private mount namespace ({}); user namespaces may be \
             off (kernel.unprivileged_userns_clone, user.max_user_namespaces) or restricted by AppArmor",
            io::Error::from_raw_os_error(errno)
        )),
    }
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path holds a NUL"))
}

/// The flags of the mount `path` is on that a read-only remount must keep.
fn kept_flags(path: &Path) -> io::Result<libc::c_ulong> {
    let c = c_path(path)?;
    // SAFETY: `statvfs` is plain integers, for which all zeroes is valid.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `st` a writable `statvfs`.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let pairs = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ];
    Ok(pairs
        .iter()
        .filter(|(st_flag, _)| st.f_flag & st_flag != 0)
        .fold(0, |flags, (_, ms)| flags | ms))
}

fn mount(
    source: Option<&std::ffi::CStr>,
    target: &std::ffi::CStr,
    kind: Option<&std::ffi::CStr>,
    flags: libc::c_ulong,
    data: Option<&std::ffi::CStr>,
) -> io::Result<()> {
    let ptr = |c: Option<&std::ffi::CStr>| c.map_or(std::ptr::null(), |c| c.as_ptr());
    // SAFETY: every pointer is null or a NUL-terminated string that
    // outlives the call.
    let done = unsafe {
        libc::mount(
            ptr(source),
            target.as_ptr(),
            ptr(kind),
            flags,
            ptr(data).cast(),
        )
    };
    match done {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

fn write_proc(path: &std::ffi::CStr, bytes: &[u8]) -> io::Result<()> {
    // SAFETY: `path` is NUL-terminated; the descriptor is closed below.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `bytes` is readable for its length; `fd` is open.
    let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    let error = io::Error::last_os_error();
    // SAFETY: closes the descriptor opened above.
    unsafe { libc::close(fd) };
    match written == bytes.len() as isize {
        true => Ok(()),
        false => Err(error),
    }
}
