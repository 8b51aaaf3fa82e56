//! `wamcp serve --http ADDR`: MCP over streamable HTTP at `/mcp`.
//!
//! Loopback only: this server runs commands and writes files, so a port
//! reachable from the network would hand that to anyone who can connect.
//! The Host header must name the loopback host and a browser's Origin
//! header is refused (no origin is allowed), which stops a web page from
//! driving the server through the user's browser (DNS rebinding, CSRF).
//! Every session shares the one server context, so grants, the page cache
//! and the build lock are the same for all of them.

use crate::context::ServerContext;
use crate::server::WamcpServer;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Where `--http` without an address listens.
pub const DEFAULT_ADDRESS: &str = "127.0.0.1:8765";

/// Parses and checks a listening address: loopback only.
pub fn listen_address(raw: &str) -> Result<SocketAddr, String> {
    let address: SocketAddr = raw
        .parse()
        .map_err(|_| format!("'{raw}' is not an address and port such as {DEFAULT_ADDRESS}"))?;
    if !address.ip().is_loopback() {
        return Err(format!(
            "'{raw}' is not a loopback address; wamcp runs commands and writes files, so it only listens on \
             127.0.0.1 or ::1"
        ));
    }
    Ok(address)
}

/// Serves until Ctrl-C. Prints the URL on stderr once listening.
pub async fn serve(ctx: Arc<ServerContext>, address: SocketAddr) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|e| format!("cannot listen on {address}: {e}"))?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    eprintln!("wamcp: serving MCP over streamable HTTP at http://{local}/mcp");
    let stop = CancellationToken::new();
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(["localhost", "127.0.0.1", "::1", "[::1]"])
        .enforce_origin_validation()
        .with_cancellation_token(stop.child_token());
    let service = StreamableHttpService::new(
        move || Ok(WamcpServer::new(ctx.clone())),
        LocalSessionManager::default().into(),
        config,
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            let _ = tokio::signal::ctrl_c().await;
            stop.cancel();
        })
        .await
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_addresses_are_served() {
        assert_eq!(listen_address("127.0.0.1:8765").unwrap().port(), 8765);
        assert!(listen_address("[::1]:0").is_ok());
        for bad in [
            "0.0.0.0:8765",
            "192.168.1.5:80",
            "[::]:1",
            "localhost:80",
            "8765",
            "",
        ] {
            assert!(listen_address(bad).is_err(), "{bad}");
        }
    }
}
