//! `wamcp serve --http`: streamable HTTP on loopback with a bearer token;
//! requests without it, browser origins and foreign Host names refused.

use crate::common::Sandbox;
use std::io::{Read, Write};

/// One raw HTTP/1.1 POST to the server at `url` with this Host header and
/// extra headers; returns the status line. The body is an `initialize`
/// request, or empty for requests the server refuses on their headers: a
/// server that closes with an unread body resets the connection, and the
/// reset can overtake its answer.
fn post(url: &str, host_header: Option<&str>, extra_headers: &str) -> String {
    request("POST", url, host_header, extra_headers)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// The whole raw response to one request.
fn request(method: &str, url: &str, host_header: Option<&str>, extra_headers: &str) -> String {
    let rest = url.trim_start_matches("http://");
    let (address, path) = rest.split_at(rest.find('/').unwrap());
    let refused = host_header.is_some_and(|h| h.contains("evil"))
        || extra_headers.contains("evil")
        || !extra_headers.contains("Authorization")
        || method != "POST";
    let body = if refused {
        ""
    } else {
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#
    };
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{extra_headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        host_header.unwrap_or(address),
        body.len()
    );
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    // A refusal may close the connection at once; what arrived is enough.
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    String::from_utf8_lossy(&response).into_owned()
}

fn bearer(token: &str) -> String {
    format!("Authorization: Bearer {token}\r\n")
}

#[test]
fn loopback_http_serves_and_refuses_browser_origins_and_foreign_hosts() {
    let sandbox = Sandbox::new();
    let server = sandbox.serve_http();
    let url = &server.url;
    let auth = bearer(&server.token);
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );
    assert_eq!(post(url, None, &auth), "HTTP/1.1 200 OK");
    assert_eq!(post(url, Some("localhost"), &auth), "HTTP/1.1 200 OK");
    // A web page cannot drive the server through the user's browser.
    assert_eq!(
        post(
            url,
            None,
            &format!("{auth}Origin: https://evil.example\r\n")
        ),
        "HTTP/1.1 403 Forbidden"
    );
    // Nor through a DNS name rebound to 127.0.0.1.
    assert_eq!(
        post(url, Some("evil.example:8765"), &auth),
        "HTTP/1.1 403 Forbidden"
    );
    // The server's own loopback origin, on its own port, is itself.
    let port = url
        .trim_start_matches("http://127.0.0.1:")
        .split('/')
        .next()
        .unwrap();
    for origin in [
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
    ] {
        assert_eq!(
            post(url, None, &format!("{auth}Origin: {origin}\r\n")),
            "HTTP/1.1 200 OK",
            "{origin}"
        );
    }
    assert_eq!(
        post(url, None, &format!("{auth}Origin: http://127.0.0.1:1\r\n")),
        "HTTP/1.1 403 Forbidden"
    );
}

/// Another program on the machine cannot use the server without the
/// token: none, a wrong one, or the right one in the wrong scheme.
#[test]
fn requests_without_the_token_are_refused() {
    let sandbox = Sandbox::new();
    let server = sandbox.serve_http();
    let url = &server.url;
    let wrong = "0".repeat(64);
    for headers in [
        String::new(),
        bearer(&wrong),
        format!("Authorization: Basic {}\r\n", server.token),
        bearer(&server.token[..63]),
    ] {
        let response = request("POST", url, None, &headers);
        assert!(
            response.starts_with("HTTP/1.1 401 Unauthorized"),
            "{headers}: {response}"
        );
        assert!(
            response
                .to_ascii_lowercase()
                .contains("www-authenticate: bearer"),
            "{response}"
        );
    }
    // That refusal is how install-task knows its server is the one that
    // answers.
    let address: std::net::SocketAddr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    assert!(wamcp::logon_task::wamcp_within(
        address,
        std::time::Duration::ZERO
    ));
    // The token file is the user's alone.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(sandbox.http_token_file())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

/// A session ends with DELETE answered 204 (SDKs warn on 202).
#[test]
fn ending_a_session_is_answered_no_content() {
    let sandbox = Sandbox::new();
    let server = sandbox.serve_http();
    let auth = bearer(&server.token);
    let opened = request("POST", &server.url, None, &auth);
    let session = session_of(&opened).unwrap_or_else(|| panic!("no session id: {opened}"));
    let closed = request(
        "DELETE",
        &server.url,
        None,
        &format!("{auth}Mcp-Session-Id: {session}\r\n"),
    );
    assert!(closed.starts_with("HTTP/1.1 204 No Content"), "{closed}");
}

fn session_of(response: &str) -> Option<String> {
    response.lines().find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.eq_ignore_ascii_case("mcp-session-id")
            .then(|| value.trim().to_string())
    })
}

/// Peak and current resident memory of a process, in KiB.
#[cfg(target_os = "linux")]
fn memory_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    };
    (field("VmHWM:"), field("VmRSS:"))
}

/// Opens a session and ends it; true when both were answered as they
/// should be.
#[cfg(target_os = "linux")]
fn open_and_end(url: &str, auth: &str) -> Result<(), String> {
    let opened = request("POST", url, None, auth);
    let first_line = |r: &str| r.lines().next().unwrap_or("(nothing)").to_string();
    let session = match session_of(&opened) {
        Some(session) if opened.starts_with("HTTP/1.1 200") => session,
        _ => return Err(format!("initialize: {}", first_line(&opened))),
    };
    let closed = request(
        "DELETE",
        url,
        None,
        &format!("{auth}Mcp-Session-Id: {session}\r\n"),
    );
    if closed.starts_with("HTTP/1.1 204") {
        Ok(())
    } else {
        Err(format!("delete: {}", first_line(&closed)))
    }
}

/// 1,000 clients at once, each opening a session and ending it, three
/// times over: every one is answered. Then 3,000 more sessions, four at a
/// time: what a session holds is given back when it ends, so resident
/// memory stays where the waves left it. The figures are printed.
///
/// The leak is judged on the steady part, not on the waves' peaks: how
/// high a wave's peak climbs depends on how many sessions the machine
/// keeps in flight at once, which a loaded CI run changes from wave to
/// wave (one such run climbed 222, 476, 511, 626, 656 MiB without a
/// leak). Four clients in turn keep that number constant, and a kept
/// session (some 65 KiB) would add about 190 MiB over 3,000.
#[cfg(target_os = "linux")]
#[test]
fn a_thousand_concurrent_clients_are_all_served_in_bounded_memory() {
    let sandbox = Sandbox::new();
    let server = sandbox.serve_http();
    let auth = bearer(&server.token);
    let in_parallel = |clients: usize, each: usize| {
        let clients: Vec<_> = (0..clients)
            .map(|_| {
                let (url, auth) = (server.url.clone(), auth.clone());
                std::thread::Builder::new()
                    .stack_size(64 * 1024)
                    .spawn(move || {
                        (0..each)
                            .filter_map(|_| open_and_end(&url, &auth).err())
                            .collect::<Vec<_>>()
                    })
                    .unwrap()
            })
            .collect();
        let failures: Vec<String> = clients
            .into_iter()
            .flat_map(|c| c.join().unwrap())
            .collect();
        assert!(
            failures.is_empty(),
            "{} failed: {failures:?}",
            failures.len()
        );
    };
    let (start, _) = memory_kib(server.pid());
    let mut peaks = Vec::new();
    for _ in 0..3 {
        in_parallel(1000, 1);
        peaks.push(memory_kib(server.pid()).0);
    }
    let (_, before) = memory_kib(server.pid());
    in_parallel(4, 750);
    let (_, after) = memory_kib(server.pid());
    println!(
        "http: start {start} KiB; peak after each wave of 1,000 concurrent sessions: {peaks:?} KiB; \
         resident before and after 3,000 sessions four at a time: {before} -> {after} KiB"
    );
    let growth_kib = after.saturating_sub(before);
    assert!(growth_kib <= 64 * 1024, "{before} -> {after} KiB");
}

/// `--no-token` is for loopback only, and then nothing is asked.
#[test]
fn no_token_serves_loopback_only() {
    let out = Sandbox::new()
        .command(&[
            "serve",
            "--http",
            "0.0.0.0:0",
            "--allow-remote",
            "--no-token",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("loopback addresses only"));
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
    let auth = bearer(&server.token);
    for _ in 0..3 {
        assert_eq!(
            post(
                &server.url,
                None,
                &format!("{auth}Origin: https://evil.example\r\n")
            ),
            "HTTP/1.1 403 Forbidden"
        );
    }
    assert_eq!(post(&server.url, None, &auth), "HTTP/1.1 200 OK");
}
