//! Decisions of the development-environment agent: safety
//! classes, the capability catalog's format, workflow routing and the audit
//! trail's outcomes and chain. The crate `wamcp-devenv` does the I/O.

pub mod audit;
pub mod catalog;
pub mod mcp_config;
pub mod packages;
pub mod routing;
pub mod safety;
pub mod sandbox;
