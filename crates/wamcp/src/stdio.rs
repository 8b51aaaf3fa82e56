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
use tokio::io::{AsyncRead, ReadBuf};
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

/// stdin (watched) and stdout, as rmcp's stdio transport pairs them.
pub fn transport(gone: CancellationToken) -> (EofWatch<tokio::io::Stdin>, tokio::io::Stdout) {
    (EofWatch::new(tokio::io::stdin(), gone), tokio::io::stdout())
}
