//! The integration tests of running programs: confinement and real compilers.
//!
//! One binary for the crate, as ripgrep and codex's linux-sandbox do: each
//! integration-test binary links the whole crate, and on a two-core machine
//! linking them one by one cost more than running them.

// Tests fail loudly by design, so they may unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod confinement;
mod everyday;
mod real_compilers;
mod self_test;

use std::sync::Arc;
use wamcp_exec::confine::{OsConfiner, Sandbox};
use wamcp_policy::command::sandbox::{Caches, SandboxMode};

/// The platform's own confinement, proven by its self-test as the server's
/// is, with this crate's probe binary in the place of wamcp.
pub fn os_sandbox(mode: SandboxMode, caches: Caches) -> Sandbox {
    Sandbox::with_confiner(
        mode,
        caches,
        Arc::new(OsConfiner::with_probe(probe_binary())),
    )
}

/// This crate's probe binary, resolved: under Wine the path cargo gives is
/// the host's (`/root/...`), which Windows does not read as absolute.
pub fn probe_binary() -> std::path::PathBuf {
    let built = env!("CARGO_BIN_EXE_confine-probe");
    dunce::canonicalize(built).unwrap_or_else(|_| built.into())
}
