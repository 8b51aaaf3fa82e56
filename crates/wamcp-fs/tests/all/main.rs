//! The integration tests of the file tools.
//!
//! One binary for the crate, as ripgrep and codex's linux-sandbox do: each
//! integration-test binary links the whole crate, and on a two-core machine
//! linking them one by one cost more than running them.

// Tests fail loudly by design, so they may unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod navigate;
#[cfg(target_os = "linux")]
mod races;
mod read;
mod write;
