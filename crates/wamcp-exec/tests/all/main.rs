//! The integration tests of running programs: confinement and real compilers.
//!
//! One binary for the crate, as ripgrep and codex's linux-sandbox do: each
//! integration-test binary links the whole crate, and on a two-core machine
//! linking them one by one cost more than running them.

mod confinement;
mod real_compilers;
