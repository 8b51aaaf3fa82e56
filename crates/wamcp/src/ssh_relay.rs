//! `wamcp __egress-connect HOST PORT`: the `ProxyCommand` that carries a
//! confined git's SSH connection through the egress proxy.
//!
//! A command with the network has, on Linux, a network of its own whose one
//! way out is the proxy; ssh speaks no HTTP proxy protocol, so git's remotes
//! over SSH (`git@github.com:o/r.git`, the most common kind) would have no
//! route at all. ssh starts this relay instead of connecting itself; the
//! relay asks the proxy for a tunnel (`CONNECT`), which the proxy grants for
//! the hosts a project may reach only, and then copies bytes both ways.
//! Without a proxy in its environment (an unconfined run) it connects
//! directly, as ssh would have.

use std::io::{Read, Write};
use std::net::TcpStream;

/// The proxy the run was given, as `host:port`.
fn proxy_address(get: impl Fn(&str) -> Option<String>) -> Option<String> {
    ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"]
        .into_iter()
        .find_map(|name| get(name).filter(|v| !v.trim().is_empty()))
        .map(|url| {
            let url = url.trim();
            let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
            rest.trim_end_matches('/').to_string()
        })
}

/// Whether `host` is a DNS name or an IP address, in the characters those
/// use: anything else would be read as more than a host by the proxy.
fn is_host_name(host: &str) -> bool {
    !host.is_empty()
        && host.len() <= 253
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-_:[]".contains(c))
}

/// The target as `CONNECT` names it: an IPv6 literal in brackets.
fn authority(host: &str, port: u16) -> String {
    match host.contains(':') && !host.starts_with('[') {
        true => format!("[{host}]:{port}"),
        false => format!("{host}:{port}"),
    }
}

/// Reads the proxy's answer head; `Ok(())` for a 2xx status, else what the
/// proxy said (its body names the refused host and how to add it).
fn opened(stream: &mut TcpStream) -> Result<(), String> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() > 16 * 1024 {
            return Err("the proxy's answer has no end".into());
        }
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return Err("the proxy closed the connection".into()),
        }
    }
    let head = String::from_utf8_lossy(&head);
    let status = head.split_whitespace().nth(1).unwrap_or("");
    if status.starts_with('2') {
        return Ok(());
    }
    let mut body = String::new();
    let _ = stream.take(4096).read_to_string(&mut body);
    let status_line = head.lines().next().unwrap_or("").trim();
    Err(match body.trim() {
        "" => status_line.to_string(),
        body => body.to_string(),
    })
}

/// Connects to `host`:`port`, through the proxy when there is one.
fn connect(host: &str, port: u16) -> Result<TcpStream, String> {
    let target = authority(host, port);
    let Some(proxy) = proxy_address(|name| std::env::var(name).ok()) else {
        return TcpStream::connect(&target).map_err(|e| format!("connecting to {target}: {e}"));
    };
    let mut stream =
        TcpStream::connect(&proxy).map_err(|e| format!("connecting to the proxy {proxy}: {e}"))?;
    let request = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("asking the proxy: {e}"))?;
    opened(&mut stream)?;
    Ok(stream)
}

/// Copies stdin to the connection and the connection to stdout until the
/// far side closes.
fn relay(stream: TcpStream) -> std::io::Result<()> {
    let mut upstream = stream.try_clone()?;
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut upstream);
        let _ = upstream.shutdown(std::net::Shutdown::Write);
    });
    let mut downstream = stream;
    let mut out = std::io::stdout().lock();
    std::io::copy(&mut downstream, &mut out)?;
    out.flush()
}

/// Runs the subcommand for ssh's `%h` and `%p`.
pub fn main(host: &str, port: &str) -> std::process::ExitCode {
    let Ok(port) = port.parse::<u16>() else {
        return fail(&format!("'{port}' is not a port"));
    };
    if !is_host_name(host) {
        return fail(&format!("'{host}' is not a host name"));
    }
    match connect(host, port).and_then(|stream| relay(stream).map_err(|e| e.to_string())) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(why) => fail(&why),
    }
}

fn fail(why: &str) -> std::process::ExitCode {
    eprintln!("wamcp __egress-connect: {why}");
    std::process::ExitCode::FAILURE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_proxy_is_read_from_the_variables_a_run_is_given() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(
            proxy_address(env(&[("https_proxy", "http://127.0.0.1:39713")])).as_deref(),
            Some("127.0.0.1:39713")
        );
        assert_eq!(
            proxy_address(env(&[("ALL_PROXY", "http://[::1]:8080/")])).as_deref(),
            Some("[::1]:8080")
        );
        assert_eq!(proxy_address(env(&[("https_proxy", " ")])), None);
        assert_eq!(proxy_address(env(&[])), None);
        assert_eq!(authority("::1", 22), "[::1]:22");
        assert_eq!(authority("github.com", 22), "github.com:22");
        for host in ["github.com", "127.0.0.1", "::1", "[::1]", "my_host-1.corp"] {
            assert!(is_host_name(host), "{host}");
        }
        for host in ["", "a b", "a\r\nHost: x", "a$(id)", "a'b", "a/b"] {
            assert!(!is_host_name(host), "{host}");
        }
    }
}
