//! A private HTTPS network on loopback for the web tests.
//!
//! One TLS server answers for every test host name (its certificate, signed
//! by a throw-away CA, names them all); a trap server stands for "a private
//! address" and counts every connection that reaches it, so a test can prove
//! a refused address was never contacted; a scripted resolver gives each name
//! its (possibly hostile) answer and counts lookups.

use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use wamcp_web::client::{TestNetwork, Timeouts, WebClient};
use wamcp_web::resolve::{Lookup, NameSource};

pub const NAMES: &[&str] = &[
    "github.com",
    "api.github.com",
    "raw.githubusercontent.com",
    "objects.githubusercontent.com",
    "release-assets.githubusercontent.com",
    "premake.github.io",
    "docs.test",
    "evil.test",
    "mixed.test",
    "void.test",
    "many.test",
    "lite.duckduckgo.com",
];

/// What the server does for one request.
pub enum Reply {
    /// These bytes, then close.
    Raw(Vec<u8>),
    /// These header bytes, then body bytes forever.
    Endless(Vec<u8>),
    /// These bytes, then hold the connection open without a word.
    Stall(Vec<u8>),
}

pub type Router = fn(path: &str) -> Reply;

pub struct Net {
    pub client: WebClient,
    pub server_hits: Arc<AtomicUsize>,
    pub trap_hits: Arc<AtomicUsize>,
    pub lookups: Arc<Mutex<Vec<String>>>,
    pub server: SocketAddr,
    pub trap: SocketAddr,
}

impl Net {
    pub fn lookups_of(&self, host: &str) -> usize {
        self.lookups
            .lock()
            .unwrap()
            .iter()
            .filter(|h| *h == host)
            .count()
    }

    pub fn trap_hits(&self) -> usize {
        self.trap_hits.load(Ordering::SeqCst)
    }
}

/// Starts the server and the trap, and a client that resolves `NAMES`:
/// most to the server; `mixed.test` and `release-assets…` to the server
/// *and* the trap; `objects…` to a private address; `premake.github.io` to
/// the server on its first lookup and to the trap afterwards (rebinding);
/// `void.test` to nothing; `many.test` to forty copies of the server.
pub async fn start(router: Router) -> Net {
    let (ca, server_config) = pki();
    let server_hits = Arc::new(AtomicUsize::new(0));
    let server = serve_tls(server_config, router, server_hits.clone()).await;
    let trap_hits = Arc::new(AtomicUsize::new(0));
    let trap = serve_trap(trap_hits.clone()).await;
    let lookups = Arc::new(Mutex::new(Vec::new()));
    let names = Arc::new(ScriptedNames {
        server,
        trap,
        lookups: lookups.clone(),
    });
    let client = WebClient::for_test_network(TestNetwork {
        roots: vec![ca],
        names,
        stand_ins: vec![server],
        timeouts: Timeouts {
            request: Duration::from_secs(3),
            idle: Duration::from_secs(2),
            connect: Duration::from_secs(2),
        },
    })
    .expect("test client");
    Net {
        client,
        server_hits,
        trap_hits,
        lookups,
        server,
        trap,
    }
}

/// A client for the same network that trusts a different, fresh CA.
pub fn client_with_foreign_ca(net: &Net) -> WebClient {
    let (foreign_ca, _) = pki();
    WebClient::for_test_network(TestNetwork {
        roots: vec![foreign_ca],
        names: Arc::new(ScriptedNames {
            server: net.server,
            trap: net.trap,
            lookups: net.lookups.clone(),
        }),
        stand_ins: vec![net.server],
        timeouts: Timeouts::default(),
    })
    .expect("test client")
}

struct ScriptedNames {
    server: SocketAddr,
    trap: SocketAddr,
    lookups: Arc<Mutex<Vec<String>>>,
}

impl NameSource for ScriptedNames {
    fn lookup(&self, host: &str) -> Lookup {
        let earlier = {
            let mut seen = self.lookups.lock().unwrap();
            let earlier = seen.iter().filter(|h| *h == host).count();
            seen.push(host.to_string());
            earlier
        };
        let answer = match host {
            "mixed.test" | "release-assets.githubusercontent.com" => vec![self.server, self.trap],
            "objects.githubusercontent.com" => vec!["10.0.0.1:443".parse().unwrap()],
            "premake.github.io" if earlier > 0 => vec![self.trap],
            "void.test" => Vec::new(),
            "many.test" => vec![self.server; 40],
            _ => vec![self.server],
        };
        Box::pin(async move { Ok(answer) })
    }
}

fn pki() -> (CertificateDer<'static>, Arc<rustls::ServerConfig>) {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let leaf_key = KeyPair::generate().unwrap();
    let names: Vec<String> = NAMES.iter().map(|n| n.to_string()).collect();
    let leaf = CertificateParams::new(names)
        .unwrap()
        .signed_by(&leaf_key, &issuer)
        .unwrap();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![leaf.der().clone()], key)
    .unwrap();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    (ca_cert.der().clone(), Arc::new(config))
}

async fn serve_tls(
    config: Arc<rustls::ServerConfig>,
    router: Router,
    hits: Arc<AtomicUsize>,
) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            hits.fetch_add(1, Ordering::SeqCst);
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let Some(path) = read_request_path(&mut tls).await else {
                    return;
                };
                match router(&path) {
                    Reply::Raw(bytes) => {
                        let _ = tls.write_all(&bytes).await;
                        let _ = tls.shutdown().await;
                    }
                    Reply::Endless(head) => {
                        let _ = tls.write_all(&head).await;
                        let chunk = vec![b'x'; 64 * 1024];
                        while tls.write_all(&chunk).await.is_ok() {}
                    }
                    Reply::Stall(bytes) => {
                        let _ = tls.write_all(&bytes).await;
                        let _ = tls.flush().await;
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                    }
                }
            });
        }
    });
    address
}

async fn read_request_path(stream: &mut (impl AsyncReadExt + Unpin)) -> Option<String> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).await.ok()? == 0 || head.len() > 64 * 1024 {
            return None;
        }
        head.push(byte[0]);
    }
    let text = String::from_utf8_lossy(&head);
    Some(text.split_whitespace().nth(1)?.to_string())
}

/// Counts connections and says nothing.
async fn serve_trap(hits: Arc<AtomicUsize>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            hits.fetch_add(1, Ordering::SeqCst);
            drop(tcp);
        }
    });
    address
}

/// A complete response with a correct Content-Length.
pub fn respond(status: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
    let mut bytes = format!(
        "HTTP/1.1 {status}\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    )
    .into_bytes();
    for (name, value) in headers {
        bytes.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    bytes.extend_from_slice(b"\r\n");
    bytes.extend_from_slice(body);
    Reply::Raw(bytes)
}

/// A response head written by hand (for lies about length), then `body`.
pub fn raw(head: &str, body: &[u8]) -> Reply {
    let mut bytes = head.replace('\n', "\r\n").into_bytes();
    bytes.extend_from_slice(b"\r\n");
    bytes.extend_from_slice(body);
    Reply::Raw(bytes)
}

pub fn redirect(location: &str) -> Reply {
    respond("302 Found", &[("location", location)], b"")
}

/// A gzip stream that inflates to `size` zero bytes.
pub fn gzip_of_zeros(size: usize) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let block = vec![0u8; 1 << 20];
    let mut left = size;
    while left > 0 {
        let n = left.min(block.len());
        encoder.write_all(&block[..n]).unwrap();
        left -= n;
    }
    encoder.finish().unwrap()
}

/// Hosts to allow in a `HostRule::Listed`.
pub fn listed(hosts: &[&str]) -> Vec<String> {
    hosts.iter().map(|h| h.to_string()).collect()
}
