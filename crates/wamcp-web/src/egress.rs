//! The egress proxy: the one way out of a command's own network.
//!
//! A command granted the network runs in a network namespace whose only
//! reachable address is a listener wamcp holds. What connects there speaks
//! HTTP proxy (`CONNECT host:port`, or a plain `http://` request); the
//! proxy connects on its behalf only to the hosts the project uses, and
//! answers everything else with a 403 that names the host. Names are
//! resolved here, once, and the connection goes to the address resolved:
//! the command itself has no DNS, so a name cannot carry data out either.

use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinSet;
use wamcp_policy::egress::{
    Opening, ProxyRequest, STANDARD_PORTS, host_allowed, parse_request, tls_opening,
};

/// The largest request head the proxy reads.
const MAX_HEAD: usize = 16 * 1024;
/// How long a client may take to send its request head.
const HEAD_TIME: Duration = Duration::from_secs(30);
/// How long connecting to a host may take.
const CONNECT_TIME: Duration = Duration::from_secs(20);

/// One way out: a host, whether it may resolve to a private, loopback or
/// link-local address (a host the user or the project named may; a public
/// registry never does: an address in those ranges would be someone's
/// intranet or the cloud's metadata service), and the ports it is reached
/// at (`None`: any, for a host the user listed).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    host: String,
    private: bool,
    ports: Option<Vec<u16>>,
}

/// The hosts commands may reach. Shared, because the project's remotes are
/// added when a root is first seen.
#[derive(Clone, Debug, Default)]
pub struct EgressHosts(Arc<RwLock<Vec<Entry>>>);

impl EgressHosts {
    /// Adds `hosts` the user named: any port, any address.
    pub fn add(&self, hosts: impl IntoIterator<Item = String>) {
        self.insert(hosts.into_iter().map(|host| Entry {
            host,
            private: true,
            ports: None,
        }));
    }

    /// Adds public `hosts`, reached at public addresses and the standard
    /// ports only.
    pub fn add_public(&self, hosts: impl IntoIterator<Item = String>) {
        self.insert(hosts.into_iter().map(|host| Entry {
            host,
            private: false,
            ports: Some(STANDARD_PORTS.to_vec()),
        }));
    }

    /// Adds the hosts of the project's remotes: the standard ports and the
    /// one each remote's URL names, at any address (a remote may be on the
    /// intranet).
    pub fn add_remotes(&self, remotes: impl IntoIterator<Item = (String, u16)>) {
        self.insert(remotes.into_iter().map(|(host, port)| {
            let mut ports = STANDARD_PORTS.to_vec();
            if !ports.contains(&port) {
                ports.push(port);
            }
            Entry {
                host,
                private: true,
                ports: Some(ports),
            }
        }));
    }

    fn insert(&self, entries: impl Iterator<Item = Entry>) {
        let mut list = self.0.write().unwrap_or_else(|e| e.into_inner());
        for entry in entries {
            if !list.contains(&entry) {
                list.push(entry);
            }
        }
    }

    /// The hosts, in the order they were first added.
    pub fn list(&self) -> Vec<String> {
        let list = self.0.read().unwrap_or_else(|e| e.into_inner());
        let mut hosts: Vec<String> = Vec::new();
        for entry in list.iter() {
            if !hosts.iter().any(|h| h.eq_ignore_ascii_case(&entry.host)) {
                hosts.push(entry.host.clone());
            }
        }
        hosts
    }

    /// Whether `host` may be reached at `port`.
    pub fn reaches(&self, host: &str, port: u16) -> bool {
        self.allows(host, port).is_some()
    }

    /// `None` when no entry lets `host` be reached at `port`, else whether
    /// one of those lets it reach private addresses.
    fn allows(&self, host: &str, port: u16) -> Option<bool> {
        let list = self.0.read().unwrap_or_else(|e| e.into_inner());
        let fitting: Vec<&Entry> = list
            .iter()
            .filter(|e| host_allowed(host, std::slice::from_ref(&e.host)))
            .filter(|e| e.ports.as_ref().is_none_or(|ports| ports.contains(&port)))
            .collect();
        (!fitting.is_empty()).then(|| fitting.iter().any(|e| e.private))
    }
}

/// The proxy: the hosts commands may reach.
#[derive(Clone, Debug)]
pub struct EgressProxy {
    hosts: EgressHosts,
}

/// One command's proxying: dropping it closes the listener and every
/// connection still open.
pub struct ProxyRun {
    accept: tokio::task::JoinHandle<()>,
    refused: Arc<Mutex<Vec<String>>>,
}

impl Drop for ProxyRun {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

impl ProxyRun {
    /// The hosts refused so far, each once.
    pub fn refused(&self) -> Vec<String> {
        self.refused
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl EgressProxy {
    /// A proxy to `hosts`.
    pub fn new(hosts: EgressHosts) -> EgressProxy {
        EgressProxy { hosts }
    }

    /// The hosts it lets commands reach.
    pub fn hosts(&self) -> &EgressHosts {
        &self.hosts
    }

    /// Proxies what `listener` (non-blocking) accepts, on the current
    /// runtime, until the returned run is dropped, keeping `closed_ports`
    /// (wamcp's own listeners) on loopback closed. `granted` are the hosts
    /// and ports the user let this one run reach besides the listed ones.
    pub fn serve(
        &self,
        listener: std::net::TcpListener,
        closed_ports: Vec<u16>,
        granted: Vec<(String, u16)>,
    ) -> std::io::Result<ProxyRun> {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        let refused = Arc::new(Mutex::new(Vec::new()));
        let run_hosts = EgressHosts::default();
        run_hosts.insert(
            self.hosts
                .0
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .cloned(),
        );
        // An address the user saw is reached as it is; a name only at
        // public addresses, so that one whose DNS answer changes after the
        // yes (to the cloud's metadata service, the intranet) reaches
        // nothing the user did not see.
        run_hosts.insert(granted.into_iter().map(|(host, port)| Entry {
            private: host.parse::<std::net::IpAddr>().is_ok(),
            host,
            ports: Some(vec![port]),
        }));
        let proxy = EgressProxy { hosts: run_hosts };
        let noted = refused.clone();
        let closed = Arc::new(closed_ports);
        let accept = tokio::spawn(async move {
            // Dropped with this task: every connection ends with the run.
            let mut connections = JoinSet::new();
            while let Ok((client, _)) = listener.accept().await {
                connections.spawn(proxy.clone().handle(client, noted.clone(), closed.clone()));
                while connections.try_join_next().is_some() {}
            }
        });
        Ok(ProxyRun { accept, refused })
    }

    async fn handle(
        self,
        mut client: TcpStream,
        refused: Arc<Mutex<Vec<String>>>,
        closed: Arc<Vec<u16>>,
    ) {
        let Ok(Ok((head, rest))) = tokio::time::timeout(HEAD_TIME, read_head(&mut client)).await
        else {
            return;
        };
        let request = match parse_request(&head) {
            Ok(request) => request,
            Err(why) => return answer(&mut client, "400 Bad Request", &why).await,
        };
        // Plain HTTP is proxied request by request, with the target's own
        // `Host`; a tunnel to port 80 would carry any `Host` to a front end
        // that routes by it.
        if request.tunnel && request.port == 80 {
            let why = "wamcp: plain HTTP goes through the proxy as http:// requests, not a CONNECT tunnel";
            return answer(&mut client, "403 Forbidden", why).await;
        }
        let Some(private) = self.hosts.allows(&request.host, request.port) else {
            let why = match self.hosts.allows(&request.host, 443) {
                // Listed, but reached at another port than its own.
                Some(_) => {
                    let target = format!("{}:{}", request.host, request.port);
                    note_refused(&refused, &target);
                    format!(
                        "wamcp: {target} is not a port this project's commands may reach on that host \
                         (the web's and SSH's, and a remote's own; WAMCP_COMMAND_HOSTS lists a host with \
                         every port)"
                    )
                }
                None => {
                    note_refused(&refused, &request.host);
                    format!(
                        "wamcp: {} is not one of the hosts this project's commands may reach (WAMCP_COMMAND_HOSTS adds one)",
                        request.host
                    )
                }
            };
            return answer(&mut client, "403 Forbidden", &why).await;
        };
        let mut upstream = match connect(&request, &closed, private).await {
            Ok(upstream) => upstream,
            Err(why) => return answer(&mut client, "502 Bad Gateway", &why).await,
        };
        let Some(head) = &request.origin_head else {
            let established = b"HTTP/1.1 200 Connection Established\r\n\r\n";
            if client.write_all(established).await.is_ok() {
                tunnel(client, upstream, rest, &request.host, &refused).await;
            }
            return;
        };
        if upstream.write_all(head.as_bytes()).await.is_err()
            || upstream.write_all(&rest).await.is_err()
        {
            return;
        }
        let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
    }
}

/// The most a client may send before its TLS hello is complete.
const MAX_HELLO: usize = 16 * 1024 + 5;

/// Carries a tunnel to `host` both ways. What the server sends flows at
/// once (a protocol may wait for the server to speak first); what the
/// client sends flows only once its opening is read: a TLS hello naming
/// another server than `host` ends the tunnel, since a content delivery
/// network in front of a listed host would route it to that other site.
async fn tunnel(
    client: TcpStream,
    upstream: TcpStream,
    rest: Vec<u8>,
    host: &str,
    refused: &Mutex<Vec<String>>,
) {
    let (mut from_client, mut to_client) = client.into_split();
    let (mut from_upstream, mut to_upstream) = upstream.into_split();
    let up = async {
        let Some(opening) = read_opening(&mut from_client, rest).await else {
            return false;
        };
        if let Some(refusal) = refused_opening(&tls_opening(&opening), host) {
            if let Some(name) = refusal {
                note_refused(refused, &name);
            }
            return false;
        }
        if to_upstream.write_all(&opening).await.is_err() {
            return false;
        }
        let _ = tokio::io::copy(&mut from_client, &mut to_upstream).await;
        let _ = to_upstream.shutdown().await;
        true
    };
    let down = async {
        let _ = tokio::io::copy(&mut from_upstream, &mut to_client).await;
        let _ = to_client.shutdown().await;
    };
    tokio::pin!(up, down);
    tokio::select! {
        carried = &mut up => if carried { (&mut down).await },
        () = &mut down => {}
    }
}

/// Why a tunnel to `host` that opens with `opening` ends there: `Some`
/// with the name to report, or with none for bytes that are no readable
/// TLS; `None` when it goes on. A TLS hello naming another server, or
/// none for a named host, would let a front end serving many sites pick
/// another one.
fn refused_opening(opening: &Opening, host: &str) -> Option<Option<String>> {
    match opening {
        Opening::Hello(Some(name)) if !name.trim_end_matches('.').eq_ignore_ascii_case(host) => {
            Some(Some(name.clone()))
        }
        Opening::Hello(None) if host.parse::<std::net::IpAddr>().is_err() => {
            Some(Some(host.to_string()))
        }
        Opening::Malformed | Opening::Incomplete(_) => Some(None),
        Opening::Hello(_) | Opening::NotTls => None,
    }
}

/// The client's first bytes, `read` included: a whole TLS hello, or
/// whatever arrived first when it is no TLS. `None` when the client ends
/// or sends more than a hello may be before it is whole.
async fn read_opening(
    client: &mut tokio::net::tcp::OwnedReadHalf,
    read: Vec<u8>,
) -> Option<Vec<u8>> {
    let mut opening = read;
    let mut chunk = [0u8; 4096];
    loop {
        match tls_opening(&opening) {
            Opening::Incomplete(needed) if needed <= MAX_HELLO => {
                let n = client.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
                opening.extend_from_slice(&chunk[..n]);
            }
            Opening::Incomplete(_) => return None,
            _ => return Some(opening),
        }
    }
}

/// Connects to the host of `request` at an address resolved here, never
/// to a `closed` port on loopback, and to a private, loopback or
/// link-local address only when `private`.
async fn connect(
    request: &ProxyRequest,
    closed: &[u16],
    private: bool,
) -> Result<TcpStream, String> {
    {
        let addresses: Vec<std::net::SocketAddr> =
            tokio::net::lookup_host((request.host.as_str(), request.port))
                .await
                .map_err(|e| format!("wamcp: {} did not resolve: {e}", request.host))?
                .filter(|a| !(a.ip().is_loopback() && closed.contains(&a.port())))
                .filter(|a| private || wamcp_policy::url_policy::address_class(a.ip()).is_none())
                .collect();
        let mut last = format!(
            "wamcp: {} has no address it may be reached at",
            request.host
        );
        for address in addresses {
            match tokio::time::timeout(CONNECT_TIME, TcpStream::connect(address)).await {
                Ok(Ok(stream)) => return Ok(stream),
                Ok(Err(e)) => last = format!("wamcp: connecting to {address} failed: {e}"),
                Err(_) => last = format!("wamcp: connecting to {address} timed out"),
            }
        }
        Err(last)
    }
}

fn note_refused(refused: &Mutex<Vec<String>>, host: &str) {
    let mut noted = refused.lock().unwrap_or_else(|e| e.into_inner());
    if !noted.iter().any(|h| h == host) {
        noted.push(host.to_string());
    }
}

/// Reads up to the blank line that ends a request head; returns the head
/// and any bytes read past it.
async fn read_head(client: &mut TcpStream) -> std::io::Result<(String, Vec<u8>)> {
    let mut buffer = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    loop {
        let read = client.read(&mut chunk).await?;
        if read == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buffer.split_off(end + 4);
            let head = String::from_utf8(buffer)
                .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidData))?;
            return Ok((head, rest));
        }
        if buffer.len() > MAX_HEAD {
            return Err(std::io::ErrorKind::InvalidData.into());
        }
    }
}

/// Answers the client with `status` and `why`, then closes.
async fn answer(client: &mut TcpStream, status: &str, why: &str) {
    let body = format!("{why}\n");
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = client.write_all(response.as_bytes()).await;
    let _ = client.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncBufReadExt;

    /// A loopback server that answers one request with what it received.
    async fn echo_server() -> u16 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let (head, _) = read_head(&mut stream).await.unwrap();
                    let body = head.replace("\r\n", "|");
                    let reply = format!(
                        "HTTP/1.0 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = stream.write_all(reply.as_bytes()).await;
                });
            }
        });
        port
    }

    async fn proxy(listed: &[&str], closed: Vec<u16>) -> (ProxyRun, u16) {
        let hosts = EgressHosts::default();
        hosts.add(listed.iter().map(|h| h.to_string()));
        // A public registry that resolves to loopback is not reached there.
        hosts.add_public(["localhost".to_string()]);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        (
            EgressProxy::new(hosts)
                .serve(listener, closed, Vec::new())
                .unwrap(),
            port,
        )
    }

    async fn exchange(port: u16, request: &str) -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = String::new();
        let _ = tokio::io::BufReader::new(stream)
            .read_to_string(&mut answer)
            .await;
        answer
    }

    #[tokio::test]
    async fn listed_hosts_are_reached_and_others_refused_by_name() {
        let server = echo_server().await;
        let (run, port) = proxy(&["127.0.0.1"], Vec::new()).await;
        let plain = exchange(
            port,
            &format!("GET http://127.0.0.1:{server}/x?y HTTP/1.1\r\nHost: h\r\nProxy-Authorization: z\r\n\r\n"),
        )
        .await;
        assert!(plain.starts_with("HTTP/1.0 200 OK"), "{plain}");
        assert!(
            plain.ends_with(&format!(
                "GET /x?y HTTP/1.1|Host: 127.0.0.1:{server}|Connection: close||"
            )),
            "{plain}"
        );
        let refused = exchange(port, "CONNECT evil.example:443 HTTP/1.1\r\n\r\n").await;
        assert!(refused.starts_with("HTTP/1.1 403 Forbidden"), "{refused}");
        assert!(
            refused.contains("evil.example is not one of the hosts"),
            "{refused}"
        );
        let inward = exchange(port, "CONNECT localhost:443 HTTP/1.1\r\n\r\n").await;
        assert!(inward.starts_with("HTTP/1.1 502 Bad Gateway"), "{inward}");
        let bad = exchange(port, "GET /relative HTTP/1.1\r\n\r\n").await;
        assert!(bad.starts_with("HTTP/1.1 400 Bad Request"), "{bad}");
        assert_eq!(run.refused(), ["evil.example"]);
    }

    /// The opening bytes of a real TLS client connecting to `name`.
    fn client_hello(name: &str) -> Vec<u8> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth();
        let name = rustls::pki_types::ServerName::try_from(name.to_string()).unwrap();
        let mut connection = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
        let mut hello = Vec::new();
        connection.write_tls(&mut hello).unwrap();
        hello
    }

    /// A loopback server that reads each connection to its end; the bytes
    /// and the connections it has finished so far.
    async fn counting_server() -> (u16, Arc<Mutex<(usize, usize)>>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new((0, 0)));
        let counted = seen.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let counted = counted.clone();
                tokio::spawn(async move {
                    let mut bytes = Vec::new();
                    let _ = stream.read_to_end(&mut bytes).await;
                    let mut seen = counted.lock().unwrap();
                    *seen = (seen.0 + bytes.len(), seen.1 + 1);
                });
            }
        });
        (port, seen)
    }

    /// Sends `opening` through a tunnel to the counting server and waits
    /// until the server has seen the connection end.
    async fn through_tunnel(proxy: u16, server: u16, seen: &Mutex<(usize, usize)>, opening: &[u8]) {
        let before = seen.lock().unwrap().1;
        let mut stream = TcpStream::connect(("127.0.0.1", proxy)).await.unwrap();
        let connect = format!("CONNECT 127.0.0.1:{server} HTTP/1.1\r\n\r\n");
        stream
            .write_all(&[connect.as_bytes(), opening].concat())
            .await
            .unwrap();
        let _ = stream.shutdown().await;
        let _ = stream.read_to_end(&mut Vec::new()).await;
        while seen.lock().unwrap().1 == before {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    #[test]
    fn what_a_tunnel_may_open_with() {
        let named = |n: &str| Opening::Hello(Some(n.to_string()));
        let cases = [
            (named("registry.npmjs.org"), "registry.npmjs.org", None),
            (named("registry.npmjs.org."), "registry.npmjs.org", None),
            (named("Registry.NPMJS.org"), "registry.npmjs.org", None),
            (
                named("attacker.example"),
                "registry.npmjs.org",
                Some(Some("attacker.example")),
            ),
            (
                Opening::Hello(None),
                "registry.npmjs.org",
                Some(Some("registry.npmjs.org")),
            ),
            (Opening::Hello(None), "127.0.0.1", None),
            (Opening::NotTls, "github.com", None),
            (Opening::Malformed, "github.com", Some(None)),
        ];
        for (opening, host, expected) in cases {
            let expected = expected.map(|name| name.map(String::from));
            assert_eq!(
                refused_opening(&opening, host),
                expected,
                "{opening:?} {host}"
            );
        }
    }

    /// A tunnel to a listed host whose TLS hello names another server (a
    /// site behind the same content delivery network) carries nothing;
    /// one naming no other server carries the handshake.
    #[tokio::test]
    async fn a_tunnel_whose_tls_names_another_site_carries_nothing() {
        let (server, seen) = counting_server().await;
        let (run, port) = proxy(&["127.0.0.1"], Vec::new()).await;
        through_tunnel(port, server, &seen, &client_hello("attacker.example")).await;
        assert_eq!(seen.lock().unwrap().0, 0);
        assert_eq!(run.refused(), ["attacker.example"]);
        // An address as the name: TLS sends none, and the hello goes on.
        let hello = client_hello("127.0.0.1");
        through_tunnel(port, server, &seen, &hello).await;
        assert_eq!(seen.lock().unwrap().0, hello.len());
        // Not TLS at all (SSH): carried as it is.
        through_tunnel(port, server, &seen, b"SSH-2.0-OpenSSH_9.2\r\n").await;
        assert_eq!(seen.lock().unwrap().0, hello.len() + 21);
        // No tunnel to port 80: plain HTTP goes request by request.
        let refused = exchange(port, "CONNECT 127.0.0.1:80 HTTP/1.1\r\n\r\n").await;
        assert!(refused.starts_with("HTTP/1.1 403"), "{refused}");
    }

    /// A remote is reached at its own port and the standard ones, not at
    /// every service its host runs; a host the user listed is.
    #[tokio::test]
    async fn a_remote_is_reached_at_its_own_port_only() {
        let server = echo_server().await;
        let other = echo_server().await;
        let hosts = EgressHosts::default();
        hosts.add_remotes([("127.0.0.1".to_string(), server)]);
        hosts.add(["localhost".to_string()]);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let proxy = EgressProxy::new(hosts);
        let run = proxy.serve(listener, Vec::new(), Vec::new()).unwrap();
        let own = format!("GET http://127.0.0.1:{server}/ HTTP/1.1\r\n\r\n");
        assert!(exchange(port, &own).await.starts_with("HTTP/1.0 200 OK"));
        let elsewhere = format!("CONNECT 127.0.0.1:{other} HTTP/1.1\r\n\r\n");
        let refused = exchange(port, &elsewhere).await;
        assert!(refused.starts_with("HTTP/1.1 403 Forbidden"), "{refused}");
        assert!(refused.contains("is not a port"), "{refused}");
        let listed = format!("GET http://localhost:{other}/ HTTP/1.1\r\n\r\n");
        assert!(exchange(port, &listed).await.starts_with("HTTP/1.0 200 OK"));
        assert_eq!(run.refused(), [format!("127.0.0.1:{other}")]);
        // The user's yes for one command reaches that host and port, in
        // that run only.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let granted = vec![("127.0.0.1".to_string(), other)];
        let _run = proxy.serve(listener, Vec::new(), granted).unwrap();
        let answer = exchange(
            port,
            &format!("GET http://127.0.0.1:{other}/ HTTP/1.1\r\n\r\n"),
        )
        .await;
        assert!(answer.starts_with("HTTP/1.0 200 OK"), "{answer}");
        assert!(!proxy.hosts().reaches("127.0.0.1", other));
        // A name granted is reached at public addresses only: one that
        // resolves to loopback (or rebinds there) reaches nothing.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let granted = vec![("localhost".to_string(), other)];
        let unlisted = EgressProxy::new(EgressHosts::default());
        let _run = unlisted.serve(listener, Vec::new(), granted).unwrap();
        let named = format!("GET http://localhost:{other}/ HTTP/1.1\r\n\r\n");
        let answer = exchange(port, &named).await;
        assert!(answer.starts_with("HTTP/1.1 502"), "{answer}");
    }

    #[tokio::test]
    async fn a_tunnel_carries_bytes_both_ways_but_never_to_a_closed_port() {
        let server = echo_server().await;
        let (_run, port) = proxy(&["127.0.0.1"], vec![server + 1]).await;
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        stream
            .write_all(
                format!("CONNECT 127.0.0.1:{server} HTTP/1.1\r\n\r\nGET / HTTP/1.0\r\n\r\n")
                    .as_bytes(),
            )
            .await
            .unwrap();
        let mut lines = tokio::io::BufReader::new(stream).lines();
        assert_eq!(
            lines.next_line().await.unwrap().unwrap(),
            "HTTP/1.1 200 Connection Established"
        );
        let mut rest = Vec::new();
        while let Ok(Some(line)) = lines.next_line().await {
            rest.push(line);
        }
        assert!(
            rest.iter().any(|l| l.contains("GET / HTTP/1.0")),
            "{rest:?}"
        );
        let (_run, port) = proxy(&["127.0.0.1"], vec![server]).await;
        let closed = exchange(
            port,
            &format!("CONNECT 127.0.0.1:{server} HTTP/1.1\r\n\r\n"),
        )
        .await;
        assert!(closed.starts_with("HTTP/1.1 502 Bad Gateway"), "{closed}");
    }
}
