//! What the server remembers while it runs, shared by every MCP session
//! (and every stateless HTTP request): hosts approved until restart, the
//! tasks and who owns them, the client's roots protocol, and the caches
//! that keep continuation calls consistent.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use wamcp_exec::build::Builds;
use wamcp_web::page::PageCache;

/// The running server's memory.
#[derive(Default)]
pub struct Session {
    /// Hosts the user approved through elicitation, until restart.
    session_grants: Mutex<Vec<String>>,
    /// Held while the client is asked for its roots, so concurrent calls
    /// wait for one answer instead of asking again.
    pub roots_gate: tokio::sync::Mutex<()>,
    /// Cancelled shortly after the client closes stdin: every tool call still
    /// running stops, so the process can exit at once.
    pub client_gone: tokio_util::sync::CancellationToken,
    /// Calls running as MCP tasks, and finished ones until their TTL.
    pub tasks: rmcp::task_manager::TaskManager,
    /// When recent tasks started, for [`Session::admit_task`].
    task_starts: Mutex<Vec<Instant>>,
    /// The HTTP session each task was started in: only it may read,
    /// answer or cancel the task (see [`crate::tasks::owned`]).
    pub task_owners: Mutex<HashMap<String, String>>,
    /// `env_inspect`'s last snapshot.
    pub env_cache: wamcp_devenv::snapshot::Cache,
    /// Build locks per root and the last build's diagnostics per command.
    pub builds: Builds,
    /// Pages `fetch_web_page` fetched lately, so continuation calls see the
    /// same lines.
    pub pages: PageCache,
}

impl Session {
    /// Hosts the user approved in this run.
    pub fn session_grants(&self) -> Vec<String> {
        self.session_grants
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Remembers a host the user approved, until the server stops.
    pub fn grant_for_session(&self, host: &str) {
        let mut grants = self
            .session_grants
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if !grants.iter().any(|h| h == host) {
            grants.push(host.to_string());
        }
    }

    /// Counts a task start against `limit` starts per `window`; false when
    /// the limit is reached (the start is then not counted).
    pub fn admit_task(&self, limit: usize, window: Duration) -> bool {
        let mut starts = self.task_starts.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        starts.retain(|started| now.duration_since(*started) < window);
        if starts.len() >= limit {
            return false;
        }
        starts.push(now);
        true
    }
}
