//! `mcp_audit`: the MCP servers a project's clients are configured with.

use crate::registry::{Hints, HookClass, ToolCall, ToolDef, ToolOutput, blocking};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::PathBuf;
use wamcp_devenv::mcp_audit::{UserDirs, audit, explicit_place, host_places, project_places};
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Project directory; default: the working directory.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Also the user's client configuration.
    #[serde(default)]
    pub include_host: bool,
    /// One more config file (JSON, or TOML for Codex).
    #[serde(default)]
    pub config_path: Option<String>,
}

pub struct McpAudit;

impl ToolDef for McpAudit {
    type Params = Params;
    const NAME: &'static str = "mcp_audit";
    const HOOK: HookClass = HookClass::ReadsHost;
    const GROUPS: &'static [Group] = &[Group::Env];
    const DESCRIPTION: &'static str = "List the MCP servers of this project's clients (Claude \
        Code, VS Code, Cursor, Codex) as structure: name, validity, transport, argument count, \
        whether command, URL or environment are set. Never values.";
    const HINTS: Hints = Hints::LOCAL_READ;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        let ctx = call.ctx.clone();
        blocking(Self::NAME, move || {
            let explicit = p
                .config_path
                .as_deref()
                .map(str::trim)
                .filter(|s| !s.is_empty());
            let cwd = project_dir(&ctx, p.cwd.as_deref(), p.include_host || explicit.is_some())?;
            let mut places = project_places(&cwd);
            if p.include_host {
                places.extend(host_places(&UserDirs::from_env()));
            }
            if let Some(raw) = explicit {
                places.push(explicit_place(ctx.places.cwd.join(raw)));
            }
            let key = cwd.display().to_string();
            let (mut view, _) = audit(&places, Some(&key));
            view["cwd"] = key.into();
            view["include_host"] = p.include_host.into();
            Ok(view)
        })
        .await
        .map(ToolOutput::Data)
    }
}

/// The project directory: `asked` resolved against the server's working
/// directory. Unless the call reaches beyond the project anyway
/// (`beyond`: `include_host`, or a file it names), it must lie in a
/// project root: pointed at the home folder, the project files these tools
/// read would be the user's own configuration.
pub fn project_dir(
    ctx: &crate::context::ServerContext,
    asked: Option<&str>,
    beyond: bool,
) -> Result<PathBuf, ToolError> {
    let server_cwd = ctx.places.cwd.as_path();
    if !beyond {
        let projects = ctx.places.projects_among(&ctx.places.run_roots());
        return wamcp_exec::command::working_directory(asked, "cwd", server_cwd, &projects)
            .map_err(|e| e.detail("status", "invalid_input"));
    }
    let Some(raw) = asked.map(str::trim).filter(|s| !s.is_empty()) else {
        return Ok(server_cwd.to_path_buf());
    };
    match dunce::canonicalize(server_cwd.join(raw)) {
        Ok(dir) if dir.is_dir() => Ok(dir),
        Ok(_) => Err(invalid(format!("'{raw}' is not a directory."))),
        Err(e) => Err(invalid(format!("'{raw}' cannot be used: {e}."))),
    }
}

fn invalid(message: String) -> ToolError {
    ToolError::new(ErrorType::InvalidInput, message)
        .recover("Pass an existing project directory.")
        .detail("status", "invalid_input")
}
