//! The platform boundary: everything that asks the operating system about
//! itself lives here, so the rest of wamcp stays portable and testable.
//!
//! Each probe has a Windows and a Unix implementation behind the same
//! function; the decisions made from the raw answers (such as turning an NT
//! build number into a product name) are pure functions tested on every host.

#![deny(missing_docs)]

pub mod ansi;
pub mod atomic;
pub mod bounded;
pub mod confine;
pub mod console;
pub mod gpu;
pub mod held;
pub mod paths;
pub mod peer;
pub mod probe;
pub mod process;
pub mod random;
pub mod search_path;
#[cfg(target_os = "linux")]
pub mod supervisor;
pub mod system;
pub mod tree;
