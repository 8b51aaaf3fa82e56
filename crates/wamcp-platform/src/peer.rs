//! Which process is at the other end of a loopback TCP connection, and
//! whether it is a command: one this process started, or (on Linux) any
//! process carrying the marks of a confined wamcp command.
//!
//! wamcp's HTTP listener uses it to turn away its own commands: a script a
//! command runs (an install hook, a build script) must never become a
//! second client of the server that runs it, where it could answer its own
//! approval questions. The kernel knows the answer without trusting the
//! peer: on Linux the socket's inode in `/proc/net/tcp` and the process
//! whose descriptor table holds it; on Windows the TCP table's owning
//! process.

use std::net::SocketAddr;

/// The command that holds the client end of the connection from `client`
/// to `server` (both as the server's socket sees them), or `None` when no
/// command does or the system cannot say. A command is a descendant of
/// this process, or on Linux any process with `no_new_privs` and at least
/// the seccomp filters every confined command gets: a command that
/// detached (`setsid`, a double fork) is no descendant any more, but it
/// cannot shed those. `Some(0)` when, while commands run, no process holds
/// the local client end at all (a socket in flight between processes).
pub fn command_at(server: SocketAddr, client: SocketAddr) -> Option<u32> {
    imp::command_at(server, client)
}

/// Whether a `/proc/PID/status` text shows `no_new_privs` and at least
/// `filters` seccomp filters.
pub fn carries_marks(status: &str, filters: usize) -> bool {
    filters > 0
        && status_field(status, "NoNewPrivs:") == Some(1)
        && status_field(status, "Seccomp:") == Some(2)
        && status_field(status, "Seccomp_filters:").is_some_and(|n| n >= filters)
}

/// A number field of a `/proc/PID/status` text.
fn status_field(status: &str, name: &str) -> Option<usize> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
}

/// The socket inode of the row whose local end is `local` and remote end
/// `remote` in a `/proc/net/tcp` or `/proc/net/tcp6` table. Addresses are
/// the kernel's native-endian hex words; an IPv4 peer of a dual-stack
/// socket appears as its IPv4-mapped IPv6 form.
pub fn inode_in_table(table: &str, local: SocketAddr, remote: SocketAddr) -> Option<u64> {
    table.lines().skip(1).find_map(|row| {
        let fields: Vec<&str> = row.split_whitespace().collect();
        let (at, to, inode) = (fields.get(1)?, fields.get(2)?, fields.get(9)?);
        (same(parse_endpoint(at)?, local) && same(parse_endpoint(to)?, remote))
            .then(|| inode.parse().ok())
            .flatten()
    })
}

fn same(a: SocketAddr, b: SocketAddr) -> bool {
    a.port() == b.port() && a.ip().to_canonical() == b.ip().to_canonical()
}

/// `0100007F:1F90` or a 32-digit IPv6 form, then the port in hex.
fn parse_endpoint(text: &str) -> Option<SocketAddr> {
    let (address, port) = text.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |hex: &str| u32::from_str_radix(hex, 16).ok().map(u32::to_ne_bytes);
    let ip: std::net::IpAddr = match address.len() {
        8 => std::net::Ipv4Addr::from(word(address)?).into(),
        32 => {
            let mut bytes = [0u8; 16];
            for (i, chunk) in bytes.chunks_mut(4).enumerate() {
                chunk.copy_from_slice(&word(address.get(i * 8..i * 8 + 8)?)?);
            }
            std::net::Ipv6Addr::from(bytes).into()
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

#[cfg(target_os = "linux")]
mod imp {
    use std::collections::HashMap;
    use std::net::SocketAddr;
    use std::path::Path;
    use std::time::Duration;

    /// A read of `/proc` that failed for want of descriptors or memory:
    /// the lookup cannot say who holds the socket, which is not "nobody".
    /// A server with a thousand connections open under a 1,024-descriptor
    /// limit meets it as a matter of course.
    struct Exhausted;

    /// How often, and how far apart, a lookup that ran out of descriptors
    /// is tried again: connections that end give theirs back.
    const ATTEMPTS: u32 = 100;
    const PAUSE: Duration = Duration::from_millis(20);

    pub fn command_at(server: SocketAddr, client: SocketAddr) -> Option<u32> {
        for _ in 0..ATTEMPTS {
            match lookup(server, client) {
                Ok(verdict) => return verdict,
                Err(Exhausted) => std::thread::sleep(PAUSE),
            }
        }
        // Still nothing to read with: the holder stays unknown, and an
        // unknown holder is refused, never trusted.
        Some(0)
    }

    fn lookup(server: SocketAddr, client: SocketAddr) -> Result<Option<u32>, Exhausted> {
        // With no command alive there is nothing to look up: the TCP table
        // grows with every connection, so it is read only when needed.
        let commands = commands()?;
        if commands.is_empty() {
            return Ok(None);
        }
        // The client's socket: its local end is the client's address.
        let mut inode = None;
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            let Some(text) = read(std::fs::read_to_string(table))? else {
                continue;
            };
            inode = super::inode_in_table(&text, client, server);
            if inode.is_some() {
                break;
            }
        }
        let Some(inode) = inode else {
            return Ok(None);
        };
        let wanted = format!("socket:[{inode}]");
        for &pid in &commands {
            if holds(pid, &wanted)? {
                return Ok(Some(pid));
            }
        }
        // A local client end that no process this one can read holds is
        // a socket in flight (passed over a Unix socket, say) or hidden:
        // while commands run, that is refused, not trusted. Its "holder"
        // is reported as unknown (0).
        Ok((!held_by_anyone(&wanted)?).then_some(0))
    }

    /// What a read gave: `None` when the thing is gone or not ours to read
    /// (a process that ended, another user's), `Exhausted` when this
    /// process had nothing left to read it with.
    fn read<T>(result: std::io::Result<T>) -> Result<Option<T>, Exhausted> {
        match result {
            Ok(value) => Ok(Some(value)),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EMFILE | libc::ENFILE | libc::ENOMEM)
                ) =>
            {
                Err(Exhausted)
            }
            Err(_) => Ok(None),
        }
    }

    /// The process ids in `/proc`.
    fn pids() -> Result<Vec<u32>, Exhausted> {
        let Some(entries) = read(std::fs::read_dir("/proc"))? else {
            return Err(Exhausted);
        };
        Ok(entries
            .flatten()
            .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
            .collect())
    }

    /// Whether any process's descriptor table holds `socket`.
    fn held_by_anyone(socket: &str) -> Result<bool, Exhausted> {
        for pid in pids()? {
            if holds(pid, socket)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Every descendant of this process and every marked process, from one
    /// pass over `/proc`. Marks count only when this process carries none
    /// itself: a wamcp serving inside another's command would take every
    /// neighbour for a command.
    fn commands() -> Result<Vec<u32>, Exhausted> {
        let me = std::process::id();
        let filters = crate::confine::command_filter_count();
        let status_of = |pid: u32| read(std::fs::read_to_string(format!("/proc/{pid}/status")));
        let marks_count = !status_of(me)?.is_some_and(|s| super::carries_marks(&s, filters));
        let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
        let mut found = Vec::new();
        for pid in pids()? {
            // A process that ended since the listing is no command now.
            let Some(status) = status_of(pid)? else {
                continue;
            };
            if let Some(parent) = super::status_field(&status, "PPid:") {
                children.entry(parent as u32).or_default().push(pid);
            }
            if marks_count && pid != me && super::carries_marks(&status, filters) {
                found.push(pid);
            }
        }
        let mut next = vec![me];
        while let Some(pid) = next.pop() {
            for &child in children.get(&pid).map_or(&[][..], Vec::as_slice) {
                if !found.contains(&child) {
                    found.push(child);
                }
                next.push(child);
            }
        }
        found.sort_unstable();
        found.dedup();
        Ok(found)
    }

    /// Whether `pid` holds `socket`. A process whose main thread has
    /// exited shows an empty `fd` folder while its other threads still
    /// hold every descriptor: then each thread's table is read.
    fn holds(pid: u32, socket: &str) -> Result<bool, Exhausted> {
        let process = std::path::PathBuf::from(format!("/proc/{pid}"));
        if let Some(found) = in_table(&process.join("fd"), socket)? {
            return Ok(found);
        }
        let Some(tasks) = read(std::fs::read_dir(process.join("task")))? else {
            return Ok(false);
        };
        for task in tasks.flatten() {
            if in_table(&task.path().join("fd"), socket)? == Some(true) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether one descriptor table holds `socket`; `None` when the table
    /// is empty or cannot be read.
    fn in_table(dir: &Path, socket: &str) -> Result<Option<bool>, Exhausted> {
        let Some(entries) = read(std::fs::read_dir(dir))? else {
            return Ok(None);
        };
        let mut any = false;
        for fd in entries.flatten() {
            any = true;
            if std::fs::read_link(fd.path()).is_ok_and(|t| t.as_os_str() == socket) {
                return Ok(Some(true));
            }
        }
        Ok(any.then_some(false))
    }
}

#[cfg(windows)]
mod imp {
    use std::net::SocketAddr;
    use windows_sys::Win32::NetworkManagement::IpHelper::{
        GetExtendedTcpTable, MIB_TCP6ROW_OWNER_PID, MIB_TCPROW_OWNER_PID,
        TCP_TABLE_OWNER_PID_CONNECTIONS,
    };

    /// The address families, as Winsock numbers them.
    const AF_INET: u32 = 2;
    const AF_INET6: u32 = 23;

    pub fn command_at(server: SocketAddr, client: SocketAddr) -> Option<u32> {
        // Wine finds the row but names no owner (0): nothing to judge.
        let pid = owner(server, client).filter(|&pid| pid != 0)?;
        let me = std::process::id();
        crate::process::ancestors(pid, 64)
            .contains(&me)
            .then_some(pid)
    }

    /// The process owning the client's end, from the TCP table of its
    /// address family (an IPv4-mapped peer is looked up as IPv4).
    pub(super) fn owner(server: SocketAddr, client: SocketAddr) -> Option<u32> {
        let (server_ip, client_ip) = (server.ip().to_canonical(), client.ip().to_canonical());
        let port = |p: u32| u16::from_be(p as u16);
        match (server_ip, client_ip) {
            (std::net::IpAddr::V4(s), std::net::IpAddr::V4(c)) => {
                table::<MIB_TCPROW_OWNER_PID>(AF_INET)?
                    .iter()
                    .find(|row| {
                        row.dwLocalAddr.to_ne_bytes() == c.octets()
                            && port(row.dwLocalPort) == client.port()
                            && row.dwRemoteAddr.to_ne_bytes() == s.octets()
                            && port(row.dwRemotePort) == server.port()
                    })
                    .map(|row| row.dwOwningPid)
            }
            (std::net::IpAddr::V6(s), std::net::IpAddr::V6(c)) => {
                table::<MIB_TCP6ROW_OWNER_PID>(AF_INET6)?
                    .iter()
                    .find(|row| {
                        row.ucLocalAddr == c.octets()
                            && port(row.dwLocalPort) == client.port()
                            && row.ucRemoteAddr == s.octets()
                            && port(row.dwRemotePort) == server.port()
                    })
                    .map(|row| row.dwOwningPid)
            }
            _ => None,
        }
    }

    /// The rows of one family's table: a count, then the rows.
    fn table<Row: Copy>(family: u32) -> Option<Vec<Row>> {
        let mut size = 0u32;
        for _ in 0..4 {
            // u32 words keep the buffer aligned for the rows.
            let mut buffer = vec![0u32; (size as usize).div_ceil(4).max(1)];
            // SAFETY: the buffer holds `size` bytes; the call writes at most
            // that many and says how many it needs when it is too small.
            let status = unsafe {
                GetExtendedTcpTable(
                    buffer.as_mut_ptr().cast(),
                    &mut size,
                    0,
                    family,
                    TCP_TABLE_OWNER_PID_CONNECTIONS,
                    0,
                )
            };
            if status == 0 {
                let count = buffer[0] as usize;
                let rows = buffer.as_ptr().wrapping_add(1).cast::<Row>();
                let room = (buffer.len() * 4 - 4) / std::mem::size_of::<Row>();
                // SAFETY: the table is a count followed by that many rows,
                // within the buffer the call filled.
                return Some(
                    (0..count.min(room))
                        .map(|i| unsafe { rows.add(i).read_unaligned() })
                        .collect(),
                );
            }
            // ERROR_INSUFFICIENT_BUFFER: `size` now says how much; retry.
            if status != 122 {
                return None;
            }
        }
        None
    }
}

#[cfg(not(any(target_os = "linux", windows)))]
mod imp {
    pub fn command_at(_: std::net::SocketAddr, _: std::net::SocketAddr) -> Option<u32> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_found_by_both_ends_in_either_family() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
           0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 111 1 0\n\
           1: 0100007F:A2B4 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 222 1 0\n\
           2: 0100007F:1F90 0100007F:A2B4 01 00000000:00000000 00:00000000 00000000  1000        0 333 1 0\n";
        let server: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let client: SocketAddr = "127.0.0.1:41652".parse().unwrap();
        if cfg!(target_endian = "little") {
            assert_eq!(inode_in_table(table, client, server), Some(222));
            assert_eq!(inode_in_table(table, server, client), Some(333));
            let elsewhere: SocketAddr = "127.0.0.2:41652".parse().unwrap();
            assert_eq!(inode_in_table(table, elsewhere, server), None);
        }
        let v6 = "  sl  local_address                         remote_address                        st\n\
           0: 00000000000000000000000001000000:A2B4 00000000000000000000000001000000:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 444 1 0\n\
           1: 0000000000000000FFFF00000100007F:A2B5 0000000000000000FFFF00000100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 555 1 0\n";
        if cfg!(target_endian = "little") {
            let client6: SocketAddr = "[::1]:41652".parse().unwrap();
            let server6: SocketAddr = "[::1]:8080".parse().unwrap();
            assert_eq!(inode_in_table(v6, client6, server6), Some(444));
            // A dual-stack socket shows an IPv4 peer as ::ffff:127.0.0.1.
            let mapped: SocketAddr = "127.0.0.1:41653".parse().unwrap();
            assert_eq!(inode_in_table(v6, mapped, server), Some(555));
        }
        for bad in ["", "header only\n", "h\n 0: zz:zz yy:yy 01 0 0 0 0 0 x\n"] {
            assert_eq!(inode_in_table(bad, client, server), None, "{bad}");
        }
    }

    #[test]
    fn marks_are_no_new_privs_and_enough_filters() {
        let status = |nnp, mode, filters| {
            format!("Name:\tx\nNoNewPrivs:\t{nnp}\nSeccomp:\t{mode}\nSeccomp_filters:\t{filters}\n")
        };
        assert!(carries_marks(&status(1, 2, 4), 4));
        assert!(carries_marks(&status(1, 2, 9), 4));
        for (nnp, mode, filters) in [(0, 2, 4), (1, 0, 0), (1, 2, 3), (1, 1, 4)] {
            assert!(
                !carries_marks(&status(nnp, mode, filters), 4),
                "{nnp} {mode} {filters}"
            );
        }
        // No marks known (no confinement here): nothing is marked.
        assert!(!carries_marks(&status(1, 2, 4), 0));
        assert!(!carries_marks("", 4));
    }

    /// This process's own connection is found, and it is no descendant of
    /// itself; a child holding the client end is one.
    #[test]
    fn a_connection_from_this_process_is_not_its_own_descendant() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let _client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (_accepted, peer) = listener.accept().unwrap();
        let server = listener.local_addr().unwrap();
        assert_eq!(command_at(server, peer), None);
    }

    /// The TCP table has the row of this process's client end and names
    /// this process as its owner; Wine finds the row but says 0, which the
    /// check takes as "cannot say".
    #[cfg(windows)]
    #[test]
    fn the_tcp_table_names_the_owner() {
        for address in ["127.0.0.1:0", "[::1]:0"] {
            let listener = std::net::TcpListener::bind(address).unwrap();
            let server = listener.local_addr().unwrap();
            let _client = std::net::TcpStream::connect(server).unwrap();
            let (_accepted, peer) = listener.accept().unwrap();
            let owner = imp::owner(server, peer);
            assert!(
                owner == Some(std::process::id()) || owner == Some(0),
                "{address}: {owner:?}"
            );
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_child_holding_the_client_end_is_named() {
        use std::os::fd::AsRawFd;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let server = listener.local_addr().unwrap();
        let client = std::net::TcpStream::connect(server).unwrap();
        let (_accepted, peer) = listener.accept().unwrap();
        // The child inherits the client socket as its descriptor 3.
        let fd = client.as_raw_fd();
        let mut child = std::process::Command::new("sleep");
        child.arg("30");
        // SAFETY: dup2 is async-signal-safe; nothing else runs in the child.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut child, move || {
                if libc::dup2(fd, 3) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = child.spawn().unwrap();
        drop(client);
        let found = command_at(server, peer);
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(found, Some(child.id()));
    }

    /// Set in the copy of this test binary that runs the descriptor test
    /// alone: it lowers its own limit, which must not touch other tests.
    #[cfg(target_os = "linux")]
    const ALONE: &str = "WAMCP_PEER_TEST_ALONE";

    /// Running out of descriptors never reads as "nobody holds the
    /// socket": the lookup waits for descriptors and answers as usual
    /// once it has them, and refuses as unknown when none come.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_lookup_out_of_descriptors_waits_then_refuses() {
        let name = "peer::tests::a_lookup_out_of_descriptors_waits_then_refuses";
        if std::env::var_os(ALONE).is_none() {
            let alone = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", name, "--nocapture"])
                .env(ALONE, "1")
                .output()
                .unwrap();
            let said = String::from_utf8_lossy(&alone.stdout);
            assert!(
                alone.status.success() && said.contains("1 passed"),
                "{said}"
            );
            return;
        }
        let low = libc::rlimit {
            rlim_cur: 64,
            rlim_max: 1024,
        };
        // SAFETY: the limit is a plain struct; this process runs this test alone.
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &low) }, 0);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let server = listener.local_addr().unwrap();
        let _client = std::net::TcpStream::connect(server).unwrap();
        let (_accepted, peer) = listener.accept().unwrap();
        // A command runs (a child), so the holder must be looked up.
        let mut command = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let fill =
            || std::iter::from_fn(|| std::fs::File::open("/dev/null").ok()).collect::<Vec<_>>();

        let filler = fill();
        let lookup = std::thread::spawn(move || command_at(server, peer));
        std::thread::sleep(std::time::Duration::from_millis(300));
        drop(filler);
        let after_a_wait = lookup.join().unwrap();

        let filler = fill();
        let never = command_at(server, peer);
        drop(filler);
        command.kill().unwrap();
        command.wait().unwrap();
        // This process holds the client end and is no command of its own.
        assert_eq!(after_a_wait, None);
        assert_eq!(never, Some(0));
    }
}
