//! One TCP socket asked of the kernel by its four addresses, through the
//! socket-diagnostics netlink family (what `ss` uses). Unlike a read of
//! `/proc/net/tcp`, which comes in pieces while connections come and go
//! and can miss a row, the kernel looks the socket up in its own table
//! and answers for that one socket, or says there is none.

use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `SOCK_DIAG_BY_FAMILY`, the request and answer type.
const BY_FAMILY: u16 = 20;
/// `NLMSG_ERROR`: the answer is an error code (0 acknowledges).
const ERROR: u16 = 2;
/// `INET_DIAG_NOCOOKIE`: the socket is found by its addresses alone.
const NO_COOKIE: u32 = !0;
/// The request's number, which its answer repeats.
const SEQUENCE: u32 = 1;

/// `struct nlmsghdr`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Header {
    len: u32,
    kind: u16,
    flags: u16,
    seq: u32,
    pid: u32,
}

/// `struct inet_diag_sockid`: ports and addresses in network order.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct SocketId {
    source_port: u16,
    destination_port: u16,
    source: [u32; 4],
    destination: [u32; 4],
    interface: u32,
    cookie: [u32; 2],
}

/// `struct nlmsghdr` followed by `struct inet_diag_req_v2`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Request {
    header: Header,
    family: u8,
    protocol: u8,
    extensions: u8,
    raw_protocol: u8,
    states: u32,
    id: SocketId,
}

/// The start of `struct inet_diag_msg`, up to the inode.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Answer {
    family: u8,
    state: u8,
    timer: u8,
    retransmits: u8,
    id: SocketId,
    expires: u32,
    read_queue: u32,
    write_queue: u32,
    uid: u32,
    inode: u32,
}

/// The TCP states of a connected socket (`ESTABLISHED`, `FIN_WAIT1`,
/// `FIN_WAIT2`, `CLOSE_WAIT`, `LAST_ACK`, `CLOSING`). The kernel's exact
/// lookup falls back to a listening socket on the local address when no
/// connected one has the pair: that is not the client's end.
const CONNECTED: [u8; 6] = [1, 4, 5, 8, 9, 11];

/// What the kernel said of one socket.
#[derive(Debug, PartialEq, Eq)]
pub enum Found {
    /// The socket and its inode (0 for one no process holds any more).
    Inode(u64),
    /// No socket has these addresses.
    None,
}

/// The inode of the TCP socket whose local end is `local` and remote end
/// `remote`. An IPv4 pair is asked of the IPv4 table, then as IPv4-mapped
/// addresses of the IPv6 one (a dual-stack socket's view). `Err` carries
/// the errno of a system that cannot be asked (no netlink, out of
/// descriptors); the caller decides what that means.
pub fn inode(local: SocketAddr, remote: SocketAddr) -> Result<Found, i32> {
    let (local_ip, remote_ip) = (local.ip().to_canonical(), remote.ip().to_canonical());
    let socket = open()?;
    let asks: Vec<(u8, [u32; 4], [u32; 4])> = match (local_ip, remote_ip) {
        (IpAddr::V4(l), IpAddr::V4(r)) => vec![
            (libc::AF_INET as u8, words(&l.octets()), words(&r.octets())),
            (
                libc::AF_INET6 as u8,
                words(&l.to_ipv6_mapped().octets()),
                words(&r.to_ipv6_mapped().octets()),
            ),
        ],
        (l, r) => vec![(libc::AF_INET6 as u8, words(&v6(l)), words(&v6(r)))],
    };
    for (family, source, destination) in asks {
        let id = SocketId {
            source_port: local.port().to_be(),
            destination_port: remote.port().to_be(),
            source,
            destination,
            interface: 0,
            cookie: [NO_COOKIE, NO_COOKIE],
        };
        if let Found::Inode(inode) = ask(&socket, family, id)? {
            return Ok(Found::Inode(inode));
        }
    }
    Ok(Found::None)
}

fn v6(ip: IpAddr) -> [u8; 16] {
    match ip {
        IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
        IpAddr::V6(v6) => v6.octets(),
    }
}

/// Address bytes as the kernel's `__be32` words: the bytes in order.
fn words(bytes: &[u8]) -> [u32; 4] {
    let mut out = [0u32; 4];
    for (word, chunk) in out.iter_mut().zip(bytes.chunks(4)) {
        *word = u32::from_ne_bytes(chunk.try_into().unwrap_or([0; 4]));
    }
    out
}

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

fn open() -> Result<OwnedFd, i32> {
    // SAFETY: plain socket creation; the descriptor is owned at once.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            libc::NETLINK_SOCK_DIAG,
        )
    };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: `fd` was just created and nothing else owns it.
    let socket = unsafe { OwnedFd::from_raw_fd(fd) };
    // Connected to the kernel, the socket takes answers from nothing else.
    // SAFETY: the kernel's netlink address is all zeroes but its family;
    // the length given is its size.
    let connected = unsafe {
        let mut kernel: libc::sockaddr_nl = std::mem::zeroed();
        kernel.nl_family = libc::AF_NETLINK as u16;
        libc::connect(
            socket.as_raw_fd(),
            (&raw const kernel).cast(),
            std::mem::size_of::<libc::sockaddr_nl>() as u32,
        )
    };
    if connected < 0 {
        return Err(errno());
    }
    Ok(socket)
}

/// One exact request (not a dump) and its one answer.
fn ask(socket: &OwnedFd, family: u8, id: SocketId) -> Result<Found, i32> {
    let request = Request {
        header: Header {
            len: std::mem::size_of::<Request>() as u32,
            kind: BY_FAMILY,
            flags: libc::NLM_F_REQUEST as u16,
            seq: SEQUENCE,
            pid: 0,
        },
        family,
        protocol: libc::IPPROTO_TCP as u8,
        extensions: 0,
        raw_protocol: 0,
        states: !0,
        id,
    };
    // SAFETY: the request is a plain `repr(C)` value of the length given,
    // sent on a socket connected to the kernel.
    let sent = unsafe {
        libc::send(
            socket.as_raw_fd(),
            (&raw const request).cast(),
            std::mem::size_of::<Request>(),
            0,
        )
    };
    if sent < 0 {
        return Err(errno());
    }
    // Byte-aligned is enough: `read` copies every value out.
    let mut buffer = [0u8; 8192];
    // SAFETY: the buffer is writable for its whole size.
    let got = unsafe {
        libc::recv(
            socket.as_raw_fd(),
            buffer.as_mut_ptr().cast(),
            std::mem::size_of_val(&buffer),
            0,
        )
    };
    if got < 0 {
        return Err(errno());
    }
    parse(&buffer[..got as usize], &id)
}

/// Reads a plain `repr(C)` value from the start of `bytes`.
fn read<T: Copy + Default>(bytes: &[u8]) -> Option<T> {
    let size = std::mem::size_of::<T>();
    let bytes = bytes.get(..size)?;
    let mut value = T::default();
    // SAFETY: `value` is a plain `repr(C)` integer struct of `size` bytes,
    // valid for any bit pattern; the source holds `size` bytes.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), (&raw mut value).cast(), size) };
    Some(value)
}

/// The answer to an exact request for `asked`: the socket's message, or
/// an error message whose code says there is no such socket (`ENOENT`) or
/// why the kernel would not say. A socket other than the one asked for,
/// or one no longer connected, is no answer: there is no such socket.
fn parse(answer: &[u8], asked: &SocketId) -> Result<Found, i32> {
    let header: Header = read(answer).ok_or(libc::EIO)?;
    let body = answer
        .get(std::mem::size_of::<Header>()..)
        .ok_or(libc::EIO)?;
    if header.seq != SEQUENCE {
        return Err(libc::EIO);
    }
    match header.kind {
        BY_FAMILY => {
            let message: Answer = read(body).ok_or(libc::EIO)?;
            let id = message.id;
            let same = id.source_port == asked.source_port
                && id.destination_port == asked.destination_port
                && id.source == asked.source
                && id.destination == asked.destination;
            if same && CONNECTED.contains(&message.state) {
                Ok(Found::Inode(u64::from(message.inode)))
            } else {
                Ok(Found::None)
            }
        }
        ERROR => {
            let code: i32 = read(body).ok_or(libc::EIO)?;
            match -code {
                libc::ENOENT => Ok(Found::None),
                0 => Err(libc::EIO),
                errno => Err(errno),
            }
        }
        _ => Err(libc::EIO),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both ends of a live connection are found, and they are two
    /// different sockets; a pair nobody holds is not.
    use crate::peer::tests::loopback;

    /// Says loudly that a case could not run here; under
    /// `WAMCP_TEST_STRICT=1` that is a failure.
    fn skipped(why: &str) {
        eprintln!("SKIPPED: {why}");
        assert!(
            std::env::var("WAMCP_TEST_STRICT").as_deref() != Ok("1"),
            "{why}"
        );
    }

    #[test]
    fn a_live_connection_is_found_by_its_addresses() {
        for address in ["127.0.0.1:0", "[::1]:0"] {
            let Some(connection) = loopback(address) else {
                skipped(&format!("nothing can listen on {address}"));
                continue;
            };
            let (server, peer, client) = (connection.server, connection.peer, &connection.client);
            let Found::Inode(client_end) = inode(peer, server).unwrap() else {
                panic!("{address}: the client end was not found");
            };
            let Found::Inode(server_end) = inode(server, peer).unwrap() else {
                panic!("{address}: the server end was not found");
            };
            assert!(client_end != 0 && server_end != 0 && client_end != server_end);
            let own = std::fs::read_link(format!("/proc/self/fd/{}", client.as_raw_fd())).unwrap();
            assert_eq!(own.to_str().unwrap(), format!("socket:[{client_end}]"));
            let nobody = SocketAddr::new(peer.ip(), 1);
            assert_eq!(inode(nobody, server), Ok(Found::None));
        }
    }

    /// A dual-stack listener sees an IPv4 client as `::ffff:127.0.0.1`;
    /// the client's own socket is IPv4 and is found all the same.
    #[test]
    fn an_ipv4_client_of_a_dual_stack_listener_is_found() {
        let Ok(listener) = std::net::TcpListener::bind("[::]:0") else {
            return skipped("no dual-stack listener on [::]");
        };
        let port = listener.local_addr().unwrap().port();
        let _client = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        let (accepted, peer) = listener.accept().unwrap();
        let server = accepted.local_addr().unwrap();
        assert!(matches!(peer.ip(), IpAddr::V6(_)), "{peer}");
        assert!(matches!(inode(peer, server), Ok(Found::Inode(n)) if n != 0));
    }

    /// A raw answer: a header of `kind` with the request's number, then
    /// `body`.
    fn answer(kind: u16, body: &[u8]) -> Vec<u8> {
        let mut bytes = vec![0u8; std::mem::size_of::<Header>()];
        bytes[4..6].copy_from_slice(&kind.to_ne_bytes());
        bytes[8..12].copy_from_slice(&SEQUENCE.to_ne_bytes());
        bytes.extend_from_slice(body);
        bytes
    }

    /// The bytes of a socket's message for `id` in `state`.
    fn message(id: SocketId, state: u8, inode: u32) -> Vec<u8> {
        let message = Answer {
            family: libc::AF_INET as u8,
            state,
            id,
            inode,
            ..Answer::default()
        };
        let size = std::mem::size_of::<Answer>();
        let mut bytes = vec![0u8; size];
        // SAFETY: `Answer` is a plain `repr(C)` integer struct of `size` bytes.
        unsafe {
            std::ptr::copy_nonoverlapping((&raw const message).cast(), bytes.as_mut_ptr(), size)
        };
        bytes
    }

    fn asked() -> SocketId {
        SocketId {
            source_port: 40000u16.to_be(),
            destination_port: 8765u16.to_be(),
            source: words(&[127, 0, 0, 1]),
            destination: words(&[127, 0, 0, 1]),
            interface: 0,
            cookie: [NO_COOKIE, NO_COOKIE],
        }
    }

    /// Only the connected socket asked for is an answer: the listener the
    /// kernel falls back to when the client's end is gone (reset after
    /// sending, with a listener on its port), a socket of other addresses
    /// and one in TIME_WAIT are not.
    #[test]
    fn only_the_connected_socket_asked_for_counts() {
        let id = asked();
        let found =
            |state, id, inode| parse(&answer(BY_FAMILY, &message(id, state, inode)), &asked());
        assert_eq!(found(1, id, 77), Ok(Found::Inode(77)));
        assert_eq!(found(8, id, 77), Ok(Found::Inode(77)));
        let listener = SocketId {
            destination_port: 0,
            destination: [0; 4],
            ..id
        };
        assert_eq!(found(10, listener, 5), Ok(Found::None));
        assert_eq!(found(10, id, 5), Ok(Found::None));
        assert_eq!(found(6, id, 0), Ok(Found::None));
        let other = SocketId {
            source_port: 40001u16.to_be(),
            ..id
        };
        assert_eq!(found(1, other, 77), Ok(Found::None));
    }

    #[test]
    fn answers_too_short_of_another_kind_or_number_are_errors() {
        let id = asked();
        assert_eq!(parse(&[], &id), Err(libc::EIO));
        assert_eq!(parse(&answer(99, &[0; 24]), &id), Err(libc::EIO));
        assert_eq!(parse(&answer(BY_FAMILY, &[0; 8]), &id), Err(libc::EIO));
        let mut stray = answer(BY_FAMILY, &message(id, 1, 77));
        stray[8..12].copy_from_slice(&(SEQUENCE + 1).to_ne_bytes());
        assert_eq!(parse(&stray, &id), Err(libc::EIO));
        let code = |errno: i32| answer(ERROR, &(-errno).to_ne_bytes());
        assert_eq!(parse(&code(libc::EPERM), &id), Err(libc::EPERM));
        assert_eq!(parse(&code(0), &id), Err(libc::EIO));
        assert_eq!(parse(&code(libc::ENOENT), &id), Ok(Found::None));
    }
}
