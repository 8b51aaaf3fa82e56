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

use std::sync::Arc;
use wamcp_exec::confine::{OsConfiner, Sandbox};
use wamcp_policy::command::sandbox::{Caches, SandboxMode};

/// The platform's own confinement, proven by its self-test as the server's
/// is, with this crate's probe binary in the place of wamcp.
pub fn os_sandbox(mode: SandboxMode, caches: Caches) -> Sandbox {
    let probe = std::path::PathBuf::from(env!("CARGO_BIN_EXE_confine-probe"));
    Sandbox::with_confiner(mode, caches, Arc::new(OsConfiner::with_probe(probe)))
}
