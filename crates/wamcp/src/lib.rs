//! wamcp: an MCP server that gives coding agents a safe, context-economical
//! toolset for developing software on Windows (and, for the portable parts,
//! on Linux and macOS).
//!
//! The binary (`main.rs`) is a thin CLI over this library; the library is
//! public so the token report in `xtask` and the tests can build the exact
//! `tools/list` the server sends.

pub mod command_approvals;
pub mod config;
pub mod consent;
pub mod context;
pub mod egress;
pub mod emit;
pub mod hook;
pub mod host_approvals;
pub mod host_outcomes;
pub mod hostgrants;
pub mod http;
pub mod lanes;
pub mod log;
pub mod logon_task;
pub mod prompts;
pub mod registry;
pub mod resume;
pub mod roots;
pub mod server;
pub mod settings;
pub mod ssh_relay;
pub mod stdio;
pub mod tasks;
pub mod tools;
pub mod undo;
