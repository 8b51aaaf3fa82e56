//! `run_powershell`: one allowed developer command, run exactly as checked.

use crate::registry::{Hints, HookClass, ToolCall, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use wamcp_exec::Progress;
use wamcp_exec::command::{CommandRequest, run_command};
use wamcp_policy::error::ToolError;
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// e.g. "cd web && npm test | tail -n 30".
    pub command: String,
    /// 1-600; then the process tree is killed.
    #[serde(default = "three_hundred")]
    pub timeout_seconds: i64,
    /// Inside a writable root.
    #[serde(default)]
    pub working_directory: Option<String>,
}

fn three_hundred() -> i64 {
    wamcp_policy::limits::POWERSHELL_TIMEOUT_SECONDS as i64
}

pub struct RunPowershell;

impl ToolDef for RunPowershell {
    type Params = Params;
    const NAME: &'static str = "run_powershell";
    const HOOK: HookClass = HookClass::Command;
    const LONG_RUNNING: bool = true;
    const GROUPS: &'static [Group] = &[Group::Build];
    const DESCRIPTION: &'static str = "Run developer commands (git, cmake, cargo, npm, python, \
        project tools) in a project root; returns output and exit code. &&, ;, cd, VAR=x, 2>&1 \
        and | head/grep work.";
    const HINTS: Hints = Hints::RUNS_PROGRAMS;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        let ctx = &call.ctx;
        let request = CommandRequest {
            command: &p.command,
            timeout_seconds: p.timeout_seconds,
            working_directory: p.working_directory.as_deref(),
        };
        let progress = call.progress(format!("running {}", p.command));
        let (request, progress) = (&request, progress.as_ref().map(|f| f as Progress));
        let project = ctx.project_of(p.working_directory.as_deref());
        let running = super::with_approval(
            &call,
            &p.command,
            project.as_deref(),
            |approval| async move {
                // The places and the program search as they are for this run:
                // a root the client added while the user was being asked is
                // distrusted here too.
                let roots = ctx.places.run_roots();
                let projects = ctx.places.projects_among(&roots);
                let policy = ctx.command_policy(&roots, &projects);
                run_command(request, &policy, approval, progress).await
            },
        );
        // Recorded outside the cancellation: a command stopped half-way may
        // have changed files, and that step can be undone too.
        let running = async { call.unless_cancelled(running).await.map(ToolOutput::Text) };
        let scope = Some(crate::undo::command_scope(ctx));
        crate::undo::recorded(&call, scope, Self::NAME, &p.command, running).await
    }
}
