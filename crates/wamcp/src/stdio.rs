//! The stdio transport, with an end.
//!
//! When the client closes our stdin it is gone; rmcp then waits up to five
//! seconds for in-flight calls to answer, and a call stuck in a long build or
//! a hung system call would keep the process alive after its client. Reading
//! end-of-file starts a short grace period for calls about to answer, then
//! cancels every call still running (see `registry::call_erased`).

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_util::sync::CancellationToken;

/// How long calls in flight at end-of-file get to finish.
pub const EOF_GRACE: Duration = Duration::from_millis(300);

/// A reader that cancels `gone` [`EOF_GRACE`] after it first reads end-of-file.
pub struct EofWatch<R> {
    inner: R,
    gone: Option<CancellationToken>,
}

impl<R> EofWatch<R> {
    pub fn new(inner: R, gone: CancellationToken) -> Self {
        EofWatch {
            inner,
            gone: Some(gone),
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for EofWatch<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let wanted = buf.remaining() > 0;
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        // Nothing read into room that was there: end-of-file.
        if matches!(poll, Poll::Ready(Ok(())))
            && wanted
            && buf.filled().len() == before
            && let Some(gone) = self.gone.take()
        {
            tokio::spawn(async move {
                tokio::time::sleep(EOF_GRACE).await;
                gone.cancel();
            });
        }
        poll
    }
}

type Reader = Box<dyn AsyncRead + Send + Unpin>;
type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// stdin (watched) and stdout, as rmcp's stdio transport pairs them.
pub fn transport(gone: CancellationToken) -> (EofWatch<Reader>, Writer) {
    let (reader, writer) = native::streams();
    (EofWatch::new(reader, gone), writer)
}

/// Puts stdin and stdout back as they were (blocking) before the process
/// exits: the pipe or socket is shared with the client, and whatever else
/// later reads or writes it would otherwise see EAGAIN.
pub fn restore() {
    native::restore();
}

/// Where stdin and stdout are pipes or sockets (as every client makes
/// them), they are read and written through the runtime's own event loop:
/// tokio's portable `stdin`/`stdout` hand each read and write to a blocking
/// thread, which costs two thread starts before the first answer and a
/// thread hand-off per message. Anything else (a terminal, a file) keeps
/// the portable handles.
#[cfg(unix)]
mod native {
    use super::{Reader, Writer};
    use std::fs::File;
    use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
    use std::os::unix::fs::FileTypeExt;
    use std::sync::Mutex;
    use tokio::net::UnixStream;
    use tokio::net::unix::pipe;

    /// The status flags of each descriptor switched to non-blocking.
    static SWITCHED: Mutex<Vec<(i32, i32)>> = Mutex::new(Vec::new());

    pub fn restore() {
        let switched = SWITCHED.lock().unwrap_or_else(|e| e.into_inner());
        for &(fd, flags) in switched.iter() {
            // SAFETY: fcntl on a descriptor number; a closed one just fails.
            unsafe { libc::fcntl(fd, libc::F_SETFL, flags) };
        }
    }

    pub fn streams() -> (Reader, Writer) {
        let reader = evented(
            std::io::stdin().as_fd(),
            |file| Ok(Box::new(pipe::Receiver::from_file(file)?) as Reader),
            |socket| Box::new(socket) as Reader,
        )
        .unwrap_or_else(|| Box::new(tokio::io::stdin()));
        let writer = evented(
            std::io::stdout().as_fd(),
            |file| Ok(Box::new(pipe::Sender::from_file(file)?) as Writer),
            |socket| Box::new(socket) as Writer,
        )
        .unwrap_or_else(|| Box::new(tokio::io::stdout()));
        (reader, writer)
    }

    /// A duplicate of `fd` as an event-driven stream, when it is a pipe or
    /// a socket.
    fn evented<T>(
        fd: BorrowedFd<'_>,
        from_pipe: impl FnOnce(File) -> std::io::Result<T>,
        from_socket: impl FnOnce(UnixStream) -> T,
    ) -> Option<T> {
        let file = File::from(fd.try_clone_to_owned().ok()?);
        let kind = file.metadata().ok()?.file_type();
        if kind.is_fifo() || kind.is_socket() {
            // SAFETY: fcntl reads the flags of a descriptor we hold.
            let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
            if flags >= 0 {
                let mut switched = SWITCHED.lock().unwrap_or_else(|e| e.into_inner());
                switched.push((fd.as_raw_fd(), flags));
            }
        }
        if kind.is_fifo() {
            from_pipe(file).ok()
        } else if kind.is_socket() {
            let socket = std::os::unix::net::UnixStream::from(OwnedFd::from(file));
            socket.set_nonblocking(true).ok()?;
            UnixStream::from_std(socket).ok().map(from_socket)
        } else {
            None
        }
    }
}

/// Windows' anonymous pipes have no readiness events: the portable handles.
#[cfg(not(unix))]
mod native {
    use super::{Reader, Writer};

    pub fn streams() -> (Reader, Writer) {
        (Box::new(tokio::io::stdin()), Box::new(tokio::io::stdout()))
    }

    pub fn restore() {}
}
