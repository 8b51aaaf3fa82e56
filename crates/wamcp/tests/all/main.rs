//! The integration tests of the server: a real binary, real clients.
//!
//! One binary for the crate, as ripgrep and codex's linux-sandbox do: each
//! integration-test binary links the whole crate, and on a two-core machine
//! linking them one by one cost more than running them.

// Tests fail loudly by design, so they may unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;

mod build_tools;
mod cli;
mod command_escapes;
mod config_audits;
mod confinement;
mod devenv_tools;
mod everyday;
mod http;
mod http_attacks;
mod mcp;
mod net_tools;
mod package_tools;
mod plugins;
mod python_sdk;
mod read_tools;
mod run_tools;
mod sandbox_tools;
mod secrets;
mod stdio_raw;
mod tasks;
mod undo;
mod write_tools;
