//! `sandbox_run`: a command in WSL, the project's Dev Container, or
//! Windows Sandbox, chosen by what isolation the work needs.

use super::approval::{ask_to_run, run_recorded};
use crate::registry::{Hints, ToolCall, ToolDef, ToolOutput, blocking};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::time::Instant;
use wamcp_devenv::capability::{Expected, MAX_ARG_CHARS};
use wamcp_devenv::sandbox::{SandboxPlan, has_devcontainer_config, still_in_place};
use wamcp_exec::Progress;
use wamcp_policy::devenv::audit::Outcome;
use wamcp_policy::devenv::sandbox::{Environment, Requirement, route};
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// The command, run by `sh -lc` (WSL, Dev Container) or `cmd.exe /c` (Windows Sandbox).
    pub command: String,
    /// linux_compatibility: WSL; project_reproducibility: Dev Container; untrusted_windows: Windows Sandbox.
    pub isolation_requirement: Requirement,
    #[serde(default = "auto")]
    pub environment: Environment,
    /// Project folder, inside a writable root.
    #[serde(default)]
    pub workspace_folder: Option<String>,
    /// Windows Sandbox only: files and folders the command needs, relative to the workspace folder.
    #[serde(default)]
    pub payload_paths: Vec<String>,
    /// false plans; true runs after the user approves (pass the plan's expected_* values).
    #[serde(default)]
    pub execute: bool,
    #[serde(default)]
    pub expected_executable: Option<String>,
    #[serde(default)]
    pub expected_executable_identity_kind: Option<String>,
    #[serde(default)]
    pub expected_executable_identity_sha256: Option<String>,
}

impl Params {
    fn expected(&self) -> Expected {
        Expected {
            executable: self.expected_executable.clone(),
            kind: self.expected_executable_identity_kind.clone(),
            sha256: self.expected_executable_identity_sha256.clone(),
        }
    }
}

fn auto() -> Environment {
    Environment::Auto
}

fn invalid(message: String) -> ToolError {
    ToolError::new(ErrorType::InvalidInput, message)
        .recover("DO NOT retry the identical call; fix what the message names.")
        .detail("status", "invalid_input")
}

pub struct SandboxRun;

impl ToolDef for SandboxRun {
    type Params = Params;
    const NAME: &'static str = "sandbox_run";
    const LONG_RUNNING: bool = true;
    const GROUPS: &'static [Group] = &[Group::Sandbox];
    const DESCRIPTION: &'static str = "Run a command where the work belongs: WSL for Linux compatibility, the \
        project's Dev Container for reproducibility, Windows Sandbox (a read-only copy of named files, no \
        network) for untrusted Windows code. Plan first; runs only after the user approves.";
    const HINTS: Hints = Hints::RUNS_PROGRAMS;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        let chars = p.command.chars().count();
        if p.command.trim().is_empty() || chars > MAX_ARG_CHARS || p.command.contains('\0') {
            return Err(invalid(format!(
                "command must be 1-{MAX_ARG_CHARS} characters without NUL (got {chars})."
            )));
        }
        p.expected().validate(p.execute)?;
        let environment =
            route(p.environment, p.isolation_requirement).map_err(|e| invalid(format!("{e}.")))?;
        let ctx = call.ctx.clone();
        let (folder, command, paths) = (
            p.workspace_folder.clone(),
            p.command.clone(),
            p.payload_paths.clone(),
        );
        let plan = blocking(Self::NAME, move || {
            let projects = ctx.projects_among(&ctx.run_roots());
            let project = wamcp_exec::command::working_directory(
                folder.as_deref(),
                "workspace_folder",
                &ctx.cwd,
                &projects,
            )
            .map_err(|e| e.detail("status", "invalid_input"))?;
            SandboxPlan::new(environment, &project, &command, &paths)
                .map_err(|e| invalid(format!("{e}.")))
        })
        .await?;
        let (mut view, entry) = decide(&call, &plan, &p).await;
        if let Some(entry) = entry
            && let Some(problem) = call.ctx.audit(entry).await
        {
            view["audit_error"] = Value::String(problem);
        }
        Ok(ToolOutput::Data(view))
    }
}

async fn decide(
    call: &ToolCall,
    plan: &SandboxPlan,
    p: &Params,
) -> (Value, Option<wamcp_devenv::audit_log::Entry>) {
    let (Some(executable), None) = (&plan.executable, &plan.unavailable) else {
        return (
            plan.view("unavailable"),
            p.execute
                .then(|| plan.audit(Outcome::NotExecuted, None, "unavailable")),
        );
    };
    if !p.execute {
        let mut view = plan.view("planned");
        view["next"] = "To run it, call sandbox_run again with execute=true and this plan's expected_executable, \
                        expected_executable_identity_kind and expected_executable_identity_sha256; the user is asked \
                        first."
            .into();
        return (view, None);
    }
    let stale = p
        .expected()
        .stale_reasons(executable, plan.identity.as_ref());
    if !stale.is_empty() {
        let mut view = plan.view("stale_plan");
        view["reason"] = Value::String(stale.join("; "));
        return (
            view,
            Some(plan.audit(Outcome::NotExecuted, None, "stale_plan")),
        );
    }
    // Unconfined commands can write where the bundle is staged: the user
    // should know the copy is only as safe as the agent's other commands.
    let confined = call.ctx.sandbox.status().mechanism.is_some();
    let (what, argv, why) = match (plan.environment, &plan.payload) {
        (Environment::WindowsSandbox, Some(payload)) => (
            format!(
                "in Windows Sandbox, from a read-only copy of {} files and folders ({} bytes), without network",
                payload.entries.len(),
                payload.bytes
            ),
            vec![plan.command.clone()],
            if confined {
                "Only its launch can be confirmed from here."
            } else {
                "Only its launch can be confirmed from here. Commands on this machine are not confined, so \
                 one could still change the staged copy or its configuration before Windows Sandbox reads them."
            },
        ),
        (Environment::Wsl, _) => (
            "in WSL".to_string(),
            plan.argv.clone(),
            "WSL is not isolated: the command can read and write the Windows drives.",
        ),
        _ => (
            "in the project's Dev Container".to_string(),
            plan.argv.clone(),
            "It runs with the container's access to the mounted project.",
        ),
    };
    let record = plan.audit(Outcome::NotApplicable, None, "");
    if let Err(refused) = ask_to_run(
        call,
        &what,
        &argv,
        why,
        record,
        executable,
        plan.identity.as_ref(),
    )
    .await
    {
        let mut view = plan.view(refused.status);
        view["reason"] = Value::String(refused.reason);
        return (
            view,
            Some(plan.audit(Outcome::NotExecuted, None, &refused.detail)),
        );
    }
    // The folder the user approved must still be that folder: replaced by
    // a link while they read the question, the run would start elsewhere.
    let (folder, environment) = (plan.project.clone(), plan.environment);
    let unchanged = blocking("sandbox_run", move || {
        Ok(still_in_place(&folder)
            && (environment != Environment::DevContainer || has_devcontainer_config(&folder)))
    });
    if !unchanged.await.unwrap_or(false) {
        let mut view = plan.view("stale_plan");
        view["reason"] =
            "the workspace folder changed while the user was being asked; nothing ran".into();
        return (
            view,
            Some(plan.audit(Outcome::NotExecuted, None, "stale_plan")),
        );
    }
    let bundles = call
        .ctx
        .data_dir
        .as_ref()
        .map(|d| d.join("sandbox-bundles"));
    // A command that can write the bundle folder could plant a link in a
    // bundle being filled, or swap its share for another folder after.
    if plan.environment == Environment::WindowsSandbox
        && let Some(place) = bundles
            .as_deref()
            .and_then(|b| call.ctx.writable_place_overlapping(b))
    {
        let mut view = plan.view("failed");
        view["reason"] = format!(
            "the bundle folder {} overlaps {}, where commands can write; nothing was staged (move the \
             writable root or cache, or the data directory)",
            bundles.as_deref().map(|b| b.display().to_string()).unwrap_or_default(),
            place.display()
        )
        .into();
        return (
            view,
            Some(plan.audit(Outcome::NotExecuted, None, "bundle folder writable")),
        );
    }
    let progress = call.progress(format!("running in {}", plan.environment.name()));
    let running = plan.execute(bundles.as_deref(), progress.as_ref().map(|f| f as Progress));
    let unknown = plan.audit(Outcome::Unknown, Some(Instant::now()), "cancelled");
    let (view, entry) = run_recorded(call, unknown, plan.view("unknown"), running).await;
    (view, Some(entry))
}
