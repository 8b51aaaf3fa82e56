//! Long calls as MCP tasks (the `io.modelcontextprotocol/tasks` extension,
//! SEP-2663, as rmcp implements it).
//!
//! A 20-minute build outlives any client's request timeout. When a client
//! declares the extension, a call to one of the long tools answers at once
//! with a task; the client polls `tasks/get` for its status and result, and
//! `tasks/cancel` stops it, killing what it started. Everyone else gets the
//! ordinary call with progress notifications.
//!
//! A tool that needs the user's yes asks the way its era allows: in a
//! handshake session it sends the question itself; in the stateless era
//! its question comes back as an input request of the task, and the tool
//! runs again with the answer (nothing has run before a tool's question).

use crate::consent::Exchange;
use crate::context::ServerContext;
use crate::registry::{ToolCall, ToolEntry};
use rmcp::model::{CallToolResult, CreateTaskResult, InputResponses, JsonObject};
use rmcp::service::RequestContext;
use rmcp::task_manager::{TaskContext, TaskExit, TaskOptions};
use rmcp::{ErrorData as McpError, RoleServer};
use std::sync::Arc;

/// How long a task and its result are kept after it was created: the
/// longest build, and an hour to collect the result.
pub const TASK_TTL_MS: u64 = (wamcp_policy::limits::MAX_BUILD_TIMEOUT_SECONDS + 3600) * 1000;

/// How often a client is told to poll.
const POLL_INTERVAL_MS: u64 = 1000;

/// Tasks that may run at once; more are refused rather than queued.
pub const MAX_RUNNING_TASKS: usize = 16;

/// Tasks started within one TTL, finished ones included: their results
/// are kept until it ends, so their number bounds the memory they hold.
pub const MAX_KEPT_TASKS: usize = 64;

/// How long a task waits for the user's answer to its question, as an
/// ordinary call does; an unanswered question must not hold a slot.
const ANSWER_TIMEOUT: std::time::Duration =
    std::time::Duration::from_secs(wamcp_policy::limits::CONSENT_TIMEOUT_SECONDS);

/// Whether this call becomes a task: a long tool, for a client that
/// declared the tasks extension, while there is room for another. When
/// there is not, the call runs the ordinary way (with progress) instead of
/// being refused: tasks are a convenience, the tool is the point.
pub fn wanted(
    ctx: &ServerContext,
    entry: &ToolEntry,
    context: &RequestContext<RoleServer>,
) -> bool {
    entry.long_running
        && context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks())
        && ctx.session.tasks.running_task_count() < MAX_RUNNING_TASKS
        && ctx.session.admit_task(
            MAX_KEPT_TASKS,
            std::time::Duration::from_millis(TASK_TTL_MS),
        )
}

/// Starts `entry` as a task and returns what the client is told at once.
pub fn start(
    ctx: Arc<ServerContext>,
    entry: &'static ToolEntry,
    arguments: JsonObject,
    context: RequestContext<RoleServer>,
    call_identity: String,
) -> CreateTaskResult {
    let options = TaskOptions::new()
        .with_ttl_ms(TASK_TTL_MS)
        .with_poll_interval_ms(POLL_INTERVAL_MS)
        .with_status_message(format!("{} is running", entry.name));
    let session = session_of(&context);
    let owners = ctx.clone();
    let task = ctx.session.tasks.clone().spawn(options, move |task| {
        Box::pin(run(ctx, entry, arguments, context, call_identity, task))
    });
    if let Some(session) = session {
        let mut map = owners
            .session
            .task_owners
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        map.retain(|id, _| owners.session.tasks.get_task(id).is_ok());
        map.insert(task.task_id.clone(), session);
    }
    CreateTaskResult::new(task)
}

/// The HTTP session (`Mcp-Session-Id`) a request came in, if any: stdio
/// and sessionless requests have none.
fn session_of(context: &RequestContext<RoleServer>) -> Option<String> {
    let parts = context.extensions.get::<axum::http::request::Parts>()?;
    let id = parts.headers.get("mcp-session-id")?.to_str().ok()?;
    Some(id.to_string())
}

/// Refuses a request about a task that another HTTP session started, as
/// if there were no such task: every session shares the server, so
/// without this a second client (a command that found the token, say)
/// could answer the user's task's question, read its result or cancel it.
/// A task started outside a session is reached by its unguessable id.
pub fn owned(
    ctx: &ServerContext,
    task_id: &str,
    context: &RequestContext<RoleServer>,
) -> Result<(), McpError> {
    let owner = ctx
        .session
        .task_owners
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(task_id)
        .cloned();
    match owner {
        Some(owner) if session_of(context).as_deref() != Some(owner.as_str()) => Err(
            // rmcp's own words for a task that does not exist.
            McpError::invalid_params(format!("unknown task: {task_id}"), None),
        ),
        _ => Ok(()),
    }
}

async fn run(
    ctx: Arc<ServerContext>,
    entry: &'static ToolEntry,
    arguments: JsonObject,
    mut request: RequestContext<RoleServer>,
    call_identity: String,
    task: TaskContext,
) -> Result<CallToolResult, TaskExit> {
    // The request's own token is cancelled once the task is created (its
    // answer was sent); the task's work stops on tasks/cancel or when the
    // client goes away.
    let stop = ctx.session.client_gone.child_token();
    request.ct = stop.clone();
    // Progress belongs to a request that has ended; the client polls.
    request.meta.0.0.remove("progressToken");
    let mut answers: Option<(InputResponses, Option<String>)> = None;
    let mut round = 0;
    loop {
        round += 1;
        let (responses, state) = answers.take().unzip();
        let exchange = Exchange {
            responses,
            state: state.flatten(),
            call_identity: call_identity.clone(),
            host: crate::host_approvals::HostAnswer::new(entry.name, &arguments, &request.meta.0.0),
            pending: Arc::default(),
        };
        let pending = exchange.pending.clone();
        let call = ToolCall {
            ctx: ctx.clone(),
            request: request.clone(),
            exchange,
            settled: Arc::default(),
        };
        let result = tokio::select! {
            result = entry.call(call, arguments.clone()) => result,
            () = task.cancelled() => {
                // Dropping the call's future killed what it started.
                stop.cancel();
                return Err(TaskExit::Cancelled);
            }
        };
        let question = pending.lock().unwrap_or_else(|e| e.into_inner()).take();
        let Some(asked) = question else {
            return Ok(result);
        };
        let mut responses = InputResponses::new();
        for (key, input) in asked.input_requests.unwrap_or_default() {
            // Keys must be new for every request of one task.
            let asked = task.request_input(format!("{key}-{round}"), input);
            let answer = tokio::time::timeout(ANSWER_TIMEOUT, asked)
                .await
                .map_err(|_| {
                    TaskExit::Error(McpError::invalid_request(
                        format!(
                            "the question was not answered within {} s; nothing ran",
                            ANSWER_TIMEOUT.as_secs()
                        ),
                        None,
                    ))
                })??;
            responses.insert(key, answer);
        }
        answers = Some((responses, asked.request_state));
    }
}
