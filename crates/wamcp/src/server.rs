//! The MCP face of the server: rmcp's `ServerHandler` over the registry.
//!
//! Handled by hand rather than through rmcp's tool router because the
//! router lists tools sorted by name, while the registry's order is part of
//! the design, and because the set of live tools is decided by configuration.

use crate::consent::Exchange;
use crate::context::ServerContext;
use crate::registry::ToolCall;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, GetPromptRequestParams,
    GetPromptResponse, GetTaskParams, GetTaskResult, Implementation, InitializeResult,
    ListPromptsResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use std::sync::{Arc, OnceLock};
use wamcp_policy::groups::Group;

/// What a client is told the server is for, and how to recover from refusals.
pub const INSTRUCTIONS: &str = "wamcp gives you tools to read, search, edit and build code on this \
    machine, within limits the user configured. A refused call returns a JSON error whose `recovery` \
    list says what to do instead: follow it, and never repeat the identical call. Programs run only \
    in a project folder: the client's roots, WAMCP_PROJECT_ROOTS, or the directory the session started \
    in (a Codex session's project is its session directory). Call get_server_info to see which tools, \
    paths and hosts are allowed and why.";

/// Added when the desktop tools are registered: a warning about
/// credential dialogs, which stall a command with no output and belong to
/// another process than the command.
pub const DESKTOP_INSTRUCTIONS: &str = " Desktop tools never take the foreground unless you pass \
    allow_foreground=true, which you may only do after the user agreed to the needs_permission answer. \
    If a git command stalls without output, a credential dialog (for example Git Credential Manager's \
    'Select an account', class Avalonia-*) may be waiting: call windows(), find the new window by title \
    or class rather than by pid, and look at it with see(hwnd, with_tree=true).";

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
}

impl ServerHandler for WamcpServer {
    fn get_info(&self) -> ServerConfig {
        InitializeResult::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_tasks()
                .build(),
        )
        .with_server_info(Implementation::new("wamcp", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            if self
                .ctx
                .registered
                .iter()
                .any(|t| t.groups.contains(&Group::Desktop))
            {
                format!("{INSTRUCTIONS}{DESKTOP_INSTRUCTIONS}")
            } else {
                INSTRUCTIONS.to_string()
            },
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools().to_vec()))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(crate::prompts::list()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        crate::prompts::get(&request.name)
            .map(GetPromptResponse::from)
            .ok_or_else(|| {
                McpError::invalid_params(
                    format!(
                        "Unknown prompt '{}'. prompts/list names the {} wamcp serves.",
                        request.name,
                        crate::prompts::SKILLS.len()
                    ),
                    None,
                )
            })
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // Asked at once, so the first tool call rarely waits for it.
        let server = self.clone();
        tokio::spawn(async move { crate::roots::learn(&server.ctx, &context.peer).await });
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.ctx.places.client_roots_changed();
        let server = self.clone();
        tokio::spawn(async move { crate::roots::learn(&server.ctx, &context.peer).await });
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        crate::tasks::owned(&self.ctx, &request.task_id, &context)?;
        Ok(GetTaskResult::new(
            self.ctx.session.tasks.get_task(&request.task_id)?,
        ))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        crate::tasks::owned(&self.ctx, &request.task_id, &context)?;
        self.ctx
            .session
            .tasks
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        crate::tasks::owned(&self.ctx, &request.task_id, &context)?;
        self.ctx.session.tasks.cancel_task(&request.task_id)
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
            return crate::registry::unregistered(&request.name).map(CallToolResponse::from);
        };
        tracing::debug!(tool = entry.name, "call");
        // Roots decide where the call may write: known before it starts.
        crate::roots::learn(&self.ctx, &context.peer).await;
        if let Some(asked) =
            crate::roots::round(&self.ctx, &context, request.input_responses.as_ref())
        {
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
            host: crate::host_approvals::HostAnswer::new(entry.name, &arguments, &context.meta.0.0),
            pending: Arc::default(),
        };
        let pending = exchange.pending.clone();
        let call = ToolCall {
            ctx: self.ctx.clone(),
            request: context,
            exchange,
            settled: Arc::default(),
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
