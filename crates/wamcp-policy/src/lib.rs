//! Pure policy for wamcp.
//!
//! Everything here decides; nothing here acts. No network, no processes, and no
//! file-system access beyond what a decision must read. That keeps every rule
//! testable by a table of cases and fuzzable, and keeps the walls of the house
//! where DESIGN.md draws them: the binary depends on this crate, never the
//! reverse.

#![deny(missing_docs)]

pub mod command;
pub mod desktop;
pub mod devenv;
pub mod egress;
pub mod error;
pub mod grants;
pub mod groups;
pub mod host_hooks;
pub mod hosts;
pub mod limits;
pub mod net_names;
pub mod schema;
pub mod secrets;
pub mod shader;
pub mod skip;
pub mod text;
pub mod undo;
pub mod url_policy;
pub mod workspace;
pub mod write_rules;
