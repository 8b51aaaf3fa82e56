//! `capability_run`: plan or run one catalog capability.

use super::approval::{Approvable, Question, Status, Stop, drive};
use crate::registry::{Hints, HookClass, ToolCall, ToolDef, ToolOutput, blocking};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;
use std::time::Instant;
use wamcp_devenv::audit_log::Entry;
use wamcp_devenv::capability::{
    self, DEFAULT_TIMEOUT_SECONDS, Expected, Gate, Identity, Prepared, Request,
};
use wamcp_devenv::sources::System;
use wamcp_exec::Progress;
use wamcp_policy::devenv::audit::Outcome;
use wamcp_policy::devenv::safety::Safety;
use wamcp_policy::error::ToolError;
use wamcp_policy::groups::Group;
use wamcp_policy::text::shown;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Capability id (workflow_plan lists them).
    pub capability: String,
    /// Appended arguments (then approval is required).
    #[serde(default)]
    pub extra_args: Vec<String>,
    /// Inside a writable root.
    #[serde(default)]
    pub cwd: Option<String>,
    /// false plans; true runs (pass the plan's expected_* values).
    #[serde(default)]
    pub execute: bool,
    #[serde(default)]
    pub expected_executable: Option<String>,
    #[serde(default)]
    pub expected_executable_identity_kind: Option<String>,
    #[serde(default)]
    pub expected_executable_identity_sha256: Option<String>,
    /// 1-600.
    #[serde(default = "default_timeout")]
    pub timeout_seconds: i64,
}

fn default_timeout() -> i64 {
    DEFAULT_TIMEOUT_SECONDS
}

pub struct CapabilityRun;

impl ToolDef for CapabilityRun {
    type Params = Params;
    const NAME: &'static str = "capability_run";
    const HOOK: HookClass = HookClass::Capability;
    const GROUPS: &'static [Group] = &[Group::Build];
    const DESCRIPTION: &'static str = "Plan, then run, one catalog capability: a reviewed argv with no \
        shell, confined like every command.";
    const HINTS: Hints = Hints::RUNS_PROGRAMS;

    async fn run(call: ToolCall, p: Params) -> Result<ToolOutput, ToolError> {
        let request = Request {
            capability: p.capability,
            extra_args: p.extra_args,
            cwd: p.cwd,
            execute: p.execute,
            expected: Expected {
                executable: p.expected_executable,
                kind: p.expected_executable_identity_kind,
                sha256: p.expected_executable_identity_sha256,
            },
            timeout_seconds: p.timeout_seconds,
        };
        let ctx = call.ctx.clone();
        let asked = request.clone();
        let prepared = blocking(Self::NAME, move || {
            let projects = ctx.places.projects_among(&ctx.places.run_roots());
            let system = System::new(ctx.program_search());
            capability::prepare(&asked, ctx.catalog(), &system, &ctx.places.cwd, &projects)
        })
        .await;
        // Bad input and plans change nothing and are not recorded: a call
        // that costs nothing must not be able to rotate the trail away.
        let prepared = prepared?;
        let run = CapabilityPlan { prepared, request };
        let execute = run.request.execute;
        let driving = async { Ok(ToolOutput::Data(drive(&call, &run, execute).await)) };
        // A plan changes nothing; a run is a step like any command.
        let scope = execute.then(|| crate::undo::command_scope(&call.ctx));
        let what = run.request.capability.clone();
        crate::undo::recorded(&call, scope, Self::NAME, &what, driving).await
    }
}

/// A capability as the approval driver runs it.
struct CapabilityPlan {
    prepared: Prepared,
    request: Request,
}

impl Approvable for CapabilityPlan {
    fn view(&self, status: Status) -> Value {
        let mut view = capability::plan(&self.prepared);
        view["status"] = status.as_str().into();
        view
    }

    fn record(&self, outcome: Outcome, started: Option<Instant>, detail: &str) -> Entry {
        let detail = (!detail.is_empty()).then(|| detail.to_string());
        self.prepared.audit(outcome, started, detail)
    }

    fn program(&self) -> Option<(&Path, Option<&Identity>)> {
        let resolved = self.prepared.resolved.as_ref()?;
        Some((&resolved.executable, self.prepared.identity.as_ref()))
    }

    fn planned(&self) -> Value {
        capability::plan(&self.prepared)
    }

    fn refused(&self) -> Option<Stop> {
        match capability::gate(&self.prepared, &self.request) {
            Gate::Open => None,
            Gate::Refused(view) => {
                let detail = view["status"].as_str().unwrap_or_default().to_string();
                Some(Stop { view, detail })
            }
        }
    }

    fn question(&self, _: &ToolCall) -> Option<Question> {
        let p = &self.prepared;
        if p.effective != Safety::ApprovalRequired {
            return None;
        }
        let why = if p.capability.safety == Safety::ApprovalRequired {
            "It is classified approval-required."
        } else {
            "It is approval-required because of the extra arguments."
        };
        Some(Question {
            what: format!(
                "the capability '{}' in {}",
                p.capability.id,
                shown(&p.cwd.display().to_string())
            ),
            argv: p.argv(),
            why: why.into(),
        })
    }

    async fn still_ready(&self, _: &ToolCall) -> Option<Stop> {
        // The directory must still be the one planned (and asked about): a
        // link swapped in would start the run elsewhere.
        (!wamcp_devenv::sandbox::still_in_place(&self.prepared.cwd)).then(|| {
            self.stop(
                Status::StalePlan,
                "the working directory changed since the plan; nothing ran",
                "stale_plan",
            )
        })
    }

    async fn execute(&self, call: &ToolCall) -> (Value, Entry) {
        let roots = call.ctx.places.run_roots();
        let progress = call.progress(format!("running {}", self.prepared.capability.id));
        capability::execute(
            &self.prepared,
            &call.ctx.sandbox,
            &roots,
            &call.ctx.program_search(),
            progress.as_ref().map(|f| f as Progress),
        )
        .await
    }
}
