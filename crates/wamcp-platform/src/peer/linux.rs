//! The Linux lookup: the client end's inode in `/proc/net/tcp`, the
//! processes whose descriptor tables hold it, and whether any of them is
//! a command. Every read of `/proc` says whether it saw, saw nothing (the
//! process ended, or it is not ours to read), or could not look: only the
//! first two may let a connection through.

use std::collections::HashMap;
use std::io::ErrorKind;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

/// Why a lookup could not finish.
enum Blind {
    /// This process had no descriptors or memory left to read with: a
    /// server with a thousand connections under a 1,024-descriptor limit
    /// meets it as a matter of course, and it passes as connections end.
    Exhausted,
    /// `/proc` answered in a way that says nothing (no `/proc` at all, an
    /// I/O error): trying again would not help.
    Unreadable,
}

/// How often, and how far apart, a lookup that ran out of descriptors is
/// tried again.
const ATTEMPTS: u32 = 100;
const PAUSE: Duration = Duration::from_millis(20);

/// How often the TCP tables are read, where the kernel cannot be asked
/// for the one socket, before a missing row counts: they are read in
/// pieces while connections come and go, and a row can slip between two.
const TABLE_READS: usize = 3;

/// How far up a holder's parents are followed to this process.
const MAX_ANCESTORS: usize = 64;

pub fn command_at(server: SocketAddr, client: SocketAddr) -> Option<u32> {
    for _ in 0..ATTEMPTS {
        match lookup(server, client) {
            Ok(verdict) => return verdict,
            Err(Blind::Exhausted) => std::thread::sleep(PAUSE),
            Err(Blind::Unreadable) => break,
        }
    }
    // A holder that cannot be told is refused, never trusted.
    Some(0)
}

fn lookup(server: SocketAddr, client: SocketAddr) -> Result<Option<u32>, Blind> {
    let me = std::process::id();
    let marks_count = marks_count(me)?;
    // With no command alive there is nothing to look up: the TCP table
    // grows with every connection, so it is read only when needed.
    if !commands_run(me, marks_count)? {
        return Ok(None);
    }
    // While commands run, a client end with no row (reset the moment its
    // request was sent) or held by no process this one can read (in
    // flight between processes, or hidden) is refused as unknown (0).
    let Some(inode) = client_inode(server, client)? else {
        return Ok(Some(0));
    };
    let holders = holders(&format!("socket:[{inode}]"))?;
    if holders.is_empty() {
        return Ok(Some(0));
    }
    // Each holder is judged as it is now, not by a list made earlier: a
    // command may hand the socket to a child it starts after that list.
    for pid in holders {
        if is_command(pid, me, marks_count)? {
            return Ok(Some(pid));
        }
    }
    Ok(None)
}

/// Sorts a failed read: gone or not ours (`Ok(None)`), out of resources,
/// or unreadable.
fn read<T>(result: std::io::Result<T>) -> Result<Option<T>, Blind> {
    let error = match result {
        Ok(value) => return Ok(Some(value)),
        Err(error) => error,
    };
    match error.raw_os_error() {
        Some(libc::EMFILE | libc::ENFILE | libc::ENOMEM) => Err(Blind::Exhausted),
        Some(libc::ENOENT | libc::ESRCH | libc::EACCES | libc::EPERM) => Ok(None),
        _ if error.kind() == ErrorKind::NotFound => Ok(None),
        _ => Err(Blind::Unreadable),
    }
}

/// What a process's `status` says, read as bytes: a command may name
/// itself with any bytes but a newline (which the kernel escapes), and a
/// name that is not UTF-8 must not make it unreadable.
struct Status(String);

impl Status {
    fn of(pid: u32) -> Result<Option<Status>, Blind> {
        let bytes = read(std::fs::read(format!("/proc/{pid}/status")))?;
        Ok(bytes.map(|b| Status(String::from_utf8_lossy(&b).into_owned())))
    }

    fn parent(&self) -> Option<u32> {
        super::status_field(&self.0, "PPid:").and_then(|p| u32::try_from(p).ok())
    }

    fn marked(&self) -> bool {
        super::carries_marks(&self.0, crate::confine::command_filter_count())
    }
}

/// Marks count only when this process carries none itself: a wamcp
/// serving inside another's command would take every neighbour for a
/// command.
fn marks_count(me: u32) -> Result<bool, Blind> {
    let status = Status::of(me)?.ok_or(Blind::Unreadable)?;
    Ok(!status.marked())
}

/// The process ids in `/proc`, or the entries of one descriptor table:
/// the names of a folder's entries, an entry that vanished while listed
/// left out.
fn names(dir: &Path) -> Result<Option<Vec<String>>, Blind> {
    let Some(entries) = read(std::fs::read_dir(dir))? else {
        return Ok(None);
    };
    let mut names = Vec::new();
    for entry in entries {
        if let Some(entry) = read(entry)? {
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    Ok(Some(names))
}

fn pids() -> Result<Vec<u32>, Blind> {
    let names = names(Path::new("/proc"))?.ok_or(Blind::Unreadable)?;
    Ok(names.iter().filter_map(|n| n.parse().ok()).collect())
}

/// Whether any descendant of this process or (where marks count) any
/// marked process is alive, from one pass over `/proc`.
fn commands_run(me: u32, marks_count: bool) -> Result<bool, Blind> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for pid in pids()? {
        // A process that ended since the listing is no command now.
        let Some(status) = Status::of(pid)? else {
            continue;
        };
        if marks_count && pid != me && status.marked() {
            return Ok(true);
        }
        if let Some(parent) = status.parent() {
            children.entry(parent).or_default().push(pid);
        }
    }
    Ok(children.get(&me).is_some_and(|c| !c.is_empty()))
}

/// Whether `pid` is a command now: marked, or this process among its
/// ancestors.
fn is_command(pid: u32, me: u32, marks_count: bool) -> Result<bool, Blind> {
    let mut at = pid;
    for _ in 0..MAX_ANCESTORS {
        if at == me {
            return Ok(pid != me);
        }
        // A holder that ended holds nothing now; an ancestor that ended
        // left its child to init, which is no descendant of ours.
        let Some(status) = Status::of(at)? else {
            return Ok(false);
        };
        // Marks are inherited and cannot be shed: a marked ancestor's
        // descendants carry them too, so any marked level says so.
        if marks_count && status.marked() {
            return Ok(true);
        }
        match status.parent() {
            Some(parent) if parent != 0 => at = parent,
            _ => return Ok(false),
        }
    }
    Ok(false)
}

/// The inode of the client's end (the socket whose local end is the
/// client's address), asked of the kernel; where it cannot be asked, read
/// from the TCP tables, again when the row is not there.
fn client_inode(server: SocketAddr, client: SocketAddr) -> Result<Option<u64>, Blind> {
    match super::diag::inode(client, server) {
        Ok(super::diag::Found::Inode(inode)) => return Ok(Some(inode)),
        Ok(super::diag::Found::None) => return Ok(None),
        Err(libc::EMFILE | libc::ENFILE | libc::ENOMEM | libc::ENOBUFS) => {
            return Err(Blind::Exhausted);
        }
        Err(_) => {}
    }
    for _ in 0..TABLE_READS {
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            let Some(bytes) = read(std::fs::read(table))? else {
                continue;
            };
            let text = String::from_utf8_lossy(&bytes);
            if let Some(inode) = super::inode_in_table(&text, client, server) {
                return Ok(Some(inode));
            }
        }
    }
    Ok(None)
}

/// Every process whose descriptor table holds `socket`, from a fresh
/// listing of `/proc`.
fn holders(socket: &str) -> Result<Vec<u32>, Blind> {
    let mut found = Vec::new();
    for pid in pids()? {
        if holds(pid, socket)? {
            found.push(pid);
        }
    }
    Ok(found)
}

/// Whether `pid` holds `socket`. A process whose main thread has exited
/// shows an empty `fd` folder while its other threads still hold every
/// descriptor: then each thread's table is read.
fn holds(pid: u32, socket: &str) -> Result<bool, Blind> {
    let process = std::path::PathBuf::from(format!("/proc/{pid}"));
    if let Some(found) = in_table(&process.join("fd"), socket)? {
        return Ok(found);
    }
    let Some(tasks) = names(&process.join("task"))? else {
        return Ok(false);
    };
    for task in tasks {
        if in_table(&process.join("task").join(task).join("fd"), socket)? == Some(true) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether one descriptor table holds `socket`; `None` when the table is
/// empty or not ours to read.
fn in_table(dir: &Path, socket: &str) -> Result<Option<bool>, Blind> {
    let Some(fds) = names(dir)? else {
        return Ok(None);
    };
    for fd in &fds {
        // A descriptor closed since the listing holds nothing.
        let target = read(std::fs::read_link(dir.join(fd)))?;
        if target.is_some_and(|t| t.as_os_str() == socket) {
            return Ok(Some(true));
        }
    }
    Ok((!fds.is_empty()).then_some(false))
}
