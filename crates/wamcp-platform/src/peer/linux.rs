//! The Linux lookup: the client end's inode (asked of the kernel, or read
//! from `/proc/net/tcp` where it cannot be asked), the processes whose
//! descriptor tables hold it, and whether any of them is a command. Every read of `/proc` says whether it saw, saw nothing (the
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

/// How far up a holder's parents are followed to this process, and how
/// often the walk starts again when a parent ends under it.
const MAX_ANCESTORS: usize = 4096;
const WALKS: usize = 4;

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
    // A client end that is gone (reset the moment its request was sent)
    // or that no process holds any more (closed after sending) has left
    // no one to judge, so no one is trusted. The kernel says so exactly
    // and cheaply, so it is asked of every connection.
    let asked = asked_inode(server, client)?;
    if matches!(asked, Asked::Inode(0) | Asked::Gone) {
        return Ok(Some(0));
    }
    let marks_count = marks_count(me)?;
    let commands = commands(me, marks_count)?;
    // With no command alive there is nothing more to look up.
    if commands.is_none() {
        return Ok(None);
    }
    let inode = match asked {
        Asked::Inode(inode) => inode,
        _ => match table_inode(server, client)? {
            Some(inode) if inode != 0 => inode,
            _ => return Ok(Some(0)),
        },
    };
    // While commands run, a client end held by no process this one can
    // read (in flight between processes, or a command's table hidden) is
    // refused as unknown (0).
    let watched = commands.unwrap_or_default();
    let Some(holders) = holders(&format!("socket:[{inode}]"), &watched)? else {
        return Ok(Some(0));
    };
    if holders.is_empty() {
        return Ok(Some(0));
    }
    // Each holder is judged as it is now, not by the list made before: a
    // command may hand the socket to a child it starts after that list.
    for pid in holders {
        // This server is no client of its own: a connection it holds
        // the client end of was made for someone else.
        if pid == me {
            return Ok(Some(0));
        }
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

/// Every descendant of this process and (where marks count) every
/// marked process, from one pass over `/proc`; `None` when there is none
/// and no process started while the pass ran. A command that forks and
/// exits over and over can be gone from each pid by the time it is read,
/// with its next self not listed yet: a pass the kernel handed out pids
/// during cannot say "none".
fn commands(me: u32, marks_count: bool) -> Result<Option<Vec<u32>>, Blind> {
    let last_pid = || -> Result<Option<Vec<u8>>, Blind> {
        read(std::fs::read("/proc/sys/kernel/ns_last_pid"))
    };
    let before = last_pid()?;
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut found = Vec::new();
    for pid in pids()? {
        // A process that ended since the listing is no command now.
        let Some(status) = Status::of(pid)? else {
            continue;
        };
        if marks_count && pid != me && status.marked() {
            found.push(pid);
        }
        if let Some(parent) = status.parent() {
            children.entry(parent).or_default().push(pid);
        }
    }
    let mut next = vec![me];
    while let Some(pid) = next.pop() {
        for &child in children.get(&pid).map_or(&[][..], Vec::as_slice) {
            found.push(child);
            next.push(child);
        }
    }
    found.sort_unstable();
    found.dedup();
    let quiet = before.is_some() && before == last_pid()?;
    Ok((!found.is_empty() || !quiet).then_some(found))
}

/// Whether `pid` is a command now: marked, or this process among its
/// ancestors. An ancestor that ends while its line is walked hands its
/// children to a reaper (this server's supervisor, say), so the walk
/// starts again from `pid`.
fn is_command(pid: u32, me: u32, marks_count: bool) -> Result<bool, Blind> {
    for _ in 0..WALKS {
        match walk_up(pid, me, marks_count)? {
            Some(verdict) => return Ok(verdict),
            None => continue,
        }
    }
    // A line that keeps changing under the walk is not trusted.
    Ok(true)
}

/// One walk from `pid` up its parents: `None` when an ancestor ended
/// under it.
fn walk_up(pid: u32, me: u32, marks_count: bool) -> Result<Option<bool>, Blind> {
    let mut at = pid;
    for _ in 0..MAX_ANCESTORS {
        if at == me {
            return Ok(Some(pid != me));
        }
        let Some(status) = Status::of(at)? else {
            // A holder that ended holds nothing now.
            return Ok(if at == pid { Some(false) } else { None });
        };
        // Marks are inherited and cannot be shed: a marked ancestor's
        // descendants carry them too, so any marked level says so.
        if marks_count && status.marked() {
            return Ok(Some(true));
        }
        match status.parent() {
            Some(parent) if parent != 0 => at = parent,
            _ => return Ok(Some(false)),
        }
    }
    // Deeper than any real line of processes: not trusted.
    Ok(Some(true))
}

/// What the kernel said of the client's end (the socket whose local end
/// is the client's address).
enum Asked {
    Inode(u64),
    /// No such socket. The kernel gives the same answer when it has no
    /// TCP diagnostics at all, so the tables are read before this is said.
    Gone,
    /// Netlink was refused: the tables must be read.
    Unavailable,
}

fn asked_inode(server: SocketAddr, client: SocketAddr) -> Result<Asked, Blind> {
    match super::diag::inode(client, server) {
        Ok(super::diag::Found::Inode(inode)) => Ok(Asked::Inode(inode)),
        Ok(super::diag::Found::None) => Ok(match table_inode(server, client)? {
            Some(inode) => Asked::Inode(inode),
            None => Asked::Gone,
        }),
        Err(libc::EMFILE | libc::ENFILE | libc::ENOMEM | libc::ENOBUFS) => Err(Blind::Exhausted),
        Err(_) => Ok(Asked::Unavailable),
    }
}

/// The client's row in the TCP tables, read again when it is not there.
fn table_inode(server: SocketAddr, client: SocketAddr) -> Result<Option<u64>, Blind> {
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
/// listing of `/proc`; `None` when a `watched` process (a command) hides
/// its tables. A command's every thread is read: a thread can have a
/// table of its own.
fn holders(socket: &str, watched: &[u32]) -> Result<Option<Vec<u32>>, Blind> {
    let mut found = Vec::new();
    for pid in pids()? {
        let process = std::path::PathBuf::from(format!("/proc/{pid}"));
        let command = watched.binary_search(&pid).is_ok();
        if command && hidden(&process.join("fd")) {
            return Ok(None);
        }
        if holds(&process, socket, command)? {
            found.push(pid);
        }
    }
    Ok(Some(found))
}

/// Whether a descriptor table is there but may not be read (a process
/// that made itself undumpable).
fn hidden(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_err_and(|e| e.kind() == ErrorKind::PermissionDenied)
}

/// Whether the process at `process` holds `socket`. A process whose main
/// thread has exited shows an empty `fd` folder while its other threads
/// still hold every descriptor: then, or for `every_thread`, each
/// thread's table is read.
fn holds(process: &Path, socket: &str, every_thread: bool) -> Result<bool, Blind> {
    let main = in_table(&process.join("fd"), socket)?;
    if main == Some(true) || (main == Some(false) && !every_thread) {
        return Ok(main == Some(true));
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
