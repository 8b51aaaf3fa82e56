//! Responses over HTTP that survive a reconnect.
//!
//! Every response stream invites the client to reconnect after a few
//! seconds (`retry:`) and names its events, so a client whose connection
//! dropped asks again with `Last-Event-ID`. rmcp forgets a request's
//! stream the moment its answer is sent, so a reconnect that arrives after
//! a call finished found nothing, and the result of a command that ran was
//! lost. This session manager keeps each request's events, read off rmcp's
//! stream whether or not a client is listening, until the session ends or
//! [`KEEP_FINISHED`] after the answer, within [`MAX_KEPT_BYTES`], and
//! serves a reconnect from them. A stream is found by its session and its
//! request, so one session can never read another's.

use futures::{Stream, StreamExt};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::{SessionId, SessionManager};
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// How long a finished request's events are kept for a late reconnect.
pub const KEEP_FINISHED: Duration = Duration::from_secs(300);
/// The most all kept events may take; the oldest finished streams go first.
pub const MAX_KEPT_BYTES: usize = 32 * 1024 * 1024;

/// rmcp's session manager, with every request's events kept.
#[derive(Default)]
pub struct Resumable {
    inner: LocalSessionManager,
    kept: Arc<Mutex<HashMap<StreamKey, Arc<Mutex<Kept>>>>>,
}

/// A request-wise stream: its session, and rmcp's number for the request.
type StreamKey = (SessionId, u64);

/// One request's events so far, and who is listening.
#[derive(Default)]
struct Kept {
    events: Vec<ServerSseMessage>,
    bytes: usize,
    finished: Option<Instant>,
    listeners: Vec<UnboundedSender<ServerSseMessage>>,
}

/// A listener's events, ending when the request's stream does.
pub struct Follow(UnboundedReceiver<ServerSseMessage>);

impl Stream for Follow {
    type Item = ServerSseMessage;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx)
    }
}

type Events = Pin<Box<dyn Stream<Item = ServerSseMessage> + Send + Sync>>;

/// The parts of an rmcp event id (`INDEX/REQUEST`): a request-wise stream's.
fn parse_event_id(id: &str) -> Option<(usize, u64)> {
    let (index, request) = id.split_once('/')?;
    Some((index.parse().ok()?, request.parse().ok()?))
}

fn size_of(event: &ServerSseMessage) -> usize {
    event
        .message
        .as_ref()
        .and_then(|m| serde_json::to_string(m.as_ref()).ok())
        .map_or(64, |text| text.len() + 64)
}

impl Resumable {
    /// Drops finished streams past their time, then the oldest finished
    /// ones while the total is over the limit.
    fn evict(&self) {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.retain(|_, k| {
            let k = k.lock().unwrap_or_else(|e| e.into_inner());
            k.finished.is_none_or(|at| at.elapsed() < KEEP_FINISHED)
        });
        let size = |k: &Arc<Mutex<Kept>>| k.lock().unwrap_or_else(|e| e.into_inner()).bytes;
        let mut total: usize = kept.values().map(size).sum();
        while total > MAX_KEPT_BYTES {
            let oldest = kept
                .iter()
                .filter_map(|(key, k)| {
                    let finished = k.lock().unwrap_or_else(|e| e.into_inner()).finished?;
                    Some((finished, key.clone()))
                })
                .min_by_key(|(finished, _)| *finished);
            let Some((_, key)) = oldest else { break };
            if let Some(k) = kept.remove(&key) {
                total -= size(&k);
            }
        }
    }

    /// Reads `events` to their end in a task of its own, keeping each and
    /// passing it to whoever listens; answers the first listener.
    fn keep(
        &self,
        session: SessionId,
        events: impl Stream<Item = ServerSseMessage> + Send + 'static,
    ) -> Follow {
        let record = Arc::new(Mutex::new(Kept::default()));
        let (first, follow) = unbounded_channel();
        record
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .listeners
            .push(first);
        let kept = self.kept.clone();
        tokio::spawn(async move {
            let mut events = std::pin::pin!(events);
            let mut named = false;
            while let Some(event) = events.next().await {
                if !named
                    && let Some((_, request)) = event.event_id.as_deref().and_then(parse_event_id)
                {
                    kept.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert((session.clone(), request), record.clone());
                    named = true;
                }
                let mut k = record.lock().unwrap_or_else(|e| e.into_inner());
                k.listeners.retain(|l| l.send(event.clone()).is_ok());
                k.bytes += size_of(&event);
                k.events.push(event);
            }
            let mut k = record.lock().unwrap_or_else(|e| e.into_inner());
            k.finished = Some(Instant::now());
            k.listeners.clear();
        });
        Follow(follow)
    }

    /// The events of a kept stream after `last`, and the rest as they come.
    fn replay(&self, session: &SessionId, last: &str) -> Option<Follow> {
        let (index, request) = parse_event_id(last)?;
        let record = self
            .kept
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(session.clone(), request))?
            .clone();
        let (tx, rx) = unbounded_channel();
        let mut k = record.lock().unwrap_or_else(|e| e.into_inner());
        for event in &k.events {
            let later = event
                .event_id
                .as_deref()
                .and_then(parse_event_id)
                .is_some_and(|(i, _)| i > index);
            if later {
                let _ = tx.send(event.clone());
            }
        }
        if k.finished.is_none() {
            k.listeners.push(tx);
        }
        Some(Follow(rx))
    }
}

impl SessionManager for Resumable {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.inner.create_session().await
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<rmcp::model::ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.kept
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|(session, _), _| session != id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.evict();
        let events = self.inner.create_stream(id, message).await?;
        Ok(self.keep(id.clone(), events))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        if let Some(follow) = self.replay(id, &last_event_id) {
            return Ok(Box::pin(follow) as Events);
        }
        let events = self.inner.resume(id, last_event_id).await?;
        Ok(Box::pin(events) as Events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_wise_event_ids_are_read_and_others_are_not() {
        assert_eq!(parse_event_id("3/7"), Some((3, 7)));
        for other in ["3", "", "x/7", "3/x", "/", "3/7/1"] {
            assert_eq!(parse_event_id(other), None, "{other}");
        }
    }
}
