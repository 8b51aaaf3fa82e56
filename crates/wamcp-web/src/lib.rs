//! HTTPS for wamcp.
//!
//! One client ([`client::WebClient`]) whose connections reach only addresses
//! its resolver validated ([`resolve`]), with redirects re-checked hop by
//! hop and bodies capped while they stream; on top of it the `net` tools'
//! operations, each returning bounded text or a typed error.

#![deny(missing_docs)]

pub mod charset;
pub mod client;
pub mod css;
pub mod download;
pub mod egress;
pub mod extract;
pub mod fence;
pub mod fetch_raw;
pub mod github;
pub mod page;
pub mod resolve;
pub mod search;
mod tool_errors;
