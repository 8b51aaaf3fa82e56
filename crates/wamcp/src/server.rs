//! The MCP face of the server: rmcp's `ServerHandler` over the registry.
//!
//! Handled by hand rather than through rmcp's tool router because the
//! router lists tools sorted by name, while the registry's order is part of
//! the design, and because the set of live tools is decided by configuration.

use crate::consent::Exchange;
use crate::context::ServerContext;
use crate::registry::ToolCall;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, GetTaskParams, GetTaskResult,
    Implementation, InitializeResult, InputRequest, InputRequests, InputRequiredResult,
    InputResponses, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities,
    ServerConfig, Tool, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, Peer, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use std::sync::{Arc, OnceLock};

/// What a client is told the server is for, and how to recover from refusals.
pub const INSTRUCTIONS: &str = "wamcp gives you tools to read, search, edit and build code on this \
    machine, within limits the user configured. A refused call returns a JSON error whose `recovery` \
    list says what to do instead: follow it, and never repeat the identical call. Call \
    get_server_info to see which tools, paths and hosts are allowed and why.";

#[derive(Clone)]
pub struct WamcpServer {
    ctx: Arc<ServerContext>,
    /// The definitions (JSON schemas included), made on the first
    /// `tools/list` or call rather than before the `initialize` answer.
    tools: Arc<OnceLock<Vec<Tool>>>,
}

impl WamcpServer {
    pub fn new(ctx: Arc<ServerContext>) -> WamcpServer {
        WamcpServer {
            ctx,
            tools: Arc::new(OnceLock::new()),
        }
    }

    fn tools(&self) -> &[Tool] {
        self.tools
            .get_or_init(|| self.ctx.registered.iter().map(|t| t.definition()).collect())
    }

    /// Asks the client for its workspace roots when it offers them and the
    /// list is not known (or changed). Handshake sessions only: the
    /// stateless era forbids server requests, and roots are deprecated
    /// there. One question at a time; the others wait for its answer.
    #[expect(
        deprecated,
        reason = "MCP roots are deprecated (SEP-2577) but still what hosts send"
    )]
    async fn learn_client_roots(&self, peer: &Peer<RoleServer>) {
        let offered = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        if !self.ctx.client_roots_enabled || !offered || self.ctx.client_roots().fetched {
            return;
        }
        let _one_at_a_time = self.ctx.roots_gate.lock().await;
        if self.ctx.client_roots().fetched {
            return;
        }
        match tokio::time::timeout(ROOTS_ANSWER_TIMEOUT, peer.list_roots()).await {
            Ok(Ok(list)) => {
                let uris: Vec<String> = list.roots.into_iter().map(|r| r.uri).collect();
                self.ctx.set_client_roots(&uris);
            }
            Ok(Err(e)) => self
                .ctx
                .client_roots_unavailable(format!("the client did not list its roots: {e}")),
            Err(_) => self.ctx.client_roots_unavailable(format!(
                "the client did not list its roots within {} s",
                ROOTS_ANSWER_TIMEOUT.as_secs()
            )),
        }
    }
}

impl WamcpServer {
    /// The stateless era's way to the client's roots: the first call
    /// returns an input request for them, and the client calls again with
    /// the list. `None` when the call may go on.
    #[expect(
        deprecated,
        reason = "MCP roots are deprecated (SEP-2577) but still what hosts send"
    )]
    fn roots_round(
        &self,
        context: &RequestContext<RoleServer>,
        responses: Option<&InputResponses>,
    ) -> Option<InputRequiredResult> {
        // A handshake session said in `initialize` whether it has roots; a
        // call's own metadata cannot add them afterwards.
        let stateless = context.peer.peer_info().is_none()
            && context
                .protocol_version()
                .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        let offered = context
            .client_capabilities()
            .is_some_and(|c| c.roots.is_some());
        if !stateless
            || !offered
            || !self.ctx.client_roots_enabled
            || self.ctx.client_roots().fetched
        {
            return None;
        }
        if let Some(answer) = responses.and_then(|r| r.get(ROOTS_KEY)) {
            match serde_json::from_value::<rmcp::model::ListRootsResult>(answer.clone()) {
                Ok(list) => {
                    let uris: Vec<String> = list.roots.into_iter().map(|r| r.uri).collect();
                    self.ctx.set_client_roots(&uris);
                }
                Err(e) => self
                    .ctx
                    .client_roots_unavailable(format!("the client's roots could not be read: {e}")),
            }
            return None;
        }
        let mut requests = InputRequests::new();
        requests.insert(
            ROOTS_KEY.to_string(),
            InputRequest::ListRoots(rmcp::model::ListRootsRequest::default()),
        );
        Some(InputRequiredResult::new(
            Some(requests),
            Some(ROOTS_KEY.to_string()),
        ))
    }
}

/// The key of the roots request in an input-required round.
const ROOTS_KEY: &str = "wamcp_roots";

/// How long a client may take to list its roots.
const ROOTS_ANSWER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

impl ServerHandler for WamcpServer {
    fn get_info(&self) -> ServerConfig {
        InitializeResult::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tasks()
                .build(),
        )
        .with_server_info(Implementation::new("wamcp", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools().to_vec()))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // Asked at once, so the first tool call rarely waits for it.
        let server = self.clone();
        tokio::spawn(async move { server.learn_client_roots(&context.peer).await });
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.ctx.client_roots_changed();
        let server = self.clone();
        tokio::spawn(async move { server.learn_client_roots(&context.peer).await });
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        Ok(GetTaskResult::new(
            self.ctx.tasks.get_task(&request.task_id)?,
        ))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.ctx
            .tasks
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.ctx.tasks.cancel_task(&request.task_id)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools().iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // An unregistered name is a protocol error, not a tool result: the
        // client offered the model a tool this server never listed.
        let Some(entry) = self.ctx.registered.iter().find(|t| t.name == request.name) else {
            return Err(McpError::invalid_params(
                format!(
                    "Unknown tool '{}'. Call tools/list, or get_server_info to see which groups are active.",
                    request.name
                ),
                None,
            ));
        };
        tracing::debug!(tool = entry.name, "call");
        // Roots decide where the call may write: known before it starts.
        self.learn_client_roots(&context.peer).await;
        if let Some(asked) = self.roots_round(&context, request.input_responses.as_ref()) {
            return Ok(CallToolResponse::InputRequired(asked));
        }
        let arguments = request.arguments.unwrap_or_default();
        // Tool name and arguments as sent: what a user's answer is bound to.
        let call_identity = format!(
            "{} {}",
            entry.name,
            serde_json::to_string(&arguments).unwrap_or_default()
        );
        if crate::tasks::wanted(&self.ctx, entry, &context) {
            let task =
                crate::tasks::start(self.ctx.clone(), entry, arguments, context, call_identity);
            return Ok(CallToolResponse::Task(task));
        }
        let exchange = Exchange {
            responses: request.input_responses,
            state: request.request_state,
            call_identity,
            pending: Arc::default(),
        };
        let pending = exchange.pending.clone();
        let call = ToolCall {
            ctx: self.ctx.clone(),
            request: context,
            exchange,
        };
        let result = entry.call(call, arguments).await;
        // A tool that asked the user in the stateless era ends with the
        // question; the client calls again with the answer.
        if let Some(question) = pending.lock().unwrap_or_else(|e| e.into_inner()).take() {
            return Ok(CallToolResponse::InputRequired(question));
        }
        Ok(result.into())
    }
}
