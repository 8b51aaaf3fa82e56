//! Workspace roots from the client (MCP `roots`), in both protocol eras.
//!
//! A handshake session is asked with `roots/list` right after
//! `initialized`, again after `notifications/roots/list_changed`, and before
//! a tool call if the answer is still out. The stateless era forbids server
//! requests: there the first call returns an input request for the roots and
//! the client calls again with them. Roots are deprecated in the newest spec
//! (SEP-2577), so all of it is here; what a root may be is judged in
//! [`ServerContext::set_client_roots`].

use crate::context::ServerContext;
use rmcp::RoleServer;
use rmcp::model::{
    InputRequest, InputRequests, InputRequiredResult, InputResponses, ProtocolVersion,
};
use rmcp::service::{Peer, RequestContext};

/// The key of the roots request in an input-required round.
const ROOTS_KEY: &str = "wamcp_roots";

/// How long a client may take to list its roots.
const ROOTS_ANSWER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Asks a handshake-session client for its roots when it offers them and
/// the list is not known (or changed). One question at a time; the others
/// wait for its answer.
#[expect(
    deprecated,
    reason = "MCP roots are deprecated (SEP-2577) but still what hosts send"
)]
pub async fn learn(ctx: &ServerContext, peer: &Peer<RoleServer>) {
    let offered = peer
        .peer_info()
        .is_some_and(|info| info.capabilities.roots.is_some());
    if !ctx.client_roots_enabled || !offered || ctx.places.client_roots_fetched() {
        return;
    }
    let _one_at_a_time = ctx.session.roots_gate.lock().await;
    if ctx.places.client_roots_fetched() {
        return;
    }
    match tokio::time::timeout(ROOTS_ANSWER_TIMEOUT, peer.list_roots()).await {
        Ok(Ok(list)) => {
            let uris: Vec<String> = list.roots.into_iter().map(|r| r.uri).collect();
            ctx.set_client_roots(&uris);
        }
        Ok(Err(e)) => ctx
            .places
            .client_roots_unavailable(format!("the client did not list its roots: {e}")),
        Err(_) => ctx.places.client_roots_unavailable(format!(
            "the client did not list its roots within {} s",
            ROOTS_ANSWER_TIMEOUT.as_secs()
        )),
    }
}

/// The stateless era's round: `Some` input request for the roots when
/// they are needed, `None` when the call may go on (the answer, if this is
/// the retry, taken).
#[expect(
    deprecated,
    reason = "MCP roots are deprecated (SEP-2577) but still what hosts send"
)]
pub fn round(
    ctx: &ServerContext,
    context: &RequestContext<RoleServer>,
    responses: Option<&InputResponses>,
) -> Option<InputRequiredResult> {
    // A handshake session said in `initialize` whether it has roots; a
    // call's own metadata cannot add them afterwards.
    let stateless = context.peer.peer_info().is_none()
        && context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
    let offered = context
        .client_capabilities()
        .is_some_and(|c| c.roots.is_some());
    if !stateless || !offered || !ctx.client_roots_enabled || ctx.places.client_roots_fetched() {
        return None;
    }
    if let Some(answer) = responses.and_then(|r| r.get(ROOTS_KEY)) {
        match serde_json::from_value::<rmcp::model::ListRootsResult>(answer.clone()) {
            Ok(list) => {
                let uris: Vec<String> = list.roots.into_iter().map(|r| r.uri).collect();
                ctx.set_client_roots(&uris);
            }
            Err(e) => ctx
                .places
                .client_roots_unavailable(format!("the client's roots could not be read: {e}")),
        }
        return None;
    }
    let mut requests = InputRequests::new();
    requests.insert(
        ROOTS_KEY.to_string(),
        InputRequest::ListRoots(rmcp::model::ListRootsRequest::default()),
    );
    Some(InputRequiredResult::new(
        Some(requests),
        Some(ROOTS_KEY.to_string()),
    ))
}
