//! `build_project`: run a build driver and return parsed diagnostics.

use crate::registry::{Hints, HookClass, ToolCall, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use wamcp_exec::Progress;
use wamcp_exec::build::{BuildRequest, build_project};
use wamcp_policy::error::ToolError;
use wamcp_policy::groups::Group;
use wamcp_policy::limits::BUILD_TIMEOUT_SECONDS;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// e.g. "cmake --build build --config Debug" or "cargo build".
    pub command: String,
    /// Inside a writable root.
    #[serde(default)]
    pub working_directory: Option<String>,
    /// 1-1800; then the process tree is killed.
    #[serde(default = "six_hundred")]
    pub timeout_seconds: i64,
}

fn six_hundred() -> i64 {
    BUILD_TIMEOUT_SECONDS as i64
}

pub struct BuildProject;

impl ToolDef for BuildProject {
    type Params = Params;
    const NAME: &'static str = "build_project";
    const HOOK: HookClass = HookClass::Command;
    const LONG_RUNNING: bool = true;
    const GROUPS: &'static [Group] = &[Group::Build];
    const DESCRIPTION: &'static str = "Run a build (cmake, ninja, msbuild, dotnet, cargo, a \
        compiler or script) and get its errors and warnings deduplicated, with file, line and \
        code.";
    const HINTS: Hints = Hints::RUNS_PROGRAMS;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        let ctx = &call.ctx;
        let request = BuildRequest {
            command: &p.command,
            timeout_seconds: p.timeout_seconds,
            working_directory: p.working_directory.as_deref(),
        };
        let progress = call.progress(format!("building with {}", p.command));
        let (request, progress) = (&request, progress.as_ref().map(|f| f as Progress));
        let project = ctx.project_of(p.working_directory.as_deref());
        let building = super::with_approval(
            &call,
            &p.command,
            project.as_deref(),
            |approval| async move {
                // The places and the program search as they are for this run
                // (see run_powershell).
                let roots = ctx.places.run_roots();
                let projects = ctx.places.projects_among(&roots);
                let policy = ctx.command_policy(&roots, &projects);
                build_project(request, &policy, &ctx.session.builds, approval, progress).await
            },
        );
        // Recorded outside the cancellation, as run_powershell is.
        let building = async { call.unless_cancelled(building).await.map(ToolOutput::Text) };
        let scope = Some(crate::undo::command_scope(ctx));
        crate::undo::recorded(&call, scope, Self::NAME, &p.command, building).await
    }
}
