//! The one HTTPS client every fetching tool uses.
//!
//! Its connections go only to addresses the pinned resolver validated, it
//! never uses a proxy (a proxy would resolve names itself, behind the
//! policy), it follows redirects itself so every hop is checked again in the
//! same mode, and it stops reading a body at the cap instead of after it.

use crate::resolve::{AddressRefused, NameSource, NotResolved, PinnedResolver, SystemNames};
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::ServerCertVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::CertificateDer;
use std::error::Error as _;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use url::Url;
use wamcp_policy::limits::{DOWNLOAD_TIMEOUT_SECONDS, HTTP_TIMEOUT_SECONDS};
use wamcp_policy::url_policy::{HostRule, check_url};

/// Redirect hops followed before giving up.
pub const MAX_REDIRECTS: usize = 5;

/// The log target of the trail of requests that any public host may
/// answer (research mode). An arbitrary outbound GET is the channel a
/// prompt-injected page would use to carry data away, so each one is
/// written to stderr whatever the log level: detection, not prevention.
pub const AUDIT_TARGET: &str = "wamcp::audit";

/// Honest about who is asking; servers may log it and block it knowingly.
const USER_AGENT: &str = concat!(
    "wamcp/",
    env!("CARGO_PKG_VERSION"),
    " (+https://github.com/wamcp/wamcp)"
);

/// How long the client waits, by kind of wait.
#[derive(Clone, Copy, Debug)]
pub struct Timeouts {
    /// Whole request for a page or API answer: redirects, headers and body.
    pub request: Duration,
    /// A download fails when no byte arrives for this long; large files on
    /// slow links are fine as long as they keep moving.
    pub idle: Duration,
    /// Opening one connection, TLS handshake included.
    pub connect: Duration,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts {
            request: Duration::from_secs(HTTP_TIMEOUT_SECONDS),
            idle: Duration::from_secs(DOWNLOAD_TIMEOUT_SECONDS),
            connect: Duration::from_secs(10),
        }
    }
}

/// A private network for hermetic tests: trust only `roots`, resolve names
/// with `names`, and accept the loopback `stand_ins` as if they were public
/// addresses. Reachable only through this API; nothing the shipped binary
/// reads (environment, config, arguments) can build one.
pub struct TestNetwork {
    /// The only certificate authorities trusted.
    pub roots: Vec<CertificateDer<'static>>,
    /// Answers name lookups instead of the system resolver.
    pub names: Arc<dyn NameSource>,
    /// Loopback addresses (with their ports) accepted as if they were public.
    pub stand_ins: Vec<SocketAddr>,
    /// The client's timeouts; tests shorten them to reach a failure quickly.
    pub timeouts: Timeouts,
}

/// Why a request gave no usable response.
#[derive(Debug, PartialEq)]
pub enum FetchError {
    /// The URL, a redirect target, or an address the host resolved to is
    /// not allowed. The message names the host or the address class.
    Refused(String),
    /// The body is larger than `limit` bytes (declared or counted).
    TooLarge {
        /// The cap, in bytes.
        limit: u64,
        /// The size the server declared, when that is what exceeded the cap.
        declared: Option<u64>,
    },
    /// The server answered with a status that is not success.
    Status {
        /// The HTTP status code.
        code: u16,
        /// The URL that answered with it, after redirects.
        url: String,
    },
    /// A deadline set with [`within`] passed; it holds that deadline.
    TimedOut(Duration),
    /// Anything else: a network or TLS error,
    /// a bad redirect, too many redirects.
    Failed(String),
}

impl FetchError {
    /// The failure in a phrase for a tool's message.
    pub fn describe(&self) -> String {
        match self {
            FetchError::Refused(why) => why.clone(),
            FetchError::TooLarge {
                limit,
                declared: Some(size),
            } => format!("the server declares {size} bytes, more than the {limit}-byte limit"),
            FetchError::TooLarge { limit, .. } => {
                format!("the body is larger than the {limit}-byte limit; reading stopped there")
            }
            FetchError::Status { code, url } => format!("{url} answered HTTP {code}"),
            FetchError::TimedOut(after) => format!("no answer within {} s", after.as_secs()),
            FetchError::Failed(why) => why.clone(),
        }
    }
}

/// The HTTPS client: pinned resolver, no proxy, redirects checked per hop.
pub struct WebClient {
    http: reqwest::Client,
    timeouts: Timeouts,
}

impl WebClient {
    /// The shipped client: the operating system's resolver and trust store
    /// (on Windows the certificate store, so enterprise roots work).
    pub fn system() -> Result<WebClient, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier = rustls_platform_verifier::Verifier::new(provider.clone())
            .map_err(|e| format!("the system certificate store could not be used: {e}"))?;
        build(
            provider,
            Arc::new(verifier),
            Arc::new(SystemNames),
            Vec::new(),
            Timeouts::default(),
        )
    }

    /// A client for a [`TestNetwork`]: its roots, its names, its stand-ins.
    pub fn for_test_network(network: TestNetwork) -> Result<WebClient, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = rustls::RootCertStore::empty();
        for root in network.roots {
            roots.add(root).map_err(|e| e.to_string())?;
        }
        let verifier =
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                .build()
                .map_err(|e| e.to_string())?;
        build(
            provider,
            verifier,
            network.names,
            network.stand_ins,
            network.timeouts,
        )
    }

    /// The timeouts the client was built with.
    pub fn timeouts(&self) -> Timeouts {
        self.timeouts
    }

    /// GETs `url` under `rule`, following redirects hop by hop, and returns
    /// the first successful (2xx) response with its body still unread.
    pub async fn get(
        &self,
        url: &str,
        rule: HostRule<'_>,
        headers: &[(&str, &str)],
    ) -> Result<Response, FetchError> {
        self.send(url, rule, headers, MAX_REDIRECTS).await
    }

    /// [`WebClient::get`] without following any redirect: a redirect is
    /// returned as its status (the search backend treats one as a block).
    pub async fn get_no_redirect(
        &self,
        url: &str,
        rule: HostRule<'_>,
        headers: &[(&str, &str)],
    ) -> Result<Response, FetchError> {
        self.send(url, rule, headers, 0).await
    }

    async fn send(
        &self,
        url: &str,
        rule: HostRule<'_>,
        headers: &[(&str, &str)],
        max_redirects: usize,
    ) -> Result<Response, FetchError> {
        let mut current = check_url(url, rule)
            .map_err(|refusal| FetchError::Refused(refusal.0))?
            .url;
        for hop in 0..=max_redirects {
            if matches!(rule, HostRule::AnyPublic) {
                tracing::info!(
                    target: AUDIT_TARGET,
                    host = current.host_str().unwrap_or_default(),
                    url = current.as_str(),
                    "research-mode request"
                );
            }
            let mut request = self.http.get(current.clone());
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            let response = request.send().await.map_err(request_error)?;
            let status = response.status();
            if status.is_redirection()
                && max_redirects > 0
                && let Some(location) = response.headers().get(reqwest::header::LOCATION)
            {
                if hop == max_redirects {
                    break;
                }
                current = redirect_target(&current, location, rule)?;
                continue;
            }
            if !status.is_success() {
                return Err(FetchError::Status {
                    code: status.as_u16(),
                    url: current.to_string(),
                });
            }
            return Ok(Response {
                url: current,
                inner: response,
            });
        }
        Err(FetchError::Failed(format!(
            "more than {MAX_REDIRECTS} redirects; the last pointed to {current}"
        )))
    }
}

fn build(
    provider: Arc<CryptoProvider>,
    verifier: Arc<dyn ServerCertVerifier>,
    names: Arc<dyn NameSource>,
    stand_ins: Vec<SocketAddr>,
    timeouts: Timeouts,
) -> Result<WebClient, String> {
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let resolver = PinnedResolver {
        names,
        stand_ins: stand_ins.into(),
    };
    let http = reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .dns_resolver(Arc::new(resolver))
        // A proxy would resolve the name itself, outside the pinned resolver.
        .no_proxy()
        .https_only(true)
        .redirect(reqwest::redirect::Policy::none())
        // Every request resolves (and so validates) again: no pooled
        // connection outlives the answer that justified it.
        .pool_max_idle_per_host(0)
        .connect_timeout(timeouts.connect)
        .user_agent(USER_AGENT)
        .build()
        .map_err(|e| error_chain(&e))?;
    Ok(WebClient { http, timeouts })
}

/// Where a redirect points, if the same rule allows it. A refusal names the
/// target, so the model knows which host was refused and why.
fn redirect_target(
    current: &Url,
    location: &reqwest::header::HeaderValue,
    rule: HostRule<'_>,
) -> Result<Url, FetchError> {
    let location = location
        .to_str()
        .map_err(|_| FetchError::Failed("a redirect's Location header is not text".into()))?;
    let next = current.join(location).map_err(|e| {
        FetchError::Failed(format!(
            "a redirect points to '{location}', which is not a URL: {e}"
        ))
    })?;
    check_url(next.as_str(), rule)
        .map(|checked| checked.url)
        .map_err(|refusal| {
            FetchError::Refused(format!("Redirect to {next} was refused: {}", refusal.0))
        })
}

/// A successful response whose body has not been read yet.
pub struct Response {
    /// The URL that answered, after redirects.
    pub url: Url,
    inner: reqwest::Response,
}

impl Response {
    /// A response header's value, if present and text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.inner.headers().get(name)?.to_str().ok()
    }

    /// The `Content-Type` header, as sent.
    pub fn content_type(&self) -> Option<&str> {
        self.header("content-type")
    }

    /// The HTTP status code (2xx: only success reaches a `Response`).
    pub fn status(&self) -> u16 {
        self.inner.status().as_u16()
    }

    /// Reads the whole (decoded) body, refusing it at `cap` bytes: the
    /// declared length is judged first, the counted length as it arrives.
    pub async fn read_capped(mut self, cap: u64) -> Result<Vec<u8>, FetchError> {
        declared_within(&self.inner, cap)?;
        let mut body = Vec::new();
        while let Some(chunk) = self.inner.chunk().await.map_err(request_error)? {
            if body.len() as u64 + chunk.len() as u64 > cap {
                return Err(FetchError::TooLarge {
                    limit: cap,
                    declared: None,
                });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    /// Streams the body into `file`, refusing it at `cap` bytes and giving
    /// up when no data arrives for `idle`. Returns the bytes written.
    pub async fn stream_capped(
        mut self,
        cap: u64,
        idle: Duration,
        file: &mut tokio::fs::File,
    ) -> Result<u64, FetchError> {
        declared_within(&self.inner, cap)?;
        let mut written = 0u64;
        while let Some(chunk) = within(idle, self.inner.chunk())
            .await?
            .map_err(request_error)?
        {
            written += chunk.len() as u64;
            if written > cap {
                return Err(FetchError::TooLarge {
                    limit: cap,
                    declared: None,
                });
            }
            file.write_all(&chunk)
                .await
                .map_err(|e| FetchError::Failed(format!("writing the download failed: {e}")))?;
        }
        Ok(written)
    }
}

fn declared_within(response: &reqwest::Response, cap: u64) -> Result<(), FetchError> {
    match response.content_length() {
        Some(size) if size > cap => Err(FetchError::TooLarge {
            limit: cap,
            declared: Some(size),
        }),
        _ => Ok(()),
    }
}

/// Runs `work` with a deadline, turning the deadline into a typed error.
pub async fn within<T>(limit: Duration, work: impl Future<Output = T>) -> Result<T, FetchError> {
    tokio::time::timeout(limit, work)
        .await
        .map_err(|_| FetchError::TimedOut(limit))
}

/// Maps a client error to the policy refusal or failure behind it; the
/// resolver's typed errors sit somewhere in the source chain.
fn request_error(error: reqwest::Error) -> FetchError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = error.source();
    while let Some(cause) = source {
        if let Some(refused) = cause.downcast_ref::<AddressRefused>() {
            return FetchError::Refused(refused.to_string());
        }
        if let Some(unresolved) = cause.downcast_ref::<NotResolved>() {
            return FetchError::Failed(unresolved.to_string());
        }
        source = cause.source();
    }
    if error.is_timeout() {
        return FetchError::Failed(format!("the connection timed out: {}", error_chain(&error)));
    }
    FetchError::Failed(error_chain(&error))
}

/// reqwest's own message omits the causes ("error sending request"), which
/// are the useful part: a certificate problem, a reset, a refused port.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shipped client builds from the platform's trust store (CryptoAPI
    /// on Windows, checked under Wine; the system roots on Linux) without
    /// touching the network.
    #[test]
    fn the_system_client_builds_offline() {
        let client = WebClient::system().expect("system client");
        assert_eq!(
            client.timeouts().request,
            Duration::from_secs(HTTP_TIMEOUT_SECONDS)
        );
    }

    #[test]
    fn redirect_targets_resolve_relative_locations_and_are_judged() {
        let current = Url::parse("https://docs.test/a/b").unwrap();
        let hosts = vec!["docs.test".to_string()];
        let rule = HostRule::Listed(&hosts);
        let next = |location: &str| {
            redirect_target(
                &current,
                &reqwest::header::HeaderValue::from_str(location).unwrap(),
                rule,
            )
        };
        assert_eq!(next("../c").unwrap().as_str(), "https://docs.test/c");
        assert_eq!(
            next("//docs.test/d").unwrap().as_str(),
            "https://docs.test/d"
        );
        assert!(matches!(next("//evil.test/d"), Err(FetchError::Refused(_))));
        assert!(matches!(
            next("https://docs.test@evil.test/"),
            Err(FetchError::Refused(_))
        ));
        assert!(matches!(
            next("http:/docs.test"),
            Err(FetchError::Refused(_))
        ));
    }
}
