//! Linux: Landlock for writes (and TCP where the ABI has it), a seccomp
//! filter for every other way to the network, `no_new_privs` for both.
//!
//! Everything that allocates or opens files happens in the parent
//! ([`prepare`]); the child, between fork and exec, only makes the three
//! system calls that apply what was prepared.

mod namespace;

use super::{Scope, Support};
use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, PathBeneath, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope as LandlockScope,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};
use std::collections::BTreeMap;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The newest ABI whose rights this code asks for; older kernels get the
/// subset they know (the crate's best-effort mode).
const NEWEST: ABI = ABI::V6;

/// The Landlock ABI the kernel offers, or why there is none.
fn landlock_abi() -> Result<u32, String> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with the VERSION flag the kernel reads no attribute: a null
    // pointer and a zero size are what this query takes.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if version >= 1 {
        return Ok(version as u32);
    }
    Err(match io::Error::last_os_error().raw_os_error() {
        Some(libc::EOPNOTSUPP) => {
            "Landlock is built into this kernel but disabled at boot (add it to the \
                                   lsm= kernel parameter)"
                .into()
        }
        Some(libc::ENOSYS) => {
            "this kernel has no Landlock (it needs Linux 5.13 or newer built with \
                               CONFIG_SECURITY_LANDLOCK)"
                .into()
        }
        other => format!("Landlock could not be probed (errno {other:?})"),
    })
}

pub fn support() -> Support {
    match landlock_abi() {
        Ok(abi) => Support {
            mechanism: Some("landlock+seccomp".into()),
            detail: format!("Landlock ABI {abi}: {}", covered(abi)),
            private_view: namespace::probe().map(|()| {
                "a user and mount namespace per command: secret stores mounted over empty, trust \
                 folders of the writable roots mounted read-only"
                    .into()
            }),
        },
        Err(why) => Support {
            mechanism: None,
            detail: why,
            private_view: Err("commands are not confined".into()),
        },
    }
}

/// What an ABI lets wamcp enforce, in words for `get_server_info`.
fn covered(abi: u32) -> String {
    let mut parts = vec!["writes confined to the writable set".to_string()];
    if abi >= 2 {
        parts.push("renames and links across it".into());
    }
    if abi >= 3 {
        parts.push("truncation".into());
    }
    if abi >= 5 {
        parts.push("device ioctls".into());
    }
    if abi >= 4 {
        parts.push(
            "TCP connect and bind, and wamcp's own HTTP listeners closed to commands that have the network"
                .into(),
        );
    }
    if abi >= 6 {
        parts.push("signals and abstract sockets outside the command".into());
    }
    format!(
        "{}; seccomp refuses chown, set-user/group-ID bits, immutable flags and extended attributes, and for \
         every command MPTCP and SMC sockets, TCP Fast Open sends and io_uring, and for commands without network any socket but a local \
         stream one and connect",
        parts.join(", ")
    )
}

/// How many seccomp filters every confined command carries: a process
/// cannot shed them (they pass through fork, exec and `setsid`), so with
/// `no_new_privs` they mark it as a command of some wamcp wherever it went.
pub fn command_filter_count() -> usize {
    compiled_filters().as_ref().map_or(0, |c| c.always.len())
}

/// Kernel objects ready to be applied in the child.
pub struct Prepared {
    ruleset: Option<RulesetCreated>,
    /// A second Landlock layer closing wamcp's own ports to a command that
    /// has the network.
    closed_ports: Option<Arc<OwnedFd>>,
    filters: Vec<&'static BpfProgram>,
    /// The command's private view, where the system allows one.
    mounts: Option<namespace::Mounts>,
    /// Where its network's listener arrives, when it has a network of its own.
    egress: Option<OwnedFd>,
}

pub use namespace::receive_listener;

/// Builds the Landlock ruleset (opening each writable path) and the seccomp
/// filters: the metadata ones always, the network one for a command
/// without network.
pub fn prepare(scope: &Scope) -> io::Result<Prepared> {
    let ruleset = ruleset(scope).map_err(|e| io::Error::other(format!("Landlock: {e}")))?;
    let compiled = compiled_filters()
        .as_ref()
        .map_err(|e| io::Error::other(format!("seccomp: {e}")))?;
    let mut filters: Vec<&'static BpfProgram> = compiled.always.iter().collect();
    if !scope.network {
        filters.push(&compiled.without_network);
    }
    let closed_ports = if scope.network && !scope.closed_ports.is_empty() {
        closing(&scope.closed_ports)?
    } else {
        None
    };
    let proxy = scope.egress_port.filter(|_| scope.network);
    let wants_view = !scope.hidden.is_empty() || !scope.read_only.is_empty() || proxy.is_some();
    let (mounts, egress) = match wants_view && namespace::probe().is_ok() {
        true => {
            let (mounts, egress) = namespace::Mounts::with_network(
                &scope.hidden,
                &scope.read_only,
                &scope.pinned,
                proxy,
            )?;
            (Some(mounts), egress)
        }
        false => (None, None),
    };
    Ok(Prepared {
        ruleset: Some(ruleset),
        closed_ports,
        filters,
        mounts,
        egress,
    })
}

/// The layer that lets a command connect to every TCP port but `closed`,
/// made once per set of ports: Landlock only grants, so it is one rule per
/// open port, which is too many system calls to make for every command.
/// `None` on a kernel without TCP rules (ABI below 4).
fn closing(closed: &[u16]) -> io::Result<Option<Arc<OwnedFd>>> {
    static MADE: Mutex<Option<(Vec<u16>, Arc<OwnedFd>)>> = Mutex::new(None);
    if landlock_abi().unwrap_or(0) < 4 {
        return Ok(None);
    }
    let mut made = MADE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((ports, fd)) = made.as_ref()
        && ports == closed
    {
        return Ok(Some(fd.clone()));
    }
    let build = || -> Result<Option<OwnedFd>, landlock::RulesetError> {
        let open = (0..=u16::MAX)
            .filter(|port| !closed.contains(port))
            .map(|port| Ok::<_, landlock::RulesetError>(NetPort::new(port, AccessNet::ConnectTcp)));
        let created = Ruleset::default()
            .handle_access(AccessNet::ConnectTcp)?
            .create()?
            .add_rules(open)?;
        Ok(created.into())
    };
    let fd = build()
        .map_err(|e| io::Error::other(format!("Landlock: {e}")))?
        .ok_or_else(|| io::Error::other("Landlock: no ruleset for the closed ports"))?;
    let fd = Arc::new(fd);
    *made = Some((closed.to_vec(), fd.clone()));
    Ok(Some(fd))
}

/// The filters, compiled once: they do not depend on the command.
struct Compiled {
    always: Vec<BpfProgram>,
    without_network: BpfProgram,
}

fn compiled_filters() -> &'static Result<Compiled, String> {
    static COMPILED: std::sync::OnceLock<Result<Compiled, String>> = std::sync::OnceLock::new();
    COMPILED.get_or_init(|| {
        let compile = || -> Result<Compiled, seccompiler::BackendError> {
            // One filter per answer the kernel gives; each runs on every
            // system call of the command, so they are few.
            let mut refused = ownership_and_set_id_rules()?;
            for (number, rules) in other_process_rules()? {
                // A call in both would lose one set of rules.
                let earlier = refused.insert(number, rules);
                debug_assert!(earlier.is_none(), "system call {number} in two rule sets");
            }
            let mut filters = vec![
                filter(refused, libc::EPERM)?,
                filter(xattr_rules(), libc::EOPNOTSUPP)?,
                filter(unreadable_argument_rules(), libc::ENOSYS)?,
                filter(unseen_stream_rules()?, libc::EACCES)?,
            ];
            if landlock_abi().is_ok_and(|abi| abi < 3) {
                filters.push(filter(truncation_rules()?, libc::EACCES)?);
            }
            Ok(Compiled {
                always: filters,
                without_network: filter(network_rules()?, libc::EACCES)?,
            })
        };
        compile().map_err(|e| e.to_string())
    })
}

fn ruleset(scope: &Scope) -> Result<RulesetCreated, Box<dyn std::error::Error>> {
    let write = AccessFs::from_write(NEWEST);
    let mut ruleset = Ruleset::default()
        // An older kernel enforces what it knows; none at all is caught by
        // the caller through `support()` before anything runs.
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(write)?
        .scope(LandlockScope::from_all(NEWEST))?;
    if !scope.network {
        ruleset = ruleset.handle_access(AccessNet::from_all(NEWEST))?;
    }
    let mut created = ruleset.create()?;
    // Beneath a directory: no device nodes, and no ioctls on any that exist
    // there (a console to type into, a disk to write). Device files named
    // directly (/dev/null) keep their rights.
    let devices = AccessFs::MakeChar | AccessFs::MakeBlock | AccessFs::IoctlDev;
    for path in &scope.writable {
        let (fd, is_dir) = open_verified(path)?;
        // Directory-only rights on a file are an error to the kernel.
        let rights = if is_dir {
            write & !devices
        } else {
            write & AccessFs::from_file(NEWEST)
        };
        created = created.add_rule(PathBeneath::new(fd, rights))?;
    }
    Ok(created)
}

/// Opens `path` for a rule and checks that the descriptor really is
/// `path`: a root (or one of its parents) swapped for a symbolic link since
/// it was resolved would otherwise carry the grant to wherever it leads.
fn open_verified(path: &Path) -> io::Result<(OwnedFd, bool)> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?;
    let fd = OwnedFd::from(file);
    let actual = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))?;
    if actual != path {
        return Err(io::Error::other(format!(
            "{} now leads to {}; it is not made writable",
            path.display(),
            actual.display()
        )));
    }
    // SAFETY: `stat` is plain integers, for which all zeroes is a valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is open and owned here and `st` a writable `stat`.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((fd, st.st_mode & libc::S_IFMT == libc::S_IFDIR))
}

type Rules = BTreeMap<i64, Vec<SeccompRule>>;

/// Argument `index` with `mask` applied equals `value`.
fn masked(index: u8, mask: u64, value: u64) -> Result<SeccompCondition, seccompiler::BackendError> {
    SeccompCondition::new(
        index,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::MaskedEq(mask),
        value,
    )
}

fn equal(index: u8, value: u64) -> Result<SeccompCondition, seccompiler::BackendError> {
    SeccompCondition::new(index, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, value)
}

/// A call refused whatever its arguments.
fn always() -> Vec<SeccompRule> {
    Vec::new()
}

/// Adds `rules` for `number`, and for its x32 twin on x86_64: kernels that
/// enable x32 reach the same calls by those numbers, which the filter's
/// architecture check does not tell apart.
fn add(map: &mut Rules, number: i64, rules: Vec<SeccompRule>) {
    #[cfg(target_arch = "x86_64")]
    map.insert(number | 0x4000_0000, rules.clone());
    map.insert(number, rules);
}

/// For every command: no stream socket that Landlock's TCP rules do not
/// see but that reaches a TCP listener all the same (MPTCP falls back to
/// TCP, and so does SMC), and no TCP Fast Open send, which connects without
/// the connect call: either would open wamcp's own port to a command that
/// has the network. And no io_uring, which makes sockets and sends without
/// those calls and so past this filter.
fn unseen_stream_rules() -> Result<Rules, seccompiler::BackendError> {
    /// `AF_SMC` and `IPPROTO_MPTCP`, as Linux numbers them.
    const AF_SMC: u64 = 43;
    const IPPROTO_MPTCP: u64 = 262;
    let fast_open = libc::MSG_FASTOPEN as u64;
    let mut rules = Rules::new();
    add(
        &mut rules,
        libc::SYS_socket,
        vec![
            SeccompRule::new(vec![equal(0, AF_SMC)?])?,
            SeccompRule::new(vec![equal(2, IPPROTO_MPTCP)?])?,
        ],
    );
    // TCP Fast Open connects inside sendto/sendmsg, where Landlock's
    // connect rule is not asked.
    add(
        &mut rules,
        libc::SYS_sendto,
        vec![SeccompRule::new(vec![masked(3, fast_open, fast_open)?])?],
    );
    add(
        &mut rules,
        libc::SYS_sendmsg,
        vec![SeccompRule::new(vec![masked(2, fast_open, fast_open)?])?],
    );
    add(
        &mut rules,
        libc::SYS_sendmmsg,
        vec![SeccompRule::new(vec![masked(3, fast_open, fast_open)?])?],
    );
    add(&mut rules, libc::SYS_io_uring_setup, always());
    Ok(rules)
}

/// For commands without network: no socket but a local (Unix) stream or
/// sequenced-packet one, no connect at all (a Unix socket reaches daemons
/// that act outside the sandbox, Docker's or the session bus), and no other
/// local type (a datagram socket, or a raw one, which the kernel makes a
/// datagram socket, sends to any socket path without connecting, and passes
/// descriptors). io_uring is refused to every command.
fn network_rules() -> Result<Rules, seccompiler::BackendError> {
    let socket_rules = || -> Result<Vec<SeccompRule>, seccompiler::BackendError> {
        let mut rules = vec![SeccompRule::new(vec![SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            libc::AF_UNIX as u64,
        )?])?];
        // The type is the low four bits (flags such as SOCK_CLOEXEC sit
        // above them); every value but the two connection types is refused.
        let allowed = [libc::SOCK_STREAM as u64, libc::SOCK_SEQPACKET as u64];
        for kind in (0..16u64).filter(|k| !allowed.contains(k)) {
            rules.push(SeccompRule::new(vec![masked(1, 0xf, kind)?])?);
        }
        Ok(rules)
    };
    let mut rules = Rules::new();
    add(&mut rules, libc::SYS_socket, socket_rules()?);
    add(&mut rules, libc::SYS_socketpair, socket_rules()?);
    add(&mut rules, libc::SYS_connect, always());
    Ok(rules)
}

/// What Landlock does not cover and no build needs: giving a file away
/// (chown), set-user-ID and set-group-ID bits however they would be set
/// (chmod, a file created, an unnamed O_TMPFILE linked in later, or a node
/// made with them: as root, a command could otherwise make a
/// set-user-ID-root program for anyone on the machine), device nodes, and
/// the immutable/append-only flags.
fn ownership_and_set_id_rules() -> Result<Rules, seccompiler::BackendError> {
    // One rule per bit; for the open calls, once with O_CREAT and once with
    // O_TMPFILE in the flags (the mode matters only then).
    let set_id = |mode_arg: u8,
                  flags_arg: Option<u8>|
     -> Result<Vec<SeccompRule>, seccompiler::BackendError> {
        let mut rules = Vec::new();
        for bit in [libc::S_ISUID as u64, libc::S_ISGID as u64] {
            match flags_arg {
                None => rules.push(SeccompRule::new(vec![masked(mode_arg, bit, bit)?])?),
                Some(flags) => {
                    for creating in [libc::O_CREAT as u64, libc::O_TMPFILE as u64] {
                        rules.push(SeccompRule::new(vec![
                            masked(mode_arg, bit, bit)?,
                            masked(flags, creating, creating)?,
                        ])?);
                    }
                }
            }
        }
        Ok(rules)
    };
    // mknod of a character or block device: with it (as root) a command
    // could open any device, a console to type into or a disk to write.
    let device_or_set_id = |mode_arg: u8| -> Result<Vec<SeccompRule>, seccompiler::BackendError> {
        let mut rules = set_id(mode_arg, None)?;
        for kind in [libc::S_IFCHR as u64, libc::S_IFBLK as u64] {
            rules.push(SeccompRule::new(vec![masked(
                mode_arg,
                libc::S_IFMT as u64,
                kind,
            )?])?);
        }
        Ok(rules)
    };
    let mut rules = Rules::new();
    add(&mut rules, libc::SYS_fchown, always());
    add(&mut rules, libc::SYS_fchownat, always());
    add(&mut rules, libc::SYS_fchmod, set_id(1, None)?);
    add(&mut rules, libc::SYS_fchmodat, set_id(2, None)?);
    // fchmodat2 has the same number on every architecture.
    add(&mut rules, 452, set_id(2, None)?);
    add(&mut rules, libc::SYS_openat, set_id(3, Some(2))?);
    add(&mut rules, libc::SYS_mknodat, device_or_set_id(2)?);
    #[cfg(target_arch = "x86_64")]
    {
        add(&mut rules, libc::SYS_chown, always());
        add(&mut rules, libc::SYS_lchown, always());
        add(&mut rules, libc::SYS_chmod, set_id(1, None)?);
        add(&mut rules, libc::SYS_open, set_id(2, Some(1))?);
        add(&mut rules, libc::SYS_creat, set_id(1, None)?);
        add(&mut rules, libc::SYS_mknod, device_or_set_id(1)?);
    }
    const FS_IOC_SETFLAGS: u64 = 0x4008_6602;
    const FS_IOC32_SETFLAGS: u64 = 0x4004_6602;
    const FS_IOC_FSSETXATTR: u64 = 0x401c_5820;
    add(
        &mut rules,
        libc::SYS_ioctl,
        [FS_IOC_SETFLAGS, FS_IOC32_SETFLAGS, FS_IOC_FSSETXATTR]
            .into_iter()
            .map(|cmd| SeccompRule::new(vec![equal(1, cmd)?]))
            .collect::<Result<_, _>>()?,
    );
    Ok(rules)
}

/// Reaching other processes through what no file rule covers: resource
/// limits of another process (prlimit64 checks only the user: a command
/// could starve the server or the user's shell of CPU or files), leases, the
/// kernel keyrings shared by every process of the user, and System V IPC
/// objects and POSIX message queues, which another process's shared memory
/// and queues are.
fn other_process_rules() -> Result<Rules, seccompiler::BackendError> {
    let mut rules = Rules::new();
    let not_self = SeccompRule::new(vec![SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Ne,
        0,
    )?])?;
    add(&mut rules, libc::SYS_prlimit64, vec![not_self]);
    // A lease on a file stalls every other process that opens it for
    // writing, and needs only a read-only descriptor.
    add(
        &mut rules,
        libc::SYS_fcntl,
        vec![SeccompRule::new(vec![equal(1, libc::F_SETLEASE as u64)?])?],
    );
    for number in [
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_keyctl,
        libc::SYS_shmget,
        libc::SYS_shmat,
        libc::SYS_shmctl,
        libc::SYS_msgget,
        libc::SYS_msgsnd,
        libc::SYS_msgrcv,
        libc::SYS_msgctl,
        libc::SYS_semget,
        libc::SYS_semop,
        libc::SYS_semtimedop,
        libc::SYS_semctl,
        // POSIX message queues: named, shared, outside every file rule.
        libc::SYS_mq_open,
        libc::SYS_mq_unlink,
        libc::SYS_mq_timedsend,
        libc::SYS_mq_timedreceive,
        libc::SYS_mq_notify,
        libc::SYS_mq_getsetattr,
    ] {
        add(&mut rules, number, always());
    }
    Ok(rules)
}

/// openat2 keeps its flags and mode in a structure seccomp cannot read, so
/// it answers "not implemented", and the C library and runtimes fall back
/// to openat, which the rules above can see.
fn unreadable_argument_rules() -> Rules {
    let mut rules = Rules::new();
    add(&mut rules, libc::SYS_openat2, always());
    rules
}

/// Extended attributes hold file capabilities and security labels; setting
/// or removing one answers "not supported", which tools already accept.
/// Before ABI 3 Landlock does not see truncation: `truncate(2)` needs no
/// descriptor, and an open for reading with `O_TRUNC` counts as a read,
/// yet both empty the file, outside the roots too. Refused outright there
/// (`ftruncate` on a descriptor opened for writing stays, bounded by the
/// open, and so does `O_TRUNC` with write access).
fn truncation_rules() -> Result<Rules, seccompiler::BackendError> {
    let mut rules = Rules::new();
    add(&mut rules, libc::SYS_truncate, always());
    let read_only_truncation = |flags: u8| {
        let mask = (libc::O_ACCMODE | libc::O_TRUNC) as u64;
        SeccompRule::new(vec![masked(flags, mask, libc::O_TRUNC as u64)?])
    };
    #[cfg(target_arch = "x86_64")]
    add(&mut rules, libc::SYS_open, vec![read_only_truncation(1)?]);
    add(&mut rules, libc::SYS_openat, vec![read_only_truncation(2)?]);
    Ok(rules)
}

fn xattr_rules() -> Rules {
    let mut rules = Rules::new();
    for number in [
        libc::SYS_setxattr,
        libc::SYS_lsetxattr,
        libc::SYS_fsetxattr,
        libc::SYS_removexattr,
        libc::SYS_lremovexattr,
        libc::SYS_fremovexattr,
        // setxattrat and removexattrat (Linux 6.13), the same number everywhere.
        463,
        466,
    ] {
        add(&mut rules, number, always());
    }
    rules
}

fn filter(rules: Rules, errno: i32) -> Result<BpfProgram, seccompiler::BackendError> {
    let arch = if cfg!(target_arch = "aarch64") {
        TargetArch::aarch64
    } else if cfg!(target_arch = "riscv64") {
        TargetArch::riscv64
    } else {
        TargetArch::x86_64
    };
    SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno as u32),
        arch,
    )?
    .try_into()
}

impl Prepared {
    /// The parent's end of the channel the command's network listener
    /// arrives on ([`receive_listener`]), when it has a network of its own.
    pub fn take_egress(&mut self) -> Option<OwnedFd> {
        self.egress.take()
    }

    /// Applies the ruleset and the filter to the calling process. Meant for
    /// the child between fork and exec (`pre_exec`): no allocation, three
    /// system calls.
    pub fn enter(&mut self) -> io::Result<()> {
        // Errors are the raw errno: building a message would allocate in a
        // forked child, which can deadlock on a lock another thread held.
        // The namespace first: its mounts need the capabilities it gives,
        // which are dropped next, and Landlock then refuses every mount.
        if let Some(mounts) = &self.mounts {
            mounts.enter()?;
        }
        drop_capabilities()?;
        if let Some(ruleset) = self.ruleset.take() {
            match ruleset.restrict_self() {
                // Fail closed: a kernel that took nothing is not a sandbox.
                Ok(status) if status.ruleset == RulesetStatus::NotEnforced => {
                    return Err(io::Error::from_raw_os_error(libc::ENOSYS));
                }
                Ok(_) => {}
                Err(_) => return Err(io::Error::last_os_error()),
            }
        }
        if let Some(layer) = &self.closed_ports {
            // SAFETY: a ruleset descriptor kept open by the parent; no
            // memory is passed.
            let done =
                unsafe { libc::syscall(libc::SYS_landlock_restrict_self, layer.as_raw_fd(), 0u32) };
            if done != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        for filter in &self.filters {
            if seccompiler::apply_filter(filter).is_err() {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// Leaves the command no capability after exec, so a server running as
/// root does not hand its commands what Landlock does not bound (devices,
/// BPF, raw I/O, ownership): the bounding set is emptied (root's
/// capabilities after exec come from it), ambient ones are cleared, and so
/// is the inheritable set. A server without capabilities has nothing to
/// drop; the calls it may not make fail harmlessly.
fn drop_capabilities() -> io::Result<()> {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    for cap in 0..64 {
        // EINVAL past the kernel's last capability, EPERM without
        // CAP_SETPCAP (then the bounding set grants nothing anyway).
        // SAFETY: integer arguments only; no memory is involved.
        unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) };
    }
    // SAFETY: integer arguments only; no memory is involved.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        )
    };
    let mut header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let mut data = [Data::default(); 2];
    // SAFETY: `Header` and `Data` are `repr(C)` copies of the kernel's
    // structs, and version 3 reads one header and fills two data entries,
    // which is what `data` holds.
    if unsafe { libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    if data.iter().any(|d| d.inheritable != 0) {
        for d in &mut data {
            d.inheritable = 0;
        }
        // SAFETY: the same header and two-entry array capget just filled.
        if unsafe { libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filters_compile_and_their_rule_sets_do_not_overlap() {
        let compiled = compiled_filters().as_ref().unwrap();
        assert_eq!(compiled.always.len(), 4);
        assert_eq!(command_filter_count(), 4);
        assert!(!compiled.without_network.is_empty());
    }

    #[test]
    fn the_detail_names_what_each_abi_adds() {
        assert!(!covered(1).contains("TCP connect"));
        assert!(covered(1).contains("MPTCP and SMC sockets, TCP Fast Open sends and io_uring"));
        assert!(covered(4).contains("TCP connect and bind"));
        assert!(covered(6).contains("signals and abstract sockets"));
    }
}
