//! `sandbox_run`: a command in WSL, the project's Dev Container, or
//! Windows Sandbox, chosen by what isolation the work needs.

use super::approval::{Approvable, Question, Status, Stop, drive};
use crate::registry::{Hints, HookClass, ToolCall, ToolDef, ToolOutput, blocking};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Instant;
use wamcp_devenv::audit_log::Entry;
use wamcp_devenv::capability::{Expected, Identity, MAX_ARG_CHARS};
use wamcp_devenv::sandbox::{SandboxPlan, has_devcontainer_config, still_in_place};
use wamcp_exec::Progress;
use wamcp_policy::devenv::audit::Outcome;
use wamcp_policy::devenv::sandbox::{Environment, Requirement, route};
use wamcp_policy::error::{ErrorType, ToolError};
use wamcp_policy::groups::Group;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Run by `sh -lc`, or by `cmd.exe /c` in Windows Sandbox.
    pub command: String,
    pub isolation_requirement: Requirement,
    #[serde(default = "auto")]
    pub environment: Environment,
    /// Inside a writable root.
    #[serde(default)]
    pub workspace_folder: Option<String>,
    /// Windows Sandbox: what it needs, relative to workspace_folder.
    #[serde(default)]
    pub payload_paths: Vec<String>,
    /// false plans; true runs once approved (pass the plan's expected_* values).
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
        .recover("Fix what the message names.")
        .detail("status", "invalid_input")
}

pub struct SandboxRun;

impl ToolDef for SandboxRun {
    type Params = Params;
    const NAME: &'static str = "sandbox_run";
    const HOOK: HookClass = HookClass::SandboxRun;
    const LONG_RUNNING: bool = true;
    const GROUPS: &'static [Group] = &[Group::Sandbox];
    const DESCRIPTION: &'static str = "Run a command in WSL (Linux compatibility), the project's \
        Dev Container (reproducibility) or Windows Sandbox (untrusted Windows code: a read-only \
        copy of named files, no network). Plans first; runs once the user approves.";
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
            let projects = ctx.places.projects_among(&ctx.places.run_roots());
            let project = wamcp_exec::command::working_directory(
                folder.as_deref(),
                "workspace_folder",
                &ctx.places.cwd,
                &projects,
            )
            .map_err(|e| e.detail("status", "invalid_input"))?;
            SandboxPlan::new(
                environment,
                &project,
                &command,
                &paths,
                &ctx.program_search(),
            )
            .map_err(|e| invalid(format!("{e}.")))
        })
        .await?;
        let run = SandboxRunPlan {
            plan,
            expected: p.expected(),
        };
        let driving = async { Ok(ToolOutput::Data(drive(&call, &run, p.execute).await)) };
        // WSL and a Dev Container write the project through their mounts:
        // a run is a step like any command.
        let scope = p.execute.then(|| crate::undo::command_scope(&call.ctx));
        crate::undo::recorded(&call, scope, Self::NAME, &p.command, driving).await
    }
}

/// A sandbox run as the approval driver runs it.
struct SandboxRunPlan {
    plan: SandboxPlan,
    expected: Expected,
}

impl SandboxRunPlan {
    /// Where Windows Sandbox bundles are staged.
    fn bundles(call: &ToolCall) -> Option<PathBuf> {
        call.ctx
            .places
            .data_dir
            .as_ref()
            .map(|d| d.join("sandbox-bundles"))
    }
}

impl Approvable for SandboxRunPlan {
    fn view(&self, status: Status) -> Value {
        self.plan.view(status.as_str())
    }

    fn record(&self, outcome: Outcome, started: Option<Instant>, detail: &str) -> Entry {
        self.plan.audit(outcome, started, detail)
    }

    fn program(&self) -> Option<(&Path, Option<&Identity>)> {
        if self.plan.unavailable.is_some() {
            return None;
        }
        let program = self.plan.executable.as_deref()?;
        Some((program, self.plan.identity.as_ref()))
    }

    fn planned(&self) -> Value {
        if self.program().is_none() {
            return self.view(Status::Unavailable);
        }
        let mut view = self.view(Status::Planned);
        view["next"] = "To run it, call sandbox_run again with execute=true and this plan's expected_executable, \
                        expected_executable_identity_kind and expected_executable_identity_sha256; the user is asked \
                        first."
            .into();
        view
    }

    fn refused(&self) -> Option<Stop> {
        self.stale(&self.expected)
    }

    fn question(&self, call: &ToolCall) -> Option<Question> {
        let plan = &self.plan;
        // Unconfined commands can write where the bundle is staged: the
        // user should know the copy is only as safe as the agent's other
        // commands.
        let confined = call.ctx.sandbox.status().mechanism.is_some();
        let (what, argv, why) = match (plan.environment, &plan.payload) {
            (Environment::WindowsSandbox, Some(payload)) => (
                format!(
                    "in Windows Sandbox, from a read-only copy of {} files and folders ({} bytes), without \
                     network",
                    payload.entries.len(),
                    payload.bytes
                ),
                vec![plan.command.clone()],
                if confined {
                    "Only its launch can be confirmed from here."
                } else {
                    "Only its launch can be confirmed from here. Commands on this machine are not confined, \
                     so one could still change the staged copy or its configuration before Windows Sandbox \
                     reads them."
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
        Some(Question {
            what,
            argv,
            why: why.into(),
        })
    }

    async fn still_ready(&self, call: &ToolCall) -> Option<Stop> {
        // The folder the user approved must still be that folder: replaced
        // by a link while they read the question, the run would start
        // elsewhere.
        let (folder, environment) = (self.plan.project.clone(), self.plan.environment);
        let unchanged = blocking("sandbox_run", move || {
            Ok(still_in_place(&folder)
                && (environment != Environment::DevContainer || has_devcontainer_config(&folder)))
        });
        if !unchanged.await.unwrap_or(false) {
            return Some(self.stop(
                Status::StalePlan,
                "the workspace folder changed while the user was being asked; nothing ran",
                "stale_plan",
            ));
        }
        // A command that can write the bundle folder could plant a link in
        // a bundle being filled, or swap its share for another folder after.
        let bundles = Self::bundles(call)?;
        if self.plan.environment != Environment::WindowsSandbox {
            return None;
        }
        let place = call.ctx.places.writable_place_overlapping(&bundles)?;
        Some(self.stop(
            Status::Failed,
            format!(
                "the bundle folder {} overlaps {}, where commands can write; nothing was staged (move the \
                 writable root or cache, or the data directory)",
                bundles.display(),
                place.display()
            ),
            "bundle folder writable",
        ))
    }

    async fn execute(&self, call: &ToolCall) -> (Value, Entry) {
        let progress = call.progress(format!("running in {}", self.plan.environment.name()));
        let bundles = Self::bundles(call);
        // The child's PATH as the places are now (see package_install).
        let programs = call.ctx.program_search();
        self.plan
            .execute(
                &programs,
                bundles.as_deref(),
                progress.as_ref().map(|f| f as Progress),
            )
            .await
    }
}
