//! `workflow_plan`: the capability a task calls for, and the steps around it.

use crate::registry::{Hints, HookClass, ToolCall, ToolDef, ToolOutput, blocking};
use schemars::JsonSchema;
use serde::Deserialize;
use wamcp_devenv::capability::MAX_ARG_CHARS;
use wamcp_devenv::sources::System;
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// What the user wants done, in their words.
    pub task: String,
    /// The project's languages or tools, if known.
    #[serde(default)]
    pub context: String,
    /// Project directory, inside a writable root.
    #[serde(default)]
    pub cwd: Option<String>,
}

pub struct WorkflowPlan;

impl ToolDef for WorkflowPlan {
    type Params = Params;
    const NAME: &'static str = "workflow_plan";
    const HOOK: HookClass = HookClass::Plan;
    const GROUPS: &'static [Group] = &[Group::Env];
    const DESCRIPTION: &'static str = "Pick the catalog capability for a task (or say none fits, \
        or several tie), with each candidate's evidence and the inspect, route, run and verify \
        steps.";
    const HINTS: Hints = Hints::LOCAL_READ;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        for (name, text) in [("task", &p.task), ("context", &p.context)] {
            let chars = text.chars().count();
            if chars > MAX_ARG_CHARS || (name == "task" && text.trim().is_empty()) {
                return Err(ToolError::new(
                    ErrorType::InvalidInput,
                    format!("{name} must be 1-{MAX_ARG_CHARS} characters (got {chars})."),
                )
                .recover("Describe the task in a sentence.")
                .detail("status", "invalid_input"));
            }
        }
        let ctx = call.ctx.clone();
        blocking(Self::NAME, move || {
            let projects = ctx.places.projects_among(&ctx.places.run_roots());
            let cwd = match wamcp_exec::command::working_directory(
                p.cwd.as_deref(),
                "cwd",
                &ctx.places.cwd,
                &projects,
            ) {
                Ok(dir) => dir,
                Err(e) if p.cwd.is_some() => return Err(e.detail("status", "invalid_input")),
                Err(_) => ctx.places.cwd.clone(),
            };
            Ok(wamcp_devenv::workflow::plan(
                &p.task,
                &p.context,
                ctx.catalog(),
                &System::new(ctx.program_search()),
                &cwd,
            ))
        })
        .await
        .map(ToolOutput::Data)
    }
}
