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
/// cannot shed those. `Some(0)` when the holder is unknown: on Linux,
/// while commands run, a client end that no readable process holds (a
/// socket in flight between processes) or that has no row any more (reset
/// after sending), and whenever `/proc` cannot be read to the end.
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
mod diag;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as imp;

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

    /// A connection to a listener on `address`, both ends this process's:
    /// the server's address, the client's as the server sees it, the
    /// client's socket and the server's.
    pub(super) struct Loopback {
        pub server: SocketAddr,
        pub peer: SocketAddr,
        // Held to keep the connection open; only Linux tests use them.
        #[cfg_attr(windows, allow(dead_code))]
        pub client: std::net::TcpStream,
        #[cfg_attr(windows, allow(dead_code))]
        pub accepted: std::net::TcpStream,
    }

    /// `None` when nothing can listen on `address` (no IPv6 here).
    pub(super) fn loopback(address: &str) -> Option<Loopback> {
        let listener = std::net::TcpListener::bind(address).ok()?;
        let server = listener.local_addr().unwrap();
        let client = std::net::TcpStream::connect(server).unwrap();
        let (accepted, peer) = listener.accept().unwrap();
        Some(Loopback {
            server,
            peer,
            client,
            accepted,
        })
    }

    /// This process's own connection is found, and it is no descendant of
    /// itself; a child holding the client end is one.
    #[cfg(windows)]
    #[test]
    fn a_connection_from_this_process_is_not_its_own_descendant() {
        let own = loopback("127.0.0.1:0").unwrap();
        assert_eq!(command_at(own.server, own.peer), None);
    }

    /// The TCP table has the row of this process's client end and names
    /// this process as its owner; Wine finds the row but says 0, which the
    /// check takes as "cannot say".
    #[cfg(windows)]
    #[test]
    fn the_tcp_table_names_the_owner() {
        for address in ["127.0.0.1:0", "[::1]:0"] {
            let own = loopback(address).unwrap();
            let owner = imp::owner(own.server, own.peer);
            assert!(
                owner == Some(std::process::id()) || owner == Some(0),
                "{address}: {owner:?}"
            );
        }
    }

    /// A loopback connection whose client end `program` (run with
    /// `args`) holds as its descriptor 3, this process's copy closed.
    #[cfg(target_os = "linux")]
    struct HeldByChild {
        server: SocketAddr,
        peer: SocketAddr,
        child: std::process::Child,
        _accepted: std::net::TcpStream,
    }

    #[cfg(target_os = "linux")]
    impl HeldByChild {
        fn new(program: &std::path::Path) -> HeldByChild {
            use std::os::fd::AsRawFd;
            let Loopback {
                server,
                peer,
                client,
                accepted,
            } = loopback("127.0.0.1:0").unwrap();
            let fd = client.as_raw_fd();
            let mut child = std::process::Command::new(program);
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
            let child = child.spawn().unwrap();
            HeldByChild {
                server,
                peer,
                child,
                _accepted: accepted,
            }
        }
    }

    #[cfg(target_os = "linux")]
    impl Drop for HeldByChild {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_child_holding_the_client_end_is_named() {
        let held = HeldByChild::new(std::path::Path::new("sleep"));
        assert_eq!(command_at(held.server, held.peer), Some(held.child.id()));
    }

    /// A server is no client of its own: while commands run, a client end
    /// this process holds is refused as unknown (one of its own
    /// connections made on a command's behalf would be let through).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_client_end_this_process_holds_is_unknown_while_commands_run() {
        let own = loopback("127.0.0.1:0").unwrap();
        let held = HeldByChild::new(std::path::Path::new("sleep"));
        assert_eq!(command_at(own.server, own.peer), Some(0));
        drop(held);
    }

    /// The kernel shows a process's name in its `status` as raw bytes: a
    /// command named with bytes that are not UTF-8 is still read.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_command_named_in_bytes_that_are_not_utf8_is_named() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let odd = dir.path().join(std::ffi::OsStr::from_bytes(b"\xff\xfe"));
        std::os::unix::fs::symlink("/bin/sleep", &odd).unwrap();
        let held = HeldByChild::new(&odd);
        let status = std::fs::read(format!("/proc/{}/status", held.child.id())).unwrap();
        assert!(status.starts_with(b"Name:\t\xff\xfe\n"), "{status:?}");
        assert_eq!(command_at(held.server, held.peer), Some(held.child.id()));
    }

    /// A client that sends and resets at once leaves no socket for its
    /// end (the kernel says there is none): it is refused as unknown, not
    /// let through, whether or not commands run.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_client_end_reset_after_sending_is_unknown() {
        use std::io::Write;
        let Loopback {
            server,
            peer,
            mut client,
            accepted: _accepted,
        } = loopback("127.0.0.1:0").unwrap();
        assert!(matches!(diag::inode(peer, server), Ok(diag::Found::Inode(n)) if n != 0));
        client.write_all(b"POST /mcp HTTP/1.1\r\n\r\n").unwrap();
        // Closing with a zero linger time resets the connection at once.
        let linger = libc::linger {
            l_onoff: 1,
            l_linger: 0,
        };
        // SAFETY: the option's value is a live `linger` of the size given.
        let set = unsafe {
            libc::setsockopt(
                std::os::fd::AsRawFd::as_raw_fd(&client),
                libc::SOL_SOCKET,
                libc::SO_LINGER,
                (&raw const linger).cast(),
                std::mem::size_of::<libc::linger>() as libc::socklen_t,
            )
        };
        assert_eq!(set, 0);
        drop(client);
        assert_eq!(diag::inode(peer, server), Ok(diag::Found::None));
        assert_eq!(command_at(server, peer), Some(0));
    }

    /// Set in the copy of this test binary that runs the descriptor test
    /// alone: it lowers its own limit, which must not touch other tests.
    #[cfg(target_os = "linux")]
    const ALONE: &str = "WAMCP_PEER_TEST_ALONE";

    /// Running out of descriptors never reads as "nobody holds the
    /// socket" nor as "no command runs": the lookup waits for descriptors
    /// and answers as usual once it has them, and refuses as unknown when
    /// none come.
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
            let why = String::from_utf8_lossy(&alone.stderr);
            // The copy ran the test; this run has nothing more to do.
            assert!(
                alone.status.success() && said.contains("1 passed"),
                "{said}\n{why}"
            );
            return;
        }
        let low = libc::rlimit {
            rlim_cur: 64,
            rlim_max: 1024,
        };
        // SAFETY: the limit is a plain struct; this process runs this test alone.
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &low) }, 0);
        let held = HeldByChild::new(std::path::Path::new("sleep"));
        let (server, peer) = (held.server, held.peer);
        let fill =
            || std::iter::from_fn(|| std::fs::File::open("/dev/null").ok()).collect::<Vec<_>>();

        let filler = fill();
        let lookup = std::thread::spawn(move || command_at(server, peer));
        // Short against the 2 s the lookup keeps trying: a loaded machine
        // may wake this thread late.
        std::thread::sleep(std::time::Duration::from_millis(100));
        drop(filler);
        let after_a_wait = lookup.join().unwrap();

        let filler = fill();
        let never = command_at(server, peer);
        drop(filler);
        assert_eq!(after_a_wait, Some(held.child.id()));
        assert_eq!(never, Some(0));
    }
}
