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
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The mounts one command gets, prepared in the parent: the child only
/// makes system calls with what is here.
pub struct Mounts {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    steps: Vec<Step>,
    /// A network of the command's own, when its traffic goes through
    /// wamcp's egress proxy.
    network: Option<Network>,
}

/// A network namespace with only loopback, where 127.0.0.1:`port` is a
/// listener the child hands to wamcp over `channel` before it runs the
/// program: every connection the command makes to the outside goes to
/// wamcp, which decides where it may go. No route leads anywhere else, and
/// no name resolves (there is no DNS server in it).
struct Network {
    channel: OwnedFd,
    port: u16,
}

enum Step {
    /// An empty, read-only file system over a folder.
    Empty(CString),
    /// The null device over a file: it reads as empty.
    Null(CString),
    /// The place itself again, read-only, keeping the flags its own mount
    /// has (a remount may not drop them inside a user namespace).
    ReadOnly(CString, libc::c_ulong),
    /// The folder itself again, writable: a mount point cannot be renamed
    /// or removed, so a read-only place below it cannot be moved aside
    /// with it and replaced by a writable copy.
    Pinned(CString),
}

impl Mounts {
    /// Mounts that hide each of `hidden` and make each of `read_only`
    /// read-only. Paths must be resolved and exist.
    pub fn new(hidden: &[impl AsRef<Path>], read_only: &[impl AsRef<Path>]) -> io::Result<Mounts> {
        Mounts::with_network(hidden, read_only, &[] as &[&Path], None).map(|(mounts, _)| mounts)
    }

    /// [`Mounts::new`], with each of `pinned` made a mount point of its own
    /// (see [`Step::Pinned`]), and with `proxy_port` a network of the
    /// command's own whose listener on that port reaches the returned
    /// channel.
    pub fn with_network(
        hidden: &[impl AsRef<Path>],
        read_only: &[impl AsRef<Path>],
        pinned: &[impl AsRef<Path>],
        proxy_port: Option<u16>,
    ) -> io::Result<(Mounts, Option<OwnedFd>)> {
        // Pins first (a bind of a folder would hide a read-only bind made
        // below it before), then read-only binds: a hidden place is then
        // mounted over whatever view it has.
        let mut steps = Vec::new();
        for path in pinned {
            steps.push(Step::Pinned(c_path(path.as_ref())?));
        }
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
        let (network, parent) = match proxy_port {
            Some(port) => {
                let (parent, channel) = seqpacket_pair()?;
                (Some(Network { channel, port }), Some(parent))
            }
            None => (None, None),
        };
        let mounts = Mounts {
            uid_map: format!("{uid} {uid} 1").into_bytes(),
            gid_map: format!("{gid} {gid} 1").into_bytes(),
            steps,
            network,
        };
        Ok((mounts, parent))
    }

    /// Enters a new user and mount namespace and makes the mounts. For the
    /// child between fork and exec: system calls only, errors as errno.
    pub fn enter(&self) -> io::Result<()> {
        let mut flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS;
        if self.network.is_some() {
            flags |= libc::CLONE_NEWNET;
        }
        // SAFETY: flags only.
        if unsafe { libc::unshare(flags) } != 0 {
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
                Step::Pinned(path) => {
                    mount(Some(path), path, None, libc::MS_BIND | libc::MS_REC, None)?
                }
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
        if let Some(network) = &self.network {
            network.hand_over()?;
        }
        Ok(())
    }
}

impl Network {
    /// Brings loopback up, listens on 127.0.0.1:`port` and sends the
    /// listener to wamcp. System calls only.
    fn hand_over(&self) -> io::Result<()> {
        loopback_up()?;
        // SAFETY: plain socket creation; the descriptor is closed below.
        let listener =
            unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
        if listener < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `sockaddr_in` is plain integers; all zeroes is valid.
        let mut address: libc::sockaddr_in = unsafe { std::mem::zeroed() };
        address.sin_family = libc::AF_INET as libc::sa_family_t;
        address.sin_port = self.port.to_be();
        address.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
        let size = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        // SAFETY: `address` is a valid `sockaddr_in` of `size` bytes and
        // `listener` an open socket.
        let done = unsafe {
            libc::bind(
                listener,
                (&address as *const libc::sockaddr_in).cast(),
                size,
            ) == 0
                && libc::listen(listener, 128) == 0
        };
        let sent = done && send_descriptor(self.channel.as_raw_fd(), listener);
        let error = io::Error::last_os_error();
        // SAFETY: closes the socket made above; wamcp has its own copy.
        unsafe { libc::close(listener) };
        match sent {
            true => Ok(()),
            false => Err(error),
        }
    }
}

/// Sets `lo` up in the current network namespace.
fn loopback_up() -> io::Result<()> {
    // SAFETY: plain socket creation; closed below.
    let socket = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if socket < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `ifreq` is plain integers and a union of them; zeroes are valid.
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo\0") {
        *slot = *byte as libc::c_char;
    }
    // SAFETY: `request` is a valid `ifreq` naming `lo`; the kernel reads and
    // writes only that structure.
    let done = unsafe {
        libc::ioctl(socket, libc::SIOCGIFFLAGS, &mut request) == 0 && {
            request.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            libc::ioctl(socket, libc::SIOCSIFFLAGS, &request) == 0
        }
    };
    let error = io::Error::last_os_error();
    // SAFETY: closes the socket made above.
    unsafe { libc::close(socket) };
    match done {
        true => Ok(()),
        false => Err(error),
    }
}

/// Runs `use_it` with a message of one data byte and room for one
/// descriptor's control message (`control_len` bytes of it offered), all
/// on the stack: no allocation, so the forked child may use it too.
fn with_message<R>(control_len: usize, use_it: impl FnOnce(&mut libc::msghdr) -> R) -> R {
    // Aligned for `cmsghdr`.
    #[repr(C, align(8))]
    struct Control([u8; 64]);
    let mut control = Control([0; 64]);
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // SAFETY: `msghdr` is plain integers and pointers; zeroes are valid.
    let mut message: libc::msghdr = unsafe { std::mem::zeroed() };
    message.msg_iov = &mut iov;
    message.msg_iovlen = 1;
    message.msg_control = control.0.as_mut_ptr().cast();
    message.msg_controllen = control_len.min(control.0.len()) as _;
    use_it(&mut message)
}

/// Sends `fd` over the connected Unix socket `channel`; no allocation.
fn send_descriptor(channel: libc::c_int, fd: libc::c_int) -> bool {
    // SAFETY: CMSG_SPACE only computes a size.
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<libc::c_int>() as u32) } as usize;
    // SAFETY: `message` points at its control buffer, which is large
    // enough for one header and one descriptor; the macros only compute
    // addresses in it.
    with_message(space, |message| unsafe {
        let header = libc::CMSG_FIRSTHDR(message);
        (*header).cmsg_level = libc::SOL_SOCKET;
        (*header).cmsg_type = libc::SCM_RIGHTS;
        (*header).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<libc::c_int>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(header).cast::<libc::c_int>(), fd);
        libc::sendmsg(channel, message, libc::MSG_NOSIGNAL) == 1
    })
}

/// A connected pair of Unix sequenced-packet sockets, closed at exec.
fn seqpacket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors the call returns.
    let made = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if made != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just returned by the kernel and are
    // owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Waits up to five seconds for the listener a child sent over `channel`
/// (it sends before it runs the program, so it is there once the program
/// started) and takes it.
pub fn receive_listener(channel: &OwnedFd) -> io::Result<std::net::TcpListener> {
    let mut poll = libc::pollfd {
        fd: channel.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid `pollfd`.
    if unsafe { libc::poll(&mut poll, 1, 5000) } != 1 {
        return Err(io::Error::other(
            "the command did not hand over its network",
        ));
    }
    // SAFETY: `message` points at buffers that outlive the call; the
    // kernel fills the control buffer and the macros walk inside it.
    let fd = with_message(usize::MAX, |message| unsafe {
        if libc::recvmsg(channel.as_raw_fd(), message, libc::MSG_CMSG_CLOEXEC) != 1 {
            return None;
        }
        let header = libc::CMSG_FIRSTHDR(message);
        if header.is_null()
            || (*header).cmsg_level != libc::SOL_SOCKET
            || (*header).cmsg_type != libc::SCM_RIGHTS
        {
            return None;
        }
        Some(std::ptr::read_unaligned(
            libc::CMSG_DATA(header).cast::<libc::c_int>(),
        ))
    })
    .ok_or_else(|| io::Error::other("the command's network came without a listener"))?;
    // SAFETY: SCM_RIGHTS gave this process a new descriptor it owns alone.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let listener = std::net::TcpListener::from(owned);
    listener.set_nonblocking(true)?;
    Ok(listener)
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
