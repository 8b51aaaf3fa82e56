//! Linux: Landlock for writes (and TCP where the ABI has it), a seccomp
//! filter for every other way to the network, `no_new_privs` for both.
//!
//! Everything that allocates or opens files happens in the parent
//! ([`prepare`]); the child, between fork and exec, only makes the three
//! system calls that apply what was prepared.

use super::{Scope, Support};
use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope as LandlockScope,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};
use std::collections::BTreeMap;
use std::io;

/// The newest ABI whose rights this code asks for; older kernels get the
/// subset they know (the crate's best-effort mode).
const NEWEST: ABI = ABI::V6;

/// The Landlock ABI the kernel offers, or why there is none.
fn landlock_abi() -> Result<u32, String> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
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
        },
        Err(why) => Support {
            mechanism: None,
            detail: why,
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
        parts.push("TCP connect and bind".into());
    }
    if abi >= 6 {
        parts.push("signals and abstract sockets outside the command".into());
    }
    format!(
        "{}; seccomp refuses internet sockets, connect and io_uring for commands without network",
        parts.join(", ")
    )
}

/// Kernel objects ready to be applied in the child.
pub struct Prepared {
    ruleset: Option<RulesetCreated>,
    filter: Option<BpfProgram>,
}

/// Builds the Landlock ruleset (opening each writable path) and, for a
/// command without network, the seccomp filter.
pub fn prepare(scope: &Scope) -> io::Result<Prepared> {
    let ruleset = ruleset(scope).map_err(|e| io::Error::other(format!("Landlock: {e}")))?;
    let filter = if scope.network {
        None
    } else {
        Some(network_filter().map_err(|e| io::Error::other(format!("seccomp: {e}")))?)
    };
    Ok(Prepared {
        ruleset: Some(ruleset),
        filter,
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
    for path in &scope.writable {
        let fd = PathFd::new(path)?;
        // Directory-only rights on a file are an error to the kernel.
        let rights = if path.is_dir() {
            write
        } else {
            write & AccessFs::from_file(NEWEST)
        };
        created = created.add_rule(PathBeneath::new(fd, rights))?;
    }
    Ok(created)
}

/// For commands without network: no socket but a local (Unix) one, no
/// connect at all (a Unix socket can reach Docker's or the session bus's
/// daemon, which act outside the sandbox), and no io_uring, which could
/// create sockets without the socket system call.
fn network_filter() -> Result<BpfProgram, seccompiler::BackendError> {
    let not_local = || -> Result<SeccompRule, seccompiler::BackendError> {
        SeccompRule::new(vec![SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            libc::AF_UNIX as u64,
        )?])
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for (number, conditional) in [
        (libc::SYS_socket, true),
        (libc::SYS_socketpair, true),
        (libc::SYS_connect, false),
        (libc::SYS_io_uring_setup, false),
    ] {
        let rule = if conditional {
            vec![not_local()?]
        } else {
            Vec::new()
        };
        rules.insert(number, rule.clone());
        // The x32 numbering reaches the same calls on x86_64 kernels that
        // enable it; the filter's architecture check does not tell them apart.
        #[cfg(target_arch = "x86_64")]
        rules.insert(number | 0x4000_0000, rule);
    }
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
        SeccompAction::Errno(libc::EACCES as u32),
        arch,
    )?
    .try_into()
}

impl Prepared {
    /// Applies the ruleset and the filter to the calling process. Meant for
    /// the child between fork and exec (`pre_exec`): no allocation, three
    /// system calls.
    pub fn enter(&mut self) -> io::Result<()> {
        // Errors are the raw errno: building a message would allocate in a
        // forked child, which can deadlock on a lock another thread held.
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
        if let Some(filter) = &self.filter
            && seccompiler::apply_filter(filter).is_err()
        {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}
