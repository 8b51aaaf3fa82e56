//! `wamcp serve --http`: streamable HTTP on loopback; browser origins and
//! foreign Host names refused.

mod common;

use common::Sandbox;
use std::io::{Read, Write};

/// One raw HTTP/1.1 POST to the server at `url` with this Host header and
/// extra headers; returns the status line. The body is an `initialize`
/// request, or empty for requests the server refuses on their headers: a
/// server that closes with an unread body resets the connection, and the
/// reset can overtake its answer.
fn post(url: &str, host_header: Option<&str>, extra_headers: &str) -> String {
    let rest = url.trim_start_matches("http://");
    let (address, path) = rest.split_at(rest.find('/').unwrap());
    let refused =
        host_header.is_some_and(|h| h.contains("evil")) || extra_headers.contains("Origin");
    let body = if refused {
        ""
    } else {
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#
    };
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{extra_headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        host_header.unwrap_or(address),
        body.len()
    );
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    // A refusal may close the connection at once; what arrived is enough.
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    String::from_utf8_lossy(&response)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn loopback_http_serves_and_refuses_browser_origins_and_foreign_hosts() {
    let sandbox = Sandbox::new();
    let server = sandbox.serve_http();
    let url = &server.url;
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );
    assert_eq!(post(url, None, ""), "HTTP/1.1 200 OK");
    assert_eq!(post(url, Some("localhost"), ""), "HTTP/1.1 200 OK");
    // A web page cannot drive the server through the user's browser.
    assert_eq!(
        post(url, None, "Origin: https://evil.example\r\n"),
        "HTTP/1.1 403 Forbidden"
    );
    // Nor through a DNS name rebound to 127.0.0.1.
    assert_eq!(
        post(url, Some("evil.example:8765"), ""),
        "HTTP/1.1 403 Forbidden"
    );
}

#[test]
fn a_non_loopback_address_is_refused() {
    for address in ["0.0.0.0:8765", "192.168.1.10:8765", "example.com:80"] {
        let out = Sandbox::new()
            .command(&["serve", "--http", address])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{address}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("wamcp serve:"), "{address}: {stderr}");
    }
}

/// Logging to a closed stderr fails quietly: the request that logged a
/// warning (a refused Origin) still gets its answer.
#[test]
fn a_closed_log_does_not_cost_an_answer() {
    let sandbox = Sandbox::new();
    let server = sandbox.serve_http_with_log_closed();
    for _ in 0..3 {
        assert_eq!(
            post(&server.url, None, "Origin: https://evil.example\r\n"),
            "HTTP/1.1 403 Forbidden"
        );
    }
    assert_eq!(post(&server.url, None, ""), "HTTP/1.1 200 OK");
}
