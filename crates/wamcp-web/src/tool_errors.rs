//! How a failed request reads to the model, per tool: each tool has its own
//! error types, but the same recovery advice for the same cause.

use crate::client::FetchError;
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::hosts::ALLOWED_NETWORK_HOSTS;

/// The error types one tool reports for each kind of failure.
pub struct ErrorKinds {
    pub refused: ErrorType,
    pub too_large: ErrorType,
    /// The server answered with an error status.
    pub status: ErrorType,
    /// The request did not complete (network, TLS, timeout).
    pub failed: ErrorType,
    /// The fixed list of hosts the tool reaches, named in a refusal; `None`
    /// when the caller explains its own (wider, changeable) list.
    pub reachable: Option<&'static [&'static str]>,
}

pub fn network_hosts() -> Vec<String> {
    ALLOWED_NETWORK_HOSTS
        .iter()
        .map(|h| h.to_string())
        .collect()
}

pub fn to_tool_error(error: FetchError, kinds: &ErrorKinds, url: &str) -> ToolError {
    let message = error.describe();
    match error {
        FetchError::Refused(_) => {
            let refusal = ToolError::new(kinds.refused, format!("{url} was refused: {message}."));
            match kinds.reachable {
                Some(hosts) => refusal
                    .recover(format!(
                        "This tool reaches only these hosts, over https: {}.",
                        hosts.join(", ")
                    ))
                    .recover("Use a URL on one of them; the refusal is a fixed policy, not a temporary error."),
                None => refusal,
            }
        }
        FetchError::TooLarge { limit, .. } => {
            ToolError::new(kinds.too_large, format!("{url}: {message}.")).detail("limit_bytes", limit)
        }
        FetchError::Status { code, .. } if code == 429 || code >= 500 => {
            ToolError::new(kinds.status, format!("{message}."))
                .retryable("The server is overloaded or failing: wait a minute, then try once more.")
        }
        FetchError::Status { code: 404, .. } => ToolError::new(kinds.status, format!("{message} (not found)."))
            .recover("Check the URL: it may be mistyped, or it may never have existed if you did not get it from the user or a listing."),
        FetchError::Status { .. } => ToolError::new(kinds.status, format!("{message}.")),
        FetchError::TimedOut(_) | FetchError::Failed(_) => {
            ToolError::new(kinds.failed, format!("{url}: {message}."))
                .retryable("The host did not answer in time or the connection failed: try once more in a minute; if it fails again, the host is unreachable from here.")
        }
    }
}
