//! `ecosystem_scan`: the agent tooling around this project, and its overlaps.

use crate::registry::{Hints, HookClass, ToolCall, ToolDef, ToolOutput, blocking};
use crate::tools::mcp_audit::project_dir;
use schemars::JsonSchema;
use serde::Deserialize;
use wamcp_devenv::ecosystem::{Scan, scan};
use wamcp_devenv::inventory::winget_inventory;
use wamcp_devenv::mcp_audit::UserDirs;
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
    /// Also editor extensions and WinGet packages (needs include_host).
    #[serde(default)]
    pub include_packages: bool,
}

pub struct EcosystemScan;

impl ToolDef for EcosystemScan {
    type Params = Params;
    const NAME: &'static str = "ecosystem_scan";
    const HOOK: HookClass = HookClass::ReadsHost;
    const GROUPS: &'static [Group] = &[Group::Env];
    const DESCRIPTION: &'static str = "Inventory this project's agent tooling (MCP servers, \
        Claude Code settings, hooks, skills, agents, plugins, instruction files), its overlaps, \
        and a reversible plan to consolidate. Names and counts only.";
    const HINTS: Hints = Hints::LOCAL_READ;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        if p.include_packages && !p.include_host {
            return Err(ToolError::new(
                ErrorType::InvalidInput,
                "include_packages lists what is installed for the user, so it needs include_host=true.",
            )
            .recover("Set include_host=true too, or drop include_packages.")
            .detail("status", "invalid_input"));
        }
        let ctx = call.ctx.clone();
        let include_packages = p.include_packages;
        let mut view = blocking(Self::NAME, move || {
            let cwd = project_dir(&ctx, p.cwd.as_deref(), p.include_host)?;
            Ok(scan(&Scan {
                cwd: &cwd,
                include_host: p.include_host,
                include_packages: p.include_packages,
                user: UserDirs::from_env(),
            }))
        })
        .await?;
        if include_packages {
            let programs = call.ctx.program_search();
            view["packages"]["winget"] = call
                .unless_cancelled(async { Ok(winget_inventory(&programs).await) })
                .await?;
        }
        Ok(ToolOutput::Data(view))
    }
}
