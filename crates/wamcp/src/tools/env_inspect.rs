//! `env_inspect`: evidence about this machine's development environment.

use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput, blocking};
use schemars::JsonSchema;
use serde::Deserialize;
use wamcp_devenv::snapshot;
use wamcp_devenv::sources::System;
use wamcp_policy::error::ToolError;
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Skip the 5-minute cache.
    #[serde(default)]
    pub force_refresh: bool,
}

pub struct EnvInspect;

impl ToolDef for EnvInspect {
    type Params = Params;
    const NAME: &'static str = "env_inspect";
    const GROUPS: &'static [Group] = &[Group::Env];
    const DESCRIPTION: &'static str = "This machine's development environment: OS, runtimes, \
        package managers, Visual Studio, Windows SDKs, WSL, Windows Sandbox, Hyper-V, Developer \
        Mode; null means unknown.";
    const HINTS: Hints = Hints::LOCAL_READ;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        let ctx = call.ctx.clone();
        blocking(Self::NAME, move || {
            Ok(ctx.session.env_cache.get(p.force_refresh, || {
                snapshot::collect(&System::new(ctx.program_search()))
            }))
        })
        .await
        .map(ToolOutput::Data)
    }
}
