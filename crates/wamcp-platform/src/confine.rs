//! Confining a child process with the operating system's own mechanisms,
//! so that what a command may write and reach is a property of the process,
//! not of how well a parser guessed what the program would do.
//!
//! The decisions (which paths, which network) are made elsewhere; this
//! module only turns a [`Scope`] into kernel objects and applies them.

use std::path::PathBuf;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(windows)]
pub mod windows;

#[cfg(target_os = "linux")]
pub use linux::{Prepared, command_filter_count, prepare, receive_listener};

/// What a confined command may do besides reading and executing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scope {
    /// Directories (and device files) it may write beneath.
    pub writable: Vec<PathBuf>,
    /// Whether it may open internet sockets.
    pub network: bool,
    /// TCP ports it may not connect to even with the network: wamcp's own
    /// listeners, which a command must never reach as a client (where the
    /// kernel can refuse it: Landlock ABI 4 on Linux).
    pub closed_ports: Vec<u16>,
    /// Places it must not see (secret stores): empty in its view. Resolved
    /// and existing.
    pub hidden: Vec<PathBuf>,
    /// Places inside the writable set it may read but not change (trust
    /// folders). Resolved and existing.
    pub read_only: Vec<PathBuf>,
    /// Folders inside the writable set it may change inside but not move
    /// or remove: those that hold a read-only place further down (a nested
    /// repository's work tree), which could otherwise be renamed away with
    /// it and replaced by a writable copy. Resolved and existing.
    pub pinned: Vec<PathBuf>,
    /// With the network: reach the outside only through wamcp's egress
    /// proxy, which the command finds at 127.0.0.1 on this port of a
    /// network of its own (where the platform gives it one).
    pub egress_port: Option<u16>,
}

/// What this machine can enforce.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Support {
    /// The mechanism, or `None` when commands cannot be confined here.
    pub mechanism: Option<String>,
    /// Why not, or what the mechanism covers on this kernel.
    pub detail: String,
    /// How [`Scope::hidden`] and [`Scope::read_only`] are enforced, or why
    /// they are not here.
    pub private_view: Result<String, String>,
}

/// Probes the running system. Cheap: one system call on Linux.
pub fn support() -> Support {
    #[cfg(target_os = "linux")]
    {
        linux::support()
    }
    #[cfg(windows)]
    {
        windows::support()
    }
    #[cfg(not(any(target_os = "linux", windows)))]
    {
        Support {
            mechanism: None,
            detail: "no confinement is implemented for this operating system".into(),
            private_view: Err("not on this operating system".into()),
        }
    }
}
