//! The development-environment agent: what this machine has,
//! which capability fits a task, running it under the same confinement as
//! every command, and a trail a person can read afterwards. Decisions
//! (routing, safety classes, the catalog format, audit outcomes) live in
//! `wamcp_policy::devenv`; this crate asks the machine and runs things.

#![deny(missing_docs)]

pub mod audit_log;
pub mod capability;
pub mod discover;
pub mod ecosystem;
pub mod installs;
pub mod inventory;
pub mod mcp_audit;
pub mod packages;
pub mod sandbox;
pub mod snapshot;
pub mod sources;
pub mod workflow;
