//! `wamcp serve --http ADDR`: MCP over streamable HTTP at `/mcp`.
//!
//! Loopback by default: this server runs commands and writes files, so a
//! port reachable from the network would hand that to anyone who can
//! connect. Every request must carry the bearer token kept in the per-user
//! config directory (made on first use, readable by the user alone), so
//! another local program cannot drive the server either; `--no-token`
//! turns that off, on loopback only, and says so. A non-loopback address
//! needs `--allow-remote` and the token. The Host header must name the
//! loopback host (or the address served) and a browser's Origin must be
//! this server's own, which stops a web page from driving the server
//! through the user's browser (DNS rebinding, CSRF). Every session shares
//! the one server context, so grants, the page cache and the build lock
//! are the same for all of them; a task stays its session's
//! ([`crate::tasks::owned`]). No process this server started may connect
//! ([`OwnCommandsRefused`], and the port closed to its commands), and a
//! response survives a dropped connection ([`crate::resume`]).

use crate::config::EnvLookup;
use crate::context::ServerContext;
use crate::server::WamcpServer;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Where `--http` without an address listens.
pub const DEFAULT_ADDRESS: &str = "127.0.0.1:8765";

/// How `serve --http` was asked to listen, checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Listen {
    pub address: SocketAddr,
    /// Whether requests must carry the bearer token.
    pub token_required: bool,
}

/// Checks the address with `--no-token` and `--allow-remote`: loopback
/// unless remote is allowed, and never remote without the token.
pub fn listen(raw: &str, no_token: bool, allow_remote: bool) -> Result<Listen, String> {
    let address: SocketAddr = raw
        .parse()
        .map_err(|_| format!("'{raw}' is not an address and port such as {DEFAULT_ADDRESS}"))?;
    let loopback = address.ip().is_loopback();
    if !loopback && !allow_remote {
        return Err(format!(
            "'{raw}' is not a loopback address; wamcp runs commands and writes files, so it listens on 127.0.0.1 \
             or ::1 unless --allow-remote is given (and then every request needs the token)"
        ));
    }
    if !loopback && no_token {
        return Err(
            "--no-token is for loopback addresses only: a remote listener always needs the token"
                .into(),
        );
    }
    Ok(Listen {
        address,
        token_required: !no_token,
    })
}

/// The bearer token's file: `wamcp/http-token` in the per-user config
/// directory.
pub fn token_file(env: EnvLookup) -> Option<PathBuf> {
    crate::config::user_config_dir(env).map(|dir| dir.join("wamcp").join("http-token"))
}

/// The token in `path`, made on first use: 32 random bytes in hex, in a
/// file only the user can read. A file that is a link, not a regular
/// file, someone else's, readable by others or larger than a token is
/// refused rather than used.
pub fn load_or_create_token(path: &Path) -> Result<String, String> {
    // Two servers may start at once: the loser of the race reads the
    // winner's token; a file that keeps vanishing is an error, not a loop.
    for _ in 0..3 {
        if let Some(token) = read_token(path)? {
            return Ok(token);
        }
        match create_token(path) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("cannot create {}: {e}", path.display())),
            Ok(token) => return Ok(token),
        }
    }
    Err(format!("{} keeps changing; not used", path.display()))
}

/// The largest token file read.
const MAX_TOKEN_FILE_BYTES: u64 = 256;

/// The token in `path`, `None` when there is no file. Opened without
/// following a link and without waiting on a FIFO, and judged on the
/// handle that is read, so the file checked is the file used.
fn read_token(path: &Path) -> Result<Option<String>, String> {
    let refuse = |why: String| {
        format!(
            "{} {why}; delete it and a new token is made",
            path.display()
        )
    };
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        // FILE_FLAG_OPEN_REPARSE_POINT: a link opens as itself.
        options.custom_flags(0x0020_0000);
    }
    let not_regular = || refuse("is not a regular file (a link, folder or device)".into());
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        // O_NOFOLLOW refuses a link (dangling or not) with ELOOP.
        Err(_) if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) => {
            return Err(not_regular());
        }
        Err(e) => return Err(refuse(format!("cannot be opened ({e})"))),
    };
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    #[cfg(windows)]
    {
        use std::os::windows::fs::MetadataExt;
        if meta.file_attributes() & 0x400 != 0 {
            return Err(not_regular());
        }
    }
    if !meta.is_file() {
        return Err(refuse(
            "is not a regular file (a link, folder or device)".into(),
        ));
    }
    check_private(&meta).map_err(refuse)?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(&file, MAX_TOKEN_FILE_BYTES + 1),
        &mut bytes,
    )
    .map_err(|e| refuse(format!("cannot be read ({e})")))?;
    if bytes.len() as u64 > MAX_TOKEN_FILE_BYTES {
        return Err(refuse(format!(
            "cannot be read as a token (larger than {MAX_TOKEN_FILE_BYTES} bytes)"
        )));
    }
    let token = String::from_utf8_lossy(&bytes).trim().to_string();
    if token.len() != 64 || !token.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(refuse("does not hold a token (64 hex digits)".into()));
    }
    Ok(Some(token))
}

fn create_token(path: &Path) -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    wamcp_platform::random::fill(&mut bytes)?;
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    std::io::Write::write_all(&mut file, format!("{token}\n").as_bytes())?;
    Ok(token)
}

/// On Unix the token file must be the user's and not readable by others;
/// on Windows the per-user profile's access list already keeps it theirs.
fn check_private(meta: &std::fs::Metadata) -> Result<(), String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        if meta.uid() != me {
            return Err(format!("belongs to another user (uid {})", meta.uid()));
        }
        if meta.mode() & 0o077 != 0 {
            return Err(format!(
                "can be read by other users (mode {:o}; chmod 600 fixes it)",
                meta.mode() & 0o777
            ));
        }
    }
    let _ = meta;
    Ok(())
}

/// Serves until Ctrl-C. Prints the URL on stderr once listening.
pub async fn serve(
    ctx: Arc<ServerContext>,
    listen: Listen,
    token: Option<String>,
    token_path: Option<PathBuf>,
) -> Result<(), String> {
    let listener = bind(listen.address).await?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    // No command this server (or another of the user's) runs may become a
    // client of it: closed to them by the OS where it can, refused here
    // where the kernel names the peer as one of ours.
    ctx.sandbox.close_port(local.port());
    let registered = Registered::new(ctx.sandbox.listener_registry(), local.port());
    let listener = OwnCommandsRefused {
        inner: listener,
        pending: Arc::new(tokio::sync::Semaphore::new(PENDING)),
    };
    // Written, not eprintln!'d: a client may close our stderr, and a
    // failed write must not end the server.
    let mut said = format!("wamcp: serving MCP over streamable HTTP at http://{local}/mcp\n");
    if let (Some(_), Some(path)) = (&token, &token_path) {
        said.push_str(&format!(
            "wamcp: every request needs 'Authorization: Bearer <token>', the token in {}\n",
            path.display()
        ));
    }
    let _ = std::io::Write::write_all(&mut std::io::stderr(), said.as_bytes());
    if token.is_none() {
        tracing::warn!(
            "serving without a token (--no-token): any program on this machine can use this server"
        );
    }
    let stop = CancellationToken::new();
    let port = local.port();
    let mut hosts = vec![
        "localhost".to_string(),
        "127.0.0.1".into(),
        "::1".into(),
        "[::1]".into(),
    ];
    if !local.ip().is_loopback() {
        hosts.push(local.ip().to_string());
        hosts.push(format!("[{}]", local.ip()));
    }
    // The server's own pages may talk to it: the conformance suite's
    // rebinding check sends the same-port loopback origin.
    let origins = [
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
        format!("http://[::1]:{port}"),
    ];
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_cancellation_token(stop.child_token());
    let service = StreamableHttpService::new(
        move || Ok(WamcpServer::new(ctx.clone())),
        crate::resume::Resumable::default().into(),
        config,
    );
    let router = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(Arc::new(token), guard));
    let served = axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            stopped().await;
            stop.cancel();
        })
        .await
        .map_err(|e| e.to_string());
    drop(registered);
    served
}

/// Listens on `address`; port 0 means the first free port of wamcp's own
/// range, which every command is kept off from the start
/// ([`wamcp_exec::confine::WAMCP_PORTS`]), and any free port only when the
/// whole range is taken.
async fn bind(address: SocketAddr) -> Result<tokio::net::TcpListener, String> {
    let fail = |e: std::io::Error| format!("cannot listen on {address}: {e}");
    if address.port() != 0 {
        return tokio::net::TcpListener::bind(address).await.map_err(fail);
    }
    for port in wamcp_exec::confine::WAMCP_PORTS[1].clone() {
        if let Ok(listener) =
            tokio::net::TcpListener::bind(SocketAddr::new(address.ip(), port)).await
        {
            return Ok(listener);
        }
    }
    tracing::warn!(
        "every port of wamcp's range is taken; listening on a free port that commands started before this \
         server can still connect to"
    );
    tokio::net::TcpListener::bind(address).await.map_err(fail)
}

/// Ctrl-C, or (Unix) the SIGTERM a service manager or `kill` sends: both
/// end the server cleanly, so its registry entry goes with it.
async fn stopped() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// This server's entry in the listener registry, removed when it stops.
struct Registered(Option<PathBuf>);

impl Registered {
    fn new(registry: Option<&Path>, port: u16) -> Registered {
        let Some(dir) = registry else {
            return Registered(None);
        };
        let entry = dir.join(port.to_string());
        let written = std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(&entry, format!("{}\n", std::process::id())));
        if let Err(e) = written {
            tracing::warn!(
                "cannot register port {port} in {}: {e}; commands of other wamcp servers are not kept off it",
                dir.display()
            );
            return Registered(None);
        }
        Registered(Some(entry))
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        if let Some(entry) = &self.0 {
            let _ = std::fs::remove_file(entry);
        }
    }
}

/// Accepts connections, turning away any whose client end a command holds
/// (a process this server started, or one marked as a wamcp command):
/// a script run by a command must never become a second client that
/// answers its own approval questions. The lookup runs beside the
/// connection, not in the accept loop, so a thousand clients at once do
/// not queue behind each other's lookups; at most [`PENDING`] wait for
/// theirs at once, so that however many clients come, the lookups (which
/// read `/proc`) keep descriptors to read with.
struct OwnCommandsRefused {
    inner: tokio::net::TcpListener,
    pending: Arc<tokio::sync::Semaphore>,
}

/// Connections accepted and not yet judged: each holds a descriptor and,
/// while its lookup runs, a thread with a few more. 64 keep two cores busy
/// and stay far from a 1,024-descriptor limit.
const PENDING: usize = 64;

impl axum::serve::Listener for OwnCommandsRefused {
    type Io = Checked;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            // The semaphore is never closed; were it, accepting goes on unbounded.
            let permit = self.pending.clone().acquire_owned().await.ok();
            let (stream, peer) = match self.inner.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors and the like: wait, then go on.
                    tracing::debug!("accept failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            };
            let Ok(server) = stream.local_addr() else {
                continue;
            };
            let verdict = tokio::task::spawn_blocking(move || {
                let holder = wamcp_platform::peer::command_at(server, peer);
                drop(permit);
                holder
            });
            let checked = Checked {
                stream,
                verdict: Some(verdict),
                refused: false,
            };
            return (checked, peer);
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// A connection whose first read waits for the verdict on its peer; a
/// command's connection is told why, then reads as closed.
struct Checked {
    stream: tokio::net::TcpStream,
    verdict: Option<tokio::task::JoinHandle<Option<u32>>>,
    refused: bool,
}

impl Checked {
    /// Tells a command's connection why it is refused, as far as the
    /// socket takes it without waiting: the request is read first, since
    /// closing on unread bytes resets the connection and the reset can
    /// overtake the answer.
    fn refuse(&mut self, pid: u32) {
        let from = if pid == 0 {
            "a socket whose holder could not be told (while commands run: one being passed between \
             processes or reset after sending; or /proc could not be read)"
                .to_string()
        } else {
            format!("process {pid}, a command this server (or another wamcp) started")
        };
        tracing::warn!("refused a connection from {from}: a command may not be a client of wamcp");
        let body = "wamcp: a program started by wamcp may not use it\n";
        let answer = format!(
            "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let mut request = [0u8; 16 * 1024];
        let _ = self.stream.try_read(&mut request);
        let _ = self.stream.try_write(answer.as_bytes());
        self.refused = true;
    }
}

impl tokio::io::AsyncRead for Checked {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        use std::task::Poll;
        if let Some(verdict) = self.verdict.as_mut() {
            let Poll::Ready(holder) = std::pin::Pin::new(verdict).poll(cx) else {
                return Poll::Pending;
            };
            self.verdict = None;
            // A lookup that failed (panicked) leaves the holder unknown.
            if let Some(pid) = holder.unwrap_or(Some(0)) {
                self.refuse(pid);
            }
        }
        if self.refused {
            // End of input: the server answers nothing more and closes.
            return Poll::Ready(Ok(()));
        }
        std::pin::Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for Checked {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        data: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        if self.refused {
            return std::task::Poll::Ready(Err(std::io::ErrorKind::ConnectionAborted.into()));
        }
        std::pin::Pin::new(&mut self.stream).poll_write(cx, data)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// Checks the bearer token before anything else, and answers a session's
/// DELETE with 204 (rmcp says 202, which SDKs warn about).
async fn guard(State(token): State<Arc<Option<String>>>, request: Request, next: Next) -> Response {
    if let Some(token) = token.as_ref() {
        let given = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                // The scheme name is case-insensitive (RFC 9110).
                let (scheme, credentials) = v.split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then_some(credentials)
            })
            .unwrap_or("");
        if !same_secret(given.as_bytes(), token.as_bytes()) {
            return (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, "Bearer")],
                "wamcp: this server needs 'Authorization: Bearer <token>' (the token is in the http-token file in \
                 wamcp's config directory; wamcp config --emit client --http prints a ready entry)",
            )
                .into_response();
        }
    }
    let delete = request.method() == Method::DELETE;
    let mut response = next.run(request).await;
    if delete && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response
}

/// Compares without stopping at the first difference, so the time taken
/// does not tell how much of a guess was right.
fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    let mut difference = u8::from(given.len() != expected.len());
    for (i, byte) in expected.iter().enumerate() {
        difference |= byte ^ given.get(i).copied().unwrap_or(0);
    }
    difference == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_unless_remote_is_allowed_and_never_remote_without_the_token() {
        let ok = |raw, no_token, remote| listen(raw, no_token, remote);
        assert_eq!(
            ok("127.0.0.1:8765", false, false).unwrap().address.port(),
            8765
        );
        assert!(ok("[::1]:0", false, false).unwrap().token_required);
        assert!(!ok("127.0.0.1:0", true, false).unwrap().token_required);
        for bad in [
            "0.0.0.0:8765",
            "192.168.1.5:80",
            "[::]:1",
            "localhost:80",
            "8765",
            "",
        ] {
            assert!(ok(bad, false, false).is_err(), "{bad}");
        }
        assert!(ok("0.0.0.0:8765", false, true).unwrap().token_required);
        assert!(
            ok("0.0.0.0:8765", true, true)
                .unwrap_err()
                .contains("loopback addresses only")
        );
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret(b"abcd", b"abcd"));
        for wrong in [&b"abce"[..], b"abc", b"abcde", b"", b"ABCD"] {
            assert!(!same_secret(wrong, b"abcd"), "{wrong:?}");
        }
    }

    #[test]
    fn the_token_is_made_once_privately_and_a_bad_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wamcp").join("http-token");
        let first = load_or_create_token(&path).unwrap();
        assert_eq!(first.len(), 64);
        assert_eq!(load_or_create_token(&path).unwrap(), first);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
            assert!(
                load_or_create_token(&path)
                    .unwrap_err()
                    .contains("chmod 600")
            );
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        std::fs::write(&path, "short").unwrap();
        assert!(
            load_or_create_token(&path)
                .unwrap_err()
                .contains("does not hold a token")
        );
        std::fs::write(&path, "a".repeat(300)).unwrap();
        let err = load_or_create_token(&path).unwrap_err();
        assert!(err.contains("cannot be read as a token"), "{err}");
        #[cfg(unix)]
        {
            std::fs::remove_file(&path).unwrap();
            // A dangling link, a link to a device, a FIFO: refused, never
            // followed, never waited on.
            std::os::unix::fs::symlink(dir.path().join("nowhere"), &path).unwrap();
            let err = load_or_create_token(&path).unwrap_err();
            assert!(err.contains("not a regular file"), "{err}");
            std::fs::remove_file(&path).unwrap();
            std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
            let err = load_or_create_token(&path).unwrap_err();
            assert!(err.contains("not a regular file"), "{err}");
            std::fs::remove_file(&path).unwrap();
            let fifo = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
            // SAFETY: a NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
            let err = load_or_create_token(&path).unwrap_err();
            assert!(err.contains("not a regular file"), "{err}");
        }
    }
}
