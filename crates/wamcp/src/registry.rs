//! The tool registry: one ordered table, and everything derived from it.
//!
//! The table order is the order `tools/list` presents, which steers which tool
//! a small model reaches for first, so it is decided once here. Group
//! membership, `get_server_info`'s `registered_tools` and `tools_by_group`,
//! and the token report are all computed from this table, never re-declared.

use crate::consent::{Answer, Exchange};
use crate::context::ServerContext;
use crate::tools;
use futures::FutureExt;
use rmcp::model::{
    CallToolResult, ContentBlock, JsonObject, ProgressNotificationParam, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use wamcp_fs::{Bounds, Deadline};
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::groups::Group;

/// What a tool returns on success.
pub enum ToolOutput {
    /// Plain text for the model to read; no JSON escaping to pay for.
    Text(String),
    /// A JSON object, sent as text and as `structuredContent`.
    Data(Value),
    /// A JSON object as `Data`, followed by a PNG picture.
    DataWithPng(Value, Vec<u8>),
}

/// Everything a running tool may use.
pub struct ToolCall {
    pub ctx: Arc<ServerContext>,
    /// The MCP request, for progress, cancellation and elicitation.
    pub request: RequestContext<RoleServer>,
    /// Answers a retried stateless call brought back.
    pub exchange: Exchange,
    /// Set once the call's effect is over ([`ToolCall::unless_cancelled`]
    /// returned): from then on a client that goes away no longer stops the
    /// call, which only records and reports what happened, so its answer
    /// never claims that finished work was stopped.
    pub settled: Arc<AtomicBool>,
}

impl ToolCall {
    /// Asks the user a yes/no question (see [`crate::consent`]), unless
    /// the host already put this very call to them and they said yes
    /// ([`crate::host_approvals`]): one question per action.
    pub async fn ask(&self, question: &str, offer_always: bool) -> Answer {
        let data = self.ctx.places.data_dir.as_deref();
        if self.exchange.host.said_yes(data, self.ctx.transport) {
            return Answer::Yes { always: false };
        }
        crate::consent::ask(&self.request, &self.exchange, question, offer_always).await
    }

    /// Progress notifications for a long run, when the client asked for them
    /// (sent a progress token): elapsed seconds and what is running, so a
    /// client with a request timeout keeps waiting for a long build.
    pub fn progress(&self, activity: String) -> Option<impl Fn(Duration) + Send + Sync + 'static> {
        let notify = self.progress_notes()?;
        Some(move |elapsed: Duration| {
            let seconds = elapsed.as_secs();
            notify(elapsed, format!("{activity}: {seconds} s"));
        })
    }

    /// Sends one progress notification per call (elapsed time as the
    /// value, which only grows, and a message), when the client asked.
    fn progress_notes(&self) -> Option<impl Fn(Duration, String) + Send + Sync + 'static> {
        let token = self.request.meta.get_progress_token()?;
        let peer = self.request.peer.clone();
        Some(move |elapsed: Duration, message: String| {
            let note = ProgressNotificationParam::new(token.clone(), elapsed.as_secs_f64())
                .with_message(message);
            let peer = peer.clone();
            tokio::spawn(async move {
                // A client that went away cannot be told; the run goes on.
                let _ = peer.notify_progress(note).await;
            });
        })
    }

    /// Runs a walk or search on the blocking pool within the server's
    /// search budget. A client that asked for progress hears every second
    /// once the work has taken two: "{activity}: N files so far".
    pub async fn within_search_budget<T: Send + 'static>(
        &self,
        activity: &'static str,
        work: impl FnOnce(&Bounds) -> Result<T, ToolError> + Send + 'static,
    ) -> Result<T, ToolError> {
        const QUIET: Duration = Duration::from_secs(2);
        let counter = Arc::new(AtomicUsize::new(0));
        let ticker = self.progress_notes().map(|notify| {
            let counter = counter.clone();
            tokio::spawn(async move {
                let start = std::time::Instant::now();
                let mut every = tokio::time::interval(Duration::from_secs(1));
                loop {
                    every.tick().await;
                    let elapsed = start.elapsed();
                    if elapsed >= QUIET {
                        let files = counter.load(Ordering::Relaxed);
                        notify(elapsed, format!("{activity}: {files} files so far"));
                    }
                }
            })
        });
        let limit = self.ctx.search_budget;
        let secrets = self.ctx.secrets();
        let done = blocking(activity, move || {
            let deadline = Deadline::starting_now(limit);
            work(&Bounds {
                budget: &deadline,
                progress: &counter,
                threads: None,
                secrets: &secrets,
            })
        })
        .await;
        if let Some(ticker) = ticker {
            ticker.abort();
        }
        done
    }

    /// Runs `work` until it finishes or the client cancels the request.
    /// Cancelling drops `work`, and with it any process tree it started
    /// (children are killed on drop).
    pub async fn unless_cancelled<T>(
        &self,
        work: impl Future<Output = Result<T, ToolError>>,
    ) -> Result<T, ToolError> {
        let done = tokio::select! {
            done = work => done,
            _ = self.request.ct.cancelled() => Err(ToolError::new(
                ErrorType::Cancelled,
                "The client cancelled the request; everything it started was stopped.",
            )),
        };
        self.settled.store(true, Ordering::SeqCst);
        done
    }
}

/// The annotation hints a client may show or act on. Set honestly: a client
/// may auto-approve a tool that claims to be read-only.
#[derive(Clone, Copy, Debug)]
pub struct Hints {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    /// Reaches outside the machine (the network).
    pub open_world: bool,
}

impl Hints {
    /// Reads local state and changes nothing.
    pub const LOCAL_READ: Hints = Hints {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    };

    /// Changes local files; may replace existing content.
    pub const LOCAL_WRITE: Hints = Hints {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: false,
    };

    /// Starts programs, which may do anything their arguments allow.
    pub const RUNS_PROGRAMS: Hints = Hints {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: true,
    };

    /// Acts on another program's window as a user would (a click may
    /// delete, a key may send); nothing leaves the machine.
    pub const DESKTOP_ACTION: Hints = Hints {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: false,
    };

    /// Reads from the network and changes nothing here.
    pub const NETWORK_READ: Hints = Hints {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: true,
    };
}

impl Hints {
    /// The hints that differ from what the MCP spec assumes when one is
    /// absent (not read-only, destructive, not idempotent, open world),
    /// and only those that mean something: the destructive and idempotent
    /// hints are defined for tools that write. Every hint costs tokens on
    /// every turn; an absent one tells a client exactly the same.
    fn annotations(self) -> Option<ToolAnnotations> {
        let mut a = ToolAnnotations::new();
        if self.read_only {
            a = a.read_only(true);
        } else {
            if !self.destructive {
                a = a.destructive(false);
            }
            if self.idempotent {
                a = a.idempotent(true);
            }
        }
        if !self.open_world {
            a = a.open_world(false);
        }
        (a != ToolAnnotations::new()).then_some(a)
    }
}

/// Runs blocking work (file-system walks, searches) off the async runtime,
/// so a long search never stalls the protocol loop, in the lane of `kind`
/// (the tool's name), so one tool cannot take every thread
/// ([`crate::lanes`]).
pub async fn blocking<T: Send + 'static>(
    kind: &'static str,
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    crate::lanes::run(kind, work).await.unwrap_or_else(|e| {
        Err(ToolError::new(
            ErrorType::ReadFailed,
            format!("The tool stopped unexpectedly: {e}."),
        )
        .retryable(
            "Retry once; if it happens again, report it to the user: it is a fault in the server.",
        ))
    })
}

/// What the host's hook judges of a call before wamcp runs it
/// ([`crate::hook`]): which arguments carry the effect the server would
/// ask about or refuse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookClass {
    /// Nothing to judge ahead: the server's own checks suffice.
    Nothing,
    /// Runs its `command` argument in `working_directory`.
    Command,
    /// Runs a catalog capability (`capability`, `extra_args`, `execute`).
    Capability,
    /// Installs software when `execute` is true; a plan changes nothing.
    Install,
    /// Runs a command in WSL, a Dev Container or Windows Sandbox when
    /// `execute` is true.
    SandboxRun,
    /// Reads the host's own configuration with `include_host` or
    /// `config_path`.
    ReadsHost,
    /// Writes the file at `path`.
    Write,
    /// Only plans; proven in the project, it needs no prompt.
    Plan,
}

/// One tool: its parameters, its identity and its behaviour.
pub trait ToolDef: 'static {
    /// Parameter struct; its doc comments become the schema's descriptions.
    type Params: DeserializeOwned + JsonSchema + Send + 'static;
    const NAME: &'static str;
    /// The groups that register the tool (any one of them suffices).
    const GROUPS: &'static [Group];
    /// The leading prose a model needs to choose the tool; parameters are
    /// described by the schema, not repeated here.
    const DESCRIPTION: &'static str;
    const HINTS: Hints;
    /// Registered only on Windows (desktop control); elsewhere
    /// `get_server_info` names it and says why it is absent.
    const WINDOWS_ONLY: bool = false;
    /// May run for minutes (a build, an install): a client that declared
    /// the tasks extension gets it as a task it can poll.
    const LONG_RUNNING: bool = false;
    /// What the host's hook judges of a call.
    const HOOK: HookClass = HookClass::Nothing;

    fn run(
        call: ToolCall,
        params: Self::Params,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send;
}

type CallFuture = Pin<Box<dyn Future<Output = CallToolResult> + Send>>;

/// A tool with its types erased, as the table stores it.
pub struct ToolEntry {
    pub name: &'static str,
    pub groups: &'static [Group],
    pub description: &'static str,
    pub hints: Hints,
    pub windows_only: bool,
    pub long_running: bool,
    pub hook: HookClass,
    schema: fn() -> Arc<JsonObject>,
    call: fn(ToolCall, JsonObject) -> CallFuture,
    /// Whether the parameters refuse unknown fields, which the advertised
    /// schema no longer says.
    #[cfg(test)]
    refuses_unknown: fn() -> bool,
}

/// Builds a table row for `T`.
pub const fn entry<T: ToolDef>() -> ToolEntry {
    ToolEntry {
        name: T::NAME,
        groups: T::GROUPS,
        description: T::DESCRIPTION,
        hints: T::HINTS,
        windows_only: T::WINDOWS_ONLY,
        long_running: T::LONG_RUNNING,
        hook: T::HOOK,
        schema: input_schema::<T::Params>,
        call: call_erased::<T>,
        #[cfg(test)]
        refuses_unknown: refuses_unknown::<T::Params>,
    }
}

#[cfg(test)]
fn refuses_unknown<P: JsonSchema + 'static>() -> bool {
    let schema = rmcp::handler::server::common::schema_for_type::<P>();
    schema.get("additionalProperties") == Some(&Value::Bool(false))
}

/// Every implemented tool, in presentation order. A tool that is not finished
/// is not listed: the registry never advertises a stub.
pub static TOOLS: &[ToolEntry] = &[
    entry::<tools::read_file::ReadFile>(),
    entry::<tools::list_directory::ListDirectory>(),
    entry::<tools::list_empty_dirs::ListEmptyDirs>(),
    entry::<tools::find_files::FindFiles>(),
    entry::<tools::search_files::SearchFiles>(),
    entry::<tools::write_file::WriteFile>(),
    entry::<tools::edit_file::EditFile>(),
    entry::<tools::undo::Undo>(),
    entry::<tools::build_project::BuildProject>(),
    entry::<tools::compile_shader::CompileShader>(),
    entry::<tools::run_powershell::RunPowershell>(),
    entry::<tools::capability_run::CapabilityRun>(),
    entry::<tools::get_system_info::GetSystemInfo>(),
    entry::<tools::get_gpu_info::GetGpuInfo>(),
    entry::<tools::get_server_info::GetServerInfo>(),
    entry::<tools::download_file::DownloadFile>(),
    entry::<tools::fetch_https_response::FetchHttpsResponse>(),
    entry::<tools::get_github_latest_release::GetGithubLatestRelease>(),
    entry::<tools::fetch_web_page::FetchWebPage>(),
    entry::<tools::web_search::WebSearch>(),
    entry::<tools::env_inspect::EnvInspect>(),
    entry::<tools::tool_discover::ToolDiscover>(),
    entry::<tools::workflow_plan::WorkflowPlan>(),
    entry::<tools::logs_query::LogsQuery>(),
    entry::<tools::ecosystem_scan::EcosystemScan>(),
    entry::<tools::mcp_audit::McpAudit>(),
    entry::<tools::package_search::PackageSearch>(),
    entry::<tools::package_install::PackageInstall>(),
    entry::<tools::sandbox_run::SandboxRun>(),
    entry::<tools::windows::Windows>(),
    entry::<tools::see::See>(),
    entry::<tools::click::Click>(),
    entry::<tools::type_text::TypeText>(),
    entry::<tools::scroll::Scroll>(),
    entry::<tools::key::Key>(),
    entry::<tools::open_app::OpenApp>(),
    entry::<tools::reveal::Reveal>(),
    entry::<tools::close_window::CloseWindow>(),
    entry::<tools::move_window::MoveWindow>(),
    entry::<tools::wait_for::WaitFor>(),
];

impl ToolEntry {
    pub fn in_any(&self, groups: &[Group]) -> bool {
        self.groups.iter().any(|g| groups.contains(g))
    }

    /// Whether the tool works on the platform the server runs on.
    pub fn on_this_platform(&self) -> bool {
        !self.windows_only || cfg!(windows)
    }

    /// The definition `tools/list` sends.
    pub fn definition(&self) -> Tool {
        let tool = Tool::new(self.name, self.description, (self.schema)());
        match self.hints.annotations() {
            Some(annotations) => tool.with_annotations(annotations),
            None => tool,
        }
    }

    pub fn call(&self, call: ToolCall, arguments: JsonObject) -> CallFuture {
        (self.call)(call, arguments)
    }
}

/// The tools registered for `groups`, in table order.
pub fn registered(groups: &[Group]) -> Vec<&'static ToolEntry> {
    TOOLS
        .iter()
        .filter(|t| t.in_any(groups) && t.on_this_platform())
        .collect()
}

/// Tools of `groups` this platform cannot offer.
pub fn absent_here(groups: &[Group]) -> Vec<&'static str> {
    TOOLS
        .iter()
        .filter(|t| t.in_any(groups) && !t.on_this_platform())
        .map(|t| t.name)
        .collect()
}

/// The answer to a call of a tool that is not registered. A client may
/// still offer the model a tool from an earlier session's list: a tool
/// wamcp has, switched off here, is named with the groups that turn it on;
/// `web_search` answers `WEB_RESEARCH_DISABLED` as a tool result,
/// so the model reads why instead of a bare protocol error.
pub fn unregistered(name: &str) -> Result<CallToolResult, McpError> {
    let Some(known) = TOOLS.iter().find(|t| t.name == name) else {
        return Err(McpError::invalid_params(
            format!(
                "Unknown tool '{name}'. Call tools/list, or get_server_info to see which groups are active."
            ),
            None,
        ));
    };
    if !known.on_this_platform() {
        return Err(McpError::invalid_params(
            format!("'{name}' works only on Windows; this server runs elsewhere."),
            None,
        ));
    }
    let groups: Vec<&str> = known.groups.iter().map(|g| g.name()).collect();
    if name == tools::web_search::WebSearch::NAME {
        let error = ToolError::new(
            ErrorType::WebResearchDisabled,
            "Web search is switched off in this server.",
        )
        .recover(format!(
            "It stays off until the server restarts. Tell the user; they can turn it on by adding search to {} \
             in the host's server entry (web search only), or with {}=1 (which also lets fetch_web_page read \
             any public host), then restart the server.",
            crate::settings::TOOLS,
            crate::settings::WEB_RESEARCH
        ));
        return Ok(failure(name, &error));
    }
    Err(McpError::invalid_params(
        format!(
            "'{name}' is switched off in this server: it belongs to the {} group(s), none of them active \
             (set {} to add one, then restart the server).",
            groups.join(" or "),
            crate::settings::TOOLS
        ),
        None,
    ))
}

/// Tool names per group, for every group, active or not.
pub fn tools_by_group() -> Vec<(Group, Vec<&'static str>)> {
    Group::ALL
        .iter()
        .map(|&g| {
            (
                g,
                TOOLS
                    .iter()
                    .filter(|t| t.groups.contains(&g))
                    .map(|t| t.name)
                    .collect(),
            )
        })
        .collect()
}

fn call_erased<T: ToolDef>(call: ToolCall, arguments: JsonObject) -> CallFuture {
    Box::pin(async move {
        let gone = call.ctx.session.client_gone.clone();
        let settled = call.settled.clone();
        let outcome = match serde_json::from_value::<T::Params>(Value::Object(arguments)) {
            // Dropping the tool's future kills what it started; a call whose
            // effect is over finishes its record and its true answer.
            Ok(params) => {
                // A bug that panics in a tool answers the call with an error
                // instead of leaving it unanswered for ever.
                let run = std::panic::AssertUnwindSafe(T::run(call, params)).catch_unwind();
                tokio::pin!(run);
                tokio::select! {
                    out = &mut run => out.unwrap_or_else(|panic| Err(panicked::<T>(&*panic))),
                    _ = gone.cancelled() => if settled.load(Ordering::SeqCst) {
                        run.await.unwrap_or_else(|panic| Err(panicked::<T>(&*panic)))
                    } else {
                        Err(ToolError::new(
                            ErrorType::Cancelled,
                            "The client closed the connection; the call was stopped and everything it started was killed.",
                        ))
                    },
                }
            }
            Err(e) => Err(ToolError::new(
                ErrorType::InvalidArguments,
                format!("Invalid arguments: {e}"),
            )
            .recover(format!(
                "Call {} again with the parameters its schema lists, spelled exactly.",
                T::NAME
            ))),
        };
        match outcome {
            Ok(output) => success(output),
            Err(error) => failure(T::NAME, &error),
        }
    })
}

/// The answer of a call whose tool panicked: the panic's message, and
/// that the same call will fail the same way.
fn panicked<T: ToolDef>(panic: &(dyn std::any::Any + Send)) -> ToolError {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into());
    tracing::error!("{} panicked: {what}", T::NAME);
    ToolError::new(
        ErrorType::InternalError,
        format!(
            "{} failed on a bug in wamcp ({what}); nothing further was done.",
            T::NAME
        ),
    )
    .recover("Tell the user; it is wamcp's bug.")
}

fn success(output: ToolOutput) -> CallToolResult {
    match output {
        ToolOutput::Text(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
        ToolOutput::Data(value) => {
            let mut result = CallToolResult::structured(value);
            result.content = vec![ContentBlock::text(pretty(
                result.structured_content.as_ref(),
            ))];
            result
        }
        ToolOutput::DataWithPng(value, png) => {
            use base64::Engine;
            let mut result = success(ToolOutput::Data(value));
            let encoded = base64::engine::general_purpose::STANDARD.encode(png);
            result
                .content
                .push(ContentBlock::image(encoded, "image/png"));
            result
        }
    }
}

/// The envelope as a tool result: `isError`, JSON text and `structuredContent`.
pub fn failure(tool: &str, error: &ToolError) -> CallToolResult {
    let mut result = CallToolResult::structured_error(error.envelope(tool));
    // Compact: hosts forward this text to the model on every refusal, and
    // indentation is a third of a pretty envelope's tokens.
    result.content = vec![ContentBlock::text(compact(
        result.structured_content.as_ref(),
    ))];
    result
}

fn compact(value: Option<&Value>) -> String {
    serde_json::to_string(value.unwrap_or(&Value::Null)).unwrap_or_default()
}

fn pretty(value: Option<&Value>) -> String {
    serde_json::to_string_pretty(value.unwrap_or(&Value::Null)).unwrap_or_default()
}

/// The input schema of `P`, trimmed of what costs tokens on every turn and
/// tells the model nothing: `$schema`, root `title`, integer formats like
/// `uint32`, defaults that are the empty value of their type (an optional
/// parameter left out is already that), and `additionalProperties: false`
/// (every parameter struct refuses unknown fields when called, so saying
/// it in 37 schemas bought nothing); the root description repeats the
/// tool's, and named types (`$defs`) are written in place.
fn input_schema<P: JsonSchema + 'static>() -> Arc<JsonObject> {
    let mut schema = (*rmcp::handler::server::common::schema_for_type::<P>()).clone();
    schema.remove("$schema");
    schema.remove("title");
    schema.remove("description");
    schema.remove("additionalProperties");
    let definitions = schema.remove("$defs");
    let mut value = Value::Object(schema);
    if let Some(Value::Object(definitions)) = definitions {
        inline(&mut value, &definitions);
    }
    slim(&mut value);
    let Value::Object(mut schema) = value else {
        unreachable!("slim keeps objects")
    };
    // Some clients refuse an object schema without `properties`.
    schema
        .entry("properties")
        .or_insert_with(|| Value::Object(JsonObject::new()));
    Arc::new(schema)
}

/// Replaces each `{"$ref": "#/$defs/X", ...}` with `X`'s schema and the
/// rest of the object: a reference and its definition cost more than the
/// enum they name.
fn inline(value: &mut Value, definitions: &JsonObject) {
    match value {
        Value::Object(map) => {
            let named = map
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/$defs/"))
                .and_then(|name| definitions.get(name));
            if let Some(Value::Object(definition)) = named {
                map.remove("$ref");
                for (key, part) in definition {
                    map.entry(key.clone()).or_insert_with(|| part.clone());
                }
            }
            map.values_mut().for_each(|v| inline(v, definitions));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| inline(v, definitions)),
        _ => {}
    }
}

/// Whether `value` is the empty value of its type: `null`, `""`, `false`,
/// `[]` or `{}`.
fn is_empty_value(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Number(_) => false,
    }
}

fn slim(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.get("default").is_some_and(is_empty_value) {
                map.remove("default");
            }
            // An optional parameter is simply left out; `"type": ["string",
            // "null"]` says the same at twice the price (null is still read).
            if let Some(Value::Array(types)) = map.get("type")
                && let [one, Value::String(null)] = types.as_slice()
                && null == "null"
            {
                let one = one.clone();
                map.insert("type".into(), one);
            }
            if map.get("format").and_then(Value::as_str).is_some_and(|f| {
                f.starts_with("int") || f.starts_with("uint") || f == "double" || f == "float"
            }) {
                map.remove("format");
            }
            map.values_mut().for_each(slim);
        }
        Value::Array(items) => items.iter_mut().for_each(slim),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_an_answer_that_says_what_and_not_to_retry() {
        let error = panicked::<crate::tools::run_powershell::RunPowershell>(&"index out of range");
        assert_eq!(error.kind, ErrorType::InternalError);
        assert_eq!(
            error.message,
            "run_powershell failed on a bug in wamcp (index out of range); nothing further was done."
        );
        let owned: Box<dyn std::any::Any + Send> = Box::new(String::from("boom"));
        assert!(
            panicked::<crate::tools::run_powershell::RunPowershell>(&*owned)
                .message
                .contains("(boom)")
        );
    }

    #[test]
    fn names_are_unique_and_every_tool_has_a_group_and_prose() {
        let mut seen = std::collections::HashSet::new();
        for tool in TOOLS {
            assert!(seen.insert(tool.name), "duplicate tool {}", tool.name);
            assert!(!tool.groups.is_empty(), "{} has no group", tool.name);
            assert!(
                tool.description.ends_with('.'),
                "{}: description should be prose",
                tool.name
            );
            assert!(
                !tool.description.contains("Args:"),
                "{}: parameters belong in the schema",
                tool.name
            );
        }
    }

    #[test]
    fn schemas_are_closed_objects_without_token_waste() {
        for tool in TOOLS {
            let schema = Value::Object((*tool.definition().input_schema).clone());
            assert_eq!(schema["type"], "object", "{}", tool.name);
            assert!(schema.get("properties").is_some(), "{}", tool.name);
            assert!(
                (tool.refuses_unknown)(),
                "{}: unknown arguments must be refused",
                tool.name
            );
            let text = schema.to_string();
            for waste in [
                "$schema",
                "\"format\":\"uint",
                "$ref",
                "$defs",
                "additionalProperties",
            ] {
                assert!(!text.contains(waste), "{}: {waste} in {text}", tool.name);
            }
            for empty in ["\"default\":\"\"", "\"default\":false", "\"default\":[]"] {
                assert!(!text.contains(empty), "{}: {empty} in {text}", tool.name);
            }
        }
    }

    #[test]
    fn core_group_is_registered_alone() {
        let names: Vec<&str> = registered(&[Group::Core]).iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            [
                "read_file",
                "list_directory",
                "list_empty_dirs",
                "find_files",
                "search_files",
                "get_system_info",
                "get_server_info"
            ]
        );
    }
}
